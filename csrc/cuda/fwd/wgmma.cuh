// Warpgroup MMA (wgmma, sm_90a) for the halo kernel: the A operand comes from registers, loaded
// with ldmatrix exactly as for mma.sync (so rows may be any box positions), and B is read by the
// tensor core straight from shared memory through a matrix descriptor, so a warp issues one
// instruction per 16 rows x BN columns x one K step instead of BN / 8 mma.sync and the B
// ldmatrix. Without sm_90a (other archs, or a build without "9.0a") the functions trap; the
// host only selects wgmma kernels when the build has sm_90a and the device is sm_90.
#pragma once

#include "mode.h"
#include "wgmma_ops.cuh"

#include <cstdint>

namespace convt3d {
namespace fwd {

// B descriptor, no swizzle ("interleave"), K-major: core matrices of 8 rows (n) x 16 bytes (k),
// each 128 contiguous bytes; the next 8 rows are sbo bytes on, the next 16 bytes of K lbo bytes
// on. All addresses and offsets are in 16-byte units, 14 bits each.
__device__ __forceinline__ uint64_t wgmma_desc(uint32_t smem_addr, uint32_t lbo, uint32_t sbo) {
  return uint64_t((smem_addr & 0x3ffffu) >> 4) | (uint64_t(lbo >> 4) << 16) |
         (uint64_t(sbo >> 4) << 32);
}

// Descriptor of a K-major operand in the 128-byte swizzle layout: rows of 128 bytes of K, the
// 16-byte chunk c of row r stored at chunk c ^ (r % 8), 8-row groups sbo bytes apart; the
// swizzle acts on address bits, so the tile base must be 1024-byte aligned and a K step
// inside the row is a plain start-address offset. Unlike the no-swizzle layout, the tensor
// core reads it without bank conflicts.
__device__ __forceinline__ uint64_t wgmma_desc_sw128(uint32_t smem_addr, uint32_t sbo) {
  return uint64_t((smem_addr & 0x3ffffu) >> 4) | (uint64_t(1) << 16) |
         (uint64_t(sbo >> 4) << 32) | (uint64_t(1) << 62);
}

// Descriptor of an MN-major operand in the 128-byte swizzle layout (read with the wgmma's
// transpose flag): rows of 128 bytes = 64 consecutive M or N indices of one K, the 16-byte
// chunk c of K row k at chunk c ^ (k % 8); 8-K-row groups sbo bytes apart, and the next 64
// M or N indices (the next swizzle atom column) lbo bytes on. A K step (16 K rows) is a plain
// start-address offset of 2 sbo.
__device__ __forceinline__ uint64_t wgmma_desc_sw128_mn(uint32_t smem_addr, uint32_t lbo,
                                                        uint32_t sbo) {
  return uint64_t((smem_addr & 0x3ffffu) >> 4) | (uint64_t(lbo >> 4) << 16) |
         (uint64_t(sbo >> 4) << 32) | (uint64_t(1) << 62);
}

// Descriptor of a K-major operand in the 64-byte swizzle layout: rows of 64 bytes of K, the
// 16-byte chunk c of row r stored at chunk c ^ ((r / 2) % 4) (sw64_offset), 8-row groups sbo
// bytes apart. The tensor core applies the swizzle to absolute shared-memory address bits
// (scripts/wgmma_swizzle_probe.cu, H100: base offset 0 reads correctly at every row shift),
// so with the data stored swizzled by address from a 512-byte aligned base, the start may move
// by any whole number of rows (a tap's box shift) or by 32 bytes (the next K step).
__device__ __forceinline__ uint64_t wgmma_desc_sw64(uint32_t smem_addr, uint32_t sbo) {
  return uint64_t((smem_addr & 0x3ffffu) >> 4) | (uint64_t(1) << 16) |
         (uint64_t(sbo >> 4) << 32) | (uint64_t(2) << 62);
}

// Byte offset of 16-byte chunk c of row r in the 64-byte swizzle layout (from a 512-byte
// aligned base).
__device__ __forceinline__ uint32_t sw64_offset(uint32_t r, uint32_t c) {
  return r * 64 + ((c ^ ((r >> 1) & 3)) << 4);
}

// Orders this thread's register writes (A fragments, zeroed or read accumulators) before the
// wgmma that follows.
__device__ __forceinline__ void wgmma_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#else
  __trap();
#endif
}

// wgmma reads shared memory through the async proxy; B arrives by cp.async (generic proxy), so
// each thread fences its completed copies before the barrier that publishes them.
__device__ __forceinline__ void fence_proxy_async() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void wgmma_commit() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

// Waits until at most N committed groups of this warpgroup are still in flight.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}

// Keeps the compiler from moving reads or writes of the accumulators across a wgmma fence or
// wait (it does not know the wgmma writes them asynchronously).
template <int MT, int NTL>
__device__ __forceinline__ void wgmma_fence_acc(float (&acc)[MT][NTL][4]) {
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NTL; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) asm volatile("" : "+f"(acc[i][j][c])::"memory");
}

