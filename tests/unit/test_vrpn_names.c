/* Unit tests for vrpn-server's sensor-name registry (adapters/vrpn/vrpn_names.h): a name keeps its
 * (tracker, sensor) while its entity lives and, after it departed, while it is among the newest
 * dep_max departed names; older departed names are forgotten (reported, so the sensor number can
 * be given out again) and their storage is reused, so a churn of many names does not grow it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "adapters/vrpn/vrpn_names.h"

struct forgotten {
    int n;
    int sensors[16];
};

static void on_forget(void *user, int i, int tracker, int sensor)
{
    struct forgotten *f = user;
    (void)i;
    assert_int_equal(tracker, 0);
    if (f->n < 16) f->sensors[f->n] = sensor;
    f->n++;
}

static void test_live_and_back(void **state)
{
    (void)state;
    struct vrpn_names n;
    assert_int_equal(vrpn_names_init(&n, 4), 0);
    int a = vrpn_names_add(&n, "src/A", 0, 1, 10);
    int b = vrpn_names_add(&n, "src/B", 0, 0, 11);
    assert_true(a >= 0 && b >= 0 && a != b);
    assert_int_equal(vrpn_names_find(&n, "src/A"), a);
    assert_int_equal(vrpn_names_find(&n, "src/B"), b);
    assert_int_equal(vrpn_names_find(&n, "src/C"), -1);
    struct forgotten f = {0};
    vrpn_names_depart(&n, a, on_forget, &f);
    vrpn_names_depart(&n, b, on_forget, &f);
    assert_int_equal(f.n, 0);
    assert_int_equal(vrpn_names_count(&n), 2);
    assert_int_equal(n.slots[a].id, 0);
    /* both come back (other order, new ids): same index, same sensor */
    assert_int_equal(vrpn_names_find(&n, "src/B"), b);
    vrpn_names_live(&n, b, 21);
    vrpn_names_live(&n, vrpn_names_find(&n, "src/A"), 20);
    assert_int_equal(n.slots[a].sensor, 1);
    assert_int_equal(n.slots[b].sensor, 0);
    assert_int_equal(n.slots[a].id, 20);
    assert_int_equal(n.n_dep, 0);
    vrpn_names_free(&n);
}

static void test_departed_bounded(void **state)
{
    (void)state;
    struct vrpn_names n;
    assert_int_equal(vrpn_names_init(&n, 3), 0);
    char name[32];
    int idx[6];
    for (int k = 0; k < 6; k++) {
        snprintf(name, sizeof name, "src/%d", k);
        idx[k] = vrpn_names_add(&n, name, 0, k, (uint32_t)(100 + k));
    }
    struct forgotten f = {0};
    for (int k = 0; k < 6; k++)
        vrpn_names_depart(&n, idx[k], on_forget, &f);
    /* the 3 oldest departed are forgotten, oldest first; the 3 newest are remembered */
    assert_int_equal(f.n, 3);
    assert_int_equal(f.sensors[0], 0);
    assert_int_equal(f.sensors[1], 1);
    assert_int_equal(f.sensors[2], 2);
    assert_int_equal(vrpn_names_count(&n), 3);
    assert_int_equal(vrpn_names_find(&n, "src/0"), -1);
    assert_int_equal(vrpn_names_find(&n, "src/5"), idx[5]);
    /* a remembered name that comes back leaves the departed list (not forgotten later) */
    vrpn_names_live(&n, idx[3], 200);
    for (int k = 0; k < 3; k++) {
        snprintf(name, sizeof name, "new/%d", k);
        vrpn_names_depart(&n, vrpn_names_add(&n, name, 0, 10 + k, 1), on_forget, &f);
    }
    assert_int_equal(vrpn_names_find(&n, "src/3"), idx[3]);
    assert_int_equal(n.slots[idx[3]].sensor, 3);
    assert_int_equal(vrpn_names_find(&n, "src/4"), -1);
    assert_int_equal(vrpn_names_find(&n, "src/5"), -1);
    vrpn_names_free(&n);
}

static void test_churn_reuses_storage(void **state)
{
    (void)state;
    struct vrpn_names n;
    assert_int_equal(vrpn_names_init(&n, 16), 0);
    char name[32];
    int live[4];
    struct forgotten f = {0};
    for (int k = 0; k < 100000; k++) { /* 100 000 distinct names, 4 alive at once */
        snprintf(name, sizeof name, "churn/%d", k);
        assert_int_equal(vrpn_names_find(&n, name), -1);
        if (k >= 4) vrpn_names_depart(&n, live[k % 4], on_forget, &f);
        live[k % 4] = vrpn_names_add(&n, name, 0, k, (uint32_t)k + 1);
        assert_true(live[k % 4] >= 0);
    }
    assert_int_equal(f.n, 100000 - 4 - 16); /* all but the live and the 16 newest departed */
    assert_int_equal(vrpn_names_count(&n), 4 + 16);
    assert_true(n.n_slots <= 4 + 16 + 1); /* storage reused, not grown */
    assert_int_equal(vrpn_names_find(&n, "churn/99999"), live[99999 % 4]);
    assert_int_equal(vrpn_names_find(&n, "churn/99979"), -1);
    assert_true(vrpn_names_find(&n, "churn/99980") >= 0);
    vrpn_names_free(&n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_and_back),
        cmocka_unit_test(test_departed_bounded),
        cmocka_unit_test(test_churn_reuses_storage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
