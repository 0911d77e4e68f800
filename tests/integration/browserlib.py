"""Shared set-up of the browser tests (test_inspector_browser, test_webxr_browser,
test_calibration's panel check): find node, Debian's Chromium and the npm packages the build
installed into <build>/web/node_modules, run a tests/browser/*.mjs driver and read its
"RESULT {...}" line. The drivers' side of the same set-up is tests/browser/harness.mjs.

No browser is ever downloaded: Chromium is /usr/bin/chromium or $XG_CHROMIUM;
docker/install-deps.sh installs nodejs, npm and chromium."""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading

from xgtest import BUILD_DIR, SOURCE_DIR, die_with_parent, skip

NODE_MODULES = os.path.join(BUILD_DIR, "web", "node_modules")
CHROMIUM = os.environ.get("XG_CHROMIUM", "/usr/bin/chromium")
BROWSER_DIR = os.path.join(SOURCE_DIR, "tests", "browser")
OUTPUT_DIR = os.path.join(BUILD_DIR, "test-output")
# (name, path under NODE_MODULES) of the npm packages the drivers need: every one playwright-core,
# the inspector's 3D view three.js, the headset test IWER
PLAYWRIGHT = ("playwright-core", os.path.join("playwright-core", "package.json"))
THREE = ("three.js", os.path.join("three", "build", "three.module.js"))
IWER = ("iwer", os.path.join("iwer", "build", "iwer.min.js"))


def find_browser(modules=(), missing=skip):
    """node's path once node (>= 18, for playwright-core), Chromium, playwright-core and each
    npm package of `modules` (THREE, IWER: (name, path under NODE_MODULES)) are there; else calls
    missing(why) (skip: the whole test, 77 and under CI=true a failure; xgtest.skip_part: one
    part) and returns None if that returns."""
    node = shutil.which("node")
    if not node:
        return missing("node not found (docker/install-deps.sh installs nodejs)")
    ver = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    if int((ver.lstrip("v").split(".") or ["0"])[0] or 0) < 18:
        return missing(f"node {ver} is too old for playwright-core (needs >= 18)")
    if not os.access(CHROMIUM, os.X_OK):
        return missing(f"{CHROMIUM} not found (docker/install-deps.sh installs chromium)")
    for name, path in (PLAYWRIGHT,) + tuple(modules):
        if not os.path.exists(os.path.join(NODE_MODULES, path)):
            return missing(f"{name} not in {NODE_MODULES} (the build runs npm ci there when npm "
                           "is installed, with -DXRGATE_WEB_INSPECTOR=ON)")
    os.makedirs(OUTPUT_DIR, exist_ok=True)
    return node


def run_driver(node, script, args, timeout, on_line=None):
    """Run `node tests/browser/<script> --node-modules NODE_MODULES args...` and return (exit
    code, the RESULT object or None). Its stderr (the driver's log) is echoed when it ends;
    on_line(line, send) is called for every other stdout line, send(text) writing a line to the
    driver's stdin (the inspector test's STOP/START/RELOAD protocol). Killed after `timeout` s;
    SIGTERMed if this process dies (playwright then closes Chromium)."""
    proc = subprocess.Popen(
        [node, os.path.join(BROWSER_DIR, script), "--node-modules", NODE_MODULES] +
        [str(a) for a in args],
        stdin=subprocess.PIPE if on_line else subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, preexec_fn=die_with_parent(signal.SIGTERM))
    errlines = []
    err = threading.Thread(target=lambda: errlines.extend(proc.stderr), daemon=True)
    err.start()

    def send(text):
        proc.stdin.write(text + "\n")
        proc.stdin.flush()
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    result = None
    try:
        for line in proc.stdout:
            line = line.strip()
            if line.startswith("RESULT "):
                result = json.loads(line[7:])
            elif on_line:
                on_line(line, send)
        code = proc.wait()
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err.join(5)
    sys.stderr.write("".join(errlines))
    return code, result


def print_checks(result):
    """One line per check of a driver's RESULT: "ok   what" or "FAIL what  detail"."""
    for c in (result or {}).get("checks", []):
        print(("ok   " if c["ok"] else "FAIL ") + c["what"] +
              ("" if c["ok"] else f"  {json.dumps(c.get('detail'))}"))
