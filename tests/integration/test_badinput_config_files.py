"""Bad input, configuration files (issue 30 item 7): every file the configuration names must be a
regular file. A FIFO (or a device, a directory) named as the configuration, the admin token, a
TLS certificate or key, gateway.resolv_conf, a BVH take, a LESS key_file or schema, an SRTP
key_file or the dds adapter's Cyclone config_file is a `file:line:col` error of `xrgate --check`
(exit 1) and of start-up, at once: before the fix, opening a FIFO blocked --check and start-up
forever without a log line. A token file whose first line is only whitespace is an error too
(every request would otherwise get 401). The FIFOs never get a writer: a run that opens one
blocks, and the 10 s timeout of subprocess.run fails the test."""
import os
import subprocess
import tempfile

from xgtest import BIN, SOURCE_DIR

SYNTH = "adapters:\n  - {name: demo, type: synth}\n"


def check(d, text, want, name="x.yaml"):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    e = dict(os.environ)
    e.pop("XRGATE_CONFIG", None)
    e.pop("XRGATE_ADMIN_TOKEN", None)
    r = subprocess.run([BIN, "--check", "--config", path], capture_output=True, text=True,
                       timeout=10, env=e, cwd=d)
    assert r.returncode == 1, (text, r.returncode, r.stdout, r.stderr)
    want = want.replace("FILE", path)
    assert want in r.stderr, (want, r.stderr)
    assert "configuration OK" not in r.stdout
    return r.stderr


def dds_built():
    r = subprocess.run([BIN, "--check", "--config", "/dev/stdin"], capture_output=True, text=True,
                       timeout=10, input="adapters:\n  - {name: x, type: dds}\n")
    return r.returncode == 0


def test_fifos_are_config_errors():
    with tempfile.TemporaryDirectory() as d:
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        nf = "not a regular file (a FIFO)"
        cases = [
            (f"gateway:\n  admin:\n    token_file: {fifo}\n" + SYNTH,
             f"FILE:3:17: cannot read token_file '{fifo}': {nf}"),
            (f"gateway:\n  resolv_conf: {fifo}\n" + SYNTH,
             f"FILE:2:16: resolv_conf '{fifo}': {nf}"),
            ("gateway:\n  resolv_conf: fifo\n" + SYNTH,  # relative to the config's folder
             f"FILE:2:16: resolv_conf '{fifo}': {nf}"),
            (f"gateway:\n  resolv_conf: {d}\n" + SYNTH,
             "not a regular file (a directory)"),
            (f"gateway:\n  resolv_conf: /dev/null\n" + SYNTH,
             "not a regular file (a character device)"),
            (f"gateway:\n  admin:\n    tls: {{cert: {fifo}, key: {fifo}}}\n" + SYNTH,
             f"TLS certificate '{fifo}': {nf}"),
            (f"adapters:\n  - {{name: take, type: bvh, file: {fifo}}}\n", nf),
            (f"adapters:\n  - name: sim\n    type: less\n    mode: udp\n    bind: 127.0.0.1:0\n"
             f"    key_file: {fifo}\n", f"FILE:6:15: key_file '{fifo}': {nf}"),
            (f"adapters:\n  - name: game\n    type: rtp\n    bind: 127.0.0.1:0\n    srtp:\n"
             f"      key_file: {fifo}\n", f"key file '{fifo}': {nf}"),
        ]
        if dds_built():
            cases.append((f"adapters:\n  - {{name: ros, type: dds, config_file: {fifo}}}\n",
                          f"config_file '{fifo}': {nf}"))
        for text, want in cases:
            check(d, text, want)
        # the configuration itself
        e = dict(os.environ)
        e.pop("XRGATE_CONFIG", None)
        r = subprocess.run([BIN, "--check", "--config", fifo], capture_output=True, text=True,
                           timeout=10, env=e)
        assert r.returncode != 0 and f"{fifo}: cannot open: {nf}" in r.stderr, r
        # start-up fails the same way, with the same line, instead of hanging
        r = subprocess.run([BIN, "--config", os.path.join(d, "x.yaml")], capture_output=True,
                           text=True, timeout=10, env=e, cwd=d)
        assert r.returncode != 0, r


def test_whitespace_token_is_an_error():
    with tempfile.TemporaryDirectory() as d:
        for content in [b" \n", b"\t  \r\nsecret\n", b"   "]:
            tok = os.path.join(d, "token")
            with open(tok, "wb") as f:
                f.write(content)
            os.chmod(tok, 0o600)
            check(d, f"gateway:\n  admin:\n    token_file: {tok}\n" + SYNTH,
                  f"FILE:3:17: token_file '{tok}': the first line (the token) is only whitespace")
        # a token with spaces inside is still a token
        with open(tok, "w") as f:
            f.write("two words\n")
        path = os.path.join(d, "ok.yaml")
        with open(path, "w") as f:
            f.write(f"gateway:\n  admin:\n    token_file: {tok}\n" + SYNTH)
        r = subprocess.run([BIN, "--check", "--config", path], capture_output=True, text=True,
                           timeout=10)
        assert r.returncode == 0, r


def test_stdin_config_still_works():
    r = subprocess.run([BIN, "--check", "--config", "/dev/stdin"], capture_output=True, text=True,
                       timeout=10, input=SYNTH)
    assert r.returncode == 0, r


if __name__ == "__main__":
    assert os.path.isdir(SOURCE_DIR)
    test_fifos_are_config_errors()
    test_whitespace_token_is_an_error()
    test_stdin_config_still_works()
    print("ok")
