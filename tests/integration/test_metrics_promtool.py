"""/metrics passes `promtool check metrics` (Prometheus's own linter, Debian package
`prometheus`) on live scrapes with every adapter type active (issue 17 item 9).

Gateway A runs a BVH replay, a synth rig, a VRPN server, an RGMP server and an RTP receiver, all
on ports the daemon picks; gateway B connects to them with a VRPN client, an RGMP client and an
RTP sender, plus an RGMP client aimed at a port nobody listens on (the servers publish only the
synth rig and the sender only what came in over RGMP, so nothing loops). Once B has received from every client and A's RTP receiver has seen B's SSRC, both scrapes
are checked by promtool (exit 0, no output) and for the families docs/metrics.md promises:
`xrgate_adapter_up` 1 for the streaming/listening adapters and 0 for the client that cannot
connect, the RTP port and SSRC as labels of `xrgate_adapter_info` (and in no other family), no
`xrgate_adapter_counter`, and every counter family ending in `_total`.

Skips (77) when promtool is missing: docker/install-deps.sh installs the prometheus package."""
import os
import re
import shutil
import socket
import subprocess

from xgtest import VECTORS_DIR, Gateway, parse_prometheus, skip, wait_until

CMU = os.path.join(VECTORS_DIR, "mocap", "cmu_08_10_walk.bvh")
KEY = "6c657373206532652074657374206b6579206f6e6c79203332206279746573\n"


def promtool_check(promtool, text, label):
    r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=30)
    out = (r.stdout + r.stderr).strip()
    assert r.returncode == 0 and not out, f"{label}: promtool check metrics: {r.returncode} {out}"
    print(f"ok   promtool check metrics passes on {label} ({len(text.splitlines())} lines)")


def scrape(gw):
    st, hdr, body = gw.get("/metrics")
    assert st == 200, st
    return body.decode()


def families(text):
    """{family: type} from the # TYPE lines."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^# TYPE (\S+) (\S+)$", text, re.M)}


def port_of(adapters, name):
    a = next(a for a in adapters if a["name"] == name)
    return int(re.search(r":(\d+)", a["peer"]).group(1))


def counter(gw, adapter, name):
    for a in gw.get_json("/api/adapters")["adapters"]:
        if a["name"] == adapter:
            return a["counters"].get(name, 0)
    return 0


def main():
    promtool = shutil.which("promtool")
    if not promtool:
        skip("promtool not found (docker/install-deps.sh installs the prometheus package)")
    with Gateway(f"""gateway: {{id: prom-a}}
adapters:
  - name: take
    type: bvh
    file: {CMU}
  - name: demo
    type: synth
    rate_hz: 60
  - name: vrpn
    type: vrpn-server
    listen: "127.0.0.1:0"
    rate_hz: 60
    include: ["demo/*"]
  - name: rgmp
    type: rgmp-server
    listen: "127.0.0.1:0"
    rate_hz: 60
    include: ["demo/*"]
  - name: rtin
    type: rtp
    bind: "127.0.0.1:0"
""") as a:
        ad = a.get_json("/api/adapters")["adapters"]
        rtp_port = counter(a, "rtin", "port")
        assert rtp_port > 0, ad
        # a port nobody listens on: bind, read the number, close
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            dead = s.getsockname()[1]
        with Gateway(f"""gateway: {{id: prom-b}}
adapters:
  - name: vr
    type: vrpn-client
    devices: ["demo@tcp://127.0.0.1:{port_of(ad, 'vrpn')}"]
  - name: rg
    type: rgmp-client
    connect: "127.0.0.1:{port_of(ad, 'rgmp')}"
  - name: nobody
    type: rgmp-client
    connect: "127.0.0.1:{dead}"
  - name: rtout
    type: rtp
    bind: "127.0.0.1:0"
    destinations: ["127.0.0.1:{rtp_port}"]
    rate_hz: 30
    include: ["rg/*"]
""") as b:
            wait_until(lambda: counter(b, "vr", "tcp_reports") + counter(b, "vr", "udp_reports") > 0
                       and counter(b, "rg", "data_frames") > 0
                       and counter(a, "rtin", "objects_in") > 0,
                       15.0, what="VRPN, RGMP and RTP data flowing")
            for gw, label in ((a, "gateway A (servers, bvh, synth, rtp receiver)"),
                              (b, "gateway B (clients, rtp sender)")):
                text = scrape(gw)
                promtool_check(promtool, text, label)
                fam = families(text)
                assert "xrgate_adapter_counter" not in fam, "the mixed family is gone"
                bad = [f for f, t in fam.items() if (t == "counter") != f.endswith("_total")]
                assert not bad, f"counter <=> _total: {bad}"
                m = parse_prometheus(text)
                assert all(fam[n] for n, _ in m), m
            ma = parse_prometheus(scrape(a))
            mb = parse_prometheus(scrape(b))

            def up(m, adapter):
                return [v for (n, l), v in m.items()
                        if n == "xrgate_adapter_up" and f'adapter="{adapter}"' in l]

            for name in ("take", "demo", "vrpn", "rgmp", "rtin"):
                assert up(ma, name) == [1], (name, up(ma, name))
            for name in ("vr", "rg", "rtout"):
                assert up(mb, name) == [1], (name, up(mb, name))
            assert up(mb, "nobody") == [0], up(mb, "nobody")
            print("ok   xrgate_adapter_up: 1 for 8 streaming/listening adapters, 0 for the "
                  "client with no server")
            info = [l for (n, l) in ma if n == "xrgate_adapter_info" and 'adapter="rtin"' in l]
            assert len(info) == 1 and f'port="{rtp_port}"' in info[0] and 'ssrc="' in info[0], \
                info
            assert not [n for (n, l) in ma if n in ("xrgate_adapter_port",
                                                   "xrgate_adapter_ssrc_total",
                                                   "xrgate_adapter_ssrc")], "ids only as labels"
            # a counter and a gauge of the same adapter, under their documented names
            assert ma[("xrgate_adapter_clients",
                       'adapter="vrpn",type="vrpn-server"')] >= 1, "vrpn clients gauge"
            assert mb[("xrgate_adapter_data_frames_total",
                       'adapter="rg",type="rgmp-client"')] > 0
            assert ma[("xrgate_adapter_frame_rate_hertz", 'adapter="take",type="bvh"')] > 100
            print(f"ok   RTP identifiers in xrgate_adapter_info: {info[0]}")
            # issue 34 item 9: build info and process_* on both; samples_out_total only for the
            # adapters that send (servers, the rtp adapters), no free-text label
            for m in (ma, mb):
                assert [l for (n, l) in m if n == "xrgate_build_info"], "xrgate_build_info"
                assert ("process_cpu_seconds_total", "") in m
                assert ("process_start_time_seconds", "") in m
                assert not [l for (n, l) in m if "last_error" in n or "last_error" in l]
            out = {re.search(r'adapter="([^"]+)"', l).group(1)
                   for m in (ma, mb) for (n, l) in m if n == "xrgate_samples_out_total"}
            assert not out & {"take", "demo", "vr", "rg", "nobody"}, out
            assert {"vrpn", "rgmp", "rtout"} <= out, out
            print(f"ok   build info, process_*, samples_out_total only for {sorted(out)}")
    print("test_metrics_promtool: passed")


if __name__ == "__main__":
    main()
