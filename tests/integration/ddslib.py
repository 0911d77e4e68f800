"""Helpers for the dds adapter's integration tests: a private DDS domain on loopback and the
independent ROS 2 peer (tests/dds/dds_peer.c, Cyclone DDS's C API, no xrgate code).

Cyclone DDS is configured for loopback only, without multicast: interface `lo`, unicast
discovery to 127.0.0.1 (participant indices 0..MAX_PARTICIPANTS-1). Each test takes a domain id
that no other running test in this network namespace holds (an abstract Unix socket per id), so
parallel tests never see each other."""
import glob
import json
import math
import os
import random
import socket
import subprocess
import threading
import time

from xgtest import die_with_parent, require_adapters, time_bound

BUILD_DIR = os.environ.get("XG_BUILD_DIR") or os.path.join(os.path.dirname(__file__), "..", "..",
                                                           "build")
PEER = os.path.join(BUILD_DIR, "tests", "dds_peer")
MAX_PARTICIPANTS = 10
CYCLONE_XML = (
    "<CycloneDDS><Domain Id=\"any\"><General><Interfaces><NetworkInterface name=\"lo\"/>"
    "</Interfaces><AllowMulticast>false</AllowMulticast></General><Discovery>"
    "<ParticipantIndex>auto</ParticipantIndex>"
    f"<MaxAutoParticipantIndex>{MAX_PARTICIPANTS - 1}</MaxAutoParticipantIndex>"
    "<Peers><Peer Address=\"127.0.0.1\"/></Peers></Discovery></Domain></CycloneDDS>")
ENV = {"CYCLONEDDS_URI": CYCLONE_XML}
# Cyclone's DDS Security plugins: Debian installs them beside libddsc in libddsc0debian/
PLUGINS = next((os.path.dirname(p) for p in
                sorted(glob.glob("/usr/lib/*/libddsc0debian/libdds_security_auth.so"))), "")


def require():
    """Skip (xgtest.skip: under CI=true a failure) when the dds adapter is not built
    (XRGATE_DDS=OFF or no Cyclone DDS), as the binary's own list of adapter types says. A build
    with the adapter but without tests/dds_peer is broken: a failure."""
    require_adapters("dds")
    assert os.path.exists(PEER), f"the dds adapter is built but its test peer {PEER} is not"


_locks = []


def domain():
    """A DDS domain id (100..230) held by this process until it exits: an abstract Unix socket
    named after the id, bound in this network namespace, which is where DDS domains meet (a test
    of another checkout, chroot or container on the same network sees the hold; a lock file in
    /tmp would not be seen from another root), and nothing is left on disk."""
    ids = list(range(100, 231))
    random.shuffle(ids)
    for d in ids:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            s.bind(f"\0xrgate-test-dds-domain-{d}")
        except OSError:
            s.close()
            continue
        _locks.append(s)
        return d
    raise RuntimeError("no free DDS domain id")


def reader_config(domain_id, extra=""):
    """A configuration of one dds adapter "ros" on `domain_id` that reads and does not publish
    /tf (publish_tf: false); `extra`: more of its keys, YAML lines indented by four spaces."""
    return (f"adapters:\n  - name: ros\n    type: dds\n    domain_id: {domain_id}\n"
            f"    publish_tf: false\n{extra}")


