"""Programmatic dependent launch (csrc/cuda/fwd/pdl.cuh): the pw and twg kernels start while our
kernel before them (the weight repack, a bias prefill, strict fp32's scale pass) still runs, and
wait for it before reading what it wrote. Their results must be bitwise those of a launch after
it (CONVT3D_PDL=0, read per call).

A kernel that read the packed weight too early would read the previous call's: the caching
allocator hands each call the block the call before it freed. So the calls alternate between
two weights, back to back without a sync, and each result must match its own weight's."""
import pytest
import torch

from test_fast_forward import (PRECISIONS, SUITE_SMALL, allow_tf32, check, geometry_args, ic,
                               make, ops, reference)
from test_twg_forward import twg_available

pytestmark = pytest.mark.cuda

ROUNDS = 4  # pairs of calls (weight a, weight b) per test


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("case", range(len(SUITE_SMALL)), ids=lambda i: f"suite{i + 1}")
def test_pdl_matches_serial_launch(case, layout, precision, monkeypatch):
    spec = SUITE_SMALL[case]
    dtype, tf32, bound, _ = precision
    (x, wa, b), ref_a = make(spec, dtype, layout, seed=0)
    (_, wb, _), ref_b = make(spec, dtype, layout, seed=1)
    ref_b = (ref_a[0], ref_b[1], ref_a[2])  # the same x and bias, another weight
    s, p, op, d, g = geometry_args(spec)

    def call(w):
        return ic.conv_transpose3d(x, w, b, s, p, op, g, d)

    with allow_tf32(tf32):
        monkeypatch.setenv("CONVT3D_PDL", "0")
        serial = (call(wa), call(wb))
        monkeypatch.delenv("CONVT3D_PDL")
        ys = [call(w) for _ in range(ROUNDS) for w in (wa, wb)]
    check(serial[0], reference(spec, ref_a), bound)
    check(serial[1], reference(spec, ref_b), bound)
    for i, y in enumerate(ys):
        assert torch.equal(y, serial[i % 2]), f"call {i} (weight {'ab'[i % 2]}) differs"


def test_pdl_cases_cover_pw_and_twg():
    """The cases above run both kernels that launch with PDL (on an sm_90a build and device)."""
    if not twg_available():
        pytest.skip("pw and twg run on compute capability 9.0 only")
    paths = set()
    for spec in SUITE_SMALL:
        for layout in ("ncdhw", "cl"):
            (x, w, _), _ = make(spec, torch.float32, layout)
            with allow_tf32(True):
                paths.add(ops._forward_path(x, w, *geometry_args(spec)).split("_")[0])
    assert {"pw", "twg"} <= paths, sorted(paths)
