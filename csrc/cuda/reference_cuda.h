// Launchers of the CUDA reference kernels, declared for the CUDA op binding (cuda/ops_cuda.cpp),
// which dispatches between them and the fast paths.
#pragma once

#include "../params.h"

#include <ATen/core/Tensor.h>

namespace convt3d {

void reference_forward_cuda(const ConvT3dParams& p, const at::Tensor& x, const at::Tensor& w,
                            const at::Tensor& bias, const at::Tensor& y);
void reference_grad_input_cuda(const ConvT3dParams& p, const at::Tensor& gy, const at::Tensor& w,
                               const at::Tensor& gx);
void reference_grad_weight_cuda(const ConvT3dParams& p, const at::Tensor& gy,
                                const at::Tensor& x, const at::Tensor& gw);
void reference_grad_bias_cuda(const at::Tensor& gy, const at::Tensor& gb);

}  // namespace convt3d
