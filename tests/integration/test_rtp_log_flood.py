"""Integration (issue 22 item 15, RTP part): bad RTP from many source ports cannot flood the log.

Loopback UDP is not lossless under load: the test keeps at most 5 datagrams in flight.

Before, `rtp` logged the first drop per (peer address, reason) in full, in 64 slots: a sender
changing its source port got one line per port. Now one rate limiter per reason: 1,000
truncated packets from 200 sockets (5 each) are all counted (drop_truncated) and print at most
XG_LOG_LIMIT_BURST (5) lines per 10 s window; the next window's first line carries the
suppressed count, and printed + suppressed account for all of them. A valid sender's objects keep
being applied in between."""
import re
import sys
import time

from xgtest import Gateway, wait_until
import test_rtp as t

BURST = 5
SUMMARY = r"\((\d+) similar lines suppressed in the last \d+ s\)"


def main():
    t.require_rtp()
    with Gateway("""
adapters:
  - name: rx
    type: rtp
    bind: "127.0.0.1:0"
    refresh_ms: 0
    rtcp_interval_ms: 0
""") as g:
        def c():
            return g.adapter("rx")["counters"]

        dst = ("127.0.0.1", g.port_of("rx"))
        good = t.udp()
        seq = [0]

        def send_good():
            seq[0] += 1
            t1 = (time.time_ns() // 1_000_000) & 0xFFFF
            good.sendto(t.rtp(98, seq[0], seq[0] * 3000, 0x0A0B0C0D,
                              t.head1(1, t1, (0, 1.6, 0), (0, 0, 0), (0, 0, 0), (0, 0, 0))), dst)

        def lines():
            return [l for l in list(g.lines) if "drop_truncated" in l]

        def account(ls_):
            return len(ls_) + sum(int(m.group(1)) for m in (re.search(SUMMARY, l) for l in ls_)
                                  if m)

        t0 = time.monotonic()
        sent = 0
        for k in range(200):
            s = t.udp()  # a new source port each time
            for _ in range(5):
                s.sendto(b"\x80\x62", dst)
            sent += 5
            s.close()
            # at most 5 datagrams in flight: a burst of hundreds can overflow the receive
            # buffer of a loaded CI runner, and the kernel, not xrgate, would drop them
            wait_until(lambda: c()["drop_truncated"] >= sent,
                       what=f"{sent} truncated packets counted", every=0.002)
            if k % 20 == 19:
                before = c()["objects_in"]
                send_good()
                wait_until(lambda: c()["objects_in"] != before and c()["drop_truncated"] >= sent,
                           what=f"the good packet after {sent} truncated ones", every=0.005)
        assert c()["drop_truncated"] == 1000, c()
        # the log is read by a thread: a line can trail its counter
        wait_until(lines, what="a drop_truncated line")
        assert 1 <= len(lines()) <= BURST * (2 + int((time.monotonic() - t0) // 10)), lines()
        # later windows: one more every 0.25 s until the summaries account for all 1,000
        deadline = time.monotonic() + 25
        while account(lines()) < 1000:
            assert time.monotonic() < deadline, lines()
            t.udp().sendto(b"\x80\x62", dst)
            time.sleep(0.25)
        ls_ = lines()
        assert len(ls_) <= BURST * (2 + int((time.monotonic() - t0) // 10)), ls_
        assert any(re.search(SUMMARY, l) for l in ls_), ls_
        assert "peer 127.0.0.1:" in ls_[0] and "shorter than the 12-byte header" in ls_[0], ls_[0]
        print(f"1000 truncated packets from 200 ports -> {len(ls_)} lines, "
              f"{account(ls_) - len(ls_)} suppressed; valid objects applied {c()['objects_in']:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
