"""Integration: the web inspector's HTTP side without a browser.

- GET / and the embedded assets (content types, ETag/304, three.js embedded);
- GET /events: 30+ frames of the Server-Sent Events stream parsed: `retry:`, `event: hello`,
  `event: state` frames at 30 Hz (median gap on the gateway clock) with consecutive seq and
  advancing time_ns, the 6 synth entities whose
  poses match /api/entities (extrapolated to the frame's time with the reported velocities) and
  the adapter summary (samples in per second against 6 entities x 120 Hz);
- the token: `/` and the assets are static and need none; `/events` takes `Authorization: Bearer`
  or `?token=`; the
  API does not take `?token=`;
- clients: the cap (503 + Retry-After), cleanup on disconnect, a client that stops reading is
  dropped (after XG_INSPECTOR_STALL_MS, 5 s) while a reading one keeps streaming — skipping
  frames if it falls behind, never disconnected."""
import http.client
import json
import math
import os
import socket
import time

from xgtest import SOURCE_DIR, Gateway, skip_part, wait_until

BUILD_DIR = os.environ.get("XG_BUILD_DIR") or os.path.join(SOURCE_DIR, "build")
# three.js is embedded when the build ran npm ci (not with -DXRGATE_WEB_INSPECTOR=OFF / no npm)
THREE = os.path.isfile(os.path.join(BUILD_DIR, "web", "node_modules", "three", "build",
                                    "three.module.js"))

SYNTH_NAMES = ["demo/body0", "demo/body1", "demo/body2", "demo/head", "demo/left_hand",
               "demo/right_hand"]
MAX_CLIENTS = 16  # XG_INSPECTOR_MAX_CLIENTS


class SSE:
    """A parsed text/event-stream over http.client (chunked transfer handled by http.client)."""

    def __init__(self, port, path="/events", headers=None, timeout=5):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.conn.request("GET", path, headers=headers or {})
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.retry = None
        self.comments = []

    def events(self):
        """Yields (event, data, arrival monotonic time)."""
        ev, data = "message", []
        while True:
            line = self.resp.readline()
            if not line:
                return
            line = line.decode("utf-8").rstrip("\r\n")
            if line == "":
                if data:
                    yield ev, "\n".join(data), time.monotonic()
                ev, data = "message", []
            elif line.startswith(":"):
                self.comments.append(line[1:].strip())
            else:
                field, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if field == "event":
                    ev = value
                elif field == "data":
                    data.append(value)
                elif field == "retry":
                    self.retry = int(value)

    def close(self):
        self.conn.close()


def qmul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return [aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz]


def rotate_by(q, w, dt):
    """q advanced by world-frame angular velocity w (rad/s) for dt seconds."""
    ang = math.sqrt(sum(x * x for x in w)) * dt
    if ang < 1e-12:
        return q
    ax = [x * dt / ang for x in w]
    s = math.sin(ang / 2)
    return qmul([ax[0] * s, ax[1] * s, ax[2] * s, math.cos(ang / 2)], q)


def quat_angle_deg(a, b):
    d = abs(sum(x * y for x, y in zip(a, b)))
    return math.degrees(2 * math.acos(min(1.0, d)))


