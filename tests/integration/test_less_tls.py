"""Integration (issue 6 / 12): LESS over TLS (mbedtls, core/net/tls.c).

Certificates are made during the test with Debian's openssl CLI: a CA, a server certificate for
"localhost" and a client certificate signed by it, and a second, unrelated CA. Checked:
  1. client and server with the right CA (mutual verification): B shows A's entities;
  2. a client trusting the wrong CA fails the handshake with a clear error naming the peer and
     mbedtls's reason, reconnects with backoff, and nothing is exchanged;
  3. a plain-TCP LESS client against the TLS server: the server logs a TLS error naming the peer;
  4. a TLS client against a plain LESS server: the client says the connection closed during the
     TLS handshake;
  5. `signature: none` on a non-loopback address is refused at config check unless TLS or
     `insecure: true` (issue 12)."""
import os
import shutil
import subprocess
import sys
import tempfile

from xgtest import BIN, Gateway, skip, wait_until


def sh(*args, cwd):
    subprocess.run(args, cwd=cwd, check=True, capture_output=True, timeout=30)


def clean_stop(g):
    """Stop and check a clean exit (under ASan builds: no leaked TLS sessions)."""
    rc, _ = g.stop()
    log = g.log()
    assert rc == 0 and "Sanitizer" not in log and "runtime error" not in log, log[-3000:]


def make_ca(d, name):
    sh("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
       "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "2",
       "-subj", f"/CN=xrgate test {name}", cwd=d)


def make_cert(d, name, ca, cn):
    sh("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
       "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}", cwd=d)
    ext = os.path.join(d, f"{name}.ext")
    with open(ext, "w") as f:
        f.write(f"subjectAltName=DNS:{cn}\n")
    sh("openssl", "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
       "-CAcreateserial", "-out", f"{name}.crt", "-days", "2", "-extfile", ext, cwd=d)


def port_of(gw, name):
    return int(wait_until(lambda: gw.adapter(name)["peer"]).split()[0].rsplit(":", 1)[1])


def server(d, tls=True):
    t = f"tls: {{cert: {d}/server.crt, key: {d}/server.key, ca: {d}/ca.crt}}" if tls else ""
    return Gateway(f"""
gateway: {{id: gw-b}}
adapters:
  - name: fed
    type: less
    mode: listen
    listen: "127.0.0.1:0"
    signature: none
    {t}
""")


def client(d, port, ca="ca", tls=True):
    t = (f"tls: {{ca: {d}/{ca}.crt, cert: {d}/client.crt, key: {d}/client.key, "
         f"server_name: localhost}}") if tls else ""
    return Gateway(f"""
gateway: {{id: gw-a}}
adapters:
  - name: demo
    type: synth
    bodies: 1
  - name: up
    type: less
    mode: connect
    connect: "127.0.0.1:{port}"
    signature: none
    {t}
""")


def check_refusals(d):
    def check(extra):
        path = os.path.join(d, "c.yaml")
        with open(path, "w") as f:
            f.write(f"""adapters:
  - name: up
    type: less
    mode: connect
    connect: "192.0.2.10:7000"
    signature: none
{extra}""")
        return subprocess.run([BIN, "--check", "--config", path], capture_output=True, text=True,
                              timeout=10)
    r = check("")
    assert r.returncode != 0 and "signature: none on the non-loopback" in r.stderr, r.stderr
    assert "c.yaml:6:" in r.stderr, r.stderr  # file:line:column of the signature key
    r = check("    insecure: true\n")
    assert r.returncode == 0, r.stderr
    r = check(f"    tls: {{ca: {d}/ca.crt}}\n")
    assert r.returncode == 0, r.stderr
    r = check(f"    tls: {{ca: {d}/missing.crt}}\n")
    assert r.returncode != 0 and "missing.crt" in r.stderr, r.stderr


def main():
    if not shutil.which("openssl"):
        skip("openssl CLI not found")
    with tempfile.TemporaryDirectory() as d:
        make_ca(d, "ca")
        make_ca(d, "other")
        make_cert(d, "server", "ca", "localhost")
        make_cert(d, "client", "ca", "gw-a.test")

        # 1. mutual TLS works
        with server(d) as b:
            port = port_of(b, "fed")
            with client(d, port) as a:
                wait_until(lambda: "fed/demo/body0" in b.entities(), what="entities over TLS")
                wait_until(lambda: a.adapter("up")["state"] == "streaming", what="streaming")
                assert a.wait_log("(TLS)") and b.wait_log("(TLS)")
                clean_stop(a)
            clean_stop(b)
            print("TLS: handshake and federation ok")

        # 2. wrong CA on the client
        with server(d) as b:
            port = port_of(b, "fed")
            with client(d, port, ca="other") as a:
                line = wait_until(lambda: next((l for l in a.lines if "handshake failed" in l),
                                             None), what="client TLS error")
                assert f"127.0.0.1:{port}" in line, line
                assert "X509" in line or "verif" in line.lower(), line
                wait_until(lambda: a.adapter("up")["counters"]["reconnects"] >= 1,
                         what="reconnect after the TLS failure")
                assert not b.entities()
                print("wrong CA:", line.split("] ", 1)[1])
                clean_stop(a)  # several failed sessions freed
            clean_stop(b)

        # 3. plain TCP client -> TLS server
        with server(d) as b:
            port = port_of(b, "fed")
            with client(d, port, tls=False) as a:
                line = wait_until(lambda: next((l for l in b.lines if "TLS with" in l), None),
                                what="server TLS error")
                assert "127.0.0.1:" in line and "handshake failed" in line, line
                assert not b.entities()
                print("plain client:", line.split("] ", 1)[1])

        # 4. TLS client -> plain server
        with server(d, tls=False) as b:
            port = port_of(b, "fed")
            with client(d, port) as a:
                line = wait_until(lambda: next((l for l in a.lines if "TLS with" in l), None),
                                what="client TLS error against a plain server")
                assert f"127.0.0.1:{port}" in line, line
                print("plain server:", line.split("] ", 1)[1])

        check_refusals(d)
        print("signature: none refused off loopback without TLS/insecure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
