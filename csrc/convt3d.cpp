// The schemas of every convt3d op, in one place. Backends bind kernels to them in
// cpu/ and cuda/; Python adds fake, autograd and autocast rules in inductor_convt3d/ops.py.
#include <Python.h>
#include <torch/library.h>

// An empty module: importing inductor_convt3d._C only loads the library, which runs the
// registrations below. No Python API is used, so the build can target the limited API.
extern "C" {
PyObject* PyInit__C(void) {
  static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, nullptr};
  return PyModule_Create(&module_def);
}
}

TORCH_LIBRARY(convt3d, m) {
  m.def(
      "conv_transpose3d(Tensor input, Tensor weight, Tensor? bias, SymInt[3] stride, "
      "SymInt[3] padding, SymInt[3] output_padding, SymInt[3] dilation, SymInt groups) -> Tensor");
  // grad_input is a strided 3-D convolution of grad_output with the same weight; its spatial
  // size follows from grad_output's through output_padding.
  m.def(
      "conv_transpose3d_grad_input(Tensor grad_output, Tensor weight, SymInt[3] stride, "
      "SymInt[3] padding, SymInt[3] output_padding, SymInt[3] dilation, SymInt groups) -> Tensor");
  m.def(
      "conv_transpose3d_grad_weight(Tensor grad_output, Tensor input, SymInt[3] kernel_size, "
      "SymInt[3] stride, SymInt[3] padding, SymInt[3] output_padding, SymInt[3] dilation, "
      "SymInt groups) -> Tensor");
  m.def("conv_transpose3d_grad_bias(Tensor grad_output) -> Tensor");
  // Internal: conv_transpose3d with stride, padding, output_padding, dilation (3 each) and groups
  // in one list, which Python passes several microseconds faster (flat_call.cpp).
  m.def(
      "_conv_transpose3d_flat(Tensor input, Tensor weight, Tensor? bias, int[] geometry) -> "
      "Tensor");
  // Internal: the name of the kernel conv_transpose3d would run for these arguments (tests and
  // debugging; see cuda/forward_cuda.h).
  m.def(
      "_forward_path(Tensor input, Tensor weight, SymInt[3] stride, SymInt[3] padding, "
      "SymInt[3] output_padding, SymInt[3] dilation, SymInt groups) -> str");
}
