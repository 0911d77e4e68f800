/* An independent ROS 2-style DDS peer for the dds adapter's integration tests: written against
 * Cyclone DDS's C API and the ROS 2 message types only (no xrgate code). Driven line by line on
 * stdin, it answers JSON lines on stdout:
 *
 *   qos reliable|best_effort                 QoS of the endpoints created after it
 *   sub tf | sub pose TOPIC | sub twist TOPIC   print every sample received ({"ev":"tf",...})
 *   tf PARENT CHILD x y z qx qy qz qw SEC NSEC [PARENT CHILD ...]   one TFMessage on rt/tf
 *   pose TOPIC FRAME x y z qx qy qz qw SEC NSEC   one PoseStamped (FRAME "-" = empty)
 *   wait_match TOPIC MS                      wait until our writer on TOPIC has a reader
 *   bench_pub N HZ SECONDS   load: one TFMessage of N transforms (world → b0..bN-1) HZ times a
 *                            second; transform k of message i is (i, k, send time) — the send
 *                            time as wall-clock seconds modulo 1e6 — answers {"ev":"bench_pub"}
 *   bench_sub SECONDS        receive rt/tf for SECONDS at most (until 1 s without data once
 *                            data came): per transform, latency = receive time −
 *                            the send time in translation.z; distinct (x, y) pairs; answers
 *                            {"ev":"bench_sub","received","unique","lat_us":{p50,...,max}}
 *   quit
 *
 * SEC -1 stamps with the current wall-clock time. Every discovered publication of another
 * participant is printed as {"ev":"publication","topic":...,"type":...} (the DCPSPublication
 * built-in topic: the type name as it is on the wire). Usage: dds_peer DOMAIN_ID; the network
 * comes from CYCLONEDDS_URI. With DDS_PEER_ENCLAVE=DIR (an SROS2 enclave: identity_ca.cert.pem,
 * cert.pem, key.pem, permissions_ca.cert.pem, governance.p7s, permissions.p7s) the participant
 * uses DDS Security through its QoS properties (Cyclone's dds.sec.* names), as a ROS 2 node with
 * ROS_SECURITY_ENABLE=true does; DDS_PEER_PLUGINS=DIR names the folder of Cyclone's security
 * plugins (default: the loader's search path). */
#include <dds/dds.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "geometry_msgs/msg/PoseStamped.h"
#include "geometry_msgs/msg/TwistStamped.h"
#include "tf2_msgs/msg/TFMessage.h"

#define MAX_ENDPOINTS 32
#define BATCH 64

enum kind { K_TF, K_POSE, K_TWIST };

struct endpoint {
    enum kind kind;
    char topic[260];
    dds_entity_t t, r, w;
};

static dds_entity_t pp, pubs_reader;
static struct endpoint eps[MAX_ENDPOINTS];
static int n_eps;
static bool reliable;
static dds_guid_t own_pp;

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void json_str(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void guid_hex(const dds_guid_t *g, char out[33])
{
    for (int i = 0; i < 16; i++)
        sprintf(out + 2 * i, "%02x", g->v[i]);
}

static dds_qos_t *qos(bool writer)
{
    dds_qos_t *q = dds_create_qos();
    dds_qset_reliability(q, reliable ? DDS_RELIABILITY_RELIABLE : DDS_RELIABILITY_BEST_EFFORT,
                         DDS_MSECS(100));
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, writer ? 10 : 1000);
    dds_qset_durability(q, DDS_DURABILITY_VOLATILE);
    return q;
}

static const dds_topic_descriptor_t *desc_of(enum kind k)
{
    return k == K_TF     ? &tf2_msgs_msg_dds__TFMessage__desc
           : k == K_POSE ? &geometry_msgs_msg_dds__PoseStamped__desc
                         : &geometry_msgs_msg_dds__TwistStamped__desc;
}

