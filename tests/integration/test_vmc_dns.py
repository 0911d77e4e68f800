"""Integration: vmc destinations and bind given by host name (issue 15, item 1).

A headset or desktop given by name (`quest.local:39539`) is the common case. Names are resolved
at start without blocking the reactor (the gateway's shared resolver, here pointed by
`gateway.resolv_conf` at the DnsStub of test_transport_client on loopback), never at load:
- `--check` takes a name that does not resolve (syntax only, no DNS) and refuses one that is not
  a host name, naming it;
- a destination whose name never resolves (`nohost.invalid`) is inactive: the numeric destination
  keeps receiving, the adapter shows destinations_unresolved, dns_failures and the DNS error in
  last_error, logs it and asks again on a backoff; the gateway runs on;
- a destination whose name appears later (`vmcdest.test` -> 127.0.0.2) starts receiving once it
  resolves, with one line saying so;
- a bind host name that does not resolve yet leaves that adapter in `backoff` without a socket;
  once it resolves, the socket opens on the name's address and receives."""
import os
import socket
import subprocess
import sys
import tempfile
import time

from test_transport_client import DnsStub, free_udp_port, udp_socket
from test_vmc import performer_bundle
from xgtest import BIN, Gateway, time_bound, wait_until


def check(conf_text):
    return subprocess.run([BIN, "--check", "--config", "/dev/stdin"], capture_output=True,
                          text=True, timeout=10, input=conf_text)


def test_check():
    t0 = time.monotonic()
    r = check('adapters:\n  - {name: x, type: vmc, bind: "127.0.0.1:0", '
              'destinations: ["nohost.invalid:39539"]}\n')
    assert r.returncode == 0, r.stderr
    r = check('adapters:\n  - {name: x, type: vmc, bind: "nohost.invalid:39539"}\n')
    assert r.returncode == 0, r.stderr
    # no DNS at load: well within a resolver timeout (scaled for load and the build)
    assert time.monotonic() - t0 < time_bound(1.0)
    r = check('adapters:\n  - {name: x, type: vmc, bind: "127.0.0.1:0", '
              'destinations: ["bad host!:39539"]}\n')
    assert r.returncode != 0, r.stderr
    assert "'bad host!' is neither an IP address nor a host name" in r.stderr, r.stderr
    r = check('adapters:\n  - {name: x, type: vmc, bind: "127.0.0.1:0", '
              'destinations: ["quest.local"]}\n')
    assert r.returncode != 0 and "destinations:" in r.stderr, r.stderr
    r = check('adapters:\n  - {name: x, type: vmc, bind: "no_such..name:39539"}\n')
    assert r.returncode != 0 and "bind:" in r.stderr, r.stderr
    print("ok   --check: names that do not resolve pass (syntax only, no DNS); 'bad host!', a "
          "destination without a port and 'no_such..name' are refused, naming the text")


def datagrams(sock, n, sender, timeout=10.0):
    """n datagrams received on sock from sender ("ip:port", the vmc adapter's socket): VMC
    bundles. Datagrams from elsewhere are not ours and are skipped (the suite runs in parallel:
    another test's DDS discovery once reached this port)."""
    got, deadline = [], time.monotonic() + timeout
    while len(got) < n and time.monotonic() < deadline:
        try:
            d, src = sock.recvfrom(65536)
        except socket.timeout:
            continue
        if f"{src[0]}:{src[1]}" != sender:
            continue
        assert d.startswith(b"#bundle\0"), d[:16]
        got.append(d)
    assert len(got) == n, f"{len(got)} of {n} datagrams"
    return got


