"""Integration: a skeleton's motion memory through the real daemon (docs/prediction.md
"Repeating motion: the motion memory").

The `bvh` adapter replays the CMU walk in tests/vectors/mocap (31 joints linked to their parents,
poses only: the table estimates the velocities). Once the walk has repeated itself (a gait cycle,
about a second), the skeleton's joints are answered with quality MATCHED: /api/entities shows
such a joint, with its blended angular velocity, and /metrics counts the answers (this
configuration has no sink: every answer is the API's, xrgate_api_predictions_total). With
`predict.motion_memory_ms: 0` the same replay, played through a whole pass of the take and read
as often, never gives one."""
import os
import re
import sys

from xgtest import VECTORS_DIR, Gateway, wait_until

CMU = os.path.join(VECTORS_DIR, "mocap", "cmu_08_10_walk.bvh")


def config(memory_ms):
    predict = "" if memory_ms is None else f"\n  predict: {{motion_memory_ms: {memory_ms}}}"
    return f"""
gateway:
  log_level: info{predict}
adapters:
  - name: cmu
    type: bvh
    file: {CMU}
    start: 1f
"""


def matched_metric(gw):
    _, _, body = gw.get("/metrics")
    m = re.search(r'^xrgate_api_predictions_total\{quality="MATCHED"\} (\S+)$', body.decode(),
                  re.M)
    assert m, "xrgate_api_predictions_total has no MATCHED series"
    return float(m.group(1))


def matched_joints(gw):
    return [e for e in gw.entities("cmu/").values() if e["quality"] == "MATCHED"]


def test_matched_on_repeating_motion():
    with Gateway(config(None)) as gw:  # the default: 2000 ms
        found = wait_until(lambda: matched_joints(gw), 20, what="a MATCHED joint")
        e = found[0]
        assert e["angular_velocity_estimated"] is True, e
        assert "parent" in e or any(x.get("parent") == e["name"]
                                    for x in gw.entities("cmu/").values()), e
        assert sum(v * v for v in e["angular_velocity"]) > 0, e
        assert matched_metric(gw) >= 1
    print(f"motion memory: {e['name']} answered MATCHED, angular velocity "
          f"{[round(v, 3) for v in e['angular_velocity']]} rad/s")


def test_off_never_matched():
    with Gateway(config(0)) as gw:
        # read the skeleton all through one whole pass of the take (and the start of the next)
        seen = set()

        def looped():
            for e in gw.entities("cmu/").values():
                seen.add(e["quality"])
            return gw.counters("cmu").get("loops", 0) >= 1
        wait_until(looped, 20, what="one whole pass of the take")
        assert "MATCHED" not in seen, seen
        assert "PREDICTED" in seen or "DAMPED" in seen, seen
        assert matched_metric(gw) == 0
    print(f"motion_memory_ms: 0: qualities seen over a whole pass {sorted(seen)}, never MATCHED")


def main():
    test_matched_on_repeating_motion()
    test_off_never_matched()
    return 0


if __name__ == "__main__":
    sys.exit(main())
