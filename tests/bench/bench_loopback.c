/* Added latency through a running xrgate over loopback sockets (one machine, one clock).
 *
 * Load generator: N bodies (default 50) at R Hz (default 240), one frame at a time, either
 *   --vrpn-listen PORT  as a VRPN server (TCP-only) that xrgate's `vrpn-client` connects to
 *                       (device "Tracker0@tcp://127.0.0.1:PORT"): cookie, sender/type
 *                       descriptions, then per frame N Pos_Quat messages (sensor i) in one write;
 *   --rtp-in PORT       or as ONE RTP game-state packet of N Object2 sent to xrgate's `rtp`
 *                       ingress adapter.
 * The bodies stand still at distinct positions (body i at distance i+1 m from the origin along one
 * axis, identity orientation, zero velocity), so prediction does not change what comes out and
 * every egress object names its body by |position| whatever the frame mapping. Receivers, in the
 * same thread:
 *   rtp   a UDP socket bound to --rtp-out PORT (or inherited: --rtp-out-fd FD): the egress
 *         `rtp` adapter's destination; RTP + game-state decode (adapters/rtp)
 *   rgmp  a TCP client of xrgate's `rgmp-server` (--rgmp PORT): RGMP session decode, every
 *         TRANSFORM stream of every data frame (adapters/rgmp)
 *   vrpn  a TCP-only VRPN client of xrgate's `vrpn-server` (--vrpn-server PORT): every Pos_Quat
 *         (adapters/vrpn)
 *   less  a LESS peer session over TCP with xrgate's `less` listener (--less PORT, signature:
 *         none on loopback): connection-control + introduce-type, subscribe to xrgate's pose
 *         type, then every introduce-entity / update-entity (adapters/less)
 * Latency of body i on an egress = arrival time (clock right after the receive call) - the time
 * just before the ingress frame carrying body i was written; only the first arrival of body i
 * after each send counts (later copies: coalesced frames, refreshes). Send-on-change egress
 * (rate_hz: 0) is expected, so no tick quantisation is included. This is the "ingress socket to
 * egress socket" figure plus one loopback hop each way and this thread's wake-up.
 *
 * Same-run baseline: datagrams of the frame's size at the same cadence through a bare UDP relay
 * thread (recv, sendto; blocking, so it sleeps between frames like the gateway) to a socket of
 * this thread. With --pid P, the CPU time of process P (the gateway) over each repetition is
 * reported too. Output: JSON (bench_util.h) with per-repetition quantiles per egress. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "adapters/less/less_codec.h"
#include "adapters/rgmp/rgmp_codec.h"
#include "adapters/rtp/gamestate_codec.h"
#include "adapters/rtp/rtp.h"
#include "adapters/synth/synth.h"
#include "adapters/vrpn/vrpn_codec.h"
#include "tests/bench/bench_util.h"
#include "tests/bench/bench_weak.h"

#define MAX_BODIES 200
#define N_EG 4
static const char *eg_names[N_EG] = {"rtp", "rgmp", "vrpn", "less"};
enum { EG_RTP, EG_RGMP, EG_VRPN, EG_LESS };
#define LESS_MAX_EID 4096

struct gen {
    int bodies;
    double rate;
    int tx, rtp_rx, rgmp_fd;
    int vrpn_lfd, vrpn_in; /* VRPN ingress: our listen socket, the vrpn-client connection */
    int vrpn_fd;           /* VRPN egress: our connection to vrpn-server */
    int32_t vrpn_pq_type;  /* vrpn-server's type id of Pos_Quat (-1 until described) */
    bool vrpn_cookie;      /* vrpn-server's cookie consumed */
    uint32_t vrpn_seq;
    uint8_t *vbuf;
    size_t vlen, vcap;
    int less_fd;            /* LESS egress: our TCP session with xrgate's `less` listener */
    int64_t less_peer_type; /* the typeid xrgate introduced for the pose schema, -1 before */
    int64_t less_ts;        /* our last packet timestamp (µs, strictly increasing) */
    int16_t less_body[LESS_MAX_EID]; /* entity id -> body index, -1 unknown */
    uint8_t *lbuf;
    size_t llen, lcap;
    struct sockaddr_in rtp_in;
    uint16_t seq;
    int64_t send_ns[MAX_BODIES];
    bool answered[N_EG][MAX_BODIES];
    double *lat[N_EG];
    size_t n[N_EG], cap;
    bool measuring;
    uint64_t sent_frames, arrivals[N_EG], unmatched[N_EG];
    size_t pkt_len;
    struct rgmp_session sess;
    uint8_t *tcp_buf;
    size_t tcp_len, tcp_cap;
    struct rtp_gs_iter it;
};

