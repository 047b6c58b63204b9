// Pieces both forward kernels (igemm_kernel.cuh, halo_kernel.cuh) share: element traits, the
// warp's MMA work on one 64-byte K stage held in shared memory, and the epilogue that moves the
// accumulators through shared memory to y. The kernels differ only in how A reaches shared
// memory (a gathered stage per tap, or a halo box) and how they pipeline it.
#pragma once

#include "fast_div.cuh"
#include "mma.cuh"
#include "mode.h"
#include "phases.h"
#include "tile_configs.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace convt3d {
namespace fwd {

// The warp grid of a tile config, shared by both kernels' config structs: BM x BN tile,
// WM x WN warps of TM x TN, i.e. MT m16 and NTL n8 fragments per warp.
template <int BN, int BM_, int WM_, int WN_>
struct WarpGrid {
  static constexpr int kBn = BN, BM = BM_, WM = WM_, WN = WN_;
  static constexpr int NT = 32 * WM * WN;  // threads
  // At least 16 warps per SM (<= 128 registers per thread) to cover load latency.
  static constexpr int kMinBlocks = 512 / NT;
  static constexpr int TM = BM / WM, TN = BN / WN;  // warp tile
  static constexpr int MT = TM / 16, NTL = TN / 8;  // m16 and n8 fragments per warp
  static_assert(TM % 16 == 0 && TN % 16 == 0, "warp tile must be a multiple of 16 x 16");
};

template <Mode M>
struct ModeTraits {
  using T = float;
};
template <>
struct ModeTraits<Mode::kBf16> {
  using T = __nv_bfloat16;
};
template <>
struct ModeTraits<Mode::kFp16> {
  using T = __half;
};

// Raw bits of one element (16-bit types travel as ushort, fp32 as uint).
template <typename T>
__device__ __forceinline__ uint32_t ld_bits(const T* p) {
  if constexpr (sizeof(T) == 2) {
    return __ldg(reinterpret_cast<const unsigned short*>(p));
  } else {
    return __float_as_uint(__ldg(reinterpret_cast<const float*>(p)));
  }
}

// 16 bytes of raw element bits (8 two-byte or 4 four-byte values, low bits each) as one vector.
template <int KRUN>
__device__ __forceinline__ uint4 pack_bits16(const uint32_t* v) {
  static_assert(KRUN == 4 || KRUN == 8, "16 bytes of 4- or 2-byte elements");
  if constexpr (KRUN == 8) {
    return make_uint4(v[0] | (v[1] << 16), v[2] | (v[3] << 16), v[4] | (v[5] << 16),
                      v[6] | (v[7] << 16));
  } else {
    return make_uint4(v[0], v[1], v[2], v[3]);
  }
}

template <typename T>
__device__ __forceinline__ float to_float(T v) {
  if constexpr (sizeof(T) == 4) {
    return v;
  } else if constexpr (std::is_same_v<T, __half>) {
    return __half2float(v);
  } else {
    return __bfloat162float(v);
  }
}

template <typename T>
__device__ __forceinline__ T from_float(float v) {
  if constexpr (sizeof(T) == 4) {
    return v;
  } else if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else {
    return __float2bfloat16_rn(v);
  }
}

// A 2-byte global store through a generic pointer the compiler cannot see into (the paired
// epilogue steps it by the channel stride): st.global, not a generic st.
__device__ __forceinline__ void st_global_u16(void* p, unsigned short v) {
  asm volatile("st.global.b16 [%0], %1;\n" ::"l"(p), "h"(v));
}

// Two 16-bit elements as one 32-bit word, lo in the low half (little-endian memory order).
template <typename T>
__device__ __forceinline__ uint32_t pack_pair(T lo, T hi) {
  static_assert(sizeof(T) == 2, "16-bit types only");
  return uint32_t(*reinterpret_cast<const unsigned short*>(&lo)) |
         (uint32_t(*reinterpret_cast<const unsigned short*>(&hi)) << 16);
}

// Two adjacent elements with one store (p is 2-element aligned).
template <typename T>
__device__ __forceinline__ void store_pair(T* p, T lo, T hi) {
  if constexpr (sizeof(T) == 4) {
    *reinterpret_cast<float2*>(p) = make_float2(lo, hi);
  } else {
    *reinterpret_cast<uint32_t*>(p) = pack_pair(lo, hi);
  }
}

// 3xTF32 split x = big + small, both rounded to nearest TF32. The tensor core ignores the low
// 13 mantissa bits of a TF32 operand, so rounding is one integer add of half a TF32 ulp (as
// CUTLASS's round_half_ulp_truncate); big is masked because x - big must be exact. A NaN whose
// high mantissa bits are all ones (CUDA's 0x7fffffff, and its negation) carries into big = +-0,
// and small is then the canonical NaN 0x7fffffff, which the plain add would carry into -0: the
// NaN was lost (tests/test_tf32_rounding.py, strict fp32). small's add is therefore
// max(s + 0x1000, s) in signed 32-bit (one VIADDMNMX on sm_90): the same bits for every finite
// s, and 0x7fffffff, whose add wraps negative, stays NaN.
__device__ __forceinline__ void split_tf32(uint32_t x, uint32_t& big, uint32_t& small) {
  big = (x + 0x1000u) & 0xffffe000u;
  const int s = __float_as_int(__uint_as_float(x) - __uint_as_float(big));
  small = static_cast<uint32_t>(__viaddmax_s32(s, 0x1000, s));
}

// split_tf32 on 16 bytes (pw's repacked B, split in place in shared memory).
__device__ __forceinline__ void split_tf32_4(uint4 v, uint4& big, uint4& small) {
  split_tf32(v.x, big.x, small.x);
  split_tf32(v.y, big.y, small.y);
  split_tf32(v.z, big.z, small.z);
  split_tf32(v.w, big.w, small.w);
}

// The same with small masked too, for operands stored to shared memory: exact TF32 bits, as
// tf32_split_bits gives (unmasked low bits cost a compute-bound TF32 kernel 4-6 %, likely in
// the tensor core's power: mma.cuh), in 5 instructions where tf32_split_bits takes 9.
__device__ __forceinline__ void split_tf32_exact(uint32_t x, uint32_t& big, uint32_t& small) {
  split_tf32(x, big, small);
  small &= 0xffffe000u;
}

// One warp multiplies one 64-byte K stage: acc[MT][NTL] (m16 x n8 fragments) += A x B^T.
// a_addr[i]: this lane's ldmatrix row address of m16 fragment i at K byte 0 (lanes 0-15 rows
// 0-15 of the first 16-byte chunk, lanes 16-31 the same rows of the second -> a0..a3 of
// m16n8k16, and of m16n8k8 on fp32 data). b_addr: this lane's B row address, B stored [n][k]
// (lanes 0-7 n 0-7 chunk 0, 8-15 n 0-7 chunk 1, 16-23 n 8-15 chunk 0, 24-31 n 8-15 chunk 1 ->
// {b0, b1} of two adjacent n8 tiles). Rows are kRowBytes apart. ROUND_A: TF32 A still needs
// rounding (the weight is rounded by the repack). NKS = 1 skips the stage's second 32 bytes of
// K (all channel padding); a compile-time count, so both steps schedule as one block.
// MASKED: bit ks * NTL + j of `live` clear means block (K step ks, n8 tile j) of the weight is
// known zero (a densified grouped layer's off-diagonal blocks): its MMAs are skipped. The
// fragments still load unconditionally: with branches around them the loads of one tap could
// no longer overlap another tap's MMAs.
template <Mode MODE, int MT, int NTL, bool ROUND_A, int NKS = kChunks / 2, bool MASKED = false>
__device__ __forceinline__ void warp_mma_stage(float (&acc)[MT][NTL][4],
                                               const uint32_t (&a_addr)[MT], uint32_t b_addr,
                                               uint32_t live = ~0u) {
  static_assert(NTL % 2 == 0, "B fragments are loaded two n8 tiles at a time");
  static_assert(!MASKED || NKS * NTL <= 32, "one bit per block");
  auto on = [&](int ks, int j) { return !MASKED || ((live >> (ks * NTL + j)) & 1u) != 0u; };
#pragma unroll
  for (int ks = 0; ks < NKS; ++ks) {  // 32 bytes of K per MMA
    uint32_t af[MT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i) ldmatrix_x4(af[i], a_addr[i] + ks * 32);
    uint32_t as[MT][4];  // small parts (3xTF32 only)
    if constexpr (MODE == Mode::kTf32 && ROUND_A) {
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int c = 0; c < 4; ++c) af[i][c] = tf32_rna(__uint_as_float(af[i][c]));
    } else if constexpr (MODE == Mode::kTf32x3) {
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int c = 0; c < 4; ++c) split_tf32(af[i][c], af[i][c], as[i][c]);
    }
    // B fragments two n8 tiles at a time, so only four B registers are live.
#pragma unroll
    for (int jp = 0; jp < NTL / 2; ++jp) {
      uint32_t r[4];
      ldmatrix_x4(r, b_addr + jp * 16 * kRowBytes + ks * 32);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int j = 2 * jp + h;
        if (!on(ks, j)) continue;
        uint32_t bf[2] = {r[2 * h], r[2 * h + 1]};
#pragma unroll
        for (int i = 0; i < MT; ++i) {
          if constexpr (MODE == Mode::kBf16) {
            mma_bf16_16816(acc[i][j], af[i], bf);
          } else if constexpr (MODE == Mode::kFp16) {
            mma_f16_16816(acc[i][j], af[i], bf);
          } else if constexpr (MODE == Mode::kTf32) {
            mma_tf32_1688(acc[i][j], af[i], bf);
          }
        }
        if constexpr (MODE == Mode::kTf32x3) {
          // a*b ~= a_small*b_big + a_big*b_small + a_big*b_big, small terms first, into a fresh
          // partial that is then added with an IEEE (round-to-nearest) FADD. The tensor core
          // accumulates with truncation; chaining it over all of K biases long sums (~3e-5 at
          // K = 3000 in a model of it), while this two-level sum stays ~3e-7.
          uint32_t bb[2], bs[2];
          split_tf32(bf[0], bb[0], bs[0]);
          split_tf32(bf[1], bb[1], bs[1]);
#pragma unroll
          for (int i = 0; i < MT; ++i) {
            float part[4] = {0.f, 0.f, 0.f, 0.f};
            mma_tf32_1688(part, as[i], bb);
            mma_tf32_1688(part, af[i], bs);
            mma_tf32_1688(part, af[i], bb);
#pragma unroll
            for (int c = 0; c < 4; ++c) acc[i][j][c] += part[c];
          }
        }
      }
    }
  }
}