static struct endpoint *endpoint(enum kind k, const char *topic, bool writer)
{
    struct endpoint *e = NULL;
    for (int i = 0; i < n_eps; i++)
        if (!strcmp(eps[i].topic, topic)) e = &eps[i];
    if (!e) {
        if (n_eps == MAX_ENDPOINTS) return NULL;
        e = &eps[n_eps++];
        e->kind = k;
        snprintf(e->topic, sizeof e->topic, "%s", topic);
        e->t = dds_create_topic(pp, desc_of(k), topic, NULL, NULL);
        if (e->t < 0) {
            fprintf(stderr, "dds_peer: topic %s: %s\n", topic, dds_strretcode(e->t));
            exit(1);
        }
    }
    dds_entity_t *x = writer ? &e->w : &e->r;
    if (!*x) {
        dds_qos_t *q = qos(writer);
        *x = writer ? dds_create_writer(pp, e->t, q, NULL) : dds_create_reader(pp, e->t, q, NULL);
        dds_delete_qos(q);
        if (*x < 0) {
            fprintf(stderr, "dds_peer: endpoint on %s: %s\n", topic, dds_strretcode(*x));
            exit(1);
        }
    }
    return e;
}

static void print_vec(const char *key, double x, double y, double z)
{
    printf(",\"%s\":[%.17g,%.17g,%.17g]", key, x, y, z);
}

static void print_header(const struct std_msgs_msg_dds__Header_ *h, const dds_sample_info_t *si)
{
    printf(",\"frame_id\":");
    json_str(h->frame_id_);
    printf(",\"sec\":%" PRId32 ",\"nsec\":%" PRIu32 ",\"rx_wall_ns\":%" PRId64 ",\"pub\":%" PRIu64,
           h->stamp_.sec_, h->stamp_.nanosec_, wall_ns(), (uint64_t)si->publication_handle);
}

static void poll_readers(void)
{
    void *buf[BATCH];
    dds_sample_info_t si[BATCH];
    for (int i = 0; i < n_eps; i++) {
        struct endpoint *e = &eps[i];
        if (!e->r) continue;
        for (;;) {
            memset(buf, 0, sizeof buf);
            dds_return_t n = dds_take(e->r, buf, si, BATCH, BATCH);
            if (n <= 0) break;
            for (int j = 0; j < n; j++) {
                if (!si[j].valid_data) continue;
                if (e->kind == K_TF) {
                    const tf2_msgs_msg_dds__TFMessage_ *m = buf[j];
                    for (uint32_t k = 0; k < m->transforms_._length; k++) {
                        const struct geometry_msgs_msg_dds__TransformStamped_ *t =
                            &m->transforms_._buffer[k];
                        printf("{\"ev\":\"tf\",\"n\":%" PRIu32 ",\"child\":",
                               m->transforms_._length);
                        json_str(t->child_frame_id_);
                        print_header(&t->header_, &si[j]);
                        const struct geometry_msgs_msg_dds__Transform_ *x = &t->transform_;
                        print_vec("t", x->translation_.x_, x->translation_.y_, x->translation_.z_);
                        printf(",\"r\":[%.17g,%.17g,%.17g,%.17g]}\n", x->rotation_.x_,
                               x->rotation_.y_, x->rotation_.z_, x->rotation_.w_);
                    }
                } else if (e->kind == K_POSE) {
                    const geometry_msgs_msg_dds__PoseStamped_ *m = buf[j];
                    printf("{\"ev\":\"pose\",\"topic\":");
                    json_str(e->topic);
                    print_header(&m->header_, &si[j]);
                    const struct geometry_msgs_msg_dds__Pose_ *p = &m->pose_;
                    print_vec("p", p->position_.x_, p->position_.y_, p->position_.z_);
                    printf(",\"q\":[%.17g,%.17g,%.17g,%.17g]}\n", p->orientation_.x_,
                           p->orientation_.y_, p->orientation_.z_, p->orientation_.w_);
                } else {
                    const geometry_msgs_msg_dds__TwistStamped_ *m = buf[j];
                    printf("{\"ev\":\"twist\",\"topic\":");
                    json_str(e->topic);
                    print_header(&m->header_, &si[j]);
                    const struct geometry_msgs_msg_dds__Twist_ *t = &m->twist_;
                    print_vec("lin", t->linear_.x_, t->linear_.y_, t->linear_.z_);
                    print_vec("ang", t->angular_.x_, t->angular_.y_, t->angular_.z_);
                    printf("}\n");
                }
            }
            dds_return_loan(e->r, buf, n);
        }
    }
    dds_builtintopic_endpoint_t *ep[BATCH];
    for (;;) {
        memset(ep, 0, sizeof ep);
        dds_return_t n = dds_take(pubs_reader, (void **)ep, si, BATCH, BATCH);
        if (n <= 0) break;
        for (int j = 0; j < n; j++) {
            if (!si[j].valid_data || !memcmp(&ep[j]->participant_key, &own_pp, sizeof own_pp))
                continue;
            dds_reliability_kind_t rk = DDS_RELIABILITY_BEST_EFFORT;
            dds_duration_t mbt;
            dds_qget_reliability(ep[j]->qos, &rk, &mbt);
            char g[33];
            guid_hex(&ep[j]->participant_key, g);
            printf("{\"ev\":\"publication\",\"topic\":");
            json_str(ep[j]->topic_name);
            printf(",\"type\":");
            json_str(ep[j]->type_name);
            printf(",\"reliable\":%s,\"participant\":\"%s\"}\n",
                   rk == DDS_RELIABILITY_RELIABLE ? "true" : "false", g);
        }
        dds_return_loan(pubs_reader, (void **)ep, n);
    }
    fflush(stdout);
}

