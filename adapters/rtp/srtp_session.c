/* SRTP / SRTCP sessions on libsrtp2 (see srtp_session.h). This file holds no cryptography: key
 * derivation, ciphers, tags and the replay window are libsrtp's; what is here is libsrtp's global
 * state, header sanity checks before libsrtp sees a packet, the capacity rule for the trailer,
 * error mapping and counters. Keys, key text and the configuration are srtp_key.c's. */
#include "adapters/rtp/srtp_session.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <srtp2/srtp.h>

#include "adapters/rtp/srtp_priv.h"
#include "core/util/log.h"

/* ---- library ---- */

static int g_refs;

static void log_handler(srtp_log_level_t level, const char *msg, void *data)
{
    (void)data;
    switch (level) {
    case srtp_log_level_error:
        XG_WARN("srtp", "libsrtp: %s", msg);
        break;
    case srtp_log_level_warning:
        XG_WARN("srtp", "libsrtp: %s", msg);
        break;
    default:
        XG_DEBUG("srtp", "libsrtp: %s", msg);
        break;
    }
}

int xg_srtp_global_init(struct xg_error *err)
{
    if (g_refs > 0) {
        g_refs++;
        return 0;
    }
    srtp_install_log_handler(log_handler, NULL);
    srtp_err_status_t st = srtp_init();
    if (st != srtp_err_status_ok) {
        srtp_install_log_handler(NULL, NULL);
        return xg_error_set(err, -EIO, "srtp_init failed (libsrtp status %d)", (int)st);
    }
    g_refs = 1;
    return 0;
}

void xg_srtp_global_cleanup(void)
{
    if (g_refs <= 0) return;
    if (--g_refs == 0) {
        srtp_shutdown();
        srtp_install_log_handler(NULL, NULL);
    }
}

/* ---- sessions ---- */

struct xg_srtp {
    srtp_t ctx;
    enum xg_srtp_dir dir;
    struct xg_srtp_key key; /* kept for the session's lifetime, wiped on free */
    struct xg_srtp_stats stats;
    uint8_t *scratch; /* protect when the caller's buffer has less than libsrtp's worst case */
    size_t scratch_cap;
};

int xg_srtp_session_new(struct xg_srtp **out, enum xg_srtp_dir dir, const struct xg_srtp_key *key,
                        struct xg_error *err)
{
    *out = NULL;
    if (!srtp_key_ok(key))
        return xg_error_set(err, -EINVAL, "key: missing or not %zu bytes for suite %s",
                            key ? xg_srtp_key_len(key->suite) : 0,
                            key ? xg_srtp_suite_name(key->suite) : "none");
    if (dir != XG_SRTP_SEND && dir != XG_SRTP_RECV)
        return xg_error_set(err, -EINVAL, "direction %d is not send or receive", (int)dir);
    struct xg_srtp *s = calloc(1, sizeof *s);
    if (!s) return xg_error_set(err, -ENOMEM, "out of memory");
    int rc = xg_srtp_global_init(err);
    if (rc) {
        free(s);
        return rc;
    }
    s->dir = dir;
    s->key = *key;
    srtp_policy_t pol;
    memset(&pol, 0, sizeof pol);
    if (key->suite == XG_SRTP_AEAD_AES_128_GCM) {
        srtp_crypto_policy_set_aes_gcm_128_16_auth(&pol.rtp);
        srtp_crypto_policy_set_aes_gcm_128_16_auth(&pol.rtcp);
    } else {
        srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(&pol.rtp);
        srtp_crypto_policy_set_rtcp_default(&pol.rtcp);
    }
    pol.ssrc.type = dir == XG_SRTP_SEND ? ssrc_any_outbound : ssrc_any_inbound;
    pol.key = s->key.bytes;
    pol.window_size = 0; /* libsrtp's default: 128 */
    pol.allow_repeat_tx = 0;
    pol.next = NULL;
    srtp_err_status_t st = srtp_create(&s->ctx, &pol);
    if (st != srtp_err_status_ok) {
        explicit_bzero(&s->key, sizeof s->key);
        free(s);
        xg_srtp_global_cleanup();
        return xg_error_set(err, st == srtp_err_status_alloc_fail ? -ENOMEM : -EIO,
                            "srtp_create (%s, %s) failed: libsrtp status %d",
                            xg_srtp_suite_name(key->suite),
                            dir == XG_SRTP_SEND ? "send" : "receive", (int)st);
    }
    *out = s;
    return 0;
}

void xg_srtp_session_free(struct xg_srtp *s)
{
    if (!s) return;
    if (s->ctx) srtp_dealloc(s->ctx);
    explicit_bzero(&s->key, sizeof s->key);
    if (s->scratch) {
        explicit_bzero(s->scratch, s->scratch_cap);
        free(s->scratch);
    }
    free(s);
    xg_srtp_global_cleanup();
}

