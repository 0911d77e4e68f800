#!/usr/bin/env python3
"""xrgate benchmark harness: what `make bench` runs.

Runs the tests/bench/bench_* programs and a few real-daemon measurements, prints one table per
item (baseline, codecs, pipeline, latency, scale, prediction) and writes bench-results.json at
the top of the build directory (docs/performance.md, "bench-results.json"). Figures are medians over repetitions with their
spread (min..max), each next to a baseline measured in the same run as a ratio. Nothing here
asserts a threshold: the numbers are for people (docs/performance.md).

Environment: XRGATE_BIN (the daemon), XG_BUILD_DIR (where bench_* are built and where
bench-results.json goes). Options: --quick (smoke mode, < 20 s: few repetitions, short runs, small
sizes), --reps N, --ms M (one timed repetition), --out FILE.
"""
import argparse
import json
import os
import platform
import selectors
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # importing xgtest must not leave __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from benchlib import (BUILD, bvh_prediction, connect_retry, counters, fmt, fmt_s, log, med,  # noqa: E402
                      prediction_loo, proc_cpu_s, proc_rss_kib, prog, ratio,
                      rgmp_definition_encoders, run_json, stats, table, windows)
XRGATE = os.environ.get("XRGATE_BIN") or os.path.join(BUILD, "xrgate")
os.environ.setdefault("XRGATE_BIN", XRGATE)
EGRESS = ("vrpn", "rgmp", "less", "rtp")  # latency_us.<egress> keys
EGRESS_TYPE = {"vrpn": "vrpn-server", "rgmp": "rgmp-server", "less": "less", "rtp": "rtp"}
from dds_load import dds_load  # noqa: E402 (after sys.path is set)
from egress_cost import egress_cost  # noqa: E402
from mcap_cost import mcap_cost  # noqa: E402
from relay import print_relay, relay_bench  # noqa: E402
VRPN_COOKIE = b"vrpn: ver. 07.38  0" + b"\0" * 5  # what a TCP-only VRPN client sends first


def adapter_types_available():
    """Which adapter types this xrgate knows: ask `xrgate --check` for each."""
    avail = {}
    with tempfile.TemporaryDirectory() as d:
        for t in ("vrpn-server", "vrpn-client", "rgmp-server", "rgmp-client", "rtp", "less",
                  "dds", "mcap-record"):
            path = os.path.join(d, "c.yaml")
            with open(path, "w") as f:
                f.write(f"adapters:\n  - name: x\n    type: {t}\n")
            p = subprocess.run([XRGATE, "--check", "--config", path], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=20)
            avail[t] = "unknown adapter type" not in p.stdout
    return avail


# ---- items ----

def bench_baseline(o):
    args = ["--reps", o.reps, "--ms", o.ms] + (["--quick"] if o.quick else [])
    return run_json("bench_baseline", args)


def merge_baselines(b1, b2):
    """Pool the repetitions of the baseline runs at the start and at the end."""
    out = {"udp_pps_mode": b1["udp_pps_mode"], "rtt_mode": b1["rtt_mode"]}
    for k in ("udp_pps", "udp_pps_mmsg"):
        out[k] = {size: stats(b1[k][size] + (b2[k][size] if b2 else [])) for size in b1[k]}
    for k in ("udp_rtt_us", "tcp_rtt_us", "thread_wake_us"):
        out[k] = {q: stats(b1[k][q] + (b2[k][q] if b2 else [])) for q in b1[k]}
    return out


def scale_daemon(o, avail):
    """10k synth entities at 60 Hz through the real daemon: achieved rates, CPU, RSS."""
    from xgtest import Gateway
    n = 1000 if o.quick else 10000
    secs = 1.0 if o.quick else 4.0
    n_win = 2 if o.quick else 4
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # bound, never read: kernel drops
    sink.bind(("127.0.0.1", 0))
    rtp_dest = sink.getsockname()[1]

    def config(bodies):
        c = ("gateway:\n  id: bench\nadapters:\n"
             f"  - name: synth\n    type: synth\n    bodies: {bodies}\n    rate_hz: 60\n"
             "    head: false\n    hands: false\n")
        if avail.get("rtp"):
            c += ("  - name: rtp\n    type: rtp\n    bind: \"127.0.0.1:0\"\n"
                  f"    destinations: [\"127.0.0.1:{rtp_dest}\"]\n    rate_hz: 60\n"
                  "    refresh_ms: 0\n    rtcp_interval_ms: 0\n")
        return c

    res = {}
    for label, bodies in (("small", 1), ("big", n)):
        with Gateway(config(bodies)) as gw:
            pid = gw.proc.pid
            time.sleep(0.5 if o.quick else 1.0)  # warm up: entities created, buffers grown
            names = ["synth"] + (["rtp"] if avail.get("rtp") else [])
            ws = windows(gw, names, n_win, secs / n_win)
            res[label] = {
                "entities": bodies,
                "rss_kib": proc_rss_kib(pid),
                "samples_in_per_s": stats([w["synth"]["samples_in"] for w in ws]),
                "samples_out_per_s": stats([w["rtp"]["samples_out"] for w in ws])
                if "rtp" in names else None,
                "cpu_percent": stats([w["cpu_percent"] for w in ws]),
            }
    sink.close()
    big, small = res["big"], res["small"]
    offered = 60.0 * n
    upd, cpu = med(big["samples_in_per_s"]), med(big["cpu_percent"])
    return {
        "entities": n,
        "rate_hz": 60,
        "windows": n_win,
        "offered_updates_per_s": offered,
        "achieved_updates_per_s": upd,
        "achieved_updates_per_s_spread": big["samples_in_per_s"],
        "achieved_ratio": upd / offered,
        "rtp_samples_out_per_s": med(big["samples_out_per_s"]),
        "cpu_percent": cpu,
        "cpu_percent_spread": big["cpu_percent"],
        "cpu_us_per_update": cpu / 100.0 * 1e6 / upd if upd else None,
        "rss_mib": big["rss_kib"] / 1024.0,
        "rss_mib_1_entity": small["rss_kib"] / 1024.0,
        "bytes_per_entity": (big["rss_kib"] - small["rss_kib"]) * 1024.0 / (n - 1),
        "egress": "rtp (60 Hz, to an unread loopback socket)" if avail.get("rtp") else "none",
    }


