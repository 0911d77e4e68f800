"""Integration (issue 6): LESS over UDP through a lossy relay.

Gateway A (synth) and gateway B exchange LESS datagrams through a relay in this script that
drops every k-th datagram in each direction (k = 3, 5, 7), holds back some datagrams and sends
them after the next one (reordering), and — for k = 5 — injects corrupted copies. Checked:
  - B ends up with all of A's entities (introductions survive loss: re-sent until acked) and
    their poses are A's: B's newest sample at its capture time T against A's history at T,
    within |v|·(50 ms + two of A's sample intervals) + 1 cm (B's clock-offset estimate and A's
    prediction to the send time; see run());
  - A re-sent lost packets (counter `resends`), B acknowledged/ignored duplicates and stale
    (reordered) packets, and corrupted datagrams were dropped and counted (`bad_signature`)
    without disturbing the session;
  - fast re-send (P13: lost = a later packet was acknowledged first): the relay reads each of A's
    datagrams' sequence number and timestamp (A's own clock, the one its 250 ms loss timeout
    runs on) and sees a re-send of a sequence number less than 200 ms after A sent it before:
    the timeout alone can never do that (its re-sends come >= 250 ms apart on that clock), so
    the test fails without fast re-send, whatever the load on the machine;
  - every datagram the relay saw was at most the configured MTU (400 bytes here);
  - A's datagrams left batched: at most one sendmmsg call (`udp_sends`) per datagram (fewer
    when a flush holds several; test_rtp_batch proves the batching itself)."""
import math
import select
import socket
import sys
import tempfile
import threading

from xgtest import Gateway, wait_until
import lesstest
import test_less_session as ls

KEY = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
MTU = 400


