"""The container image, built and run with a real Docker daemon (issues 11, 20).

1. Static: docker/Dockerfile is multi-stage on a base every Docker host can pull (ARG
   XRGATE_BASE=debian:bookworm-slim: a name, never a local image ID that rots),
   the build stage configures without tests (-DXRGATE_TESTS=OFF; -Werror is never switched off),
   USER 10001:10001, the HEALTHCHECK runs `xrgate --healthcheck` without an address (it follows
   XRGATE_ADMIN_LISTEN), the licence label matches LICENSE and package.json, .dockerignore is an
   allow-list; `xrgate --healthcheck` refuses port 0 with a message.
2. SIGTERM under load (synth, 3000 bodies at 240 Hz) exits 0 within 1 s (the local binary).
3. Docker: its own dockerd in network and mount namespaces of its own (dockerns.py: the host's
   interfaces, docker0 included, are the same before, during and after; socket
   /run/xrgate-ci-docker.sock, data under /var/lib/xrgate-ci-docker), the base built offline by
   docker/base-image.sh (cached) and tagged debian:bookworm-slim in that daemon only, so the
   Dockerfile's default XRGATE_BASE resolves to it; the image is built with --network host (the
   daemon's namespace; the archives through the test's proxy) from a clean copy of the
   checkout (git's tracked files, plus a planted docker/secrets/admin.token canary) and checked:
   process uid/gid 10001:10001, HEALTHCHECK healthy, env overrides (XRGATE_ADMIN_LISTEN, gateway
   id), `docker stop` -> exit 0 (SIGTERM, not the kill; the time printed), port 0 -> the health
   log says why, `--check` rc 0 and
   rc 1 with the config error, no key or secret in any layer (`docker save` scan, `docker
   history`) nor in the build stage, compose: the documented two gateways (lab-a, and lab-b as a
   second project) both healthy side by side, stop exit 0 (docker-compose v1).
   Prints the image size and the timings. Without root/dockerd it skips, but fails when CI=true.
Runs once per `make test` (ctest label "container"; `make sanitize` leaves it out)."""
import fcntl
import io
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

import dockerns
from xgtest import BIN, SOURCE_DIR, Gateway, skip, time_bound, wait_until

SOCK = "/run/xrgate-ci-docker.sock"
ROOT = "/var/lib/xrgate-ci-docker"
IMAGE = "xrgate:ci"


def read(path):
    with open(os.path.join(SOURCE_DIR, path)) as f:
        return f.read()


def unavailable(msg):
    skip(msg)  # xgtest's one skip path: under CI=true a failure naming what is missing


# ---------------------------------------------------------------------------------------------
# 1. static checks


def stages(text):
    out = []
    for line in re.sub(r"\\\n", " ", text).splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        instr, _, rest = line.partition(" ")
        if instr.upper() == "FROM":
            out.append({"from": rest, "lines": []})
        elif out:
            out[-1]["lines"].append((instr.upper(), rest.strip()))
    return out