def rgmp_frames(buf):
    """Split RGMP frames off buf: returns (count of data frames, rest)."""
    n = 0
    off = 0
    while len(buf) - off >= 8:
        prefix, ln = struct.unpack_from("<II", buf, off)
        if len(buf) - off < 8 + ln:
            break
        if prefix == 2:
            n += 1
        off += 8 + ln
    return n, buf[off:]


def vrpn_reports(buf, state):
    """Split VRPN messages off a TCP-only client's buffer (after the 24-byte cookie): returns
    (count of Pos_Quat-sized messages, rest). state["cookie"] says the cookie was consumed."""
    off = 0
    if not state.get("cookie"):
        if len(buf) < 24:
            return 0, buf
        off, state["cookie"] = 24, True
    n = 0
    while len(buf) - off >= 24:
        length = struct.unpack_from(">I", buf, off)[0]
        size = 24 + ((length - 24 + 7) & ~7)
        if len(buf) - off < size:
            break
        if length == 24 + 64:  # a Pos_Quat body is 64 bytes (Velocity 72)
            n += 1
        off += size
    return n, buf[off:]


def clients_daemon(o, avail, adapter):
    """N clients on one server adapter (rgmp-server or vrpn-server): is every client at rate?"""
    from xgtest import Gateway
    if not avail.get(adapter):
        return None
    n_clients = 10 if o.quick else 100
    secs = 1.0 if o.quick else 3.0
    rate = 60
    vrpn = adapter == "vrpn-server"
    bodies = 5 if vrpn else 50  # + head and two hands
    entities = bodies + 3
    cfg = ("gateway:\n  id: bench\nadapters:\n"
           f"  - name: synth\n    type: synth\n    bodies: {bodies}\n    rate_hz: 120\n"
           f"  - name: srv\n    type: {adapter}\n    listen: \"127.0.0.1:0\"\n"
           f"    rate_hz: {rate}\n    max_clients: {n_clients + 8}\n")
    with Gateway(cfg) as gw:
        pid = gw.proc.pid
        port = gw.port_of("srv")
        sel = selectors.DefaultSelector()
        socks = []
        for i in range(n_clients):
            s = connect_retry(port)
            if vrpn:
                s.sendall(VRPN_COOKIE)
            s.setblocking(False)
            socks.append(s)
            sel.register(s, selectors.EVENT_READ, i)
        bufs = [b""] * n_clients
        states = [{} for _ in range(n_clients)]
        counts = [0] * n_clients
        # settle: definitions / descriptions arrive, then count over `secs`
        settle_end = time.monotonic() + 0.5
        measuring = False
        t0 = cpu0 = None
        end = None
        while True:
            now = time.monotonic()
            if not measuring and now >= settle_end:
                measuring, t0, cpu0 = True, now, proc_cpu_s(pid)
                counts = [0] * n_clients
                end = now + secs
            if measuring and now >= end:
                break
            for key, _ in sel.select(timeout=0.05):
                i = key.data
                try:
                    data = key.fileobj.recv(1 << 20)
                except BlockingIOError:
                    continue
                if not data:
                    sel.unregister(key.fileobj)
                    continue
                if vrpn:
                    c, bufs[i] = vrpn_reports(bufs[i] + data, states[i])
                else:
                    c, bufs[i] = rgmp_frames(bufs[i] + data)
                counts[i] += c
        t1 = time.monotonic()
        cpu1 = proc_cpu_s(pid)
        rss = proc_rss_kib(pid)
        ctr = counters(gw, "srv")
        for s in socks:
            s.close()
    # per-client updates per entity per second: RGMP sends one data frame per tick with every
    # entity; VRPN one Pos_Quat per updated sensor per tick
    rates = [c / (t1 - t0) / (entities if vrpn else 1) for c in counts]
    return {
        "clients": n_clients,
        "adapter": adapter,
        "entities": entities,
        "rate_hz": rate,
        "measure": ("Pos_Quat reports per entity per second" if vrpn
                    else "data frames per second (every entity in each)"),
        "client_rate_hz": stats(rates),
        "min_ratio_to_rate": min(rates) / rate,
        "clients_at_rate": sum(1 for r in rates if r >= 0.9 * rate),
        "cpu_percent": 100.0 * (cpu1 - cpu0) / (t1 - t0),
        "rss_mib": rss / 1024.0,
        "dropped_slow": ctr.get("clients_dropped_slow"),
    }


def _drain_tcp(sock, stop, hello=b""):
    """Send hello, then read and discard everything from sock until stop is set (a client that
    keeps up)."""
    if hello:
        sock.sendall(hello)
    sock.settimeout(0.1)
    while not stop.is_set():
        try:
            if not sock.recv(1 << 20):
                return
        except socket.timeout:
            pass
        except OSError:
            return