class Relay:
    """Two UDP sockets: `ra` faces A (A's peer), `rb` faces B (B's peer)."""

    def __init__(self, k, reorder_every=4, corrupt_every=0):
        self.k, self.reorder_every, self.corrupt_every = k, reorder_every, corrupt_every
        self.ra = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.rb = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.ra.bind(("127.0.0.1", 0))
        self.rb.bind(("127.0.0.1", 0))
        self.a_addr = self.b_addr = None
        self.count = {self.ra: 0, self.rb: 0}
        self.dropped = {self.ra: 0, self.rb: 0}
        self.held = {self.ra: None, self.rb: None}
        self.reordered = 0
        self.corrupted = 0
        # A's datagrams: the newest new sequence number, each one's last timestamp (us, A's
        # clock) and the gaps between a re-send and the transmission before it
        self.top = None
        self.last_ts = {}
        self.resend_gaps = []
        self.max_len = 0
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)

    def start(self, a_addr, b_addr):
        self.a_addr, self.b_addr = a_addr, b_addr
        self.t.start()

    def run(self):
        while not self.stop:
            r, _, _ = select.select([self.ra, self.rb], [], [], 0.05)
            for s in r:
                data, _src = s.recvfrom(65536)
                self.max_len = max(self.max_len, len(data))
                if s is self.ra:
                    self.note_a(data)
                out, dst = (self.rb, self.b_addr) if s is self.ra else (self.ra, self.a_addr)
                self.count[s] += 1
                n = self.count[s]
                if n % self.k == 0:
                    self.dropped[s] += 1
                    continue
                if self.corrupt_every and n % self.corrupt_every == 1:
                    bad = bytearray(data)
                    bad[len(bad) // 2] ^= 0x40
                    out.sendto(bytes(bad), dst)
                    self.corrupted += 1
                if self.reorder_every and n % self.reorder_every == 2 and self.held[s] is None:
                    self.held[s] = data  # goes out after the next datagram
                    continue
                out.sendto(data, dst)
                if self.held[s] is not None:
                    out.sendto(self.held[s], dst)
                    self.held[s] = None
                    self.reordered += 1

    def note_a(self, d):
        """One of A's datagrams as A sent it (before any drop): `seq ack-last ack-bitmask`,
        the 8-byte signature, then the timestamp (us). A sequence number not ahead of the newest
        one (within half the 8-bit space) is a re-send of that packet."""
        seq = d[0]
        _mask, i = ls.dec_int(d, 2)
        ts, _ = ls.dec_int(d, i + 8)
        if self.top is None or 0 < (seq - self.top) % 256 < 128:
            self.top = seq
        elif seq in self.last_ts:
            self.resend_gaps.append(ts - self.last_ts[seq])
        self.last_ts[seq] = ts

    def fast_resends(self):
        """Re-sends less than 200 ms (A's clock) after the packet's previous transmission: only
        the fast rule makes those (the loss timeout is 250 ms on the same clock)."""
        return sum(1 for g in self.resend_gaps if g < 200_000)

    def close(self):
        self.stop = True
        self.t.join(1)
        self.ra.close()
        self.rb.close()


def bound(gw, name):
    return "127.0.0.1", gw.port_of(name)  # both adapters bind 127.0.0.1


def entity_at(gw, name, t_ns):
    return next(e for e in gw.get_json(f"/api/entities?t_ns={t_ns}")["entities"]
                if e["name"] == name)


def same_time(a, b, n):
    """(A's pose, B's pose) of entity n at the capture time T of B's newest sample (A and B share
    CLOCK_MONOTONIC, the clock of sample_ns and ?t_ns=): B EXACT at T, A from its history. How
    old B's newest sample is (lost datagrams, the relay thread and both daemons slowed by load)
    then does not matter. None when A's history (24 samples) no longer reaches back to T because
    this script was slow between the two requests: the caller asks again."""
    t = b.entities()[f"fed/demo/{n}"]["sample_ns"]
    pa = entity_at(a, f"demo/{n}", t)
    # PREDICTED when A has no newer sample yet (T within one synth interval)
    if pa["quality"] not in ("EXACT", "INTERPOLATED", "PREDICTED"):
        return None
    pb = entity_at(b, f"fed/demo/{n}", t)
    if pb["quality"] == "HELD":  # B's history overrun the same way
        return None
    assert pb["quality"] == "EXACT", (pb, t)
    return pa, pb


def run(k, keyfile):
    relay = Relay(k, corrupt_every=7 if k == 5 else 0)
    ra, rb = relay.ra.getsockname(), relay.rb.getsockname()
    # k = 7: B has no `peer:` and adopts the first sender whose signature verifies
    peer_line = "" if k == 7 else f'    peer: "{rb[0]}:{rb[1]}"'
    try:
        with Gateway(f"""
gateway: {{id: gw-b}}
adapters:
  - name: fed
    type: less
    mode: udp
    bind: "127.0.0.1:0"
{peer_line}
    key_file: {keyfile}
    mtu: {MTU}
    rate_hz: 60
""") as b, Gateway(f"""
gateway: {{id: gw-a}}
adapters:
  - name: demo
    type: synth
    bodies: 4
  - name: up
    type: less
    mode: udp
    bind: "127.0.0.1:0"
    peer: "{ra[0]}:{ra[1]}"
    key_file: {keyfile}
    mtu: {MTU}
    rate_hz: 60
""") as a:
            relay.start(bound(a, "up"), bound(b, "fed"))
            names = ["head", "left_hand", "right_hand"] + [f"body{i}" for i in range(4)]
            wait_until(lambda: all(f"fed/demo/{n}" in b.entities() for n in names),
                     what=f"k={k}: all of A's entities on B")
            # enough traffic through the lossy relay: drops both ways and A's resends seen
            wait_until(lambda: relay.dropped[relay.ra] > 5 and relay.dropped[relay.rb] > 5 and
                     a.adapter("up")["counters"]["resends"] > 0 and relay.fast_resends() > 0,
                     timeout=20, what=f"k={k}: drops both ways and resends, one of them fast "
                     f"(re-send gaps seen, us: {relay.resend_gaps[:20]})")
            worst = 0.0
            for _ in range(5):
                # the same capture time on both sides (same_time())
                for n in names:
                    pa, pb = wait_until(lambda: same_time(a, b, n), what=f"k={k}: {n} at one time")
                    # B stamps the sample with A's send time plus its offset estimate (the
                    # smallest transit seen in a 10 s window: under 1 ms on loopback, 50 ms
                    # allowed for a window in which every datagram was slow), and A sent its
                    # table's prediction from its newest synth sample (at most two of A's
                    # measured sample intervals old): the speed times those, plus 1 cm
                    speed = max(math.dist(pa["velocity"], [0, 0, 0]),
                                math.dist(pb["velocity"], [0, 0, 0]))
                    tol = speed * (0.05 + 2.0 / max(pa["rate_hz"], 1.0)) + 0.01
                    d = math.dist(pa["position"], pb["position"])
                    assert d <= tol, (k, n, d, tol, pa, pb, a.adapter("up")["counters"],
                                      b.adapter("fed")["counters"])
                    worst = max(worst, d)
                eb_now = b.entities()
                n0 = eb_now["fed/demo/head"]["samples"]  # the next comparison on newer samples
                wait_until(lambda: b.entities()["fed/demo/head"]["samples"] > n0 + 2,
                         what="newer samples on B")
            ca, cb = a.adapter("up")["counters"], b.adapter("fed")["counters"]
            assert relay.dropped[relay.ra] > 5 and relay.dropped[relay.rb] > 5, relay.dropped
            assert ca["resends"] > 0, ca
            assert relay.fast_resends() > 0, relay.resend_gaps
            assert min(relay.resend_gaps) >= 0, relay.resend_gaps
            # issue 19: a flush's datagrams (and the re-sends) leave in one sendmmsg call
            assert 0 < ca["udp_sends"] <= ca["packets_out"], ca
            assert cb["framing_errors"] == 0 and ca["framing_errors"] == 0, (ca, cb)
            if k == 7:
                ls = [l for l in b.lines if "UDP peer is" in l]
                assert ls and f"{rb[0]}:{rb[1]}" in ls[0], (rb, ls)
            if relay.corrupted:
                assert ca["bad_signature"] + cb["bad_signature"] > 0, (ca, cb)
                assert b.wait_log("dropped", 3) or a.wait_log("dropped", 3)
            assert relay.max_len <= MTU, relay.max_len
            # nothing from B echoes back to A
            assert sorted(a.entities()) == sorted(f"demo/{n}" for n in names)
            print(f"k={k}: converged (max {worst * 1000:.1f} mm), dropped "
                  f"{relay.dropped[relay.ra]}+{relay.dropped[relay.rb]}, reordered "
                  f"{relay.reordered}, corrupted {relay.corrupted}, A resends {ca['resends']:.0f} "
                  f"({relay.fast_resends()} of {len(relay.resend_gaps)} seen fast), "
                  f"B stale {cb['stale_packets']:.0f} dup {cb['duplicates']:.0f} "
                  f"bad sig {cb['bad_signature']:.0f}, largest datagram {relay.max_len} B, "
                  f"A {ca['packets_out']:.0f} datagrams in {ca['udp_sends']:.0f} sendmmsg calls")
            for g in (a, b):
                rc, _ = g.stop()
                log = g.log()
                assert rc == 0 and "Sanitizer" not in log and "runtime error" not in log, log[-3000:]
    finally:
        relay.close()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        keyfile = lesstest.write_key(tmp, KEY)
        for k in (3, 5, 7):
            run(k, keyfile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