def check_stream(gw):
    sse = SSE(gw.port)
    assert sse.status == 200, sse.status
    assert sse.resp.getheader("Content-Type").startswith("text/event-stream")
    assert sse.resp.getheader("Cache-Control") == "no-store"
    it = sse.events()
    ev, data, _ = next(it)
    assert ev == "hello", (ev, data)
    hello = json.loads(data)
    assert sse.retry == 1000, sse.retry  # reconnect-friendly: retry: comes first
    assert sse.comments and "xrgate" in sse.comments[0], sse.comments
    assert hello["gateway"] == "xrgate" and hello["frame"]["up"] == "+y", hello
    assert abs(hello["rate_hz"] - 30) < 1, hello

    # 30 frames (~1 s), and on until the adapter's rate (measured over >= 0.5 s) is in them;
    # counted in frames, not wall-clock time, which a loaded machine stretches
    frames = []
    api = None
    t_end = time.monotonic() + 20
    for ev, data, t in it:
        assert ev == "state", ev
        frames.append((json.loads(data), t))
        if api is None and len(frames) == 10:
            api = gw.get_json("/api/entities")
        if len(frames) >= 30 and frames[-1][0]["adapters"][0]["samples_in_per_s"] > 0 and \
                frames[-1][0]["time_ns"] >= api["time_ns"]:
            break
        assert t < t_end, f"{len(frames)} frames in 20 s, the last: {frames[-1][0]}"
    sse.close()

    # cadence: 30 Hz on the gateway clock; the median gap, which a few late ticks on a loaded
    # machine do not move (this is content, not a benchmark)
    n = len(frames)
    seqs = [f["seq"] for f, _ in frames]
    assert seqs == list(range(seqs[0], seqs[0] + n)), seqs
    times = [f["time_ns"] for f, _ in frames]
    gaps = [(b - a) * 1e-6 for a, b in zip(times, times[1:])]
    assert all(g > 0 for g in gaps), gaps
    med_gap = sorted(gaps[1:])[len(gaps[1:]) // 2]  # the first frame is sent at connect time
    assert 25 < med_gap < 45, (med_gap, gaps)

    for f, _ in frames:
        names = sorted(e["name"] for e in f["entities"])
        assert names == SYNTH_NAMES, names
        for e in f["entities"]:
            # (HELD: the newest sample older than the prediction horizon, as on a loaded machine)
            assert e["origin"] == "demo" and e["quality"] in ("EXACT", "PREDICTED", "HELD"), e
            assert len(e["position"]) == 3 and len(e["orientation"]) == 4
            assert abs(math.sqrt(sum(x * x for x in e["orientation"])) - 1) < 1e-5, e
            # (the synth's own timing on a loaded machine is not this test's business)
            assert 0 <= e["age_ms"] < 1000 and e["rate_hz"] > 0, e
        assert len(f["adapters"]) == 1
    kinds = {e["name"]: e["kind"] for e in frames[-1][0]["entities"]}
    assert kinds["demo/head"] == "head" and kinds["demo/left_hand"] == "left_hand", kinds

    # adapter summary: 6 entities at 120 Hz ~ 720 samples/s in; nothing out (synth is no sink)
    ad = frames[-1][0]["adapters"][0]
    assert ad["name"] == "demo" and ad["type"] == "synth" and ad["state"] == "running", ad
    assert 0 < ad["samples_in_per_s"] < 1080, ad
    assert ad["samples_out_per_s"] == 0 and ad["drops"] == 0 and ad["reconnects"] == 0, ad
    # not-newer samples are their own field, not drops; no ICMP "port unreachable" counted
    assert ad["samples_backwards"] == 0 and ad["unreachable"] == 0, ad
    assert all("parent" not in e for e in frames[-1][0]["entities"]), "synth has no hierarchy"
    assert ad["samples_in"] > 0 and ad["index"] == 0 and ad["sink"] is False, ad

    # poses against /api/entities: the frame nearest in time, extrapolated with the API's
    # velocities over the difference (~20 ms; more on a loaded machine, hence the dt^2 terms:
    # the synth's paths accelerate smoothly). No wall-clock bound on dt: the snapshot lies
    # between two frames on the gateway's clock (frame 10 arrived before the request, the
    # stream was read past it), so the nearest frame is at most half a frame gap away
    assert api is not None
    assert times[0] <= api["time_ns"] <= times[-1], (api["time_ns"], times[0], times[-1])
    best = min(frames, key=lambda ft: abs(ft[0]["time_ns"] - api["time_ns"]))[0]
    dt = (best["time_ns"] - api["time_ns"]) * 1e-9
    by_name = {e["name"]: e for e in best["entities"]}
    for a in api["entities"]:
        s = by_name[a["name"]]
        assert s["id"] == a["id"] and s["kind"] == a["kind"], (s, a)
        want = [p + v * dt for p, v in zip(a["position"], a["velocity"])]
        err = math.sqrt(sum((x - y) ** 2 for x, y in zip(s["position"], want)))
        assert err < 0.005 + 2 * dt * dt, (a["name"], err, dt, s["position"], want)
        qwant = rotate_by(a["orientation"], a["angular_velocity"], dt)
        ang = quat_angle_deg(s["orientation"], qwant)
        assert ang < 0.5 + 100 * dt * dt, (a["name"], ang, dt)
    # and they move: first vs last frame (1 s apart, every synth path moves > 0.1 m/s)
    first = {e["name"]: e["position"] for e in frames[0][0]["entities"]}
    for e in frames[-1][0]["entities"]:
        moved = math.sqrt(sum((x - y) ** 2 for x, y in zip(e["position"], first[e["name"]])))
        assert moved > 0.02, (e["name"], moved)


def check_static(gw):
    status, hdr, body = gw.get("/")
    assert status == 200 and hdr["Content-Type"] == "text/html; charset=utf-8", (status, hdr)
    assert b'<script type="importmap">' in body and b"/inspector/inspector.js" in body
    three = [("/inspector/three.module.js", b"three.core.js"),
             ("/inspector/three.core.js", b"REVISION"),
             ("/inspector/addons/controls/OrbitControls.js", b"OrbitControls"),
             ("/inspector/addons/renderers/CSS2DRenderer.js", b"CSS2DObject")]
    if not THREE:
        skip_part("three.js not in the build tree (built without npm ci): the 3D view's assets "
                  "are absent, their checks left out")
        for path, _ in three:
            assert gw.get(path)[0] == 404, path
    for path, needle in [("/inspector/inspector.js", b"new EventSource"),
                         ("/inspector/view3d.js", b"from 'three'"),
                         ("/inspector/inspector.css", b"#view")] + (three if THREE else []):
        status, hdr, body = gw.get(path)
        assert status == 200, (path, status)
        ctype = "text/css" if path.endswith(".css") else "text/javascript"
        assert hdr["Content-Type"] == ctype + "; charset=utf-8", (path, hdr)
        assert needle in body, (path, needle)
        etag = hdr["ETag"]
        status, _, body = gw.get(path, {"If-None-Match": etag})
        assert status == 304 and body == b"", (path, status)
    assert gw.get("/inspector/nope.js")[0] == 404
    assert gw.get("/inspector/../api/entities")[0] in (400, 404)
    # HEAD /events answers the headers without a stream
    c = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=5)
    c.request("HEAD", "/events")
    r = c.getresponse()
    assert r.status == 200 and r.getheader("Content-Type").startswith("text/event-stream")
    c.close()


