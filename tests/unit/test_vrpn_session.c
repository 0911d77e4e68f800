/* Unit tests of the socket-free VRPN session (adapters/vrpn/vrpn_session.h), both roles, without
 * sockets: the bytes of the mainline VRPN 07.38 recordings in tests/vectors/vrpn-recorded go in,
 * and what our session sends back is compared with what the mainline peer sent in the same place
 * (header times and padding aside: VRPN pads with stale bytes). Covered: cookie exchange (good,
 * wrong magic, other minor versions, other major, a cookie split across reads, EOF inside it), the
 * handshake burst and descriptions both directions, reassembly byte by byte, unknown sender/type
 * ids per role, oversize and undersize length fields, the UDP+TCP connection request text and its
 * resends, the call-back and cookie deadlines, UDP datagrams, time and log messages, pings. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/test_util.h"

#include "adapters/vrpn/vrpn_session.h"
#include "core/util/wire.h"

#define MS INT64_C(1000000)
#define SEC INT64_C(1000000000)
#define REC XG_VECTORS_DIR "/vrpn-recorded/"
#define VEC XG_VECTORS_DIR "/vrpn/"

/* ---- fixtures ---- */

static uint8_t *load(const char *path, size_t *len)
{
    uint8_t *b = xg_test_read_file(path, len);
    if (!b) fail_msg("cannot open %s", path);
    return b;
}

/* ---- a recording peer: what the session sends and the events it gives ---- */

struct ev_rec {
    enum vrpn_event_kind kind;
    int32_t sender_local, type_local, remote_id, local_id;
    enum vrpn_body_kind body;
    int32_t sensor;
    double x, y, z, qz, qw;
    uint32_t tv_sec, tv_usec;
    bool udp, echoed, first, minor_differs;
    int minor;
    uint16_t udp_port;
    int32_t log_mode;
    char name[VRPN_CNAME_MAX];
};

struct peer {
    uint8_t *out;
    size_t out_len, out_cap;
    uint8_t request[VRPN_LOB_MAX];
    size_t request_len;
    int requests;
    bool request_fails;
    bool gone_on_send; /* ops.send reports the connection gone */
    struct ev_rec *ev; /* heap, grown */
    int n_ev, cap_ev;
};

static int p_send(void *ctx, const uint8_t *buf, size_t len)
{
    struct peer *p = ctx;
    if (p->gone_on_send) return -1;
    if (p->out_len + len > p->out_cap) {
        p->out_cap = (p->out_len + len) * 2;
        p->out = realloc(p->out, p->out_cap);
        assert_non_null(p->out);
    }
    memcpy(p->out + p->out_len, buf, len);
    p->out_len += len;
    return 0;
}

static int p_request(void *ctx, const uint8_t *buf, size_t len)
{
    struct peer *p = ctx;
    if (p->request_fails) return -ENETUNREACH;
    memcpy(p->request, buf, len);
    p->request_len = len;
    p->requests++;
    return 0;
}

static int p_event(void *ctx, const struct vrpn_event *ev)
{
    struct peer *p = ctx;
    if (p->n_ev == p->cap_ev) {
        p->cap_ev = p->cap_ev ? 2 * p->cap_ev : 64;
        p->ev = realloc(p->ev, (size_t)p->cap_ev * sizeof *p->ev);
        assert_non_null(p->ev);
    }
    struct ev_rec *r = &p->ev[p->n_ev++];
    memset(r, 0, sizeof *r);
    r->kind = ev->kind;
    r->sender_local = ev->sender_local;
    r->type_local = ev->type_local;
    r->remote_id = ev->remote_id;
    r->local_id = ev->local_id;
    r->udp = ev->udp;
    r->echoed = ev->echoed;
    r->first = ev->first;
    r->minor = ev->minor;
    r->minor_differs = ev->minor_differs;
    r->udp_port = ev->udp_port;
    r->log_mode = ev->log_mode;
    if (ev->name) snprintf(r->name, sizeof r->name, "%s", ev->name);
    if (ev->sender) snprintf(r->name, sizeof r->name, "%s", ev->sender);
    if (ev->hdr) {
        r->tv_sec = ev->hdr->tv_sec;
        r->tv_usec = ev->hdr->tv_usec;
    }
    if (ev->body) {
        r->body = ev->body->kind;
        if (ev->body->kind == VRPN_BODY_POS_QUAT) {
            const struct vrpn_pos_quat *pq = &ev->body->u.pos_quat;
            r->sensor = pq->sensor;
            r->x = pq->pos.x;
            r->y = pq->pos.y;
            r->z = pq->pos.z;
            r->qz = pq->quat.z;
            r->qw = pq->quat.w;
        }
    }
    return 0;
}

static const struct vrpn_session_ops OPS = {
    .send = p_send, .send_request = p_request, .event = p_event, .wall_ns = NULL};

static int count_ev(const struct peer *p, enum vrpn_event_kind k)
{
    int n = 0;
    for (int i = 0; i < p->n_ev; i++)
        n += p->ev[i].kind == k;
    return n;
}

static const struct ev_rec *find_ev(const struct peer *p, enum vrpn_event_kind k)
{
    for (int i = 0; i < p->n_ev; i++)
        if (p->ev[i].kind == k) return &p->ev[i];
    return NULL;
}

/* A client session with the devices of the session1 recording's vrpn_print_devices. */
static void client_tcp(struct vrpn_session *s, struct peer *p, int64_t now)
{
    vrpn_session_init(s, VRPN_ROLE_CLIENT, &OPS, p, 5 * SEC);
    assert_int_equal(vrpn_session_start(s, VRPN_MODE_TCP, now), 0);
    const char *devs[] = {"Tracker0", "Button0", "Analog0"};
    for (int i = 0; i < 3; i++)
        assert_int_equal(vrpn_id_map_register(vrpn_session_ids(s), VRPN_ID_SENDER, devs[i], NULL),
                         i + 1);
    assert_int_equal(vrpn_session_connected(s, now), 0);
}

static void peer_free(struct peer *p)
{
    free(p->out);
    free(p->ev);
    memset(p, 0, sizeof *p);
}

