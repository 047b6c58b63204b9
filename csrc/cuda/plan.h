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
// never. Grouped TF32, bf16 and fp16 layers with 8 input and 8 output channels per group,
// stride 2 and dilation 1 take the grouped small-channel kernel (fwd/gsc_kernel.cuh, plan_gsc:
// one group per MMA, a CTA walking depth steps) over any other choice unless a switch forces
// another family; CONVT3D_GSC=1 forces it wherever legal, =0 never.
//
// The planners by kernel family: plan_halo.cpp (v1's tile, the per-phase and fused halo
// kernels), plan_twg.cpp (the transposed wgmma kernel), plan_pw.cpp (the non-overlapping
// kernel), plan_gsc.cpp (the grouped small-channel kernel); plan.cpp runs them in that order
// (plan_forward: each may replace the choice before it), adds the prefill and densified
// groups, and caches plans (cached_plan); forward_cuda.cpp runs the plan.
#pragma once

#include "../params.h"
#include "fwd/gsc_args.h"
#include "fwd/mode.h"
#include "fwd/phases.h"
#include "switches.h"

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <string>

namespace convt3d {
namespace planner {

// Taps per non-empty phase, on average, from which a phase's x box pays for itself: the
// per-phase halo kernel's bar (plan_halo.cpp), and twg's for strided layers (plan_twg.cpp).
constexpr int64_t kHaloMinTaps = 8;

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
  bool gsc = false;    // the grouped small-channel kernel (plan_gsc.cpp), with gsc_args
  bool gsc_cl = false; //   and its channels_last loader
  fwd::GscArgs gsc_args;
  ConvT3dParams p;     // the geometry planned for (densified groups merged)
  fwd::FwdArgs args;  // geometry; pointers are filled at launch
  std::string name = "reference";
};

// Taps over the stride phases: the sum and count over phases that have taps and outputs, and
// the most taps of any phase (it sizes the kernels' tap tables).
struct TapStats {
  int64_t taps_sum = 0, nonempty = 0, max_taps = 0;
};

// ---- shared by the planners (plan.cpp)
bool use_wgmma_arch(const at::Tensor& x);
bool use_wgmma(fwd::Mode mode, const Switches& sw, const at::Tensor& x);
bool channel_vector_ok(const at::Tensor& t, const std::array<int64_t, 5>& st, int64_t c_g,
                       int chunk);
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t smem_two_per_sm(const at::Tensor& x);
TapStats tap_stats(const ConvT3dParams& p, const fwd::AxisPlan* ax);
bool tap_offsets_fit(const ConvT3dParams& p, int cin_pad);
int64_t phase_span(const fwd::AxisPlan& ax, int r);
// Strict fp32 as fp16 products needs x dense, one pass over its storage finding its scale
// (plan_twg.cpp: twg_h16_ok; plan_pw).
bool h16_x_ok(const at::Tensor& x);

// ---- each switches a fast plan to its kernel family where that applies
void plan_halo(FastPlan& f, const ConvT3dParams& p, const at::Tensor& x);
void plan_twg(FastPlan& f, const ConvT3dParams& p, const at::Tensor& x);
void plan_pw(FastPlan& f, const ConvT3dParams& p, const at::Tensor& x, bool w_aligned);
// p: the layer as called (before densifying groups)
void plan_gsc(FastPlan& f, const ConvT3dParams& p, const at::Tensor& x);

// The plan of a call (plan_forward through a process-wide PlanCache); the switches are read
// here, once per call.
FastPlan cached_plan(const ConvT3dParams& p, const at::Tensor& x, const at::Tensor& w);

}  // namespace planner
}  // namespace convt3d
