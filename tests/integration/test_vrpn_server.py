"""Integration: the vrpn-server adapter against raw-byte VRPN 07.38 clients on loopback.

A Python client speaking raw bytes (cookie, descriptions, pings, UDP_DESCRIPTION) checks what
xrgate sends as mainline vrpn_server does (wire-rules.md §4-§8): the exact cookie; every message's
length = 24 + unpadded body and padding to 8; the sender descriptions ("VRPN Control", then one
tracker per origin adapter) and the 18 type descriptions, which must be byte-identical (header
length/sender/type and body) to the ones the stock vrpn_server sent in
tests/vectors/vrpn-recorded/stock_vrpn_server_tcp_s2c.bin; Pos_Quat 88 and Velocity 96 bytes with the sensor
repeated; pong 24 bytes for a served name and none for another. Poses: with
predict.max_horizon_ms 0 the table answers the newest sample exactly, so every pose in
/api/entities must equal a received Pos_Quat within 1e-8 (the API's 9 printed digits; the
doubles travel exactly), in the
identity frame and in `frame: vrpn-zup` (wire = (x, -z, y)). Sensors are numbered in ascending
entity-name order. Both modes: TCP-only, and UDP+TCP (connection request datagram, call-back,
UDP_DESCRIPTION both ways, reports in datagrams <= 1472 bytes with their own sequence counter).
Many clients at once; each bad-input case closes only that connection with a log line naming the
peer, the field and the value; a client that does not read is coalesced and dropped, others go
on."""
import math
import os
import re
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from xgtest import VECTORS_DIR, Gateway, wait_until  # noqa: E402

COOKIE = b"vrpn: ver. 07.38  0" + b"\0" * 5
CLIENT_TYPES = ["VRPN_Connection_Got_First_Connection", "VRPN_Connection_Got_Connection",
                "VRPN_Connection_Dropped_Connection", "VRPN_Connection_Dropped_Last_Connection",
                "vrpn_Tracker Pos_Quat", "vrpn_Tracker Velocity", "vrpn_Base ping_message",
                "vrpn_Base pong_message", "vrpn_Button Change", "vrpn_Button States",
                "vrpn_Analog Channel"]
# /api/entities prints 9 significant digits (values here are < 2 m): 1e-8 is its resolution;
# the doubles on the VRPN wire are the table's exactly.
TOL = 1e-8


def pad8(n):
    return (n + 7) & ~7


def msg(sender, typ, body=b"", seq=0, length=None):
    hdr = struct.pack(">IIIiiI", 24 + len(body) if length is None else length, 1, 2, sender,
                      typ, seq)
    return hdr + body + b"\xa5" * (pad8(len(body)) - len(body))  # garbage padding, as VRPN


def describe(kind, i, name):
    n = name.encode() + b"\0"
    return msg(i, -1 if kind == "sender" else -2, struct.pack(">I", len(n)) + n)


def split_stream(buf):
    """Whole messages from the start of buf: (list of (hdr tuple, body, raw), rest)."""
    out = []
    while len(buf) >= 24:
        length = struct.unpack(">I", buf[:4])[0]
        assert length >= 24, f"length {length}"
        size = 24 + pad8(length - 24)
        if len(buf) < size:
            break
        hdr = struct.unpack(">IIIiiI", buf[:24])
        out.append((hdr, buf[24:length], buf[:size]))
        buf = buf[size:]
    return out, buf


