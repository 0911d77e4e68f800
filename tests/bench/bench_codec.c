/* Codec throughput, in-process, one thread: encode and decode rates of the committed codecs.
 *
 * Each case encodes (from C structs / doubles, as an egress adapter does) or decodes (bytes to
 * structs and poses, as an ingress adapter does) the same message in a tight loop for --ms, and
 * reports messages/s per repetition; run.py turns that into MB/s with the wire size.
 *   vrpn_pos_quat     24-byte header + 64-byte Pos_Quat body (vrpn_codec.h)
 *   rgmp_data_4/_50   RGMP data frame, 4 / 50 FLOAT[7] TRANSFORM streams: encode writes the
 *                     floats and the frame; decode checks the frame against the definition and
 *                     extracts every pose (rgmp_pose_from_values) (rgmp_codec.h)
 *   rgmp_def_50       RGMP Device Definition JSON of 50 entities as rgmp-server builds it (a
 *                     TRANSFORM FLOAT[7] and two FLOAT[3] velocities each): encode is the
 *                     codec's hand-written encoder (rgmp_definition_to_json), decode the jansson
 *                     decoder (rgmp_definition_decode)
 *   rgmp_def_50_jansson  the same document built with jansson (json_dumps, JSON_COMPACT): the
 *                     encoder the codec would have with jansson; decode as above
 *   less_update       LESS update-entity with position, orientation, velocity, angular velocity
 *                     and sample time (less_codec.h), message only
 *   less_update_udp   the same message in an HMAC-SHA-256/64-signed UDP packet (encode + sign,
 *                     verify + decode)
 *   gs_head1/hand2/object2   game-state objects (gamestate_codec.h) */
#include <errno.h>
#include <inttypes.h>
#include <math.h>

#include <jansson.h>

#include "adapters/less/less_codec.h"
#include "adapters/rgmp/rgmp_codec.h"
#include "adapters/rtp/gamestate_codec.h"
#include "adapters/rtp/rtp.h"
#include "adapters/synth/synth.h"
#include "adapters/vrpn/vrpn_codec.h"
#include "tests/bench/bench_util.h"
#include "tests/bench/bench_weak.h"

typedef int (*op_fn)(void *ctx);

static void fail(const char *what, const struct xg_error *e)
{
    fprintf(stderr, "bench_codec: %s: %s\n", what, e ? e->msg : "");
    exit(1);
}

/* Run op for ms; returns ops/s. */
static double rate(op_fn op, void *ctx, int ms)
{
    uint64_t n = 0;
    int64_t t0 = bench_now_ns(), end = t0 + (int64_t)ms * 1000000, t;
    do {
        for (int i = 0; i < 256; i++)
            if (op(ctx)) fail("operation failed in the timed loop", NULL);
        n += 256;
        t = bench_now_ns();
    } while (t < end);
    return (double)n * 1e9 / (double)(t - t0);
}

static uint8_t wire[8192];
static size_t wire_len;
static uint8_t out[8192];
static double sink_d;

/* ---- VRPN ---- */

static struct vrpn_body vrpn_b;
static struct vrpn_header vrpn_h;
static uint32_t vrpn_seq;

static int vrpn_enc(void *ctx)
{
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    vrpn_b.u.pos_quat.pos.x += 1e-6;
    int rc = vrpn_encode_body_message(&w, &vrpn_h, &vrpn_seq, &vrpn_b, NULL);
    bench_sink(out);
    return rc;
}

static int vrpn_dec(void *ctx)
{
    struct vrpn_msg m;
    size_t off = 0;
    if (vrpn_datagram_next(wire, wire_len, &off, &m, NULL) != 1) return -1;
    struct vrpn_body b;
    int rc = vrpn_body_decode(VRPN_BODY_POS_QUAT, m.body, m.body_len, &b, NULL);
    sink_d += b.u.pos_quat.pos.x;
    return rc;
}

