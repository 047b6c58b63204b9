// Programmatic dependent launch (sm_90): a forward's main kernel (pw, twg) launched right after
// one of our own small kernels (the weight repack, the bias prefill, the fp16-products scale
// pass) may start while that kernel still runs. Its CTAs become resident, build their tables
// and initialise their barriers, then wait (pdl_wait) for the kernel before them to finish and
// its writes to be visible. Without it the main kernel is launched only once the small one has
// drained: a launch gap plus the prologue, per call, on layers whose whole kernel is some 30 us.
//
// Safety rests on two rules:
// - the host asks for it (FwdArgs::pdl) only where the kernel just before is ours and was
//   launched normally, so everything older (the user's x, w and bias) is complete before the
//   main kernel can start;
// - the main kernel reads nothing the small kernel writes (the packed weight, the scale bits,
//   a prefilled y) and writes no global memory before pdl_wait. Reads of x, w and bias may come
//   before it.
// Launched without the attribute, pdl_wait returns at once. CONVT3D_PDL=0 turns it off.
#pragma once

#include <cuda_runtime.h>

#include <utility>

namespace convt3d {
namespace fwd {

// Block until the grid this one depends on has completed and its memory is visible.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Let the grid that depends on this one launch now (its CTAs wait in pdl_wait); called first
// thing by the small kernels, whose every CTA is resident at once on the suite's layers.
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// kernel<<<grid, block, smem, stream>>>(args...), with programmatic stream serialisation when
// `pdl` (the rules above are the caller's).
template <class... Params, class... Args>
cudaError_t launch_maybe_pdl(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                             cudaStream_t stream, bool pdl, Args&&... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

}  // namespace fwd
}  // namespace convt3d
