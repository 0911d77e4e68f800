"""Bad input on the wire: the rows of tests/BAD_INPUT.md that no other test proves.

  - rtp: RTP with another payload type (drop_wrong_pt), an SSRC outside allow_ssrc
    (drop_ssrc_denied), a truncated RTCP packet on the muxed port (drop_bad_rtcp), more senders
    than max_ssrcs (drop_limit): each dropped and counted, the good sender's entity keeps updating;
  - less (listen): a packet-length above max_packet and a first message that is not
    connection-control close that session only (counted, one log line); a peer beyond max_peers is
    closed at once (refused_peers); a good peer keeps its session throughout;
  - rgmp-client: a second device beyond max_devices closes the connection (protocol error);
  - rgmp-server: bytes a client sends (garbage, a fake RGMP frame) are discarded: the client keeps
    receiving data frames and is not closed;
  - admin HTTP: a malformed request line, an oversized header block, a POST, a path with "..",
    a request cut half-way: each answered with an error status or closed, never a crash; /healthz
    and /api/entities answer afterwards.
Sections for adapter types missing from the build are skipped (exit 77 only if none can run)."""
import socket
import struct
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import faultlib as F  # noqa: E402
from xgtest import Gateway, wait_until  # noqa: E402


def rtp_section(gw):
    R = F.rtp_codec()
    port = F.port_of(gw, "rx")
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    seq = [1]

    def send(ssrc, x, pt=98):
        time.sleep(0.003)
        pay = R.object2(1, F.time1(), (x, 1.0, 1.0), (0, 0, 0), (0, 0, 0), (0, 0, 0))
        seq[0] += 1
        tx.sendto(R.rtp(pt, seq[0], seq[0] * 90, ssrc, pay), ("127.0.0.1", port))

    good = "rx/00000001/Object2-1"
    k = [0]

    def good_update():
        k[0] += 1
        x = 0.01 * k[0]
        for _ in range(20):
            send(1, x)
            try:
                return wait_until(lambda: (lambda e: e and abs(e["position"][0] - x) < 1e-5 and e)(
                    gw.entities(good).get(good)), timeout=0.5, what="good sender")
            except AssertionError:
                continue
        raise AssertionError("good sender not applied")
    good_update()
    send(2, 0.5)  # a second allowed sender: max_ssrcs is 2
    wait_until(lambda: gw.counters("rx")["ssrcs"] == 2, what="two senders")
    cases = [
        ("drop_wrong_pt", lambda: send(1, 9.0, pt=99)),
        ("drop_ssrc_denied", lambda: send(0xBAD, 9.0)),
        ("drop_bad_rtcp", lambda: tx.sendto(b"\x80\xc8\x00\x20" + struct.pack(">I", 5) + b"\0" * 4,
                                            ("127.0.0.1", port))),
        ("drop_limit", lambda: send(3, 9.0)),
    ]
    for reason, fn in cases:
        before = gw.counters("rx")
        fn()
        wait_until(lambda: gw.counters("rx")[reason] > before[reason], what=f"{reason} counted")
        e = good_update()
        assert e["position"][0] != 9.0
        c = gw.counters("rx")
        print(f"  rtp {reason}: dropped, counted ({c[reason]}), drops {before['drops']} -> "
              f"{c['drops']}")
    assert not any(n.startswith(("rx/00000bad", "rx/00000003")) for n in gw.entities("rx/"))
    tx.close()


