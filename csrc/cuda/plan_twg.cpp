// The transposed wgmma kernel's planner (plan.h, fwd/twg_kernel.cuh): whether it pays and is
// legal, its run length, slices, box, stacked blocks, TMA and staging.
#include "plan.h"

#include "box_map.h"
#include "fwd/dispatch.h"
#include "fwd/phases.h"
#include "fwd/tile_configs.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>

#include <algorithm>
#include <limits>
#include <string>

namespace convt3d {
namespace planner {
namespace {

// The largest box span (ntap - 1) x cstep of any phase along one axis: twg's TMA box (one size
// for the layer, the tensor map's) spans it in every phase (twg_kernel.cuh: skew).
int max_span(const fwd::AxisPlan& ax) {
  int64_t span = 0;
  for (int r = 0; r < ax.stride; ++r) span = std::max(span, phase_span(ax, r));
  return static_cast<int>(span);
}

// What TMA box loads for the transposed kernel need of x itself (twg_tma_ok adds the box's
// extents): channels_last x (the cp.async loader's legality) whose other strides are all
// multiples of 16 bytes (the tensor map's rule, size-1 dims included), and for groups > 1 whole
// 64-byte chunks per group (TMA zero-fills only outside x, not another group's channels).
// CONVT3D_TWG_TMA=0 never takes it.
bool tma_strides_ok(const FastPlan& f) {
  if (!f.kvec || f.sw.twg_tma == 0) return false;
  if (f.p.groups > 1 && f.p.Cin_g % fwd::bk_elems(f.mode) != 0) return false;
  for (int d : {0, 2, 3, 4}) {
    if ((f.p.x_st[d] * int64_t(fwd::elem_bytes(f.mode))) % 16 != 0) return false;
  }
  return true;
}

// W taps per warpgroup the twg kernel may stack (a.stack_w): J blocks of 64 / J rows must hold
// Cout/g, and some phase must have J w taps (else the blocks past its taps only add zeros).
// Any dilation works: block j's columns are j tap steps along w from block 0's. One TMA box
// loads a shift's J taps, so a phase's w taps must be the kernel's (tap step 1: stride | dilation)
// and a block without a tap lies outside the kernel, where the box reads zeros.
bool twg_wstack_ok(const ConvT3dParams& p, const fwd::AxisPlan& axw, int stack) {
  if (stack < 2 || p.Cout_g > 64 / stack || axw.tstep != 1) return false;
  for (int r = 0; r < axw.stride; ++r) {
    if (axw.ntap[r] >= stack) return true;
  }
  return false;
}

// Where the transposed wgmma kernel replaces the per-phase halo kernel without being forced.
// Measured on an H100 (scripts/halo_ab.py, 2026-11-22, docs/fast_forward_design.md v7 and v8),
// twg / halo, ms, NCDHW and channels_last: it won on the stride-1 suite cases with Cout/g 33-64
// (case 3 bf16 4.01 / 5.35 and 3.80 / 4.61, TF32 7.39 / 9.37 and 7.46 / 8.79; case 2 bf16
// 1.41 / 1.80 and 1.15 / 1.33), and, with its box streamed, on the stride-2 case 11 (8 taps per
// phase: bf16 0.350 / 0.396 and 0.263 / 0.273, TF32 0.534 / 0.622, channels_last a tie). It
// lost on case 4 (Cout 24: M = 64 is 63 % padding) and on strided layers with fewer taps per
// phase (case 12, k3 s2: 1-8 taps, which the fused kernel runs anyway).
// Strided layers need the per-phase kernel's own bar of kHaloMinTaps taps per phase on average,
// also when CONVT3D_HALO=1 forces that kernel onto shorter phases.
// TF32 with NCDHW x (the scalar gather) also beat v1 on short and dilated phases, where v1
// gathers x once per tap and twg once per box (2026-11-22, H100, halo_ab.py --batch 5, twg /
// v1 ms: case 12 0.805 / 0.853, case 8 1.020 / 1.068); 16-bit did not (case 8 bf16 0.655 /
// 0.637). With the 64-byte swizzle layout (design doc v12) TF32 with channels_last x gains too
// (2026-11-24, H100, halo_ab.py --batch 5, ms, v1 / per-phase halo / twg: case 8 0.539 /
// 0.483 / 0.468, case 12 0.716 / 0.678 / 0.602), so TF32 takes twg in either layout.
// With 16 < Cout/g <= 32 it takes stride-1 layers where the per-phase halo kernel would run,
// with two stacked depth planes per warpgroup (plan_twg insists on them): suite case 4 (Cout
// 24), H100, 2026-11-24, halo_ab.py --batch 5, ms, per-phase halo / twg two planes, NCDHW and
// channels_last: bf16 3.27 / 2.84 and 2.94 / 2.18, TF32 5.08 / 4.29 and 5.32 / 3.79; twg with
// one plane lost (3.64 and 3.15 bf16). With Cout/g <= 16 it takes them only with four stacked
// w taps (plan_twg): on suite case 1 (Cout 16, kernel 3 x 5 x 7) four planes do not fit and two
// lost (bf16 0.98 against 0.48), while four w taps won (H100, 2026-11-25, halo_ab.py --batch
// 5, ms, per-phase halo / twg four w taps, NCDHW and channels_last: TF32 0.852 / 0.616 and
// 0.910 / 0.589, bf16 0.487 / 0.407 and 0.464 / 0.366, strict fp32 2.040 / 1.438 and
// 2.133 / 1.400).
// 16-bit strided layers without the 16-byte channel loader (NCDHW x) take it over the fused
// kernel and v1 too (H100, 2026-11-24, halo_ab.py --batch 5, two rounds, ms, NCDHW, the old
// choice / twg: case 12 bf16 0.397, 0.403 (fused) / 0.353, 0.360, fp16 0.400, 0.403 / 0.356, 0.360;
// case 8 bf16 0.637, 0.638 (v1) / 0.583, 0.585, fp16 0.635, 0.639 / 0.597, 0.585). With
// channels_last x the fused kernel stays: case 8 bf16 0.253, 0.257 (fused) / 0.266, 0.274.
// Strict fp32 (3xTF32) follows the TF32 rule: H100, 2026-11-25, halo_ab.py --batch 5, ms,
// NCDHW and channels_last, the old choice / twg: case 2 8.52, 8.14 (v1) / 5.10, 4.95; case 3
// 33.7, 32.7 / 19.8, 19.2; case 11 1.65, 1.59 / 1.38, 1.20; case 12 1.50, 1.42 / 1.32, 1.32;
// case 4 (Cout 24, two stacked planes) 12.95, 12.97 (per-phase halo) / 13.09, 11.66.
// 16-bit strided layers with channels_last x and short phases (fewer than kHaloMinTaps taps per
// non-empty phase on average) take it over the fused kernel where the box loads by TMA, which
// they can since the box spans the largest phase span (max_span). H100, 2026-11-25,
// halo_ab.py --batch 5, ms, channels_last, fused / twg (TMA) / twg (cp.async): case 12 bf16
// 0.296 / 0.255 / 0.287, fp16 0.299 / 0.259 / 0.290 (and 0.294 / 0.254 in an earlier call).
// Case 8 (one phase of 27 taps) keeps the fused kernel: bf16 0.264 / 0.280, fp16 0.264 / 0.283.
bool twg_pays(const FastPlan& f, const TapStats& ts) {
  const bool long_phases = f.args.phases == 1 || ts.taps_sum >= kHaloMinTaps * ts.nonempty;
  const bool auto_mode = f.sw.halo == -1;  // CONVT3D_HALO=0/1/2 keeps its kernel
  const bool fp32 = f.mode == fwd::Mode::kTf32 || f.mode == fwd::Mode::kTf32x3;
  const bool tf32_short = auto_mode && fp32 && f.args.fuse == 0;
  const bool strided = f.p.stride[0] > 1 || f.p.stride[1] > 1 || f.p.stride[2] > 1;
  const bool scalar16_strided = auto_mode && !f.kvec && strided &&
                                (f.mode == fwd::Mode::kBf16 || f.mode == fwd::Mode::kFp16);
  // (not long_phases: a fused plan has set phases = 1)
  const bool short_phases = ts.taps_sum < kHaloMinTaps * ts.nonempty;
  const bool tma16_short = auto_mode && strided && short_phases && !fp32 && tma_strides_ok(f);
  const bool halo_rule = f.halo && f.args.fuse == 0 && long_phases;
  if (f.p.Cout_g > 32) return tf32_short || scalar16_strided || tma16_short || halo_rule;
  const bool stride1 = f.p.stride[0] == 1 && f.p.stride[1] == 1 && f.p.stride[2] == 1;
  return (f.p.Cout_g > 16 || twg_wstack_ok(f.p, f.args.ax[2], 4)) && stride1 && halo_rule;
}

// TMA box loads (fwd/tma.cuh) for the transposed kernel: tma_strides_ok, and box extents within
// the TMA's 256 (the map's box is fixed, so it spans the largest span of any phase: max_span).
// The launch falls back to cp.async if the driver still rejects the map (box_map.cpp).
// Measured on an H100 (halo_ab.py --batch 5, 2026-11-24, channels_last, ms, TMA / cp.async):
// case 11 bf16 0.198 / 0.234, TF32 0.381 / 0.416; case 3 bf16 3.02 / 3.07, TF32 5.71 / 6.09;
// case 2 bf16 0.97 / 1.05, TF32 1.64 / 1.71. Case 12 (one- and two-tap phases) since its box
// spans max_span (2026-11-25, same script and machine): TF32 0.476 / 0.517, strict fp32
// 1.181 / 1.257.
bool twg_tma_ok(const FastPlan& f, int bqh, int bqw, int planes) {
  if (!tma_strides_ok(f)) return false;
  const int bq[3] = {planes, bqh, bqw};
  for (int i = 0; i < 3; ++i) {
    if (bq[i] + int64_t(max_span(f.args.ax[i])) > 256) return false;
  }
  return true;
}

// Strict fp32 as fp16 products on the transposed kernel (a.h16, fwd/h16_split.cuh): where x is
// dense, so that one pass over its storage finds its scale (fwd::h16_absmax); CONVT3D_TWG_H16=0
// never. Half the tensor-core time of TF32 operands and half their shared memory, so boxes that
// were reloaded per chunk stream. Measured (H200, 2026-11-27, halo_ab.py --batch 3, two rounds,
// strict fp32, ms, fp16 products / TF32 operands, NCDHW and channels_last): suite case 4 6.02,
// 6.21 / 8.52, 8.53 and 5.22, 5.35 / 8.24, 8.28; case 2 2.82 / 4.23 and 2.57 / 4.09; case 3
// 9.36 / 15.25 and 8.82 / 14.82; case 8 0.473 / 0.589 and 0.496 / 0.619; case 11 0.776 / 1.007
// and 0.664 / 1.004; case 12 0.931 / 1.075 and 0.823 / 0.999 (first rounds).
// (Its x half, h16_x_ok, plan_pw shares: plan.cpp.)
bool twg_h16_ok(const FastPlan& f, const at::Tensor& x) {
  return f.sw.twg_h16 != 0 && h16_x_ok(x);
}

// 3xTF32 staged boxes (a.box_stage, twg_kernel.cuh): the scalar loader's x (NCDHW-like, no
// 16-byte channel loader), w unit-stride and the other strides and the data pointer 16-byte
// aligned (the TMA's), CONVT3D_TWG_STAGE unset.
bool twg_stage_ok(const FastPlan& f, const at::Tensor& x) {
  if (f.kvec || f.sw.twg_stage == 0 || f.p.x_st[4] != 1) return false;
  if (reinterpret_cast<uintptr_t>(x.const_data_ptr()) % 16 != 0) return false;
  for (int d : {0, 1, 2, 3}) {
    if (f.p.x_st[d] < 0 || (f.p.x_st[d] * 4) % 16 != 0) return false;
  }
  return true;
}

// A staging buffer of `channels` channels of the box (dd output planes deep) spanning each
// axis' largest span (max_span), w lines twg_stage_w wide; 0 where an extent passes the TMA's
// 256.
int64_t twg_stage_bytes(const FastPlan& f, int bqh, int bqw, int dd, int channels) {
  const fwd::AxisPlan* ax = f.args.ax;
  const int64_t hd = dd + max_span(ax[0]), hh = bqh + max_span(ax[1]);
  const int64_t bw = fwd::twg_stage_w(int(bqw + max_span(ax[2])));
  if (hd > 256 || hh > 256 || bw > 256) return 0;
  return int64_t(channels) * hd * hh * bw * 4;
}

// plan_twg: the longest average K loop per CTA (channel chunks x box shifts per phase: taps when
// unstacked) at which the transposed kernel takes two slices per CTA.
constexpr double kTwgTwoSliceK = 96;

// plan_twg's cost of one line of a tile's outputs (bqw outputs along w) where y is not
// channels_last: the epilogue stores such a line channel by channel as one run of y, so narrow
// tiles store short runs (and with w stride 2 every other element). Measured (H100,
// 2026-11-27, halo_ab.py --batch 5, ms, the old rule's tile / the wider one): suite case 11
// strict fp32 NCDHW 1.1205, 1.0997 (bqw 6, long stages) / 1.0948, 1.0828 (bqw 16); case 12
// TF32 NCDHW 0.5029 / 0.4790 and bf16 0.3198 / 0.3020 (bqw 16 / 32). With channels_last y
// the wider case 12 tile lost its streamed box (TF32 0.4081 / 0.4358), so the term is 0 there.
constexpr double kTwgNcdhwLineCost = 64;

// The best twg tile of one slice count: run length, slice shape, shared memory, box buffers,
// stacked blocks per warpgroup (depth planes or w taps) and the tap table's entries.
struct TwgTile {
  double cost = 0;
  int nr = 0, h = 0, w = 0, box_bufs = 1, stack = 1;
  bool wstack = false;  // the stack's blocks are w taps (a.stack_w), not depth planes
  int64_t smem = 0, tap_cap = 0, pos_pad = 0;  // pos_pad: rows of one box buffer
  bool tight = false;  // the row table holds the tile's rows only (twg_head_bytes)
  int planes() const { return wstack ? 1 : stack; }  // depth planes per warpgroup
};

// Depth planes per warpgroup the twg kernel may stack for this layer: J blocks of 64 / J rows
// must hold Cout/g, and a block's tap must sit a whole plane per depth tap from the next
// (unit depth tap step, or at most one depth tap per phase). One TMA box loads a shift's J
// depth taps, so a phase's depth taps must be the kernel's (tap step 1, as for w stacks).
bool twg_stack_ok(const ConvT3dParams& p, const fwd::AxisPlan& axd, int stack) {
  if (p.Cout_g > 64 / stack) return false;
  if (stack == 1) return true;
  if (axd.tstep != 1) return false;
  if (axd.cstep == 1) return true;
  for (int r = 0; r < axd.stride; ++r) {
    if (axd.ntap[r] > 1) return false;
  }
  return true;
}

// The K loop of one phase of the twg kernel, in box shifts per channel chunk: its taps, with J
// stacked depth planes nd + J - 1 shifts along depth, with J stacked w taps ceil(nw / J) along w.
int64_t twg_shifts(const fwd::AxisPlan* ax, int J, bool ws, int rd, int rh, int rw) {
  const int64_t nd = ax[0].ntap[rd], nw = ax[2].ntap[rw];
  if (nd == 0) return 0;
  return ws ? nd * ax[1].ntap[rh] * ceil_div(nw, int64_t(J)) : (nd + J - 1) * ax[1].ntap[rh] * nw;
}

}  // namespace

// Transposed wgmma kernel (fwd/twg_kernel.cuh): bf16, fp16, TF32 or 3xTF32 on an sm_90a build
// and an sm_90 device, Cout/g <= 64 (one M = 64 tile). Picks the run length NR, the slice shape
// bqh x bqw (bqh lines of the box width bqw + span_w <= NR) and the stacked blocks J, depth
// planes (twg_stack_ok) or w taps (twg_wstack_ok; CONVT3D_TWG_STACK fixes J where legal,
// CONVT3D_TWG_WSTACK=1/0 only w taps / only planes) with the fewest estimated
// tensor-core cycles plus box positions loaded plus outputs stored (and output lines where y
// is not channels_last: kTwgNcdhwLineCost), summed over the phases. Four slices take one
// CTA per SM (512 threads at up to 128 registers) and may use all the opt-in shared memory;
// two slices must leave room for two CTAs per SM. 3xTF32 takes kTwgX3Run and two slices at one
// CTA per SM (its three accumulator sets need up to 255 registers). Candidates for bqw split
// phase 0's Qw into 1..16 near-equal tiles, so planning stays a few microseconds.
void plan_twg(FastPlan& f, const ConvT3dParams& p, const at::Tensor& x) {
  constexpr int64_t kTwgIntMax = std::numeric_limits<int32_t>::max();
  const int env = f.sw.twg;  // CONVT3D_TWG: 1 wherever legal, 0 never, unset twg_pays
  if (env == 0) return;
  // 3xTF32: two copies of each operand, one run length, two slices at one CTA per SM; as fp16
  // products (h16: twg_h16_ok) one copy.
  const bool x3 = f.mode == fwd::Mode::kTf32x3;
  const bool h16 = x3 && twg_h16_ok(f, x);
  const int split = x3 && !h16 ? 2 : 1;
  if (!use_wgmma_arch(x) || f.p.Cout_g > 64) return;
  const fwd::AxisPlan* ax = f.args.ax;
  const TapStats ts = tap_stats(f.p, ax);
  if (env == -1 && !twg_pays(f, ts)) return;
  if (ts.nonempty == 0 || !tap_offsets_fit(f.p, f.args.cin_pad)) return;
  // Weights come by TMA only: the driver's tensor-map encoder, and the packed weight's rows (the
  // small parts' too, plus a box) as int32 coordinates.
  const double w_rows = double(f.p.groups) * double(f.p.k[0]) * double(f.p.k[1]) *
                        double(f.p.k[2]) * double(f.p.Cout_g);
  if (!tensor_maps_available() || split * w_rows + 64 > double(kTwgIntMax)) return;
  // Stacks to try (J, w taps or depth planes): the switches' where legal, else every legal one,
  // depth planes first.
  std::vector<std::pair<int, bool>> stacks;
  for (bool ws : {false, true}) {
    if (f.sw.twg_wstack == (ws ? 0 : 1)) continue;
    for (int j : {1, 2, 4}) {
      if (f.sw.twg_stack != 0 && f.sw.twg_stack != j) continue;
      if (ws ? twg_wstack_ok(p, ax[2], j) : twg_stack_ok(p, ax[0], j)) stacks.emplace_back(j, ws);
    }
  }
  if (stacks.empty()) stacks.emplace_back(1, false);
  const cudaDeviceProp* prop = at::cuda::getDeviceProperties(x.get_device());
  const int64_t chunks = ceil_div(f.p.Cin_g, fwd::bk_elems(f.mode));
  const int64_t ext_d = max_span(ax[0]), ext_h = max_span(ax[1]), ext_w = max_span(ax[2]);
  const int64_t cstep_d = ax[0].cstep;
  const int64_t Qh0 = ax[1].q[0], Qw0 = ax[2].q[0];
  const double line_cost = p.y_st[1] != 1 ? kTwgNcdhwLineCost : 0.0;
  auto search = [&](int sl) {
    const int64_t cap = sl == 4 || x3 ? int64_t(prop->sharedMemPerBlockOptin) : smem_two_per_sm(x);
    TwgTile best;
    // W taps stack only beyond the most depth planes that fit: at equal J the deeper box of
    // stacked planes serves twice the outputs per box and weight load (H100, 2026-11-25,
    // halo_ab.py --batch 5, ms, two planes / two w taps: suite case 4 (Cout 24) TF32 4.40 /
    // 5.40 NCDHW, 3.82 / 5.02 channels_last, bf16 2.87 / 3.99 and 2.24 / 3.46). Suite case 1
    // (Cout 16, 7 w taps), where four planes do not fit: four w taps 0.616 / two planes 1.541
    // TF32 NCDHW, 0.407 / 0.858 bf16. The automatic choice takes Cout/g <= 16 with w taps only
    // (measured with them only), so there depth stacks neither compete nor keep w stacks out
    // (a depth tile that won and was then rejected sent suite case 1's strict fp32 as fp16
    // products, which fits four planes, to the halo kernel).
    const bool depth_rejected = env == -1 && f.p.Cout_g <= 16;
    int depth_fit = 0;
    for (const auto& [J, ws] : stacks) {
      if (ws && J <= depth_fit) continue;
      const int JD = ws ? 1 : J;            // depth planes per warpgroup
      const int64_t dd = int64_t(sl) * JD;  // output planes per CTA
      // A phase's shifts: nd + J - 1 along depth, or ceil(nw / J) along w.
      auto shifts = [&, J = J, ws = ws](int rd, int rh, int rw) {
        return twg_shifts(ax, J, ws, rd, rh, rw);
      };
      // Tap table entries: a phase's shifts x blocks (taps when J = 1).
      int64_t entries = 0;
      for (int rd = 0; rd < p.stride[0]; ++rd)
        for (int rh = 0; rh < p.stride[1]; ++rh)
          for (int rw = 0; rw < p.stride[2]; ++rw) {
            entries = std::max(entries, shifts(rd, rh, rw) * J);
          }
      const int64_t tap_cap = (entries + 3) / 4 * 4;
      for (int nr : fwd::kTwgRuns) {
        if (x3 && nr != fwd::kTwgX3Run) continue;
        int64_t last_w = -1;
        for (int64_t k = 1; k <= 16; ++k) {
          const int64_t bqw = std::min<int64_t>(ceil_div(Qw0, k), nr - ext_w);
          if (bqw < 1 || bqw == last_w) continue;
          last_w = bqw;
          if (f.sw.twg_bqw != 0 && bqw != f.sw.twg_bqw) continue;  // CONVT3D_TWG_BQW
          const int64_t bqh = std::min<int64_t>(nr / (bqw + ext_w), Qh0);
          if (bqh < 1) continue;
          double cost = 0;
          int64_t max_pos = 0;
          for (int rd = 0; rd < p.stride[0]; ++rd)
            for (int rh = 0; rh < p.stride[1]; ++rh)
              for (int rw = 0; rw < p.stride[2]; ++rw) {
                const int64_t pos = (dd + phase_span(ax[0], rd)) *
                                    (bqh + phase_span(ax[1], rh)) * (bqw + phase_span(ax[2], rw));
                max_pos = std::max(max_pos, pos);
                const double tiles = double(p.N) * ceil_div(ax[0].q[rd], dd) *
                                     ceil_div(ax[1].q[rh], bqh) * ceil_div(ax[2].q[rw], bqw);
                const int64_t t = shifts(rd, rh, rw);
                const double mma = double(sl) * nr * t;
                cost += tiles * ((t > 0 ? double(chunks) * (mma + pos) : 0.0) + JD * bqh * bqw +
                                 line_cost * JD * bqh);
              }
          // The kernel's box rows (twg_box_rows), bounded over the phases by the largest span
          // per axis (a TMA box's, which every phase then has): the last slice's run from the
          // first tap, at (J - 1) x cstep_d + ext_d planes, ext_h lines and ext_w columns in.
          const int64_t hh = bqh + ext_h, hw = bqw + ext_w;
          const int64_t reach = (dd - JD + (JD - 1) * cstep_d + ext_d) * hh * hw + ext_h * hw +
                                ext_w + nr;
          const int64_t pos_pad = fwd::twg_box_rows(max_pos, reach);
          // (3xTF32's depth-stacked scalar-loader kernel sizes its row table by the tile)
          const bool tight = x3 && !h16 && !f.kvec && J > 1 && !ws;
          const int64_t smem = fwd::twg_smem_bytes(nr, int(dd * bqh * bqw), pos_pad, tap_cap, 1,
                                                   sl, J, split, ws, false, 0, tight, h16);
          if (smem > cap) continue;
          if (!ws && !depth_rejected) depth_fit = std::max(depth_fit, J);
          if (!ws && depth_rejected) continue;
          if (best.nr == 0 || cost < best.cost) {
            best = TwgTile{cost, nr, int(bqh), int(bqw), 1, J, ws, smem, tap_cap, pos_pad, tight};
          }
        }
      }
    }
    // Stream the box (chunk c + 1 loads during chunk c) when a second buffer still fits, with
    // an asynchronous box (TMA or cp.async: channels_last x), in 3xTF32 or in TF32;
    // CONVT3D_BOX_STREAM=1 streams any box that fits, =0 none. The scalar loader's plain loads
    // and stores share the issue slots with the wgmmas: streamed 16-bit NCDHW boxes tied, strict
    // fp32 gained a little (H100, 2026-11-25, halo_ab.py --batch 5, NCDHW, ms, streamed /
    // reloaded): case 11 bf16 0.2639 / 0.2654, fp16 0.2716 / 0.2675, strict 1.3850 / 1.3890;
    // case 12 bf16 0.3558 / 0.3528, fp16 0.3544 / 0.3508, strict 1.3211 / 1.3393. TF32 lost
    // then (case 11 0.4252 / 0.4157, case 12 0.5628 / 0.5490) and gains on today's kernels
    // (2026-11-28, design docs v55-v56: case 11 on an H200 0.3490, 0.3508 / 0.3649, 0.3649, on
    // an H100 0.3538, 0.3542 / 0.3622, 0.3757; case 12 has no room for the second buffer now).
    const bool stream_ok = f.sw.box_stream == 1 ||
                           (f.sw.box_stream == -1 && (f.kvec || x3 || f.mode == fwd::Mode::kTf32));
    if (best.nr > 0 && chunks > 1 && stream_ok) {
      const int64_t stream_smem =
          fwd::twg_smem_bytes(best.nr, int(sl * best.planes() * best.h * best.w), best.pos_pad,
                              best.tap_cap, 2, sl, best.stack, split, best.wstack, false, 0,
                              best.tight, h16);
      if (stream_smem <= cap) {
        best.box_bufs = 2;
        best.smem = stream_smem;
      }
    }
    return best;
  };
  // Two slices (two CTAs per SM: one CTA's box load and epilogue overlap the other's MMAs) pay
  // where a CTA's K loop is short, at most kTwgTwoSliceK channel chunks x taps per phase on
  // average, and the same tile still fits twice per SM. Measured (H100, 2026-11-24,
  // halo_ab.py --batch 5, twg four / two slices, ms, channels_last and NCDHW; design doc v12):
  // case 12 TF32 (27 chunk-taps) 0.591 / 0.566 and 0.767 / 0.686; case 8 TF32 (54) 0.454 /
  // 0.365 and 0.987 / 1.040; case 11 bf16 (32) 0.240 / 0.234 and 0.329 / 0.308, TF32 (64,
  // where two slices lose the streamed box) 0.412 / 0.444 and 0.518 / 0.491; case 2 bf16
  // (54) 1.006 / 1.016 and 1.298 / 1.312; case 3 (75-150 chunk-taps; two slices only fit a
  // smaller tile) 3.22 / 3.83 bf16. A second call gave the same signs. With TMA boxes the bar
  // went from 56 to 96 (2026-11-24, H100, same script, four / two slices, ms, channels_last and
  // NCDHW): case 2 TF32 (81 chunk-taps) 1.641 / 1.528 and 1.942 / 1.889; case 11 TF32 (64)
  // 0.370 / 0.362 and 0.505 / 0.493.
  const int sl_env = x3 ? 2 : f.sw.twg_slices;  // CONVT3D_TWG_SLICES=2/4 fixes it
  int slices = sl_env != 0 ? sl_env : fwd::kTwgSlices;
  TwgTile t = search(slices);
  // The K loop per CTA: channel chunks x box shifts per non-empty phase (taps when unstacked).
  int64_t shifts_sum = 0;
  for (int rd = 0; rd < p.stride[0]; ++rd)
    for (int rh = 0; rh < p.stride[1]; ++rh)
      for (int rw = 0; rw < p.stride[2]; ++rw) {
        if (int64_t(ax[0].q[rd]) * ax[1].q[rh] * ax[2].q[rw] == 0) continue;  // as tap_stats
        shifts_sum += twg_shifts(ax, t.stack, t.wstack, rd, rh, rw);
      }
  const double k_chunks = double(chunks) * double(shifts_sum) / double(ts.nonempty);
  if (sl_env == 0 && t.nr > 0 && k_chunks <= kTwgTwoSliceK) {
    // The same tile with half the slices; with stacked w taps any tile of the same stack (suite
    // case 1 at two slices took run length 144 where four took 128, and gained: H100,
    // 2026-11-25, halo_ab.py --batch 5, ms, four / two slices, NCDHW and channels_last: TF32
    // 0.624 / 0.591 and 0.602 / 0.573, bf16 0.434 / 0.381 and 0.370 / 0.345).
    const TwgTile t2 = search(2);
    if (t2.nr > 0 && t2.stack == t.stack && t2.wstack == t.wstack &&
        (t.wstack || (t2.nr == t.nr && t2.h == t.h && t2.w == t.w))) {
      t = t2;
      slices = 2;
    }
  }
  if (t.nr == 0) return;
  // twg_pays: narrow layers only where the stacked blocks fill more than half of M
  if (env == -1 && f.p.Cout_g <= 32 && f.p.Cout_g * t.stack <= 32) return;
  // (Cout/g <= 16 takes w taps only, measured so: the search's depth_rejected.)
  const int64_t tiles0 = p.N * ceil_div(ax[0].q[0], int64_t(slices) * t.planes()) *
                         ceil_div(Qh0, t.h) * ceil_div(Qw0, t.w);
  const int64_t phases = p.stride[0] * p.stride[1] * p.stride[2];
  const double blocks = double(tiles0) * double(phases) * double(f.p.groups);
  if (tiles0 < 1 || blocks > double(std::numeric_limits<int32_t>::max())) return;
  // 3xTF32, unstacked: weight stages of twice the taps (a.twg_long) where the chosen tile, box
  // buffers included, still fits; a larger stage never shrinks the tile. Measured (H100,
  // 2026-11-26, ab_trees.sh, halo_ab.py --batch 5, two rounds, ms, stages of 4 / 8 taps, on
  // the tiles each tree's planner chose): suite cases 2 5.14 / 4.72 NCDHW and 4.94 / 4.61
  // channels_last, 8 0.762 / 0.731 and 0.758 / 0.727, 11 1.344 / 1.226 and 1.166 / 1.120;
  // where the long stages took a smaller tile or gave up the streamed box they lost (case 3
  // 18.6 / 20.5 channels_last, case 12 1.140 / 1.250).
  int long_stage = 0;
  if (x3 && t.stack == 1 && f.sw.twg_long != 0) {  // CONVT3D_TWG_LONG=0: never
    const int64_t long_smem =
        fwd::twg_smem_bytes(t.nr, int(slices * t.h * t.w), t.pos_pad, t.tap_cap, t.box_bufs,
                            slices, 1, split, false, true, 0, false, h16);
    if (long_smem <= int64_t(prop->sharedMemPerBlockOptin)) {
      long_stage = 1;
      t.smem = long_smem;
    }
  }
  // 3xTF32 with NCDHW-like x and a streamed box: stage each chunk's box by TMA (twg_stage_ok)
  // where its staging buffer still fits. The scalar loader's global loads held the warpgroup
  // that issued them while the other's wgmmas ran out; the staged split reads shared memory.
  // Measured (H100, 2026-11-27, halo_ab.py --batch 5, two rounds, strict fp32 NCDHW, ms,
  // staged / scalar loader): suite case 12 1.0749, 1.0835 / 1.1233, 1.1049; case 11 1.0144,
  // 1.0118 / 1.0537, 1.0504. Cases 2, 3, 4 and 8 do not stream their box (no room).
  int box_stage = 0;
  if (x3 && !h16 && t.box_bufs == 2 && t.stack == 1 && twg_stage_ok(f, x)) {
    const int64_t stage_bytes = twg_stage_bytes(f, t.h, t.w, slices, fwd::bk_elems(f.mode));
    const int64_t stage_smem =
        fwd::twg_smem_bytes(t.nr, int(slices * t.h * t.w), t.pos_pad, t.tap_cap, t.box_bufs,
                            slices, 1, split, false, long_stage != 0, stage_bytes);
    if (stage_bytes > 0 && stage_smem <= int64_t(prop->sharedMemPerBlockOptin)) {
      box_stage = 1;
      t.smem = stage_smem;
    }
  }
  // The same x with a box reloaded per chunk (no room for a second box buffer) and stacked
  // depth planes: stage it in kTwgPieces pieces of kTwgPieceCh channels through two piece
  // buffers, where they fit (suite case 4: to the last 128 bytes). A chunk's first two pieces
  // are copied during the previous chunk's wgmmas, and the warps split each piece from shared
  // memory, instead of the scalar loader's round trips to global memory with every wgmma done.
  // (Only the depth-stacked kernel has it: in the unstacked ones it spilled 84 bytes.)
  if (x3 && !h16 && t.box_bufs == 1 && t.stack > 1 && !t.wstack && twg_stage_ok(f, x)) {
    const int64_t piece_bytes =
        2 * twg_stage_bytes(f, t.h, t.w, slices * t.planes(), fwd::kTwgPieceCh);
    const int64_t piece_smem = fwd::twg_smem_bytes(
        t.nr, int(slices * t.planes() * t.h * t.w), t.pos_pad, t.tap_cap, 1, slices, t.stack,
        split, false, long_stage != 0, piece_bytes, t.tight);
    if (piece_bytes > 0 && piece_smem <= int64_t(prop->sharedMemPerBlockOptin)) {
      box_stage = 2;
      t.smem = piece_smem;
    }
  }
  fwd::FwdArgs& a = f.args;
  a.twg_long = long_stage;
  a.box_stage = box_stage;
  a.h16 = h16 ? 1 : 0;  // (its packed rows are padded further at the call: forward_cuda)
  a.box[0] = slices;
  a.box[1] = t.h;
  a.box[2] = t.w;
  a.smem_bytes = static_cast<int>(t.smem);
  a.tap_cap = static_cast<int>(t.tap_cap);
  a.stack = t.stack;
  a.stack_w = t.wstack ? 1 : 0;
  a.m_tiles = static_cast<int>(tiles0);
  a.n_tiles = 1;
  a.phases = static_cast<int>(phases);
  a.fuse = 0;
  a.wg = 0;
  a.box_bufs = t.box_bufs;
  a.box_tma = twg_tma_ok(f, t.h, t.w, slices * t.planes()) ? 1 : 0;
  for (int i = 0; i < 3; ++i) a.uext[i] = max_span(ax[i]);  // the TMA box's spans
  f.blocks = tiles0 * phases * f.p.groups;
  f.halo = false;
  f.twg_nr = t.nr;
  f.name = std::string("twg_") + fwd::mode_name(f.mode) + "_n" + std::to_string(t.nr) +
           (slices == 2 ? "_s2" : "") + (t.stack > 1 ? (t.wstack ? "_w" : "_j") + std::to_string(t.stack) : "") +
           (long_stage ? "_long" : "") + (h16 ? "_h16" : "") + (t.box_bufs > 1 ? "_stream" : "") +
           (a.box_tma ? "_tma" : f.kvec ? "_kvec" : box_stage == 2 ? "_pieces" :
            box_stage ? "_stage" : "_mfast");
}

}  // namespace planner
}  // namespace convt3d
