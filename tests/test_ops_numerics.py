"""Forward and all three gradients against an fp64 F.conv_transpose3d reference on the CPU,
over a grid that covers every argument, dtype and layout. Fresh random inputs every test."""
import itertools

import pytest
import torch
import torch.nn.functional as F

import inductor_convt3d as ic
from conftest import bound_for, device_params, rel_err
from inductor_convt3d.testing import Geometry

ops = torch.ops.convt3d


def grid():
    """Geometries: each argument varied per axis, on small shapes (CI runs this on 2 cores)."""
    g = [
        Geometry(2, 3, 5, (4, 5, 6), (3, 3, 3)),                                  # plain, odd channels
        Geometry(2, 4, 4, (3, 4, 5), (2, 3, 4), (2, 2, 2), bias=False),            # stride 2
        Geometry(1, 4, 6, (3, 4, 5), (3, 5, 2), (1, 2, 3), (1, 2, 0)),             # per-axis stride/pad
        Geometry(2, 3, 3, (3, 3, 4), (3, 3, 3), (2, 3, 2), (1, 1, 1), (1, 2, 0)),  # output_padding
        Geometry(1, 2, 4, (4, 3, 3), (3, 2, 2), (1, 1, 1), (0, 0, 0), (0, 0, 0), (2, 3, 1)),  # dilation
        Geometry(2, 6, 4, (3, 4, 3), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 2),  # groups
        Geometry(1, 8, 8, (2, 3, 4), (3, 3, 3), (2, 2, 2), (1, 0, 2), (0, 1, 1), (1, 1, 1), 8),  # depthwise
        Geometry(1, 4, 4, (3, 3, 3), (3, 3, 3), (2, 2, 2), (0, 0, 0), (1, 1, 1), (2, 2, 2), 2),  # empty phases
        Geometry(1, 3, 2, (5, 4, 3), (1, 1, 1), (3, 2, 1)),                         # kernel 1, strided
        Geometry(1, 2, 3, (2, 2, 2), (4, 5, 3), (3, 2, 4), (2, 1, 0), (2, 1, 3), (2, 2, 1)),  # op < dil only
        Geometry(0, 3, 4, (3, 3, 3), (2, 2, 2), (2, 2, 2)),                         # batch 0
        Geometry(2, 1, 1, (4, 4, 4), (2, 2, 2), (2, 2, 2)),                         # one channel
    ]
    return g


GEOMS = grid()
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def reference(g, x, w, b, gy):
    """fp64 forward and gradients from PyTorch on the CPU."""
    x64, w64 = (t.detach().double().cpu().requires_grad_() for t in (x, w))
    b64 = b.detach().double().cpu().requires_grad_() if b is not None else None
    stride, padding, output_padding, dilation, groups = g.args()
    y = F.conv_transpose3d(x64, w64, b64, stride, padding, output_padding, groups, dilation)
    grads = torch.autograd.grad(y, [t for t in (x64, w64, b64) if t is not None], gy.double().cpu(),
                                allow_unused=True)
    return y, grads


def layout(x, kind):
    if kind == "contiguous":
        return x.contiguous()
    if kind == "channels_last_3d":
        return x.contiguous(memory_format=torch.channels_last_3d)
    # arbitrary strides: a view into a larger buffer, channel-interleaved and sliced
    big = torch.randn(x.shape[0], x.shape[1] * 2, *x.shape[2:-1], x.shape[-1] * 2 + 1,
                      dtype=x.dtype, device=x.device)
    view = big[:, ::2, ..., 1::2]
    view.copy_(x)
    assert view.numel() == 0 or not view.is_contiguous()
    return view


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kind", ["contiguous", "channels_last_3d", "strided"])
@pytest.mark.parametrize("g", GEOMS, ids=[f"g{i}" for i in range(len(GEOMS))])
def test_forward_and_grads(g, kind, dtype, device):
    x, w, b = g.make(device, dtype)
    x = layout(x, kind)
    stride, padding, output_padding, dilation, groups = g.args()
    y = ops.conv_transpose3d(x, w, b, stride, padding, output_padding, dilation, groups)
    gy = layout(torch.randn(y.shape, dtype=dtype, device=device), kind)
    y_ref, (gx_ref, gw_ref, *gb_ref) = reference(g, x, w, b, gy)
    bound = bound_for(dtype, device)

    assert y.dtype == dtype and y.device.type == device
    assert rel_err(y, y_ref) <= bound
    gx = ops.conv_transpose3d_grad_input(gy, w, stride, padding, output_padding, dilation, groups)
    gw = ops.conv_transpose3d_grad_weight(gy, x, list(g.kernel), stride, padding, output_padding,
                                          dilation, groups)
    assert gx.shape == x.shape and gw.shape == w.shape
    assert rel_err(gx, gx_ref) <= bound
    if g.N > 0:
        assert rel_err(gw, gw_ref) <= bound
    else:
        assert torch.equal(gw.cpu(), torch.zeros_like(gw.cpu()))  # empty batch: zero gradient
    if b is not None:
        gb = ops.conv_transpose3d_grad_bias(gy)
        assert rel_err(gb, gb_ref[0]) <= bound


