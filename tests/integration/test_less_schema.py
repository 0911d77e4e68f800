"""Integration (issue 6): a simulator's own LESS type read through a mapping file (`schemas:`).

The mapping (written below) maps `urn:test:vehicle:1` — component 0 {callsign STRING → name,
fuel FLOAT32 (not mapped), pos VECTOR(3, FLOAT64) → position, att VECTOR(4, FLOAT32) w x y z →
orientation}, component 1 {vel LIST(FLOAT32) → velocity, tags LIST(STRING)} — with default kind
rigid_body. A byte-level peer (tests/integration/test_less_session.py) introduces that type and a
type nobody maps; G subscribes to exactly the mapped properties of the first and ignores the
second; an entity of the mapped type shows up in /api/entities with its name, kind, position
(FLOAT64: within 1e-7 m, which FLOAT32 could not give at 12.3 m; the
admin API prints 9 significant digits), orientation (reordered from w x y z) and velocity. A mapping file
with a bad type or field is rejected by `xrgate --check` with file:line:column."""
import math
import os
import struct
import subprocess
import sys
import tempfile
import time

from xgtest import BIN, Gateway, wait_until
import test_less_session as ls

MAPPING = """# a simulator's vehicle type
uri: "urn:test:vehicle:1"
kind: rigid_body
components:
  - name: body
    properties:
      - {name: callsign, type: STRING, field: name}
      - {name: fuel, type: FLOAT32}
      - {name: pos, type: "VECTOR(3, FLOAT64)", field: position}
      - {name: att, type: "vector(4, float32)", field: orientation, order: wxyz}
  - name: motion
    properties:
      - {name: vel, type: "LIST(FLOAT32)", field: velocity}
      - {name: tags, type: "LIST(STRING)"}
"""


def main():
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "k.hex"), "w") as f:
            f.write(ls.KEY.hex())
        with open(os.path.join(tmp, "vehicle.yaml"), "w") as f:
            f.write(MAPPING)
        conf = os.path.join(tmp, "g.yaml")
        with open(conf, "w") as f:
            f.write("""gateway: {id: gw-s}
adapters:
  - name: less
    type: less
    mode: listen
    listen: "127.0.0.1:0"
    key_file: k.hex
    schemas: [vehicle.yaml]
""")
        r = subprocess.run([BIN, "--check", "--config", conf], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        with Gateway(open(conf).read().replace("k.hex", os.path.join(tmp, "k.hex"))
                     .replace("vehicle.yaml", os.path.join(tmp, "vehicle.yaml"))) as g:
            port = int(wait_until(lambda: next(
                a for a in g.get_json("/api/adapters")["adapters"])["peer"]).rsplit(":", 1)[1])
            p = ls.Peer(port)
            p.send(ls.msg_cc(), ls.msg_introduce_type(9, "urn:test:vehicle:1"),
                   ls.msg_introduce_type(10, "urn:test:unknown:1"))
            p.until(lambda: any(c == 2 and v[0] == 9 for c, v in p.msgs), what="subscription")
            subs = [v for c, v in p.msgs if c == 2]
            assert subs == [(9, [0, 2, 3, 0])], subs  # component 0: 0 2 3; component 1: 0
            pos = [12.3456789012, -2.0000000001, 0.125]
            w, x, y, z = math.cos(0.3), 0.0, 0.0, math.sin(0.3)
            body = ls.enc_int(0) + ls.enc_int(3) + ls.enc_int(0) + ls.enc_str("truck-7") + \
                ls.enc_int(2) + b"".join(struct.pack("<d", v) for v in pos) + \
                ls.enc_int(3) + b"".join(struct.pack("<f", v) for v in (w, x, y, z))
            motion = ls.enc_int(1) + ls.enc_int(1) + ls.enc_int(0) + ls.enc_int(3) + \
                b"".join(struct.pack("<f", v) for v in (0.0, 0.0, 0.0))
            p.send(ls.enc_int(4) + ls.enc_int(9) + ls.enc_int(5) + ls.enc_int(2) + body + motion)
            e = wait_until(lambda: g.entities().get("less/truck-7"), what="mapped entity")
            assert e["kind"] == "rigid_body", e
            assert math.dist(e["position"], pos) < 1e-7, e["position"]  # FLOAT32 would be 4e-7 off
            q = e["orientation"]
            assert abs(abs(q[1] * y + q[0] * x + q[2] * z + q[3] * w) - 1) < 1e-6, q
            assert e["velocity"] == [0.0, 0.0, 0.0], e
            ls.log_line(g, "not pose-compatible", "urn:test:unknown:1")
            print("mapped type:", e["name"], [round(v, 6) for v in e["position"]], e["kind"])
            # sending a property G did not subscribe to (fuel) is a framing error (P15)
            p2 = ls.Peer(port)
            p2.send(ls.msg_cc(), ls.msg_introduce_type(9, "urn:test:vehicle:1"))
            p2.until(lambda: any(c == 2 for c, _ in p2.msgs), what="subscription (p2)")
            fuel = ls.enc_int(0) + ls.enc_int(1) + ls.enc_int(1) + struct.pack("<f", 0.5)
            p2.send(ls.enc_int(4) + ls.enc_int(9) + ls.enc_int(6) + ls.enc_int(1) + fuel)
            assert p2.closed()
            line = ls.log_line(g, "not subscribed to")
            assert "property 1 of component 0" in line, line
            print("unsubscribed property:", line.split("] ", 1)[1][:150])
        # bad mapping files are configuration errors with positions
        for bad, want in ((MAPPING.replace("FLOAT64)", "FLAOT64)"), "vehicle.yaml:9:"),
                          (MAPPING.replace("field: velocity", "field: speed"), "field 'speed'"),
                          (MAPPING.replace('"LIST(FLOAT32)", field: velocity',
                                           'STRING, field: velocity'), "needs type")):
            with open(os.path.join(tmp, "vehicle.yaml"), "w") as f:
                f.write(bad)
            r = subprocess.run([BIN, "--check", "--config", conf], capture_output=True, text=True)
            assert r.returncode != 0 and want in r.stderr and "g.yaml:" in r.stderr, r.stderr
            print("rejected:", r.stderr.strip().splitlines()[-1][:160])
    return 0


if __name__ == "__main__":
    sys.exit(main())
