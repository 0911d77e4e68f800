"""A killed test driver leaves no gateway behind: xgtest.Gateway starts xrgate with
PR_SET_PDEATHSIG (xgtest.die_with_parent), so when ctest's timeout SIGKILLs a driver such as
tests/bench/run.py, the kernel kills the gateways it started.

Starts a driver process (python3, this file with --driver) that starts a Gateway and prints its
pid, checks that the gateway answers, SIGKILLs the driver (no clean-up code of it runs) and waits
until the gateway's pid is gone (or a zombie nobody reaped yet), within time_bound(10)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.request

from xgtest import Gateway, die_with_parent, time_bound, wait_until


def driver():
    """The driver: a Gateway, its pid, admin port and temporary folder on stdout, then block until
    killed (in the main thread, the one that started the gateway)."""
    gw = Gateway("adapters:\n  - name: demo\n    type: synth\n    rate_hz: 10\n    bodies: 1\n")
    print(gw.proc.pid, gw.port, gw.tmp.name, flush=True)
    sys.stdin.read()  # the test never writes or closes it: it SIGKILLs this process
    gw.stop()


def start_time(pid):
    """Field 22 of /proc/PID/stat (the start time in clock ticks; tells a reused pid apart) and
    the state (field 3); None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return rest[19], rest[0]


def main():
    here = os.path.abspath(__file__)
    drv = subprocess.Popen([sys.executable, here, "--driver"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True, preexec_fn=die_with_parent())
    tmp = None
    try:
        line = drv.stdout.readline()
        assert line, f"the driver exited ({drv.wait()}) before reporting its gateway"
        pid, port, tmp = line.split()
        pid, port = int(pid), int(port)
        born = start_time(pid)
        assert born and born[1] != "Z", f"gateway {pid} is not running: {born}"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/adapters", timeout=10) as r:
            names = [a["name"] for a in json.load(r)["adapters"]]
        assert names == ["demo"], f"the driver's gateway answers {names}"

        drv.kill()  # SIGKILL: the driver's own clean-up (gw.stop) never runs
        drv.wait()

        def gone():
            now = start_time(pid)
            return now is None or now[0] != born[0] or now[1] == "Z"
        try:
            wait_until(gone, time_bound(10), what=f"gateway {pid} gone after its driver was "
                       "SIGKILLed", every=0.05)
        except AssertionError:
            os.kill(pid, signal.SIGKILL)  # leave the machine as found
            raise
        print(f"test_pdeathsig: gateway {pid} went with its SIGKILLed driver; 1 passed, 0 failed")
    finally:
        if drv.poll() is None:
            drv.kill()
            drv.wait()
        if tmp and tmp.startswith(os.path.join(tempfile.gettempdir(), "xrgate-test-")):
            shutil.rmtree(tmp, ignore_errors=True)  # the killed driver could not remove it


if __name__ == "__main__":
    driver() if sys.argv[1:] == ["--driver"] else main()
