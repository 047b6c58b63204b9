// Thin PTX wrappers for the tensor-core forward: ldmatrix, mma.sync (sm80+ PTX, also valid on
// sm90), TF32 rounding and 16-byte cp.async. Each wrapper is one instruction; the fragment
// layouts they assume are described where they are used (igemm_kernel.cuh).
#pragma once

#include <cstdint>

namespace convt3d {
namespace fwd {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Four 8x8 b16 matrices; lanes 8i..8i+7 give the 16-byte row addresses of matrix i, and every
// lane receives one 32-bit word of each matrix (row lane/4, word lane%4). On 32-bit data the
// same instruction hands out an 8x4 block of words, which is exactly the TF32 fragment layout.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4],
                                               const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void mma_f16_16816(float (&d)[4], const uint32_t (&a)[4],
                                              const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void mma_tf32_1688(float (&d)[4], const uint32_t (&a)[4],
                                              const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Round-to-nearest (ties away) to TF32. The tensor core would otherwise truncate the low 13
// mantissa bits, a biased error of about 1e-3 that the 5e-4 bound does not allow.
__device__ __forceinline__ uint32_t tf32_rna(float x) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

// The same rounding for an operand on its way from global to shared memory: half a TF32 ulp
// added to the bits, the low 13 bits left for the tensor core to drop (it truncates; CUTLASS's
// round_half_ulp_truncate). Two instructions (FSETP, IADD) where cvt.rna.tf32 stored to memory
// costs three: ptxas must mask a result that leaves registers. Inf and NaN keep their bits: the
// add would carry a NaN whose high mantissa bits are all ones (CUDA's 0x7fffffff) into the sign.
__device__ __forceinline__ uint32_t tf32_operand(uint32_t x) {
  return fabsf(__uint_as_float(x)) < __uint_as_float(0x7f800000u) ? x + 0x1000u : x;
}

// tf32_rna on 16 bytes of a TF32 box in shared memory, masked (exact TF32 bits), taken and
// returned by value so that the box is read and written with 128-bit accesses (through a
// uint4& and cvt.rna, ptxas split them into four 32-bit LDS/STS each: channels_last TF32 rows
// 7-16 % slower). Unmasked, suite case 3 TF32 channels_last (compute-bound, box by TMA) ran
// 4-6 % slower on an H100 while loader-bound rows gained 0-3 % (same-machine A/B, 2026-11-24);
// the low bits likely cost power in the tensor core's datapath (not measured).
__device__ __forceinline__ uint32_t tf32_round_bits(uint32_t x) {
  return fabsf(__uint_as_float(x)) < __uint_as_float(0x7f800000u) ? (x + 0x1000u) & 0xffffe000u
                                                                    : x;
}

__device__ __forceinline__ uint4 tf32_round4(uint4 v) {
  return make_uint4(tf32_round_bits(v.x), tf32_round_bits(v.y), tf32_round_bits(v.z),
                    tf32_round_bits(v.w));
}

// 3xTF32 operands stored in shared memory (the transposed kernel, twg_kernel.cuh): x = big +
// small, each rounded to nearest TF32 and masked, so that the tensor core reads exact TF32 bits
// (big's residual x - big is exact in fp32). Inf and NaN keep their bits in big; small is then
// NaN, as in split_tf32 (tile_common.cuh). split_tf32_exact there gives the same bits for
// finite x in 5 instructions, not 9; twg's NCDHW box loaders (scalar and staged) use it
// (H100-measured, design doc v41). The other users (the weight repack, twg's channels_last
// round_box via tf32_split4) keep this form until a GPU run measures the switch: the one place
// to change would be here.
__device__ __forceinline__ void tf32_split_bits(uint32_t x, uint32_t& big, uint32_t& small) {
  big = tf32_round_bits(x);
  small = tf32_round_bits(__float_as_uint(__uint_as_float(x) - __uint_as_float(big)));
}

__device__ __forceinline__ void tf32_split4(uint4 v, uint4& big, uint4& small) {
  tf32_split_bits(v.x, big.x, small.x);
  tf32_split_bits(v.y, big.y, small.y);
  tf32_split_bits(v.z, big.z, small.z);
  tf32_split_bits(v.w, big.w, small.w);
}

// 16-byte global->shared copy; src_bytes = 0 fills the destination with zeros without reading.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
               :
               : "r"(dst), "l"(src), "r"(src_bytes));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n"); }

__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

// Waits until at most N of this thread's most recent commit groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

}  // namespace fwd
}  // namespace convt3d
