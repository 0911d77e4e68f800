"""Integration (issue 6, P12-P14): bad input on a LESS UDP adapter, from a byte-level peer.

G binds UDP without `peer:`; this script is the peer (codec from test_less_session.py, UDP
framing `seq ack-last ack-bitmask` + signed packet). Checked, through the ack fields of G's
datagrams and its counters:
  - the first authentic datagram makes us G's peer; G acknowledges our sequence numbers;
  - an authentic datagram that fails to parse (unknown message code) is acknowledged and
    dropped whole — the introduce-type before the bad message in it is not applied either;
  - a datagram with a bad signature is dropped and NOT acknowledged;
  - a datagram over the MTU is dropped and not acknowledged;
  - a stale datagram (timestamp not newer, arriving late) is acknowledged but not applied;
  - after all that the session still works: G introduces its entities to us;
  - a peer restart (connection-control with a new session token) makes G start over: the old
    session's entities leave the table, G's sequence numbers restart at 0."""
import sys
import tempfile

from xgtest import Gateway, wait_until
import lesstest
import test_less_session as ls


def main():
    with tempfile.TemporaryDirectory() as tmp:
        keyfile = lesstest.write_key(tmp)
        with Gateway(f"""
gateway: {{id: gw-u}}
adapters:
  - {{name: demo, type: synth, bodies: 1}}
  - name: fed
    type: less
    mode: udp
    bind: "127.0.0.1:0"
    key_file: {keyfile}
    mtu: 600
    rate_hz: 30
""") as g:
            def counters():
                return g.counters("fed")
            peer = lesstest.UdpPeer(g, "fed")
            send, recv_until, seen = peer.send, peer.recv_until, peer.seen

            send(0, [ls.msg_cc("test-peer session=1")])
            recv_until(lambda f: f[1] == 0, "ack of seq 0")
            # authentic but unparsable: acked, nothing in it applied
            send(1, [ls.msg_introduce_type(7, ls.POSE_URI), ls.enc_int(13)])
            recv_until(lambda f: f[1] == 1, "ack of seq 1")
            wait_until(lambda: counters()["framing_errors"] == 1, what="framing error counted")
            ls.log_line(g, "packet 1 dropped", "message code 13")
            # (checked below: G's subscription comes only in answer to the real seq 2)
            # bad signature: dropped, not acked
            send(2, [ls.msg_introduce_type(7, ls.POSE_URI)], key=b"\x02" * 32)
            wait_until(lambda: counters()["bad_signature"] == 1, what="bad signature counted")
            # over the MTU: dropped, not acked
            send(2, [ls.msg_introduce_type(7, ls.POSE_URI)], pad=700)
            ls.log_line(g, "exceeds the MTU 600")
            # G has processed it (logged): drop what G sent before; the next datagram is newer
            peer.drain()
            f = recv_until(lambda f: True, "a datagram")
            assert f[1] == 1 and f[2] & 1 == 1, f  # still 1 (and 0 in the bitmask)
            # seq 2 for real: the session works
            send(2, [ls.msg_introduce_type(7, ls.POSE_URI)])
            f = recv_until(lambda f: f[4] == [2], "G subscribes to our type")
            # ... only now: nothing of the dropped seq 1 (same introduce-type) was applied
            assert f[1] == 2 and not any(x[4] == [2] for x in seen[:-1]), seen
            send(3, [ls.msg_subscribe(1, list(range(9)))])
            recv_until(lambda f: f[4] == [4], "G introduces its entities")
            pos = [0.5, 1.5, -0.5]
            send(4, [ls.msg_introduce_entity(7, 42, {0: "probe", 2: pos, 3: [0, 0, 0],
                                                    4: [0, 0, 0, 1]})])
            e = wait_until(lambda: g.entities().get("fed/probe"), what="probe")
            # stale (seq 5 arriving after 6, with an older timestamp): acked, its update not
            # applied; a stale packet never moves the window (test_less_udp_stale.py)
            send(6, [])
            recv_until(lambda f: f[1] == 6, "ack of seq 6")
            send(5, [ls.msg_update(42, {2: [9, 9, 9], 3: [0, 0, 0]})], ts=peer.ts - 500000)
            recv_until(lambda f: f[1] == 6 and f[2] & 1, "ack of the stale seq 5 (bit 0)")
            wait_until(lambda: counters()["stale_packets"] == 1, what="stale counted")
            # counted while processed: had its update been applied, it would show by now
            assert g.entities()["fed/probe"]["position"] == e["position"], g.entities()
            # the peer restarts (new session token, sequence 0 again): G starts over
            seen.clear()
            send(0, [ls.msg_cc("test-peer session=2")])
            # (this peer never acknowledges, so G keeps re-sending its old datagrams until the
            # restart; the first one acknowledging our new seq 0 is G's new first datagram)
            f = recv_until(lambda f: f[1] == 0, "G's new first datagram")
            assert f[0] == 0 and f[4] == [12], f
            wait_until(lambda: "fed/probe" not in g.entities(), what="old session's entity")
            ls.log_line(g, "restarted")
            c = counters()
            assert c["peer_restarts"] == 1, c
            assert c["framing_errors"] == 2 and c["bad_signature"] == 1, c  # parse + oversize
            print(f"udp errors: parse error acked+dropped, bad signature and oversize dropped "
                  f"unacked, stale acked+ignored; counters {c['framing_errors']:.0f} "
                  f"{c['bad_signature']:.0f} {c['stale_packets']:.0f}")
            peer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
