"""The webxr adapter against a raw WebSocket peer (RFC 6455 client framing written here, the
binary layout of docs/adapters/webxr.md): the handshake (a plain GET gets a text page, a missing
or wrong token 401 and one log line); HELLO with a session name asked for and one assigned;
FRAMEs into the table (head, controllers with buttons and analogs, capture time from the page
clock through the PING/PONG offset: this peer's clock is CLOCK_MONOTONIC, the gateway's too, so
the mapped time must equal the page time within the smallest round trip); and bad input (each
closes only its own connection with a close code and one line naming peer, field and value, while
another session keeps streaming and the table loses nothing): a bad count, a non-finite value, a
text message, a message above max_message_bytes, more than max_messages_per_s, a FRAME before
HELLO; a second socket of the same session takes over; a page that stops answering PINGs is
closed."""
import os
import re
import socket
import struct
import tempfile
import time
import urllib.request

from xgtest import Gateway, require_adapters, wait_until

CONFIG = """gateway:
  id: webxr-raw
adapters:
  - name: xr
    type: webxr
    listen: "127.0.0.1:0"
    max_message_bytes: 4096
    max_messages_per_s: 300
"""


class WS:
    """A minimal WebSocket client: masked frames out, unmasked frames in."""

    def __init__(self, port, path="/", headers=""):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.s.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                        f"Sec-WebSocket-Version: 13\r\n{headers}\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            d = self.s.recv(4096)
            if not d:
                break
            self.buf += d
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        self.head = head.decode()
        self.status = int(self.head.split(" ")[1]) if self.head else 0

    def send(self, payload, opcode=2):
        n = len(payload)
        hdr = bytes([0x80 | opcode])
        if n < 126:
            hdr += bytes([0x80 | n])
        elif n < 65536:
            hdr += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            hdr += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.s.sendall(hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _need(self, n):
        while len(self.buf) < n:
            d = self.s.recv(65536)
            if not d:
                raise EOFError("closed")
            self.buf += d
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        """(opcode, payload) of the next frame."""
        b0, b1 = self._need(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", self._need(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self._need(8))[0]
        return b0 & 0x0F, self._need(n)

    def close_code(self):
        """Read until the server's close frame; its status code."""
        while True:
            op, p = self.recv()
            if op == 8:
                return struct.unpack(">H", p[:2])[0] if len(p) >= 2 else None

    def close(self):
        self.s.close()


def hello(name=""):
    n = name.encode()
    return bytes([1, 1, len(n)]) + n


def f32s(*v):
    return struct.pack("<%df" % len(v), *v)


def frame(page_ms, head, right=None, n_sources=None):
    """A FRAME: viewer pose `head` (7 floats), optionally a right controller (grip pose, 7 buttons,
    4 axes)."""
    srcs = b""
    if right:
        srcs = bytes([2, 1, 7, 4]) + f32s(*right)
        srcs += bytes([1]) + f32s(1.0) + b"".join(bytes([0]) + f32s(0.0) for _ in range(6))
        srcs += f32s(0.0, 0.0, 0.5, -0.25)
    n = (1 if right else 0) if n_sources is None else n_sources
    return bytes([2, 1, n]) + struct.pack("<d", page_ms) + f32s(*head) + srcs


def answer_pings(ws, want_pings):
    """Answer PINGs with this process's CLOCK_MONOTONIC (ms) until `want_pings` were answered;
    returns the WELCOME's session name if one came by."""
    name = None
    got = 0
    while got < want_pings:
        op, p = ws.recv()
        if op != 2:
            continue
        if p[0] == 0x81:
            name = p[3:3 + p[2]].decode()
        elif p[0] == 0x82:
            ws.send(bytes([3]) + p[1:5] + struct.pack("<d", time.monotonic_ns() / 1e6))
            got += 1
    return name


def raw(port, data):
    """Send `data`, read until the server closes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(data)
    out = b""
    try:
        while True:
            d = s.recv(4096)
            if not d:
                break
            out += d
    except ConnectionResetError:
        pass
    s.close()
    return out


def exact(gw, name):
    """Entity `name` as its newest sample holds it (EXACT at its capture time, not predicted)."""
    t = gw.entities(name)[name]["sample_ns"]
    return {e["name"]: e for e in gw.get_json(f"/api/entities?t_ns={t}")["entities"]}[name]


def main():
    require_adapters("webxr")
    gw = Gateway(CONFIG)
    try:
        port = gw.port_of("xr")
        # a browser opening the URL (to accept the certificate) gets a text page
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        page = b""
        while True:
            d = s.recv(4096)
            if not d:
                break
            page += d
        s.close()
        assert page.startswith(b"HTTP/1.1 200 ") and b"Enter VR" in page, page
        # a request head above 8 KiB: 431
        big = raw(port, b"GET / HTTP/1.1\r\nX: " + b"a" * 9000 + b"\r\n\r\n")
        assert big.startswith(b"HTTP/1.1 431 "), big[:80]
        assert gw.wait_log("request head above 8192 bytes")

        # a session with a name asked for; the clock offset from 5 fast pings
        a = WS(port)
        assert a.status == 101 and "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" in a.head, a.head
        a.send(hello("quest"))
        assert answer_pings(a, 5) == "quest"
        head = (0.1, 1.6, -0.2, 0.0, 0.3826834, 0.0, 0.9238795)
        grip = (0.3, 1.1, -0.4, 0.0, 0.0, 0.0, 1.0)
        page_ns = time.monotonic_ns()
        a.send(frame(page_ns / 1e6, head, grip))
        ents = wait_until(lambda: (lambda e: e if len(e) == 2 else None)(gw.entities("xr/quest/")),
                          10, what="xr/quest/head and right_controller")
        h = ents["xr/quest/head"]
        assert h["kind"] == "head" and all(abs(v - w) < 1e-6 for v, w in zip(h["position"], head))
        rc = ents["xr/quest/right_controller"]
        assert rc["kind"] == "controller" and rc["extra"]["buttons"][0] == 1, rc
        assert rc["extra"]["analogs"][34] == 0.5 and rc["extra"]["analogs"][35] == -0.25, rc
        cnt = gw.counters("xr")
        err_ns = abs(h["sample_ns"] - page_ns)
        rtt_ns = cnt["clock_rtt_ms"] * 1e6
        print(f"capture time: page clock mapped within {err_ns / 1e6:.3f} ms (smallest round "
              f"trip {cnt['clock_rtt_ms']:.3f} ms)")
        assert err_ns <= rtt_ns + 1e5, (err_ns, rtt_ns)

        # a second session, the name assigned
        b = WS(port)
        b.send(hello())
        assert answer_pings(b, 1) == "s1"

        # bad input on b's connections; a keeps streaming, the table loses nothing
        def rejected(payload, opcode, code, text, before_hello=False):
            c = WS(port)
            if not before_hello:
                c.send(hello("bad"))
                answer_pings(c, 1)
            c.send(payload, opcode)
            got = c.close_code()
            c.close()
            assert got == code, (got, code, text)
            assert gw.wait_log(text), f"no line with {text!r}:\n{gw.log()}"

        rejected(frame(1.0, head, n_sources=9), 2, 1007, "session bad: frame n_sources 9 > 8: "
                 "closing the connection")
        rejected(frame(1.0, (float("nan"),) + head[1:]), 2, 1007, "viewer pose 0 px nan")
        rejected(b"hello", 1, 1003, "text message of 5 bytes")
        rejected(bytes(5000), 2, 1009, "message payload_length 5000 > max_message_bytes 4096")
        rejected(frame(1.0, head), 2, 1008, "message type 0x02 before hello", before_hello=True)
        assert re.search(r"peer 127\.0\.0\.1:\d+ session bad: frame n_sources", gw.log())

        page_ns = time.monotonic_ns()
        a.send(frame(page_ns / 1e6, (0.2,) + head[1:], grip))
        wait_until(lambda: abs(exact(gw, "xr/quest/head")["position"][0] - 0.2) < 1e-6, 10,
                   what="session quest still streams")
        assert len(gw.entities("xr/")) == 2
        cnt = gw.counters("xr")
        assert cnt["bad_messages"] == 5, cnt
        # the page reconnects before the gateway saw its old socket go: the new one takes over
        d = WS(port)
        d.send(hello("quest"))
        assert answer_pings(d, 1) == "quest"
        assert a.close_code() == 1000
        assert gw.wait_log("session quest: taken over by peer 127.0.0.1:")
        d.send(frame(time.monotonic_ns() / 1e6, (0.3,) + head[1:], grip))
        wait_until(lambda: abs(exact(gw, "xr/quest/head")["position"][0] - 0.3) < 1e-6, 10,
                   what="the new socket streams session quest")
        assert gw.counters("xr")["bad_messages"] == 5
        a.close()
        b.close()
        d.close()
        wait_until(lambda: gw.counters("xr")["clients"] == 0, 10, what="sockets closed")
    finally:
        gw.stop()
        gw.tmp.cleanup()

    # a page that stops answering PINGs (a half-open connection) is closed after 10 of them
    gw = Gateway(CONFIG + "    ping_ms: 100\n    handshake_timeout_ms: 200\n")
    try:
        # no handshake within handshake_timeout_ms: closed
        assert raw(gw.port_of("xr"), b"GET / HT") == b""
        assert gw.wait_log("no WebSocket handshake within handshake_timeout_ms 200")
        e = WS(gw.port_of("xr"))
        e.send(hello("gone"))
        assert e.close_code() == 1001
        assert gw.wait_log("session gone: no answer to PINGs for")
        e.close()
        # more than max_messages_per_s (a gateway of its own: the lines of bad input are
        # rate-limited, 5 per 10 s, and the first gateway had its 5)
        port = gw.port_of("xr")
        c = WS(port)
        c.send(hello("fast"))
        code = None
        try:  # the gateway closes the socket while the flood still comes: a reset may end it
            for _ in range(320):
                c.send(bytes([3, 0, 0, 0, 0]) + struct.pack("<d", 0.0))
            code = c.close_code()
        except (BrokenPipeError, ConnectionResetError, EOFError):
            pass
        assert code in (1008, None), code
        c.close()
        assert gw.wait_log("messages within 1 s > max_messages_per_s 300")
        assert gw.counters("xr")["closed_rate"] == 1
    finally:
        gw.stop()
        gw.tmp.cleanup()

    # the admin token applies: missing or wrong -> 401, right (query or bearer) -> 101
    # (admin.token_file; a reload that changes the token applies to the next handshake)
    tdir = tempfile.TemporaryDirectory(prefix="xrgate-token-")
    tfile = os.path.join(tdir.name, "token")
    with open(tfile, "w") as f:
        f.write("s3cret\n")
    os.chmod(tfile, 0o600)
    gw = Gateway(CONFIG.replace("  id: webxr-raw\n", f"  id: webxr-raw\n  admin:\n"
                                f"    token_file: {tfile}\n"))
    try:
        assert gw.wait_log("(admin token required)")
        port = int(re.search(r"WebXR sessions on ws://127\.0\.0\.1:(\d+)/", gw.log()).group(1))
        assert WS(port).status == 401
        assert gw.wait_log("WebSocket handshake: token missing")
        assert WS(port, "/?token=nope").status == 401
        assert gw.wait_log("WebSocket handshake: token wrong")
        assert WS(port, "/?token=s3cret").status == 101
        assert WS(port, headers="Authorization: Bearer s3cret\r\n").status == 101
        with open(tfile, "w") as f:
            f.write("n3w\n")
        req = urllib.request.Request(gw.url("/api/reload"), data=b"", method="POST",
                                     headers={"Authorization": "Bearer s3cret"})
        with urllib.request.urlopen(req, timeout=10) as r:
            assert r.status == 200, r.status
        assert WS(port, "/?token=s3cret").status == 401
        assert WS(port, "/?token=n3w").status == 101
    finally:
        gw.stop()
        gw.tmp.cleanup()
        tdir.cleanup()
    print("test_webxr: 1 passed, 0 failed")


if __name__ == "__main__":
    main()
