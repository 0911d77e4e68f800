"""Helpers for the fault, overload and bad-input tests (test_fault_*.py, test_overload_*.py,
test_badinput_*.py): which adapter types this build has, /api and /proc readers, and small
restartable raw-byte peers for every protocol (written from the protocols' specifications, not from the C code; the
LESS codec is the one of test_less_session.py, the RTP one that of test_rtp.py).

Standard library only. Every wait is event based (poll until a condition holds, with a generous
deadline); nothing asserts on elapsed time except where the product states a bound (SIGTERM)."""
import json
import os
import socket
import struct
import sys
import threading
import time

sys.dont_write_bytecode = True  # importing test modules must not leave __pycache__ behind
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xgtest import (BIN, SKIP, adapter_types, have_adapter, parse_prometheus,  # noqa: E402
                    require_adapters, reserve_port, skip, skip_part, wait_until)

# ---- which adapter types exist in this build ----


def have(t, part=None):
    """True when this build registers adapter type t (xgtest.have_adapter: the binary's own list
    of known types). When it does not, the part that needs it is left out with a SKIP line, and
    under CI=true the test fails naming t instead."""
    return have_adapter(t, part)


class Sections:
    """Runs named test sections; a section whose adapter types are missing is left out through
    xgtest.skip_part() (under CI=true: the test fails naming them). finish() skips the test
    (xgtest.skip) when nothing ran."""

    def __init__(self):
        self.ran, self.skipped = [], []

    def run(self, name, types, fn, *args):
        missing = [t for t in types if t not in adapter_types()]
        if missing:
            skip_part(f"section {name}: adapter type(s) {', '.join(missing)} not in this build")
            self.skipped.append(name)
            return None
        t0 = time.monotonic()
        r = fn(*args)
        print(f"ok section {name} ({time.monotonic() - t0:.1f} s)")
        self.ran.append(name)
        return r

    def leave_out(self, name, why):
        """A section left out for a reason found by the test itself (skip_part)."""
        skip_part(f"section {name}: {why}")
        self.skipped.append(name)

    def finish(self):
        if not self.ran:
            skip("no section could run: " + ", ".join(self.skipped))
        if self.skipped:
            print("ran: " + ", ".join(self.ran) + "; skipped: " + ", ".join(self.skipped))
        return 0


# ---- admin API, /proc ----

def port_of(gw, name):
    """The bound port of a server adapter (its `peer` ends in :PORT, or the rtp `port` counter)."""
    a = gw.adapter(name)
    if "port" in a["counters"]:
        return int(a["counters"]["port"])
    return int(a["peer"].split(" ")[0].rsplit(":", 1)[1])


def pos_x(gw, name):
    """x of entity `name`'s position, NaN while it does not exist (yet) or has no position: for
    waits that start before the entity is in the table."""
    e = gw.entities(name).get(name) or {}
    return (e.get("position") or [float("nan")])[0]


def metrics(gw):
    st, _, body = gw.get("/metrics")
    assert st == 200, st
    return parse_prometheus(body.decode())


def metric(gw, name, adapter_name):
    for (n, labels), v in metrics(gw).items():
        if n == name and f'adapter="{adapter_name}"' in labels:
            return v
    raise AssertionError(f"no {name} for {adapter_name}")


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def assert_clean_exit(gw, timeout=5.0):
    """SIGTERM, exit 0, and no sanitizer report in the log."""
    rc, secs = gw.stop(timeout=timeout)
    log = gw.log()
    assert rc == 0, f"exit code {rc} after {secs:.2f} s:\n{log[-3000:]}"
    for bad in ("Sanitizer", "runtime error", "LeakSanitizer"):
        assert bad not in log, f"sanitizer report:\n{log[-5000:]}"
    return secs


def all_finite(obj):
    """True when no number anywhere in a decoded JSON value is NaN/Inf (and no string says so)."""
    if isinstance(obj, float):
        return obj == obj and obj not in (float("inf"), float("-inf"))
    if isinstance(obj, dict):
        return all(all_finite(v) for v in obj.values())
    if isinstance(obj, list):
        return all(all_finite(v) for v in obj)
    if isinstance(obj, str):
        return obj.lower() not in ("nan", "inf", "-inf", "infinity", "-infinity")
    return True


