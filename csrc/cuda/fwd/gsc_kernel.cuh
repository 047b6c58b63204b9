// The grouped small-channel forward (gsc_args.h; planned in plan_gsc.cpp): 8 input and 8
// output channels per group, stride 2, dilation 1, one group per mma.sync with M = 16 outputs
// along w of one w phase, N = the group's 8 output channels, K = its 8 input channels of one
// w tap (TF32 m16n8k8) or of two (bf16, fp16 m16n8k16); gsc_prec.cuh holds what differs.
//
// A CTA walks a chain of depth steps (2 output planes each) for one (n, group, 8 output rows,
// 96 output columns). A step's work is 4 (d, h) output phases x 3 windows of 16 w-phase
// positions, each item both w phases and 4 rows; the phases' tap counts differ, so the items
// are spread over the four warps by their MMA counts (gsc_warp_items):
// - the group's weights sit in shared memory for the whole chain, in B-fragment order (one
//   shared load per fragment and tap);
// - x sits in a ring of input planes, position-major ([row][w][8 channels]); each step reads hd
//   planes and needs one new one, loaded into registers while it computes and stored behind
//   it, so one barrier a step;
// - one ldmatrix.x4 loads an A fragment (16 positions x 8 channels x 1 or 2 taps), used by
//   every (output row, tap) pair of the warp's 4 rows that reads that input row;
// - each lane stores its two w phases' outputs as (ow, ow + 1) pairs (NCDHW) or its two
//   channels as pairs (channels_last): in TF32 every store instruction writes whole 32-byte
//   sectors (16-bit channels_last: a group's 8 channels are 16 bytes, half a sector, so with an
//   even number of groups a CTA takes two (G2, `_cl2`), computes each item for both in turn
//   and stores whole sectors; with an odd number the group varies fastest over the CTAs and
//   its neighbour writes the other half meanwhile).
// Suite case 5 NCDHW on an H200: TF32 0.081 ms, bf16 0.051, against 0.217 and 0.138 on the
// densified halo kernels (design doc v58); 0.074 and 0.046 in run CG (v60), channels_last
// 0.079 and 0.054.
#pragma once

#include "gsc_args.h"
#include "gsc_prec.cuh"
#include "mma.cuh"
#include "resident.h"
#include "smem_attr.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace convt3d {
namespace fwd {

// The (row, position) units of one plane a thread loads: KU at most per plane.
template <int KU>
struct GscLoader {
  int goff[KU];       // ih * xs[3] + iw * xs[4] (the planner keeps it in int32)
  uint32_t soff[KU];  // row * row bytes + pos_off(p, 0); a TF32 position's other half: ^ 16
  bool hw_ok[KU], valid[KU];
};

// x planes, raw bits, one 16-byte part per 4 (TF32) or 8 (16-bit) channels: CL reads each part
// as one 16-byte load (channels_last, aligned), otherwise one load per channel, a channel
// stride apart (coalesced along w for NCDHW).
template <Mode MODE, bool CL, int KU>
__device__ __forceinline__ void gsc_load_plane(const GscArgs& a,
                                               const typename GscPrec<MODE>::Elem* xg,
                                               const GscLoader<KU>& L, int id,
                                               uint4 (&v)[KU][GscPrec<MODE>::kPosBytes / 16]) {
  using P = GscPrec<MODE>;
  constexpr int kParts = P::kPosBytes / 16, kRun = 16 / sizeof(typename P::Elem);
  const bool din = id >= 0 && id < a.in[0];
#pragma unroll
  for (int j = 0; j < KU; ++j) {
    const bool ok = din && L.hw_ok[j];
    const auto* src = xg + id * a.xs[2] + L.goff[j];
#pragma unroll
    for (int part = 0; part < kParts; ++part) {
      if constexpr (CL) {
        v[j][part] =
            ok ? __ldg(reinterpret_cast<const uint4*>(src) + part) : make_uint4(0, 0, 0, 0);
      } else {
        uint32_t h[kRun];
#pragma unroll
        for (int c = 0; c < kRun; ++c) h[c] = ok ? ld_bits(src + (part * kRun + c) * a.xs[1]) : 0u;
        v[j][part] = pack_bits16<kRun>(h);
      }
    }
  }
}

// Stores a loaded plane into its ring slot (TF32: rounded, the tensor core truncates).
template <Mode MODE, int KU, int kParts>
__device__ __forceinline__ void gsc_store_plane(uint32_t plane, const GscLoader<KU>& L,
                                                const uint4 (&v)[KU][kParts]) {
  using P = GscPrec<MODE>;
#pragma unroll
  for (int j = 0; j < KU; ++j) {
    if (!L.valid[j]) continue;
#pragma unroll
    for (int part = 0; part < kParts; ++part) {
      asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n"
                   ::"r"(plane + (L.soff[j] ^ (part << 4))), "r"(P::operand(v[j][part].x)),
                   "r"(P::operand(v[j][part].y)), "r"(P::operand(v[j][part].z)),
                   "r"(P::operand(v[j][part].w)));
    }
  }
}

