// Non-overlapping kernels of mode kTf32: every BN of kPwBns.
#include "pw_kernel.cuh"

namespace convt3d {
namespace fwd {

CONVT3D_FWD_INSTANTIATE_PW_MODE(Mode::kTf32)

}  // namespace fwd
}  // namespace convt3d