def get_raw_json(gw, path):
    """JSON text with Python's lenient NaN/Infinity parsing turned into an error."""
    st, _, body = gw.get(path)
    assert st == 200, (path, st)

    def bad(c):
        raise AssertionError(f"{path}: non-standard JSON constant {c}")
    return json.loads(body, parse_constant=bad)


# ---- a restartable listening peer: the server side of a client adapter ----

class ListeningPeer:
    """Listens on a fixed loopback port, accepts one connection at a time and runs
    self.session(conn) in a thread. kill() closes everything (abortive RST when rst=True),
    start() listens again on the same port: a peer process killed and restarted. With port 0
    the port is held (xgtest.reserve_port) for the peer's lifetime, so that no other test is
    handed it while the peer is down."""

    def __init__(self, port=0):
        self.hold = None
        if port == 0:
            self.hold = reserve_port()
            port = self.hold.port
        self.port = port
        self.lsock = None
        self.conn = None
        self.thread = None
        self.stop_ev = threading.Event()
        self.error = None
        self.sessions = 0
        self.start()

    def start(self):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(8)
        self.port = s.getsockname()[1]
        self.lsock = s
        self.stop_ev = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(s, self.stop_ev), daemon=True)
        self.thread.start()

    def _run(self, lsock, stop_ev):
        lsock.settimeout(0.1)
        while not stop_ev.is_set():
            try:
                conn, _ = lsock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.conn = conn
            self.sessions += 1
            try:
                self.session(conn, stop_ev)
            except (OSError, ValueError):
                pass  # killed, or the gateway closed the connection
            except Exception as e:  # noqa: BLE001 -- reported by the main thread
                self.error = e
            finally:
                try:
                    conn.close()
                except OSError:
                    pass

    def kill(self, rst=False):
        self.stop_ev.set()
        if self.lsock:
            self.lsock.close()
            self.lsock = None
        c = self.conn
        if c:
            if rst:
                try:
                    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                except OSError:
                    pass
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()
            self.conn = None
        if self.thread:
            self.thread.join(5)
        assert self.error is None, f"peer thread: {self.error!r}"

    def session(self, conn, stop_ev):
        raise NotImplementedError


def pump_reads(conn):
    """Read and discard whatever the gateway sent (non-blocking)."""
    conn.setblocking(False)
    try:
        while True:
            b = conn.recv(65536)
            if not b:
                raise OSError("closed by the gateway")
    except (BlockingIOError, InterruptedError):
        pass
    finally:
        conn.setblocking(True)


# ---- RGMP v2 (Rokoko's RGMP v2 reference) ----

def rgmp_header(prefix, n):
    return struct.pack("<II", prefix, n)


def rgmp_definition(device, frames, epoch="unix_epoch"):
    obj = {"protocol_name": "RGMP", "protocol_version": "2.0.0", "device_id": device,
           "device_type": "rig", "timestamp_epoch": epoch,
           "groups": [{"name": "pose", "expected_rate_hz": 50, "streams": [
               {"data_type": "FLOAT[7]", "measure_type": "TRANSFORM", "target_frame": f,
                "reference_frame": "LTP_ENU"} for f in frames]}]}
    data = json.dumps(obj, separators=(",", ":")).encode()
    return rgmp_header(1, len(data)) + data


def rgmp_data(device, ts_us, poses, group=0):
    """poses: list of (x, y, z, qx, qy, qz, qw) as float32."""
    vals = b"".join(struct.pack("<7f", *p) for p in poses)
    payload = struct.pack("<IIQ", device, group, ts_us & 0xFFFFFFFFFFFFFFFF) + vals
    return rgmp_header(2, len(payload)) + payload


class RgmpPeer(ListeningPeer):
    """An RGMP server streaming device 77 with one frame "body" at `hz` (unix_epoch µs)."""
    DEVICE = 77

    def __init__(self, port=0, hz=50):
        self.hz = hz
        self.k = 0
        super().__init__(port)

    def session(self, conn, stop_ev):
        conn.sendall(rgmp_definition(self.DEVICE, ["body"]))
        while not stop_ev.is_set():
            self.k += 1
            x = 0.001 * (self.k % 1000)
            conn.sendall(rgmp_data(self.DEVICE, int(time.time() * 1e6),
                                   [(x, 1.0, 0.5, 0.0, 0.0, 0.0, 1.0)]))
            pump_reads(conn)
            stop_ev.wait(1.0 / self.hz)


