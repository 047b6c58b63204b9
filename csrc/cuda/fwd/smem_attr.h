// Opting a kernel into more than 48 KB of dynamic shared memory. cudaFuncSetAttribute costs
// about 1.5 us of host time (torch.profiler on an H100 host, 2026-11-24), a noticeable part of
// a small layer's call, so the largest size set so far is remembered per (kernel, device) and
// the attribute is set again only to raise it. It is a maximum, so a larger value than a
// launch needs is harmless; the lock keeps two threads from lowering it.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <utility>

namespace convt3d {
namespace fwd {

inline cudaError_t allow_dynamic_smem(const void* kernel, int bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  static std::mutex mu;
  static std::map<std::pair<const void*, int>, int> set_bytes;  // (kernel, device) -> bytes
  std::lock_guard<std::mutex> lock(mu);
  int& done = set_bytes[{kernel, dev}];
  if (bytes <= done) return cudaSuccess;
  e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (e == cudaSuccess) done = bytes;
  return e;
}

template <class Kernel>
cudaError_t allow_dynamic_smem(Kernel* kernel, int bytes) {
  return allow_dynamic_smem(reinterpret_cast<const void*>(kernel), bytes);
}

}  // namespace fwd
}  // namespace convt3d
