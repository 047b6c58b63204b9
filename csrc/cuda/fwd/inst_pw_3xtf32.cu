// Non-overlapping kernels of mode kTf32x3 (strict fp32): BN 64 and 128 (kPwX3MaxBn).
#include "pw_kernel.cuh"

namespace convt3d {
namespace fwd {

CONVT3D_FWD_INSTANTIATE_PW_BN(Mode::kTf32x3, 64)
CONVT3D_FWD_INSTANTIATE_PW_BN(Mode::kTf32x3, 128)

}  // namespace fwd
}  // namespace convt3d
