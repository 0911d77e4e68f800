"""The headset as a source, tested as a user would (docs/adapters/webxr.md): Meta's IWER (an
emulated Quest 3, npm `iwer`, in <build>/web/node_modules) is injected into Debian's headless
Chromium before the inspector page loads; "Enter VR" starts a session whose poses stream to the
gateway's `webxr` adapter over a WebSocket. tests/browser/webxr.mjs moves the emulated head and
controllers and checks that /api/entities holds those poses (<= 1 mm, <= 0.1 deg) within
time_bound(0.1); switches to hand tracking (25 joints per hand, with parents); ends the session
(the entities go STALE, then expire). Prints the page -> table latency the adapter measured.

Skips (77; fails under CI=true) when node, Chromium, playwright-core or iwer is missing."""
import json
import os
import shutil
import subprocess
import sys
import threading

import socket

from xgtest import SOURCE_DIR, Gateway, require_adapters, skip, skip_part, time_bound

BUILD_DIR = os.environ.get("XG_BUILD_DIR") or os.path.join(SOURCE_DIR, "build")
NODE_MODULES = os.path.join(BUILD_DIR, "web", "node_modules")
CHROMIUM = os.environ.get("XG_CHROMIUM", "/usr/bin/chromium")
SCRIPT = os.path.join(SOURCE_DIR, "tests", "browser", "webxr.mjs")
SCREENSHOT = os.path.join(BUILD_DIR, "test-output", "webxr.png")

CONFIG = """gateway:
  id: webxr-test
  entity:
    stale_ms: 300
    expire_ms: 1500
adapters:
  - name: demo
    type: synth
    rate_hz: 30
    bodies: 1
  - name: xr
    type: webxr
    listen: "127.0.0.1:0"
"""


def main():
    require_adapters("webxr")
    node = shutil.which("node")
    if not node:
        skip("node not found (docker/install-deps.sh installs nodejs)")
    if not os.access(CHROMIUM, os.X_OK):
        skip(f"{CHROMIUM} not found (docker/install-deps.sh installs chromium)")
    for mod, path in (("playwright-core", "playwright-core"),
                      ("iwer", os.path.join("iwer", "build", "iwer.min.js")),
                      ("three.js", os.path.join("three", "build", "three.module.js"))):
        if not os.path.exists(os.path.join(NODE_MODULES, path)):
            skip(f"{mod} not in {NODE_MODULES} (the build runs npm ci there when npm is "
                 "installed)")
    os.makedirs(os.path.dirname(SCREENSHOT), exist_ok=True)
    # "not a secure origin" is shown on http://<this machine's name>:PORT/ (mapped to loopback
    # inside Chromium; the admin server accepts its own host name)
    insecure = socket.gethostname()
    if not insecure or insecure == "localhost" or insecure.endswith(".localhost"):
        skip_part(f"host name '{insecure}' is a secure origin: the insecure-origin case")
        insecure = ""
    gw = Gateway(CONFIG)
    try:
        gw.wait_log("WebXR sessions on ws://127.0.0.1:")
        proc = subprocess.Popen(
            [node, SCRIPT, "--url", f"http://127.0.0.1:{gw.port}/", "--node-modules",
             NODE_MODULES, "--adapter", "xr", "--bound", str(time_bound(0.1)),
             "--screenshot", SCREENSHOT, "--insecure-host", insecure],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        errlines = []
        threading.Thread(target=lambda: errlines.extend(proc.stderr), daemon=True).start()
        timer = threading.Timer(180, proc.kill)
        timer.start()
        result = None
        for line in proc.stdout:
            if line.startswith("RESULT "):
                result = json.loads(line[7:])
        code = proc.wait()
        timer.cancel()
        sys.stderr.write("".join(errlines))
        assert result is not None, f"node exited {code} without a result"
        for c in result.get("checks", []):
            print(("ok   " if c["ok"] else "FAIL ") + c["what"] +
                  ("" if c["ok"] else f"  {json.dumps(c.get('detail'))}"))
        assert "error" not in result, result["error"]
        cnt = (result.get("adapter") or {}).get("counters", {})
        print(f"poses in the table {result.get('move_ms')} ms and {result.get('move2_ms')} ms "
              f"after the emulated device moved (bound {time_bound(0.1) * 1000:.0f} ms; the "
              f"untimed first move {result.get('warmup_ms')} ms); "
              f"page -> table latency p50 {cnt.get('latency_ms_p50')} ms, max "
              f"{cnt.get('latency_ms_max')} ms over the last frames (clock round trip "
              f"{cnt.get('clock_rtt_ms')} ms); joints {result.get('joints')}")
        assert code == 0 and result["failed"] == 0, f"{result['failed']} check(s) failed"
    finally:
        gw.stop()
        gw.tmp.cleanup()
    print(f"test_webxr_browser: {len(result['checks'])} passed, 0 failed")


if __name__ == "__main__":
    main()
