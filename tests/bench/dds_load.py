"""`make bench` item 7 (issue 18): 50 bodies x 240 Hz through the dds adapter.

An independent publisher (tests/dds/dds_peer.c `bench_pub`) sends one tf2_msgs/TFMessage of 50
transforms 240 times a second on domain A; xrgate reads it with one dds adapter (`in`) and
republishes it, send on change (rate_hz 0), with a second dds adapter (`out`) on domain B, where
an independent subscriber (`bench_sub`) takes it. Each transform carries its send time, so the
subscriber measures publisher → xrgate → subscriber latency per transform, and the distinct
(message, body) pairs it saw give the loss (a pair missing was lost or coalesced by the
send-on-change drain). The same publisher → subscriber on one domain without xrgate is the
baseline: the difference is what the gateway adds. Prediction is off (max_horizon_ms 0) so the
poses leave exactly as they came. Loopback only, unicast discovery, private domain ids."""
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

BODIES, HZ = 50, 240


def _cpu_s(gw):
    """CPU seconds (user + system) of the gateway process so far, or 0 without one."""
    if not gw:
        return 0.0
    with open(f"/proc/{gw.proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _run(o, via_gateway):
    import ddslib as dl
    from xgtest import Gateway
    secs = 1.0 if o.quick else 5.0
    d_in = dl.domain()
    d_out = dl.domain() if via_gateway else d_in
    gw = None
    if via_gateway:
        gw = Gateway(f"""
gateway:
  predict: {{max_horizon_ms: 0}}
adapters:
  - name: in
    type: dds
    domain_id: {d_in}
    publish_tf: false
  - name: out
    type: dds
    domain_id: {d_out}
    read_tf: false
    rate_hz: 0
""", env=dl.ENV)
    try:
        with dl.Peer(d_in) as pub, dl.Peer(d_out) as sub:
            res = {}

            def subscribe():
                sub.send(f"bench_sub {secs + 10.0}", timeout=secs + 30)
                res["sub"] = sub.of("bench_sub")[0]

            t = threading.Thread(target=subscribe)
            t.start()
            # discovery first: the publisher's writer matched (the gateway's reader, or the
            # subscriber's), and a moment for the subscriber's reader to be found by its writer
            pub.send("tf world warmup -1 0 0 0 0 0 1 -1 0")
            pub.send("wait_match rt/tf 10000", timeout=20)
            time.sleep(0.5)
            cpu0, t0 = _cpu_s(gw), time.monotonic()
            pub.send(f"bench_pub {BODIES} {HZ} {secs}", timeout=secs + 30)
            cpu1, t1 = _cpu_s(gw), time.monotonic()
            sent = pub.of("bench_pub")[0]
            t.join(secs + 40)
            s = res["sub"]
            out = {"sent_transforms": sent["messages"] * BODIES, "received": s["received"],
                   "unique": s["unique"], "latency_us": s["lat_us"]}
            out["loss"] = 1.0 - s["unique"] / out["sent_transforms"] if out["sent_transforms"] \
                else None
            if gw:
                out["gateway_cpu_percent"] = 100.0 * (cpu1 - cpu0) / (t1 - t0)
                c = {a["name"]: a["counters"] for a in gw.get_json("/api/adapters")["adapters"]}
                out["gateway_counters"] = c
                # where the missing ones went: not read by `in` (lost on the way in), read but
                # not sent (coalesced: a newer pose came before the drain), sent but not received
                out["lost_in"] = out["sent_transforms"] - c["in"]["transforms_in"]
                out["coalesced"] = c["in"]["transforms_in"] - c["out"]["transforms_out"]
                out["lost_out"] = c["out"]["transforms_out"] - s["received"]
            return out
    finally:
        if gw:
            gw.stop()
            gw.tmp.cleanup()


def dds_load(o, avail):
    """Returns {"bodies", "rate_hz", "direct": {...}, "gateway": {...}, "added_latency_us"}, or
    None when the dds adapter or its test peer is not built."""
    import ddslib as dl
    if not avail.get("dds") or not os.path.exists(dl.PEER):
        return None
    direct = _run(o, False)
    via = _run(o, True)
    # the medians' difference; tails on a shared machine are dominated by scheduling noise
    added = {q: via["latency_us"][q] - direct["latency_us"][q] for q in ("p50", "p90")}
    return {"bodies": BODIES, "rate_hz": HZ, "seconds": 1.0 if o.quick else 5.0,
            "direct": direct, "gateway": via, "added_latency_us": added}
