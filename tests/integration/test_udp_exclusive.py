"""Integration: unicast UDP ports are bound exclusively (issue 17 item 11). A second gateway whose
`rtp` adapter (or LESS `udp` adapter) binds the unicast UDP port the first one holds fails to
start with exit 1 and the exact lines naming the adapter, the address and the reason; the first
gateway keeps receiving on that port (a datagram sent after the failure is counted by it). Two
gateways on the same multicast group and port both run (SO_REUSEADDR is kept for multicast), when
this host has multicast loopback. Only loopback addresses."""
import os
import socket
import subprocess
import sys
import tempfile

from xgtest import BIN, Gateway

EXTRA = " (another program, or another gateway, has bound this UDP port)"


def second_gateway(config):
    """Run a second gateway to its exit (it must fail at start); returns (rc, output)."""
    with tempfile.TemporaryDirectory(prefix="xrgate-test-") as d:
        path = os.path.join(d, "second.yaml")
        with open(path, "w") as f:
            f.write(config)
        env = dict(os.environ, XRGATE_ADMIN_LISTEN="127.0.0.1:0")
        env.pop("XRGATE_CONFIG", None)
        try:
            r = subprocess.run([BIN, "--config", path], env=env, cwd=d, capture_output=True,
                               text=True, timeout=10)
        except subprocess.TimeoutExpired as e:
            raise AssertionError(f"the second gateway started on a port in use:\n{e.stderr}")
        return r.returncode, r.stderr


def rtp_unicast():
    with Gateway("adapters:\n  - {name: r, type: rtp, bind: \"127.0.0.1:0\"}\n") as first:
        first.wait_log("rtp adapter started")
        port = first.port_of("r")
        assert port > 0
        rc, out = second_gateway(f"adapters:\n  - {{name: r2, type: rtp, bind: \"127.0.0.1:{port}\"}}\n")
        assert rc == 1, (rc, out)
        assert f"error [r2] udp bind 127.0.0.1:{port}: Address already in use{EXTRA}" in out, out
        assert "error [gateway] adapter 'r2' (rtp) failed to start: Address already in use" in out, out
        # also a wildcard bind of the same port
        rc, out = second_gateway(f"adapters:\n  - {{name: r3, type: rtp, bind: \"0.0.0.0:{port}\"}}\n")
        assert rc == 1 and f"error [r3] udp bind 0.0.0.0:{port}: Address already in use" in out, out
        # the first gateway still owns the port: a 3-byte datagram is counted as truncated by it
        before = first.adapter("r")["counters"].get("drop_truncated", 0)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(b"\x80\x62\x00", ("127.0.0.1", port))
        s.close()
        first.wait_counter("r", "drop_truncated", before + 1)
    print(f"rtp: a second gateway on UDP port {port} fails with the exact lines; the first "
          "keeps the port")


def less_udp():
    cfg = ("adapters:\n  - {name: lu, type: less, mode: udp, bind: \"127.0.0.1:%s\", "
           "peer: \"127.0.0.1:9\", signature: none}\n")
    with Gateway(cfg % 0) as first:
        first.wait_log("less adapter started")
        port = int(first.adapter("lu")["peer"].split()[0].rsplit(":", 1)[1])
        rc, out = second_gateway(cfg.replace("lu,", "lu2,") % port)
        assert rc == 1, (rc, out)
        assert f"udp bind 127.0.0.1:{port}: Address already in use{EXTRA}" in out, out
        assert "adapter 'lu2' (less) failed to start" in out, out
    print(f"less udp: a second gateway on UDP port {port} fails")


def multicast_shared():
    group = "239.255.42.19"
    # the port stays held by the test (SO_REUSEADDR, as the gateways' group sockets): nobody
    # else is handed it between here and the gateways' binds; it never joins the group
    hold = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    hold.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    hold.bind(("127.0.0.1", 0))
    port = hold.getsockname()[1]
    cfg = (f"adapters:\n  - {{name: %s, type: rtp, bind: \"{group}:{port}\", "
           "interface: 127.0.0.1}\n")
    with Gateway(cfg % "g1") as a, Gateway(cfg % "g2") as b:
        assert a.wait_log("rtp adapter started") and b.wait_log("rtp adapter started"), \
            a.log() + b.log()
        t = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        t.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
        t.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
        t.sendto(b"\x80\x62\x00", (group, port))
        t.close()
        try:
            a.wait_counter("g1", "drop_truncated", 1, timeout=3)
            b.wait_counter("g2", "drop_truncated", 1, timeout=3)
        except AssertionError:
            print("multicast: both gateways joined the group; no multicast loopback here to "
                  "deliver a datagram")
            return
        finally:
            hold.close()
    print(f"multicast: two gateways share {group}:{port}, each receives the group's datagram")


def main():
    rtp_unicast()
    less_udp()
    multicast_shared()
    return 0


if __name__ == "__main__":
    sys.exit(main())
