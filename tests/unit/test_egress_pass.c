/* Unit tests for cut-through egress and shared prediction (issue 19 items 1 and 3): the drain
 * limit of core/table/entity (slices keep the rest of the set in order), the pass of
 * core/table/egress_pass (first slice of every sink before any sink's second, whole-frame sinks
 * drained once, a sink that takes nothing does not loop), the cut-through hook (after XG_CUT_AFTER
 * updates of a long batch, never for a short one), and the pose cache of core/table/pose_cache (one
 * prediction per entity per pass, invalidated by a new sample or a new pass). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/table/egress_pass.h"
#include "core/table/entity.h"
#include "core/table/pose_cache.h"

#define MS INT64_C(1000000)
#define T0 (INT64_C(1000) * 1000 * MS)

static int wakes[4];

static void wake_cb(void *user, int sink)
{
    (void)user;
    wakes[sink]++;
}

/* Source 0 and sinks 1, 2, 3. */
static struct xg_table *new_table(void)
{
    struct xg_table *t = xg_table_new(NULL);
    assert_non_null(t);
    for (int i = 1; i <= 3; i++)
        assert_int_equal(xg_table_add_sink(t, i, NULL, wake_cb, NULL), 0);
    memset(wakes, 0, sizeof wakes);
    return t;
}

/* Entity "e<k>" at t_ns moving along x at 1 m/s (reported velocity). */
static uint32_t push(struct xg_table *t, int k, int64_t t_ns)
{
    char src[16];
    snprintf(src, sizeof src, "e%d", k);
    struct xg_entity_key key = {.source = src};
    struct xg_sample s = {.capture_ns = t_ns,
                          .flags = XG_SAMPLE_POSE | XG_SAMPLE_VELOCITY,
                          .position = {(double)k, 0, 0},
                          .orientation = XG_QUAT_IDENTITY,
                          .velocity = {1, 0, 0}};
    uint32_t id = 0;
    assert_int_equal(xg_table_update_origin(t, 0, &key, &s, &id), 0);
    return id;
}

/* ---- a log of visits: (sink, entity id, pose) ---- */

struct visit {
    int sink;
    uint32_t id;
    struct xg_pose pose;
};

struct log {
    struct xg_table *t;
    struct visit v[512];
    int n;
    int64_t now[4]; /* the now_ns each sink passes to xg_table_drain */
    bool lazy[4];   /* this sink's drain does not call xg_table_drain */
    int drains[4];  /* drain calls per sink */
    int cur;
};

static int record(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    struct log *l = user;
    assert_true(l->n < 512);
    l->v[l->n++] = (struct visit){l->cur, xg_entity_id(e), *pose};
    return 0;
}

static void drain(void *user, int sink)
{
    struct log *l = user;
    l->drains[sink]++;
    if (l->lazy[sink]) return;
    l->cur = sink;
    xg_table_drain(l->t, sink, l->now[sink], record, l);
}

/* ---- the drain limit ---- */

static void test_drain_limit_keeps_order(void **state)
{
    (void)state;
    struct xg_table *t = new_table();
    uint32_t id[100];
    for (int k = 0; k < 100; k++) /* past the first list capacity (64) */
        id[k] = push(t, k, T0);
    assert_int_equal(wakes[1], 1); /* woken once: empty -> non-empty */
    assert_int_equal(xg_table_dirty_count(t, 1), 100);
    struct log l = {.t = t};
    xg_table_set_drain_limit(t, 1, 30);
    assert_int_equal(xg_table_drain(t, 1, T0, record, &l), 30);
    assert_int_equal(xg_table_dirty_count(t, 1), 70);
    for (int k = 0; k < 30; k++)
        assert_int_equal(l.v[k].id, id[k]);
    /* a pending entity marked again stays where it is; a drained one joins the end */
    push(t, 40, T0 + MS);
    push(t, 5, T0 + MS);
    assert_int_equal(xg_table_dirty_count(t, 1), 71);
    assert_int_equal(wakes[1], 1); /* the set never became empty: no second wake */
    /* more marks than the free space at the end: the consumed front is reused */
    for (int k = 100; k < 160; k++)
        push(t, k, T0);
    assert_int_equal(xg_table_dirty_count(t, 1), 131);
    assert_int_equal(xg_table_drain(t, 1, T0, record, &l), 30);
    xg_table_set_drain_limit(t, 1, 0); /* the rest, whole */
    assert_int_equal(xg_table_drain(t, 1, T0, record, &l), 101);
    assert_int_equal(xg_table_dirty_count(t, 1), 0);
    assert_int_equal(l.n, 161);
    /* order: e0..e99, then e5 (re-marked after it was drained), then e100..e159 */
    for (int k = 0; k < 100; k++)
        assert_int_equal(l.v[k].id, id[k]);
    assert_int_equal(l.v[100].id, id[5]);
    for (int k = 100; k < 160; k++)
        assert_int_equal(l.v[k + 1].id, xg_entity_id(xg_table_get(t, (uint32_t)(k + 1))));
    /* sink 2 was never limited: one drain takes everything */
    struct log l2 = {.t = t};
    assert_int_equal(xg_table_drain(t, 2, T0, record, &l2), 160);
    /* empty now: the next mark wakes again */
    push(t, 0, T0 + 2 * MS);
    assert_int_equal(wakes[1], 2);
    xg_table_free(t);
}

