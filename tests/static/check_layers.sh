#!/bin/sh
# The layering rules of docs/development.md "Layers", checked on the sources (ctest static/layers):
# 1. adapters reach libevent only through the transport module (core/net/transport.h), never
#    <event2/...> directly;
# 2. protocol codecs and sessions include neither libevent nor the transport module: they take
#    bytes and time in and give bytes, events and deadlines out;
# 3. no product source file (adapters/, core/ and its folders, gateway/, mappings/) is longer
#    than 800 lines: a longer one is split along its seams (an adapter's glue files, *_adapter.c,
#    *_client.c, *_server.c, keep the wiring of transport, session and table: configuration goes
#    to <proto>_conf.c, codecs, sessions and encoders to files of their own).
# Prints every violation with its file and line; exits 1 if there is any.
cd "${1:-.}" || exit 2
bad=0
if grep -n '#include <event2/' adapters/*/*.[ch]; then
    echo "check_layers: the lines above include libevent directly; include \"core/net/transport.h\"" >&2
    bad=1
fi
pure=$(ls adapters/*/*codec*.[ch] adapters/*/*session*.[ch] adapters/*/*_msg.[ch] \
          adapters/*/*json*.[ch] adapters/*/gamestate_*.[ch] 2>/dev/null)
if [ -z "$pure" ]; then
    echo "check_layers: no codec or session files found (wrong directory?)" >&2
    exit 2
fi
# shellcheck disable=SC2086
if grep -nE '#include (<event2/|"core/net/transport(_client|_server)?\.h")' $pure; then
    echo "check_layers: the codec/session lines above include the reactor or the transport" >&2
    bad=1
fi
# every product source, in any folder depth (core/ has folders by layer)
files=$(find adapters core gateway mappings -name '*.[ch]' | sort)
if [ -z "$files" ]; then
    echo "check_layers: no product sources found (wrong directory?)" >&2
    exit 2
fi
for f in $files; do
    n=$(wc -l < "$f")
    [ "$n" -gt 800 ] || continue
    case "$f" in
    adapters/*/*_adapter.c | adapters/*/*_client.c | adapters/*/*_server.c)
        echo "check_layers: $f has $n lines (an adapter glue file, more than 800): move its" \
             "configuration to <proto>_conf.c and other non-glue code to files of their own" >&2 ;;
    *)
        echo "check_layers: $f has $n lines (more than 800): split it along its seams" >&2 ;;
    esac
    bad=1
done
[ "$bad" = 0 ] && echo "check_layers: ok ($(echo "$pure" | wc -l) codec/session files pure)"
exit "$bad"
