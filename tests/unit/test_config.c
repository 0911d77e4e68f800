/* Unit tests for configuration loading (mappings/conf_yaml + gateway validation): every error
 * carries file:line:column; ${VAR} expansion; defaults; the embedded default config is valid. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/util/metrics.h"
#include "gateway/gateway.h"
#include "mappings/conf_yaml.h"

#include <event2/buffer.h>

extern const unsigned char xg_embedded_default_conf[];

static int load_text(const char *text, struct xg_error *err)
{
    struct xg_gateway gw;
    struct xg_gateway_opts o = {.config_text = text, .config_name = "t.yaml"};
    int rc = xg_gateway_load(&gw, &o, err);
    xg_gateway_free(&gw);
    return rc;
}

static void expect_error(const char *text, const char *want)
{
    struct xg_error err = {0};
    int rc = load_text(text, &err);
    if (rc == 0 || !strstr(err.msg, want)) {
        print_error("config:\n%s\nwant error containing: %s\ngot (%d): %s\n", text, want, rc,
                    err.msg);
        fail();
    }
}

static void test_embedded_default_is_valid(void **state)
{
    (void)state;
    struct xg_gateway gw;
    struct xg_error err = {0};
    struct xg_gateway_opts o = {.config_text = (const char *)xg_embedded_default_conf};
    int rc = xg_gateway_load(&gw, &o, &err);
    if (rc) print_error("%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(gw.n_adapters, 1);
    assert_string_equal(gw.adapters[0]->a.ops->type, "synth");
    assert_string_equal(gw.conf.admin_listen, "127.0.0.1:8080");
    assert_string_equal(gw.conf.id, "xrgate");
    assert_true(gw.conf.table.max_horizon_ns == 100 * INT64_C(1000000));
    assert_true(gw.conf.table.stale_ns == 500 * INT64_C(1000000));
    assert_true(gw.conf.table.expire_ns == 10000 * INT64_C(1000000));
    assert_true(gw.conf.table.motion_memory_ns == 2000 * INT64_C(1000000));
    xg_gateway_free(&gw);
}

/* predict.motion_memory_ms: 0 turns the skeleton's motion memory off; 0..60000 */
static void test_motion_memory_key(void **state)
{
    (void)state;
    struct xg_gateway gw;
    struct xg_error err = {0};
    struct xg_gateway_opts o = {.config_text = "gateway:\n  predict: {motion_memory_ms: 0}\n",
                                .config_name = "t.yaml"};
    assert_int_equal(xg_gateway_load(&gw, &o, &err), 0);
    assert_true(gw.conf.table.motion_memory_ns == 0);
    xg_gateway_free(&gw);
    o.config_text = "gateway:\n  predict: {motion_memory_ms: 1500}\n";
    assert_int_equal(xg_gateway_load(&gw, &o, &err), 0);
    assert_true(gw.conf.table.motion_memory_ns == 1500 * INT64_C(1000000));
    xg_gateway_free(&gw);
    expect_error("gateway:\n  predict:\n    motion_memory_ms: 60001\n",
                 "t.yaml:3:23: 'motion_memory_ms' = 60001 is out of range");
    expect_error("gateway:\n  predict:\n    motion_memory_ms: -1\n",
                 "t.yaml:3:23: 'motion_memory_ms' = -1 is out of range");
}

/* "did you mean": the nearest key the section asked for, within 2 edits and under half the
 * unknown key's length; exact texts */
