"""The Inductor CustomGraphPass that runs the rewrite, counts and logs what it did.

One instance per Inductor hook (see slots.py): the joint-graph hook, which comes before
freezing's mkldnn rewrites of transposed convolutions on CPU and sees forward and backward
together, and the post-grad hook, which catches graphs that skip the joint passes. On the
inference path both hooks see the same graph; the rewrite is idempotent, so that is harmless.
"""
from __future__ import annotations

import logging
import os

import torch
from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files

from .. import config, counters
from ..log import log
from .rewrite import rewrite

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What the rewritten graph depends on: the pass, and the fake kernels that give the new nodes
# their shapes and strides. The settings go in through fingerprint().
_SOURCES = tuple(os.path.join(_PACKAGE, f) for f in (
    "compile/graph_pass.py", "compile/rewrite.py", "config.py", "ops.py", "_shapes.py"))


class Convt3dGraphPass(CustomGraphPass):
    def __init__(self, stage: str) -> None:
        self.stage = stage

    def __call__(self, graph: torch.fx.Graph) -> None:
        result = rewrite(graph)
        counters.graphs["seen"] += 1
        counters.graphs["changed"] += bool(result.rewritten)
        counters.rewritten.update(result.rewritten)
        counters.inserted.update(result.inserted)
        for name, target, reason in result.skipped:
            counters.skipped[reason] += 1
            log.debug("convt3d [%s] left %s (%s) to Inductor: %s", self.stage, name, target, reason)
        log.log(logging.INFO if result.rewritten else logging.DEBUG,
                "convt3d [%s] graph %s: rewrote %d node(s) %s, left %d",
                self.stage, torch._guards.CompileContext.current_compile_id() or "-",
                sum(result.rewritten.values()), dict(result.rewritten), len(result.skipped))

    def uuid(self) -> bytes:
        # A new key whenever the pass's code or settings change, so Inductor's FX graph cache
        # neither serves a graph built by another version nor has to be bypassed.
        return get_hash_for_files(_SOURCES, config.fingerprint())

    def __repr__(self) -> str:
        return f"Convt3dGraphPass({self.stage!r})"


JOINT = Convt3dGraphPass("joint")
POST_GRAD = Convt3dGraphPass("post_grad")
