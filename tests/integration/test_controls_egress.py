"""Integration: buttons, analogs and dials that a sink's protocol cannot carry are said, not
dropped silently.

The mainline VRPN recording session1_tcp (Tracker0, Button0, Dial0, Tracker1, Analog0) is replayed
into vrpn-client "s1": Dial0's two dials arrive as analog channels 64 and 65, Analog0 has its own
channels, Button0 its buttons. Three sinks that carry fewer of them than vrpn-server does:
- rtp: game state's GameControl1 carries buttons 0..19 and analogs 0..3, so the dial channels
  4..65 are left out: one warning naming s1/Dial0 and the channels, counted in
  controls_not_carried;
- rgmp-server and vmc carry none: one warning per entity with controls, counted.
Each warning is printed once per entity (the counters keep growing while lines do not)."""
import os
import re
import socket
import sys

sys.path.insert(0, os.path.dirname(__file__))
from xgtest import Gateway, wait_until  # noqa: E402
from test_vrpn_client import ReplayServer  # noqa: E402


def main():
    s1 = ReplayServer("session1_tcp")
    rtp_dest = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rtp_dest.bind(("127.0.0.1", 0))
    vmc_dest = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    vmc_dest.bind(("127.0.0.1", 0))
    cfg = f"""
adapters:
  - name: s1
    type: vrpn-client
    devices: ["Tracker0@tcp://127.0.0.1:{s1.port}", "Button0@tcp://127.0.0.1:{s1.port}",
              "Dial0@tcp://127.0.0.1:{s1.port}", "Tracker1@tcp://127.0.0.1:{s1.port}",
              "Analog0@tcp://127.0.0.1:{s1.port}"]
  - name: gs
    type: rtp
    bind: "127.0.0.1:0"
    destinations: ["127.0.0.1:{rtp_dest.getsockname()[1]}"]
    rate_hz: 50
  - name: suit
    type: rgmp-server
    listen: "127.0.0.1:0"
    rate_hz: 50
  - name: osc
    type: vmc
    bind: "127.0.0.1:0"
    destinations: ["127.0.0.1:{vmc_dest.getsockname()[1]}"]
    rate_hz: 50
"""
    with Gateway(cfg) as gw:
        try:
            assert s1.done.wait(15) and s1.error is None, s1.error
            wait_until(lambda: len(gw.entities().get("s1/Dial0", {}).get("extra", {})
                             .get("analogs", [])) == 66, 15.0,
                       what="s1/Dial0 with its dials at analog channels 64, 65")
            dial = gw.wait_log("[gs] entity 's1/Dial0': analog channels 4..65 not sent: game "
                               "state's GameControl1 has 20 buttons and two sticks (it carries "
                               "buttons 0..19 and analogs 0..3); a vrpn-server carries every "
                               "button, analog and dial (counted in controls_not_carried)")
            assert dial
            for sink, why in (("suit", "RGMP v2 has no field for them"),
                              ("osc", "VMC and VMT pose messages have no field for them")):
                for ent in ("s1/Button0", "s1/Dial0", "s1/Analog0"):
                    line = wait_until(lambda: re.search(
                        rf"\[{sink}\] entity '{re.escape(ent)}': (buttons|analog channels) "
                        rf"[0-9.]+ (and analog channels [0-9.]+ )?not sent: {re.escape(why)} "
                        r"\(it carries none\)", gw.log()), 15.0, what=f"{sink}'s warning for {ent}")
                    assert line
            # counters count values; the lines are printed once per entity
            first = {n: gw.counters(n)["controls_not_carried"] for n in ("gs", "suit", "osc")}
            assert all(v > 0 for v in first.values()), first
            wait_until(lambda: all(gw.counters(n)["controls_not_carried"] > first[n]
                             for n in ("gs", "suit", "osc")), 15.0,
                       what="controls_not_carried growing with every sample sent")
            log = gw.log()
            for sink in ("gs", "suit", "osc"):
                for ent in ("s1/Button0", "s1/Dial0", "s1/Analog0"):
                    n = len(re.findall(rf"\[{sink}\] entity '{re.escape(ent)}': .* not sent", log))
                    assert n <= 1, (sink, ent, n)
            assert not re.search(r"\[gs\] entity 's1/Button0'", log), "buttons 0..19 fit"
        except BaseException:
            print(gw.log()[-6000:])
            raise
    print(f"OK controls not carried: {first}")


if __name__ == "__main__":
    main()
