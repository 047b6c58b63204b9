// The halo planners (plan.h): v1's tile stays, or the per-phase halo kernel or the fused one
// (all phases of a box per CTA) takes the layer, with its box (fwd/halo_kernel.cuh).
#include "plan.h"

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

constexpr int64_t kFusedMinK = 256;

// The box of kHaloBoxes (rows bm) with the lowest cost(box, &smem) whose shared memory fits,
// preferring boxes that leave room for two CTAs per SM (16 warps hide the box load of one
// behind the MMAs of the other); a larger one is taken only when no such box fits (never with
// two_per_sm). tiles0 is N x boxes over phase 0's q grid, the grid's m extent.
struct BoxChoice {
  const fwd::HaloBox* box = nullptr;
  int64_t smem = 0, tiles0 = 0;
};

// The shared memory one halo-kernel CTA may take on x's device (kHaloSmemCap, within the
// opt-in limit).
int64_t halo_smem_cap(const at::Tensor& x) {
  const auto* prop = at::cuda::getDeviceProperties(x.get_device());
  return std::min<int64_t>(fwd::kHaloSmemCap, prop->sharedMemPerBlockOptin);
}

template <class Cost>
BoxChoice pick_box(int bm, const ConvT3dParams& p, const fwd::AxisPlan* ax, const at::Tensor& x,
                   Cost cost, bool two_per_sm = false) {
  constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
  const int64_t cap = halo_smem_cap(x);
  const int64_t cap2 = smem_two_per_sm(x);
  BoxChoice best;
  double best_cost = 0;
  for (int pass = 0; pass < (two_per_sm ? 1 : 2) && best.box == nullptr; ++pass) {
    const int64_t lim = pass == 0 ? std::min(cap, cap2) : cap;
    for (const auto& box : fwd::kHaloBoxes) {
      if (box.bm != bm) continue;
      int64_t smem = 0;
      const double c = cost(box, smem);
      const int64_t tiles0 = p.N * ceil_div(ax[0].q[0], box.bqd) * ceil_div(ax[1].q[0], box.bqh) *
                             ceil_div(ax[2].q[0], box.bqw);
      if (smem > lim || tiles0 < 1 || tiles0 > kIntMax) continue;
      if (best.box == nullptr || c < best_cost) {
        best = BoxChoice{&box, smem, tiles0};
        best_cost = c;
      }
    }
  }
  return best;
}

// Fills the plan for a halo kernel with box `b`: kind "halo" (per phase) or "fused".
void use_box(FastPlan& f, const BoxChoice& b, int bn, int64_t tap_cap, int64_t n_tiles,
             int64_t blocks, const char* kind) {
  fwd::FwdArgs& a = f.args;
  a.box[0] = b.box->bqd;
  a.box[1] = b.box->bqh;
  a.box[2] = b.box->bqw;
  a.smem_bytes = static_cast<int>(b.smem);
  a.tap_cap = static_cast<int>(tap_cap);
  a.m_tiles = static_cast<int>(b.tiles0);
  a.n_tiles = static_cast<int>(n_tiles);
  f.blocks = blocks;
  f.bn = bn;
  f.halo = true;
  f.name = std::string(kind) + "_" + fwd::mode_name(f.mode) + "_bn" + std::to_string(bn) +
           (f.kvec ? "_kvec" : "_mfast");
}

