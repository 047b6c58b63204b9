"""enable()/disable() for the default backend, living beside users' passes, the FX graph cache,
and a pinned view of the graphs the pass produces."""
from __future__ import annotations

import expecttest
import pytest
import torch
import torch._functorch.config
import torch._inductor.config
from compile_utils import N_CONVT, TOL, env, net, net_input  # noqa: F401
from torch import nn
from torch._dynamo.utils import counters as torch_counters
from torch._inductor.custom_graph_pass import CustomGraphPass

import inductor_convt3d
from inductor_convt3d import config, counters

pytestmark = pytest.mark.usefixtures("env")
inductor_config = torch._inductor.config


class Recorder(CustomGraphPass):
    """A user's pass: records each graph's code as it sees it."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, graph: torch.fx.Graph) -> None:
        self.seen.append(graph.python_code("self").src)

    def uuid(self):
        return "recorder"


def compile_and_run(m, x, **kwargs):
    torch._dynamo.reset()
    with torch.no_grad():
        out = torch.compile(m, **kwargs)(x)
        torch.testing.assert_close(out, m(x), **TOL["cpu"])


def test_enable_disable_and_scope():
    m, x = net("cpu"), net_input("cpu")
    assert not inductor_convt3d.is_enabled()
    with inductor_convt3d.enable():
        assert inductor_convt3d.is_enabled()
        compile_and_run(m, x)  # the default backend
    assert not inductor_convt3d.is_enabled()
    assert counters.rewritten == {"aten.convolution": N_CONVT}

    counters.reset()
    compile_and_run(m, x)
    assert not counters.rewritten

    inductor_convt3d.enable()  # plain calls switch it for good
    inductor_convt3d.enable()  # twice is once
    assert inductor_config.post_grad_custom_pre_pass is inductor_convt3d.compile.POST_GRAD
    with inductor_convt3d.disable():  # a scoped exception
        assert not inductor_convt3d.is_enabled()
    assert inductor_convt3d.is_enabled()
    inductor_convt3d.disable()
    assert inductor_config.post_grad_custom_pre_pass is None
    assert inductor_config.joint_custom_post_pass is None


def test_users_passes_are_kept_and_run():
    theirs = Recorder()
    m, x = net("cpu"), net_input("cpu")
    with inductor_config.patch(post_grad_custom_pre_pass=theirs):
        with inductor_convt3d.enable():
            compile_and_run(m, x)
        assert inductor_config.post_grad_custom_pre_pass is theirs  # exactly as before
    assert counters.rewritten == {"aten.convolution": N_CONVT}
    # Theirs ran first in the post-grad slot, and saw what the joint hook had already rewritten.
    assert len(theirs.seen) == 1 and "convt3d.conv_transpose3d" in theirs.seen[0]


def test_backend_keeps_passes_given_in_options():
    theirs = Recorder()
    m, x = net("cpu"), net_input("cpu")
    compile_and_run(m, x, backend="convt3d", options={"joint_custom_post_pass": theirs})
    assert counters.rewritten == {"aten.convolution": N_CONVT}
    assert len(theirs.seen) == 1 and "aten.convolution" in theirs.seen[0]  # theirs runs first
    assert inductor_config.joint_custom_post_pass is None  # a per-compile patch only


def test_fx_graph_cache_hit_on_second_compile():
    from torch._inductor.utils import fresh_cache

    m = nn.Sequential(nn.ConvTranspose3d(2, 3, 2, stride=2), nn.ReLU())
    x = torch.randn(1, 2, 2, 3, 3)
    with fresh_cache(), inductor_config.patch(fx_graph_cache=True), \
            torch._functorch.config.patch(enable_autograd_cache=True):
        stats = []
        for settings in [{}, {}, {"device_types": ("cpu",)}]:
            torch_counters.clear()
            counters.reset()
            with config.patch(**settings):
                compile_and_run(m, x, backend="convt3d")
            stats.append((torch_counters["inductor"]["fxgraph_cache_hit"],
                          counters.total_rewritten()))
    # miss (pass runs), hit (served from the cache, no pass), new settings -> new uuid -> miss
    assert stats == [(0, 1), (1, 0), (0, 1)]


def pinned_view(src: str) -> str:
    """The graph lines that involve transposed convolutions, without FX's `x = None` tails."""
    keep = ("def ", "return", "convt3d", "aten.convolution")
    lines = [line.split(";")[0].strip() for line in src.splitlines()]
    return "\n".join(line for line in lines if any(k in line for k in keep)) + "\n"


def test_rewritten_training_graphs():
    recorder = Recorder()  # after every other post-grad pass: the graphs Inductor lowers
    torch.manual_seed(0)
    m = nn.Sequential(nn.ConvTranspose3d(2, 3, 3, stride=2, padding=1, output_padding=1),
                      nn.ReLU(), nn.ConvTranspose3d(3, 1, 2, bias=False))
    x = torch.randn(1, 2, 2, 3, 4, requires_grad=True)
    with inductor_config.patch(post_grad_custom_post_pass=recorder):
        torch.compile(m, backend="convt3d")(x).sum().backward()
    forward, backward = map(pinned_view, recorder.seen)
    expecttest.assert_expected_inline(forward, """\
def forward(self, primals_1, primals_2, primals_3, primals_4):
conv_transpose3d_default = torch.ops.convt3d.conv_transpose3d.default(primals_3, primals_1, primals_2, [2, 2, 2], [1, 1, 1], [1, 1, 1], [1, 1, 1], 1)
conv_transpose3d_default_1 = torch.ops.convt3d.conv_transpose3d.default(relu, primals_4, None, [1, 1, 1], [0, 0, 0], [0, 0, 0], [1, 1, 1], 1)
return (conv_transpose3d_default_1, primals_1, primals_3, primals_4, relu)
""")
    expecttest.assert_expected_inline(backward, """\
def forward(self, primals_1, primals_3, primals_4, relu, tangents_1):
conv_transpose3d_grad_input_default = torch.ops.convt3d.conv_transpose3d_grad_input.default(tangents_1, primals_4, [1, 1, 1], [0, 0, 0], [0, 0, 0], [1, 1, 1], 1)
conv_transpose3d_grad_weight_default = torch.ops.convt3d.conv_transpose3d_grad_weight.default(tangents_1, relu, [2, 2, 2], [1, 1, 1], [0, 0, 0], [0, 0, 0], [1, 1, 1], 1)
conv_transpose3d_grad_input_default_1 = torch.ops.convt3d.conv_transpose3d_grad_input.default(where, primals_1, [2, 2, 2], [1, 1, 1], [1, 1, 1], [1, 1, 1], 1)
conv_transpose3d_grad_weight_default_1 = torch.ops.convt3d.conv_transpose3d_grad_weight.default(where, primals_3, [3, 3, 3], [2, 2, 2], [1, 1, 1], [1, 1, 1], [1, 1, 1], 1)
conv_transpose3d_grad_bias_default = torch.ops.convt3d.conv_transpose3d_grad_bias.default(where)
return (conv_transpose3d_grad_weight_default_1, conv_transpose3d_grad_bias_default, conv_transpose3d_grad_input_default_1, conv_transpose3d_grad_weight_default)
""")