static void test_did_you_mean(void **state)
{
    (void)state;
    assert_int_equal(xg_conf_edit_distance("rate_hx", "rate_hz", 2), 1);
    assert_int_equal(xg_conf_edit_distance("predcit", "predict", 2), 1); /* a transposition */
    assert_int_equal(xg_conf_edit_distance("bodys", "bodies", 2), 2);
    assert_int_equal(xg_conf_edit_distance("stale", "stale_ms", 2), 3); /* capped at cap + 1 */
    assert_int_equal(xg_conf_edit_distance("", "", 2), 0);
    assert_int_equal(xg_conf_edit_distance("abc", "abc", 0), 0);
    expect_error("adapters:\n  - {name: a, type: synth, rate_hx: 100}\n",
                 "t.yaml:2:28: unknown key 'rate_hx' (did you mean 'rate_hz'?)");
    expect_error("adapters:\n  - name: a\n    type: synth\n    bodys: 3\n",
                 "t.yaml:4:5: unknown key 'bodys' (did you mean 'bodies'?)");
    expect_error("gatway: {}\n", "t.yaml:1:1: unknown key 'gatway' (did you mean 'gateway'?)");
    expect_error("gateway:\n  predcit: {}\n",
                 "t.yaml:2:3: unknown key 'predcit' (did you mean 'predict'?)");
    /* nothing near: no suggestion; a 2-letter key is never "corrected" by 1 edit */
    struct xg_error err = {0};
    assert_int_not_equal(load_text("gateway:\n  colour: blue\n", &err), 0);
    assert_string_equal(err.msg, "t.yaml:2:3: unknown key 'colour'");
    assert_int_not_equal(load_text("gateway:\n  ix: x\n", &err), 0);
    assert_string_equal(err.msg, "t.yaml:2:3: unknown key 'ix'");
}

/* issue 34 item 10: every error of the file, in order, the first one also in err; one bad key
 * does not hide the others (each gateway part, each adapter on its own, every unknown key); a
 * misspelt required key gets its did-you-mean next to the required-key error */
static void test_every_error(void **state)
{
    (void)state;
    struct xg_gateway gw;
    struct xg_error err = {0};
    struct xg_gateway_opts o = {.config_text =
                                    "gateway:\n"
                                    "  entity: {stale_ms: 0, expire_ms: x}\n"
                                    "  log_level: shouty\n"
                                    "  colour: blue\n"
                                    "adapters:\n"
                                    "  - {name: a, type: synth, rate_hx: 100}\n"
                                    "  - {name: b, type: nope}\n"
                                    "  - {name: c, type: vrpn-client, devcies: [T0@localhost]}\n"
                                    "  - {name: d, type: synth, frob: 1, nmae: x}\n",
                                .config_name = "t.yaml"};
    assert_int_equal(xg_gateway_load(&gw, &o, &err), -EINVAL);
    static const char *const want[] = {
        "t.yaml:2:22: 'stale_ms' = 0 is out of range [1, 3600000]",
        "t.yaml:3:14: log_level 'shouty' must be error, warn, info, debug or trace",
        "t.yaml:6:28: unknown key 'rate_hx' (did you mean 'rate_hz'?)",
        "t.yaml:7:21: unknown adapter type 'nope'",
        "t.yaml:8:5: vrpn-client: 'devices' is required",
        "t.yaml:8:34: unknown key 'devcies' (did you mean 'devices'?)",
        "t.yaml:9:28: unknown key 'frob'",
        "t.yaml:9:37: unknown key 'nmae' (did you mean 'name'?)",
        "t.yaml:4:3: unknown key 'colour'",
    };
    size_t n = sizeof want / sizeof want[0];
    for (int i = 0; i < gw.n_errors; i++)
        print_message("error %d: %s\n", i, gw.errors[i]);
    assert_int_equal(gw.n_errors, (int)n);
    for (size_t i = 0; i < n; i++)
        if (strncmp(gw.errors[i], want[i], strlen(want[i]))) {
            print_error("error %zu: want %s, got %s\n", i, want[i], gw.errors[i]);
            fail();
        }
    assert_string_equal(err.msg, gw.errors[0]);
    xg_gateway_free(&gw);
    /* a key after a bad one in the same section is still read: not an unknown key */
    o.config_text = "gateway:\n  resolv_conf: /nonexistent/r\n  id: gw1\n  strict: maybe\n"
                    "  log_level: debug\n";
    assert_int_equal(xg_gateway_load(&gw, &o, &err), -ENOENT);
    for (int i = 0; i < gw.n_errors; i++)
        print_message("error %d: %s\n", i, gw.errors[i]);
    assert_int_equal(gw.n_errors, 2);
    assert_non_null(strstr(gw.errors[0], "t.yaml:2:16: resolv_conf '/nonexistent/r'"));
    assert_non_null(strstr(gw.errors[1], "t.yaml:4:11: 'strict' must be true or false"));
    xg_gateway_free(&gw);
    /* a valid file: no errors */
    o.config_text = "adapters:\n  - {name: a, type: synth}\n";
    assert_int_equal(xg_gateway_load(&gw, &o, &err), 0);
    assert_int_equal(gw.n_errors, 0);
    xg_gateway_free(&gw);
}

