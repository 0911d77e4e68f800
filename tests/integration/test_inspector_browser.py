"""Browser test of the web inspector: Debian's headless Chromium driven by playwright-core (npm,
installed into <build>/web/node_modules by the build) from tests/browser/inspector.mjs.

Starts xrgate with two synth sources — `demo` (6 entities at 120 Hz) and `slow` (one body at
0.5 Hz with entity.stale_ms 200, so it is STALE most of the time) — opens the page and checks
that every entity is listed and drawn (coloured by origin; STALE and PREDICTED marked), that displayed poses (table and 3D scene) match /api/entities within a
tolerance and move over 500 ms, that the adapter row shows a non-zero rate, that the WebGL view
draws, then restarts the gateway on the same port and checks that the page reconnects. The
screenshot goes to <build>/test-output/inspector.png.

Skips (77) when node, Chromium (/usr/bin/chromium or $XG_CHROMIUM) or playwright-core is
missing: docker/install-deps.sh installs nodejs, npm and chromium."""
import json
import os
import shutil
import subprocess
import sys
import threading
import time

from xgtest import SOURCE_DIR, Gateway, skip

BUILD_DIR = os.environ.get("XG_BUILD_DIR") or os.path.join(SOURCE_DIR, "build")
NODE_MODULES = os.path.join(BUILD_DIR, "web", "node_modules")
CHROMIUM = os.environ.get("XG_CHROMIUM", "/usr/bin/chromium")
SCRIPT = os.path.join(SOURCE_DIR, "tests", "browser", "inspector.mjs")
SCREENSHOT = os.path.join(BUILD_DIR, "test-output", "inspector.png")


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


def main():
    node = shutil.which("node")
    if not node:
        skip("node not found (docker/install-deps.sh installs nodejs)")
    ver = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    if int((ver.lstrip("v").split(".") or ["0"])[0] or 0) < 18:
        skip(f"node {ver} is too old for playwright-core (needs >= 18)")
    if not os.access(CHROMIUM, os.X_OK):
        skip(f"{CHROMIUM} not found (docker/install-deps.sh installs chromium)")
    if not os.path.isdir(os.path.join(NODE_MODULES, "playwright-core")):
        skip(f"playwright-core not in {NODE_MODULES} (the build runs npm ci there when npm "
             "is installed)")
    if not os.path.isfile(os.path.join(NODE_MODULES, "three", "build", "three.module.js")):
        skip("three.js was not installed at build time (built without npm or with "
             "-DXRGATE_WEB_INSPECTOR=OFF)")

    gw = Gateway(CONFIG)
    port = gw.port
    try:
        time.sleep(0.3)
        proc = subprocess.Popen(
            [node, SCRIPT, "--url", f"http://127.0.0.1:{port}/", "--node-modules", NODE_MODULES,
             "--screenshot", SCREENSHOT, "--entities", "7"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        errlines = []
        threading.Thread(target=lambda: errlines.extend(proc.stderr), daemon=True).start()
        result = None
        timer = threading.Timer(120, proc.kill)
        timer.start()
        for line in proc.stdout:
            line = line.strip()
            if line == "RESTART":
                gw.stop()
                gw.tmp.cleanup()
                time.sleep(0.5)  # the page sees the loss and starts retrying
                for _ in range(50):  # same port: retry while the old socket lingers
                    try:
                        gw = Gateway(CONFIG, admin=f"127.0.0.1:{port}")
                        break
                    except RuntimeError:
                        time.sleep(0.1)
                else:
                    raise AssertionError(f"cannot restart xrgate on port {port}")
                proc.stdin.write("RESTARTED\n")
                proc.stdin.flush()
            elif line.startswith("RESULT "):
                result = json.loads(line[7:])
        code = proc.wait()
        timer.cancel()
        sys.stderr.write("".join(errlines))
        assert result is not None, f"node exited {code} without a result"
        for c in result.get("checks", []):
            print(("ok   " if c["ok"] else "FAIL ") + c["what"] +
                  ("" if c["ok"] else f"  {json.dumps(c.get('detail'))}"))
        print(f"page load {result.get('load_ms')} ms, first frame drawn "
              f"{result.get('first_frame_ms')} ms; pixels {result.get('pixels')}; "
              f"screenshot {result.get('screenshot')}")
        assert "error" not in result, result["error"]
        assert code == 0 and result["failed"] == 0, f"{result['failed']} check(s) failed"
        assert os.path.getsize(SCREENSHOT) > 10000
    finally:
        gw.stop()
        gw.tmp.cleanup()
    n = len(result["checks"])
    print(f"test_inspector_browser: {n} passed, 0 failed")


if __name__ == "__main__":
    main()
