"""Integration: `xrgate --check` accepts the shipped configs and exits non-zero on each bad file in
tests/integration/configs/bad/, printing the file:line:column error named in its `# expect:` line.

Insecure settings (issue 22 item 17, `insecure()`): each is a warning with its exact text and
file:line:column (exit 0, "configuration OK (..., N insecure settings ...)"), an error under
`--strict` or `gateway.strict: true` (exit 1); normal settings (rgmp-server/vrpn-server on
0.0.0.0, LESS with client certificates, a token on loopback) give no warning. The daemon logs
the warnings at start and refuses to start under --strict. Only loopback sockets are opened:
--check binds nothing."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

from xgtest import BIN, SOURCE_DIR, adapter_types, have_adapter, skip_part


def run(args, cwd=None, env=None, input=None):
    e = dict(os.environ)
    e.pop("XRGATE_CONFIG", None)
    e.update(env or {})
    return subprocess.run([BIN] + args, cwd=cwd, env=e, capture_output=True, text=True, timeout=10,
                          input=input)


def partial_build():
    """True when the build was configured with XRGATE_ADAPTERS (some adapter folders left out)."""
    cache = os.path.join(os.environ.get("XG_BUILD_DIR", ""), "CMakeCache.txt")
    try:
        with open(cache) as f:
            for line in f:
                if line.startswith("XRGATE_ADAPTERS:"):
                    return bool(line.split("=", 1)[1].strip())
    except OSError:
        pass
    return False


def dds_built():
    """The dds adapter is optional (XRGATE_DDS=AUTO|ON|OFF): is it in this build (the binary's
    own list of adapter types)?"""
    return "dds" in adapter_types()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    partial = partial_build()
    good = [os.path.join(SOURCE_DIR, "conf", "xrgate.yaml")] + sorted(
        glob.glob(os.path.join(SOURCE_DIR, "conf", "examples", "*.yaml")))
    for path in good:
        r = run(["--check", "--config", path])
        if r.returncode and partial and "unknown adapter type" in r.stderr:
            skip_part(f"{path} needs an adapter left out of this partial build: {r.stderr}")
            continue
        if r.returncode and "unknown adapter type 'dds'" in r.stderr and not dds_built():
            skip_part(f"{path} needs the dds adapter (XRGATE_DDS, Cyclone DDS): {r.stderr}")
            continue
        assert r.returncode == 0, f"{path}: {r.stderr}"
        assert "configuration OK" in r.stdout, r.stdout
    # embedded default (no conf/ in the working directory)
    r = run(["--check"], cwd="/")
    assert r.returncode == 0 and "embedded" in r.stdout, (r.stdout, r.stderr)

    bad = sorted(glob.glob(os.path.join(here, "configs", "bad", "*.yaml")))
    assert len(bad) >= 8, bad
    for path in bad:
        with open(path) as f:
            expect = [l.split("# expect:", 1)[1].strip() for l in f if l.startswith("# expect:")]
        assert expect, f"{path}: no '# expect:' line"
        r = run(["--check", "--config", path])
        assert r.returncode != 0, f"{path}: accepted"
        want = expect[0].replace("FILE", path)
        assert want in r.stderr, f"{path}: want {want!r} in {r.stderr!r}"
        assert "configuration OK" not in r.stdout

    r = run(["--check", "--config", here])
    assert r.returncode == 1 and "cannot read: is a directory" in r.stderr, r.stderr
    r = run(["--check", "--config", "/nonexistent/x.yaml"])
    assert r.returncode != 0 and "/nonexistent/x.yaml: cannot open" in r.stderr, r.stderr
    r = run(["--sdp", "demo"], cwd="/")
    assert r.returncode == 1 and "this adapter has no session description" in r.stderr, r.stderr
    r = run(["--sdp", "nope"], cwd="/")
    assert r.returncode == 1 and "no adapter named 'nope'" in r.stderr, r.stderr
    r = run(["--bogus"])
    assert r.returncode == 2
    r = run(["--version"])
    assert r.returncode == 0 and r.stdout.startswith("xrgate "), r.stdout
    commit_outside_checkout()
    # issue 34 item 12: the commit on a line of its own (a hex commit, or unknown)
    lines = r.stdout.splitlines()
    assert len(lines) == 2 and re.fullmatch(r"commit ([0-9a-f]{7,40}|unknown)",
                                            lines[1]), r.stdout
    r = run(["--check", "--log-level", "shouty"], cwd="/")
    assert r.returncode != 0 and "log level 'shouty'" in r.stderr, r.stderr
    every_error()
    insecure()
    print(f"--check: {len(good)} good, {len(bad)} bad files, insecure settings: ok")
    return 0


def commit_outside_checkout():
    """cmake/commit.cmake (the commit of --version and xrgate_build_info) outside a git checkout:
    "unknown"."""
    cmake, git = shutil.which("cmake"), shutil.which("git")
    if not cmake:
        skip_part("cmake not found: the commit script is not checked")
        return
    d = tempfile.mkdtemp(prefix="xrgate-commit-")
    try:
        out = os.path.join(d, "c.c")
        subprocess.run([cmake, f"-DSRC={d}", f"-DOUT={out}", f"-DGIT={git or ''}", "-P",
                        os.path.join(SOURCE_DIR, "cmake", "commit.cmake")], check=True,
                       capture_output=True, timeout=30)
        with open(out) as f:
            assert 'xg_build_commit[] = "unknown";' in f.read()
    finally:
        shutil.rmtree(d)


def every_error():
    """Issue 34 item 10: --check lists every error of the file (each file:line:col, exit 1), the
    first on the first line as before, then a count; a misspelt required key gets both its
    required-key error and the did-you-mean."""
    d = tempfile.mkdtemp(prefix="xrgate-check-")
    try:
        path = os.path.join(d, "two.yaml")
        with open(path, "w") as f:
            f.write("gateway:\n  predict: {max_horizon_ms: -5}\n"
                    "adapters:\n  - {name: s, type: synth, rate_hx: 100}\n")
        r = run(["--check", "--config", path])
        assert r.returncode == 1, (r.returncode, r.stderr)
        assert r.stderr.splitlines() == [
            f"xrgate: {path}:2:29: 'max_horizon_ms' = -5 is out of range [0, 10000]",
            f"xrgate: {path}:4:28: unknown key 'rate_hx' (did you mean 'rate_hz'?)",
            f"xrgate: 2 errors in {path}"], r.stderr
        assert "configuration OK" not in r.stdout
        if have_type("vrpn-client", "did-you-mean of a required key"):
            with open(path, "w") as f:
                f.write("adapters:\n  - name: v\n    type: vrpn-client\n"
                        "    devcies: [Tracker0@localhost]\n")
            r = run(["--check", "--config", path])
            lines = r.stderr.splitlines()
            assert r.returncode == 1 and len(lines) == 3, (r.returncode, r.stderr)
            assert lines[0].startswith(f"xrgate: {path}:2:5: vrpn-client: 'devices' is required")
            assert lines[1] == (f"xrgate: {path}:4:5: unknown key 'devcies' "
                                "(did you mean 'devices'?)"), r.stderr
    finally:
        shutil.rmtree(d)


ADMIN_NO_TOKEN = ("admin API on the non-loopback address '{}' without a token: anyone who can "
                  "reach it can read every pose (set admin.token_file or XRGATE_ADMIN_TOKEN, or "
                  "listen on 127.0.0.1)")
ADMIN_PLAIN = ("admin API on the non-loopback address '{}' over plain HTTP: the bearer token "
               "crosses the network in clear text (set admin.tls, or put a TLS proxy in front and "
               "listen on 127.0.0.1)")
READABLE = ("{} '{}' is readable by every user on this host (mode 0644): chmod 600 it (or 640 "
            "with a group the gateway runs in)")
LESS_LISTENER = ("less adapter 'l': signature: none on the TLS listener '0.0.0.0:0' without client "
                 "certificates (tls.ca{}): any client that completes the handshake can inject "
                 "entities (set tls.ca to require client certificates, or use key_file)")
LESS_NO_VERIFY = ("less adapter 'l': tls.verify: false with signature: none: the peer "
                  "'192.0.2.7:7000' is not authenticated, anyone in the path can read and inject "
                  "entities (set tls.ca with verify: true, or use key_file)")
LESS_FORCED = ("less adapter 'l': signature: none on the non-loopback, non-TLS address "
               "'0.0.0.0:0' (forced by insecure: true): anyone who can reach it can inject entities")


NO_ADAPTERS = ("no adapters configured: the gateway reads and serves no pose data, only its admin "
               "API (add entries under 'adapters:')")


def check_warnings(d, name, text, warnings, env=None):
    """--check FILE: exit 0 with exactly `warnings` ((line, col, message) or (origin, message));
    --check --strict: exit 1 with the same lines as errors."""
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    want = [f"{path}:{w[0]}:{w[1]}: {w[2]}" if len(w) == 3 else f"{w[0]}: {w[1]}"
            for w in warnings]
    r = run(["--check", "--config", path], env=env)
    # (a file without adapters also gets the "no adapters configured" warning: not insecure)
    got = [l for l in r.stderr.splitlines() if l.startswith("xrgate: warning: insecure ")]
    assert r.returncode == 0, (name, r.returncode, r.stderr)
    assert got == [f"xrgate: warning: insecure configuration: {w}" for w in want], (name, got)
    n = len(warnings)
    tail = f", {n} insecure setting{'s' if n > 1 else ''}: see the warnings)" if n else ")"
    assert r.stdout.strip().endswith(tail), (name, r.stdout)
    r = run(["--check", "--strict", "--config", path], env=env)
    if not warnings:
        rest = [l for l in r.stderr.splitlines() if not l.endswith(NO_ADAPTERS)]
        assert r.returncode == 0 and not rest, (name, r.stderr)
        return
    assert r.returncode == 1, (name, r.returncode, r.stdout, r.stderr)
    assert r.stderr.splitlines() == [f"xrgate: error: insecure configuration: {w}" for w in want] + [
        f"xrgate: strict mode (--strict): {n} insecure setting{'s' if n > 1 else ''} refused, "
        "see above"], (name, r.stderr)
    assert "configuration OK" not in r.stdout


def have_type(t, part=None):
    """True when this build has adapter type t (partial builds leave some out); when not, the
    part is left out (xgtest.have_adapter: under CI=true a failure naming t)."""
    return have_adapter(t, part)


def insecure():
    d = tempfile.mkdtemp(prefix="xrgate-check-")
    try:
        tok = os.path.join(d, "token")
        with open(tok, "w") as f:
            f.write("s3cret\n")
        os.chmod(tok, 0o600)
        # admin API: 0.0.0.0 / [::] / a LAN address without a token; with a token but plain HTTP
        for listen in ("0.0.0.0:8080", "[::]:8080", "192.0.2.1:8080"):
            check_warnings(d, "admin.yaml", f'gateway:\n  admin:\n    listen: "{listen}"\n',
                           [(3, 13, ADMIN_NO_TOKEN.format(listen))])
        check_warnings(d, "admin-token.yaml",
                       f'gateway:\n  admin:\n    listen: "0.0.0.0:8080"\n    token_file: {tok}\n',
                       [(3, 13, ADMIN_PLAIN.format("0.0.0.0:8080"))])
        for listen in ("127.0.0.1:8080", "localhost:8080", "[::1]:8080", "off"):
            check_warnings(d, "admin-ok.yaml", f'gateway:\n  admin:\n    listen: "{listen}"\n', [])
        # the container image's default: XRGATE_ADMIN_LISTEN=0.0.0.0:8080 and no token
        check_warnings(d, "env.yaml", "adapters: []\n",
                       [("XRGATE_ADMIN_LISTEN", ADMIN_NO_TOKEN.format("0.0.0.0:8080"))],
                       env={"XRGATE_ADMIN_LISTEN": "0.0.0.0:8080"})
        check_warnings(d, "env.yaml", "adapters: []\n", [],
                       env={"XRGATE_ADMIN_LISTEN": "127.0.0.1:8080", "XRGATE_ADMIN_TOKEN": "t"})
        # a secret file every local user can read
        os.chmod(tok, 0o644)
        check_warnings(d, "token-mode.yaml", f"gateway:\n  admin:\n    token_file: {tok}\n",
                       [(3, 17, READABLE.format("admin.token_file", tok))])
        os.chmod(tok, 0o640)  # group-readable is a legitimate deployment: no warning
        check_warnings(d, "token-mode.yaml", f"gateway:\n  admin:\n    token_file: {tok}\n", [])
        # gateway.strict: true refuses like --strict, naming the key
        path = os.path.join(d, "strict.yaml")
        with open(path, "w") as f:
            f.write('gateway:\n  strict: true\n  admin:\n    listen: "0.0.0.0:8080"\n')
        r = run(["--check", "--config", path])
        assert r.returncode == 1 and r.stderr.splitlines() == [
            f"xrgate: error: insecure configuration: {path}:4:13: "
            + ADMIN_NO_TOKEN.format("0.0.0.0:8080"),
            "xrgate: strict mode (gateway.strict: true): 1 insecure setting refused, see above"], \
            r.stderr
        # protocols without security of their own on 0.0.0.0 are normal: no warning
        ads = [t for t in ("vrpn-server", "rgmp-server") if have_type(t, "insecure servers")]
        if ads:
            check_warnings(d, "servers.yaml", "adapters:\n" + "".join(
                f'  - {{name: s{i}, type: {t}, listen: "0.0.0.0:0"}}\n'
                for i, t in enumerate(ads)), [])
        if have_type("less", "LESS insecure cases"):
            insecure_less(d)
        insecure_daemon(d, tok)
    finally:
        shutil.rmtree(d)


def insecure_less(d):
    if not shutil.which("openssl"):
        skip_part("openssl CLI not found: LESS TLS insecure cases left out")
        return
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", f"{d}/s.key", "-out",
                    f"{d}/s.crt", "-subj", "/CN=localhost", "-days", "2"],
                   check=True, capture_output=True)
    os.chmod(f"{d}/s.key", 0o600)
    head = "adapters:\n  - name: l\n    type: less\n"
    tls = f"    tls: {{cert: {d}/s.crt, key: {d}/s.key"
    # a TLS listener without client certificates, unsigned: 5:16 is the value of signature:
    check_warnings(d, "less1.yaml", head + '    mode: listen\n    listen: "0.0.0.0:0"\n'
                   + "    signature: none\n" + tls + "}\n",
                   [(6, 16, LESS_LISTENER.format(""))])
    check_warnings(d, "less2.yaml", head + '    mode: listen\n    listen: "0.0.0.0:0"\n'
                   + "    signature: none\n" + tls + f", ca: {d}/s.crt, verify: false}}\n",
                   [(6, 16, LESS_LISTENER.format(" with verify: true"))])
    # with client certificates required (ca, verify: true): no warning
    check_warnings(d, "less3.yaml", head + '    mode: listen\n    listen: "0.0.0.0:0"\n'
                   + "    signature: none\n" + tls + f", ca: {d}/s.crt}}\n", [])
    # the same listener on loopback: only local processes can connect
    check_warnings(d, "less4.yaml", head + '    mode: listen\n    listen: "127.0.0.1:0"\n'
                   + "    signature: none\n" + tls + "}\n", [])
    # connect with tls.verify: false and no signature: the peer is anyone in the path
    check_warnings(d, "less5.yaml", head + '    connect: "192.0.2.7:7000"\n    signature: none\n'
                   + "    tls: {verify: false}\n", [(6, 19, LESS_NO_VERIFY)])
    # forced with insecure: true off loopback without TLS
    check_warnings(d, "less6.yaml", head + '    mode: udp\n    bind: "0.0.0.0:0"\n'
                   + "    signature: none\n    insecure: true\n", [(7, 15, LESS_FORCED)])
    # a world-readable signing key (relative paths are relative to the config file)
    with open(f"{d}/k.hex", "w") as f:
        f.write("00112233445566778899aabbccddeeff\n")
    os.chmod(f"{d}/k.hex", 0o644)
    check_warnings(d, "less7.yaml", head + '    connect: "127.0.0.1:7000"\n    key_file: k.hex\n',
                   [(5, 15, READABLE.format("key_file", f"{d}/k.hex"))])
    os.chmod(f"{d}/k.hex", 0o600)
    check_warnings(d, "less7.yaml", head + '    connect: "127.0.0.1:7000"\n    key_file: k.hex\n',
                   [])


def insecure_daemon(d, tok):
    """The daemon logs each warning at start (on loopback: a world-readable token file) and, under
    --strict, exits 1 before binding anything."""
    from xgtest import Gateway
    os.chmod(tok, 0o644)
    text = f"gateway:\n  admin:\n    token_file: {tok}\n"
    with Gateway(text) as gw:
        want = ("warn  [gateway] insecure configuration: "
                f"{gw.tmp.name}/xrgate.yaml:3:17: " + READABLE.format("admin.token_file", tok))
        assert gw.wait_log("running with 0 adapter(s)"), gw.log()
        assert want in gw.log(), gw.log()
        # before the adapters start (a line after it would be too late for a log collector)
        assert gw.log().index(want) < gw.log().index("running with"), gw.log()
    path = os.path.join(d, "daemon.yaml")
    with open(path, "w") as f:
        f.write(text)
    r = run(["--strict", "--config", path], env={"XRGATE_ADMIN_LISTEN": "127.0.0.1:0"})
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert r.stderr.splitlines() == [
        f"xrgate: error: insecure configuration: {path}:3:17: "
        + READABLE.format("admin.token_file", tok),
        "xrgate: strict mode (--strict): 1 insecure setting refused, see above"], r.stderr
    assert "listening" not in r.stderr


if __name__ == "__main__":
    sys.exit(main())