// G2 (16-bit channels_last, two groups per CTA): both groups' 16-byte channel runs of each
// unit, adjacent in x, copied by cp.async straight into the groups' rings (16 bits need no
// rounding, and no registers stay held over the step); one commit group per plane.
template <typename T, int KU>
__device__ __forceinline__ void gsc_copy_plane2(const GscArgs& a, const T* xg,
                                                const GscLoader<KU>& L, int id, uint32_t plane,
                                                uint32_t gx) {
  const bool din = id >= 0 && id < a.in[0];
#pragma unroll
  for (int j = 0; j < KU; ++j) {
    if (!L.valid[j]) continue;
    const bool ok = din && L.hw_ok[j];
    const T* src = ok ? xg + (id * a.xs[2] + L.goff[j]) : xg;  // not read when !ok
#pragma unroll
    for (int grp = 0; grp < 2; ++grp) {
      cp_async_16(plane + grp * gx + L.soff[j], src + (ok ? grp * kGscC : 0), ok ? 16 : 0);
    }
  }
  cp_async_commit();
}

// Two 16-bit outputs packed as one word (lo first), stored evict-first (y is written once and
// never reread, so its lines leave L2 first and x's planes, which neighbouring CTAs read again,
// stay) where y allows a word store, else as two halves one element apart.
template <typename T>
__device__ __forceinline__ void gsc_store_word(T* dst, bool vec, uint32_t w) {
  if (vec) {
    asm volatile("st.global.cs.b32 [%0], %1;\n" ::"l"(dst), "r"(w));
  } else {
    reinterpret_cast<unsigned short*>(dst)[0] = static_cast<unsigned short>(w & 0xffffu);
    reinterpret_cast<unsigned short*>(dst)[1] = static_cast<unsigned short>(w >> 16);
  }
}

// Accumulator columns (2 h2, 2 h2 + 1) of one C fragment as a packed 16-bit pair.
template <typename T>
__device__ __forceinline__ uint32_t gsc_pack(const float (&c)[4], int h2) {
  return pack_pair(from_float<T>(c[2 * h2]), from_float<T>(c[2 * h2 + 1]));
}

// Two outputs: adjacent in w (NCDHW: the two w phases of one channel) or in channels
// (channels_last: two channels of one position); one store where y's strides allow it. The
// fp32 pair is spelled in PTX: from C++ (a float2 store) NVVM split it into two 4-byte
// stores once it merged the branches, so every sector was written twice (design doc v58).
template <typename T>
__device__ __forceinline__ void gsc_store2(T* dst, int step, bool vec, bool second, float v0,
                                           float v1) {
  if (vec) {
    // evict-first, as gsc_store_word
    if constexpr (sizeof(T) == 4) {
      asm volatile("st.global.cs.v2.f32 [%0], {%1, %2};\n" ::"l"(dst), "f"(v0), "f"(v1));
    } else {
      gsc_store_word(dst, true, pack_pair(from_float<T>(v0), from_float<T>(v1)));
    }
  } else {
    dst[0] = from_float<T>(v0);
    if (second) dst[step] = from_float<T>(v1);
  }
}

