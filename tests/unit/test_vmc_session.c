/* Unit tests for the vmc adapter's halves without sockets (adapters/vmc/vmc.h): ingress into a
 * real entity table (hierarchy resolution, parents, the root, re-resolution when an optional bone
 * appears, counters) and egress out of it (profile vmc split into mtu-sized complete bundles with
 * bones local to their nearest ancestor; profile vmt tracker indices by rules, stable across an
 * entity's absence, disabled when it goes). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adapters/vmc/vmc.h"
#include "mappings/frame.h"

#define MS INT64_C(1000000)
#define T0 (INT64_C(1000) * 1000 * MS)

static struct xg_table *table;
static struct xg_frame unity;
static struct xg_adapter ad; /* the vmc adapter: index 0 */

static int setup(void **st)
{
    (void)st;
    table = xg_table_new(NULL);
    assert_non_null(table);
    xg_table_set_adapter_name(table, 0, "vmc");
    xg_table_set_adapter_name(table, 1, "src");
    assert_int_equal(xg_table_add_sink(table, 0, NULL, NULL, NULL), 0);
    assert_int_equal(xg_frame_preset("unity", &unity, NULL), 0);
    memset(&ad, 0, sizeof ad);
    snprintf(ad.name, sizeof ad.name, "vmc");
    ad.index = 0;
    ad.table = table;
    ad.frame = &unity;
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    xg_table_free(table);
    return 0;
}

/* ---- building datagrams ---- */

struct dgram {
    uint8_t b[4096];
    struct xg_writer w;
};

static void dgram_init(struct dgram *d)
{
    xg_writer_init(&d->w, d->b, sizeof d->b);
    osc_bundle_begin(&d->w, OSC_TIMETAG_IMMEDIATE);
}

static void add_pose(struct dgram *d, const char *addr, const char *name, struct xg_vec3 p,
                     struct xg_quat q)
{
    struct osc_arg a[8];
    memset(a, 0, sizeof a);
    a[0].tag = 's';
    a[0].v.s.p = name;
    a[0].v.s.len = strlen(name);
    const double v[7] = {p.x, p.y, p.z, q.x, q.y, q.z, q.w};
    for (int i = 0; i < 7; i++) {
        a[i + 1].tag = 'f';
        a[i + 1].v.f = (float)v[i];
    }
    size_t at;
    osc_element_begin(&d->w, &at);
    assert_int_equal(osc_encode_message(&d->w, addr, "sfffffff", a, 8), 0);
    assert_int_equal(osc_element_end(&d->w, at), 0);
}

static struct xg_quat qa(double x, double y, double z, double deg)
{
    return xg_quat_from_axis_angle((struct xg_vec3){x, y, z}, deg * M_PI / 180);
}

static const struct xg_entity *ent(const char *name)
{
    const struct xg_entity *e = xg_table_find(table, name);
    if (!e) fail_msg("no entity '%s'", name);
    return e;
}

static uint64_t samples_of(const char *name)
{
    struct xg_entity_info info;
    xg_entity_info(ent(name), &info);
    return info.samples;
}

/* name of the entity's parent in the table, "" for none */
static const char *parent_of(const char *name)
{
    const char *p = xg_table_parent_name(table, ent(name));
    return p ? p : "";
}

/* world pose (internal frame) of an entity at its newest sample */
static void pose_of(const char *name, struct xg_vec3 *p, struct xg_quat *q)
{
    const struct xg_entity *e = ent(name);
    struct xg_pose pose;
    xg_entity_predict_at(table, e, xg_entity_last(e)->capture_ns, &pose);
    *p = pose.position;
    *q = pose.orientation;
}

static void assert_pose(struct xg_vec3 p, struct xg_quat q, struct xg_vec3 wp, struct xg_quat wq)
{
    assert_true(xg_vec3_norm(xg_vec3_sub(p, wp)) < 1e-6);
    assert_true(xg_quat_angle_between(q, wq) < 1e-5);
}

/* Unity pose → internal (axes x,y,-z) */
static void to_internal(struct xg_vec3 *p, struct xg_quat *q)
{
    *p = xg_frame_pos_in(&unity, *p);
    *q = xg_frame_rot_in(&unity, *q);
}

