"""Integration: the client adapters' common transport (rgmp-client, vrpn-client, less connect).

1. DNS at boot: a host name that does not resolve yet (a tiny DNS server of the test on loopback,
   named by `gateway.resolv_conf`, a path relative to the configuration's folder) puts each client
   adapter in `backoff` with a `last_error` naming DNS, in /api/adapters and /metrics, while the
   synth source streams and the gateway runs on; once the name resolves (to an address where
   nothing listens, then the peers' one), each connects to the second address and streams.
2. Nothing listening: the three client adapters report only `connecting` / `backoff`, say
   "Connection refused (attempt N)", never "connected", and LESS sends no packet.
3. One outage (each peer closes its connection once, then accepts again at once): every client
   adapter goes through the same states and counts exactly one reconnect and two connects.
4. LESS `mode: udp` with a `peer:` whose name does not resolve yet: `backoff` with the DNS error,
   then the peer (the name's first address) gets the connection-control once it resolves.
5. Relative paths: admin.token_file resolves against the configuration file's folder, not the
   working directory; an unreadable gateway.resolv_conf is a configuration error.
Sections for adapter types missing from the build are skipped (exit 77 only if none can run)."""
import os
import socket
import subprocess
import struct
import sys
import tempfile
import threading
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import faultlib as F  # noqa: E402
from xgtest import BIN, Gateway, wait_until  # noqa: E402

CLIENTS = {"rg": ("rgmp-client", "rg/rig-77/body"), "vc": ("vrpn-client", "vc/Tracker0/0"),
           "lc": ("less", "lc/probe")}
STATES = {"connecting", "handshake", "streaming", "backoff"}


class DnsStub:
    """A DNS server on 127.0.0.1 (UDP, a port of its own): an A query for `name` gets 127.0.0.2
    (where nothing listens) and 127.0.0.1, in that order, once `resolvable` is set; before that,
    and for every other name, NXDOMAIN. An AAAA query for `name` gets no data. evdns randomises the letter case of queries: names compare
    case-insensitively and the question is echoed as received."""

    def __init__(self, name):
        self.name = name.lower()
        self.resolvable = False
        self.queries = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.stop_ev = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop_ev.is_set():
            try:
                q, addr = self.sock.recvfrom(2048)
            except socket.timeout:
                continue
            except OSError:
                return
            r = self.answer(q)
            if r:
                self.queries += 1
                self.sock.sendto(r, addr)

    def answer(self, q):
        if len(q) < 17:
            return None
        tid, flags = struct.unpack(">HH", q[:4])
        i, labels = 12, []
        while i < len(q) and q[i]:
            labels.append(q[i + 1:i + 1 + q[i]])
            i += 1 + q[i]
        if i + 5 > len(q):
            return None
        qtype = struct.unpack(">H", q[i + 1:i + 3])[0]
        question = q[12:i + 5]
        name = b".".join(labels).decode("ascii", "replace").lower()
        known = name == self.name and self.resolvable
        rcode = 0 if known else 3
        answers = []
        if known and qtype == 1:
            answers = [struct.pack(">HHHIH", 0xC00C, 1, 1, 0, 4) + socket.inet_aton(ip)
                       for ip in ("127.0.0.2", "127.0.0.1")]
        hdr = struct.pack(">HHHHHH", tid, 0x8000 | (flags & 0x7900) | 0x0080 | rcode, 1,
                          len(answers), 0, 0)
        return hdr + question + b"".join(answers)

    def close(self):
        self.stop_ev.set()
        self.thread.join(5)
        self.sock.close()

    def resolv_conf(self, folder):
        """A resolv.conf in folder that points the gateway's resolver (gateway.resolv_conf) at
        this stub, one attempt of 1 s per query; returns its path."""
        path = os.path.join(folder, "resolv.conf")
        with open(path, "w") as f:
            f.write(f"nameserver 127.0.0.1:{self.port}\noptions timeout:1 attempts:1\n")
        return path