class Client:
    """A raw VRPN client. mode 'tcp' connects to the TCP port; 'udp' sends the connection request
    and accepts the call-back, then announces its own UDP port."""

    def __init__(self, port, mode="tcp", senders=("demo",), rcvbuf=None, udp_description=True):
        self.mode = mode
        self.buf = b""
        self.names = {"sender": {}, "type": {}}  # server id -> name
        self.msgs = []           # (channel, hdr, body, raw)
        self.reports = []        # (channel, tracker, kind, sensor, values, hdr)
        self.udp_desc = None
        self.udp = None
        self.closed = False
        if mode == "tcp":
            self.sock = socket.socket()
            if rcvbuf:
                self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            self.sock.connect(("127.0.0.1", port))
        else:
            lis = socket.socket()
            lis.bind(("127.0.0.1", 0))
            lis.listen(1)
            lob = f"127.0.0.1 {lis.getsockname()[1]}".encode() + b"\0"
            assert len(lob) == 16 or len(lob) == 15 or len(lob) == 14
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.sendto(lob, ("127.0.0.1", port))
            u.close()
            lis.settimeout(5)
            self.sock, _ = lis.accept()
            lis.close()
            if udp_description:
                self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                self.udp.bind(("127.0.0.1", 0))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        out = COOKIE
        seq = 0
        if self.udp:
            host = b"127.0.0.1\0"
            out += msg(self.udp.getsockname()[1], -3, host)
        self.senders = ["VRPN Control"] + list(senders)
        for i, n in enumerate(self.senders):
            out += describe("sender", i, n)
        for i, n in enumerate(CLIENT_TYPES):
            out += describe("type", i, n)
        self.sock.sendall(out)
        self.seq = seq
        self.cookie = None

    def ping(self, sender_name):
        self.sock.sendall(msg(self.senders.index(sender_name), CLIENT_TYPES.index(
            "vrpn_Base ping_message")))

    def _handle(self, channel, hdr, body, raw):
        length, _, _, sender, typ, _ = hdr
        assert len(raw) == 24 + pad8(length - 24), "padded size"
        self.msgs.append((channel, hdr, body, raw))
        if typ in (-1, -2):
            n = struct.unpack(">I", body[:4])[0]
            assert length == 24 + 4 + n and body[4 + n - 1] == 0, f"description {hdr} {body}"
            self.names["sender" if typ == -1 else "type"][sender] = body[4:4 + n - 1].decode()
            return
        if typ == -3:
            assert body.endswith(b"\0")
            self.udp_desc = (sender, body[:-1].decode())
            return
        assert typ >= 0, f"system type {typ}"
        tname = self.names["type"].get(typ)
        sname = self.names["sender"].get(sender)
        assert tname and sname, f"undescribed type {typ} / sender {sender}"
        if tname == "vrpn_Tracker Pos_Quat":
            assert length == 88, f"Pos_Quat length {length}"
            s1, s2, *v = struct.unpack(">ii7d", body)
            assert s1 == s2 and s1 >= 0
            self.reports.append((channel, sname, "pq", s1, v, hdr))
        elif tname == "vrpn_Tracker Velocity":
            assert length == 96, f"Velocity length {length}"
            s1, s2, *v = struct.unpack(">ii8d", body)
            assert s1 == s2 and s1 >= 0
            self.reports.append((channel, sname, "vel", s1, v, hdr))
        elif tname == "vrpn_Button Change":
            assert length == 32, f"Button Change length {length}"
            self.reports.append((channel, sname, "change", None, struct.unpack(">ii", body), hdr))
        elif tname == "vrpn_Button States":
            n = struct.unpack(">i", body[:4])[0]
            assert length == 24 + 4 + 4 * n, f"Button States length {length} for {n}"
            self.reports.append((channel, sname, "states", None,
                                 list(struct.unpack(f">{n}i", body[4:])), hdr))
        elif tname == "vrpn_Analog Channel":
            n = struct.unpack(">d", body[:8])[0]
            assert n == int(n) and length == 24 + 8 * (int(n) + 1), f"Analog length {length}"
            self.reports.append((channel, sname, "analog", None,
                                 list(struct.unpack(f">{int(n)}d", body[8:])), hdr))
        elif tname == "vrpn_Base pong_message":
            assert length == 24
            self.reports.append((channel, sname, "pong", None, None, hdr))

    def _read_tcp(self, timeout):
        """One read of the TCP stream (waiting at most `timeout` s), its messages handled.
        Returns whether bytes came."""
        self.sock.settimeout(timeout)
        try:
            b = self.sock.recv(1 << 16)
            if not b:
                self.closed = True
                return False
            self.buf += b
        except (socket.timeout, BlockingIOError):
            return False
        except ConnectionResetError:
            self.closed = True
            return False
        if self.cookie is None and len(self.buf) >= 24:
            self.cookie, self.buf = self.buf[:24], self.buf[24:]
            assert self.cookie == COOKIE, self.cookie
        if self.cookie is not None:
            got, self.buf = split_stream(self.buf)
            for hdr, body, raw in got:
                self._handle("tcp", hdr, body, raw)
        return True

    def _described(self, hdr):
        _, _, _, sender, typ, _ = hdr
        return typ < 0 or (typ in self.names["type"] and sender in self.names["sender"])

    def pump(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end and not self.closed:
            self._read_tcp(0.01)
            if self.closed:
                break
            if self.udp:
                self.udp.settimeout(0.0)
                while True:
                    try:
                        dg = self.udp.recv(4096)
                    except (BlockingIOError, socket.timeout):
                        break
                    assert len(dg) <= 1472, f"datagram of {len(dg)} bytes"
                    got, rest = split_stream(dg)
                    assert not rest, "a message spans datagrams"
                    for hdr, body, raw in got:
                        # TCP and UDP are not ordered: the descriptions the server sent over TCP
                        # before this datagram may still wait unread in the TCP socket (on
                        # loopback they are there already). Read it all first; _handle still
                        # fails on a message the server never described.
                        while not self._described(hdr) and self._read_tcp(0):
                            pass
                        self._handle("udp", hdr, body, raw)

    def until(self, pred, timeout=5.0, what="condition"):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred():
                return
            self.pump(0.05)
        raise AssertionError(f"timed out waiting for {what}")

    def latest(self, tracker, kind):
        out = {}
        for ch, t, k, s, v, _ in self.reports:
            if t == tracker and k == kind:
                out[s] = v
        return out

    def close(self):
        self.sock.close()
        if self.udp:
            self.udp.close()


def server_port(gw, name="vrpn"):
    for a in gw.get_json("/api/adapters")["adapters"]:
        if a["name"] == name:
            return int(a["peer"].rsplit(":", 1)[1])
    raise AssertionError(name)


def stock_type_descriptions():
    """TYPE_DESCRIPTION messages of the stock vrpn_server (fixture) by id: (length, sender, type,
    body)."""
    path = os.path.join(VECTORS_DIR, "vrpn-recorded", "stock_vrpn_server_tcp_s2c.bin")
    if not os.path.exists(path):
        return None
    data = open(path, "rb").read()[24:]
    got, _ = split_stream(data)
    return {h[3]: (h[0], h[3], h[4], body) for h, body, _ in got if h[4] == -2}


def zup(v):
    """Internal (Y up) -> vrpn-zup wire (axes x,z,-y): wire = (x, -z, y)."""
    return [v[0], -v[2], v[1]]


def check_poses(gw, clients, tracker, frames):
    """Every entity of origin `tracker` in /api/entities equals a received Pos_Quat of its sensor
    (ascending-name numbering) within TOL, per client in its frame; velocities likewise."""
    ents = sorted((e for e in gw.get_json("/api/entities")["entities"]
                   if e["origin"] == tracker), key=lambda e: e["name"])
    assert ents, "no entities"
    for c in clients:
        c.pump(0.4)  # the report of the sample the API just showed is sent on the next tick
    for c, frame in zip(clients, frames):
        for sensor, e in enumerate(ents):
            p, q = e["position"], e["orientation"]
            v, w = e["velocity"], e["angular_velocity"]
            if frame == "vrpn-zup":
                p, v, w = zup(p), zup(v), zup(w)
                q = zup(q[:3]) + [q[3]]
            want = p + q
            cands = [r[4] for r in c.reports if r[1] == tracker and r[2] == "pq" and r[3] == sensor]
            assert cands, f"no Pos_Quat for {tracker} sensor {sensor} ({e['name']})"
            best = min(max(abs(a - b) for a, b in zip(r, want)) for r in cands)
            assert best < TOL, (f"{e['name']} (sensor {sensor}, {frame}): API {want} not among "
                                f"the {len(cands)} reports (closest off by {best})")
            vels = [r[4] for r in c.reports if r[1] == tracker and r[2] == "vel" and r[3] == sensor]
            ok = False
            for r in vels:
                lin, quat, dt = r[:3], r[3:7], r[7]
                assert 0 < dt <= 0.1 + 1e-12, f"vel_quat_dt {dt}"
                assert abs(sum(x * x for x in quat) - 1) < 1e-12, f"vel quat {quat}"
                # rotation increment -> angular velocity: log(q)/dt
                s = math.sqrt(sum(x * x for x in quat[:3]))
                ang = 2 * math.atan2(s, quat[3])
                omega = [x / s * ang / dt if s > 0 else 0.0 for x in quat[:3]]
                if max(abs(a - b) for a, b in zip(lin, v)) < TOL and \
                        max(abs(a - b) for a, b in zip(omega, w)) < 1e-6:
                    ok = True
            assert ok, f"{e['name']}: no Velocity with v={v} w={w} (frame {frame})"


CONFIG = """
gateway:
  predict: {{max_horizon_ms: 0}}
adapters:
  - name: demo
    type: synth
    rate_hz: 5
    bodies: 3
  - name: vrpn
    type: vrpn-server
    listen: "127.0.0.1:0"
    rate_hz: 50
    send_velocity: true
    max_output_bytes: 8192
    slow_timeout_ms: 300
  - name: vrpnz
    type: vrpn-server
    listen: "127.0.0.1:0"
    frame: vrpn-zup
    rate_hz: 50
    send_velocity: true
{extra}
"""


def test_wire_and_poses(gw):
    port, zport = server_port(gw), server_port(gw, "vrpnz")
    stock = stock_type_descriptions()
    for mode in ("tcp", "udp"):
        c = Client(port, mode)
        z = Client(zport, mode)
        c.until(lambda: len(c.latest("demo", "pq")) == 6, what=f"6 sensors ({mode})")
        z.until(lambda: len(z.latest("demo", "pq")) == 6, what=f"6 sensors zup ({mode})")
        # handshake burst as mainline: [UDP_DESCRIPTION] senders 0..n-1, types 0..17
        first = [h for ch, h, _, _ in c.msgs if ch == "tcp"]
        k = 0
        if mode == "udp":
            assert first[0][4] == -3 and first[0][0] == 34, first[0]
            assert c.udp_desc[1] == "127.0.0.1" and c.udp_desc[0] > 0
            k = 1
        assert [h[4] for h in first[k:k + 2]] == [-1, -1], first[k:k + 2]
        assert c.names["sender"][0] == "VRPN Control" and first[k][0] == 41
        assert c.names["sender"][1] == "demo" and first[k + 1][0] == 24 + 4 + 5
        types = [(h, b) for ch, h, b, _ in c.msgs if ch == "tcp" and h[4] == -2]
        assert [h[3] for h, _ in types[:18]] == list(range(18))
        if stock is not None:
            for h, b in types[:18]:
                assert (h[0], h[3], h[4], b) == stock[h[3]], f"type description {h[3]} differs"
        for chan in ("tcp", "udp"):
            seqs = [h[5] for ch, h, _, _ in c.msgs if ch == chan]
            assert seqs == list(range(len(seqs))), f"{chan} seq {seqs[:10]}"
        chans = {r[0] for r in c.reports if r[2] in ("pq", "vel")}
        assert chans == ({"udp"} if mode == "udp" else {"tcp"}), chans
        # ping/pong: one pong from our id of 'demo', none for a name we do not serve
        c.ping("demo")
        c.until(lambda: any(r[2] == "pong" for r in c.reports), what="pong")
        pongs = [r for r in c.reports if r[2] == "pong"]
        assert len(pongs) == 1 and pongs[0][0] == "tcp" and pongs[0][1] == "demo"
        check_poses(gw, [c, z], "demo", ["yup", "vrpn-zup"])
        c.close()
        z.close()
    print("wire format, descriptions, ping/pong and poses: OK in TCP-only and UDP+TCP")


def test_callback_without_udp_description(gw):
    """UDP+TCP call-back, but the client never announces a UDP port: everything stays on TCP."""
    c = Client(server_port(gw), "udp", udp_description=False)
    c.until(lambda: len(c.latest("demo", "pq")) == 6, what="reports over TCP")
    assert c.udp_desc and {r[0] for r in c.reports} == {"tcp"}
    c.close()


def test_send_all(gw):
    """send_all: every sensor every tick, so (with max_horizon_ms 0, poses held at the sample)
    one sample's pose is sent several times with increasing send times."""
    c = Client(server_port(gw, "vrpnall"), "tcp")
    c.until(lambda: len([r for r in c.reports if r[2] == "pq" and r[3] == 0]) >= 12,
            what="12 Pos_Quat of sensor 0")
    pq = [r for r in c.reports if r[2] == "pq" and r[3] == 0]
    distinct = {tuple(r[4]) for r in pq}
    assert len(distinct) < len(pq), "no pose was sent twice"
    stamps = [(r[5][1], r[5][2]) for r in pq]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps), "send times"
    c.close()


