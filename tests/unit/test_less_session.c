/* Unit tests for the LESS session (adapters/less/less_session.h: less_session.c, less_send.c,
 * less_session_udp.c), driven without any socket or peer: a bare `struct less_session` whose
 * events (up, subscribed, flush, datagram) are recorded here. Packets are encoded here, decoded
 * with the codec and handed to the session; what it queues is decoded back; UDP datagrams come
 * out of the `datagram` event and are decoded too. Times are given explicitly.
 *   - handshake: our connection-control + introduce-type; the peer's connection-control puts the
 *     session up (the `up` event, once; its gateway id); its pose type gets a subscription to all
 *     nine properties; on TCP a message before connection-control is refused (P5); a timestamp
 *     that does not increase is refused (P4); our queue leaves as one TCP packet stamped with the
 *     time given, timestamps increasing;
 *   - subscription: the peer's subscribe-type to our type raises `subscribed` once and sets the
 *     property mask; an introduce then carries only the subscribed properties; unsubscribe queues
 *     remove-entity for every entity we introduced;
 *   - entities: introduce-entity creates the table entity with the wire pose, update-entity moves
 *     it, remove-entity removes it; a method-invocation on an id never introduced gets 404;
 *   - a packet whose second message updates an entity nobody introduced is refused whole
 *     (-EPROTO, the dry pass): the first message is not applied either;
 *   - UDP out: datagrams carry sequence 0, 1, ...; none acked and 250 ms later both are re-sent
 *     under their old numbers; an ack covering them stops the re-sends; 63 packets in flight hold
 *     back the next flush (window_full); fast re-send: a packet is re-sent as soon as a later one
 *     was acknowledged first (test_udp_fast_resend), once per such evidence;
 *   - UDP in: the peer's datagrams are acknowledged in ours, a duplicate and a stale one are
 *     counted and not applied, a new session token restarts our side at sequence 0. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adapters/less/less_session.h"
#include "core/clock/clock.h"
#include "core/table/entity.h"
#include "mappings/frame.h"

struct fixture {
    struct xg_table *table;
    struct xg_frame frame;
    struct xg_adapter a;
    struct less_env env;
    struct less_session s;
    /* recorded events */
    int ups, subscribes, flushes;
    uint8_t dgrams[8][1500];
    size_t dgram_len[8];
    int n_dgrams; /* all datagrams; the newest 8 are kept, datagram i in dgrams[i % 8] */
};

static void ev_up(void *user)
{
    ((struct fixture *)user)->ups++;
}

static void ev_subscribed(void *user)
{
    ((struct fixture *)user)->subscribes++;
}

static void ev_flush(void *user)
{
    ((struct fixture *)user)->flushes++;
}

static void ev_datagram(void *user, const uint8_t *buf, size_t len)
{
    struct fixture *fx = user;
    assert_true(len <= sizeof fx->dgrams[0]);
    memcpy(fx->dgrams[fx->n_dgrams % 8], buf, len);
    fx->dgram_len[fx->n_dgrams % 8] = len;
    fx->n_dgrams++;
}

static struct fixture *fixture_new(enum less_mode mode)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    fx->table = xg_table_new(NULL);
    assert_non_null(fx->table);
    assert_int_equal(xg_table_set_adapter_name(fx->table, 0, "less1"), 0);
    assert_int_equal(xg_table_set_adapter_name(fx->table, 1, "src"), 0);
    xg_frame_identity(&fx->frame);
    snprintf(fx->a.name, sizeof fx->a.name, "less1");
    fx->a.table = fx->table;
    fx->a.frame = &fx->frame;
    fx->a.gateway_id = "gwA";
    struct less_env *env = &fx->env; /* what the adapter glue would own */
    env->a = &fx->a;
    env->mode = mode;
    env->gw_id = "gwA";
    snprintf(env->schema_str, sizeof env->schema_str, "xrgate/test gateway=gwA session=1");
    env->mtu = 1200; /* the key stays all zero: signature none */
    env->arena_buf = malloc(LESS_ARENA_SIZE);
    assert_non_null(env->arena_buf);
    struct less_session_events ev = {.user = fx,
                                     .up = ev_up,
                                     .subscribed = ev_subscribed,
                                     .flush = ev_flush,
                                     .datagram = ev_datagram};
    less_session_init(&fx->s, env, "peer-1", &ev);
    return fx;
}

