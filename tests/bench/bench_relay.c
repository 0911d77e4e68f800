/* VRPN relay benchmark (issue 19 item 6): what xrgate adds between a VRPN tracker server and a
 * VRPN client, measured against the direct server -> client path in the same run.
 *
 * Generator (a thread): a VRPN 07.38 server serving one tracker "Tracker0" with N sensors
 * (default 50) at R Hz (default 240) on a fixed frame schedule: frame k is due at
 * T0 + k / R; a late frame is sent as soon as possible, never shifted (its lateness counts in
 * the latency). Frame k carries, for sensor s, the position (s + 1, (k mod 10000) mm, 0) and the
 * identity orientation, stamped with the scheduled time; the receiver recovers k from y. It
 * listens on an inherited TCP socket (--gen-tcp-fd) and, in UDP+TCP mode (--udp), reads VRPN
 * connection requests on an inherited UDP socket of the same port (--gen-udp-fd), calls the
 * client back over TCP and sends the reports as datagrams (16 Pos_Quat per datagram, as full as
 * 1472 bytes allow, like mainline). It answers the client's pings with a pong, as a mainline
 * tracker server does. Its clients: xrgate's vrpn-client (the relay path) and this program's
 * reader (the direct path).
 *
 * Reader (the main thread): a VRPN client of xrgate's vrpn-server (--relay-port) and of the
 * generator directly, TCP-only or UDP+TCP like the generator. Each Pos_Quat's arrival time
 * (CLOCK_MONOTONIC right after the receive call) minus the scheduled time of its frame is one
 * latency sample; only the first arrival of (sensor, frame) counts.
 *
 * Repetitions: the generator feeds one path at a time, in blocks of 100 ms of frames that
 * alternate relay, direct, relay ... (the first path alternates between repetitions), --ms of
 * frames per path in all, so that a disturbance of the machine falls on both paths alike; then
 * --idle-ms with no frames at all while every connection stays open (xrgate's idle CPU). Per
 * repetition: the quantiles of both paths (samples pooled over their blocks) and their
 * difference ("added"), the share of (sensor, frame) pairs
 * delivered, xrgate's CPU (--pid) while it relays and while idle: from /proc/PID/stat (utime +
 * stime of all threads, clock ticks) and /proc/PID/schedstat (ns on CPU of the main thread).
 *
 * Four-egress mode (--rgmp PORT --less PORT): a second thread also reads xrgate's rgmp-server
 * (bytes discarded) and holds a LESS peer session with its `less` listener (subscribed to the
 * pose type, messages decoded and discarded), so that every egress of the gateway has work; the
 * VRPN reader measures as above. Output: one JSON object (bench_util.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "adapters/less/less_codec.h"
#include "adapters/vrpn/vrpn_codec.h"
#include "tests/bench/bench_util.h"
#include "tests/bench/bench_weak.h"

#define MAX_SENSORS 200
#define KMOD 10000   /* frame number modulo this is carried in the position, in mm */
#define MAX_GCONNS 8 /* generator connections: xrgate, the reader, stale ones */
#define BLOCK_MS 100 /* the paths alternate in blocks of this many ms of frames */
#define GRACE_MS 60  /* after the last counted frame is due, late arrivals still count */
#define PER_DGRAM 16 /* Pos_Quat messages per datagram (16 x 88 = 1408 <= 1472) */
#define LESS_MAX_EID 4096

enum { PH_IDLE, PH_RELAY, PH_DIRECT };
enum { W_RELAY, W_DIRECT };

static int sensors = 50;
static double rate = 240, period_ns;
static int64_t T0;
static bool udp_mode;
static _Atomic int phase = PH_IDLE;
static _Atomic int direct_port; /* TCP: the reader's local port; UDP: its call-back port */
static _Atomic bool stopping;
static _Atomic long late_frames; /* frames sent more than one period after their time */

static void die(const char *what)
{
    fprintf(stderr, "bench_relay: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int64_t sched_ns(int64_t k)
{
    return T0 + (int64_t)((double)k * period_ns);
}

static int64_t frame_at(int64_t t)
{
    return (int64_t)floor((double)(t - T0) / period_ns);
}

static void write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && (errno == EINTR || errno == EAGAIN)) {
            struct pollfd pf = {fd, POLLOUT, 0};
            poll(&pf, 1, 100);
            continue;
        }
        if (k <= 0) return; /* peer gone: its reader sees the close */
        p += k;
        n -= (size_t)k;
    }
}

static void set_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int local_port(int fd)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    if (getsockname(fd, (struct sockaddr *)&sa, &sl)) die("getsockname");
    return ntohs(sa.sin_port);
}

static struct sockaddr_in loopback(int port)
{
    return (struct sockaddr_in){.sin_family = AF_INET,
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                                .sin_port = htons((uint16_t)port)};
}

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- generator ---- */

struct gconn {
    int fd;
    bool direct, cookie, udp_ok;
    int32_t ping_type; /* the client's type id of "vrpn_Base ping_message", -1 unknown */
    struct sockaddr_in udp_to;
    uint8_t in[8192];
    size_t inlen;
};

