"""Integration: the `bvh` adapter replays a take through the real daemon.

1. tests/vectors/bvh/walk_small.bvh, played once at 4x with a joint map: entity names and kinds,
   state "done" at the last frame, and every pose/velocity equal to an independent forward
   kinematics written here in Python (matrices, not the C code's quaternions).
2. The CMU walk in tests/vectors/mocap: all 31 joints, each
   entity's pose is the Python FK of one frame (all from the same frame), the hips move at walking
   speed, the head is above the hips, and the reported velocities agree with the positions'
   differences between two reads.
3. `xrgate --check` names the config position, the BVH line and the token of a broken take.
Both replays use `velocities: central` (the offline option) so that the reported velocities can be
checked against the Python FK's differences; the causal default is tested in
tests/unit/test_bvh_adapter.c (test_causal_default).
Prediction is switched off (max_horizon_ms: 0) so /api/entities shows the samples themselves;
the API prints 9 significant digits, hence the 1e-7 tolerances."""
import math
import os
import subprocess
import sys
import tempfile

from xgtest import BIN, SOURCE_DIR, VECTORS_DIR, Gateway, wait_until

CMU = os.path.join(VECTORS_DIR, "mocap", "cmu_08_10_walk.bvh")
SMALL = os.path.join(SOURCE_DIR, "tests", "vectors", "bvh", "walk_small.bvh")
CMU_SCALE = 0.0254 / 0.45


# ---- an independent BVH reader and forward kinematics (rotation matrices) ----

def load_bvh(path):
    with open(path, "rb") as f:
        tok = f.read().decode("ascii").replace("{", " { ").replace("}", " } ").split()
    joints, stack, i, ncol = [], [], 1, 0  # tok[0] == HIERARCHY
    while tok[i] != "MOTION":
        t = tok[i]
        if t in ("ROOT", "JOINT"):
            joints.append({"name": tok[i + 1], "parent": stack[-1] if stack else -1,
                           "channels": [], "col": ncol})
            stack.append(len(joints) - 1)
            i += 3
        elif t == "End":
            parent = stack[-1]
            joints.append({"name": joints[parent]["name"] + "_End", "parent": parent,
                           "channels": [], "col": ncol})
            stack.append(len(joints) - 1)
            i += 3
        elif t == "OFFSET":
            joints[stack[-1]]["offset"] = [float(x) for x in tok[i + 1:i + 4]]
            i += 4
        elif t == "CHANNELS":
            n = int(tok[i + 1])
            joints[stack[-1]]["channels"] = tok[i + 2:i + 2 + n]
            joints[stack[-1]]["col"] = ncol
            ncol += n
            i += 2 + n
        elif t == "}":
            stack.pop()
            i += 1
        else:
            raise ValueError(t)
    frames = int(tok[i + 2])
    ft = float(tok[i + 5])
    vals = [float(x) for x in tok[i + 6:]]
    assert len(vals) == frames * ncol
    rows = [vals[k * ncol:(k + 1) * ncol] for k in range(frames)]
    return joints, rows, ft


def matmul(a, b):
    return [[sum(a[r][k] * b[k][c] for k in range(3)) for c in range(3)] for r in range(3)]


def matvec(a, v):
    return [sum(a[r][k] * v[k] for k in range(3)) for r in range(3)]


def axis_mat(axis, deg):
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    if axis == "X":
        return [[1, 0, 0], [0, c, -s], [0, s, c]]
    if axis == "Y":
        return [[c, 0, s], [0, 1, 0], [-s, 0, c]]
    return [[c, -s, 0], [s, c, 0], [0, 0, 1]]


def fk(joints, row, scale):
    """World (position, rotation matrix) per joint name."""
    out, pos, rot = {}, [], []
    for j in joints:
        t = list(j["offset"])
        r = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
        for n, ch in enumerate(j["channels"]):
            v = row[j["col"] + n]
            if ch.endswith("position"):
                t["XYZ".index(ch[0])] = v
            else:
                r = matmul(r, axis_mat(ch[0], v))
        t = [x * scale for x in t]
        if j["parent"] < 0:
            p, m = t, r
        else:
            pp, pm = pos[j["parent"]], rot[j["parent"]]
            p = [a + b for a, b in zip(pp, matvec(pm, t))]
            m = matmul(pm, r)
        pos.append(p)
        rot.append(m)
        out[j["name"]] = (p, m)
    return out


def quat_mat(q):
    x, y, z, w = q
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]


def close(a, b, tol):
    return all(abs(x - y) <= tol for x, y in zip(a, b))


def mat_close(a, b, tol):
    return all(abs(a[r][c] - b[r][c]) <= tol for r in range(3) for c in range(3))


