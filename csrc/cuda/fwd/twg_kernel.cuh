// Transposed wgmma forward (sm_90a, bf16/fp16/TF32/3xTF32): the per-phase halo GEMM turned
// around, so that both operands reach the tensor core from shared memory by descriptor. A K step
// is 32 bytes in every mode (k16 of 16-bit, k8 of TF32); TF32 rounds the box once when it is
// stored (the repack rounds the weight), as the halo kernel does.
// 3xTF32 (strict fp32) keeps a big and a small TF32 copy of both operands in shared memory (the
// repack splits the weight, the box is split where TF32 rounds it) and issues three wgmmas per K
// step: a_small b_big and a_big b_small into acc_s, a_big b_big into part. The tensor core
// truncates as it accumulates, so part is added into acc with IEEE adds at least every
// kTwgX3FoldK K steps (after a stage, when the next could pass them) rather than chained over
// all of K (the halo kernel's two-level sum, tile_common.cuh); acc_s, some 2^-11 of the result,
// may chain. Its two warpgroups take turns to issue their stages (turn mbarriers), so that one
// retires, folds and issues while the other's wgmmas run.
// With dense x, strict fp32 runs as three fp16 products instead (H16, a.h16: h16_split.cuh):
// operands scaled by powers of two, one copy each whose 64-byte rows hold 16 channels' fp16 big
// parts, then their small parts, so a chunk is one K step of three k16 wgmmas where 3xTF32
// issues six k8 ones, and the box is half as large (case 4's streams through two buffers).
//
// Within one stride phase every tap is a stride-1 shift of a halo box of x (halo_kernel.cuh).
// This kernel computes D[co][pos] = sum over taps and channels of W_t[co][ci] * box[pos + t][ci]
// with M = 64 output channels and N = NR consecutive box positions:
// - A (weights) is stored per tap as [64 rows][64 B] and B (the box) as [position][64 B], both
//   K-major in the 64-byte swizzle layout (sw64_offset, wgmma_desc_sw64): the tensor core reads
//   them without bank conflicts (the no-swizzle layout cost the pw kernel 2-2.6x). The swizzle
//   acts on address bits, so any NR consecutive box positions are a valid B operand and a tap is
//   a shift of the start address by its box offset. No ldmatrix, no A or B registers.
// A warpgroup's output positions are its slice's bqh lines of the box width HW = bqw + span_w,
// run together as virtual rows v = line * HW + column (<= NR); columns >= bqw (the halo) and
// rows past bqh * HW compute on box data and are dropped. SL warpgroups (4, or 2 with two CTAs
// per SM) take depth slices qd0, qd0 + 1, ... Weights stream through stages of 2 SL taps
// (twg_stages: three with one stage of wgmmas in flight, or two for 3xTF32, which retires each
// stage's wgmmas), loaded by TMA: one thread issues a stage's copies once every warp has
// released its buffer (an "empty" mbarrier per stage) and the warps wait on the stage's "full"
// mbarrier, so the warpgroups do not meet at a CTA barrier every stage (a cp.async loader cost
// each warp some 100 instructions and a barrier per stage). The box holds one
// 64-byte channel chunk: reloaded per chunk, or with a.box_bufs = 2 streamed: chunk c + 1 loads into
// the other buffer while chunk c's first wgmmas run (short phases, e.g. 8 taps at stride 2,
// would otherwise wait for every box). With channels_last x the host usually sets a.box_tma: one
// thread then loads the whole box by TMA (tma.cuh), completing on the buffer's mbarrier, and
// the TMA unit zero-fills and swizzles it. 3xTF32 with NCDHW x and a streamed box may instead
// stage it (a.box_stage): one TMA copy of x's own layout per chunk lands in a staging buffer a
// chunk ahead, and the warps split it from there (shared-memory loads, not global ones) into
// the other buffer. The epilogue goes through the fp32 tile of store_tile
// (tile_to_y). Every stored element is written once, no atomics.
// Narrow layers (Cout/g <= 32) would leave most of M = 64 as zero rows; with a.stack = J > 1 the
// rows are J blocks of 64 / J channels, block j computing output plane qd + j from the same B
// (a box shift), so a CTA covers SL J planes and the tensor core does J times the useful work
// per wgmma, less the shifts where a block has no tap (nd + J - 1 shifts for nd depth taps).
// With a.stack_w the J blocks are instead J neighbouring w taps of the same outputs (ceil(nw / J)
// shifts along w), and the epilogue adds block j's columns shifted by j taps.
#pragma once

#include "fast_div.cuh"
#include "h16_split.cuh"
#include "launch.h"
#include "pdl.cuh"
#include "smem_attr.h"
#include "tile_common.cuh"
#include "tma.cuh"
#include "wgmma.cuh"

namespace convt3d {
namespace fwd {

// LONG: a.twg_long's stages of twice the taps (3xTF32, unstacked). H16: 3xTF32 as three fp16
// products of scaled operands (a.h16, h16_split.cuh): one copy of each operand, whose 64-byte
// rows hold 16 channels' big and small parts, so a chunk is one K step of three wgmmas.
template <Mode MODE, int NR, bool KVEC, int SL, bool LONG = false, bool H16 = false>
struct TwgCfg {
  using T = typename ModeTraits<MODE>::T;
  static constexpr bool X3 = MODE == Mode::kTf32x3;
  static_assert(!LONG || X3, "twg: long weight stages for 3xTF32 only");
  static_assert(!H16 || X3, "twg: fp16 products for strict fp32 only");
  static_assert(SL == 2 || SL == 4, "twg: 4 slices (one CTA per SM) or 2 (two)");
  static_assert(!X3 || (SL == 2 && NR == kTwgX3Run), "twg 3xTF32: two slices, one run length");
  static constexpr int NT = 128 * SL;
  // 128 registers per thread, or 255 for 3xTF32's three accumulator sets (one CTA per SM)
  static constexpr int kMinBlocks = X3 ? 1 : 4 / SL;
  static constexpr int kSplit = X3 && !H16 ? 2 : 1;  // copies of each operand: big (and small)
  static constexpr int NX = X3 ? NR / 8 : 1;  // n8 blocks of acc_s and part (3xTF32 only)
  static constexpr int KRUN = kChunkBytes / int(sizeof(T));  // elements per 16-byte plane
  static constexpr int BK = kBkBytes / int(sizeof(T));
  // K steps of 32 bytes per 64-byte chunk: two, or one of three fp16 products (H16)
  static constexpr int KS = H16 ? 1 : kChunks / 2;
  static constexpr int S = twg_stages(X3), TB = twg_taps_per_stage(SL, LONG);
  // Stages whose wgmmas may still run when a stage has been issued: one (wgmma_wait<1>), none
  // for 3xTF32 (wgmma_wait<0>). A stage's buffer takes stage + S once they are retired.
  static constexpr int kLag = X3 ? 0 : 1;
  static constexpr int kStageBytes = kSplit * TB * kTwgTapBytes;  // [big taps][small taps]
  static_assert(!X3 || TB * KS <= kTwgX3FoldK, "twg 3xTF32: a stage within a fold");
};

// STACK: a.stack > 1 stacked blocks (J read at run time); false compiles J = 1, so the
// unstacked kernel keeps its constant tile strides and loop (a run-time J of 1 made suite cases
// 2, 3, 11 and 12 3-8 % slower on an H100). WTAPS: the blocks may be w taps (a.stack_w read at
// run time); false compiles depth planes only, without the w-tap code, whose registers made the
// depth-stacked NCDHW kernels spill (suite case 4 bf16 NCDHW 2.89 -> 3.53 ms, H200, 2026-11-26).
// Weights come by TMA, one box per tap (unstacked: a 2-D box of 64 rows) or per shift (stacked:
// a 5-D box of the J blocks' taps, stepping along depth or w taps: encode_weight_map).
// J boxes of 64 / J rows per shift measured slower than a cp.async loader (suite case 4 TF32
// channels_last 3.71 -> 4.19 ms, case 1 0.56 -> 0.72, H100, 2026-11-26).
template <Mode MODE, int NR, bool KVEC, int SL, bool STACK, bool WTAPS, bool LONG = false,
          bool H16 = false>
__global__ void __launch_bounds__(TwgCfg<MODE, NR, KVEC, SL, LONG, H16>::NT,
                                  TwgCfg<MODE, NR, KVEC, SL, LONG, H16>::kMinBlocks)
    twg_fwd_kernel(const __grid_constant__ FwdArgs a) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();
#else
  using C = TwgCfg<MODE, NR, KVEC, SL, LONG, H16>;
  using T = typename C::T;
  constexpr int NT = C::NT, KRUN = C::KRUN, BK = C::BK, S = C::S, TB = C::TB;

