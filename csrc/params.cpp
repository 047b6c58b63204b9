// Argument checks and shape arithmetic shared by the CPU and CUDA backends. Messages follow the
// wording of PyTorch's own convolution checks, so users see familiar errors.
#include "params.h"

#include <ATen/ATen.h>
#include <c10/util/irange.h>

#include <sstream>

namespace convt3d {
namespace {

void check_triple(c10::IntArrayRef v, const char* name) {
  TORCH_CHECK(v.size() == 3, "expected ", name,
              " to be a single integer value or a list of 3 values to match the convolution "
              "dimensions, but got ", name, "=", v);
}

void check_floating(const at::Tensor& t, const char* name) {
  auto s = t.scalar_type();
  TORCH_CHECK(s == at::kFloat || s == at::kDouble || s == at::kHalf || s == at::kBFloat16,
              "convt3d: expected ", name, " to be float32, float64, float16 or bfloat16, but got ",
              s);
}

void check_same_device(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.device() == b.device(),
              "Expected all tensors to be on the same device, but found at least two devices, ",
              a.device(), " and ", b.device(), "!");
}

void check_same_dtype(const at::Tensor& a, const char* an, const at::Tensor& b, const char* bn) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), an, " type (", a.scalar_type(), ") and ", bn,
              " type (", b.scalar_type(), ") should be the same");
}

void check_args(const ConvT3dArgs& a) {
  check_triple(a.stride, "stride");
  check_triple(a.padding, "padding");
  check_triple(a.output_padding, "output_padding");
  check_triple(a.dilation, "dilation");
  TORCH_CHECK(a.groups > 0, "non-positive groups is not supported");
  for (auto i : c10::irange(3)) {
    TORCH_CHECK(a.stride[i] > 0, "non-positive stride is not supported");
    TORCH_CHECK(a.dilation[i] > 0, "non-positive dilation is not supported");
    TORCH_CHECK(a.padding[i] >= 0, "negative padding is not supported");
    TORCH_CHECK(a.output_padding[i] >= 0, "negative output_padding is not supported");
    TORCH_CHECK(a.output_padding[i] < a.stride[i] || a.output_padding[i] < a.dilation[i],
                "output padding must be smaller than either stride or dilation, but got "
                "output_padding=", a.output_padding, " stride=", a.stride,
                " dilation=", a.dilation);
  }
}

void check_weight(const at::Tensor& weight, const ConvT3dArgs& a) {
  TORCH_CHECK(weight.dim() == 5, "Expected 5D weight [in_channels, out_channels/groups, kD, kH, "
              "kW] for conv_transpose3d, but got weight of size: ", weight.sizes());
  TORCH_CHECK(weight.size(0) % a.groups == 0, "Given groups=", a.groups,
              ", expected weight to be divisible by ", a.groups,
              " at dimension 0, but got weight of size ", weight.sizes(), " instead");
  for (auto i : c10::irange(2, 5)) {
    TORCH_CHECK(weight.size(i) > 0, "kernel size should be greater than zero, but got weight of "
                "size ", weight.sizes());
  }
}

}  // namespace

std::array<int64_t, 3> output_spatial(c10::IntArrayRef in, c10::IntArrayRef kernel,
                                      const ConvT3dArgs& a) {
  std::array<int64_t, 3> out{};
  for (auto i : c10::irange(3)) {
    out[i] = (in[i] - 1) * a.stride[i] - 2 * a.padding[i] + a.dilation[i] * (kernel[i] - 1) +
             a.output_padding[i] + 1;
  }
  return out;
}

std::array<int64_t, 3> input_spatial(c10::IntArrayRef out, c10::IntArrayRef kernel,
                                     const ConvT3dArgs& a, const char* op) {
  std::array<int64_t, 3> in{};
  for (auto i : c10::irange(3)) {
    int64_t span = out[i] + 2 * a.padding[i] - a.dilation[i] * (kernel[i] - 1) -
                   a.output_padding[i] - 1;
    TORCH_CHECK(span >= 0 && span % a.stride[i] == 0, op, ": grad_output of spatial size ", out,
                " cannot come from a conv_transpose3d with kernel ", kernel, ", stride=",
                a.stride, ", padding=", a.padding, ", output_padding=", a.output_padding,
                ", dilation=", a.dilation);
    in[i] = span / a.stride[i] + 1;
  }
  return in;
}