def check_static():
    text = read("docker/Dockerfile")
    m = re.search(r"^ARG XRGATE_BASE=(\S+)$", text, re.M)
    assert m, "docker/Dockerfile: ARG XRGATE_BASE=<base> before the first FROM"
    base = m.group(1)
    # a name any Docker host can pull, not the ID of an image built on one machine
    assert base == "debian:bookworm-slim", f"default base {base}: must be debian:bookworm-slim"
    st = stages(text)
    assert len(st) == 2, "multi-stage: build + runtime"
    assert st[0]["from"] == "${XRGATE_BASE} AS build", st[0]["from"]
    assert st[1]["from"] == "${XRGATE_BASE}", st[1]["from"]
    build_runs = [r for i, r in st[0]["lines"] if i == "RUN" and "cmake -S" in r]
    assert len(build_runs) == 1 and "-DXRGATE_TESTS=OFF" in build_runs[0], build_runs
    assert "--target xrgate" in build_runs[0], build_runs
    assert any("install-deps.sh --build" in r for i, r in st[0]["lines"] if i == "RUN")
    for f in ("docker/Dockerfile", "Makefile", ".ci/run", "CMakeLists.txt", "tests/CMakeLists.txt",
              "docker/compose.yaml"):
        assert ("XRGATE_WERROR=" + "OFF") not in read(f), f"{f} turns -Werror off"
    rt = {}
    for instr, rest in st[1]["lines"]:
        rt.setdefault(instr, []).append(rest)
    assert rt.get("USER") == ["10001:10001"], rt.get("USER")
    assert rt.get("HEALTHCHECK") and rt["HEALTHCHECK"][0].endswith(
        'CMD ["/usr/local/bin/xrgate", "--healthcheck"]'), rt.get("HEALTHCHECK")
    assert rt.get("STOPSIGNAL") == ["SIGTERM"], rt.get("STOPSIGNAL")
    assert not any("presets" in r or "examples" in r for r in rt.get("COPY", [])), rt["COPY"]
    # one licence: LICENSE, the image label, package.json and its lock file
    assert read("LICENSE").startswith("MIT License\n")
    assert 'org.opencontainers.image.licenses="MIT"' in text
    assert json.loads(read("gateway/web/package.json"))["license"] == "MIT"
    assert json.loads(read("gateway/web/package-lock.json"))["packages"][""]["license"] == "MIT"
    ignore = [l for l in read(".dockerignore").splitlines() if l and not l.startswith("#")]
    assert ignore[0] == "*", ".dockerignore must be an allow-list (first line '*')"
    # runtime packages come from install-deps.sh --runtime, which must include netbase
    deps = read("docker/install-deps.sh").replace("\\\n", " ")
    runtime = re.search(r'RUNTIME_PKGS="([^"]*)"', deps).group(1).split()
    for pkg in ("netbase", "ca-certificates", "libevent-2.1-7", "libmbedtls14", "libjansson4",
                "libyaml-0-2"):
        assert pkg in runtime, f"runtime packages lack {pkg}"
    test_pkgs = re.search(r'TEST_PKGS="([^"]*)"', deps).group(1).split()
    for pkg in ("docker.io", "mmdebstrap", "docker-compose"):
        assert pkg in test_pkgs, f"install-deps.sh test packages lack {pkg} (this test needs it)"
    # the healthcheck of an admin API on port 0 says why it cannot work (the image's
    # HEALTHCHECK reads XRGATE_ADMIN_LISTEN)
    r = subprocess.run([BIN, "--healthcheck"], capture_output=True, text=True, timeout=10,
                       env={**os.environ, "XRGATE_ADMIN_LISTEN": "127.0.0.1:0"})
    assert r.returncode == 1 and r.stdout == "", (r.returncode, r.stdout)
    assert r.stderr == ("xrgate: --healthcheck: admin address 127.0.0.1:0 has no fixed port (port "
                        "0 is chosen at start); give XRGATE_ADMIN_LISTEN (or --healthcheck) a "
                        "fixed port\n"), r.stderr
    return base


# ---------------------------------------------------------------------------------------------
# 2. SIGTERM under load (the local binary)


def check_sigterm_under_load():
    load = ("gateway: {admin: {listen: \"127.0.0.1:0\"}}\n"
            "adapters:\n  - {name: load, type: synth, rate_hz: 240, bodies: 3000}\n")
    with Gateway(config_text=load, admin=None) as gw:
        assert gw.wait_log("running with"), gw.log()
        # under load: SIGTERM once the synth has produced ten rounds of its 3000 bodies
        wait_until(lambda: gw.port and gw.counters("load")["samples_in"] >= 30000, 30,
                   what="the load running")
        code, took = gw.stop(signal.SIGTERM, timeout=time_bound(1.0) + 5)
        assert code == 0, gw.log()[-2000:]
        # 1 s stated; xgtest.time_bound scales it for a loaded machine and the build type
        assert took < time_bound(1.0), f"SIGTERM under load took {took:.2f} s"
        print(f"container: SIGTERM under load (3000 bodies at 240 Hz): exit 0 after {took:.2f} s")


# ---------------------------------------------------------------------------------------------
# 3. Docker


def docker_cli():
    # docker.io's client (the daemon's version) before any other one on PATH
    return ["/usr/bin/docker" if os.path.exists("/usr/bin/docker") else "docker",
            "-H", f"unix://{SOCK}"]


DOCKER = docker_cli()


