// Non-overlapping forward (sm_90a, bf16/fp16/TF32, channels_last x): layers whose kernel equals
// their stride on every axis (k = s, no dilation; k = s = 1 included) and whose outputs are
// all reached (output_padding <= padding). Each input position then feeds exactly one output
// per tap, so the whole layer is one dense GEMM
//   D[m][(tap, co)] = sum over ci of x[m][ci] * W[ci][co][tap],   m = (n, id, ih, iw),
// whose rows are scattered to y at o = i * s - p + tap (dropped outside y). The per-phase
// kernels re-gather x once per phase (= tap) with N = Cout; here N runs over (tap, co), so
// one A tile feeds every tap of its N tile, and both operands go to the tensor core by
// descriptor.
//
// A CTA is two warpgroups: BM = kPwBm rows (64 per warpgroup) x BN columns of (tap, co) of
// one group; the packed weight [g][tap][co][cin_pad] is already that K-major B matrix. K
// streams in kPwBkBytes (128-byte) chunks through kPwStages cp.async stages, each operand
// [row][128 B] in the 128-byte swizzle layout (wgmma_desc_sw128); the loader runs
// kPwStages - 1 chunks ahead. TF32 rounds each A chunk in shared
// memory once it lands (the repack rounded the weight). The epilogue stages the tile in
// shared memory and writes whole 16-byte channel vectors, consecutive threads on consecutive
// addresses (in channels_last the taps of one output row segment are adjacent), so each
// warp store covers whole lines; the L2 took 8 requests per 128 bytes when the accumulators
// were stored directly. Every y element is written once, by one thread; no atomics.
#pragma once

#include "launch.h"
#include "smem_attr.h"
#include "tile_common.cuh"
#include "wgmma.cuh"

namespace convt3d {
namespace fwd {

template <Mode MODE, int BN>
struct PwCfg {
  using T = typename ModeTraits<MODE>::T;
  static_assert(MODE != Mode::kTf32x3, "pw: one product per term (bf16, fp16, TF32)");
  static constexpr int BM = kPwBm, NT = 2 * 128, S = kPwStages;
  static constexpr int KRUN = kChunkBytes / int(sizeof(T));  // elements per 16-byte chunk
  static constexpr int PL = kPwBkBytes / kChunkBytes;         // 16-byte chunks per row
  static constexpr int BK = kPwBkBytes / int(sizeof(T));      // elements per stage
  static constexpr int kStageA = BM * kPwBkBytes, kStageB = BN * kPwBkBytes;
  static constexpr int RS = NT / PL;                      // rows one pass of copies covers
  static constexpr int PA = BM / RS, PB = BN / RS;        // copies per thread and stage
  static_assert(PA * RS == BM && PB * RS == BN, "stage split");
  static constexpr int kTables = 32 * BM + 16 * BN;      // row and column tables
  // 2 CTAs per SM up to BN 128 (64 accumulators per thread); BN 256 holds 128.
  static constexpr int kMinBlocks = BN <= 128 ? 2 : 1;
};

// One row of the tile: its x offset (group's channel 0), the y offset of its output corner
// o0 = i * s - p (any channel 0), o0 per axis, and whether every tap lands inside y.
struct alignas(16) PwRow {
  int64_t x, y;
  int o0[3], inside;
};

template <Mode MODE, int BN>
__global__ void __launch_bounds__(PwCfg<MODE, BN>::NT, PwCfg<MODE, BN>::kMinBlocks)
    pw_fwd_kernel(const __grid_constant__ FwdArgs a) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();
#else
  using C = PwCfg<MODE, BN>;
  using T = typename C::T;
  constexpr int BM = C::BM, NT = C::NT, S = C::S, BK = C::BK, PL = C::PL;