static void test_errors_have_positions(void **state)
{
    (void)state;
    expect_error("gateway:\n  predict:\n    max_horizon_ms: lots\n",
                 "t.yaml:3:21: 'max_horizon_ms' must be an integer, got 'lots'");
    expect_error("gateway:\n  entity:\n    stale_ms: 0\n",
                 "t.yaml:3:15: 'stale_ms' = 0 is out of range");
    expect_error("gateway:\n  entity: {stale_ms: 900, expire_ms: 800}\n",
                 "t.yaml:2:38: expire_ms (800) must not be less than stale_ms (900)");
    expect_error("gateway:\n  colour: blue\n", "t.yaml:2:3: unknown key 'colour'");
    expect_error("gatway: {}\n", "t.yaml:1:1: unknown key 'gatway'");
    expect_error("gateway:\n  log_level: loud\n",
                 "t.yaml:2:14: log_level 'loud' must be error, warn, info, debug or trace");
    expect_error("adapters:\n  - name: a\n    type: teleporter\n",
                 "t.yaml:3:11: unknown adapter type 'teleporter' (known: synth");
    expect_error("adapters:\n  - type: synth\n", "t.yaml:2:5: adapter needs a 'name'");
    expect_error("adapters:\n  - name: a/b\n    type: synth\n",
                 "t.yaml:2:11: adapter name 'a/b' must be");
    expect_error("adapters:\n  - {name: a, type: synth}\n  - {name: a, type: synth}\n",
                 "t.yaml:3:12: duplicate adapter name 'a'");
    expect_error("adapters:\n  - name: a\n    type: synth\n    bodys: 3\n",
                 "t.yaml:4:5: unknown key 'bodys'");
    expect_error("adapters:\n  - name: a\n    type: synth\n    rate_hz: -5\n",
                 "t.yaml:4:14: 'rate_hz' = -5 is out of range");
    expect_error("adapters:\n  - name: a\n    type: synth\n    frame: martian\n",
                 "t.yaml:4:12: unknown frame preset 'martian'");
    expect_error("adapters:\n  - name: a\n    type: synth\n    head: maybe\n",
                 "t.yaml:4:11: 'head' must be true or false, got 'maybe'");
    expect_error("adapters: {name: a}\n", "t.yaml:1:11: 'adapters' must be a list, not a mapping");
    expect_error("gateway: [1, 2]\n", "t.yaml:1:10: 'gateway' must be a mapping, not a list");
    expect_error("gateway:\n  id: a\n  id: b\n", "t.yaml:3:3: duplicate key 'id'");
    expect_error("gateway: {id: [\n", "t.yaml:2:1: YAML syntax error");
    expect_error("- 1\n- 2\n", "t.yaml:1:1: the configuration must be a mapping");
    expect_error("gateway:\n  id: ${XG_TEST_SURELY_UNSET_VAR}\n",
                 "t.yaml:2:7: environment variable 'XG_TEST_SURELY_UNSET_VAR' is not set");
    expect_error("base: &b {id: 1}\n", "YAML anchors are not supported");
    expect_error("gateway:\n  admin:\n    tls: {cert: a.crt}\n",
                 "t.yaml:3:10: admin.tls needs both 'cert' and 'key'");
    expect_error("gateway:\n  admin:\n    token_file: /nonexistent/xrgate-token\n",
                 "t.yaml:3:17: cannot read token_file '/nonexistent/xrgate-token'");
}

static void test_defaults_without_gateway_section(void **state)
{
    (void)state;
    struct xg_gateway gw;
    struct xg_error err = {0};
    struct xg_gateway_opts o = {.config_text = "adapters: []\n"};
    assert_int_equal(xg_gateway_load(&gw, &o, &err), 0);
    assert_string_equal(gw.conf.id, "xrgate");
    assert_string_equal(gw.conf.admin_listen, "127.0.0.1:8080");
    xg_gateway_free(&gw);
    o.config_text = "gateway: {admin: {token_file: null}}\n";
    assert_int_equal(xg_gateway_load(&gw, &o, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "cannot read token_file 'null'"));
    xg_gateway_free(&gw);
}