def pipeline_daemon(o, avail):
    """Real daemon: synth -> table -> rtp (send on change, to an unread loopback socket) and
    rgmp-server (send on change, one client that reads), raised until saturation."""
    import threading
    from xgtest import Gateway
    if not avail.get("rtp"):
        return None
    ladder = [50] if o.quick else [50, 500, 1000, 2000, 2800, 3600, 4400]
    rate = 240
    secs = 0.5 if o.quick else 1.5
    n_win = 2 if o.quick else 3
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", 0))
    steps = []
    for bodies in ladder:
        cfg = ("gateway:\n  id: bench\nadapters:\n"
               f"  - name: synth\n    type: synth\n    bodies: {bodies}\n    rate_hz: {rate}\n"
               "    head: false\n    hands: false\n"
               "  - name: rtp\n    type: rtp\n    bind: \"127.0.0.1:0\"\n"
               f"    destinations: [\"127.0.0.1:{sink.getsockname()[1]}\"]\n    rate_hz: 0\n"
               "    refresh_ms: 0\n    rtcp_interval_ms: 0\n")
        if avail.get("rgmp-server"):
            cfg += ("  - name: rgmp\n    type: rgmp-server\n    listen: \"127.0.0.1:0\"\n"
                    "    rate_hz: 0\n    max_output_bytes: 16777216\n")
        if avail.get("vrpn-server"):
            cfg += ("  - name: vrpn\n    type: vrpn-server\n    listen: \"127.0.0.1:0\"\n"
                    "    rate_hz: 0\n    max_output_bytes: 16777216\n")
        with Gateway(cfg) as gw:
            pid = gw.proc.pid
            stop = threading.Event()
            clients = []
            if avail.get("rgmp-server"):
                clients.append(("rgmp", connect_retry(gw.port_of("rgmp")), b""))
            if avail.get("vrpn-server"):
                clients.append(("vrpn", connect_retry(gw.port_of("vrpn")), VRPN_COOKIE))
            threads = [threading.Thread(target=_drain_tcp, args=(c, stop, hello), daemon=True)
                       for _, c, hello in clients]
            for th in threads:
                th.start()
            time.sleep(0.7)
            names = ["synth", "rtp"] + [n for n, _, _ in clients]
            ws = windows(gw, names, n_win, secs / n_win)
            stop.set()
            for th in threads:
                th.join(2)
            for _, c, _ in clients:
                c.close()
        d = lambda n, k: med(stats([w[n].get(k) for w in ws])) if n in names else None  # noqa
        upd = d("synth", "samples_in")
        cpu = med(stats([w["cpu_percent"] for w in ws]))
        steps.append({
            "bodies": bodies, "offered_updates_per_s": bodies * rate, "windows": n_win,
            "updates_per_s": upd, "achieved_ratio": upd / (bodies * rate),
            "updates_per_s_spread": stats([w["synth"]["samples_in"] for w in ws]),
            "rtp_samples_out_per_s": d("rtp", "samples_out"),
            "rtp_packets_out_per_s": d("rtp", "packets_out"),
            "rgmp_samples_out_per_s": d("rgmp", "samples_out"),
            "vrpn_samples_out_per_s": d("vrpn", "samples_out"),
            "cpu_percent": cpu,
            "cpu_us_per_update": cpu / 100.0 * 1e6 / upd if upd else None,
        })
        log(f"pipeline: {bodies} bodies: {upd:.0f} updates/s, cpu {cpu:.0f} %")
    sink.close()
    best = max(steps, key=lambda x: x["updates_per_s"])
    return {"steps": steps, "updates_per_s": best["updates_per_s"], "best": best,
            "egress": "rtp" + (" + rgmp-server" if avail.get("rgmp-server") else "") +
            (" + vrpn-server" if avail.get("vrpn-server") else ""),
            "rate_hz": rate}


def _vrpn_frame(sensors, k):
    """One VRPN 07.38 frame: a Pos_Quat of each sensor of device "Load" (sender 1, type 1), all
    stamped now; the position moves with k so that every report is a new sample."""
    now = time.time()
    sec, usec = int(now), int((now % 1) * 1e6)
    x = 0.001 * (k % 1000)
    out = []
    for sn in range(sensors):
        body = struct.pack(">ii7d", sn, sn, x, 1.0, 0.01 * sn, 0.0, 0.0, 0.0, 1.0)
        out.append(struct.pack(">IIIiiI", 24 + len(body), sec, usec, 1, 1, 0) + body)
    return b"".join(out)


def _vrpn_describe(kind, ident, name):
    n = name.encode() + b"\0"
    body = struct.pack(">I", len(n)) + n
    pad = ((len(body) + 7) & ~7) - len(body)
    return struct.pack(">IIIiiI", 24 + len(body), 0, 0, ident, kind, 0) + body + b"\0" * pad


def _vrpn_source(lsock, sensors, rate, stop):
    """A TCP-only VRPN server: cookie, descriptions, then a frame of every sensor at `rate` Hz
    (on a fixed schedule: a late frame does not shift the next ones)."""
    lsock.settimeout(10)
    try:
        conn, _ = lsock.accept()
    except OSError:
        return
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn.setblocking(True)
    conn.sendall(VRPN_COOKIE + _vrpn_describe(-1, 0, "VRPN Control") +
                 _vrpn_describe(-1, 1, "Load") + _vrpn_describe(-2, 1, "vrpn_Tracker Pos_Quat"))
    period, k = 1.0 / rate, 0
    nxt = time.monotonic()
    conn.settimeout(0.0)
    while not stop.is_set():
        try:
            while conn.recv(65536):  # whatever the client sends (its cookie, pings): discarded
                pass
        except (BlockingIOError, socket.timeout):
            pass
        except OSError:
            break
        conn.settimeout(None)
        try:
            conn.sendall(_vrpn_frame(sensors, k))
        except OSError:
            break
        conn.settimeout(0.0)
        k += 1
        nxt += period
        d = nxt - time.monotonic()
        if d > 0:
            stop.wait(d)
    conn.close()


def vrpn_pipeline_daemon(o, avail):
    """Real daemon, VRPN relay: a Python VRPN server (one device, N sensors, 240 Hz, one TCP frame
    of N reports per tick) -> vrpn-client -> table -> vrpn-server (send on change) -> one TCP client
    that reads everything. Per step: updates in/s (vrpn-client samples_in), reports out/s
    (vrpn-server samples_out and what the client counted), daemon CPU."""
    import threading
    from xgtest import Gateway
    if not (avail.get("vrpn-client") and avail.get("vrpn-server")):
        return None
    ladder = [50] if o.quick else [50, 200, 500]
    rate = 240
    secs = 0.5 if o.quick else 1.5
    n_win = 2 if o.quick else 3
    steps = []
    for sensors in ladder:
        lsock = socket.socket()
        lsock.bind(("127.0.0.1", 0))
        lsock.listen(1)
        cfg = ("gateway:\n  id: bench\nadapters:\n"
               f"  - name: vc\n    type: vrpn-client\n"
               f"    devices: [\"Load@tcp://127.0.0.1:{lsock.getsockname()[1]}\"]\n"
               "  - name: vrpn\n    type: vrpn-server\n    listen: \"127.0.0.1:0\"\n"
               "    rate_hz: 0\n    max_output_bytes: 16777216\n")
        stop = threading.Event()
        src = threading.Thread(target=_vrpn_source, args=(lsock, sensors, rate, stop),
                               daemon=True)
        src.start()
        got = {"n": 0}

        def reader(sock):
            buf, state = b"", {}
            sock.sendall(VRPN_COOKIE)
            sock.settimeout(0.1)
            while not stop.is_set():
                try:
                    b = sock.recv(1 << 20)
                except socket.timeout:
                    continue
                except OSError:
                    return
                if not b:
                    return
                n, buf = vrpn_reports(buf + b, state)
                got["n"] += n

        with Gateway(cfg) as gw:
            client = connect_retry(gw.port_of("vrpn"))
            rd = threading.Thread(target=reader, args=(client,), daemon=True)
            rd.start()
            time.sleep(0.7)
            n0, t0 = got["n"], time.monotonic()
            ws = windows(gw, ["vc", "vrpn"], n_win, secs / n_win)
            client_rate = (got["n"] - n0) / (time.monotonic() - t0)
            stop.set()
            rd.join(2)
            src.join(2)
            client.close()
        lsock.close()
        d = lambda n, k: med(stats([w[n].get(k) for w in ws]))  # noqa: E731
        upd = d("vc", "samples_in")
        cpu = med(stats([w["cpu_percent"] for w in ws]))
        steps.append({
            "sensors": sensors, "offered_updates_per_s": sensors * rate, "windows": n_win,
            "updates_per_s": upd, "achieved_ratio": upd / (sensors * rate) if upd else None,
            "updates_per_s_spread": stats([w["vc"].get("samples_in") for w in ws]),
            "vrpn_samples_out_per_s": d("vrpn", "samples_out"),
            "client_reports_per_s": client_rate,
            "cpu_percent": cpu,
            "cpu_us_per_update": cpu / 100.0 * 1e6 / upd if upd else None,
        })
        log(f"vrpn pipeline: {sensors} sensors: {upd or 0:.0f} updates/s, cpu {cpu:.0f} %")
    best = max(steps, key=lambda x: x["updates_per_s"] or 0)
    return {"steps": steps, "updates_per_s": best["updates_per_s"], "best": best,
            "path": "VRPN load server -> vrpn-client -> table -> vrpn-server -> one TCP client",
            "rate_hz": rate}


