"""torch.export keeps the convt3d op; an AOTInductor package built with the pass runs in a fresh
process that loads the library."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import torch
from compile_utils import DEVICES, N_CONVT, TOL, env, net, net_input  # noqa: F401

import inductor_convt3d
from inductor_convt3d import counters

pytestmark = pytest.mark.usefixtures("env")
OP = torch.ops.convt3d.conv_transpose3d.default


def ops_in(gm: torch.fx.GraphModule) -> list:
    return [n.target for n in gm.graph.nodes if n.op == "call_function"]


def aten_transposed(gm: torch.fx.GraphModule) -> list:
    return [n for n in gm.graph.nodes if n.op == "call_function" and (
        "aten.conv_transpose" in str(n.target)
        or n.target is torch.ops.aten.convolution.default and n.args[6])]


def test_export_of_converted_model_keeps_the_op():
    m, x = inductor_convt3d.convert(net("cpu").eval()), net_input("cpu")
    batch = torch.export.Dim("batch", min=1, max=8)
    ep = torch.export.export(m, (x,), dynamic_shapes=({0: batch},))
    for graph in (ep.graph_module, ep.run_decompositions().graph_module):
        assert ops_in(graph).count(OP) == N_CONVT
        assert not aten_transposed(graph)
    x3 = net_input("cpu", batch=3)
    with torch.no_grad():
        torch.testing.assert_close(ep.module()(x3), m(x3), **TOL["cpu"])


@pytest.mark.parametrize("device", DEVICES)
def test_aoti_package_with_the_pass_runs_in_a_fresh_process(device, tmp_path):
    m, x = net(device).eval(), net_input(device)
    with torch.no_grad():
        ref = m(x)
    ep = torch.export.export(m, (x,))  # plain aten: the pass does the rewriting
    with inductor_convt3d.enable():
        path = torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp_path / "m.pt2"))
    assert counters.rewritten == {"aten.convolution": N_CONVT}
    torch.save({"x": x, "ref": ref}, tmp_path / "io.pt")
    script = textwrap.dedent(f"""
        import torch
        import inductor_convt3d  # loads the library that defines torch.ops.convt3d
        torch.backends.cudnn.allow_tf32 = False  # as for the reference (full fp32)
        io = torch.load({str(tmp_path / "io.pt")!r})
        run = torch._inductor.aoti_load_package({path!r})
        torch.testing.assert_close(run(io["x"]), io["ref"], atol={TOL[device]["atol"]},
                                   rtol={TOL[device]["rtol"]})
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
