"""`xrgate --make-cert HOST DIR` and the webxr adapter behind admin.tls (docs/adapters/webxr.md
"TLS and a headset"): the command writes DIR/127.0.0.1.crt (0644) and .key (0600) and refuses to
overwrite them; a gateway configured with them serves the admin API over https and the webxr
adapter over wss with the same certificate, which Python's ssl module verifies for the address
127.0.0.1 (subjectAltName), trusting the certificate itself; the admin token applies to the
WebSocket handshake; a session's HELLO gets its WELCOME over TLS; a plain-TCP client on the wss
port gets no WebSocket."""
import http.client
import os
import re
import socket
import ssl
import stat
import struct
import subprocess
import tempfile

from xgtest import BIN, Gateway, require_adapters

TOKEN = "tls-token-123"


class TlsGateway(Gateway):
    """Gateway whose admin API speaks https (the log line says so)."""

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            m = re.search(r"admin API listening on https://[^ ]*:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                self._ready.set()


def wss_handshake(ctx, port, path):
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    s = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
    s.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
               "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
               "Sec-WebSocket-Version: 13\r\n\r\n").encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d:
            break
        buf += d
    return s, buf


def main():
    require_adapters("webxr")
    with tempfile.TemporaryDirectory(prefix="xrgate-cert-") as d:
        out = subprocess.run([BIN, "--make-cert", "127.0.0.1", d], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        crt, key = os.path.join(d, "127.0.0.1.crt"), os.path.join(d, "127.0.0.1.key")
        assert f"tls: {{cert: {crt}, key: {key}}}" in out.stdout, out.stdout
        assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
        again = subprocess.run([BIN, "--make-cert", "127.0.0.1", d], capture_output=True,
                               text=True)
        assert again.returncode == 1 and "File exists" in again.stderr, again.stderr
        bad = subprocess.run([BIN, "--make-cert", "a/b", d], capture_output=True, text=True)
        assert bad.returncode == 1 and "'a/b' is not a DNS name" in bad.stderr, bad.stderr

        conf = (f"gateway:\n  admin:\n    tls: {{cert: {crt}, key: {key}}}\n"
                "adapters:\n  - name: xr\n    type: webxr\n    listen: \"127.0.0.1:0\"\n")
        gw = TlsGateway(conf, env={"XRGATE_ADMIN_TOKEN": TOKEN})
        try:
            ctx = ssl.create_default_context(cafile=crt)  # verifies the address too
            c = http.client.HTTPSConnection("127.0.0.1", gw.port, context=ctx, timeout=10)
            c.request("GET", "/healthz")
            assert c.getresponse().status == 200
            assert gw.wait_log("WebXR sessions on wss://127.0.0.1:")
            port = int(re.search(r"WebXR sessions on wss://127\.0\.0\.1:(\d+)/", gw.log()).group(1))
            s, head = wss_handshake(ctx, port, "/")
            assert head.startswith(b"HTTP/1.1 401 "), head
            s.close()
            s, head = wss_handshake(ctx, port, f"/?token={TOKEN}")
            assert head.startswith(b"HTTP/1.1 101 ") and b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" in head
            hello = bytes([1, 1, 3]) + b"tls"
            mask = b"\x01\x02\x03\x04"
            s.sendall(bytes([0x82, 0x80 | len(hello)]) + mask +
                      bytes(b ^ mask[i % 4] for i, b in enumerate(hello)))
            buf = head.partition(b"\r\n\r\n")[2]
            while len(buf) < 2 or len(buf) < 2 + buf[1]:
                buf += s.recv(4096)
            assert buf[0] == 0x82 and buf[2:2 + buf[1]] == bytes([0x81, 1, 3]) + b"tls", buf
            s.close()
            # plain TCP on the wss port: no WebSocket (the TLS layer refuses the bytes)
            p = socket.create_connection(("127.0.0.1", port), timeout=10)
            p.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            got = b""
            try:
                while True:
                    d = p.recv(4096)
                    if not d:
                        break
                    got += d
            except ConnectionResetError:
                pass
            p.close()
            assert b"HTTP/1.1" not in got, got
        finally:
            gw.stop()
            gw.tmp.cleanup()
    print("test_webxr_tls: 1 passed, 0 failed")


if __name__ == "__main__":
    main()