static void test_env_expansion(void **state)
{
    (void)state;
    setenv("XG_TEST_ID", "lab-b", 1);
    unsetenv("XG_TEST_UNSET");
    const char *text =
        "gateway:\n  id: ${XG_TEST_ID}\n  admin: {listen: \"${XG_TEST_UNSET:-127.0.0.1:9}\"}\n";
    struct xg_gateway gw;
    struct xg_error err = {0};
    struct xg_gateway_opts o = {.config_text = text, .admin_token = "tok"};
    assert_int_equal(xg_gateway_load(&gw, &o, &err), 0);
    assert_string_equal(gw.conf.id, "lab-b");
    assert_string_equal(gw.conf.admin_listen, "127.0.0.1:9");
    assert_string_equal(gw.conf.admin_token, "tok");
    xg_gateway_free(&gw);
    /* command-line / environment overrides win over the file */
    o.admin_listen = "127.0.0.1:0";
    o.log_level = "debug";
    assert_int_equal(xg_gateway_load(&gw, &o, &err), 0);
    assert_string_equal(gw.conf.admin_listen, "127.0.0.1:0");
    assert_int_equal(gw.conf.log_level, XG_LOG_DEBUG);
    xg_gateway_free(&gw);
    xg_log_set_level(XG_LOG_INFO);
    o.log_level = "chatty";
    assert_int_equal(xg_gateway_load(&gw, &o, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "log level 'chatty'"));
    xg_gateway_free(&gw);
}

/* Text "extra: " + n '[' + n ']' (the root mapping is level 1, so the lists reach level n + 1). */
static char *nested_lists(int n)
{
    char *t = malloc((size_t)(2 * n) + 16);
    assert_non_null(t);
    int k = sprintf(t, "extra: ");
    memset(t + k, '[', (size_t)n);
    memset(t + k + n, ']', (size_t)n);
    strcpy(t + k + 2 * n, "\n");
    return t;
}

/* Issue 22 item 18: nesting (the parser recurses per level: 100000 levels overflowed the stack),
 * scalar, key and node counts are bounded, each with a file:line:column error. */