// The tile of this CTA. The grid is 1-D over (n tile, phase, m tile, group), n tile fastest
// and then phase, so the phases of one region run together: they share x in L2, and their
// interleaved y writes merge in L2. (rd, rh, rw) is the phase's residue per axis.
struct TileCoord {
  int nt, mt, g, rd, rh, rw;
};

__device__ __forceinline__ TileCoord tile_coord(const FwdArgs& a) {
  // The host keeps grids below 2^31 CTAs, so FastDiv (host magic numbers) splits the index: six
  // runtime divisions were about 140 of a v1 warp's 2000 instructions (ncu, suite case 6).
  int b = static_cast<int>(blockIdx.x);
  TileCoord c;
  b = FastDiv(a.div_nt).divmod(b, c.nt);
  int ph;
  b = FastDiv(a.div_ph).divmod(b, ph);
  c.g = FastDiv(a.div_mt).divmod(b, c.mt);
  ph = FastDiv(a.div_sw).divmod(ph, c.rw);
  c.rd = FastDiv(a.div_sh).divmod(ph, c.rh);
  return c;
}

// The same by 64-bit divisions, for the 3xTF32 kernels of v1 and halo only: at 128 registers,
// ptxas kept their K loops free of spills with it, and with the FastDiv version put six local
// loads per stage into v1's BN 32 loop (cuobjdump) and spilled 44 B in halo's BN 32 (H100 A/B:
// suite case 10 strict fp32 NCDHW 4 % slower).
__device__ __forceinline__ TileCoord tile_coord_wide(const FwdArgs& a) {
  int64_t b = blockIdx.x;
  TileCoord c;
  c.nt = static_cast<int>(b % a.n_tiles);
  b /= a.n_tiles;
  const int ph = static_cast<int>(b % a.phases);
  b /= a.phases;
  c.mt = static_cast<int>(b % a.m_tiles);
  c.g = static_cast<int>(b / a.m_tiles);
  const int sw = a.ax[2].stride, sh = a.ax[1].stride;
  c.rw = ph % sw;
  c.rh = (ph / sw) % sh;
  c.rd = ph / (sw * sh);
  return c;
}

