// Non-overlapping forward (sm_90a, bf16/fp16/TF32/3xTF32, channels_last or NCDHW x): layers whose
// kernel equals their stride on every axis (k = s, no dilation; k = s = 1 included) and whose
// outputs are all reached (output_padding <= padding). Each input position then feeds exactly
// one output per tap, so the whole layer is one dense GEMM
//   D[m][(tap, co)] = sum over ci of x[m][ci] * W[ci][co][tap],   m = (n, id, ih, iw),
// whose rows are scattered to y at o = i * s - p + tap (dropped outside y). The per-phase
// kernels re-gather x once per phase (= tap) with N = Cout; here N runs over (tap, co), so
// one A tile feeds every tap of its N tile, and both operands go to the tensor core by
// descriptor.
//
// A CTA is two warpgroups: BM = kPwBm rows (64 per warpgroup) x BN columns of (tap, co) of
// one group; the packed weight [g][tap][co][cin_pad] is already that K-major B matrix. K
// streams in kPwBkBytes (128-byte) chunks through S cp.async stages, each operand
// [row][128 B] in the 128-byte swizzle layout (wgmma_desc_sw128); the loader runs S - 1 chunks
// ahead. 16-bit CTAs are persistent (S = 2): each loops over tiles, and the chunk stream runs
// on across them, so the next tile's first chunk loads during this tile's last MMAs and its
// epilogue (short K loops are a latency chain per tile: suite case 10 NCDHW bf16 0.240 ->
// 0.201 ms). TF32 (S = 3) runs one tile per CTA. TF32's A goes to the wgmma from registers,
// each thread reading its fragments from the staged chunk and rounding them there (the repack
// rounded the weight): neither a rounding pass nor, with NCDHW x, a transpose in shared memory
// (H200, scripts/ab_trees.sh, 2026-11-28: suite case 9 NCDHW 0.0405 -> 0.0364 ms, case 10
// 0.278 -> 0.250 with B repacked; design doc v53). The epilogue stages the tile in
// shared memory and writes whole 16-byte channel vectors, consecutive threads on consecutive
// addresses (in channels_last the taps of one output row segment are adjacent), so each
// warp store covers whole lines; the L2 took 8 requests per 128 bytes when the accumulators
// were stored directly. With NCDHW x (XMN below) A is copied as 16-byte runs of positions
// (read M-major in 16-bit, from registers in fp32), and the k_w adjacent NCDHW
// outputs of a column group leave together. With WD, B is read straight from w (no repack;
// see below). 3xTF32 (strict fp32): A goes to the wgmma from registers, each thread reading
// its fragments from the staged chunk (NCDHW x needs no transpose) and splitting them into
// big and small TF32 parts there; each stage also holds B's small parts, split in shared
// memory (the repack keeps B in full fp32, so the packed weight is no larger than TF32's: the
// issue's 5 % memory bound). A K step is three wgmmas, a_small b_big, a_big b_small and
// a_big b_big, into part, which is added into acc with IEEE adds after every kFold chunks (the
// tensor core truncates as it accumulates). Chunk kt + 1's A is loaded and its B split while
// chunk kt's wgmmas run. Before, A was split in shared memory too and the small products went
// to a third accumulator set. By a byte count, A's shared-memory traffic (its split, and
// the tensor core reading it three times per K step) was about a third of the K loop's shared
// bytes (design doc v38); in registers, suite cases 9 and 10 ran 1-11 % faster (v39). 3xTF32
// CTAs are persistent, like 16-bit ones (pw_persistent).
// H16 (strict fp32 with dense x: three fp16 products, h16_split.cuh): A is split into fp16
// halves of x 2^ex in registers, m16n8k16 fragments; B holds w 2^ew's halves, each 16-channel
// group's big then small ones in its 32 + 32 bytes (the repack writes them, or pw_split_h16_cols
// splits w's staged rows), so a chunk of 32 channels is two K steps of three k16 wgmmas: a_big
// b_big into part, a_small b_big and a_big b_small into acc_s; h16_finish undoes the scales.
// Three stages (kPwStagesH16). BN 128 holds part, acc_s and the fragments only where K fits one
// fold (SHORT: part is the result); BN 64 keeps acc as well.
// Every y element is written once, by one thread; no atomics.
#pragma once

#include <climits>

#include "h16_split.cuh"
#include "launch.h"
#include "pdl.cuh"
#include "resident.h"
#include "smem_attr.h"
#include "tile_common.cuh"
#include "wgmma.cuh"

