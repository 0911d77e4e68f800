#!/usr/bin/env python3
"""A/B comparison of two xrgate binaries on the same machine, interleaved (issue 15: "make bench
shows no regression beyond noise"). Not part of `make bench`.

Runs `make bench`'s real-daemon measurements -- table 3b (synth -> rtp + rgmp-server +
vrpn-server, saturation ladder), table 3c (VRPN relay throughput and CPU per update), table 4
(loopback latency, VRPN in, four egress) and table 9 (the VRPN relay against the direct path) --
with binary A, then B, then A ... for --rounds rounds (the order alternates: A B, B A, A B ...),
and prints, per figure, the median of each binary and the ratio B / A. The bench programs
(bench_loopback, bench_relay) come from the build directory given by XG_BUILD_DIR; only the
daemon changes. Build the old commit in a separate worktree, e.g.

    git worktree add --detach /tmp/xrgate-old <commit>
    cmake -S /tmp/xrgate-old -B /tmp/xrgate-old/build && \\
      cmake --build /tmp/xrgate-old/build --target xrgate -j2
    XG_BUILD_DIR=$PWD/build python3 tests/bench/ab.py --a /tmp/xrgate-old/build/xrgate \\
      --b build/xrgate --rounds 3 --out ab.json
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.dont_write_bytecode = True

import run  # noqa: E402
import relay  # noqa: E402
import xgtest  # noqa: E402


def use(binary):
    """Point every helper at this daemon."""
    binary = os.path.abspath(binary)
    os.environ["XRGATE_BIN"] = binary
    run.XRGATE = binary
    xgtest.BIN = binary


def figures(o, avail):
    """One round of the real-daemon measurements: a flat dict of figures."""
    f = {}
    pd = run.pipeline_daemon(o, avail)
    f["pipeline.updates_per_s"] = pd["updates_per_s"]
    f["pipeline.cpu_us_per_update (best step)"] = pd["best"]["cpu_us_per_update"]
    for st in pd["steps"]:
        f[f"pipeline.{st['bodies']} bodies cpu_us_per_update"] = st["cpu_us_per_update"]
    vd = run.vrpn_pipeline_daemon(o, avail)
    for st in vd["steps"]:
        f[f"vrpn_loopback.{st['sensors']} sensors updates_per_s"] = st["updates_per_s"]
        f[f"vrpn_loopback.{st['sensors']} sensors cpu_us_per_update"] = st["cpu_us_per_update"]
    ld = run.latency_daemon(o, avail)
    for eg, v in ld["latency_us"].items():
        for q in ("p50", "p99"):
            f[f"latency_loopback.{eg}.{q}"] = run.med(run.stats(v[q]))
    f["latency_loopback.cpu_us_per_frame"] = ld["cpu_us_per_frame"]
    rel = relay.relay_bench(o, avail, run.prog, run.log)
    for sc, r in (rel or {}).items():
        if not r:
            continue
        for q in ("p50", "p99"):
            f[f"relay.{sc}.added_us.{q}"] = r["added_us"][q]
        f[f"relay.{sc}.cpu_us_per_update"] = r["gateway_cpu_us_per_update"]
        f[f"relay.{sc}.idle_cpu_percent_main_thread"] = r["idle_cpu_percent_main_thread"]
    return f


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", required=True, help="xrgate binary A (the old one)")
    ap.add_argument("--b", required=True, help="xrgate binary B (the new one)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3, help="repetitions inside each measurement")
    ap.add_argument("--out", default=None)
    o = ap.parse_args()
    o.quick, o.ms = False, 300
    use(o.a)
    avail = run.adapter_types_available()
    runs = {"a": [], "b": []}
    load = [os.getloadavg()[0]]
    for r in range(o.rounds):
        for side in (("a", "b") if r % 2 == 0 else ("b", "a")):
            use(getattr(o, side))
            run.log(f"ab: round {r + 1}/{o.rounds}, binary {side.upper()}")
            runs[side].append(figures(o, avail))
            load.append(os.getloadavg()[0])
    rows = []
    for key in runs["a"][0]:
        a = [x[key] for x in runs["a"] if x.get(key) is not None]
        b = [x[key] for x in runs["b"] if x.get(key) is not None]
        ma = statistics.median(a) if a else None
        mb = statistics.median(b) if b else None
        rows.append({"figure": key, "a_median": ma, "b_median": mb,
                     "b_over_a": mb / ma if ma and mb is not None else None,
                     "a": a, "b": b})
    print(f"\nA = {o.a}\nB = {o.b}\n{o.rounds} rounds, interleaved; load average "
          f"{min(load):.1f}..{max(load):.1f}\n")
    print(f"{'figure':58} {'A median':>12} {'B median':>12} {'B / A':>7}   A..., B...")
    for x in rows:
        fa = "n/a" if x["a_median"] is None else f"{x['a_median']:.4g}"
        fb = "n/a" if x["b_median"] is None else f"{x['b_median']:.4g}"
        ratio = "n/a" if x["b_over_a"] is None else f"{x['b_over_a']:.2f}"
        spread = " ".join(f"{v:.3g}" for v in x["a"]) + " | " + " ".join(f"{v:.3g}" for v in x["b"])
        print(f"{x['figure']:58} {fa:>12} {fb:>12} {ratio:>7}   {spread}")
    if o.out:
        with open(o.out, "w") as f:
            json.dump({"a": o.a, "b": o.b, "rounds": o.rounds, "load": load, "figures": rows,
                       "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, f,
                      indent=1)


if __name__ == "__main__":
    main()
