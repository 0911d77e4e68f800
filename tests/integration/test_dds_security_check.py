"""Integration: `xrgate --check` validates a dds adapter's `security.enclave` (an SROS2 enclave,
made here with openssl) with a file:line:column error and the rule broken: a missing enclave or
file, a file that is not a regular file, a key that is not the certificate's, a certificate of
another identity CA, a permissions document without a grant for the certificate's subject or
with a spaced <subject_name>, a document that is not S/MIME signed, changed after signing or
signed by another CA. A private key readable by every user is a warning. A valid enclave
(relative to the configuration's folder) passes without warning; a dds adapter without
`security` gets the open-domain warning, an error under --strict. No DDS traffic."""
import os
import shutil
import subprocess
import tempfile

from xgtest import BIN, skip
import ddslib as dl

WARNING = ("dds adapter 'ros' without security: its DDS domain is open, any participant that "
           "discovery reaches can read every pose and inject transforms (set security.enclave "
           "to an SROS2 enclave, see docs/adapters/dds.md)")


def check(tmp, body, *args):
    path = os.path.join(tmp, "x.yaml")
    with open(path, "w") as f:
        f.write("adapters:\n  - name: ros\n    type: dds\n" + body)
    r = subprocess.run([BIN, "--check", *args, "--config", path], capture_output=True,
                       text=True, timeout=30)
    return r.returncode, (r.stdout + r.stderr).replace(path, "x.yaml")


def enclave_conf(path):
    return f"    security:\n      enclave: {path}\n"


def variant(ks, tmp, name, change):
    """A copy of the enclave 'xrgate' with one change(dir) applied."""
    d = os.path.join(tmp, name)
    shutil.copytree(os.path.join(ks.root, "enclaves", "xrgate"), d)
    change(d)
    return d


