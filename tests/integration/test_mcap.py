"""Integration: `mcap-record` writes what the synthetic rig sends, and @mcap/core (the format's
own TypeScript library, installed into <build>/web/node_modules by the build's npm ci) reads it
back (tests/integration/mcap_read.mjs).

1. zstd (the default, a 5-second take), lz4 and none: McapIndexedReader on the cleanly stopped
   file (summary, chunk indexes, statistics); the /tf channel's schema is tf2_msgs/msg/TFMessage,
   encoding ros2msg, message encoding cdr; at least 90 % of the samples the synth adapter counted
   are in the file; body0's positions and orientations equal the synth's closed-form path within
   1e-6 at the recorded capture times; each /tf message, decoded here against ROS 2's CDR layout,
   is the lossless sample's pose in ROS axes (x, -z, y).
2. SIGKILL while recording: McapStreamReader reads the file up to its last complete chunk; every
   message it returns is intact (the same checks on what is there).
3. record -> `mcap-replay` -> record: the second recording has the same entities (names, kinds)
   with the same samples (positions, orientations, velocities within 1e-12; capture-time spacing within
   1 us).
4. A /tf-only file written by @mcap/core's McapWriter (as rosbag2 writes one,
   tests/integration/mcap_write_tf.mjs) replays: child_frame_id -> name, frame_id -> parent,
   poses composed along the tree and converted from ROS axes.
6. Rotation into a directory (`rotate_s`): numbered files, each closed with its summary and
   readable by the indexed reader, together holding every sample in order.
7. A disk that stalls (the file is a FIFO nobody reads for a while, so the writer thread blocks
   in write()): the queue fills, samples are dropped and counted with a warning, the event loop
   goes on (the synth's samples keep arriving, the admin API answers); once the reader reads
   again, the recorder catches up and a clean stop is quick; if it never reads again, SIGTERM
   still stops the gateway within its second (the file is left as it is).
8. A skeleton (the bvh adapter's walk_small.bvh): each joint's /tf is relative to its parent
   joint (frame_id = the parent's name), and composing it with the parent's world pose gives the
   joint's world pose, in ROS axes.
9. Entities that leave and others that come (a reload replaces one synth by another while the
   recorder runs on; the recorder sends an entity's names once and reuses the numbers of those
   gone): every sample is under its own entity's name, source and origin (its pose is that
   body's), and so is its /tf.
5. Malformed files (cut inside a chunk, a chunk's CRC broken, a record length past the end, not
   MCAP): `--mcap-info` and `--check` of an mcap-replay name the fault; a cut file replays what
   it has.
10. `--check` names a `compression_level` out of zstd's range (file:line:col)."""
import hashlib
import http.client
import json
import math
import os
import re
import shutil
import signal
import struct
import select
import subprocess
import sys
import threading

from xgtest import BIN, SOURCE_DIR, Gateway, require_adapters, skip, time_bound, wait_until

BUILD_DIR = os.environ.get("XG_BUILD_DIR") or os.path.join(SOURCE_DIR, "build")
NODE_MODULES = os.path.join(BUILD_DIR, "web", "node_modules")
SCRIPT = os.path.join(SOURCE_DIR, "tests", "integration", "mcap_read.mjs")

CONFIG = """gateway:
  id: mcap-test
adapters:
  - name: demo
    type: synth
    rate_hz: 120
    bodies: 2
  - name: rec
    type: mcap-record
    path: {path}
    compression: {comp}
    chunk_kb: {chunk_kb}
"""

TF_DEF_START = "geometry_msgs/TransformStamped[] transforms\n"
SEP = "\n" + "=" * 80 + "\nMSG: "


# ---- CDR (ROS 2 layout: 4-byte encapsulation header, alignment from after it) ----

