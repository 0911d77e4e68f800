"""Integration: a vrpn-server client that stalls (stops reading, then reads again) gets, once it
drains, the newest pose of each sensor it missed and never a pose it already has.

A scripted VRPN server (tracker "Tracker0", sensors 0..N-1) feeds xrgate's vrpn-client; xrgate's
vrpn-server (send on change, max_output_bytes 4096, predict.max_horizon_ms 0 so every Pos_Quat
is a source sample exactly) serves a raw TCP client with a small receive buffer. Every sample the
source sends has a unique position (round, sensor). The client reads every sensor once, then
stops reading while the "movers" (sensors 0..N/2-1) keep changing until the server skips drains
for it; the other half ("still") does not change. Then the client reads again and one more round
of the movers is sent. Expected:
  - no (sensor, pose) pair arrives twice: the still sensors are not resent after the stall (the
    old full refresh resent every sensor);
  - each sensor's last Pos_Quat is its newest sample (the last round for the movers);
  - reports_skipped counts reports (more than drains_skipped, the skipped drains);
  - reports_coalesced > 0, at most reports_skipped, and exactly the number of samples sent after
    the client connected that it never received;
  - with send_velocity left at its default (false) no Velocity message is sent;
  - a UDP+TCP client gets a push of all N sensors in datagrams of up to 16 Pos_Quat each (as many
    as 1472 bytes hold), not one datagram per report, and a drain's datagrams go to the kernel in
    one sendmmsg call (counter udp_sends below datagrams)."""
import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402
from test_vrpn_server import Client, server_port, split_stream  # noqa: E402
from xgtest import Gateway, wait_until  # noqa: E402