static size_t vrpn_setup(void)
{
    vrpn_b.kind = VRPN_BODY_POS_QUAT;
    vrpn_b.u.pos_quat = (struct vrpn_pos_quat){
        .sensor = 3, .pos = {0.1, 1.6, -0.2}, .quat = {0.01, 0.7, 0.02, 0.71}};
    vrpn_h = (struct vrpn_header){.tv_sec = 1700000000, .tv_usec = 123456, .sender = 0, .type = 3};
    struct xg_writer w;
    struct xg_error e = {0};
    xg_writer_init(&w, wire, sizeof wire);
    if (vrpn_encode_body_message(&w, &vrpn_h, &vrpn_seq, &vrpn_b, &e)) fail("vrpn setup", &e);
    wire_len = w.len;
    return w.len;
}

/* ---- RGMP ---- */

struct rgmp_case {
    struct rgmp_definition *def;
    int n;
    double pose[64][7];
};

static struct rgmp_case rg;

static int rgmp_enc(void *ctx)
{
    struct rgmp_case *c = ctx;
    uint8_t vals[64 * 28];
    struct xg_writer v, w;
    xg_writer_init(&v, vals, sizeof vals);
    for (int i = 0; i < c->n; i++)
        for (int k = 0; k < 7; k++)
            xg_write_lef32(&v, (float)c->pose[i][k]);
    xg_writer_init(&w, out, sizeof out);
    int rc = rgmp_encode_data(&w, c->def, 0, 1700000000000000ull, vals, v.len, NULL);
    bench_sink(out);
    return rc;
}

static int rgmp_dec(void *ctx)
{
    struct rgmp_case *c = ctx;
    struct rgmp_header h;
    size_t flen;
    if (rgmp_frame_split(wire, wire_len, NULL, &h, &flen, NULL) != 1) return -1;
    struct rgmp_data_frame f;
    int rc = rgmp_data_decode(wire + RGMP_HEADER_LEN, h.msg_len, c->def, &f, NULL);
    if (rc) return rc;
    const struct rgmp_group *g = &c->def->groups[0];
    for (size_t i = 0; i < g->n_streams; i++) {
        struct rgmp_pose p;
        rc = rgmp_pose_from_values(&g->streams[i], rgmp_data_stream(c->def, &f, i), &p, NULL);
        if (rc) return rc;
        sink_d += p.position.x;
    }
    return 0;
}

/* The Device Definition of rgmp-server for 50 entities (rgmp_def_50*). */
static struct rgmp_definition *rgdef;
static char *rgdef_json;
static size_t rgdef_len;

static int rgmp_def_enc(void *ctx)
{
    char *json;
    size_t len;
    int rc = rgmp_definition_to_json(rgdef, &json, &len, NULL);
    bench_sink(json);
    free(json);
    return rc;
}

/* One value of a static_data entry as jansson would carry it. */
static json_t *jv_elem(const struct rgmp_stream *s, uint32_t i)
{
    switch (s->type.base) {
    case RGMP_UINT64:
        return json_integer((json_int_t)rgmp_value_u64(&s->type, s->value, i));
    case RGMP_INT32:
    case RGMP_UINT32:
    case RGMP_INT64:
        return json_integer((json_int_t)rgmp_value_i64(&s->type, s->value, i));
    default:
        return json_real(rgmp_value_f64(&s->type, s->value, i));
    }
}

static json_t *jv_entry(const struct rgmp_stream *s)
{
    char tn[32];
    rgmp_data_type_format(&s->type, tn, sizeof tn);
    json_t *e = json_object();
    json_object_set_new(e, "data_type", json_string(tn));
    json_object_set_new(e, "measure_type", json_string(s->measure_name));
    json_object_set_new(e, "target_frame", json_string(s->target_frame));
    if (s->reference_frame)
        json_object_set_new(e, "reference_frame", json_string(s->reference_frame));
    if (s->custom_label) json_object_set_new(e, "custom_label", json_string(s->custom_label));
    if (s->measure == RGMP_STATUS_FLAGS) {
        json_t *bm = json_object();
        for (size_t i = 0; i < s->n_bits; i++) {
            char k[16];
            snprintf(k, sizeof k, "%" PRIu32, s->bits[i].bit);
            json_object_set_new(bm, k, json_string(s->bits[i].name));
        }
        json_object_set_new(e, "bit_mapping", bm);
    }
    if (s->value) {
        if (s->type.rank == 0) {
            json_object_set_new(e, "value", jv_elem(s, 0));
        } else {
            json_t *a = json_array();
            for (uint32_t i = 0; i < s->type.count; i++)
                json_array_append_new(a, jv_elem(s, i));
            json_object_set_new(e, "value", a);
        }
    }
    return e;
}