// One window's outputs of a warp: 4 rows x 16 w-phase positions x both w phases x the group's 8
// channels, this lane's 2 channels. FULL: all inside y and stored in pairs (no checks).
template <bool CL, bool FULL, typename T>
__device__ __forceinline__ void gsc_epilogue(const GscArgs& a, T* yg, int od, int oh_f, int jb,
                                             int mt, int wq, bool vec,
                                             const float (&acc)[kGscRows][2][4]) {
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  // offsets within a plane in int32 (the planner checks they fit), the plane's in 64 bits
  T* yplane = yg + od * a.ys[2];
  const int ys1 = static_cast<int>(a.ys[1]), ys3 = static_cast<int>(a.ys[3]);
  const int ys4 = static_cast<int>(a.ys[4]);
#pragma unroll
  for (int k = 0; k < kGscRows; ++k) {
    const int oh = oh_f + 2 * k;
    if (!FULL && oh >= a.out[1]) continue;
    T* yrow = yplane + (oh * ys3 + 2 * tq * ys1);
#pragma unroll
    for (int h2 = 0; h2 < 2; ++h2) {
      const int j = 16 * mt + gq + 8 * h2;  // w-phase position in the block
      if (!FULL && j >= wq) continue;
      const int ow = 2 * (jb + j);
      if constexpr (CL) {
        // channels 2 tq, 2 tq + 1 of positions ow (even phase) and ow + 1 (odd)
#pragma unroll
        for (int pw = 0; pw < 2; ++pw) {
          if (!FULL && ow + pw >= a.out[2]) continue;
          gsc_store2(yrow + (ow + pw) * ys4, ys1, FULL || vec, true, acc[k][pw][2 * h2],
                     acc[k][pw][2 * h2 + 1]);
        }
      } else {
        // positions ow, ow + 1 of channels 2 tq and 2 tq + 1
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          const bool both = FULL || ow + 1 < a.out[2];
          gsc_store2(yrow + (c * ys1 + ow * ys4), ys4, FULL || (vec && both), both,
                     acc[k][0][2 * h2 + c], acc[k][1][2 * h2 + c]);
        }
      }
    }
  }
}

// G2's epilogue (16-bit channels_last, y's channel stride 1): a position's 16 channels of the
// CTA's two groups are one 32-byte sector, so lanes gq and gq ^ 1 trade words (one shuffle):
// the even lane then holds group 0's pair at both positions, the odd lane group 1's, and each
// store instruction writes 4 whole sectors where one group's stores wrote 8 halves (twice the
// L2 sector writes of NCDHW, design doc v60).
template <bool FULL, typename T>
__device__ __forceinline__ void gsc_epilogue_g2(const GscArgs& a, T* yg, int od, int oh_f, int jb,
                                                int mt, int wq, bool vec,
                                                const uint32_t (&held)[kGscRows][2][2],
                                                const float (&acc)[kGscRows][2][4]) {
  const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3, odd = gq & 1;
  T* yplane = yg + od * a.ys[2];
  const int ys3 = static_cast<int>(a.ys[3]), ys4 = static_cast<int>(a.ys[4]);
#pragma unroll
  for (int k = 0; k < kGscRows; ++k) {
    const int oh = oh_f + 2 * k;
    if (!FULL && oh >= a.out[1]) continue;  // the same in every lane: the shuffles stay whole
    T* yrow = yplane + (oh * ys3 + 2 * tq + odd * kGscC);
#pragma unroll
    for (int h2 = 0; h2 < 2; ++h2) {
      const int je = 16 * mt + gq - odd + 8 * h2;  // the pair's even position
#pragma unroll
      for (int pw = 0; pw < 2; ++pw) {
        const uint32_t w0 = held[k][pw][h2];
        const uint32_t w1 = gsc_pack<T>(acc[k][pw], h2);
        const uint32_t r = __shfl_xor_sync(0xffffffffu, odd ? w0 : w1, 4);
#pragma unroll
        for (int t = 0; t < 2; ++t) {
          const int j = je + t, ow = 2 * (jb + j) + pw;
          if (!FULL && (j >= wq || ow >= a.out[2])) continue;
          gsc_store_word(yrow + ow * ys4, FULL || vec, t == 0 ? (odd ? r : w0) : (odd ? w1 : r));
        }
      }
    }
  }
}