// True when the host filled y before the launch (a.prefilled) and tile c's phase has no taps:
// its outputs already hold their bias, so the CTA has nothing to do. Uniform over the CTA, so
// it may return before any barrier.
__device__ __forceinline__ bool phase_prefilled(const FwdArgs& a, const TileCoord& c) {
  return a.prefilled != 0 && a.ax[0].ntap[c.rd] * a.ax[1].ntap[c.rh] * a.ax[2].ntap[c.rw] == 0;
}

template <int MT, int NTL>
__device__ __forceinline__ void zero_acc(float (&acc)[MT][NTL][4]) {
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NTL; ++j)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[i][j][c] = 0.f;
}

// 16 / sizeof(T) consecutive fp32 values of an epilogue tile as one 16-byte vector of T.
template <typename T>
__device__ __forceinline__ uint4 pack16(const float* src) {
  if constexpr (sizeof(T) == 4) {
    return make_uint4(__float_as_uint(src[0]), __float_as_uint(src[1]), __float_as_uint(src[2]),
                      __float_as_uint(src[3]));
  } else {
    uint32_t w[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      w[e] = pack_pair(from_float<T>(src[2 * e]), from_float<T>(src[2 * e + 1]));
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
}

// The fp32 epilogue tile, [rows][BN] values in one of two layouts, both with 16-byte aligned
// rows (each thread's four columns 4k.. are one float4):
// - kSwizzled (store_tile): row r's column c at r * BN + (c ^ tile_swizzle<BN>(r)). The mma
//   fragment writes lane 4 gi + ti to row gi, columns 2 ti and 2 ti + 1 (one float2).
// - kPadded4 (twg): row r's column c at r * (BN + kTwgTilePad) + c (tile_configs.h, which
//   sizes it). twg's writes put lane l on rows two apart (2 (l % 4)) and channel l / 4, banks
//   8 (l % 4) + l / 4 with this stride.
// Before, both used [rows][BN + 1] (odd stride), read by scalars: the fragment's writes hit
// banks gi + 2 ti and twg's 2 (l % 4) + l / 4, up to 4-way conflicts (Nsight Compute, suite
// case 5 TF32 NCDHW: 54 % of the shared store wavefronts), and no odd stride avoids them. Both
// layouts are conflict-free for their writes, for a thread's float4 reads along its row (32
// consecutive rows: NCDHW y), float4 reads of channel chunks (channels_last y; 16-bit chunks of
// BN 48 and 64, and twg's chunks at BN 16, stay 2-way as before) and scalar reads along a row.
// scripts/tile_swizzle_check.py models the banks; change both together. The swizzle moves only
// 16-byte groups (bits 2-4 of the column); it was found by searching the linear maps of r's bits
// (a swizzled twg tile made twg spill and lose: design doc v29).
enum class TileLayout { kSwizzled, kPadded4 };

template <int BN>
__device__ __forceinline__ int tile_swizzle(int r) {
  if constexpr (BN % 32 == 0) {
    return ((r & 1) << 2) | (((r >> 1) & 1) << 3) | (((r ^ (r >> 2)) & 1) << 4);
  } else {  // BN 16 or 48: stays within the row's 16-column block
    static_assert(BN % 16 == 0, "epilogue tile columns come in blocks of 16");
    return (((r >> 1) & 1) << 2) | ((((r >> 1) ^ (r >> 2)) & 1) << 3);
  }
}

template <int BN, TileLayout L>
__device__ __forceinline__ int tile_index(int r, int c) {
  if constexpr (L == TileLayout::kSwizzled) {
    return r * BN + (c ^ tile_swizzle<BN>(r));
  } else {
    return r * (BN + kTwgTilePad) + c;
  }
}

// The four fp32 values of tile columns c4 .. c4 + 3 (c4 a multiple of 4) of row r.
template <int BN, TileLayout L>
__device__ __forceinline__ float4 tile_quad(const float* ct, int r, int c4) {
  return *reinterpret_cast<const float4*>(ct + tile_index<BN, L>(r, c4));
}

// Epilogue, second half: the fp32 tile ct (bias added; layout above) -> y. Row r goes to y
// offset yoff[r * yoff_stride] (negative: not stored); columns are output channels n0.. of the
// group. Channels_last y: consecutive threads write consecutive channels; otherwise consecutive
// rows (consecutive qw). The caller has synchronised after writing ct.
template <int BN, int NT, typename T, TileLayout L>
__device__ __forceinline__ void tile_to_y(const float* ct, int rows, const int64_t* yoff,
                                          int yoff_stride, const FwdArgs& a, int n0) {
  const int tid = threadIdx.x;
  T* __restrict__ y = static_cast<T*>(a.y);
  const int cols_left = a.cout_g - n0 < BN ? a.cout_g - n0 : BN;
  const int64_t cstride = a.ys[1];
  constexpr int V = 16 / int(sizeof(T));  // elements per 16-byte store
  if (a.y_vec) {
    // Channels_last, aligned (host checked): one 16-byte store per V channels of a row;
    // cols_left is then a multiple of V.
#pragma unroll 2
    for (int i = tid; i < rows * (BN / V); i += NT) {
      const int r = i / (BN / V), cl = (i % (BN / V)) * V;
      const int64_t yo = yoff[r * yoff_stride];
      if (yo >= 0 && cl < cols_left) {
        float v[V];
#pragma unroll
        for (int q = 0; q < V; q += 4) {
          const float4 f = tile_quad<BN, L>(ct, r, cl + q);
          v[q] = f.x, v[q + 1] = f.y, v[q + 2] = f.z, v[q + 3] = f.w;
        }
        *reinterpret_cast<uint4*>(y + yo + n0 + cl) = pack16<T>(v);
      }
    }
  } else if (a.y_cfast) {
#pragma unroll 4
    for (int i = tid; i < rows * BN; i += NT) {
      const int r = i / BN, cl = i % BN;
      const int64_t yo = yoff[r * yoff_stride];
      if (yo >= 0 && cl < cols_left) {
        y[yo + int64_t(n0 + cl) * cstride] = from_float<T>(ct[tile_index<BN, L>(r, cl)]);
      }
    }
  } else {
    // Channel stride > 1 (NCDHW): each thread walks the channels of one row, so it reads the
    // row's offset once and steps its pointers, about 6 instructions a store where an index
    // split per element took about 18 (ncu, suite case 11 bf16 NCDHW: the kernel was
    // issue-bound). Consecutive threads take consecutive rows (consecutive w in y). A pass
    // takes up to NT rows; with rr < NT rows left, g = NT / rr threads share a row, channels
    // cl = j, j + g, ... (so a short last pass does not leave a few threads all the stores).
    for (int r0 = 0; r0 < rows; r0 += NT) {
      const int rr = rows - r0 < NT ? rows - r0 : NT;
      const int g = NT / rr, j = tid / rr, r = r0 + tid % rr;
      const int64_t yo = j < g ? yoff[r * yoff_stride] : -1;
      if (yo < 0) continue;
      T* yp = y + yo + int64_t(n0 + j) * cstride;
      if (g == 1 && cols_left == BN) {
        // A whole row (the common case): a compile-time trip count, four columns per shared
        // load. A scalar loop took 27 instructions per 4 stores (ncu, suite case 6 bf16 NCDHW
        // on v1).
#pragma unroll 4
        for (int c4 = 0; c4 < BN; c4 += 4) {
          const float4 f = tile_quad<BN, L>(ct, r, c4);
          yp[0] = from_float<T>(f.x);
          yp[cstride] = from_float<T>(f.y);
          yp[2 * cstride] = from_float<T>(f.z);
          yp[3 * cstride] = from_float<T>(f.w);
          yp += 4 * cstride;
        }
        continue;
      }
      const int64_t step = int64_t(g) * cstride;
#pragma unroll 4
      for (int cl = j; cl < cols_left; cl += g) {
        *yp = from_float<T>(ct[tile_index<BN, L>(r, cl)]);
        yp += step;
      }
    }
  }
}

// Epilogue: accumulators (+ bias) -> fp32 tile ct [BM][BN] in shared memory (kSwizzled,
// each lane's column pair one float2) -> y (tile_to_y). ct is 16-byte aligned (the callers'
// row tables and tap tables come in multiples of 16 bytes). The caller has finished every read
// of the shared bytes under ct.
template <class C, typename T>
__device__ __forceinline__ void store_tile(const float (&acc)[C::MT][C::NTL][4], float* ct,
                                           const int64_t* yoff, int yoff_stride,
                                           const FwdArgs& a, int g, int n0, int wm, int wn) {
  constexpr int BN = C::kBn;
  const int lane = threadIdx.x % 32;
  const T* bias = static_cast<const T*>(a.bias);
  const int gi = lane / 4, ti = lane % 4;
#pragma unroll
  for (int j = 0; j < C::NTL; ++j) {
    const int cl = wn * C::TN + j * 8 + 2 * ti;  // columns cl, cl + 1 within the tile
    float bv[2];
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int col = n0 + cl + c;
      bv[c] = (bias != nullptr && col < a.cout_g) ? to_float(bias[int64_t(g) * a.cout_g + col])
                                                  : 0.f;
    }
#pragma unroll
    for (int i = 0; i < C::MT; ++i) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int rl = wm * C::TM + i * 16 + gi + 8 * h;
        *reinterpret_cast<float2*>(ct + tile_index<BN, TileLayout::kSwizzled>(rl, cl)) =
            make_float2(acc[i][j][2 * h] + bv[0], acc[i][j][2 * h + 1] + bv[1]);
      }
    }
  }
  __syncthreads();
  tile_to_y<BN, C::NT, T, TileLayout::kSwizzled>(ct, C::BM, yoff, yoff_stride, a, n0);
}

}  // namespace fwd
}  // namespace convt3d
