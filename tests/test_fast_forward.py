"""The fast CUDA forward (phase-decomposed implicit GEMM on tensor cores, csrc/cuda/fwd/) against
an fp64 F.conv_transpose3d on the CPU.

Covers each fast path's edges: every stride-phase pattern (stride 1-3 and kernel 1-7 per axis,
dilation 1-3 with empty phases, padding, output_padding), M tails, odd channel counts, groups,
layouts and alignments that forbid vector loads, every precision (bf16, fp16, fp32 with TF32,
strict fp32 = 3xTF32), bias; plus path selection (convt3d::_forward_path), the
CONVT3D_FORCE_REFERENCE switch and run-to-run determinism.

Results start as NaN (CONVT3D_POISON_OUTPUTS, set by conftest), so an element the kernel never
writes fails `check`.
"""
import math
import os
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F

import inductor_convt3d as ic
from conftest import rel_err
from inductor_convt3d.bench.precision import tf32_flags as allow_tf32
from dispatch_mirror import expected_path, fused_res, wgmma_expected

pytestmark = pytest.mark.cuda

ops = torch.ops.convt3d
DEVICE = "cuda"

# (dtype, torch.backends.cudnn.allow_tf32, relative L2 bound, kernel-name mode)
PRECISIONS = [
    pytest.param((torch.bfloat16, True, 5e-3, "bf16"), id="bf16"),
    pytest.param((torch.float16, True, 5e-3, "fp16"), id="fp16"),
    pytest.param((torch.float32, True, 5e-4, "tf32"), id="tf32"),
    pytest.param((torch.float32, False, 1e-6, "3xtf32"), id="fp32strict"),
]


# ---- inputs ------------------------------------------------------------------------------

def in_layout(x, layout):
    """x (CPU) moved to the GPU in one of the layouts; values unchanged."""
    x = x.to(DEVICE)
    if layout == "ncdhw":
        return x.contiguous()
    if layout == "cl":
        return x.contiguous(memory_format=torch.channels_last_3d)
    n, c, d, h, w = x.shape
    if layout == "sliced":  # channel narrow + every other w: no unit stride anywhere but W's 2
        big = torch.zeros(n, c + 3, d, h, 2 * w + 1, dtype=x.dtype, device=DEVICE)
        v = big[:, 2:2 + c, :, :, 1::2]
    elif layout == "misaligned":  # NCDHW one element past a 16-byte boundary
        flat = torch.zeros(x.numel() + 1, dtype=x.dtype, device=DEVICE)
        v = flat[1:].view(x.shape)
    elif layout == "cl_misaligned":  # channels_last, one element past a 16-byte boundary
        flat = torch.zeros(x.numel() + 1, dtype=x.dtype, device=DEVICE)
        v = flat[1:].view(n, d, h, w, c).permute(0, 4, 1, 2, 3)
    elif layout == "cl_narrow8":  # channels_last slice of a wider tensor, 16-byte aligned
        big = torch.zeros(n, c + 16, d, h, w, dtype=x.dtype, device=DEVICE)
        v = big.contiguous(memory_format=torch.channels_last_3d)[:, 8:8 + c]
    else:
        raise ValueError(layout)
    v.copy_(x)
    return v


