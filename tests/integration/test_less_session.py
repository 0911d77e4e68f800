"""Integration (issue 6): the LESS session rules, against a byte-level LESS peer written here from
the wire rules (INTEGER per the draft's encoder, STRING as unsigned byte INTEGERs, TCP framing,
HMAC-SHA-256/64 over the framed packet with the signature bytes zeroed — computed with Python's
hmac module, independently of the C codec).

Gateway G (synth + `less` listen) and raw peers P1, P2:
  - G's first message is connection-control (message 12), then it introduces the pose type and
    subscribes to the pose type P1 introduces; once P1 subscribes, G introduces its entities
    with name, kind and origin "gw-s/demo", then streams update-entity with increasing
    timestamps and only subscribed properties;
  - an entity P1 introduces appears in /api/entities (position within FLOAT32 precision);
    remove-entity removes it;
  - request-entity → a fresh introduce-entity of that id;
  - method-invocation on an entity G introduced → method-result 403; on an unknown id → 404;
    tweak-entity → method-result (request-id -1) 403; the session stays up;
  - framing/logical errors close only that session, with a log line naming the peer, the message
    and the value: update of an unknown entity, an unknown message code, a bad signature, a
    timestamp that does not increase; P2 keeps receiving updates meanwhile."""
import hmac
import hashlib
import math
import os
import socket
import struct
import sys
import tempfile
import time

from xgtest import Gateway, wait_until

KEY = bytes.fromhex("3c1f2e4d5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f")
POSE_URI = "urn:xrgate:lods:pose:1"

# ---- codec (from the wire rules) ----


def enc_int(v):
    out = bytearray()
    flag = 0
    if v > 127:
        flag = 0x80
    elif v < 0:
        v = ~v
        flag = 0xC0
    if flag:
        out.append(flag | (v & 0x3F))
        v >>= 6
        while v > 0x7F:
            out.append(0x80 | (v & 0x7F))
            v >>= 7
    out.append(v)
    return bytes(out)


def dec_int(b, i):
    x = b[i]
    i += 1
    if not x & 0x80:
        return x, i
    neg, acc, sh = x & 0x40, x & 0x3F, 6
    while True:
        y = b[i]
        i += 1
        acc |= (y & 0x7F) << sh
        sh += 7
        if not y & 0x80:
            break
    return (~acc if neg else acc), i


def enc_str(s):
    b = s.encode()
    return enc_int(len(b)) + b"".join(enc_int(c) for c in b)


def dec_str(b, i):
    n, i = dec_int(b, i)
    out = bytearray()
    for _ in range(n):
        c, i = dec_int(b, i)
        out.append(c)
    return out.decode(), i


def enc_vec(v):
    return b"".join(struct.pack("<f", x) for x in v)


POSE_TYPES = {0: "s", 1: "i", 2: 3, 3: 3, 4: 4, 5: 3, 6: "i", 7: "s", 8: "i"}
CONN_TYPES = {0: "s", 1: "i", 2: "i", 3: "s", 4: "i"}


def enc_val(t, v):
    if t == "s":
        return enc_str(v)
    if t == "i":
        return enc_int(v)
    return enc_vec(v)


def dec_val(t, b, i):
    if t == "s":
        return dec_str(b, i)
    if t == "i":
        return dec_int(b, i)
    return list(struct.unpack_from(f"<{t}f", b, i)), i + 4 * t


def enc_props(types, props):
    return enc_int(len(props)) + b"".join(enc_int(k) + enc_val(types[k], v)
                                          for k, v in props.items())


def dec_props(types, b, i):
    n, i = dec_int(b, i)
    out = {}
    for _ in range(n):
        k, i = dec_int(b, i)
        out[k], i = dec_val(types[k], b, i)
    return out, i


def msg_cc(schema="test-peer"):
    return enc_int(12) + enc_props(CONN_TYPES, {0: schema, 1: 0, 2: 1000, 3: "", 4: 30})


def msg_introduce_type(tid, uri):
    return enc_int(1) + enc_int(tid) + enc_str(uri)


def msg_subscribe(tid, pids):
    return (enc_int(2) + enc_int(tid) + enc_int(1) + enc_int(1) + enc_int(0) + enc_int(len(pids)) +
            b"".join(enc_int(p) for p in pids))


