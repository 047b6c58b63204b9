"""TF32 operand rounding in every fast kernel: round to nearest, ties away from zero, like cuDNN.

The kernels round x where it lands in shared memory or registers (the weight repack rounds w).
The scalar loaders add half a TF32 ulp to the bits and leave the low 13 bits for the tensor core
to drop (mma.cuh: tf32_operand); boxes copied by cp.async or TMA are rounded in place to exact
TF32 bits (tf32_rna, tf32_round4). Two checks per kernel, each with both layouts where the kernel takes
them:
- a call on x, w gives the same bits as a call on x, w rounded to TF32 beforehand (and not the
  same as on x, w truncated, so the check can see a kernel that truncates);
- NaN inputs whose high mantissa bits are all ones (CUDA's 0x7fffffff and its negation) give
  NaN exactly where the fp64 reference does: the add must not carry them into a zero. The same
  holds in strict fp32 (TF32 disallowed), whose 3xTF32 kernels split each operand into big and
  small TF32 parts, for such NaNs in x and in w.
Outputs start as NaN (conftest), so an unwritten element also fails the NaN check."""
import pytest
import torch
import torch.nn.functional as F

import inductor_convt3d as ic
from test_fast_forward import SUITE_SMALL, allow_tf32, geometry_args, ops

# kernel family -> (switches that force it, spec, layouts); the families past fused need sm_90a.
KERNELS = {
    "igemm": ({"CONVT3D_HALO": "0"}, SUITE_SMALL[11], ["ncdhw", "cl"]),
    "halo": ({"CONVT3D_HALO": "1", "CONVT3D_TWG": "0"}, SUITE_SMALL[1], ["ncdhw", "cl"]),
    "fused": ({"CONVT3D_HALO": "2"}, SUITE_SMALL[5], ["ncdhw", "cl"]),
    "twg": ({"CONVT3D_TWG": "1"}, SUITE_SMALL[11], ["ncdhw", "cl"]),
    "twg_cpasync": ({"CONVT3D_TWG": "1", "CONVT3D_TWG_TMA": "0"}, SUITE_SMALL[11], ["cl"]),
    "pw": ({"CONVT3D_PW": "1"}, SUITE_SMALL[9], ["cl"]),
    # NCDHW x read by positions (suite case 9's shape: D*H*W a multiple of the 16-byte runs)
    "pw_mn": ({"CONVT3D_PW": "1"}, SUITE_SMALL[8], ["ncdhw"]),
}
CASES = [(k, lay) for k, (_, _, lays) in KERNELS.items() for lay in lays]


def _bits(t):
    return t.contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF


def _from_bits(b, like):
    b = torch.where(b >= 2 ** 31, b - 2 ** 32, b).to(torch.int32)
    return b.view(torch.float32).view(like.shape)


def tf32_rna(t):
    """fp32 -> the nearest TF32 value, ties away from zero; inf and NaN unchanged."""
    b = _bits(t)
    return _from_bits(torch.where(torch.isfinite(t.contiguous()), (b + 0x1000) & 0xFFFFE000, b), t)


def tf32_trunc(t):
    return _from_bits(_bits(t) & 0xFFFFE000, t)


