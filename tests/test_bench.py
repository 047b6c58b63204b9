"""Tests of the benchmark harness (inductor_convt3d.bench): FLOP and byte counts, the floor, the
suite table, timing plans, reports, and a small end-to-end run on the CPU."""
from __future__ import annotations

import dataclasses
import datetime
import itertools
import json
import math
import os
import shutil
import sys
import time

import pytest
import torch
import torch.nn.functional as F

from inductor_convt3d import _ext
from inductor_convt3d._shapes import output_spatial
from inductor_convt3d.bench import main, report, roofline, timing
from inductor_convt3d.bench.cli import parser
from inductor_convt3d.bench.precision import PRECISIONS, tf32_flags
from inductor_convt3d.bench.suite import CASES, Case, get_cases
from inductor_convt3d.bench.timing import MAX_SETS, Policy, measure, measure_steady, rotation_sets

needs_ext = pytest.mark.skipif(not _ext.available(), reason="convt3d extension not built")

# The issue's table, typed in again: N, Cin, Cout, input DxHxW, kernel, stride, padding,
# output_padding, groups, dilation, bias.
ISSUE_TABLE = {
    1: (16, 32, 16, (16, 32, 64), (3, 5, 7), 1, 0, 0, 1, 1, False),
    2: (8, 48, 48, (64, 64, 64), 3, 1, 0, 0, 1, 1, False),
    3: (16, 32, 64, (64, 64, 64), (3, 5, 5), 1, 0, 0, 1, 1, False),
    4: (8, 48, 24, (96, 96, 96), 3, 1, 0, 0, 1, 1, False),
    5: (8, 32, 32, (12, 24, 48), (3, 5, 7), 2, (1, 2, 3), 1, 4, 1, False),
    6: (4, 32, 32, (32, 64, 128), 3, 2, 1, 0, 1, 1, False),
    7: (4, 32, 32, (32, 64, 128), 3, 2, 1, 0, 4, 1, False),
    8: (16, 32, 64, (16, 32, 32), 3, 2, 1, 0, 1, 2, True),
    9: (2, 256, 128, (16, 16, 16), 2, 2, 0, 0, 1, 1, True),
    10: (2, 64, 32, (64, 64, 64), 2, 2, 0, 0, 1, 1, True),
    11: (16, 128, 64, (16, 16, 16), 4, 2, 1, 0, 1, 1, False),
    12: (4, 128, 64, (32, 32, 32), 3, 2, 1, 1, 1, 1, True),
}


def _t3(v):
    return (v, v, v) if isinstance(v, int) else tuple(v)


def _tiny(case: Case, shrink: int = 8) -> Case:
    """The case's geometry (kernel, stride, padding, output_padding, dilation, groups) on a small
    problem: spatial sizes divided, batch 1, channels cut to a few per group."""
    g = case.groups
    return dataclasses.replace(case.shrunk(shrink), N=1, Cin=2 * g, Cout=3 * g)


# ---------------------------------------------------------------- suite

