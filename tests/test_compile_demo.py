"""The main job, `python -m inductor_convt3d demo`, on a tiny problem."""
from __future__ import annotations

import re

import pytest
import torch
from compile_utils import env  # noqa: F401

from inductor_convt3d import config
from inductor_convt3d.__main__ import main

pytestmark = pytest.mark.usefixtures("env")


def test_demo_reports_rewrites_error_and_timings(capsys):
    device_types = config.device_types
    assert main(["demo", "--device", "cpu", "--size", "2", "--iters", "1", "--train"]) == 0
    out = capsys.readouterr().out
    assert "convt3d pass rewrote 4 node(s) (aten.convolution: 4); left 0" in out
    assert "rewrote 8 node(s) (aten.convolution: 4, aten.convolution_backward: 4)" in out
    errors = [float(e) for e in re.findall(r"max \|compiled - eager\|.*?  (\S+)", out)]
    assert len(errors) == 2 and max(errors) < 1e-5, out
    assert re.search(r"eager +[\d.]+ ms/call", out) and re.search(r"compiled +[\d.]+ ms/call", out)
    assert config.device_types == device_types  # the demo's CPU opt-in is undone


@pytest.mark.cuda
def test_demo_on_gpu(capsys):
    with config.patch(device_types=("cuda",)):
        assert main(["demo", "--size", "4", "--iters", "2"]) == 0
    out = capsys.readouterr().out
    assert f"device cuda ({torch.cuda.get_device_name()})" in out
    assert "convt3d pass rewrote 4 node(s)" in out