static void test_drain_limit_skips_removed(void **state)
{
    (void)state;
    struct xg_table *t = new_table();
    uint32_t a = push(t, 0, T0), b = push(t, 1, T0), c = push(t, 2, T0);
    assert_int_equal(xg_table_remove(t, a), 0);
    struct log l = {.t = t};
    xg_table_set_drain_limit(t, 1, 1);
    /* the removed entity does not count against the limit */
    assert_int_equal(xg_table_drain(t, 1, T0, record, &l), 1);
    assert_int_equal(l.v[0].id, b);
    assert_int_equal(xg_table_drain(t, 1, T0, record, &l), 1);
    assert_int_equal(l.v[1].id, c);
    assert_int_equal(xg_table_drain(t, 1, T0, record, &l), 0);
    assert_int_equal(xg_table_dirty_count(t, 1), 0);
    xg_table_free(t);
}

/* ---- the pass ---- */

static void test_pass_interleaves_first_slices(void **state)
{
    (void)state;
    struct xg_table *t = new_table();
    uint32_t id[20];
    for (int k = 0; k < 20; k++)
        id[k] = push(t, k, T0);
    struct log l = {.t = t};
    /* sinks 1 and 2 sliced (send on change), sink 3 whole (a frame per drain) */
    struct xg_egress_plan plan = {.due = 0xe, .sliced = 0x6, .first_slice = 1};
    plan.slice[1] = 10;
    plan.slice[2] = 8;
    struct xg_egress_result r;
    xg_egress_pass_run(t, T0, &plan, drain, &l, &r);
    assert_int_equal(l.n, 60);
    /* round 1: sink 1 e0, sink 2 e0, sink 3 all 20 */
    assert_int_equal(l.v[0].sink, 1);
    assert_int_equal(l.v[0].id, id[0]);
    assert_int_equal(l.v[1].sink, 2);
    assert_int_equal(l.v[1].id, id[0]);
    for (int k = 0; k < 20; k++) {
        assert_int_equal(l.v[2 + k].sink, 3);
        assert_int_equal(l.v[2 + k].id, id[k]);
    }
    /* then 10 of sink 1, 8 of sink 2, the last 9 of 1, 8 of 2, the last 3 of 2 */
    static const int runs[][3] = {{1, 1, 10}, {2, 1, 8}, {1, 11, 9}, {2, 9, 8}, {2, 17, 3}};
    int at = 22;
    for (size_t r2 = 0; r2 < sizeof runs / sizeof runs[0]; r2++)
        for (int k = 0; k < runs[r2][2]; k++, at++) {
            assert_int_equal(l.v[at].sink, runs[r2][0]);
            assert_int_equal(l.v[at].id, id[runs[r2][1] + k]);
        }
    assert_int_equal(at, 60);
    assert_int_equal(r.rounds, 4);
    assert_int_equal(r.drains, 3 + 2 + 2 + 1);
    assert_int_equal(l.drains[3], 1);
    for (int s = 1; s <= 3; s++)
        assert_int_equal(xg_table_dirty_count(t, s), 0);
    /* the limits are off again: a plain drain takes everything */
    for (int k = 0; k < 20; k++)
        push(t, k, T0 + MS);
    assert_int_equal(xg_table_drain(t, 1, T0 + MS, record, &l), 20);
    xg_table_free(t);
}

