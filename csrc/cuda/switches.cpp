#include "switches.h"

#include "fwd/tile_configs.h"

#include <cstdlib>
#include <initializer_list>

namespace convt3d {
namespace {

// Whether `name` is set to decimal text; its value in v.
bool read_long(const char* name, long& v) {
  const char* e = std::getenv(name);
  if (e == nullptr) return false;
  char* end = nullptr;
  v = std::strtol(e, &end, 10);
  return end != e && *end == '\0';
}

// The value of `name` when it is one of `allowed` (as decimal text), else `dflt`.
template <class Allowed>
int read_int(const char* name, const Allowed& allowed, int dflt) {
  long v = 0;
  if (!read_long(name, v)) return dflt;
  for (int a : allowed) {
    if (v == a) return a;
  }
  return dflt;
}

int read_int(const char* name, std::initializer_list<int> allowed, int dflt) {
  return read_int<std::initializer_list<int>>(name, allowed, dflt);
}

// The value of `name` when it is decimal text in lo .. hi, else `dflt`.
int read_range(const char* name, int lo, int hi, int dflt) {
  long v = 0;
  return read_long(name, v) && v >= lo && v <= hi ? int(v) : dflt;
}

}  // namespace

Switches read_switches() {
  Switches s;
  s.halo = read_int("CONVT3D_HALO", {0, 1, 2}, -1);
  s.wgmma = read_int("CONVT3D_WGMMA", {1}, 0);
  s.box_stream = read_int("CONVT3D_BOX_STREAM", {0, 1}, -1);
  s.twg = read_int("CONVT3D_TWG", {0, 1}, -1);
  s.twg_slices = read_int("CONVT3D_TWG_SLICES", {2, 4}, 0);
  s.twg_tma = read_int("CONVT3D_TWG_TMA", {0}, 1);
  s.twg_stack = read_int("CONVT3D_TWG_STACK", {1, 2, 4}, 0);
  s.twg_wstack = read_int("CONVT3D_TWG_WSTACK", {0, 1}, -1);
  s.twg_bqw = read_range("CONVT3D_TWG_BQW", 1, 256, 0);
  s.twg_long = read_int("CONVT3D_TWG_LONG", {0}, 1);
  s.twg_stage = read_int("CONVT3D_TWG_STAGE", {0}, 1);
  s.twg_h16 = read_int("CONVT3D_TWG_H16", {0}, 1);
  s.pw_h16 = read_int("CONVT3D_PW_H16", {0, 1}, -1);
  s.pw = read_int("CONVT3D_PW", {0, 1}, -1);
  s.pw_bn = read_int("CONVT3D_PW_BN", fwd::kPwBns, 0);
  s.pw_wdirect = read_int("CONVT3D_PW_WDIRECT", {0}, 1);
  s.pw_persist = read_int("CONVT3D_PW_PERSIST", {0}, 1);
  s.pw_lean = read_int("CONVT3D_PW_LEAN", {0, 1}, -1);
  s.dense = read_int("CONVT3D_DENSE", {0}, 1);
  s.dense_skip = read_int("CONVT3D_DENSE_SKIP", {0, 1}, -1);
  s.prefill = read_int("CONVT3D_PREFILL", {0, 1}, -1);
  s.plan_cache = read_int("CONVT3D_PLAN_CACHE", {0}, 1);
  s.fused_pair = read_int("CONVT3D_FUSED_PAIR", {0, 1}, -1);
  s.pdl = read_int("CONVT3D_PDL", {0}, 1);
  return s;
}

}  // namespace convt3d
