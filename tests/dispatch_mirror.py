"""Python mirror of the CUDA forward's dispatch (csrc/cuda/plan*.cpp: densify, plan_halo,
plan_fused, pick_bn): the kernel name `convt3d::_forward_path` should return for a layer, so the
tests assert every dispatch decision. Keep it in step with the C++ rules and tables
(tile_configs.h: kHaloBoxes, halo_smem_bytes)."""
import math
import os


def axis_taps(size, k, s, p, op, d):
    """Per phase r of one axis: (number of outputs, number of taps, q-space span - 1, input
    offset c0 of the first tap)."""
    out = (size - 1) * s - 2 * p + d * (k - 1) + op + 1
    res = []
    for r in range(s):
        taps = [t for t in range(k) if (r + p - t * d) % s == 0]
        q = (out - r + s - 1) // s if r < out else 0
        step = d // math.gcd(s, d)
        c0 = (r + p - taps[0] * d) // s if taps else 0
        res.append((q, len(taps), (len(taps) - 1) * step if taps else 0, c0))
    return res


def max_span(spec, i):
    """max_span (plan_twg.cpp): the largest box span of any phase along axis i (0 when no
    phase has taps)."""
    _, _, _, size, k, s, p, op, d, _, _ = spec
    return max(a[2] for a in axis_taps(size[i], k[i], s[i], p[i], op[i], d[i]))


HALO_BOXES = {256: [(2, 8, 16), (1, 16, 16), (4, 4, 16), (1, 8, 32), (2, 4, 32), (4, 8, 8),
                    (2, 16, 8), (1, 32, 8)],
              128: [(2, 4, 16), (1, 8, 16), (4, 2, 16), (1, 4, 32), (2, 8, 8), (4, 4, 8),
                    (1, 16, 8)]}


def bk_elems(mode):
    return 32 if mode in ("bf16", "fp16") else 16


