// How many CTAs of a kernel fit on the current device at once: the grid of a persistent kernel.
// The occupancy query and the SM count cost host time, and a small layer's call is decided on
// the host, so the answer is remembered per (kernel, block size, shared memory, device).
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <tuple>

namespace convt3d {
namespace fwd {

inline cudaError_t resident_ctas(const void* kernel, int threads, int smem_bytes, int* ctas) {
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  static std::mutex mu;
  static std::map<std::tuple<const void*, int, int, int>, int> known;
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_tuple(kernel, threads, smem_bytes, dev);
  const auto it = known.find(key);
  if (it != known.end()) {
    *ctas = it->second;
    return cudaSuccess;
  }
  int per_sm = 0, sms = 0;
  e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (e != cudaSuccess) return e;
  *ctas = known[key] = per_sm * sms > 0 ? per_sm * sms : 1;
  return cudaSuccess;
}

}  // namespace fwd
}  // namespace convt3d
