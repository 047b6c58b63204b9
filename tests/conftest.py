"""Shared test helpers. GPU tests are marked `cuda` and skip where CUDA is absent."""
import os

import pytest
import torch

# Every result buffer starts as NaN (csrc/entry.cpp), so an unwritten element fails a test.
os.environ["CONVT3D_POISON_OUTPUTS"] = "1"

import inductor_convt3d  # noqa: E402,F401  (registers the ops)

HAS_CUDA = torch.cuda.is_available()

# Relative L2 error bounds of the project (docs/ops.md).
BOUNDS = {
    torch.float64: 1e-12,
    torch.float32: 1e-6,
    torch.float16: 5e-3,
    torch.bfloat16: 5e-3,
}
TF32_BOUND = 5e-4


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "cuda" in item.keywords and not HAS_CUDA:
            item.add_marker(skip)


def device_params():
    """cpu always; cuda marked, so it is skipped (not silently dropped) without a GPU."""
    return ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    """‖out − ref‖ / ‖ref‖ in fp64; NaN anywhere (poison, overflow) gives inf."""
    out = out.detach().double().cpu()
    ref = ref.detach().double().cpu()
    assert out.shape == ref.shape, (out.shape, ref.shape)
    if not torch.isfinite(out).all():
        return float("inf")
    denom = ref.norm().item()
    diff = (out - ref).norm().item()
    return diff / denom if denom > 0 else diff


def bound_for(dtype: torch.dtype, device: str) -> float:
    """The error bound; fp32 on CUDA may use TF32 when cuDNN's flag allows it."""
    if dtype == torch.float32 and device == "cuda" and torch.backends.cudnn.allow_tf32:
        return TF32_BOUND
    return BOUNDS[dtype]


@pytest.fixture
def strict_fp32():
    """fp32 without TF32, like torch.backends.cudnn.allow_tf32 = False for cuDNN."""
    old = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cudnn.allow_tf32 = old