def test_unserved_ping(gw):
    c = Client(server_port(gw), "tcp", senders=("demo", "Tracker0"))
    c.until(lambda: c.latest("demo", "pq"), what="reports")
    c.ping("Tracker0")
    c.ping("demo")
    c.until(lambda: any(r[2] == "pong" for r in c.reports), what="pong")
    c.pump(0.2)
    assert [r[1] for r in c.reports if r[2] == "pong"] == ["demo"]
    # 'Tracker0' was new to the server: it is described back (echo, §6.2)
    assert "Tracker0" in c.names["sender"].values()
    c.close()


def test_many_clients(gw):
    port = server_port(gw)
    cs = [Client(port, "tcp") for _ in range(12)] + [Client(port, "udp") for _ in range(6)]
    end = time.monotonic() + 8
    while time.monotonic() < end and not all(len(c.latest("demo", "pq")) == 6 for c in cs):
        for c in cs:
            c.pump(0.02)
    for i, c in enumerate(cs):
        assert len(c.latest("demo", "pq")) == 6, f"client {i} got {c.latest('demo', 'pq')}"
        assert not c.closed
    n = gw.counters("vrpn")
    assert n["clients"] >= 18, n
    for c in cs:
        c.close()
    print("18 clients at once: OK")


def bad_cases():
    good_start = COOKIE + describe("sender", 0, "VRPN Control") + describe("sender", 1, "demo") \
        + describe("type", 0, "vrpn_Base ping_message")
    return [
        ("bad cookie (major 06)", b"vrpn: ver. 06.38  0" + b"\0" * 5, r"cookie.*06"),
        ("bad log mode", b"vrpn: ver. 07.38  4" + b"\0" * 5, r"cookie.*log mode"),
        ("truncated header", COOKIE + struct.pack(">I", 32) + b"\0" * 6, r"truncated header: 10 of 24"),
        ("length < 24", COOKIE + struct.pack(">IIIiiI", 20, 0, 0, 0, 0, 0), r"header.*20"),
        ("oversized length", COOKIE + struct.pack(">IIIiiI", 0x7ffffff0, 0, 0, 0, 0, 0),
         r"header.*2147483632"),
        ("wrong body size", good_start + msg(1, 0, b"\0" * 8),
         r"vrpn_Base ping_message.*8"),
        ("unknown type id", good_start + msg(1, 57), r"type id 57 was never described"),
        ("unknown sender id", good_start + msg(9, 0), r"sender id 9 .*never described"),
        ("description for bad id", COOKIE + describe("sender", 5000, "x"),
         r"SENDER_DESCRIPTION.*id 5000"),
        ("unknown system type", COOKIE + msg(0, -9), r"system message type -9"),
    ]