struct gen {
    int lfd, ufd;
    struct gconn c[MAX_GCONNS];
    int n;
    uint32_t seq;
};

static void gen_handshake(struct gen *g, struct gconn *c)
{
    uint8_t buf[1024];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    struct vrpn_header h = {0};
    vrpn_header_set_wall_ns(&h, wall_ns());
    if (vrpn_cookie_encode(&w, 0, NULL) ||
        vrpn_encode_description(&w, &h, &g->seq, VRPN_SENDER_DESCRIPTION, 0, "Tracker0", NULL) ||
        vrpn_encode_description(&w, &h, &g->seq, VRPN_TYPE_DESCRIPTION, 0, VRPN_TYPE_POS_QUAT,
                                NULL) ||
        vrpn_encode_description(&w, &h, &g->seq, VRPN_TYPE_DESCRIPTION, 1, VRPN_TYPE_PONG, NULL))
        die("vrpn handshake encode");
    if (g->ufd >= 0 && vrpn_encode_udp_description(&w, &h, &g->seq, (uint16_t)local_port(g->ufd),
                                                   "127.0.0.1", NULL))
        die("vrpn udp description encode");
    write_all(c->fd, buf, w.len);
}

static void gen_add(struct gen *g, int fd, bool direct)
{
    if (g->n == MAX_GCONNS) {
        close(fd);
        return;
    }
    set_nodelay(fd);
    struct gconn *c = &g->c[g->n++];
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->direct = direct;
    c->ping_type = -1;
    gen_handshake(g, c);
}

static void gen_drop(struct gen *g, int i)
{
    close(g->c[i].fd);
    g->c[i] = g->c[--g->n];
}

/* What a client sends: its cookie, descriptions (we note the ping type), its UDP description
 * (where datagrams go) and pings (answered with a pong from Tracker0). */
static void gen_read(struct gen *g, int i)
{
    struct gconn *c = &g->c[i];
    ssize_t n = recv(c->fd, c->in + c->inlen, sizeof c->in - c->inlen, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        gen_drop(g, i);
        return;
    }
    if (n < 0) return;
    c->inlen += (size_t)n;
    size_t off = 0;
    if (!c->cookie) {
        if (c->inlen < VRPN_COOKIE_SIZE) return;
        off = VRPN_COOKIE_SIZE;
        c->cookie = true;
    }
    for (;;) {
        size_t ws;
        struct vrpn_msg m;
        if (vrpn_stream_check(c->in + off, c->inlen - off, &ws, NULL) != 1 ||
            vrpn_msg_parse(c->in + off, c->inlen - off, &m, NULL))
            break;
        struct vrpn_system_msg sm;
        if (m.hdr.type < 0 && vrpn_system_decode(&m, &sm, NULL) == 0) {
            if (sm.type == VRPN_TYPE_DESCRIPTION && !strcmp(sm.name, VRPN_TYPE_PING))
                c->ping_type = sm.id;
            if (sm.type == VRPN_UDP_DESCRIPTION) {
                struct sockaddr_in to = loopback(sm.udp_port);
                if (inet_pton(AF_INET, sm.name, &to.sin_addr) == 1) {
                    c->udp_to = to;
                    c->udp_ok = g->ufd >= 0;
                }
            }
        } else if (m.hdr.type >= 0 && m.hdr.type == c->ping_type) {
            uint8_t pong[VRPN_HEADER_SIZE];
            struct xg_writer w;
            xg_writer_init(&w, pong, sizeof pong);
            struct vrpn_header h = {.sender = 0, .type = 1};
            vrpn_header_set_wall_ns(&h, wall_ns());
            if (vrpn_encode_message(&w, &h, &g->seq, NULL, 0, NULL) == 0)
                write_all(c->fd, pong, w.len);
        }
        off += ws;
    }
    if (off == 0 && c->inlen == sizeof c->in) { /* one message larger than our buffer */
        gen_drop(g, i);
        return;
    }
    memmove(c->in, c->in + off, c->inlen - off);
    c->inlen -= off;
}

