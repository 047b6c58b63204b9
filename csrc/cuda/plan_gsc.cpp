// The grouped small-channel kernel's planner (plan.h, fwd/gsc_kernel.cuh): TF32, bf16 and fp16
// layers with 8 input and 8 output channels per group, stride 2 and dilation 1 on every axis
// and a kernel size of CONVT3D_FWD_FOR_EACH_GSC_K (x, w and y of any strides). It replaces any
// other choice: the densified halo kernels, which multiply every group's zero blocks, ran suite
// case 5 NCDHW on an H200 in 0.217 ms TF32 and 0.138 bf16 against this kernel's 0.082 and
// 0.051 (design doc v58). CONVT3D_GSC=0 never takes it, =1 wherever legal.
#include "plan.h"

#include "fwd/dispatch.h"
#include "fwd/gsc_args.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <utility>
#include <limits>
#include <string>

namespace convt3d {
namespace planner {
namespace {

// Where the w taps of both w phases reach: iw = j + cw for w-phase position j, over every tap.
void w_tap_reach(const ConvT3dParams& p, int& cw_min, int& cw_max) {
  cw_min = std::numeric_limits<int>::max();
  cw_max = std::numeric_limits<int>::min();
  const int pad = static_cast<int>(p.pad[2]);
  for (int pw = 0; pw < 2; ++pw) {
    for (int kw = (pw + pad) % 2; kw < p.k[2]; kw += 2) {
      cw_min = std::min(cw_min, (pw + pad - kw) / 2);
      cw_max = std::max(cw_max, (pw + pad - kw) / 2);
    }
  }
}

}  // namespace

void plan_gsc(FastPlan& f, const ConvT3dParams& p, const at::Tensor& x) {
  // A switch that forces another family or densifying's variants (A/B timing, tests) keeps
  // it off unless CONVT3D_GSC=1.
  const Switches& sw = f.sw;
  const bool other_forced = sw.halo != -1 || sw.twg == 1 || sw.pw == 1 || sw.wgmma == 1 ||
                            sw.dense == 0 || sw.dense_skip != -1 || sw.fused_pair != -1;
  const bool h16 = f.mode == fwd::Mode::kBf16 || f.mode == fwd::Mode::kFp16;
  if (sw.gsc == 0 || (sw.gsc == -1 && other_forced) || (f.mode != fwd::Mode::kTf32 && !h16)) {
    return;
  }
  if (p.Cin_g != fwd::kGscC || p.Cout_g != fwd::kGscC) return;
  for (int i = 0; i < 3; ++i) {
    if (p.stride[i] != 2 || p.dil[i] != 1 || p.pad[i] > (1 << 20) || p.in[i] > (1 << 24) ||
        p.out[i] > (1 << 24)) {
      return;
    }
  }
  fwd::GscArgs g;
  for (int i = 0; i < 3; ++i) g.k[i] = static_cast<int>(p.k[i]);
  if (!fwd::gsc_supported(g.k)) return;
  // the loader keeps a row's offset ih * xs[3] + iw * xs[4] in int32, the epilogue an output's
  // offset within its (n, group, depth) plane, the weight stager an offset within a group
  auto fits = [](std::initializer_list<std::pair<int64_t, int64_t>> terms) {
    double v = 0;
    for (const auto& t : terms) v += double(t.first) * double(std::abs(t.second));
    return v < double(std::numeric_limits<int32_t>::max());
  };
  if (!fits({{p.in[1], p.x_st[3]}, {p.in[2], p.x_st[4]}}) ||
      !fits({{fwd::kGscC, p.y_st[1]}, {p.out[1], p.y_st[3]}, {p.out[2], p.y_st[4]}}) ||
      !fits({{fwd::kGscC, p.w_st[0]}, {fwd::kGscC, p.w_st[1]}, {p.k[0], p.w_st[2]},
             {p.k[1], p.w_st[3]}, {p.k[2], p.w_st[4]}})) {
    return;
  }
  g.n = static_cast<int>(p.N);
  g.groups = static_cast<int>(p.groups);
  for (int i = 0; i < 3; ++i) {
    g.in[i] = static_cast<int>(p.in[i]);
    g.out[i] = static_cast<int>(p.out[i]);
    g.pad[i] = static_cast<int>(p.pad[i]);
  }
  for (int i = 0; i < 5; ++i) {
    g.xs[i] = p.x_st[i];
    g.ys[i] = p.y_st[i];
    g.ws[i] = p.w_st[i];
  }
  g.hd = fwd::gsc_step_planes(g.k[0], g.pad[0]);
  g.hh = fwd::gsc_plane_rows(g.k[1], g.pad[1]);
  int cw_max = 0;
  w_tap_reach(p, g.cw_min, cw_max);
  // a block's 48 positions plus the taps' reach fit the kernel's row stride by construction
  if (16 * fwd::kGscWindows + cw_max - g.cw_min > fwd::gsc_row_positions(g.k[2])) return;
  g.tiles_h = static_cast<int>(ceil_div(p.out[1], 2 * fwd::kGscRows));
  g.tiles_w = static_cast<int>(ceil_div((p.out[2] + 1) / 2, 16 * fwd::kGscWindows));
  g.nsteps = static_cast<int>(ceil_div(p.out[0], 2));
  const int64_t chains = p.N * p.groups * g.tiles_h * g.tiles_w;
  if (chains > std::numeric_limits<int32_t>::max()) return;
  // channels_last x (16-byte channel runs) and y (unit channel stride): the vector loader and
  // channel-pair stores; anything else the strided loader and w-pair stores
  f.gsc_cl = channel_vector_ok(x, p.x_st, fwd::kGscC, h16 ? 8 : 4) && p.y_st[1] == 1;
  // 16-bit channels_last with an even number of groups: two groups per CTA, whose 16 channels
  // of a position are one 32-byte sector of y (one group's store half-sectors)
  g.g2 = h16 && f.gsc_cl && p.groups % 2 == 0 && sw.gsc_g2 != 0 ? 1 : 0;
  g.smem_bytes = static_cast<int>(
      fwd::gsc_smem_bytes(h16, g.k[0] * g.k[1] * g.k[2], g.hd, g.hh, g.k[2], g.g2 ? 2 : 1));
  f.gsc = true;
  f.gsc_args = g;
  f.halo = false;
  f.twg_nr = 0;
  f.pw_bn = 0;
  f.dense_g = 1;
  f.p = p;
  f.blocks = chains;
  f.name = std::string("gsc_") + fwd::mode_name(f.mode) + "_k" + std::to_string(g.k[0]) +
           std::to_string(g.k[1]) + std::to_string(g.k[2]) +
           (f.gsc_cl ? (g.g2 ? "_cl2" : "_cl") : "_strided");
}

}  // namespace planner
}  // namespace convt3d
