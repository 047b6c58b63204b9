// Division by a runtime divisor that stays fixed for a whole kernel (box extents, tile rows):
// a multiply-high, an add and a shift instead of the ~20-instruction integer division the
// compiler emits (its I2F/MUFU/F2I sequence showed up as 30 % ALU busy in the twg kernel's ncu
// profile). Round-up magic number method (Granlund and Montgomery), valid for 0 <= n < 2^31.
#pragma once

#include <cstdint>

namespace convt3d {
namespace fwd {

struct FastDiv {
  uint32_t d, m, s;
  // d >= 1. One 64-bit division here, once per thread.
  __device__ __forceinline__ explicit FastDiv(int divisor) : d(uint32_t(divisor)) {
    s = d > 1 ? 32u - uint32_t(__clz(int(d - 1))) : 0u;  // smallest s with 2^s >= d
    m = uint32_t((uint64_t(1) << 32) * ((uint64_t(1) << s) - d) / d + 1);
  }
  __device__ __forceinline__ int div(int n) const {
    return int((__umulhi(uint32_t(n), m) + uint32_t(n)) >> s);
  }
  // n / d and n % d
  __device__ __forceinline__ int divmod(int n, int& rem) const {
    const int q = div(n);
    rem = n - q * int(d);
    return q;
  }
};

}  // namespace fwd
}  // namespace convt3d
