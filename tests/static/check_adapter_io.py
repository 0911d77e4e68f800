#!/usr/bin/env python3
"""Adapters do their I/O through core (ctest static/adapter_io): no file under adapters/ calls
socket(), recvfrom(), sendto(), sendmmsg(), recvmmsg() (core's UDP endpoint does:
core/net/udp_endpoint.h, core/net/udp_batch.h), libevent's event_new/event_add/event_del/event_free/
event_active or any evtimer_* (core's timers do: core/net/timer.h), any bufferevent_* (core's TCP
transport does: core/net/transport_client.h, core/net/transport_server.h, core/net/tcp_conn.h), or any of
libevent's evutil_* / EVUTIL_* helpers (a socket is closed with xg_tcp_close_fd, core/net/tcp_conn.h;
a socket error is errno, its text strerror), or libevent's evconnlistener_* calls (core's
xg_net_listener_* in core/net/net.h, or the TCP transport), or libevent's byte queues and
constants: evbuffer_*, struct evbuffer, ev_ssize_t, BEV_*, LEV_OPT_*, EV_READ/EV_WRITE/...
(core/net/tcp_conn.h's xg_tcp_in_* / xg_tcp_printf / XG_TCP_*, core/net/net.h's
XG_NET_LISTEN_*). No core header an adapter includes pulls in libevent either, so such a name
would also fail to compile. Comments and string literals are not looked at.

PENDING lists what is still allowed, per file and kind, while it is being converted: the list
only shrinks. An entry that no longer matches anything is an error too (delete it).
Usage: check_adapter_io.py SOURCE_DIR. Prints each call with file and line; exits 1 if there is
any, 2 if the folder has no adapters."""
import glob
import os
import re
import sys

KINDS = {
    "udp": re.compile(r"\b(socket|recvfrom|sendto|sendmmsg|recvmmsg)\s*\("),
    "event": re.compile(r"\b(event_new|event_add|event_del|event_free|event_active)\s*\(|"
                        r"\bevtimer_\w+"),
    "tcp": re.compile(r"\bbufferevent_\w+"),
    "evutil": re.compile(r"\b(evutil|EVUTIL)_\w+"),
    "listener": re.compile(r"\bevconnlistener_\w+\s*\("),
    "buffer": re.compile(r"\bevbuffer_\w+|\bstruct\s+evbuffer\b|\bev_u?ssize_t\b|\bev_u?int\d+_t\b|"
                         r"\b(BEV|LEV_OPT|EVLOOP|EV)_[A-Z_]+\b"),
}

# Folders not looked at yet.
SKIP_DIRS = set()

# file -> kinds still allowed there (pending conversion; shrink it, never grow it).
PENDING = {
    # none: every adapter outside SKIP_DIRS is converted
}


def strip(src):
    """The source with comments and string/char literals blanked (newlines kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files = sorted(glob.glob(os.path.join(root, "adapters", "*", "*.[ch]")))
    if not files:
        print("check_adapter_io: no adapters/*/*.[ch] (wrong directory?)", file=sys.stderr)
        return 2
    bad, used, checked = [], set(), 0
    for f in files:
        rel = os.path.relpath(f, root)
        if os.path.dirname(rel) in SKIP_DIRS:
            continue
        checked += 1
        text = strip(open(f, encoding="utf-8").read())
        for lineno, line in enumerate(text.split("\n"), 1):
            for kind, rx in KINDS.items():
                m = rx.search(line)
                if not m:
                    continue
                if kind in PENDING.get(rel, ()):
                    used.add((rel, kind))
                    continue
                bad.append(f"{rel}:{lineno}: {m.group(0).rstrip('(').strip()} ({kind}): "
                           "use core's " + {"udp": "UDP endpoint (core/net/udp_endpoint.h)",
                                            "event": "timers (core/net/timer.h) or UDP endpoint",
                                            "tcp": "TCP transport",
                                            "evutil": "xg_tcp_close_fd (core/net/tcp_conn.h) or "
                                                      "errno/strerror",
                                            "listener": "xg_net_listener_* (core/net/net.h) or "
                                                        "TCP transport",
                                            "buffer": "xg_tcp_in_*, xg_tcp_write/xg_tcp_printf, "
                                                      "XG_TCP_* (core/net/tcp_conn.h) or "
                                                      "XG_NET_LISTEN_* (core/net/net.h)"}[kind])
    for rel, kinds in sorted(PENDING.items()):
        for kind in sorted(kinds):
            if (rel, kind) not in used:
                bad.append(f"{rel}: listed as pending ({kind}) but has no such call: "
                           "delete the entry from PENDING")
    for b in bad:
        print("check_adapter_io: " + b, file=sys.stderr)
    if not bad:
        print(f"check_adapter_io: {checked} adapter files, no socket, event, bufferevent, "
              f"evutil, listener or evbuffer call, no libevent constant ({sum(len(k) for k in PENDING.values())} pending; "
              f"not checked yet: {', '.join(sorted(SKIP_DIRS)) or 'none'})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
