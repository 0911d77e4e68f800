"""Integration: rtp destinations and bind addresses given by host name (issue 15, RTP part 2).

Names are resolved at start without blocking the reactor (the gateway's shared resolver, here
pointed by `gateway.resolv_conf` at a DNS server of this test on loopback, the DnsStub of
test_transport_client), never at load:
- `--check` takes a name that does not resolve (it only checks the syntax) and refuses one that
  is not a host name, naming it;
- a destination whose name does not resolve (`nohost.invalid`) is inactive: the numeric
  destination keeps receiving every packet, the adapter shows destinations_unresolved,
  dns_failures and the DNS error in last_error, logs it (one rate-limited line per attempt of the
  outage's first three, then every tenth) and asks again on a backoff; the gateway runs on;
- a destination whose name appears later (`rtpdest.test` -> 127.0.0.2) starts receiving once it
  resolves, with one line saying so;
- a bind host name that does not resolve yet leaves that adapter in `backoff` without a socket;
  once it resolves, the socket opens on the name's address and receives."""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

from test_rtp import object2, require_rtp, rtp
from test_transport_client import DnsStub, free_udp_port, udp_socket
from xgtest import BIN, Gateway, time_bound, wait_until


def check(conf_text):
    return subprocess.run([BIN, "--check", "--config", "/dev/stdin"], capture_output=True,
                          text=True, timeout=10, input=conf_text)


def test_check():
    t0 = time.monotonic()
    r = check('adapters:\n  - {name: x, type: rtp, bind: "127.0.0.1:0", '
              'destinations: ["nohost.invalid:5004"]}\n')
    assert r.returncode == 0, r.stderr
    # no DNS at load: well within a resolver timeout (scaled for load and the build)
    assert time.monotonic() - t0 < time_bound(1.0)
    r = check('adapters:\n  - {name: x, type: rtp, bind: "127.0.0.1:0", '
              'destinations: ["bad host!:5004"]}\n')
    assert r.returncode != 0, r.stderr
    assert "'bad host!' is neither an IP address nor a host name" in r.stderr, r.stderr
    r = check('adapters:\n  - {name: x, type: rtp, bind: "no_such..name:5004"}\n')
    assert r.returncode != 0 and "bind:" in r.stderr, r.stderr
    print("ok   --check: a name that does not resolve passes (syntax only, no DNS); "
          "'bad host!' and 'no_such..name' are refused, naming the text")


def rtp_packets(sock, n, timeout=10.0):
    """n RTP (not RTCP) packets received on sock."""
    got, deadline = [], time.monotonic() + timeout
    while len(got) < n and time.monotonic() < deadline:
        try:
            pkt = sock.recv(65536)
        except socket.timeout:
            continue
        # RTP version 2 only (the suite runs in parallel: another test's datagrams, e.g. DDS
        # discovery, can reach this port), and not RTCP (PTs 200-204, RFC 5761)
        if len(pkt) >= 12 and pkt[0] >> 6 == 2 and not 72 <= (pkt[1] & 0x7f) <= 76:
            got.append(pkt)
    assert len(got) == n, f"{len(got)} of {n} RTP packets"
    return got


def test_names(d):
    dns = DnsStub("rtpdest.test")
    live = udp_socket("127.0.0.1")
    late = udp_socket("127.0.0.2")  # where rtpdest.test resolves (its first address)
    bind_port = free_udp_port("127.0.0.2")
    resolv = dns.resolv_conf(d)
    lp, tp = live.getsockname()[1], late.getsockname()[1]
    conf = f"""gateway:
  resolv_conf: {resolv}
adapters:
  - {{name: demo, type: synth, rate_hz: 60, bodies: 1, head: false, hands: false}}
  - name: out
    type: rtp
    bind: "127.0.0.1:0"
    destinations: ["nohost.invalid:{lp}", "rtpdest.test:{tp}", "127.0.0.1:{lp}"]
    rate_hz: 60
    refresh_ms: 0
  - name: in
    type: rtp
    bind: "rtpdest.test:{bind_port}"
    refresh_ms: 0
"""
    try:
        with Gateway(conf) as gw:
            a = wait_until(lambda: (lambda x: x if x["counters"]["dns_failures"] >= 2 else None)(
                gw.adapter("out")), what="both names failed once")
            assert a["counters"]["destinations_unresolved"] == 2, a
            assert a["peer"].endswith(f" -> nohost.invalid:{lp} (unresolved),rtpdest.test:{tp} "
                                      f"(unresolved),127.0.0.1:{lp}"), a
            assert a["last_error"].startswith("DNS: cannot resolve '"), a
            assert gw.wait_log(f"[out] destination nohost.invalid:{lp}: DNS: cannot resolve "
                               f"'nohost.invalid': "), gw.log()
            assert gw.wait_log(f"[out] destination rtpdest.test:{tp}: DNS: cannot resolve "
                               f"'rtpdest.test': "), gw.log()
            # the numeric destination misses nothing meanwhile: consecutive sequence numbers
            seqs = [struct.unpack("!H", p[2:4])[0] for p in rtp_packets(live, 60)]
            gaps = [(x, y) for x, y in zip(seqs, seqs[1:]) if (y - x) & 0xffff != 1]
            assert not gaps, gaps[:5]
            # the bind name: no socket yet, in backoff with the DNS error; the gateway runs on
            b = wait_until(lambda: (lambda x: x if x["state"] == "backoff" else None)(
                gw.adapter("in")), what="'in' in backoff")
            assert "cannot resolve 'rtpdest.test'" in b["last_error"], b
            assert b["counters"]["dns_failures"] >= 1, b
            assert gw.proc.poll() is None
            print(f"ok   unresolved names: the numeric destination got 60 packets without a gap, "
                  f"destinations_unresolved 2, dns_failures {a['counters']['dns_failures']}, "
                  f"last_error '{a['last_error']}'; bind by name in backoff")

            # the name appears: that destination receives, the bind socket opens on 127.0.0.2
            dns.resolvable = True
            assert gw.wait_log(f"[out] destination rtpdest.test:{tp} resolved to "
                               f"127.0.0.2:{tp}: sending to it", timeout=25), gw.log()
            rtp_packets(late, 10)
            a = gw.adapter("out")
            assert a["counters"]["destinations_unresolved"] == 1, a
            assert a["peer"].endswith(f" -> nohost.invalid:{lp} (unresolved),127.0.0.2:{tp},"
                                      f"127.0.0.1:{lp}"), a
            b = wait_until(lambda: (lambda x: x if x["state"] == "listening" else None)(
                gw.adapter("in")), timeout=25, what="'in' listening once its name resolves")
            assert b["counters"]["port"] == bind_port, b
            assert gw.wait_log(f"[in] bind rtpdest.test:{bind_port} resolved to "
                               f"127.0.0.2:{bind_port}"), gw.log()
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.sendto(rtp(98, 1, 0, 0x51, object2(1, 0, (1, 2, 3), (0, 0, 0), (0, 0, 0),
                                                 (0, 0, 0))), ("127.0.0.2", bind_port))
            s.close()
            wait_until(lambda: gw.adapter("in")["counters"]["packets_in"] == 1,
                       what="'in' received the packet sent to its resolved address")
            print("ok   rtpdest.test resolves: its destination receives, the bind socket opens "
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
    require_rtp()
    test_check()
    with tempfile.TemporaryDirectory(prefix="xrgate-rtpdns-") as d:
        test_names(d)
    print("test_rtp_dns: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
