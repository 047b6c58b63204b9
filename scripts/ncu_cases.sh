#!/usr/bin/env bash
# Nsight Compute summaries of the main forward kernel on suite cases (no cuDNN): the sections
# that say what bounds a kernel (speed of light, memory, occupancy, warp stalls).
#   bash scripts/ncu_cases.sh "9 bf16 ndhwc" "1 bf16 ncdhw"     (env NCU_SECTIONS overrides)
#   NCU_METRICS=dram__bytes_read.sum,dram__bytes_write.sum bash scripts/ncu_cases.sh "8 tf32 ncdhw"
# (NCU_METRICS: those metrics only, instead of the sections). NCU_KERNELS overrides the regex,
# NCU_COUNT the number of kernels profiled after the first two matches (default 1).
#   NCU_SOURCE=1 bash scripts/ncu_cases.sh "12 fp32 ncdhw"
# (NCU_SOURCE=1: per-instruction warp stall samples instead, the source counters exported as a
# SASS CSV, $OUT/ncu_<case>_<prec>_<layout>.csv, and ranked by scripts/ncu_source_top.py.)
set -uo pipefail
cd "$(dirname "$0")/.."
SECTIONS=${NCU_SECTIONS:-"SpeedOfLight MemoryWorkloadAnalysis Occupancy LaunchStats WarpStateStats ComputeWorkloadAnalysis"}
args=()
if [ -n "${NCU_METRICS:-}" ]; then
  args+=(--metrics "$NCU_METRICS")
else
  for s in $SECTIONS; do args+=(--section "$s"); done
fi
KERNELS=${NCU_KERNELS:-'pw_fwd|halo_fwd|igemm_fwd|twg_fwd'}
if [ "${NCU_SOURCE:-0}" = 1 ]; then
  OUT=${OUT:-/tmp/gpu_out}; mkdir -p "$OUT"
  args=(--section SourceCounters)
fi
for spec in "$@"; do
  echo "==== case $spec"
  if [ "${NCU_SOURCE:-0}" = 1 ]; then
    name=ncu_$(echo "$spec" | tr ' ' '_')
    # shellcheck disable=SC2086
    ncu --clock-control none "${args[@]}" -k regex:"$KERNELS" -s 2 -c 1 -f -o "/tmp/$name" \
      python3 scripts/profile_case.py $spec --iters 3 2>&1 | grep -v "^==PROF=="
    ncu --import "/tmp/$name.ncu-rep" --page source --csv --print-source sass >"$OUT/$name.csv"
    python3 scripts/ncu_source_top.py "$OUT/$name.csv" --top 12
    continue
  fi
  # shellcheck disable=SC2086
  ncu --clock-control none "${args[@]}" -k regex:"$KERNELS" -s 2 -c "${NCU_COUNT:-1}" \
    python3 scripts/profile_case.py $spec --iters 3 2>&1 | grep -v "^==PROF==" | sed -e 's/  */ /g'
done
