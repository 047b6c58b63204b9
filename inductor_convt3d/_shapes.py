"""Shape arithmetic and argument normalisation, in Python so that it works on SymInts
(fake tensors, dynamic shapes). Mirrors csrc/params.cpp."""
from __future__ import annotations

from collections.abc import Sequence

import torch
from torch._prims_common import suggest_memory_format


def triple(value, name: str) -> list:
    """int or 1-/3-sequence -> list of 3, as F.conv_transpose3d accepts."""
    if type(value) is int:  # the common case first: 0.08 us instead of 0.18 per argument
        return [value, value, value]
    if isinstance(value, (int, torch.SymInt)):
        return [value] * 3
    value = list(value)
    if len(value) == 1:
        return value * 3
    if len(value) != 3:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of 3 values to match the "
            f"convolution dimensions, but got {name}={value}"
        )
    return value


def _three(value):
    """value as 3 plain ints (an int, or a 3-tuple or 3-list of them, as modules hold them), or
    None."""
    kind = type(value)
    if kind is int:
        return (value, value, value)
    if (kind is tuple or kind is list) and len(value) == 3:
        a, b, c = value
        if type(a) is int and type(b) is int and type(c) is int:
            return value
    return None


def flat_geometry(stride, padding, output_padding, dilation, groups) -> list | None:
    """The drop-in's arguments as convt3d::_conv_transpose3d_flat's one list: stride, padding,
    output_padding and dilation (3 each), then groups; None where a value is not a plain int (a
    SymInt under tracing, a NumPy integer), which the public op's SymInt lists take instead.
    Host time per call matters here (design doc v56): ints and 3-tuples take the short paths."""
    if (type(stride) is int and type(padding) is int and type(output_padding) is int
            and type(dilation) is int and type(groups) is int):
        return [stride, stride, stride, padding, padding, padding, output_padding,
                output_padding, output_padding, dilation, dilation, dilation, groups]
    s, p, o, d = _three(stride), _three(padding), _three(output_padding), _three(dilation)
    if s is not None and p is not None and o is not None and d is not None and type(groups) is int:
        return [*s, *p, *o, *d, groups]
    # 1-sequences, other iterables, and triple's errors for a wrong length
    flat = [*triple(stride, "stride"), *triple(padding, "padding"),
            *triple(output_padding, "output_padding"), *triple(dilation, "dilation"), groups]
    return flat if all(type(v) is int for v in flat) else None


def output_spatial(in_sizes: Sequence, kernel: Sequence, stride, padding, output_padding, dilation) -> list:
    return [
        (i - 1) * s - 2 * p + d * (k - 1) + op + 1
        for i, k, s, p, op, d in zip(in_sizes, kernel, stride, padding, output_padding, dilation)
    ]


def input_spatial(out_sizes: Sequence, kernel: Sequence, stride, padding, output_padding, dilation) -> list:
    return [
        (o + 2 * p - d * (k - 1) - op - 1) // s + 1
        for o, k, s, p, op, d in zip(out_sizes, kernel, stride, padding, output_padding, dilation)
    ]


def result_memory_format(a: torch.Tensor, b: torch.Tensor) -> torch.memory_format:
    """channels_last_3d when either operand suggests it, except fp64: PyTorch's own rule for
    F.conv_transpose3d on CPU and with cuDNN (csrc/params.cpp: result_memory_format)."""
    if a.dtype == torch.float64:
        return torch.contiguous_format
    cl = torch.channels_last_3d
    if suggest_memory_format(a) == cl or suggest_memory_format(b) == cl:
        return cl
    return torch.contiguous_format
