"""Integration: the vrpn-client adapter against Python VRPN servers on loopback (raw bytes).

- Replay (TCP-only): two test servers answer the client's cookie with the recorded server stream
  (session1_tcp and stock_vrpn_server_tcp `_s2c.bin`, paced by the segments CSV). /api/entities
  must show every recorded tracker sensor with its last recorded pose (values from the
  `_decoded.txt` listing, converted by the adapter's frame), the Velocity messages as velocity and
  angular velocity, buttons / analogs / dials in `extra`. What the client sends must be what the
  mainline client sent (`_c2s.bin`): cookie, sender and type descriptions in the same order with
  the same ids, the same echoed descriptions, then pings for each device.
- UDP+TCP (session3_udp): the test server receives the connection request datagram, connects back
  to the announced port, replays the recorded TCP stream and, once the client's UDP_DESCRIPTION
  arrived, sends the recorded UDP datagrams (split per the segments CSV, from another socket).
  A truncated datagram then closes the connection and the client sends a new request.
- Bad input: each case closes the connection with one log line naming the peer, the field and
  the value; the client backs off and reconnects; the other connections and a synth source are
  not disturbed.

The recordings are in tests/vectors/vrpn-recorded."""
import csv
import math
import os
import re
import socket
import struct
import sys
import threading
import time

import subprocess
import tempfile

from xgtest import BIN, VECTORS_DIR, Gateway, wait_until

FIX = os.path.join(VECTORS_DIR, "vrpn-recorded")
COOKIE = b"vrpn: ver. 07.38  0" + b"\0" * 5
TOL = 2e-6  # the listings print 6 significant digits


# ---- VRPN bytes ----

def pad8(n):
    return (n + 7) & ~7


def msg(sender, typ, body=b"", seq=0, t=(1795321979, 0)):
    length = 24 + len(body)
    return struct.pack(">IIIiiI", length, t[0], t[1], sender, typ, seq) + body + \
        b"\0" * (pad8(len(body)) - len(body))


def desc(kind, ident, name):
    n = name.encode() + b"\0"
    return msg(ident, kind, struct.pack(">I", len(n)) + n)


def pos_quat(sensor, pos, quat):
    return struct.pack(">ii7d", sensor, sensor, *pos, *quat)


def split_stream(data):
    """Messages of a stream after the cookie: (sender, type, body, header bytes)."""
    out = []
    off = 0
    while off + 24 <= len(data):
        length, sec, usec, snd, typ, seq = struct.unpack_from(">IIIiiI", data, off)
        body = data[off + 24:off + length]
        out.append((snd, typ, body, seq))
        off += 24 + pad8(length - 24)
    return out, data[off:]


def describe_name(body):
    n = struct.unpack_from(">I", body)[0]
    return body[4:4 + n - 1].decode()


def segments(name):
    with open(os.path.join(FIX, f"{name}_segments.csv")) as f:
        return [(float(r["t_rel_s"]), r["transport"], r["direction"], int(r["offset"]),
                 int(r["length"])) for r in csv.DictReader(f)]


def read_fix(name):
    with open(os.path.join(FIX, name), "rb") as f:
        return f.read()


# ---- expected values from the decoded listings ----

RE_PQ = re.compile(r"vrpn_Tracker Pos_Quat\s+\[(\w+)\] sensor=(\d+) \(pad=\d+\) "
                   r"pos=\(([^)]*)\) quat\(x,y,z,w\)=\(([^)]*)\)")
RE_VEL = re.compile(r"vrpn_Tracker Velocity\s+\[(\w+)\] sensor=(\d+) \(pad=\d+\) "
                    r"vec=\(([^)]*)\) quat\(x,y,z,w\)=\(([^)]*)\) dt=(\S+)")
RE_BCH = re.compile(r"vrpn_Button Change\s+\[(\w+)\] button=(\d+) state=(\d+)")
RE_BST = re.compile(r"vrpn_Button States\s+\[(\w+)\] num=(\d+) states=\[([^\]]*)\]")
RE_AN = re.compile(r"vrpn_Analog Channel\s+\[(\w+)\] num=(\d+) ch=\[([^\]]*)\]")
RE_DIAL = re.compile(r"vrpn_Dial update\s+\[(\w+)\] delta=(\S+) dial=(\d+)")


