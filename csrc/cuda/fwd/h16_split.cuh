// Strict fp32 as three fp16 products ("h16": the transposed kernel's 3xTF32 mode, twg_kernel.cuh).
// An fp16 operand has TF32's 11 significant bits, and the tensor core multiplies fp16 at twice
// TF32's rate, 16 channels per 32-byte K step. So with each tensor scaled by a power of two 2^e
// into fp16's range (its largest finite |value| into [2^14, 2^15)), v 2^e = big + small 2^-11
// with big and small fp16 (both rounded to nearest) carries 22 bits, as 3xTF32's split does, and
//   sum x w = 2^-(ex + ew) (sum xb wb + 2^-11 sum (xs wb + xb ws))
// drops only xs ws (2^-22 of the product), as 3xTF32 does. The three products are fp16 wgmmas of
// 16 channels each, where 3xTF32 issues six TF32 wgmmas for them.
// Range: values below some 2^-28 of their tensor's largest lose bits gradually (fp16 subnormals),
// an absolute error below 2^-39 of the largest, far under the relative-L2 bound; NaN stays NaN,
// inf gives inf or NaN (as 3xTF32, whose small part of inf is NaN). The host takes it only where
// the scales can be found cheaply (h16_absmax_kernel) and documents it (docs/ops.md).
// Operand rows (a box position, a weight row) of 16 channels hold [16 big][16 small] fp16 in
// their 64 bytes, so K step 0 (bytes 0-31) is big and step 1 (bytes 32-63) small.
#pragma once

#include "tile_configs.h"

#include <cuda_fp16.h>

#include <cstdint>

namespace convt3d {
namespace fwd {

constexpr int kH16Top = 14;         // a tensor's largest |value| scales into [2^14, 2^15)
constexpr int kH16SmallShift = 11;  // small parts are stored times 2^11 (kept normal)
// Scale exponents stay where 2^e and 2^-e are normal floats and 2^e times the largest finite
// float is below 2^15.
constexpr int kH16MinExp = -113, kH16MaxExp = 126;

// The scale exponent of a tensor whose largest finite |value| has the fp32 bits m (0: none, or
// all zeros).
__host__ __device__ constexpr int h16_exponent(uint32_t m) {
  if (m == 0) return 0;
  const int e = kH16Top - (int(m >> 23) - 127);  // floor(log2) of a normal; -127 subnormal
  return e < kH16MinExp ? kH16MinExp : (e > kH16MaxExp ? kH16MaxExp : e);
}

// 2^e for -126 <= e <= 127.
__device__ __forceinline__ float h16_pow2(int e) { return __int_as_float((e + 127) << 23); }

__device__ __forceinline__ uint32_t h16_bits(__half2 h) {
  return *reinterpret_cast<const uint32_t*>(&h);
}

// Two fp32 values v0, v1 times s: their fp16 big parts and small parts (times 2^11), each as
// a pair of halves (v0 in the low half).
__device__ __forceinline__ void split_h16_2(float v0, float v1, float s, uint32_t& big,
                                            uint32_t& small) {
  const float f0 = v0 * s, f1 = v1 * s;
  const __half2 b = __floats2half2_rn(f0, f1);
  const float2 r = __half22float2(b);
  constexpr float kUp = float(1 << kH16SmallShift);
  big = h16_bits(b);
  small = h16_bits(__floats2half2_rn((f0 - r.x) * kUp, (f1 - r.y) * kUp));
}

// Four fp32 values (bits) times s: their fp16 big parts and small parts (times 2^11), each as
// four consecutive halves.
__device__ __forceinline__ void split_h16_4(const uint32_t* v, float s, uint2& big, uint2& small) {
  split_h16_2(__uint_as_float(v[0]), __uint_as_float(v[1]), s, big.x, small.x);
  split_h16_2(__uint_as_float(v[2]), __uint_as_float(v[3]), s, big.y, small.y);
}

// One operand row of 16 channels (v: 16 fp32 bits, channel order) as its four 16-byte chunks:
// chunks 0-1 the big parts, 2-3 the small parts.
__device__ __forceinline__ void split_h16_row(const uint32_t* v, float s, uint4 (&out)[4]) {
  uint2 b[4], sm[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) split_h16_4(v + 4 * q, s, b[q], sm[q]);
  out[0] = make_uint4(b[0].x, b[0].y, b[1].x, b[1].y);
  out[1] = make_uint4(b[2].x, b[2].y, b[3].x, b[3].y);
  out[2] = make_uint4(sm[0].x, sm[0].y, sm[1].x, sm[1].y);
  out[3] = make_uint4(sm[2].x, sm[2].y, sm[3].x, sm[3].y);
}

// acc = (acc + 2^-11 acc_s) 2^-(ex + ew) in place: the fold of the small products and the
// scales' inverse, applied in two halves of the exponent so that no step overflows or
// flushes where the result does not.
template <int MT, int NTL>
__device__ __forceinline__ void h16_finish(float (&acc)[MT][NTL][4],
                                           const float (&acc_s)[MT][NTL][4], int e) {
  constexpr float kDown = 1.f / float(1 << kH16SmallShift);
  const int e1 = e / 2;
  const float m1 = h16_pow2(-e1), m2 = h16_pow2(e1 - e);
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NTL; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        acc[i][j][c] = fmaf(acc_s[i][j][c], kDown, acc[i][j][c]) * m1 * m2;
      }
}

}  // namespace fwd
}  // namespace convt3d
