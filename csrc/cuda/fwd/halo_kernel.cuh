// v2 "halo tile" forward: phase-decomposed implicit GEMM whose A operand is read out of a halo
// box of x held in shared memory (mma.sync, sm80+ PTX).
//
// Within one stride phase every tap is a stride-1 shift in q space (i = q + c_t). A CTA owns a
// box of bqd x bqh x bqw output positions (BM rows) of one phase, one sample and one group, and
// BN output channels. For each chunk of BK = 64 bytes of input channels it loads the matching
// input box, halo included, (bqd + span_d - 1) x (bqh + span_h - 1) x (bqw + span_w - 1)
// positions, ONCE into shared memory as [pos][64 B] rows (padded to 80 B). Every tap of the
// phase then reads its A tile with ldmatrix from the same box: row m of tap t is box position
// pos0(m) + tapoff(t), where tapoff is uniform over the CTA, so the shifted gather costs one
// scalar add per tap. Each x element is read from L2 once per CTA per channel chunk instead of
// once per tap.
//
// K loop: chunks outermost (halo box reloaded, zero outside x and past Cin/g), taps inner. The
// packed weight rows [tap][BN][64 B] stream through kHaloStages cp.async stages of TB taps, so
// B for the next (stages - 1) x TB taps is in flight while a stage multiplies; one barrier per
// stage. A tap table built at CTA start holds each tap's box offset and weight tap, so the
// per-tap work is two shared loads and an add. TF32 rounds A once when the box is stored, not
// per tap. MMA step and epilogue are shared with v1 (tile_common.cuh). Rows of a box past the
// phase's Q extents compute on in-range or zero data and are never stored; every stored element
// is written once, no atomics.
#pragma once

#include "launch.h"
#include "tile_common.cuh"