// One (output phase, window) item of a step: output planes od = 2 s + pd and rows oh0 + ph + 2 k,
// whose first taps are TD0 = (pd + pad_d) & 1 and TH0 = (ph + pad_h) & 1 (od0, oh0 are even),
// and TW0 = pad_w & 1 that of the even w phase; window mt's 16 w-phase positions of both w
// phases. G2: the same item for the CTA's two groups in turn (their rings gx bytes apart, their
// weights gw), group 0's outputs held packed until group 1's are done.
template <Mode MODE, int KD, int KH, int KW, bool CL, bool G2, int TD0, int TH0, int TW0>
__device__ __forceinline__ void gsc_item(const GscArgs& a, uint32_t xs, uint32_t ws, uint32_t gx,
                                         uint32_t gw, int s, int slot0, int pd, int ph, int mt,
                                         int oh0, int ih_lo, int jb,
                                         typename GscPrec<MODE>::Elem* yg,
                                         const float (&bias)[2][2]) {
  using P = GscPrec<MODE>;
  using T = typename P::Elem;
  static_assert(!G2 || (CL && sizeof(T) == 2), "two groups per CTA: 16-bit channels_last");
  constexpr int TDp = (KD - TD0 + 1) / 2, THp = (KH - TH0 + 1) / 2;
  constexpr int TW1 = 1 - TW0;
  constexpr int TWp0 = (KW - TW0 + 1) / 2, TWp1 = (KW - TW1 + 1) / 2;
  // K steps of the larger w phase
  constexpr int kSteps = ((KW + 1) / 2 + P::kTapsPerStep - 1) / P::kTapsPerStep;
  // a compile-time row stride makes every row step an immediate offset (a run-time one kept
  // ~84 hoisted addresses live and spilled, design doc v57)
  constexpr int kRow = gsc_row_positions(KW) * P::kPosBytes;
  constexpr int kWindow = 16 * P::kPosBytes;
  const int lane = threadIdx.x & 31;
  const int oh_f = oh0 + ph;
  const int q0h = (oh_f + a.pad[1] - TH0) >> 1;
  const int plane_bytes = a.hh * kRow;
  const int ring = a.hd + 1;
  // this lane's ldmatrix row: matrices 0, 1 hold positions 0-7, 8-15; lsel picks 2, 3's part
  const int lrow = (lane & 7) + ((lane >> 3) & 1) * 8, lsel = lane >> 4;
  int off[2][kSteps];
#pragma unroll
  for (int pw = 0; pw < 2; ++pw) {
    const int cwb = (pw + a.pad[2] - (pw ? TW1 : TW0)) >> 1;
#pragma unroll
    for (int st = 0; st < kSteps; ++st) {
      const int t = P::lane_tap(st, lsel, pw ? TWp1 : TWp0);
      off[pw][st] = P::pos_off(lrow + cwb - t - a.cw_min, lsel) + (q0h - ih_lo) * kRow;
    }
  }
  const int od = 2 * s + pd;
  if (od >= a.out[0]) return;  // an odd depth's last step has one plane
  // tap m's plane is the step's r-th, r = q0d - m - (id_base + s - s0), the same in every step
  // (q0d - s and id_base - s0 are constants); its slot is slot0 + r, the ring being hd + 1
  // planes and r < hd: one conditional subtraction (a `% ring` was an integer division)
  const int r0 = ((pd + a.pad[0] - TD0) >> 1) - gsc_floor2(a.pad[0] - (KD - 1));
  uint32_t pbase[TDp];
#pragma unroll
  for (int m = 0; m < TDp; ++m) {
    int slot = slot0 + r0 - m;
    slot -= slot >= ring ? ring : 0;
    pbase[m] = xs + slot * plane_bytes;
  }
  float acc[kGscRows][2][4];
  uint32_t held[kGscRows][2][2];  // G2: group 0's outputs, (k, pw, h2) pairs
#pragma unroll
  for (int grp = 0; grp < (G2 ? 2 : 1); ++grp) {
    // the bias is the accumulators' start (the C fragment's columns 2 tq, 2 tq + 1)
#pragma unroll
    for (int k = 0; k < kGscRows; ++k)
#pragma unroll
      for (int pw = 0; pw < 2; ++pw)
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[k][pw][c] = bias[grp][c & 1];
    const uint32_t xg = grp * gx, wg = ws + grp * gw;
#pragma unroll
    for (int pw = 0; pw < 2; ++pw) {
#pragma unroll
      for (int st = 0; st < kSteps; ++st) {
        const int twp = pw ? TWp1 : TWp0;
        if (st * P::kTapsPerStep >= twp) break;
        const bool two = st * P::kTapsPerStep + 1 < twp;
        const int kw = (pw ? TW1 : TW0) + 2 * P::kTapsPerStep * st;
        uint32_t b[TDp][THp][2];
#pragma unroll
        for (int m = 0; m < TDp; ++m)
#pragma unroll
          for (int nn = 0; nn < THp; ++nn)
            P::load_b(wg, ((TD0 + 2 * m) * KH + (TH0 + 2 * nn)) * KW + kw, lane, two, b[m][nn]);
        // input row uh of tap m's plane feeds output row k through tap nn = k - uh
#pragma unroll
        for (int m = 0; m < TDp; ++m)
#pragma unroll
          for (int uh = -(THp - 1); uh < kGscRows; ++uh) {
            uint32_t af[4];
            ldmatrix_x4(af, pbase[m] + xg + mt * kWindow + uh * kRow + off[pw][st]);
#pragma unroll
            for (int k = 0; k < kGscRows; ++k) {
              const int nn = k - uh;
              if (nn < 0 || nn >= THp) continue;
              P::mma(acc[k][pw], af, b[m][nn]);
            }
          }
      }
    }
    if constexpr (G2) {
      if (grp == 0) {
#pragma unroll
        for (int k = 0; k < kGscRows; ++k)
#pragma unroll
          for (int pw = 0; pw < 2; ++pw)
#pragma unroll
            for (int h2 = 0; h2 < 2; ++h2)
              held[k][pw][h2] = gsc_pack<T>(acc[k][pw], h2);
      }
    }
  }
  // the window's 16 positions and the warp's 4 rows all inside y, and pair stores: no
  // per-store checks (every window of suite case 5)
  const int wq = (a.out[2] + 1) / 2 - jb;  // the block's w-phase positions, at most 48
  const bool vec = a.y_vec != 0;
  const bool full = vec && 16 * mt + 16 <= wq && 2 * (jb + 16 * mt) + 32 <= a.out[2] &&
                    oh_f + 2 * (kGscRows - 1) < a.out[1];
  if constexpr (G2) {
    if (full) {
      gsc_epilogue_g2<true>(a, yg, od, oh_f, jb, mt, wq, true, held, acc);
    } else {
      gsc_epilogue_g2<false>(a, yg, od, oh_f, jb, mt, wq, vec, held, acc);
    }
  } else if (full) {
    gsc_epilogue<CL, true>(a, yg, od, oh_f, jb, mt, wq, true, acc);
  } else {
    gsc_epilogue<CL, false>(a, yg, od, oh_f, jb, mt, wq, vec, acc);
  }
}

