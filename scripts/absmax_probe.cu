// Probe (standalone): the time of strict fp32's scale pass (csrc/cuda/fwd/h16_scale.cu, the
// largest finite |value| of x and w) against a plain copy of x, on suite-sized x (cases 9, 10,
// 4, 2 and 3 in fp32), aligned and one float off 16 bytes. It answers whether the pass runs at
// the copy bandwidth: it reads x once, as the copy does half of.
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Icsrc \
//       scripts/absmax_probe.cu csrc/cuda/fwd/h16_scale.cu -o /tmp/absmax && /tmp/absmax
// Prints one line per (size, alignment): the pass's median time over 20 runs and the copy's
// time, in us, and the pass's read bandwidth. H200, 2026-11-27: 134 MB (case 10) 39-42 us at
// 512-4096 blocks (3.2-3.4 TB/s read; the copy 70 us): the pass runs at the read bandwidth.
#include "cuda/fwd/dispatch.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <vector>

using namespace convt3d::fwd;

template <class F>
float median_us(F f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < 23; ++i) {
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    if (i >= 3) t.push_back(ms * 1e3f);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  const long long sizes[] = {2LL * 256 * 16 * 16 * 16, 2LL * 64 * 64 * 64 * 64,
                             8LL * 48 * 96 * 96 * 96, 8LL * 48 * 64 * 64 * 64,
                             16LL * 32 * 64 * 64 * 64};
  const long long nmax = *std::max_element(std::begin(sizes), std::end(sizes)) + 4;
  float *x = nullptr, *y = nullptr, *w = nullptr;
  uint32_t* m = nullptr;
  cudaMalloc(&x, nmax * 4);
  cudaMalloc(&y, nmax * 4);
  cudaMalloc(&w, 256 * 128 * 8 * 4);
  cudaMalloc(&m, 16);
  cudaMemset(x, 0x3f, nmax * 4);
  cudaMemset(w, 0x3f, 256 * 128 * 8 * 4);
  H16WeightView wv;
  const int64_t ws[5] = {256, 128, 2, 2, 2};
  for (int i = 0; i < 5; ++i) wv.size[i] = ws[i];
  wv.stride[4] = 1;
  for (int i = 3; i >= 0; --i) wv.stride[i] = wv.stride[i + 1] * ws[i + 1];
  wv.dense = true;
  for (long long n : sizes) {
    for (int off : {0, 1}) {
      const float pass = median_us([&] { h16_absmax(x + off, n, w, wv, m, 0); });
      const float copy = median_us(
          [&] { cudaMemcpyAsync(y, x + off, n * 4, cudaMemcpyDeviceToDevice); });
      uint32_t got[2] = {};
      cudaMemcpy(got, m, 8, cudaMemcpyDeviceToHost);
      std::printf(
          "%6.1f MB off %d: pass %8.1f us (%5.2f TB/s read), copy %8.1f us, max bits %08x %08x, "
          "%s\n",
          n * 4 / 1e6, off, pass, n * 4 / pass / 1e6, copy, got[0], got[1],
          cudaGetErrorString(cudaGetLastError()));
    }
  }
  return 0;
}
