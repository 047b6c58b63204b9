"""The CUDA forward's kernel for every suite row, as the tests' dispatch mirror
(tests/dispatch_mirror.py) predicts it for an H100/H200 (compute capability 9.0, sm_90a build),
on any machine: no GPU needed. The tests assert the mirror against the planner on a GPU, so this
is the planner's choice with default switches (set CONVT3D_* to see another).

    python3 scripts/suite_paths.py            # markdown table for docs/forward_kernels.md
    python3 scripts/suite_paths.py --cases 5,12

Tensors are meta tensors (no memory); the mirror's device checks see a CUDA 9.0 device.
"""
import argparse
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)

import dispatch_mirror as dm  # noqa: E402
from inductor_convt3d.bench.suite import get_cases  # noqa: E402

MODES = {"tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16,
         "3xtf32": torch.float32}  # 3xtf32: fp32 with TF32 off


def as_sm90(set_attr=setattr):
    """Lets the mirror's device tests pass for meta tensors: its checks of x.device go through
    these three functions and torch.cuda.get_device_capability. (A test passes pytest's
    monkeypatch.setattr, so the patches end with it.)"""
    set_attr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    cuda = torch.device("cuda")
    for name in ("pw_expected", "twg_expected", "wgmma_expected"):
        f = getattr(dm, name)
        set_attr(dm, name, (lambda f: lambda device, *a, **k: f(cuda, *a, **k))(f))


def row_path(case, mode, channels_last):
    dtype = MODES[mode]
    x = torch.empty(case.N, case.Cin, *case.size, dtype=dtype, device="meta")
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last_3d)
    w = torch.empty(case.Cin, case.Cout // case.groups, *case.kernel, dtype=dtype, device="meta")
    spec = (case.N, case.Cin, case.Cout, case.size, case.kernel, case.stride, case.padding,
            case.output_padding, case.dilation, case.groups, case.bias)
    return dm.expected_path(x, spec, mode, w)


def table_rows(ids=None, modes=("tf32", "bf16", "3xtf32")):
    """(case id, precision as the docs name it, NCDHW path, channels_last path) per row; call
    as_sm90 first."""
    for case in get_cases(ids):
        for mode in modes:
            paths = [row_path(case, mode, cl) for cl in (False, True)]
            yield case.id, "strict fp32" if mode == "3xtf32" else mode, paths[0], paths[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default=None, help="comma list of suite case ids (default all)")
    ap.add_argument("--modes", default="tf32,bf16,3xtf32")
    args = ap.parse_args()
    as_sm90()
    ids = [int(v) for v in args.cases.split(",")] if args.cases else None
    print("| # | precision | NCDHW x | channels_last x |")
    print("|---|---|---|---|")
    for cid, name, ncdhw, cl in table_rows(ids, args.modes.split(",")):
        print(f"| {cid} | {name} | `{ncdhw}` | `{cl}` |")


if __name__ == "__main__":
    main()
