"""Integration: DDS Security on the dds adapter (`security: {enclave: DIR}`, SROS2 enclaves made
here with openssl, no keys in the repository). A peer holding an enclave signed by the same CAs
reads the gateway's /tf, and its transforms reach the entity table; a peer without credentials
on the same domain discovers nothing, receives nothing and injects nothing; a governance
document altered after signing is refused at start naming the file; permissions that do not
allow the domain are refused by Cyclone DDS at start, with an error naming the enclave.
Loopback only, private domain ids (ddslib)."""
import os
import shutil
import subprocess
import tempfile
import time

from xgtest import BIN, Gateway, skip, time_bound
import ddslib as dl


def config(domain_id, enclave, extra=""):
    return f"""
adapters:
  - name: demo
    type: synth
    bodies: 1
    hands: false
  - name: ros
    type: dds
    domain_id: {domain_id}
    rate_hz: 50
    security:
      enclave: {enclave}
{extra}"""


def secured_and_open(ks, tmp):
    d = dl.domain()
    # the gateway's subject as ROS 2 names enclaves (CN=/xrgate), with more attributes, and
    # its permissions naming them in another order (the same subject to --check and Cyclone)
    gw_enclave = ks.enclave("xrgate", subj="/C=NL/O=lab/CN=\\/xrgate",
                            subject="CN=/xrgate,O=lab,C=NL")
    peer_enclave = ks.enclave("peer")
    # secure discovery and the authentication handshake take a few seconds more than plain DDS
    limit = time_bound(20.0)
    # the network (loopback only) from config_file, not CYCLONEDDS_URI: the security settings
    # leave it in force (without it the gateway would not discover the loopback-only peers)
    xml = os.path.join(tmp, "cyclone.xml")
    with open(xml, "w") as f:
        f.write(dl.CYCLONE_XML)
    with Gateway(config(d, gw_enclave, f"    config_file: {xml}\n"),
                 env={"CYCLONEDDS_URI": ""}) as g, \
            dl.Peer(d, peer_enclave) as p, dl.Peer(d) as u:
        assert g.wait_log(f"[ros] ROS 2 over Cyclone DDS on domain {d}: publishes rt/tf, "
                          f"reads rt/tf, 0 PoseStamped topics read, qos sensor_data "
                          f"(config_file), DDS Security enclave {gw_enclave}"), g.log()
        assert g.adapter("ros")["peer"] == f"DDS domain {d} (DDS Security)", \
            g.adapter("ros")
        p.send("sub tf")
        u.send("sub tf")
        # the secured peer reads the gateway's /tf
        p.wait(lambda evs: [e for e in evs if e["ev"] == "tf" and e["child"] == "demo/head"],
               limit, "the gateway's /tf at the secured peer")
        # both peers publish a transform until the secured one's is an entity (best effort:
        # resent, a sample before the writers matched is lost)
        deadline = time.monotonic() + limit
        while not dl.entity(g, "ros/secured"):
            assert time.monotonic() < deadline, f"the secured peer's transform never came:\n" \
                f"{g.log()[-3000:]}"
            p.send("tf world secured 1 2 3 0 0 0 1 -1 0")
            u.send("tf world intruder 4 5 6 0 0 0 1 -1 0")
            time.sleep(0.05)
        e = dl.entity(g, "ros/secured")
        assert dl.near(e["position"], [1, 3, -2], 1e-6) and e["origin"] == "ros", e
        # more from the open peer, then a marker from the secured one: once the marker is in,
        # the open peer's samples before it have had every chance to arrive too
        for _ in range(20):
            u.send("tf world intruder 4 5 6 0 0 0 1 -1 0")
        deadline = time.monotonic() + limit
        while not dl.entity(g, "ros/marker"):
            assert time.monotonic() < deadline, f"no marker:\n{g.log()[-3000:]}"
            p.send("tf world marker 0 0 0 0 0 0 1 -1 0")
            time.sleep(0.05)
        names = [x["name"] for x in g.get_json("/api/entities")["entities"]]
        assert not [n for n in names if "intruder" in n], names
        # the open peer got no sample (but its own, delivered locally) and did not even discover
        # the gateway's writers
        got = [e for e in u.of("tf") if e["child"] != "intruder"]
        assert not got and u.of("tf", child="intruder"), (got[:3], u.events[-3:])
        assert not u.of("publication"), u.of("publication")[:3]
        assert p.of("publication", topic="rt/tf"), p.events[-5:]
        dl.stop_clean(g)


def run_refused(tmp, name, enclave):
    """The daemon with `enclave` on a fresh domain: exit 1 at start; returns its output."""
    path = os.path.join(tmp, f"{name}.yaml")
    with open(path, "w") as f:
        f.write("gateway:\n  admin:\n    listen: \"off\"\n" + config(dl.domain(), enclave))
    env = dict(os.environ)
    env.update(dl.ENV)
    r = subprocess.run([BIN, "--config", path], capture_output=True, text=True, env=env,
                       timeout=time_bound(10.0) + 10)
    out = r.stdout + r.stderr
    assert r.returncode == 1 and "configuration OK" not in out, (r.returncode, out)
    return out, path


def tampered(ks, tmp):
    """governance.p7s changed after signing (SIGN → NONE): refused when the configuration is
    loaded (the S/MIME signature check), the daemon exits 1 naming the file and the reason."""
    enclave = os.path.join(tmp, "tampered")
    shutil.copytree(os.path.join(ks.root, "enclaves", "xrgate"), enclave)
    gov = os.path.join(enclave, "governance.p7s")
    with open(gov) as f:
        text = f.read()
    assert "<rtps_protection_kind>SIGN<" in text
    with open(gov, "w") as f:
        f.write(text.replace("<rtps_protection_kind>SIGN<", "<rtps_protection_kind>NONE<"))
    out, path = run_refused(tmp, "tampered", enclave)
    assert f"{path}:15:16: security: '{gov}' is not signed by the permissions CA " \
        f"'{enclave}/permissions_ca.cert.pem': the document was changed after it was signed " \
        "(its digest differs from the signed one)" in out, out


def not_granted(ks, tmp):
    """Permissions, correctly signed, that allow only domains 0..5: what the enclave check
    cannot know is Cyclone's to refuse when the participant is created — the adapter's start
    fails with an error naming the enclave after Cyclone's own reason, and the daemon exits 1."""
    enclave = ks.enclave("elsewhere", domains=(0, 5))
    out, _ = run_refused(tmp, "elsewhere", enclave)
    assert f"[ros] Cyclone DDS refused the DDS Security enclave '{enclave}'" in out, out
    assert "participant denied" in out, out
    assert "adapter 'ros' (dds) failed to start" in out, out


def main():
    dl.require()
    if not shutil.which("openssl"):
        skip("openssl is needed to make the test enclaves")
    if not dl.PLUGINS:
        skip("Cyclone DDS's security plugins (libddsc0debian/libdds_security_*.so) are missing")
    with tempfile.TemporaryDirectory(prefix="xrgate-dds-sec-") as tmp:
        ks = dl.Keystore(tmp)
        secured_and_open(ks, tmp)
        tampered(ks, tmp)
        not_granted(ks, tmp)
    print("ok")


if __name__ == "__main__":
    main()
