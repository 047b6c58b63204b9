// The TMA tensor maps through which the transposed wgmma kernel loads its x boxes and its
// weight stages (fwd/tma.cuh).
#pragma once

#include <cstdint>

namespace convt3d {

// Encodes into `map` (a CUtensorMap: 128 bytes, 64-byte aligned) the 5-D view of a
// channels_last x with dims (C, W, H, D, N), innermost first, and the box
// (box_c, box_w, box_h, box_d, 1) in the 64-byte swizzle, zero fill outside x. sizes and
// strides (in elements) are in NCDHW order; x's channel stride must be 1. Returns false where the
// driver rejects it (alignment, strides not multiples of 16 bytes, box too large, no driver
// entry point); the caller then keeps the cp.async loader.
bool encode_box_map(unsigned char* map, const void* x, int elem_bytes, bool is_float,
                    const int64_t* sizes, const int64_t* strides, const int* box);

// Encodes into `map` the 5-D view of a NCDHW-like x (w stride 1) with dims (W, H, D, C, N),
// innermost first, and the box (box_w, box_h, box_d, box_c, 1), no swizzle, zero fill outside
// x: the transposed kernel's staged box (a.box_stage). sizes and strides as for encode_box_map.
// Returns false where the driver rejects it.
bool encode_stage_map(unsigned char* map, const void* x, const int64_t* sizes,
                      const int64_t* strides, const int* box);

// True where the driver's cuTensorMapEncodeTiled entry point exists: the transposed kernel
// loads its weights only by TMA, so the planner takes it only then.
bool tensor_maps_available();

// The packed weight [outer][kd][kh][kw][cout_g][cin_pad] (outer: groups, twice for 3xTF32's
// big and small parts) and how the transposed kernel reads it: a stage's tap (or box shift) is
// 64 rows of bk elements (64 B). `stack` = J > 1 splits the rows into J blocks of 64 / J output
// channels, the blocks J consecutive depth taps (`stack_w` false) or w taps (true).
struct WeightMapShape {
  int64_t outer = 1, kd = 1, kh = 1, kw = 1, cout_g = 1, cin_pad = 0;
  int bk = 0, stack = 1;
  bool stack_w = false;
};

// Encodes into `map` the view of the packed weight wp that `s` describes, in the 64-byte
// swizzle, zero fill outside wp:
// - unstacked, 2-D (cin_pad, rows), box (bk, 64): a tap's rows, and past cout_g the next rows;
// - depth stacks, 5-D (cin_pad, cout_g, kh kw, kd, outer), box (bk, 64 / J, 1, J, 1);
// - w stacks, 5-D (cin_pad, cout_g, kw, kd kh, outer), box (bk, 64 / J, J, 1, 1);
// so a stacked box's blocks past cout_g, or whose tap coordinate lies outside the kernel,
// arrive as zeros. Returns false where the driver rejects it.
bool encode_weight_map(unsigned char* map, const void* wp, int elem_bytes, bool is_float,
                       const WeightMapShape& s);

}  // namespace convt3d
