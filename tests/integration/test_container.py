"""Container checks that need no Docker engine (issue 11):
1. docker/Dockerfile: multi-stage on bookworm-slim, non-root USER, HEALTHCHECK, STOPSIGNAL SIGTERM,
   netbase in the runtime packages, every COPY source exists (context files in the checkout,
   --from=build files in the build output).
2. Build exactly as the build stage does: a clean out-of-tree build with the Dockerfile's own
   CMake flags, then run that binary with the image's environment and default config, and check
   /healthz with `xrgate --healthcheck` (what the HEALTHCHECK runs).
3. SIGTERM under load (synth, 3000 bodies at 240 Hz) exits 0 within 1 s."""
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from xgtest import SOURCE_DIR, Gateway, BIN


def dockerfile():
    with open(os.path.join(SOURCE_DIR, "docker", "Dockerfile")) as f:
        text = f.read()
    # join continuation lines
    return re.sub(r"\\\n", " ", text)


def stages(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        instr, _, rest = line.partition(" ")
        if instr.upper() == "FROM":
            out.append({"from": rest, "lines": []})
        elif out:
            out[-1]["lines"].append((instr.upper(), rest.strip()))
    return out


def check_dockerfile(text):
    st = stages(text)
    assert len(st) == 2, "multi-stage: build + runtime"
    assert st[0]["from"].startswith("debian:bookworm-slim AS build"), st[0]["from"]
    assert st[1]["from"].startswith("debian:bookworm-slim"), st[1]["from"]
    rt = dict()
    for instr, rest in st[1]["lines"]:
        rt.setdefault(instr, []).append(rest)
    users = rt.get("USER", [])
    assert users and users[-1] not in ("root", "0"), f"runtime must run as non-root: {users}"
    assert "HEALTHCHECK" in rt and "--healthcheck" in rt["HEALTHCHECK"][0], rt.get("HEALTHCHECK")
    assert rt.get("STOPSIGNAL") == ["SIGTERM"], rt.get("STOPSIGNAL")
    exposed = " ".join(rt.get("EXPOSE", []))
    for port in ("8080/tcp", "3883/tcp", "3883/udp"):
        assert port in exposed, f"EXPOSE {port}"
    assert any("org.opencontainers.image" in l for l in rt.get("LABEL", []))
    # runtime packages come from install-deps.sh --runtime, which must include netbase
    assert any("install-deps.sh --runtime" in r for r in rt.get("RUN", []))
    with open(os.path.join(SOURCE_DIR, "docker", "install-deps.sh")) as f:
        deps = f.read()
    runtime = re.search(r'RUNTIME_PKGS="([^"]*)"', deps.replace("\\\n", " ")).group(1).split()
    for pkg in ("netbase", "ca-certificates", "libevent-2.1-7", "libmbedtls14", "libjansson4",
                "libyaml-0-2"):
        assert pkg in runtime, f"runtime packages lack {pkg}"
    # context COPY sources exist in the checkout
    for stage in st:
        for instr, rest in stage["lines"]:
            if instr != "COPY" or rest.startswith("--from"):
                continue
            srcs = shlex.split(rest)[:-1]
            for s in srcs:
                if s == ".":
                    continue
                assert os.path.exists(os.path.join(SOURCE_DIR, s)), f"COPY source {s} missing"
    from_build = [shlex.split(rest)[1:-1] for instr, rest in st[1]["lines"]
                  if instr == "COPY" and rest.startswith("--from=build")]
    build_cmds = [rest for instr, rest in st[0]["lines"] if instr == "RUN" and "cmake -S" in rest]
    assert len(build_cmds) == 1, build_cmds
    return build_cmds[0], from_build, st[1]


def main():
    text = dockerfile()
    build_cmd, from_build, runtime = check_dockerfile(text)

    # Build exactly as the build stage does, out of tree, /build -> a temporary directory.
    tmp = tempfile.mkdtemp(prefix="xrgate-image-")
    try:
        bdir = os.path.join(tmp, "build")
        cmd = build_cmd.replace("/build", bdir).replace("$(nproc)", str(os.cpu_count() or 2))
        cmd = cmd.replace('"', "")
        r = subprocess.run(["sh", "-c", cmd], cwd=SOURCE_DIR, capture_output=True, text=True,
                           timeout=900)
        assert r.returncode == 0, f"image build failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        for srcs in from_build:
            for s in srcs:
                path = s.replace("/build", bdir)
                assert os.path.exists(path), f"runtime stage copies {s}, not in the build output"
        binary = os.path.join(bdir, "xrgate")

        # the image's environment, with the config at its path in the checkout
        env = {}
        for instr, rest in runtime["lines"]:
            if instr == "ENV":
                for kv in shlex.split(rest):
                    k, _, v = kv.partition("=")
                    env[k] = v
        assert env.get("XRGATE_CONFIG") == "/etc/xrgate/xrgate.yaml", env
        env["XRGATE_CONFIG"] = os.path.join(SOURCE_DIR, "conf", "xrgate.yaml")
        env["XRGATE_ADMIN_LISTEN"] = "127.0.0.1:0"  # ephemeral instead of 0.0.0.0:8080 here
        r = subprocess.run([binary, "--check"], env={**os.environ, **env}, capture_output=True,
                           text=True, timeout=10)
        assert r.returncode == 0, r.stderr
        import xgtest
        old = xgtest.BIN
        xgtest.BIN = binary
        try:
            with Gateway(env=env, admin=None) as gw:
                deadline = time.time() + 10
                while gw.port is None and time.time() < deadline:
                    m = [l for l in gw.lines if "admin API listening on" in l]
                    if m:
                        gw.port = int(m[0].rsplit(":", 1)[1].split()[0])
                    time.sleep(0.05)
                assert gw.port, gw.log()
                h = subprocess.run([binary, "--healthcheck", f"127.0.0.1:{gw.port}"],
                                   capture_output=True, text=True, timeout=10)
                assert h.returncode == 0 and h.stdout == "ok\n", (h.stdout, h.stderr)
                code, took = gw.stop()
                assert code == 0, gw.log()
        finally:
            xgtest.BIN = old
        h = subprocess.run([binary, "--healthcheck", "127.0.0.1:1"], capture_output=True,
                           text=True, timeout=10)
        assert h.returncode == 1 and "failed" in h.stderr, h.stderr
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    # SIGTERM under load exits 0 within 1 s
    load = ("gateway: {admin: {listen: \"127.0.0.1:0\"}}\n"
            "adapters:\n  - {name: load, type: synth, rate_hz: 240, bodies: 3000}\n")
    with Gateway(config_text=load, admin=None) as gw:
        deadline = time.time() + 10
        while time.time() < deadline and not any("running with" in l for l in gw.lines):
            time.sleep(0.05)
        time.sleep(0.5)
        code, took = gw.stop(signal.SIGTERM)
        assert code == 0, gw.log()[-2000:]
        assert took < 1.0, f"SIGTERM under load took {took:.2f} s"
    print("container checks: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