// Fused halo (all phases of a q box in one CTA, fwd/halo_kernel.cuh): the box covers the union
// of the phases' halos and holds every channel chunk, so x is read once per box instead of once
// per phase, one B pipeline runs across the phases, and a CTA writes a contiguous output block.
// Cost per box: chunks x (MMA rows over all taps + 4 x box positions) + an epilogue per phase.
bool plan_fused(FastPlan& f, const ConvT3dParams& p, int bn, const at::Tensor& x, bool pair) {
  const fwd::AxisPlan* ax = f.args.ax;
  int ulo[3], uext[3];
  for (int i = 0; i < 3; ++i) {
    int lo = 0, hi = 0;
    bool any = false;
    for (int r = 0; r < ax[i].stride; ++r) {
      if (ax[i].ntap[r] == 0) continue;
      const int l = ax[i].c0[r] - (ax[i].ntap[r] - 1) * ax[i].cstep;
      lo = any ? std::min(lo, l) : l;
      hi = any ? std::max(hi, ax[i].c0[r]) : ax[i].c0[r];
      any = true;
    }
    if (!any) return false;  // every phase empty on this axis: bias only, v1 writes it
    ulo[i] = lo;
    uext[i] = hi - lo;
  }
  const int bm = pair ? fwd::kFusedPairTile.bm : fwd::halo_tile(bn).bm;
  const int64_t chunks = ceil_div(p.Cin_g, fwd::bk_elems(f.mode));
  const int64_t phases = p.stride[0] * p.stride[1] * p.stride[2];
  // Every tap is in exactly one phase, and the tap table holds all phases' taps.
  const int64_t kvol = p.k[0] * p.k[1] * p.k[2];
  const int64_t tap_cap = (kvol + 3) / 4 * 4;
  // The phase table's packing (fused_phase_entry); shared memory bounds it far lower anyway.
  if (tap_cap >= fwd::kFusedMaxTaps) return false;
  const double taps_all = double(kvol);
  const BoxChoice best = pick_box(bm, p, ax, x, [&](const fwd::HaloBox& box, int64_t& smem) {
    const int64_t pos = (box.bqd + uext[0]) * int64_t(box.bqh + uext[1]) * (box.bqw + uext[2]);
    smem = fwd::halo_smem_bytes(bn, bm, pos, tap_cap, chunks, fwd::elem_bytes(f.mode), 1, pair,
                                phases);
    const double tiles0 = double(p.N) * ceil_div(ax[0].q[0], box.bqd) *
                          ceil_div(ax[1].q[0], box.bqh) * ceil_div(ax[2].q[0], box.bqw);
    // Pairs: a warp's 32 rows are then one w line, so its paired stores fill whole sectors
    // except at the box's two w ends (narrower boxes leave more sectors to their neighbours).
    const double narrow = pair && box.bqw < 32 ? 2.0 : 1.0;
    return narrow * tiles0 *
           (double(chunks) * (double(bm) * taps_all + 4.0 * pos) + double(phases) * bm);
  });
  if (best.box == nullptr) return false;
  const int64_t n_tiles = ceil_div(p.Cout_g, bn);
  if (double(n_tiles) * double(best.tiles0) * double(p.groups) >
      double(std::numeric_limits<int32_t>::max())) {
    return false;
  }
  use_box(f, best, bn, tap_cap, n_tiles, n_tiles * best.tiles0 * p.groups, "fused");
  fwd::FwdArgs& a = f.args;
  a.phases = 1;  // the kernel loops over the phases
  a.fuse = 1;
  if (pair) {
    a.pair = 1;
    f.name += "_pair";
  }
  for (int i = 0; i < 3; ++i) {
    a.ulo[i] = ulo[i];
    a.uext[i] = uext[i];
  }
  // Resident weights (halo_kernel.cuh RES): BN 32, one N tile and one group (a CTA's weights
  // are the layer's), one-term modes; shared memory holds every tap's B of every chunk in place
  // of the stages, and persistent CTAs load them (and the tables) once, not once per box. The
  // rule: 16 bits without w-phase pairs, where two CTAs still fit per SM (design doc v62, H200,
  // bf16, persistent / streamed: suite cases 6 and 7 15 % faster channels_last; TF32's two
  // chunks of weights leave one CTA per SM, 10 % slower; v63: with the paired kernel's leaner
  // 16-bit epilogue its streamed weights beat the resident ones by 2-9 % on NCDHW).
  // CONVT3D_FUSED_RES=1 wherever legal, 2 the same with one box per CTA (no persistence), 0
  // never.
  const int res_sw = f.sw.fused_res;
  if (res_sw != 0 && bn == 32 && n_tiles == 1 && p.groups == 1 &&
      f.mode != fwd::Mode::kTf32x3) {
    const int64_t cap = halo_smem_cap(x);
    const int64_t smem =
        best.smem - fwd::halo_stage_bytes(bn) + fwd::fused_res_b_bytes(bn, chunks, kvol);
    const bool rule =
        res_sw == -1 && fwd::elem_bytes(f.mode) == 2 && !pair && smem <= smem_two_per_sm(x);
    if (rule || (res_sw > 0 && smem <= cap)) {
      a.fused_res = res_sw > 0 ? res_sw : 1;
      a.smem_bytes = static_cast<int>(smem);
      f.name += a.fused_res == 1 ? "_res" : "_res1";
    }
  }
  return true;
}

}  // namespace

