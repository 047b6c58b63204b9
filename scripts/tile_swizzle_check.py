"""Shared-memory bank model of the epilogue tiles (csrc/cuda/fwd/tile_common.cuh, TileLayout).

store_tile's tile (kSwizzled) holds row r's column c at word r * BN + (c ^ swizzle(r)); twg's
(kPadded4) at r * (BN + 4) + c. For each access pattern of the epilogue this prints the worst
number of wavefronts per request group (1 = conflict-free):
- sts64: the mma fragment's writes, lane 4 gi + ti storing columns 2 ti, 2 ti + 1 of row gi
  (rows start at multiples of 8, columns at multiples of 8), one float2 per lane (store_tile);
- twg: twg's writes, lane l storing row base + 2 (l % 4), column 16k + l / 4 (and + 8), scalar;
- ncdhw128: NCDHW y, 32 consecutive rows, one per thread, reading 16 bytes at column 4k;
- vec4 / vec8: channels_last y, thread i reading the 4 or 8 columns of chunk i of the tile;
- cfast: consecutive threads reading consecutive columns.
The hardware serves 8-byte accesses per half warp and 16-byte ones per quarter warp. The tile
both used before ([rows][BN + 1]) is modelled with the scalar accesses it was read with. Each
kernel uses only its own write pattern (sts64 or twg).

    python scripts/tile_swizzle_check.py            # the kernel's swizzles, and the padded tile
    python scripts/tile_swizzle_check.py --search   # every linear map of r's bits (slow for 64)

Change the layouts in the kernel and here together.
"""
import argparse
import itertools


def swizzle(bn, r):
    """tile_swizzle<BN>(r): moves whole 16-byte groups (bits 2-4 of the column)."""
    if bn % 32 == 0:
        return ((r & 1) << 2) | (((r >> 1) & 1) << 3) | (((r ^ (r >> 2)) & 1) << 4)
    return (((r >> 1) & 1) << 2) | ((((r >> 1) ^ (r >> 2)) & 1) << 3)


def wavefronts(byte_addrs, width):
    """Worst wavefronts of one request: lanes grouped by 128 / width, per group the largest
    number of distinct words that share a bank."""
    per = 128 // width
    worst = 0
    for g0 in range(0, 32, per):
        banks = {}
        for a in set(byte_addrs[g0:g0 + per]):
            for w in range(width // 4):
                banks.setdefault((a // 4 + w) % 32, set()).add(a // 4 + w)
        worst = max(worst, max(len(v) for v in banks.values()))
    return worst


def check(bn, word, vector=True, rows=256):
    """Worst wavefronts per pattern for the layout word(r, c); vector=False models the padded
    tile's scalar accesses (its rows are not 8- or 16-byte aligned)."""
    w = {}

    def upd(k, v):
        w[k] = max(w.get(k, 0), v)

    def access(k, lanes, width):  # lanes: each lane's first (row, column)
        if vector:
            upd(k, wavefronts([4 * word(r, c) for r, c in lanes], width))
        else:
            for e in range(width // 4):
                upd(k, wavefronts([4 * word(r, c + e) for r, c in lanes], 4))

    for rb in range(0, rows, 8):
        for cb in range(0, bn, 8):
            access("sts64", [(rb + gi, cb + 2 * ti) for gi in range(8) for ti in range(4)], 8)
    for rb in range(0, rows - 8, 2):
        for cb in range(0, bn, 16):
            for h in (0, 8):
                upd("twg", wavefronts([4 * word(rb + 2 * (l % 4), cb + l // 4 + h)
                                       for l in range(32)], 4))
    for r0 in range(0, rows, 32):
        for c in range(0, bn, 4):
            access("ncdhw128", [(r0 + t, c) for t in range(32)], 16)
    for v in (4, 8):
        per = bn // v
        for i0 in range(0, rows * per, 32):
            for q in range(0, v, 4):
                access(f"vec{v}", [(i // per, (i % per) * v + q) for i in range(i0, i0 + 32)], 16)
    for i0 in range(0, rows * bn, 32):
        access("cfast", [(i // bn, i % bn) for i in range(i0, i0 + 32)], 4)
    return w


def search(bn):
    """The linear maps (each output bit the parity of some of r's five low bits) with the
    fewest wavefronts over all patterns; stops at the first conflict-free one."""
    out_bits = [2, 3, 4] if bn % 32 == 0 else [2, 3]
    best = None
    for masks in itertools.product(range(32), repeat=len(out_bits)):
        def sw(r, masks=masks):
            return sum((bin(r & m).count("1") & 1) << b for b, m in zip(out_bits, masks))
        w = check(bn, lambda r, c: r * bn + (c ^ sw(r)))
        if best is None or sum(w.values()) < sum(best[1].values()):
            best = (masks, w)
        if all(v == 1 for v in w.values()):
            break
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--search", action="store_true")
    args = ap.parse_args()
    for bn in (16, 32, 48, 64):
        print(f"BN {bn:2d} swizzled (store_tile): "
              f"{check(bn, lambda r, c: r * bn + (c ^ swizzle(bn, r)))}")
        print(f"BN {bn:2d} padded by 4 (twg):     {check(bn, lambda r, c: r * (bn + 4) + c)}")
        print(f"BN {bn:2d} padded by 1 (before):  "
              f"{check(bn, lambda r, c: r * (bn + 1) + c, vector=False)}")
        if args.search:
            print(f"BN {bn:2d} search:   {search(bn)}")


if __name__ == "__main__":
    main()
