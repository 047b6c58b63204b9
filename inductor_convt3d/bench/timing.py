"""Timing: median of per-call CUDA events after warm-up (time.perf_counter on CPU), with the
inputs rotated over several sets when one set would stay in L2 between calls.

Every call site measures in the same way:
  1. a first call, synchronised and wall-clocked (it includes any one-time work: cuDNN's
     autotuning, caches); its peak device memory beyond the output is recorded;
  2. a probe call when the first call is not representative (cuDNN autotune), to estimate the
     steady time per call;
  3. warm-up calls, then timed calls, both bounded by a time budget per measurement: at most
     `iters` and at least `min_iters` timed calls, or `slow_iters` when one call takes longer than
     `slow_s` (the result is then marked slow; a single call when slow_iters calls would take
     longer than `slow_cap_s`).
     On CUDA the warm-up also lasts at least `warmup_s` of device time (at most `max_warmup`
     calls): a GPU left idle, e.g. while the fp64 reference ran on the CPU, lowers its clocks,
     and a few calls do not bring them back. The number of timed calls is then planned from
     the warm-up's time per call, not from the first call's (which includes one-time work).
measure_steady repeats a measurement, up to `noisy_repeats` times, while its timed calls scatter
(interquartile range over `noisy_spread` of the median: something else ran on the machine) and
keeps the steadiest.
"""
from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

DEFAULT_L2_BYTES = 60 * 1024 * 1024  # when the device does not report its L2 size
MAX_SETS = 64


@dataclass(frozen=True)
class Policy:
    warmup: int = 5           # warm-up calls after the first call (at most)
    iters: int = 50           # timed calls (at most)
    budget_s: float = 0.5     # target time of the timed calls of one measurement
    min_iters: int = 3        # timed calls at least, unless iters is smaller
    slow_s: float = 2.0       # a call slower than this is timed with slow_iters calls
    slow_iters: int = 2
    slow_cap_s: float = 10.0  # a slow measurement's timed calls take about this long at most
    noisy_spread: float = 0.25  # IQR / median above which measure_steady measures again
    noisy_repeats: int = 2    # measurements measure_steady adds, at most, while they scatter
    warmup_s: float = 0.0     # CUDA only: warm up for at least this long (device time)
    max_warmup: int = 2000    # calls, at most, of that time-based warm-up

    def plan(self, est_s: float) -> tuple[int, int, bool]:
        """(warm-up calls, timed calls, slow) for a call estimated at est_s seconds."""
        est_s = max(est_s, 1e-7)
        if est_s > self.slow_s:
            n = min(self.iters, self.slow_iters, int(self.slow_cap_s / est_s))
            return 0, max(1, n), True
        warm = min(self.warmup, int(0.25 * self.budget_s / est_s))
        iters = min(self.iters, max(self.min_iters, int(self.budget_s / est_s)))
        return warm, max(1, iters), False


@dataclass
class Timing:
    first_ms: float                       # wall clock of the first (synchronised) call
    probe_ms: float | None                # wall clock of the probe call, when there was one
    warmup: int
    iters: int
    times_ms: list[float]
    slow: bool
    extra_mem_first: int | None           # peak bytes beyond the output, first call
    extra_mem: int | None                 # the same for the first timed call (steady state)
    repeat_equal: bool | None             # first output bitwise equal to a later one, same input
    output: torch.Tensor | None = field(default=None, repr=False)
    remeasured: bool = False              # measure_steady took a second measurement

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def spread(self) -> float:
        """Interquartile range of the timed calls over their median (0 for fewer than 4)."""
        if len(self.times_ms) < 4:
            return 0.0
        q1, _, q3 = statistics.quantiles(self.times_ms, n=4)
        return (q3 - q1) / self.median_ms

    def to_json(self) -> dict:
        return dict(ms=self.median_ms, first_call_ms=self.first_ms, probe_ms=self.probe_ms,
                    warmup=self.warmup, iters=self.iters, times_ms=self.times_ms,
                    min_ms=min(self.times_ms), spread=self.spread, remeasured=self.remeasured,
                    slow=self.slow,
                    extra_mem_first_bytes=self.extra_mem_first, extra_mem_bytes=self.extra_mem,
                    repeat_equal=self.repeat_equal)


def is_cuda(device: torch.device) -> bool:
    return torch.device(device).type == "cuda"


def synchronize(device: torch.device) -> None:
    if is_cuda(device):
        torch.cuda.synchronize(device)


def l2_bytes(device: torch.device) -> int | None:
    if not is_cuda(device):
        return None
    size = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)
    return int(size) if size else DEFAULT_L2_BYTES


