/* Unit tests for the less adapter's session (adapters/less/less_session.c, less_udp.c), driven
 * without sockets: packets are encoded here, decoded with the codec and handed to
 * process_packet(); what the session answers stays queued in the peer's message buffer (a TCP
 * peer without a bufferevent) and is decoded back; UDP packets go to no socket (fd -1), their
 * bookkeeping (sequence numbers, acks, re-sends) is read from the peer.
 *   - handshake: our connection-control + introduce-type; the peer's connection-control puts the
 *     session up (its gateway id); its pose type gets a subscription to all nine properties;
 *   - entities: introduce-entity creates the table entity with the wire pose, update-entity moves
 *     it, remove-entity removes it; a method-invocation on an id never introduced gets 404;
 *   - a packet whose second message updates an entity nobody introduced is refused whole
 *     (-EPROTO, the dry pass): the first message is not applied either;
 *   - UDP: packets carry sequence 0, 1, ...; none acked and 250 ms later both are re-sent under
 *     their old numbers; an ack covering them stops the re-sends; 63 packets in flight hold back
 *     the next flush (window_full). */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adapters/less/less_adapter_priv.h"
#include "core/clock.h"
#include "core/entity.h"
#include "mappings/frame.h"

extern const struct xg_adapter_ops xg_less_ops;

struct fixture {
    struct xg_table *table;
    struct xg_frame frame;
    struct xg_adapter a;
    struct less_adapter *la;
    struct peer *p;
};

static struct fixture *fixture_new(enum mode mode)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    fx->table = xg_table_new(NULL);
    assert_non_null(fx->table);
    assert_int_equal(xg_table_set_adapter_name(fx->table, 0, "less1"), 0);
    xg_frame_identity(&fx->frame);
    fx->a.ops = &xg_less_ops;
    snprintf(fx->a.name, sizeof fx->a.name, "less1");
    fx->a.table = fx->table;
    fx->a.frame = &fx->frame;
    fx->a.gateway_id = "gwA";
    struct less_adapter *la = calloc(1, sizeof *la);
    assert_non_null(la);
    la->a = &fx->a;
    la->mode = mode;
    la->gw_id = "gwA";
    snprintf(la->schema_str, sizeof la->schema_str, "xrgate/test gateway=gwA session=1");
    la->signature_none = true;
    la->n_keys = 1;
    la->max_packet = 1 << 20;
    la->max_output = 4 << 20;
    la->mtu = 1200;
    la->udp_fd = -1;
    la->state = "test";
    la->arena_buf = malloc(ARENA_SIZE);
    assert_non_null(la->arena_buf);
    fx->a.priv = la;
    fx->la = la;
    fx->p = peer_new(la, "peer-1");
    assert_non_null(fx->p);
    return fx;
}

static void fixture_free(struct fixture *fx)
{
    xg_less_ops.destroy(&fx->a);
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
    return process_packet(fx->p, &f, xg_clock_mono_ns(), false, err);
}

/* The codes of the messages the session queued toward the peer; clears the queue. */
static size_t take_queued(struct fixture *fx, struct less_msg *out, size_t max,
                          struct less_arena *arena)
{
    struct peer *p = fx->p;
    struct less_context ctx;
    rx_ctx(p, &ctx); /* our types as the receiver; the peer's entity ids are not needed */
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
    send_connection_control(fx->p); /* what peer_attach does on a new TCP session */
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
    struct fixture *fx = fixture_new(MODE_LISTEN);
    assert_false(fx->p->streaming);
    handshake(fx);
    assert_true(fx->p->streaming);
    assert_string_equal(fx->p->peer_gw, "gwB");
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
    struct fixture *fx = fixture_new(MODE_LISTEN);
    handshake(fx);
    struct less_pose_props pp;
    struct less_comp_values cv;
    struct less_msg m = introduce_7(&pp, &cv, 1.5);
    struct xg_error e = {0};
    assert_int_equal(feed(fx, &m, 1, 2000, &e), 0);
    assert_int_equal(xg_table_count(fx->table), 1);
    const struct xg_entity *ent = only_entity(fx);
    assert_non_null(ent);
    assert_string_equal(ent->origin_gateway, "gwB");
    assert_true(ent->last.position.x == 1.5 && ent->last.position.y == 2 &&
                ent->last.position.z == 3);

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
    assert_true(ent->last.position.x == -4 && ent->last.position.y == 0.5);

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
    assert_int_equal(fx->la->not_found_404, 1);

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
    struct fixture *fx = fixture_new(MODE_LISTEN);
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

static void test_udp_ack_resend(void **state)
{
    (void)state;
    struct fixture *fx = fixture_new(MODE_UDP);
    struct peer *p = fx->p;
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(9)};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    memcpy(&p->ss, &sin, sizeof sin);
    p->sslen = sizeof sin;
    send_connection_control(p);
    assert_int_equal(udp_flush(p, false), 0);
    assert_int_equal(p->tx_seq, 1);
    assert_true(p->sent[0].in_use && !p->sent[0].acked);
    assert_int_equal(p->sent[0].count, 2);
    assert_int_equal(udp_flush(p, true), 0); /* an empty packet (keep-alive ack) */
    assert_int_equal(p->tx_seq, 2);
    int64_t t0 = p->sent[1].sent_ns;

    /* not lost yet: nothing re-sent */
    udp_resend(p, t0 + 100 * XG_NS_PER_MS);
    assert_int_equal(fx->la->resends, 0);
    /* 250 ms without an ack: both re-sent under their old numbers */
    udp_resend(p, t0 + 300 * XG_NS_PER_MS);
    assert_int_equal(fx->la->resends, 2);
    assert_int_equal(p->tx_seq, 2);
    assert_int_equal(p->sent[0].count, 2); /* control and type messages stay current */

    /* the peer acks 0 and 1: no further re-sends */
    udp_on_ack(p, 1, UINT64_C(1) << 0);
    assert_true(less_ack_covers(1, UINT64_C(1), 0));
    assert_true(p->sent[0].acked && p->sent[1].acked);
    udp_resend(p, t0 + 1000 * XG_NS_PER_MS);
    assert_int_equal(fx->la->resends, 2);

    /* 63 unacknowledged packets in flight: the next flush holds back */
    for (int i = 0; i < UDP_MAX_INFLIGHT; i++)
        assert_int_equal(udp_flush(p, true), 0);
    assert_int_equal(p->tx_seq, 2 + UDP_MAX_INFLIGHT);
    assert_int_equal(fx->la->window_full, 0);
    assert_int_equal(udp_flush(p, true), 0);
    assert_int_equal(p->tx_seq, 2 + UDP_MAX_INFLIGHT);
    assert_int_equal(fx->la->window_full, 1);
    fixture_free(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handshake),
        cmocka_unit_test(test_entities),
        cmocka_unit_test(test_packet_refused_whole),
        cmocka_unit_test(test_udp_ack_resend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