def latency_daemon(o, avail):
    """Real daemon latency: a load generator (50 bodies x 240 Hz; VRPN trackers into vrpn-client
    when it exists, else RTP game state into an rtp adapter) -> xrgate -> rtp, rgmp-server,
    vrpn-server and less (TCP listener, signature: none) egress, send on change; bench_loopback
    does the sending, the receiving and the timing."""
    from xgtest import Gateway
    if not avail.get("rtp"):
        return None
    from xgtest import reserve_port
    vrpn = avail.get("vrpn-client") and avail.get("vrpn-server")
    # no port is picked and handed on: the daemon binds port 0 (read back with port_of); the
    # RTP receiver is a socket bound here and inherited by bench_loopback; the VRPN source port
    # that vrpn-client names is held (reserve_port) until bench_loopback listens on it
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(("127.0.0.1", 0))
    hold = reserve_port()
    cfg = "gateway:\n  id: bench\nadapters:\n"
    if vrpn:
        cfg += ("  - name: rig\n    type: vrpn-client\n"
                f"    devices: [\"Tracker0@tcp://127.0.0.1:{hold.port}\"]\n")
    else:
        cfg += ("  - name: rtpin\n    type: rtp\n    bind: \"127.0.0.1:0\"\n"
                "    refresh_ms: 0\n    rtcp_interval_ms: 0\n")
    cfg += ("  - name: rtpout\n    type: rtp\n    bind: \"127.0.0.1:0\"\n"
            f"    destinations: [\"127.0.0.1:{rx.getsockname()[1]}\"]\n    rate_hz: 0\n"
            "    refresh_ms: 0\n    rtcp_interval_ms: 0\n")
    servers = []
    if avail.get("rgmp-server"):
        cfg += ("  - name: rgmp\n    type: rgmp-server\n    listen: \"127.0.0.1:0\"\n"
                "    rate_hz: 0\n")
        servers.append(("--rgmp", "rgmp"))
    if avail.get("vrpn-server"):
        cfg += ("  - name: vrpn\n    type: vrpn-server\n    listen: \"127.0.0.1:0\"\n"
                "    rate_hz: 0\n")
        servers.append(("--vrpn-server", "vrpn"))
    if avail.get("less"):
        cfg += ("  - name: sims\n    type: less\n    mode: listen\n    listen: \"127.0.0.1:0\"\n"
                "    signature: none\n    rate_hz: 0\n")
        servers.append(("--less", "sims"))
    reps = o.reps
    ms = 300 if o.quick else 1000
    try:
        with Gateway(cfg) as gw:
            args = ["--vrpn-listen", hold.port] if vrpn else ["--rtp-in", gw.port_of("rtpin")]
            args += ["--rtp-out-fd", rx.fileno()]
            for opt, name in servers:
                args += [opt, gw.port_of(name)]
            res = run_json("bench_loopback", args + ["--pid", gw.proc.pid, "--reps", reps,
                                                     "--ms", ms], pass_fds=(rx.fileno(),))
    finally:
        hold.release()
        rx.close()
    res["ingress_adapter"] = "vrpn-client" if vrpn else "rtp"
    cpu = med(stats(res["gateway_cpu_percent"]))
    res["cpu_us_per_frame"] = cpu / 100.0 / res["rate_hz"] * 1e6 if cpu is not None else None
    return res