static void die(const char *what)
{
    fprintf(stderr, "bench_loopback: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int body_of(double x, double y, double z, int bodies)
{
    double m = fabs(x);
    if (fabs(y) > m) m = fabs(y);
    if (fabs(z) > m) m = fabs(z);
    long b = lround(m) - 1;
    if (b < 0 || b >= bodies || fabs(m - (double)(b + 1)) > 0.01) return -1;
    return (int)b;
}

static void arrived(struct gen *g, int eg, int body, int64_t now)
{
    if (body < 0) {
        g->unmatched[eg]++;
        return;
    }
    g->arrivals[eg]++;
    if (g->answered[eg][body] || !g->send_ns[body]) return;
    g->answered[eg][body] = true;
    if (g->measuring && g->n[eg] < g->cap)
        g->lat[eg][g->n[eg]++] = (double)(now - g->send_ns[body]) / 1000.0;
}

static void vrpn_write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) die("send to vrpn-client");
        p += k;
        n -= (size_t)k;
    }
}

/* One frame as N VRPN Pos_Quat messages of sender 0 ("Tracker0"), one TCP write. */
static void send_frame_vrpn(struct gen *g)
{
    static uint8_t buf[MAX_BODIES * 96];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    struct vrpn_header h = {.sender = 0, .type = 0};
    vrpn_header_set_wall_ns(&h, (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec);
    for (int i = 0; i < g->bodies; i++) {
        struct vrpn_body b = {.kind = VRPN_BODY_POS_QUAT};
        b.u.pos_quat = (struct vrpn_pos_quat){
            .sensor = i, .pos = {(double)(i + 1), 0, 0}, .quat = {0, 0, 0, 1}};
        if (vrpn_encode_body_message(&w, &h, &g->vrpn_seq, &b, NULL)) die("vrpn encode");
    }
    int64_t t = bench_now_ns();
    for (int i = 0; i < g->bodies; i++) {
        g->send_ns[i] = t;
        for (int e = 0; e < N_EG; e++)
            g->answered[e][i] = false;
    }
    vrpn_write_all(g->vrpn_in, buf, w.len);
    g->sent_frames++;
    g->pkt_len = w.len;
}

static void send_frame(struct gen *g)
{
    if (g->vrpn_lfd >= 0) {
        if (g->vrpn_in >= 0) send_frame_vrpn(g);
        return;
    }
    static uint8_t pkt[65536];
    struct xg_writer w;
    xg_writer_init(&w, pkt, sizeof pkt);
    int64_t now = bench_now_ns();
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    int64_t wall_ns = (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec;
    struct rtp_header h = {
        .pt = 98, .seq = g->seq++, .ts = (uint32_t)(now / 1000 * 9 / 100), .ssrc = 0x0BE4C400};
    if (rtp_write_header(&w, &h, NULL)) die("rtp header");
    for (int i = 0; i < g->bodies; i++) {
        struct rtp_gs_object o = {.type = RTP_GS_OBJECT2, .tag = RTP_GS_TAG_OBJECT2};
        struct rtp_gs_object2 *b = &o.u.object2;
        b->object_id = (uint64_t)i + 1;
        b->time = rtp_gs_time1_from_wall_ns(wall_ns);
        b->loc.p[0] = (float)(i + 1);
        b->scale.p[0] = b->scale.p[1] = b->scale.p[2] = 1.0f;
        b->active = true;
        if (rtp_gs_encode_object(&w, &o, NULL)) die("game-state encode");
    }
    int64_t t = bench_now_ns();
    for (int i = 0; i < g->bodies; i++) {
        g->send_ns[i] = t;
        for (int e = 0; e < N_EG; e++)
            g->answered[e][i] = false;
    }
    if (sendto(g->tx, pkt, w.len, 0, (struct sockaddr *)&g->rtp_in, sizeof g->rtp_in) !=
        (ssize_t)w.len)
        die("sendto rtp-in");
    g->sent_frames++;
    g->pkt_len = w.len;
}

static void read_rtp(struct gen *g)
{
    static uint8_t buf[65536];
    for (;;) {
        ssize_t n = recv(g->rtp_rx, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0) return;
        int64_t now = bench_now_ns();
        if (rtp_is_rtcp(buf, (size_t)n)) continue;
        struct rtp_packet p;
        if (rtp_decode(buf, (size_t)n, &p, NULL)) continue;
        rtp_gs_iter_init(&g->it, p.payload, p.payload_len);
        struct rtp_gs_object o;
        int rc;
        while ((rc = rtp_gs_iter_next(&g->it, &o, NULL)) != RTP_GS_END) {
            if (rc != RTP_GS_OBJECT) continue;
            const float *loc = NULL;
            if (o.type == RTP_GS_OBJECT2) loc = o.u.object2.loc.p;
            if (o.type == RTP_GS_HEAD1) loc = o.u.head1.loc.p;
            if (!loc) continue;
            arrived(g, 0, body_of(loc[0], loc[1], loc[2], g->bodies), now);
        }
    }
}

static void read_rgmp(struct gen *g)
{
    for (;;) {
        if (g->tcp_cap - g->tcp_len < 65536) {
            g->tcp_cap *= 2;
            g->tcp_buf = realloc(g->tcp_buf, g->tcp_cap);
            if (!g->tcp_buf) die("realloc");
        }
        ssize_t n =
            recv(g->rgmp_fd, g->tcp_buf + g->tcp_len, g->tcp_cap - g->tcp_len, MSG_DONTWAIT);
        if (n == 0) {
            errno = ECONNRESET;
            die("rgmp-server closed the connection");
        }
        if (n < 0) return;
        int64_t now = bench_now_ns();
        g->tcp_len += (size_t)n;
        size_t off = 0;
        for (;;) {
            struct rgmp_header h;
            size_t flen;
            struct xg_error err = {0};
            int rc = rgmp_frame_split(g->tcp_buf + off, g->tcp_len - off, &g->sess.limits, &h,
                                      &flen, &err);
            if (rc < 0) {
                fprintf(stderr, "bench_loopback: rgmp: %s\n", err.msg);
                exit(1);
            }
            if (rc == 0) break;
            struct rgmp_event ev;
            rc = rgmp_session_handle(&g->sess, &h, g->tcp_buf + off + RGMP_HEADER_LEN, &ev, &err);
            if (rc < 0) {
                fprintf(stderr, "bench_loopback: rgmp: %s\n", err.msg);
                exit(1);
            }
            if (ev.type == RGMP_EV_DATA) {
                const struct rgmp_group *gr = &ev.def->groups[ev.frame.group_id];
                for (size_t s = 0; s < gr->n_streams; s++) {
                    if (gr->streams[s].measure != RGMP_TRANSFORM) continue;
                    struct rgmp_pose p;
                    if (rgmp_pose_from_values(&gr->streams[s],
                                              rgmp_data_stream(ev.def, &ev.frame, s), &p, NULL))
                        continue;
                    arrived(g, 1, body_of(p.position.x, p.position.y, p.position.z, g->bodies),
                            now);
                }
            }
            off += flen;
        }
        memmove(g->tcp_buf, g->tcp_buf + off, g->tcp_len - off);
        g->tcp_len -= off;
    }
}

/* VRPN ingress: accept the vrpn-client, send cookie + descriptions (sender 0 "Tracker0", type 0
 * Pos_Quat); what the client sends (cookie, descriptions, pings) is read and discarded. */
static void vrpn_accept(struct gen *g)
{
    int fd = accept(g->vrpn_lfd, NULL, NULL);
    if (fd < 0) return;
    if (g->vrpn_in >= 0) close(g->vrpn_in);
    g->vrpn_in = fd;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    uint8_t buf[512];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    struct vrpn_header h = {0};
    vrpn_header_set_wall_ns(&h, (int64_t)time(NULL) * 1000000000);
    if (vrpn_cookie_encode(&w, 0, NULL) ||
        vrpn_encode_description(&w, &h, &g->vrpn_seq, VRPN_SENDER_DESCRIPTION, 0, "Tracker0",
                                NULL) ||
        vrpn_encode_description(&w, &h, &g->vrpn_seq, VRPN_TYPE_DESCRIPTION, 0, VRPN_TYPE_POS_QUAT,
                                NULL))
        die("vrpn handshake encode");
    vrpn_write_all(fd, buf, w.len);
}

static void vrpn_in_discard(struct gen *g)
{
    uint8_t buf[4096];
    for (;;) {
        ssize_t n = recv(g->vrpn_in, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) continue;
        if (n == 0) {
            close(g->vrpn_in);
            g->vrpn_in = -1;
        }
        return;
    }
}

/* VRPN egress: the vrpn-server's stream (TCP-only client: we never send UDP_DESCRIPTION). */
static void read_vrpn(struct gen *g)
{
    for (;;) {
        if (g->vcap - g->vlen < 65536) {
            g->vcap *= 2;
            g->vbuf = realloc(g->vbuf, g->vcap);
            if (!g->vbuf) die("realloc");
        }
        ssize_t n = recv(g->vrpn_fd, g->vbuf + g->vlen, g->vcap - g->vlen, MSG_DONTWAIT);
        if (n == 0) {
            errno = ECONNRESET;
            die("vrpn-server closed the connection");
        }
        if (n < 0) return;
        int64_t now = bench_now_ns();
        g->vlen += (size_t)n;
        size_t off = 0;
        struct xg_error err = {0};
        if (!g->vrpn_cookie) {
            if (g->vlen < VRPN_COOKIE_SIZE) continue;
            if (vrpn_cookie_decode(g->vbuf, g->vlen, NULL, &err)) {
                fprintf(stderr, "bench_loopback: vrpn-server cookie: %s\n", err.msg);
                exit(1);
            }
            off = VRPN_COOKIE_SIZE;
            g->vrpn_cookie = true;
        }
        for (;;) {
            size_t ws;
            int rc = vrpn_stream_check(g->vbuf + off, g->vlen - off, &ws, &err);
            if (rc < 0) {
                fprintf(stderr, "bench_loopback: vrpn-server: %s\n", err.msg);
                exit(1);
            }
            if (rc == 0) break;
            struct vrpn_msg m;
            if (vrpn_msg_parse(g->vbuf + off, g->vlen - off, &m, &err) == 0) {
                if (m.hdr.type == VRPN_TYPE_DESCRIPTION) {
                    struct vrpn_system_msg sm;
                    if (vrpn_system_decode(&m, &sm, NULL) == 0 &&
                        !strcmp(sm.name, VRPN_TYPE_POS_QUAT))
                        g->vrpn_pq_type = sm.id;
                } else if (m.hdr.type >= 0 && m.hdr.type == g->vrpn_pq_type) {
                    struct vrpn_body b;
                    if (vrpn_body_decode(VRPN_BODY_POS_QUAT, m.body, m.body_len, &b, NULL) == 0) {
                        const struct xg_vec3 *p = &b.u.pos_quat.pos;
                        arrived(g, EG_VRPN, body_of(p->x, p->y, p->z, g->bodies), now);
                    }
                }
            }
            off += ws;
        }
        memmove(g->vbuf, g->vbuf + off, g->vlen - off);
        g->vlen -= off;
    }
}

static int tcp_connect_retry(int port, const char *what)
{
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                             .sin_port = htons((uint16_t)port)};
    int64_t end = bench_now_ns() + 10 * INT64_C(1000000000);
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) die("socket");
        if (!connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            return fd;
        }
        close(fd);
        if (bench_now_ns() > end) die(what);
        usleep(50000);
    }
}

