/* libFuzzer target for the socket-free VRPN session (adapters/vrpn/vrpn_session.h).
 *
 * The input is a peer's TCP stream (seeds: the recorded mainline streams, which begin with the
 * cookie). It is fed to two sessions of the same role (client or server, by the input's size):
 * one gets it whole, the other in pieces of 1..8 bytes (also by the size). Both must end alike
 * (same return code, same bytes sent, same events and counters): reassembly may not depend on how
 * reads cut the stream. Then the input is also given to a streaming session as one UDP datagram.
 * Nothing may crash or leak (ASan), and after an error the session is IDLE and takes no more input.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/vrpn/vrpn_session.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_vrpn_session: check failed: %s (line %d)\n", #cond, __LINE__);   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

struct sink {
    uint8_t out[1 << 16];
    size_t out_len;
    uint64_t hash; /* of the events */
    int events;
};

static int s_send(void *ctx, const uint8_t *buf, size_t len)
{
    struct sink *k = ctx;
    for (size_t i = 0; i < len; i++) { /* keep the first 64 KiB, hash the rest */
        if (k->out_len < sizeof k->out) k->out[k->out_len] = buf[i];
        k->out_len++;
        k->hash = (k->hash ^ buf[i]) * 1099511628211u;
    }
    return 0;
}

static int s_event(void *ctx, const struct vrpn_event *ev)
{
    struct sink *k = ctx;
    k->events++;
    uint64_t v[4] = {(uint64_t)ev->kind, (uint64_t)(int64_t)ev->sender_local,
                     (uint64_t)(int64_t)ev->type_local,
                     ev->body ? (uint64_t)ev->body->kind : UINT64_C(99)};
    for (int i = 0; i < 4; i++)
        k->hash = (k->hash ^ v[i]) * 1099511628211u;
    if (ev->name) CHECK(strlen(ev->name) < VRPN_CNAME_MAX);
    if (ev->sender) CHECK(strlen(ev->sender) < VRPN_CNAME_MAX);
    return 0;
}

static int s_request(void *ctx, const uint8_t *buf, size_t len)
{
    (void)ctx;
    (void)buf;
    CHECK(len <= VRPN_LOB_MAX);
    return 0;
}

static const struct vrpn_session_ops OPS = {
    .send = s_send, .send_request = s_request, .event = s_event};

static void begin(struct vrpn_session *s, struct sink *k, enum vrpn_role role)
{
    memset(k, 0, sizeof *k);
    vrpn_session_init(s, role, &OPS, k, 1000000000);
    CHECK(vrpn_session_start(s, VRPN_MODE_TCP, 0) == 0);
    CHECK(vrpn_id_map_register(vrpn_session_ids(s), VRPN_ID_SENDER, "Tracker0", NULL) == 1);
    CHECK(vrpn_session_connected(s, 0) == 0);
}

static struct sink ka, kb, kc;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the size picks the role and the piece size, so that seeds are used as they are */
    enum vrpn_role role = (size / 8) % 2 ? VRPN_ROLE_SERVER : VRPN_ROLE_CLIENT;
    size_t piece = 1 + size % 8;
    static struct vrpn_session a, b, c;
    begin(&a, &ka, role);
    begin(&b, &kb, role);
    int ra = vrpn_session_feed(&a, data, size, 1000);
    int rb = 0;
    for (size_t off = 0; off < size && rb == 0; off += piece) {
        size_t n = size - off < piece ? size - off : piece;
        rb = vrpn_session_feed(&b, data + off, n, 1000);
    }
    CHECK(ra == rb);
    CHECK(ka.out_len == kb.out_len && ka.hash == kb.hash && ka.events == kb.events);
    CHECK(memcmp(&a.stats, &b.stats, sizeof a.stats) == 0);
    if (ra < 0) {
        CHECK(vrpn_session_state(&a) == VRPN_SESS_IDLE);
        CHECK(strcmp(a.error.msg, b.error.msg) == 0);
        CHECK(vrpn_session_feed(&a, data, size, 2000) == (size ? -EINVAL : 0));
    } else {
        int ea = vrpn_session_eof(&a), eb = vrpn_session_eof(&b);
        CHECK(ea == eb);
        CHECK(vrpn_session_tick(&a, 5000000000) == vrpn_session_tick(&b, 5000000000));
    }
    vrpn_session_free(&a);
    vrpn_session_free(&b);

    /* the same bytes as a datagram to a client past its handshake */
    memset(&kc, 0, sizeof kc);
    vrpn_session_init(&c, VRPN_ROLE_CLIENT, &OPS, &kc, 1000000000);
    CHECK(vrpn_session_start(&c, VRPN_MODE_UDP, 0) == 0);
    CHECK(vrpn_session_request(&c, "127.0.0.1", 40000, 0, NULL) == 0);
    CHECK(vrpn_session_connected(&c, 0) == 0);
    static const uint8_t cookie[VRPN_COOKIE_SIZE] = "vrpn: ver. 07.38  0";
    CHECK(vrpn_session_feed(&c, cookie, sizeof cookie, 0) == 0);
    int rc = vrpn_session_feed_datagram(&c, data, size, 1000);
    CHECK(rc <= 0);
    if (rc < 0) CHECK(vrpn_session_state(&c) == VRPN_SESS_IDLE);
    vrpn_session_free(&c);
    return 0;
}
