/* Unit tests for the rtp adapter inside a loaded gateway (named test_gateway_* because it links
 * the whole gateway): the SDP op (wire-rules §6: m=application <port> RTP/AVPF <pt>,
 * a=rtpmap:<pt> gamestate/90000, a=rtcp-fb:<pt> ccm fir, a=rtcp-mux), the defaults that differ
 * from the gateway's generic ones (rate_hz 90, frame gamestate-lh), and config errors. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sdp_multicast),
        cmocka_unit_test(test_sdp_unicast_and_overrides),
        cmocka_unit_test(test_config_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
