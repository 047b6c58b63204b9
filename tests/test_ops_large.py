"""64-bit indexing: tensors past 2**31 elements (GPU machine only; about 13 GB of memory)."""
import pytest
import torch

ops = torch.ops.convt3d

pytestmark = [pytest.mark.cuda, pytest.mark.slow]


def _needs(bytes_):
    if torch.cuda.is_available():
        free, _ = torch.cuda.mem_get_info()
        if free < bytes_:
            pytest.skip(f"needs {bytes_ / 2**30:.0f} GiB free on the GPU")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_forward_and_grad_input_beyond_int32(dtype, strict_fp32):
    """kernel 2, stride 2, one channel: every output element is one product x[i] * w[t], so
    the expected tensor is a broadcast. In fp16 PyTorch rounds that product exactly as our
    kernels do; in fp32 (strict, no TF32) it is held to the 1e-6 bound."""
    _needs(24 * 2**30)
    n = 648  # output 1296**3 = 2.18e9 elements > 2**31
    x = torch.randn(1, 1, n, n, n, device="cuda", dtype=dtype)
    w = torch.randn(1, 1, 2, 2, 2, device="cuda", dtype=dtype)
    args = ([2, 2, 2], [0, 0, 0], [0, 0, 0], [1, 1, 1], 1)
    y = ops.conv_transpose3d(x, w, None, *args)
    assert y.numel() > 2**31
    expected = (x.view(n, 1, n, 1, n, 1).float() * w.view(1, 2, 1, 2, 1, 2).float()).to(dtype)
    if dtype == torch.float16:
        assert torch.equal(y.view(n, 2, n, 2, n, 2), expected)
    else:
        err = ((y.view(n, 2, n, 2, n, 2) - expected).norm() / expected.norm()).item()
        assert err <= 1e-6
    del expected
    # grad_input reads the whole >2**31 grad_output: gx[i] = sum over the 8 taps of gy * w
    gy = y
    gx = ops.conv_transpose3d_grad_input(gy, w, *args)
    ref = (gy.view(n, 2, n, 2, n, 2).float() * w.view(1, 2, 1, 2, 1, 2).float()).sum(dim=(1, 3, 5))
    err = ((gx.float().view(n, n, n) - ref).norm() / ref.norm()).item()
    assert err <= (1e-6 if dtype == torch.float32 else 5e-3)
