"""Integration: the RTP adapter hands a drain's packets to the kernel batched (issue 19 item 4).

xrgate sends a synth rig over RTP with a small mtu (several packets per drain) to three UDP
sockets of this test. Every packet goes to every destination, but the adapter queues them and
sends them with sendmmsg(2), up to 16 datagrams per call: its `udp_sends` counter (syscalls)
stays below `packets_out` (packets, each sent to 3 destinations), and every destination still
receives every RTP packet, identical and in order (consecutive sequence numbers)."""
import socket
import struct
import sys

from xgtest import Gateway, wait_until


def rtp_packets(sock, n):
    """The first n RTP packets (not RTCP, RFC 5761) the socket receives, in arrival order:
    [(seq, bytes)]."""
    got = []
    while len(got) < n:
        pkt = sock.recv(65536)
        if len(pkt) >= 12 and not 72 <= (pkt[1] & 0x7f) <= 76:
            got.append((struct.unpack("!H", pkt[2:4])[0], pkt))
    return got


def main():
    socks = []
    for _ in range(3):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        s.settimeout(2.0)
        socks.append(s)
    dests = ", ".join(f'"127.0.0.1:{s.getsockname()[1]}"' for s in socks)
    conf = f"""adapters:
  - name: demo
    type: synth
    rate_hz: 60
  - name: out
    type: rtp
    bind: "127.0.0.1:0"
    destinations: [{dests}]
    mtu: 256
    rate_hz: 60
"""
    with Gateway(conf) as gw:
        c = wait_until(lambda: (lambda x: x if x["packets_out"] >= 100 else None)(
            gw.adapter("out")["counters"]), what="100 packets out")
        assert c["errors"] == 0, c
        assert 0 < c["udp_sends"] < c["packets_out"], c
        print(f"ok   {c['packets_out']} packets to 3 destinations ({3 * c['packets_out']} "
              f"datagrams) in {c['udp_sends']} sendmmsg calls")

        # every destination gets every packet, the same bytes, without a gap
        got = [rtp_packets(s, 150) for s in socks]
        by_seq = [dict(g) for g in got]
        common = set(by_seq[0]) & set(by_seq[1]) & set(by_seq[2])
        assert len(common) >= 100, [len(g) for g in got]
        for seq in common:
            assert by_seq[0][seq] == by_seq[1][seq] == by_seq[2][seq], seq
        for g in got:
            seqs = [seq for seq, _ in g]
            gaps = [(x, y) for x, y in zip(seqs, seqs[1:]) if (y - x) & 0xffff != 1]
            assert not gaps, gaps[:10]
        print(f"ok   {len(common)} packets received identical by all 3 destinations, no gaps")
    for s in socks:
        s.close()
    print("test_rtp_batch: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
