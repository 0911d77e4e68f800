"""Overload: 500 connect/close cycles on every server port; no file descriptor leak.

One gateway with a synth source, an rgmp-server, a vrpn-server and a less listener (and the admin
HTTP server). On each TCP port, 500 cycles, rotating through four ways of leaving: close at once,
close after a few bytes of garbage (a partial header), an abortive close (RST), and close after a
valid opening (RGMP: nothing to send, VRPN: the cookie, LESS: a partial packet, HTTP: a full GET
/healthz whose answer is read). Afterwards, waiting for the gateway to notice every close, the
number of open fds in /proc/<pid>/fd returns to the count before the flood (+ FD_SLACK), the
adapters' `clients`/`peers` gauges return to 0, a reading client still gets data, and /healthz
answers. The gateway exits 0 on SIGTERM."""
import socket
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import faultlib as F  # noqa: E402
from xgtest import Gateway, wait_until  # noqa: E402

CYCLES = 500
FD_SLACK = 3


def flood(port, opening):
    for i in range(CYCLES):
        s = socket.socket()
        try:
            s.connect(("127.0.0.1", port))
        except ConnectionRefusedError:
            raise AssertionError(f"port {port}: connection {i} refused")
        way = i % 4
        try:
            if way == 1:
                s.sendall(b"\x01\x00\x00")
            elif way == 2:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            elif way == 3 and opening:
                s.sendall(opening)
                if opening.startswith(b"GET"):
                    s.settimeout(5)
                    got = b""
                    while b"\r\n\r\n" not in got:
                        b = s.recv(4096)
                        if not b:
                            break
                        got += b
                    assert got.startswith(b"HTTP/1.1 200"), got[:80]
        except (ConnectionResetError, BrokenPipeError):
            pass  # the server may close first (e.g. on garbage): that is fine
        s.close()


def main():
    sec = F.Sections()
    F.require_adapters("synth")
    ads = ["  - {name: demo, type: synth, bodies: 2, rate_hz: 60}"]
    ports = {}
    if F.have("rgmp-server"):
        ads.append('  - {name: rg, type: rgmp-server, listen: "127.0.0.1:0", rate_hz: 30}')
    if F.have("vrpn-server"):
        ads.append('  - {name: vs, type: vrpn-server, listen: "127.0.0.1:0", rate_hz: 30}')
    if F.have("less"):
        ads.append('  - {name: ls, type: less, mode: listen, listen: "127.0.0.1:0", '
                   'signature: none, rate_hz: 30}')
    for t in ("rgmp-server", "vrpn-server", "less"):
        if not F.have(t):
            sec.leave_out(t, "adapter type not in this build")
    cfg = "gateway:\n  entity: {stale_ms: 500, expire_ms: 60000}\nadapters:\n" + "\n".join(ads) + "\n"
    with Gateway(cfg) as gw:
        try:
            pid = gw.proc.pid
            # descriptors of the started daemon before any admin connection (no settling time)
            assert gw.wait_log("running with"), gw.log()
            fd0 = F.fd_count(pid)
            names = [n for n in ("rg", "vs", "ls") if n in gw.adapters()]
            for n in names:
                ports[n] = F.port_of(gw, n)
            ports["admin"] = gw.port
            wait_until(lambda: len(gw.entities("demo/")) == 5, what="synth entities")
            gw.get("/healthz")
            openings = {"rg": b"", "vs": F.VRPN_COOKIE, "ls": b"\x20\x00\x00\x00",
                        "admin": b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"}
            for n, port in ports.items():
                sec.run(f"flood {n}", [], flood, port, openings[n])

            def settled():
                c = gw.adapters()
                busy = [n for n in names if c[n]["counters"].get(
                    "clients", c[n]["counters"].get("peers", 0))]
                return not busy and F.fd_count(pid) <= fd0 + FD_SLACK
            wait_until(settled, timeout=20, what=f"fds back to {fd0} + {FD_SLACK} "
                       f"(now {F.fd_count(pid)})")
            fd1 = F.fd_count(pid)
            print(f"fds: {fd0} before {len(ports)} x {CYCLES} connections, {fd1} after")
            c = gw.adapters()
            for n in ("rg", "vs"):
                if n in c:  # each connection was served or refused (max_clients), none lost
                    k = c[n]["counters"]
                    assert k["clients_accepted"] + k["clients_refused"] >= CYCLES, c[n]
                    print(n, {x: k[x] for x in ("clients_accepted", "clients_refused")})
            # still serving
            if "rg" in names:
                r = F.RgmpReader(ports["rg"])
                wait_until(lambda: r.frames[2] > 0, what="rgmp data after the flood")
                r.close()
            if "vs" in names:
                r = F.VrpnReader(ports["vs"])
                wait_until(lambda: r.bytes > 2000, what="vrpn reports after the flood")
                r.close()
            assert gw.get("/healthz")[0] == 200
            F.assert_clean_exit(gw)
        except BaseException:
            print(gw.log()[-4000:])
            raise
    return sec.finish()


if __name__ == "__main__":
    sys.exit(main())
