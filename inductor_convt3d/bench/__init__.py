"""The forward benchmark: `python -m inductor_convt3d bench` (see docs/performance.md).

suite.py      the 12 layers          roofline.py  useful FLOPs, bytes moved once, the floor
precision.py  precisions, layouts    ceilings.py  copy bandwidth and matmul rates, measured
timing.py     medians, rotation      runner.py    one case: ours, cuDNN, errors, memory
report.py     table, JSON, PNG       cli.py       the command line
"""
from .cli import main

__all__ = ["main"]
