"""Integration (issue 18): a synth source appears on ROS 2's /tf to an independent Cyclone DDS
subscriber (tests/dds/dds_peer.c) with the exact ROS 2 type names, REP 103 axes, world_frame as
header.frame_id and the send time as stamp; PoseStamped and TwistStamped per entity agree with
/tf; qos: reliable reaches a reliable subscriber. Loopback only, private domain ids."""
import math
import time

from xgtest import Gateway
import ddslib as dl


def main():
    dl.require()
    d1, d2 = dl.domain(), dl.domain()
    with Gateway(f"""
adapters:
  - name: demo
    type: synth
    bodies: 1
    hands: false
  - name: ros
    type: dds
    domain_id: {d1}
    rate_hz: 50
    read_tf: false
    pose_topics: true
    twist_topics: true
  - name: rel
    type: dds
    domain_id: {d2}
    rate_hz: 50
    read_tf: false
    qos: reliable
""", env=dl.ENV) as g, dl.Peer(d1) as p, dl.Peer(d2) as r:
        assert g.wait_log(f"[ros] ROS 2 over Cyclone DDS on domain {d1}: publishes rt/tf, "
                          "PoseStamped per entity, TwistStamped per entity, 0 PoseStamped topics "
                          "read, qos sensor_data"), g.log()
        assert g.adapter("ros")["frame"] == "ros"
        p.send("sub tf")
        p.send("sub pose rt/xrgate/demo/head/pose")
        p.send("sub twist rt/xrgate/demo/head/twist")
        r.send("qos reliable")
        r.send("sub tf")

        # the wire type names, as the subscriber's side discovers them
        types = {}
        for topic in ("rt/tf", "rt/xrgate/demo/head/pose", "rt/xrgate/demo/head/twist"):
            pub = p.wait(lambda evs: [e for e in evs if e["ev"] == "publication" and
                                      e["topic"] == topic], what=f"publication of {topic}")[0]
            types[topic] = (pub["type"], pub["reliable"])
        assert types == {
            "rt/tf": ("tf2_msgs::msg::dds_::TFMessage_", False),
            "rt/xrgate/demo/head/pose": ("geometry_msgs::msg::dds_::PoseStamped_", False),
            "rt/xrgate/demo/head/twist": ("geometry_msgs::msg::dds_::TwistStamped_", False),
        }, types

        tfs = p.wait(lambda evs: [e for e in evs if e["ev"] == "tf"][:40] if
                     sum(1 for e in evs if e["ev"] == "tf") >= 40 else None, what="40 transforms")
        assert {e["child"] for e in tfs} == {"demo/head", "demo/body0"}, tfs[:3]
        for e in tfs:
            assert e["frame_id"] == "world" and e["n"] == 2, e
            stamp = e["sec"] * 1_000_000_000 + e["nsec"]
            # the send time (wall clock), taken just before the write on this host
            assert -1_000_000 <= e["rx_wall_ns"] - stamp < 2_000_000_000, e
            assert abs(math.sqrt(sum(c * c for c in e["r"])) - 1) < 1e-9, e
            if e["child"] == "demo/head":
                # REP 103, Z up: the synthetic head is 1.7 m (± 0.02) above the floor
                assert 1.67 <= e["t"][2] <= 1.73, e
                assert abs(e["t"][0]) <= 0.31 and abs(e["t"][1]) <= 0.31, e

        # PoseStamped of the head: the same pose as its /tf transform of the same drain
        poses = p.wait(lambda evs: [e for e in evs if e["ev"] == "pose"][:10] if
                       sum(1 for e in evs if e["ev"] == "pose") >= 10 else None,
                       what="10 PoseStamped")
        by_stamp = {(e["sec"], e["nsec"]): e for e in p.of("tf", child="demo/head")}
        matched = 0
        for e in poses:
            assert e["frame_id"] == "world", e
            t = by_stamp.get((e["sec"], e["nsec"]))
            if t:
                assert e["p"] == t["t"] and e["q"] == t["r"], (e, t)
                matched += 1
        assert matched >= 5, (matched, poses[:2])
        twists = p.wait(lambda evs: [e for e in evs if e["ev"] == "twist"][:10] if
                        sum(1 for e in evs if e["ev"] == "twist") >= 10 else None,
                        what="10 TwistStamped")
        for e in twists:
            assert e["frame_id"] == "world", e
            # synth head: |v| below 0.5 m/s, |w| below 1 rad/s, not all zero
            assert 0 < math.sqrt(sum(c * c for c in e["lin"])) < 0.5, e
            assert 0 < math.sqrt(sum(c * c for c in e["ang"])) < 1.0, e

        # qos: reliable — a reliable subscriber (which a best-effort writer would not match)
        pub = r.wait(lambda evs: [e for e in evs if e["ev"] == "publication" and
                                  e["topic"] == "rt/tf"], what="reliable publication")[0]
        assert pub["reliable"] is True and pub["type"] == "tf2_msgs::msg::dds_::TFMessage_", pub
        r.wait(lambda evs: sum(1 for e in evs if e["ev"] == "tf") >= 10, what="reliable /tf")

        c = g.adapter("ros")["counters"]
        assert c["tf_messages_out"] > 0 and c["transforms_out"] >= 2 * c["tf_messages_out"] - 2
        assert c["poses_out"] > 0 and c["twists_out"] > 0 and c["write_errors"] == 0, c
        assert c["messages_in"] == 0, c
        dl.stop_clean(g)
    print("dds egress: ok")


if __name__ == "__main__":
    main()
