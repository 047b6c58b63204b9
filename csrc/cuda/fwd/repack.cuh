// The weight repack that runs before most forward kernels (layout: RepackArgs in launch.h):
// one 16-byte-aligned K-contiguous row per (group, tap, output channel). TF32 mode rounds here
// so the main loop does not have to; 3xTF32 keeps full fp32 and splits in the loop, or with
// split > 0 (the transposed kernel, whose operands go to the tensor core from shared memory)
// writes the TF32 big part at e and the small part at split + e; with h16_max, fp16 big and
// small parts of the scaled weight (h16_split.cuh), a chunk's 16 channels in its 64 bytes.
//
// It is a transpose: w's input channel is its slowest axis (in NCDHW and channels_last w
// alike) and the packed row's fastest. Each CTA moves tiles of 32 rows x 32 channels through
// shared memory, reading 32 rows of one channel (w's faster axes) and writing 32 channels of
// one row, and decodes a row's (group, tap, column) once per tile, with 32-bit divisions where
// the rows fit. The element-per-thread kernel it replaced paid five 64-bit divisions per
// element (suite case 11 TF32, 524 K elements: 8.9 -> 5.9 us, H100, torch.profiler; design
// doc v30).
#pragma once

#include "launch.h"
#include "h16_split.cuh"
#include "mma.cuh"
#include "pdl.cuh"
#include "tile_common.cuh"

#include <limits>

namespace convt3d {
namespace fwd {

constexpr int kRepackTile = 32;                    // rows x channels per tile
constexpr int kRepackThreads = 512;                // 32 lanes x 16 warps
constexpr int kRepackWarps = kRepackThreads / 32;  // a warp takes every 16th row / channel

// I: the row decoder's integer type, uint32_t where the rows fit it (the launcher checks).
template <Mode MODE, typename I>
__global__ void __launch_bounds__(kRepackThreads)
    repack_weight_kernel(const typename ModeTraits<MODE>::T* __restrict__ w,
                         typename ModeTraits<MODE>::T* __restrict__ wp, const RepackArgs r) {
  using T = typename ModeTraits<MODE>::T;
  pdl_trigger();  // the main kernel may launch and build its tables meanwhile (pdl.cuh)
  __shared__ T tile[kRepackTile][kRepackTile + 1];  // [channel][row], padded: both walks
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  // Densified groups: w's own groups are cin_g / dense_g -> cout_g / dense_g channels.
  const int src_cin = r.cin_g / r.dense_g, src_cout = r.cout_g / r.dense_g;
  const int ci0 = blockIdx.x * kRepackTile;
  for (int64_t row0 = int64_t(blockIdx.y) * kRepackTile; row0 < r.rows;
       row0 += int64_t(gridDim.y) * kRepackTile) {
    // Read: this lane's row, channels ci0 + warp + 16 i.
    const int64_t row = row0 + lane;
    if (row < r.rows) {
      I t = I(row);
      const int col = int(t % I(r.cout_g));
      t /= I(r.cout_g);
      const int tw = int(t % I(r.k[2]));
      t /= I(r.k[2]);
      const int th = int(t % I(r.k[1]));
      t /= I(r.k[1]);
      const int td = int(t % I(r.k[0]));
      const int64_t g = int64_t(t / I(r.k[0]));
      const T* src = w + g * r.cin_g * r.ws[0] + (col % src_cout) * r.ws[1] + td * r.ws[2] +
                     th * r.ws[3] + tw * r.ws[4];
      const int blk = col / src_cout;  // the densified block of this column
#pragma unroll
      for (int i = 0; i < kRepackTile / kRepackWarps; ++i) {
        const int ci = ci0 + warp + kRepackWarps * i;
        const bool live = ci < r.cin_g && ci / src_cin == blk;
        tile[warp + kRepackWarps * i][lane] =
            live ? src[int64_t(ci) * r.ws[0]] : from_float<T>(0.f);
      }
    }
    __syncthreads();
    // Write: this lane's channel, rows row0 + warp + 16 i.
    const int ci = ci0 + lane;
#pragma unroll
    for (int i = 0; i < kRepackTile / kRepackWarps; ++i) {
      const int64_t rw = row0 + warp + kRepackWarps * i;
      if (rw < r.rows && ci < r.cin_pad) {
        T v = tile[lane][warp + kRepackWarps * i];
        const int64_t at = rw * r.cin_pad + ci;
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
        if constexpr (MODE == Mode::kTf32) v = __uint_as_float(tf32_rna(v));
#endif
        if constexpr (MODE == Mode::kTf32x3) {
          if (r.h16_max != nullptr) {
            // fp16 products: the chunk's 16 big halves, then its 16 small ones (h16_split.cuh;
            // the pair's second value is a dummy)
            uint32_t big, small;
            split_h16_2(v, 0.f, h16_pow2(h16_exponent(r.h16_max[1])), big, small);
            __half* const hp = reinterpret_cast<__half*>(wp) + 2 * (at - ci % kH16Chunk);
            const int c = ci % kH16Chunk;
            reinterpret_cast<uint16_t*>(hp)[c] = uint16_t(big);
            reinterpret_cast<uint16_t*>(hp)[kH16Chunk + c] = uint16_t(small);
            continue;
          }
          if (r.split > 0) {
            uint32_t big, small;
            tf32_split_bits(__float_as_uint(v), big, small);
            v = __uint_as_float(big);
            wp[r.split + at] = __uint_as_float(small);
          }
        }
        wp[at] = v;
      }
    }
    __syncthreads();  // the next tile overwrites this one
  }
}

// Declared in launch.h, instantiated per mode in inst_*.cu (CONVT3D_FWD_INSTANTIATE_MODE).
template <Mode MODE>
cudaError_t launch_repack(const void* w, void* wp, const RepackArgs& r, cudaStream_t stream) {
  using T = typename ModeTraits<MODE>::T;
  if (r.rows < 1 || r.cin_pad < 1) return cudaSuccess;
  const int64_t row_tiles = (r.rows + kRepackTile - 1) / kRepackTile;
  const dim3 grid(static_cast<unsigned>((r.cin_pad + kRepackTile - 1) / kRepackTile),
                  static_cast<unsigned>(row_tiles < 65535 ? row_tiles : 65535));
  const auto* src = static_cast<const T*>(w);
  auto* dst = static_cast<T*>(wp);
  if (r.rows <= int64_t(std::numeric_limits<uint32_t>::max())) {
    repack_weight_kernel<MODE, uint32_t><<<grid, kRepackThreads, 0, stream>>>(src, dst, r);
  } else {
    repack_weight_kernel<MODE, uint64_t><<<grid, kRepackThreads, 0, stream>>>(src, dst, r);
  }
  return cudaGetLastError();
}

}  // namespace fwd
}  // namespace convt3d
