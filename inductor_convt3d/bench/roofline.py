"""Useful FLOPs, bytes moved once, and the roofline floor of one layer.

FLOPs count only the multiply-adds that touch real data: a (input position, tap) pair along an
axis contributes when its output position o = i*stride - padding + t*dilation lands inside the
output, 0 <= o < out. Taps cropped away by padding are not counted, and neither are the inserted
zeros of the stride (a gather formulation never multiplies them). Bias adds are not counted.
"""
from __future__ import annotations

import math

from .suite import Case


def axis_pairs(size: int, kernel: int, stride: int, padding: int, dilation: int, out: int) -> int:
    """Number of (input index, tap) pairs along one axis whose output index is inside [0, out)."""
    n = 0
    for t in range(kernel):
        off = t * dilation - padding                 # o = i*stride + off
        lo = -(off // stride) if off < 0 else 0      # smallest i >= 0 with o >= 0
        hi = min(size - 1, (out - 1 - off) // stride)  # largest i < size with o <= out - 1
        n += max(0, hi - lo + 1)
    return n


def useful_macs(case: Case) -> int:
    pairs = math.prod(axis_pairs(i, k, s, p, d, o) for i, k, s, p, d, o in zip(
        case.size, case.kernel, case.stride, case.padding, case.dilation, case.out_size))
    return case.N * case.Cin * (case.Cout // case.groups) * pairs


def dense_macs(case: Case) -> int:
    """MACs if no tap were cropped: N * Cin * Cout/groups * D*H*W * kD*kH*kW."""
    return (case.N * case.Cin * (case.Cout // case.groups) * math.prod(case.size)
            * math.prod(case.kernel))


def flops(case: Case) -> int:
    return 2 * useful_macs(case)


def bytes_moved(case: Case, elem_size: int) -> int:
    """Input + weight + bias (if any) + output, each read or written once."""
    n = math.prod(case.input_shape) + math.prod(case.weight_shape) + math.prod(case.output_shape)
    if case.bias:
        n += case.Cout
    return n * elem_size


def floor_seconds(flop: float, nbytes: float, flop_rate: float, copy_bw: float) -> float:
    """The roofline floor: the larger of compute time at the tensor-core rate and the time to
    move the bytes once at copy bandwidth."""
    return max(flop / flop_rate, nbytes / copy_bw)