namespace convt3d {
namespace fwd {

template <Mode MODE, int BN, bool LEAN = false, bool H16 = false>
struct PwCfg {
  using T = typename ModeTraits<MODE>::T;
  // 3xTF32: A split in registers, B's big and small TF32 copies in each stage, three wgmmas
  // per K step. H16 (strict fp32 as fp16 products, h16_split.cuh): A split into fp16 halves
  // in registers, B one copy whose 16-channel groups hold their big then their small halves,
  // three k16 wgmmas per 16 channels.
  static constexpr bool X3 = MODE == Mode::kTf32x3;
  static_assert(!X3 || BN <= kPwX3MaxBn, "pw 3xTF32: registers (kPwX3MaxBn)");
  static_assert(!H16 || X3, "pw: fp16 products are strict fp32's");
  static constexpr int kSplit = X3 && !H16 ? 2 : 1;
  // 16-bit, 3xTF32 and H16: persistent CTAs (pw_persistent) with two stages; TF32: three, one
  // tile per CTA (LEAN: two, kPwStagesLean).
  static_assert(!LEAN || MODE == Mode::kTf32, "pw: lean stages are TF32's");
  static constexpr bool kPersist = pw_persistent(int(sizeof(T)), kSplit, H16);
  static constexpr int BM = kPwBm, NT = 2 * 128,
                       S = pw_stages(int(sizeof(T)), kSplit, LEAN, H16);
  static constexpr int KRUN = kChunkBytes / int(sizeof(T));  // elements per 16-byte chunk
  static constexpr int PL = kPwBkBytes / kChunkBytes;         // 16-byte chunks per row
  static constexpr int BK = kPwBkBytes / int(sizeof(T));      // elements per stage
  static constexpr int kStageA = BM * kPwBkBytes, kStageB = BN * kPwBkBytes;
  static constexpr int kStage = pw_stage_bytes(BN, int(sizeof(T)), kSplit, H16);  // A, B (, slack)
  static constexpr int kSmallB = kStageB;  // 3xTF32: B's small copy, this far after B
  // K steps (32 bytes of each operand row) per chunk: TF32's k8, H16's k16 (a chunk's 32
  // channels are 128 bytes of fp16 halves).
  static constexpr int KS = H16 ? 2 : PL / 2;
  // 3xTF32: chunks whose products chain in part (the tensor core's truncating accumulation)
  // before an IEEE fold into acc: twg's K span (kTwgX3FoldK K steps), whose error it measured.
  static constexpr int kFold = kTwgX3FoldK / KS;
  static constexpr int RS = NT / PL;                      // rows one pass of copies covers
  static constexpr int PA = BM / RS, PB = BN / RS;        // copies per thread and stage
  static_assert(PA * RS == BM && PB * RS == BN, "stage split");
  static constexpr int kTables = pw_tables_bytes(BN);  // one set of row and column tables
  // CTAs per SM the registers must allow: BN 64 (32 accumulators per thread) fits in 64
  // registers, so four (short K loops are latency-bound: more CTAs overlap more loads), three
  // for TF32, whose chunk of A fragments (16 registers, read by the wgmmas until they retire)
  // spilled 60-76 bytes at 64; BN 128 (64 accumulators) two; BN 256 holds 128. 3xTF32 holds
  // two sets and two chunks of A fragments (big and small): one CTA per SM.
  static constexpr int kMinBlocks =
      X3 ? 1 : BN <= 64 ? (sizeof(T) == 4 ? 3 : 4) : BN <= 128 ? 2 : 1;
};

// 3xTF32 B read from w: w's rows of a chunk staged as [32 K rows][ROWS] fp32 -> K-major
// [ROWS][128 B] in the 128-byte swizzle, the big parts, and the small ones ROWS x 128 bytes on
// (split_tf32, as A and the repacked B are split: small keeps its low bits for the tensor core
// to drop; masked, as tf32_split4 does, it cost 4 more instructions an element). Chunk (row r,
// 16-byte chunk c) = K rows 4 c .. 4 c + 3 of r: consecutive threads read consecutive rows and
// write 8 distinct swizzled slots per quarter warp.
template <int ROWS, int NT>
__device__ __forceinline__ void pw_transpose_split_tf32(const float* stg, unsigned char* dst) {
  constexpr int kPl = kPwBkBytes / kChunkBytes;
  static_assert((ROWS * kPl) % NT == 0, "pw: whole transpose passes");
#pragma unroll
  for (int j = 0; j < (ROWS * kPl) / NT; ++j) {
    const int q = int(threadIdx.x) + NT * j, r = q % ROWS, c = q / ROWS;
    unsigned char* d = dst + r * kPwBkBytes + ((c ^ (r % 8)) * kChunkBytes);
    uint4 big, small;
    split_tf32(__float_as_uint(stg[(4 * c + 0) * ROWS + r]), big.x, small.x);
    split_tf32(__float_as_uint(stg[(4 * c + 1) * ROWS + r]), big.y, small.y);
    split_tf32(__float_as_uint(stg[(4 * c + 2) * ROWS + r]), big.z, small.z);
    split_tf32(__float_as_uint(stg[(4 * c + 3) * ROWS + r]), big.w, small.w);
    *reinterpret_cast<uint4*>(d) = big;
    *reinterpret_cast<uint4*>(d + ROWS * kPwBkBytes) = small;
  }
}

// H16 with B read from w: a chunk's w rows staged as [32 K rows][BN] fp32 -> B K-major
// [BN][128 B] in the 128-byte swizzle, each 16-channel group as its 16 big then its 16 small
// halves of w times s (h16_split.cuh). A thread takes column n = 32 (warp % (BN / 32)) + lane
// and the 8-channel groups h = warp / (BN / 32) + G i (G = NT / BN): exactly the rows its warp
// copied (pw_fwd_kernel's wd_koff), so a warp barrier orders them. Reads: consecutive lanes on
// consecutive columns; writes: 8 lanes on 8 distinct swizzled chunks.
template <int BN, int NT>
__device__ __forceinline__ void pw_split_h16_cols(const float* stg, unsigned char* dst, float s,
                                                  int warp, int lane) {
  constexpr int kG = NT / BN;  // warps sharing a column block
  const int n = 32 * (warp % (BN / 32)) + lane;
  unsigned char* row = dst + n * kPwBkBytes;
#pragma unroll
  for (int i = 0; i < 4 / kG; ++i) {
    const int h = warp / (BN / 32) + kG * i;
    uint32_t v[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) v[e] = __float_as_uint(stg[(8 * h + e) * BN + n]);
    uint2 b0, s0, b1, s1;
    split_h16_4(v, s, b0, s0);
    split_h16_4(v + 4, s, b1, s1);
    const int q = (h / 2) * 4 + h % 2;  // big halves' 16-byte chunk; small ones 2 further
    *reinterpret_cast<uint4*>(row + ((q ^ (n % 8)) * kChunkBytes)) =
        make_uint4(b0.x, b0.y, b1.x, b1.y);
    *reinterpret_cast<uint4*>(row + (((q + 2) ^ (n % 8)) * kChunkBytes)) =
        make_uint4(s0.x, s0.y, s1.x, s1.y);
  }
}

// One row of the tile: its x offset (group's channel 0), the y offset of its output corner
// o0 = i * s - p (any channel 0), o0 per axis, and whether every tap lands inside y.
struct alignas(16) PwRow {
  int64_t x, y;
  int o0[3], inside;
};
// XMN: rows 4 q .. 4 q + 3 (a quad): row 4 q's x offset (-1 past M), where the loader's 16-byte
// runs of positions start, and its y offset if the quad's rows are adjacent w of one input line
// and all inside y (k_w = s_w = 2; else -1), where the epilogue's 16-byte stores start. A warp
// reads 32 quads, 16 bytes apart here, where it had read 32 rows 128 bytes apart, all on one
// bank (H100 A/B with the fp32 store split below: suite case 10 bf16 NCDHW 0.219 -> 0.144 ms).
struct alignas(16) PwQuad {
  int64_t x, y;
};

// XMN (a.x_mn): x's positions are contiguous per channel (NCDHW), so A arrives as 16-byte runs
// of positions. 16-bit: stored M-major ([warpgroup][K row][64 positions], 128-byte swizzle)
// and read transposed by the wgmma. fp32 (whose wgmma reads only K-major operands from shared
// memory): staged as [K row][BM positions] and read from there into registers (load_a). Its
// columns run (co, td, th, tw), so the k_w
// adjacent NCDHW outputs of a (row, co, td, th) are adjacent columns, and a contiguous w
// holds each K row's columns in that order.
// WD (a.w_direct): w itself is B, N-major: K row ci of group g starts at w + (g cin_g + ci) ws0
// and holds the ncols columns contiguously, in the kernel's column order (host: channels_last
// w without XMN, contiguous w with it); the weight repack (a launch and a buffer per call) is
// skipped. 16-bit: stored [BN / 64 column blocks][BK K rows][128 B] in the 128-byte swizzle
// and read transposed by the wgmma. 3xTF32 (BT; its wgmma reads K-major B only): staged as
// [K row][BN] and transposed as it is split. TF32 never reads w directly (host, w_direct_ok).
// a if FIRST, else b (operands of different types: the branch not taken is discarded).
template <bool FIRST, class A, class B>
__device__ __forceinline__ auto& pick_ref(A& a, B& b) {
  if constexpr (FIRST) {
    return a;
  } else {
    return b;
  }
}

// SHORT (H16, K within one fold, C::kFold chunks): part is the result, no acc (BN 128's three
// accumulator sets and A fragments spilled).
template <Mode MODE, int BN, bool XMN, bool WD, bool LEAN, bool H16 = false, bool SHORT = false>
__global__ void __launch_bounds__(PwCfg<MODE, BN>::NT, PwCfg<MODE, BN>::kMinBlocks)
    pw_fwd_kernel(const __grid_constant__ FwdArgs a) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();
#else
  using C = PwCfg<MODE, BN, LEAN, H16>;
  using T = typename C::T;
  // A 32-bit A goes to the wgmma from registers (RA: TF32 rounds it there, 3xTF32 and fp16
  // products split it), read from the staged chunk: K-major [BM][128 B], or with NCDHW x (XT)
  // as staged, [K row][BM] (TF32's wgmma reads only K-major operands from shared memory).
  constexpr bool RA = sizeof(T) == 4;
  constexpr bool XT = XMN && RA;             // A staged [K row][BM]
  static_assert(!WD || !RA || C::X3, "pw: TF32 reads the repacked B only");
  constexpr bool BT = WD && C::X3;  // B from w, transposed in shared memory as it is split
  // Where a stage's B copies land: BT stages w's rows after B's two K-major copies (in the
  // stage, which the epilogue tile makes large enough: pw_stage_bytes), and its split
  // transposes them there.
  constexpr int kBLoad = BT ? C::kStageA + C::kSplit * C::kStageB : C::kStageA;
  // XT: staged K row k's 16-byte chunk pc sits at chunk pc ^ 2 (k % 4) (positions m at
  // m ^ 8 (k % 4)), so a warp's A fragment reads (8 positions x 4 K rows) hit 32 banks.
  // H16 reads K rows 2 t, 2 t + 1 (+ 8) in lane t of a quad: chunk pc ^ 2 ((k / 2) % 4).
  auto xt_sw = [](int k) { return H16 ? (k >> 1) & 3 : k & 3; };
  auto xt_chunk = [&](int pc, int k) { return pc ^ (xt_sw(k) << 1); };
  constexpr int BM = C::BM, NT = C::NT, S = C::S, BK = C::BK, PL = C::PL;

