"""A/B timing of the fast forward kernels on suite cases, in one process (the switches are read
per call): v1 (CONVT3D_HALO=0), per-phase halo (=1), its wgmma variant (=1 with
CONVT3D_WGMMA=1, sm_90), per-phase halo reloading its box per chunk (=1 with
CONVT3D_BOX_STREAM=0), fused halo (=2), the transposed wgmma kernel (CONVT3D_TWG=1, bf16/fp16/TF32,
sm_90; twg_reload: its box reloaded per chunk, CONVT3D_BOX_STREAM=0; twg_s2 / twg_s4: two or
four slices per CTA, CONVT3D_TWG_SLICES; twg_j1/j2/j4 (and j2s2/j4s2 with two slices): 1, 2
or 4 stacked depth planes per warpgroup, CONVT3D_TWG_STACK; twg_w/w2/w4: stacked w taps,
CONVT3D_TWG_WSTACK=1; twg_cpasync: its channels_last box by cp.async instead
of TMA, CONVT3D_TWG_TMA=0; bqwN: twg tiles N outputs wide, CONVT3D_TWG_BQW=N; nolong: 3xTF32
twg without long weight stages, CONVT3D_TWG_LONG=0; nostage: 3xTF32 twg's NCDHW boxes by the
scalar loader, not staged by TMA (whole or in pieces), CONVT3D_TWG_STAGE=0; noh16: 3xTF32 twg
with TF32 operands, not fp16 products, CONVT3D_TWG_H16=0; nopwh16: the same on the
non-overlapping kernel, CONVT3D_PW_H16=0; columns join by "+", e.g. bqw16+nolong),
the automatic choice with every twg box that fits streamed
(auto_stream, CONVT3D_BOX_STREAM=1) or none (auto_reload), the non-overlapping
kernel (CONVT3D_PW=1, kernel == stride, sm_90; pw64/128/256 fix its BN; pw_lean / pw_full: TF32 with
two K stages wherever it can / three always, CONVT3D_PW_LEAN), the
automatic choice, the automatic choice without the output prefill (noprefill,
CONVT3D_PREFILL=0), without the non-overlapping kernel (nopw, CONVT3D_PW=0) or without the
fused kernel's w-phase pairs (nopair, CONVT3D_FUSED_PAIR=0), the fused kernel with pairs
wherever legal (fused_pair: CONVT3D_HALO=2, CONVT3D_FUSED_PAIR=1), and for grouped
layers the automatic choice with densified groups off (CONVT3D_DENSE=0) or with their zero
weight blocks always multiplied (noskip, CONVT3D_DENSE_SKIP=0) or skipped on the halo kernels
in every mode (skip, =1).
Median of CUDA-event timings after warm-up; no cuDNN, no error check (the bench does both).
A kernel that does not fit a case falls back to the automatic choice, so read the path.

    python scripts/halo_ab.py --cases 6,11,12 --dtypes bf16,tf32 --layouts ncdhw,ndhwc \
        --variants v1,halo,halo_wgmma,auto
"""
import argparse
import os
import time

import torch

import inductor_convt3d  # noqa: F401  (loads the ops)
from inductor_convt3d.bench.suite import get_cases
from switch_names import SWITCHES  # (scripts/, beside this file)

