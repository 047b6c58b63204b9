// CUDA reference kernels for the four convt3d ops. Simple on purpose: one thread per output
// element for forward and grad_input, one block per element with a fixed-order tree reduction
// for grad_weight and grad_bias (deterministic, no atomics). All indexing is 64-bit. They are
// the oracle for the fast kernels and the fallback outside the fast paths.
#include "../accumulate.h"
#include "../entry.h"
#include "reference_cuda.h"

#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

namespace convt3d {
namespace {

constexpr int kThreads = 256;

int64_t blocks_for(int64_t n) {
  // Grid-stride loops cover the rest; this cap keeps the grid legal for any size.
  return std::max<int64_t>(1, std::min<int64_t>((n + kThreads - 1) / kThreads, 65535LL * 32));
}

__device__ __forceinline__ int64_t dot5(const std::array<int64_t, 5>& s, int64_t a, int64_t b,
                                        int64_t c, int64_t d, int64_t e) {
  return a * s[0] + b * s[1] + c * s[2] + d * s[3] + e * s[4];
}

// Input index i for output o and tap t, or -1 when that tap lands on an inserted zero.
__device__ __forceinline__ int64_t tap_input(const ConvT3dParams& p, int a, int64_t o, int64_t t) {
  const int64_t num = o + p.pad[a] - t * p.dil[a];
  if (num < 0 || num % p.stride[a] != 0) return -1;
  const int64_t i = num / p.stride[a];
  return i < p.in[a] ? i : -1;
}

// Output index o for input i and tap t, or -1 when outside the output.
__device__ __forceinline__ int64_t tap_output(const ConvT3dParams& p, int a, int64_t i, int64_t t) {
  const int64_t o = i * p.stride[a] - p.pad[a] + t * p.dil[a];
  return (o >= 0 && o < p.out[a]) ? o : -1;
}

template <typename T>
__global__ void forward_kernel(ConvT3dParams p, const T* __restrict__ x, const T* __restrict__ w,
                               const T* __restrict__ b, T* __restrict__ y) {
  using acc_t = ref_acc_t<T>;
  const int64_t total = p.N * p.Cout * p.out[0] * p.out[1] * p.out[2];
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = e;
    const int64_t ow = r % p.out[2]; r /= p.out[2];
    const int64_t oh = r % p.out[1]; r /= p.out[1];
    const int64_t od = r % p.out[0]; r /= p.out[0];
    const int64_t co = r % p.Cout, n = r / p.Cout;
    const int64_t g = co / p.Cout_g, col = co % p.Cout_g;
    acc_t acc = b ? static_cast<acc_t>(b[co]) : acc_t(0);
    for (int64_t td = 0; td < p.k[0]; ++td) {
      const int64_t id = tap_input(p, 0, od, td);
      if (id < 0) continue;
      for (int64_t th = 0; th < p.k[1]; ++th) {
        const int64_t ih = tap_input(p, 1, oh, th);
        if (ih < 0) continue;
        for (int64_t tw = 0; tw < p.k[2]; ++tw) {
          const int64_t iw = tap_input(p, 2, ow, tw);
          if (iw < 0) continue;
          const T* xp = x + dot5(p.x_st, n, g * p.Cin_g, id, ih, iw);
          const T* wp = w + dot5(p.w_st, g * p.Cin_g, col, td, th, tw);
          for (int64_t ci = 0; ci < p.Cin_g; ++ci) {
            acc += static_cast<acc_t>(xp[ci * p.x_st[1]]) * static_cast<acc_t>(wp[ci * p.w_st[0]]);
          }
        }
      }
    }
    y[dot5(p.y_st, n, co, od, oh, ow)] = static_cast<T>(acc);
  }
}

template <typename T>
__global__ void grad_input_kernel(ConvT3dParams p, const T* __restrict__ gy,
                                  const T* __restrict__ w, T* __restrict__ gx) {
  using acc_t = ref_acc_t<T>;
  const int64_t total = p.N * p.Cin * p.in[0] * p.in[1] * p.in[2];
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = e;
    const int64_t iw = r % p.in[2]; r /= p.in[2];
    const int64_t ih = r % p.in[1]; r /= p.in[1];
    const int64_t id = r % p.in[0]; r /= p.in[0];
    const int64_t ci = r % p.Cin, n = r / p.Cin;
    const int64_t g = ci / p.Cin_g;
    acc_t acc = 0;
    for (int64_t td = 0; td < p.k[0]; ++td) {
      const int64_t od = tap_output(p, 0, id, td);
      if (od < 0) continue;
      for (int64_t th = 0; th < p.k[1]; ++th) {
        const int64_t oh = tap_output(p, 1, ih, th);
        if (oh < 0) continue;
        for (int64_t tw = 0; tw < p.k[2]; ++tw) {
          const int64_t ow = tap_output(p, 2, iw, tw);
          if (ow < 0) continue;
          const T* gp = gy + dot5(p.y_st, n, g * p.Cout_g, od, oh, ow);
          const T* wp = w + dot5(p.w_st, ci, 0, td, th, tw);
          for (int64_t col = 0; col < p.Cout_g; ++col) {
            acc += static_cast<acc_t>(gp[col * p.y_st[1]]) * static_cast<acc_t>(wp[col * p.w_st[1]]);
          }
        }
      }
    }
    gx[dot5(p.x_st, n, ci, id, ih, iw)] = static_cast<T>(acc);
  }
}

