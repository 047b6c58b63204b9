"""A small, representative run of every CUDA kernel for compute-sanitizer (memcheck, racecheck):
each fast-path dtype, both layouts, M/channel tails, empty phases (and the output prefill),
grouped and densified groups,
v1, per-phase (mma.sync, and the opt-in wgmma variant on sm_90) and fused halo kernels, the
transposed wgmma kernel (sm_90, bf16/fp16/TF32; box streamed and reloaded, by TMA and by
cp.async), the non-overlapping kernel (sm_90, channels_last), and the reference kernels for all
four ops. Sizes are tiny: the sanitizers slow kernels down 10-100x.
Exits non-zero if any result is wrong, so a clean sanitizer run also means correct output."""
import os
import sys

import torch
import torch.nn.functional as F

import inductor_convt3d  # noqa: F401
from switch_names import SWITCHES  # (scripts/, beside this file)

ops = torch.ops.convt3d
# N, Cin, Cout, size, kernel, stride, padding, output_padding, dilation, groups[, switches]
CASES = [
    (2, 16, 16, (5, 6, 7), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1),
    # densified groups, fused halo with union boxes
    (1, 32, 24, (4, 5, 9), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 4),
    (2, 17, 5, (3, 4, 5), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1),
    # dilated: v1 with empty phases (NCDHW: y prefilled, their CTAs return at once; forced
    # on, and off)
    (1, 8, 8, (3, 3, 4), (3, 3, 3), (2, 2, 2), (0, 0, 0), (1, 1, 1), (2, 2, 2), 2),
    (1, 8, 8, (3, 3, 4), (3, 3, 3), (2, 2, 2), (0, 0, 0), (1, 1, 1), (2, 2, 2), 2,
     {"CONVT3D_PREFILL": "0"}),
    # suite case 8 shrunk: twg with NCDHW x and a prefilled y whose planes are odd-sized
    (1, 32, 64, (3, 4, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (2, 2, 2), 1,
     {"CONVT3D_PREFILL": "1"}),
    (1, 32, 64, (3, 4, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (2, 2, 2), 1,
     {"CONVT3D_PREFILL": "1", "CONVT3D_HALO": "1", "CONVT3D_TWG": "0"}),
    # fused with several resident channel chunks, output_padding rows, BN 48
    (1, 72, 40, (3, 4, 9), (4, 4, 4), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1),
    # the grouped small-channel kernel (TF32, bf16, fp16; strict fp32 runs others): suite case
    # 5's kernel with 4 groups, and one group with other padding parities over two w blocks
    (1, 32, 32, (3, 4, 9), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 4,
     {"CONVT3D_GSC": "1"}),
    (1, 8, 8, (3, 3, 55), (3, 5, 7), (2, 2, 2), (0, 1, 2), (1, 0, 1), (1, 1, 1), 1,
     {"CONVT3D_GSC": "1"}),
    # and windows wholly inside y (its unchecked stores) beside partial ones
    (1, 16, 16, (3, 5, 24), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 2,
     {"CONVT3D_GSC": "1"}),
    # v1 forced on a strided layer: the path auto mode now sends to the fused kernel
    (1, 32, 24, (4, 5, 9), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 4,
     {"CONVT3D_HALO": "0"}),
    # halo with several channel chunks (channels_last: the box streams through two buffers)
    # and two N tiles
    (1, 48, 72, (3, 4, 9), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1),
    # halo BN 48 (per-copy B mapping) with a column tail (auto mode: twg in bf16/fp16 on sm_90)
    (1, 24, 40, (3, 4, 9), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_TWG": "0"}),
    # transposed wgmma: stride 1 (auto), three channel chunks (the box streamed through two
    # buffers, then reloaded per chunk; the last a half chunk), and forced on a stride-2 layer
    # with empty-tap-free phases and tails (two chunks, streamed)
    (1, 24, 40, (3, 4, 9), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1),
    (1, 72, 40, (3, 4, 9), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_TWG": "1"}),
    (1, 72, 40, (3, 4, 9), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_TWG": "1", "CONVT3D_BOX_STREAM": "0"}),
    (1, 40, 48, (3, 4, 5), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_TWG": "1"}),
    # one- and two-tap phases (k3 s2): a channels_last TMA box spans the largest span and the
    # smaller phases read it skewed; two chunks, the last a partial one
    (1, 72, 40, (3, 4, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1,
     {"CONVT3D_TWG": "1"}),
    # strict fp32 with NCDHW x (W % 4 == 0) and TF32 operands: each chunk's box staged by one
    # TMA copy of x and split by the warps; two groups with a partial last chunk, and one- and
    # two-tap phases. The same two as fp16 products (the default for dense x: a streamed box by
    # the scalar loader, or by TMA when channels_last)
    (1, 80, 96, (4, 5, 8), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 2,
     {"CONVT3D_TWG": "1", "CONVT3D_TWG_H16": "0"}),
    (1, 64, 64, (3, 5, 8), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1,
     {"CONVT3D_TWG": "1", "CONVT3D_TWG_H16": "0"}),
    (1, 80, 96, (4, 5, 8), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 2,
     {"CONVT3D_TWG": "1", "CONVT3D_TWG_H16": "1"}),
    (1, 64, 64, (3, 5, 8), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1,
     {"CONVT3D_TWG": "1", "CONVT3D_TWG_H16": "1"}),
    # strict fp32 with NCDHW x, two stacked depth planes and a box reloaded per chunk: staged
    # by TMA in pieces of 4 channels through two buffers (three chunks, a partial last one);
    # as fp16 products the box streams instead
    (1, 44, 24, (4, 10, 16), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_TWG": "1", "CONVT3D_TWG_H16": "0"}),
    (1, 44, 24, (4, 10, 16), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_TWG": "1", "CONVT3D_TWG_H16": "1"}),
    # channels_last boxes by cp.async instead of TMA (the default where the tensor map is legal)
    (1, 72, 40, (3, 4, 9), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_TWG": "1", "CONVT3D_TWG_TMA": "0"}),
    (1, 40, 48, (3, 4, 5), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_TWG": "1", "CONVT3D_TWG_TMA": "0", "CONVT3D_BOX_STREAM": "0"}),
    # the same two with two slices per CTA (two CTAs per SM, half the weight stage)
    (1, 72, 40, (3, 4, 9), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_TWG": "1", "CONVT3D_TWG_SLICES": "2"}),
    (1, 40, 48, (3, 4, 5), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_TWG": "1", "CONVT3D_TWG_SLICES": "2"}),
    # stacked depth planes (Cout/g <= 32; weights by 5-D TMA boxes whose blocks past the
    # kernel's depth taps read zeros): two planes per warpgroup with a depth tail, two channel
    # chunks; four planes on a layer strided in h and w (one- and two-tap phases there)
    (1, 40, 24, (5, 4, 9), (3, 3, 3), (1, 1, 1), (0, 1, 1), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_TWG": "1", "CONVT3D_TWG_STACK": "2", "CONVT3D_TWG_WSTACK": "0"}),
    (1, 16, 12, (4, 5, 6), (3, 3, 3), (1, 2, 2), (1, 1, 1), (0, 1, 1), (1, 1, 1), 1,
     {"CONVT3D_TWG": "1", "CONVT3D_TWG_STACK": "4", "CONVT3D_TWG_WSTACK": "0"}),
    # stacked w taps: suite case 1's kernel (two w shifts of 4 and 3 taps, block sums in the
    # epilogue), and strides 2 in depth and h with two channel chunks
    (1, 16, 16, (4, 5, 9), (3, 5, 7), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_TWG": "1", "CONVT3D_TWG_WSTACK": "1"}),
    (1, 40, 16, (3, 4, 6), (3, 3, 7), (2, 2, 1), (1, 1, 3), (1, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_TWG": "1", "CONVT3D_TWG_STACK": "4", "CONVT3D_TWG_WSTACK": "1"}),
    # both again with the wgmma variant forced (sm_90), and the first with its box reloaded per
    # chunk instead of streamed
    (1, 48, 72, (3, 4, 9), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_WGMMA": "1"}),
    (1, 24, 40, (3, 4, 9), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_WGMMA": "1"}),
    (1, 48, 72, (3, 4, 9), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_BOX_STREAM": "0"}),
    # stride 2, 3.4 taps per phase, three channel chunks: TF32 with channels_last x takes the
    # per-phase halo kernel (its box streamed), the other modes the fused kernel or v1
    (1, 48, 40, (3, 4, 9), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1),
    # v1 with several K stages: the multistage cp.async pipeline when channels_last
    (2, 48, 40, (3, 4, 5), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_HALO": "0"}),
    # the non-overlapping kernel (sm_90; forced): M, N and K tails at BN 128 and 256, padding
    # that drops outputs, odd Cout (scalar epilogue); channels_last, and with NCDHW x
    # (D*H*W % 8 == 0) its M-major (16-bit) or transposed (TF32) A
    (2, 48, 40, (3, 4, 5), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_PW": "1"}),
    (2, 48, 40, (3, 4, 5), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_PW": "1", "CONVT3D_PW_BN": "256"}),
    (1, 16, 8, (4, 5, 6), (2, 2, 2), (2, 2, 2), (3, 2, 1), (1, 0, 1), (1, 1, 1), 1,
     {"CONVT3D_PW": "1"}),
    (1, 16, 5, (3, 3, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_PW": "1"}),
    (3, 80, 24, (1, 5, 8), (2, 2, 2), (2, 2, 2), (0, 1, 1), (0, 0, 1), (1, 1, 1), 1,
     {"CONVT3D_PW": "1"}),
    (2, 160, 64, (2, 2, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 2,
     {"CONVT3D_PW": "1", "CONVT3D_PW_BN": "256"}),
    # strict fp32 as fp16 products (dense x; in the other modes these are plain pw layers): a
    # partial 16-channel group and a partial chunk, B read from w (split in shared memory) and
    # repacked; K = 320 past one fold (BN 64, partial sums folded)
    (2, 36, 40, (3, 4, 8), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_PW": "1", "CONVT3D_PW_H16": "1"}),
    (2, 36, 40, (3, 4, 8), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_PW": "1", "CONVT3D_PW_H16": "1", "CONVT3D_PW_WDIRECT": "0"}),
    (1, 320, 16, (2, 4, 8), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_PW": "1", "CONVT3D_PW_H16": "1"}),
    # more tiles than resident CTAs: 16-bit persistent CTAs run several tiles each (with an M
    # tail and a K of three chunks; strict fp32 as fp16 products at BN 128)
    (3, 144, 16, (7, 32, 67), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_PW": "1"}),
    # TF32 with two K stages (lean; the rule takes it with NCDHW x, forced here for both
    # layouts): K of four chunks with a tail, two N tiles, an M tail
    (2, 100, 24, (3, 8, 17), (2, 2, 2), (2, 2, 2), (1, 0, 0), (1, 0, 0), (1, 1, 1), 1,
     {"CONVT3D_PW": "1", "CONVT3D_PW_LEAN": "1"}),
    # fused w-phase pairs (NCDHW y, w stride 2): forced, two N tiles, box tails on every axis
    # and output_padding rows with no pair partner; forced on a densified grouped layer
    (2, 16, 32, (3, 9, 17), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1,
     {"CONVT3D_FUSED_PAIR": "1", "CONVT3D_HALO": "2"}),
    (1, 32, 24, (4, 5, 9), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 4,
     {"CONVT3D_FUSED_PAIR": "1", "CONVT3D_HALO": "2"}),
    # the fused kernel with resident weights: persistent CTAs over box tails
    (2, 16, 32, (3, 9, 17), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1,
     {"CONVT3D_FUSED_RES": "1", "CONVT3D_HALO": "2"}),
    # densified groups whose zero weight blocks are skipped (forced in every mode; the rule
    # skips in strict fp32 and on the per-phase kernel at BN 32): suite case 5's grouping on
    # the per-phase and the fused kernel, and groups of 4 -> 2 (an n8 tile spans four groups)
    # with two N tiles' worth of rows
    (2, 32, 32, (3, 4, 6), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 4,
     {"CONVT3D_HALO": "1", "CONVT3D_TWG": "0", "CONVT3D_DENSE_SKIP": "1"}),
    (2, 32, 32, (3, 4, 6), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 4,
     {"CONVT3D_HALO": "2", "CONVT3D_DENSE_SKIP": "1"}),
    (1, 12, 6, (4, 5, 9), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 3,
     {"CONVT3D_HALO": "1", "CONVT3D_TWG": "0", "CONVT3D_DENSE_SKIP": "1"}),
]


def main():
    # --with NAME: only the cases that set switch NAME (a short run for one kernel's change);
    # --layout ncdhw|cl: one layout only; --dtype bf16|fp16|tf32|fp32|fp64: one precision only
    # (fp32: TF32 off, the 3xTF32 kernels). Racecheck of the whole subset outlasts one 600 s
    # device call, and so does one layout of it (NCDHW ran past 420 s on an H200, 2026-11-28):
    # split by both. Each precision prints a line when done, so a run cut off by its time limit
    # still shows which precisions finished (racecheck prints its hazards as it finds them).
    only = sys.argv[sys.argv.index("--with") + 1] if "--with" in sys.argv else None
    dname = sys.argv[sys.argv.index("--dtype") + 1] if "--dtype" in sys.argv else None
    layout = sys.argv[sys.argv.index("--layout") + 1] if "--layout" in sys.argv else None
    if layout not in (None, "ncdhw", "cl"):
        raise SystemExit(f"--layout must be ncdhw or cl, got {layout}")
    layouts = [c for c in (False, True) if layout is None or c == (layout == "cl")]
    cases = [c for c in CASES if only is None or (len(c) > 10 and only in c[10])]
    failures = 0
    precisions = {"bf16": (torch.bfloat16, False), "fp16": (torch.float16, False),
                  "tf32": (torch.float32, True), "fp32": (torch.float32, False),
                  "fp64": (torch.float64, False)}
    if dname not in (None, *precisions):
        raise SystemExit(f"--dtype must be one of {', '.join(precisions)}, got {dname}")
    for pname, (dtype, tf32) in precisions.items():
        if dname is not None and pname != dname:
            continue
        torch.backends.cudnn.allow_tf32 = tf32
        bound = {torch.bfloat16: 5e-3, torch.float16: 5e-3, torch.float64: 1e-12}.get(
            dtype, 5e-4 if tf32 else 1e-6)
        for (N, ci, co, size, k, s, p, op, d, g, *env) in cases:
            for name in SWITCHES:
                os.environ[name] = env[0].get(name, "") if env else ""
            for cl in layouts:
                x = torch.randn(N, ci, *size, device="cuda", dtype=dtype)
                if cl:
                    x = x.contiguous(memory_format=torch.channels_last_3d)
                w = torch.randn(ci, co // g, *k, device="cuda", dtype=dtype)
                if cl and env and "CONVT3D_PW" in env[0]:  # 16-bit pw reads B from w itself
                    w = w.contiguous(memory_format=torch.channels_last_3d)
                b = torch.randn(co, device="cuda", dtype=dtype)
                args = (list(s), list(p), list(op), list(d), g)
                y = ops.conv_transpose3d(x, w, b, *args)
                gy = torch.randn_like(y)
                got = [y, ops.conv_transpose3d_grad_input(gy, w, *args),
                       ops.conv_transpose3d_grad_weight(gy, x, list(k), *args),
                       ops.conv_transpose3d_grad_bias(gy)]
                x64, w64, b64 = (t.double().cpu().requires_grad_() for t in (x, w, b))
                ref = F.conv_transpose3d(x64, w64, b64, s, p, op, g, d)
                refs = [ref, *torch.autograd.grad(ref, [x64, w64, b64], gy.double().cpu())]
                for name, a, r in zip(["fwd", "gx", "gw", "gb"], got, refs):
                    err = ((a.double().cpu() - r).norm() / r.norm()).item()
                    # grads are fp32-accurate reference kernels; forward may be TF32
                    if not err <= (bound if name == "fwd" else max(bound, 1e-6)):
                        failures += 1
                        print(f"FAIL {dtype} tf32={tf32} cl={cl} case={(N, ci, co, size, k, s, g)} {name} err={err:.2e}")
        print(f"sanitize subset: {pname} done, {len(cases)} cases x {len(layouts)} layouts",
              flush=True)
    torch.cuda.synchronize()
    print(f"sanitize subset: {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