/* ---- comparing message streams (times and padding aside) ---- */

struct msgv {
    struct vrpn_msg m[512];
    int n;
};

static void split(const uint8_t *b, size_t len, struct msgv *v)
{
    v->n = 0;
    size_t off = 0;
    while (off < len && v->n < 512) {
        size_t ws = 0;
        assert_int_equal(vrpn_stream_check(b + off, len - off, &ws, NULL), 1);
        assert_int_equal(vrpn_msg_parse(b + off, ws, &v->m[v->n], NULL), 0);
        v->n++;
        off += ws;
    }
    assert_int_equal(off, len);
}

static void same_msg(const struct vrpn_msg *a, const struct vrpn_msg *b, int i)
{
    if (a->hdr.length != b->hdr.length || a->hdr.sender != b->hdr.sender ||
        a->hdr.type != b->hdr.type || a->hdr.seq != b->hdr.seq ||
        memcmp(a->body, b->body, a->body_len) != 0)
        fail_msg("message %d differs: ours len %u sender %d type %d seq %u, mainline len %u "
                 "sender %d type %d seq %u",
                 i, a->hdr.length, a->hdr.sender, a->hdr.type, a->hdr.seq, b->hdr.length,
                 b->hdr.sender, b->hdr.type, b->hdr.seq);
}

/* ---- cookie ---- */

static void test_cookie_good(void **state)
{
    (void)state;
    struct vrpn_session s;
    struct peer p = {0};
    client_tcp(&s, &p, 1 * SEC);
    assert_int_equal(vrpn_session_state(&s), VRPN_SESS_COOKIE);
    /* our cookie: exactly the golden vector and mainline's */
    size_t n, rn;
    uint8_t *ck = load(VEC "cookie.bin", &n);
    uint8_t *rec = load(REC "session1_tcp_c2s.bin", &rn);
    assert_int_equal(p.out_len, VRPN_COOKIE_SIZE);
    assert_memory_equal(p.out, ck, VRPN_COOKIE_SIZE);
    assert_memory_equal(p.out, rec, VRPN_COOKIE_SIZE);
    /* the server's recorded cookie is accepted, then the handshake burst is sent */
    uint8_t *s2c = load(REC "session1_tcp_s2c.bin", &rn);
    assert_int_equal(vrpn_session_feed(&s, s2c, VRPN_COOKIE_SIZE, 2 * SEC), 0);
    assert_int_equal(vrpn_session_state(&s), VRPN_SESS_STREAMING);
    const struct ev_rec *e = find_ev(&p, VRPN_EV_COOKIE);
    assert_non_null(e);
    assert_int_equal(e->minor, 38);
    assert_false(e->minor_differs);
    assert_non_null(find_ev(&p, VRPN_EV_UP));
    /* 4 senders + 23 types, sequence numbers 0..26 */
    struct msgv ours;
    split(p.out + VRPN_COOKIE_SIZE, p.out_len - VRPN_COOKIE_SIZE, &ours);
    assert_int_equal(ours.n, 4 + VRPN_T_CLIENT_COUNT);
    free(ck);
    free(rec);
    free(s2c);
    peer_free(&p);
    vrpn_session_free(&s);
}

static void cookie_case(enum vrpn_role role, const char *text, int want_rc, int minor, bool differs,
                        const char *msg_part)
{
    struct vrpn_session s;
    struct peer p = {0};
    vrpn_session_init(&s, role, &OPS, &p, 5 * SEC);
    assert_int_equal(vrpn_session_start(&s, VRPN_MODE_TCP, 0), 0);
    assert_int_equal(vrpn_session_connected(&s, 0), 0);
    uint8_t ck[VRPN_COOKIE_SIZE] = {0};
    memcpy(ck, text, strlen(text));
    int rc = vrpn_session_feed(&s, ck, sizeof ck, MS);
    if (rc != want_rc) fail_msg("'%s': rc %d, want %d (%s)", text, rc, want_rc, s.error.msg);
    if (want_rc == 0) {
        const struct ev_rec *e = find_ev(&p, VRPN_EV_COOKIE);
        assert_non_null(e);
        assert_int_equal(e->minor, minor);
        assert_int_equal(e->minor_differs, differs);
        assert_int_equal(vrpn_session_state(&s), VRPN_SESS_STREAMING);
    } else {
        const struct vrpn_session_error *e = vrpn_session_error(&s);
        assert_int_equal(e->kind, VRPN_ERR_INPUT);
        assert_int_equal(e->rule, VRPN_RULE_CLOSE);
        assert_string_equal(e->where, role == VRPN_ROLE_CLIENT ? "cookie" : "");
        if (!strstr(e->msg, msg_part)) fail_msg("'%s': message '%s'", text, e->msg);
        assert_int_equal(vrpn_session_state(&s), VRPN_SESS_IDLE);
        assert_null(find_ev(&p, VRPN_EV_COOKIE));
        assert_int_equal(p.out_len, VRPN_COOKIE_SIZE); /* no handshake after a bad cookie */
    }
    peer_free(&p);
    vrpn_session_free(&s);
}

static void test_cookie_versions(void **state)
{
    (void)state;
    for (int r = 0; r < 2; r++) {
        enum vrpn_role role = r ? VRPN_ROLE_SERVER : VRPN_ROLE_CLIENT;
        /* other minor versions are accepted (mainline only prints a note, wire rules §4) */
        cookie_case(role, "vrpn: ver. 07.38  0", 0, 38, false, NULL);
        cookie_case(role, "vrpn: ver. 07.35  0", 0, 35, true, NULL);
        cookie_case(role, "vrpn: ver. 07.40  0", 0, 40, true, NULL);
        /* another major version, a wrong magic, a bad log mode: the connection closes */
        cookie_case(role, "vrpn: ver. 08.38  0", -EPROTO, 0, false, "");
        cookie_case(role, "vrpm: ver. 07.38  0", -EPROTO, 0, false, "");
        cookie_case(role, "vrpn: ver. 07.38  7", -EPROTO, 0, false, "log mode");
    }
    /* the server's line shows the cookie's bytes in hex */
    cookie_case(VRPN_ROLE_SERVER, "vrpm: ver. 07.38  0", -EPROTO, 0, false,
                "(bytes 7672706d3a207665722e2030372e33382020300000000000)");
}

