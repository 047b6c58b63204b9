"""The grouped small-channel forward (csrc/cuda/fwd/gsc_kernel.cuh: 8 input and 8 output channels
per group, stride 2, dilation 1, TF32, bf16 and fp16, one group per MMA; a CTA walks depth steps
over a ring of input planes) against an fp64 F.conv_transpose3d on the CPU.

Covers the kernel size it is built for (3, 5, 7), every padding parity on each axis (which taps a
phase starts at), output_padding, odd output widths (scalar stores), windows wholly inside y (stores
without checks), outputs wider than one 96-column block, odd output depths (a last step with one
plane), chains of one step and of several (the ring wrapping), groups 1-5, bias, N > 1, layouts
(channels_last: the vector loader; NCDHW, sliced and misaligned x: the strided loader), its switch
(CONVT3D_GSC) against the other families' forcing switches, the layers it must leave to other
kernels, and bitwise repeatability. Outputs start as NaN (conftest), so an unwritten element fails
`check`.
"""
import pytest
import torch

from dispatch_mirror import gsc_expected
from test_fast_forward import (allow_tf32, assert_bitwise_repeatable, check, geometry_args,
                               make, ops, reference, run)

pytestmark = pytest.mark.cuda

TF32 = (torch.float32, True, 5e-4, "tf32")
# the kernel's precisions (gsc_prec.cuh)
PRECISIONS = [pytest.param(TF32, id="tf32"),
              pytest.param((torch.bfloat16, True, 5e-3, "bf16"), id="bf16"),
              pytest.param((torch.float16, True, 5e-3, "fp16"), id="fp16")]

# N, Cin, Cout, size, kernel, stride, padding, output_padding, dilation, groups, bias
GSC_CASES = [
    # suite case 5's kernel and padding, shrunk
    (2, 32, 32, (3, 4, 6), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 4, False),
    # every other padding parity per axis, odd output width, bias
    (1, 16, 16, (4, 5, 9), (3, 5, 7), (2, 2, 2), (0, 1, 2), (0, 1, 0), (1, 1, 1), 2, True),
    (2, 24, 24, (5, 3, 11), (3, 5, 7), (2, 2, 2), (2, 3, 0), (1, 0, 1), (1, 1, 1), 3, True),
    # wider than one 96-column block (two and a partial third), odd depth
    (1, 8, 8, (4, 3, 110), (3, 5, 7), (2, 2, 2), (1, 2, 3), (0, 1, 1), (1, 1, 1), 1, True),
    # five groups, N > 1, one group
    (2, 40, 40, (3, 6, 13), (3, 5, 7), (2, 2, 2), (0, 1, 0), (1, 0, 1), (1, 1, 1), 5, True),
    (1, 8, 8, (5, 3, 4), (3, 5, 7), (2, 2, 2), (0, 2, 3), (1, 1, 0), (1, 1, 1), 1, False),
    # tiny input, padding beyond the kernel's reach on one axis: rows read only zeros
    (1, 8, 8, (1, 2, 1), (3, 5, 7), (2, 2, 2), (1, 3, 2), (1, 1, 1), (1, 1, 1), 1, True),
    # 10 x 48 output planes: h tile 0's 8 rows and window 0's 32 columns lie inside y (the
    # unchecked epilogue, gsc_epilogue<FULL>), the rest are partial (the checked one)
    (1, 16, 16, (3, 5, 24), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 2, True),
]
# Many chains (4 groups x 24 h tiles), so each splits into few runs of several depth steps (24
# output planes) and the ring of planes wraps; once per layout (the fp64 reference is slow).
LONG_CHAINS = (1, 32, 32, (12, 96, 5), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1),
               4, True)


def gsc_runs(spec, layout, precision=TF32):
    """Whether the gsc kernel runs spec (by the dispatch mirror), asserting the op agrees."""
    (x, w, _), _ = make(spec, precision[0], layout)
    with allow_tf32(precision[1]):
        path = ops._forward_path(x, w, *geometry_args(spec))
    expected = gsc_expected(x, spec, precision[3], w)
    assert (path == expected) if expected else not path.startswith("gsc_"), (path, expected)
    return expected is not None


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["ncdhw", "cl", "sliced", "misaligned", "cl_misaligned",
                                    "cl_narrow8"])
@pytest.mark.parametrize("case", range(len(GSC_CASES)))
def test_gsc_geometries(case, layout, precision, monkeypatch):
    monkeypatch.delenv("CONVT3D_GSC", raising=False)
    spec = GSC_CASES[case]
    assert gsc_runs(spec, layout, precision)  # every layout: the strided loader takes any
    run(spec, precision, layout, kernel="gsc")


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
def test_gsc_long_chains(layout, precision, monkeypatch):
    monkeypatch.delenv("CONVT3D_GSC", raising=False)
    run(LONG_CHAINS, precision, layout, kernel="gsc")


def set_g2(monkeypatch, value):
    """CONVT3D_GSC_G2 set to value, or unset (the default: two groups per CTA) for None."""
    if value is None:
        monkeypatch.delenv("CONVT3D_GSC_G2", raising=False)
    else:
        monkeypatch.setenv("CONVT3D_GSC_G2", value)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_gsc_loaders(precision, monkeypatch):
    """channels_last x in aligned 16-byte channel runs takes the vector loader ("_cl"; in 16 bits
    with an even number of groups two groups per CTA, "_cl2", unless CONVT3D_GSC_G2=0); every
    other layout the strided one."""
    monkeypatch.delenv("CONVT3D_GSC", raising=False)
    cl = "_cl" if precision[3] == "tf32" else "_cl2"
    for spec, g2, tails in [
            (GSC_CASES[0], None, [("cl", cl), ("cl_narrow8", cl), ("ncdhw", "_strided"),
                                  ("cl_misaligned", "_strided"), ("sliced", "_strided")]),
            (GSC_CASES[0], "0", [("cl", "_cl"), ("ncdhw", "_strided")]),
            (GSC_CASES[2], None, [("cl", "_cl")])]:  # three groups
        set_g2(monkeypatch, g2)
        with allow_tf32(precision[1]):
            for layout, tail in tails:
                (x, w, _), _ = make(spec, precision[0], layout)
                path = ops._forward_path(x, w, *geometry_args(spec))
                assert path == f"gsc_{precision[3]}_k357" + tail, (layout, g2, path)


