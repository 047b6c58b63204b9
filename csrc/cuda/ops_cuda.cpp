// Binds the convt3d schemas to CUDA. The forward chooses between the fast implicit-GEMM path
// and the reference (forward_cuda.cpp); the reference kernels serve the backward ops.
#include "../entry.h"
#include "forward_cuda.h"
#include "reference_cuda.h"

#include <torch/library.h>

namespace convt3d {
namespace {

const Kernels kCudaKernels{&forward_cuda, &reference_grad_input_cuda,
                           &reference_grad_weight_cuda, &reference_grad_bias_cuda};

}  // namespace

TORCH_LIBRARY_IMPL(convt3d, CUDA, m) {
  register_kernels<kCudaKernels>(m);
  m.impl("_forward_path", &forward_path_cuda);
}

}  // namespace convt3d
