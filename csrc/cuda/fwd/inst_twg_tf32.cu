// Transposed wgmma kernels of mode kTf32: every run length of kTwgRuns, both box loaders.
#include "twg_kernel.cuh"

namespace convt3d {
namespace fwd {

CONVT3D_FWD_INSTANTIATE_TWG_MODE(Mode::kTf32)

}  // namespace fwd
}  // namespace convt3d
