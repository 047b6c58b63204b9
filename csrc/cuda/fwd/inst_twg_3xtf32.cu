// Transposed wgmma kernels of mode kTf32x3 (strict fp32): run length kTwgX3Run, two slices,
// both box loaders (launch_twg returns an error for the other run lengths).
#include "twg_kernel.cuh"

namespace convt3d {
namespace fwd {

CONVT3D_FWD_INSTANTIATE_TWG_MODE(Mode::kTf32x3)

}  // namespace fwd
}  // namespace convt3d
