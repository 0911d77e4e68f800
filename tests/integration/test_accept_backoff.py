"""Integration: the process-wide accept back-off (issue 22).

The daemon runs with RLIMIT_NOFILE lowered to 64. Idle admin connections use up its file
descriptors, more wait in the kernel's backlog, and a TCP client of rgmp-server waits too: every
accept() then fails with EMFILE. Checked:
- each listener that hits it (admin, rgmp-server) logs "accept() failed: Too many open files"
  naming itself, rate-limited (at most XG_LOG_LIMIT_BURST lines), instead of spinning: the
  daemon's CPU time (utime+stime from /proc/PID/stat) grows by less than a quarter of a 2 s
  interval while the connections are pending (a spinning accept loop takes a whole core);
- once the admin clients go, the listeners accept again: rgmp-server counts its client, the
  admin API answers, and /metrics shows xrgate_accept_backoff_total >= 2."""
import os
import resource
import socket
import sys
import time

from xgtest import Gateway, parse_prometheus

CONF = """gateway:
  admin:
    max_connections: 1000
    request_timeout_ms: 60000
adapters:
  - name: demo
    type: synth
  - name: rgmp
    type: rgmp-server
    listen: "127.0.0.1:0"
"""
LIMIT = 64


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, hard))
    try:
        gw = Gateway(CONF)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    with gw:
        pid = gw.proc.pid
        rgmp_port = int(gw.adapters()["rgmp"]["peer"].rsplit(":", 1)[1])
        used = len(os.listdir(f"/proc/{pid}/fd"))
        assert used < LIMIT - 10, used
        clients = []
        for _ in range(LIMIT - used + 20):  # more than the daemon can accept
            clients.append(socket.create_connection(("127.0.0.1", gw.port), timeout=5))
        assert gw.wait_log("[admin] accept() failed: Too many open files: not accepting "
                           "connections for 1000 ms"), gw.log()
        r = socket.create_connection(("127.0.0.1", rgmp_port), timeout=5)
        assert gw.wait_log("[rgmp] accept() failed: Too many open files"), gw.log()

        c0, t0 = cpu_s(pid), time.monotonic()
        while time.monotonic() - t0 < 2.0:
            time.sleep(0.1)
        used_cpu, took = cpu_s(pid) - c0, time.monotonic() - t0
        assert used_cpu < 0.25 * took, (used_cpu, took)
        lines = [ln for ln in gw.lines if "[admin] accept() failed" in ln]
        assert 1 <= len(lines) <= 5, lines

        for c in clients:
            c.close()
        deadline = time.monotonic() + 15
        while True:
            try:
                a = gw.adapters()
                if a["rgmp"]["counters"]["clients_accepted"] == 1:
                    break
            except (AssertionError, OSError):
                pass
            assert time.monotonic() < deadline, gw.log()
            time.sleep(0.1)
        _, _, body = gw.get("/metrics")
        m = parse_prometheus(body.decode())
        assert m[("xrgate_accept_backoff_total", "")] >= 2, m[("xrgate_accept_backoff_total", "")]
        r.close()
        assert gw.get("/healthz")[0] == 200
        code, _ = gw.stop()
        assert code == 0, gw.log()
    print("accept back-off: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