  // Stacked M (a.stack = J > 1, Cout/g <= 64 / J): row block j of the 64 holds channels of
  // output plane qd + j, so a warpgroup computes J depth planes at once. A K step then runs over
  // box *shifts*: shift jd' (of nd + J - 1 along depth) is block j's tap jd = jd' + j - (J - 1)
  // where 0 <= jd < nd, zero weight rows elsewhere. The host takes it only where a phase's depth
  // taps are all the kernel's (tap step 1: the weight box's blocks outside them read zeros),
  // with unit depth tap steps in the box (cstep 1), where a tap's depth offset is nd - 1 - jd
  // planes.
  const int J = STACK ? a.stack : 1, cpad = 64 / J;
  // W-stacked M (a.stack_w, WTAPS only): the J blocks are not planes but w offsets of one plane.
  // Shift sw of the nws = ceil(nw / J) along w is block j's tap jw = nw - 1 - j - (nws - 1 -
  // sw) J (none where < 0), and block j's D column v is output column v - j cstep: the epilogue
  // sums the blocks' tiles. A kernel wide in w (suite case 1: 7 w taps, Cout 16) then runs
  // 2 shifts per (depth, h) tap instead of 7, each with 64 useful rows of 64.
  // The TMA box puts the tap with the lowest w at rows 0 .. cpad - 1, so M row block i holds
  // block j = J - 1 - i.
  const bool WS = STACK && WTAPS && a.stack_w != 0;
  const int JD = WS ? 1 : J;  // depth planes per warpgroup
  extern __shared__ __align__(128) unsigned char smem[];
  // Head (twg_head_bytes): the mbarriers first, at constant addresses, so the weight loads in
  // the K loop hold no registers for them: the TMA box loads', one per box buffer (a.box_tma),
  // then each weight stage's full (its copies landed) and empty (every warp is done with it).
  const uint32_t box_bar = smem_addr(smem), full_bar = box_bar + 16, empty_bar = full_bar + 8 * S;
  const uint32_t turn_bar = empty_bar + 8 * S;  // 3xTF32: the warpgroups' turns (K loop)
  // 3xTF32 staged boxes (a.box_stage 1): the staging buffer's TMA copy landed / every warp split
  // it; in pieces (a.box_stage 2): piece buffer 0's and 1's TMA copies landed.
  const uint32_t stage_full = turn_bar + 16, stage_empty = stage_full + 8;
  // Then the y offset of each output row (the bound SL JD NR rows, or in the kernel that may
  // stage its box in pieces the tile's bm: twg_head_bytes), then the tap table: unstacked, the
  // packed weight row of each tap (group offset included); stacked, the weight map coordinates
  // (c2, c3) of each shift's box, in entries J t and J t + 1 (box offsets are walked
  // arithmetically: next_tap below).
  // The kernel that may stage its box in pieces: 3xTF32, the scalar loader's x, depth planes
  // stacked (its row table is sized by the tile).
  constexpr bool kPieceKernel = C::X3 && !H16 && !KVEC && STACK && !WTAPS;
  const int tight_rows = kPieceKernel ? SL * JD * a.box[1] * a.box[2] : 0;
  int64_t* yrow = reinterpret_cast<int64_t*>(smem + 8 * kTwgBars);
  int* tap_w = reinterpret_cast<int*>(yrow + (kPieceKernel ? tight_rows : SL * JD * NR));
  static_assert(2 + 2 * S + (C::X3 ? 4 : 0) <= kTwgBars, "twg: mbarriers in the head");
  // Weight stages and boxes at the next kTwgAlign boundary (the swizzle's period).
  const uint32_t s0 = smem_addr(smem);
  const uint32_t sw0 = s0 + uint32_t(twg_head_bytes(NR, a.tap_cap, SL, JD, tight_rows));
  unsigned char* sw = smem + (((sw0 + kTwgAlign - 1) & ~uint32_t(kTwgAlign - 1)) - s0);
  unsigned char* sbox = sw + S * C::kStageBytes;                     // [buf][pos][64 B]
  const uint32_t sw_addr = smem_addr(sw);

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int slice = warp / 4;  // this warpgroup's depth slice

  // ---- tile: phase (rd, rh, rw), sample n, group g, box of SL J x bqh x bqw outputs.
  const TileCoord tc = tile_coord(a);
  if (phase_prefilled(a, tc)) return;
  const int g = tc.g, rd = tc.rd, rh = tc.rh, rw = tc.rw;
  const int bqh = a.box[1], bqw = a.box[2], DD = SL * JD;
  const int Qd = a.ax[0].q[rd], Qh = a.ax[1].q[rh], Qw = a.ax[2].q[rw];
  int qd0, qh0, qw0, n;
  {
    // Tile mt as phase 0's (a.div_tiles: its tile counts); a phase with fewer outputs along an
    // axis has no tile there.
    int u = tc.mt;
    u = FastDiv(a.div_tiles[2]).divmod(u, qw0);
    u = FastDiv(a.div_tiles[1]).divmod(u, qh0);
    n = FastDiv(a.div_tiles[0]).divmod(u, qd0);
    qd0 *= DD;
    qh0 *= bqh;
    qw0 *= bqw;
    if (qd0 >= Qd || qh0 >= Qh || qw0 >= Qw) return;
  }
  const int bm = DD * bqh * bqw;

