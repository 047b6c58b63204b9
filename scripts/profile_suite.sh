#!/usr/bin/env bash
# Nsight Compute on the forward kernel of some suite cases (after gpu_check.sh built the
# package): speed of light, compute and memory workload, warp stall reasons, occupancy. One
# report per case in $OUT/ncu_<case>_<precision>_<layout>.txt, key lines printed.
#   bash scripts/profile_suite.sh "3 bf16 ndhwc" "11 tf32 ncdhw"
set -u
OUT=${OUT:-/tmp/gpu_out}; mkdir -p "$OUT"
cd "$(dirname "$0")/.."
for spec in "$@"; do
  tag=$(echo "$spec" | tr ' ' _)
  # shellcheck disable=SC2086
  python3 scripts/profile_case.py $spec --iters 20
  # shellcheck disable=SC2086
  ncu --clock-control none -k regex:fwd_kernel --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats \
    --section InstructionStats --print-details all \
    python3 scripts/profile_case.py $spec --iters 2 >"$OUT/ncu_$tag.txt" 2>&1
  grep -E "Duration|Compute \(SM\) Throughput|L2 Cache Throughput|Issue Slots Busy|Registers Per|Achieved Occupancy|Dynamic Shared|Executed Instructions  " "$OUT/ncu_$tag.txt" | head -10
done
