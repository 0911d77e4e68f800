"""Integration: the `vmc` adapter against an OSC implementation that is not ours — liblo's
`oscsend` and `oscdump` (Debian liblo-tools, installed by docker/install-deps.sh).

- messages sent by oscsend (one datagram each: root, Hips, Spine, Head, a tracker, an HMD) become
  entities; the bones are resolved through the humanoid hierarchy (parent, world poses) exactly as
  the Python reference computes them
- oscsend with too few / mistyped arguments is counted (drop_bad_args) and changes nothing
- egress decoded by oscdump equals /api/entities within float32 and oscdump's 6 decimals: profile
  vmc (bones local to their parents, devices under their entity names) and profile vmt
  (/VMT/Room/Unity with index, enable, 0 time offset, the Unity-frame pose)
- a synth source reaches oscdump as VMT (enable 1/2/3 from head/left_hand/right_hand kinds,
  Y up kept) and as VMC (Hmd/Con/Tra by kind)
- a BVH take (a still, right-handed Y-up, cm) reaches oscdump as VMC bones whose local poses are
  the BVH joints' local ones in Unity's frame (two joints renamed by `bones:`), and as VMT trackers
  with the world poses of /api/entities"""
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from test_vmc import LOCALS, PARENT, ROOT, compose, unity_to_internal
from xgtest import Gateway, die_with_parent, skip, wait_until  # noqa: E402