def dk(*args, check=True, timeout=120, **kw):
    r = subprocess.run(DOCKER + list(args), capture_output=True, text=True, timeout=timeout, **kw)
    if check:
        shown = " ".join(a if len(a) < 80 else a[:40] + "..." for a in args)
        assert r.returncode == 0, (f"docker {shown}: rc {r.returncode}\n"
                                   f"{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return r



def lock_ci_docker():
    """Other checkouts on this machine may run this test too: one at a time."""
    os.makedirs(ROOT, exist_ok=True)
    f = open(os.path.join(ROOT, "lock"), "w")
    deadline = time.time() + 1200
    while True:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return f
        except BlockingIOError:
            if time.time() > deadline:
                raise AssertionError(f"{ROOT}/lock held for 20 minutes by another run")
            time.sleep(1)


class Daemon:
    """The test's dockerd (dockerns.py): pid (its namespaces), proc (None when an interrupted
    run's daemon, already in a namespace of its own, is reused) and the proxy into its
    namespace."""

    def __init__(self, pid, proc):
        self.pid, self.proc = pid, proc
        self.proxy = dockerns.NetnsProxy(pid)

    def get(self, port, path="/healthz"):
        return dockerns.ns_http_get(self.pid, port, path)

    def stop(self):
        self.proxy.close()
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


PIDFILE = "/run/xrgate-ci-docker.pid"


def left_daemon():
    """The pid of a daemon an interrupted run left on SOCK, or None. One in the host's network
    namespace (an older run's) is stopped: it must not stay there."""
    try:
        with open(PIDFILE) as f:
            pid = int(f.read().strip() or 0)
    except (OSError, ValueError):
        return None
    if not pid or not dockerns.pid_alive(pid):
        return None
    if dockerns.same_netns(pid):
        os.kill(pid, signal.SIGTERM)
        wait_until(lambda: not dockerns.pid_alive(pid), 60, what=f"old dockerd {pid} to stop")
        return None
    return pid if dk("version", check=False, timeout=20).returncode == 0 else None


def start_dockerd(logpath):
    if os.geteuid() != 0:
        unavailable("the container test runs its own dockerd and needs root")
    dockerd = shutil.which("dockerd")
    if not dockerd:
        unavailable("dockerd not found (docker/install-deps.sh --test installs docker.io)")
    if not shutil.which("unshare"):
        unavailable("unshare not found (util-linux)")
    pid = left_daemon()
    if pid:
        return Daemon(pid, None)
    log = open(logpath, "w")
    proc = subprocess.Popen(
        dockerns.dockerd_command(dockerd, [
            "--bridge=none", "--iptables=false", "--ip6tables=false",
            "--data-root", f"{ROOT}/data", "--exec-root", "/run/xrgate-ci-docker",
            "--host", f"unix://{SOCK}", "--pidfile", PIDFILE]),
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            with open(logpath) as f:
                unavailable(f"dockerd exited ({proc.returncode}):\n{f.read()[-3000:]}")
        if dk("version", check=False, timeout=20).returncode == 0:
            assert not dockerns.same_netns(proc.pid), "dockerd runs in the host's namespace"
            return Daemon(proc.pid, proc)
        time.sleep(0.2)
    proc.terminate()
    proc.wait(30)
    with open(logpath) as f:
        unavailable(f"dockerd did not answer on {SOCK} within 60 s:\n{f.read()[-3000:]}")


def clean_copy(dst):
    """The checkout as a clean clone has it: git's tracked files (in their working-tree state)."""
    r = subprocess.run(["git", "-C", SOURCE_DIR, "ls-files", "-z", "--cached"],
                       capture_output=True, timeout=60)
    if r.returncode != 0:
        unavailable(f"not a git checkout: {r.stderr.decode()[-300:]}")
    for rel in r.stdout.decode().split("\0"):
        src = os.path.join(SOURCE_DIR, rel)
        if not rel or not os.path.isfile(src):
            continue
        os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dst, rel))


def wait_health(cid, want, timeout):
    deadline = time.time() + timeout
    st = None
    while time.time() < deadline:
        st = json.loads(dk("inspect", "-f", "{{json .State}}", cid).stdout)
        health = (st.get("Health") or {}).get("Status")
        if health == want:
            return st
        if not st.get("Running"):
            break
        time.sleep(0.25)
    logs = dk("logs", cid, check=False)
    raise AssertionError(f"container not {want} within {timeout} s: {json.dumps(st)[-1500:]}\n"
                         f"{logs.stdout[-1500:]}{logs.stderr[-1500:]}")


def secret_needles(ctx, canary):
    """Byte strings that must not be in any layer: the canary and every key's content."""
    needles = {canary.encode(): "docker/secrets/admin.token canary"}
    for d, _, files in os.walk(os.path.join(ctx, "conf")):
        for f in files:
            if f.endswith(".key"):
                with open(os.path.join(d, f), "rb") as fh:
                    data = fh.read().strip()
                if len(data) >= 16:
                    needles[data] = os.path.relpath(os.path.join(d, f), ctx)
    assert len(needles) >= 3, needles  # the canary and the example keys
    return needles