def less_section(gw):
    L = F.less()
    port = F.port_of(gw, "ls")

    class Peer:
        def __init__(self):
            self.s = socket.create_connection(("127.0.0.1", port), timeout=5)
            self.ts = F.LessTs()

        def send(self, *msgs):
            self.s.sendall(self.ts.frame(*msgs))

        def closed(self, timeout=5.0):
            self.s.settimeout(timeout)
            try:
                while self.s.recv(65536):
                    pass
                return True
            except ConnectionResetError:
                return True
            except socket.timeout:
                return False

    good = Peer()
    good.send(L.msg_cc(), L.msg_introduce_type(7, L.POSE_URI))
    good.send(L.msg_introduce_entity(7, 1, {0: "keeper", 1: 4, 2: [0.0, 1.0, 1.0], 3: [0, 0, 0],
                                            4: [0.0, 0.0, 0.0, 1.0], 6: 1}))
    wait_until(lambda: "ls/keeper" in gw.entities("ls/"), what="good LESS peer's entity")

    def still_good(x):
        good.send(L.msg_update(1, {2: [x, 1.0, 1.0], 3: [0, 0, 0]}))
        wait_until(lambda: abs(F.pos_x(gw, "ls/keeper") - x) < 1e-5,
                   what="good LESS peer still applied")

    cases = [
        ("packet-length above max_packet", lambda p: p.s.sendall(L.enc_int(100000) + b"\0" * 64),
         "packet-length"),
        ("first message not connection-control",
         lambda p: p.send(L.msg_introduce_type(7, L.POSE_URI)), "connection-control"),
    ]
    for i, (what, fn, text) in enumerate(cases):
        before_lines = len(gw.lines)
        before = gw.counters("ls")
        p = Peer()
        fn(p)
        assert p.closed(), f"{what}: session not closed"
        line = wait_until(lambda: [l for l in gw.lines[before_lines:] if text in l],
                          what=f"{what}: log line")
        c = gw.counters("ls")
        assert c["errors"] + c["framing_errors"] > before["errors"] + before["framing_errors"], c
        print(f"  less {what}: closed: {line[0].split('] ', 1)[1][:110]}")
        still_good(0.1 * (i + 1))
    # max_peers: 2 (the good peer + one)
    second = Peer()
    second.send(L.msg_cc())
    wait_until(lambda: gw.counters("ls")["peers"] == 2, what="the second peer's session")
    before = gw.counters("ls")["refused_peers"]
    third = Peer()
    assert third.closed(), "a peer beyond max_peers must be closed at once"
    wait_until(lambda: gw.counters("ls")["refused_peers"] == before + 1, what="refused_peers")
    print("  less max_peers: third peer refused")
    still_good(0.5)
    for p in (good, second, third):
        p.s.close()


def rgmp_server_section(gw):
    r = F.RgmpReader(F.port_of(gw, "ro"))
    wait_until(lambda: r.frames[2] > 0, what="rgmp data frames")
    for junk in (b"\xff" * 1000, struct.pack("<II", 1, 12) + b'{"device_id"', b"\0" * 70000):
        r.s.sendall(junk)
        n = r.frames[2]
        wait_until(lambda: r.frames[2] > n + 2, what="rgmp data after client garbage")
        assert not r.closed
    c = gw.counters("ro")
    assert c["clients"] == 1 and c["clients_dropped_slow"] == 0, c
    print("  rgmp-server: 71 KB of client garbage discarded, data frames continue")
    r.close()


def rgmp_client_section(gw, peer):
    """max_devices: 1 -- a second active device is a protocol error: that connection closes with
    one log line, the entities go inactive, the client reconnects."""
    Q1 = (0.0, 0.0, 0.0, 1.0)
    peer.put(F.rgmp_data(77, int(time.time() * 1e6), [(0.5, 1.0, 1.0, *Q1)]))
    wait_until(lambda: gw.entities("rc/rig-77/body").get("rc/rig-77/body", {}).get("active"),
               what="rgmp-client entity")
    before_lines = len(gw.lines)
    sessions = peer.sessions
    c0 = gw.counters("rc")
    peer.put(F.rgmp_definition(78, ["other"]))
    line = wait_until(lambda: [l for l in gw.lines[before_lines:] if "protocol error" in l],
                      what="max_devices log line")
    assert "max_devices" in line[0] or "78" in line[0], line
    wait_until(lambda: not gw.entities("rc/rig-77/body")["rc/rig-77/body"]["active"],
               what="entities inactive")
    wait_until(lambda: peer.sessions > sessions, what="reconnect")
    assert gw.counters("rc")["protocol_errors"] == c0["protocol_errors"] + 1
    print(f"  rgmp-client max_devices: {line[0].split('] ', 1)[1][:120]}")


