/* VRPN codec against the recorded mainline 07.38 sessions in tests/vectors/vrpn-recorded.
 *
 * Every TCP stream is fed to the splitter segment by segment (as recorded in the segments CSV),
 * every UDP datagram is split with the datagram iterator, and every message is checked against
 * its line in the *_decoded.txt listing: offset, header fields, sender/type names through the
 * per-direction id map, and every decoded body value. Each message is then re-encoded (with a
 * per-channel sequence counter starting at 0) and compared with the recorded bytes except the
 * padding (and the uninitialised tail of text bodies, §8.6). */
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

#include "tests/unit/test_util.h"

#include "adapters/vrpn/vrpn_codec.h"

#define FIX_DIR XG_VECTORS_DIR "/vrpn-recorded/"

/* ---- file helpers ---- */

static uint8_t *slurp(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s", FIX_DIR, name);
    return xg_test_read_file(path, len);
}

#define REQUIRE_FIXTURE(var, name, len)                                                            \
    uint8_t *var = slurp(name, &len);                                                              \
    if (!var) {                                                                                    \
        fail_msg("fixture %s%s absent", FIX_DIR, name);                                            \
    }

/* The decoded listing split into lines, with the index of each section's first line. */
struct listing {
    char *text;
    char **lines;
    size_t n;
};

static void listing_load(struct listing *l, char *text)
{
    l->text = text;
    l->n = 0;
    size_t cap = 1024;
    l->lines = malloc(cap * sizeof *l->lines);
    for (char *p = text; *p;) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = 0;
        if (l->n == cap) l->lines = realloc(l->lines, (cap *= 2) * sizeof *l->lines);
        l->lines[l->n++] = p;
        if (!nl) break;
        p = nl + 1;
    }
}

static void listing_free(struct listing *l)
{
    free(l->lines);
    free(l->text);
}

/* Lines of the section whose heading starts with `heading`, up to the next "##". */
static size_t section(const struct listing *l, const char *heading, size_t *end)
{
    for (size_t i = 0; i < l->n; i++)
        if (strncmp(l->lines[i], heading, strlen(heading)) == 0) {
            size_t j = i + 1;
            while (j < l->n && strncmp(l->lines[j], "##", 2) != 0)
                j++;
            *end = j;
            return i + 1;
        }
    fail_msg("section '%s' not in listing", heading);
    return 0;
}

/* Next message line ('@' after the optional time column) from *i, or NULL at end. */
static const char *next_msg_line(const struct listing *l, size_t *i, size_t end)
{
    while (*i < end) {
        const char *s = l->lines[(*i)++];
        const char *at = strchr(s, '@');
        const char *first = s + strspn(s, " ");
        if (at && (first == at || strncmp(first, "--", 2) != 0) && strstr(s, " len=")) return s;
    }
    return NULL;
}

struct segment {
    char transport[16];
    char direction[8];
    size_t offset, length;
};

