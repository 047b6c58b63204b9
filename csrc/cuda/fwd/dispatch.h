// Entry points of the fast forward for the host side (cuda/forward_cuda.cpp): static switches
// from runtime (mode, BN, loader) to the instantiated kernels. Torch-free.
#pragma once

#include "launch.h"
#include "mode.h"
#include "phases.h"
#include "tile_configs.h"

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

// Launches a halo-tile forward, per phase or fused (BN 16 / 32 / 48 / 64; a.box, a.m_tiles,
// a.smem_bytes and for fused a.fuse, a.ulo, a.uext set for it). kvec: cp.async halo loader (same legality as igemm's), else the scalar one.
cudaError_t halo_forward(Mode mode, int bn, bool kvec, const FwdArgs& a, int64_t blocks,
                         cudaStream_t stream);

// Launches the transposed wgmma forward (sm_90a; bf16, fp16, TF32, 3xTF32 with TF32 operands or,
// a.h16, fp16 products; Cout/g <= 64), run length nr of kTwgRuns, a.box = (slices, bqh, bqw),
// a.m_tiles, a.smem_bytes and a.tap_cap set for it.
cudaError_t twg_forward(Mode mode, int nr, bool kvec, const FwdArgs& a, int64_t blocks,
                        cudaStream_t stream);

// Launches the non-overlapping forward (sm_90a; bf16, fp16, TF32; channels_last x), BN of
// kPwBns, with a.m_tiles, a.n_tiles, a.pad and a.out set for it.
cudaError_t pw_forward(Mode mode, int bn, const FwdArgs& a, int64_t blocks, cudaStream_t stream);

// Whether the grouped small-channel kernel is instantiated for kernel size k.
bool gsc_supported(const int (&k)[3]);

// Launches the grouped small-channel forward (gsc_args.h; a's geometry, strides and
// smem_bytes set by the host, plan_gsc.cpp); cl: channels_last x and y.
cudaError_t gsc_forward(Mode mode, const GscArgs& a, bool cl, cudaStream_t stream);

// Packs the weight (any strides) into the rows that r describes (launch.h: RepackArgs).
// dense_g > 1 packs that many groups (cin_g and cout_g then count all of them) into one
// block-diagonal weight, zero off the diagonal blocks. split > 0 (3xTF32 only): wp holds
// 2 x rows x cin_pad elements, the TF32 big parts at e and the small parts at split + e.
cudaError_t repack_weight(Mode mode, const void* w, void* wp, const RepackArgs& r,
                          cudaStream_t stream);

// w's sizes and element strides (NCDHW index order) for h16_absmax.
struct H16WeightView {
  int64_t size[5] = {}, stride[5] = {};
  bool dense = false;  // non-overlapping and dense: its storage is scanned as x's is
};

// Strict fp32's fp16 products (h16_split.cuh): the largest finite |value| of x (dense, nx
// fp32 elements from its data pointer) and of w, as fp32 bits, into m[0] and m[1] (zeroed here
// first, on the stream).
cudaError_t h16_absmax(const void* x, int64_t nx, const void* w, const H16WeightView& wv,
                       uint32_t* m, cudaStream_t stream);

// Sets a contiguous NCDHW y, `planes` = N x Cout planes of plane_elems elements, to each
// plane's bias[p % channels] (bias null: zeros), for a per-phase kernel launched with
// a.prefilled (fill.cu).
cudaError_t fill_output(Mode mode, void* y, const void* bias, int64_t planes, int64_t plane_elems,
                        int channels, cudaStream_t stream);

// Elements per 16-byte chunk: cin_pad and the KVEC alignment rules are multiples of this.
inline int chunk_elems(Mode mode) {
  return (mode == Mode::kBf16 || mode == Mode::kFp16) ? 8 : 4;
}

inline int elem_bytes(Mode mode) { return kChunkBytes / chunk_elems(mode); }

// Elements per kBkBytes K chunk (one pipeline stage, one halo box chunk).
inline int bk_elems(Mode mode) { return kBkBytes / kChunkBytes * chunk_elems(mode); }

}  // namespace fwd
}  // namespace convt3d
