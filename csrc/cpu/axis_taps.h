// Per-axis tap tables for the CPU reference kernels. Along one axis an input index i, output
// index o and tap t meet when o = i * s - p + t * d. Enumerating only those pairs up front
// means no kernel loop ever multiplies an inserted zero (the stride phases fall out for free).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace convt3d {

// rows[r] lists (tap, partner) pairs. Three views of the same relation:
struct AxisTaps {
  std::vector<std::vector<std::pair<int64_t, int64_t>>> rows;
};

// Rows are output positions o; partners are input positions i. (forward)
AxisTaps taps_by_output(int64_t in, int64_t out, int64_t k, int64_t s, int64_t p, int64_t d);
// Rows are input positions i; partners are output positions o. (grad_input)
AxisTaps taps_by_input(int64_t in, int64_t out, int64_t k, int64_t s, int64_t p, int64_t d);
// Rows are taps t; partners are (i, o) flattened as pairs (i, o). (grad_weight)
AxisTaps pairs_by_tap(int64_t in, int64_t out, int64_t k, int64_t s, int64_t p, int64_t d);

}  // namespace convt3d
