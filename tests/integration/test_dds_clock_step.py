"""Integration (issue 30, defect 5): clock steps of a source recover, through the dds adapter.

- A writer whose very first transform is stamped ten years ahead, then current stamps: the
  current ones are applied again (before, the clock map kept the wild offset for two 10 s
  windows and dropped them all); the step is counted (`clock_steps` in /api/adapters and
  `xrgate_clock_steps_total` in /metrics) and logged.
- A ROS sim-time reset (stamps jump back to ~100 s) is applied again and counted.
- One wild stamp in the middle of a stream is no step: the next current stamp applies.
Conditions are waited on; no timing is asserted (the map's own timing is in
tests/unit/test_net.c)."""
import time

from xgtest import Gateway
import ddslib as dl

TEN_YEARS = 10 * 365 * 86400


def main():
    dl.require()
    d = dl.domain()
    with Gateway(dl.reader_config(d), env=dl.ENV) as g, dl.Peer(d) as p:

        def counters():
            return g.adapter("ros")["counters"]

        def x_of(name):
            e = dl.entity(g, name)
            return e["position"][0] if e else None

        def resend_until(cmd_fn, cond, what):
            deadline = time.monotonic() + 10
            while True:
                p.send(cmd_fn())
                if cond():
                    return
                assert time.monotonic() < deadline, f"{what}:\n{g.log()[-3000:]}"
                time.sleep(0.02)

        # the writer's first stamp is ten years ahead (resent until discovery let it through)
        future = int(time.time()) + TEN_YEARS
        resend_until(lambda: f"tf world body 1 0 0 0 0 0 1 {future} 0",
                     lambda: dl.entity(g, "ros/body"), "the wild first sample")
        # current stamps apply again
        resend_until(lambda: "tf world body 2 0 0 0 0 0 1 -1 0", lambda: x_of("ros/body") == 2,
                     "current stamps after a wild first one")
        c = counters()
        assert c["clock_steps"] >= 1, c
        assert g.wait_log("clock stepped back by "), g.log()[-3000:]
        assert "writer " in [l for l in g.log().splitlines() if "clock stepped" in l][0]

        # a sim-time reset: stamps restart at 100 s and advance with real time
        t0 = time.monotonic()

        def sim(x):
            s = 100 + (time.monotonic() - t0)
            return f"tf world body {x} 0 0 0 0 0 1 {int(s)} {int((s % 1) * 1e9)}"

        steps = counters()["clock_steps"]
        resend_until(lambda: sim(3), lambda: x_of("ros/body") == 3, "stamps after a reset")
        assert counters()["clock_steps"] == steps + 1, counters()

        # one wild stamp (ten years ahead) mid-stream is no step: the next normal one applies
        resend_until(lambda: sim(4), lambda: x_of("ros/body") == 4, "x = 4")
        steps = counters()["clock_steps"]
        p.send(f"tf world body 9 0 0 0 0 0 1 {int(time.time()) + TEN_YEARS} 0")
        resend_until(lambda: sim(5), lambda: x_of("ros/body") == 5, "after one wild stamp")
        assert counters()["clock_steps"] == steps, counters()

        status, _, body = g.get("/metrics")
        text = body.decode()
        assert status == 200 and 'xrgate_clock_steps_total{adapter="ros"' in text, text[:3000]
        dl.stop_clean(g)
    print("dds clock step: ok")


if __name__ == "__main__":
    main()
