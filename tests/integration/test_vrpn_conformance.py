"""Integration: what mainline VRPN peers showed (issue 16, VRPN items 1-4), with raw-byte VRPN
servers and clients on loopback around one gateway.

1. Sensor numbers survive a relay: a server's tracker "Rig" with 12 sensors (Pos_Quat x = 100 + s)
   reaches a raw client through vrpn-client "rig" -> vrpn-server as tracker "rig" sensors 0..11
   with the same numbers (text order would serve sensor 10 as 2). A second device "Other" whose
   sensor 0 arrives later into the same tracker conflicts: it is served as the lowest free
   number, 12, with one warning naming both entities.
2. A connected, silent button device is never STALE: "Pad" sends one Button States and nothing
   else; its controller entity stays HELD (age below stale_ms) over 5 keepalive samples, and goes
   inactive, then STALE, once the connection is gone.
3. Every control value leaves: the mainline recording session1_tcp (Tracker0, Button0, Dial0,
   Tracker1, Analog0) replayed into vrpn-client "s1"; with the default tracker naming each entity
   with buttons/analogs is served as a VRPN device named in a log line, and a raw client reads
   there exactly the entity's buttons (Button States) and analogs (Analog Channel), the dials'
   sums at channels 64 and 65.
4. /api/entities?t_ns=<past> returns the velocities at that time: "Body" sends Pos_Quat +
   Velocity twice with different velocities; at the first sample's time (EXACT) and halfway
   (INTERPOLATED) the answer carries the first / the mean velocity and angular velocity, not the
   newest.
5. Controls devices are bounded: 502 button-only devices into one vrpn-server make one own the
   tracker's name and 500 get devices named after them; the last one is not served, with one
   warning saying why, so peers' controls cannot use up the names that trackers need."""
import math
import os
import re
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from xgtest import Gateway, wait_until  # noqa: E402
from test_vrpn_server import COOKIE, Client, describe, msg, server_port  # noqa: E402
from test_vrpn_client import ReplayServer  # noqa: E402

TYPES = ["vrpn_Tracker Pos_Quat", "vrpn_Tracker Velocity", "vrpn_Button States"]


def now_tv():
    t = time.time()
    return int(t), int((t - int(t)) * 1e6)


def tmsg(sender, typ, body):
    """msg() stamped with the wall clock (the client maps source times to its clock)."""
    sec, usec = now_tv()
    raw = msg(sender, typ, body)
    return raw[:4] + struct.pack(">II", sec, usec) + raw[12:]


class RawServer(threading.Thread):
    """A raw VRPN server (TCP-only) for the devices named; each loop pass (30 ms) sends what
    self.report(device index) returns and anything queued in self.once."""

    def __init__(self, devices):
        super().__init__(daemon=True)
        self.lis = socket.socket()
        self.lis.bind(("127.0.0.1", 0))
        self.lis.listen(1)
        self.port = self.lis.getsockname()[1]
        self.devices = devices
        self.active = set()
        self.once = []
        self.stop = False
        self.closed = threading.Event()

    def report(self, name):
        return b""

    def run(self):
        self.lis.settimeout(10)
        c, _ = self.lis.accept()
        c.settimeout(0.03)
        out = COOKIE + describe("sender", 0, "VRPN Control")
        for i, n in enumerate(self.devices):
            out += describe("sender", i + 1, n)
        for i, n in enumerate(TYPES):
            out += describe("type", i, n)
        c.sendall(out)
        while not self.stop:
            try:
                if not c.recv(65536):
                    break
            except socket.timeout:
                pass
            out = b"".join(self.report(n) for n in self.devices if n in self.active)
            while self.once:
                out += self.once.pop(0)
            if out:
                c.sendall(out)
        c.close()
        self.lis.close()
        self.closed.set()


class SensorServer(RawServer):
    def report(self, name):
        if name == "Rig":
            return b"".join(tmsg(1, 0, struct.pack(">ii7d", s, s, 100.0 + s, 0, 0, 0, 0, 0, 1))
                            for s in range(12))
        return tmsg(2, 0, struct.pack(">ii7d", 0, 0, 500.0, 0, 0, 0, 0, 0, 1))


def sensor_numbers(gw, src):
    src.active.add("Rig")
    wait_until(lambda: gw.counters("vrpn")["trackers"] >= 1
               and gw.counters("vrpn")["sensors"] >= 12, what="12 sensors")
    c = Client(server_port(gw), "tcp", senders=("rig",))
    try:
        c.until(lambda: len(c.latest("rig", "pq")) == 12, what="12 sensors of tracker rig")
        got = {s: v[0] for s, v in c.latest("rig", "pq").items()}
        assert got == {s: 100.0 + s for s in range(12)}, f"sensor -> x: {got}"
        src.active.add("Other")
        line = ("entity rig/Other/0: sensor 0 of tracker 'rig' (its source's number) is held by "
                "'rig/Rig/0': serving it as sensor 12")
        assert gw.wait_log(line), gw.log()[-3000:]
        c.until(lambda: c.latest("rig", "pq").get(12, [0])[0] == 500.0, what="Other as sensor 12")
        got = {s: v[0] for s, v in c.latest("rig", "pq").items()}
        assert got == {**{s: 100.0 + s for s in range(12)}, 12: 500.0}, f"sensor -> x: {got}"
        assert gw.log().count("sensor 0 of tracker 'rig'") == 1
    finally:
        c.close()
    print("1. sensors keep the source's numbers (0..11); the conflicting one is 12, warned")


