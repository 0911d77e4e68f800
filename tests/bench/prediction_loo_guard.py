"""Leave-one-out prediction guard, run by ctest as bench/prediction_loo_guard: the quick table of
docs/prediction.md ("Guarded under ctest" in "Prediction on kinds of motion it was not tuned on":
four takes and pooled x 30/120 Hz x skeleton/rigid, the default tuning, 30 Hz phase 0 only)
against bench_prediction_loo --quick, which computes every figure of it.

Fails when a figure is worse than the documented one by more than the margin: ratios to holding
by half a unit of the last digit printed plus 1 % of the value, shares worse than holding by
0.05 + 0.3 percentage points (as tests/bench/prediction_guard.py). Better by more than the
margin passes with a note: update the table from the benchmark in the same commit. Also fails
when the documented table lacks a measured row or the counts of joint-instants differ (the takes
or the benchmark changed, not the prediction).

Usage: prediction_loo_guard.py BENCH_BINARY DOCS_PREDICTION_MD (the comparison and the report:
tests/bench/guardlib.py)"""
import re
import sys

sys.dont_write_bytecode = True  # importing guardlib must not leave __pycache__ in the source tree
from guardlib import Guard, run_bench  # noqa: E402

REL = 0.01
SHARE_PTS = 0.3
SECTION = "### Guarded under ctest: the quick check"
ROW = re.compile(r"^\| ([\w+]+) \| (skeleton|rigid) \| (\d+) Hz \| ([\d.]+); ([\d.]+) \| "
                 r"([\d.]+); ([\d.]+) \| ([\d.]+) %; ([\d.]+) % \| (\d+) \|\s*$")
FIELDS = ("pos_mean_ratio", "pos_p95_ratio", "rot_mean_ratio", "rot_p95_ratio",
          "pos_worse_pct", "rot_worse_pct")


def parse_docs(path):
    rows, inside = {}, False
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                inside = line.strip() == SECTION
                continue
            m = ROW.match(line) if inside else None
            if m:
                rows[(m[1], m[2], int(m[3]))] = dict(zip(FIELDS, m.groups()[3:9]), n=m[10])
    return rows


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    bench, docs = sys.argv[1], sys.argv[2]
    documented = parse_docs(docs)
    if len(documented) != 20:
        raise SystemExit(f"{docs}: {len(documented)} rows under {SECTION!r}, expected 20")
    res = run_bench(bench, ["--quick"], "prediction_loo.json")
    guard = Guard(docs, REL, SHARE_PTS)
    for row in res["rows"]:
        key = (row["take"], row["mode"], round(row["rate_hz"]))
        if key not in documented:
            guard.fail(f"{key}: measured but not in {docs}")
            continue
        doc, fig = documented.pop(key), row["figures"]
        if int(doc["n"]) != fig["n"]:
            guard.fail(f"{key}: {fig['n']} joint-instants, documented {doc['n']} (the takes "
                       "or the benchmark changed, not the prediction)")
        got = {"pos_mean_ratio": fig["pos_mean_ratio"], "pos_p95_ratio": fig["pos_p95_ratio"],
               "rot_mean_ratio": fig["rot_mean_ratio"], "rot_p95_ratio": fig["rot_p95_ratio"],
               "pos_worse_pct": 100 * fig["pos_worse_share"],
               "rot_worse_pct": 100 * fig["rot_worse_share"]}
        for name in FIELDS:
            guard.figure(f"{key[0]} {key[1]} {key[2]} Hz {name}", name, doc[name], got[name])
    return guard.report("prediction loo guard", documented)


if __name__ == "__main__":
    sys.exit(main())