static void test_cookie_split_and_eof(void **state)
{
    (void)state;
    size_t n;
    uint8_t *ck = load(VEC "cookie.bin", &n);
    /* split across three reads: accepted with the last byte only */
    struct vrpn_session s;
    struct peer p = {0};
    client_tcp(&s, &p, 0);
    assert_int_equal(vrpn_session_feed(&s, ck, 5, MS), 0);
    assert_int_equal(vrpn_session_feed(&s, ck + 5, 18, 2 * MS), 0);
    assert_int_equal(vrpn_session_state(&s), VRPN_SESS_COOKIE);
    assert_null(find_ev(&p, VRPN_EV_COOKIE));
    assert_int_equal(vrpn_session_feed(&s, ck + 23, 1, 3 * MS), 0);
    assert_int_equal(vrpn_session_state(&s), VRPN_SESS_STREAMING);
    assert_int_equal(vrpn_session_eof(&s), 0); /* nothing partial left */
    peer_free(&p);
    vrpn_session_free(&s);
    /* EOF inside the cookie: exact text per role */
    for (int r = 0; r < 2; r++) {
        struct peer q = {0};
        vrpn_session_init(&s, r ? VRPN_ROLE_SERVER : VRPN_ROLE_CLIENT, &OPS, &q, 5 * SEC);
        assert_int_equal(vrpn_session_start(&s, VRPN_MODE_TCP, 0), 0);
        assert_int_equal(vrpn_session_connected(&s, 0), 0);
        assert_int_equal(vrpn_session_feed(&s, ck, 10, MS), 0);
        assert_int_equal(vrpn_session_eof(&s), -EMSGSIZE);
        assert_string_equal(vrpn_session_error(&s)->msg,
                            r ? "truncated cookie: 10 of 24 bytes before EOF"
                              : "vrpn cookie: 10 bytes at EOF, need 24");
        peer_free(&q);
        vrpn_session_free(&s);
    }
    free(ck);
}

static void test_cookie_deadline(void **state)
{
    (void)state;
    struct vrpn_session s;
    struct peer p = {0};
    client_tcp(&s, &p, 10 * SEC);
    assert_int_equal(vrpn_session_deadline(&s), 15 * SEC);
    assert_int_equal(vrpn_session_tick(&s, 15 * SEC - 1), 0);
    assert_int_equal(vrpn_session_tick(&s, 15 * SEC), -ETIMEDOUT);
    assert_int_equal(vrpn_session_error(&s)->kind, VRPN_ERR_NO_COOKIE);
    assert_int_equal(vrpn_session_state(&s), VRPN_SESS_IDLE);
    peer_free(&p);
    vrpn_session_free(&s);
}

/* ---- descriptions and dispatch against the session1 recording ---- */

/* Feed the whole server stream of session1 in pieces of `step` bytes (0: at once). */
static void run_session1(struct vrpn_session *s, struct peer *p, size_t step)
{
    size_t n;
    uint8_t *s2c = load(REC "session1_tcp_s2c.bin", &n);
    client_tcp(s, p, 0);
    size_t off = 0;
    int64_t t = MS;
    while (off < n) {
        size_t k = step ? step : n;
        if (k > n - off) k = n - off;
        int rc = vrpn_session_feed(s, s2c + off, k, t);
        if (rc) fail_msg("feed at %zu: %d %s", off, rc, s->error.msg);
        off += k;
    }
    assert_int_equal(vrpn_session_eof(s), 0);
    free(s2c);
}

static void test_descriptions_client(void **state)
{
    (void)state;
    struct vrpn_session s;
    struct peer p = {0};
    run_session1(&s, &p, 0);
    /* what we sent after the cookie is what vrpn_print_devices sent before its first ping: the
     * burst (VRPN Control, the three devices, 23 types) and the echoes of the server's names we
     * did not know (Dial0, Tracker1, vrpn_Forwarder_Brain, Text0, vrpn_Button Alert, the two
     * forwarder types), with the same ids and sequence numbers */
    size_t rn;
    uint8_t *c2s = load(REC "session1_tcp_c2s.bin", &rn);
    struct msgv ours, ref;
    split(p.out + VRPN_COOKIE_SIZE, p.out_len - VRPN_COOKIE_SIZE, &ours);
    split(c2s + VRPN_COOKIE_SIZE, rn - VRPN_COOKIE_SIZE, &ref);
    int n_ref = 0;
    while (n_ref < ref.n && ref.m[n_ref].hdr.type < 0)
        n_ref++;
    assert_int_equal(n_ref, 34);
    assert_true(ours.n >= n_ref);
    for (int i = 0; i < n_ref; i++)
        same_msg(&ours.m[i], &ref.m[i], i);
    assert_int_equal(vrpn_session_stats(&s)->echoes, 7);
    /* the server's ids map to ours both ways */
    const struct vrpn_id_map *ids = vrpn_session_ids(&s);
    assert_int_equal(vrpn_id_map_to_local(ids, VRPN_ID_SENDER, 5, NULL), 3); /* Analog0 */
    assert_int_equal(vrpn_id_map_to_local(ids, VRPN_ID_SENDER, 3, NULL), 4); /* Dial0 */
    assert_int_equal(vrpn_id_map_to_local(ids, VRPN_ID_TYPE, 23, NULL), VRPN_T_ANALOG);
    assert_int_equal(vrpn_id_map_to_remote(ids, VRPN_ID_TYPE, VRPN_T_BUTTON_ALERT), 21);
    free(c2s);
    peer_free(&p);
    vrpn_session_free(&s);
}

