"""Settings of the graph pass, in one place.

Set them as module attributes (`inductor_convt3d.config.device_types = ("cuda", "cpu")`) or for a
scope with `inductor_convt3d.config.patch(device_types=("cuda", "cpu"))`. The pass's uuid() hashes
fingerprint(), so changing a setting gives a new Inductor FX-graph-cache key instead of a stale hit.
"""
from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

# Device types whose transposed convolutions the pass rewrites. CUDA only by default: that is
# where the fast kernels are; on CPU the reference kernels serve tests and CPU users who opt in.
device_types: tuple[str, ...] = ("cuda",)

# Rewrite aten.convolution (forward) and aten.convolution_backward (training) nodes. Either can be
# switched off alone, e.g. to keep cuDNN for the backward.
rewrite_forward: bool = True
rewrite_backward: bool = True

_KNOBS = ("device_types", "rewrite_forward", "rewrite_backward")


def fingerprint() -> str:
    """Every setting that changes what the pass does, as a stable string."""
    module = sys.modules[__name__]
    return repr(tuple((name, _normalize(name, getattr(module, name))) for name in _KNOBS))


def _normalize(name: str, value):
    if name == "device_types":
        if isinstance(value, str):  # a lone "cuda" would otherwise read as ("c", "u", ...)
            return (value,)
        return tuple(value)
    return value


def enabled_device_types() -> tuple[str, ...]:
    return _normalize("device_types", device_types)


@contextlib.contextmanager
def patch(**changes) -> Iterator[None]:
    """Set some settings for the duration of a `with` block, then restore them."""
    module = sys.modules[__name__]
    unknown = set(changes) - set(_KNOBS)
    if unknown:
        raise AttributeError(f"inductor_convt3d.config has no setting(s) {sorted(unknown)}; "
                             f"known: {list(_KNOBS)}")
    saved = {name: getattr(module, name) for name in changes}
    for name, value in changes.items():
        setattr(module, name, _normalize(name, value))
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)