def floats(s):
    return [float(x) for x in s.split(",")] if s.strip() else []


def expected(name):
    """Last pose / velocity per (device, sensor), final buttons, last analogs, dial sums of the
    server->client traffic of a decoded listing."""
    poses, vels, buttons, analogs, dials = {}, {}, {}, {}, {}
    s2c = False
    with open(os.path.join(FIX, f"{name}_decoded.txt")) as f:
        for line in f:
            if line.startswith("## "):
                s2c = "s2c" in line
                continue
            if not s2c:
                continue
            if m := RE_PQ.search(line):
                poses[(m[1], int(m[2]))] = (floats(m[3]), floats(m[4]))
            elif m := RE_VEL.search(line):
                vels[(m[1], int(m[2]))] = (floats(m[3]), floats(m[4]), float(m[5]))
            elif m := RE_BCH.search(line):
                b = buttons.setdefault(m[1], {})
                b[int(m[2])] = int(m[3])
            elif m := RE_BST.search(line):
                b = buttons.setdefault(m[1], {})
                for i, v in enumerate(floats(m[3])):
                    b[i] = int(v)
            elif m := RE_AN.search(line):
                analogs[m[1]] = floats(m[3])
            elif m := RE_DIAL.search(line):
                d = dials.setdefault(m[1], {})
                d[int(m[3])] = d.get(int(m[3]), 0.0) + float(m[2])
    return poses, vels, buttons, analogs, dials


def zup(v):
    """vrpn-zup preset (axes x,z,-y) applied to a vector."""
    return (v[0], v[2], -v[1])


def zup_q(q):
    return (q[0], q[2], -q[1], q[3])


def close(a, b, tol=TOL):
    return all(abs(x - y) <= tol * max(1.0, abs(y)) for x, y in zip(a, b)) and len(a) == len(b)


def quat_close(a, b, tol=TOL):
    return 1.0 - abs(sum(x * y for x, y in zip(a, b))) < tol


def omega(vq, dt):
    """World angular velocity of a VRPN rotation increment vq (x,y,z,w) over dt seconds."""
    x, y, z, w = vq
    if w < 0:
        x, y, z, w = -x, -y, -z, -w
    s = math.sqrt(x * x + y * y + z * z)
    ang = 2 * math.atan2(s, w)
    return (0.0, 0.0, 0.0) if s == 0 else tuple(c / s * ang / dt for c in (x, y, z))


# ---- test servers ----

class Recorder:
    """Collects what the client sends on a socket (in a thread)."""

    def __init__(self, sock):
        self.sock = sock
        self.data = b""
        self.closed = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            while True:
                b = self.sock.recv(65536)
                if not b:
                    break
                self.data += b
        except OSError:
            pass
        self.closed = True

    def messages(self):
        return split_stream(self.data[24:])[0]


class ReplayServer:
    """TCP-only: accept one client, send the recorded s2c stream paced by the CSV (the cookie
    first, as mainline writes it at once), keep the connection open."""

    def __init__(self, name):
        self.name = name
        self.lsock = socket.socket()
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(4)
        self.port = self.lsock.getsockname()[1]
        self.rec = None
        self.done = threading.Event()
        self.error = None
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        try:
            self.lsock.settimeout(10)
            conn, _ = self.lsock.accept()
            self.conn = conn
            self.rec = Recorder(conn)
            data = read_fix(f"{self.name}_s2c.bin")
            segs = [s for s in segments(self.name) if s[1] == "tcp" and s[2] == "s2c"]
            t0, start = segs[0][0], time.monotonic()
            for t, _, _, off, n in segs:
                delay = (t - t0) - (time.monotonic() - start)
                if delay > 0:
                    time.sleep(delay)
                conn.sendall(data[off:off + n])
        except Exception as e:  # reported by the main thread
            self.error = e
        self.done.set()


