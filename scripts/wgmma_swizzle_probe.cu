// Probe (sm_90a, standalone): does a wgmma B operand in a swizzled K-major layout read the right
// rows when its start address is shifted by whole rows that are not a multiple of the swizzle
// period? The twg kernel's taps are such shifts of the box. The buffer is written with the
// swizzle taken from absolute shared-memory address bits (16-byte chunk bits [4, 4 + b) XOR row
// bits [7, 7 + b)), then read by one m64n64k16 bf16 wgmma per (shift, K step, base-offset rule).
//   nvcc -gencode=arch=compute_90a,code=sm_90a -I csrc scripts/wgmma_swizzle_probe.cu -o /tmp/p
// Prints one line per (layout, base-offset rule): how many of the shift x K-step cases matched.
#include "cuda/fwd/mma.cuh"
#include "cuda/fwd/wgmma.cuh"

#include <cuda_bf16.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace convt3d::fwd;

constexpr int kRows = 64 + 8;  // B rows: N = 64 plus the largest shift

// layout 1: 128-byte rows (period 8 rows, 1024 B); 2: 64-byte rows (period 512 B).
__device__ uint32_t swz(uint32_t addr, int layout) {
  const uint32_t bits = layout == 1 ? 7u : 3u;
  return addr ^ (((addr >> 7) & bits) << 4);
}

__global__ void probe(const __nv_bfloat16* a, const __nv_bfloat16* b, float* d, int layout,
                      int shift, int ks, int rule) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const int rb = layout == 1 ? 128 : 64;                       // row bytes
  const uint32_t s0 = (smem_addr(smem) + 1023) & ~1023u;       // 1024-aligned
  unsigned char* base = smem + (s0 - smem_addr(smem));
  unsigned char* sa = base;                                    // A: 64 rows
  unsigned char* sb = base + 64 * rb;                          // B: kRows rows
  const int tid = threadIdx.x;
  for (int i = tid; i < 64 * rb / 16; i += 128) {
    const uint32_t off = (i / (rb / 16)) * rb + (i % (rb / 16)) * 16;
    const uint32_t dst = swz(s0 + off, layout) - s0;
    *reinterpret_cast<uint4*>(sa + dst) = reinterpret_cast<const uint4*>(a)[i];
  }
  for (int i = tid; i < kRows * rb / 16; i += 128) {
    const uint32_t off = (i / (rb / 16)) * rb + (i % (rb / 16)) * 16;
    const uint32_t dst = swz(s0 + 64 * rb + off, layout) - s0 - 64 * rb;
    *reinterpret_cast<uint4*>(sb + dst) = reinterpret_cast<const uint4*>(b)[i];
  }
  fence_proxy_async();
  __syncthreads();
  const uint32_t addr_a = smem_addr(sa) + ks * 32;
  const uint32_t addr_b = smem_addr(sb) + shift * rb + ks * 32;
  auto desc = [&](uint32_t addr) {
    uint64_t dsc = uint64_t((addr & 0x3ffffu) >> 4) | (uint64_t(1) << 16) |
                   (uint64_t((8 * rb) >> 4) << 32) | (uint64_t(layout) << 62);
    const uint32_t mask = layout == 1 ? 7u : 3u;
    if (rule == 1) dsc |= uint64_t((addr >> 7) & mask) << 49;
    if (rule == 2) dsc |= uint64_t((addr >> 7) & 7u) << 49;
    return dsc;
  };
  float acc[8][4] = {};
  wgmma_fence();
  wgmma_ss<Mode::kBf16, 64>(acc, desc(addr_a), desc(addr_b));
  wgmma_commit();
  wgmma_wait<0>();
  wgmma_fence_acc(reinterpret_cast<float(&)[1][8][4]>(acc));
  const int warp = tid / 32, lane = tid % 32;
  for (int j = 0; j < 8; ++j)
    for (int e = 0; e < 4; ++e) {
      const int m = 16 * warp + lane / 4 + 8 * (e / 2), n = 8 * j + 2 * (lane % 4) + e % 2;
      d[m * 64 + n] = acc[j][e];
    }
}

int main() {
  const char* names[] = {"", "sw128", "sw64"};
  const char* rules[] = {"base_offset 0", "base_offset (addr>>7)&period",
                         "base_offset (addr>>7)&7"};
  for (int layout = 1; layout <= 2; ++layout) {
    const int rb = layout == 1 ? 128 : 64, ke = rb / 2;  // bf16 per row
    __nv_bfloat16 *a, *b;
    float* d;
    cudaMallocManaged(&a, 64 * rb);
    cudaMallocManaged(&b, kRows * rb);
    cudaMallocManaged(&d, 64 * 64 * 4);
    float fa[64 * 64], fb[kRows * 64];
    srand(1);
    for (int i = 0; i < 64 * ke; ++i) a[i] = __float2bfloat16(fa[i] = float(rand() % 5 - 2));
    for (int i = 0; i < kRows * ke; ++i) b[i] = __float2bfloat16(fb[i] = float(rand() % 5 - 2));
    cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
    for (int rule = 0; rule < 3; ++rule) {
      int ok = 0, total = 0;
      char bad[256] = "";
      for (int shift = 0; shift < 8; ++shift)
        for (int ks = 0; ks < rb / 32; ++ks) {
          probe<<<1, 128, 64 * 1024>>>(a, b, d, layout, shift, ks, rule);
          if (cudaDeviceSynchronize() != cudaSuccess) {
            printf("launch failed: %s\n", cudaGetErrorString(cudaGetLastError()));
            return 1;
          }
          bool match = true;
          for (int m = 0; m < 64 && match; ++m)
            for (int n = 0; n < 64 && match; ++n) {
              float r = 0;
              for (int k = 0; k < 16; ++k)
                r += fa[m * ke + ks * 16 + k] * fb[(n + shift) * ke + ks * 16 + k];
              match = r == d[m * 64 + n];
            }
          ok += match;
          ++total;
          if (!match && strlen(bad) < 200) snprintf(bad + strlen(bad), 16, " s%dk%d", shift, ks);
        }
      printf("%-6s %-30s %2d/%2d match%s%s\n", names[layout], rules[rule], ok, total,
             *bad ? "; wrong:" : "", bad);
    }
  }
  return 0;
}
