/* LESS framing (TCP packet-length, UDP sequence/ack/bitmask), packet header, HMAC-SHA-256/64
 * signatures (profile P3) and the 64-packet UDP ack window (draft §4). See less_codec.h. */
#include "adapters/less/less_codec.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <mbedtls/md.h>

/* signature + 1-byte timestamp + 1-byte message-count */
#define LESS_MIN_PACKET (LESS_SIG_LEN + 2)

/* ------------------------------------------------------------------------------------------ */
/* Keys and signatures                                                                         */

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int less_key_from_hex(const char *text, size_t len, struct less_key *key, struct xg_error *err)
{
    size_t n = 0;
    int hi = -1;
    memset(key, 0, sizeof *key);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (isspace(c)) continue;
        int v = hexval(c);
        if (v < 0)
            return xg_error_set(err, -EINVAL, "LESS key: character 0x%02x at index %zu is not hex",
                                c, i);
        if (hi < 0) {
            hi = v;
            continue;
        }
        if (n == LESS_KEY_MAX)
            return xg_error_set(err, -EINVAL, "LESS key: longer than %d bytes", LESS_KEY_MAX);
        key->bytes[n++] = (uint8_t)(hi << 4 | v);
        hi = -1;
    }
    if (hi >= 0) return xg_error_set(err, -EINVAL, "LESS key: odd number of hex digits");
    if (n < LESS_KEY_MIN) {
        memset(key, 0, sizeof *key);
        return xg_error_set(err, -EINVAL, "LESS key: %zu bytes, need %d to %d", n, LESS_KEY_MIN,
                            LESS_KEY_MAX);
    }
    key->len = n;
    return 0;
}

int less_sign(const struct less_key *key, const uint8_t *frame, size_t len, size_t sig_off,
              uint8_t sig[LESS_SIG_LEN], struct xg_error *err)
{
    static const uint8_t zeros[LESS_SIG_LEN];
    memset(sig, 0, LESS_SIG_LEN);
    if (sig_off > len || len - sig_off < LESS_SIG_LEN)
        return xg_error_set(err, -EINVAL, "LESS signature: offset %zu outside a %zu-byte frame",
                            sig_off, len);
    if (!key || key->len == 0) return 0; /* signature: none */
    const mbedtls_md_info_t *info = mbedtls_md_info_from_type(MBEDTLS_MD_SHA256);
    mbedtls_md_context_t md;
    uint8_t mac[32];
    mbedtls_md_init(&md);
    int rc = info ? mbedtls_md_setup(&md, info, 1) : -1;
    if (rc == 0) rc = mbedtls_md_hmac_starts(&md, key->bytes, key->len);
    if (rc == 0) rc = mbedtls_md_hmac_update(&md, frame, sig_off);
    if (rc == 0) rc = mbedtls_md_hmac_update(&md, zeros, LESS_SIG_LEN);
    if (rc == 0)
        rc = mbedtls_md_hmac_update(&md, frame + sig_off + LESS_SIG_LEN,
                                    len - sig_off - LESS_SIG_LEN);
    if (rc == 0) rc = mbedtls_md_hmac_finish(&md, mac);
    mbedtls_md_free(&md);
    if (rc != 0)
        return xg_error_set(err, -EINVAL, "LESS signature: mbedtls HMAC-SHA-256 failed (-0x%04x)",
                            (unsigned)-rc);
    memcpy(sig, mac, LESS_SIG_LEN);
    memset(mac, 0, sizeof mac);
    return 0;
}

