// The CUDA forward (forward_cuda.h): plans the call (plan.h), packs the weight where the
// kernel reads a packed one, and launches the planned kernel (fwd/dispatch.h), or the reference
// (reference_cuda.h) where no fast plan applies.
#include "forward_cuda.h"

#include "box_map.h"
#include "fwd/dispatch.h"
#include "fwd/phases.h"
#include "fwd/tile_configs.h"
#include "plan.h"
#include "reference_cuda.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include <string>

namespace convt3d {

using planner::cached_plan;
using planner::channel_vector_ok;
using planner::FastPlan;

void forward_cuda(const ConvT3dParams& p, const at::Tensor& x, const at::Tensor& w,
                  const at::Tensor& bias, const at::Tensor& y) {
  FastPlan f = cached_plan(p, x, w);
  if (!f.fast) {
    reference_forward_cuda(p, x, w, bias, y);
    return;
  }
  const c10::cuda::CUDAGuard guard(x.device());
  auto stream = at::cuda::getCurrentCUDAStream();
  if (f.gsc) {
    // reads w itself (contiguous) and stages each group's weights per CTA: no repack
    fwd::GscArgs& g = f.gsc_args;
    g.x = x.const_data_ptr();
    g.w = w.const_data_ptr();
    g.bias = bias.defined() ? bias.const_data_ptr() : nullptr;
    g.y = y.mutable_data_ptr();
    // pairs stored as one word: y aligned to a pair and every stride but the pair's own even
    const int pair_dim = f.gsc_cl ? 1 : 4;
    bool vec = reinterpret_cast<uintptr_t>(g.y) % (2 * y.element_size()) == 0 &&
               p.y_st[pair_dim] == 1;
    for (int i = 0; i < 5; ++i) vec = vec && (i == pair_dim || p.y_st[i] % 2 == 0);
    g.y_vec = vec ? 1 : 0;
    C10_CUDA_CHECK(fwd::gsc_forward(f.mode, g, f.gsc_cl, stream));
    return;
  }
  fwd::FwdArgs& a = f.args;
  // Strict fp32 as fp16 products (plan_twg, plan_pw): each packed row's 16-channel chunks hold
  // the big and the small halves, so the rows are padded to whole chunks.
  if (a.h16) a.cin_pad = fwd::h16_cin_pad(a.cin_g);

  // Weight in the kernel's K-contiguous layout: the size of w (plus channel padding to 16 bytes),
  // straight from the caching allocator (no tensor around it: at::empty's dispatch cost a small
  // layer's host path several microseconds), stream-ordered, freed back on return. The pw kernel
  // may read w itself (a.w_direct).
  c10::DataPtr wp;
  const int64_t w_rows = f.p.groups * p.k[0] * p.k[1] * p.k[2] * a.cout_g;  // [g][tap][co]
  // Copies of the packed weight: 2 (TF32 big and small parts) for the transposed kernel in
  // 3xTF32, else 1 (as fp16 products, a.h16: each row holds both parts as halves).
  const int64_t w_split = f.twg_nr > 0 && f.mode == fwd::Mode::kTf32x3 && !a.h16 ? 2 : 1;
  // As fp16 products: x's and w's largest |value| bits (h16_absmax), in 16 bytes past the packed
  // rows or (w read directly) their own.
  c10::DataPtr h16_own;
  // Whether the last launch on the stream is one of our kernels: then the main kernel may
  // start before it ends (a.pdl, fwd/pdl.cuh). A memset does not count.
  bool own_last = false;
  auto find_h16_max = [&](void* at) {
    auto* m = static_cast<uint32_t*>(at);
    fwd::H16WeightView wv;
    for (int i = 0; i < 5; ++i) {
      wv.size[i] = w.size(i);
      wv.stride[i] = p.w_st[i];
    }
    wv.dense = w.is_non_overlapping_and_dense();
    C10_CUDA_CHECK(fwd::h16_absmax(x.const_data_ptr(), x.numel(), w.const_data_ptr(), wv, m,
                                   stream));
    own_last = true;
    a.h16_max = m;
    return m;
  };
  if (a.w_direct) {
    a.wp = w.const_data_ptr();
    if (a.h16) {
      h16_own = c10::cuda::CUDACachingAllocator::get()->allocate(16);
      find_h16_max(h16_own.get());
    }
  } else {
    fwd::RepackArgs r;
    r.rows = w_rows;
    r.cin_g = a.cin_g;
    r.cin_pad = a.cin_pad;
    r.cout_g = a.cout_g;
    r.dense_g = f.dense_g;
    for (int i = 0; i < 3; ++i) r.k[i] = a.k[i];
    for (int i = 0; i < 5; ++i) r.ws[i] = p.w_st[i];
    const int64_t total = r.rows * a.cin_pad;
    // 3xTF32 on the transposed kernel: the TF32 big parts, then the small ones, total elements
    // on (w_split); the non-overlapping kernel splits B in shared memory (its weight share of y
    // is larger: split, suite case 9's would be 6.25 % of y)
    r.split = w_split > 1 ? total : 0;
    const size_t w_bytes = size_t(w_split * total) * w.element_size();
    wp = c10::cuda::CUDACachingAllocator::get()->allocate(w_bytes + (a.h16 ? 16 : 0));
    if (a.h16) r.h16_max = find_h16_max(static_cast<char*>(wp.get()) + w_bytes);
    C10_CUDA_CHECK(fwd::repack_weight(f.mode, w.const_data_ptr(), wp.get(), r, stream));
    own_last = true;
    a.wp = wp.get();
  }

  a.x = x.const_data_ptr();
  a.bias = bias.defined() ? bias.const_data_ptr() : nullptr;
  a.y = y.mutable_data_ptr();
  a.y_vec = channel_vector_ok(y, p.y_st, a.cout_g, fwd::chunk_elems(f.mode)) ? 1 : 0;
  if (a.prefilled) {
    C10_CUDA_CHECK(fwd::fill_output(f.mode, a.y, a.bias, p.N * p.Cout,
                                    p.out[0] * p.out[1] * p.out[2], static_cast<int>(p.Cout),
                                    stream));
    own_last = a.bias != nullptr;  // (a bias fill is a kernel, zeros a memset)
  }
  a.pdl = own_last && f.sw.pdl != 0 ? 1 : 0;
  if (f.pw_bn > 0) {
    C10_CUDA_CHECK(fwd::pw_forward(f.mode, f.pw_bn, a, f.blocks, stream));
  } else if (f.twg_nr > 0) {
    const int64_t sizes[5] = {p.N, p.Cin, p.in[0], p.in[1], p.in[2]};  // x's, for its maps
    if (a.box_tma) {
      // + the largest span of any phase, per axis; the depth is slices x stacked planes
      const int ext[3] = {a.box[0] * (a.stack_w ? 1 : a.stack), a.box[1], a.box[2]};
      int box[4] = {fwd::bk_elems(f.mode), 0, 0, 0};
      for (int i = 0; i < 3; ++i) box[3 - i] = ext[i] + a.uext[i];  // (c, w, h, d)
      a.box_tma = encode_box_map(a.box_map, a.x, static_cast<int>(x.element_size()),
                                 x.scalar_type() != at::kBFloat16, sizes, p.x_st.data(), box)
                      ? 1
                      : 0;
    }
    if (a.box_stage) {
      // (w, h, d, c): the staging buffer's extents (twg_stage_bytes), a piece's channels
      const int planes = a.box[0] * (a.stack_w ? 1 : a.stack);
      const int box[4] = {fwd::twg_stage_w(a.box[2] + a.uext[2]), a.box[1] + a.uext[1],
                          planes + a.uext[0],
                          a.box_stage == 2 ? fwd::kTwgPieceCh : fwd::bk_elems(f.mode)};
      // (the scalar loader, where the driver rejects the map)
      if (!encode_stage_map(a.box_map, a.x, sizes, p.x_st.data(), box)) a.box_stage = 0;
    }
    // The packed weight as the kernel reads it (twg_kernel.cuh: produce): boxes of 64 rows of
    // 64 B, one tap or stacked box shift each; the small parts follow the big ones.
    WeightMapShape ws;
    ws.outer = w_split * f.p.groups;
    ws.kd = p.k[0];
    ws.kh = p.k[1];
    ws.kw = p.k[2];
    ws.cout_g = a.cout_g;
    ws.cin_pad = a.cin_pad;
    ws.bk = fwd::bk_elems(f.mode);
    ws.stack = a.stack;
    ws.stack_w = a.stack_w != 0;
    a.w_small_at = static_cast<int>(a.stack > 1 ? f.p.groups : w_rows);
    TORCH_CHECK(encode_weight_map(a.w_map, a.wp, static_cast<int>(w.element_size()),
                                  w.scalar_type() != at::kBFloat16, ws),
                "convt3d: the driver rejected the packed weight's TMA tensor map (",
                w_split * w_rows, " x ", a.cin_pad, " elements of ", w.element_size(),
                " bytes, stack ", a.stack, "); please report this");
    C10_CUDA_CHECK(fwd::twg_forward(f.mode, f.twg_nr, f.kvec, a, f.blocks, stream));
  } else if (f.halo) {
    C10_CUDA_CHECK(fwd::halo_forward(f.mode, f.bn, f.kvec, a, f.blocks, stream));
  } else {
    C10_CUDA_CHECK(fwd::igemm_forward(f.mode, f.bn, f.kvec, a, f.blocks, stream));
  }
}

std::string forward_path_cuda(const at::Tensor& input, const at::Tensor& weight,
                              c10::IntArrayRef stride, c10::IntArrayRef padding,
                              c10::IntArrayRef output_padding, c10::IntArrayRef dilation,
                              int64_t groups) {
  const ConvT3dArgs args{stride, padding, output_padding, dilation, groups};
  check_forward(input, weight, c10::nullopt, args, "convt3d::_forward_path");
  const auto out = output_spatial(input.sizes().slice(2), weight.sizes().slice(2), args);
  // Same sizes and strides as forward's result, without allocating it.
  const at::Tensor y = at::empty(
      {input.size(0), weight.size(1) * groups, out[0], out[1], out[2]},
      input.options().device(at::kMeta).memory_format(result_memory_format(input, weight)));
  if (y.numel() == 0) return "none";
  return cached_plan(make_params(input, weight, y, args), input, weight).name;
}

}  // namespace convt3d