  extern __shared__ __align__(128) unsigned char smem[];
  PwRow* s_row = reinterpret_cast<PwRow*>(smem);                   // [BM]
  int64_t* s_yc = reinterpret_cast<int64_t*>(s_row + BM);          // [BN]
  int* s_tap = reinterpret_cast<int*>(s_yc + BN);                  // [BN]
  float* s_bias = reinterpret_cast<float*>(s_tap + BN);            // [BN]
  // Stages at the next 1024-byte boundary (the swizzle pattern's period).
  const uint32_t s0 = smem_addr(smem);
  unsigned char* stages = smem + (((s0 + C::kTables + 1023) & ~1023u) - s0);
  const uint32_t sa = smem_addr(stages);                           // A [S][BM][128 B]
  const uint32_t sb = sa + S * C::kStageA;                         // B [S][BN][128 B]

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;

  // ---- tile: N tile fastest, so the CTAs sharing an A tile run together (A stays in L2).
  // The grid is below 2^31 CTAs (host): FastDiv with the host's magic numbers.
  int nt, mt;
  const int g = FastDiv(a.div_mt).divmod(FastDiv(a.div_nt).divmod(int(blockIdx.x), nt), mt);
  const int64_t m0 = int64_t(mt) * BM;
  const int ncols = a.k[0] * a.k[1] * a.k[2] * a.cout_g;  // N of the GEMM
  const int n0 = nt * BN;

  // ---- row table: row m = (n, id, ih, iw) of x, past M: never loaded or stored.
  if (tid < BM) {
    const int D = a.ax[0].in, H = a.ax[1].in, W = a.ax[2].in;
    const int64_t m = m0 + tid;
    PwRow r;
    if (m < int64_t(a.n) * D * H * W) {
      int i3[3], n;
      if (m <= 0xffffffffLL) {  // 32-bit division is much cheaper
        uint32_t u = static_cast<uint32_t>(m);
        i3[2] = static_cast<int>(u % uint32_t(W));
        u /= uint32_t(W);
        i3[1] = static_cast<int>(u % uint32_t(H));
        u /= uint32_t(H);
        i3[0] = static_cast<int>(u % uint32_t(D));
        n = static_cast<int>(u / uint32_t(D));
      } else {
        int64_t u = m;
        i3[2] = static_cast<int>(u % W);
        u /= W;
        i3[1] = static_cast<int>(u % H);
        u /= H;
        i3[0] = static_cast<int>(u % D);
        n = static_cast<int>(u / D);
      }
      r.x = int64_t(n) * a.xs[0] + int64_t(g) * a.cin_g * a.xs[1] + int64_t(i3[0]) * a.xs[2] +
            int64_t(i3[1]) * a.xs[3] + int64_t(i3[2]) * a.xs[4];
      r.inside = 1;
      r.y = int64_t(n) * a.ys[0];
#pragma unroll
      for (int ax = 0; ax < 3; ++ax) {
        r.o0[ax] = i3[ax] * a.ax[ax].stride - a.pad[ax];
        r.inside &= int(r.o0[ax] >= 0 && r.o0[ax] + a.k[ax] <= a.out[ax]);
        r.y += int64_t(r.o0[ax]) * a.ys[2 + ax];
      }
    } else {
      r.x = -1;
      r.y = 0;
      r.o0[0] = r.o0[1] = r.o0[2] = -(1 << 30);  // no tap brings it inside y
      r.inside = 0;
    }
    s_row[tid] = r;
  }
  // ---- column table: y offset of (tap, co) from an output corner, the tap packed
  // td | th << 8 | tw << 16 (-1 past N), and the bias.
  for (int c = tid; c < BN; c += NT) {
    const int col = n0 + c;
    int tap = -1;
    int64_t yc = 0;
    float bv = 0.f;
    if (col < ncols) {
      const int t = col / a.cout_g, co = col % a.cout_g;
      const int tw = t % a.k[2], th = (t / a.k[2]) % a.k[1], td = t / (a.k[2] * a.k[1]);
      tap = td | (th << 8) | (tw << 16);
      yc = int64_t(g * a.cout_g + co) * a.ys[1] + int64_t(td) * a.ys[2] +
           int64_t(th) * a.ys[3] + int64_t(tw) * a.ys[4];
      if (a.bias != nullptr) {
        bv = to_float(static_cast<const T*>(a.bias)[int64_t(g) * a.cout_g + co]);
      }
    }
    s_yc[c] = yc;
    s_tap[c] = tap;
    s_bias[c] = bv;
  }
  __syncthreads();

