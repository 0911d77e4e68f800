"""Integration: an RTP sender whose destination has no listener says so (issue 17 item 6).

xrgate sends a synth rig over RTP to two destinations on loopback: a UDP socket of this test,
and a port nobody listens on, which answers every packet with ICMP port unreachable. The adapter
asks for ICMP errors (IP_RECVERR) and must then:
- count them (`dest_unreachable` in /api/adapters, `xrgate_adapter_dest_unreachable_total`),
  show the state `unreachable` (so `xrgate_adapter_up` is 0) and log one line naming the
  destination, not one per packet;
- not count them as send errors, and still deliver every packet to the live destination: a
  pending ICMP error fails the next sendto() on the socket whichever destination it is for, so
  the adapter sends that packet again (the RTP sequence numbers the live socket sees have no
  gaps);
- once something listens there (this test binds the port), return to `listening` within ~2 s."""
import re
import socket
import struct
import sys

from xgtest import Gateway, parse_prometheus, wait_until


def main():
    live = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    live.bind(("127.0.0.1", 0))
    live.settimeout(2.0)
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    dead = probe.getsockname()[1]
    probe.close()
    conf = f"""adapters:
  - name: demo
    type: synth
    rate_hz: 60
  - name: out
    type: rtp
    bind: "127.0.0.1:0"
    destinations: ["127.0.0.1:{dead}", "127.0.0.1:{live.getsockname()[1]}"]
    rate_hz: 60
"""
    with Gateway(conf) as gw:
        a = wait_until(lambda: (lambda x: x if x["counters"]["dest_unreachable"] >= 20 else None)(
            gw.adapter("out")), what="ICMP port unreachable counted")
        assert a["state"] == "unreachable", a
        assert a["counters"]["errors"] == 0, a  # not a send error
        want = f"[out] RTP to 127.0.0.1:{dead}: port unreachable (ICMP): nothing receives there"
        assert gw.wait_log(want), gw.log()
        lines = [l for l in gw.lines if "port unreachable" in l]
        assert len(lines) == 1, lines  # one line per episode, not per packet
        m = parse_prometheus(gw.get("/metrics")[2].decode())
        lbl = 'adapter="out",type="rtp"'
        assert m[("xrgate_adapter_dest_unreachable_total", lbl)] >= 20, m
        assert m[("xrgate_adapter_up", lbl)] == 0, m
        print(f"ok   {a['counters']['dest_unreachable']} ICMP port unreachable counted, state "
              f"unreachable, xrgate_adapter_up 0, one log line: {lines[0]}")

        # the live destination misses nothing: consecutive RTP sequence numbers over 200 packets
        seqs = []
        while len(seqs) < 200:
            pkt = live.recv(65536)
            if len(pkt) >= 12 and not 72 <= (pkt[1] & 0x7f) <= 76:  # RTP, not RTCP (RFC 5761)
                seqs.append(struct.unpack("!H", pkt[2:4])[0])
        gaps = [(x, y) for x, y in zip(seqs, seqs[1:]) if (y - x) & 0xffff != 1]
        assert not gaps, gaps[:10]
        after = gw.adapter("out")["counters"]
        assert after["dest_unreachable"] > a["counters"]["dest_unreachable"], after
        print(f"ok   200 packets to the live destination without a gap while "
              f"{after['dest_unreachable']} came back unreachable")

        # something listens there now: the state recovers
        fixed = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        fixed.bind(("127.0.0.1", dead))
        try:
            wait_until(lambda: gw.adapter("out")["state"] == "listening", 6,
                       what="state back to listening")
            n = gw.adapter("out")["counters"]["dest_unreachable"]
            fixed.settimeout(2.0)
            assert fixed.recv(65536), "the former dead port now receives"
            assert gw.adapter("out")["counters"]["dest_unreachable"] == n
            print("ok   a listener at the port: state back to listening, no more ICMP")
        finally:
            fixed.close()
    live.close()
    print("test_rtp_unreachable: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
