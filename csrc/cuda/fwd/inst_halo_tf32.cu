// Halo-tile kernels (v2) of mode kTf32: BN 16 / 32 / 64, both halo loaders.
#include "halo_kernel.cuh"

namespace convt3d {
namespace fwd {

CONVT3D_FWD_INSTANTIATE_HALO_MODE(Mode::kTf32)

}  // namespace fwd
}  // namespace convt3d
