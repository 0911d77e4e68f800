"""Integration: round trip synth -> vrpn-server -> vrpn-client -> table.

One gateway runs a synthetic rig ("demo") and a vrpn-server in the Z-up frame (`frame: vrpn-zup`,
port 0); a second one runs two vrpn-client adapters asking that server (at the port it chose) for
tracker "demo" -- "rt" TCP-only (demo@tcp://127.0.0.1:PORT) and "ru" UDP+TCP
(demo@127.0.0.1:PORT), both also `frame: vrpn-zup`.

With predict.max_horizon_ms 0 every pose a table answers is its newest sample exactly: the server
sends the synth's sample (converted to Z-up: a permutation with a sign flip, exact in binary64),
the client converts it back, so /api/entities must show the same pose for demo/<entity> (first
gateway) and rt/demo/<sensor> (second) within 1e-9. Sensors are numbered in natural
(numeric-aware) name order: with 12 bodies demo/body2 is sensor 2 and demo/body10 sensor 10
(plain text order would swap them) -- the doubles are equal, so their printed digits are too. The synth runs at 2 Hz so that the two
answers usually hold the same sample; a comparison is retried when a new sample is still on its
way. Velocities travel as VRPN's rotation increment over dt and come back through log(q)/dt:
within 1e-6 rad/s.

Buttons and analogs: a raw-byte VRPN server (Python) feeds device "Wand" (Pos_Quat, Button States,
Button Change, Analog Channel) to a vrpn-client "rig"; the vrpn-server serves tracker "rig" with
the entity's buttons (Button States at connect and before a pong, Button Change when one changes,
over TCP) and analogs (Analog Channel, over UDP in UDP+TCP mode), checked by raw clients.
Sensor numbering: a raw server's devices B then A appear one after the other (B = sensor 0, A = 1),
expire, and come back together: they keep their numbers.
Skipped (77) when this build has no vrpn-client."""
import os
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from xgtest import Gateway, require_adapters  # noqa: E402
from test_vrpn_server import COOKIE, Client, describe, msg, server_port  # noqa: E402

TOL = 1e-9



def main():
    require_adapters("vrpn-client", "vrpn-server")
    # the server in one gateway (port 0), the clients in a second one told the chosen port: no
    # port is picked before the daemon that binds it
    server_cfg = """
gateway:
  predict: {max_horizon_ms: 0}
adapters:
  - name: demo
    type: synth
    rate_hz: 2
    bodies: 12
  - name: vrpn
    type: vrpn-server
    listen: "127.0.0.1:0"
    frame: vrpn-zup
    rate_hz: 100
    include: "demo/*"
    send_velocity: true
"""
    with Gateway(server_cfg) as srv:
        port = srv.port_of("vrpn")
        with Gateway(f"""
gateway:
  predict: {{max_horizon_ms: 0}}
adapters:
  - name: rt
    type: vrpn-client
    devices: ["demo@tcp://127.0.0.1:{port}"]
    frame: vrpn-zup
  - name: ru
    type: vrpn-client
    devices: ["demo@127.0.0.1:{port}"]
    frame: vrpn-zup
""") as cli:
            try:
                run(srv, cli)
            except Exception:
                print(srv.log()[-3000:])
                print(cli.log()[-3000:])
                raise
    extras()
    stable_numbers()
    print("OK")


class PhaseServer(threading.Thread):
    """A raw VRPN server whose devices report only while listed in self.active (name -> x)."""

    def __init__(self, devices):
        super().__init__(daemon=True)
        self.lis = socket.socket()
        self.lis.bind(("127.0.0.1", 0))
        self.lis.listen(1)
        self.port = self.lis.getsockname()[1]
        self.devices = devices
        self.active = {}
        self.stop = False

    def run(self):
        self.lis.settimeout(10)
        c, _ = self.lis.accept()
        c.settimeout(0.03)
        out = COOKIE + describe("sender", 0, "VRPN Control")
        for i, n in enumerate(self.devices):
            out += describe("sender", i + 1, n)
        out += describe("type", 0, "vrpn_Tracker Pos_Quat")
        c.sendall(out)
        while not self.stop:
            try:
                if not c.recv(65536):
                    break
            except socket.timeout:
                pass
            out = b""
            for name, x in list(self.active.items()):
                body = struct.pack(">ii7d", 0, 0, x, 1.0, 0.0, 0, 0, 0, 1)
                out += msg(self.devices.index(name) + 1, 0, body)
            if out:
                c.sendall(out)
        c.close()