static void test_descriptions_server(void **state)
{
    (void)state;
    /* a server session fed the client's recorded stream: every name described, ours described
     * back where new, the pings dispatched with the client's sender mapped to ours */
    size_t n;
    uint8_t *c2s = load(REC "session1_tcp_c2s.bin", &n);
    struct vrpn_session s;
    struct peer p = {0};
    vrpn_session_init(&s, VRPN_ROLE_SERVER, &OPS, &p, 5 * SEC);
    assert_int_equal(vrpn_session_start(&s, VRPN_MODE_TCP, 0), 0);
    assert_int_equal(vrpn_id_map_register(vrpn_session_ids(&s), VRPN_ID_SENDER, "Tracker0", NULL),
                     1);
    assert_int_equal(vrpn_session_connected(&s, 0), 0);
    assert_int_equal(vrpn_session_feed(&s, c2s, n, MS), 0);
    struct msgv ours;
    split(p.out + VRPN_COOKIE_SIZE, p.out_len - VRPN_COOKIE_SIZE, &ours);
    /* burst: 2 senders, 24 types; then echoes of the client's new names: Button0, Analog0,
     * Dial0, Tracker1, vrpn_Forwarder_Brain, Text0 and the two forwarder types */
    assert_int_equal(ours.n, 2 + VRPN_T_COUNT + 8);
    for (int i = 0; i < ours.n; i++)
        assert_int_equal(ours.m[i].hdr.seq, (uint32_t)i);
    assert_int_equal(ours.m[2 + VRPN_T_COUNT].hdr.type, VRPN_SENDER_DESCRIPTION);
    assert_int_equal(ours.m[2 + VRPN_T_COUNT].hdr.sender, 2); /* Button0 became our sender 2 */
    assert_int_equal(count_ev(&p, VRPN_EV_DESCRIBED), 8 + 26);
    /* 15 pings, the first five of Tracker0 (client id 1, ours 1) */
    int pings = 0;
    for (int i = 0; i < p.n_ev; i++) {
        const struct ev_rec *e = &p.ev[i];
        if (e->kind != VRPN_EV_MESSAGE) continue;
        assert_int_equal(e->type_local, VRPN_T_PING);
        if (pings < 5) {
            assert_int_equal(e->sender_local, 1);
            assert_string_equal(e->name, "Tracker0");
        }
        pings++;
    }
    assert_int_equal(pings, 15);
    free(c2s);
    peer_free(&p);
    vrpn_session_free(&s);
}

static void test_split_byte_by_byte(void **state)
{
    (void)state;
    struct vrpn_session a, b;
    struct peer *pa = calloc(1, sizeof *pa), *pb = calloc(1, sizeof *pb);
    assert_non_null(pa);
    assert_non_null(pb);
    run_session1(&a, pa, 0);
    run_session1(&b, pb, 1);
    /* the same events and the same bytes out, however the stream was cut */
    assert_true(pa->n_ev > 100);
    assert_int_equal(pa->n_ev, pb->n_ev);
    assert_memory_equal(pa->ev, pb->ev, (size_t)pa->n_ev * sizeof pa->ev[0]);
    assert_int_equal(pa->out_len, pb->out_len);
    assert_memory_equal(pa->out, pb->out, pa->out_len);
    /* the recording's reports: the first Pos_Quat of Tracker0 sensor 0, with its time */
    const struct ev_rec *e = NULL;
    for (int i = 0; i < pb->n_ev && !e; i++)
        if (pb->ev[i].kind == VRPN_EV_MESSAGE && pb->ev[i].body == VRPN_BODY_POS_QUAT)
            e = &pb->ev[i];
    assert_non_null(e);
    assert_string_equal(e->name, "Tracker0");
    assert_int_equal(e->sensor, 0);
    assert_int_equal(e->tv_sec, 1795321979u);
    assert_int_equal(e->tv_usec, 276009u);
    assert_true(e->qz > 0.926691 && e->qz < 0.926693 && e->qw > 0.375821 && e->qw < 0.375823);
    assert_false(e->udp);
    /* pongs of the three devices, each first once */
    int firsts = 0;
    for (int i = 0; i < pb->n_ev; i++)
        firsts += pb->ev[i].kind == VRPN_EV_PONG && pb->ev[i].first;
    assert_int_equal(firsts, 3);
    /* Dial0, Tracker1 and Text0 are not our devices: their reports are dropped */
    assert_true(vrpn_session_stats(&b)->ignored > 0);
    assert_int_equal(count_ev(pb, VRPN_EV_IGNORED), (int)vrpn_session_stats(&b)->ignored);
    assert_int_equal(vrpn_session_stats(&a)->tcp_reports, vrpn_session_stats(&b)->tcp_reports);
    peer_free(pa);
    peer_free(pb);
    vrpn_session_free(&a);
    vrpn_session_free(&b);
    free(pa);
    free(pb);
}

/* ---- bad ids and lengths ---- */

static size_t msg(uint8_t *buf, size_t cap, int32_t sender, int32_t type, const void *body,
                  size_t blen)
{
    struct xg_writer w;
    xg_writer_init(&w, buf, cap);
    struct vrpn_header h = {.tv_sec = 1795321979, .tv_usec = 5, .sender = sender, .type = type};
    assert_int_equal(vrpn_encode_message(&w, &h, NULL, body, blen, NULL), 0);
    return w.len;
}

/* A session of `role` past the cookie, with "Tracker0" as our sender 1 and described by the
 * peer as its sender 1, and the peer's type 4 = Pos_Quat, 16 = ping. */
static void streaming(struct vrpn_session *s, struct peer *p, enum vrpn_role role)
{
    vrpn_session_init(s, role, &OPS, p, 5 * SEC);
    assert_int_equal(vrpn_session_start(s, VRPN_MODE_TCP, 0), 0);
    assert_int_equal(vrpn_id_map_register(vrpn_session_ids(s), VRPN_ID_SENDER, "Tracker0", NULL),
                     1);
    assert_int_equal(vrpn_session_connected(s, 0), 0);
    size_t n;
    uint8_t *ck = load(VEC "cookie.bin", &n);
    assert_int_equal(vrpn_session_feed(s, ck, n, 0), 0);
    free(ck);
    uint8_t b[512];
    struct xg_writer w;
    xg_writer_init(&w, b, sizeof b);
    struct vrpn_header h = {0};
    assert_int_equal(
        vrpn_encode_description(&w, &h, NULL, VRPN_SENDER_DESCRIPTION, 1, "Tracker0", NULL), 0);
    assert_int_equal(
        vrpn_encode_description(&w, &h, NULL, VRPN_TYPE_DESCRIPTION, 4, VRPN_TYPE_POS_QUAT, NULL),
        0);
    assert_int_equal(
        vrpn_encode_description(&w, &h, NULL, VRPN_TYPE_DESCRIPTION, 16, VRPN_TYPE_PING, NULL), 0);
    assert_int_equal(vrpn_session_feed(s, b, w.len, 0), 0);
    p->n_ev = 0;
}