def test_suite_is_the_issue_table():
    assert [c.id for c in CASES] == list(range(1, 13))
    for c in CASES:
        N, Cin, Cout, size, k, s, p, op, g, d, bias = ISSUE_TABLE[c.id]
        assert (c.N, c.Cin, c.Cout, c.size, c.groups, c.bias) == (N, Cin, Cout, size, g, bias)
        assert (c.kernel, c.stride, c.padding, c.output_padding, c.dilation) == tuple(
            map(_t3, (k, s, p, op, d)))
        assert c.weight_shape == (Cin, Cout // g, *_t3(k))


def test_suite_output_shapes_match_pytorch():
    for c in CASES:
        assert list(c.out_size) == output_spatial(c.size, c.kernel, c.stride, c.padding,
                                                  c.output_padding, c.dilation)
        x = torch.empty(c.input_shape, device="meta")
        w = torch.empty(c.weight_shape, device="meta")
        assert tuple(F.conv_transpose3d(x, w, **c.conv_args()).shape) == c.output_shape


def test_get_cases_and_shrink():
    assert [c.id for c in get_cases([5, 1])] == [5, 1]
    with pytest.raises(ValueError, match="13"):
        get_cases([13])
    c = get_cases([5])[0].shrunk(4)
    assert c.size == (3, 6, 12) and c.kernel == (3, 5, 7) and c.Cin == 32
    assert get_cases([9])[0].shrunk(1) == get_cases([9])[0]
    assert min(CASES[0].shrunk(1000).size) == 1


# ---------------------------------------------------------------- FLOPs, bytes, floor

def _pairs_brute(size, k, s, p, d, out):
    return sum(1 for i in range(size) for t in range(k) if 0 <= i * s - p + t * d < out)


def test_axis_pairs_matches_brute_force():
    checked = 0
    for size, k, s, p, d in itertools.product(range(1, 6), range(1, 5), range(1, 4), range(0, 4),
                                              range(1, 4)):
        for op in range(max(s, d)):
            out = (size - 1) * s - 2 * p + d * (k - 1) + op + 1
            if out <= 0:
                continue
            assert roofline.axis_pairs(size, k, s, p, d, out) == _pairs_brute(size, k, s, p, d, out), \
                (size, k, s, p, d, op)
            checked += 1
    assert checked > 1000


def test_useful_macs_counts_what_a_ones_convolution_sums():
    # With all-ones input and weight, each output element sums one 1 per (input, tap, channel)
    # contribution, so the output's total is exactly the useful MAC count.
    for case in CASES:
        c = _tiny(case)
        x = torch.ones(c.input_shape, dtype=torch.float64)
        w = torch.ones(c.weight_shape, dtype=torch.float64)
        total = F.conv_transpose3d(x, w, **c.conv_args()).sum().item()
        assert roofline.useful_macs(c) == int(total), case.id
        assert roofline.flops(c) == 2 * int(total)


def test_flops_equal_dense_formula_when_nothing_is_cropped():
    for c in CASES:
        dense = 2 * c.N * c.Cin * (c.Cout // c.groups) * math.prod(c.size) * math.prod(c.kernel)
        assert 2 * roofline.dense_macs(c) == dense
        if c.padding == (0, 0, 0):
            assert roofline.flops(c) == dense, c.id
        else:  # padding crops taps at the borders
            assert roofline.flops(c) < dense, c.id
    assert roofline.flops(get_cases([9])[0]) == 2 * 2 * 256 * 128 * 16 ** 3 * 8


def test_flops_of_a_cropped_case_by_hand():
    # Case 11 along one axis: size 16, kernel 4, stride 2, padding 1, out 32. Tap 0 of input 0
    # lands on -1 and tap 3 of input 15 on 32: 64 - 2 = 62 pairs per axis.
    c = get_cases([11])[0]
    assert c.out_size == (32, 32, 32)
    assert roofline.axis_pairs(16, 4, 2, 1, 1, 32) == 62
    assert roofline.flops(c) == 2 * 16 * 128 * 64 * 62 ** 3


def test_bytes_moved():
    c9 = get_cases([9])[0]
    n = 2 * 256 * 16 ** 3 + 256 * 128 * 8 + 128 + 2 * 128 * 32 ** 3
    assert roofline.bytes_moved(c9, 4) == 4 * n
    assert roofline.bytes_moved(c9, 2) == 2 * n
    c1 = get_cases([1])[0]  # no bias
    n1 = 16 * 32 * 16 * 32 * 64 + 32 * 16 * 3 * 5 * 7 + 16 * 16 * 18 * 36 * 70
    assert roofline.bytes_moved(c1, 2) == 2 * n1
    assert [PRECISIONS[p].elem_size for p in ("tf32", "bf16", "fp16", "fp32")] == [4, 2, 2, 4]


def test_floor_is_the_larger_bound():
    # compute-bound: 1e12 FLOP at 1e15 FLOP/s = 1 ms; 1e9 B at 1e12 B/s = 1 ms -> equal
    assert roofline.floor_seconds(1e12, 1e9, 1e15, 1e12) == pytest.approx(1e-3)
    assert roofline.floor_seconds(4e12, 1e9, 1e15, 1e12) == pytest.approx(4e-3)   # compute
    assert roofline.floor_seconds(1e12, 3e9, 1e15, 1e12) == pytest.approx(3e-3)   # memory


# ---------------------------------------------------------------- timing

def test_policy_plan():
    p = Policy(warmup=5, iters=50, budget_s=1.0, min_iters=3, slow_s=2.0, slow_iters=2)
    assert p.plan(1e-4) == (5, 50, False)          # fast: every call allowed
    assert p.plan(0.1) == (2, 10, False)           # budget bounds the timed calls
    assert p.plan(0.9) == (0, 3, False)            # at least min_iters
    assert p.plan(2.5) == (0, 2, True)             # slow: fewer calls, marked
    assert p.plan(6.0) == (0, 1, True)             # two calls would pass slow_cap_s
    assert Policy(warmup=0, iters=1).plan(1e-3) == (0, 1, False)


def test_rotation_sets():
    L2 = 50 << 20
    assert rotation_sets(10 << 20, 10 << 20, None) == 1             # CPU: no rotation
    assert rotation_sets(80 << 20, 40 << 20, L2) == 1               # streams > 2 x L2
    k = rotation_sets(9 << 20, 30 << 20, L2)
    assert k >= 3 and (k - 1) * (9 << 20) >= 2 * L2                 # others flush one set
    assert rotation_sets(1000, 1000, L2) == MAX_SETS
    assert rotation_sets(9 << 20, 30 << 20, L2, mem_cap=30 << 20) == 3


def test_measure_on_cpu_rotates_and_keeps_first_output():
    sets = [(torch.full((4,), float(i)),) for i in range(3)]
    seen = []

    def fn(x):
        seen.append(float(x[0]))
        return x * 2

    t = measure(fn, sets, torch.device("cpu"), Policy(warmup=2, iters=4, budget_s=10))
    assert t.warmup == 2 and t.iters == 4 and len(t.times_ms) == 4
    assert seen == [0, 0, 1, 0, 1, 2, 0]        # first, warm-up (2), timed (4), rotating
    assert torch.equal(t.output, torch.zeros(4)) and t.repeat_equal is True
    assert t.median_ms > 0 and t.extra_mem is None


class _FakeClock:
    """Stands in for the timing module's `time`: perf_counter moves only when a test's fn
    advances it, so CPU timings are exact whatever else loads the machine (real sleeps under
    pytest -n 16 overslept by 40 % and read as scatter)."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


def _ticker(durations_ms, clock):
    """fn(x) that takes the next of durations_ms (the last one repeats) on `clock` and
    returns x."""
    calls = iter(durations_ms)
    last = [durations_ms[-1]]

    def fn(x):
        last[0] = next(calls, last[0])
        clock.now += last[0] / 1e3
        return x
    return fn


def test_time_based_warmup_is_cuda_only():
    # On the CPU, warmup_s changes nothing (it exists for GPU clocks).
    seen = []
    t = measure(lambda x: seen.append(1) or x, [(torch.zeros(1),)], torch.device("cpu"),
                Policy(warmup=1, iters=2, budget_s=10, warmup_s=5.0))
    assert t.warmup == 1 and len(seen) == 1 + 1 + 2


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA only")
def test_time_based_warmup_on_cuda_lasts_and_replans():
    x = torch.randn(1 << 20, device="cuda")
    # max_warmup well above the calls 30 ms take: a fast GPU runs 2000 of these in ~20 ms
    policy = Policy(warmup=1, iters=7, budget_s=10, warmup_s=0.03, max_warmup=100_000)
    t0 = time.perf_counter()
    t = measure(lambda v: v * 2, [(x,)], torch.device("cuda"), policy)
    wall = time.perf_counter() - t0
    assert wall >= 0.03 and t.warmup > policy.warmup   # warmed up by time, not by count
    assert t.warmup <= policy.warmup + policy.max_warmup
    assert t.iters == 7 and len(t.times_ms) == 7       # planned from the warm-up's per-call time
    assert torch.equal(t.output, x * 2)


def test_measure_steady_repeats_a_scattered_measurement(monkeypatch):
    # first call, 8 timed calls alternating 2 and 8 ms (IQR ~ median), then a steady 2 ms
    clock = _FakeClock()
    monkeypatch.setattr(timing, "time", clock)
    noisy = [2.0] + [2.0, 8.0] * 4
    fn = _ticker(noisy + [2.0] * 9, clock)
    policy = Policy(warmup=0, iters=8, budget_s=10)
    t = measure_steady(fn, [(torch.zeros(2),)], torch.device("cpu"), policy)
    assert t.remeasured and len(t.times_ms) == 8
    assert t.spread == 0 and t.median_ms == pytest.approx(2.0)
    assert torch.equal(t.output, torch.zeros(2))      # the first measurement's output
    steady = measure_steady(_ticker([2.0], clock), [(torch.zeros(2),)], torch.device("cpu"),
                            policy)
    assert not steady.remeasured and steady.to_json()["remeasured"] is False


def test_measure_steady_keeps_the_steadiest_of_three(monkeypatch):
    # three scattered measurements (a first call and 8 timed calls each): the middle one
    # scatters least, and no fourth is taken
    clock = _FakeClock()
    monkeypatch.setattr(timing, "time", clock)
    wide = [2.0, 8.0] * 4
    mid = [3.0, 3.0, 4.5, 3.0] * 2
    fn = _ticker([2.0] + wide + [2.0] + mid + [2.0] + wide + [100.0], clock)
    t = measure_steady(fn, [(torch.zeros(2),)], torch.device("cpu"), Policy(warmup=0, iters=8,
                                                                            budget_s=10))
    assert t.remeasured and t.times_ms == pytest.approx(mid)
    assert clock.now == pytest.approx((3 * 2.0 + 2 * sum(wide) + sum(mid)) / 1e3)


def test_tf32_flags_set_and_restore():
    before = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    for allow in (True, False):
        with tf32_flags(allow):
            assert torch.backends.cuda.matmul.allow_tf32 is allow
            assert torch.backends.cudnn.allow_tf32 is allow
        assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == before
    with tf32_flags(None):
        assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == before


# ---------------------------------------------------------------- reports

def _row(case, prec, layout, ours_ms, cudnn_ms, pct, err=1e-7, **extra):
    timing = dict(iters=10, slow=False, repeat_equal=True)
    row = dict(case=case, precision=prec, layout=layout,
               ours=dict(timing, ms=ours_ms, tflops=1.0, pct_floor=pct, rel_err=err,
                         extra_mem_frac=0.0),
               cudnn=dict(timing, ms=cudnn_ms, tflops=0.5, pct_floor=pct * ours_ms / cudnn_ms,
                          rel_err=2 * err, extra_mem_frac=3.0))
    row["speedup"] = cudnn_ms / ours_ms
    row.update(extra)
    return row


def test_summarise():
    rows = [_row(1, "tf32", "ncdhw", 1.0, 4.0, 60.0), _row(2, "tf32", "ncdhw", 2.0, 1.0, 20.0),
            _row(1, "bf16", "ndhwc", 1.0, 2.0, 70.0, err=3e-3),
            dict(case=2, precision="bf16", layout="ndhwc", skipped="deadline")]
    s = report.summarise(rows)
    assert s["tf32"]["geomean_speedup"] == pytest.approx(math.sqrt(4.0 * 0.5))
    assert s["tf32"]["faster_than_cudnn"] == 1 and s["tf32"]["measured"] == 2
    assert s["tf32"]["min_pct_floor"] == 20.0 and s["tf32"]["min_pct_floor_at"] == "case 2 ncdhw"
    assert s["bf16"]["configurations"] == 2 and s["bf16"]["measured"] == 1
    assert s["bf16"]["max_rel_err"] == 3e-3
    lines = report.summary_lines(s)
    assert lines[0].startswith("tf32: geomean speedup 1.41x, faster than tuned cuDNN in 1/2")
    assert "[1 not measured]" in lines[1]


def test_tables_show_the_numbers_and_notes():
    slow = _row(3, "fp32", "ndhwc", 2500.0, 98.6, 0.1)
    slow["ours"].update(slow=True, iters=2)
    rows = [_row(9, "tf32", "ncdhw", 0.05, 0.138, 61.5), slow,
            dict(case=4, precision="bf16", layout="ncdhw", skipped="deadline"),
            dict(case=5, precision="fp16", layout="ncdhw", ours_error="RuntimeError: x",
                 cudnn=_row(5, "fp16", "ncdhw", 1, 1, 1)["cudnn"]),
            _row(6, "tf32", "ndhwc", 1, 1, 1, device_type="cuda", baseline_backend="SlowTranspose3d"),
            _row(7, "tf32", "ndhwc", 1, 1, 1, device_type="cuda", baseline_backend="CudnnTranspose")]
    text = report.format_table(rows, with_default=False)
    lines = text.splitlines()
    assert lines[0].split()[:5] == ["#", "prec", "layout", "ours", "ms"]
    assert "2.76" in lines[2] and "61.5" in lines[2]       # speedup 0.138/0.05, % floor
    assert "slow: 2 it" in lines[3] and "skipped" in lines[4] and "ours failed" in lines[5]
    assert lines[6].endswith("baseline: SlowTranspose3d") and "baseline" not in lines[7]
    noisy = _row(8, "bf16", "ndhwc", 1, 1, 1)
    noisy["ours"]["spread"] = 0.6
    assert report.note(noisy) == "ours noisy: IQR 60 % of median"
    md = report.markdown_table(rows, with_default=True)
    assert md.splitlines()[0].count("|") == 15 and "dflt ms" in md


def test_write_json_roundtrip(tmp_path):
    doc = dict(meta=dict(torch=torch.__version__), results=[dict(ms=1.5, err=float("nan"),
                                                                 shape=(1, 2))])
    path = tmp_path / "sub" / "bench.json"
    report.write_json(path, doc)
    back = json.loads(path.read_text())
    assert back == dict(meta=dict(torch=torch.__version__),
                        results=[dict(ms=1.5, err="nan", shape=[1, 2])])
    assert not list(tmp_path.rglob("*.tmp"))


def test_png_skipped_without_matplotlib(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    msg = report.write_png(tmp_path / "b.png", dict(results=[_row(1, "tf32", "ncdhw", 1, 2, 3)]))
    assert "matplotlib is not installed" in msg and not (tmp_path / "b.png").exists()


def test_png_written(tmp_path):
    pytest.importorskip("matplotlib")
    doc = dict(meta=dict(device_name="x", torch="t", cudnn=None, date_utc="d"),
               results=[_row(c, p, lay, 1.0, 1.5, 40.0) for c in (1, 9) for p in ("tf32", "bf16")
                        for lay in ("ncdhw", "ndhwc")])
    assert report.write_png(tmp_path / "b.png", doc).startswith("wrote")
    assert (tmp_path / "b.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------- command line

def test_cli_lists_are_validated():
    args = parser().parse_args(["--cases", "1,2,5,2", "--dtypes", "tf32,bf16", "--layouts", "ncdhw"])
    assert args.cases == [1, 2, 5] and args.dtypes == ["tf32", "bf16"] and args.layouts == ["ncdhw"]
    defaults = parser().parse_args([])
    assert defaults.cases == list(range(1, 13)) and defaults.dtypes == ["tf32", "bf16", "fp16", "fp32"]
    assert defaults.layouts == ["ncdhw", "ndhwc"] and str(defaults.out) == "bench_out"
    for bad in (["--cases", "13"], ["--dtypes", "fp8"], ["--layouts", "nhwc"], ["--cases", ""]):
        with pytest.raises(SystemExit):
            parser().parse_args(bad)


def _git(cwd, *args):
    import subprocess
    out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_tree_names_the_files_that_ran(tmp_path):
    """meta.git_tree is the tree of the checkout's files as they are: HEAD's tree when clean,
    the tree a commit of the edited files would have otherwise (also with .git older than the
    files, as on the GPU machine), and the checkout's own index is left alone."""
    from inductor_convt3d.bench.cli import _git_tree
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "pkg" / "a.py").write_text("a = 1\n")
    (repo / ".gitignore").write_text("*.so\n")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    assert _git_tree(repo / "pkg") == _git(repo, "rev-parse", "HEAD^{tree}")
    (repo / "pkg" / "a.py").write_text("a = 2\n")  # edited, and a new file; ignored build output
    (repo / "pkg" / "b.py").write_text("b = 1\n")
    (repo / "pkg" / "ext.so").write_bytes(b"\0")
    status = _git(repo, "status", "--porcelain")
    tree = _git_tree(repo / "pkg")
    assert _git(repo, "status", "--porcelain") == status  # index untouched
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "two")
    assert tree == _git(repo, "rev-parse", "HEAD^{tree}") != _git(repo, "rev-parse", "HEAD~1^{tree}")
    assert _git_tree(tmp_path) is None  # outside a checkout


