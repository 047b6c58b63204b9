"""The output prefill (csrc/cuda/fwd/fill.cu, plan_prefill in plan.cpp): a per-phase
kernel writing a contiguous NCDHW y whose phases without taps hold at least half of the outputs
(stride > 1 along w) gets y filled with the bias (or zeros) first, and the CTAs of those phases
return at once. CONVT3D_PREFILL=1 prefills wherever a phase is empty, 0 never (read per call).

Checked against an fp64 F.conv_transpose3d on the CPU, in every kernel that can take it (v1,
the per-phase halo kernel, twg) and precision, with and without bias, planes whose sizes are
not whole 16-byte vectors, more planes than a grid's y extent, and bitwise against the same
call without the prefill. Outputs start as NaN (conftest), so an unwritten element fails."""
import pytest
import torch

from dispatch_mirror import expected_path
from test_fast_forward import (PRECISIONS, allow_tf32, check, geometry_args, ic, make, ops,
                               reference)

pytestmark = pytest.mark.cuda

# N, Cin, Cout, size, kernel, stride, padding, output_padding, dilation, groups, bias
PREFILL_CASES = [
    # suite case 8 shrunk (dilation 2 = stride: one output in 8 has taps); odd plane sizes
    (2, 32, 64, (4, 6, 6), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (2, 2, 2), 1, True),
    (2, 32, 64, (4, 6, 6), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (2, 2, 2), 1, False),
    # narrow Cout, stride 3 with dilation 3: one phase in 3 per axis has taps (26 of 27 empty)
    (1, 8, 16, (3, 4, 5), (3, 2, 3), (3, 3, 3), (0, 1, 2), (0, 2, 1), (3, 3, 3), 1, True),
    # kernel 1 < stride 2: only phase 0 has a tap; groups
    (2, 12, 18, (3, 4, 5), (1, 1, 1), (2, 2, 2), (0, 0, 0), (1, 1, 1), (1, 1, 1), 3, True),
]

# CONVT3D_HALO / CONVT3D_TWG values that select each per-phase kernel (None: auto mode).
KERNELS = {None: {}, "igemm": {"CONVT3D_HALO": "0", "CONVT3D_TWG": "0"},
           "halo": {"CONVT3D_HALO": "1", "CONVT3D_TWG": "0"}}


def run_both(spec, precision, monkeypatch, env):
    """The call with the prefill switch unset (the rule) and with it off: both right, the path
    as the mirror says, and the two results bitwise equal (same kernels, same bias values)."""
    dtype, tf32, bound, mode = precision
    (x, w, b), ref = make(spec, dtype)
    s, p, op, d, g = geometry_args(spec)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    ys, paths = [], []
    for pre in (None, "0"):
        if pre is None:
            monkeypatch.delenv("CONVT3D_PREFILL", raising=False)
        else:
            monkeypatch.setenv("CONVT3D_PREFILL", pre)
        with allow_tf32(tf32):
            path = ops._forward_path(x, w, s, p, op, d, g)
            y = ic.conv_transpose3d(x, w, b, s, p, op, g, d)
        assert path == expected_path(x, spec, mode, w), path
        check(y, reference(spec, ref), bound)
        ys.append(y)
        paths.append(path)
    assert torch.equal(ys[0], ys[1])
    return paths


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("case", range(len(PREFILL_CASES)))
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_prefill_matches_reference(kernel, case, precision, monkeypatch):
    paths = run_both(PREFILL_CASES[case], precision, monkeypatch, KERNELS[kernel])
    assert not paths[1].endswith("_prefill"), paths
    # auto mode may pick the fused kernel, which writes every phase of its box itself
    assert paths[0].endswith("_prefill") == (not paths[0].startswith("fused_")), paths
    if kernel is not None:
        assert paths[0].startswith(kernel + "_") and paths[0].endswith("_prefill"), paths


@pytest.mark.parametrize("precision", PRECISIONS)
def test_prefill_twg(precision, monkeypatch):
    """Case 8's NCDHW kernel in bf16, fp16 and TF32 is twg (a tile of 64 output channels)."""
    paths = run_both(PREFILL_CASES[0], precision, monkeypatch, {})
    if precision[3] != "3xtf32" and torch.cuda.get_device_capability() == (9, 0):
        assert paths[0].startswith("twg_"), paths


def test_prefill_more_planes_than_grid_y(monkeypatch):
    """N x Cout = 80000 planes of 27 outputs (grid y stops at 65535; 27 is no whole vector)."""
    spec = (2, 8, 40000, (2, 2, 2), (1, 1, 1), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True)
    paths = run_both(spec, PRECISIONS[2].values[0], monkeypatch, {})
    assert paths[0].endswith("_prefill"), paths


def test_prefill_rule(monkeypatch):
    """Channels_last y never; empty phases only along d (whole NCDHW lines per phase) only with
    CONVT3D_PREFILL=1; a layer without empty phases never (all on v1)."""
    monkeypatch.delenv("CONVT3D_PREFILL", raising=False)
    for k, v in KERNELS["igemm"].items():
        monkeypatch.setenv(k, v)
    spec = PREFILL_CASES[0]
    (x, w, b), _ = make(spec, torch.bfloat16)
    args = geometry_args(spec)
    assert ops._forward_path(x, w, *args).endswith("_prefill")
    xc = x.contiguous(memory_format=torch.channels_last_3d)
    assert not ops._forward_path(xc, w, *args).endswith("_prefill")
    wc = w.contiguous(memory_format=torch.channels_last_3d)  # makes y channels_last too
    assert not ops._forward_path(x, wc, *args).endswith("_prefill")
    d_only = (1, 8, 16, (3, 4, 5), (3, 3, 3), (2, 1, 1), (0, 1, 1), (0, 0, 0), (2, 1, 1), 1, True)
    (x2, w2, _), _ = make(d_only, torch.bfloat16)
    assert not ops._forward_path(x2, w2, *geometry_args(d_only)).endswith("_prefill")
    monkeypatch.setenv("CONVT3D_PREFILL", "1")
    assert ops._forward_path(x2, w2, *geometry_args(d_only)).endswith("_prefill")
    dense = (1, 8, 16, (3, 4, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True)
    (x3, w3, _), _ = make(dense, torch.bfloat16)
    assert not ops._forward_path(x3, w3, *geometry_args(dense)).endswith("_prefill")
    for s in (d_only, dense):
        (xs, ws_, _), _ = make(s, torch.bfloat16)
        assert ops._forward_path(xs, ws_, *geometry_args(s)) == expected_path(
            xs, s, "bf16", ws_)