static void test_unknown_ids(void **state)
{
    (void)state;
    uint8_t b[256];
    size_t n;
    /* client: a type or sender never described is dropped (rule: drop), the session goes on */
    struct vrpn_session s;
    struct peer p = {0};
    streaming(&s, &p, VRPN_ROLE_CLIENT);
    n = msg(b, sizeof b, 1, 7, NULL, 0);
    assert_int_equal(vrpn_session_feed(&s, b, n, MS), 0);
    n = msg(b, sizeof b, 9, 16, NULL, 0);
    assert_int_equal(vrpn_session_feed(&s, b, n, MS), 0);
    assert_int_equal(count_ev(&p, VRPN_EV_IGNORED), 2);
    assert_int_equal(vrpn_session_stats(&s)->ignored, 2);
    assert_int_equal(vrpn_session_state(&s), VRPN_SESS_STREAMING);
    /* ... then a good Pos_Quat still arrives */
    size_t pn;
    uint8_t *pq = load(VEC "pos_quat.bin", &pn); /* sender 1 type 4 sensor 2 */
    assert_int_equal(vrpn_session_feed(&s, pq, pn, 2 * MS), 0);
    const struct ev_rec *e = find_ev(&p, VRPN_EV_MESSAGE);
    assert_non_null(e);
    assert_int_equal(e->sensor, 2);
    assert_true(e->x == 1.5 && e->y == -2 && e->z == 0.25);
    /* an id outside 0..1999 is a violation: close */
    n = msg(b, sizeof b, 1, 5000, NULL, 0);
    assert_int_equal(vrpn_session_feed(&s, b, n, MS), -EPROTO);
    assert_string_equal(vrpn_session_error(&s)->where, "tcp");
    assert_int_equal(vrpn_session_state(&s), VRPN_SESS_IDLE);
    peer_free(&p);
    vrpn_session_free(&s);

    /* server: an id the client never described closes the connection, with the id */
    struct peer q = {0};
    streaming(&s, &q, VRPN_ROLE_SERVER);
    n = msg(b, sizeof b, 1, 7, NULL, 0);
    assert_int_equal(vrpn_session_feed(&s, b, n, MS), -ENOENT);
    assert_string_equal(vrpn_session_error(&s)->msg, "message type id 7 was never described");
    peer_free(&q);
    vrpn_session_free(&s);
    struct peer r = {0};
    streaming(&s, &r, VRPN_ROLE_SERVER);
    n = msg(b, sizeof b, 9, 16, NULL, 0);
    assert_int_equal(vrpn_session_feed(&s, b, n, MS), -ENOENT);
    assert_string_equal(vrpn_session_error(&s)->msg,
                        "message sender id 9 (type 'vrpn_Base ping_message') was never described");
    peer_free(&r);
    vrpn_session_free(&s);
    free(pq);
}

static void test_bad_lengths(void **state)
{
    (void)state;
    for (int r = 0; r < 2; r++) {
        enum vrpn_role role = r ? VRPN_ROLE_SERVER : VRPN_ROLE_CLIENT;
        /* oversize length field: refused from the header alone, before any body arrives */
        struct vrpn_session s;
        struct peer p = {0};
        streaming(&s, &p, role);
        uint8_t h[VRPN_HEADER_SIZE] = {0};
        xg_store_be32(h, 70000);
        assert_int_equal(vrpn_session_feed(&s, h, 12, MS), 0); /* half a header: wait */
        assert_int_equal(vrpn_session_feed(&s, h + 12, 12, MS), -EPROTO);
        assert_int_equal(vrpn_session_error(&s)->kind, VRPN_ERR_INPUT);
        const char *m = vrpn_session_error(&s)->msg;
        if (!strstr(m, "70000")) fail_msg("message '%s' lacks the length", m);
        if (r && strncmp(m, "header: ", 8)) fail_msg("server message '%s'", m);
        peer_free(&p);
        vrpn_session_free(&s);
        /* a length below the header's own size */
        struct peer q = {0};
        streaming(&s, &q, role);
        xg_store_be32(h, 12);
        assert_int_equal(vrpn_session_feed(&s, h, sizeof h, MS), -EPROTO);
        peer_free(&q);
        vrpn_session_free(&s);
        /* a message cut by EOF: its bytes and (server) its length are named */
        struct peer e = {0};
        streaming(&s, &e, role);
        size_t pn;
        uint8_t *pq = load(VEC "pos_quat.bin", &pn);
        assert_int_equal(vrpn_session_feed(&s, pq, 40, MS), 0);
        assert_int_equal(vrpn_session_eof(&s), -EMSGSIZE);
        assert_string_equal(vrpn_session_error(&s)->msg,
                            r ? "truncated message: 40 bytes before EOF, length 88"
                              : "vrpn message: truncated, 40 bytes at EOF");
        free(pq);
        peer_free(&e);
        vrpn_session_free(&s);
    }
}

static void test_server_request_sizes(void **state)
{
    (void)state;
    struct vrpn_session s;
    struct peer p = {0};
    streaming(&s, &p, VRPN_ROLE_SERVER);
    uint8_t b[512];
    struct xg_writer w;
    xg_writer_init(&w, b, sizeof b);
    struct vrpn_header h = {0};
    assert_int_equal(vrpn_encode_description(&w, &h, NULL, VRPN_TYPE_DESCRIPTION, 13,
                                             "vrpn_Tracker set_update_rate", NULL),
                     0);
    uint8_t four[4] = {0};
    h.sender = 1;
    h.type = 13;
    assert_int_equal(vrpn_encode_message(&w, &h, NULL, four, 4, NULL), 0);
    assert_int_equal(vrpn_session_feed(&s, b, w.len, MS), -EPROTO);
    assert_string_equal(vrpn_session_error(&s)->msg,
                        "'vrpn_Tracker set_update_rate' body is 4 bytes, expected 8");
    peer_free(&p);
    vrpn_session_free(&s);
}