static void test_ingress_hierarchy(void **st)
{
    (void)st;
    struct vmc_ingress in;
    assert_int_equal(vmc_ingress_init(&in, &ad, 8, 4), 0);
    struct xg_vec3 rp = {1, 0, 2}, hp = {0, 1, 0}, np = {0, 0.5, 0.1};
    struct xg_quat rq = qa(0, 1, 0, 90), hq = qa(1, 0, 0, 10), nq = qa(0, 0, 1, 30);
    struct dgram d;
    dgram_init(&d);
    add_pose(&d, "/VMC/Ext/Root/Pos", "root", rp, rq);
    add_pose(&d, "/VMC/Ext/Bone/Pos", "Hips", hp, hq);
    add_pose(&d, "/VMC/Ext/Bone/Pos", "Neck", np, nq); /* Spine, Chest, UpperChest missing */
    vmc_ingress_datagram(&in, d.b, d.w.len, "test:1", T0);
    assert_int_equal(in.bone_msgs, 2);
    assert_int_equal(in.root_msgs, 1);
    assert_string_equal(parent_of("vmc/bone/Hips"), "");
    assert_string_equal(parent_of("vmc/bone/Neck"), "vmc/bone/Hips");
    assert_int_equal(xg_entity_kind(ent("vmc/bone/Neck")), XG_KIND_JOINT);
    /* Neck world = root ⊗ Hips ⊗ Neck, composed in Unity's frame, then converted */
    struct xg_quat wq = xg_quat_mul(xg_quat_mul(rq, hq), nq);
    struct xg_vec3 wp = xg_vec3_add(xg_vec3_add(rp, xg_quat_rotate(rq, hp)),
                                    xg_quat_rotate(xg_quat_mul(rq, hq), np));
    to_internal(&wp, &wq);
    struct xg_vec3 p;
    struct xg_quat q;
    pose_of("vmc/bone/Neck", &p, &q);
    assert_pose(p, q, wp, wq);
    /* Spine appears: Neck now hangs on it */
    struct xg_vec3 sp = {0, 0.1, 0};
    struct xg_quat sq = qa(0, 1, 0, -20);
    dgram_init(&d);
    add_pose(&d, "/VMC/Ext/Bone/Pos", "Spine", sp, sq);
    add_pose(&d, "/VMC/Ext/Bone/Pos", "Neck", np, nq);
    vmc_ingress_datagram(&in, d.b, d.w.len, "test:1", T0 + 10 * MS);
    assert_string_equal(parent_of("vmc/bone/Neck"), "vmc/bone/Spine");
    assert_string_equal(parent_of("vmc/bone/Spine"), "vmc/bone/Hips");
    wq = xg_quat_mul(xg_quat_mul(xg_quat_mul(rq, hq), sq), nq);
    struct xg_quat hw = xg_quat_mul(rq, hq);
    wp = xg_vec3_add(xg_vec3_add(xg_vec3_add(rp, xg_quat_rotate(rq, hp)), xg_quat_rotate(hw, sp)),
                     xg_quat_rotate(xg_quat_mul(hw, sq), np));
    to_internal(&wp, &wq);
    pose_of("vmc/bone/Neck", &p, &q);
    assert_pose(p, q, wp, wq);
    /* the Hips were not in that datagram: not pushed again */
    assert_int_equal(samples_of("vmc/bone/Hips"), 1);
    /* a root alone moves every bone once */
    dgram_init(&d);
    add_pose(&d, "/VMC/Ext/Root/Pos", "root", XG_VEC3_ZERO, XG_QUAT_IDENTITY);
    vmc_ingress_datagram(&in, d.b, d.w.len, "test:1", T0 + 20 * MS);
    assert_int_equal(samples_of("vmc/bone/Hips"), 2);
    assert_int_equal(samples_of("vmc/bone/Neck"), 3);
    pose_of("vmc/bone/Hips", &p, &q);
    wp = hp;
    wq = hq;
    to_internal(&wp, &wq);
    assert_pose(p, q, wp, wq);
    /* Spine silent for longer than entity.stale_ms: forgotten, Neck hangs on the Hips again */
    int64_t later = T0 + 20 * MS + xg_table_params(table)->stale_ns + MS;
    dgram_init(&d);
    add_pose(&d, "/VMC/Ext/Bone/Pos", "Hips", hp, hq);
    add_pose(&d, "/VMC/Ext/Bone/Pos", "Neck", np, nq);
    vmc_ingress_datagram(&in, d.b, d.w.len, "test:1", later);
    assert_string_equal(parent_of("vmc/bone/Neck"), "vmc/bone/Hips");
    assert_int_equal(samples_of("vmc/bone/Spine"), 2); /* not pushed with the Hips */
    vmc_ingress_free(&in);
}

/* ---- egress ---- */

struct sent {
    uint8_t d[16][2048];
    size_t len[16];
    int n;
};

static void capture(void *user, const uint8_t *buf, size_t len)
{
    struct sent *s = user;
    assert_true(s->n < 16 && len <= sizeof s->d[0]);
    memcpy(s->d[s->n], buf, len);
    s->len[s->n++] = len;
}

struct got {
    char addr[64], name[64];
    char types[16];
    struct osc_arg a[10];
    int n;
};
struct gots {
    struct got m[128];
    int n, errors;
};

