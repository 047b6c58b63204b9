"""Validation users can run on their own machine: `python -m inductor_convt3d check`.

`sample_inputs` yields (op, args) for every convt3d op over a spread of geometries; `opcheck_all`
runs torch.library.opcheck with all its test utilities over them. The test suite uses the same
generator, so what users run is what CI runs.
"""
from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Iterator

import torch

from . import _ext

OPCHECK_UTILS = (
    "test_schema",
    "test_autograd_registration",
    "test_faketensor",
    "test_aot_dispatch_static",
    "test_aot_dispatch_dynamic",
)


@dataclasses.dataclass(frozen=True)
class Geometry:
    """One ConvTranspose3d layer. Tuples are per axis (D, H, W)."""
    N: int
    Cin: int
    Cout: int
    size: tuple
    kernel: tuple
    stride: tuple = (1, 1, 1)
    padding: tuple = (0, 0, 0)
    output_padding: tuple = (0, 0, 0)
    dilation: tuple = (1, 1, 1)
    groups: int = 1
    bias: bool = True

    def args(self):
        return (list(self.stride), list(self.padding), list(self.output_padding),
                list(self.dilation), self.groups)

    def make(self, device, dtype, channels_last=False, requires_grad=False, generator=None):
        """Fresh random (input, weight, bias) for this geometry."""
        def rand(*shape):
            t = torch.randn(*shape, generator=generator, dtype=torch.float64).to(device=device, dtype=dtype)
            return t
        x = rand(self.N, self.Cin, *self.size)
        w = rand(self.Cin, self.Cout // self.groups, *self.kernel)
        b = rand(self.Cout) if self.bias else None
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last_3d)
        return tuple(t.requires_grad_(requires_grad) if t is not None else None for t in (x, w, b))


# Small layers that together cover every argument: per-axis kernel/stride/padding/
# output_padding/dilation, groups, bias, empty stride phases, batch 0.
GEOMETRIES = (
    Geometry(2, 4, 6, (3, 4, 5), (3, 2, 3), (2, 1, 3), (1, 0, 1), (1, 0, 2), (1, 2, 1), 2),
    Geometry(1, 3, 2, (4, 4, 4), (2, 2, 2), (2, 2, 2), bias=False),
    Geometry(2, 6, 3, (3, 5, 4), (3, 3, 1), (1, 3, 2), (2, 1, 0), (0, 2, 1), (2, 1, 3), 3),
    Geometry(1, 4, 4, (3, 3, 3), (3, 3, 3), (2, 2, 2), (0, 0, 0), (0, 0, 0), (2, 2, 2), 4),
    Geometry(0, 2, 2, (2, 3, 2), (2, 1, 2), (1, 2, 1)),
)


def sample_inputs(device="cpu", dtype=torch.float64, requires_grad=True) -> Iterator[tuple]:
    """(op, args) pairs for all four ops, contiguous and channels_last_3d."""
    ops = torch.ops.convt3d
    for g in GEOMETRIES:
        for channels_last in (False, True):
            x, w, b = g.make(device, dtype, channels_last, requires_grad)
            stride, padding, output_padding, dilation, groups = g.args()
            yield ops.conv_transpose3d.default, (x, w, b, stride, padding, output_padding, dilation, groups)
            with torch.no_grad():
                y = ops.conv_transpose3d.default(x, w, b, *g.args())
            gy = torch.randn_like(y).requires_grad_(requires_grad)
            yield ops.conv_transpose3d_grad_input.default, (gy, w, stride, padding, output_padding, dilation, groups)
            yield ops.conv_transpose3d_grad_weight.default, (gy, x, list(g.kernel), stride, padding,
                                                             output_padding, dilation, groups)
            yield ops.conv_transpose3d_grad_bias.default, (gy,)


def opcheck_all(device="cpu", dtype=torch.float64, verbose=False) -> int:
    """Runs opcheck over sample_inputs; returns the number of (op, input) pairs checked."""
    _ext.require()
    count = 0
    for op, args in sample_inputs(device, dtype):
        result = torch.library.opcheck(op, args, test_utils=OPCHECK_UTILS, raise_exception=True)
        count += 1
        if verbose:
            print(f"{op}: {result}")
    return count


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m inductor_convt3d check",
                                     description="Validate the convt3d ops with torch.library.opcheck.")
    parser.add_argument("--device", action="append", help="cpu and/or cuda (default: all available)")
    parser.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    devices = args.device or (["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
    dtype = getattr(torch, args.dtype)
    for device in devices:
        n = opcheck_all(device, dtype, args.verbose)
        print(f"opcheck passed on {device} ({args.dtype}): {n} op/input pairs x {len(OPCHECK_UTILS)} checks")
    return 0
