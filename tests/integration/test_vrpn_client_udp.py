"""Integration: vrpn-client in UDP+TCP mode accepts UDP data only from its server (issue 22
item 13; wire-rules.md §6.3).

A raw UDP+TCP VRPN server (Python) receives the connection request, calls the client back from
127.0.0.1, and streams Pos_Quat datagrams from its data socket. Then:
- an 11-byte datagram from another address (127.0.0.2) and one from the server's address but
  another port (once the data socket's port is known) are dropped and counted
  (`udp_foreign_dropped`), each with a log line naming the peer, the sender and the size; the
  session is not closed (before the fix the first one closed it);
- 2,000 more from 127.0.0.2 (100 at a time, each batch waited on) are dropped and counted, with
  at most 5 lines per 10 s (core/util/log.h);
- a valid datagram sent afterwards is applied (the entity's sample count grows): the session
  with the rig is intact, no reconnect, no bad message."""
import os
import socket
import struct
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402
from xgtest import Gateway, wait_until  # noqa: E402

N = 2000


class UdpServer:
    """Raw VRPN server in UDP+TCP mode: device T (sender 3), Pos_Quat (type 7)."""

    def __init__(self):
        self.lob = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.lob.bind(("127.0.0.1", 0))
        self.port = self.lob.getsockname()[1]
        self.data = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.data.bind(("127.0.0.1", 0))
        self.tcp = None
        self.client_udp = None
        self.t = 1795321979

    def accept_request(self, timeout=10):
        self.lob.settimeout(timeout)
        text, _ = self.lob.recvfrom(256)
        host, port = text.rstrip(b"\0").decode().split()
        self.tcp = socket.create_connection((host, int(port)))
        self.tcp.sendall(F.VRPN_COOKIE + F.vrpn_msg(self.port, -3, b"127.0.0.1\0") +
                         F.vrpn_desc(-1, 0, "VRPN Control") + F.vrpn_desc(-1, 3, "T") +
                         F.vrpn_desc(-2, 7, "vrpn_Tracker Pos_Quat") +
                         F.vrpn_desc(-2, 9, "vrpn_Base pong_message"))
        buf = b""
        self.tcp.settimeout(timeout)
        while self.client_udp is None:  # the client's UDP_DESCRIPTION: its data port
            b = self.tcp.recv(65536)
            assert b, "client closed during the handshake"
            buf += b
            off = 24
            while len(buf) >= off + 24:
                length, _, _, sender, typ, _ = struct.unpack(">IIIiiI", buf[off:off + 24])
                if typ == -3:
                    self.client_udp = ("127.0.0.1", sender)
                    break
                off += 24 + ((length - 24 + 7) & ~7)

    def report(self, x):
        self.t += 1
        self.data.sendto(F.vrpn_report(0, (x, 2.0, 3.0), (0.0, 0.0, 0.0, 1.0), (self.t, 0)),
                         self.client_udp)

    def close(self):
        for s in (self.lob, self.data, self.tcp):
            if s:
                s.close()


def main():
    srv = UdpServer()
    cfg = f"""
adapters:
  - name: rig
    type: vrpn-client
    devices: ["T@127.0.0.1:{srv.port}"]
"""
    with Gateway(cfg) as gw:
        try:
            srv.accept_request()
            srv.report(1.0)
            wait_until(lambda: gw.entities("rig/T/0"), what="entity from the first datagram")
            ctr = gw.counters("rig")
            assert ctr["udp_reports"] == 1, ctr
            other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            other.bind(("127.0.0.2", 0))
            same_ip = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            same_ip.bind(("127.0.0.1", 0))
            junk = b"\0\0\0\x58" + b"\0" * 7  # 11 bytes: a truncated header
            t0 = time.monotonic()
            other.sendto(junk, srv.client_udp)
            same_ip.sendto(junk, srv.client_udp)
            srv.report(2.0)
            wait_until(lambda: gw.entities("rig/T/0")["rig/T/0"]["samples"] == 2,
                       what="the datagram after the foreign ones applied")
            ctr = gw.counters("rig")
            assert ctr["bad_messages"] == 0 and ctr["connects"] == 1 and ctr["reconnects"] == 0, ctr
            assert ctr["udp_foreign_dropped"] == 2, ctr
            data_port = srv.data.getsockname()[1]
            for sock in (other, same_ip):
                sender = "%s:%d" % sock.getsockname()
                line = (f"peer 127.0.0.1:{srv.port}: UDP datagram of 11 bytes from {sender}, not "
                        f"from the server (127.0.0.1:{data_port}): dropped")
                assert gw.wait_log(line, timeout=2), line
            for k in range(0, N, 20):  # 20 at a time: within a loaded runner's receive buffer
                for _ in range(20):
                    other.sendto(junk, srv.client_udp)
                wait_until(lambda: gw.counters("rig")["udp_foreign_dropped"] == k + 22,
                           what=f"{k + 20} of the flood counted")
            srv.report(3.0)
            wait_until(lambda: gw.entities("rig/T/0")["rig/T/0"]["samples"] == 3,
                       what="served after the flood")
            ctr = gw.counters("rig")
            assert ctr["bad_messages"] == 0 and ctr["reconnects"] == 0, ctr
            assert gw.adapter("rig")["state"] == "streaming"
            # at most 5 lines per 10 s window (2 above + 3 of the flood); the log reader may trail
            wait_until(lambda: len([ln for ln in gw.lines if "not from the server" in ln]) >= 5,
                       what="the flood's lines")
            windows = int((time.monotonic() - t0) // 10) + 1
            lines = [ln for ln in gw.lines if "not from the server" in ln]
            assert len(lines) <= 5 * windows, (len(lines), windows)
            print(f"{N + 2} foreign datagrams dropped and counted, {len(lines)} log lines")
            other.close()
            same_ip.close()
        except Exception:
            print(gw.log()[-4000:])
            raise
        finally:
            srv.close()
    print("OK")


if __name__ == "__main__":
    main()
