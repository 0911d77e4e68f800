"""Helpers for the end-to-end test (test_e2e.py): quaternion math, the BVH ground truth at frame
times (the independent matrix forward kinematics of test_bvh.py, converted to quaternions), the
Float16 precision of the game-state Rot2 field, and a TCP proxy that can drop and restore a link.
Standard library only. Quaternions are (x, y, z, w), Hamilton, body->world, as in xrgate."""
import math
import socket
import threading

from test_bvh import fk, load_bvh  # the independent Python BVH reader + FK (rotation matrices)


# ---- quaternions ----

def qmul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


def qconj(q):
    return (-q[0], -q[1], -q[2], q[3])


def qnorm(q):
    n = math.sqrt(sum(c * c for c in q))
    return tuple(c / n for c in q)


def qlog(q):
    """Rotation vector (axis*angle, rad) of unit q, shortest arc."""
    if q[3] < 0:
        q = tuple(-c for c in q)
    s = math.sqrt(q[0] ** 2 + q[1] ** 2 + q[2] ** 2)
    if s < 1e-300:
        return (0.0, 0.0, 0.0)
    ang = 2 * math.atan2(s, q[3])
    return tuple(c / s * ang for c in q[:3])


def qexp(r):
    ang = math.sqrt(sum(c * c for c in r))
    if ang < 1e-300:
        return (0.0, 0.0, 0.0, 1.0)
    s = math.sin(ang / 2) / ang
    return (r[0] * s, r[1] * s, r[2] * s, math.cos(ang / 2))


def qangle(a, b):
    """Angle (rad) of the rotation between unit quaternions a and b (sign-agnostic, precise
    near 0: 2 atan2(|vec|, |w|) of a* b)."""
    d = qmul(qconj(qnorm(a)), qnorm(b))
    return 2 * math.atan2(math.sqrt(d[0] ** 2 + d[1] ** 2 + d[2] ** 2), abs(d[3]))


def mat_quat(m):
    """Unit quaternion (x y z w) of a row-major rotation matrix (Shepperd's method)."""
    tr = m[0][0] + m[1][1] + m[2][2]
    if tr > 0:
        s = math.sqrt(tr + 1.0) * 2
        q = ((m[2][1] - m[1][2]) / s, (m[0][2] - m[2][0]) / s, (m[1][0] - m[0][1]) / s, s / 4)
    elif m[0][0] > m[1][1] and m[0][0] > m[2][2]:
        s = math.sqrt(1.0 + m[0][0] - m[1][1] - m[2][2]) * 2
        q = (s / 4, (m[0][1] + m[1][0]) / s, (m[0][2] + m[2][0]) / s, (m[2][1] - m[1][2]) / s)
    elif m[1][1] > m[2][2]:
        s = math.sqrt(1.0 + m[1][1] - m[0][0] - m[2][2]) * 2
        q = ((m[0][1] + m[1][0]) / s, s / 4, (m[1][2] + m[2][1]) / s, (m[0][2] - m[2][0]) / s)
    else:
        s = math.sqrt(1.0 + m[2][2] - m[0][0] - m[1][1]) * 2
        q = ((m[0][2] + m[2][0]) / s, (m[1][2] + m[2][1]) / s, s / 4, (m[1][0] - m[0][1]) / s)
    return qnorm(q)


def vsub(a, b):
    return tuple(x - y for x, y in zip(a, b))


def vnorm(a):
    return math.sqrt(sum(x * x for x in a))


def vdot(a, b):
    return sum(x * y for x, y in zip(a, b))


# ---- ground truth ----

