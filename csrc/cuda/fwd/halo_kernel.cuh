// Halo-tile forward: phase-decomposed implicit GEMM whose A operand is read out of a halo box of
// x held in shared memory (mma.sync, sm80+ PTX). Two variants, one template (FUSED):
//
// Per phase (v2): within one stride phase every tap is a stride-1 shift in q space
// (i = q + c_t). A CTA owns a box of bqd x bqh x bqw output positions (BM rows) of one phase,
// one sample and one group, and BN output channels. For each chunk of BK = 64 bytes of input
// channels it loads the matching input box, halo included, (bqd + span_d - 1) x ... positions,
// ONCE into shared memory as [pos][64 B] rows (padded to 80 B). Every tap of the phase then
// reads its A tile with ldmatrix from the same box: row m of tap t is box position
// pos0(m) + tapoff(t), where tapoff is uniform over the CTA, so the shifted gather costs one
// scalar add per tap. K loop: chunks outermost (box reloaded, or with a.box_bufs = 2 streamed:
// chunk c + 1's box loads into the other buffer during chunk c), taps inner; the epilogue
// stages the tile through shared memory (store_tile).
//
// Fused (v4): a CTA owns a box of q positions for EVERY phase. Its box covers the union of the
// phases' halos and holds all channel chunks ([chunk][pos][80 B]), loaded once, so x is read
// once per box (not once per phase or tap), and the CTA writes one contiguous output block. One
// B pipeline runs over the stages of all phases, so the next phase's weights load during this
// phase's MMAs and epilogue; the epilogue stores straight from the accumulators, without a
// shared tile or barrier. Strided layers with few taps per phase are latency-bound per phase,
// which is what this removes.
//
// Both: the packed weight rows [tap][BN][64 B] stream through S cp.async stages of TB
// taps, one barrier per stage; a tap table in shared memory holds each tap's box offset and
// weight tap, so the per-tap work is two shared loads and an add. TF32 rounds A once when the
// box is stored, not per tap. The MMA step is shared with v1 (tile_common.cuh). Rows of a box
// past a phase's Q extents compute on in-range or zero data and are never stored; every stored
// element is written once, no atomics.
//
// WG (opt-in, CONVT3D_WGMMA=1, sm_90a): the per-phase kernel with wgmma instead of mma.sync.
// Same box and A fragments (ldmatrix, so rows stay arbitrary box positions); B is read by the
// tensor core from shared memory through a descriptor, stored [chunk][n][16 B] per tap
// (wgmma.cuh). It has not beaten mma.sync consistently (docs/fast_forward_design.md, v5).
#pragma once

#include "launch.h"
#include "resident.h"
#include "smem_attr.h"
#include "tile_common.cuh"
#include "wgmma.cuh"

#include <type_traits>