class UdpReplayServer:
    """UDP+TCP: wait for the connection request on our UDP port, connect back, replay the recorded
    TCP stream; once the client's UDP_DESCRIPTION is in, send the recorded datagrams to its UDP
    port from another socket, both paced by the CSV."""

    def __init__(self, name):
        self.name = name
        self.usock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.usock.bind(("127.0.0.1", 0))
        self.port = self.usock.getsockname()[1]
        self.lobs = []
        self.rec = None
        self.client_udp = None
        self.done = threading.Event()
        self.error = None
        threading.Thread(target=self._run, daemon=True).start()

    def wait_lob(self, timeout=10):
        self.usock.settimeout(timeout)
        b, src = self.usock.recvfrom(2048)
        self.lobs.append(b)
        return b

    def _run(self):
        try:
            lob = self.wait_lob()
            host, port = lob.rstrip(b"\0").decode().split(" ")
            conn = socket.create_connection((host, int(port)), timeout=5)
            self.conn = conn
            self.rec = Recorder(conn)
            tcp = read_fix(f"{self.name}_tcp_s2c.bin")
            udp = read_fix(f"{self.name}_udp_s2c.bin")
            segs = [s for s in segments(self.name) if s[2] == "s2c" and s[1] in ("tcp", "udp")]
            out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # data from another port
            t0, start = segs[0][0], time.monotonic()
            for t, tr, _, off, n in segs:
                delay = (t - t0) - (time.monotonic() - start)
                if delay > 0:
                    time.sleep(delay)
                if tr == "tcp":
                    conn.sendall(tcp[off:off + n])
                    continue
                if self.client_udp is None:
                    deadline = time.monotonic() + 5
                    while self.client_udp is None and time.monotonic() < deadline:
                        for snd, typ, body, _ in self.rec.messages():
                            if typ == -3:
                                self.client_udp = (body.rstrip(b"\0").decode(), snd)
                        time.sleep(0.002)
                    assert self.client_udp, "no UDP_DESCRIPTION from the client"
                out.sendto(udp[off:off + n], self.client_udp)
            self.out = out
        except Exception as e:
            self.error = e
        self.done.set()


# ---- helpers on the gateway ----

CONFIG = """
gateway:
  predict: {{max_horizon_ms: 0}}
  entity: {{stale_ms: 60000, expire_ms: 120000}}
adapters:
  - name: s1
    type: vrpn-client
    devices: ["Tracker0@tcp://127.0.0.1:{s1}", "Tracker1@tcp://127.0.0.1:{s1}",
              "Button0@tcp://127.0.0.1:{s1}", "Analog0@tcp://127.0.0.1:{s1}",
              "Dial0@tcp://127.0.0.1:{s1}"]
    frame: vrpn-zup
  - name: stock
    type: vrpn-client
    devices: ["Tracker0@tcp://127.0.0.1:{stock}", "Button0@tcp://127.0.0.1:{stock}"]
  - name: udp
    type: vrpn-client
    devices: ["Rig@127.0.0.1:{udp}", "Pad@127.0.0.1:{udp}", "Sticks@127.0.0.1:{udp}",
              "Prop@127.0.0.1:{udp}"]
  - name: bad
    type: vrpn-client
    devices: ["Tracker0@tcp://127.0.0.1:{bad}", "Wand@tcp://127.0.0.1:{bad}"]
  - name: bad2
    type: vrpn-client
    devices: ["Tracker0@tcp://127.0.0.1:{bad2}"]
  - name: demo
    type: synth
    bodies: 1
    head: false
    hands: false
"""


def check_tracker(ents, prefix, exp, frame=lambda v: tuple(v), frame_q=lambda q: tuple(q),
                  devices=None):
    poses, vels = exp[0], exp[1]
    n = 0
    for (dev, sensor), (p, q) in poses.items():
        if devices is not None and dev not in devices:
            continue
        e = ents.get(f"{prefix}{dev}/{sensor}")
        assert e, (f"{prefix}{dev}/{sensor}", sorted(ents))
        assert e["kind"] == "rigid_body", e
        assert close(e["position"], frame(p)), (dev, sensor, e["position"], frame(p))
        assert quat_close(e["orientation"], frame_q(q)), (dev, sensor, e["orientation"], q)
        if (dev, sensor) in vels:
            v, vq, dt = vels[(dev, sensor)]
            assert not e["velocity_estimated"] and not e["angular_velocity_estimated"], e
            assert close(e["velocity"], frame(v)), (dev, sensor, e["velocity"], v)
            assert close(e["angular_velocity"], frame(omega(vq, dt)), 1e-5), \
                (dev, sensor, e["angular_velocity"], omega(vq, dt))
        n += 1
    return n