static void fixture_free(struct fixture *fx)
{
    less_session_free(&fx->s);
    free(fx->env.arena_buf);
    free(fx->env.pktbuf);
    xg_table_free(fx->table);
    free(fx);
}

/* The peer's side of the wire: its entities 7 and 8 have type 5 (the pose type). */
static const struct less_schema *peer_type(void *user, int64_t typeid)
{
    (void)user;
    return typeid == 5 || typeid == 1 ? less_pose_schema() : NULL;
}

static int peer_entity(void *user, int64_t id, int64_t *typeid)
{
    (void)user;
    if (id != 7 && id != 8) return -1;
    *typeid = 5;
    return 0;
}

static const struct less_context peer_ctx = {peer_type, peer_type, peer_entity, peer_entity,
                                             NULL,      NULL,      NULL};

/* Encode msgs as one TCP packet (no signature), decode it and hand it to the session. */
static int feed(struct fixture *fx, const struct less_msg *msgs, size_t n, int64_t ts,
                struct xg_error *err)
{
    static uint8_t body[4096], pkt[4200];
    struct less_context ctx = peer_ctx;
    ctx.connection_schema = less_connection_schema();
    struct xg_writer w;
    xg_writer_init(&w, body, sizeof body);
    for (size_t i = 0; i < n; i++) {
        int rc = less_encode_msg(&w, &ctx, &msgs[i], err);
        if (rc) print_message("encode %s: %s\n", less_msg_name(msgs[i].code), err->msg);
        assert_int_equal(rc, 0);
    }
    size_t bl = w.len;
    xg_writer_init(&w, pkt, sizeof pkt);
    assert_int_equal(less_tcp_encode(&w, NULL, ts, n, body, bl, err), 0);
    struct less_frame f;
    assert_int_equal(less_tcp_decode(pkt, w.len, NULL, &f, err), 0);
    return less_session_rx_tcp(&fx->s, &f, xg_clock_mono_ns(), err);
}

/* The codes of the messages the session queued toward the peer; clears the queue. */
static size_t take_queued(struct fixture *fx, struct less_msg *out, size_t max,
                          struct less_arena *arena)
{
    struct less_session *p = &fx->s;
    struct less_context ctx;
    less_rx_ctx(p, &ctx); /* our types as the receiver; the peer's entity ids are not needed */
    ctx.sender_type = peer_type;
    ctx.receiver_type = peer_type;
    size_t n = 0;
    static uint8_t copy[65536];
    assert_true(p->msg_len <= sizeof copy);
    memcpy(copy, p->msgbuf, p->msg_len);
    for (uint64_t i = 0; i < p->msg_count && n < max; i++) {
        struct xg_reader r;
        xg_reader_init(&r, copy + p->midx[i].off, p->midx[i].len);
        struct xg_error e = {0};
        assert_int_equal(less_decode_msg(&r, &ctx, arena, &out[n], &e), 0);
        n++;
    }
    p->msg_len = 0;
    p->msg_count = 0;
    return n;
}

static void handshake(struct fixture *fx)
{
    less_send_connection_control(&fx->s); /* what peer_attach does on a new TCP session */
    struct less_prop_value cp[] = {
        {LESS_CONN_SCHEMA, {&less_type_string, {.str = {"xrgate/0 gateway=gwB", 20}}}},
        {LESS_CONN_QUANTUM_NS, {NULL, {.i = 1000}}}};
    struct less_msg m[2] = {{.code = LESS_MSG_CONNECTION_CONTROL},
                            {.code = LESS_MSG_INTRODUCE_TYPE}};
    m[0].u.connection_control.props = (struct less_prop_list){cp, 2};
    m[1].u.introduce_type.typeid = 5;
    m[1].u.introduce_type.uri = LESS_POSE_URI;
    m[1].u.introduce_type.uri_len = strlen(LESS_POSE_URI);
    struct xg_error e = {0};
    assert_int_equal(feed(fx, m, 2, 1000, &e), 0);
}

