"""The table of scripts/ncu_floor_survey.sh: one line per suite row from ncu's CSV (its
--log-file) and scripts/ncu_survey.py's "survey <i> case prec layout path" lines. Kernel i of
the CSV is survey launch i (one main kernel per call); each row's second launch is shown.

    python3 scripts/ncu_survey_table.py ncu_survey.csv ncu_survey_rows.log
"""
import csv
import sys

SHORT = {  # metric -> column
    "gpu__time_duration.sum": "us",
    "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active": "wgmma %",
    # on sm_90 the HMMA pipe counts wgmma as well as mma.sync (twg kernels read 40-76 % here)
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active": "tensor pipe %",
    "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue %",
    "dram__bytes_read.sum": "DRAM read MB",
    "dram__bytes_write.sum": "DRAM written MB",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "DRAM %",
}
SCALE = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3,
         "byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1.0, "Gbyte": 1e3}  # to µs and MB


def main(csv_path, rows_path):
    rows = {}
    for line in open(rows_path):
        if line.startswith("survey "):
            _, i, case, prec, layout, path = line.split()[:6]
            rows[int(i)] = (case, prec, layout, path)
    lines = [ln for ln in open(csv_path) if ln.startswith('"')]
    values = {}
    for rec in csv.DictReader(lines):
        v = float(rec["Metric Value"].replace(",", ""))
        v *= SCALE.get(rec["Metric Unit"], 1.0)
        values.setdefault(int(rec["ID"]), {})[rec["Metric Name"]] = v
    cols = [m for m in SHORT if any(m in d for d in values.values())]
    print("| # | prec | layout | kernel | " + " | ".join(SHORT[m] for m in cols) + " |")
    print("|---|---|---|---|" + "---|" * len(cols))
    for i in sorted(rows):
        if i % 2 == 0 or i not in values:
            continue
        case, prec, layout, path = rows[i]
        cells = []
        for m in cols:
            v = values[i].get(m)
            cells.append("" if v is None else f"{v:.1f}" if v < 1000 else f"{v:.0f}")
        print(f"| {case} | {prec} | {layout} | `{path}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
