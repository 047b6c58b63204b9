"""torch.library.opcheck with all its test utilities, over the same sample_inputs generator
that `python -m inductor_convt3d check` runs for users."""
import pytest
import torch

from conftest import device_params
from inductor_convt3d.testing import OPCHECK_UTILS, sample_inputs

CASES = list(enumerate(sample_inputs("cpu")))


def test_opcheck_covers_every_op():
    names = {op.name() for _, (op, _) in CASES}
    assert names == {"convt3d::conv_transpose3d", "convt3d::conv_transpose3d_grad_input",
                     "convt3d::conv_transpose3d_grad_weight", "convt3d::conv_transpose3d_grad_bias"}
    assert set(OPCHECK_UTILS) >= {"test_schema", "test_autograd_registration", "test_faketensor",
                                  "test_aot_dispatch_static", "test_aot_dispatch_dynamic"}


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("index", range(len(CASES)))
def test_opcheck(index, device):
    op, args = list(sample_inputs(device))[index]
    result = torch.library.opcheck(op, args, test_utils=OPCHECK_UTILS)
    assert all(v == "SUCCESS" for v in result.values()), result
