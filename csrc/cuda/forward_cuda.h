// The CUDA forward: the fast implicit-GEMM path when it supports the call, else the reference.
#pragma once

#include "../params.h"

#include <ATen/core/Tensor.h>

#include <string>

namespace convt3d {

void forward_cuda(const ConvT3dParams& p, const at::Tensor& x, const at::Tensor& w,
                  const at::Tensor& bias, const at::Tensor& y);

// The kernel forward_cuda would run for these arguments, e.g. "igemm_bf16_bn32_kvec",
// "igemm_3xtf32_bn16_mfast", "halo_bf16_bn64_kvec" (v2 halo tile), "reference", or "none" when the output is empty.
std::string forward_path_cuda(const at::Tensor& input, const at::Tensor& weight,
                              c10::IntArrayRef stride, c10::IntArrayRef padding,
                              c10::IntArrayRef output_padding, c10::IntArrayRef dilation,
                              int64_t groups);

}  // namespace convt3d