def rotation_sets(in_bytes: int, out_bytes: int, l2: int | None, mem_cap: int = 2 << 30) -> int:
    """How many input sets to cycle through so that a set is out of L2 when it comes back.

    1 when there is no L2 to worry about (CPU) or when one call streams more than twice the L2
    (inputs + output); otherwise enough sets that the others touch at least twice the L2 between
    two uses of one set, at most MAX_SETS and at most mem_cap bytes of inputs."""
    if not l2 or in_bytes + out_bytes > 2 * l2:
        return 1
    k = math.ceil(2 * l2 / max(in_bytes, 1)) + 1
    k = min(k, MAX_SETS, max(1, mem_cap // max(in_bytes, 1)))
    return max(1, k)


def alloc_bytes(t: torch.Tensor) -> int:
    """Bytes the CUDA caching allocator reserves for t's storage (rounded up to 512)."""
    n = t.untyped_storage().nbytes()
    return max(512, (n + 511) // 512 * 512)


def _call_with_memory(fn, args, device) -> tuple[torch.Tensor, int | None]:
    """Call fn(*args); on CUDA also return the peak allocated bytes beyond the output's."""
    if not is_cuda(device):
        return fn(*args), None
    base = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    y = fn(*args)
    peak = torch.cuda.max_memory_allocated(device)
    return y, max(0, peak - base - alloc_bytes(y))


def _wall(fn, args, device) -> tuple[float, torch.Tensor, int | None]:
    synchronize(device)
    t0 = time.perf_counter()
    y, mem = _call_with_memory(fn, args, device)
    synchronize(device)
    return time.perf_counter() - t0, y, mem


def _warm_for(fn, arg_sets, device, policy: Policy, start: int) -> tuple[int, float]:
    """Call fn in doubling batches, each synchronised, until policy.warmup_s has passed or
    policy.max_warmup calls ran. Returns (calls, wall seconds per call of those calls)."""
    k = len(arg_sets)
    n, batch, t0 = 0, 1, time.perf_counter()
    while True:
        for _ in range(batch):
            y = fn(*arg_sets[(start + n) % k])
            n += 1
        del y
        synchronize(device)
        elapsed = time.perf_counter() - t0
        if elapsed >= policy.warmup_s or n >= policy.max_warmup:
            return n, elapsed / n
        batch = min(2 * batch, policy.max_warmup - n)


def measure(fn: Callable, arg_sets: Sequence[tuple], device: torch.device, policy: Policy,
            first_is_steady: bool = True) -> Timing:
    """Time fn over arg_sets (rotating). The first output (of arg_sets[0]) is kept in .output."""
    k = len(arg_sets)
    first_s, y_first, mem_first = _wall(fn, arg_sets[0], device)
    probe_s = None
    if first_is_steady:
        est = first_s
    else:
        probe_s, y, _ = _wall(fn, arg_sets[1 % k], device)
        del y
        est = probe_s
    n_warm, n_iter, slow = policy.plan(est)

    y = None
    for i in range(n_warm):
        y = fn(*arg_sets[i % k])
    del y
    synchronize(device)
    if is_cuda(device) and not slow and policy.warmup_s > 0:
        n_more, per_call_s = _warm_for(fn, arg_sets, device, policy, n_warm)
        n_warm += n_more
        n_iter = policy.plan(per_call_s)[1]

    times: list[float] = []
    y0 = None
    extra = None
    if is_cuda(device):
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_iter)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_iter)]
        y = None
        for i in range(n_iter):
            args = arg_sets[i % k]
            if i == 0:
                base = torch.cuda.memory_allocated(device)
                torch.cuda.reset_peak_memory_stats(device)
            starts[i].record()
            y = fn(*args)
            ends[i].record()
            if i == 0:
                extra = max(0, torch.cuda.max_memory_allocated(device) - base - alloc_bytes(y))
                y0 = y
        torch.cuda.synchronize(device)
        times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
        del y
    else:
        for i in range(n_iter):
            t0 = time.perf_counter()
            y = fn(*arg_sets[i % k])
            times.append((time.perf_counter() - t0) * 1e3)
            if i == 0:
                y0 = y
    repeat = bool(torch.equal(y0, y_first)) if y0 is not None else None
    del y0
    return Timing(first_s * 1e3, None if probe_s is None else probe_s * 1e3, n_warm, n_iter,
                  times, slow, mem_first, extra, repeat, y_first)


def measure_steady(fn: Callable, arg_sets: Sequence[tuple], device: torch.device,
                   policy: Policy, first_is_steady: bool = True) -> Timing:
    """measure(), repeated while the timed calls scatter by more than policy.noisy_spread, at
    most policy.noisy_repeats more times (seen on the H100: a 50-call window of 0.13 ms calls
    read 0.13-1.1 ms; a host-bound 0.05 ms layer read 0.16 ms in two scattered windows running).
    Keeps the measurement with the smallest spread, whatever its median; the first call
    (autotuning, first-call memory) and the output stay the first measurement's."""
    t = measure(fn, arg_sets, device, policy, first_is_steady)
    if t.slow:
        return t
    spread = t.spread
    for _ in range(policy.noisy_repeats):
        if spread <= policy.noisy_spread:
            break
        again = measure(fn, arg_sets, device, policy, first_is_steady=True)
        again.output = None
        t.remeasured = True
        if again.spread < spread:
            spread = again.spread
            t.warmup, t.iters, t.times_ms, t.extra_mem = (again.warmup, again.iters,
                                                          again.times_ms, again.extra_mem)
    return t


def median_seconds(fn: Callable, device: torch.device, warmup: int, iters: int) -> float:
    """Median time of fn() in seconds: CUDA events per call, or perf_counter on CPU."""
    for _ in range(warmup):
        fn()
    synchronize(device)
    if is_cuda(device):
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
        for s, e in zip(starts, ends):
            s.record()
            fn()
            e.record()
        torch.cuda.synchronize(device)
        return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) / 1e3
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
