"""Integration: the walkthrough "Replay a take to a headset" (docs/adapters/bvh.md) as written,
with the shipped configs conf/examples/replay-to-headset.yaml and headset-view.yaml. Fixed ports
are swapped for ephemeral ones (the first gateway's, and the view's, chosen by the daemons) and
the take's relative path made absolute; everything else is the examples' text. Step 4: the view
gateway lists the headset's Head1 and two Hand1 objects from the first gateway's SSRC, moving;
a view bound to the first gateway's own port stops at start with the exact error (unicast UDP
ports are exclusive). Only loopback addresses."""
import os
import re
import subprocess
import sys
import tempfile
import time

from xgtest import BIN, SOURCE_DIR, Gateway

EX = os.path.join(SOURCE_DIR, "conf", "examples")


def read(name):
    with open(os.path.join(EX, name)) as f:
        return f.read()


def sub(text, old, new):
    assert old in text, f"the example no longer contains {old!r}"
    return text.replace(old, new)


def main():
    view_cfg = read("headset-view.yaml")
    view_cfg = sub(view_cfg, 'bind: "127.0.0.1:49172"', 'bind: "127.0.0.1:0"')
    with Gateway(view_cfg) as view:  # admin address from the test (port 0)
        view.wait_log("rtp adapter started")
        vport = view.port_of("view")
        replay = read("replay-to-headset.yaml")
        replay = sub(replay, "file: ../../tests/vectors/bvh/walk_small.bvh",
                     "file: " + os.path.join(SOURCE_DIR, "tests", "vectors", "bvh", "walk_small.bvh"))
        replay = sub(replay, 'bind: "0.0.0.0:49170"', 'bind: "127.0.0.1:0"')
        replay = sub(replay, 'destinations: ["127.0.0.1:49172"]', f'destinations: ["127.0.0.1:{vport}"]')
        replay = sub(replay, 'listen: "127.0.0.1:3883"', 'listen: "127.0.0.1:0"')
        replay = sub(replay, 'listen: "127.0.0.1:12280"', 'listen: "127.0.0.1:0"')
        with Gateway(replay) as first:
            first.wait_log("bvh adapter started")
            ssrc = "%08x" % first.adapter("headsets")["counters"]["ssrc"]
            deadline = time.monotonic() + 10
            names = []
            while time.monotonic() < deadline:
                ents = view.get_json("/api/entities")["entities"]
                names = sorted(e["name"] for e in ents)
                if len([n for n in names if re.fullmatch(rf"view/{ssrc}/(Head1|Hand1)-\d+", n)]) == 3:
                    break
                time.sleep(0.05)
            heads = [n for n in names if re.fullmatch(rf"view/{ssrc}/Head1-\d+", n)]
            hands = [n for n in names if re.fullmatch(rf"view/{ssrc}/Hand1-\d+", n)]
            assert len(heads) == 1 and len(hands) == 2, names
            assert len(names) == 3, names  # include: only the head and the hands go out
            # the head moves (the take is playing), seen through the view's history
            def head_pos():
                for e in view.get_json("/api/entities")["entities"]:
                    if e["name"] == heads[0]:
                        return e["position"], e["sample_ns"]
                raise AssertionError("head gone")
            p0, s0 = head_pos()
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                p1, s1 = head_pos()
                if s1 != s0 and p1 != p0:
                    break
                time.sleep(0.05)
            assert s1 != s0 and p1 != p0, (p0, p1)
            assert 1.0 < p1[1] < 2.2, p1  # a standing head, Y up, metres
            # the pitfall the walkthrough warns about: a view on the first gateway's own port
            hport = first.port_of("headsets")
            bad = sub(read("headset-view.yaml"), 'bind: "127.0.0.1:49172"', f'bind: "0.0.0.0:{hport}"')
            with tempfile.TemporaryDirectory(prefix="xrgate-test-") as d:
                path = os.path.join(d, "view.yaml")
                with open(path, "w") as f:
                    f.write(bad)
                env = dict(os.environ, XRGATE_ADMIN_LISTEN="127.0.0.1:0")
                env.pop("XRGATE_CONFIG", None)
                try:
                    r = subprocess.run([BIN, "--config", path], env=env, capture_output=True,
                                       text=True, timeout=10)
                except subprocess.TimeoutExpired as e:
                    raise AssertionError(f"a view on the sender's port started:\n{e.stderr}")
            assert r.returncode == 1, r.stderr
            assert (f"error [view] udp bind 0.0.0.0:{hport}: Address already in use (another "
                    "program, or another gateway, has bound this UDP port)") in r.stderr, r.stderr
    print(f"replay to a headset: the view lists {heads + hands} from SSRC {ssrc}, moving; a view "
          "on the sender's own port stops with the exact error")
    return 0


if __name__ == "__main__":
    sys.exit(main())
