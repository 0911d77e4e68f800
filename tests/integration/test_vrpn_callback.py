"""Integration: vrpn-server UDP+TCP call-backs under hostile connection requests (issue 22 items 11,
12; wire-rules.md §6.3).

- Names are never resolved (a resolver call on the reactor froze the gateway for a black-hole
  name): "localhost <port>" and "blackhole.invalid <port>" each get one log line naming the
  sender and the name, are counted (`requests_not_numeric`) and nobody is called back; a numeric
  request sent afterwards is called back. A client's UDP_DESCRIPTION naming a host closes that
  connection with one line.
- Self-calls are refused: a request naming the server's own port on its listen address in any
  spelling (127.0.0.1, 127.1, 2130706433) or on another local address (0.0.0.0, 127.0.0.2) takes
  no slot (`requests_self`, `clients` stays at the one real session).
- Duplicates by resolved address: "127.0.0.1 P", "127.1 P", "2130706433 P" make one call-back;
  a request for an address already connected is ignored too (`requests_duplicate`).
- Call-backs not streaming yet hold at most half of `max_clients`: a further request is refused
  and counted, and a TCP client still gets a slot.
- A pending call-back or a client trickling its cookie holds its slot at most
  `handshake_timeout_ms` (here 1000 ms), then is closed with one line and counted.
Every "nothing happened" is checked after a later request was observably served."""
import os
import socket
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xgtest import Gateway, time_bound, wait_until  # noqa: E402
from test_vrpn_server import COOKIE, Client, msg, server_port  # noqa: E402

CONFIG = """
adapters:
  - name: demo
    type: synth
    rate_hz: 5
    bodies: 1
{servers}
"""
SERVER = """  - name: {name}
    type: vrpn-server
    listen: "127.0.0.1:0"
    rate_hz: 20
    max_clients: 8
    handshake_timeout_ms: {hs}
"""


class Listener:
    """A TCP listen socket standing for a VRPN client's call-back port."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.accepted = []

    def accept(self, timeout=5.0):
        self.sock.settimeout(timeout)
        c, _ = self.sock.accept()
        self.accepted.append(c)
        return c

    def pending(self):
        """True if a connection is waiting to be accepted (does not block)."""
        self.sock.settimeout(0)
        try:
            c, _ = self.sock.accept()
        except (BlockingIOError, socket.timeout):
            return False
        self.accepted.append(c)
        return True

    def close(self):
        for c in self.accepted:
            c.close()
        self.sock.close()


class Requester:
    """A UDP socket sending connection requests "<host> <port>\\0"."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.peer = f"127.0.0.1:{self.sock.getsockname()[1]}"

    def send(self, text, server):
        self.sock.sendto(text.encode() + b"\0", ("127.0.0.1", server))

    def close(self):
        self.sock.close()


def marker(gw, name, server, req):
    """A numeric request for a fresh listener, waited on until it is called back: everything
    sent before it has been handled."""
    lis = Listener()
    n = gw.counters(name)["callbacks"]
    req.send(f"127.0.0.1 {lis.port}", server)
    lis.accept()
    wait_until(lambda: gw.counters(name)["callbacks"] == n + 1, what="marker call-back counted")
    return lis


def names_not_resolved(gw):
    port = server_port(gw, "names")
    lis, req = Listener(), Requester()
    t0 = time.monotonic()
    req.send(f"localhost {lis.port}", port)
    req.send(f"blackhole.invalid {lis.port}", port)
    st, _, _ = gw.get("/healthz")
    # a resolver in the event loop would hold it for its timeout (seconds); answered within half
    # a second, scaled for load and the build (xgtest.time_bound)
    took = time.monotonic() - t0
    assert st == 200 and took < time_bound(0.5), f"healthz took {took:.1f} s after name requests"
    m = marker(gw, "names", port, req)
    assert not lis.pending(), "a request naming 'localhost' was called back"
    n = gw.counters("names")
    assert n["requests_not_numeric"] == 2 and n["callbacks"] == 1, n
    for host in ("localhost", "blackhole.invalid"):
        line = (f"connection request from {req.peer}: call-back host '{host}' is not a numeric "
                "IPv4 address (names are not resolved): ignored")
        assert gw.wait_log(line), (host, gw.log()[-3000:])
        assert sum(line in ln for ln in gw.lines) == 1, (host, gw.log()[-3000:])
    m.close()
    lis.close()
    req.close()
    print("names in connection requests: not resolved, one line each, ignored")


def udp_description_name(gw):
    """A client's UDP_DESCRIPTION naming a host instead of an address closes that connection with
    one line; the name is not resolved."""
    port = server_port(gw, "names")
    s = socket.create_connection(("127.0.0.1", port))
    peer = f"127.0.0.1:{s.getsockname()[1]}"
    s.sendall(COOKIE + msg(5000, -3, b"localhost\0"))
    s.settimeout(5)
    try:
        while s.recv(65536):
            pass
    except ConnectionResetError:
        pass
    s.close()
    assert gw.wait_log(f"client {peer}: UDP description: host 'localhost' is not a numeric IPv4 "
                       "address; closing the connection"), gw.log()[-2000:]
    print("UDP description naming a host: closed, not resolved")


