"""Integration (issue 6): two gateways federate over LESS TCP with signed packets, and a ring of
three gateways does not echo.

1. Gateway A (synth: head, two hands, two bodies) connects to gateway B (less listen). B's
   /api/entities shows A's five entities under "fed/demo/..." with A's kinds and with poses that
   match A's. Tolerance: A is queried before and after B, so B's answer must lie within
   |v|·(spacing) + 5 mm of A's first answer (positions; FLOAT32 on the wire adds < 1 µm; the
   prediction to the request time from a 60 Hz stream of poses with velocities adds
   < a·dt²/2 ≈ 1 mm for the synth's ≤ 1.5 m/s² at dt ≤ 40 ms), and the orientations within
   |ω|·(spacing) + 2°.
2. Ring A→B→C→A (each link bidirectional, one local body per gateway): every gateway ends up
   with exactly three entities, one per origin gateway, none of them its own entity coming back,
   and this stays so (no echo, no duplicate via the other direction of the ring).
3. A peer with the wrong key is refused: B logs the bad signature naming the peer, A reconnects
   with backoff, and B's entities from A never appear. Key rotation by key id: each side accepts
   every configured key and signs with the one named by key_id."""
import math
import os
import sys
import tempfile
import time

from xgtest import Gateway, reserve_port, wait_until

KEY = "00112233445566778899aabbccddeeff0123456789abcdef0123456789abcdef"


def write_key(d, name, hexkey):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(hexkey + "\n")
    return path


def listen_port(gw, name):
    peer = wait_until(lambda: gw.adapter(name)["peer"], what=f"{name} bound")
    return int(peer.split()[0].rsplit(":", 1)[1])


def clean_stop(g):
    """Stop a gateway and check it exited cleanly (no sanitizer report under ASan builds)."""
    rc, _ = g.stop()
    log = g.log()
    assert rc == 0 and "Sanitizer" not in log and "runtime error" not in log, log[-3000:]


def quat_angle(q1, q2):
    d = abs(sum(a * b for a, b in zip(q1, q2)))
    return 2 * math.acos(min(1.0, d))


def test_pair(tmp):
    key = write_key(tmp, "k.hex", KEY)
    b_conf = f"""
gateway: {{id: gw-b}}
adapters:
  - name: fed
    type: less
    mode: listen
    listen: "127.0.0.1:0"
    key_file: {key}
    rate_hz: 60
"""
    with Gateway(b_conf) as b:
        port = listen_port(b, "fed")
        a_conf = f"""
gateway: {{id: gw-a}}
adapters:
  - name: demo
    type: synth
    bodies: 2
  - name: up
    type: less
    mode: connect
    connect: "127.0.0.1:{port}"
    key_file: {key}
    rate_hz: 60
"""
        with Gateway(a_conf) as a:
            names = ["head", "left_hand", "right_hand", "body0", "body1"]
            wait_until(lambda: all(f"fed/demo/{n}" in b.entities() for n in names), what="A on B")
            assert a.adapter("up")["state"] == "streaming", a.adapter("up")
            worst_p = worst_q = 0.0
            for _ in range(5):
                t0 = time.monotonic()
                ea = a.entities()
                eb = b.entities()
                ea2 = a.entities()
                spacing = time.monotonic() - t0
                for n in names:
                    ra, rb = ea[f"demo/{n}"], eb[f"fed/demo/{n}"]
                    assert rb["kind"] == ra["kind"], (rb, ra)
                    assert rb["origin"] == "fed", rb
                    speed = max(math.dist(ra["velocity"], [0, 0, 0]),
                                math.dist(ea2[f"demo/{n}"]["velocity"], [0, 0, 0]))
                    tol_p = speed * spacing + 0.005
                    dp = math.dist(ra["position"], rb["position"])
                    assert dp <= tol_p, (n, dp, tol_p, ra["position"], rb["position"])
                    omega = math.dist(ra["angular_velocity"], [0, 0, 0])
                    tol_q = omega * spacing + math.radians(2)
                    dq = quat_angle(ra["orientation"], rb["orientation"])
                    assert dq <= tol_q, (n, math.degrees(dq), math.degrees(tol_q))
                    worst_p = max(worst_p, dp - speed * spacing)
                    worst_q = max(worst_q, dq - omega * spacing)
                n0 = eb["fed/demo/head"]["samples"]  # the next comparison on newer samples
                wait_until(lambda: b.entities()["fed/demo/head"]["samples"] > n0 + 2,
                         what="newer samples on B")
            # nothing comes back to A: its LESS peer only has A's own entities
            assert sorted(a.entities()) == sorted(f"demo/{n}" for n in names), a.entities().keys()
            fed = b.adapter("fed")["counters"]
            assert fed["framing_errors"] == 0 and fed["bad_signature"] == 0, fed
            print(f"pair: 5 entities match (excess error {worst_p * 1000:.2f} mm, "
                  f"{math.degrees(worst_q):.2f} deg)")
        # A went away: its entities leave B with the session
        wait_until(lambda: not any(n.startswith("fed/") for n in b.entities()), what="cleanup on B")
        wait_until(lambda: "connection closed by peer" in b.log(), what="B logs the close")


