/* Unit tests for vrpn-server's mapping helpers (adapters/vrpn/vrpn_sensor_map.h): natural
 * (numeric-aware) name order, the order in which new entities are numbered (those carrying their
 * source's sensor number first), tracker-name templates, the sensor-number set; and the registry
 * calls the numbering rule uses (vrpn_names_holder, vrpn_names_forget). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/table/entity_priv.h" /* white-box: builds or reads entities' internals */
#include "adapters/vrpn/vrpn_names.h"
#include "adapters/vrpn/vrpn_sensor_map.h"

static void test_natcmp(void **state)
{
    (void)state;
    assert_true(vrpn_natcmp("demo/body2", "demo/body10") < 0);
    assert_true(vrpn_natcmp("demo/body10", "demo/body2") > 0);
    assert_true(vrpn_natcmp("Rig/9", "Rig/10") < 0);
    assert_true(vrpn_natcmp("Rig/10", "Rig/11") < 0);
    assert_true(vrpn_natcmp("a10b2", "a10b10") < 0);
    assert_true(vrpn_natcmp("body", "body0") < 0);
    assert_true(vrpn_natcmp("body9", "bodyA") < 0); /* '9' < 'A' as bytes */
    assert_int_equal(vrpn_natcmp("x/5", "x/5"), 0);
    /* equal as numbers: strcmp decides, so the order stays total */
    assert_true(vrpn_natcmp("b01", "b1") < 0);
    assert_true(vrpn_natcmp("b1", "b01") > 0);
    /* long digit runs do not overflow: compared as digit strings */
    assert_true(vrpn_natcmp("n99999999999999999999", "n100000000000000000000") < 0);
}

static int cmp_str(const void *x, const void *y)
{
    return vrpn_natcmp(*(const char *const *)x, *(const char *const *)y);
}

static void test_natural_sort(void **state)
{
    (void)state;
    const char *v[] = {"demo/body10", "demo/head",  "demo/body2", "demo/body1",
                       "demo/body11", "demo/body0", "demo/body9"};
    const char *want[] = {"demo/body0",  "demo/body1",  "demo/body2", "demo/body9",
                          "demo/body10", "demo/body11", "demo/head"};
    qsort(v, 7, sizeof v[0], cmp_str);
    for (int i = 0; i < 7; i++)
        assert_string_equal(v[i], want[i]);
}

static void test_order_source_numbered_first(void **state)
{
    (void)state;
    static struct xg_entity e[4];
    memset(e, 0, sizeof e);
    e[0].name = "rig/Button0";
    e[0].source_sensor = -1;
    e[1].name = "rig/Rig/10";
    e[1].source_sensor = 10;
    e[2].name = "rig/Rig/2";
    e[2].source_sensor = 2;
    e[3].name = "rig/Analog0";
    e[3].source_sensor = -1;
    const struct xg_entity *p[4] = {&e[0], &e[1], &e[2], &e[3]};
    qsort(p, 4, sizeof p[0], vrpn_sensor_map_order);
    assert_ptr_equal(p[0], &e[2]);
    assert_ptr_equal(p[1], &e[1]);
    assert_ptr_equal(p[2], &e[3]);
    assert_ptr_equal(p[3], &e[0]);
}

static void test_expand(void **state)
{
    (void)state;
    static struct xg_entity e;
    memset(&e, 0, sizeof e);
    e.name = "rig/Wand/0";
    e.kind = XG_KIND_CONTROLLER;
    char out[64];
    vrpn_sensor_map_expand("{origin}", "rig", &e, out, sizeof out);
    assert_string_equal(out, "rig");
    vrpn_sensor_map_expand("t-{kind}-{name}-{x}", "rig", &e, out, sizeof out);
    assert_string_equal(out, "t-controller-rig/Wand/0-{x}");
    /* core/table/names.h's engine: {adapter} is {origin}, {source} the name past "<adapter>/" */
    vrpn_sensor_map_expand("{adapter}:{source}", "rig", &e, out, sizeof out);
    assert_string_equal(out, "rig:Wand/0");
}

static void test_bitset(void **state)
{
    (void)state;
    struct vrpn_bitset b = {0};
    assert_false(vrpn_bitset_get(&b, 0));
    assert_false(vrpn_bitset_get(&b, -1));
    assert_int_equal(vrpn_bitset_set(&b, -1), -EINVAL);
    assert_int_equal(vrpn_bitset_set(&b, 3), 0);
    assert_int_equal(b.bits, 64);
    assert_int_equal(vrpn_bitset_set(&b, 1000), 0); /* grows, new bytes clear */
    assert_int_equal(b.bits, 1024);
    for (int i = 0; i < 1024; i++)
        assert_int_equal(vrpn_bitset_get(&b, i), i == 3 || i == 1000);
    assert_false(vrpn_bitset_get(&b, 5000));
    vrpn_bitset_clear(&b, 3);
    vrpn_bitset_clear(&b, 5000);
    vrpn_bitset_clear(&b, -7);
    assert_false(vrpn_bitset_get(&b, 3));
    assert_true(vrpn_bitset_get(&b, 1000));
    free(b.b);
}

struct forgotten {
    int n, tracker, sensor;
};

static void on_forget(void *user, int i, int tracker, int sensor)
{
    struct forgotten *f = user;
    (void)i;
    f->n++;
    f->tracker = tracker;
    f->sensor = sensor;
}

static void test_holder_and_forget(void **state)
{
    (void)state;
    struct vrpn_names n;
    assert_int_equal(vrpn_names_init(&n, 8), 0);
    int a = vrpn_names_add(&n, "rig/Rig/0", 0, 0, 10);
    int b = vrpn_names_add(&n, "rig/Button0", 0, -1, 11); /* controls only: no sensor */
    assert_int_equal(n.slots[a].ctl, -1);
    assert_int_equal(vrpn_names_holder(&n, 0, 0), a);
    assert_int_equal(vrpn_names_holder(&n, 0, 1), -1);
    assert_int_equal(vrpn_names_holder(&n, 1, 0), -1);
    struct forgotten f = {0};
    vrpn_names_forget(&n, a, on_forget, &f); /* live: left alone */
    assert_int_equal(f.n, 0);
    assert_int_equal(vrpn_names_find(&n, "rig/Rig/0"), a);
    vrpn_names_depart(&n, a, on_forget, &f);
    assert_int_equal(f.n, 0); /* remembered */
    assert_int_equal(vrpn_names_holder(&n, 0, 0), a);
    vrpn_names_forget(&n, a, on_forget, &f); /* a live entity wants its number */
    assert_int_equal(f.n, 1);
    assert_int_equal(f.tracker, 0);
    assert_int_equal(f.sensor, 0);
    assert_int_equal(vrpn_names_find(&n, "rig/Rig/0"), -1);
    assert_int_equal(vrpn_names_holder(&n, 0, 0), -1);
    assert_int_equal(vrpn_names_count(&n), 1);
    assert_int_equal(vrpn_names_find(&n, "rig/Button0"), b);
    vrpn_names_free(&n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_natcmp),
        cmocka_unit_test(test_natural_sort),
        cmocka_unit_test(test_order_source_numbered_first),
        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_bitset),
        cmocka_unit_test(test_holder_and_forget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
