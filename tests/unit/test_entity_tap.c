/* Unit tests for the per-sample tap of core/table/entity (xg_table_set_sample_tap), the hook a
 * recorder (mcap-record) sees every sample through: called once per applied sample and per
 * button/analog change, with the merged newest sample; not for the entity's origin (split
 * horizon) nor for entities the sink's filter refuses; not for a sample the table drops (capture
 * time not advancing); cleared by a NULL tap and by xg_table_drop_adapter(). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/table/entity.h"

#define MS INT64_C(1000000)

struct seen {
    int n;
    int64_t last_capture;
    double last_x;
    char last_name[XG_NAME_MAX];
};

static void tap(void *user, const struct xg_entity *e, const struct xg_sample *s)
{
    struct seen *v = user;
    v->n++;
    v->last_capture = s->capture_ns;
    v->last_x = s->position.x;
    snprintf(v->last_name, sizeof v->last_name, "%s", xg_entity_name(e));
}

/* sink 2 refuses entities whose source is "hidden" */
static bool accept(void *user, int sink, const struct xg_entity *e)
{
    (void)user, (void)sink;
    return strcmp(xg_entity_source(e), "hidden") != 0;
}

static int feed(struct xg_table *t, int origin, const char *src, int64_t t_ns, double x,
                uint32_t *id)
{
    struct xg_entity_key key = {.source = src, .kind = XG_KIND_RIGID_BODY};
    struct xg_sample s = {.capture_ns = t_ns, .receive_ns = t_ns, .flags = XG_SAMPLE_POSE};
    s.orientation = XG_QUAT_IDENTITY;
    s.position.x = x;
    return xg_table_update_origin(t, origin, &key, &s, id);
}

static void test_tap(void **state)
{
    (void)state;
    struct xg_table *t = xg_table_new(NULL);
    assert_non_null(t);
    xg_table_set_adapter_name(t, 0, "src");
    xg_table_set_adapter_name(t, 1, "rec");
    assert_int_equal(xg_table_set_sample_tap(t, 1, tap, NULL), -EINVAL); /* not a sink yet */
    assert_int_equal(xg_table_add_sink(t, 1, accept, NULL, NULL), 0);
    assert_int_equal(xg_table_add_sink(t, 0, NULL, NULL, NULL), 0); /* the origin, a sink too */
    struct seen rec = {0}, own = {0};
    assert_int_equal(xg_table_set_sample_tap(t, 1, tap, &rec), 0);
    assert_int_equal(xg_table_set_sample_tap(t, 0, tap, &own), 0);
    uint32_t id = 0;
    /* every sample, in order, with its values */
    for (int i = 1; i <= 5; i++)
        assert_int_equal(feed(t, 0, "a", i * MS, i * 0.5, &id), 0);
    assert_int_equal(rec.n, 5);
    assert_true(rec.last_capture == 5 * MS && rec.last_x == 2.5);
    assert_string_equal(rec.last_name, "src/a");
    assert_int_equal(own.n, 0); /* split horizon: never back to the origin */
    /* a dropped sample (capture time did not advance) is not seen */
    assert_int_equal(feed(t, 0, "a", 5 * MS, 9.0, &id), -EAGAIN);
    assert_int_equal(rec.n, 5);
    /* buttons and analogs: one call each, with the pose as it is */
    assert_int_equal(xg_table_set_button(t, id, 3, true), 0);
    assert_int_equal(xg_table_set_analog(t, id, 0, 0.25), 0);
    assert_int_equal(rec.n, 7);
    assert_true(rec.last_x == 2.5);
    /* the sink's filter applies */
    uint32_t hid = 0;
    assert_int_equal(feed(t, 0, "hidden", 6 * MS, 1.0, &hid), 0);
    assert_int_equal(rec.n, 7);
    /* cleared: no more calls */
    assert_int_equal(xg_table_set_sample_tap(t, 1, NULL, NULL), 0);
    assert_int_equal(feed(t, 0, "a", 7 * MS, 1.0, &id), 0);
    assert_int_equal(rec.n, 7);
    /* set again, then the adapter dropped (a reload): cleared with it */
    assert_int_equal(xg_table_set_sample_tap(t, 1, tap, &rec), 0);
    xg_table_drop_adapter(t, 1);
    assert_int_equal(feed(t, 0, "a", 8 * MS, 1.0, &id), 0);
    assert_int_equal(rec.n, 7);
    xg_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_tap)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