/* ---- LESS egress: a minimal TCP peer session (signature: none, loopback) ---- */

static const struct less_schema *less_type_cb(void *user, int64_t typeid)
{
    return less_pose_schema(); /* the only type either side introduces */
}

static int less_entity_cb(void *user, int64_t eid, int64_t *typeid)
{
    struct gen *g = user;
    if (eid < 0 || eid >= LESS_MAX_EID || g->less_body[eid] == -2) return -1;
    *typeid = g->less_peer_type;
    return 0;
}

/* Encode msgs into one TCP frame (all-zero signature) and write it. */
static void less_send(struct gen *g, const struct less_msg *msgs, size_t n)
{
    static uint8_t mbuf[4096], fbuf[4200];
    const struct less_context ctx = {
        less_type_cb, less_type_cb, less_entity_cb, less_entity_cb, NULL, NULL, g};
    struct xg_writer w, fw;
    struct xg_error err = {0};
    xg_writer_init(&w, mbuf, sizeof mbuf);
    for (size_t i = 0; i < n; i++)
        if (less_encode_msg(&w, &ctx, &msgs[i], &err)) {
            fprintf(stderr, "bench_loopback: less encode: %s\n", err.msg);
            exit(1);
        }
    int64_t ts = bench_now_ns() / 1000;
    g->less_ts = ts > g->less_ts ? ts : g->less_ts + 1;
    static const struct less_key none = {.len = 0};
    xg_writer_init(&fw, fbuf, sizeof fbuf);
    if (less_tcp_encode(&fw, &none, g->less_ts, n, mbuf, w.len, &err)) {
        fprintf(stderr, "bench_loopback: less frame: %s\n", err.msg);
        exit(1);
    }
    vrpn_write_all(g->less_fd, fbuf, fw.len);
}