static void test_pass_due_and_lazy_sinks(void **state)
{
    (void)state;
    struct xg_table *t = new_table();
    for (int k = 0; k < 40; k++)
        push(t, k, T0);
    struct log l = {.t = t};
    l.lazy[1] = true; /* takes nothing: drained once, not looped on */
    struct xg_egress_plan plan = {.due = 0x2 | 0x8, .sliced = 0xe}; /* sink 2 not due */
    struct xg_egress_result r;
    xg_egress_pass_run(t, T0, &plan, drain, &l, &r);
    assert_int_equal(l.drains[1], 1);
    assert_int_equal(l.drains[2], 0);
    /* sink 3: the default slice (64) takes all 40 at once */
    assert_int_equal(l.drains[3], 1);
    assert_int_equal(r.drains, 2);
    assert_int_equal(l.n, 40);
    assert_int_equal(xg_table_dirty_count(t, 1), 40);
    assert_int_equal(xg_table_dirty_count(t, 2), 40);
    assert_int_equal(xg_table_dirty_count(t, 3), 0);
    /* an empty due sink is still drained once (a tick may have work of its own) */
    memset(&l.drains, 0, sizeof l.drains);
    plan = (struct xg_egress_plan){.due = 0x8, .sliced = 0x8};
    xg_egress_pass_run(t, T0, &plan, drain, &l, &r);
    assert_int_equal(l.drains[3], 1);
    assert_int_equal(r.rounds, 1);
    xg_table_free(t);
}

/* ---- cut-through: the table calls back at the end of the update that woke sinks ---- */

struct cut_log {
    struct xg_table *t;
    int calls;
    uint64_t woken[8];
    int origin[8];
    size_t dirty1[8];   /* sink 1's set when called */
    struct log *drains; /* when set: run the gateway's first-only pass */
    uint64_t first;     /* sinks this hook already drained in the batch */
};

static void cut_cb(void *user, uint64_t woken, int origin)
{
    struct cut_log *c = user;
    assert_true(c->calls < 8);
    c->woken[c->calls] = woken;
    c->origin[c->calls] = origin;
    c->dirty1[c->calls] = xg_table_dirty_count(c->t, 1);
    c->calls++;
    uint64_t due = woken & ~c->first; /* once per sink per batch (this hook's own rule) */
    if (c->drains && due) {
        struct xg_egress_plan plan = {.due = due}; /* a whole drain each, as the gateway's */
        xg_egress_pass_run(c->t, T0, &plan, drain, c->drains, NULL);
        c->first |= due;
    }
}

/* a drain that pushes (as no adapter does): no cut-through from inside a pass */
static void drain_and_push(void *user, int sink)
{
    struct log *l = user;
    drain(user, sink);
    push(l->t, 50 + sink, T0);
}

static void test_cut_through_hook(void **state)
{
    (void)state;
    struct xg_table *t = new_table();
    struct cut_log c = {.t = t};
    xg_table_set_cut_through(t, cut_cb, &c);
    xg_table_set_cut_after(t, 1); /* at the end of the update that woke a sink */
    uint32_t e0 = push(t, 0, T0);
    assert_int_equal(c.calls, 1); /* after the update: the entity is in every set */
    assert_int_equal(c.woken[0], 0xe);
    assert_int_equal(c.origin[0], 0);
    assert_int_equal(c.dirty1[0], 1);
    push(t, 1, T0); /* the sets were not empty: nobody woken */
    push(t, 0, T0 + MS);
    assert_int_equal(c.calls, 1);
    struct log l = {.t = t};
    xg_table_drain(t, 1, T0, record, &l); /* sink 1 empty again */
    /* the batch ends with the gateway's pass (here an empty one): the next starts at 1 again */
    xg_table_pass_begin(t, T0);
    xg_table_pass_end(t);
    assert_int_equal(xg_table_set_button(t, e0, 3, true), 0);
    assert_int_equal(c.calls, 2);
    assert_int_equal(c.woken[1], 0x2);
    assert_int_equal(xg_table_set_analog(t, e0, 1, 0.5), 0); /* sink 1 not empty now */
    assert_int_equal(c.calls, 2);
    /* a rejected sample wakes nobody */
    xg_table_drain(t, 1, T0, record, &l);
    struct xg_entity_key key = {.source = "bad"};
    struct xg_sample bad = {.capture_ns = T0, .flags = XG_SAMPLE_POSITION, .position = {1e9, 0, 0}};
    assert_int_equal(xg_table_update_origin(t, 0, &key, &bad, NULL), -EINVAL);
    assert_int_equal(c.calls, 2);
    /* updates made during a pass do not call back */
    struct xg_egress_plan plan = {.due = 0x2};
    struct log l2 = {.t = t};
    xg_egress_pass_run(t, T0, &plan, drain_and_push, &l2, NULL);
    assert_int_equal(c.calls, 2);
    xg_table_free(t);
}

