"""ConvTranspose3d: nn.ConvTranspose3d computed by the convt3d op. A drop-in subclass: same
constructor, parameters, state_dict keys and forward(input, output_size=None)."""
from __future__ import annotations

import torch
from torch import Tensor, nn

from .functional import conv_transpose3d


class ConvTranspose3d(nn.ConvTranspose3d):
    def forward(self, input: Tensor, output_size: list[int] | None = None) -> Tensor:
        if self.padding_mode != "zeros":
            raise ValueError("Only `zeros` padding mode is supported for ConvTranspose3d")
        # (without output_size, nn.ConvTranspose3d's _output_padding returns the attribute; the
        # shortcut saves its call and four list copies of host time per forward)
        output_padding = self.output_padding if output_size is None else self._output_padding(
            input, output_size, list(self.stride), list(self.padding), list(self.kernel_size), 3,
            list(self.dilation))
        return conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                output_padding, self.groups, self.dilation)


def is_convertible(module: torch.nn.Module) -> bool:
    """Exactly nn.ConvTranspose3d: a user's subclass may override forward, and swapping its class
    would drop that."""
    return type(module) is nn.ConvTranspose3d
