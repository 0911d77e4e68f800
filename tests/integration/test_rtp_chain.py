"""Integration: two gateways chained over RTP game state on loopback. A (synth -> rtp egress)
sends to B (rtp ingress); B asks A for a full state with an FIR when A's SSRC first appears, and
B's /api/entities shows A's entities (named <adapter>/<ssrc>/<type>-<objectID>, kinds from the
object types) at A's poses, with velocities. Also: B's ingress entities are not sent back to A's
port by B's own egress (split horizon), and a silent SSRC is forgotten after ssrc_timeout_ms. Multicast: one sender, two gateways
that bind the same group on the loopback interface (skipped if this host cannot loop multicast
back)."""
import sys
import time

import socket

from test_rtp import dist, head1, require_rtp, rtp, wait_entities
from xgtest import Gateway, skip_part, wait_until


def main():
    require_rtp()
    cfg_b = """
adapters:
  - name: fromA
    type: rtp
    bind: "127.0.0.1:0"
    ssrc_timeout_ms: 600
"""
    with Gateway(cfg_b) as b:
        port_b = b.port_of("fromA")
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
            wait_until(lambda: a.adapter("out")["counters"]["firs_in"] >= 1, what="a FIR at A")
            ca = a.adapter("out")["counters"]
            assert ca["firs_in"] >= 1 and ca["full_states"] >= 1, ca
            assert b.adapter("fromA")["counters"]["firs_out"] >= 1
            # poses: both in the internal frame (each side converts from/to the draft's frame)
            t0 = time.monotonic()
            ea = {e["kind"]: e for e in a.get_json("/api/entities")["entities"]}
            eb = {e["kind"]: e for e in b.get_json("/api/entities")["entities"]}
            # apart by the two requests (measured: long on a loaded machine), 60 Hz egress and
            # Time1 ms: speeds < 1 m/s, accelerations < 3 m/s^2
            lag = time.monotonic() - t0 + 1 / 60 + 0.005
            for kind in ("head", "left_hand", "right_hand"):
                pa, pb = ea[kind], eb[kind]
                assert dist(pa["position"], pb["position"]) < 0.01 + 1.0 * lag, (kind, lag, pa, pb)
                assert dist(pa["velocity"], pb["velocity"]) < 0.05 + 3.0 * lag, (kind, lag, pa, pb)
                assert pb["velocity_estimated"] is False, pb
                assert pb["angular_velocity_estimated"] is False, pb
            # the A->B loop ends at B: B has no destinations, and A never receives its own
            # entities back
            assert all(e["origin"] != "out" for e in a.get_json("/api/entities")["entities"])
        # A stopped (RTCP BYE on stop): B forgets the SSRC and removes its entities
        wait_until(lambda: not b.entities("fromA/"), what="A's entities gone from B after it left")
        cb = b.adapter("fromA")["counters"]
        assert cb["ssrcs"] == 0, cb
        # a sender that goes silent without a BYE: forgotten after ssrc_timeout_ms (600 ms)
        tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        t1 = (time.time_ns() // 1_000_000) & 0xFFFF
        t0 = time.monotonic()  # before the packet: it cannot be forgotten sooner
        tx.sendto(rtp(98, 1, 0, 0x77, head1(1, t1, (0, 1, 0), (0, 0, 0), (0, 0, 0), (0, 0, 0))),
                  ("127.0.0.1", port_b))
        wait_entities(b, 1, "fromA/00000077/")
        wait_until(lambda: not b.entities("fromA/00000077/"), what="silent SSRC forgotten")
        assert time.monotonic() - t0 > 0.5  # not before the 600 ms timeout
        assert b.adapter("fromA")["counters"]["ssrc_timeouts"] == 1
    print("chain: A's synth entities reach B over RTP with poses and velocities; BYE removes them")
    multicast()
    return 0


GROUP = "239.255.42.17"


def multicast_works(port):
    r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    r.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    r.bind(("", port))
    try:
        r.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                     socket.inet_aton(GROUP) + socket.inet_aton("127.0.0.1"))
        t = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        t.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
        t.sendto(b"probe", (GROUP, port))
        r.settimeout(5.0)  # only waited for when multicast does not loop (loaded machine)
        return r.recv(100) == b"probe"
    except OSError:
        return False
    finally:
        r.close()


def multicast():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    if not multicast_works(port):
        skip_part("no multicast loopback on this host: multicast left out")
        return
    cfg_rx = f"""
adapters:
  - name: grp
    type: rtp
    bind: "{GROUP}:{port}"
    interface: 127.0.0.1
"""
    cfg_tx = f"""
adapters:
  - name: demo
    type: synth
    bodies: 0
  - name: out
    type: rtp
    bind: "127.0.0.1:0"
    interface: 127.0.0.1
    destinations: ["{GROUP}:{port}"]
"""
    with Gateway(cfg_rx) as b1, Gateway(cfg_rx) as b2, Gateway(cfg_tx) as a:
        for b in (b1, b2):
            ents = wait_entities(b, 3, "grp/")
            assert sorted(e["kind"] for e in ents) == ["head", "left_hand", "right_hand"], ents
        # FIRs from the receivers reach the sender's port
        wait_until(lambda: a.adapter("out")["counters"]["firs_in"] >= 2, what="2 FIRs at A")
    print("multicast: one sender, two receiving gateways on a group")


if __name__ == "__main__":
    sys.exit(main())
