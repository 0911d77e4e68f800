"""One slow-client policy for every TCP server adapter (core/net/transport_server.h, docs/reliability.md
"Slow clients"): vrpn-server, rgmp-server and less `mode: listen` behave the same.

synth (20 bodies + head and hands, 100 Hz) feeds a vrpn-server, an rgmp-server and a LESS listen
adapter, each with max_output_bytes 16384 and slow_timeout_ms 1500 (one tick's output is far below
the bound). On each server a reading client streams throughout and a second client completes its
session, then stops reading (4 KiB receive buffer). Expected on every server:
  - the slow client is skipped first (drains_skipped > 0, and the adapter's own per-item counter:
    reports_skipped / data_frames_skipped / updates_skipped);
  - then it is dropped once it stayed above the bound for slow_timeout_ms: clients_dropped_slow 1,
    and exactly one line "<client|peer> 127.0.0.1:<its port>: N bytes unsent for more than 1500 ms
    (max_output_bytes 16384): dropping the slow <client|peer>" with N above 16384;
  - the reading client keeps streaming after the drop and is never closed (clients 1).
A second part shows the catch-up half of the rule on LESS (rgmp-server's and vrpn-server's are in
test_rgmp_server.py slow_client and test_vrpn_server_stall.py): a peer that stops reading while its
updates are skipped, then reads again, gets the newest state of the entities it missed
(updates_skipped, updates_coalesced) and stays connected."""
import os
import re
import socket
import sys
import tempfile
import threading

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402
import test_less_session as L  # noqa: E402
from xgtest import Gateway, wait_until  # noqa: E402

MAX_OUT = 16384
SLOW_MS = 1500

CONFIG = """
gateway:
  entity: {{stale_ms: 60000, expire_ms: 120000}}
adapters:
  - {{name: demo, type: synth, bodies: 20, rate_hz: 100}}
  - {{name: vs, type: vrpn-server, listen: "127.0.0.1:0", rate_hz: 100,
     max_output_bytes: {max_out}, slow_timeout_ms: {slow}}}
  - {{name: rg, type: rgmp-server, listen: "127.0.0.1:0", rate_hz: 100,
     max_output_bytes: {max_out}, slow_timeout_ms: {slow}}}
  - {{name: ls, type: less, mode: listen, listen: "127.0.0.1:0", key_file: {key},
     rate_hz: 100, max_output_bytes: {max_out}, slow_timeout_ms: {slow}}}
"""


class LessClient(L.Peer):
    """test_less_session's raw LESS peer with an optional small receive buffer."""

    def __init__(self, port, rcvbuf=None):
        connect = socket.create_connection

        def small_buffer(addr, timeout=None):  # the buffer must be set before connecting
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            s.settimeout(timeout)
            s.connect(addr)
            return s
        if rcvbuf:
            socket.create_connection = small_buffer
        try:
            super().__init__(port)
        finally:
            socket.create_connection = connect
        self.updates = 0
        self.packets = 0  # every packet read, the handshake's too
        self.closed_by_gw = False
        self.stop_ev = threading.Event()

    def read_packet(self, timeout=5.0):
        ok = super().read_packet(timeout)
        self.packets += bool(ok)
        return ok

    def stream(self):
        """Read (in a thread) until stopped, counting update-entity messages."""
        def run():
            while not self.stop_ev.is_set():
                try:
                    if not self.read_packet(0.5):
                        self.closed_by_gw = True
                        return
                except socket.timeout:
                    continue
                except OSError:
                    if self.stop_ev.is_set():  # close() while this thread was in recv
                        return
                    raise
                self.updates += sum(1 for c, _ in self.msgs if c == 6)
                del self.msgs[:]
        threading.Thread(target=run, daemon=True).start()

    def close(self):
        self.stop_ev.set()
        self.s.close()


def drop_line(gw, name, noun, port):
    rx = re.compile(rf"\[{name}\] {noun} 127\.0\.0\.1:{port}: (\d+) bytes unsent for more than "
                    rf"{SLOW_MS} ms \(max_output_bytes {MAX_OUT}\): dropping the slow {noun}$")
    return [m for m in (rx.search(l) for l in gw.lines) if m]


