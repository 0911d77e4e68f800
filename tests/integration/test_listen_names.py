"""Integration: listening addresses by name (issue 15, item 1). A TCP listener's address (LESS
`listen`, vrpn-server, rgmp-server: core/net/transport_server.h) and the admin API's `listen` take a
numeric address or a name in /etc/hosts; any other name is a start error naming it, reported at
once (no DNS query: the resolver configured here never answers, so a lookup would take its
timeout) — a bind failure stops the gateway. `localhost` (in /etc/hosts) listens on loopback."""
import os
import socket
import subprocess
import sys
import tempfile
import time

from xgtest import BIN, Gateway, time_bound


def run(conf_text, d, env=None):
    path = os.path.join(d, "gw.yaml")
    with open(path, "w") as f:
        f.write(conf_text)
    e = dict(os.environ, **(env or {}))
    t0 = time.monotonic()
    r = subprocess.run([BIN, "--config", path], capture_output=True, text=True, timeout=20,
                       env=e)
    return r, time.monotonic() - t0


def no_query(dns):
    """The silent DNS server got no query (the gateway has exited: a query it sent is queued)."""
    dns.setblocking(False)
    try:
        q = dns.recv(512)
    except BlockingIOError:
        return
    raise AssertionError(f"a DNS query was sent: {q!r}")


def main():
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # a DNS server that never answers
    silent.bind(("127.0.0.1", 0))
    with tempfile.TemporaryDirectory(prefix="xrgate-listen-") as d:
        resolv = os.path.join(d, "resolv.conf")
        with open(resolv, "w") as f:
            f.write(f"nameserver 127.0.0.1:{silent.getsockname()[1]}\n"
                    "options timeout:5 attempts:2\n")
        r, dt = run(f"gateway:\n  resolv_conf: {resolv}\nadapters:\n"
                    '  - {name: ls, type: less, mode: listen, listen: "mocap-pc.invalid:0", '
                    "signature: none, insecure: true}\n", d,
                    env={"XRGATE_ADMIN_LISTEN": "127.0.0.1:0"})
        assert r.returncode != 0, r.stderr
        no_query(silent)  # no DNS query (it would have waited 2 x 5 s for the silent server)
        assert ("address 'mocap-pc.invalid:0': 'mocap-pc.invalid' is not in /etc/hosts: a "
                "listening address must be numeric or a name in /etc/hosts") in r.stderr, r.stderr
        print(f"ok   LESS listen on a name not in /etc/hosts: start error naming it after "
              f"{dt:.2f} s")
        r, dt = run(f"gateway:\n  resolv_conf: {resolv}\n"
                    "adapters:\n  - {name: demo, type: synth}\n", d, env={"XRGATE_ADMIN_LISTEN": "mocap-pc.invalid:0"})
        # no query to the configured server, and none to the system's: a start-up error well
        # within a resolver's timeout (scaled for load and the build, xgtest.time_bound)
        assert r.returncode != 0 and dt < time_bound(1.0), (dt, r.stderr)
        no_query(silent)
        assert "admin listen: address 'mocap-pc.invalid:0': 'mocap-pc.invalid' is not in " \
               "/etc/hosts" in r.stderr, r.stderr
        print("ok   admin listen on a name not in /etc/hosts: start error naming it")
    silent.close()
    with Gateway('adapters:\n  - {name: ls, type: less, mode: listen, listen: "localhost:0", '
                 "signature: none}\n", admin="localhost:0") as gw:
        a = next(x for x in gw.get_json("/api/adapters")["adapters"] if x["name"] == "ls")
        assert a["state"] == "listening", a
        assert a["peer"].startswith(("127.", "[::1]")), a
        print(f"ok   localhost (in /etc/hosts) listens on {a['peer']}; admin on localhost too")
    print("test_listen_names: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
