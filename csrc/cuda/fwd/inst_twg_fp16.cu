// Transposed wgmma kernels of mode kFp16: every run length of kTwgRuns, both box loaders.
#include "twg_kernel.cuh"

namespace convt3d {
namespace fwd {

CONVT3D_FWD_INSTANTIATE_TWG_MODE(Mode::kFp16)

}  // namespace fwd
}  // namespace convt3d
