"""Where a launch-bound call's time goes: per-call CUDA-event time (as the bench takes it) and
the host's time per call, for our op as the bench calls it (the functional drop-in, through its flat entry,
convt3d::_conv_transpose3d_flat), through torch.ops (the full
dispatch, Python autograd kernel included), under torch.inference_mode, and for cuDNN, on one
suite case.

    python scripts/host_overhead.py 9 bf16 ndhwc [--parts] [--profile] [--env CONVT3D_X=0 ...]

--parts also times the drop-in's pieces one by one (its checks, the geometry list, the flat
entry) and the public op below autograd, the path the drop-in took before the flat entry.
The host time is measured with the stream held busy by a long sleep kernel, so the calls only
enqueue: it is pure CPU time (Python, dispatcher, planning, allocation, launches). The GPU time
per call is the other way round: the calls are all enqueued behind a sleep kernel, so the
stream then runs them back to back with no host gap.

Why both: in the bench's loop (per-call events, no sync between calls) a call whose host time
H exceeds its GPU time G leaves the GPU idle before each start event, and its event then reads
the host time from that event to its last launch plus the last kernel, not max(H, G). Near
H = G the reading jumps by about that host time (suite case 9 TF32 in runs BV and BW: 0.044
or 0.077 ms on the same kernels). --env NAME=VALUE (repeatable) times our call again with that
switch set.
"""
import argparse
import contextlib
import os
import time

import torch
import torch.nn.functional as F

import inductor_convt3d
from inductor_convt3d.bench.suite import get_cases
from inductor_convt3d.bench.timing import median_seconds

