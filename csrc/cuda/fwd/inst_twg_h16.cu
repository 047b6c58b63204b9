// Transposed wgmma kernels of strict fp32 as three fp16 products (a.h16, h16_split.cuh): run
// length kTwgX3Run, two slices, both box loaders; their own translation unit, so they compile
// beside the 3xTF32 ones.
#include "twg_kernel.cuh"

namespace convt3d {
namespace fwd {

template cudaError_t launch_twg_h16<kTwgX3Run, false>(const FwdArgs&, int64_t, cudaStream_t);
template cudaError_t launch_twg_h16<kTwgX3Run, true>(const FwdArgs&, int64_t, cudaStream_t);

}  // namespace fwd
}  // namespace convt3d