N = 200
MOVERS = range(N // 2)
Q1 = (0.0, 0.0, 0.0, 1.0)

CONFIG = """
gateway:
  predict: {{max_horizon_ms: 0}}
  entity: {{stale_ms: 60000, expire_ms: 120000}}
adapters:
  - {{name: vc, type: vrpn-client, devices: ["Tracker0@tcp://127.0.0.1:{port}"]}}
  - {{name: vs, type: vrpn-server, listen: "127.0.0.1:0", rate_hz: 0, max_output_bytes: 4096,
     slow_timeout_ms: 60000}}
"""


def pose(rnd, sensor):
    return (float(rnd), float(sensor), 1.0)


def round_bytes(rnd, sensors):
    now = time.time()
    t = (int(now), int((now % 1) * 1e6))
    return b"".join(F.vrpn_report(s, pose(rnd, s), Q1, t) for s in sensors)


def pushed(gw, rnd, sensor=MOVERS[-1]):
    name = f"vc/Tracker0/{sensor}"  # the round's last report
    e = gw.entities(name).get(name)
    return e is not None and e["position"][0] == float(rnd)


def udp_packing(gw, send, rnd):
    """A UDP+TCP client: one push of all N sensors leaves in datagrams packed as full as 1472
    bytes allow (16 Pos_Quat of 88 bytes each), not one per report, and a drain's datagrams leave
    in one sendmmsg call (udp_sends < datagrams)."""
    u = Client(server_port(gw, "vs"), "udp")
    limit = rnd + 100
    while len(u.latest("vc", "pq")) < N and rnd < limit:
        send(rnd, range(N))
        rnd += 1
        u.pump(0.1)
    u.until(lambda: len(u.latest("vc", "pq")) == N, what=f"{N} sensors over UDP")
    u.pump(0.2)
    c0 = gw.counters("vs")
    send(rnd, range(N))
    wait_until(lambda: pushed(gw, rnd, N - 1), what=f"round {rnd} pushed")
    sizes = []
    u.udp.settimeout(2.0)
    while sum(sizes) < N:
        dg = u.udp.recv(65536)
        assert len(dg) <= 1472, len(dg)
        got, rest = split_stream(dg)
        assert not rest
        sizes.append(len(got))
    c1 = gw.counters("vs")
    u.close()
    dgrams, calls = (c1[k] - c0[k] for k in ("datagrams", "udp_sends"))
    full = 1472 // 88  # Pos_Quat messages of 88 bytes
    print(f"UDP: {N} reports of one push in {len(sizes)} datagrams {sizes}, {calls} sendmmsg")
    assert sum(sizes) == N and dgrams == len(sizes), (sizes, dgrams)
    # a drain's datagrams leave in one sendmmsg call (the push makes a few drains: see below)
    assert 0 < calls < dgrams and c1["udp_errors"] == c0["udp_errors"], (calls, dgrams)
    # each drain fills datagrams up to 1472 bytes; only its last one is partly filled (the
    # vrpn-client ingress reads 4 KiB per loop pass, so one push of N reports makes a few drains)
    assert max(sizes) == full and len(sizes) <= 2 * -(-N // full), sizes


def main():
    src = F.ScriptedPeer(F.vrpn_setup)
    sent = {s: [] for s in range(N)}  # sensor -> positions sent, in order

    def send(rnd, sensors):
        src.put(round_bytes(rnd, sensors))
        for s in sensors:
            sent[s].append(pose(rnd, s))

    with Gateway(CONFIG.format(port=src.port)) as gw:
        try:
            send(0, range(N))
            wait_until(lambda: len(gw.entities("vc/")) == N, what=f"{N} entities")
            c = Client(server_port(gw, "vs"), "tcp", rcvbuf=4096)
            # send on change: the client's first refresh comes with the next change
            rnd = 1
            while len(c.latest("vc", "pq")) < N and rnd < 50:
                send(rnd, range(N))
                rnd += 1
                c.pump(0.1)
            c.until(lambda: len(c.latest("vc", "pq")) == N, what=f"{N} sensors at the client")
            before = gw.counters("vs")
            # stall: the movers change until the server skips drains for the client, then twice
            # more (so that skipped reports are superseded)
            extra = None
            end = time.monotonic() + 30
            while time.monotonic() < end and rnd < 3000:
                send(rnd, MOVERS)
                rnd += 1
                if True:  # each round its own drain (no coalescing in the table)
                    # pushed, hence drained (send on change drains in the same loop pass)
                    wait_until(lambda: pushed(gw, rnd - 1), what=f"round {rnd - 1} pushed")
                    if extra is None and gw.counters("vs")["drains_skipped"] > \
                            before["drains_skipped"]:
                        extra = 0
                    elif extra is not None:
                        extra += 1
                        if extra == 2:
                            break
            assert extra == 2, f"no skipped drain after {rnd} rounds: {gw.counters('vs')}"
            # read again; one more round makes a drain that finds the client below the bound
            last = rnd
            c.pump(0.2)
            send(last, MOVERS)
            c.until(lambda: c.latest("vc", "pq").get(0, [None])[0] == float(last), timeout=20,
                    what=f"round {last} at the client")
            c.pump(0.2)  # the rest of that drain (one write, but maybe several reads)
            after = gw.counters("vs")
            stall_sent = {s: list(v) for s, v in sent.items()}  # what the stalled client missed
            udp_packing(gw, send, last + 1)
        except Exception:
            print(gw.log()[-4000:])
            raise
        finally:
            src.kill()
    pq = [(r[3], tuple(r[4][:3])) for r in c.reports if r[1] == "vc" and r[2] == "pq"]
    # send_velocity defaults to false: Pos_Quat only
    assert not [r for r in c.reports if r[2] == "vel"], "Velocity sent by default"
    c.close()
    seen = {}
    for key in pq:
        seen[key] = seen.get(key, 0) + 1
    dups = {k: n for k, n in seen.items() if n > 1}
    assert not dups, f"{len(dups)} poses received more than once, e.g. {list(dups.items())[:5]}"
    latest = c.latest("vc", "pq")
    for s in range(N):
        assert tuple(latest[s][:3]) == stall_sent[s][-1], (s, latest[s][:3], stall_sent[s][-1])
    skipped = after["reports_skipped"] - before["reports_skipped"]
    drains = after["drains_skipped"] - before["drains_skipped"]
    coalesced = after["reports_coalesced"] - before["reports_coalesced"]
    # round 0 was sent before the client connected
    missing = sum(1 for s in range(N) for p in stall_sent[s] if (s, p) not in seen and p[0] > 0)
    print(f"rounds {last}, drains skipped {drains}, reports skipped {skipped}, coalesced "
          f"{coalesced}, samples never received {missing}, received {len(pq)}")
    assert drains >= 1 and skipped > drains, (drains, skipped)
    # a skipped report is either resent once (the newest of its sensor) or coalesced; the
    # coalesced ones are exactly the samples the client never received
    assert 0 < coalesced <= skipped, (skipped, coalesced)
    assert coalesced == missing, (coalesced, missing)
    print("OK")


if __name__ == "__main__":
    main()
