"""Browser test of the web inspector: Debian's headless Chromium driven by playwright-core (npm,
installed into <build>/web/node_modules by the build) from tests/browser/inspector.mjs.

Starts three gateways. The first has two synth sources, `demo` (6 entities at 120 Hz) and `slow`
(one body at 0.5 Hz with entity.stale_ms 200, so it is STALE most of the time): the page must
list and draw every entity (coloured by origin; STALE in red, PREDICTED plain), match
/api/entities in the table and the 3D scene, filter, collapse origins, select an entity and plot
it, plot adapter rates and an age histogram (angles unwrapped, rate axes from 0, pause, a
cursor read-out), sort by a column header, filter by quality and "stale" (highlighted in 3D, an
empty result said); then the gateway stops (the 3D view greyed under "unreachable since", the
header's counts the last frame's, tables greyed out, states "unknown", ages growing) and
restarts on the same port (the page reconnects). The second replays
the CMU walk (31 joints, one renamed to a long name) and runs an RTP sender aimed at a port
nobody listens on: bones, decluttered labels, axes and label toggles, follow and fit, the long
name, "no listener" on the RTP row; then the WebXR mode against a stub of navigator.xr. The
same take at 390x844, 360x740 and 430x932 (phone: no horizontal scroll, every name readable,
controls and plots reachable) and at the desktop size (follow keeps a wheel zoom, focus). The
third has 200 bodies: natural order, labels without overlap. Between them the first gateway
reloads its configuration with an adapter added (POST /api/reload): the page lists it and says so
without being reloaded and without reconnecting. Screenshots go to
<build>/test-output/inspector*.png (inspector-mocap.png and inspector-crowd.png are the 31-joint
and 200-entity views; the checks above are made on what they show).

Skips (77; fails under CI=true) when node, Chromium (/usr/bin/chromium or $XG_CHROMIUM),
playwright-core or three.js is missing (browserlib.find_browser): docker/install-deps.sh installs
nodejs, npm and chromium."""
import os
import socket
import urllib.request

from browserlib import OUTPUT_DIR, THREE, find_browser, print_checks, run_driver
from xgtest import VECTORS_DIR, Gateway, reserve_port

SCREENSHOT = os.path.join(OUTPUT_DIR, "inspector.png")


CONFIG = """gateway:
  id: browser-test
  entity:
    stale_ms: 200
adapters:
  - name: demo
    type: synth
    rate_hz: 120
    bodies: 3
  - name: slow
    type: synth
    rate_hz: 0.5
    bodies: 1
    head: false
    hands: false
"""


MOCAP = """gateway:
  id: browser-mocap
adapters:
  - name: take
    type: bvh
    file: {cmu}
    rename:
      - match: "take/LeftHandIndex1"
        name: "take/left_hand_index_finger_proximal_phalanx_marker_cluster_A"
  - name: nowhere
    type: rtp
    bind: "127.0.0.1:0"
    destinations: ["127.0.0.1:{dead}"]
    rate_hz: 30
"""

CROWD = """gateway:
  id: browser-crowd
adapters:
  - name: crowd
    type: synth
    rate_hz: 30
    bodies: 200
    head: false
    hands: false
"""


def dead_port():
    """A UDP port nobody listens on (bound, read, closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    node = find_browser((THREE,))

    # the gateway is restarted on the same port: the test holds it throughout (reserve_port), so
    # that no other test is handed it while the gateway is down
    hold = reserve_port()
    port = hold.port
    gw = Gateway(CONFIG, admin=f"127.0.0.1:{port}")
    mocap = Gateway(MOCAP.format(cmu=os.path.join(VECTORS_DIR, "mocap", "cmu_08_10_walk.bvh"),
                                 dead=dead_port()))
    crowd = Gateway(CROWD)
    def on_line(line, send):
        # the driver's requests: stop the first gateway, start it again, reload its config
        nonlocal gw
        if line == "STOP":
            gw.stop()
            gw.tmp.cleanup()
            send("STOPPED")
        elif line == "START":
            gw = Gateway(CONFIG, admin=f"127.0.0.1:{port}")
            send("RESTARTED")
        elif line == "RELOAD":
            with open(os.path.join(gw.tmp.name, "xrgate.yaml"), "a") as f:
                f.write("  - name: extra\n    type: synth\n    rate_hz: 30\n    bodies: 1\n"
                        "    head: false\n    hands: false\n")
            req = urllib.request.Request(gw.url("/api/reload"), data=b"", method="POST")
            with urllib.request.urlopen(req, timeout=10) as r:
                assert r.status == 200, r.status
            send("RELOADED")

    try:
        code, result = run_driver(node, "inspector.mjs", [
            "--url", f"http://127.0.0.1:{port}/", "--screenshot", SCREENSHOT, "--entities", "7",
            "--mocap-url", f"http://127.0.0.1:{mocap.port}/",
            "--crowd-url", f"http://127.0.0.1:{crowd.port}/"], timeout=240, on_line=on_line)
        assert result is not None, f"node exited {code} without a result"
        print_checks(result)
        print(f"page load {result.get('load_ms')} ms, first frame drawn "
              f"{result.get('first_frame_ms')} ms; 3D view greyed {result.get('greyed_ms')} ms "
              f"after the gateway stopped; pixels {result.get('pixels')}; "
              f"screenshot {result.get('screenshot')}")
        assert "error" not in result, result["error"]
        assert code == 0 and result["failed"] == 0, f"{result['failed']} check(s) failed"
        assert os.path.getsize(SCREENSHOT) > 10000
    finally:
        for g in (gw, mocap, crowd):
            g.stop()
            g.tmp.cleanup()
        hold.release()
    n = len(result["checks"])
    print(f"test_inspector_browser: {n} passed, 0 failed")


if __name__ == "__main__":
    main()
