"""Integration: the `vmc` adapter (OSC over UDP: VMC protocol in, VMC / VMT out) on loopback.

The OSC peer below is written from the OSC 1.0 specification and the VMC / VMT message lists
(not from the C code): strings NUL-padded to 4 bytes, big-endian int32/float32, bundles
"#bundle\\0" + time tag + size-prefixed elements.

- ingress: a performer's bundle (root, bones with optional ones missing, Hmd/Con/Tra, OK, T, an
  unused address) becomes entities in the internal frame (Unity's left-handed frame: z flipped),
  bones resolved to world poses through the humanoid hierarchy and the root, `parent` naming the
  nearest sent ancestor
- bad input, one datagram per OSC error class and per VMC argument rule, each dropped and counted
  under its reason with one warning naming peer, field and value, while a good datagram after them
  is applied
- round trip vmc -> vmc: what a second adapter sends (profile vmc) decodes to the locals we sent
  (Hips: root ⊗ Hips), devices under their entity names, /VMC/Ext/OK and /VMC/Ext/T first; with a
  small mtu the frame is split into several datagrams, each one complete bundle within the mtu
- profile vmt: /VMT/Room/Unity per entity with the exact Unity-frame values we sent, tracker
  indices by `trackers:` rules then lowest free, enable from the kind; an expired entity's tracker
  is disabled (enable 0)"""
import math
import socket
import struct
import time

from xgtest import Gateway, wait_until

# ---- OSC 1.0 ----


def osc_str(s):
    b = s.encode() + b"\0"
    return b + b"\0" * (-len(b) % 4)


def osc_msg(addr, tags, *args):
    out = osc_str(addr) + osc_str("," + tags)
    for t, a in zip(tags, args):
        if t == "i":
            out += struct.pack(">i", a)
        elif t == "f":
            out += struct.pack(">f", a)
        elif t == "s":
            out += osc_str(a)
        elif t == "d":
            out += struct.pack(">d", a)
        else:
            raise ValueError(t)
    return out


def bundle(*elements, tt=1):
    out = b"#bundle\0" + struct.pack(">Q", tt)
    for e in elements:
        out += struct.pack(">i", len(e)) + e
    return out


def read_str(b, i):
    j = b.index(b"\0", i)
    return b[i:j].decode(), (j + 4) & ~3


def parse_msg(b):
    addr, i = read_str(b, 0)
    tags, i = read_str(b, i)
    assert tags.startswith(","), tags
    args = []
    for t in tags[1:]:
        if t == "i":
            args.append(struct.unpack_from(">i", b, i)[0])
            i += 4
        elif t == "f":
            args.append(struct.unpack_from(">f", b, i)[0])
            i += 4
        elif t == "s":
            s, i = read_str(b, i)
            args.append(s)
        else:
            raise ValueError(t)
    assert i == len(b), (addr, i, len(b))
    return addr, tags[1:], args


def parse_packet(b):
    """[(address, tags, args)] of a bundle (or a message)."""
    if not b.startswith(b"#bundle\0"):
        return [parse_msg(b)]
    out, i = [], 16
    while i < len(b):
        n = struct.unpack_from(">i", b, i)[0]
        out += parse_packet(b[i + 4:i + 4 + n])
        i += 4 + n
    assert i == len(b)
    return out


def f32(x):
    return struct.unpack(">f", struct.pack(">f", x))[0]

# ---- poses (Unity frame on the wire) ----


def q_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz)


def q_rot(q, v):
    r = q_mul(q_mul(q, (v[0], v[1], v[2], 0.0)), (-q[0], -q[1], -q[2], q[3]))
    return r[:3]


def q_axis(axis, deg):
    a = math.radians(deg) / 2
    n = math.sqrt(sum(c * c for c in axis))
    return tuple(c / n * math.sin(a) for c in axis) + (math.cos(a),)


def compose(parent, local):
    (pp, pq), (lp, lq) = parent, local
    return tuple(p + r for p, r in zip(pp, q_rot(pq, lp))), q_mul(pq, lq)


def unity_to_internal(p, q):
    """Internal frame = Unity with z flipped (axes x,y,-z: a mirror, so x and y of q flip)."""
    return (p[0], p[1], -p[2]), (-q[0], -q[1], q[2], q[3])


