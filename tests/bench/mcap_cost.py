"""`make bench` table: what recording costs (mcap-record, docs/performance.md "MCAP recording").

One gateway with the synthetic rig at 50 bodies x 240 Hz and a vrpn-server relaying every update
(send on change) to one client that keeps up, measured without a recorder and then with an
mcap-record of each compression beside it (zstd at its default level and at level 1): the process's
CPU (every thread: the recorder's writer thread counts), samples recorded per second and bytes per
sample in the file. The recording's cost is the CPU it adds, shown as a share of the relay's CPU
without it. `h` is run.py (its table, stats, fmt_s, _drain_tcp, connect_retry)."""
import os
import tempfile
import threading
import time

BODIES, RATE = 50, 240
CONFIG = """gateway:
  id: bench-mcap
adapters:
  - name: synth
    type: synth
    rate_hz: {rate}
    bodies: {bodies}
    head: false
    hands: false
  - name: vrpn
    type: vrpn-server
    listen: "127.0.0.1:0"
    rate_hz: 0
"""
RECORDER = """  - name: rec
    type: mcap-record
    path: {path}
    compression: {comp}
"""
# the rows: key, compression, extra keys (zstd's default level, then level 1 for comparison)
RUNS = (("zstd", "zstd", ""), ("zstd_level1", "zstd", "    compression_level: 1\n"),
        ("lz4", "lz4", ""), ("none", "none", ""))


def process_cpu_s(pid):
    """CPU seconds of every thread of pid and of its main thread (the event loop: the reactor
    that runs the synth, the table, the vrpn-server and the recorder's tap), from
    /proc/<pid>/task/*/schedstat (ns)."""
    total = main = 0.0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                v = int(f.read().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            continue
        total += v
        main += v if int(t) == pid else 0.0
    return total, main


def one(o, h, comp, d, extra="", key=None):
    from xgtest import Gateway
    path = os.path.join(d, f"bench-{key or comp}.mcap")
    text = CONFIG.format(rate=RATE, bodies=BODIES)
    if comp:
        text += RECORDER.format(path=path, comp=comp) + extra
    secs = 1.0 if o.quick else 4.0
    n_win = 2 if o.quick else 4
    with Gateway(text) as gw:
        c = h.connect_retry(gw.port_of("vrpn"))
        stop = threading.Event()
        th = threading.Thread(target=h._drain_tcp, args=(c, stop, h.VRPN_COOKIE), daemon=True)
        th.start()
        gw.wait_counter("synth", "samples_in", BODIES * RATE // 2, timeout=30)
        cpu, loop, rec = [], [], []
        for _ in range(n_win):
            pid = gw.proc.pid
            r0 = gw.counters("rec")["samples_recorded"] if comp else 0
            t0, (c0, m0) = time.monotonic(), process_cpu_s(pid)
            time.sleep(secs / n_win)  # a measurement window, not a wait for the daemon
            t1, (c1, m1) = time.monotonic(), process_cpu_s(pid)
            r1 = gw.counters("rec")["samples_recorded"] if comp else 0
            cpu.append(100.0 * (c1 - c0) / (t1 - t0))
            loop.append(100.0 * (m1 - m0) / (t1 - t0))
            rec.append((r1 - r0) / (t1 - t0))
        dropped = gw.counters("rec")["samples_dropped"] if comp else 0
        stop.set()
        th.join(2)
        c.close()
        recorded = gw.counters("rec")["samples_recorded"] if comp else 0
    size = os.path.getsize(path) if comp else 0
    return {"cpu_percent": h.stats(cpu), "loop_cpu_percent": h.stats(loop), "samples_per_s": h.stats(rec) if comp else None,
            "bytes_per_sample": size / recorded if comp and recorded else None,
            "dropped": dropped}


def mcap_cost(o, avail, h):
    if not avail.get("vrpn-server") or not avail.get("mcap-record"):
        print("\n(mcap recording benchmark skipped: vrpn-server or mcap-record not built)")
        return None
    with tempfile.TemporaryDirectory(prefix="xrgate-bench-mcap-") as d:
        out = {"bodies": BODIES, "rate_hz": RATE, "relay": one(o, h, None, d)}
        for key, comp, extra in RUNS:
            out[key] = one(o, h, comp, d, extra, key)
    base = out["relay"]["cpu_percent"]["median"]
    lbase = out["relay"]["loop_cpu_percent"]["median"]
    rows = [["relay only (synth + vrpn-server)", h.fmt_s(out["relay"]["cpu_percent"], " %"),
             "", "", h.fmt_s(out["relay"]["loop_cpu_percent"], " %"), "", "", ""]]
    pct = lambda x: f"{100 * x:.1f} %" if x is not None else "n/a"  # noqa: E731
    for key, _, _ in RUNS:
        r = out[key]
        added = r["cpu_percent"]["median"] - base
        ladded = r["loop_cpu_percent"]["median"] - lbase
        r["added_cpu_percent"] = added
        r["added_share_of_relay"] = added / base if base > 0 else None
        r["loop_added_cpu_percent"] = ladded
        r["loop_added_share_of_relay"] = ladded / base if base > 0 else None
        label = {"zstd": "zstd (level -5)", "zstd_level1": "zstd, compression_level 1"}.get(key, key)
        rows.append([f"+ mcap-record, {label}", h.fmt_s(r["cpu_percent"], " %"),
                     f"{added:+.2f} %", pct(r["added_share_of_relay"]),
                     h.fmt_s(r["loop_cpu_percent"], " %"), pct(r["loop_added_share_of_relay"]),
                     h.fmt(r["samples_per_s"]["median"]), f"{r['bytes_per_sample']:.1f}"])
    h.table(f"12. MCAP recording: {BODIES} bodies x {RATE} Hz, CPU of the whole process",
            ["gateway", "CPU % median [min..max]", "added", "added / relay", "event loop CPU %",
             "loop added / relay", "samples/s", "bytes/sample"], rows,
            note="CPU of every thread over the windows (the recorder's writer thread included); "
                 "event loop: the main thread alone (the recorder's tap runs there); "
                 "bytes/sample: file size / samples recorded (both channels, /tf and lossless)")
    return out
