"""convert(): model-wide replacement of nn.ConvTranspose3d by the convt3d drop-in, in eager.

The swap changes each module's class in place (to inductor_convt3d.nn.ConvTranspose3d), so the
module object, its Parameters, buffers, hooks, state_dict keys and every outside reference to it
(an optimizer, another module sharing it) stay exactly what they were. unconvert() swaps back.
"""
from __future__ import annotations

from collections.abc import Callable

from torch import nn

from .log import log
from .nn import ConvTranspose3d, is_convertible

FilterFn = Callable[[nn.Module, str], bool]


def convert(model: nn.Module, filter_fn: FilterFn | None = None) -> nn.Module:
    """Make every nn.ConvTranspose3d in `model` for which `filter_fn(module, fqn)` holds (all of
    them by default) compute with the convt3d op. Returns `model`, changed in place."""
    chosen = [(fqn, m) for fqn, m in _candidates(model, nn.ConvTranspose3d)
              if filter_fn is None or filter_fn(m, fqn)]
    for fqn, m in chosen:  # check them all first, so that a refusal leaves the model untouched
        if m.padding_mode != "zeros":
            raise ValueError(
                f"inductor_convt3d.convert: {fqn or 'the model'} has padding_mode="
                f"{m.padding_mode!r}; ConvTranspose3d supports only 'zeros' (nn.ConvTranspose3d "
                f"fails the same way in forward). Leave it out with filter_fn.")
    for fqn, m in chosen:
        if is_convertible(m):
            m.__class__ = ConvTranspose3d
        else:
            log.debug("convert: %s is a %s, a subclass of nn.ConvTranspose3d with its own code; "
                      "left as it is", fqn, type(m).__qualname__)
    return model


def unconvert(model: nn.Module, filter_fn: FilterFn | None = None) -> nn.Module:
    """Undo convert(): the modules it swapped (those `filter_fn` picks) become plain
    nn.ConvTranspose3d again. Returns `model`, changed in place."""
    for fqn, m in _candidates(model, ConvTranspose3d):
        if type(m) is ConvTranspose3d and (filter_fn is None or filter_fn(m, fqn)):
            m.__class__ = nn.ConvTranspose3d
    return model


def _candidates(model: nn.Module, cls: type):
    # named_modules() yields a shared module once, under its first name.
    return [(fqn, m) for fqn, m in model.named_modules() if isinstance(m, cls)]
