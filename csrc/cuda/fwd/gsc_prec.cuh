// What the grouped small-channel kernel (gsc_kernel.cuh) does differently per precision: how a
// staged x position is laid out, how the group's weights sit in B-fragment order, how a lane
// addresses its ldmatrix row, and which MMA it issues. Everything else (chains, ring of planes,
// stores) is one template.
// - TF32: mma.sync m16n8k8, K = the 8 input channels of one w tap. A position is 32 bytes
//   whose two 16-byte halves swap every 4 positions, so ldmatrix.x4 (matrices 0, 1: channels
//   0-3 of positions 0-7, 8-15; 2, 3: channels 4-7) is conflict-free.
// - bf16, fp16: mma.sync m16n8k16, K = two w taps of the 8 channels: matrices 0, 1 read the
//   16 positions at one tap's shift, 2, 3 at the next tap's; an odd last tap reads its own
//   shift twice against zero weights. A position is 16 bytes (8 rows of a matrix are 128
//   contiguous bytes: no swizzle needed).
#pragma once

#include "mma.cuh"
#include "mode.h"
#include "tile_common.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace convt3d {
namespace fwd {

template <Mode MODE>
struct GscPrec {  // bf16 and fp16
  using Elem = typename ModeTraits<MODE>::T;
  static constexpr int kPosBytes = 16;
  static constexpr int kTapWords = 32;    // a tap's B words: lane 4 co + ci / 2 holds (ci, ci + 1)
  static constexpr int kTapsPerStep = 2;  // w taps per MMA K step
  __device__ static __forceinline__ int pos_off(int p, int /*half*/) { return p * 16; }
  // the w tap (of the phase's twp) this lane's ldmatrix row reads in K step st
  __device__ static __forceinline__ int lane_tap(int st, int lsel, int twp) {
    return 2 * st + ((lsel && 2 * st + 1 < twp) ? 1 : 0);
  }
  // shared-memory word q of the weights: its tap, output channel and first input channel
  __device__ static __forceinline__ void weight_word(int q, int& tap, int& co, int& ci) {
    tap = q >> 5, co = (q & 31) >> 2, ci = 2 * (q & 3);
  }
  __device__ static __forceinline__ uint32_t pack_weight(const uint32_t (&bits)[2]) {
    return bits[0] | (bits[1] << 16);
  }
  __device__ static __forceinline__ uint32_t operand(uint32_t v) { return v; }
  // B of K step (tap, tap + 2 when two): one word each
  __device__ static __forceinline__ void load_b(uint32_t ws, int tap, int lane, bool two,
                                                uint32_t (&b)[2]) {
    asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(b[0]) : "r"(ws + (tap * 32 + lane) * 4));
    if (two) {
      asm volatile("ld.shared.u32 %0, [%1];\n"
                   : "=r"(b[1])
                   : "r"(ws + ((tap + 2) * 32 + lane) * 4));
    } else {
      b[1] = 0u;
    }
  }
  __device__ static __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
    if constexpr (MODE == Mode::kBf16) {
      mma_bf16_16816(d, a, b);
    } else {
      mma_f16_16816(d, a, b);
    }
  }
};

template <>
struct GscPrec<Mode::kTf32> {
  using Elem = float;
  static constexpr int kPosBytes = 32;
  static constexpr int kTapWords = 64;  // [lane = 4 co + ci % 4][ci / 4]
  static constexpr int kTapsPerStep = 1;
  __device__ static __forceinline__ int pos_off(int p, int half) {
    return p * 32 + ((half ^ ((p >> 2) & 1)) << 4);
  }
  __device__ static __forceinline__ int lane_tap(int st, int, int) { return st; }
  __device__ static __forceinline__ void weight_word(int q, int& tap, int& co, int& ci) {
    const int ln = (q >> 1) & 31;
    tap = q >> 6, co = ln >> 2, ci = (ln & 3) + 4 * (q & 1);
  }
  // rounded to nearest (the tensor core truncates)
  __device__ static __forceinline__ uint32_t pack_weight(const uint32_t (&bits)[1]) {
    return tf32_rna(__uint_as_float(bits[0]));
  }
  __device__ static __forceinline__ uint32_t operand(uint32_t v) {
    return tf32_rna(__uint_as_float(v));
  }
  __device__ static __forceinline__ void load_b(uint32_t ws, int tap, int lane, bool,
                                                uint32_t (&b)[2]) {
    asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n"
                 : "=r"(b[0]), "=r"(b[1])
                 : "r"(ws + (tap * 32 + lane) * 8));
  }
  __device__ static __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
    mma_tf32_1688(d, a, b);
  }
};

}  // namespace fwd
}  // namespace convt3d
