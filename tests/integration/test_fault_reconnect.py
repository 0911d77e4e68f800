"""Fault: every client adapter's peer is killed and restarted 20 times during streaming.

One gateway holds an rgmp-client, a vrpn-client (TCP-only) and a less adapter in connect mode,
each fed by a raw-byte peer of faultlib (50 Hz), plus a synth source and an rgmp-server with a
reading client. 20 times: all peers are killed at once (odd cycles with an abortive RST, even ones
with FIN; the listening socket closes too, so reconnect attempts are refused), then restarted on
the same port. Each time, per the adapter's documented rule:
  - rgmp-client / vrpn-client: the entity turns `active: false` at once, `STALE` after
    entity.stale_ms (checked on the first and last cycles, with a longer outage), and is active
    again with new samples after the reconnect; state leaves `streaming` while the peer is down;
  - less (connect): the session's entities are removed when it ends and re-introduced;
  - the reconnect goes through the backoff (counters `backoff_attempts` / `reconnects` grow; a
    longer outage costs what the backoff schedule allows, not a hot loop), and the backoff is reset once
    streaming again (each of the 20 reconnects completes; with doubling delays kept it could not);
  - the synth source keeps producing and the rgmp-server client (a vrpn-server one in builds
    without rgmp) keeps receiving on the same connection throughout.
Sections for adapter types missing from the build are skipped (exit 77 only if none can run)."""
import math
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import faultlib as F  # noqa: E402
from xgtest import Gateway, wait_until  # noqa: E402

CYCLES = 20
STALE_MS = 300


def make_peers():
    peers = {}
    if F.have("rgmp-client"):
        peers["rg"] = (F.RgmpPeer(), "rg/rig-77/body", "inactive")
    if F.have("vrpn-client"):
        peers["vc"] = (F.VrpnPeer(), "vc/Tracker0/0", "inactive")
    if F.have("less"):
        peers["lc"] = (F.LessPeer(), "lc/probe", "removed")
    return peers


def config(peers):
    ads = ["  - {name: demo, type: synth, rate_hz: 60, bodies: 1, head: false, hands: false}"]
    if F.have("rgmp-server"):
        ads.append('  - {name: out, type: rgmp-server, listen: "127.0.0.1:0", rate_hz: 30}')
    elif F.have("vrpn-server"):
        ads.append('  - {name: out, type: vrpn-server, listen: "127.0.0.1:0", rate_hz: 30}')
    if "rg" in peers:
        ads.append(f'  - {{name: rg, type: rgmp-client, connect: "127.0.0.1:{peers["rg"][0].port}"}}')
    if "vc" in peers:
        ads.append(f'  - {{name: vc, type: vrpn-client, '
                   f'devices: ["Tracker0@tcp://127.0.0.1:{peers["vc"][0].port}"]}}')
    if "lc" in peers:
        ads.append(f'  - {{name: lc, type: less, mode: connect, '
                   f'connect: "127.0.0.1:{peers["lc"][0].port}", signature: none, rate_hz: 30}}')
    return (f"gateway:\n  entity: {{stale_ms: {STALE_MS}, expire_ms: 60000}}\n"
            "adapters:\n" + "\n".join(ads) + "\n")


def attempts(c):
    """Connection attempts that failed or ended, whichever counter the adapter has."""
    return c.get("backoff_attempts", c.get("reconnects", 0))