/* Our side of the handshake (P5): connection-control, then introduce our pose type. */
static void less_hello(struct gen *g)
{
    const struct less_component *cc = &less_connection_schema()->components[0];
    static const char schema[] = "xrgate-bench/1";
    struct less_prop_value pv[5] = {
        {LESS_CONN_SCHEMA, {&cc->props[LESS_CONN_SCHEMA].type, {.str = {schema, strlen(schema)}}}},
        {LESS_CONN_FIRST_SEQ, {&cc->props[LESS_CONN_FIRST_SEQ].type, {.i = 0}}},
        {LESS_CONN_QUANTUM_NS, {&cc->props[LESS_CONN_QUANTUM_NS].type, {.i = 1000}}},
        {LESS_CONN_KEY_ID, {&cc->props[LESS_CONN_KEY_ID].type, {.str = {"", 0}}}},
        {LESS_CONN_RATE_HZ, {&cc->props[LESS_CONN_RATE_HZ].type, {.i = 0}}},
    };
    struct less_msg m[2] = {{.code = LESS_MSG_CONNECTION_CONTROL},
                            {.code = LESS_MSG_INTRODUCE_TYPE}};
    m[0].u.connection_control.props = (struct less_prop_list){pv, 5};
    m[1].u.introduce_type.typeid = 1;
    m[1].u.introduce_type.uri = LESS_POSE_URI;
    m[1].u.introduce_type.uri_len = strlen(LESS_POSE_URI);
    less_send(g, m, 2);
}

