"""Every suite case's main forward kernel in one process, for one Nsight Compute run over a few
metrics (one process: a python start per case would cost more than the profiling).

    ncu --clock-control none --csv --metrics <m1,m2> -k regex:_fwd_kernel \\
        python scripts/ncu_survey.py --precisions tf32,bf16 --layouts ncdhw,ndhwc > survey.csv

Prints one line per profiled launch, in launch order ("survey <i> case prec layout path"), so
the CSV's kernel IDs map to cases. Each case runs twice; profile the second launch of each
(ncu's IDs 1, 3, 5, ...), after the first has set up plans and shared-memory attributes.
"""
import argparse

import torch

from profile_case import case_call

import inductor_convt3d  # noqa: F401  (loads the ops)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="1,2,3,4,5,6,7,8,9,10,11,12")
    ap.add_argument("--precisions", default="tf32,bf16")
    ap.add_argument("--layouts", default="ncdhw,ndhwc")
    args = ap.parse_args()
    i = 0
    for case in (int(c) for c in args.cases.split(",")):
        for prec in args.precisions.split(","):
            for layout in args.layouts.split(","):
                c, path, call = case_call(case, prec, layout)
                for _ in range(2):
                    call()
                    torch.cuda.synchronize()
                    print(f"survey {i} {case} {prec} {layout} {path}", flush=True)
                    i += 1


if __name__ == "__main__":
    main()