@pytest.mark.parametrize("precision", PRECISIONS[1:])
@pytest.mark.parametrize("case", [0, 1, 7])  # even numbers of groups
def test_gsc_two_groups_match_one(case, precision, monkeypatch):
    """16-bit channels_last with two groups per CTA ("_cl2": cp.async planes, lane-pair shuffled
    whole-sector stores) gives bitwise the one-group kernel's result (the same MMAs in the same
    order), both right."""
    monkeypatch.delenv("CONVT3D_GSC", raising=False)
    spec = GSC_CASES[case]
    outs = []
    for g2 in (None, "0"):
        set_g2(monkeypatch, g2)
        assert gsc_runs(spec, "cl", precision)
        outs.append(run(spec, precision, "cl", kernel="gsc"))
    assert torch.equal(outs[0], outs[1])


def test_gsc_switches(monkeypatch):
    """CONVT3D_GSC=0 never takes it; a switch forcing another family keeps it off, unless
    CONVT3D_GSC=1; every choice matches fp64."""
    spec = GSC_CASES[0]
    (x, w, _), _ = make(spec, torch.float32, "ncdhw")
    for env, other, gsc in [({"CONVT3D_GSC": "0"}, {}, False),
                            ({}, {"CONVT3D_HALO": "1"}, False),
                            ({}, {"CONVT3D_DENSE": "0"}, False),
                            ({"CONVT3D_GSC": "1"}, {"CONVT3D_HALO": "2"}, True),
                            ({}, {}, True)]:
        for name in ("CONVT3D_GSC", "CONVT3D_HALO", "CONVT3D_DENSE"):
            monkeypatch.delenv(name, raising=False)
        for name, value in {**env, **other}.items():
            monkeypatch.setenv(name, value)
        with allow_tf32(True):
            path = ops._forward_path(x, w, *geometry_args(spec))
        assert path.startswith("gsc_") == gsc, (env, other, path)
        run(spec, TF32, "ncdhw")


# Layers the kernel must leave to the others (still checked against fp64 by `run`).
NOT_GSC = [
    # 16 channels per group, stride 1, dilation 2, uninstantiated kernel sizes (k3 lost to the
    # fused kernel on suite case 7), Cout/g 4
    (1, 32, 32, (3, 4, 6), (3, 5, 7), (2, 2, 2), (1, 2, 3), (1, 1, 1), (1, 1, 1), 2, False),
    (1, 32, 32, (3, 4, 6), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 4, False),
    (1, 32, 32, (3, 4, 6), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (2, 2, 2), 4, False),
    (1, 32, 32, (3, 4, 6), (5, 5, 5), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 4, False),
    (1, 32, 16, (3, 4, 6), (3, 5, 7), (2, 2, 2), (1, 2, 3), (0, 0, 0), (1, 1, 1), 4, False),
    (1, 32, 32, (4, 5, 6), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 4, False),
    (1, 16, 16, (3, 4, 7), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 2, True),
]


@pytest.mark.parametrize("case", range(len(NOT_GSC)))
def test_gsc_not_taken(case, monkeypatch):
    monkeypatch.delenv("CONVT3D_GSC", raising=False)
    spec = NOT_GSC[case]
    with allow_tf32(True):
        assert not gsc_runs(spec, "ncdhw")
    run(spec, TF32, "ncdhw")


def test_gsc_not_strict_fp32(monkeypatch):
    """Strict fp32 (TF32 off) of a legal geometry runs the other kernels (GSC=1 too)."""
    monkeypatch.setenv("CONVT3D_GSC", "1")
    spec = GSC_CASES[0]
    precision = (torch.float32, False, 1e-6, "3xtf32")
    (x, w, _), _ = make(spec, precision[0], "ncdhw")
    with allow_tf32(precision[1]):
        assert not ops._forward_path(x, w, *geometry_args(spec)).startswith("gsc_")
    run(spec, precision, "ncdhw")


def test_gsc_weight_strides(monkeypatch):
    """The kernel gathers its weights with any strides: a channels_last and a transposed-copy w
    take it too and match fp64."""
    monkeypatch.delenv("CONVT3D_GSC", raising=False)
    spec = GSC_CASES[1]
    (x, w, b), ref = make(spec, torch.float32, "ncdhw")
    s, p, op, d, g = geometry_args(spec)
    for wt in (w.contiguous(memory_format=torch.channels_last_3d),
               w.transpose(3, 4).contiguous().transpose(3, 4)):
        with allow_tf32(True):
            assert ops._forward_path(x, wt, s, p, op, d, g).startswith("gsc_")
            got = ops.conv_transpose3d(x, wt, b, s, p, op, d, g)
        check(got, reference(spec, ref), 5e-4)


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
def test_gsc_bitwise_repeatable(layout, precision, monkeypatch):
    monkeypatch.delenv("CONVT3D_GSC", raising=False)
    assert_bitwise_repeatable(GSC_CASES[2], precision, layout, path_prefix="gsc_")
