"""CPU model of pw_kernel.cuh's 3xTF32 copy mapping (warp-local copies): for every warp, the
shared-memory bytes it reads between cp.async.wait and the K loop's CTA barrier (load_a's A
fragments, and with B read from w the transpose's w rows) must be bytes its own lanes copied,
since only a warp barrier stands between. Also counts the bank conflicts of the copies' 16-byte
shared-memory writes per 8-lane phase. Mirrors the kernel's index formulas by hand: change
both together.

    python scripts/pw_warp_local_check.py
"""
BM, NT, BK, PL = 128, 256, 32, 8  # fp32: 32 channels per 128-byte chunk, 8 16-byte chunks


def f(q):  # XMN K row offset per lane quad: 0 2 1 3 4 6 5 7
    return (q & 4) | ((q & 1) << 1) | ((q >> 1) & 1)


def a_copies(warp, xmn):
    """(position m, K row k) elements the warp's A copies write, with each copy's byte address."""
    out, addrs = set(), []
    for lane in range(32):
        for j in range(BM // (NT // PL)):  # PA = 4
            if xmn:
                pc, k = 4 * warp + lane % 4, f(lane // 4) + 8 * j
                out |= {(4 * pc + e, k) for e in range(4)}
                chunk = pc ^ ((k & 3) << 1)  # xt_chunk
                addrs.append((lane, j, k * BM * 4 + chunk * 16))
            else:
                r, kc = 16 * warp + 4 * j + lane // 8, lane % 8
                out |= {(r, 4 * kc + e) for e in range(4)}
                addrs.append((lane, j, r * 128 + (kc ^ (r % 8)) * 16))
    return out, addrs


def a_reads(warp):
    """load_a: rows 16 warp + lane / 4 (+ 8), K columns t, t + 4 of each 8-wide K step."""
    return {(16 * warp + lane // 4 + 8 * (i & 1), 8 * ks + lane % 4 + 4 * (i >> 1))
            for lane in range(32) for ks in range(PL // 2) for i in range(4)}


def b_copies(warp, bn):
    kwc, kws = bn // 4, NT // (bn // 4)
    out, addrs = set(), []
    for lane in range(32):
        wc = 8 * (warp % (bn // 32)) + lane % 8
        wk = 4 * (warp // (bn // 32)) + lane // 8
        for j in range(bn // (NT // PL)):  # PB
            k = wk + kws * j
            out |= {(k, 4 * wc + e) for e in range(4)}
            addrs.append((lane, j, k * bn * 4 + wc * 16))
    assert kwc * 4 == bn
    return out, addrs


def b_reads(warp, bn):
    """pw_transpose_split_tf32<BN, NT>: q = tid + NT j, column r = q % BN, K rows 4 (q / BN) + i."""
    reads = set()
    for lane in range(32):
        for j in range(bn * PL // NT):
            q = 32 * warp + lane + NT * j
            reads |= {(4 * (q // bn) + i, q % bn) for i in range(4)}
    return reads


def conflicts(addrs):
    """Extra wavefronts over one per 8-lane phase of 16-byte writes (per j)."""
    extra = 0
    for j in {a[1] for a in addrs}:
        for ph in range(4):
            banks = [((addr // 16) % 8) for lane, jj, addr in addrs
                     if jj == j and lane // 8 == ph]
            extra += max(banks.count(b) for b in set(banks)) - 1
    return extra


def main():
    for xmn in (False, True):
        for w in range(NT // 32):
            cp, addrs = a_copies(w, xmn)
            assert a_reads(w) <= cp, ("A", xmn, w)
            assert conflicts(addrs) == 0, ("A conflicts", xmn, w, conflicts(addrs))
        total = set().union(*(a_copies(w, xmn)[0] for w in range(NT // 32)))
        assert len(total) == BM * BK, ("A coverage", xmn)
    for bn in (64, 128):
        total = set()
        for w in range(NT // 32):
            cp, addrs = b_copies(w, bn)
            assert b_reads(w, bn) <= cp, ("B", bn, w)
            assert conflicts(addrs) == 0, ("B conflicts", bn, w)
            total |= cp
        assert total == {(k, c) for k in range(BK) for c in range(bn)}, ("B coverage", bn)
    print("pw 3xTF32 copies: every warp reads only its own copies; A (both layouts) and w rows "
          "(BN 64, 128) covered once, no bank conflicts on the copies' writes")


if __name__ == "__main__":
    main()
