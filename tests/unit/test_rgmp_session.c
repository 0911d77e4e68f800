/* The RGMP receiver session driven without sockets: what rgmp-server's encoders write (builder,
 * definition, data frames, replacement, disconnect) is cut into TCP-like chunks and fed through
 * the frame splitter and rgmp_session_handle, as rgmp-client does with its receive buffer. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "adapters/rgmp/rgmp_codec.h"
#include "tests/unit/test_util.h"

#define DEV_A 7u
#define DEV_B 9u

/* A definition as rgmp-server builds it: per entity a TRANSFORM FLOAT[7] and two FLOAT[3]. */
static struct rgmp_definition *server_def(uint32_t device_id, int n_entities)
{
    struct xg_error err = {0};
    struct rgmp_definition *def = rgmp_definition_new(device_id, "xrgate", RGMP_EPOCH_UNIX);
    assert_non_null(def);
    if (rgmp_definition_add_group(def, "poses", 100, &err) < 0) fail_msg("%s", err.msg);
    static const char *const types[] = {"FLOAT[7]", "FLOAT[3]", "FLOAT[3]"};
    static const char *const measures[] = {"TRANSFORM", "LINEAR_VELOCITY", "ANGULAR_VELOCITY"};
    for (int e = 0; e < n_entities; e++) {
        char name[16];
        snprintf(name, sizeof name, "body%d", e);
        for (int m = 0; m < 3; m++) {
            struct rgmp_entry_spec spec = {.data_type = types[m],
                                           .measure_type = measures[m],
                                           .target_frame = name,
                                           .reference_frame = "LTP_ENU"};
            if (rgmp_definition_add_stream(def, 0, &spec, &err) < 0) fail_msg("%s", err.msg);
        }
    }
    return def;
}

/* The values of one data frame: entity e at x = base + e, a 90° turn about z, velocities. */
static size_t frame_values(uint8_t *vals, size_t cap, int n_entities, float base)
{
    struct xg_writer w;
    xg_writer_init(&w, vals, cap);
    for (int e = 0; e < n_entities; e++) {
        const float pose[7] = {base + (float)e, 1.5f, -0.25f, 0.0f, 0.0f, 0.70710678f, 0.70710678f};
        for (int k = 0; k < 7; k++)
            xg_write_lef32(&w, pose[k]);
        for (int k = 0; k < 6; k++)
            xg_write_lef32(&w, 0.5f * (float)k);
    }
    assert_int_equal(w.err, 0);
    return w.len;
}

struct stream {
    uint8_t buf[16384];
    struct xg_writer w;
};

static void put_def(struct stream *s, const struct rgmp_definition *def)
{
    struct xg_error err = {0};
    if (rgmp_encode_definition(&s->w, def, &err) < 0) fail_msg("%s", err.msg);
}

static void put_data(struct stream *s, const struct rgmp_definition *def, uint64_t ts, float base,
                     int n_entities)
{
    uint8_t vals[2048];
    size_t n = frame_values(vals, sizeof vals, n_entities, base);
    struct xg_error err = {0};
    if (rgmp_encode_data(&s->w, def, 0, ts, vals, n, &err) < 0) fail_msg("%s", err.msg);
}

/* What an event showed while its definition was alive (a replacement or a disconnect frees it):
 * the streams of group 0 and, for a data frame, the x of every entity's TRANSFORM. */
struct seen {
    size_t n_streams;
    double x[4];
};

static void assert_pose(const struct rgmp_event *ev, size_t stream, float x);

static void record(const struct rgmp_event *ev, struct seen *out)
{
    memset(out, 0, sizeof *out);
    if (!ev->def) return;
    out->n_streams = ev->def->groups[0].n_streams;
    if (ev->type != RGMP_EV_DATA) return;
    for (size_t e = 0; e < out->n_streams / 3 && e < 4; e++) {
        struct rgmp_pose p;
        struct xg_error err = {0};
        const struct rgmp_stream *st = &ev->def->groups[0].streams[3 * e];
        if (rgmp_pose_from_values(st, rgmp_data_stream(ev->def, &ev->frame, 3 * e), &p, &err))
            fail_msg("%s", err.msg);
        out->x[e] = p.position.x;
        assert_pose(ev, 3 * e, (float)p.position.x);
    }
}