/* rgmp_definition_to_json written with jansson: same keys and order; numbers are jansson's
 * (17 significant digits, so not byte-identical to the codec's shortest text). */
static int rgmp_def_enc_jansson(void *ctx)
{
    const struct rgmp_definition *def = rgdef;
    json_t *root = json_object();
    if (def->protocol_name)
        json_object_set_new(root, "protocol_name", json_string(def->protocol_name));
    if (def->protocol_version)
        json_object_set_new(root, "protocol_version", json_string(def->protocol_version));
    json_object_set_new(root, "device_id", json_integer(def->device_id));
    if (def->device_type) json_object_set_new(root, "device_type", json_string(def->device_type));
    if (def->timestamp_epoch)
        json_object_set_new(root, "timestamp_epoch", json_string(def->timestamp_epoch));
    if (def->device_info_json)
        json_object_set_new(root, "device_info", json_loads(def->device_info_json, 0, NULL));
    json_t *st = json_array();
    for (size_t i = 0; i < def->n_static; i++)
        json_array_append_new(st, jv_entry(&def->static_data[i]));
    json_object_set_new(root, "static_data", st);
    json_t *groups = json_array();
    for (size_t g = 0; g < def->n_groups; g++) {
        const struct rgmp_group *gr = &def->groups[g];
        json_t *jg = json_object(), *streams = json_array();
        json_object_set_new(jg, "name", json_string(gr->name));
        double r = gr->expected_rate_hz;
        json_object_set_new(jg, "expected_rate_hz",
                            r == floor(r) && fabs(r) < 1e15 ? json_integer((json_int_t)r)
                                                            : json_real(r));
        for (size_t i = 0; i < gr->n_streams; i++)
            json_array_append_new(streams, jv_entry(&gr->streams[i]));
        json_object_set_new(jg, "streams", streams);
        json_array_append_new(groups, jg);
    }
    json_object_set_new(root, "groups", groups);
    char *s = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (!s) return -1;
    bench_sink(s);
    free(s);
    return 0;
}

static int rgmp_def_dec(void *ctx)
{
    struct rgmp_definition *d;
    int rc = rgmp_definition_decode(rgdef_json, rgdef_len, NULL, &d, NULL);
    if (rc) return rc;
    sink_d += (double)d->n_groups;
    rgmp_definition_free(d);
    return 0;
}

static size_t rgmp_def_setup(void)
{
    struct xg_error e = {0};
    if (rgdef) return rgdef_len;
    rgdef = rgmp_definition_new(2, "mocap", RGMP_EPOCH_UNIX);
    if (!rgdef || rgmp_definition_add_group(rgdef, "poses", 100, &e) != 0)
        fail("rgmp def setup", &e);
    static const char *const types[] = {"FLOAT[7]", "FLOAT[3]", "FLOAT[3]"};
    static const char *const measures[] = {"TRANSFORM", "LINEAR_VELOCITY", "ANGULAR_VELOCITY"};
    for (int i = 0; i < 50; i++) {
        char name[32];
        snprintf(name, sizeof name, "rigid-body-%d", i);
        for (int m = 0; m < 3; m++) {
            struct rgmp_entry_spec s = {.data_type = types[m],
                                        .measure_type = measures[m],
                                        .target_frame = name,
                                        .reference_frame = "LTP_ENU"};
            if (rgmp_definition_add_stream(rgdef, 0, &s, &e) < 0) fail("rgmp def stream", &e);
        }
    }
    if (rgmp_definition_to_json(rgdef, &rgdef_json, &rgdef_len, &e)) fail("rgmp def json", &e);
    return rgdef_len;
}