def test_module_dispatches_bench(capsys):
    from inductor_convt3d.__main__ import main as module_main
    with pytest.raises(SystemExit) as e:
        module_main(["bench", "--help"])
    assert e.value.code == 0
    assert "--no-cudnn-default" in capsys.readouterr().out


@needs_ext
def test_end_to_end_cpu(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CONVT3D_POISON_OUTPUTS", "1")   # as tests/conftest.py sets it
    out = tmp_path / "bench"
    rc = main(["--device", "cpu", "--cases", "9", "--dtypes", "fp32", "--layouts", "ncdhw",
               "--iters", "1", "--warmup", "0", "--shrink", "4", "--out", str(out)])
    assert rc == 0
    assert os.environ["CONVT3D_POISON_OUTPUTS"] == "1"    # restored after the run
    doc = json.loads((out / "bench.json").read_text())
    meta = doc["meta"]
    assert meta["poison_env_unset"] is True
    assert meta["device"] == "cpu" and meta["torch"] == torch.__version__ and meta["shrink"] == 4
    assert datetime.datetime.fromisoformat(meta["date_utc"]).tzinfo is not None
    ce = doc["ceilings"]
    assert ce["copy_bytes_per_s"] > 0 and ce["floor_flops_per_s"]["fp32"] > 0
    assert ce["floor_flops_per_s"]["fp32"] == ce["matmul_flops_per_s"]["fp32_ieee"]
    [row] = doc["results"]
    case = get_cases([9])[0].shrunk(4)
    assert (row["case"], row["precision"], row["layout"]) == (9, "fp32", "ncdhw")
    assert row["output_shape"] == [2, 128, 8, 8, 8] == list(case.output_shape)
    assert row["flops"] == roofline.flops(case) and row["bytes"] == roofline.bytes_moved(case, 4)
    floor = roofline.floor_seconds(row["flops"], row["bytes"], ce["floor_flops_per_s"]["fp32"],
                                   ce["copy_bytes_per_s"])
    assert row["floor_ms"] == pytest.approx(floor * 1e3)
    for key in ("ours", "cudnn"):
        m = row[key]
        assert m["ms"] > 0 and m["iters"] == 1 and m["warmup"] == 0 and len(m["times_ms"]) == 1
        assert m["rel_err"] < 1e-5 and m["repeat_equal"] is True
        assert m["pct_floor"] == pytest.approx(100 * row["floor_ms"] / m["ms"])
        assert m["tflops"] == pytest.approx(row["flops"] / m["ms"] / 1e9)
    assert row["speedup"] == pytest.approx(row["cudnn"]["ms"] / row["ours"]["ms"])
    assert "cudnn_default" not in row            # no cudnn.benchmark=False run on CPU
    if hasattr(torch._C, "_select_conv_backend"):
        assert row["baseline_backend"] and row["reference_backend"]
        assert "?" not in row["baseline_backend"] + row["reference_backend"]
    assert doc["summary"]["fp32"]["measured"] == 1
    assert "| 9 | fp32 | ncdhw |" in (out / "bench.md").read_text()
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1].startswith("wrote ") and printed[-2].startswith("fp32: geomean speedup")
    assert printed[-3].split()[:3] == ["9", "fp32", "ncdhw"]


