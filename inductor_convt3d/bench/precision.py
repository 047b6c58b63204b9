"""The four precisions of the suite and the backend flags each one runs under."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Precision:
    name: str
    dtype: torch.dtype
    allow_tf32: bool | None  # None: leave PyTorch's flags as they are (no effect on fp16/bf16)
    ref_group: str           # precisions of one group run on the same input values

    @property
    def elem_size(self) -> int:
        return torch.empty((), dtype=self.dtype).element_size()


PRECISIONS: dict[str, Precision] = {
    # fp32 tensors, TF32 allowed for both matmul and cuDNN (cuDNN's default; matmul's is off)
    "tf32": Precision("tf32", torch.float32, True, "fp32"),
    "bf16": Precision("bf16", torch.bfloat16, None, "bf16"),
    "fp16": Precision("fp16", torch.float16, None, "fp16"),
    # strict fp32: TF32 disallowed everywhere
    "fp32": Precision("fp32", torch.float32, False, "fp32"),
}

LAYOUTS: dict[str, torch.memory_format] = {
    "ncdhw": torch.contiguous_format,
    "ndhwc": torch.channels_last_3d,
}


@contextlib.contextmanager
def tf32_flags(allow: bool | None):
    """Set torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32 together,
    restoring both on exit. None leaves them untouched."""
    if allow is None:
        yield
        return
    old = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = allow
    torch.backends.cudnn.allow_tf32 = allow
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old


@contextlib.contextmanager
def cudnn_benchmark(enabled: bool):
    old = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = enabled
    try:
        yield
    finally:
        torch.backends.cudnn.benchmark = old