  // ---- the box: tap j of the phase on an axis reads i = q + c0 - j * cstep, so the box starts
  // at q0 + c0 - span and spans bq + span (span = (ntap - 1) * cstep). A TMA box has one size
  // for the whole layer (the tensor map's), so it spans the largest span of any phase
  // (a.uext): it starts skew = uext - span earlier and the phase's taps sit skew further in.
  int lo[3], ext[3], skew[3];
  const int r3[3] = {rd, rh, rw};
  // 3xTF32 with NCDHW x, unstacked, streamed: a.box_stage loads each chunk's box by one TMA copy
  // of x in its own layout into a staging buffer, which the warps split into the box (below).
  const bool staged = C::X3 && !H16 && !KVEC && !STACK && a.box_stage != 0 && a.box_bufs > 1;
  // 3xTF32 with NCDHW x and a box reloaded per chunk (not w-stacked): a.box_stage 2 loads it by
  // TMA in kTwgPieces pieces of kTwgPieceCh channels through two piece buffers (below).
  const bool pieces = kPieceKernel && a.box_stage == 2 && a.box_bufs == 1;
  const bool uniform = (KVEC && a.box_tma) || staged || pieces;
#pragma unroll
  for (int i = 0; i < 3; ++i) {
    const AxisPlan& ax = a.ax[i];
    const int span = ax.ntap[r3[i]] > 0 ? (ax.ntap[r3[i]] - 1) * ax.cstep : 0;
    ext[i] = uniform ? a.uext[i] : span;
    skew[i] = ext[i] - span;
    lo[i] = ax.c0[r3[i]] - ext[i];
  }
  const int HD = DD + ext[0], HH = bqh + ext[1], HW = bqw + ext[2];
  const int P = HD * HH * HW;
  // Taps of the phase, or with J > 1 its shifts (nd + J - 1 along depth, or ceil(nw / J) along
  // w when w-stacked).
  const int nd = a.ax[0].ntap[rd], nds = nd > 0 ? nd + JD - 1 : 0;
  const int nh = a.ax[1].ntap[rh], nw = a.ax[2].ntap[rw], nws = WS ? (nw + J - 1) / J : nw;
  const int taps = nds * nh * nws;
  // Tap (shift) t = (jd * nh + jh) * nws + jw sits at box offset
  // (nds-1-jd) * step_d + (nh-1-jh) * step_h + (nws-1-jw) * step_w, plus a TMA box's skew.
  const int step_w = a.ax[2].cstep * (WS ? J : 1), step_h = a.ax[1].cstep * HW,
            step_d = a.ax[0].cstep * HH * HW;
  const int pos_first = (nds - 1) * step_d + (nh - 1) * step_h + (nws - 1) * step_w +
                        skew[0] * HH * HW + skew[1] * HW + skew[2];
  // Box rows per buffer: the last slice's run from the first tap reads furthest (host:
  // twg_box_rows in plan_twg, the same bound over the phases).
  const int PP = int(twg_box_rows(P, (SL - 1) * JD * HH * HW + pos_first + NR));
  const int small_box = PP * kBkBytes;   // 3xTF32: the small copy's offset in a buffer
  const int box_bytes = C::kSplit * small_box;  // one buffer
  // Staged: the raw box [BK channels][HD][HH][BW] after the box buffers; its w lines start at
  // iw0 rounded down to 16 bytes (the TMA's innermost coordinate must be), wofs columns early,
  // and span BW = twg_stage_w(HW) columns. In pieces: two buffers of [kTwgPieceCh][HD][HH][BW].
  const int stage_w = twg_stage_w(HW), stage_cs = HD * HH * stage_w;
  const float* const sstage = reinterpret_cast<const float*>(sbox + a.box_bufs * box_bytes);
  const int id0 = qd0 + lo[0], ih0 = qh0 + lo[1], iw0 = qw0 + lo[2];

  const T* __restrict__ x = static_cast<const T*>(a.x);
  const int kvol = a.k[0] * a.k[1] * a.k[2];
  const int64_t xn = int64_t(n) * a.xs[0] + int64_t(g) * a.cin_g * a.xs[1];
  const int kchunks = (a.cin_g + BK - 1) / BK;