static void test_handshake(void **state)
{
    (void)state;
    struct fixture *fx = fixture_new(LESS_MODE_LISTEN);
    assert_false(fx->s.streaming);
    handshake(fx);
    assert_true(fx->s.streaming);
    assert_int_equal(fx->ups, 1);
    assert_int_equal(fx->subscribes, 0);
    assert_string_equal(fx->s.peer_gw, "gwB");
    static uint8_t abuf[65536];
    struct less_arena arena;
    less_arena_init(&arena, abuf, sizeof abuf);
    struct less_msg q[8];
    assert_int_equal(take_queued(fx, q, 8, &arena), 3);
    assert_int_equal(q[0].code, LESS_MSG_CONNECTION_CONTROL);
    assert_int_equal(q[1].code, LESS_MSG_INTRODUCE_TYPE);
    assert_int_equal(q[1].u.introduce_type.typeid, 1);
    assert_int_equal(q[2].code, LESS_MSG_SUBSCRIBE_TYPE);
    assert_int_equal(q[2].u.subscribe_type.typeid, 5);
    assert_int_equal(q[2].u.subscribe_type.count, 1);
    assert_int_equal(q[2].u.subscribe_type.components[0].count, LESS_POSE_N_PROPS);
    fixture_free(fx);
}

static struct less_msg introduce_7(struct less_pose_props *pp, struct less_comp_values *cv,
                                   double x)
{
    struct less_pose pose = {0};
    pose.present = LESS_POSE_BIT(LESS_POSE_NAME) | LESS_POSE_BIT(LESS_POSE_POSITION) |
                   LESS_POSE_BIT(LESS_POSE_ORIENTATION) | LESS_POSE_BIT(LESS_POSE_ACTIVE) |
                   LESS_POSE_BIT(LESS_POSE_ORIGIN);
    pose.name = "wand";
    pose.name_len = 4;
    pose.position = (struct xg_vec3){x, 2, 3};
    pose.orientation = (struct xg_quat){0, 0, 0, 1};
    pose.active = 1;
    pose.origin = "gwB/mocap";
    pose.origin_len = 9;
    less_pose_to_props(&pose, LESS_POSE_ALL, pp);
    *cv = (struct less_comp_values){0, pp->list};
    struct less_msg m = {.code = LESS_MSG_INTRODUCE_ENTITY};
    m.u.introduce_entity.typeid = 5;
    m.u.introduce_entity.entity_id = 7;
    m.u.introduce_entity.components = (struct less_comp_values_list){cv, 1};
    return m;
}

static const struct xg_entity *only_entity(struct fixture *fx)
{
    for (uint32_t id = 1; id < 16; id++) {
        const struct xg_entity *e = xg_table_get(fx->table, id);
        if (e) return e;
    }
    return NULL;
}

static void test_entities(void **state)
{
    (void)state;
    struct fixture *fx = fixture_new(LESS_MODE_LISTEN);
    handshake(fx);
    struct less_pose_props pp;
    struct less_comp_values cv;
    struct less_msg m = introduce_7(&pp, &cv, 1.5);
    struct xg_error e = {0};
    assert_int_equal(feed(fx, &m, 1, 2000, &e), 0);
    assert_int_equal(xg_table_count(fx->table), 1);
    const struct xg_entity *ent = only_entity(fx);
    assert_non_null(ent);
    assert_string_equal(xg_entity_origin_gateway(ent), "gwB");
    assert_true(xg_entity_last(ent)->position.x == 1.5 && xg_entity_last(ent)->position.y == 2 &&
                xg_entity_last(ent)->position.z == 3);

    /* update-entity moves it */
    struct less_prop_value pv[1];
    const struct less_type *ft = pp.list.items[1].value.u.list.items[0].type; /* FLOAT32 */
    struct less_value xyz[3] = {{ft, {.f = -4}}, {ft, {.f = 0.5}}, {ft, {.f = 0}}};
    pv[0] = pp.list.items[1]; /* position (property 1) */
    assert_int_equal(pv[0].property_id, LESS_POSE_POSITION);
    pv[0].value.u.list.items = xyz;
    struct less_comp_values ucv = {0, {pv, 1}};
    struct less_msg u = {.code = LESS_MSG_UPDATE_ENTITY};
    u.u.update_entity.entity_id = 7;
    u.u.update_entity.components = (struct less_comp_values_list){&ucv, 1};
    assert_int_equal(feed(fx, &u, 1, 3000, &e), 0);
    ent = only_entity(fx);
    assert_non_null(ent);
    assert_true(xg_entity_last(ent)->position.x == -4 && xg_entity_last(ent)->position.y == 0.5);

    /* a method-invocation on an id we never introduced: 404 */
    static uint8_t abuf[65536];
    struct less_arena arena;
    less_arena_init(&arena, abuf, sizeof abuf);
    struct less_msg q[8];
    take_queued(fx, q, 8, &arena);
    struct less_msg mi = {.code = LESS_MSG_METHOD_INVOCATION};
    mi.u.method_invocation.request_id = 77;
    mi.u.method_invocation.entity_id = 99;
    mi.u.method_invocation.path = (struct less_path){1, {0}};
    assert_int_equal(feed(fx, &mi, 1, 4000, &e), 0);
    assert_int_equal(take_queued(fx, q, 8, &arena), 1);
    assert_int_equal(q[0].code, LESS_MSG_METHOD_RESULT);
    assert_int_equal(q[0].u.method_result.request_id, 77);
    assert_int_equal(q[0].u.method_result.status, 404);
    assert_int_equal(fx->env.not_found_404, 1);

    /* remove-entity removes it from the table */
    struct less_msg r = {.code = LESS_MSG_REMOVE_ENTITY};
    r.u.remove_entity.entity_id = 7;
    assert_int_equal(feed(fx, &r, 1, 5000, &e), 0);
    assert_int_equal(xg_table_count(fx->table), 0);
    fixture_free(fx);
}