def check_controls(ents, prefix, exp, devices):
    buttons, analogs, dials = exp[2], exp[3], exp[4]
    for dev in devices:
        e = ents.get(prefix + dev)
        if dev in buttons:
            assert e and e["kind"] == "controller", (dev, e)
            want = [buttons[dev].get(i, 0) for i in range(max(buttons[dev]) + 1)]
            got = [int(b) for b in e["extra"]["buttons"]]
            assert got == want, (dev, got, want)
        if dev in analogs:
            assert close(e["extra"]["analogs"][:len(analogs[dev])], analogs[dev], 1e-5), \
                (dev, e["extra"], analogs[dev])
        if dev in dials:
            an = e["extra"]["analogs"]
            for d, total in dials[dev].items():
                assert abs(an[64 + d] - total) < 1e-9, (dev, d, an, total)


def check_c2s(rec, fixture, devices):
    """The client's messages up to its first ping are the mainline client's (same kinds, ids,
    names, order; sequence numbers counting from 0); then pings for every device."""
    assert rec.data[:24] == COOKIE, rec.data[:24]
    ours = rec.messages()
    ref = split_stream(read_fix(fixture)[24:])[0]
    ping_type = 16

    def head(ms):
        out = []
        for snd, typ, body, seq in ms:
            if typ >= 0:
                break
            out.append((snd, typ, describe_name(body) if typ in (-1, -2) else None))
        return out

    h_ours, h_ref = head(ours), head(ref)
    udp = [m for m in h_ours if m[1] == -3]
    h_ours = [m for m in h_ours if m[1] != -3]
    h_ref = [m for m in h_ref if m[1] != -3]
    assert h_ours == h_ref, "\n".join(f"{a!r:60} {b!r}" for a, b in zip(h_ours, h_ref))
    assert [m[3] for m in ours] == list(range(len(ours))), "sequence numbers"
    pings = ours[len(h_ours) + len(udp):]
    assert pings and all(t == ping_type and b == b"" for _, t, b, _ in pings), pings[:3]
    assert {s for s, _, _, _ in pings} == set(range(1, len(devices) + 1)), pings
    return udp


# ---- the bad-input peer ----

class BadServer:
    def __init__(self):
        self.lsock = socket.socket()
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(4)
        self.port = self.lsock.getsockname()[1]
        self.conn = None

    def accept(self, timeout=10):
        self.lsock.settimeout(timeout)
        self.conn, _ = self.lsock.accept()
        self.conn.settimeout(timeout)

    def wait_closed(self, timeout=5.0):
        self.conn.settimeout(timeout)
        try:
            while self.conn.recv(65536):
                pass
            return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False

    def setup(self, t):
        """Cookie, descriptions (our ids differ from the client's on purpose) and one report."""
        self.conn.sendall(
            COOKIE + desc(-1, 0, "VRPN Control") + desc(-1, 3, "Tracker0") +
            desc(-2, 7, "vrpn_Tracker Pos_Quat") + desc(-2, 9, "vrpn_Base pong_message") +
            msg(3, 7, pos_quat(0, (1.0, 2.0, 3.0), (0.0, 0.0, 0.0, 1.0)), t=t))


BAD_CASES = [
    # (what, bytes, expected text in the log line, half-close after sending)
    ("length < 24", struct.pack(">IIIiiI", 10, 0, 0, 3, 7, 0), "length 10 < 24", False),
    ("oversized length", struct.pack(">IIIiiI", 0x7fffffff, 0, 0, 3, 7, 0),
     "length 2147483647 exceeds the maximum", False),
    ("wrong body size", msg(3, 7, pos_quat(0, (0, 0, 0), (0, 0, 0, 1))[:56]),
     "device 'Tracker0': vrpn vrpn_Tracker Pos_Quat: body of 56 bytes, want 64", False),
    ("unknown system type", msg(0, -9), "unknown system message type -9", False),
    ("type id out of range", msg(3, 5000), "type id 5000 out of range", False),
    ("description of an id out of range", desc(-1, 2500, "Tracker9"),
     "SENDER_DESCRIPTION: id 2500 out of range 0..1999", False),
    ("truncated header", struct.pack(">IIIiiI", 88, 0, 0, 3, 7, 0)[:10],
     "truncated, 10 bytes at EOF", True),
]


