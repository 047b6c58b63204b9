#include "axis_taps.h"

namespace convt3d {

AxisTaps taps_by_output(int64_t in, int64_t out, int64_t k, int64_t s, int64_t p, int64_t d) {
  AxisTaps a;
  a.rows.resize(out);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t t = 0; t < k; ++t) {
      const int64_t num = o + p - t * d;  // = i * s
      if (num >= 0 && num % s == 0 && num / s < in) a.rows[o].emplace_back(t, num / s);
    }
  }
  return a;
}

AxisTaps taps_by_input(int64_t in, int64_t out, int64_t k, int64_t s, int64_t p, int64_t d) {
  AxisTaps a;
  a.rows.resize(in);
  for (int64_t i = 0; i < in; ++i) {
    for (int64_t t = 0; t < k; ++t) {
      const int64_t o = i * s - p + t * d;
      if (o >= 0 && o < out) a.rows[i].emplace_back(t, o);
    }
  }
  return a;
}

AxisTaps pairs_by_tap(int64_t in, int64_t out, int64_t k, int64_t s, int64_t p, int64_t d) {
  AxisTaps a;
  a.rows.resize(k);
  for (int64_t t = 0; t < k; ++t) {
    for (int64_t i = 0; i < in; ++i) {
      const int64_t o = i * s - p + t * d;
      if (o >= 0 && o < out) a.rows[t].emplace_back(i, o);
    }
  }
  return a;
}

}  // namespace convt3d