namespace convt3d {
namespace fwd {

// The warp grid: kHaloTiles by BN (kHaloWgTiles with WG), kFusedPairTile with PAIR,
// kDenseSkipTile with DGRID.
template <int BN, bool WG, bool PAIR = false, bool DGRID = false>
using HaloGrid = std::conditional_t<
    PAIR, WarpGrid<BN, kFusedPairTile.bm, kFusedPairTile.warps_m, kFusedPairTile.warps_n>,
    std::conditional_t<
        DGRID, WarpGrid<BN, kDenseSkipTile.bm, kDenseSkipTile.warps_m, kDenseSkipTile.warps_n>,
        WarpGrid<BN, halo_tile(BN, WG).bm, halo_tile(BN, WG).warps_m,
                 halo_tile(BN, WG).warps_n>>>;

// WG: the MMAs are wgmma (wgmma.cuh; per-phase kernel only, not 3xTF32), B in the descriptor
// layout [chunk][n][16 B] per tap instead of [n][64 B + pad]. DMASK (below) at BN 32 in the
// per-phase kernel takes kDenseSkipTile's grid (DGRID).
template <Mode MODE, int BN, bool KVEC, bool FUSED, bool WG = false, bool PAIR = false,
          bool DMASK = false, bool DGRID = DMASK && !FUSED && BN == kDenseSkipTile.bn>
struct HaloCfg : HaloGrid<BN, WG, PAIR, DGRID> {
  static_assert(halo_tile(BN).bn == BN && BN <= kHaloMaxBn, "halo BN must be a kHaloTiles row");
  static_assert(!WG || (!FUSED && MODE != Mode::kTf32x3), "wgmma: per-phase, one-term modes");
  static_assert(!PAIR || (FUSED && BN == kFusedPairBn), "w-phase pairs: fused, kFusedPairTile");
  using HaloGrid<BN, WG, PAIR, DGRID>::BM;
  using HaloGrid<BN, WG, PAIR, DGRID>::NT;
  using T = typename ModeTraits<MODE>::T;
  static constexpr int kElem = sizeof(T);
  static constexpr int KRUN = kChunkBytes / kElem;
  static constexpr int BK = kBkBytes / kElem;
  static constexpr int S = halo_stages(FUSED, MODE), TB = halo_taps_per_stage(BN, FUSED, MODE);
  static constexpr int kTapB = BN * kRowBytes;       // one tap's B rows
  static constexpr int kStageB = TB * kTapB;
  static constexpr int PB = (TB * BN * kChunks + NT - 1) / NT;  // B copies per thread per stage
  // Row tables (and, fused 16-bit, the per-warp store buffers) before the tap table.
  static constexpr int kWarpBufWords = fused_warp_buf_words(BN);
  static constexpr int kEpiBytes = FUSED ? int(fused_epi_bytes(BN, kElem, PAIR)) : 0;
  static constexpr int kYoffBytes = (FUSED ? BM * 12 : BM * 8) + kEpiBytes;
  static constexpr int kStagesBytes = S * kStageB;
};

// A fused CTA's phase table entry (fused_phase_table_bytes): the phase's first tap table entry
// | the taps its K loop runs << 16 (0: no taps, or no rows in the box) | whether the box holds
// rows of it << 31. The host keeps the tap table below kFusedMaxTaps = 2^15 entries.
__device__ __forceinline__ uint32_t fused_phase_entry(int base, int taps, bool rows) {
  return uint32_t(base) | (uint32_t(taps) << 16) | (uint32_t(rows) << 31);
}
// Its fields: the first tap table entry, the taps the K loop runs, whether the box has rows.
__device__ __forceinline__ int fused_phase_base(uint32_t e) { return int(e & 0xffffu); }
__device__ __forceinline__ int fused_phase_taps(uint32_t e) { return int((e >> 16) & 0x7fffu); }
__device__ __forceinline__ bool fused_phase_rows(uint32_t e) { return (e >> 31) != 0u; }

// Box tile m of phase 0's grid (a.div_tiles, host magic numbers: set_box_divs): its sample
// (returned) and first q position per axis.
__device__ __forceinline__ int halo_box_origin(const FwdArgs& a, int m, int bqd, int bqh, int bqw,
                                               int& qd0, int& qh0, int& qw0) {
  int u = m;
  u = FastDiv(a.div_tiles[2]).divmod(u, qw0);
  u = FastDiv(a.div_tiles[1]).divmod(u, qh0);
  const int n = FastDiv(a.div_tiles[0]).divmod(u, qd0);
  qd0 *= bqd;
  qh0 *= bqh;
  qw0 *= bqw;
  return n;
}

// PAIR (fused only, a.pair; tile kFusedPairTile): with NCDHW y and w stride 2, phase
// (rd, rh, 0)'s tile stays in registers until (rd, rh, 1)'s is done, and both are then stored
// together through a per-warp transpose (store_pair), so a store instruction writes whole
// 32-byte sectors of y (but at its run's ends). Stored a phase at a time, the two halves of a
// sector arrived a phase apart, and DRAM traffic was three times the output (Nsight Compute,
// suite case 6 TF32 NCDHW: 1.1 GB read and 2.0 GB written for a 1.04 GB output; paired: 0.15
// GB and 1.03 GB; design doc v27).
//
// DMASK (a.dense_blocks != 0; not with WG or PAIR): a densified grouped layer; the MMAs of
// zero weight blocks are skipped (dense_live). Its own instantiation, so the other kernels'
// code and registers stay as they were.
template <Mode MODE, int BN, bool KVEC, bool FUSED, bool WG, bool PAIR, bool DMASK,
          bool RES = false>
__global__ void __launch_bounds__(HaloCfg<MODE, BN, KVEC, FUSED, WG, PAIR, DMASK>::NT,
                                  HaloCfg<MODE, BN, KVEC, FUSED, WG, PAIR, DMASK>::kMinBlocks)
    halo_fwd_kernel(const __grid_constant__ FwdArgs a) {
#if (defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800) || \
    (defined(__CUDA_ARCH__) && WG && !defined(__CUDA_ARCH_FEAT_SM90_ALL))
  __trap();
#else
  using C = HaloCfg<MODE, BN, KVEC, FUSED, WG, PAIR, DMASK>;
  static_assert(!DMASK || (!WG && !PAIR), "zero-block skipping: mma.sync kernels without pairs");
  using T = typename C::T;
  constexpr int BM = C::BM, NT = C::NT, MT = C::MT, NTL = C::NTL, KRUN = C::KRUN, BK = C::BK;
  constexpr int S = C::S, TB = C::TB;

  extern __shared__ __align__(16) unsigned char smem[];
  // Per phase: y offset of each box row (-1: not stored). Fused: the phase-independent part of
  // each row's y offset (row_y) and its box position (row_q: bd | bh << 10 | bw << 20; every
  // kHaloBoxes extent is <= 32).
  int64_t* yrow = reinterpret_cast<int64_t*>(smem);
  int64_t* row_y = yrow;
  uint32_t* row_q = reinterpret_cast<uint32_t*>(smem + 8 * BM);
  uint32_t* warp_buf = reinterpret_cast<uint32_t*>(smem + 12 * BM);  // fused 16-bit, PAIR stores
  uint32_t* tap_a = reinterpret_cast<uint32_t*>(smem + C::kYoffBytes);  // box byte offset
  int* tap_w = reinterpret_cast<int*>(tap_a + a.tap_cap);             // weight tap offset
  // Fused: one word per stride phase (fused_phase_entry), after the tap tables.
  uint32_t* ph_tab = reinterpret_cast<uint32_t*>(tap_w + a.tap_cap);
  const int nph = FUSED ? a.ax[0].stride * a.ax[1].stride * a.ax[2].stride : 1;
  unsigned char* sb = smem + C::kYoffBytes + 8 * a.tap_cap +           // S B stages
                      (FUSED ? fused_phase_table_bytes(nph) : 0);
  unsigned char* sh = sb + C::kStagesBytes;                           // the halo box
  if constexpr (RES) {  // every chunk's B of every tap table entry, [chunk][entry]
    sh = sb + uint32_t((a.cin_g + BK - 1) / BK * a.k[0] * a.k[1] * a.k[2]) * C::kTapB;
  }
  const uint32_t sh_addr = smem_addr(sh);
  const uint32_t sb_addr = smem_addr(sb);

  const int tid = threadIdx.x;

  // ---- which tile (tile_coord; fused grids have one phase, so this is phase 0, whose Q is
  // the largest on every axis); the m tile is a box of q positions, sample-major.
  const TileCoord tc = MODE == Mode::kTf32x3 ? tile_coord_wide(a) : tile_coord(a);
  if (!FUSED && phase_prefilled(a, tc)) return;
  const int nt = tc.nt, mt = tc.mt, g = tc.g;
  const int sw = a.ax[2].stride, sh_ = a.ax[1].stride, sd_ = a.ax[0].stride;
  const int bqd = a.box[0], bqh = a.box[1], bqw = a.box[2];
  int qd0, qh0, qw0, n;
  {
    // Tile mt as phase 0's; a phase with fewer outputs along an axis has no tile there.
    const int Qd = a.ax[0].q[tc.rd], Qh = a.ax[1].q[tc.rh], Qw = a.ax[2].q[tc.rw];
    n = halo_box_origin(a, mt, bqd, bqh, bqw, qd0, qh0, qw0);
    if (qd0 >= Qd || qh0 >= Qh || qw0 >= Qw) return;
  }
  const int n0 = nt * BN;

  // ---- the halo box. Tap j of phase r on an axis reads i = q + c0 - j*cstep. A per-phase box
  // starts at q0 + c0 - (ntap-1)*cstep and spans bq + (ntap-1)*cstep; a fused box covers the
  // union over the phases (host: ulo, uext). Output position b, tap j is box b + c_j - lo.
  auto box_axis = [&](const AxisPlan& ax, int r, int i, int& lo, int& ext) {
    if constexpr (FUSED) {
      lo = a.ulo[i];
      ext = a.uext[i];
    } else {
      ext = ax.ntap[r] > 0 ? (ax.ntap[r] - 1) * ax.cstep : 0;
      lo = ax.c0[r] - ext;
    }
  };
  int lod, loh, low, extd, exth, extw;
  box_axis(a.ax[0], tc.rd, 0, lod, extd);
  box_axis(a.ax[1], tc.rh, 1, loh, exth);
  box_axis(a.ax[2], tc.rw, 2, low, extw);
  const int HD = bqd + extd, HH = bqh + exth, HW = bqw + extw;
  int id0 = qd0 + lod, ih0 = qh0 + loh, iw0 = qw0 + low;  // (RES: per tile)
  const int csd = a.ax[0].cstep, csh = a.ax[1].cstep, csw = a.ax[2].cstep;

  const int warp = tid / 32, lane = tid % 32;
  const int wm = warp % C::WM, wn = warp / C::WM;

  // Per-lane ldmatrix row addresses of tap offset 0 (tile_common.cuh's layout, rows now box
  // positions).
  uint32_t a_lane[MT];
#pragma unroll
  for (int i = 0; i < MT; ++i) {
    const int r = wm * C::TM + i * 16 + (lane % 16);
    int bw, bh;
    const int bd = FastDiv(a.div_bq[0]).divmod(FastDiv(a.div_bq[1]).divmod(r, bw), bh);
    a_lane[i] = sh_addr + uint32_t((bd * HH + bh) * HW + bw) * kRowBytes + (lane / 16) * kChunkBytes;
  }
  const uint32_t b_off =
      (wn * C::TN + (lane % 8) + (lane / 16) * 8) * kRowBytes + ((lane / 8) % 2) * kChunkBytes;

  const T* __restrict__ x = static_cast<const T*>(a.x);
  const int kvol = a.k[0] * a.k[1] * a.k[2];
  const T* __restrict__ wg =
      static_cast<const T*>(a.wp) + int64_t(g) * kvol * a.cout_g * a.cin_pad;
  const int P = HD * HH * HW;
  const int items = P * kChunks;
  const int kchunks = (a.cin_g + BK - 1) / BK;
  const uint32_t chunk_bytes = uint32_t(P) * kRowBytes;  // fused: chunk c at c * chunk_bytes
  int64_t xn = int64_t(n) * a.xs[0] + int64_t(g) * a.cin_g * a.xs[1];
  // A densified grouped layer (DMASK) has a block-diagonal weight. Per channel chunk c (at
  // most 4: densify needs Cin <= 64), bits 16 c + ks * NTL + j mark this warp's (K step, n8
  // tile) blocks that meet a diagonal block (the host's a.dense_blocks, one byte per K step);
  // warp_mma_stage skips the rest, which are zeros.
  uint64_t dense_live = 0;
  if constexpr (DMASK) {
    const int nb0 = (n0 + wn * C::TN) / 8;
    for (int c = 0; c < kchunks && c < 4; ++c) {
#pragma unroll
      for (int ks = 0; ks < kChunks / 2; ++ks) {
        const uint32_t row = uint32_t(a.dense_blocks >> (8 * (c * (kChunks / 2) + ks))) & 0xffu;
        dense_live |= uint64_t((row >> nb0) & ((1u << NTL) - 1u)) << (16 * c + ks * NTL);
      }
    }
  }

  // Halo box of channels ci0 .. ci0+BK-1 -> sh. KVEC: one cp.async per 16-byte chunk, the four
  // chunks of a position on consecutive threads (one commit group). Scalar: consecutive threads
  // take consecutive positions (consecutive iw: coalesced in NCDHW), all four chunks each,
  // stored directly.
  // Box index math by the host's magic numbers for HW and HH (set_box_divs), built where used
  // from the kernel parameters (the compiler may reload them rather than hold them through the
  // K loop: a FastDiv held there cost the BN 64 cp.async kernel spills).
  auto div_hw = [&] { return FastDiv(HW, FUSED ? a.div_uhw : a.div_hw[tc.rw]); };
  auto div_hh = [&] { return FastDiv(HH, FUSED ? a.div_uhh : a.div_hh[tc.rh]); };
  auto load_halo = [&](int ci0, uint32_t dst) {
    if constexpr (KVEC) {
      for (int idx = tid; idx < items; idx += NT) {
        const int pos = idx / kChunks, kc = idx % kChunks;
        int hw, hh;
        const int hd = div_hh().divmod(div_hw().divmod(pos, hw), hh);
        const int id = id0 + hd, ih = ih0 + hh, iw = iw0 + hw;
        const int ci = ci0 + kc * KRUN;
        const bool ok = (unsigned(id) < unsigned(a.ax[0].in)) &
                        (unsigned(ih) < unsigned(a.ax[1].in)) &
                        (unsigned(iw) < unsigned(a.ax[2].in)) & (ci < a.cin_g);
        const T* src = ok ? x + (xn + int64_t(id) * a.xs[2] + int64_t(ih) * a.xs[3] +
                                 int64_t(iw) * a.xs[4] + ci)
                          : x;
        cp_async_16(sh_addr + dst + pos * kRowBytes + kc * kChunkBytes, src, ok ? 16 : 0);
      }
      cp_async_commit();
    } else {
      // One position per thread and all of its kChunks chunks: bounds and the 64-bit offset
      // once per position, a 64-bit step per chunk, 32-bit offsets within one (the host
      // bounds (KRUN - 1) x the channel stride); as twg_kernel.cuh's loader (design doc v14).
      // Fused: PU positions per pass (pos, pos + NT), every load issued before the first is
      // used, so a thread with two positions waits one memory latency, not two (its box is
      // loaded once, before the K loop, and the other warps wait for it at the first stage).
      constexpr int PU = FUSED ? 2 : 1;
      const int step = a.xs1_bytes;
      for (int pos0 = tid; pos0 < P; pos0 += PU * NT) {
        uint32_t v[PU][kChunks * KRUN];
#pragma unroll
        for (int u = 0; u < PU; ++u) {
          const int pos = pos0 + u * NT < P ? pos0 + u * NT : pos0;  // past P: load pos0 again
          int hw, hh;
          const int hd = div_hh().divmod(div_hw().divmod(pos, hw), hh);
          const int id = id0 + hd, ih = ih0 + hh, iw = iw0 + hw;
          const bool in = (unsigned(id) < unsigned(a.ax[0].in)) &
                          (unsigned(ih) < unsigned(a.ax[1].in)) &
                          (unsigned(iw) < unsigned(a.ax[2].in));
          const int nv = in ? a.cin_g - ci0 : 0;  // channels of this chunk inside x
          const char* src = reinterpret_cast<const char*>(
              x + (xn + int64_t(id) * a.xs[2] + int64_t(ih) * a.xs[3] + int64_t(iw) * a.xs[4] +
                   int64_t(ci0) * a.xs[1]));
#pragma unroll
          for (int kc = 0; kc < kChunks; ++kc) {
            const char* sp = src + int64_t(kc * KRUN) * step;
#pragma unroll
            for (int e = 0; e < KRUN; ++e) {
              v[u][kc * KRUN + e] =
                  kc * KRUN + e < nv ? ld_bits(reinterpret_cast<const T*>(sp + e * step)) : 0u;
            }
          }
        }
#pragma unroll
        for (int u = 0; u < PU; ++u) {
          if (pos0 + u * NT >= P) break;
#pragma unroll
          for (int kc = 0; kc < kChunks; ++kc) {
            uint32_t* w = &v[u][kc * KRUN];
            if constexpr (MODE == Mode::kTf32) {
#pragma unroll
              for (int e = 0; e < KRUN; ++e) w[e] = tf32_operand(w[e]);
            }
            *reinterpret_cast<uint4*>(sh + dst + (pos0 + u * NT) * kRowBytes + kc * kChunkBytes) =
                pack_bits16<KRUN>(w);
          }
        }
      }
    }
  };

  // TF32 with cp.async: after the wait, each thread rounds the chunks it copied itself (its own
  // completed cp.async writes are visible to it), before the barrier that publishes the box.
  auto round_halo_kvec = [&](uint32_t dst) {
    if constexpr (KVEC && MODE == Mode::kTf32) {
      for (int idx = tid; idx < items; idx += NT) {
        const int pos = idx / kChunks, kc = idx % kChunks;
        uint4* p = reinterpret_cast<uint4*>(sh + dst + pos * kRowBytes + kc * kChunkBytes);
        uint4 v = *p;
        v.x = tf32_rna(__uint_as_float(v.x));
        v.y = tf32_rna(__uint_as_float(v.y));
        v.z = tf32_rna(__uint_as_float(v.z));
        v.w = tf32_rna(__uint_as_float(v.w));
        *p = v;
      }
    }
  };

  // B of one stage: taps t0 .. t0+TB-1 (those < taps), columns n0.., channels ci0.. -> buffer
  // buf (RES: at byte offset buf of the B region), tap-major [TB][BN][64 B]; a tap's rows are
  // R = BN x 4 chunks. When NT is a multiple of R (BN 16/32/64) each thread keeps one (column,
  // chunk) for all its taps, so its offset and column test are computed once and a copy costs a
  // tap-table read and an add. Otherwise (BN 48) each of the thread's PB copies has its own
  // precomputed (tap, column, chunk). Does not commit.
  constexpr int R = BN * kChunks;
  constexpr bool kUniformB = NT % R == 0;
  constexpr int PB = C::PB;
  int b_tt[PB], b_kc[PB], b_off_g[PB];  // tap within the stage, chunk, offset in a tap
  bool b_col_ok[PB];
  uint32_t b_dst[PB];
#pragma unroll
  for (int j = 0; j < PB; ++j) {
    const int idx = tid + j * NT;
    const int e = idx % R, nn = e / kChunks;
    b_kc[j] = e % kChunks;
    b_tt[j] = idx < TB * R ? idx / R : (1 << 28);  // past every tap: never copied
    b_col_ok[j] = n0 + nn < a.cout_g;
    b_off_g[j] = (n0 + nn) * a.cin_pad + b_kc[j] * KRUN;  // < one group's weight
    b_dst[j] = sb_addr + b_tt[j] * C::kTapB +
               (WG ? b_kc[j] * BN * kChunkBytes + nn * kChunkBytes
                   : nn * kRowBytes + b_kc[j] * kChunkBytes);
    if (kUniformB) break;  // j > 0 differs only by whole taps (NT / R of them)
  }
  auto load_b = [&](int buf, int ci0, int t0, int tbase, int tcount) {
#pragma unroll
    for (int j = 0; j < PB; ++j) {
      const int jj = kUniformB ? 0 : j;  // the precomputed slot
      const int t = t0 + b_tt[jj] + (kUniformB ? j * (NT / R) : 0);
      const bool ok = b_col_ok[jj] & (ci0 + b_kc[jj] * KRUN < a.cin_g);
      if (t < tcount) {
        const T* src = ok ? wg + (tap_w[tbase + t] + b_off_g[jj] + ci0) : wg;
        cp_async_16(b_dst[jj] + (RES ? buf : buf * C::kStageB) +
                        (kUniformB ? j * (NT / R) * C::kTapB : 0),
                    src, ok ? 16 : 0);
      }
    }
  };

  // ---- per-phase helpers. Phase ph's residues (rd, rh, rw), w fastest.
  auto phase_res = [&](int ph, int& rd, int& rh, int& rw) {
    rd = FastDiv(a.div_sh).divmod(FastDiv(a.div_sw).divmod(ph, rw), rh);
  };
  // Whether this box holds any output of phase (rd, rh, rw) (phase 0 always: the grid is over
  // its Q).
  auto phase_rows = [&](int rd, int rh, int rw) {
    return qd0 < a.ax[0].q[rd] && qh0 < a.ax[1].q[rh] && qw0 < a.ax[2].q[rw];
  };
  // Tap table entries base.. of phase (rd, rh, rw): tap t = (jd, jh, jw) reads its A rows at box
  // byte offset tap_a (box index c_j - lo per axis) and its B rows at element offset tap_w of
  // the group's packed weight (the host keeps one group's packed weight under 2^31 elements).
  // Threads t0, t0 + tstep, ... write the entries.
  auto fill_taps = [&](int rd, int rh, int rw, int base, int t0, int tstep) {
    const int nd = a.ax[0].ntap[rd], nh = a.ax[1].ntap[rh], nw = a.ax[2].ntap[rw];
    for (int t = t0; t < nd * nh * nw; t += tstep) {
      int jw, jh;
      const int jd = FastDiv(a.div_nh[rh]).divmod(FastDiv(a.div_nws[rw]).divmod(t, jw), jh);
      const int bd = a.ax[0].c0[rd] - jd * csd - lod, bh = a.ax[1].c0[rh] - jh * csh - loh,
                bw = a.ax[2].c0[rw] - jw * csw - low;
      tap_a[base + t] = uint32_t((bd * HH + bh) * HW + bw) * kRowBytes;
      const int td = a.ax[0].t0[rd] + jd * a.ax[0].tstep;
      const int th = a.ax[1].t0[rh] + jh * a.ax[1].tstep;
      const int tw = a.ax[2].t0[rw] + jw * a.ax[2].tstep;
      tap_w[base + t] = ((td * a.k[1] + th) * a.k[2] + tw) * a.cout_g * a.cin_pad;
    }
  };

  float acc[MT][NTL][4];
  // Where the MMAs read B stage 0 (RES: moved to each stage's taps; else the stages' start).
  uint32_t b_addr = sb_addr;
  // The MMAs of one B stage: its taps t0.. (< tcount) of the phase whose table starts at base,
  // A from box chunk offset cbase; NKS = 1 (an std::integral_constant) when the chunk's second
  // 32 bytes of K are all past Cin/g (zeros: their MMAs are skipped).
  // MASKED (a std::bool_constant): skip the blocks whose bit in `live` is clear
  // (warp_mma_stage; the wgmma variant multiplies every block). koff: byte offset of the first
  // K step within the chunk (mma.sync only).
  auto mma_stage = [&](int buf, int t0, int base, int tcount, uint32_t cbase, auto nks,
                       auto masked, uint32_t live, uint32_t koff) {
    constexpr int NKS = decltype(nks)::value;
    if constexpr (WG) {
      // Per K step of 32 bytes: ldmatrix the warp's A fragments, then one wgmma per m16
      // fragment (the warpgroup's four warps make its 64 rows) with B from this stage. One
      // step stays in flight while the next step's A loads (two register sets); the stage
      // ends with every wgmma done, so the next barrier may hand its B buffer to the loader.
      const uint32_t bstage = b_addr + buf * C::kStageB;
#pragma unroll
      for (int tt = 0; tt < TB; ++tt) {
        const int t = t0 + tt;
        if (t < tcount) {
          const uint32_t off = tap_a[base + t] + cbase;
#pragma unroll
          for (int ks = 0; ks < kChunks / 2; ++ks) {
            if (ks < NKS) {
              uint32_t af[MT][4];
#pragma unroll
              for (int i = 0; i < MT; ++i) ldmatrix_x4(af[i], a_lane[i] + off + ks * 32);
              const uint64_t desc = wgmma_desc(bstage + tt * C::kTapB + ks * 2 * BN * kChunkBytes,
                                               BN * kChunkBytes, 8 * kChunkBytes);
              wgmma_fence();
#pragma unroll
              for (int i = 0; i < MT; ++i) wgmma_step<MODE, BN>(acc[i], af[i], desc);
              wgmma_commit();
              wgmma_wait<1>();
            }
          }
        }
      }
      wgmma_wait<0>();
      wgmma_fence_acc(acc);
    } else {
#pragma unroll
      for (int tt = 0; tt < TB; ++tt) {
        const int t = t0 + tt;
        if (t < tcount) {
          const uint32_t off = tap_a[base + t] + cbase;
          uint32_t a_addr[MT];
#pragma unroll
          for (int i = 0; i < MT; ++i) a_addr[i] = a_lane[i] + off + koff;
          warp_mma_stage<MODE, MT, NTL, false, NKS, decltype(masked)::value>(
              acc, a_addr, b_addr + buf * C::kStageB + tt * C::kTapB + b_off + koff, live);
        }
      }
    }
  };
  // mma_stage for chunk c: both 32-byte K steps, or only the first when the rest of the chunk
  // is channel padding (only a last chunk can be).
  // DMASK: chunk c's bits also clear its padded K steps.
  auto mma_chunk_stage = [&](int buf, int t0, int base, int tcount, uint32_t cbase, int c) {
    using One = std::integral_constant<int, 1>;
    using Both = std::integral_constant<int, kChunks / 2>;
    if constexpr (DMASK) {
      // One branch per stage, outside the tap loop: a chunk none of whose blocks meet this
      // warp's groups is skipped whole, fragments included, and a chunk with one live K step
      // runs that step alone (16-bit with kDenseSkipTile: each warp's two groups fill one).
      const uint32_t live = uint32_t(dense_live >> (16 * c)) & 0xffffu;
      const uint32_t first = live & ((1u << NTL) - 1u), second = live >> NTL;
      constexpr uint32_t kStepBytes = 2 * kChunkBytes;  // one K step (one MMA's K)
      if (second == 0u) {
        if (first != 0u) {
          mma_stage(buf, t0, base, tcount, cbase, One{}, std::true_type{}, first, 0u);
        }
      } else if (first == 0u) {
        mma_stage(buf, t0, base, tcount, cbase, One{}, std::true_type{}, second, kStepBytes);
      } else {
        mma_stage(buf, t0, base, tcount, cbase, Both{}, std::true_type{}, live, 0u);
      }
    } else if (a.cin_g - c * BK > BK / 2) {
      mma_stage(buf, t0, base, tcount, cbase, Both{}, std::false_type{}, ~0u, 0u);
    } else {
      mma_stage(buf, t0, base, tcount, cbase, One{}, std::false_type{}, ~0u, 0u);
    }
  };
  // Fused epilogue, straight from the accumulators (no shared tile, no barrier, so the B
  // pipeline keeps running): this thread's rows wm*TM + i*16 + gi (+8), columns
  // wn*TN + j*8 + 2*ti (+1) of phase (rd, rh, rw). A row's y offset is the phase's base plus
  // its phase-independent part from the row table; channels_last with aligned chunks stores
  // the column pair at once.
  // The y offset of phase (rd, rh, rw)'s output at this box's first q position (add row_y[r]),
  // and whether box row r (row_q entry pk) lies past that phase's last position, with ld x lh x
  // lw of its positions inside the box.
  auto phase_ybase = [&](int rd, int rh, int rw) {
    return int64_t(n) * a.ys[0] + int64_t(g) * a.cout_g * a.ys[1] +
           int64_t(rd + sd_ * qd0) * a.ys[2] + int64_t(rh + sh_ * qh0) * a.ys[3] +
           int64_t(rw + sw * qw0) * a.ys[4];
  };
  auto row_past = [](uint32_t pk, int ld, int lh, int lw) {
    return int(pk & 1023u) >= ld || int((pk >> 10) & 1023u) >= lh || int(pk >> 20) >= lw;
  };
  // This lane's bias for columns c0 + 8 j + e (0 past Cout/g, or without bias).
  auto lane_bias = [&](int c0, float (&bv)[NTL][2]) {
    const T* bias = static_cast<const T*>(a.bias);
#pragma unroll
    for (int j = 0; j < NTL; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int col = c0 + 8 * j + e;
        bv[j][e] = bias != nullptr && col < a.cout_g
                       ? to_float(bias[int64_t(g) * a.cout_g + col]) : 0.f;
      }
  };
  auto store_direct = [&](int rd, int rh, int rw) {
    T* __restrict__ y = static_cast<T*>(a.y);
    const int gi = lane / 4, ti = lane % 4;
    const int ld = a.ax[0].q[rd] - qd0, lh = a.ax[1].q[rh] - qh0, lw = a.ax[2].q[rw] - qw0;
    const int64_t pbase = phase_ybase(rd, rh, rw);
    const int c0 = n0 + wn * C::TN + 2 * ti;  // column of pair j: c0 + 8 j
    float bv[NTL][2];
    lane_bias(c0, bv);
    if constexpr (sizeof(T) == 2) {
      if (a.y_vec) {
        // 8 rows at a time through this warp's buffer, so every store is 16 bytes of one row
        // and a warp writes whole 32-byte sectors (column pairs alone write half sectors: the
        // L2 was the limit, ncu on case 6). Only __syncwarp: the buffer is the warp's own.
        constexpr int kRowW = C::TN / 2 + 4, kChunksRow = C::TN / 8;
        uint32_t* buf = warp_buf + warp * C::kWarpBufWords;
#pragma unroll
        for (int i = 0; i < MT; ++i) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
#pragma unroll
            for (int j = 0; j < NTL; ++j) {
              buf[gi * kRowW + 4 * j + ti] =
                  pack_pair(from_float<T>(acc[i][j][2 * h] + bv[j][0]),
                            from_float<T>(acc[i][j][2 * h + 1] + bv[j][1]));
            }
            __syncwarp();
#pragma unroll
            for (int idx = lane; idx < 8 * kChunksRow; idx += 32) {
              const int row = idx / kChunksRow, c = idx % kChunksRow;
              const int r = wm * C::TM + i * 16 + 8 * h + row;
              const uint32_t pk = row_q[r];
              const int col = n0 + wn * C::TN + 8 * c;
              if (int(pk & 1023u) < ld && int((pk >> 10) & 1023u) < lh && int(pk >> 20) < lw &&
                  col < a.cout_g) {
                *reinterpret_cast<uint4*>(y + pbase + row_y[r] + col) =
                    *reinterpret_cast<const uint4*>(buf + row * kRowW + 4 * c);
              }
            }
            __syncwarp();
          }
        }
        return;
      }
    }
#pragma unroll
    for (int i = 0; i < MT; ++i) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = wm * C::TM + i * 16 + gi + 8 * h;
        if (row_past(row_q[r], ld, lh, lw)) continue;
        const int64_t yo = pbase + row_y[r];
#pragma unroll
        for (int j = 0; j < NTL; ++j) {
          const int col = c0 + 8 * j;
          if (col >= a.cout_g) continue;
          const T v0 = from_float<T>(acc[i][j][2 * h] + bv[j][0]);
          const T v1 = from_float<T>(acc[i][j][2 * h + 1] + bv[j][1]);
          if (a.y_vec) {  // cout_g is a multiple of the 16-byte chunk: col + 1 < cout_g
            store_pair(y + yo + col, v0, v1);
          } else {
            y[yo + int64_t(col) * a.ys[1]] = v0;
            if (col + 1 < a.cout_g) y[yo + int64_t(col + 1) * a.ys[1]] = v1;
          }
        }
      }
    }
  };

  // PAIR: phase (rd, rh, 0)'s tile (acc0) and (rd, rh, 1)'s (acc), output w = 2 q and 2 q + 1
  // (o = r + s q). Per 16 rows and 8 columns the warp writes both tiles into its own buffer,
  // [column][2 row + phase] (kPairBufStride words a column), and reads it back lane = 2 row +
  // phase, so each store instruction writes one column's 32 outputs: with a bqw = 32 box one
  // run of 32 consecutive w in y. Lanes storing their own outputs wrote elements two apart
  // (one phase): each store instruction half-filled 8 sectors (ncu, suite case 6 TF32: 78 M L2
  // write sectors for a 49 M sector output; design doc v27). Rows past a phase's Q are not
  // stored; (rd, rh, 1) has at most phase 0's positions on every axis.
  float acc0[PAIR ? MT : 1][PAIR ? NTL : 1][4];
  auto store_pair = [&](int rd, int rh) {
    T* __restrict__ y = static_cast<T*>(a.y);
    const int gi = lane / 4, ti = lane % 4;
    const int ld = a.ax[0].q[rd] - qd0, lh = a.ax[1].q[rh] - qh0;
    const int ph = lane & 1;  // the phase this lane stores
    const int lw = (ph ? a.ax[2].q[1] : a.ax[2].q[0]) - qw0;
    const int64_t pbase = phase_ybase(rd, rh, 0) + ph * a.ys[4];
    const int64_t cs = a.ys[1];
    const int cw = n0 + wn * C::TN;  // the warp's first column
    const int ncols = a.cout_g - cw;  // its columns inside Cout/g (fewer than TN at the end)
    float bv[NTL][2];
    lane_bias(cw + 2 * ti, bv);
    if constexpr (sizeof(T) == 2) {
      // 16 bits: both phases of a (row, column) convert into one packed word before the
      // transpose, [column][row] with kPairBufStride16 words a column, and each lane reads its
      // 2-byte output back: half the conversions and shared stores of the fp32 buffer. The y
      // pointer steps by the channel stride in bytes, and the column bound is tested per warp
      // only where the warp's columns run past Cout/g (ncu, case 6 bf16 NCDHW: 42 % of the
      // kernel's instructions were this epilogue, 13 per 2-byte store).
      uint32_t* wbuf = warp_buf + warp * kPairBufWords;
      const unsigned short* hbuf = reinterpret_cast<const unsigned short*>(wbuf);
      const int64_t csb = cs * int64_t(sizeof(T));
      const bool full = ncols >= C::TN;
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        const int r = wm * C::TM + i * 16 + lane / 2;  // this lane's row when storing
        const bool keep = !row_past(row_q[r], ld, lh, lw);
        char* yp = reinterpret_cast<char*>(y + (pbase + row_y[r] + int64_t(cw) * cs));
        asm("" : "+l"(yp));  // opaque: the compiler otherwise rebuilds each address from an index
#pragma unroll
        for (int j = 0; j < NTL; ++j) {
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int e = 0; e < 2; ++e)
              wbuf[(2 * ti + e) * kPairBufStride16 + gi + 8 * h] =
                  pack_pair(from_float<T>(acc0[i][j][2 * h + e] + bv[j][e]),
                            from_float<T>(acc[i][j][2 * h + e] + bv[j][e]));
          __syncwarp();
          if (keep && full) {  // two copies, so the common one tests no column
#pragma unroll
            for (int c = 0; c < 8; ++c) {
              st_global_u16(yp, hbuf[2 * c * kPairBufStride16 + lane]);
              yp += csb;
              asm("" : "+l"(yp));  // one 64-bit add a store, not a product per store
            }
          } else if (keep) {
#pragma unroll
            for (int c = 0; c < 8; ++c) {
              if (8 * j + c < ncols) st_global_u16(yp, hbuf[2 * c * kPairBufStride16 + lane]);
              yp += csb;
              asm("" : "+l"(yp));
            }
          }
          __syncwarp();
        }
      }
      return;
    }
    float* buf = reinterpret_cast<float*>(warp_buf) + warp * kPairBufWords;
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      const int r = wm * C::TM + i * 16 + lane / 2;  // this lane's row when storing
      const bool keep = !row_past(row_q[r], ld, lh, lw);
      // One pointer per lane, stepped by the channel stride: indexing each store by column
      // cost some 14 instructions a store (the 64-bit products rebuilt every time; ncu on
      // suite case 6 TF32 NCDHW put 37 % of the kernel's instructions in this epilogue).
      T* yp = y + (pbase + row_y[r] + int64_t(cw) * cs);
