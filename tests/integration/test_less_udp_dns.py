"""Integration: LESS `mode: udp` with its `bind` given by host name (issue 15, item 1).

The bind address is resolved at start without blocking the reactor (the gateway's shared
resolver, here pointed by `gateway.resolv_conf` at the DnsStub of test_transport_client on
loopback), never at load:
- `--check` takes a bind or peer name that does not resolve (syntax only, no DNS) and refuses
  one that is not a host name, naming the key and the text;
- a bind name that never resolves (`nohost.invalid`) leaves that adapter in `backoff` without a
  socket, with the DNS error in last_error and dns_failures growing; the gateway and the other
  adapters run on;
- a bind name that appears later (`lessbind.test` -> 127.0.0.2) opens the socket on that address
  once it resolves, and it receives.
(A `peer:` by name is covered by test_transport_client's LESS UDP section.)"""
import os
import socket
import subprocess
import sys
import tempfile
import time

from test_transport_client import DnsStub, free_udp_port
from xgtest import BIN, Gateway, time_bound, wait_until


def check(conf_text):
    return subprocess.run([BIN, "--check", "--config", "/dev/stdin"], capture_output=True,
                          text=True, timeout=10, input=conf_text)


def test_check():
    t0 = time.monotonic()
    r = check('adapters:\n  - {name: x, type: less, mode: udp, bind: "nohost.invalid:7000", '
              'peer: "other.invalid:7001", signature: none, insecure: true}\n')
    assert r.returncode == 0, r.stderr
    # no DNS at load: well within a resolver timeout (scaled for load and the build)
    assert time.monotonic() - t0 < time_bound(1.0)
    r = check('adapters:\n  - {name: x, type: less, mode: udp, bind: "no_such..name:7000", '
              'signature: none, insecure: true}\n')
    assert r.returncode != 0 and "bind: " in r.stderr and "no_such..name" in r.stderr, r.stderr
    r = check('adapters:\n  - {name: x, type: less, mode: udp, bind: "127.0.0.1:7000", '
              'peer: "bad host!:7001", signature: none, insecure: true}\n')
    assert r.returncode != 0, r.stderr
    assert "peer: address 'bad host!:7001': 'bad host!' is neither" in r.stderr, r.stderr
    r = check('adapters:\n  - {name: x, type: less, mode: udp, bind: "127.0.0.1:7000", '
              'peer: "127.0.0.1:0", signature: none, insecure: true}\n')
    assert r.returncode != 0 and "peer: port 0" in r.stderr, r.stderr
    print("ok   --check: bind and peer names that do not resolve pass (syntax only, no DNS); "
          "'no_such..name', 'bad host!' and port 0 are refused, naming the key")


def test_bind_names(d):
    dns = DnsStub("lessbind.test")
    bind_port = free_udp_port("127.0.0.2")  # where lessbind.test resolves (its first address)
    resolv = dns.resolv_conf(d)
    conf = f"""gateway:
  resolv_conf: {resolv}
adapters:
  - {{name: demo, type: synth, rate_hz: 60, bodies: 1, head: false, hands: false}}
  - {{name: never, type: less, mode: udp, bind: "nohost.invalid:{bind_port}", signature: none,
      insecure: true}}
  - {{name: late, type: less, mode: udp, bind: "lessbind.test:{bind_port}", signature: none,
      insecure: true}}
  - {{name: num, type: less, mode: udp, bind: "127.0.0.1:0", signature: none}}
"""
    try:
        with Gateway(conf) as gw:
            for name, host in (("never", "nohost.invalid"), ("late", "lessbind.test")):
                a = wait_until(lambda: (lambda x: x if x["state"] == "backoff" and
                                        x["counters"]["dns_failures"] >= 1 else None)(
                    gw.adapter(name)), what=f"'{name}' in backoff")
                assert a["last_error"].startswith(f"DNS: cannot resolve '{host}': "), a
                assert gw.wait_log(f"[{name}] bind {host}:{bind_port}: DNS: cannot resolve "
                                   f"'{host}': "), gw.log()
            assert gw.wait_log(f"[late] bind lessbind.test:{bind_port}: resolving the name; "
                               f"the socket opens once it resolves"), gw.log()
            # the others run on: the numeric LESS UDP adapter has its socket, synth streams
            n = gw.adapter("num")
            assert n["state"] == "streaming" and n["peer"].startswith("127.0.0.1:"), n
            assert gw.proc.poll() is None
            print("ok   bind names that do not resolve: both in backoff with the DNS error, "
                  "the gateway and the numeric adapter run on")

            dns.resolvable = True
            assert gw.wait_log(f"[late] bind lessbind.test:{bind_port} resolved to "
                               f"127.0.0.2:{bind_port}", timeout=25), gw.log()
            a = wait_until(lambda: (lambda x: x if x["state"] == "streaming" else None)(
                gw.adapter("late")), timeout=25, what="'late' streaming once its name resolves")
            assert a["peer"] == f"127.0.0.2:{bind_port}", a
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.sendto(b"not a LESS datagram", ("127.0.0.2", bind_port))
            s.close()
            a = wait_until(lambda: (lambda x: x if x["counters"]["packets_in"] == 1 else None)(
                gw.adapter("late")), what="'late' received the datagram on its resolved address")
            assert a["counters"]["drops"] == 1, a  # refused (not LESS), counted
            # nohost.invalid is asked again on the backoff, still without a socket
            n0 = gw.adapter("never")["counters"]["dns_failures"]
            b = wait_until(lambda: (lambda x: x if x["counters"]["dns_failures"] > n0 else None)(
                gw.adapter("never")), timeout=25, what="nohost.invalid asked again")
            assert b["state"] == "backoff", b
            print("ok   lessbind.test resolves: the socket opens on 127.0.0.2 and receives; "
                  "nohost.invalid asked again on the backoff")
    finally:
        dns.close()


def main():
    test_check()
    with tempfile.TemporaryDirectory(prefix="xrgate-lessdns-") as d:
        test_bind_names(d)
    print("test_less_udp_dns: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
