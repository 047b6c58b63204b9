// Probe (sm_90a, standalone): the tensor-core rate of back-to-back wgmmas with both operands in
// shared memory (64-byte swizzle, K-major, as the twg kernel reads them), by N, by which operand
// starts off its 8-row core-matrix grid, and by warpgroups per SM. It answers whether the
// transposed kernel's swapped form (design doc v31: the box as A) lost to the operands or to
// the kernel around them. The operands hold ones (the rate, not the values, is measured).
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -std=c++17 -Icsrc \
//       scripts/wgmma_rate_probe.cu -o /tmp/wgmma_rate && /tmp/wgmma_rate
// Prints one line per (type, N, A shift, B shift, warpgroups per SM): TFLOP/s over all SMs.
#include "cuda/fwd/mma.cuh"
#include "cuda/fwd/wgmma.cuh"

#include <cuda_runtime.h>

#include <cstdio>

using namespace convt3d::fwd;

constexpr int kIters = 2048;
constexpr int kPerCommit = 8;   // wgmmas per commit group (a twg stage issues 8)
constexpr int kBufBytes = 20 * 1024;  // each operand's buffer: N <= 256 rows + a shift, 64 B each

template <Mode MODE, int N>
__global__ void __launch_bounds__(128) rate(int shift_a, int shift_b, float* sink) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t s0 = (smem_addr(smem) + 1023) & ~1023u;
  unsigned char* base = smem + (s0 - smem_addr(smem));
  const uint32_t one = MODE == Mode::kTf32 ? 0x3f800000u : 0x3f803f80u;  // 1.0 (bf16 pairs)
  for (int i = threadIdx.x; i < 2 * kBufBytes / 16; i += 128) {
    reinterpret_cast<uint4*>(base)[i] = make_uint4(one, one, one, one);
  }
  fence_proxy_async();
  __syncthreads();
  // Row r of a buffer is 64 bytes; a shift of s rows moves the descriptor's start by 64 s.
  const uint64_t da = wgmma_desc_sw64(s0 + 64u * shift_a, 8 * 64);
  const uint64_t db = wgmma_desc_sw64(s0 + kBufBytes + 64u * shift_b, 8 * 64);
  float acc[N / 8][4] = {};
  for (int it = 0; it < kIters; ++it) {
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < kPerCommit; ++k) {
      // K steps of 32 bytes within the 64-byte rows, as the twg kernel walks them
      wgmma_ss<MODE, N>(acc, da + uint64_t((k & 1) * 2), db + uint64_t((k & 1) * 2));
    }
    wgmma_commit();
    wgmma_wait<1>();
  }
  wgmma_wait<0>();
  wgmma_fence_acc(reinterpret_cast<float(&)[1][N / 8][4]>(acc));
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < N / 8; ++j) s += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
  if (s == 0.f) sink[0] = s;  // never true: keeps the result alive
}

template <Mode MODE, int N>
void run(const char* name, int sms, float* sink) {
  const int smem = 2 * kBufBytes + 1024;
  cudaFuncSetAttribute(rate<MODE, N>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  const int k = MODE == Mode::kTf32 ? 8 : 16;
  for (int wg_per_sm : {1, 2, 4}) {  // one-warpgroup CTAs of 41 KB: all resident at once
    for (int sa : {0, 1}) {
      for (int sb : {0, 1}) {
        const int blocks = sms * wg_per_sm;
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        rate<MODE, N><<<blocks, 128, smem>>>(sa, sb, sink);  // warm-up
        cudaEventRecord(e0);
        rate<MODE, N><<<blocks, 128, smem>>>(sa, sb, sink);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms = 0.f;
        cudaEventElapsedTime(&ms, e0, e1);
        const double flop = 2.0 * 64 * N * k * double(kIters) * kPerCommit * blocks;
        std::printf("%s n%-3d A shift %d B shift %d CTAs/SM %d: %7.1f TFLOP/s  (%s)\n", name, N,
                    sa, sb, wg_per_sm, flop / (ms * 1e-3) / 1e12,
                    cudaGetErrorString(cudaGetLastError()));
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
      }
    }
  }
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float* sink = nullptr;
  cudaMalloc(&sink, sizeof(float));
  run<Mode::kTf32, 64>("tf32", sms, sink);
  run<Mode::kTf32, 128>("tf32", sms, sink);
  run<Mode::kTf32, 144>("tf32", sms, sink);
  run<Mode::kTf32, 256>("tf32", sms, sink);
  run<Mode::kBf16, 64>("bf16", sms, sink);
  run<Mode::kBf16, 144>("bf16", sms, sink);
  run<Mode::kBf16, 256>("bf16", sms, sink);
  cudaFree(sink);
  return 0;
}
