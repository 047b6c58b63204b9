"""The `convt3d` torch.compile backend: Inductor with our passes.

Registered through the torch_dynamo_backends entry point (pyproject.toml), so
`torch.compile(model, backend="convt3d")` works after `pip install` without an import.
torch.compile hands a named custom backend `mode=` and `options=` as keyword arguments (only when
not default); we read them exactly as the inductor backend does and add our passes on top.
"""
from __future__ import annotations

from typing import Any

import torch

from . import slots


def inductor_config_patches(mode: str | None = None,
                            options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Inductor config patches for torch.compile(backend="convt3d", mode=..., options=...)."""
    # torch's own wrapper: same mode table, same option validation and errors as "inductor".
    inductor = torch._TorchCompileInductorWrapper(mode, options, None)
    return {**inductor.config, **slots.patches(inductor.config)}


_used_cudagraphs = False


def convt3d_backend(gm: torch.fx.GraphModule, example_inputs, *, mode: str | None = None,
                    options: dict[str, Any] | None = None):
    from torch._inductor import config as inductor_config
    from torch._inductor.compile_fx import compile_fx

    global _used_cudagraphs
    patches = inductor_config_patches(mode, options)
    _used_cudagraphs |= bool(patches.get("triton.cudagraphs", inductor_config.triton.cudagraphs))
    return compile_fx(gm, example_inputs, config_patches=patches)


def _reset() -> None:
    # torch._dynamo.reset() calls the backend's reset(): free CUDA graph trees, as the inductor
    # backend does, when a compile may have made some.
    if _used_cudagraphs:
        from torch._inductor.cudagraph_trees import reset_cudagraph_trees

        reset_cudagraph_trees()


convt3d_backend.reset = _reset  # type: ignore[attr-defined]
