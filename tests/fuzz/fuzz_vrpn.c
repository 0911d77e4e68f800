/* libFuzzer target for adapters/vrpn/vrpn_codec.
 *
 * The input is used four ways: (1) as a TCP stream (cookie + messages) driven through the
 * splitter, the system-message decoder, a per-connection id map and the body decoders, as a
 * client of a mainline server would; (2) as one UDP datagram; (3) as a connection request;
 * (4) as a raw body of every kind. Whatever decodes is re-encoded, decoded again and re-encoded
 * once more: the two encodings must be identical, and must equal the input bytes except where
 * the wire allows freedom (padding, the tracker alignment word, the text tail after its NUL, the
 * sign of a zero analog count). Build from the repository root with every core .c file:
 *   clang -fsanitize=fuzzer,address -I. tests/fuzz/fuzz_vrpn.c adapters/vrpn/vrpn_codec.c \
 *         $(ls core/[a-z]*.c) -lm -levent_core
 * (-levent_core only because core/util/metrics.c renders into an evbuffer.) Seed corpus:
 * tests/vectors/vrpn/ and the recorded streams in tests/vectors/vrpn-recorded/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/vrpn/vrpn_codec.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_vrpn: check failed: %s (line %d)\n", #cond, __LINE__);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Re-encode a decoded body and check it against the original bytes and a second round. */
static void body_roundtrip(const struct vrpn_body *b, const uint8_t *orig, size_t len)
{
    static uint8_t e1[2048], e2[2048];
    static struct vrpn_body b2;
    struct xg_writer w1, w2;
    xg_writer_init(&w1, e1, sizeof e1);
    CHECK(vrpn_body_encode(&w1, b, NULL) == 0);
    struct xg_error err;
    if (vrpn_body_decode(b->kind, e1, w1.len, &b2, &err) != 0) {
        fprintf(stderr, "fuzz_vrpn: re-decode failed: %s\n", err.msg);
        abort();
    }
    xg_writer_init(&w2, e2, sizeof e2);
    CHECK(vrpn_body_encode(&w2, &b2, NULL) == 0);
    CHECK(w1.len == w2.len && memcmp(e1, e2, w1.len) == 0);

    switch (b->kind) {
    case VRPN_BODY_POS_QUAT:
    case VRPN_BODY_VELOCITY:
    case VRPN_BODY_ACCELERATION:
        CHECK(w1.len == len);
        CHECK(memcmp(e1, orig, 4) == 0);               /* sensor */
        CHECK(memcmp(e1 + 8, orig + 8, len - 8) == 0); /* bytes 4..7: alignment word */
        break;
    case VRPN_BODY_TEXT: {
        size_t n = 8 + strlen(b->u.text.text) + 1;
        CHECK(w1.len == VRPN_TEXT_PAYLOAD && n <= len);
        CHECK(memcmp(e1, orig, n) == 0);
        break;
    }
    case VRPN_BODY_ANALOG:
        CHECK(w1.len == len);
        CHECK(memcmp(e1 + 8, orig + 8, len - 8) == 0); /* count: -0.0 reads as 0 */
        break;
    default:
        CHECK(w1.len == len && memcmp(e1, orig, len) == 0);
        break;
    }
}

static void system_roundtrip(const struct vrpn_msg *m, const struct vrpn_system_msg *s)
{
    static uint8_t out[VRPN_MAX_MESSAGE];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    int rc;
    switch (s->type) {
    case VRPN_SENDER_DESCRIPTION:
    case VRPN_TYPE_DESCRIPTION:
        rc = vrpn_encode_description(&w, &m->hdr, NULL, s->type, s->id, s->name, NULL);
        break;
    case VRPN_UDP_DESCRIPTION:
        rc = vrpn_encode_udp_description(&w, &m->hdr, NULL, s->udp_port, s->name, NULL);
        break;
    case VRPN_LOG_DESCRIPTION:
        rc = vrpn_encode_log_description(&w, &m->hdr, NULL, s->log_mode, s->log_in_name,
                                         s->log_out_name, NULL);
        break;
    default:
        rc = vrpn_encode_disconnect(&w, &m->hdr, NULL, NULL);
        break;
    }
    CHECK(rc == 0);
    CHECK(w.len == vrpn_padded_size(m->hdr.length));
    CHECK(memcmp(out, m->body - VRPN_HEADER_SIZE, m->hdr.length) == 0);
}

