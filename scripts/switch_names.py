"""The CONVT3D_* switches that force, forbid or shape a forward kernel: every switch of
csrc/cuda/switches.cpp but CONVT3D_PLAN_CACHE (tests/test_switch_names.py holds the two lists
together). The A/B and sanitizer scripts clear them all before setting a case's own, so a
switch missing here would leak from one case into the next."""

SWITCHES = ("CONVT3D_HALO", "CONVT3D_WGMMA", "CONVT3D_BOX_STREAM", "CONVT3D_DENSE", "CONVT3D_TWG",
            "CONVT3D_TWG_SLICES", "CONVT3D_TWG_TMA", "CONVT3D_TWG_STACK", "CONVT3D_TWG_WSTACK",
            "CONVT3D_TWG_BQW", "CONVT3D_TWG_LONG", "CONVT3D_TWG_STAGE", "CONVT3D_PW",
            "CONVT3D_PW_BN", "CONVT3D_PW_WDIRECT", "CONVT3D_PW_PERSIST", "CONVT3D_PW_LEAN",
            "CONVT3D_PREFILL", "CONVT3D_FUSED_PAIR", "CONVT3D_DENSE_SKIP", "CONVT3D_TWG_H16",
            "CONVT3D_PW_H16", "CONVT3D_PDL", "CONVT3D_GSC", "CONVT3D_GSC_G2",
            "CONVT3D_FUSED_RES")
