"""Fault: source time anomalies per protocol: no crash, samples dropped or re-anchored as
documented, and counted.

Each protocol has a raw-byte source in one gateway. A sample is "dropped" when the entity's
`samples` count does not include it (the next good sample raises it by exactly 1) and a counter
moved; "applied" when its marker x shows in /api/entities. After every anomaly the entity's
`age_ms` stays sane (never a future capture time, never hours old), and the gateway keeps
serving.
  - RGMP (µs since the unix epoch, 64-bit): a frame 1 h older than the last one is dropped
    (`rgmp_frames_out_of_order`); a frame with timestamp 0 likewise; a device whose clock steps
    3 h ahead and continues from there is re-anchored (offset estimator, warned) and applied.
  - VRPN (timeval): a report 1 h older than the last one of its sensor is dropped (counted in
    xrgate_samples_backwards_total or the adapter's drops); a clock step 3 h ahead is re-anchored
    (per-device offset); a timeval at the 32-bit edge (tv_sec 0xFFFFFFFF) and one with tv_usec
    out of range (1500000) do not crash and are dropped or re-anchored; the stream continues.
  - LESS (packet timestamps, INTEGER µs): a packet whose timestamp does not increase closes the
    session (TCP rule, counted in framing_errors); the peer reconnects; a clock step 3 h ahead
    is re-anchored (per-peer mapping) and applied.
  - RTP game state: Time1 (ms mod 65536) wrapping 65535 -> 0 and the 32-bit RTP timestamp
    wrapping are both seamless (every sample applied, none counted backwards); a Time1 30 s in
    the past is dropped as backwards (counted); a sender whose clock is 3 h off is re-anchored by
    the per-SSRC offset estimate.
Sections for adapter types missing from the build are skipped (exit 77 only if none can run)."""
import socket
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import faultlib as F  # noqa: E402
from xgtest import Gateway, wait_until  # noqa: E402

Q1 = (0.0, 0.0, 0.0, 1.0)
HOUR_US = 3600 * 1_000_000
COUNTERS = ("rgmp_frames_out_of_order", "drops", "errors", "framing_errors", "bad_messages",
            "samples_rejected", "drop_bad_value", "drop_bad_object", "protocol_errors")


def anomalies(gw, name):
    c = gw.counters(name)
    out = {k: c.get(k, 0) for k in COUNTERS}
    out["backwards"] = F.metric(gw, "xrgate_samples_backwards_total", name)
    return out


def moved(before, after):
    return {k: after[k] - before[k] for k in after if after[k] != before[k]}


class Probe:
    """Marker bookkeeping for one source: send(x, **kw) sends a pose with position x."""

    def __init__(self, gw, name, entity, send):
        self.gw, self.name, self.entity, self.send = gw, name, entity, send
        self.k = 0

    def ent(self):
        return self.gw.entities(self.entity).get(self.entity)

    def marker(self):
        self.k += 1
        return round(0.01 * self.k, 6)

    def applied(self, what, **kw):
        """Send one marked sample; wait until it shows (sent once: a sample the gateway loses
        fails the test). Returns the entity."""
        x = self.marker()
        self.send(x, **kw)
        return wait_until(lambda: (lambda e: e and abs(e["position"][0] - x) < 1e-5 and e)(
            self.ent()), timeout=10, what=f"{self.name}: {what}: sample x={x} applied")

    def first(self):
        """The first sample of a client adapter, once it is connected to its scripted peer (state
        handshake or streaming): the sample then goes to that connection, after the peer's hello,
        rather than to one that may still fail."""
        wait_until(lambda: self.gw.adapter(self.name)["state"] in ("handshake", "streaming"),
                   timeout=10, what=f"{self.name} connected")
        return self.applied("first")

    def dropped(self, what, **kw):
        """Send a marked sample that must be dropped and counted, then a good one."""
        e0 = self.ent()
        before = anomalies(self.gw, self.name)
        self.send(self.marker(), **kw)
        wait_until(lambda: anomalies(self.gw, self.name) != before,
                   what=f"{self.name}: {what}: counted")
        e1 = self.applied(f"after {what}")
        assert e1["samples"] == e0["samples"] + 1, (what, e0["samples"], e1["samples"])
        print(f"  {self.name}: {what}: dropped, counted {moved(before, anomalies(self.gw, self.name))}")
        return e1

    def sane(self, what):
        e = self.ent()
        assert e and F.all_finite(e) and -50 <= e["age_ms"] < 10000, (what, e)
        return e


