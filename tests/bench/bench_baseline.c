/* Baseline: what this machine's loopback can do, measured in the same run as everything else.
 *
 * 1. UDP packets/s through send -> receive on ONE thread (one core): a non-blocking socket pair
 *    on 127.0.0.1, the thread sends a batch of 16 datagrams with send() and then reads them back
 *    with recv(), so every packet costs one send syscall and one receive syscall on the same core
 *    — the per-packet work a single-threaded forwarder does (one receive in, one send out).
 *    A second variant batches both sides with sendmmsg()/recvmmsg() (16 per call).
 *    Sizes are the datagram/frame sizes of our protocols: 88 B (VRPN Pos_Quat message), 136 B
 *    (RGMP data frame with 4 FLOAT[7] streams), 400 B (game-state head + two Hand2 in one RTP
 *    packet), 1424 B (RGMP data frame with 50 streams).
 * 2. UDP and TCP (TCP_NODELAY) ping-pong round-trip time, 64-byte messages, between TWO threads
 *    of this process (an echo thread and the timing thread), so both cores take part.
 * 3. Thread hand-off: what passing work to a second thread costs when that thread sleeps
 *    between items, as an egress thread behind a reactor would: the timing thread wakes every
 *    500 µs (nanosleep), notes the time and writes an eventfd; the other thread, blocked in
 *    read() on it, notes when it runs. p50/p99 of write -> running (µs).
 *
 * Output: one JSON object (see bench_util.h); per repetition values in arrays. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/bench/bench_util.h"

#define BATCH 16

static const int sizes[] = {88, 136, 400, 1424};
#define N_SIZES ((int)(sizeof sizes / sizeof sizes[0]))

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static int udp_socket_bound(struct sockaddr_in *addr)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) die("socket");
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa)) die("bind");
    socklen_t sl = sizeof sa;
    if (getsockname(fd, (struct sockaddr *)&sa, &sl)) die("getsockname");
    int buf = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    if (addr) *addr = sa;
    return fd;
}

/* One repetition of the single-thread UDP loop; returns packets/s received. */
static double udp_pps_once(int size, int ms, bool mmsg)
{
    struct sockaddr_in ra;
    int rx = udp_socket_bound(&ra), tx = udp_socket_bound(NULL);
    if (connect(tx, (struct sockaddr *)&ra, sizeof ra)) die("connect");
    static uint8_t out[BATCH][2048], in[BATCH][2048];
    memset(out, 0xA5, sizeof out);
    struct iovec iov_out[BATCH], iov_in[BATCH];
    struct mmsghdr mo[BATCH], mi[BATCH];
    for (int i = 0; i < BATCH; i++) {
        iov_out[i] = (struct iovec){out[i], (size_t)size};
        iov_in[i] = (struct iovec){in[i], sizeof in[i]};
        mo[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov_out[i], .msg_iovlen = 1}};
        mi[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov_in[i], .msg_iovlen = 1}};
    }
    uint64_t received = 0;
    int64_t t0 = bench_now_ns(), end = t0 + (int64_t)ms * 1000000, t1;
    do {
        int sent = 0;
        if (mmsg) {
            int n = sendmmsg(tx, mo, BATCH, 0);
            if (n > 0) sent = n;
        } else {
            for (int i = 0; i < BATCH; i++)
                if (send(tx, out[i], (size_t)size, 0) == size) sent++;
        }
        int got = 0;
        while (got < sent) {
            if (mmsg) {
                int n = recvmmsg(rx, mi, BATCH, MSG_DONTWAIT, NULL);
                if (n <= 0) break;
                got += n;
            } else {
                ssize_t n = recv(rx, in[0], sizeof in[0], MSG_DONTWAIT);
                if (n <= 0) break;
                got++;
            }
        }
        received += (uint64_t)got;
        t1 = bench_now_ns();
    } while (t1 < end);
    close(rx);
    close(tx);
    return (double)received * 1e9 / (double)(t1 - t0);
}

/* ---- ping-pong ---- */

struct echo {
    int fd;
    bool tcp;
};

