"""Fault: signals other than SIGINT/SIGTERM do not kill the daemon (issue 22 item 16).

SIGHUP reloads the configuration (issue 31; tests/integration/test_reload.py covers the reload
itself): with the file unchanged the gateway keeps running with its admin API and its entity table
(same entity ids), and says so ("configuration reloaded (SIGHUP)"). SIGUSR1 and SIGUSR2 (whose
default action would also terminate the process) are logged and ignored; SIGPIPE is ignored
without a line. A burst of SIGUSR1s gives at most 5 lines (the log rate limiter: 5 per 10 s); a
burst of SIGHUPs reloads (each one the loop handled apart) and changes nothing. Finally SIGTERM
still stops the gateway with exit status 0."""
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import faultlib as F  # noqa: E402
from xgtest import Gateway, wait_until  # noqa: E402

HUP = "configuration reloaded (SIGHUP)"
CONFIG = "adapters:\n  - {name: demo, type: synth, bodies: 2, rate_hz: 60}\n"


def ids(gw):
    return {name: e["id"] for name, e in gw.entities("demo/").items()}


def ignored_lines(gw):
    return [l for l in gw.lines if " ignored" in l and "[gateway]" in l]


def main():
    with Gateway(CONFIG) as gw:
        before = wait_until(lambda: len(ids(gw)) == 5 and ids(gw), what="5 synth entities")

        t0 = time.monotonic()  # the limiter's 10 s window starts with the first line
        gw.proc.send_signal(signal.SIGHUP)
        assert gw.wait_log(HUP), gw.log()
        assert gw.get("/healthz")[0] == 200
        assert gw.proc.poll() is None
        assert ids(gw) == before, (ids(gw), before)  # the table was kept, not rebuilt

        gw.proc.send_signal(signal.SIGUSR1)
        assert gw.wait_log("SIGUSR1 ignored: xrgate defines no action for it"), gw.log()
        gw.proc.send_signal(signal.SIGUSR2)
        assert gw.wait_log("SIGUSR2 ignored: xrgate defines no action for it"), gw.log()

        # SIGPIPE leaves no line: send it, then a SIGHUP whose line proves the daemon handled a
        # later signal and is still alive
        gw.proc.send_signal(signal.SIGPIPE)
        gw.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: gw.log().count(HUP) == 2, what="second SIGHUP line")
        assert gw.get("/healthz")[0] == 200 and gw.proc.poll() is None
        assert "SIGPIPE" not in gw.log(), gw.log()

        assert len(ignored_lines(gw)) == 2, ignored_lines(gw)

        # a burst: each signal followed by a request the loop must answer, so that the signals
        # are not merged into one; the limiter lets 5 lines through in 10 s, so 3 more at most
        for _ in range(20):
            gw.proc.send_signal(signal.SIGUSR1)
            assert gw.get("/healthz")[0] == 200
        for _ in range(20):
            gw.proc.send_signal(signal.SIGHUP)
            assert gw.get("/healthz")[0] == 200
        wait_until(lambda: gw.log().count(HUP) >= 3, what="the burst's reloads")
        assert ids(gw) == before
        assert "refused" not in gw.log() and "restarted [demo]" not in gw.log(), gw.log()
        in_window = time.monotonic() - t0 < 9.0
        rc, took = gw.stop(signal.SIGTERM)
        assert rc == 0, (rc, gw.log())
        assert "received SIGTERM, stopping" in gw.log(), gw.log()
        lines = ignored_lines(gw)
        assert len(lines) == 5 if in_window else 5 <= len(lines) <= 10, "\n".join(lines)
    print("signals: SIGHUP reloads, SIGUSR1/SIGUSR2 logged and ignored, SIGPIPE ignored, burst "
          "limited: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
