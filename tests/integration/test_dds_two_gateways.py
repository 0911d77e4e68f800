"""Integration (issue 18): two gateways on one DDS domain exchange their entities over /tf
without loops. A (synth "a") and B (synth "b") each run a dds adapter that publishes and reads
rt/tf: A shows B's entities as ros/b/..., B shows A's as ros/a/...; each skips its own samples
(own_samples_skipped, by publication handle), and neither republishes what it read from DDS
(split horizon), so no ros/a/... in A, no ros/ros/... anywhere — checked after both have read
hundreds more transforms from the other."""
from xgtest import Gateway, wait_until
import ddslib as dl


def conf(name, d):
    return f"""
gateway:
  id: gw-{name}
adapters:
  - name: {name}
    type: synth
    bodies: 2
    hands: false
  - name: ros
    type: dds
    domain_id: {d}
    rate_hz: 100
"""


def names(g):
    return {e["name"] for e in g.get_json("/api/entities")["entities"]}


def main():
    dl.require()
    d = dl.domain()
    with Gateway(conf("a", d), env=dl.ENV) as ga, Gateway(conf("b", d), env=dl.ENV) as gb:
        local = {"head", "body0", "body1"}
        want_a = {f"a/{n}" for n in local} | {f"ros/b/{n}" for n in local}
        want_b = {f"b/{n}" for n in local} | {f"ros/a/{n}" for n in local}
        wait_until(lambda: names(ga) == want_a and names(gb) == want_b, 15,
                   "each gateway to see the other's entities")
        ca = ga.adapter("ros")["counters"]
        cb = gb.adapter("ros")["counters"]
        # later: both read 300 more transforms from the other
        wait_until(lambda: ga.adapter("ros")["counters"]["transforms_in"] >=
                      ca["transforms_in"] + 300 and gb.adapter("ros")["counters"][
                          "transforms_in"] >= cb["transforms_in"] + 300, 15, "300 transforms")
        assert names(ga) == want_a, names(ga)
        assert names(gb) == want_b, names(gb)
        for g in (ga, gb):
            c = g.adapter("ros")["counters"]
            assert c["own_samples_skipped"] > 0, c
            # every message read came from the other gateway: 3 transforms each, never more
            assert c["transforms_in"] == 3 * c["messages_in"], c
            assert c["bad_input"] == 0 and c["tf_unresolved"] == 0, c
            # egress carries only the gateway's own synth entities
            assert c["transforms_out"] <= 3 * c["tf_messages_out"], c
        # the other's entities keep their poses: B's head as seen by A is B's head
        ea = dl.entity(ga, "ros/b/head")
        assert ea and ea["origin"] == "ros" and 1.6 < ea["position"][1] < 1.8, ea
        dl.stop_clean(ga)
        dl.stop_clean(gb)
    print("dds two gateways: ok")


if __name__ == "__main__":
    main()
