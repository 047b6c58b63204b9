// CPU kernels for the four convt3d ops: plain loops over precomputed tap tables, parallel over
// output rows with at::parallel_for. Deterministic: every output element is one thread's
// fixed-order sum. These are the CPU product and the reference the CUDA kernels are held to.
#include "../accumulate.h"
#include "../entry.h"
#include "axis_taps.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

namespace convt3d {
namespace {

using Taps3 = std::array<AxisTaps, 3>;

template <AxisTaps (*Build)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t)>
Taps3 build3(const ConvT3dParams& p) {
  Taps3 t;
  for (int a = 0; a < 3; ++a) {
    t[a] = Build(p.in[a], p.out[a], p.k[a], p.stride[a], p.pad[a], p.dil[a]);
  }
  return t;
}

template <typename T>
void forward_t(const ConvT3dParams& p, const T* x, const T* w, const T* b, T* y) {
  using acc_t = ref_acc_t<T>;
  const Taps3 taps = build3<taps_by_output>(p);
  const auto &xs = p.x_st, &ws = p.w_st, &ys = p.y_st;
  at::parallel_for(0, p.N * p.Cout * p.out[0], 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t od = r % p.out[0], co = (r / p.out[0]) % p.Cout, n = r / (p.out[0] * p.Cout);
      const int64_t g = co / p.Cout_g, col = co % p.Cout_g;
      const T* xg = x + n * xs[0] + g * p.Cin_g * xs[1];
      const T* wg = w + g * p.Cin_g * ws[0] + col * ws[1];
      for (int64_t oh = 0; oh < p.out[1]; ++oh) {
        for (int64_t ow = 0; ow < p.out[2]; ++ow) {
          acc_t acc = b ? static_cast<acc_t>(b[co]) : acc_t(0);
          for (auto [td, id] : taps[0].rows[od]) {
            for (auto [th, ih] : taps[1].rows[oh]) {
              for (auto [tw, iw] : taps[2].rows[ow]) {
                const T* xp = xg + id * xs[2] + ih * xs[3] + iw * xs[4];
                const T* wp = wg + td * ws[2] + th * ws[3] + tw * ws[4];
                for (int64_t ci = 0; ci < p.Cin_g; ++ci) {
                  acc += static_cast<acc_t>(xp[ci * xs[1]]) * static_cast<acc_t>(wp[ci * ws[0]]);
                }
              }
            }
          }
          y[n * ys[0] + co * ys[1] + od * ys[2] + oh * ys[3] + ow * ys[4]] = static_cast<T>(acc);
        }
      }
    }
  });
}

template <typename T>
void grad_input_t(const ConvT3dParams& p, const T* gy, const T* w, T* gx) {
  using acc_t = ref_acc_t<T>;
  const Taps3 taps = build3<taps_by_input>(p);
  const auto &xs = p.x_st, &ws = p.w_st, &ys = p.y_st;
  at::parallel_for(0, p.N * p.Cin * p.in[0], 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t id = r % p.in[0], ci = (r / p.in[0]) % p.Cin, n = r / (p.in[0] * p.Cin);
      const int64_t g = ci / p.Cin_g;
      const T* gyg = gy + n * ys[0] + g * p.Cout_g * ys[1];
      const T* wc = w + ci * ws[0];
      for (int64_t ih = 0; ih < p.in[1]; ++ih) {
        for (int64_t iw = 0; iw < p.in[2]; ++iw) {
          acc_t acc = 0;
          for (auto [td, od] : taps[0].rows[id]) {
            for (auto [th, oh] : taps[1].rows[ih]) {
              for (auto [tw, ow] : taps[2].rows[iw]) {
                const T* gp = gyg + od * ys[2] + oh * ys[3] + ow * ys[4];
                const T* wp = wc + td * ws[2] + th * ws[3] + tw * ws[4];
                for (int64_t col = 0; col < p.Cout_g; ++col) {
                  acc += static_cast<acc_t>(gp[col * ys[1]]) * static_cast<acc_t>(wp[col * ws[1]]);
                }
              }
            }
          }
          gx[n * xs[0] + ci * xs[1] + id * xs[2] + ih * xs[3] + iw * xs[4]] = static_cast<T>(acc);
        }
      }
    }
  });
}