class Peer:
    """dds_peer on `domain`: send() commands, wait() for JSON events. `enclave`: a DDS Security
    enclave folder (Keystore.enclave) the peer's participant authenticates with."""

    def __init__(self, domain_id, enclave=None):
        e = dict(os.environ)
        e.update(ENV)
        if enclave:
            e["DDS_PEER_ENCLAVE"] = enclave
            e["DDS_PEER_PLUGINS"] = PLUGINS
        self.proc = subprocess.Popen([PEER, str(domain_id)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=e, preexec_fn=die_with_parent())
        self.events = []
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            ev = json.loads(line)
            with self.cond:
                self.events.append(ev)
                self.cond.notify_all()

    def send(self, line, timeout=10.0):
        """Send one command and wait for its "ok"."""
        with self.cond:
            n_ok = sum(1 for e in self.events if e["ev"] == "ok")
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        self.wait(lambda evs: sum(1 for e in evs if e["ev"] == "ok") > n_ok, timeout,
                  f"no ok for {line[:60]!r}")

    def wait(self, pred, timeout=10.0, what="condition"):
        """Wait until pred(events) is true; returns its value."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                v = pred(self.events)
                if v:
                    return v
                left = deadline - time.monotonic()
                assert left > 0, f"peer: timed out waiting for {what}; last events: " \
                    f"{self.events[-5:]}"
                self.cond.wait(min(left, 0.1))

    def of(self, ev, **match):
        with self.cond:
            return [e for e in self.events if e["ev"] == ev and
                    all(e.get(k) == v for k, v in match.items())]

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(5)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.reader.join(2)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def entity(gw, name):
    for e in gw.get_json("/api/entities")["entities"]:
        if e["name"] == name:
            return e
    return None


def near(a, b, tol):
    return len(a) == len(b) and all(math.isfinite(x) and abs(x - y) <= tol for x, y in zip(a, b))


def stop_clean(gw):
    """Stop the gateway with SIGTERM: exit 0 within the 1 s budget (xgtest.time_bound: scaled for
    load and the build), no sanitizer report (the Cyclone DDS participant, its threads and
    listeners are torn down with the adapter)."""
    rc, secs = gw.stop(timeout=time_bound(1.0) + 5)
    log = gw.log()
    assert rc == 0 and secs < time_bound(1.0), (rc, secs, log[-2000:])
    for bad in ("Sanitizer", "runtime error"):
        assert bad not in log, log[-4000:]


# ---- DDS Security: enclaves made with openssl (the commands of docs/adapters/dds.md) ----

GOVERNANCE_XML = """<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd">
  <domain_access_rules>
    <domain_rule>
      <domains><id_range><min>0</min><max>230</max></id_range></domains>
      <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
      <enable_join_access_control>true</enable_join_access_control>
      <discovery_protection_kind>ENCRYPT</discovery_protection_kind>
      <liveliness_protection_kind>ENCRYPT</liveliness_protection_kind>
      <rtps_protection_kind>SIGN</rtps_protection_kind>
      <topic_access_rules>
        <topic_rule>
          <topic_expression>*</topic_expression>
          <enable_discovery_protection>true</enable_discovery_protection>
          <enable_liveliness_protection>true</enable_liveliness_protection>
          <enable_read_access_control>true</enable_read_access_control>
          <enable_write_access_control>true</enable_write_access_control>
          <metadata_protection_kind>ENCRYPT</metadata_protection_kind>
          <data_protection_kind>ENCRYPT</data_protection_kind>
        </topic_rule>
      </topic_access_rules>
    </domain_rule>
  </domain_access_rules>
</dds>
"""

PERMISSIONS_XML = """<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd">
  <permissions>
    <grant name="{name}">
      <subject_name>{subject}</subject_name>
      <validity><not_before>2020-01-01T00:00:00</not_before><not_after>2036-01-01T00:00:00</not_after></validity>
      <allow_rule>
        <domains><id_range><min>{dmin}</min><max>{dmax}</max></id_range></domains>
        <publish><topics><topic>*</topic></topics></publish>
        <subscribe><topics><topic>*</topic></topics></subscribe>
      </allow_rule>
      <default>DENY</default>
    </grant>
  </permissions>
</dds>
"""


def _openssl(*args, cwd):
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, ("openssl", args, r.stderr)


class Keystore:
    """An identity CA and a permissions CA (EC P-256) in the folder `root` (a test's temporary
    folder), and enclaves signed by them: enclave(name) makes root/enclaves/<name> with the six
    files of an SROS2 enclave, its subject "CN=<name>"."""

    def __init__(self, root):
        self.root = root
        for ca in ("identity_ca", "permissions_ca"):
            _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                     "-nodes", "-days", "3650", "-subj", f"/CN=xrgate test {ca}",
                     "-keyout", f"{ca}.key.pem", "-out", f"{ca}.cert.pem", cwd=root)
        with open(os.path.join(root, "governance.xml"), "w") as f:
            f.write(GOVERNANCE_XML)

    def sign(self, xml, p7s):
        """S/MIME-sign the file `xml` into `p7s` with the permissions CA (paths under root)."""
        _openssl("smime", "-sign", "-text", "-in", xml, "-out", p7s, "-signer",
                 "permissions_ca.cert.pem", "-inkey", "permissions_ca.key.pem", cwd=self.root)

    def enclave(self, name, subject=None, domains=(0, 230), subj=None):
        """Make enclaves/<name> (subject "CN=<name>"; `subject`: the permissions' subject_name
        instead; `subj`: the certificate's subject in openssl's -subj form instead;
        `domains`: the domain ids its permissions allow, min and max); returns its absolute
        path."""
        rel = os.path.join("enclaves", name)
        d = os.path.join(self.root, rel)
        os.makedirs(d)
        _openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                 "-nodes", "-subj", subj or f"/CN={name}", "-keyout", f"{rel}/key.pem",
                 "-out", f"{rel}/req.pem", cwd=self.root)
        _openssl("x509", "-req", "-in", f"{rel}/req.pem", "-CA", "identity_ca.cert.pem",
                 "-CAkey", "identity_ca.key.pem", "-CAcreateserial", "-days", "3650",
                 "-out", f"{rel}/cert.pem", cwd=self.root)
        os.unlink(os.path.join(d, "req.pem"))
        for ca in ("identity_ca", "permissions_ca"):
            with open(os.path.join(self.root, f"{ca}.cert.pem")) as s, \
                    open(os.path.join(d, f"{ca}.cert.pem"), "w") as t:
                t.write(s.read())
        with open(os.path.join(d, "permissions.xml"), "w") as f:
            f.write(PERMISSIONS_XML.format(name=name, subject=subject or f"CN={name}",
                                           dmin=domains[0], dmax=domains[1]))
        self.sign("governance.xml", f"{rel}/governance.p7s")
        self.sign(f"{rel}/permissions.xml", f"{rel}/permissions.p7s")
        return d
