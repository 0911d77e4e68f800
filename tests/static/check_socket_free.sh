#!/bin/sh
# A socket-free session's unit test links no reactor and no socket call (ctest static/socket_free):
# `nm -u` of each test binary given must name none of libevent's functions (event_*, evbuffer_*,
# bufferevent_*, evutil_*, evdns_*, evconnlistener_*) and none of the socket calls (socket, bind,
# connect, listen, accept, send/recv and their msg/mmsg/to/from forms, getaddrinfo, setsockopt).
# The session files reaching the adapter glue, core's sockets or libevent pull them in.
# Usage: check_socket_free.sh BINARY...; exits 1 naming each symbol found, 2 if a binary cannot
# be read (or is not a cmocka test: its symbol list would prove nothing).
[ $# -gt 0 ] || { echo "usage: $0 BINARY..." >&2; exit 2; }
bad=0
for b in "$@"; do
    und=$(nm -u "$b" | awk '{print $NF}' | sed 's/@.*//') || exit 2
    if ! echo "$und" | grep -qx '_cmocka_run_group_tests'; then
        echo "check_socket_free: $b: no cmocka symbol in nm -u (not a unit test binary?)" >&2
        exit 2
    fi
    found=$(echo "$und" | grep -E '^(event_|evbuffer_|bufferevent_|evutil_|evdns_|evconnlistener_)|^(socket|socketpair|bind|connect|listen|accept|accept4|send|sendto|sendmsg|sendmmsg|recv|recvfrom|recvmsg|recvmmsg|getaddrinfo|setsockopt|getsockopt|getsockname)$')
    if [ -n "$found" ]; then
        echo "check_socket_free: $b links:" $found >&2
        bad=1
    else
        echo "check_socket_free: $b: no libevent, no socket call ($(echo "$und" | wc -l) undefined symbols)"
    fi
done
exit "$bad"