static void test_cut_through_first_slice(void **state)
{
    (void)state;
    struct xg_table *t = new_table();
    struct log l = {.t = t};
    struct cut_log c = {.t = t, .drains = &l};
    xg_table_set_cut_through(t, cut_cb, &c);
    xg_table_set_cut_after(t, 1);
    uint32_t id[12];
    /* the first sample of the batch leaves before the second is pushed */
    id[0] = push(t, 0, T0);
    assert_int_equal(l.n, 3);
    for (int s = 0; s < 3; s++) {
        assert_int_equal(l.v[s].sink, s + 1);
        assert_int_equal(l.v[s].id, id[0]);
    }
    /* the sets emptied by it wake their sinks again with the next sample; the next cut of the
     * batch waits twice as long (update 3); this hook sends one first slice per sink and batch,
     * so the sets stay non-empty and nothing wakes a sink again */
    id[1] = push(t, 1, T0);
    assert_int_equal(c.calls, 1);
    assert_int_equal(l.n, 3);
    for (int k = 2; k < 12; k++) {
        id[k] = push(t, k, T0);
        assert_int_equal(c.calls, k < 2 ? 1 : 2);
    }
    assert_int_equal(l.n, 3);
    /* the pass after the batch drains the rest in the sinks' slices */
    struct xg_egress_plan plan = {.due = 0x6, .sliced = 0x6};
    plan.slice[1] = 4;
    plan.slice[2] = 8;
    struct xg_egress_result r;
    xg_egress_pass_run(t, T0, &plan, drain, &l, &r);
    /* sink 1: 4 + 4 + 3 of e1..e11, sink 2: 8 + 3 */
    assert_int_equal(r.drains, 5);
    assert_int_equal(r.rounds, 3);
    assert_int_equal(l.n, 3 + 22);
    assert_int_equal(l.v[3].sink, 1);
    assert_int_equal(l.v[3].id, id[1]);
    assert_int_equal(l.v[7].sink, 2);
    assert_int_equal(l.v[7].id, id[1]);
    assert_int_equal(l.v[15].sink, 1);
    assert_int_equal(l.v[15].id, id[5]);
    assert_int_equal(xg_table_dirty_count(t, 1), 0);
    assert_int_equal(xg_table_dirty_count(t, 2), 0);
    assert_int_equal(xg_table_dirty_count(t, 3), 11);
    xg_table_free(t);
}

/* the gateway's cut: every woken sliced sink sends what is marked, in one drain; entities are
 * counted per sink, not recorded (a long batch) */
static int count_visit(void *user, const struct xg_entity *e, const struct xg_pose *pose)
{
    (void)e;
    (void)pose;
    (*(int *)user)++;
    return 0;
}

struct cut_count {
    struct xg_table *t;
    int calls;
    size_t dirty1[8]; /* sink 1's set when called */
    uint64_t woken[8];
    int sent[4]; /* entities drained by the cuts, per sink */
};

static void count_drain(void *user, int sink)
{
    struct cut_count *c = user;
    xg_table_drain(c->t, sink, T0, count_visit, &c->sent[sink]);
}

