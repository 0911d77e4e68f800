/* RGMP v2 validity rules: one test per rule of wire-rules.md §7 (and the binding decisions that
 * amend them), each asserting the rejection and the error text: device, group, stream index,
 * field and offending value. JSON literals use ' for " to stay readable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/rgmp/rgmp_codec.h"

/* A copy of s with every ' turned into ". */
static char *dq(const char *s)
{
    char *p = strdup(s);
    for (char *q = p; *q; q++)
        if (*q == '\'') *q = '"';
    return p;
}

/* A definition for device 7: group 0 "pose" with one TRANSFORM, group 1 "extra" with `streams`,
 * and `statics` as static_data. */
static char *mk(const char *statics, const char *streams)
{
    const char *fmt =
        "{'protocol_name':'RGMP','protocol_version':'2.0.0','device_id':7,'device_type':'suit',"
        "'timestamp_epoch':'unix_epoch','static_data':[%s],'groups':[{'name':'pose',"
        "'expected_rate_hz':100,'streams':[{'data_type':'FLOAT[7]','measure_type':'TRANSFORM',"
        "'target_frame':'hips','reference_frame':'LTP_ENU'}]},{'name':'extra',"
        "'expected_rate_hz':10,'streams':[%s]}]}";
    size_t n = strlen(fmt) + strlen(statics) + strlen(streams) + 1;
    char *out = malloc(n);
    snprintf(out, n, fmt, statics, streams);
    char *r = dq(out);
    free(out);
    return r;
}

static const struct rgmp_limits *g_lim;

/* Decode `json` (already with real quotes); expect `code` and every needle in the message. */
static void expect_reject_raw(int line, const char *json, size_t len, int code,
                              const char *const *needles)
{
    struct rgmp_definition *def = (struct rgmp_definition *)1;
    struct xg_error err = {0};
    int rc = rgmp_definition_decode(json, len, g_lim, &def, &err);
    if (rc != code)
        fail_msg("line %d: expected %d, got %d (%s)\n  input: %.300s", line, code, rc, err.msg,
                 json);
    if (def != NULL) fail_msg("line %d: *out not NULL on error", line);
    for (size_t i = 0; needles[i]; i++) {
        char *nd = dq(needles[i]);
        if (!strstr(err.msg, nd)) fail_msg("line %d: message lacks [%s]:\n  %s", line, nd, err.msg);
        free(nd);
    }
}

static void expect_reject(int line, const char *json_sq, int code, const char *const *needles)
{
    char *js = dq(json_sq);
    expect_reject_raw(line, js, strlen(js), code, needles);
    free(js);
}

static struct rgmp_definition *expect_accept(int line, const char *json)
{
    struct rgmp_definition *def = NULL;
    struct xg_error err = {0};
    if (rgmp_definition_decode(json, strlen(json), g_lim, &def, &err) != 0)
        fail_msg("line %d: rejected: %s\n  input: %.400s", line, err.msg, json);
    return def;
}

#define NEEDLES(...) ((const char *const[]){__VA_ARGS__, NULL})
/* A whole document (with ' quotes). */
#define DOC_REJECT(json, ...) expect_reject(__LINE__, json, -EPROTO, NEEDLES(__VA_ARGS__))
/* One stream in group 1 "extra" (stream 0). */
#define STREAM_REJECT(stream, ...)                                                                 \
    do {                                                                                           \
        char *js_ = mk("", stream);                                                                \
        expect_reject_raw(__LINE__, js_, strlen(js_), -EPROTO,                                     \
                          NEEDLES("device 7, group 1 'extra', stream 0: ", __VA_ARGS__));          \
        free(js_);                                                                                 \
    } while (0)
/* Streams in group 1 where stream `idx` is the culprit. */
#define STREAMS_REJECT(streams, idx, ...)                                                          \
    do {                                                                                           \
        char *js_ = mk("", streams);                                                               \
        expect_reject_raw(__LINE__, js_, strlen(js_), -EPROTO,                                     \
                          NEEDLES("device 7, group 1 'extra', stream " idx ": ", __VA_ARGS__));    \
        free(js_);                                                                                 \
    } while (0)
/* One static_data entry (static_data 0). */
#define STATIC_REJECT(entry, ...)                                                                  \
    do {                                                                                           \
        char *js_ = mk(entry, "");                                                                 \
        expect_reject_raw(__LINE__, js_, strlen(js_), -EPROTO,                                     \
                          NEEDLES("device 7, static_data 0: ", __VA_ARGS__));                      \
        free(js_);                                                                                 \
    } while (0)
#define STREAM_ACCEPT(streams)                                                                     \
    do {                                                                                           \
        char *js_ = mk("", streams);                                                               \
        rgmp_definition_free(expect_accept(__LINE__, js_));                                        \
        free(js_);                                                                                 \
    } while (0)
#define STATIC_ACCEPT(entry)                                                                       \
    do {                                                                                           \
        char *js_ = mk(entry, "");                                                                 \
        rgmp_definition_free(expect_accept(__LINE__, js_));                                        \
        free(js_);                                                                                 \
    } while (0)

/* A CUSTOM stream of the given type (label l). */
#define CUST(type)                                                                                 \
    "{'data_type':'" type "','measure_type':'CUSTOM','target_frame':'hub',"                        \
    "'custom_label':'l'}"

static int check_header(uint32_t prefix, uint32_t len, const struct rgmp_limits *lim,
                        struct xg_error *err)
{
    uint8_t b[8];
    struct xg_writer w;
    xg_writer_init(&w, b, sizeof b);
    rgmp_encode_header(&w, prefix, len);
    struct rgmp_header h;
    size_t need = 99;
    int rc = rgmp_frame_split(b, sizeof b, lim, &h, &need, err);
    /* the splitter judges the header before any payload byte arrived */
    if (rc < 0) assert_int_equal(need, 0);
    return rc;
}

/* Rule 1: EOF inside a header or a payload. */
static void test_rule_01_eof_inside_frame(void **state)
{
    (void)state;
    struct xg_error err = {0};
    assert_int_equal(rgmp_frame_eof(0, &err), 0);
    assert_int_equal(rgmp_frame_eof(5, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "truncated frame: stream ended with 5 bytes of an incomplete "
                                    "header (rule 1)"));
    assert_int_equal(rgmp_frame_eof(9, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "9 bytes of an incomplete frame"));
}

/* Rule 2: msg_prefix not 1, 2 or 3. */
static void test_rule_02_bad_prefix(void **state)
{
    (void)state;
    struct xg_error err = {0};
    const uint32_t bad[] = {0, 4, 0x01000000u, 0xFFFFFFFFu};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(check_header(bad[i], 4, NULL, &err), -EPROTO);
        char want[64];
        snprintf(want, sizeof want, "msg_prefix = %u", bad[i]);
        assert_non_null(strstr(err.msg, want));
        assert_non_null(strstr(err.msg, "rule 2"));
    }
    for (uint32_t p = 1; p <= 3; p++)
        assert_int_equal(check_header(p, p == 3 ? 4 : 16, NULL, &err), 0);
}

