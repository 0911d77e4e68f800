"""Integration: with admin.tls, clients that finish the TLS handshake and then send their request
slowly cannot lock HTTPS out (issue 22, item 3).

admin.max_connections is 4 and admin.request_timeout_ms 4000 (long enough that four TLS
handshakes and the fifth client's refusal fit inside it under ASan on a loaded runner: a deadline
that passed before the fifth client came would free a slot and serve it). Four python-ssl clients
complete the handshake and trickle a request head one byte every 0.2 s; while they hold every
slot a fifth connection is refused. The request deadline, running from the accept through the
handshake, closes each trickler no earlier than 4 s after it connected (the log names it,
xrgate_admin_request_timeouts_total counts 4), and a normal client is then served."""
import os
import shutil
import socket
import ssl
import sys
import tempfile
import time

TIMEOUT_MS = 4000

from test_admin_tls import TlsGateway, get, make_ca, make_server_cert
from xgtest import parse_prometheus, skip


def closed(t):
    """True if the server closed the TLS connection (poll for 0.2 s)."""
    t.settimeout(0.2)
    try:
        return t.recv(1024) == b""
    except (socket.timeout, ssl.SSLWantReadError):
        return False
    except (ssl.SSLError, OSError):
        return True


def main():
    if not shutil.which("openssl"):
        skip("openssl CLI not found")
    with tempfile.TemporaryDirectory(prefix="xrgate-tls-slow-") as d:
        make_ca(d, "ca")
        make_server_cert(d, "server", "ca")
        conf = (f"gateway:\n  admin:\n    max_connections: 4\n    request_timeout_ms: {TIMEOUT_MS}\n"
                f"    tls: {{cert: {d}/server.crt, key: {d}/server.key}}\n"
                "adapters:\n  - name: demo\n    type: synth\n")
        ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.crt"))
        with TlsGateway(conf) as gw:
            port = gw.port
            slow, started = [], []
            for _ in range(4):
                s = socket.create_connection(("127.0.0.1", port), timeout=5)
                started.append(time.monotonic())
                t = ctx.wrap_socket(s, server_hostname="localhost")  # handshake done
                t.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
                slow.append(t)
            # every slot is taken: a fifth client is refused (closed before its handshake)
            refused = False
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                    with ctx.wrap_socket(s, server_hostname="localhost") as t:
                        t.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
                        refused = t.recv(100) == b""
            except (ssl.SSLError, OSError):
                refused = True
            assert refused
            assert gw.wait_log("refused: 4 connections open (admin.max_connections 4;")
            closed_after = [None] * 4
            # one byte per client every 0.2 s, until the deadline plus 10 s at most
            for _ in range(int((TIMEOUT_MS / 1000 + 10) / 0.2)):
                for i, t in enumerate(slow):
                    if closed_after[i] is not None:
                        continue
                    try:
                        t.sendall(b"a")
                    except (ssl.SSLError, OSError):
                        closed_after[i] = time.monotonic() - started[i]
                        continue
                    if closed(t):
                        closed_after[i] = time.monotonic() - started[i]
                if all(c is not None for c in closed_after):
                    break
            for t in slow:
                t.close()
            assert all(c is not None for c in closed_after), closed_after
            # not before the deadline (the server's accept comes after our connect returned);
            # that it came at all is the loop's bound above
            assert all(c > TIMEOUT_MS / 1000 - 0.2 for c in closed_after), closed_after
            assert gw.wait_log("admin client 127.0.0.1:") and gw.wait_log(
                f"no complete request within {TIMEOUT_MS} ms (admin.request_timeout_ms)")
            # a normal client is served again
            deadline = time.monotonic() + 5
            while True:
                try:
                    if get(ctx, port, "/healthz") == (200, b"ok\n"):
                        break
                except (ssl.SSLError, OSError):
                    pass
                assert time.monotonic() < deadline, gw.log()
                time.sleep(0.05)
            st, body = get(ctx, port, "/metrics")
            assert st == 200
            m = parse_prometheus(body.decode())
            assert m[("xrgate_admin_request_timeouts_total", "")] == 4, m
            assert m[("xrgate_admin_connections_refused_total", "")] >= 1, m
            code, _ = gw.stop()
            assert code == 0, gw.log()
    print("TLS slow clients: closed at the deadline, HTTPS served")
    return 0


if __name__ == "__main__":
    sys.exit(main())
