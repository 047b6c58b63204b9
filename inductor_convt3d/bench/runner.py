"""Runs one suite case in every requested precision and layout: our op, tuned cuDNN and
(optionally) default cuDNN on the same inputs, plus the errors against an fp64 reference."""
from __future__ import annotations

import math
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

from .. import functional
from . import roofline
from .precision import LAYOUTS, PRECISIONS, cudnn_benchmark, tf32_flags
from .suite import Case
from .timing import Policy, Timing, is_cuda, measure_steady, rotation_sets


def ours_fn(case: Case) -> Callable:
    """Our op as an eager user calls it: the F.conv_transpose3d drop-in (nn.ConvTranspose3d
    replacement calls the same), side by side with the baseline's F.conv_transpose3d."""
    kw = case.conv_args()

    def run(x, w, b):
        return functional.conv_transpose3d(x, w, b, **kw)
    return run


def baseline_fn(case: Case) -> Callable:
    kw = case.conv_args()

    def run(x, w, b):
        return F.conv_transpose3d(x, w, b, **kw)
    return run


def conv_backend(case: Case, x, w, b) -> str | None:
    """The backend F.conv_transpose3d selects for these tensors ("CudnnTranspose", ...), or None
    when PyTorch's private selector is unavailable."""
    try:
        backend = torch._C._select_conv_backend(
            x, w, b, list(case.stride), list(case.padding), list(case.dilation), True,
            list(case.output_padding), case.groups)
    except Exception:
        return None
    name = str(backend).rsplit(".", 1)[-1].rstrip(",")
    return name if name and name != "???" else f"ConvBackend({int(backend)})"  # unnamed in Python


def make_inputs(case: Case, dtype: torch.dtype, device, gen: torch.Generator):
    """Random normal input, weight scaled by 1/sqrt(fan-in), random bias (or None): never zeros."""
    fan = case.Cin // case.groups * math.prod(case.kernel)
    x = torch.randn(case.input_shape, device=device, generator=gen).to(dtype)
    w = (torch.randn(case.weight_shape, device=device, generator=gen) / math.sqrt(fan)).to(dtype)
    b = torch.randn(case.Cout, device=device, generator=gen).to(dtype) if case.bias else None
    return x, w, b


def reference(case: Case, x, w, b) -> tuple[torch.Tensor, str | None]:
    """fp64 F.conv_transpose3d on the same device, of the exact input values the precision runs
    on, with cudnn.benchmark off; and the backend PyTorch selected for it."""
    xd, wd, bd = x.double(), w.double(), None if b is None else b.double()
    with cudnn_benchmark(False):
        return F.conv_transpose3d(xd, wd, bd, **case.conv_args()), conv_backend(case, xd, wd, bd)


def rel_l2(y: torch.Tensor, ref: torch.Tensor) -> float:
    """||y - ref|| / ||ref|| in fp64, one batch element at a time to bound the memory."""
    num = den = 0.0
    for n in range(ref.shape[0]):
        r = ref[n]
        num += float((y[n].double() - r).square().sum())
        den += float(r.square().sum())
    return math.sqrt(num / den) if den > 0 else math.sqrt(num)


def _layout(t, fmt):
    return None if t is None else (t.contiguous(memory_format=fmt) if t.dim() == 5 else t)


def _summarise(t: Timing, flop: int, floor_s: float, ref, out_bytes: int,
               mem_first: bool) -> dict:
    """Timing plus TFLOP/s, % of floor, error, and extra memory as a fraction of the output:
    the larger of first and steady call when mem_first (our op: one-time caches count), the
    steady call otherwise (cuDNN: its first call autotunes)."""
    d = t.to_json()
    s = t.median_ms / 1e3
    d["tflops"] = flop / s / 1e12
    d["pct_floor"] = 100.0 * floor_s / s
    d["rel_err"] = None if ref is None else rel_l2(t.output, ref)
    mem = t.extra_mem
    if mem_first and t.extra_mem_first is not None:
        mem = max(t.extra_mem_first, t.extra_mem or 0)
    d["extra_mem_frac"] = None if mem is None else mem / out_bytes
    d["out_channels_last"] = bool(t.output.is_contiguous(memory_format=torch.channels_last_3d)
                                  and not t.output.is_contiguous())
    t.output = None
    return d


def _try(label: str, fn: Callable, log) -> tuple[object, str | None]:
    try:
        return fn(), None
    except Exception as e:  # one failing configuration must not stop the suite
        msg = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        log(f"    {label} failed: {msg}")
        return None, msg


