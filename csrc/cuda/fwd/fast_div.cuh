// Division by a runtime divisor that stays fixed for a whole kernel (box extents, tile rows):
// a multiply-high, an add and a shift instead of the ~20-instruction integer division the
// compiler emits (its I2F/MUFU/F2I sequence showed up as 30 % ALU busy in the twg kernel's ncu
// profile). Round-up magic number method (Granlund and Montgomery), valid for 0 <= n < 2^31.
#pragma once

#include <cstdint>

#include "phases.h"

namespace convt3d {
namespace fwd {

struct FastDiv {
  uint32_t d, m, s;
  // Magic numbers the host computed (phases.h: div_magic).
  __device__ __forceinline__ explicit FastDiv(const DivMagic& g) : d(g.d), m(g.m), s(g.s) {}
  // g = div_magic(divisor), with the divisor as the kernel computed it (a register it already
  // holds, where g.d would take another).
  __device__ __forceinline__ FastDiv(int divisor, const DivMagic& g)
      : d(uint32_t(divisor)), m(g.m), s(g.s) {}
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