class Truth:
    """Every frame of a BVH take for some joints: position (m), orientation, and the velocities
    the `bvh` adapter reports (differences over frames k-1 and k+1 of the played range
    [start, n-1], one-sided at its ends; angular velocity log(q_b q_a*)/dt, world frame)."""

    def __init__(self, path, joints, scale, start):
        self.joints_all, rows, self.ft = load_bvh(path)
        self.n = len(rows)
        self.start = start
        self.span = self.n - start
        self.pos, self.rot = {}, {}
        for k in range(start, self.n):
            w = fk(self.joints_all, rows[k], scale)
            for j in joints:
                p, m = w[j]
                self.pos[j, k] = tuple(p)
                self.rot[j, k] = mat_quat(m)
        self.vel, self.angvel = {}, {}
        for j in joints:
            for k in range(start, self.n):
                a, b = max(k - 1, start), min(k + 1, self.n - 1)
                dt = (b - a) * self.ft
                self.vel[j, k] = tuple(x / dt for x in vsub(self.pos[j, b], self.pos[j, a]))
                self.angvel[j, k] = tuple(
                    x / dt for x in qlog(qmul(self.rot[j, b], qconj(self.rot[j, a]))))
        self.joints = list(joints)

    def frame_ns(self, played):
        """Offset of played frame number `played` from playback start, ns (as the adapter)."""
        return int(round(played * self.ft * 1e9))

    def frame(self, played):
        return self.start + played % self.span

    def predicted(self, j, k, d):
        """The pose A's sinks send when they drain frame k's sample d seconds after its capture
        time: p + v d, exp(w d) q (core/table/entity_predict.c)."""
        p = tuple(x + v * d for x, v in zip(self.pos[j, k], self.vel[j, k]))
        q = qmul(qexp(tuple(w * d for w in self.angvel[j, k])), self.rot[j, k])
        return p, q

    def max_secant(self):
        """Largest frame-to-frame speed (m/s) and turn rate (rad/s) over the joints."""
        vs, ws = 0.0, 0.0
        for j in self.joints:
            for k in range(self.start + 1, self.n):
                vs = max(vs, vnorm(vsub(self.pos[j, k], self.pos[j, k - 1])) / self.ft)
                ws = max(ws, qangle(self.rot[j, k], self.rot[j, k - 1]) / self.ft)
        return vs, ws


# ---- precision of the wire formats ----

def f16_half_ulp(x):
    """Half a unit in the last place of IEEE binary16 at |x| (round-to-nearest error bound)."""
    x = abs(x)
    if x < 2.0 ** -14:
        return 2.0 ** -25  # subnormal spacing 2^-24
    return 2.0 ** (math.floor(math.log2(x)) - 11)


def f32_half_ulp(x):
    x = abs(x)
    if x < 2.0 ** -126:
        return 2.0 ** -150
    return 2.0 ** (math.floor(math.log2(x)) - 24)


def rot2_bound(q):
    """Bound (rad) on the rotation error of sending unit q as a game-state Rot2 `s`: the vector
    part (with w >= 0) as three Float16, w rebuilt as sqrt(1 - |v|^2). Each component is off by
    at most half a Float16 ulp (|dv| <= e); then |dw| <= (|v| e + e^2) / w', and the angle of
    the error rotation is at most 2 (|dv| + |dw|) (first order, doubled)."""
    if q[3] < 0:
        q = tuple(-c for c in q)
    e = math.sqrt(sum((f16_half_ulp(c) + 1e-12) ** 2 for c in q[:3]))
    v = vnorm(q[:3])
    w = max(q[3] - e, 1e-4)
    return 2.2 * (e + (v * e + e * e) / w)


# ---- a TCP proxy that drops and restores one link ----

class Proxy:
    """Forwards 127.0.0.1:<port> to `target` (None: accept and close until it is set, so that
    the proxy's port can be configured before the target listens). down() closes every connection and refuses new
    ones (accepts and closes them at once) until up()."""

    def __init__(self, target):
        self.target = target
        self.lsock = socket.socket()
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(16)
        self.port = self.lsock.getsockname()[1]
        self.lock = threading.Lock()
        self.conns = []
        self.is_down = False
        self.accepted = 0
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopped:
            try:
                c, _ = self.lsock.accept()
            except OSError:
                return
            with self.lock:
                if self.is_down or self.target is None:
                    c.close()
                    continue
            try:
                s = socket.create_connection(self.target, timeout=2)
                s.settimeout(None)
            except OSError:
                c.close()
                continue
            with self.lock:
                self.conns += [c, s]
                self.accepted += 1
            threading.Thread(target=self._pump, args=(c, s), daemon=True).start()
            threading.Thread(target=self._pump, args=(s, c), daemon=True).start()

    def _pump(self, a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        for x in (a, b):
            try:
                x.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def down(self):
        with self.lock:
            self.is_down = True
            conns, self.conns = self.conns, []
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()

    def up(self):
        with self.lock:
            self.is_down = False

    def close(self):
        self.stopped = True
        self.down()
        self.lsock.close()

