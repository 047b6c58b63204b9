"""Output: the printed table and summary, bench.json (every number plus metadata), bench.md (the
table for docs/performance.md) and bench.png (matplotlib, optional)."""
from __future__ import annotations

import json
import math
from pathlib import Path

from .timing import Policy


def _get(row: dict, key: str, field: str):
    d = row.get(key)
    return None if d is None else d.get(field)


def _g(v, spec: str) -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return format(v, spec)


def note(row: dict) -> str:
    if "skipped" in row:
        return "skipped"
    notes = []
    for key, label in (("ours", "ours"), ("cudnn", "cuDNN"), ("cudnn_default", "default")):
        if f"{key}_error" in row:
            notes.append(f"{label} failed")
    if _get(row, "ours", "slow"):
        notes.append(f"slow: {_get(row, 'ours', 'iters')} it")
    if _get(row, "ours", "repeat_equal") is False:
        notes.append("ours not repeatable")
    for key, label in (("ours", "ours"), ("cudnn", "cuDNN")):
        spread = _get(row, key, "spread")
        if spread is not None and spread > Policy.noisy_spread:
            notes.append(f"{label} noisy: IQR {100 * spread:.0f} % of median")
    if "reference_error" in row:
        notes.append("no fp64 ref")
    backend = row.get("baseline_backend")
    if backend and row.get("device_type") == "cuda" and not backend.startswith("Cudnn"):
        notes.append(f"baseline: {backend}")
    return ", ".join(notes)


def table_rows(rows: list[dict], with_default: bool) -> tuple[list[str], list[list[str]]]:
    head = ["#", "prec", "layout", "ours ms", "cuDNN ms"]
    if with_default:
        head.append("dflt ms")
    head += ["speedup", "TFLOP/s", "%floor", "cuDNN %fl", "err", "cuDNN err", "mem %out", "note"]
    body = []
    for r in rows:
        line = [str(r["case"]), r["precision"], r["layout"], _g(_get(r, "ours", "ms"), ".4g"),
                _g(_get(r, "cudnn", "ms"), ".4g")]
        if with_default:
            line.append(_g(_get(r, "cudnn_default", "ms"), ".4g"))
        mem = _get(r, "ours", "extra_mem_frac")
        line += [_g(r.get("speedup"), ".3g"), _g(_get(r, "ours", "tflops"), ".3g"),
                 _g(_get(r, "ours", "pct_floor"), ".3g"), _g(_get(r, "cudnn", "pct_floor"), ".3g"),
                 _g(_get(r, "ours", "rel_err"), ".1e"), _g(_get(r, "cudnn", "rel_err"), ".1e"),
                 _g(None if mem is None else 100 * mem, ".3g"), note(r)]
        body.append(line)
    return head, body


def format_table(rows: list[dict], with_default: bool) -> str:
    head, body = table_rows(rows, with_default)
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    fmt = lambda cells: "  ".join(c.rjust(w) if i < len(cells) - 1 else c  # noqa: E731
                                  for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return "\n".join([fmt(head), fmt(["-" * w for w in widths])] + [fmt(b) for b in body])


def markdown_table(rows: list[dict], with_default: bool) -> str:
    head, body = table_rows(rows, with_default)
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(b) + " |" for b in body]
    return "\n".join(out)


def geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def summarise(rows: list[dict]) -> dict:
    """Per precision: geomean speedup, cases faster than tuned cuDNN, min % of floor, worst error
    and extra memory of our op, and cuDNN's range of % of floor."""
    out: dict[str, dict] = {}
    for p in dict.fromkeys(r["precision"] for r in rows):
        rs = [r for r in rows if r["precision"] == p]
        both = [r for r in rs if "speedup" in r]
        ours = [r for r in rs if "ours" in r]
        cu = [r for r in rs if "cudnn" in r]
        pf = [(r["ours"]["pct_floor"], r["case"], r["layout"]) for r in ours]
        errs = [r["ours"]["rel_err"] for r in ours if r["ours"]["rel_err"] is not None]
        mems = [r["ours"]["extra_mem_frac"] for r in ours if r["ours"]["extra_mem_frac"] is not None]
        cpf = [r["cudnn"]["pct_floor"] for r in cu]
        out[p] = dict(
            configurations=len(rs), measured=len(both),
            geomean_speedup=geomean([r["speedup"] for r in both]),
            faster_than_cudnn=sum(r["speedup"] > 1 for r in both),
            min_pct_floor=min(pf)[0] if pf else None,
            min_pct_floor_at=f"case {min(pf)[1]} {min(pf)[2]}" if pf else None,
            max_rel_err=max(errs) if errs else None,
            max_extra_mem_frac=max(mems) if mems else None,
            cudnn_pct_floor_range=[min(cpf), max(cpf)] if cpf else None,
        )
    return out