/* A UDP+TCP connection request "<host> <port>": call the client back. */
static void gen_lob(struct gen *g)
{
    uint8_t buf[256];
    ssize_t n = recv(g->ufd, buf, sizeof buf, MSG_DONTWAIT);
    struct vrpn_lob lob;
    if (n <= 0 || vrpn_lob_decode(buf, (size_t)n, &lob, NULL)) return;
    for (int i = 0; i < g->n; i++) { /* requests are repeated until the call-back arrives */
        struct sockaddr_in peer;
        socklen_t sl = sizeof peer;
        if (!getpeername(g->c[i].fd, (struct sockaddr *)&peer, &sl) &&
            ntohs(peer.sin_port) == lob.tcp_port)
            return;
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in to = loopback(lob.tcp_port);
    if (fd < 0 || inet_pton(AF_INET, lob.host, &to.sin_addr) != 1 ||
        connect(fd, (struct sockaddr *)&to, sizeof to)) {
        if (fd >= 0) close(fd);
        return;
    }
    gen_add(g, fd, lob.tcp_port == atomic_load(&direct_port));
}

static void gen_accept(struct gen *g)
{
    struct sockaddr_in peer;
    socklen_t sl = sizeof peer;
    int fd = accept(g->lfd, (struct sockaddr *)&peer, &sl);
    if (fd < 0) return;
    gen_add(g, fd, ntohs(peer.sin_port) == atomic_load(&direct_port));
}

/* Frame k to every streaming connection of the path being fed. */
static void gen_frame(struct gen *g, int64_t k, bool direct)
{
    static uint8_t buf[MAX_SENSORS * 96];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    struct vrpn_header h = {.sender = 0, .type = 0};
    vrpn_header_set_wall_ns(&h, wall_ns() - (bench_now_ns() - sched_ns(k)));
    size_t msg_len = 0;
    for (int s = 0; s < sensors; s++) {
        struct vrpn_body b = {.kind = VRPN_BODY_POS_QUAT};
        b.u.pos_quat =
            (struct vrpn_pos_quat){.sensor = s,
                                   .pos = {(double)(s + 1), (double)(k % KMOD) * 1e-3, 0},
                                   .quat = {0, 0, 0, 1}};
        if (vrpn_encode_body_message(&w, &h, &g->seq, &b, NULL)) die("vrpn encode");
        if (!msg_len) msg_len = w.len;
    }
    for (int i = 0; i < g->n; i++) {
        struct gconn *c = &g->c[i];
        if (c->direct != direct || !c->cookie) continue;
        if (!udp_mode) {
            write_all(c->fd, buf, w.len);
            continue;
        }
        if (!c->udp_ok) continue;
        for (size_t off = 0; off < w.len; off += PER_DGRAM * msg_len) {
            size_t len = w.len - off < PER_DGRAM * msg_len ? w.len - off : PER_DGRAM * msg_len;
            sendto(g->ufd, buf + off, len, 0, (struct sockaddr *)&c->udp_to, sizeof c->udp_to);
        }
    }
}

static void *gen_main(void *arg)
{
    struct gen *g = arg;
    prctl(PR_SET_TIMERSLACK, 1000UL); /* wake at the frame's time, not up to 50 µs later */
    int64_t k = frame_at(bench_now_ns()) + 1;
    while (!atomic_load(&stopping)) {
        int64_t now = bench_now_ns();
        if (now >= sched_ns(k)) {
            if (now - sched_ns(k) > (int64_t)(50 * period_ns))
                k = frame_at(now); /* stalled for > 50 frames: resume on schedule */
            int ph = atomic_load(&phase);
            if (ph != PH_IDLE) {
                if (now - sched_ns(k) > (int64_t)period_ns) atomic_fetch_add(&late_frames, 1);
                gen_frame(g, k, ph == PH_DIRECT);
            }
            k++;
            continue;
        }
        struct pollfd pf[2 + MAX_GCONNS];
        int n = 0, nc = g->n;
        pf[n++] = (struct pollfd){g->lfd, POLLIN, 0};
        pf[n++] = (struct pollfd){g->ufd, POLLIN, 0};
        for (int i = 0; i < g->n; i++)
            pf[n++] = (struct pollfd){g->c[i].fd, POLLIN, 0};
        int64_t wait = sched_ns(k) - now;
        struct timespec ts = {wait / 1000000000, wait % 1000000000};
        if (ppoll(pf, (nfds_t)n, &ts, NULL) <= 0) continue;
        /* connections first, from the end (gen_read may drop one, moving the last into its
         * place), then new ones */
        for (int i = nc - 1; i >= 0; i--)
            if (pf[2 + i].revents & (POLLIN | POLLHUP | POLLERR)) gen_read(g, i);
        if (pf[0].revents & POLLIN) gen_accept(g);
        if (g->ufd >= 0 && (pf[1].revents & POLLIN)) gen_lob(g);
    }
    return NULL;
}

/* ---- reader ---- */

struct rconn {
    int fd, lfd, ufd; /* TCP stream; UDP+TCP: the call-back listener and the data socket */
    int which;        /* W_RELAY or W_DIRECT */
    bool cookie;
    int32_t pq_type;
    uint8_t *buf;
    size_t len, cap;
};

struct reader {
    struct rconn c[2];
    int64_t last_k[2][MAX_SENSORS];
    bool measuring[2];
    int64_t k_lo[2], k_hi[2]; /* the frames of the path's current block */
    double *lat[2];
    size_t n[2], cap;
    uint64_t reports[2], unmatched[2], repeats[2];
};

static void rec(struct reader *r, int which, int s, double y, int64_t now)
{
    if (s < 0 || s >= sensors || !isfinite(y)) {
        r->unmatched[which]++;
        return;
    }
    r->reports[which]++;
    int64_t km = lround(y * 1000.0), k_now = frame_at(now);
    if (km < 0 || km >= KMOD) {
        r->unmatched[which]++;
        return;
    }
    int64_t k = k_now - (((k_now - km) % KMOD) + KMOD) % KMOD; /* newest k <= k_now of that class */
    if (k <= r->last_k[which][s]) {
        r->repeats[which]++;
        return;
    }
    r->last_k[which][s] = k;
    if (r->measuring[which] && k >= r->k_lo[which] && k < r->k_hi[which] && r->n[which] < r->cap)
        r->lat[which][r->n[which]++] = (double)(now - sched_ns(k)) / 1000.0;
}

static void on_msg(struct reader *r, struct rconn *c, const struct vrpn_msg *m, int64_t now)
{
    if (m->hdr.type == VRPN_TYPE_DESCRIPTION) {
        struct vrpn_system_msg sm;
        if (vrpn_system_decode(m, &sm, NULL) == 0 && !strcmp(sm.name, VRPN_TYPE_POS_QUAT))
            c->pq_type = sm.id;
    } else if (m->hdr.type >= 0 && m->hdr.type == c->pq_type) {
        struct vrpn_body b;
        if (vrpn_body_decode(VRPN_BODY_POS_QUAT, m->body, m->body_len, &b, NULL) == 0)
            rec(r, c->which, b.u.pos_quat.sensor, b.u.pos_quat.pos.y, now);
    }
}

static void read_tcp(struct reader *r, struct rconn *c)
{
    for (;;) {
        if (c->cap - c->len < 65536) {
            c->cap *= 2;
            c->buf = realloc(c->buf, c->cap);
            if (!c->buf) die("realloc");
        }
        ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
        if (n == 0) {
            errno = ECONNRESET;
            die(c->which == W_RELAY ? "vrpn-server closed the connection"
                                    : "the generator closed the connection");
        }
        if (n < 0) return;
        int64_t now = bench_now_ns();
        c->len += (size_t)n;
        size_t off = 0;
        struct xg_error err = {0};
        if (!c->cookie) {
            if (c->len < VRPN_COOKIE_SIZE) continue;
            if (vrpn_cookie_decode(c->buf, c->len, NULL, &err)) {
                fprintf(stderr, "bench_relay: cookie: %s\n", err.msg);
                exit(1);
            }
            off = VRPN_COOKIE_SIZE;
            c->cookie = true;
        }
        for (;;) {
            size_t ws;
            int rc = vrpn_stream_check(c->buf + off, c->len - off, &ws, &err);
            if (rc < 0) {
                fprintf(stderr, "bench_relay: vrpn stream: %s\n", err.msg);
                exit(1);
            }
            if (rc == 0) break;
            struct vrpn_msg m;
            if (vrpn_msg_parse(c->buf + off, c->len - off, &m, &err) == 0) on_msg(r, c, &m, now);
            off += ws;
        }
        memmove(c->buf, c->buf + off, c->len - off);
        c->len -= off;
    }
}

static void read_udp(struct reader *r, struct rconn *c)
{
    static uint8_t dg[65536];
    for (;;) {
        ssize_t n = recv(c->ufd, dg, sizeof dg, MSG_DONTWAIT);
        if (n <= 0) return;
        int64_t now = bench_now_ns();
        size_t off = 0;
        struct vrpn_msg m;
        while (vrpn_datagram_next(dg, (size_t)n, &off, &m, NULL) == 1)
            on_msg(r, c, &m, now);
    }
}

static void send_cookie(struct rconn *c)
{
    uint8_t buf[256];
    struct xg_writer w;
    xg_writer_init(&w, buf, sizeof buf);
    vrpn_cookie_encode(&w, 0, NULL);
    if (c->ufd >= 0) {
        struct vrpn_header h = {0};
        vrpn_header_set_wall_ns(&h, wall_ns());
        uint32_t seq = 0;
        vrpn_encode_udp_description(&w, &h, &seq, (uint16_t)local_port(c->ufd), "127.0.0.1", NULL);
    }
    write_all(c->fd, buf, w.len);
}

/* Connect to a VRPN server on 127.0.0.1:port, TCP-only or UDP+TCP (connection request over UDP
 * to the same port, the server calls back our listener). */
static void rconn_open(struct rconn *c, int which, int port)
{
    memset(c, 0, sizeof *c);
    c->which = which;
    c->pq_type = -1;
    c->fd = c->lfd = c->ufd = -1;
    c->cap = 1 << 20;
    c->buf = malloc(c->cap);
    if (!c->buf) die("malloc");
    struct sockaddr_in any = loopback(0), srv = loopback(port);
    int64_t end = bench_now_ns() + 15 * INT64_C(1000000000);
    if (!udp_mode) {
        for (;;) {
            c->fd = socket(AF_INET, SOCK_STREAM, 0);
            if (c->fd < 0 || bind(c->fd, (struct sockaddr *)&any, sizeof any)) die("bind");
            if (which == W_DIRECT) atomic_store(&direct_port, local_port(c->fd));
            if (!connect(c->fd, (struct sockaddr *)&srv, sizeof srv)) break;
            close(c->fd);
            if (bench_now_ns() > end) die("connect");
            usleep(50000);
        }
    } else {
        c->lfd = socket(AF_INET, SOCK_STREAM, 0);
        c->ufd = socket(AF_INET, SOCK_DGRAM, 0);
        if (c->lfd < 0 || c->ufd < 0 || bind(c->lfd, (struct sockaddr *)&any, sizeof any) ||
            listen(c->lfd, 2) || bind(c->ufd, (struct sockaddr *)&any, sizeof any))
            die("udp+tcp client sockets");
        int big = 4 << 20;
        setsockopt(c->ufd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
        if (which == W_DIRECT) atomic_store(&direct_port, local_port(c->lfd));
        uint8_t lob[64];
        struct xg_writer w;
        xg_writer_init(&w, lob, sizeof lob);
        if (vrpn_lob_encode(&w, "127.0.0.1", (uint16_t)local_port(c->lfd), NULL)) die("lob");
        while (c->fd < 0) {
            sendto(c->ufd, lob, w.len, 0, (struct sockaddr *)&srv, sizeof srv);
            struct pollfd pf = {c->lfd, POLLIN, 0};
            if (poll(&pf, 1, 500) == 1) c->fd = accept(c->lfd, NULL, NULL);
            if (c->fd < 0 && bench_now_ns() > end) {
                errno = ETIMEDOUT;
                die("no call-back from the VRPN server");
            }
        }
    }
    set_nodelay(c->fd);
    send_cookie(c);
}

/* Read whatever arrives until mono time `until`. */
static void run_until(struct reader *r, int64_t until)
{
    for (;;) {
        int64_t now = bench_now_ns();
        if (now >= until) return;
        struct pollfd pf[4];
        int n = 0;
        for (int i = 0; i < 2; i++) {
            pf[n++] = (struct pollfd){r->c[i].fd, POLLIN, 0};
            pf[n++] = (struct pollfd){r->c[i].ufd, POLLIN, 0};
        }
        int64_t wait = until - now;
        struct timespec ts = {wait / 1000000000, wait % 1000000000};
        if (ppoll(pf, (nfds_t)n, &ts, NULL) <= 0) continue;
        for (int i = 0; i < 2; i++) {
            if (pf[2 * i].revents) read_tcp(r, &r->c[i]);
            if (r->c[i].ufd >= 0 && pf[2 * i + 1].revents) read_udp(r, &r->c[i]);
        }
    }
}

/* ---- CPU of the gateway ---- */

/* utime + stime of all threads (clock ticks) and the main thread's ns on CPU. */
static void proc_cpu(int pid, double *stat_s, double *sched_s)
{
    char path[64], buf[1024];
    *stat_s = *sched_s = NAN;
    if (pid <= 0) return;
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        char *p = strrchr(buf, ')');
        unsigned long ut = 0, st = 0;
        if (p &&
            sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
            *stat_s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
    }
    snprintf(path, sizeof path, "/proc/%d/schedstat", pid);
    f = fopen(path, "r");
    if (f) {
        unsigned long long ns = 0;
        if (fscanf(f, "%llu", &ns) == 1) *sched_s = (double)ns / 1e9;
        fclose(f);
    }
}

/* ---- four-egress mode: the other egress streams are read (rgmp) or subscribed (less) ---- */

struct drain {
    int rgmp_fd, less_fd;
    int64_t less_type, less_ts;
    uint8_t less_known[LESS_MAX_EID];
    uint8_t *lbuf;
    size_t llen, lcap;
    uint64_t rgmp_bytes, less_msgs;
};

static const struct less_schema *less_type_cb(void *user, int64_t typeid)
{
    (void)user;
    (void)typeid;
    return less_pose_schema(); /* the only type either side introduces */
}

static int less_entity_cb(void *user, int64_t eid, int64_t *typeid)
{
    struct drain *d = user;
    if (eid < 0 || eid >= LESS_MAX_EID || !d->less_known[eid]) return -1;
    *typeid = d->less_type;
    return 0;
}

static void less_send(struct drain *d, const struct less_msg *msgs, size_t n)
{
    static uint8_t mbuf[4096], fbuf[4200];
    const struct less_context ctx = {
        less_type_cb, less_type_cb, less_entity_cb, less_entity_cb, NULL, NULL, d};
    static const struct less_key none = {.len = 0};
    struct xg_writer w, fw;
    xg_writer_init(&w, mbuf, sizeof mbuf);
    for (size_t i = 0; i < n; i++)
        if (less_encode_msg(&w, &ctx, &msgs[i], NULL)) die("less encode");
    int64_t ts = bench_now_ns() / 1000;
    d->less_ts = ts > d->less_ts ? ts : d->less_ts + 1;
    xg_writer_init(&fw, fbuf, sizeof fbuf);
    if (less_tcp_encode(&fw, &none, d->less_ts, n, mbuf, w.len, NULL)) die("less frame");
    write_all(d->less_fd, fbuf, fw.len);
}

/* connection-control and our pose type (the handshake a LESS peer opens with) */
static void less_hello(struct drain *d)
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
    less_send(d, m, 2);
}

static void less_on_msg(struct drain *d, const struct less_msg *m)
{
    d->less_msgs++;
    if (m->code == LESS_MSG_INTRODUCE_TYPE &&
        m->u.introduce_type.uri_len == strlen(LESS_POSE_URI) &&
        !memcmp(m->u.introduce_type.uri, LESS_POSE_URI, strlen(LESS_POSE_URI))) {
        static const int64_t props[LESS_POSE_N_PROPS] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
        struct less_comp_subscription cs = {{1, {0}}, props, LESS_POSE_N_PROPS};
        struct less_msg s = {.code = LESS_MSG_SUBSCRIBE_TYPE};
        d->less_type = m->u.introduce_type.typeid;
        s.u.subscribe_type.typeid = d->less_type;
        s.u.subscribe_type.components = &cs;
        s.u.subscribe_type.count = 1;
        less_send(d, &s, 1);
    } else if (m->code == LESS_MSG_INTRODUCE_ENTITY) {
        int64_t eid = m->u.introduce_entity.entity_id;
        if (eid >= 0 && eid < LESS_MAX_EID) d->less_known[eid] = 1;
    }
}

static void drain_less(struct drain *d)
{
    static uint8_t arena_buf[1 << 16];
    const struct less_context ctx = {
        less_type_cb, less_type_cb, less_entity_cb, less_entity_cb, NULL, NULL, d};
    static const struct less_key none = {.len = 0};
    for (;;) {
        if (d->lcap - d->llen < 65536) {
            d->lcap *= 2;
            d->lbuf = realloc(d->lbuf, d->lcap);
            if (!d->lbuf) die("realloc");
        }
        ssize_t n = recv(d->less_fd, d->lbuf + d->llen, d->lcap - d->llen, MSG_DONTWAIT);
        if (n == 0) {
            errno = ECONNRESET;
            die("less peer closed the connection");
        }
        if (n < 0) return;
        d->llen += (size_t)n;
        size_t off = 0;
        for (;;) {
            size_t flen;
            struct xg_error err = {0};
            int rc = less_tcp_split(d->lbuf + off, d->llen - off, 1 << 24, &flen, &err);
            if (rc == 0) break;
            struct less_frame f;
            if (rc < 0 || less_tcp_decode(d->lbuf + off, flen, &none, &f, &err)) {
                fprintf(stderr, "bench_relay: less: %s\n", err.msg);
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
                    fprintf(stderr, "bench_relay: less: %s\n", err.msg);
                    exit(1);
                }
                if (rc == 0) break;
                less_on_msg(d, &m);
            }
            off += flen;
        }
        memmove(d->lbuf, d->lbuf + off, d->llen - off);
        d->llen -= off;
    }
}