def test_bad_input(gw):
    """Each case on its own connection; the cases alternate between two servers, as each server
    logs at most 5 such lines per 10 s (the peer-line rate limit, tested in test_vrpn_flood.py)."""
    ports = [server_port(gw), server_port(gw, "vrpnz")]
    good = Client(ports[0], "tcp")
    good.until(lambda: good.latest("demo", "pq"), what="good client reports")
    for i, (what, data, pattern) in enumerate(bad_cases()):
        port = ports[i % 2]
        # only lines logged from here on: an earlier case's client may have had the same
        # ephemeral port (seen: 'wrong body size' matched 'truncated header''s line)
        first = len(gw.lines)
        s = socket.socket()
        s.connect(("127.0.0.1", port))
        peer = f"127.0.0.1:{s.getsockname()[1]}"
        s.sendall(data)
        if what == "truncated header":
            s.shutdown(socket.SHUT_WR)
        s.settimeout(5)
        closed = False
        end = time.monotonic() + 5
        while time.monotonic() < end:
            try:
                if not s.recv(65536):
                    closed = True
                    break
            except ConnectionResetError:
                closed = True
                break
        s.close()
        assert closed, f"{what}: connection not closed"
        line = wait_until(lambda: next((ln for ln in gw.lines[first:]
                                        if peer in ln and "closing" in ln), None),
                          what=f"{what}: a log line naming {peer}")
        assert re.search(pattern, line), f"{what}: log line {line!r} lacks {pattern!r}"
        print(f"  {what}: {line.split('] ', 1)[1]}")
        n = len(good.reports)
        good.until(lambda: len(good.reports) > n, what=f"good client still served after {what}")
    assert not good.closed
    assert gw.counters("vrpn")["bad_input"] + gw.counters("vrpnz")["bad_input"] >= len(bad_cases())
    good.close()


