#!/bin/sh
# Installs the Debian packages xrgate needs, and nothing when all of them are present.
# The one place that lists Debian packages: the Makefile, CI and the Dockerfile all call it.
#
#   docker/install-deps.sh            build + test dependencies (default; `make test` uses this)
#   docker/install-deps.sh --build    only what compiling needs (`make run`, the Dockerfile's
#                                     build stage)
#   docker/install-deps.sh --fuzz     build + clang/libFuzzer (`make fuzz`)
#   docker/install-deps.sh --runtime  only what the built binary needs at run time
set -eu

# compile and embed
# (nodejs, npm: the build runs `npm ci` for the web inspector's three.js; cyclonedds-dev and
# cyclonedds-tools (idlc): the dds adapter, ROS 2 topics on Eclipse Cyclone DDS; libzstd-dev,
# liblz4-dev: MCAP chunk compression; zlib1g-dev: the MCAP chunks' CRC-32 (zlib's crc32_z);
# libwslay-dev: WebSocket framing for the webxr adapter)
BUILD_PKGS="build-essential cmake pkg-config libevent-dev libmbedtls-dev libjansson-dev \
libyaml-dev libsrtp2-dev nodejs npm cyclonedds-dev cyclonedds-tools libzstd-dev liblz4-dev \
libwslay-dev zlib1g-dev"
# run the test suite (cmocka unit tests, Python integration tests, static analysis; chromium:
# the web inspector's browser test; docker.io, mmdebstrap, docker-compose: the container test
# builds the image with its own Docker daemon on a base made offline, and brings compose up)
TEST_PKGS="libcmocka-dev python3 curl cppcheck chromium docker.io mmdebstrap docker-compose"
# the man pages' test (test_install): groff checks them, man renders them
TEST_PKGS="$TEST_PKGS groff-base man-db"
# the metrics test (test_metrics_promtool): Prometheus's promtool checks /metrics
TEST_PKGS="$TEST_PKGS prometheus"
# the vmc adapter's interop test: liblo's oscsend/oscdump, an OSC peer that is not ours
TEST_PKGS="$TEST_PKGS liblo-tools"
# the TLS tests (test_tls, test_admin_tls*, test_less_tls, test_check) make their certificates
# with the openssl CLI (under CI=true a missing one fails them, as a missing cppcheck does)
TEST_PKGS="$TEST_PKGS openssl"
# the prediction bench and tests: real motion-capture takes (CMU 01_01, 01_03, Boxing_Toes) in
# Debian's assimp test models (models/BVH/)
TEST_PKGS="$TEST_PKGS assimp-testmodels"
# fuzzing (make fuzz): clang with libFuzzer and the sanitizer runtimes
FUZZ_PKGS="clang libclang-rt-14-dev"
# the binary at run time (netbase: /etc/protocols and /etc/services; libddsc0debian: Cyclone
# DDS for the dds adapter; zlib1g: the mcap adapters' CRC-32)
RUNTIME_PKGS="libevent-2.1-7 libevent-extra-2.1-7 libmbedtls14 libmbedx509-1 libmbedcrypto7 \
libjansson4 libyaml-0-2 libsrtp2-1 libddsc0debian libzstd1 liblz4-1 libwslay1 netbase \
ca-certificates zlib1g"

case "${1:-}" in
--runtime) PKGS="$RUNTIME_PKGS" ;;
--build) PKGS="$BUILD_PKGS" ;;
--fuzz) PKGS="$BUILD_PKGS $FUZZ_PKGS" ;;
""|--test) PKGS="$BUILD_PKGS $TEST_PKGS" ;;
*) echo "usage: $0 [--build|--test|--fuzz|--runtime]" >&2; exit 2 ;;
esac

missing=""
for p in $PKGS; do
    # node/npm from another source (e.g. a nodejs package that bundles npm) count as present
    case "$p" in
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm) command -v npm >/dev/null 2>&1 && continue ;;
    esac
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install-deps: need root (or sudo) to install:$missing" >&2; exit 1
    fi
fi
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