static void test_yaml_bounds(void **state)
{
    (void)state;
    struct xg_error err = {0};
    char *t = nested_lists(XG_CONF_YAML_MAX_DEPTH - 1); /* exactly 64 levels: parsed */
    struct xg_conf *root = xg_conf_yaml_parse(t, strlen(t), "t.yaml", &err);
    assert_non_null(root);
    xg_conf_yaml_free(root);
    free(t);
    t = nested_lists(XG_CONF_YAML_MAX_DEPTH); /* the 65th level is the 64th '[', column 71 */
    assert_null(xg_conf_yaml_parse(t, strlen(t), "t.yaml", &err));
    assert_string_equal(err.msg, "t.yaml:1:71: list nested deeper than 64 levels");
    free(t);
    t = nested_lists(100000); /* the stack-overflow input: now the same error, no recursion */
    assert_null(xg_conf_yaml_parse(t, strlen(t), "t.yaml", &err));
    assert_string_equal(err.msg, "t.yaml:1:71: list nested deeper than 64 levels");
    free(t);
    /* mappings count the same way: "x: " and 64 "{a: ", the last at column 256 */
    char *m = malloc(64 * 4 + 16);
    assert_non_null(m);
    char *q = m + sprintf(m, "x: ");
    for (int d = 0; d < 64; d++)
        q += sprintf(q, "{a: ");
    strcpy(q, "1\n");
    assert_null(xg_conf_yaml_parse(m, strlen(m), "m.yaml", &err));
    assert_string_equal(err.msg, "m.yaml:1:256: mapping nested deeper than 64 levels");
    free(m);

    size_t big = XG_CONF_YAML_MAX_SCALAR + 1;
    t = malloc(big + 16);
    assert_non_null(t);
    memcpy(t, "id: ", 4);
    memset(t + 4, 'x', big);
    strcpy(t + 4 + big, "\n");
    assert_null(xg_conf_yaml_parse(t, strlen(t), "t.yaml", &err));
    assert_string_equal(err.msg, "t.yaml:1:5: value of 65537 bytes is longer than 65536");
    t[4 + big - 1] = '\n'; /* 65536 bytes: accepted */
    t[4 + big] = '\0';
    root = xg_conf_yaml_parse(t, strlen(t), "t.yaml", &err);
    assert_non_null(root);
    xg_conf_yaml_free(root);
    /* a key one byte too long (explicit "? key": YAML limits implicit keys to 1024 characters) */
    memcpy(t, "? ", 2);
    memset(t + 2, 'k', XG_CONF_YAML_MAX_KEY + 1);
    strcpy(t + 2 + XG_CONF_YAML_MAX_KEY + 1, "\n: 1\n");
    assert_null(xg_conf_yaml_parse(t, strlen(t), "t.yaml", &err));
    assert_string_equal(err.msg, "t.yaml:1:3: key of 1025 bytes is longer than 1024");
    free(t);

    /* ${VAR} expansion cannot build a value past the scalar limit either */
    char *v = malloc(40001);
    assert_non_null(v);
    memset(v, 'v', 40000);
    v[40000] = '\0';
    setenv("XG_TEST_BIG", v, 1);
    free(v);
    const char *two = "id: ${XG_TEST_BIG}${XG_TEST_BIG}\n";
    assert_null(xg_conf_yaml_parse(two, strlen(two), "t.yaml", &err));
    assert_string_equal(err.msg,
                        "t.yaml:1:5: value longer than 65536 bytes after ${VAR} expansion");
    unsetenv("XG_TEST_BIG");

    /* a flat list of 100000 items: with the root and the list, item 99999 (column 200001) is node
     * 100001 */
    size_t items = XG_CONF_YAML_MAX_NODES;
    t = malloc(items * 2 + 16);
    assert_non_null(t);
    char *p = t + sprintf(t, "l: [");
    for (size_t i = 0; i < items; i++) {
        *p++ = '1';
        *p++ = ',';
    }
    strcpy(p - 1, "]\n");
    assert_null(xg_conf_yaml_parse(t, strlen(t), "t.yaml", &err));
    assert_string_equal(err.msg,
                        "t.yaml:1:200001: more than 100000 YAML nodes (values, mappings, lists) in "
                        "one file");
    free(t);
}

static void test_metrics_render(void **state)
{
    (void)state;
    struct xg_metrics *m = xg_metrics_new();
    double *a = xg_metrics_slot(m, "x_total", "Things", XG_METRIC_COUNTER, "adapter=\"a\"");
    double *b = xg_metrics_slot(m, "x_total", "Things", XG_METRIC_COUNTER, "adapter=\"b\"");
    double *g = xg_metrics_slot(m, "y", "A gauge", XG_METRIC_GAUGE, NULL);
    assert_ptr_equal(a,
                     xg_metrics_slot(m, "x_total", "Things", XG_METRIC_COUNTER, "adapter=\"a\""));
    assert_null(xg_metrics_slot(m, "x_total", "Things", XG_METRIC_GAUGE, NULL));
    *a = 3;
    *b += 1.5;
    *g = -2;
    struct evbuffer *out = evbuffer_new();
    xg_metrics_render(m, out);
    size_t n = evbuffer_get_length(out);
    char *s = calloc(1, n + 1);
    evbuffer_remove(out, s, n);
    assert_string_equal(s, "# HELP x_total Things\n# TYPE x_total counter\n"
                           "x_total{adapter=\"a\"} 3\nx_total{adapter=\"b\"} 1.5\n"
                           "# HELP y A gauge\n# TYPE y gauge\ny -2\n");
    free(s);
    evbuffer_free(out);
    char esc[32];
    assert_string_equal(xg_metrics_escape("a\"b\\c\nd", esc, sizeof esc), "a\\\"b\\\\c\\nd");
    xg_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embedded_default_is_valid),
        cmocka_unit_test(test_errors_have_positions),
        cmocka_unit_test(test_motion_memory_key),
        cmocka_unit_test(test_did_you_mean),
        cmocka_unit_test(test_every_error),
        cmocka_unit_test(test_defaults_without_gateway_section),
        cmocka_unit_test(test_env_expansion),
        cmocka_unit_test(test_yaml_bounds),
        cmocka_unit_test(test_metrics_render),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