def run_case(case: Case, precisions: list[str], layouts: list[str], device: torch.device,
             policy: Policy, ceilings: dict, l2: int | None, with_default: bool, seed: int,
             deadline: float | None, log: Callable[[str], None]) -> list[dict]:
    cuda = is_cuda(device)
    flop = roofline.flops(case)
    results: list[dict] = []
    ours, base = ours_fn(case), baseline_fn(case)
    groups: dict[str, list[str]] = {}
    for p in precisions:
        groups.setdefault(PRECISIONS[p].ref_group, []).append(p)

    for group, members in groups.items():
        dtype = PRECISIONS[members[0]].dtype
        gen = torch.Generator(device=device).manual_seed(seed * 1000 + case.id)
        x, w, b = make_inputs(case, dtype, device, gen)
        ref, ref_done, ref_backend = None, False, None
        for pname in members:
            prec = PRECISIONS[pname]
            nbytes = roofline.bytes_moved(case, prec.elem_size)
            rate = ceilings["floor_flops_per_s"][pname]
            floor_s = roofline.floor_seconds(flop, nbytes, rate, ceilings["copy_bytes_per_s"])
            out_bytes = math.prod(case.output_shape) * prec.elem_size
            in_bytes = nbytes - out_bytes
            for lname in layouts:
                row = dict(case=case.id, desc=case.describe(), precision=pname, layout=lname,
                           device_type=torch.device(device).type,
                           dtype=str(dtype).replace("torch.", ""),
                           input_shape=list(case.input_shape), weight_shape=list(case.weight_shape),
                           output_shape=list(case.output_shape), flops=flop, bytes=nbytes,
                           floor_ms=floor_s * 1e3, floor_bound=("compute" if flop / rate >= nbytes
                                                                / ceilings["copy_bytes_per_s"]
                                                                else "memory"))
                results.append(row)
                if deadline is not None and time.monotonic() > deadline:
                    row["skipped"] = "deadline reached before this configuration"
                    continue
                t_start = time.monotonic()
                if not ref_done:
                    got, row["reference_error"] = _try("fp64 reference",
                                                       lambda: reference(case, x, w, b), log)
                    ref, ref_backend = got if got is not None else (None, None)
                    ref_done = True
                row["reference_backend"] = ref_backend
                fmt = LAYOUTS[lname]
                k = rotation_sets(in_bytes, out_bytes, l2)
                sets = [(_layout(x, fmt), _layout(w, fmt), b)]
                for _ in range(k - 1):
                    sets.append(tuple(_layout(t, fmt) for t in make_inputs(case, dtype, device, gen)))
                row["rotation_sets"] = k
                with tf32_flags(prec.allow_tf32):
                    row["baseline_backend"] = conv_backend(case, *sets[0])
                    t_ours, row["ours_error"] = _try(
                        "ours", lambda: measure_steady(ours, sets, device, policy, first_is_steady=True), log)
                    if t_ours is not None:
                        row["ours"] = _summarise(t_ours, flop, floor_s, ref, out_bytes, True)
                    del t_ours
                    with cudnn_benchmark(True):
                        t_cu, row["cudnn_error"] = _try(
                            "cudnn", lambda: measure_steady(base, sets, device, policy,
                                                     first_is_steady=False), log)
                    if t_cu is not None:
                        row["cudnn"] = _summarise(t_cu, flop, floor_s, ref, out_bytes, False)
                    del t_cu
                    if with_default:
                        with cudnn_benchmark(False):
                            t_def, row["cudnn_default_error"] = _try(
                                "cudnn default", lambda: measure_steady(base, sets, device, policy,
                                                                 first_is_steady=False), log)
                        if t_def is not None:
                            row["cudnn_default"] = _summarise(t_def, flop, floor_s, ref, out_bytes,
                                                              False)
                        del t_def
                del sets
                if "ours" in row and "cudnn" in row:
                    row["speedup"] = row["cudnn"]["ms"] / row["ours"]["ms"]
                if "ours" in row and "cudnn_default" in row:
                    row["speedup_vs_default"] = row["cudnn_default"]["ms"] / row["ours"]["ms"]
                row["wall_s"] = time.monotonic() - t_start
                for key in [key for key, v in row.items() if key.endswith("_error") and v is None]:
                    del row[key]
                log(progress_line(row))
                if cuda:
                    torch.cuda.empty_cache()
        del x, w, b, ref
        if cuda:
            torch.cuda.empty_cache()
    # Measured by input group (tf32 and fp32 share inputs); reported in the order asked for.
    order = {(p, lay): i for i, (p, lay) in enumerate((p, lay) for p in precisions for lay in layouts)}
    return sorted(results, key=lambda r: order[(r["precision"], r["layout"])])


def progress_line(row: dict) -> str:
    def ms(key):
        d = row.get(key)
        return "failed" if d is None else f"{d['ms']:.4g} ms ({d['iters']} it{', slow' if d['slow'] else ''})"
    parts = [f"case {row['case']:>2} {row['precision']:<4} {row['layout']}: ours {ms('ours')}",
             f"cuDNN {ms('cudnn')}"]
    if "cudnn_default" in row or "cudnn_default_error" in row:
        parts.append(f"default {ms('cudnn_default')}")
    if "speedup" in row:
        parts.append(f"speedup {row['speedup']:.3g}x")
    if "ours" in row and row["ours"]["rel_err"] is not None:
        parts.append(f"err {row['ours']['rel_err']:.2e}")
    parts.append(f"[{row['wall_s']:.1f} s]")
    return " | ".join(parts)
