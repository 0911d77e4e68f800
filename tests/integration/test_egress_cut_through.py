"""Integration: cut-through egress and shared prediction (issue 19 items 1 and 3).

A VRPN server of this test sends xrgate's `vrpn-client` one TCP write of 20 Pos_Quat reports (one
ingress batch). Two send-on-change `rtp` sinks, `a` and `b` (`rate_hz: 0`), send what they drain to
one UDP socket of this test. One socket on purpose: the kernel queues datagrams in the order they
were sent, so the order in which the test reads them is the order of the sinks' sends, with no
timing involved.

- Cut-through: each sink sends the batch in slices (1 object, then the other 19: 2 datagrams),
  the first datagram of each sink comes before any sink's second, and `b` starts before `a` has
  sent the whole batch (before the change, `a` drained the whole set into its datagrams, then `b`
  did); every report reaches both sinks once (`objects_out`). The first slices leave during the
  ingress read, right after the batch's first report is pushed (one pass), the rest in the pass
  after the read: 2 passes and 4 drains per batch (`xrgate_egress_passes_total`,
  `xrgate_egress_drains_total`); a batch of one report is one pass of one drain per sink.
- Shared prediction: the sinks drain in the same egress pass, so each entity is predicted once
  per batch: `xrgate_predictions_shared_total` grows by exactly one batch (b's answers).
"""
import select
import socket
import struct
import sys

from xgtest import Gateway, parse_prometheus, wait_until

COOKIE = b"vrpn: ver. 07.38  0" + b"\0" * 5
N = 20  # reports per batch (20 x 88 bytes: one read; the last 19 fit one RTP datagram)
SSRC = {0x0a0a0a0a: "a", 0x0b0b0b0b: "b"}


def msg(sender, typ, body=b"", t=(1000, 0)):
    length = 24 + len(body)
    return struct.pack(">IIIiiI", length, t[0], t[1], sender, typ, 0) + body + \
        b"\0" * (-len(body) % 8)


def desc(kind, ident, name):
    n = name.encode() + b"\0"
    return msg(ident, kind, struct.pack(">I", len(n)) + n)


def batch(sec):
    """N Pos_Quat reports of Tracker0 (sensors 0..N-1), one capture time."""
    return b"".join(msg(3, 7, struct.pack(">ii7d", s, s, 0.1 * s, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0),
                        t=(sec, 0)) for s in range(N))


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
                check_batch(k, order, gw)
                assert metric(gw, "xrgate_predictions_shared_total") == N * k, k
                # per batch: the cut-through (a and b: first slice) and the pass after the read
                # (a and b: the other 19)
                assert metric(gw, "xrgate_egress_passes_total") - passes0 == 2 * k, k
                assert metric(gw, "xrgate_egress_drains_total") - drains0 == 4 * k, k
            # a batch of one report leaves entirely by cut-through: one pass, one drain per sink,
            # no empty drain after it
            conn.sendall(msg(3, 7, struct.pack(">ii7d", 0, 0, 9.0, 1.0, 0, 0, 0, 0, 1.0),
                             t=(1010, 0)))
            for name in ("a", "b"):
                gw.wait_counter(name, "objects_out", at_least=2 * N + 1)
            assert [s for s in map(rtp_sink, read_all(usock)) if s] == ["a", "b"]
            assert metric(gw, "xrgate_egress_passes_total") - passes0 == 2 * 2 + 1
            assert metric(gw, "xrgate_egress_drains_total") - drains0 == 4 * 2 + 2
        except BaseException:
            print(gw.log())
            raise
    print("egress cut-through: ok")
    return 0


def check_batch(k, order, gw):
    """order: the sinks of the batch's datagrams in arrival order."""
    # slices of 1, then of up to 32 (core/egress_pass.h): 1 + 19 objects, one datagram each
    assert order.count("a") == 2 and order.count("b") == 2, (k, order)
    # first slices: one datagram of each sink before any sink's second
    assert sorted(order[:2]) == ["a", "b"], (k, order)
    # b's first datagram came before a's last: b did not wait for a's whole batch
    last_a = len(order) - 1 - order[::-1].index("a")
    last_b = len(order) - 1 - order[::-1].index("b")
    assert order.index("b") < last_a and order.index("a") < last_b, (k, order)
    for name in ("a", "b"):
        cnt = gw.counters(name)
        assert cnt["objects_out"] == N * k, (name, cnt)


if __name__ == "__main__":
    sys.exit(main())
