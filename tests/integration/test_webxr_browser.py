"""The headset as a source, tested as a user would (docs/adapters/webxr.md): Meta's IWER (an
emulated Quest 3, npm `iwer`, in <build>/web/node_modules) is injected into Debian's headless
Chromium before the inspector page loads; "Enter VR" starts a session whose poses stream to the
gateway's `webxr` adapter over a WebSocket. tests/browser/webxr.mjs moves the emulated head and
controllers and checks that /api/entities holds those poses (<= 1 mm, <= 0.1 deg) within
time_bound(0.1); switches to hand tracking (25 joints per hand, with parents); ends the session
(the entities go STALE, then expire). Prints the page -> table latency the adapter measured.

The page also says why XR is unavailable: on an http:// origin that is not secure (192.0.2.1
mapped to loopback inside Chromium, whatever this machine is called), without navigator.xr,
without a device, when the session is refused.

Skips (77; fails under CI=true) when node, Chromium, playwright-core or iwer is missing
(browserlib.find_browser)."""
import os

from browserlib import IWER, OUTPUT_DIR, THREE, find_browser, print_checks, run_driver
from xgtest import Gateway, require_adapters, time_bound

SCREENSHOT = os.path.join(OUTPUT_DIR, "webxr.png")

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
    node = find_browser((THREE, IWER))
    gw = Gateway(CONFIG)
    try:
        gw.wait_log("WebXR sessions on ws://127.0.0.1:")
        code, result = run_driver(node, "webxr.mjs", [
            "--url", f"http://127.0.0.1:{gw.port}/", "--adapter", "xr",
            "--bound", time_bound(0.1), "--screenshot", SCREENSHOT], timeout=180)
        assert result is not None, f"node exited {code} without a result"
        print_checks(result)
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