def probe_udp_port():
    """oscdump cannot report an ephemeral port: probe one (loopback only). Another process can
    bind it before oscdump does: Dump checks that oscdump holds it, else probes again."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def udp_bound_by(pid, port):
    """True once process pid holds a UDP socket on `port` (/proc/<pid>/fd and net/udp{,6})."""
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
        for table in ("udp", "udp6"):
            with open(f"/proc/{pid}/net/{table}") as f:
                next(f)
                for line in f:
                    parts = line.split()
                    if int(parts[1].rsplit(":", 1)[1], 16) == port and parts[9] in inodes:
                        return True
    except OSError:
        return False
    return False


class Dump:
    """oscdump -L on a probed port; .lines are its output lines (read by a thread). oscdump takes
    a bare port (liblo 0.31 reads a host in an osc.udp:// URL as a multicast group to join), so it
    listens on the wildcard address; only xrgate on 127.0.0.1 sends to it."""

    def __init__(self):
        for _ in range(20):
            self.port = probe_udp_port()
            self.proc = subprocess.Popen(["oscdump", "-L", str(self.port)],
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                         text=True, preexec_fn=die_with_parent())
            # oscdump holds the port, or exited because another process took it first
            wait_until(lambda: self.proc.poll() is not None or
                       udp_bound_by(self.proc.pid, self.port), what="oscdump bound its port")
            if self.proc.poll() is None:
                break
        else:
            raise AssertionError("oscdump could not bind a probed port 20 times")
        self.lines = []
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def messages(self):
        """[(address, types, values)] parsed from oscdump's text ("<timetag> /addr types v...")."""
        out = []
        for ln in list(self.lines):
            parts = ln.split(" ", 3)
            if len(parts) < 3 or not parts[1].startswith("/"):
                continue
            addr, types = parts[1], parts[2]
            vals, rest = [], parts[3] if len(parts) > 3 else ""
            for t in types:
                rest = rest.lstrip(" ")
                if t == "s":
                    assert rest.startswith('"'), ln
                    end = rest.index('"', 1)
                    vals.append(rest[1:end])
                    rest = rest[end + 1:]
                else:
                    tok, _, rest = rest.partition(" ")
                    vals.append(int(tok) if t == "i" else float(tok))
            out.append((addr, types, vals))
        return out

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(3)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def oscsend(port, addr, types, *vals):
    subprocess.run(["oscsend", "127.0.0.1", str(port), addr, types, *[str(v) for v in vals]],
                   check=True, timeout=10)


def to_unity(e):
    p, q = e["position"], e["orientation"]
    return (p[0], p[1], -p[2]), (-q[0], -q[1], q[2], q[3])


def near(got, want, tol=2e-6):
    return all(abs(a - b) <= tol for a, b in zip(got, want))


def same_rot(got, want):
    return abs(sum(a * b for a, b in zip(got, want))) > 1 - 1e-5


def main():
    if not shutil.which("oscsend") or not shutil.which("oscdump"):
        skip("liblo-tools (oscsend, oscdump) not found (docker/install-deps.sh installs it)")
    dumps = [Dump() for _ in range(4)]
    vmc, vmt, svmc, svmt = dumps
    try:
        with Gateway(f"""
adapters:
  - {{name: in, type: vmc, bind: "127.0.0.1:0"}}
  - {{name: demo, type: synth, bodies: 1, rate_hz: 60}}
  - {{name: out, type: vmc, profile: vmc, bind: "127.0.0.1:0", include: ["in/*"],
      destinations: ["127.0.0.1:{vmc.port}"], rate_hz: 30}}
  - {{name: steamvr, type: vmc, profile: vmt, bind: "127.0.0.1:0", include: ["in/*"],
      destinations: ["127.0.0.1:{vmt.port}"], rate_hz: 30}}
  - {{name: sout, type: vmc, profile: vmc, bind: "127.0.0.1:0", include: ["demo/*"],
      destinations: ["127.0.0.1:{svmc.port}"], rate_hz: 30}}
  - {{name: svmt, type: vmc, profile: vmt, bind: "127.0.0.1:0", include: ["demo/*"],
      destinations: ["127.0.0.1:{svmt.port}"], rate_hz: 30}}
""") as g:
            port = g.port_of("in")
            # liblo -> xrgate: one datagram per message, the root first, bones parent first
            oscsend(port, "/VMC/Ext/Root/Pos", "sfffffff", "root", *ROOT[0], *ROOT[1])
            for name in ["Hips", "Spine", "Head"]:
                p, q = LOCALS[name]
                oscsend(port, "/VMC/Ext/Bone/Pos", "sfffffff", name, *p, *q)
            oscsend(port, "/VMC/Ext/Tra/Pos", "sfffffff", "LHR-1", 0.5, 1.0, -0.25, 0, 0, 0.6, 0.8)
            oscsend(port, "/VMC/Ext/Hmd/Pos", "sfffffff", "HMD", 0.0, 1.6, 0.1, 0.6, 0, 0, 0.8)
            # bad type tags: counted, nothing created
            oscsend(port, "/VMC/Ext/Bone/Pos", "sfff", "Chest", 1, 2, 3)
            oscsend(port, "/VMC/Ext/Tra/Pos", "siffffff", "BAD", 1, 2, 3, 0, 0, 0, 1)
            oscsend(port, "/VMC/Ext/T", "f", 1.5)  # after the bad ones: once counted, all are
            wait_until(lambda: g.adapter("in")["counters"]["messages_in"] == 9, what="9 messages")
            c = g.adapter("in")["counters"]
            assert c["drop_bad_args"] == 2 and c["bone_messages_in"] == 3, c
            assert c["root_messages_in"] == 1 and c["device_messages_in"] == 2, c
            ents = {k: v for k, v in g.entities().items() if k.startswith("in/")}
            assert set(ents) == {"in/bone/Hips", "in/bone/Spine", "in/bone/Head", "in/tra/LHR-1",
                                 "in/hmd/HMD"}, ents
            hips = compose(ROOT, LOCALS["Hips"])
            spine = compose(hips, LOCALS["Spine"])
            world = {"Hips": hips, "Spine": spine, "Head": compose(spine, LOCALS["Head"])}
            for name, (p, q) in world.items():
                e = ents[f"in/bone/{name}"]
                ip, iq = unity_to_internal(p, q)
                assert near(e["position"], ip, 2e-5) and same_rot(e["orientation"], iq), e
                assert e.get("parent", None) == (f"in/bone/{PARENT[name]}" if PARENT[name]
                                                 else None), e

            # xrgate -> liblo, profile vmc: the last frame's values
            def vmc_msgs():
                m = {}
                for addr, types, v in vmc.messages():
                    if addr in ("/VMC/Ext/Bone/Pos", "/VMC/Ext/Hmd/Pos", "/VMC/Ext/Tra/Pos"):
                        assert types == "sfffffff", types
                        m[(addr, v[0])] = v[1:]
                return m if len(m) == 5 else None
            m = wait_until(vmc_msgs, what="oscdump to see 3 bones and 2 devices")
            for name in ["Hips", "Spine", "Head"]:
                p, q = world["Hips"] if name == "Hips" else LOCALS[name]
                got = m[("/VMC/Ext/Bone/Pos", name)]
                assert near(got[:3], p, 2e-5) and same_rot(got[3:], q), (name, got, p, q)
            for addr, ent in [("/VMC/Ext/Tra/Pos", "in/tra/LHR-1"),
                              ("/VMC/Ext/Hmd/Pos", "in/hmd/HMD")]:
                p, q = to_unity(ents[ent])
                got = m[(addr, ent)]
                assert near(got[:3], p) and near(got[3:], q), (ent, got, p, q)
            assert any(a == "/VMC/Ext/OK" and v == [1] for a, _, v in vmc.messages())
            # profile vmt
            def vmt_msgs():
                m = {}
                for addr, types, v in vmt.messages():
                    assert addr == "/VMT/Room/Unity" and types == "iiffffffff", (addr, types)
                    m[v[0]] = v[1:]
                return m if len(m) == 5 else None
            t = wait_until(vmt_msgs, what="oscdump to see 5 trackers")
            by_index = {}
            for ln in g.lines:
                if "is VMT tracker" in ln and "[steamvr]" in ln:
                    name = ln.split("entity '")[1].split("'")[0]
                    by_index[int(ln.rsplit(" ", 1)[1])] = name
            assert set(by_index) == set(t), (by_index, t)
            for idx, v in t.items():
                p, q = to_unity(ents[by_index[idx]])
                assert v[0] == 1 and v[1] == 0.0, v  # tracker, no time offset
                assert near(v[2:5], p) and near(v[5:], q), (by_index[idx], v, p, q)

            # synth -> liblo
            def svmt_msgs():
                m = {}
                for addr, types, v in svmt.messages():
                    m[v[0]] = v[1:]
                return m if len(m) == 4 else None
            st = wait_until(svmt_msgs, what="4 synth trackers")
            names = {}
            for ln in g.lines:
                if "is VMT tracker" in ln and "[svmt]" in ln:
                    names[ln.split("entity '")[1].split("'")[0]] = int(ln.rsplit(" ", 1)[1])
            assert set(names) == {"demo/head", "demo/left_hand", "demo/right_hand",
                                  "demo/body0"}, names
            assert st[names["demo/head"]][0] == 1 and st[names["demo/body0"]][0] == 1
            assert st[names["demo/left_hand"]][0] == 2 and st[names["demo/right_hand"]][0] == 3
            assert 1.6 < st[names["demo/head"]][3] < 1.8, st  # the synth head is ~1.7 m up
            def svmc_kinds():  # the vmc profile's own oscdump may trail the vmt one
                k = {}
                for addr, _, v in svmc.messages():
                    if addr.endswith("/Pos"):
                        k[v[0]] = addr
                return k if {"demo/head", "demo/left_hand", "demo/body0"} <= set(k) else None
            kinds = wait_until(svmc_kinds, what="oscdump to see the synth's head, hand and body")
            assert kinds.get("demo/head") == "/VMC/Ext/Hmd/Pos", kinds
            assert kinds.get("demo/left_hand") == "/VMC/Ext/Con/Pos", kinds
            assert kinds.get("demo/body0") == "/VMC/Ext/Tra/Pos", kinds
            print("liblo: ok")
    finally:
        for d in dumps:
            d.close()


BVH = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT Head
    {
      OFFSET 0 20 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 0 5 0
      }
    }
  }
  JOINT LeftUpLeg
  {
    OFFSET 10 0 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT LeftLeg
    {
      OFFSET 0 -40 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 0 -40 0
      }
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.0333333
0 90 0 0 0 30 0 20 0 10 0 0 15 0 0 0 -30 0
0 90 0 0 0 30 0 20 0 10 0 0 15 0 0 0 -30 0
"""


def q_axis(axis, deg):
    h = math.radians(deg) / 2
    return tuple(c * math.sin(h) for c in axis) + (math.cos(h),)


def bvh_main():
    """The BVH still: local poses (BVH frame: right-handed Y up, cm) in Unity's frame (z flipped,
    metres) must come out of profile vmc; world poses of /api/entities out of profile vmt."""
    locals_bvh = {"Hips": ((0, 0.9, 0), q_axis((0, 1, 0), 30)),
                  "Spine": ((0, 0.1, 0), q_axis((1, 0, 0), 20)),
                  "Head": ((0, 0.2, 0), q_axis((0, 0, 1), 10)),
                  "LeftUpperLeg": ((0.1, 0, 0), q_axis((0, 0, 1), 15)),
                  "LeftLowerLeg": ((0, -0.4, 0), q_axis((1, 0, 0), -30))}
    vmc, vmt = Dump(), Dump()
    tmp = tempfile.TemporaryDirectory(prefix="xrgate-vmc-bvh-")
    path = os.path.join(tmp.name, "take.bvh")
    with open(path, "w") as f:
        f.write(BVH)
    try:
        with Gateway(f"""
