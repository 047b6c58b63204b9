"""The typed wrappers skip torch.library's Python autograd kernel when nothing needs a gradient
(ops._call): the same results, the autograd graph whenever an input requires grad, and autocast
still applied."""
import pytest
import torch

import inductor_convt3d as ic
from inductor_convt3d import ops
from conftest import device_params

GEO = ([2, 2, 2], [1, 1, 1], [1, 1, 1], [1, 1, 1], 1)


class _CountingGuard:
    """Wraps torch._C._AutoDispatchBelowAutograd and counts the guards entered."""
    entered = 0

    def __init__(self):
        self._inner = _REAL_GUARD()

    def __enter__(self):
        _CountingGuard.entered += 1
        return self._inner.__enter__()

    def __exit__(self, *exc):
        return self._inner.__exit__(*exc)


_REAL_GUARD = torch._C._AutoDispatchBelowAutograd


def _inputs(device, requires_grad=False):
    x = torch.randn(2, 4, 3, 4, 5, device=device, requires_grad=requires_grad)
    w = torch.randn(4, 3, 3, 3, 3, device=device, requires_grad=requires_grad)
    b = torch.randn(3, device=device, requires_grad=requires_grad)
    return x, w, b


@pytest.mark.parametrize("device", device_params())
def test_fast_call_skips_autograd_only_without_grad(device, monkeypatch):
    monkeypatch.setattr(torch._C, "_AutoDispatchBelowAutograd", _CountingGuard)
    x, w, b = _inputs(device)
    _CountingGuard.entered = 0
    fast = ops.conv_transpose3d(x, w, b, *GEO)
    assert _CountingGuard.entered == 1 and fast.grad_fn is None
    slow = torch.ops.convt3d.conv_transpose3d.default(x, w, b, *GEO)  # the full dispatch
    assert torch.equal(fast, slow)

    xg, wg, bg = (t.detach().requires_grad_() for t in (x, w, b))
    _CountingGuard.entered = 0
    y = ops.conv_transpose3d(xg, wg, bg, *GEO)
    # The autograd kernel ran (it enters the guard itself, inside the autograd.Function).
    assert y.grad_fn is not None and torch.equal(y.detach(), fast)
    y.sum().backward()
    assert xg.grad is not None and wg.grad is not None and bg.grad is not None

    with torch.no_grad():
        _CountingGuard.entered = 0
        z = ops.conv_transpose3d(xg, wg, bg, *GEO)
        assert _CountingGuard.entered == 1 and z.grad_fn is None and torch.equal(z, fast)


@pytest.mark.parametrize("device", device_params())
def test_fast_call_keeps_autocast(device):
    x, w, b = _inputs(device)
    with torch.autocast(device, dtype=torch.bfloat16):
        y = ic.conv_transpose3d(x, w, b, stride=2)
    assert y.dtype == torch.bfloat16 and y.grad_fn is None