  extern __shared__ __align__(128) unsigned char smem[];
  // Two sets of tables, [row][BM] [yc][BN] [tap][BN] [bias][BN] [quad][BM / 4] each: a
  // persistent CTA builds its next tile's set while this tile's epilogue still reads its own.
  auto s_row = [&](int b) { return reinterpret_cast<PwRow*>(smem + b * C::kTables); };
  auto s_yc = [&](int b) { return reinterpret_cast<int64_t*>(s_row(b) + BM); };
  auto s_tap = [&](int b) { return reinterpret_cast<int*>(s_yc(b) + BN); };
  auto s_bias = [&](int b) { return reinterpret_cast<float*>(s_tap(b) + BN); };
  auto s_quad = [&](int b) { return reinterpret_cast<PwQuad*>(s_bias(b) + BN); };
  // Stages at the next 1024-byte boundary (the swizzle pattern's period), each A [BM][128 B]
  // then B [BN][128 B]; K chunks: without persistence only min(S, kchunks) stages are used and
  // allocated (pw_smem_bytes).
  const uint32_t s0 = smem_addr(smem);
  unsigned char* stages = smem + (((s0 + 2 * C::kTables + 1023) & ~1023u) - s0);
  const uint32_t sa = smem_addr(stages);
  const int kchunks = (a.cin_g + BK - 1) / BK;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int ncols = a.k[0] * a.k[1] * a.k[2] * a.cout_g;  // N of the GEMM
  // Column col of the GEMM: its tap (td, th, tw) and channel co, ordered (tap, co), or with
  // XMN (co, tap); its row of the packed weight [tap][co] is tap * cout_g + co. Divided by the
  // host's magic numbers (a run-time division is some 20 dependent instructions).
  auto col_tap = [&](int col, int& td, int& th, int& tw, int& co) {
    if constexpr (XMN) {
      const int sp = FastDiv(a.div_k[1]).divmod(FastDiv(a.div_k[2]).divmod(col, tw), th);
      co = FastDiv(a.div_k[0]).divmod(sp, td);
    } else {
      const int sp = FastDiv(a.div_k[2]).divmod(FastDiv(a.div_cog).divmod(col, co), tw);
      td = FastDiv(a.div_k[1]).divmod(sp, th);
    }
  };
  // Tile t: N tile fastest, so the CTAs sharing an A tile run together (A stays in L2). Fewer
  // than 2^31 tiles (host): FastDiv with the host's magic numbers.
  struct Tile {
    int g, n0;
    int64_t m0;
  };
  auto tile_of = [&](int t) {
    int nt, mt;
    const int g = FastDiv(a.div_mt).divmod(FastDiv(a.div_nt).divmod(t, nt), mt);
    return Tile{g, nt * BN, int64_t(mt) * BM};
  };

  // Tables of tile t into set b. Row m = (n, id, ih, iw) of x: its x offset (group's channel
  // 0), y offset of its output corner, o0 per axis and whether every tap lands inside y; past M
  // never loaded or stored. Column: the y offset of (tap, co) from an output corner, the tap
  // packed td | th << 8 | tw << 16 (-1 past N), and the bias.
  auto build_tables = [&](int t, int b) {
    const Tile tl = tile_of(t);
    if (tid < BM) {
      const int D = a.ax[0].in, H = a.ax[1].in, W = a.ax[2].in;
      const int64_t m = tl.m0 + tid;
      PwRow r;
      bool quad = false;
      if (m < int64_t(a.n) * D * H * W) {
        int i3[3], n;
        if (m < 0x7fffffffLL) {  // FastDiv with the host's magic numbers (set_pw_divs)
          int u = static_cast<int>(m);
          u = FastDiv(a.div_x[2]).divmod(u, i3[2]);
          u = FastDiv(a.div_x[1]).divmod(u, i3[1]);
          n = FastDiv(a.div_x[0]).divmod(u, i3[0]);
        } else {
          int64_t u = m;
          i3[2] = static_cast<int>(u % W);
          u /= W;
          i3[1] = static_cast<int>(u % H);
          u /= H;
          i3[0] = static_cast<int>(u % D);
          n = static_cast<int>(u / D);
        }
        r.x = int64_t(n) * a.xs[0] + int64_t(tl.g) * a.cin_g * a.xs[1] +
              int64_t(i3[0]) * a.xs[2] + int64_t(i3[1]) * a.xs[3] + int64_t(i3[2]) * a.xs[4];
        r.inside = 1;
        r.y = int64_t(n) * a.ys[0];
#pragma unroll
        for (int ax = 0; ax < 3; ++ax) {
          r.o0[ax] = i3[ax] * a.ax[ax].stride - a.pad[ax];
          r.inside &= int(r.o0[ax] >= 0 && r.o0[ax] + a.k[ax] <= a.out[ax]);
          r.y += int64_t(r.o0[ax]) * a.ys[2 + ax];
        }
        // A quad: rows m + 1 .. m + 3 share this line (and its d, h); w outputs only grow.
        quad = r.inside && a.k[2] == 2 && a.ax[2].stride == 2 && i3[2] + 3 < W &&
               r.o0[2] + 3 * a.ax[2].stride + a.k[2] <= a.out[2];
      } else {
        r.x = -1;
        r.y = 0;
        r.o0[0] = r.o0[1] = r.o0[2] = -(1 << 30);  // no tap brings it inside y
        r.inside = 0;
      }
      s_row(b)[tid] = r;
      if (XMN && tid % 4 == 0) s_quad(b)[tid / 4] = PwQuad{r.x, quad ? r.y : -1};
    }
    for (int c = tid; c < BN; c += NT) {
      const int col = tl.n0 + c;
      int tap = -1;
      int64_t yc = 0;
      float bv = 0.f;
      if (col < ncols) {
        int td, th, tw, co;
        col_tap(col, td, th, tw, co);
        tap = td | (th << 8) | (tw << 16);
        yc = int64_t(tl.g * a.cout_g + co) * a.ys[1] + int64_t(td) * a.ys[2] +
             int64_t(th) * a.ys[3] + int64_t(tw) * a.ys[4];
        if (a.bias != nullptr) {
          bv = to_float(static_cast<const T*>(a.bias)[int64_t(tl.g) * a.cout_g + co]);
        }
      }
      s_yc(b)[c] = yc;
      s_tap(b)[c] = tap;
      s_bias(b)[c] = bv;
    }
  };

