/* Unit tests for the rtp adapter inside a loaded gateway (named test_gateway_* because it links
 * the whole gateway): the SDP op (wire-rules §6: m=application <port> RTP/AVPF <pt>,
 * a=rtpmap:<pt> gamestate/90000, a=rtcp-fb:<pt> ccm fir, a=rtcp-mux), the defaults that differ
 * from the gateway's generic ones (rate_hz 90, frame gamestate-lh), and config errors. With
 * `srtp:`: RTP/SAVPF and a=crypto with the sending key (RFC 4568), the srtp config errors, and a
 * fixed ssrc refused unless allow_fixed_ssrc_with_srtp. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "adapters/rtp/rtp_adapter.h"
#include "gateway/gateway.h"

static struct xg_adapter *find(struct xg_gateway *gw, const char *name)
{
    for (int i = 0; i < gw->n_adapters; i++)
        if (!strcmp(gw->adapters[i]->a.name, name)) return &gw->adapters[i]->a;
    return NULL;
}

static int load(struct xg_gateway *gw, const char *text, struct xg_error *err)
{
    struct xg_gateway_opts o = {.config_text = text, .config_name = "test.yaml"};
    return xg_gateway_load(gw, &o, err);
}

static void test_sdp_multicast(void **state)
{
    (void)state;
    struct xg_gateway gw;
    struct xg_error err = {0};
    int rc = load(&gw,
                  "adapters:\n"
                  "  - name: headsets\n"
                  "    type: rtp\n"
                  "    bind: \"0.0.0.0:49170\"\n"
                  "    destinations: [\"239.1.2.3:49170\"]\n"
                  "    payload_type: 100\n"
                  "    ttl: 4\n"
                  "    ssrc: 0xdeadbeef\n",
                  &err);
    assert_int_equal(rc, 0);
    struct xg_adapter *a = find(&gw, "headsets");
    assert_non_null(a);
    assert_non_null(a->ops->sdp);
    char buf[2048];
    int n = a->ops->sdp(a, buf, sizeof buf);
    assert_true(n > 0);
    assert_int_equal((size_t)n, strlen(buf));
    assert_non_null(strstr(buf, "v=0\r\n"));
    assert_non_null(strstr(buf, "c=IN IP4 239.1.2.3/4\r\n"));
    assert_non_null(strstr(buf, "m=application 49170 RTP/AVPF 100\r\n"));
    assert_non_null(strstr(buf, "a=rtpmap:100 gamestate/90000\r\n"));
    assert_non_null(strstr(buf, "a=rtcp-fb:100 ccm fir\r\n"));
    assert_non_null(strstr(buf, "a=rtcp-mux\r\n"));
    assert_non_null(strstr(buf, "a=ssrc:3735928559 cname:"));
    /* too small a buffer: an error, not a truncated SDP */
    assert_true(a->ops->sdp(a, buf, 20) < 0);
    /* defaults: rate 90 Hz and the draft's left-handed frame when the keys are absent */
    assert_true(a->rate_hz == 90.0);
    assert_string_equal(a->frame->name, "gamestate-lh");
    assert_true(a->frame->det < 0);
    xg_gateway_free(&gw);
}

static void test_sdp_unicast_and_overrides(void **state)
{
    (void)state;
    struct xg_gateway gw;
    struct xg_error err = {0};
    int rc = load(&gw,
                  "adapters:\n"
                  "  - name: vr\n"
                  "    type: rtp\n"
                  "    bind: \"127.0.0.1:5004\"\n"
                  "    destinations: [\"127.0.0.1:5006\", \"127.0.0.1:5008\"]\n"
                  "    rate_hz: 30\n"
                  "    frame: yup-rh\n"
                  "    objects: {head: Object2, controller: ThreeDOF1, left_hand: Hand2}\n",
                  &err);
    assert_int_equal(rc, 0);
    struct xg_adapter *a = find(&gw, "vr");
    char buf[2048];
    assert_true(a->ops->sdp(a, buf, sizeof buf) > 0);
    assert_non_null(strstr(buf, "c=IN IP4 127.0.0.1\r\n"));
    assert_non_null(strstr(buf, "m=application 5004 RTP/AVPF 98\r\n"));
    assert_non_null(strstr(buf, "a=rtpmap:98 gamestate/90000\r\n"));
    assert_true(a->rate_hz == 30.0);
    assert_string_equal(a->frame->name, "yup-rh");
    xg_gateway_free(&gw);

    rc = load(&gw,
              "adapters:\n"
              "  - name: vr\n"
              "    type: rtp\n"
              "    bind: \"0.0.0.0:5004\"\n"
              "    sdp_address: 192.0.2.7\n",
              &err);
    assert_int_equal(rc, 0);
    a = find(&gw, "vr");
    assert_true(a->ops->sdp(a, buf, sizeof buf) > 0);
    assert_non_null(strstr(buf, "c=IN IP4 192.0.2.7\r\n"));
    xg_gateway_free(&gw);
}

