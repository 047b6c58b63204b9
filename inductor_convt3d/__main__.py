"""Command line: `python -m inductor_convt3d {demo,bench,check}`.

demo   the main job: a small 3-D decoder in eager and under torch.compile(backend="convt3d")
bench  the forward benchmark against cuDNN (see docs/performance.md)
check  run torch.library.opcheck over the ops on this machine
"""
from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "demo": "inductor_convt3d.demo",
    "bench": "inductor_convt3d.bench",
    "check": "inductor_convt3d.testing",
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip())
        return 2
    module = importlib.import_module(COMMANDS[argv[0]])
    return int(module.main(argv[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main())