static void test_packet_refused_whole(void **state)
{
    (void)state;
    struct fixture *fx = fixture_new(LESS_MODE_LISTEN);
    handshake(fx);
    struct less_pose_props pp;
    struct less_comp_values cv;
    struct less_msg m[2];
    m[0] = introduce_7(&pp, &cv, 1.5);
    m[1] = (struct less_msg){.code = LESS_MSG_UPDATE_ENTITY}; /* entity 8 was never introduced */
    m[1].u.update_entity.entity_id = 8;
    m[1].u.update_entity.components = (struct less_comp_values_list){&cv, 1};
    struct xg_error e = {0};
    assert_int_equal(feed(fx, m, 2, 2000, &e), -EPROTO);
    assert_int_equal(xg_table_count(fx->table), 0);
    fixture_free(fx);
}

/* (seq, ack_last, message count) of our datagram i (0 = the first sent; one of the newest 8) */
static void dgram_fields(struct fixture *fx, int i, int *seq, int *ack, uint64_t *count)
{
    assert_true(i >= 0 && i < fx->n_dgrams && i >= fx->n_dgrams - 8);
    struct less_frame f;
    struct xg_error e = {0};
    assert_int_equal(
        less_udp_decode(fx->dgrams[i % 8], fx->dgram_len[i % 8], 1200, &fx->env.key, &f, &e), 0);
    *seq = f.seq;
    *ack = f.ack_last;
    *count = f.message_count;
}

