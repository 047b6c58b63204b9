"""Typed wrappers of the convt3d ops, with their fake (shape) functions and autograd formulas.

Every backward formula calls other registered convt3d ops, so forward, backward and double
backward all trace into graphs of convt3d ops.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from . import _ext
from ._shapes import input_spatial, output_spatial, result_memory_format


def _call(op, *args) -> Tensor:
    """op(*args), skipping the autograd kernel when no argument needs a gradient.

    torch.library runs register_autograd's kernel in Python; with nothing to differentiate it
    only redispatches below autograd, after a C++ -> Python -> C++ round trip that costs about
    10 us of host time per call (more than a small layer's kernels). This takes the same branch
    here, on the same condition and under the same guard. Under torch.compile the plain call is
    traced instead. Every op's tensor arguments come first, within its first three (the rest
    are int lists, which the check would only walk)."""
    if not torch.compiler.is_compiling() and not (
            torch.is_grad_enabled() and torch._C._any_requires_grad(*args[:3])):
        with torch._C._AutoDispatchBelowAutograd():
            return op(*args)
    return op(*args)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Sequence[int],
                     padding: Sequence[int], output_padding: Sequence[int],
                     dilation: Sequence[int], groups: int) -> Tensor:
    _ext.require()
    return _call(torch.ops.convt3d.conv_transpose3d.default,
                 input, weight, bias, stride, padding, output_padding, dilation, groups)


def conv_transpose3d_flat(input: Tensor, weight: Tensor, bias: Tensor | None,
                          geometry: list[int]) -> Tensor:
    """conv_transpose3d with stride, padding, output_padding, dilation (3 each) and groups in
    one list (csrc/flat_call.cpp), the eager drop-in's entry: the same op and rules several
    microseconds sooner. It calls the dispatcher's boxed entry, which skips torch.ops'
    __torch_function__ check: callers route tensors and modes that have one to the public op."""
    _ext.require()
    return torch._C._dispatch_call_boxed(_FLAT, input, weight, bias, geometry)


def conv_transpose3d_grad_input(grad_output: Tensor, weight: Tensor, stride: Sequence[int],
                                padding: Sequence[int], output_padding: Sequence[int],
                                dilation: Sequence[int], groups: int) -> Tensor:
    _ext.require()
    return _call(torch.ops.convt3d.conv_transpose3d_grad_input.default,
                 grad_output, weight, stride, padding, output_padding, dilation, groups)


def conv_transpose3d_grad_weight(grad_output: Tensor, input: Tensor, kernel_size: Sequence[int],
                                 stride: Sequence[int], padding: Sequence[int],
                                 output_padding: Sequence[int], dilation: Sequence[int],
                                 groups: int) -> Tensor:
    _ext.require()
    return _call(torch.ops.convt3d.conv_transpose3d_grad_weight.default,
                 grad_output, input, kernel_size, stride, padding, output_padding, dilation, groups)


def conv_transpose3d_grad_bias(grad_output: Tensor) -> Tensor:
    _ext.require()
    return _call(torch.ops.convt3d.conv_transpose3d_grad_bias.default, grad_output)


# ---- fake tensor functions: exactly the sizes, strides and memory format of the kernels ----

def _empty(shape, like: Tensor, fmt: torch.memory_format) -> Tensor:
    return torch.empty(shape, dtype=like.dtype, device=like.device, memory_format=fmt)


def _fake_forward(input, weight, bias, stride, padding, output_padding, dilation, groups):
    torch._check(input.dim() == 5 and weight.dim() == 5,
                 lambda: "convt3d::conv_transpose3d expects 5D input and weight")
    torch._check(input.shape[1] == weight.shape[0], lambda: (
        f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
        f"{list(input.shape)} to have {weight.shape[0]} channels, but got {input.shape[1]} "
        f"channels instead"))
    out = output_spatial(input.shape[2:], weight.shape[2:], stride, padding, output_padding, dilation)
    shape = [input.shape[0], weight.shape[1] * groups, *out]
    return _empty(shape, input, result_memory_format(input, weight))


def _fake_grad_input(grad_output, weight, stride, padding, output_padding, dilation, groups):
    sp = input_spatial(grad_output.shape[2:], weight.shape[2:], stride, padding, output_padding, dilation)
    shape = [grad_output.shape[0], weight.shape[0], *sp]
    return _empty(shape, grad_output, result_memory_format(grad_output, weight))


def _fake_grad_weight(grad_output, input, kernel_size, stride, padding, output_padding, dilation, groups):
    shape = [input.shape[1], grad_output.shape[1] // groups, *kernel_size]
    return _empty(shape, input, result_memory_format(input, grad_output))


def _fake_grad_bias(grad_output):
    return grad_output.new_empty([grad_output.shape[1]])


# ---- autograd: each formula is built from the other ops ----

def _setup_forward(ctx, inputs, output):
    input, weight, bias, stride, padding, output_padding, dilation, groups = inputs
    ctx.save_for_backward(input, weight)
    ctx.geometry = (stride, padding, output_padding, dilation, groups)
    ctx.has_bias = bias is not None


def _backward_forward(ctx, grad):
    input, weight = ctx.saved_tensors
    g = ctx.geometry
    gi = conv_transpose3d_grad_input(grad, weight, *g) if ctx.needs_input_grad[0] else None
    gw = (conv_transpose3d_grad_weight(grad, input, list(weight.shape[2:]), *g)
          if ctx.needs_input_grad[1] else None)
    gb = conv_transpose3d_grad_bias(grad) if ctx.has_bias and ctx.needs_input_grad[2] else None
    return gi, gw, gb, None, None, None, None, None


def _setup_grad_input(ctx, inputs, output):
    grad_output, weight, stride, padding, output_padding, dilation, groups = inputs
    ctx.save_for_backward(grad_output, weight)
    ctx.geometry = (stride, padding, output_padding, dilation, groups)


def _backward_grad_input(ctx, ggx):
    # grad_input is a convolution of grad_output with weight: linear in each.
    grad_output, weight = ctx.saved_tensors
    g = ctx.geometry
    d_gy = conv_transpose3d(ggx, weight, None, *g) if ctx.needs_input_grad[0] else None
    d_w = (conv_transpose3d_grad_weight(grad_output, ggx, list(weight.shape[2:]), *g)
           if ctx.needs_input_grad[1] else None)
    return d_gy, d_w, None, None, None, None, None


def _setup_grad_weight(ctx, inputs, output):
    grad_output, input, kernel_size, stride, padding, output_padding, dilation, groups = inputs
    ctx.save_for_backward(grad_output, input)
    ctx.geometry = (stride, padding, output_padding, dilation, groups)


def _backward_grad_weight(ctx, ggw):
    grad_output, input = ctx.saved_tensors
    g = ctx.geometry
    d_gy = conv_transpose3d(input, ggw, None, *g) if ctx.needs_input_grad[0] else None
    d_x = conv_transpose3d_grad_input(grad_output, ggw, *g) if ctx.needs_input_grad[1] else None
    return d_gy, d_x, None, None, None, None, None, None


def _setup_grad_bias(ctx, inputs, output):
    ctx.shape = inputs[0].shape


def _backward_grad_bias(ctx, ggb):
    return ggb.view(1, -1, 1, 1, 1).expand(ctx.shape)


def _register() -> None:
    lib = torch.library
    lib.register_fake("convt3d::conv_transpose3d", _fake_forward)
    lib.register_fake("convt3d::conv_transpose3d_grad_input", _fake_grad_input)
    lib.register_fake("convt3d::conv_transpose3d_grad_weight", _fake_grad_weight)
    lib.register_fake("convt3d::conv_transpose3d_grad_bias", _fake_grad_bias)
    lib.register_autograd("convt3d::conv_transpose3d", _backward_forward, setup_context=_setup_forward)
    lib.register_autograd("convt3d::conv_transpose3d_grad_input", _backward_grad_input,
                          setup_context=_setup_grad_input)
    lib.register_autograd("convt3d::conv_transpose3d_grad_weight", _backward_grad_weight,
                          setup_context=_setup_grad_weight)
    lib.register_autograd("convt3d::conv_transpose3d_grad_bias", _backward_grad_bias,
                          setup_context=_setup_grad_bias)


if _ext.available():
    _register()
    # (the dispatcher handle, looked up once: the flat entry's callers count microseconds)
    _FLAT = torch.ops.convt3d._conv_transpose3d_flat.default._handle