def stable_numbers():
    """Sensor numbers are kept per entity name for the process lifetime: B (seen first) stays 0
    and A stays 1 after both expired and came back in the other order."""
    src = PhaseServer(["A", "B"])
    src.start()
    cfg = f"""
gateway:
  entity: {{stale_ms: 100, expire_ms: 400}}
adapters:
  - name: rig
    type: vrpn-client
    devices: ["A@tcp://127.0.0.1:{src.port}", "B@tcp://127.0.0.1:{src.port}"]
  - name: vrpn
    type: vrpn-server
    listen: "127.0.0.1:0"
    rate_hz: 50
"""
    with Gateway(cfg) as gw:
        try:
            port = server_port(gw)

            def sensors_now():
                return gw.counters("vrpn")["sensors"]

            def wait(pred, what):
                end = time.monotonic() + 10
                while time.monotonic() < end and not pred():
                    time.sleep(0.05)
                assert pred(), what

            def check(tag):
                c = Client(port, "tcp", senders=("rig",))
                c.until(lambda: len(c.latest("rig", "pq")) == 2, what=f"2 sensors ({tag})")
                c.pump(0.2)
                got = {s: v[0] for s, v in c.latest("rig", "pq").items()}
                c.close()
                assert got == {0: 2.0, 1: 1.0}, f"{tag}: sensor -> x {got}, want B=0 (x 2), A=1"

            src.active["B"] = 2.0
            wait(lambda: sensors_now() == 1, "B served")
            src.active["A"] = 1.0
            wait(lambda: sensors_now() == 2, "A served")
            check("first")
            src.active.clear()
            wait(lambda: sensors_now() == 0, "entities expired")
            src.active["A"] = 1.0
            src.active["B"] = 2.0
            wait(lambda: sensors_now() == 2, "both back")
            check("after the source came back")
            print("sensor numbers kept per name across a source restart")
        except Exception:
            print(gw.log()[-5000:])
            raise
        finally:
            src.stop = True


class WandServer(threading.Thread):
    """A raw VRPN server with one device "Wand": tracker sensor 0, 3 buttons, 3 analogs."""
    TYPES = ["vrpn_Tracker Pos_Quat", "vrpn_Button Change", "vrpn_Button States",
             "vrpn_Analog Channel", "vrpn_Base ping_message", "vrpn_Base pong_message"]

    def __init__(self):
        super().__init__(daemon=True)
        self.lis = socket.socket()
        self.lis.bind(("127.0.0.1", 0))
        self.lis.listen(1)
        self.port = self.lis.getsockname()[1]
        self.stop = False
        self.press = threading.Event()

    def run(self):
        self.lis.settimeout(10)
        c, _ = self.lis.accept()
        c.settimeout(0.05)
        out = COOKIE + describe("sender", 0, "VRPN Control") + describe("sender", 1, "Wand")
        for i, n in enumerate(self.TYPES):
            out += describe("type", i, n)
        out += msg(1, 2, struct.pack(">4i", 3, 0, 1, 0))  # Button States [0, 1, 0]
        c.sendall(out)
        pressed = False
        while not self.stop:
            try:
                if not c.recv(65536):
                    break
            except socket.timeout:
                pass
            body = struct.pack(">ii7d", 0, 0, 0.5, 1.5, -0.25, 0, 0, 0, 1)
            out = msg(1, 0, body) + msg(1, 3, struct.pack(">4d", 3, 0.25, -0.5, 0.75))
            if self.press.is_set() and not pressed:
                out += msg(1, 1, struct.pack(">ii", 2, 1))  # Button Change: button 2 pressed
                pressed = True
            c.sendall(out)
        c.close()


