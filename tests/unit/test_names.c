/* Unit tests for the name template engine (core/table/names.h): the placeholders and their alias,
 * brace escaping, fitting of long results, the configuration-time errors naming key and
 * placeholder, and its two users (rename: rules, vrpn-server tracker names) agreeing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/table/entity_priv.h" /* white-box: builds an entity by hand */
#include "adapters/vrpn/vrpn_sensor_map.h"
#include "core/conf/conf.h"
#include "core/table/names.h"
#include "mappings/conf_yaml.h"
#include "mappings/naming.h"

static void expand(const char *tpl, const char *name, const char *adapter, const char *kind,
                   const char *want)
{
    struct xg_name_vars v;
    xg_name_vars_set(&v, name, adapter, kind);
    char out[XG_NAME_MAX];
    size_t n = xg_name_expand(out, sizeof out, tpl, &v);
    assert_string_equal(out, want);
    assert_int_equal(n, strlen(want));
}

static void test_placeholders(void **state)
{
    (void)state;
    expand("{name}", "rig/Wand/0", "rig", "controller", "rig/Wand/0");
    expand("{adapter}", "rig/Wand/0", "rig", "controller", "rig");
    expand("{origin}", "rig/Wand/0", "rig", "controller", "rig"); /* the alias */
    expand("{source}", "rig/Wand/0", "rig", "controller", "Wand/0");
    expand("{kind}", "rig/Wand/0", "rig", "controller", "controller");
    expand("lab-{origin}-{adapter}/{source}:{kind}", "rig/Wand/0", "rig", "head",
           "lab-rig-rig/Wand/0:head");
    /* a renamed entity (no "<adapter>/" prefix): {source} is the whole name */
    expand("{adapter}:{source}", "headset", "rig", "head", "rig:headset");
    expand("{adapter}:{source}", "rigid/x", "rig", "head", "rig:rigid/x"); /* prefix + '/' only */
    expand("{adapter}", "x", NULL, NULL, "");                              /* NULL counts as "" */
    /* escaping: {{ and }} write braces; a lone } is kept */
    expand("{{name}}", "a/b", "a", "head", "{name}");
    expand("{{{name}}}", "a/b", "a", "head", "{a/b}");
    expand("a}b", "a/b", "a", "head", "a}b");
    expand("", "a/b", "a", "head", "");
    /* an unchecked unknown placeholder is copied */
    expand("t-{x}", "a/b", "a", "head", "t-{x}");
}

static void test_long_results_are_fitted(void **state)
{
    (void)state;
    char name1[200], name2[200];
    memset(name1, 'A', sizeof name1 - 2);
    memcpy(name2, name1, sizeof name1);
    name1[sizeof name1 - 2] = '1';
    name2[sizeof name2 - 2] = '2';
    name1[sizeof name1 - 1] = name2[sizeof name2 - 1] = '\0';
    struct xg_name_vars v1, v2;
    xg_name_vars_set(&v1, name1, "a", "head");
    xg_name_vars_set(&v2, name2, "a", "head");
    char o1[XG_NAME_MAX], o2[XG_NAME_MAX], want[XG_NAME_MAX];
    assert_int_equal(xg_name_expand(o1, sizeof o1, "x/{name}", &v1), XG_NAME_MAX - 1);
    xg_name_expand(o2, sizeof o2, "x/{name}", &v2);
    assert_string_not_equal(o1, o2); /* cut, never merged: the hash of the whole expansion */
    xg_name_fitf(want, sizeof want, "x/%s", name1);
    assert_string_equal(o1, want);
}

static void check_error(const char *tpl, const char *msg)
{
    struct xg_error err = {0};
    assert_int_equal(xg_name_template_check(tpl, NULL, "tracker_name", &err), -EINVAL);
    if (!strstr(err.msg, msg)) fail_msg("'%s' not in '%s'", msg, err.msg);
}

