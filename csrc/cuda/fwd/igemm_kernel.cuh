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
// Shared memory: a row table (per tile row: x and y offsets and q), the pipeline stages of
// A [BM][64 B] and B [BN][64 B] (rows padded to 80 B for conflict-free ldmatrix), and the
// epilogue tile [BM][BN+1] fp32, which reuses the pipeline bytes. With the channel-fast loader
// both operands travel by cp.async through kIgemmStages stages; the scalar loader stages A
// through registers with two stages.
#pragma once

#include "launch.h"
#include "smem_attr.h"
#include "tile_common.cuh"

namespace convt3d {
namespace fwd {

template <Mode MODE, int BN>
using IgemmGrid = WarpGrid<BN, igemm_tile(MODE, BN).bm, igemm_tile(MODE, BN).warps_m,
                           igemm_tile(MODE, BN).warps_n>;

template <Mode MODE, int BN, bool KVEC>
struct IgemmCfg : IgemmGrid<MODE, BN> {
  static_assert(igemm_tile(MODE, BN).bn == BN, "BN missing from kTileConfigs");
  using IgemmGrid<MODE, BN>::BM;
  using IgemmGrid<MODE, BN>::NT;
  using T = typename ModeTraits<MODE>::T;
  static constexpr int kElem = sizeof(T);
  static constexpr int KRUN = kChunkBytes / kElem;  // elements per 16-byte chunk
  static constexpr int BK = kBkBytes / kElem;       // elements per stage
  static constexpr int PA = BM * kChunks / NT;      // A chunks per thread per stage
  static_assert(PA * NT == BM * kChunks, "A tile must split evenly over the threads");
  static constexpr int PB = (BN * kChunks + NT - 1) / NT;  // B chunks per thread (some idle)
  static constexpr int kRowInfoBytes = BM * 32;
  static constexpr int kStageA = BM * kRowBytes, kStageB = BN * kRowBytes;
  static constexpr int S = KVEC ? kIgemmStages : 2;  // pipeline stages
  static constexpr int kPipeBytes = S * (kStageA + kStageB);
  // The scalar loader's CTAs are latency-bound (ncu, suite case 6 bf16 NCDHW: 2 CTAs per SM by
  // 117 registers, 0.44 instructions issued per cycle, long-scoreboard stalls first). Narrow
  // tiles take three CTAs per SM (<= 80 registers). H100 A/B with the FastDiv row table and
  // tile_coord, case 6 NCDHW: bf16 1.20 -> 0.97 ms, TF32 1.49 -> 1.37 (before them TF32
  // spilled 44 B at this cap and lost). 3xTF32 would spill 188 B, so it keeps two.
  static constexpr int kMinBlocks = (!KVEC && BN <= 32 && MODE != Mode::kTf32x3)
                                        ? 3
                                        : IgemmGrid<MODE, BN>::kMinBlocks;
  // store_tile's tile is BM x BN floats, sized as when its rows were padded to BN + 1, so no
  // plan changed when it became swizzled
  static constexpr int kEpiBytes = BM * (BN + 1) * 4;
  static constexpr int kSmemBytes =
      kRowInfoBytes + (kPipeBytes > kEpiBytes ? kPipeBytes : kEpiBytes);
};

struct alignas(16) RowInfo {
  int64_t xoff;  // x offset of (n, group's first channel, q) — add the tap offset
  int64_t yoff;  // y offset of (n, group's first channel, r + s*q); -1: row past M, not stored
  int qd, qh, qw, pad;
};

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
  auto stage_b = [&](int buf) { return pipe + C::S * C::kStageA + buf * C::kStageB; };

  const int tid = threadIdx.x;