static void expect_error(const char *yaml, const char *want)
{
    struct xg_gateway gw;
    struct xg_error err = {0};
    int rc = load(&gw, yaml, &err);
    assert_true(rc < 0);
    if (!strstr(err.msg, want)) fail_msg("error '%s' lacks '%s'", err.msg, want);
    xg_gateway_free(&gw);
}

static void test_config_errors(void **state)
{
    (void)state;
    expect_error("adapters:\n  - {name: r, type: rtp, payload_type: 12}\n", "test.yaml:2:");
    expect_error("adapters:\n  - {name: r, type: rtp, objects: {head: Head9}}\n",
                 "is not an object type");
    expect_error("adapters:\n  - {name: r, type: rtp, objects: {nose: Head1}}\n",
                 "is not an entity kind");
    expect_error("adapters:\n  - {name: r, type: rtp, destinations: [\"nohost..:x\"]}\n",
                 "destinations");
    expect_error("adapters:\n  - {name: r, type: rtp, interface: eth0}\n",
                 "must be an IPv4 address");
    expect_error("adapters:\n  - {name: r, type: rtp, mtu: 100}\n", "mtu");
    expect_error("adapters:\n  - {name: r, type: rtp, allow_ssrc: []}\n", "allow_ssrc");
    expect_error("adapters:\n  - {name: r, type: rtp, bogus: 1}\n", "bogus");
}

/* SDES test keys (examples only): 30 bytes for AES_CM_128_HMAC_SHA1_80, 28 for GCM */
#define TX_KEY "inline:4fl6DT4Bi+DWT6MsBt5BOQ7Gda1Jiv7rtpYLOqvm"
#define RX_KEY "inline:ABEiM0RVZneImaq7zN3u/wARIjNEVWZ3iJmqu8zd"
#define GCM_KEY "AEAD_AES_128_GCM inline:AAECAwQFBgcICQoLDA0OD6ChoqOkpaanqKmqqw=="

static char key_dir[64];

static void key_file(const char *name, const char *text)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", key_dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "# test key\n%s\n", text);
    fclose(f);
}

static int keys_up(void **state)
{
    (void)state;
    snprintf(key_dir, sizeof key_dir, "/tmp/xg-test-sdp-srtp-XXXXXX");
    if (!mkdtemp(key_dir)) return -1;
    key_file("tx.key", TX_KEY);
    key_file("rx.key", RX_KEY);
    key_file("gcm.key", GCM_KEY);
    key_file("short.key", "inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxw="); /* 29 bytes */
    return 0;
}

static int keys_down(void **state)
{
    (void)state;
    const char *names[] = {"tx.key", "rx.key", "gcm.key", "short.key"};
    char path[128];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", key_dir, names[i]);
        unlink(path);
    }
    rmdir(key_dir);
    return 0;
}

static void test_sdp_srtp(void **state)
{
    (void)state;
    struct xg_gateway gw;
    struct xg_error err = {0};
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "adapters:\n"
             "  - name: vr\n"
             "    type: rtp\n"
             "    bind: \"127.0.0.1:5004\"\n"
             "    srtp: {key_file: %s/tx.key, remote_key_file: %s/rx.key}\n",
             key_dir, key_dir);
    int rc = load(&gw, yaml, &err);
    if (rc) fail_msg("%s", err.msg);
    struct xg_adapter *a = find(&gw, "vr");
    char buf[2048];
    int n = a->ops->sdp(a, buf, sizeof buf);
    assert_true(n > 0);
    assert_int_equal((size_t)n, strlen(buf));
    assert_non_null(strstr(buf, "m=application 5004 RTP/SAVPF 98\r\n"));
    assert_null(strstr(buf, "RTP/AVPF"));
    /* the sending key, never the remote one */
    assert_non_null(strstr(buf, "a=crypto:1 AES_CM_128_HMAC_SHA1_80 " TX_KEY "\r\n"));
    assert_null(strstr(buf, &RX_KEY[7]));
    /* the a=crypto line does not fit: an error, no SDP without it */
    size_t without = (size_t)n - strlen("a=crypto:1 AES_CM_128_HMAC_SHA1_80 " TX_KEY "\r\n");
    assert_true(a->ops->sdp(a, buf, without + 1) < 0);
    xg_gateway_free(&gw);

    /* the suite comes from the key file's line */
    snprintf(yaml, sizeof yaml,
             "adapters:\n  - {name: g, type: rtp, bind: \"127.0.0.1:5004\", srtp: {key_file: "
             "%s/gcm.key}}\n",
             key_dir);
    rc = load(&gw, yaml, &err);
    if (rc) fail_msg("%s", err.msg);
    a = find(&gw, "g");
    assert_true(a->ops->sdp(a, buf, sizeof buf) > 0);
    assert_non_null(strstr(buf, "a=crypto:1 " GCM_KEY "\r\n"));
    xg_gateway_free(&gw);
}

