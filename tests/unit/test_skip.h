/* The one skip path of the cmocka unit tests (include after <cmocka.h>): a test that cannot run
 * because a facility it needs is missing (a tool such as the openssl CLI, a kernel file) calls
 * XG_TEST_SKIP("what is missing"). Outside CI the test is skipped (cmocka skip(), with a SKIP
 * line naming it); under CI (the environment variable CI is 1, true or yes: .ci/run, after
 * docker/install-deps.sh installed every test package) a missing facility is a broken set-up and
 * the test FAILS, naming it. The Python tests do the same through tests/integration/xgtest.py
 * (skip(), skip_part()); no test skips any other way. */
#ifndef XG_TEST_SKIP_H
#define XG_TEST_SKIP_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

/** True under CI: the environment variable CI is "1", "true" or "yes" (any case). */
static inline bool xg_test_ci(void)
{
    const char *ci = getenv("CI");
    return ci && (!strcmp(ci, "1") || !strcasecmp(ci, "true") || !strcasecmp(ci, "yes"));
}

/* tests skipped so far in this program (xg_test_exit() turns them into exit status 77) */
static int xg_test_skipped;

/** Skip the current test because `what` (a string naming the missing facility) is missing;
 *  under CI fail it instead. Does not return. A macro, so that cmocka reports the caller's
 *  file and line. */
#define XG_TEST_SKIP(what)                                                                         \
    do {                                                                                           \
        if (xg_test_ci())                                                                          \
            fail_msg("%s is missing (CI=true: nothing may be skipped on a machine set up by "      \
                     "make test)",                                                                 \
                     (what));                                                                      \
        fprintf(stderr, "SKIP: %s is missing\n", (what));                                          \
        xg_test_skipped++;                                                                         \
        skip();                                                                                    \
    } while (0)

/** main()'s exit status from cmocka_run_group_tests()'s result `failed`: the failures, else 77
 *  (ctest's SKIP_RETURN_CODE for unit tests) when a test was skipped, so that ctest shows the
 *  program as skipped instead of passed. */
static inline int xg_test_exit(int failed)
{
    return failed ? failed : xg_test_skipped ? 77 : 0;
}

#endif