def test_ring(tmp):
    key = write_key(tmp, "k.hex", KEY)
    ids = ["ra", "rb", "rc"]
    gws = {}
    # each "out" adapter names the next gateway's port: the test holds the three ports until
    # their gateways listen on them
    holds = {gid: reserve_port() for gid in ids}
    ports = {gid: h.port for gid, h in holds.items()}
    try:
        for i, gid in enumerate(ids):
            nxt = ids[(i + 1) % 3]
            gws[gid] = Gateway(f"""
gateway: {{id: gw-{gid}}}
adapters:
  - name: {gid}
    type: synth
    bodies: 1
    head: false
    hands: false
  - name: in
    type: less
    mode: listen
    listen: "127.0.0.1:{ports[gid]}"
    key_file: {key}
    rate_hz: 60
  - name: out
    type: less
    mode: connect
    connect: "127.0.0.1:{ports[nxt]}"
    key_file: {key}
    rate_hz: 60
""")
        for gid in ids:
            assert listen_port(gws[gid], "in") == ports[gid]
            holds[gid].release()

        def settled():
            return all(len(g.entities()) == 3 for g in gws.values())
        wait_until(settled, timeout=10, what="3 entities on every gateway")
        # echoes, if any, would have gone round many times once every adapter has received
        # another 60 packets (1 s at 60 Hz)
        before = {(gid, n): g.adapter(n)["counters"]["packets_in"] for gid, g in gws.items()
                  for n in ("in", "out")}
        wait_until(lambda: all(gws[gid].adapter(n)["counters"]["packets_in"] >= c + 60
                             for (gid, n), c in before.items()), timeout=20,
                 what="60 more packets into every less adapter")
        for gid, g in gws.items():
            es = g.entities()
            assert len(es) == 3, (gid, sorted(es))
            local = [n for n in es if n.startswith(gid + "/")]
            assert local == [f"{gid}/body0"], (gid, sorted(es))
            remote = sorted(n.split("/", 1)[1] for n in es if not n.startswith(gid + "/"))
            others = sorted(f"{o}/body0" for o in ids if o != gid)
            assert remote == others, (gid, sorted(es))
        total_dups = sum(g.adapter(n)["counters"]["mesh_duplicates"] for g in gws.values()
                         for n in ("in", "out"))
        assert total_dups >= 3, total_dups  # each entity also arrived the long way round
        print(f"ring: 3 gateways x 3 entities, no echo ({total_dups} second-path copies ignored)")
        for g in gws.values():
            clean_stop(g)
    finally:
        for g in gws.values():
            g.stop()
        for h in holds.values():
            h.release()


