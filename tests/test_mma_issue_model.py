"""scripts/mma_issue_model.py counts the wgmma work the transposed kernel issues on a suite row
from the mirror's tile. Checked here against a count by hand (no GPU), so the share of useful
work docs/performance.md quotes rests on arithmetic a reader can redo."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import mma_issue_model  # noqa: E402
from inductor_convt3d.bench.roofline import flops  # noqa: E402
from inductor_convt3d.bench.suite import get_cases  # noqa: E402


@pytest.fixture(autouse=True)
def default_switches(monkeypatch):
    for name in list(os.environ):
        if name.startswith("CONVT3D_"):  # the tile the planner takes by default
            monkeypatch.delenv(name)


def test_case_3_by_hand():
    # Suite case 3, TF32, channels_last: N 16, Cin 32, Cout 64, 64^3, kernel (3, 5, 5),
    # stride 1, no padding: one phase of 75 taps, output 66 x 68 x 68.
    case = get_cases([3])[0]
    issued, tile = mma_issue_model.issued_flops(case, "tf32", True)
    nr, slices, stack, wstack = tile
    assert (nr, slices, stack, wstack) == (160, 4, 1, False)
    # the tile: 4 depth planes (a slice each) x 4 lines x 34 columns, box lines 34 + 4 wide,
    # so 4 x 38 = 152 of the run of 160 positions
    tiles = 16 * -(-66 // 4) * -(-68 // 4) * -(-68 // 34)
    assert tiles == 9248
    # per tile and tap: 4 slices x m64 x n160 x K 32 (two TF32 chunks of 16), 2 FLOP a MAC
    assert issued == tiles * 75 * (4 * 64 * 160 * 32 * 2)
    # useful: 16 x 64^3 inputs x 75 taps x 32 x 64 channels, every tap on real data
    assert flops(case) == 2 * 16 * 64 ** 3 * 75 * 32 * 64
    assert flops(case) / issued == pytest.approx(0.709, abs=1e-3)


def test_narrow_layers_issue_less_than_half_useful_work():
    # The stacked tiles of suite cases 1 (Cout 16, w taps stacked) and 4 (Cout 24, depth
    # planes stacked): their M rows and box shifts leave under half the issued work useful.
    for cid, stack, wstack in ((1, 4, True), (4, 2, False)):
        case = get_cases([cid])[0]
        issued, tile = mma_issue_model.issued_flops(case, "bf16", True)
        assert tile[2:] == (stack, wstack)
        assert 0.40 < flops(case) / issued < 0.50