int less_verify(const struct less_key *key, const uint8_t *frame, size_t len, size_t sig_off,
                struct xg_error *err)
{
    uint8_t want[LESS_SIG_LEN];
    int rc = less_sign(key, frame, len, sig_off, want, err);
    if (rc) return rc;
    uint8_t diff = 0;
    for (size_t i = 0; i < LESS_SIG_LEN; i++)
        diff |= (uint8_t)(want[i] ^ frame[sig_off + i]);
    if (diff != 0)
        return xg_error_set(err, -EACCES, "LESS signature: %s",
                            key && key->len ? "HMAC does not verify"
                                            : "not zero (signature: none)");
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Header                                                                                      */

/* Parse signature, timestamp and message-count from r (positioned at the signature). */
static int get_header(struct xg_reader *r, struct less_frame *f, struct xg_error *err)
{
    int rc;
    xg_read_copy(r, f->signature, LESS_SIG_LEN);
    if (r->err) return xg_error_set(err, -EMSGSIZE, "LESS header: signature truncated");
    if ((rc = less_get_int(r, &f->timestamp, "timestamp", err))) return rc;
    size_t at = r->off;
    if ((rc = less_get_uint(r, &f->message_count, "message-count", err))) return rc;
    size_t left = xg_reader_left(r);
    if (f->message_count > left)
        return xg_error_set(
            err, -EPROTO, "LESS message-count %" PRIu64 " at offset %zu exceeds the %zu bytes left",
            f->message_count, at, left);
    f->messages = r->buf + r->off;
    f->messages_len = left;
    return 0;
}

static int put_header(struct xg_writer *w, int64_t timestamp, uint64_t count, const uint8_t *msgs,
                      size_t msgs_len)
{
    xg_write_zeros(w, LESS_SIG_LEN);
    less_put_int(w, timestamp);
    less_put_uint(w, count);
    return xg_write_bytes(w, msgs, msgs_len);
}

static int finish_frame(struct xg_writer *w, size_t start, size_t sig_off,
                        const struct less_key *key, const char *what, struct xg_error *err)
{
    if (w->err) {
        size_t cap = w->cap;
        w->len = start;
        w->err = 0;
        return xg_error_set(err, -EMSGSIZE, "LESS %s: frame does not fit in %zu bytes", what, cap);
    }
    uint8_t sig[LESS_SIG_LEN];
    int rc = less_sign(key, w->buf + start, w->len - start, sig_off - start, sig, err);
    if (rc) {
        w->len = start;
        return rc;
    }
    memcpy(w->buf + sig_off, sig, LESS_SIG_LEN);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* TCP                                                                                         */

int less_tcp_split(const uint8_t *buf, size_t avail, size_t max_packet, size_t *frame_len,
                   struct xg_error *err)
{
    struct xg_reader r;
    uint64_t len;
    *frame_len = 0;
    xg_reader_init(&r, buf, avail);
    int rc = less_get_uint(&r, &len, "packet-length", err);
    if (rc == -EMSGSIZE) {
        if (err) xg_error_clear(err);
        return 0; /* the INTEGER itself is incomplete */
    }
    if (rc) return rc;
    if (len < LESS_MIN_PACKET || len > max_packet)
        return xg_error_set(err, -EPROTO, "LESS packet-length %" PRIu64 " outside %d..%zu", len,
                            LESS_MIN_PACKET, max_packet);
    if (len > avail - r.off) return 0;
    *frame_len = r.off + (size_t)len;
    return 1;
}

int less_tcp_decode(const uint8_t *frame, size_t len, const struct less_key *key,
                    struct less_frame *f, struct xg_error *err)
{
    struct xg_reader r;
    uint64_t plen;
    memset(f, 0, sizeof *f);
    xg_reader_init(&r, frame, len);
    int rc = less_get_uint(&r, &plen, "packet-length", err);
    if (rc) return rc;
    if (plen != xg_reader_left(&r))
        return xg_error_set(err, plen > xg_reader_left(&r) ? -EMSGSIZE : -EPROTO,
                            "LESS packet-length %" PRIu64 " but %zu bytes follow", plen,
                            xg_reader_left(&r));
    f->packet_len = (size_t)plen;
    f->sig_off = r.off;
    if (plen < LESS_SIG_LEN)
        return xg_error_set(err, -EMSGSIZE, "LESS packet of %" PRIu64 " bytes has no signature",
                            plen);
    if ((rc = less_verify(key, frame, len, f->sig_off, err))) return rc;
    f->authentic = true;
    return get_header(&r, f, err);
}

int less_tcp_encode(struct xg_writer *w, const struct less_key *key, int64_t timestamp,
                    uint64_t message_count, const uint8_t *msgs, size_t msgs_len,
                    struct xg_error *err)
{
    size_t start = w->len;
    size_t plen = LESS_SIG_LEN + less_int_size(timestamp) + less_uint_size(message_count);
    if (msgs_len > SIZE_MAX - plen)
        return xg_error_set(err, -EMSGSIZE, "LESS TCP frame: %zu bytes of messages", msgs_len);
    plen += msgs_len;
    less_put_uint(w, plen);
    size_t sig_off = w->len;
    put_header(w, timestamp, message_count, msgs, msgs_len);
    return finish_frame(w, start, sig_off, key, "TCP", err);
}

/* ------------------------------------------------------------------------------------------ */
/* UDP                                                                                         */

int less_udp_decode(const uint8_t *dgram, size_t len, size_t mtu, const struct less_key *key,
                    struct less_frame *f, struct xg_error *err)
{
    struct xg_reader r;
    memset(f, 0, sizeof *f);
    if (len > mtu)
        return xg_error_set(err, -EMSGSIZE, "LESS UDP datagram of %zu bytes exceeds the MTU %zu",
                            len, mtu);
    xg_reader_init(&r, dgram, len);
    f->seq = xg_read_u8(&r);
    f->ack_last = xg_read_u8(&r);
    if (r.err)
        return xg_error_set(err, -EMSGSIZE, "LESS UDP datagram of %zu bytes: framing truncated",
                            len);
    int rc = less_get_uint(&r, &f->ack_bitmask, "ack-previous-bitmask", err);
    if (rc) return rc;
    f->sig_off = r.off;
    if (xg_reader_left(&r) < LESS_SIG_LEN)
        return xg_error_set(err, -EMSGSIZE, "LESS UDP datagram of %zu bytes has no signature", len);
    if ((rc = less_verify(key, dgram, len, f->sig_off, err))) return rc;
    f->authentic = true;
    return get_header(&r, f, err);
}

int less_udp_encode(struct xg_writer *w, const struct less_key *key, uint8_t seq, uint8_t ack_last,
                    uint64_t ack_bitmask, int64_t timestamp, uint64_t message_count,
                    const uint8_t *msgs, size_t msgs_len, struct xg_error *err)
{
    size_t start = w->len;
    xg_write_u8(w, seq);
    xg_write_u8(w, ack_last);
    less_put_uint(w, ack_bitmask);
    size_t sig_off = w->len;
    put_header(w, timestamp, message_count, msgs, msgs_len);
    return finish_frame(w, start, sig_off, key, "UDP", err);
}

/* ------------------------------------------------------------------------------------------ */
/* Message iteration                                                                           */

void less_msg_iter_init(struct less_msg_iter *it, const struct less_frame *f)
{
    xg_reader_init(&it->r, f->messages, f->messages_len);
    it->left = f->message_count;
    it->index = 0;
}

int less_msg_next(struct less_msg_iter *it, const struct less_context *ctx, struct less_arena *a,
                  struct less_msg *m, struct xg_error *err)
{
    if (it->r.err) return xg_error_set(err, it->r.err, "LESS packet: iterating after an error");
    if (it->left == 0) {
        size_t trail = xg_reader_left(&it->r);
        if (trail)
            return xg_error_set(err, -EPROTO, "LESS packet: %zu bytes after message %" PRIu64,
                                trail, it->index);
        return 0;
    }
    int rc = less_decode_msg(&it->r, ctx, a, m, err);
    if (rc) {
        if (err) {
            char old[XG_ERROR_MAX];
            const char *inner = strncmp(err->msg, "LESS ", 5) == 0 ? err->msg + 5 : err->msg;
            snprintf(old, sizeof old, "%s", inner);
            snprintf(err->msg, sizeof err->msg, "LESS message %" PRIu64 ": %s", it->index, old);
        }
        return rc;
    }
    it->left--;
    it->index++;
    return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Ack window                                                                                  */

void less_ack_init(struct less_ack_window *w, uint8_t first_seq)
{
    w->last = (uint8_t)(first_seq - 1);
    w->mask = 0;
    w->any = false;
}

enum less_ack_result less_ack_record(struct less_ack_window *w, uint8_t seq)
{
    int d = (int8_t)(uint8_t)(seq - w->last);
    if (d > 0) {
        /* newer: shift the window; the old `last` becomes bit d-1 if it was received */
        uint64_t mask = d >= 64 ? 0 : w->mask << d;
        if (w->any && d <= 64) mask |= (uint64_t)1 << (d - 1);
        w->mask = mask;
        w->last = seq;
        w->any = true;
        return LESS_ACK_NEW;
    }
    if (d == 0) {
        if (w->any) return LESS_ACK_DUPLICATE;
        w->any = true;
        return LESS_ACK_NEW;
    }
    int k = -d - 1; /* bit index */
    if (k >= 64) return LESS_ACK_TOO_OLD;
    uint64_t bit = (uint64_t)1 << k;
    if (w->mask & bit) return LESS_ACK_DUPLICATE;
    w->mask |= bit;
    return LESS_ACK_NEW;
}

void less_rx_times_init(struct less_rx_times *t)
{
    memset(t, 0, sizeof *t);
    t->newest = t->floor = INT64_MIN;
}

enum less_rx_class less_rx_record(struct less_ack_window *w, struct less_rx_times *t, uint8_t seq,
                                  int64_t ts)
{
    int d = (int8_t)(uint8_t)(seq - w->last);
    if (d > 0) {
        if (ts <= t->newest) return LESS_RX_STALE; /* not acknowledged: the window stays */
        /* packets falling out of the window (more than 64 behind the new last) feed the floor */
        for (int j = d > 65 ? 0 : 65 - d; j <= 64; j++) {
            bool got = j == 0 ? w->any : (w->mask >> (j - 1)) & 1;
            int64_t old = t->ts[(uint8_t)(w->last - j)];
            if (got && old > t->floor) t->floor = old;
        }
        less_ack_record(w, seq);
        t->ts[seq] = ts;
        t->newest = ts;
        return LESS_RX_NEW;
    }
    if (d == 0 && w->any) return LESS_RX_DUPLICATE;
    int k = d == 0 ? -1 : -d - 1; /* bit index of seq, -1 = `last` itself */
    if (k >= 64) return LESS_RX_STALE;
    if (k >= 0 && (w->mask >> k) & 1) return LESS_RX_DUPLICATE;
    /* the nearest accepted packet sent before this one, else the floor */
    int64_t before = t->floor;
    for (int j = k + 1; j < 64; j++)
        if ((w->mask >> j) & 1) {
            before = t->ts[(uint8_t)(w->last - 1 - j)];
            break;
        }
    less_ack_record(w, seq); /* acknowledged either way (P12) */
    if (ts <= before) return LESS_RX_STALE;
    t->ts[seq] = ts;
    if (ts > t->newest) t->newest = ts;
    return LESS_RX_LATE;
}

bool less_ack_covers(uint8_t ack_last, uint64_t mask, uint8_t seq)
{
    unsigned behind = (uint8_t)(ack_last - seq);
    if (behind == 0) return true;
    if (behind > 64) return false;
    return (mask >> (behind - 1)) & 1;
}