// 3xTF32: a stage's (or chunk's) big products `part` go into acc with IEEE adds (the tensor
// core truncates as it accumulates, so part never spans the whole K). part is not zeroed: the
// next wgmma into it must restart it with scale-d 0 (wgmma_ss_scaled), which saves the 64
// register writes per fold. The caller has waited for the wgmmas writing part; the fences keep
// these accesses on this side.
template <int MT, int NTL>
__device__ __forceinline__ void fold_partial(float (&acc)[MT][NTL][4],
                                             float (&part)[MT][NTL][4]) {
  wgmma_fence_acc(part);
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NTL; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[i][j][c] += part[i][j][c];
  wgmma_fence_acc(part);
}

// 3xTF32 at the end of K: acc += the small products (acc_s; the caller has fenced both).
template <int MT, int NTL>
__device__ __forceinline__ void add_small(float (&acc)[MT][NTL][4],
                                          const float (&acc_s)[MT][NTL][4]) {
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NTL; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[i][j][c] += acc_s[i][j][c];
}

// acc (this warp's 16 rows of a 64-row wgmma, N = BN columns) += A (one K step) x B.
template <Mode MODE, int BN>
__device__ __forceinline__ void wgmma_step(float (&acc)[BN / 8][4], const uint32_t (&a)[4],
                                           uint64_t desc) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CONVT3D_WGMMA_CASE(N)                                       \
  if constexpr (BN == N) {                                          \
    if constexpr (MODE == Mode::kBf16) wgmma_bf16_n##N(acc, a, desc); \
    if constexpr (MODE == Mode::kFp16) wgmma_f16_n##N(acc, a, desc);  \
    if constexpr (MODE == Mode::kTf32) wgmma_tf32_n##N(acc, a, desc); \
  }
  CONVT3D_WGMMA_CASE(16)
  CONVT3D_WGMMA_CASE(32)
  CONVT3D_WGMMA_CASE(48)
  CONVT3D_WGMMA_CASE(64)
#undef CONVT3D_WGMMA_CASE
#else
  __trap();
#endif
}