def summary_lines(summary: dict) -> list[str]:
    lines = []
    for p, s in summary.items():
        g = s["geomean_speedup"]
        line = (f"{p:<4}: geomean speedup {_g(g, '.3g')}x, faster than tuned cuDNN in "
                f"{s['faster_than_cudnn']}/{s['measured']}, min % of floor "
                f"{_g(s['min_pct_floor'], '.3g')}")
        if s["min_pct_floor_at"]:
            line += f" ({s['min_pct_floor_at']})"
        line += f", max err {_g(s['max_rel_err'], '.1e')}"
        if s["max_extra_mem_frac"] is not None:
            line += f", max extra mem {100 * s['max_extra_mem_frac']:.3g} % of output"
        if s["cudnn_pct_floor_range"]:
            lo, hi = s["cudnn_pct_floor_range"]
            line += f"; cuDNN at {lo:.3g}-{hi:.3g} % of floor"
        if s["measured"] < s["configurations"]:
            line += f" [{s['configurations'] - s['measured']} not measured]"
        lines.append(line)
    return lines


def meta_lines(meta: dict, ceilings: dict | None) -> list[str]:
    lines = [f"device: {meta['device_name']} ({meta['device']}), {meta['date_utc']}",
             f"torch {meta['torch']}, CUDA {meta['cuda']}, cuDNN {meta['cudnn']}, "
             f"baseline {meta['baseline']}"]
    if meta.get("shrink", 1) > 1:
        lines.append(f"SHRUNK spatial sizes (/{meta['shrink']}): not the suite's shapes")
    if ceilings:
        r = ceilings["matmul_flops_per_s"]
        lines.append("ceilings: copy {:.3g} TB/s; matmul ".format(ceilings["copy_bytes_per_s"] / 1e12)
                     + ", ".join(f"{k} {v / 1e12:.4g}" for k, v in r.items()) + " TFLOP/s")
    return lines


def _clean(v):
    """JSON-safe: non-finite floats become strings."""
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


def write_json(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(_clean(doc), indent=1, allow_nan=False) + "\n")
    tmp.replace(path)


def write_markdown(path: Path, doc: dict, with_default: bool) -> None:
    lines = ["# inductor_convt3d bench", ""] + [f"- {x}" for x in meta_lines(doc["meta"],
                                                                          doc["ceilings"])]
    lines += ["", markdown_table(doc["results"], with_default), ""]
    lines += [f"- {x}" for x in summary_lines(doc["summary"])]
    path.write_text("\n".join(lines) + "\n")


def write_png(path: Path, doc: dict) -> str:
    """One row per precision: % of roofline floor (ours and cuDNN) and speedup, per case and
    layout. Returns a message; skips when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ("matplotlib is not installed: no PNG "
                "(pip install 'inductor_convt3d[plot]' or pip install matplotlib)")
    rows = [r for r in doc["results"] if "ours" in r or "cudnn" in r]
    precs = list(dict.fromkeys(r["precision"] for r in rows))
    layouts = list(dict.fromkeys(r["layout"] for r in rows))
    if not rows:
        return "no measurements: no PNG"
    cases = sorted({r["case"] for r in rows})
    pos = range(len(cases))
    fig, axes = plt.subplots(len(precs), 2, figsize=(14, 3.2 * len(precs)), squeeze=False)
    width = 0.8 / (2 * len(layouts))
    for i, p in enumerate(precs):
        ax_f, ax_s = axes[i]
        for j, lay in enumerate(layouts):
            by_case = {r["case"]: r for r in rows if r["precision"] == p and r["layout"] == lay}
            for k, (key, label, color) in enumerate((("ours", "ours", "tab:blue"),
                                                     ("cudnn", "cuDNN", "tab:gray"))):
                xs = [x + (2 * j + k - len(layouts) + 0.5) * width for x in pos]
                ys = [_get(by_case.get(c, {}), key, "pct_floor") or 0 for c in cases]
                ax_f.bar(xs, ys, width, label=f"{label} {lay}", color=color,
                         hatch="//" if j else None, edgecolor="white" if j else None)
            xs = [x + (j - (len(layouts) - 1) / 2) * 0.8 / len(layouts) for x in pos]
            ys = [by_case.get(c, {}).get("speedup") or 0 for c in cases]
            ax_s.bar(xs, ys, 0.8 / len(layouts), label=lay, color="tab:blue",
                     hatch="//" if j else None, edgecolor="white" if j else None)
        ax_f.set_yscale("log")
        ax_f.axhline(100.0, color="k", lw=0.8)
        ax_f.axhline(50.0, color="k", lw=0.8, ls="--")  # the target for tf32 and bf16
        ax_f.set_ylabel("% of roofline floor")
        ax_f.set_title(f"{p}: % of roofline floor (higher is better; dashed: 50 %)")
        ax_s.set_yscale("log")
        ax_s.axhline(1.0, color="k", lw=0.8)
        ax_s.set_ylabel("cuDNN ms / ours ms")
        ax_s.set_title(f"{p}: speedup over tuned cuDNN")
        for ax in (ax_f, ax_s):
            ax.set_xticks(list(pos), [str(c) for c in cases])
            ax.set_xlabel("case")
            ax.legend(fontsize=7)
    m = doc["meta"]
    fig.suptitle(f"inductor_convt3d bench: {m['device_name']}, torch {m['torch']}, "
                 f"cuDNN {m['cudnn']}, {m['date_utc']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"wrote {path}"
