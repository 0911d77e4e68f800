"""Integration: the command line and the messages a user reads first (issue 17 item 10), with
exact texts:
- `--help` lists every option the parser accepts (each long option of main.c's table);
- the start-up log names the configuration: the file and where its name came from (--config,
  XRGATE_CONFIG, conf/xrgate.yaml in the working directory), or the embedded default;
- a configuration without adapters: a warning at the `adapters:` key (--check and at start);
- an unknown key gets "did you mean" the nearest key the section accepts (`rate_hx` ->
  `rate_hz`), and none when nothing is near;
- a VRPN device the server never answers for: the warning lists the names the server offers;
- SRTP key files others can read: one warning per file, naming it and its key.
Only loopback sockets."""
import os
import re
import subprocess
import sys
import tempfile

from faultlib import ListeningPeer, VrpnPeer, pump_reads, vrpn_desc, vrpn_setup
from xgtest import BIN, SOURCE_DIR, Gateway


def run(args, cwd=None, env=None):
    e = dict(os.environ)
    e.pop("XRGATE_CONFIG", None)
    e.update(env or {})
    return subprocess.run([BIN] + args, cwd=cwd, env=e, capture_output=True, text=True, timeout=10)


def write(d, name, text):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def help_lists_every_option():
    r = run(["--help"])
    assert r.returncode == 0, r.stderr
    with open(os.path.join(SOURCE_DIR, "gateway", "main.c")) as f:
        longopts = re.findall(r'\{"([a-z-]+)", (?:no|required|optional)_argument', f.read())
    assert len(longopts) >= 10, longopts
    for name in longopts:
        assert f"--{name}" in r.stdout, f"--help omits --{name}:\n{r.stdout}"
    for line in ("  -u, --user NAME       drop root privileges to user NAME once every socket is "
                 "bound", "      --sdp ADAPTER     print the SDP session description of an rtp "
                 "adapter and exit", "      --healthcheck [[http://|https://]HOST:PORT]"):
        assert line in r.stdout, r.stdout
    print(f"--help: all {len(longopts)} options listed")


def config_source_logged(d):
    cfg = write(d, "src.yaml", "adapters:\n  - {name: demo, type: synth}\n")
    with Gateway(None, args=["--config", cfg]) as gw:
        assert gw.wait_log(f"info  [gateway] configuration: file '{cfg}' (--config)"), gw.log()
    with Gateway(None, env={"XRGATE_CONFIG": cfg}) as gw:
        assert gw.wait_log(f"info  [gateway] configuration: file '{cfg}' (XRGATE_CONFIG)"), gw.log()
    work = os.path.join(d, "work")
    os.makedirs(os.path.join(work, "conf"))
    write(work, "conf/xrgate.yaml", "adapters:\n  - {name: demo, type: synth}\n")
    with Gateway(None, cwd=work) as gw:
        real = os.path.realpath(os.path.join(work, "conf", "xrgate.yaml"))
        assert gw.wait_log("info  [gateway] configuration: file 'conf/xrgate.yaml' (found in the "
                           f"working directory; {real})"), gw.log()
    with Gateway(None) as gw:  # its working directory has no conf/
        assert gw.wait_log("info  [gateway] configuration: embedded default config (no --config, "
                           "no XRGATE_CONFIG, no conf/xrgate.yaml in the working directory)"), gw.log()
        assert "no adapters configured" not in gw.log(), gw.log()
    print("start-up log: names the file and its origin, or the embedded default")


def no_adapters_warned(d):
    what = ("no adapters configured: the gateway reads and serves no pose data, only its admin "
            "API (add entries under 'adapters:')")
    empty = write(d, "empty.yaml", "gateway:\n  id: lonely\nadapters: []\n")
    r = run(["--check", "--config", empty])
    assert r.returncode == 0 and "configuration OK (0 adapters)" in r.stdout, (r.stdout, r.stderr)
    assert r.stderr == f"xrgate: warning: {empty}:3:1: {what}\n", r.stderr
    none = write(d, "none.yaml", "gateway:\n  id: lonely\n")
    r = run(["--check", "--config", none])
    assert r.returncode == 0 and r.stderr == f"xrgate: warning: {none}: {what}\n", r.stderr
    with Gateway(None, args=["--config", empty]) as gw:
        assert gw.wait_log(f"warn  [gateway] {empty}:3:1: {what}"), gw.log()
    # one adapter: no such warning
    one = write(d, "one.yaml", "adapters:\n  - {name: demo, type: synth}\n")
    r = run(["--check", "--config", one])
    assert r.returncode == 0 and "no adapters" not in r.stderr, r.stderr
    print("no adapters: a warning at the adapters: key (--check and start-up)")