def button_states(c):
    """The client's view of tracker rig's buttons: the last States, updated by later Changes."""
    st = None
    for r in c.reports:
        if r[1] != "rig":
            continue
        if r[2] == "states":
            st = list(r[4])
        elif r[2] == "change" and st is not None:
            st[r[4][0]] = r[4][1]
    return st


def extras():
    wand = WandServer()
    wand.start()
    cfg = f"""
adapters:
  - name: rig
    type: vrpn-client
    devices: ["Wand@tcp://127.0.0.1:{wand.port}"]
  - name: vrpn
    type: vrpn-server
    listen: "127.0.0.1:0"
    rate_hz: 50
"""
    with Gateway(cfg) as gw:
        try:
            end = time.monotonic() + 10
            while time.monotonic() < end and not gw.counters("vrpn")["sensors"]:
                time.sleep(0.05)
            port = server_port(gw)
            cs = [Client(port, "tcp", senders=("rig",)), Client(port, "udp", senders=("rig",))]
            for c in cs:
                c.until(lambda: [r for r in c.reports if r[2] == "analog"], what="analogs")
            wand.press.set()
            for c in cs:
                c.until(lambda: button_states(c) == [0, 1, 1], what=f"buttons ({c.mode})")
                an = [r for r in c.reports if r[2] == "analog"]
                assert an[-1][1] == "rig" and an[-1][4] == [0.25, -0.5, 0.75], an[-1]
                assert {r[0] for r in an} == {"udp" if c.mode == "udp" else "tcp"}
                assert {r[0] for r in c.reports if r[2] in ("states", "change")} == {"tcp"}
                n = len([r for r in c.reports if r[2] == "states"])
                c.ping("rig")
                c.until(lambda: any(r[2] == "pong" for r in c.reports), what="pong")
                kinds = [r[2] for r in c.reports if r[2] in ("states", "pong")]
                assert kinds[-2:] == ["states", "pong"], kinds  # States first, then the pong
                assert len([r for r in c.reports if r[2] == "states"]) == n + 1
                c.close()
            print("buttons and analogs: States/Change over TCP, Analog Channel (UDP in UDP+TCP)")
        except Exception:
            print(gw.log()[-5000:])
            raise
        finally:
            wand.stop = True


def run(srv, cli):
    names = [f"demo/body{i}" for i in range(12)] + ["demo/head", "demo/left_hand",
                                                    "demo/right_hand"]
    for origin in ("rt", "ru"):
        matched = set()
        end = time.monotonic() + 15
        last = None
        while time.monotonic() < end and len(matched) < len(names):
            ents = {**srv.entities(), **cli.entities()}
            for sensor, name in enumerate(names):
                src, dst = ents.get(name), ents.get(f"{origin}/demo/{sensor}")
                if not src or not dst:
                    continue
                if dst["origin"] != origin:
                    raise AssertionError(f"{origin}/demo/{sensor}: origin {dst['origin']}")
                d = max(abs(a - b) for a, b in zip(src["position"] + src["orientation"],
                                                   dst["position"] + dst["orientation"]))
                last = (name, d, src, dst)
                if d <= TOL:
                    wv = max(abs(a - b) for a, b in zip(src["velocity"], dst["velocity"]))
                    ww = max(abs(a - b) for a, b in zip(src["angular_velocity"],
                                                        dst["angular_velocity"]))
                    assert wv <= 1e-9 and ww <= 1e-6, \
                        f"{name} via {origin}: velocity off by {wv}, angular velocity by {ww}"
                    matched.add(name)
            time.sleep(0.1)
        assert len(matched) == len(names), \
            f"{origin}: matched only {sorted(matched)}; last comparison {last}"
        print(f"{origin}: {len(names)} poses equal within {TOL} (velocities within 1e-9, angular 1e-6)")
    ads = srv.adapters()
    assert ads["vrpn"]["counters"]["clients"] == 2, ads["vrpn"]
    assert ads["vrpn"]["counters"]["clients_udp"] == 1, ads["vrpn"]
    assert ads["vrpn"]["counters"]["reports_udp"] > 0 and ads["vrpn"]["counters"]["reports_tcp"] > 0


if __name__ == "__main__":
    main()
