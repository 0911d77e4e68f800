"""Integration: two gateways chained over RTP game state on loopback. A (synth -> rtp egress)
sends to B (rtp ingress); B asks A for a full state with an FIR when A's SSRC first appears, and
B's /api/entities shows A's entities (named <adapter>/<ssrc>/<type>-<objectID>, kinds from the
object types) at A's poses, with velocities. Also: B's ingress entities are not sent back to A's
port by B's own egress (split horizon), and a silent SSRC is forgotten after ssrc_timeout_ms."""
import sys
import time

import socket

from test_rtp import adapter, dist, head1, rtp, rtp_available, wait_entities
from xgtest import Gateway


def main():
    if not rtp_available():
        print("SKIP: this build has no rtp adapter")
        return 77
    cfg_b = """
adapters:
  - name: fromA
    type: rtp
    bind: "127.0.0.1:0"
    ssrc_timeout_ms: 600
"""
    with Gateway(cfg_b) as b:
        port_b = int(adapter(b, "fromA")["counters"]["port"])
        cfg_a = f"""
adapters:
  - name: demo
    type: synth
    bodies: 1
  - name: out
    type: rtp
    bind: "127.0.0.1:0"
    destinations: ["127.0.0.1:{port_b}"]
    rate_hz: 60
    ssrc: 0x5eed0001
"""
        with Gateway(cfg_a) as a:
            ents = wait_entities(b, 4, "fromA/")
            names = sorted(e["name"] for e in ents)
            assert names == ["fromA/5eed0001/Hand1-2", "fromA/5eed0001/Hand1-3",
                             "fromA/5eed0001/Head1-1", "fromA/5eed0001/Object2-4"] or \
                len(names) == 4 and all(n.startswith("fromA/5eed0001/") for n in names), names
            kinds = sorted(e["kind"] for e in ents)
            assert kinds == ["head", "left_hand", "object", "right_hand"], kinds
            time.sleep(0.2)
            ca = adapter(a, "out")["counters"]
            assert ca["firs_in"] >= 1 and ca["full_states"] >= 1, ca
            assert adapter(b, "fromA")["counters"]["firs_out"] >= 1
            # poses: both in the internal frame (each side converts from/to the draft's frame)
            ea = {e["kind"]: e for e in a.get_json("/api/entities")["entities"]}
            eb = {e["kind"]: e for e in b.get_json("/api/entities")["entities"]}
            for kind in ("head", "left_hand", "right_hand"):
                pa, pb = ea[kind], eb[kind]
                # a few ms apart (two requests, 60 Hz egress, Time1 ms): speeds < 1 m/s
                assert dist(pa["position"], pb["position"]) < 0.03, (kind, pa, pb)
                assert dist(pa["velocity"], pb["velocity"]) < 0.1, (kind, pa, pb)
                assert pb["velocity_estimated"] is False, pb
                assert pb["angular_velocity_estimated"] is False, pb
            # the A->B loop ends at B: B has no destinations, and A never receives its own
            # entities back
            assert all(e["origin"] != "out" for e in a.get_json("/api/entities")["entities"])
        # A stopped (RTCP BYE on stop): B forgets the SSRC and removes its entities
        t_end = time.monotonic() + 5
        while time.monotonic() < t_end:
            if not [e for e in b.get_json("/api/entities")["entities"]
                    if e["name"].startswith("fromA/")]:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("A's entities still in B after it left")
        cb = adapter(b, "fromA")["counters"]
        assert cb["ssrcs"] == 0, cb
        # a sender that goes silent without a BYE: forgotten after ssrc_timeout_ms (600 ms)
        tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        t1 = (time.time_ns() // 1_000_000) & 0xFFFF
        tx.sendto(rtp(98, 1, 0, 0x77, head1(1, t1, (0, 1, 0), (0, 0, 0), (0, 0, 0), (0, 0, 0))),
                  ("127.0.0.1", port_b))
        wait_entities(b, 1, "fromA/00000077/")
        t0 = time.monotonic()
        while time.monotonic() - t0 < 5:
            if not [e for e in b.get_json("/api/entities")["entities"]
                    if e["name"].startswith("fromA/00000077/")]:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("silent SSRC not forgotten")
        assert time.monotonic() - t0 > 0.3  # not before the timeout
        assert adapter(b, "fromA")["counters"]["ssrc_timeouts"] == 1
    print("chain: A's synth entities reach B over RTP with poses and velocities; BYE removes them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