static void less_subscribe(struct gen *g, int64_t typeid)
{
    static const int64_t props[LESS_POSE_N_PROPS] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    struct less_comp_subscription cs = {{1, {0}}, props, LESS_POSE_N_PROPS};
    struct less_msg m = {.code = LESS_MSG_SUBSCRIBE_TYPE};
    m.u.subscribe_type.typeid = typeid;
    m.u.subscribe_type.components = &cs;
    m.u.subscribe_type.count = 1;
    less_send(g, &m, 1);
}

static void less_handle(struct gen *g, const struct less_msg *m, int64_t now)
{
    switch (m->code) {
    case LESS_MSG_INTRODUCE_TYPE:
        if (m->u.introduce_type.uri_len == strlen(LESS_POSE_URI) &&
            !memcmp(m->u.introduce_type.uri, LESS_POSE_URI, strlen(LESS_POSE_URI))) {
            g->less_peer_type = m->u.introduce_type.typeid;
            less_subscribe(g, g->less_peer_type);
        }
        break;
    case LESS_MSG_INTRODUCE_ENTITY: {
        int64_t eid = m->u.introduce_entity.entity_id;
        if (eid < 0 || eid >= LESS_MAX_EID) break;
        struct less_pose p = {0};
        const struct less_comp_values_list *cl = &m->u.introduce_entity.components;
        for (size_t i = 0; i < cl->count; i++)
            if (cl->items[i].component_id == 0) less_pose_from_props(&cl->items[i].props, &p, NULL);
        int b = (p.present & LESS_POSE_BIT(LESS_POSE_POSITION))
                    ? body_of(p.position.x, p.position.y, p.position.z, g->bodies)
                    : -1;
        g->less_body[eid] = (int16_t)b;
        arrived(g, EG_LESS, b, now);
        break;
    }
    case LESS_MSG_UPDATE_ENTITY: {
        int64_t eid = m->u.update_entity.entity_id;
        arrived(g, EG_LESS, eid >= 0 && eid < LESS_MAX_EID ? g->less_body[eid] : -1, now);
        break;
    }
    default:
        break; /* connection-control, subscribe-type (to our type), remove-entity */
    }
}

static void read_less(struct gen *g)
{
    static uint8_t arena_buf[1 << 16];
    const struct less_context ctx = {
        less_type_cb, less_type_cb, less_entity_cb, less_entity_cb, NULL, NULL, g};
    static const struct less_key none = {.len = 0};
    for (;;) {
        if (g->lcap - g->llen < 65536) {
            g->lcap *= 2;
            g->lbuf = realloc(g->lbuf, g->lcap);
            if (!g->lbuf) die("realloc");
        }
        ssize_t n = recv(g->less_fd, g->lbuf + g->llen, g->lcap - g->llen, MSG_DONTWAIT);
        if (n == 0) {
            errno = ECONNRESET;
            die("less peer closed the connection");
        }
        if (n < 0) return;
        int64_t now = bench_now_ns();
        g->llen += (size_t)n;
        size_t off = 0;
        for (;;) {
            size_t flen;
            struct xg_error err = {0};
            int rc = less_tcp_split(g->lbuf + off, g->llen - off, 1 << 24, &flen, &err);
            if (rc == 0) break;
            struct less_frame f;
            if (rc < 0 || less_tcp_decode(g->lbuf + off, flen, &none, &f, &err)) {
                fprintf(stderr, "bench_loopback: less: %s\n", err.msg);
                exit(1);
            }
            struct less_msg_iter it;
            less_msg_iter_init(&it, &f);
            for (;;) {
                struct less_arena a;
                less_arena_init(&a, arena_buf, sizeof arena_buf);
                struct less_msg m;
                rc = less_msg_next(&it, &ctx, &a, &m, &err);
                if (rc < 0) {
                    fprintf(stderr, "bench_loopback: less: %s\n", err.msg);
                    exit(1);
                }
                if (rc == 0) break;
                less_handle(g, &m, now);
            }
            off += flen;
        }
        memmove(g->lbuf, g->lbuf + off, g->llen - off);
        g->llen -= off;
    }
}

static double proc_cpu_s(int pid)
{
    if (pid <= 0) return NAN;
    char path[64], buf[1024];
    /* ns on CPU of the main thread (xrgate has one), finer than the 10 ms ticks of stat */
    snprintf(path, sizeof path, "/proc/%d/schedstat", pid);
    FILE *fs = fopen(path, "r");
    if (fs) {
        unsigned long long ns = 0;
        int ok = fscanf(fs, "%llu", &ns) == 1;
        fclose(fs);
        if (ok) return (double)ns / 1e9;
    }
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return NAN;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p) return NAN;
    unsigned long ut = 0, st = 0;
    /* after ')': state(3) ... utime is field 14, stime 15 */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return NAN;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Run the generator until `until` (mono ns). */