  // ---- this thread's copies: rows tid / PL + RS j of A and of B, 16-byte chunk tid % PL (PL
  // consecutive threads read one row's kPwBkBytes). Sources are fixed for the whole K loop.
  // Chunk kc of row r lands at chunk kc ^ (r % 8) of the row (128-byte swizzle); RS is a
  // multiple of 8, so that is the same for every j.
  const T* __restrict__ x = static_cast<const T*>(a.x);
  const T* __restrict__ wp = static_cast<const T*>(a.wp);
  const int kc = tid % PL, r_base = tid / PL;
  const T* a_src[C::PA];
#pragma unroll
  for (int j = 0; j < C::PA; ++j) {
    const int64_t xo = s_row[r_base + C::RS * j].x;
    a_src[j] = xo >= 0 ? x + (xo + kc * C::KRUN) : nullptr;
  }
  const T* b_src[C::PB];
#pragma unroll
  for (int j = 0; j < C::PB; ++j) {
    const int col = n0 + r_base + C::RS * j;
    b_src[j] = col < ncols ? wp + ((int64_t(g) * ncols + col) * a.cin_pad + kc * C::KRUN)
                           : nullptr;
  }
  const int kchunks = (a.cin_g + BK - 1) / BK;
  static_assert(C::RS % 8 == 0, "swizzle phase must not depend on j");
  const int swz = (kc ^ (r_base % 8)) * kChunkBytes;

  // Chunk s (channels s * BK ..) into stage s % S; always commits (maybe an empty group), so
  // the wait counts below hold. Channel tails: cin_g is whole 16-byte chunks (host), so a
  // chunk is all valid or all zero-filled.
  auto issue = [&](int s) {
    if (s < kchunks) {
      const int st = s % S;
      const bool ci_ok = s * BK + kc * C::KRUN < a.cin_g;
#pragma unroll
      for (int j = 0; j < C::PA; ++j) {
        const bool ok = ci_ok & (a_src[j] != nullptr);
        cp_async_16(sa + st * C::kStageA + (r_base + C::RS * j) * kPwBkBytes + swz,
                    ok ? a_src[j] + s * BK : x, ok ? 16 : 0);
      }
#pragma unroll
      for (int j = 0; j < C::PB; ++j) {
        const bool ok = ci_ok & (b_src[j] != nullptr);
        cp_async_16(sb + st * C::kStageB + (r_base + C::RS * j) * kPwBkBytes + swz,
                    ok ? b_src[j] + s * BK : wp, ok ? 16 : 0);
      }
    }
    cp_async_commit();
  };

  float acc[1][BN / 8][4];  // one 64-row wgmma tile per warpgroup
  zero_acc(acc);

  // Descriptors: A of this warpgroup (its 64 rows), B; 8-row groups 1024 bytes apart, a K
  // step (32 bytes) 32 bytes on in the row.
  const int wg = __shfl_sync(0xffffffffu, warp / 4, 0);  // uniform: descriptors stay in UR
  const uint64_t da0 = wgmma_desc_sw128(sa + wg * 64 * kPwBkBytes, 8 * kPwBkBytes);
  const uint64_t db0 = wgmma_desc_sw128(sb, 8 * kPwBkBytes);
#pragma unroll
  for (int s = 0; s < S - 1; ++s) issue(s);
  for (int kt = 0; kt < kchunks; ++kt) {
    cp_async_wait<S - 2>();  // chunk kt landed (this thread's copies)
    const int st = kt % S;
    if constexpr (MODE == Mode::kTf32) {
      // Round this thread's own A chunks to TF32 (the tensor core would truncate them).
#pragma unroll
      for (int j = 0; j < C::PA; ++j) {
        uint4* q = reinterpret_cast<uint4*>(stages + st * C::kStageA +
                                            (r_base + C::RS * j) * kPwBkBytes + swz);
        *q = tf32_round4(*q);
      }
    }
    fence_proxy_async();  // cp.async and stores (generic proxy) -> wgmma reads (async proxy)
    __syncthreads();      // also: every warpgroup retired chunk kt - 1, whose stage refills now
    issue(kt + S - 1);
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < PL / 2; ++ks) {
      wgmma_ss<MODE, BN>(acc[0], da0 + uint64_t((st * C::kStageA + ks * 32) >> 4),
                         db0 + uint64_t((st * C::kStageB + ks * 32) >> 4));
    }
    wgmma_commit();
    wgmma_wait<0>();
  }
  cp_async_wait<0>();
  wgmma_fence_acc(acc);
  __syncthreads();  // the epilogue tile overwrites the stages

