#include "box_map.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

namespace convt3d {
namespace {

// cuTensorMapEncodeTiled through the runtime's driver entry point, so the extension does not
// link libcuda itself; looked up once.
PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      return PFN_cuTensorMapEncodeTiled_v12000(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// The map's element type; false for none (fp32 is TF32's and 3xTF32's storage).
bool map_type(int elem_bytes, bool is_float, CUtensorMapDataType& type) {
  if (elem_bytes == 4 && is_float) {
    type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  } else if (elem_bytes == 2) {
    type = is_float ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  } else {
    return false;
  }
  return true;
}

// A 5-D view of x (sizes and strides in elements, NCDHW order) whose dim i, innermost first,
// is x's dim order[i] (x's stride along order[0] must be 1), with the box (box[0..3], 1) and
// zero fill outside x: the transposed kernel's x boxes (channels_last, and NCDHW staged).
bool encode_x_view(unsigned char* map, const void* x, CUtensorMapDataType type, int elem_bytes,
                   const int64_t* sizes, const int64_t* strides, const int (&order)[5],
                   const int* box, CUtensorMapSwizzle swizzle) {
  const auto fn = encode_fn();
  if (fn == nullptr || strides[order[0]] != 1) return false;
  cuuint64_t dims[5], st[4];  // strides of dims 1..4 in bytes
  for (int i = 0; i < 5; ++i) {
    if (strides[order[i]] < 0) return false;
    dims[i] = cuuint64_t(sizes[order[i]]);
    if (i > 0) st[i - 1] = cuuint64_t(strides[order[i]] * elem_bytes);
  }
  const cuuint32_t bdim[5] = {cuuint32_t(box[0]), cuuint32_t(box[1]), cuuint32_t(box[2]),
                              cuuint32_t(box[3]), 1};
  const cuuint32_t estr[5] = {1, 1, 1, 1, 1};
  const CUresult r = fn(reinterpret_cast<CUtensorMap*>(map), type, 5, const_cast<void*>(x), dims,
                        st, bdim, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS;
}

}  // namespace

bool tensor_maps_available() { return encode_fn() != nullptr; }

bool encode_box_map(unsigned char* map, const void* x, int elem_bytes, bool is_float,
                    const int64_t* sizes, const int64_t* strides, const int* box) {
  static_assert(sizeof(CUtensorMap) == 128, "CUtensorMap is 128 bytes");
  CUtensorMapDataType type;
  if (!map_type(elem_bytes, is_float, type)) return false;
  return encode_x_view(map, x, type, elem_bytes, sizes, strides, {1, 4, 3, 2, 0}, box,
                       CU_TENSOR_MAP_SWIZZLE_64B);  // (C, W, H, D, N)
}

bool encode_stage_map(unsigned char* map, const void* x, const int64_t* sizes,
                      const int64_t* strides, const int* box) {
  return encode_x_view(map, x, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, sizes, strides,
                       {4, 3, 2, 1, 0}, box, CU_TENSOR_MAP_SWIZZLE_NONE);  // (W, H, D, C, N)
}

bool encode_weight_map(unsigned char* map, const void* wp, int elem_bytes, bool is_float,
                       const WeightMapShape& s) {
  const auto fn = encode_fn();
  CUtensorMapDataType type;
  if (fn == nullptr || !map_type(elem_bytes, is_float, type)) return false;
  const int64_t row = s.cin_pad * elem_bytes;  // bytes per output channel of a tap
  const int64_t tap = s.cout_g * row;
  const int rows = 64 / s.stack;
  cuuint64_t dims[5], st[4];
  cuuint32_t bdim[5] = {cuuint32_t(s.bk), cuuint32_t(rows), 1, 1, 1};
  cuuint32_t rank = 5;
  if (s.stack == 1) {
    rank = 2;
    dims[0] = cuuint64_t(s.cin_pad);
    dims[1] = cuuint64_t(s.outer * s.kd * s.kh * s.kw * s.cout_g);
    st[0] = cuuint64_t(row);
  } else {
    // (cin_pad, cout_g, a, b, outer): the stacked blocks step along a (w taps) or b (depth taps)
    const int64_t na = s.stack_w ? s.kw : s.kh * s.kw, nb = s.stack_w ? s.kd * s.kh : s.kd;
    const cuuint64_t d[5] = {cuuint64_t(s.cin_pad), cuuint64_t(s.cout_g), cuuint64_t(na),
                             cuuint64_t(nb), cuuint64_t(s.outer)};
    const cuuint64_t t[4] = {cuuint64_t(row), cuuint64_t(tap), cuuint64_t(na * tap),
                             cuuint64_t(na * nb * tap)};
    for (int i = 0; i < 5; ++i) dims[i] = d[i];
    for (int i = 0; i < 4; ++i) st[i] = t[i];
    bdim[s.stack_w ? 2 : 3] = cuuint32_t(s.stack);
  }
  const cuuint32_t estr[5] = {1, 1, 1, 1, 1};
  // Every CTA of a phase reads the same weight rows: 256-byte L2 promotion.
  const CUresult r = fn(reinterpret_cast<CUtensorMap*>(map), type, rank, const_cast<void*>(wp),
                        dims, st, bdim, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS;
}

}  // namespace convt3d