PEM_KEY = re.compile(rb"-----BEGIN [A-Z ]*PRIVATE KEY-----\r?\n[A-Za-z0-9+/]{40}")
SHARED_LIB = re.compile(r"\.so(\.[0-9]+)*$")


def scan_image(tmp, needles):
    """`docker save`: every layer's file names and contents."""
    path = os.path.join(tmp, "image.tar")
    with open(path, "wb") as out:
        r = subprocess.run(DOCKER + ["save", IMAGE], stdout=out, stderr=subprocess.PIPE,
                           timeout=300)
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    bad_name = re.compile(r"(\.key$|/secrets/|etc/xrgate/examples|mappings/presets|node_modules)")
    files = 0
    with tarfile.open(path) as outer:
        for m in outer.getmembers():
            if not m.name.endswith("layer.tar"):
                continue
            with tarfile.open(fileobj=outer.extractfile(m)) as layer:
                for f in layer:
                    assert not bad_name.search(f.name), f"image layer {m.name} holds {f.name}"
                    if not f.isfile():
                        continue
                    files += 1
                    data = layer.extractfile(f).read()
                    for needle, what in needles.items():
                        assert needle not in data, f"{what} found in {f.name} ({m.name})"
                    # a PEM private key in a file (libmbedx509 embeds mbedtls's public test
                    # keys: shared libraries are left to the exact needles above)
                    if not SHARED_LIB.search(f.name):
                        assert not PEM_KEY.search(data), f"a PEM private key: {f.name} ({m.name})"
    os.unlink(path)
    assert files > 1000, files  # the scan saw the base's files too
    hist = dk("history", "--no-trunc", "--format", "{{.CreatedBy}}", IMAGE).stdout
    for needle, what in needles.items():
        assert needle.decode(errors="replace") not in hist, f"{what} in docker history"
    return files


def build_ca_args():
    """The CAs this host added locally (e.g. a TLS-intercepting proxy's): the build stage's npm
    needs them to reach the registry (docker/Dockerfile, XRGATE_BUILD_CA)."""
    d = "/usr/local/share/ca-certificates"
    pems = []
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if f.endswith(".crt"):
            with open(os.path.join(d, f)) as fh:
                pems.append(fh.read().strip())
    return ["--build-arg", "XRGATE_BUILD_CA=" + "\n".join(pems)] if pems else []


def check_build_stage(daemon, ctx, canary):
    """The build stage (cached layers) got no secret either: .dockerignore kept them out."""
    dk("build", "--network", "host", "-q", *daemon.proxy.build_args(), *build_ca_args(), "--target", "build", "-f",
       "docker/Dockerfile", "-t", f"{IMAGE}-build", ".", cwd=ctx, timeout=900)
    r = dk("run", "--rm", "--network", "host", "--entrypoint", "sh", f"{IMAGE}-build", "-c",
           f"find /src \\( -name '*.key' -o -name '*.pem' -o -name secrets -o -name examples "
           f"-o -name .git -o -name tests \\) -print; grep -rl '{canary}' /src || true")
    assert r.stdout == "", f"the build context holds:\n{r.stdout}"
    dk("rmi", f"{IMAGE}-build", check=False)