static void *echo_main(void *arg)
{
    struct echo *e = arg;
    uint8_t buf[256];
    for (;;) {
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t n = e->tcp ? recv(e->fd, buf, 64, MSG_WAITALL)
                           : recvfrom(e->fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
        if (n <= 0) break;
        if (buf[0] == 0xFF) break; /* stop */
        if (e->tcp) {
            if (send(e->fd, buf, (size_t)n, 0) != n) break;
        } else {
            sendto(e->fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
        }
    }
    return NULL;
}

/* One repetition: ping-pong for ms; fills p50/p99 (µs) of the round trips. */
static void rtt_once(bool tcp, int ms, double *p50, double *p99)
{
    int cli, srv;
    if (tcp) {
        int lfd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) || listen(lfd, 1)) die("tcp listen");
        socklen_t sl = sizeof sa;
        getsockname(lfd, (struct sockaddr *)&sa, &sl);
        cli = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(cli, (struct sockaddr *)&sa, sizeof sa)) die("tcp connect");
        srv = accept(lfd, NULL, NULL);
        if (srv < 0) die("accept");
        close(lfd);
        int one = 1;
        setsockopt(cli, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        setsockopt(srv, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    } else {
        struct sockaddr_in sa;
        srv = udp_socket_bound(&sa);
        cli = udp_socket_bound(NULL);
        if (connect(cli, (struct sockaddr *)&sa, sizeof sa)) die("udp connect");
    }
    struct echo e = {srv, tcp};
    pthread_t th;
    if (pthread_create(&th, NULL, echo_main, &e)) die("pthread_create");
    size_t cap = 1 << 20, n = 0;
    double *rtt = malloc(cap * sizeof *rtt);
    if (!rtt) die("malloc");
    uint8_t msg[64] = {0}, back[64];
    int64_t end = bench_now_ns() + (int64_t)ms * 1000000, t;
    do {
        int64_t t0 = bench_now_ns();
        if (send(cli, msg, sizeof msg, 0) != (ssize_t)sizeof msg) die("send");
        if (recv(cli, back, sizeof back, MSG_WAITALL) != (ssize_t)sizeof back) die("recv");
        t = bench_now_ns();
        if (n < cap) rtt[n++] = (double)(t - t0) / 1000.0;
    } while (t < end);
    msg[0] = 0xFF;
    send(cli, msg, sizeof msg, 0);
    pthread_join(th, NULL);
    close(cli);
    close(srv);
    qsort(rtt, n, sizeof *rtt, bench_cmp_double);
    *p50 = bench_quantile_sorted(rtt, n, 0.5);
    *p99 = bench_quantile_sorted(rtt, n, 0.99);
    free(rtt);
}

struct wake {
    int efd;
    _Atomic int64_t t0; /* when the item was handed over; < 0: stop */
    double *lat;
    size_t n, cap;
};

static void *wake_main(void *arg)
{
    struct wake *w = arg;
    uint64_t v;
    while (read(w->efd, &v, sizeof v) == (ssize_t)sizeof v) {
        int64_t t = bench_now_ns(), t0 = atomic_load(&w->t0);
        if (t0 < 0) break;
        if (w->n < w->cap) w->lat[w->n++] = (double)(t - t0) / 1000.0;
    }
    return NULL;
}

/* One repetition of the hand-off for ms; p50/p99 (µs) of eventfd write -> woken thread runs. */
static void wake_once(int ms, double *p50, double *p99)
{
    struct wake w = {.efd = eventfd(0, 0), .cap = (size_t)ms * 2 + 16};
    w.lat = malloc(w.cap * sizeof *w.lat);
    if (w.efd < 0 || !w.lat) die("eventfd");
    pthread_t th;
    if (pthread_create(&th, NULL, wake_main, &w)) die("pthread_create");
    int64_t end = bench_now_ns() + (int64_t)ms * 1000000;
    const struct timespec gap = {0, 500000};
    uint64_t one = 1;
    while (bench_now_ns() < end) {
        nanosleep(&gap, NULL);
        atomic_store(&w.t0, bench_now_ns());
        if (write(w.efd, &one, sizeof one) != (ssize_t)sizeof one) die("eventfd write");
    }
    atomic_store(&w.t0, -1);
    if (write(w.efd, &one, sizeof one) != (ssize_t)sizeof one) die("eventfd write");
    pthread_join(th, NULL);
    close(w.efd);
    qsort(w.lat, w.n, sizeof *w.lat, bench_cmp_double);
    *p50 = bench_quantile_sorted(w.lat, w.n, 0.5);
    *p99 = bench_quantile_sorted(w.lat, w.n, 0.99);
    free(w.lat);
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    bench_parse(argc, argv, &o);
    int n_sizes = o.quick ? 1 : N_SIZES;
    double *v = calloc((size_t)o.reps, sizeof *v), *w = calloc((size_t)o.reps, sizeof *w);
    if (!v || !w) die("calloc");
    struct bench_json j = {.first = {true}};
    bench_json_open(&j, NULL);
    bench_json_str(&j, "udp_pps_mode", "one thread: send batch of 16 then recv them, 127.0.0.1");
    bench_json_str(&j, "rtt_mode", "two threads (echo thread + timing thread), 64-byte messages");
    for (int m = 0; m < 2; m++) {
        bench_json_open(&j, m ? "udp_pps_mmsg" : "udp_pps");
        for (int s = 0; s < n_sizes; s++) {
            for (int r = 0; r < o.reps; r++)
                v[r] = udp_pps_once(sizes[s], o.ms, m == 1);
            char key[16];
            snprintf(key, sizeof key, "%d", sizes[s]);
            bench_json_arr(&j, key, v, o.reps);
            fprintf(stderr, "baseline: udp%s %d B done\n", m ? " mmsg" : "", sizes[s]);
        }
        bench_json_close(&j);
    }
    for (int tcp = 0; tcp < 2; tcp++) {
        for (int r = 0; r < o.reps; r++)
            rtt_once(tcp == 1, o.ms, &v[r], &w[r]);
        bench_json_open(&j, tcp ? "tcp_rtt_us" : "udp_rtt_us");
        bench_json_arr(&j, "p50", v, o.reps);
        bench_json_arr(&j, "p99", w, o.reps);
        bench_json_close(&j);
        fprintf(stderr, "baseline: %s rtt done\n", tcp ? "tcp" : "udp");
    }
    for (int r = 0; r < o.reps; r++)
        wake_once(o.ms, &v[r], &w[r]);
    bench_json_open(&j, "thread_wake_us");
    bench_json_arr(&j, "p50", v, o.reps);
    bench_json_arr(&j, "p99", w, o.reps);
    bench_json_close(&j);
    bench_json_close(&j);
    free(v);
    free(w);
    return 0;
}
