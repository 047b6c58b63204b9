"""gradcheck (and gradgradcheck: the backward ops have autograd formulas too) in fp64."""
import pytest
import torch

import inductor_convt3d as ic
from conftest import device_params
from inductor_convt3d.testing import Geometry

GEOMS = [
    Geometry(2, 4, 2, (2, 3, 2), (3, 2, 2), (2, 1, 2), (1, 0, 1), (1, 0, 1), (1, 2, 1), 2),
    Geometry(1, 2, 3, (2, 2, 3), (2, 2, 1), (2, 3, 1), (0, 1, 0), (0, 2, 0), (1, 1, 2)),
    Geometry(1, 3, 3, (2, 2, 2), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (2, 2, 2), 3, bias=False),
]


def fn(g):
    stride, padding, output_padding, dilation, groups = g.args()
    return lambda x, w, b: ic.conv_transpose3d(x, w, b, stride, padding, output_padding, groups, dilation)


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("g", GEOMS, ids=["grouped", "per_axis", "empty_phases"])
def test_gradcheck(g, device):
    inputs = g.make(device, torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(fn(g), inputs)


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("g", GEOMS[:2], ids=["grouped", "per_axis"])
def test_gradgradcheck(g, device):
    inputs = g.make(device, torch.float64, requires_grad=True)
    assert torch.autograd.gradgradcheck(fn(g), inputs)


@pytest.mark.parametrize("device", device_params())
def test_only_requested_gradients(device):
    """Backward computes only what is needed: no weight grad when the weight is frozen."""
    g = GEOMS[0]
    x, w, b = g.make(device, torch.float64)
    x.requires_grad_()
    y = fn(g)(x, w, b)
    (gx,) = torch.autograd.grad(y.sum(), [x])
    assert gx.shape == x.shape and w.grad is None and b.grad is None