/* Rule 3 / D8: msg_len above the limits, checked from the header alone. */
static void test_rule_03_msg_len_limit(void **state)
{
    (void)state;
    struct xg_error err = {0};
    assert_int_equal(check_header(1, RGMP_MAX_DEFINITION_DEFAULT, NULL, &err), 0);
    assert_int_equal(check_header(1, RGMP_MAX_DEFINITION_DEFAULT + 1, NULL, &err), -EMSGSIZE);
    assert_non_null(strstr(err.msg, "msg_len = 1048577"));
    assert_non_null(strstr(err.msg, "maximum of 1048576"));
    assert_int_equal(check_header(2, RGMP_MAX_DATA_DEFAULT, NULL, &err), 0);
    assert_int_equal(check_header(2, RGMP_MAX_DATA_DEFAULT + 1, NULL, &err), -EMSGSIZE);
    assert_non_null(strstr(err.msg, "msg_len = 65537"));
    assert_int_equal(check_header(2, 0xFFFFFFFFu, NULL, &err), -EMSGSIZE);
    /* configured limits */
    struct rgmp_limits lim = {.max_definition_len = 100, .max_data_len = 40};
    assert_int_equal(check_header(1, 101, &lim, &err), -EMSGSIZE);
    assert_int_equal(check_header(2, 41, &lim, &err), -EMSGSIZE);
    assert_int_equal(check_header(2, 40, &lim, &err), 0);
    /* the decoder enforces it too */
    struct rgmp_definition *def;
    assert_int_equal(rgmp_definition_decode("{}", 101, &lim, &def, &err), -EMSGSIZE);
}