@needs_ext
def test_end_to_end_groups_precisions_layouts(tmp_path):
    # Case 5 (groups 4, mixed padding, output_padding) in two precision groups and both layouts.
    out = tmp_path / "b"
    rc = main(["--device", "cpu", "--cases", "5", "--dtypes", "tf32,bf16", "--iters", "1",
               "--warmup", "0", "--shrink", "4", "--out", str(out), "--no-png"])
    assert rc == 0
    rows = json.loads((out / "bench.json").read_text())["results"]
    assert [(r["precision"], r["layout"]) for r in rows] == [
        ("tf32", "ncdhw"), ("tf32", "ndhwc"), ("bf16", "ncdhw"), ("bf16", "ndhwc")]
    for r in rows:
        bound = 1e-5 if r["precision"] == "tf32" else 2e-2
        assert 0 < r["ours"]["rel_err"] < bound and 0 < r["cudnn"]["rel_err"] < bound
        assert r["ours"]["out_channels_last"] is (r["layout"] == "ndhwc")
    # the two layouts of one precision run on the same values: same reference, same error
    assert rows[0]["ours"]["rel_err"] == pytest.approx(rows[1]["ours"]["rel_err"], rel=0.25)
    assert rows[2]["bytes"] * 2 == rows[0]["bytes"]
    assert not (out / "bench.png").exists()


