"""The graph pass on its own, on aten graphs traced with make_fx: what it rewrites, what it leaves
and why, idempotence, the uuid, and how it shares Inductor's config slots."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from compile_utils import env  # noqa: F401
from torch.fx.experimental.proxy_tensor import make_fx

from inductor_convt3d import config, counters
from inductor_convt3d.compile import slots
from inductor_convt3d.compile.graph_pass import JOINT, POST_GRAD

pytestmark = pytest.mark.usefixtures("env")
aten = torch.ops.aten
GEOMETRY = dict(stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 0), dilation=(1, 2, 1))


def targets(gm: torch.fx.GraphModule) -> list[str]:
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def run_pass(gm: torch.fx.GraphModule, p=JOINT) -> torch.fx.GraphModule:
    p(gm.graph)
    gm.graph.lint()
    gm.recompile()
    return gm


def operands(groups: int = 2, dtype=torch.float32):
    torch.manual_seed(0)
    x = torch.randn(2, 4, 3, 4, 3, dtype=dtype)
    w = torch.randn(4, 3, 2, 3, 3, dtype=dtype)
    b = torch.randn(3 * groups, dtype=dtype)
    return x, w, b


def forward(x, w, b):
    return F.conv_transpose3d(x, w, b, groups=2, **GEOMETRY).relu()


def backward(mask):
    def fn(go, x, w):
        g = GEOMETRY
        return aten.convolution_backward.default(
            go, x, w, [w.shape[1] * 2], g["stride"], g["padding"], g["dilation"], True,
            g["output_padding"], 2, mask)
    return fn


def test_forward_rewritten_and_exact():
    args = operands()
    gm = run_pass(make_fx(forward, tracing_mode="fake")(*args))
    assert targets(gm) == ["convt3d.conv_transpose3d.default", "aten.relu.default"]
    torch.testing.assert_close(gm(*args), forward(*args), atol=1e-5, rtol=1e-5)
    assert counters.rewritten == {"aten.convolution": 1}


def test_idempotent():
    args = operands()
    gm = run_pass(make_fx(forward, tracing_mode="fake")(*args))
    code = gm.code
    run_pass(gm, POST_GRAD)  # the inference path: the post-grad hook sees the same graph
    assert gm.code == code
    assert counters.rewritten == {"aten.convolution": 1}
    assert counters.graphs == {"seen": 2, "changed": 1}


@pytest.mark.parametrize("mask", [[True, True, True], [True, False, False], [False, True, True],
                                  [False, False, True]])
def test_backward_follows_output_mask(mask):
    x, w, _ = operands()
    go = torch.randn_like(F.conv_transpose3d(x, w, groups=2, **GEOMETRY))
    fn = backward(mask)
    gm = run_pass(make_fx(fn, tracing_mode="fake")(go, x, w))
    names = ["convt3d.conv_transpose3d_grad_input.default",
             "convt3d.conv_transpose3d_grad_weight.default",
             "convt3d.conv_transpose3d_grad_bias.default"]
    assert targets(gm) == [n for n, m in zip(names, mask) if m]  # nothing else, nothing unasked
    for got, want, wanted in zip(gm(go, x, w), fn(go, x, w), mask):
        if wanted:  # (eager aten may fill in more than asked for; compare what was asked)
            torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
        else:
            assert got is None


def test_backward_with_bias_grad_split_into_a_sum():
    # Inductor's GPU decomposition: grad_bias = sum(grad_output), the rest with mask[2] False.
    x, w, _ = operands()
    go = torch.randn_like(F.conv_transpose3d(x, w, groups=2, **GEOMETRY))

    def fn(go, x, w):
        gi, gw, _ = backward([True, True, False])(go, x, w)
        return gi, gw, go.sum([0, 2, 3, 4])

    gm = run_pass(make_fx(fn, tracing_mode="fake")(go, x, w))
    assert "aten.convolution_backward.default" not in targets(gm)
    assert "aten.sum.dim_IntList" in targets(gm)  # stays with Inductor's fused reduction
    for got, want in zip(gm(go, x, w), fn(go, x, w)):
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_symbolic_kernel_size_becomes_sym_size_nodes():
    # A weight passed as a dynamic input: grad_weight's kernel_size must come from the graph.
    x, w, _ = operands()
    go = torch.randn_like(F.conv_transpose3d(x, w, groups=2, **GEOMETRY))
    fn = backward([False, True, False])
    gm = run_pass(make_fx(fn, tracing_mode="symbolic")(go, x, w))
    assert "convt3d.conv_transpose3d_grad_weight.default" in targets(gm)
    assert targets(gm).count("aten.sym_size.int") >= 3
    torch.testing.assert_close(gm(go, x, w)[1], fn(go, x, w)[1], atol=1e-5, rtol=1e-5)


def test_unbatched_input_and_scalar_geometry():
    # F.conv_transpose3d(x, w, stride=2) reaches aten as stride=[2]; 4-D input is unsqueezed.
    def fn(x, w):
        return F.conv_transpose3d(x, w, stride=2, padding=1)

    x, w = torch.randn(4, 3, 2, 3), torch.randn(4, 2, 3, 3, 3)
    gm = run_pass(make_fx(fn, tracing_mode="fake")(x, w))
    assert "convt3d.conv_transpose3d.default" in targets(gm)
    torch.testing.assert_close(gm(x, w), fn(x, w), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("case, reason", [
    ("device", "device type 'cpu' is not in inductor_convt3d.config.device_types ('cuda',)"),
    ("dtype", "no convt3d kernel for dtype torch.int64"),
    ("2d", "not a 3-D transposed convolution (input 4-D, weight 4-D; "
           "the kernels take 5-D tensors)"),
    ("off", "inductor_convt3d.config.rewrite_forward is False"),
])
def test_left_alone_with_reason(case, reason):
    x, w, b = operands()
    settings = {"device": dict(device_types=("cuda",)), "off": dict(rewrite_forward=False)}
    if case == "dtype":
        x, w, b = x.long(), w.long(), b.long()
    fn = forward
    if case == "2d":
        x, w = x[:, :, 0], w[:, :, 0]
        fn = lambda x, w, b: F.conv_transpose2d(x, w, b, groups=2)  # noqa: E731
    gm = make_fx(fn, tracing_mode="fake")(x, w, b)
    before = gm.code
    with config.patch(**settings.get(case, {})):
        run_pass(gm)
        run_pass(gm, POST_GRAD)
    assert gm.code == before
    assert counters.skipped == {reason: 1}  # reported once, though both hooks saw the node
    assert not counters.rewritten


def test_backward_switch_leaves_backward_only():
    x, w, _ = operands()
    go = torch.randn_like(F.conv_transpose3d(x, w, groups=2, **GEOMETRY))
    with config.patch(rewrite_backward=False):
        gm = run_pass(make_fx(backward([True, True, True]), tracing_mode="fake")(go, x, w))
    assert "aten.convolution_backward.default" in targets(gm)
    assert counters.skipped == {"inductor_convt3d.config.rewrite_backward is False": 1}


def test_uuid_follows_settings():
    uuid = JOINT.uuid()
    assert isinstance(uuid, bytes) and uuid == POST_GRAD.uuid()
    with config.patch(device_types=("cuda",)):  # env has ("cuda", "cpu")
        assert JOINT.uuid() != uuid
    assert JOINT.uuid() == uuid


def test_config_patch_restores_and_rejects_unknown():
    before = config.device_types
    with config.patch(device_types="cpu"):
        assert config.enabled_device_types() == ("cpu",)
    assert config.device_types == before
    with pytest.raises(AttributeError, match="no setting"):
        with config.patch(device_typo=("cpu",)):
            pass


class UserPass(torch._inductor.custom_graph_pass.CustomGraphPass):
    def __call__(self, graph):
        pass

    def uuid(self):
        return "user"


@pytest.mark.parametrize("lists", [True, False], ids=["tuple-slots", "single-pass-slots"])
def test_slots_compose_with_user_passes(lists):
    mine, theirs = JOINT, UserPass()
    assert slots.with_pass(None, mine, lists) is mine
    both = slots.with_pass(theirs, mine, lists)
    assert isinstance(both, tuple if lists else slots.Chain)
    assert slots._as_tuple(both) == (theirs, mine)  # theirs first, then ours
    assert slots.with_pass(both, mine, lists) is both  # idempotent
    assert slots.without_pass(both, mine, lists) is theirs  # theirs kept
    assert slots.without_pass(mine, mine, lists) is None
    assert slots.with_pass([theirs], mine, True) == [theirs, mine]  # a user's list stays a list


def test_chain_runs_in_order_and_keeps_cache_safety():
    seen = []
    chain = slots.Chain((lambda g: seen.append("theirs"), JOINT))
    assert chain.uuid() is None  # a plain function has no uuid: Inductor must bypass its cache
    chain(torch.fx.Graph())
    assert seen == ["theirs"] and counters.graphs["seen"] == 1
    assert slots.Chain((UserPass(), JOINT)).uuid() == ("user", JOINT.uuid())
