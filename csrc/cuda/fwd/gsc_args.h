// The grouped small-channel kernel's arguments and shape rules (gsc_kernel.cuh; planned in
// plan_gsc.cpp). It runs grouped layers with 8 input and 8 output channels per group, stride 2
// on every axis, dilation 1, in TF32, bf16 or fp16: one group per MMA, so no MMA multiplies
// another group's zeros (the densified halo kernel multiplies four groups' blocks). Torch-free.
#pragma once

#include <cstdint>

namespace convt3d {
namespace fwd {

constexpr int kGscC = 8;          // input and output channels per group
constexpr int kGscWindows = 3;    // windows of 16 w-phase positions per w block (96 outputs)
constexpr int kGscRows = 4;       // h-phase rows per item: a CTA covers 8 output rows
constexpr int kGscThreads = 128;  // four warps sharing a step's (phase, window) items

// The kernel sizes instantiated (inst_gsc_*.cu), as an X-macro over (KD, KH, KW): those
// measured to pay. Suite case 5's (3, 5, 7) (13 taps per phase) ran in 0.082 ms TF32 and 0.051
// bf16 against the densified halo kernels' 0.217 and 0.138 (NCDHW, H200, design doc v58);
// (3, 3, 3) (3.4 taps per phase) lost on suite case 7: v59's kernel 1.51 ms against the fused
// kernel's 0.92 (TF32 NCDHW, H200), 0.82 against 0.38 (bf16 channels_last; design doc v60).
// The kernel takes any size up to 8 per axis; add one here after measuring it.
#define CONVT3D_FWD_FOR_EACH_GSC_K(X) X(3, 5, 7)

constexpr int gsc_floor2(int a) { return a >= 0 ? a / 2 : -((1 - a) / 2); }

// w positions a staged x row holds: a block's 48 phase positions plus the w taps' spread
// (at most kw / 2 over both w phases and every padding parity). The kernel's row stride.
constexpr int gsc_row_positions(int kw) { return 16 * kGscWindows + kw / 2; }

// Input rows a CTA's 8 output rows read (the larger of the two padding parities).
constexpr int gsc_plane_rows(int kh, int pad) {
  return gsc_floor2(2 * kGscRows - 1 + pad) - gsc_floor2(pad - kh + 1) + 1;
}
constexpr int gsc_max_plane_rows(int kh) {
  return gsc_plane_rows(kh, 0) > gsc_plane_rows(kh, 1) ? gsc_plane_rows(kh, 0)
                                                        : gsc_plane_rows(kh, 1);
}

// Input planes one depth step (2 output planes) reads; the ring holds one more, the plane the
// next step adds, loaded while this one computes.
constexpr int gsc_step_planes(int kd, int pad) {
  return gsc_floor2(1 + pad) - gsc_floor2(pad - kd + 1) + 1;
}

struct GscArgs {
  const void* x = nullptr;     // all four of the layer's dtype (float, bf16 or fp16)
  const void* w = nullptr;     // [Cin][8][KD][KH][KW], strides ws
  const void* bias = nullptr;  // or null
  void* y = nullptr;
  int64_t xs[5] = {}, ys[5] = {};  // element strides, (n, c, d, h, w) order
  int64_t ws[5] = {};              // w's, (ci, co, kd, kh, kw)
  int n = 0, groups = 0;
  int in[3] = {}, out[3] = {}, pad[3] = {};
  int hd = 0, hh = 0;   // input planes a step reads, input rows a plane holds
  int cw_min = 0;       // position 0 of a staged row is iw = 48 wb + cw_min
  int tiles_h = 0, tiles_w = 0, nsteps = 0;
  int chunk = 0, nchunks = 0;  // depth steps per CTA, CTAs per chain (set at launch)
  int y_vec = 0;        // pairs of outputs stored as one word (y's other strides even)
  int g2 = 0;           // two groups per CTA (16-bit channels_last: whole-sector stores)
  int smem_bytes = 0;
  int k[3] = {};
};

// Dynamic shared memory per group of the CTA (one, or two with g2): the group's weights (TF32:
// two words per lane and tap, 16-bit: one) and its ring of hd + 1 planes of hh rows (TF32: 32
// bytes a position, 16-bit: 16).
constexpr int64_t gsc_weight_bytes(bool h16, int taps) { return int64_t(taps) * (h16 ? 128 : 256); }
constexpr int64_t gsc_ring_bytes(bool h16, int hd, int hh, int kw) {
  return int64_t(hd + 1) * hh * gsc_row_positions(kw) * (h16 ? 16 : 32);
}
constexpr int64_t gsc_smem_bytes(bool h16, int taps, int hd, int hh, int kw, int cta_groups) {
  return cta_groups * (gsc_weight_bytes(h16, taps) + gsc_ring_bytes(h16, hd, hh, kw));
}

}  // namespace fwd
}  // namespace convt3d
