"""Integration: the rtp adapter's session as real peers see it (issue 16 items 5, 7, 8, 9).

- item 8: `xrgate --sdp NAME` and the running daemon agree: the SSRC the SDP names is the SSRC of
  the RTP packets captured on a loopback socket, and its o= session id is the daemon's
  (GET /api/sdp/NAME); without `ssrc:` both come from gateway.id + the adapter name
- item 5: the BYE sent on stop is a compound: SR (the adapter sent RTP) + SDES CNAME (the SDP's
  cname) + BYE, byte by byte
- item 7: a multicast destination with a unicast bind on the same port: the SDP's c= group and
  m= port are bound and joined (a PLI and an RTP sender reaching the group are served once each),
  o= is the unicast bind address, and the unicast port still works; receive-only says a=recvonly
  with no a=ssrc (this part is skipped when this host cannot loop multicast)
- item 9: ingress accepts both tag forms of Hand2: the registry's `80 81` and cisco/gse's
  `C0 80 01` (counted in gse_tags_in)"""
import os
import re
import socket
import struct
import subprocess
import sys
import time

from test_rtp import loc2, obj, pli, recv_all, require_rtp, rot2, rtp, udp, varuint, wait_entities
from test_rtp_chain import GROUP, multicast_works
from xgtest import BIN, Gateway, skip_part


def sdp_fields(text):
    """(ssrc or None, cname or None, o= sess-id, o= address, c= address, m= port, direction)"""
    m = re.search(r"^a=ssrc:(\d+) cname:(\S+)\r$", text, re.M)
    o = re.search(r"^o=- (\d+) \d+ IN IP4 (\S+)\r$", text, re.M)
    c = re.search(r"^c=IN IP4 ([^/\r]+)(/\d+)?\r$", text, re.M)
    port = re.search(r"^m=application (\d+) RTP/AVPF", text, re.M)
    d = re.search(r"^a=(sendrecv|recvonly|sendonly|inactive)\r$", text, re.M)
    assert o and c and port and d, text
    return (int(m.group(1)) if m else None, m.group(2) if m else None, int(o.group(1)),
            o.group(2), c.group(1), int(port.group(1)), d.group(1))