  // ---- epilogue: accumulators (+ bias) -> fp32 tile ct [BM][BN + 1] (odd stride) -> y. This
  // thread holds rows 16 (warp % 4) + lane / 4 (+ 8) of its warpgroup and columns
  // 8 j + 2 (lane % 4) (+ 1).
  constexpr int CS = BN + 1;
  float* ct = reinterpret_cast<float*>(stages);
  {
    const int r0 = wg * 64 + (warp % 4) * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int c = 8 * j + 2 * (lane % 4) + e;
        const float bv = s_bias[c];
        ct[r0 * CS + c] = acc[0][j][e] + bv;
        ct[(r0 + 8) * CS + c] = acc[0][j][2 + e] + bv;
      }
    }
  }
  __syncthreads();
  T* __restrict__ y = static_cast<T*>(a.y);
  auto in_y = [&](const PwRow& r, int tap) {  // the element (row, tap) lies inside y
    return r.inside != 0 || ((unsigned(r.o0[0] + (tap & 255)) < unsigned(a.out[0])) &
                             (unsigned(r.o0[1] + ((tap >> 8) & 255)) < unsigned(a.out[1])) &
                             (unsigned(r.o0[2] + (tap >> 16)) < unsigned(a.out[2])));
  };
  constexpr int V = 16 / int(sizeof(T));  // elements per 16-byte store
  if (a.y_vec) {
    // Channels_last, aligned, Cout/g a multiple of V (host): a vector never straddles taps.
    // Consecutive threads take consecutive vectors of a row; a row's taps (tap-major) are
    // adjacent output positions along w, so a warp writes whole lines.
#pragma unroll 2
    for (int i = tid; i < BM * (BN / V); i += NT) {
      const int r = i / (BN / V), c = (i % (BN / V)) * V;
      const int tap = s_tap[c];
      const PwRow& row = s_row[r];
      if (tap < 0 || row.x < 0 || !in_y(row, tap)) continue;
      *reinterpret_cast<uint4*>(y + (row.y + s_yc[c])) = pack16<T>(ct + r * CS + c);
    }
  } else {
    // Any y strides: one element per thread, consecutive threads on consecutive rows.
    for (int i = tid; i < BM * BN; i += NT) {
      const int c = i / BM, r = i % BM;
      const int tap = s_tap[c];
      const PwRow& row = s_row[r];
      if (tap < 0 || row.x < 0 || !in_y(row, tap)) continue;
      y[row.y + s_yc[c]] = from_float<T>(ct[r * CS + c]);
    }
  }
#endif
}

template <Mode MODE, int BN>
cudaError_t launch_pw(const FwdArgs& a, int64_t blocks, cudaStream_t stream) {
  using C = PwCfg<MODE, BN>;
  auto kernel = pw_fwd_kernel<MODE, BN>;
  constexpr int smem = pw_smem_bytes(BN);
  const cudaError_t e = allow_dynamic_smem(kernel, smem);
  if (e != cudaSuccess) return e;
  kernel<<<static_cast<unsigned>(blocks), C::NT, smem, stream>>>(a);
  return cudaGetLastError();
}

}  // namespace fwd
}  // namespace convt3d
