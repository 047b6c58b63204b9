"""The transposed wgmma forward (csrc/cuda/fwd/twg_kernel.cuh: M = output channels, N = a run of
box positions, both operands by descriptor) against an fp64 F.conv_transpose3d on the CPU.

CONVT3D_TWG=1 (read per call) runs it wherever it is legal: bf16, fp16, TF32 or 3xTF32 (strict
fp32), Cout/groups <= 64, an sm_90a build on a compute capability 9.0 device, where a tile fits.
Elsewhere the same calls must pick another kernel and still be right. Covers every phase
pattern, channel counts and groups (tails of the 64-byte K chunk and of the 64-row M tile), box
tails, layouts that forbid the 16-byte loader, several channel chunks, empty phases and bitwise
repeatability. Outputs start as NaN
(conftest), so an unwritten element fails `check`."""
import pytest
import torch

import inductor_convt3d as ic
from dispatch_mirror import twg_h16, twg_run, twg_stack_ok, twg_stage, twg_wstack_ok
from test_fast_forward import (HALO_PHASE_CASES, LAYOUTS, SUITE_SMALL, allow_tf32,
                               assert_bitwise_repeatable, geometry_args, make, ops, run)

pytestmark = pytest.mark.cuda

PRECISIONS16 = [  # every mode the kernel has
    pytest.param((torch.bfloat16, True, 5e-3, "bf16"), id="bf16"),
    pytest.param((torch.float16, True, 5e-3, "fp16"), id="fp16"),
    pytest.param((torch.float32, True, 5e-4, "tf32"), id="tf32"),
    pytest.param((torch.float32, False, 1e-6, "3xtf32"), id="3xtf32"),
]


def twg_available():
    return (torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0))


@pytest.fixture(autouse=True)
def force_twg(monkeypatch):
    monkeypatch.setenv("CONVT3D_TWG", "1")


def run_twg(spec, precision, layout="ncdhw", seed=0):
    """Runs spec; asserts the twg kernel ran where it is legal and a tile fits (3xTF32's doubled
    operands may not: twg_run), the whole kernel name the dispatch mirror gives with
    CONVT3D_TWG=1 (narrow layers of any stride included), and the result."""
    cout_g = spec[2] // spec[9]
    (x, _, _), _ = make(spec, precision[0], layout, seed)  # strict fp32: fp16 products if dense
    legal = (twg_available() and cout_g <= 64
             and twg_run(spec, precision[3], h16=twg_h16(x, precision[3])) is not None)
    run(spec, precision, layout, seed, expect_path=twg_available(),
        kernel="twg" if legal else None)
    if not legal:
        (x, w, _), _ = make(spec, precision[0], layout)
        with allow_tf32(precision[1]):
            assert not ops._forward_path(x, w, *geometry_args(spec)).startswith("twg_")


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("case", range(len(HALO_PHASE_CASES)))
def test_twg_phase_patterns(case, layout, precision):
    run_twg(HALO_PHASE_CASES[case], precision, layout)


TWG_CHANNELS = [(1, 1), (3, 5), (17, 33), (48, 48), (33, 64), (64, 64), (130, 40), (8, 65)]


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("groups", [1, 3])
@pytest.mark.parametrize("cin_g,cout_g", TWG_CHANNELS)
def test_twg_channels_and_groups(cin_g, cout_g, groups, layout, precision):
    spec = (2, cin_g * groups, cout_g * groups, (4, 5, 6), (3, 3, 3), (1, 1, 1), (1, 1, 1),
            (0, 0, 0), (1, 1, 1), groups, cin_g % 2 == 1)
    run_twg(spec, precision, layout)