def msg_introduce_entity(tid, eid, props):
    return enc_int(4) + enc_int(tid) + enc_int(eid) + enc_int(1) + enc_int(0) + enc_props(
        POSE_TYPES, props)


def msg_update(eid, props):
    return enc_int(6) + enc_int(eid) + enc_int(1) + enc_int(0) + enc_props(POSE_TYPES, props)


def frame(msgs, ts, key=KEY):
    body = bytes(8) + enc_int(ts) + enc_int(len(msgs)) + b"".join(msgs)
    head = enc_int(len(body))
    f = bytearray(head + body)
    sig = hmac.new(key, bytes(f), hashlib.sha256).digest()[:8]
    f[len(head):len(head) + 8] = sig
    return bytes(f)


class Peer:
    """A raw LESS peer over TCP. Keeps what G told it."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""
        self.ts = 1000
        self.our_type = None  # G's pose typeid
        self.entities = {}  # G's entity id -> props
        self.results = []
        self.msgs = []  # (code, fields) in order
        self.last_ts = None
        self.subscribed = None

    def send(self, *msgs, ts=None, key=KEY):
        self.ts = max(self.ts + 1, int(time.monotonic() * 1e6))  # µs, strictly increasing
        self.s.sendall(frame(list(msgs), self.ts if ts is None else ts, key))

    def read_packet(self, timeout=5.0):
        self.s.settimeout(timeout)
        while True:
            try:
                n, i = dec_int(self.buf, 0)
                whole = len(self.buf) >= i + n
            except IndexError:  # empty, or a read ended inside the length prefix (a varint)
                whole = False
            if whole:
                f, self.buf = self.buf[:i + n], self.buf[i + n:]
                self.parse(f, i)
                return True
            chunk = self.s.recv(65536)
            if not chunk:
                return False
            self.buf += chunk

    def parse(self, f, i):
        z = bytearray(f)
        got = bytes(z[i:i + 8])
        z[i:i + 8] = bytes(8)
        assert hmac.new(KEY, bytes(z), hashlib.sha256).digest()[:8] == got, "G's signature"
        ts, j = dec_int(f, i + 8)
        assert self.last_ts is None or ts > self.last_ts, (ts, self.last_ts)
        self.last_ts = ts
        count, j = dec_int(f, j)
        for _ in range(count):
            code, j = dec_int(f, j)
            if code == 12:
                props, j = dec_props(CONN_TYPES, f, j)
                self.msgs.append((12, props))
            elif code == 1:
                tid, j = dec_int(f, j)
                uri, j = dec_str(f, j)
                if uri == POSE_URI:
                    self.our_type = tid
                self.msgs.append((1, (tid, uri)))
            elif code == 2:
                tid, j = dec_int(f, j)
                nc, j = dec_int(f, j)
                pids = []
                for _ in range(nc):
                    pl, j = dec_int(f, j)
                    for _ in range(pl):
                        _, j = dec_int(f, j)
                    n, j = dec_int(f, j)
                    for _ in range(n):
                        p, j = dec_int(f, j)
                        pids.append(p)
                self.subscribed = (tid, pids)
                self.msgs.append((2, (tid, pids)))
            elif code in (4, 6):
                if code == 4:
                    tid, j = dec_int(f, j)
                    assert tid == self.our_type
                eid, j = dec_int(f, j)
                nc, j = dec_int(f, j)
                props = {}
                for _ in range(nc):
                    cid, j = dec_int(f, j)
                    assert cid == 0
                    p, j = dec_props(POSE_TYPES, f, j)
                    props.update(p)
                if code == 4:
                    self.entities[eid] = props
                else:
                    assert eid in self.entities, f"update of {eid} before its introduce"
                    self.entities[eid].update(props)
                self.msgs.append((code, (eid, props)))
            elif code == 5:
                eid, j = dec_int(f, j)
                self.entities.pop(eid, None)
                self.msgs.append((5, eid))
            elif code == 9:
                rid, j = dec_int(f, j)
                status, j = dec_int(f, j)
                tcode, j = dec_int(f, j)
                assert tcode == 3, tcode  # STRING
                _n, j = dec_int(f, j)
                reason, j = dec_str(f, j)
                self.results.append((rid, status, reason))
                self.msgs.append((9, (rid, status, reason)))
            else:
                raise AssertionError(f"unexpected message code {code}")
        assert j == len(f), "trailing bytes"

    def until(self, fn, timeout=5.0, what="condition"):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = fn()
            if r:
                return r
            if not self.read_packet(deadline - time.monotonic()):
                raise AssertionError(f"connection closed while waiting for {what}")
        raise AssertionError(f"timed out waiting for {what}")

    def closed(self, timeout=5.0):
        self.s.settimeout(timeout)
        try:
            while True:
                if not self.s.recv(65536):
                    return True
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False

    def handshake(self):
        self.send(msg_cc(), msg_introduce_type(7, POSE_URI))
        self.until(lambda: self.our_type is not None and self.subscribed, what="G's session")
        assert self.msgs[0][0] == 12, self.msgs[:3]
        assert self.subscribed == (7, list(range(9))), self.subscribed
        self.send(msg_subscribe(self.our_type, list(range(9))))
        self.until(lambda: len(self.entities) >= 3, what="G's entities")

    def eid(self, name):
        return next(e for e, p in self.entities.items() if p.get(0) == name)


def log_line(gw, *words):
    return wait_until(lambda: next((l for l in gw.lines if all(w in l for w in words)), None),
                    what=f"log line with {words}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        keyfile = os.path.join(tmp, "k.hex")
        with open(keyfile, "w") as f:
            f.write(KEY.hex())
        with Gateway(f"""
