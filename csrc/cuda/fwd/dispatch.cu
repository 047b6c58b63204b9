// Static switches: runtime (mode, BN, loader) -> template instantiation. Links against the
// launchers instantiated in inst_*.cu; no kernel is compiled here.
#include "dispatch.h"
#include "launch.h"

namespace convt3d {
namespace fwd {
namespace {

template <Mode MODE, bool KVEC>
cudaError_t by_bn(int bn, const FwdArgs& a, int64_t blocks, cudaStream_t s) {
#define CONVT3D_FWD_CASE(M, BN) \
  case BN:                      \
    return launch_igemm<M, BN, KVEC>(a, blocks, s);
  switch (bn) { CONVT3D_FWD_FOR_EACH_BN(CONVT3D_FWD_CASE, MODE) }
#undef CONVT3D_FWD_CASE
  return cudaErrorInvalidValue;
}

template <Mode MODE>
cudaError_t by_loader(int bn, bool kvec, const FwdArgs& a, int64_t blocks, cudaStream_t s) {
  return kvec ? by_bn<MODE, true>(bn, a, blocks, s) : by_bn<MODE, false>(bn, a, blocks, s);
}

template <Mode MODE, bool KVEC>
cudaError_t halo_by_bn(int bn, const FwdArgs& a, int64_t blocks, cudaStream_t s) {
#define CONVT3D_FWD_CASE(M, BN) \
  case BN:                      \
    return launch_halo<M, BN, KVEC>(a, blocks, s);
  switch (bn) { CONVT3D_FWD_FOR_EACH_HALO_BN(CONVT3D_FWD_CASE, MODE) }
#undef CONVT3D_FWD_CASE
  return cudaErrorInvalidValue;
}

template <Mode MODE>
cudaError_t halo_by_loader(int bn, bool kvec, const FwdArgs& a, int64_t blocks, cudaStream_t s) {
  return kvec ? halo_by_bn<MODE, true>(bn, a, blocks, s) : halo_by_bn<MODE, false>(bn, a, blocks, s);
}

template <Mode MODE, bool KVEC>
cudaError_t twg_by_nr(int nr, const FwdArgs& a, int64_t blocks, cudaStream_t s) {
#define CONVT3D_FWD_CASE(M, NR) \
  case NR:                      \
    return launch_twg<M, NR, KVEC>(a, blocks, s);
  switch (nr) { CONVT3D_FWD_FOR_EACH_TWG_NR(CONVT3D_FWD_CASE, MODE) }
#undef CONVT3D_FWD_CASE
  return cudaErrorInvalidValue;
}

template <Mode MODE>
cudaError_t twg_by_loader(int nr, bool kvec, const FwdArgs& a, int64_t blocks, cudaStream_t s) {
  return kvec ? twg_by_nr<MODE, true>(nr, a, blocks, s) : twg_by_nr<MODE, false>(nr, a, blocks, s);
}

template <Mode MODE>
cudaError_t pw_by_bn(int bn, const FwdArgs& a, int64_t blocks, cudaStream_t s) {
#define CONVT3D_FWD_CASE(M, BN) \
  case BN:                      \
    return launch_pw<M, BN>(a, blocks, s);
  switch (bn) { CONVT3D_FWD_FOR_EACH_PW_BN(CONVT3D_FWD_CASE, MODE) }
#undef CONVT3D_FWD_CASE
  return cudaErrorInvalidValue;
}

template <Mode MODE>
cudaError_t gsc_by_size(const GscArgs& a, bool cl, cudaStream_t stream) {
#define CONVT3D_FWD_CASE(KD, KH, KW)                                            \
  if (a.k[0] == KD && a.k[1] == KH && a.k[2] == KW) {                          \
    if constexpr (MODE != Mode::kTf32) {                                       \
      if (cl && a.g2) return launch_gsc<MODE, KD, KH, KW, true, true>(a, stream); \
    }                                                                          \
    return cl ? launch_gsc<MODE, KD, KH, KW, true, false>(a, stream)            \
              : launch_gsc<MODE, KD, KH, KW, false, false>(a, stream);          \
  }
  CONVT3D_FWD_FOR_EACH_GSC_K(CONVT3D_FWD_CASE)
#undef CONVT3D_FWD_CASE
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t pw_forward(Mode mode, int bn, const FwdArgs& a, int64_t blocks, cudaStream_t stream) {
  switch (mode) {
    case Mode::kBf16: return pw_by_bn<Mode::kBf16>(bn, a, blocks, stream);
    case Mode::kFp16: return pw_by_bn<Mode::kFp16>(bn, a, blocks, stream);
    case Mode::kTf32: return pw_by_bn<Mode::kTf32>(bn, a, blocks, stream);
    case Mode::kTf32x3:  // BN up to kPwX3MaxBn (inst_pw_3xtf32.cu; fp16 products inst_pw_h16.cu)
      if (a.h16) {
        if (bn == 64) return launch_pw_h16<64>(a, blocks, stream);
        if (bn == 128) return launch_pw_h16<128>(a, blocks, stream);
        return cudaErrorInvalidValue;
      }
      if (bn == 64) return launch_pw<Mode::kTf32x3, 64>(a, blocks, stream);
      if (bn == 128) return launch_pw<Mode::kTf32x3, 128>(a, blocks, stream);
      return cudaErrorInvalidValue;
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t twg_forward(Mode mode, int nr, bool kvec, const FwdArgs& a, int64_t blocks,
                        cudaStream_t stream) {
  switch (mode) {
    case Mode::kBf16: return twg_by_loader<Mode::kBf16>(nr, kvec, a, blocks, stream);
    case Mode::kFp16: return twg_by_loader<Mode::kFp16>(nr, kvec, a, blocks, stream);
    case Mode::kTf32: return twg_by_loader<Mode::kTf32>(nr, kvec, a, blocks, stream);
    case Mode::kTf32x3:
      if (a.h16) {  // fp16 products: one run length (inst_twg_h16.cu)
        if (nr != kTwgX3Run) return cudaErrorInvalidValue;
        return kvec ? launch_twg_h16<kTwgX3Run, true>(a, blocks, stream)
                    : launch_twg_h16<kTwgX3Run, false>(a, blocks, stream);
      }
      return twg_by_loader<Mode::kTf32x3>(nr, kvec, a, blocks, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t halo_forward(Mode mode, int bn, bool kvec, const FwdArgs& a, int64_t blocks,
                         cudaStream_t stream) {
  switch (mode) {
    case Mode::kBf16: return halo_by_loader<Mode::kBf16>(bn, kvec, a, blocks, stream);
    case Mode::kFp16: return halo_by_loader<Mode::kFp16>(bn, kvec, a, blocks, stream);
    case Mode::kTf32: return halo_by_loader<Mode::kTf32>(bn, kvec, a, blocks, stream);
    case Mode::kTf32x3: return halo_by_loader<Mode::kTf32x3>(bn, kvec, a, blocks, stream);
  }
  return cudaErrorInvalidValue;
}

bool igemm_supported(Mode mode, int bn) {
  if (bn > max_bn(mode)) return false;  // only a stub is instantiated
#define CONVT3D_FWD_CASE(M, BN) \
  if (bn == BN) return true;
  CONVT3D_FWD_FOR_EACH_BN(CONVT3D_FWD_CASE, _)
#undef CONVT3D_FWD_CASE
  return false;
}

cudaError_t igemm_forward(Mode mode, int bn, bool kvec, const FwdArgs& a, int64_t blocks,
                          cudaStream_t stream) {
  switch (mode) {
    case Mode::kBf16: return by_loader<Mode::kBf16>(bn, kvec, a, blocks, stream);
    case Mode::kFp16: return by_loader<Mode::kFp16>(bn, kvec, a, blocks, stream);
    case Mode::kTf32: return by_loader<Mode::kTf32>(bn, kvec, a, blocks, stream);
    case Mode::kTf32x3: return by_loader<Mode::kTf32x3>(bn, kvec, a, blocks, stream);
  }
  return cudaErrorInvalidValue;
}

bool gsc_supported(const int (&k)[3]) {
#define CONVT3D_FWD_CASE(KD, KH, KW) \
  if (k[0] == KD && k[1] == KH && k[2] == KW) return true;
  CONVT3D_FWD_FOR_EACH_GSC_K(CONVT3D_FWD_CASE)
#undef CONVT3D_FWD_CASE
  return false;
}

cudaError_t gsc_forward(Mode mode, const GscArgs& a, bool cl, cudaStream_t stream) {
  switch (mode) {
    case Mode::kTf32: return gsc_by_size<Mode::kTf32>(a, cl, stream);
    case Mode::kBf16: return gsc_by_size<Mode::kBf16>(a, cl, stream);
    case Mode::kFp16: return gsc_by_size<Mode::kFp16>(a, cl, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t repack_weight(Mode mode, const void* w, void* wp, const RepackArgs& r,
                          cudaStream_t stream) {
  switch (mode) {
#define CONVT3D_FWD_REPACK(M) \
  case M:                     \
    return launch_repack<M>(w, wp, r, stream);
    CONVT3D_FWD_REPACK(Mode::kBf16)
    CONVT3D_FWD_REPACK(Mode::kFp16)
    CONVT3D_FWD_REPACK(Mode::kTf32)
    CONVT3D_FWD_REPACK(Mode::kTf32x3)
#undef CONVT3D_FWD_REPACK
  }
  return cudaErrorInvalidValue;
}

}  // namespace fwd
}  // namespace convt3d
