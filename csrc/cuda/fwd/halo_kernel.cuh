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
// K loop: chunks outermost (halo box reloaded, zero outside x and past Cin/g), taps inner, with
// the packed weight row block [tap][BN][64 B] streamed through two cp.async stages (one barrier
// per tap). TF32 rounds A once when the box is stored, not per tap. MMA, 3xTF32 split and
// epilogue are v1's (igemm_kernel.cuh). Rows of a box past the phase's Q extents compute on
// in-range or zero data and are never stored; every stored element is written once, no atomics.
#pragma once

#include "igemm_kernel.cuh"

namespace convt3d {
namespace fwd {

template <Mode MODE, int BN, bool KVEC>
struct HaloCfg {
  using T = typename ModeTraits<MODE>::T;
  static constexpr TileConfig tc = tile_config(BN);
  static_assert(tc.bn == BN && BN <= kHaloMaxBn, "halo BN must be a kTileConfigs row <= 64");
  static constexpr int BM = tc.bm, WM = tc.warps_m, WN = tc.warps_n;
  static constexpr int NT = 32 * WM * WN;
  static constexpr int kMinBlocks = 512 / NT;
  static constexpr int TM = BM / WM, TN = BN / WN;
  static constexpr int MT = TM / 16, NTL = TN / 8;
  static_assert(TM % 16 == 0 && TN % 16 == 0, "warp tile must be a multiple of 16 x 16");
  static constexpr int kElem = sizeof(T);
  static constexpr int KRUN = kChunkBytes / kElem;
  static constexpr int BK = kBkBytes / kElem;
  static constexpr int PB = (BN * kChunks + NT - 1) / NT;
  static constexpr int kYoffBytes = BM * 8;
  static constexpr int kStageB = BN * kRowBytes;
  static constexpr int kEpiStride = BN + 1;
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

  extern __shared__ __align__(16) unsigned char smem[];
  int64_t* yrow = reinterpret_cast<int64_t*>(smem);  // y offset of each box row, -1: not stored
  unsigned char* sb = smem + C::kYoffBytes;           // two B stages
  unsigned char* sh = sb + 2 * C::kStageB;            // the halo box
  const uint32_t sh_addr = smem_addr(sh);

  const int tid = threadIdx.x;

  // ---- which tile: n tile fastest, then phase, then box (sample-major), then group.
  int64_t b = blockIdx.x;
  const int nt = static_cast<int>(b % a.n_tiles);
  b /= a.n_tiles;
  const int ph = static_cast<int>(b % a.phases);
  b /= a.phases;
  const int mt = static_cast<int>(b % a.m_tiles);
  const int g = static_cast<int>(b / a.m_tiles);
  const int sw = a.ax[2].stride, sh_ = a.ax[1].stride, sd_ = a.ax[0].stride;
  const int rw = ph % sw, rh = (ph / sw) % sh_, rd = ph / (sw * sh_);
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

  const int warp = tid / 32, lane = tid % 32;
  const int wm = warp % C::WM, wn = warp / C::WM;

  // Per-lane ldmatrix row addresses of tap offset 0: lanes 0-15 rows 0-15 of the fragment at k
  // chunk 0, lanes 16-31 the same rows at chunk 1 (v1's layout, rows now box positions).
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
  const T* __restrict__ wp = static_cast<const T*>(a.wp);
  const int kvol = a.k[0] * a.k[1] * a.k[2];
  const int P = HD * HH * HW;
  const int items = P * kChunks;
  const int64_t xn = int64_t(n) * a.xs[0] + int64_t(g) * a.cin_g * a.xs[1];

  // Halo box of channels ci0 .. ci0+BK-1 -> sh. KVEC: one cp.async per 16-byte chunk, the four
  // chunks of a position on consecutive threads. Scalar: consecutive threads take consecutive
  // positions (consecutive iw: coalesced in NCDHW), kBatch chunks in flight per thread.
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

  // B: packed weight rows of tap (jd, jh, jw), columns n0.., channels ci0.. -> stage buf.
  auto load_b = [&](int buf, int ci0, int jd, int jh, int jw) {
    const int td = a.ax[0].t0[rd] + jd * a.ax[0].tstep;
    const int th = a.ax[1].t0[rh] + jh * a.ax[1].tstep;
    const int tw = a.ax[2].t0[rw] + jw * a.ax[2].tstep;
    const int tap = (td * a.k[1] + th) * a.k[2] + tw;
    const int64_t wbase = (int64_t(g) * kvol + tap) * a.cout_g * a.cin_pad;
#pragma unroll
    for (int j = 0; j < C::PB; ++j) {
      const int nn = tid / kChunks + (NT / kChunks) * j, kc = tid % kChunks;
      if (C::PB * NT != BN * kChunks && nn >= BN) break;
      const int col = n0 + nn, ci = ci0 + kc * KRUN;
      const bool ok = (col < a.cout_g) & (ci < a.cin_g);
      const T* src = ok ? wp + (wbase + int64_t(col) * a.cin_pad + ci) : wp;
      cp_async_16(smem_addr(sb + buf * C::kStageB + nn * kRowBytes + kc * kChunkBytes), src,
                  ok ? 16 : 0);
    }
    cp_async_commit();
  };

