// Grouped small-channel kernels (gsc_kernel.cuh): every kernel size of
// CONVT3D_FWD_FOR_EACH_GSC_K, NCDHW-style (any strides) and channels_last loaders.
#include "gsc_kernel.cuh"

namespace convt3d {
namespace fwd {

CONVT3D_FWD_FOR_EACH_GSC_K(CONVT3D_FWD_INSTANTIATE_GSC_K)

}  // namespace fwd
}  // namespace convt3d
