/* Unit tests for what a configuration reload asks of core/table/entity (gateway/reload.c):
 * xg_table_drop_adapter() removes an adapter's entities (listeners told, as on expiry), forgets
 * it as a sink (dirty set, slots released, no entity routed to it any more), clears its name and
 * per-origin counters, and leaves every other adapter's entities and dirty sets alone; the index
 * can then be given to a new sink that sees the existing entities. xg_table_refilter_sink()
 * applies a sink's new filter: entities leave or enter its view alone (told, slot released,
 * marked dirty for it only). xg_table_set_params() changes stale/expire/horizon for what
 * follows. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/table/entity.h"

#define MS INT64_C(1000000)

struct seen {
    int added, removed;
    int released;
};

static void listener(void *user, const struct xg_entity *e, bool added)
{
    (void)e;
    struct seen *s = user;
    if (added)
        s->added++;
    else
        s->removed++;
}

static void on_release(void *user, const struct xg_entity *e, uint64_t value)
{
    (void)e;
    (void)value;
    ((struct seen *)user)->released++;
}

static uint32_t feed(struct xg_table *t, int origin, const char *src, int64_t t_ns)
{
    struct xg_entity_key key = {.source = src, .kind = XG_KIND_RIGID_BODY};
    struct xg_sample s = {.capture_ns = t_ns, .receive_ns = t_ns, .flags = XG_SAMPLE_POSE};
    s.orientation = XG_QUAT_IDENTITY;
    uint32_t id = 0;
    assert_int_equal(xg_table_update_origin(t, origin, &key, &s, &id), 0);
    return id;
}

static void test_drop_source_and_sink(void **state)
{
    (void)state;
    struct xg_table *t = xg_table_new(NULL);
    assert_non_null(t);
    struct seen seen = {0};
    assert_int_equal(xg_table_add_listener(t, listener, &seen), 0);
    xg_table_set_adapter_name(t, 0, "src");
    xg_table_set_adapter_name(t, 1, "sinkA");
    xg_table_set_adapter_name(t, 2, "sinkB");
    assert_int_equal(xg_table_add_sink(t, 1, NULL, NULL, NULL), 0);
    assert_int_equal(xg_table_add_sink(t, 2, NULL, NULL, NULL), 0);
    assert_int_equal(xg_table_set_sink_slot_free(t, 1, on_release, &seen), 0);
    uint32_t a = feed(t, 0, "a", 1000 * MS);
    uint32_t b = feed(t, 2, "b", 1000 * MS); /* sinkB is a source too */
    *xg_table_sink_slot(t, 1, xg_table_get(t, a)) = 7;
    *xg_table_sink_slot(t, 1, xg_table_get(t, b)) = 8;
    assert_int_equal(xg_table_dirty_count(t, 1), 2);
    assert_int_equal(xg_table_dirty_count(t, 2), 1); /* a only: b is its own */
    assert_int_equal(seen.added, 2);

    /* the source goes: its entity is removed and the listeners told; sinkB keeps b */
    assert_int_equal(xg_table_drop_adapter(t, 0), 1);
    assert_int_equal(seen.removed, 1);
    assert_null(xg_table_get(t, a));
    assert_non_null(xg_table_get(t, b));
    assert_int_equal(xg_table_stats(t)->samples_in[0], 0);
    assert_string_equal(xg_table_adapter_name(t, 0), "");
    assert_int_equal(xg_table_stats(t)->samples_in[2], 1);

    /* sinkA goes: b stays, no longer routed to sink 1, its slot released, dirty set gone */
    int released = seen.released;
    assert_int_equal(xg_table_drop_adapter(t, 1), 0);
    assert_int_equal(seen.released, released + 1);
    assert_false(xg_entity_for_sink(xg_table_get(t, b), 1));
    assert_int_equal(xg_table_dirty_count(t, 1), 0);
    feed(t, 2, "b", 1010 * MS);
    assert_int_equal(xg_table_dirty_count(t, 1), 0); /* not a sink any more */

    /* a new sink on the freed index sees the existing entity */
    assert_int_equal(xg_table_add_sink(t, 1, NULL, NULL, NULL), 0);
    assert_true(xg_entity_for_sink(xg_table_get(t, b), 1));
    feed(t, 2, "b", 1020 * MS);
    assert_int_equal(xg_table_dirty_count(t, 1), 1);
    assert_int_equal(*xg_table_sink_slot(t, 1, xg_table_get(t, b)), 0); /* a fresh cache */

    assert_int_equal(xg_table_drop_adapter(t, -1), 0);
    assert_int_equal(xg_table_drop_adapter(t, XG_MAX_ADAPTERS), 0);
    xg_table_free(t);
}