def check_image(daemon, tmp, ctx, canary):
    info = json.loads(dk("image", "inspect", IMAGE).stdout)[0]
    cfg = info["Config"]
    assert cfg["User"] == "10001:10001", cfg["User"]
    assert cfg["Healthcheck"]["Test"] == ["CMD", "/usr/local/bin/xrgate", "--healthcheck"], cfg
    assert cfg["Labels"]["org.opencontainers.image.licenses"] == "MIT", cfg["Labels"]
    r = dk("run", "--rm", "--network", "host", "--entrypoint", "id", IMAGE)
    assert r.stdout == "uid=10001(xrgate) gid=10001(xrgate) groups=10001(xrgate)\n", r.stdout

    # --check: rc 0 on the image's config, rc 1 and the error on a bad one
    r = dk("run", "--rm", "--network", "host", IMAGE, "--check", check=False)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    bad = os.path.join(tmp, "bad.yaml")
    shutil.copy(os.path.join(SOURCE_DIR, "tests/integration/configs/bad/unknown-gateway-key.yaml"),
                bad)
    os.chmod(bad, 0o644)
    r = dk("run", "--rm", "--network", "host", "-v", f"{bad}:/etc/xrgate/xrgate.yaml:ro", IMAGE,
           "--check", check=False)
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert "/etc/xrgate/xrgate.yaml:3:3: unknown key 'predcit'" in r.stderr, r.stderr

    # run: environment overrides, healthy, the process's ids, docker stop -> 0 (SIGTERM)
    # (the daemon's network namespace is the test's own: any fixed port is free there)
    port = 8080
    gid = "ci-" + secrets.token_hex(4)
    cid = dk("run", "-d", "--network", "host", "-e", f"XRGATE_ADMIN_LISTEN=127.0.0.1:{port}",
             "-e", f"XRGATE_ID={gid}", IMAGE).stdout.strip()
    try:
        t0 = time.time()
        st = wait_health(cid, "healthy", 60)
        healthy_after = time.time() - t0
        with open(f"/proc/{st['Pid']}/status") as f:
            status = f.read()
        assert re.search(r"^Uid:\t10001\t10001\t10001\t10001$", status, re.M), status
        assert re.search(r"^Gid:\t10001\t10001\t10001\t10001$", status, re.M), status
        assert daemon.get(port) == (200, b"ok\n")
        logs = dk("logs", cid)
        out = logs.stdout + logs.stderr
        assert f"xrgate 0.1.0 '{gid}' running with 1 adapter(s)" in out, out
        assert f"admin API listening on http://127.0.0.1:{port}" in out, out
        t0 = time.time()
        dk("stop", "-t", "10", cid)
        took = time.time() - t0
        st = json.loads(dk("inspect", "-f", "{{json .State}}", cid).stdout)
        # 0: the gateway ended on SIGTERM (docker's SIGKILL after -t would give 137)
        assert st["ExitCode"] == 0, st
        assert took < time_bound(1.0), f"docker stop took {took:.2f} s"
        out = dk("logs", cid).stderr + dk("logs", cid).stdout
        assert "received SIGTERM, stopping" in out, out
    finally:
        dk("rm", "-f", cid, check=False)
    print(f"container: healthy after {healthy_after:.1f} s, docker stop {took:.2f} s")

    # admin on port 0: the health check says why it cannot check
    cid = dk("run", "-d", "--network", "host", "-e", "XRGATE_ADMIN_LISTEN=127.0.0.1:0",
             IMAGE).stdout.strip()
    try:
        deadline = time.time() + 30
        log = []
        while time.time() < deadline and not log:
            st = json.loads(dk("inspect", "-f", "{{json .State}}", cid).stdout)
            log = (st.get("Health") or {}).get("Log") or []
            time.sleep(0.25)
        assert log, f"no health check within 30 s: {st}"
        assert log[0]["ExitCode"] == 1 and "has no fixed port (port 0 is chosen at start)" in \
            log[0]["Output"], log[0]
    finally:
        dk("rm", "-f", cid, check=False)

    needles = secret_needles(ctx, canary)
    files = scan_image(tmp, needles)
    check_build_stage(daemon, ctx, canary)
    print(f"container: no key or secret in {files} files of the image's layers nor in its history")
    size = info["Size"]
    print(f"container: image size {size / 1e6:.1f} MB")
    assert size < 250e6, f"image is {size / 1e6:.1f} MB"


