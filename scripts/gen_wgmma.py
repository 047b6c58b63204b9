"""Writes csrc/cuda/fwd/wgmma_ops.cuh: one inline-asm wrapper per (type, N) of the wgmma
(m64nNk16 for bf16/fp16, m64nNk8 for TF32) that the kernels use: register-A for the halo
kernel's N = BN (kWgmmaN), both operands by descriptor for the transposed kernel's N = run
length (kTwgN) and the non-overlapping kernel's BN (kPwN). Each wgmma names all N/2
accumulator registers, so the wrappers are generated rather than typed. Run
`python scripts/gen_wgmma.py` after changing any of these lists."""
import pathlib

kWgmmaN = (16, 32, 48, 64)  # the halo BN values (tile_configs.h: kHaloTiles)
kTwgN = (128, 144, 160)  # the transposed kernel's runs (tile_configs.h: kTwgRuns)
kPwN = (64, 128, 256)  # the non-overlapping kernel's BN (tile_configs.h: kPwBns)
kSsN = sorted(set(kTwgN) | set(kPwN))
kPwX3N = (64, 128)  # 3xTF32 pw's BN, A from registers (tile_configs.h: kPwX3MaxBn)
kPwRaN = kPwN  # TF32 pw's BN: A from registers too, every BN
kH16N = (128,)  # strict fp32 as fp16 products, both by descriptor (tile_configs.h: kTwgX3Run)
kPwH16N = kPwX3N  # ... and A from registers: the pw kernel's (tile_configs.h: kPwX3MaxBn)
TYPES = {  # name -> (PTX shape suffix, PTX type, operand tail after the scale-d predicate)
    "Bf16": ("k16", "bf16", "1, 1, 0"),  # imm-scale-a, imm-scale-b, imm-trans-b (K-major B)
    "F16": ("k16", "f16", "1, 1, 0"),
    "Tf32": ("k8", "tf32", "1, 1"),  # TF32 takes no transpose operands (K-major only)
}
# Both operands from shared memory: imm-trans-a as well. 16-bit types take the transposes as
# the wrapper's template arguments TA (1: A is M-major, e.g. the pw kernel's NCDHW x) and TB
# (1: B is N-major, e.g. the pw kernel's B read straight from w); TF32 has no transpose
# operands.
SS_TAIL = {"Bf16": "1, 1, %{ta}, %{tb}", "F16": "1, 1, %{ta}, %{tb}", "Tf32": "1, 1"}