  // ---- this thread's copies: rows tid / PL + RS j of B (and of K-major A), 16-byte chunk
  // tid % PL (PL consecutive threads read one row's kPwBkBytes). Sources are fixed for a
  // tile's whole K loop. Chunk kc of row r lands at chunk kc ^ (r % 8) of the row (128-byte
  // swizzle); RS is a multiple of 8, so that is the same for every j. XMN: the thread's KRUN
  // positions (chunk pc of the BM, the same for every j) of K rows k_base + j * kKStep;
  // DHW % KRUN == 0 (host), so a chunk never straddles two samples.
  const T* __restrict__ x = static_cast<const T*>(a.x);
  const T* __restrict__ wp = static_cast<const T*>(a.wp);
  const int kc = tid % PL, r_base = tid / PL;
  constexpr int kPc = BM / C::KRUN, kKStep = NT / kPc;  // position chunks per K row
  // WD: the thread's 16-byte chunk wc (KRUN columns) of K rows wk + kWStep j, a source and a
  // destination per stage and j. ncols is whole chunks (host), so a chunk is all in or all out.
  constexpr int kWc = BN / C::KRUN, kWStep = NT / kWc;  // chunks per K row, K rows per pass
  // 3xTF32: each warp copies what it reads before the K loop's CTA barrier, so a warp barrier
  // does there. A: the 16 rows (positions) of its fragments (load_a), every K row of them;
  // B from w (BT): the 32 columns x 16 K rows its share of the transpose reads
  // (pw_transpose_split_tf32: warp w, columns 32 (w % (BN / 32)), K rows 4 (w / (BN / 32)) +
  // kWStep j ..). XMN's K rows per 8-lane phase differ by 2 (f below), so the phase's 16-byte
  // writes hit both halves of xt_chunk's swizzle: no conflicts. The repacked B (split in place
  // by the thread that copied it) keeps the rows below.
  // H16: rows 4 apart per 8-lane phase (f: 0 4 1 5 2 6 3 7), whose xt_chunk swizzles differ
  // by 4 chunks; its B from w: a warp copies whole 8-row groups of K (pw_split_h16_cols: groups
  // warp / (BN / 32) + G i, rows wd_koff(j) apart).
  const int pc = C::X3 ? 4 * warp + lane % 4 : tid % kPc;
  const int q4 = lane / 4;  // f: 0 2 1 3 4 6 5 7
  const int k_base = H16     ? (q4 >> 1) | ((q4 & 1) << 2)
                     : C::X3 ? (q4 & 4) | ((q4 & 1) << 1) | ((q4 >> 1) & 1)
                             : tid / kPc;
  const int wc = C::X3 ? 8 * (warp % (BN / 32)) + lane % 8 : tid % kWc;
  const int wk = H16     ? 8 * (warp / (BN / 32)) + lane / 8
                 : C::X3 ? 4 * (warp / (BN / 32)) + lane / 8
                         : tid / kWc;
  // K rows of copy j past wk (B from w).
  auto wd_koff = [](int j) { return H16 ? 8 * (NT / BN) * (j >> 1) + 4 * (j & 1) : kWStep * j; };
  // Non-XMN A row j: 3xTF32 rows 16 warp + 4 j + lane / 8 (the quarter warp's 8 chunks of one
  // row), else r_base + RS j.
  auto a_row = [&](int j) { return C::X3 ? 16 * warp + 4 * j + lane / 8 : r_base + C::RS * j; };
  const T* a_src[C::PA];
  const T* b_src[WD ? 1 : C::PB];
  // LIM (3xTF32): XMN A's and WD B's source is, per tile, the thread's first K row, always a
  // valid address (x or w where the rows lie outside), with the limit a_lim / b_lim on the
  // K rows past it, beyond which the copies zero-fill. A copy's source is then that plus a
  // channel offset the same for every thread, with no select: ptxas had put per-thread 64-bit
  // multiplies under each copy's predicate (some 14 instructions a copy, 8 copies per chunk;
  // the K loop is now 31 % fewer instructions with NCDHW x). The other modes keep null sources:
  // the limits' registers made 16-bit BN 64 kernels (64 registers) spill.
  constexpr bool LIM = C::X3;
  int a_lim = 0, b_lim = 0;
  // Sources of tile t, from table set b (built and published by a barrier before).
  auto sources = [&](int t, int b) {
    const Tile tl = tile_of(t);
#pragma unroll
    for (int j = 0; j < C::PA; ++j) {
      if constexpr (XMN) {
        const int64_t xo = s_quad(b)[pc * C::KRUN / 4].x;  // one position chunk, every K row
        if constexpr (LIM) {
          a_src[j] = x + (xo >= 0 ? xo + int64_t(k_base) * a.xs[1] : 0);
          a_lim = xo >= 0 ? a.cin_g - k_base : INT_MIN;
        } else {
          a_src[j] = xo >= 0 ? x + xo : nullptr;
        }
      } else {
        const int64_t xo = s_row(b)[a_row(j)].x;
        a_src[j] = xo >= 0 ? x + (xo + kc * C::KRUN) : nullptr;
      }
    }
    if constexpr (WD) {
      if constexpr (LIM) {
        const bool in = tl.n0 + wc * C::KRUN < ncols;
        b_src[0] = wp + (in ? (int64_t(tl.g) * a.cin_g + wk) * a.ws0 + tl.n0 + wc * C::KRUN : 0);
        b_lim = in ? a.cin_g - wk : INT_MIN;
      } else {
        b_src[0] = tl.n0 + wc * C::KRUN < ncols
                       ? wp + ((int64_t(tl.g) * a.cin_g + wk) * a.ws0 + tl.n0 + wc * C::KRUN)
                       : nullptr;
      }
    } else {
#pragma unroll
      for (int j = 0; j < C::PB; ++j) {
        const int col = tl.n0 + r_base + C::RS * j;
        int td, th, tw, co;
        col_tap(col, td, th, tw, co);
        const int64_t prow = int64_t((td * a.k[1] + th) * a.k[2] + tw) * a.cout_g + co;
        b_src[j] = col < ncols
                       ? wp + ((int64_t(tl.g) * ncols + prow) * a.cin_pad + kc * C::KRUN)
                       : nullptr;
      }
    }
  };
  // BT stages rows [K row][BN] fp32 (BN * 4 bytes, unswizzled) for the transpose.
  constexpr int kWRowB = BT ? BN * 4 : kPwBkBytes;
  const uint32_t wd_dst = BT ? wk * kWRowB + wc * kChunkBytes
                             : (wc / 8) * (C::BK * kPwBkBytes) + wk * kPwBkBytes +
                                   (((wc % 8) ^ (wk % 8)) * kChunkBytes);
  static_assert(C::RS % 8 == 0, "swizzle phase must not depend on j");
  static_assert(!WD || ((BT || kWStep % 8 == 0) && C::PB * kWStep == C::BK), "WD: stage split");
  static_assert(!XMN || C::PA * kKStep == C::BK, "XMN: the stage's K rows in PA passes");
  const int swz = (kc ^ (r_base % 8)) * kChunkBytes;

