"""Graph surgery: replace the transposed 3-D convolutions of an aten FX graph with convt3d ops.

aten.convolution (transposed=True)          -> convt3d::conv_transpose3d
aten.convolution_backward (transposed=True) -> convt3d::conv_transpose3d_grad_{input,weight,bias},
                                               one per output that output_mask asks for and the
                                               graph uses

A node the kernels cannot serve is left as it is, with the reason recorded. Running this twice
changes nothing the second time: rewritten nodes are gone, and skipped ones carry their reason in
node.meta, so a later stage (post-grad after joint) neither rewrites nor reports them again.
"""
from __future__ import annotations

import dataclasses
import operator
from collections import Counter

import torch
from torch import fx

from .. import _ext, config
from .._shapes import triple

aten = torch.ops.aten
FORWARD = aten.convolution.default
BACKWARD = aten.convolution_backward.default

KERNEL_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
SKIP_KEY = "convt3d_skip"


@dataclasses.dataclass
class Result:
    rewritten: Counter = dataclasses.field(default_factory=Counter)  # by aten op
    inserted: Counter = dataclasses.field(default_factory=Counter)  # by convt3d op
    skipped: list = dataclasses.field(default_factory=list)  # (node name, aten op, reason)


def rewrite(graph: fx.Graph) -> Result:
    result = Result()
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        if node.target is FORWARD:
            _rewrite_forward(graph, node, result)
        elif node.target is BACKWARD:
            _rewrite_backward(graph, node, result)
    return result


def _rewrite_forward(graph: fx.Graph, node: fx.Node, result: Result) -> None:
    a = _bind(node)
    if not a["transposed"]:
        return  # an ordinary convolution: not ours, not worth a log line
    operands = {"input": a["input"], "weight": a["weight"]}
    if a["bias"] is not None:
        operands["bias"] = a["bias"]
    reason = _switched_off("rewrite_forward") or _refuse(operands)
    if reason:
        return _skip(node, reason, result)
    op = torch.ops.convt3d.conv_transpose3d.default
    args = (a["input"], a["weight"], a["bias"], *_geometry(a))
    val, reason = _fake_run(op, args)
    if reason:
        return _skip(node, reason, result)
    new = _insert(graph, node, op, args, val, node.meta)
    node.replace_all_uses_with(new)
    graph.erase_node(node)
    result.rewritten["aten.convolution"] += 1
    result.inserted[_name(op)] += 1


def _rewrite_backward(graph: fx.Graph, node: fx.Node, result: Result) -> None:
    a = _bind(node)
    if not a["transposed"]:
        return
    reason = (_switched_off("rewrite_backward")
              or _refuse({n: a[n] for n in ("grad_output", "input", "weight")}))
    users = list(node.users)
    if reason is None and not all(
            u.op == "call_function" and u.target is operator.getitem and isinstance(u.args[1], int)
            for u in users):
        reason = "an output is used other than through getitem"
    if reason is None and any(u.users and not a["output_mask"][u.args[1]] for u in users):
        reason = "the graph uses an output that output_mask leaves out"
    if reason:
        return _skip(node, reason, result)

    # On GPU, Inductor's decomposition has already taken grad_bias out as a sum over
    # grad_output (output_mask[2] is False here): that reduction stays with Inductor.
    geometry = _geometry(a)
    grad_output, weight = a["grad_output"], a["weight"]
    kernel_size = list(_val(weight).shape[2:])
    ops = torch.ops.convt3d
    build = {
        0: (ops.conv_transpose3d_grad_input.default, (grad_output, weight, *geometry)),
        1: (ops.conv_transpose3d_grad_weight.default,
            (grad_output, a["input"], kernel_size, *geometry)),
        2: (ops.conv_transpose3d_grad_bias.default, (grad_output,)),
    }
    # Trace every replacement on fake tensors first, so that a refusal leaves the graph intact.
    plan = []
    for user in [u for u in users if u.users]:  # a gradient nobody reads is not computed
        op, args = build[user.args[1]]
        val, reason = _fake_run(op, args)
        if reason:
            return _skip(node, reason, result)
        plan.append((user, op, args, val))
    for user, op, args, val in plan:
        args = tuple(_symbolic_sizes(graph, node, weight, x) if x is kernel_size else x
                     for x in args)
        new = _insert(graph, node, op, args, val, node.meta)
        user.replace_all_uses_with(new)
        graph.erase_node(user)
        result.inserted[_name(op)] += 1
    planned = {user for user, *_ in plan}
    for user in users:
        if user not in planned:  # the unread getitems
            graph.erase_node(user)
    graph.erase_node(node)
    result.rewritten["aten.convolution_backward"] += 1