def run_bad(gw, bad, name, cases, cookies):
    """Each case closes the session with one line. An adapter logs at most 5 such lines per 10 s
    (core/util/log.h), so the cases are shared between two adapters ("bad", "bad2")."""
    t = [1000, 0]
    ent = f"{name}/Tracker0/0"
    for i, (what, payload, text, half) in enumerate(cases):
        bad.accept()
        t[0] += 1
        bad.setup(tuple(t))
        wait_until(lambda: (lambda e: e and e["active"] and e["samples"] >= i + 1)(
            gw.entities(ent).get(ent)), what=f"{what}: report")
        assert gw.adapter(name)["state"] == "streaming"
        before = len(gw.lines)
        before_ctr = gw.adapter(name)["counters"]
        bad.conn.sendall(payload)
        if half:
            bad.conn.shutdown(socket.SHUT_WR)
        assert bad.wait_closed(), f"{what}: connection not closed"
        a = gw.adapter(name)
        # reconnects + 1 proves the backoff was entered; the state itself may have moved on: the
        # first backoff lasts 0.375..0.625 s, which a loaded machine can spend between the close
        # and this request (then the client is connecting again, or waiting for our cookie in
        # `handshake`: we accept only below). Never streaming: nothing answers it yet.
        assert a["state"] in ("backoff", "connecting", "handshake"), (what, a)
        assert a["counters"]["reconnects"] == before_ctr["reconnects"] + 1, (what, a)
        assert a["counters"]["bad_messages"] == before_ctr["bad_messages"] + 1, (what, a)
        lines = wait_until(lambda: [l for l in gw.lines[before:] if "bad input from" in l and
                                  f"[{name}]" in l], what=f"{what}: log line")
        assert len(lines) == 1, (what, lines)
        assert "bad input from tcp://127.0.0.1:" in lines[0] and text in lines[0] and \
            "closing the connection" in lines[0], (what, lines[0], text)
        wait_until(lambda: not gw.entities(ent)[ent]["active"], what=f"{what}: entity inactive")
        bad.conn.close()
    if not cookies:
        return len(cases)
    # bad cookies: refused before anything else
    for cookie, text in ((b"vrpn: ver. 06.38  0" + b"\0" * 5, "is not major version 07"),
                         (b"vrpn: ver. 07.38  7" + b"\0" * 5, "invalid log mode byte '7'")):
        bad.accept()
        before = len(gw.lines)
        bad.conn.sendall(cookie)
        assert bad.wait_closed(), "bad cookie: not closed"
        line = wait_until(lambda: [l for l in gw.lines[before:] if "bad input from" in l and
                                 f"[{name}]" in l], what="bad cookie line")
        assert len(line) == 1 and "(cookie)" in line[0] and text in line[0], line
        bad.conn.close()
    # and it recovers: a good server is served again
    bad.accept(timeout=15)
    t[0] += 1
    bad.setup(tuple(t))
    wait_until(lambda: gw.entities(ent)[ent]["active"], what="recovered after bad input")
    wait_until(lambda: gw.adapter(name)["state"] == "streaming", what="streaming again")
    return len(cases) + 2


