/* Unit tests for the dds adapter's ingress on decoded TFMessages (dds_ingress_tf, issue 30),
 * without Cyclone DDS on the wire: a message of 20,000 transforms past the frame limit, a parent
 * whose name is longer than 127 bytes, two writers publishing one name, and a wild first stamp.
 * The adapter state is built by hand (no configuration, no participant). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adapters/dds/dds_adapter.h"
#include "core/clock/clock.h"
#include "tf2_msgs/msg/TFMessage.h"

typedef struct geometry_msgs_msg_dds__TransformStamped_ ts_t;

struct fixture {
    struct xg_table *t;
    struct xg_frame frame;
    struct xg_adapter a;
    struct dds *d;
};

static struct fixture *fx_new(void)
{
    struct fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    struct xg_table_params p = {0};
    f->t = xg_table_new(&p);
    assert_non_null(f->t);
    xg_table_set_adapter_name(f->t, 0, "ros");
    xg_frame_identity(&f->frame);
    xg_frame_finalize(&f->frame);
    f->d = calloc(1, sizeof *f->d);
    assert_non_null(f->d);
    snprintf(f->d->world_frame, sizeof f->d->world_frame, "world");
    f->d->frame = &f->frame;
    snprintf(f->a.name, sizeof f->a.name, "ros");
    f->a.table = f->t;
    f->a.frame = &f->frame;
    f->a.priv = f->d;
    return f;
}

static void fx_free(struct fixture *f)
{
    dds_frames_free(&f->d->names);
    free(f->d);
    xg_table_free(f->t);
    free(f);
}

static void set_tf(ts_t *t, const char *parent, const char *child, double x, double y, int32_t sec)
{
    memset(t, 0, sizeof *t);
    t->header_.frame_id_ = (char *)parent;
    t->child_frame_id_ = (char *)child;
    t->header_.stamp_.sec_ = sec;
    t->transform_.translation_.x_ = x;
    t->transform_.translation_.y_ = y;
    t->transform_.rotation_.w_ = 1.0;
}

static void feed(struct fixture *f, ts_t *ts, uint32_t n, uint64_t pub, int64_t rx)
{
    tf2_msgs_msg_dds__TFMessage_ m = {.transforms_ = {n, n, ts, false}};
    dds_ingress_tf(&f->a, &m, pub, rx);
}

static const struct xg_entity *ent(struct fixture *f, const char *name)
{
    return xg_table_find(f->t, name);
}

/* A message of 20,000 transforms: every one read, 4,096 remembered, the rest counted. */
static void test_big_message(void **state)
{
    (void)state;
    struct fixture *f = fx_new();
    enum { N = 20000 };
    ts_t *ts = calloc(N, sizeof *ts);
    char(*names)[16] = calloc(N, sizeof *names);
    assert_non_null(ts);
    assert_non_null(names);
    for (int k = 0; k < N; k++) {
        snprintf(names[k], sizeof names[k], "b%d", k);
        set_tf(&ts[k], "world", names[k], k, 0, 0);
    }
    feed(f, ts, N, 7, xg_clock_mono_ns());
    assert_true(f->d->transforms_in == N);
    assert_true(f->d->names.n_posed == DDS_MAX_FRAMES);
    assert_true(f->d->frames_full == N - DDS_MAX_FRAMES);
    assert_true(xg_table_count(f->t) == N);
    free(ts);
    free(names);
    fx_free(f);
}

/* Issue 30 defect 6: a 150-byte frame id is a parent. */
static void test_long_parent(void **state)
{
    (void)state;
    struct fixture *f = fx_new();
    char long_name[151];
    memset(long_name, 'a', 150);
    long_name[150] = '\0';
    ts_t ts[2];
    set_tf(&ts[0], "world", long_name, 1, 0, 0);
    set_tf(&ts[1], long_name, "kid", 0, 1, 0);
    feed(f, ts, 2, 7, xg_clock_mono_ns());
    assert_true(f->d->unresolved == 0);
    const struct xg_entity *e = ent(f, "ros/kid");
    assert_non_null(e);
    fx_free(f);
}

