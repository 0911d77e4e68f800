"""Integration (issue 18): ROS 2 poses into the table through the dds adapter.

An independent Cyclone DDS publisher (tests/dds/dds_peer.c) on a private loopback domain:
- a geometry_msgs/PoseStamped on a listed topic becomes an entity in /api/entities, converted
  from REP 103 (Z up) to the internal Y-up frame; a second dds adapter on another domain
  publishes it back on /tf exactly as it came in (frame conversion both ways);
- a /tf chain (world → arm → hand) is composed into world poses;
- header.stamp is the capture time: an older stamp from the same writer is dropped;
- bad input (nanosec ≥ 1e9, an empty child_frame_id, NaN, a zero quaternion, a parent nobody
  published) drops that transform with one line naming the writer, the field and the value;
  the good transform in the same message and the other entities are untouched.
The `ros` adapter's network comes from `config_file` (Cyclone XML), the other one's from
CYCLONEDDS_URI."""
import os
import tempfile
import time

from xgtest import Gateway, wait_until
import ddslib as dl

S = 0.7071067811865476  # sin/cos of 45°: (0, 0, S, S) is a 90° yaw about ROS z


def main():
    dl.require()
    d1, d2 = dl.domain(), dl.domain()
    tmp = tempfile.TemporaryDirectory(prefix="xrgate-dds-")
    xml = os.path.join(tmp.name, "cyclone.xml")
    with open(xml, "w") as f:
        f.write(dl.CYCLONE_XML)
    with Gateway(f"""
adapters:
  - name: ros
    type: dds
    domain_id: {d1}
    config_file: {xml}
    topics: ["/robot/pose"]
    publish_tf: false
  - name: out
    type: dds
    domain_id: {d2}
    read_tf: false
    rate_hz: 50
    include: ["ros/*"]
""", env=dl.ENV) as g, dl.Peer(d1) as p, dl.Peer(d2) as sub:
        assert g.wait_log(f"[ros] ROS 2 over Cyclone DDS on domain {d1}: does not publish rt/tf, "
                          "reads rt/tf, 1 PoseStamped topic read, qos sensor_data (config_file)")
        sub.send("sub tf")

        def resend_until(cmd, name):
            """Best effort: resend until the entity exists (discovery can lag the first)."""
            deadline = time.monotonic() + 10
            while True:
                p.send(cmd)
                e = dl.entity(g, name)
                if e:
                    return e
                assert time.monotonic() < deadline, f"{name} never appeared:\n{g.log()}"
                time.sleep(0.05)

        # PoseStamped → entity, REP 103 → internal (x, z, -y)
        e = resend_until(f"pose rt/robot/pose world 1 2 3 0 0 {S} {S} -1 0", "ros/robot/pose")
        assert dl.near(e["position"], [1, 3, -2], 1e-6), e
        assert dl.near(e["orientation"], [0, S, 0, S], 1e-6), e
        assert e["origin"] == "ros", e
        # and out again on /tf by the other adapter: the pose as it was published (sent again
        # until the subscriber has it: egress sends on updates, discovery may lag the first)
        deadline = time.monotonic() + 10
        while not sub.of("tf", child="ros/robot/pose"):
            assert time.monotonic() < deadline, f"no round trip:\n{g.log()}"
            p.send(f"pose rt/robot/pose world 1 2 3 0 0 {S} {S} -1 0")
            time.sleep(0.05)
        t = sub.of("tf", child="ros/robot/pose")[0]
        assert t["frame_id"] == "world", t
        assert dl.near(t["t"], [1, 2, 3], 1e-6) and dl.near(t["r"], [0, 0, S, S], 1e-6), t

        # a /tf chain: hand = arm ∘ (1, 0, 0), arm at (0, 0, 1) yawed 90° → (0, 1, 1) in ROS
        e = resend_until(f"tf world arm 0 0 1 0 0 {S} {S} -1 0 arm hand 1 0 0 0 0 0 1 -1 0",
                         "ros/hand")
        assert dl.near(e["position"], [0, 1, -1], 1e-6), e
        assert dl.near(e["orientation"], [0, S, 0, S], 1e-6), e
        assert dl.near(dl.entity(g, "ros/arm")["position"], [0, 1, 0], 1e-6)

        # stamps are capture times: an older stamp from the same writer is dropped
        c0 = g.adapter("ros")["counters"]
        k0 = dl.entity(g, "ros/robot/pose")["samples"]
        now = time.time_ns()
        s0, n0 = divmod(now, 1_000_000_000)
        s1, n1 = divmod(now - 1_000_000_000, 1_000_000_000)
        s2, n2 = divmod(now + 20_000_000, 1_000_000_000)
        p.send(f"pose rt/robot/pose world 4 5 6 0 0 0 1 {s0} {n0}")
        p.send(f"pose rt/robot/pose world 9 9 9 0 0 0 1 {s1} {n1}")
        p.send(f"pose rt/robot/pose world 7 8 9 0 0 0 1 {s2} {n2}")
        wait_until(lambda: g.adapter("ros")["counters"]["poses_in"] >= c0["poses_in"] + 3,
                   what="3 more PoseStamped")
        c1 = g.adapter("ros")["counters"]
        assert c1["poses_in"] == c0["poses_in"] + 3, (c0, c1)
        assert c1["drops"] == c0["drops"] + 1, (c0, c1)
        # (per entity: a late /tf resend from above may still add to the adapter's samples_in)
        k1 = dl.entity(g, "ros/robot/pose")["samples"]
        assert k1 == k0 + 2, (k0, k1, c0, c1)
        # (the table counts the refused sample in "drops": its capture time did not advance)

        # bad input in one message with a good transform last
        bad = ("tf world bad 0 0 0 0 0 0 1 5 1000000000 "
               "world - 0 0 0 0 0 0 1 -1 0 "
               "world nanbody nan 0 0 0 0 0 1 -1 0 "
               "world zeroq 0 0 0 0 0 0 0 -1 0 "
               "nowhere x 1 0 0 0 0 0 1 -1 0 "
               "world good 0 0 2 0 0 0 1 -1 0")
        e = resend_until(bad, "ros/good")
        assert dl.near(e["position"], [0, 2, 0], 1e-6), e
        for line in ("bad input from writer ", " on rt/tf: bad: header.stamp.nanosec (must be "
                     "below 1000000000) = 1000000000; dropped",
                     "transforms[1].child_frame_id = \"\" (parent 'world'): empty; dropped",
                     " on rt/tf: nanbody: position.x = nan; dropped",
                     " on rt/tf: zeroq: orientation.norm = 0; dropped",
                     " on rt/tf: 'x' is relative to frame 'nowhere', which is neither "
                     "world_frame 'world' nor a frame received before; dropped"):
            assert g.wait_log(line), f"missing {line!r}:\n{g.log()}"
        c = g.adapter("ros")["counters"]
        assert c["bad_input"] >= 4 and c["tf_unresolved"] >= 1, c
        names = {x["name"] for x in g.get_json("/api/entities")["entities"]}
        assert names == {"ros/robot/pose", "ros/arm", "ros/hand", "ros/good"}, names
        assert c["own_samples_skipped"] == 0 and c["write_errors"] == 0, c
        dl.stop_clean(g)
    tmp.cleanup()
    print("dds ingress: ok")


if __name__ == "__main__":
    main()
