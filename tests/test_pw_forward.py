"""The non-overlapping forward (csrc/cuda/fwd/pw_kernel.cuh: kernel == stride, one dense GEMM of
input positions x (tap, Cout/g), rows scattered to y) against an fp64 F.conv_transpose3d on the
CPU.

CONVT3D_PW=1 (read per call) runs it wherever it is legal: bf16, fp16, TF32 or strict fp32
(3xTF32, split operands, or here fp16 products wherever legal, CONVT3D_PW_H16=1; a long-K case
checks its accuracy), channels_last x
with whole aligned 16-byte channel chunks, or x whose positions are contiguous per channel
(NCDHW, D*H*W a multiple of a 16-byte run, aligned: 16-bit A read M-major, TF32 A transposed in
shared memory, BN a multiple of k_w), kernel == stride on every axis (dilation 1 or a 1-tap
kernel) and output_padding <= padding, an sm_90a build on a compute capability 9.0 device.
Elsewhere the same calls must pick another kernel and still be right. Covers per-axis shapes,
padding that drops outputs, groups (densified or not), odd Cout/g (scalar stores), several K
chunks and N tiles, every BN, M tails, NCDHW x (M-major A: 16-byte and scalar epilogues, k_w 1 /
2 / 4, K row tails), B read straight from w (16-bit N-major, TF32 transposed in shared
memory; channels_last w with channels_last x, contiguous w with NCDHW x; strided, misaligned
and odd-width w), persistent CTAs over many tiles, TF32 with two K stages (lean) and bitwise
repeatability. Outputs start as NaN (conftest), so an unwritten element fails `check`."""
import pytest
import torch

from dispatch_mirror import expected_path
from test_fast_forward import (allow_tf32, assert_bitwise_repeatable, check, geometry_args, ic,
                               make, ops, reference, run)

pytestmark = pytest.mark.cuda

PRECISIONS16 = [  # the one-product modes (B straight from w, persistence: 16-bit and TF32)
    pytest.param((torch.bfloat16, True, 5e-3, "bf16"), id="bf16"),
    pytest.param((torch.float16, True, 5e-3, "fp16"), id="fp16"),
    pytest.param((torch.float32, True, 5e-4, "tf32"), id="tf32"),
]
STRICT = (torch.float32, False, 1e-6, "3xtf32")  # fp32 with TF32 off: split operands
PRECISIONS = PRECISIONS16 + [pytest.param(STRICT, id="fp32")]  # every mode the kernel has


@pytest.fixture(autouse=True)
def force_pw(monkeypatch):
    monkeypatch.setenv("CONVT3D_PW", "1")
    # strict fp32 as fp16 products wherever legal (dense x, K of two chunks or more), not only
    # on wide layers; TF32 operands elsewhere (test_pw_h16.py compares the two)
    monkeypatch.setenv("CONVT3D_PW_H16", "1")


def pw_legal(spec, precision, layout):
    """Whether the pw kernel runs (forced), by the dispatch mirror (tests/dispatch_mirror.py)."""
    if not torch.cuda.is_available():
        return False
    (x, _, _), _ = make(spec, precision[0], layout)
    return expected_path(x, spec, precision[3]).startswith("pw_")


def run_pw(spec, precision, layout="cl", seed=0):
    """Runs spec; asserts the pw kernel ran where it is legal (and only there), and the result."""
    legal = pw_legal(spec, precision, layout)
    run(spec, precision, layout, seed, expect_path=False, kernel="pw" if legal else None)
    if not legal:
        (x, w, _), _ = make(spec, precision[0], layout)
        with allow_tf32(precision[1]):
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

