"""Benchmark (issue 30, defect 1): /healthz latency while one DDS peer floods the dds adapter.

Two floods from an independent publisher (tests/dds/dds_peer.c `bench_pub`, reliable QoS):
  big:  one tf2_msgs/TFMessage of 20,000 transforms 5 times a second,
  many: 2,000 messages a second of 20 transforms each.
Meanwhile a client on loopback asks GET /healthz back to back (a fresh connection each time) and
the script prints the latency percentiles (the goal: p99 within 20 ms) with the transforms read
and the wake-ups that stopped at the budget. Without a flood as the baseline.

Usage: python3 tests/bench/dds_flood.py [--seconds S] (after `make build`)."""
import argparse
import json
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

FLOODS = {"idle": None, "big": (20000, 5), "many": (20, 2000)}


def _pct(v, q):
    return v[min(len(v) - 1, int(len(v) * q))] * 1e3 if v else float("nan")


def run(kind, secs):
    import ddslib as dl
    from xgtest import Gateway
    d = dl.domain()
    cfg = dl.reader_config(d, "    qos: reliable\n")
    with Gateway(cfg, env=dl.ENV) as g, dl.Peer(d) as p:
        p.send("qos reliable")
        p.send("tf world w0 0 0 0 0 0 0 1 -1 0")
        p.send("wait_match rt/tf 10000", timeout=20)
        lat, stop = [], threading.Event()

        def poll():
            while not stop.is_set():
                t = time.monotonic()
                g.get("/healthz")
                lat.append(time.monotonic() - t)

        th = threading.Thread(target=poll, daemon=True)
        th.start()
        if FLOODS[kind]:
            n, hz = FLOODS[kind]
            p.send(f"bench_pub {n} {hz} {secs}", timeout=secs + 120)
        else:
            time.sleep(secs)
        stop.set()
        th.join(10)
        c = g.adapter("ros")["counters"]
        g.stop()
    lat.sort()
    return {"flood": kind, "requests": len(lat), "p50_ms": round(_pct(lat, 0.5), 2),
            "p99_ms": round(_pct(lat, 0.99), 2), "max_ms": round(lat[-1] * 1e3, 2),
            "transforms_in": c["transforms_in"], "budget_yields": c["budget_yields"],
            "wakeups": c["wakeups"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=4.0)
    o = ap.parse_args()
    import ddslib as dl
    if not os.path.exists(dl.PEER):
        print("dds adapter or tests/dds_peer not built")
        return 77
    for kind in FLOODS:
        r = run(kind, o.seconds)
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