def test_requests_and_limits(gw):
    """Malformed connection requests are logged and ignored; max_clients refuses the extra session
    in both modes; the server keeps serving."""
    port = server_port(gw, "vrpnmap")
    wait_until(lambda: not gw.counters("vrpnmap")["clients"],  # the mapping test's client
               what="vrpnmap without clients")
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 0))
    peer = f"127.0.0.1:{u.getsockname()[1]}"
    for bad in (b"127.0.0.1 80\0", b"no-nul 5000", b"evil;host 5000\0"):
        u.sendto(bad, ("127.0.0.1", port))
    wait_until(lambda: gw.counters("vrpnmap")["requests_rejected"] >= 3,
               what="3 requests rejected")
    assert gw.counters("vrpnmap")["requests_rejected"] == 3
    # the log is read by a thread: a line can trail its counter
    lines = wait_until(lambda: (lambda ls: ls if len(ls) >= 3 else None)(
        [ln for ln in gw.lines if f"connection request from {peer}" in ln]),
        what=f"3 log lines for {peer}")
    assert len(lines) == 3 and "80" in lines[0], lines
    u.close()
    a, b = Client(port, "tcp"), Client(port, "udp")
    a.until(lambda: a.latest("Head", "pq"), what="first client")
    b.until(lambda: b.latest("Head", "pq"), what="second client")
    third = socket.socket()
    third.connect(("127.0.0.1", port))
    third.settimeout(5)
    assert third.recv(100) == b"", "third client not refused"
    third.close()
    lis = socket.socket()
    lis.bind(("127.0.0.1", 0))
    lis.listen(1)
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.sendto(f"127.0.0.1 {lis.getsockname()[1]}".encode() + b"\0", ("127.0.0.1", port))
    wait_until(lambda: gw.counters("vrpnmap")["clients_refused"] >= 2, what="2 refusals")
    assert gw.counters("vrpnmap")["clients_refused"] == 2
    u.close()
    n = len(a.reports)
    a.until(lambda: len(a.reports) > n, what="first client still served")
    # the request was refused (counted) and the server has served more since: a call back would
    # have connected by now (a loopback connect completes without the accepting side)
    lis.setblocking(False)
    try:
        lis.accept()
        raise AssertionError("called back past max_clients")
    except BlockingIOError:
        pass
    lis.close()
    a.close()
    b.close()
    print("connection requests and max_clients: OK")