/* ---- UDP+TCP ---- */

static void test_udp_request(void **state)
{
    (void)state;
    struct vrpn_session s;
    struct peer p = {0};
    vrpn_session_init(&s, VRPN_ROLE_CLIENT, &OPS, &p, 5 * SEC);
    assert_int_equal(vrpn_session_start(&s, VRPN_MODE_UDP, 0), 0);
    assert_int_equal(vrpn_session_state(&s), VRPN_SESS_CALLBACK);
    /* the request text: the golden vector, and the recorded one with its port */
    size_t n;
    uint8_t *lob = load(VEC "lob.bin", &n);
    assert_int_equal(vrpn_session_request(&s, "127.0.0.1", 43459, 0, NULL), 0);
    assert_int_equal(p.request_len, n);
    assert_memory_equal(p.request, lob, n);
    free(lob);
    lob = load(REC "session3_udp_lob_c2s.bin", &n);
    assert_int_equal(vrpn_session_request(&s, "127.0.0.1", 47827, 0, NULL), 0);
    assert_int_equal(p.request_len, n);
    assert_memory_equal(p.request, lob, n);
    assert_int_equal(p.requests, 2);
    /* resent every 2 s while no call-back comes; a failed send is retried at the next tick */
    assert_int_equal(vrpn_session_deadline(&s), 2 * SEC);
    assert_int_equal(vrpn_session_tick(&s, 2 * SEC - 1), 0);
    assert_int_equal(p.requests, 2);
    p.request_fails = true;
    assert_int_equal(vrpn_session_tick(&s, 2 * SEC), 0);
    assert_int_equal(p.requests, 2);
    p.request_fails = false;
    assert_int_equal(vrpn_session_tick(&s, 2 * SEC + 100 * MS), 0);
    assert_int_equal(p.requests, 3);
    assert_int_equal(vrpn_session_stats(&s)->requests, 3);
    /* a host that is not letters, digits and dots, or a port below 1024, is not sent */
    struct xg_error err = {0};
    assert_int_equal(vrpn_session_request(&s, "bad host", 43459, 0, &err), -EINVAL);
    assert_int_equal(vrpn_session_request(&s, "127.0.0.1", 80, 0, &err), -EINVAL);
    assert_int_equal(p.requests, 3);
    /* no call-back within the timeout */
    assert_int_equal(vrpn_session_tick(&s, 5 * SEC), -ETIMEDOUT);
    assert_int_equal(vrpn_session_error(&s)->kind, VRPN_ERR_NO_CALLBACK);
    free(lob);
    peer_free(&p);
    vrpn_session_free(&s);
}

/* The recorded UDP+TCP session: our TCP burst against vrpn_print_devices' (UDP_DESCRIPTION
 * first), then the server's datagrams dispatched as UDP reports. */
static void test_udp_session3(void **state)
{
    (void)state;
    size_t cn, sn, un;
    uint8_t *c2s = load(REC "session3_udp_tcp_c2s.bin", &cn);
    uint8_t *s2c = load(REC "session3_udp_tcp_s2c.bin", &sn);
    uint8_t *udp = load(REC "session3_udp_udp_s2c.bin", &un);
    struct msgv ref;
    split(c2s + VRPN_COOKIE_SIZE, cn - VRPN_COOKIE_SIZE, &ref);
    assert_int_equal(ref.m[0].hdr.type, VRPN_UDP_DESCRIPTION);
    struct vrpn_system_msg ud;
    assert_int_equal(vrpn_system_decode(&ref.m[0], &ud, NULL), 0);

    struct vrpn_session s;
    struct peer p = {0};
    vrpn_session_init(&s, VRPN_ROLE_CLIENT, &OPS, &p, 5 * SEC);
    assert_int_equal(vrpn_session_start(&s, VRPN_MODE_UDP, 0), 0);
    const char *devs[] = {"Rig", "Pad", "Sticks"}; /* vrpn_print_devices' names (not Prop) */
    for (int i = 0; i < 3; i++)
        assert_int_equal(vrpn_id_map_register(vrpn_session_ids(&s), VRPN_ID_SENDER, devs[i], NULL),
                         i + 1);
    vrpn_session_set_udp(&s, ud.name, ud.udp_port);
    /* a datagram before the handshake is dropped: the ids are not known yet */
    assert_int_equal(vrpn_session_connected(&s, MS), 0);
    assert_int_equal(vrpn_session_feed_datagram(&s, udp, 64, MS), 0);
    assert_int_equal(vrpn_session_stats(&s)->ignored, 1);
    assert_int_equal(vrpn_session_stats(&s)->datagrams, 0);
    assert_int_equal(vrpn_session_feed(&s, s2c, sn, 2 * MS), 0);
    struct msgv ours;
    split(p.out + VRPN_COOKIE_SIZE, p.out_len - VRPN_COOKIE_SIZE, &ours);
    int n_ref = 0;
    while (n_ref < ref.n && ref.m[n_ref].hdr.type < 0)
        n_ref++;
    assert_true(n_ref >= 1 + 4 + VRPN_T_CLIENT_COUNT);
    for (int i = 0; i < n_ref; i++)
        same_msg(&ours.m[i], &ref.m[i], i);
    /* the datagrams, cut where the recording's segments say */
    FILE *f = fopen(REC "session3_udp_segments.csv", "r");
    assert_non_null(f);
    char line[256];
    int dgs = 0;
    uint64_t before = vrpn_session_stats(&s)->udp_reports;
    while (fgets(line, sizeof line, f)) {
        double t;
        char tr[32], dir[16];
        size_t off, len;
        if (sscanf(line, "%lf,%31[^,],%15[^,],%zu,%zu", &t, tr, dir, &off, &len) != 5) continue;
        if (strcmp(tr, "udp") || strcmp(dir, "s2c")) continue;
        assert_true(off + len <= un);
        int rc = vrpn_session_feed_datagram(&s, udp + off, len, 3 * MS);
        if (rc) fail_msg("datagram at %zu: %d %s", off, rc, s.error.msg);
        dgs++;
    }
    fclose(f);
    assert_int_equal(dgs, 228);
    assert_int_equal(vrpn_session_stats(&s)->datagrams, 228);
    assert_true(vrpn_session_stats(&s)->udp_reports > before + 228);
    int udp_pq = 0;
    for (int i = 0; i < p.n_ev; i++)
        udp_pq +=
            p.ev[i].kind == VRPN_EV_MESSAGE && p.ev[i].udp && p.ev[i].body == VRPN_BODY_POS_QUAT;
    assert_true(udp_pq > 100);
    /* a datagram whose last message is cut: bad input from "udp" */
    assert_int_equal(vrpn_session_feed_datagram(&s, udp, 30, 4 * MS), -EMSGSIZE);
    assert_string_equal(vrpn_session_error(&s)->where, "udp");
    free(c2s);
    free(s2c);
    free(udp);
    peer_free(&p);
    vrpn_session_free(&s);
}

