// The output prefill (FwdArgs::prefilled): a contiguous NCDHW y set to its channel's bias, or
// zeros, before a per-phase kernel writes the phases that have taps.
//
// Why: with stride > 1 along w, each phase of a per-phase kernel writes every s-th element of
// an NCDHW line, so a 32-byte sector gets its elements from several CTAs. When most phases
// have no taps (dilation a multiple of the stride: suite case 8 computes 1 output in 8), their
// CTAs finish at once and run far ahead of the computing ones; their half-written sectors leave
// the L2 first and the DRAM merges every one by a read and a write. Nsight Compute on case 8
// TF32 NCDHW (H100): 556 MB read and 926 MB written for 34 MB of x and 571 MB of y. Written
// here as whole lines first, the bias costs one pass over y.
#include "dispatch.h"
#include "pdl.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace convt3d {
namespace fwd {
namespace {

constexpr int kFillThreads = 256;
constexpr int kFillVecsPerThread = 4;  // 16-byte stores per thread and plane pass
constexpr int kMaxGridY = 65535;

// Plane p = (n, c) of y, plane_elems elements from y + p * plane_elems, set to bias[p % channels].
// U holds an element's bits (uint16_t: bf16, fp16; uint32_t: fp32). Threads of blockIdx.x
// cover 16-byte vectors of the plane's aligned middle; block 0 also its unaligned ends.
template <typename U>
__global__ void __launch_bounds__(kFillThreads)
    fill_planes_kernel(U* __restrict__ y, const U* __restrict__ bias, int64_t planes,
                       int64_t plane_elems, int channels) {
  constexpr int V = 16 / int(sizeof(U));
  pdl_trigger();  // the main kernel may launch and build its tables meanwhile (pdl.cuh)
  for (int64_t p = blockIdx.y; p < planes; p += gridDim.y) {
    const U v = bias[p % channels];
    uint32_t word = v;
    if constexpr (sizeof(U) == 2) word |= word << 16;
    const uint4 vec = make_uint4(word, word, word, word);
    U* base = y + p * plane_elems;
    // Elements before the first 16-byte boundary, and the vectors after it.
    int64_t head = int64_t((16 - reinterpret_cast<uintptr_t>(base) % 16) % 16) / int64_t(sizeof(U));
    if (head > plane_elems) head = plane_elems;
    const int64_t vecs = (plane_elems - head) / V;
    const int64_t tail0 = head + vecs * V;
    if (blockIdx.x == 0 && threadIdx.x < V) {
      if (threadIdx.x < head) base[threadIdx.x] = v;
      if (tail0 + threadIdx.x < plane_elems) base[tail0 + threadIdx.x] = v;
    }
    uint4* body = reinterpret_cast<uint4*>(base + head);
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vecs;
         i += int64_t(gridDim.x) * blockDim.x) {
      body[i] = vec;
    }
  }
}

template <typename U>
cudaError_t launch_fill(void* y, const void* bias, int64_t planes, int64_t plane_elems,
                        int channels, cudaStream_t stream) {
  constexpr int V = 16 / int(sizeof(U));
  const int64_t per_block = int64_t(kFillThreads) * kFillVecsPerThread * V;
  int64_t gx = (plane_elems + per_block - 1) / per_block;
  if (gx < 1) gx = 1;
  if (gx > (int64_t(1) << 30)) gx = int64_t(1) << 30;
  const int64_t gy = planes < kMaxGridY ? planes : kMaxGridY;
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
  fill_planes_kernel<U><<<grid, kFillThreads, 0, stream>>>(
      static_cast<U*>(y), static_cast<const U*>(bias), planes, plane_elems, channels);
  return cudaGetLastError();
}

}  // namespace

cudaError_t fill_output(Mode mode, void* y, const void* bias, int64_t planes, int64_t plane_elems,
                        int channels, cudaStream_t stream) {
  if (planes <= 0 || plane_elems <= 0) return cudaSuccess;
  const int elem = elem_bytes(mode);
  if (bias == nullptr) {
    return cudaMemsetAsync(y, 0, static_cast<size_t>(planes * plane_elems * elem), stream);
  }
  if (channels < 1) return cudaErrorInvalidValue;
  return elem == 2 ? launch_fill<uint16_t>(y, bias, planes, plane_elems, channels, stream)
                   : launch_fill<uint32_t>(y, bias, planes, plane_elems, channels, stream);
}

}  // namespace fwd
}  // namespace convt3d
