"""The main job: `python -m inductor_convt3d demo`.

A small U-Net-style 3-D decoder (ConvTranspose3d upsampling, skip concatenation, Conv3d blocks)
runs in eager and under torch.compile(backend="convt3d"); the demo prints how many nodes the pass
rewrote, the largest difference from eager, and the timings. GPU when there is one, else CPU.
"""
from __future__ import annotations

import argparse
import contextlib
import time

import torch
import torch._functorch.config
import torch._inductor.config
from torch import nn

from . import config, counters

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


class Decoder(nn.Module):
    """Each stage doubles the resolution with a stride-2 ConvTranspose3d, joins the encoder's skip
    tensor at that scale and mixes them with a 3x3x3 Conv3d."""

    def __init__(self, channels=(64, 32, 16, 8), out_channels: int = 2) -> None:
        super().__init__()
        pairs = list(zip(channels[:-1], channels[1:]))
        self.ups = nn.ModuleList(nn.ConvTranspose3d(c, d, 2, stride=2) for c, d in pairs)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Conv3d(2 * d, d, 3, padding=1), nn.GroupNorm(4, d), nn.ReLU())
            for _, d in pairs)
        self.head = nn.ConvTranspose3d(channels[-1], out_channels, 3, padding=1)

    def forward(self, x: torch.Tensor, skips: list[torch.Tensor]) -> torch.Tensor:
        for up, block, skip in zip(self.ups, self.blocks, skips):
            x = block(torch.cat([up(x), skip], dim=1))
        return self.head(x)


def make_inputs(model: Decoder, batch: int, size: int, device, dtype):
    channels = [model.ups[0].in_channels] + [up.out_channels for up in model.ups]
    x = torch.randn(batch, channels[0], size, size, size, device=device, dtype=dtype)
    skips = [torch.randn(batch, c, *(3 * [size * 2 ** (i + 1)]), device=device, dtype=dtype)
             for i, c in enumerate(channels[1:])]
    return x, skips


def timed(fn, iters: int, device: torch.device) -> float:
    """Mean seconds per call."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    sync()
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    sync()
    return (time.perf_counter() - start) / iters


def parse(argv):
    p = argparse.ArgumentParser(prog="python -m inductor_convt3d demo", description=__doc__)
    p.add_argument("--device", default="auto", help="auto (cuda if available), cuda or cpu")
    p.add_argument("--dtype", default="float32", choices=sorted(DTYPES))
    p.add_argument("--batch", type=int, default=None, help="default: 4 on GPU, 1 on CPU")
    p.add_argument("--size", type=int, default=None,
                   help="bottleneck edge length; the output is 8x it (default: 16 GPU, 4 CPU)")
    p.add_argument("--iters", type=int, default=None, help="timed calls (default: 50 GPU, 5 CPU)")
    p.add_argument("--train", action="store_true", help="also compile and check a training step")
    p.add_argument("--cache", action="store_true",
                   help="allow Inductor's FX graph cache (a hit skips the pass, so it counts 0)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv or [])
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available()
                          else "cpu" if args.device == "auto" else args.device)
    gpu = device.type == "cuda"
    batch, size = args.batch or (4 if gpu else 1), args.size or (16 if gpu else 4)
    iters = args.iters or (50 if gpu else 5)
    dtype = DTYPES[args.dtype]
    torch.manual_seed(0)
    model = Decoder().to(device=device, dtype=dtype)
    x, skips = make_inputs(model, batch, size, device, dtype)

    # CPU is off by default (config.device_types); the demo turns it on for its own run.
    types = tuple(dict.fromkeys((*config.enabled_device_types(), device.type)))
    caches = contextlib.nullcontext() if args.cache else _no_compile_caches()
    with config.patch(device_types=types), caches:
        counters.reset()
        compiled = torch.compile(model, backend="convt3d")
        with torch.no_grad():
            eager_out = model(x, skips)
            start = time.perf_counter()
            compiled_out = compiled(x, skips)
            compile_s = time.perf_counter() - start
            eager_s = timed(lambda: model(x, skips), iters, device)
            compiled_s = timed(lambda: compiled(x, skips), iters, device)
        print(f"device {device} ({_device_name(device)}), {dtype}, input {tuple(x.shape)} "
              f"-> output {tuple(eager_out.shape)}")
        _report_pass()
        print(f"max |compiled - eager|  {_max_err(compiled_out, eager_out):.3g}"
              f"   (max |eager| {eager_out.abs().max().item():.3g})")
        print(f"eager     {eager_s * 1e3:9.3f} ms/call")
        print(f"compiled  {compiled_s * 1e3:9.3f} ms/call   ({eager_s / compiled_s:.2f}x; "
              f"first call with compilation {compile_s:.1f} s)")
        if not gpu:
            print("(CPU runs the convt3d reference kernels, which are exact but not fast; "
                  "the fast kernels are CUDA)")
        if args.train:
            _train_step(model, compiled, x, skips)
    return 0


def _train_step(model, compiled, x, skips) -> None:
    counters.reset()
    grads = []
    for fn in (model, compiled):
        model.zero_grad(set_to_none=True)
        fn(x, skips).square().mean().backward()
        grads.append([p.grad.clone() for p in model.parameters()])
    print("training step:")
    _report_pass()
    err = max(_max_err(a, b) for a, b in zip(*grads))
    print(f"max |compiled - eager| over all parameter gradients  {err:.3g}")


def _report_pass() -> None:
    by_op = ", ".join(f"{op}: {n}" for op, n in sorted(counters.rewritten.items())) or "none"
    print(f"convt3d pass rewrote {counters.total_rewritten()} node(s) ({by_op}); "
          f"left {sum(counters.skipped.values())} to Inductor")
    for reason, n in counters.skipped.items():
        print(f"  left {n}: {reason}")


def _max_err(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a.double() - b.double()).abs().max().item()


def _device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"{torch.get_num_threads()} threads"


@contextlib.contextmanager
def _no_compile_caches():
    # A cache hit skips the graph passes, and with them the counts the demo reports.
    with torch._inductor.config.patch(fx_graph_cache=False), \
            torch._functorch.config.patch(enable_autograd_cache=False):
        yield