  // ---- which tile (tile_coord).
  const TileCoord tc = MODE == Mode::kTf32x3 ? tile_coord_wide(a) : tile_coord(a);
  if (phase_prefilled(a, tc)) return;
  const int nt = tc.nt, mt = tc.mt, g = tc.g, rd = tc.rd, rh = tc.rh, rw = tc.rw;
  const int sw = a.ax[2].stride, sh = a.ax[1].stride;
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
      if (m < 0x7fffffffLL) {  // FastDiv with the host's magic numbers (phases.h)
        int u = static_cast<int>(m);
        u = FastDiv(a.ax[2].qdiv[rw]).divmod(u, qw);
        u = FastDiv(a.ax[1].qdiv[rh]).divmod(u, qh);
        n = FastDiv(a.ax[0].qdiv[rd]).divmod(u, qd);
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
      ri.xoff = 0;
      ri.yoff = -1;
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
        areg[j] = pack_bits16<KRUN>(v);
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
  zero_acc(acc);

  const int warp = tid / 32, lane = tid % 32;
  const int wm = warp % C::WM, wn = warp / C::WM;

  // Fragment addresses (layout in tile_common.cuh's warp_mma_stage).
  const uint32_t a_off = (wm * C::TM + (lane % 16)) * kRowBytes + (lane / 16) * kChunkBytes;
  const uint32_t b_off =
      (wn * C::TN + (lane % 8) + (lane / 16) * 8) * kRowBytes + ((lane / 8) % 2) * kChunkBytes;

  auto compute_stage = [&](int buf) {
    const uint32_t a_base = smem_addr(stage_a(buf)) + a_off;
    uint32_t a_addr[MT];
#pragma unroll
    for (int i = 0; i < MT; ++i) a_addr[i] = a_base + i * 16 * kRowBytes;
    warp_mma_stage<MODE, MT, NTL, true>(acc, a_addr, smem_addr(stage_b(buf)) + b_off);
  };

  if (iters > 0) {
    KIter it{0, 0, 0, 0};
    if constexpr (KVEC) {
      // Multistage: stage i waits for its own group (S - 2 younger ones may still fly), the
      // barrier publishes it and frees buffer (i-1) % S, which then takes stage i+S-1.
#pragma unroll
      for (int s = 0; s < C::S - 1; ++s) {
        if (s < iters) {
          load_stage(s, it);
          advance(it);
        }
        cp_async_commit();
      }
      for (int i = 0; i < iters; ++i) {
        cp_async_wait<C::S - 2>();
        __syncthreads();
        if (i + C::S - 1 < iters) {
          load_stage((i + C::S - 1) % C::S, it);
          advance(it);
        }
        cp_async_commit();
        compute_stage(i % C::S);
      }
      __syncthreads();  // the epilogue tile reuses the stages
    } else {
      // Two stages, one barrier per stage. Stage i+1's reads are in flight (in registers)
      // while stage i multiplies; buffer i+1 was last read in iteration i-1, before its
      // closing barrier.
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
  }

  // ---- epilogue: accumulators (+ bias) -> smem tile -> coalesced global writes.
  static_assert(sizeof(RowInfo) == 32, "store_tile walks yoff 4 int64 apart");
  store_tile<C, T>(acc, reinterpret_cast<float*>(pipe), &rows[0].yoff, 4, a, g, n0, wm, wn);
#endif
}

// Launchers, declared in launch.h and instantiated in inst_*.cu. They return the launch status.
template <Mode MODE, int BN, bool KVEC>
cudaError_t launch_igemm(const FwdArgs& a, int64_t blocks, cudaStream_t stream) {
  if constexpr (BN > max_bn(MODE)) {
    return cudaErrorInvalidValue;  // not a configuration of this mode; no kernel compiled
  } else {
    using C = IgemmCfg<MODE, BN, KVEC>;
    auto kernel = igemm_fwd_kernel<MODE, BN, KVEC>;
    const cudaError_t e = allow_dynamic_smem(kernel, C::kSmemBytes);
    if (e != cudaSuccess) return e;
    kernel<<<static_cast<unsigned>(blocks), C::NT, C::kSmemBytes, stream>>>(a);
    return cudaGetLastError();
  }
}

}  // namespace fwd
}  // namespace convt3d
