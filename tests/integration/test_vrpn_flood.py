"""Integration: a flood of bad input cannot flood the log (issue 22 item 15, vrpn-server).

Three floods of 2,000 each at vrpn-servers on loopback: TCP connections refused by max_clients
(the only slot is held by a reading client), malformed UDP connection requests, and connections
that send a bad cookie. Each is counted in full (`clients_refused`, `requests_rejected`,
`bad_input`), each kind of line is printed at most 5 times per 10 s window (core/util/log.h), and the
first line of that kind after the window carries the suppressed-count summary "(N similar lines
suppressed in the last S s)" with N >= 1,995. The client holding the slot is served throughout.
Waits are on counters and log lines, bounded."""
import os
import re
import socket
import struct
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402
from xgtest import Gateway, wait_until  # noqa: E402

N = 2000
BURST = 5  # XG_LOG_LIMIT_BURST
BAD_COOKIE = b"vrpn: ver. 06.38  0" + b"\0" * 5

CONFIG = """
adapters:
  - name: demo
    type: synth
    rate_hz: 20
    bodies: 1
  - name: full
    type: vrpn-server
    listen: "127.0.0.1:0"
    rate_hz: 20
    max_clients: 1
  - name: open
    type: vrpn-server
    listen: "127.0.0.1:0"
    rate_hz: 20
"""

KINDS = {  # kind: (adapter, text of its line, counter)
    "refused": ("full", "refused: max_clients (1) reached", "clients_refused"),
    "request": ("full", ": ignored", "requests_rejected"),
    "cookie": ("open", ": cookie: ", "bad_input"),
}


def lines_of(gw, kind):
    name, text, _ = KINDS[kind]
    return [ln for ln in list(gw.lines) if f"[{name}]" in ln and text in ln]


def connect(port):
    """A connection closed with RST (SO_LINGER 0): thousands of them leave no TIME_WAIT 4-tuple
    behind that a later connect from a reused port would collide with (a 1 s SYN retransmit)."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.connect(("127.0.0.1", port))
    return s


def refused_once(port):
    connect(port).close()


def bad_cookie_once(port):
    s = connect(port)
    s.sendall(BAD_COOKIE)
    s.settimeout(5)
    try:
        while s.recv(4096):
            pass
    except (ConnectionResetError, socket.timeout):
        pass
    s.close()


def main():
    with Gateway(CONFIG) as gw:
        try:
            full, opn = F.port_of(gw, "full"), F.port_of(gw, "open")
            wait_until(lambda: gw.counters("full")["sensors"], what="sensors served")
            holder = F.VrpnReader(full, tracker="demo")
            wait_until(lambda: holder.bytes > 1000, what="the slot holder is served")
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            t0 = time.monotonic()
            for k in range(0, N, 25):  # 25 at a time: within the listen backlog (64) and
                for _ in range(25):  # a loaded runner's UDP receive buffer
                    refused_once(full)
                    u.sendto(b"no terminating NUL", ("127.0.0.1", full))
                wait_until(lambda: gw.counters("full")["clients_refused"] >= k + 25 and
                           gw.counters("full")["requests_rejected"] >= k + 25,
                           what=f"{k + 25} refused and {k + 25} requests rejected")
            for _ in range(N):
                bad_cookie_once(opn)
            for kind, (name, _, ctr) in KINDS.items():
                wait_until(lambda: gw.counters(name)[ctr] >= N, timeout=30,
                           what=f"{N} {kind} counted")
            # at most BURST lines per kind and 10 s window (normally all of it is one window)
            windows = int((time.monotonic() - t0) // 10) + 1
            for kind in KINDS:  # the log is read by a thread: wait for the window's 5 lines
                wait_until(lambda: len(lines_of(gw, kind)) >= BURST, what=f"{kind} lines")
                n = len(lines_of(gw, kind))
                print(f"{kind}: {N} events, {n} lines in {windows} window(s)")
                assert 1 <= n <= BURST * windows, (kind, n)
            # the next window: one more event of each kind until its summary line appears
            deadline = time.monotonic() + 20
            summaries = {}
            while len(summaries) < len(KINDS) and time.monotonic() < deadline:
                refused_once(full)
                u.sendto(b"no terminating NUL", ("127.0.0.1", full))
                bad_cookie_once(opn)
                for kind in KINDS:
                    for ln in lines_of(gw, kind):
                        m = re.search(r"\((\d+) similar lines suppressed in the last (\d+) s\)$",
                                      ln)
                        if m:
                            summaries[kind] = (int(m.group(1)), ln)
                time.sleep(0.25)  # pace of the probes (one event per kind each time)
            for kind in KINDS:
                assert kind in summaries, f"no summary line for {kind}"
                count, ln = summaries[kind]
                print(f"  {kind}: {ln.split('] ', 1)[1]}")
                if windows == 1:
                    assert count >= N - BURST, (kind, count)
                assert len(lines_of(gw, kind)) <= BURST * (windows + 1), (kind, lines_of(gw, kind))
            n = holder.bytes
            wait_until(lambda: holder.bytes > n, what="the slot holder still served")
            assert not holder.closed
            holder.close()
            u.close()
            F.assert_clean_exit(gw)
        except Exception:
            print(gw.log()[-5000:])
            raise
    print("OK")


if __name__ == "__main__":
    main()
