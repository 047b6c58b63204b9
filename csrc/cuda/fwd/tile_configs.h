// The one table of tile shapes for the implicit-GEMM forward. The GEMM of a stride phase is
// narrow (N = Cout/groups, often 16-64) and tall (M = output positions of the phase), so tiles are
// tall: BM output positions by BN output channels, BK = 64 bytes of input channels per stage
// (32 bf16/fp16 or 16 fp32). BN is picked from Cout/groups (pick_bn); each entry lists the warp
// grid that splits the tile. Warp tiles must be multiples of 16 x 16.
#pragma once

#include "mode.h"

namespace convt3d {
namespace fwd {

struct TileConfig {
  int bn, bm, warps_m, warps_n;
};

// Sorted by bn (pick_bn relies on it). Narrow tiles go taller so each staged A element still
// feeds enough MMAs. Every config has 8 warps and at most 4 A chunks per thread: the scalar
// loader keeps 8 loads per chunk in flight, and more than that spills at 128 registers.
inline constexpr TileConfig kTileConfigs[] = {
    // bn,  bm, warps_m, warps_n        warp tile   accumulators/thread
    {16, 256, 8, 1},                 // 32 x 16     16
    {32, 256, 8, 1},                 // 32 x 32     32
    {64, 128, 4, 2},                 // 32 x 32     32
    {128, 128, 4, 2},                // 32 x 64     64
};

constexpr TileConfig tile_config(int bn) {
  for (const auto& c : kTileConfigs) {
    if (c.bn == bn) return c;
  }
  return TileConfig{0, 0, 0, 0};
}

// 3xTF32 keeps split A and B fragments live; its 32 x 64 warp tile (BN 128) spills at 128
// registers, so it stops at BN 64 and wide layers take several N tiles.
constexpr int max_bn(Mode m) { return m == Mode::kTf32x3 ? 64 : 128; }

// Smallest configured BN covering Cout/groups; wider layers take several N tiles of max_bn.
inline int pick_bn(long long cout_g, Mode m) {
  int best = 0;
  for (const auto& c : kTileConfigs) {
    if (c.bn > max_bn(m)) continue;
    best = c.bn;
    if (cout_g <= c.bn) break;
  }
  return best;
}

constexpr int kBkBytes = 64;     // K extent of one pipeline stage, in bytes
constexpr int kChunkBytes = 16;  // one ldmatrix row / one vector load
constexpr int kChunks = kBkBytes / kChunkBytes;
constexpr int kRowBytes = kBkBytes + 16;  // +16 B pad: 8 rows of an ldmatrix hit distinct banks

}  // namespace fwd
}  // namespace convt3d
