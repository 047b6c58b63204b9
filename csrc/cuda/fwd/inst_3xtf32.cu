// Kernels of mode kTf32x3: every BN of kTileConfigs, both A loaders, and the weight repack.
#include "igemm_kernel.cuh"
#include "repack.cuh"

namespace convt3d {
namespace fwd {

CONVT3D_FWD_INSTANTIATE_MODE(Mode::kTf32x3)

}  // namespace fwd
}  // namespace convt3d