def controller_not_stale(gw, pad):
    pad.once.append(msg(1, 2, struct.pack(">4i", 3, 1, 0, 1)))  # Button States [1, 0, 1]
    e = wait_until(lambda: gw.entities().get("pad/Pad"), what="controller entity pad/Pad")
    assert e["kind"] == "controller" and e["extra"]["buttons"] == [1, 0, 1], e
    first, seen = e["samples"], []
    end = time.monotonic() + 10
    while time.monotonic() < end:
        e = gw.entities()["pad/Pad"]
        seen.append((e["quality"], e["age_ms"], e["active"]))
        if e["samples"] >= first + 5:
            break
        time.sleep(0.02)
    assert e["samples"] >= first + 5, f"keepalive samples: {first} -> {e['samples']}"
    bad = [s for s in seen if s[0] == "STALE" or s[1] >= 500 or not s[2]]
    assert not bad, f"{len(bad)} of {len(seen)} answers stale or inactive: {bad[:5]}"
    pad.stop = True  # the connection goes: inactive, then STALE (no keepalive any more)
    assert pad.closed.wait(5)
    wait_until(lambda: (lambda x: x["quality"] == "STALE" and not x["active"])(
        gw.entities()["pad/Pad"]), what="pad/Pad stale and inactive after the connection closed")
    print(f"2. silent connected button device: {len(seen)} answers, none STALE; STALE once gone")


def controls_served(gw, s1):
    assert s1.done.wait(15) and s1.error is None, s1.error
    wait_until(lambda: len(gw.entities().get("s1/Dial0", {}).get("extra", {}).get("analogs", []))
               == 66, what="dials 0 and 1 at analogs[64], [65] of s1/Dial0")
    ents = gw.entities()
    with_controls = sorted(n for n, e in ents.items() if n.startswith("s1/") and e["extra"])
    assert with_controls == ["s1/Analog0", "s1/Button0", "s1/Dial0"], with_controls
    devices = {}
    for name in with_controls:
        m = wait_until(lambda: re.search(rf"entity {re.escape(name)}: buttons/analogs served as VRPN "
                                   r"device '([^']+)'", gw.log()),
                       what=f"the device serving {name}")
        devices[name] = m[1]
    assert len(set(devices.values())) == 3 and "s1" in devices.values(), devices
    assert not re.search(r"buttons/analogs not served", gw.log())
    c = Client(server_port(gw), "tcp", senders=tuple(devices.values()))

    def states(dev):
        st = None
        for r in c.reports:
            if r[1] == dev and r[2] == "states":
                st = list(r[4])
            elif r[1] == dev and r[2] == "change" and st is not None:
                st[r[4][0]] = r[4][1]
        return st

    def analogs(dev):
        an = [r[4] for r in c.reports if r[1] == dev and r[2] == "analog"]
        return an[-1] if an else None

    def same():
        ents = gw.entities()
        for name, dev in devices.items():
            ex = ents[name]["extra"]
            if "buttons" in ex and states(dev) != ex["buttons"]:
                return False
            if "analogs" in ex:
                got = analogs(dev)
                if got is None or len(got) != len(ex["analogs"]) or any(
                        abs(a - b) > 1e-8 * max(1.0, abs(b)) for a, b in zip(got, ex["analogs"])):
                    return False
        return True

    try:
        c.until(same, timeout=5, what=f"every entity's buttons/analogs at {devices}")
        dial = analogs(devices["s1/Dial0"])
        assert len(dial) == 66 and dial[:64] == [0.0] * 64 and dial[64] != 0 and dial[65] != 0, dial
    finally:
        c.close()
    print(f"3. buttons/analogs/dials of every entity served: {devices}; dials {dial[64:]}")


def velocity_body(v, w_z):
    """Velocity body: sensor 0, v, the rotation increment about z over dt = 0.1 s, dt."""
    h = w_z * 0.1 / 2
    return struct.pack(">ii8d", 0, 0, *v, 0, 0, math.sin(h), math.cos(h), 0.1)


