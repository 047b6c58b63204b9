// The TMA tensor map through which the transposed wgmma kernel loads its x boxes (fwd/tma.cuh).
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

}  // namespace convt3d
