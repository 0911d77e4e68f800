/* Unit tests for the name template engine (core/names.h): the placeholders and their alias,
 * brace escaping, fitting of long results, the configuration-time errors naming key and
 * placeholder, and its two users (rename: rules, vrpn-server tracker names) agreeing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/entity_priv.h" /* white-box: builds an entity by hand */
#include "adapters/vrpn/vrpn_sensor_map.h"
#include "core/conf.h"
#include "core/names.h"
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_placeholders), cmocka_unit_test(test_long_results_are_fitted),
        cmocka_unit_test(test_check),        cmocka_unit_test(test_rename_uses_engine),
        cmocka_unit_test(test_vrpn_agrees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
