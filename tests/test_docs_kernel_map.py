"""docs/forward_kernels.md's table of the kernel each suite row runs is what
scripts/suite_paths.py derives from the dispatch mirror (which the GPU tests hold to the
planner). A planning rule changed without the doc fails here, on any machine."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import suite_paths  # noqa: E402


def doc_rows():
    text = open(os.path.join(ROOT, "docs", "forward_kernels.md")).read()
    rows = re.findall(r"^\| (\d+) \| ([a-z0-9 ]+) \| `([^`]+)` \| `([^`]+)` \|", text, re.M)
    return [(int(c), p, a, b) for c, p, a, b in rows]


def test_kernel_map_matches_the_mirror(monkeypatch):
    for name in list(os.environ):
        if name.startswith("CONVT3D_"):  # the table is of the default switches
            monkeypatch.delenv(name)
    suite_paths.as_sm90(monkeypatch.setattr)
    rows = doc_rows()
    assert len(rows) == 36, "12 suite cases x (tf32, bf16, strict fp32)"
    assert rows == list(suite_paths.table_rows())
