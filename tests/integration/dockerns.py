"""A Docker daemon of the test's own that leaves the host as it found it (issue 29).

`dockerd` runs in a network namespace and a mount namespace of its own (`unshare --net --mount
--propagation private`): it cannot see, create or delete the host's interfaces (a `dockerd
--bridge=none` in the host's namespace deletes an existing `docker0`), its iptables state is that
namespace's, and its overlay mounts vanish with it. Its socket and data root are paths of the
test's own.

The namespace has only a loopback interface. Image builds still reach the Debian archive and the
npm registry through `NetnsProxy`: an HTTP proxy (CONNECT for HTTPS, absolute-form requests for
HTTP) whose listening socket is made inside the daemon's namespace on 127.0.0.1 and whose outgoing
connections are made in the host's; a build passes it as the predefined build arguments
`http_proxy` / `https_proxy` (not kept in the image's history). `ns_http_get()` talks HTTP to a
container on the namespace's loopback (`--network host` means the daemon's namespace).

Standard library only (ctypes for setns(2)); util-linux's `unshare` (essential in Debian)."""
import ctypes
import os
import select
import socket
import threading
import urllib.parse

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd):
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"setns(CLONE_NEWNET): {os.strerror(e)}")


class in_netns:
    """`with in_netns(pid):` the calling thread's network namespace is pid's (sockets made in
    the block belong to it and keep it afterwards); restored on exit. Start no thread inside:
    a new thread inherits the namespace."""

    def __init__(self, pid):
        self.target = f"/proc/{pid}/ns/net"

    def __enter__(self):
        self.home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        fd = os.open(self.target, os.O_RDONLY)
        try:
            _setns(fd)
        finally:
            os.close(fd)
        return self

    def __exit__(self, *exc):
        try:
            _setns(self.home)
        finally:
            os.close(self.home)


def same_netns(pid):
    """True when pid shares this process's network namespace."""
    return os.stat(f"/proc/{pid}/ns/net").st_ino == os.stat("/proc/self/ns/net").st_ino


def host_interfaces():
    """{name: (ifindex, is_bridge)} of this process's network namespace: a deleted, added or
    re-created interface (a new index) changes it."""
    out = {}
    for index, name in socket.if_nameindex():
        out[name] = (index, os.path.isdir(f"/sys/class/net/{name}/bridge"))
    return out


# in the new namespaces: makes every mount private (so the daemon's overlay mounts never
# propagate to the host's mount namespace; where / is not a mount point, as in a chroot, that is
# not possible and the daemon's mounts propagate as the host's set-up says, as a plain dockerd's
# do), brings `lo` up (SIOCGIFFLAGS / SIOCSIFFLAGS, IFF_UP), then execs dockerd
_LAUNCH = r"""
import ctypes, fcntl, os, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
MS_REC, MS_PRIVATE = 0x4000, 0x40000
if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
    print("dockerns: cannot make / private (" + os.strerror(ctypes.get_errno()) + "): not a "
          "mount point here (a chroot?)", file=sys.stderr)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
flags = struct.unpack("16sH", fcntl.ioctl(s, 0x8913, struct.pack("16sH", b"lo", 0)))[1]
fcntl.ioctl(s, 0x8914, struct.pack("16sH", b"lo", flags | 1))
s.close()
os.execv(sys.argv[1], sys.argv[1:])
"""


def dockerd_command(dockerd, args):
    """The command that runs `dockerd ARGS` in new network and mount namespaces; the process it
    starts is dockerd itself (unshare and the launcher exec), so Popen.pid is dockerd's pid."""
    return ["unshare", "--net", "--mount", "--propagation", "unchanged", "--",
            "python3", "-c", _LAUNCH, dockerd] + list(args)


def _pipe(a, b):
    socks = [a, b]
    try:
        while True:
            ready, _, _ = select.select(socks, [], [], 300)
            if not ready:
                return
            for s in ready:
                data = s.recv(65536)
                if not data:
                    return
                (b if s is a else a).sendall(data)
    except OSError:
        return
    finally:
        for s in socks:
            try:
                s.close()
            except OSError:
                pass


def _serve(conn):
    buf = b""
    try:
        while b"\r\n\r\n" not in buf:
            data = conn.recv(65536)
            if not data or len(buf) > 65536:
                conn.close()
                return
            buf += data
        line = buf.split(b"\r\n", 1)[0].decode("latin-1").split()
        method, target = line[0], line[1]
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            up = socket.create_connection((host.strip("[]"), int(port)), timeout=30)
            up.settimeout(None)
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            rest = buf.split(b"\r\n\r\n", 1)[1]
            if rest:
                up.sendall(rest)
        else:
            # an origin server accepts the absolute form (RFC 9112 3.2.2): forward as it is
            u = urllib.parse.urlsplit(target)
            up = socket.create_connection((u.hostname, u.port or 80), timeout=30)
            up.settimeout(None)
            up.sendall(buf)
    except (OSError, ValueError, IndexError) as e:
        try:
            conn.sendall(f"HTTP/1.1 502 Bad Gateway\r\n\r\n{e}\n".encode())
        except OSError:
            pass
        conn.close()
        return
    _pipe(conn, up)


class NetnsProxy:
    """An HTTP proxy listening on 127.0.0.1:<port> inside pid's network namespace, connecting
    out from the host's. `build_args()` gives `docker build` its proxy arguments."""

    def __init__(self, pid):
        with in_netns(pid):
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.sock.bind(("127.0.0.1", 0))
            self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=_serve, args=(conn,), daemon=True).start()

    def build_args(self):
        out = []
        for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
            out += ["--build-arg", f"{name}={self.url}"]
        return out

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def ns_http_get(pid, port, path="/healthz", timeout=10):
    """GET http://127.0.0.1:port/path inside pid's network namespace: (status, body bytes)."""
    with in_netns(pid):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.settimeout(timeout)
        s.connect(("127.0.0.1", port))
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                  f"Connection: close\r\n\r\n".encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def pid_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False