static void stamp(struct std_msgs_msg_dds__Header_ *h, long sec, long nsec)
{
    if (sec == -1) {
        int64_t now = wall_ns();
        h->stamp_.sec_ = (int32_t)(now / 1000000000);
        h->stamp_.nanosec_ = (uint32_t)(now % 1000000000);
    } else {
        h->stamp_.sec_ = (int32_t)sec;
        h->stamp_.nanosec_ = (uint32_t)nsec;
    }
}

/* ---- load (make bench) ---- */

#define BENCH_MOD_NS INT64_C(1000000000000000) /* 1e6 s: send times stay below XG position max */

static void bench_pub(int n, double hz, double secs)
{
    struct endpoint *e = endpoint(K_TF, "rt/tf", true);
    struct geometry_msgs_msg_dds__TransformStamped_ *ts = calloc((size_t)n, sizeof *ts);
    char(*names)[16] = calloc((size_t)n, sizeof *names);
    if (!ts || !names) exit(1);
    int64_t t0 = wall_ns(), period = (int64_t)(1e9 / hz);
    long msgs = (long)(secs * hz), sent = 0, failed = 0;
    for (long i = 0; i < msgs; i++) {
        int64_t due = t0 + i * period;
        while (wall_ns() < due)
            dds_sleepfor(DDS_USECS(50));
        int64_t now = wall_ns();
        for (int k = 0; k < n; k++) {
            snprintf(names[k], sizeof names[k], "b%d", k);
            ts[k].header_.frame_id_ = "world";
            ts[k].header_.stamp_.sec_ = (int32_t)(now / 1000000000);
            ts[k].header_.stamp_.nanosec_ = (uint32_t)(now % 1000000000);
            ts[k].child_frame_id_ = names[k];
            ts[k].transform_.translation_.x_ = (double)i;
            ts[k].transform_.translation_.y_ = (double)k;
            ts[k].transform_.translation_.z_ = (double)(now % BENCH_MOD_NS) * 1e-9;
            ts[k].transform_.rotation_.w_ = 1.0;
        }
        tf2_msgs_msg_dds__TFMessage_ m = {.transforms_ = {(uint32_t)n, (uint32_t)n, ts, false}};
        if (dds_write(e->w, &m) < 0)
            failed++;
        else
            sent++;
    }
    printf("{\"ev\":\"bench_pub\",\"messages\":%ld,\"failed\":%ld,\"transforms\":%d}\n", sent,
           failed, n);
    free(ts);
    free(names);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void bench_sub(double secs)
{
    struct endpoint *e = endpoint(K_TF, "rt/tf", false);
    size_t cap = 1 << 20, n = 0, received = 0;
    double *lat = malloc(cap * sizeof *lat);
    uint64_t *seen = calloc(1 << 22, sizeof *seen); /* bitmap of (x, y) pairs, x < 2^16 */
    if (!lat || !seen) exit(1);
    size_t unique = 0;
    int64_t end = wall_ns() + (int64_t)(secs * 1e9);
    void *buf[BATCH];
    dds_sample_info_t si[BATCH];
    int64_t last_rx = 0;
    while (wall_ns() < end) {
        memset(buf, 0, sizeof buf);
        dds_return_t got = dds_take(e->r, buf, si, BATCH, BATCH);
        if (got <= 0) {
            if (received && wall_ns() - last_rx > 1000000000) break; /* 1 s quiet: done */
            dds_sleepfor(DDS_USECS(100));
            continue;
        }
        int64_t rx = last_rx = wall_ns();
        for (int j = 0; j < got; j++) {
            if (!si[j].valid_data) continue;
            const tf2_msgs_msg_dds__TFMessage_ *m = buf[j];
            for (uint32_t k = 0; k < m->transforms_._length; k++) {
                const struct geometry_msgs_msg_dds__Vector3_ *t =
                    &m->transforms_._buffer[k].transform_.translation_;
                if (!(t->x_ >= 0 && t->x_ < 65536 && t->y_ >= 0 && t->y_ < 64)) continue;
                received++;
                double l = (double)(rx % BENCH_MOD_NS) * 1e-9 - t->z_;
                if (l < -1e5) l += 1e6; /* wrapped */
                if (n < cap) lat[n++] = l * 1e6;
                size_t bit = (size_t)t->x_ * 64 + (size_t)t->y_;
                if (!(seen[bit / 64] & (UINT64_C(1) << (bit % 64)))) {
                    seen[bit / 64] |= UINT64_C(1) << (bit % 64);
                    unique++;
                }
            }
        }
        dds_return_loan(e->r, buf, got);
    }
    qsort(lat, n, sizeof *lat, cmp_double);
#define PCT(p) (n ? lat[(size_t)((double)(n - 1) * (p))] : -1.0)
    printf("{\"ev\":\"bench_sub\",\"received\":%zu,\"unique\":%zu,\"lat_us\":{\"p50\":%.1f,"
           "\"p90\":%.1f,\"p99\":%.1f,\"p999\":%.1f,\"max\":%.1f}}\n",
           received, unique, PCT(0.5), PCT(0.9), PCT(0.99), PCT(0.999), n ? lat[n - 1] : -1.0);
#undef PCT
    free(lat);
    free(seen);
}

static int command(char *line)
{
    char *tok[1024];
    int n = 0;
    for (char *s = strtok(line, " \t\r\n"); s && n < 1024; s = strtok(NULL, " \t\r\n"))
        tok[n++] = s;
    if (!n) return 0;
    const char *cmd = tok[0];
    if (!strcmp(cmd, "quit")) return 1;
    if (!strcmp(cmd, "qos") && n == 2) {
        reliable = !strcmp(tok[1], "reliable");
    } else if (!strcmp(cmd, "sub") && n >= 2) {
        if (!strcmp(tok[1], "tf"))
            endpoint(K_TF, "rt/tf", false);
        else if (n == 3)
            endpoint(!strcmp(tok[1], "pose") ? K_POSE : K_TWIST, tok[2], false);
    } else if (!strcmp(cmd, "tf") && n >= 12 && (n - 1) % 11 == 0) {
        struct endpoint *e = endpoint(K_TF, "rt/tf", true);
        uint32_t k = (uint32_t)(n - 1) / 11;
        struct geometry_msgs_msg_dds__TransformStamped_ ts[93];
        if (k > 93) return 0;
        for (uint32_t i = 0; i < k; i++) {
            char **a = tok + 1 + 11 * i;
            ts[i].header_.frame_id_ = strcmp(a[0], "-") ? a[0] : "";
            ts[i].child_frame_id_ = strcmp(a[1], "-") ? a[1] : "";
            ts[i].transform_.translation_.x_ = strtod(a[2], NULL);
            ts[i].transform_.translation_.y_ = strtod(a[3], NULL);
            ts[i].transform_.translation_.z_ = strtod(a[4], NULL);
            ts[i].transform_.rotation_.x_ = strtod(a[5], NULL);
            ts[i].transform_.rotation_.y_ = strtod(a[6], NULL);
            ts[i].transform_.rotation_.z_ = strtod(a[7], NULL);
            ts[i].transform_.rotation_.w_ = strtod(a[8], NULL);
            stamp(&ts[i].header_, strtol(a[9], NULL, 10), strtol(a[10], NULL, 10));
        }
        tf2_msgs_msg_dds__TFMessage_ m = {.transforms_ = {k, k, ts, false}};
        dds_return_t r = dds_write(e->w, &m);
        if (r < 0) fprintf(stderr, "dds_peer: write rt/tf: %s\n", dds_strretcode(r));
    } else if (!strcmp(cmd, "pose") && n == 12) {
        struct endpoint *e = endpoint(K_POSE, tok[1], true);
        geometry_msgs_msg_dds__PoseStamped_ m;
        m.header_.frame_id_ = strcmp(tok[2], "-") ? tok[2] : "";
        m.pose_.position_.x_ = strtod(tok[3], NULL);
        m.pose_.position_.y_ = strtod(tok[4], NULL);
        m.pose_.position_.z_ = strtod(tok[5], NULL);
        m.pose_.orientation_.x_ = strtod(tok[6], NULL);
        m.pose_.orientation_.y_ = strtod(tok[7], NULL);
        m.pose_.orientation_.z_ = strtod(tok[8], NULL);
        m.pose_.orientation_.w_ = strtod(tok[9], NULL);
        stamp(&m.header_, strtol(tok[10], NULL, 10), strtol(tok[11], NULL, 10));
        dds_return_t r = dds_write(e->w, &m);
        if (r < 0) fprintf(stderr, "dds_peer: write %s: %s\n", tok[1], dds_strretcode(r));
    } else if (!strcmp(cmd, "bench_pub") && n == 4) {
        bench_pub(atoi(tok[1]), strtod(tok[2], NULL), strtod(tok[3], NULL));
    } else if (!strcmp(cmd, "bench_sub") && n == 2) {
        bench_sub(strtod(tok[1], NULL));
    } else if (!strcmp(cmd, "wait_match") && n == 3) {
        struct endpoint *e = NULL;
        for (int i = 0; i < n_eps; i++)
            if (!strcmp(eps[i].topic, tok[1]) && eps[i].w) e = &eps[i];
        dds_publication_matched_status_t st = {0};
        long ms = strtol(tok[2], NULL, 10);
        for (long waited = 0; e && waited <= ms; waited += 10) {
            dds_get_publication_matched_status(e->w, &st);
            if (st.current_count > 0) break;
            poll_readers();
            dds_sleepfor(DDS_MSECS(10));
        }
        printf("{\"ev\":\"matched\",\"topic\":");
        json_str(tok[1]);
        printf(",\"n\":%" PRIu32 "}\n", st.current_count);
    } else {
        printf("{\"ev\":\"error\",\"cmd\":");
        json_str(cmd);
        printf("}\n");
        fflush(stdout);
        return 0;
    }
    printf("{\"ev\":\"ok\",\"cmd\":");
    json_str(cmd);
    printf("}\n");
    fflush(stdout);
    return 0;
}

/* The participant QoS of DDS Security for the enclave `dir`. */
static dds_qos_t *security_qos(const char *dir)
{
    static const char *const plugins[][4] = {
        {"auth", "dds_security_auth", "init_authentication", "finalize_authentication"},
        {"access", "dds_security_ac", "init_access_control", "finalize_access_control"},
        {"crypto", "dds_security_crypto", "init_crypto", "finalize_crypto"},
    };
    static const char *const files[][2] = {
        {"dds.sec.auth.identity_ca", "identity_ca.cert.pem"},
        {"dds.sec.auth.identity_certificate", "cert.pem"},
        {"dds.sec.auth.private_key", "key.pem"},
        {"dds.sec.access.permissions_ca", "permissions_ca.cert.pem"},
        {"dds.sec.access.governance", "governance.p7s"},
        {"dds.sec.access.permissions", "permissions.p7s"},
    };
    const char *lib_dir = getenv("DDS_PEER_PLUGINS");
    dds_qos_t *q = dds_create_qos();
    char name[64], value[4200];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "dds.sec.%s.library.path", plugins[i][0]);
        if (lib_dir && *lib_dir)
            snprintf(value, sizeof value, "%s/lib%s.so", lib_dir, plugins[i][1]);
        else
            snprintf(value, sizeof value, "%s", plugins[i][1]);
        dds_qset_prop(q, name, value);
        snprintf(name, sizeof name, "dds.sec.%s.library.init", plugins[i][0]);
        dds_qset_prop(q, name, plugins[i][2]);
        snprintf(name, sizeof name, "dds.sec.%s.library.finalize", plugins[i][0]);
        dds_qset_prop(q, name, plugins[i][3]);
    }
    for (int i = 0; i < 6; i++) {
        snprintf(value, sizeof value, "file:%s/%s", dir, files[i][1]);
        dds_qset_prop(q, files[i][0], value);
    }
    return q;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: dds_peer DOMAIN_ID (commands on stdin)\n");
        return 2;
    }
    const char *enclave = getenv("DDS_PEER_ENCLAVE");
    dds_qos_t *pqos = enclave && *enclave ? security_qos(enclave) : NULL;
    pp = dds_create_participant((dds_domainid_t)atoi(argv[1]), pqos, NULL);
    if (pqos) dds_delete_qos(pqos);
    if (pp < 0) {
        fprintf(stderr, "dds_peer: participant: %s\n", dds_strretcode(pp));
        return 1;
    }
    dds_get_guid(pp, &own_pp);
    pubs_reader = dds_create_reader(pp, DDS_BUILTIN_TOPIC_DCPSPUBLICATION, NULL, NULL);
    char line[65536];
    size_t used = 0;
    for (;;) {
        struct pollfd pfd = {.fd = 0, .events = POLLIN};
        int r = poll(&pfd, 1, 5);
        poll_readers();
        if (r <= 0) continue;
        ssize_t got = read(0, line + used, sizeof line - 1 - used);
        if (got <= 0) break;
        used += (size_t)got;
        line[used] = '\0';
        char *nl;
        int quit = 0;
        while (!quit && (nl = strchr(line, '\n'))) {
            *nl = '\0';
            char one[65536];
            snprintf(one, sizeof one, "%s", line);
            size_t rest = used - (size_t)(nl + 1 - line);
            memmove(line, nl + 1, rest + 1);
            used = rest;
            quit = command(one);
        }
        if (quit || used == sizeof line - 1) break;
    }
    dds_delete(pp);
    return 0;
}
