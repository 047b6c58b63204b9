// The op front end shared by every backend: validate, allocate the result in the memory format
// PyTorch would choose, then hand the geometry to the backend's kernel table. A backend file
// defines a `Kernels` table and calls register_kernels<table>(m) in its TORCH_LIBRARY_IMPL.
#pragma once

#include "params.h"

#include <ATen/core/Tensor.h>
#include <torch/library.h>

namespace convt3d {

// Every kernel reads its tensors through the strides in ConvT3dParams, so any layout works.
// `bias` is contiguous or undefined. Results are allocated and non-empty when called.
struct Kernels {
  void (*forward)(const ConvT3dParams&, const at::Tensor& x, const at::Tensor& w,
                  const at::Tensor& bias, const at::Tensor& y);
  void (*grad_input)(const ConvT3dParams&, const at::Tensor& gy, const at::Tensor& w,
                     const at::Tensor& gx);
  void (*grad_weight)(const ConvT3dParams&, const at::Tensor& gy, const at::Tensor& x,
                      const at::Tensor& gw);
  void (*grad_bias)(const at::Tensor& gy, const at::Tensor& gb);
};

at::Tensor forward(const Kernels& k, const at::Tensor& input, const at::Tensor& weight,
                   const c10::optional<at::Tensor>& bias, c10::IntArrayRef stride,
                   c10::IntArrayRef padding, c10::IntArrayRef output_padding,
                   c10::IntArrayRef dilation, int64_t groups);
at::Tensor grad_input(const Kernels& k, const at::Tensor& grad_output, const at::Tensor& weight,
                      c10::IntArrayRef stride, c10::IntArrayRef padding,
                      c10::IntArrayRef output_padding, c10::IntArrayRef dilation, int64_t groups);
at::Tensor grad_weight(const Kernels& k, const at::Tensor& grad_output, const at::Tensor& input,
                       c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                       c10::IntArrayRef padding, c10::IntArrayRef output_padding,
                       c10::IntArrayRef dilation, int64_t groups);
at::Tensor grad_bias(const Kernels& k, const at::Tensor& grad_output);

// Binds the four schemas to one backend's kernel table.
template <const Kernels& K>
void register_kernels(torch::Library& m) {
  m.impl("conv_transpose3d", [](const at::Tensor& input, const at::Tensor& weight,
                                const c10::optional<at::Tensor>& bias, c10::IntArrayRef stride,
                                c10::IntArrayRef padding, c10::IntArrayRef output_padding,
                                c10::IntArrayRef dilation, int64_t groups) {
    return forward(K, input, weight, bias, stride, padding, output_padding, dilation, groups);
  });
  m.impl("conv_transpose3d_grad_input",
         [](const at::Tensor& grad_output, const at::Tensor& weight, c10::IntArrayRef stride,
            c10::IntArrayRef padding, c10::IntArrayRef output_padding, c10::IntArrayRef dilation,
            int64_t groups) {
           return grad_input(K, grad_output, weight, stride, padding, output_padding, dilation,
                             groups);
         });
  m.impl("conv_transpose3d_grad_weight",
         [](const at::Tensor& grad_output, const at::Tensor& input, c10::IntArrayRef kernel_size,
            c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef output_padding,
            c10::IntArrayRef dilation, int64_t groups) {
           return grad_weight(K, grad_output, input, kernel_size, stride, padding,
                              output_padding, dilation, groups);
         });
  m.impl("conv_transpose3d_grad_bias",
         [](const at::Tensor& grad_output) { return grad_bias(K, grad_output); });
}

}  // namespace convt3d