static void run_until(struct gen *g, int64_t until, int64_t *next_send, int64_t period)
{
    struct pollfd pf[6] = {{g->rtp_rx, POLLIN, 0},  {g->rgmp_fd, POLLIN, 0},
                           {g->vrpn_fd, POLLIN, 0}, {g->vrpn_lfd, POLLIN, 0},
                           {g->vrpn_in, POLLIN, 0}, {g->less_fd, POLLIN, 0}};
    int nfd = 6; /* negative fds are ignored by poll */
    for (;;) {
        int64_t now = bench_now_ns();
        if (now >= until) return;
        if (now >= *next_send) {
            send_frame(g);
            *next_send += period;
            if (*next_send < now) *next_send = now + period; /* fell behind: skip */
            continue;
        }
        int64_t wait = *next_send - now;
        struct timespec ts = {wait / 1000000000, wait % 1000000000};
        if (ppoll(pf, (nfds_t)nfd, &ts, NULL) < 0 && errno != EINTR) die("ppoll");
        read_rtp(g);
        if (g->rgmp_fd >= 0) read_rgmp(g);
        if (g->vrpn_fd >= 0) read_vrpn(g);
        if (g->less_fd >= 0) read_less(g);
        if (g->vrpn_lfd >= 0 && (pf[3].revents & POLLIN)) {
            vrpn_accept(g);
            pf[4].fd = g->vrpn_in;
        }
        if (g->vrpn_in >= 0 && (pf[4].revents & (POLLIN | POLLHUP))) {
            vrpn_in_discard(g);
            pf[4].fd = g->vrpn_in;
        }
    }
}

/* ---- same-run baseline: a trivial UDP relay thread at the same cadence and packet size ---- */

struct relay {
    int in, out;
    struct sockaddr_in dst;
};

static void *relay_main(void *arg)
{
    struct relay *r = arg;
    static uint8_t buf[65536];
    for (;;) {
        ssize_t n = recv(r->in, buf, sizeof buf, 0);
        if (n <= 0 || (n == 1 && buf[0] == 0xFF)) break;
        sendto(r->out, buf, (size_t)n, 0, (struct sockaddr *)&r->dst, sizeof r->dst);
    }
    return NULL;
}

static int udp_bound(struct sockaddr_in *sa)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) die("socket");
    *sa = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof *sa;
    if (bind(fd, (struct sockaddr *)sa, sl) || getsockname(fd, (struct sockaddr *)sa, &sl))
        die("bind");
    return fd;
}

/* One repetition: packets of `size` bytes at `rate` Hz through the relay thread for ms; fills
 * the 5 quantiles (µs) of send -> arrival. */
static void relay_once(int size, double rate, int ms, double q5[5])
{
    struct sockaddr_in a_in, a_out, a_tx;
    struct relay r;
    r.in = udp_bound(&a_in);
    int rx = udp_bound(&a_out), tx = udp_bound(&a_tx);
    r.out = socket(AF_INET, SOCK_DGRAM, 0);
    r.dst = a_out;
    pthread_t th;
    if (pthread_create(&th, NULL, relay_main, &r)) die("pthread_create");
    static uint8_t pkt[65536], back[65536];
    memset(pkt, 0x5A, sizeof pkt);
    size_t cap = (size_t)((double)ms / 1000.0 * rate) + 64, n = 0;
    double *lat = malloc(cap * sizeof *lat);
    if (!lat) die("malloc");
    int64_t period = (int64_t)(1e9 / rate), end = bench_now_ns() + (int64_t)ms * 1000000;
    int64_t next = bench_now_ns();
    while (bench_now_ns() < end) {
        int64_t now = bench_now_ns();
        if (now < next) {
            struct timespec ts = {(next - now) / 1000000000, (next - now) % 1000000000};
            nanosleep(&ts, NULL);
        }
        next += period;
        int64_t t0 = bench_now_ns();
        if (sendto(tx, pkt, (size_t)size, 0, (struct sockaddr *)&a_in, sizeof a_in) != size)
            die("relay sendto");
        struct pollfd pf = {rx, POLLIN, 0};
        if (poll(&pf, 1, 100) != 1) continue;
        if (recv(rx, back, sizeof back, 0) != size) continue;
        if (n < cap) lat[n++] = (double)(bench_now_ns() - t0) / 1000.0;
    }
    uint8_t stop = 0xFF;
    sendto(tx, &stop, 1, 0, (struct sockaddr *)&a_in, sizeof a_in);
    pthread_join(th, NULL);
    close(r.in);
    close(r.out);
    close(rx);
    close(tx);
    static const double qs[5] = {0.5, 0.9, 0.99, 0.999, 1.0};
    qsort(lat, n, sizeof *lat, bench_cmp_double);
    for (int q = 0; q < 5; q++)
        q5[q] = bench_quantile_sorted(lat, n, qs[q]);
    free(lat);
}