# ---- RGMP ----

def rgmp_section(gw, peer):
    ts = {"us": int(time.time() * 1e6)}

    def send(x, at=None):
        if at is None:
            ts["us"] = max(ts["us"] + 1000, int(time.time() * 1e6))
            at = ts["us"]
        peer.put(F.rgmp_data(77, at, [(x, 1.0, 1.0, *Q1)]))
    p = Probe(gw, "rg", "rg/rig-77/body", send)
    p.first()
    p.applied("normal")
    p.dropped("timestamp 1 h back", at=ts["us"] - HOUR_US)
    p.dropped("timestamp 0", at=0)
    p.sane("after the drops")
    # the device's clock steps 3 h ahead and goes on from there: re-anchored
    ts["us"] += 3 * HOUR_US
    for _ in range(3):
        ts["us"] += 20000
        p.applied("clock 3 h ahead", at=ts["us"])
    e = p.sane("3 h ahead")
    print(f"  rg: clock 3 h ahead: re-anchored, applied (age {e['age_ms']:.1f} ms)")
    ts["us"] += 20000
    p.applied("continues", at=ts["us"])
    # a single frame 1 h ahead, then the normal clock: the first two later frames are out of
    # order (counted), the third re-anchors the group and is applied again (before, every later
    # frame was out of order until the device clock passed the spike)
    before = anomalies(gw, "rg")
    send(p.marker(), at=ts["us"] + HOUR_US)
    for _ in range(3):
        ts["us"] += 20000
        send(p.marker(), at=ts["us"])
    wait_until(lambda: abs(p.ent()["position"][0] - p.k * 0.01) < 1e-6,
               what="rg: applied again after a spike")
    assert anomalies(gw, "rg")["rgmp_frames_out_of_order"] == \
        before["rgmp_frames_out_of_order"] + 2, moved(before, anomalies(gw, "rg"))
    print(f"  rg: single frame 1 h ahead: counters {moved(before, anomalies(gw, 'rg'))}")


# ---- VRPN ----

def vrpn_section(gw, peer):
    clock = {"t": time.time()}

    def send(x, tv=None):
        if tv is None:
            clock["t"] = max(clock["t"] + 0.001, time.time())
            tv = (int(clock["t"]), int((clock["t"] % 1) * 1e6))
        peer.put(F.vrpn_report(0, (x, 1.0, 1.0), Q1, tv))
    p = Probe(gw, "vc", "vc/Tracker0/0", send)
    p.first()
    p.applied("normal")
    p.dropped("timeval 1 h back", tv=(int(clock["t"]) - 3600, 0))
    p.sane("after 1 h back")
    clock["t"] += 3 * 3600
    for _ in range(3):
        clock["t"] += 0.02
        p.applied("clock 3 h ahead", tv=(int(clock["t"]), int((clock["t"] % 1) * 1e6)))
    e = p.sane("3 h ahead")
    print(f"  vc: clock 3 h ahead: re-anchored, applied (age {e['age_ms']:.1f} ms)")
    # an out-of-range tv_usec: no crash; dropped (counted) or applied, the stream continues
    before = anomalies(gw, "vc")
    n0 = p.ent()["samples"]
    send(p.marker(), tv=(int(clock["t"]) + 1, 1500000))
    clock["t"] += 3  # past what 1 s + 1500000 µs would mean
    e = p.applied("after tv_usec 1500000")
    got = "applied" if e["samples"] == n0 + 2 else "dropped"
    print(f"  vc: tv_usec 1500000: {got}, counters {moved(before, anomalies(gw, 'vc'))}")
    p.sane("tv_usec out of range")
    # a single spike at the 32-bit edge (tv_sec 0xFFFFFFFF), then the normal clock: no crash,
    # and the sensor does not freeze: the normal reports after it are applied again.
    before = anomalies(gw, "vc")
    send(p.marker(), tv=(0xFFFFFFFF, 999999))
    for _ in range(3):
        send(p.marker())
    wait_until(lambda: anomalies(gw, "vc") != before or p.ent()["samples"] >= e["samples"] + 4,
               what="vc: spike and later reports handled")
    print(f"  vc: tv_sec 0xFFFFFFFF spike: counters {moved(before, anomalies(gw, 'vc'))}")
    assert gw.adapter("vc")["state"] == "streaming"
    p.applied("a normal report after the 0xFFFFFFFF spike")
    # the server's clock steps back 2 h (an NTP step, a restarted server) and goes on from
    # there: after a few dropped reports the sensor is applied again and the step is counted
    steps = gw.adapter("vc")["counters"]["clock_steps"]
    clock["t"] = max(clock["t"], time.time()) - 2 * 3600
    x = p.marker()
    deadline = time.monotonic() + 5
    while True:
        clock["t"] += 0.01
        send(x, tv=(int(clock["t"]), int((clock["t"] % 1) * 1e6)))
        e = p.ent()
        if abs(e["position"][0] - x) < 1e-5:
            break
        assert time.monotonic() < deadline, ("vc: frozen after a clock step back", e)
        time.sleep(0.01)
    assert gw.adapter("vc")["counters"]["clock_steps"] == steps + 1
    print("  vc: clock 2 h back: applied again, clock_steps + 1")


