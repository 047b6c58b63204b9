"""How much of the tensor-core work the transposed wgmma kernel (twg) issues is useful, per
suite row, from its tile alone (no GPU): the planner's tile as the dispatch mirror predicts it
(tests/dispatch_mirror.py's twg_run), counted wgmma by wgmma.

A twg CTA issues, per channel chunk and box shift, one m64nNRk wgmma per warpgroup (slice) and
K step: 64 output-channel rows whatever Cout/g is, NR box positions whatever lies in the tile
(halo columns, lines past the tile), the chunk's K steps rounded up to 32 bytes. The useful work
is the bench's FLOP count (inductor_convt3d/bench/roofline.py: taps that land on real data).
useful / issued bounds the share of the tensor pipe's rate that can reach the output. The kernel
takes at least issued / peak (the instruction's rate), so it reaches at most

    cap = floor / (issued / peak),  floor = max(useful / ceiling, bytes / copy bandwidth)

of the roofline floor (the bench's: its ceiling is torch.mm's measured rate). Where the floor is
compute, cap = useful / issued * peak / ceiling. Defaults: the peak of scripts/wgmma_rate_probe.cu
at n144 with two CTAs per SM (H200, 2026-11-28: 484 TFLOP/s TF32, 962 bf16; operands of ones),
the ceilings and copy bandwidth of bench run CK (H200, 2026-11-28).

    python3 scripts/mma_issue_model.py                  # every twg row of the suite, markdown
    python3 scripts/mma_issue_model.py --cases 1,4 --peak-tf32 484 --ceil-tf32 397.5
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)

import dispatch_mirror as dm  # noqa: E402
from inductor_convt3d.bench.roofline import bytes_moved, flops  # noqa: E402
from inductor_convt3d.bench.suite import get_cases  # noqa: E402
from suite_paths import as_sm90, row_path  # noqa: E402


def spec_of(case):
    return (case.N, case.Cin, case.Cout, case.size, case.kernel, case.stride, case.padding,
            case.output_padding, case.dilation, case.groups, case.bias)


def issued_flops(case, mode, channels_last):
    """(issued FLOPs, the tile (nr, slices, J, w-stacked)) of the twg kernel on this row (TF32
    or bf16, groups as given: not a densified layer), or None where no twg tile fits. A CTA past
    a smaller phase's extent issues nothing, so each phase counts its own tiles."""
    spec = spec_of(case)
    run = dm.twg_run(spec, mode, kvec=channels_last, y_ncdhw=not channels_last)
    if run is None:
        return None
    nr, _stream, sl, bqh, bqw, stack, ws = run[:7]
    planes = 1 if ws else stack
    axes = [dm.axis_taps(case.size[i], case.kernel[i], case.stride[i], case.padding[i],
                         case.output_padding[i], case.dilation[i]) for i in range(3)]
    # K per chunk: 32-byte steps (k16 of 16 bits, k8 of TF32), a chunk's second step only where
    # its channels reach past the first (twg's nks)
    cin_g, bk = case.Cin // case.groups, dm.bk_elems(mode)
    k_issued = 0
    for c0 in range(0, cin_g, bk):
        k_issued += bk if cin_g - c0 > bk // 2 else bk // 2
    per_shift = sl * 64 * nr * k_issued * 2 * case.groups
    total = 0
    for a in axes[0]:
        for b in axes[1]:
            for c in axes[2]:
                tiles = (case.N * -(-a[0] // (sl * planes)) * -(-b[0] // bqh) * -(-c[0] // bqw))
                total += tiles * dm.twg_shifts(a, b, c, stack, ws) * per_shift
    return total, (nr, sl, stack, ws)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default=None)
    ap.add_argument("--modes", default="tf32,bf16", help="tf32 and/or bf16")
    ap.add_argument("--peak-tf32", type=float, default=484.0)
    ap.add_argument("--peak-bf16", type=float, default=962.0)
    ap.add_argument("--ceil-tf32", type=float, default=397.5, help="bench ceiling, TFLOP/s")
    ap.add_argument("--ceil-bf16", type=float, default=780.6)
    ap.add_argument("--copy", type=float, default=4.25, help="copy bandwidth, TB/s")
    args = ap.parse_args()
    as_sm90()
    ids = [int(v) for v in args.cases.split(",")] if args.cases else None
    print("| # | precision | layout | kernel | floor | useful / issued | cap on % of floor |")
    print("|---|---|---|---|---|---|---|")
    for case in get_cases(ids):
        for mode in args.modes.split(","):
            peak = getattr(args, f"peak_{mode}")
            ceil = getattr(args, f"ceil_{mode}")
            for cl in (False, True):
                path = row_path(case, mode, cl)
                if not path.startswith("twg_") or "_dense" in path:
                    continue
                got = issued_flops(case, mode, cl)
                if got is None:
                    continue
                t_flop = flops(case) / (ceil * 1e12)
                t_mem = bytes_moved(case, 4 if mode == "tf32" else 2) / (args.copy * 1e12)
                cap = max(t_flop, t_mem) / (got[0] / (peak * 1e12))
                print(f"| {case.id} | {mode} | {'channels_last' if cl else 'NCDHW'} | `{path}` | "
                      f"{'compute' if t_flop >= t_mem else 'memory'} | "
                      f"{100 * flops(case) / got[0]:.1f} % | {min(100.0, 100 * cap):.0f} % |")


if __name__ == "__main__":
    main()
