// Halo-tile kernels (v2) of mode kBf16: BN 16 / 32 / 64, both halo loaders.
#include "halo_kernel.cuh"

namespace convt3d {
namespace fwd {

CONVT3D_FWD_INSTANTIATE_HALO_MODE(Mode::kBf16)

}  // namespace fwd
}  // namespace convt3d