#pragma unroll
      for (int j = 0; j < NTL; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            *reinterpret_cast<float2*>(buf + (2 * ti + e) * kPairBufStride + 2 * (gi + 8 * h)) =
                make_float2(acc0[i][j][2 * h + e] + bv[j][e], acc[i][j][2 * h + e] + bv[j][e]);
          }
        __syncwarp();
#pragma unroll
        for (int c = 0; c < 8; ++c) {
          if (keep && 8 * j + c < ncols) *yp = from_float<T>(buf[c * kPairBufStride + lane]);
          yp += cs;
        }
        __syncwarp();
      }
    }
  };

  zero_acc(acc);

  if constexpr (!FUSED) {
    // ---- one phase (tile_coord's); row table: y offset of each box row, -1 past the
    // phase's extents.
    const int rd = tc.rd, rh = tc.rh, rw = tc.rw;
    const int Qd = a.ax[0].q[rd], Qh = a.ax[1].q[rh], Qw = a.ax[2].q[rw];
    const int nd = a.ax[0].ntap[rd], nh = a.ax[1].ntap[rh], nw = a.ax[2].ntap[rw];
    const int taps = nd * nh * nw;  // 0 for an empty phase: bias only
    for (int r = tid; r < BM; r += NT) {
      int bw, bh;
      const int bd = FastDiv(a.div_bq[0]).divmod(FastDiv(a.div_bq[1]).divmod(r, bw), bh);
      const int qd = qd0 + bd, qh = qh0 + bh, qw = qw0 + bw;
      int64_t off = -1;
      if (qd < Qd && qh < Qh && qw < Qw) {
        off = int64_t(n) * a.ys[0] + int64_t(g) * a.cout_g * a.ys[1] +
              int64_t(rd + sd_ * qd) * a.ys[2] + int64_t(rh + sh_ * qh) * a.ys[3] +
              int64_t(rw + sw * qw) * a.ys[4];
      }
      yrow[r] = off;
    }
    fill_taps(rd, rh, rw, 0, tid, NT);

    // ---- stages st = (chunk, taps sub*TB ..): standard multistage cp.async pipeline for B. At
    // stage st, after the barrier, buffer (st-1) % S is free (every warp finished stage st-1)
    // and takes stage st+S-1. The box: reloaded at each chunk start, the wait there draining B
    // too; or streamed (KVEC, box_bufs 2): at chunk c's first stage, after its barrier (chunk
    // c - 1 is done with buffer (c + 1) % 2), chunk c + 1's box is committed as its own group
    // before B stage st+S-1, so at chunk c + 1's first stage, spc >= S - 2 stages later, the
    // usual wait<S - 2> covers it.
    __syncthreads();  // row and tap tables
    if (taps > 0) {
      const bool stream = KVEC && a.box_bufs > 1;
      const int spc = (taps + TB - 1) / TB;  // stages per chunk
      const int nst = kchunks * spc;
      int ld_c = 0, ld_sub = 0;  // next stage to load
      auto issue_next = [&](int buf) {
        load_b(buf, ld_c * BK, ld_sub * TB, 0, taps);
        if (++ld_sub == spc) {
          ld_sub = 0;
          ++ld_c;
        }
      };
      load_halo(0, 0);
#pragma unroll
      for (int s = 0; s < S - 1; ++s) {
        if (s < nst) issue_next(s);
        cp_async_commit();
      }
      int c = 0, sub = 0;
      for (int st = 0; st < nst; ++st) {
        if (sub == 0) {
          const uint32_t boff = stream ? uint32_t(c & 1) * chunk_bytes : 0u;
          if (st > 0 && !stream) {
            __syncthreads();  // every warp is done with the previous chunk's box
            load_halo(c * BK, 0);
          }
          if (stream && st > 0) {
            // This chunk's box is the other buffer: move the A row addresses there once per
            // chunk, so the per-tap address work is the same as with one buffer.
#pragma unroll
            for (int i = 0; i < MT; ++i) a_lane[i] = (c & 1) ? a_lane[i] + chunk_bytes
                                                             : a_lane[i] - chunk_bytes;
          }
          if (stream && st > 0 && spc >= S - 2) {
            cp_async_wait<S - 2>();
          } else {
            cp_async_wait<0>();
          }
          round_halo_kvec(boff);
        } else {
          cp_async_wait<S - 2>();
        }
        if constexpr (WG) fence_proxy_async();
        __syncthreads();
        if (stream && sub == 0 && c + 1 < kchunks) {
          load_halo((c + 1) * BK, uint32_t((c + 1) & 1) * chunk_bytes);  // commits
        }
        if (st + S - 1 < nst) issue_next((st + S - 1) % S);
        cp_async_commit();
        mma_chunk_stage(st % S, sub * TB, 0, taps, 0u, c);
        if (++sub == spc) {
          sub = 0;
          ++c;
        }
      }
    }
    __syncthreads();  // the epilogue tile overwrites B stages and box
    store_tile<C, T>(acc, reinterpret_cast<float*>(sb), yrow, 1, a, g, n0, wm, wn);
  } else {
    // ---- fused: the row tables (box <= 32 per axis, see kHaloBoxes) and the tap tables of
    // every phase, one after the other (phase order).
    for (int r = tid; r < BM; r += NT) {
      int bw, bh;
      const int bd = FastDiv(a.div_bq[0]).divmod(FastDiv(a.div_bq[1]).divmod(r, bw), bh);
      row_y[r] = int64_t(sd_ * bd) * a.ys[2] + int64_t(sh_ * bh) * a.ys[3] +
                 int64_t(sw * bw) * a.ys[4];
      row_q[r] = uint32_t(bd) | (uint32_t(bh) << 10) | (uint32_t(bw) << 20);
    }
    // The phase table: per phase its tap table start, the taps the K loop runs (0 when the
    // phase has no taps or no rows in this box) and whether it has rows. The loader and the
    // phase loop below read one entry per phase; deriving them per stage
    // (FastDiv splits of the phase index, indexed parameter loads) was some 15 % of the paired
    // kernel's instructions (ncu source counters, suite case 6 TF32 NCDHW; design doc v47).
    // Phase ph's entries are written by one warp, warps taking turns (a phase has a few taps:
    // with every warp on every phase, warp 0 wrote them all while the others waited at the
    // barrier below; ncu, design doc v48).
    // PAIR: 32 phases at a time, lane l takes phase p0 + l, and a scan of the taps over the
    // lanes gives each phase its table start. Every warp walking every phase for those starts
    // was 5.5 % of suite case 6 bf16 NCDHW's instructions; the scan made cases 6 and 7 NCDHW
    // 1-3 % faster (design doc v62). The other fused kernels keep the walk: with the scan they
    // were no faster on suite cases 6-8 channels_last, and the BN 64 kernel that skips zero
    // blocks spilled more (ptxas: 116 bytes of loads where it had 12).
    if constexpr (PAIR) {
      constexpr int kWarps = NT / 32;
      int base = 0;  // taps of the phases before p0
#pragma unroll 1
      for (int p0 = 0; p0 < nph; p0 += 32) {
        const int ph = p0 + lane;
        int rd = 0, rh = 0, rw = 0, taps = 0;
        if (ph < nph) {
          phase_res(ph, rd, rh, rw);
          taps = a.ax[0].ntap[rd] * a.ax[1].ntap[rh] * a.ax[2].ntap[rw];
        }
        int incl = taps;  // inclusive scan over the lanes
#pragma unroll
        for (int o = 1; o < 32; o *= 2) {
          const int v = __shfl_up_sync(0xffffffffu, incl, o);
          if (lane >= o) incl += v;
        }
        const int start = base + incl - taps;
        base += __shfl_sync(0xffffffffu, incl, 31);
        if (warp == 0 && ph < nph) {
          const bool rows = phase_rows(rd, rh, rw);
          ph_tab[ph] = fused_phase_entry(start, rows ? taps : 0, rows);
        }
        const int count = nph - p0 < 32 ? nph - p0 : 32;
        for (int l = warp; l < count; l += kWarps) {
          int lrd, lrh, lrw;  // (again, not by shuffles: fewer registers live here)
          phase_res(p0 + l, lrd, lrh, lrw);
          fill_taps(lrd, lrh, lrw, __shfl_sync(0xffffffffu, start, l), lane, 32);
        }
      }
    } else {
      constexpr int kWarps = NT / 32;
      int base = 0;
      for (int ph = 0; ph < nph; ++ph) {
        int rd, rh, rw;
        phase_res(ph, rd, rh, rw);
        const int taps = a.ax[0].ntap[rd] * a.ax[1].ntap[rh] * a.ax[2].ntap[rw];
        if (warp == ph % kWarps) {
          fill_taps(rd, rh, rw, base, lane, 32);
          if (lane == 0) {
            const bool rows = phase_rows(rd, rh, rw);
            ph_tab[ph] = fused_phase_entry(base, rows ? taps : 0, rows);
          }
        }
        base += taps;
      }
    }
    // Phase ph's tile is done: store it (PAIR: keep (rd, rh, 0)'s until (rd, rh, 1)'s is
    // done), and clear the accumulators for the next phase.
    auto finish_phase = [&](int ph) {
      int rd, rh, rw;  // (from the index: decoding them from the table cost ptxas registers)
      phase_res(ph, rd, rh, rw);
      if constexpr (PAIR) {
        if (rw == 0) {
#pragma unroll
          for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int j = 0; j < NTL; ++j)
#pragma unroll
              for (int c = 0; c < 4; ++c) acc0[i][j][c] = acc[i][j][c];
        } else {
          store_pair(rd, rh);
        }
      } else {
        store_direct(rd, rh, rw);
      }
      zero_acc(acc);
    };
    if constexpr (RES) {
      // ---- resident weights (RES, a.fused_res; one N tile, one group): every tap's B of every
      // chunk is loaded once, [chunk][tap table entry], and the CTA then runs its boxes
      // (tiles blockIdx.x, + gridDim.x, ... with a persistent grid) with no stage barriers:
      // per box a load, one barrier, every phase's MMAs and stores, and a barrier before the
      // next box overwrites this one. A CTA of the streamed pipeline below met a barrier and a
      // wait per stage, and every CTA read all of the weights from L2 anyway (design doc v62).
      __syncthreads();  // tap and phase tables (load_b reads tap_w)
      {
        int base = 0;
        for (int ph = 0; ph < nph; ++ph) {
          int rd, rh, rw;
          phase_res(ph, rd, rh, rw);
          const int taps = a.ax[0].ntap[rd] * a.ax[1].ntap[rh] * a.ax[2].ntap[rw];
          for (int c = 0; c < kchunks; ++c) {
            for (int t0 = 0; t0 < taps; t0 += TB) {
              load_b((c * kvol + base + t0) * C::kTapB, c * BK, t0, base, taps);
            }
          }
          base += taps;
        }
        cp_async_commit();
      }
      for (int m = mt;;) {
        for (int c = 0; c < kchunks; ++c) load_halo(c * BK, c * chunk_bytes);
        cp_async_wait<0>();
        for (int c = 0; c < kchunks; ++c) round_halo_kvec(c * chunk_bytes);
        __syncthreads();  // the box (and, the first time, B)
        for (int ph = 0; ph < nph; ++ph) {
          int rd, rh, rw;
          phase_res(ph, rd, rh, rw);
          const bool rows = phase_rows(rd, rh, rw);
          if (!PAIR && !rows) continue;
          const int base = fused_phase_base(ph_tab[ph]);
          const int tp = rows ? a.ax[0].ntap[rd] * a.ax[1].ntap[rh] * a.ax[2].ntap[rw] : 0;
          for (int c = 0; c < kchunks; ++c) {
            for (int t0 = 0; t0 < tp; t0 += TB) {
              b_addr = sb_addr + uint32_t(c * kvol + base + t0) * C::kTapB;
              mma_chunk_stage(0, t0, base, tp, c * chunk_bytes, c);
            }
          }
          finish_phase(ph);
        }
        m += static_cast<int>(gridDim.x);
        if (m >= a.m_tiles) break;
        n = halo_box_origin(a, m, bqd, bqh, bqw, qd0, qh0, qw0);  // (inside phase 0's Q)
        id0 = qd0 + lod;
        ih0 = qh0 + loh;
        iw0 = qw0 + low;
        xn = int64_t(n) * a.xs[0] + int64_t(g) * a.cin_g * a.xs[1];
        __syncthreads();  // every warp is done with this box
      }
    } else {
      // One B pipeline over the stages (phase, chunk, taps sub*TB ..) of every phase with rows
      // in this box and taps: the loader runs S - 1 stages ahead across phase ends, so a phase's
      // first weights are in flight during the previous phase's MMAs and epilogue. Loader state:
      // phase lp (its taps ltaps start at table entry lbase), chunk lc, stage lsub of lspc.
      int lp = -1, lbase = 0, ltaps = 0, lc = 0, lsub = 0, lspc = 0;
      auto next_phase = [&]() {
        uint32_t e = 0;
        while (++lp < nph && fused_phase_taps(e = ph_tab[lp]) == 0) {
        }
        lbase = fused_phase_base(e);
        ltaps = lp < nph ? fused_phase_taps(e) : 0;
        lspc = (ltaps + TB - 1) / TB;
        lc = lsub = 0;
      };
      auto issue_next = [&](int buf) {
        if (lp >= nph) return;
        load_b(buf, lc * BK, lsub * TB, lbase, ltaps);
        if (++lsub == lspc) {
          lsub = 0;
          if (++lc == kchunks) next_phase();
        }
      };
      // The box (every chunk) and the first S - 1 B stages: with cp.async the box goes first, so
      // stage 0's wait covers it; the scalar loader stores the box while B is in flight.
      if constexpr (KVEC) {
        for (int c = 0; c < kchunks; ++c) load_halo(c * BK, c * chunk_bytes);
      }
      __syncthreads();  // tap and phase tables
      next_phase();
#pragma unroll
      for (int s = 0; s < S - 1; ++s) {
        issue_next(s);
        cp_async_commit();
      }
      if constexpr (!KVEC) {
        for (int c = 0; c < kchunks; ++c) load_halo(c * BK, c * chunk_bytes);
      }
      int gst = 0;  // stages done
      for (int ph = 0; ph < nph; ++ph) {
        const uint32_t e = ph_tab[ph];
        // no rows (PAIR: (rd, rh, 0) may still wait for its store below)
        if (!PAIR && !fused_phase_rows(e)) continue;
        const int tp = fused_phase_taps(e), base = fused_phase_base(e);
        if (tp > 0) {  // the loader (next_phase) skips the same phases
          const int spc = (tp + TB - 1) / TB;
          for (int c = 0; c < kchunks; ++c) {
            for (int sub = 0; sub < spc; ++sub, ++gst) {
              cp_async_wait<S - 2>();
              if (gst == 0) {
                for (int cc = 0; cc < kchunks; ++cc) round_halo_kvec(cc * chunk_bytes);
              }
              __syncthreads();
              issue_next((gst + S - 1) % S);
              cp_async_commit();
              mma_chunk_stage(gst % S, sub * TB, base, tp, c * chunk_bytes, c);
            }
          }
        }
        finish_phase(ph);
      }
      cp_async_wait<0>();  // nothing left in flight at exit
    }
  }