def sdp_and_bye():
    """Items 8 and 5."""
    rx = udp()
    probe = udp()  # --sdp needs a fixed port (an ephemeral one is not known before start)
    bport = probe.getsockname()[1]
    probe.close()
    cfg = f"""
gateway: {{id: lab-a}}
adapters:
  - name: demo
    type: synth
    bodies: 1
  - name: out
    type: rtp
    bind: "127.0.0.1:{bport}"
    destinations: ["127.0.0.1:{rx.getsockname()[1]}"]
    rtcp_interval_ms: 100
"""
    with Gateway(cfg) as gw:
        path = os.path.join(gw.tmp.name, "xrgate.yaml")
        r = subprocess.run([BIN, "--sdp", "out", "--config", path], capture_output=True,
                           timeout=10)
        assert r.returncode == 0, r.stderr
        cli = r.stdout.decode()
        ssrc, cname, sid, _, _, _, direction = sdp_fields(cli)
        assert ssrc is not None and direction == "sendrecv", cli
        # the daemon's RTP carries the SSRC that --sdp printed
        pkts = [d for d, _ in recv_all(rx, 0.3, total=3) if d[1] & 0x7F == 98]
        assert pkts, "no RTP received"
        got = {struct.unpack(">I", d[8:12])[0] for d in pkts}
        assert got == {ssrc}, (sorted(got), ssrc)
        # and the daemon's SDP has the same o= session id and a=ssrc
        st, _, body = gw.get("/api/sdp/out")
        assert st == 200
        d_ssrc, d_cname, d_sid, d_oaddr, _, _, _ = sdp_fields(body.decode())
        assert (d_ssrc, d_cname, d_sid) == (ssrc, cname, sid), (body, cli)
        assert d_oaddr == "127.0.0.1", body
        c = gw.adapter("out")["counters"]
        assert c["ssrc"] == ssrc, c
        gw.stop()
    # item 5: the BYE on stop is SR + SDES CNAME + BYE, all from that SSRC
    rtcp = [d for d, _ in recv_all(rx, 0.3, total=3) if 200 <= d[1] <= 204]
    byes = [d for d in rtcp if len(d) >= 8 and d[-8:-4] == b"\x81\xcb\x00\x01"]
    assert byes, [d.hex() for d in rtcp]
    bye = byes[-1]
    assert bye[:4] == b"\x80\xc8\x00\x06" and struct.unpack(">I", bye[4:8])[0] == ssrc, bye.hex()
    sdes = bye[28:-8]
    clen = len(cname)
    pad = (4 - (4 + 2 + clen + 1) % 4) % 4
    want = struct.pack(">BBHI", 0x81, 202, (8 + 2 + clen + 1 + pad) // 4 - 1, ssrc) + \
        bytes([1, clen]) + cname.encode() + b"\0" * (1 + pad)
    assert sdes == want, (sdes.hex(), want.hex())
    assert struct.unpack(">I", bye[-4:])[0] == ssrc
    rx.close()
    print(f"--sdp and the daemon agree on SSRC {ssrc:08x} and session {sid}; BYE is "
          f"SR + SDES + BYE ({len(bye)} bytes)")


def multicast_destination():
    """Item 7."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    gport = s.getsockname()[1]
    s.close()
    if not multicast_works(gport):
        skip_part("no multicast loopback on this host: multicast destination left out")
        return
    cfg = f"""
adapters:
  - name: demo
    type: synth
    bodies: 0
  - name: out
    type: rtp
    bind: "127.0.0.1:{gport}"      # the group's port: bound exclusively on the unicast address
    interface: 127.0.0.1
    destinations: ["{GROUP}:{gport}"]
  - name: in
    type: rtp
    bind: "127.0.0.1:0"
"""
    with Gateway(cfg) as gw:
        st, _, body = gw.get("/api/sdp/out")
        assert st == 200
        ssrc, _, _, oaddr, caddr, port, direction = sdp_fields(body.decode())
        assert (oaddr, caddr, port, direction) == ("127.0.0.1", GROUP, gport, "sendrecv"), body
        # a peer that reads the SDP sends to c=:m=: the adapter receives it there
        tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        tx.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
        tx.bind(("127.0.0.1", 0))
        tx.sendto(pli(0x5151, ssrc), (GROUP, gport))
        t_end = time.monotonic() + 5
        while gw.adapter("out")["counters"]["plis_in"] < 1 and time.monotonic() < t_end:
            time.sleep(0.02)
        t1 = (time.time_ns() // 1_000_000) & 0xFFFF
        head = obj(1, varuint(3) + struct.pack(">H", t1) + loc2((0, 1.6, 0), (0, 0, 0)) +
                   rot2((0, 0, 0), (0, 0, 0)))
        tx.sendto(rtp(98, 1, 0, 0x5151, head), (GROUP, gport))
        wait_entities(gw, 1, "out/00005151/Head1-3")
        c = gw.adapter("out")["counters"]
        assert c["plis_in"] == 1 and c["packets_in"] == 1, c  # each received once
        # the unicast address still works beside the group
        tx.sendto(pli(0x5252, ssrc), ("127.0.0.1", gport))
        t_end = time.monotonic() + 5
        while gw.adapter("out")["counters"]["plis_in"] < 2 and time.monotonic() < t_end:
            time.sleep(0.02)
        assert gw.adapter("out")["counters"]["plis_in"] == 2, gw.adapter("out")
        tx.close()
        # receive-only: a=recvonly, and no a=ssrc for an SSRC that never sends
        st, _, body = gw.get("/api/sdp/in")
        text = body.decode()
        assert "a=recvonly\r\n" in text and "a=ssrc" not in text and "a=sendrecv" not in text, \
            text
    print("multicast destination: the SDP's group and port are joined and served; "
          "receive-only is a=recvonly")


def hand2_body(oid, t, left):
    return varuint(oid) + struct.pack(">HB", t, left) + loc2((0.1, 1.2, -0.3), (0, 0, 0)) + \
        rot2((0, 0, 0), (0, 0, 0)) + bytes(25 * 6)


def both_tag_forms():
    """Item 9: Hand2 as `80 81` (the registry number, what xrgate sends) and as `C0 80 01`
    (cisco/gse's 0x8001) both decode to Hand2 entities."""
    cfg = """
adapters:
  - name: rx
    type: rtp
    bind: "127.0.0.1:0"
"""
    with Gateway(cfg) as gw:
        port = gw.port_of("rx")
        tx = udp()
        t1 = (time.time_ns() // 1_000_000) & 0xFFFF
        ours = obj(129, hand2_body(1, t1, 1))
        assert ours[:4] == b"\x80\x81\x80\xb8", ours[:4].hex()  # tag 129, Length 184
        gse = b"\xc0\x80\x01" + varuint(184) + hand2_body(2, t1, 0)
        assert len(ours) == 188 and len(gse) == 189
        tx.sendto(rtp(98, 1, 0, 0x77, ours + gse), ("127.0.0.1", port))
        ents = {e["name"]: e for e in wait_entities(gw, 2, "rx/00000077/")}
        assert sorted(ents) == ["rx/00000077/Hand2-1", "rx/00000077/Hand2-2"], sorted(ents)
        assert ents["rx/00000077/Hand2-1"]["kind"] == "left_hand"
        assert ents["rx/00000077/Hand2-2"]["kind"] == "right_hand"
        c = gw.adapter("rx")["counters"]
        assert c["gse_tags_in"] == 1 and c["objects_in"] == 2, c
        tx.close()
    print("ingress: Hand2 as 80 81 and as C0 80 01 both decode")


def main():
    require_rtp()
    sdp_and_bye()
    multicast_destination()
    both_tag_forms()
    return 0


if __name__ == "__main__":
    sys.exit(main())
