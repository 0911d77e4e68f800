/* Unit tests for adapters/less/less_mapping.c: LESS type mappings loaded from YAML (profile P8).
 *   - type descriptor strings parse to the right descriptors (nested, case-insensitive);
 *   - a mapped type decodes a real introduce-entity message through the codec and fills the
 *     pose fields (FLOAT64 position, w-first orientation reordered, LIST velocity, default kind);
 *   - bad files: unknown type, unknown field, field/type mismatch, bad order, unknown key —
 *     each an error with the file position and the offending value. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "adapters/less/less_mapping.h"

static const char *write_tmp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/xg-less-map-%d.yaml", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static const char *const GOOD =
    "uri: \"urn:test:vehicle:1\"\n"
    "kind: head\n"
    "components:\n"
    "  - name: body\n"
    "    properties:\n"
    "      - {name: callsign, type: STRING, field: name}\n"
    "      - {name: fuel, type: float_32}\n"
    "      - {name: pos, type: \"VECTOR(3, FLOAT64)\", field: position}\n"
    "      - {name: att, type: \"VECTOR(4,FLOAT32)\", field: orientation,"
    " order: wxyz}\n"
    "      - {name: blob, type: \"LIST(VECTOR(2, FIXED-BINARY(4)))\"}\n"
    "  - name: motion\n"
    "    properties:\n"
    "      - {name: vel, type: \"LIST(FLOAT16)\", field: velocity}\n"
    "      - {name: alive, type: INTEGER, field: active}\n";

static void test_load_and_types(void **state)
{
    (void)state;
    struct less_mapping *m = NULL;
    struct xg_error err = {0};
    /* float_32 is not a type name: '_' only stands for '-' */
    int rc = less_mapping_load(write_tmp(GOOD), &m, &err);
    assert_int_equal(rc, -EINVAL);
    assert_non_null(strstr(err.msg, "float_32"));
    assert_non_null(strstr(err.msg, ":7:"));
    char *fixed = strdup(GOOD);
    memcpy(strstr(fixed, "float_32"), "FLOAT32 ", 8);
    rc = less_mapping_load(write_tmp(fixed), &m, &err);
    free(fixed);
    assert_int_equal(rc, 0);
    assert_string_equal(m->schema.uri, "urn:test:vehicle:1");
    assert_int_equal(m->schema.n_components, 2);
    assert_int_equal(m->comps[0].n_props, 5);
    const struct less_type *blob = &m->comps[0].props[4].type;
    assert_int_equal(blob->code, LESS_T_LIST);
    assert_int_equal(blob->elem->code, LESS_T_VECTOR);
    assert_int_equal(blob->elem->count, 2);
    assert_int_equal(blob->elem->elem->code, LESS_T_FIXEDBIN);
    assert_int_equal(blob->elem->elem->count, 4);
    assert_int_equal(m->comps[0].props[2].type.elem->code, LESS_T_FLOAT64);
    assert_int_equal(m->map[0][3].field, LESS_F_ORIENTATION);
    assert_true(m->map[0][3].wxyz);
    assert_int_equal(m->map[0][1].field, LESS_F_NONE);
    assert_true(less_mapping_pose_compatible(m));
    assert_true(m->has_kind);
    assert_int_equal(m->kind, LESS_KIND_HEAD);
    less_mapping_free(m);
}

static const struct less_schema *sender_type(void *user, int64_t typeid)
{
    return typeid == 9 ? user : NULL;
}

