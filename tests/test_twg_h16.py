"""Strict fp32 on the transposed wgmma kernel as three fp16 products of power-of-two-scaled operands
(csrc/cuda/fwd/h16_split.cuh, name "_h16"), against an fp64 F.conv_transpose3d on the CPU and
against the same kernel's TF32 operands (CONVT3D_TWG_H16=0): both within fp32's 1e-6, at any
scale of x and w, with NaN and inf where the reference has them. test_twg_forward.py's strict
fp32 cases run it too wherever x is dense."""
import pytest
import torch
import torch.nn.functional as F

import inductor_convt3d as ic
from dispatch_mirror import twg_h16, twg_run
from test_fast_forward import (allow_tf32, assert_bitwise_repeatable, check, geometry_args, make,
                               ops, reference, rel_err)
from test_twg_forward import twg_available

pytestmark = pytest.mark.cuda

STRICT = (torch.float32, False, 1e-6, "3xtf32")

H16_SPECS = [  # N, Cin, Cout, size, kernel, stride, padding, output_padding, dilation, groups, bias
    # suite case 4's shape: three whole 16-channel chunks, two stacked depth planes (Cout 24)
    (1, 48, 24, (4, 12, 16), (3, 3, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False),
    # Cin 20: a partial second chunk (the packed rows padded to 32 channels); bias
    (1, 20, 40, (4, 10, 16), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True),
    # suite case 12's shape: strided, phases of 1 and 2 taps per axis, a streamed box
    (2, 64, 64, (5, 6, 8), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, True),
    # suite case 11's shape: 8 chunks, 2 x 2 x 2 taps per phase (long weight stages)
    (1, 128, 56, (3, 8, 16), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, False),
    # two groups of 10 channels (a chunk past Cin/g), dilation 2
    (1, 20, 96, (3, 4, 12), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (2, 2, 2), 2, True),
    # suite case 1's shape: Cout 16, kernel (3, 5, 7): w-stacked taps
    (1, 16, 16, (5, 4, 7), (3, 5, 7), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False),
    # K = 96 x 105 taps: partial sums folded every 16 fp16 K steps
    (1, 96, 64, (4, 5, 6), (7, 5, 3), (1, 1, 1), (3, 2, 1), (0, 0, 0), (1, 1, 1), 1, True),
]
LAYOUTS = ["ncdhw", "cl", "cl_narrow8", "misaligned"]


def strict_call(x, w, b, spec):
    with allow_tf32(False):
        path = ops._forward_path(x, w, *geometry_args(spec))
        y = ic.conv_transpose3d(x, w, b, *geometry_args(spec)[:3], spec[9], spec[8])
    return path, y


@pytest.fixture(autouse=True)
def force_twg(monkeypatch):
    monkeypatch.setenv("CONVT3D_TWG", "1")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", range(len(H16_SPECS)))
def test_h16_matches_reference_and_tf32_operands(case, layout, monkeypatch):
    """fp16 products ("_h16") where the mirror says (strict fp32, dense x), TF32 operands with
    CONVT3D_TWG_H16=0; both right to 1e-6, with errors of the same size."""
    spec = H16_SPECS[case]
    (x, w, b), ref = make(spec, torch.float32, layout)
    want = reference(spec, ref)
    errs = {}
    for h16 in ("1", "0"):
        monkeypatch.setenv("CONVT3D_TWG_H16", h16)
        path, y = strict_call(x, w, b, spec)
        errs[h16] = check(y, want, 1e-6)
        if twg_available() and twg_run(spec, "3xtf32", h16=twg_h16(x, "3xtf32")) is not None:
            assert path.startswith("twg_3xtf32_"), path
            assert ("_h16" in path) == (h16 == "1" and twg_h16(x, "3xtf32")), path
    assert errs["1"] <= 4 * errs["0"] + 1e-9, errs  # the same 22-bit split


# (x exponent, w exponent): values scaled by 2^ex and 2^ew, far outside fp16's range both ways
SCALES = [(-100, 0), (100, 0), (0, -60), (0, 60), (90, -90), (-60, -40), (-130, 20)]


def h16_any_scale(spec, layout, ex, ew, fast):
    """The power-of-two scales bring any x and w into fp16's range and back exactly: relative
    error at fp32 level for values near 2^-130 (fp32 subnormals) to 2^100. fast: fp16 products
    must run (a fast kernel is there)."""
    (x, w, _), _ = make(spec, torch.float32, layout)
    x, w = x * 2.0 ** ex, w * 2.0 ** ew
    x64, w64 = x.double().cpu(), w.double().cpu()  # the exact fp32 values
    path, y = strict_call(x, w, None, spec)
    if fast:
        assert "_h16" in path, path
    want = F.conv_transpose3d(x64, w64, None, *geometry_args(spec)[:3], spec[9], spec[8])
    err = rel_err(y.double().cpu(), want)
    # x near 2^-130 is itself rounded to fp32 subnormals (the reference has those values)
    assert err <= 1e-6, f"relative L2 error {err:.3e}"


def h16_wide_range(spec, layout):
    """Values 2^-40 of x's largest beside it: they lose bits (fp16 subnormals after scaling), an
    error far below the output's norm; check's pointwise band (relative to the rms) holds."""
    (x, w, _), _ = make(spec, torch.float32, layout)
    x[:, :, :2] *= 2.0 ** -40  # two depth planes of tiny values
    x[0, 0, -1, -1, -1] = 1e3
    _, y = strict_call(x, w, None, spec)
    want = F.conv_transpose3d(x.double().cpu(), w.double().cpu(), None,
                              *geometry_args(spec)[:3], spec[9], spec[8])
    check(y, want, 1e-6)


def h16_non_finite(spec, layout, fast):
    """NaN and inf in x are left out of its scale; a NaN stays NaN and inf makes its outputs
    non-finite (NaN where the small part's inf - inf is, as in 3xTF32); every other output is
    finite and right. (Non-finite weights are not tested: a box kernel multiplies them by the
    zeros that pad x, which the reference never does.)"""
    (x, w, b), _ = make(spec, torch.float32, layout)
    x[0, 1, 0, 1, 2] = float("nan")
    x[0, 7, 2, 1, 1] = float("inf")
    x[-1, 3, 1, 2, 0] = -float("inf")
    path, y = strict_call(x, w, b, spec)
    if fast:
        assert "_h16" in path, path
    want = F.conv_transpose3d(x.double().cpu(), w.double().cpu(), b.double().cpu(),
                              *geometry_args(spec)[:3], spec[9], spec[8])
    y = y.double().cpu()
    assert not torch.isfinite(want).all()
    assert torch.equal(torch.isfinite(y), torch.isfinite(want))
    fin = torch.isfinite(want)
    assert rel_err(y[fin], want[fin]) <= 1e-6


@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("ex,ew", SCALES)
def test_h16_any_scale(ex, ew, layout):
    h16_any_scale(H16_SPECS[0], layout, ex, ew, twg_available())


@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
def test_h16_wide_range_within_one_tensor(layout):
    h16_wide_range(H16_SPECS[0], layout)


@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
def test_h16_non_finite(layout):
    h16_non_finite(H16_SPECS[1], layout, twg_available())


@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("case", [0, 2, 5])
def test_h16_bitwise_deterministic(case, layout):
    fits = twg_available() and twg_run(H16_SPECS[case], "3xtf32") is not None
    assert_bitwise_repeatable(H16_SPECS[case], STRICT, layout, "twg_" if fits else None)