// The items (output phase p = 2 pd + ph, window mt) of a step, as bit 3 p + mt of a warp's mask,
// spread over the four warps by longest-first greedy on their MMA counts (the phases' tap
// counts differ: suite case 5's are 6, 4, 3 and 2 (d, h) tap pairs, so one phase per warp left
// the other warps waiting at each step's barrier for the 6-pair one). Every thread computes the
// same masks.
__device__ __forceinline__ uint32_t gsc_warp_items(const GscArgs& a, int nwin, int warp) {
  int work[4];
  for (int p = 0; p < 4; ++p) {
    const int td0 = ((p >> 1) + a.pad[0]) & 1, th0 = ((p & 1) + a.pad[1]) & 1;
    work[p] = ((a.k[0] - td0 + 1) / 2) * ((a.k[1] - th0 + 1) / 2);
  }
  int load[4] = {0, 0, 0, 0};
  uint32_t mine = 0, done = 0;
  for (int n = 0; n < 4; ++n) {
    int p = -1;  // the heaviest phase not yet placed (the lowest index on ties)
    for (int q = 0; q < 4; ++q) {
      if (!(done >> q & 1) && (p < 0 || work[q] > work[p])) p = q;
    }
    done |= 1u << p;
    for (int mt = 0; mt < nwin; ++mt) {
      int w = 0;
      for (int q = 1; q < 4; ++q) w = load[q] < load[w] ? q : w;
      load[w] += work[p];
      if (w == warp) mine |= 1u << (3 * p + mt);
    }
  }
  return mine;
}

