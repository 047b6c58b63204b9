"""What the graph pass did, as plain Counters that tests and users can read.

    rewritten["aten.convolution"]           forward nodes replaced by convt3d::conv_transpose3d
    rewritten["aten.convolution_backward"]  backward nodes replaced by the convt3d grad ops
    inserted["convt3d.<op>"]                convt3d nodes the pass put into graphs
    skipped["<reason>"]                     transposed convolutions left to Inductor, by reason
    graphs["seen"], graphs["changed"]       graphs the pass ran on / rewrote something in

A graph is counted once per stage it passes (joint, post_grad); a node rewritten in the joint
graph is not counted again after, and an FX-graph-cache hit runs no pass and counts nothing.
"""
from __future__ import annotations

from collections import Counter

rewritten: Counter[str] = Counter()
inserted: Counter[str] = Counter()
skipped: Counter[str] = Counter()
graphs: Counter[str] = Counter()


def total_rewritten() -> int:
    return sum(rewritten.values())


def reset() -> None:
    for counter in (rewritten, inserted, skipped, graphs):
        counter.clear()
