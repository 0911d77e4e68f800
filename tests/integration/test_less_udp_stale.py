"""Integration (issue 22 item 14, P4/P12): a stale LESS UDP packet applies nothing, whatever its
message types, also after the 8-bit sequence number has wrapped.

G binds UDP; this script is its signing peer. It introduces "probe" (id 42) and "ghost" (id 43),
removes both, introduces "probe" again, then sends 128 empty datagrams so that its sequence
number is 130 past the remove. Replayed byte for byte, the signed remove-entity of probe looks
126 packets *newer* in 8-bit serial arithmetic and the introduce of ghost 125 newer; both carry
old timestamps. Checked: neither applies (probe stays, ghost stays gone), both count as
stale_packets with a log line naming the peer, sequence and timestamps, and the ack window did
not move: the next fresh datagram is acknowledged and its update applied."""
import sys
import tempfile

from xgtest import Gateway, wait_until
import lesstest
import test_less_session as ls


def main():
    with tempfile.TemporaryDirectory() as tmp:
        keyfile = lesstest.write_key(tmp)
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
                return g.counters("fed")
            peer = lesstest.UdpPeer(g, "fed")
            send, recv_until, sent = peer.send, peer.recv_until, peer.sent

            def ents():
                return g.entities()

            pose = {2: [0.5, 1.5, -0.5], 3: [0, 0, 0], 4: [0, 0, 0, 1]}
            send(0, [ls.msg_cc("stale-peer session=1")])
            send(1, [ls.msg_introduce_type(7, ls.POSE_URI)])
            recv_until(lambda f: f[4] == [2], "G subscribes to our type")
            send(2, [ls.msg_introduce_entity(7, 42, {0: "probe", **pose})])
            send(3, [ls.msg_introduce_entity(7, 43, {0: "ghost", **pose})])
            wait_until(lambda: {"fed/probe", "fed/ghost"} <= set(ents()), what="both entities")
            send(4, [ls.enc_int(5) + ls.enc_int(42)])  # remove-entity probe
            send(5, [ls.enc_int(5) + ls.enc_int(43)])  # remove-entity ghost
            wait_until(lambda: not {"fed/probe", "fed/ghost"} & set(ents()), what="removals")
            send(6, [ls.msg_introduce_entity(7, 42, {0: "probe", **pose})])
            first = wait_until(lambda: ents().get("fed/probe"), what="probe again")
            for seq in range(7, 135):
                send(seq, [])
            recv_until(lambda f: f[1] == 134, "ack of seq 134")
            assert counters()["stale_packets"] == 0, counters()
            # the replays: 130 and 131 packets old, serially "ahead" by 126 and 125
            peer.resend(sent[4])
            peer.resend(sent[3])
            # something observable after them: a fresh update of probe
            send(135, [ls.msg_update(42, {2: [2.0, 1.5, -0.5], 3: [0, 0, 0]})])
            wait_until(lambda: ents().get("fed/probe", first)["position"] != first["position"],
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
            peer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
