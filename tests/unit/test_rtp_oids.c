/* Unit tests for adapters/rtp/rtp_oids: egress object IDs per entity name, reclaimed when the
 * entity goes (issue 22 item 9). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "adapters/rtp/rtp_oids.h"

static void test_ids_in_order_and_stable(void **state)
{
    (void)state;
    struct rtp_oids m;
    rtp_oids_init(&m);
    struct rtp_oid *a = rtp_oids_get(&m, "demo/head");
    struct rtp_oid *b = rtp_oids_get(&m, "demo/left_hand");
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->oid, 1);
    assert_int_equal(b->oid, 2);
    assert_ptr_equal(rtp_oids_get(&m, "demo/head"), a);
    assert_int_equal(m.n, 2);
    rtp_oids_free(&m);
    assert_int_equal(m.n, 0);
}

/* Removal frees the record; a name that comes back gets a new ID, IDs are never reused; 20,000
 * names churned through leave nothing behind. */
static void test_remove_and_churn(void **state)
{
    (void)state;
    struct rtp_oids m;
    rtp_oids_init(&m);
    assert_int_equal(rtp_oids_get(&m, "x")->oid, 1);
    assert_true(rtp_oids_remove(&m, "x"));
    assert_false(rtp_oids_remove(&m, "x"));
    assert_int_equal(m.n, 0);
    assert_int_equal(rtp_oids_get(&m, "x")->oid, 2);
    char name[64];
    for (int i = 0; i < 20000; i++) {
        snprintf(name, sizeof name, "rx/%08x/Head1-%d", 0x60000000 + i / 100, i % 100);
        struct rtp_oid *o = rtp_oids_get(&m, name);
        assert_non_null(o);
        assert_int_equal(o->oid, (uint64_t)i + 3);
        if (i >= 100) {
            snprintf(name, sizeof name, "rx/%08x/Head1-%d", 0x60000000 + (i - 100) / 100,
                     (i - 100) % 100);
            assert_true(rtp_oids_remove(&m, name));
        }
    }
    assert_int_equal(m.n, 101); /* "x" and the newest 100 */
    rtp_oids_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids_in_order_and_stable),
        cmocka_unit_test(test_remove_and_churn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