  // Chunk c (channels c * BK ..) of the current sources into stage st, when `load`; always
  // commits (maybe an empty group), so the wait counts below hold. Channel tails: cin_g is
  // whole 16-byte chunks (host), so a chunk is all valid or all zero-filled.
  auto issue = [&](int c, int st, bool load) {
    if (load && c < kchunks) {
      const uint32_t a_st = sa + st * C::kStage, b_st = a_st + kBLoad;
      const bool ci_ok = c * BK + kc * C::KRUN < a.cin_g;
      // LIM: this chunk's sources, a K row step apart
      const T* a_c = LIM && XMN ? a_src[0] + int64_t(c * BK) * a.xs[1] : nullptr;
      const T* b_c = LIM && WD ? b_src[0] + int64_t(c * BK) * a.ws0 : nullptr;
#pragma unroll
      for (int j = 0; j < C::PA; ++j) {
        if constexpr (XMN) {
          // K row k (channel c * BK + k) of position chunk pc: 16-bit into warpgroup block
          // pc / 8 (swizzled), TF32 into the staging rows [k][BM].
          const int k = k_base + kKStep * j;
          const uint32_t dst = XT ? k * (BM * 4) + xt_chunk(pc, k) * kChunkBytes
                                  : (pc / 8) * (BK * kPwBkBytes) + k * kPwBkBytes +
                                        (((pc % 8) ^ (k % 8)) * kChunkBytes);
          if constexpr (LIM) {
            const int kk = c * BK + kKStep * j;  // (k_base's K rows are in a_lim)
            cp_async_16(a_st + dst, a_c + j * (int64_t(kKStep) * a.xs[1]), kk < a_lim ? 16 : 0);
          } else {
            const int ci = c * BK + k;
            const bool ok = (ci < a.cin_g) & (a_src[0] != nullptr);
            cp_async_16(a_st + dst, ok ? a_src[0] + int64_t(ci) * a.xs[1] : x, ok ? 16 : 0);
          }
        } else {
          const bool ok = ci_ok & (a_src[j] != nullptr);
          const int a_sw = C::X3 ? (kc ^ (a_row(j) % 8)) * kChunkBytes : swz;
          cp_async_16(a_st + a_row(j) * kPwBkBytes + a_sw, ok ? a_src[j] + c * BK : x,
                      ok ? 16 : 0);
        }
      }
#pragma unroll
      for (int j = 0; j < C::PB; ++j) {
        if constexpr (WD) {
          if constexpr (LIM) {
            const int kk = c * BK + wd_koff(j);  // (wk's K rows are in b_lim)
            const T* src = H16 ? b_c + wd_koff(j) * int64_t(a.ws0)
                               : b_c + j * (int64_t(kWStep) * a.ws0);
            cp_async_16(b_st + wd_dst + wd_koff(j) * kWRowB, src, kk < b_lim ? 16 : 0);
          } else {
            const int k = c * BK + wk + kWStep * j;
            const bool ok = (k < a.cin_g) & (b_src[0] != nullptr);
            cp_async_16(b_st + wd_dst + kWStep * j * kWRowB,
                        ok ? b_src[0] + int64_t(c * BK + kWStep * j) * a.ws0 : wp, ok ? 16 : 0);
          }
        } else {
          // H16: the 16-byte piece kc holds halves of the 16-channel group 2 c + kc / 4, which
          // the repack padded with zeros up to cin_pad.
          const bool ok =
              (H16 ? c * BK + (kc / 4) * kH16Chunk < a.cin_g : ci_ok) & (b_src[j] != nullptr);
          const uint32_t dst = b_st + (r_base + C::RS * j) * kPwBkBytes + swz;
          cp_async_16(dst, ok ? b_src[j] + c * BK : wp, ok ? 16 : 0);
        }
      }
    }
    cp_async_commit();
  };

  static_assert(!SHORT || H16, "pw: SHORT is H16's");
  // 3xTF32: kFold chunks' products, big and small (added into acc with IEEE adds after them:
  // the tensor core truncates as it accumulates). part is zeroed once only: the first wgmma
  // after a fold restarts it (scale-d 0).
  float part[1][C::X3 ? BN / 8 : 1][4];
  zero_acc(part);
  using Acc = float[1][BN / 8][4];  // one 64-row wgmma tile per warpgroup
  Acc acc_own;
  Acc& acc = pick_ref<SHORT>(part, acc_own);
  // H16: the small products (2^11 times their share, h16_finish), chained over the tile's K.
  float acc_s[1][H16 ? BN / 8 : 1][4];
  // H16: x's scale (A is split in registers) and w's (B read from w is split in shared
  // memory; the repack applied it otherwise), from the largest |values| (h16_absmax).
  // (read after pdl_wait, below: the scale pass may run just before this kernel)
  float h16_sx = 1.f, h16_sw = 1.f;
  int h16_e = 0;  // the products' exponent, undone in h16_finish

  // Descriptors: A of this warpgroup (its 64 rows; 16-bit only, RA's A is in registers), B;
  // 8-row groups 1024 bytes apart, a K step (32 bytes) 32 bytes on in the row. M-major A: the
  // warpgroup's block of BK K rows of 128 bytes (its 64 positions, one swizzle atom wide),
  // 8-K-row groups 1024 bytes apart, a K step (16 rows) 2048 bytes on.
  const int wg = __shfl_sync(0xffffffffu, warp / 4, 0);  // uniform: descriptors stay in UR
  const uint64_t da0 = wgmma_desc_sw128(sa + wg * (XMN ? BK : 64) * kPwBkBytes, 8 * kPwBkBytes);
  constexpr int kAStep = XMN ? 16 * kPwBkBytes : 32;
  // N-major B (16-bit WD): BK K rows per 64-column block, so the next block is BK rows on.
  constexpr bool kBmn = WD && !BT;
  const uint64_t db0 = kBmn ? wgmma_desc_sw128_mn(sa + C::kStageA, BK * kPwBkBytes, 8 * kPwBkBytes)
                            : wgmma_desc_sw128(sa + C::kStageA, 8 * kPwBkBytes);
  // (H16: a K step's big halves; its small halves are 32 bytes on)
  constexpr int kBStep = kBmn ? 16 * kPwBkBytes : H16 ? 64 : 32;
  // RA: this thread's A fragment rows (m16n8k8's a0..a3: rows g, g + 8 of its warp's 16,
  // K columns t, t + 4 of each 8-wide K step; g = lane / 4, t = lane % 4).
  const int am0 = wg * 64 + (warp % 4) * 16 + lane / 4, ak0 = lane % 4;

