"""Integration (issue 22 item 14, P4/P12): a stale LESS UDP packet applies nothing, whatever its
message types, also after the 8-bit sequence number has wrapped.

G binds UDP; this script is its signing peer. It introduces "probe" (id 42) and "ghost" (id 43),
removes both, introduces "probe" again, then sends 128 empty datagrams so that its sequence
number is 130 past the remove. Replayed byte for byte, the signed remove-entity of probe looks
126 packets *newer* in 8-bit serial arithmetic and the introduce of ghost 125 newer; both carry
old timestamps. Checked: neither applies (probe stays, ghost stays gone), both count as
stale_packets with a log line naming the peer, sequence and timestamps, and the ack window did
not move: the next fresh datagram is acknowledged and its update applied."""
import os
import socket
import sys
import tempfile
import time

from xgtest import Gateway
import test_less_session as ls
from test_less_udp_errors import parse_udp, udp_frame


def main():
    with tempfile.TemporaryDirectory() as tmp:
        keyfile = os.path.join(tmp, "k.hex")
        with open(keyfile, "w") as f:
            f.write(ls.KEY.hex())
        with Gateway(f"""
gateway: {{id: gw-st}}
adapters:
  - name: fed
    type: less
    mode: udp
    bind: "127.0.0.1:0"
    key_file: {keyfile}
    rate_hz: 30
""") as g:
            def counters():
                return next(a for a in g.get_json("/api/adapters")["adapters"]
                            if a["name"] == "fed")["counters"]
            port = int(ls.wait_for(lambda: next(a for a in g.get_json("/api/adapters")["adapters"]
                                                 if a["name"] == "fed")["peer"]).rsplit(":", 1)[1])
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            s.settimeout(2)
            dst = ("127.0.0.1", port)
            ts = [int(time.monotonic() * 1e6)]
            sent = {}

            def send(seq, msgs):
                ts[0] += 1000
                d = udp_frame(seq & 0xFF, 255, 0, ts[0], msgs)
                sent[seq] = d
                s.sendto(d, dst)

            def recv_until(pred, what):
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline:
                    f = parse_udp(s.recvfrom(65536)[0])
                    if pred(f):
                        return f
                raise AssertionError(f"timed out waiting for {what}")

            def ents():
                return ls.entities(g)

            pose = {2: [0.5, 1.5, -0.5], 3: [0, 0, 0], 4: [0, 0, 0, 1]}
            send(0, [ls.msg_cc("stale-peer session=1")])
            send(1, [ls.msg_introduce_type(7, ls.POSE_URI)])
            recv_until(lambda f: f[4] == [2], "G subscribes to our type")
            send(2, [ls.msg_introduce_entity(7, 42, {0: "probe", **pose})])
            send(3, [ls.msg_introduce_entity(7, 43, {0: "ghost", **pose})])
            ls.wait_for(lambda: {"fed/probe", "fed/ghost"} <= set(ents()), what="both entities")
            send(4, [ls.enc_int(5) + ls.enc_int(42)])  # remove-entity probe
            send(5, [ls.enc_int(5) + ls.enc_int(43)])  # remove-entity ghost
            ls.wait_for(lambda: not {"fed/probe", "fed/ghost"} & set(ents()), what="removals")
            send(6, [ls.msg_introduce_entity(7, 42, {0: "probe", **pose})])
            first = ls.wait_for(lambda: ents().get("fed/probe"), what="probe again")
            for seq in range(7, 135):
                send(seq, [])
            recv_until(lambda f: f[1] == 134, "ack of seq 134")
            assert counters()["stale_packets"] == 0, counters()
            # the replays: 130 and 131 packets old, serially "ahead" by 126 and 125
            s.sendto(sent[4], dst)
            s.sendto(sent[3], dst)
            # something observable after them: a fresh update of probe
            send(135, [ls.msg_update(42, {2: [2.0, 1.5, -0.5], 3: [0, 0, 0]})])
            ls.wait_for(lambda: ents().get("fed/probe", first)["position"] != first["position"],
                        what="the fresh update after the replays applied")
            recv_until(lambda f: f[1] == 135, "ack of seq 135 (the window did not move)")
            e = ents()
            assert "fed/probe" in e and "fed/ghost" not in e, sorted(e)
            c = counters()
            assert c["stale_packets"] == 2, c
            line = ls.log_line(g, "packet 4 dropped: timestamp", "stale, P12")
            assert "127.0.0.1:" in line and "is not newer than the packets before it" in line, line
            print(f"stale replays after the wrap: not applied ({sorted(e)}), "
                  f"stale_packets {c['stale_packets']:.0f}; {line.split('] ', 1)[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