static size_t rgmp_setup(int n)
{
    struct xg_error e = {0};
    rgmp_definition_free(rg.def);
    rg.def = rgmp_definition_new(1, "bench", RGMP_EPOCH_UNIX);
    rg.n = n;
    if (!rg.def || rgmp_definition_add_group(rg.def, "pose", 100, &e) != 0) fail("rgmp setup", &e);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "bone%d", i);
        struct rgmp_entry_spec s = {
            .data_type = "FLOAT[7]", .measure_type = "TRANSFORM", .target_frame = name};
        if (rgmp_definition_add_stream(rg.def, 0, &s, &e) != i) fail("rgmp add_stream", &e);
        double q = sqrt(0.5);
        double p[7] = {0.01 * i, 1.0, -0.02 * i, 0.0, q, 0.0, q};
        memcpy(rg.pose[i], p, sizeof p);
    }
    if (rgmp_enc(&rg)) fail("rgmp encode", NULL);
    memcpy(wire, out, sizeof wire);
    wire_len = RGMP_HEADER_LEN + RGMP_DATA_HEADER_LEN + 28u * (unsigned)n;
    return wire_len;
}

/* ---- LESS ---- */

static const struct less_schema *less_type_cb(void *user, int64_t typeid)
{
    return typeid == 1 ? less_pose_schema() : NULL;
}

static int less_entity_cb(void *user, int64_t entity_id, int64_t *typeid)
{
    *typeid = 1;
    return 0;
}

static const struct less_context less_ctx = {
    less_type_cb, less_type_cb, less_entity_cb, less_entity_cb, NULL, NULL, NULL};
static struct less_pose less_p;
static struct less_key less_k;
static uint8_t arena_buf[1 << 14];

static int less_enc_msg(struct xg_writer *w)
{
    struct less_pose_props pp;
    less_p.position.x += 1e-6;
    less_pose_to_props(&less_p, less_p.present, &pp);
    struct less_comp_values cv = {0, pp.list};
    struct less_msg m = {.code = LESS_MSG_UPDATE_ENTITY};
    m.u.update_entity.entity_id = 42;
    m.u.update_entity.components = (struct less_comp_values_list){&cv, 1};
    return less_encode_msg(w, &less_ctx, &m, NULL);
}

static int less_enc(void *ctx)
{
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    int rc = less_enc_msg(&w);
    bench_sink(out);
    return rc;
}

static int less_dec_msgs(const uint8_t *buf, size_t len)
{
    struct less_arena a;
    less_arena_init(&a, arena_buf, sizeof arena_buf);
    struct xg_reader r;
    xg_reader_init(&r, buf, len);
    struct less_msg m;
    int rc = less_decode_msg(&r, &less_ctx, &a, &m, NULL);
    if (rc) return rc;
    struct less_pose p = {0};
    rc = less_pose_from_props(&m.u.update_entity.components.items[0].props, &p, NULL);
    sink_d += p.position.x;
    return rc;
}

static int less_dec(void *ctx)
{
    return less_dec_msgs(wire, wire_len);
}

static uint8_t less_pkt[2048];
static size_t less_pkt_len;

static int less_enc_udp(void *ctx)
{
    uint8_t msgs[512];
    struct xg_writer mw, w;
    xg_writer_init(&mw, msgs, sizeof msgs);
    int rc = less_enc_msg(&mw);
    if (rc) return rc;
    xg_writer_init(&w, out, LESS_UDP_DEFAULT_MTU);
    rc = less_udp_encode(&w, &less_k, 5, 4, 0xF, 123456789, 1, msgs, mw.len, NULL);
    bench_sink(out);
    return rc;
}

static int less_dec_udp(void *ctx)
{
    struct less_frame f;
    int rc = less_udp_decode(less_pkt, less_pkt_len, LESS_UDP_DEFAULT_MTU, &less_k, &f, NULL);
    if (rc) return rc;
    return less_dec_msgs(f.messages, f.messages_len);
}