  // ---- tiles: blockIdx.x, then (persistent) every gridDim.x-th. The chunk stream runs on
  // across tiles: its chunk u sits in stage u % S, and the loader runs S - 1 chunks ahead, so
  // the next tile's first chunk loads during this tile's last MMAs and its epilogue, whose
  // tile then takes the stage just consumed (pw_stage_bytes leaves room for it).
  int tile = blockIdx.x, b = 0, u = 0;  // u: the stage of the tile's chunk 0
  build_tables(tile, 0);
  // The kernel before this one (the repack, the scale pass) may still run (pdl.cuh): its
  // outputs are read from here on.
  pdl_wait();
  if constexpr (H16) {
    const int ex = h16_exponent(a.h16_max[0]), ew = h16_exponent(a.h16_max[1]);
    h16_sx = h16_pow2(ex);
    h16_sw = h16_pow2(ew);
    h16_e = ex + ew;
  }
  __syncthreads();
  sources(tile, 0);
#pragma unroll
  for (int s = 0; s < S - 1; ++s) issue(s, s, true);
  // Chunk kt's B made ready for the wgmmas once its copies have landed: 3xTF32 splits it
  // (chunk kt + 1's while chunk kt's wgmmas run); TF32's repacked B is ready as it lands.
  // (A is rounded or split in registers: load_a.)
  auto prepare = [&](int kt) {
    const int st = (u + kt) % S;
    if constexpr (BT && H16) {
      // w's rows of chunk kt, transposed and split into B's fp16 halves (the caller's warp
      // barrier made the warp's copies, all it reads here, visible).
      pw_split_h16_cols<BN, NT>(reinterpret_cast<const float*>(stages + st * C::kStage + kBLoad),
                                stages + st * C::kStage + C::kStageA, h16_sw, warp, lane);
    } else if constexpr (BT) {
      // w's rows of chunk kt, transposed and split into B's two K-major copies (the caller's
      // warp barrier made the warp's copies, all it reads here, visible). A is split in
      // registers (load_a).
      pw_transpose_split_tf32<BN, NT>(
          reinterpret_cast<const float*>(stages + st * C::kStage + kBLoad),
          stages + st * C::kStage + C::kStageA);
    } else if constexpr (H16) {
      // The repacked B already holds w's scaled fp16 halves.
    } else if constexpr (C::X3) {
      // Split this thread's own B chunks (the repack keeps full fp32): big in place, small
      // kSmallB bytes on. A is split in registers (load_a).
      auto split_row = [&](int off) {
        uint4* q = reinterpret_cast<uint4*>(stages + st * C::kStage + off);
        uint4 big, small;
        split_tf32_4(*q, big, small);
        *q = big;
        *reinterpret_cast<uint4*>(reinterpret_cast<unsigned char*>(q) + C::kSmallB) = small;
      };
#pragma unroll
      for (int j = 0; j < C::PB; ++j) {
        split_row(C::kStageA + (r_base + C::RS * j) * kPwBkBytes + swz);
      }
    }
  };
  // RA: chunk kt's A fragments of this thread (m16n8k8's a0..a3 per K step), read from the
  // staged chunk and rounded to TF32 in registers (TF32: the tensor core would truncate them;
  // only `big` is written), or split into big and small parts (3xTF32). XT: staged [K row][BM]
  // (xt_chunk's swizzle); else K-major [BM][128 B] in the 128-byte swizzle.
  // H16: m16n8k16's fragment (a0 .. a3: rows g, g + 8 of K columns 2 t, 2 t + 1, then of
  // 2 t + 8, 2 t + 9), each register two fp16 halves of x times h16_sx.
  using AFrags = uint32_t[C::KS][4];
  auto load_a = [&](int kt, AFrags& big, AFrags& small) {
    const uint32_t* stg = reinterpret_cast<const uint32_t*>(stages + ((u + kt) % S) * C::kStage);
    // Element (position m, K row k) of the chunk (XT: m at m ^ 8 xt_sw(k), xt_chunk in elements)
    auto elem = [&](int m, int k) {
      return XT ? stg[k * BM + (m ^ (xt_sw(k) << 3))]
                : stg[m * (kPwBkBytes / 4) + ((((k >> 2) ^ (m & 7)) << 2) | (k & 3))];
    };
#pragma unroll
    for (int ks = 0; ks < C::KS; ++ks) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int m = am0 + 8 * (i & 1);
        if constexpr (H16) {
          const int k = 16 * ks + 2 * ak0 + 8 * (i >> 1);
          split_h16_2(__uint_as_float(elem(m, k)), __uint_as_float(elem(m, k + 1)), h16_sx,
                      big[ks][i], small[ks][i]);
        } else if constexpr (C::X3) {
          split_tf32(elem(m, 8 * ks + ak0 + 4 * (i >> 1)), big[ks][i], small[ks][i]);
        } else {
          big[ks][i] = tf32_rna(__uint_as_float(elem(m, 8 * ks + ak0 + 4 * (i >> 1))));
        }
      }
    }
  };
  // Chunk kt's wgmmas, issued and committed, not waited for. 3xTF32: a_small b_big, a_big
  // b_small and a_big b_big into part, whose first wgmma of the chunk restarts it.
  auto mma_chunk = [&](int kt, const AFrags& big, const AFrags& small) {
    const int st = (u + kt) % S;
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < C::KS; ++ks) {
      const uint64_t db = db0 + uint64_t((st * C::kStage + ks * kBStep) >> 4);
      if constexpr (H16) {
        // big x big restarts part; the small products chain in acc_s (+2: 32 bytes on)
        wgmma_rs_f16_scaled<BN>(part[0], big[ks], db, ks != 0 || kt % C::kFold != 0);
        wgmma_rs_f16_scaled<BN>(acc_s[0], small[ks], db, 1);
        wgmma_rs_f16_scaled<BN>(acc_s[0], big[ks], db + 2, 1);
      } else if constexpr (C::X3) {
        wgmma_rs_scaled<BN>(part[0], small[ks], db, ks != 0 || kt % C::kFold != 0);
        wgmma_rs_scaled<BN>(part[0], big[ks], db + uint64_t(C::kSmallB >> 4), 1);
        wgmma_rs_scaled<BN>(part[0], big[ks], db, 1);
      } else if constexpr (RA) {  // TF32
        wgmma_rs_scaled<BN>(acc[0], big[ks], db, 1);
      } else {
        const uint64_t da = da0 + uint64_t((st * C::kStage + ks * kAStep) >> 4);
        wgmma_ss<MODE, BN, XMN ? 1 : 0, kBmn ? 1 : 0>(acc[0], da, db);
      }
    }
    wgmma_commit();
  };

  while (true) {
    const int tn = tile + int(gridDim.x);
    const bool has_next = C::kPersist && tn < a.tiles;
    if (has_next) build_tables(tn, b ^ 1);  // published by the K loop's first barrier
    zero_acc(acc);
    if constexpr (H16) zero_acc(acc_s);
    // Chunk c of the stream into its stage: this tile's, else (persistent) the next tile's,
    // whose sources replace this tile's once none of this tile's chunks is left to issue; only
    // its chunks 0 .. S - 2, since the epilogue tile takes the stage of this tile's last chunk.
    auto issue_ahead = [&](int c) {
      if (c < kchunks) {
        issue(c, (u + c) % S, true);
      } else {
        if (has_next && c == kchunks) sources(tn, b ^ 1);
        issue(c - kchunks, (u + c) % S, has_next && c - kchunks < S - 1);
      }
    };
    if constexpr (C::X3) {
      static_assert(C::kPersist && (S == 2 || H16), "pw 3xTF32: persistent, two stages (H16: any)");
      // 3xTF32: chunk kt + 1 is split while chunk kt's wgmmas run; split after the wait, its
      // shared-memory passes (each loaded byte read once and written twice) left the tensor
      // core idle. A is read into registers and split there, chunk kt + 1's while chunk kt's
      // wgmmas run (two register sets, so the loop goes two chunks at a time). The barrier
      // after chunk kt's wgmmas retire frees its stage for chunk kt + S (the loader runs S - 1
      // chunks ahead), whose copies then run under chunk kt + 1's wgmmas.
      uint32_t a_big[2][C::KS][4], a_small[2][C::KS][4];
      cp_async_wait<S - 2>();
      __syncwarp();  // the warp's copies (A, and w's rows for the transpose) are its own reads
      prepare(0);
      fence_proxy_async();
      __syncthreads();
      issue_ahead(S - 1);
      load_a(0, a_big[0], a_small[0]);
      auto step = [&](int kt, const AFrags& big, const AFrags& small, AFrags& nbig,
                      AFrags& nsmall) {
        mma_chunk(kt, big, small);
        if (kt + 1 < kchunks) {
          cp_async_wait<S - 2>();  // chunk kt + 1 landed (this thread's copies)
          __syncwarp();            // ... and the warp's: all that load_a and prepare read
          load_a(kt + 1, nbig, nsmall);
          prepare(kt + 1);
        }
        wgmma_wait<0>();
        if (!SHORT && ((kt + 1) % C::kFold == 0 || kt + 1 == kchunks)) fold_partial(acc, part);
        fence_proxy_async();  // the split's stores (generic proxy) -> wgmma reads (async proxy)
        __syncthreads();      // chunk kt + 1 split by every thread; chunk kt retired
        issue_ahead(kt + S);
      };
      for (int kt = 0; kt < kchunks; kt += 2) {
        step(kt, a_big[0], a_small[0], a_big[1], a_small[1]);
        if (kt + 1 < kchunks) step(kt + 1, a_big[1], a_small[1], a_big[0], a_small[0]);
      }
    } else {
      AFrags a_frag = {};  // TF32 (RA): chunk kt's A, rounded; 16-bit: A by descriptor
      for (int kt = 0; kt < kchunks; ++kt) {
        cp_async_wait<S - 2>();  // chunk kt landed (this thread's copies)
        prepare(kt);
        fence_proxy_async();  // cp.async and stores (generic proxy) -> wgmma reads (async proxy)
        __syncthreads();  // also: every warpgroup retired chunk kt - 1, whose stage refills now
        issue_ahead(kt + S - 1);  // the chunk S - 1 ahead
        if constexpr (RA) load_a(kt, a_frag, a_frag);
        mma_chunk(kt, a_frag, a_frag);
        wgmma_wait<0>();
      }
    }
    if constexpr (!C::kPersist) cp_async_wait<0>();  // the tile overwrites every stage
    wgmma_fence_acc(acc);
    if constexpr (H16) {
      wgmma_fence_acc(acc_s);
      h16_finish(acc, acc_s, h16_e);  // acc + 2^-11 acc_s, unscaled
    }
    __syncthreads();  // every warpgroup is done with the stage the epilogue tile takes
    const PwRow* rows = s_row(b);
    const int64_t* ycol = s_yc(b);
    const int* taps = s_tap(b);
    const float* bias_c = s_bias(b);
    unsigned char* ct = C::kPersist ? stages + ((u + kchunks - 1) % S) * C::kStage : stages;

    // ---- epilogue: accumulators (+ bias), converted to T -> tile ct -> y. This thread holds
    // rows 16 (warp % 4) + lane / 4 (+ 8) of its warpgroup and columns 8 j + 2 (lane % 4) (+ 1).
    // K-major (channels_last y): ct is [BM][kRowB bytes], each pair written at once; the row
    // pad (pw_tile_row_bytes) puts a warp's pair writes on distinct banks and keeps rows 16-byte
    // aligned for the vector reads below (an fp32 tile of odd row stride, read 8 floats per
    // thread, had 4-way conflicts: ncu on suite case 9 bf16 put 38 % of the stalls on shared
    // memory). XMN (NCDHW y): ct is column-major [BN][kColE elements], so the rows that become
    // adjacent w outputs are adjacent in shared memory.
    constexpr int kRowB = pw_tile_row_bytes(BN, int(sizeof(T)));
    // Column pitch 68 words (16-bit) or 132 (fp32): a warp's element writes hit 16 / 32 banks.
    constexpr int kColE = sizeof(T) == 2 ? BM + 8 : BM + 4;
    {
      const int r0 = wg * 64 + (warp % 4) * 16 + lane / 4;
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const int c = 8 * j + 2 * (lane % 4);
        const float b0 = bias_c[c], b1 = bias_c[c + 1];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float v0 = acc[0][j][2 * h] + b0, v1 = acc[0][j][2 * h + 1] + b1;
          if constexpr (XMN) {
            T* t = reinterpret_cast<T*>(ct);
            t[c * kColE + r0 + 8 * h] = from_float<T>(v0);
            t[(c + 1) * kColE + r0 + 8 * h] = from_float<T>(v1);
          } else {
            unsigned char* p = ct + (r0 + 8 * h) * kRowB + c * int(sizeof(T));
            if constexpr (sizeof(T) == 2) {
              *reinterpret_cast<uint32_t*>(p) = pack_pair(from_float<T>(v0), from_float<T>(v1));
            } else {
              *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
            }
          }
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
    if constexpr (XMN) {
      const T* t = reinterpret_cast<const T*>(ct);
      // One element of the tile to y (any k_w, strides, padding).
      auto put = [&](int r, int c) {
        const int tap = taps[c];
        const PwRow& row = rows[r];
        if (tap >= 0 && row.x >= 0 && in_y(row, tap)) y[row.y + ycol[c]] = t[c * kColE + r];
      };
      if (a.k[2] == 2) {
        // Item (quad of rows 4 q .., column pair tw = 0, 1 of one (co, td, th); BN is even): 8
        // outputs. When the quad's rows are adjacent w of one input line, all inside y
        // (PwQuad), ys[4] = 1 and the address 16-byte aligned, they leave by 16-byte stores:
        // one in 16-bit; in fp32 two threads take a quad, one store each, so that each store
        // of a warp covers whole 32-byte sectors (a thread's two stores had put half of every
        // sector in each: ncu on suite case 9 strict NCDHW). A thread's quad is the same for
        // all its items (NT is a multiple of kQt).
        constexpr int kH = sizeof(T) == 2 ? 1 : 2;  // threads per quad
        constexpr int kQt = kH * BM / 4;             // threads per column pair
        static_assert(NT % kQt == 0, "pw: a thread keeps its quad");
        const int q = (tid % kQt) / kH, h = tid % kH;
        const int64_t qy = s_quad(b)[q].y;
        const bool quad = a.ys[4] == 1 && qy >= 0;
        const int64_t y0 = quad ? qy : 0;
        for (int cp = tid / kQt; cp < BN / 2; cp += NT / kQt) {
          const int c = 2 * cp;
          T* dst = y + (y0 + ycol[c]);
          if (quad && taps[c] >= 0 && (reinterpret_cast<uintptr_t>(dst) & 15) == 0) {
            // interleave: w output 2 e is row e of tw 0 (lo), 2 e + 1 row e of tw 1 (hi)
            if constexpr (sizeof(T) == 2) {
              const uint2 lo = *reinterpret_cast<const uint2*>(t + c * kColE + 4 * q);
              const uint2 hi = *reinterpret_cast<const uint2*>(t + (c + 1) * kColE + 4 * q);
              uint4 v;
              v.x = __byte_perm(lo.x, hi.x, 0x5410);
              v.y = __byte_perm(lo.x, hi.x, 0x7632);
              v.z = __byte_perm(lo.y, hi.y, 0x5410);
              v.w = __byte_perm(lo.y, hi.y, 0x7632);
              *reinterpret_cast<uint4*>(dst) = v;
            } else {  // rows 2 h, 2 h + 1: w outputs 4 h .. 4 h + 3
              const uint2 lo = *reinterpret_cast<const uint2*>(t + c * kColE + 4 * q + 2 * h);
              const uint2 hi =
                  *reinterpret_cast<const uint2*>(t + (c + 1) * kColE + 4 * q + 2 * h);
              *reinterpret_cast<uint4*>(dst + 4 * h) = make_uint4(lo.x, hi.x, lo.y, hi.y);
            }
          } else {
#pragma unroll
            for (int e = (4 / kH) * h; e < (4 / kH) * (h + 1); ++e) {
              put(4 * q + e, c);
              put(4 * q + e, c + 1);
            }
          }
        }
      } else {
        // Consecutive threads on consecutive rows (adjacent in the column-major tile).
        for (int i = tid; i < BM * BN; i += NT) put(i % BM, i / BM);
      }
    } else if (a.y_vec) {
      // Channels_last, aligned, Cout/g a multiple of V (host): a vector never straddles taps.
      // Consecutive threads take consecutive vectors of a row; a row's taps (tap-major) are
      // adjacent output positions along w, so a warp writes whole lines.
      // A thread's vector column is the same in every row (NT is a multiple of BN / V): its tap
      // and y offset are read once (per row, their strided reads conflicted 4- and 8-way:
      // ncu on suite case 9 strict channels_last).
      static_assert(NT % (BN / V) == 0, "pw: a thread keeps its column");
      const int c = (tid % (BN / V)) * V;
      const int tap = taps[c];
      const int64_t yc = ycol[c];
#pragma unroll 2
      for (int r = tid / (BN / V); r < BM; r += NT / (BN / V)) {
        const PwRow& row = rows[r];
        if (tap < 0 || row.x < 0 || !in_y(row, tap)) continue;
        *reinterpret_cast<uint4*>(y + (row.y + yc)) =
            *reinterpret_cast<const uint4*>(ct + r * kRowB + c * int(sizeof(T)));
      }
    } else {
      // Any y strides: one element per thread, consecutive threads on consecutive rows.
      for (int i = tid; i < BM * BN; i += NT) {
        const int c = i / BM, r = i % BM;
        const int tap = taps[c];
        const PwRow& row = rows[r];
        if (tap < 0 || row.x < 0 || !in_y(row, tap)) continue;
        y[row.y + ycol[c]] = *reinterpret_cast<const T*>(ct + r * kRowB + c * int(sizeof(T)));
      }
    }
    __syncthreads();  // the tile and table set b are read before they are rewritten
    if (!has_next) break;
    u = (u + kchunks) % S;  // only the stage matters; kept small
    tile = tn;
    b ^= 1;
  }
#endif
}