static void test_server_udp_description(void **state)
{
    (void)state;
    size_t n;
    uint8_t *ud = load(VEC "udp_description.bin", &n); /* port 33216, 127.0.0.1 */
    struct vrpn_session s;
    struct peer p = {0};
    streaming(&s, &p, VRPN_ROLE_SERVER);
    assert_int_equal(vrpn_session_feed(&s, ud, n, MS), 0);
    const struct ev_rec *e = find_ev(&p, VRPN_EV_UDP_DESCRIPTION);
    assert_non_null(e);
    assert_int_equal(e->udp_port, 33216);
    assert_string_equal(e->name, "127.0.0.1");
    peer_free(&p);
    vrpn_session_free(&s);
    /* a name instead of a numeric address: closed, never resolved */
    struct peer q = {0};
    streaming(&s, &q, VRPN_ROLE_SERVER);
    uint8_t b[128];
    struct xg_writer w;
    xg_writer_init(&w, b, sizeof b);
    struct vrpn_header h = {0};
    assert_int_equal(vrpn_encode_udp_description(&w, &h, NULL, 4000, "rig.local", NULL), 0);
    assert_int_equal(vrpn_session_feed(&s, b, w.len, MS), -EPROTO);
    assert_string_equal(vrpn_session_error(&s)->msg,
                        "UDP description: host 'rig.local' is not a numeric IPv4 address");
    free(ud);
    peer_free(&q);
    vrpn_session_free(&s);
    /* our own UDP_DESCRIPTION heads a call-back handshake: the golden vector's fields */
    struct peer r = {0};
    vrpn_session_init(&s, VRPN_ROLE_SERVER, &OPS, &r, 5 * SEC);
    assert_int_equal(vrpn_session_start(&s, VRPN_MODE_UDP, 0), 0);
    vrpn_session_set_udp(&s, "127.0.0.1", 33216);
    assert_int_equal(vrpn_session_connected(&s, MS), 0);
    uint8_t *ck = load(VEC "cookie.bin", &n);
    assert_int_equal(vrpn_session_feed(&s, ck, n, MS), 0);
    uint8_t *vec = load(VEC "udp_description.bin", &n);
    struct msgv ours, ref;
    split(r.out + VRPN_COOKIE_SIZE, r.out_len - VRPN_COOKIE_SIZE, &ours);
    split(vec, n, &ref);
    same_msg(&ours.m[0], &ref.m[0], 0);
    free(ck);
    free(vec);
    peer_free(&r);
    vrpn_session_free(&s);
}

static void test_server_callback_deadline(void **state)
{
    (void)state;
    /* one deadline covers the call-back connect and the cookie */
    struct vrpn_session s;
    struct peer p = {0};
    vrpn_session_init(&s, VRPN_ROLE_SERVER, &OPS, &p, 2 * SEC);
    assert_int_equal(vrpn_session_start(&s, VRPN_MODE_UDP, 0), 0);
    assert_int_equal(vrpn_session_deadline(&s), 2 * SEC);
    assert_int_equal(vrpn_session_connected(&s, SEC), 0);
    assert_int_equal(vrpn_session_deadline(&s), 2 * SEC);
    assert_int_equal(vrpn_session_tick(&s, 2 * SEC), -ETIMEDOUT);
    assert_int_equal(vrpn_session_error(&s)->kind, VRPN_ERR_NO_COOKIE);
    peer_free(&p);
    vrpn_session_free(&s);
    struct peer q = {0};
    vrpn_session_init(&s, VRPN_ROLE_SERVER, &OPS, &q, 2 * SEC);
    assert_int_equal(vrpn_session_start(&s, VRPN_MODE_UDP, 0), 0);
    assert_int_equal(vrpn_session_tick(&s, 2 * SEC), -ETIMEDOUT);
    assert_int_equal(vrpn_session_error(&s)->kind, VRPN_ERR_NO_CALLBACK);
    peer_free(&q);
    vrpn_session_free(&s);
}

/* ---- time and log messages ---- */