def make(spec, dtype, layout="ncdhw", seed=0):
    """(x, w, b) on the GPU in `dtype` (x in `layout`) and their exact fp64 CPU copies."""
    N, cin, cout, size, k, s, p, op, d, g, bias = spec
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(N, cin, *size, generator=gen, dtype=torch.float64).to(dtype)
    w = torch.randn(cin, cout // g, *k, generator=gen, dtype=torch.float64).to(dtype)
    b = torch.randn(cout, generator=gen, dtype=torch.float64).to(dtype) if bias else None
    dev = (in_layout(x, layout), w.to(DEVICE), b.to(DEVICE) if b is not None else None)
    ref = (x.double(), w.double(), b.double() if b is not None else None)
    return dev, ref


def geometry_args(spec):
    _, _, _, _, _, s, p, op, d, g, _ = spec
    return list(s), list(p), list(op), list(d), g


# ---- checks ------------------------------------------------------------------------------

def reference(spec, ref):
    x, w, b = ref
    s, p, op, d, g = geometry_args(spec)
    return F.conv_transpose3d(x, w, b, s, p, op, g, d)


def check(y, ref, bound):
    """Relative L2 error within `bound`, no NaN (unwritten elements are NaN), and every element
    within a loose pointwise band, so one wrong element cannot hide in the norm."""
    assert y.shape == ref.shape
    y64 = y.detach().double().cpu()
    assert torch.isfinite(y64).all(), "NaN/inf in the result: an element was not written"
    err = rel_err(y64, ref)
    assert err <= bound, f"relative L2 error {err:.3e} > {bound:.0e}"
    rms = ref.pow(2).mean().sqrt().item() if ref.numel() else 0.0
    band = 50 * bound * (ref.abs() + rms) + 1e-30
    worst = ((y64 - ref).abs() / band).max().item() if ref.numel() else 0.0
    assert worst <= 1.0, f"an element is off by {worst:.1f}x the pointwise band"
    return err


def run(spec, precision, layout="ncdhw", seed=0, expect_path=True, kernel=None):
    dtype, tf32, bound, mode = precision
    (x, w, b), ref = make(spec, dtype, layout, seed)
    s, p, op, d, g = geometry_args(spec)
    with allow_tf32(tf32):
        path = ops._forward_path(x, w, s, p, op, d, g)
        y = ic.conv_transpose3d(x, w, b, s, p, op, g, d)
    if expect_path:
        assert path == expected_path(x, spec, mode, w), path
    if kernel is not None:  # "halo" or "igemm": the test is about that kernel
        assert path.startswith(kernel + "_"), path
    check(y, reference(spec, ref), bound)
    return y


# ---- every stride-phase pattern ----------------------------------------------------------

# N, Cin, Cout, size, kernel, stride, padding, output_padding, dilation, groups, bias
PHASE_CASES = [
    (2, 8, 8, (5, 6, 7), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True),
    # kernel 1 < stride: only phase 0 has a tap; output_padding adds rows of empty phases
    (2, 8, 8, (4, 5, 6), (1, 1, 1), (2, 2, 2), (0, 0, 0), (1, 1, 1), (1, 1, 1), 1, False),
    (1, 8, 8, (3, 4, 5), (2, 3, 4), (2, 3, 1), (0, 1, 2), (1, 2, 0), (1, 1, 1), 1, True),
    (1, 8, 8, (3, 4, 4), (5, 6, 7), (3, 2, 3), (2, 3, 3), (2, 1, 0), (1, 1, 1), 1, False),
    # gcd(stride, dilation) = 2: half the phases per axis have no tap (bias only)
    (1, 8, 8, (3, 3, 4), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (2, 2, 2), 1, True),
    # gcd 3: two thirds of the phases per axis are empty; output_padding < dilation only
    (1, 8, 8, (3, 4, 3), (3, 2, 3), (3, 3, 3), (0, 1, 2), (0, 2, 1), (3, 3, 3), 1, False),
    (1, 8, 8, (4, 3, 5), (4, 3, 5), (2, 3, 2), (3, 2, 1), (0, 0, 1), (3, 2, 1), 1, True),
    (2, 8, 8, (3, 5, 4), (7, 1, 2), (1, 3, 2), (3, 0, 1), (0, 2, 1), (1, 1, 3), 1, False),
    (1, 8, 8, (6, 2, 3), (2, 4, 3), (3, 1, 2), (0, 1, 2), (2, 0, 1), (2, 3, 1), 1, True),
    # tiny input, large padding: many phases read no valid input row at all
    (1, 8, 8, (2, 2, 2), (6, 6, 6), (3, 3, 3), (5, 5, 5), (2, 2, 2), (2, 1, 3), 1, False),
]


# CONVT3D_HALO value that forces each kernel (read per call): v1, the fused halo kernel.
FORCE = {"igemm": "0", "fused": "2"}


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("case", range(len(PHASE_CASES)))
@pytest.mark.parametrize("kernel", [None, "igemm", "fused"])
def test_phase_patterns(kernel, case, precision, monkeypatch):
    # Auto mode sends the undilated cases to the fused kernel and the dilated ones to v1; the
    # forced variants run every pattern through both (fused: union boxes with empty phases).
    if kernel is not None:
        monkeypatch.setenv("CONVT3D_HALO", FORCE[kernel])
    run(PHASE_CASES[case], precision, kernel=kernel)


def test_empty_phases_write_exactly_bias():
    """stride 2, dilation 2, kernel 3, no padding: odd outputs have no tap and are the bias."""
    spec = (1, 8, 16, (3, 4, 5), (3, 3, 3), (2, 2, 2), (0, 0, 0), (0, 0, 0), (2, 2, 2), 1, True)
    for dtype in (torch.bfloat16, torch.float32):
        (x, w, b), _ = make(spec, dtype)
        y = ic.conv_transpose3d(x, w, b, 2, 0, 0, 1, 2)
        odd = y[:, :, 1::2]
        assert odd.numel() > 0
        assert torch.equal(odd, b.view(1, -1, 1, 1, 1).expand_as(odd))


# ---- channel counts and groups -----------------------------------------------------------

CHANNELS = [(1, 1), (3, 5), (5, 3), (17, 33), (33, 17), (48, 48), (1, 48), (48, 1), (16, 8),
            (8, 130), (32, 65)]


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("groups", [1, 2, 4])
@pytest.mark.parametrize("cin_g,cout_g", CHANNELS)
def test_channels_and_groups(cin_g, cout_g, groups, layout, precision):
    spec = (2, cin_g * groups, cout_g * groups, (3, 4, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1),
            (1, 1, 1), (1, 1, 1), groups, cin_g % 2 == 1)
    run(spec, precision, layout)


# ---- M tails (v1 BM: 256 for BN 16/32/64, 128 for BN 128 and for 3xTF32's BN 64) ---

M_SIZES = [
    (1, (1, 1, 1)),      # M = 1
    (1, (1, 1, 127)),    # BM 128 - 1
    (1, (1, 1, 129)),    # BM 128 + 1
    (3, (1, 5, 17)),     # 255, rows cross samples
    (1, (1, 1, 257)),    # BM 256 + 1
    (2, (4, 4, 16)),     # 512: whole tiles
    (2, (9, 10, 11)),    # 1980: many tiles, ragged last
]


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("cout", [16, 32, 48, 64, 128])
@pytest.mark.parametrize("n,size", M_SIZES)
@pytest.mark.parametrize("kernel", ["igemm", "halo"])
def test_m_tails(kernel, n, size, cout, precision, monkeypatch):
    # stride 1: one phase, M = N * D * H * W, border rows out of range. Kernel (1,1,3) has 3
    # taps (v1 igemm, BM-row tails); kernel 3 has 27 (v2 halo: box tails on every axis). The
    # halo variant forces the halo kernel: auto mode sends wide strict fp32 to v1.
    # twg would take stride-1 16-bit Cout 48/64 (halo) and TF32 NCDHW Cout 48/64 (igemm).
    monkeypatch.setenv("CONVT3D_TWG", "0")
    if kernel == "halo":
        monkeypatch.setenv("CONVT3D_HALO", "1")
    k, pad = ((1, 1, 3), (0, 0, 1)) if kernel == "igemm" else ((3, 3, 3), (1, 1, 1))
    spec = (n, 8, cout, size, k, (1, 1, 1), pad, (0, 0, 0), (1, 1, 1), 1, True)
    run(spec, precision, kernel=kernel)


# ---- layouts and alignment -----------------------------------------------------------------

LAYOUTS = ["ncdhw", "cl", "sliced", "misaligned", "cl_misaligned", "cl_narrow8"]
LAYOUT_SPECS = [
    (2, 16, 24, (3, 4, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, True),
    (1, 32, 32, (4, 3, 5), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 4, False),
    (2, 5, 7, (3, 4, 5), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
]


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", range(len(LAYOUT_SPECS)))
@pytest.mark.parametrize("kernel", [None, "igemm"])
def test_layouts(kernel, case, layout, precision, monkeypatch):
    # Auto: fused for these strided layers (case 1 with its 4 groups densified).
    if kernel is not None:
        monkeypatch.setenv("CONVT3D_HALO", FORCE[kernel])
    run(LAYOUT_SPECS[case], precision, layout, kernel=kernel)


# ---- the weight repack (fwd/repack.cuh): w's layout, and more row tiles than one grid -----

REPACK_SPECS = [
    # odd Cin / groups (channel padding), two groups, a kernel of 3 x 2 x 4 taps
    (2, 10, 12, (3, 4, 5), (3, 2, 4), (1, 2, 1), (1, 0, 1), (0, 1, 0), (1, 1, 1), 2, True),
    # small groups that the host densifies into block-diagonal rows
    (1, 32, 32, (4, 3, 5), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 4, False),
    # Cin 256: eight channel tiles, 32 row tiles (8 taps x 128 columns)
    (1, 256, 128, (3, 4, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
]


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("w_layout", ["ncdhw", "cl", "sliced"])
@pytest.mark.parametrize("case", range(len(REPACK_SPECS)))
def test_weight_layouts(case, w_layout, precision, monkeypatch):
    """Every path that reads the repacked weight gets the same layer from any w strides
    (contiguous, channels_last_3d, a narrowed Cout/g and every other kW): the repack transposes
    through shared memory and must follow w's strides, not assume them.
    CONVT3D_PW_WDIRECT=0: the non-overlapping kernel (case 3) reads the repack too."""
    monkeypatch.setenv("CONVT3D_PW_WDIRECT", "0")
    spec = REPACK_SPECS[case]
    dtype, tf32, bound, _ = precision
    (x, w, b), ref = make(spec, dtype)
    w = in_layout(w.cpu(), w_layout)  # "sliced": a narrowed Cout/g, every other kW
    with allow_tf32(tf32):
        y = ic.conv_transpose3d(x, w, b, *geometry_args(spec)[:3], spec[9], spec[8])
    check(y, reference(spec, ref), bound)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_weight_repack_rows_beyond_one_grid(precision):
    """Cout 4096 x 729 taps = 2.99 M packed rows, more row tiles than the grid's 65535: the
    repack's CTAs loop over row tiles."""
    spec = (1, 1, 4096, (2, 2, 2), (9, 9, 9), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1,
            False)
    run(spec, precision, expect_path=False)


@pytest.mark.parametrize("kernel", ["igemm", "fused"])
def test_vector_loader_is_chosen_only_when_legal(kernel, monkeypatch):
    monkeypatch.setenv("CONVT3D_HALO", FORCE[kernel])
    spec = LAYOUT_SPECS[0]  # Cin/groups = 16: whole 16-byte chunks in every precision
    for layout, loader in [("ncdhw", "mfast"), ("cl", "kvec"), ("sliced", "mfast"),
                           ("misaligned", "mfast"), ("cl_misaligned", "mfast"),
                           ("cl_narrow8", "kvec")]:
        (x, w, _), _ = make(spec, torch.bfloat16, layout)
        path = ops._forward_path(x, w, *geometry_args(spec))
        res = fused_res(spec, 32, "bf16", False) if kernel == "fused" else ""
        assert path == f"{kernel}_bf16_bn32_{loader}{res}", (layout, path)


# ---- long reductions (K in the thousands) --------------------------------------------------

@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
def test_long_reduction(layout, precision):
    # K = 128 channels x 27 taps = 3456 for every output
    spec = (1, 128, 24, (4, 5, 6), (3, 3, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True)
    run(spec, precision, layout)


# ---- the benchmark suite's geometries, scaled down -----------------------------------------

SUITE_SMALL = [  # issue 4's cases with N = 1 and small inputs; channels, kernel, stride... kept
    (1, 32, 16, (4, 5, 6), (3, 5, 7), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False),
    (1, 48, 48, (5, 5, 5), (3, 3, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False),
    (1, 32, 64, (4, 4, 4), (3, 5, 5), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False),
    (1, 48, 24, (5, 5, 5), (3, 3, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False),
    (1, 32, 32, (3, 4, 6), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 4, False),
    (1, 32, 32, (4, 5, 6), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, False),
    (1, 32, 32, (4, 5, 6), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 4, False),
    (1, 32, 64, (4, 4, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (2, 2, 2), 1, True),
    (1, 256, 128, (3, 4, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    (1, 64, 32, (5, 5, 5), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    (1, 128, 64, (3, 4, 4), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, False),
    (1, 128, 64, (4, 4, 4), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, True),
]


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("case", range(len(SUITE_SMALL)), ids=lambda i: f"suite{i + 1}")
def test_suite_geometries(case, layout, precision):
    run(SUITE_SMALL[case], precision, layout)


# ---- path selection ------------------------------------------------------------------------

def path_of(x, w, spec, tf32=True):
    with allow_tf32(tf32):
        return ops._forward_path(x, w, *geometry_args(spec))


def assert_path_names(spec, cases):
    """cases: (dtype, allow_tf32, Cout, expected kernel name) for `spec` with that Cout."""
    for dtype, tf32, cout, expected in cases:
        s = spec[:2] + (cout,) + spec[3:]
        (x, w, _), _ = make(s, dtype)
        assert path_of(x, w, s, tf32) == expected, (dtype, tf32, cout)


def test_forward_path_names(monkeypatch):
    monkeypatch.setenv("CONVT3D_HALO", "0")  # v1's names; the halo kernels' below
    spec = (1, 8, 8, (3, 3, 3), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, False)
    cases = [  # (dtype, tf32, Cout, expected)
        (torch.bfloat16, True, 8, "igemm_bf16_bn16_mfast"),
        (torch.float16, True, 17, "igemm_fp16_bn32_mfast"),
        (torch.float32, True, 48, "igemm_tf32_bn64_mfast"),
        (torch.float32, True, 100, "igemm_tf32_bn128_mfast"),
        (torch.float32, False, 100, "igemm_3xtf32_bn64_mfast"),
        (torch.float32, False, 16, "igemm_3xtf32_bn16_mfast"),
        (torch.bfloat16, True, 300, "igemm_bf16_bn128_mfast"),
        (torch.float64, True, 8, "reference"),
        (torch.float64, False, 8, "reference"),
    ]
    assert_path_names(spec, cases)
    (x, w, _), _ = make(spec, torch.bfloat16)
    assert ops._forward_path(x.cpu(), w.cpu(), *geometry_args(spec)) == "reference"
    assert ops._forward_path(x[:0], w, *geometry_args(spec)) == "none"  # empty output


@pytest.mark.parametrize("precision", PRECISIONS)
def test_fp64_and_huge_stride_use_reference(precision):
    spec = (1, 4, 4, (3, 3, 3), (2, 2, 2), (17, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True)
    dtype, tf32, bound, _ = precision
    (x, w, b), ref = make(spec, dtype)
    assert path_of(x, w, spec, tf32) == "reference"  # stride > 16 is outside the plan tables
    with allow_tf32(tf32):
        y = ic.conv_transpose3d(x, w, b, (17, 1, 1), 0, 0, 1, 1)
    check(y, reference(spec, ref), max(bound, 1e-6))
    (x, w, b), ref = make(spec[:5] + ((2, 2, 2),) + spec[6:], torch.float64)
    assert path_of(x, w, spec[:5] + ((2, 2, 2),) + spec[6:]) == "reference"


def test_force_reference_env():
    """CONVT3D_FORCE_REFERENCE=1 (read once per process) sends every forward to the reference."""
    code = textwrap.dedent("""
        import torch, torch.nn.functional as F
        import inductor_convt3d as ic
        x = torch.randn(2, 16, 3, 4, 5, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(16, 8, 3, 3, 3, device="cuda", dtype=torch.bfloat16)
        args = ([2, 2, 2], [1, 1, 1], [1, 1, 1], [1, 1, 1], 1)
        print(torch.ops.convt3d._forward_path(x, w, *args))
        y = ic.conv_transpose3d(x, w, None, 2, 1, 1, 1, 1)
        ref = F.conv_transpose3d(x.double().cpu(), w.double().cpu(), None, 2, 1, 1, 1, 1)
        print(((y.double().cpu() - ref).norm() / ref.norm()).item() < 5e-3)
    """)
    # ("0": the automatic choice, here the fused kernel's w-phase pairs)
    for value, expected in [("1", "reference"), ("0", "fused_bf16_bn32_mfast_pair")]:
        env = dict(os.environ, CONVT3D_FORCE_REFERENCE=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=600)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == [expected, "True"], out.stdout


# ---- determinism ---------------------------------------------------------------------------

def assert_bitwise_repeatable(spec, precision, layout, path_prefix=None):
    """Three calls on the same inputs give identical bits (no atomics, fixed reduction order);
    path_prefix: the kernel family the call must run."""
    dtype, tf32, _, _ = precision
    (x, w, b), _ = make(spec, dtype, layout)
    s, p, op, d, g = geometry_args(spec)
    with allow_tf32(tf32):
        if path_prefix is not None:
            assert ops._forward_path(x, w, s, p, op, d, g).startswith(path_prefix)
        ys = [ic.conv_transpose3d(x, w, b, s, p, op, g, d) for _ in range(3)]
    for y in ys[1:]:
        assert torch.equal(y, ys[0])


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
def test_bitwise_deterministic(layout, precision):
    spec = (2, 32, 48, (6, 7, 8), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, True)
    assert_bitwise_repeatable(spec, precision, layout)


def test_plan_cache_follows_switches_tf32_and_alignment(monkeypatch):
    """Plans are cached per call signature (csrc/cuda/plan_cache.h); the same shapes must still
    get a new plan when a switch, the TF32 flag or x's alignment changes, and the old one back
    when it changes back. run() checks each call's path against the mirror and its result
    against fp64."""
    spec = (2, 16, 48, (4, 5, 6), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, True)
    bf16, tf32, strict = (PRECISIONS[i].values[0] for i in (0, 2, 3))
    (x, w, _), _ = make(spec, torch.bfloat16, "cl")
    paths = []
    for halo in ["", "0", "1", ""]:  # auto (twg on sm_90, else fused), v1, per-phase, auto
        if halo:
            monkeypatch.setenv("CONVT3D_HALO", halo)
        else:
            monkeypatch.delenv("CONVT3D_HALO", raising=False)
        run(spec, bf16, "cl")
        paths.append(ops._forward_path(x, w, *geometry_args(spec)))
    assert paths[0] == paths[3] and len(set(paths[:3])) == 3, paths
    for precision in [tf32, strict, tf32]:
        run(spec, precision, "cl")
    for layout in ["cl", "cl_misaligned", "cl"]:  # same strides; kvec only when aligned
        run(spec, bf16, layout)


def test_switch_values_outside_their_set_are_ignored(monkeypatch):
    """The CUDA switches (csrc/cuda/switches.cpp) take only their accepted values; anything else
    (out of the set or range, not decimal, empty) and unknown CONVT3D_ names leave the default,
    while an accepted value takes effect."""
    spec = (2, 16, 48, (4, 5, 6), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, True)
    (x, w, _), _ = make(spec, torch.bfloat16, "cl")
    auto = path_of(x, w, spec)
    for name, value in [("CONVT3D_HALO", "3"), ("CONVT3D_HALO", "abc"), ("CONVT3D_HALO", ""),
                        ("CONVT3D_HALO", "0x0"), ("CONVT3D_HALO", "0 1"), ("CONVT3D_PW_BN", "100"),
                        ("CONVT3D_TWG_BQW", "0"), ("CONVT3D_TWG_BQW", "300"),
                        ("CONVT3D_HALOX", "0"), ("CONVT3D_", "0")]:
        monkeypatch.setenv(name, value)
        assert path_of(x, w, spec) == auto, (name, value)
        monkeypatch.delenv(name)
    monkeypatch.setenv("CONVT3D_HALO", "0")  # accepted: v1
    assert path_of(x, w, spec).startswith("igemm_") and not auto.startswith("igemm_")


# ---- v2 halo tile (fwd/halo_kernel.cuh): each edge category again. These tests force the
# halo kernel (CONVT3D_HALO=1, read per call), so dilated and wide strict-fp32 geometries, which
# auto mode sends to v1, still exercise it; each runs twice, with the wgmma variant forced where
# the device has it (sm_90, CONVT3D_WGMMA=1) and with mma.sync (=0) -----------------------------


@pytest.fixture(params=["wgmma", "mma"])
def force_halo(request, monkeypatch):
    monkeypatch.setenv("CONVT3D_HALO", "1")
    monkeypatch.setenv("CONVT3D_TWG", "0")  # the halo kernel itself, not its twg replacement
    monkeypatch.setenv("CONVT3D_WGMMA", "1" if request.param == "wgmma" else "0")


def halo_name(mode, bn, loader):
    """The per-phase halo kernel's name: halo_wgmma_... where the wgmma variant runs."""
    wg = wgmma_expected(torch.device(DEVICE), mode)
    return f"{'halo_wgmma' if wg else 'halo'}_{mode}_bn{bn}_{loader}"


HALO_PHASE_CASES = [
    # N, Cin, Cout, size, kernel, stride, padding, output_padding, dilation, groups, bias
    (2, 8, 8, (5, 6, 7), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True),
    (1, 8, 8, (3, 4, 5), (3, 5, 7), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False),
    # stride 2, kernel 5: 3 or 2 taps per axis and phase; output_padding
    (1, 8, 8, (3, 4, 5), (5, 5, 5), (2, 2, 2), (2, 1, 0), (1, 0, 1), (1, 1, 1), 1, True),
    # mixed strides 1/2/3, 3 x 2 x 3 taps
    (1, 8, 8, (3, 4, 5), (3, 4, 9), (1, 2, 3), (1, 0, 4), (0, 1, 2), (1, 1, 1), 1, False),
    # dilation 2 at stride 1: taps two box positions apart (span 5 per axis)
    (1, 8, 8, (4, 5, 6), (3, 3, 3), (1, 1, 1), (2, 1, 0), (0, 0, 0), (2, 2, 2), 1, True),
    # gcd(stride, dilation) = 2: half the phases per axis empty (bias only) next to halo phases
    (1, 8, 8, (3, 4, 4), (5, 5, 5), (2, 2, 2), (2, 2, 2), (1, 1, 1), (2, 2, 2), 1, True),
    # stride 2, dilation 3: taps 2 apart, offsets 3 apart
    (1, 8, 8, (4, 4, 5), (5, 5, 5), (2, 2, 2), (4, 3, 2), (1, 0, 1), (3, 3, 3), 1, False),
    # stride 3, kernel 7: 3/2/2 taps; tiny input and large padding leave boxes with no x
    (1, 8, 8, (2, 2, 3), (7, 7, 7), (3, 3, 3), (4, 4, 4), (2, 0, 1), (1, 1, 1), 1, True),
]


@pytest.mark.usefixtures("force_halo")
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("case", range(len(HALO_PHASE_CASES)))
def test_halo_phase_patterns(case, precision):
    run(HALO_PHASE_CASES[case], precision, kernel="halo")


@pytest.mark.usefixtures("force_halo")
def test_halo_empty_phases_write_exactly_bias():
    """stride 2, dilation 2, kernel 5: odd outputs have no tap and are the bias; even ones have
    125 taps and run the halo kernel."""
    spec = (1, 8, 16, (3, 4, 5), (5, 5, 5), (2, 2, 2), (0, 0, 0), (0, 0, 0), (2, 2, 2), 1, True)
    for dtype in (torch.bfloat16, torch.float32):
        (x, w, b), _ = make(spec, dtype)
        assert ops._forward_path(x, w, *geometry_args(spec)).startswith("halo_")
        y = ic.conv_transpose3d(x, w, b, 2, 0, 0, 1, 2)
        odd = y[:, :, 1::2]
        assert odd.numel() > 0
        assert torch.equal(odd, b.view(1, -1, 1, 1, 1).expand_as(odd))


HALO_CHANNELS = [(1, 1), (3, 5), (17, 33), (48, 48), (1, 48), (48, 1), (8, 130)]


@pytest.mark.usefixtures("force_halo")
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("groups", [1, 3])
@pytest.mark.parametrize("cin_g,cout_g", HALO_CHANNELS)
def test_halo_channels_and_groups(cin_g, cout_g, groups, layout, precision):
    # Cin/g 17, 48: channel chunks with tails; Cout/g 130: three N tiles of BN 64 (five of 32 in
    # strict fp32), each reloading the box.
    spec = (2, cin_g * groups, cout_g * groups, (3, 4, 5), (3, 3, 3), (1, 1, 1), (1, 1, 1),
            (0, 0, 0), (1, 1, 1), groups, cin_g % 2 == 1)
    run(spec, precision, layout, kernel="halo")


HALO_BOX_TAILS = [
    (1, (1, 1, 1)),     # one output, box almost all tail
    (1, (3, 9, 17)),    # one past 8 / 16 in H and W
    (2, (5, 3, 7)),     # D tail, two samples
    (1, (1, 2, 40)),    # W longer than any box
    (1, (9, 17, 8)),    # many boxes, ragged D and H
]


@pytest.mark.usefixtures("force_halo")
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("cout", [16, 32, 64])
@pytest.mark.parametrize("n,size", HALO_BOX_TAILS)
def test_halo_box_tails(n, size, cout, precision):
    spec = (n, 16, cout, size, (3, 3, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False)
    run(spec, precision, kernel="halo")


HALO_LAYOUT_SPECS = [
    (2, 16, 24, (3, 4, 5), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True),
    (1, 32, 32, (3, 4, 6), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 4, False),
]


@pytest.mark.usefixtures("force_halo")
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", range(len(HALO_LAYOUT_SPECS)))
def test_halo_layouts(case, layout, precision):
    run(HALO_LAYOUT_SPECS[case], precision, layout, kernel="halo")


@pytest.mark.usefixtures("force_halo")
def test_halo_loader_is_chosen_only_when_legal():
    spec = HALO_LAYOUT_SPECS[0]
    for layout, loader in [("ncdhw", "mfast"), ("cl", "kvec"), ("sliced", "mfast"),
                           ("misaligned", "mfast"), ("cl_misaligned", "mfast"),
                           ("cl_narrow8", "kvec")]:
        (x, w, _), _ = make(spec, torch.bfloat16, layout)
        path = ops._forward_path(x, w, *geometry_args(spec))
        assert path == halo_name("bf16", 32, loader), (layout, path)


@pytest.mark.usefixtures("force_halo")
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("stream", ["1", "0"])
def test_halo_long_reduction(stream, layout, precision, monkeypatch):
    # K = 96 channels x 75 taps = 7200 (three channel chunks of the box in bf16, six in fp32);
    # channels_last streams the box through two buffers unless CONVT3D_BOX_STREAM=0.
    monkeypatch.setenv("CONVT3D_BOX_STREAM", stream)
    spec = (1, 96, 24, (3, 4, 5), (3, 5, 5), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True)
    run(spec, precision, layout, kernel="halo")


@pytest.mark.usefixtures("force_halo")
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
def test_halo_bitwise_deterministic(layout, precision):
    spec = (2, 32, 48, (5, 6, 9), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True)
    assert_bitwise_repeatable(spec, precision, layout, "halo_")


@pytest.mark.usefixtures("force_halo")
def test_halo_path_names():
    spec = (1, 8, 8, (3, 3, 3), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, False)
    cases = [  # (dtype, tf32, Cout, expected)
        (torch.bfloat16, True, 8, halo_name("bf16", 16, "mfast")),
        (torch.float16, True, 17, halo_name("fp16", 32, "mfast")),
        (torch.float32, True, 48, halo_name("tf32", 48, "mfast")),
        (torch.bfloat16, True, 49, halo_name("bf16", 64, "mfast")),
        (torch.float32, True, 100, halo_name("tf32", 64, "mfast")),
        (torch.float32, False, 48, "halo_3xtf32_bn32_mfast"),  # 3xTF32: mma.sync only
        (torch.float32, False, 16, "halo_3xtf32_bn16_mfast"),
        (torch.bfloat16, True, 300, halo_name("bf16", 64, "mfast")),
        (torch.float64, True, 8, "reference"),
    ]
    assert_path_names(spec, cases)


def test_halo_env_switch():
    """CONVT3D_HALO=0 keeps every call on v1, =1 takes the per-phase halo kernel wherever a box
    fits (here also a stride-2 kernel-3 NCDHW layer that auto mode gives the fused kernel's
    w-phase pairs), =2 the fused kernel (here also at stride 1, which auto mode leaves per
    phase); all stay correct."""
    code = textwrap.dedent("""
        import torch, torch.nn.functional as F
        import inductor_convt3d as ic
        for s, p in [(1, 1), (2, 1)]:
            x = torch.randn(2, 16, 3, 4, 5, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(16, 8, 3, 3, 3, device="cuda", dtype=torch.bfloat16)
            args = ([s] * 3, [p] * 3, [0] * 3, [1] * 3, 1)
            y = ic.conv_transpose3d(x, w, None, s, p, 0, 1, 1)
            ref = F.conv_transpose3d(x.double().cpu(), w.double().cpu(), None, s, p, 0, 1, 1)
            ok = ((y.double().cpu() - ref).norm() / ref.norm()).item() < 5e-3
            print(torch.ops.convt3d._forward_path(x, w, *args), ok)
    """)
    halo = halo_name("bf16", 16, "mfast")
    for value, expected in [
            ("0", ["igemm_bf16_bn16_mfast", "True", "igemm_bf16_bn16_mfast", "True"]),
            ("1", [halo, "True", halo, "True"]),
            ("2", ["fused_bf16_bn16_mfast", "True", "fused_bf16_bn16_mfast", "True"]),
            ("", [halo, "True", "fused_bf16_bn32_mfast_pair", "True"])]:  # w-phase pairs
        env = dict(os.environ, CONVT3D_HALO=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=600)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == expected, (value, out.stdout)


def test_halo_auto_rule(monkeypatch):
    """Auto mode follows the measurements of 2026-11-22 (H200, then H100): strided layers
    without dilation (16-bit channels_last: with dilation too) take the fused kernel when it
    pays (16-bit with channels_last x, or >= 256 products per output and few taps per phase;
    fp32 with channels_last x, <= 2 chunks, few taps) and its box fits; otherwise the per-phase halo kernel from 8
    taps per phase on average (TF32 with channels_last x and more than two chunks: from 2),
    v1 below that, with dilation, and for strict fp32 wider than the halo's 3xTF32 BN cap of
    32. The per-phase kernel's wgmma variant runs only when CONVT3D_WGMMA=1 asks for it
    (sm_90); on sm_90 the transposed wgmma kernel replaces it for
    bf16/fp16/TF32/3xTF32 layers with 32 < Cout/g <= 64 (and at least 8 taps per phase on
    average, as the per-phase kernel has in auto mode), and replaces v1 and the per-phase kernel
    for TF32 and 3xTF32 with 32 < Cout/g <= 64 (either layout), v1 and the fused kernel for
    strided 16-bit layers with 32 < Cout/g <= 64 and NCDHW x, the fused kernel for such layers
    with channels_last x, short phases and a TMA box, and the per-phase kernel of stride-1 layers with
    16 < Cout/g <= 32 where two stacked depth planes per warpgroup cost less than one, or
    8 < Cout/g <= 16 with four stacked w taps (a phase of at least 4 w taps, where four
    depth planes do not fit); and the
    non-overlapping kernel takes kernel ==
    stride layers with channels_last or NCDHW x (16-bit and TF32), over the fused kernel too."""
    monkeypatch.delenv("CONVT3D_HALO", raising=False)
    monkeypatch.delenv("CONVT3D_WGMMA", raising=False)
    monkeypatch.delenv("CONVT3D_TWG", raising=False)
    monkeypatch.delenv("CONVT3D_PW", raising=False)
    wg = torch.cuda.get_device_capability() == (9, 0)  # the default build has sm_90a code
    twg = "twg" if wg else "halo"
    base = (1, 8, 16, (3, 4, 5), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, False)
    dilated = base[:8] + ((2, 2, 2),) + base[9:]
    wide = base[:2] + (48,) + base[3:]
    k4s2 = (1, 16, 16, (3, 4, 5), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, False)
    k3s2 = (1, 16, 16, (3, 4, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, False)
    k3s2_k324 = k3s2[:1] + (96,) + k3s2[2:]  # 96 x 27 / 8 = 324 products per output
    k3s2_deep = k3s2[:1] + (1024,) + k3s2[2:]  # 64 fp32 chunks: the fused box does not fit
    k357s2 = (1, 32, 32, (3, 4, 6), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 1,
              False)
    k4s2_deep = k4s2[:1] + (1024,) + k4s2[2:]  # 8 taps per phase: per-phase halo
    k2s2_deep = k3s2_deep[:4] + ((2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0)) + k3s2_deep[8:]
    k2s2 = k3s2[:4] + ((2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0)) + k3s2[8:]
    k3s2_dil = k3s2[:8] + ((2, 2, 2),) + k3s2[9:]
    k3s2_wide = k3s2[:2] + (48,) + k3s2[3:]
    k3s2_dil_wide = k3s2_dil[:2] + (48,) + k3s2_dil[3:]
    v1_or_twg = "twg" if wg else "igemm"
    v1_or_pw = "pw" if wg else "igemm"  # kernel == stride, channels_last: one dense GEMM
    base64 = base[:2] + (64,) + base[3:]  # BN 64, channels_last bf16: mma.sync unless asked
    # 16 < Cout <= 32 at stride 1: twg with two stacked planes where its cost model takes them
    narrow = (1, 48, 24, (5, 5, 5), (3, 3, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False)
    k4s2_narrow = k4s2_deep[:2] + (24,) + k4s2_deep[3:]  # strided: not measured, per-phase halo
    # suite case 1's kernel, Cout 16, lines too long for four depth planes: four stacked w
    # taps (Cout 8: half of M, per-phase halo)
    k357 = (1, 16, 16, (4, 8, 40), (3, 5, 7), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1,
            False)
    k357_8 = k357[:2] + (8,) + k357[3:]
    bf, f32 = torch.bfloat16, torch.float32
    for spec, dtype, tf32, layout, mode, kind in [
        (k4s2, bf, True, "cl", "bf16", "fused"),
        (k4s2, bf, True, "ncdhw", "bf16", "halo"),  # 16 x 64 / 8 = 128 products: per phase
        (k3s2, bf, True, "cl", "bf16", "fused"),
        (k3s2, bf, True, "ncdhw", "bf16", "fused"),  # w-phase pairs (NCDHW y), 16-bit too
        (k3s2_k324, bf, True, "ncdhw", "bf16", "fused"),
        # suite case 5's kernel (13 taps per phase, 420 products per output): per phase
        (k357s2, bf, True, "ncdhw", "bf16", "halo"),
        (k357s2, bf, True, "cl", "bf16", "fused"),
        (k3s2, f32, False, "cl", "3xtf32", "fused"),
        (k3s2, f32, True, "ncdhw", "tf32", "fused"),  # TF32: w-phase pairs (NCDHW y)
        (k3s2, f32, False, "ncdhw", "3xtf32", "igemm"),  # strict fp32: no pairs
        (k3s2_deep, f32, True, "cl", "tf32", "halo"),  # > 2 chunks, >= 2 taps per phase
        (k2s2_deep, f32, True, "cl", "tf32", v1_or_pw),  # 1 tap per phase: no halo reuse
        (k2s2_deep, bf, True, "cl", "bf16", v1_or_pw),
        (k2s2_deep, f32, True, "ncdhw", "tf32", v1_or_pw),  # TF32 NCDHW: A transposed
        (k2s2_deep, f32, False, "cl", "3xtf32", v1_or_pw),  # strict fp32: split operands
        (k2s2_deep, f32, False, "ncdhw", "3xtf32", v1_or_pw),
        (k2s2, bf, True, "cl", "bf16", "pw" if wg else "fused"),  # pw over fused too
        (k3s2_deep, f32, True, "ncdhw", "tf32", "igemm"),
        (k4s2_deep, f32, True, "cl", "tf32", "halo"),
        (k3s2_dil, bf, True, "cl", "bf16", "fused"),
        (k3s2_dil, bf, True, "ncdhw", "bf16", "igemm"),
        (k3s2_wide, f32, True, "ncdhw", "tf32", v1_or_twg),  # TF32 NCDHW, 32 < Cout <= 64
        (k3s2_dil_wide, f32, True, "ncdhw", "tf32", v1_or_twg),
        (k3s2_dil_wide, f32, True, "cl", "tf32", v1_or_twg),  # TF32 either layout
        (k3s2_deep[:2] + (48,) + k3s2_deep[3:], f32, True, "cl", "tf32", twg),
        (k3s2_wide, bf, True, "ncdhw", "bf16", v1_or_twg),  # 16-bit NCDHW strided, Cout 48
        # channels_last 16-bit, Cout 48: twg by TMA where phases are short (k3 s2: 1-8 taps);
        # one 27-tap phase (dilated) keeps the fused kernel
        (k3s2_wide, bf, True, "cl", "bf16", "twg" if wg else "fused"),
        (k3s2_dil_wide, bf, True, "cl", "bf16", "fused"),
        (k3s2_wide, f32, False, "cl", "3xtf32", v1_or_twg),  # 3xTF32 like TF32
        (base, bf, True, "ncdhw", "bf16", "halo"),
        (dilated, bf, True, "ncdhw", "bf16", "igemm"),
        (base, f32, False, "ncdhw", "3xtf32", "halo"),
        (wide, f32, False, "ncdhw", "3xtf32", v1_or_twg),
        (narrow, f32, False, "ncdhw", "3xtf32", twg),
        (wide, f32, True, "ncdhw", "tf32", twg),
        (base64, bf, True, "cl", "bf16", twg),
        (base64, bf, True, "ncdhw", "bf16", twg),
        (base64, f32, True, "cl", "tf32", twg),
        (wide, bf, True, "ncdhw", "bf16", twg),
        # stride 2 with 8 taps per phase: twg too (its box streams through two buffers)
        (k4s2_deep[:2] + (64,) + k4s2_deep[3:], bf, True, "cl", "bf16", twg),
        (k4s2_deep[:2] + (64,) + k4s2_deep[3:], f32, True, "ncdhw", "tf32", twg),
        (narrow, bf, True, "ncdhw", "bf16", twg),
        (narrow, f32, True, "cl", "tf32", twg),
        (base[:2] + (24,) + base[3:], bf, True, "ncdhw", "bf16", "halo"),  # J = 1 costs less
        (k4s2_narrow, f32, True, "cl", "tf32", "halo"),
        (k357, bf, True, "ncdhw", "bf16", twg),
        (k357, f32, True, "cl", "tf32", twg),
        (k357, f32, False, "ncdhw", "3xtf32", twg),
        (k357_8, bf, True, "ncdhw", "bf16", "halo"),
    ]:
        (x, w, _), _ = make(spec, dtype, layout)
        path = path_of(x, w, spec, tf32)
        assert path.startswith(f"{kind}_{mode}_"), (spec, layout, mode, path)
        assert path == expected_path(x, spec, mode), path
        if spec == k357 and wg:
            assert "_w4_" in path, path
    (x, w, _), _ = make(base64, bf, "cl")
    monkeypatch.setenv("CONVT3D_WGMMA", "1")
    monkeypatch.setenv("CONVT3D_TWG", "0")
    assert path_of(x, w, base64, True) == ("halo_wgmma" if wg else "halo") + "_bf16_bn64_kvec"


# ---- fused halo (all phases per CTA) and densified groups ---------------------------------

FUSED_BOX_TAILS = [
    (1, (1, 1, 1)),     # one input position: a box of mostly tail in every phase
    (1, (3, 9, 17)),    # one past 8 / 16 in H and W
    (2, (5, 3, 7)),     # D tail, two samples
    (1, (1, 2, 40)),    # W longer than any box
]


# Layers with a w stride of 2 for the fused kernel's w-phase pairs: the phase patterns with one
# (empty phases, output_padding, dilation), box tails with odd and even W_out, groups.
PAIR_SPECS = [c for c in PHASE_CASES if c[5][2] == 2] + [
    # odd W_out (79) and channel stride, as suite case 6 (W_out 255): y's w lines start on odd
    # and even elements; boxes 32 wide, and a partial N tile (Cout 24)
    (1, 8, 24, (3, 5, 40), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True),
    (1, 16, 32, (3, 9, 17), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, True),
    (2, 16, 24, (5, 3, 7), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, False),
    (1, 8, 8, (1, 2, 40), (3, 3, 3), (1, 2, 2), (1, 0, 1), (0, 1, 1), (1, 1, 1), 1, True),
    (1, 32, 32, (4, 3, 9), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 4, False),
]


@pytest.mark.parametrize("precision", PRECISIONS[:3])
@pytest.mark.parametrize("case", range(len(PAIR_SPECS)))
def test_fused_pairs(case, precision, monkeypatch):
    """The fused kernel with w-phase pairs (CONVT3D_FUSED_PAIR=1, forced): right results with
    every element written (poisoned outputs), the same bits as storing a phase at a time (the K
    order per output is the same; only the tile shape differs), and the path says so."""
    spec = PAIR_SPECS[case]
    monkeypatch.setenv("CONVT3D_HALO", FORCE["fused"])
    monkeypatch.setenv("CONVT3D_FUSED_PAIR", "1")
    paired = run(spec, precision, kernel="fused")
    (x, w, _), _ = make(spec, precision[0])
    s, p, op, d, g = geometry_args(spec)
    with allow_tf32(precision[1]):
        assert ops._forward_path(x, w, s, p, op, d, g).startswith(
            f"fused_{precision[3]}_bn32_mfast_pair"), spec
    monkeypatch.setenv("CONVT3D_FUSED_PAIR", "0")
    single = run(spec, precision, kernel="fused")
    assert torch.equal(paired, single)


@pytest.mark.parametrize("res", ["1", "2"])
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("precision", PRECISIONS[:3])
@pytest.mark.parametrize("case", range(len(PAIR_SPECS)))
def test_fused_resident_weights(case, precision, layout, res, monkeypatch):
    """CONVT3D_FUSED_RES: the fused kernel with every tap's weights in shared memory, on
    persistent CTAs (1) or one box per CTA (2), gives the bits of the streamed fused kernel
    (CONVT3D_FUSED_RES=0; same K order per output) wherever it runs: BN 32, one N tile, one
    group."""
    spec = PAIR_SPECS[case]
    monkeypatch.setenv("CONVT3D_HALO", FORCE["fused"])
    monkeypatch.setenv("CONVT3D_FUSED_RES", "0")  # (the rule may take it in 16 bits)
    streamed = run(spec, precision, layout, kernel="fused")
    (x, w, _), _ = make(spec, precision[0], layout)
    with allow_tf32(precision[1]):
        before = ops._forward_path(x, w, *geometry_args(spec))
    monkeypatch.setenv("CONVT3D_FUSED_RES", res)
    resident = run(spec, precision, layout, expect_path=False, kernel="fused")
    with allow_tf32(precision[1]):
        path = ops._forward_path(x, w, *geometry_args(spec))
    groups_one = spec[9] == 1 or "_dense" in before
    eligible = "_bn32_" in before and spec[2] // spec[9] <= 32 and groups_one
    # (it also needs every tap's weights to fit in shared memory: sure for 27 taps, one chunk)
    fits = math.prod(spec[4]) <= 27 and spec[1] * x.element_size() <= 64
    assert path in (before, before + ("_res" if res == "1" else "_res1")), path
    assert ("_res" in path) == eligible or (not fits and "_res" not in path), (path, before)
    assert torch.equal(resident, streamed)


def test_fused_pairs_strict_fp32_not_paired(monkeypatch):
    """Strict fp32 has no paired kernel: CONVT3D_FUSED_PAIR=1 leaves it storing a phase at a
    time."""
    monkeypatch.setenv("CONVT3D_HALO", FORCE["fused"])
    monkeypatch.setenv("CONVT3D_FUSED_PAIR", "1")
    spec = PAIR_SPECS[-3]
    run(spec, PRECISIONS[3].values[0], kernel="fused")  # right result, path per the mirror
    (x, w, _), _ = make(spec, torch.float32)
    with allow_tf32(False):
        path = ops._forward_path(x, w, *geometry_args(spec))
    assert path.startswith("fused_3xtf32_") and "_pair" not in path, path


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("cout", [16, 32, 48, 64])
@pytest.mark.parametrize("n,size", FUSED_BOX_TAILS)
def test_fused_box_tails(n, size, cout, precision, monkeypatch):
    # output_padding 1: the last phase-0 row has no phase-1 partner, so boxes straddle phases
    # with different Q. Forced, so strict fp32 wider than 32 (auto: v1) runs fused too.
    monkeypatch.setenv("CONVT3D_HALO", FORCE["fused"])
    spec = (n, 16, cout, size, (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, True)
    run(spec, precision, kernel="fused")


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
def test_fused_long_reduction(layout, precision, monkeypatch):
    # Several channel chunks resident in the box at once: Cin 96 is three in bf16/fp16, Cin 64
    # four in fp32 (a deeper fp32 box would not fit). Forced: auto mode keeps fp32 NCDHW on v1.
    monkeypatch.setenv("CONVT3D_HALO", FORCE["fused"])
    cin = 96 if precision[3] in ("bf16", "fp16") else 64
    spec = (1, cin, 24, (3, 4, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True)
    run(spec, precision, layout, kernel="fused")


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
def test_fused_many_taps_per_phase(layout, precision, monkeypatch):
    # One warp writes a phase's tap entries (lane, lane + 32, ...): kernel 5 with stride 1 on
    # two axes gives phases of 75 and 50 taps, more than a warp's lanes. Forced: auto mode
    # keeps phases this long off the fused kernel.
    monkeypatch.setenv("CONVT3D_HALO", FORCE["fused"])
    spec = (1, 16, 16, (3, 4, 6), (5, 5, 5), (1, 1, 2), (2, 2, 2), (0, 0, 1), (1, 1, 1), 1, True)
    run(spec, precision, layout, expect_path=False, kernel="fused")


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("dense", ["1", "0"])
def test_dense_groups(dense, layout, precision, monkeypatch):
    """Suite cases 5 and 7's grouping (4 groups of 8 -> 8) and a stride-1 one run densified
    (block-diagonal weight, "_dense") unless CONVT3D_DENSE=0; both match fp64. (CONVT3D_GSC=0:
    in TF32, bf16 and fp16 the grouped small-channel kernel takes the (3, 5, 7) one,
    test_gsc_forward.py.)"""
    monkeypatch.setenv("CONVT3D_DENSE", dense)
    monkeypatch.setenv("CONVT3D_GSC", "0")
    dtype, tf32, _, _ = precision
    for spec in [
        (2, 32, 32, (3, 4, 6), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 4, True),
        (1, 32, 32, (4, 5, 6), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 4, False),
        (1, 12, 6, (4, 5, 6), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 3, True),
    ]:
        run(spec, precision, layout)
        (x, w, _), _ = make(spec, dtype, layout)
        assert path_of(x, w, spec, tf32).endswith("_dense") == (dense == "1")


# Densified layers whose zero weight blocks the mma.sync halo kernels skip: suite case 5's
# grouping (4 groups of 8 -> 8: one group per TF32 K step and n8 tile), groups of 4 -> 4 (two
# per K step and tile) and of 4 -> 2 (an n8 tile spans four groups), strided and not.
DENSE_SKIP_SPECS = [
    (2, 32, 32, (3, 4, 6), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 4, True),
    (1, 32, 32, (4, 5, 6), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 8, False),
    (1, 12, 6, (4, 5, 6), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 3, True),
]


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("kernel", ["halo", "fused"])
@pytest.mark.parametrize("case", range(len(DENSE_SKIP_SPECS)))
def test_dense_skip(case, kernel, layout, precision, monkeypatch):
    """Skipping a densified layer's zero weight blocks (CONVT3D_DENSE_SKIP=1, forced in every
    mode; the rule skips in strict fp32 and on the per-phase kernel at BN 32) gives right
    results on poisoned outputs and the same values as multiplying them (=0): a skipped block
    only ever added zeros."""
    spec = DENSE_SKIP_SPECS[case]
    monkeypatch.setenv("CONVT3D_HALO", "1" if kernel == "halo" else FORCE["fused"])
    monkeypatch.setenv("CONVT3D_TWG", "0")
    monkeypatch.setenv("CONVT3D_DENSE_SKIP", "1")
    skipped = run(spec, precision, layout, kernel=kernel)
    (x, w, _), _ = make(spec, precision[0], layout)
    assert path_of(x, w, spec, precision[1]).endswith("_skip_dense")
    monkeypatch.setenv("CONVT3D_DENSE_SKIP", "0")
    path = path_of(x, w, spec, precision[1])
    assert path.endswith("_dense") and "_skip" not in path, path
    assert torch.equal(skipped, run(spec, precision, layout, kernel=kernel))


@pytest.mark.parametrize("tf32", [True, False], ids=["tf32", "fp32strict"])
@pytest.mark.parametrize("kernel", ["halo", "fused"])
def test_dense_skip_keeps_non_finite_in_its_group(kernel, tf32, monkeypatch):
    """With groups of 8 channels a fp32 K step holds one group, so a skipping kernel never
    multiplies group 0's inf by another group's zero weights: only group 0's outputs turn
    non-finite, as in the reference. Multiplying every block (CONVT3D_DENSE_SKIP=0, the
    control) spreads NaN into the other groups."""
    spec = DENSE_SKIP_SPECS[0]
    monkeypatch.setenv("CONVT3D_HALO", "1" if kernel == "halo" else FORCE["fused"])
    monkeypatch.setenv("CONVT3D_TWG", "0")
    monkeypatch.setenv("CONVT3D_DENSE_SKIP", "1")  # fused TF32 skips only when forced
    (x, w, b), (x64, w64, b64) = make(spec, torch.float32)
    x[0, 3, 1, 2, 3] = x64[0, 3, 1, 2, 3] = float("inf")  # channel 3: group 0
    s, p, op, d, g = geometry_args(spec)
    want = F.conv_transpose3d(x64, w64, b64, s, p, op, g, d)
    assert torch.isfinite(want[:, 8:]).all() and not torch.isfinite(want[:, :8]).all()
    with allow_tf32(tf32):
        assert ops._forward_path(x, w, s, p, op, d, g).startswith(kernel + "_")
        y = ic.conv_transpose3d(x, w, b, s, p, op, g, d).cpu()
        monkeypatch.setenv("CONVT3D_DENSE_SKIP", "0")
        y_all = ic.conv_transpose3d(x, w, b, s, p, op, g, d).cpu()
    assert torch.equal(torch.isfinite(y), torch.isfinite(want))
    assert not torch.isfinite(y_all[:, 8:]).all()


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
def test_fused_bitwise_deterministic(layout, precision, monkeypatch):
    monkeypatch.setenv("CONVT3D_HALO", FORCE["fused"])
    spec = (2, 32, 48, (5, 6, 9), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, True)
    assert_bitwise_repeatable(spec, precision, layout, "fused_")
