"""Integration: RTP game state over SRTP/SRTCP (RFC 3711, libsrtp2) between real gateways on
loopback, with static SDES keys from files.

- A (synth -> rtp with srtp) sends through a Python UDP relay to B (rtp with srtp, the mirror
  keys): B's /api/entities shows A's entities at A's poses; B's FIR (SRTCP, B's key) reaches A
  through the relay and is accepted (firs_in); A protects each packet once for all its
  destinations (no SRTP send errors although it sends to three).
- A's own packets (A lists its own port as a destination) are dropped by SSRC before any SRTP
  check: no drop_srtp_* on A.
- C receives A's packets with the wrong remote key: no entities, drop_srtp_auth counts them.
- A datagram captured by the relay and sent to B again is rejected as a replay (drop_srtp_replay),
  a copy with its seq altered as an authentication failure; a plain RTP packet (fresh SSRC) is dropped as
  drop_srtp_auth, a plain RTCP PLI (shorter than header + trailer) as drop_srtp_malformed.
- GET /api/sdp/<adapter> and `xrgate --sdp NAME` say RTP/SAVPF and carry the a=crypto line with
  the sending key; AEAD_AES_128_GCM works end to end too.
- Config: a fixed ssrc with srtp is refused unless allow_fixed_ssrc_with_srtp; a key file that
  others can read is warned about; a key of the wrong length is an error naming the key."""
import base64
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time

from test_rtp import dist, head1, pli, require_rtp, rtp, wait_entities
from xgtest import BIN, Gateway, wait_until

SUITE_LEN = {"AES_CM_128_HMAC_SHA1_80": 30, "AEAD_AES_128_GCM": 28}


def make_key(d, name, suite="AES_CM_128_HMAC_SHA1_80", mode=0o600):
    raw = os.urandom(SUITE_LEN[suite])
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(f"# test key\ninline:{base64.b64encode(raw).decode()}\n")
    os.chmod(path, mode)
    return path, base64.b64encode(raw).decode()



class Relay:
    """UDP relay: datagrams from anyone but B go to B (the sender's address is remembered);
    datagrams from B go to the last sender. Keeps A's RTP datagrams (not RTCP) for replays."""

    def __init__(self, b_port):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.b = ("127.0.0.1", b_port)
        self.a = None
        self.rtp_from_a = []
        self.to_a = 0
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop:
            r, _, _ = select.select([self.sock], [], [], 0.05)
            if not r:
                continue
            d, src = self.sock.recvfrom(65536)
            if src == self.b:
                if self.a:
                    self.sock.sendto(d, self.a)
                    self.to_a += 1
                continue
            self.a = src
            if len(d) >= 2 and not 192 <= d[1] <= 223 and len(self.rtp_from_a) < 5000:
                self.rtp_from_a.append(d)
            self.sock.sendto(d, self.b)

    def send_to_b(self, d):
        self.sock.sendto(d, self.b)

    def close(self):
        self.stop = True
        self.t.join(1)
        self.sock.close()


class Forward:
    """A test-side UDP socket that forwards every datagram to `target` once it is set: A sends to
    it and gets its own packets back (the multicast-loopback case), without A's port having to
    be known before A binds it."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.target = None
        self.forwarded = 0
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop:
            r, _, _ = select.select([self.sock], [], [], 0.05)
            if not r:
                continue
            d = self.sock.recv(65536)
            if self.target:
                self.sock.sendto(d, self.target)
                self.forwarded += 1

    def close(self):
        self.stop = True
        self.t.join(1)
        self.sock.close()


def srtp_block(key, remote, suite=None):
    s = "    srtp:\n"
    if suite:
        s += f"      suite: {suite}\n"
    s += f"      key_file: {key}\n"
    if remote:
        s += f"      remote_key_file: {remote}\n"
    return s


def receiver_cfg(name, key, remote, suite=None):
    return f"""
adapters:
  - name: {name}
    type: rtp
    bind: "127.0.0.1:0"
{srtp_block(key, remote, suite)}"""


def test_exchange(d):
    ka, _ = make_key(d, "a.key")
    kb, kb_b64 = make_key(d, "b.key")
    kc, _ = make_key(d, "c.key")
    kwrong, _ = make_key(d, "wrong.key")
    with Gateway(receiver_cfg("fromA", kb, ka)) as b, \
            Gateway(receiver_cfg("fromA", kc, kwrong)) as c:
        port_b = b.port_of("fromA")
        port_c = c.port_of("fromA")
        relay = Relay(port_b)
        loop = Forward()  # A sends to itself through it (its own port is not known yet)
        cfg_a = f"""