static void test_time_and_log(void **state)
{
    (void)state;
    for (int r = 0; r < 2; r++) {
        struct vrpn_session s;
        struct peer p = {0};
        streaming(&s, &p, r ? VRPN_ROLE_SERVER : VRPN_ROLE_CLIENT);
        /* a request to log (we never log) and a disconnect message are no errors */
        uint8_t b[256];
        struct xg_writer w;
        xg_writer_init(&w, b, sizeof b);
        struct vrpn_header h = {0};
        assert_int_equal(vrpn_encode_log_description(&w, &h, NULL, 3, "in.vrpn", "out.vrpn", NULL),
                         0);
        assert_int_equal(vrpn_encode_disconnect(&w, &h, NULL, NULL), 0);
        assert_int_equal(vrpn_session_feed(&s, b, w.len, MS), 0);
        const struct ev_rec *e = find_ev(&p, VRPN_EV_LOG_DESCRIPTION);
        assert_non_null(e);
        assert_int_equal(e->log_mode, 3);
        assert_int_equal(vrpn_session_state(&s), VRPN_SESS_STREAMING);
        /* a message's time is the peer's (header tv_sec/tv_usec), passed on unchanged */
        size_t n = r ? msg(b, sizeof b, 1, 16, NULL, 0) : 0;
        if (!r) {
            uint8_t *pq = load(VEC "pos_quat.bin", &n);
            memcpy(b, pq, n);
            free(pq);
            xg_store_be32(b + 4, 1795321979);
            xg_store_be32(b + 8, 268980);
        }
        assert_int_equal(vrpn_session_feed(&s, b, n, 2 * MS), 0);
        e = find_ev(&p, VRPN_EV_MESSAGE);
        assert_non_null(e);
        assert_int_equal(e->tv_sec, 1795321979u);
        assert_int_equal(e->tv_usec, r ? 5u : 268980u);
        peer_free(&p);
        vrpn_session_free(&s);
    }
    /* our headers carry ops.wall_ns(now) */
    struct vrpn_session s;
    struct peer p = {0};
    vrpn_session_init(&s, VRPN_ROLE_CLIENT, &OPS, &p, SEC);
    struct vrpn_header h = vrpn_session_header(&s, 1795321979 * SEC + 268981 * 1000);
    assert_int_equal(h.tv_sec, 1795321979u);
    assert_int_equal(h.tv_usec, 268981u);
    vrpn_session_free(&s);
}

/* ---- client pings ---- */

static void test_client_pings(void **state)
{
    (void)state;
    struct vrpn_session s;
    struct peer p = {0};
    streaming(&s, &p, VRPN_ROLE_CLIENT);
    size_t before = p.out_len;
    /* first pings 100 ms after the cookie (at 0), then one a second until ponged */
    assert_int_equal(vrpn_session_deadline(&s), 100 * MS);
    assert_int_equal(vrpn_session_tick(&s, 99 * MS), 0);
    assert_int_equal(p.out_len, before);
    assert_int_equal(vrpn_session_tick(&s, 100 * MS), 0);
    assert_int_equal(p.out_len, before + VRPN_HEADER_SIZE);
    struct vrpn_msg m;
    assert_int_equal(vrpn_msg_parse(p.out + before, VRPN_HEADER_SIZE, &m, NULL), 0);
    assert_int_equal(m.hdr.sender, 1);
    assert_int_equal(m.hdr.type, VRPN_T_PING);
    assert_int_equal(vrpn_session_tick(&s, 600 * MS), 0);
    assert_int_equal(p.out_len, before + VRPN_HEADER_SIZE);
    assert_int_equal(vrpn_session_tick(&s, 1100 * MS), 0);
    assert_int_equal(vrpn_session_stats(&s)->pings, 2);
    /* unanswered for 3 s: one NOPONG */
    assert_int_equal(vrpn_session_tick(&s, 3100 * MS), 0);
    assert_int_equal(vrpn_session_tick(&s, 4100 * MS), 0);
    assert_int_equal(count_ev(&p, VRPN_EV_NOPONG), 1);
    assert_string_equal(find_ev(&p, VRPN_EV_NOPONG)->name, "Tracker0");
    /* the pong (the server's sender 1 = Tracker0, its type 17 = pong) ends the pings */
    uint8_t b[256];
    struct xg_writer w;
    xg_writer_init(&w, b, sizeof b);
    struct vrpn_header h = {0};
    assert_int_equal(
        vrpn_encode_description(&w, &h, NULL, VRPN_TYPE_DESCRIPTION, 17, VRPN_TYPE_PONG, NULL), 0);
    h.sender = 1;
    h.type = 17;
    assert_int_equal(vrpn_encode_message(&w, &h, NULL, NULL, 0, NULL), 0);
    assert_int_equal(vrpn_session_feed(&s, b, w.len, 4200 * MS), 0);
    const struct ev_rec *e = find_ev(&p, VRPN_EV_PONG);
    assert_non_null(e);
    assert_true(e->first);
    uint64_t pings = vrpn_session_stats(&s)->pings;
    assert_int_equal(vrpn_session_deadline(&s), INT64_MAX);
    assert_int_equal(vrpn_session_tick(&s, 9 * SEC), 0);
    assert_int_equal(vrpn_session_stats(&s)->pings, pings);
    peer_free(&p);
    vrpn_session_free(&s);
}

static void test_connection_gone(void **state)
{
    (void)state;
    /* ops.send reports the connection gone (a slow client dropped): the feed stops at once */
    struct vrpn_session s;
    struct peer p = {0};
    vrpn_session_init(&s, VRPN_ROLE_SERVER, &OPS, &p, 5 * SEC);
    assert_int_equal(vrpn_session_start(&s, VRPN_MODE_TCP, 0), 0);
    assert_int_equal(vrpn_session_connected(&s, 0), 0);
    size_t n;
    uint8_t *c2s = load(REC "session1_tcp_c2s.bin", &n);
    p.gone_on_send = true;
    assert_int_equal(vrpn_session_feed(&s, c2s, n, MS), -ECONNABORTED);
    assert_null(find_ev(&p, VRPN_EV_UP));
    free(c2s);
    peer_free(&p);
    vrpn_session_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cookie_good),
        cmocka_unit_test(test_cookie_versions),
        cmocka_unit_test(test_cookie_split_and_eof),
        cmocka_unit_test(test_cookie_deadline),
        cmocka_unit_test(test_descriptions_client),
        cmocka_unit_test(test_descriptions_server),
        cmocka_unit_test(test_split_byte_by_byte),
        cmocka_unit_test(test_unknown_ids),
        cmocka_unit_test(test_bad_lengths),
        cmocka_unit_test(test_server_request_sizes),
        cmocka_unit_test(test_udp_request),
        cmocka_unit_test(test_udp_session3),
        cmocka_unit_test(test_server_udp_description),
        cmocka_unit_test(test_server_callback_deadline),
        cmocka_unit_test(test_time_and_log),
        cmocka_unit_test(test_client_pings),
        cmocka_unit_test(test_connection_gone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