static void test_udp_ack_resend(void **state)
{
    (void)state;
    struct fixture *fx = fixture_new(LESS_MODE_UDP);
    struct less_session *p = &fx->s;
    const int64_t t0 = 1000 * XG_NS_PER_S;
    less_send_connection_control(p);
    assert_int_equal(less_session_udp_out(p, false, t0), 0);
    assert_int_equal(fx->n_dgrams, 1);
    assert_int_equal(p->tx_seq, 1);
    assert_true(p->sent[0].in_use && !p->sent[0].acked);
    assert_int_equal(p->sent[0].count, 2);
    assert_int_equal(less_session_udp_out(p, false, t0), 0); /* nothing queued: nothing */
    assert_int_equal(fx->n_dgrams, 1);
    assert_int_equal(less_session_udp_out(p, true, t0), 0); /* an empty packet (keep-alive ack) */
    assert_int_equal(p->tx_seq, 2);
    assert_int_equal(p->sent[1].sent_ns, t0);
    int seq, ack;
    uint64_t count;
    dgram_fields(fx, 0, &seq, &ack, &count);
    assert_true(seq == 0 && count == 2);
    dgram_fields(fx, 1, &seq, &ack, &count);
    assert_true(seq == 1 && count == 0);

    /* not lost yet: nothing re-sent */
    less_udp_resend(p, t0 + 100 * XG_NS_PER_MS);
    assert_int_equal(fx->env.resends, 0);
    assert_int_equal(fx->n_dgrams, 2);
    /* 250 ms without an ack: both re-sent under their old numbers */
    less_udp_resend(p, t0 + 300 * XG_NS_PER_MS);
    assert_int_equal(fx->env.resends, 2);
    assert_int_equal(fx->n_dgrams, 4);
    assert_int_equal(p->tx_seq, 2);
    assert_int_equal(p->sent[0].count, 2); /* control and type messages stay current */
    int s2, s3;
    dgram_fields(fx, 2, &s2, &ack, &count);
    assert_int_equal(count, s2 == 0 ? 2 : 0);
    dgram_fields(fx, 3, &s3, &ack, &count);
    assert_true((s2 == 0 && s3 == 1) || (s2 == 1 && s3 == 0));

    /* the peer acks 0 and 1: no further re-sends */
    less_udp_on_ack(p, 1, UINT64_C(1) << 0);
    assert_true(less_ack_covers(1, UINT64_C(1), 0));
    assert_true(p->sent[0].acked && p->sent[1].acked);
    less_udp_resend(p, t0 + 1000 * XG_NS_PER_MS);
    assert_int_equal(fx->env.resends, 2);
    assert_int_equal(fx->n_dgrams, 4);

    /* 63 unacknowledged packets in flight: the next flush holds back */
    for (int i = 0; i < LESS_UDP_MAX_INFLIGHT; i++)
        assert_int_equal(less_session_udp_out(p, true, t0), 0);
    assert_int_equal(p->tx_seq, 2 + LESS_UDP_MAX_INFLIGHT);
    assert_int_equal(fx->env.window_full, 0);
    assert_int_equal(less_session_udp_out(p, true, t0), 0);
    assert_int_equal(p->tx_seq, 2 + LESS_UDP_MAX_INFLIGHT);
    assert_int_equal(fx->env.window_full, 1);
    assert_int_equal(fx->n_dgrams, 4 + LESS_UDP_MAX_INFLIGHT);
    fixture_free(fx);
}

/* One of the peer's UDP datagrams (no signature) with sequence `seq`, timestamp `ts` and the
 * acknowledgements (ack_last, mask) of our packets, encoded, decoded and handed to the session. */
static int feed_udp_ack(struct fixture *fx, uint8_t seq, int64_t ts, uint8_t ack_last,
                        uint64_t mask, const struct less_msg *msgs, size_t n, int64_t now)
{
    static uint8_t body[4096], dgram[1200];
    struct less_context ctx = peer_ctx;
    ctx.connection_schema = less_connection_schema();
    struct xg_writer w;
    struct xg_error err = {0};
    xg_writer_init(&w, body, sizeof body);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(less_encode_msg(&w, &ctx, &msgs[i], &err), 0);
    size_t bl = w.len;
    xg_writer_init(&w, dgram, sizeof dgram);
    assert_int_equal(less_udp_encode(&w, NULL, seq, ack_last, mask, ts, n, body, bl, &err), 0);
    struct less_frame f;
    assert_int_equal(less_udp_decode(dgram, w.len, sizeof dgram, NULL, &f, &err), 0);
    return (int)less_session_rx_udp(&fx->s, &f, 0, NULL, now);
}

/* The same, acknowledging nothing of ours (ack-last 255, which we have not sent, empty mask). */
static int feed_udp(struct fixture *fx, uint8_t seq, int64_t ts, const struct less_msg *msgs,
                    size_t n, int64_t now)
{
    return feed_udp_ack(fx, seq, ts, 255, 0, msgs, n, now);
}

static struct less_msg cc_msg(struct less_prop_value *cp, const char *schema)
{
    cp[0] = (struct less_prop_value){LESS_CONN_SCHEMA,
                                     {&less_type_string, {.str = {schema, strlen(schema)}}}};
    struct less_msg m = {.code = LESS_MSG_CONNECTION_CONTROL};
    m.u.connection_control.props = (struct less_prop_list){cp, 1};
    return m;
}