// acc (this warp's 16 rows of a 64-row wgmma, N columns) += A x B, both read by the tensor core
// from shared memory through descriptors (twg_kernel.cuh, pw_kernel.cuh). TA = 1: A is M-major;
// TB = 1: B is N-major (16-bit types only; TF32 operands are K-major).
template <Mode MODE, int N, int TA = 0, int TB = 0>
__device__ __forceinline__ void wgmma_ss(float (&acc)[N / 8][4], uint64_t desc_a, uint64_t desc_b) {
  static_assert((TA == 0 && TB == 0) || MODE != Mode::kTf32,
                "TF32 wgmma reads K-major operands only");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CONVT3D_WGMMA_SS_CASE(NN)                                                        \
  if constexpr (N == NN) {                                                               \
    if constexpr (MODE == Mode::kBf16) wgmma_ss_bf16_n##NN<TA, TB>(acc, desc_a, desc_b); \
    if constexpr (MODE == Mode::kFp16) wgmma_ss_f16_n##NN<TA, TB>(acc, desc_a, desc_b);  \
    if constexpr (MODE == Mode::kTf32) wgmma_ss_tf32_n##NN(acc, desc_a, desc_b);         \
  }
  CONVT3D_WGMMA_SS_CASE(64)
  CONVT3D_WGMMA_SS_CASE(128)
  CONVT3D_WGMMA_SS_CASE(144)
  CONVT3D_WGMMA_SS_CASE(160)
  CONVT3D_WGMMA_SS_CASE(256)
#undef CONVT3D_WGMMA_SS_CASE
#else
  __trap();
#endif
}

// TF32 wgmma_ss with a run-time scale-d: accumulate 0 writes acc = A x B without reading acc.
template <int N>
__device__ __forceinline__ void wgmma_ss_scaled(float (&acc)[N / 8][4], uint64_t desc_a,
                                                uint64_t desc_b, int accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CONVT3D_WGMMA_SD_CASE(NN) \
  if constexpr (N == NN) wgmma_ss_tf32_n##NN##_sd(acc, desc_a, desc_b, accumulate);
  CONVT3D_WGMMA_SD_CASE(64)
  CONVT3D_WGMMA_SD_CASE(128)
  CONVT3D_WGMMA_SD_CASE(144)
  CONVT3D_WGMMA_SD_CASE(160)
  CONVT3D_WGMMA_SD_CASE(256)
#undef CONVT3D_WGMMA_SD_CASE
#else
  __trap();
#endif
}

// fp16 wgmma_ss (K-major operands) with a run-time scale-d: the partial sum of strict fp32's
// fp16 products (h16_split.cuh), restarted as wgmma_ss_scaled restarts 3xTF32's.
template <int N>
__device__ __forceinline__ void wgmma_ss_f16_scaled(float (&acc)[N / 8][4], uint64_t desc_a,
                                                    uint64_t desc_b, int accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(N == 128, "wgmma_ss_f16_scaled: generated for N = 128 (gen_wgmma.py kH16N)");
  wgmma_ss_f16_n128_sd(acc, desc_a, desc_b, accumulate);
#else
  __trap();
#endif
}

// TF32 wgmma with A from registers (this warp's m16n8k8 A fragment of the 64 rows) and a
// run-time scale-d (the pw kernel: A is rounded or split in registers).
template <int N>
__device__ __forceinline__ void wgmma_rs_scaled(float (&acc)[N / 8][4], const uint32_t (&a)[4],
                                                uint64_t desc_b, int accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (N == 64) wgmma_tf32_n64_sd(acc, a, desc_b, accumulate);
  if constexpr (N == 128) wgmma_tf32_n128_sd(acc, a, desc_b, accumulate);
  if constexpr (N == 256) wgmma_tf32_n256_sd(acc, a, desc_b, accumulate);
#else
  __trap();
#endif
}

// fp16 wgmma with A from registers (this warp's m16n8k16 A fragment of the 64 rows) and a
// run-time scale-d (the pw kernel's strict fp32 as fp16 products: A is split in registers).
template <int N>
__device__ __forceinline__ void wgmma_rs_f16_scaled(float (&acc)[N / 8][4],
                                                    const uint32_t (&a)[4], uint64_t desc_b,
                                                    int accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(N == 64 || N == 128, "wgmma_rs_f16_scaled: gen_wgmma.py kPwH16N");
  if constexpr (N == 64) wgmma_f16_n64_sd(acc, a, desc_b, accumulate);
  if constexpr (N == 128) wgmma_f16_n128_sd(acc, a, desc_b, accumulate);
#else
  __trap();
#endif
}

}  // namespace fwd
}  // namespace convt3d