  // Box of channels ci0 .. ci0 + BK - 1. KVEC: one cp.async per (position, plane), the four
  // planes of a position on consecutive threads (one commit group). Scalar: consecutive threads
  // take consecutive positions (consecutive iw: coalesced in NCDHW), all four planes each.
  // Box index math without divisions: HW and HH by the host's magic numbers (set_box_divs),
  // built where used from the kernel parameters, which the compiler may reload rather than hold
  // in registers through the K loop (held, they made five 3xTF32 kernels spill: ptxas -v).
  auto div_hw = [&] { return FastDiv(HW, uniform ? a.div_uhw : a.div_hw[rw]); };
  auto div_hh = [&] { return FastDiv(HH, uniform ? a.div_uhh : a.div_hh[rh]); };
  auto box_src = [&](int pos, int ci, bool& in) {
    int hw, hh;
    const int hd = div_hh().divmod(div_hw().divmod(pos, hw), hh);
    const int id = id0 + hd, ih = ih0 + hh, iw = iw0 + hw;
    in = (unsigned(id) < unsigned(a.ax[0].in)) & (unsigned(ih) < unsigned(a.ax[1].in)) &
         (unsigned(iw) < unsigned(a.ax[2].in));
    return xn + int64_t(id) * a.xs[2] + int64_t(ih) * a.xs[3] + int64_t(iw) * a.xs[4] +
           int64_t(ci) * a.xs[1];
  };
  // 3xTF32 with the scalar loader and a streamed box: each warp announces its part of a box on
  // the buffer's mbarrier, so a chunk starts without a CTA barrier, which would stop the
  // warpgroup whose turn comes first until the other has retired its last stage (turns, below).
  const bool box_mbar = C::X3 && !KVEC && a.box_bufs > 1;
  // warp 0, as a value the compiler knows is warp-uniform
  auto warp0 = [&] { return __shfl_sync(0xffffffffu, warp, 0) == 0; };
  // Staged: chunk ci0's raw box into the staging buffer by one TMA copy of x's (W, H, D, C, N)
  // view (a.box_map), completing on stage_full; warp 0 calls it, thread 0 issues it.
  auto stage_load = [&](int ci0) {
    const bool leader = threadIdx.x == 0;
    mbar_expect_tx(stage_full, uint32_t(BK * stage_cs * int(sizeof(float))), leader);
    tma_load_5d(smem_addr(sstage), a.box_map, stage_full, iw0 & ~3, ih0, id0, g * a.cin_g + ci0, n,
                leader);
  };
  // In pieces: piece q (channels ci0 + kTwgPieceCh q ..) of chunk ci0's raw box into piece buffer
  // b by one TMA copy, completing on piece b's mbarrier (stage_full + 8 b); thread 0 issues it.
  auto piece_load = [&](int ci0, int q, int b) {
    const bool leader = threadIdx.x == 0;
    const uint32_t bar = stage_full + 8 * b;
    mbar_expect_tx(bar, uint32_t(kTwgPieceCh * stage_cs * int(sizeof(float))), leader);
    tma_load_5d(smem_addr(sstage + b * kTwgPieceCh * stage_cs), a.box_map, bar, iw0 & ~3, ih0,
                id0, g * a.cin_g + ci0 + q * kTwgPieceCh, n, leader);
  };
  auto load_box = [&](int ci0, int buf) {
    unsigned char* const bbox = sbox + buf * box_bytes;
    const uint32_t box_addr = smem_addr(bbox);
    if (KVEC && a.box_tma) {
      // One copy of the whole box, zero-filled outside x; its channels past Cin are outside x
      // too (the host takes TMA for groups > 1 only with whole chunks per group).
      if (tid == 0) {
        mbar_expect_tx(box_bar + 8 * buf, uint32_t(P * kBkBytes));
        tma_load_5d(box_addr, a.box_map, box_bar + 8 * buf, g * a.cin_g + ci0, iw0, ih0, id0, n);
      }
      cp_async_commit();
    } else if constexpr (KVEC) {
      // Thread tid copies plane kc = tid % kChunks of positions tid / kChunks + i x NT /
      // kChunks (same order as one index per copy), so its channel test and offset are set once
      // per box. A position's offset from the box's corner is 32-bit when the box spans fewer
      // than 2^31 elements: the 64-bit math per copy was a quarter of all instructions of
      // suite case 12 TF32 channels_last (ncu source page).
      static_assert(NT % kChunks == 0, "twg: a thread's box copies share one plane");
      const int kc = tid % kChunks, ci = ci0 + kc * KRUN;
      const bool ci_ok = ci < a.cin_g;
      if (int64_t(HD) * a.xs[2] + int64_t(HH) * a.xs[3] + int64_t(HW) * a.xs[4] < (int64_t(1) << 31)) {
        const T* const corner = x + (xn + int64_t(id0) * a.xs[2] + int64_t(ih0) * a.xs[3] +
                                     int64_t(iw0) * a.xs[4] + int64_t(ci) * a.xs[1]);
        const int s2 = int(a.xs[2]), s3 = int(a.xs[3]), s4 = int(a.xs[4]);
        for (int pos = tid / kChunks; pos < P; pos += NT / kChunks) {
          int hw, hh;
          const int hd = div_hh().divmod(div_hw().divmod(pos, hw), hh);
          const bool ok = ci_ok & (unsigned(id0 + hd) < unsigned(a.ax[0].in)) &
                          (unsigned(ih0 + hh) < unsigned(a.ax[1].in)) &
                          (unsigned(iw0 + hw) < unsigned(a.ax[2].in));
          const T* src = corner + (hd * s2 + hh * s3 + hw * s4);
          cp_async_16(box_addr + sw64_offset(pos, kc), ok ? src : x, ok ? 16 : 0);
        }
      } else {
        for (int pos = tid / kChunks; pos < P; pos += NT / kChunks) {
          bool in;
          const int64_t off = box_src(pos, ci, in);
          const bool ok = in & ci_ok;
          cp_async_16(box_addr + sw64_offset(pos, kc), ok ? x + off : x, ok ? 16 : 0);
        }
      }
      cp_async_commit();
    } else if (staged) {
      // The staging buffer holds chunk ci0's raw box (stage_full's phase c, parity c & 1):
      // one position per thread, its BK channels stage_cs apart, split as the scalar loader
      // splits; the TMA zero-filled what lies outside x, the channels past Cin/g are zeroed here.
      const int ck = ci0 / BK;
      mbar_wait_warp(stage_full, uint32_t(ck) & 1u);
      const int nv = a.cin_g - ci0, wofs = iw0 & 3;
      for (int pos = tid; pos < P; pos += NT) {
        int hw, hh;
        const int hd = div_hh().divmod(div_hw().divmod(pos, hw), hh);
        const float* sp = sstage + ((hd * HH + hh) * stage_w + hw + wofs);
        uint4 v4[kChunks], s4[kChunks];
#pragma unroll
        for (int kc = 0; kc < kChunks; ++kc) {
          uint32_t v[KRUN], vs[KRUN];
#pragma unroll
          for (int e = 0; e < KRUN; ++e) {
            v[e] = kc * KRUN + e < nv ? __float_as_uint(sp[(kc * KRUN + e) * stage_cs]) : 0u;
            split_tf32_exact(v[e], v[e], vs[e]);
          }
          v4[kc] = pack_bits16<KRUN>(v);
          s4[kc] = pack_bits16<KRUN>(vs);
        }
#pragma unroll
        for (int kc = 0; kc < kChunks; ++kc) {
          *reinterpret_cast<uint4*>(bbox + sw64_offset(pos, kc)) = v4[kc];
          *reinterpret_cast<uint4*>(bbox + small_box + sw64_offset(pos, kc)) = s4[kc];
        }
      }
      fence_proxy_async();  // this warp's stores, from the generic to the async proxy
      __syncwarp();
      mbar_arrive(box_bar + 8 * buf, lane == 0);
      mbar_arrive(stage_empty, lane == 0);
      // Warp 0 refills the staging buffer with chunk ck + 1 once every warp has split chunk ck.
      if (warp0() && ck + 1 < kchunks) {
        mbar_wait_warp(stage_empty, uint32_t(ck) & 1u);
        stage_load(ci0 + BK);
      }
    } else if (pieces) {
      if constexpr (kPieceKernel) {
        // Chunk ci0's box, piece q = plane q of each row: piece buffer q % 2 holds it (its
        // mbarrier's completion 2 ck + q / 2: parity q / 2). One position per thread, its
        // kTwgPieceCh channels stage_cs apart, split as the scalar loader splits; the TMA
        // zero-filled what lies outside x, the channels past Cin/g are zeroed here. Once every
        // thread has split piece q, warp 0 refills its buffer with piece q + 2, or past the last
        // piece with the next chunk's piece q + 2 - kTwgPieces, which lands during this chunk's
        // wgmmas (so a chunk's first two pieces are waiting when its reload starts).
        static_assert(kTwgPieces * kTwgPieceCh == BK && KRUN == kTwgPieceCh,
                      "twg: a piece is a plane of the box rows");
        const int ck = ci0 / BK, nv = a.cin_g - ci0, wofs = iw0 & 3;
#pragma unroll 1
        for (int q = 0; q < kTwgPieces; ++q) {
          const int b = q & 1;
          mbar_wait(stage_full + 8 * b, uint32_t(q >> 1) & 1u);
          const float* const sq = sstage + b * kTwgPieceCh * stage_cs;
          for (int pos = tid; pos < P; pos += NT) {
            int hw, hh;
            const int hd = div_hh().divmod(div_hw().divmod(pos, hw), hh);
            const float* sp = sq + ((hd * HH + hh) * stage_w + hw + wofs);
            uint32_t v[KRUN], vs[KRUN];
#pragma unroll
            for (int e = 0; e < KRUN; ++e) {
              v[e] = q * KRUN + e < nv ? __float_as_uint(sp[e * stage_cs]) : 0u;
              split_tf32_exact(v[e], v[e], vs[e]);
            }
            *reinterpret_cast<uint4*>(bbox + sw64_offset(pos, q)) = pack_bits16<KRUN>(v);
            *reinterpret_cast<uint4*>(bbox + small_box + sw64_offset(pos, q)) =
                pack_bits16<KRUN>(vs);
          }
          __syncthreads();  // every thread is done with piece buffer b
          if (warp0()) {
            if (q + 2 < kTwgPieces) {
              piece_load(ci0, q + 2, b);
            } else if (ck + 1 < kchunks) {
              piece_load(ci0 + BK, q + 2 - kTwgPieces, b);
            }
          }
        }
      }
    } else {
      // One position per thread and all of its kChunks planes: the position's offset and
      // bounds are computed once and the KRUN x kChunks loads step by the channel stride
      // (a split of every (position, plane) index cost the NCDHW kernel most of its
      // instructions: ncu, suite case 11 bf16).
      // W-stacked: rows P .. PP - 1 too, as zeros (the tap table's note below).
      const int pend = WS ? PP : P;
      for (int pos = tid; pos < pend; pos += NT) {
        bool in;
        const int64_t off = box_src(pos, ci0, in);
        const char* src = reinterpret_cast<const char*>(x + off);
        in &= !WTAPS || pos < P;
        const int nv = in ? a.cin_g - ci0 : 0;  // channels of this chunk inside x
        if constexpr (H16) {
          // the chunk's 16 channels, split into fp16 big and small parts (h16_split.cuh)
          static_assert(kChunks * KRUN == kH16Chunk, "twg h16: a box row is one chunk");
          uint32_t v[kH16Chunk];
#pragma unroll
          for (int kc = 0; kc < kChunks; ++kc) {
            const char* sp = src + int64_t(kc * KRUN) * a.xs1_bytes;
#pragma unroll
            for (int e = 0; e < KRUN; ++e) {
              v[kc * KRUN + e] =
                  kc * KRUN + e < nv ? ld_bits(reinterpret_cast<const T*>(sp + e * a.xs1_bytes))
                                     : 0u;
            }
          }
          uint4 o[kChunks];
          split_h16_row(v, h16_pow2(h16_exponent(a.h16_max[0])), o);
#pragma unroll
          for (int kc = 0; kc < kChunks; ++kc) {
            *reinterpret_cast<uint4*>(bbox + sw64_offset(pos, kc)) = o[kc];
          }
        } else {
          uint4 v4[kChunks], s4[kChunks];
#pragma unroll
          for (int kc = 0; kc < kChunks; ++kc) {
            // 64-bit to the plane, 32-bit within it (the host bounds (KRUN - 1) x the stride)
            const char* sp = src + int64_t(kc * KRUN) * a.xs1_bytes;
            uint32_t v[KRUN], vs[KRUN];
#pragma unroll
            for (int e = 0; e < KRUN; ++e) {
              v[e] = kc * KRUN + e < nv ? ld_bits(reinterpret_cast<const T*>(sp + e * a.xs1_bytes))
                                        : 0u;
              if constexpr (MODE == Mode::kTf32) v[e] = tf32_operand(v[e]);
              // (split_tf32_exact: the same bits as tf32_split_bits in 5 instructions, not 9)
              if constexpr (C::X3) split_tf32_exact(v[e], v[e], vs[e]);
            }
            v4[kc] = pack_bits16<KRUN>(v);
            if constexpr (C::X3) s4[kc] = pack_bits16<KRUN>(vs);
          }
#pragma unroll
          for (int kc = 0; kc < kChunks; ++kc) {
            *reinterpret_cast<uint4*>(bbox + sw64_offset(pos, kc)) = v4[kc];
            if constexpr (C::X3) {
              *reinterpret_cast<uint4*>(bbox + small_box + sw64_offset(pos, kc)) = s4[kc];
            }
          }
        }
      }
      if (box_mbar) {  // this warp's stores, from the generic to the async proxy
        fence_proxy_async();
        __syncwarp();
        mbar_arrive(box_bar + 8 * buf, lane == 0);
      }
    }
  };

