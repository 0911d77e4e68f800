"""Entity table limits seen from a peer (issue 22 items 7 and 10), with a scripted RGMP server
feeding the rgmp-client adapter `rg`:

- long names: target frames "A"*300+"1" and "A"*300+"2" (beyond the 128-byte entity name) are two
  entities, each with its own samples; their sources and names are cut with a hash of the whole
  name appended ("~" + the first 96 bits of SHA-256 in hex), so the names are the same on every
  run and never merge (before, both were truncated to one source and the second's samples
  vanished as "older" samples of the first);
- the same for LESS entity names (less connect `lc`);
- max_entities: with entity.max_entities 2, a third target frame is refused: one warning naming
  the adapter and the entity, counted in /api/adapters (`entities_refused` of the origin) and in
  /metrics (`xrgate_entities_refused_total{adapter="rg"}`); the two known entities keep updating.
"""
import hashlib
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import faultlib as F  # noqa: E402
from xgtest import Gateway, wait_until  # noqa: E402

NAME_MAX = 128  # XG_NAME_MAX, incl. NUL
HASH_HEX = 24


def fit(s):
    """core/table/names.c: a name that does not fit is cut and gets '~' + 96 bits of its SHA-256."""
    b = s.encode()
    if len(b) < NAME_MAX:
        return s
    keep = NAME_MAX - 1 - HASH_HEX - 1
    return b[:keep].decode() + "~" + hashlib.sha256(b).hexdigest()[:HASH_HEX]


def rgmp_peer(frames):
    peer = F.ScriptedPeer(lambda: F.rgmp_definition(77, frames))
    return peer


def send_poses(peer, poses):
    peer.put(lambda: F.rgmp_data(77, int(time.time() * 1e6), poses))


def pose(x):
    return (x, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)  # ENU (x, y, z) -> internal (x, z, -y)


def long_names():
    frames = ["A" * 300 + "1", "A" * 300 + "2"]
    peer = rgmp_peer(frames)
    cfg = ("gateway:\n  predict: {max_horizon_ms: 0}\n"  # positions as sent, not predicted
           f"adapters:\n  - {{name: rg, type: rgmp-client, connect: \"127.0.0.1:{peer.port}\"}}\n")
    try:
        with Gateway(cfg) as gw:
            try:
                names = [fit("rg/" + fit(f"rig-77/{f}")) for f in frames]
                assert names[0] != names[1] and all(len(n) == NAME_MAX - 1 for n in names)
                for k in range(1, 4):
                    send_poses(peer, [pose(0.1 * k), pose(0.2 * k)])
                    wait_until(lambda: (lambda es: all(n in es for n in names) and
                                        abs(es[names[0]]["position"][0] - 0.1 * k) < 1e-6 and
                                        abs(es[names[1]]["position"][0] - 0.2 * k) < 1e-6)(
                                            gw.entities("rg/")),
                               what=f"two entities, frame {k} applied to both")
                es = gw.entities("rg/")
                assert sorted(es) == sorted(names), list(es)
                assert es[names[0]]["samples"] == 3 and es[names[1]]["samples"] == 3, es
                assert es[names[0]]["source"] == fit("rig-77/" + frames[0])
                assert F.metric(gw, "xrgate_samples_backwards_total", "rg") == 0
                print(f"long names: two entities {names[0][-30:]!r}, {names[1][-30:]!r}, "
                      "3 samples each")
                F.assert_clean_exit(gw)
            except BaseException:
                print(gw.log()[-4000:])
                raise
    finally:
        peer.kill()


def less_long_names():
    """The same through LESS: entity names from the peer beyond 128 bytes stay two entities."""
    L = F.less()
    names = ["B" * 300 + "1", "B" * 300 + "2"]

    def hello():
        ts = F.LessTs()
        msgs = [L.msg_introduce_entity(7, i + 1, {0: n, 1: 4, 2: [0.1 * (i + 1), 1.0, 1.0],
                                                  3: [0, 0, 0], 4: [0, 0, 0, 1], 6: 1})
                for i, n in enumerate(names)]
        return ts.frame(L.msg_cc(), L.msg_introduce_type(7, L.POSE_URI)) + ts.frame(*msgs)
    peer = F.ScriptedPeer(hello)
    cfg = ("gateway:\n  predict: {max_horizon_ms: 0}\nadapters:\n"
           f"  - {{name: lc, type: less, mode: connect, connect: \"127.0.0.1:{peer.port}\", "
           "signature: none, rate_hz: 0}\n")
    try:
        with Gateway(cfg) as gw:
            try:
                want = [fit("lc/" + fit(n)) for n in names]
                wait_until(lambda: all(w in gw.entities("lc/") for w in want),
                           what="two LESS entities")
                es = gw.entities("lc/")
                assert sorted(es) == sorted(want), list(es)
                assert abs(es[want[1]]["position"][0] - 0.2) < 1e-6, es[want[1]]
                print("less long names: two entities")
                F.assert_clean_exit(gw)
            except BaseException:
                print(gw.log()[-4000:])
                raise
    finally:
        peer.kill()


def max_entities():
    peer = rgmp_peer(["a", "b", "c"])
    cfg = ("gateway:\n  entity: {max_entities: 2}\n  predict: {max_horizon_ms: 0}\n"
           f"adapters:\n  - {{name: rg, type: rgmp-client, connect: \"127.0.0.1:{peer.port}\"}}\n")
    try:
        with Gateway(cfg) as gw:
            try:
                assert gw.counters("rg")["entities_refused"] == 0
                assert F.metric(gw, "xrgate_entities_refused_total", "rg") == 0
                send_poses(peer, [pose(0.1), pose(0.2), pose(0.3)])
                assert gw.wait_log("warn  [rg] entity table full (max_entities 2): new entity "
                                   "'rg/rig-77/c' refused"), gw.log()[-3000:]
                wait_until(lambda: gw.counters("rg")["entities_refused"] == 1,
                           what="entities_refused counted")
                assert F.metric(gw, "xrgate_entities_refused_total", "rg") == 1
                # the known ones keep updating; the refused one is counted again, not created
                send_poses(peer, [pose(0.4), pose(0.5), pose(0.6)])
                wait_until(lambda: abs(F.pos_x(gw, "rg/rig-77/b") - 0.5)
                           < 1e-6, what="known entity updated")
                wait_until(lambda: gw.counters("rg")["entities_refused"] == 2,
                           what="second refusal counted")
                es = gw.entities("rg/")
                assert sorted(es) == ["rg/rig-77/a", "rg/rig-77/b"], list(es)
                print("max_entities: third entity refused, logged and counted "
                      "(entities_refused, xrgate_entities_refused_total)")
                F.assert_clean_exit(gw)
            except BaseException:
                print(gw.log()[-4000:])
                raise
    finally:
        peer.kill()


def main():
    sec = F.Sections()
    sec.run("long names", ["rgmp-client"], long_names)
    sec.run("less long names", ["less"], less_long_names)
    sec.run("max_entities", ["rgmp-client"], max_entities)
    return sec.finish()


if __name__ == "__main__":
    sys.exit(main())
