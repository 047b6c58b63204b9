"""`python -m inductor_convt3d bench`: the forward benchmark against cuDNN (docs/performance.md)."""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from . import report
from .ceilings import measure_ceilings
from .precision import LAYOUTS, PRECISIONS
from .runner import run_case
from .suite import CASE_IDS, get_cases
from .timing import Policy, is_cuda, l2_bytes

DEFAULTS = dict(warmup=5, iters=50, budget=0.5, warmup_ms=50.0)
QUICK = dict(warmup=2, iters=10, budget=0.3, warmup_ms=50.0)


def _list(kind: str, choices, cast=str):
    def parse(text: str):
        items = [cast(x.strip()) for x in text.split(",") if x.strip()]
        bad = [x for x in items if x not in choices]
        if bad or not items:
            raise argparse.ArgumentTypeError(
                f"{kind}: expected a comma-separated subset of {','.join(map(str, choices))}, "
                f"got {text!r}")
        return list(dict.fromkeys(items))
    return parse


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m inductor_convt3d bench",
        description="Times inductor_convt3d.conv_transpose3d (the drop-in over "
                    "torch.ops.convt3d.conv_transpose3d) against cuDNN (F.conv_transpose3d, "
                    "cudnn.benchmark=True) on the 12 layers of the suite, in each precision and "
                    "layout; writes bench.json, bench.md and bench.png to --out.")
    p.add_argument("--cases", type=_list("cases", CASE_IDS, int), default=list(CASE_IDS),
                   help="comma-separated case numbers (default: all 12)")
    p.add_argument("--dtypes", type=_list("dtypes", list(PRECISIONS)), default=list(PRECISIONS),
                   help="comma-separated subset of tf32,bf16,fp16,fp32 (default: all); tf32 is fp32 "
                        "with TF32 allowed, fp32 is fp32 with TF32 disallowed")
    p.add_argument("--layouts", type=_list("layouts", list(LAYOUTS)), default=list(LAYOUTS),
                   help="comma-separated subset of ncdhw,ndhwc (default: both); ndhwc is "
                        "channels_last_3d input and weight")
    p.add_argument("--out", type=Path, default=Path("bench_out"),
                   help="output folder (default: bench_out/)")
    p.add_argument("--device", choices=["cpu", "cuda"], default=None,
                   help="default: cuda when available, else cpu")
    p.add_argument("--warmup", type=int, default=None,
                   help=f"warm-up calls after the first call, at most (default {DEFAULTS['warmup']})")
    p.add_argument("--warmup-ms", type=float, default=None,
                   help="CUDA: warm up for at least this many milliseconds of device time, so "
                        "that an idle GPU's clocks are back up before the timed calls; 0 turns "
                        f"it off (default {DEFAULTS['warmup_ms']:g})")
    p.add_argument("--iters", type=int, default=None,
                   help=f"timed calls, at most (default {DEFAULTS['iters']})")
    p.add_argument("--budget", type=float, default=None,
                   help="seconds of timed calls per measurement; fewer calls when one call is slow "
                        f"(at least 3) (default {DEFAULTS['budget']})")
    p.add_argument("--slow", type=float, default=2.0,
                   help="a call slower than this many seconds is timed twice (once when two calls "
                        "would take over 10 s), without warm-up, and marked slow (default 2)")
    p.add_argument("--quick", action="store_true",
                   help="fewer calls (warm-up 2, at most 10 timed, budget 0.3 s); real sizes")
    p.add_argument("--no-cudnn-default", action="store_true",
                   help="skip the extra cuDNN measurement with cudnn.benchmark=False")
    p.add_argument("--deadline", type=float, default=None,
                   help="seconds after which no new configuration starts; the rest is marked "
                        "skipped and every output is still written")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-png", action="store_true", help="do not draw bench.png")
    # Tests only: divide every input spatial size by this factor (documented in
    # docs/performance.md). Results are marked as shrunk.
    p.add_argument("--shrink", type=int, default=1, help=argparse.SUPPRESS)
    return p


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=5)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _git_tree(root: Path | None = None) -> str | None:
    """The git tree id of the checkout's files as they are (tracked and untracked, not ignored),
    written through a throwaway index so that the checkout's own is untouched. It equals
    `git rev-parse <commit>^{tree}` of the commit whose files ran, also where the checkout's
    .git is older than its files (the GPU machine's copy, whose HEAD is the session's first
    commit: git_commit names that one)."""
    root = Path(__file__).parent if root is None else root
    try:
        with tempfile.TemporaryDirectory() as d:
            env = {**os.environ, "GIT_INDEX_FILE": os.path.join(d, "index")}
            out = None
            for cmd in (["git", "add", "-A", "."], ["git", "write-tree"]):
                out = subprocess.run(cmd, cwd=_git_top(root), env=env, capture_output=True,
                                     text=True, timeout=60)
                if out.returncode != 0:
                    return None
            return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def _git_top(path: Path) -> str:
    """The top of the git checkout holding path (ValueError outside one)."""
    out = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=path, capture_output=True,
                         text=True, timeout=5)
    if out.returncode != 0 or not out.stdout.strip():
        raise ValueError("not in a git checkout")
    return out.stdout.strip()


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def metadata(device: torch.device, args, policy: Policy, argv: list[str]) -> dict:
    cuda = is_cuda(device)
    if cuda:
        props = torch.cuda.get_device_properties(device)
        name = props.name
        extra = dict(sm=f"{props.major}.{props.minor}", sm_count=props.multi_processor_count,
                     memory_bytes=props.total_memory)
    else:
        name = _cpu_name()
        extra = dict(threads=torch.get_num_threads())
    return dict(
        device=str(device), device_name=name, **extra,
        torch=torch.__version__, cuda=torch.version.cuda,
        cudnn=torch.backends.cudnn.version() if cuda else None,
        python=platform.python_version(),
        date_utc=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        git_commit=_git_commit(), git_tree=_git_tree(), argv=argv,
        baseline=("F.conv_transpose3d (cuDNN)" if cuda else "F.conv_transpose3d (ATen CPU)"),
        reference=("fp64 F.conv_transpose3d on the GPU (cuDNN, benchmark off)" if cuda
                   else "fp64 F.conv_transpose3d on the CPU (ATen)"),
        l2_bytes=l2_bytes(device), shrink=args.shrink,
        policy=dataclasses.asdict(policy),
        cudnn_default_measured=cuda and not args.no_cudnn_default,
    )