def test_slow_reader(gw):
    port = server_port(gw, "vrpnslow")
    other = Client(port, "tcp")
    slow = Client(port, "tcp", rcvbuf=4096)
    slow.pump(0.05)  # reads the cookie only, then never again
    before = gw.counters("vrpnslow")["clients_dropped_slow"]
    end = time.monotonic() + 15
    while time.monotonic() < end and gw.counters("vrpnslow")["clients_dropped_slow"] == before:
        other.pump(0.1)
    n = gw.counters("vrpnslow")
    assert n["clients_dropped_slow"] == before + 1, n
    assert n["reports_skipped"] > 0, n
    wait_until(lambda: any("dropping the slow client" in ln for ln in gw.lines),
               what="the slow client's log line")  # read by a thread: it can trail the counter
    k = len(other.reports)
    other.until(lambda: len(other.reports) > k, what="other client still served")
    assert not other.closed
    other.close()
    slow.close()
    print("slow reader: coalesced, dropped, counted; the other client continues")


def test_mapping(gw):
    """tracker_name template and trackers: rules (glob -> tracker, fixed or automatic sensor)."""
    c = Client(server_port(gw, "vrpnmap"), "tcp", senders=("Head", "Hands", "rig-demo"))
    want = {"Head": {5}, "Hands": {0, 1}, "rig-demo": {0, 1, 2}}
    c.until(lambda: all(set(c.latest(t, "pq")) == v for t, v in want.items()),
            what=f"trackers {want}")
    ents = {e["name"]: e for e in gw.get_json("/api/entities")["entities"]}
    c.pump(0.4)
    for tracker, sensor, name in (("Head", 5, "demo/head"), ("Hands", 0, "demo/left_hand"),
                                  ("Hands", 1, "demo/right_hand"), ("rig-demo", 2, "demo/body2")):
        e = ents[name]
        cands = [r[4] for r in c.reports if r[1] == tracker and r[2] == "pq" and r[3] == sensor]
        assert any(max(abs(a - b) for a, b in zip(r, e["position"] + e["orientation"])) < TOL
                   for r in cands), f"{name} is not {tracker} sensor {sensor}"
    assert set(c.names["sender"].values()) >= {"VRPN Control", "Head", "Hands", "rig-demo"}
    c.close()
    print("trackers: mapping and tracker_name template: OK")


