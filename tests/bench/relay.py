"""`make bench` table 9 (issue 19 items 6 and 7): the VRPN relay topology with our own load
generator, against the direct path in the same run.

tests/bench/bench_relay.c is the VRPN load generator (50 trackers x 240 Hz on a fixed frame
schedule, TCP-only or UDP+TCP) and the reading client. Here each scenario gets its gateway:

  tcp   generator -> vrpn-client (Tracker0@tcp://) -> vrpn-server -> reading client (TCP-only)
  udp   the same in UDP+TCP mode on both hops (Tracker0@127.0.0.1:port, reports as datagrams)
  four  as tcp, and the gateway also serves rgmp-server (a reading client), rtp (to a socket held
        here, never read) and less (a subscribed peer session): four egress protocols at once

and bench_relay alternates, per repetition, the relay path and the direct generator -> client
path (added = relay - direct, per quantile and repetition; medians over the repetitions), then
measures the gateway's CPU with every peer connected and no data (idle). Prediction is off
(predict.max_horizon_ms: 0) so that the poses leave as they came: the reader recovers each
report's frame from its position. Every adapter sends on change (rate_hz: 0)."""
import json
import os
import socket
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

SCENARIOS = ("tcp", "udp", "four")
Q = ("p50", "p90", "p99", "p999", "max")


def _med(values):
    v = [x for x in values if x is not None and x == x]
    return statistics.median(v) if v else None


def _spread(values):
    v = [x for x in values if x is not None and x == x]
    if not v:
        return None
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)}


def _gen_sockets():
    """A TCP listener and a UDP socket on the same loopback port (the generator's, named in the
    vrpn-client configuration): both stay open and are inherited by bench_relay."""
    for _ in range(50):
        t = socket.socket()
        t.bind(("127.0.0.1", 0))
        t.listen(8)
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            u.bind(("127.0.0.1", t.getsockname()[1]))
        except OSError:
            t.close()
            u.close()
            continue
        return t, u
    raise RuntimeError("relay: no loopback port free for both TCP and UDP")


def _config(scenario, gen_port, rtp_port):
    dev = (f"Tracker0@127.0.0.1:{gen_port}" if scenario == "udp"
           else f"Tracker0@tcp://127.0.0.1:{gen_port}")
    cfg = ("gateway:\n  id: bench\n  predict:\n    max_horizon_ms: 0\nadapters:\n"
           f"  - name: rig\n    type: vrpn-client\n    devices: [\"{dev}\"]\n"
           "  - name: vrpn\n    type: vrpn-server\n    listen: \"127.0.0.1:0\"\n    rate_hz: 0\n")
    if scenario == "four":
        cfg += ("  - name: rgmp\n    type: rgmp-server\n    listen: \"127.0.0.1:0\"\n"
                "    rate_hz: 0\n"
                "  - name: rtpout\n    type: rtp\n    bind: \"127.0.0.1:0\"\n"
                f"    destinations: [\"127.0.0.1:{rtp_port}\"]\n    rate_hz: 0\n"
                "    refresh_ms: 0\n    rtcp_interval_ms: 0\n"
                "  - name: sims\n    type: less\n    mode: listen\n    listen: \"127.0.0.1:0\"\n"
                "    signature: none\n    rate_hz: 0\n")
    return cfg


def _run(exe, scenario, reps, ms, idle_ms, log):
    from xgtest import Gateway, die_with_parent
    tcp, udp = _gen_sockets()
    rtp_sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # rtp egress target, never read
    rtp_sink.bind(("127.0.0.1", 0))
    try:
        with Gateway(_config(scenario, tcp.getsockname()[1], rtp_sink.getsockname()[1])) as gw:
            args = [exe, "--gen-tcp-fd", tcp.fileno(), "--gen-udp-fd", udp.fileno(),
                    "--relay-port", gw.port_of("vrpn"), "--pid", gw.proc.pid, "--reps", reps,
                    "--ms", ms, "--idle-ms", idle_ms]
            if scenario == "udp":
                args.append("--udp")
            if scenario == "four":
                args += ["--rgmp", gw.port_of("rgmp"), "--less", gw.port_of("sims")]
            args = [str(a) for a in args]
            log(f"run: {' '.join(args)}")
            p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=120 + reps * (2 * ms + idle_ms) / 1000,
                               pass_fds=(tcp.fileno(), udp.fileno()),
                               preexec_fn=die_with_parent())
            if p.returncode != 0:
                raise SystemExit(f"run.py: bench_relay {scenario} failed ({p.returncode}):\n"
                                 f"{p.stderr}")
            res = json.loads(p.stdout)
            ad = {a["name"]: a["counters"] for a in gw.get_json("/api/adapters")["adapters"]}
            res["gateway_counters"] = {n: {k: ad[n].get(k) for k in keys} for n, keys in (
                ("rig", ("tcp_reports", "udp_reports", "datagrams", "pings", "pongs")),
                ("vrpn", ("samples_out", "reports_skipped", "reports_coalesced", "udp_sends")),
            ) if n in ad}
            return res
    finally:
        for s in (tcp, udp, rtp_sink):
            s.close()


