"""A numerical model of 3xTF32 accumulation, to size a kernel's folds before a GPU run.

The tensor core is modelled as adding one K step's 8 exact products (of TF32 parts, split as
split_tf32 in csrc/cuda/fwd/tile_common.cuh splits) to its fp32 accumulator and truncating
the sum toward zero; a fold adds the partial sum into acc with an fp32 (round-to-nearest) add
and restarts it. Two schemes per fold length (K steps per fold):
- separate: the small products (a_small b_big, a_big b_small) in their own accumulator over
  all of K, the big ones in the partial sum (the kernels as of design doc v38);
- merged: all three products in the partial sum (two accumulator sets instead of three).
Prints the relative L2 error against float64 over random normal rows. The model is a little
pessimistic: on an H100 the suite's strict fp32 rows read 0.6-3.4e-7 where it predicts
1.4-5e-7 for the same fold lengths (design doc v38).

    python scripts/x3_error_model.py --fold 4 --k 64,256,1024      # pw: a fold per chunk
    python scripts/x3_error_model.py --fold 16 --k 1024,32928       # twg: kTwgX3FoldK

Needs numpy (not a package dependency).
"""
import argparse

import numpy as np


def tf32(x):
    """fp32 -> TF32 bits, rounded to nearest (add half an ulp, mask), as the kernels do."""
    b = np.asarray(x, np.float32).view(np.uint32)
    return ((b + np.uint32(0x1000)) & np.uint32(0xffffe000)).view(np.float32)


def trunc32(x):
    """float64 -> fp32, toward zero."""
    f = x.astype(np.float32)
    over = np.abs(f.astype(np.float64)) > np.abs(x)
    f[over] = np.nextafter(f[over], np.float32(0))
    return f


def error(k, fold, merged, rows, rng):
    a = rng.standard_normal((rows, k)).astype(np.float32)
    b = rng.standard_normal(k).astype(np.float32)
    a_big, b_big = tf32(a), tf32(b)
    a_small, b_small = tf32(a - a_big), tf32(b - b_big)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    acc = np.zeros(rows, np.float32)
    acc_s = np.zeros(rows, np.float32)
    f64 = np.float64
    for f0 in range(0, k, 8 * fold):
        part = np.zeros(rows, np.float32)
        for k0 in range(f0, min(f0 + 8 * fold, k), 8):
            s = slice(k0, k0 + 8)
            small = [a_small[:, s].astype(f64) @ b_big[s].astype(f64),
                     a_big[:, s].astype(f64) @ b_small[s].astype(f64)]
            big = a_big[:, s].astype(f64) @ b_big[s].astype(f64)
            for t in small:
                if merged:
                    part = trunc32(part.astype(f64) + t)
                else:
                    acc_s = trunc32(acc_s.astype(f64) + t)
            part = trunc32(part.astype(f64) + big)
        acc = acc + part
    out = acc if merged else acc + acc_s
    return np.linalg.norm(out.astype(f64) - ref) / np.linalg.norm(ref)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fold", type=int, default=4, help="K steps (of 8) per fold")
    ap.add_argument("--k", default="64,256,1024,4096", help="reduction lengths")
    ap.add_argument("--rows", type=int, default=2048)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    for k in (int(v) for v in args.k.split(",")):
        sep = error(k, args.fold, False, args.rows, rng)
        mer = error(k, args.fold, True, args.rows, rng)
        print(f"K {k:6d}  fold {args.fold:2d} K steps:  separate {sep:.2e}  merged {mer:.2e}")


if __name__ == "__main__":
    main()
