// Grouped small-channel kernels in bf16 (gsc_kernel.cuh): every kernel size of
// CONVT3D_FWD_FOR_EACH_GSC_K, NCDHW-style (any strides) and channels_last loaders. One
// translation unit per mode so the modes build in parallel.
#include "gsc_kernel.cuh"

namespace convt3d {
namespace fwd {

#define CONVT3D_FWD_INSTANTIATE_GSC_bf16(KD, KH, KW) CONVT3D_FWD_INSTANTIATE_GSC_K_H16(Mode::kBf16, KD, KH, KW)
CONVT3D_FWD_FOR_EACH_GSC_K(CONVT3D_FWD_INSTANTIATE_GSC_bf16)
#undef CONVT3D_FWD_INSTANTIATE_GSC_bf16

}  // namespace fwd
}  // namespace convt3d