DTYPES = {"tf32": torch.float32, "fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def event_ms(fn, iters=50, warmup=10):
    """Median per-call CUDA-event time, the bench's own timer (no sync between calls)."""
    return median_seconds(fn, torch.device("cuda"), warmup, iters) * 1e3


def host_us(fn, iters=100, repeats=5):
    """Host time per call, the least of `repeats` windows of `iters` calls (the host is shared
    and noisy; the least window is the call's own cost)."""
    best = float("inf")
    for _ in range(repeats):
        torch.cuda.synchronize()
        torch.cuda._sleep(int(2e9 // 1000 * 50))  # ~50 ms of GPU time at ~2 GHz: the queue waits
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        best = min(best, time.perf_counter() - t0)
        torch.cuda.synchronize()
    return best / iters * 1e6


def gpu_us(fn, iters=50, repeats=3):
    """GPU time per call: iters calls enqueued behind a sleep kernel, then run back to back
    (events around them / iters), the least of `repeats`."""
    best = float("inf")
    for _ in range(repeats):
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(int(2e9 // 1000 * 50))  # ~50 ms: longer than enqueueing the calls
        s.record()
        for _ in range(iters):
            fn()
        e.record()
        torch.cuda.synchronize()
        best = min(best, s.elapsed_time(e) / iters * 1e3)
    return best


@contextlib.contextmanager
def env_set(name, value):
    """The environment variable `name` set to `value` inside, restored after (our switches are
    read per call)."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", type=int)
    ap.add_argument("precision", choices=sorted(DTYPES))
    ap.add_argument("layout", choices=["ncdhw", "ndhwc"])
    ap.add_argument("--profile", action="store_true", help="also print torch.profiler tables")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="also time our call with this switch set (repeatable)")
    ap.add_argument("--parts", action="store_true",
                    help="also time the functional drop-in's pieces (Python above the op)")
    args = ap.parse_args()
    torch.backends.cudnn.allow_tf32 = args.precision == "tf32"
    torch.backends.cudnn.benchmark = True
    c = get_cases([args.case])[0]
    dt = DTYPES[args.precision]
    x = torch.randn(c.input_shape, device="cuda", dtype=dt)
    w = torch.randn(c.weight_shape, device="cuda", dtype=dt)
    b = torch.randn(c.Cout, device="cuda", dtype=dt) if c.bias else None
    if args.layout == "ndhwc":  # x and w channels_last, as the bench has them
        x = x.contiguous(memory_format=torch.channels_last_3d)
        w = w.contiguous(memory_format=torch.channels_last_3d)
    kw = c.conv_args()
    geo = (list(kw["stride"]), list(kw["padding"]), list(kw["output_padding"]),
           list(kw["dilation"]), kw["groups"])
    op = torch.ops.convt3d.conv_transpose3d

    def ours():
        return inductor_convt3d.conv_transpose3d(x, w, b, **kw)

    def ours_op():
        return op(x, w, b, *geo)

    def ours_inference():
        with torch.inference_mode():
            return op(x, w, b, *geo)

    def cudnn():
        return F.conv_transpose3d(x, w, b, **kw)

    od = op.default

    def ours_below():  # the public op below autograd (the drop-in's path before the flat entry)
        with torch._C._AutoDispatchBelowAutograd():
            return od(x, w, b, *geo)

    def plan_only():  # checks and planning, no allocation or launch
        return torch.ops.convt3d._forward_path(x, w, *geo)

    def plan_uncached():  # the same, planning every call (CONVT3D_PLAN_CACHE=0, set around it)
        return torch.ops.convt3d._forward_path(x, w, *geo)

    xc, wc = x.cpu(), w.cpu()

    def checks_only():  # the same op on CPU tensors: checks only (the CPU forward has one path)
        return torch.ops.convt3d._forward_path(xc, wc, *geo)

    y0 = ours()

    def alloc_only():  # what the op allocates: the output and the packed weight
        return torch.empty_like(y0), torch.empty(w.numel(), dtype=w.dtype, device=w.device)

    print(f"case {c.id} {args.precision} {args.layout}: per call, event ms (the bench's) / "
          f"host us / GPU us (back to back)")
    for name, fn in (("ours (functional)", ours), ("ours torch.ops", ours_op),
                     ("ours inference_mode", ours_inference), ("cuDNN", cudnn)):
        print(f"  {name:22s} {event_ms(fn):8.4f} ms  {host_us(fn):7.1f} us  {gpu_us(fn):7.1f} us")
    for env in args.env:  # our call again under each switch
        k, _, v = env.partition("=")
        with env_set(k, v):
            print(f"  {'ours, ' + env:22s} {event_ms(ours):8.4f} ms  {host_us(ours):7.1f} us  "
                  f"{gpu_us(ours):7.1f} us")
    for name, fn in (("plan only", plan_only), ("plan only, no cache", plan_uncached),
                     ("checks only (CPU)", checks_only), ("allocations only", alloc_only)):
        with (env_set("CONVT3D_PLAN_CACHE", "0") if fn is plan_uncached
              else contextlib.nullcontext()):
            print(f"  {name:22s} {'':>11s}  {host_us(fn):7.1f} us")
    if args.parts:  # the drop-in's pieces, each alone
        from inductor_convt3d import ops
        from inductor_convt3d._shapes import flat_geometry

        flat = flat_geometry(kw["stride"], kw["padding"], kw["output_padding"], kw["dilation"],
                             kw["groups"])
        handle = od._handle

        def boxed_below():  # the public op through the boxed entry (no torch_function check)
            with torch._C._AutoDispatchBelowAutograd():
                return torch._C._dispatch_call_boxed(handle, x, w, b, *geo)

        def empty_y():  # the output's allocation alone
            return torch.empty_like(y0)

        for name, fn in (("flat entry", lambda: ops.conv_transpose3d_flat(x, w, b, flat)),
                         ("op below autograd", ours_below),
                         ("boxed below autograd", boxed_below),
                         ("empty_like(y)", empty_y),
                         ("is_compiling", torch.compiler.is_compiling),
                         ("has_torch_function", lambda: torch._C._has_torch_function((x, w, b))),
                         ("flat_geometry", lambda: flat_geometry(
                             kw["stride"], kw["padding"], kw["output_padding"], kw["dilation"],
                             kw["groups"]))):
            print(f"  {name:22s} {'':>11s}  {host_us(fn):7.2f} us")
    if args.profile:  # where a call's host time goes, by profiler event (CPU side)
        from torch.profiler import ProfilerActivity, profile
        for name, fn in (("ours (functional)", ours), ("cuDNN", cudnn)):
            for _ in range(20):
                fn()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                for _ in range(50):
                    fn()
                torch.cuda.synchronize()
            print(f"--- {name}: 50 calls")
            print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=14))


if __name__ == "__main__":
    main()
