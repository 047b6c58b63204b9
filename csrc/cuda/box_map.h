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

// True where the driver's cuTensorMapEncodeTiled entry point exists: the transposed kernel
// loads its weights only by TMA, so the planner takes it only then.
bool tensor_maps_available();

// Encodes into `map` the 2-D view of the packed weight wp: `rows` rows of `cin_pad` elements
// (the row stride; a multiple of 16 bytes), and the box (bk elements, box_rows rows) in the
// 64-byte swizzle, zero fill outside wp (channels past cin_pad, negative rows). Returns false
// where the driver rejects it.
bool encode_weight_map(unsigned char* map, const void* wp, int elem_bytes, bool is_float,
                       int64_t cin_pad, int64_t rows, int bk, int box_rows);

}  // namespace convt3d