static void test_check(void **state)
{
    (void)state;
    struct xg_error err = {0};
    const char *good[] = {"{name}",  "{adapter}", "{origin}", "{source}", "{kind}",
                          "a{{b}}c", "x}y",       "",         "{{"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        assert_int_equal(xg_name_template_check(good[i], NULL, "k", &err), 0);
    check_error("rig-{nmae}", "tracker_name: unknown placeholder '{nmae}' in 'rig-{nmae}' "
                              "(known: {name}, {adapter} (also spelt {origin}), {source}, {kind}; "
                              "{{ and }} write braces)");
    check_error("{sensor}", "unknown placeholder '{sensor}'");
    check_error("{Name}", "unknown placeholder '{Name}'");
    check_error("{}", "unknown placeholder '{}'");
    check_error("a{name", "tracker_name: '{' without a closing '}' in 'a{name'");
}

static struct xg_conf *yaml(const char *text)
{
    struct xg_error err = {0};
    struct xg_conf *c = xg_conf_yaml_parse(text, strlen(text), "test.yaml", &err);
    assert_non_null(c);
    return c;
}

/* rename: rules use the engine: the alias, {kind}, errors at load naming rename[i].name */
static void test_rename_uses_engine(void **state)
{
    (void)state;
    struct xg_rename_rules r;
    struct xg_error err = {0};
    struct xg_conf *c = yaml("rename:\n"
                             "  - {match: \"rig/*\", name: \"{origin}-{kind}/{source}\"}\n");
    assert_int_equal(xg_rename_from_conf(xg_conf_get(c, "rename"), &r, &err), 0);
    char name[XG_NAME_MAX];
    enum xg_kind kind = XG_KIND_HEAD;
    assert_true(xg_rename_apply(&r, "rig/Tracker0/0", name, sizeof name, &kind));
    assert_string_equal(name, "rig-head/Tracker0/0");
    xg_rename_free(&r);
    xg_conf_yaml_free(c);

    c = yaml("rename:\n  - {match: \"*\"}\n  - {match: \"*\", name: \"{adapter}/{device}\"}\n");
    assert_int_equal(xg_rename_from_conf(xg_conf_get(c, "rename"), &r, &err), -EINVAL);
    if (!strstr(err.msg, "test.yaml:3:24: rename[1].name: unknown placeholder '{device}' in "
                         "'{adapter}/{device}'"))
        fail_msg("%s", err.msg);
    xg_conf_yaml_free(c);
}

/* vrpn-server tracker names and rename: the same engine, the same result for the same entity */
static void test_vrpn_agrees(void **state)
{
    (void)state;
    static struct xg_entity e;
    memset(&e, 0, sizeof e);
    e.name = "rig/Wand/0";
    e.kind = XG_KIND_CONTROLLER;
    const char *tpl = "{adapter}|{origin}|{source}|{kind}|{name}|{{}}";
    char t[256], n[XG_NAME_MAX];
    vrpn_sensor_map_expand(tpl, "rig", &e, t, sizeof t);
    struct xg_name_vars v;
    xg_name_vars_set(&v, e.name, "rig", xg_kind_name(e.kind));
    xg_name_expand(n, sizeof n, tpl, &v);
    assert_string_equal(t, "rig|rig|Wand/0|controller|rig/Wand/0|{}");
    assert_string_equal(t, n);
}

/* names are UTF-8 at ingress (issue 30 item 4): invalid bytes become U+FFFD plus a hash of the
 * original bytes, so ff and fe stay two names; the table applies it to every source name */
static void test_utf8_at_ingress(void **state)
{
    (void)state;
    assert_true(xg_utf8_valid("abc \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 16));
    assert_false(xg_utf8_valid("\xff\xfe\xc3"
                               "bad",
                               6));
    assert_false(xg_utf8_valid("\xc3", 1));         /* truncated */
    assert_false(xg_utf8_valid("\xc0\xaf", 2));     /* overlong */
    assert_false(xg_utf8_valid("\xed\xa0\x80", 3)); /* surrogate */
    char a[XG_NAME_MAX], b[XG_NAME_MAX], c[XG_NAME_MAX];
    xg_name_utf8(a, sizeof a,
                 "tra/\xff\xfe\xc3"
                 "bad",
                 10);
    xg_name_utf8(b, sizeof b,
                 "tra/\xff\xff\xc3"
                 "bad",
                 10);
    assert_true(xg_utf8_valid(a, strlen(a)));
    assert_memory_equal(a,
                        "tra/\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                        "bad~",
                        17);
    assert_int_equal(strlen(a), 17 + XG_NAME_HASH_HEX);
    assert_string_not_equal(a, b); /* never merged */
    xg_name_utf8(c, sizeof c,
                 "tra/\xff\xfe\xc3"
                 "bad",
                 10);
    assert_string_equal(a, c); /* stable */
    xg_name_utf8(c, sizeof c, "tra/ok", 6);
    assert_string_equal(c, "tra/ok"); /* valid: kept */
    char big[300];
    memset(big, 0xff, sizeof big); /* 900 bytes once replaced: fitted */
    xg_name_utf8(c, sizeof c, big, sizeof big);
    assert_true(strlen(c) < sizeof c && xg_utf8_valid(c, strlen(c)));

    /* the table: one entity per raw name, named in UTF-8, found again by the same bytes */
    struct xg_table *t = xg_table_new(NULL);
    assert_non_null(t);
    assert_int_equal(xg_table_set_adapter_name(t, 0, "in"), 0);
    struct xg_sample s = {.capture_ns = 1000, .flags = XG_SAMPLE_POSE, .orientation = {0, 0, 0, 1}};
    struct xg_entity_key k = {.source = "tra/\xff\xfe\xc3"
                                        "bad",
                              .kind = XG_KIND_RIGID_BODY};
    uint32_t id1 = 0, id2 = 0, id3 = 0;
    assert_int_equal(xg_table_update_origin(t, 0, &k, &s, &id1), 0);
    s.capture_ns = 2000;
    assert_int_equal(xg_table_update_origin(t, 0, &k, &s, &id2), 0);
    assert_int_equal(id1, id2);
    k.source = "tra/\xfe\xff\xc3"
               "bad";
    assert_int_equal(xg_table_update_origin(t, 0, &k, &s, &id3), 0);
    assert_int_not_equal(id1, id3);
    const struct xg_entity *e = xg_table_get(t, id1);
    assert_true(xg_utf8_valid(xg_entity_name(e), strlen(xg_entity_name(e))));
    assert_true(xg_utf8_valid(xg_entity_source(e), strlen(xg_entity_source(e))));
    assert_memory_equal(xg_entity_name(e), "in/tra/\xef\xbf\xbd", 10);
    xg_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_placeholders), cmocka_unit_test(test_long_results_are_fitted),
        cmocka_unit_test(test_check),        cmocka_unit_test(test_rename_uses_engine),
        cmocka_unit_test(test_vrpn_agrees),  cmocka_unit_test(test_utf8_at_ingress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
