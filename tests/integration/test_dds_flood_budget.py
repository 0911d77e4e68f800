"""Integration (issue 30, defect 1): one DDS message cannot stall the reactor.

Any participant can publish one tf2_msgs/TFMessage with 20,000 transforms. The dds adapter bounds
its work per wake-up by cost (transforms and name bytes, not samples) and continues inside the
message on the next pass of the loop, so the admin API keeps answering while the message is
read: a poller reading /healthz and /api/adapters sees transforms_in at values in the middle of
a message (before, a message was read whole in one wake-up: only multiples of 20,000), the
adapter counts the wake-ups that stopped at the budget (budget_yields), and every transform is
read (reliable QoS). Past the 4,096 remembered frames each transform is counted
(frames_not_remembered) without asking Cyclone DDS for the writer first. The /healthz latency
under this flood is printed, not asserted (tests/bench/dds_flood.py measures its p99)."""
import threading
import time

from xgtest import Gateway, wait_until
import ddslib as dl

N, HZ, SECS = 20000, 5, 2
MSGS = HZ * SECS


def main():
    dl.require()
    d = dl.domain()
    cfg = dl.reader_config(d, "    qos: reliable\n")
    with Gateway(cfg, env=dl.ENV) as g, dl.Peer(d) as p:
        p.send("qos reliable")

        def counters():
            return g.adapter("ros")["counters"]

        p.send("tf world w0 0 0 0 0 0 0 1 -1 0")  # creates the writer
        p.send("wait_match rt/tf 10000")
        # until both sides have matched (then reliable): w0 may be sent several times
        wait_until(lambda: (p.send("tf world w0 0 0 0 0 0 0 1 -1 0") or
                               dl.entity(g, "ros/w0")), what="ros/w0")
        # a barrier: w1, sent once (reliable, in order after every w0), read means no w0 is
        # still on its way to count in the flood's figures below
        p.send("tf world w1 0 0 0 0 0 0 1 -1 0")
        wait_until(lambda: dl.entity(g, "ros/w1"), what="ros/w1 (after every w0)")
        base = counters()
        b_in, b_y = base["transforms_in"], base["budget_yields"]
        seen, lat = [], []
        stop = threading.Event()

        def poll():
            while not stop.is_set():
                t = time.monotonic()
                status, _, _ = g.get("/healthz")
                lat.append(time.monotonic() - t)
                assert status == 200
                seen.append(counters()["transforms_in"])

        th = threading.Thread(target=poll, daemon=True)
        th.start()
        try:
            p.send(f"bench_pub {N} {HZ} {SECS}", timeout=120)
            wait_until(lambda: counters()["transforms_in"] >= b_in + MSGS * N, 120,
                       f"{MSGS} x {N} transforms")
        finally:
            stop.set()
            th.join(30)
        c = counters()
        assert c["transforms_in"] == b_in + MSGS * N, (base, c)
        # split across wake-ups: at least N / budget per message
        assert c["budget_yields"] - b_y >= MSGS * (N // 512), (base, c)
        mid = [v for v in seen if b_in < v < b_in + MSGS * N and (v - b_in) % N]
        assert mid, ("the admin API never answered in the middle of a message", seen[:50])
        assert c["frames_known"] == 4096, c
        assert c["frames_not_remembered"] >= MSGS * (N - 4096), c
        lat.sort()
        print(f"/healthz during the flood: {len(lat)} requests, p50 "
              f"{lat[len(lat) // 2] * 1e3:.1f} ms, p99 {lat[int(len(lat) * 0.99)] * 1e3:.1f} ms, "
              f"max {lat[-1] * 1e3:.1f} ms; {len(mid)} reads mid-message")
        dl.stop_clean(g)
    print("dds flood budget: ok")


if __name__ == "__main__":
    main()