class RgmpReader:
    """A TCP client of rgmp-server that reads (and counts) frames; read=False never reads."""

    def __init__(self, port, read=True, rcvbuf=None):
        self.s = socket.socket()
        if rcvbuf:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.s.connect(("127.0.0.1", port))
        self.buf = b""
        self.frames = {1: 0, 2: 0, 3: 0}
        self.bytes = 0
        self.closed = False
        self.payloads = []  # data frame payloads, when keep=True
        self.keep = False
        self.stop_ev = threading.Event()
        if read:
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()

    def _run(self):
        self.s.settimeout(0.2)
        while not self.stop_ev.is_set():
            try:
                b = self.s.recv(1 << 16)
            except socket.timeout:
                continue
            except OSError:
                self.closed = True
                return
            if not b:
                self.closed = True
                return
            self.bytes += len(b)
            self.buf += b
            while len(self.buf) >= 8:
                prefix, n = struct.unpack_from("<II", self.buf)
                assert prefix in (1, 2, 3), f"rgmp-server sent msg_prefix {prefix}"
                if len(self.buf) < 8 + n:
                    break
                if self.keep:
                    self.payloads.append((prefix, self.buf[8:8 + n]))
                self.frames[prefix] += 1
                self.buf = self.buf[8 + n:]

    def close(self):
        self.stop_ev.set()
        self.s.close()


# ---- VRPN 07.38 (as mainline VRPN puts it on the wire) ----

VRPN_COOKIE = b"vrpn: ver. 07.38  0" + b"\0" * 5


def vrpn_msg(sender, typ, body=b"", seq=0, t=(1795321979, 0)):
    length = 24 + len(body)
    pad = ((len(body) + 7) & ~7) - len(body)
    return struct.pack(">IIIiiI", length, t[0] & 0xFFFFFFFF, t[1] & 0xFFFFFFFF, sender, typ,
                       seq) + body + b"\0" * pad


def vrpn_desc(kind, ident, name):
    n = name.encode() + b"\0"
    return vrpn_msg(ident, kind, struct.pack(">I", len(n)) + n)


def vrpn_pos_quat(sensor, pos, quat):
    return struct.pack(">ii7d", sensor, sensor, *pos, *quat)


def vrpn_setup(device="Tracker0"):
    """Server cookie and descriptions: sender 3 = device, type 7 = Pos_Quat."""
    return (VRPN_COOKIE + vrpn_desc(-1, 0, "VRPN Control") + vrpn_desc(-1, 3, device) +
            vrpn_desc(-2, 7, "vrpn_Tracker Pos_Quat") + vrpn_desc(-2, 9, "vrpn_Base pong_message"))


def vrpn_report(sensor, pos, quat, t):
    return vrpn_msg(3, 7, vrpn_pos_quat(sensor, pos, quat), t=t)


class VrpnPeer(ListeningPeer):
    """A TCP-only VRPN server streaming Tracker0 sensor 0 at `hz` (wall-clock timevals)."""

    def __init__(self, port=0, hz=50):
        self.hz = hz
        self.k = 0
        super().__init__(port)

    def session(self, conn, stop_ev):
        conn.sendall(vrpn_setup())
        while not stop_ev.is_set():
            self.k += 1
            now = time.time()
            x = 0.001 * (self.k % 1000)
            conn.sendall(vrpn_report(0, (x, 2.0, 3.0), (0.0, 0.0, 0.0, 1.0),
                                     (int(now), int((now % 1) * 1e6))))
            pump_reads(conn)
            stop_ev.wait(1.0 / self.hz)


class VrpnReader:
    """A TCP-only VRPN client of vrpn-server: cookie + descriptions, then reads and counts bytes
    (read=False: never reads after connecting)."""

    TYPES = ["vrpn_Tracker Pos_Quat", "vrpn_Tracker Velocity", "vrpn_Base ping_message",
             "vrpn_Base pong_message"]

    def __init__(self, port, tracker="demo", read=True, rcvbuf=None):
        self.s = socket.socket()
        if rcvbuf:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.s.connect(("127.0.0.1", port))
        out = VRPN_COOKIE + vrpn_desc(-1, 0, "VRPN Control") + vrpn_desc(-1, 1, tracker)
        for i, n in enumerate(self.TYPES):
            out += vrpn_desc(-2, i, n)
        self.s.sendall(out)
        self.bytes = 0
        self.closed = False
        self.stop_ev = threading.Event()
        self.keep = False
        self.data = bytearray()
        if read:
            threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        self.s.settimeout(0.2)
        while not self.stop_ev.is_set():
            try:
                b = self.s.recv(1 << 16)
            except socket.timeout:
                continue
            except OSError:
                self.closed = True
                return
            if not b:
                self.closed = True
                return
            self.bytes += len(b)
            if self.keep:
                self.data += b

    def close(self):
        self.stop_ev.set()
        self.s.close()