static void *drain_main(void *arg)
{
    struct drain *d = arg;
    static uint8_t sink[1 << 16];
    while (!atomic_load(&stopping)) {
        struct pollfd pf[2] = {{d->rgmp_fd, POLLIN, 0}, {d->less_fd, POLLIN, 0}};
        if (poll(pf, 2, 100) <= 0) continue;
        if (pf[0].revents) {
            ssize_t n = recv(d->rgmp_fd, sink, sizeof sink, MSG_DONTWAIT);
            if (n == 0) {
                errno = ECONNRESET;
                die("rgmp-server closed the connection");
            }
            if (n > 0) d->rgmp_bytes += (uint64_t)n;
        }
        if (pf[1].revents) drain_less(d);
    }
    return NULL;
}

static int tcp_connect(int port)
{
    struct sockaddr_in sa = loopback(port);
    int64_t end = bench_now_ns() + 10 * INT64_C(1000000000);
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) die("socket");
        if (!connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
            set_nodelay(fd);
            return fd;
        }
        close(fd);
        if (bench_now_ns() > end) die("connect");
        usleep(50000);
    }
}

/* ---- main ---- */

static void quantiles(double *v, size_t n, double q5[5])
{
    static const double qs[5] = {0.5, 0.9, 0.99, 0.999, 1.0};
    qsort(v, n, sizeof *v, bench_cmp_double);
    for (int q = 0; q < 5; q++)
        q5[q] = n ? bench_quantile_sorted(v, n, qs[q]) : NAN;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_relay --gen-tcp-fd FD [--gen-udp-fd FD --udp] --relay-port PORT "
                    "[--pid P] [--rgmp PORT --less PORT] [--sensors N] [--rate HZ] [--reps N] "
                    "[--ms M] [--idle-ms M]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int reps = 3, ms = 1000, idle_ms = 1500, pid = 0, relay_port = 0, rgmp = 0, less = 0;
    struct gen g = {.lfd = -1, .ufd = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--udp")) {
            udp_mode = true;
            continue;
        }
        if (i + 1 >= argc) usage();
        int v = atoi(argv[++i]);
        if (!strcmp(a, "--gen-tcp-fd"))
            g.lfd = v;
        else if (!strcmp(a, "--gen-udp-fd"))
            g.ufd = v;
        else if (!strcmp(a, "--relay-port"))
            relay_port = v;
        else if (!strcmp(a, "--pid"))
            pid = v;
        else if (!strcmp(a, "--rgmp"))
            rgmp = v;
        else if (!strcmp(a, "--less"))
            less = v;
        else if (!strcmp(a, "--sensors"))
            sensors = v;
        else if (!strcmp(a, "--rate"))
            rate = atof(argv[i]);
        else if (!strcmp(a, "--reps"))
            reps = v;
        else if (!strcmp(a, "--ms"))
            ms = v;
        else if (!strcmp(a, "--idle-ms"))
            idle_ms = v;
        else
            usage();
    }
    if (g.lfd < 0 || !relay_port || reps < 1 || ms < 50 || idle_ms < 0 || sensors < 1 ||
        sensors > MAX_SENSORS || rate <= 0 || (udp_mode && g.ufd < 0) || (!rgmp != !less))
        usage();
    if (!BENCH_HAVE_VRPN || (less && !BENCH_HAVE_LESS)) {
        fprintf(stderr, "bench_relay: an adapter folder these options need is not built\n");
        return 2;
    }
    if (!udp_mode && g.ufd >= 0) { /* TCP-only: the UDP socket only held the number */
        close(g.ufd);
        g.ufd = -1;
    }
    period_ns = 1e9 / rate;
    T0 = bench_now_ns();

    pthread_t gth, dth;
    if (pthread_create(&gth, NULL, gen_main, &g)) die("pthread_create");
    static struct reader r;
    r.cap = (size_t)((double)(ms + BLOCK_MS) / 1000.0 * rate * sensors) + 1024;
    r.lat[0] = malloc(r.cap * sizeof(double));
    r.lat[1] = malloc(r.cap * sizeof(double));
    if (!r.lat[0] || !r.lat[1]) die("malloc");
    for (int w = 0; w < 2; w++)
        for (int s = 0; s < MAX_SENSORS; s++)
            r.last_k[w][s] = INT64_MIN;
    rconn_open(&r.c[W_RELAY], W_RELAY, relay_port);
    rconn_open(&r.c[W_DIRECT], W_DIRECT, local_port(g.lfd));
    static struct drain d = {.rgmp_fd = -1, .less_fd = -1, .less_type = -1};
    if (rgmp) {
        d.rgmp_fd = tcp_connect(rgmp);
        d.less_fd = tcp_connect(less);
        d.lcap = 1 << 20;
        d.lbuf = malloc(d.lcap);
        if (!d.lbuf) die("malloc");
        less_hello(&d);
        if (pthread_create(&dth, NULL, drain_main, &d)) die("pthread_create");
    }
    /* warm-up: the relay path streams (entities created, sensors numbered, descriptions sent) */
    atomic_store(&phase, PH_RELAY);
    int64_t end = bench_now_ns() + 15 * INT64_C(1000000000);
    while (r.reports[W_RELAY] < (uint64_t)sensors * 20) {
        if (bench_now_ns() > end) {
            errno = ETIMEDOUT;
            die("no reports through the relay");
        }
        run_until(&r, bench_now_ns() + 50 * INT64_C(1000000));
    }
    run_until(&r, bench_now_ns() + 500 * INT64_C(1000000));

    static const char *qn[5] = {"p50", "p90", "p99", "p999", "max"};
    size_t nr = (size_t)reps, npool[2] = {0, 0};
    double *pool[2]; /* every repetition's samples per path, for the pooled quantiles */
    for (int w = 0; w < 2; w++)
        if (!(pool[w] = malloc(r.cap * nr * sizeof(double)))) die("malloc");
    double *q[2], *added = calloc(5 * nr, sizeof(double)), *deliv[2],
                  *cpu = calloc(nr, sizeof(double)), *cpu_upd = calloc(nr, sizeof(double)),
                  *idle_stat = calloc(nr, sizeof(double)), *idle_sched = calloc(nr, sizeof(double));
    for (int w = 0; w < 2; w++) {
        q[w] = calloc(5 * nr, sizeof(double));
        deliv[w] = calloc(nr, sizeof(double));
        if (!q[w] || !deliv[w]) die("calloc");
    }
    if (!added || !cpu || !cpu_upd || !idle_stat || !idle_sched) die("calloc");
    double idle_stat_sum = 0, idle_sched_sum = 0, idle_secs = 0;
    int nblk = ms / BLOCK_MS > 0 ? ms / BLOCK_MS : 1;
    int64_t blk_frames = (int64_t)((double)BLOCK_MS / 1000.0 * rate);
    for (int rep = 0; rep < reps; rep++) {
        double frames[2] = {0, 0}, cpu_s = 0;
        r.n[0] = r.n[1] = 0;
        for (int b = 0; b < 2 * nblk; b++) { /* relay and direct blocks alternate */
            int w = ((b + rep) & 1) ? W_DIRECT : W_RELAY;
            atomic_store(&phase, w == W_RELAY ? PH_RELAY : PH_DIRECT);
            r.k_lo[w] = frame_at(bench_now_ns()) + 2; /* the next frame may be on its way */
            r.k_hi[w] = r.k_lo[w] + blk_frames;
            r.measuring[w] = true;
            run_until(&r, sched_ns(r.k_lo[w]));
            double s0, c0, s1, c1;
            proc_cpu(pid, &s0, &c0);
            run_until(&r, sched_ns(r.k_hi[w]));
            proc_cpu(pid, &s1, &c1);
            frames[w] += (double)blk_frames;
            if (w == W_RELAY) cpu_s += isfinite(c1 - c0) ? c1 - c0 : s1 - s0;
        }
        run_until(&r, bench_now_ns() + GRACE_MS * INT64_C(1000000));
        r.measuring[W_RELAY] = r.measuring[W_DIRECT] = false;
        for (int w = 0; w < 2; w++) {
            double q5[5];
            memcpy(pool[w] + npool[w], r.lat[w], r.n[w] * sizeof(double));
            npool[w] += r.n[w];
            quantiles(r.lat[w], r.n[w], q5);
            for (int k = 0; k < 5; k++)
                q[w][(size_t)k * nr + (size_t)rep] = q5[k];
            deliv[w][rep] = (double)r.n[w] / (frames[w] * sensors);
            fprintf(stderr, "relay: rep %d %s: %zu samples, p50 %.0f us, p99 %.0f us\n", rep,
                    w == W_RELAY ? "relay " : "direct", r.n[w], q5[0], q5[2]);
        }
        cpu[rep] = 100.0 * cpu_s / (frames[W_RELAY] * period_ns / 1e9);
        cpu_upd[rep] = cpu_s * 1e6 / (frames[W_RELAY] * sensors);
        for (int k = 0; k < 5; k++)
            added[(size_t)k * nr + (size_t)rep] = q[W_RELAY][(size_t)k * nr + (size_t)rep] -
                                                  q[W_DIRECT][(size_t)k * nr + (size_t)rep];
        /* idle: no frames, every connection open */
        atomic_store(&phase, PH_IDLE);
        run_until(&r, bench_now_ns() + 200 * INT64_C(1000000));
        double s0, c0, s1, c1;
        int64_t t0 = bench_now_ns();
        proc_cpu(pid, &s0, &c0);
        run_until(&r, t0 + (int64_t)idle_ms * 1000000);
        proc_cpu(pid, &s1, &c1);
        double secs = (double)(bench_now_ns() - t0) / 1e9;
        idle_stat[rep] = 100.0 * (s1 - s0) / secs;
        idle_sched[rep] = 100.0 * (c1 - c0) / secs;
        idle_stat_sum += s1 - s0;
        idle_sched_sum += c1 - c0;
        idle_secs += secs;
    }
    atomic_store(&stopping, true);
    pthread_join(gth, NULL);
    if (rgmp) pthread_join(dth, NULL);

    struct bench_json j = {.first = {true}};
    bench_json_open(&j, NULL);
    bench_json_str(&j, "transport", udp_mode ? "udp" : "tcp");
    bench_json_num(&j, "sensors", sensors);
    bench_json_num(&j, "rate_hz", rate);
    bench_json_num(&j, "reps", reps);
    bench_json_num(&j, "ms_per_path", ms);
    const char *wn[2] = {"relay_us", "direct_us"};
    for (int w = 0; w < 2; w++) {
        bench_json_open(&j, wn[w]);
        for (int k = 0; k < 5; k++)
            bench_json_arr(&j, qn[k], q[w] + (size_t)k * nr, reps);
        bench_json_arr(&j, "delivered_ratio", deliv[w], reps);
        bench_json_num(&j, "repeats", (double)r.repeats[w]);
        bench_json_num(&j, "unmatched", (double)r.unmatched[w]);
        bench_json_close(&j);
    }
    bench_json_open(&j, "added_us");
    for (int k = 0; k < 5; k++)
        bench_json_arr(&j, qn[k], added + (size_t)k * nr, reps);
    bench_json_close(&j);
    /* the samples of all repetitions pooled per path: one stall of the machine moves a pooled
     * p99 less than the p99 of the one repetition it fell in */
    double pq[2][5];
    for (int w = 0; w < 2; w++)
        quantiles(pool[w], npool[w], pq[w]);
    bench_json_open(&j, "pooled_us");
    const char *pn[3] = {"relay", "direct", "added"};
    for (int w = 0; w < 3; w++) {
        bench_json_open(&j, pn[w]);
        for (int k = 0; k < 5; k++)
            bench_json_num(&j, qn[k], w < 2 ? pq[w][k] : pq[W_RELAY][k] - pq[W_DIRECT][k]);
        bench_json_close(&j);
    }
    bench_json_close(&j);
    bench_json_arr(&j, "gateway_cpu_percent", cpu, reps);
    bench_json_arr(&j, "gateway_cpu_us_per_update", cpu_upd, reps);
    bench_json_arr(&j, "idle_cpu_percent", idle_stat, reps);
    bench_json_arr(&j, "idle_cpu_percent_main_thread", idle_sched, reps);
    bench_json_num(&j, "idle_cpu_percent_pooled", 100.0 * idle_stat_sum / idle_secs);
    bench_json_num(&j, "idle_cpu_percent_main_thread_pooled", 100.0 * idle_sched_sum / idle_secs);
    bench_json_num(&j, "idle_window_s", (double)idle_ms / 1000.0);
    bench_json_num(&j, "generator_late_frames", (double)atomic_load(&late_frames));
    if (rgmp) {
        bench_json_num(&j, "rgmp_bytes_read", (double)d.rgmp_bytes);
        bench_json_num(&j, "less_messages_read", (double)d.less_msgs);
    }
    bench_json_close(&j);
    for (int w = 0; w < 2; w++) {
        free(q[w]);
        free(pool[w]);
        free(deliv[w]);
        free(r.lat[w]);
        free(r.c[w].buf);
    }
    free(added);
    free(cpu);
    free(cpu_upd);
    free(idle_stat);
    free(idle_sched);
    free(d.lbuf);
    return 0;
}
