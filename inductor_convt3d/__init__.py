"""inductor_convt3d: fast 3-D transposed convolution for PyTorch.

The convt3d custom ops (torch.ops.convt3d.*), their kernels, and the ways to reach them.
Importing works without the compiled extension; calling an op then says how to build it.
"""
from . import _ext, autocast, ops  # noqa: F401  (registers fake, autograd and autocast rules)
from .functional import conv_transpose3d

__all__ = ["conv_transpose3d", "ops"]
__version__ = "0.1.0"