class Cdr:
    def __init__(self, data):
        assert data[:2] == b"\x00\x01", f"encapsulation {data[:4].hex()} is not CDR_LE"
        self.b, self.o = data[4:], 0

    def _al(self, n):
        self.o = (self.o + n - 1) // n * n

    def u32(self):
        self._al(4)
        v = struct.unpack_from("<I", self.b, self.o)[0]
        self.o += 4
        return v

    def i32(self):
        self._al(4)
        v = struct.unpack_from("<i", self.b, self.o)[0]
        self.o += 4
        return v

    def i64(self):
        self._al(8)
        v = struct.unpack_from("<q", self.b, self.o)[0]
        self.o += 8
        return v

    def f64(self, n=1):
        self._al(8)
        v = struct.unpack_from(f"<{n}d", self.b, self.o)
        self.o += 8 * n
        return list(v)

    def string(self):
        n = self.u32()
        s = self.b[self.o:self.o + n]
        assert n >= 1 and s[-1] == 0, "CDR string without its NUL"
        self.o += n
        return s[:-1].decode()


def decode_tf(data):
    c = Cdr(data)
    out = []
    for _ in range(c.u32()):
        sec, nsec = c.i32(), c.u32()
        frame, child = c.string(), c.string()
        out.append({"stamp": sec * 10**9 + nsec, "frame_id": frame, "child": child,
                    "t": c.f64(3), "q": c.f64(4)})
    return out


def decode_sample(data):
    c = Cdr(data)
    s = {k: c.string() for k in ("name", "source", "origin", "origin_gateway", "kind", "parent")}
    s["capture"], s["receive"] = c.i64(), c.i64()
    s["flags"], s["sensor"] = c.u32(), c.i32()
    for k, n in (("position", 3), ("orientation", 4), ("velocity", 3), ("angular_velocity", 3),
                 ("scale", 3)):
        s[k] = c.f64(n)
    nb = c.u32()
    s["buttons"] = list(c.b[c.o:c.o + nb])
    c.o += nb
    s["analogs"] = c.f64(c.u32())
    assert c.o == len(c.b), f"{len(c.b) - c.o} bytes left after a Sample"
    return s


# ---- the synth's body0 path (adapters/synth/synth_adapter.c: i = 0, r = 1, w = 0.5) ----

def body0_pos(t):
    return [math.cos(0.5 * t), 1.0 + 0.15 * math.sin(t), math.sin(0.5 * t)]


def body0_quat(t):
    ax = [math.sin(0.3), 1.0, math.cos(0.2)]
    n = math.sqrt(sum(a * a for a in ax))
    s = math.sin(0.8 * t / 2) / n
    return [ax[0] * s, ax[1] * s, ax[2] * s, math.cos(0.8 * t / 2)]