static void test_udp_receive(void **state)
{
    (void)state;
    struct fixture *fx = fixture_new(LESS_MODE_UDP);
    struct less_session *p = &fx->s;
    const int64_t t0 = 1000 * XG_NS_PER_S;
    struct less_prop_value cp[1];
    struct less_msg cc = cc_msg(cp, "peer gateway=gwB session=s1");
    assert_int_equal(feed_udp(fx, 0, 100, &cc, 1, t0), LESS_SESSION_APPLIED);
    assert_true(p->streaming);
    assert_int_equal(fx->ups, 1);
    assert_string_equal(p->peer_session, "s1");
    struct less_pose_props pp;
    struct less_comp_values cv;
    struct less_msg m[2];
    m[0] = (struct less_msg){.code = LESS_MSG_INTRODUCE_TYPE};
    m[0].u.introduce_type.typeid = 5;
    m[0].u.introduce_type.uri = LESS_POSE_URI;
    m[0].u.introduce_type.uri_len = strlen(LESS_POSE_URI);
    m[1] = introduce_7(&pp, &cv, 1.5);
    assert_int_equal(feed_udp(fx, 1, 200, m, 2, t0), LESS_SESSION_APPLIED);
    assert_int_equal(xg_table_count(fx->table), 1);
    /* our next datagram acknowledges 1 (and 0 in the mask) */
    assert_int_equal(less_session_udp_out(p, true, t0), 0);
    int seq, ack;
    uint64_t count;
    dgram_fields(fx, fx->n_dgrams - 1, &seq, &ack, &count);
    assert_int_equal(ack, 1);
    /* the same datagram again: a duplicate, not applied */
    assert_int_equal(feed_udp(fx, 1, 200, m, 2, t0), LESS_SESSION_DUPLICATE);
    assert_int_equal(fx->env.duplicates, 1);
    /* seq 3 then seq 2 with an older timestamp: stale, its remove-entity not applied (P12) */
    assert_int_equal(feed_udp(fx, 3, 400, NULL, 0, t0), LESS_SESSION_APPLIED);
    struct less_msg rm = {.code = LESS_MSG_REMOVE_ENTITY};
    rm.u.remove_entity.entity_id = 7;
    assert_int_equal(feed_udp(fx, 2, 150, &rm, 1, t0), LESS_SESSION_STALE);
    assert_int_equal(fx->env.stale_packets, 1);
    assert_int_equal(xg_table_count(fx->table), 1);
    /* a new session token: our side starts over (its entities leave, our sequence restarts) */
    struct less_msg cc2 = cc_msg(cp, "peer gateway=gwB session=s2");
    assert_int_equal(feed_udp(fx, 0, 500, &cc2, 1, t0), LESS_SESSION_APPLIED);
    assert_int_equal(fx->env.peer_restarts, 1);
    assert_int_equal(xg_table_count(fx->table), 0);
    assert_int_equal(p->tx_seq, 0);
    assert_int_equal(fx->ups, 2); /* up again with the new session */
    int before = fx->n_dgrams;
    assert_int_equal(less_session_udp_out(p, false, t0), 0);
    assert_int_equal(fx->n_dgrams, before + 1);
    dgram_fields(fx, fx->n_dgrams - 1, &seq, &ack, &count);
    assert_true(seq == 0 && ack == 0 && count == 2); /* connection-control + type */
    fixture_free(fx);
}

/* Fast re-send (P13: a packet is lost when a later one was acknowledged first): our packets 0, 1
 * and 2 go out; the peer's datagram acknowledges 1 only. 0 is re-sent at the next resend pass,
 * 2 ms after it was sent, long before the 250 ms timeout could say so; 2 (sent after 1) is not.
 * The re-sent 0 is not re-sent again on the same evidence, nor when 2 (sent before the re-send)
 * is acknowledged; only when a packet sent after the re-send is. */