static void handle_message(struct vrpn_id_map *map, const struct vrpn_msg *m)
{
    static struct vrpn_system_msg s;
    static struct vrpn_body b;
    struct xg_error err;
    if (m->hdr.type < 0) {
        if (vrpn_system_decode(m, &s, &err) != 0) return;
        system_roundtrip(m, &s);
        if (s.type == VRPN_SENDER_DESCRIPTION || s.type == VRPN_TYPE_DESCRIPTION) {
            enum vrpn_id_kind k = s.type == VRPN_SENDER_DESCRIPTION ? VRPN_ID_SENDER : VRPN_ID_TYPE;
            bool is_new;
            int local = vrpn_id_map_describe(map, k, s.id, s.name, &is_new, &err);
            if (local >= 0) {
                CHECK(vrpn_id_map_to_local(map, k, s.id, NULL) == local);
                CHECK(vrpn_id_map_to_remote(map, k, local) == s.id);
                CHECK(strcmp(vrpn_id_map_name(map, k, local), s.name) == 0);
            }
        }
        return;
    }
    int lt = vrpn_id_map_to_local(map, VRPN_ID_TYPE, m->hdr.type, &err);
    if (lt < 0) return; /* undescribed type: ignored, as mainline does */
    (void)vrpn_id_map_to_local(map, VRPN_ID_SENDER, m->hdr.sender, &err);
    enum vrpn_body_kind kind = vrpn_body_kind_of(vrpn_id_map_name(map, VRPN_ID_TYPE, lt));
    if (kind == VRPN_BODY_UNKNOWN) return;
    if (vrpn_body_decode(kind, m->body, m->body_len, &b, &err) == 0)
        body_roundtrip(&b, m->body, m->body_len);
}

static struct vrpn_id_map map;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct xg_error err;

    /* (1) a TCP stream: cookie then messages */
    vrpn_id_map_init(&map);
    /* names a client registers anyway, so that fuzzed descriptions hit known kinds */
    vrpn_id_map_register(&map, VRPN_ID_TYPE, VRPN_TYPE_POS_QUAT, NULL);
    if (size >= VRPN_COOKIE_SIZE && vrpn_cookie_decode(data, size, NULL, &err) == 0) {
        size_t off = VRPN_COOKIE_SIZE;
        for (;;) {
            size_t need;
            int rc = vrpn_stream_check(data + off, size - off, &need, &err);
            if (rc <= 0) break;
            CHECK(need <= size - off && need >= VRPN_HEADER_SIZE && need % VRPN_ALIGN == 0);
            struct vrpn_msg m;
            CHECK(vrpn_msg_parse(data + off, size - off, &m, &err) == 0);
            CHECK(m.wire_size == need);
            handle_message(&map, &m);
            off += need;
        }
    }

    /* (2) one UDP datagram, with the same id map */
    size_t off = 0;
    struct vrpn_msg m;
    while (vrpn_datagram_next(data, size, &off, &m, &err) == 1) {
        CHECK(off <= size);
        handle_message(&map, &m);
    }
    vrpn_id_map_free(&map);

    /* (3) a connection request */
    struct vrpn_lob lob;
    if (vrpn_lob_decode(data, size, &lob, &err) == 0) {
        uint8_t out[VRPN_LOB_MAX + 16];
        struct xg_writer w;
        xg_writer_init(&w, out, sizeof out);
        CHECK(vrpn_lob_encode(&w, lob.host, lob.tcp_port, NULL) == 0);
        struct vrpn_lob again;
        CHECK(vrpn_lob_decode(out, w.len, &again, NULL) == 0);
        CHECK(strcmp(again.host, lob.host) == 0 && again.tcp_port == lob.tcp_port);
        /* leading zeros in the port are the only accepted non-canonical form */
        const char *port = strchr((const char *)data, ' ') + 1;
        if (port[0] != '0') CHECK(w.len == size && memcmp(out, data, size) == 0);
    }

    /* (4) the input as a body of every kind */
    static struct vrpn_body b;
    for (int k = VRPN_BODY_POS_QUAT; k <= VRPN_BODY_TEXT; k++)
        if (vrpn_body_decode((enum vrpn_body_kind)k, data, size, &b, &err) == 0)
            body_roundtrip(&b, data, size);
    return 0;
}
