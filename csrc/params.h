// The geometry of one 3-D transposed convolution, shared by every kernel.
//
// Naming follows the forward op: `x` is the transposed-convolution input [N, Cin, in...],
// `w` the weight [Cin, Cout/groups, k...], `y` the output [N, Cout, out...]. The backward ops
// reuse the same struct: grad_input writes a tensor shaped like x, grad_weight one shaped like w,
// and both read grad_output through y's strides. Along each axis an input index i and an output
// index o meet through the kernel tap t exactly when  o = i * stride - pad + t * dil.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/ArrayRef.h>

#include <array>
#include <cstdint>

namespace convt3d {

struct ConvT3dParams {
  int64_t N = 0, Cin = 0, Cout = 0, groups = 1;
  int64_t Cin_g = 0, Cout_g = 0;  // channels per group
  std::array<int64_t, 3> in{}, out{}, k{}, stride{}, pad{}, dil{}, out_pad{};
  // Element strides of the three tensors, in NCDHW order whatever their memory format.
  std::array<int64_t, 5> x_st{}, w_st{}, y_st{};
};

// Public names for the arguments, so messages can say "stride" rather than "arg 3".
struct ConvT3dArgs {
  c10::IntArrayRef stride, padding, output_padding, dilation;
  int64_t groups;
};

// Validates the forward call (and, through it, every backward call) with PyTorch's wording.
// Throws c10::Error (RuntimeError in Python) on bad input.
void check_forward(const at::Tensor& input, const at::Tensor& weight,
                   const c10::optional<at::Tensor>& bias, const ConvT3dArgs& a, const char* op);

// Output spatial size of the forward op: (in - 1) * s - 2p + d (k - 1) + op + 1.
std::array<int64_t, 3> output_spatial(c10::IntArrayRef in, c10::IntArrayRef kernel,
                                      const ConvT3dArgs& a);

// Input spatial size that produces `out`: the inverse of output_spatial. Used by grad_input,
// which is given only grad_output. Throws unless the inverse is exact.
std::array<int64_t, 3> input_spatial(c10::IntArrayRef out, c10::IntArrayRef kernel,
                                     const ConvT3dArgs& a, const char* op);

// Fills the geometry. x, w, y give sizes and strides; any of them may be the tensor being
// produced (already allocated).
ConvT3dParams make_params(const at::Tensor& x, const at::Tensor& w, const at::Tensor& y,
                          const ConvT3dArgs& a);

// The memory format of every result: channels_last_3d when any operand suggests it, except for
// float64, exactly as PyTorch chooses for F.conv_transpose3d on CPU and with cuDNN.
at::MemoryFormat result_memory_format(const at::Tensor& a, const at::Tensor& b);

// Checks shared by the three backward ops: dims, dtype and device agreement, argument ranges.
void check_backward_pair(const at::Tensor& grad_output, const at::Tensor& other,
                         const char* other_name, const ConvT3dArgs& a, const char* op);

}  // namespace convt3d