static void test_udp_fast_resend(void **state)
{
    (void)state;
    struct fixture *fx = fixture_new(LESS_MODE_UDP);
    struct less_session *p = &fx->s;
    const int64_t t0 = 1000 * XG_NS_PER_S, ms = XG_NS_PER_MS;
    less_send_connection_control(p);
    assert_int_equal(less_session_udp_out(p, false, t0), 0);
    assert_int_equal(less_session_udp_out(p, true, t0), 0);
    assert_int_equal(less_session_udp_out(p, true, t0), 0);
    assert_int_equal(fx->n_dgrams, 3);
    assert_int_equal(p->tx_seq, 3);
    less_udp_resend(p, t0 + 1 * ms); /* nothing acknowledged, nothing timed out: nothing */
    assert_int_equal(fx->env.resends, 0);

    /* the peer's first datagram acknowledges our 1 only (ack-last 1, empty mask) */
    struct less_prop_value cp[1];
    struct less_msg cc = cc_msg(cp, "peer gateway=gwB session=s1");
    assert_int_equal(feed_udp_ack(fx, 0, 100, 1, 0, &cc, 1, t0 + 1 * ms), LESS_SESSION_APPLIED);
    assert_true(p->sent[1].acked && !p->sent[0].acked && !p->sent[2].acked);
    less_udp_resend(p, t0 + 2 * ms);
    assert_int_equal(fx->env.resends, 1);
    assert_int_equal(fx->n_dgrams, 4);
    int seq, ack;
    uint64_t count;
    dgram_fields(fx, 3, &seq, &ack, &count);
    assert_int_equal(seq, 0);
    assert_int_equal(count, 2); /* connection-control and introduce-type stay current */
    assert_int_equal(ack, 0);   /* and it acknowledges the peer's 0 */
    assert_int_equal(p->tx_seq, 3);

    /* the same evidence again: no second re-send */
    less_udp_resend(p, t0 + 3 * ms);
    assert_int_equal(fx->env.resends, 1);
    /* 2 acknowledged: sent before the re-send of 0, so no news about it */
    assert_int_equal(feed_udp_ack(fx, 1, 200, 2, 0, NULL, 0, t0 + 4 * ms), LESS_SESSION_APPLIED);
    assert_true(p->sent[2].acked && !p->sent[0].acked);
    less_udp_resend(p, t0 + 5 * ms);
    assert_int_equal(fx->env.resends, 1);
    assert_int_equal(fx->n_dgrams, 4);
    /* 3, sent after the re-send, acknowledged first: 0 is re-sent again */
    assert_int_equal(less_session_udp_out(p, true, t0 + 6 * ms), 0);
    assert_int_equal(feed_udp_ack(fx, 2, 300, 3, 0, NULL, 0, t0 + 7 * ms), LESS_SESSION_APPLIED);
    less_udp_resend(p, t0 + 8 * ms);
    assert_int_equal(fx->env.resends, 2);
    assert_int_equal(fx->n_dgrams, 6);
    dgram_fields(fx, 5, &seq, &ack, &count);
    assert_int_equal(seq, 0);
    fixture_free(fx);
}

/* The peer subscribes to our type: `subscribed` once, the mask; introduces carry only the
 * subscribed properties; unsubscribe removes what we introduced. */
static void test_subscription(void **state)
{
    (void)state;
    struct fixture *fx = fixture_new(LESS_MODE_LISTEN);
    handshake(fx);
    static uint8_t abuf[65536];
    struct less_arena arena;
    less_arena_init(&arena, abuf, sizeof abuf);
    struct less_msg q[8];
    take_queued(fx, q, 8, &arena);
    assert_false(less_session_ready(&fx->s));
    static const int64_t pids[] = {LESS_POSE_NAME, LESS_POSE_POSITION};
    struct less_comp_subscription cs = {.path = {1, {0}}, .property_ids = pids, .count = 2};
    struct less_msg sub = {.code = LESS_MSG_SUBSCRIBE_TYPE};
    sub.u.subscribe_type.typeid = LESS_OUR_TYPEID;
    sub.u.subscribe_type.components = &cs;
    sub.u.subscribe_type.count = 1;
    struct xg_error e = {0};
    assert_int_equal(feed(fx, &sub, 1, 2000, &e), 0);
    assert_int_equal(fx->subscribes, 1);
    assert_true(less_session_ready(&fx->s));
    assert_int_equal(fx->s.sub_mask,
                     LESS_POSE_BIT(LESS_POSE_NAME) | LESS_POSE_BIT(LESS_POSE_POSITION));
    assert_int_equal(feed(fx, &sub, 1, 2001, &e), 0); /* again: no second full refresh */
    assert_int_equal(fx->subscribes, 1);

    /* an entity of another adapter, introduced with the subscribed properties only */
    struct xg_entity_key key = {.source = "wand", .kind = XG_KIND_CONTROLLER};
    struct xg_sample smp = {.flags = XG_SAMPLE_POSITION | XG_SAMPLE_ORIENTATION,
                            .position = {1, 2, 3},
                            .orientation = {0, 0, 0, 1},
                            .capture_ns = xg_clock_mono_ns(),
                            .receive_ns = xg_clock_mono_ns()};
    struct xg_adapter src = {.index = 1};
    snprintf(src.name, sizeof src.name, "src");
    uint32_t id = 0;
    assert_int_equal(xg_table_update(fx->table, &src, &key, &smp, &id), 0);
    const struct xg_entity *ent = xg_table_get(fx->table, id);
    assert_non_null(ent);
    struct xg_pose pose;
    xg_entity_predict_at(fx->table, ent, xg_clock_mono_ns(), &pose);
    less_send_entity(&fx->s, ent, &pose, true);
    assert_int_equal(take_queued(fx, q, 8, &arena), 1);
    assert_int_equal(q[0].code, LESS_MSG_INTRODUCE_ENTITY);
    const struct less_prop_list *pl = &q[0].u.introduce_entity.components.items[0].props;
    assert_int_equal(pl->count, 2);
    assert_int_equal(pl->items[0].property_id, LESS_POSE_NAME);
    assert_int_equal(pl->items[1].property_id, LESS_POSE_POSITION);
    assert_int_equal(fx->s.n_out, 1);

    /* unsubscribe: remove-entity for it, not ready any more */
    struct less_msg un = {.code = LESS_MSG_UNSUBSCRIBE_TYPE};
    un.u.unsubscribe_type.typeid = LESS_OUR_TYPEID;
    assert_int_equal(feed(fx, &un, 1, 3000, &e), 0);
    assert_int_equal(take_queued(fx, q, 8, &arena), 1);
    assert_int_equal(q[0].code, LESS_MSG_REMOVE_ENTITY);
    assert_int_equal(fx->s.n_out, 0);
    assert_false(less_session_ready(&fx->s));
    fixture_free(fx);
}