def run_controls_move(gw, bad):
    """A device with buttons and analogs but no tracker report yet gets a controller entity; when
    its first tracker report arrives the controls move to the tracker entity."""
    bad.conn.sendall(desc(-1, 4, "Wand") + desc(-2, 11, "vrpn_Button Change") +
                     desc(-2, 12, "vrpn_Analog Channel") +
                     msg(4, 11, struct.pack(">ii", 2, 1)) +
                     msg(4, 12, struct.pack(">3d", 2.0, 0.25, -0.5)))
    e = wait_until(lambda: gw.entities("bad/Wand").get("bad/Wand"), what="controller entity")
    assert e["kind"] == "controller" and e["position"] == [0.0, 0.0, 0.0], e
    assert e["extra"]["buttons"] == [0, 0, 1] and e["extra"]["analogs"] == [0.25, -0.5], e
    bad.conn.sendall(msg(4, 7, pos_quat(0, (0.5, 1.5, -2.0), (0.0, 0.6, 0.0, 0.8)), t=(2000, 0)))
    ents = wait_until(lambda: (lambda e: e if "bad/Wand/0" in e and "bad/Wand" not in e else None)(
        gw.entities("bad/Wand")), what="controls moved to the tracker entity")
    w = ents["bad/Wand/0"]
    assert w["extra"]["buttons"] == [0, 0, 1] and w["extra"]["analogs"] == [0.25, -0.5], w
    assert close(w["position"], (0.5, 1.5, -2.0)) and quat_close(w["orientation"], (0, .6, 0, .8))
    bad.conn.sendall(msg(4, 11, struct.pack(">ii", 0, 1)))
    wait_until(lambda: gw.entities("bad/Wand/0")["bad/Wand/0"]["extra"]["buttons"] == [1, 0, 1],
             what="button on the tracker entity")


CHECK_ERRORS = [
    ("", "2:5: vrpn-client: 'devices' is required"),
    ("devices: []", "4:14: devices: the list is empty"),
    ('devices: ["Tracker0"]', "4:15: devices: 'Tracker0' is not a VRPN name"),
    ('devices: ["T@h:99999"]', "4:15: devices: 'T@h:99999' is not a VRPN name"),
    ('devices: ["T@file://take.vrpn"]', "4:15: devices: 'T@file://take.vrpn': only host[:port]"),
    ('devices: ["T@tcp://h", "T@tcp://h:3883"]', "4:28: devices: 'T@tcp://h:3883' is listed twice"),
    ('devices: ["T@tcp://h", "T@h2"]', "4:28: devices: 'T@h2': a device named 'T' is already"),
    ('devices: ["VRPN Control@h"]', "4:15: devices: 'VRPN Control@h': 'VRPN Control' is reserved"),
    ('devices: "T@h"\n    max_sensors: 0', "5:18: 'max_sensors' = 0 is out of range"),
    ('devices: "T@h"\n    device: "U@h"', "unknown key 'device'"),
    ('devices: ["V@x-vrpn://[::1]"]',
     "4:15: devices: 'V@x-vrpn://[::1]': UDP+TCP mode needs an IPv4 server"),
]


