"""The eager drop-in's flat entry (convt3d::_conv_transpose3d_flat, csrc/flat_call.cpp): the
public op's results, gradients and rules, and only the public op in front of dispatch modes,
fake tensors and __torch_function__ modes."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

import inductor_convt3d as ic
from conftest import TF32_BOUND, device_params, rel_err

FLAT = torch.ops.convt3d._conv_transpose3d_flat.default
PUBLIC = torch.ops.convt3d.conv_transpose3d.default

# (kwargs of the drop-in, the same as the public op's lists)
CALLS = [
    (dict(stride=2, padding=1, output_padding=1, groups=2, dilation=1),
     ([2, 2, 2], [1, 1, 1], [1, 1, 1], [1, 1, 1], 2)),
    (dict(stride=(1, 2, 3), padding=(0, 1, 2), output_padding=(0, 1, 0), dilation=(2, 1, 1)),
     ([1, 2, 3], [0, 1, 2], [0, 1, 0], [2, 1, 1], 1)),
    (dict(stride=[2], padding=(1,), dilation=[1, 2, 1]),
     ([2, 2, 2], [1, 1, 1], [0, 0, 0], [1, 2, 1], 1)),
]


def _inputs(device, groups=2, requires_grad=False):
    x = torch.randn(2, 4, 3, 4, 5, device=device, requires_grad=requires_grad)
    w = torch.randn(4, 6 // groups, 3, 2, 3, device=device, requires_grad=requires_grad)
    b = torch.randn(6, device=device, requires_grad=requires_grad)
    return x, w, b


class _Recorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(func)
        return func(*args, **(kwargs or {}))


class _FunctionRecorder(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.funcs = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.funcs.append(func)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("kw,lists", CALLS)
def test_flat_entry_is_the_public_op(device, kw, lists):
    x, w, b = _inputs(device, groups=lists[-1])
    y = ic.conv_transpose3d(x, w, b, **kw)
    assert torch.equal(y, PUBLIC(x, w, b, *lists))
    assert torch.equal(y, FLAT(x, w, b, [v for t in lists[:4] for v in t] + [lists[-1]]))
    ref = F.conv_transpose3d(x.double().cpu(), w.double().cpu(), b.double().cpu(), **kw)
    tf32 = device == "cuda" and torch.backends.cudnn.allow_tf32  # (PyTorch's default: on)
    assert rel_err(y, ref) <= (TF32_BOUND if tf32 else 1e-6)
    # unbatched input takes the same entry
    assert torch.equal(ic.conv_transpose3d(x[0], w, b, **kw), y[0])


@pytest.mark.parametrize("device", device_params())
def test_flat_entry_differentiates_through_the_public_op(device):
    x, w, b = _inputs(device, requires_grad=True)
    y = ic.conv_transpose3d(x, w, b, stride=2, groups=2)
    assert y.grad_fn is not None
    g = torch.randn_like(y)
    y.backward(g)
    xr, wr, br = (t.detach().double().cpu().requires_grad_() for t in (x, w, b))
    F.conv_transpose3d(xr, wr, br, stride=2, groups=2).backward(g.double().cpu())
    for got, ref in ((x.grad, xr.grad), (w.grad, wr.grad), (b.grad, br.grad)):
        assert rel_err(got, ref) <= 1e-6
    with torch.no_grad():
        assert ic.conv_transpose3d(x, w, b, stride=2, groups=2).grad_fn is None
    # only the bias needing a gradient still records the graph
    z = ic.conv_transpose3d(x.detach(), w.detach(), b, stride=2, groups=2)
    assert z.grad_fn is not None


def test_dispatch_modes_see_only_the_public_op():
    x, w, b = _inputs("cpu")
    with _Recorder() as rec:
        y = ic.conv_transpose3d(x, w, b, stride=2, groups=2)
    assert PUBLIC in rec.ops and FLAT not in rec.ops
    assert torch.equal(y, PUBLIC(x, w, b, [2] * 3, [0] * 3, [0] * 3, [1] * 3, 2))


def test_fake_tensors_take_the_public_ops_fake_function():
    with FakeTensorMode():
        x = torch.empty(2, 4, 3, 4, 5).to(memory_format=torch.channels_last_3d)
        w = torch.empty(4, 3, 3, 2, 3)
        y = ic.conv_transpose3d(x, w, None, stride=2, padding=1, groups=2)
    assert y.shape == (2, 6, 5, 6, 9) and y.is_contiguous(memory_format=torch.channels_last_3d)


def test_torch_function_modes_see_the_public_op():
    x, w, b = _inputs("cpu")
    with _FunctionRecorder() as rec:
        y = ic.conv_transpose3d(x, w, b, stride=2, groups=2)
    assert PUBLIC in rec.funcs and FLAT not in rec.funcs
    assert torch.equal(y, PUBLIC(x, w, b, [2] * 3, [0] * 3, [0] * 3, [1] * 3, 2))


def test_values_that_are_not_plain_ints_take_the_public_op(monkeypatch):
    from inductor_convt3d import ops
    calls = []
    real = ops.conv_transpose3d_flat
    monkeypatch.setattr(ops, "conv_transpose3d_flat", lambda *a: calls.append(a) or real(*a))
    x, w, b = _inputs("cpu")
    ref = PUBLIC(x, w, b, [2] * 3, [1] * 3, [0] * 3, [1] * 3, 2)
    assert torch.equal(ic.conv_transpose3d(x, w, b, stride=2, padding=(1, 1, 1), groups=2), ref)
    assert len(calls) == 1
    y = ic.conv_transpose3d(x, w, b, stride=(np.int64(2), 2, 2), padding=(np.int64(1), 1, 1), groups=2)
    assert torch.equal(y, ref) and len(calls) == 1
    with pytest.raises(RuntimeError, match="non-positive stride is not supported"):
        ic.conv_transpose3d(x, w, b, stride=(2, 0, 2), groups=2)
    with pytest.raises(RuntimeError, match="negative padding is not supported"):
        ic.conv_transpose3d(x, w, b, padding=-(2 ** 63), groups=2)
    assert len(calls) == 3


def test_flat_entry_rejects_a_short_geometry():
    x, w, b = _inputs("cpu")
    with pytest.raises(RuntimeError, match="expected 13 geometry values"):
        FLAT(x, w, b, [1, 1])