def past_velocities(gw, body):
    def sample(x, v, wz):
        body.once.append(tmsg(1, 0, struct.pack(">ii7d", 0, 0, x, 0, 0, 0, 0, 0, 1)) +
                         tmsg(1, 1, velocity_body(v, wz)))
        return wait_until(lambda: (lambda e: e if e and e["velocity"] == list(v)
                                   and e["position"][0] == x else None)(
            gw.entities().get("body/Body/0")), what=f"sample at x {x}")

    e1 = sample(0.0, (1.0, 0.0, 0.0), 0.5)
    e2 = sample(0.5, (3.0, 0.0, 0.0), 1.5)
    t1, t2 = e1["sample_ns"], e2["sample_ns"]
    assert t2 > t1, (t1, t2)

    def at(t):
        return {e["name"]: e for e in gw.get_json(f"/api/entities?t_ns={t}")["entities"]}[
            "body/Body/0"]

    def near(a, b, tol=1e-9):
        return all(abs(x - y) <= tol for x, y in zip(a, b))

    ex = at(t1)
    assert ex["quality"] == "EXACT" and ex["position"][0] == 0.0, ex
    assert ex["velocity"] == [1.0, 0.0, 0.0], f"velocity at t1: {ex['velocity']}"
    assert near(ex["angular_velocity"], [0.0, 0.0, 0.5]), ex["angular_velocity"]
    mid = at((t1 + t2) // 2)
    u = ((t1 + t2) // 2 - t1) / (t2 - t1)
    assert mid["quality"] == "INTERPOLATED", mid
    assert near(mid["position"], [0.5 * u, 0, 0], 1e-8), mid["position"]
    assert near(mid["velocity"], [1.0 + 2.0 * u, 0, 0], 1e-8), f"velocity halfway: {mid['velocity']}"
    assert near(mid["angular_velocity"], [0, 0, 0.5 + u], 1e-8), mid["angular_velocity"]
    now = gw.entities()["body/Body/0"]
    assert now["velocity"] == [3.0, 0.0, 0.0] and near(now["angular_velocity"], [0, 0, 1.5])
    print("4. t_ns in the past: velocity/angular velocity of that time (EXACT, INTERPOLATED)")


def controls_bounded(gw, many):
    n = len(many.devices)
    many.once.append(b"".join(msg(i + 1, 2, struct.pack(">2i", 1, 1)) for i in range(n)))
    wait_until(lambda: gw.counters("vrpn2")["controls_devices"] == 500, what="500 controls devices")
    m = wait_until(lambda: re.search(r"entity (many/D\d+): buttons/analogs not served: tracker 'many' "
                               r"serves those of 'many/D\d+', and a VRPN device named "
                               r"'many/D\d+' would be one too many \(at most 500 such devices\)",
                               gw.log()), what="the warning for the 502nd device")
    assert gw.log().count("would be one too many") == 1
    c = Client(server_port(gw, "vrpn2"), "tcp", senders=("many",))
    try:
        c.until(lambda: len({r[1] for r in c.reports if r[2] == "states"}) == n - 1,
                what=f"{n - 1} devices' Button States")
        served = {r[1] for r in c.reports if r[2] == "states"}
        assert all(r[4] == [1] for r in c.reports if r[2] == "states")
        assert "many" in served and m[1] not in served, (m[1], sorted(served)[:5])
        assert len(served - {"many"}) == 500 and all(d.startswith("many/D") for d in served - {"many"})
    finally:
        c.close()
    print(f"5. controls devices capped at 500 (+ the tracker's name); {m[1]} warned, not served")


def main():
    src = SensorServer(["Rig", "Other"])
    many = RawServer([f"D{i}" for i in range(502)])
    pad = RawServer(["Pad"])
    body = RawServer(["Body"])
    s1 = ReplayServer("session1_tcp")
    for s in (src, pad, body, many):
        s.start()
    cfg = f"""
gateway:
  predict: {{max_horizon_ms: 0}}
adapters:
  - name: rig
    type: vrpn-client
    devices: ["Rig@tcp://127.0.0.1:{src.port}", "Other@tcp://127.0.0.1:{src.port}"]
  - name: pad
    type: vrpn-client
    devices: ["Pad@tcp://127.0.0.1:{pad.port}"]
  - name: body
    type: vrpn-client
    devices: ["Body@tcp://127.0.0.1:{body.port}"]
  - name: s1
    type: vrpn-client
    devices: ["Tracker0@tcp://127.0.0.1:{s1.port}", "Button0@tcp://127.0.0.1:{s1.port}",
              "Dial0@tcp://127.0.0.1:{s1.port}", "Tracker1@tcp://127.0.0.1:{s1.port}",
              "Analog0@tcp://127.0.0.1:{s1.port}"]
  - name: many
    type: vrpn-client
    devices: [{", ".join(f'"D{i}@tcp://127.0.0.1:{many.port}"' for i in range(502))}]
  - name: vrpn
    type: vrpn-server
    listen: "127.0.0.1:0"
    rate_hz: 50
    exclude: "many/*"
  - name: vrpn2
    type: vrpn-server
    listen: "127.0.0.1:0"
    rate_hz: 50
    include: "many/*"
"""
    with Gateway(cfg) as gw:
        try:
            only = sys.argv[1:]  # item numbers to run (all by default)
            for n, fn, arg in ((1, sensor_numbers, src), (2, controller_not_stale, pad),
                               (3, controls_served, s1), (4, past_velocities, body),
                               (5, controls_bounded, many)):
                if not only or str(n) in only:
                    fn(gw, arg)
        except BaseException:
            print(gw.log()[-8000:])
            raise
        finally:
            src.stop = body.stop = pad.stop = many.stop = True
    print("OK")


if __name__ == "__main__":
    main()