// Fixed-shape tree reduction over one block: the same inputs always sum in the same order.
template <typename acc_t>
__device__ acc_t block_sum(acc_t v) {
  __shared__ acc_t buf[kThreads];
  buf[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
    __syncthreads();
  }
  const acc_t total = buf[0];
  __syncthreads();  // buf is reused by the next call
  return total;
}

template <typename T>
__global__ void grad_weight_kernel(ConvT3dParams p, const T* __restrict__ gy,
                                   const T* __restrict__ x, T* __restrict__ gw) {
  using acc_t = ref_acc_t<T>;
  const int64_t total = p.Cin * p.Cout_g * p.k[0] * p.k[1] * p.k[2];
  const int64_t red = p.N * p.in[0] * p.in[1] * p.in[2];
  for (int64_t e = blockIdx.x; e < total; e += gridDim.x) {
    int64_t r = e;
    const int64_t tw = r % p.k[2]; r /= p.k[2];
    const int64_t th = r % p.k[1]; r /= p.k[1];
    const int64_t td = r % p.k[0]; r /= p.k[0];
    const int64_t col = r % p.Cout_g, ci = r / p.Cout_g;
    const int64_t co = (ci / p.Cin_g) * p.Cout_g + col;
    acc_t acc = 0;
    for (int64_t j = threadIdx.x; j < red; j += blockDim.x) {
      int64_t q = j;
      const int64_t iw = q % p.in[2]; q /= p.in[2];
      const int64_t ih = q % p.in[1]; q /= p.in[1];
      const int64_t id = q % p.in[0];
      const int64_t n = q / p.in[0];
      const int64_t od = tap_output(p, 0, id, td), oh = tap_output(p, 1, ih, th),
                    ow = tap_output(p, 2, iw, tw);
      if (od < 0 || oh < 0 || ow < 0) continue;
      acc += static_cast<acc_t>(x[dot5(p.x_st, n, ci, id, ih, iw)]) *
             static_cast<acc_t>(gy[dot5(p.y_st, n, co, od, oh, ow)]);
    }
    acc = block_sum(acc);
    if (threadIdx.x == 0) gw[dot5(p.w_st, ci, col, td, th, tw)] = static_cast<T>(acc);
  }
}

