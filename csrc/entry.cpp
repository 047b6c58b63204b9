#include "entry.h"

#include <ATen/ATen.h>
#include <c10/util/irange.h>

#include <cstdlib>
#include <limits>

namespace convt3d {
namespace {

constexpr const char* kFwd = "convt3d::conv_transpose3d";
constexpr const char* kGradInput = "convt3d::conv_transpose3d_grad_input";
constexpr const char* kGradWeight = "convt3d::conv_transpose3d_grad_weight";

// CONVT3D_POISON_OUTPUTS=1 fills every result with NaN before its kernel runs, so an element a
// kernel forgets to write shows up in tests. Read per call (cheap next to a convolution) so
// tests can switch it on and off.
const at::Tensor& poisoned(const at::Tensor& t) {
  const char* v = std::getenv("CONVT3D_POISON_OUTPUTS");
  if (v != nullptr && v[0] == '1') t.fill_(std::numeric_limits<double>::quiet_NaN());
  return t;
}

std::vector<int64_t> shape5(int64_t a, int64_t b, const std::array<int64_t, 3>& s) {
  return {a, b, s[0], s[1], s[2]};
}

}  // namespace

at::Tensor forward(const Kernels& k, const at::Tensor& input, const at::Tensor& weight,
                   const c10::optional<at::Tensor>& bias, c10::IntArrayRef stride,
                   c10::IntArrayRef padding, c10::IntArrayRef output_padding,
                   c10::IntArrayRef dilation, int64_t groups) {
  const ConvT3dArgs a{stride, padding, output_padding, dilation, groups};
  check_forward(input, weight, bias, a, kFwd);
  auto out = output_spatial(input.sizes().slice(2), weight.sizes().slice(2), a);
  auto y = at::empty(shape5(input.size(0), weight.size(1) * groups, out),
                     input.options().memory_format(result_memory_format(input, weight)));
  if (y.numel() == 0) return y;
  at::Tensor b = (bias.has_value() && bias->defined()) ? bias->contiguous() : at::Tensor();
  k.forward(make_params(input, weight, y, a), input, weight, b, poisoned(y));
  return y;
}

at::Tensor grad_input(const Kernels& k, const at::Tensor& grad_output, const at::Tensor& weight,
                      c10::IntArrayRef stride, c10::IntArrayRef padding,
                      c10::IntArrayRef output_padding, c10::IntArrayRef dilation, int64_t groups) {
  const ConvT3dArgs a{stride, padding, output_padding, dilation, groups};
  check_backward_pair(grad_output, weight, "weight", a, kGradInput);
  TORCH_CHECK(weight.size(0) % groups == 0 && weight.size(1) * groups == grad_output.size(1),
              kGradInput, ": weight of size ", weight.sizes(), " with groups=", groups,
              " does not match grad_output with ", grad_output.size(1), " channels");
  auto in = input_spatial(grad_output.sizes().slice(2), weight.sizes().slice(2), a, kGradInput);
  auto gx = at::empty(shape5(grad_output.size(0), weight.size(0), in),
                      grad_output.options().memory_format(
                          result_memory_format(grad_output, weight)));
  if (gx.numel() == 0) return gx;
  k.grad_input(make_params(gx, weight, grad_output, a), grad_output, weight, poisoned(gx));
  return gx;
}

at::Tensor grad_weight(const Kernels& k, const at::Tensor& grad_output, const at::Tensor& input,
                       c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                       c10::IntArrayRef padding, c10::IntArrayRef output_padding,
                       c10::IntArrayRef dilation, int64_t groups) {
  const ConvT3dArgs a{stride, padding, output_padding, dilation, groups};
  check_backward_pair(grad_output, input, "input", a, kGradWeight);
  TORCH_CHECK(kernel_size.size() == 3 && kernel_size[0] > 0 && kernel_size[1] > 0 &&
                  kernel_size[2] > 0,
              kGradWeight, ": expected 3 positive kernel sizes, but got ", kernel_size);
  TORCH_CHECK(input.size(1) % groups == 0 && grad_output.size(1) % groups == 0, kGradWeight,
              ": groups=", groups, " must divide input channels (", input.size(1),
              ") and grad_output channels (", grad_output.size(1), ")");
  TORCH_CHECK(input.size(0) == grad_output.size(0), kGradWeight, ": input batch ",
              input.size(0), " does not match grad_output batch ", grad_output.size(0));
  auto out = output_spatial(input.sizes().slice(2), kernel_size, a);
  for (auto i : c10::irange(3)) {
    TORCH_CHECK(out[i] == grad_output.size(2 + i), kGradWeight, ": input of size ",
                input.sizes(), " gives an output of spatial size ", c10::IntArrayRef(out),
                ", but grad_output has size ", grad_output.sizes());
  }
  std::vector<int64_t> wshape{input.size(1), grad_output.size(1) / groups, kernel_size[0],
                              kernel_size[1], kernel_size[2]};
  auto gw = at::empty(wshape, input.options().memory_format(
                                  result_memory_format(input, grad_output)));
  if (gw.numel() == 0) return gw;
  k.grad_weight(make_params(input, gw, grad_output, a), grad_output, input, poisoned(gw));
  return gw;
}

at::Tensor grad_bias(const Kernels& k, const at::Tensor& grad_output) {
  TORCH_CHECK(grad_output.dim() == 5, "convt3d::conv_transpose3d_grad_bias: expected 5D "
              "grad_output, but got grad_output of size: ", grad_output.sizes());
  auto s = grad_output.scalar_type();
  TORCH_CHECK(s == at::kFloat || s == at::kDouble || s == at::kHalf || s == at::kBFloat16,
              "convt3d: expected grad_output to be float32, float64, float16 or bfloat16, but "
              "got ", s);
  auto gb = at::empty({grad_output.size(1)}, grad_output.options());
  if (gb.numel() == 0) return gb;
  k.grad_bias(grad_output, poisoned(gb));
  return gb;
}

}  // namespace convt3d