def admin_section(gw):
    def raw(data, half=False):
        s = socket.create_connection(("127.0.0.1", gw.port), timeout=5)
        try:
            s.sendall(data)
            if half:
                s.shutdown(socket.SHUT_WR)
            got = b""
            while True:
                b = s.recv(65536)
                if not b:
                    break
                got += b
                if b"\r\n\r\n" in got and not half:
                    break
        except (ConnectionResetError, BrokenPipeError):
            got = b"<reset>"
        except socket.timeout:
            got = b"<timeout>"
        finally:
            s.close()
        return got
    cases = [
        ("malformed request line", b"GARBAGE\r\n\r\n", (b"HTTP/1.1 400", b"HTTP/1.0 400", b"")),
        # headers are capped at 16 KiB: refused (4xx) or the connection is closed
        ("oversized headers", b"GET /healthz HTTP/1.1\r\n" + b"X-A: " + b"a" * 200000 + b"\r\n\r\n",
         (b"HTTP/1.1 4", b"HTTP/1.0 4", b"", b"<reset>")),
        ("POST", b"POST /api/entities HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}",
         (b"HTTP/1.1 4",)),
        ("path with ..", b"GET /inspector/../../../etc/passwd HTTP/1.1\r\nHost: localhost\r\n\r\n",
         (b"HTTP/1.1 4",)),
        ("request cut half-way", b"GET /api/entit", (b"", b"HTTP/1.1 400", b"HTTP/1.0 400")),
    ]
    for what, data, ok in cases:
        got = raw(data, half=what == "request cut half-way")
        assert any(got.startswith(o) if o else got == b"" for o in ok), (what, got[:200])
        assert b"root:" not in got, what
        assert gw.get("/healthz")[0] == 200, what
        first = got.split(b"\r\n", 1)[0][:40]
        print(f"  admin {what}: {first!r}")
    assert F.all_finite(F.get_raw_json(gw, "/api/entities"))


def main():
    sec = F.Sections()
    ads = ["  - {name: demo, type: synth, bodies: 1, rate_hz: 60}"]
    if F.have("rtp"):
        ads.append('  - {name: rx, type: rtp, bind: "127.0.0.1:0", allow_ssrc: [1, 2, 3], '
                   'max_ssrcs: 2}')
    if F.have("less"):
        ads.append('  - {name: ls, type: less, mode: listen, listen: "127.0.0.1:0", '
                   'signature: none, max_packet: 4096, max_peers: 2}')
    rc_peer = None
    if F.have("rgmp-client"):
        rc_peer = F.ScriptedPeer(lambda: F.rgmp_definition(77, ["body"]))
        ads.append(f'  - {{name: rc, type: rgmp-client, connect: "127.0.0.1:{rc_peer.port}", '
                   'max_devices: 1}')
    if F.have("rgmp-server"):
        ads.append('  - {name: ro, type: rgmp-server, listen: "127.0.0.1:0", rate_hz: 60}')
    cfg = ("gateway:\n  entity: {stale_ms: 5000, expire_ms: 60000}\nadapters:\n" +
           "\n".join(ads) + "\n")
    with Gateway(cfg) as gw:
        try:
            sec.run("rtp", ["rtp"], rtp_section, gw)
            sec.run("less", ["less"], less_section, gw)
            sec.run("rgmp-server", ["rgmp-server"], rgmp_server_section, gw)
            sec.run("rgmp-client", ["rgmp-client"], rgmp_client_section, gw, rc_peer)
            sec.run("admin", [], admin_section, gw)
            F.assert_clean_exit(gw)
        except BaseException:
            print(gw.log()[-4000:])
            raise
        finally:
            if rc_peer:
                try:
                    rc_peer.kill()
                except (AssertionError, OSError):
                    pass
    return sec.finish()


if __name__ == "__main__":
    sys.exit(main())
