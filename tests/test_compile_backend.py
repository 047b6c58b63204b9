"""torch.compile(backend="convt3d") end to end: the pass rewrites, the results match eager."""
from __future__ import annotations

import importlib.metadata

import pytest
import torch
from compile_utils import DEVICES, N_CONVT, TOL, env, net, net_input  # noqa: F401
from torch import nn

from inductor_convt3d import counters
from inductor_convt3d.compile.backend import convt3d_backend

pytestmark = pytest.mark.usefixtures("env")


def test_registered_through_entry_point():
    (ep,) = [e for e in importlib.metadata.entry_points(group="torch_dynamo_backends")
             if e.name == "convt3d"]
    assert ep.load() is convt3d_backend
    assert torch._dynamo.lookup_backend("convt3d") is convt3d_backend
    assert "convt3d" in torch._dynamo.list_backends()


@pytest.mark.parametrize("device", DEVICES)
def test_inference_fullgraph(device):
    m, x = net(device), net_input(device)
    compiled = torch.compile(m, backend="convt3d", fullgraph=True)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), m(x), **TOL[device])
    assert counters.rewritten == {"aten.convolution": N_CONVT}
    assert counters.inserted == {"convt3d.conv_transpose3d": N_CONVT}
    assert not counters.skipped


@pytest.mark.parametrize("input_grad", [True, False], ids=["input-grad", "no-input-grad"])
@pytest.mark.parametrize("device", DEVICES)
def test_training(device, input_grad):
    m, x = net(device), net_input(device)
    x_ref = x.clone().requires_grad_(input_grad)
    m(x_ref).square().mean().backward()
    ref_grads = {n: p.grad.clone() for n, p in m.named_parameters()}
    m.zero_grad(set_to_none=True)

    x_c = x.clone().requires_grad_(input_grad)
    out = torch.compile(m, backend="convt3d")(x_c)
    torch.testing.assert_close(out, m(x), **TOL[device])
    out.square().mean().backward()
    if input_grad:
        torch.testing.assert_close(x_c.grad, x_ref.grad, **TOL[device])
    for name, p in m.named_parameters():
        torch.testing.assert_close(p.grad, ref_grads[name], **TOL[device], msg=name)
    assert counters.rewritten == {"aten.convolution": N_CONVT,
                                  "aten.convolution_backward": N_CONVT}
    # output_mask: the first layer's grad_input is computed only when x needs it.
    assert counters.inserted["convt3d.conv_transpose3d_grad_input"] == N_CONVT - (not input_grad)
    assert counters.inserted["convt3d.conv_transpose3d_grad_weight"] == N_CONVT
    if device == "cpu":  # on GPU Inductor has split grad_bias out as a sum, which it keeps
        assert counters.inserted["convt3d.conv_transpose3d_grad_bias"] == 2


@pytest.mark.parametrize("device", DEVICES)
def test_dynamic_sizes_compile_once(device):
    calls = []

    def backend(gm, example_inputs, **kwargs):
        calls.append(1)
        return convt3d_backend(gm, example_inputs, **kwargs)

    m = net(device)
    compiled = torch.compile(m, backend=backend, dynamic=True)
    with torch.no_grad():
        for size in [(3, 5, 6), (5, 6, 7), (6, 7, 9)]:
            x = net_input(device, size)
            torch.testing.assert_close(compiled(x), m(x), **TOL[device])
    assert len(calls) == 1
    assert counters.rewritten == {"aten.convolution": N_CONVT}


@pytest.mark.parametrize("device", DEVICES)
def test_mode_max_autotune_no_cudagraphs(device):
    m, x = net(device), net_input(device)
    compiled = torch.compile(m, backend="convt3d", mode="max-autotune-no-cudagraphs")
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), m(x), **TOL[device])
    assert counters.rewritten == {"aten.convolution": N_CONVT}


def test_options_freezing_on_cpu():
    # With freezing, mkldnn patterns turn CPU transposed convolutions into mkldnn ops before
    # the post-grad passes: the joint-graph hook has to get there first.
    m, x = net("cpu").eval(), net_input("cpu")
    compiled = torch.compile(m, backend="convt3d", options={"freezing": True})
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), m(x), **TOL["cpu"])
    assert counters.rewritten == {"aten.convolution": N_CONVT}


def test_options_are_checked_like_inductor():
    compiled = torch.compile(net("cpu"), backend="convt3d", options={"no_such_option": 1})
    with pytest.raises(Exception, match="Unexpected optimization option no_such_option"):
        compiled(net_input("cpu"))


@pytest.mark.cuda
def test_reduce_overhead_cuda_graphs():
    from torch._dynamo.utils import counters as torch_counters

    torch_counters.clear()
    m = net("cuda")
    compiled = torch.compile(m, backend="convt3d", mode="reduce-overhead")
    with torch.no_grad():
        for _ in range(3):  # warm-up, recording, replay
            x = net_input("cuda")
            torch.testing.assert_close(compiled(x).clone(), m(x), **TOL["cuda"])
    assert counters.rewritten == {"aten.convolution": N_CONVT}
    assert torch_counters["inductor"]["cudagraph_skips"] == 0


@pytest.mark.parametrize("device", DEVICES)
def test_model_without_transposed_conv_is_untouched(device):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv3d(4, 4, 3, padding=1), nn.ReLU(), nn.Conv3d(4, 2, 1)).to(device)
    x = torch.randn(2, 4, 3, 5, 6, device=device)
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(m, backend="convt3d")(x), m(x), **TOL[device])
    assert counters.graphs["seen"] >= 1
    assert not counters.rewritten and not counters.inserted and not counters.skipped


def test_cpu_not_enabled_is_left_with_a_logged_reason(caplog):
    from inductor_convt3d import config

    m, x = net("cpu"), net_input("cpu")
    with config.patch(device_types=("cuda",)), caplog.at_level("DEBUG", "inductor_convt3d"), \
            torch.no_grad():
        torch.testing.assert_close(torch.compile(m, backend="convt3d")(x), m(x), **TOL["cpu"])
    reason = "device type 'cpu' is not in inductor_convt3d.config.device_types ('cuda',)"
    assert not counters.rewritten
    assert counters.skipped == {reason: N_CONVT}  # counted once, though two hooks saw them
    assert sum(reason in r.getMessage() for r in caplog.records) == N_CONVT


def test_transposed_2d_is_left_with_a_logged_reason(caplog):
    m = nn.ConvTranspose2d(4, 2, 3, stride=2)
    x = torch.randn(1, 4, 5, 5)
    with caplog.at_level("DEBUG", "inductor_convt3d"), torch.no_grad():
        torch.testing.assert_close(torch.compile(m, backend="convt3d")(x), m(x), **TOL["cpu"])
    reason = ("not a 3-D transposed convolution (input 4-D, weight 4-D; "
              "the kernels take 5-D tensors)")
    assert counters.skipped == {reason: 1}
    assert any(reason in r.getMessage() for r in caplog.records)
