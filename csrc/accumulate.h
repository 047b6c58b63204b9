// Accumulator type of the reference kernels. They are the oracle the fast kernels are tested
// against, so fp32 sums run in fp64 (long reductions then stay far inside the 1e-6 bound);
// fp16/bf16 sum in fp32, as PyTorch does.
#pragma once

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <type_traits>

namespace convt3d {

template <typename T>
using ref_acc_t = std::conditional_t<std::is_same_v<T, c10::Half> ||
                                         std::is_same_v<T, c10::BFloat16>,
                                     float, double>;

}  // namespace convt3d