static void test_decode_and_apply(void **state)
{
    (void)state;
    struct less_mapping *m = NULL;
    struct xg_error err = {0};
    char *fixed = strdup(GOOD);
    memcpy(strstr(fixed, "float_32"), "FLOAT32 ", 8);
    assert_int_equal(less_mapping_load(write_tmp(fixed), &m, &err), 0);
    free(fixed);
    /* build introduce-entity(type 9, id 5) with the codec itself */
    const struct less_component *c0 = &m->comps[0], *c1 = &m->comps[1];
    struct less_value pos[3], att[4], vel[3];
    double pv[3] = {12.3456789012, -2.0, 0.5}, av[4] = {0.5, 0.5, 0.5, 0.5}, vv[3] = {1, 0, -1};
    for (int i = 0; i < 3; i++)
        pos[i] = (struct less_value){c0->props[2].type.elem, {.f = pv[i]}};
    for (int i = 0; i < 4; i++)
        att[i] = (struct less_value){c0->props[3].type.elem, {.f = av[i] * (i == 0 ? 1 : -1)}};
    for (int i = 0; i < 3; i++)
        vel[i] = (struct less_value){c1->props[0].type.elem, {.f = vv[i]}};
    struct less_prop_value b[3] = {
        {0, {&c0->props[0].type, {.str = {"truck-7", 7}}}},
        {2, {&c0->props[2].type, {.list = {pos, 3}}}},
        {3, {&c0->props[3].type, {.list = {att, 4}}}},
    };
    struct less_prop_value mo[2] = {
        {0, {&c1->props[0].type, {.list = {vel, 3}}}},
        {1, {&c1->props[1].type, {.i = 0}}},
    };
    struct less_comp_values cv[2] = {{0, {b, 3}}, {1, {mo, 2}}};
    struct less_msg msg = {.code = LESS_MSG_INTRODUCE_ENTITY};
    msg.u.introduce_entity.typeid = 9;
    msg.u.introduce_entity.entity_id = 5;
    msg.u.introduce_entity.components = (struct less_comp_values_list){cv, 2};
    struct less_context ctx = {.sender_type = sender_type, .user = (void *)&m->schema};
    uint8_t buf[512];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    assert_int_equal(less_encode_msg(&w, &ctx, &msg, &err), 0);
    /* decode and apply */
    uint8_t abuf[4096];
    struct less_arena arena;
    less_arena_init(&arena, abuf, sizeof abuf);
    struct xg_reader r;
    xg_reader_init(&r, buf, w.len);
    struct less_msg out;
    assert_int_equal(less_decode_msg(&r, &ctx, &arena, &out, &err), 0);
    struct less_pose p = {0};
    uint32_t got = 0;
    assert_int_equal(less_mapping_apply(m, &out.u.introduce_entity.components, &p, &got, &err), 0);
    assert_int_equal(got, LESS_POSE_BIT(LESS_POSE_NAME) | LESS_POSE_BIT(LESS_POSE_POSITION) |
                              LESS_POSE_BIT(LESS_POSE_ORIENTATION) |
                              LESS_POSE_BIT(LESS_POSE_VELOCITY) | LESS_POSE_BIT(LESS_POSE_ACTIVE));
    assert_int_equal(p.name_len, 7);
    assert_memory_equal(p.name, "truck-7", 7);
    assert_true(p.position.x == 12.3456789012); /* FLOAT64 end to end */
    /* w x y z = 0.5 -0.5 -0.5 -0.5 -> x y z w */
    assert_true(p.orientation.x == -0.5 && p.orientation.w == 0.5);
    assert_true(fabs(p.velocity.z + 1.0) < 1e-3); /* FLOAT16 */
    assert_int_equal(p.active, 0);
    assert_int_equal(p.kind, LESS_KIND_HEAD); /* the mapping's default */
    /* a LIST of the wrong length is a protocol error */
    struct less_prop_value bad = {0, {&c1->props[0].type, {.list = {vel, 2}}}};
    struct less_comp_values bcv = {1, {&bad, 1}};
    struct less_comp_values_list bl = {&bcv, 1};
    assert_int_equal(less_mapping_apply(m, &bl, &p, &got, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "vel"));
    less_mapping_free(m);
}

static void expect_error(const char *text, const char *want)
{
    struct less_mapping *m = NULL;
    struct xg_error err = {0};
    int rc = less_mapping_load(write_tmp(text), &m, &err);
    if (rc == 0 || !strstr(err.msg, want)) {
        fprintf(stderr, "want '%s', got %d '%s'\n", want, rc, err.msg);
        fail();
    }
    assert_null(m);
}

static void test_errors(void **state)
{
    (void)state;
    const char *head = "uri: u\ncomponents:\n  - properties:\n";
    char buf[512];
    snprintf(buf, sizeof buf, "%s      - {type: \"VECTOR(0, FLOAT32)\"}\n", head);
    expect_error(buf, "VECTOR(0, FLOAT32)");
    snprintf(buf, sizeof buf, "%s      - {type: \"LIST(FLOAT32\"}\n", head);
    expect_error(buf, "LIST(FLOAT32");
    snprintf(buf, sizeof buf, "%s      - {type: STRING, field: colour}\n", head);
    expect_error(buf, "field 'colour'");
    snprintf(buf, sizeof buf, "%s      - {type: FLOAT32, field: position}\n", head);
    expect_error(buf, "needs type VECTOR(3");
    snprintf(buf, sizeof buf, "%s      - {type: \"VECTOR(3, FLOAT32)\", field: orientation}\n",
             head);
    expect_error(buf, "needs type VECTOR(4");
    snprintf(buf, sizeof buf,
             "%s      - {type: \"VECTOR(4, FLOAT32)\", field: orientation, "
             "order: zyxw}\n",
             head);
    expect_error(buf, "order 'zyxw'");
    snprintf(buf, sizeof buf, "%s      - {type: INTEGER, colour: red}\n", head);
    expect_error(buf, "colour");
    expect_error("components: []\n", "needs 'uri'");
    expect_error("uri: u\nkind: robot\ncomponents: []\n", "unknown kind 'robot'");
    expect_error("uri: u\n", "needs 'components'");
    struct less_mapping *m = NULL;
    struct xg_error err = {0};
    assert_int_equal(less_mapping_load("/nonexistent/m.yaml", &m, &err) < 0, 1);
    assert_non_null(strstr(err.msg, "/nonexistent/m.yaml"));
    unlink(write_tmp(""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_and_types),
        cmocka_unit_test(test_decode_and_apply),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
