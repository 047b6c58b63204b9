"""Run one suite case through our forward a few times, for a profiler to look at.

    ncu --clock-control none -k regex:fwd python scripts/profile_case.py 3 bf16 ndhwc
    python scripts/profile_case.py 11 tf32 ncdhw --iters 20      # plain timing, one line

precision: tf32 (fp32, TF32 allowed), fp32 (TF32 disallowed), bf16, fp16. layout: ncdhw or ndhwc.
Prints the kernel path (convt3d::_forward_path) and the median CUDA-event time.
"""
import argparse

import torch

import inductor_convt3d  # noqa: F401  (loads the ops)
from inductor_convt3d.bench.suite import get_cases

DTYPES = {"tf32": torch.float32, "fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", type=int)
    ap.add_argument("precision", choices=sorted(DTYPES))
    ap.add_argument("layout", choices=["ncdhw", "ndhwc"])
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--kernels", action="store_true",
                    help="also print each CUDA kernel's device time (torch.profiler)")
    args = ap.parse_args()
    c, path, call = case_call(args.case, args.precision, args.layout)
    times = []
    for _ in range(args.iters):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        call()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    print(f"case {c.id} {args.precision} {args.layout} path={path} median {times[len(times) // 2]:.4f} ms")
    if args.kernels:
        print_kernel_times(call, args.iters)


def case_call(case, precision, layout):
    """Suite case `case` as the bench has it: (case, forward path, a call of our forward on fixed
    random inputs). Sets the TF32 flag for `precision`."""
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    c = get_cases([case])[0]
    g = torch.Generator(device="cuda").manual_seed(0)
    dt = DTYPES[precision]
    x = torch.randn(c.input_shape, device="cuda", dtype=dt, generator=g)
    w = torch.randn(c.weight_shape, device="cuda", dtype=dt, generator=g)
    b = torch.randn(c.Cout, device="cuda", dtype=dt, generator=g) if c.bias else None
    if layout == "ndhwc":  # x and w channels_last, as the bench has them
        x = x.contiguous(memory_format=torch.channels_last_3d)
        w = w.contiguous(memory_format=torch.channels_last_3d)
    a = c.conv_args()
    geo = (list(a["stride"]), list(a["padding"]), list(a["output_padding"]), list(a["dilation"]),
           a["groups"])
    path = torch.ops.convt3d._forward_path(x, w, *geo)

    def call():
        torch.backends.cudnn.allow_tf32 = precision == "tf32"  # callers may mix precisions
        return torch.ops.convt3d.conv_transpose3d(x, w, b, *geo)

    return c, path, call


def print_kernel_times(fn, iters):
    """Device time per kernel and call (torch.profiler), to split a launch-bound call into its
    repack, main kernel and gaps."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
    for ev in prof.key_averages():
        if ev.device_type == torch.autograd.DeviceType.CUDA or "kernel" in ev.key.lower():
            us = getattr(ev, "device_time", getattr(ev, "cuda_time", 0.0))
            print(f"  {ev.key[:90]:90s} calls {ev.count:4d} avg {us:9.2f} us")


if __name__ == "__main__":
    main()