  float acc[MT][NTL][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NTL; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[i][j][c] = 0.f;

  // One tap: A rows at box offset `tapbytes`, B from stage buf. v1's fragment code, with TF32 A
  // already rounded in the box.
  auto compute_tap = [&](int buf, uint32_t tapbytes) {
    const uint32_t b_base = smem_addr(sb + buf * C::kStageB) + b_off;
#pragma unroll
    for (int ks = 0; ks < kChunks / 2; ++ks) {
      uint32_t af[MT][4];
#pragma unroll
      for (int i = 0; i < MT; ++i) ldmatrix_x4(af[i], a_lane[i] + tapbytes + ks * 32);
      uint32_t as[MT][4];
      if constexpr (MODE == Mode::kTf32x3) {
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
          for (int c = 0; c < 4; ++c) split_tf32(af[i][c], af[i][c], as[i][c]);
      }
#pragma unroll
      for (int jp = 0; jp < NTL / 2; ++jp) {
        uint32_t r[4];
        ldmatrix_x4(r, b_base + jp * 16 * kRowBytes + ks * 32);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int j = 2 * jp + h;
          uint32_t bf[2] = {r[2 * h], r[2 * h + 1]};
#pragma unroll
          for (int i = 0; i < MT; ++i) {
            if constexpr (MODE == Mode::kBf16) {
              mma_bf16_16816(acc[i][j], af[i], bf);
            } else if constexpr (MODE == Mode::kFp16) {
              mma_f16_16816(acc[i][j], af[i], bf);
            } else if constexpr (MODE == Mode::kTf32) {
              mma_tf32_1688(acc[i][j], af[i], bf);
            }
          }
          if constexpr (MODE == Mode::kTf32x3) {
            // Same two-level sum as v1: fresh partial per k8 step, IEEE FADD into acc.
            uint32_t bb[2], bs[2];
            split_tf32(bf[0], bb[0], bs[0]);
            split_tf32(bf[1], bb[1], bs[1]);
#pragma unroll
            for (int i = 0; i < MT; ++i) {
              float part[4] = {0.f, 0.f, 0.f, 0.f};
              mma_tf32_1688(part, as[i], bb);
              mma_tf32_1688(part, af[i], bs);
              mma_tf32_1688(part, af[i], bb);
#pragma unroll
              for (int c = 0; c < 4; ++c) acc[i][j][c] += part[c];
            }
          }
        }
      }
    }
  };

  // ---- main loop. Per chunk: box + tap 0's B, wait, barrier; then per tap: next tap's B in
  // flight while this tap multiplies, wait, barrier. The barrier closing the last tap also
  // frees the box and both B stages for the next chunk (and for the epilogue tile).
  __syncthreads();  // row table
  if (taps > 0) {
    const int kchunks = (a.cin_g + BK - 1) / BK;
    const uint32_t sdb = uint32_t(csd) * HH * HW * kRowBytes, shb = uint32_t(csh) * HW * kRowBytes,
                   swb = uint32_t(csw) * kRowBytes;
    for (int kc = 0; kc < kchunks; ++kc) {
      const int ci0 = kc * BK;
      load_halo(ci0);
      load_b(0, ci0, 0, 0, 0);
      cp_async_wait_all();
      round_halo_kvec();
      __syncthreads();
      int jd = 0, jh = 0, jw = 0;
      for (int t = 0; t < taps; ++t) {
        const int cur = t & 1;
        const uint32_t tapbytes =
            uint32_t(nd - 1 - jd) * sdb + uint32_t(nh - 1 - jh) * shb + uint32_t(nw - 1 - jw) * swb;
        if (++jw == nw) {
          jw = 0;
          if (++jh == nh) {
            jh = 0;
            ++jd;
          }
        }
        if (t + 1 < taps) load_b(cur ^ 1, ci0, jd, jh, jw);
        compute_tap(cur, tapbytes);
        cp_async_wait_all();
        __syncthreads();
      }
    }
  }

  // ---- epilogue (v1's): accumulators + bias -> [BM][BN+1] fp32 tile over sb.. -> y.
  float* ct = reinterpret_cast<float*>(sb);
  const T* bias = static_cast<const T*>(a.bias);
  const int gi = lane / 4, ti = lane % 4;
#pragma unroll
  for (int j = 0; j < NTL; ++j) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int cl = wn * C::TN + j * 8 + 2 * ti + c;
      const int col = n0 + cl;
      const float bv =
          (bias != nullptr && col < a.cout_g) ? to_float(bias[int64_t(g) * a.cout_g + col]) : 0.f;
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        const int rl = wm * C::TM + i * 16 + gi;
        ct[rl * C::kEpiStride + cl] = acc[i][j][c] + bv;
        ct[(rl + 8) * C::kEpiStride + cl] = acc[i][j][2 + c] + bv;
      }
    }
  }
  __syncthreads();

  T* __restrict__ y = static_cast<T*>(a.y);
  const int cols_left = a.cout_g - n0 < BN ? a.cout_g - n0 : BN;
  if (a.y_cfast) {
#pragma unroll 4
    for (int i = tid; i < BM * BN; i += NT) {
      const int r = i / BN, cl = i % BN;
      const int64_t yo = yrow[r];
      if (yo >= 0 && cl < cols_left) {
        y[yo + int64_t(n0 + cl) * a.ys[1]] = from_float<T>(ct[r * C::kEpiStride + cl]);
      }
    }
  } else {
#pragma unroll 4
    for (int i = tid; i < BM * BN; i += NT) {
      const int r = i % BM, cl = i / BM;
      const int64_t yo = yrow[r];
      if (yo >= 0 && cl < cols_left) {
        y[yo + int64_t(n0 + cl) * a.ys[1]] = from_float<T>(ct[r * C::kEpiStride + cl]);
      }
    }
  }
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
  kernel<<<static_cast<unsigned>(blocks), HaloCfg<MODE, BN, KVEC>::NT, a.smem_bytes, stream>>>(a);
  return cudaGetLastError();
  }
}

}  // namespace fwd
}  // namespace convt3d
