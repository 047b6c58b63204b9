"""Autocast rule for the forward op: under torch.autocast it casts like aten convolution does,
to the autocast dtype in force at call time (fp16 or bf16), leaving fp64 and other devices'
tensors alone. torch.library.register_autocast fixes one dtype at registration, which would not
follow `torch.autocast(dtype=...)`, hence this small rule of our own."""
from __future__ import annotations

import torch

from . import _ext

_DEVICE_TYPES = ("cuda", "cpu")


def _cast(value, device_type: str, dtype: torch.dtype):
    if (isinstance(value, torch.Tensor) and value.is_floating_point()
            and value.dtype != torch.float64 and value.device.type == device_type):
        return value.to(dtype)
    return value


def _make_kernel(op, device_type: str, key):
    def run(*args):
        dtype = torch.get_autocast_dtype(device_type)
        with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(key)):
            return op(*(_cast(a, device_type, dtype) for a in args))
    return run


def _register() -> None:
    op = torch.ops.convt3d.conv_transpose3d.default
    lib = torch.library.Library("convt3d", "IMPL")
    for device_type in _DEVICE_TYPES:
        key_name = "Autocast" + torch._C._dispatch_key_for_device(device_type)
        key = getattr(torch._C.DispatchKey, key_name)
        run = _make_kernel(op, device_type, key)
        op.py_impl(key)(run)  # the Python dispatcher's path (tracing under torch.compile)
        lib.impl("conv_transpose3d", lambda _keyset, *args, _run=run: _run(*args), key_name,
                 with_keyset=True)
    _register.lib = lib  # keep the registrations alive


if _ext.available():
    _register()