/* Leading '/'s are dropped from child and parent alike (a fuzz finding: "//a" was stored as
 * the frame "/a", a name no ROS frame id has): "//a" and "/a" are the frame "a"; "///" is an
 * empty child, refused as bad input. */
static void test_leading_slashes(void **state)
{
    (void)state;
    struct fixture *f = fx_new();
    ts_t ts[4];
    set_tf(&ts[0], "//world", "//a", 1, 0, 0);
    set_tf(&ts[1], "///a", "b", 0, 1, 0);
    set_tf(&ts[2], "world", "///", 0, 0, 0);
    set_tf(&ts[3], "/world", "/a", 2, 0, 0);
    feed(f, ts, 4, 7, xg_clock_mono_ns());
    assert_true(f->d->transforms_in == 4);
    assert_true(f->d->unresolved == 0);
    assert_true(f->d->bad_input == 1);
    for (uint32_t i = 0; i < f->d->names.n; i++)
        assert_true(f->d->names.v[i].name[0] != '/');
    assert_non_null(ent(f, "ros/a"));
    assert_non_null(ent(f, "ros/b"));
    assert_null(ent(f, "ros//a"));
    assert_true(f->d->names.n == 2);
    fx_free(f);
}

/* Issue 30 defect 8: a second writer's samples for a name are refused, not merged. */
static void test_two_writers(void **state)
{
    (void)state;
    struct fixture *f = fx_new();
    ts_t ts[1];
    int64_t now = xg_clock_mono_ns();
    set_tf(&ts[0], "world", "demo/body0", 1, 0, 0);
    feed(f, ts, 1, 7, now);
    set_tf(&ts[0], "world", "demo/body0", 5, 0, 0);
    feed(f, ts, 1, 8, now + 1000000);
    assert_true(f->d->writer_conflicts == 1);
    struct xg_pose pose;
    const struct xg_entity *e = ent(f, "ros/demo/body0");
    assert_non_null(e);
    assert_int_equal(xg_entity_predict(f->t, xg_entity_id(e), now + 1000000, &pose), 0);
    assert_true(pose.position.x == 1);
    /* the owner silent for DDS_OWNER_HOLD_NS: the other writer takes over */
    feed(f, ts, 1, 8, now + DDS_OWNER_HOLD_NS + 2000000);
    assert_true(f->d->writer_conflicts == 1);
    assert_int_equal(
        xg_entity_predict(f->t, xg_entity_id(e), now + DDS_OWNER_HOLD_NS + 2000000, &pose), 0);
    assert_true(pose.position.x == 5);
    fx_free(f);
}

/* Issue 30 defect 5: a writer's first stamp ten years ahead, then current ones: applied again,
 * one clock step counted. */
static void test_wild_first_stamp(void **state)
{
    (void)state;
    struct fixture *f = fx_new();
    ts_t ts[1];
    int64_t rx = xg_clock_mono_ns();
    int32_t sec = 1700000000;
    set_tf(&ts[0], "world", "body", 1, 0, sec + 10 * 365 * 86400);
    feed(f, ts, 1, 7, rx);
    const struct xg_entity *e = ent(f, "ros/body");
    assert_non_null(e);
    for (int k = 1; k <= 20; k++) {
        set_tf(&ts[0], "world", "body", 1 + k, 0, sec + k);
        ts[0].header_.stamp_.nanosec_ = 0;
        feed(f, ts, 1, 7, rx + k * INT64_C(1000000000));
    }
    assert_true(f->a.clock_steps == 1);
    struct xg_pose pose;
    assert_int_equal(xg_entity_predict(f->t, xg_entity_id(e), rx + 20 * INT64_C(1000000000), &pose),
                     0);
    assert_true(pose.position.x == 21);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_big_message),      cmocka_unit_test(test_long_parent),
        cmocka_unit_test(test_leading_slashes),  cmocka_unit_test(test_two_writers),
        cmocka_unit_test(test_wild_first_stamp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