static size_t load_segments(const char *name, const char *transport, const char *direction,
                            struct segment *out, size_t max)
{
    size_t len;
    uint8_t *csv = slurp(name, &len);
    assert_non_null(csv);
    size_t n = 0;
    char *save = NULL;
    for (char *line = strtok_r((char *)csv, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        struct segment s;
        double t;
        if (sscanf(line, "%lf,%15[^,],%7[^,],%zu,%zu", &t, s.transport, s.direction, &s.offset,
                   &s.length) != 5)
            continue;
        if (strcmp(s.transport, transport) || strcmp(s.direction, direction)) continue;
        assert_true(n < max);
        out[n++] = s;
    }
    free(csv);
    return n;
}

/* ---- checking one message against its listing line ---- */

struct dir_ctx {
    const char *label;       /* "session1_tcp s2c" */
    struct vrpn_id_map *map; /* the receiver's view of the sender's ids */
    uint32_t seq;            /* re-encode sequence counter of this channel */
    size_t count;            /* messages checked */
    size_t by_kind[16];      /* device messages by enum vrpn_body_kind */
    size_t system;           /* system messages */
};

static int extract_numbers(const char *s, double *out, int max)
{
    int n = 0;
    for (const char *p = s; *p;) {
        bool start = (*p >= '0' && *p <= '9') || (*p == '-' && p[1] >= '0' && p[1] <= '9');
        bool after_word =
            p > s && ((p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z') ||
                      (p[-1] >= '0' && p[-1] <= '9') || p[-1] == '_');
        if (start && !after_word) {
            char *e;
            double v = strtod(p, &e);
            if (n >= max) fail_msg("too many numbers in '%s'", s);
            out[n++] = v;
            p = e;
        } else {
            p++;
        }
    }
    return n;
}

static int body_numbers(const struct vrpn_body *b, size_t body_len, double *v)
{
    int n = 0;
    switch (b->kind) {
    case VRPN_BODY_POS_QUAT:
        v[n++] = b->u.pos_quat.sensor;
        v[n++] = b->u.pos_quat.filler;
        v[n++] = b->u.pos_quat.pos.x;
        v[n++] = b->u.pos_quat.pos.y;
        v[n++] = b->u.pos_quat.pos.z;
        v[n++] = b->u.pos_quat.quat.x;
        v[n++] = b->u.pos_quat.quat.y;
        v[n++] = b->u.pos_quat.quat.z;
        v[n++] = b->u.pos_quat.quat.w;
        break;
    case VRPN_BODY_VELOCITY:
    case VRPN_BODY_ACCELERATION:
        v[n++] = b->u.rate.sensor;
        v[n++] = b->u.rate.filler;
        v[n++] = b->u.rate.vec.x;
        v[n++] = b->u.rate.vec.y;
        v[n++] = b->u.rate.vec.z;
        v[n++] = b->u.rate.quat.x;
        v[n++] = b->u.rate.quat.y;
        v[n++] = b->u.rate.quat.z;
        v[n++] = b->u.rate.quat.w;
        v[n++] = b->u.rate.quat_dt;
        break;
    case VRPN_BODY_BUTTON_CHANGE:
        v[n++] = b->u.button.button;
        v[n++] = b->u.button.state;
        break;
    case VRPN_BODY_BUTTON_STATES:
        v[n++] = b->u.states.count;
        for (int i = 0; i < b->u.states.count; i++)
            v[n++] = b->u.states.states[i];
        break;
    case VRPN_BODY_ANALOG:
        v[n++] = b->u.analog.count;
        for (int i = 0; i < b->u.analog.count; i++)
            v[n++] = b->u.analog.channels[i];
        break;
    case VRPN_BODY_DIAL:
        v[n++] = b->u.dial.delta;
        v[n++] = b->u.dial.dial;
        break;
    case VRPN_BODY_TEXT:
        v[n++] = b->u.text.severity;
        v[n++] = b->u.text.level;
        v[n++] = (double)body_len;
        break;
    default:
        break;
    }
    return n;
}

/* Remove `key'...'` (quoted value) from s, copying the value into val. */
static bool cut_quoted(char *s, const char *key, char *val, size_t cap)
{
    char *k = strstr(s, key);
    if (!k) return false;
    char *q = k + strlen(key);
    char *endq = strchr(q, '\'');
    assert_non_null(endq);
    size_t n = (size_t)(endq - q);
    assert_true(n < cap);
    memcpy(val, q, n);
    val[n] = 0;
    memmove(k, endq + 1, strlen(endq + 1) + 1);
    return true;
}

static void check_reencode(struct dir_ctx *c, const uint8_t *orig, const struct vrpn_msg *m,
                           const struct vrpn_system_msg *sys, const struct vrpn_body *body)
{
    static uint8_t out[VRPN_MAX_MESSAGE];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    struct xg_error e = {0};
    uint32_t seq_before = c->seq;
    int rc;
    if (sys) {
        switch (sys->type) {
        case VRPN_SENDER_DESCRIPTION:
        case VRPN_TYPE_DESCRIPTION:
            rc = vrpn_encode_description(&w, &m->hdr, &c->seq, sys->type, sys->id, sys->name, &e);
            break;
        case VRPN_UDP_DESCRIPTION:
            rc = vrpn_encode_udp_description(&w, &m->hdr, &c->seq, sys->udp_port, sys->name, &e);
            break;
        default:
            fail_msg("%s: unexpected system type %d", c->label, sys->type);
            return;
        }
    } else {
        rc = vrpn_encode_body_message(&w, &m->hdr, &c->seq, body, &e);
    }
    if (rc) fail_msg("%s: re-encode failed: %s", c->label, e.msg);
    assert_int_equal(c->seq, seq_before + 1);
    /* same length, same padded size, zero padding */
    assert_int_equal(w.len, vrpn_padded_size(m->hdr.length));
    assert_int_equal(xg_load_be32(out), m->hdr.length);
    size_t cmp = m->hdr.length;
    if (body && body->kind == VRPN_BODY_TEXT)
        cmp = VRPN_HEADER_SIZE + 8 + strlen(body->u.text.text) + 1; /* rest is garbage (§8.6) */
    if (memcmp(out, orig, cmp) != 0) {
        for (size_t i = 0; i < cmp; i++)
            if (out[i] != orig[i])
                fail_msg("%s: re-encoded message seq %u differs at byte %zu: %02x vs %02x",
                         c->label, m->hdr.seq, i, out[i], orig[i]);
    }
    for (size_t i = cmp; i < w.len; i++)
        assert_int_equal(out[i], 0);
}

static void check_message(struct dir_ctx *c, const uint8_t *orig, const struct vrpn_msg *m,
                          size_t off, const char *line)
{
    if (!line) fail_msg("%s: message at offset %zu has no listing line", c->label, off);
    const char *at = strchr(line, '@');
    size_t l_off;
    unsigned l_len, l_seq, l_sec, l_usec;
    int l_snd, l_typ, used = 0;
    if (sscanf(at, "@%zu len=%u seq=%u t=%u.%u snd=%d typ=%d %n", &l_off, &l_len, &l_seq, &l_sec,
               &l_usec, &l_snd, &l_typ, &used) != 7)
        fail_msg("%s: unparsable listing line '%s'", c->label, line);
    char rest[1400];
    snprintf(rest, sizeof rest, "%s", at + used);
    if (l_off != off || l_len != m->hdr.length || l_seq != m->hdr.seq || l_sec != m->hdr.tv_sec ||
        l_usec != m->hdr.tv_usec || l_snd != m->hdr.sender || l_typ != m->hdr.type)
        fail_msg("%s: header at %zu (len %u seq %u t %u.%06u snd %d typ %d) != listing '%s'",
                 c->label, off, m->hdr.length, m->hdr.seq, m->hdr.tv_sec, m->hdr.tv_usec,
                 m->hdr.sender, m->hdr.type, line);
    /* mainline numbers every message of a channel, system messages included (§5.1) */
    assert_int_equal(m->hdr.seq, c->seq);
    struct xg_error e = {0};
    c->count++;

    if (m->hdr.type < 0) {
        struct vrpn_system_msg s;
        if (vrpn_system_decode(m, &s, &e)) fail_msg("%s: %s", c->label, e.msg);
        c->system++;
        char val[VRPN_CNAME_MAX + 8];
        if (s.type == VRPN_UDP_DESCRIPTION) {
            unsigned port;
            assert_true(strncmp(rest, "UDP_DESCRIPTION", 15) == 0);
            assert_true(cut_quoted(rest, "host='", val, sizeof val));
            assert_string_equal(val, s.name);
            assert_int_equal(sscanf(rest, "UDP_DESCRIPTION udp port=%u", &port), 1);
            assert_int_equal(port, s.udp_port);
        } else {
            const char *what =
                s.type == VRPN_SENDER_DESCRIPTION ? "SENDER_DESCRIPTION" : "TYPE_DESCRIPTION";
            assert_true(strncmp(rest, what, strlen(what)) == 0);
            assert_true(cut_quoted(rest, "name='", val, sizeof val));
            assert_string_equal(val, s.name);
            int id;
            unsigned namelen;
            assert_int_equal(sscanf(rest + strlen(what), " id=%d namelen=%u", &id, &namelen), 2);
            assert_int_equal(id, s.id);
            assert_int_equal(namelen, strlen(s.name) + 1);
            enum vrpn_id_kind k = s.type == VRPN_SENDER_DESCRIPTION ? VRPN_ID_SENDER : VRPN_ID_TYPE;
            if (vrpn_id_map_describe(c->map, k, s.id, s.name, NULL, &e) < 0)
                fail_msg("%s: %s", c->label, e.msg);
        }
        check_reencode(c, orig, m, &s, NULL);
        return;
    }

    int lt = vrpn_id_map_to_local(c->map, VRPN_ID_TYPE, m->hdr.type, &e);
    if (lt < 0) fail_msg("%s: %s", c->label, e.msg);
    int ls = vrpn_id_map_to_local(c->map, VRPN_ID_SENDER, m->hdr.sender, &e);
    if (ls < 0) fail_msg("%s: %s", c->label, e.msg);
    const char *tname = vrpn_id_map_name(c->map, VRPN_ID_TYPE, lt);
    const char *sname = vrpn_id_map_name(c->map, VRPN_ID_SENDER, ls);
    if (strncmp(rest, tname, strlen(tname)) != 0)
        fail_msg("%s: type '%s' but listing says '%s'", c->label, tname, rest);
    char bracket[VRPN_CNAME_MAX + 4];
    snprintf(bracket, sizeof bracket, "[%s]", sname);
    char *after = strstr(rest, bracket);
    if (!after) fail_msg("%s: sender '%s' not in listing '%s'", c->label, sname, rest);
    after += strlen(bracket);

    enum vrpn_body_kind kind = vrpn_body_kind_of(tname);
    if (kind == VRPN_BODY_UNKNOWN)
        fail_msg("%s: fixture type '%s' unknown to the codec", c->label, tname);
    static struct vrpn_body b;
    if (vrpn_body_decode(kind, m->body, m->body_len, &b, &e)) fail_msg("%s: %s", c->label, e.msg);
    c->by_kind[kind]++;

    char vals[1200];
    snprintf(vals, sizeof vals, "%s", after);
    char *pad = strstr(vals, " PAD=");
    if (pad) *pad = 0;
    if (kind == VRPN_BODY_TEXT) {
        char text[VRPN_TEXT_MAX];
        assert_true(cut_quoted(vals, "text='", text, sizeof text));
        assert_string_equal(text, b.u.text.text);
    }
    double want[160], got[160];
    int nw = extract_numbers(vals, want, 160);
    int ng = body_numbers(&b, m->body_len, got);
    if (nw != ng) fail_msg("%s: %d values decoded, listing has %d: '%s'", c->label, ng, nw, vals);
    for (int i = 0; i < nw; i++) {
        /* the listing prints 6 significant digits */
        double tol = 6e-6 * fabs(want[i]) + 1e-300;
        if (!(fabs(got[i] - want[i]) <= tol))
            fail_msg("%s seq %u: value %d is %.17g, listing says %.9g ('%s')", c->label, m->hdr.seq,
                     i, got[i], want[i], vals);
    }
    check_reencode(c, orig, m, NULL, &b);
}

/* ---- whole streams ---- */

static void check_cookie(const uint8_t *buf, const char *line)
{
    struct vrpn_cookie ck;
    struct xg_error e = {0};
    if (vrpn_cookie_decode(buf, VRPN_COOKIE_SIZE, &ck, &e)) fail_msg("cookie: %s", e.msg);
    assert_int_equal(ck.log_mode, 0);
    assert_int_equal(ck.minor, 38);
    assert_non_null(strstr(line, "COOKIE"));
    const char *hex = strstr(line, "hex=");
    assert_non_null(hex);
    char mine[VRPN_COOKIE_SIZE * 2 + 1];
    for (int i = 0; i < VRPN_COOKIE_SIZE; i++)
        snprintf(mine + 2 * i, 3, "%02x", buf[i]);
    assert_memory_equal(hex + 4, mine, VRPN_COOKIE_SIZE * 2);
    /* our encoder writes the very same cookie */
    uint8_t out[VRPN_COOKIE_SIZE];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(vrpn_cookie_encode(&w, 0, NULL), 0);
    assert_memory_equal(out, buf, VRPN_COOKIE_SIZE);
}

/* Feed a TCP stream to the splitter segment by segment; check every message. */
static void run_tcp(const char *set, const char *bin_name, const char *dir, const char *heading,
                    const struct listing *l, struct dir_ctx *c)
{
    size_t len;
    uint8_t *bin = slurp(bin_name, &len);
    assert_non_null(bin);
    char csv[128];
    snprintf(csv, sizeof csv, "%s_segments.csv", set);
    static struct segment segs[4096];
    size_t nseg = load_segments(csv, "tcp", dir, segs, 4096);
    assert_true(nseg > 0);

    size_t end, li = section(l, heading, &end);
    /* the first line of the section is the cookie */
    while (li < end && !strstr(l->lines[li], "COOKIE"))
        li++;
    assert_true(li < end);
    const char *cookie_line = l->lines[li++];

    /* staging buffer: bytes received so far, [consumed, received) not yet framed */
    uint8_t *stage = malloc(len + 1);
    size_t received = 0, consumed = 0;
    bool cookie_done = false;
    for (size_t s = 0; s < nseg; s++) {
        assert_int_equal(segs[s].offset, received); /* segments are contiguous */
        assert_true(segs[s].offset + segs[s].length <= len);
        memcpy(stage + received, bin + segs[s].offset, segs[s].length);
        received += segs[s].length;
        if (!cookie_done) {
            if (received < VRPN_COOKIE_SIZE) continue;
            check_cookie(stage, cookie_line);
            consumed = VRPN_COOKIE_SIZE;
            cookie_done = true;
        }
        for (;;) {
            size_t need;
            struct xg_error e = {0};
            int rc = vrpn_stream_check(stage + consumed, received - consumed, &need, &e);
            if (rc < 0) fail_msg("%s at %zu: %s", c->label, consumed, e.msg);
            if (rc == 0) break;
            struct vrpn_msg m;
            if (vrpn_msg_parse(stage + consumed, received - consumed, &m, &e))
                fail_msg("%s at %zu: %s", c->label, consumed, e.msg);
            assert_int_equal(m.wire_size, need);
            check_message(c, stage + consumed, &m, consumed, next_msg_line(l, &li, end));
            consumed += need;
        }
    }
    assert_int_equal(received, len);
    assert_int_equal(consumed, len); /* the streams end on a message boundary */
    assert_null(next_msg_line(l, &li, end));
    free(stage);
    free(bin);
}

static size_t kind_total(const struct dir_ctx *c)
{
    size_t n = 0;
    for (int i = 0; i < 16; i++)
        n += c->by_kind[i];
    return n;
}

static void run_tcp_set(const char *set, size_t want_c2s, size_t want_s2c,
                        struct vrpn_id_map *map_c2s, struct vrpn_id_map *map_s2c,
                        struct dir_ctx *out_s2c)
{
    char name[128], bin_c2s[128], bin_s2c[128];
    snprintf(name, sizeof name, "%s_decoded.txt", set);
    size_t len;
    REQUIRE_FIXTURE(text, name, len);
    struct listing l;
    listing_load(&l, (char *)text);
    bool udp = strstr(set, "udp") != NULL;
    snprintf(bin_c2s, sizeof bin_c2s, "%s%s_c2s.bin", set, udp ? "_tcp" : "");
    snprintf(bin_s2c, sizeof bin_s2c, "%s%s_s2c.bin", set, udp ? "_tcp" : "");

    char lc[160], ls[160];
    snprintf(lc, sizeof lc, "%s tcp c2s", set);
    snprintf(ls, sizeof ls, "%s tcp s2c", set);
    struct dir_ctx c2s = {.label = lc, .map = map_c2s};
    struct dir_ctx s2c = {.label = ls, .map = map_s2c};
    run_tcp(set, bin_c2s, "c2s", "## TCP c2s", &l, &c2s);
    run_tcp(set, bin_s2c, "s2c", "## TCP s2c", &l, &s2c);
    print_message("%s: c2s %zu messages (%zu system), s2c %zu messages (%zu system)\n", set,
                  c2s.count, c2s.system, s2c.count, s2c.system);
    assert_int_equal(c2s.count, want_c2s);
    assert_int_equal(s2c.count, want_s2c);
    assert_int_equal(c2s.system + kind_total(&c2s), c2s.count);
    assert_int_equal(s2c.system + kind_total(&s2c), s2c.count);
    if (out_s2c) {
        *out_s2c = s2c;
        out_s2c->label = NULL; /* points into this frame */
    }
    listing_free(&l);
}

/* Message counts below are the number of message lines in each listing section (grep -c len=). */

static void test_session1_tcp(void **state)
{
    (void)state;
    static struct vrpn_id_map mc, ms;
    vrpn_id_map_init(&mc);
    vrpn_id_map_init(&ms);
    struct dir_ctx s2c;
    run_tcp_set("session1_tcp", 49, 340, &mc, &ms, &s2c);
    assert_int_equal(s2c.by_kind[VRPN_BODY_TEXT], 2);
    assert_int_equal(s2c.by_kind[VRPN_BODY_DIAL], 22);
    assert_int_equal(s2c.by_kind[VRPN_BODY_ANALOG], 22);
    assert_int_equal(s2c.by_kind[VRPN_BODY_PONG], 15);
    /* §6.1: ids differ per direction: Analog0 is client sender 3 and server sender 5 */
    assert_int_equal(vrpn_id_map_to_remote(&mc, VRPN_ID_SENDER,
                                           vrpn_id_map_find(&mc, VRPN_ID_SENDER, "Analog0")),
                     3);
    assert_int_equal(vrpn_id_map_to_remote(&ms, VRPN_ID_SENDER,
                                           vrpn_id_map_find(&ms, VRPN_ID_SENDER, "Analog0")),
                     5);
    vrpn_id_map_free(&mc);
    vrpn_id_map_free(&ms);
}

static void test_stock_server_tcp(void **state)
{
    (void)state;
    static struct vrpn_id_map mc, ms;
    vrpn_id_map_init(&mc);
    vrpn_id_map_init(&ms);
    struct dir_ctx s2c;
    run_tcp_set("stock_vrpn_server_tcp", 40, 182, &mc, &ms, &s2c);
    assert_int_equal(s2c.by_kind[VRPN_BODY_POS_QUAT], 44);
    assert_int_equal(s2c.by_kind[VRPN_BODY_BUTTON_STATES], 6);
    vrpn_id_map_free(&mc);
    vrpn_id_map_free(&ms);
}

static void test_session3_udp(void **state)
{
    (void)state;
    static struct vrpn_id_map mc, ms;
    vrpn_id_map_init(&mc);
    vrpn_id_map_init(&ms);
    struct dir_ctx s2c_tcp;
    run_tcp_set("session3_udp", 48, 75, &mc, &ms, &s2c_tcp);

    /* the connection request datagram */
    size_t len;
    uint8_t *lob = slurp("session3_udp_lob_c2s.bin", &len);
    assert_non_null(lob);
    struct vrpn_lob req;
    struct xg_error e = {0};
    if (vrpn_lob_decode(lob, len, &req, &e)) fail_msg("lob: %s", e.msg);
    assert_string_equal(req.host, "127.0.0.1");
    assert_int_equal(req.tcp_port, 47827);
    uint8_t out[64];
    struct xg_writer w;
    xg_writer_init(&w, out, sizeof out);
    assert_int_equal(vrpn_lob_encode(&w, req.host, req.tcp_port, NULL), 0);
    assert_int_equal(w.len, len);
    assert_memory_equal(out, lob, len);
    free(lob);

    /* UDP s2c datagrams, split by the segments CSV, ids from the TCP s2c descriptions */
    size_t tlen;
    uint8_t *text = slurp("session3_udp_decoded.txt", &tlen);
    struct listing l;
    listing_load(&l, (char *)text);
    uint8_t *bin = slurp("session3_udp_udp_s2c.bin", &len);
    assert_non_null(bin);
    static struct segment segs[4096];
    size_t nseg = load_segments("session3_udp_segments.csv", "udp", "s2c", segs, 4096);
    assert_int_equal(nseg, 228);
    size_t end, li = section(&l, "## UDP s2c datagrams", &end);
    struct dir_ctx c = {.label = "session3_udp udp s2c", .map = &ms};
    size_t next = 0, datagrams_seen = 0;
    for (size_t s = 0; s < nseg; s++) {
        assert_int_equal(segs[s].offset, next);
        next += segs[s].length;
        assert_true(next <= len);
        assert_true(segs[s].length <= VRPN_UDP_MAX);
        /* the listing's datagram heading agrees */
        while (li < end && strncmp(l.lines[li], "-- datagram", 11) != 0)
            li++;
        assert_true(li < end);
        unsigned idx, bytes;
        double t;
        assert_int_equal(sscanf(l.lines[li], "-- datagram %u at %lf, %u bytes", &idx, &t, &bytes),
                         3);
        li++;
        assert_int_equal(idx, s);
        assert_int_equal(bytes, segs[s].length);
        const uint8_t *dg = bin + segs[s].offset;
        size_t off = 0, in_dg = 0;
        struct vrpn_msg m;
        int rc;
        while ((rc = vrpn_datagram_next(dg, segs[s].length, &off, &m, &e)) == 1) {
            size_t at = off - m.wire_size;
            check_message(&c, dg + at, &m, at, next_msg_line(&l, &li, end));
            in_dg++;
        }
        if (rc < 0) fail_msg("datagram %zu: %s", s, e.msg);
        assert_true(in_dg >= 1);
        datagrams_seen++;
    }
    assert_int_equal(next, len);
    assert_null(next_msg_line(&l, &li, end));
    print_message("session3_udp: %zu datagrams, %zu UDP messages\n", datagrams_seen, c.count);
    assert_int_equal(c.count, 508 * 3 + 43 * 3 + 66);
    assert_int_equal(c.by_kind[VRPN_BODY_POS_QUAT], 508 + 43);
    assert_int_equal(c.by_kind[VRPN_BODY_ANALOG], 66);
    assert_int_equal(c.system, 0);
    /* §6.4: in UDP+TCP mode low-latency kinds went only over UDP, reliable ones only over TCP */
    for (int k = VRPN_BODY_POS_QUAT; k <= VRPN_BODY_TEXT; k++) {
        if (vrpn_body_low_latency((enum vrpn_body_kind)k))
            assert_int_equal(s2c_tcp.by_kind[k], 0);
        else
            assert_int_equal(c.by_kind[k], 0);
    }
    assert_true(s2c_tcp.by_kind[VRPN_BODY_BUTTON_CHANGE] > 0);
    assert_true(s2c_tcp.by_kind[VRPN_BODY_PONG] > 0);
    /* the client sent no UDP */
    size_t clen;
    uint8_t *c2s = slurp("session3_udp_udp_c2s.bin", &clen);
    assert_non_null(c2s);
    assert_int_equal(clen, 0);
    free(c2s);
    free(bin);
    listing_free(&l);
    vrpn_id_map_free(&mc);
    vrpn_id_map_free(&ms);
}

/* ---- spot checks of individual values against the wire rules ---- */

static void decode_at(const uint8_t *bin, size_t len, size_t off, enum vrpn_body_kind kind,
                      struct vrpn_msg *m, struct vrpn_body *b)
{
    struct xg_error e = {0};
    assert_true(off < len);
    if (vrpn_msg_parse(bin + off, len - off, m, &e) ||
        vrpn_body_decode(kind, m->body, m->body_len, b, &e))
        fail_msg("offset %zu: %s", off, e.msg);
}

static void test_session1_values(void **state)
{
    (void)state;
    size_t len;
    REQUIRE_FIXTURE(bin, "session1_tcp_s2c.bin", len);
    struct vrpn_msg m;
    static struct vrpn_body b;
    /* first Pos_Quat of Tracker0 (server sender 1, type 4) sensor 0 */
    decode_at(bin, len, 2072, VRPN_BODY_POS_QUAT, &m, &b);
    assert_int_equal(m.hdr.sender, 1);
    assert_int_equal(m.hdr.type, 4);
    assert_int_equal(m.hdr.tv_sec, 1795321979u);
    assert_int_equal(m.hdr.tv_usec, 276009u);
    assert_int_equal(b.u.pos_quat.sensor, 0);
    assert_true(b.u.pos_quat.pos.x == 0 && b.u.pos_quat.pos.y == 0 && b.u.pos_quat.pos.z == 0);
    assert_true(fabs(b.u.pos_quat.quat.x) < 1e-12 && fabs(b.u.pos_quat.quat.y) < 1e-12);
    assert_true(fabs(b.u.pos_quat.quat.z - 0.926692) < 1e-6);
    assert_true(fabs(b.u.pos_quat.quat.w - 0.375822) < 1e-6);
    /* unit quaternion in x y z w order */
    double n2 =
        b.u.pos_quat.quat.z * b.u.pos_quat.quat.z + b.u.pos_quat.quat.w * b.u.pos_quat.quat.w;
    assert_true(fabs(n2 - 1.0) < 1e-12);
    /* Spin velocity: increment = rotation by 2π·f·dt about z, f = 0.25 Hz, dt = 0.45/f (§8.1) */
    decode_at(bin, len, 2160, VRPN_BODY_VELOCITY, &m, &b);
    assert_true(b.u.rate.quat_dt == 1.8);
    double half = M_PI * 0.25 * 1.8;
    assert_true(fabs(b.u.rate.quat.z - sin(half)) < 1e-12);
    assert_true(fabs(b.u.rate.quat.w - cos(half)) < 1e-12);
    assert_true(b.u.rate.quat.x == 0 && b.u.rate.quat.y == 0);
    decode_at(bin, len, 2256, VRPN_BODY_ACCELERATION, &m, &b);
    assert_true(b.u.rate.quat.w == 1.0 && b.u.rate.quat_dt == 1.0);
    /* Button0 States then the four changes to 0 */
    decode_at(bin, len, 1896, VRPN_BODY_BUTTON_STATES, &m, &b);
    assert_int_equal(b.u.states.count, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(b.u.states.states[i], 1);
    for (int i = 0; i < 4; i++) {
        decode_at(bin, len, 1944 + 32 * (size_t)i, VRPN_BODY_BUTTON_CHANGE, &m, &b);
        assert_int_equal(m.hdr.length, 32);
        assert_int_equal(b.u.button.button, i);
        assert_int_equal(b.u.button.state, 0);
    }
    /* Analog0: channel k%3==2 is floor(2t)+k, others sin(...) (meta.json) */
    decode_at(bin, len, 2912, VRPN_BODY_ANALOG, &m, &b);
    assert_int_equal(b.u.analog.count, 4);
    assert_true(b.u.analog.channels[2] == 5.0);
    assert_true(fabs(b.u.analog.channels[0] + 0.999567) < 1e-6);
    assert_true(fabs(b.u.analog.channels[3] - 0.993717) < 1e-6);
    /* Dial: f64 delta then i32 dial; garbage padding ignored */
    decode_at(bin, len, 3064, VRPN_BODY_DIAL, &m, &b);
    assert_int_equal(m.hdr.length, 36);
    assert_true(b.u.dial.delta == 0.1);
    assert_int_equal(b.u.dial.dial, 0);
    assert_true(bin[3064 + 36] != 0 || bin[3064 + 37] != 0); /* PAD=4247bdb2 is not zero */
    /* Text0: 1032-byte body, string up to the NUL */
    decode_at(bin, len, 7104, VRPN_BODY_TEXT, &m, &b);
    assert_int_equal(m.hdr.length, 1056);
    assert_int_equal(b.u.text.severity, 0);
    assert_string_equal(b.u.text.text, "hello 1");
    free(bin);
}

static void test_session3_values(void **state)
{
    (void)state;
    size_t len;
    REQUIRE_FIXTURE(bin, "session3_udp_udp_s2c.bin", len);
    struct vrpn_msg m;
    static struct vrpn_body b;
    /* datagram 3 (offset 1120 + 64 + 1120 = 2304): Prop Spin about x at 0.2 Hz, dt 2.25 */
    decode_at(bin, len, 2304 + 88, VRPN_BODY_VELOCITY, &m, &b);
    assert_int_equal(m.hdr.sender, 2);
    /* dt = 0.45/f, computed by the server from a float rate: 2.2499999664723878 */
    assert_true(fabs(b.u.rate.quat_dt - 0.45 / 0.2) < 1e-7);
    double half = M_PI * 0.2 * 2.25;
    assert_true(fabs(b.u.rate.quat.x - sin(half)) < 1e-12);
    assert_true(fabs(b.u.rate.quat.w - cos(half)) < 1e-12);
    decode_at(bin, len, 0, VRPN_BODY_POS_QUAT, &m, &b);
    assert_int_equal(m.hdr.seq, 0); /* UDP has its own counter from 0 */
    assert_true(b.u.pos_quat.quat.w == 1.0 && b.u.pos_quat.quat.x == 0.0);
    free(bin);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session1_tcp),    cmocka_unit_test(test_stock_server_tcp),
        cmocka_unit_test(test_session3_udp),    cmocka_unit_test(test_session1_values),
        cmocka_unit_test(test_session3_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
