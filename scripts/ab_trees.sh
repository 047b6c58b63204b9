#!/usr/bin/env bash
# Same-machine A/B of two source trees: the installed package (the working tree, built by
# gpu_check.sh) against an older tree in $OLD (for example `git archive <commit> | tar -x -C
# .ab_old`, carried to the GPU machine), built in place. halo_ab.py runs on each in turn, in
# alternating rounds (untouched kernels drift a few % within one call), with the same switches.
#   OLD=.ab_old ROUNDS=2 AB_ARGS="--cases 1,11 --variants auto --batch 5" bash scripts/ab_trees.sh
# (gpu_check.sh with OLD_TREE=.ab_old builds the old tree alongside the new one; this script
# then finds its .built mark and skips the build)
set -uo pipefail
cd "$(dirname "$0")/.."
OLD=$(realpath "${OLD:-.ab_old}")
OUT=${OUT:-/tmp/gpu_out}; mkdir -p "$OUT"
export CONVT3D_CUDA_ARCHS=${CONVT3D_CUDA_ARCHS:-9.0a}  # as gpu_check.sh builds the new tree
if [[ "${CXX:-}" == /opt/gcc/* && -x /usr/bin/g++ ]]; then export CXX=/usr/bin/g++ CC=/usr/bin/gcc; fi
t0=$(date +%s)
if [[ -f "$OLD/.built" ]]; then  # gpu_check.sh's OLD_TREE built it alongside the new tree
  echo "old tree already built"
else
  (cd "$OLD" && MAX_JOBS=16 python3 setup.py build_ext --inplace >"$OUT/build_old.log" 2>&1) \
    || { tail -30 "$OUT/build_old.log"; echo "old build: FAILED"; exit 1; }
  echo "old tree built in $(( $(date +%s) - t0 )) s"
fi
for r in $(seq 1 "${ROUNDS:-2}"); do
  for tree in old new; do
    pp=""; [[ $tree == old ]] && pp="$OLD"
    # (from /tmp: python -c puts the working directory ahead of PYTHONPATH)
    echo "== round $r, $tree tree: $(cd /tmp && PYTHONPATH=$pp python3 -c 'import inductor_convt3d as m; print(m.__file__)')"
    # shellcheck disable=SC2086
    PYTHONPATH=$pp python3 scripts/halo_ab.py ${AB_ARGS:-}
  done
done