def close_pose(ent, p, q, tol=2e-5):
    assert all(abs(a - b) < tol for a, b in zip(ent["position"], p)), (ent["name"], ent, p)
    o = ent["orientation"]
    dot = abs(sum(a * b for a, b in zip(o, q)))
    assert dot > 1 - 1e-6, (ent["name"], o, q)


ROOT = ((1.0, 0.0, 0.5), q_axis((0, 1, 0), 90))
LOCALS = {  # Chest, UpperChest, Neck, LeftShoulder absent: their children hang on Spine
    "Hips": ((0.0, 0.9, 0.0), q_axis((0, 1, 0), 10)),
    "Spine": ((0.0, 0.1, 0.0), q_axis((1, 0, 0), 20)),
    "Head": ((0.0, 0.5, 0.02), q_axis((0, 0, 1), 15)),
    "LeftUpperArm": ((-0.2, 0.4, 0.0), q_axis((0, 0, 1), 80)),
    "LeftLowerArm": ((-0.3, 0.0, 0.0), q_axis((0, 1, 0), -30)),
}
PARENT = {"Hips": None, "Spine": "Hips", "Head": "Spine", "LeftUpperArm": "Spine",
          "LeftLowerArm": "LeftUpperArm"}
DEVICES = [("/VMC/Ext/Hmd/Pos", "HMD-1", (0.1, 1.6, 0.2), q_axis((0, 1, 0), 30)),
           ("/VMC/Ext/Con/Pos", "LHR-C0", (-0.3, 1.1, 0.3), q_axis((1, 0, 0), 45)),
           ("/VMC/Ext/Tra/Pos", "LHR-T7", (0.0, 0.1, -0.4), q_axis((1, 1, 0), 60))]


def world_poses():
    w = {}
    for name in ["Hips", "Spine", "Head", "LeftUpperArm", "LeftLowerArm"]:
        parent = w[PARENT[name]] if PARENT[name] else ROOT
        w[name] = compose(parent, LOCALS[name])
    return w


def pose_args(p, q):
    return (*p, *q)


def performer_bundle(t=1.0):
    els = [osc_msg("/VMC/Ext/OK", "i", 1), osc_msg("/VMC/Ext/T", "f", t),
           osc_msg("/VMC/Ext/Root/Pos", "sfffffff", "root", *pose_args(*ROOT))]
    for name, (p, q) in LOCALS.items():
        els.append(osc_msg("/VMC/Ext/Bone/Pos", "sfffffff", name, *pose_args(p, q)))
    for addr, serial, p, q in DEVICES:
        els.append(osc_msg(addr, "sfffffff", serial, *pose_args(p, q)))
    els.append(osc_msg("/VMC/Ext/Blend/Val", "sf", "A", 0.5))  # not used by xrgate: ignored
    return bundle(*els)

# ---- helpers ----


def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(3)
    return s


def recv_until(sock, pred, timeout=10.0):
    """Datagrams until pred(list of parsed messages of one datagram) is true; returns them."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            d = sock.recv(65536)
        except socket.timeout:
            continue
        msgs = parse_packet(d)
        if pred(msgs, d):
            return msgs, d
    raise AssertionError("no matching datagram")

# ---- tests ----


def test_ingress():
    with Gateway("""
adapters:
  - {name: in, type: vmc, bind: "127.0.0.1:0"}