def acc_operands(n):
    """The N / 2 accumulator registers of an m64nN wgmma: their count, their asm operand list
    and their constraints."""
    nacc = n // 2
    dregs = ", ".join(f"%{i}" for i in range(nacc))
    outs = ",\n        ".join(f'"+f"(d[{j}][0]), "+f"(d[{j}][1]), "+f"(d[{j}][2]), "+f"(d[{j}][3])'
                             for j in range(n // 8))
    return nacc, dregs, outs


def wrapper(name, n):
    k, ty, tail = TYPES[name]
    a0, dregs, outs = acc_operands(n)
    return f"""
__device__ __forceinline__ void wgmma_{name.lower()}_n{n}(float (&d)[{n // 8}][4],
                                                  const uint32_t (&a)[4], uint64_t desc_b) {{
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n{n}{k}.f32.{ty}.{ty} "
      "{{{dregs}}}, {{%{a0}, %{a0 + 1}, %{a0 + 2}, %{a0 + 3}}}, %{a0 + 4}, 1, {tail};\\n"
      : {outs}
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
}}
"""


def wrapper_ss(name, n):
    k, ty, _ = TYPES[name]
    nacc, dregs, outs = acc_operands(n)
    ta = name != "Tf32"
    tail = SS_TAIL[name].replace("{ta}", str(nacc + 2)).replace("{tb}", str(nacc + 3))
    ins = '"l"(desc_a), "l"(desc_b)' + (', "n"(TA), "n"(TB)' if ta else "")
    head = "template <int TA = 0, int TB = 0>\n" if ta else ""
    return f"""
{head}__device__ __forceinline__ void wgmma_ss_{name.lower()}_n{n}(float (&d)[{n // 8}][4],
                                                     uint64_t desc_a, uint64_t desc_b) {{
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n{n}{k}.f32.{ty}.{ty} "
      "{{{dregs}}}, %{nacc}, %{nacc + 1}, 1, {tail};\\n"
      : {outs}
      : {ins});
}}
"""


def wrapper_scaled(n, a_regs):
    """TF32 with a run-time scale-d: 0 writes D = A x B without reading D (3xTF32 restarts a
    partial sum so, instead of zeroing its registers). B by descriptor; A by descriptor
    (wgmma_ss_tf32_n<N>_sd) or, `a_regs`, from registers (wgmma_tf32_n<N>_sd: mma.sync's m16n8k8
    A fragment per warp; 3xTF32 pw splits A there)."""
    nacc, dregs, outs = acc_operands(n)
    if a_regs:
        name, a_param, indent = "wgmma_tf32", "const uint32_t (&a)[4]", 50
        a_op = "{" + ", ".join(f"%{nacc + i}" for i in range(4)) + "}"
        ins = '"r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b)'
        b = nacc + 4
    else:
        name, a_param, indent = "wgmma_ss_tf32", "uint64_t desc_a", 53
        a_op, ins, b = f"%{nacc}", '"l"(desc_a), "l"(desc_b)', nacc + 1
    return f"""
__device__ __forceinline__ void {name}_n{n}_sd(float (&d)[{n // 8}][4], {a_param},
{" " * indent}uint64_t desc_b, int scale_d) {{
  asm volatile(
      "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{b + 1}, 0;\\n"
      "wgmma.mma_async.sync.aligned.m64n{n}k8.f32.tf32.tf32 "
      "{{{dregs}}}, {a_op}, %{b}, p, 1, 1;\\n}}\\n"
      : {outs}
      : {ins}, "r"(scale_d));
}}
"""


def wrapper_ss_f16_scaled(n):
    """fp16, both operands K-major by descriptor, with a run-time scale-d (wgmma_ss_f16_n<N>_sd:
    the transposed kernel's strict fp32 as fp16 products restarts its partial sum so)."""
    nacc, dregs, outs = acc_operands(n)
    return f"""
__device__ __forceinline__ void wgmma_ss_f16_n{n}_sd(float (&d)[{n // 8}][4], uint64_t desc_a,
                                                    uint64_t desc_b, int scale_d) {{
  asm volatile(
      "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{nacc + 2}, 0;\\n"
      "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16 "
      "{{{dregs}}}, %{nacc}, %{nacc + 1}, p, 1, 1, 0, 0;\\n}}\\n"
      : {outs}
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}}
"""


def wrapper_rs_f16_scaled(n):
    """fp16, A from registers (mma.sync's m16n8k16 A fragment per warp), B K-major by descriptor,
    with a run-time scale-d (wgmma_f16_n<N>_sd: the pw kernel's strict fp32 as fp16 products
    splits A in registers and restarts its partial sum so)."""
    nacc, dregs, outs = acc_operands(n)
    a_op = "{" + ", ".join(f"%{nacc + i}" for i in range(4)) + "}"
    return f"""
__device__ __forceinline__ void wgmma_f16_n{n}_sd(float (&d)[{n // 8}][4], const uint32_t (&a)[4],
                                                 uint64_t desc_b, int scale_d) {{
  asm volatile(
      "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{nacc + 5}, 0;\\n"
      "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16 "
      "{{{dregs}}}, {a_op}, %{nacc + 4}, p, 1, 1, 0;\\n}}\\n"
      : {outs}
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}}
"""


def main():
    out = [
        "// GENERATED by scripts/gen_wgmma.py; do not edit. wgmma wrappers (sm_90a):",
        "// D[64 x N] += A[64 x K] x B[K x N]. wgmma_<type>_n<N>: A from registers (mma.sync's m16",
        "// A fragment per warp), B by descriptor; wgmma_ss_<type>_n<N>: both by descriptor;",
        "// wgmma_ss_tf32_n<N>_sd, wgmma_tf32_n<N>_sd, wgmma_ss_f16_n<N>_sd and wgmma_f16_n<N>_sd:",
        "// with a run-time scale-d (0: D = A x B).",
        "// d[j] are the n8 block j accumulators, laid out like mma.sync's m16n8 C fragment. The",
        "// caller fences, commits and waits (wgmma.cuh).",
        "#pragma once",
        "",
        "#include <cstdint>",
        "",
        "namespace convt3d {",
        "namespace fwd {",
        "",
        "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)",
    ]
    for name in TYPES:
        for n in kWgmmaN:
            out.append(wrapper(name, n).rstrip("\n"))
    for name in TYPES:
        for n in kSsN:
            out.append(wrapper_ss(name, n).rstrip("\n"))
    for n in kSsN:
        out.append(wrapper_scaled(n, False).rstrip("\n"))
    for n in sorted(set(kPwX3N) | set(kPwRaN)):
        out.append(wrapper_scaled(n, True).rstrip("\n"))
    for n in kH16N:
        out.append(wrapper_ss_f16_scaled(n).rstrip("\n"))
    for n in kPwH16N:
        out.append(wrapper_rs_f16_scaled(n).rstrip("\n"))
    out += ["", "#endif  // __CUDA_ARCH_FEAT_SM90_ALL", "", "}  // namespace fwd",
            "}  // namespace convt3d", ""]
    path = pathlib.Path(__file__).resolve().parents[1] / "csrc/cuda/fwd/wgmma_ops.cuh"
    path.write_text("\n".join(out))
    print("wrote", path)


if __name__ == "__main__":
    main()
