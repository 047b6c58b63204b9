// Phase-decomposed implicit-GEMM forward on tensor cores (mma.sync, sm80+ PTX).
//
// One CTA computes a BM x BN tile of one (stride phase, group) GEMM:
//   rows    m = output positions (n, qd, qh, qw) of the phase, o = r + s*q per axis,
//   columns   = output channels of the group,
//   K         = (valid taps of the phase) x (input channels of the group).
// The K loop walks taps outermost and input channels in chunks of BK, so the tap, its input
// offset c and the bounds test are uniform over a stage. Out-of-range inputs, channel tails and
// row tails load zero; every output element is written once, by one thread, with no atomics.
//
// Shared memory: a row table (per tile row: x and y offsets and q), two pipeline stages of
// A [BM][64 B] and B [BN][64 B] (rows padded to 80 B for conflict-free ldmatrix), and the
// epilogue tile [BM][BN+1] fp32, which reuses the pipeline bytes.
#pragma once

#include "launch.h"
#include "mma.cuh"
#include "mode.h"
#include "phases.h"
#include "tile_configs.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace convt3d {
namespace fwd {

template <Mode M>
struct ModeTraits {
  using T = float;
};
template <>
struct ModeTraits<Mode::kBf16> {
  using T = __nv_bfloat16;
};
template <>
struct ModeTraits<Mode::kFp16> {
  using T = __half;
};

template <Mode MODE, int BN, bool KVEC>
struct IgemmCfg {
  using T = typename ModeTraits<MODE>::T;
  static constexpr TileConfig tc = tile_config(BN);
  static_assert(tc.bn == BN, "BN missing from kTileConfigs");
  static constexpr int BM = tc.bm, WM = tc.warps_m, WN = tc.warps_n;
  static constexpr int NT = 32 * WM * WN;      // threads
  // At least 16 warps per SM (<= 128 registers per thread) to cover load latency.
  static constexpr int kMinBlocks = 512 / NT;
  static constexpr int TM = BM / WM, TN = BN / WN;  // warp tile
  static constexpr int MT = TM / 16, NTL = TN / 8;  // m16 and n8 fragments per warp
  static_assert(TM % 16 == 0 && TN % 16 == 0, "warp tile must be a multiple of 16 x 16");
  static constexpr int kElem = sizeof(T);
  static constexpr int KRUN = kChunkBytes / kElem;  // elements per 16-byte chunk
  static constexpr int BK = kBkBytes / kElem;       // elements per stage
  static constexpr int PA = BM * kChunks / NT;      // A chunks per thread per stage
  static_assert(PA * NT == BM * kChunks, "A tile must split evenly over the threads");
  static constexpr int PB = (BN * kChunks + NT - 1) / NT;  // B chunks per thread (some idle)
  static constexpr int kRowInfoBytes = BM * 32;
  static constexpr int kStageA = BM * kRowBytes, kStageB = BN * kRowBytes;
  static constexpr int kPipeBytes = 2 * (kStageA + kStageB);
  static constexpr int kEpiStride = BN + 1;  // odd: conflict-free along rows and columns
  static constexpr int kEpiBytes = BM * kEpiStride * 4;
  static constexpr int kSmemBytes =
      kRowInfoBytes + (kPipeBytes > kEpiBytes ? kPipeBytes : kEpiBytes);
};

struct alignas(16) RowInfo {
  int64_t xoff;  // x offset of (n, group's first channel, q) — add the tap offset
  int64_t yoff;  // y offset of (n, group's first channel, r + s*q)
  int qd, qh, qw, pad;
};

// Raw bits of one element (16-bit types travel as ushort, fp32 as uint).
template <typename T>
__device__ __forceinline__ uint32_t ld_bits(const T* p) {
  if constexpr (sizeof(T) == 2) {
    return __ldg(reinterpret_cast<const unsigned short*>(p));
  } else {
    return __float_as_uint(__ldg(reinterpret_cast<const float*>(p)));
  }
}

template <typename T>
__device__ __forceinline__ float to_float(T v) {
  if constexpr (sizeof(T) == 4) {
    return v;
  } else if constexpr (std::is_same_v<T, __half>) {
    return __half2float(v);
  } else {
    return __bfloat162float(v);
  }
}

template <typename T>
__device__ __forceinline__ T from_float(float v) {
  if constexpr (sizeof(T) == 4) {
    return v;
  } else if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else {
    return __float2bfloat16_rn(v);
  }
}

// 3xTF32 split x = big + small, both rounded to nearest TF32. The tensor core ignores the low
// 13 mantissa bits of a TF32 operand (nvcc 13 compiles cvt.rna.tf32 for sm_90 to "+0x1000"
// without masking, as CUTLASS's round_half_ulp_truncate does), so rounding is one integer add; big is masked because x - big must be
// exact. 4 instructions instead of the 7 two cvt.rna emulations take. A NaN still propagates
// through small.
__device__ __forceinline__ void split_tf32(uint32_t x, uint32_t& big, uint32_t& small) {
  big = (x + 0x1000u) & 0xffffe000u;
  small = __float_as_uint(__uint_as_float(x) - __uint_as_float(big)) + 0x1000u;
}

// Position in the K loop: tap (jd, jh, jw) of the phase's tap lists and first channel ci0.
struct KIter {
  int ci0, jd, jh, jw;
};

template <Mode MODE, int BN, bool KVEC>
__global__ void __launch_bounds__(IgemmCfg<MODE, BN, KVEC>::NT,
                                  IgemmCfg<MODE, BN, KVEC>::kMinBlocks)
    igemm_fwd_kernel(const __grid_constant__ FwdArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // mma.sync bf16 / cp.async need sm80; the host never launches this below sm80
#else
  using C = IgemmCfg<MODE, BN, KVEC>;
  using T = typename C::T;
  constexpr int BM = C::BM, NT = C::NT, MT = C::MT, NTL = C::NTL, KRUN = C::KRUN, BK = C::BK;

  extern __shared__ __align__(16) unsigned char smem[];
  RowInfo* rows = reinterpret_cast<RowInfo*>(smem);
  unsigned char* pipe = smem + C::kRowInfoBytes;
  // Stage buffers by arithmetic, not a pointer array (a runtime-indexed array lands in local
  // memory).
  auto stage_a = [&](int buf) { return pipe + buf * C::kStageA; };
  auto stage_b = [&](int buf) { return pipe + 2 * C::kStageA + buf * C::kStageB; };

  const int tid = threadIdx.x;

  // ---- which tile: n tile fastest, then phase (so the phases of one region run together and
  // share x in L2, and their interleaved y writes merge in L2), then m tile, then group.
  int64_t b = blockIdx.x;
  const int nt = static_cast<int>(b % a.n_tiles);
  b /= a.n_tiles;
  const int ph = static_cast<int>(b % a.phases);
  b /= a.phases;
  const int mt = static_cast<int>(b % a.m_tiles);
  const int g = static_cast<int>(b / a.m_tiles);
  const int sw = a.ax[2].stride, sh = a.ax[1].stride;
  const int rw = ph % sw, rh = (ph / sw) % sh, rd = ph / (sw * sh);
  const int Qd = a.ax[0].q[rd], Qh = a.ax[1].q[rh], Qw = a.ax[2].q[rw];
  const int64_t M = int64_t(a.n) * Qd * Qh * Qw;
  const int64_t m0 = int64_t(mt) * BM;
  if (m0 >= M) return;  // this phase has fewer tiles than the largest one
  const int n0 = nt * BN;

  // ---- row table: decompose each tile row once.
  for (int r = tid; r < BM; r += NT) {
    const int64_t m = m0 + r;
    RowInfo ri;
    if (m < M) {
      int qw, qh, qd;
      int64_t n;
      if (m <= 0xffffffffLL) {  // 32-bit division is much cheaper
        uint32_t u = static_cast<uint32_t>(m);
        qw = static_cast<int>(u % uint32_t(Qw));
        u /= uint32_t(Qw);
        qh = static_cast<int>(u % uint32_t(Qh));
        u /= uint32_t(Qh);
        qd = static_cast<int>(u % uint32_t(Qd));
        n = u / uint32_t(Qd);
      } else {
        int64_t u = m;
        qw = static_cast<int>(u % Qw);
        u /= Qw;
        qh = static_cast<int>(u % Qh);
        u /= Qh;
        qd = static_cast<int>(u % Qd);
        n = u / Qd;
      }
      ri.xoff = n * a.xs[0] + int64_t(g) * a.cin_g * a.xs[1] + int64_t(qd) * a.xs[2] +
                int64_t(qh) * a.xs[3] + int64_t(qw) * a.xs[4];
      ri.yoff = n * a.ys[0] + int64_t(g) * a.cout_g * a.ys[1] +
                int64_t(rd + a.ax[0].stride * qd) * a.ys[2] +
                int64_t(rh + sh * qh) * a.ys[3] + int64_t(rw + sw * qw) * a.ys[4];
      ri.qd = qd;
      ri.qh = qh;
      ri.qw = qw;
    } else {
      // Fails every bounds test below: the row loads zeros and is never stored.
      ri.xoff = ri.yoff = 0;
      ri.qd = ri.qh = ri.qw = -(1 << 30);
    }
    ri.pad = 0;
    rows[r] = ri;
  }
  __syncthreads();

  // ---- the phase's taps and the K loop length.
  const int nd = a.ax[0].ntap[rd], nh = a.ax[1].ntap[rh], nw = a.ax[2].ntap[rw];
  const int kchunks = (a.cin_g + BK - 1) / BK;
  const int iters = nd * nh * nw * kchunks;  // 0 for an empty phase: bias only

  const T* __restrict__ x = static_cast<const T*>(a.x);
  const T* __restrict__ wp = static_cast<const T*>(a.wp);
  const int kvol = a.k[0] * a.k[1] * a.k[2];

  uint4 areg[KVEC ? 1 : C::PA];  // A staging for the scalar loader

  // Thread -> (row, 16-byte chunk) of its j-th A chunk. Consecutive threads take consecutive
  // channel chunks (KVEC: channels_last, one 16-byte load each) or consecutive rows (scalar
  // loader: consecutive qw -> consecutive iw, coalesced for NCDHW). Written out per case so
  // the compiler sees when a thread keeps one row for all j (its bounds test is then shared).
  static_assert(NT % kChunks == 0 && (NT >= BM ? NT % BM == 0 : BM % NT == 0), "A mapping");
  auto a_slot = [&](int j, int& row, int& kc) {
    if constexpr (KVEC) {
      row = tid / kChunks + (NT / kChunks) * j;
      kc = tid % kChunks;
    } else if constexpr (NT >= BM) {
      row = tid % BM;
      kc = tid / BM + (NT / BM) * j;
    } else {
      row = tid + NT * (j % (BM / NT));
      kc = j / (BM / NT);
    }
  };

  // Issues the global reads of stage `it` into buffer `buf` (A into areg for the scalar
  // loader, everything else by cp.async).
  auto load_stage = [&](int buf, const KIter& it) {
    const int cd = a.ax[0].c0[rd] - it.jd * a.ax[0].cstep;
    const int ch = a.ax[1].c0[rh] - it.jh * a.ax[1].cstep;
    const int cw = a.ax[2].c0[rw] - it.jw * a.ax[2].cstep;
    const int64_t tapoff = int64_t(cd) * a.xs[2] + int64_t(ch) * a.xs[3] + int64_t(cw) * a.xs[4];
#pragma unroll
    for (int j = 0; j < C::PA; ++j) {
      int row, kc;
      a_slot(j, row, kc);
      const RowInfo& ri = rows[row];
      // Bitwise &, not &&: no branches in the loader.
      const bool in_bounds = (unsigned(ri.qd + cd) < unsigned(a.ax[0].in)) &
                             (unsigned(ri.qh + ch) < unsigned(a.ax[1].in)) &
                             (unsigned(ri.qw + cw) < unsigned(a.ax[2].in));
      const int ci = it.ci0 + kc * KRUN;
      if constexpr (KVEC) {
        // Unit channel stride, cin_g % KRUN == 0 and 16-byte aligned offsets (host checked):
        // a chunk is entirely valid or entirely zero.
        const bool ok = in_bounds & (ci < a.cin_g);
        const T* src = ok ? x + (ri.xoff + tapoff + ci) : x;
        cp_async_16(smem_addr(stage_a(buf) + row * kRowBytes + kc * kChunkBytes), src,
                    ok ? 16 : 0);
      } else {
        // Elements ci .. ci+KRUN-1, xs[1] apart; the first nv exist. The host guarantees
        // (KRUN-1) * xs1_bytes fits in int32, so each address is one IMAD.WIDE.
        const int nv = in_bounds ? a.cin_g - ci : 0;
        const int step = a.xs1_bytes;
        const char* src =
            reinterpret_cast<const char*>(x + (ri.xoff + tapoff + int64_t(ci) * a.xs[1]));
        uint32_t v[KRUN];
        if (nv >= KRUN) {  // the common case: whole chunk, no predicates
#pragma unroll
          for (int e = 0; e < KRUN; ++e) v[e] = ld_bits(reinterpret_cast<const T*>(src + e * step));
        } else {
#pragma unroll
          for (int e = 0; e < KRUN; ++e) {
            v[e] = e < nv ? ld_bits(reinterpret_cast<const T*>(src + e * step)) : 0u;
          }
        }
        if constexpr (KRUN == 8) {
          areg[j] = make_uint4(v[0] | (v[1] << 16), v[2] | (v[3] << 16), v[4] | (v[5] << 16),
                               v[6] | (v[7] << 16));
        } else {
          areg[j] = make_uint4(v[0], v[1], v[2], v[3]);
        }
      }
    }
    // B: the packed weight row of (tap, column) is cin_pad contiguous elements, 16-byte aligned.
    const int td = a.ax[0].t0[rd] + it.jd * a.ax[0].tstep;
    const int th = a.ax[1].t0[rh] + it.jh * a.ax[1].tstep;
    const int tw = a.ax[2].t0[rw] + it.jw * a.ax[2].tstep;
    const int tap = (td * a.k[1] + th) * a.k[2] + tw;
    const int64_t wbase = (int64_t(g) * kvol + tap) * a.cout_g * a.cin_pad;
#pragma unroll
    for (int j = 0; j < C::PB; ++j) {
      const int nn = tid / kChunks + (NT / kChunks) * j, kc = tid % kChunks;
      if (C::PB * NT != BN * kChunks && nn >= BN) break;
      const int col = n0 + nn, ci = it.ci0 + kc * KRUN;
      const bool ok = (col < a.cout_g) & (ci < a.cin_g);
      const T* src = ok ? wp + (wbase + int64_t(col) * a.cin_pad + ci) : wp;
      cp_async_16(smem_addr(stage_b(buf) + nn * kRowBytes + kc * kChunkBytes), src,
                  ok ? 16 : 0);
    }
  };

  auto store_stage = [&](int buf) {
    if constexpr (!KVEC) {
#pragma unroll
      for (int j = 0; j < C::PA; ++j) {
        int row, kc;
        a_slot(j, row, kc);
        *reinterpret_cast<uint4*>(stage_a(buf) + row * kRowBytes + kc * kChunkBytes) = areg[j];
      }
    }
  };

  auto advance = [&](KIter& it) {
    it.ci0 += BK;
    if (it.ci0 >= a.cin_g) {
      it.ci0 = 0;
      if (++it.jw == nw) {
        it.jw = 0;
        if (++it.jh == nh) {
          it.jh = 0;
          ++it.jd;
        }
      }
    }
  };

  float acc[MT][NTL][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NTL; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[i][j][c] = 0.f;

  const int warp = tid / 32, lane = tid % 32;
  const int wm = warp % C::WM, wn = warp / C::WM;

  // Fragment addresses. A: lanes 0-15 give rows 0-15 of the first 16-byte k chunk, lanes 16-31
  // the same rows of the second -> a0..a3 of m16n8k16 (bf16/fp16) and of m16n8k8 (tf32).
  // B (stored [n][k]): lanes 0-7 n 0-7 chunk 0, 8-15 n 0-7 chunk 1, 16-23 n 8-15 chunk 0,
  // 24-31 n 8-15 chunk 1 -> {b0, b1} of two adjacent n8 tiles.
  const uint32_t a_off = (wm * C::TM + (lane % 16)) * kRowBytes + (lane / 16) * kChunkBytes;
  const uint32_t b_off =
      (wn * C::TN + (lane % 8) + (lane / 16) * 8) * kRowBytes + ((lane / 8) % 2) * kChunkBytes;

  auto compute_stage = [&](int buf) {
    const uint32_t a_base = smem_addr(stage_a(buf)) + a_off;
    const uint32_t b_base = smem_addr(stage_b(buf)) + b_off;
#pragma unroll
    for (int ks = 0; ks < kChunks / 2; ++ks) {  // 32 bytes of K per MMA
      uint32_t af[MT][4];
#pragma unroll
      for (int i = 0; i < MT; ++i) ldmatrix_x4(af[i], a_base + i * 16 * kRowBytes + ks * 32);
      uint32_t as[MT][4];  // small parts (3xTF32 only)
      if constexpr (MODE == Mode::kTf32) {
        // B was rounded by the repack; A is rounded here.
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
          for (int c = 0; c < 4; ++c) af[i][c] = tf32_rna(__uint_as_float(af[i][c]));
      } else if constexpr (MODE == Mode::kTf32x3) {
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
          for (int c = 0; c < 4; ++c) split_tf32(af[i][c], af[i][c], as[i][c]);
      }
      // B fragments two n8 tiles at a time, so only four B registers are live.
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
            // a*b ~= a_small*b_big + a_big*b_small + a_big*b_big, small terms first, into a
            // fresh partial that is then added with an IEEE (round-to-nearest) FADD. The tensor
            // core accumulates with truncation; chaining it over all of K biases long sums
            // (~3e-5 at K = 3000 in a model of it), while this two-level sum stays ~3e-7.
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

  // ---- main loop: two stages, one barrier per stage. Stage i+1's reads are in flight while
  // stage i multiplies; buffer i+1 was last read in iteration i-1, before its closing barrier.
  if (iters > 0) {
    KIter it{0, 0, 0, 0};
    load_stage(0, it);
    cp_async_commit();
    store_stage(0);
    cp_async_wait_all();
    __syncthreads();
    for (int i = 0; i < iters; ++i) {
      const int cur = i & 1;
      const bool more = i + 1 < iters;
      if (more) {
        advance(it);
        load_stage(cur ^ 1, it);
        cp_async_commit();
      }
      compute_stage(cur);
      if (more) store_stage(cur ^ 1);
      cp_async_wait_all();
      __syncthreads();
    }
  }

  // ---- epilogue: accumulators (+ bias) -> smem tile -> coalesced global writes.
  float* ct = reinterpret_cast<float*>(pipe);
  const T* bias = static_cast<const T*>(a.bias);
  const int gi = lane / 4, ti = lane % 4;
#pragma unroll
  for (int j = 0; j < NTL; ++j) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int cl = wn * C::TN + j * 8 + 2 * ti + c;  // column within the tile
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
  const int rows_left = static_cast<int>(M - m0 < BM ? M - m0 : BM);
  const int cols_left = a.cout_g - n0 < BN ? a.cout_g - n0 : BN;
  if (a.y_cfast) {  // channels_last: consecutive threads write consecutive channels
#pragma unroll 4
    for (int i = tid; i < BM * BN; i += NT) {
      const int r = i / BN, cl = i % BN;
      if (r < rows_left && cl < cols_left) {
        y[rows[r].yoff + int64_t(n0 + cl) * a.ys[1]] = from_float<T>(ct[r * C::kEpiStride + cl]);
      }
    }
  } else {  // NCDHW: consecutive threads write consecutive qw (output stride s_w apart)
#pragma unroll 4
    for (int i = tid; i < BM * BN; i += NT) {
      const int r = i % BM, cl = i / BM;
      if (r < rows_left && cl < cols_left) {
        y[rows[r].yoff + int64_t(n0 + cl) * a.ys[1]] = from_float<T>(ct[r * C::kEpiStride + cl]);
      }
    }
  }
#endif
}

// Packs w [Cin, Cout/g, kD, kH, kW] (any strides) into [g][kD][kH][kW][Cout_g][cin_pad]: one
// 16-byte-aligned K-contiguous row per (tap, column), zero beyond Cin_g. TF32 mode rounds here
// so the main loop does not have to; 3xTF32 keeps full fp32 and splits in the loop.
template <Mode MODE>
__global__ void repack_weight_kernel(const typename ModeTraits<MODE>::T* __restrict__ w,
                                     typename ModeTraits<MODE>::T* __restrict__ wp,
                                     int64_t total, int cin_g, int cin_pad, int cout_g, int kd,
                                     int kh, int kw, int64_t ws0, int64_t ws1, int64_t ws2,
                                     int64_t ws3, int64_t ws4) {
  using T = typename ModeTraits<MODE>::T;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = e;
    const int ci = static_cast<int>(r % cin_pad);
    r /= cin_pad;
    const int col = static_cast<int>(r % cout_g);
    r /= cout_g;
    const int tw = static_cast<int>(r % kw);
    r /= kw;
    const int th = static_cast<int>(r % kh);
    r /= kh;
    const int td = static_cast<int>(r % kd);
    const int64_t g = r / kd;
    T v = from_float<T>(0.f);
    if (ci < cin_g) {
      v = w[(g * cin_g + ci) * ws0 + col * ws1 + td * ws2 + th * ws3 + tw * ws4];
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
      if constexpr (MODE == Mode::kTf32) v = __uint_as_float(tf32_rna(v));
#endif
    }
    wp[e] = v;
  }
}

// Launchers, declared in launch.h and instantiated in inst_*.cu. They return the launch status.
template <Mode MODE, int BN, bool KVEC>
cudaError_t launch_igemm(const FwdArgs& a, int64_t blocks, cudaStream_t stream) {
  if constexpr (BN > max_bn(MODE)) {
    return cudaErrorInvalidValue;  // not a configuration of this mode; no kernel compiled
  } else {
    using C = IgemmCfg<MODE, BN, KVEC>;
    auto kernel = igemm_fwd_kernel<MODE, BN, KVEC>;
    if (C::kSmemBytes > 48 * 1024) {
      // Per device and cheap after the first call; setting it every launch keeps multi-GPU
      // right.
      const cudaError_t e = cudaFuncSetAttribute(
          kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes);
      if (e != cudaSuccess) return e;
    }
    kernel<<<static_cast<unsigned>(blocks), C::NT, C::kSmemBytes, stream>>>(a);
    return cudaGetLastError();
  }
}

template <Mode MODE>
cudaError_t launch_repack(const void* w, void* wp, int64_t total, int cin_g, int cin_pad,
                          int cout_g, const int* k, const int64_t* ws, cudaStream_t stream) {
  using T = typename ModeTraits<MODE>::T;
  constexpr int kThreads = 256;
  const int64_t blocks = (total + kThreads - 1) / kThreads;
  const unsigned grid = static_cast<unsigned>(blocks < 65535 * 16 ? blocks : 65535 * 16);
  repack_weight_kernel<MODE><<<grid, kThreads, 0, stream>>>(
      static_cast<const T*>(w), static_cast<T*>(wp), total, cin_g, cin_pad, cout_g, k[0], k[1],
      k[2], ws[0], ws[1], ws[2], ws[3], ws[4]);
  return cudaGetLastError();
}

}  // namespace fwd
}  // namespace convt3d