def run(gw, peers):
    out = gw.adapters().get("out")
    reader = None
    if out and out["type"] == "rgmp-server":
        reader = F.RgmpReader(F.port_of(gw, "out"))
        wait_until(lambda: reader.frames[2] > 0, what="rgmp-server data frames")
    elif out:
        reader = F.VrpnReader(F.port_of(gw, "out"))
        wait_until(lambda: reader.bytes > 1000, what="vrpn-server reports")
    seen = {n: 0 for n in peers}
    demo_samples = 0
    stale_seen = set()
    for cycle in range(CYCLES):
        # 1. every client adapter streams, its entity active with new samples
        for n, (peer, ent, rule) in peers.items():
            def fresh(n=n, ent=ent):
                e = gw.entities(ent).get(ent)
                a = gw.adapter(n)
                return e and e["active"] and e["samples"] > seen[n] and \
                    a["state"] == "streaming" and (e, a)
            e, a = wait_until(fresh, timeout=15, what=f"cycle {cycle}: {n} streaming again")
            seen[n] = e["samples"] if rule == "inactive" else 0
        before = {n: gw.counters(n) for n in peers}
        bytes_before = reader.bytes if reader else 0
        # 2. kill every peer
        t_kill = time.monotonic()
        for peer, _, _ in peers.values():
            peer.kill(rst=cycle % 2 == 1)
        for n, (peer, ent, rule) in peers.items():
            if rule == "inactive":
                wait_until(lambda ent=ent: not gw.entities(ent)[ent]["active"],
                           what=f"cycle {cycle}: {ent} inactive")
            else:
                wait_until(lambda ent=ent: ent not in gw.entities(ent),
                           what=f"cycle {cycle}: {ent} removed")
            wait_until(lambda n=n: gw.adapter(n)["state"] != "streaming",
                       what=f"cycle {cycle}: {n} leaves streaming")
        if cycle in (0, CYCLES - 1):
            # a longer outage: STALE after stale_ms, and a bounded number of attempts
            for n, (peer, ent, rule) in peers.items():
                if rule == "inactive":
                    wait_until(lambda ent=ent: gw.entities(ent)[ent]["quality"] == "STALE",
                               what=f"{ent} STALE")
                    stale_seen.add(ent)
            # two attempts each (0.5 s, then 1 s, +-25 %), then: no more than the backoff
            # allows for the outage so far (delay k >= 0.375 s * 2^k; a hot loop makes hundreds)
            wait_until(lambda: all(attempts(gw.counters(n)) - attempts(before[n]) >= 2
                                   for n in peers), timeout=15, what="two reconnect attempts each")
            outage = time.monotonic() - t_kill
            bound = 3 + math.log2(1 + outage / 0.375)
            for n in peers:
                d = attempts(gw.counters(n)) - attempts(before[n])
                assert 2 <= d <= bound, f"{n}: {d} attempts during a {outage:.1f} s outage"
        # 3. restart
        for peer, _, _ in peers.values():
            peer.start()
        # the others were not disturbed
        d = gw.entities("demo/body0")["demo/body0"]
        assert d["active"] and d["samples"] > demo_samples, d
        demo_samples = d["samples"]
        if reader:
            wait_until(lambda: reader.bytes > bytes_before,
                       what="the egress client keeps receiving")
            assert not reader.closed
    for n, (peer, ent, rule) in peers.items():
        wait_until(lambda n=n, ent=ent: gw.adapter(n)["state"] == "streaming" and
                   gw.entities(ent).get(ent, {}).get("active"), timeout=15,
                   what=f"{n} streaming after the last restart")
        c = gw.counters(n)
        assert peer.sessions == CYCLES + 1, (n, peer.sessions)
        if "connects" in c:
            assert c["connects"] == CYCLES + 1, (n, c)
        ended = c.get("disconnects", c.get("reconnects", 0))
        assert ended >= CYCLES, (n, c)
        print(f"{n}: {peer.sessions} sessions, counters "
              f"{ {k: v for k, v in c.items() if k in ('connects', 'reconnects', 'disconnects', 'backoff_attempts')} }")
    if reader:
        o = gw.counters("out")
        assert o["clients"] == 1 and o["clients_dropped_slow"] == 0, o
        assert not reader.closed
        reader.close()
    print("STALE seen for", sorted(stale_seen))


def main():
    sec = F.Sections()
    F.require_adapters("synth")
    if not (F.have("rgmp-server", "the egress client") or F.have("vrpn-server")):
        print("note: no rgmp-server / vrpn-server in this build: no egress client to watch")
    peers = make_peers()
    for t, n in (("rgmp-client", "rg"), ("vrpn-client", "vc"), ("less", "lc")):
        if n not in peers:
            sec.leave_out(t, "adapter type not in this build")
    if not peers:
        return sec.finish()
    with Gateway(config(peers)) as gw:
        try:
            sec.run("reconnect " + "+".join(peers), [], run, gw, peers)
            F.assert_clean_exit(gw)
        except BaseException:
            print(gw.log()[-6000:])
            raise
        finally:
            for p, _, _ in peers.values():
                try:
                    p.kill()
                except (AssertionError, OSError):
                    pass
    return sec.finish()


if __name__ == "__main__":
    sys.exit(main())