adapters:
  - name: demo
    type: synth
    bodies: 1
  - name: out
    type: rtp
    bind: "127.0.0.1:0"
    destinations: ["127.0.0.1:{relay.port}", "127.0.0.1:{port_c}", "127.0.0.1:{loop.port}"]
    rate_hz: 60
    rtcp_interval_ms: 100
{srtp_block(ka, kb)}"""
        try:
            with Gateway(cfg_a) as a:
                loop.target = ("127.0.0.1", int(a.wait_counter("out", "port", 1)["port"]))
                ents = wait_entities(b, 4, "fromA/")
                kinds = sorted(e["kind"] for e in ents)
                assert kinds == ["head", "left_hand", "object", "right_hand"], kinds
                # poses: A's entities at B within what a few ms of motion explain
                ea = {e["kind"]: e for e in a.get_json("/api/entities")["entities"]
                      if e["origin"] == "demo"}
                eb = {e["kind"]: e for e in b.get_json("/api/entities")["entities"]}
                for kind, kind_b in (("head", "head"), ("left_hand", "left_hand"),
                                     ("right_hand", "right_hand"), ("rigid_body", "object")):
                    pa, pb = ea[kind], eb[kind_b]
                    assert dist(pa["position"], pb["position"]) < 0.03, (kind, pa, pb)
                    assert dist(pa["orientation"], pb["orientation"]) < 0.03 or \
                        dist(pa["orientation"], [-x for x in pb["orientation"]]) < 0.03, \
                        (kind, pa, pb)
                # SRTCP both ways: B's FIR (B's key) through the relay, A's SRs at B
                ca = a.wait_counter("out", "firs_in", 1)
                assert relay.to_a >= 1
                assert ca["full_states"] >= 1, ca
                cb = b.wait_counter("fromA", "packets_in", 3)  # RTP and A's SRs
                # A's own packets came back (>= 3 forwarded); a plain PLI sent after them is
                # counted once processed, so they have been processed too
                wait_until(lambda: loop.forwarded >= 3, what="3 of A's packets back to A")
                probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                probe.sendto(pli(0x0BADF00D, 0x12345678), loop.target)
                probe.close()
                ca = a.wait_counter("out", "drop_srtp_malformed", 1)
                ca["drop_srtp_malformed"] -= 1  # the probe's
                assert cb["firs_out"] >= 1 and cb["packets_in"] >= 3, cb
                for k in ("drop_srtp_auth", "drop_srtp_replay", "drop_srtp_malformed",
                          "drop_bad_rtcp", "srtp_errors"):
                    assert cb[k] == 0, (k, cb)
                    assert ca[k] == 0, (k, ca)  # A's own packets: dropped before SRTP
                # protected once for three destinations: no replay refusals on send
                assert ca["packets_out"] >= 3 and ca["errors"] == 0, ca
                assert ca["packets_in"] == 0, ca  # its own packets are not ingress
                assert not [e for e in a.get_json("/api/entities")["entities"]
                            if e["origin"] == "out"]

                # C (wrong remote key): nothing, every packet an authentication failure
                cc = c.wait_counter("fromA", "drop_srtp_auth", 3)
                assert cc["packets_in"] == 0 and cc["ssrcs"] == 0, cc
                assert not c.get_json("/api/entities")["entities"]
                assert c.wait_log("authentication failed"), c.log()

                # replay: a captured datagram from A, sent to B again by the relay
                assert relay.rtp_from_a
                captured = relay.rtp_from_a[-1]
                before = b.counters("fromA")
                relay.send_to_b(captured)
                after = b.wait_counter("fromA", "drop_srtp_replay", before["drop_srtp_replay"] + 1)
                assert after["drop_srtp_auth"] == before["drop_srtp_auth"], (before, after)
                assert b.wait_log("replayed"), b.log()
                # altered: the seq moved ahead (libsrtp checks replays first, so an altered
                # copy of a packet already seen would count as a replay)
                bad = bytearray(captured)
                bad[2:4] = (((bad[2] << 8 | bad[3]) + 1000) & 0xFFFF).to_bytes(2, "big")
                relay.send_to_b(bytes(bad))
                b.wait_counter("fromA", "drop_srtp_auth", before["drop_srtp_auth"] + 1)

                # plain RTP (a fresh SSRC) and plain RTCP to the SRTP session: dropped
                tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                t1 = (time.time_ns() // 1_000_000) & 0xFFFF
                plain = rtp(98, 1, 0, 0x0BADF00D,
                            head1(1, t1, (0, 1, 0), (0, 0, 0), (0, 0, 0), (0, 0, 0)))
                c0 = b.counters("fromA")
                tx.sendto(plain, ("127.0.0.1", port_b))
                c1 = b.wait_counter("fromA", "drop_srtp_auth", c0["drop_srtp_auth"] + 1)
                tx.sendto(pli(0x0BADF00D, 0x12345678), ("127.0.0.1", port_b))
                b.wait_counter("fromA", "drop_srtp_malformed", c1["drop_srtp_malformed"] + 1)
                tx.close()
                # both were counted as dropped above: an entity would exist by now
                assert not [e for e in b.get_json("/api/entities")["entities"]
                            if "0badf00d" in e["name"]]
                assert b.wait_log("0x0badf00d"), b.log()

                # SDP: SAVPF with the a=crypto line of B's sending key
                st, hdr, body = b.get("/api/sdp/fromA")
                assert st == 200, (st, body)
                sdp = body.decode()
                assert f"m=application {port_b} RTP/SAVPF 98\r\n" in sdp, sdp
                assert f"a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:{kb_b64}\r\n" in sdp, sdp
                assert "RTP/AVPF" not in sdp
        finally:
            loop.close()
            relay.close()
    print("exchange: A -> relay -> B over SRTP with matching poses, SRTCP FIR back; wrong key "
          "(C) gets nothing; replay, altered, plain RTP/RTCP dropped and counted")


def test_gcm(d):
    ka, _ = make_key(d, "ga.key", "AEAD_AES_128_GCM")
    kb, _ = make_key(d, "gb.key", "AEAD_AES_128_GCM")
    with Gateway(receiver_cfg("gcm", kb, ka, "AEAD_AES_128_GCM")) as b:
        port_b = b.port_of("gcm")
        cfg_a = f"""
