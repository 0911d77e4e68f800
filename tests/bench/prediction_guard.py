"""Prediction guard (issue 39 item 4), run by ctest as bench/prediction_guard: the real-motion
table of docs/prediction.md ("Prediction on real motion", 27 rows: 30/60/120 Hz x 33/50/100 ms x
all/trunk/extremities) against bench_bvh_prediction --fast, which computes every figure of it
deterministically (the CMU walk replayed causally; only the timed figure is left out).

Fails when a figure of the prediction is worse than the documented one by more than the margin:
  - position and rotation mean error (mm, degrees) and the ratios to holding (mean; p95):
    documented value + half a unit of its last printed digit (rounding) + 1 % of it;
  - the shares of joint-instants worse than holding (position; rotation): documented + 0.05
    points (rounding) + 0.3 points.
The hold columns (the reference: the take and the benchmark's own forward kinematics, no product
code) must equal the documented ones within rounding, in both directions. A figure better than the
documented one by more than the margin passes with a note: docs/prediction.md is then out of date
(update the table from `make bench` in the same commit as the change).

Usage: prediction_guard.py BENCH_BINARY DOCS_PREDICTION_MD (the comparison and the report:
tests/bench/guardlib.py)"""
import re
import sys

sys.dont_write_bytecode = True  # importing guardlib must not leave __pycache__ in the source tree
from guardlib import Guard, half_unit, run_bench  # noqa: E402

REL = 0.01  # 1 % of a mean or ratio
SHARE_PTS = 0.3  # percentage points, shares worse than holding

ROW = re.compile(r"^\| (\d+) Hz \| (\d+) ms \| (all|trunk|extremities) \| (.+) \|\s*$")


def parse_docs(path):
    rows = {}
    in_section = False
    with open(path) as f:
        for line in f:
            if line.startswith("## "):
                in_section = line.strip() == "## Prediction on real motion"
                continue
            m = ROW.match(line) if in_section else None
            if not m:
                continue
            rate, horizon, group, rest = int(m[1]), int(m[2]), m[3], m[4]
            cells = [c.strip() for c in rest.split("|")]
            if len(cells) != 5:
                raise SystemExit(f"{path}: cannot read the row {line.strip()!r}")
            pm = re.fullmatch(r"([\d.]+) \(([\d.]+)\)", cells[0])
            rm = re.fullmatch(r"([\d.]+) \(([\d.]+)\)", cells[2])
            pr = re.fullmatch(r"([\d.]+); ([\d.]+)", cells[1])
            rr = re.fullmatch(r"([\d.]+); ([\d.]+)", cells[3])
            wr = re.fullmatch(r"([\d.]+) %; ([\d.]+) %", cells[4])
            if not (pm and rm and pr and rr and wr):
                raise SystemExit(f"{path}: cannot read the row {line.strip()!r}")
            rows[(rate, horizon, group)] = {
                "pos_mean_mm": pm[1], "hold_pos_mean_mm": pm[2],
                "pos_ratio_mean": pr[1], "pos_ratio_p95": pr[2],
                "rot_mean_deg": rm[1], "hold_rot_mean_deg": rm[2],
                "rot_ratio_mean": rr[1], "rot_ratio_p95": rr[2],
                "pos_worse_pct": wr[1], "rot_worse_pct": wr[2],
            }
    return rows


def measured(cell):
    return {
        "pos_mean_mm": cell["pos_mean_m"] * 1e3, "hold_pos_mean_mm": cell["hold_pos_mean_m"] * 1e3,
        "pos_ratio_mean": cell["pos_mean_m"] / cell["hold_pos_mean_m"],
        "pos_ratio_p95": cell["pos_p95_m"] / cell["hold_pos_p95_m"],
        "rot_mean_deg": cell["rot_mean_deg"], "hold_rot_mean_deg": cell["hold_rot_mean_deg"],
        "rot_ratio_mean": cell["rot_mean_deg"] / cell["hold_rot_mean_deg"],
        "rot_ratio_p95": cell["rot_p95_deg"] / cell["hold_rot_p95_deg"],
        "pos_worse_pct": 100 * cell["pos_worse_share"], "rot_worse_pct": 100 * cell["rot_worse_share"],
    }


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    bench, docs = sys.argv[1], sys.argv[2]
    documented = parse_docs(docs)
    if len(documented) != 27:
        raise SystemExit(f"{docs}: {len(documented)} rows of the real-motion table, expected 27")
    res = run_bench(bench, ["--fast"], "bvh_prediction.json")
    guard = Guard(docs, REL, SHARE_PTS)
    for g in res["grid"]:
        rate, horizon = round(g["rate_hz"]), round(g["horizon_ms"])
        for group in ("all", "trunk", "extremities"):
            key = (rate, horizon, group)
            if key not in documented:
                guard.fail(f"{rate} Hz {horizon} ms {group}: not in {docs}")
                continue
            doc, got = documented.pop(key), measured(g[group])
            for name, text in doc.items():
                where = f"{rate} Hz {horizon} ms {group} {name}"
                if name.startswith("hold_"):  # the reference: equal within rounding, both ways
                    guard.checked += 1
                    if abs(got[name] - float(text)) > half_unit(text) + 1e-9:
                        guard.fail(f"{where}: {got[name]:.4g}, documented {text} (the reference "
                                   "changed: take or benchmark, not the prediction)")
                    continue
                guard.figure(where, name, text, got[name])
    return guard.report("prediction guard", documented)


if __name__ == "__main__":
    sys.exit(main())