void check_forward(const at::Tensor& input, const at::Tensor& weight,
                   const c10::optional<at::Tensor>& bias, const ConvT3dArgs& a, const char* op) {
  TORCH_CHECK(input.dim() == 5, "Expected 5D (batched) input to ", op,
              ", but got input of size: ", input.sizes());
  check_args(a);
  check_weight(weight, a);
  check_same_device(input, weight);
  check_floating(input, "input");
  check_same_dtype(input, "Input", weight, "weight");
  TORCH_CHECK(input.size(1) == weight.size(0), "Given transposed=1, weight of size ",
              weight.sizes(), ", expected input", input.sizes(), " to have ", weight.size(0),
              " channels, but got ", input.size(1), " channels instead");
  const int64_t cout = weight.size(1) * a.groups;
  if (bias.has_value() && bias->defined()) {
    check_same_device(input, *bias);
    check_same_dtype(input, "Input", *bias, "bias");
    TORCH_CHECK(bias->dim() == 1 && bias->size(0) == cout, "Given transposed=1, weight of size ",
                weight.sizes(), ", expected bias to be 1-dimensional with ", cout,
                " elements, but got bias of size ", bias->sizes(), " instead");
  }
  auto out = output_spatial(input.sizes().slice(2), weight.sizes().slice(2), a);
  TORCH_CHECK(out[0] > 0 && out[1] > 0 && out[2] > 0, "Given input size per channel: (",
              input.size(2), " x ", input.size(3), " x ", input.size(4),
              "). Calculated output size per channel: (", out[0], " x ", out[1], " x ", out[2],
              "). Output size is too small");
}

void check_backward_pair(const at::Tensor& grad_output, const at::Tensor& other,
                         const char* other_name, const ConvT3dArgs& a, const char* op) {
  TORCH_CHECK(grad_output.dim() == 5, op, ": expected 5D grad_output, but got grad_output of "
              "size: ", grad_output.sizes());
  TORCH_CHECK(other.dim() == 5, op, ": expected 5D ", other_name, ", but got ", other_name,
              " of size: ", other.sizes());
  check_args(a);
  check_same_device(grad_output, other);
  check_floating(grad_output, "grad_output");
  check_same_dtype(grad_output, "grad_output", other, other_name);
}

ConvT3dParams make_params(const at::Tensor& x, const at::Tensor& w, const at::Tensor& y,
                          const ConvT3dArgs& a) {
  ConvT3dParams p;
  p.N = x.size(0);
  p.Cin = x.size(1);
  p.groups = a.groups;
  p.Cin_g = p.Cin / a.groups;
  p.Cout_g = w.size(1);
  p.Cout = p.Cout_g * a.groups;
  for (auto i : c10::irange(3)) {
    p.in[i] = x.size(2 + i);
    p.out[i] = y.size(2 + i);
    p.k[i] = w.size(2 + i);
    p.stride[i] = a.stride[i];
    p.pad[i] = a.padding[i];
    p.dil[i] = a.dilation[i];
    p.out_pad[i] = a.output_padding[i];
  }
  for (auto i : c10::irange(5)) {
    p.x_st[i] = x.stride(i);
    p.w_st[i] = w.stride(i);
    p.y_st[i] = y.stride(i);
  }
  return p;
}

at::MemoryFormat result_memory_format(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() == at::kDouble) return at::MemoryFormat::Contiguous;
  const auto cl = at::MemoryFormat::ChannelsLast3d;
  return (a.suggest_memory_format() == cl || b.suggest_memory_format() == cl)
             ? cl
             : at::MemoryFormat::Contiguous;
}

}  // namespace convt3d
