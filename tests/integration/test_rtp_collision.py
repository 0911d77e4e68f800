"""Integration: SSRC collisions of the rtp adapter (RFC 3550 §8.2), through the real daemon.

The adapter sends a synth rig to its own port (127.0.0.1:P -> 127.0.0.1:P), so every packet it
sends comes back to it from its own address:
- its own packets are not a collision: ssrc_collisions stays 0, packets_in 0, the SSRC is the
  configured one;
- a peer that sends with our SSRC from another address is one: one warning naming the peer and
  both SSRCs, ssrc_collisions 1, a BYE for the old SSRC, a new SSRC in /api/adapters, and the
  peer's packet is then served as a new sender's (entity created, FIR to the peer from the new
  SSRC);
- the same address sending with our new SSRC again is a loop, not a new collision: the SSRC
  stays; the adapter's own packets with the new SSRC are still not collisions."""
import socket
import struct
import sys

from test_rtp import object2, require_rtp, rtp
from xgtest import Gateway, wait_until

OLD = 0x01020304


def rtcp_packets(sock, want_pt, tries=50):
    """RTCP compounds received on sock until one holds a packet of type want_pt."""
    for _ in range(tries):
        try:
            d = sock.recv(65536)
        except socket.timeout:
            continue
        i, pts = 0, []
        while i + 4 <= len(d):
            pts.append(d[i + 1])
            i += 4 * (struct.unpack(">H", d[i + 2:i + 4])[0] + 1)
        if want_pt in pts:
            return d, pts
    raise AssertionError(f"no RTCP packet of type {want_pt}")


def main():
    require_rtp()
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    conf = f"""adapters:
  - {{name: demo, type: synth, rate_hz: 60, bodies: 1, head: false, hands: false}}
  - name: me
    type: rtp
    bind: "127.0.0.1:{port}"
    destinations: ["127.0.0.1:{port}"]
    ssrc: {OLD}
    rate_hz: 60
"""
    peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    peer.bind(("127.0.0.1", 0))
    peer.settimeout(0.2)
    try:
        with Gateway(conf) as gw:
            c = wait_until(lambda: (lambda x: x if x["packets_out"] >= 20 else None)(
                gw.counters("me")), what="20 packets sent to itself")
            assert c["ssrc_collisions"] == 0 and c["packets_in"] == 0, c
            assert c["ssrc"] == OLD, c
            print("ok   its own packets from its own address: no collision, not ingress")

            pkt = rtp(98, 1, 0, OLD, object2(1, 0, (1, 2, 3), (0, 0, 0), (0, 0, 0), (0, 0, 0)))
            peer.sendto(pkt, ("127.0.0.1", port))
            c = wait_until(lambda: (lambda x: x if x["ssrc_collisions"] == 1 else None)(
                gw.counters("me")), what="the collision counted")
            new = c["ssrc"]
            assert new != OLD, c
            line = (f"[me] SSRC collision: 127.0.0.1:{peer.getsockname()[1]} sends with our SSRC "
                    f"{OLD:08x}; BYE sent for it, our SSRC is now {new:08x} (RFC 3550 §8.2)")
            assert gw.wait_log(line), gw.log()
            # the peer is now a sender of its own: its entity, and a FIR from our new SSRC
            wait_until(lambda: gw.counters("me")["objects_in"] == 1,
                       what="the peer's object applied")
            names = [e["name"] for e in gw.get_json("/api/entities")["entities"]]
            assert f"me/{OLD:08x}/Object2-1" in names, names
            d, pts = rtcp_packets(peer, 206)
            assert struct.unpack(">I", d[4:8])[0] == new, hex(struct.unpack(">I", d[4:8])[0])
            print(f"ok   a peer with our SSRC: one line, ssrc_collisions 1, SSRC {OLD:08x} -> "
                  f"{new:08x}, its packet served as a new sender's (FIR from the new SSRC)")

            # the same address with our new SSRC: a loop (no second change); and our own packets
            # with the new SSRC are no collision either
            n0 = gw.counters("me")["packets_out"]
            peer.sendto(rtp(98, 2, 0, new, object2(1, 0, (1, 2, 3), (0, 0, 0), (0, 0, 0),
                                                   (0, 0, 0))), ("127.0.0.1", port))
            # then a packet of the peer's own sender (SSRC OLD): once it is counted, the one
            # before it was handled
            peer.sendto(pkt[:2] + struct.pack(">H", 3) + pkt[4:], ("127.0.0.1", port))
            wait_until(lambda: gw.counters("me")["packets_in"] == 2, what="the peer's next packet")
            wait_until(lambda: gw.counters("me")["packets_out"] >= n0 + 20,
                       what="20 more packets sent to itself")
            c = gw.counters("me")
            assert c["packets_in"] == 2, c  # the looped packet is not ingress
            assert c["ssrc_collisions"] == 1 and c["ssrc"] == new, c
            assert len([l for l in gw.lines if "SSRC collision" in l]) == 1, gw.log()
            print("ok   our new SSRC from the conflicting address: a loop, no second change; our "
                  "own packets still no collision")
    finally:
        peer.close()
    print("test_rtp_collision: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
