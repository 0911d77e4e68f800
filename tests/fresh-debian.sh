#!/bin/sh
# The README's quick start, verbatim, on a pristine Debian 12 root (docs/development.md).
#
#   sh tests/fresh-debian.sh [DIR]        as root; needs mmdebstrap and util-linux's unshare
#
# Makes a minimal Debian 12 (mmdebstrap --variant=minbase bookworm, with bookworm-updates and
# bookworm-security) in DIR (default /tmp/xrgate-fresh-debian, made anew), then runs the code
# blocks of README.md's "Quick start" in it as root, line by line as a new user would: the
# prerequisites, `git clone` of this checkout (its committed HEAD: `<this repository>` is the
# one word replaced), `make run` (in the background, as in a first terminal) until the admin API
# listens, the curl lines and `build/xrgate --check` (a second terminal), then `make test`.
# Each command runs in a mount and a PID namespace of its own with the root pivoted (not a
# chroot: the container test's Docker needs a real root), the host's network, and /proc, /sys,
# /dev and a tmpfs /run mounted inside; nothing stays mounted on the host. Prints each step's
# time and exit code; exits non-zero when a step fails. A TLS-intercepting proxy's CAs
# (/usr/local/share/ca-certificates/*.crt) are copied in as on any machine behind it
# (NODE_EXTRA_CA_CERTS for the inspector's npm ci).
set -eu
DIR="${1:-/tmp/xrgate-fresh-debian}"
SRC="$(cd "$(dirname "$0")/.." && pwd)"
LOG="$DIR.log"
[ "$(id -u)" -eq 0 ] || { echo "fresh-debian: run as root" >&2; exit 2; }
command -v mmdebstrap >/dev/null || { echo "fresh-debian: apt-get install mmdebstrap" >&2; exit 2; }

ts() { date -u +%H:%M:%S; }
# the README's Quick start section, its ```sh blocks, one file each (block1, block2, ...)
BLOCKS="$(mktemp -d)"
trap 'rm -rf "$BLOCKS"' EXIT
awk -v out="$BLOCKS" '
    /^## / { inq = ($0 == "## Quick start") }
    inq && /^```sh$/ { n++; on = 1; next }
    on && /^```$/ { on = 0; next }
    on { print > (out "/block" n) }' "$SRC/README.md"
[ -s "$BLOCKS/block3" ] || { echo "fresh-debian: README's Quick start has no 3 sh blocks" >&2; exit 2; }

# in the pristine root as a machine of its own: in_root 'command'
in_root() {
    unshare --mount --pid --fork --propagation private sh -c '
set -e
R="$1"
mount --rbind "$R" "$R"
mount -t proc proc "$R/proc"
mount --rbind /sys "$R/sys"
mount --rbind /dev "$R/dev"
mount -t tmpfs tmpfs "$R/run"
mkdir -p "$R/src" "$R/.oldroot"
mount --bind "$3" "$R/src"
cd "$R"
pivot_root . .oldroot
umount -l /.oldroot
cd /root
exec env -i HOME=/root TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  NODE_EXTRA_CA_CERTS=/root/proxy-ca.pem bash -e -c "$2"' sh "$DIR" "$1" "$SRC"
}
step() { # step NAME 'command'
    t0=$(date +%s)
    echo "[$(ts)] $1" | tee -a "$LOG"
    rc=0
    in_root "$2" >>"$LOG" 2>&1 || rc=$?
    echo "[$(ts)] $1: rc $rc after $(($(date +%s) - t0)) s" | tee -a "$LOG"
    return $rc
}

rm -rf "$DIR" && : >"$LOG"
t0=$(date +%s)
echo "[$(ts)] mmdebstrap --variant=minbase bookworm $DIR" | tee -a "$LOG"
mmdebstrap --quiet --variant=minbase bookworm "$DIR" \
    "deb http://deb.debian.org/debian bookworm main" \
    "deb http://deb.debian.org/debian bookworm-updates main" \
    "deb http://deb.debian.org/debian-security bookworm-security main" >>"$LOG" 2>&1
cp /etc/resolv.conf "$DIR/etc/"
touch "$DIR/root/proxy-ca.pem"
for c in /usr/local/share/ca-certificates/*.crt; do
    [ -f "$c" ] || continue
    mkdir -p "$DIR/usr/local/share/ca-certificates" && cp "$c" "$DIR/usr/local/share/ca-certificates/"
    cat "$c" >>"$DIR/root/proxy-ca.pem"
done
echo "[$(ts)] a pristine root in $(($(date +%s) - t0)) s: $(in_root 'dpkg -l | grep -c ^ii') packages;" \
    "make: $(in_root 'command -v make || echo none'), git: $(in_root 'command -v git || echo none')" |
    tee -a "$LOG"

# block 1: the prerequisites and the clone, then make run in the background
sed 's|<this repository>|/src|; /^make run/d' "$BLOCKS/block1" >"$DIR/root/block1"
grep -q '^make run' "$BLOCKS/block1"
step "README block 1 (but make run)" "$(cat "$DIR/root/block1")"
t0=$(date +%s)
echo "[$(ts)] make run (a first terminal)" | tee -a "$LOG"
in_root 'cd xrgate && exec make run' >"$DIR.make-run.log" 2>&1 &
RUN=$!
until grep -q "admin API listening" "$DIR.make-run.log"; do
    kill -0 $RUN 2>/dev/null || { echo "fresh-debian: make run ended:" >&2; tail "$DIR.make-run.log" >&2; exit 1; }
    sleep 1
done
echo "[$(ts)] make run: the gateway runs after $(($(date +%s) - t0)) s" | tee -a "$LOG"
ok=0
step "README block 2 (a second terminal)" "cd xrgate && $(cat "$BLOCKS/block2")" || ok=1
pkill -INT -f '^\./build/xrgate' || true
wait $RUN || true
step "README block 3" "cd xrgate && $(cat "$BLOCKS/block3")" || ok=1
echo "[$(ts)] done: $( [ $ok = 0 ] && echo every step passed || echo a step FAILED ) (log: $LOG)"
exit $ok