def udp_socket(addr="127.0.0.1", timeout=0.5):
    """A UDP socket bound to addr on a port of its own (recv times out after timeout s)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, 0))
    s.settimeout(timeout)
    return s


def free_udp_port(addr="127.0.0.2"):
    """A UDP port free on addr (where DnsStub's name resolves first) for a bind by name."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind((addr, 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def have_all():
    return [n for n, (t, _) in CLIENTS.items() if F.have(t)]


def client_lines(names, host, ports):
    out = []
    if "rg" in names:
        out.append(f'  - {{name: rg, type: rgmp-client, connect: "{host}:{ports["rg"]}"}}')
    if "vc" in names:
        out.append(f'  - {{name: vc, type: vrpn-client, '
                   f'devices: ["Tracker0@tcp://{host}:{ports["vc"]}"]}}')
    if "lc" in names:
        out.append(f'  - {{name: lc, type: less, mode: connect, connect: "{host}:{ports["lc"]}", '
                   f'signature: none, insecure: true, rate_hz: 30}}')
    return out


def make_peers(names):
    mk = {"rg": F.RgmpPeer, "vc": F.VrpnPeer, "lc": F.LessPeer}
    return {n: mk[n]() for n in names}


def prom_value(text, name, **labels):
    """The value of the series `name` whose labels include `labels`, or None."""
    want = [f'{k}="{v}"' for k, v in labels.items()]
    for line in text.splitlines():
        if line.startswith(name + "{") and all(w in line for w in want):
            return float(line.rsplit(" ", 1)[1])
    return None


def dns_at_boot(names):
    dns = DnsStub("mocap.test")
    peers = make_peers(names)
    with tempfile.TemporaryDirectory(prefix="xrgate-dns-") as d:
        with open(os.path.join(d, "resolv.conf"), "w") as f:
            f.write(f"nameserver 127.0.0.1:{dns.port}\noptions timeout:1 attempts:1\n")
        conf = os.path.join(d, "gateway.yaml")
        with open(conf, "w") as f:
            f.write("gateway:\n  resolv_conf: resolv.conf\nadapters:\n"
                    "  - {name: demo, type: synth, rate_hz: 30, bodies: 1, head: false, "
                    "hands: false}\n"
                    + "\n".join(client_lines(names, "mocap.test",
                                             {n: p.port for n, p in peers.items()})) + "\n")
        try:
            with Gateway(args=["--config", conf]) as gw:  # cwd: another folder
                for n in names:
                    a = wait_until(lambda n=n: (lambda a: a["state"] == "backoff"
                                                and a["last_error"].startswith("DNS") and a)(
                                                    gw.adapter(n)),
                                   what=f"{n} in backoff after a DNS failure")
                    assert "cannot resolve 'mocap.test'" in a["last_error"], a
                    assert a["counters"]["dns_failures"] >= 1 and a["counters"]["connects"] == 0, a
                    assert a["peer"].endswith(f"mocap.test:{peers[n].port}"), a
                assert gw.wait_log("DNS: cannot resolve 'mocap.test'"), gw.log()
                assert dns.queries >= 1
                # the others stream meanwhile, and the gateway runs on
                s0 = wait_until(lambda: gw.entities("demo/body0").get("demo/body0"),
                                what="the synth entity")["samples"]
                wait_until(lambda: gw.entities("demo/body0")["demo/body0"]["samples"] > s0,
                           what="the synth source streams")
                assert gw.proc.poll() is None, gw.log()
                m = gw.get("/metrics")[2].decode()
                for n in names:
                    t = CLIENTS[n][0]
                    assert prom_value(m, "xrgate_adapter_state", adapter=n, type=t,
                                      state="backoff") in (0, 1), m
                # the error text is in /api/adapters (above), never a label (issue 34 item 9)
                assert "xrgate_adapter_last_error_info" not in m and "last_error=" not in m, m
                # the name appears: each connects and streams
                dns.resolvable = True
                for n in names:
                    ent = CLIENTS[n][1]
                    wait_until(lambda n=n, ent=ent: gw.adapter(n)["state"] == "streaming"
                               and gw.entities(ent).get(ent, {}).get("active"), timeout=25,
                               what=f"{n} streaming once mocap.test resolves")
                    a = gw.adapter(n)
                    assert a["peer"].endswith(f"127.0.0.1:{peers[n].port}"), a
                    assert a["counters"]["connects"] == 1, a
                    # the name's first address refused: the second one, in the same attempt
                    assert a["last_error"] == f"cannot connect to {'tcp://' if n == 'vc' else ''}" \
                        f"127.0.0.2:{peers[n].port}: Connection refused", a
                m = gw.get("/metrics")[2].decode()
                for n in names:
                    assert prom_value(m, "xrgate_adapter_state", adapter=n,
                                      state="streaming") == 1, m
                    assert prom_value(m, "xrgate_adapter_state", adapter=n,
                                      state="backoff") == 0, m
        finally:
            for p in peers.values():
                p.kill()
            dns.close()
    print("dns at boot: backoff with a DNS last_error, then streaming once the name resolved")


def less_udp_peer_dns():
    dns = DnsStub("mocap.test")
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(("127.0.0.2", 0))  # the name's first address
    rx.settimeout(10)
    with tempfile.TemporaryDirectory(prefix="xrgate-dns-") as d:
        with open(os.path.join(d, "resolv.conf"), "w") as f:
            f.write(f"nameserver 127.0.0.1:{dns.port}\noptions timeout:1 attempts:1\n")
        conf = os.path.join(d, "gateway.yaml")
        with open(conf, "w") as f:
            f.write("gateway:\n  resolv_conf: resolv.conf\nadapters:\n"
                    "  - {name: demo, type: synth, rate_hz: 30, bodies: 1, head: false, "
                    "hands: false}\n"
                    f'  - {{name: lu, type: less, mode: udp, bind: "127.0.0.1:0", '
                    f'peer: "mocap.test:{rx.getsockname()[1]}", signature: none, '
                    f"insecure: true, rate_hz: 30}}\n")
        try:
            with Gateway(args=["--config", conf]) as gw:
                a = wait_until(lambda: (lambda a: a["state"] == "backoff" and a["last_error"]
                                        .startswith("DNS: cannot resolve 'mocap.test'") and a)(
                                            gw.adapter("lu")),
                               what="lu in backoff after a DNS failure")
                assert a["counters"]["packets_out"] == 0, a
                assert gw.proc.poll() is None, gw.log()
                dns.resolvable = True
                wait_until(lambda: gw.adapter("lu")["state"] == "streaming", timeout=25,
                           what="lu streaming once mocap.test resolves")
                data, src = rx.recvfrom(2048)  # its connection-control
                assert data and src[0] == "127.0.0.1", (data, src)
                a = gw.adapter("lu")
                assert a["peer"].endswith(f"127.0.0.2:{rx.getsockname()[1]}"), a
                assert gw.wait_log(f"UDP peer is 127.0.0.2:{rx.getsockname()[1]} (mocap.test:"), \
                    gw.log()
        finally:
            rx.close()
            dns.close()
    print("less udp peer: backoff with a DNS last_error, then the peer gets connection-control")


def nothing_listening(names):
    # bound but not listening: connections are refused, and nobody else takes the port
    holders = {n: socket.socket() for n in names}
    for s in holders.values():
        s.bind(("127.0.0.1", 0))
    ports = {n: s.getsockname()[1] for n, s in holders.items()}
    conf = "adapters:\n" + "\n".join(client_lines(names, "127.0.0.1", ports)) + "\n"
    seen = {n: set() for n in names}
    try:
        with Gateway(conf) as gw:
            def refused_twice():
                ok = True
                for a in gw.adapters().values():
                    if a["name"] in seen:
                        seen[a["name"]].add(a["state"])
                        ok = ok and a["counters"]["reconnects"] >= 2
                return ok
            wait_until(refused_twice, timeout=15, every=0.005, what="two refused attempts each")
            for n in names:
                a = gw.adapter(n)
                assert seen[n] <= {"connecting", "backoff"}, (n, seen[n])
                assert a["last_error"] == f"cannot connect to {'tcp://' if n == 'vc' else ''}" \
                    f"127.0.0.1:{ports[n]}: Connection refused", a
                assert a["counters"]["connects"] == 0, a
                for k in (1, 2):
                    line = (f"[{n}] cannot connect to {'tcp://' if n == 'vc' else ''}"
                            f"127.0.0.1:{ports[n]}: Connection refused (attempt {k})")
                    assert gw.wait_log(line), gw.log()
            if "lc" in names:
                c = gw.counters("lc")
                assert c["packets_out"] == 0 and c["peers"] == 0, c
            log = gw.log()
            assert "connected to" not in log and "closed by peer" not in log, log
    finally:
        for s in holders.values():
            s.close()
    print("nothing listening:", {n: sorted(s) for n, s in seen.items()})


def one_outage(names):
    peers = make_peers(names)
    conf = ("adapters:\n" + "\n".join(client_lines(names, "127.0.0.1",
                                                   {n: p.port for n, p in peers.items()})) + "\n")
    try:
        with Gateway(conf) as gw:
            for n in names:
                wait_until(lambda n=n: gw.adapter(n)["state"] == "streaming",
                           what=f"{n} streaming")
                a = gw.adapter(n)
                assert a["counters"]["reconnects"] == 0 and a["last_error"] == "", a
            # every peer ends its session (FIN) and accepts again at once: the gateway's next
            # attempt comes after the backoff (>= 0.375 s), so it succeeds
            for p in peers.values():
                p.kill()
                p.start()
            seen = {n: set() for n in names}

            def back():
                done = True
                for a in gw.adapters().values():
                    if a["name"] in seen:
                        seen[a["name"]].add(a["state"])
                        done = done and a["state"] == "streaming" and peers[a["name"]].sessions == 2
                return done
            wait_until(back, timeout=15, every=0.005, what="every client streaming again")
            counters = {}
            for n in names:
                a = gw.adapter(n)
                c = a["counters"]
                counters[n] = {k: c[k] for k in ("connects", "reconnects", "backoff_attempts")}
                assert seen[n] <= STATES and "backoff" in seen[n], (n, seen[n])
                assert a["last_error"], a
            assert all(v == {"connects": 2, "reconnects": 1, "backoff_attempts": 0}
                       for v in counters.values()), counters
    finally:
        for p in peers.values():
            p.kill()
    print("one outage:", counters)


def token_file_relative():
    with tempfile.TemporaryDirectory(prefix="xrgate-paths-") as d:
        os.mkdir(os.path.join(d, "conf"))
        with open(os.path.join(d, "conf", "token"), "w") as f:
            f.write("relative-token\n")
        os.chmod(os.path.join(d, "conf", "token"), 0o600)
        conf = os.path.join(d, "conf", "gateway.yaml")
        with open(conf, "w") as f:
            f.write("gateway:\n  admin:\n    token_file: token\n"
                    "adapters:\n  - {name: demo, type: synth}\n")
        with Gateway(args=["--config", conf], cwd=d) as gw:  # ./token does not exist here
            assert gw.get("/api/adapters")[0] == 401
            req = urllib.request.Request(gw.url("/api/adapters"),
                                         headers={"Authorization": "Bearer relative-token"})
            with urllib.request.urlopen(req, timeout=5) as r:
                assert r.status == 200
    print("admin.token_file: relative to the configuration's folder")


def resolv_conf_unreadable():
    with tempfile.TemporaryDirectory(prefix="xrgate-paths-") as d:
        conf = os.path.join(d, "gateway.yaml")
        with open(conf, "w") as f:
            f.write("gateway:\n  resolv_conf: missing.conf\nadapters:\n  - {name: demo, type: synth}\n")
        r = subprocess.run([BIN, "--check", "--config", conf], capture_output=True, text=True,
                           timeout=10, cwd="/")
        want = f"{conf}:2:16: resolv_conf '{d}/missing.conf': No such file or directory"
        assert r.returncode == 1 and want in r.stderr, (r.returncode, r.stderr)
    print("gateway.resolv_conf: an unreadable file is a configuration error")


def main():
    names = have_all()
    if not names:
        F.skip("no client adapter (rgmp-client, vrpn-client, less) in this build")
    dns_at_boot(names)
    nothing_listening(names)
    one_outage(names)
    if F.have("less", "less_udp_peer_dns"):
        less_udp_peer_dns()
    token_file_relative()
    resolv_conf_unreadable()


if __name__ == "__main__":
    main()
