"""Integration: cut-through egress and shared prediction (issue 19 items 1 and 3).

A VRPN server of this test sends xrgate's `vrpn-client` one TCP write of N = 150 Pos_Quat reports
(13,200 bytes: one ingress batch, read in one pass although libevent reads 4 KiB at a time). Two
send-on-change `rtp` sinks, `a` and `b` (`rate_hz: 0`), send what they drain to one UDP socket of
this test. One socket on purpose: the kernel queues datagrams in the order they were sent, so the
order in which the test reads them is the order of the sinks' sends, with no timing involved.

- Cut-through in a long batch: after XG_CUT_AFTER = 64 updates of the batch, each sink sends
  what is marked (64 objects, several datagrams) before the rest of the batch is even pushed;
  the next cut would wait 128 more updates, past this batch's end, so the pass after the read
  sends the other 86 in slices of 64: a 64, b 64 (the cut), a 64, b 64, a 22, b 22 (the pass).
  So the datagrams arrive as six runs, a b a b a b, where they arrived as two (a's whole batch,
  then b's) before cut-through; every report reaches both sinks once (`objects_out`). 2 passes
  and 6 drains per batch (`xrgate_egress_passes_total`, `xrgate_egress_drains_total`).
- A short batch (20 reports) is not cut: the pass after the read sends it whole, a's datagrams
  then b's, one pass and one drain per sink (a write per slice costs more than the wait on this
  scale; docs/performance.md "Cut-through egress"). A single report likewise.
- Shared prediction: the sinks drain in the same egress passes, so each entity is predicted once
  per pass: `xrgate_predictions_shared_total` grows by exactly one batch (b's answers).
"""
import select
import socket
import struct
import sys

from xgtest import Gateway, parse_prometheus, wait_until

COOKIE = b"vrpn: ver. 07.38  0" + b"\0" * 5
N = 150  # reports per long batch (150 x 88 = 13,200 bytes: one read of at most 16 KiB)
SHORT = 20  # reports per short batch
CUT = 64  # XG_CUT_AFTER (core/table/entity.h), and the rtp sinks' slice (XG_EGRESS_SLICE)
SSRC = {0x0a0a0a0a: "a", 0x0b0b0b0b: "b"}


def msg(sender, typ, body=b"", t=(1000, 0)):
    length = 24 + len(body)
    return struct.pack(">IIIiiI", length, t[0], t[1], sender, typ, 0) + body + \
        b"\0" * (-len(body) % 8)


def desc(kind, ident, name):
    n = name.encode() + b"\0"
    return msg(ident, kind, struct.pack(">I", len(n)) + n)


def batch(sec, n=N):
    """n Pos_Quat reports of Tracker0 (sensors 0..n-1), one capture time."""
    return b"".join(msg(3, 7, struct.pack(">ii7d", s, s, 0.1 * s, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0),
                        t=(sec, 0)) for s in range(n))


def runs(order):
    """["a", "a", "b", "a"] -> ["a", "b", "a"]: the sinks' runs of consecutive datagrams."""
    return [s for i, s in enumerate(order) if i == 0 or order[i - 1] != s]


def rtp_sink(pkt):
    """The sink that sent an RTP datagram (by its SSRC); None for RTCP (RFC 5761)."""
    if len(pkt) < 12 or 72 <= (pkt[1] & 0x7f) <= 76:
        return None
    ssrc = struct.unpack("!I", pkt[8:12])[0]
    return SSRC[ssrc]


def read_all(sock):
    """Every datagram queued on sock, in arrival order (the queue is complete: the caller waited
    for the sinks' counters, which the daemon updates before the admin API answers)."""
    out = []
    while select.select([sock], [], [], 0)[0]:
        out.append(sock.recv(65536))
    return out


def metric(gw, name):
    _, _, body = gw.get("/metrics")
    return parse_prometheus(body.decode())[(name, "")]


def main():
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(1)
    usock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    usock.bind(("127.0.0.1", 0))
    dest = f"127.0.0.1:{usock.getsockname()[1]}"
    sinks = "".join(f"""
  - name: {name}
    type: rtp
    bind: "127.0.0.1:0"
    destinations: ["{dest}"]
    ssrc: {ssrc}
    rate_hz: 0
    refresh_ms: 0
    rtcp_interval_ms: 0
""" for ssrc, name in SSRC.items())
    conf = f"""
gateway:
  entity: {{stale_ms: 60000, expire_ms: 120000}}
adapters:
  - name: src
    type: vrpn-client
    devices: ["Tracker0@tcp://127.0.0.1:{lsock.getsockname()[1]}"]
{sinks}"""
    with Gateway(conf) as gw:
        try:
            lsock.settimeout(10)
            conn, _ = lsock.accept()
            conn.sendall(COOKIE + desc(-1, 0, "VRPN Control") + desc(-1, 3, "Tracker0") +
                         desc(-2, 7, "vrpn_Tracker Pos_Quat"))
            gw.wait_counter("src", "connects")
            passes0 = metric(gw, "xrgate_egress_passes_total")
            drains0 = metric(gw, "xrgate_egress_drains_total")
            for k in range(1, 3):
                conn.sendall(batch(1000 + k))
                for name in ("a", "b"):
                    gw.wait_counter(name, "objects_out", at_least=N * k)
                order = [s for s in map(rtp_sink, read_all(usock)) if s]
                # one cut (after 64 updates), then the pass after the read in slices of 64
                assert runs(order) == ["a", "b"] * (1 + -(-(N - CUT) // CUT)), (k, order)
                for name in ("a", "b"):
                    cnt = gw.counters(name)
                    assert cnt["objects_out"] == N * k, (name, cnt)
                assert metric(gw, "xrgate_predictions_shared_total") == N * k, k
                assert metric(gw, "xrgate_egress_passes_total") - passes0 == 2 * k, k
                assert metric(gw, "xrgate_egress_drains_total") - drains0 == 6 * k, k
            # a short batch is not cut: one pass after the read, a's datagrams then b's
            conn.sendall(batch(1010, SHORT))
            for name in ("a", "b"):
                gw.wait_counter(name, "objects_out", at_least=2 * N + SHORT)
            order = [s for s in map(rtp_sink, read_all(usock)) if s]
            assert runs(order) == ["a", "b"], order
            assert metric(gw, "xrgate_predictions_shared_total") == 2 * N + SHORT
            assert metric(gw, "xrgate_egress_passes_total") - passes0 == 2 * 2 + 1
            assert metric(gw, "xrgate_egress_drains_total") - drains0 == 6 * 2 + 2
            # a batch of one report: one pass, one drain per sink
            conn.sendall(msg(3, 7, struct.pack(">ii7d", 0, 0, 9.0, 1.0, 0, 0, 0, 0, 1.0),
                             t=(1020, 0)))
            for name in ("a", "b"):
                gw.wait_counter(name, "objects_out", at_least=2 * N + SHORT + 1)
            assert [s for s in map(rtp_sink, read_all(usock)) if s] == ["a", "b"]
            assert metric(gw, "xrgate_egress_passes_total") - passes0 == 2 * 2 + 2
            assert metric(gw, "xrgate_egress_drains_total") - drains0 == 6 * 2 + 4
        except BaseException:
            print(gw.log())
            raise
    print("egress cut-through: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
