"""Loads the compiled library, which defines the convt3d ops. The package imports without it;
calling an op then raises a message that says how to build it."""
from __future__ import annotations

import torch  # noqa: F401  (loads libc10/libtorch, which _C links against)

_LOAD_ERROR: BaseException | None = None
try:
    from . import _C  # noqa: F401  (loading it runs the C++ op registrations)
except ImportError as e:  # pragma: no cover - exercised only on broken installs
    _LOAD_ERROR = e

BUILD_HINT = (
    "Build it from the repository root with `pip install --no-build-isolation -e .` "
    "(CUDA kernels are built when nvcc and a CUDA build of torch are present; "
    "set CONVT3D_CUDA=0 to build the CPU kernels only)."
)


def available() -> bool:
    return _LOAD_ERROR is None


def require() -> None:
    if _LOAD_ERROR is not None:
        raise RuntimeError(
            f"inductor_convt3d: the compiled extension inductor_convt3d._C is missing or failed "
            f"to load ({_LOAD_ERROR}). {BUILD_HINT}"
        ) from _LOAD_ERROR
