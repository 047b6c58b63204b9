// Non-overlapping kernels of strict fp32 as fp16 products (a.h16, h16_split.cuh): BN 64 and
// 128 (kPwX3MaxBn); their own translation unit, so they compile beside the 3xTF32 ones.
#include "pw_kernel.cuh"

namespace convt3d {
namespace fwd {

template cudaError_t launch_pw_h16<64>(const FwdArgs&, int64_t, cudaStream_t);
template cudaError_t launch_pw_h16<128>(const FwdArgs&, int64_t, cudaStream_t);

}  // namespace fwd
}  // namespace convt3d