  // TF32 with cp.async: after the wait, each thread rounds the box chunks it copied itself (its
  // own completed cp.async writes are visible to it), before the fence and barrier. Its chunks
  // idx = tid, tid + NT, ... sit NT x 16 bytes apart: NT / kChunks rows is a whole number of
  // the swizzle's 8-row periods, so the loop is one pointer step, not a swizzle per chunk.
  // 3xTF32 splits the same chunks instead: big in place, small into the buffer's small copy.
  static_assert(NT / kChunks % 8 == 0, "twg: round_box steps whole swizzle periods");
  auto round_box = [&](int buf) {
    if constexpr (KVEC && H16) {
      // fp16 products: each box row's 16 channels, split into its big and small parts in place
      // (a row per thread: the parts land in other 16-byte chunks than their channels).
      unsigned char* const bb = sbox + buf * box_bytes;
      const float sx = h16_pow2(h16_exponent(a.h16_max[0]));
      for (int pos = tid; pos < P; pos += NT) {
        uint32_t v[kH16Chunk];
#pragma unroll
        for (int kc = 0; kc < kChunks; ++kc) {
          const uint4 q = *reinterpret_cast<const uint4*>(bb + sw64_offset(pos, kc));
          v[4 * kc] = q.x;
          v[4 * kc + 1] = q.y;
          v[4 * kc + 2] = q.z;
          v[4 * kc + 3] = q.w;
        }
        uint4 o[kChunks];
        split_h16_row(v, sx, o);
#pragma unroll
        for (int kc = 0; kc < kChunks; ++kc) {
          *reinterpret_cast<uint4*>(bb + sw64_offset(pos, kc)) = o[kc];
        }
      }
    } else if constexpr (KVEC && (MODE == Mode::kTf32 || C::X3)) {
      uint4* q = reinterpret_cast<uint4*>(sbox + buf * box_bytes +
                                          sw64_offset(tid / kChunks, tid % kChunks));
      for (int idx = tid; idx < P * kChunks; idx += NT, q += NT) {
        if constexpr (C::X3) {
          uint4 big, small;
          tf32_split4(*q, big, small);
          *q = big;
          q[small_box / 16] = small;
        } else {
          *q = tf32_round4(*q);
        }
      }
    }
  };

  // ---- row table (y offset of each output row, -1 past the phase's extents) and tap table.
  for (int r = tid; r < bm; r += NT) {
    int bw, bh;
    const int bd = FastDiv(a.div_bq[0]).divmod(FastDiv(a.div_bq[1]).divmod(r, bw), bh);
    const int qd = qd0 + bd, qh = qh0 + bh, qw = qw0 + bw;
    int64_t off = -1;
    if (qd < Qd && qh < Qh && qw < Qw) {
      off = int64_t(n) * a.ys[0] + int64_t(g) * a.cout_g * a.ys[1] +
            int64_t(rd + a.ax[0].stride * qd) * a.ys[2] +
            int64_t(rh + a.ax[1].stride * qh) * a.ys[3] + int64_t(rw + a.ax[2].stride * qw) * a.ys[4];
    }
    yrow[r] = off;
  }
  if (tid == 0) {
    if ((KVEC && a.box_tma) || box_mbar) {
      mbar_init(box_bar, KVEC ? 1 : NT / 32);  // a TMA box's thread, or each warp
      mbar_init(box_bar + 8, KVEC ? 1 : NT / 32);
    }
#pragma unroll
    for (int b = 0; b < S; ++b) {
      mbar_init(full_bar + 8 * b, 1);
      mbar_init(empty_bar + 8 * b, NT / 32);  // one arrival per warp
    }
    if constexpr (C::X3) {
      mbar_init(turn_bar, 128 / 32);  // the other warpgroup's warps
      mbar_init(turn_bar + 8, 128 / 32);
    }
    if (staged) {
      mbar_init(stage_full, 1);
      mbar_init(stage_empty, NT / 32);
    }
    if (pieces) {  // one per piece buffer
      mbar_init(stage_full, 1);
      mbar_init(stage_full + 8, 1);
    }
  }
  if (staged && taps > 0 && warp0()) stage_load(0);  // chunk 0 while the tables are built
  if (pieces && taps > 0 && warp0()) {  // chunk 0's first two pieces, likewise
    piece_load(0, 0, 0);
    piece_load(0, 1, 1);
  }
  for (int t = tid; t < taps; t += NT) {
    // Shift t = (jd', jh, jw'). Stacked, block j's tap is jd = jd' + j - (J - 1) along depth,
    // or jw = nw - 1 - j - (nws - 1 - jw') J along w; the host stacks only where a phase's
    // taps on that axis are the kernel's (tap step 1, first tap 0), so the box's J taps are
    // consecutive kernel taps and a block without a tap lies outside the kernel (zeros).
    int sw, jh;
    const int sd = FastDiv(a.div_nh[rh]).divmod(FastDiv(a.div_nws[rw]).divmod(t, sw), jh);
    const int th = a.ax[1].t0[rh] + jh * a.ax[1].tstep;
    if constexpr (STACK) {
      if (WS) {
        const int td = a.ax[0].t0[rd] + sd * a.ax[0].tstep;
        tap_w[t * J] = nw - J - (nws - 1 - sw) * J;  // c2: the w tap of block J - 1
        tap_w[t * J + 1] = td * a.k[1] + th;           // c3: (depth tap, h tap)
      } else {
        const int tw = a.ax[2].t0[rw] + sw * a.ax[2].tstep;
        tap_w[t * J] = th * a.k[2] + tw;  // c2: (h tap, w tap)
        tap_w[t * J + 1] = sd - (J - 1);  // c3: the depth tap of block 0
      }
    } else {
      const int td = a.ax[0].t0[rd] + sd * a.ax[0].tstep;
      const int tw = a.ax[2].t0[rw] + sw * a.ax[2].tstep;
      tap_w[t] = (g * kvol + (td * a.k[1] + th) * a.k[2] + tw) * a.cout_g;
    }
  }

