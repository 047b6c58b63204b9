"""scripts/switch_names.py lists every switch of csrc/cuda/switches.cpp but the plan cache's,
so the A/B and sanitizer scripts clear each of them between cases (CPU only)."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import switch_names  # noqa: E402


def test_switch_names_match_switches_cpp():
    text = open(os.path.join(ROOT, "csrc", "cuda", "switches.cpp")).read()
    specs = set(re.findall(r'^\s*\{"([A-Z0-9_]+)", &Switches::', text, re.M))
    assert len(specs) > 20, "switches.cpp's kSpecs table not found"
    names = {"CONVT3D_" + s for s in specs} - {"CONVT3D_PLAN_CACHE"}
    assert len(switch_names.SWITCHES) == len(set(switch_names.SWITCHES)), "a name twice"
    assert set(switch_names.SWITCHES) == names