def check_clients(gw):
    # the cap: MAX_CLIENTS streams are served, one more gets 503 + Retry-After
    streams = [SSE(gw.port) for _ in range(MAX_CLIENTS)]
    assert all(s.status == 200 for s in streams), [s.status for s in streams]
    extra = SSE(gw.port)
    assert extra.status == 503 and extra.resp.getheader("Retry-After") == "2", extra.status
    assert b"too many" in extra.resp.read()
    extra.close()
    # closing streams frees their slots (cleanup on disconnect)
    for s in streams:
        s.close()
    def all_served():
        again = [SSE(gw.port) for _ in range(MAX_CLIENTS)]
        ok = all(s.status == 200 for s in again)
        for s in again:
            s.close()
        return ok
    wait_until(all_served, what="slots freed after the clients disconnected", every=0.1)
    # repeated connect/disconnect never leaks a slot
    for _ in range(3 * MAX_CLIENTS):
        s = SSE(gw.port)
        assert s.status == 200, s.status
        next(s.events())
        s.close()
    assert gw.get("/healthz")[0] == 200


def check_slow_client(gw):
    """A client that never reads is dropped once it has been behind for 5 s; a reading client on
    the same gateway keeps getting frames (~0.5 MB each: both fall behind fast)."""
    slow = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.connect(("127.0.0.1", gw.port))
    slow.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    good = SSE(gw.port, timeout=10)
    buf = b""
    frames = 0

    def read_some():
        nonlocal buf, frames
        chunk = good.resp.read1(1 << 20)  # raw reads: this client keeps up with ~15 MB/s
        assert chunk, "the reading client was disconnected:\n" + gw.log()[-2000:]
        buf += chunk
        *done, buf = buf.split(b"\n\n")
        frames += sum(1 for ev in done if ev.startswith(b"event: state"))
        return [ev for ev in done if ev.startswith(b"event: state")]

    deadline = time.monotonic() + 20
    while not any("client dropped" in line for line in gw.lines):
        assert time.monotonic() < deadline, "slow client not dropped:\n" + gw.log()[-2000:]
        read_some()
    got = frames
    last = []
    while frames < got + 5 or not last:  # the reader goes on
        last = read_some() or last
    data = last[-1].split(b"data: ", 1)[1]
    assert len(json.loads(data)["entities"]) > 1000
    good.close()
    # the dropped connection is closed by the gateway: reading it ends (after the backlog)
    slow.settimeout(10)
    total = 0
    while True:
        chunk = slow.recv(1 << 20)
        if not chunk:
            break
        total += len(chunk)
    slow.close()
    assert total > 4096 and got > 0, (total, got)