#endif
}

template <Mode MODE, int BN, bool KVEC>
cudaError_t launch_halo(const FwdArgs& a, int64_t blocks, cudaStream_t stream) {
  if constexpr (BN > halo_max_bn(MODE)) {
    return cudaErrorInvalidValue;  // not a configuration of this mode; no kernel compiled
  } else {
    static_assert(HaloCfg<MODE, BN, KVEC, false, false, false, true>::NT ==
                      HaloCfg<MODE, BN, KVEC, false>::NT &&
                  HaloCfg<MODE, BN, KVEC, false, false, false, true>::BM ==
                      HaloCfg<MODE, BN, KVEC, false>::BM,
                  "a DMASK grid keeps the block size and the box's rows");
    const bool dmask = a.dense_blocks != 0;
    auto kernel = a.fuse ? (dmask ? halo_fwd_kernel<MODE, BN, KVEC, true, false, false, true>
                                  : halo_fwd_kernel<MODE, BN, KVEC, true, false, false, false>)
                         : (dmask ? halo_fwd_kernel<MODE, BN, KVEC, false, false, false, true>
                                  : halo_fwd_kernel<MODE, BN, KVEC, false, false, false, false>);
    if constexpr (BN == kFusedPairBn && !KVEC && MODE != Mode::kTf32x3) {
      static_assert(HaloCfg<MODE, BN, KVEC, true, false, true>::NT ==
                        HaloCfg<MODE, BN, KVEC, false>::NT,
                    "the launch below uses one block size for every halo kernel");
      if (a.fuse && a.pair) kernel = halo_fwd_kernel<MODE, BN, KVEC, true, false, true, false>;
    } else if (a.pair) {
      return cudaErrorInvalidValue;  // no such instantiation: the host plans pairs only above
    }
    if constexpr (MODE != Mode::kTf32x3) {
      if (a.wg) kernel = halo_fwd_kernel<MODE, BN, KVEC, false, true, false, false>;
    } else if (a.wg) {
      return cudaErrorInvalidValue;  // 3xTF32 has no wgmma kernel
    }
    if (a.fuse && a.fused_res != 0) {
      // Resident weights: BN 32, pairs or not, no zero-block skipping (plan_fused).
      if constexpr (BN == 32 && MODE != Mode::kTf32x3) {
        if (dmask) return cudaErrorInvalidValue;
        kernel = halo_fwd_kernel<MODE, BN, KVEC, true, false, false, false, true>;
        if constexpr (!KVEC) {
          if (a.pair) kernel = halo_fwd_kernel<MODE, BN, KVEC, true, false, true, false, true>;
        }
      } else {
        return cudaErrorInvalidValue;
      }
    }
    cudaError_t e = allow_dynamic_smem(kernel, a.smem_bytes);
    if (e != cudaSuccess) return e;
    if (a.fuse && a.fused_res == 1) {  // persistent: as many CTAs as fit at once
      int ctas = 0;
      e = resident_ctas(reinterpret_cast<const void*>(kernel), HaloCfg<MODE, BN, KVEC, false>::NT,
                        a.smem_bytes, &ctas);
      if (e != cudaSuccess) return e;
      blocks = ctas < blocks ? ctas : blocks;
    }
    kernel<<<static_cast<unsigned>(blocks), HaloCfg<MODE, BN, KVEC, false>::NT, a.smem_bytes,
             stream>>>(a);
    return cudaGetLastError();
  }
}

}  // namespace fwd
}  // namespace convt3d
