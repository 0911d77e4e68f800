"""Integration (issue 22 item 15): a flood of bad input cannot flood the log.

One gateway, two LESS adapters: `fed` (UDP) whose peer is this script, and `hub` (TCP listen,
max_peers 1) holding one real session (ls.Peer). Then:
  - 5,000 datagrams with a bad signature from the UDP peer's own address;
  - 2,000 TCP connections to `hub`, each refused (max_peers).
Checked: both are counted in full (bad_signature, refused_peers); each kind prints at most
XG_LOG_LIMIT_BURST (5) lines per 10 s window it spans; the first line of a later window carries
the suppressed-count summary, and printed + suppressed lines account for the whole flood; the
valid peers keep working meanwhile (the UDP peer's updates apply between the batches, the TCP
session keeps receiving updates)."""
import re
import socket
import sys
import tempfile
import time

from xgtest import Gateway, wait_until
import lesstest
import test_less_session as ls

BURST = 5  # XG_LOG_LIMIT_BURST


def main():
    with tempfile.TemporaryDirectory() as tmp:
        keyfile = lesstest.write_key(tmp)
        with Gateway(f"""
gateway: {{id: gw-flood}}
adapters:
  - {{name: demo, type: synth, bodies: 0}}
  - name: hub
    type: less
    mode: listen
    listen: "127.0.0.1:0"
    key_file: {keyfile}
    max_peers: 1
    rate_hz: 30
  - name: fed
    type: less
    mode: udp
    bind: "127.0.0.1:0"
    key_file: {keyfile}
    rate_hz: 30
""") as g:
            def adapter(name):
                return g.adapters()[name]

            def lines(*words):
                return [l for l in list(g.lines) if all(w in l for w in words)]

            hub = g.port_of("hub")
            p1 = ls.Peer(hub)
            p1.handshake()
            peer = lesstest.UdpPeer(g, "fed")
            seq = [0]

            def send(msgs, key=ls.KEY):
                peer.send(seq[0], msgs, key)
                if key == ls.KEY:
                    seq[0] += 1

            send([ls.msg_cc("flood-peer session=1")])
            send([ls.msg_introduce_type(7, ls.POSE_URI)])
            wait_until(lambda: adapter("fed")["counters"]["packets_out"] > 0, what="G talks")
            send([ls.msg_introduce_entity(7, 42, {0: "probe", 2: [0, 0, 0], 3: [0, 0, 0],
                                                  4: [0, 0, 0, 1]})])
            wait_until(lambda: "fed/probe" in g.entities(), what="probe")

            # 5,000 bad signatures, in batches; the valid peer's update applies after each
            t_udp = time.monotonic()
            bad, batch = 0, 20  # 20 in flight at most: a loaded runner's receive buffer holds them
            for b in range(1, 5000 // batch + 1):
                for _ in range(batch):
                    send([ls.msg_update(42, {2: [9, 9, 9], 3: [0, 0, 0]})], key=b"\x02" * 32)
                bad += batch
                send([ls.msg_update(42, {2: [float(b), 0, 0], 3: [0, 0, 0]})])
                wait_until(lambda: adapter("fed")["counters"]["bad_signature"] == bad,
                            what=f"{bad} bad signatures counted")
                wait_until(lambda: abs(g.entities()["fed/probe"]["position"][0] - b) < 1e-6,
                            what=f"valid update {b} applied")
            t_udp_end = time.monotonic()

            # 2,000 refused connections; the TCP session keeps streaming meanwhile
            t_tcp = time.monotonic()
            refused = 0
            for _ in range(10):
                for _ in range(200):
                    c = socket.create_connection(("127.0.0.1", hub))
                    c.close()
                refused += 200
                wait_until(lambda: adapter("hub")["counters"]["refused_peers"] == refused,
                            what=f"{refused} refusals counted")
                n6 = sum(1 for c, _ in p1.msgs if c == 6)
                p1.until(lambda: sum(1 for c, _ in p1.msgs if c == 6) > n6, what="updates")
            t_tcp_end = time.monotonic()

            # later windows: one more of each every 0.25 s until the summaries account for the
            # whole flood (printed + suppressed; a flood outlasting one window needs two)
            summary = r"\((\d+) similar lines suppressed in the last \d+ s\)"

            def account(ls_):
                return len(ls_) + sum(int(m.group(1)) for m in
                                      (re.search(summary, l) for l in ls_) if m)

            deadline = time.monotonic() + 35
            while True:
                udp = lines("[fed]", "datagram from 127.0.0.1:", "dropped")
                ref = lines("[hub]", "refused: max_peers (1) reached")
                if account(udp) >= 5000 and account(ref) >= 2000:
                    break
                assert time.monotonic() < deadline, ("not accounted", udp, ref)
                send([ls.msg_update(42, {2: [9, 9, 9], 3: [0, 0, 0]})], key=b"\x02" * 32)
                socket.create_connection(("127.0.0.1", hub)).close()
                time.sleep(0.25)
            t_end = time.monotonic()
            for what, ls_, t0 in (("bad signatures", udp, t_udp), ("refusals", ref, t_tcp)):
                windows = 1 + int((t_end - t0) // 10) + 1
                assert 1 <= len(ls_) <= BURST * windows, (what, windows, ls_)
                assert any(re.search(summary, l) for l in ls_), (what, ls_)
            nu, nr = account(udp) - len(udp), account(ref) - len(ref)
            # still working
            send([ls.msg_update(42, {2: [-1.0, 0, 0], 3: [0, 0, 0]})])
            wait_until(lambda: abs(g.entities()["fed/probe"]["position"][0] + 1) < 1e-6,
                        what="valid update after the floods")
            n6 = sum(1 for c, _ in p1.msgs if c == 6)
            p1.until(lambda: sum(1 for c, _ in p1.msgs if c == 6) > n6, what="updates")
            print(f"5000 bad signatures in {t_udp_end - t_udp:.1f} s -> {len(udp)} lines "
                  f"(summaries: {nu} suppressed); 2000 refused connections in "
                  f"{t_tcp_end - t_tcp:.1f} s -> {len(ref)} lines (summaries: {nr} suppressed)")
            peer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
