"""Helpers for xrgate integration tests: start the real daemon on loopback, talk HTTP, parse
Prometheus text. Standard library only. Environment (set by ctest): XRGATE_BIN, XG_SOURCE_DIR,
XG_VECTORS_DIR, XG_BUILD_DIR.

The suite runs in parallel (ctest -j) on a shared, loaded machine and has no retries, so:

- Ports: never pick a "free" port by binding and closing a socket (another test can take it before
  the daemon binds it). Give the daemon port 0 and read what it bound with
  `gw.port_of("adapter")` (its /api/adapters entry); give a test-side peer a socket from
  `bound_socket()` and keep it open while the daemon talks to it. Only where a configuration must
  name a port that the daemon binds itself (a client adapter connecting to a server adapter of the
  same gateway, a listener restarted on the same port) use `with reserve_port() as port:`, which
  holds a TCP port until the daemon has it (UDP ports cannot be held for a daemon: see there).
- Waiting: never `time.sleep(fixed)` for the daemon. Wait on a condition with `wait_until()` (a
  counter or entity from the admin API, `gw.wait_counter()`) or `gw.wait_log()`. To show that
  something did NOT happen, first make something later observable happen (send a valid packet
  after the bad one, wait until it is counted), then assert.
"""
import ctypes
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

BIN = os.environ.get("XRGATE_BIN") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "xrgate")
SOURCE_DIR = os.environ.get("XG_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
VECTORS_DIR = os.environ.get("XG_VECTORS_DIR") or os.path.join(SOURCE_DIR, "tests", "vectors")
SKIP = 77  # ctest SKIP_RETURN_CODE
BUILD_DIR = os.environ.get("XG_BUILD_DIR") or os.path.dirname(os.path.abspath(BIN))

# ---- one skip path: a missing facility is a skip, and under CI a failure naming it ----
#
# CI=true (also 1 or yes; .ci/run sets it after docker/install-deps.sh has installed every test
# package, on a full build) means nothing may be missing: every tool, library and adapter a test
# needs is there, so a missing one is a broken set-up that must fail the suite, not a skip that
# passes it. Every test routes "X is missing" through skip() (the whole test) or skip_part() (one
# part, the rest runs) or have_adapter(); nothing else exits 77 or leaves a part out silently.
# (C unit tests: tests/unit/test_skip.h does the same for cmocka; ctest registration:
# tests/CMakeLists.txt registers every test, also when its tool is missing.)
CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def skip(msg):
    """Skip the test (ctest's SKIP_RETURN_CODE) because something it needs is missing (`msg`
    names it). Under CI (see CI above) the test fails instead, naming it."""
    if CI:
        print(f"FAIL: {msg} (CI=true: nothing may be skipped on a machine set up by make test)")
        sys.exit(1)
    print(f"SKIP: {msg}")
    sys.exit(SKIP)


def skip_part(msg):
    """Leave out one part of a test because something it needs is missing (`msg` names it); the
    rest of the test runs. Under CI the whole test fails here instead, naming it."""
    if CI:
        print(f"FAIL: {msg} (CI=true: no part of a test may be left out on a machine set up by "
              "make test)")
        sys.exit(1)
    print(f"SKIP part: {msg}")


_adapter_types = None
_left_out = set()


def adapter_types():
    """The adapter types this build registers, as the binary itself lists them: `xrgate --check`
    of a configuration naming an unknown type fails with "unknown adapter type '...' (known: a,
    b, ...)". That list is the explicit "built" marker: a binary that does not start, or answers
    anything else, is a failure of the test (AssertionError), never "not built"."""
    global _adapter_types
    if _adapter_types is None:
        r = subprocess.run([BIN, "--check", "--config", "/dev/stdin"], capture_output=True,
                           text=True, timeout=10,
                           input="adapters:\n  - {name: x, type: xg-no-such-type}\n")
        m = re.search(r"unknown adapter type 'xg-no-such-type' \(known: ([a-z0-9, -]*)\)",
                      r.stderr)
        assert r.returncode == 1 and m, \
            f"{BIN} --check did not list the known adapter types: rc {r.returncode}, {r.stderr!r}"
        # gateway/registry.c builds that list in 256 bytes: one that long may have been cut
        assert len(m.group(1)) < 240, f"the list of adapter types may be truncated: {m.group(1)}"
        _adapter_types = frozenset(t for t in m.group(1).split(", ") if t)
    return _adapter_types


def have_adapter(t, part=None):
    """True when this build registers adapter type t. When it does not, the part of the test that
    needs it is left out through skip_part() (`part` names it; under CI: a failure naming t)."""
    if t in adapter_types():
        return True
    if (t, part) not in _left_out:  # one line per type (and part), however often it is asked
        _left_out.add((t, part))
        skip_part(f"adapter type {t} is not in this build" + (f": {part} left out" if part else ""))
    return False


def require_adapters(*types):
    """skip() the whole test (under CI: fail) unless this build registers every adapter type."""
    missing = [t for t in types if t not in adapter_types()]
    if missing:
        skip(f"adapter type(s) {', '.join(missing)} not in this build")


# ---- time bounds ----
#
# A functional test never asserts a fixed wall-clock figure. Where the product states a time
# bound (SIGTERM: exit within 1 s; a handshake timeout of 1 s) a test may check it as
# time_bound(stated): the stated figure times LOAD (the suite must pass at 4x slowdown: ctest -j
# on a loaded 2-core machine) times SLOWDOWN (how much slower this build runs than a release
# build). The figures themselves are measured by tests/bench.


def _slowdown():
    """XG_SLOWDOWN if set; else 3 for a sanitizer build (XRGATE_SANITIZE=ON in XG_BUILD_DIR's
    CMakeCache.txt: ASan+UBSan, `make sanitize`), 2 for an unoptimised one (CMAKE_BUILD_TYPE
    Debug or empty), 1 otherwise (Release, RelWithDebInfo)."""
    if os.environ.get("XG_SLOWDOWN"):
        return float(os.environ["XG_SLOWDOWN"])
    cache = {}
    try:
        with open(os.path.join(BUILD_DIR, "CMakeCache.txt")) as f:
            for line in f:
                k, sep, v = line.partition("=")
                if sep and not line.startswith(("#", "//")):
                    cache[k.split(":")[0]] = v.strip()
    except OSError:
        return 1.0
    if cache.get("XRGATE_SANITIZE", "").upper() in ("ON", "1", "TRUE", "YES"):
        return 3.0
    if cache.get("CMAKE_BUILD_TYPE", "") in ("", "Debug"):
        return 2.0
    return 1.0


LOAD = 4.0
SLOWDOWN = _slowdown()


def time_bound(seconds):
    """The wall-clock bound a functional test may assert for a time the product states as
    `seconds`: seconds * LOAD * SLOWDOWN (see above)."""
    return seconds * LOAD * SLOWDOWN


def raw_http(port, data, timeout=5.0):
    """Send raw bytes to 127.0.0.1:port and read until the server closes (a reset ends the read
    too); returns the bytes received. For requests an HTTP client library would not send."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
        out = b""
        while True:
            try:
                b = s.recv(65536)
            except ConnectionResetError:
                break
            if not b:
                break
            out += b
        return out
    finally:
        s.close()


def http_status(resp):
    """The status code of a raw HTTP response (asserting it is one)."""
    line = resp.split(b"\r\n", 1)[0]
    assert line.startswith(b"HTTP/1."), resp[:200]
    return int(line.split()[1])


def wait_until(fn, timeout=10.0, what="condition", every=0.02):
    """Poll fn() every `every` s until it returns a truthy value and return that value. Raises
    AssertionError naming `what` (and fn's last value) after `timeout` s. Keep timeouts generous
    (they only cost time when the test fails): the suite must pass at 4x slowdown."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = fn()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}: last={last!r}")
        time.sleep(every)


def bound_socket(kind=socket.SOCK_DGRAM, host="127.0.0.1"):
    """A test-side socket bound to host:0 (UDP by default, or kind=socket.SOCK_STREAM, not yet
    listening). Its port is sock.getsockname()[1]; keep the socket open for as long as the daemon
    may send to it or connect to it, so that no other test can be handed that port."""
    s = socket.socket(socket.AF_INET, kind)
    s.bind((host, 0))
    return s


class reserve_port:
    """`with reserve_port() as port:` -- a TCP port on 127.0.0.1 held by this test until the block
    ends, for a configuration that must name a port the daemon binds itself (e.g. a client
    adapter connecting to a server adapter of the same gateway, or a listener restarted on the
    same port). Start the Gateway inside the block and leave it (or call .release()) once the
    daemon listens (e.g. gw.port_of(name) == port). Also usable as .port/.release().

    How: a TCP socket bound with SO_REUSEADDR and never listening. The kernel hands it to no one
    asking for port 0 (bind or connect), a non-reusing bind is refused, while a listener that
    sets SO_REUSEADDR (the daemon's, via libevent's LEV_OPT_REUSEABLE, and the test peers')
    can bind and listen on it.

    UDP cannot be handed over this way: gateways bind unicast UDP exclusively. Prefer designs that
    need no UDP port in advance (port 0 and port_of(), a second gateway, a test-side socket that
    forwards). Where a TCP listener also binds UDP on the same number (vrpn-server), udp=True
    checks that the number is free for UDP too and holds it with a plain UDP socket: call
    .release_udp() right before starting the gateway that binds it (the daemon's start-up is
    then the only window in which another process could bind that UDP port)."""

    def __init__(self, udp=False, host="127.0.0.1"):
        self.socks = []
        self.udp = None
        for _ in range(50):
            t = socket.socket()
            t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            t.bind((host, 0))
            self.port = t.getsockname()[1]
            self.socks = [t]
            if not udp:
                return
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            try:
                u.bind((host, self.port))
            except OSError:  # that number is taken for UDP: try another
                u.close()
                t.close()
                continue
            self.udp = u
            return
        raise RuntimeError("reserve_port: no port free for both TCP and UDP")

    def release_udp(self):
        if self.udp:
            self.udp.close()
            self.udp = None

    def release(self):
        self.release_udp()
        for s in self.socks:
            s.close()
        self.socks = []

    def __enter__(self):
        return self.port

    def __exit__(self, *exc):
        self.release()


_PR_SET_PDEATHSIG = 1  # prctl(2), <linux/prctl.h>
try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before any fork
except (OSError, AttributeError):
    _prctl = None


def die_with_parent(sig=signal.SIGKILL):
    """A preexec_fn for subprocess.Popen/run: the child gets `sig` when its parent goes away
    (prctl(PR_SET_PDEATHSIG), Linux), so a test driver killed by a ctest timeout or SIGKILL
    leaves no gateway, peer or browser behind. Also exits at once if the parent died between
    fork and prctl. The kernel sends the signal when the *thread* that started the child exits,
    so a child started off the main thread (which may end before the child should) is left
    without it. SIGKILL for xrgate and plain helpers; SIGTERM for node drivers (playwright then
    closes its Chromium)."""
    parent = os.getpid()
    sig = int(sig) if threading.current_thread() is threading.main_thread() else 0

    def pre():
        if _prctl is not None and sig:
            _prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return pre


class Gateway:
    """A running xrgate. Use as a context manager; .port is the admin port."""

    # seconds an admin request may take (a test of a deliberately saturated daemon raises it)
    http_timeout = 5.0

    def __init__(self, config_text=None, args=(), env=None, cwd=None, admin="127.0.0.1:0"):
        self.tmp = tempfile.TemporaryDirectory(prefix="xrgate-test-")
        self.cwd = cwd or self.tmp.name  # no conf/ here: the embedded default applies
        cmd = [BIN]
        if config_text is not None:
            path = os.path.join(self.tmp.name, "xrgate.yaml")
            with open(path, "w") as f:
                f.write(config_text)
            cmd += ["--config", path]
        cmd += list(args)
        e = dict(os.environ)
        e.pop("XRGATE_CONFIG", None)
        if admin is not None:
            e["XRGATE_ADMIN_LISTEN"] = admin
        e.update(env or {})
        self.lines = []
        self.proc = subprocess.Popen(cmd, cwd=self.cwd, env=e, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     preexec_fn=die_with_parent())
        self._ready = threading.Event()
        self.port = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if admin is not None:
            if not self._ready.wait(10):
                self.stop()
                raise RuntimeError("xrgate did not report its admin port:\n" + self.log())

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            m = re.search(r"admin API listening on http://[^ ]*:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                self._ready.set()

    def log(self):
        return "\n".join(self.lines)

    def wait_log(self, text, timeout=10.0):
        """Wait until `text` appears in the daemon's output (read by a thread, so a line can
        trail the event that caused it). Returns True if it appeared."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log():
                return True
            time.sleep(0.02)
        return text in self.log()

    def adapters(self):
        """{name: entry} from GET /api/adapters (state, peer, counters, ...)."""
        return {a["name"]: a for a in self.get_json("/api/adapters")["adapters"]}

    def adapter(self, name):
        """The /api/adapters entry of adapter `name` (state, peer, counters, ...); AssertionError
        naming it when the gateway has no such adapter."""
        a = self.adapters().get(name)
        if a is None:
            raise AssertionError(f"no adapter {name} in /api/adapters")
        return a

    def counters(self, name):
        """The counters of adapter `name` from /api/adapters."""
        return self.adapter(name)["counters"]

    def entities(self, prefix="", t_ns=None, strip=False):
        """{name: entity} from GET /api/entities whose name starts with prefix; with t_ns, the
        entities at that gateway time (`/api/entities?t_ns=`); strip=True keys them by the name
        without the prefix."""
        q = f"?t_ns={t_ns}" if t_ns else ""
        return {e["name"][len(prefix) if strip else 0:]: e
                for e in self.get_json("/api/entities" + q)["entities"]
                if e["name"].startswith(prefix)}

    def port_of(self, name, timeout=10.0):
        """The port adapter `name` bound (configure it with port 0): its `port` counter (rtp) or
        the port its /api/adapters `peer` ends in (vrpn-server, rgmp-server, less listen/udp).
        Waits until the adapter reports one."""
        def port():
            a = self.adapters().get(name)
            if not a:
                return None
            if a["counters"].get("port"):
                return int(a["counters"]["port"])
            m = re.match(r"\S*:(\d+)(\s|$)", a.get("peer") or "")
            return int(m.group(1)) if m and int(m.group(1)) else None
        return wait_until(port, timeout, what=f"adapter {name}'s bound port")

    def wait_counter(self, name, key, at_least=1, timeout=10.0):
        """Wait until counter `key` of adapter `name` is >= at_least; returns all its counters."""
        return wait_until(lambda: (lambda c: c if c.get(key, 0) >= at_least else None)(
            self.counters(name)), timeout, what=f"{name}.{key} >= {at_least}")

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def get(self, path, headers=None):
        """Returns (status, headers, body bytes)."""
        req = urllib.request.Request(self.url(path), headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=self.http_timeout) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def get_json(self, path, headers=None):
        status, _, body = self.get(path, headers)
        assert status == 200, f"GET {path}: {status} {body!r}"
        return json.loads(body)

    def stop(self, sig=signal.SIGTERM, timeout=5.0):
        """Send sig and wait; returns (exit code, seconds it took)."""
        if self.proc.poll() is None:
            t0 = time.monotonic()
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return None, timeout
            self._reader.join(2)
            return self.proc.returncode, time.monotonic() - t0
        self._reader.join(2)
        return self.proc.returncode, 0.0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        self.tmp.cleanup()


PROM_LINE = re.compile(
    r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*"'
    r'(,[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")*)?\})? '
    r'([-+]?([0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?|Inf|NaN))$')


def parse_prometheus(text):
    """Strict parse of the text exposition format; returns {(name, labels): value}.
    Raises AssertionError on any malformed line or a sample without # TYPE."""
    types = {}
    samples = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line:
            continue
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            parts = line.split()
            assert len(parts) == 4 and parts[3] in ("counter", "gauge", "histogram", "summary",
                                                    "untyped"), f"line {n}: {line}"
            assert parts[2] not in types, f"line {n}: TYPE repeated for {parts[2]}"
            types[parts[2]] = parts[3]
            continue
        assert not line.startswith("#"), f"line {n}: stray comment {line}"
        m = PROM_LINE.match(line)
        assert m, f"line {n}: malformed sample: {line!r}"
        name, labels, value = m.group(1), m.group(3) or "", m.group(8)
        assert name in types, f"line {n}: {name} has no # TYPE"
        samples[(name, labels)] = float(value.replace("Inf", "inf"))
    return samples
