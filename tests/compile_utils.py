"""Helpers shared by the torch.compile / convert / export tests (imported, not a conftest, so
that it stays out of the op tests' way)."""
from __future__ import annotations

import contextlib

import pytest
import torch
import torch._functorch.config
import torch._inductor.config
from torch import nn

import inductor_convt3d
from inductor_convt3d import config, counters

# cuda is marked; tests/conftest.py skips it without a GPU.
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]

# fp32 tolerances against eager. On CUDA, TF32 is off in both (see `env`), but the summation
# orders still differ between our kernels and cuDNN.
TOL = {"cpu": dict(atol=1e-5, rtol=1e-5), "cuda": dict(atol=1e-4, rtol=1e-4)}


@contextlib.contextmanager
def pass_env(device_types=("cuda", "cpu")):
    """The pass serves CPU too; FX-graph/AOT-autograd caches are off so that every compile runs
    the pass (a hit would skip it and its counters); dynamo and counters start clean; the
    global switch and TF32 flags are restored after."""
    tf32 = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    torch._dynamo.reset()
    counters.reset()
    try:
        with config.patch(device_types=device_types), \
                torch._inductor.config.patch(fx_graph_cache=False), \
                torch._functorch.config.patch(enable_autograd_cache=False), \
                inductor_convt3d.disable():
            yield
    finally:
        torch._dynamo.reset()
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = tf32


@pytest.fixture
def env():
    with pass_env():
        yield


class Net(nn.Module):
    """Three ConvTranspose3d among other ops: per-axis geometry, groups, dilation, no bias."""

    def __init__(self) -> None:
        super().__init__()
        self.up1 = nn.ConvTranspose3d(4, 6, 3, stride=2, padding=1, output_padding=1)
        self.conv = nn.Conv3d(6, 6, 3, padding=1)
        self.up2 = nn.ConvTranspose3d(6, 4, (2, 3, 1), stride=(2, 1, 1), padding=(0, 1, 0),
                                      groups=2, bias=False)
        self.up3 = nn.ConvTranspose3d(4, 3, 3, padding=2, dilation=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.up1(x))
        y = y + self.conv(y)
        y = torch.sigmoid(self.up2(y)) * 2
        return self.up3(y)


N_CONVT = 3


def net(device: str) -> Net:
    torch.manual_seed(0)
    return Net().to(device)


def net_input(device: str, size=(3, 5, 6), batch: int = 2) -> torch.Tensor:
    return torch.randn(batch, 4, *size, device=device)