def test_star(tmp):
    """B listens, A and C connect to the same adapter: B relays between its peers (hub)."""
    key = write_key(tmp, "k.hex", KEY)
    def conf(gid, less):
        return f"""
gateway: {{id: gw-{gid}}}
adapters:
  - {{name: {gid}, type: synth, bodies: 1, head: false, hands: false}}
  - name: fed
    type: less
    key_file: {key}
    rate_hz: 60
{less}
"""
    with Gateway(conf("hb", '    mode: listen\n    listen: "127.0.0.1:0"')) as b:
        port = listen_port(b, "fed")
        client = f'    mode: connect\n    connect: "127.0.0.1:{port}"'
        with Gateway(conf("sa", client)) as a, Gateway(conf("sc", client)) as c:
            want = {"sa": ["fed/hb/body0", "fed/sc/body0", "sa/body0"],
                    "sc": ["fed/hb/body0", "fed/sa/body0", "sc/body0"],
                    "hb": ["fed/sa/body0", "fed/sc/body0", "hb/body0"]}
            gws = {"sa": a, "sc": c, "hb": b}
            wait_until(lambda: all(sorted(g.entities()) == want[k] for k, g in gws.items()),
                     what="every gateway sees the three bodies once")
            # and nothing more once each peer has received another 30 packets (0.5 s)
            before = {k: g.adapter("fed")["counters"]["packets_in"] for k, g in gws.items()}
            wait_until(lambda: all(g.adapter("fed")["counters"]["packets_in"] >= before[k] + 30
                                 for k, g in gws.items()), timeout=20,
                     what="30 more packets into every peer")
            for k, g in gws.items():
                assert sorted(g.entities()) == want[k], (k, sorted(g.entities()))
            assert b.adapter("fed")["counters"]["hub_relayed"] > 0
            c.stop()
            wait_until(lambda: sorted(a.entities()) == ["fed/hb/body0", "sa/body0"],
                     what="C's body removed from A when C leaves")
            print("star: B relays between its peers; C's body leaves A with C")
            clean_stop(a)
        clean_stop(b)


def test_wrong_key(tmp):
    key = write_key(tmp, "k.hex", KEY)
    bad = write_key(tmp, "bad.hex", "ff" * 32)
    with Gateway(f"""
gateway: {{id: gw-b}}
adapters:
  - name: fed
    type: less
    mode: listen
    listen: "127.0.0.1:0"
    key_file: {key}
""") as b:
        port = listen_port(b, "fed")
        with Gateway(f"""
gateway: {{id: gw-a}}
adapters:
  - name: demo
    type: synth
    bodies: 1
  - name: up
    type: less
    mode: connect
    connect: "127.0.0.1:{port}"
    key_file: {bad}
""") as a:
            wait_until(lambda: b.adapter("fed")["counters"]["bad_signature"] >= 2,
                     what="bad signatures counted")
            line = next(l for l in b.log().splitlines() if "signature" in l)
            assert "127.0.0.1:" in line and "closing" in line, line
            assert not b.entities(), b.entities()
            wait_until(lambda: a.adapter("up")["counters"]["reconnects"] >= 1, what="reconnect")
            print("wrong key: refused:", line.split("] ", 1)[1])

    # key rotation by key id (issue 12): B accepts the old and the new key and still signs with
    # the old one; A has moved to the new one. Both directions verify.
    new = write_key(tmp, "new.hex", "5a" * 32)
    with Gateway(f"""
gateway: {{id: gw-b}}
adapters:
  - {{name: local, type: synth, bodies: 1, head: false, hands: false}}
  - name: fed
    type: less
    mode: listen
    listen: "127.0.0.1:0"
    key_id: old
    keys: [{{id: old, file: {key}}}, {{id: new, file: {new}}}]
""") as b:
        port = listen_port(b, "fed")
        with Gateway(f"""
gateway: {{id: gw-a}}
adapters:
  - {{name: demo, type: synth, bodies: 1, head: false, hands: false}}
  - name: up
    type: less
    mode: connect
    connect: "127.0.0.1:{port}"
    key_file: {new}
    key_id: new
    keys: [{{id: old, file: {key}}}]
""") as a:
            wait_until(lambda: "fed/demo/body0" in b.entities(), what="A's entity on B")
            wait_until(lambda: "up/local/body0" in a.entities(), what="B's entity on A")
            assert b.wait_log("key id 'new'") and a.wait_log("key id 'old'")
            print("key rotation: old/new keys accepted on both sides")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_pair(tmp)
        test_ring(tmp)
        test_star(tmp)
        test_wrong_key(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
