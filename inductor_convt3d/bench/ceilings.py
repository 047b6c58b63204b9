"""The two roofline ceilings, measured in the same run as the suite.

copy bandwidth  a large device-to-device copy, dst.copy_(src), counting the bytes read and the
                bytes written (2 x the buffer size) over the median call time;
matmul rates    a large square matmul on random normal data, 2*n^3 FLOPs over the median call
                time: bf16, fp16, fp32 with TF32 allowed ("tf32") and fp32 with TF32 disallowed
                ("fp32_ieee", recorded for reference).

The FLOP rate of each precision's floor:
  tf32 -> the tf32 matmul rate;  bf16 -> bf16;  fp16 -> fp16;
  fp32 (TF32 disallowed) -> on CUDA the tf32 rate / 3: the rate of 3xTF32 split arithmetic on
  tensor cores (the issue's way to strict fp32 accuracy); on CPU, where there is no TF32, the
  measured fp32 matmul rate (tf32 on CPU is that rate as well).
"""
from __future__ import annotations

import torch

from .precision import tf32_flags
from .timing import is_cuda, median_seconds

# Sizes: large enough to leave every cache and to keep the units busy.
CUDA_COPY_BYTES = 1 << 30        # 1 GiB buffers
CUDA_MATMUL_N = 8192
CPU_COPY_BYTES = 64 << 20
CPU_MATMUL_N = {torch.float32: 512, torch.bfloat16: 256, torch.float16: 256}


def copy_bandwidth(device: torch.device, nbytes: int | None = None) -> float:
    """Bytes per second of a device-to-device copy (read + write bytes)."""
    cuda = is_cuda(device)
    nbytes = nbytes or (CUDA_COPY_BYTES if cuda else CPU_COPY_BYTES)
    n = nbytes // 4
    src = torch.randn(n, device=device)
    dst = torch.empty_like(src)
    t = median_seconds(lambda: dst.copy_(src), device, warmup=3 if cuda else 1,
                       iters=30 if cuda else 5)
    return 2 * n * 4 / t


def matmul_rate(device: torch.device, dtype: torch.dtype, allow_tf32: bool | None = None,
                n: int | None = None) -> float:
    """FLOP/s of an n x n x n matmul on random normal data."""
    cuda = is_cuda(device)
    n = n or (CUDA_MATMUL_N if cuda else CPU_MATMUL_N.get(dtype, 256))
    g = torch.Generator(device=device).manual_seed(1)
    a = torch.randn(n, n, device=device, generator=g).to(dtype)
    b = torch.randn(n, n, device=device, generator=g).to(dtype)
    with tf32_flags(allow_tf32):
        t = median_seconds(lambda: torch.mm(a, b), device, warmup=3 if cuda else 2,
                           iters=20 if cuda else 10)
    return 2 * n ** 3 / t


def measure_ceilings(device: torch.device, precisions: list[str]) -> dict:
    """Copy bandwidth, the matmul rates the requested precisions need, and each one's floor rate."""
    cuda = is_cuda(device)
    rates: dict[str, float] = {}
    need = set(precisions)
    if cuda:
        if need & {"tf32", "fp32"}:
            rates["tf32"] = matmul_rate(device, torch.float32, allow_tf32=True)
        if "fp32" in need:
            rates["fp32_ieee"] = matmul_rate(device, torch.float32, allow_tf32=False)
    elif need & {"tf32", "fp32"}:
        rates["fp32_ieee"] = matmul_rate(device, torch.float32, allow_tf32=False)
    if "bf16" in need:
        rates["bf16"] = matmul_rate(device, torch.bfloat16)
    if "fp16" in need:
        rates["fp16"] = matmul_rate(device, torch.float16)

    floor: dict[str, float] = {}
    for p in precisions:
        if p in ("bf16", "fp16"):
            floor[p] = rates[p]
        elif cuda:
            floor[p] = rates["tf32"] if p == "tf32" else rates["tf32"] / 3
        else:
            floor[p] = rates["fp32_ieee"]
    n = str(CUDA_MATMUL_N) if cuda else "512 (fp32), 256 (bf16, fp16)"
    return dict(
        copy_bytes_per_s=copy_bandwidth(device),
        matmul_flops_per_s=rates,
        floor_flops_per_s=floor,
        method=dict(
            copy=f"dst.copy_(src), {(CUDA_COPY_BYTES if cuda else CPU_COPY_BYTES) >> 20} MiB "
                 "fp32 buffers, (read + write bytes) / median time",
            matmul=f"torch.mm of random normal n x n matrices, n={n}, 2 n^3 / median time",
            fp32_floor=("tf32 rate / 3 (3xTF32 split on tensor cores)" if cuda
                        else "fp32 matmul rate (no TF32 on CPU)"),
        ),
    )