static void got_msg(void *user, const struct osc_message *m, uint64_t tt, int depth)
{
    struct gots *g = user;
    (void)tt;
    (void)depth;
    assert_true(g->n < 128);
    struct got *x = &g->m[g->n++];
    snprintf(x->addr, sizeof x->addr, "%.*s", (int)m->address_len, m->address);
    snprintf(x->types, sizeof x->types, "%.*s", (int)m->n_types, m->types);
    x->n = osc_args_get(m, x->a, 10);
    if (x->n > 0 && x->a[0].tag == 's')
        snprintf(x->name, sizeof x->name, "%.*s", (int)x->a[0].v.s.len, x->a[0].v.s.p);
}

static void got_err(void *user, enum osc_error cls, const struct xg_error *err)
{
    struct gots *g = user;
    (void)cls;
    (void)err;
    g->errors++;
}

static void parse(const struct sent *s, int i, struct gots *g)
{
    const struct osc_walk_ops ops = {.message = got_msg, .error = got_err, .user = g};
    assert_memory_equal(s->d[i], "#bundle\0\0\0\0\0\0\0\0\1", 16);
    osc_walk_packet(s->d[i], s->len[i], &ops);
    assert_int_equal(g->errors, 0);
}

static void feed(const char *src, enum xg_kind kind, int64_t t, struct xg_vec3 p, struct xg_quat q)
{
    struct xg_entity_key key = {.source = src, .kind = kind};
    struct xg_sample s = {.capture_ns = t, .receive_ns = t, .flags = XG_SAMPLE_POSE};
    s.position = p;
    s.orientation = q;
    assert_int_equal(xg_table_update_origin(table, 1, &key, &s, NULL), 0);
}

static void test_egress_vmc_split(void **st)
{
    (void)st;
    /* a skeleton of 20 bones (world poses) plus 2 devices; LeftShoulder is missing, so that
     * LeftUpperArm is sent local to UpperChest */
    const char *bones[] = {"Hips",          "Spine",         "Chest",         "UpperChest",
                           "Neck",          "Head",          "LeftUpperArm",  "LeftLowerArm",
                           "LeftHand",      "RightShoulder", "RightUpperArm", "RightLowerArm",
                           "RightHand",     "LeftUpperLeg",  "LeftLowerLeg",  "LeftFoot",
                           "RightUpperLeg", "RightLowerLeg", "RightFoot",     "Jaw"};
    for (int i = 0; i < 20; i++) {
        char src[64];
        snprintf(src, sizeof src, "take/%s", bones[i]);
        feed(src, XG_KIND_JOINT, T0, (struct xg_vec3){0.1 * i, 1 + 0.01 * i, -0.2 * i},
             qa(1, i, 0, 5.0 * i));
    }
    feed("hmd", XG_KIND_HEAD, T0, (struct xg_vec3){0, 1.7, 0.1}, qa(0, 1, 0, 30));
    feed("stick", XG_KIND_LEFT_HAND, T0, (struct xg_vec3){-0.3, 1.1, 0.2}, qa(1, 0, 0, 40));
    struct vmc_egress eg;
    assert_int_equal(vmc_egress_init(&eg, &ad, VMC_PROFILE_VMC, 300), 0);
    struct sent s = {0};
    eg.send = capture;
    eg.send_user = &s;
    eg.start_ns = T0 - 1500 * MS;
    vmc_egress_drain(&eg, T0);
    assert_true(s.n >= 6); /* 23 messages of ~70 bytes in 300-byte datagrams */
    assert_int_equal(eg.datagrams_out, (uint64_t)s.n);
    assert_int_equal(eg.bones_out, 20);
    assert_int_equal(eg.devices_out, 2);
    assert_string_equal(eg.skeleton, "src/take/");
    static struct gots g;
    memset(&g, 0, sizeof g);
    for (int i = 0; i < s.n; i++) {
        assert_true(s.len[i] <= 300);
        int before = g.n;
        parse(&s, i, &g);
        assert_true(g.n > before); /* no empty bundle */
    }
    assert_string_equal(g.m[0].addr, "/VMC/Ext/OK");
    assert_int_equal(g.m[0].a[0].v.i, 1);
    assert_string_equal(g.m[1].addr, "/VMC/Ext/T");
    assert_true(fabsf(g.m[1].a[0].v.f - 1.5f) < 1e-6f);
    assert_string_equal(g.m[2].addr, "/VMC/Ext/Root/Pos");
    assert_string_equal(g.m[2].name, "root");
    int n_bones = 0;
    for (int i = 0; i < g.n; i++) {
        struct got *x = &g.m[i];
        if (!strcmp(x->addr, "/VMC/Ext/Bone/Pos")) n_bones++;
        if (!strcmp(x->addr, "/VMC/Ext/Hmd/Pos")) assert_string_equal(x->name, "src/hmd");
        if (!strcmp(x->addr, "/VMC/Ext/Con/Pos")) assert_string_equal(x->name, "src/stick");
        if (strcmp(x->name, "LeftUpperArm") != 0) continue;
        /* local = UpperChest⁻¹ ⊗ LeftUpperArm, in Unity's frame */
        struct xg_vec3 pp, p;
        struct xg_quat pq, q;
        pose_of("src/take/UpperChest", &pp, &pq);
        pose_of("src/take/LeftUpperArm", &p, &q);
        pp = xg_frame_pos_out(&unity, pp);
        pq = xg_frame_rot_out(&unity, pq);
        p = xg_frame_pos_out(&unity, p);
        q = xg_frame_rot_out(&unity, q);
        struct xg_quat lq = xg_quat_mul(xg_quat_conj(pq), q);
        struct xg_vec3 lp = xg_quat_rotate(xg_quat_conj(pq), xg_vec3_sub(p, pp));
        struct xg_vec3 gp = {x->a[1].v.f, x->a[2].v.f, x->a[3].v.f};
        struct xg_quat gq = {x->a[4].v.f, x->a[5].v.f, x->a[6].v.f, x->a[7].v.f};
        assert_pose(gp, xg_quat_normalize(gq), lp, lq);
    }
    assert_int_equal(n_bones, 20);
    assert_int_equal(g.n, 3 + 20 + 2);
    vmc_egress_free(&eg);
}

