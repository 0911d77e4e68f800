"""Integration: the rgmp-client adapter against Python RGMP v2 servers on loopback (raw bytes).

- A suit server streams an analytic motion (hips <- LTP_ENU, head / hands <- hips, hips velocities,
  a status group): /api/entities shows the poses composed to the root frame and converted from
  LTP_ENU to the internal Y-up frame (float32 tolerance), the velocities, the status bits as
  buttons and the CUSTOM values as analogs.
- An out-of-order frame is dropped and counted; a Device Disconnect removes the device's entities.
- Bad input (bad prefix, huge msg_len, bad JSON, truncated payload, unknown device) closes the
  connection with one log line naming the problem, marks the entities inactive, and the client
  reconnects; a second rgmp-client (device_boot clock) and a synth source are not disturbed.

The module also holds the RGMP helpers used by test_rgmp_server.py and test_rgmp_roundtrip.py."""
import json
import math
import socket
import struct
import sys
import time

from xgtest import Gateway, wait_until

DEV = 305419896

# ---- RGMP helpers ----


def header(prefix, n):
    return struct.pack("<II", prefix, n)


def definition_frame(obj):
    data = json.dumps(obj, separators=(",", ":")).encode()
    return header(1, len(data)) + data


def data_frame(device, group, ts_us, values=b""):
    payload = struct.pack("<IIQ", device, group, ts_us) + values
    return header(2, len(payload)) + payload


def disconnect_frame(device):
    return header(3, 4) + struct.pack("<I", device)


def f32(*v):
    return struct.pack("<%df" % len(v), *v)


def round32(v):
    return struct.unpack("<%df" % len(v), struct.pack("<%df" % len(v), *v))


def qmul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz)


def qrot(q, v):
    x, y, z, w = qmul(qmul(q, (v[0], v[1], v[2], 0.0)), (-q[0], -q[1], -q[2], q[3]))
    return (x, y, z)


def qaxis(axis, angle):
    n = math.sqrt(sum(c * c for c in axis))
    s = math.sin(angle / 2) / n
    return (axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2))


def compose(ab, bc):
    """§3 chaining: T_a<-c = T_a<-b o T_b<-c; a pose is (position, quaternion)."""
    p = qrot(ab[1], bc[0])
    return ((ab[0][0] + p[0], ab[0][1] + p[1], ab[0][2] + p[2]), qmul(ab[1], bc[1]))


def enu_to_yup_pos(p):
    return (p[0], p[2], -p[1])


def enu_to_yup_quat(q):
    return (q[0], q[2], -q[1], q[3])


def yup_to_enu_pos(p):
    return (p[0], -p[2], p[1])


def yup_to_enu_quat(q):
    return (q[0], -q[2], q[1], q[3])


def quat_close(a, b, tol):
    d = abs(sum(x * y for x, y in zip(a, b)))
    return 1.0 - d < tol


def vec_close(a, b, tol):
    return all(abs(x - y) <= tol for x, y in zip(a, b))


class RgmpServer:
    """A listening socket on 127.0.0.1 (ephemeral port) that accepts one connection at a time."""

    def __init__(self):
        self.lsock = socket.socket()
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(4)
        self.port = self.lsock.getsockname()[1]
        self.conn = None

    def accept(self, timeout=10.0):
        self.lsock.settimeout(timeout)
        self.conn, _ = self.lsock.accept()
        self.conn.settimeout(timeout)
        return self.conn

    def send(self, b):
        self.conn.sendall(b)

    def wait_closed(self, timeout=5.0):
        """True when the peer closes the connection (reads return EOF)."""
        self.conn.settimeout(timeout)
        try:
            while True:
                b = self.conn.recv(4096)
                if not b:
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False

    def close(self):
        if self.conn:
            self.conn.close()
            self.conn = None

    def shutdown(self):
        self.close()
        self.lsock.close()


# ---- the suit stream ----