gateway:
  id: gw-s
  entity: {{stale_ms: 500, expire_ms: 1500}}
adapters:
  - name: demo
    type: synth
    bodies: 0
  - name: less
    type: less
    mode: listen
    listen: "127.0.0.1:0"
    key_file: {keyfile}
    rate_hz: 30
  - name: less2
    type: less
    mode: listen
    listen: "127.0.0.1:0"
    key_file: {keyfile}
    rate_hz: 30
""") as g:
            port = int(wait_until(lambda: next(a for a in g.get_json("/api/adapters")["adapters"]
                                              if a["name"] == "less")["peer"]).rsplit(":", 1)[1])
            p1 = Peer(port)
            p1.handshake()
            head = p1.eid("demo/head")
            hp = p1.entities[head]
            assert hp[1] == 1 and hp[7] == "gw-s/demo" and hp[6] == 1, hp
            assert len(hp[4]) == 4 and abs(math.hypot(*hp[4]) - 1) < 1e-5, hp
            n_upd = sum(1 for c, _ in p1.msgs if c == 6)
            p1.until(lambda: sum(1 for c, _ in p1.msgs if c == 6) > n_upd + 6, what="updates")
            print("session: G introduced", sorted(p.get(0) for p in p1.entities.values()))

            p2 = Peer(port)
            p2.handshake()

            # an entity from the peer
            pos = [1.25, 0.5, -2.0]
            q = [0.0, math.sin(0.25), 0.0, math.cos(0.25)]
            p1.send(msg_introduce_entity(7, 42, {0: "probe", 1: 4, 2: pos, 3: [0, 0, 0], 4: q, 6: 1}))
            e = wait_until(lambda: g.entities().get("less/probe"), what="probe in the table")
            assert e["kind"] == "controller", e
            assert math.dist(e["position"], pos) < 1e-5, e
            p1.send(msg_update(42, {2: [1.5, 0.5, -2.0], 3: [0, 0, 0]}))  # at rest
            wait_until(lambda: abs(g.entities()["less/probe"]["position"][0] - 1.5) < 1e-5,
                     what="update applied")
            # an update of an entity introduced earlier in the same packet decodes (P14 note)
            t = int(time.monotonic() * 1e6)
            p1.send(msg_introduce_entity(7, 50, {0: "twin", 2: [0, 0, 0], 3: [0, 0, 0],
                                                 4: [0, 0, 0, 1], 8: t - 2000}),
                    msg_update(50, {2: [0.25, 0, 0], 3: [0, 0, 0], 8: t - 1000}))
            wait_until(lambda: abs(g.entities().get("less/twin", {"position": [9]})["position"][0]
                                 - 0.25) < 1e-6, what="introduce + update in one packet")
            # request-entity -> fresh introduce
            n4 = sum(1 for c, v in p1.msgs if c == 4 and v[0] == head)
            p1.send(enc_int(7) + enc_int(head))
            p1.until(lambda: sum(1 for c, v in p1.msgs if c == 4 and v[0] == head) > n4,
                     what="re-introduce after request-entity")
            # method-invocation: 403 on G's entity, 404 on an unknown id
            path = enc_int(1) + enc_int(0)
            p1.send(enc_int(8) + enc_int(5) + enc_int(head) + path + enc_int(2) + enc_int(0),
                    enc_int(8) + enc_int(6) + enc_int(9999) + path + enc_int(2) + enc_int(0))
            p1.until(lambda: len(p1.results) >= 2, what="method results")
            r = {rid: (st, why) for rid, st, why in p1.results}
            assert r[5][0] == 403 and "demo/head" in r[5][1], r
            assert r[6][0] == 404, r
            # tweak -> 403, request-id -1
            p1.send(enc_int(11) + enc_int(head) + path + enc_int(2) + enc_vec([0, 0, 0]))
            p1.until(lambda: len(p1.results) >= 3, what="tweak result")
            assert p1.results[2][0] == -1 and p1.results[2][1] == 403, p1.results
            print("403/404:", p1.results[0][2], "|", p1.results[1][2])
            # remove
            p1.send(enc_int(5) + enc_int(42))
            wait_until(lambda: "less/probe" not in g.entities(), what="probe removed")

            # relayed to a peer of another LESS adapter, with this gateway as origin; removed
            # there when it expires (entity.expire_ms) -- the entity_event path
            port2 = int(wait_until(lambda: next(a for a in g.get_json("/api/adapters")["adapters"]
                                               if a["name"] == "less2")["peer"]).rsplit(":", 1)[1])
            p6 = Peer(port2)
            p6.handshake()
            p1.send(msg_introduce_entity(7, 43, {0: "ghost", 1: 0, 2: pos, 3: [0, 0, 0], 4: q}))
            ghost = p6.until(lambda: next((e for e, v in p6.entities.items()
                                           if v.get(0) == "less/ghost"), None), what="relay")
            assert p6.entities[ghost][7] == "gw-s/less", p6.entities[ghost]
            assert p6.entities[ghost][1] == 0, p6.entities[ghost]  # kind object
            t0 = time.monotonic()
            p6.until(lambda: (5, ghost) in p6.msgs, timeout=6, what="remove-entity on expiry")
            print(f"relay: less/ghost reached the other adapter's peer, removed there "
                  f"{time.monotonic() - t0:.1f} s later (expire_ms 1500)")
            p6.s.close()

            # errors close only the offending session
            p1.send(msg_update(777, {2: [0, 0, 0]}))
            assert p1.closed(), "session not closed after update of an unknown entity"
            line = log_line(g, "update-entity", "777", "closing")
            assert "127.0.0.1:" in line, line
            print("unknown entity:", line.split("] ", 1)[1])

            p3 = Peer(port)
            p3.handshake()
            p3.send(enc_int(13))
            assert p3.closed()
            print("unknown code:", log_line(g, "message code 13").split("] ", 1)[1])

            p4 = Peer(port)
            p4.send(msg_cc(), key=b"\x01" * 32)
            assert p4.closed()
            print("bad signature:", log_line(g, "HMAC does not verify").split("] ", 1)[1])

            p5 = Peer(port)
            p5.handshake()
            p5.send(msg_cc(), ts=5)  # earlier than its handshake packets
            assert p5.closed()
            print("timestamp:", log_line(g, "does not increase").split("] ", 1)[1])

            # P2 was never disturbed
            n = sum(1 for c, _ in p2.msgs if c == 6)
            p2.until(lambda: sum(1 for c, _ in p2.msgs if c == 6) > n + 6, what="P2 updates")
            c = next(a for a in g.get_json("/api/adapters")["adapters"]
                     if a["name"] == "less")["counters"]
            assert c["refused_403"] == 2 and c["not_found_404"] == 1, c
            assert c["framing_errors"] >= 3 and c["bad_signature"] == 1, c
            assert c["peers"] == 1, c
            p2.s.close()
            rc, _ = g.stop()
            log = g.log()
            assert rc == 0 and "Sanitizer" not in log and "runtime error" not in log, log[-3000:]
    return 0


if __name__ == "__main__":
    sys.exit(main())