def main():
    cfg = CONFIG.format(extra="""
  - name: vrpnall
    type: vrpn-server
    listen: "127.0.0.1:0"
    exclude: "big/*"
    send_all: true
    rate_hz: 50
  - name: vrpnmap
    type: vrpn-server
    listen: "127.0.0.1:0"
    exclude: "big/*"
    tracker_name: "rig-{origin}"
    max_clients: 2
    trackers:
      - {match: "demo/head", tracker: Head, sensor: 5}
      - {match: "demo/*_hand", tracker: Hands}
  - name: big
    type: synth
    rate_hz: 100
    bodies: 200
    head: false
    hands: false
  - name: vrpnslow
    type: vrpn-server
    listen: "127.0.0.1:0"
    include: "big/*"
    rate_hz: 100
    max_output_bytes: 8192
    slow_timeout_ms: 300
""").replace("  - name: vrpn\n", "  - name: vrpn\n    exclude: \"big/*\"\n", 1) \
        .replace("  - name: vrpnz\n", "  - name: vrpnz\n    exclude: \"big/*\"\n", 1)
    with Gateway(cfg) as gw:
        try:
            # connect once the trackers exist (a tracker appearing later is described late)
            wait_until(lambda: all(gw.counters(n)["sensors"] for n in ("vrpn", "vrpnz",
                                                                       "vrpnslow")),
                       what="sensors on every server")
            test_wire_and_poses(gw)
            test_callback_without_udp_description(gw)
            test_unserved_ping(gw)
            test_send_all(gw)
            test_mapping(gw)
            test_requests_and_limits(gw)
            test_many_clients(gw)
            test_bad_input(gw)
            test_slow_reader(gw)
        except Exception:
            print(gw.log()[-6000:])
            raise
    print("OK")


if __name__ == "__main__":
    main()
