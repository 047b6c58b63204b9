#!/usr/bin/env bash
# Where each suite row's main forward kernel spends the GPU: its time, how busy the tensor pipe
# was (wgmma and mma.sync), issue activity and DRAM traffic, in one Nsight Compute run over
# scripts/ncu_survey.py (every row twice in one process), as a table by
# scripts/ncu_survey_table.py (the second launch of each row). Metrics this ncu does not know
# are left out, so one missing name does not cost the whole run.
#   bash scripts/ncu_floor_survey.sh --cases 1,4 --precisions tf32,bf16 --layouts ncdhw,ndhwc
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_out}; mkdir -p "$OUT"
want=(
  gpu__time_duration.sum
  sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
  sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  smsp__issue_active.avg.pct_of_peak_sustained_active
  dram__bytes_read.sum
  dram__bytes_write.sum
  dram__throughput.avg.pct_of_peak_sustained_elapsed
)
known=$(ncu --query-metrics --chip gh100 2>/dev/null | awk '{print $1}')
metrics=()
for m in "${want[@]}"; do
  if grep -qx "${m%%.*}" <<<"$known"; then metrics+=("$m"); else echo "ncu lacks ${m%%.*}: left out"; fi
done
csv="$OUT/ncu_survey.csv"
ncu --clock-control none --csv --log-file "$csv" --metrics "$(IFS=,; echo "${metrics[*]}")" \
  -k regex:'_fwd_kernel' python3 scripts/ncu_survey.py "$@" >"$OUT/ncu_survey_rows.log" 2>&1
rc=$?
python3 scripts/ncu_survey_table.py "$csv" "$OUT/ncu_survey_rows.log"
exit $rc