int main(int argc, char **argv)
{
    int reps = 5, ms = 1000, rtp_in = 0, rtp_out = 0, rtp_out_fd = -1, rgmp = 0, pid = 0,
        bodies = 50;
    int vrpn_listen = 0, vrpn_server = 0, less = 0;
    double rate = 240;
    for (int i = 1; i < argc; i += 2) { /* option, value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "bench_loopback: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--reps"))
            reps = atoi(v);
        else if (!strcmp(a, "--ms"))
            ms = atoi(v);
        else if (!strcmp(a, "--rtp-in"))
            rtp_in = atoi(v);
        else if (!strcmp(a, "--rtp-out"))
            rtp_out = atoi(v);
        else if (!strcmp(a, "--rtp-out-fd"))
            rtp_out_fd = atoi(v);
        else if (!strcmp(a, "--rgmp"))
            rgmp = atoi(v);
        else if (!strcmp(a, "--vrpn-listen"))
            vrpn_listen = atoi(v);
        else if (!strcmp(a, "--vrpn-server"))
            vrpn_server = atoi(v);
        else if (!strcmp(a, "--less"))
            less = atoi(v);
        else if (!strcmp(a, "--pid"))
            pid = atoi(v);
        else if (!strcmp(a, "--bodies"))
            bodies = atoi(v);
        else if (!strcmp(a, "--rate"))
            rate = atof(v);
        else {
            fprintf(stderr,
                    "usage: bench_loopback (--rtp-in PORT | --vrpn-listen PORT) (--rtp-out PORT "
                    "| --rtp-out-fd FD) "
                    "[--rgmp PORT] [--vrpn-server PORT] [--less PORT] [--pid P] [--bodies N] "
                    "[--rate HZ] "
                    "[--reps N] [--ms M]\n");
            return 2;
        }
    }
    if (reps < 1 || ms < 10 || (!rtp_in && !vrpn_listen) || (!rtp_out && rtp_out_fd < 0) ||
        bodies < 1 || bodies > MAX_BODIES || rate <= 0) {
        fprintf(stderr, "bench_loopback: bad arguments\n");
        return 2;
    }
    if (!BENCH_HAVE_RTP || ((rgmp) && !BENCH_HAVE_RGMP) ||
        ((vrpn_listen || vrpn_server) && !BENCH_HAVE_VRPN) || (less && !BENCH_HAVE_LESS)) {
        fprintf(stderr, "bench_loopback: an adapter folder these options need is not built\n");
        return 2;
    }
    static struct gen g;
    g.bodies = bodies;
    g.rate = rate;
    g.rgmp_fd = g.vrpn_fd = g.vrpn_lfd = g.vrpn_in = g.less_fd = -1;
    g.less_peer_type = -1;
    for (int i = 0; i < LESS_MAX_EID; i++)
        g.less_body[i] = -2; /* not introduced */
    g.lcap = 1 << 20;
    g.lbuf = malloc(g.lcap);
    g.vrpn_pq_type = -1;
    g.vcap = 1 << 20;
    g.vbuf = malloc(g.vcap);
    g.cap = (size_t)((double)ms / 1000.0 * rate * bodies) + 1024;
    for (int e = 0; e < N_EG; e++) {
        g.lat[e] = malloc(g.cap * sizeof(double));
        if (!g.lat[e]) die("malloc");
    }
    g.tcp_cap = 1 << 20;
    g.tcp_buf = malloc(g.tcp_cap);
    if (!g.tcp_buf) die("malloc");
    if (BENCH_HAVE_RGMP) rgmp_session_init(&g.sess, NULL, false);

    g.tx = socket(AF_INET, SOCK_DGRAM, 0);
    /* --rtp-out-fd: a UDP socket the caller bound (and named in the gateway's configuration)
     * before the gateway started, inherited: no port is picked and handed on */
    g.rtp_rx = rtp_out_fd >= 0 ? rtp_out_fd : socket(AF_INET, SOCK_DGRAM, 0);
    if (g.tx < 0 || g.rtp_rx < 0) die("socket");
    int big = 4 << 20;
    setsockopt(g.rtp_rx, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    sa.sin_port = htons((uint16_t)rtp_out);
    if (rtp_out_fd < 0 && bind(g.rtp_rx, (struct sockaddr *)&sa, sizeof sa)) die("bind --rtp-out");
    g.rtp_in = sa;
    g.rtp_in.sin_port = htons((uint16_t)rtp_in);
    if (vrpn_listen) {
        g.vrpn_lfd = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        setsockopt(g.vrpn_lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sa.sin_port = htons((uint16_t)vrpn_listen);
        if (g.vrpn_lfd < 0 || bind(g.vrpn_lfd, (struct sockaddr *)&sa, sizeof sa) ||
            listen(g.vrpn_lfd, 4))
            die("listen --vrpn-listen");
    }
    if (rgmp) g.rgmp_fd = tcp_connect_retry(rgmp, "--rgmp");
    if (less) {
        g.less_fd = tcp_connect_retry(less, "--less");
        less_hello(&g);
    }
    if (vrpn_server) {
        g.vrpn_fd = tcp_connect_retry(vrpn_server, "--vrpn-server");
        uint8_t ck[VRPN_COOKIE_SIZE];
        struct xg_writer w;
        xg_writer_init(&w, ck, sizeof ck);
        vrpn_cookie_encode(&w, 0, NULL);
        vrpn_write_all(g.vrpn_fd, ck, w.len);
    }
    int64_t period = (int64_t)(1e9 / rate), next = bench_now_ns();
    if (vrpn_listen) { /* the vrpn-client connects with its back-off: wait for it */
        int64_t end = bench_now_ns() + 15 * INT64_C(1000000000);
        while (g.vrpn_in < 0) {
            if (bench_now_ns() > end) {
                errno = ETIMEDOUT;
                die("vrpn-client did not connect to --vrpn-listen");
            }
            run_until(&g, bench_now_ns() + 50 * INT64_C(1000000), &next, period);
        }
    }
    /* warm-up: entities created, definitions received, caches warm */
    run_until(&g, bench_now_ns() + 700 * INT64_C(1000000), &next, period);

    static const double qs[5] = {0.5, 0.9, 0.99, 0.999, 1.0};
    static const char *qn[5] = {"p50", "p90", "p99", "p999", "max"};
    double *res = calloc((size_t)N_EG * 5 * (size_t)reps, sizeof(double));
    double *cpu = calloc((size_t)reps, sizeof(double)),
           *cnt = calloc((size_t)N_EG * (size_t)reps, sizeof(double));
    if (!res || !cpu || !cnt) die("calloc");
    for (int r = 0; r < reps; r++) {
        memset(g.n, 0, sizeof g.n);
        uint64_t f0 = g.sent_frames;
        double c0 = proc_cpu_s(pid);
        int64_t t0 = bench_now_ns();
        g.measuring = true;
        run_until(&g, t0 + (int64_t)ms * 1000000, &next, period);
        g.measuring = false;
        double secs = (double)(bench_now_ns() - t0) / 1e9;
        double updates = (double)(g.sent_frames - f0) * bodies;
        cpu[r] = (proc_cpu_s(pid) - c0) / secs * 100.0;
        cpu[r] = updates > 0 ? cpu[r] : NAN;
        for (int e = 0; e < N_EG; e++) {
            qsort(g.lat[e], g.n[e], sizeof(double), bench_cmp_double);
            for (int q = 0; q < 5; q++)
                res[((size_t)e * 5 + (size_t)q) * (size_t)reps + (size_t)r] =
                    bench_quantile_sorted(g.lat[e], g.n[e], qs[q]);
            cnt[(size_t)e * (size_t)reps + (size_t)r] = updates > 0 ? (double)g.n[e] / updates : 0;
        }
        fprintf(stderr, "loopback: rep %d: rtp %zu, rgmp %zu, vrpn %zu, less %zu samples\n", r,
                g.n[0], g.n[1], g.n[2], g.n[3]);
    }
    /* same-run baseline: a bare relay thread, same cadence and packet size */
    double *rel = calloc((size_t)5 * (size_t)reps, sizeof(double));
    if (!rel) die("calloc");
    for (int r = 0; r < reps; r++) {
        double q5[5];
        relay_once((int)g.pkt_len, rate, ms, q5);
        for (int q = 0; q < 5; q++)
            rel[(size_t)q * (size_t)reps + (size_t)r] = q5[q];
    }
    struct bench_json j = {.first = {true}};
    bench_json_open(&j, NULL);
    bench_json_num(&j, "bodies", bodies);
    bench_json_num(&j, "packet_bytes", (double)g.pkt_len);
    bench_json_open(&j, "relay_baseline_us");
    for (int q = 0; q < 5; q++)
        bench_json_arr(&j, qn[q], rel + (size_t)q * (size_t)reps, reps);
    bench_json_close(&j);
    bench_json_num(&j, "rate_hz", rate);
    bench_json_str(&j, "ingress",
                   vrpn_listen ? "vrpn-client (one TCP write of Pos_Quat messages per frame)"
                               : "rtp (one RTP packet of Object2 per frame)");
    bench_json_arr(&j, "gateway_cpu_percent", cpu, reps);
    bench_json_open(&j, "latency_us");
    for (int e = 0; e < N_EG; e++) {
        if ((e == EG_RGMP && g.rgmp_fd < 0) || (e == EG_VRPN && g.vrpn_fd < 0) ||
            (e == EG_LESS && g.less_fd < 0))
            continue;
        bench_json_open(&j, eg_names[e]);
        for (int q = 0; q < 5; q++)
            bench_json_arr(&j, qn[q], res + ((size_t)e * 5 + (size_t)q) * (size_t)reps, reps);
        bench_json_arr(&j, "delivered_ratio", cnt + (size_t)e * (size_t)reps, reps);
        bench_json_num(&j, "unmatched", (double)g.unmatched[e]);
        bench_json_close(&j);
    }
    bench_json_close(&j);
    bench_json_close(&j);
    if (BENCH_HAVE_RGMP) rgmp_session_free(&g.sess);
    free(rel);
    free(res);
    free(cpu);
    free(cnt);
    return 0;
}
