// Forward path selection for CUDA. The fast path (fwd/) covers bf16, fp16 and fp32 (TF32 or
// 3xTF32, following torch.backends.cudnn.allow_tf32) on sm80+, any layout and geometry whose
// sizes fit its int32 tables; everything else (fp64, huge strides, ...) runs the reference.
//
// CONVT3D_FORCE_REFERENCE=1 (read once, at the first forward) forces the reference kernel, to
// bisect a suspected fast-path bug without rebuilding.
//
// Within the fast path (plan_halo): small grouped layers may first be densified (densify);
// strided layers take the fused halo kernel (fwd/halo_kernel.cuh, all phases per CTA) when its
// measured rule says it pays (fused_pays; with dilation only for 16-bit channels_last) and its
// box fits; otherwise the per-phase halo kernel takes calls whose non-empty phases have on
// average >= kHaloMinTaps taps (x reuse across taps pays; TF32 with channels_last x and more
// than two chunks: >= 2 taps), when a box of kHaloBoxes fits the shared-memory cap; v1
// (igemm) takes the rest. CONVT3D_HALO (read per call) overrides: 0 = never halo, 1 =
// per-phase halo whenever it fits, 2 = fused whenever it fits (A/B timing and tests);
// CONVT3D_DENSE=0 never densifies; a densified layer on the mma.sync halo kernels skips its zero
// weight blocks where that pays (strict fp32; per-phase at BN 32; CONVT3D_DENSE_SKIP
// overrides). On an sm_90 device with a build that has sm_90a,
// CONVT3D_WGMMA=1 (read per call) runs the per-phase halo kernel's wgmma variant
// (fwd/wgmma.cuh; bf16, fp16, TF32); it is not chosen automatically, since it has not beaten
// mma.sync consistently. With several channel chunks and the cp.async loader
// the per-phase kernel streams its box (two buffers) when that leaves two CTAs per SM;
// CONVT3D_BOX_STREAM=0 turns that off. On sm_90 (sm_90a build) the transposed wgmma kernel
// (fwd/twg_kernel.cuh, plan_twg) replaces the per-phase halo kernel for bf16, fp16, TF32 and
// 3xTF32 layers with 32 < Cout/g <= 64 and at least 8 taps per phase on average, v1 or the
// per-phase kernel for TF32 and 3xTF32 with 32 < Cout/g <= 64, v1 or the fused kernel for
// 16-bit strided layers with 32 < Cout/g <= 64 and NCDHW x, and the per-phase kernel of
// stride-1 layers with 16 < Cout/g <= 32 with two depth planes stacked per warpgroup, or
// Cout/g <= 16 with four w taps stacked (twg_pays); CONVT3D_TWG=1 forces it wherever legal, =0
// never; CONVT3D_TWG_STACK=1/2/4 fixes its stacked blocks where legal (CONVT3D_TWG_WSTACK=1:
// w taps, =0: depth planes), CONVT3D_TWG_BQW=n its tile width (no twg where no such tile
// fits); with channels_last x it loads its boxes by
// TMA where the tensor map is legal (twg_tma_ok; CONVT3D_TWG_TMA=0 never). Plans are cached per
// call signature (cached_plan; CONVT3D_PLAN_CACHE=0 plans every call). Last, on sm_90 (sm_90a
// build), layers whose kernel equals their stride (every output from one tap) with
// channels_last x, or NCDHW x and y, take the non-overlapping kernel (fwd/pw_kernel.cuh,
// plan_pw: one dense GEMM), over any other choice; CONVT3D_PW=1 forces it wherever legal, =0
// never.
#include "forward_cuda.h"