const struct xg_srtp_stats *xg_srtp_session_stats(const struct xg_srtp *s)
{
    return &s->stats;
}

enum xg_srtp_suite xg_srtp_session_suite(const struct xg_srtp *s)
{
    return s->key.suite;
}

enum xg_srtp_dir xg_srtp_session_dir(const struct xg_srtp *s)
{
    return s->dir;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* RTP header sanity before libsrtp (RFC 3550 §5.1): `body` bytes of the packet that are not the
 * trailer must hold version 2, the CSRCs and the extension. */
static int rtp_check(struct xg_srtp *s, const uint8_t *p, size_t len, size_t trailer,
                     struct xg_error *err)
{
    if (len < 12 + trailer) {
        s->stats.malformed++;
        return xg_error_set(err, XG_SRTP_EMALFORMED,
                            "SRTP: %zu bytes, shorter than the 12-byte RTP header%s%.0zu%s", len,
                            trailer ? " + " : "", trailer, trailer ? "-byte tag" : "");
    }
    if (p[0] >> 6 != 2) {
        s->stats.malformed++;
        return xg_error_set(err, XG_SRTP_EMALFORMED, "SRTP: RTP version %u (want 2)", p[0] >> 6);
    }
    size_t body = len - trailer, hl = 12 + 4u * (p[0] & 0x0f);
    if ((p[0] & 0x10) && hl + 4 <= body)
        hl += 4 + 4u * ((size_t)p[hl + 2] << 8 | p[hl + 3]);
    else if (p[0] & 0x10)
        hl += 4;
    if (hl > body) {
        s->stats.malformed++;
        return xg_error_set(err, XG_SRTP_EMALFORMED,
                            "SRTP: RTP header (CSRCs, extension) of %zu bytes runs past the %zu "
                            "bytes before the trailer (SSRC 0x%08x)",
                            hl, body, be32(p + 8));
    }
    return 0;
}

/* RTCP common header sanity (RFC 3550 §6.4): version 2, packet type 192..223 (RFC 5761 §4). */
static int rtcp_check(struct xg_srtp *s, const uint8_t *p, size_t len, size_t trailer,
                      struct xg_error *err)
{
    if (len < 8 + trailer) {
        s->stats.malformed++;
        return xg_error_set(err, XG_SRTP_EMALFORMED,
                            "SRTCP: %zu bytes, shorter than the 8-byte RTCP header%s%.0zu%s", len,
                            trailer ? " + " : "", trailer,
                            trailer ? "-byte trailer (E||index + tag)" : "");
    }
    if (p[0] >> 6 != 2) {
        s->stats.malformed++;
        return xg_error_set(err, XG_SRTP_EMALFORMED, "SRTCP: RTCP version %u (want 2)", p[0] >> 6);
    }
    if (p[1] < 192 || p[1] > 223) {
        s->stats.malformed++;
        return xg_error_set(err, XG_SRTP_EMALFORMED, "SRTCP: packet type %u is not RTCP (192..223)",
                            p[1]);
    }
    return 0;
}

/* Map a libsrtp failure to our error and counter. */
static int fail(struct xg_srtp *s, srtp_err_status_t st, bool rtcp, const uint8_t *p,
                struct xg_error *err)
{
    const char *what = rtcp ? "SRTCP" : "SRTP";
    uint32_t ssrc = be32(p + (rtcp ? 4 : 8));
    unsigned seq = rtcp ? 0 : (unsigned)(p[2] << 8 | p[3]);
    char where[48];
    if (rtcp)
        snprintf(where, sizeof where, "SSRC 0x%08x", ssrc);
    else
        snprintf(where, sizeof where, "SSRC 0x%08x seq %u", ssrc, seq);
    switch (st) {
    case srtp_err_status_auth_fail:
        s->stats.auth_fail++;
        return xg_error_set(err, XG_SRTP_EAUTH,
                            "%s: authentication failed (%s): wrong key, altered or plain packet",
                            what, where);
    case srtp_err_status_cant_check: /* SRTCP E bit clear while the session encrypts */
        s->stats.auth_fail++;
        return xg_error_set(err, XG_SRTP_EAUTH,
                            "%s: authentication failed (%s): E bit clear, the packet is not "
                            "encrypted (plain RTCP?)",
                            what, where);
    case srtp_err_status_replay_fail:
    case srtp_err_status_replay_old:
        s->stats.replay++;
        return xg_error_set(err, XG_SRTP_EREPLAY, "%s: replayed or too old packet (%s)", what,
                            where);
    case srtp_err_status_bad_param:
    case srtp_err_status_parse_err:
        s->stats.malformed++;
        return xg_error_set(err, XG_SRTP_EMALFORMED, "%s: malformed packet (%s)", what, where);
    case srtp_err_status_key_expired:
        s->stats.other++;
        return xg_error_set(err, -EKEYEXPIRED, "%s: key usage limit reached (%s): re-key", what,
                            where);
    default:
        s->stats.other++;
        return xg_error_set(err, -EIO, "%s: libsrtp status %d (%s)", what, (int)st, where);
    }
}

static int protect(struct xg_srtp *s, bool rtcp, void *pkt, size_t *len, size_t cap,
                   struct xg_error *err)
{
    if (!s || !pkt || !len) return xg_error_set(err, -EINVAL, "SRTP: no session or packet");
    if (s->dir != XG_SRTP_SEND)
        return xg_error_set(err, -EINVAL, "SRTP: protect on a receive session");
    uint8_t *p = pkt;
    size_t n = *len, ov = xg_srtp_overhead(s->key.suite, rtcp);
    int rc = rtcp ? rtcp_check(s, p, n, 0, err) : rtp_check(s, p, n, 0, err);
    if (rc) return rc;
    /* libsrtp may write up to SRTP_MAX_TRAILER_LEN (+4 for SRTCP) after the packet */
    size_t worst = SRTP_MAX_TRAILER_LEN + (rtcp ? 4 : 0);
    if (n > cap || cap - n < ov || n > (size_t)INT_MAX - worst) {
        s->stats.no_room++;
        return xg_error_set(err, -EMSGSIZE,
                            "%s: a %zu-byte packet needs %zu bytes of room for the trailer, the "
                            "buffer holds %zu",
                            rtcp ? "SRTCP" : "SRTP", n, n + ov, cap);
    }
    uint8_t *work = p;
    if (cap - n < worst) {
        if (s->scratch_cap < n + worst) {
            uint8_t *b = malloc(n + worst);
            if (!b) return xg_error_set(err, -ENOMEM, "out of memory");
            if (s->scratch) {
                explicit_bzero(s->scratch, s->scratch_cap);
                free(s->scratch);
            }
            s->scratch = b;
            s->scratch_cap = n + worst;
        }
        memcpy(s->scratch, p, n);
        work = s->scratch;
    }
    int out = (int)n;
    srtp_err_status_t st =
        rtcp ? srtp_protect_rtcp(s->ctx, work, &out) : srtp_protect(s->ctx, work, &out);
    if (st != srtp_err_status_ok) return fail(s, st, rtcp, p, err);
    if (out < 0 || (size_t)out != n + ov) {
        s->stats.other++;
        return xg_error_set(err, -EIO, "%s: libsrtp wrote %d bytes, expected %zu",
                            rtcp ? "SRTCP" : "SRTP", out, n + ov);
    }
    if (work != p) memcpy(p, work, (size_t)out);
    *len = (size_t)out;
    if (rtcp)
        s->stats.rtcp_ok++;
    else
        s->stats.rtp_ok++;
    return 0;
}

static int unprotect(struct xg_srtp *s, bool rtcp, void *pkt, size_t *len, struct xg_error *err)
{
    if (!s || !pkt || !len) return xg_error_set(err, -EINVAL, "SRTP: no session or packet");
    if (s->dir != XG_SRTP_RECV)
        return xg_error_set(err, -EINVAL, "SRTP: unprotect on a send session");
    uint8_t *p = pkt;
    size_t n = *len, ov = xg_srtp_overhead(s->key.suite, rtcp);
    int rc = rtcp ? rtcp_check(s, p, n, ov, err) : rtp_check(s, p, n, ov, err);
    if (rc) return rc;
    if (n > (size_t)INT_MAX) {
        s->stats.malformed++;
        return xg_error_set(err, XG_SRTP_EMALFORMED, "SRTP: %zu bytes is too large", n);
    }
    int out = (int)n;
    srtp_err_status_t st =
        rtcp ? srtp_unprotect_rtcp(s->ctx, p, &out) : srtp_unprotect(s->ctx, p, &out);
    if (st != srtp_err_status_ok) return fail(s, st, rtcp, p, err);
    *len = (size_t)out;
    if (rtcp)
        s->stats.rtcp_ok++;
    else
        s->stats.rtp_ok++;
    return 0;
}

int xg_srtp_protect(struct xg_srtp *s, void *pkt, size_t *len, size_t cap, struct xg_error *err)
{
    return protect(s, false, pkt, len, cap, err);
}

int xg_srtp_protect_rtcp(struct xg_srtp *s, void *pkt, size_t *len, size_t cap,
                         struct xg_error *err)
{
    return protect(s, true, pkt, len, cap, err);
}

int xg_srtp_unprotect(struct xg_srtp *s, void *pkt, size_t *len, struct xg_error *err)
{
    return unprotect(s, false, pkt, len, err);
}

int xg_srtp_unprotect_rtcp(struct xg_srtp *s, void *pkt, size_t *len, struct xg_error *err)
{
    return unprotect(s, true, pkt, len, err);
}