static void cut_every_time(void *user, uint64_t woken, int origin)
{
    struct cut_count *c = user;
    (void)origin;
    assert_true(c->calls < 8);
    c->woken[c->calls] = woken;
    c->dirty1[c->calls] = xg_table_dirty_count(c->t, 1);
    c->calls++;
    struct xg_egress_plan plan = {.due = woken & 0x6}; /* one whole drain each */
    if (plan.due) xg_egress_pass_run(c->t, T0, &plan, count_drain, c, NULL);
}

static void test_cut_after_long_batches_only(void **state)
{
    (void)state;
    struct xg_table *t = new_table();
    struct cut_count c = {.t = t};
    xg_table_set_cut_through(t, cut_every_time, &c);
    /* a batch shorter than XG_CUT_AFTER updates never calls back: the pass sends it whole */
    for (int k = 0; k < XG_CUT_AFTER - 1; k++)
        push(t, k, T0);
    assert_int_equal(c.calls, 0);
    struct log l = {.t = t};
    struct xg_egress_plan plan = {.due = 0xe, .sliced = 0x6};
    xg_egress_pass_run(t, T0, &plan, drain, &l, NULL);
    assert_int_equal(l.n, 3 * (XG_CUT_AFTER - 1));
    assert_int_equal(l.drains[1], 1);
    /* the pass forgot the count: in a batch of 1000 updates the cuts come after the 64th, then
     * 128, 256 and 512 more (each threshold twice the last): 64, 192, 448 and 960 updates in;
     * sinks 1 and 2 (sliced) send everything marked since the last cut, sink 3 (whole frames)
     * waits for the pass */
    static const int at[] = {64, 192, 448, 960};
    for (int k = 0; k < 1000; k++) {
        push(t, k, T0 + MS);
        int expect = 0;
        for (size_t i = 0; i < 4; i++)
            expect += k + 1 >= at[i];
        assert_int_equal(c.calls, expect);
    }
    assert_int_equal(c.woken[0], 0xe);
    assert_int_equal(c.woken[1], 0x6); /* sink 3's set never emptied */
    static const size_t dirty[] = {64, 128, 256, 512};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(c.dirty1[i], dirty[i]);
    assert_int_equal(c.sent[1], 960);
    assert_int_equal(c.sent[2], 960);
    assert_int_equal(c.sent[3], 0);
    assert_int_equal(xg_table_dirty_count(t, 1), 1000 - 960);
    assert_int_equal(xg_table_dirty_count(t, 3), 1000);
    /* the pass after the batch starts the next one at XG_CUT_AFTER again */
    plan = (struct xg_egress_plan){.due = 0xe, .sliced = 0x6};
    struct log l2 = {.t = t};
    l2.lazy[3] = true; /* sink 3's 1000 are not recorded */
    xg_egress_pass_run(t, T0, &plan, drain, &l2, NULL);
    assert_int_equal(l2.n, 2 * 40);
    for (int k = 0; k < XG_CUT_AFTER; k++)
        push(t, k, T0 + 2 * MS);
    assert_int_equal(c.calls, 5);
    xg_table_free(t);
}

/* ---- shared prediction ---- */

