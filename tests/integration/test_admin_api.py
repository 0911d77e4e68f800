"""Integration: xrgate on its embedded default config with an ephemeral admin port.
/api/entities read twice 100 ms apart shows the synthetic rig moving; /metrics parses;
/api/adapters; /healthz; 404; bearer token; SIGTERM/SIGINT stop within 1 s."""
import math
import signal
import sys
import time
import urllib.error
import urllib.request

from xgtest import Gateway, parse_prometheus, time_bound, wait_until


def norm(v):
    return math.sqrt(sum(x * x for x in v))


def main():
    with Gateway() as gw:
        # enough samples per entity for a rate estimate, then a second answer >= 100 ms and
        # >= 10 samples later (conditions, not sleeps: the synth's pace varies under load)
        def settled():
            a = gw.get_json("/api/entities")
            return a if len(a["entities"]) == 6 and all(
                e["samples"] >= 20 for e in a["entities"]) else None
        a = wait_until(settled, what="6 synth entities with >= 20 samples each")
        na = {e["name"]: e["samples"] for e in a["entities"]}

        def later():
            b = gw.get_json("/api/entities")
            return b if b["time_ns"] - a["time_ns"] >= 100_000_000 and all(
                e["samples"] >= na[e["name"]] + 10 for e in b["entities"]) else None
        b = wait_until(later, what="an answer 100 ms and 10 samples later")
        names = sorted(e["name"] for e in b["entities"])
        assert names == ["demo/body0", "demo/body1", "demo/body2", "demo/head", "demo/left_hand",
                         "demo/right_hand"], names
        kinds = {e["name"]: e["kind"] for e in b["entities"]}
        assert kinds["demo/head"] == "head" and kinds["demo/left_hand"] == "left_hand"
        assert kinds["demo/right_hand"] == "right_hand" and kinds["demo/body0"] == "rigid_body"
        ea = {e["name"]: e for e in a["entities"]}
        dt = (b["time_ns"] - a["time_ns"]) * 1e-9
        assert dt > 0.09, dt
        for e in b["entities"]:
            prev = ea[e["name"]]
            assert e["id"] == prev["id"]
            assert e["origin"] == "demo"
            assert len(e["position"]) == 3 and len(e["orientation"]) == 4
            assert abs(norm(e["orientation"]) - 1) < 1e-6, e
            # not timing claims: only that the values are sane for a 120 Hz source
            assert e["quality"] in ("EXACT", "PREDICTED", "HELD"), e
            assert 0 <= e["age_ms"] < 500, e
            assert 20 < e["rate_hz"] < 1000, e
            assert isinstance(e["extra"], dict)
            moved = norm([x - y for x, y in zip(e["position"], prev["position"])])
            # every synthetic path moves at > 0.1 m/s, and < 5 m/s
            assert moved > 0.1 * dt * 0.5, (e["name"], moved)
            assert moved < 5 * dt * 2, (e["name"], moved)
            # the reported velocity explains the motion (smooth paths, ~100 ms apart)
            pred = [p + v * dt for p, v in zip(prev["position"], prev["velocity"])]
            err = norm([x - y for x, y in zip(e["position"], pred)])
            # paths accelerate by < 3 m/s²: second-order term bounds the error
            assert err < 0.01 + 0.5 * 3.0 * dt * dt, (e["name"], err, dt)
        assert abs(b["entities"][0]["position"][1] - 1.7) < 0.1  # the head stands 1.7 m up (Y up)

        # ?t_ns= answers from the history: EXACT at a sample's capture time, INTERPOLATED between
        e0 = b["entities"][0]
        ex = gw.get_json(f"/api/entities?t_ns={e0['sample_ns']}")
        assert ex["time_ns"] == e0["sample_ns"]
        same = [e for e in ex["entities"] if e["id"] == e0["id"]][0]
        assert same["quality"] == "EXACT", same
        mid = gw.get_json(f"/api/entities?t_ns={e0['sample_ns'] - 2000000}")
        q = [e for e in mid["entities"] if e["id"] == e0["id"]][0]["quality"]
        assert q in ("INTERPOLATED", "EXACT"), q
        assert gw.get("/api/entities?t_ns=soon")[0] == 400
        assert gw.get("/api/entities?t_ns=-5")[0] == 400
        # a time before the samples: age_ms is 0 there, never negative (issue 34 item 12)
        early = gw.get_json("/api/entities?t_ns=1")
        assert early["entities"] and all(e["age_ms"] == 0 for e in early["entities"]), early
        assert all(e["age_ms"] >= 0 for e in mid["entities"]), mid

        ad = gw.get_json("/api/adapters")["adapters"]
        assert len(ad) == 1 and ad[0]["name"] == "demo" and ad[0]["type"] == "synth"
        assert ad[0]["state"] == "running"
        assert ad[0]["counters"]["samples_in"] > 6 * 10

        status, hdr, body = gw.get("/metrics")
        assert status == 200 and hdr["Content-Type"].startswith("text/plain; version=0.0.4")
        m = parse_prometheus(body.decode())
        assert m[("xrgate_entities", "")] == 6
        sin = m[("xrgate_samples_in_total", 'adapter="demo",type="synth"')]
        assert sin > 60, sin
        assert ("xrgate_predictions_total", 'quality="PREDICTED"') in m
        # issue 34 item 8: the API's own answers are counted apart; this gateway has no sink, so
        # /api/entities calls move xrgate_api_predictions_total and never the egress family
        def preds(name):
            _, _, b = gw.get("/metrics")
            return sum(v for (n, _), v in parse_prometheus(b.decode()).items() if n == name)

        egress0, api0 = preds("xrgate_predictions_total"), preds("xrgate_api_predictions_total")
        for _ in range(3):
            gw.get("/api/entities")
        assert preds("xrgate_predictions_total") == egress0 == 0, egress0
        assert preds("xrgate_api_predictions_total") >= api0 + 3 * 6, api0
        # issue 34 item 9: build info, the standard process_* family, no samples_out_total for an
        # ingress-only adapter (synth)
        _, _, b = gw.get("/metrics")
        text = b.decode()
        m = parse_prometheus(text)
        bi = [l for (n, l) in m if n == "xrgate_build_info"]
        assert len(bi) == 1 and 'version="' in bi[0] and 'commit="' in bi[0], bi
        for fam in ("process_cpu_seconds_total", "process_resident_memory_bytes",
                    "process_virtual_memory_bytes", "process_open_fds", "process_max_fds",
                    "process_start_time_seconds"):
            assert (fam, "") in m, fam
        assert m[("process_resident_memory_bytes", "")] > 1e5
        assert 3 <= m[("process_open_fds", "")] <= m[("process_max_fds", "")]
        assert abs(m[("process_start_time_seconds", "")] - time.time()) < 600
        assert "# TYPE process_cpu_seconds_total counter" in text
        assert not [l for (n, l) in m if n == "xrgate_samples_out_total"], "synth sends nothing"
        assert ("xrgate_loop_lag_seconds", "") in m
        assert m[("xrgate_up", "")] == 1

        status, _, body = gw.get("/healthz")
        assert status == 200 and body == b"ok\n"
        status, _, _ = gw.get("/nope")
        assert status == 404
        status, _, body = gw.get("/api/sdp/demo")
        assert status == 404 and b"no session description" in body, body
        status, _, body = gw.get("/api/sdp/nope")
        assert status == 404 and b"no such adapter" in body, body

        # the stated 1 s (docs/reliability.md "Clean shutdown"), scaled for load and the build
        code, took = gw.stop(signal.SIGTERM, timeout=time_bound(1.0) + 5)
        assert code == 0, gw.log()
        assert took < time_bound(1.0), took

    # bearer token: required everywhere but /healthz
    with Gateway(env={"XRGATE_ADMIN_TOKEN": "s3cret-token"}) as gw:
        assert gw.get("/healthz")[0] == 200
        status, hdr, body = gw.get("/api/entities")
        assert status == 401 and b"Authorization: Bearer" in body
        assert hdr.get("WWW-Authenticate", "").startswith("Bearer")
        status, _, body = gw.get("/metrics", {"Authorization": "Bearer wrong"})
        assert status == 401 and b"does not match" in body
        # another scheme is named as such, not as a wrong token (issue 34 item 12)
        status, _, body = gw.get("/metrics", {"Authorization": "Basic dXNlcjpwYXNz"})
        assert status == 401 and b"the scheme must be Bearer" in body, body
        # /healthz answers GET and HEAD only, like every other path
        req = urllib.request.Request(gw.url("/healthz"), method="DELETE")
        try:
            urllib.request.urlopen(req, timeout=5)
            assert False, "DELETE /healthz answered 2xx"
        except urllib.error.HTTPError as e:
            assert e.code == 405, e.code
        status, _, _ = gw.get("/api/adapters", {"Authorization": "Bearer s3cret-token"})
        assert status == 200
        code, took = gw.stop(signal.SIGINT, timeout=time_bound(1.0) + 5)
        assert code == 0 and took < time_bound(1.0), (code, took)

    # JSON logs for collectors
    with Gateway(args=["--log-format", "json"]) as gw:
        gw.stop()
        import json
        for line in gw.lines:
            rec = json.loads(line)
            assert set(rec) == {"ts", "level", "component", "msg"}, rec
    print("admin API: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
