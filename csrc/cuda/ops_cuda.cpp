// Binds the convt3d schemas to CUDA. Fast paths, when added, are chosen in the forward
// launcher here; the reference kernels serve everything else.
#include "../entry.h"
#include "reference_cuda.h"

#include <torch/library.h>

namespace convt3d {
namespace {

const Kernels kCudaKernels{&reference_forward_cuda, &reference_grad_input_cuda,
                           &reference_grad_weight_cuda, &reference_grad_bias_cuda};

}  // namespace

TORCH_LIBRARY_IMPL(convt3d, CUDA, m) { register_kernels<kCudaKernels>(m); }

}  // namespace convt3d
