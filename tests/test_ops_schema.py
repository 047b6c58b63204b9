"""The printed schemas are the ops' contract: pinned with expecttest."""
import torch
from expecttest import TestCase

import inductor_convt3d  # noqa: F401


class TestSchemas(TestCase):
    def test_schemas(self):
        ops = torch.ops.convt3d
        text = "\n".join(str(getattr(ops, name).default._schema) for name in (
            "conv_transpose3d", "conv_transpose3d_grad_input", "conv_transpose3d_grad_weight",
            "conv_transpose3d_grad_bias"))
        self.assertExpectedInline(text, """\
convt3d::conv_transpose3d(Tensor input, Tensor weight, Tensor? bias, SymInt[3] stride, SymInt[3] padding, SymInt[3] output_padding, SymInt[3] dilation, SymInt groups) -> Tensor
convt3d::conv_transpose3d_grad_input(Tensor grad_output, Tensor weight, SymInt[3] stride, SymInt[3] padding, SymInt[3] output_padding, SymInt[3] dilation, SymInt groups) -> Tensor
convt3d::conv_transpose3d_grad_weight(Tensor grad_output, Tensor input, SymInt[3] kernel_size, SymInt[3] stride, SymInt[3] padding, SymInt[3] output_padding, SymInt[3] dilation, SymInt groups) -> Tensor
convt3d::conv_transpose3d_grad_bias(Tensor grad_output) -> Tensor""")