# NCDHW x (16-bit M-major A, TF32 transposed A): D*H*W a multiple of 8
PW_MN_CASES = [
    (2, 16, 16, (2, 4, 8), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    # Cin/g not whole 16-byte chunks (M-major A has no channel chunks): K rows zero-filled
    (2, 6, 16, (2, 4, 6), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    # odd w padding: pairs start at odd w (scalar stores), the first w output dropped
    (1, 16, 24, (2, 3, 8), (2, 2, 2), (2, 2, 2), (0, 1, 1), (0, 0, 1), (1, 1, 1), 1, False),
    # k_w = 1 and k_w = 4 (one and four outputs per column group)
    (1, 8, 12, (3, 2, 4), (2, 3, 1), (2, 3, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    (1, 8, 8, (2, 2, 6), (1, 2, 4), (1, 2, 4), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    # groups, two K chunks with a row tail (Cin/g 80), N tiles
    (2, 160, 64, (2, 2, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 2, True),
    # M tail (3 x 40 = 120 rows) and suite case 9's channels
    (3, 16, 8, (1, 5, 8), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    (1, 256, 128, (2, 4, 8), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
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


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["cl", "ncdhw"])
@pytest.mark.parametrize("case", range(len(PW_CASES)))
def test_pw_cases(case, layout, precision):
    run_pw(PW_CASES[case], precision, layout)


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["ncdhw", "misaligned", "sliced"])
@pytest.mark.parametrize("case", range(len(PW_MN_CASES)))
def test_pw_ncdhw(case, layout, precision):
    # NCDHW x runs "_mn" (16-bit: M-major A; fp32: A read into registers); misaligned or
    # strided x elsewhere.
    spec = PW_MN_CASES[case]
    legal = pw_legal(spec, precision, layout)
    mn = (torch.cuda.get_device_capability() == (9, 0) and layout == "ncdhw"
          and spec[4][2] in (1, 2, 4))
    assert legal == mn, (spec, layout, precision[3])
    run_pw(spec, precision, layout)
    if legal:
        (x, w, _), _ = make(spec, precision[0], layout)
        with allow_tf32(precision[1]):
            path = ops._forward_path(x, w, *geometry_args(spec))
        # a contiguous w holds each K row's columns in the (co, tap) order: the kernel reads it
        # (TF32: the repacked B always, w_direct_ok)
        assert path.endswith("_mn" if precision[3] == "tf32" else "_mn_wdirect"), path


@pytest.mark.parametrize("precision", PRECISIONS)
def test_pw_ncdhw_x_channels_last_w(precision):
    # a channels_last w makes y channels_last (PyTorch's rule): NCDHW x then takes another
    # kernel, since the M-major epilogue writes runs of y's w
    spec = PW_MN_CASES[0]
    dtype, tf32, bound, _ = precision
    (x, w, b), ref = make(spec, dtype, "ncdhw")
    w = w.contiguous(memory_format=torch.channels_last_3d)
    s, p, op, d, g = geometry_args(spec)
    with allow_tf32(tf32):
        assert not ops._forward_path(x, w, s, p, op, d, g).endswith("_mn")
        y = ic.conv_transpose3d(x, w, b, s, p, op, g, d)
    assert y.is_contiguous(memory_format=torch.channels_last_3d)
    check(y, reference(spec, ref), bound)


def test_pw_ncdhw_kernel_width_3():
    # BN is not a multiple of k_w = 3: a column group would straddle N tiles, so not pw
    spec = (1, 16, 16, (2, 2, 8), (2, 2, 3), (2, 2, 3), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True)
    precision = (torch.bfloat16, True, 5e-3, "bf16")
    assert not pw_legal(spec, precision, "ncdhw")
    run_pw(spec, precision, "ncdhw")


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("case", range(len(NOT_PW)))
def test_pw_not_legal(case, precision):
    spec = NOT_PW[case]
    assert not pw_legal(spec, precision, "cl")
    run_pw(spec, precision, "cl")


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("bn", [64, 128, 256])
def test_pw_every_bn(bn, precision, monkeypatch):
    monkeypatch.setenv("CONVT3D_PW_BN", str(bn))
    spec = (2, 64, 48, (3, 6, 5), (2, 2, 2), (2, 2, 2), (1, 0, 0), (0, 0, 0), (1, 1, 1), 1, True)
    run_pw(spec, precision, "cl")
    if pw_legal(spec, precision, "cl"):
        (x, w, _), _ = make(spec, precision[0], "cl")
        with allow_tf32(precision[1]):
            path = ops._forward_path(x, w, *geometry_args(spec))
        # strict fp32 with this dense x: fp16 products (forced: force_pw)
        h16 = "_h16" if precision[3] == "3xtf32" else ""
        assert path == f"pw_{precision[3]}_bn{bn}{h16}_kvec", path


@pytest.mark.parametrize("h16", ["1", "0"])
@pytest.mark.parametrize("layout", ["cl", "ncdhw"])
def test_pw_strict_fp32_long_k(layout, h16, monkeypatch):
    # strict fp32 over K = 4096 channels (32 chunks), as fp16 products (BN 64) and with TF32
    # operands: the big products go into acc with IEEE adds after every fold's K, so the tensor
    # core's truncating accumulation never spans the whole K
    monkeypatch.setenv("CONVT3D_PW_H16", h16)
    spec = (1, 4096, 16, (2, 4, 8), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True)
    assert pw_legal(spec, STRICT, layout)
    y = run(spec, STRICT, layout, kernel="pw")
    assert y.dtype == torch.float32


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["cl", "ncdhw"])
def test_pw_bitwise_repeatable(layout, precision):
    spec = PW_MN_CASES[7]
    prefix = "pw" if pw_legal(spec, precision, layout) else None
    assert_bitwise_repeatable(spec, precision, layout, path_prefix=prefix)


# B straight from w (16-bit): pw-legal in both layouts (Cin/g whole 16-byte chunks, D*H*W a
# multiple of 8)
PW_WD_CASES = [
    (2, 16, 16, (2, 4, 8), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    # two K chunks with a row tail (Cin 80), an N tile tail (taps x Cout = 192 over BN 128)
    (2, 80, 24, (2, 4, 6), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    # groups: group g's K rows start g Cin/g rows on
    (2, 160, 64, (2, 2, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 2, False),
    # taps x Cout = 15 is not whole 16-byte chunks: the repacked weight
    (1, 8, 5, (3, 2, 4), (3, 1, 1), (3, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    # 1x1x1: both column orders are w's own
    (1, 24, 40, (2, 3, 4), (1, 1, 1), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    # suite case 9's channels (four K chunks, eight N tiles); an M tail (120 rows)
    (1, 256, 128, (2, 4, 8), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    (3, 16, 8, (1, 5, 8), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    # padding that drops outputs
    (1, 16, 8, (4, 5, 6), (2, 2, 2), (2, 2, 2), (3, 2, 1), (1, 0, 1), (1, 1, 1), 1, False),
]


def w_in_layout(w, layout, wlayout):
    """w in the kernel's column order for x's layout (channels_last for channels_last x,
    contiguous for NCDHW x), then "natural", one element past a 16-byte boundary, or every
    other K row of a twice-as-tall tensor."""
    fmt = torch.channels_last_3d if layout == "cl" else torch.contiguous_format
    w = w.contiguous(memory_format=fmt)
    if wlayout == "natural":
        return w
    if wlayout == "misaligned":
        flat = torch.zeros(w.numel() + 1, dtype=w.dtype, device=w.device)
        v = flat[1:].view(w.permute(0, 2, 3, 4, 1).shape if layout == "cl" else w.shape)
        v = v.permute(0, 4, 1, 2, 3) if layout == "cl" else v
    else:
        big = torch.zeros(2 * w.shape[0], *w.shape[1:], dtype=w.dtype, device=w.device)
        v = big.contiguous(memory_format=fmt)[::2]
    v.copy_(w)
    return v


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("wlayout", ["natural", "misaligned", "rows_strided"])
@pytest.mark.parametrize("layout", ["cl", "ncdhw"])
@pytest.mark.parametrize("case", range(len(PW_WD_CASES)))
def test_pw_w_direct(case, layout, wlayout, precision, monkeypatch):
    spec = PW_WD_CASES[case]
    dtype, tf32, bound, mode = precision
    (x, w, b), ref = make(spec, dtype, layout)
    w = w_in_layout(w, layout, wlayout)
    s, p, op, d, g = geometry_args(spec)
    with allow_tf32(tf32):
        path = ops._forward_path(x, w, s, p, op, d, g)
        y = ic.conv_transpose3d(x, w, b, s, p, op, g, d)
    assert path == expected_path(x, spec, mode, w), path
    direct = wlayout != "misaligned" and case != 3 and mode != "tf32"
    assert path.endswith("_wdirect") == direct, path
    check(y, reference(spec, ref), bound)
    if direct:
        # the repacked weight feeds the same products in the same order: the same bits
        # (TF32: the transpose rounds as the repack does; 3xTF32: it splits as the K loop
        # splits the repacked B)
        monkeypatch.setenv("CONVT3D_PW_WDIRECT", "0")
        with allow_tf32(tf32):
            assert ops._forward_path(x, w, s, p, op, d, g) == path[:-len("_wdirect")]
            assert torch.equal(ic.conv_transpose3d(x, w, b, s, p, op, g, d), y)


@pytest.mark.parametrize("precision,bn", [
    *[pytest.param(p.values[0], bn, id=f"{p.id}-{bn}") for p in PRECISIONS16 for bn in (64, 256)],
    pytest.param(STRICT, 64, id="fp32-64"),  # 3xTF32: BN <= 128
])
@pytest.mark.parametrize("layout", ["cl", "ncdhw"])
def test_pw_w_direct_every_bn(bn, layout, precision, monkeypatch):
    # 16-bit: one, two and four 64-column blocks of N-major B per stage; 3xTF32: 64 columns
    # transposed and split; TF32 (the repacked B only) at those widths
    monkeypatch.setenv("CONVT3D_PW_BN", str(bn))
    spec = PW_WD_CASES[1]
    dtype, tf32, bound, mode = precision
    (x, w, b), ref = make(spec, dtype, layout)
    w = w_in_layout(w, layout, "natural")
    s, p, op, d, g = geometry_args(spec)
    with allow_tf32(tf32):
        path = ops._forward_path(x, w, s, p, op, d, g)
        y = ic.conv_transpose3d(x, w, b, s, p, op, g, d)
    assert path.startswith(f"pw_{mode}_bn{bn}_"), path
    assert path.endswith("_wdirect") == (mode != "tf32"), path
    check(y, reference(spec, ref), bound)


# 16-bit and strict fp32 pw CTAs are persistent: more tiles than CTAs fit at once (132 SMs x
# 1-3 CTAs on an H100), so each CTA runs several; K of 1 to 5 chunks (the stage of a tile's
# first chunk alternates between tiles), N tiles, groups and an M tail
PW_PERSIST_CASES = [
    (2, 16, 24, (7, 32, 67), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    (3, 80, 16, (7, 32, 67), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False),
    (3, 144, 16, (7, 32, 67), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    (3, 160, 64, (7, 32, 67), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 2, True),
]


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["cl", "ncdhw"])
@pytest.mark.parametrize("case", range(len(PW_PERSIST_CASES)))
def test_pw_persistent(case, layout, precision, monkeypatch):
    spec = PW_PERSIST_CASES[case]
    dtype, tf32, bound, mode = precision
    (x, w, b), ref = make(spec, dtype, layout)
    w = w_in_layout(w, layout, "natural")
    s, p, op, d, g = geometry_args(spec)
    with allow_tf32(tf32):
        assert ops._forward_path(x, w, s, p, op, d, g).startswith("pw_")
        y = ic.conv_transpose3d(x, w, b, s, p, op, g, d)
        check(y, reference(spec, ref), bound)
        # one CTA per tile (CONVT3D_PW_PERSIST=0) runs the same products in the same order
        monkeypatch.setenv("CONVT3D_PW_PERSIST", "0")
        assert torch.equal(ic.conv_transpose3d(x, w, b, s, p, op, g, d), y)


# TF32 lean CTAs (two K stages where three would halve the CTAs per SM): since A goes to the
# wgmma from registers and B is always repacked, three stages of BN 128 fit two CTAs per SM, so
# the rule takes none of these by itself; CONVT3D_PW_LEAN=1 forces two stages. K of 3 and 8
# chunks and a K tail (100 channels), one and two N tiles
PW_LEAN_CASES = [
    (2, 96, 16, (5, 8, 12), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    (1, 256, 32, (4, 8, 8), (2, 2, 2), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False),
    (2, 100, 24, (3, 8, 16), (2, 2, 2), (2, 2, 2), (1, 0, 0), (1, 0, 0), (1, 1, 1), 1, True),
]


@pytest.mark.parametrize("layout", ["cl", "ncdhw"])
@pytest.mark.parametrize("case", range(len(PW_LEAN_CASES)))
def test_pw_tf32_lean(case, layout, monkeypatch):
    spec = PW_LEAN_CASES[case]
    (x, w, b), ref = make(spec, torch.float32, layout)
    w = w_in_layout(w, layout, "natural")
    s, p, op, d, g = geometry_args(spec)
    with allow_tf32(True):
        path = ops._forward_path(x, w, s, p, op, d, g)
        assert path == expected_path(x, spec, "tf32", w), path
        assert "_s2_" not in path and "_wdirect" not in path, path
        y = ic.conv_transpose3d(x, w, b, s, p, op, g, d)
        check(y, reference(spec, ref), 5e-4)
        # two or three stages (CONVT3D_PW_LEAN=1 / 0) run the same products in the same order
        for env in ("0", "1"):
            monkeypatch.setenv("CONVT3D_PW_LEAN", env)
            path = ops._forward_path(x, w, s, p, op, d, g)
            assert path == expected_path(x, spec, "tf32", w) and ("_s2_" in path) == (env == "1")
            assert torch.equal(ic.conv_transpose3d(x, w, b, s, p, op, g, d), y), path