/* Issue 16 item 7: a multicast destination with a unicast bind advertises the group and its port
 * (which start() binds and joins: tests/integration/test_rtp_session.py), o= carries a unicast
 * address (RFC 8866 §5.2), never the group; a receive-only adapter says a=recvonly and names no
 * SSRC (RFC 3264 §5.1). */
static void test_sdp_describes_what_it_does(void **state)
{
    (void)state;
    struct xg_gateway gw;
    struct xg_error err = {0};
    int rc = load(&gw,
                  "gateway: {id: lab-a}\n"
                  "adapters:\n"
                  "  - name: out\n"
                  "    type: rtp\n"
                  "    bind: \"127.0.0.1:5004\"\n"
                  "    destinations: [\"239.1.2.3:5006\"]\n",
                  &err);
    if (rc) fail_msg("%s", err.msg);
    struct xg_adapter *a = find(&gw, "out");
    char buf[2048], want[256];
    assert_true(a->ops->sdp(a, buf, sizeof buf) > 0);
    uint64_t sid = rtpa_default_session_id("lab-a", "out");
    snprintf(want, sizeof want, "o=- %llu %llu IN IP4 127.0.0.1\r\n", (unsigned long long)sid,
             (unsigned long long)sid);
    if (!strstr(buf, want)) fail_msg("no [%s] in\n%s", want, buf);
    assert_non_null(strstr(buf, "c=IN IP4 239.1.2.3/1\r\n"));
    assert_non_null(strstr(buf, "m=application 5006 RTP/AVPF 98\r\n"));
    assert_non_null(strstr(buf, "a=sendrecv\r\n"));
    snprintf(want, sizeof want, "a=ssrc:%u cname:xrgate-out@",
             (unsigned)rtpa_default_ssrc("lab-a", "out"));
    if (!strstr(buf, want)) fail_msg("no [%s] in\n%s", want, buf);
    xg_gateway_free(&gw);

    /* a wildcard bind with a group destination: o= is an interface address, not the group */
    rc = load(&gw,
              "adapters:\n  - {name: out, type: rtp, bind: \"0.0.0.0:5004\", destinations: "
              "[\"239.1.2.3:5006\"]}\n",
              &err);
    if (rc) fail_msg("%s", err.msg);
    a = find(&gw, "out");
    assert_true(a->ops->sdp(a, buf, sizeof buf) > 0);
    char *o = strstr(buf, "o=- ");
    assert_non_null(o);
    char oline[128];
    snprintf(oline, sizeof oline, "%.*s", (int)(strstr(o, "\r\n") - o), o);
    if (strstr(oline, "239.")) fail_msg("o= names the group: %s", oline);
    assert_non_null(strstr(buf, "c=IN IP4 239.1.2.3/1\r\n"));
    xg_gateway_free(&gw);

    /* a group bind joined on `interface`: o= is that interface */
    rc = load(&gw,
              "adapters:\n  - {name: grp, type: rtp, bind: \"239.1.2.3:5004\", interface: "
              "192.0.2.9}\n",
              &err);
    if (rc) fail_msg("%s", err.msg);
    a = find(&gw, "grp");
    assert_true(a->ops->sdp(a, buf, sizeof buf) > 0);
    assert_non_null(strstr(buf, " IN IP4 192.0.2.9\r\ns=grp\r\nc=IN IP4 239.1.2.3/1\r\n"));
    assert_non_null(strstr(buf, "m=application 5004 "));
    xg_gateway_free(&gw);

    /* receive-only: a=recvonly, no a=ssrc (it never sends RTP), no a=sendrecv */
    rc = load(&gw, "adapters:\n  - {name: in, type: rtp, bind: \"127.0.0.1:5004\"}\n", &err);
    if (rc) fail_msg("%s", err.msg);
    a = find(&gw, "in");
    assert_true(a->ops->sdp(a, buf, sizeof buf) > 0);
    assert_non_null(strstr(buf, "a=recvonly\r\n"));
    assert_null(strstr(buf, "a=ssrc"));
    assert_null(strstr(buf, "a=sendrecv"));
    assert_non_null(strstr(buf, "c=IN IP4 127.0.0.1\r\n"));
    xg_gateway_free(&gw);
}

/* Issue 16 item 8: without ssrc: the SSRC and the session id are derived from gateway.id and the
 * adapter name: two loads (a restart, or `xrgate --sdp`) agree; another gateway.id differs; a
 * configured ssrc wins. */