def check_server(gw, name, noun, item_counter, good_progress, good_closed, slow_port):
    c = wait_until(lambda: (lambda c: c["clients_dropped_slow"] == 1 and c)(gw.counters(name)),
                   timeout=30, what=f"{name}: the slow {noun} dropped")
    # skipped before it was dropped (a timeout drop needs skipped drains first)
    assert c["drains_skipped"] > 0 and c[item_counter] > 0, c
    lines = wait_until(lambda: drop_line(gw, name, noun, slow_port), what=f"{name}: drop line")
    assert len(lines) == 1 and int(lines[0].group(1)) > MAX_OUT, [m.group(0) for m in lines]
    # the reading client keeps streaming after the drop
    before = good_progress()
    wait_until(lambda: good_progress() > before + 50, what=f"{name}: the reading {noun} streams")
    c = gw.counters(name)
    assert not good_closed() and c["clients_dropped_slow"] == 1, c
    assert c["clients_accepted"] == 2 and c["clients_refused"] == 0, c
    print(f"  {name}: skipped ({c['drains_skipped']} drains, {item_counter} "
          f"{c[item_counter]}), then dropped: {lines[0].group(0).split('] ', 1)[1]}")


def main():
    F.require_adapters("synth", "vrpn-server", "rgmp-server", "less")
    with tempfile.TemporaryDirectory(prefix="xrgate-slow-") as tmp:
        key = os.path.join(tmp, "k.hex")
        with open(key, "w") as f:
            f.write(L.KEY.hex())
        with Gateway(CONFIG.format(max_out=MAX_OUT, slow=SLOW_MS, key=key)) as gw:
            wait_until(lambda: all(gw.adapter(n)["state"] == "listening"
                                   for n in ("vs", "rg", "ls")), what="servers listening")
            good_v = F.VrpnReader(F.port_of(gw, "vs"))
            good_r = F.RgmpReader(F.port_of(gw, "rg"))
            good_l = LessClient(F.port_of(gw, "ls"))
            good_l.handshake()
            good_l.stream()
            slow_v = F.VrpnReader(F.port_of(gw, "vs"), read=False, rcvbuf=4096)
            slow_r = F.RgmpReader(F.port_of(gw, "rg"), read=False, rcvbuf=4096)
            slow_l = LessClient(F.port_of(gw, "ls"), rcvbuf=4096)
            slow_l.handshake()  # a complete session, then no more reading
            check_server(gw, "vs", "client", "reports_skipped", lambda: good_v.bytes,
                         lambda: good_v.closed, slow_v.s.getsockname()[1])
            check_server(gw, "rg", "client", "data_frames_skipped",
                         lambda: good_r.frames[2], lambda: good_r.closed,
                         slow_r.s.getsockname()[1])
            check_server(gw, "ls", "peer", "updates_skipped", lambda: good_l.updates,
                         lambda: good_l.closed_by_gw, slow_l.s.getsockname()[1])
            c = gw.counters("ls")
            assert c["slow_peer_drops"] == 1, c  # LESS's own name for the same drop
            for cl in (good_v, good_r, good_l, slow_v, slow_r, slow_l):
                cl.close()
        catch_up(key)
    print("slow clients: the same skip-then-drop policy on vrpn-server, rgmp-server and LESS")


def catch_up(key):
    """A LESS peer whose updates were skipped is served again once it reads: it is not dropped
    (slow_timeout_ms long), its drains stop being skipped, updates flow."""
    cfg = CONFIG.format(max_out=MAX_OUT, slow=600000, key=key)
    with Gateway(cfg) as gw:
        wait_until(lambda: gw.adapter("ls")["state"] == "listening", what="listening")
        p = LessClient(F.port_of(gw, "ls"), rcvbuf=4096)
        p.handshake()
        wait_until(lambda: gw.counters("ls")["updates_coalesced"] > 100, timeout=30,
                   what="updates skipped and coalesced for the stalled peer")
        c0 = gw.counters("ls")
        assert c0["drains_skipped"] > 0 and c0["updates_skipped"] > c0["updates_coalesced"], c0
        p.stream()  # read again
        wait_until(lambda: p.updates > 500, timeout=20, what="updates after the stall")
        # the backlog of the stall first: the kernel's send buffer on loopback holds megabytes
        # (the gateway hands its bytes to the kernel from each drain), and until the peer has
        # read them the gateway's own queue stays above max_output_bytes; every packet sent
        # up to now has arrived once it is read
        sent = gw.counters("ls")["packets_out"]
        wait_until(lambda: p.packets >= sent, timeout=20, what="the stall's backlog read")
        skipped = gw.counters("ls")["drains_skipped"]
        n = p.updates
        wait_until(lambda: p.updates > n + 500, timeout=20, what="more updates")
        c = gw.counters("ls")
        assert c["drains_skipped"] == skipped, (skipped, c)  # served again, not skipped
        assert c["clients_dropped_slow"] == 0 and c["peers"] == 1 and not p.closed_by_gw, c
        print(f"  ls catch-up: {c['updates_skipped']} updates skipped, "
              f"{c['updates_coalesced']} coalesced, then served again")
        p.close()


if __name__ == "__main__":
    main()