def vrpn_doubles(data):
    """Every 88-byte Pos_Quat body's 7 doubles (and 96-byte Velocity body's 8) in a server->client stream (after the cookie)."""
    out = []
    buf = bytes(data[24:])
    i = 0
    while i + 24 <= len(buf):
        length = struct.unpack_from(">I", buf, i)[0]
        if length < 24:
            break
        size = 24 + ((length - 24 + 7) & ~7)
        if i + size > len(buf):
            break
        if length == 88:
            out.append(struct.unpack_from(">7d", buf, i + 32))
        elif length == 96:
            out.append(struct.unpack_from(">8d", buf, i + 32))
        i += size
    return out


# ---- LESS (codec of test_less_session.py, signature: none = all-zero signatures) ----

def less():
    import test_less_session as L  # noqa: E402 -- the byte-level peer's codec
    return L


def less_frame(msgs, ts):
    """A TCP-framed LESS packet with an all-zero signature (signature: none)."""
    L = less()
    body = bytes(8) + L.enc_int(ts) + L.enc_int(len(msgs)) + b"".join(msgs)
    return L.enc_int(len(body)) + body


class LessPeer(ListeningPeer):
    """A LESS peer accepting the gateway's connect-mode session (signature: none): sends
    connection-control and introduces the pose type, introduces entity 1 "probe" and streams
    update-entity at `hz` with increasing µs timestamps."""

    def __init__(self, port=0, hz=50):
        self.hz = hz
        self.k = 0
        self.ts = 1000
        super().__init__(port)

    def send(self, conn, *msgs, ts=None):
        self.ts = max(self.ts + 1, int(time.monotonic() * 1e6))
        conn.sendall(less_frame(list(msgs), self.ts if ts is None else ts))

    def session(self, conn, stop_ev):
        L = less()
        self.send(conn, L.msg_cc(), L.msg_introduce_type(7, L.POSE_URI))
        q = [0.0, 0.0, 0.0, 1.0]
        self.send(conn, L.msg_introduce_entity(7, 1, {0: "probe", 1: 4, 2: [0.0, 1.0, 2.0],
                                                      3: [0, 0, 0], 4: q, 6: 1}))
        while not stop_ev.is_set():
            self.k += 1
            self.send(conn, L.msg_update(1, {2: [0.001 * (self.k % 1000), 1.0, 2.0],
                                             3: [0, 0, 0]}))
            pump_reads(conn)
            stop_ev.wait(1.0 / self.hz)


# ---- RTP game state (codec of test_rtp.py) ----

def rtp_codec():
    import test_rtp as R  # noqa: E402
    return R


def time1():
    return (time.time_ns() // 1_000_000) & 0xFFFF


class ScriptedPeer(ListeningPeer):
    """A listening peer that sends hello() on each new connection, then whatever is put() (bytes
    or a callable returning bytes), in order, until killed."""

    def __init__(self, hello, port=0):
        import queue
        self.hello = hello
        self.q = queue.Queue()
        super().__init__(port)

    def put(self, item):
        self.q.put(item)

    def session(self, conn, stop_ev):
        import queue
        conn.sendall(self.hello())
        while not stop_ev.is_set():
            try:
                item = self.q.get(timeout=0.02)
            except queue.Empty:
                pump_reads(conn)
                continue
            conn.sendall(item() if callable(item) else item)
            pump_reads(conn)


class LessTs:
    """Strictly increasing LESS packet timestamps (µs) for one peer."""

    def __init__(self):
        self.ts = 1000

    def next(self):
        self.ts = max(self.ts + 1, int(time.monotonic() * 1e6))
        return self.ts

    def frame(self, *msgs):
        return less_frame(list(msgs), self.next())