static bool only_a;
static bool accept_fn(void *user, int sink, const struct xg_entity *e)
{
    (void)user;
    (void)sink;
    return !only_a || !strcmp(xg_entity_name(e), "src/a");
}

static int visit_any(void *user, const struct xg_entity *e, const struct xg_pose *p)
{
    (void)user;
    (void)p;
    assert_string_equal(xg_entity_name(e), "src/a");
    return 0;
}

static int told_in, told_out;
static void told(void *user, const struct xg_entity *e, bool added)
{
    (void)user;
    /* told while the entity is still (or already) in the sink's view */
    assert_true(xg_entity_for_sink(e, 1));
    if (added)
        told_in++;
    else
        told_out++;
}

static void test_refilter(void **state)
{
    (void)state;
    struct xg_table *t = xg_table_new(NULL);
    assert_non_null(t);
    struct seen seen = {0};
    xg_table_set_adapter_name(t, 0, "src");
    assert_int_equal(xg_table_add_sink(t, 1, accept_fn, NULL, NULL), 0);
    assert_int_equal(xg_table_add_sink(t, 2, NULL, NULL, NULL), 0);
    assert_int_equal(xg_table_set_sink_slot_free(t, 1, on_release, &seen), 0);
    uint32_t a = feed(t, 0, "a", 1000 * MS), b = feed(t, 0, "b", 1000 * MS);
    *xg_table_sink_slot(t, 1, xg_table_get(t, b)) = 5;
    assert_int_equal(xg_table_dirty_count(t, 1), 2);
    assert_int_equal(xg_table_refilter_sink(t, 1, told, NULL), 0); /* nothing changed */

    only_a = true; /* b leaves sink 1's view: told, slot released, no longer dirty there */
    assert_int_equal(xg_table_refilter_sink(t, 1, told, NULL), 1);
    assert_int_equal(told_out, 1);
    assert_int_equal(seen.released, 1);
    assert_false(xg_entity_for_sink(xg_table_get(t, b), 1));
    assert_true(xg_entity_for_sink(xg_table_get(t, b), 2));
    size_t visited = xg_table_drain(t, 1, 1000 * MS, visit_any, NULL);
    assert_int_equal(visited, 1); /* a only */
    feed(t, 0, "b", 1010 * MS);
    assert_int_equal(xg_table_dirty_count(t, 1), 0);

    only_a = false; /* b enters again: dirty for sink 1 only (sink 2's set is untouched) */
    size_t d2 = xg_table_dirty_count(t, 2);
    assert_int_equal(xg_table_refilter_sink(t, 1, told, NULL), 1);
    assert_int_equal(told_in, 1);
    assert_true(xg_entity_for_sink(xg_table_get(t, b), 1));
    assert_int_equal(xg_table_dirty_count(t, 1), 1);
    assert_int_equal(xg_table_dirty_count(t, 2), d2);
    assert_int_equal(*xg_table_sink_slot(t, 1, xg_table_get(t, b)), 0);
    (void)a;
    assert_int_equal(xg_table_refilter_sink(t, 5, told, NULL), 0); /* not a sink */
    xg_table_free(t);
}

static void test_set_params(void **state)
{
    (void)state;
    struct xg_table *t = xg_table_new(NULL);
    assert_non_null(t);
    uint32_t a = feed(t, 0, "a", 1000 * MS);
    struct xg_pose p;
    xg_entity_predict(t, a, 1600 * MS, &p);
    assert_int_equal(p.quality, XG_QUALITY_STALE); /* default stale_ms 500 */
    struct xg_table_params np = *xg_table_params(t);
    np.stale_ns = 1000 * MS;
    np.expire_ns = 2000 * MS;
    np.velocity_window_ns = 0; /* keeps the old one */
    xg_table_set_params(t, &np);
    assert_int_equal(xg_table_params(t)->stale_ns, 1000 * MS);
    assert_int_equal(xg_table_params(t)->velocity_window_ns, 100 * MS);
    xg_entity_predict(t, a, 1600 * MS, &p);
    assert_int_not_equal(p.quality, XG_QUALITY_STALE);
    assert_int_equal(xg_table_expire(t, 2500 * MS), 0);
    assert_int_equal(xg_table_expire(t, 3500 * MS), 1);
    xg_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drop_source_and_sink),
        cmocka_unit_test(test_refilter),
        cmocka_unit_test(test_set_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