/* Rule 4: UTF-8, exactly one JSON object, no NUL, nothing trailing, no duplicate keys. */
static void test_rule_04_json_payload(void **state)
{
    (void)state;
    char *good = mk("", "");
    size_t n = strlen(good);
    rgmp_definition_free(expect_accept(__LINE__, good));
    /* NUL byte (also a NUL terminator counted in msg_len) */
    expect_reject_raw(__LINE__, good, n + 1, -EPROTO, NEEDLES("NUL byte at offset", "rule 4"));
    char *p = strdup(good);
    p[10] = '\0';
    expect_reject_raw(__LINE__, p, n, -EPROTO, NEEDLES("device ?: payload: NUL byte at offset 10"));
    /* invalid UTF-8 inside a string: lone continuation, overlong, surrogate, > U+10FFFF */
    const char *bad_utf8[] = {"\x80", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82"};
    for (size_t i = 0; i < 5; i++) {
        char doc[128];
        snprintf(doc, sizeof doc, "{\"device_type\":\"a%sb\",\"device_id\":1,\"groups\":[]}",
                 bad_utf8[i]);
        char want[32];
        snprintf(want, sizeof want, "invalid UTF-8 byte 0x%02x at offset 16",
                 (unsigned char)bad_utf8[i][0]);
        expect_reject_raw(__LINE__, doc, strlen(doc), -EPROTO, NEEDLES(want, "rule 4"));
    }
    rgmp_definition_free(expect_accept(
        __LINE__, "{\"device_type\":\"\xE2\x82\xAC\",\"device_id\":1,\"groups\":[]}"));
    DOC_REJECT("{'device_id':1,'groups':[]", "invalid JSON", "rule 4");
    DOC_REJECT("", "invalid JSON");
    DOC_REJECT("[{'device_id':1,'groups':[]}]", "payload = array of 1: expected one JSON object");
    DOC_REJECT("{'device_id':1,'groups':[]} x", "invalid JSON", "end of file expected");
    DOC_REJECT("{'device_id':1,'groups':[]}{}", "invalid JSON");
    DOC_REJECT("{'device_id':1,'groups':[],'device_type':'a\\u0000b'}", "invalid JSON");
    /* whitespace around is fine */
    rgmp_definition_free(expect_accept(__LINE__, " \n{\"device_id\":1,\"groups\":[]}\r\n\t "));
    /* duplicate keys: top level, in a stream, in bit_mapping, in device_info */
    DOC_REJECT("{'device_id':1,'groups':[],'device_id':2}", "duplicate object key", "rule 4");
    DOC_REJECT("{'device_id':1,'groups':[{'name':'g','expected_rate_hz':1,'streams':[{"
               "'data_type':'FLOAT','measure_type':'CUSTOM','target_frame':'a','custom_label':'x',"
               "'target_frame':'b'}]}]}",
               "duplicate object key");
    DOC_REJECT("{'device_id':1,'groups':[{'name':'g','expected_rate_hz':1,'streams':[{"
               "'data_type':'UINT32','measure_type':'STATUS_FLAGS','target_frame':'a',"
               "'bit_mapping':{'0':'x','0':'y'}}]}]}",
               "duplicate object key");
    DOC_REJECT("{'device_id':1,'groups':[],'device_info':{'a':1,'a':2}}", "duplicate object key");
    free(p);
    free(good);
}

/* Rule 5: device_id an integer in 0..4294967295. */
static void test_rule_05_device_id(void **state)
{
    (void)state;
    DOC_REJECT("{'device_id':-1,'groups':[]}", "device ?: device_id = -1",
               "0..4294967295 (rule 5)");
    DOC_REJECT("{'device_id':4294967296,'groups':[]}", "device_id = 4294967296", "rule 5");
    DOC_REJECT("{'device_id':'7','groups':[]}", "device_id = '7'", "rule 5");
    DOC_REJECT("{'device_id':7.0,'groups':[]}", "device_id = 7", "rule 5");
    DOC_REJECT("{'device_id':null,'groups':[]}", "device_id = null", "rule 5");
    DOC_REJECT("{'groups':[]}", "device ?: device_id missing (rule 5)");
    struct rgmp_definition *d = expect_accept(__LINE__, "{\"device_id\":4294967295,\"groups\":[]}");
    assert_int_equal(d->device_id, 4294967295u);
    rgmp_definition_free(d);
    d = expect_accept(__LINE__, "{\"device_id\":0,\"groups\":[]}");
    assert_int_equal(d->device_id, 0);
    assert_null(d->protocol_name);
    assert_int_equal(d->n_static, 0);
    rgmp_definition_free(d);
}

/* Rule 6: top-level JSON types. */
static void test_rule_06_top_level_types(void **state)
{
    (void)state;
    DOC_REJECT("{'device_id':7,'protocol_name':1,'groups':[]}",
               "device 7: protocol_name = 1: expected a string (rule 6)");
    DOC_REJECT("{'device_id':7,'protocol_version':2,'groups':[]}", "device 7: protocol_version = 2",
               "rule 6");
    DOC_REJECT("{'device_id':7,'device_type':['suit'],'groups':[]}",
               "device 7: device_type = array of 1: expected a string");
    DOC_REJECT("{'device_id':7,'timestamp_epoch':{},'groups':[]}",
               "device 7: timestamp_epoch = object");
    DOC_REJECT("{'device_id':7,'device_info':'x','groups':[]}",
               "device 7: device_info = 'x': expected an object (rule 6)");
    DOC_REJECT("{'device_id':7,'device_info':null,'groups':[]}", "device_info = null");
    DOC_REJECT("{'device_id':7,'static_data':{},'groups':[]}",
               "device 7: static_data = object: expected an array (rule 6)");
    DOC_REJECT("{'device_id':7}", "device 7: groups missing (rule 6)");
    DOC_REJECT("{'device_id':7,'groups':{}}", "device 7: groups = object: expected an array");
    /* unknown top-level keys are ignored (§8 q1) */
    rgmp_definition_free(
        expect_accept(__LINE__, "{\"device_id\":7,\"groups\":[],\"vendor_ext\":[1,2]}"));
}

/* Rule 7 (with D4, D10): major version 2; unknown epochs accepted. */
static void test_rule_07_version_and_epoch(void **state)
{
    (void)state;
    DOC_REJECT("{'device_id':7,'protocol_version':'3.0.0','groups':[]}",
               "device 7: protocol_version = '3.0.0': major version must be 2 (rule 7, D4)");
    DOC_REJECT("{'device_id':7,'protocol_version':'1.9','groups':[]}", "'1.9'", "rule 7");
    DOC_REJECT("{'device_id':7,'protocol_version':'20.0.0','groups':[]}", "'20.0.0'");
    DOC_REJECT("{'device_id':7,'protocol_version':'v2','groups':[]}", "'v2'");
    DOC_REJECT("{'device_id':7,'protocol_version':'','groups':[]}", "protocol_version = ''");
    DOC_REJECT("{'device_id':7,'protocol_version':'2x','groups':[]}", "'2x'");
    const char *ok[] = {"2.0.0", "2.1.0", "2"};
    for (int i = 0; i < 3; i++) {
        char doc[128];
        snprintf(doc, sizeof doc, "{\"device_id\":7,\"protocol_version\":\"%s\",\"groups\":[]}",
                 ok[i]);
        rgmp_definition_free(expect_accept(__LINE__, doc));
    }
    struct rgmp_definition *d = expect_accept(
        __LINE__, "{\"device_id\":7,\"timestamp_epoch\":\"gps_epoch\",\"groups\":[]}");
    assert_int_equal(d->epoch, RGMP_EPOCH_OTHER);
    assert_string_equal(d->timestamp_epoch, "gps_epoch");
    rgmp_definition_free(d);
    d = expect_accept(__LINE__,
                      "{\"device_id\":7,\"timestamp_epoch\":\"device_boot\",\"groups\":[]}");
    assert_int_equal(d->epoch, RGMP_EPOCH_DEVICE_BOOT);
    rgmp_definition_free(d);
}

/* Rule 8: group name, expected_rate_hz (number >= 0), streams. */
static void test_rule_08_groups(void **state)
{
    (void)state;
    DOC_REJECT("{'device_id':7,'groups':[5]}", "device 7, group 0: group = 5: expected an object");
    DOC_REJECT("{'device_id':7,'groups':[{'expected_rate_hz':1,'streams':[]}]}",
               "device 7, group 0: name missing (rule 8)");
    DOC_REJECT("{'device_id':7,'groups':[{'name':5,'expected_rate_hz':1,'streams':[]}]}",
               "device 7, group 0: name = 5: expected a string (rule 8)");
    DOC_REJECT("{'device_id':7,'groups':[{'name':'a','expected_rate_hz':1,'streams':[]},"
               "{'name':'imu','streams':[]}]}",
               "device 7, group 1 'imu': expected_rate_hz missing (rule 8)");
    DOC_REJECT("{'device_id':7,'groups':[{'name':'imu','expected_rate_hz':-1,'streams':[]}]}",
               "device 7, group 0 'imu': expected_rate_hz = -1: must be a finite number >= 0");
    DOC_REJECT("{'device_id':7,'groups':[{'name':'imu','expected_rate_hz':-0.5,'streams':[]}]}",
               "expected_rate_hz = -0.5");
    DOC_REJECT("{'device_id':7,'groups':[{'name':'imu','expected_rate_hz':'100','streams':[]}]}",
               "group 0 'imu': expected_rate_hz = '100': expected a number (rule 8)");
    DOC_REJECT("{'device_id':7,'groups':[{'name':'imu','expected_rate_hz':1}]}",
               "group 0 'imu': streams missing (rule 8)");
    DOC_REJECT("{'device_id':7,'groups':[{'name':'imu','expected_rate_hz':1,'streams':{}}]}",
               "group 0 'imu': streams = object: expected an array (rule 8)");
    struct rgmp_definition *d = expect_accept(
        __LINE__, "{\"device_id\":7,\"groups\":[{\"name\":\"ev\",\"expected_rate_hz\":0,"
                  "\"streams\":[]},{\"name\":\"v\",\"expected_rate_hz\":59.94,\"streams\":[]}]}");
    assert_true(d->groups[0].expected_rate_hz == 0.0);
    assert_true(d->groups[1].expected_rate_hz == 59.94);
    rgmp_definition_free(d);
}

/* Rule 9a: data_type grammar and overflow-safe sizes. */
static void test_rule_09a_data_type(void **state)
{
    (void)state;
    STREAM_REJECT(CUST("FLOAT[0]"), "data_type 'FLOAT[0]': dimension N must be >= 1 (rule 9a)");
    STREAM_REJECT(CUST("FLOAT[0,3]"), "data_type 'FLOAT[0,3]': dimension N must be >= 1");
    STREAM_REJECT(CUST("FLOAT[3,0]"), "data_type 'FLOAT[3,0]': dimension M must be >= 1");
    STREAM_REJECT(CUST("FLOAT[03]"), "'FLOAT[03]': dimension N has a leading zero");
    STREAM_REJECT(CUST("FLOAT[+3]"), "'FLOAT[+3]': dimension N is not a decimal integer");
    STREAM_REJECT(CUST("FLOAT[-3]"), "'FLOAT[-3]'", "rule 9a");
    STREAM_REJECT(CUST("FLOAT[ 3]"), "'FLOAT[ 3]'", "rule 9a");
    STREAM_REJECT(CUST("FLOAT[3 ,3]"), "'FLOAT[3 ,3]': expected BASE, BASE[N] or BASE[N, M]");
    STREAM_REJECT(CUST("FLOAT[3]x"), "'FLOAT[3]x'", "rule 9a");
    STREAM_REJECT(CUST("FLOAT[3"), "'FLOAT[3'", "rule 9a");
    STREAM_REJECT(CUST("FLOAT[]"), "'FLOAT[]'", "rule 9a");
    STREAM_REJECT(CUST("FLOAT[1,2,3]"), "'FLOAT[1,2,3]'", "rule 9a");
    STREAM_REJECT(CUST("FLOAT [3]"), "'FLOAT [3]': base type is not one of");
    STREAM_REJECT(CUST("float[3]"), "'float[3]': base type is not one of");
    STREAM_REJECT(CUST("CHAR"), "data_type 'CHAR'", "rule 9a");
    STREAM_REJECT(CUST("INT16"), "data_type 'INT16'", "rule 9a");
    STREAM_REJECT(CUST("FLOAT32"), "data_type 'FLOAT32'", "rule 9a");
    STREAM_REJECT(CUST("FLOAT[3.0]"), "'FLOAT[3.0]'", "rule 9a");
    STREAM_REJECT("{'data_type':7,'measure_type':'CUSTOM','target_frame':'hub','custom_label':'l'}",
                  "data_type = 7: expected a string (rule 9a)");
    STREAM_REJECT("{'measure_type':'CUSTOM','target_frame':'hub','custom_label':'l'}",
                  "data_type missing (rule 9a)");
    /* overflow: N*M*size beyond 32 bits, and dimensions beyond 32 bits */
    STREAM_REJECT(CUST("DOUBLE[65536, 65536]"),
                  "data_type 'DOUBLE[65536, 65536]': size 65536 x 65536 x 8 bytes overflows");
    STREAM_REJECT(CUST("UINT64[4294967295,4294967295]"), "overflows", "rule 9a");
    STREAM_REJECT(CUST("FLOAT[99999999999999999999]"), "exceeds 4294967295 (rule 9a)");
    STREAM_REJECT(CUST("FLOAT[4294967296]"), "dimension N exceeds 4294967295");
    STATIC_REJECT("{'data_type':'FLOAT[0]','measure_type':'CUSTOM','target_frame':'a',"
                  "'custom_label':'l','value':[]}",
                  "data_type 'FLOAT[0]'");
    STREAM_ACCEPT(CUST("FLOAT[3, 3]"));
    STREAM_ACCEPT(CUST("FLOAT[3,   3]"));
    STREAM_ACCEPT(CUST("INT32[1]"));
    STREAM_ACCEPT(CUST("UINT64[10,1]"));
}

/* Rule 9b (with D4): measure_type; unknown values accepted and sized by data_type. */
static void test_rule_09b_measure_type(void **state)
{
    (void)state;
    STREAM_REJECT("{'data_type':'FLOAT','target_frame':'hub'}", "measure_type missing (rule 9b)");
    STREAM_REJECT("{'data_type':'FLOAT','measure_type':5,'target_frame':'hub'}",
                  "measure_type = 5: expected a string (rule 9b)");
    STREAM_REJECT("{'data_type':'FLOAT','measure_type':'','target_frame':'hub'}",
                  "measure_type = '': must be a non-empty string (rule 9b)");
    char *js = mk("", "{'data_type':'DOUBLE[2]','measure_type':'TEMPERATURE','target_frame':'a'},"
                      "{'data_type':'FLOAT','measure_type':'CUSTOM','target_frame':'a',"
                      "'custom_label':'x'}");
    struct rgmp_definition *d = expect_accept(__LINE__, js);
    assert_int_equal(d->groups[1].streams[0].measure, RGMP_MEASURE_UNKNOWN);
    assert_string_equal(d->groups[1].streams[0].measure_name, "TEMPERATURE");
    assert_int_equal(d->groups[1].streams[1].offset, 16); /* skipped by size */
    assert_int_equal(d->groups[1].values_len, 20);
    rgmp_definition_free(d);
    free(js);
}

/* Rule 9c: target_frame required non-empty; reference_frame a string; equal means absent. */
static void test_rule_09c_frames(void **state)
{
    (void)state;
    STREAM_REJECT("{'data_type':'FLOAT[3]','measure_type':'POSITION'}",
                  "target_frame missing (rule 9c)");
    STREAM_REJECT("{'data_type':'FLOAT[3]','measure_type':'POSITION','target_frame':''}",
                  "target_frame = '': must be a non-empty string (rule 9c)");
    STREAM_REJECT("{'data_type':'FLOAT[3]','measure_type':'POSITION','target_frame':3}",
                  "target_frame = 3: expected a string (rule 9c)");
    STREAM_REJECT("{'data_type':'FLOAT[3]','measure_type':'POSITION','target_frame':'a',"
                  "'reference_frame':null}",
                  "reference_frame = null: expected a string (rule 9c)");
    STREAM_REJECT("{'data_type':'FLOAT[3]','measure_type':'POSITION','target_frame':'a',"
                  "'reference_frame':''}",
                  "reference_frame = '': must be a non-empty frame name (rule 9c)");
    STATIC_REJECT("{'data_type':'FLOAT[3]','measure_type':'POSITION','value':[1,2,3]}",
                  "target_frame missing (rule 9c)");
    char *js = mk("", "{'data_type':'FLOAT[3]','measure_type':'POSITION','target_frame':'a',"
                      "'reference_frame':'a'},{'data_type':'FLOAT[3]','measure_type':'POSITION',"
                      "'target_frame':'a','reference_frame':'LTP_ENU'}");
    struct rgmp_definition *d = expect_accept(__LINE__, js);
    assert_null(d->groups[1].streams[0].reference_frame);
    assert_string_equal(d->groups[1].streams[1].reference_frame, "LTP_ENU");
    assert_int_equal(rgmp_group_find(d, 1, "POSITION", "a", NULL, NULL), 0);
    assert_int_equal(rgmp_group_find(d, 1, "POSITION", "a", "a", NULL), 0);
    assert_int_equal(rgmp_group_find(d, 1, "POSITION", "a", "LTP_ENU", NULL), 1);
    rgmp_definition_free(d);
    free(js);
}

/* Rule 9d: CUSTOM without custom_label is a protocol error. */
static void test_rule_09d_custom_needs_label(void **state)
{
    (void)state;
    STREAM_REJECT("{'data_type':'FLOAT','measure_type':'CUSTOM','target_frame':'hub'}",
                  "custom_label missing: required when measure_type is 'CUSTOM' (rule 9d)");
    STREAM_REJECT("{'data_type':'FLOAT','measure_type':'CUSTOM','target_frame':'hub',"
                  "'custom_label':7}",
                  "custom_label = 7: expected a string");
    STREAM_REJECT("{'data_type':'FLOAT','measure_type':'CUSTOM','target_frame':'hub',"
                  "'custom_label':''}",
                  "custom_label = '': must be a non-empty string (rule 9d)");
    STATIC_REJECT("{'data_type':'UINT32','measure_type':'CUSTOM','target_frame':'hub','value':2}",
                  "custom_label missing", "rule 9d");
}

/* Rule 9e: custom_label on any other measure type (streams and static_data). */
static void test_rule_09e_label_only_on_custom(void **state)
{
    (void)state;
    STREAM_REJECT("{'data_type':'FLOAT[3]','measure_type':'POSITION','target_frame':'a',"
                  "'custom_label':'pos'}",
                  "custom_label = 'pos': not allowed on measure_type 'POSITION', only on CUSTOM "
                  "(rule 9e)");
    STREAM_REJECT("{'data_type':'UINT32','measure_type':'STATUS_FLAGS','target_frame':'a',"
                  "'bit_mapping':{},'custom_label':'f'}",
                  "custom_label = 'f'", "'STATUS_FLAGS'", "rule 9e");
    STREAM_REJECT("{'data_type':'FLOAT','measure_type':'TEMPERATURE','target_frame':'a',"
                  "'custom_label':'t'}",
                  "custom_label = 't'", "'TEMPERATURE'", "rule 9e");
    STATIC_REJECT("{'data_type':'FLOAT[7]','measure_type':'TRANSFORM','target_frame':'a',"
                  "'custom_label':'rest','value':[0,0,0,0,0,0,1]}",
                  "custom_label = 'rest'", "'TRANSFORM'", "rule 9e");
}

#define FLAGS(type, bm)                                                                            \
    "{'data_type':'" type "','measure_type':'STATUS_FLAGS','target_frame':'s','bit_mapping':" bm "}"

/* Rule 9f: bit_mapping required on STATUS_FLAGS, decimal indices below the width, names are
 * strings, UINT32/UINT64 scalar only, nowhere else. */
static void test_rule_09f_bit_mapping(void **state)
{
    (void)state;
    STREAM_REJECT("{'data_type':'UINT32','measure_type':'STATUS_FLAGS','target_frame':'s'}",
                  "bit_mapping missing: required when measure_type is 'STATUS_FLAGS' (rule 9f)");
    STREAM_REJECT(FLAGS("UINT32", "['a']"), "bit_mapping = array of 1: expected an object");
    STREAM_REJECT(FLAGS("UINT32", "{'32':'x'}"),
                  "bit_mapping key '32': bit index >= 32, the width of UINT32 (rule 9f)");
    STREAM_REJECT(FLAGS("UINT64", "{'0':'a','64':'x'}"),
                  "bit_mapping key '64': bit index >= 64, the width of UINT64");
    STREAM_REJECT(FLAGS("UINT32", "{'01':'x'}"),
                  "bit_mapping key '01': not a decimal bit index (rule 9f)");
    STREAM_REJECT(FLAGS("UINT32", "{'-1':'x'}"), "bit_mapping key '-1': not a decimal bit index");
    STREAM_REJECT(FLAGS("UINT32", "{'a':'x'}"), "bit_mapping key 'a'", "rule 9f");
    STREAM_REJECT(FLAGS("UINT32", "{'':'x'}"), "bit_mapping key ''", "rule 9f");
    STREAM_REJECT(FLAGS("UINT32", "{'99999999999':'x'}"), "bit_mapping key '99999999999'");
    STREAM_REJECT(FLAGS("UINT32", "{'3':5}"),
                  "bit_mapping key '3' = 5: name must be a string (rule 9f)");
    STREAM_REJECT(FLAGS("FLOAT", "{'0':'x'}"),
                  "data_type = 'FLOAT': STATUS_FLAGS must be scalar UINT32 or UINT64 (rule 9f)");
    STREAM_REJECT(FLAGS("INT32", "{'0':'x'}"), "data_type = 'INT32'", "rule 9f");
    STREAM_REJECT(FLAGS("UINT32[2]", "{'0':'x'}"), "data_type = 'UINT32[2]'", "rule 9f");
    STREAM_REJECT("{'data_type':'UINT32','measure_type':'CUSTOM','target_frame':'s',"
                  "'custom_label':'c','bit_mapping':{'0':'x'}}",
                  "bit_mapping: not allowed on measure_type 'CUSTOM', only on STATUS_FLAGS "
                  "(rule 9f)");
    STREAM_REJECT("{'data_type':'FLOAT[3]','measure_type':'POSITION','target_frame':'s',"
                  "'bit_mapping':{}}",
                  "bit_mapping: not allowed on measure_type 'POSITION'");
    STREAM_ACCEPT(FLAGS("UINT64", "{'63':'top','0':'low'}"));
    STREAM_ACCEPT(FLAGS("UINT32", "{'31':'top'}"));
    STREAM_ACCEPT(FLAGS("UINT32", "{}"));
}

/* Rule 9g (D10): shapes of the measures xrgate consumes are enforced. */
static void test_rule_09g_shapes(void **state)
{
    (void)state;
    STREAM_REJECT("{'data_type':'FLOAT[6]','measure_type':'TRANSFORM','target_frame':'a'}",
                  "data_type = 'FLOAT[6]': measure_type TRANSFORM needs FLOAT[7] or DOUBLE[7] "
                  "(rule 9g, D10)");
    STREAM_REJECT("{'data_type':'FLOAT[1,7]','measure_type':'TRANSFORM','target_frame':'a'}",
                  "'FLOAT[1,7]'", "rule 9g");
    STREAM_REJECT("{'data_type':'INT32[7]','measure_type':'TRANSFORM','target_frame':'a'}",
                  "'INT32[7]'", "rule 9g");
    STREAM_REJECT("{'data_type':'INT32[3]','measure_type':'POSITION','target_frame':'a'}",
                  "'INT32[3]': measure_type POSITION needs FLOAT[3] or DOUBLE[3]");
    STREAM_REJECT("{'data_type':'DOUBLE[3]','measure_type':'ORIENTATION','target_frame':'a'}",
                  "'DOUBLE[3]': measure_type ORIENTATION needs FLOAT[4] or DOUBLE[4]");
    STREAM_REJECT("{'data_type':'FLOAT[4]','measure_type':'LINEAR_VELOCITY','target_frame':'a'}",
                  "'FLOAT[4]': measure_type LINEAR_VELOCITY needs FLOAT[3]");
    STREAM_REJECT("{'data_type':'FLOAT','measure_type':'ANGULAR_VELOCITY','target_frame':'a'}",
                  "'FLOAT': measure_type ANGULAR_VELOCITY", "rule 9g");
    STATIC_REJECT("{'data_type':'FLOAT[6]','measure_type':'TRANSFORM','target_frame':'a',"
                  "'value':[0,0,0,0,0,1]}",
                  "'FLOAT[6]'", "rule 9g");
    /* not consumed by xrgate: not enforced (D10) */
    STREAM_ACCEPT("{'data_type':'FLOAT[4]','measure_type':'MAGNETIC_FIELD','target_frame':'a'}");
    STREAM_ACCEPT(
        "{'data_type':'INT32[3]','measure_type':'LINEAR_ACCELERATION','target_frame':'a'}");
    STREAM_ACCEPT("{'data_type':'DOUBLE[7]','measure_type':'TRANSFORM','target_frame':'a'},"
                  "{'data_type':'DOUBLE[4]','measure_type':'ORIENTATION','target_frame':'a'}");
}

#define POS(tf, extra)                                                                             \
    "{'data_type':'FLOAT[3]','measure_type':'POSITION','target_frame':'" tf "'" extra "}"

/* Rule 10: stream keys unique within a group. */
static void test_rule_10_unique_keys(void **state)
{
    (void)state;
    STREAMS_REJECT(
        POS("a", ",'reference_frame':'LTP_ENU'") "," POS("a", ",'reference_frame':'LTP_ENU'"), "1",
        "duplicate stream key (measure_type 'POSITION', target_frame 'a', "
        "reference_frame 'LTP_ENU') already used by stream 0 (rule 10)");
    /* absent and equal-to-target are the same key */
    STREAMS_REJECT(POS("a", "") "," POS("b", "") "," POS("a", ",'reference_frame':'a'"), "2",
                   "reference_frame (none)", "already used by stream 0");
    STREAMS_REJECT(CUST("FLOAT") "," CUST("UINT32"), "1",
                   "duplicate stream key (measure_type 'CUSTOM', target_frame 'hub', "
                   "reference_frame (none), custom_label 'l') already used by stream 0");
    STREAMS_REJECT("{'data_type':'FLOAT','measure_type':'X','target_frame':'a'},"
                   "{'data_type':'INT32','measure_type':'X','target_frame':'a'}",
                   "1", "duplicate stream key (measure_type 'X'");
    /* distinct keys */
    STREAM_ACCEPT(POS("a", "") "," POS("a", ",'reference_frame':'LTP_ENU'") "," POS(
        "a", ",'reference_frame':'LTP_NED'"));
    STREAM_ACCEPT("{'data_type':'FLOAT','measure_type':'CUSTOM','target_frame':'hub',"
                  "'custom_label':'a'},{'data_type':'FLOAT','measure_type':'CUSTOM',"
                  "'target_frame':'hub','custom_label':'b'}");
    STREAM_ACCEPT("{'data_type':'FLOAT[3]','measure_type':'LINEAR_VELOCITY','target_frame':'a'},"
                  "{'data_type':'FLOAT[3]','measure_type':'ANGULAR_VELOCITY','target_frame':'a'}");
    /* the same key in two groups is fine: group 0 already has TRANSFORM hips <- LTP_ENU */
    STREAM_ACCEPT("{'data_type':'FLOAT[7]','measure_type':'TRANSFORM','target_frame':'hips',"
                  "'reference_frame':'LTP_ENU'}");
}

/* Rule 11: static_data value present and matching its type. */
static void test_rule_11_static_values(void **state)
{
    (void)state;
#define ST(type, val)                                                                              \
    "{'data_type':'" type "','measure_type':'CUSTOM','target_frame':'hub','custom_label':'v'"      \
    ",'value':" val "}"
    STATIC_REJECT("{'data_type':'UINT32','measure_type':'CUSTOM','target_frame':'hub',"
                  "'custom_label':'v'}",
                  "value missing: required on static_data entries (rule 11)");
    STATIC_REJECT(ST("FLOAT[3]", "[1,2]"),
                  "value = array of 2: FLOAT[3] needs exactly 3 numbers (rule 11)");
    STATIC_REJECT(ST("DOUBLE[2,2]", "[1,0,0,1,0]"), "DOUBLE[2,2] needs exactly 4 numbers");
    STATIC_REJECT(ST("DOUBLE[2,2]", "[[1,0],[0,1]]"), "array of 2", "needs exactly 4");
    STATIC_REJECT(ST("DOUBLE[2,1]", "[[1],[0]]"), "value[0] = array of 1: not a number");
    STATIC_REJECT(ST("FLOAT[3]", "1"), "value = 1: FLOAT[3] needs a flat array of 3 numbers");
    STATIC_REJECT(ST("UINT32", "[2]"), "value = array of 1: UINT32 needs a single number");
    STATIC_REJECT(ST("UINT32", "'2'"), "value = '2': not a number (UINT32, rule 11)");
    STATIC_REJECT(ST("FLOAT[2]", "[1,null]"), "value[1] = null: not a number (FLOAT, rule 11)");
    STATIC_REJECT(ST("UINT32", "-1"), "value = -1: out of range for UINT32 (rule 11)");
    STATIC_REJECT(ST("UINT32", "4294967296"), "value = 4294967296: out of range for UINT32");
    STATIC_REJECT(ST("INT32[2]", "[0,2147483648]"),
                  "value[1] = 2147483648: out of range for INT32");
    STATIC_REJECT(ST("INT32", "-2147483649"), "value = -2147483649: out of range for INT32");
    STATIC_REJECT(ST("UINT64", "-5"), "value = -5: out of range for UINT64");
    STATIC_REJECT(ST("INT32", "1.5"), "value = 1.5: not an integer (INT32, rule 11)");
    STATIC_REJECT(ST("FLOAT", "1e39"), "value = 1e+39: not a finite FLOAT");
    STATIC_REJECT(ST("FLOAT[2]", "[0,-3.5e38]"), "value[1] = -3.5e+38: not a finite FLOAT");
    /* jansson cannot hold integers >= 2^63: rejected as invalid JSON (rule 4), never wrapped */
    {
        char *big = mk(ST("UINT64", "18446744073709551615"), "");
        expect_reject_raw(__LINE__, big, strlen(big), -EPROTO,
                          NEEDLES("payload: invalid JSON", "too big integer near",
                                  "18446744073709551615", "(rule 4)"));
        free(big);
    }
    struct rgmp_definition *d;
    char *js = mk(ST("UINT32", "2.0") "," ST("INT64", "-9223372036854775808") "," ST(
                      "DOUBLE[2]", "[1e308,-2.5e-308]") "," ST("FLOAT", "3.4028235e38"),
                  "");
    d = expect_accept(__LINE__, js);
    assert_int_equal(rgmp_value_u64(&d->static_data[0].type, d->static_data[0].value, 0), 2);
    assert_true(rgmp_value_i64(&d->static_data[1].type, d->static_data[1].value, 0) == INT64_MIN);
    assert_true(rgmp_value_f64(&d->static_data[2].type, d->static_data[2].value, 1) == -2.5e-308);
    rgmp_definition_free(d);
    free(js);
#undef ST
}

/* Rule 12: value on a group stream. */
static void test_rule_12_value_only_static(void **state)
{
    (void)state;
    STREAM_REJECT("{'data_type':'FLOAT','measure_type':'CUSTOM','target_frame':'hub',"
                  "'custom_label':'x','value':1}",
                  "value: only allowed on static_data entries, not on group streams (rule 12)");
    STREAM_REJECT("{'data_type':'FLOAT','measure_type':'CUSTOM','target_frame':'hub',"
                  "'custom_label':'x','value':null}",
                  "rule 12");
}

/* Rule 13 (and D8): a group's data frame must fit 32 bits and the data frame limit. */
static void test_rule_13_group_size(void **state)
{
    (void)state;
    struct rgmp_limits big = {.max_definition_len = 0, .max_data_len = UINT32_MAX};
    g_lim = &big;
    /* 2 x 2.4e9 bytes: each fits, the sum does not */
    STREAMS_REJECT("{'data_type':'DOUBLE[300000000]','measure_type':'CUSTOM','target_frame':'a',"
                   "'custom_label':'x'},{'data_type':'DOUBLE[300000000]','measure_type':'CUSTOM',"
                   "'target_frame':'a','custom_label':'y'}",
                   "1",
                   "data_type 'DOUBLE[300000000]': group data frame of 16 + 4800000000 bytes "
                   "exceeds 0xFFFFFFFF (rule 13)");
    g_lim = NULL;
    /* D8: 16 + 65524 > 64 KiB; 16 + 65520 fits exactly */
    STREAM_REJECT(CUST("FLOAT[16381]"), "data_type 'FLOAT[16381]': group data frame of 16 + "
                                        "65524 bytes exceeds the maximum data frame of 65536 "
                                        "bytes (D8)");
    STREAM_ACCEPT(CUST("FLOAT[16380]"));
    STREAMS_REJECT(CUST("FLOAT[16000]") ",{'data_type':'DOUBLE[200]','measure_type':'CUSTOM',"
                                        "'target_frame':'hub','custom_label':'m'}",
                   "1", "16 + 65600 bytes", "(D8)");
}

/* Data frames against the §6.1-like definition of device 7 (group 0: 28 bytes). */
static struct rgmp_definition *def7(void)
{
    char *js = mk("", "{'data_type':'DOUBLE[1]','measure_type':'CUSTOM','target_frame':'hub',"
                      "'custom_label':'d'},{'data_type':'UINT32','measure_type':'CUSTOM',"
                      "'target_frame':'hub','custom_label':'u'},{'data_type':'INT64',"
                      "'measure_type':'CUSTOM','target_frame':'hub','custom_label':'n'}");
    struct rgmp_definition *d = expect_accept(__LINE__, js);
    free(js);
    return d;
}

static size_t frame(uint8_t *out, size_t cap, uint32_t dev, uint32_t group, uint64_t ts,
                    size_t nvals)
{
    struct xg_writer w;
    xg_writer_init(&w, out, cap);
    xg_write_le32(&w, dev);
    xg_write_le32(&w, group);
    xg_write_le64(&w, ts);
    for (size_t i = 0; i < nvals; i++)
        xg_write_u8(&w, (uint8_t)(i + 1));
    assert_int_equal(w.err, 0);
    return w.len;
}

/* Rule 14: msg_len < 16. */
static void test_rule_14_short_data_frame(void **state)
{
    (void)state;
    struct xg_error err = {0};
    assert_int_equal(check_header(2, 15, NULL, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "msg_len = 15: data frame shorter than its 16-byte header "
                                    "(rule 14)"));
    struct rgmp_definition *d = def7();
    uint8_t b[64];
    size_t n = frame(b, sizeof b, 7, 0, 1, 0);
    struct rgmp_data_frame f;
    assert_int_equal(rgmp_data_decode(b, n - 1, d, &f, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "device 7: msg_len = 15"));
    assert_non_null(strstr(err.msg, "rule 14"));
    assert_int_equal(rgmp_data_peek(b, 3, &f, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "device ?: msg_len = 3"));
    rgmp_definition_free(d);
}

/* Rule 15: no active definition for the device. */
static void test_rule_15_unknown_device(void **state)
{
    (void)state;
    struct xg_error err = {0};
    uint8_t b[64];
    size_t n = frame(b, sizeof b, 9, 0, 1, 28);
    struct rgmp_data_frame f;
    assert_int_equal(rgmp_data_decode(b, n, NULL, &f, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "device 9: device_id = 9: data frame for a device with no "
                                    "active definition (rule 15)"));
    /* the device is read, so the caller can look it up */
    assert_int_equal(rgmp_data_peek(b, n, &f, &err), 0);
    assert_int_equal(f.device_id, 9);
}

/* Rule 16: group_id out of range. */
static void test_rule_16_group_id(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rgmp_definition *d = def7();
    uint8_t b[64];
    size_t n = frame(b, sizeof b, 7, 2, 1, 28);
    struct rgmp_data_frame f;
    assert_int_equal(rgmp_data_decode(b, n, d, &f, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "device 7, group 2: group_id = 2: the definition has 2 "
                                    "groups (rule 16)"));
    n = frame(b, sizeof b, 7, 0xFFFFFFFFu, 1, 28);
    assert_int_equal(rgmp_data_decode(b, n, d, &f, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "group_id = 4294967295"));
    rgmp_definition_free(d);
}

/* Rule 17: msg_len not exactly 16 + the group's size. */
static void test_rule_17_exact_length(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rgmp_definition *d = def7();
    assert_int_equal(d->groups[1].values_len, 20);
    uint8_t b[64];
    struct rgmp_data_frame f;
    size_t n = frame(b, sizeof b, 7, 1, 1, 19);
    assert_int_equal(rgmp_data_decode(b, n, d, &f, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "device 7, group 1 \"extra\": msg_len = 35: expected exactly "
                                    "36 = 16 + 20 bytes of stream values (rule 17)"));
    n = frame(b, sizeof b, 7, 1, 1, 21);
    assert_int_equal(rgmp_data_decode(b, n, d, &f, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "msg_len = 37"));
    n = frame(b, sizeof b, 7, 0, 1, 20); /* right size for the wrong group */
    assert_int_equal(rgmp_data_decode(b, n, d, &f, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "group 0 \"pose\": msg_len = 36: expected exactly 44"));
    n = frame(b, sizeof b, 7, 1, 1, 20);
    assert_int_equal(rgmp_data_decode(b, n, d, &f, &err), 0);
    rgmp_definition_free(d);
}

/* Rule 18 with D2: per (device, group); dropped and counted, fatal when strict. */
static void test_rule_18_timestamps(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rgmp_definition *d = def7();
    uint8_t b[64];
    struct rgmp_data_frame f;
    const uint64_t ts[] = {100, 200, 200, 150, 201};
    const int want[] = {0, 0, RGMP_OUT_OF_ORDER, RGMP_OUT_OF_ORDER, 0};
    for (int i = 0; i < 5; i++) {
        size_t n = frame(b, sizeof b, 7, 1, ts[i], 20);
        assert_int_equal(rgmp_data_decode(b, n, d, &f, &err), 0);
        assert_int_equal(rgmp_group_check_timestamp(d, &f, false, &err), want[i]);
    }
    assert_non_null(strstr(err.msg, "device 7, group 1 \"extra\": timestamp_us = 150: not greater "
                                    "than the previous 200 (rule 18, D2: dropped)"));
    /* group 0 has its own clock */
    size_t n = frame(b, sizeof b, 7, 0, 1, 28);
    assert_int_equal(rgmp_data_decode(b, n, d, &f, &err), 0);
    assert_int_equal(rgmp_group_check_timestamp(d, &f, true, &err), 0);
    assert_int_equal(rgmp_group_check_timestamp(d, &f, true, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "group 0 \"pose\": timestamp_us = 1"));
    rgmp_definition_free(d);
}

/* Issue 30: one wild timestamp (ten years ahead) does not block a group until the clock passes
 * it: the third increasing frame after it is accepted, and so is every later one. A clock step
 * back (a restarted server) likewise. */
static void test_rule_18_clock_step(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rgmp_definition *d = def7();
    uint8_t b[64];
    struct rgmp_data_frame f;
    const uint64_t wild = UINT64_C(315360000000000); /* ten years in µs */
    const uint64_t ts[] = {1000, 2000, wild, 3000, 4000, 5000, 6000, 7000, 100, 200, 300, 400};
    const int D = RGMP_OUT_OF_ORDER;
    const int want[] = {0, 0, 0, D, D, 0, 0, 0, D, D, 0, 0};
    for (int i = 0; i < 12; i++) {
        size_t n = frame(b, sizeof b, 7, 1, ts[i], 20);
        assert_int_equal(rgmp_data_decode(b, n, d, &f, &err), 0);
        assert_int_equal(rgmp_group_check_timestamp(d, &f, false, &err), want[i]);
    }
    rgmp_definition_free(d);
}

/* Rule 19: 64-bit values at 4-byte (and odd) addresses decode by byte-wise loads. */
static void test_rule_19_unaligned_values(void **state)
{
    (void)state;
    struct rgmp_definition *d = def7();
    /* group 1: DOUBLE at payload offset 16, UINT32 at 24, INT64 at 28 (4-aligned only) */
    uint8_t raw[64 + 3];
    for (size_t shift = 0; shift < 4; shift++) {
        uint8_t *b = raw + shift;
        struct xg_writer w;
        xg_writer_init(&w, b, 36);
        xg_write_le32(&w, 7);
        xg_write_le32(&w, 1);
        xg_write_le64(&w, UINT64_C(0x0102030405060708));
        xg_write_lef64(&w, -1.25);
        xg_write_le32(&w, 0xDEADBEEFu);
        xg_write_le64(&w, (uint64_t)INT64_C(-2));
        assert_int_equal(w.err, 0);
        struct rgmp_data_frame f;
        assert_int_equal(rgmp_data_decode(b, 36, d, &f, NULL), 0);
        assert_true(f.timestamp_us == UINT64_C(0x0102030405060708));
        const struct rgmp_stream *s = d->groups[1].streams;
        assert_true(rgmp_value_f64(&s[0].type, rgmp_data_stream(d, &f, 0), 0) == -1.25);
        assert_true(rgmp_value_u64(&s[1].type, rgmp_data_stream(d, &f, 1), 0) == 0xDEADBEEFu);
        assert_int_equal(s[2].offset, 12);
        assert_true(rgmp_value_i64(&s[2].type, rgmp_data_stream(d, &f, 2), 0) == -2);
    }
    rgmp_definition_free(d);
}

/* Rule 20: disconnect payload exactly 4 bytes. */
static void test_rule_20_disconnect_length(void **state)
{
    (void)state;
    struct xg_error err = {0};
    assert_int_equal(check_header(3, 3, NULL, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "msg_len = 3: device disconnect payload must be 4 bytes "
                                    "(rule 20)"));
    assert_int_equal(check_header(3, 8, NULL, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "msg_len = 8"));
    const uint8_t p[5] = {7, 0, 0, 0, 0};
    uint32_t id;
    assert_int_equal(rgmp_disconnect_decode(p, 5, &id, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "msg_len = 5"));
    assert_int_equal(rgmp_disconnect_decode(p, 4, &id, &err), 0);
    assert_int_equal(id, 7);
}

/* Rule 21 (D10): disconnect for an unknown device is always a protocol error. */
static void test_rule_21_disconnect_unknown(void **state)
{
    (void)state;
    struct rgmp_session s;
    rgmp_session_init(&s, NULL, false);
    struct rgmp_header h = {RGMP_MSG_DISCONNECT, 4};
    const uint8_t p[4] = {0x2A, 0, 0, 0};
    struct rgmp_event ev;
    struct xg_error err = {0};
    assert_int_equal(rgmp_session_handle(&s, &h, p, &ev, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "device 42: device_id = 42: disconnect for a device with no "
                                    "active definition (rule 21)"));
    /* the session re-checks headers too */
    struct rgmp_header bad = {RGMP_MSG_DISCONNECT, 5};
    assert_int_equal(rgmp_session_handle(&s, &bad, p, &ev, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "rule 20"));
    rgmp_session_free(&s);
}

/* The builder applies the same rules (the server never emits what the client would reject). */
static void test_builder_applies_rules(void **state)
{
    (void)state;
    struct xg_error err = {0};
    struct rgmp_definition *d = rgmp_definition_new(5, "x", RGMP_EPOCH_DEVICE_BOOT);
    assert_string_equal(d->timestamp_epoch, "device_boot");
    assert_int_equal(rgmp_definition_add_group(d, "g", -1, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "device 5, group 0 \"g\": expected_rate_hz = -1"));
    assert_int_equal(rgmp_definition_add_group(d, "g", 60, &err), 0);
    struct rgmp_entry_spec t = {.data_type = "FLOAT[7]",
                                .measure_type = "TRANSFORM",
                                .target_frame = "a",
                                .reference_frame = "LTP_ENU"};
    assert_int_equal(rgmp_definition_add_stream(d, 0, &t, &err), 0);
    assert_int_equal(rgmp_definition_add_stream(d, 0, &t, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "device 5, group 0 \"g\", stream 1: duplicate stream key"));
    struct rgmp_entry_spec c = {
        .data_type = "FLOAT", .measure_type = "CUSTOM", .target_frame = "a"};
    assert_int_equal(rgmp_definition_add_stream(d, 0, &c, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "rule 9d"));
    const struct rgmp_bit_spec dup[2] = {{1, "a"}, {1, "b"}};
    struct rgmp_entry_spec fl = {.data_type = "UINT32",
                                 .measure_type = "STATUS_FLAGS",
                                 .target_frame = "a",
                                 .bits = dup,
                                 .n_bits = 2};
    assert_int_equal(rgmp_definition_add_stream(d, 0, &fl, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "bit_mapping key \"1\": bit mapped twice"));
    float v = 1.0f;
    struct rgmp_entry_spec sv = {.data_type = "FLOAT",
                                 .measure_type = "CUSTOM",
                                 .target_frame = "a",
                                 .custom_label = "k",
                                 .value = &v,
                                 .value_len = 4};
    assert_int_equal(rgmp_definition_add_stream(d, 0, &sv, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "rule 12"));
    assert_int_equal(rgmp_definition_add_stream(d, 3, &t, &err), -EINVAL);
    sv.value_len = 8;
    assert_int_equal(rgmp_definition_add_static(d, &sv, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "device 5, static_data 0: value: 8 bytes, the data type "
                                    "needs 4"));
    sv.value_len = 4;
    uint8_t nan_le[4] = {0x00, 0x00, 0xc0, 0x7f};
    sv.value = nan_le;
    assert_int_equal(rgmp_definition_add_static(d, &sv, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "value[0] = nan: not finite (rule 11)"));
    sv.value = NULL;
    assert_int_equal(rgmp_definition_add_static(d, &sv, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "value missing"));
    assert_int_equal(d->n_static, 0);
    assert_int_equal(d->groups[0].n_streams, 1);
    rgmp_definition_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_01_eof_inside_frame),
        cmocka_unit_test(test_rule_02_bad_prefix),
        cmocka_unit_test(test_rule_03_msg_len_limit),
        cmocka_unit_test(test_rule_04_json_payload),
        cmocka_unit_test(test_rule_05_device_id),
        cmocka_unit_test(test_rule_06_top_level_types),
        cmocka_unit_test(test_rule_07_version_and_epoch),
        cmocka_unit_test(test_rule_08_groups),
        cmocka_unit_test(test_rule_09a_data_type),
        cmocka_unit_test(test_rule_09b_measure_type),
        cmocka_unit_test(test_rule_09c_frames),
        cmocka_unit_test(test_rule_09d_custom_needs_label),
        cmocka_unit_test(test_rule_09e_label_only_on_custom),
        cmocka_unit_test(test_rule_09f_bit_mapping),
        cmocka_unit_test(test_rule_09g_shapes),
        cmocka_unit_test(test_rule_10_unique_keys),
        cmocka_unit_test(test_rule_11_static_values),
        cmocka_unit_test(test_rule_12_value_only_static),
        cmocka_unit_test(test_rule_13_group_size),
        cmocka_unit_test(test_rule_14_short_data_frame),
        cmocka_unit_test(test_rule_15_unknown_device),
        cmocka_unit_test(test_rule_16_group_id),
        cmocka_unit_test(test_rule_17_exact_length),
        cmocka_unit_test(test_rule_18_timestamps),
        cmocka_unit_test(test_rule_18_clock_step),
        cmocka_unit_test(test_rule_19_unaligned_values),
        cmocka_unit_test(test_rule_20_disconnect_length),
        cmocka_unit_test(test_rule_21_disconnect_unknown),
        cmocka_unit_test(test_builder_applies_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
