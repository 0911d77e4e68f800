"""Integration (issue 30, defects 6 and 8): names on a shared DDS domain.

- One entity per writer: two independent participants publish the same TF child frame
  (`rig/body0`, as two gateways with the same adapter names would). The first writer owns the
  name; the second one's samples are refused, counted (writer_conflicts) and logged once with
  both writers' GUIDs; the entity never jumps to the second rig. When the owner has been silent
  for 2 s (a restarted node comes back with a new writer) the other writer takes the name over.
- A frame id longer than 127 bytes is a parent: a transform relative to it resolves.
- read_include / read_exclude: a frame left out is no entity (frames_filtered) but still chains
  as a parent."""
import time

from xgtest import Gateway, wait_until
import ddslib as dl

LONG = "a" * 150


def main():
    dl.require()
    d = dl.domain()
    cfg = dl.reader_config(d, '    read_include: ["rig/*", "a*", "kid", "from*", "noise/*"]\n'
                              '    read_exclude: "noise/*"\n')
    with Gateway(cfg, env=dl.ENV) as g, dl.Peer(d) as pa, dl.Peer(d) as pb:

        def counters():
            return g.adapter("ros")["counters"]

        def resend_until(peer, cmd, cond, what):
            deadline = time.monotonic() + 10
            while True:
                peer.send(cmd)
                v = cond()
                if v:
                    return v
                assert time.monotonic() < deadline, f"{what}:\n{g.log()[-3000:]}"
                time.sleep(0.05)

        # writer A owns rig/body0
        resend_until(pa, "tf world rig/body0 1 0 0 0 0 0 1 -1 0",
                     lambda: dl.entity(g, "ros/rig/body0"), "A's rig/body0")
        # writer B publishes the same name: refused, counted, one line naming both writers
        resend_until(pb, "tf world rig/body0 5 0 0 0 0 0 1 -1 0",
                     lambda: counters()["writer_conflicts"] >= 3, "B refused")
        pa.send("tf world rig/body0 1 0 0 0 0 0 1 -1 0")
        for _ in range(5):
            pb.send("tf world rig/body0 5 0 0 0 0 0 1 -1 0")
        c = counters()
        e = dl.entity(g, "ros/rig/body0")
        assert dl.near(e["position"], [1, 0, 0], 1e-6), (e, c)  # never B's rig
        assert g.wait_log("also publishes 'rig/body0', which writer "), g.log()[-3000:]
        lines = [l for l in g.log().splitlines() if "also publishes 'rig/body0'" in l]
        assert len(lines) == 1, lines
        assert lines[0].count("writer ") == 2 and " on rt/tf" in lines[0], lines
        # A stops; 2 s later B takes the name over (a restarted publisher is not locked out)
        e = resend_until(pb, "tf world rig/body0 5 0 0 0 0 0 1 -1 0",
                         lambda: (dl.entity(g, "ros/rig/body0") or {}).get("position") == [5, 0, 0]
                         and dl.entity(g, "ros/rig/body0"), "B takes over")
        # ... and A is now the one refused
        n = counters()["writer_conflicts"]
        pa.send("tf world rig/body0 1 0 0 0 0 0 1 -1 0")
        wait_until(lambda: counters()["writer_conflicts"] > n, what="A refused")
        assert dl.near(dl.entity(g, "ros/rig/body0")["position"], [5, 0, 0], 1e-6)

        # a long frame id (150 bytes) as a parent: kid = (1, 0, 0) + (0, 1, 0) in ROS
        e = resend_until(pa, f"tf world {LONG} 1 0 0 0 0 0 1 -1 0 {LONG} kid 0 1 0 0 0 0 1 -1 0",
                         lambda: dl.entity(g, "ros/kid"), "kid of the long frame")
        assert dl.near(e["position"], [1, 0, -1], 1e-6), e
        assert counters()["tf_unresolved"] == 0, counters()

        # read_include / read_exclude: noise/base is filtered, yet chains; 'other' not included
        f0 = counters()["frames_filtered"]
        e = resend_until(pa, "tf world noise/base 0 0 2 0 0 0 1 -1 0 "
                         "noise/base fromnoise 1 0 0 0 0 0 1 -1 0 world other 0 0 0 0 0 0 1 -1 0",
                         lambda: dl.entity(g, "ros/fromnoise"), "fromnoise")
        assert dl.near(e["position"], [1, 2, 0], 1e-6), e
        c = counters()
        assert c["frames_filtered"] >= f0 + 2, c
        names = {x["name"] for x in g.get_json("/api/entities")["entities"]}
        assert "ros/noise/base" not in names and "ros/other" not in names, names
        dl.stop_clean(g)
    print("dds writers: ok")


if __name__ == "__main__":
    main()