namespace convt3d {
namespace fwd {

template <int BN>
using HaloGrid = WarpGrid<BN, halo_tile(BN).bm, halo_tile(BN).warps_m, halo_tile(BN).warps_n>;

template <Mode MODE, int BN, bool KVEC>
struct HaloCfg : HaloGrid<BN> {
  static_assert(halo_tile(BN).bn == BN && BN <= kHaloMaxBn, "halo BN must be a kHaloTiles row");
  using HaloGrid<BN>::BM;
  using HaloGrid<BN>::NT;
  using T = typename ModeTraits<MODE>::T;
  static constexpr int kElem = sizeof(T);
  static constexpr int KRUN = kChunkBytes / kElem;
  static constexpr int BK = kBkBytes / kElem;
  static constexpr int S = kHaloStages, TB = halo_taps_per_stage(BN);
  static constexpr int kTapB = BN * kRowBytes;       // one tap's B rows
  static constexpr int kStageB = TB * kTapB;
  static constexpr int PB = (TB * BN * kChunks + NT - 1) / NT;  // B copies per thread per stage
  static constexpr int kYoffBytes = BM * 8;
  static constexpr int kBatch = 4;  // halo chunks per thread in flight (scalar loader)
};

template <Mode MODE, int BN, bool KVEC>
__global__ void __launch_bounds__(HaloCfg<MODE, BN, KVEC>::NT,
                                  HaloCfg<MODE, BN, KVEC>::kMinBlocks)
    halo_fwd_kernel(const __grid_constant__ FwdArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();
#else
  using C = HaloCfg<MODE, BN, KVEC>;
  using T = typename C::T;
  constexpr int BM = C::BM, NT = C::NT, MT = C::MT, NTL = C::NTL, KRUN = C::KRUN, BK = C::BK;
  constexpr int S = C::S, TB = C::TB;

  extern __shared__ __align__(16) unsigned char smem[];
  int64_t* yrow = reinterpret_cast<int64_t*>(smem);  // y offset of each box row, -1: not stored
  uint32_t* tap_a = reinterpret_cast<uint32_t*>(smem + C::kYoffBytes);  // box byte offset
  int* tap_w = reinterpret_cast<int*>(tap_a + a.tap_cap);             // weight tap offset
  unsigned char* sb = smem + C::kYoffBytes + 8 * a.tap_cap;           // S B stages
  unsigned char* sh = sb + S * C::kStageB;                            // the halo box
  const uint32_t sh_addr = smem_addr(sh);
  const uint32_t sb_addr = smem_addr(sb);

  const int tid = threadIdx.x;

  // ---- which tile (tile_coord); the m tile is a box, sample-major.
  const TileCoord tc = tile_coord(a);
  const int nt = tc.nt, mt = tc.mt, g = tc.g, rd = tc.rd, rh = tc.rh, rw = tc.rw;
  const int sw = a.ax[2].stride, sh_ = a.ax[1].stride, sd_ = a.ax[0].stride;
  const int Qd = a.ax[0].q[rd], Qh = a.ax[1].q[rh], Qw = a.ax[2].q[rw];
  const int bqd = a.box[0], bqh = a.box[1], bqw = a.box[2];
  const int tD = (Qd + bqd - 1) / bqd, tH = (Qh + bqh - 1) / bqh, tW = (Qw + bqw - 1) / bqw;
  if (int64_t(mt) >= int64_t(a.n) * tD * tH * tW) return;  // fewer boxes than phase 0
  int u = mt;
  const int qw0 = (u % tW) * bqw;
  u /= tW;
  const int qh0 = (u % tH) * bqh;
  u /= tH;
  const int qd0 = (u % tD) * bqd;
  const int n = u / tD;
  const int n0 = nt * BN;

  // ---- the phase's taps and its halo box. Tap j of an axis reads i = q + c0 - j*cstep, so the
  // box starts at q0 + c0 - (ntap-1)*cstep and output position b, tap j is box b + (ntap-1-j)*cstep.
  const int nd = a.ax[0].ntap[rd], nh = a.ax[1].ntap[rh], nw = a.ax[2].ntap[rw];
  const int taps = nd * nh * nw;  // 0 for an empty phase: bias only
  const int csd = a.ax[0].cstep, csh = a.ax[1].cstep, csw = a.ax[2].cstep;
  const int HD = bqd + (nd > 0 ? (nd - 1) * csd : 0);
  const int HH = bqh + (nh > 0 ? (nh - 1) * csh : 0);
  const int HW = bqw + (nw > 0 ? (nw - 1) * csw : 0);
  const int id0 = qd0 + a.ax[0].c0[rd] - (nd > 0 ? (nd - 1) * csd : 0);
  const int ih0 = qh0 + a.ax[1].c0[rh] - (nh > 0 ? (nh - 1) * csh : 0);
  const int iw0 = qw0 + a.ax[2].c0[rw] - (nw > 0 ? (nw - 1) * csw : 0);

  // ---- row table: y offset of each box row, -1 past the phase's extents.
  for (int r = tid; r < BM; r += NT) {
    const int bw = r % bqw, bh = (r / bqw) % bqh, bd = r / (bqw * bqh);
    const int qd = qd0 + bd, qh = qh0 + bh, qw = qw0 + bw;
    int64_t off = -1;
    if (qd < Qd && qh < Qh && qw < Qw) {
      off = int64_t(n) * a.ys[0] + int64_t(g) * a.cout_g * a.ys[1] +
            int64_t(rd + sd_ * qd) * a.ys[2] + int64_t(rh + sh_ * qh) * a.ys[3] +
            int64_t(rw + sw * qw) * a.ys[4];
    }
    yrow[r] = off;
  }
  // ---- tap table: tap t = (jd, jh, jw) reads its A rows at box byte offset tap_a[t] and its
  // B rows at element offset tap_w[t] of the group's packed weight (the host keeps one group's
  // packed weight under 2^31 elements).
  for (int t = tid; t < taps; t += NT) {
    const int jw = t % nw, jh = (t / nw) % nh, jd = t / (nw * nh);
    tap_a[t] = uint32_t(((nd - 1 - jd) * csd * HH + (nh - 1 - jh) * csh) * HW +
                        (nw - 1 - jw) * csw) * kRowBytes;
    const int td = a.ax[0].t0[rd] + jd * a.ax[0].tstep;
    const int th = a.ax[1].t0[rh] + jh * a.ax[1].tstep;
    const int tw = a.ax[2].t0[rw] + jw * a.ax[2].tstep;
    tap_w[t] = ((td * a.k[1] + th) * a.k[2] + tw) * a.cout_g * a.cin_pad;
  }

  const int warp = tid / 32, lane = tid % 32;
  const int wm = warp % C::WM, wn = warp / C::WM;

  // Per-lane ldmatrix row addresses of tap offset 0 (tile_common.cuh's layout, rows now box
  // positions).
  uint32_t a_lane[MT];
#pragma unroll
  for (int i = 0; i < MT; ++i) {
    const int r = wm * C::TM + i * 16 + (lane % 16);
    const int bw = r % bqw, bh = (r / bqw) % bqh, bd = r / (bqw * bqh);
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
  const int64_t xn = int64_t(n) * a.xs[0] + int64_t(g) * a.cin_g * a.xs[1];

  // Halo box of channels ci0 .. ci0+BK-1 -> sh. KVEC: one cp.async per 16-byte chunk, the four
  // chunks of a position on consecutive threads (one commit group). Scalar: consecutive threads
  // take consecutive positions (consecutive iw: coalesced in NCDHW), kBatch chunks in flight
  // per thread, stored directly.
  auto load_halo = [&](int ci0) {
    if constexpr (KVEC) {
      for (int idx = tid; idx < items; idx += NT) {
        const int pos = idx / kChunks, kc = idx % kChunks;
        const int hw = pos % HW, t2 = pos / HW, hh = t2 % HH, hd = t2 / HH;
        const int id = id0 + hd, ih = ih0 + hh, iw = iw0 + hw;
        const int ci = ci0 + kc * KRUN;
        const bool ok = (unsigned(id) < unsigned(a.ax[0].in)) &
                        (unsigned(ih) < unsigned(a.ax[1].in)) &
                        (unsigned(iw) < unsigned(a.ax[2].in)) & (ci < a.cin_g);
        const T* src = ok ? x + (xn + int64_t(id) * a.xs[2] + int64_t(ih) * a.xs[3] +
                                 int64_t(iw) * a.xs[4] + ci)
                          : x;
        cp_async_16(sh_addr + pos * kRowBytes + kc * kChunkBytes, src, ok ? 16 : 0);
      }
      cp_async_commit();
    } else {
      for (int base = 0; base < items; base += NT * C::kBatch) {
        uint4 v4[C::kBatch];
#pragma unroll
        for (int j = 0; j < C::kBatch; ++j) {
          const int idx = base + j * NT + tid;
          const int pos = idx % P, kc = idx / P;
          const int hw = pos % HW, t2 = pos / HW, hh = t2 % HH, hd = t2 / HH;
          const int id = id0 + hd, ih = ih0 + hh, iw = iw0 + hw;
          const int ci = ci0 + kc * KRUN;
          const bool in = (idx < items) & (unsigned(id) < unsigned(a.ax[0].in)) &
                          (unsigned(ih) < unsigned(a.ax[1].in)) &
                          (unsigned(iw) < unsigned(a.ax[2].in));
          const int nv = in ? a.cin_g - ci : 0;
          const char* src = reinterpret_cast<const char*>(
              x + (xn + int64_t(id) * a.xs[2] + int64_t(ih) * a.xs[3] + int64_t(iw) * a.xs[4] +
                   int64_t(ci) * a.xs[1]));
          const int step = a.xs1_bytes;
          uint32_t v[KRUN];
          if (nv >= KRUN) {
#pragma unroll
            for (int e = 0; e < KRUN; ++e) {
              v[e] = ld_bits(reinterpret_cast<const T*>(src + e * step));
            }
          } else {
#pragma unroll
            for (int e = 0; e < KRUN; ++e) {
              v[e] = e < nv ? ld_bits(reinterpret_cast<const T*>(src + e * step)) : 0u;
            }
          }
          if constexpr (MODE == Mode::kTf32) {
#pragma unroll
            for (int e = 0; e < KRUN; ++e) v[e] = tf32_rna(__uint_as_float(v[e]));
          }
          if constexpr (KRUN == 8) {
            v4[j] = make_uint4(v[0] | (v[1] << 16), v[2] | (v[3] << 16), v[4] | (v[5] << 16),
                               v[6] | (v[7] << 16));
          } else {
            v4[j] = make_uint4(v[0], v[1], v[2], v[3]);
          }
        }
#pragma unroll
        for (int j = 0; j < C::kBatch; ++j) {
          const int idx = base + j * NT + tid;
          if (idx < items) {
            const int pos = idx % P, kc = idx / P;
            *reinterpret_cast<uint4*>(sh + pos * kRowBytes + kc * kChunkBytes) = v4[j];
          }
        }
      }
    }
  };

  // TF32 with cp.async: after the wait, each thread rounds the chunks it copied itself (its own
  // completed cp.async writes are visible to it), before the barrier that publishes the box.
  auto round_halo_kvec = [&]() {
    if constexpr (KVEC && MODE == Mode::kTf32) {
      for (int idx = tid; idx < items; idx += NT) {
        const int pos = idx / kChunks, kc = idx % kChunks;
        uint4* p = reinterpret_cast<uint4*>(sh + pos * kRowBytes + kc * kChunkBytes);
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
  // buf, tap-major [TB][BN][64 B]; a tap's rows are R = BN x 4 chunks. When NT is a multiple
  // of R (BN 16/32/64) each thread keeps one (column, chunk) for all its taps, so its offset and
  // column test are computed once and a copy costs a tap-table read and an add. Otherwise
  // (BN 48) each of the thread's PB copies has its own precomputed (tap, column, chunk).
  // Does not commit.
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
    b_tt[j] = idx < TB * R ? idx / R : TB + taps;  // past every tap: never copied
    b_col_ok[j] = n0 + nn < a.cout_g;
    b_off_g[j] = (n0 + nn) * a.cin_pad + b_kc[j] * KRUN;  // < one group's weight
    b_dst[j] = sb_addr + b_tt[j] * C::kTapB + nn * kRowBytes + b_kc[j] * kChunkBytes;
    if (kUniformB) break;  // j > 0 differs only by whole taps (NT / R of them)
  }
  auto load_b = [&](int buf, int ci0, int t0) {
#pragma unroll
    for (int j = 0; j < PB; ++j) {
      const int jj = kUniformB ? 0 : j;  // the precomputed slot
      const int t = t0 + b_tt[jj] + (kUniformB ? j * (NT / R) : 0);
      const bool ok = b_col_ok[jj] & (ci0 + b_kc[jj] * KRUN < a.cin_g);
      if (t < taps) {
        const T* src = ok ? wg + (tap_w[t] + b_off_g[jj] + ci0) : wg;
        cp_async_16(b_dst[jj] + buf * C::kStageB + (kUniformB ? j * (NT / R) * C::kTapB : 0),
                    src, ok ? 16 : 0);
      }
    }
  };

  float acc[MT][NTL][4];
  zero_acc(acc);

  // ---- main loop over stages st = (chunk, taps sub*TB ..): standard multistage cp.async
  // pipeline for B, with the box reloaded at each chunk start (the wait there drains B too).
  // At stage st, after the barrier, buffer (st-1) % S is free (every warp finished stage st-1)
  // and takes stage st+S-1.
  __syncthreads();  // row and tap tables
  if (taps > 0) {
    const int kchunks = (a.cin_g + BK - 1) / BK;
    const int spc = (taps + TB - 1) / TB;  // stages per chunk
    const int nst = kchunks * spc;
    int ld_c = 0, ld_sub = 0;  // next stage to load
    auto issue_next = [&](int buf) {
      load_b(buf, ld_c * BK, ld_sub * TB);
      if (++ld_sub == spc) {
        ld_sub = 0;
        ++ld_c;
      }
    };
    load_halo(0);
#pragma unroll
    for (int s = 0; s < S - 1; ++s) {
      if (s < nst) issue_next(s);
      cp_async_commit();
    }
    int c = 0, sub = 0;
    for (int st = 0; st < nst; ++st) {
      if (sub == 0) {
        if (st > 0) {
          __syncthreads();  // every warp is done with the previous chunk's box
          load_halo(c * BK);
        }
        cp_async_wait<0>();
        round_halo_kvec();
      } else {
        cp_async_wait<S - 2>();
      }
      __syncthreads();
      if (st + S - 1 < nst) issue_next((st + S - 1) % S);
      cp_async_commit();
      const int buf = st % S;
#pragma unroll
      for (int tt = 0; tt < TB; ++tt) {
        const int t = sub * TB + tt;
        if (t < taps) {
          const uint32_t off = tap_a[t];
          uint32_t a_addr[MT];
#pragma unroll
          for (int i = 0; i < MT; ++i) a_addr[i] = a_lane[i] + off;
          warp_mma_stage<MODE, MT, NTL, false>(
              acc, a_addr, sb_addr + buf * C::kStageB + tt * C::kTapB + b_off);
        }
      }
      if (++sub == spc) {
        sub = 0;
        ++c;
      }
    }
  }
  __syncthreads();  // the epilogue tile overwrites B stages and box

  store_tile<C, T>(acc, reinterpret_cast<float*>(sb), yrow, 1, a, g, n0, wm, wn);
#endif
}

template <Mode MODE, int BN, bool KVEC>
cudaError_t launch_halo(const FwdArgs& a, int64_t blocks, cudaStream_t stream) {
  if constexpr (BN > halo_max_bn(MODE)) {
    return cudaErrorInvalidValue;  // not a configuration of this mode; no kernel compiled
  } else {
    auto kernel = halo_fwd_kernel<MODE, BN, KVEC>;
    if (a.smem_bytes > 48 * 1024) {
      const cudaError_t e =
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, a.smem_bytes);
      if (e != cudaSuccess) return e;
    }
    kernel<<<static_cast<unsigned>(blocks), HaloCfg<MODE, BN, KVEC>::NT, a.smem_bytes, stream>>>(
        a);
    return cudaGetLastError();
  }
}

}  // namespace fwd
}  // namespace convt3d
