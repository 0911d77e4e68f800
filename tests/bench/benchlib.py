"""Helpers of the benchmark harness (run.py and the scripts beside it): statistics and table
formatting, finding and running the bench_* programs, a daemon's CPU time, RSS and counters."""
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("XG_BUILD_DIR") or os.path.join(HERE, "..", "..", "build")
CLK_TCK = os.sysconf("SC_CLK_TCK")
sys.dont_write_bytecode = True  # importing xgtest must not leave __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from xgtest import die_with_parent  # noqa: E402 (after sys.path is set)

def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---- statistics ----

def stats(values):
    """median / min / max / n of the finite values (None when there are none)."""
    v = [x for x in values if x is not None and math.isfinite(x)]
    if not v:
        return None
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)}


def med(s):
    return None if s is None else s["median"]


def ratio(a, b):
    if a is None or b is None or not b:
        return None
    return a / b


def fmt(x, unit="", digits=3):
    """Human number: 1.23M, 456k, 12.3."""
    if x is None:
        return "n/a"
    ax = abs(x)
    div, suffix = 1.0, ""
    for d, sfx in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if ax >= d:
            div, suffix = d, sfx
            break
    v = x / div
    if digits <= 2:
        text = f"{v:.0f}" if abs(v) >= 10 else f"{v:.1f}"
    else:
        text = f"{v:.0f}" if abs(v) >= 100 else f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}"
    return f"{text}{suffix}{unit}"


def fmt_s(s, unit="", digits=3):
    """median [min..max]."""
    if s is None:
        return "n/a"
    return f"{fmt(s['median'], unit, digits)} [{fmt(s['min'], '', 2)}..{fmt(s['max'], '', 2)}]"


def rgmp_definition_encoders(codec_out):
    """The hand-written RGMP definition encoder against the same document written with jansson
    (bench_codec rgmp_def_50 / rgmp_def_50_jansson), and both against rgmp-server's egress: per
    change of the entity set the server encodes the definition twice (size, then frame); the
    share is jansson's extra time over one second of 100 data frames (rgmp_data_50) plus that
    change with the hand-written encoder. None when a case is missing."""
    try:
        hand = 1e6 / codec_out["rgmp_def_50"]["encode_per_s"]["median"]
        jans = 1e6 / codec_out["rgmp_def_50_jansson"]["encode_per_s"]["median"]
        data = 1e6 / codec_out["rgmp_data_50"]["encode_per_s"]["median"]
    except (KeyError, TypeError, ZeroDivisionError):
        return None
    second = 100 * data + 2 * hand
    return {"hand_us": hand, "jansson_us": jans, "data_us": data, "jansson_to_hand": jans / hand,
            "jansson_extra_share": 2 * (jans - hand) / second}


def table(title, header, rows, note=None):
    print()
    print(f"== {title}")
    widths = [len(h) for h in header]
    for r in rows:
        for i, c in enumerate(r):
            widths[i] = max(widths[i], len(str(c)))
    line = "  ".join(h.ljust(widths[i]) for i, h in enumerate(header))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(str(c).ljust(widths[i]) for i, c in enumerate(r)))
    if note:
        for n in note.split("\n"):
            print(f"   {n}")


# ---- helpers ----

def bvh_prediction(out_dir):
    """Prediction quality on real motion (issues 7 and 23: the CMU walk replayed causally at
    30/60/120 Hz, predicted 33/50/100 ms ahead): bench_bvh_prediction prints its own table and
    writes bvh_prediction.json."""
    try:
        exe = prog("bench_bvh_prediction")
    except SystemExit as e:
        print(f"\n(bvh prediction benchmark not built: {e})")
        return None
    p = subprocess.run([exe, out_dir], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=300, preexec_fn=die_with_parent())
    print("\n" + p.stdout.rstrip())
    if p.returncode != 0:
        print(f"(bench_bvh_prediction failed: {p.stderr.strip()})")
        return None
    try:
        with open(os.path.join(out_dir, "bvh_prediction.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def prediction_loo(out_dir):
    """Prediction on four real takes, leave-one-out (docs/prediction.md, "Prediction on kinds of
    motion it was not tuned on"): bench_prediction_loo --time prints its own table and writes
    prediction_loo.json."""
    try:
        exe = prog("bench_prediction_loo")
    except SystemExit as e:
        print(f"\n(leave-one-out prediction benchmark not built: {e})")
        return None
    p = subprocess.run([exe, "--time", out_dir], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=1200, preexec_fn=die_with_parent())
    print("\n" + p.stdout.rstrip())
    if p.returncode != 0:
        print(f"(bench_prediction_loo failed: {p.stderr.strip()})")
        return None
    try:
        with open(os.path.join(out_dir, "prediction_loo.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def prog(name):
    for d in (os.path.join(BUILD, "tests"), BUILD):
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    raise SystemExit(f"run.py: {name} not found under {BUILD} (build the bench targets first)")


def run_json(name, args, timeout=600, pass_fds=()):
    cmd = [prog(name)] + [str(a) for a in args]
    log(f"run: {' '.join(cmd)}")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout, pass_fds=pass_fds, preexec_fn=die_with_parent())
    if p.returncode != 0:
        raise SystemExit(f"run.py: {name} failed ({p.returncode}):\n{p.stderr}")
    return json.loads(p.stdout)


def connect_retry(port, timeout=10.0):
    """TCP connect to 127.0.0.1:port, retrying while the daemon's adapters start."""
    end = time.monotonic() + timeout
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=5)
        except ConnectionRefusedError:
            if time.monotonic() > end:
                raise
            time.sleep(0.05)


def proc_cpu_s(pid):
    """CPU seconds of process pid: /proc/<pid>/schedstat (ns, the main thread: xrgate has one),
    else utime + stime from /proc/<pid>/stat (10 ms ticks)."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        pass
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime (fields 14, 15)


def proc_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def windows(gw, names, n, secs):
    """Measure n consecutive windows of secs on a running gateway: per window, the per-second
    rate of every counter of the named adapters and the daemon's CPU percent (user + sys)."""
    pid = gw.proc.pid
    out = []
    c0 = {a: counters(gw, a) for a in names}
    t0, cpu0 = time.monotonic(), proc_cpu_s(pid)
    for _ in range(n):
        time.sleep(secs)
        c1 = {a: counters(gw, a) for a in names}
        t1, cpu1 = time.monotonic(), proc_cpu_s(pid)
        dt = t1 - t0
        w = {a: {k: (v - c0[a].get(k, 0)) / dt for k, v in c1[a].items()
                 if isinstance(v, (int, float))} for a in names}
        w["cpu_percent"] = 100.0 * (cpu1 - cpu0) / dt
        out.append(w)
        c0, t0, cpu0 = c1, t1, cpu1
    return out


def counters(gw, name):
    for a in gw.get_json("/api/adapters")["adapters"]:
        if a["name"] == name:
            return a["counters"]
    return {}
