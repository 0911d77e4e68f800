/* Unit tests for the per-sink, per-entity slots of core/table/entity (xg_table_sink_slot): a sink's
 * egress cache starts at 0, is its own (other sinks do not see it), is released through the
 * sink's callback and zeroed when the entity leaves, and a reused table slot starts empty. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/table/entity.h"

#define MS INT64_C(1000000)

struct released {
    int n;
    uint64_t values[8];
    uint32_t ids[8];
};

static void on_release(void *user, const struct xg_entity *e, uint64_t value)
{
    struct released *r = user;
    if (r->n < 8) {
        r->values[r->n] = value;
        r->ids[r->n] = xg_entity_id(e);
    }
    r->n++;
}

static uint32_t feed(struct xg_table *t, const char *src, int64_t t_ns)
{
    struct xg_entity_key key = {.source = src, .kind = XG_KIND_RIGID_BODY};
    struct xg_sample s = {.capture_ns = t_ns, .receive_ns = t_ns, .flags = XG_SAMPLE_POSE};
    s.orientation = XG_QUAT_IDENTITY;
    uint32_t id = 0;
    assert_int_equal(xg_table_update_origin(t, 0, &key, &s, &id), 0);
    return id;
}

static void test_slot_owned_per_sink_and_released(void **state)
{
    (void)state;
    struct xg_table *t = xg_table_new(NULL);
    assert_non_null(t);
    struct released ra = {0}, rb = {0};
    assert_int_equal(xg_table_add_sink(t, 1, NULL, NULL, NULL), 0);
    assert_int_equal(xg_table_add_sink(t, 2, NULL, NULL, NULL), 0);
    assert_int_equal(xg_table_set_sink_slot_free(t, 1, on_release, &ra), 0);
    assert_int_equal(xg_table_set_sink_slot_free(t, 2, on_release, &rb), 0);
    assert_int_equal(xg_table_set_sink_slot_free(t, XG_MAX_ADAPTERS, on_release, &rb), -EINVAL);
    uint32_t a = feed(t, "a", 1000 * MS), b = feed(t, "b", 1000 * MS);
    const struct xg_entity *ea = xg_table_get(t, a), *eb = xg_table_get(t, b);
    uint64_t *sa1 = xg_table_sink_slot(t, 1, ea);
    assert_non_null(sa1);
    assert_int_equal(*sa1, 0);
    *sa1 = 41;
    *xg_table_sink_slot(t, 2, ea) = 42;
    *xg_table_sink_slot(t, 1, eb) = 43;
    /* each sink reads back its own value */
    assert_int_equal(*xg_table_sink_slot(t, 1, ea), 41);
    assert_int_equal(*xg_table_sink_slot(t, 2, ea), 42);
    assert_int_equal(*xg_table_sink_slot(t, 1, eb), 43);
    assert_int_equal(*xg_table_sink_slot(t, 2, eb), 0);
    assert_null(xg_table_sink_slot(t, -1, ea));
    assert_null(xg_table_sink_slot(t, XG_MAX_ADAPTERS, ea));

    /* the entity goes: both sinks release their value for it, once */
    assert_int_equal(xg_table_remove(t, a), 0);
    assert_int_equal(ra.n, 1);
    assert_int_equal(ra.values[0], 41);
    assert_int_equal(ra.ids[0], a);
    assert_int_equal(rb.n, 1);
    assert_int_equal(rb.values[0], 42);

    /* a new entity reuses the freed table slot and starts with empty sink slots */
    uint32_t c = feed(t, "c", 1001 * MS);
    const struct xg_entity *ec = xg_table_get(t, c);
    assert_int_equal(*xg_table_sink_slot(t, 1, ec), 0);
    assert_int_equal(*xg_table_sink_slot(t, 2, ec), 0);
    *xg_table_sink_slot(t, 1, ec) = 44;

    /* a sink clears its slots (stop): its non-zero values are released, the other sink's stay */
    xg_table_sink_slots_clear(t, 1);
    assert_int_equal(ra.n, 3);
    assert_true((ra.values[1] == 43 && ra.values[2] == 44) ||
                (ra.values[1] == 44 && ra.values[2] == 43));
    assert_int_equal(*xg_table_sink_slot(t, 1, xg_table_get(t, b)), 0);
    assert_int_equal(rb.n, 1);

    /* expiry releases too; freeing the table calls nothing */
    *xg_table_sink_slot(t, 2, xg_table_get(t, b)) = 45;
    assert_int_equal(xg_table_expire(t, 1000 * MS + xg_table_params(t)->expire_ns + 1), 1);
    assert_int_equal(rb.n, 2);
    assert_int_equal(rb.values[1], 45);
    *xg_table_sink_slot(t, 2, xg_table_get(t, c)) = 46;
    xg_table_free(t);
    assert_int_equal(rb.n, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slot_owned_per_sink_and_released),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
