// Non-overlapping kernels of mode kFp16: every BN of kPwBns.
#include "pw_kernel.cuh"

namespace convt3d {
namespace fwd {

CONVT3D_FWD_INSTANTIATE_PW_MODE(Mode::kFp16)

}  // namespace fwd
}  // namespace convt3d
