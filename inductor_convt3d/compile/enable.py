"""enable()/disable(): our passes in the global Inductor config, for the default backend.

Both act at once and return a handle; used in a `with` statement, the handle puts things back as
they were on leaving (`with inductor_convt3d.enable(): ...` scopes the pass to the block).
Only our passes are added or taken out: whatever else is in the slots stays.
"""
from __future__ import annotations

from torch._inductor import config as inductor_config

from . import slots


def is_enabled() -> bool:
    return all(slots.contains(getattr(inductor_config, slot), p)
               for slot, p in slots.PASSES.items())


def _set(on: bool) -> None:
    for slot, p in slots.PASSES.items():
        value = getattr(inductor_config, slot)
        setattr(inductor_config, slot,
                slots.with_pass(value, p) if on else slots.without_pass(value, p))


class _Restore:
    """Returned by enable()/disable(): as a context manager, restores the previous state."""

    def __init__(self, was_enabled: bool) -> None:
        self.was_enabled = was_enabled

    def __enter__(self) -> _Restore:
        return self

    def __exit__(self, *exc) -> None:
        _set(self.was_enabled)


def enable() -> _Restore:
    """Switch the convt3d pass on for torch.compile's default (inductor) backend."""
    handle = _Restore(is_enabled())
    _set(True)
    return handle


def disable() -> _Restore:
    """Switch it off again (the convt3d backend adds it per compile regardless)."""
    handle = _Restore(is_enabled())
    _set(False)
    return handle