// Switches a fast plan to a halo kernel. Fused (plan_fused) takes strided layers without
// dilation whenever its box fits; the per-phase halo kernel takes calls whose non-empty phases
// have on average >= kHaloMinTaps taps (TF32 channels_last with > 2 chunks: >= 2 taps).
// Per-phase: picks the box of kHaloBoxes with the fewest estimated issue slots, sum over phases of
// boxes x (BM x taps [MMA work] + 4 x halo positions [load work] + BM [epilogue]); per-chunk
// factors are common to all boxes and dropped.
void plan_halo(FastPlan& f, const ConvT3dParams& p, const at::Tensor& x) {
  const int env = f.sw.halo;
  if (env == 0) return;
  const fwd::AxisPlan* ax = f.args.ax;
  const TapStats ts = tap_stats(p, ax);
  const int64_t taps_sum = ts.taps_sum, nonempty = ts.nonempty, max_taps = ts.max_taps;
  if (nonempty == 0) return;
  constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
  if (!tap_offsets_fit(p, f.args.cin_pad)) return;
  const bool dilated = p.dil[0] != 1 || p.dil[1] != 1 || p.dil[2] != 1;
  // Measured on an H200 (docs/performance.md, 2026-11-22): with dilation the halo kernel lost
  // to v1 (suite case 8: 0.57-0.91x), and strict fp32 wider than the halo's 3xTF32 BN cap
  // of 32 re-reads the box per extra N tile and lost too (case 2: 0.92x).
  const bool wide_3x = f.mode == fwd::Mode::kTf32x3 && p.Cout_g > 32;
  const int bn = fwd::pick_bn_halo(p.Cout_g, f.mode);
  const int64_t tap_cap = (max_taps + 3) / 4 * 4;
  const int64_t phases = p.stride[0] * p.stride[1] * p.stride[2];
  const bool few_taps = taps_sum < kHaloMinTaps * nonempty;
  // Fused, measured on an H100 (scripts/halo_ab.py, 2026-11-22): it beat v1 and the per-phase
  // kernel for bf16/fp16 with channels_last x on suite cases 5, 6, 7, 10 and 12, and in NCDHW
  // where each output reduces over >= kFusedMinK products (cases 5, 12; at 108 and 64, cases
  // 6/7 and 10, v1's staged NCDHW stores won). In fp32 (a box twice as deep) it won only with
  // channels_last x of at most two chunks and few taps per phase (cases 6, 7).
  // Since the scalar loaders' rework (design doc v14) the per-phase kernel beats it in 16-bit
  // NCDHW where its phases are long enough for it (suite case 5, 13 taps per phase; H100,
  // 2026-11-25, halo_ab.py --batch 5, ms, per-phase / fused: bf16 0.1804 / 0.1998), so there
  // fused needs few taps too.
  const bool fp32 = f.mode == fwd::Mode::kTf32 || f.mode == fwd::Mode::kTf32x3;
  const int64_t chunks = ceil_div(p.Cin_g, fwd::bk_elems(f.mode));
  const int64_t k_per_out = p.Cin_g * p.k[0] * p.k[1] * p.k[2] / phases;
  const bool fused_pays = fp32 ? f.kvec && chunks <= 2 && few_taps
                               : f.kvec || (k_per_out >= kFusedMinK && few_taps);
  // H100, 2026-11-22 (halo_ab.py --batch 5, ms): 16-bit channels_last with dilation won too
  // (case 8 bf16: fused 0.261, v1 0.325, the per-phase kernel 0.345).
  const bool dilation_ok = !dilated || (!fp32 && f.kvec);
  // Fused w-phase pairs (halo_kernel.cuh, PAIR) for NCDHW y with a w stride of 2 and the
  // scalar loader. v1's NCDHW stores were the cost there (suite cases 6 and 7, H100, kernel µs
  // by torch.profiler, TF32: v1 1365, v1 into a channels_last y 1073, fused into a
  // channels_last y 815), and the fused kernel storing a phase at a time lost to v1 (2.6 ms).
  // With pairs TF32 beat v1 by 10-11 % (H100, scripts/ab_trees.sh, halo_ab --batch 3, two
  // rounds, ms: case 6 1.384, 1.372 -> 1.242, 1.237; case 7 1.370, 1.374 -> 1.214, 1.218).
  // bf16 and fp16 were 1-3 % slower than v1 (design doc v27) until the pairs went through a
  // per-warp transpose, storing whole w runs by stepped pointers (v47); since then they beat
  // v1 by about a quarter (H200, 2026-11-27, ab_trees.sh, halo_ab --batch 3, NCDHW, two
  // rounds, ms, v1 / pairs: case 6 bf16 0.939, 0.916 / 0.687, 0.691; fp16 0.936, 0.917 /
  // 0.688, 0.689; case 7 bf16 0.912, 0.919 / 0.680, 0.690). Cout/g <= 32: wider layers go to
  // twg (twg_pays).
  // CONVT3D_FUSED_PAIR=1 pairs wherever the fused kernel runs and pairs are legal, 0 never.
  const bool pair_ok = f.sw.fused_pair != 0 && f.mode != fwd::Mode::kTf32x3 && !f.kvec &&
                       f.args.y_cfast == 0 && p.stride[2] == 2;
  const bool pair_rule = env == -1 && pair_ok && few_taps && chunks <= 2 && !dilated &&
                         p.Cout_g <= 32;
  if (env == 2 || (env == -1 && phases > 1 && dilation_ok && !wide_3x && fused_pays) ||
      pair_rule) {
    const bool pair = pair_ok && (pair_rule || f.sw.fused_pair == 1);
    if (plan_fused(f, p, pair ? fwd::kFusedPairBn : bn, x, pair)) return;
  }
  // TF32 with channels_last x and more than two chunks (a fused box would lose or not fit)
  // keeps the per-phase kernel down to 2 taps per phase on average, where the box still serves
  // several taps: suite case 12 (k3 s2, Cin 128), per-phase / v1, halo_ab.py --batch 5, ms:
  // H100 0.674 / 0.725 (2026-11-22), H200 0.682 / 0.732 (2026-11-23).
  const bool tf32_deep = f.mode == fwd::Mode::kTf32 && f.kvec && chunks > 2 &&
                         taps_sum >= 2 * nonempty;
  if (env == -1 && ((few_taps && !tf32_deep) || dilated || wide_3x)) return;

  const int bm = fwd::halo_tile(bn).bm;
  auto cost = [&](const fwd::HaloBox& box, int64_t& smem, int box_bufs) {
    int64_t max_pos = 0;
    double cost = 0;
    for (int rd = 0; rd < p.stride[0]; ++rd)
      for (int rh = 0; rh < p.stride[1]; ++rh)
        for (int rw = 0; rw < p.stride[2]; ++rw) {
          const int64_t pos = (box.bqd + phase_span(ax[0], rd)) *
                              (box.bqh + phase_span(ax[1], rh)) * (box.bqw + phase_span(ax[2], rw));
          max_pos = std::max(max_pos, pos);
          const double tiles = double(p.N) * ceil_div(ax[0].q[rd], box.bqd) *
                               ceil_div(ax[1].q[rh], box.bqh) * ceil_div(ax[2].q[rw], box.bqw);
          const int64_t t = int64_t(ax[0].ntap[rd]) * ax[1].ntap[rh] * ax[2].ntap[rw];
          cost += tiles * (double(bm) * t + (t > 0 ? 4.0 * pos : 0.0) + bm);
        }
    smem = fwd::halo_smem_bytes(bn, bm, max_pos, tap_cap, 0, fwd::elem_bytes(f.mode), box_bufs);
    return cost;
  };
  // Several chunks with the cp.async loader: stream the box (two buffers) when that still
  // leaves two CTAs per SM; else one buffer, reloaded per chunk.
  BoxChoice best;
  int box_bufs = 1;
  if (f.kvec && chunks > 1 && f.sw.box_stream != 0) {
    best = pick_box(bm, p, ax, x, [&](const fwd::HaloBox& b, int64_t& sm) { return cost(b, sm, 2); },
                    /*two_per_sm=*/true);
    box_bufs = best.box != nullptr ? 2 : 1;
  }
  if (best.box == nullptr) {
    best = pick_box(bm, p, ax, x, [&](const fwd::HaloBox& b, int64_t& sm) { return cost(b, sm, 1); });
  }
  if (best.box == nullptr) return;
  const int64_t n_tiles = ceil_div(p.Cout_g, bn);
  const double blocks = double(n_tiles) * double(phases) * double(best.tiles0) * double(p.groups);
  if (blocks > double(kIntMax)) return;
  const bool wg = use_wgmma(f.mode, f.sw, x);
  use_box(f, best, bn, tap_cap, n_tiles, n_tiles * phases * best.tiles0 * p.groups,
          wg ? "halo_wgmma" : "halo");
  f.args.wg = wg ? 1 : 0;
  f.args.box_bufs = box_bufs;
}

}  // namespace planner
}  // namespace convt3d