/* TCP: P5 (connection-control first) and P4 (timestamps increase) refuse the packet. */
static void test_tcp_order_rules(void **state)
{
    (void)state;
    struct fixture *fx = fixture_new(LESS_MODE_LISTEN);
    struct less_msg t = {.code = LESS_MSG_INTRODUCE_TYPE};
    t.u.introduce_type.typeid = 5;
    t.u.introduce_type.uri = LESS_POSE_URI;
    t.u.introduce_type.uri_len = strlen(LESS_POSE_URI);
    struct xg_error e = {0};
    assert_int_equal(feed(fx, &t, 1, 500, &e), -EPROTO);
    assert_non_null(strstr(e.msg, "before connection-control (P5"));
    assert_int_equal(fx->ups, 0);
    handshake(fx); /* timestamp 1000 */
    memset(&e, 0, sizeof e);
    assert_int_equal(feed(fx, &t, 1, 1000, &e), -EPROTO);
    assert_non_null(strstr(e.msg, "timestamp 1000 does not increase (previous 1000, P4)"));
    fixture_free(fx);
}

/* TCP out: the queue as one signed packet stamped with the time given, timestamps increasing. */
static void test_tcp_packet_out(void **state)
{
    (void)state;
    struct fixture *fx = fixture_new(LESS_MODE_LISTEN);
    const uint8_t *pkt;
    size_t len;
    assert_int_equal(less_session_tcp_packet(&fx->s, 5 * XG_NS_PER_S, &pkt, &len), 0); /* empty */
    less_send_connection_control(&fx->s);
    assert_int_equal(less_session_tcp_packet(&fx->s, 5 * XG_NS_PER_S, &pkt, &len), 1);
    struct less_frame f;
    struct xg_error e = {0};
    assert_int_equal(less_tcp_decode(pkt, len, &fx->env.key, &f, &e), 0);
    assert_int_equal(f.message_count, 2);
    assert_int_equal(f.timestamp, 5000000);
    assert_int_equal(fx->s.msg_count, 0);
    less_send_connection_control(&fx->s);
    /* the same instant again: the timestamp still increases (P4) */
    assert_int_equal(less_session_tcp_packet(&fx->s, 5 * XG_NS_PER_S, &pkt, &len), 1);
    assert_int_equal(less_tcp_decode(pkt, len, &fx->env.key, &f, &e), 0);
    assert_int_equal(f.timestamp, 5000001);
    fixture_free(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handshake),
        cmocka_unit_test(test_entities),
        cmocka_unit_test(test_packet_refused_whole),
        cmocka_unit_test(test_udp_ack_resend),
        cmocka_unit_test(test_udp_fast_resend),
        cmocka_unit_test(test_udp_receive),
        cmocka_unit_test(test_subscription),
        cmocka_unit_test(test_tcp_order_rules),
        cmocka_unit_test(test_tcp_packet_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
