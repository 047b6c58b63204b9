// The CUDA forward's run-time switches: environment variables that force or forbid a kernel
// without rebuilding (A/B timing, tests). They are read once per call, so tests can change them
// between calls, and the planner sees them only through this struct, which is part of the plan
// cache's key (plan.cpp): a switch added here is keyed on automatically.
#pragma once

#include <array>

namespace convt3d {

struct Switches {
  int halo = -1;        // CONVT3D_HALO: 0 never a halo kernel, 1 per-phase, 2 fused; -1 auto
  int wgmma = 0;        // CONVT3D_WGMMA=1: the per-phase halo kernel's wgmma variant
  int box_stream = -1;  // CONVT3D_BOX_STREAM: 0 halo and twg reload their box per chunk, 1
                        // twg streams wherever two buffers fit; -1 the rule
  int twg = -1;         // CONVT3D_TWG: 1 the transposed wgmma kernel wherever legal, 0 never
  int twg_slices = 0;   // CONVT3D_TWG_SLICES: 2 or 4 slices per twg CTA; 0 the rule
  int twg_tma = 1;      // CONVT3D_TWG_TMA=0: twg loads channels_last boxes with cp.async
  int twg_stack = 0;    // CONVT3D_TWG_STACK: 1, 2 or 4 stacked blocks where legal; 0 the rule
  int twg_wstack = -1;  // CONVT3D_TWG_WSTACK: 1 stacks w taps only, 0 depth planes only; -1 either
  int twg_long = 1;     // CONVT3D_TWG_LONG=0: 3xTF32 twg never takes long weight stages
  int twg_stage = 1;    // CONVT3D_TWG_STAGE=0: 3xTF32 twg never stages NCDHW boxes by TMA
  int twg_h16 = 1;      // CONVT3D_TWG_H16=0: 3xTF32 twg never runs as fp16 products
  int twg_bqw = 0;      // CONVT3D_TWG_BQW=n (1..256): twg tiles n outputs wide (no twg where none
                        // fits); 0 the rule
  int pw = -1;          // CONVT3D_PW: 1 the non-overlapping kernel wherever legal, 0 never
  int pw_bn = 0;        // CONVT3D_PW_BN: 64, 128 or 256 fixes its BN; 0 the rule
  int pw_wdirect = 1;   // CONVT3D_PW_WDIRECT=0: pw always reads the repacked weight
  int pw_persist = 1;   // CONVT3D_PW_PERSIST=0: 16-bit and 3xTF32 pw run one CTA per tile
  int pw_h16 = -1;     // CONVT3D_PW_H16: 1 3xTF32 pw runs as fp16 products wherever legal, 0
                       // never; -1 the rule (plan_pw)
  int pw_lean = -1;     // CONVT3D_PW_LEAN: 1 TF32 pw takes two stages wherever it can, 0 three;
                        // -1 the rule (plan_pw)
  int dense = 1;        // CONVT3D_DENSE=0: never densify grouped layers
  int dense_skip = -1;  // CONVT3D_DENSE_SKIP: 1 the mma.sync halo kernels skip a densified
                        // layer's zero weight blocks wherever they run it, 0 never; -1 the rule
  int prefill = -1;     // CONVT3D_PREFILL: 1 prefill y wherever legal, 0 never; -1 the rule
  int plan_cache = 1;   // CONVT3D_PLAN_CACHE=0: plan every call (timing, bisecting the cache)
  int fused_pair = -1;  // CONVT3D_FUSED_PAIR: 1 the fused kernel stores w-phase pairs wherever
                        // legal, 0 never; -1 the rule (plan_halo)
  int gsc = -1;         // CONVT3D_GSC: 1 the grouped small-channel kernel wherever legal, 0
                        // never; -1 where legal and no switch forces another family
  int pdl = 1;          // CONVT3D_PDL=0: pw and twg never launch before the repack (or the
                        // prefill, the scale pass) has finished (fwd/pdl.cuh)
  int gsc_g2 = 1;       // CONVT3D_GSC_G2=0: the grouped small-channel kernel keeps one group
                        // per CTA in 16-bit channels_last too
  int fused_res = -1;   // CONVT3D_FUSED_RES: 1 the fused kernel keeps the weights in shared
                        // memory on persistent CTAs wherever legal, 2 the same one box per CTA;
                        // 0 never; -1 the rule (plan_halo)

  static constexpr int kCount = 27;
  std::array<int, kCount> values() const {
    return {halo,   wgmma,      box_stream, twg,        twg_slices, twg_tma, twg_stack, twg_wstack,
            pw,     pw_bn,      pw_wdirect, pw_persist, pw_lean,    dense,   prefill,   plan_cache,
            fused_pair, dense_skip, twg_bqw, twg_long, twg_stage, twg_h16, pw_h16, pdl, gsc,
            gsc_g2,     fused_res};
  }
};

// Reads every switch from the environment (an unset or unrecognised value means its default).
Switches read_switches();

}  // namespace convt3d