static void test_pass_shares_one_prediction(void **state)
{
    (void)state;
    struct xg_table *t = new_table();
    for (int k = 0; k < 10; k++)
        push(t, k, T0);
    const struct xg_table_stats *st = xg_table_stats(t);
    struct log l = {.t = t};
    /* the sinks read the clock at different times; the pass predicts to its own time */
    l.now[1] = T0 + 3 * MS;
    l.now[2] = T0 + 4 * MS;
    l.now[3] = T0 + 5 * MS;
    uint64_t pred0 = st->predictions[XG_QUALITY_PREDICTED];
    struct xg_egress_plan plan = {.due = 0xe, .sliced = 0x6};
    xg_egress_pass_run(t, T0 + 2 * MS, &plan, drain, &l, NULL);
    assert_int_equal(l.n, 30);
    /* 30 answers, 10 computed, 20 shared */
    assert_int_equal(st->predictions[XG_QUALITY_PREDICTED] - pred0, 30);
    assert_int_equal(st->predictions_shared, 20);
    for (int i = 0; i < l.n; i++) {
        assert_int_equal(l.v[i].pose.t_ns, T0 + 2 * MS);
        const struct xg_entity *e = xg_table_get(t, l.v[i].id);
        /* x = k + 1 m/s * 2 ms */
        assert_float_equal(l.v[i].pose.position.x, xg_entity_last(e)->position.x + 0.002, 1e-12);
    }
    /* outside a pass a drain predicts to its own now, uncached */
    push(t, 0, T0 + MS);
    struct log l2 = {.t = t};
    l2.cur = 1;
    assert_int_equal(xg_table_drain(t, 1, T0 + 7 * MS, record, &l2), 1);
    assert_int_equal(l2.v[0].pose.t_ns, T0 + 7 * MS);
    assert_float_equal(l2.v[0].pose.position.x, 0.006, 1e-12);
    assert_int_equal(st->predictions_shared, 20);
    /* the next pass (same time) predicts e0 again: its sample is new and the pass is new */
    struct log l3 = {.t = t};
    plan = (struct xg_egress_plan){.due = 0x6, .sliced = 0x6};
    xg_egress_pass_run(t, T0 + 2 * MS, &plan, drain, &l3, NULL);
    assert_int_equal(l3.n, 1); /* sink 2 only: sink 1 drained e0 above */
    assert_float_equal(l3.v[0].pose.position.x, 0.001, 1e-12);
    assert_int_equal(st->predictions_shared, 20);
    /* foreach for a sink shares too; foreach for everyone (sink -1: admin) does not */
    struct log l4 = {.t = t};
    xg_table_pass_begin(t, T0 + 9 * MS);
    assert_int_equal(xg_table_foreach(t, 1, T0, record, &l4), 10);
    assert_int_equal(xg_table_foreach(t, 2, T0, record, &l4), 10);
    assert_int_equal(st->predictions_shared, 30);
    assert_int_equal(xg_table_foreach(t, -1, T0 + 9 * MS, record, &l4), 10);
    assert_int_equal(st->predictions_shared, 30);
    xg_table_pass_end(t);
    xg_table_free(t);
}

static void test_pose_cache(void **state)
{
    (void)state;
    struct xg_pose_cache *c = xg_pose_cache_new(10);
    assert_non_null(c);
    assert_int_equal(xg_pose_cache_size(c), 64);
    struct xg_pose p = {.t_ns = 5, .position = {1, 2, 3}};
    xg_pose_cache_put(c, 3, 7, 1, &p);
    const struct xg_pose *g = xg_pose_cache_get(c, 3, 7, 1, 5);
    assert_non_null(g);
    assert_float_equal(g->position.y, 2, 0);
    assert_null(xg_pose_cache_get(c, 3, 7, 2, 5)); /* a new sample */
    assert_null(xg_pose_cache_get(c, 3, 8, 1, 5)); /* another entity in a reused slot */
    assert_null(xg_pose_cache_get(c, 3, 7, 1, 6)); /* another time */
    assert_null(xg_pose_cache_get(c, 4, 7, 1, 5));
    /* slot 67 maps onto slot 3's entry: evicts it */
    xg_pose_cache_put(c, 67, 9, 1, &p);
    assert_null(xg_pose_cache_get(c, 3, 7, 1, 5));
    assert_non_null(xg_pose_cache_get(c, 67, 9, 1, 5));
    xg_pose_cache_new_pass(c);
    assert_null(xg_pose_cache_get(c, 67, 9, 1, 5));
    /* growing: bounded by XG_POSE_CACHE_MAX */
    assert_int_equal(xg_pose_cache_reserve(&c, 100), 0);
    assert_int_equal(xg_pose_cache_size(c), 128);
    assert_int_equal(xg_pose_cache_reserve(&c, 100000), 0);
    assert_int_equal(xg_pose_cache_size(c), XG_POSE_CACHE_MAX);
    xg_pose_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drain_limit_keeps_order),
        cmocka_unit_test(test_drain_limit_skips_removed),
        cmocka_unit_test(test_pass_interleaves_first_slices),
        cmocka_unit_test(test_pass_due_and_lazy_sinks),
        cmocka_unit_test(test_cut_through_hook),
        cmocka_unit_test(test_cut_through_first_slice),
        cmocka_unit_test(test_cut_after_long_batches_only),
        cmocka_unit_test(test_pass_shares_one_prediction),
        cmocka_unit_test(test_pose_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
