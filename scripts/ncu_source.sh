#!/usr/bin/env bash
# Per-instruction warp stall samples of the main forward kernel on suite cases: Nsight Compute's
# source counters, exported as one SASS CSV per case ($OUT/ncu_<case>_<prec>_<layout>.csv), for
# scripts/ncu_source_top.py to rank (design doc v42).
#   bash scripts/ncu_source.sh "12 fp32 ncdhw" "12 fp32 ndhwc"
# NCU_KERNELS overrides the kernel regex (as scripts/ncu_cases.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_out}; mkdir -p "$OUT"
KERNELS=${NCU_KERNELS:-'pw_fwd|halo_fwd|igemm_fwd|twg_fwd'}
for spec in "$@"; do
  name=ncu_$(echo "$spec" | tr ' ' '_')
  # shellcheck disable=SC2086
  ncu --clock-control none --section SourceCounters -k regex:"$KERNELS" -s 2 -c 1 -f \
    -o "/tmp/$name" python3 scripts/profile_case.py $spec --iters 3 2>&1 | grep -v "^==PROF=="
  ncu --import "/tmp/$name.ncu-rep" --page source --csv --print-source sass >"$OUT/$name.csv"
  python3 scripts/ncu_source_top.py "$OUT/$name.csv" --top 12
done