// One warp's chain of depth steps: its items of each step, the next plane loaded meanwhile
// (into registers and stored behind the items; G2: by cp.async into its free slot, which no
// warp reads in this step, waited for at the step's end).
template <Mode MODE, int KD, int KH, int KW, bool CL, bool G2, int KU>
__device__ __forceinline__ void gsc_warp_chain(const GscArgs& a, uint32_t xs, uint32_t ws,
                                               uint32_t gx, uint32_t gw, int s0, int s1,
                                               int id_base, int oh0, int ih_lo, int jb,
                                               typename GscPrec<MODE>::Elem* yg,
                                               const float (&bias)[2][2],
                                               const typename GscPrec<MODE>::Elem* xg,
                                               const GscLoader<KU>& L) {
  using P = GscPrec<MODE>;
  constexpr int kRow = gsc_row_positions(KW) * P::kPosBytes;
  const int plane_bytes = a.hh * kRow;
  const int ring = a.hd + 1;
  const int wq = (a.out[2] + 1) / 2 - jb;  // this block's w-phase positions, at most 48
  const int nwin = min(kGscWindows, (wq + 15) / 16);
  const uint32_t items = gsc_warp_items(a, nwin, threadIdx.x >> 5);
  // slot0: the ring slot of the step's first plane, id_base + s - s0
  for (int s = s0, slot0 = 0; s < s1; ++s, slot0 = slot0 + 1 == ring ? 0 : slot0 + 1) {
    const bool pf = s + 1 < s1;
    uint4 v[G2 ? 1 : KU][P::kPosBytes / 16];
    if constexpr (G2) {  // into the new plane's slot (below)
      if (pf) {
        gsc_copy_plane2(a, xg, L, id_base + (s - s0) + a.hd,
                        xs + (slot0 ? slot0 - 1 : a.hd) * plane_bytes, gx);
      }
    } else {
      if (pf) gsc_load_plane<MODE, CL>(a, xg, L, id_base + (s - s0) + a.hd, v);
    }
    for (uint32_t m = items; m != 0; m &= m - 1) {
      const int it = __ffs(m) - 1, p = it / 3, mt = it - 3 * p;
      const int pd = p >> 1, ph = p & 1;
      const int sel = (((pd + a.pad[0]) & 1) << 2) | (((ph + a.pad[1]) & 1) << 1) | (a.pad[2] & 1);
#define CONVT3D_GSC_CASE(S)                                                                     \
  case S:                                                                                       \
    gsc_item<MODE, KD, KH, KW, CL, G2, (S >> 2) & 1, (S >> 1) & 1, S & 1>(                      \
        a, xs, ws, gx, gw, s, slot0, pd, ph, mt, oh0, ih_lo, jb, yg, bias);                     \
    break;
      switch (sel) {
        CONVT3D_GSC_CASE(0) CONVT3D_GSC_CASE(1) CONVT3D_GSC_CASE(2) CONVT3D_GSC_CASE(3)
        CONVT3D_GSC_CASE(4) CONVT3D_GSC_CASE(5) CONVT3D_GSC_CASE(6) CONVT3D_GSC_CASE(7)
      }
#undef CONVT3D_GSC_CASE
    }
    // the new plane's slot, (slot0 + hd) % ring, held plane id_base + (s - s0) - 1, which no
    // warp reads in step s
    if constexpr (G2) {
      cp_async_wait_all();
    } else {
      if (pf) gsc_store_plane<MODE>(xs + (slot0 ? slot0 - 1 : a.hd) * plane_bytes, L, v);
    }
    __syncthreads();
  }
}

