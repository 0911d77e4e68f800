"""Integration: rgmp-server -> rgmp-client inside one gateway round-trips poses within float32
precision. A Python RGMP server feeds `suit` (an analytic motion with hands relative to the hips);
`out` (rgmp-server) republishes it and `rt` (rgmp-client) reads it back from `out`. With
prediction held at the newest sample (max_horizon_ms: 0), once the stream stops every
`rt/<origin>-<id>/<entity>` equals its `<entity>`: positions within 2e-6 m, orientations within
float32 rounding, velocities within 1e-5."""
import sys
import time

from test_rgmp_client import DEV, SUIT_DEF, RgmpServer, data_frame, definition_frame, pose_values
from xgtest import Gateway, reserve_port, wait_until

CONFIG = """
gateway:
  predict: {{max_horizon_ms: 0}}
  entity: {{stale_ms: 60000, expire_ms: 120000}}
adapters:
  - name: suit
    type: rgmp-client
    connect: "127.0.0.1:{suit}"
  - name: out
    type: rgmp-server
    listen: "127.0.0.1:{out}"
    rate_hz: 100
    exclude: ["rt/*"]        # do not echo what comes back
  - name: rt
    type: rgmp-client
    connect: "127.0.0.1:{out}"
"""



def main():
    srv = RgmpServer()
    # `rt` connects to `out` in the same gateway: the test holds out's port until out has it
    hold = reserve_port()
    with Gateway(CONFIG.format(suit=srv.port, out=hold.port)) as gw:
        try:
            assert gw.port_of("out") == hold.port
            hold.release()
            run(gw, srv)
        except BaseException:
            print(gw.log())
            raise
        finally:
            srv.shutdown()
    print("rgmp round trip: ok")
    return 0


def run(gw, srv):
    srv.accept()
    srv.send(definition_frame(SUIT_DEF))
    t0 = 50.0
    n = 40
    for k in range(n):
        vals, _, _ = pose_values(t0 + 0.01 * k)
        srv.send(data_frame(DEV, 0, int(time.time() * 1e6), vals))
        time.sleep(0.01)
    src = wait_until(lambda: (lambda e: e if len(e) == 4 else None)(gw.entities("suit/")),
                   what="suit entities")
    prefix = None

    def settled():
        nonlocal prefix
        rt = gw.entities("rt/")
        if len(rt) != 4:
            return None
        prefix = next(iter(rt)).split("/suit/")[0] + "/"
        hips = rt.get(prefix + f"suit/smartsuit-{DEV}/hips")
        src_hips = gw.entities(f"suit/smartsuit-{DEV}/hips")[f"suit/smartsuit-{DEV}/hips"]
        ok = hips and all(abs(a - b) < 1e-5 for a, b in zip(hips["position"],
                                                             src_hips["position"]))
        return rt if ok else None
    rt = wait_until(settled, what="round-tripped entities")
    # the device's four entities travel in one data frame: once rt's hips carries the last
    # state, so do the others (no extra wait)
    rt = gw.entities("rt/")
    src = gw.entities("suit/")
    assert prefix.startswith("rt/suit-"), prefix  # device_type = the origin adapter's name
    for name, e in src.items():
        r = rt[prefix + name]
        for a, b in zip(r["position"], e["position"]):
            assert abs(a - b) <= 2e-6, (name, r["position"], e["position"])
        dot = abs(sum(a * b for a, b in zip(r["orientation"], e["orientation"])))
        assert 1 - dot < 1e-6, (name, r["orientation"], e["orientation"])
        for k in ("velocity", "angular_velocity"):
            assert all(abs(a - b) <= 1e-5 for a, b in zip(r[k], e[k])), (name, k, r[k], e[k])
        assert not r["velocity_estimated"], r  # the server sent them
    print(f"{len(src)} entities compared, e.g. {prefix}suit/smartsuit-{DEV}/left_hand",
          rt[prefix + f"suit/smartsuit-{DEV}/left_hand"]["position"])
    a = gw.adapter("rt")
    assert a["state"] == "streaming" and a["counters"]["protocol_errors"] == 0, a
    o = gw.adapter("out")["counters"]
    assert o["clients"] == 1 and o["devices"] == 1, o  # rt/* is not echoed


if __name__ == "__main__":
    sys.exit(main())
