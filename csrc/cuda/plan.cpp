// Planning a CUDA forward (plan.h): the checks every fast plan needs and v1's tile
// (plan_forward), densified groups, the planners of plan_halo.cpp, plan_twg.cpp, plan_pw.cpp and
// plan_gsc.cpp in that order, the output prefill, and the plan cache; and the helpers the
// planners share.
#include "plan.h"

#include "fwd/dispatch.h"
#include "fwd/phases.h"
#include "fwd/tile_configs.h"
#include "plan_cache.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/cuda/CUDAContext.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace convt3d {
namespace planner {

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

// The dynamic shared memory a CTA may take so that two fit on an SM of x's device.
int64_t smem_two_per_sm(const at::Tensor& x) {
  const cudaDeviceProp* prop = at::cuda::getDeviceProperties(x.get_device());
  return int64_t(prop->sharedMemPerMultiprocessor) / 2 - int64_t(prop->reservedSharedMemPerBlock);
}

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

bool h16_x_ok(const at::Tensor& x) {
  return x.scalar_type() == at::kFloat && x.is_non_overlapping_and_dense();
}

namespace {

bool force_reference() {
  static const bool force = [] {
    const char* v = std::getenv("CONVT3D_FORCE_REFERENCE");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return force;
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
  plan_gsc(f, p0, x);
  if (f.gsc) return f;  // no repack, prefill or densified groups
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
  if (f.dense_g > 1 && f.halo && a.wg == 0 && a.pair == 0 && a.fused_res == 0 &&
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

}  // namespace

// (plan_cache.h)
FastPlan cached_plan(const ConvT3dParams& p, const at::Tensor& x, const at::Tensor& w) {
  static PlanCache<kPlanKeyLen, FastPlan> cache;
  const Switches sw = read_switches();
  const bool w_aligned = reinterpret_cast<uintptr_t>(w.const_data_ptr()) % 16 == 0;
  if (sw.plan_cache == 0) return plan_forward(p, x, w_aligned, sw);
  return cache.get(plan_key(p, x, w_aligned, sw),
                   [&] { return plan_forward(p, x, w_aligned, sw); });
}

}  // namespace planner
}  // namespace convt3d
