#!/usr/bin/env python3
"""Page -> table latency of the webxr adapter on loopback (docs/performance.md "WebXR").

A WebSocket peer (tests/integration/test_webxr.py's client) plays the inspector page: it answers
the gateway's PINGs with its CLOCK_MONOTONIC (the gateway's clock too, so the offset the adapter
estimates is near 0 and its error below the round trip), then sends FRAMEs at 90 Hz stamped with
the time just before each send: a Quest frame with two controllers (7 buttons, 4 axes) and one
with two tracked hands (25 joints each). The adapter's gauges latency_ms_p50 / latency_ms_max
(receive - mapped capture time over the last 128 frames, i.e. send -> table) are read at the
end. Prints a table; `python3 tests/bench/webxr_latency.py` runs it alone (XRGATE_BIN, else
build/xrgate). Asserts nothing."""
import os
import socket
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
os.environ.setdefault("XRGATE_BIN", os.path.join(HERE, "..", "..", "build", "xrgate"))

from xgtest import Gateway  # noqa: E402
from test_webxr import WS, answer_pings, f32s, hello  # noqa: E402

CONFIG = """gateway:
  id: bench-webxr
adapters:
  - name: xr
    type: webxr
    listen: "127.0.0.1:0"
"""
POSE = (0.1, 1.5, -0.3, 0.0, 0.0, 0.0, 1.0)


def frame(page_ms, hands, k):
    head = (0.1 + 0.001 * (k % 100),) + POSE[1:]
    body = b""
    for side in (1, 2):
        if hands:
            body += bytes([side, 3, 0, 0]) + f32s(*POSE)
            body += b"".join(bytes([1]) + f32s(0.01 * j, 1.0, -0.3, 0, 0, 0, 1, 0.01)
                             for j in range(25))
        else:
            body += bytes([side, 1, 7, 4]) + f32s(*POSE)
            body += b"".join(bytes([0]) + f32s(0.0) for _ in range(7)) + f32s(0, 0, 0, 0)
    return bytes([2, 1, 2]) + struct.pack("<d", page_ms) + f32s(*head) + body


def run(hands, seconds):
    gw = Gateway(CONFIG)
    try:
        ws = WS(gw.port_of("xr"))
        ws.send(hello("bench"))
        answer_pings(ws, 5)
        # browsers set TCP_NODELAY on a WebSocket: without it Nagle holds a frame until the
        # previous one is acknowledged (delayed ACK: tens of ms)
        ws.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        ws.s.setblocking(False)
        n = int(90 * seconds)
        size = 0
        t0 = time.monotonic()
        for k in range(n):
            due = t0 + k / 90.0
            while time.monotonic() < due:
                try:  # answer late PINGs too (non-blocking read of what came)
                    ws.buf += ws.s.recv(65536)
                except BlockingIOError:
                    pass
                time.sleep(0.0005)
            m = frame(time.monotonic_ns() / 1e6, hands, k)
            size = len(m)
            ws.send(m)
        ws.s.setblocking(True)
        want = n * (53 if hands else 3)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            c = gw.counters("xr")
            if c.get("samples_in", 0) >= want:
                break
        ws.close()
        return {"frames": n, "bytes": size, "p50_ms": c.get("latency_ms_p50"),
                "max_ms": c.get("latency_ms_max"), "rtt_ms": c.get("clock_rtt_ms")}
    finally:
        gw.stop()
        gw.tmp.cleanup()


def webxr_latency(seconds=3.0):
    return {"controllers": run(False, seconds), "hands": run(True, seconds)}


def main():
    r = webxr_latency()
    print("webxr page -> table on loopback (90 Hz, last 128 frames)")
    print(f"{'frame':<12} {'bytes':>6} {'frames':>7} {'p50 ms':>8} {'max ms':>8} {'clock rtt ms':>13}")
    for k, v in r.items():
        print(f"{k:<12} {v['bytes']:>6} {v['frames']:>7} {v['p50_ms']:>8.3f} {v['max_ms']:>8.3f} "
              f"{v['rtt_ms']:>13.3f}")


if __name__ == "__main__":
    main()