# ---- LESS ----

def less_section(gw, peer, ts):
    L = F.less()

    def send(x, at=None):
        peer.put(F.less_frame([L.msg_update(1, {2: [x, 1.0, 1.0], 3: [0, 0, 0]})],
                              ts.next() if at is None else at))
    p = Probe(gw, "lc", "lc/probe", send)
    p.first()
    p.applied("normal")
    # a packet timestamp that does not increase closes the session (TCP rule)
    before = anomalies(gw, "lc")
    sessions = peer.sessions
    send(p.marker(), at=ts.ts - 500000)
    wait_until(lambda: anomalies(gw, "lc")["framing_errors"] > before["framing_errors"],
               what="lc: non-increasing timestamp counted")
    wait_until(lambda: peer.sessions > sessions and p.ent(), what="lc: the peer reconnected")
    print(f"  lc: timestamp back: session closed, counted {moved(before, anomalies(gw, 'lc'))}")
    p.applied("new session")
    # the peer's clock steps 3 h ahead: re-anchored
    ts.ts += 3 * HOUR_US
    for _ in range(3):
        p.applied("clock 3 h ahead")
    e = p.sane("3 h ahead")
    print(f"  lc: clock 3 h ahead: re-anchored, applied (age {e['age_ms']:.1f} ms)")


# ---- RTP ----

def rtp_section(gw, port):
    R = F.rtp_codec()
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    tx.bind(("127.0.0.1", 0))
    state = {"seq": 65530, "ts": 0xFFFFFFFF - 90 * 20 * 3}

    def sender(ssrc, oid):
        def send(x, t1=None, rtp_ts=None):
            time.sleep(0.004)  # Time1 counts ms
            t1 = F.time1() if t1 is None else t1 & 0xFFFF
            state["seq"] += 1
            state["ts"] = (state["ts"] + 90 * 20) & 0xFFFFFFFF if rtp_ts is None else rtp_ts
            pay = R.object2(oid, t1, (x, 1.0, 1.0), (0.0, 0.0, 0.0), (0, 0, 0), (0, 0, 0))
            tx.sendto(R.rtp(98, state["seq"], state["ts"], ssrc, pay), ("127.0.0.1", port))
        return send
    p = Probe(gw, "rx", "rx/00001111/Object2-1", sender(0x1111, 1))
    p.applied("first")  # the socket is bound (port_of): a datagram is read from now on
    # RTP timestamps wrap 2^32 and seq wraps 2^16 over these few packets: all applied
    before = anomalies(gw, "rx")
    n0 = p.ent()["samples"]
    for i in range(8):
        p.applied("RTP timestamp/seq wrap")
    assert state["ts"] < 0x10000000 and state["seq"] > 65536, state
    assert anomalies(gw, "rx")["backwards"] == before["backwards"]
    print(f"  rx: RTP timestamp and seq wrapped: {p.ent()['samples'] - n0} samples applied, "
          "none backwards")
    # a sender whose Time1 crosses 65535 -> 0: its clock is skewed so the wrap comes now
    q = Probe(gw, "rx", "rx/00002222/Object2-2", sender(0x2222, 2))
    skew = (65536 - 30) - F.time1()  # ms to add to our clock so Time1 wraps after ~30 ms
    base = anomalies(gw, "rx")["backwards"]
    t1s = []
    after_wrap = 0
    start = (F.time1() + skew) & 0xFFFF
    i = 0
    while after_wrap < 5 and len(t1s) < 200:
        # 5 ms steps from `start` (each send sleeps >= 4 ms, so this stays within a few ms of
        # the skewed clock) — deterministic: the wrap comes after ~6 samples however slow we are
        t1 = (start + 5 * i) & 0xFFFF
        i += 1
        if (t1s and t1 < t1s[-1]) or after_wrap:
            after_wrap += 1
        t1s.append(t1)
        q.applied("Time1 wrap", t1=t1)
    assert any(a > b for a, b in zip(t1s, t1s[1:])), f"no wrap in {t1s}"
    assert anomalies(gw, "rx")["backwards"] == base, "samples dropped across the Time1 wrap"
    print(f"  rx: Time1 wrapped ({t1s[0]} .. {t1s[-1]}): every sample applied")
    q.sane("Time1 wrap")
    # Time1 30 s in the past (same sender): dropped as backwards
    p.dropped("Time1 30 s back", t1=F.time1() - 30000)
    # a sender 3 h off: the per-SSRC offset estimate re-anchors it
    r = Probe(gw, "rx", "rx/00003333/Object2-3", sender(0x3333, 3))
    for _ in range(4):
        r.applied("clock 3 h ahead", t1=F.time1() + 3 * 3600 * 1000)
    e = r.sane("3 h ahead")
    print(f"  rx: clock 3 h ahead: re-anchored, applied (age {e['age_ms']:.1f} ms)")
    tx.close()