def run_check_errors():
    """xrgate --check reports bad vrpn-client configs with file:line:column."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "c.yaml")
        for body, want in CHECK_ERRORS:
            with open(path, "w") as f:
                f.write("adapters:\n  - name: rig\n    type: vrpn-client\n    " + body + "\n")
            r = subprocess.run([BIN, "--check", "--config", path], capture_output=True, text=True,
                               timeout=10)
            out = r.stdout + r.stderr
            assert r.returncode == 1 and want in out, (body, r.returncode, out)
        with open(path, "w") as f:
            f.write('adapters:\n  - name: rig\n    type: vrpn-client\n    devices: ["T@h", '
                    '"U@tcp://h:4000", "V@tcp://[::1]"]\n    connect_timeout_ms: 200\n')
        r = subprocess.run([BIN, "--check", "--config", path], capture_output=True, text=True,
                           timeout=10)
        assert r.returncode == 0, r.stdout + r.stderr


def main():
    run_check_errors()
    s1, stock = ReplayServer("session1_tcp"), ReplayServer("stock_vrpn_server_tcp")
    udp, bad, bad2 = UdpReplayServer("session3_udp"), BadServer(), BadServer()
    cfg = CONFIG.format(s1=s1.port, stock=stock.port, udp=udp.port, bad=bad.port, bad2=bad2.port)
    with Gateway(cfg) as gw:
        try:
            n_bad2 = run_bad(gw, bad2, "bad2", BAD_CASES[3:], cookies=False)
            bad2.lsock.close()  # its reconnects are refused from now on (no cookie timeouts)
            n_bad = run_bad(gw, bad, "bad", BAD_CASES[:3], cookies=True)
            run_controls_move(gw, bad)
            run_replays(gw, s1, stock, udp)
            # the bad peer disturbed no one
            for name in ("s1", "stock", "udp"):
                a = gw.adapter(name)
                assert a["counters"]["connects"] == 1, a
            assert gw.adapter("bad")["counters"]["bad_messages"] == n_bad
            assert gw.adapter("bad2")["counters"]["bad_messages"] == n_bad2
            assert gw.entities("demo/body0")["demo/body0"]["active"]
            run_udp_bad(gw, udp)
        except BaseException:
            print(gw.log())
            raise
    print("vrpn-client: ok")
    return 0


def run_replays(gw, s1, stock, udp):
    for srv in (s1, stock, udp):
        assert srv.done.wait(15), f"{srv.name}: replay did not finish"
        assert srv.error is None, f"{srv.name}: {srv.error!r}"
    # the last segments in flight: wait until every replay's final state is in the table (the
    # replays have ended, so it does not change after), then check it below
    exps = {k: expected(k) for k in ("session1_tcp", "stock_vrpn_server_tcp", "session3_udp")}

    def applied():
        try:
            check_tracker(gw.entities("s1/"), "s1/", exps["session1_tcp"], zup, zup_q,
                          devices=("Tracker0", "Tracker1"))
            check_controls(gw.entities("s1/"), "s1/", exps["session1_tcp"],
                           ("Button0", "Analog0", "Dial0"))
            check_tracker(gw.entities("stock/"), "stock/", exps["stock_vrpn_server_tcp"])
            check_controls(gw.entities("stock/"), "stock/", exps["stock_vrpn_server_tcp"],
                           ("Button0",))
            check_tracker(gw.entities("udp/"), "udp/", exps["session3_udp"])
            check_controls(gw.entities("udp/"), "udp/", exps["session3_udp"], ("Pad", "Sticks"))
            return True
        except (AssertionError, KeyError, TypeError):
            return False
    wait_until(applied, what="the replays' last reports in the table")

    # session1, frame vrpn-zup
    exp = expected("session1_tcp")
    ents = gw.entities("s1/")
    n = check_tracker(ents, "s1/", exp, zup, zup_q, devices=("Tracker0", "Tracker1"))
    assert n == 4, n
    # Tracker0 spins about the wire z axis at 0.25 Hz: internal +Y at pi/2 rad/s
    assert close(ents["s1/Tracker0/1"]["angular_velocity"], (0.0, math.pi / 2, 0.0), 1e-5)
    assert ents["s1/Tracker1/0"]["velocity_estimated"], "no Velocity for Tracker1: estimated"
    check_controls(ents, "s1/", exp, ("Button0", "Analog0", "Dial0"))
    for dev in ("Button0", "Analog0", "Dial0"):
        assert ents[f"s1/{dev}"]["position"] == [0.0, 0.0, 0.0], ents[f"s1/{dev}"]
    assert not any(k.startswith("s1/Text0") or k.startswith("s1/vrpn") for k in ents), ents
    check_c2s_loose(s1.rec, "session1_tcp_c2s.bin", 5)
    a = gw.adapter("s1")
    assert a["state"] == "streaming" and a["counters"]["tcp_reports"] > 0, a
    assert a["counters"]["pongs"] >= 5 and a["counters"]["bad_messages"] == 0, a
    assert a["peer"] == f"tcp://127.0.0.1:{s1.port}", a
    assert a["counters"]["connections"] == 1 and a["counters"]["devices"] == 5, a  # shared
    # the stock recording answers pings for both of its names: once ponged, no more pings
    # (s1 and udp also name devices that the recorded client did not ping: pinged every second)
    # s1 pings again twice (once a second): a full second has passed for stock too
    pings = {n: gw.adapter(n)["counters"]["pings"] for n in ("s1", "stock")}
    p1 = wait_until(lambda: (lambda v: v if v > pings["s1"] else None)(
        gw.adapter("s1")["counters"]["pings"]), what="s1 pings again")
    wait_until(lambda: gw.adapter("s1")["counters"]["pings"] > p1, what="s1 pings once more")
    after = {n: gw.adapter(n)["counters"]["pings"] for n in pings}
    assert after["stock"] == pings["stock"] and after["s1"] > pings["s1"], (pings, after)
    assert gw.wait_log("no response from server for >= 3 seconds to pings of 'Dial0'"), gw.log()

    # stock vrpn_server, identity frame, the same device names as the recording: the client's
    # bytes match the mainline client's message for message
    exp = expected("stock_vrpn_server_tcp")
    ents = gw.entities("stock/")
    assert check_tracker(ents, "stock/", exp) == 2
    check_controls(ents, "stock/", exp, ("Button0",))
    check_c2s(stock.rec, "stock_vrpn_server_tcp_c2s.bin", ("Tracker0", "Button0"))

    # session3: UDP+TCP
    exp = expected("session3_udp")
    ents = gw.entities("udp/")
    assert check_tracker(ents, "udp/", exp) == 5  # Rig 0..3, Prop 0
    check_controls(ents, "udp/", exp, ("Pad", "Sticks"))
    assert close(ents["udp/Prop/0"]["angular_velocity"], (2 * math.pi * 0.2, 0.0, 0.0), 1e-5)
    lob = udp.lobs[0]
    m = re.fullmatch(rb"127\.0\.0\.1 (\d+)\0", lob)
    assert m and 1024 <= int(m[1]) <= 65535, lob
    udp_desc = check_c2s_loose(udp.rec, "session3_udp_tcp_c2s.bin", 4)
    assert udp_desc == [(udp.client_udp[1], -3, b"127.0.0.1\0")], udp_desc
    a = gw.adapter("udp")
    assert a["counters"]["udp_reports"] > 100 and a["counters"]["datagrams"] > 100, a
    assert a["counters"]["tcp_reports"] > 0 and a["state"] == "streaming", a
    assert a["counters"]["connection_requests"] >= 1, a


def check_c2s_loose(rec, fixture, n_devices):
    """Different device lists than the recording: the same structure (cookie, [UDP description],
    VRPN Control + our devices, the mainline type list, echoes of the server's other names),
    sequence numbers from 0, then pings."""
    assert rec.data[:24] == COOKIE
    ours = rec.messages()
    ref = split_stream(read_fix(fixture)[24:])[0]
    ref_types = [describe_name(b) for s, t, b, _ in ref if t == -2]
    our_types = [describe_name(b) for s, t, b, _ in ours if t == -2]
    assert our_types[:23] == ref_types[:23], (our_types, ref_types)
    senders = [(s, describe_name(b)) for s, t, b, _ in ours if t == -1]
    assert senders[0] == (0, "VRPN Control") and [s for s, _ in senders] == \
        list(range(len(senders))), senders
    assert [m[3] for m in ours] == list(range(len(ours)))
    pings = [m for m in ours if m[1] >= 0]
    assert pings and all(t == 16 for _, t, _, _ in pings)
    assert {s for s, _, _, _ in pings} == set(range(1, n_devices + 1)), pings
    return [(s, t, b) for s, t, b, _ in ours if t == -3]


def run_udp_bad(gw, udp):
    """A datagram with a truncated header closes the UDP+TCP connection; a new request follows."""
    before = len(gw.lines)
    udp.out.sendto(b"\0\0\0\x58" + b"\0" * 6, udp.client_udp)
    line = wait_until(lambda: [l for l in gw.lines[before:] if "bad input from" in l],
                    what="UDP bad input line")
    assert len(line) == 1 and "udp datagram from 127.0.0.1:" in line[0] and \
        "datagram offset 0: vrpn header: 10 bytes, need 24" in line[0], line
    wait_until(lambda: udp.rec.closed, what="TCP closed after the bad datagram")
    lob = udp.wait_lob(timeout=5)
    assert re.fullmatch(rb"127\.0\.0\.1 \d+\0", lob), lob
    a = gw.adapter("udp")
    assert a["counters"]["bad_messages"] == 1 and a["counters"]["reconnects"] == 1, a


if __name__ == "__main__":
    sys.exit(main())