def _inputs(spec, layout, seed):
    n, cin, cout, size, k, _, _, _, _, g, bias = spec
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, cin, *size, generator=gen)
    w = torch.randn(cin, cout // g, *k, generator=gen)
    b = torch.randn(cout, generator=gen) if bias else None
    return x, w, b


def _call(x, w, b, spec, layout, tf32=True):
    s, p, op, d, g = geometry_args(spec)
    x = x.cuda()
    if layout == "cl":
        x = x.contiguous(memory_format=torch.channels_last_3d)
    with allow_tf32(tf32):
        path = ops._forward_path(x, w.cuda(), s, p, op, d, g)
        y = ic.conv_transpose3d(x, w.cuda(), None if b is None else b.cuda(), s, p, op, g, d)
    return path, y.cpu()


def _force(kernel, monkeypatch):
    switches, spec, _ = KERNELS[kernel]
    for name, value in switches.items():
        monkeypatch.setenv(name, value)
    return spec


def _check_path(path, kernel):
    family = kernel.split("_")[0]
    if not path.startswith(family + "_"):
        if family in ("twg", "pw") and torch.cuda.get_device_capability() != (9, 0):
            pytest.skip(f"{family} needs an sm_90a build on compute capability 9.0")
        raise AssertionError(f"{kernel} forced, {path} ran")
    if kernel == "twg_cpasync":
        assert not path.endswith("_tma"), path
    if kernel == "pw_mn":
        assert "_mn" in path, path


def test_rounding_helpers():
    v = torch.tensor([1 + 2 ** -11, 1 + 2 ** -11 - 2 ** -20, -(1 + 3 * 2 ** -11), torch.finfo(torch.float32).max,
                      float("inf"), float("nan")])
    r = tf32_rna(v)
    assert r[0] == 1 + 2 ** -10 and r[1] == 1.0 and r[2] == -(1 + 2 ** -9)  # ties away
    assert torch.isinf(r[3]) and torch.isinf(r[4]) and torch.isnan(r[5])  # max rounds up to inf
    assert tf32_trunc(v)[0] == 1.0


@pytest.mark.cuda
@pytest.mark.parametrize("kernel,layout", CASES)
def test_tf32_operands_round_to_nearest(kernel, layout, monkeypatch):
    spec = _force(kernel, monkeypatch)
    x, w, b = _inputs(spec, layout, seed=1)
    path, y = _call(x, w, b, spec, layout)
    _check_path(path, kernel)
    _, y_rounded = _call(tf32_rna(x), tf32_rna(w), b, spec, layout)
    _, y_trunc = _call(tf32_trunc(x), tf32_trunc(w), b, spec, layout)
    assert torch.equal(y, y_rounded), f"{path}: not the result of TF32-rounded operands"
    assert not torch.equal(y, y_trunc), f"{path}: the result of truncated operands"


@pytest.mark.cuda
@pytest.mark.parametrize("kernel,layout", CASES)
def test_tf32_keeps_all_ones_nans(kernel, layout, monkeypatch):
    spec = _force(kernel, monkeypatch)
    x, w, b = _inputs(spec, layout, seed=2)
    _all_ones_nans(x)
    path, y = _call(x, w, b, spec, layout)
    _check_path(path, kernel)
    _assert_nans_where_reference(path, x, w, b, y, spec)


def _all_ones_nans(t):
    flat = t.view(-1).view(torch.int32)
    flat[t.numel() // 3] = 0x7FFFFFFF       # CUDA's NaN: +0x1000 would carry it to -0.0
    flat[2 * t.numel() // 3] = -1           # 0xffffffff, its negation: would wrap to +0.0


def _assert_nans_where_reference(path, x, w, b, y, spec):
    s, p, op, d, g = geometry_args(spec)
    ref = F.conv_transpose3d(x.double(), w.double(), None if b is None else b.double(),
                             s, p, op, g, d)
    assert torch.isnan(ref).any()
    assert torch.equal(torch.isnan(y), torch.isnan(ref)), f"{path}: NaN lost or invented"


# Strict fp32: every family with x poisoned; pw (either x layout, B split in the kernel) also
# with w poisoned. (The box kernels multiply a NaN weight by the zeros that pad x at y's
# border, which the reference never does, so a NaN in w spreads there in any precision.)
STRICT_CASES = [(k, lay, "x") for k, lay in CASES] + [("pw", "cl", "w"), ("pw_mn", "ncdhw", "w")]


@pytest.mark.cuda
@pytest.mark.parametrize("kernel,layout,operand", STRICT_CASES)
def test_strict_fp32_keeps_all_ones_nans(kernel, layout, operand, monkeypatch):
    """3xTF32: big = x rounded, small = x - big rounded. An all-ones NaN makes big +-0 and small
    the canonical NaN, whose rounding add must not carry it into -0 (split_tf32)."""
    spec = _force(kernel, monkeypatch)
    x, w, b = _inputs(spec, layout, seed=3)
    _all_ones_nans(x if operand == "x" else w)
    path, y = _call(x, w, b, spec, layout, tf32=False)
    _check_path(path, kernel)
    assert "3xtf32" in path, path
    _assert_nans_where_reference(path, x, w, b, y, spec)