template <typename T>
void grad_weight_t(const ConvT3dParams& p, const T* gy, const T* x, T* gw) {
  using acc_t = ref_acc_t<T>;
  const Taps3 pairs = build3<pairs_by_tap>(p);
  const auto &xs = p.x_st, &ws = p.w_st, &ys = p.y_st;
  at::parallel_for(0, p.Cin * p.Cout_g * p.k[0], 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t td = r % p.k[0], col = (r / p.k[0]) % p.Cout_g, ci = r / (p.k[0] * p.Cout_g);
      const int64_t co = (ci / p.Cin_g) * p.Cout_g + col;
      for (int64_t th = 0; th < p.k[1]; ++th) {
        for (int64_t tw = 0; tw < p.k[2]; ++tw) {
          acc_t acc = 0;
          for (int64_t n = 0; n < p.N; ++n) {
            const T* xn = x + n * xs[0] + ci * xs[1];
            const T* gn = gy + n * ys[0] + co * ys[1];
            for (auto [id, od] : pairs[0].rows[td]) {
              for (auto [ih, oh] : pairs[1].rows[th]) {
                for (auto [iw, ow] : pairs[2].rows[tw]) {
                  acc += static_cast<acc_t>(xn[id * xs[2] + ih * xs[3] + iw * xs[4]]) *
                         static_cast<acc_t>(gn[od * ys[2] + oh * ys[3] + ow * ys[4]]);
                }
              }
            }
          }
          gw[ci * ws[0] + col * ws[1] + td * ws[2] + th * ws[3] + tw * ws[4]] =
              static_cast<T>(acc);
        }
      }
    }
  });
}

template <typename T>
void grad_bias_t(const at::Tensor& gy_t, T* gb) {
  using acc_t = ref_acc_t<T>;
  const T* gy = gy_t.const_data_ptr<T>();
  const auto s = gy_t.strides();
  const auto z = gy_t.sizes();
  at::parallel_for(0, z[1], 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      acc_t acc = 0;
      for (int64_t n = 0; n < z[0]; ++n)
        for (int64_t d = 0; d < z[2]; ++d)
          for (int64_t h = 0; h < z[3]; ++h)
            for (int64_t w = 0; w < z[4]; ++w)
              acc += static_cast<acc_t>(gy[n * s[0] + c * s[1] + d * s[2] + h * s[3] + w * s[4]]);
      gb[c] = static_cast<T>(acc);
    }
  });
}

#define CONVT3D_DISPATCH(TYPE, NAME, ...) \
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, TYPE, NAME, __VA_ARGS__)

void forward_cpu(const ConvT3dParams& p, const at::Tensor& x, const at::Tensor& w,
                 const at::Tensor& bias, const at::Tensor& y) {
  CONVT3D_DISPATCH(x.scalar_type(), "convt3d_forward_cpu", [&] {
    forward_t<scalar_t>(p, x.const_data_ptr<scalar_t>(), w.const_data_ptr<scalar_t>(),
                        bias.defined() ? bias.const_data_ptr<scalar_t>() : nullptr,
                        y.mutable_data_ptr<scalar_t>());
  });
}

void grad_input_cpu(const ConvT3dParams& p, const at::Tensor& gy, const at::Tensor& w,
                    const at::Tensor& gx) {
  CONVT3D_DISPATCH(gy.scalar_type(), "convt3d_grad_input_cpu", [&] {
    grad_input_t<scalar_t>(p, gy.const_data_ptr<scalar_t>(), w.const_data_ptr<scalar_t>(),
                           gx.mutable_data_ptr<scalar_t>());
  });
}

void grad_weight_cpu(const ConvT3dParams& p, const at::Tensor& gy, const at::Tensor& x,
                     const at::Tensor& gw) {
  CONVT3D_DISPATCH(gy.scalar_type(), "convt3d_grad_weight_cpu", [&] {
    grad_weight_t<scalar_t>(p, gy.const_data_ptr<scalar_t>(), x.const_data_ptr<scalar_t>(),
                            gw.mutable_data_ptr<scalar_t>());
  });
}

void grad_bias_cpu(const at::Tensor& gy, const at::Tensor& gb) {
  CONVT3D_DISPATCH(gy.scalar_type(), "convt3d_grad_bias_cpu",
                   [&] { grad_bias_t<scalar_t>(gy, gb.mutable_data_ptr<scalar_t>()); });
}

const Kernels kCpuKernels{&forward_cpu, &grad_input_cpu, &grad_weight_cpu, &grad_bias_cpu};

}  // namespace

TORCH_LIBRARY_IMPL(convt3d, CPU, m) { register_kernels<kCpuKernels>(m); }

}  // namespace convt3d