  // W-stacked blocks keep columns whose shifts have no tap for them (zero weight rows), and
  // those read up to (nws J - nw) cstep positions past the box: rows P .. PP - 1, which the
  // 16-byte loads (cp.async, TMA) do not write. Zeroed once here, they add 0 x 0 rather than
  // 0 x stale shared memory (NaN bit patterns there made whole outputs NaN: bench and sanitizer
  // runs, H100, 2026-11-25). The scalar loader stores them as zeros with each box instead: this
  // loop made the NCDHW kernels spill up to 152 bytes (ptxas -v, 2026-11-26).
  if (KVEC && WS) {
    uint4* const z = reinterpret_cast<uint4*>(sbox + P * kBkBytes);
    const int n16 = (PP - P) * kChunks, copies = a.box_bufs * C::kSplit;
    // buffer x split: copies small_box bytes apart
    for (int i = tid; i < n16 * copies; i += NT) {
      const int copy = i / n16;
      z[copy * (small_box / 16) + (i - copy * n16)] = make_uint4(0u, 0u, 0u, 0u);
    }
  }

  float acc[1][NR / 8][4];
  zero_acc(acc);
  float acc_s[1][C::NX][4], part[1][C::NX][4];  // 3xTF32: small products; big of this stage
  zero_acc(acc_s);
  zero_acc(part);
  // The kernel before this one (the repack, the prefill, the scale pass) may still run
  // (pdl.cuh): the packed weight, a prefilled y and the scale bits are read from here on.
  pdl_wait();
  __syncthreads();  // row and tap tables

