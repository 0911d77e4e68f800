"""The mechanics the prediction guards share (tests/bench/prediction_guard.py,
prediction_loo_guard.py): run a benchmark into a temporary folder and read its JSON, compare
each measured figure with the one documented in docs/prediction.md within a margin, and report.
Each guard keeps its own table parser and margins (REL, SHARE_PTS).

A figure fails when it is worse than the documented one by more than the margin: half a unit of
the last digit printed (rounding) plus `rel` of the value, or plus `share_pts` percentage points
for a share (a name ending in _pct). Better by more than the margin passes with a note: the
table is then out of date (update it from the benchmark in the same commit as the change)."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from xgtest import die_with_parent  # noqa: E402 (after sys.path is set)


def half_unit(text):
    """Half a unit of the last digit printed in `text` ("7.05" -> 0.005, "55.9" -> 0.05)."""
    frac = text.split(".")[1] if "." in text else ""
    return 0.5 * 10 ** -len(frac)


def run_bench(bench, args, json_name, timeout=600):
    """Run `bench *args OUT_DIR` (killed with this process) and return the JSON it wrote to
    OUT_DIR/json_name; exits naming the benchmark, its exit code and stderr when it fails."""
    with tempfile.TemporaryDirectory() as out:
        p = subprocess.run([bench, *args, out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout, preexec_fn=die_with_parent())
        if p.returncode != 0:
            raise SystemExit(f"{bench} {' '.join(args)} failed ({p.returncode}): "
                             f"{p.stderr.strip()}")
        with open(os.path.join(out, json_name)) as f:
            return json.load(f)


class Guard:
    """Collects the verdicts of one guard run against `docs` (the documented table's file)."""

    def __init__(self, docs, rel, share_pts):
        self.docs, self.rel, self.share_pts = docs, rel, share_pts
        self.failures, self.notes, self.checked = [], [], 0

    def fail(self, msg):
        self.failures.append(msg)

    def figure(self, where, name, text, have):
        """Measured `have` against the documented `text` of figure `name` (a share when it ends
        in _pct): a failure when worse by more than the margin, a note when better."""
        want = float(text)
        margin = half_unit(text) + (self.share_pts if name.endswith("_pct") else self.rel * want)
        self.checked += 1
        if have > want + margin:
            self.fail(f"{where}: {have:.4g}, documented {text} (margin {margin:.3g}): worse")
        elif have < want - margin:
            self.notes.append(f"{where}: {have:.4g}, documented {text}: better, update "
                              f"{os.path.basename(self.docs)}")

    def report(self, label, left_over=()):
        """Fails each documented row key in `left_over` (not measured), prints the notes and
        failures and a summary line starting with `label`; returns the exit code (1 on any
        failure)."""
        for key in left_over:
            self.fail(f"{key}: documented but not measured")
        for n in self.notes:
            print("note:", n)
        if self.failures:
            for msg in self.failures:
                print("FAIL:", msg)
            print(f"{label}: {len(self.failures)} problems in {self.checked} figures off the "
                  f"documented table ({self.docs})")
            return 1
        print(f"{label}: {self.checked} figures within the margin of {self.docs}")
        return 0