static int vmt_index_of(const struct sent *s, int i)
{
    static struct gots g;
    memset(&g, 0, sizeof g);
    parse(s, i, &g);
    assert_int_equal(g.n, 1);
    assert_string_equal(g.m[0].addr, "/VMT/Room/Unity");
    assert_string_equal(g.m[0].types, "iiffffffff");
    return g.m[0].a[0].v.i * 10 + g.m[0].a[1].v.i; /* index·10 + enable */
}

static void test_egress_vmt_indices(void **st)
{
    (void)st;
    struct vmc_egress eg;
    assert_int_equal(vmc_egress_init(&eg, &ad, VMC_PROFILE_VMT, 1200), 0);
    eg.rules = calloc(1, sizeof *eg.rules);
    eg.rules[0].match = strdup("src/foot*");
    eg.rules[0].index = 3;
    eg.n_rules = 1;
    struct sent s = {0};
    eg.send = capture;
    eg.send_user = &s;
    eg.mtu = 100; /* one 88-byte message per datagram: the order is visible */
    feed("hand", XG_KIND_RIGHT_HAND, T0, XG_VEC3_ZERO, XG_QUAT_IDENTITY);
    vmc_egress_drain(&eg, T0);
    feed("footL", XG_KIND_RIGID_BODY, T0, XG_VEC3_ZERO, XG_QUAT_IDENTITY);
    vmc_egress_drain(&eg, T0);
    feed("other", XG_KIND_HEAD, T0, XG_VEC3_ZERO, XG_QUAT_IDENTITY);
    vmc_egress_drain(&eg, T0);
    assert_int_equal(s.n, 3);
    assert_int_equal(vmt_index_of(&s, 0), 0 * 10 + 3); /* right hand: index 0, enable 3 */
    assert_int_equal(vmt_index_of(&s, 1), 3 * 10 + 1); /* the rule */
    assert_int_equal(vmt_index_of(&s, 2), 1 * 10 + 1); /* lowest free not named by a rule */
    /* the hand goes: its tracker is disabled, the index freed but remembered for it */
    const struct xg_entity *hand = ent("src/hand");
    vmc_egress_entity_gone(&eg, hand);
    assert_int_equal(xg_table_remove(table, xg_entity_id(hand)), 0);
    assert_int_equal(s.n, 4);
    assert_int_equal(vmt_index_of(&s, 3), 0 * 10 + 0);
    feed("newcomer", XG_KIND_RIGID_BODY, T0 + MS, XG_VEC3_ZERO, XG_QUAT_IDENTITY);
    vmc_egress_drain(&eg, T0 + MS);
    assert_int_equal(vmt_index_of(&s, 4), 2 * 10 + 1); /* not 0: that one is the hand's */
    feed("hand", XG_KIND_RIGHT_HAND, T0 + 2 * MS, XG_VEC3_ZERO, XG_QUAT_IDENTITY);
    vmc_egress_drain(&eg, T0 + 2 * MS);
    assert_int_equal(vmt_index_of(&s, 5), 0 * 10 + 3); /* back on its index */
    assert_int_equal(eg.disabled_out, 1);
    vmc_egress_free(&eg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ingress_hierarchy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_egress_vmc_split, setup, teardown),
        cmocka_unit_test_setup_teardown(test_egress_vmt_indices, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