SUIT_DEF = {
    "protocol_name": "RGMP", "protocol_version": "2.0.0", "device_id": DEV,
    "device_type": "smartsuit", "timestamp_epoch": "unix_epoch",
    "device_info": {"address": "127.0.0.1"},
    "static_data": [
        {"data_type": "FLOAT[7]", "measure_type": "TRANSFORM", "target_frame": "head_sensor",
         "reference_frame": "head", "value": [0.0, 0.02, 0.09, 0.0, 0.0, 0.0, 1.0]}],
    "groups": [
        {"name": "pose", "expected_rate_hz": 100, "streams": [
            {"data_type": "FLOAT[7]", "measure_type": "TRANSFORM", "target_frame": "hips",
             "reference_frame": "LTP_ENU"},
            {"data_type": "FLOAT[7]", "measure_type": "TRANSFORM", "target_frame": "head",
             "reference_frame": "hips"},
            {"data_type": "FLOAT[7]", "measure_type": "TRANSFORM", "target_frame": "left_hand",
             "reference_frame": "hips"},
            {"data_type": "FLOAT[7]", "measure_type": "TRANSFORM", "target_frame": "right_hand",
             "reference_frame": "hips"},
            {"data_type": "FLOAT[3]", "measure_type": "LINEAR_VELOCITY", "target_frame": "hips",
             "reference_frame": "LTP_ENU"},
            {"data_type": "FLOAT[3]", "measure_type": "ANGULAR_VELOCITY", "target_frame": "hips",
             "reference_frame": "LTP_ENU"},
            {"data_type": "FLOAT[3]", "measure_type": "LINEAR_VELOCITY", "target_frame": "head",
             "reference_frame": "hips"},
            {"data_type": "FLOAT[3]", "measure_type": "ANGULAR_VELOCITY",
             "target_frame": "left_hand"},
            {"data_type": "FLOAT[2]", "measure_type": "TEMPERATURE", "target_frame": "hips"}]},
        {"name": "status", "expected_rate_hz": 10, "streams": [
            {"data_type": "UINT32", "measure_type": "STATUS_FLAGS", "target_frame": "head_sensor",
             "bit_mapping": {"0": "is_magnetometer_saturated", "2": "is_gyroscope_saturated"}},
            {"data_type": "UINT64", "measure_type": "CUSTOM", "target_frame": "hub",
             "custom_label": "packet_counter"},
            {"data_type": "FLOAT", "measure_type": "CUSTOM", "target_frame": "hub",
             "custom_label": "battery_pct"}]}]}

FRAMES = ("hips", "head", "left_hand", "right_hand")


def local_poses(t):
    """ENU poses of the four streamed frames at time t (s), each relative to its reference, with
    the values rounded to float32 as they travel."""
    hips = ((0.3 * math.sin(t), 0.2 * math.cos(0.5 * t), 0.95 + 0.02 * math.sin(2 * t)),
            qaxis((0, 0, 1), 0.5 * math.sin(t)))
    head = ((0.0, 0.0, 0.62), qaxis((1, 0, 0), 0.2 * math.sin(1.3 * t)))
    lh = ((-0.75 + 0.1 * math.sin(t), 0.1, 0.45), qaxis((0, 1, 0), 0.4 * math.sin(0.7 * t)))
    rh = ((0.75, 0.1 * math.cos(t), 0.45), qaxis((1, 1, 0), 0.3 * math.cos(0.9 * t)))
    out = []
    for p, q in (hips, head, lh, rh):
        v = round32(list(p) + list(q))
        out.append((tuple(v[:3]), tuple(v[3:])))
    return out


def pose_values(t):
    vals = b""
    for p, q in local_poses(t):
        vals += f32(*p, *q)
    vel = (0.3 * math.cos(t), -0.1 * math.sin(0.5 * t), 0.04 * math.cos(2 * t))
    angvel = (0.0, 0.0, 0.5 * math.cos(t))
    head_v, lh_w = extra_vectors(t)
    return (vals + f32(*vel) + f32(*angvel) + f32(*head_v) + f32(*lh_w) + f32(21.5, 22.5),
            round32(vel), round32(angvel))


def extra_vectors(t):
    """Head velocity in hips coordinates, left-hand angular velocity in its own frame."""
    return round32((0.1 * math.sin(t), 0.05, -0.02)), round32((0.3, -0.2 * math.cos(t), 0.1))