def dense_groups(spec, mode):
    """Mirror of densify (plan.cpp): groups > 1 with Cin, Cout <= 64 run as one
    block-diagonal dense layer when that pads to no more MMA work (Cin to 64-byte chunks, Cout
    to 16)."""
    _, cin, cout, _, _, _, _, _, _, g, _ = spec
    if os.environ.get("CONVT3D_DENSE") == "0" or g == 1 or cin > 64 or cout > 64:
        return False
    up = lambda v, m: -(-v // m) * m  # noqa: E731
    bke = bk_elems(mode)
    return up(cin, bke) * up(cout, 16) <= g * up(cin // g, bke) * up(cout // g, 16)


def dense_skip(mode, kind, bn):
    """Mirror of plan_forward's zero-block rule for a densified layer on the per-phase (mma.sync,
    kind "halo") or fused halo kernel ("_skip"): strict fp32, and the per-phase kernel at BN 32
    (kDenseSkipTile); CONVT3D_DENSE_SKIP=1 every mode, 0 none."""
    env = os.environ.get("CONVT3D_DENSE_SKIP")
    pays = mode == "3xtf32" or (kind == "halo" and bn == 32)
    return env == "1" or (env != "0" and pays)


ROW_BYTES = 80  # tile_configs.h: kRowBytes (64 B of K and 16 B of padding)


def halo_stage_bytes(bn):
    """halo_stage_bytes (tile_configs.h): halo_tap_bufs taps of B, any stage split."""
    return (16 if bn <= 32 else 8) * bn * ROW_BYTES


def halo_smem(bn, pos, tap_cap, deep_chunks, mode, bm=256, pair=False, phases=1):
    """halo_smem_bytes (tile_configs.h)."""
    stages = halo_stage_bytes(bn)
    if deep_chunks:
        tn = 32 if bn == 64 else bn  # warp tile width: BN 64 has two warp columns
        epi = 8 * 4 * 8 * (tn // 2 + 4) if mode in ("bf16", "fp16") else 0  # per-warp buffers
        if pair:
            epi = 8 * 4 * 8 * 36  # kPairBufWords per warp, every type
        table = 4 * (-(-phases // 4) * 4)  # fused_phase_table_bytes
        return 12 * bm + epi + 8 * tap_cap + table + stages + pos * deep_chunks * ROW_BYTES
    return 8 * bm + 8 * tap_cap + max(stages + pos * ROW_BYTES, 4 * bm * (bn + 1))


HALO_MIN_TAPS = 8  # plan.h: kHaloMinTaps
HALO_SMEM_CAP = 200 * 1024  # tile_configs.h: kHaloSmemCap
TWO_PER_SM = 233472 // 2 - 1024  # smem_two_per_sm (plan.cpp) on an H100/H200


def fused_box_ext(axes):
    """Per axis, the halo the fused box adds to its q extent: the span of every phase's taps
    (plan_fused's ulo/uext)."""
    ext = []
    for ax in axes:
        spans = [(c0 - span, c0) for _, nt, span, c0 in ax if nt > 0]
        ext.append(max(h for _, h in spans) - min(lo for lo, _ in spans))
    return ext


def fused_box_smem(spec, bn, mode, pair):
    """The shared memory of the box plan_fused picks (pick_box, plan_halo.cpp): the cheapest by
    its cost among the boxes that leave room for two CTAs per SM, else among those up to 200
    KB (the first in kHaloBoxes order on a tie); None when none fits."""
    n, cin, _, size, k, s, p, op, d, g, _ = spec
    axes = [axis_taps(size[i], k[i], s[i], p[i], op[i], d[i]) for i in range(3)]
    ext = fused_box_ext(axes)
    bm = 128 if pair else 256
    kvol, phases = math.prod(k), math.prod(s)
    tap_cap = -(-kvol // 4) * 4
    chunks = -(-(cin // g) // bk_elems(mode))
    for lim in (min(HALO_SMEM_CAP, TWO_PER_SM), HALO_SMEM_CAP):
        best = None
        for box in HALO_BOXES[bm]:
            pos = math.prod(box[i] + ext[i] for i in range(3))
            smem = halo_smem(bn, pos, tap_cap, chunks, mode, bm, pair, phases)
            tiles0 = n * math.prod(-(-axes[i][0][0] // box[i]) for i in range(3))
            narrow = 2 if pair and box[2] < 32 else 1
            cost = narrow * tiles0 * (chunks * (bm * kvol + 4 * pos) + phases * bm)
            if smem <= lim and tiles0 >= 1 and (best is None or cost < best[0]):
                best = (cost, smem)
        if best is not None:
            return best[1]
    return None


def fused_res(spec, bn, mode, pair):
    """Mirror of plan_fused's resident weights (plan_halo.cpp; spec after densifying): "_res"
    (persistent CTAs) or "_res1" (one box per CTA), else "". Legal at BN 32 with one N tile
    and one group, not strict fp32, when every tap's weights (in place of the stages) fit 200
    KB; the rule takes 16-bit layers without w-phase pairs where two CTAs still fit per SM.
    CONVT3D_FUSED_RES=1 / 2 wherever legal, 0 never."""
    _, cin, cout, _, k, _, _, _, _, g, _ = spec
    env = os.environ.get("CONVT3D_FUSED_RES")
    if env == "0" or bn != 32 or g != 1 or cout > 32 or mode == "3xtf32":
        return ""
    box = fused_box_smem(spec, bn, mode, pair)
    if box is None:
        return ""
    chunks = -(-cin // bk_elems(mode))
    smem = box - halo_stage_bytes(bn) + chunks * math.prod(k) * bn * ROW_BYTES
    if env in ("1", "2"):
        return ("_res" if env == "1" else "_res1") if smem <= HALO_SMEM_CAP else ""
    return "_res" if mode in ("bf16", "fp16") and not pair and smem <= TWO_PER_SM else ""


def phase_taps(spec):
    """Mirror of tap_stats (plan.cpp): the taps of each stride phase that has taps and
    outputs."""
    _, _, _, size, k, s, p, op, d, _, _ = spec
    axes = [axis_taps(size[i], k[i], s[i], p[i], op[i], d[i]) for i in range(3)]
    return [a[1] * b[1] * c[1] for a in axes[0] for b in axes[1] for c in axes[2]
            if a[0] * b[0] * c[0] > 0 and a[1] * b[1] * c[1] > 0]


def halo_kind(spec, bn, mode, kvec, y_ncdhw=False):
    """Mirror of plan_halo (plan_halo.cpp): "fused", "halo" or None (v1). CONVT3D_HALO unset:
    the fused kernel (all phases per CTA) for strided layers without dilation (16-bit with
    kvec: dilation too), except strict fp32 with Cout/groups > 32, when its box of all channel
    chunks fits 200 KB and it pays: 16-bit with the channel-fast loader (kvec) or >= 256
    products per output (Cin/g x taps / phases) and < 8 taps per phase, fp32 with kvec, at
    most two channel chunks and < 8 taps per phase; else the per-phase halo kernel when the non-empty phases have on
    average >= 8 taps (TF32 with kvec and > 2 chunks: >= 2), every dilation is 1, strict fp32
    has Cout/groups <= 32, and a box fits. CONVT3D_HALO=1 keeps only the per-phase fit; =2
    tries fused first wherever it fits; =0 is v1. "fused_pair" (BN 32, BM 128): the fused kernel with
    w-phase pairs, for a NCDHW y (y_ncdhw), w stride 2, the scalar loader and not strict fp32;
    auto mode takes it (TF32, bf16, fp16) with < 8 taps per phase, at most two chunks, no
    dilation and Cout/groups <= 32; CONVT3D_FUSED_PAIR=1 pairs wherever fused runs, =0 never."""
    _, cin, cout, size, k, s, p, op, d, g, _ = spec
    env = os.environ.get("CONVT3D_HALO")
    if env == "0":
        return None
    axes = [axis_taps(size[i], k[i], s[i], p[i], op[i], d[i]) for i in range(3)]
    taps = phase_taps(spec)
    if not taps:
        return None
    auto = env not in ("1", "2")
    dilated = any(v != 1 for v in d)
    wide_3x = mode == "3xtf32" and cout // g > 32
    few_taps = sum(taps) < HALO_MIN_TAPS * len(taps)
    chunks = -(-(cin // g) // bk_elems(mode))
    if mode in ("bf16", "fp16"):
        fused_pays = kvec or ((cin // g) * math.prod(k) // math.prod(s) >= 256 and few_taps)
    else:
        fused_pays = kvec and chunks <= 2 and few_taps
    dilation_ok = not dilated or (mode in ("bf16", "fp16") and kvec)
    tap_cap = -(-max(a[1] * b[1] * c[1] for a in axes[0] for b in axes[1] for c in axes[2])
                // 4) * 4
    pair_env = os.environ.get("CONVT3D_FUSED_PAIR")
    pair_ok = pair_env != "0" and mode != "3xtf32" and not kvec and y_ncdhw and s[2] == 2
    pair_rule = (auto and pair_ok and few_taps and chunks <= 2 and not dilated
                 and cout // g <= 32)
    if (env == "2" or (auto and math.prod(s) > 1 and dilation_ok and not wide_3x and fused_pays)
            or pair_rule):
        pair = pair_ok and (pair_rule or pair_env == "1")
        bm = 128 if pair else 256  # kFusedPairTile: BN 32, BM 128
        if pair:
            bn = 32
        ext = fused_box_ext(axes)
        kvol_cap = -(-math.prod(k) // 4) * 4  # the fused tap table holds every phase's taps
        packs = kvol_cap < 1 << 15  # kFusedMaxTaps
        for box in HALO_BOXES[bm] if packs else []:
            pos = math.prod(box[i] + ext[i] for i in range(3))
            if halo_smem(bn, pos, kvol_cap, chunks, mode, bm, pair, math.prod(s)) <= HALO_SMEM_CAP:
                return "fused_pair" if pair else "fused"
    tf32_deep = mode == "tf32" and kvec and chunks > 2 and sum(taps) >= 2 * len(taps)
    if auto and ((few_taps and not tf32_deep) or dilated or wide_3x):
        return None
    for box in HALO_BOXES[256]:  # bm of every kHaloTiles row
        pos = max((box[0] + a[2]) * (box[1] + b[2]) * (box[2] + c[2])
                  for a in axes[0] for b in axes[1] for c in axes[2])
        if halo_smem(bn, pos, tap_cap, 0, mode) <= HALO_SMEM_CAP:
            return "halo"
    return None


def wgmma_expected(device, mode):
    """Mirror of use_wgmma (plan.cpp): with CONVT3D_WGMMA=1 on a compute capability 9.0
    device the per-phase halo kernel runs its wgmma variant, in every mode but strict fp32;
    never otherwise. That assumes this build has sm_90a code, as the default CONVT3D_CUDA_ARCHS
    does (setup.py)."""
    import torch

    return (device.type == "cuda" and mode != "3xtf32" and os.environ.get("CONVT3D_WGMMA") == "1"
            and torch.cuda.get_device_capability(device) == (9, 0))


TWG_RUNS = (128, 144, 160)  # tile_configs.h: kTwgRuns
TWG_X3_RUN = 128  # tile_configs.h: kTwgX3Run (3xTF32: two slices, one CTA per SM)


TWG_SMEM_CAP = {  # H100 (twg runs on 9.0 only): four slices may take the opt-in shared memory;
    4: 232448,    # two slices leave room for two CTAs per SM (half the SM's, less 1 KB each)
    2: TWO_PER_SM,
}


TWG_TILE_PAD = 4  # tile_configs.h: kTwgTilePad


def twg_smem(nr, bm, pos_pad, tap_cap, box_bufs=1, slices=4, stack=1, split=1, wstack=False,
             long_stage=False, stage_bytes=0, tight=False, h16=False):
    """twg_smem_bytes (tile_configs.h): ten mbarriers and the row and tap tables, then (at the
    next 512-byte boundary: the swizzle's period) 3 stages (twg_stages: 2 for 3xTF32) of
    2 x slices taps (4 x slices with long_stage) x 4 KB of weights and the boxes of pos_pad
    rows (twg_box_rows; both twice with split 2: 3xTF32's big and small copies), or the
    epilogue tile of bm rows of 64 / stack + 4 fp32 if larger (one per block when the blocks
    are w taps); a staged box's staging buffer (stage_bytes) follows the boxes. tight: the row
    table holds bm rows (3xTF32's depth-stacked scalar-loader kernel), not slices x planes x
    nr. h16: 3xTF32 as fp16 products, one copy (split 1) with 3xTF32's two stages."""
    planes = 1 if wstack else stack
    rows = bm if tight else slices * planes * nr
    head = -(-(8 * 10 + 8 * rows + 4 * tap_cap) // 128) * 128  # twg_head_bytes
    stages = 2 if split == 2 or h16 else 3
    taps = (4 if long_stage else 2) * slices  # twg_taps_per_stage
    main = split * (stages * taps * 4096 + box_bufs * 4 * pos_pad * 16) + stage_bytes
    return head + 512 + max(main, 4 * bm * (stack if wstack else 1) * (64 // stack + TWG_TILE_PAD))


TWG_TWO_SLICE_K = 96  # plan_twg.cpp: kTwgTwoSliceK


def twg_shifts(a, b, c, stack=1, ws=False):
    """twg_shifts (plan_twg.cpp): one phase's box shifts (its taps; nd + J - 1 along depth
    with J stacked planes, ceil(nw / J) along w with J stacked w taps); a, b, c: its axis_taps
    entries."""
    if not a[1]:
        return 0
    if ws:
        return a[1] * b[1] * -(-c[1] // stack)
    return (a[1] + stack - 1) * b[1] * c[1]


def twg_slices_rule(spec, chunks, stack=1, ws=False):
    """plan_twg's rule: two slices where channel chunks x box shifts per non-empty phase <= 96
    (taps when unstacked); the caller checks the tile of two slices."""
    _, _, _, size, k, s, p, op, d, _, _ = spec
    axes = [axis_taps(size[i], k[i], s[i], p[i], op[i], d[i]) for i in range(3)]
    shifts = [twg_shifts(a, b, c, stack, ws) for a in axes[0] for b in axes[1] for c in axes[2]
              if a[0] * b[0] * c[0] > 0 and a[1] * b[1] * c[1] > 0]
    return bool(shifts) and chunks * sum(shifts) / len(shifts) <= TWG_TWO_SLICE_K


def twg_stack_ok(spec, stack):
    """twg_stack_ok (plan_twg.cpp): J stacked depth planes need Cout/g <= 64 / J and, for
    J > 1, every phase's depth taps the kernel's (stride | dilation: one TMA box per shift) and
    unit depth tap steps or at most one depth tap per phase."""
    _, _, cout, size, k, s, p, op, d, g, _ = spec
    if cout // g > 64 // stack:
        return False
    if stack > 1 and s[0] // math.gcd(s[0], d[0]) != 1:
        return False
    return stack == 1 or d[0] // math.gcd(s[0], d[0]) == 1 or all(
        nt <= 1 for _, nt, _, _ in axis_taps(size[0], k[0], s[0], p[0], op[0], d[0]))


def twg_wstack_ok(spec, stack):
    """twg_wstack_ok (plan_twg.cpp): J stacked w taps need J >= 2, Cout/g <= 64 / J, every
    phase's w taps the kernel's (stride | dilation: one TMA box per shift) and some phase with
    at least J w taps."""
    _, _, cout, size, k, s, p, op, d, g, _ = spec
    return stack >= 2 and cout // g <= 64 // stack and s[2] // math.gcd(s[2], d[2]) == 1 and any(
        nt >= stack for _, nt, _, _ in axis_taps(size[2], k[2], s[2], p[2], op[2], d[2]))


TWG_NCDHW_LINE_COST = 64  # plan_twg.cpp: kTwgNcdhwLineCost


def is_dense(x):
    """c10's is_non_overlapping_and_dense: x's elements fill its storage span exactly (any
    order of the dimensions)."""
    expected = 1
    for stride, size in sorted((x.stride(i), x.size(i)) for i in range(x.dim()) if x.size(i) != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def twg_h16(x, mode):
    """twg_h16_ok (plan_twg.cpp): strict fp32 runs the transposed kernel as fp16 products
    (name "_h16") where x is fp32 and dense; CONVT3D_TWG_H16=0 never. x None: a dense x."""
    if mode != "3xtf32" or os.environ.get("CONVT3D_TWG_H16") == "0":
        return False
    return x is None or (x.dtype.is_floating_point and x.element_size() == 4 and is_dense(x))


def twg_run(spec, mode, kvec=True, y_ncdhw=False, h16=None):
    """Mirror of plan_twg's choice (plan_twg.cpp): (the run length NR with the fewest
    estimated cycles, whether the box streams through two buffers, the slices per CTA, the
    slice's bqh and bqw, the stacked blocks J, whether they are w taps), or None when no box
    fits. With a NCDHW y (y_ncdhw) each output line costs TWG_NCDHW_LINE_COST more. Stacks
    are those of twg_stack_ok (depth planes), then those of twg_wstack_ok (w taps) with more
    blocks than the most depth planes that fit (CONVT3D_TWG_STACK fixes J where legal,
    CONVT3D_TWG_WSTACK=1/0 only w taps / only depth planes). It streams with more than
    one channel chunk when the second buffer fits, with the channel-fast loader (kvec: TMA or
    cp.async), in 3xTF32 or in TF32, not with the 16-bit scalar loader; CONVT3D_BOX_STREAM=1
    streams any box that fits, =0 none.
    CONVT3D_TWG_SLICES=2/4 fixes the slices, else twg_slices_rule; CONVT3D_TWG_BQW=n the tile
    width (None where no such tile fits). 3xTF32 takes TWG_X3_RUN and
    two slices at one CTA per SM (the opt-in shared memory), with split operands, and unstacked
    the long weight stages (8th item; CONVT3D_TWG_LONG=0 never) where that tile with its box
    buffers still fits; as fp16 products (h16: twg_h16 of x, None: of a dense x) one copy of
    each operand. Without CONVT3D_TWG, Cout/g <= 16 takes w stacks only (expected_path), so
    depth stacks there neither compete nor keep w stacks out."""
    _, cin, cout, size, k, s, p, op, d, g, _ = spec
    axes = [axis_taps(size[i], k[i], s[i], p[i], op[i], d[i]) for i in range(3)]
    chunks = -(-(cin // g) // bk_elems(mode))
    ext_d, ext_h, ext_w = (max_span(spec, i) for i in range(3))
    cstep_d = d[0] // math.gcd(s[0], d[0])
    qh0, qw0 = axes[1][0][0], axes[2][0][0]
    fixed = os.environ.get("CONVT3D_TWG_STACK")
    wenv = os.environ.get("CONVT3D_TWG_WSTACK")
    benv = os.environ.get("CONVT3D_TWG_BQW", "")
    fixed_w = int(benv) if benv.isdigit() and 1 <= int(benv) <= 256 else 0
    stacks = [(j, ws) for ws in (False, True) if wenv != ("0" if ws else "1")
              for j in (1, 2, 4) if (fixed not in ("1", "2", "4") or fixed == str(j))
              and (twg_wstack_ok(spec, j) if ws else twg_stack_ok(spec, j))]

    x3 = mode == "3xtf32"
    if h16 is None:  # a dense x
        h16 = twg_h16(None, mode)
    split = 2 if x3 and not h16 else 1
    runs = (TWG_X3_RUN,) if x3 else TWG_RUNS
    # y's channel stride is not 1: NCDHW with more than one output position
    line_cost = TWG_NCDHW_LINE_COST if y_ncdhw and math.prod(
        sum(r[0] for r in a) for a in axes) > 1 else 0

    # the automatic choice takes Cout/g <= 16 with w taps only (expected_path): depth stacks
    # neither compete nor keep w stacks out
    depth_rejected = os.environ.get("CONVT3D_TWG") not in ("0", "1") and cout // g <= 16

    def search(sl):
        cap = TWG_SMEM_CAP[4 if x3 else sl]
        best = None
        depth_fit = 0
        for stack, ws in stacks or [(1, False)]:
            if ws and stack <= depth_fit:
                continue
            planes = 1 if ws else stack
            dd = sl * planes

            def shifts(a, b, c):
                return twg_shifts(a, b, c, stack, ws)

            entries = max(shifts(a, b, c) * stack
                          for a in axes[0] for b in axes[1] for c in axes[2])
            tap_cap = -(-entries // 4) * 4
            for nr in runs:
                last_w = -1
                for kk in range(1, 17):
                    bqw = min(-(-qw0 // kk), nr - ext_w)
                    if bqw < 1 or bqw == last_w:
                        continue
                    last_w = bqw
                    if fixed_w and bqw != fixed_w:
                        continue
                    bqh = min(nr // (bqw + ext_w), qh0)
                    if bqh < 1:
                        continue
                    cost, max_pos = 0.0, 0
                    for a in axes[0]:
                        for b in axes[1]:
                            for c in axes[2]:
                                pos = (dd + a[2]) * (bqh + b[2]) * (bqw + c[2])
                                max_pos = max(max_pos, pos)
                                tiles = (spec[0] * -(-a[0] // dd) * -(-b[0] // bqh)
                                         * -(-c[0] // bqw))
                                t = shifts(a, b, c)
                                cost += tiles * ((chunks * (sl * nr * t + pos) if t else 0)
                                                 + planes * bqh * bqw + line_cost * planes * bqh)
                    # twg_box_rows: the last slice's run from the first tap, bounded by the
                    # largest span per axis
                    hh, hw = bqh + ext_h, bqw + ext_w
                    reach = ((dd - planes + (planes - 1) * cstep_d + ext_d) * hh * hw
                             + ext_h * hw + ext_w + nr)
                    pos_pad = -(-max(max_pos, reach) // 8) * 8
                    bm = dd * bqh * bqw
                    tight = x3 and not h16 and not kvec and stack > 1 and not ws
                    if twg_smem(nr, bm, pos_pad, tap_cap, 1, sl, stack, split, ws, False, 0,
                                tight, h16) > cap:
                        continue
                    if not ws and not depth_rejected:
                        depth_fit = max(depth_fit, stack)
                    if not ws and depth_rejected:
                        continue
                    if best is None or cost < best[0]:
                        best = (cost, nr, bqh, bqw,
                                twg_smem(nr, bm, pos_pad, tap_cap, 2, sl, stack, split, ws,
                                         False, 0, tight, h16) <= cap, stack, ws,
                                (bm, pos_pad, tap_cap))
        return best

    env = "2" if x3 else os.environ.get("CONVT3D_TWG_SLICES")
    sl = int(env) if env in ("2", "4") else 4
    best = search(sl)
    if env not in ("2", "4") and best is not None and twg_slices_rule(spec, chunks, *best[5:7]):
        # the same tile; with stacked w taps any tile of the same stack
        two = search(2)
        if two is not None and two[5:7] == best[5:7] and (best[6] or two[1:4] == best[1:4]):
            best, sl = two, 2
    if best is None:
        return None
    env_stream = os.environ.get("CONVT3D_BOX_STREAM")
    stream_ok = env_stream == "1" or (env_stream != "0" and (kvec or x3 or mode == "tf32"))
    stream = best[4] and chunks > 1 and stream_ok
    bm, pos_pad, tap_cap = best[7]
    long_ok = x3 and best[5] == 1 and os.environ.get("CONVT3D_TWG_LONG") != "0"
    long_stage = long_ok and twg_smem(best[1], bm, pos_pad, tap_cap, 2 if stream else 1,
                                      sl, 1, split, False, True, 0, False,
                                      h16) <= TWG_SMEM_CAP[4]
    return best[1], stream, sl, best[2], best[3], best[5], best[6], long_stage, best[7]


def twg_stage(x, spec, mode, kvec, run):
    """The staged box of plan_twg (plan_twg.cpp: twg_stage_ok, twg_stage_bytes): 3xTF32 with
    the scalar loader (kvec False), x's w stride 1, its other strides and its data pointer
    multiples of 16 bytes (CONVT3D_TWG_STAGE=0 never), and every box extent at most 256 (the
    box spans the largest span per axis; its w lines are rounded up to 16 bytes plus 3
    columns). "stage": a streamed unstacked box whose staging buffer (16 channels) fits beside
    the plan's shared memory; "pieces": a box reloaded per chunk with stacked depth planes
    whose two piece buffers (4 channels each) fit; else None. run: twg_run's tuple."""
    if mode != "3xtf32" or kvec or twg_h16(x, mode):
        return None
    if os.environ.get("CONVT3D_TWG_STAGE") == "0" or x.stride(4) != 1 or x.data_ptr() % 16:
        return None
    if any(x.stride(i) * 4 % 16 for i in range(4)):
        return None
    nr, stream, sl, bqh, bqw, stack, ws = run[:7]
    if stream and stack == 1:
        kind, channels, bufs, planes = "stage", 16, 1, 1
    elif not stream and stack > 1 and not ws:
        kind, channels, bufs, planes = "pieces", 4, 2, stack
    else:
        return None
    hd, hh = sl * planes + max_span(spec, 0), bqh + max_span(spec, 1)
    bw = (bqw + max_span(spec, 2) + 6) // 4 * 4  # twg_stage_w
    if max(hd, hh, bw) > 256:
        return None
    bm, pos_pad, tap_cap = run[8]
    fits = twg_smem(nr, bm, pos_pad, tap_cap, 2 if stream else 1, sl, stack, 2, False, run[7],
                    bufs * channels * hd * hh * bw * 4, kind == "pieces") <= TWG_SMEM_CAP[4]
    return kind if fits else None


def tma_strides_ok(x, spec, mode, kvec):
    """tma_strides_ok (plan_twg.cpp): what a TMA box needs of x itself: the channel-fast
    loader's legality, every other x stride a multiple of 16 bytes, and whole 64-byte chunks per
    group when groups > 1; CONVT3D_TWG_TMA=0 never."""
    cin, g = spec[1], spec[9]
    if not kvec or os.environ.get("CONVT3D_TWG_TMA") == "0":
        return False
    if g > 1 and (cin // g) % bk_elems(mode) != 0:
        return False
    return not any(x.stride(i) * x.element_size() % 16 for i in (0, 2, 3, 4))


def twg_tma(x, spec, mode, kvec, sl, bqh, bqw, stack=1, wstack=False):
    """twg_tma_ok (plan_twg.cpp): the transposed kernel loads its box by TMA (name "_tma")
    where tma_strides_ok and the box extents are <= 256 (each axis spans its largest phase
    span: max_span)."""
    if not tma_strides_ok(x, spec, mode, kvec):
        return False
    planes = 1 if wstack else stack
    return all(bq + max_span(spec, i) <= 256 for i, bq in enumerate((sl * planes, bqh, bqw)))


def twg_expected(device, spec, mode, kind, cout_g, kvec, x=None):
    """Mirror of twg_pays (plan_twg.cpp): auto mode replaces the per-phase halo kernel of a
    bf16/fp16/TF32/3xTF32 layer with 32 < Cout/g <= 64 and, when strided, at least 8 taps per
    non-empty phase on average, and (CONVT3D_HALO unset) v1 or the per-phase kernel of a TF32
    or 3xTF32 layer with 32 < Cout/g <= 64 (either layout), and (CONVT3D_HALO unset) v1 or the fused
    kernel of a strided 16-bit layer with 32 < Cout/g <= 64 without the 16-byte channel loader,
    and (CONVT3D_HALO unset) the fused kernel of a strided 16-bit layer with 32 < Cout/g <= 64,
    fewer than 8 taps per non-empty phase on average and a TMA box (tma_strides_ok of x),
    by the transposed wgmma kernel on
    a compute capability 9.0 device (sm_90a build); CONVT3D_TWG=0 never does. With
    16 < Cout/g <= 32 it replaces the per-phase halo kernel of stride-1 layers, and only with
    stacked planes, and with Cout/g <= 16 only with four stacked w taps (kernel_path checks
    twg_run's J). CONVT3D_TWG=1 takes it wherever it is legal (some phase with taps,
    Cout/g <= 64), narrow layers of any stride included."""
    import torch

    taps = phase_taps(spec)
    forced = os.environ.get("CONVT3D_TWG") == "1"
    long_phases = math.prod(spec[5]) == 1 or sum(taps) >= HALO_MIN_TAPS * len(taps)
    halo_rule = kind in ("halo", "halo_wgmma") and long_phases
    tf32_short = (mode in ("tf32", "3xtf32") and kind not in ("fused", "fused_pair") and bool(taps)
                  and os.environ.get("CONVT3D_HALO") not in ("0", "1", "2"))
    scalar16_strided = (mode in ("bf16", "fp16") and not kvec and math.prod(spec[5]) > 1
                        and bool(taps) and os.environ.get("CONVT3D_HALO") not in ("0", "1", "2"))
    tma16_short = (mode in ("bf16", "fp16") and math.prod(spec[5]) > 1 and bool(taps)
                   and not long_phases and x is not None and tma_strides_ok(x, spec, mode, kvec)
                   and os.environ.get("CONVT3D_HALO") not in ("0", "1", "2"))
    narrow = ((cout_g > 16 or twg_wstack_ok(spec, 4)) and cout_g <= 32 and halo_rule
              and math.prod(spec[5]) == 1)
    return (os.environ.get("CONVT3D_TWG") != "0"
            and ((forced and bool(taps) and cout_g <= 64)
                 or (32 < cout_g <= 64 and (halo_rule or tf32_short or scalar16_strided
                                            or tma16_short)) or narrow)
            and mode in ("bf16", "fp16", "tf32", "3xtf32")
            and device.type == "cuda" and torch.cuda.get_device_capability(device) == (9, 0))


PW_BNS = (64, 128, 256)  # tile_configs.h: kPwBns


def non_overlapping(spec):
    """Mirror of non_overlapping (plan_pw.cpp): kernel == stride on every axis (dilation
    1 or a 1-tap kernel), and every phase's one tap reads inside x for all of its outputs."""
    _, _, _, size, k, s, p, op, d, _, _ = spec
    for i in range(3):
        if k[i] != s[i] or (d[i] != 1 and k[i] != 1):
            return False
        for q, nt, _, c0 in axis_taps(size[i], k[i], s[i], p[i], op[i], d[i]):
            if nt != 1 or (q > 0 and (c0 < 0 or q - 1 + c0 >= size[i])):
                return False
    return True


def positions_contiguous(x):
    """Mirror of positions_contiguous (plan_pw.cpp): x's d, h, w strides H W, W, 1 (size-1
    axes excepted), D H W a multiple of the 16-byte run, data pointer and channel / sample
    strides 16-byte aligned."""
    n, _, d, h, w = x.shape
    st = x.stride()
    run = 16 // x.element_size()
    if (d * h * w) % run or (w > 1 and st[4] != 1) or (h > 1 and st[3] != w) or (
            d > 1 and st[2] != h * w):
        return False
    return x.data_ptr() % 16 == 0 and st[1] % run == 0 and (n == 1 or st[0] % run == 0)


PW_X3_MAX_BN = 128  # tile_configs.h: kPwX3MaxBn
PW_H16_SHORT_K, PW_H16_MIN_COLS = 256, 512  # tile_configs.h: kPwH16ShortK, kPwH16MinCols
PW_BM, PW_BK_BYTES, PW_STAGES, PW_STAGES_LEAN = 128, 128, 3, 2  # tile_configs.h: kPw*


def pw_smem(bn, stages):
    """pw_smem_bytes (tile_configs.h) for TF32 (one tile per CTA, one copy of each operand; A
    goes to the wgmma from registers, so NCDHW x adds no buffer; B is the repacked weight)."""
    tile = max(PW_BM * (bn * 4 + 32), bn * (PW_BM + 4) * 4)
    main = stages * (PW_BM + bn) * PW_BK_BYTES
    return 2 * (32 * PW_BM + 16 * bn + 4 * PW_BM) + 1024 + max(main, tile)


def pw_lean(spec, mode, bn, dense=False):
    """Mirror of plan_pw's lean rule: TF32 takes two K stages (CONVT3D_PW_LEAN=1: wherever BN
    <= 128, 0: never) where K has at least three 128-byte chunks and three stages would leave
    one CTA per SM but two leave two (densified groups: K is all of Cin)."""
    env = os.environ.get("CONVT3D_PW_LEAN")
    if mode != "tf32" or bn > 128 or env == "0":
        return False
    if env == "1":
        return True
    chunks = -(-(spec[1] // (1 if dense else spec[9])) * 4 // PW_BK_BYTES)
    half = TWG_SMEM_CAP[2]

    def smem(stages):
        return pw_smem(bn, min(chunks, stages))

    return chunks >= PW_STAGES and smem(PW_STAGES) > half and smem(PW_STAGES_LEAN) <= half


def w_direct(spec, mode, mn, w=None, dense=False):
    """Mirror of w_direct_ok (plan_pw.cpp): pw reads B straight from w (16-bit, and 3xTF32,
    transposed as it is split, with either x; never TF32)
    when each of w's K rows holds its taps x Cout/g columns contiguously in the kernel's
    order, (tap, co) (channels_last w) or with NCDHW x (co, tap) (contiguous w),
    size-1 dims excepted; w's data and K rows 16-byte aligned, the columns whole 16-byte
    chunks; not densified and not CONVT3D_PW_WDIRECT=0. w None: a contiguous w."""
    _, cin, cout, _, k, _, _, _, _, g, _ = spec
    if dense or os.environ.get("CONVT3D_PW_WDIRECT") == "0" or mode == "tf32":
        return False
    run = 8 if mode in ("bf16", "fp16") else 4  # elements per 16 bytes
    cg = cout // g
    size = (cin, cg, *k)
    st = w.stride() if w is not None else (cg * math.prod(k), math.prod(k), k[1] * k[2], k[2], 1)
    if ((w is not None and w.data_ptr() % 16) or (cg * math.prod(k)) % run
            or (cin > 1 and st[0] % run)):
        return False
    want = ((0, math.prod(k), k[1] * k[2], k[2], 1) if mn
            else (0, 1, k[1] * k[2] * cg, k[2] * cg, cg))
    return all(size[i] == 1 or st[i] == want[i] for i in range(1, 5))


def pw_expected(device, spec, mode, kvec, x=None, w=None, dense=False):
    """Mirror of plan_pw (plan_pw.cpp): the non-overlapping kernel takes bf16/fp16/TF32/
    3xTF32 layers with channels_last x (kvec) or positions_contiguous x (16-bit M-major A,
    fp32 A read into registers; BN a multiple of k_w; y, which follows x here since the
    tests' w is contiguous, unit-stride along w), that are non_overlapping, on a compute
    capability 9.0 device; CONVT3D_PW=1 forces it wherever legal, =0 never, unset takes it when
    CONVT3D_HALO and CONVT3D_TWG are unset (over every other kernel, the fused one included).
    BN: 64 when taps x Cout/g <= 64, else 128 (3xTF32: at most 128). B straight from w per
    w_direct, two TF32 stages per pw_lean. Strict fp32 with a dense x runs as fp16 products
    ("_h16_") where K is two chunks or more (three stages run two ahead) and taps x Cout/g >=
    PW_H16_MIN_COLS (CONVT3D_PW_H16=1: at any width, 0: never), at BN 128 only where Cin/g <=
    PW_H16_SHORT_K (else 64).
    Returns (BN, loader suffix) or None."""
    import torch

    env = os.environ.get("CONVT3D_PW")
    forced = (os.environ.get("CONVT3D_HALO") in ("0", "1", "2")
              or os.environ.get("CONVT3D_TWG") in ("0", "1"))
    if env == "0" or (env != "1" and forced):
        return None
    mn = not kvec and x is not None and positions_contiguous(x)
    if (mode not in ("bf16", "fp16", "tf32", "3xtf32") or not (kvec or mn)
            or not non_overlapping(spec)
            or device.type != "cuda" or torch.cuda.get_device_capability(device) != (9, 0)):
        return None
    _, cin, cout, _, k, _, _, _, _, g, _ = spec
    override = os.environ.get("CONVT3D_PW_BN")
    cin_g = cin // (1 if dense else g)
    long_k = cin_g > PW_H16_SHORT_K
    env_h16 = os.environ.get("CONVT3D_PW_H16")
    h16 = (mode == "3xtf32" and env_h16 != "0"
           and (env_h16 == "1" or math.prod(k) * (cout // g) >= PW_H16_MIN_COLS)
           and (x is None or is_dense(x)) and cin_g > PW_BK_BYTES // 4)
    if override in {str(b) for b in PW_BNS}:
        bn = int(override)
    else:
        bn = 64 if math.prod(k) * (cout // g) <= 64 or (h16 and long_k) else 128
    h16 = h16 and not (bn == 128 and long_k)
    if (mn and bn % k[2]) or (mode == "3xtf32" and bn > PW_X3_MAX_BN):
        return None
    wd = w_direct(spec, mode, mn, w, dense)
    lean = "s2_" if pw_lean(spec, mode, bn, dense) else ""
    loader = ("mn" if mn else "kvec") + ("_wdirect" if wd else "")
    return bn, ("h16_" if h16 else "") + lean + loader


def prefill(x, spec, path, w=None):
    """Mirror of plan_prefill (plan.cpp): a per-phase kernel (not pw, not fused) writing
    a contiguous NCDHW y (neither x nor w suggests channels_last) prefills y with the bias when
    the stride along w is > 1 and phases without taps hold at least half of the outputs;
    CONVT3D_PREFILL=1 whenever some phase with outputs has no taps, =0 never."""
    import torch

    from inductor_convt3d._shapes import result_memory_format

    env = os.environ.get("CONVT3D_PREFILL")
    if env == "0" or path.startswith(("pw_", "fused_", "gsc_")):
        return False
    if result_memory_format(x, x if w is None else w) != torch.contiguous_format:
        return False
    _, _, _, size, k, s, p, op, d, _, _ = spec
    axes = [axis_taps(size[i], k[i], s[i], p[i], op[i], d[i]) for i in range(3)]
    total = empty = 0
    for a in axes[0]:
        for b in axes[1]:
            for c in axes[2]:
                q = a[0] * b[0] * c[0]
                total += q
                if a[1] * b[1] * c[1] == 0:
                    empty += q
    if empty == 0:
        return False
    return env == "1" or (s[2] > 1 and 2 * empty >= total)


def channel_vector_ok(x, c_g, chunk):
    """Mirror of channel_vector_ok (plan.cpp): x's channels unit-stride, each group's c_g
    channels whole chunks of `chunk` elements, the data pointer 16-byte aligned and every other
    stride of a non-size-1 dim a multiple of the chunk."""
    return (x.stride(1) == 1 and c_g % chunk == 0 and x.data_ptr() % 16 == 0
            and all(x.stride(i) % chunk == 0 for i in (0, 2, 3, 4) if x.size(i) > 1))


GSC_KERNELS = ((3, 5, 7),)  # CONVT3D_FWD_FOR_EACH_GSC_K (gsc_args.h)
# the switch values that force another kernel family, and so keep the unset CONVT3D_GSC off
GSC_OTHER_FORCED = {"CONVT3D_HALO": ("0", "1", "2"), "CONVT3D_TWG": ("1",),
                    "CONVT3D_PW": ("1",), "CONVT3D_WGMMA": ("1",), "CONVT3D_DENSE": ("0",),
                    "CONVT3D_DENSE_SKIP": ("0", "1"), "CONVT3D_FUSED_PAIR": ("0", "1")}


def gsc_expected(x, spec, mode, w=None):
    """Mirror of plan_gsc (plan_gsc.cpp): TF32, bf16 and fp16 layers with 8 input and 8 output
    channels per group, stride 2 and dilation 1 on every axis and a kernel size of GSC_KERNELS
    (any strides) take the grouped small-channel kernel, unless CONVT3D_GSC=0, or a switch
    forces another family and CONVT3D_GSC is not 1. Returns its path name or None. ("cl":
    channels_last x in whole aligned 16-byte channel runs and a channels_last y, "cl2" that in
    16 bits with an even number of groups, two per CTA, unless CONVT3D_GSC_G2=0; else
    "strided".)"""
    import torch

    from inductor_convt3d._shapes import result_memory_format

    _, cin, cout, _, k, s, _, _, d, g, _ = spec
    env = os.environ.get("CONVT3D_GSC")
    forced = any(os.environ.get(n) in values for n, values in GSC_OTHER_FORCED.items())
    if env == "0" or (env != "1" and forced) or mode not in ("tf32", "bf16", "fp16"):
        return None
    if cin // g != 8 or cout // g != 8 or tuple(s) != (2, 2, 2) or tuple(d) != (1, 1, 1):
        return None
    if tuple(k) not in GSC_KERNELS:
        return None
    cl = (channel_vector_ok(x, 8, 4 if mode == "tf32" else 8)  # elements per 16 bytes
          and result_memory_format(x, x if w is None else w) == torch.channels_last_3d)
    g2 = cl and mode != "tf32" and g % 2 == 0 and os.environ.get("CONVT3D_GSC_G2") != "0"
    return f"gsc_{mode}_k{k[0]}{k[1]}{k[2]}_{('cl2' if g2 else 'cl') if cl else 'strided'}"


def expected_path(x, spec, mode, w=None):
    """kernel_path, with "_prefill" where prefill says the host fills y first."""
    path = kernel_path(x, spec, mode, w)
    return path + "_prefill" if prefill(x, spec, path, w) else path


def kernel_path(x, spec, mode, w=None):
    """The kernel forward_cuda should pick: the grouped small-channel kernel per gsc_expected
    (over every other kernel); groups densified per dense_groups ("_dense"); the
    non-overlapping kernel per pw_expected (in auto mode over every other kernel); else fused or
    per-phase halo (BN 16/32/48/64, at most 32 for strict fp32; its wgmma variant per
    wgmma_expected) per halo_kind, the per-phase one replaced by the transposed wgmma kernel
    per twg_expected (run length per twg_run), else v1 igemm (BN from Cout/groups); the 16-byte
    channel loader exactly when channels are unit-stride, whole 16-byte chunks and 16-byte
    aligned. w None: a contiguous w."""
    gsc = gsc_expected(x, spec, mode, w)
    if gsc is not None:
        return gsc
    dense = dense_groups(spec, mode)
    if dense:
        spec = spec[:9] + (1,) + spec[10:]
    _, cin, cout, _, _, _, _, _, _, g, _ = spec
    suffix = "_dense" if dense else ""
    chunk = 8 if mode in ("bf16", "fp16") else 4
    kvec = channel_vector_ok(x, cin // g, chunk)
    loader = "kvec" if kvec else "mfast"
    hmax = 32 if mode == "3xtf32" else 64
    hbn = next((c for c in (16, 32, 48, 64) if c == hmax or cout // g <= c), hmax)
    import torch

    from inductor_convt3d._shapes import result_memory_format

    y_ncdhw = result_memory_format(x, x if w is None else w) == torch.contiguous_format
    kind = halo_kind(spec, hbn, mode, kvec, y_ncdhw)
    pw = pw_expected(x.device, spec, mode, kvec, x, w, bool(dense))
    if pw is not None:
        return f"pw_{mode}_bn{pw[0]}_{pw[1]}{suffix}"
    if kind == "halo" and wgmma_expected(x.device, mode):
        kind = "halo_wgmma"
    if twg_expected(x.device, spec, mode, kind, cout // g, kvec, x):
        h16 = twg_h16(x, mode)
        run = twg_run(spec, mode, kvec, y_ncdhw, h16)
        # narrow: only where the stacked blocks fill more than half of M, and with Cout/g <= 16
        # only with w taps (not when CONVT3D_TWG=1 forces it: plan_twg)
        forced = os.environ.get("CONVT3D_TWG") == "1"
        if run is not None and (forced or ((cout // g > 32 or cout // g * run[5] > 32) and (
                cout // g > 16 or run[6]))):
            stream = "_stream" if run[1] else ""
            sl = "_s2" if run[2] == 2 else ""
            stack = f"_{'w' if run[6] else 'j'}{run[5]}" if run[5] > 1 else ""
            long_stage = ("_long" if run[7] else "") + ("_h16" if h16 else "")
            box = ("tma" if twg_tma(x, spec, mode, kvec, *run[2:7])
                   else twg_stage(x, spec, mode, kvec, run) or loader)
            return f"twg_{mode}_n{run[0]}{sl}{stack}{long_stage}{stream}_{box}{suffix}"
    if kind == "fused_pair":
        return f"fused_{mode}_bn32_{loader}_pair{fused_res(spec, 32, mode, True)}{suffix}"
    if kind is not None:
        res = fused_res(spec, hbn, mode, False) if kind == "fused" else ""
        if dense and kind in ("halo", "fused") and not res and dense_skip(mode, kind, hbn):
            suffix = "_skip" + suffix
        return f"{kind}_{mode}_bn{hbn}_{loader}{res}{suffix}"
    max_bn = 64 if mode == "3xtf32" else 128
    bn = max_bn
    for c in (16, 32, 64, 128):
        if c <= max_bn and cout // g <= c:
            bn = c
            break
    return f"igemm_{mode}_bn{bn}_{loader}{suffix}"
