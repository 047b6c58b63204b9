// Tensor-memory-accelerator (TMA) box loads and the mbarriers they complete on (sm_90a). One
// thread issues a whole box (cp.async.bulk.tensor: 5-D of x, 2-D or 5-D of the packed weight);
// the TMA unit zero-fills what lies outside the tensor (negative coordinates included, i.e. the
// halo's padding) and writes the box in the 64-byte swizzle layout the wgmma descriptors read
// (both swizzle by shared-memory address bits 4-5 ^ 7-8). The tensor maps are built on the host
// (box_map.cpp) and travel in the kernel's __grid_constant__ FwdArgs.
#pragma once

#include <cstdint>

namespace convt3d {
namespace fwd {

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

// One arrival that also announces `bytes` of TMA writes the current phase waits for; `on`
// (default all) predicates it inside the instruction, so a warp can call it without a branch.
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes, bool on = true) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\n"
      "@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n}\n" ::"r"(bar),
      "r"(bytes), "r"(uint32_t(on))
      : "memory");
#endif
}

// One plain arrival where `on` (a consumer releasing a buffer), predicated as above.
__device__ __forceinline__ void mbar_arrive(uint32_t bar, bool on) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %1, 0;\n"
      "@p mbarrier.arrive.shared::cta.b64 _, [%0];\n}\n" ::"r"(bar), "r"(uint32_t(on))
      : "memory");
#endif
}

// One test of the phase with parity `parity` (true once it has completed).
__device__ __forceinline__ bool mbar_test(uint32_t bar, uint32_t parity) {
  uint32_t done = 1;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.b32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
#endif
  return done != 0;
}

// mbar_wait for a whole warp, with a loop condition the compiler knows is warp-uniform: a
// data-dependent branch while wgmmas are in flight makes ptxas serialize them (C7520).
__device__ __forceinline__ void mbar_wait_warp(uint32_t bar, uint32_t parity) {
  while (!__all_sync(0xffffffffu, mbar_test(bar, parity))) {
  }
}

// Waits until the phase with parity `parity` of the barrier has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
#endif
}

// The box of `map` at coordinates (c0..c4, innermost first) -> shared memory at dst; completes
// its bytes on `bar`. Issued where `on`, predicated inside the instruction (mbar_expect_tx).
__device__ __forceinline__ void tma_load_5d(uint32_t dst, const void* map, uint32_t bar, int c0,
                                            int c1, int c2, int c3, int c4, bool on = true) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %8, 0;\n"
      "@p cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];\n}\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4),
      "r"(bar), "r"(uint32_t(on))
      : "memory");
#endif
}

// The 2-D box of `map` at coordinates (c0, c1), innermost first; a box wholly outside the
// tensor (the weight map's negative rows) arrives as zeros and still completes its bytes.
// Issued where `on`, predicated inside the instruction (mbar_expect_tx).
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const void* map, uint32_t bar, int c0,
                                            int c1, bool on) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %5, 0;\n"
      "@p cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n}\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar), "r"(uint32_t(on))
      : "memory");
#endif
}

}  // namespace fwd
}  // namespace convt3d
