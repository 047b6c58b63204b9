"""Ranks the SASS instructions of a Nsight Compute source-page CSV (`NCU_SOURCE=1
scripts/ncu_cases.sh`) by warp stall samples, with each one's main stall reasons; --range
LO:HI (hex offsets from the kernel's first instruction, repeatable) sums the samples of
address ranges, e.g. a loop that this listing or cuobjdump shows.

    python scripts/ncu_source_top.py ncu_12_fp32_ncdhw.csv --top 20 --range 96c0:a4d0
"""
import argparse
import csv

SAMPLES = "Warp Stall Sampling (All Samples)"


def load(path):
    """[(offset, sass, samples, executed, {stall reason: samples})] in address order."""
    rows = list(csv.reader(open(path, newline="")))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    ix = {h: i for i, h in enumerate(rows[head])}
    reasons = [h for h in ix if h.startswith("stall_") and "Not Issued" not in h]
    out = []
    for r in rows[head + 1:]:
        if len(r) < len(ix):
            continue
        num = lambda h: int(r[ix[h]] or 0)  # noqa: E731
        out.append((int(r[0], 16), r[1].strip(), num(SAMPLES), num("Instructions Executed"),
                    {h[len("stall_"):]: num(h) for h in reasons}))
    base = out[0][0] if out else 0
    return [(a - base, *rest) for a, *rest in out]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--range", action="append", default=[], help="LO:HI hex offsets, inclusive")
    args = ap.parse_args()
    rows = load(args.csv)
    total = sum(r[2] for r in rows) or 1
    print(f"{args.csv}: {total} samples, {sum(r[3] for r in rows)} warp instructions executed")
    for off, sass, s, _, st in sorted(rows, key=lambda r: -r[2])[:args.top]:
        why = " ".join(f"{k}={v}" for k, v in sorted(st.items(), key=lambda kv: -kv[1])[:3])
        print(f"{off:6x} {100 * s / total:5.2f}%  {sass[:60]:<60} {why}")
    for rg in args.range:
        lo, hi = (int(v, 16) for v in rg.split(":"))
        s = sum(r[2] for r in rows if lo <= r[0] <= hi)
        print(f"range {lo:x}-{hi:x}: {100 * s / total:.1f}% ({s} samples)")


if __name__ == "__main__":
    main()
