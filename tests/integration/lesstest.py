"""Helpers shared by the LESS UDP integration tests (not a test itself): the key file, the UDP
framing of a byte-level peer (`seq ack-last ack-bitmask` + the signed packet, P12-P14) and a
UDP peer socket talking to a gateway's `less` adapter in `mode: udp`. The message codec is
test_less_session.py's (imported as `ls`); adapter lookups are xgtest.Gateway's (counters(),
port_of())."""
import hashlib
import hmac
import os
import socket
import time

import test_less_session as ls


def write_key(folder, key=ls.KEY, name="k.hex"):
    """Write `key` (bytes, or a hex string) as a hex key file in `folder`; returns its path."""
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(key if isinstance(key, str) else key.hex())
    return path


def udp_frame(seq, ack, mask, ts, msgs, key=ls.KEY):
    """One signed LESS UDP datagram: sequence `seq`, acks (ack, mask), timestamp `ts` (us)."""
    head = bytes([seq, ack]) + ls.enc_int(mask)
    body = bytes(8) + ls.enc_int(ts) + ls.enc_int(len(msgs)) + b"".join(msgs)
    f = bytearray(head + body)
    f[len(head):len(head) + 8] = hmac.new(key, bytes(f), hashlib.sha256).digest()[:8]
    return bytes(f)


def parse_udp(d, key=ls.KEY):
    """(seq, ack_last, mask, count, [first message code]) of a gateway's datagram; its
    signature is checked."""
    seq, ack = d[0], d[1]
    mask, i = ls.dec_int(d, 2)
    z = bytearray(d)
    z[i:i + 8] = bytes(8)
    assert hmac.new(key, bytes(z), hashlib.sha256).digest()[:8] == d[i:i + 8]
    _ts, j = ls.dec_int(d, i + 8)
    count, j = ls.dec_int(d, j)
    codes = []
    if count:
        codes.append(ls.dec_int(d, j)[0])  # the first message's code is enough here
    return seq, ack, mask, count, codes


class UdpPeer:
    """A byte-level LESS UDP peer of adapter `name` of gateway `g` (loopback, its own port).
    send() signs and sends one datagram with an increasing timestamp; recv_until() reads the
    gateway's datagrams (parsed, kept in `seen`) until one satisfies a predicate (5 s)."""

    def __init__(self, g, name, timeout=2.0):
        self.dst = ("127.0.0.1", g.port_of(name))
        self.s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.s.bind(("127.0.0.1", 0))
        self.timeout = timeout
        self.s.settimeout(timeout)
        self.ts = int(time.monotonic() * 1e6)
        self.seen = []
        self.sent = {}

    def frame(self, seq, msgs, key=ls.KEY, ts=None):
        """The datagram send() would send (advances the timestamp unless `ts` is given)."""
        if ts is None:
            self.ts += 1000
            ts = self.ts
        return udp_frame(seq & 0xFF, 255, 0, ts, msgs, key)

    def send(self, seq, msgs, key=ls.KEY, ts=None, pad=0):
        d = self.frame(seq, msgs, key, ts)
        self.sent[seq] = d
        self.s.sendto(d + bytes(pad), self.dst)
        return d

    def resend(self, d):
        """Send datagram bytes as they are (a replay)."""
        self.s.sendto(d, self.dst)

    def recv_until(self, pred, what, timeout=5.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            d, _ = self.s.recvfrom(65536)
            self.seen.append(parse_udp(d))
            if pred(self.seen[-1]):
                return self.seen[-1]
        raise AssertionError(f"timed out waiting for {what}; last {self.seen[-3:]}")

    def drain(self):
        """Read (into `seen`) what the gateway sent so far, without waiting."""
        self.s.setblocking(False)
        try:
            while True:
                self.seen.append(parse_udp(self.s.recvfrom(65536)[0]))
        except BlockingIOError:
            pass
        finally:
            self.s.settimeout(self.timeout)

    def close(self):
        self.s.close()
