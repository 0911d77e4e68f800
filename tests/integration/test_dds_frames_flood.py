"""Integration (issue 18, bad input): a DDS writer publishing ever new TF frame names cannot grow
the dds adapter's frame memory without bound. The adapter remembers 4,096 frames (for chaining
transforms); further frames still become entities but are not remembered: counted
(frames_not_remembered) with a rate-limited line naming the writer and the frame, and a
transform relative to such a frame is dropped as unresolved, while frames remembered before keep
chaining. Reliable QoS on both sides so that none of the 45 messages is lost."""
import time

from xgtest import Gateway, wait_until
import ddslib as dl

PER_MSG, MSGS, CAP = 93, 45, 4096


def main():
    dl.require()
    d = dl.domain()
    cfg = dl.reader_config(d, "    qos: reliable\n")
    with Gateway(cfg, env=dl.ENV) as g, dl.Peer(d) as p:
        p.send("qos reliable")

        def tf_in():
            return g.adapter("ros")["counters"]["transforms_in"]

        p.send("tf world w0 0 0 0 0 0 0 1 -1 0")  # creates the writer
        p.send("wait_match rt/tf 10000")
        for _ in range(200):  # until both sides have matched (then reliable)
            p.send("tf world w0 0 0 0 0 0 0 1 -1 0")
            if dl.entity(g, "ros/w0"):
                break
            time.sleep(0.05)
        assert dl.entity(g, "ros/w0"), g.log()
        base = tf_in()
        for m in range(MSGS):
            p.send("tf " + " ".join(f"world f{m * PER_MSG + k} 1 0 0 0 0 0 1 -1 0"
                                    for k in range(PER_MSG)))
        total = MSGS * PER_MSG
        frames = 1 + total  # w0 and f0..f4184
        # (reliable and in order: the last frame's entity exists once everything was read)
        wait_until(lambda: dl.entity(g, f"ros/f{total - 1}"), 20, f"{total} transforms")
        c = g.adapter("ros")["counters"]
        assert c["transforms_in"] >= base + total, (base, c)
        assert c["frames_known"] == CAP, c
        assert c["frames_not_remembered"] == frames - CAP, c
        first_lost = f"f{CAP - 1}"  # w0 took one place: f0..f4094 are remembered
        assert g.wait_log(f" on rt/tf: frame '{first_lost}' not remembered: 4096 TF frames known "
                          "already; transforms relative to it will be dropped"), g.log()[-3000:]
        lines = [l for l in g.log().splitlines() if "not remembered" in l]
        assert 1 <= len(lines) <= 5, lines  # rate-limited: at most 5 per 10 s
        # every frame is still an entity (the table has its own cap)
        assert len(g.get_json("/api/entities")["entities"]) == frames
        # chaining: from a remembered frame yes, from a forgotten one no
        p.send(f"tf f0 kid 0 1 0 0 0 0 1 -1 0 {first_lost} lost 0 1 0 0 0 0 1 -1 0")
        e = wait_until(lambda: dl.entity(g, "ros/kid"), what="ros/kid")
        assert dl.near(e["position"], [1, 0, -1], 1e-6), e  # (1,0,0) + (0,1,0) in ROS
        assert g.wait_log(f"'lost' is relative to frame '{first_lost}', which is neither "
                          "world_frame 'world' nor a frame received before; dropped")
        assert dl.entity(g, "ros/lost") is None
        dl.stop_clean(g)
    print("dds frames flood: ok")


if __name__ == "__main__":
    main()
