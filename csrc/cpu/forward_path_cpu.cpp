// convt3d::_forward_path on CPU: the CPU forward has a single kernel, the reference.
#include "../params.h"

#include <torch/library.h>

#include <string>

namespace convt3d {
namespace {

std::string forward_path_cpu(const at::Tensor& input, const at::Tensor& weight,
                             c10::IntArrayRef stride, c10::IntArrayRef padding,
                             c10::IntArrayRef output_padding, c10::IntArrayRef dilation,
                             int64_t groups) {
  const ConvT3dArgs args{stride, padding, output_padding, dilation, groups};
  check_forward(input, weight, c10::nullopt, args, "convt3d::_forward_path");
  return "reference";
}

}  // namespace

TORCH_LIBRARY_IMPL(convt3d, CPU, m) { m.impl("_forward_path", &forward_path_cpu); }

}  // namespace convt3d
