// Stride-phase planning for the implicit-GEMM forward, shared by host (planning) and device
// (reading the plan). Torch-free so the kernel translation units stay light.
//
// Along one axis with stride s, pad p, dilation d and kernel k, output o, input i and tap t
// meet when o = i*s - p + t*d. Split the outputs by phase r in [0, s): o = r + s*q. For phase r
// the valid taps are T_r = {t : (r + p - t*d) mod s == 0}; for those, i = q + c_t with
// c_t = (r + p - t*d) / s exact. T_r is an arithmetic progression: with g = gcd(s, d) the taps
// are t0 + j*(s/g) and the offsets c0 - j*(d/g). So each phase is a stride-1 correlation, i.e.
// a dense GEMM with no multiply on an inserted zero; a phase with no taps writes only bias.
#pragma once

#include <cstdint>

namespace convt3d {
namespace fwd {

constexpr int kMaxStride = 16;  // per-axis stride the plan tables hold; larger -> reference

// Magic numbers for n / d with 0 <= n < 2^31 and d >= 1 (round-up method of Granlund and
// Montgomery): q = (umulhi(n, m) + n) >> s. fast_div.cuh's FastDiv evaluates it. Divisors fixed
// by the plan get theirs here, on the host, once per plan (in a kernel its 64-bit division
// would cost more than the divisions it replaces).
struct DivMagic {
  uint32_t d = 1, m = 1, s = 0;
};

inline DivMagic div_magic(uint32_t d) {
  DivMagic g;
  g.d = d;
  uint32_t s = 0;
  if (d > 1) s = 32u - uint32_t(__builtin_clz(d - 1));  // smallest s with 2^s >= d
  g.s = s;
  g.m = uint32_t((uint64_t(1) << 32) * ((uint64_t(1) << s) - d) / d + 1);
  return g;
}

// div_magic of an extent or count, of 1 where it is 0 (nothing is then divided by it).
inline DivMagic div_magic_pos(int v) { return div_magic(static_cast<uint32_t>(v > 0 ? v : 1)); }

struct AxisPlan {
  int in = 0, stride = 1;
  int tstep = 1, cstep = 0;  // next tap: t += tstep, c -= cstep
  int q[kMaxStride];         // outputs of phase r: o = r + s*q for q in [0, q[r])
  int ntap[kMaxStride];      // |T_r|
  int t0[kMaxStride];        // first tap of T_r
  int c0[kMaxStride];        // its input offset c_t0
  DivMagic qdiv[kMaxStride];  // divides by q[r] (at least 1)
};

// Everything the kernel reads. Element strides are in NCDHW index order, any memory format.
struct FwdArgs {
  const void* x = nullptr;     // [N, Cin, in...] through xs
  const void* wp = nullptr;    // packed weight [groups][kD][kH][kW][Cout_g][cin_pad]
  const void* bias = nullptr;  // [Cout] contiguous, or null
  void* y = nullptr;           // [N, Cout, out...] through ys
  int64_t xs[5] = {}, ys[5] = {};
  AxisPlan ax[3];
  int k[3] = {};
  int n = 0, cin_g = 0, cout_g = 0, cin_pad = 0;
  int phases = 0, m_tiles = 0, n_tiles = 0;  // grid = n_tiles * phases * m_tiles * groups
  // Divide by n_tiles, phases, m_tiles and the w and h strides (tile_coord); set by
  // set_grid_divs once the plan is final.
  DivMagic div_nt, div_ph, div_mt, div_sw, div_sh;
  int y_cfast = 0;     // 1: y's channels are unit-stride (channels_last)
  int y_vec = 0;       // 1: and 16-byte stores of channels are aligned (set at launch)
  int xs1_bytes = 0;   // channel stride in bytes for the scalar loader; (KRUN-1)x fits in int32
  // Halo path only (halo_kernel.cuh): output box per CTA (bqd, bqh, bqw; product = BM) and the
  // dynamic shared memory the host sized for the largest halo box over the phases. m_tiles is
  // then N x boxes of phase 0 (the phase with the most outputs on every axis).
  int box[3] = {};
  int smem_bytes = 0;
  int tap_cap = 0;  // entries of the kernel's tap table: max taps of a phase, rounded up to 4
  // Fused halo (all phases per CTA): the grid has phases = 1 and each CTA loops over every
  // phase of its q box, reading one box (all channel chunks) that covers the union of the
  // phases' halos: along axis i box index b is input q0 + ulo[i] + b, for b < bq + uext[i].
  int fuse = 0;
  int ulo[3] = {}, uext[3] = {};
  // Fused only: 1 keeps phase (rd, rh, 0)'s tile until (rd, rh, 1)'s and stores each position's
  // two w outputs together (NCDHW y, w stride 2, BN kFusedPairBn, scalar loader).
  int pair = 0;
  // Per-phase halo only: 1 runs its wgmma variant (sm_90a build on an sm_90 device); box_bufs
  // 2 double-buffers the box so chunk c + 1 loads during chunk c (cp.async loader only).
  int wg = 0;
  int box_bufs = 1;
  // Non-overlapping kernel only (pw_kernel.cuh): per-axis padding and output extent, to place
  // and bound each input position's outputs o = i * s - pad + tap.
  int pad[3] = {}, out[3] = {};
  // Transposed wgmma kernel with channels_last x only: 1 loads each box with one TMA copy
  // through box_map (a CUtensorMap of x built at launch, box_map.cpp) instead of cp.async.
  int box_tma = 0;
  // Transposed wgmma kernel, 3xTF32 with NCDHW-like x only: 1 (a streamed box) loads each
  // chunk's box by one TMA copy of x's (W, H, D, C, N) view through box_map into a staging
  // buffer, which the warps split into the box, instead of the scalar loader's global loads;
  // 2 (a box reloaded per chunk) the same in pieces of kTwgPieceCh channels through two
  // buffers.
  int box_stage = 0;
  // Transposed wgmma kernel only: output depth planes per warpgroup. Its M = 64 rows are
  // `stack` blocks of 64 / stack channels (Cout/g <= 64 / stack), block j the plane qd + j, so a
  // narrow layer fills the tile (twg_kernel.cuh); 1 otherwise. With stack_w = 1 the blocks are
  // not planes but w offsets: block j holds taps j (cstep) apart along w for the same outputs,
  // and the epilogue sums the blocks' shifted columns (one plane per warpgroup).
  int stack = 1;
  int stack_w = 0;
  // Transposed wgmma kernel, 3xTF32 unstacked only: 1 takes weight stages of twice the taps
  // (twg_taps_per_stage), so the per-stage drain comes half as often.
  int twg_long = 0;
  // Box kernels (twg, per-phase and fused halo): the divisors of their CTAs' index math as
  // magic numbers (set_box_divs). A 32-bit division by a run-time value is some 20 dependent
  // instructions and a FastDiv built in the kernel costs a 64-bit one; a dozen of them made up
  // most of a strict fp32 twg CTA's start (design doc v35).
  // - div_tiles: phase 0's tile counts along d, h and w (a box of DD x bqh x bqw outputs, DD =
  //   box[0] x stacked planes). Tile mt of every phase is phase 0's tile mt; a CTA past a
  //   smaller phase's extent returns.
  // - div_bq: bqh and bqw (row tables).
  // - div_hh, div_hw: the box extent of h phase / w phase r (bqh or bqw plus the phase's tap
  //   span); div_uhh, div_uhw: the same for a box that spans the largest span (uext: twg's TMA
  //   box, the fused halo box).
  // - div_nh, div_nws: the taps of h phase r, and the shifts of w phase r (its taps, or with
  //   w-stacked blocks ceil(taps / stack)): the tap table.
  DivMagic div_tiles[3], div_bq[2], div_uhh, div_uhw;
  DivMagic div_hh[kMaxStride], div_hw[kMaxStride], div_nh[kMaxStride], div_nws[kMaxStride];
  // The non-overlapping kernel (pw_kernel.cuh) with NCDHW-like x: positions are contiguous per
  // channel, so A arrives M-major (16-bit: read so; TF32: transposed in shared memory) and the
  // columns run (co, td, th, tw).
  int x_mn = 0;
  // The non-overlapping kernel (16-bit, 3xTF32, and TF32 with NCDHW x): 1 reads B straight
  // from w (wp = w, K rows ws0 elements apart) instead of the packed weight; the host checks
  // that w holds each K row's columns contiguously in the kernel's order (w_direct_ok).
  int w_direct = 0;
  int64_t ws0 = 0;
  // The non-overlapping kernel only: its tables' divisors as magic numbers (set_pw_divs): x's
  // D, H and W (row m = (n, id, ih, iw)), the kernel's extents and Cout/g (column = tap and
  // channel).
  DivMagic div_x[3], div_k[3], div_cog;
  // The non-overlapping kernel only: its number of tiles (m_tiles x n_tiles x groups), and 1 to
  // run 16-bit and 3xTF32 tiles on persistent CTAs (a grid of as many CTAs as fit at once,
  // each looping over every gridDim-th tile) instead of one CTA per tile.
  int tiles = 0;
  int persist = 0;
  // The non-overlapping kernel in TF32 only: 1 runs the two-stage ("lean") kernel, two CTAs per
  // SM where three stages would fit one (kPwStagesLean).
  int pw_lean = 0;
  // Per-phase kernels (v1, per-phase halo, twg) only: 1 when the host has already filled y with
  // the bias (or zeros) before the launch (fill_output), so the CTAs of phases without taps
  // return at once instead of writing it (phase_prefilled, tile_common.cuh).
  int prefilled = 0;
  // The transposed kernel only: where the small parts start along w_map's outermost coordinate
  // (rows of the big part in the unstacked 2-D map, groups in the stacked 5-D ones), and w_map,
  // the packed weight's TMA tensor map (box_map.cpp: encode_weight_map).
  int w_small_at = 0;
  // A densified grouped layer (groups = 1 above, block-diagonal weight): bit 8 s + b is set
  // when K step s (32 bytes of channels) and output channels 8 b .. 8 b + 7 meet a diagonal
  // block (dense_block_bits), so the mma.sync halo kernels skip the zero blocks; 0 otherwise
  // (or CONVT3D_DENSE_SKIP=0).
  uint64_t dense_blocks = 0;
  // Transposed wgmma and non-overlapping kernels, 3xTF32 only: 1 runs strict fp32 as three fp16
  // products of scaled operands (h16_split.cuh); h16_max then holds x's and w's largest finite
  // |value| as fp32 bits (h16_absmax, before the repack).
  const uint32_t* h16_max = nullptr;
  int h16 = 0;
  // Host only (the pw and twg launchers): 1 launches the kernel with programmatic stream
  // serialisation, where the kernel just before it in the stream is our own (fwd/pdl.cuh).
  int pdl = 0;
  alignas(64) unsigned char box_map[128] = {};
  alignas(64) unsigned char w_map[128] = {};
  // Fused only, one N tile and one group: 1 keeps every tap's weights in shared memory and runs
  // the CTA over boxes blockIdx.x, + gridDim.x, ... on a grid of as many CTAs as fit at once
  // (resident_ctas); 2 the same with one box per CTA (halo_kernel.cuh, RES). Last, so that
  // every field above keeps its parameter offset (and the other kernels their SASS).
  int fused_res = 0;
};

inline int64_t gcd64(int64_t a, int64_t b) {
  while (b != 0) {
    const int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// Fills one axis. Returns false when a value would not fit the int32 device arithmetic
// (callers then use the reference kernel).
inline bool plan_axis(AxisPlan& ax, int64_t in, int64_t out, int64_t k, int64_t s, int64_t p,
                      int64_t d) {
  constexpr int64_t kLim = int64_t(1) << 29;  // q + c and friends stay far from int32 overflow
  if (s < 1 || s > kMaxStride || in >= kLim || out >= kLim || p >= kLim || k * d >= kLim) {
    return false;
  }
  const int64_t g = gcd64(s, d);
  ax.in = static_cast<int>(in);
  ax.stride = static_cast<int>(s);
  ax.tstep = static_cast<int>(s / g);
  ax.cstep = static_cast<int>(d / g);
  for (int64_t r = 0; r < kMaxStride; ++r) {
    ax.q[r] = ax.ntap[r] = ax.t0[r] = ax.c0[r] = 0;
    if (r >= s) continue;
    ax.q[r] = r < out ? static_cast<int>((out - r + s - 1) / s) : 0;
    int count = 0;
    for (int64_t t = 0; t < k; ++t) {
      const int64_t num = r + p - t * d;
      if (((num % s) + s) % s != 0) continue;
      if (count == 0) {
        ax.t0[r] = static_cast<int>(t);
        ax.c0[r] = static_cast<int>(num / s);  // exact, may be negative
      }
      ++count;
    }
    ax.ntap[r] = count;
    ax.qdiv[r] = div_magic_pos(ax.q[r]);
  }
  return true;
}

// The grid divisors of tile_coord, from the plan's final n_tiles, phases and m_tiles.
inline void set_grid_divs(FwdArgs& a) {
  a.div_nt = div_magic_pos(a.n_tiles);
  a.div_ph = div_magic_pos(a.phases);
  a.div_mt = div_magic_pos(a.m_tiles);
  a.div_sw = div_magic_pos(a.ax[2].stride);
  a.div_sh = div_magic_pos(a.ax[1].stride);
}

// The non-overlapping kernel's divisors (FwdArgs::div_x, div_k, div_cog).
inline void set_pw_divs(FwdArgs& a) {
  for (int i = 0; i < 3; ++i) {
    a.div_x[i] = div_magic_pos(a.ax[i].in);
    a.div_k[i] = div_magic_pos(a.k[i]);
  }
  a.div_cog = div_magic_pos(a.cout_g);
}

// The box kernels' divisors (FwdArgs::div_tiles and the rest), from the final plan (box,
// stack, uext). Unused by the kernels without a box (v1, pw).
inline void set_box_divs(FwdArgs& a) {
  const int dd = a.box[0] * (a.stack_w != 0 ? 1 : a.stack), bqh = a.box[1], bqw = a.box[2];
  const int ext[3] = {dd, bqh, bqw};
  for (int i = 0; i < 3; ++i) {
    a.div_tiles[i] = div_magic_pos((a.ax[i].q[0] + ext[i] - 1) / (ext[i] > 0 ? ext[i] : 1));
  }
  a.div_bq[0] = div_magic_pos(bqh);
  a.div_bq[1] = div_magic_pos(bqw);
  a.div_uhh = div_magic_pos(bqh + a.uext[1]);
  a.div_uhw = div_magic_pos(bqw + a.uext[2]);
  const bool ws = a.stack > 1 && a.stack_w != 0;
  for (int r = 0; r < kMaxStride; ++r) {
    const AxisPlan &h = a.ax[1], &w = a.ax[2];
    const int span_h = h.ntap[r] > 0 ? (h.ntap[r] - 1) * h.cstep : 0;
    const int span_w = w.ntap[r] > 0 ? (w.ntap[r] - 1) * w.cstep : 0;
    a.div_hh[r] = div_magic_pos(bqh + span_h);
    a.div_hw[r] = div_magic_pos(bqw + span_w);
    a.div_nh[r] = div_magic_pos(h.ntap[r]);
    a.div_nws[r] = div_magic_pos(ws ? (w.ntap[r] + a.stack - 1) / a.stack : w.ntap[r]);
  }
}

}  // namespace fwd
}  // namespace convt3d