// The group's weights in B-fragment order (GscPrec::weight_word), 8 words in flight per thread.
// A thread's words are one (co, ci) at every kTapStep-th tap (the CTA's threads are whole taps'
// words), so its source offsets step by tap alone, in int32 (the planner checks w fits); a
// contiguous w steps by one element per tap. The stores are conflict-free; the gathers hit L1.
template <Mode MODE, int KD, int KH, int KW>
__device__ __forceinline__ void gsc_stage_weights(const GscArgs& a, int g, uint32_t* wsp) {
  using P = GscPrec<MODE>;
  using T = typename P::Elem;
  constexpr int kE = 4 / sizeof(T);  // elements per word (consecutive input channels)
  constexpr int kTaps = KD * KH * KW, kBatch = 8;
  constexpr int kTapStep = kGscThreads / P::kTapWords;
  static_assert(kGscThreads % P::kTapWords == 0, "a thread's words share (co, ci)");
  int tap0, co, ci;
  P::weight_word(threadIdx.x, tap0, co, ci);
  const int ws0 = static_cast<int>(a.ws[0]), ws2 = static_cast<int>(a.ws[2]);
  const int ws3 = static_cast<int>(a.ws[3]), ws4 = static_cast<int>(a.ws[4]);
  const bool contiguous = ws4 == 1 && ws3 == KW && ws2 == KH * KW;
  const T* src = static_cast<const T*>(a.w) + int64_t(g) * kGscC * a.ws[0] +
                 (ci * ws0 + co * static_cast<int>(a.ws[1]));
  uint32_t* dst = wsp + threadIdx.x % P::kTapWords;
  for (int t0 = tap0; t0 < kTaps; t0 += kBatch * kTapStep) {
    uint32_t bits[kBatch][kE];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int tap = t0 + u * kTapStep;
      const int off = contiguous ? tap
                                 : tap / (KH * KW) * ws2 + tap / KW % KH * ws3 + tap % KW * ws4;
#pragma unroll
      for (int e = 0; e < kE; ++e) bits[u][e] = tap < kTaps ? ld_bits(src + (off + e * ws0)) : 0u;
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const int tap = t0 + u * kTapStep;
      if (tap < kTaps) dst[tap * P::kTapWords] = P::pack_weight(bits[u]);
    }
  }
}

// Grid: one CTA per (n, h tile, w block, run of `chunk` depth steps, group), the last fastest;
// G2: per pair of groups (g, g + 1), each with its weights and ring.
template <Mode MODE, int KD, int KH, int KW, bool CL, bool G2>
__global__ void __launch_bounds__(kGscThreads, 3) gsc_fwd_kernel(const GscArgs a) {
  using P = GscPrec<MODE>;
  using T = typename P::Elem;
  constexpr int kG = G2 ? 2 : 1;
  constexpr int kRow = gsc_row_positions(KW) * P::kPosBytes;
  constexpr int rowp = gsc_row_positions(KW);
  constexpr int KU = (gsc_max_plane_rows(KH) * rowp + kGscThreads - 1) / kGscThreads;
  constexpr uint32_t gw = gsc_weight_bytes(sizeof(T) == 2, KD * KH * KW);  // as the host sizes it
  extern __shared__ __align__(16) unsigned char smem[];
  const uint32_t ws = smem_addr(smem);
  const uint32_t xs = ws + kG * gw;
  // the group varies fastest: neighbouring groups' CTAs run side by side, so the halves of a
  // 16-bit channels_last sector (a group's 8 channels are 16 bytes) are read and written
  // close together in time
  int bid = blockIdx.x;
  const int cta_groups = a.groups / kG;
  const int g = bid % cta_groups * kG;
  bid /= cta_groups;
  const int chunk = bid % a.nchunks;
  bid /= a.nchunks;
  const int tw = bid % a.tiles_w;
  bid /= a.tiles_w;
  const int th = bid % a.tiles_h;
  const int n = bid / a.tiles_h;
  const int s0 = chunk * a.chunk, s1 = min(a.nsteps, s0 + a.chunk);
  if (s0 >= s1) return;
  const int oh0 = th * 2 * kGscRows, jb = tw * 16 * kGscWindows;
  const int ih_lo = gsc_floor2(oh0 + a.pad[1] - (KH - 1));
  const int id_base = gsc_floor2(2 * s0 + a.pad[0] - (KD - 1));
#pragma unroll
  for (int grp = 0; grp < kG; ++grp) {
    gsc_stage_weights<MODE, KD, KH, KW>(a, g + grp, reinterpret_cast<uint32_t*>(smem + grp * gw));
  }
  const T* xg = static_cast<const T*>(a.x) + n * a.xs[0] + int64_t(g) * kGscC * a.xs[1];
  GscLoader<KU> L;
  const int units = a.hh * rowp;
#pragma unroll
  for (int j = 0; j < KU; ++j) {
    const int u = threadIdx.x + kGscThreads * j, row = u / rowp, p = u % rowp;
    const int ih = ih_lo + row, iw = jb + p + a.cw_min;
    L.valid[j] = u < units;
    L.hw_ok[j] = u < units && ih >= 0 && ih < a.in[1] && iw >= 0 && iw < a.in[2];
    L.goff[j] = static_cast<int>(ih * a.xs[3] + iw * a.xs[4]);
    L.soff[j] = row * kRow + P::pos_off(p, 0);
  }
  const int plane_bytes = a.hh * kRow;
  const uint32_t gx = (a.hd + 1) * plane_bytes;  // a group's ring bytes
  for (int q = 0; q < a.hd; ++q) {
    if constexpr (G2) {
      gsc_copy_plane2(a, xg, L, id_base + q, xs + q * plane_bytes, gx);
    } else {
      uint4 v[KU][P::kPosBytes / 16];
      gsc_load_plane<MODE, CL>(a, xg, L, id_base + q, v);
      gsc_store_plane<MODE>(xs + q * plane_bytes, L, v);
    }
  }
  if constexpr (G2) cp_async_wait_all();
  __syncthreads();
  const int tq = threadIdx.x & 3;
  T* yg = static_cast<T*>(a.y) + n * a.ys[0] + int64_t(g) * kGscC * a.ys[1];
  const T* bias = static_cast<const T*>(a.bias);
  float bv[2][2] = {};
#pragma unroll
  for (int grp = 0; grp < kG; ++grp) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      bv[grp][c] = bias ? to_float(bias[(g + grp) * kGscC + 2 * tq + c]) : 0.f;
    }
  }
  gsc_warp_chain<MODE, KD, KH, KW, CL, G2, KU>(a, xs, ws, gx, gw, s0, s1, id_base, oh0, ih_lo,
                                               jb, yg, bv, xg, L);
}