// One stage count's kernels (LEAN: TF32's two stages, a.pw_lean; H16: strict fp32 as fp16
// products, a.h16).
template <Mode MODE, int BN, bool LEAN, bool H16 = false, bool SHORT = false>
cudaError_t launch_pw_stages(const FwdArgs& a, cudaStream_t stream) {
  using C = PwCfg<MODE, BN, LEAN, H16>;
  if ((a.h16 != 0) != H16) return cudaErrorInvalidValue;
  // (the chunk stream runs S - 1 chunks ahead and maps those past K to the next tile only;
  // SHORT: K within one fold)
  const int kchunks = (a.cin_g + C::BK - 1) / C::BK;
  if ((C::kPersist && kchunks < C::S - 1) || (SHORT && kchunks > C::kFold)) {
    return cudaErrorInvalidValue;
  }
  auto kernel = a.x_mn ? pw_fwd_kernel<MODE, BN, true, false, LEAN, H16, SHORT>
                       : pw_fwd_kernel<MODE, BN, false, false, LEAN, H16, SHORT>;
  constexpr int kElem = int(sizeof(typename C::T));
  if (a.w_direct) {
    if constexpr (kElem == 2 || C::X3) {  // (3xTF32 transposes B as it splits it)
      kernel = a.x_mn ? pw_fwd_kernel<MODE, BN, true, true, LEAN, H16, SHORT>
                      : pw_fwd_kernel<MODE, BN, false, true, LEAN, H16, SHORT>;
    } else {
      return cudaErrorInvalidValue;  // TF32 reads the repacked B (host: w_direct_ok)
    }
  }
  if (a.smem_bytes <= 0 || a.smem_bytes > pw_smem_bytes(BN, C::S, kElem, C::kSplit, H16)) {
    return cudaErrorInvalidValue;
  }
  cudaError_t e = allow_dynamic_smem(kernel, a.smem_bytes);
  if (e != cudaSuccess) return e;
  int grid = a.tiles;  // one CTA per tile, or (persistent) as many as fit at once
  if (C::kPersist && a.persist) {
    int ctas = 0;
    e = resident_ctas(reinterpret_cast<const void*>(kernel), C::NT, a.smem_bytes, &ctas);
    if (e != cudaSuccess) return e;
    grid = ctas < grid ? ctas : grid;
  }
  e = launch_maybe_pdl(kernel, dim3(static_cast<unsigned>(grid)), dim3(C::NT), a.smem_bytes,
                       stream, a.pdl != 0, a);
  return e != cudaSuccess ? e : cudaGetLastError();
}