/* Feeds `len` bytes in chunks of `chunk` into a receive buffer, handling every whole frame:
 * the events in order into ev[] and seen[] (at most max_ev), their return codes into rc[].
 * Stops at the first negative code (the connection would be closed). Returns the number of
 * events. */
static size_t drive(struct rgmp_session *s, const uint8_t *in, size_t len, size_t chunk,
                    struct rgmp_event *ev, struct seen *seen, int *rc, struct xg_error *errs,
                    size_t max_ev)
{
    static uint8_t rx[16384];
    size_t have = 0, fed = 0, n = 0;
    while (fed < len && n < max_ev) {
        size_t c = len - fed < chunk ? len - fed : chunk;
        memcpy(rx + have, in + fed, c);
        have += c;
        fed += c;
        for (;;) {
            struct rgmp_header h;
            size_t need;
            struct xg_error err = {0};
            int r = rgmp_frame_split(rx, have, &s->limits, &h, &need, &err);
            if (r < 0) fail_msg("split: %s", err.msg);
            if (r == 0) break;
            rc[n] = rgmp_session_handle(s, &h, rx + RGMP_HEADER_LEN, &ev[n], &errs[n]);
            if (rc[n] == 0) record(&ev[n], &seen[n]);
            memmove(rx, rx + need, have - need);
            have -= need;
            if (rc[n++] < 0 || n == max_ev) return n;
        }
    }
    assert_int_equal(have, 0);
    return n;
}

/* The pose of `stream` decodes to x, 1.5, -0.25 and a 90° turn about z. */
static void assert_pose(const struct rgmp_event *ev, size_t stream, float x)
{
    struct rgmp_pose p;
    struct xg_error err = {0};
    const struct rgmp_stream *st = &ev->def->groups[0].streams[stream];
    if (rgmp_pose_from_values(st, rgmp_data_stream(ev->def, &ev->frame, stream), &p, &err) < 0)
        fail_msg("%s", err.msg);
    assert_true(p.position.x == (double)x);
    assert_true(p.position.y == 1.5);
    assert_true(p.position.z == -0.25);
    assert_float_equal(p.orientation.z, sqrt(0.5), 1e-7);
}

/* Definition, data, a replacing definition with another entity count, data against the new
 * layout, an out-of-order frame, a disconnect, then data after it: the same events and values
 * whatever the TCP segmentation. */
static void test_server_stream_any_segmentation(void **state)
{
    (void)state;
    struct rgmp_definition *def2 = server_def(DEV_A, 2), *def3 = server_def(DEV_A, 3);
    static struct stream s;
    xg_writer_init(&s.w, s.buf, sizeof s.buf);
    put_def(&s, def2);
    put_data(&s, def2, 1000, 10.0f, 2);
    put_data(&s, def2, 2000, 20.0f, 2);
    put_def(&s, def3); /* D3: replaces the active definition of DEV_A */
    put_data(&s, def3, 1500, 30.0f, 3);
    put_data(&s, def3, 1400, 40.0f, 3); /* older than 1500: dropped, counted (D2) */
    uint8_t disc[RGMP_HEADER_LEN + RGMP_DISCONNECT_LEN];
    struct xg_writer dw;
    xg_writer_init(&dw, disc, sizeof disc);
    assert_int_equal(rgmp_encode_disconnect(&dw, DEV_A), 0);
    xg_write_bytes(&s.w, disc, dw.len);
    put_data(&s, def3, 3000, 50.0f, 3); /* rule 15: no active definition any more */
    assert_int_equal(s.w.err, 0);

    static const size_t chunks[] = {1, 7, 64, 1460, sizeof s.buf};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        struct rgmp_session ses;
        rgmp_session_init(&ses, NULL, false);
        struct rgmp_event ev[16];
        int rc[16];
        struct xg_error errs[16] = {0};
        struct seen seen[16];
        size_t n = drive(&ses, s.buf, s.w.len, chunks[c], ev, seen, rc, errs, 16);
        assert_int_equal(n, 8);
        for (size_t i = 0; i < 7; i++)
            if (rc[i] != 0) fail_msg("chunk %zu, event %zu: %s", chunks[c], i, errs[i].msg);
        assert_int_equal(ev[0].type, RGMP_EV_DEFINITION);
        assert_int_equal(ev[0].device_id, DEV_A);
        assert_false(ev[0].replaced);
        assert_int_equal(ev[1].type, RGMP_EV_DATA);
        assert_int_equal(ev[1].frame.timestamp_us, 1000);
        assert_true(seen[1].x[0] == 10.0 && seen[1].x[1] == 11.0);
        assert_int_equal(ev[2].type, RGMP_EV_DATA);
        assert_true(seen[2].x[0] == 20.0 && seen[2].x[1] == 21.0);
        assert_int_equal(ev[3].type, RGMP_EV_DEFINITION);
        assert_true(ev[3].replaced);
        assert_int_equal(seen[0].n_streams, 6);
        assert_int_equal(seen[3].n_streams, 9);
        /* the replacement starts a new timestamp history: 1500 < 2000 is in order */
        assert_int_equal(ev[4].type, RGMP_EV_DATA);
        assert_int_equal(seen[4].n_streams, 9);
        assert_true(seen[4].x[0] == 30.0 && seen[4].x[1] == 31.0 && seen[4].x[2] == 32.0);
        assert_int_equal(ev[5].type, RGMP_EV_DROPPED);
        assert_non_null(strstr(errs[5].msg, "timestamp_us = 1400"));
        assert_int_equal(ses.frames_out_of_order, 1);
        assert_int_equal(ev[6].type, RGMP_EV_DISCONNECT);
        assert_int_equal(ev[6].device_id, DEV_A);
        assert_int_equal(ses.n_devices, 0);
        assert_int_equal(rc[7], -EPROTO);
        assert_non_null(strstr(errs[7].msg, "device 7: device_id = 7: data frame for a device "
                                            "with no active definition (rule 15)"));
        rgmp_session_free(&ses);
    }
    rgmp_definition_free(def2);
    rgmp_definition_free(def3);
}