def _switched_off(setting: str) -> str | None:
    return None if getattr(config, setting) else f"inductor_convt3d.config.{setting} is False"


def _refuse(operands: dict) -> str | None:
    """Why the convt3d kernels cannot serve these operands; None when they can."""
    if not _ext.available():
        return "the compiled extension inductor_convt3d._C is not loaded"
    vals = {name: _val(n) for name, n in operands.items()}
    missing = [name for name, v in vals.items() if not isinstance(v, torch.Tensor)]
    if missing:
        return f"no fake tensor metadata for {', '.join(missing)}"
    if any(v.dim() != 5 for name, v in vals.items() if name != "bias"):
        dims = ", ".join(f"{name} {v.dim()}-D" for name, v in vals.items() if name != "bias")
        return f"not a 3-D transposed convolution ({dims}; the kernels take 5-D tensors)"
    first = next(iter(vals.values()))
    enabled = config.enabled_device_types()
    if first.device.type not in enabled:
        return (f"device type '{first.device.type}' is not in "
                f"inductor_convt3d.config.device_types {enabled}")
    if any(v.device != first.device for v in vals.values()):
        return "operands on different devices: " + ", ".join(
            f"{name} {v.device}" for name, v in vals.items())
    if first.dtype not in KERNEL_DTYPES:
        return f"no convt3d kernel for dtype {first.dtype}"
    if any(v.dtype != first.dtype for v in vals.values()):
        return "mixed dtypes: " + ", ".join(f"{name} {v.dtype}" for name, v in vals.items())
    return None


def _geometry(a: dict) -> tuple:
    # aten keeps what the caller passed: F.conv_transpose3d(x, w, stride=2) reaches the graph as
    # stride=[2]; the convt3d schemas take exactly three.
    return (triple(a["stride"], "stride"), triple(a["padding"], "padding"),
            triple(a["output_padding"], "output_padding"), triple(a["dilation"], "dilation"),
            a["groups"])


def _fake_run(op, args: tuple):
    """(fake result, None), or (None, reason) when the op's fake kernel refuses the arguments."""
    fake_args = fx.map_arg(args, _val)
    mode = torch._guards.detect_fake_mode(
        [x for x in torch.utils._pytree.tree_leaves(fake_args) if isinstance(x, torch.Tensor)])
    if mode is None:
        return None, "no fake mode to trace the replacement in"
    try:
        with mode:
            return op(*fake_args), None
    except Exception as e:  # a refusal here means aten accepted what our op does not
        return None, f"{_name(op)} refused the arguments: {type(e).__name__}: {e}"


def _insert(graph: fx.Graph, before: fx.Node, op, args: tuple, val, meta: dict) -> fx.Node:
    with graph.inserting_before(before):
        new = graph.call_function(op, args)
    # Keep provenance (stack_trace, nn_module_stack, seq_nr); the value is the new op's own.
    new.meta.update({k: v for k, v in meta.items() if k not in ("val", "tensor_meta", SKIP_KEY)})
    new.meta["val"] = val
    new.meta["original_aten"] = op
    return new


def _symbolic_sizes(graph: fx.Graph, before: fx.Node, weight: fx.Node, sizes: list) -> list:
    """Ints stay ints; a symbolic kernel size (a weight passed as a dynamic input) becomes a
    sym_size node, since an FX argument must be a constant or a node."""
    out = []
    for dim, size in enumerate(sizes, start=2):
        if isinstance(size, int):
            out.append(size)
            continue
        with graph.inserting_before(before):
            n = graph.call_function(aten.sym_size.int, (weight, dim))
        n.meta["val"] = size
        out.append(n)
    return out


def _skip(node: fx.Node, reason: str, result: Result) -> None:
    if node.meta.get(SKIP_KEY) == reason:
        return  # reported when an earlier stage saw this node
    node.meta[SKIP_KEY] = reason
    result.skipped.append((node.name, f"aten.{node.target._opname}", reason))


def _bind(node: fx.Node) -> dict:
    """Arguments by schema name, whether the graph passes them positionally or by keyword."""
    bound = {}
    for i, arg in enumerate(node.target._schema.arguments):
        if i < len(node.args):
            bound[arg.name] = node.args[i]
        elif arg.name in node.kwargs:
            bound[arg.name] = node.kwargs[arg.name]
        elif arg.has_default_value():
            bound[arg.name] = arg.default_value
    return bound


def _val(x):
    return x.meta.get("val") if isinstance(x, fx.Node) else None


def _name(op) -> str:
    return op.name().replace("::", ".")