static size_t less_setup(bool udp)
{
    less_p = (struct less_pose){
        .present = LESS_POSE_BIT(LESS_POSE_POSITION) | LESS_POSE_BIT(LESS_POSE_ORIENTATION) |
                   LESS_POSE_BIT(LESS_POSE_VELOCITY) | LESS_POSE_BIT(LESS_POSE_ANGULAR_VELOCITY) |
                   LESS_POSE_BIT(LESS_POSE_SAMPLE_TIME),
        .position = {0.1, 1.6, -0.2},
        .velocity = {0.3, 0.0, -0.1},
        .orientation = {0.0, 0.7071, 0.0, 0.7071},
        .angular_velocity = {0.0, 1.2, 0.0},
        .sample_time = 123456789};
    less_k.len = 32;
    for (size_t i = 0; i < less_k.len; i++)
        less_k.bytes[i] = (uint8_t)(i * 7 + 1);
    if (less_enc(NULL)) fail("less encode", NULL);
    struct xg_writer w;
    xg_writer_init(&w, wire, sizeof wire);
    less_enc_msg(&w);
    wire_len = w.len;
    if (less_dec(NULL)) fail("less decode", NULL);
    if (!udp) return wire_len;
    if (less_enc_udp(NULL)) fail("less udp encode", NULL);
    less_pkt_len = 0;
    xg_writer_init(&w, less_pkt, LESS_UDP_DEFAULT_MTU);
    if (less_udp_encode(&w, &less_k, 5, 4, 0xF, 123456789, 1, wire, wire_len, NULL))
        fail("less udp", NULL);
    less_pkt_len = w.len;
    if (less_dec_udp(NULL)) fail("less udp decode", NULL);
    return less_pkt_len;
}

/* ---- game state ---- */

static struct rtp_gs_object gs_obj;
static struct rtp_gs_iter gs_it;

static int gs_enc(void *ctx)
{
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    gs_obj.u.head1.time++; /* time is at the same place in head1/hand2/object2 */
    int rc = rtp_gs_encode_object(&w, &gs_obj, NULL);
    bench_sink(out);
    return rc;
}

static int gs_dec(void *ctx)
{
    struct rtp_gs_object o;
    int rc = rtp_gs_decode_one(&gs_it, wire, wire_len, &o, NULL);
    sink_d += o.u.head1.time;
    return rc;
}

static size_t gs_setup(enum rtp_gs_type t)
{
    memset(&gs_obj, 0, sizeof gs_obj);
    gs_obj.type = t;
    gs_obj.tag = rtp_gs_type_tag(t);
    struct rtp_gs_loc2 loc = {{0.1f, 1.6f, -0.2f}, {0.3f, 0.0f, -0.1f}};
    struct rtp_gs_rot2 rot = {{0.0f, 0.38f, 0.0f}, {0.0f, 0.81f, 0.0f}};
    switch (t) {
    case RTP_GS_HEAD1:
        gs_obj.u.head1 = (struct rtp_gs_head1){.object_id = 1, .time = 7, .loc = loc, .rot = rot};
        break;
    case RTP_GS_HAND2:
        gs_obj.u.hand2 =
            (struct rtp_gs_hand2){.object_id = 2, .time = 7, .left = true, .loc = loc, .rot = rot};
        for (int i = 0; i < RTP_GS_HAND2_JOINTS; i++) {
            gs_obj.u.hand2.joints[i][0] = 0.01f * (float)i;
            gs_obj.u.hand2.joints[i][1] = -0.005f * (float)i;
            gs_obj.u.hand2.joints[i][2] = 0.02f;
        }
        break;
    default:
        gs_obj.u.object2 = (struct rtp_gs_object2){.object_id = 3,
                                                   .time = 7,
                                                   .loc = loc,
                                                   .rot = rot,
                                                   .scale = {{1, 1, 1}, {0, 0, 0}},
                                                   .active = true};
        break;
    }
    struct xg_writer w;
    struct xg_error e = {0};
    xg_writer_init(&w, wire, sizeof wire);
    if (rtp_gs_encode_object(&w, &gs_obj, &e)) fail("game-state encode", &e);
    wire_len = w.len;
    if (gs_dec(NULL)) fail("game-state decode", NULL);
    return wire_len;
}

