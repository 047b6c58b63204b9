// The one table of tile shapes for the implicit-GEMM forward. The GEMM of a stride phase is
// narrow (N = Cout/groups, often 16-64) and tall (M = output positions of the phase), so tiles are
// tall: BM output positions by BN output channels, BK = 64 bytes of input channels per stage
// (32 bf16/fp16 or 16 fp32). BN is picked from Cout/groups (pick_bn); each entry lists the warp
// grid that splits the tile. Warp tiles must be multiples of 16 x 16.
#pragma once

#include "mode.h"

namespace convt3d {
namespace fwd {

struct TileConfig {
  int bn, bm, warps_m, warps_n;
};

// Sorted by bn (pick_bn relies on it). Narrow tiles go taller so each staged A element still
// feeds enough MMAs. Every config has 8 warps and at most 4 A chunks per thread: the scalar
// loader keeps 8 loads per chunk in flight, and more than that spills at 128 registers.
inline constexpr TileConfig kTileConfigs[] = {
    // bn,  bm, warps_m, warps_n        warp tile   accumulators/thread
    {16, 256, 8, 1},                 // 32 x 16     16
    {32, 256, 8, 1},                 // 32 x 32     32
    {64, 256, 4, 2},                 // 64 x 32     64
    {128, 128, 4, 2},                // 32 x 64     64
};

// Pipeline stages of the v1 kernel with the channel-fast loader (A and B both by cp.async, so
// stages - 1 stages are in flight while one multiplies). The scalar loader stages A through
// registers and keeps two stages.
constexpr int kIgemmStages = 4;

// The row of `table` with this BN, or all zeros (callers static_assert on .bn).
template <int N>
constexpr TileConfig find_tile(const TileConfig (&table)[N], int bn) {
  for (const auto& c : table) {
    if (c.bn == bn) return c;
  }
  return TileConfig{0, 0, 0, 0};
}

constexpr TileConfig tile_config(int bn) { return find_tile(kTileConfigs, bn); }

// 3xTF32 keeps split A and B fragments live: its 64 x 32 warp tile (BN 64 above) spilled 92 B
// at 128 registers, so it keeps 32 x 32 warp tiles there.
inline constexpr TileConfig kTf32x3Tiles[] = {
    {64, 128, 4, 2},                 // 32 x 32     32
};

// The v1 tile of (mode, BN).
constexpr TileConfig igemm_tile(Mode m, int bn) {
  const TileConfig own = find_tile(kTf32x3Tiles, bn);
  return m == Mode::kTf32x3 && own.bn == bn ? own : tile_config(bn);
}

// 3xTF32's 32 x 64 warp tile (BN 128) spills at 128 registers, so it stops at BN 64 and wide
// layers take several N tiles.
constexpr int max_bn(Mode m) { return m == Mode::kTf32x3 ? 64 : 128; }

// Smallest configured BN covering Cout/groups; wider layers take several N tiles of max_bn.
inline int pick_bn(long long cout_g, Mode m) {
  int best = 0;
  for (const auto& c : kTileConfigs) {
    if (c.bn > max_bn(m)) continue;
    best = c.bn;
    if (cout_g <= c.bn) break;
  }
  return best;
}

// ---- v2 "halo tile" path (halo_kernel.cuh). Its own tile rows: A comes from a box that is
// loaded once per channel chunk, so the warp tile, not the loader, bounds the MMA rate; wide
// warp tiles cut the ldmatrix bytes per MMA (64 x 32 reads 6 x 512 B per 16 MMAs, 32 x 32
// 4 x 512 B per 8). A CTA's BM rows are a box of bqd x bqh x bqw output positions of one phase
// and one sample; the host picks the box per call from kHaloBoxes (pick_box in
// plan_halo.cpp: fewest estimated issue slots, smem cap). bqw is a multiple of 8, so the 8
// rows of every ldmatrix phase are 8 consecutive box positions (distinct banks with 80-byte
// rows, for any tap shift).
inline constexpr TileConfig kHaloTiles[] = {
    // bn,  bm, warps_m, warps_n        warp tile   accumulators/thread
    {16, 256, 8, 1},                 // 32 x 16     16
    {32, 256, 8, 1},                 // 32 x 32     32
    {48, 256, 8, 1},                 // 32 x 48     48   (Cout/g 33-48: BN 64 would pad 25 %+)
    {64, 256, 4, 2},                 // 64 x 32     64
};
constexpr int kHaloMaxBn = 64;

constexpr TileConfig halo_tile(int bn) { return find_tile(kHaloTiles, bn); }

// The wgmma variant of the per-phase halo kernel (sm_90a, wgmma.cuh): two warpgroups of four
// warps, each warp 32 rows x all BN columns, so one wgmma covers 64 rows x BN of a warpgroup.
// Same BM and B stages as kHaloTiles, so the box choice and shared memory are the same.
inline constexpr TileConfig kHaloWgTiles[] = {
    // bn,  bm, warps_m, warps_n        warp tile   accumulators/thread
    {16, 256, 8, 1},                 // 32 x 16     16
    {32, 256, 8, 1},                 // 32 x 32     32
    {48, 256, 8, 1},                 // 32 x 48     48
    {64, 256, 8, 1},                 // 32 x 64     64
};

constexpr TileConfig halo_tile(int bn, bool wg) {
  return wg ? find_tile(kHaloWgTiles, bn) : find_tile(kHaloTiles, bn);
}

// The weight streams through halo_stages cp.async stages of halo_taps_per_stage taps each, so
// (stages - 1) x taps-per-stage taps of B are in flight while one stage multiplies, with one
// barrier per stage. Both kinds hold halo_tap_bufs(BN) taps of B, so shared memory (and the
// box choice) is the same:
// - per phase (many taps per phase, long K loops): 2 stages of 4 (BN 48/64) or 8 taps, so a
//   barrier every 4 or 8 taps; one stage of MMAs (>= 128 per warp) covers the L2 latency of the
//   next. Measured on an H100 against 4 stages of 2 / 4 taps (old and new builds alternating
//   in one call): stride-1 suite cases 1-4 and case 11 3-10 % faster
//   (docs/fast_forward_design.md, v6).
// - fused (few taps per phase; the pipeline runs across phase ends and epilogues): 4 stages
//   of 2 or 4 taps; 2 stages were 3-20 % slower on the strided cases 5, 6, 7, 10 and 12.
// - 3xTF32 keeps 4 stages in both kinds: three MMAs per product make barriers rarer per MMA,
//   and 8 taps per stage spilled (60 B at BN 32).
constexpr int halo_tap_bufs(int bn) { return bn <= 32 ? 16 : 8; }
constexpr int halo_stages(bool fused, Mode m) { return fused || m == Mode::kTf32x3 ? 4 : 2; }
constexpr int halo_taps_per_stage(int bn, bool fused, Mode m) {
  return halo_tap_bufs(bn) / halo_stages(fused, m);
}

struct HaloBox {
  int bm, bqd, bqh, bqw;
};

inline constexpr HaloBox kHaloBoxes[] = {
    {256, 2, 8, 16}, {256, 1, 16, 16}, {256, 4, 4, 16}, {256, 1, 8, 32}, {256, 2, 4, 32},
    {256, 4, 8, 8},  {256, 2, 16, 8},  {256, 1, 32, 8},
    {128, 2, 4, 16}, {128, 1, 8, 16},  {128, 4, 2, 16}, {128, 1, 4, 32}, {128, 2, 8, 8},
    {128, 4, 4, 8},  {128, 1, 16, 8},
};

// The fused kernel packs a row's box position in 10 bits per axis.
constexpr bool halo_boxes_fit_10_bits() {
  for (const auto& b : kHaloBoxes) {
    if (b.bqd > 1023 || b.bqh > 1023 || b.bqw > 1023) return false;
  }
  return true;
}
static_assert(halo_boxes_fit_10_bits(), "kHaloBoxes extents must fit 10 bits");

// 3xTF32 keeps split A and B fragments live; its BN 64 halo tile spilled, so strict fp32 stops
// at BN 32 there (wider layers take more N tiles).
constexpr int halo_max_bn(Mode m) { return m == Mode::kTf32x3 ? 32 : kHaloMaxBn; }

// Smallest of BN 16 / 32 / 48 / 64 covering Cout/groups, else the mode's widest.
inline int pick_bn_halo(long long cout_g, Mode m) {
  for (int bn : {16, 32, 48, 64}) {
    if (bn == halo_max_bn(m) || cout_g <= bn) return bn;
  }
  return halo_max_bn(m);
}

// The fused kernel's w-phase pairs (halo_kernel.cuh, PAIR) hold two tiles of accumulators per
// thread. BM 128 rows of 4 x 2 warps (warp tile 32 x 16) keep that at 16 + 16 per thread, so
// two CTAs fit per SM, and a warp's 32 rows are one w line of a bqw = 32 box.
inline constexpr TileConfig kFusedPairTile = {32, 128, 4, 2};
constexpr int kFusedPairBn = kFusedPairTile.bn;

// The per-phase halo kernel skipping a densified layer's zero weight blocks (DMASK) at BN 32:
// 4 x 2 warps (warp tile 64 x 16) instead of 8 x 1, so a warp's columns span fewer groups and
// it skips whole channel chunks, or K steps, that meet none of them (their A and B fragments
// too).
inline constexpr TileConfig kDenseSkipTile = {32, 256, 4, 2};

// Upper bound the host puts on a halo CTA's dynamic shared memory (the device's opt-in limit
// also applies).
constexpr int kHaloSmemCap = 200 * 1024;

constexpr int kBkBytes = 64;     // K extent of one pipeline stage, in bytes
constexpr int kChunkBytes = 16;  // one ldmatrix row / one vector load
constexpr int kChunks = kBkBytes / kChunkBytes;
constexpr int kRowBytes = kBkBytes + 16;  // +16 B pad: 8 rows of an ldmatrix hit distinct banks

// Dynamic shared memory of a halo CTA: the tap table (tap_cap entries: box offset and weight
// tap, 4 B each), the B stages, and the halo box [pos][64 B + 16 B pad]. Per-phase CTAs
// (deep_chunks = 0) also hold the y-offset row table, load the box per channel chunk into one
// of box_bufs buffers (2: the next chunk's box streams in during this chunk's MMAs) and let
// the epilogue tile [BM][BN+1] fp32 reuse the B and box bytes. Fused CTAs keep all deep_chunks
// chunks of the box for every phase and store from registers (no CTA tile; 16-bit types pass
// through a small per-warp buffer, w-phase pairs through kPairBufWords a warp), with a
// phase-independent row table of 12 B per row and a phase table after the tap table.
// The fused kernel's per-warp store buffer (16-bit types, without pairs): 8 rows of the
// warp's TN columns, row stride TN / 2 + 4 words (conflict-free pair writes, 16-byte aligned
// rows).
constexpr int fused_warp_buf_words(int bn) {
  return 8 * (bn / halo_tile(bn).warps_n / 2 + 4);
}
// The paired kernel's per-warp transpose buffer (PAIR, every type): 8 channels x 32 outputs
// along w (16 rows, both w-phases) per pass, row stride 36 words: the lanes' float2 writes
// (phase 0 and 1 of a row side by side) hit distinct banks, and each channel's 32 outputs read
// back as one contiguous run of y.
constexpr int kPairBufStride = 36;
constexpr int kPairBufWords = 8 * kPairBufStride;
// 16-bit types pack both phases of a (row, channel) into one word first: 16 words a channel,
// stride 20, so the four ti lanes' channel pairs (2 ti + e) land 8 banks apart.
constexpr int kPairBufStride16 = 20;
static_assert(8 * kPairBufStride16 <= kPairBufWords, "the 16-bit transpose fits the buffer");
constexpr long long fused_epi_bytes(int bn, int elem_bytes, bool pair = false) {
  if (pair) return 4LL * kFusedPairTile.warps_m * kFusedPairTile.warps_n * kPairBufWords;
  return elem_bytes == 2
             ? 4LL * halo_tile(bn).warps_m * halo_tile(bn).warps_n * fused_warp_buf_words(bn)
             : 0;
}

// The fused kernel's phase table (halo_kernel.cuh, fused_phase_entry): 4 bytes per stride
// phase, a whole number of 16-byte rows so the B stages after it stay aligned.
constexpr long long fused_phase_table_bytes(long long phases) {
  return 4 * ((phases + 3) / 4 * 4);
}
// Its entries pack the tap table start in 16 bits and a phase's taps in 15.
constexpr long long kFusedMaxTaps = 1 << 15;

// The fused kernel with resident weights (halo_kernel.cuh, RES): B of every tap table entry and
// channel chunk, in place of the stages.
constexpr long long fused_res_b_bytes(int bn, long long chunks, long long kvol) {
  return chunks * kvol * bn * kRowBytes;
}
constexpr long long halo_stage_bytes(int bn) { return 1LL * halo_tap_bufs(bn) * bn * kRowBytes; }

constexpr long long halo_smem_bytes(int bn, int bm, long long halo_pos, long long tap_cap,
                                     long long deep_chunks, int elem_bytes, int box_bufs = 1,
                                     bool pair = false, long long phases = 1) {
  const long long stages = halo_stage_bytes(bn);
  if (deep_chunks > 0) {
    return 12LL * bm + fused_epi_bytes(bn, elem_bytes, pair) + 8LL * tap_cap +
           fused_phase_table_bytes(phases) + stages +
           halo_pos * deep_chunks * kRowBytes;
  }
  const long long main = stages + box_bufs * halo_pos * kRowBytes;
  const long long epi = 4LL * bm * (bn + 1);  // the tile is bm x bn; sized as when padded
  return 8LL * bm + 8LL * tap_cap + (main > epi ? main : epi);
}

// ---- transposed wgmma path (twg_kernel.cuh, sm_90a, bf16/fp16/TF32): D[Cout x positions] per
// warpgroup, M = 64 output channels (zero rows past Cout/g), N = a run of NR consecutive box
// positions (generated wrappers: scripts/gen_wgmma.py kTwgN). A CTA is `slices` warpgroups,
// one depth slice of bqh x bqw outputs each; a slice's run is bqh lines of the box's width, so
// bqh * (bqw + span_w) <= NR and the columns past bqw are computed and dropped. Every CTA
// streams all of its phase's weights from L2, so a CTA takes four slices (one CTA per SM):
// with two, the weight reads alone kept L2 85 % busy on suite case 3 (ncu, H100). Two slices
// with half the weight stage (two CTAs per SM, so one CTA's box load and epilogue overlap the
// other's MMAs) are kept for phases with few taps (plan_twg). With a.stack = J > 1 (narrow
// layers, Cout/g <= 64 / J) each slice is J depth planes, its 64 rows J blocks of channels, or
// (a.stack_w) one plane whose J blocks hold J neighbouring w taps, summed in the epilogue.
inline constexpr int kTwgRuns[] = {128, 144, 160};
// 3xTF32 (strict fp32): big and small TF32 copies of both operands, three wgmmas per K step into
// three accumulator sets (3 x NR / 2 registers), so one run length, two slices and one CTA per
// SM (up to 255 registers per thread).
constexpr int kTwgX3Run = 128;
constexpr int kTwgSlices = 4;       // warpgroups per CTA = box depth in outputs (or 2: plan_twg)
// Weight stages. The one-term modes keep a stage of wgmmas in flight (wgmma_wait<1>), so of
// three stages one is read, one in flight and one loading: the loads run one stage ahead.
// 3xTF32 retires every stage (wgmma_wait<0>), so two stages give it the same and free a stage
// (32 KB) for the box. x3: 3xTF32, its fp16 products (h16) included.
constexpr int twg_stages(bool x3) { return x3 ? 2 : 3; }
// mbarriers in the head: two for the box buffers, a full and an empty one per weight stage
// (3xTF32's two stages leave room for its two turn mbarriers, twg_kernel.cuh), and 3xTF32's
// staging buffer's full and empty ones (a.box_stage).
constexpr int kTwgBars = 2 + 2 * twg_stages(false) + 2;
// 3xTF32 staged boxes (a.box_stage): the staging buffer's w extent for a box line of hw
// positions, whose first sits up to 3 columns past the 16-byte aligned TMA coordinate.
constexpr int twg_stage_w(int hw) { return (hw + 3 + 3) / 4 * 4; }
// 3xTF32 boxes reloaded per chunk and staged in pieces (a.box_stage 2): kTwgPieces pieces of
// kTwgPieceCh channels (one 16-byte plane of a box row each) through two piece buffers.
constexpr int kTwgPieceCh = 4;
constexpr int kTwgPieces = 4;
// 8 with four slices; long_stage (3xTF32 only, a.twg_long) twice that: 3xTF32 retires each
// stage's wgmmas and adds its partial sums (wgmma_wait<0>) before the next, so a stage of twice
// the taps halves those drains.
constexpr int twg_taps_per_stage(int slices, bool long_stage = false) {
  return (long_stage ? 4 : 2) * slices;
}
// 3xTF32: the most K steps whose big products chain in the tensor core (its truncating
// accumulation) before an IEEE fold into acc. Long stages (16 K steps, folded per stage) keep
// suite cases 2 and 11 at 3.3e-7; shorter stages fold once that many could be exceeded, not
// per stage: a fold (then 64 adds and 64 zeroings per thread; the zeroings are gone since
// design doc v36) outnumbered the instructions that issue a stage of 1-2 taps (suite cases 1,
// 3, 4 and 12 2-4 % faster, H100, 2026-11-26).
constexpr int kTwgX3FoldK = 16;
constexpr int kTwgTapBytes = 64 * kBkBytes;  // one tap's A: [64 rows][64 B], 64-byte swizzle
// 3xTF32 as fp16 products (a.h16, h16_split.cuh): channels per 64-byte operand row (16 big and
// 16 small halves), so the packed weight's rows are padded to a multiple of it.
constexpr int kH16Chunk = 16;
constexpr int h16_cin_pad(int cin_g) { return (cin_g + kH16Chunk - 1) / kH16Chunk * kH16Chunk; }
// The weight stages and boxes start at a multiple of the 64-byte swizzle's period.
constexpr int kTwgAlign = 512;

// Rows of one box buffer: the box's `pos` positions, or as far as the furthest B operand reaches,
// `reach` (the last slice's run of NR rows from the first tap, the tap with the largest box
// offset), rounded up to whole 8-row core matrices. Rows past the box only feed output rows
// that are never stored (halo columns, rows past bqh lines); a slack of NR rows past the box
// (the first version) was up to 9 KB per buffer more than they need.
constexpr long long twg_box_rows(long long pos, long long reach) {
  return ((pos > reach ? pos : reach) + 7) / 8 * 8;
}

// Row padding of twg's fp32 epilogue tile (TileLayout::kPadded4, tile_common.cuh): rows of
// 64 / stack + kTwgTilePad floats, so a store's rows two apart start 8 banks apart.
constexpr int kTwgTilePad = 4;

// Dynamic shared memory of a twg CTA: kTwgBars mbarriers, the row table (8 B per output row,
// bm <= slices x planes x NR, planes = stacked depth planes; tight_rows: bm, twg_head_bytes),
// the tap table (4 B per entry: a
// weight row or offset per tap, or per shift and stack block), then
// (kTwgAlign-aligned, the slack included) the weight stages and box_bufs boxes [pos_pad][64 B]
// (pos_pad: twg_box_rows), with the epilogue tile over them, [bm] rows of 64 / stack +
// kTwgTilePad fp32 (with w-stacked blocks, wstack, one such tile per block). split = 2
// (3xTF32) doubles the weight stages and the boxes: a big and a small copy of each; h16
// (3xTF32 as fp16 products, one copy) keeps 3xTF32's two stages.
// stage_bytes: a staged box's staging buffer after the boxes (a.box_stage).
// The row table has slices x planes x nr rows (planes = stacked depth planes), a bound, or
// `tight_rows` > 0: the tile's bm = slices x planes x bqh x bqw, in the kernel that may stage
// its box in pieces (3xTF32, the scalar loader's x, depth planes stacked), which needs those
// bytes (a run-time count in every kernel moved the registers and spills of others).
constexpr long long twg_head_bytes(int nr, long long tap_cap, int slices, int planes,
                                   int tight_rows = 0) {
  return (8LL * kTwgBars + (tight_rows > 0 ? 8LL * tight_rows : 8LL * slices * planes * nr) +
          4 * tap_cap + 127) / 128 * 128;
}
constexpr long long twg_smem_bytes(int nr, int bm, long long pos_pad, long long tap_cap,
                                   int box_bufs, int slices, int stack, int split = 1,
                                   bool wstack = false, bool long_stage = false,
                                   long long stage_bytes = 0, bool tight_rows = false,
                                   bool h16 = false) {
  const long long main =
      1LL * split * twg_stages(split == 2 || h16) * twg_taps_per_stage(slices, long_stage) *
          kTwgTapBytes +
      1LL * split * box_bufs * kChunks * pos_pad * kChunkBytes + stage_bytes;
  const long long epi = 4LL * bm * (wstack ? stack : 1) * (64 / stack + kTwgTilePad);
  return twg_head_bytes(nr, tap_cap, slices, wstack ? 1 : stack, tight_rows ? bm : 0) +
         kTwgAlign +
         (main > epi ? main : epi);
}

// ---- non-overlapping path (pw_kernel.cuh, sm_90a, bf16/fp16/TF32/3xTF32): one dense GEMM of
// input positions x (tap, Cout/g) over Cin/g. A CTA is two warpgroups of 64 rows; BN columns of
// (tap, co) per CTA (generated wrappers: scripts/gen_wgmma.py kPwN). K streams through
// cp.async stages of kPwBkBytes of channels, A [kPwBm][128 B] and B [BN][128 B] in the 128-byte
// swizzle layout: 8 threads read one whole line of x per request.
inline constexpr int kPwBns[] = {64, 128, 256};
constexpr int kPwBm = 128;
constexpr int kPwStages = 3;         // TF32: one tile per CTA
constexpr int kPwStagesPersist = 2;  // persistent CTAs (16-bit, 3xTF32), one chunk ahead
// TF32 "lean" CTAs: two stages where three would leave one CTA per SM and two leave two (NCDHW
// x adds the transposed A buffer, B from w the transposed B buffer). The second CTA's loads and
// epilogue then overlap this one's MMAs, which is worth more than a deeper prefetch on long K
// (suite case 9 TF32 NCDHW, 8 chunks: 0.0627 -> 0.0511 ms, H100, 2026-11-26). Short K keeps
// three (case 10 NCDHW, 2 chunks, lost 7 % with two on an H200: both stages are allocated
// either way; design doc v26).
constexpr int kPwStagesLean = 2;
constexpr int kPwBkBytes = 128;

// 16-bit and 3xTF32 pw CTAs are persistent: they loop over tiles and load the next tile's
// first chunk during this tile's epilogue. The epilogue tile then takes the stage just
// consumed, so a stage must hold it. TF32's fp32 tile would double its stages and halve its
// CTAs per SM: it stays one tile per CTA. 3xTF32 runs one CTA per SM anyway (registers), and
// its prologue (tables, the first chunk's latency) and epilogue had been a third of the
// kernel's warp samples (ncu on suite case 9, H100, 2026-11-27).
// Strict fp32 as fp16 products (`h16`, h16_split.cuh: one B copy of fp16 halves) is persistent
// like 3xTF32.
constexpr bool pw_persistent(int elem_bytes, int split = 1, bool h16 = false) {
  return elem_bytes == 2 || split == 2 || h16;
}
// Stages: persistent (16-bit, 3xTF32) two, TF32 three (lean: two), h16 three (below). For
// 3xTF32 (split 2: big and small copies of B, A staged once) a third fits (A has no K-major
// buffers) and the K loop takes any count, but three measured 0-5 % slower than two on suite
// cases 9 and 10 (H100, 2026-11-27); so did three with chunk kt + 1 issued before chunk kt
// retires (wgmma_wait<1>, no faster, case 10 channels_last 13-15 % slower: design doc v41).
// Fewer instructions per chunk paid instead (v41: the copies' address math, the split, the fold
// every 128 K).
// Strict fp32 as fp16 products (h16): three. Its chunk's wgmmas take half 3xTF32's tensor time,
// so one chunk in flight left the loads' latency exposed.
constexpr int kPwStagesH16 = 3;
constexpr int pw_stages(int elem_bytes, int split, bool lean = false, bool h16 = false) {
  return h16                                ? kPwStagesH16
         : pw_persistent(elem_bytes, split) ? kPwStagesPersist
         : lean                             ? kPwStagesLean
                                            : kPwStages;
}
// 3xTF32 holds two accumulator sets of BN / 2 registers per thread and two chunks of A
// fragments: BN <= kPwX3MaxBn.
constexpr int kPwX3MaxBn = 128;
// Strict fp32 as fp16 products (h16) holds a third accumulator set (the small products): BN 128
// only where K (Cin/g) fits one fold of part (no separate acc, pw_kernel.cuh's SHORT), else 64.
constexpr int kPwH16ShortK = 256;
// ... and takes them (auto) where taps x Cout/g >= kPwH16MinCols: its scale pass reads x once
// more, which a layer with fewer columns per x element does not earn back (H200, 2026-11-27,
// torch.profiler, us: suite case 9 (1024 columns) kernel 60.7 -> 46.8 and the pass 3.9; case
// 10 (256) 383 -> 349 and the pass 42).
constexpr int kPwH16MinCols = 512;

// The pw epilogue tile's row: BN elements of the output type plus a pad that puts the rows of
// a warp's pair writes on distinct banks (rows 4 words apart for 32-bit pairs, 8 for 64-bit
// fp32 pairs) and keeps every row 16-byte aligned.
constexpr int pw_tile_row_bytes(int bn, int elem_bytes) {
  return bn * elem_bytes + (elem_bytes == 2 ? 16 : 32);
}

// The pw epilogue tile of one output type: row-major [kPwBm][pw_tile_row_bytes] (channels_last
// y) or column-major [BN][kPwBm + pad] (NCDHW y, the pad puts a warp's element writes on
// distinct banks); the larger of the two.
constexpr int pw_tile_bytes(int bn, int elem_bytes) {
  const int row = kPwBm * pw_tile_row_bytes(bn, elem_bytes);
  const int col = bn * (kPwBm + (elem_bytes == 2 ? 8 : 4)) * elem_bytes;
  return row > col ? row : col;
}

// One pw stage: A [kPwBm][128 B] then B [BN][128 B] (split 2: then B's small copy, then room
// for B's rows as read straight from w, which the split transposes into the two copies; A is
// split in registers; h16: B's one copy of fp16 halves, then room for w's rows); persistent: at
// least the epilogue tile, in whole 1024-byte swizzle periods.
constexpr int pw_stage_bytes(int bn, int elem_bytes, int split = 1, bool h16 = false) {
  const int ab = (kPwBm + (split == 2 ? 3 : h16 ? 2 : 1) * bn) * kPwBkBytes;
  const int tile = (pw_tile_bytes(bn, elem_bytes) + 1023) / 1024 * 1024;
  return pw_persistent(elem_bytes, split, h16) && tile > ab ? tile : ab;
}

// One set of pw tables: the row table (32 B per row), the column table (16 B per column), the
// quad table (16 B per 4 rows).
constexpr int pw_tables_bytes(int bn) { return 32 * kPwBm + 16 * bn + 4 * kPwBm; }

// Dynamic shared memory of a pw CTA: two sets of tables, then (1024-byte aligned, the slack
// included) the stages. Without persistence the epilogue tile reuses every stage, and a layer
// whose K is fewer 128-byte chunks than kPwStages only touches that many stages (the loader
// issues none past K), so the host asks for `stages` = min(kPwStages, chunks): more CTAs per SM
// fit. A 32-bit A always goes to the wgmma from registers (TF32 rounds it there, 3xTF32 and
// fp16 products split it), so NCDHW x needs no K-major A buffer; TF32 reads the repacked B
// (K-major as it lands), and 3xTF32's and h16's B from w is transposed into each stage's
// copies (pw_stage_bytes).
constexpr int pw_smem_bytes(int bn, int stages, int elem_bytes, int split = 1, bool h16 = false) {
  const int main = stages * pw_stage_bytes(bn, elem_bytes, split, h16);
  const int tile = pw_tile_bytes(bn, elem_bytes);
  return 2 * pw_tables_bytes(bn) + 1024 + (main > tile ? main : tile);
}

}  // namespace fwd
}  // namespace convt3d