def did_you_mean(d):
    cases = [
        ("adapters:\n  - {name: demo, type: synth, rate_hx: 100}\n",
         ":2:31: unknown key 'rate_hx' (did you mean 'rate_hz'?)"),
        ("gateway:\n  predcit: {max_horizon_ms: 50}\n",
         ":2:3: unknown key 'predcit' (did you mean 'predict'?)"),
        ("gateway:\n  entity: {stale_m: 100}\n",
         ":2:12: unknown key 'stale_m' (did you mean 'stale_ms'?)"),
        ("gateway:\n  entity: {stale: 100}\n", ":2:12: unknown key 'stale'"),  # 3 edits away
        ("gatway: {id: a}\nadapters: []\n", ":1:1: unknown key 'gatway' (did you mean 'gateway'?)"),
        ("gateway:\n  colour: blue\n", ":2:3: unknown key 'colour'"),
    ]
    for i, (text, want) in enumerate(cases):
        path = write(d, f"dym{i}.yaml", text)
        r = run(["--check", "--config", path])
        assert r.returncode == 1, (text, r.stdout, r.stderr)
        line = [l for l in r.stderr.splitlines() if "unknown key" in l]
        assert line and line[0] == f"xrgate: {path}{want}", (want, r.stderr)
    print("unknown keys: 'did you mean' the nearest accepted key, nothing when none is near")


class NamesPeer(ListeningPeer):
    """A TCP-only VRPN server that describes Tracker0 and Wand and never answers pings."""

    def session(self, conn, stop_ev):
        conn.sendall(vrpn_setup("Tracker0") + vrpn_desc(-1, 4, "Wand"))
        while not stop_ev.is_set():
            pump_reads(conn)
            stop_ev.wait(0.05)


def vrpn_names_offered():
    peer = NamesPeer()
    try:
        cfg = f"""
adapters:
  - name: vc
    type: vrpn-client
    devices: ["Trackr0@tcp://127.0.0.1:{peer.port}"]
"""
        with Gateway(cfg) as gw:
            want = (f"warn  [vc] peer tcp://127.0.0.1:{peer.port}: no response from server for "
                    ">= 3 seconds to pings of 'Trackr0' (is the device name right? the server "
                    "offers: 'Tracker0', 'Wand')")
            assert gw.wait_log(want, timeout=15), gw.log()
    finally:
        peer.kill()
    print("vrpn-client: the no-answer warning lists the names the server offers")


def srtp_key_files_named(d):
    key_a = write(d, "tx.key", "inline:" + "A" * 40 + "\n")
    key_b = write(d, "rx.key", "inline:" + "B" * 40 + "\n")
    os.chmod(key_a, 0o600)
    os.chmod(key_b, 0o644)
    cfg = write(d, "srtp.yaml", """
adapters:
  - name: game
    type: rtp
    bind: "127.0.0.1:0"
    srtp: {key_file: tx.key, remote_key_file: rx.key}
""")
    r = run(["--check", "--config", cfg])
    assert r.returncode == 0, r.stderr
    assert (f"warn  [game] srtp: key file '{key_b}' (srtp.remote_key_file) can be read by group "
            "or others (chmod 600 it)") in r.stderr, r.stderr
    assert f"'{key_a}'" not in r.stderr.replace(f"'{key_b}'", ""), r.stderr  # not the private one
    assert " or '" not in r.stderr, r.stderr
    os.chmod(key_a, 0o640)
    r = run(["--check", "--config", cfg])
    lines = [l for l in r.stderr.splitlines() if "srtp: key file" in l]
    assert len(lines) == 2 and "(srtp.key_file)" in lines[0] and f"'{key_a}'" in lines[0], lines
    print("srtp: one warning per readable key file, naming it")


def admin_port_clash(d):
    """A port another program listens on: the admin error says what to do, as a UDP bind's."""
    import socket
    path = write(d, "clash.yaml", "adapters: []\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        r = run(["--config", path], env={"XRGATE_ADMIN_LISTEN": f"127.0.0.1:{port}"})
    assert r.returncode == 1, (r.returncode, r.stderr)
    want = (f"admin: cannot listen on 127.0.0.1:{port} (Address already in use): another "
            "program, or another gateway, listens on this port (stop it, or give admin.listen "
            "or XRGATE_ADMIN_LISTEN another port)")
    assert want in r.stderr, r.stderr


def main():
    with tempfile.TemporaryDirectory(prefix="xrgate-cli-") as d:
        admin_port_clash(d)
        help_lists_every_option()
        config_source_logged(d)
        no_adapters_warned(d)
        did_you_mean(d)
        srtp_key_files_named(d)
        vrpn_names_offered()
    return 0


if __name__ == "__main__":
    sys.exit(main())