def no_self_calls(gw):
    port = server_port(gw, "self")
    req = Requester()
    spellings = ["127.0.0.1", "127.1", "2130706433", "0.0.0.0", "127.0.0.2"]
    for host in spellings:
        req.send(f"{host} {port}", port)
    m = marker(gw, "self", port, req)
    n = gw.counters("self")
    assert n["callbacks"] == 1 and n["clients"] == 1 and n["clients_accepted"] == 0, n
    assert n["requests_self"] == len(spellings), n
    for host in spellings:
        wait_until(lambda: any(f"connection request from {req.peer}: call-back " in ln and
                             f"('{host}') is this server itself: ignored" in ln
                             for ln in list(gw.lines)), what=f"self-call line for {host}")
    m.close()
    wait_until(lambda: gw.counters("self")["clients"] == 0, what="marker session closed")
    req.close()
    print("self-calls in 5 spellings: refused, no slot taken")


def duplicates(gw):
    port = server_port(gw, "dup")
    lis, req = Listener(), Requester()
    for host in ("127.0.0.1", "127.1", "2130706433"):
        req.send(f"{host} {lis.port}", port)
    first = lis.accept()
    first.sendall(COOKIE)  # the session is connected (and stays so)
    req.send(f"127.1 {lis.port}", port)  # already connected: ignored
    m = marker(gw, "dup", port, req)
    assert not lis.pending(), "a duplicate request was called back"
    n = gw.counters("dup")
    assert n["requests_duplicate"] == 3 and n["callbacks"] == 2, n
    m.close()
    lis.close()
    req.close()
    print("duplicate requests by resolved address: one call-back")


def pending_capped(gw):
    """Call-backs that are not streaming yet may hold at most half of max_clients (4 -> 2): a third
    request is refused, and a TCP client still gets a slot."""
    port = server_port(gw, "cap")
    lis = [Listener() for _ in range(3)]  # the kernel accepts; nobody answers the cookie
    req = Requester()
    for x in lis[:2]:
        req.send(f"127.0.0.1 {x.port}", port)
    wait_until(lambda: gw.counters("cap")["callbacks"] == 2, what="two call-backs")
    req.send(f"127.0.0.1 {lis[2].port}", port)
    wait_until(lambda: gw.counters("cap")["clients_refused"] == 1, what="third request refused")
    assert gw.wait_log(f"connection request from {req.peer} (call back 127.0.0.1:{lis[2].port}) "
                       "refused: pending call-backs (2) reached")
    c = Client(port, "tcp")
    c.until(lambda: c.latest("demo", "pq"), what="a TCP client served besides the pending two")
    n = gw.counters("cap")
    assert n["callbacks"] == 2 and n["clients"] == 3 and n["clients_accepted"] == 1, n
    assert not lis[2].pending(), "called back past the pending cap"
    c.close()
    for x in lis:
        x.close()
    req.close()
    wait_until(lambda: gw.counters("cap")["clients"] == 0, what="pending call-backs closed")
    print("pending call-backs capped at half of max_clients")


def handshake_bounded(gw):
    """A call-back that is accepted but never answered, and one that trickles its cookie a byte
    at a time, each hold their slot for handshake_timeout_ms (1 s), not longer."""
    port = server_port(gw, "pending")
    lis, req = Listener(), Requester()
    req.send(f"127.0.0.1 {lis.port}", port)
    silent = lis.accept()
    wait_until(lambda: gw.counters("pending")["clients"] == 1, what="pending session")
    tr = socket.create_connection(("127.0.0.1", port))
    peer = f"127.0.0.1:{tr.getsockname()[1]}"
    t0 = time.monotonic()
    i = 0
    limit = time_bound(1.0)  # handshake_timeout_ms (1 s), scaled for load and the build
    while gw.counters("pending")["clients"] and time.monotonic() - t0 < limit + 5:
        if i < len(COOKIE) - 1:  # never the whole cookie
            try:
                tr.send(COOKIE[i:i + 1])
            except OSError:
                break
            i += 1
        time.sleep(0.1)  # the trickle's pace, not a wait for the gateway
    assert gw.counters("pending")["clients"] == 0, f"sessions still pending after {limit + 5} s"
    assert time.monotonic() - t0 < limit, f"held {time.monotonic() - t0:.1f} s (bound {limit} s)"
    n = gw.counters("pending")
    assert n["bad_input"] == 2, n  # the silent call-back and the trickler: no cookie in time
    assert gw.wait_log(f"client {peer}: no VRPN cookie within 1000 ms; closing the connection")
    assert gw.wait_log(f"client 127.0.0.1:{lis.port}: no VRPN cookie within 1000 ms")
    silent.close()
    tr.close()
    lis.close()
    req.close()
    print("pending call-back and trickled cookie: closed after handshake_timeout_ms")


def main():
    servers = "".join(SERVER.format(name=n, hs=1000 if n == "pending" else 10000)
                      for n in ("names", "self", "dup", "pending"))
    servers += SERVER.format(name="cap", hs=10000).replace("max_clients: 8", "max_clients: 4")
    with Gateway(CONFIG.format(servers=servers)) as gw:
        try:
            names_not_resolved(gw)
            udp_description_name(gw)
            no_self_calls(gw)
            duplicates(gw)
            pending_capped(gw)
            handshake_bounded(gw)
        except Exception:
            print(gw.log()[-6000:])
            raise
    print("OK")


if __name__ == "__main__":
    main()