#include "box_map.h"
#include "fwd/dispatch.h"
#include "fwd/phases.h"
#include "fwd/tile_configs.h"
#include "plan_cache.h"
#include "reference_cuda.h"
#include "switches.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace convt3d {
namespace {

bool force_reference() {
  static const bool force = [] {
    const char* v = std::getenv("CONVT3D_FORCE_REFERENCE");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return force;
}

// wgmma kernels exist only in builds for sm_90a (setup.py defines CONVT3D_SM90A), and an sm_90a
// binary runs only on compute capability 9.0 exactly. Opt-in only: measured on H100s
// (scripts/halo_ab.py, 2026-11-22, suite cases 1-4 and 11), the variant lost to mma.sync in
// TF32, with the scalar loader and at BN <= 48 (up to 40 %), and at BN 64 in bf16 with the
// channel-fast loader it won by 5 % in one run and lost by 9-13 % in another
// (docs/fast_forward_design.md, v5).
bool use_wgmma_arch(const at::Tensor& x) {
#if defined(CONVT3D_SM90A)
  const auto* prop = at::cuda::getDeviceProperties(x.get_device());
  return prop->major == 9 && prop->minor == 0;
#else
  (void)x;
  return false;
#endif
}

bool use_wgmma(fwd::Mode mode, const Switches& sw, const at::Tensor& x) {
  if (mode == fwd::Mode::kTf32x3) return false;  // three-term split: mma.sync only
  return sw.wgmma == 1 && use_wgmma_arch(x);
}

constexpr int64_t kHaloMinTaps = 8;
constexpr int64_t kFusedMinK = 256;

struct FastPlan {
  Switches sw;         // the environment switches this plan was made under
  bool fast = false;
  bool halo = false;
  fwd::Mode mode = fwd::Mode::kBf16;
  int bn = 0;
  bool kvec = false;
  int64_t blocks = 0;
  int dense_g = 1;     // > 1: that many groups packed into one block-diagonal weight
  int twg_nr = 0;      // > 0: the transposed wgmma kernel with this run length
  int pw_bn = 0;       // > 0: the non-overlapping kernel with this BN
  ConvT3dParams p;     // the geometry planned for (densified groups merged)
  fwd::FwdArgs args;  // geometry; pointers are filled at launch
  std::string name = "reference";
};

// 16-byte chunks of a tensor's channels are legal when its channel stride is 1, each group's
// `c_g` channels are whole chunks, and the data pointer and every other stride of a non-size-1
// dim are chunk-aligned (strides of size-1 dims never multiply a nonzero index). For x this
// selects the channel-fast loader, for y the 16-byte epilogue stores.
bool channel_vector_ok(const at::Tensor& t, const std::array<int64_t, 5>& st, int64_t c_g,
                       int chunk) {
  if (st[1] != 1 || c_g % chunk != 0) return false;
  if (reinterpret_cast<uintptr_t>(t.const_data_ptr()) % 16 != 0) return false;
  for (int d : {0, 2, 3, 4}) {
    if (t.size(d) > 1 && st[d] % chunk != 0) return false;
  }
  return true;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The dynamic shared memory a CTA may take so that two fit on an SM of x's device.
int64_t smem_two_per_sm(const at::Tensor& x) {
  const cudaDeviceProp* prop = at::cuda::getDeviceProperties(x.get_device());
  return int64_t(prop->sharedMemPerMultiprocessor) / 2 - int64_t(prop->reservedSharedMemPerBlock);
}

// The box of kHaloBoxes (rows bm) with the lowest cost(box, &smem) whose shared memory fits,
// preferring boxes that leave room for two CTAs per SM (16 warps hide the box load of one
// behind the MMAs of the other); a larger one is taken only when no such box fits (never with
// two_per_sm). tiles0 is N x boxes over phase 0's q grid, the grid's m extent.
struct BoxChoice {
  const fwd::HaloBox* box = nullptr;
  int64_t smem = 0, tiles0 = 0;
};

template <class Cost>
BoxChoice pick_box(int bm, const ConvT3dParams& p, const fwd::AxisPlan* ax, const at::Tensor& x,
                   Cost cost, bool two_per_sm = false) {
  constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
  const auto* prop = at::cuda::getDeviceProperties(x.get_device());
  const int64_t cap = std::min<int64_t>(fwd::kHaloSmemCap, prop->sharedMemPerBlockOptin);
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
  return true;
}

// Taps over the stride phases: the sum and count over phases that have taps and outputs, and
// the most taps of any phase (it sizes the kernels' tap tables).
struct TapStats {
  int64_t taps_sum = 0, nonempty = 0, max_taps = 0;
};

TapStats tap_stats(const ConvT3dParams& p, const fwd::AxisPlan* ax) {
  TapStats s;
  for (int rd = 0; rd < p.stride[0]; ++rd)
    for (int rh = 0; rh < p.stride[1]; ++rh)
      for (int rw = 0; rw < p.stride[2]; ++rw) {
        const int64_t t = int64_t(ax[0].ntap[rd]) * ax[1].ntap[rh] * ax[2].ntap[rw];
        const int64_t q = int64_t(ax[0].q[rd]) * ax[1].q[rh] * ax[2].q[rw];
        s.max_taps = std::max(s.max_taps, t);
        if (t > 0 && q > 0) {
          s.taps_sum += t;
          ++s.nonempty;
        }
      }
  return s;
}

// The kernels' tap tables hold int32 element offsets into one group's packed weight.
bool tap_offsets_fit(const ConvT3dParams& p, int cin_pad) {
  return double(p.k[0]) * double(p.k[1]) * double(p.k[2]) * double(p.Cout_g) * double(cin_pad) <=
         double(std::numeric_limits<int32_t>::max());
}

// The box span (ntap - 1) x cstep of phase r along one axis (0 without taps): a box covers its
// outputs' extent plus this.
int64_t phase_span(const fwd::AxisPlan& ax, int r) {
  return ax.ntap[r] > 0 ? int64_t(ax.ntap[r] - 1) * ax.cstep : 0;
}

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
// (The x half of it, which the non-overlapping kernel's plan_pw shares.)
bool h16_x_ok(const at::Tensor& x) {
  return x.scalar_type() == at::kFloat && x.is_non_overlapping_and_dense();
}
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
    // an asynchronous box (TMA or cp.async: channels_last x) or in 3xTF32;
    // CONVT3D_BOX_STREAM=1 streams any box that fits, =0 none. The scalar loader's plain loads
    // and stores share the issue slots with the wgmmas: streamed one-term NCDHW boxes lost in
    // TF32 and tied in 16-bit, strict fp32 gained a little (H100, 2026-11-25, halo_ab.py
    // --batch 5, NCDHW, ms, streamed / reloaded): case 11 TF32 0.4252 / 0.4157, bf16 0.2639 /
    // 0.2654, fp16 0.2716 / 0.2675, strict 1.3850 / 1.3890; case 12 TF32 0.5628 / 0.5490, bf16
    // 0.3558 / 0.3528, fp16 0.3544 / 0.3508, strict 1.3211 / 1.3393.
    const bool stream_ok =
        f.sw.box_stream == 1 || (f.sw.box_stream == -1 && (f.kvec || x3));
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

// Every output reached exactly once through one tap: on each axis every phase has one tap and
// its inputs i = q + c0 stay inside x for all of its outputs (k = s with output_padding <=
// padding; dilation 1, or a 1-tap kernel).
bool non_overlapping(const ConvT3dParams& p, const fwd::AxisPlan* ax) {
  for (int i = 0; i < 3; ++i) {
    if (p.k[i] != p.stride[i] || (p.dil[i] != 1 && p.k[i] != 1)) return false;
    for (int r = 0; r < ax[i].stride; ++r) {
      if (ax[i].ntap[r] != 1) return false;
      if (ax[i].q[r] > 0 && (ax[i].c0[r] < 0 || ax[i].q[r] - 1 + ax[i].c0[r] >= ax[i].in)) {
        return false;
      }
    }
  }
  return true;
}

// x whose positions are contiguous per channel (NCDHW): d, h, w strides H W, W, 1 (size-1 axes
// excepted), D H W a multiple of the 16-byte run (so a run of positions never straddles two
// samples), and the data pointer, channel and sample strides 16-byte aligned.
bool positions_contiguous(const ConvT3dParams& p, const at::Tensor& x) {
  const int64_t D = p.in[0], H = p.in[1], W = p.in[2];
  const int64_t run = 16 / x.element_size();
  const auto& st = p.x_st;
  if ((D * H * W) % run != 0) return false;
  if ((W > 1 && st[4] != 1) || (H > 1 && st[3] != W) || (D > 1 && st[2] != H * W)) return false;
  return reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0 && st[1] % run == 0 &&
         (p.N == 1 || st[0] % run == 0);
}

// B straight from w (pw_kernel.cuh, WD): every K row of w holds the ncols columns
// contiguously in the kernel's column order, (tap, co) = a channels_last w, or with NCDHW x
// (`mn`) (co, tap) = a contiguous w (size-1 dims excepted); w's data and K rows 16-byte aligned
// and ncols whole 16-byte chunks. A densified plan needs its block-diagonal repack.
// CONVT3D_PW_WDIRECT=0 keeps the repack (A/B timing, tests). TF32 never reads w: its wgmma
// takes K-major B only, and w's transpose in shared memory (a K-major buffer and a barrier per
// chunk) lost to the repack once A went to the wgmma from registers (H200, ab_trees.sh
// --batch 20, 2026-11-28, ms, repack / direct: case 9 NCDHW 0.0364 / 0.0381, case 10 NCDHW
// 0.250 / 0.261; design doc v53). 3xTF32 splits B in shared memory anyway (its K loop has the
// barriers), so it transposes B as it splits it, with either x.
bool w_direct_ok(const FastPlan& f, const ConvT3dParams& p, bool mn, bool w_aligned) {
  const int64_t kRun = fwd::chunk_elems(f.mode);  // elements per 16 bytes
  if (f.dense_g > 1 || !w_aligned || f.sw.pw_wdirect == 0) return false;
  if (f.mode == fwd::Mode::kTf32) return false;
  const int64_t cg = p.Cout_g, kd = p.k[0], kh = p.k[1], kw = p.k[2];
  if ((kd * kh * kw * cg) % kRun != 0 || (p.Cin > 1 && p.w_st[0] % kRun != 0)) return false;
  const int64_t size[5] = {p.Cin, cg, kd, kh, kw};
  const int64_t want[5] = {0, mn ? kd * kh * kw : 1, mn ? kh * kw : kh * kw * cg,
                           mn ? kw : kw * cg, mn ? 1 : cg};
  for (int i = 1; i < 5; ++i) {
    if (size[i] > 1 && p.w_st[i] != want[i]) return false;
  }
  return true;
}

// Non-overlapping kernel (fwd/pw_kernel.cuh): bf16, fp16, TF32 or 3xTF32 (strict fp32: split
// operands, BN <= kPwX3MaxBn, two stages) on an sm_90a build and an sm_90 device, with
// channels_last x, or with positions_contiguous x and y's w unit-stride (16-bit A read M-major,
// fp32 A read into registers; BN a multiple of k_w). NCDHW x
// with a channels_last w makes y channels_last, whose per-element stores took 0.171 ms on
// case 9 bf16 (H100) against v1's 0.06, so that stays on v1. BN: 64 when taps x Cout/g fit
// it, else 128; CONVT3D_PW_BN overrides. 16-bit and 3xTF32 run on persistent CTAs
// (pw_persistent), TF32 on two stages where three would halve its CTAs per SM on a long K
// (kPwStagesLean).
// In auto mode it replaces every other choice, the fused kernel included since its epilogue
// tile stopped conflicting on banks. Measured on an H100 (scripts/halo_ab.py --batch 20,
// 2026-11-24, ms):
// - channels_last: case 10 bf16 pw64 0.189 / pw128 0.196 / fused 0.260, fp16 0.188 / 0.193 /
//   0.251, TF32 pw128 0.316 / pw64 0.348 / fused 0.557; case 9 TF32 pw 0.053 / fused 0.117
//   (host-bound calls; earlier v1 measurements: docs/fast_forward_design.md v11);
// - NCDHW, M-major A: case 10 bf16 pw128 0.251 / pw64 0.311 / v1 0.472, fp16 0.247 / 0.307 /
//   0.467; A transposed (one CTA per SM at BN 128 with three stages): case 10 TF32 pw128
//   0.321 / pw64 0.419 / v1 0.537, case 9 TF32 0.065 / 0.067 / 0.070;
// - persistent 16-bit CTAs (same call, BN 128 / 64 / one CTA per tile at the rule's BN): case
//   10 bf16 channels_last 0.165 / 0.172 / 0.190, NCDHW 0.201 / 0.291 / 0.240; before
//   persistence, one K chunk took BN 64 (four CTAs per SM: 0.169).
// B is read straight from w where w_direct_ok allows.
void plan_pw(FastPlan& f, const ConvT3dParams& p, const at::Tensor& x, bool w_aligned) {
  // CONVT3D_PW: 1 wherever legal, 0 never; unset takes it in auto mode (CONVT3D_HALO and
  // CONVT3D_TWG unset), where it is legal. CONVT3D_PW_BN fixes its BN.
  const int env = f.sw.pw;
  if (env == 0 || (env == -1 && (f.sw.halo != -1 || f.sw.twg != -1))) return;
  if (!use_wgmma_arch(x)) return;
  // NCDHW x, and y's w unit-stride (y is channels_last when w is): its epilogue writes runs of w.
  const bool mn = !f.kvec && positions_contiguous(p, x) && (p.out[2] == 1 || p.y_st[4] == 1);
  if (!f.kvec && !mn) return;
  if (!non_overlapping(f.p, f.args.ax) || !tap_offsets_fit(f.p, f.args.cin_pad)) return;
  const int64_t ncols = f.p.k[0] * f.p.k[1] * f.p.k[2] * f.p.Cout_g;
  // K in 128-byte chunks: without persistence only the stages K fills are allocated.
  const int64_t chunks = ceil_div(f.p.Cin_g * fwd::elem_bytes(f.mode), fwd::kPwBkBytes);
  int bn = f.sw.pw_bn;
  const bool x3 = f.mode == fwd::Mode::kTf32x3;  // strict fp32: split operands (pw_kernel.cuh)
  // Strict fp32 as fp16 products (a.h16, fwd/h16_split.cuh): where x is dense, as on the
  // transposed kernel (h16_x_ok), and K fills the chunks its stages run ahead (the chunk
  // stream maps chunks past K to the next tile only); BN 128 only where K fits one fold of its
  // partial sums (kPwH16ShortK: registers), else 64. Taken where the columns earn back its scale
  // pass over x (kPwH16MinCols); CONVT3D_PW_H16=1 wherever legal, 0 never.
  const bool long_k = f.p.Cin_g > fwd::kPwH16ShortK;
  bool h16 = x3 && f.sw.pw_h16 != 0 && (f.sw.pw_h16 == 1 || ncols >= fwd::kPwH16MinCols) &&
             h16_x_ok(x) && chunks >= fwd::kPwStagesH16 - 1 &&
             tap_offsets_fit(f.p, fwd::h16_cin_pad(static_cast<int>(f.p.Cin_g)));
  if (bn == 0) bn = ncols <= 64 || (h16 && long_k) ? 64 : 128;
  if (bn == 128 && long_k) h16 = false;
  if (x3 && bn > fwd::kPwX3MaxBn) return;
  if (mn && bn % p.k[2] != 0) return;  // a thread writes the k_w outputs of a column group
  const int64_t M = f.p.N * p.in[0] * p.in[1] * p.in[2];
  const int64_t m_tiles = ceil_div(M, fwd::kPwBm), n_tiles = ceil_div(ncols, bn);
  const double blocks = double(m_tiles) * double(n_tiles) * double(f.p.groups);
  if (m_tiles < 1 || blocks > double(std::numeric_limits<int32_t>::max())) return;
  fwd::FwdArgs& a = f.args;
  a.m_tiles = static_cast<int>(m_tiles);
  a.n_tiles = static_cast<int>(n_tiles);
  for (int i = 0; i < 3; ++i) {
    a.pad[i] = static_cast<int>(p.pad[i]);
    a.out[i] = static_cast<int>(p.out[i]);
  }
  const int split = x3 && !h16 ? 2 : 1;
  const bool persistent = fwd::pw_persistent(fwd::elem_bytes(f.mode), split, h16);
  a.w_direct = w_direct_ok(f, p, mn, w_aligned) ? 1 : 0;
  auto smem = [&](bool lean) {
    const int max_stages = fwd::pw_stages(fwd::elem_bytes(f.mode), split, lean, h16);
    const int stages = persistent ? max_stages
                                  : static_cast<int>(std::min<int64_t>(chunks, max_stages));
    return fwd::pw_smem_bytes(bn, stages, fwd::elem_bytes(f.mode), split, h16);
  };
  // TF32 lean (two stages, kPwStagesLean): where K fills three stages and they would leave one
  // CTA per SM but two stages leave two; CONVT3D_PW_LEAN=1 wherever BN <= 128, 0 never.
  bool lean = false;
  if (f.mode == fwd::Mode::kTf32 && bn <= 128 && f.sw.pw_lean != 0) {
    const int64_t half = smem_two_per_sm(x);
    lean = f.sw.pw_lean == 1 || (chunks >= fwd::kPwStages && smem(false) > half &&
                                 smem(true) <= half);
  }
  a.pw_lean = lean ? 1 : 0;
  a.smem_bytes = smem(lean);
  a.tiles = static_cast<int>(m_tiles * n_tiles * f.p.groups);
  a.persist = persistent && f.sw.pw_persist != 0 ? 1 : 0;
  f.blocks = m_tiles * n_tiles * f.p.groups;
  f.halo = false;
  f.twg_nr = 0;
  a.h16 = h16 ? 1 : 0;  // (replaces plan_twg's choice for the same layer)
  a.x_mn = mn ? 1 : 0;
  a.ws0 = p.w_st[0];
  f.pw_bn = bn;
  f.name = std::string("pw_") + fwd::mode_name(f.mode) + "_bn" + std::to_string(bn) +
           (h16 ? "_h16" : "") + (lean ? "_s2" : "") + (mn ? "_mn" : "_kvec") +
           (a.w_direct ? "_wdirect" : "");
}

// The output prefill (fwd/fill.cu): a per-phase kernel (v1, per-phase halo, twg) writing a
// contiguous NCDHW y with stride > 1 along w, where phases without taps hold at least half of
// the outputs, gets y filled with its bias first, and those phases' CTAs return at once. Their
// interleaved half-sectors otherwise reached the DRAM apart from the computed ones, each
// merged by a read and a write: suite case 8 (dilation 2 = stride: 7 outputs in 8 are bias)
// read 556 MB and wrote 926 MB for 34 MB of x and 571 MB of y in TF32 NCDHW (ncu, H100).
// CONVT3D_PREFILL=1 prefills wherever a phase is empty (the same layouts), 0 never.
void plan_prefill(FastPlan& f, const ConvT3dParams& p) {
  const fwd::FwdArgs& a = f.args;
  if (f.sw.prefill == 0 || f.pw_bn > 0 || a.fuse != 0) return;
  const int64_t hw = p.out[1] * p.out[2], dhw = p.out[0] * hw;
  const std::array<int64_t, 5> ncdhw = {p.Cout * dhw, dhw, hw, p.out[2], 1};
  if (p.y_st != ncdhw || dhw == 0 || p.Cout > std::numeric_limits<int32_t>::max()) return;
  int64_t empty = 0;
  for (int rd = 0; rd < p.stride[0]; ++rd)
    for (int rh = 0; rh < p.stride[1]; ++rh)
      for (int rw = 0; rw < p.stride[2]; ++rw) {
        if (int64_t(a.ax[0].ntap[rd]) * a.ax[1].ntap[rh] * a.ax[2].ntap[rw] == 0) {
          empty += int64_t(a.ax[0].q[rd]) * a.ax[1].q[rh] * a.ax[2].q[rw];
        }
      }
  const bool rule = p.stride[2] > 1 && 2 * empty >= dhw;
  if (empty == 0 || (f.sw.prefill != 1 && !rule)) return;
  f.args.prefilled = 1;
  f.name += "_prefill";
}

// Small grouped layers run as one block-diagonal dense layer when that pads less: each
// group's Cin/g is padded to a 64-byte K chunk and its Cout/g to an MMA tile of 16, so e.g. 4
// groups of 8 -> 8 channels in bf16 multiply 4 x 32 x 16 per tap, dense 32 -> 32 only 32 x 32,
// with one CTA instead of four per output box and whole-row channels_last I/O. The dense weight
// (zeros off the diagonal blocks) is at most 64 x 64 per tap.
bool densify(const ConvT3dParams& p, fwd::Mode mode, const Switches& sw) {
  if (sw.dense == 0) return false;  // CONVT3D_DENSE=0 (A/B timing and tests)
  if (p.groups == 1 || p.Cin > 64 || p.Cout > 64) return false;
  const int64_t bke = fwd::bk_elems(mode);
  auto up = [](int64_t v, int64_t m) { return (v + m - 1) / m * m; };
  return up(p.Cin, bke) * up(p.Cout, 16) <= p.groups * up(p.Cin_g, bke) * up(p.Cout_g, 16);
}

// A densified layer's live MMA blocks (FwdArgs::dense_blocks): bit 8 s + b when K step s
// (kstep input channels) and output channels 8 b .. 8 b + 7 hold a common group, i.e. meet a
// diagonal block of the weight. densify keeps Cin and Cout <= 64: at most 8 x 8 blocks.
uint64_t dense_block_bits(const ConvT3dParams& g, int64_t kstep) {
  uint64_t bits = 0;
  for (int64_t s = 0; s < 8 && s * kstep < g.Cin; ++s) {
    const int64_t kg0 = s * kstep / g.Cin_g;
    const int64_t kg1 = (std::min((s + 1) * kstep, g.Cin) - 1) / g.Cin_g;
    for (int64_t b = 0; b < 8 && 8 * b < g.Cout; ++b) {
      const int64_t ng0 = 8 * b / g.Cout_g, ng1 = (std::min(8 * b + 8, g.Cout) - 1) / g.Cout_g;
      if (kg0 <= ng1 && ng0 <= kg1) bits |= uint64_t(1) << (8 * s + b);
    }
  }
  return bits;
}

FastPlan plan_forward(const ConvT3dParams& p0, const at::Tensor& x, bool w_aligned,
                      const Switches& sw) {
  FastPlan f;
  f.sw = sw;
  f.p = p0;
  const ConvT3dParams& p = f.p;
  if (force_reference()) return f;
  switch (x.scalar_type()) {
    case at::kBFloat16: f.mode = fwd::Mode::kBf16; break;
    case at::kHalf: f.mode = fwd::Mode::kFp16; break;
    case at::kFloat:
      f.mode = at::globalContext().allowTF32CuDNN() ? fwd::Mode::kTf32 : fwd::Mode::kTf32x3;
      break;
    default: return f;  // fp64 stays on the reference
  }
  if (at::cuda::getDeviceProperties(x.get_device())->major < 8) return f;  // mma.sync bf16
  constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
  constexpr int64_t kChanLim = int64_t(1) << 28;
  if (p.Cin_g < 1 || p.Cout_g < 1 || p.Cin_g > kChanLim || p.Cout_g > kChanLim ||
      p.N > kIntMax || p.groups > kIntMax) {
    return f;
  }
  if (densify(p, f.mode, sw)) {
    f.dense_g = static_cast<int>(p.groups);
    f.p.groups = 1;
    f.p.Cin_g = p.Cin;
    f.p.Cout_g = p.Cout;
  }
  fwd::FwdArgs& a = f.args;
  for (int i = 0; i < 3; ++i) {
    if (!fwd::plan_axis(a.ax[i], p.in[i], p.out[i], p.k[i], p.stride[i], p.pad[i], p.dil[i])) {
      return f;
    }
    a.k[i] = static_cast<int>(p.k[i]);
  }
  if (p.k[0] * p.k[1] * p.k[2] > kIntMax / 2) return f;
  for (int i = 0; i < 5; ++i) {
    a.xs[i] = p.x_st[i];
    a.ys[i] = p.y_st[i];
  }
  const int chunk = fwd::chunk_elems(f.mode);
  a.n = static_cast<int>(p.N);
  a.cin_g = static_cast<int>(p.Cin_g);
  a.cout_g = static_cast<int>(p.Cout_g);
  a.cin_pad = static_cast<int>((p.Cin_g + chunk - 1) / chunk * chunk);
  a.y_cfast = p.y_st[1] == 1 ? 1 : 0;

  f.bn = fwd::pick_bn(p.Cout_g, f.mode);
  if (!fwd::igemm_supported(f.mode, f.bn)) return f;
  const int bm = fwd::igemm_tile(f.mode, f.bn).bm;
  // Phase r = 0 has the most outputs on every axis; M <= numel(y), so no overflow.
  const int64_t m_max = p.N * a.ax[0].q[0] * a.ax[1].q[0] * a.ax[2].q[0];
  const int64_t m_tiles = (m_max + bm - 1) / bm;
  const int64_t n_tiles = (p.Cout_g + f.bn - 1) / f.bn;
  const int64_t phases = p.stride[0] * p.stride[1] * p.stride[2];
  const double blocks = double(n_tiles) * double(phases) * double(m_tiles) * double(p.groups);
  if (m_tiles < 1 || blocks > double(kIntMax)) return f;
  a.m_tiles = static_cast<int>(m_tiles);
  a.n_tiles = static_cast<int>(n_tiles);
  a.phases = static_cast<int>(phases);
  f.blocks = n_tiles * phases * m_tiles * p.groups;

  f.kvec = channel_vector_ok(x, p.x_st, p.Cin_g, chunk);
  if (!f.kvec) {
    // The scalar loader steps between channels with 32-bit byte offsets. One channel never
    // steps; a channel stride beyond ~2^31 / (8 * 2) bytes (e.g. NCDHW with 640^3 fp32 per
    // channel) is left to the reference.
    const int64_t step = p.Cin_g > 1 ? p.x_st[1] * static_cast<int64_t>(x.element_size()) : 0;
    if (step * (chunk - 1) > kIntMax) return f;
    a.xs1_bytes = static_cast<int>(step);
  }
  f.fast = true;
  f.name = std::string("igemm_") + fwd::mode_name(f.mode) + "_bn" + std::to_string(f.bn) +
           (f.kvec ? "_kvec" : "_mfast");
  plan_halo(f, p, x);
  plan_twg(f, p, x);
  plan_pw(f, p, x, w_aligned);
  fwd::set_grid_divs(a);
  fwd::set_box_divs(a);
  fwd::set_pw_divs(a);
  // A densified layer on a mma.sync halo kernel (per-phase or fused, not the pairs) may skip
  // its zero weight blocks ("_skip"). The rule (design doc v28): strict fp32, whose three MMAs
  // per product dominate (1.4-1.5x on suite cases 5 and 7), and the per-phase kernel at BN 32,
  // whose kDenseSkipTile warps skip whole chunks or K steps (case 5 TF32: 1.1x); on the fused
  // kernel in the one-term modes it did not pay. CONVT3D_DENSE_SKIP=1 skips wherever such a
  // kernel runs, 0 never.
  const bool skip_pays = f.mode == fwd::Mode::kTf32x3 ||
                         (a.fuse == 0 && f.bn == fwd::kDenseSkipTile.bn);
  if (f.dense_g > 1 && f.halo && a.wg == 0 && a.pair == 0 &&
      (sw.dense_skip == 1 || (sw.dense_skip == -1 && skip_pays))) {
    a.dense_blocks = dense_block_bits(p0, 2 * fwd::chunk_elems(f.mode));
    f.name += "_skip";
  }
  if (f.dense_g > 1) f.name += "_dense";
  plan_prefill(f, p);
  return f;
}

// Everything plan_forward reads: the geometry and strides, the dtype, the device, the TF32
// flag, x's 16-byte alignment (channel_vector_ok), w's (w_direct_ok) and the switches.
constexpr size_t kPlanKeyLen = 4 + 7 * 3 + 3 * 5 + 5 + Switches::kCount;
using PlanKey = std::array<int64_t, kPlanKeyLen>;

PlanKey plan_key(const ConvT3dParams& p, const at::Tensor& x, bool w_aligned,
                 const Switches& sw) {
  PlanKey k{};
  size_t i = 0;
  for (int64_t v : {p.N, p.Cin, p.Cout, p.groups}) k[i++] = v;
  for (const auto* a : {&p.in, &p.out, &p.k, &p.stride, &p.pad, &p.dil, &p.out_pad}) {
    for (int64_t v : *a) k[i++] = v;
  }
  for (const auto* a : {&p.x_st, &p.w_st, &p.y_st}) {
    for (int64_t v : *a) k[i++] = v;
  }
  k[i++] = static_cast<int64_t>(x.scalar_type());
  k[i++] = x.get_device();
  k[i++] = at::globalContext().allowTF32CuDNN() ? 1 : 0;
  k[i++] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(x.const_data_ptr()) % 16);
  k[i++] = w_aligned ? 1 : 0;
  for (int v : sw.values()) k[i++] = v;
  return k;
}

// plan_forward through a process-wide PlanCache (plan_cache.h); the switches are read here,
// once per call.
FastPlan cached_plan(const ConvT3dParams& p, const at::Tensor& x, const at::Tensor& w) {
  static PlanCache<kPlanKeyLen, FastPlan> cache;
  const Switches sw = read_switches();
  const bool w_aligned = reinterpret_cast<uintptr_t>(w.const_data_ptr()) % 16 == 0;
  if (sw.plan_cache == 0) return plan_forward(p, x, w_aligned, sw);
  return cache.get(plan_key(p, x, w_aligned, sw),
                   [&] { return plan_forward(p, x, w_aligned, sw); });
}

}  // namespace

void forward_cuda(const ConvT3dParams& p, const at::Tensor& x, const at::Tensor& w,
                  const at::Tensor& bias, const at::Tensor& y) {
  FastPlan f = cached_plan(p, x, w);
  if (!f.fast) {
    reference_forward_cuda(p, x, w, bias, y);
    return;
  }
  const c10::cuda::CUDAGuard guard(x.device());
  auto stream = at::cuda::getCurrentCUDAStream();
  fwd::FwdArgs& a = f.args;
  // Strict fp32 as fp16 products (plan_twg, plan_pw): each packed row's 16-channel chunks hold
  // the big and the small halves, so the rows are padded to whole chunks.
  if (a.h16) a.cin_pad = fwd::h16_cin_pad(a.cin_g);

  // Weight in the kernel's K-contiguous layout: the size of w (plus channel padding to 16 bytes),
  // straight from the caching allocator (no tensor around it: at::empty's dispatch cost a small
  // layer's host path several microseconds), stream-ordered, freed back on return. The pw kernel
  // may read w itself (a.w_direct).
  c10::DataPtr wp;
  const int64_t w_rows = f.p.groups * p.k[0] * p.k[1] * p.k[2] * a.cout_g;  // [g][tap][co]
  // Copies of the packed weight: 2 (TF32 big and small parts) for the transposed kernel in
  // 3xTF32, else 1 (as fp16 products, a.h16: each row holds both parts as halves).
  const int64_t w_split = f.twg_nr > 0 && f.mode == fwd::Mode::kTf32x3 && !a.h16 ? 2 : 1;
  // As fp16 products: x's and w's largest |value| bits (h16_absmax), in 16 bytes past the packed
  // rows or (w read directly) their own.
  c10::DataPtr h16_own;
  // Whether the last launch on the stream is one of our kernels: then the main kernel may
  // start before it ends (a.pdl, fwd/pdl.cuh). A memset does not count.
  bool own_last = false;
  auto find_h16_max = [&](void* at) {
    auto* m = static_cast<uint32_t*>(at);
    fwd::H16WeightView wv;
    for (int i = 0; i < 5; ++i) {
      wv.size[i] = w.size(i);
      wv.stride[i] = p.w_st[i];
    }
    wv.dense = w.is_non_overlapping_and_dense();
    C10_CUDA_CHECK(fwd::h16_absmax(x.const_data_ptr(), x.numel(), w.const_data_ptr(), wv, m,
                                   stream));
    own_last = true;
    a.h16_max = m;
    return m;
  };
  if (a.w_direct) {
    a.wp = w.const_data_ptr();
    if (a.h16) {
      h16_own = c10::cuda::CUDACachingAllocator::get()->allocate(16);
      find_h16_max(h16_own.get());
    }
  } else {
    fwd::RepackArgs r;
    r.rows = w_rows;
    r.cin_g = a.cin_g;
    r.cin_pad = a.cin_pad;
    r.cout_g = a.cout_g;
    r.dense_g = f.dense_g;
    for (int i = 0; i < 3; ++i) r.k[i] = a.k[i];
    for (int i = 0; i < 5; ++i) r.ws[i] = p.w_st[i];
    const int64_t total = r.rows * a.cin_pad;
    // 3xTF32 on the transposed kernel: the TF32 big parts, then the small ones, total elements
    // on (w_split); the non-overlapping kernel splits B in shared memory (its weight share of y
    // is larger: split, suite case 9's would be 6.25 % of y)
    r.split = w_split > 1 ? total : 0;
    const size_t w_bytes = size_t(w_split * total) * w.element_size();
    wp = c10::cuda::CUDACachingAllocator::get()->allocate(w_bytes + (a.h16 ? 16 : 0));
    if (a.h16) r.h16_max = find_h16_max(static_cast<char*>(wp.get()) + w_bytes);
    C10_CUDA_CHECK(fwd::repack_weight(f.mode, w.const_data_ptr(), wp.get(), r, stream));
    own_last = true;
    a.wp = wp.get();
  }

  a.x = x.const_data_ptr();
  a.bias = bias.defined() ? bias.const_data_ptr() : nullptr;
  a.y = y.mutable_data_ptr();
  a.y_vec = channel_vector_ok(y, p.y_st, a.cout_g, fwd::chunk_elems(f.mode)) ? 1 : 0;
  if (a.prefilled) {
    C10_CUDA_CHECK(fwd::fill_output(f.mode, a.y, a.bias, p.N * p.Cout,
                                    p.out[0] * p.out[1] * p.out[2], static_cast<int>(p.Cout),
                                    stream));
    own_last = a.bias != nullptr;  // (a bias fill is a kernel, zeros a memset)
  }
  a.pdl = own_last && f.sw.pdl != 0 ? 1 : 0;
  if (f.pw_bn > 0) {
    C10_CUDA_CHECK(fwd::pw_forward(f.mode, f.pw_bn, a, f.blocks, stream));
  } else if (f.twg_nr > 0) {
    const int64_t sizes[5] = {p.N, p.Cin, p.in[0], p.in[1], p.in[2]};  // x's, for its maps
    if (a.box_tma) {
      // + the largest span of any phase, per axis; the depth is slices x stacked planes
      const int ext[3] = {a.box[0] * (a.stack_w ? 1 : a.stack), a.box[1], a.box[2]};
      int box[4] = {fwd::bk_elems(f.mode), 0, 0, 0};
      for (int i = 0; i < 3; ++i) box[3 - i] = ext[i] + a.uext[i];  // (c, w, h, d)
      a.box_tma = encode_box_map(a.box_map, a.x, static_cast<int>(x.element_size()),
                                 x.scalar_type() != at::kBFloat16, sizes, p.x_st.data(), box)
                      ? 1
                      : 0;
    }
    if (a.box_stage) {
      // (w, h, d, c): the staging buffer's extents (twg_stage_bytes), a piece's channels
      const int planes = a.box[0] * (a.stack_w ? 1 : a.stack);
      const int box[4] = {fwd::twg_stage_w(a.box[2] + a.uext[2]), a.box[1] + a.uext[1],
                          planes + a.uext[0],
                          a.box_stage == 2 ? fwd::kTwgPieceCh : fwd::bk_elems(f.mode)};
      // (the scalar loader, where the driver rejects the map)
      if (!encode_stage_map(a.box_map, a.x, sizes, p.x_st.data(), box)) a.box_stage = 0;
    }
    // The packed weight as the kernel reads it (twg_kernel.cuh: produce): boxes of 64 rows of
    // 64 B, one tap or stacked box shift each; the small parts follow the big ones.
    WeightMapShape ws;
    ws.outer = w_split * f.p.groups;
    ws.kd = p.k[0];
    ws.kh = p.k[1];
    ws.kw = p.k[2];
    ws.cout_g = a.cout_g;
    ws.cin_pad = a.cin_pad;
    ws.bk = fwd::bk_elems(f.mode);
    ws.stack = a.stack;
    ws.stack_w = a.stack_w != 0;
    a.w_small_at = static_cast<int>(a.stack > 1 ? f.p.groups : w_rows);
    TORCH_CHECK(encode_weight_map(a.w_map, a.wp, static_cast<int>(w.element_size()),
                                  w.scalar_type() != at::kBFloat16, ws),
                "convt3d: the driver rejected the packed weight's TMA tensor map (",
                w_split * w_rows, " x ", a.cin_pad, " elements of ", w.element_size(),
                " bytes, stack ", a.stack, "); please report this");
    C10_CUDA_CHECK(fwd::twg_forward(f.mode, f.twg_nr, f.kvec, a, f.blocks, stream));
  } else if (f.halo) {
    C10_CUDA_CHECK(fwd::halo_forward(f.mode, f.bn, f.kvec, a, f.blocks, stream));
  } else {
    C10_CUDA_CHECK(fwd::igemm_forward(f.mode, f.bn, f.kvec, a, f.blocks, stream));
  }
}

std::string forward_path_cuda(const at::Tensor& input, const at::Tensor& weight,
                              c10::IntArrayRef stride, c10::IntArrayRef padding,
                              c10::IntArrayRef output_padding, c10::IntArrayRef dilation,
                              int64_t groups) {
  const ConvT3dArgs args{stride, padding, output_padding, dilation, groups};
  check_forward(input, weight, c10::nullopt, args, "convt3d::_forward_path");
  const auto out = output_spatial(input.sizes().slice(2), weight.sizes().slice(2), args);
  // Same sizes and strides as forward's result, without allocating it.
  const at::Tensor y = at::empty(
      {input.size(0), weight.size(1) * groups, out[0], out[1], out[2]},
      input.options().device(at::kMeta).memory_format(result_memory_format(input, weight)));
  if (y.numel() == 0) return "none";
  return cached_plan(make_params(input, weight, y, args), input, weight).name;
}

}  // namespace convt3d