// Splits each chain's depth steps into as many runs as fill every resident CTA slot once (no
// second wave; each run stages its weights and first planes once), then launches.
template <Mode MODE, int KD, int KH, int KW, bool CL, bool G2>
cudaError_t launch_gsc(const GscArgs& args, cudaStream_t stream) {
  GscArgs a = args;
  auto* kernel = gsc_fwd_kernel<MODE, KD, KH, KW, CL, G2>;
  cudaError_t e = allow_dynamic_smem(kernel, a.smem_bytes);
  if (e != cudaSuccess) return e;
  int slots = 0;
  e = resident_ctas(reinterpret_cast<const void*>(kernel), kGscThreads, a.smem_bytes, &slots);
  if (e != cudaSuccess) return e;
  const int64_t chains = int64_t(a.n) * (a.groups / (G2 ? 2 : 1)) * a.tiles_h * a.tiles_w;
  int64_t runs = slots / chains;
  runs = runs < 1 ? 1 : (runs > a.nsteps ? a.nsteps : runs);
  a.chunk = static_cast<int>((a.nsteps + runs - 1) / runs);
  a.nchunks = (a.nsteps + a.chunk - 1) / a.chunk;
  const int64_t grid = chains * a.nchunks;
  if (grid > 0x7fffffff) return cudaErrorInvalidValue;
  kernel<<<static_cast<unsigned>(grid), kGscThreads, a.smem_bytes, stream>>>(a);
  return cudaGetLastError();
}

// Both loaders of one (mode, kernel size), for inst_gsc_*.cu; 16-bit modes also the
// channels_last kernel with two groups per CTA.
#define CONVT3D_FWD_INSTANTIATE_GSC_K(MODE, KD, KH, KW)                                        \
  template cudaError_t launch_gsc<MODE, KD, KH, KW, false, false>(const GscArgs&, cudaStream_t); \
  template cudaError_t launch_gsc<MODE, KD, KH, KW, true, false>(const GscArgs&, cudaStream_t);
#define CONVT3D_FWD_INSTANTIATE_GSC_K_H16(MODE, KD, KH, KW) \
  CONVT3D_FWD_INSTANTIATE_GSC_K(MODE, KD, KH, KW)           \
  template cudaError_t launch_gsc<MODE, KD, KH, KW, true, true>(const GscArgs&, cudaStream_t);

}  // namespace fwd
}  // namespace convt3d
