"""Integration: the read budget of every UDP ingress (core/net/ingress_budget.h).

A wake-up of a datagram socket reads while its budget lasts (512 messages, 64 KiB, at most 64
datagrams; at least one) and leaves the rest for the next pass of the loop. Made deterministic by
stopping the daemon (SIGSTOP) while datagrams queue up in its receive buffer: once it runs again
(SIGCONT) the first wake-up finds them all and must stop at the budget (`rx_yields` >= 1), the
next passes take the rest, and every datagram is still counted (nothing is lost by yielding).
Bad datagrams are used: each is counted as a rejection first. Covered: vmc (bundles of 2,700
malformed messages: one datagram spends a wake-up), rtp and LESS over UDP (200 small bad
datagrams: 64 per wake-up)."""
import os
import signal
import socket
import struct
import tempfile

from xgtest import Gateway, wait_until
import lesstest


def stopped(gw, send):
    """Run send() while the daemon is stopped; resume it."""
    os.kill(gw.proc.pid, signal.SIGSTOP)
    try:
        send()
    finally:
        os.kill(gw.proc.pid, signal.SIGCONT)


def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    return s


def osc_str(b):
    b += b"\0"
    return b + b"\0" * (-len(b) % 4)


def test_vmc():
    with Gateway('adapters:\n  - {name: in, type: vmc, bind: "127.0.0.1:0"}\n') as gw:
        port = gw.port_of("in")
        bad = osc_str(b"/x") + osc_str(b",i")
        d = b"#bundle\0" + struct.pack(">Q", 1) + (struct.pack(">i", len(bad)) + bad) * 2700
        s = udp()
        stopped(gw, lambda: [s.sendto(d, ("127.0.0.1", port)) for _ in range(2)])
        c = gw.wait_counter("in", "drop_malformed", 2 * 2700)
        assert c["datagrams_in"] == 2 and c["drop_malformed"] == 5400, c
        assert c["rx_yields"] >= 1 and c["rx_wakes"] >= 2, c


def test_rtp():
    with Gateway('adapters:\n  - {name: rx, type: rtp, bind: "127.0.0.1:0", refresh_ms: 0}\n') \
            as gw:
        port = gw.port_of("rx")
        s = udp()
        # RTP version 1: refused (drop_bad_version) after being counted
        pkt = bytes([0x40, 98]) + b"\0" * 10
        stopped(gw, lambda: [s.sendto(pkt, ("127.0.0.1", port)) for _ in range(200)])
        c = wait_until(lambda: (lambda c: c if sum(v for k, v in c.items()
                                                   if k.startswith("drop_")) >= 200 else None)(
            gw.counters("rx")), what="200 rejections")
        assert c["rx_yields"] >= 3 and c["rx_wakes"] >= 4, c  # 64 + 64 + 64 + 8


def test_less_udp():
    with tempfile.TemporaryDirectory() as tmp:
        keyfile = lesstest.write_key(tmp)
        with Gateway(f"""
adapters:
  - name: fed
    type: less
    mode: udp
    bind: "127.0.0.1:0"
    key_file: {keyfile}
""") as gw:
            port = gw.port_of("fed")
            s = udp()
            stopped(gw, lambda: [s.sendto(b"\x01" * 40, ("127.0.0.1", port))
                                 for _ in range(200)])
            c = wait_until(lambda: (lambda c: c if c["packets_in"] >= 200 else None)(
                gw.counters("fed")), what="200 datagrams")
            assert c["bad_signature"] + c["framing_errors"] == 200, c
            assert c["rx_yields"] >= 3 and c["rx_wakes"] >= 4, c


if __name__ == "__main__":
    test_vmc()
    test_rtp()
    test_less_udp()
    print("ok")