@needs_ext
def test_deadline_skips_but_writes_everything(tmp_path):
    out = tmp_path / "d"
    rc = main(["--device", "cpu", "--cases", "9,11", "--dtypes", "fp32", "--layouts", "ncdhw",
               "--shrink", "8", "--deadline", "0", "--out", str(out), "--no-png"])
    assert rc == 0
    doc = json.loads((out / "bench.json").read_text())
    assert [r["case"] for r in doc["results"]] == [9, 11]
    assert all("skipped" in r and "ours" not in r for r in doc["results"])
    assert doc["summary"]["fp32"]["measured"] == 0
    assert "skipped" in (out / "bench.md").read_text()


@needs_ext
def test_a_failing_case_does_not_stop_the_run(tmp_path, monkeypatch):
    from inductor_convt3d.bench import cli
    real = cli.run_case

    def run_case(case, *args, **kwargs):
        if case.id == 9:
            raise torch.OutOfMemoryError("simulated")
        return real(case, *args, **kwargs)

    monkeypatch.setattr(cli, "run_case", run_case)
    out = tmp_path / "f"
    rc = main(["--device", "cpu", "--cases", "9,11", "--dtypes", "fp32", "--layouts", "ncdhw",
               "--shrink", "8", "--iters", "1", "--warmup", "0", "--out", str(out), "--no-png"])
    assert rc == 1
    doc = json.loads((out / "bench.json").read_text())
    assert doc["case_errors"] == [dict(case=9, error="OutOfMemoryError: simulated")]
    assert [r["case"] for r in doc["results"]] == [11] and "ours" in doc["results"][0]
