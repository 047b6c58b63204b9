// Kernels of mode kTf32: every BN of kTileConfigs, both A loaders, and the weight repack.
#include "igemm_kernel.cuh"
#include "repack.cuh"

namespace convt3d {
namespace fwd {

CONVT3D_FWD_INSTANTIATE_MODE(Mode::kTf32)

}  // namespace fwd
}  // namespace convt3d
