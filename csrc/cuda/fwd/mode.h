// The arithmetic modes of the fast forward, one per kernel family.
#pragma once

namespace convt3d {
namespace fwd {

// kTf32: fp32 data, one TF32 product per term (torch.backends.cudnn.allow_tf32 = True).
// kTf32x3: fp32 data, a = big + small split, three TF32 products (strict fp32, ~1e-7 error).
enum class Mode : int { kBf16 = 0, kFp16 = 1, kTf32 = 2, kTf32x3 = 3 };

inline const char* mode_name(Mode m) {
  switch (m) {
    case Mode::kBf16: return "bf16";
    case Mode::kFp16: return "fp16";
    case Mode::kTf32: return "tf32";
    case Mode::kTf32x3: return "3xtf32";
  }
  return "?";
}

}  // namespace fwd
}  // namespace convt3d
