#!/bin/sh
# Run every libFuzzer target in BUILD_DIR for SECONDS each, with its seed corpus:
#   tests/fuzz/run.sh BUILD_DIR SECONDS
# Seeds come from tests/vectors/<proto>/, tests/fuzz/seeds/<name>/, the config files, and the
# recorded sessions and take in tests/vectors/ (copied into the build tree's corpus).
# Crashes are written to BUILD_DIR/fuzz-findings/<target>/; exit status 1 if any target failed.
set -u
BUILD=${1:?usage: run.sh BUILD_DIR SECONDS}
SECONDS_EACH=${2:-20}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
VEC="$SRC/tests/vectors"
status=0
for bin in "$BUILD"/tests/fuzz_*; do
    [ -x "$bin" ] || continue
    name=$(basename "$bin")
    proto=${name#fuzz_}
    corpus="$BUILD/fuzz-corpus/$name"
    findings="$BUILD/fuzz-findings/$name"
    mkdir -p "$corpus" "$findings"
    for d in "$SRC/tests/vectors/$proto" "$SRC/tests/fuzz/seeds/$name"; do
        [ -d "$d" ] && find "$d" -type f -size -1048576c -exec cp {} "$corpus/" \;
    done
    case "$proto" in
    config)
        cp "$SRC"/conf/*.yaml "$corpus/" 2>/dev/null
        cp "$SRC"/conf/examples/*.yaml "$corpus/" 2>/dev/null
        cp "$SRC"/tests/integration/configs/bad/*.yaml "$corpus/" 2>/dev/null ;;
    vrpn)
        cp "$VEC"/vrpn-recorded/*.bin "$corpus/" ;;
    vrpn_session)
        cp "$VEC"/vrpn/*.bin "$VEC"/vrpn-recorded/*.bin "$corpus/" ;;
    bvh)
        head -c 60000 "$VEC/mocap/cmu_08_10_walk.bvh" > "$corpus/cmu_head.bvh" ;;
    vmc_ingress)
        cp "$SRC"/tests/fuzz/seeds/fuzz_osc/* "$corpus/" ;;
    esac
    echo "== $name: ${SECONDS_EACH}s, $(ls "$corpus" | wc -l) seeds"
    if ! "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$findings/" -print_final_stats=0 "$corpus" \
        > "$BUILD/fuzz-$name.log" 2>&1; then
        echo "!! $name FAILED: see $BUILD/fuzz-$name.log and $findings/"
        tail -30 "$BUILD/fuzz-$name.log"
        status=1
    else
        grep -E "^Done|#[0-9]+.*DONE" "$BUILD/fuzz-$name.log" | tail -1
    fi
done
exit $status
