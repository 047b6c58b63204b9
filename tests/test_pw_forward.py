"""The non-overlapping forward (csrc/cuda/fwd/pw_kernel.cuh: kernel == stride, one dense GEMM of
input positions x (tap, Cout/g), rows scattered to y) against an fp64 F.conv_transpose3d on the
CPU.

CONVT3D_PW=1 (read per call) runs it wherever it is legal: bf16, fp16 or TF32, channels_last x
with whole aligned 16-byte channel chunks, kernel == stride on every axis (dilation 1 or a
1-tap kernel) and output_padding <= padding, an sm_90a build on a compute capability 9.0
device. Elsewhere the same calls must pick another kernel and still be right. Covers per-axis
shapes, padding that drops outputs, groups (densified or not), odd Cout/g (scalar stores),
several K chunks and N tiles, every BN, M tails and bitwise repeatability. Outputs start as
NaN (conftest), so an unwritten element fails `check`."""
import pytest
import torch

from dispatch_mirror import non_overlapping
from test_fast_forward import (allow_tf32, assert_bitwise_repeatable, geometry_args, make, ops,
                               run)

pytestmark = pytest.mark.cuda

PRECISIONS16 = [  # every mode the kernel has (not strict fp32)
    pytest.param((torch.bfloat16, True, 5e-3, "bf16"), id="bf16"),
    pytest.param((torch.float16, True, 5e-3, "fp16"), id="fp16"),
    pytest.param((torch.float32, True, 5e-4, "tf32"), id="tf32"),
]


@pytest.fixture(autouse=True)
def force_pw(monkeypatch):
    monkeypatch.setenv("CONVT3D_PW", "1")


def pw_legal(spec, precision, layout):
    chunk = 8 if precision[0] != torch.float32 else 4
    return (torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)
            and layout == "cl" and (spec[1] // spec[9]) % chunk == 0 and non_overlapping(spec))


def run_pw(spec, precision, layout="cl", seed=0):
    """Runs spec; asserts the pw kernel ran where it is legal (and only there), and the result."""
    legal = pw_legal(spec, precision, layout)
    run(spec, precision, layout, seed, expect_path=False, kernel="pw" if legal else None)
    if not legal:
        (x, w, _), _ = make(spec, precision[0], layout)
        assert not ops._forward_path(x, w, *geometry_args(spec)).startswith("pw_")


# N, Cin, Cout, size, kernel, stride, padding, output_padding, dilation, groups, bias
PW_CASES = [
    (2, 16, 16, (3, 4, 5), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    # 1x1x1: a plain GEMM; dilation is then free
    (2, 24, 40, (3, 5, 7), (1, 1, 1), (1, 1, 1), (0, 0, 0), (0, 0, 0), (3, 1, 2), 1, True),
    # per-axis kernels, padding with output_padding <= padding
    (1, 8, 24, (3, 4, 5), (1, 2, 3), (1, 2, 3), (0, 1, 1), (0, 1, 0), (1, 1, 1), 1, False),
    # padding beyond the stride: whole input rows land outside y
    (1, 16, 8, (4, 5, 6), (2, 2, 2), (2, 2, 2), (3, 2, 1), (1, 0, 1), (1, 1, 1), 1, True),
    # groups with an N tile tail (taps x Cout/g = 192 over BN 128)
    (2, 32, 48, (3, 4, 5), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 2, True),
    # small groups, densified into one block-diagonal layer
    (1, 32, 32, (2, 3, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 4, False),
    # odd Cout/g: column pairs straddle taps, scalar stores
    (2, 8, 5, (3, 3, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    # deep: several K chunks and N tiles (suite case 9's channels, small volume)
    (1, 256, 128, (2, 3, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    # M tail: 105 rows, one partial tile; Cin with a K-chunk tail
    (1, 40, 16, (3, 5, 7), (3, 1, 2), (3, 1, 2), (1, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
]

NOT_PW = [  # must take another kernel (and be right)
    # output_padding > padding: the last output plane has no input
    (1, 16, 16, (3, 4, 5), (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 0, 0), (1, 1, 1), 1, True),
    # kernel != stride
    (1, 16, 16, (3, 4, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True),
    # dilation with a 2-tap kernel
    (1, 16, 16, (3, 4, 5), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (3, 1, 1), 1, False),
    # Cin/g not whole 16-byte chunks: no channel-vector loader
    (1, 6, 16, (3, 4, 5), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
]


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("layout", ["cl", "ncdhw"])
@pytest.mark.parametrize("case", range(len(PW_CASES)))
def test_pw_cases(case, layout, precision):
    run_pw(PW_CASES[case], precision, layout)


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("case", range(len(NOT_PW)))
def test_pw_not_legal(case, precision):
    spec = NOT_PW[case]
    assert not pw_legal(spec, precision, "cl")
    run_pw(spec, precision, "cl")


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("bn", [64, 128, 256])
def test_pw_every_bn(bn, precision, monkeypatch):
    monkeypatch.setenv("CONVT3D_PW_BN", str(bn))
    spec = (2, 64, 48, (3, 6, 5), (2, 2, 2), (2, 2, 2), (1, 0, 0), (0, 0, 0), (1, 1, 1), 1, True)
    run_pw(spec, precision, "cl")
    if pw_legal(spec, precision, "cl"):
        (x, w, _), _ = make(spec, precision[0], "cl")
        with allow_tf32(precision[1]):
            path = ops._forward_path(x, w, *geometry_args(spec))
        assert path == f"pw_{precision[3]}_bn{bn}_kvec", path


def test_pw_not_for_strict_fp32():
    spec = PW_CASES[0]
    run(spec, (torch.float32, False, 1e-6, "3xtf32"), "cl", expect_path=False)
    (x, w, _), _ = make(spec, torch.float32, "cl")
    with allow_tf32(False):
        assert not ops._forward_path(x, w, *geometry_args(spec)).startswith("pw_")


@pytest.mark.parametrize("precision", PRECISIONS16)
def test_pw_bitwise_repeatable(precision):
    spec = PW_CASES[7]
    prefix = "pw" if pw_legal(spec, precision, "cl") else None
    assert_bitwise_repeatable(spec, precision, "cl", path_prefix=prefix)