static void test_default_ssrc_is_deterministic(void **state)
{
    (void)state;
    const char *yaml = "gateway: {id: lab-a}\n"
                       "adapters:\n  - {name: out, type: rtp, bind: \"127.0.0.1:5004\", "
                       "destinations: [\"127.0.0.1:5006\"]}\n";
    struct xg_gateway gw;
    struct xg_error err = {0};
    char one[2048], two[2048];
    assert_int_equal(load(&gw, yaml, &err), 0);
    struct xg_adapter *a = find(&gw, "out");
    assert_true(a->ops->sdp(a, one, sizeof one) > 0);
    xg_gateway_free(&gw);
    assert_int_equal(load(&gw, yaml, &err), 0);
    a = find(&gw, "out");
    assert_true(a->ops->sdp(a, two, sizeof two) > 0);
    xg_gateway_free(&gw);
    assert_string_equal(one, two);
    uint32_t ssrc = rtpa_default_ssrc("lab-a", "out");
    assert_true(ssrc != rtpa_default_ssrc("lab-b", "out"));
    assert_true(ssrc != rtpa_default_ssrc("lab-a", "out2"));
    assert_true(rtpa_default_session_id("lab-a", "out") != rtpa_default_session_id("lab-b", "out"));
    char want[64];
    snprintf(want, sizeof want, "a=ssrc:%u ", (unsigned)ssrc);
    if (!strstr(one, want)) fail_msg("no [%s] in\n%s", want, one);
    /* the default gateway.id is "xrgate" */
    assert_int_equal(load(&gw,
                          "adapters:\n  - {name: out, type: rtp, bind: \"127.0.0.1:5004\", "
                          "destinations: [\"127.0.0.1:5006\"], ssrc: 7}\n",
                          &err),
                     0);
    a = find(&gw, "out");
    assert_true(a->ops->sdp(a, one, sizeof one) > 0);
    assert_non_null(strstr(one, "a=ssrc:7 cname:"));
    snprintf(want, sizeof want, "o=- %llu ",
             (unsigned long long)rtpa_default_session_id("xrgate", "out"));
    if (!strstr(one, want)) fail_msg("no [%s] in\n%s", want, one);
    xg_gateway_free(&gw);
}

static void test_srtp_config_errors(void **state)
{
    (void)state;
    char yaml[512];
    /* a fixed ssrc with srtp: refused at the ssrc key... */
    snprintf(yaml, sizeof yaml,
             "adapters:\n  - name: r\n    type: rtp\n    ssrc: 7\n"
             "    srtp: {key_file: %s/tx.key}\n",
             key_dir);
    expect_error(yaml, "test.yaml:4:11: ssrc: a fixed SSRC with srtp is refused");
    /* ...unless allowed */
    snprintf(yaml, sizeof yaml,
             "adapters:\n  - name: r\n    type: rtp\n    ssrc: 7\n"
             "    allow_fixed_ssrc_with_srtp: true\n    srtp: {key_file: %s/tx.key}\n",
             key_dir);
    struct xg_gateway gw;
    struct xg_error err = {0};
    if (load(&gw, yaml, &err)) fail_msg("%s", err.msg);
    xg_gateway_free(&gw);
    snprintf(yaml, sizeof yaml,
             "adapters:\n  - {name: r, type: rtp, srtp: {key_file: %s/short.key}}\n", key_dir);
    expect_error(yaml, "29 bytes, AES_CM_128_HMAC_SHA1_80 needs 30");
    snprintf(yaml, sizeof yaml,
             "adapters:\n  - {name: r, type: rtp, srtp: {key_file: %s/tx.key, suite: "
             "AES_CM_128_HMAC_SHA1_32}}\n",
             key_dir);
    expect_error(yaml, "srtp.suite 'AES_CM_128_HMAC_SHA1_32' is unknown");
    snprintf(yaml, sizeof yaml,
             "adapters:\n  - {name: r, type: rtp, srtp: {key_file: %s/tx.key, bogus: 1}}\n",
             key_dir);
    expect_error(yaml, "bogus");
    expect_error("adapters:\n  - {name: r, type: rtp, srtp: {suite: AEAD_AES_128_GCM}}\n",
                 "srtp needs 'key_file:'");
    expect_error("adapters:\n  - {name: r, type: rtp, srtp: {key_file: /nonexistent/k}}\n",
                 "srtp.key_file: key file '/nonexistent/k'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sdp_multicast),
        cmocka_unit_test(test_sdp_unicast_and_overrides),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_sdp_srtp),
        cmocka_unit_test(test_srtp_config_errors),
        cmocka_unit_test(test_sdp_describes_what_it_does),
        cmocka_unit_test(test_default_ssrc_is_deterministic),
    };
    return cmocka_run_group_tests(tests, keys_up, keys_down);
}
