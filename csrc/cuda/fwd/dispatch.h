// Entry points of the fast forward for the host side (cuda/forward_cuda.cpp): static switches
// from runtime (mode, BN, loader) to the instantiated kernels. Torch-free.
#pragma once

#include "mode.h"
#include "phases.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace convt3d {
namespace fwd {

// True when (mode, bn) names an instantiated kernel.
bool igemm_supported(Mode mode, int bn);

// Launches the implicit-GEMM forward over `blocks` CTAs (see FwdArgs for the grid order).
// kvec selects the 16-byte channel-fast A loader (channels_last, aligned); otherwise the scalar
// row-fast loader, which takes any strides.
cudaError_t igemm_forward(Mode mode, int bn, bool kvec, const FwdArgs& a, int64_t blocks,
                          cudaStream_t stream);

// Launches the v2 halo-tile forward (BN 16 / 32 / 64; a.box, a.m_tiles and a.smem_bytes set
// for it). kvec: cp.async halo loader (same legality as igemm's), else the scalar one.
cudaError_t halo_forward(Mode mode, int bn, bool kvec, const FwdArgs& a, int64_t blocks,
                         cudaStream_t stream);

// Packs the weight (any strides) into the kernel's [g][kD][kH][kW][Cout_g][cin_pad] layout.
cudaError_t repack_weight(Mode mode, const void* w, void* wp, int64_t total, int cin_g,
                          int cin_pad, int cout_g, const int* k, const int64_t* ws,
                          cudaStream_t stream);

// Elements per 16-byte chunk: cin_pad and the KVEC alignment rules are multiples of this.
inline int chunk_elems(Mode mode) {
  return (mode == Mode::kBf16 || mode == Mode::kFp16) ? 8 : 4;
}

}  // namespace fwd
}  // namespace convt3d