POISON_ENV = "CONVT3D_POISON_OUTPUTS"  # test-only NaN fill of every result (docs/ops.md)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    # The poison fill would add a kernel to every call of our op: never time it.
    poison = os.environ.pop(POISON_ENV, None)
    if poison is not None:
        print(f"bench: {POISON_ENV} was set; unset for this run", flush=True)
    try:
        return _run(args, argv, poison is not None)
    finally:
        if poison is not None:
            os.environ[POISON_ENV] = poison


def _run(args, argv: list[str], poison_unset: bool) -> int:
    from .. import _ext
    if not _ext.available():
        print(f"bench: the convt3d extension is not available. {_ext.BUILD_HINT}", file=sys.stderr)
        return 1
    if args.device == "cuda" and not torch.cuda.is_available():
        print("bench: --device cuda, but CUDA is not available", file=sys.stderr)
        return 2
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if is_cuda(device):
        device = torch.device("cuda", torch.cuda.current_device())
    base = QUICK if args.quick else DEFAULTS
    policy = Policy(warmup=base["warmup"] if args.warmup is None else args.warmup,
                    iters=base["iters"] if args.iters is None else args.iters,
                    budget_s=base["budget"] if args.budget is None else args.budget,
                    slow_s=args.slow,
                    warmup_s=(base["warmup_ms"] if args.warmup_ms is None else args.warmup_ms) / 1e3)
    if policy.iters < 1 or policy.warmup < 0 or policy.warmup_s < 0 or args.shrink < 1:
        print("bench: --iters must be >= 1, --warmup >= 0, --warmup-ms >= 0, --shrink >= 1",
              file=sys.stderr)
        return 2
    with_default = is_cuda(device) and not args.no_cudnn_default
    t0 = time.monotonic()
    deadline = None if args.deadline is None else t0 + args.deadline

    def log(msg: str) -> None:
        print(msg, flush=True)

    meta = metadata(device, args, policy, argv)
    meta["poison_env_unset"] = poison_unset
    for line in report.meta_lines(meta, None):
        log(line)
    log("measuring ceilings ...")
    ceilings = measure_ceilings(device, args.dtypes)
    log(report.meta_lines(meta, ceilings)[-1])

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    doc = dict(meta=meta, ceilings=ceilings, results=[], summary={}, case_errors=[])
    l2 = l2_bytes(device)
    for case in get_cases(args.cases):
        case = case.shrunk(args.shrink)
        log(f"case {case.id}: {case.describe()}")
        try:
            doc["results"] += run_case(case, args.dtypes, args.layouts, device, policy, ceilings,
                                       l2, with_default, args.seed, deadline, log)
        except Exception as e:  # e.g. out of memory making the inputs: go on with the next case
            msg = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            log(f"case {case.id} failed: {msg}")
            doc["case_errors"].append(dict(case=case.id, error=msg))
            if is_cuda(device):
                torch.cuda.empty_cache()
        doc["summary"] = report.summarise(doc["results"])
        report.write_json(out / "bench.json", doc)  # after every case: partial runs leave results
    meta["wall_s"] = time.monotonic() - t0
    report.write_json(out / "bench.json", doc)
    report.write_markdown(out / "bench.md", doc, with_default)
    png_msg = "PNG not drawn (--no-png)" if args.no_png else report.write_png(out / "bench.png", doc)

    log("")
    log("\n".join(report.meta_lines(meta, ceilings)))
    log(report.format_table(doc["results"], with_default))
    for line in report.summary_lines(doc["summary"]):
        log(line)
    for err in doc["case_errors"]:
        log(f"case {err['case']} failed: {err['error']}")
    log(f"wrote {out / 'bench.json'}, {out / 'bench.md'}; {png_msg}")
    failed = doc["case_errors"] or any(k.endswith("_error") for r in doc["results"] for k in r)
    return 1 if failed else 0