def main():
    sec = F.Sections()
    ads = []
    peers = {}
    less_ts = F.LessTs()
    if F.have("rgmp-client"):
        peers["rg"] = F.ScriptedPeer(lambda: F.rgmp_definition(77, ["body"]))
        ads.append(f'  - {{name: rg, type: rgmp-client, connect: "127.0.0.1:{peers["rg"].port}"}}')
    if F.have("vrpn-client"):
        peers["vc"] = F.ScriptedPeer(F.vrpn_setup)
        ads.append(f'  - {{name: vc, type: vrpn-client, '
                   f'devices: ["Tracker0@tcp://127.0.0.1:{peers["vc"].port}"]}}')
    if F.have("less"):
        L = F.less()

        def hello():
            less_ts.ts = max(less_ts.ts, int(time.monotonic() * 1e6))
            return less_ts.frame(L.msg_cc(), L.msg_introduce_type(7, L.POSE_URI)) + less_ts.frame(
                L.msg_introduce_entity(7, 1, {0: "probe", 1: 4, 2: [0.0, 1.0, 1.0], 3: [0, 0, 0],
                                              4: list(Q1), 6: 1}))
        peers["lc"] = F.ScriptedPeer(hello)
        ads.append(f'  - {{name: lc, type: less, mode: connect, '
                   f'connect: "127.0.0.1:{peers["lc"].port}", signature: none}}')
    if F.have("rtp"):
        ads.append('  - {name: rx, type: rtp, bind: "127.0.0.1:0"}')
    if F.have("rgmp-server"):
        ads.append('  - {name: ro, type: rgmp-server, listen: "127.0.0.1:0", rate_hz: 0}')
    if not ads:
        F.skip("none of rgmp-client, vrpn-client, less, rtp is in this build")
    cfg = ("gateway:\n  predict: {max_horizon_ms: 0}\n"
           "  entity: {stale_ms: 5000, expire_ms: 60000}\nadapters:\n" + "\n".join(ads) + "\n")
    with Gateway(cfg) as gw:
        try:
            reader = None
            if F.have("rgmp-server"):
                reader = F.RgmpReader(F.port_of(gw, "ro"))
            sec.run("time rgmp-client", ["rgmp-client"], lambda: rgmp_section(gw, peers["rg"]))
            sec.run("time vrpn-client", ["vrpn-client"], lambda: vrpn_section(gw, peers["vc"]))
            sec.run("time less", ["less"], lambda: less_section(gw, peers["lc"], less_ts))
            sec.run("time rtp", ["rtp"], lambda: rtp_section(gw, F.port_of(gw, "rx")))
            assert gw.get("/healthz")[0] == 200
            if reader:
                assert not reader.closed and reader.frames[2] > 0
                reader.close()
            F.assert_clean_exit(gw)
        except BaseException:
            print(gw.log()[-5000:])
            raise
        finally:
            for p in peers.values():
                try:
                    p.kill()
                except (AssertionError, OSError):
                    pass
    return sec.finish()


if __name__ == "__main__":
    sys.exit(main())