def read(path, mode):
    r = subprocess.run(["node", SCRIPT, "--node-modules", NODE_MODULES, "--file", path, "--mode",
                        mode], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"@mcap/core failed on {path} ({mode}):\n{r.stderr}"
    return json.loads(r.stdout)


def transforms(d, tf_id):
    """Every transform of the /tf messages of d, in order: the recorder puts the samples of one
    source frame (the same receive and capture times) in one TFMessage, as a tf broadcaster does,
    with the message's log and publish times those of its samples."""
    out = []
    for m in d["messages"]:
        if m["channel"] == tf_id:
            ts = decode_tf(bytes.fromhex(m["data"]))
            assert ts, "a /tf message without transforms"
            for t in ts:
                assert t["stamp"] == int(m["pub"]), (t["stamp"], m["pub"])
                t["log"] = int(m["log"])
            out += ts
    return out


def check_file(d, sent=None, killed=False):
    """The checks common to a clean and a killed recording; returns the number of samples. A
    frame's /tf message follows its samples' lossless messages and may fall in the next chunk:
    in a killed recording the last frame's samples may lack their transforms."""
    assert d["header"]["profile"] == "ros2", d["header"]
    by_topic = {c["topic"]: (int(i), c) for i, c in d["channels"].items()}
    assert set(by_topic) == {"/tf", "/xrgate/samples"}, by_topic
    tf_id, tf = by_topic["/tf"]
    sm_id, sm = by_topic["/xrgate/samples"]
    assert tf["messageEncoding"] == "cdr" and sm["messageEncoding"] == "cdr"
    sch = d["schemas"][str(tf["schemaId"])]
    assert sch["name"] == "tf2_msgs/msg/TFMessage" and sch["encoding"] == "ros2msg", sch
    assert sch["data"].startswith(TF_DEF_START + SEP + "geometry_msgs/TransformStamped\n"), \
        sch["data"][:200]
    for dep in ("std_msgs/Header", "builtin_interfaces/Time", "geometry_msgs/Transform",
                "geometry_msgs/Vector3", "geometry_msgs/Quaternion"):
        assert SEP + dep + "\n" in sch["data"], f"{dep} missing from the TFMessage definition"
    assert d["schemas"][str(sm["schemaId"])]["name"] == "xrgate_msgs/msg/Sample"
    samples = [m for m in d["messages"] if m["channel"] == sm_id]
    tfs = transforms(d, tf_id)
    n_tf_msgs = sum(1 for m in d["messages"] if m["channel"] == tf_id)
    # the synth's 5 entities share each frame's times: far fewer /tf messages than samples
    assert n_tf_msgs * 3 <= len(samples), (n_tf_msgs, len(samples))
    assert samples and 0 <= len(samples) - len(tfs) <= (256 if killed else 0), \
        (len(samples), len(tfs))
    names = set()
    t_first = c_first = None
    checked = 0
    for m, t in zip(samples, tfs):
        s = decode_sample(bytes.fromhex(m["data"]))
        assert t["log"] == int(m["log"]), (t["log"], m["log"])
        names.add(s["name"])
        assert int(m["log"]) == s["receive"] and int(m["pub"]) == s["capture"], (m, s)
        assert s["origin"] == "demo" and s["name"].startswith("demo/"), s
        # /tf: the same sample, in ROS axes (x, -z, y), under the world frame
        assert t["child"] == s["name"] and t["frame_id"] == "world", t
        assert t["stamp"] == s["capture"], (t["stamp"], s["capture"])
        p = s["position"]
        for a, b in zip(t["t"], [p[0], -p[2], p[1]]):
            assert abs(a - b) < 1e-12, (t["t"], p)
        if s["name"] != "demo/body0":
            continue
        assert s["kind"] == "rigid_body" and s["flags"] & 3 == 3, s
        if t_first is None:  # the synth's time of the first sample, from its position
            t_first = (math.atan2(p[2], p[0]) / 0.5) % (4 * math.pi)
            c_first = s["capture"]
        tt = t_first + (s["capture"] - c_first) * 1e-9
        for a, b in zip(p, body0_pos(tt)):
            assert abs(a - b) < 1e-6, (s["capture"], p, body0_pos(tt))
        q, qe = s["orientation"], body0_quat(tt)
        dot = abs(sum(a * b for a, b in zip(q, qe)))
        assert dot > 1 - 1e-9, (q, qe)
        checked += 1
    assert checked > 0 and {"demo/body0", "demo/body1", "demo/head"} <= names, names
    if sent is not None:
        assert len(samples) >= 0.9 * sent, f"{len(samples)} samples recorded of {sent} sent"
    return len(samples)


REPLAY = """gateway:
  id: mcap-replay-test
  predict: {{max_horizon_ms: 0}}
adapters:
  - name: rep
    type: mcap-replay
    file: {file}
    rename:
      - {{match: "*", name: "{{source}}"}}
"""
REPLAY_REC = REPLAY + """  - name: rec
    type: mcap-record
    path: {out}
"""


def samples_by_name(d):
    sm_id = [int(i) for i, c in d["channels"].items() if c["topic"] == "/xrgate/samples"][0]
    out = {}
    for m in d["messages"]:
        if m["channel"] == sm_id:
            s = decode_sample(bytes.fromhex(m["data"]))
            out.setdefault(s["name"], []).append(s)
    return out


def record_replay_record(tmp, path):
    out = os.path.join(tmp, "replayed.mcap")
    gw = Gateway(REPLAY_REC.format(file=path, out=out))
    try:
        wait_until(lambda: gw.adapters()["rep"]["state"] == "done", timeout=60,
                   what="the replay to finish")
    finally:
        rc, _ = gw.stop()
    assert rc == 0, gw.log()
    a, b = samples_by_name(read(path, "indexed")), samples_by_name(read(out, "indexed"))
    assert set(a) == set(b), (sorted(a), sorted(b))
    base_a = a["demo/body0"][0]["capture"]
    base_b = b["demo/body0"][0]["capture"]
    n = 0
    for name in a:
        assert len(a[name]) == len(b[name]), (name, len(a[name]), len(b[name]))
        for x, y in zip(a[name], b[name]):
            assert x["kind"] == y["kind"] and x["origin"] == "demo" and y["origin"] == "rep"
            for k in ("position", "orientation", "velocity", "angular_velocity"):
                # the table normalises quaternions again: the last bit may differ
                assert all(abs(u - v) < 1e-12 for u, v in zip(x[k], y[k])), (name, k, x[k], y[k])
            assert abs((x["capture"] - base_a) - (y["capture"] - base_b)) <= 1000, (x, y)
            n += 1
    print(f"ok: record -> replay -> record: {n} samples of {len(a)} entities equal")


def tf_replay(tmp):
    path = os.path.join(tmp, "tf-only.mcap")
    r = subprocess.run(["node", os.path.join(SOURCE_DIR, "tests", "integration",
                                             "mcap_write_tf.mjs"),
                        "--node-modules", NODE_MODULES, "--file", path],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    gw = Gateway(REPLAY.format(file=path))
    try:
        wait_until(lambda: gw.adapters()["rep"]["state"] == "done", timeout=30,
                   what="the /tf replay to finish")
        ents = gw.entities()
        assert set(ents) == {"base", "arm"}, sorted(ents)
        # the last message (i = 99): base at ROS (1.99, 2, 3), arm 0.5 m along base's x, which
        # the 90-degree turn about z points along ROS y; internal axes (x, z, -y)
        for name, want in (("base", [1.99, 3.0, -2.0]), ("arm", [1.99, 3.0, -2.5])):
            got = ents[name]["position"]
            assert all(abs(g - w) < 1e-6 for g, w in zip(got, want)), (name, got, want)
        assert ents["arm"].get("parent") == "base", ents["arm"]
        assert "parent" not in ents["base"] or not ents["base"]["parent"], ents["base"]
        assert gw.counters("rep")["messages_played"] == 100
    finally:
        gw.stop()
    print("ok: a /tf-only file (McapWriter) replays as base and base/arm")


def check_fails(tmp, name, data, want):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    r = subprocess.run([BIN, "--mcap-info", path], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and want in r.stderr, (name, r.returncode, r.stderr)
    conf = os.path.join(tmp, name + ".yaml")
    with open(conf, "w") as f:
        f.write(REPLAY.format(file=path))
    r = subprocess.run([BIN, "--check", "--config", conf], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode != 0 and want in r.stderr and name in r.stderr, (name, r.stderr)
    print(f"ok: {name}: {r.stderr.strip().splitlines()[-1]}")


def bad_level(tmp):
    """--check names the file, line and column of a zstd level out of range."""
    conf = os.path.join(tmp, "bad-level.yaml")
    with open(conf, "w") as f:
        f.write(CONFIG.format(path=os.path.join(tmp, "x.mcap"), comp="zstd", chunk_kb=64) +
                "    compression_level: 20\n")
    r = subprocess.run([BIN, "--check", "--config", conf], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 1 and re.search(r"bad-level\.yaml:\d+:\d+: 'compression_level' = 20 "
                                           r"is out of range \[-7, 19\]", r.stderr), r.stderr
    print(f"ok: {r.stderr.strip()}")


def malformed(tmp, path):
    good = open(path, "rb").read()
    # a chunk's records (compression none): find the first Chunk record (opcode 6) after the
    # header's records by walking them
    off, chunk = 8, None
    while off + 9 <= len(good):
        op, ln = good[off], struct.unpack_from("<Q", good, off + 1)[0]
        if op == 6:
            chunk = (off, ln)
            break
        off += 9 + ln
    assert chunk, "no chunk found"
    at, ln = chunk
    bad_crc = bytearray(good)
    bad_crc[at + 9 + ln - 5] ^= 0x40  # a byte of the last message's data
    check_fails(tmp, "bad-crc.mcap", bytes(bad_crc), "CRC-32 of its records")
    bad_len = bytearray(good)
    struct.pack_into("<Q", bad_len, at + 9 + 8 + 8 + 8 + 4 + 4, 2**40)  # records length
    check_fails(tmp, "bad-length.mcap", bytes(bad_len), "exceeds the")
    check_fails(tmp, "not-mcap.mcap", b"PK\x03\x04" + good[4:], "not an MCAP file")
    # cut inside the second half: plays what it has, says it was cut
    cut = os.path.join(tmp, "cut.mcap")
    with open(cut, "wb") as f:
        f.write(good[:len(good) * 2 // 3])
    r = subprocess.run([BIN, "--mcap-info", cut], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "cut short" in r.stdout, r
    gw = Gateway(REPLAY.format(file=cut))
    try:
        wait_until(lambda: gw.adapters()["rep"]["state"] == "done", timeout=30,
                   what="the cut file's replay to finish")
        assert gw.counters("rep")["messages_played"] > 0
    finally:
        gw.stop()
    print("ok: a cut file replays up to its last complete chunk")


ROTATE = """gateway:
  id: mcap-rotate
adapters:
  - name: demo
    type: synth
    rate_hz: 120
    bodies: 2
  - name: rec
    type: mcap-record
    path: {path}/
    rotate_s: 0.5
"""


def rotation(tmp):
    d = os.path.join(tmp, "takes")
    os.mkdir(d)
    gw = Gateway(ROTATE.format(path=d))
    try:
        gw.wait_counter("rec", "files", 3, timeout=30)
    finally:
        rc, _ = gw.stop()
    assert rc == 0, gw.log()
    names = sorted(os.listdir(d))
    assert len(names) >= 3, names
    last = None
    total = 0
    for i, name in enumerate(names):
        assert re.fullmatch(r"rec-\d{8}T\d{6}Z-%04d\.mcap" % i, name), names
        f = read(os.path.join(d, name), "indexed")  # each has its summary
        got = check_file(f)
        logs = [int(m["log"]) for m in f["messages"]]
        assert logs == sorted(logs) and (last is None or logs[0] >= last), name
        last = logs[-1]
        total += got
    print(f"ok: rotation: {len(names)} files, {total} samples")


STALL = """gateway:
  id: mcap-stall
adapters:
  - name: demo
    type: synth
    rate_hz: 240
    bodies: 20
  - name: rec
    type: mcap-record
    path: {path}
    compression: none
    chunk_kb: 8
    queue_kb: 64
"""


def stalled_disk(tmp):
    fifo = os.path.join(tmp, "stall.mcap")
    os.mkfifo(fifo)
    rd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so that the recorder's open() returns
    got = bytearray()
    try:
        gw = Gateway(STALL.format(path=fifo))
        try:
            gw.wait_counter("rec", "samples_dropped", 1, timeout=30)
            gw.wait_log("recording queue full", timeout=10)
            # the loop is not stalled: samples still arrive and are relayed to the table
            n0 = gw.counters("demo")["samples_in"]
            gw.wait_counter("demo", "samples_in", n0 + 1000, timeout=10)
            assert gw.adapters()["rec"]["counters"]["samples_dropped"] > 0
            # read again: the writer thread catches up, recording resumes
            r0 = gw.counters("rec")["samples_recorded"]

            def drain():
                try:
                    while True:
                        chunk = os.read(rd, 1 << 20)
                        if not chunk:
                            return len(got) > 0
                        got.extend(chunk)
                except BlockingIOError:
                    return False

            wait_until(lambda: drain() or gw.counters("rec")["samples_recorded"] > r0 + 500,
                       timeout=30, what="recording to resume once the FIFO is read")
            stop = threading.Event()

            def keep_reading():
                while not stop.is_set():
                    try:
                        chunk = os.read(rd, 1 << 20)
                        if not chunk:
                            return
                        got.extend(chunk)
                    except BlockingIOError:
                        select.select([rd], [], [], 0.05)  # until the FIFO has data

            th = threading.Thread(target=keep_reading, daemon=True)
            th.start()
        finally:
            rc, took = gw.stop()
        stop.set()
        th.join(5)
        assert rc == 0 and took < time_bound(1.0), (rc, took, gw.log())
    finally:
        os.close(rd)
    assert bytes(got[:8]) == b"\x89MCAP0\r\n", got[:8]
    print(f"ok: stalled disk: drops counted, loop alive, {len(got)} bytes read from the FIFO")
    # a disk that never comes back: SIGTERM still stops the gateway within its second
    fifo2 = os.path.join(tmp, "stall2.mcap")
    os.mkfifo(fifo2)
    rd = os.open(fifo2, os.O_RDONLY | os.O_NONBLOCK)
    try:
        gw = Gateway(STALL.format(path=fifo2))
        try:
            gw.wait_counter("rec", "samples_dropped", 1, timeout=30)
        finally:
            rc, took = gw.stop()
        assert rc == 0 and took < time_bound(1.0), (rc, took, gw.log())
        assert "did not take the last writes" in gw.log(), gw.log()
    finally:
        os.close(rd)
    print(f"ok: a disk that never comes back: stopped in {took:.2f} s")


SKELETON = """gateway:
  id: mcap-skeleton
adapters:
  - name: take
    type: bvh
    file: {bvh}
    loop: false
  - name: rec
    type: mcap-record
    path: {path}
"""


def qmul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return [aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz]


def qrot(q, v):
    r = qmul(qmul(q, [v[0], v[1], v[2], 0.0]), [-q[0], -q[1], -q[2], q[3]])
    return r[:3]


def ros(p=None, q=None):
    """Internal (Y up) -> ROS (Z up) axes, the `ros` preset (x, z, -y)."""
    if p is not None:
        return [p[0], -p[2], p[1]]
    return [q[0], -q[2], q[1], q[3]]


def skeleton(tmp):
    path = os.path.join(tmp, "skeleton.mcap")
    bvh = os.path.join(SOURCE_DIR, "tests", "vectors", "bvh", "walk_small.bvh")
    gw = Gateway(SKELETON.format(bvh=bvh, path=path))
    try:
        wait_until(lambda: gw.adapters()["take"]["state"] == "done", timeout=60,
                   what="the take to finish")
    finally:
        gw.stop()
    d = read(path, "indexed")
    by_topic = {c["topic"]: int(i) for i, c in d["channels"].items()}
    world = {}  # name -> (p, q) in ROS axes, from the lossless channel
    checked = 0
    pending = []  # the lossless samples whose transforms have not been seen yet
    for m in d["messages"]:
        if m["channel"] == by_topic["/xrgate/samples"]:
            s = decode_sample(bytes.fromhex(m["data"]))
            world[s["name"]] = (ros(p=s["position"]), ros(q=s["orientation"]))
            pending.append(s)
            continue
        if m["channel"] != by_topic["/tf"]:
            continue
        ts = decode_tf(bytes.fromhex(m["data"]))
        assert len(ts) == len(pending), (len(ts), len(pending))  # one frame's samples, all
        for t, s in zip(ts, pending):
            assert t["child"] == s["name"]
            if not s["parent"]:
                assert t["frame_id"] == "world", t
                continue
            assert t["frame_id"] == s["parent"], (t, s["parent"])
            pp, pq = world[s["parent"]]
            cp = [a + b for a, b in zip(pp, qrot(pq, t["t"]))]
            cq = qmul(pq, t["q"])
            wp, wq = world[s["name"]]
            assert all(abs(a - b) < 1e-9 for a, b in zip(cp, wp)), (s["name"], cp, wp)
            assert abs(sum(a * b for a, b in zip(cq, wq))) > 1 - 1e-9, (s["name"], cq, wq)
            checked += 1
        pending = []
    assert checked > 0, "no joint with a parent"
    print(f"ok: skeleton: {checked} parent-relative /tf transforms compose to the world poses")


CHURN = """gateway:
  id: mcap-test
adapters:
  - name: {synth}
    type: synth
    rate_hz: 120
    bodies: {bodies}
    head: false
    hands: false
  - name: rec
    type: mcap-record
    path: {path}
"""


def churn(tmp):
    """Entities leave and new ones take their place in the recorder's identity numbers (a reload
    replaces synth `one`, 3 bodies, by `two`, 2 bodies; the recorder runs on): every sample is
    recorded under its own entity's name, source and origin (its pose is that body's), and its
    /tf names the same child."""
    path = os.path.join(tmp, "churn.mcap")
    gw = Gateway(CHURN.format(synth="one", bodies=3, path=path))
    try:
        gw.wait_counter("one", "samples_in", 300, timeout=30)
        ents = {n: ("one", e.get("source")) for n, e in gw.entities().items()}
        with open(os.path.join(gw.tmp.name, "xrgate.yaml"), "w") as f:
            f.write(CHURN.format(synth="two", bodies=2, path=path))
        c = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=10)
        c.request("POST", "/api/reload", body=b"")
        r = c.getresponse()
        assert r.status == 200, (r.status, r.read(), gw.log()[-2000:])
        c.close()
        gw.wait_counter("two", "samples_in", 300, timeout=30)
        two = {n: ("two", e.get("source")) for n, e in gw.entities().items()}
        assert "rec" in gw.adapters() and not set(two) & set(ents), (two, ents)
        ents.update(two)
        n_rec = gw.counters("rec")["samples_recorded"]
    finally:
        rc, _ = gw.stop()
    assert rc == 0, gw.log()
    d = read(path, "stream")
    by = samples_by_name(d)
    assert set(by) == set(ents), (sorted(by), sorted(ents))
    for name, ss in by.items():
        # the synth's body i circles the Y axis at radius 1 + 0.25 i: the pose is this entity's
        i = int(re.search(r"(\d+)$", ents[name][1]).group(1))
        for s in ss:
            assert (s["origin"], s["source"]) == ents[name], (name, s, ents[name])
            x, _, z = s["position"]
            assert abs(math.hypot(x, z) - (1 + 0.25 * i)) < 1e-6, (name, s["position"])
    tf_id = [int(i) for i, c in d["channels"].items() if c["topic"] == "/tf"][0]
    sm_id = [int(i) for i, c in d["channels"].items() if c["topic"] == "/xrgate/samples"][0]
    sm = [decode_sample(bytes.fromhex(m["data"]))["name"] for m in d["messages"]
          if m["channel"] == sm_id]
    tf = [t["child"] for t in transforms(d, tf_id)]
    assert sm == tf and len(sm) >= n_rec, (len(sm), len(tf), n_rec)
    print(f"ok: churn: {len(sm)} samples of {len(ents)} entities, each under its own names "
          "across a reload that replaced 3 entities by 2")


def record(tmp, comp, n_samples, chunk_kb=64):
    path = os.path.join(tmp, f"take-{comp}.mcap")
    text = CONFIG.format(path=path, comp=comp, chunk_kb=chunk_kb)
    gw = Gateway(text)
    try:
        gw.wait_counter("rec", "samples_recorded", n_samples, timeout=30)
        sent = gw.counters("demo")["samples_in"]
        st = gw.adapters()["rec"]
        assert st["peer"] == path and st["state"] == "recording", st
        # what the inspector's adapter table shows: the file (peer), its size, the rate
        gw.wait_counter("rec", "file_bytes", 1, timeout=30)
        gw.wait_counter("rec", "record_rate_hz", 1, timeout=30)
        _, _, body = gw.get("/metrics")
        assert re.search(rb'^xrgate_adapter_up\{adapter="rec",type="mcap-record"\} 1$', body,
                         re.M), body
    finally:
        rc, _ = gw.stop()
    assert rc == 0, gw.log()
    assert "recording stopped" in gw.log(), gw.log()
    return path, sent, hashlib.sha256(text.encode()).hexdigest()


def main():
    require_adapters("synth", "bvh", "mcap-record", "mcap-replay")
    if not shutil.which("node"):
        skip("node not found (docker/install-deps.sh installs nodejs)")
    if not os.path.isdir(os.path.join(NODE_MODULES, "@mcap", "core")):
        skip(f"@mcap/core not in {NODE_MODULES} (the build runs npm ci there when npm is "
             "installed)")
    import tempfile
    with tempfile.TemporaryDirectory(prefix="xrgate-mcap-") as tmp:
        # 1. a 5-second take with zstd (5 entities x 120 Hz), shorter ones with lz4 and none
        for comp, n in (("zstd", 3000), ("lz4", 600), ("none", 600)):
            path, sent, sha = record(tmp, comp, n)
            d = read(path, "indexed")
            got = check_file(d, sent)
            st = d["statistics"]
            n_tf = sum(1 for m in d["messages"] if d["channels"][str(m["channel"])]["topic"] == "/tf")
            assert int(st["messageCount"]) == len(d["messages"]) == got + n_tf, st
            assert st["chunkCount"] == d["chunkIndexes"] >= 1, st
            meta = {m["name"]: m["metadata"] for m in d["metadata"]}
            assert meta["xrgate"]["gateway_id"] == "mcap-test", meta
            assert meta["xrgate"]["config_sha256"] == sha, meta
            # the streaming reader agrees, and sees the footer (with CRCs validated)
            s = read(path, "stream")
            assert s["footer"] and len(s["messages"]) == len(d["messages"])
            print(f"ok: {comp}: {got} samples of {sent} sent, {st['chunkCount']} chunks, "
                  f"{os.path.getsize(path)} bytes")

            if comp == "zstd":
                record_replay_record(tmp, path)
            if comp == "none":
                malformed(tmp, path)
        tf_replay(tmp)
        bad_level(tmp)
        rotation(tmp)
        stalled_disk(tmp)
        skeleton(tmp)
        churn(tmp)

        # 2. SIGKILL: the completed chunks are readable
        path = os.path.join(tmp, "killed.mcap")
        gw = Gateway(CONFIG.format(path=path, comp="zstd", chunk_kb=16))
        try:
            gw.wait_counter("rec", "samples_recorded", 1200, timeout=30)
            gw.wait_counter("rec", "file_bytes", 40000, timeout=30)
        finally:
            gw.stop(signal.SIGKILL)
        d = read(path, "stream")
        assert "footer" not in d, "a killed recording has no footer"
        got = check_file(d, killed=True)
        print(f"ok: SIGKILL: {got} samples in the complete chunks of "
              f"{os.path.getsize(path)} bytes")
    print("ok")


if __name__ == "__main__":
    main()
    sys.exit(0)
