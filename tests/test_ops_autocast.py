"""Under torch.autocast the forward op casts like aten convolution: to the autocast dtype in
force, leaving fp64 alone."""
import pytest
import torch
import torch.nn.functional as F

import inductor_convt3d as ic
from conftest import device_params, rel_err


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_autocast_follows_aten(device, dtype):
    x = torch.randn(2, 4, 3, 4, 5, device=device)
    w = torch.randn(4, 3, 3, 3, 3, device=device)
    b = torch.randn(3, device=device)
    with torch.autocast(device, dtype=dtype):
        ref = F.conv_transpose3d(x, w, b, stride=2)
        out = ic.conv_transpose3d(x, w, b, stride=2)
        out64 = ic.conv_transpose3d(x.double(), w.double(), b.double())
    assert out.dtype == ref.dtype == dtype
    assert out64.dtype == torch.float64  # fp64 is not autocast-eligible
    ref64 = F.conv_transpose3d(x.to(dtype).double(), w.to(dtype).double(), b.to(dtype).double(), stride=2)
    assert rel_err(out, ref64) <= 5e-3


@pytest.mark.parametrize("device", device_params())
def test_autocast_backward(device):
    x = torch.randn(1, 2, 3, 3, 3, device=device, requires_grad=True)
    w = torch.randn(2, 2, 2, 2, 2, device=device, requires_grad=True)
    with torch.autocast(device, dtype=torch.bfloat16):
        y = ic.conv_transpose3d(x, w, stride=2)
    y.float().sum().backward()
    assert x.grad.dtype == torch.float32 and w.grad.dtype == torch.float32
    assert torch.isfinite(x.grad).all() and torch.isfinite(w.grad).all()