def test_names(d):
    dns = DnsStub("vmcdest.test")
    live = udp_socket("127.0.0.1")
    late = udp_socket("127.0.0.2")  # where vmcdest.test resolves (its first address)
    bind_port = free_udp_port("127.0.0.2")
    resolv = dns.resolv_conf(d)
    lp, tp = live.getsockname()[1], late.getsockname()[1]
    conf = f"""gateway:
  resolv_conf: {resolv}
adapters:
  - {{name: demo, type: synth, rate_hz: 60, bodies: 1, head: false, hands: false}}
  - name: out
    type: vmc
    bind: "127.0.0.1:0"
    destinations: ["nohost.invalid:{lp}", "vmcdest.test:{tp}", "127.0.0.1:{lp}"]
    include: ["demo/*"]
    rate_hz: 60
  - name: in
    type: vmc
    bind: "vmcdest.test:{bind_port}"
"""
    try:
        with Gateway(conf) as gw:
            a = wait_until(lambda: (lambda x: x if x["counters"]["dns_failures"] >= 2 else None)(
                gw.adapter("out")), what="both names failed once")
            assert a["counters"]["destinations_unresolved"] == 2, a
            assert a["peer"].endswith(f" -> nohost.invalid:{lp} (unresolved),vmcdest.test:{tp} "
                                      f"(unresolved),127.0.0.1:{lp}"), a
            assert a["last_error"].startswith("DNS: cannot resolve '"), a
            assert gw.wait_log(f"[out] destination nohost.invalid:{lp}: DNS: cannot resolve "
                               f"'nohost.invalid': "), gw.log()
            assert gw.wait_log(f"[out] destination vmcdest.test:{tp}: DNS: cannot resolve "
                               f"'vmcdest.test': "), gw.log()
            # the numeric destination keeps receiving meanwhile, and nothing else is sent: every
            # datagram counted out reached it (one destination active)
            out_addr = f"127.0.0.1:{a['peer'].split()[0].split(':')[1]}"  # "udp:PORT -> ..."
            datagrams(live, 30, out_addr)
            # the bind name: no socket yet, in backoff with the DNS error; the gateway runs on
            b = wait_until(lambda: (lambda x: x if x["state"] == "backoff" else None)(
                gw.adapter("in")), what="'in' in backoff")
            assert "cannot resolve 'vmcdest.test'" in b["last_error"], b
            assert b["counters"]["dns_failures"] >= 1, b
            assert gw.proc.poll() is None
            print(f"ok   unresolved names: the numeric destination receives, "
                  f"destinations_unresolved 2, dns_failures {a['counters']['dns_failures']}, "
                  f"last_error '{a['last_error']}'; bind by name in backoff")

            # the name appears: that destination receives, the bind socket opens on 127.0.0.2
            dns.resolvable = True
            assert gw.wait_log(f"[out] destination vmcdest.test:{tp} resolved to "
                               f"127.0.0.2:{tp}: sending to it", timeout=25), gw.log()
            datagrams(late, 10, out_addr)
            a = gw.adapter("out")
            assert a["counters"]["destinations_unresolved"] == 1, a
            assert a["peer"].endswith(f" -> nohost.invalid:{lp} (unresolved),127.0.0.2:{tp},"
                                      f"127.0.0.1:{lp}"), a
            b = wait_until(lambda: (lambda x: x if x["state"] == "listening" else None)(
                gw.adapter("in")), timeout=25, what="'in' listening once its name resolves")
            assert b["counters"]["port"] == bind_port, b
            assert gw.wait_log(f"[in] bind vmcdest.test:{bind_port} resolved to "
                               f"127.0.0.2:{bind_port}"), gw.log()
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.sendto(performer_bundle(), ("127.0.0.2", bind_port))
            s.close()
            wait_until(lambda: gw.adapter("in")["counters"]["datagrams_in"] == 1,
                       what="'in' received the datagram sent to its resolved address")
            print("ok   vmcdest.test resolves: its destination receives, the bind socket opens "
                  "on 127.0.0.2 and receives")

            # nohost.invalid is asked again on the backoff, still inactive
            n0 = gw.adapter("out")["counters"]["dns_failures"]
            wait_until(lambda: gw.adapter("out")["counters"]["dns_failures"] > n0, timeout=25,
                       what="nohost.invalid asked again")
            a = gw.adapter("out")
            assert a["counters"]["destinations_unresolved"] == 1, a
            assert "cannot resolve 'nohost.invalid'" in a["last_error"], a
            print(f"ok   nohost.invalid asked again on the backoff "
                  f"(dns_failures {n0} -> {a['counters']['dns_failures']})")
    finally:
        dns.close()
        live.close()
        late.close()


def main():
    test_check()
    with tempfile.TemporaryDirectory(prefix="xrgate-vmcdns-") as d:
        test_names(d)
    print("test_vmc_dns: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