# ---- main ----

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke mode (< 20 s)")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--ms", type=int, default=None)
    ap.add_argument("--out", default=None)
    o = ap.parse_args()
    if o.reps is None:
        o.reps = 2 if o.quick else 5
    if o.ms is None:
        o.ms = 40 if o.quick else 300
    out = o.out or os.path.join(BUILD, "bench-results.json")
    started = time.monotonic()
    load_start = os.getloadavg()

    avail = adapter_types_available()
    log(f"adapter types: {avail}")

    b_start = bench_baseline(o)
    codec = run_json("bench_codec", ["--reps", o.reps, "--ms", o.ms] + (["--quick"] if o.quick else []))
    tbl = run_json("bench_table", ["--reps", o.reps, "--ms", o.ms] + (["--quick"] if o.quick else []))
    pdaemon = pipeline_daemon(o, avail)
    vdaemon = vrpn_pipeline_daemon(o, avail)
    ldaemon = latency_daemon(o, avail)
    scale = scale_daemon(o, avail)
    clients = {a: clients_daemon(o, avail, a) for a in ("rgmp-server", "vrpn-server")}
    dds = dds_load(o, avail)
    rel = relay_bench(o, avail, prog, log)
    b_end = None if o.quick else bench_baseline(o)
    base = merge_baselines(b_start, b_end)
    load_end = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load average {load_start[0]:.2f} at the start and "
          f"{load_end[0]:.2f} at the end of the run (above the CPU count: other processes\n"
          "compete with the daemon and the load generators; compare ratios, not absolute figures)")

    # ---- 1. baseline ----
    udp88 = base["udp_pps"]["88"]
    udp_pps = med(udp88)
    rtt_udp = base["udp_rtt_us"]["p50"]
    rtt_tcp = base["tcp_rtt_us"]["p50"]
    rows = []
    for size, s in base["udp_pps"].items():
        m = base["udp_pps_mmsg"].get(size)
        rows.append([f"{size} B", fmt_s(s, "pps"), fmt(1e9 / med(s), " ns") if s else "n/a",
                     fmt_s(m, "pps"), f"{ratio(med(s), udp_pps):.2f}"])
    table("1. Baseline: raw UDP loopback, one thread (send 16 + recv 16, per-packet syscalls)",
          ["size", "packets/s median [min..max]", "per packet", "sendmmsg/recvmmsg", "x 88 B"],
          rows,
          note=(f"UDP ping-pong RTT p50 {fmt_s(rtt_udp, ' us')}, p99 "
                f"{fmt_s(base['udp_rtt_us']['p99'], ' us')}\n"
                f"TCP ping-pong RTT p50 {fmt_s(rtt_tcp, ' us')}, p99 "
                f"{fmt_s(base['tcp_rtt_us']['p99'], ' us')}  (two threads, 64 B, TCP_NODELAY)\n"
                f"hand-off to a sleeping thread (eventfd) p50 "
                f"{fmt_s(base['thread_wake_us']['p50'], ' us')}, p99 "
                f"{fmt_s(base['thread_wake_us']['p99'], ' us')}\n"
                f"repetitions pooled from the start{' and the end' if b_end else ''} of the run"))

    # ---- 2. codecs ----
    rows = []
    codec_out = {}
    for name, c in codec.items():
        if not isinstance(c, dict):
            continue
        e, d = stats(c["encode_per_s"]), stats(c["decode_per_s"])
        mb = lambda s: None if s is None else s["median"] * c["bytes"] / 1e6  # noqa: E731
        codec_out[name] = {"bytes": c["bytes"], "encode_per_s": e, "decode_per_s": d,
                           "encode_mb_s": mb(e), "decode_mb_s": mb(d),
                           "encode_ratio_to_udp_pps": ratio(med(e), udp_pps),
                           "decode_ratio_to_udp_pps": ratio(med(d), udp_pps)}
        rows.append([name, c["bytes"], fmt_s(e, "/s"), f"{mb(e):.0f}", fmt_s(d, "/s"),
                     f"{mb(d):.0f}", f"{ratio(med(e), udp_pps):.1f}",
                     f"{ratio(med(d), udp_pps):.1f}"])
    table("2. Codec throughput, in-process, one thread",
          ["message", "bytes", "encode msg/s [min..max]", "MB/s", "decode msg/s [min..max]",
           "MB/s", "enc x udp", "dec x udp"], rows,
          note="x udp = messages/s / baseline UDP packets/s (88 B): how many messages the codec\n"
               "handles in the time the loopback moves one packet (> 1: the codec is not the limit)")
    rgmp_def = rgmp_definition_encoders(codec_out)
    if rgmp_def:
        print(f"RGMP definition encoder (50 entities): hand-written {rgmp_def['hand_us']:.0f} us, "
              f"jansson {rgmp_def['jansson_us']:.0f} us per definition (jansson / hand-written = "
              f"{rgmp_def['jansson_to_hand']:.2f}); one 50-pose data frame {rgmp_def['data_us']:.2f} "
              f"us.\nrgmp-server encodes a definition twice per change of its entity set; with one "
              f"change in a second of 100 Hz frames jansson adds {rgmp_def['jansson_extra_share']:.0%} "
              f"to that second's encode work")

    # ---- 3. pipeline ----
    pt, pe = tbl["pipeline_table_only"], tbl["pipeline_encode"]
    pipe = {}
    rows = []
    for label, p in (("table only", pt), ("table + encode", pe)):
        u, so, cpu = stats(p["updates_per_s"]), stats(p["samples_out_per_s"]), stats(
            p["cpu_ns_per_update"])
        pipe[label] = {"updates_per_s": u, "samples_out_per_s": so, "cpu_ns_per_update": cpu}
        rows.append([label, fmt_s(u, "/s"), fmt_s(so, "/s"), fmt_s(cpu, " ns"),
                     f"{ratio(med(u), udp_pps):.2f}"])
    table(f"3a. Pipeline throughput, in-process: {tbl['entities']} entities -> table -> "
          f"{tbl['sinks']} sinks (VRPN, RGMP, LESS, game-state encoders), one thread, no sockets",
          ["path", "updates in/s [min..max]", "samples out/s", "CPU per update", "x udp pps"],
          rows,
          note="x udp pps = updates/s / baseline UDP packets/s (88 B, one thread).")
    est = {k: stats(v) for k, v in tbl.get("estimator_cpu_ns_per_push", {}).items()}
    if est.get("batch") and est.get("incremental") and est.get("ring_only"):
        base_ns = med(est["ring_only"])
        rows = [[label, fmt_s(est[key], " ns"), fmt(med(est[key]) - base_ns, " ns")]
                for label, key in (("batch pass over the window", "batch"),
                                   ("running sums (issue 19 item 2)", "incremental"))]
        table("3c. Velocity estimation per pose push (a turning joint at 240 Hz, 100 ms window, "
              "24-sample history), thread CPU",
              ["estimator", "per push [min..max]", "net of making the sample"], rows,
              note=f"net = median minus the cost of making and storing the sample alone "
                   f"({fmt(base_ns, ' ns')}).")
    if pdaemon:
        rows = []
        for st in pdaemon["steps"]:
            rows.append([st["bodies"], fmt(st["offered_updates_per_s"], "/s"),
                         fmt_s(st["updates_per_s_spread"], "/s"), f"{st['achieved_ratio']:.2f}",
                         fmt(st["rtp_samples_out_per_s"], "/s"),
                         fmt(st["rgmp_samples_out_per_s"], "/s"),
                         fmt(st["vrpn_samples_out_per_s"], "/s"),
                         f"{st['cpu_percent']:.0f} %", fmt(st["cpu_us_per_update"], " us"),
                         f"{ratio(st['updates_per_s'], udp_pps):.2f}"])
        table(f"3b. Pipeline throughput, real daemon: synth ({pdaemon['rate_hz']} Hz) -> table -> "
              f"{pdaemon['egress']} on loopback, send on change, raised until saturation",
              ["bodies", "offered", "updates in/s", "achieved", "rtp out/s", "rgmp out/s",
               "vrpn out/s", "CPU", "CPU/update", "x udp pps"], rows,
              note=f"median [min..max] over {pdaemon['steps'][0]['windows']} consecutive windows per "
                   "step; CPU is the daemon's (user+sys) and\n"
                   "includes the synth generating the poses on the same reactor thread.\n"
                   "rgmp-server / vrpn-server: one TCP client each that reads everything; less "
                   "egress not driven (needs a LESS peer session)." +
                   ("" if avail.get("vrpn-server") else "\nvrpn-server: not available yet."))
    if vdaemon:
        rows = [[st["sensors"], fmt(st["offered_updates_per_s"], "/s"),
                 fmt_s(st["updates_per_s_spread"], "/s"),
                 f"{st['achieved_ratio']:.2f}" if st["achieved_ratio"] is not None else "n/a",
                 fmt(st["vrpn_samples_out_per_s"], "/s"), fmt(st["client_reports_per_s"], "/s"),
                 f"{st['cpu_percent']:.0f} %", fmt(st["cpu_us_per_update"], " us")]
                for st in vdaemon["steps"]]
        table(f"3c. Pipeline throughput, real daemon, VRPN relay: a VRPN server ({vdaemon['rate_hz']}"
              " Hz, one frame of every sensor per tick) -> vrpn-client -> table -> vrpn-server "
              "(send on change) -> one TCP client",
              ["sensors", "offered", "updates in/s", "achieved", "vrpn out/s", "client got/s",
               "CPU", "CPU/update"], rows,
              note=f"median [min..max] over {vdaemon['steps'][0]['windows']} consecutive windows "
                   "per step; the load server is Python (it may be the limit at the top step);\n"
                   "CPU is the daemon's (user+sys); Pos_Quat only (send_velocity default).")
    if pdaemon:
        pipe_updates = pdaemon["updates_per_s"]
        pipe_mode = ("real daemon: synth -> table -> " + pdaemon["egress"] +
                     " on loopback (send on change), best step of the saturation ladder")
        pipe_out = sum(pdaemon["best"][k] or 0 for k in (
            "rtp_samples_out_per_s", "rgmp_samples_out_per_s", "vrpn_samples_out_per_s"))
        pipe_cpu = (pdaemon["best"]["cpu_us_per_update"] or 0) * 1000.0
    else:
        pipe_updates = med(pipe["table + encode"]["updates_per_s"])
        pipe_mode = "in-process: 53 entities -> table -> 4 sinks with encoders, no sockets"
        pipe_out = med(pipe["table + encode"]["samples_out_per_s"])
        pipe_cpu = med(pipe["table + encode"]["cpu_ns_per_update"])

    # ---- 4. latency ----
    latency, latency_inproc = {}, {}
    Q = ("p50", "p90", "p99", "p999", "max")
    loop = (ldaemon or {}).get("latency_us", {})
    relay = (ldaemon or {}).get("relay_baseline_us")
    relay_p50 = med(stats(relay["p50"])) if relay else None
    rows = []
    for eg in EGRESS:
        src = tbl["latency_us"][eg]
        ip = {q: med(stats(src[q])) for q in Q}
        ip["spread"] = {q: stats(src[q]) for q in ("p50", "p99")}
        ip["path"] = "in-process (update -> drain visit incl. encode), no sockets"
        ip["ratio_p50_to_udp_rtt_p50"] = ratio(ip["p50"], med(rtt_udp))
        latency_inproc[eg] = ip
        if eg in loop:
            lp = {q: med(stats(loop[eg][q])) for q in Q}
            lp["spread"] = {q: stats(loop[eg][q]) for q in ("p50", "p99")}
            lp["path"] = (f"loopback: load generator -> {ldaemon['ingress_adapter']} ingress -> "
                          f"xrgate -> {EGRESS_TYPE[eg]} egress (send on change) -> receiver")
            lp["ratio_p50_to_relay_p50"] = ratio(lp["p50"], relay_p50)
            lp["delivered_ratio"] = stats(loop[eg]["delivered_ratio"])
            latency[eg] = lp
            rows.append([eg, "loopback", fmt(lp["p50"]), fmt(lp["p90"]), fmt(lp["p99"]),
                         fmt(lp["p999"]), fmt(lp["max"]), fmt_s(lp["spread"]["p50"]),
                         f"{lp['ratio_p50_to_relay_p50']:.1f} x relay" if relay_p50 else "n/a"])
        else:
            latency[eg] = ip
        rows.append([eg, "in-process", fmt(ip["p50"]), fmt(ip["p90"]), fmt(ip["p99"]),
                     fmt(ip["p999"]), fmt(ip["max"]), fmt_s(stats(src["p50"])),
                     f"{ip['ratio_p50_to_udp_rtt_p50']:.1f} x RTT"])
    if relay:
        rows.append(["(baseline)", "relay thread", *[fmt(med(stats(relay[q]))) for q in Q],
                     fmt_s(stats(relay["p50"])), "1.0"])
    note = (f"in-process: {tbl['entities']} entities pushed as one burst, then the 4 sinks drain "
            "in the order shown (a later sink waits for the earlier ones); ratio to the busy\n"
            f"UDP ping-pong RTT p50 ({fmt(med(rtt_udp))} us).\n")
    if ldaemon:
        note += (f"loopback: {ldaemon['bodies']} bodies x {ldaemon['rate_hz']:.0f} Hz into "
                 f"{ldaemon['ingress']}, {ldaemon['packet_bytes']:.0f} bytes per frame;\n"
                 "baseline = datagrams of that size at the same cadence through a bare UDP relay "
                 "thread (same run).\n"
                 f"gateway CPU at this load: {fmt_s(stats(ldaemon['gateway_cpu_percent']), ' %')}"
                 f" = {fmt(ldaemon['cpu_us_per_frame'])} us of CPU per frame of "
                 f"{ldaemon['bodies']} bodies (the last body of a frame leaves after all of it).\n")
    missing = [eg for eg in EGRESS if eg not in loop]
    if missing:
        note += ("in-process figures only for: " + ", ".join(missing) +

                 ("; vrpn-client/vrpn-server not available yet"
                  if not (avail.get("vrpn-server") and avail.get("vrpn-client")) else "") + ".")
    table("4. Added latency (us): real loopback where the adapters exist, else in-process",
          ["egress", "path", "p50", "p90", "p99", "p99.9", "max", "p50 [min..max]", "p50 ratio"],
          rows, note=note.rstrip("\n"))

    # ---- 5. scale ----
    rows = [
        ["entities (synth, 60 Hz)", scale["entities"]],
        ["updates offered / achieved", f"{fmt(scale['offered_updates_per_s'])}/s / "
         f"{fmt_s(scale['achieved_updates_per_s_spread'], '/s')} ({scale['achieved_ratio']:.2f})"],
        ["rtp samples out", fmt(scale["rtp_samples_out_per_s"], "/s")],
        ["CPU (one reactor thread)", f"{fmt_s(scale['cpu_percent_spread'], ' %')}, "
         f"{fmt(scale['cpu_us_per_update'])} us per update"],
        ["RSS", f"{scale['rss_mib']:.1f} MiB ({scale['rss_mib_1_entity']:.1f} MiB with 1 entity)"],
        ["bytes per entity (RSS delta)", f"{scale['bytes_per_entity']:.0f}"],
        ["table heap per entity (in-process)", f"{tbl['heap_bytes_per_entity']:.0f} "
         f"(sizeof struct xg_entity = {tbl['sizeof_entity']:.0f})"],
    ]
    for adapter, cl in clients.items():
        if not cl:
            rows.append([f"{adapter} clients", "not available yet"])
            continue
        rows += [
            [f"{adapter}: clients x entities", f"{cl['clients']} x {cl['entities']}"],
            [f"{adapter}: per-client rate", f"{fmt_s(cl['client_rate_hz'], ' Hz')} of "
             f"{cl['rate_hz']} Hz ({cl['measure']}); min ratio {cl['min_ratio_to_rate']:.2f}, "
             f"{cl['clients_at_rate']} clients at >= 90 %"],
            [f"{adapter}: daemon CPU / RSS", f"{cl['cpu_percent']:.0f} % / {cl['rss_mib']:.1f} MiB"
             f", slow clients dropped: {cl['dropped_slow']}"],
        ]
    table("5. Scale (real daemon)", ["what", "value"], rows,
          note=f"egress during the entity test: {scale['egress']}; median [min..max] over "
               f"{scale['windows']} windows;\nRSS and clients: one measurement each")

    # ---- 6. prediction ----
    grid = tbl["prediction"]
    rows = []
    for key, g in grid.items():
        rows.append([f"{g['rate_hz']:.0f} Hz", "reported" if g["reported_velocity"] else "estimated",
                     f"{g['horizon_ms']:.0f}", f"{g['hold_pos_err_m'] * 1000:.2f}",
                     f"{g['pred_pos_err_m'] * 1000:.3f}",
                     f"{ratio(g['pred_pos_err_m'], g['hold_pos_err_m']):.3f}",
                     f"{g['hold_rot_err_deg']:.3f}", f"{g['pred_rot_err_deg']:.4f}",
                     f"{ratio(g['pred_rot_err_deg'], g['hold_rot_err_deg']):.3f}"])
    pps = stats(tbl["predictions_per_s"])
    table("6. Prediction vs the synth's analytic truth (mean error over 8 entities; deterministic)",
          ["rate", "velocity", "ms ahead", "hold mm", "pred mm", "pred/hold", "hold deg",
           "pred deg", "pred/hold"], rows,
          note="errors are relative to the newest sample, so the sample rate changes them little "
               "(the velocity estimator uses a 100 ms window)\n"
               f"predictions/s on one core: {fmt_s(pps)} "
               f"({ratio(med(pps), udp_pps):.1f} x baseline UDP pps)")
    head_key = "120_hz_estimated_vel_50_ms"
    hp = grid[head_key]

    results = {
        "schema": 1,
        "mode": "quick" if o.quick else "full",
        "reps": o.reps,
        "ms_per_rep": o.ms,
        "machine": {"cpus": os.cpu_count(), "kernel": platform.release(),
                    "python": platform.python_version(),
                    "loadavg_start": load_start[0], "loadavg_end": load_end[0],
                    "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
        "adapters_available": avail,
        "baseline": {
            "udp_pps": udp_pps,
            "udp_pps_size_bytes": 88,
            "udp_pps_spread": udp88,
            "udp_pps_by_size": base["udp_pps"],
            "udp_pps_mmsg_by_size": base["udp_pps_mmsg"],
            "udp_rtt_us": base["udp_rtt_us"],
            "tcp_rtt_us": base["tcp_rtt_us"],
            "thread_wake_us": base["thread_wake_us"],
            "udp_pps_mode": base["udp_pps_mode"],
            "rtt_mode": base["rtt_mode"],
        },
        "codec": codec_out,
        "rgmp_definition_encoder": rgmp_def,
        "pipeline": {
            "updates_per_s": pipe_updates,
            "ratio_to_baseline": ratio(pipe_updates, udp_pps),
            "mode": pipe_mode,
            "samples_out_per_s": pipe_out,
            "cpu_ns_per_update": pipe_cpu,
            "estimator_cpu_ns_per_push": {k: stats(v) for k, v in
                                          tbl.get("estimator_cpu_ns_per_push", {}).items()},
            "in_process": pipe,
            "loopback": pdaemon,
            "vrpn_loopback": vdaemon,
        },
        "latency_us": latency,
        "latency_in_process_us": latency_inproc,
        "latency_loopback": ldaemon,
        "scale": {
            "entities": scale["entities"],
            "clients": next((c["clients"] for c in clients.values() if c), None),
            "rss_mib": scale["rss_mib"],
            "bytes_per_entity": scale["bytes_per_entity"],
            "entities_test": scale,
            "clients_test": clients,
            "table_heap_bytes_per_entity": tbl["heap_bytes_per_entity"],
            "sizeof_entity": tbl["sizeof_entity"],
        },
        "prediction": {
            "horizon_ms": hp["horizon_ms"],
            "rate_hz": hp["rate_hz"],
            "velocity": "estimated from history",
            "hold_pos_err_m": hp["hold_pos_err_m"],
            "pred_pos_err_m": hp["pred_pos_err_m"],
            "hold_rot_err_deg": hp["hold_rot_err_deg"],
            "pred_rot_err_deg": hp["pred_rot_err_deg"],
            "predictions_per_s": pps,
            "grid": grid,
        },
        "elapsed_s": time.monotonic() - started,
    }
    results["bvh_prediction"] = bvh_prediction(os.path.dirname(out))
    results["prediction_loo"] = prediction_loo(os.path.dirname(out))
    results["egress_cost"] = egress_cost(o, sys.modules[__name__])
    results["dds"] = dds
    # webxr: page -> table on loopback (tests/bench/webxr_latency.py)
    from webxr_latency import webxr_latency  # noqa: E402
    results["webxr_latency"] = wx = webxr_latency(1.0 if o.quick else 3.0)
    table("webxr: page -> table on loopback, 90 Hz (receive - mapped capture, last 128 frames)",
          ["frame", "bytes", "p50 ms", "max ms", "clock rtt ms"],
          [[k, f"{v['bytes']}", f"{v['p50_ms']:.3f}", f"{v['max_ms']:.3f}", f"{v['rtt_ms']:.3f}"]
           for k, v in wx.items()])
    results["mcap"] = mcap_cost(o, avail, sys.modules[__name__])
    if dds:
        rows = [[k, f"{dds[k]['sent_transforms']}", f"{dds[k]['unique']}",
                 f"{100 * dds[k]['loss']:.2f} %"] +
                [f"{dds[k]['latency_us'][q]:.0f}" for q in ("p50", "p90", "p99", "p999", "max")]
                for k in ("direct", "gateway")]
        rows.append(["added", "", "", ""] +
                    [f"{dds['added_latency_us'][q]:.0f}" for q in ("p50", "p90")] + ["", "", ""])
        table(f"7. dds: {dds['bodies']} bodies x {dds['rate_hz']} Hz on /tf, publisher -> "
              "subscriber directly and through xrgate (dds in -> dds out, send on change)",
              ["path", "sent", "received", "lost/coalesced", "p50 us", "p90 us", "p99 us",
               "p99.9 us", "max us"], rows,
              note="loopback, Cyclone DDS unicast discovery, best effort (sensor_data); \"added\" "
                   "is the difference of the quantiles (p50, p90); tails are scheduling noise\n"
                   f"gateway CPU {dds['gateway']['gateway_cpu_percent']:.1f} % of one core "
                   f"while the load ran; of the transforms missing through xrgate: "
                   f"{dds['gateway']['lost_in']} lost on the way in, "
                   f"{dds['gateway']['coalesced']} coalesced by the drain, "
                   f"{dds['gateway']['lost_out']} lost on the way out")
    results["relay"] = rel
    print_relay(rel, table, fmt)
    from udp_flood import udp_flood  # issue 30 item 2: /healthz under a vmc datagram flood
    results["udp_flood"] = udp_flood(o, table)
    rl = run_json("bench_reload", ["--reps", o.reps] + (["--quick"] if o.quick else []))
    results["reload"] = {"adapters": rl["adapters"],
                         **{f"{k}_ms": stats(v) for k, v in rl["reload_ms"].items()}}
    table(f"10. Configuration reload: loop time of one reload, {rl['adapters']} adapters running "
          "(POST /api/reload, SIGHUP)", ["change", "median ms", "min ms", "max ms"],
          [[k, f"{med(stats(v)):.2f}", f"{min(v):.2f}", f"{max(v):.2f}"]
           for k, v in rl["reload_ms"].items()],
          note="the file checked as --check checks it, then applied: unchanged (nothing moves), "
               "rate (one sink's rate_hz, in place), add (one synth), restart (one vrpn-server), "
               "refused (an unknown key)")
    cal = run_json("bench_calib", ["--reps", o.reps] + (["--quick"] if o.quick else []))
    results["calibration"] = {k: {m: stats(v) for m, v in cal[k].items() if m != "failures"}
                              | {"failures": cal[k]["failures"]} for k in ("waved_10s", "waved_20s")}
    results["calibration"]["yaw_only"] = cal["yaw_only"]
    results["calibration"]["drift_check_ms"] = cal["drift_check_ms"]
    results["calibration"]["loop_stall"] = {m: stats(v) for m, v in cal["loop_stall"].items()}

    def stall(m, spread=False):  # the solver thread: the loop's worst stall while it solves
        x = results["calibration"]["loop_stall"].get(m)
        return "n/a" if not x else (f"{x['median']:.2f} [{x['min']:.2f}..{x['max']:.2f}]"
                                    if spread else f"{x['median']:.2f}")
    table("11. Space calibration (docs/calibration.md): synthetic object waved about every axis, "
          "1 mm / 0.2 deg noise per axis, 20 ms delay; median [min..max] over noise seeds",
          ["motion", "Y mm", "Y deg", "X mm", "X deg", "offset err ms", "residual mm", "solve ms"],
          [[k.split("_")[1]] + [(lambda x: f"{x['median']:.3g} [{x['min']:.3g}..{x['max']:.3g}]"
                                 if x else "n/a")(results["calibration"][k][m]) for m in
                                ("y_mm", "y_deg", "x_mm", "x_deg", "offset_err_ms",
                                 "residual_mm", "solve_ms")] for k in ("waved_10s", "waved_20s")],
          note=f"targets: Y and X within 2 mm and 0.2 deg, time offset within 2 ms; "
               f"yaw-only motion: unobservable '{cal['yaw_only']['unobservable'].strip()}', "
               f"transform answered: {cal['yaw_only']['answered']}; solve ms = thread CPU of "
               f"one solve, run in the solver thread: the event loop's worst stall while a 20 s "
               f"solve ({stall('solve_ms')} ms) is in flight {stall('stall_ms', True)} ms (a 1 ms "
               f"timer's lateness; idle {stall('idle_ms')} ms, snapshot {stall('tick_ms')} ms, "
               f"result applied and state file serialised on the loop {stall('apply_ms', True)} "
               f"ms, state file written and fsync'd in the thread {stall('write_ms', True)} ms); "
               f"a drift check (mode continuous) {cal['drift_check_ms']:.2f} ms")
    with open(out, "w") as f:
        json.dump(results, f, indent=1, allow_nan=False)
    print(f"\nwrote {out} ({results['elapsed_s']:.0f} s)")


if __name__ == "__main__":
    main()
