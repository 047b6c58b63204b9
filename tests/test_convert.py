"""convert()/unconvert(): the eager model-wide swap to the convt3d drop-in and back."""
from __future__ import annotations

import pytest
import torch
from compile_utils import DEVICES, N_CONVT, TOL, env, net, net_input  # noqa: F401
from torch import nn

import inductor_convt3d
from inductor_convt3d import counters
from inductor_convt3d.nn import ConvTranspose3d

pytestmark = pytest.mark.usefixtures("env")


def convts(model: nn.Module) -> dict[str, type]:
    return {fqn: type(m) for fqn, m in model.named_modules()
            if isinstance(m, nn.ConvTranspose3d)}


@pytest.mark.parametrize("device", DEVICES)
def test_convert_all_same_results_and_gradients(device):
    m, x = net(device), net_input(device)
    x_ref = x.clone().requires_grad_()
    ref = m(x_ref)
    ref.square().mean().backward()
    ref_grads = [p.grad.clone() for p in m.parameters()]
    m.zero_grad(set_to_none=True)

    assert inductor_convt3d.convert(m) is m
    assert set(convts(m).values()) == {ConvTranspose3d}
    x_c = x.clone().requires_grad_()
    out = m(x_c)
    torch.testing.assert_close(out, ref, **TOL[device])
    out.square().mean().backward()  # through the op's registered autograd
    torch.testing.assert_close(x_c.grad, x_ref.grad, **TOL[device])
    for p, g in zip(m.parameters(), ref_grads):
        torch.testing.assert_close(p.grad, g, **TOL[device])


def test_parameters_state_dict_and_hooks_are_kept():
    m = net("cpu")
    params = {n: p for n, p in m.named_parameters()}
    keys = list(m.state_dict())
    calls = []
    m.up1.register_forward_pre_hook(lambda mod, args: calls.append("pre"))
    m.up1.register_forward_hook(lambda mod, args, out: calls.append("post"))
    up1 = m.up1

    inductor_convt3d.convert(m)
    assert m.up1 is up1  # the same module object: outside references stay valid
    assert all(p is params[n] for n, p in m.named_parameters())  # no copies
    assert list(m.state_dict()) == keys
    m(net_input("cpu"))
    assert calls == ["pre", "post"]
    plain = net("cpu")  # state_dicts load both ways
    plain.load_state_dict(m.state_dict())
    m.load_state_dict(plain.state_dict())


def test_filter_fn_gets_module_and_fqn_and_unconvert_undoes():
    m, x = net("cpu"), net_input("cpu")
    ref = m(x)
    seen = []

    def only_up2(module, fqn):
        seen.append((type(module), fqn))
        return fqn == "up2"

    inductor_convt3d.convert(m, filter_fn=only_up2)
    assert seen == [(nn.ConvTranspose3d, f) for f in ("up1", "up2", "up3")]
    assert convts(m) == {"up1": nn.ConvTranspose3d, "up2": ConvTranspose3d,
                         "up3": nn.ConvTranspose3d}
    torch.testing.assert_close(m(x), ref, **TOL["cpu"])
    assert inductor_convt3d.unconvert(m) is m
    assert set(convts(m).values()) == {nn.ConvTranspose3d}
    torch.testing.assert_close(m(x), ref, atol=0, rtol=0)


def test_output_size_and_unbatched_input():
    torch.manual_seed(0)
    plain = nn.ConvTranspose3d(3, 2, 3, stride=2, padding=1)
    x = torch.randn(3, 4, 5, 6)  # unbatched
    ref = plain(x, output_size=[8, 10, 12])
    m = inductor_convt3d.convert(plain)
    out = m(x, output_size=[8, 10, 12])
    assert out.shape == (2, 8, 10, 12)
    torch.testing.assert_close(out, ref, **TOL["cpu"])


def test_non_zero_padding_mode_is_rejected_and_nothing_converted():
    # Recent torch refuses it in the constructor; older pickles or later edits can still have it.
    m = nn.Sequential(nn.ConvTranspose3d(2, 2, 3), nn.ConvTranspose3d(2, 2, 3))
    m[1].padding_mode = "reflect"
    with pytest.raises(ValueError, match=r"1 has padding_mode='reflect'.*filter_fn"):
        inductor_convt3d.convert(m)
    assert set(convts(m).values()) == {nn.ConvTranspose3d}  # untouched, not half-converted
    inductor_convt3d.convert(m, filter_fn=lambda mod, fqn: mod.padding_mode == "zeros")
    assert convts(m) == {"0": ConvTranspose3d, "1": nn.ConvTranspose3d}


def test_subclass_with_own_forward_is_left_alone():
    class Mine(nn.ConvTranspose3d):
        def forward(self, x, output_size=None):
            return super().forward(x, output_size) * 2

    m = nn.Sequential(Mine(2, 2, 3))
    inductor_convt3d.convert(m)
    assert type(m[0]) is Mine


def test_converted_model_compiles_with_the_op_already_in_place():
    m, x = inductor_convt3d.convert(net("cpu")), net_input("cpu")
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(m, backend="convt3d", fullgraph=True)(x), m(x),
                                   **TOL["cpu"])
    assert not counters.rewritten  # nothing left for the pass to do
    assert N_CONVT == len(convts(m))