""") as g:
        port = g.port_of("in")
        s = udp()
        s.sendto(performer_bundle(), ("127.0.0.1", port))
        ents = wait_until(lambda: (lambda e: e if len(e) == 8 else None)(g.entities()),
                        what="8 entities")
        w = world_poses()
        for name, (p, q) in w.items():
            e = ents[f"in/bone/{name}"]
            assert e["kind"] == "joint"
            close_pose(e, *unity_to_internal(p, q))
            if PARENT[name]:
                assert e["parent"] == f"in/bone/{PARENT[name]}", e
            else:
                assert "parent" not in e, e
        kinds = {"Hmd": "head", "Con": "controller", "Tra": "rigid_body"}
        for addr, serial, p, q in DEVICES:
            k = addr.split("/")[3]
            e = ents[f"in/{k.lower()}/{serial}"]
            assert e["kind"] == kinds[k], e
            close_pose(e, *unity_to_internal(p, q))
            assert "parent" not in e
        c = g.adapter("in")["counters"]
        assert c["datagrams_in"] == 1 and c["messages_in"] == 12, c
        assert c["bone_messages_in"] == 5 and c["root_messages_in"] == 1, c
        assert c["device_messages_in"] == 3 and c["messages_ignored"] == 1, c
        assert c["devices"] == 3, c
        # the root moves: every bone follows, without bone messages
        root2 = ((2.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
        s.sendto(bundle(osc_msg("/VMC/Ext/Root/Pos", "sfffffff", "root", *pose_args(*root2))),
                 ("127.0.0.1", port))
        hips = compose(root2, LOCALS["Hips"])
        e = wait_until(lambda: (lambda e: e if e["samples"] == 2 else None)(
            g.entities()["in/bone/Head"]), what="the bones to follow the root")
        # at the second sample's capture time (not predicted past it)
        at = {x["name"]: x for x in g.get_json(f"/api/entities?t_ns={e['sample_ns']}")["entities"]}
        close_pose(at["in/bone/Hips"], *unity_to_internal(*hips))
        head = compose(compose(hips, LOCALS["Spine"]), LOCALS["Head"])
        close_pose(at["in/bone/Head"], *unity_to_internal(*head))
        assert at["in/bone/Head"]["quality"] == "EXACT", at["in/bone/Head"]
        assert g.entities()["in/tra/LHR-T7"]["samples"] == 1  # devices: no message, no sample
        print("ingress: ok")


BAD = [  # (reason counter, datagram, text the warning must contain)
    ("drop_bad_type_tag", osc_msg("/VMC/Ext/Tra/Pos", "sfffffff", "X", 0, 0, 0, 0, 0, 0, 1)
     .replace(b",sfffffff", b",sfffffxf"), "unknown type tag 'x' (0x78) at argument 6"),
    ("drop_bad_type_tag", b"/VMC/Ext/T\0\0sfff" + bytes(12),
     "type tag string does not start with ','"),
    ("drop_bad_args", osc_msg("/VMC/Ext/Bone/Pos", "sfff", "Hips", 0, 0, 0),
     "/VMC/Ext/Bone/Pos: type tags ',sfff' (too few arguments; needs ',sfffffff')"),
    ("drop_bad_args", osc_msg("/VMC/Ext/Tra/Pos", "sfffiffff", "X", 0, 0, 0, 1, 0, 0, 0, 1),
     "/VMC/Ext/Tra/Pos: type tags ',sfffiffff' (mistyped arguments; needs ',sfffffff')"),
    ("drop_unknown_bone", osc_msg("/VMC/Ext/Bone/Pos", "sfffffff", "Tail", 0, 0, 0, 0, 0, 0, 1),
     "/VMC/Ext/Bone/Pos: bone 'Tail' is not a HumanBodyBones name"),
    ("drop_bad_value", osc_msg("/VMC/Ext/Con/Pos", "sfffffff", "C", 0, float("nan"), 0, 0, 0, 0,
                               1), "/VMC/Ext/Con/Pos 'C': position.y = nan is not a pose"),
    ("drop_bad_value", osc_msg("/VMC/Ext/Hmd/Pos", "sfffffff", "", 0, 0, 0, 0, 0, 0, 1),
     "/VMC/Ext/Hmd/Pos: serial is empty"),
    ("drop_malformed", b"/VMC/Ext/T\0\0,f\0\0" + bytes(3),
     "is not a multiple of 4 bytes"),
    ("drop_malformed", b"/VMC/Ext/OK\x01", "address pattern has no NUL terminator"),
    ("drop_malformed", osc_msg("/VMC/Ext/OK", "i", 1) + bytes(4),
     "4 bytes after the last argument"),
    ("drop_bad_address", b"VMC/Ext/OK\0\0,i\0\0" + bytes(4),
     "address pattern does not start with '/'"),
    ("drop_bad_bundle", b"#bundle\0" + struct.pack(">Q", 1) + struct.pack(">i", 64) + bytes(8),
     "element size 64 at offset 16"),
    ("drop_depth", bundle(bundle(bundle(bundle(osc_msg("/VMC/Ext/OK", "i", 1))))),
     "bundle nested 4 deep (at most 3"),
]


def test_bad_input():
    with Gateway("""
adapters:
  - {name: in, type: vmc, bind: "127.0.0.1:0", max_bundle_depth: 3}
