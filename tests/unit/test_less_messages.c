/* Unit tests for the LESS codec, messages: the pose schema, messages 1-12 (encode, decode, the
 * draft's rules for each) and the pose property helpers. Values (INTEGER, STRING, floats, variants)
 * are in test_less_codec.c, framing and signatures in test_less_frame.c. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/test_util.h"

#include "adapters/less/less_codec.h"

/* ---- helpers ---- */

static uint8_t arena_buf[1 << 16];
static struct less_arena arena;

static struct less_arena *fresh_arena(void)
{
    less_arena_init(&arena, arena_buf, sizeof arena_buf);
    return &arena;
}

/* ---- schemas ---- */

static void test_pose_schema(void **state)
{
    (void)state;
    const struct less_schema *s = less_pose_schema();
    assert_string_equal(s->uri, "urn:xrgate:lods:pose:1");
    assert_int_equal(s->n_components, 1);
    assert_int_equal(s->components[0].n_props, 9);
    const struct less_property *p = s->components[0].props;
    assert_string_equal(p[LESS_POSE_NAME].name, "name");
    assert_int_equal(p[LESS_POSE_NAME].type.code, LESS_T_STRING);
    assert_int_equal(p[LESS_POSE_KIND].type.code, LESS_T_INTEGER);
    assert_true(less_type_equal(&p[LESS_POSE_POSITION].type, &less_type_vec3f));
    assert_true(less_type_equal(&p[LESS_POSE_VELOCITY].type, &less_type_vec3f));
    assert_true(less_type_equal(&p[LESS_POSE_ORIENTATION].type, &less_type_vec4f));
    assert_true(less_type_equal(&p[LESS_POSE_ANGULAR_VELOCITY].type, &less_type_vec3f));
    assert_int_equal(p[LESS_POSE_ACTIVE].type.code, LESS_T_INTEGER);
    assert_int_equal(p[LESS_POSE_ORIGIN].type.code, LESS_T_STRING);
    assert_int_equal(p[LESS_POSE_SAMPLE_TIME].type.code, LESS_T_INTEGER);
    assert_false(less_type_equal(&less_type_vec3f, &less_type_vec4f));
    assert_int_equal(less_schema_validate(s, NULL), 0);

    const struct less_schema *c = less_connection_schema();
    assert_string_equal(c->uri, "urn:xrgate:less:connection:1");
    assert_int_equal(c->components[0].n_props, 5);
    assert_int_equal(c->components[0].props[LESS_CONN_SCHEMA].type.code, LESS_T_STRING);
    assert_int_equal(c->components[0].props[LESS_CONN_FIRST_SEQ].type.code, LESS_T_INTEGER);
    assert_int_equal(c->components[0].props[LESS_CONN_QUANTUM_NS].type.code, LESS_T_INTEGER);
    assert_int_equal(c->components[0].props[LESS_CONN_KEY_ID].type.code, LESS_T_STRING);
    assert_int_equal(c->components[0].props[LESS_CONN_RATE_HZ].type.code, LESS_T_INTEGER);
    assert_int_equal(less_schema_validate(c, NULL), 0);

    static const struct less_property badp[] = {{"ok", {LESS_T_INTEGER, 0, NULL}},
                                                {"vec", {LESS_T_VECTOR, 3, NULL}}};
    static const struct less_component badc[] = {{"c", badp, 2}};
    static const struct less_schema bad = {"urn:test:bad", badc, 1, NULL, 0};
    struct xg_error e = {0};
    assert_int_equal(less_schema_validate(&bad, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "urn:test:bad: component 0 property 1 (vec)");
    static const struct less_schema nouri = {NULL, badc, 1, NULL, 0};
    assert_int_equal(less_schema_validate(&nouri, &e), -EINVAL);
}

/* ---- messages ---- */

/* Test peer state: type 1 is the pose schema in both directions; entities 7 and 8 are poses. */
static const struct less_schema *t_type(void *u, int64_t id)
{
    (void)u;
    return id == 1 ? less_pose_schema() : NULL;
}

static int t_entity(void *u, int64_t id, int64_t *type)
{
    (void)u;
    if (id != 7 && id != 8) return -1;
    *type = 1;
    return 0;
}

static const struct less_property collision_props[] = {
    {"a", {LESS_T_OBJECT_ID, 0, NULL}},
    {"b", {LESS_T_OBJECT_ID, 0, NULL}},
    {"impulse", {LESS_T_FLOAT32, 0, NULL}},
    {"marker", {LESS_T_NULL, 0, NULL}},
};
static const struct less_component test_interactions[] = {{"collision", collision_props, 4}};
static const struct less_schema interaction_schema = {"urn:test:interactions:1", NULL, 0,
                                                      test_interactions, 1};
static const struct less_context tctx = {t_type, t_type, t_entity, t_entity, &interaction_schema,
                                         NULL,   NULL};

static struct less_msg decoded;

/* Encode m, compare with hex, decode, re-encode: same bytes. Leaves the decoded msg in
 * `decoded` (arena-backed). */
static void msg_roundtrip(const struct less_msg *m, const char *hex)
{
    uint8_t buf[512], again[512];
    struct xg_writer w;
    struct xg_error e = {0};
    xg_writer_init(&w, buf, sizeof buf);
    if (less_encode_msg(&w, &tctx, m, &e) != 0) {
        fprintf(stderr, "encode: %s\n", e.msg);
        fail();
    }
    xg_test_assert_bytes(buf, w.len, hex);
    struct xg_reader r;
    xg_reader_init(&r, buf, w.len);
    if (less_decode_msg(&r, &tctx, fresh_arena(), &decoded, &e) != 0) {
        fprintf(stderr, "decode: %s\n", e.msg);
        fail();
    }
    assert_int_equal(r.off, w.len);
    assert_int_equal(decoded.code, m->code);
    size_t n = w.len;
    xg_writer_init(&w, again, sizeof again);
    assert_int_equal(less_encode_msg(&w, &tctx, &decoded, &e), 0);
    assert_int_equal(w.len, n);
    assert_memory_equal(again, buf, n);
    /* every strict prefix fails cleanly, reading only the exact-size copy (ASan checks) */
    for (size_t k = 0; k < n; k++) {
        uint8_t *cut = malloc(k ? k : 1);
        assert_non_null(cut);
        memcpy(cut, buf, k);
        struct less_msg tmp;
        xg_reader_init(&r, cut, k);
        static uint8_t scratch[1 << 14];
        struct less_arena sa;
        less_arena_init(&sa, scratch, sizeof scratch);
        int rc = less_decode_msg(&r, &tctx, &sa, &tmp, NULL);
        /* some prefixes are complete shorter messages (e.g. a LIST that ends early is not) */
        if (rc == 0)
            assert_true(r.off <= k);
        else
            assert_true(rc == -EMSGSIZE || rc == -EPROTO);
        free(cut);
    }
}

static void test_msg_introduce_type(void **state)
{
    (void)state;
    struct less_msg m = {.code = LESS_MSG_INTRODUCE_TYPE};
    m.u.introduce_type.typeid = 1;
    m.u.introduce_type.uri = LESS_POSE_URI;
    m.u.introduce_type.uri_len = strlen(LESS_POSE_URI);
    msg_roundtrip(&m, "01 01 16 75726e3a7872676174653a6c6f64733a706f73653a31");
    assert_string_equal(decoded.u.introduce_type.uri, LESS_POSE_URI);
}

static void test_msg_subscribe_unsubscribe(void **state)
{
    (void)state;
    static const int64_t props[] = {LESS_POSE_POSITION, LESS_POSE_ORIENTATION};
    struct less_comp_subscription cs = {{1, {0}}, props, 2};
    struct less_msg m = {.code = LESS_MSG_SUBSCRIBE_TYPE};
    m.u.subscribe_type.typeid = 1;
    m.u.subscribe_type.components = &cs;
    m.u.subscribe_type.count = 1;
    /* code, typeid, component-count, path-length, component-id, property-id-count, ids */
    msg_roundtrip(&m, "02 01 01 01 00 02 02 04");
    assert_int_equal(decoded.u.subscribe_type.components[0].property_ids[1], 4);
    /* empty property list: subscribes to nothing (P15) */
    cs.count = 0;
    msg_roundtrip(&m, "02 01 01 01 00 00");

    m = (struct less_msg){.code = LESS_MSG_UNSUBSCRIBE_TYPE};
    m.u.unsubscribe_type.typeid = 1;
    msg_roundtrip(&m, "03 01");
}

static struct less_value vec(struct less_value *items, size_t n)
{
    return (struct less_value){NULL, {.list = {items, n}}};
}

static void test_msg_introduce_update_entity(void **state)
{
    (void)state;
    struct less_value pos[3] = {{NULL, {.f = 1.0}}, {NULL, {.f = 2.0}}, {NULL, {.f = -0.5}}};
    struct less_value q[4] = {
        {NULL, {.f = 0}}, {NULL, {.f = 0}}, {NULL, {.f = 0}}, {NULL, {.f = 1}}};
    struct less_prop_value pv[] = {
        {LESS_POSE_NAME, {NULL, {.str = {"head", 4}}}},
        {LESS_POSE_KIND, {NULL, {.i = LESS_KIND_HEAD}}},
        {LESS_POSE_POSITION, vec(pos, 3)},
        {LESS_POSE_ORIENTATION, vec(q, 4)},
        {LESS_POSE_ACTIVE, {NULL, {.i = 1}}},
        {LESS_POSE_ORIGIN, {NULL, {.str = {"lab-a/sim", 9}}}},
        {LESS_POSE_SAMPLE_TIME, {NULL, {.i = 1000000}}},
    };
    struct less_comp_values cv = {0, {pv, 7}};
    struct less_msg m = {.code = LESS_MSG_INTRODUCE_ENTITY};
    m.u.introduce_entity.typeid = 1;
    m.u.introduce_entity.entity_id = 7;
    m.u.introduce_entity.components = (struct less_comp_values_list){&cv, 1};
    msg_roundtrip(&m, "04 01 07 01 00 07"
                      "00 04 68656164"
                      "01 01"
                      "02 0000803f 00000040 000000bf"
                      "04 00000000 00000000 00000000 0000803f"
                      "06 01"
                      "07 09 6c61622d612f73696d"
                      "08 80897a");
    const struct less_prop_list *pl = &decoded.u.introduce_entity.components.items[0].props;
    assert_int_equal(pl->count, 7);
    assert_string_equal(pl->items[0].value.u.str.p, "head");
    assert_true(pl->items[2].value.u.list.items[1].u.f == 2.0);
    assert_int_equal(pl->items[6].value.u.i, 1000000);

    /* update-entity: position only */
    struct less_comp_values cu = {0, {&pv[2], 1}};
    m = (struct less_msg){.code = LESS_MSG_UPDATE_ENTITY};
    m.u.update_entity.entity_id = 7;
    m.u.update_entity.components = (struct less_comp_values_list){&cu, 1};
    msg_roundtrip(&m, "06 07 01 00 01 02 0000803f 00000040 000000bf");
    /* an update with no components is legal (nothing changed) */
    m.u.update_entity.components.count = 0;
    msg_roundtrip(&m, "06 07 00");
}

static void test_msg_simple_ids(void **state)
{
    (void)state;
    struct less_msg m = {.code = LESS_MSG_REMOVE_ENTITY};
    m.u.remove_entity.entity_id = 300;
    msg_roundtrip(&m, "05 ac 04");
    assert_int_equal(decoded.u.remove_entity.entity_id, 300);
    m = (struct less_msg){.code = LESS_MSG_REQUEST_ENTITY};
    m.u.request_entity.entity_id = 8;
    msg_roundtrip(&m, "07 08");
}

static void test_msg_methods(void **state)
{
    (void)state;
    struct less_value args[2] = {{&less_type_integer, {.i = 5}},
                                 {&less_type_string, {.str = {"x", 1}}}};
    struct less_msg m = {.code = LESS_MSG_METHOD_INVOCATION};
    m.u.method_invocation.request_id = 42;
    m.u.method_invocation.entity_id = 7;
    m.u.method_invocation.path = (struct less_path){1, {0}};
    m.u.method_invocation.property_id = 3;
    m.u.method_invocation.args = args;
    m.u.method_invocation.argc = 2;
    /* code, request-id, entity-id, path (1: 0), property-id, argument-count, 2 variants */
    msg_roundtrip(&m, "08 2a 07 01 00 03 02 02 01 05 03 02 01 78");
    assert_string_equal(decoded.u.method_invocation.args[1].u.str.p, "x");

    m = (struct less_msg){.code = LESS_MSG_METHOD_RESULT};
    m.u.method_result.request_id = 42;
    m.u.method_result.status = 404; /* P17 */
    m.u.method_result.ret = (struct less_value){&less_type_string, {.str = {"no methods", 10}}};
    msg_roundtrip(&m, "09 2a 94 06 03 0b 0a 6e6f206d6574686f6473");
    assert_int_equal(decoded.u.method_result.status, 404);
    m.u.method_result.status = 0;
    m.u.method_result.ret = (struct less_value){&less_type_null, {.i = 0}};
    msg_roundtrip(&m, "09 2a 00 00 00");
}

static void test_msg_interaction_tweak_control(void **state)
{
    (void)state;
    struct less_prop_value ip[] = {
        {0, {NULL, {.i = 7}}}, {1, {NULL, {.i = 9}}}, {2, {NULL, {.f = 0.5}}}};
    struct less_msg m = {.code = LESS_MSG_INTERACTION};
    m.u.interaction.interaction_id = 0;
    m.u.interaction.props = (struct less_prop_list){ip, 3};
    msg_roundtrip(&m, "0a 00 03 00 07 01 09 02 0000003f");
    /* a NULL-typed property takes only its id byte (found by fuzzing: the property-count bound
     * must allow one byte per property) */
    struct less_prop_value marker = {3, {NULL, {.i = 0}}};
    m.u.interaction.props = (struct less_prop_list){&marker, 1};
    msg_roundtrip(&m, "0a 00 01 03");

    m = (struct less_msg){.code = LESS_MSG_TWEAK_ENTITY};
    m.u.tweak_entity.entity_id = 8;
    m.u.tweak_entity.path = (struct less_path){1, {0}};
    m.u.tweak_entity.property_id = LESS_POSE_ACTIVE;
    m.u.tweak_entity.value = (struct less_value){NULL, {.i = 0}};
    msg_roundtrip(&m, "0b 08 01 00 06 00");

    struct less_prop_value cp[] = {
        {LESS_CONN_SCHEMA, {NULL, {.str = {LESS_CONNECTION_URI, strlen(LESS_CONNECTION_URI)}}}},
        {LESS_CONN_FIRST_SEQ, {NULL, {.i = 0}}},
        {LESS_CONN_QUANTUM_NS, {NULL, {.i = 1000}}},
        {LESS_CONN_KEY_ID, {NULL, {.str = {"k1", 2}}}},
        {LESS_CONN_RATE_HZ, {NULL, {.i = 60}}},
    };
    m = (struct less_msg){.code = LESS_MSG_CONNECTION_CONTROL};
    m.u.connection_control.props = (struct less_prop_list){cp, 5};
    /* P5: code 12, then a property-value-list of urn:xrgate:less:connection:1 */
    msg_roundtrip(&m, "0c 05 00 1c 75726e3a7872676174653a6c6573733a636f6e6e656374696f6e3a31"
                      "01 00 02 a8 0f 03 02 6b31 04 3c");
    assert_int_equal(decoded.u.connection_control.props.items[2].value.u.i, 1000);
}

static int decode_hex_msg(const char *hex, struct xg_error *e)
{
    uint8_t buf[256];
    size_t n = xg_test_unhex(hex, buf, sizeof buf);
    struct xg_reader r;
    struct less_msg m;
    xg_reader_init(&r, buf, n);
    int rc = less_decode_msg(&r, &tctx, fresh_arena(), &m, e);
    if (rc == 0 && r.off != n) return 1; /* distinguishes "decoded but left bytes" */
    return rc;
}

static void test_msg_rejections(void **state)
{
    (void)state;
    struct {
        const char *hex, *msg;
    } bad[] = {
        {"00", "unknown message code 0"},
        {"0d", "unknown message code 13"},
        {"c0 00", "negative"},
        {"04 09 07 00", "LESS introduce-entity: unknown typeid 9 (not introduced by the sender)"},
        {"06 63 00", "LESS update-entity: unknown entity 99"},
        {"06 07 01 01 00", "component 1 at offset 3 not in urn:xrgate:lods:pose:1"},
        {"06 07 01 00 01 09 00",
         "property 9 at offset 5 not in component 0 of urn:xrgate:lods:pose:1"},
        {"06 07 01 00 01 02 0000803f", "VECTOR at offset 6: truncated"},
        {"06 07 01 00 01 00 01 c0 00",
         "LESS update-entity: property 0 (name): STRING element: negative INTEGER -1"},
        {"02 05 00", "LESS subscribe-type: unknown typeid 5 (not introduced by the receiver)"},
        {"02 01 01 02 00 00 00", "does not name a component"},
        {"02 01 01 00 00", "does not name a component"},
        {"02 01 01 01 00 01 0c", "property 12"},
        {"03 02", "unknown typeid 2"},
        {"08 01 07 09 00 00 00 00 00 00 00 00 00 00 00", "path-length: count 9"},
        {"08 01 07 00 03 01 02 02 05 00",
         "argument 0: STANDALONE-VARIANT at offset 6: INTEGER data length 2 but value uses 1"},
        {"0a 01 00", "unknown interaction-id 1"},
        {"0a 00 01 04 00", "property 4 at offset 3 not in the interaction"},
        {"0b 09 01 00 06 00",
         "LESS tweak-entity: unknown entity 9 (not introduced by the receiver)"},
        {"0b 07 01 00 0a 00", "property 10"},
        {"0c 01 05 00", "property 5 at offset 2 not in urn:xrgate:less:connection:1"},
        {"01 01 05 61", "count 5 at offset 2 exceeds the data"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct xg_error e = {0};
        int rc = decode_hex_msg(bad[i].hex, &e);
        if (rc >= 0 || !strstr(e.msg, bad[i].msg)) {
            fprintf(stderr, "case %zu (%s): rc %d msg \"%s\" want \"%s\"\n", i, bad[i].hex, rc,
                    e.msg, bad[i].msg);
            fail();
        }
    }
    /* no context at all: schema-bound messages are unknown, schema-free ones decode */
    uint8_t upd[] = {0x06, 0x07, 0x00};
    struct xg_reader r;
    struct less_msg m;
    struct xg_error e = {0};
    xg_reader_init(&r, upd, sizeof upd);
    assert_int_equal(less_decode_msg(&r, NULL, fresh_arena(), &m, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "unknown entity 7");
    uint8_t rem[] = {0x05, 0x07};
    xg_reader_init(&r, rem, sizeof rem);
    assert_int_equal(less_decode_msg(&r, NULL, fresh_arena(), &m, &e), 0);
}

static void test_msg_encode_rejections(void **state)
{
    (void)state;
    uint8_t buf[64];
    struct xg_writer w;
    struct xg_error e = {0};
    struct less_prop_value pv = {LESS_POSE_POSITION, {NULL, {.str = {"x", 1}}}};
    pv.value.type = &less_type_string;
    struct less_comp_values cv = {0, {&pv, 1}};
    struct less_msg m = {.code = LESS_MSG_UPDATE_ENTITY};
    m.u.update_entity.entity_id = 7;
    m.u.update_entity.components = (struct less_comp_values_list){&cv, 1};
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(less_encode_msg(&w, &tctx, &m, &e), -EINVAL);
    xg_test_assert_err_contains(&e,
                                "LESS encode update-entity: property 2 (position): value: has type "
                                "STRING, expected VECTOR");
    assert_int_equal(w.len, 0); /* nothing half-written */
    pv.property_id = 20;
    assert_int_equal(less_encode_msg(&w, &tctx, &m, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "property 20 not in component 0 of urn:xrgate:lods:pose:1");
    m.u.update_entity.entity_id = 99;
    assert_int_equal(less_encode_msg(&w, &tctx, &m, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "unknown entity 99");
    m = (struct less_msg){.code = (enum less_msg_code)13};
    assert_int_equal(less_encode_msg(&w, &tctx, &m, &e), -EINVAL);
    xg_test_assert_err_contains(&e, "unknown message code 13");
    /* too small an output */
    m = (struct less_msg){.code = LESS_MSG_INTRODUCE_TYPE};
    m.u.introduce_type.typeid = 1;
    m.u.introduce_type.uri = LESS_POSE_URI;
    m.u.introduce_type.uri_len = strlen(LESS_POSE_URI);
    xg_writer_init(&w, buf, 10);
    assert_int_equal(less_encode_msg(&w, &tctx, &m, &e), -EMSGSIZE);
    xg_test_assert_err_contains(&e, "output full");
    assert_int_equal(w.len, 0);
    assert_int_equal(w.err, 0);
    /* a message that fits after one that did not: the writer is still usable */
    m = (struct less_msg){.code = LESS_MSG_REMOVE_ENTITY};
    m.u.remove_entity.entity_id = 7;
    assert_int_equal(less_encode_msg(&w, &tctx, &m, &e), 0);
    xg_test_assert_bytes(buf, w.len, "05 07");
}

/* ---- pose helpers ---- */

static void test_pose_props_roundtrip(void **state)
{
    (void)state;
    struct less_pose p = {0};
    p.present = LESS_POSE_ALL;
    p.name = "rig/Tracker0/0";
    p.name_len = strlen(p.name);
    p.kind = LESS_KIND_RIGID_BODY;
    p.position = (struct xg_vec3){1.5, -2.25, 0.125};
    p.velocity = (struct xg_vec3){0.5, 0, -1};
    p.orientation = (struct xg_quat){0, 0.6, 0, 0.8};
    p.angular_velocity = (struct xg_vec3){0, 3.0, 0};
    p.active = 1;
    p.origin = "lab-a/rig";
    p.origin_len = strlen(p.origin);
    p.sample_time = 123456789;
    struct less_pose_props pp;
    less_pose_to_props(&p, LESS_POSE_ALL, &pp);
    assert_int_equal(pp.list.count, 9);
    for (size_t i = 0; i < 9; i++)
        assert_int_equal(pp.list.items[i].property_id, (int64_t)i);

    struct less_comp_values cv = {0, pp.list};
    struct less_msg m = {.code = LESS_MSG_INTRODUCE_ENTITY};
    m.u.introduce_entity.typeid = 1;
    m.u.introduce_entity.entity_id = 8;
    m.u.introduce_entity.components = (struct less_comp_values_list){&cv, 1};
    uint8_t buf[256];
    struct xg_writer w;
    struct xg_error e = {0};
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(less_encode_msg(&w, &tctx, &m, &e), 0);
    struct xg_reader r;
    xg_reader_init(&r, buf, w.len);
    struct less_msg d;
    assert_int_equal(less_decode_msg(&r, &tctx, fresh_arena(), &d, &e), 0);
    struct less_pose q = {0};
    assert_int_equal(less_pose_from_props(&d.u.introduce_entity.components.items[0].props, &q, &e),
                     0);
    assert_int_equal(q.present, LESS_POSE_ALL);
    assert_int_equal(q.name_len, p.name_len);
    assert_memory_equal(q.name, p.name, p.name_len);
    assert_memory_equal(q.origin, p.origin, p.origin_len);
    assert_int_equal(q.kind, LESS_KIND_RIGID_BODY);
    assert_true(q.position.x == 1.5 && q.position.y == -2.25 && q.position.z == 0.125);
    assert_true(q.velocity.x == 0.5 && q.velocity.z == -1);
    assert_true(fabs(q.orientation.y - 0.6) < 1e-7 && fabs(q.orientation.w - 0.8) < 1e-7);
    assert_true(q.angular_velocity.y == 3.0);
    assert_int_equal(q.active, 1);
    assert_int_equal(q.sample_time, 123456789);

    /* mask: only position and orientation, in id order */
    less_pose_to_props(&p, LESS_POSE_BIT(LESS_POSE_ORIENTATION) | LESS_POSE_BIT(LESS_POSE_POSITION),
                       &pp);
    assert_int_equal(pp.list.count, 2);
    assert_int_equal(pp.list.items[0].property_id, LESS_POSE_POSITION);
    assert_int_equal(pp.list.items[1].property_id, LESS_POSE_ORIENTATION);
    /* update semantics: applying them changes only those fields */
    struct less_pose u = {0};
    u.present = LESS_POSE_BIT(LESS_POSE_ACTIVE);
    u.active = 1;
    assert_int_equal(less_pose_from_props(&pp.list, &u, &e), 0);
    assert_int_equal(u.present, LESS_POSE_BIT(LESS_POSE_ACTIVE) |
                                    LESS_POSE_BIT(LESS_POSE_POSITION) |
                                    LESS_POSE_BIT(LESS_POSE_ORIENTATION));
    assert_int_equal(u.active, 1);
    assert_true(u.position.y == -2.25);
    /* fields not present are never emitted */
    struct less_pose none = {0};
    less_pose_to_props(&none, LESS_POSE_ALL, &pp);
    assert_int_equal(pp.list.count, 0);
}

static void test_pose_props_rejections(void **state)
{
    (void)state;
    struct xg_error e = {0};
    struct less_pose p = {0};
    p.present = LESS_POSE_BIT(LESS_POSE_KIND);
    p.kind = 3;
    struct less_value f3[3] = {{&less_type_float32, {.f = 1}},
                               {&less_type_float32, {.f = NAN}},
                               {&less_type_float32, {.f = 0}}};
    struct less_prop_value pv[2] = {{LESS_POSE_KIND, {&less_type_integer, {.i = 4}}},
                                    {LESS_POSE_POSITION, {&less_type_vec3f, {.list = {f3, 3}}}}};
    struct less_prop_list l = {pv, 2};
    assert_int_equal(less_pose_from_props(&l, &p, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "LESS pose position[1]: not finite");
    assert_int_equal(p.kind, 3); /* unchanged on error */
    f3[1].u.f = INFINITY;
    assert_int_equal(less_pose_from_props(&l, &p, &e), -EPROTO);
    pv[1] = (struct less_prop_value){LESS_POSE_POSITION, {&less_type_string, {.str = {"x", 1}}}};
    assert_int_equal(less_pose_from_props(&l, &p, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "LESS pose position: value of type STRING, expected VECTOR");
    pv[1] = (struct less_prop_value){LESS_POSE_ACTIVE, {&less_type_integer, {.i = 2}}};
    assert_int_equal(less_pose_from_props(&l, &p, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "active: 2 is not 0 or 1");
    pv[1] = (struct less_prop_value){9, {&less_type_integer, {.i = 2}}};
    assert_int_equal(less_pose_from_props(&l, &p, &e), -EPROTO);
    xg_test_assert_err_contains(&e, "property 9 not in urn:xrgate:lods:pose:1");
    pv[1] = (struct less_prop_value){LESS_POSE_ACTIVE, {&less_type_integer, {.i = 0}}};
    assert_int_equal(less_pose_from_props(&l, &p, &e), 0);
    assert_int_equal(p.kind, 4);
    assert_int_equal(p.active, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pose_schema),
        cmocka_unit_test(test_msg_introduce_type),
        cmocka_unit_test(test_msg_subscribe_unsubscribe),
        cmocka_unit_test(test_msg_introduce_update_entity),
        cmocka_unit_test(test_msg_simple_ids),
        cmocka_unit_test(test_msg_methods),
        cmocka_unit_test(test_msg_interaction_tweak_control),
        cmocka_unit_test(test_msg_rejections),
        cmocka_unit_test(test_msg_encode_rejections),
        cmocka_unit_test(test_pose_props_roundtrip),
        cmocka_unit_test(test_pose_props_rejections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
