// The scales of strict fp32's fp16 products (h16_split.cuh): the largest finite |value| of x and
// of w as fp32 bits, m[0] and m[1]. One launch before the weight repack (or, pw reading w
// itself, the kernel); the repack and the kernels turn the bits into exponents themselves
// (h16_exponent). Non-negative floats order as their bits, so each block's maximum goes in by
// one integer atomicMax: the same result in any order, no floating-point atomics.
// One atomic per warp from 2048 blocks (32 K on one word) had made the pass 20.6 us on suite
// case 9 (x 8.4 MB) and 47.6 us on case 10 (67 MB), H200, torch.profiler, 2026-11-27: same-word
// atomics serialize at the L2. Now at most kAbsmaxBlocks per tensor, each thread keeping four
// 16-byte loads in flight.
#include "dispatch.h"
#include "h16_split.cuh"
#include "pdl.cuh"

namespace convt3d {
namespace fwd {
namespace {

constexpr int kAbsmaxThreads = 256;
constexpr int kAbsmaxBlocks = 512;  // per tensor: about four per SM, all resident at once
constexpr int kAbsmaxUnroll = 4;    // 16-byte loads in flight per thread

__device__ __forceinline__ uint32_t finite_abs_bits(float v) {
  const uint32_t b = __float_as_uint(v) & 0x7fffffffu;
  return b < 0x7f800000u ? b : 0u;
}

__device__ __forceinline__ uint32_t max4(float4 v) {
  return max(max(finite_abs_bits(v.x), finite_abs_bits(v.y)),
             max(finite_abs_bits(v.z), finite_abs_bits(v.w)));
}

// The largest finite |value| bits among n dense floats at p, this thread's share.
__device__ uint32_t dense_absmax(const float* __restrict__ p, int64_t n, int64_t tid,
                                 int64_t step) {
  uint32_t best = 0;
  int64_t head = 0;
  if (reinterpret_cast<uintptr_t>(p) % 16 == 0) {
    const float4* p4 = reinterpret_cast<const float4*>(p);
    const int64_t n4 = n / 4;
    head = n4 * 4;
    int64_t i = tid;
    for (; i + (kAbsmaxUnroll - 1) * step < n4; i += kAbsmaxUnroll * step) {
      float4 v[kAbsmaxUnroll];
#pragma unroll
      for (int u = 0; u < kAbsmaxUnroll; ++u) v[u] = p4[i + u * step];
#pragma unroll
      for (int u = 0; u < kAbsmaxUnroll; ++u) best = max(best, max4(v[u]));
    }
    for (; i < n4; i += step) best = max(best, max4(p4[i]));
  }
  for (int64_t i = head + tid; i < n; i += step) best = max(best, finite_abs_bits(p[i]));
  return best;
}

// blockIdx.y 0: x, dense (its numel elements from its data pointer); blockIdx.y 1: w, dense the
// same way or through its strides.
__global__ void __launch_bounds__(kAbsmaxThreads)
    h16_absmax_kernel(const float* __restrict__ x, int64_t nx, const float* __restrict__ w,
                      H16WeightView wv, uint32_t* m) {
  pdl_trigger();  // the kernel after it may launch meanwhile (pdl.cuh)
  __shared__ uint32_t warp_best[kAbsmaxThreads / 32];
  uint32_t best = 0;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  const int64_t nw = wv.size[0] * wv.size[1] * wv.size[2] * wv.size[3] * wv.size[4];
  if (blockIdx.y == 0) {
    best = dense_absmax(x, nx, tid, step);
  } else if (wv.dense) {
    best = dense_absmax(w, nw, tid, step);
  } else {
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
  if (threadIdx.x % 32 == 0) warp_best[threadIdx.x / 32] = best;
  __syncthreads();
  if (threadIdx.x < 32) {
    best = threadIdx.x < kAbsmaxThreads / 32 ? warp_best[threadIdx.x] : 0u;
    best = __reduce_max_sync(0xffffffffu, best);
    if (threadIdx.x == 0 && best != 0) atomicMax(m + blockIdx.y, best);
  }
}

}  // namespace

cudaError_t h16_absmax(const void* x, int64_t nx, const void* w, const H16WeightView& wv,
                       uint32_t* m, cudaStream_t stream) {
  cudaError_t e = cudaMemsetAsync(m, 0, 2 * sizeof(uint32_t), stream);
  if (e != cudaSuccess) return e;
  const int64_t nw = wv.size[0] * wv.size[1] * wv.size[2] * wv.size[3] * wv.size[4];
  // One thread per kAbsmaxUnroll 16-byte loads of the larger tensor, up to kAbsmaxBlocks.
  const int64_t work = (nx > nw ? nx : nw) / (4 * kAbsmaxUnroll);
  const int64_t want = (work + kAbsmaxThreads - 1) / kAbsmaxThreads;
  const int64_t blocks = want < 1 ? 1 : (want > kAbsmaxBlocks ? kAbsmaxBlocks : want);
  const dim3 grid(static_cast<unsigned>(blocks), 2);
  h16_absmax_kernel<<<grid, kAbsmaxThreads, 0, stream>>>(static_cast<const float*>(x), nx,
                                                          static_cast<const float*>(w), wv, m);
  return cudaGetLastError();
}

}  // namespace fwd
}  // namespace convt3d
