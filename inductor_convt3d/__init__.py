"""inductor_convt3d: fast 3-D transposed convolution for PyTorch.

The convt3d custom ops (torch.ops.convt3d.*), their kernels, and the ways to reach them:
torch.compile(model, backend="convt3d"), enable()/disable() for the default backend, and
convert() for eager. Importing works without the compiled extension; calling an op then says
how to build it.
"""
import importlib

from . import _ext, autocast, ops  # noqa: F401  (registers fake, autograd and autocast rules)
from . import config, counters  # noqa: F401
from .convert import convert, unconvert
from .functional import conv_transpose3d

# Loaded on first use: they import torch._inductor, which costs about a second.
_LAZY = {"enable": ".compile.enable", "disable": ".compile.enable", "is_enabled": ".compile.enable"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["config", "conv_transpose3d", "convert", "counters", "disable", "enable",
           "is_enabled", "ops", "unconvert"]
__version__ = "0.1.0"