""") as g:
        port = g.port_of("in")
        s = udp()
        for _, d, _ in BAD:
            s.sendto(d, ("127.0.0.1", port))
        good = osc_msg("/VMC/Ext/Tra/Pos", "sfffffff", "after", 1, 2, 3, 0, 0, 0, 1)
        s.sendto(good, ("127.0.0.1", port))
        wait_until(lambda: "in/tra/after" in g.entities(), what="the good datagram after the bad")
        c = g.adapter("in")["counters"]
        want = {}
        for reason, _, _ in BAD:
            want[reason] = want.get(reason, 0) + 1
        for reason, n in want.items():
            assert c[reason] == n, (reason, c)
        assert c["drop_limit"] == 0
        assert set(g.entities()) == {"in/tra/after"}, g.entities()
        peer = "peer 127.0.0.1:%d: " % s.getsockname()[1]
        # at most 5 lines per reason per 10 s pass the limiter: every reason here has <= 3
        for reason, _, text in BAD:
            assert g.wait_log(text, 5), (reason, text, g.log())
            line = next(ln for ln in g.lines if text in ln)
            assert peer in line and f"(dropped; {reason})" in line, line
        print("bad input: ok")


def test_device_limit():
    with Gateway("""
adapters:
  - {name: in, type: vmc, bind: "127.0.0.1:0", max_devices: 2}
""") as g:
        port = g.port_of("in")
        s = udp()
        for serial in ["A", "B", "C"]:
            s.sendto(osc_msg("/VMC/Ext/Tra/Pos", "sfffffff", serial, 1, 2, 3, 0, 0, 0, 1),
                     ("127.0.0.1", port))
        # a known device still updates after the refusal
        s.sendto(osc_msg("/VMC/Ext/Tra/Pos", "sfffffff", "A", 4, 5, 6, 0, 0, 0, 1),
                 ("127.0.0.1", port))
        wait_until(lambda: g.adapter("in")["counters"]["datagrams_in"] == 4, what="4 datagrams")
        c = g.adapter("in")["counters"]
        assert c["drop_limit"] == 1 and c["devices"] == 2, c
        ents = g.entities()
        assert set(ents) == {"in/tra/A", "in/tra/B"}, ents
        assert ents["in/tra/A"]["samples"] == 2, ents["in/tra/A"]
        assert g.wait_log("/VMC/Ext/Tra/Pos 'tra/C': max_devices (2) device entities already "
                          "exist (dropped; drop_limit)", 5), g.log()
        print("device limit: ok")


def test_roundtrip_vmc():
    rx = udp()
    with Gateway(f"""
adapters:
  - {{name: in, type: vmc, bind: "127.0.0.1:0"}}
  - name: out
    type: vmc
    profile: vmc
    bind: "127.0.0.1:0"
    destinations: ["127.0.0.1:{rx.getsockname()[1]}"]
    rate_hz: 30
    mtu: 256
""") as g:
        port = g.port_of("in")
        tx = udp()
        tx.sendto(performer_bundle(), ("127.0.0.1", port))
        wait_until(lambda: len(g.entities()) == 8, what="8 entities")
        frames, bones, devices = [], {}, {}
        deadline = time.monotonic() + 10
        # collect datagrams until one frame (OK first) holds every bone and device
        while time.monotonic() < deadline and (len(bones) < 5 or len(devices) < 3):
            d = rx.recv(65536)
            assert len(d) <= 256, len(d)
            assert d.startswith(b"#bundle\0") and struct.unpack_from(">Q", d, 8)[0] == 1
            msgs = parse_packet(d)
            if msgs[0][0] == "/VMC/Ext/OK":
                assert msgs[0] == ("/VMC/Ext/OK", "i", [1]), msgs[0]
                assert msgs[1][0] == "/VMC/Ext/T" and msgs[1][1] == "f" and msgs[1][2][0] >= 0
                assert msgs[2] == ("/VMC/Ext/Root/Pos", "sfffffff",
                                   ["root", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]), msgs[2]
                frames.append(d)
                bones, devices = {}, {}
            elif not frames:
                continue
            else:
                assert all(m[0] != "/VMC/Ext/OK" for m in msgs)
            for addr, tags, args in msgs:
                if addr == "/VMC/Ext/Bone/Pos":
                    bones[args[0]] = args[1:]
                elif addr in ("/VMC/Ext/Hmd/Pos", "/VMC/Ext/Con/Pos", "/VMC/Ext/Tra/Pos"):
                    devices[(addr, args[0])] = args[1:]
        assert len(bones) == 5 and len(devices) == 3, (bones, devices)
        w = world_poses()
        for name, (p, q) in LOCALS.items():
            if name == "Hips":  # local to the identity root: the world pose
                p, q = w["Hips"]
            got = bones[name]
            assert all(abs(a - b) < 2e-5 for a, b in zip(got[:3], p)), (name, got, p)
            assert abs(sum(a * b for a, b in zip(got[3:], q))) > 1 - 1e-6, (name, got, q)
        for addr, serial, p, q in DEVICES:
            k = addr.split("/")[3].lower()
            got = devices[(addr, f"in/{k}/{serial}")]
            assert all(abs(a - b) < 2e-5 for a, b in zip(got[:3], p)), (serial, got, p)
            assert abs(sum(a * b for a, b in zip(got[3:], q))) > 1 - 1e-6, (serial, got, q)
        c = g.adapter("out")["counters"]
        assert c["datagrams_out"] >= 2 and c["oversize"] == 0, c  # 256 bytes: split frames
        print("round trip vmc -> vmc: ok")


def test_vmt():
    rx = udp()
    with Gateway(f"""