template <typename T>
__global__ void grad_bias_kernel(int64_t N, int64_t C, int64_t D, int64_t H, int64_t W,
                                 std::array<int64_t, 5> st, const T* __restrict__ gy,
                                 T* __restrict__ gb) {
  using acc_t = ref_acc_t<T>;
  const int64_t red = N * D * H * W;
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    acc_t acc = 0;
    for (int64_t j = threadIdx.x; j < red; j += blockDim.x) {
      int64_t q = j;
      const int64_t w = q % W; q /= W;
      const int64_t h = q % H; q /= H;
      const int64_t d = q % D;
      acc += static_cast<acc_t>(gy[dot5(st, q / D, c, d, h, w)]);
    }
    acc = block_sum(acc);
    if (threadIdx.x == 0) gb[c] = static_cast<T>(acc);
  }
}

#define CONVT3D_DISPATCH(TYPE, NAME, ...) \
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, TYPE, NAME, __VA_ARGS__)

int64_t grid_for_blocks(int64_t n) { return std::max<int64_t>(1, std::min<int64_t>(n, 1 << 20)); }

}  // namespace

void reference_forward_cuda(const ConvT3dParams& p, const at::Tensor& x, const at::Tensor& w,
                            const at::Tensor& bias, const at::Tensor& y) {
  const c10::cuda::CUDAGuard guard(x.device());
  auto stream = at::cuda::getCurrentCUDAStream();
  CONVT3D_DISPATCH(x.scalar_type(), "convt3d_forward_cuda", [&] {
    forward_kernel<scalar_t><<<blocks_for(y.numel()), kThreads, 0, stream>>>(
        p, x.const_data_ptr<scalar_t>(), w.const_data_ptr<scalar_t>(),
        bias.defined() ? bias.const_data_ptr<scalar_t>() : nullptr,
        y.mutable_data_ptr<scalar_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void reference_grad_input_cuda(const ConvT3dParams& p, const at::Tensor& gy, const at::Tensor& w,
                               const at::Tensor& gx) {
  const c10::cuda::CUDAGuard guard(gy.device());
  auto stream = at::cuda::getCurrentCUDAStream();
  CONVT3D_DISPATCH(gy.scalar_type(), "convt3d_grad_input_cuda", [&] {
    grad_input_kernel<scalar_t><<<blocks_for(gx.numel()), kThreads, 0, stream>>>(
        p, gy.const_data_ptr<scalar_t>(), w.const_data_ptr<scalar_t>(),
        gx.mutable_data_ptr<scalar_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void reference_grad_weight_cuda(const ConvT3dParams& p, const at::Tensor& gy,
                                const at::Tensor& x, const at::Tensor& gw) {
  const c10::cuda::CUDAGuard guard(gy.device());
  auto stream = at::cuda::getCurrentCUDAStream();
  CONVT3D_DISPATCH(gy.scalar_type(), "convt3d_grad_weight_cuda", [&] {
    grad_weight_kernel<scalar_t><<<grid_for_blocks(gw.numel()), kThreads, 0, stream>>>(
        p, gy.const_data_ptr<scalar_t>(), x.const_data_ptr<scalar_t>(),
        gw.mutable_data_ptr<scalar_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void reference_grad_bias_cuda(const at::Tensor& gy, const at::Tensor& gb) {
  const c10::cuda::CUDAGuard guard(gy.device());
  auto stream = at::cuda::getCurrentCUDAStream();
  std::array<int64_t, 5> st{gy.stride(0), gy.stride(1), gy.stride(2), gy.stride(3), gy.stride(4)};
  CONVT3D_DISPATCH(gy.scalar_type(), "convt3d_grad_bias_cuda", [&] {
    grad_bias_kernel<scalar_t><<<grid_for_blocks(gb.numel()), kThreads, 0, stream>>>(
        gy.size(0), gy.size(1), gy.size(2), gy.size(3), gy.size(4), st,
        gy.const_data_ptr<scalar_t>(), gb.mutable_data_ptr<scalar_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace convt3d