DTYPES = {"tf32": torch.float32, "fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
VARIANTS = {  # column -> the switches it sets (the others unset)
    "v1": {"CONVT3D_HALO": "0"},
    "halo": {"CONVT3D_HALO": "1", "CONVT3D_TWG": "0"},
    "halo_wgmma": {"CONVT3D_HALO": "1", "CONVT3D_WGMMA": "1", "CONVT3D_TWG": "0"},
    "halo_reload": {"CONVT3D_HALO": "1", "CONVT3D_BOX_STREAM": "0", "CONVT3D_TWG": "0"},
    "fused": {"CONVT3D_HALO": "2"},
    # the fused kernel with resident weights: persistent CTAs, or one box per CTA
    "res": {"CONVT3D_FUSED_RES": "1"},
    "res1": {"CONVT3D_FUSED_RES": "2"},
    "nores": {"CONVT3D_FUSED_RES": "0"},
    "twg": {"CONVT3D_TWG": "1"},
    "twg_reload": {"CONVT3D_TWG": "1", "CONVT3D_BOX_STREAM": "0"},
    "twg_s2": {"CONVT3D_TWG": "1", "CONVT3D_TWG_SLICES": "2"},
    "twg_s4": {"CONVT3D_TWG": "1", "CONVT3D_TWG_SLICES": "4"},
    "twg_cpasync": {"CONVT3D_TWG": "1", "CONVT3D_TWG_TMA": "0"},  # channels_last box by cp.async
    # stacked depth planes per warpgroup (Cout/g <= 64 / J), four or two slices
    "twg_j1": {"CONVT3D_TWG": "1", "CONVT3D_TWG_STACK": "1", "CONVT3D_TWG_WSTACK": "0"},
    "twg_j2": {"CONVT3D_TWG": "1", "CONVT3D_TWG_STACK": "2", "CONVT3D_TWG_WSTACK": "0"},
    "twg_j4": {"CONVT3D_TWG": "1", "CONVT3D_TWG_STACK": "4", "CONVT3D_TWG_WSTACK": "0"},
    "twg_j2s2": {"CONVT3D_TWG": "1", "CONVT3D_TWG_STACK": "2", "CONVT3D_TWG_SLICES": "2",
                 "CONVT3D_TWG_WSTACK": "0"},
    "twg_j4s2": {"CONVT3D_TWG": "1", "CONVT3D_TWG_STACK": "4", "CONVT3D_TWG_SLICES": "2",
                 "CONVT3D_TWG_WSTACK": "0"},
    # stacked w taps per warpgroup (Cout/g <= 64 / J), any J or J = 2 / 4
    "twg_w": {"CONVT3D_TWG": "1", "CONVT3D_TWG_WSTACK": "1"},
    "twg_w2": {"CONVT3D_TWG": "1", "CONVT3D_TWG_STACK": "2", "CONVT3D_TWG_WSTACK": "1"},
    "twg_w4": {"CONVT3D_TWG": "1", "CONVT3D_TWG_STACK": "4", "CONVT3D_TWG_WSTACK": "1"},
    "twg_w4s2": {"CONVT3D_TWG": "1", "CONVT3D_TWG_STACK": "4", "CONVT3D_TWG_WSTACK": "1",
                 "CONVT3D_TWG_SLICES": "2"},
    "nolong": {"CONVT3D_TWG_LONG": "0"},  # 3xTF32 twg without long weight stages
    "nostage": {"CONVT3D_TWG_STAGE": "0"},  # 3xTF32 twg: NCDHW boxes by the scalar loader
    "noh16": {"CONVT3D_TWG_H16": "0"},  # 3xTF32 twg: TF32 operands, not fp16 products
    "nopwh16": {"CONVT3D_PW_H16": "0"},  # 3xTF32 pw: TF32 operands, not fp16 products
    "pw": {"CONVT3D_PW": "1"},
    "pw64": {"CONVT3D_PW": "1", "CONVT3D_PW_BN": "64"},
    "pw128": {"CONVT3D_PW": "1", "CONVT3D_PW_BN": "128"},
    "pw256": {"CONVT3D_PW": "1", "CONVT3D_PW_BN": "256"},
    "pw_repack": {"CONVT3D_PW": "1", "CONVT3D_PW_WDIRECT": "0"},  # 16-bit B from the repack
    "pw_tile": {"CONVT3D_PW": "1", "CONVT3D_PW_PERSIST": "0"},  # 16-bit, 3xTF32: a CTA per tile
    "pw_lean": {"CONVT3D_PW": "1", "CONVT3D_PW_LEAN": "1"},  # TF32: two stages where it can
    "pw_full": {"CONVT3D_PW": "1", "CONVT3D_PW_LEAN": "0"},  # TF32: three stages always
    "auto": {},
    "nopair": {"CONVT3D_FUSED_PAIR": "0"},  # the automatic choice without fused w-phase pairs
    "fused_pair": {"CONVT3D_HALO": "2", "CONVT3D_FUSED_PAIR": "1"},
    "nopw": {"CONVT3D_PW": "0"},  # the automatic choice without the non-overlapping kernel
    "noprefill": {"CONVT3D_PREFILL": "0"},  # y's empty phases written by their own CTAs
    "nopdl": {"CONVT3D_PDL": "0"},  # pw and twg launched only once the repack has finished
    "nogsc": {"CONVT3D_GSC": "0"},  # grouped 8 -> 8 stride-2 layers: the densified kernels
    "nog2": {"CONVT3D_GSC_G2": "0"},  # gsc 16-bit channels_last: one group per CTA
    "auto_cpasync": {"CONVT3D_TWG_TMA": "0"},
    "auto_stream": {"CONVT3D_BOX_STREAM": "1"},
    "auto_reload": {"CONVT3D_BOX_STREAM": "0"},
    "nodense": {"CONVT3D_DENSE": "0"},  # grouped layers only
    "noskip": {"CONVT3D_DENSE_SKIP": "0"},  # densified layers' zero blocks multiplied too
    "skip": {"CONVT3D_DENSE_SKIP": "1"},  # ... or skipped on the halo kernels in every mode
}


def median_ms(fn, warmup=3, iters=15, batch=1, warm_s=0.05):
    """Median over iters of (events around batch back-to-back calls) / batch. batch 1 times one
    synced call, host planning included; a larger batch keeps the stream busy, so sub-ms layers
    read their kernel time (as the bench's per-call timing does). Warm-up runs at least warmup
    calls and warm_s seconds: with three calls only, the first variant of a row read up to 27 %
    slower than the same kernel in a later column (H100, 2026-11-25, suite cases 5, 9, 10)."""
    t_end = time.perf_counter() + warm_s
    n = 0
    while n < warmup or time.perf_counter() < t_end:
        fn()
        n += 1
        if n % 8 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(batch):
            fn()
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) / batch)
    return sorted(ts)[len(ts) // 2]


def variant_env(v):
    """The switches of column v: VARIANTS, bqwN (the automatic choice with twg tiles N outputs
    wide, CONVT3D_TWG_BQW=N; no twg where no such tile fits), or several joined by "+"."""
    env = {}
    for part in v.split("+"):
        env.update({"CONVT3D_TWG_BQW": part[3:]} if part.startswith("bqw") and part[3:].isdigit()
                   else VARIANTS[part])
    return env


def set_switches(env):
    unknown = set(env) - set(SWITCHES)  # a switch left out of SWITCHES would never be set
    assert not unknown, f"halo_ab.py: add {sorted(unknown)} to SWITCHES"
    for k in SWITCHES:
        if k in env:
            os.environ[k] = env[k]
        else:
            os.environ.pop(k, None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="1,2,3,4,5,6,7,8,9,10,11,12")
    ap.add_argument("--dtypes", default="bf16,tf32")
    ap.add_argument("--layouts", default="ncdhw,ndhwc", help="ncdhw, ndhwc, xncdhw (comma list)")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--batch", type=int, default=1, help="calls per timed sample (median_ms)")
    args = ap.parse_args()
    variants = args.variants.split(",")
    op = torch.ops.convt3d.conv_transpose3d
    print(f"{'case':>4} {'prec':>5} {'layout':>6} " + " ".join(f"{v:>9}" for v in variants) +
          "  auto path (ms)")
    for c in get_cases([int(v) for v in args.cases.split(",")]):
        for prec in args.dtypes.split(","):
            torch.backends.cudnn.allow_tf32 = prec == "tf32"
            dt = DTYPES[prec]
            x = torch.randn(c.input_shape, device="cuda", dtype=dt)
            w = torch.randn(c.weight_shape, device="cuda", dtype=dt)
            b = torch.randn(c.Cout, device="cuda", dtype=dt) if c.bias else None
            a = c.conv_args()
            for layout in args.layouts.split(","):
                # ndhwc: x and w channels_last, as the bench has them; xncdhw: x NCDHW and w
                # channels_last, so y is channels_last (PyTorch's rule) while x takes the NCDHW
                # loader: against ncdhw and ndhwc it splits an NCDHW row's extra time between
                # reading x and writing y
                cl, cont = torch.channels_last_3d, torch.contiguous_format
                xf, wf = {"ndhwc": (cl, cl), "ncdhw": (cont, cont), "xncdhw": (cont, cl)}[layout]
                xl, wl = x.contiguous(memory_format=xf), w.contiguous(memory_format=wf)
                call = (xl, wl, b, list(a["stride"]), list(a["padding"]), list(a["output_padding"]),
                        list(a["dilation"]), a["groups"])
                # per column, not per name: a repeated column (auto,x,auto,x: two rounds in
                # one process) keeps each of its measurements
                res, ran = [], []
                for v in variants:
                    set_switches(variant_env(v))
                    skip = v == "nodense" and c.groups == 1
                    res.append(float("nan") if skip else
                               median_ms(lambda: op(*call), batch=args.batch))
                    ran.append(torch.ops.convt3d._forward_path(xl, wl, *call[3:]))
                set_switches({})
                path = torch.ops.convt3d._forward_path(xl, wl, *call[3:])
                # which kernel each forced twg column ran (each name once)
                forced = dict.fromkeys(
                    (v, r) for v, r in zip(variants, ran)
                    if v.startswith(("twg", "auto_", "bqw", "nolong", "nostage", "noh16",
                                     "nopwh16")))
                extra = "".join(f"  {v}: {r}" for v, r in forced)
                print(f"{c.id:>4} {prec:>5} {layout:>6} " +
                      " ".join(f"{t:>9.4f}" for t in res) + f"  {path}{extra}")


if __name__ == "__main__":
    main()
