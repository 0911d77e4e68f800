"""Integration (issue 30, defect 5 through rgmp-client): one far-future timestamp does not freeze
a device.

A suit server (unix_epoch) streams frames stamped with the current time, then one data frame
stamped ten years ahead, then current ones again. Before, every later frame was "not greater
than the previous" (rule 18, D2) and dropped until the clock passed the wild one, so the entity
stayed at the old pose; now the third increasing frame after it re-anchors the group and the
entity follows the stream again. A device_boot device whose clock restarts (the server
restarted its device clock) likewise applies again, and the step is counted in clock_steps."""
import time

from xgtest import Gateway, wait_until
from test_rgmp_client import (DEV, OTHER_DEF, SUIT_DEF, RgmpServer, data_frame, definition_frame,
                              enu_to_yup_pos, expected_root, other_values, pose_values, vec_close)

TEN_YEARS_US = 10 * 365 * 86400 * 1_000_000


def main():
    suit, glove = RgmpServer(), RgmpServer()
    with Gateway(f"""
gateway:
  predict: {{max_horizon_ms: 0}}
adapters:
  - name: suit
    type: rgmp-client
    connect: "127.0.0.1:{suit.port}"
  - name: glove
    type: rgmp-client
    connect: "127.0.0.1:{glove.port}"
""") as gw:
        suit.accept()
        suit.send(definition_frame(SUIT_DEF))
        hips = f"suit/smartsuit-{DEV}/hips"

        def hips_at(t):
            want = enu_to_yup_pos(expected_root(t)["hips"][0])
            e = gw.entities(hips).get(hips)
            return e and vec_close(e["position"], want, 2e-6)

        def stream(t):
            suit.send(data_frame(DEV, 0, time.time_ns() // 1000, pose_values(t)[0]))

        stream(0.1)
        wait_until(lambda: hips_at(0.1), what="the first pose")
        # one frame ten years ahead, then current ones (each a new pose)
        suit.send(data_frame(DEV, 0, time.time_ns() // 1000 + TEN_YEARS_US, pose_values(0.2)[0]))
        t = 0.3
        deadline = time.monotonic() + 10
        while not hips_at(t):
            assert time.monotonic() < deadline, ("frozen after a wild timestamp",
                                                 gw.entities(hips), gw.log()[-2000:])
            t += 0.1
            stream(t)
            time.sleep(0.02)
        c = gw.adapter("suit")["counters"]
        assert c["rgmp_frames_out_of_order"] >= 1, c  # the frames before the re-anchoring

        # device_boot: the device clock restarts at 5 ms (its server restarted the device)
        glove.accept()
        glove.send(definition_frame(OTHER_DEF))
        palm = "glove/glove-7/palm"
        boot = 1_000_000_000  # µs: 1000 s since boot
        for k in range(1, 6):
            glove.send(data_frame(7, 0, boot + k * 10000, other_values(k)))
            time.sleep(0.01)
        wait_until(lambda: gw.entities(palm).get(palm, {}).get("samples") == 5, what="palm")
        steps = gw.adapter("glove")["counters"]["clock_steps"]
        k, t0 = 6, time.monotonic()
        deadline = t0 + 10
        while gw.adapter("glove")["counters"]["clock_steps"] == steps:
            assert time.monotonic() < deadline, gw.log()[-2000:]
            us = 5000 + int((time.monotonic() - t0) * 1e6)
            glove.send(data_frame(7, 0, us, other_values(k)))
            k += 1
            time.sleep(0.01)
        n = gw.entities(palm)[palm]["samples"]
        glove.send(data_frame(7, 0, 5000 + int((time.monotonic() - t0) * 1e6) + 10000,
                              other_values(k)))
        wait_until(lambda: gw.entities(palm)[palm]["samples"] > n, what="palm after the step")
        assert gw.wait_log("[glove] peer 127.0.0.1:"), gw.log()[-2000:]
        assert [l for l in gw.lines if "clock stepped back by" in l], gw.log()[-2000:]
    suit.shutdown()
    glove.shutdown()
    print("rgmp clock step: ok")


if __name__ == "__main__":
    main()