template <Mode MODE, int BN>
cudaError_t launch_pw(const FwdArgs& a, int64_t blocks, cudaStream_t stream) {
  if (blocks != a.tiles) return cudaErrorInvalidValue;
  // Lean kernels exist for TF32 up to BN 128 only (BN 256 holds one CTA per SM by registers).
  if constexpr (MODE == Mode::kTf32 && BN <= 128) {
    if (a.pw_lean) return launch_pw_stages<MODE, BN, true>(a, stream);
  }
  if (a.pw_lean) return cudaErrorInvalidValue;
  return launch_pw_stages<MODE, BN, false>(a, stream);
}

// H16: BN 128 for K up to one fold (kPwH16ShortK channels: SHORT), BN 64 for any K.
template <int BN>
cudaError_t launch_pw_h16(const FwdArgs& a, int64_t blocks, cudaStream_t stream) {
  if (blocks != a.tiles || a.pw_lean) return cudaErrorInvalidValue;
  static_assert(PwCfg<Mode::kTf32x3, 128, false, true>::kFold *
                        PwCfg<Mode::kTf32x3, 128, false, true>::BK == kPwH16ShortK,
                "pw H16: SHORT's K");
  return launch_pw_stages<Mode::kTf32x3, BN, false, true, BN == 128>(a, stream);
}

}  // namespace fwd
}  // namespace convt3d
