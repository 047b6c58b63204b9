// convt3d::_conv_transpose3d_flat: conv_transpose3d with its geometry in one int list, the eager
// drop-in's entry (inductor_convt3d.functional). From Python, four SymInt[3] lists and a SymInt
// cost several microseconds per call to parse (each element is tested for a SymInt and a Tensor
// before it is converted), more than a small layer's kernel takes; one int list costs a fraction.
//
// CompositeImplicitAutograd: the op runs at the autograd key (or at the backend key where autograd
// is excluded) and calls conv_transpose3d from the top, so autocast, dispatch modes, fake tensors
// and functionalization all see the public op and its rules. Where nothing needs a gradient it
// calls it below autograd: torch.library runs the public op's autograd kernel in Python, a
// C++ -> Python -> C++ round trip of about 10 us that would only redispatch (ops.py: _call does
// the same for the typed wrappers).
#include "params.h"

#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>
#include <c10/core/SymIntArrayRef.h>
#include <torch/library.h>

#include <array>

namespace convt3d {
namespace {

at::Tensor conv_transpose3d_flat(const at::Tensor& input, const at::Tensor& weight,
                                 const c10::optional<at::Tensor>& bias,
                                 c10::IntArrayRef geometry) {
  TORCH_CHECK(geometry.size() == 13, "convt3d::_conv_transpose3d_flat: expected 13 geometry "
              "values (stride, padding, output_padding and dilation, 3 each, then groups), but "
              "got ", geometry.size());
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("convt3d::conv_transpose3d", "")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const c10::optional<at::Tensor>&,
                            c10::SymIntArrayRef, c10::SymIntArrayRef, c10::SymIntArrayRef,
                            c10::SymIntArrayRef, c10::SymInt)>();
  // A value below SymInt's inline range (< -2^62) is invalid for every argument, but would reach
  // the kernel as a heap SymInt that the dispatcher rejects with its own words: the public op's
  // checks (params.h) give PyTorch's message first.
  for (int64_t g : geometry) {
    if (!c10::SymInt::check_range(g)) {
      check_forward(input, weight, bias,
                    ConvT3dArgs{geometry.slice(0, 3), geometry.slice(3, 3), geometry.slice(6, 3),
                                geometry.slice(9, 3), geometry[12]},
                    "convt3d::conv_transpose3d");
    }
  }
  std::array<c10::SymInt, 12> v;
  for (size_t i = 0; i < v.size(); ++i) v[i] = c10::SymInt(geometry[i]);
  auto call = [&] {
    return op.call(input, weight, bias, c10::SymIntArrayRef(v.data(), 3),
                   c10::SymIntArrayRef(v.data() + 3, 3), c10::SymIntArrayRef(v.data() + 6, 3),
                   c10::SymIntArrayRef(v.data() + 9, 3), c10::SymInt(geometry[12]));
  };
  const bool bias_grad = bias.has_value() && bias->defined() && bias->requires_grad();
  if (c10::GradMode::is_enabled() &&
      (input.requires_grad() || weight.requires_grad() || bias_grad)) {
    return call();
  }
  const at::AutoDispatchBelowAutograd below;
  return call();
}

}  // namespace

TORCH_LIBRARY_IMPL(convt3d, CompositeImplicitAutograd, m) {
  m.impl("_conv_transpose3d_flat", &conv_transpose3d_flat);
}

}  // namespace convt3d