# ---- 1. the small vector, once, 4x ----

def test_small_once():
    joints, rows, ft = load_bvh(SMALL)
    conf = f"""
gateway:
  predict: {{max_horizon_ms: 0}}
adapters:
  - name: take
    type: bvh
    file: {SMALL}
    loop: false
    rate: 4
    velocities: central
    joints:
      Hips: hips
      Head: head
      LeftHand: left_hand
      RightHand: {{name: rhand, kind: right_hand}}
      Head_End: {{name: head_top}}
    rename:
      - {{match: "take/head_top", name: "take/crown"}}
"""
    with Gateway(conf) as gw:
        a = wait_until(lambda: (lambda a: a if a["state"] == "done" else None)(gw.adapter("take")))
        c = a["counters"]
        assert c["frame"] == len(rows) - 1 and c["frames"] == len(rows), c
        assert c["joints"] == 5 and c["loops"] == 0, c
        assert a["peer"].endswith("walk_small.bvh"), a
        # the log counts frames as the counter does, 0-based (issue 34 item 12)
        assert gw.wait_log(f"finished at frame {len(rows) - 1}, the last of frames "
                           f"0-{len(rows) - 1} (no loop)"), gw.log()
        ents = gw.entities("take/", strip=True)
        kinds = {n: e["kind"] for n, e in ents.items()}
        assert kinds == {"hips": "joint", "head": "head", "left_hand": "left_hand",
                         "rhand": "right_hand", "crown": "joint"}, kinds
        # the last frame, and the backward difference × the playback factor
        k = len(rows) - 1
        now, prev = fk(joints, rows[k], CMU_SCALE), fk(joints, rows[k - 1], CMU_SCALE)
        for name, joint in (("hips", "Hips"), ("head", "Head"), ("left_hand", "LeftHand"),
                            ("rhand", "RightHand"), ("crown", "Head_End")):
            e = ents[name]
            p, m = now[joint]
            assert close(e["position"], p, 1e-7), (name, e["position"], p)
            assert mat_close(quat_mat(e["orientation"]), m, 1e-7), name
            v = [(a - b) / ft * 4 for a, b in zip(p, prev[joint][0])]
            assert close(e["velocity"], v, 1e-6), (name, e["velocity"], v)
        print(f"small take: done at frame {c['frame']}, 5 entities match the Python FK")


# ---- 2. the CMU walk ----

def frame_of(ents, joints, rows, lo):
    """The frame whose FK matches the hips entity exactly, searching from lo."""
    hips = ents["Hips"]["position"]
    for k in range(lo, len(rows)):
        row = rows[k]
        p = [row[0] * CMU_SCALE, row[1] * CMU_SCALE, row[2] * CMU_SCALE]
        if close(hips, p, 1e-7):
            return k
    raise AssertionError(f"hips {hips} match no frame")