adapters:
  - {{name: take, type: bvh, file: "{path}", units: cm}}
  - name: avatar
    type: vmc
    bind: "127.0.0.1:0"
    destinations: ["127.0.0.1:{vmc.port}"]
    bones: {{LeftUpperLeg: LeftUpLeg, LeftLowerLeg: LeftLeg}}
  - {{name: steamvr, type: vmc, profile: vmt, bind: "127.0.0.1:0",
      destinations: ["127.0.0.1:{vmt.port}"]}}
""") as g:
            def bones():
                m = {v[0]: v[1:] for a, _, v in vmc.messages() if a == "/VMC/Ext/Bone/Pos"}
                return m if len(m) == 5 else None
            m = wait_until(bones, what="5 VMC bones from the BVH take")
            for name, (p, q) in locals_bvh.items():
                up, uq = (p[0], p[1], -p[2]), (-q[0], -q[1], q[2], q[3])  # to Unity's frame
                got = m[name]
                assert near(got[:3], up) and same_rot(got[3:], uq), (name, got, up, uq)
            devices = [a for a, _, _ in vmc.messages()
                       if a in ("/VMC/Ext/Hmd/Pos", "/VMC/Ext/Con/Pos", "/VMC/Ext/Tra/Pos")]
            assert not devices, devices  # every joint (the head too) is a bone

            def trackers():
                t = {v[0]: v[1:] for a, _, v in vmt.messages()}
                return t if len(t) == 5 else None
            t = wait_until(trackers, what="5 VMT trackers from the BVH take")
            ents = g.entities()
            idx = {}
            for ln in g.lines:
                if "is VMT tracker" in ln:
                    idx[ln.split("entity '")[1].split("'")[0]] = int(ln.rsplit(" ", 1)[1])
            assert set(idx) == {"take/Hips", "take/Spine", "take/Head", "take/LeftUpLeg",
                                "take/LeftLeg"}, idx
            for name, i in idx.items():
                p, q = to_unity(ents[name])
                assert near(t[i][2:5], p) and same_rot(t[i][5:], q), (name, t[i], p, q)
            assert t[idx["take/Head"]][0] == 1  # kind head: a tracker (VMT has no HMD)
            print("bvh: ok")
    finally:
        vmc.close()
        vmt.close()
        tmp.cleanup()


if __name__ == "__main__":
    main()
    bvh_main()