def expected_root(t):
    loc = local_poses(t)
    hips = loc[0]
    return {"hips": hips, "head": compose(hips, loc[1]), "left_hand": compose(hips, loc[2]),
            "right_hand": compose(hips, loc[3])}


OTHER_DEF = {
    "device_id": 7, "device_type": "glove", "timestamp_epoch": "device_boot",
    "groups": [{"name": "g", "expected_rate_hz": 50, "streams": [
        {"data_type": "DOUBLE[3]", "measure_type": "POSITION", "target_frame": "palm",
         "reference_frame": "LTP_ENU"},
        {"data_type": "DOUBLE[4]", "measure_type": "ORIENTATION", "target_frame": "palm",
         "reference_frame": "LTP_ENU"}]}]}


def other_values(k):
    return struct.pack("<7d", 1.0, 2.0, 0.01 * k, 0.0, 0.0, 0.0, 1.0)


CONFIG = """
gateway:
  predict: {{max_horizon_ms: 0}}
  entity: {{stale_ms: 60000, expire_ms: 120000}}
adapters:
  - name: suit
    type: rgmp-client
    connect: "127.0.0.1:{suit}"
  - name: glove
    type: rgmp-client
    connect: "127.0.0.1:{glove}"
  - name: demo
    type: synth
    bodies: 1
    head: false
    hands: false
"""


def check_suit(gw, t_last, vel, angvel):
    exp = expected_root(t_last)
    name = f"suit/smartsuit-{DEV}/"
    ents = wait_until(lambda: (lambda e: e if all(name + f in e for f in FRAMES) else None)(
        gw.entities(name)), what="the four suit entities")
    assert len(ents) == 4, sorted(ents)  # no entity for head_sensor (static) or hub (no pose)
    for f in FRAMES:
        e = ents[name + f]
        p, q = exp[f]
        assert vec_close(e["position"], enu_to_yup_pos(p), 2e-6), (f, e["position"], p)
        assert quat_close(e["orientation"], enu_to_yup_quat(q), 1e-9), (f, e["orientation"], q)
        assert e["active"] is True
        assert e["origin"] == "suit"
    # the hierarchy: a frame streamed relative to another streamed frame names it as parent
    assert {f: ents[name + f].get("parent") for f in FRAMES} == {
        "hips": None, "head": name + "hips", "left_hand": name + "hips",
        "right_hand": name + "hips"}, {f: ents[name + f].get("parent") for f in FRAMES}
    hips = ents[name + "hips"]
    assert not hips["velocity_estimated"], hips
    assert vec_close(hips["velocity"], enu_to_yup_pos(vel), 1e-6), (hips["velocity"], vel)
    assert vec_close(hips["angular_velocity"], enu_to_yup_pos(angvel), 1e-6), hips
    # a vector relative to a streamed frame is rotated into the root frame by that frame's
    # orientation; one without reference_frame is expressed in its own target frame
    head_v, lh_w = extra_vectors(t_last)
    want_v = qrot(exp["hips"][1], head_v)
    want_w = qrot(exp["left_hand"][1], lh_w)
    e = ents[name + "head"]
    assert vec_close(e["velocity"], enu_to_yup_pos(want_v), 1e-6), (e["velocity"], want_v)
    e = ents[name + "left_hand"]
    assert vec_close(e["angular_velocity"], enu_to_yup_pos(want_w), 1e-6), (e, want_w)
    return ents


def main():
    suit, glove = RgmpServer(), RgmpServer()
    with Gateway(CONFIG.format(suit=suit.port, glove=glove.port)) as gw:
        try:
            run(gw, suit, glove)
        except BaseException:
            print(gw.log())
            raise
        finally:
            suit.shutdown()
            glove.shutdown()
        gw_lines = list(gw.lines)
    print("\n".join(l for l in gw_lines if "protocol error" in l or "closed" in l))
    print("rgmp-client: ok")
    return 0


