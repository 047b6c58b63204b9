"""The public functional API, with F.conv_transpose3d's signature and semantics."""
from __future__ import annotations

import torch
from torch import Tensor

from . import ops
from ._shapes import flat_geometry, triple


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """Drop-in for torch.nn.functional.conv_transpose3d, computed by the convt3d kernels.

    Accepts int or 3-tuple stride/padding/output_padding/dilation and batched (5-D) or
    unbatched (4-D) input.
    """
    if input.dim() not in (4, 5):
        raise RuntimeError(
            "Expected 4D (unbatched) or 5D (batched) input to conv_transpose3d, but got input of "
            f"size: {list(input.shape)}")
    unbatched = input.dim() == 4
    if unbatched:
        input = input.unsqueeze(0)
    # Eager calls take the flat entry (several microseconds less host time per call); traced
    # calls and __torch_function__ overrides see the public op itself.
    geometry = None
    if not torch.compiler.is_compiling() and not torch._C._has_torch_function((input, weight, bias)):
        geometry = flat_geometry(stride, padding, output_padding, dilation, groups)
    if geometry is not None:
        out = ops.conv_transpose3d_flat(input, weight, bias, geometry)
    else:
        out = ops.conv_transpose3d(input, weight, bias, triple(stride, "stride"),
                                   triple(padding, "padding"),
                                   triple(output_padding, "output_padding"),
                                   triple(dilation, "dilation"), groups)
    return out.squeeze(0) if unbatched else out
