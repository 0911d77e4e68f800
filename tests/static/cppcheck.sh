#!/bin/sh
# ctest static/cppcheck: cppcheck over the product code with the checked-in suppressions
# (tests/cppcheck-suppressions.txt). Always registered: without cppcheck on PATH it skips
# (exit 77, ctest SKIP_RETURN_CODE), and under CI (CI=1/true/yes, as xgtest.skip() and
# tests/unit/test_skip.h) it fails naming it: docker/install-deps.sh installs cppcheck (TEST_PKGS).
#   tests/static/cppcheck.sh SOURCE_DIR
cd "${1:?usage: cppcheck.sh SOURCE_DIR}" || exit 2
if ! command -v cppcheck >/dev/null 2>&1; then
    case "$(printf '%s' "${CI:-}" | tr 'A-Z' 'a-z')" in
    1 | true | yes)
        echo "FAIL: cppcheck not found (docker/install-deps.sh installs it; CI=true: nothing may" \
            "be skipped on a machine set up by make test)"
        exit 1
        ;;
    esac
    echo "SKIP: cppcheck not found (docker/install-deps.sh installs it)"
    exit 77
fi
exec cppcheck --std=c11 --enable=warning,portability,performance --inline-suppr \
    --error-exitcode=1 -q -I. -D__GNUC__ --suppressions-list=tests/cppcheck-suppressions.txt \
    core gateway mappings adapters
