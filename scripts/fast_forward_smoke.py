"""Smoke check of the fast CUDA forward: a handful of configs, one line each.

    python scripts/fast_forward_smoke.py            # all cases x bf16/fp16/tf32/fp32 x NCDHW/CL
    python scripts/fast_forward_smoke.py -k suite   # only cases whose name contains "suite"
    python scripts/fast_forward_smoke.py --force-reference   # same table through the reference

Columns: case, precision, layout, the kernel forward ran (convt3d::_forward_path), relative L2
error against fp64 F.conv_transpose3d on the CPU, its bound, NaN count (results start as NaN,
so NaN = elements never written), the worst element (index and values), verdict. Each config
runs in its own try/except after a synchronize, so a crash shows up in its row.
"""
import argparse
import os
import sys

os.environ["CONVT3D_POISON_OUTPUTS"] = "1"  # read per call by the op front end

# name: N, Cin, Cout, size, kernel, stride, padding, output_padding, dilation, groups, bias
CASES = {
    "plain_k3s1": (2, 16, 16, (5, 6, 7), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True),
    "s2_k3_op1": (2, 16, 24, (3, 4, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, False),
    "s123_mixed": (1, 8, 8, (3, 4, 5), (2, 3, 4), (2, 3, 1), (0, 1, 2), (1, 2, 0), (1, 1, 1), 1, True),
    "empty_phases": (1, 8, 8, (3, 3, 4), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (2, 2, 2), 1, True),
    "odd_ch_5to7": (2, 5, 7, (3, 4, 5), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    "groups4": (2, 12, 20, (3, 4, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 4, True),
    "cout130": (1, 8, 130, (3, 3, 3), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True),
    "m_tail_257": (1, 8, 32, (1, 1, 257), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True),
    "long_k3456": (1, 128, 24, (4, 5, 6), (3, 3, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    "halo_k3s1": (2, 48, 48, (5, 6, 17), (3, 3, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    "halo_k5s2d2": (1, 8, 16, (3, 4, 5), (5, 5, 5), (2, 2, 2), (0, 0, 0), (0, 0, 0), (2, 2, 2), 1, True),
    "halo_cout130": (1, 40, 130, (3, 4, 9), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True),
    "suite1": (1, 32, 16, (4, 5, 6), (3, 5, 7), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False),
    "suite5": (1, 32, 32, (3, 4, 6), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 4, False),
    "suite8": (1, 32, 64, (4, 4, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (2, 2, 2), 1, True),
    "suite9": (1, 256, 128, (3, 4, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    "suite12": (1, 128, 64, (4, 4, 4), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, True),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    ap.add_argument("--force-reference", action="store_true",
                    help="set CONVT3D_FORCE_REFERENCE=1 (must happen before the first forward)")
    ap.add_argument("--layouts", default="ncdhw,cl")
    ap.add_argument("--precisions", default="bf16,fp16,tf32,fp32")
    args = ap.parse_args()
    if args.force_reference:
        os.environ["CONVT3D_FORCE_REFERENCE"] = "1"

    import torch
    import torch.nn.functional as F

    import inductor_convt3d as ic

    precisions = {"bf16": (torch.bfloat16, True, 5e-3), "fp16": (torch.float16, True, 5e-3),
                  "tf32": (torch.float32, True, 5e-4), "fp32": (torch.float32, False, 1e-6)}
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}")
    header = f"{'case':14s} {'prec':5s} {'layout':6s} {'path':26s} {'rel_err':>9s} {'bound':>7s} " \
             f"{'nan':>5s}  worst element"
    print(header)
    print("-" * len(header))
    failures = 0
    for name, spec in CASES.items():
        if args.k not in name:
            continue
        N, cin, cout, size, k, s, p, op, d, g, has_bias = spec
        gen = torch.Generator().manual_seed(0)
        x64 = torch.randn(N, cin, *size, generator=gen, dtype=torch.float64)
        w64 = torch.randn(cin, cout // g, *k, generator=gen, dtype=torch.float64)
        b64 = torch.randn(cout, generator=gen, dtype=torch.float64) if has_bias else None
        for pname in args.precisions.split(","):
            dtype, tf32, bound = precisions[pname]
            for layout in args.layouts.split(","):
                torch.backends.cudnn.allow_tf32 = tf32
                x = x64.to(dtype).cuda()
                if layout == "cl":
                    x = x.contiguous(memory_format=torch.channels_last_3d)
                w = w64.to(dtype).cuda()
                b = b64.to(dtype).cuda() if b64 is not None else None
                ref = F.conv_transpose3d(x.double().cpu(), w.double().cpu(),
                                         b.double().cpu() if b is not None else None,
                                         s, p, op, g, d)
                try:
                    path = torch.ops.convt3d._forward_path(x, w, list(s), list(p), list(op),
                                                           list(d), g)
                    y = ic.conv_transpose3d(x, w, b, s, p, op, g, d)
                    torch.cuda.synchronize()
                    y = y.double().cpu()
                    nan = int(torch.isnan(y).sum())
                    diff = (y - ref).nan_to_num(float("inf")).abs()
                    err = ((y - ref).norm() / ref.norm()).item() if nan == 0 else float("inf")
                    i = int(diff.argmax())
                    idx = list(torch.unravel_index(torch.tensor(i), y.shape))
                    worst = f"{[int(v) for v in idx]} got {y.flatten()[i].item():.5g} " \
                            f"want {ref.flatten()[i].item():.5g}"
                    ok = err <= bound
                except Exception as e:  # noqa: BLE001  (keep going; the row says what failed)
                    path, err, nan, worst, ok = "EXCEPTION", float("inf"), -1, repr(e)[:80], False
                failures += not ok
                print(f"{name:14s} {pname:5s} {layout:6s} {path:26s} {err:9.2e} {bound:7.0e} "
                      f"{nan:5d}  {worst}{'' if ok else '   <-- FAIL'}", flush=True)
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
