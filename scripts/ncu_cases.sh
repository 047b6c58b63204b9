#!/usr/bin/env bash
# Nsight Compute summaries of the main forward kernel on suite cases (no cuDNN): the sections
# that say what bounds a kernel (speed of light, memory, occupancy, warp stalls).
#   bash scripts/ncu_cases.sh "9 bf16 ndhwc" "1 bf16 ncdhw"     (env NCU_SECTIONS overrides)
#   NCU_METRICS=dram__bytes_read.sum,dram__bytes_write.sum bash scripts/ncu_cases.sh "8 tf32 ncdhw"
# (NCU_METRICS: those metrics only, instead of the sections). NCU_KERNELS overrides the regex,
# NCU_COUNT the number of kernels profiled after the first two matches (default 1).
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
for spec in "$@"; do
  echo "==== case $spec"
  # shellcheck disable=SC2086
  ncu --clock-control none "${args[@]}" -k regex:"$KERNELS" -s 2 -c "${NCU_COUNT:-1}" \
    python3 scripts/profile_case.py $spec --iters 3 2>&1 | grep -v "^==PROF==" | sed -e 's/  */ /g'
done