def main():
    with Gateway() as gw:
        check_static(gw)
        # the synth's rate estimates settled (as test_admin_api waits for them)
        wait_until(lambda: (lambda es: len(es) == 6 and all(e["samples"] >= 20 for e in es))(
            gw.get_json("/api/entities")["entities"]), what="6 entities with 20 samples each")
        check_stream(gw)
        check_clients(gw)
        assert "ERROR" not in gw.log(), gw.log()

    token = "s3cret-inspector"
    with Gateway(env={"XRGATE_ADMIN_TOKEN": token}) as gw:
        # the page is static code without data: served without the token (it passes on the
        # token it was opened with to /events)
        status, _, page = gw.get("/")
        assert status == 200 and b"importmap" in page, status
        assert b"demo/" not in page and token.encode() not in page
        status, _, body = gw.get(f"/?token={token}")
        assert status == 200 and body == page
        assert gw.get("/", {"Authorization": f"Bearer {token}"})[0] == 200
        assert gw.get("/inspector/inspector.js")[0] == 200  # static code: no token
        # every browser asks for /favicon.ico: "no icon" without the token, not a 401 in the
        # console on every page load (issue 34); the page itself links an empty icon
        status, _, body = gw.get("/favicon.ico")
        assert status == 204 and body == b"", (status, body)
        assert b'rel="icon"' in page
        assert gw.get(f"/api/entities?token={token}")[0] == 401  # the API wants the header
        for path, headers, want in [("/events", {}, 401), ("/events?token=nope", {}, 401),
                                    (f"/events?token={token}", {}, 200),
                                    ("/events", {"Authorization": f"Bearer {token}"}, 200)]:
            s = SSE(gw.port, path, headers)
            assert s.status == want, (path, s.status)
            if want == 200:
                it = s.events()
                ev, data, _ = next(it)
                assert ev == "hello", ev
                for _ in range(30):  # the first frame may precede the synth's first samples
                    ev, data, _ = next(it)
                    assert ev == "state", ev
                    if len(json.loads(data)["entities"]) == 6:
                        break
                else:
                    raise AssertionError("no frame with the 6 synth entities")
            s.close()

    # many entities: ~0.5 MB per frame, so a client that stops reading passes the bound fast
    big = """gateway:
  id: big
adapters:
  - name: demo
    type: synth
    rate_hz: 10
    bodies: 2500
"""
    with Gateway(big) as gw:
        check_slow_client(gw)
        assert gw.get("/healthz")[0] == 200
        code, _ = gw.stop()
        assert code == 0, gw.log()
    print("test_inspector: 1 passed, 0 failed")


if __name__ == "__main__":
    main()
