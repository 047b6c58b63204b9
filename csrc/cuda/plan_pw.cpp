// The non-overlapping kernel's planner (plan.h, fwd/pw_kernel.cuh): kernel == stride, one
// dense GEMM; its BN, stages, persistence, fp16 products and B read straight from w.
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

}  // namespace

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

}  // namespace planner
}  // namespace convt3d