  if (taps > 0) {
    // Stages st = (chunk c, taps sub * TB ..), stage st in weight buffer st % S. Each warp, once
    // it has retired stage r's wgmmas (r = st - kLag at the end of stage st), arrives on r's
    // empty barrier; warp 0, at the start of stage st + 1 (3xTF32: once it has issued that
    // stage, turns below), waits for all warps' arrivals and loads stage r + S into that
    // buffer, so the copies run up to S - 1 - kLag stages ahead of the stage being issued.
    // Every warp arrives for stage r before it can reach a later barrier, so the waits cannot
    // deadlock with the CTA barrier at each chunk's first stage.
    const int spc = (taps + TB - 1) / TB;
    const int nst = kchunks * spc;
    const bool stream = a.box_bufs > 1;
    // The B descriptors must be warp-uniform values to stay in uniform registers: the slice
    // comes through a shuffle (the compiler then knows it is uniform) and the taps' box
    // offsets are walked arithmetically (next_tap) rather than read from a shared table,
    // which cost an R2UR and moves per wgmma.
    const uint32_t slice_pos = uint32_t(__shfl_sync(0xffffffffu, slice, 0) * JD * HH * HW);
    int jw = 0, jh = 0, tap_pos = pos_first;
    uint32_t bar_phase = 0;  // bit b: parity of box buffer b's next load (TMA, or box_mbar)
    int kpart = 0;           // 3xTF32: K steps in part since its last fold
    auto next_tap = [&]() {  // selects, no branches: a branch would fence the wgmmas
      const bool wrap_w = ++jw == nws;
      tap_pos += wrap_w ? (nws - 1) * step_w - step_h : -step_w;
      jw = wrap_w ? 0 : jw;
      const bool wrap_h = wrap_w && ++jh == nh;
      tap_pos += wrap_h ? nh * step_h - step_d : 0;
      jh = wrap_h ? 0 : jh;
    };
    // A: [64 rows][64 B] per tap, B: the box [pos][64 B]; both 64-byte swizzled, 8-row groups
    // 512 bytes apart.
    const uint64_t da0 = wgmma_desc_sw64(sw_addr, 8 * kBkBytes);
    const uint64_t db0 = wgmma_desc_sw64(smem_addr(sbox), 8 * kBkBytes);
    // Stage s is (chunk c, sub-stage) = (s / spc, s % spc), kept as counters that step by
    // selects rather than divided out (a FastDiv by spc, which varies by phase, cost a 64-bit
    // division per CTA).
    auto step = [&](int& cc, int& ss) {
      const bool wrap = ++ss == spc;
      ss = wrap ? 0 : ss;
      cc += wrap ? 1 : 0;
    };
    // Weights of stage s into buffer s % S as [tap][64 rows][64 B], channels c BK .. (past
    // cin_pad zeros). Unstacked: per tap one 2-D box of 64 rows from the packed weight's row
    // tap_w[t]; rows past Cout/g read the next rows of wp (the next tap's; past its end, zeros):
    // they only feed D rows that are never stored, and rows of D do not mix. Stacked: per shift
    // one 5-D box at (tap_w[J t], tap_w[J t + 1], g), J blocks of 64 / J rows, zeros past Cout/g
    // and for blocks without a tap. 3xTF32: the small parts (a.w_small_at further along the
    // outermost coordinate) to taps TB + tt.
    // Warp 0 runs it as a whole (warp-uniform branches and waits, lane 0's instructions
    // predicated), so no branch diverges while wgmmas are in flight: a divergent thread-0
    // branch made ptxas serialize every wgmma (C7520).
    auto produce = [&](int s, int c, int sub) {
      const bool leader = threadIdx.x == 0;
      const int b = s % S;
      if (s >= S) mbar_wait_warp(empty_bar + 8 * b, uint32_t(s / S - 1) & 1u);
      const int t0 = sub * TB, nt = min(TB, taps - t0);
      const uint32_t bar = full_bar + 8 * b, dst = sw_addr + b * C::kStageBytes;
      mbar_expect_tx(bar, uint32_t(nt * C::kSplit * kTwgTapBytes), leader);
      for (int tt = 0; tt < nt; ++tt) {
        const uint32_t d = dst + tt * kTwgTapBytes;
        if constexpr (STACK) {
          const int c2 = tap_w[(t0 + tt) * J], c3 = tap_w[(t0 + tt) * J + 1];
          tma_load_5d(d, a.w_map, bar, c * BK, 0, c2, c3, g, leader);
          if constexpr (C::kSplit == 2) {
            tma_load_5d(d + TB * kTwgTapBytes, a.w_map, bar, c * BK, 0, c2, c3,
                        g + a.w_small_at, leader);
          }
        } else {
          const int row = tap_w[t0 + tt];
          tma_load_2d(d, a.w_map, bar, c * BK, row, leader);
          if constexpr (C::kSplit == 2) {
            tma_load_2d(d + TB * kTwgTapBytes, a.w_map, bar, c * BK, row + a.w_small_at, leader);
          }
        }
      }
    };
    const bool producer = warp0();
    // Warp 0 refills the buffer of stage r = st - 1 - kLag (released at the end of stage st - 1)
    // with stage r + S. After the barrier of a chunk's first stage, not before it: its copies
    // issued ahead of that barrier kept every other warp waiting there (suite case 11, one
    // stage per chunk, 3xTF32: +5 %, H100).
    auto refill = [&](int st, int c, int sub) {
      const int r = st - 1 - C::kLag;
      static_assert(S - 1 - C::kLag == 1, "twg: the producer runs one stage ahead");
      if (producer && r >= 0 && r + S < nst) {
        step(c, sub);  // stage st + 1 = r + S
        produce(r + S, c, sub);
      }
    };
    if (producer) {
      int c = 0, sub = 0;
      for (int s = 0; s < S && s < nst; ++s, step(c, sub)) produce(s, c, sub);  // all free
    }
    load_box(0, 0);
    // 3xTF32 retires every stage (wgmma_wait<0>), so two warpgroups issuing side by side would
    // drain the tensor pipe together and both leave it idle while they fold, release and issue
    // again. They take turns instead: a warpgroup issues its stage st once the other has issued
    // its own stage st - 1 (warpgroup 0) or st (warpgroup 1), so its wgmmas queue behind the
    // other's, and it retires, folds and issues again while those run. Each warp's lane 0
    // arrives on the other warpgroup's turn mbarrier (turn_bar, one per warpgroup: its phase st
    // is the go for stage st); warpgroup 1 lets warpgroup 0 go first.
    constexpr bool kTurns = C::X3;
    static_assert(!kTurns || SL == 2, "twg: turns of two warpgroups");
    if constexpr (kTurns) {
      if (slice == 1) mbar_arrive(turn_bar, lane == 0);
    }
    int c = 0, sub = 0;  // stage st's chunk and sub-stage
    for (int st = 0; st < nst; ++st) {
      const int buf = stream ? c & 1 : 0;
      if (sub == 0) {
        jw = 0;
        jh = 0;
        tap_pos = pos_first;
        if (c > 0) {
          // Streamed: the last stage's wgmmas read the buffer that chunk c + 1 takes after the
          // barrier (box_mbar: after the wait before its load_box). Reloaded: every wgmma must
          // be done with the one buffer.
          wgmma_wait<0>();
          if (!stream) {
            __syncthreads();
            load_box(c * BK, 0);
          }
        }
        if (!box_mbar) cp_async_wait<0>();
        if ((KVEC && a.box_tma) || box_mbar) {  // the buffer's mbarrier
          mbar_wait(box_bar + 8 * buf, (bar_phase >> buf) & 1u);
          bar_phase ^= 1u << buf;
        }
        if (!box_mbar) {
          // H16 splits whole rows, copied by other threads: all of this chunk's cp.async writes
          // must be visible first (a TMA box is, to every thread past its mbarrier).
          if constexpr (H16 && KVEC) {
            if (!a.box_tma) __syncthreads();
          }
          round_box(buf);
          fence_proxy_async();  // cp.async and stores (generic proxy) -> wgmma reads (async)
          __syncthreads();
        }
      }
      {
        // With turns, after this stage's wgmmas are issued (below): warpgroup 1 releases stage
        // st - 1 only once its wgmmas, queued behind warpgroup 0's, have run.
        if constexpr (!kTurns) refill(st, c, sub);
        if constexpr (kTurns) mbar_wait(turn_bar + 8 * slice, uint32_t(st) & 1u);  // its turn
        mbar_wait(full_bar + 8 * (st % S), uint32_t(st / S) & 1u);
      }
      // K steps of 32 bytes: both, or only the first when the rest of the chunk is padding.
      // A full stage issues its TB x 2 wgmmas back to back with no branch between them (a
      // branch makes ptxas fence each wgmma on its own); a last partial stage or a half chunk
      // takes the general loop.
      const int nks = H16 ? 1 : a.cin_g - c * BK > BK / 2 ? 2 : 1;
      // Descriptors are the base ones plus a 16-byte-unit offset in the address field (shared
      // addresses < 256 KB never carry out of it), so each wgmma costs an add, not a rebuild.
      // A K step is 32 bytes into the row, a box position 64 bytes.
      const uint64_t dstage = da0 + uint64_t((st % S) * (C::kStageBytes >> 4));
      auto desc_a = [&](int tt, int ks) {
        return dstage + uint64_t((tt * kTwgTapBytes + ks * 32) >> 4);
      };
      const uint64_t dbox = db0 + uint64_t(buf * (box_bytes >> 4));
      auto desc_b = [&](uint32_t pos, int ks) {
        return dbox + uint64_t(ks * 2 + pos * (kBkBytes >> 4));
      };
      // One K step; 3xTF32: the small copies sit TB taps (weights) and small_box bytes (box) on.
      // A stage's first K step restarts part after a fold: scale-d 0 where kpart is 0, a
      // select rather than a branch between the wgmmas (the others pass a constant 1).
      auto mma = [&](uint64_t da, uint64_t db, bool first) {
        if constexpr (H16) {
          // rows [16 big][16 small] fp16: small w x big x and big w x small x into acc_s (the
          // +2: 32 bytes on), big x big into part
          wgmma_ss<Mode::kFp16, NR>(acc_s[0], da + 2, db);
          wgmma_ss<Mode::kFp16, NR>(acc_s[0], da, db + 2);
          wgmma_ss_f16_scaled<NR>(part[0], da, db, first ? kpart : 1);
        } else if constexpr (C::X3) {
          wgmma_ss<Mode::kTf32, NR>(acc_s[0], da + uint64_t((TB * kTwgTapBytes) >> 4), db);
          wgmma_ss<Mode::kTf32, NR>(acc_s[0], da, db + uint64_t(small_box >> 4));
          wgmma_ss_scaled<NR>(part[0], da, db, first ? kpart : 1);
        } else {
          wgmma_ss<MODE, NR>(acc[0], da, db);
        }
      };
      if (sub * TB + TB <= taps && nks == C::KS) {
        wgmma_fence();
#pragma unroll
        for (int tt = 0; tt < TB; ++tt) {
          const uint32_t pos = slice_pos + uint32_t(tap_pos);
          next_tap();
#pragma unroll
          for (int ks = 0; ks < C::KS; ++ks) {
            mma(desc_a(tt, ks), desc_b(pos, ks), tt == 0 && ks == 0);
          }
        }
      } else {
        wgmma_fence();
        for (int tt = 0; tt < TB && sub * TB + tt < taps; ++tt) {
          const uint32_t pos = slice_pos + uint32_t(tap_pos);
          next_tap();
          for (int ks = 0; ks < nks; ++ks) mma(desc_a(tt, ks), desc_b(pos, ks), tt == 0 && ks == 0);
        }
      }
      wgmma_commit();
      if constexpr (kTurns) {
        mbar_arrive(turn_bar + 8 * (1 - slice), lane == 0);  // the other warpgroup's turn
        refill(st, c, sub);
      }
      // The next chunk's box goes to the other buffer while these wgmmas run (its own commit
      // group with cp.async; plain loads and stores otherwise, under the fence of the next
      // chunk's first stage, or with box_mbar their own).
      if (stream && sub == 0 && c + 1 < kchunks) {
        // box_mbar: with no CTA barrier at the chunk's start, chunk c - 1's wgmmas (they read
        // buffer buf ^ 1) are known retired by every warp from the release of its last stage.
        if (box_mbar && c > 0) {
          mbar_wait_warp(empty_bar + 8 * ((st - 1) % S), uint32_t((st - 1) / S) & 1u);
        }
        load_box((c + 1) * BK, buf ^ 1);
      }
      if constexpr (C::X3) {
        // The big products into acc with IEEE adds once another full stage could take part
        // past kTwgX3FoldK K steps; the next stage restarts part (its wgmma_fence orders these
        // register reads before its wgmmas). Keeping a stage in flight instead
        // (two partials by stage parity, wait<1>) measured no faster on an H100 (suite cases
        // 2, 3, 11, 12) and spilled registers.
        wgmma_wait<0>();
        kpart += min(TB, taps - sub * TB) * nks;
        if (kpart + TB * C::KS > kTwgX3FoldK) {
          fold_partial(acc, part);
          kpart = 0;
        }
      } else {
        wgmma_wait<1>();
      }
      // Stage st - kLag's wgmmas are retired in this warp: release its buffer.
      if (st >= C::kLag) mbar_arrive(empty_bar + 8 * ((st - C::kLag) % S), lane == 0);
      step(c, sub);
    }
    wgmma_wait<0>();
    wgmma_fence_acc(acc);
    wgmma_fence_acc(acc_s);
    if constexpr (C::X3) {
      if (kpart > 0) fold_partial(acc, part);  // the stages since the last fold
      if constexpr (H16) {
        h16_finish(acc, acc_s, h16_exponent(a.h16_max[0]) + h16_exponent(a.h16_max[1]));
      } else {
        add_small(acc, acc_s);
      }
    }
  }
  __syncthreads();  // the epilogue tile overwrites the weight stages and the box

