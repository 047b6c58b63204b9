// Declarations of the kernel launchers. They are defined in igemm_kernel.cuh and explicitly
// instantiated, one translation unit per mode (inst_*.cu), so dispatch.cu links against them
// without compiling any kernel and the mode files build in parallel.
#pragma once

#include "gsc_args.h"
#include "mode.h"
#include "phases.h"
#include "tile_configs.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace convt3d {
namespace fwd {

// The BN values of kTileConfigs (tile_configs.h), as an X-macro for instantiation and dispatch.
#define CONVT3D_FWD_FOR_EACH_BN(X, MODE) X(MODE, 16) X(MODE, 32) X(MODE, 64) X(MODE, 128)

template <Mode MODE, int BN, bool KVEC>
cudaError_t launch_igemm(const FwdArgs& a, int64_t blocks, cudaStream_t stream);

// v2 halo-tile kernel (halo_kernel.cuh), BN in {16, 32, 48, 64}; a.box and a.smem_bytes set by the
// host. Instantiated in inst_halo_*.cu.
template <Mode MODE, int BN, bool KVEC>
cudaError_t launch_halo(const FwdArgs& a, int64_t blocks, cudaStream_t stream);

#define CONVT3D_FWD_FOR_EACH_HALO_BN(X, MODE) X(MODE, 16) X(MODE, 32) X(MODE, 48) X(MODE, 64)

#define CONVT3D_FWD_INSTANTIATE_HALO_BN(MODE, BN)                                          \
  template cudaError_t launch_halo<MODE, BN, false>(const FwdArgs&, int64_t, cudaStream_t); \
  template cudaError_t launch_halo<MODE, BN, true>(const FwdArgs&, int64_t, cudaStream_t);

#define CONVT3D_FWD_INSTANTIATE_HALO_MODE(MODE) \
  CONVT3D_FWD_FOR_EACH_HALO_BN(CONVT3D_FWD_INSTANTIATE_HALO_BN, MODE)

// Transposed wgmma kernel (twg_kernel.cuh, sm_90a, bf16/fp16/TF32), NR in kTwgRuns; a.box
// (slices 4 or 2, bqh, bqw), a.stack, a.smem_bytes and a.tap_cap set by the host. Instantiated
// in inst_twg_*.cu, each launcher with both slice counts, unstacked and stacked.
template <Mode MODE, int NR, bool KVEC>
cudaError_t launch_twg(const FwdArgs& a, int64_t blocks, cudaStream_t stream);

#define CONVT3D_FWD_FOR_EACH_TWG_NR(X, MODE) X(MODE, 128) X(MODE, 144) X(MODE, 160)

#define CONVT3D_FWD_INSTANTIATE_TWG_NR(MODE, NR)                                         \
  template cudaError_t launch_twg<MODE, NR, false>(const FwdArgs&, int64_t, cudaStream_t); \
  template cudaError_t launch_twg<MODE, NR, true>(const FwdArgs&, int64_t, cudaStream_t);

#define CONVT3D_FWD_INSTANTIATE_TWG_MODE(MODE) \
  CONVT3D_FWD_FOR_EACH_TWG_NR(CONVT3D_FWD_INSTANTIATE_TWG_NR, MODE)

// The transposed kernel's strict fp32 as fp16 products (a.h16, h16_split.cuh), NR kTwgX3Run;
// instantiated in inst_twg_h16.cu.
template <int NR, bool KVEC>
cudaError_t launch_twg_h16(const FwdArgs& a, int64_t blocks, cudaStream_t stream);

// Grouped small-channel kernel (gsc_kernel.cuh, TF32, bf16 or fp16, stride 2, 8 channels per
// group), one kernel size of CONVT3D_FWD_FOR_EACH_GSC_K; CL: the channels_last loader; G2 (16-bit
// CL only): two groups per CTA. Instantiated in inst_gsc_<mode>.cu.
template <Mode MODE, int KD, int KH, int KW, bool CL, bool G2>
cudaError_t launch_gsc(const GscArgs& a, cudaStream_t stream);

// Non-overlapping kernel (pw_kernel.cuh, sm_90a, bf16/fp16/TF32/3xTF32, channels_last or
// NCDHW x), BN in kPwBns (3xTF32: up to kPwX3MaxBn); a.m_tiles, a.n_tiles, a.pad and a.out
// set by the host. Instantiated in inst_pw_*.cu.
template <Mode MODE, int BN>
cudaError_t launch_pw(const FwdArgs& a, int64_t blocks, cudaStream_t stream);

// The non-overlapping kernel's strict fp32 as fp16 products (a.h16, h16_split.cuh), BN up to
// kPwX3MaxBn; instantiated in inst_pw_h16.cu.
template <int BN>
cudaError_t launch_pw_h16(const FwdArgs& a, int64_t blocks, cudaStream_t stream);

#define CONVT3D_FWD_FOR_EACH_PW_BN(X, MODE) X(MODE, 64) X(MODE, 128) X(MODE, 256)

#define CONVT3D_FWD_INSTANTIATE_PW_BN(MODE, BN) \
  template cudaError_t launch_pw<MODE, BN>(const FwdArgs&, int64_t, cudaStream_t);

#define CONVT3D_FWD_INSTANTIATE_PW_MODE(MODE) \
  CONVT3D_FWD_FOR_EACH_PW_BN(CONVT3D_FWD_INSTANTIATE_PW_BN, MODE)

// The weight repack (repack.cuh): w [Cin, Cout/g, kD, kH, kW] (any strides) into rows
// [g][kD][kH][kW][Cout_g] of cin_pad elements, channel ci of the row at element ci, zero
// beyond cin_g (or, densified, outside the column's diagonal block).
struct RepackArgs {
  int64_t rows = 0;  // g x kD x kH x kW x Cout_g
  int64_t ws[5] = {};
  int64_t split = 0;  // 3xTF32: the TF32 small parts this many elements on (0: no split)
  // 3xTF32 as fp16 products (h16_split.cuh; non-null: x's and w's largest |value| bits): each
  // 16-channel chunk of a row holds w's scaled fp16 big parts, then its small parts.
  const uint32_t* h16_max = nullptr;
  int cin_g = 0, cin_pad = 0, cout_g = 0, dense_g = 1;
  int k[3] = {};
};

template <Mode MODE>
cudaError_t launch_repack(const void* w, void* wp, const RepackArgs& r, cudaStream_t stream);

// Both A loaders for one (mode, BN): scalar row-fast and 16-byte channel-fast. A BN above
// max_bn(mode) instantiates only a stub returning an error (pick_bn never chooses it).
#define CONVT3D_FWD_INSTANTIATE_BN(MODE, BN)                                                \
  static_assert(tile_config(BN).bn == BN, "BN not in kTileConfigs");                        \
  template cudaError_t launch_igemm<MODE, BN, false>(const FwdArgs&, int64_t, cudaStream_t); \
  template cudaError_t launch_igemm<MODE, BN, true>(const FwdArgs&, int64_t, cudaStream_t);

#define CONVT3D_FWD_INSTANTIATE_MODE(MODE)                                             \
  CONVT3D_FWD_FOR_EACH_BN(CONVT3D_FWD_INSTANTIATE_BN, MODE)                            \
  template cudaError_t launch_repack<MODE>(const void*, void*, const RepackArgs&, cudaStream_t);

}  // namespace fwd
}  // namespace convt3d
