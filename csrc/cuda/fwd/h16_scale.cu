// The scales of strict fp32's fp16 products (h16_split.cuh): the largest finite |value| of x and
// of w as fp32 bits, m[0] and m[1]. One launch before the weight repack; the repack and the
// transposed kernel turn the bits into exponents themselves (h16_exponent). Non-negative floats
// order as their bits, so each warp's maximum goes in by one integer atomicMax: the same result
// in any order, no floating-point atomics.
#include "dispatch.h"
#include "h16_split.cuh"

namespace convt3d {
namespace fwd {
namespace {

constexpr int kAbsmaxThreads = 256;

__device__ __forceinline__ uint32_t finite_abs_bits(float v) {
  const uint32_t b = __float_as_uint(v) & 0x7fffffffu;
  return b < 0x7f800000u ? b : 0u;
}

// blockIdx.y 0: x, dense (its numel elements from its data pointer), 16-byte loads where aligned;
// blockIdx.y 1: w through its strides (small: a weight).
__global__ void __launch_bounds__(kAbsmaxThreads)
    h16_absmax_kernel(const float* __restrict__ x, int64_t nx, const float* __restrict__ w,
                      H16WeightView wv, uint32_t* m) {
  uint32_t best = 0;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  if (blockIdx.y == 0) {
    int64_t head = 0;
    if (reinterpret_cast<uintptr_t>(x) % 16 == 0) {
      const float4* x4 = reinterpret_cast<const float4*>(x);
      head = nx / 4 * 4;
      for (int64_t i = tid; i < nx / 4; i += step) {
        const float4 v = x4[i];
        best = max(best, max(max(finite_abs_bits(v.x), finite_abs_bits(v.y)),
                             max(finite_abs_bits(v.z), finite_abs_bits(v.w))));
      }
    }
    for (int64_t i = head + tid; i < nx; i += step) best = max(best, finite_abs_bits(x[i]));
  } else {
    const int64_t nw = wv.size[0] * wv.size[1] * wv.size[2] * wv.size[3] * wv.size[4];
    for (int64_t i = tid; i < nw; i += step) {
      int64_t t = i, off = 0;
      for (int d = 4; d >= 0; --d) {
        off += (t % wv.size[d]) * wv.stride[d];
        t /= wv.size[d];
      }
      best = max(best, finite_abs_bits(w[off]));
    }
  }
  best = __reduce_max_sync(0xffffffffu, best);
  if (threadIdx.x % 32 == 0 && best != 0) atomicMax(m + blockIdx.y, best);
}

}  // namespace

cudaError_t h16_absmax(const void* x, int64_t nx, const void* w, const H16WeightView& wv,
                       uint32_t* m, cudaStream_t stream) {
  cudaError_t e = cudaMemsetAsync(m, 0, 2 * sizeof(uint32_t), stream);
  if (e != cudaSuccess) return e;
  const int64_t nw = wv.size[0] * wv.size[1] * wv.size[2] * wv.size[3] * wv.size[4];
  const int64_t work = nx / 4 > nw ? nx / 4 : nw;  // per y, one thread's share of the larger
  const int64_t want = (work + kAbsmaxThreads - 1) / kAbsmaxThreads;
  const dim3 grid(static_cast<unsigned>(want < 1 ? 1 : (want > 2048 ? 2048 : want)), 2);
  h16_absmax_kernel<<<grid, kAbsmaxThreads, 0, stream>>>(static_cast<const float*>(x), nx,
                                                          static_cast<const float*>(w), wv, m);
  return cudaGetLastError();
}

}  // namespace fwd
}  // namespace convt3d