TWG_BOX_TAILS = [  # (N, input size): boxes of 2 x bqh x bqw outputs with ragged edges
    (1, (1, 1, 1)), (1, (2, 1, 30)), (3, (3, 7, 9)), (1, (5, 3, 61)), (2, (7, 20, 13)),
    (1, (4, 40, 5)),
]


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("cout", [48, 64])
@pytest.mark.parametrize("n,size", TWG_BOX_TAILS)
def test_twg_box_tails(n, size, cout, precision):
    spec = (n, 16, cout, size, (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True)
    run_twg(spec, precision, "cl")
    run_twg(spec, precision, "ncdhw")


TWG_UNEVEN_PHASES = [  # phases with whole boxes fewer than phase 0 along w, h or depth (the
    # mirror's tiles): each phase's tile mt is phase 0's tile mt (a.div_tiles), so a CTA beyond
    # a smaller phase's extent returns and every other output is still written
    (1, 8, 16, (3, 15, 57), (3, 3, 3), (3, 3, 3), (1, 1, 1), (2, 1, 0), (1, 1, 1), 1, True),
    (1, 8, 16, (3, 3, 55), (3, 3, 3), (3, 3, 3), (1, 1, 1), (2, 1, 0), (1, 1, 1), 1, True),
    (2, 16, 24, (2, 9, 22), (4, 2, 5), (3, 2, 3), (0, 0, 2), (1, 1, 2), (1, 1, 1), 1, False),
]


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("case", range(len(TWG_UNEVEN_PHASES)))
def test_twg_uneven_phases(case, layout, precision):
    run_twg(TWG_UNEVEN_PHASES[case], precision, layout)


@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
def test_twg_strict_fp32_long_reduction(layout, monkeypatch):
    # 3xTF32: K = 96 channels x 343 taps = 32928 products per output. The tensor core truncates
    # as it accumulates; the kernel adds each weight stage's big products with IEEE adds, so
    # the error stays at fp32 level (a chain over all of K would not meet 1e-6).
    spec = (1, 96, 64, (4, 5, 6), (7, 7, 7), (1, 1, 1), (3, 3, 3), (0, 0, 0), (1, 1, 1), 1, True)
    path = path_after_run(spec, (torch.float32, False, 1e-6, "3xtf32"), layout)
    if twg_available():
        assert path.startswith("twg_3xtf32_n128_s2_"), path


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_twg_layouts(layout, precision):
    spec = (2, 24, 40, (4, 5, 6), (3, 3, 3), (2, 1, 1), (1, 1, 1), (1, 0, 0), (1, 1, 1), 1, True)
    run_twg(spec, precision, layout)


def path_after_run(spec, precision, layout):
    """run_twg, then the kernel name the same call plans."""
    run_twg(spec, precision, layout)
    (x, w, _), _ = make(spec, precision[0], layout)
    with allow_tf32(precision[1]):
        return ops._forward_path(x, w, *geometry_args(spec))


def run_twg_stream(spec, precision, layout, stream, monkeypatch):
    """run_twg with CONVT3D_BOX_STREAM=stream ("auto": unset); asserts the box streamed exactly
    where the mirror says: "1" wherever a second buffer fits, "0" never, and by default with
    the channel-fast loader (TMA or cp.async), in 3xTF32 or in TF32, not with the 16-bit
    scalar loader ("_mfast"; 3xTF32 may stage that loader's box: "_stage")."""
    if stream == "auto":
        monkeypatch.delenv("CONVT3D_BOX_STREAM", raising=False)
    else:
        monkeypatch.setenv("CONVT3D_BOX_STREAM", stream)
    path = path_after_run(spec, precision, layout)
    if path.startswith("twg_"):
        kvec = "_mfast" not in path and "_stage" not in path  # not the scalar loader's box
        assert kvec == (layout == "cl"), path
        streams = twg_run(spec, precision[3], kvec, layout == "ncdhw")[1]  # a second buffer fits
        assert ("_stream_" in path) == streams, path
        if precision[3] != "3xtf32":
            assert streams == (stream == "1" or (
                stream == "auto" and (kvec or precision[3] == "tf32"))), path


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("stream", ["1", "0", "auto"])
def test_twg_long_reduction(stream, layout, precision, monkeypatch):
    # 4 channel chunks (7 in TF32) x 125 taps; a partial last chunk (Cin 112); the box reloads
    # per chunk, or streams through two buffers
    spec = (1, 112, 64, (5, 6, 6), (5, 5, 5), (1, 1, 1), (2, 2, 2), (0, 0, 0), (1, 1, 1), 1, True)
    run_twg_stream(spec, precision, layout, stream, monkeypatch)


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("stream", ["1", "0", "auto"])
@pytest.mark.parametrize("cin", [72, 128])
def test_twg_short_phases_many_chunks(cin, stream, layout, precision, monkeypatch):
    # suite case 11's shape, small: 8 phases of 8 taps, so each weight stage is a whole chunk
    # and the box changes at every stage; Cin 72 ends on a half chunk in 16-bit
    spec = (2, cin, 56, (5, 6, 9), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, False)
    run_twg_stream(spec, precision, layout, stream, monkeypatch)


def run_switch_on_off(spec, precision, layout, switch, monkeypatch):
    """Runs spec (right on poisoned outputs: run) with `switch` set to "1", then "0"; asserts both
    give the same bits, and returns the path each planned (None each where twg cannot run)."""
    ys, paths = [], []
    for value in ["1", "0"]:
        monkeypatch.setenv(switch, value)
        ys.append(run(spec, precision, layout, expect_path=False,
                      kernel="twg" if twg_available() else None))
        path = None
        if twg_available():
            (x, w, _), _ = make(spec, precision[0], layout)
            with allow_tf32(precision[1]):
                path = ops._forward_path(x, w, *geometry_args(spec))
        paths.append(path)
    assert torch.equal(ys[0], ys[1])
    return paths


TMA_SPECS = [  # N, Cin, Cout, size, kernel, stride, padding, output_padding, dilation, groups, bias
    # stride 1, a partial last chunk (Cin 40), boxes past every edge of x
    (2, 40, 48, (4, 5, 6), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True),
    # suite case 11's shape: 8 phases of 2 x 2 x 2 taps, several chunks, box streamed
    (2, 128, 56, (5, 6, 9), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, False),
    # two groups of whole chunks: the box's channel coordinate starts at g * Cin/g
    (1, 128, 96, (3, 4, 5), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 2, True),
    # suite case 12's shape: 1 or 2 taps per axis by phase, so the one TMA box spans the
    # largest span and the smaller phases read it skewed
    (2, 64, 64, (5, 6, 9), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, True),
    # different tap counts on every axis (1-3), Cout 24 (two stacked planes where they pay)
    (1, 32, 24, (4, 5, 7), (3, 4, 5), (2, 3, 2), (1, 0, 2), (1, 2, 0), (1, 1, 1), 1, True),
]


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("layout", ["cl", "cl_narrow8"])
@pytest.mark.parametrize("case", range(len(TMA_SPECS)))
def test_twg_tma_box_matches_cpasync(case, layout, precision, monkeypatch):
    """The TMA box load (name "_tma") and the cp.async one (CONVT3D_TWG_TMA=0) fill the same
    box: results identical bit for bit, and right. twg is forced (the fixture), so the path is
    checked by name rather than against the mirror's automatic choice."""
    paths = run_switch_on_off(TMA_SPECS[case], precision, layout, "CONVT3D_TWG_TMA", monkeypatch)
    for tma, path in zip(["1", "0"], paths):
        if path is not None:
            assert path.endswith("_tma") == (tma == "1"), path


STAGE_SPECS = [  # strict fp32, NCDHW x, several channel chunks (a streamed box)
    # suite case 12's shape: 1 or 2 taps per axis by phase (the staged box spans the largest)
    (2, 64, 64, (5, 6, 8), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, True),
    # suite case 11's shape: 8 phases of 2 x 2 x 2 taps, 8 chunks, the suite's tile (bqw 16)
    (2, 128, 56, (4, 14, 16), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, False),
    # the same with long weight stages (a tile of bqw 8), then one whose staging buffer does
    # not fit beside them (scalar loader)
    (1, 128, 56, (3, 8, 16), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, False),
    (1, 128, 56, (5, 6, 12), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, False),
    # two groups of 40 channels: a partial last chunk whose channels past Cin/g are the next
    # group's (zeroed by the split) or past Cin (zero-filled by the TMA)
    (1, 80, 96, (4, 5, 8), (3, 3, 3), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 2, True),
    # dilation 2: taps two apart, boxes past every edge of x (negative coordinates)
    (1, 24, 40, (3, 4, 12), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (2, 2, 2), 1, True),
    # W = 4: a box line wider than x's
    (2, 48, 64, (3, 7, 4), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, False),
]


@pytest.mark.parametrize("layout", ["ncdhw", "misaligned", "sliced"])
@pytest.mark.parametrize("case", range(len(STAGE_SPECS)))
def test_twg_staged_box_matches_scalar_loader(case, layout, monkeypatch):
    """Strict fp32 with NCDHW-like x: the staged box (one TMA copy of x's own layout per chunk,
    split by the warps; name "_stage") and the scalar loader's (CONVT3D_TWG_STAGE=0) hold the
    same values for every tap: results identical bit for bit, and right. The staged box runs
    exactly where the mirror says (twg_stage): not where x's data pointer is misaligned or its
    w stride is not 1."""
    monkeypatch.setenv("CONVT3D_TWG_H16", "0")  # TF32 operands: the loaders that stage boxes
    spec = STAGE_SPECS[case]
    precision = (torch.float32, False, 1e-6, "3xtf32")
    paths = run_switch_on_off(spec, precision, layout, "CONVT3D_TWG_STAGE", monkeypatch)
    (x, _, _), _ = make(spec, precision[0], layout)  # the same strides and alignment
    monkeypatch.delenv("CONVT3D_TWG_STAGE")  # the mirror's rule with the switch unset
    run = twg_run(spec, "3xtf32", False, True)
    mirror = twg_stage(x, spec, "3xtf32", False, run) == "stage"
    for stage, path in zip(["1", "0"], paths):
        if path is None:
            continue
        staged = "_stage" in path  # (a prefilled y adds "_prefill")
        if stage == "1":
            assert staged == mirror, path
        if stage == "0" or layout != "ncdhw":
            assert not staged, path
        elif case != 3:  # every other spec stages its box with NCDHW x
            assert staged, path


PIECE_SPECS = [  # strict fp32, NCDHW x, two stacked depth planes, the box reloaded per chunk
    # suite case 4's shape: three channel chunks, so each reload finds its first two pieces
    # copied during the previous chunk
    (1, 48, 24, (4, 12, 16), (3, 3, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False),
    # padding and bias, Cin 44: the last chunk's fourth piece lies past Cin (zero-filled)
    (1, 44, 24, (4, 10, 16), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True),
    # Cin 12: one chunk, its fourth piece past Cin; Cin 20: a partial second chunk
    (1, 12, 24, (4, 12, 16), (3, 3, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False),
    (1, 20, 24, (4, 12, 16), (3, 3, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    # two groups of 20 channels: the pieces past Cin/g hold the next group's (zeroed)
    (1, 40, 48, (4, 10, 16), (3, 3, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 2, True),
    # two samples, tiles with ragged edges in h and w
    (2, 32, 24, (5, 9, 12), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, False),
]


@pytest.mark.parametrize("layout", ["ncdhw", "misaligned", "sliced"])
@pytest.mark.parametrize("case", range(len(PIECE_SPECS)))
def test_twg_box_pieces_match_scalar_loader(case, layout, monkeypatch):
    """Strict fp32 with NCDHW-like x, stacked depth planes and a box reloaded per chunk: the box
    staged in pieces (four TMA copies of 4 channels each through two buffers, split by the
    warps; name "_pieces") and the scalar loader's (CONVT3D_TWG_STAGE=0) hold the same values
    for every tap: results identical bit for bit, and right. The pieces run exactly where the
    mirror says (twg_stage), which is every spec here with NCDHW x; not where x's data pointer
    is misaligned or its w stride is not 1."""
    monkeypatch.setenv("CONVT3D_TWG_H16", "0")  # TF32 operands: the loaders that stage boxes
    spec = PIECE_SPECS[case]
    precision = (torch.float32, False, 1e-6, "3xtf32")
    paths = run_switch_on_off(spec, precision, layout, "CONVT3D_TWG_STAGE", monkeypatch)
    (x, _, _), _ = make(spec, precision[0], layout)
    monkeypatch.delenv("CONVT3D_TWG_STAGE")
    mirror = twg_stage(x, spec, "3xtf32", False, twg_run(spec, "3xtf32", False, True))
    assert mirror == ("pieces" if layout == "ncdhw" else None)
    for stage, path in zip(["1", "0"], paths):
        if path is not None:
            assert ("_pieces" in path) == (stage == "1" and layout == "ncdhw"), path


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("case", [1, 2, 10, 11], ids=lambda i: f"suite{i + 1}")
def test_twg_suite_geometries(case, layout, precision):
    run_twg(SUITE_SMALL[case], precision, layout)


def test_twg_empty_phases_write_exactly_bias():
    spec = (1, 8, 16, (3, 4, 5), (3, 3, 3), (2, 2, 2), (0, 0, 0), (0, 0, 0), (2, 2, 2), 1, True)
    (x, w, b), _ = make(spec, torch.bfloat16)
    y = ic.conv_transpose3d(x, w, b, 2, 0, 0, 1, 2)
    odd = y[:, :, 1::2]
    assert odd.numel() > 0
    assert torch.equal(odd, b.view(1, -1, 1, 1, 1).expand_as(odd))


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
def test_twg_bitwise_deterministic(layout, precision):
    spec = (2, 48, 64, (6, 7, 9), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True)
    assert_bitwise_repeatable(spec, precision, layout,
                              "twg_" if twg_available() else None)


TWG_TWO_SLICE_CASES = [  # two slices per CTA: depth tails of 1, stride 2, long and many chunks
    (1, 16, 48, (5, 3, 7), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True),
    (2, 72, 56, (5, 6, 9), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, False),
    (1, 112, 64, (5, 6, 7), (5, 5, 5), (1, 1, 1), (2, 2, 2), (0, 0, 0), (1, 1, 1), 1, True),
    (1, 24, 40, (3, 4, 9), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (2, 2, 2), 1, True),
]


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("case", range(len(TWG_TWO_SLICE_CASES)))
def test_twg_two_slices(case, layout, precision, monkeypatch):
    # CONVT3D_TWG_SLICES=2: two warpgroups per CTA (two CTAs per SM), half the weight stage
    monkeypatch.setenv("CONVT3D_TWG_SLICES", "2")
    path = path_after_run(TWG_TWO_SLICE_CASES[case], precision, layout)
    if path.startswith("twg_"):
        assert "_s2_" in path, path


# Stacked M (CONVT3D_TWG_STACK=J, CONVT3D_TWG_WSTACK=0): J depth planes per warpgroup, blocks
# of 64 / J channels.
TWG_STACK_CASES = [  # N, Cin, Cout, size, kernel, stride, padding, output_padding, dilation, groups, bias
    # suite case 4's shape: Cout 24 (J = 2), 7 output planes (a depth tail for 8 and 16 per CTA)
    (2, 24, 24, (5, 6, 9), (3, 3, 3), (1, 1, 1), (0, 1, 1), (0, 0, 0), (1, 1, 1), 1, True),
    # suite case 1's shape: Cout 16, kernel (3, 5, 7)
    (1, 16, 16, (5, 4, 7), (3, 5, 7), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False),
    # stride 2, kernel 3: phases of 1 and 2 depth taps; output_padding; Cout 32. Not stacked
    # (a phase's depth taps are not the kernel's: one TMA box per shift cannot skip the others)
    (2, 32, 32, (5, 6, 7), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, True),
    # stride 2, kernel 4, Cin 40 (two 16-bit chunks, three TF32 ones), Cout 12 (not stacked)
    (1, 40, 12, (6, 5, 6), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, False),
    # stride 1 in depth, 2 in h and w: stacked, with phases of 1 and 2 h and w taps
    (2, 24, 24, (5, 4, 5), (3, 3, 4), (1, 2, 2), (1, 1, 1), (0, 1, 0), (1, 1, 1), 1, True),
    # depth dilation 2: taps two planes apart, so only J = 1 is legal
    (1, 16, 16, (4, 5, 6), (3, 3, 3), (1, 1, 1), (2, 1, 0), (0, 0, 0), (2, 1, 1), 1, True),
    # two groups of Cout 8
    (2, 32, 16, (5, 4, 6), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 2, True),
    # one depth tap: every block of every shift has its tap
    (1, 16, 8, (3, 5, 6), (1, 3, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
]


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("stack", [2, 4])
@pytest.mark.parametrize("case", range(len(TWG_STACK_CASES)))
def test_twg_stacked_planes(case, stack, layout, precision, monkeypatch):
    monkeypatch.setenv("CONVT3D_TWG_STACK", str(stack))
    monkeypatch.setenv("CONVT3D_TWG_WSTACK", "0")  # depth planes (w taps: below)
    spec = TWG_STACK_CASES[case]
    path = path_after_run(spec, precision, layout)
    if path.startswith("twg_"):
        assert (f"_j{stack}_" in path) == twg_stack_ok(spec, stack), path


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("stack", [2, 4])
def test_twg_stacked_bitwise_deterministic(stack, layout, precision, monkeypatch):
    monkeypatch.setenv("CONVT3D_TWG_STACK", str(stack))
    monkeypatch.setenv("CONVT3D_TWG_WSTACK", "0")
    spec = TWG_STACK_CASES[0 if stack == 2 else 1]
    fits = twg_available() and twg_run(spec, precision[3]) is not None
    assert_bitwise_repeatable(spec, precision, layout, "twg_" if fits else None)


# W-stacked M (CONVT3D_TWG_WSTACK=1, CONVT3D_TWG_STACK=J): the J blocks of 64 / J channels are J
# neighbouring w taps of the same outputs, summed across blocks in the epilogue.
TWG_WSTACK_CASES = [  # N, Cin, Cout, size, kernel, stride, padding, output_padding, dilation, groups, bias
    # suite case 1's shape: Cout 16, kernel (3, 5, 7): two w shifts of 4 and 3 taps
    (1, 16, 16, (5, 4, 7), (3, 5, 7), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False),
    # five w taps (the first shift has one), w padding and output_padding, a bias
    (2, 24, 16, (3, 5, 9), (2, 3, 5), (1, 1, 1), (1, 0, 2), (0, 0, 0), (1, 1, 1), 1, True),
    # stride 2 along w with kernel 7: phases of 4 and 3 w taps (a TMA box spans the larger)
    (1, 16, 16, (3, 4, 6), (1, 3, 7), (1, 1, 2), (0, 1, 3), (0, 0, 1), (1, 1, 1), 1, True),
    # w dilation 2: block j's columns two box positions apart
    (1, 16, 12, (4, 3, 8), (3, 1, 5), (1, 1, 1), (1, 0, 4), (0, 0, 0), (1, 1, 2), 1, False),
    # two groups of Cout 8, odd Cin/g (a K tail)
    (2, 10, 16, (3, 5, 6), (3, 3, 4), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 2, True),
    # Cin 40 (two 16-bit chunks, three TF32 ones), Cout 32 (J <= 2), w of one position
    (1, 40, 32, (4, 6, 1), (3, 3, 3), (1, 1, 1), (1, 1, 0), (0, 0, 0), (1, 1, 1), 1, True),
    # long w lines: several boxes along w, a tail in each line
    (1, 16, 16, (2, 3, 61), (1, 2, 4), (1, 1, 1), (0, 0, 1), (0, 0, 0), (1, 1, 1), 1, True),
    # strides on every axis with empty phases (gcd(stride, dilation) = 2 along d); stride 2
    # along w: not w-stacked (a phase's w taps are not the kernel's)
    (1, 16, 8, (3, 4, 5), (3, 3, 4), (2, 1, 2), (1, 1, 1), (1, 0, 1), (2, 1, 1), 1, True),
    # stride 2 in depth and h, 1 in w: w-stacked, with phases of 1 and 2 depth and h taps
    (1, 16, 16, (3, 4, 6), (3, 2, 5), (2, 2, 1), (1, 0, 2), (1, 1, 0), (1, 1, 1), 1, True),
]


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("stack", [2, 4])
@pytest.mark.parametrize("case", range(len(TWG_WSTACK_CASES)))
def test_twg_wstacked_taps(case, stack, layout, precision, monkeypatch):
    monkeypatch.setenv("CONVT3D_TWG_STACK", str(stack))
    monkeypatch.setenv("CONVT3D_TWG_WSTACK", "1")
    spec = TWG_WSTACK_CASES[case]
    path = path_after_run(spec, precision, layout)
    if path.startswith("twg_"):
        assert (f"_w{stack}_" in path) == twg_wstack_ok(spec, stack), path


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
def test_twg_wstacked_bitwise_deterministic(layout, precision, monkeypatch):
    monkeypatch.setenv("CONVT3D_TWG_STACK", "4")
    monkeypatch.setenv("CONVT3D_TWG_WSTACK", "1")
    spec = TWG_WSTACK_CASES[0]
    fits = twg_available() and twg_run(spec, precision[3]) is not None
    assert_bitwise_repeatable(spec, precision, layout, "twg_" if fits else None)


@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
def test_twg_wstacked_ignores_stale_shared_memory(layout, precision, monkeypatch):
    """W-stacked blocks multiply zero weight rows by box rows just past the box, which no box load
    writes (the kernel zeroes them): NaN left in shared memory by an earlier call must not reach
    the output. A call on x full of NaN with larger boxes leaves NaN there first."""
    monkeypatch.setenv("CONVT3D_TWG_STACK", "4")
    monkeypatch.setenv("CONVT3D_TWG_WSTACK", "1")
    spec = TWG_WSTACK_CASES[0]
    big = spec[:3] + ((6, 12, 40),) + spec[4:]
    (x, w, b), _ = make(big, precision[0], layout)
    with allow_tf32(precision[1]):
        y = ic.conv_transpose3d(torch.full_like(x, float("nan")), w, b, *geometry_args(big)[:3],
                                big[9], big[8])
    assert torch.isnan(y).all()
    run(spec, precision, layout, expect_path=False, kernel="twg" if twg_available() else None)


# 3xTF32 layers whose tile (box buffers included) still fits with weight stages of twice the
# taps (a.twg_long, name "_long"; dispatch_mirror.twg_run's 8th item), and two whose tiles do
# not: K = 96 x 105 taps (partial sums of 16 K steps between IEEE adds), suite case 2 shrunk
# (three channel chunks, 3 x 3 x 3), suite case 11 shrunk (streamed), and a streamed box and
# two stacked planes that keep the short stages.
STRICT_LONG_CASES = [
    (1, 96, 64, (4, 5, 6), (7, 5, 3), (1, 1, 1), (3, 2, 1), (0, 0, 0), (1, 1, 1), 1, True),
    (1, 48, 48, (4, 20, 40), (3, 3, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, False),
    (2, 128, 64, (5, 6, 9), (4, 4, 4), (2, 2, 2), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, False),
    (1, 48, 48, (4, 16, 64), (3, 3, 3), (1, 1, 1), (0, 0, 0), (0, 0, 0), (1, 1, 1), 1, True),
    (1, 24, 24, (4, 5, 20), (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), 1, True),
]


@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("case", range(len(STRICT_LONG_CASES)))
def test_twg_strict_fp32_long_stages(case, layout, monkeypatch):
    monkeypatch.delenv("CONVT3D_TWG")  # the automatic choice, as the mirror predicts it
    monkeypatch.setenv("CONVT3D_TWG_H16", "0")  # the TF32 operands' stage sizes
    spec = STRICT_LONG_CASES[case]
    run(spec, (torch.float32, False, 1e-6, "3xtf32"), layout)
    assert twg_run(spec, "3xtf32")[7] == (case < 3)


@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
def test_twg_strict_fp32_long_stages_off(layout, monkeypatch):
    # CONVT3D_TWG_LONG=0: the long-stage layers above take the short stages, still right
    monkeypatch.setenv("CONVT3D_TWG_LONG", "0")
    monkeypatch.setenv("CONVT3D_TWG_H16", "0")
    spec = STRICT_LONG_CASES[0]
    path = path_after_run(spec, (torch.float32, False, 1e-6, "3xtf32"), layout)
    assert "_long" not in path, path
    assert not twg_run(spec, "3xtf32")[7]


# CONVT3D_TWG_BQW=n: tiles n outputs wide where phase 0's w extent (12 here) splits into such
# tiles (12, 6, 4, 3, ...), else no twg; run_twg asserts which, by the mirror.
@pytest.mark.parametrize("precision", PRECISIONS16)
@pytest.mark.parametrize("layout", ["ncdhw", "cl"])
@pytest.mark.parametrize("bqw", ["3", "6", "5"])
def test_twg_forced_tile_width(bqw, layout, precision, monkeypatch):
    monkeypatch.setenv("CONVT3D_TWG_BQW", bqw)
    spec = (1, 24, 40, (3, 7, 12), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1, True)
    assert (twg_run(spec, precision[3]) is not None) == (bqw != "5")
    run_twg(spec, precision, layout)