/* ---- driver ---- */

struct bench_case {
    const char *name;
    size_t (*setup)(void);
    op_fn enc, dec;
    void *ctx;
};

static size_t setup_rgmp4(void)
{
    return rgmp_setup(4);
}
static size_t setup_rgmp50(void)
{
    return rgmp_setup(50);
}
static size_t setup_less(void)
{
    return less_setup(false);
}
static size_t setup_less_udp(void)
{
    return less_setup(true);
}
static size_t setup_head1(void)
{
    return gs_setup(RTP_GS_HEAD1);
}
static size_t setup_hand2(void)
{
    return gs_setup(RTP_GS_HAND2);
}
static size_t setup_object2(void)
{
    return gs_setup(RTP_GS_OBJECT2);
}

/* Is the protocol of case `name` linked in (see bench_weak.h)? */
static bool case_available(const char *name)
{
    if (!strncmp(name, "vrpn", 4)) return BENCH_HAVE_VRPN;
    if (!strncmp(name, "rgmp", 4)) return BENCH_HAVE_RGMP;
    if (!strncmp(name, "less", 4)) return BENCH_HAVE_LESS;
    if (!strncmp(name, "gs_", 3)) return BENCH_HAVE_RTP;
    return true;
}

static const struct bench_case cases[] = {
    {"vrpn_pos_quat", vrpn_setup, vrpn_enc, vrpn_dec, NULL},
    {"rgmp_data_4", setup_rgmp4, rgmp_enc, rgmp_dec, &rg},
    {"rgmp_data_50", setup_rgmp50, rgmp_enc, rgmp_dec, &rg},
    {"rgmp_def_50", rgmp_def_setup, rgmp_def_enc, rgmp_def_dec, NULL},
    {"rgmp_def_50_jansson", rgmp_def_setup, rgmp_def_enc_jansson, rgmp_def_dec, NULL},
    {"less_update", setup_less, less_enc, less_dec, NULL},
    {"less_update_udp", setup_less_udp, less_enc_udp, less_dec_udp, NULL},
    {"gs_head1", setup_head1, gs_enc, gs_dec, NULL},
    {"gs_hand2", setup_hand2, gs_enc, gs_dec, NULL},
    {"gs_object2", setup_object2, gs_enc, gs_dec, NULL},
};

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_parse(argc, argv, &o);
    double *enc = calloc((size_t)o.reps, sizeof *enc), *dec = calloc((size_t)o.reps, sizeof *dec);
    if (!enc || !dec) return 1;
    struct bench_json j = {.first = {true}};
    bench_json_open(&j, NULL);
    bench_json_str(&j, "mode", "one thread, in-process, same message re-encoded/decoded");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (!case_available(cases[c].name)) {
            fprintf(stderr, "codec: %s skipped (adapter folder not built)\n", cases[c].name);
            continue;
        }
        size_t bytes = cases[c].setup();
        /* interleave encode and decode repetitions so drift hits both alike */
        for (int r = 0; r < o.reps; r++) {
            enc[r] = rate(cases[c].enc, cases[c].ctx, o.ms);
            dec[r] = rate(cases[c].dec, cases[c].ctx, o.ms);
        }
        bench_json_open(&j, cases[c].name);
        bench_json_num(&j, "bytes", (double)bytes);
        bench_json_arr(&j, "encode_per_s", enc, o.reps);
        bench_json_arr(&j, "decode_per_s", dec, o.reps);
        bench_json_close(&j);
        fprintf(stderr, "codec: %s done (%zu bytes)\n", cases[c].name, bytes);
    }
    bench_json_close(&j);
    if (BENCH_HAVE_RGMP) {
        rgmp_definition_free(rg.def);
        rgmp_definition_free(rgdef);
        free(rgdef_json);
    }
    free(enc);
    free(dec);
    bench_sink(&sink_d);
    return 0;
}