@pytest.mark.parametrize("device", device_params())
def test_public_function_matches_F(device):
    """int and tuple arguments, batched and unbatched, with F's defaults and keyword order."""
    x = torch.randn(2, 4, 3, 4, 5, device=device, dtype=torch.float64)
    w = torch.randn(4, 3, 3, 2, 3, device=device, dtype=torch.float64)
    cases = [
        dict(),
        dict(stride=2, padding=1, output_padding=1),
        dict(stride=(2, 1, 3), padding=(1, 0, 1), output_padding=(1, 0, 2), dilation=(1, 2, 1)),
        dict(groups=2, dilation=2),
    ]
    for kwargs in cases:
        b = torch.randn(3 * kwargs.get("groups", 1), device=device, dtype=torch.float64)
        for bias in (None, b):
            ref = F.conv_transpose3d(x, w, bias, **kwargs)
            out = ic.conv_transpose3d(x, w, bias, **kwargs)
            assert rel_err(out, ref) <= 1e-12
            out_u = ic.conv_transpose3d(x[1], w, bias, **kwargs)  # unbatched 4-D
            ref_u = F.conv_transpose3d(x[1], w, bias, **kwargs)
            assert out_u.dim() == 4 and rel_err(out_u, ref_u) <= 1e-12


MEMORY_FORMAT_CASES = [
    ("contiguous", "contiguous"),
    ("channels_last_3d", "contiguous"),
    ("contiguous", "channels_last_3d"),
    ("channels_last_3d", "channels_last_3d"),
]


@pytest.mark.parametrize("xf,wf", MEMORY_FORMAT_CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("device", device_params())
def test_memory_format_matches_F(xf, wf, dtype, device):
    """Sizes and strides of our output equal F.conv_transpose3d's. On the CPU, PyTorch's own
    choice depends on its backend heuristics (mkldnn vs the slow path), so only batches where
    PyTorch picks mkldnn (N > 1) are compared there."""
    fmt = {"contiguous": torch.contiguous_format, "channels_last_3d": torch.channels_last_3d}
    x = torch.randn(3, 4, 3, 4, 5, device=device, dtype=dtype).contiguous(memory_format=fmt[xf])
    w = torch.randn(4, 2, 3, 3, 3, device=device, dtype=dtype).contiguous(memory_format=fmt[wf])
    ref = F.conv_transpose3d(x, w, stride=2)
    out = ic.conv_transpose3d(x, w, stride=2)
    assert out.shape == ref.shape
    assert out.stride() == ref.stride()


@pytest.mark.parametrize("device", device_params())
def test_deterministic(device):
    """Identical results from run to run (no atomics anywhere)."""
    g = Geometry(2, 8, 8, (4, 5, 6), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1))
    x, w, b = g.make(device, torch.float32)
    y0 = ops.conv_transpose3d(x, w, b, *g.args())
    gy = torch.randn_like(y0)
    first = [y0, ops.conv_transpose3d_grad_input(gy, w, *g.args()),
             ops.conv_transpose3d_grad_weight(gy, x, list(g.kernel), *g.args()),
             ops.conv_transpose3d_grad_bias(gy)]
    for _ in range(3):
        again = [ops.conv_transpose3d(x, w, b, *g.args()),
                 ops.conv_transpose3d_grad_input(gy, w, *g.args()),
                 ops.conv_transpose3d_grad_weight(gy, x, list(g.kernel), *g.args()),
                 ops.conv_transpose3d_grad_bias(gy)]
        for a, b_ in zip(first, again):
            assert torch.equal(a, b_)


@pytest.mark.cuda
def test_current_stream_and_device_guard():
    """Work is queued on the caller's current stream, on the tensors' device."""
    g = Geometry(2, 4, 4, (3, 4, 5), (3, 3, 3), (2, 2, 2))
    x, w, b = g.make("cuda", torch.float32)
    ref = ops.conv_transpose3d(x, w, b, *g.args())
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)  # keep the side stream busy: a wrong stream would race
        y = ops.conv_transpose3d(x, w, b, *g.args())
    side.synchronize()
    assert torch.equal(y, ref)
    last = torch.cuda.device_count() - 1
    with torch.cuda.device(last):  # current device differs from the data's when >1 GPU
        y2 = ops.conv_transpose3d(x, w, b, *g.args())
    assert y2.device == x.device and torch.equal(y2, ref)


@pytest.mark.parametrize("device", device_params())
def test_expanded_and_zero_stride_inputs(device):
    """Stride-0 (expanded) inputs and weights read correctly."""
    x = torch.randn(1, 3, 1, 1, 1, device=device, dtype=torch.float64).expand(2, 3, 3, 4, 2)
    w = torch.randn(3, 2, 1, 1, 1, device=device, dtype=torch.float64).expand(3, 2, 2, 3, 2)
    out = ic.conv_transpose3d(x, w, stride=2)
    ref = F.conv_transpose3d(x.contiguous(), w.contiguous(), stride=2)
    assert rel_err(out, ref) <= 1e-12