def _summary(res):
    """Medians over the repetitions of every quantile of the relay, direct and added figures."""
    out = {"transport": res["transport"], "sensors": res["sensors"], "rate_hz": res["rate_hz"],
           "reps": res["reps"], "ms_per_path": res["ms_per_path"]}
    for key in ("relay_us", "direct_us", "added_us"):
        out[key] = {q: _med(res[key][q]) for q in Q}
        out[key]["spread"] = {q: _spread(res[key][q]) for q in ("p50", "p99")}
    out["delivered_ratio"] = {"relay": _spread(res["relay_us"]["delivered_ratio"]),
                              "direct": _spread(res["direct_us"]["delivered_ratio"])}
    out["pooled_us"] = res["pooled_us"]
    out["gateway_cpu_percent"] = _spread(res["gateway_cpu_percent"])
    out["gateway_cpu_us_per_update"] = _med(res["gateway_cpu_us_per_update"])
    out["idle_cpu_percent"] = res["idle_cpu_percent_pooled"]
    out["idle_cpu_percent_main_thread"] = res["idle_cpu_percent_main_thread_pooled"]
    out["idle_window_s"] = res["idle_window_s"] * res["reps"]
    out["generator_late_frames"] = res["generator_late_frames"]
    out["raw"] = res
    return out


def relay_bench(o, avail, prog, log):
    """Table 9; None unless vrpn-client and vrpn-server are built (and, for the four-egress
    scenario, rgmp-server, rtp and less)."""
    if not (avail.get("vrpn-client") and avail.get("vrpn-server")):
        return None
    try:
        exe = prog("bench_relay")
    except SystemExit as e:
        log(f"relay: {e}")
        return None
    reps = 3 if o.quick else max(3, o.reps)
    ms = 150 if o.quick else 600
    idle_ms = 200 if o.quick else 1000
    out = {}
    for sc in SCENARIOS:
        if sc == "four" and not all(avail.get(t) for t in ("rgmp-server", "rtp", "less")):
            out[sc] = None
            continue
        out[sc] = _summary(_run(exe, sc, reps, ms, idle_ms, log))
    return out


def print_relay(rel, table, fmt):
    if not rel:
        print("\n(relay table: vrpn-client and vrpn-server are needed)")
        return
    rows = []
    label = {"tcp": "1 egress, TCP", "udp": "1 egress, UDP+TCP", "four": "4 egress, TCP"}
    for sc in SCENARIOS:
        r = rel.get(sc)
        if not r:
            continue
        a, d = r["added_us"], r["direct_us"]
        pa = r["pooled_us"]["added"]
        rows.append([label[sc], fmt(a["p50"]), fmt(a["p99"]),
                     f"{fmt(a['spread']['p99']['min'])}..{fmt(a['spread']['p99']['max'])}",
                     f"{fmt(pa['p50'])} / {fmt(pa['p99'])}",
                     fmt(d["p50"]), fmt(d["p99"]), fmt(r["relay_us"]["p99"]),
                     f"{r['delivered_ratio']['relay']['median']:.3f}",
                     f"{r['gateway_cpu_percent']['median']:.1f} %",
                     fmt(r["gateway_cpu_us_per_update"]),
                     f"{r['idle_cpu_percent']:.2f} / {r['idle_cpu_percent_main_thread']:.3f} %"])
    any_r = next(r for r in rel.values() if r)
    table(f"9. VRPN relay: generator ({any_r['sensors']} trackers x {any_r['rate_hz']:.0f} Hz, fixed "
          "frame schedule) -> vrpn-client -> xrgate -> vrpn-server -> reading client, minus the "
          "direct generator -> client path",
          ["scenario", "added p50", "added p99", "p99 range", "pooled p50 / p99", "direct p50",
           "direct p99",
           "relay p99", "delivered", "CPU", "CPU us/update", "idle CPU stat / ns"], rows,
          note=f"us from each frame's scheduled time to the report's arrival; medians of "
               f"{any_r['reps']} interleaved repetitions of {any_r['ms_per_path']} ms per path "
               "(relay and direct alternate in 100 ms blocks);\nadded = relay - direct per quantile "
               "and repetition; pooled: the quantiles of all repetitions' samples, relay - direct;\n"
               "CPU: the gateway while relaying; idle: every peer connected, no data, "
               f"{any_r['idle_window_s']:.1f} s pooled: /proc/PID/stat (all threads, clock ticks) / "
               "/proc/PID/schedstat (ns)")
