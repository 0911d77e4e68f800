"""Fault: SIGTERM (and SIGINT) during full load: the gateway exits 0 within 1 s, cleanly.

Full load: synth with 1000 bodies at 240 Hz; an rgmp-server and a vrpn-server, each with a reading
client and a client that never reads (its output buffer full); an rtp adapter sending to a UDP
socket; an rgmp-client, a vrpn-client and a less connect adapter streaming from faultlib peers at
100 Hz; a less listener with a connected peer half-way through its first packet; an open
/events stream on the admin server. Once everything streams, the signal is sent: the process
must exit with status 0 in under 1 s (docs/configuration.md: "SIGINT and SIGTERM stop the gateway cleanly within
a second"; a single generous bound, as it is a requirement of the product), with no sanitizer
report in its output (under `make sanitize` this covers leaks at exit too). Adapter types missing
from the build are left out of the load and reported."""
import signal
import socket
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import faultlib as F  # noqa: E402
from xgtest import LOAD, SLOWDOWN, Gateway, time_bound, wait_until  # noqa: E402


def config(peers, sink_port):
    ads = ["  - {name: demo, type: synth, bodies: 1000, rate_hz: 240}"]
    if F.have("rgmp-server"):
        ads.append('  - {name: ro, type: rgmp-server, listen: "127.0.0.1:0", rate_hz: 60, '
                   'max_output_bytes: 262144}')
    if F.have("vrpn-server"):
        ads.append('  - {name: vo, type: vrpn-server, listen: "127.0.0.1:0", rate_hz: 60}')
    if F.have("rtp"):
        ads.append(f'  - {{name: rt, type: rtp, bind: "127.0.0.1:0", '
                   f'destinations: ["127.0.0.1:{sink_port}"], rate_hz: 90}}')
    if "rg" in peers:
        ads.append(f'  - {{name: rg, type: rgmp-client, connect: "127.0.0.1:{peers["rg"].port}"}}')
    if "vc" in peers:
        ads.append(f'  - {{name: vc, type: vrpn-client, '
                   f'devices: ["Tracker0@tcp://127.0.0.1:{peers["vc"].port}"]}}')
    if "lc" in peers:
        ads.append(f'  - {{name: lc, type: less, mode: connect, '
                   f'connect: "127.0.0.1:{peers["lc"].port}", signature: none}}')
        ads.append('  - {name: ll, type: less, mode: listen, listen: "127.0.0.1:0", '
                   'signature: none}')
    return "adapters:\n" + "\n".join(ads) + "\n"


def load_and_stop(sig):
    peers = {}
    if F.have("rgmp-client"):
        peers["rg"] = F.RgmpPeer(hz=100)
    if F.have("vrpn-client"):
        peers["vc"] = F.VrpnPeer(hz=100)
    if F.have("less"):
        peers["lc"] = F.LessPeer(hz=100)
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", 0))
    clients = []
    try:
        with Gateway(config(peers, sink.getsockname()[1])) as gw:
            try:
                wait_until(lambda: len(gw.entities("demo/")) == 1003, what="synth entities")
                names = gw.adapters()
                if "ro" in names:
                    r = F.RgmpReader(F.port_of(gw, "ro"))
                    clients += [r, F.RgmpReader(F.port_of(gw, "ro"), read=False, rcvbuf=4096)]
                    wait_until(lambda: r.frames[2] > 0, what="rgmp data")
                if "vo" in names:
                    v = F.VrpnReader(F.port_of(gw, "vo"))
                    clients += [v, F.VrpnReader(F.port_of(gw, "vo"), read=False, rcvbuf=4096)]
                    wait_until(lambda: v.bytes > 100000, what="vrpn reports")
                if "ll" in names:
                    s = socket.create_connection(("127.0.0.1", F.port_of(gw, "ll")))
                    s.sendall(b"\x40")  # the first byte of a packet-length
                    clients.append(s)
                ev = socket.create_connection(("127.0.0.1", gw.port))
                ev.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
                clients.append(ev)
                for n in peers:
                    wait_until(lambda n=n: gw.adapter(n)["state"] == "streaming",
                               what=f"{n} streaming")
                if "rt" in names:
                    sink.settimeout(5)
                    assert sink.recv(65536), "rtp egress"
                # under load: the sources have delivered another 100 samples since
                def samples_in():
                    return sum(a["counters"].get("samples_in", 0)
                               for a in gw.adapters().values())
                n0 = samples_in()
                wait_until(lambda: samples_in() >= n0 + 100, what="100 more samples in")
                code, took = gw.stop(sig, timeout=time_bound(1.0) + 5)
                log = gw.log()
                print(f"{signal.Signals(sig).name} under load ({len(names)} adapters): exit "
                      f"{code} after {took:.3f} s")
                assert code == 0, f"exit status {code}:\n{log[-3000:]}"
                # the stated 1 s (docs/reliability.md), scaled for load and the build (xgtest);
                # the figure itself: tests/bench and the log line above
                assert took < time_bound(1.0), f"{signal.Signals(sig).name} took {took:.2f} s " \
                    f"(bound {time_bound(1.0):.0f} s: 1 s x {LOAD:.0f} load x {SLOWDOWN:.0f} build)"
                for bad in ("Sanitizer", "runtime error"):
                    assert bad not in log, log[-5000:]
            except BaseException:
                print(gw.log()[-4000:])
                raise
    finally:
        for c in clients:
            c.close()
        for p in peers.values():
            try:
                p.kill()
            except (AssertionError, OSError):
                pass
        sink.close()


def main():
    F.require_adapters("synth")
    for t in ("rgmp-server", "vrpn-server", "rtp", "rgmp-client", "vrpn-client", "less"):
        F.have(t, "its part of the load")  # a SKIP line, and under CI=true a failure
    load_and_stop(signal.SIGTERM)
    load_and_stop(signal.SIGINT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