def test_cmu():
    joints, rows, ft = load_bvh(CMU)
    assert len(rows) == 276 and abs(ft - 0.0083333) < 1e-12
    conf = f"""
gateway:
  predict: {{max_horizon_ms: 0}}
adapters:
  - name: cmu
    type: bvh
    file: {CMU}
    start: 1f
    velocities: central
"""
    with Gateway(conf) as gw:
        wait_until(lambda: len(gw.entities("cmu/", strip=True)) == 31)
        for attempt in range(10):
            a1 = gw.adapter("cmu")
            e1 = gw.entities("cmu/", strip=True)
            c1 = gw.adapter("cmu")["counters"]  # >= 10 frames later (or wrapped: try again)
            wait_until(lambda: (lambda c: c["loops"] != c1["loops"]
                                or c["frame"] > c1["frame"] + 10)(gw.adapter("cmu")["counters"]))
            e2 = gw.entities("cmu/", strip=True)
            a2 = gw.adapter("cmu")  # a1 and a2 bracket both reads
            # both reads inside one pass of the clip (no wrap in between)
            if a1["counters"]["loops"] == a2["counters"]["loops"] and \
                    a2["counters"]["frame"] > a1["counters"]["frame"] + 10:
                break
        else:
            raise AssertionError("could not read twice within one loop")
        assert a2["state"] == "playing" and a2["counters"]["joints"] == 31, a2
        assert set(e1) == {j["name"] for j in joints if not j["name"].endswith("_End")}
        assert e1["Head"]["kind"] == "head" and e1["LeftHand"]["kind"] == "left_hand"
        assert e1["RightHand"]["kind"] == "right_hand" and e1["Hips"]["kind"] == "joint"
        # the skeleton: every joint names its parent joint's entity, the root none
        for j in joints:
            if j["name"].endswith("_End"):
                continue
            want = "cmu/" + joints[j["parent"]]["name"] if j["parent"] >= 0 else None
            assert e1[j["name"]].get("parent") == want, (j["name"], e1[j["name"]], want)
        k1 = frame_of(e1, joints, rows, 1)
        k2 = frame_of(e2, joints, rows, k1)
        assert k2 > k1
        for ents, k in ((e1, k1), (e2, k2)):
            truth = fk(joints, rows[k], CMU_SCALE)
            a, b = fk(joints, rows[max(k - 1, 1)], CMU_SCALE), fk(
                joints, rows[min(k + 1, len(rows) - 1)], CMU_SCALE)
            dt = (min(k + 1, len(rows) - 1) - max(k - 1, 1)) * ft
            for name, e in ents.items():
                p, m = truth[name]
                assert close(e["position"], p, 1e-7), (name, k, e["position"], p)
                assert mat_close(quat_mat(e["orientation"]), m, 1e-7), (name, k)
                v = [(y - x) / dt for x, y in zip(a[name][0], b[name][0])]
                assert close(e["velocity"], v, 1e-6), (name, k, e["velocity"], v)
            head = ents["Head"]["position"][1] - ents["Hips"]["position"][1]
            assert 0.4 < head < 0.8, head
            vx, _, vz = ents["Hips"]["velocity"]
            speed = math.hypot(vx, vz)
            assert 0.5 < speed < 2.0, speed
        # velocities consistent with how far the hips went between the two reads
        p1, p2 = e1["Hips"]["position"], e2["Hips"]["position"]
        t = (k2 - k1) * ft
        mean = math.hypot(p2[0] - p1[0], p2[2] - p1[2]) / t
        v1, v2 = e1["Hips"]["velocity"], e2["Hips"]["velocity"]
        vmean = (math.hypot(v1[0], v1[2]) + math.hypot(v2[0], v2[2])) / 2
        assert 0.5 < mean < 2.0 and abs(mean - vmean) < 0.3, (mean, vmean)
        print(f"CMU walk: frames {k1}->{k2}, hips {mean:.2f} m/s over {t:.3f} s "
              f"(reported {vmean:.2f} m/s), head {head:.3f} m above the hips; 31 joints match "
              f"the Python FK")
    return True


# ---- 2b. the hierarchy of a selection: bones join the nearest played ancestor ----

def test_parents_selected():
    conf = f"""
adapters:
  - name: take
    type: bvh
    file: {CMU}
    joints:
      Hips: {{name: hips, kind: rigid_body}}
      Head: head
      LeftHand: left_hand
      LeftForeArm: forearm
"""
    with Gateway(conf) as gw:
        ents = wait_until(lambda: (lambda e: e if len(e) == 4 else None)(
            gw.entities("take/", strip=True)))
        got = {n: e.get("parent") for n, e in ents.items()}
        # Head -> Neck1 -> Neck -> Spine1 -> Spine -> LowerBack -> Hips (skipped: not played)
        assert got == {"hips": None, "head": "take/hips", "forearm": "take/hips",
                       "left_hand": "take/forearm"}, got
    print("hierarchy of a selection: head -> hips, left_hand -> forearm -> hips")


# ---- 3. xrgate --check reports a broken take with file:line:column, BVH line and token ----

def test_check_errors():
    with tempfile.TemporaryDirectory(prefix="xrgate-bvh-") as d:
        with open(os.path.join(d, "bad.bvh"), "w") as f:
            f.write("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 1 Wrotation\n}\n")
        cfg = os.path.join(d, "x.yaml")
        cases = [("file: bad.bvh", "x.yaml:4:11: " + os.path.join(d, "bad.bvh") +
                  ": line 5: expected a channel name (Xposition Yposition Zposition Xrotation "
                  "Yrotation Zrotation), got 'Wrotation'"),
                 (f"file: {SMALL}\n    joints: [Hips, Nose]", "x.yaml:5:20: joints: no joint "
                  "matches 'Nose'"),
                 (f"file: {SMALL}\n    start: 99s", "x.yaml:5:12: start: '99s' is past the end")]
        for body, want in cases:
            with open(cfg, "w") as f:
                f.write(f"adapters:\n  - name: take\n    type: bvh\n    {body}\n")
            with open(cfg) as f:
                text = f.read()
            r = subprocess.run([BIN, "--check", "--config", cfg], capture_output=True, text=True,
                               timeout=10)
            assert r.returncode != 0 and want in r.stderr, (text, want, r.stderr)
    print("--check: broken take, unknown joint and late start reported with their positions")


def main():
    test_check_errors()
    test_small_once()
    test_cmu()
    test_parents_selected()
    return 0


if __name__ == "__main__":
    sys.exit(main())
