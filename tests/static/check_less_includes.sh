#!/bin/sh
# The LESS adapter's files form layers without an include cycle (ctest static/less_includes):
#   codec (less_codec*, less_msg, less_frame, less_pose) <- imap, mapping <- session
#   (less_session*, less_send) <- glue (less_adapter*, less_tcp, less_udp, less_conf).
# Every #include "adapters/less/..." of a file in adapters/less/ is an edge between the layers of
# the two files; tsort(1) fails on a cycle, and a session file that includes a glue header is
# named. A new file must be given its layer below. Exits 1 on a violation, 2 on a usage error.
cd "${1:-.}/adapters/less" 2>/dev/null || { echo "check_less_includes: no adapters/less" >&2; exit 2; }
layer() {
    case "$1" in
        less_codec.[ch] | less_codec_priv.h | less_msg.c | less_frame.c | less_pose.c) echo codec ;;
        less_imap.[ch]) echo imap ;;
        less_mapping.[ch]) echo mapping ;;
        less_session.[ch] | less_session_udp.c | less_send.c) echo session ;;
        less_adapter.c | less_adapter_priv.h | less_adapter_io.h | less_tcp.c | less_udp.c | \
            less_conf.c) echo glue ;;
        *) echo unknown ;;
    esac
}
bad=0
edges=$(mktemp) || exit 2
trap 'rm -f "$edges"' EXIT
for f in *.[ch]; do
    from=$(layer "$f")
    if [ "$from" = unknown ]; then
        echo "check_less_includes: $f has no layer: add it to tests/static/check_less_includes.sh" >&2
        bad=1
        continue
    fi
    for inc in $(sed -n 's|^#include "adapters/less/\(.*\)"|\1|p' "$f"); do
        to=$(layer "$inc")
        [ "$from" = "$to" ] && continue
        echo "$from $to" >> "$edges"
        if [ "$from" = session ] && [ "$to" = glue ]; then
            echo "check_less_includes: $f (session) includes $inc (adapter glue)" >&2
            bad=1
        fi
    done
done
if ! sort -u "$edges" | tsort > /dev/null; then
    echo "check_less_includes: the layers above include each other in a cycle" >&2
    bad=1
fi
[ "$bad" = 0 ] && echo "check_less_includes: ok ($(sort -u "$edges" | tr '\n' ';'))"
exit "$bad"
