"""Helpers for xrgate integration tests: start the real daemon on loopback, talk HTTP, parse
Prometheus text. Standard library only. Environment (set by ctest): XRGATE_BIN, XG_SOURCE_DIR,
XG_VECTORS_DIR, XG_BUILD_DIR."""
import json
import os
import re
import signal
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


def skip(msg):
    """Skip the test (ctest's SKIP_RETURN_CODE) because something it needs is missing. Under CI
    (CI=true, set by .ci/run after docker/install-deps.sh has installed every test package) a
    missing tool or adapter is a broken set-up, not a reason to skip: the test fails instead."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        print(f"FAIL: {msg} (CI=true: nothing may be skipped on a machine set up by make test)")
        sys.exit(1)
    print(f"SKIP: {msg}")
    sys.exit(SKIP)


class Gateway:
    """A running xrgate. Use as a context manager; .port is the admin port."""

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
                                     stderr=subprocess.STDOUT, text=True)
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

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def get(self, path, headers=None):
        """Returns (status, headers, body bytes)."""
        req = urllib.request.Request(self.url(path), headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
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