def check_compose(daemon, ctx):
    """docs/container.md's compose lines: lab-a, then lab-b as a second project (its own admin
    and VRPN ports) running beside it, both healthy, then both stopped with exit 0."""
    compose = shutil.which("docker-compose")
    if not compose:
        unavailable("docker-compose not found (docker/install-deps.sh --test installs it)")
    gid = "ci-compose-" + secrets.token_hex(3)
    labs = [("xrgateci-a", {"XRGATE_ID": gid + "-a"}, 8080),
            ("xrgateci-b", {"XRGATE_ID": gid + "-b", "XRGATE_ADMIN_LISTEN": "127.0.0.1:8081",
                            "XRGATE_VRPN_LISTEN": "0.0.0.0:3885"}, 8081)]
    yaml = os.path.join(ctx, "docker", "compose.yaml")

    def run(project, extra, *args, timeout=120):
        env = {k: v for k, v in os.environ.items() if not k.startswith("XRGATE_")}
        env.update(extra, DOCKER_HOST=f"unix://{SOCK}")
        r = subprocess.run([compose, "-p", project, "-f", yaml] + list(args), env=env,
                           capture_output=True, text=True, timeout=timeout)
        assert r.returncode == 0, f"docker-compose -p {project} {' '.join(args)}: " \
                                  f"{r.stdout}{r.stderr}"
        return r

    dk("tag", IMAGE, "xrgate:latest")
    cids = []
    try:
        for project, extra, port in labs:
            run(project, extra, "up", "-d", "--no-build")
            cid = run(project, extra, "ps", "-q", "xrgate").stdout.strip()
            assert cid and cid not in cids, f"docker-compose -p {project} ps: {cid!r} {cids}"
            cids.append(cid)
        for (project, extra, port), cid in zip(labs, cids):
            wait_health(cid, "healthy", 60)
            assert daemon.get(port) == (200, b"ok\n"), project
            logs = dk("logs", cid)
            out = logs.stdout + logs.stderr
            assert f"'{extra['XRGATE_ID']}' running with 2 adapter(s)" in out, out
            assert f"admin API listening on http://127.0.0.1:{port}" in out, out
        # both still running: the second project did not replace the first
        for cid in cids:
            st = json.loads(dk("inspect", "-f", "{{json .State}}", cid).stdout)
            assert st["Running"], st
        for (project, extra, port), cid in zip(labs, cids):
            t0 = time.time()
            run(project, extra, "stop")
            took = time.time() - t0
            st = json.loads(dk("inspect", "-f", "{{json .State}}", cid).stdout)
            assert st["ExitCode"] == 0 and not st["Running"], st
            print(f"container: compose {project} healthy beside the other, "
                  f"docker-compose stop {took:.2f} s, exit 0")
    finally:
        for project, extra, _ in labs:
            env = {k: v for k, v in os.environ.items() if not k.startswith("XRGATE_")}
            env.update(extra, DOCKER_HOST=f"unix://{SOCK}")
            subprocess.run([compose, "-p", project, "-f", yaml, "down"], env=env,
                           capture_output=True, timeout=120)


def check_docker(base_name):
    lock = lock_ci_docker()
    tmp = tempfile.mkdtemp(prefix="xrgate-container-")
    daemon = None
    before = dockerns.host_interfaces()
    try:
        daemon = start_dockerd(os.path.join(tmp, "dockerd.log"))
        t0 = time.time()
        r = subprocess.run(["sh", os.path.join(SOURCE_DIR, "docker", "base-image.sh"),
                            f"{ROOT}/base"], env={**os.environ, "DOCKER": " ".join(DOCKER)},
                           capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, f"docker/base-image.sh failed:\n{r.stderr[-3000:]}"
        base_id = r.stdout.strip()
        t_base = time.time() - t0
        # the Dockerfile's default base names the image base-image.sh made (in this daemon only)
        tagged = dk("image", "inspect", "-f", "{{.Id}}", base_name).stdout.strip()
        assert tagged == base_id, f"{base_name} is {tagged}, base-image.sh made {base_id}"

        ctx = os.path.join(tmp, "src")
        clean_copy(ctx)
        canary = "xrgate-ci-canary-" + secrets.token_hex(16)
        os.makedirs(os.path.join(ctx, "docker", "secrets"))
        with open(os.path.join(ctx, "docker", "secrets", "admin.token"), "w") as f:
            f.write(canary + "\n")
        t0 = time.time()
        # the default XRGATE_BASE, as a user builds it
        r = dk("build", "--network", "host", *daemon.proxy.build_args(), *build_ca_args(), "-f",
               "docker/Dockerfile", "-t", IMAGE, ".", cwd=ctx, timeout=1200)
        t_build = time.time() - t0
        out = r.stdout + r.stderr
        # no warning (compiler, CMake, useradd/groupadd, apt), but for update-alternatives's
        # "skip creation of /usr/share/man/..." (the slim base has no man pages, by design)
        warnings = [l for l in out.splitlines() if "warning" in l.lower() and
                    not l.startswith("update-alternatives: warning: skip creation of")]
        assert not warnings, "image build warnings:\n" + "\n".join(warnings[:20])
        print(f"container: base {t_base:.1f} s, image build {t_build:.1f} s "
              f"({out.count('Using cache')} cached steps)")
        assert dockerns.host_interfaces() == before, "the host's interfaces changed"
        check_image(daemon, tmp, ctx, canary)
        check_compose(daemon, ctx)
        dk("image", "prune", "-f", check=False, timeout=300)
    finally:
        if daemon:
            daemon.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        lock.close()
    after = dockerns.host_interfaces()
    assert after == before, f"the host's interfaces changed: {before} -> {after}"
    print(f"container: the host's interfaces unchanged ({', '.join(sorted(after))})")


def main():
    base_name = check_static()
    check_sigterm_under_load()
    check_docker(base_name)
    print("container checks: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
