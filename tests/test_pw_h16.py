"""Strict fp32 on the non-overlapping kernel (csrc/cuda/fwd/pw_kernel.cuh, H16) as three fp16
products of power-of-two-scaled operands (h16_split.cuh, name "pw_3xtf32_bn<BN>_h16_..."): A split
in registers, B repacked into fp16 halves or (read from w) split in shared memory. Against an
fp64 F.conv_transpose3d on the CPU and against the same kernel's TF32 operands
(CONVT3D_PW_H16=0): both within fp32's 1e-6, at any scale, with NaN and inf where the reference
has them. test_pw_forward.py's strict fp32 cases run it too wherever x is dense."""
import math

import pytest
import torch

from dispatch_mirror import expected_path
from test_fast_forward import allow_tf32, assert_bitwise_repeatable, check, make, reference
from test_twg_forward import twg_available as wgmma_device  # sm_90a kernels run here
from test_twg_h16 import SCALES, STRICT, h16_any_scale, h16_non_finite, h16_wide_range, strict_call

pytestmark = pytest.mark.cuda

# N, Cin, Cout, size, kernel, stride, padding, output_padding, dilation, groups, bias
PW_H16_SPECS = [
    # suite case 9's shape: K = 256 in 8 chunks (BN 128, one fold of the partial sums)
    (2, 256, 128, (4, 4, 8), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    # Cin 36: a partial 16-channel group and a partial chunk; 2.5 N tiles of 128
    (1, 36, 40, (3, 4, 8), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    # K = 320 > 256: BN 64 with the partial sums folded into acc after 8 chunks
    (1, 320, 16, (2, 4, 8), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False),
    # k = s = 1: one tap, BN 64, an M tail (4 x 6 x 9 = 216 rows)
    (1, 64, 48, (4, 6, 9), (1, 1, 1), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    # two groups of 40 channels (a partial second chunk), padding that drops outputs
    (1, 80, 64, (3, 5, 8), (2, 2, 2), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 2, True),
    # per-axis kernel = stride (1, 2, 4): k_w 4 NCDHW stores
    (2, 48, 24, (3, 4, 8), (1, 2, 4), (1, 2, 4), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False),
    # K of one chunk (Cin 32): three stages would run past the next tile; TF32 operands
    (1, 32, 40, (3, 4, 8), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
]
LAYOUTS = ["ncdhw", "cl"]


def two_chunks(spec):
    """fp16 products need K (Cin/g) of two 32-channel chunks or more (three stages)."""
    return spec[1] // spec[9] > 32


def h16_expected(x, spec):
    """The mirror's path (tests/dispatch_mirror.py) and whether it runs the pw kernel's fp16
    products."""
    path = expected_path(x, spec, "3xtf32")
    return path, path.startswith("pw_3xtf32_") and "_h16_" in path


@pytest.fixture(autouse=True)
def force_pw(monkeypatch):
    monkeypatch.setenv("CONVT3D_PW", "1")
    monkeypatch.setenv("CONVT3D_PW_H16", "1")  # at any width (the rule: test_pw_h16_rule)


@pytest.mark.parametrize("wd", ["direct", "repack"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", range(len(PW_H16_SPECS)))
def test_pw_h16_matches_reference_and_tf32_operands(case, layout, wd, monkeypatch):
    """fp16 products where the mirror says, TF32 operands with CONVT3D_PW_H16=0: both right to
    1e-6 with errors of the same size; B read from w (split in shared memory) gives the bits
    of the repacked B (split by the repack) exactly."""
    spec = PW_H16_SPECS[case]
    if wd == "repack":
        monkeypatch.setenv("CONVT3D_PW_WDIRECT", "0")
    (x, w, b), ref = make(spec, torch.float32, layout)
    want = reference(spec, ref)
    errs, ys = {}, {}
    for h16 in ("1", "0"):
        monkeypatch.setenv("CONVT3D_PW_H16", h16)
        path, ys[h16] = strict_call(x, w, b, spec)
        errs[h16] = check(ys[h16], want, 1e-6)
        mirror, fp16 = h16_expected(x, spec)
        assert path == mirror, (path, mirror)
        if wgmma_device():
            assert path.startswith("pw_3xtf32_"), path
            assert fp16 == (h16 == "1" and two_chunks(spec)), path
    assert errs["1"] <= 4 * errs["0"] + 1e-9, errs  # the same 22-bit split
    if wd == "direct":
        monkeypatch.setenv("CONVT3D_PW_H16", "1")
        monkeypatch.setenv("CONVT3D_PW_WDIRECT", "0")
        assert torch.equal(strict_call(x, w, b, spec)[1], ys["1"])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_pw_h16_rule(layout, monkeypatch):
    """CONVT3D_PW_H16 unset: fp16 products only where taps x Cout/g >= 512 (suite case 9: 1024
    columns; case 10's 256 do not earn back the scale pass over x)."""
    monkeypatch.delenv("CONVT3D_PW_H16")
    for spec in (PW_H16_SPECS[0], PW_H16_SPECS[4]):  # 1024 and 256 columns
        (x, w, b), ref = make(spec, torch.float32, layout)
        path, y = strict_call(x, w, b, spec)
        mirror, fp16 = h16_expected(x, spec)
        assert path == mirror, (path, mirror)
        if wgmma_device():
            assert fp16 == (math.prod(spec[4]) * (spec[2] // spec[9]) >= 512), path
        check(y, reference(spec, ref), 1e-6)


@pytest.mark.parametrize("bn", [64, 128])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_pw_h16_bn(bn, layout, monkeypatch):
    """CONVT3D_PW_BN: BN 64 runs fp16 products at any K, BN 128 only where K fits one fold
    (Cin/g <= 256); past it, BN 128 keeps TF32 operands."""
    monkeypatch.setenv("CONVT3D_PW_BN", str(bn))
    for spec in (PW_H16_SPECS[0], PW_H16_SPECS[2]):
        (x, w, b), ref = make(spec, torch.float32, layout)
        path, y = strict_call(x, w, b, spec)
        mirror, fp16 = h16_expected(x, spec)
        assert path == mirror, (path, mirror)
        if wgmma_device():
            assert path.startswith(f"pw_3xtf32_bn{bn}_"), path
            assert fp16 == (bn == 64 or spec[1] <= 256), path
        check(y, reference(spec, ref), 1e-6)


def pw_fast():
    x = make(PW_H16_SPECS[0], torch.float32, "ncdhw")[0][0]
    return h16_expected(x, PW_H16_SPECS[0])[1]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("ex,ew", SCALES)
def test_pw_h16_any_scale(ex, ew, layout):
    h16_any_scale(PW_H16_SPECS[1], layout, ex, ew, pw_fast())


@pytest.mark.parametrize("layout", LAYOUTS)
def test_pw_h16_wide_range_within_one_tensor(layout):
    h16_wide_range(PW_H16_SPECS[0], layout)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_pw_h16_non_finite(layout):
    h16_non_finite(PW_H16_SPECS[1], layout, pw_fast())


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", [0, 2])
def test_pw_h16_bitwise_deterministic(case, layout):
    with allow_tf32(False):
        assert_bitwise_repeatable(PW_H16_SPECS[case], STRICT, layout,
                                  "pw_3xtf32_" if pw_fast() else None)
