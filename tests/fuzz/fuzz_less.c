/* libFuzzer target for the LESS codec.
 *
 * Build (not built by CMake yet), from the repository root:
 *   clang -g -fsanitize=fuzzer,address,undefined -I. tests/fuzz/fuzz_less.c \
 *       adapters/less/less_codec.c adapters/less/less_msg.c adapters/less/less_frame.c \
 *       adapters/less/less_pose.c \
 *       core/[a-z]*.c \
 *       -lmbedcrypto -levent_core -lm
 * (core/ pulls libevent symbols; the LESS codec itself needs only mbedcrypto.)
 * The first input byte picks a mode: TCP frames (splitter + decode + messages), a UDP datagram,
 * a bare message stream, a standalone variant, or the ack window. Whatever decodes is encoded
 * again, decoded again and encoded a third time: the two encodings must be identical (the
 * encoder is canonical, so the input itself may differ from them). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/less/less_codec.h"

static const struct less_type list_str = {LESS_T_LIST, 0, &less_type_string};

/* An interaction declaring every kind of value, so context-dependent decoding of all types is
 * exercised through messages too. */
static const struct less_property all_props[] = {
    {"null", {LESS_T_NULL, 0, NULL}},          {"oid", {LESS_T_OBJECT_ID, 0, NULL}},
    {"int", {LESS_T_INTEGER, 0, NULL}},        {"str", {LESS_T_STRING, 0, NULL}},
    {"f16", {LESS_T_FLOAT16, 0, NULL}},        {"f32", {LESS_T_FLOAT32, 0, NULL}},
    {"f64", {LESS_T_FLOAT64, 0, NULL}},        {"list", {LESS_T_LIST, 0, &less_type_integer}},
    {"listlist", {LESS_T_LIST, 0, &list_str}}, {"vec", {LESS_T_VECTOR, 2, &less_type_float64}},
    {"variant", {LESS_T_VARIANT, 0, NULL}},    {"varbin", {LESS_T_VARBIN, 0, NULL}},
    {"fixed", {LESS_T_FIXEDBIN, 3, NULL}},     {"uuid", {LESS_T_UUID, 0, NULL}},
};
static const struct less_component interactions[] = {
    {"all", all_props, sizeof all_props / sizeof all_props[0]}};
static const struct less_schema interaction_schema = {"urn:fuzz:all:1", NULL, 0, interactions, 1};

static const struct less_schema *f_type(void *u, int64_t id)
{
    (void)u;
    return id == 1 ? less_pose_schema() : NULL;
}

static int f_entity(void *u, int64_t id, int64_t *type)
{
    (void)u;
    *type = 1;
    return id >= 0 && id < 16 ? 0 : -1;
}

static const struct less_context ctx = {f_type, f_type, f_entity, f_entity, &interaction_schema,
                                        NULL,   NULL};

static uint8_t arena1[1 << 18], arena2[1 << 18];

/* Decode one message from r; if it decodes, check the encode/decode/encode fixpoint. */
static int check_msg(struct xg_reader *r)
{
    struct less_arena a1, a2;
    struct less_msg m1, m2;
    less_arena_init(&a1, arena1, sizeof arena1);
    size_t start = r->off;
    if (less_decode_msg(r, &ctx, &a1, &m1, NULL) != 0) return -1;
    size_t in_len = r->off - start;
    if (m1.code == LESS_MSG_INTRODUCE_ENTITY || m1.code == LESS_MSG_UPDATE_ENTITY) {
        const struct less_comp_values_list *cl = m1.code == LESS_MSG_INTRODUCE_ENTITY
                                                     ? &m1.u.introduce_entity.components
                                                     : &m1.u.update_entity.components;
        struct less_pose pose = {0};
        for (size_t i = 0; i < cl->count; i++)
            if (less_pose_from_props(&cl->items[i].props, &pose, NULL) == 0) {
                struct less_pose_props pp;
                less_pose_to_props(&pose, LESS_POSE_ALL, &pp);
                if (pp.list.count > LESS_POSE_N_PROPS) abort();
            }
    }
    size_t cap = 2 * in_len + 64;
    uint8_t *e1 = malloc(cap), *e2 = malloc(cap);
    struct xg_writer w;
    xg_writer_init(&w, e1, cap);
    if (less_encode_msg(&w, &ctx, &m1, NULL) != 0) abort(); /* anything decoded must encode */
    size_t n1 = w.len;
    if (n1 > in_len) abort(); /* canonical encoding is never longer than what was read */
    struct xg_reader r2;
    xg_reader_init(&r2, e1, n1);
    less_arena_init(&a2, arena2, sizeof arena2);
    if (less_decode_msg(&r2, &ctx, &a2, &m2, NULL) != 0 || r2.off != n1) abort();
    xg_writer_init(&w, e2, cap);
    if (less_encode_msg(&w, &ctx, &m2, NULL) != 0 || w.len != n1 || memcmp(e1, e2, n1) != 0)
        abort();
    free(e1);
    free(e2);
    return 0;
}

