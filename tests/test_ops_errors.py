"""Bad input raises the same class of error as F.conv_transpose3d, with a clear message."""
import pytest
import torch
import torch.nn.functional as F

import inductor_convt3d as ic
from conftest import device_params

ops = torch.ops.convt3d


def make(device, x_shape=(2, 4, 3, 4, 5), w_shape=(4, 2, 3, 3, 3), dtype=torch.float32):
    return (torch.randn(x_shape, device=device, dtype=dtype),
            torch.randn(w_shape, device=device, dtype=dtype))


# (name, builder -> (args for F/ic), kwargs, message regex)
def cases(device):
    x, w = make(device)
    return [
        ("input 3-D", (torch.randn(4, 5, 6, device=device), w), {}, r"Expected 4D \(unbatched\) or 5D"),
        ("input 6-D", (x.unsqueeze(0), w), {}, r"Expected 4D \(unbatched\) or 5D"),
        ("weight 4-D", (x, w[..., 0]), {}, r"weight"),
        ("channels", (torch.randn(2, 3, 3, 4, 5, device=device), w), {}, r"to have 4 channels, but got 3"),
        ("groups divide", (x, w), {"groups": 3}, r"Given groups=3, expected weight to be divisible by 3"),
        ("groups zero", (x, w), {"groups": 0}, r"non-positive groups is not supported"),
        ("output_padding", (x, w), {"stride": 2, "output_padding": 2},
         r"output padding must be smaller than either stride or dilation"),
        ("stride zero", (x, w), {"stride": 0}, r"non-positive stride is not supported"),
        ("stride negative", (x, w), {"stride": (1, -1, 1)}, r"non-positive stride is not supported"),
        ("dilation zero", (x, w), {"dilation": 0}, r"non-positive dilation is not supported"),
        ("padding negative", (x, w), {"padding": -1}, r"negative padding is not supported"),
        ("output size", (x, w), {"padding": 5}, r"Output size is too small"),
        ("weight dtype", (x, w.double()), {}, r"Input type \(Float\) and weight type \(Double\) should be the same"),
        ("bias dtype", (x, w, torch.randn(2, device=device, dtype=torch.float64)), {},
         r"Input type \(Float\) and bias type \(Double\) should be the same"),
        ("bias shape", (x, w, torch.randn(3, device=device)), {}, r"expected bias to be 1-dimensional with 2 elements"),
        ("bias 2-D", (x, w, torch.randn(2, 1, device=device)), {}, r"expected bias to be 1-dimensional with 2 elements"),
        ("stride length", (x, w), {"stride": (1, 2)}, r"list of 3 values"),
    ]


CASE_NAMES = [c[0] for c in cases("cpu")]


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("name", CASE_NAMES)
def test_bad_input(name, device):
    _, args, kwargs, pattern = next(c for c in cases(device) if c[0] == name)
    with pytest.raises(Exception) as theirs:
        F.conv_transpose3d(*args, **kwargs)
    with pytest.raises(type(theirs.value), match=pattern):
        ic.conv_transpose3d(*args, **kwargs)


@pytest.mark.cuda
def test_device_mismatch():
    x, w = make("cuda")
    with pytest.raises(RuntimeError):
        F.conv_transpose3d(x, w.cpu())
    with pytest.raises(RuntimeError, match=r"Expected all tensors to be on the same device"):
        ic.conv_transpose3d(x, w.cpu())
    with pytest.raises(RuntimeError, match=r"Expected all tensors to be on the same device"):
        ic.conv_transpose3d(x, w, torch.randn(2))


def test_integer_dtype_rejected():
    x = torch.randint(0, 5, (2, 4, 3, 4, 5))
    w = torch.randint(0, 5, (4, 2, 3, 3, 3))
    with pytest.raises(RuntimeError, match=r"expected input to be float32, float64, float16 or bfloat16"):
        ic.conv_transpose3d(x, w)


@pytest.mark.parametrize("device", device_params())
def test_backward_ops_reject_inconsistent_shapes(device):
    x, w = make(device)
    gy = torch.randn(2, 2, 5, 6, 7, device=device)
    args = ([1, 1, 1], [0, 0, 0], [0, 0, 0], [1, 1, 1], 1)
    with pytest.raises(RuntimeError, match=r"does not match grad_output with 2 channels"):
        ops.conv_transpose3d_grad_input(gy, torch.randn(4, 3, 3, 3, 3, device=device), *args)
    with pytest.raises(RuntimeError, match=r"cannot come from a conv_transpose3d"):
        ops.conv_transpose3d_grad_input(gy, w, [2, 2, 2], [0, 0, 0], [0, 0, 0], [1, 1, 1], 1)
    with pytest.raises(RuntimeError, match=r"gives an output of spatial size"):
        ops.conv_transpose3d_grad_weight(gy, x, [2, 2, 2], *args)
    with pytest.raises(RuntimeError, match=r"input batch 1 does not match grad_output batch 2"):
        ops.conv_transpose3d_grad_weight(gy, x[:1], [3, 3, 3], *args)
    with pytest.raises(RuntimeError, match=r"expected 5D grad_output"):
        ops.conv_transpose3d_grad_bias(gy[0])