def run(gw, suit, glove):
    suit.accept()
    glove.accept()
    glove.send(definition_frame(OTHER_DEF))
    gk = [0]

    def glove_tick():
        gk[0] += 1
        glove.send(data_frame(7, 0, 1000000 + 20000 * gk[0], other_values(gk[0])))

    for _ in range(3):
        glove_tick()

    # ---- the analytic stream ----
    suit.send(definition_frame(SUIT_DEF))
    n = 40
    now_us = int(time.time() * 1e6)
    t0 = 100.0
    for k in range(n):
        ts = now_us - (n - k) * 10000
        vals, vel, angvel = pose_values(t0 + 0.01 * k)
        suit.send(data_frame(DEV, 0, ts, vals))
    t_last = t0 + 0.01 * (n - 1)
    suit.send(data_frame(DEV, 1, now_us - 5000,
                         struct.pack("<IQf", 0b101, 123456, 87.5)))
    glove_tick()

    def all_in():
        e = gw.entities(f"suit/smartsuit-{DEV}/hips")
        return e and e[f"suit/smartsuit-{DEV}/hips"]["samples"] >= n and \
            e[f"suit/smartsuit-{DEV}/hips"]["extra"].get("analogs")
    wait_until(all_in, what="all suit frames")
    ents = check_suit(gw, t_last, vel, angvel)
    extra = ents[f"suit/smartsuit-{DEV}/hips"]["extra"]
    buttons = extra["buttons"]
    assert len(buttons) == 32 and buttons[0] == 1 and buttons[1] == 0 and buttons[2] == 1 \
        and sum(buttons) == 2, extra
    assert extra["analogs"] == [123456.0, 87.5], extra
    assert gw.wait_log("measure_type \"TEMPERATURE\"") and gw.wait_log("skipped (D4)"), gw.log()
    assert gw.log().count("TEMPERATURE") == 1, "the unknown measure is warned about once"
    a = gw.adapter("suit")
    assert a["state"] == "streaming" and a["counters"]["data_frames"] == n + 1, a

    # glove: device_boot timestamps mapped by offset estimation
    g = wait_until(lambda: gw.entities("glove/glove-7/palm"),
                   what="glove entity")["glove/glove-7/palm"]
    assert vec_close(g["position"], (1.0, 0.01 * gk[0], -2.0), 1e-9), g

    kinds = {f: e["kind"] for f, e in ents.items()}
    assert kinds[f"suit/smartsuit-{DEV}/head"] == "head", kinds
    assert kinds[f"suit/smartsuit-{DEV}/left_hand"] == "left_hand", kinds
    assert kinds[f"suit/smartsuit-{DEV}/hips"] == "rigid_body", kinds

    # a second device on the glove connection without timestamp_epoch: warned about once,
    # treated like device_boot (D10)
    d8 = json.loads(json.dumps(OTHER_DEF))
    d8["device_id"] = 8
    del d8["timestamp_epoch"]
    glove.send(definition_frame(d8) + data_frame(8, 0, 5, other_values(1)) +
               definition_frame(d8) + data_frame(8, 0, 6, other_values(2)))
    wait_until(lambda: gw.entities("glove/glove-8/palm").get("glove/glove-8/palm", {}).get(
        "samples") == 2, what="device 8")
    assert gw.wait_log("device 8: timestamp_epoch (absent)"), gw.log()
    warn = [l for l in gw.lines if "device 8: timestamp_epoch (absent)" in l]
    assert len(warn) == 1 and "treated like device_boot" in warn[0], warn

    # ---- out-of-order frame: dropped and counted, pose unchanged ----
    vals, _, _ = pose_values(t0)
    suit.send(data_frame(DEV, 0, now_us - (n + 5) * 10000, vals))
    suit.send(data_frame(DEV, 1, now_us - 4000, struct.pack("<IQf", 0, 123457, 87.0)))
    wait_until(lambda: gw.adapter("suit")["counters"]["rgmp_frames_out_of_order"] == 1,
             what="out-of-order counter")
    wait_until(lambda: gw.entities(f"suit/smartsuit-{DEV}/hips")[
        f"suit/smartsuit-{DEV}/hips"]["extra"]["analogs"][0] == 123457.0, what="status frame")
    check_suit(gw, t_last, vel, angvel)

    # ---- bad input: closed with a clear log line, reconnect, nothing else affected ----
    bad = [
        ("bad prefix", header(7, 0), "msg_prefix = 7"),
        ("huge msg_len", header(1, 0x7fffffff), "msg_len = 2147483647"),
        ("bad JSON", header(1, 12) + b'{"device_id"', "JSON"),
        ("truncated payload", header(2, 128) + struct.pack("<IIQ", DEV, 0, now_us), "truncated"),
        ("unknown device", data_frame(999, 0, now_us), "999"),
    ]
    for what, payload, text in bad:
        before = len(gw.lines)
        glove_before = gw.adapter("glove")["counters"]
        suit.send(payload)
        if what == "truncated payload":
            suit.conn.shutdown(socket.SHUT_WR)
        assert suit.wait_closed(), f"{what}: connection not closed"
        line = wait_until(lambda: [l for l in gw.lines[before:] if "protocol error from 127.0.0.1:"
                                 in l], what=f"{what}: log line")
        assert len(line) == 1 and text in line[0], (what, line)
        assert "closing the connection" in line[0]
        # the suit's entities are marked inactive at once
        wait_until(lambda: all(not e["active"] for e in
                             gw.entities(f"suit/smartsuit-{DEV}/").values()),
                 what=f"{what}: entities inactive")
        suit.close()
        suit.accept(timeout=5)  # the client reconnects after its backoff
        suit.send(definition_frame(SUIT_DEF))
        now_us = int(time.time() * 1e6)
        vals, vel, angvel = pose_values(t_last)
        suit.send(data_frame(DEV, 0, now_us, vals))
        wait_until(lambda: all(e["active"] for e in
                             gw.entities(f"suit/smartsuit-{DEV}/").values()),
                 what=f"{what}: entities active again")
        check_suit(gw, t_last, vel, angvel)
        # the other connection and the synth source are unaffected
        glove_tick()
        ga = gw.adapter("glove")
        assert ga["counters"]["connects"] == 1 and ga["counters"]["protocol_errors"] == 0, ga
        assert ga["state"] == "streaming"
        wait_until(lambda: gw.adapter("glove")["counters"]["data_frames"] ==
                 glove_before["data_frames"] + 1, what="glove frame")
        assert gw.entities("demo/body0")["demo/body0"]["active"]
    a = gw.adapter("suit")
    assert a["counters"]["protocol_errors"] == len(bad), a
    assert a["counters"]["connects"] == len(bad) + 1, a

    # ---- re-definition without the hands: they are removed, the rest keeps its ids ----
    ids = {k: v["id"] for k, v in gw.entities(f"suit/smartsuit-{DEV}/").items()}
    d2 = json.loads(json.dumps(SUIT_DEF))
    d2["groups"][0]["streams"] = d2["groups"][0]["streams"][:2]
    suit.send(definition_frame(d2))
    p = local_poses(t_last)
    suit.send(data_frame(DEV, 0, int(time.time() * 1e6), f32(*p[0][0], *p[0][1], *p[1][0], *p[1][1])))
    e2 = wait_until(lambda: (lambda e: e if len(e) == 2 else None)(
        gw.entities(f"suit/smartsuit-{DEV}/")), what="re-definition")
    for k, v in e2.items():
        assert ids[k] == v["id"], (k, ids, v)
    assert gw.adapter("suit")["counters"]["redefinitions"] == 1

    # ---- Device Disconnect: the device's entities are removed at once ----
    suit.send(disconnect_frame(DEV))
    wait_until(lambda: not gw.entities("suit/"), what="entities removed after Device Disconnect")
    assert len(gw.entities("glove/")) == 2, "the other devices are untouched"
    a = gw.adapter("suit")
    assert a["counters"]["device_disconnects"] == 1 and a["counters"]["devices"] == 0, a
    assert a["counters"]["protocol_errors"] == len(bad)


if __name__ == "__main__":
    sys.exit(main())