gateway: {{entity: {{stale_ms: 300, expire_ms: 600}}}}
adapters:
  - name: in
    type: vmc
    bind: "127.0.0.1:0"
    rename:
      - {{match: "in/tra/LH", kind: left_hand}}
      - {{match: "in/tra/RH", kind: right_hand}}
  - name: steamvr
    type: vmc
    profile: vmt
    bind: "127.0.0.1:0"
    destinations: ["127.0.0.1:{rx.getsockname()[1]}"]
    trackers: [{{match: "in/con/*", index: 5}}]
    rate_hz: 30
""") as g:
        port = g.port_of("in")
        tx = udp()
        sent = {"in/hmd/H": ((0.1, 1.7, 0.3), q_axis((0, 1, 0), 40)),
                "in/con/C": ((0.2, 1.0, 0.1), q_axis((1, 0, 0), 10)),
                "in/tra/LH": ((-0.3, 1.0, 0.0), q_axis((0, 0, 1), 20)),
                "in/tra/RH": ((0.3, 1.0, 0.0), q_axis((0, 0, 1), -20))}
        addr = {"hmd": "/VMC/Ext/Hmd/Pos", "con": "/VMC/Ext/Con/Pos", "tra": "/VMC/Ext/Tra/Pos"}
        els = [osc_msg(addr[n.split("/")[1]], "sfffffff", n.split("/")[2], *p, *q)
               for n, (p, q) in sent.items()]
        # the hmd first, so that it gets index 0; the others in one later bundle
        tx.sendto(bundle(els[0]), ("127.0.0.1", port))
        wait_until(lambda: "in/hmd/H" in g.entities(), what="the hmd")
        first, _ = recv_until(rx, lambda m, d: any(x[2][0] == 0 for x in m))
        got = {args[0]: args[1:] for _, _, args in first}
        tx.sendto(bundle(*els[1:]), ("127.0.0.1", port))
        deadline = time.monotonic() + 10
        while len(got) < 4 and time.monotonic() < deadline:
            for a, tags, args in parse_packet(rx.recv(65536)):
                assert a == "/VMT/Room/Unity" and tags == "iiffffffff", (a, tags)
                got[args[0]] = args[1:]
        want = {0: ("in/hmd/H", 1), 5: ("in/con/C", 1), 1: ("in/tra/LH", 2), 2: ("in/tra/RH", 3)}
        assert set(got) == set(want), got
        for idx, (name, enable) in want.items():
            p, q = sent[name]
            assert got[idx][0] == enable and got[idx][1] == 0.0, (name, got[idx])
            assert got[idx][2:] == [f32(v) for v in (*p, *q)], (name, got[idx], p, q)
        # silence: the entities expire and their trackers are disabled
        off = set()

        def disabled(msgs, d):
            for a, tags, args in msgs:
                if args[1] == 0:
                    assert args[2:] == [0.0] * 7 + [1.0], args
                    off.add(args[0])
            return off == set(want)
        recv_until(rx, disabled)
        c = g.adapter("steamvr")["counters"]
        assert c["trackers_out"] >= 8 and c["vmt_no_index"] == 0, c
        print("vmt: ok")


if __name__ == "__main__":
    test_ingress()
    test_bad_input()
    test_device_limit()
    test_roundtrip_vmc()
    test_vmt()