  // ---- epilogue: this thread holds M rows 16 (warp % 4) + lane / 4 (+ 8), that is row block
  // jrow, block jb (both rows: blocks are >= 16 rows) and channels co (+ 8), and virtual rows
  // v = 8 j + 2 (lane % 4) (+ 1); v = line * HW + column, kept when line < bqh, column < bqw.
  // The tile is [bm][cpad] in TileLayout::kPadded4 (row stride cpad + kTwgTilePad: this
  // store's four rows, two apart, start 8 banks apart; tile_common.cuh), row (plane, line,
  // column) of the CTA's DD x bqh x bqw. W-stacked: block jb has its own tile, its column v at
  // output column v - jb cstep, and the bias goes into block 0's.
  float* ct = reinterpret_cast<float*>(sw);
  const int rs = cpad + kTwgTilePad;  // tile row stride
  {
    const T* bias = static_cast<const T*>(a.bias);
    const int jrow = 16 * (warp % 4) / cpad;  // M row block; w-stacked block J - 1 - jrow
    const int jb = WS ? J - 1 - jrow : jrow;
    const int co = 16 * (warp % 4) - jrow * cpad + lane / 4;
    float bv[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int col = co + 8 * h;
      bv[h] = bias != nullptr && col < a.cout_g && !(WS && jb > 0)
                  ? to_float(bias[int64_t(g) * a.cout_g + col])
                  : 0.f;
    }
    const int row0 = (slice * JD + (WS ? 0 : jb)) * bqh * bqw;
    const int cshift = WS ? jb * a.ax[2].cstep : 0;
    float* const ctb = ct + (WS ? jb * bm * rs : 0);
#pragma unroll
    for (int j = 0; j < NR / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int v = 8 * j + 2 * (lane % 4) + e;
        int col;
        const int line = div_hw().divmod(v, col);
        col -= cshift;  // w-stacked: may fall below 0
        if (line < bqh && (WTAPS ? unsigned(col) < unsigned(bqw) : col < bqw)) {
          float* dst = ctb + (row0 + line * bqw + col) * rs + co;
          dst[0] = acc[0][j][e] + bv[0];
          dst[8] = acc[0][j][2 + e] + bv[1];
        }
      }
    }
  }
  __syncthreads();
  if (WS) {
    // Output column c takes block j's column c + j cstep where that lies in the line (HW):
    // the only blocks with a tap there (their tap jw >= 0 keeps it within the box span), in
    // block order, so the sum is the same every run.
    const int cs = a.ax[2].cstep, tile = bm * rs;
    for (int i = tid; i < bm * cpad; i += NT) {
      const int r = i / cpad, co = i - r * cpad, c = r % bqw;
      float* p = ct + r * rs + co;
      float sum = p[0];
      for (int j = 1; j < J && c + j * cs < HW; ++j) sum += p[j * tile];
      p[0] = sum;
    }
    __syncthreads();
  }
  if (!STACK) {
    tile_to_y<64, NT, T, TileLayout::kPadded4>(ct, bm, yrow, 1, a, 0);
  } else if (J == 2) {
    tile_to_y<32, NT, T, TileLayout::kPadded4>(ct, bm, yrow, 1, a, 0);
  } else {
    tile_to_y<16, NT, T, TileLayout::kPadded4>(ct, bm, yrow, 1, a, 0);
  }
#endif
}

template <Mode MODE, int NR, bool KVEC, int SL, bool STACK, bool WTAPS, bool LONG = false,
          bool H16 = false>
cudaError_t launch_twg_kernel(const FwdArgs& a, int64_t blocks, cudaStream_t stream) {
  auto kernel = twg_fwd_kernel<MODE, NR, KVEC, SL, STACK, WTAPS, LONG, H16>;
  const cudaError_t e = allow_dynamic_smem(kernel, a.smem_bytes);
  if (e != cudaSuccess) return e;
  constexpr int kThreads = TwgCfg<MODE, NR, KVEC, SL>::NT;
  const cudaError_t l = launch_maybe_pdl(kernel, dim3(static_cast<unsigned>(blocks)),
                                         dim3(kThreads), a.smem_bytes, stream, a.pdl != 0, a);
  return l != cudaSuccess ? l : cudaGetLastError();
}

// a.stack > 1: a stacked kernel, of w taps where a.stack_w, else of depth planes (static
// switches to the template constants).
template <Mode MODE, int NR, bool KVEC, int SL, bool H16 = false>
cudaError_t launch_twg_stack(const FwdArgs& a, int64_t blocks, cudaStream_t stream) {
  if (a.stack <= 1) {
    return launch_twg_kernel<MODE, NR, KVEC, SL, false, false, false, H16>(a, blocks, stream);
  }
  return a.stack_w
             ? launch_twg_kernel<MODE, NR, KVEC, SL, true, true, false, H16>(a, blocks, stream)
             : launch_twg_kernel<MODE, NR, KVEC, SL, true, false, false, H16>(a, blocks, stream);
}

// Strict fp32 as fp16 products (a.h16): the 3xTF32 kernels' shapes, two slices, run length
// kTwgX3Run. Instantiated in inst_twg_h16.cu (launch.h).
template <int NR, bool KVEC>
cudaError_t launch_twg_h16(const FwdArgs& a, int64_t blocks, cudaStream_t stream) {
  constexpr Mode M = Mode::kTf32x3;
  return a.twg_long ? launch_twg_kernel<M, NR, KVEC, 2, false, false, true, true>(a, blocks, stream)
                    : launch_twg_stack<M, NR, KVEC, 2, true>(a, blocks, stream);
}

// a.box[0] is the slice count.
template <Mode MODE, int NR, bool KVEC>
cudaError_t launch_twg(const FwdArgs& a, int64_t blocks, cudaStream_t stream) {
  if constexpr (MODE == Mode::kTf32x3) {  // two slices and one run length only (TwgCfg)
    if constexpr (NR != kTwgX3Run) {
      return cudaErrorInvalidValue;
    } else {
      return a.twg_long ? launch_twg_kernel<MODE, NR, KVEC, 2, false, false, true>(a, blocks, stream)
                        : launch_twg_stack<MODE, NR, KVEC, 2>(a, blocks, stream);
    }
  } else {
    return a.box[0] == 2 ? launch_twg_stack<MODE, NR, KVEC, 2>(a, blocks, stream)
                         : launch_twg_stack<MODE, NR, KVEC, 4>(a, blocks, stream);
  }
}

}  // namespace fwd
}  // namespace convt3d
