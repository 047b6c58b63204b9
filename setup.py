"""Builds inductor_convt3d._C from csrc/.

CPU sources are always built. CUDA sources are built when nvcc and a CUDA build of torch are
present. Environment switches:
  CONVT3D_CUDA=1 / 0      force / skip the CUDA sources (default: auto-detect)
  CONVT3D_CUDA_ARCHS      GPU architectures, TORCH_CUDA_ARCH_LIST syntax; else TORCH_CUDA_ARCH_LIST;
                          else "9.0a" (H100 / H200 with wgmma; without "9.0a" the kernels use
                          mma.sync only)
"""
import glob
import os

import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

ROOT = os.path.dirname(os.path.abspath(__file__))


def want_cuda() -> bool:
    flag = os.environ.get("CONVT3D_CUDA", "auto").lower()
    if flag in ("1", "true", "yes", "on"):
        return True
    if flag in ("0", "false", "no", "off"):
        return False
    return (torch.version.cuda is not None and CUDA_HOME is not None
            and os.path.exists(os.path.join(CUDA_HOME, "bin", "nvcc")))


def sources(pattern: str):
    return sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, pattern), recursive=True))


def pip_cuda_include_flags():
    """CUDA library headers torch needs (cusparse.h, ...) may live only in the nvidia-* pip
    packages, not in CUDA_HOME. Search them after everything else, so nvcc's own headers win."""
    import site

    dirs = []
    for root in site.getsitepackages() + [site.getusersitepackages()]:
        dirs += sorted(glob.glob(os.path.join(root, "nvidia", "*", "include")))
    return [f"-idirafter{d}" for d in dirs]


# Link the shared C++ runtime explicitly. On a toolchain whose libstdc++.so dev link is missing
# (seen on the GPU image: g++ 13), g++ falls back to static libstdc++.a; our library then carries
# its own copy of the iostream/locale code, which crashes when an error message formats a number.
LINK_ARGS = ["-l:libstdc++.so.6"]


def make_extension():
    cxx = ["-O3"]  # the C++ standard and Py_LIMITED_API come from cpp_extension
    cpu_sources = sources("csrc/*.cpp") + sources("csrc/cpu/*.cpp")
    if not want_cuda():
        return CppExtension(
            "inductor_convt3d._C", cpu_sources, extra_compile_args={"cxx": cxx},
            extra_link_args=LINK_ARGS, py_limited_api=True,
        )
    # Only the architectures asked for: compiling every default arch would blow CI's budget.
    archs = os.environ.get("CONVT3D_CUDA_ARCHS") or os.environ.get("TORCH_CUDA_ARCH_LIST") or "9.0a"
    os.environ["TORCH_CUDA_ARCH_LIST"] = archs
    extra = pip_cuda_include_flags()
    # The host picks wgmma kernels only when the binary has sm_90a code (csrc/cuda/plan.cpp: use_wgmma_arch).
    defs = ["-DCONVT3D_SM90A"] if "9.0a" in archs.replace(";", " ").split() else []
    nvcc = ["-O3", "--expt-relaxed-constexpr", "-lineinfo"] + defs + [f"-Xcompiler={f}" for f in extra]
    return CUDAExtension(
        "inductor_convt3d._C",
        cpu_sources + sources("csrc/cuda/*.cpp") + sources("csrc/cuda/**/*.cu"),
        extra_compile_args={"cxx": cxx + extra + defs, "nvcc": nvcc},
        extra_link_args=LINK_ARGS, py_limited_api=True,
    )


setup(
    ext_modules=[make_extension()],
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
    options={"bdist_wheel": {"py_limited_api": "cp39"}},
)
