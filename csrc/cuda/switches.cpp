#include "switches.h"

#include "fwd/tile_configs.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

extern char** environ;  // POSIX: the process environment, as getenv reads it

namespace convt3d {
namespace {

// One switch: its variable's name after "CONVT3D_", its field, and the values it accepts (the
// first n of `allowed`, or with n == 0 the range allowed[0] .. allowed[1]). An unset variable,
// or one set to anything else, leaves the field at its default (the struct's initialiser).
struct Spec {
  const char* name;
  int Switches::*field;
  int n;
  int allowed[3];
};

constexpr Spec kSpecs[] = {
    {"HALO", &Switches::halo, 3, {0, 1, 2}},
    {"WGMMA", &Switches::wgmma, 1, {1}},
    {"BOX_STREAM", &Switches::box_stream, 2, {0, 1}},
    {"TWG", &Switches::twg, 2, {0, 1}},
    {"TWG_SLICES", &Switches::twg_slices, 2, {2, 4}},
    {"TWG_TMA", &Switches::twg_tma, 1, {0}},
    {"TWG_STACK", &Switches::twg_stack, 3, {1, 2, 4}},
    {"TWG_WSTACK", &Switches::twg_wstack, 2, {0, 1}},
    {"TWG_BQW", &Switches::twg_bqw, 0, {1, 256}},
    {"TWG_LONG", &Switches::twg_long, 1, {0}},
    {"TWG_STAGE", &Switches::twg_stage, 1, {0}},
    {"TWG_H16", &Switches::twg_h16, 1, {0}},
    {"PW_H16", &Switches::pw_h16, 2, {0, 1}},
    {"PW", &Switches::pw, 2, {0, 1}},
    {"PW_BN", &Switches::pw_bn, 3, {fwd::kPwBns[0], fwd::kPwBns[1], fwd::kPwBns[2]}},
    {"PW_WDIRECT", &Switches::pw_wdirect, 1, {0}},
    {"PW_PERSIST", &Switches::pw_persist, 1, {0}},
    {"PW_LEAN", &Switches::pw_lean, 2, {0, 1}},
    {"DENSE", &Switches::dense, 1, {0}},
    {"DENSE_SKIP", &Switches::dense_skip, 2, {0, 1}},
    {"PREFILL", &Switches::prefill, 2, {0, 1}},
    {"PLAN_CACHE", &Switches::plan_cache, 1, {0}},
    {"FUSED_PAIR", &Switches::fused_pair, 2, {0, 1}},
    {"PDL", &Switches::pdl, 1, {0}},
    {"GSC", &Switches::gsc, 2, {0, 1}},
    {"GSC_G2", &Switches::gsc_g2, 1, {0}},
    {"FUSED_RES", &Switches::fused_res, 3, {0, 1, 2}},
};
constexpr int kNumSpecs = int(sizeof(kSpecs) / sizeof(kSpecs[0]));
static_assert(kNumSpecs == Switches::kCount, "switches.cpp: one spec per switch");
static_assert(sizeof(fwd::kPwBns) / sizeof(fwd::kPwBns[0]) == 3, "switches.cpp: PW_BN's values");

// Whether `text` is decimal text (as strtol reads it, all of it); its value in v.
bool parse_long(const char* text, long& v) {
  char* end = nullptr;
  v = std::strtol(text, &end, 10);
  return end != text && *end == '\0';
}

// The spec whose name is the n bytes at `name`, or null.
const Spec* find_spec(const char* name, size_t n) {
  for (const Spec& sp : kSpecs) {
    if (std::strlen(sp.name) == n && std::memcmp(sp.name, name, n) == 0) return &sp;
  }
  return nullptr;
}

bool accepts(const Spec& sp, long v) {
  if (sp.n == 0) return v >= sp.allowed[0] && v <= sp.allowed[1];
  for (int i = 0; i < sp.n; ++i) {
    if (v == sp.allowed[i]) return true;
  }
  return false;
}

}  // namespace

// One pass over the environment for CONVT3D_* entries, rather than a getenv per switch: each
// getenv walks the whole environment, so 24 of them cost a small layer's call 0.46 us with 35
// variables, 1.86 us with 135 and 5.3 us with 30 more named CO* (getenv compares two bytes
// first); this pass 0.07 / 0.13 / 0.13 us (a loop of calls on the CPU-only development
// machine, 2026-11-28; the same fields as the getenv version on 1,500 random environments).
// Like getenv, the first entry of a name counts.
Switches read_switches() {
  Switches s;
  static constexpr char kPrefix[] = "CONVT3D_";
  constexpr size_t kPrefixLen = sizeof(kPrefix) - 1;
  bool seen[kNumSpecs] = {};
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const char* kv = *e;
    if (kv[0] != 'C' || std::strncmp(kv, kPrefix, kPrefixLen) != 0) continue;
    const char* name = kv + kPrefixLen;
    const char* eq = std::strchr(name, '=');
    if (eq == nullptr) continue;
    const Spec* sp = find_spec(name, size_t(eq - name));
    if (sp == nullptr || seen[sp - kSpecs]) continue;
    seen[sp - kSpecs] = true;
    long v = 0;
    if (parse_long(eq + 1, v) && accepts(*sp, v)) s.*(sp->field) = int(v);
  }
  return s;
}

}  // namespace convt3d