def main():
    dl.require()
    if not shutil.which("openssl"):
        skip("openssl is needed to make the test enclaves")
    with tempfile.TemporaryDirectory(prefix="xrgate-dds-seccheck-") as tmp:
        os.mkdir(os.path.join(tmp, "ks"))
        ks = dl.Keystore(os.path.join(tmp, "ks"))
        good = ks.enclave("xrgate")
        peer = ks.enclave("peer")
        stranger = ks.enclave("stranger", subject="CN=someone else")
        other_root = os.path.join(tmp, "other")
        os.mkdir(other_root)
        other = dl.Keystore(other_root).enclave("xrgate")

        # valid: no error, and no open-domain warning; a relative enclave is resolved against
        # the configuration's folder
        rc, out = check(tmp, enclave_conf(os.path.relpath(good, tmp)))
        assert rc == 0 and "configuration OK" in out and "insecure" not in out, out
        rc, out = check(tmp, enclave_conf(good), "--strict")
        assert rc == 0, out

        def edit(d, f, old, new):
            with open(os.path.join(d, f)) as fh:
                text = fh.read()
            assert old in text, (f, old)
            with open(os.path.join(d, f), "w") as fh:
                fh.write(text.replace(old, new, 1))

        def rm(f):
            return lambda d: os.unlink(os.path.join(d, f))

        def copy_from(src, f):
            return lambda d: shutil.copy(os.path.join(src, f), os.path.join(d, f))

        def as_dir(f):
            return lambda d: (os.unlink(os.path.join(d, f)), os.mkdir(os.path.join(d, f)))

        def plain_xml(f, xml):
            return lambda d: shutil.copy(os.path.join(ks.root, xml), os.path.join(d, f))

        cases = [
            (os.path.join(tmp, "nowhere"), "security: enclave '{dir}': No such file or directory"),
            (variant(ks, tmp, "no-perm", rm("permissions.p7s")),
             "security: enclave '{dir}': permissions.p7s: No such file or directory"),
            (variant(ks, tmp, "no-ca", rm("identity_ca.cert.pem")),
             "security: enclave '{dir}': identity_ca.cert.pem: No such file or directory"),
            (variant(ks, tmp, "dir-gov", as_dir("governance.p7s")),
             "security: enclave '{dir}': governance.p7s: not a regular file (a directory)"),
            (variant(ks, tmp, "wrong-key", copy_from(peer, "key.pem")),
             "security: the key '{dir}/key.pem' is not the key of the certificate "
             "'{dir}/cert.pem'"),
            (variant(ks, tmp, "other-ca", lambda d: (copy_from(other, "cert.pem")(d),
                                                     copy_from(other, "key.pem")(d))),
             "security: the certificate '{dir}/cert.pem' does not verify against the identity "
             "CA '{dir}/identity_ca.cert.pem': The certificate is not correctly signed by the "
             "trusted CA"),
            (stranger, "security: no grant of '{dir}/permissions.p7s' is for the identity's "
             "subject 'CN=stranger' (cert.pem); the first grant's <subject_name> is "
             "'CN=someone else'"),
            (ks.enclave("spaced", subj="/O=lab/CN=spaced", subject="CN=spaced, O=lab"),
             "security: the <subject_name> 'CN=spaced, O=lab' of '{dir}/permissions.p7s' has "
             "spaces around ',' or '=': Cyclone DDS compares it as it is written and refuses it "
             "(write it without those spaces)"),
            (variant(ks, tmp, "gov-unsigned", plain_xml("governance.p7s", "governance.xml")),
             "security: '{dir}/governance.p7s' is not an S/MIME signed governance document"),
            (variant(ks, tmp, "perm-unsigned", lambda d: shutil.copy(
                os.path.join(d, "permissions.xml"), os.path.join(d, "permissions.p7s"))),
             "security: '{dir}/permissions.p7s' is not an S/MIME signed document"),
            (variant(ks, tmp, "gov-changed", lambda d: edit(d, "governance.p7s", "ENCRYPT<",
                                                            "NONE<")),
             "security: '{dir}/governance.p7s' is not signed by the permissions CA "
             "'{dir}/permissions_ca.cert.pem': the document was changed after it was signed "
             "(its digest differs from the signed one)"),
            (variant(ks, tmp, "perm-changed", lambda d: edit(d, "permissions.p7s", "<max>230<",
                                                             "<max>232<")),
             "security: '{dir}/permissions.p7s' is not signed by the permissions CA "
             "'{dir}/permissions_ca.cert.pem': the document was changed after it was signed"),
            (variant(ks, tmp, "gov-other-ca", copy_from(other, "governance.p7s")),
             "security: '{dir}/governance.p7s' is not signed by the permissions CA "
             "'{dir}/permissions_ca.cert.pem': the signature does not verify with the "
             "permissions CA's key"),
            (variant(ks, tmp, "key-garbage", lambda d: open(os.path.join(d, "key.pem"), "w")
                     .close()),
             "security: '{dir}/key.pem' is not an unencrypted private key"),
        ]
        for path, want in cases:
            rc, out = check(tmp, enclave_conf(path))
            want = "x.yaml:5:16: " + want.format(dir=path)
            assert rc == 1 and want in out, (want, rc, out)
            assert "configuration OK" not in out, out

        rc, out = check(tmp, "    security: {}\n")
        assert rc == 1 and "x.yaml:4:15: security: enclave (the folder of an SROS2 enclave) " \
            "is required" in out, out
        rc, out = check(tmp, f"    security: {{enclave: {good}, keystore: y}}\n")
        assert rc == 1 and "unknown key 'keystore'" in out, out

        # a private key every local user can read: a warning at enclave (the key's mode)
        loose = variant(ks, tmp, "loose-key", lambda d: os.chmod(os.path.join(d, "key.pem"),
                                                                0o644))
        rc, out = check(tmp, enclave_conf(loose))
        assert rc == 0 and "xrgate: warning: insecure configuration: x.yaml:5:16: " \
            f"security.enclave: the private key '{loose}/key.pem' is readable by every user on " \
            "this host (mode 0644)" in out, out

        # no security: an open domain, a warning (exit 0), an error under --strict
        rc, out = check(tmp, "    domain_id: 7\n")
        assert rc == 0 and f"xrgate: warning: insecure configuration: x.yaml:3:11: {WARNING}" \
            in out, out
        rc, out = check(tmp, "    domain_id: 7\n", "--strict")
        assert rc == 1 and f"xrgate: error: insecure configuration: x.yaml:3:11: {WARNING}" \
            in out and "strict mode (--strict): 1 insecure setting refused" in out, out
    print("ok")


if __name__ == "__main__":
    main()