/* Two devices on one connection: disconnecting one leaves the other's definition and its
 * per-group timestamp history as they were. */
static void test_two_devices_disconnect_one(void **state)
{
    (void)state;
    struct rgmp_definition *a = server_def(DEV_A, 1), *b = server_def(DEV_B, 2);
    static struct stream s;
    xg_writer_init(&s.w, s.buf, sizeof s.buf);
    put_def(&s, a);
    put_def(&s, b);
    put_data(&s, a, 100, 1.0f, 1);
    put_data(&s, b, 500, 2.0f, 2);
    uint8_t disc[RGMP_HEADER_LEN + RGMP_DISCONNECT_LEN];
    struct xg_writer dw;
    xg_writer_init(&dw, disc, sizeof disc);
    assert_int_equal(rgmp_encode_disconnect(&dw, DEV_A), 0);
    xg_write_bytes(&s.w, disc, dw.len);
    put_data(&s, b, 400, 3.0f, 2); /* B's history survived: still out of order */
    put_data(&s, b, 600, 4.0f, 2);
    assert_int_equal(s.w.err, 0);

    struct rgmp_session ses;
    rgmp_session_init(&ses, NULL, false);
    struct rgmp_event ev[8];
    int rc[8];
    struct xg_error errs[8] = {0};
    struct seen seen[8];
    size_t n = drive(&ses, s.buf, s.w.len, 5, ev, seen, rc, errs, 8);
    assert_int_equal(n, 7);
    for (size_t i = 0; i < n; i++)
        if (rc[i] != 0) fail_msg("event %zu: %s", i, errs[i].msg);
    assert_int_equal(ev[4].type, RGMP_EV_DISCONNECT);
    assert_int_equal(ev[4].device_id, DEV_A);
    assert_null(rgmp_session_find(&ses, DEV_A));
    assert_ptr_equal(rgmp_session_find(&ses, DEV_B), ev[3].def);
    assert_int_equal(ev[5].type, RGMP_EV_DROPPED);
    assert_int_equal(ev[5].device_id, DEV_B);
    assert_int_equal(ev[6].type, RGMP_EV_DATA);
    assert_true(seen[6].x[0] == 4.0 && seen[6].x[1] == 5.0);
    assert_true(seen[2].x[0] == 1.0 && seen[3].x[1] == 3.0);
    assert_int_equal(ses.n_devices, 1);
    rgmp_session_free(&ses);
    rgmp_definition_free(a);
    rgmp_definition_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_stream_any_segmentation),
        cmocka_unit_test(test_two_devices_disconnect_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
