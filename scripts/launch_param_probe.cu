// Probe (standalone, any sm_80+): host time of one kernel launch by the size of its
// __grid_constant__ parameter struct, as the forward kernels take FwdArgs (phases.h). It
// answers whether a few hundred bytes more of FwdArgs can cost a host-bound layer (suite case 9)
// microseconds per call.
//   nvcc -O3 -std=c++17 -arch=sm_90 scripts/launch_param_probe.cu -o /tmp/lpp && /tmp/lpp
// Prints per size: host microseconds per launch (the least of 7 windows of 256 launches, the
// stream held busy by a long kernel so launches only enqueue).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>

template <int B>
struct Params {
  unsigned char bytes[B];
};

template <int B>
__global__ void consume(const __grid_constant__ Params<B> p, int* sink) {
  if (threadIdx.x == 0 && p.bytes[blockIdx.x % B] == 0xff) sink[0] = 1;  // reads the params
}

__global__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

template <int B>
void probe(int* sink) {
  Params<B> p{};
  double best = 1e30;
  for (int w = 0; w < 7; ++w) {
    spin<<<1, 1>>>(200000000LL);  // ~0.1 s at ~2 GHz: the launches below only enqueue
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 256; ++i) consume<B><<<132, 128>>>(p, sink);
    const auto t1 = std::chrono::steady_clock::now();
    cudaDeviceSynchronize();
    const double us = std::chrono::duration<double, std::micro>(t1 - t0).count() / 256;
    best = us < best ? us : best;
  }
  std::printf("%5d bytes: %6.2f us per launch\n", B, best);
}

int main() {
  int* sink;
  cudaMalloc(&sink, sizeof(int));
  probe<256>(sink);  // warms the context
  probe<256>(sink);
  probe<1024>(sink);
  probe<2048>(sink);
  probe<2560>(sink);
  probe<2816>(sink);
  probe<2944>(sink);
  probe<3008>(sink);
  probe<3072>(sink);
  probe<3584>(sink);
  probe<4032>(sink);
  probe<4096>(sink);
  probe<8192>(sink);
  cudaFree(sink);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