static void check_frame_messages(const struct less_frame *f)
{
    struct xg_reader r;
    xg_reader_init(&r, f->messages, f->messages_len);
    for (uint64_t i = 0; i < f->message_count; i++)
        if (check_msg(&r) != 0) return;
}

static void fuzz_variant(const uint8_t *data, size_t size)
{
    struct less_arena a;
    struct less_value v;
    struct xg_reader r;
    less_arena_init(&a, arena1, sizeof arena1);
    xg_reader_init(&r, data, size);
    if (less_get_variant(&r, &a, &v, NULL) != 0) return;
    size_t cap = 2 * size + 64;
    uint8_t *e1 = malloc(cap), *e2 = malloc(cap);
    struct xg_writer w;
    xg_writer_init(&w, e1, cap);
    if (less_put_variant(&w, &v, NULL) != 0) abort();
    size_t n1 = w.len;
    struct less_arena a2;
    less_arena_init(&a2, arena2, sizeof arena2);
    xg_reader_init(&r, e1, n1);
    if (less_get_variant(&r, &a2, &v, NULL) != 0 || r.off != n1) abort();
    xg_writer_init(&w, e2, cap);
    if (less_put_variant(&w, &v, NULL) != 0 || w.len != n1 || memcmp(e1, e2, n1) != 0) abort();
    free(e1);
    free(e2);
}

static void fuzz_ack(const uint8_t *data, size_t size)
{
    struct less_ack_window w;
    less_ack_init(&w, size ? data[0] : 0);
    for (size_t i = 1; i < size; i++) {
        enum less_ack_result res = less_ack_record(&w, data[i]);
        uint8_t last;
        uint64_t mask;
        less_ack_fields(&w, &last, &mask);
        if (res != LESS_ACK_TOO_OLD && !less_ack_covers(last, mask, data[i])) abort();
        if (res == LESS_ACK_NEW && less_ack_record(&w, data[i]) != LESS_ACK_DUPLICATE) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct less_key key;
    if (key.len == 0) {
        key.len = 16; /* fixed test key; signatures mostly fail, so also try signature: none */
        for (int i = 0; i < 16; i++)
            key.bytes[i] = (uint8_t)i;
    }
    if (size < 1) return 0;
    uint8_t mode = data[0] % 5;
    data++;
    size--;
    /* exact-size copy so that ASan sees any over-read */
    uint8_t *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    struct less_frame f;
    switch (mode) {
    case 0: { /* TCP stream: split into frames, decode each with signature: none */
        size_t off = 0, fl;
        while (off < size && less_tcp_split(buf + off, size - off, 4096, &fl, NULL) == 1) {
            if (fl == 0 || fl > size - off) abort();
            if (less_tcp_decode(buf + off, fl, NULL, &f, NULL) == 0) check_frame_messages(&f);
            less_tcp_decode(buf + off, fl, &key, &f, NULL);
            off += fl;
        }
        break;
    }
    case 1: /* UDP datagram */
        if (less_udp_decode(buf, size, LESS_UDP_DEFAULT_MTU, NULL, &f, NULL) == 0) {
            check_frame_messages(&f);
            /* re-frame: identical bytes when the input framing was canonical */
            uint8_t out[LESS_UDP_DEFAULT_MTU + 32];
            struct xg_writer w;
            xg_writer_init(&w, out, sizeof out);
            if (less_udp_encode(&w, NULL, f.seq, f.ack_last, f.ack_bitmask, f.timestamp,
                                f.message_count, f.messages, f.messages_len, NULL) != 0)
                abort();
            struct less_frame g;
            if (less_udp_decode(out, w.len, sizeof out, NULL, &g, NULL) != 0 || g.seq != f.seq ||
                g.ack_last != f.ack_last || g.ack_bitmask != f.ack_bitmask ||
                g.timestamp != f.timestamp || g.message_count != f.message_count ||
                g.messages_len != f.messages_len)
                abort();
        }
        less_udp_decode(buf, size, LESS_UDP_DEFAULT_MTU, &key, &f, NULL);
        break;
    case 2: { /* bare messages */
        struct xg_reader r;
        xg_reader_init(&r, buf, size);
        while (xg_reader_left(&r) && check_msg(&r) == 0) {}
        break;
    }
    case 3:
        fuzz_variant(buf, size);
        break;
    default:
        fuzz_ack(buf, size);
        break;
    }
    free(buf);
    return 0;
}