adapters:
  - name: demo
    type: synth
    bodies: 0
  - name: out
    type: rtp
    bind: "127.0.0.1:0"
    destinations: ["127.0.0.1:{port_b}"]
{srtp_block(ka, kb, "AEAD_AES_128_GCM")}"""
        with Gateway(cfg_a) as a:
            ents = wait_entities(b, 3, "gcm/")
            assert sorted(e["kind"] for e in ents) == ["head", "left_hand", "right_hand"], ents
            a.wait_counter("out", "firs_in", 1)
            st, _, body = a.get("/api/sdp/out")
            assert st == 200 and "a=crypto:1 AEAD_AES_128_GCM inline:" in body.decode(), body
    print("gcm: AEAD_AES_128_GCM end to end")


def check(d, text, name="gw.yaml"):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return subprocess.run([BIN, "--check", "--config", path], capture_output=True, text=True,
                          timeout=10), path


def test_config_and_cli(d):
    k, k_b64 = make_key(d, "cli.key")
    base = f"""
adapters:
  - name: sess
    type: rtp
    bind: "127.0.0.1:5004"
    srtp:
      key_file: cli.key
"""
    r, path = check(d, base)
    assert r.returncode == 0, r.stderr
    assert "can be read by group or others" not in r.stderr, r.stderr
    # xrgate --sdp NAME: the same SAVPF + a=crypto (relative key path: the config's directory)
    r2 = subprocess.run([BIN, "--sdp", "sess", "--config", path], capture_output=True,
                        timeout=10)
    out = r2.stdout.decode()  # bytes: keep the CRLFs
    assert r2.returncode == 0, r2.stderr
    assert "m=application 5004 RTP/SAVPF 98\r\n" in out, out
    assert f"a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:{k_b64}\r\n" in out, out
    # a fixed ssrc with srtp: refused at the ssrc key, unless explicitly allowed
    r, _ = check(d, base.replace("    srtp:", "    ssrc: 0x1234\n    srtp:"))
    assert r.returncode != 0 and "gw.yaml:6:11: ssrc: a fixed SSRC with srtp is refused" in \
        r.stderr, r.stderr
    r, _ = check(d, base.replace("    srtp:", "    ssrc: 0x1234\n"
                                 "    allow_fixed_ssrc_with_srtp: true\n    srtp:"))
    assert r.returncode == 0, r.stderr
    # a key file others can read: a warning, not an error
    os.chmod(k, 0o644)
    r, _ = check(d, base)
    assert r.returncode == 0 and "can be read by group or others" in r.stderr, r.stderr
    # a 29-byte key: the error names the key and the lengths
    with open(os.path.join(d, "short.key"), "w") as f:
        f.write("inline:" + base64.b64encode(os.urandom(29)).decode() + "\n")
    r, _ = check(d, base.replace("cli.key", "short.key"))
    assert r.returncode != 0 and "srtp.key_file" in r.stderr and \
        "29 bytes, AES_CM_128_HMAC_SHA1_80 needs 30" in r.stderr, r.stderr
    print("config: fixed ssrc refused/allowed, readable key warned, short key error, --sdp")


def main():
    require_rtp()
    with tempfile.TemporaryDirectory(prefix="xrgate-srtp-") as d:
        test_config_and_cli(d)
        test_exchange(d)
        test_gcm(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
