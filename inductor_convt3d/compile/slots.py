"""Putting our passes into Inductor's custom-pass config slots next to whatever is there.

A slot may already hold a user's pass (or a list of them): we add ours after it and take only
ours away again, never overwriting. Torch versions whose slots take a list get a tuple; older
ones, which call the slot's single value, get a Chain pass that runs them in order.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch._inductor import custom_graph_pass
from torch._inductor.custom_graph_pass import CustomGraphPass

from .graph_pass import JOINT, POST_GRAD

# slot -> our pass for it. joint: before freezing and partitioning; post_grad: the safety net.
PASSES = {"joint_custom_post_pass": JOINT, "post_grad_custom_pre_pass": POST_GRAD}

_LISTS_SUPPORTED = hasattr(custom_graph_pass, "get_custom_graph_passes")


class Chain(CustomGraphPass):
    """Several passes as one, for torch versions whose slots hold a single pass."""

    def __init__(self, passes: tuple) -> None:
        self.passes = tuple(passes)

    def __call__(self, graph: torch.fx.Graph) -> None:
        for p in self.passes:
            p(graph)

    def uuid(self) -> Any:
        # A plain function has no uuid: returning None makes Inductor bypass its cache, as it
        # would for that function alone.
        uuids = tuple(p.uuid() if isinstance(p, CustomGraphPass) else None for p in self.passes)
        return None if any(u is None for u in uuids) else uuids

    def __repr__(self) -> str:
        return f"Chain({list(self.passes)!r})"


def _as_tuple(value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, Chain):
        return value.passes
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,)


def _from_tuple(passes: tuple, like, lists_supported: bool):
    if not passes:
        return None
    if len(passes) == 1:
        return passes[0]
    if not lists_supported:
        return Chain(passes)
    return list(passes) if isinstance(like, list) else passes


def with_pass(value, our_pass, lists_supported: bool = _LISTS_SUPPORTED):
    """The slot value with our pass added after the user's; unchanged if it is there already."""
    passes = _as_tuple(value)
    if our_pass in passes:
        return value
    return _from_tuple(passes + (our_pass,), value, lists_supported)


def without_pass(value, our_pass, lists_supported: bool = _LISTS_SUPPORTED):
    """The slot value with our pass taken out and everything else kept."""
    passes = _as_tuple(value)
    if our_pass not in passes:
        return value
    return _from_tuple(tuple(p for p in passes if p is not our_pass), value, lists_supported)


def contains(value, our_pass) -> bool:
    return our_pass in _as_tuple(value)


def patches(base: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Config patches that add our passes to each slot, on top of `base` (patches the caller
    already has, e.g. torch.compile options) or else the global Inductor config."""
    from torch._inductor import config as inductor_config

    base = base or {}
    return {slot: with_pass(base.get(slot, getattr(inductor_config, slot)), p)
            for slot, p in PASSES.items()}
