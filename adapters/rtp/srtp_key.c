/* SRTP keys (see srtp_session.h): the suites, key text (RFC 4568 §6.1 `inline:<base64>` key-params,
 * base64 by mbedtls), key files, the SDP a=crypto lines, and the adapter's `srtp:` section. No
 * cryptography and no libsrtp session here: srtp_session.c holds those. */
#include "adapters/rtp/srtp_session.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <mbedtls/base64.h>
#include <srtp2/srtp.h>

#include "adapters/rtp/srtp_priv.h"
#include "core/util/log.h"
#include "core/conf/path.h"

/* ---- suites ---- */

const char *xg_srtp_suite_name(enum xg_srtp_suite s)
{
    switch (s) {
    case XG_SRTP_AES_CM_128_HMAC_SHA1_80:
        return "AES_CM_128_HMAC_SHA1_80";
    case XG_SRTP_AEAD_AES_128_GCM:
        return "AEAD_AES_128_GCM";
    default:
        return "none";
    }
}

int xg_srtp_suite_parse(const char *name, enum xg_srtp_suite *out, struct xg_error *err)
{
    if (name && !strcmp(name, "AES_CM_128_HMAC_SHA1_80")) {
        *out = XG_SRTP_AES_CM_128_HMAC_SHA1_80;
        return 0;
    }
    if (name && !strcmp(name, "AEAD_AES_128_GCM")) {
        *out = XG_SRTP_AEAD_AES_128_GCM;
        return 0;
    }
    return xg_error_set(err, -EINVAL,
                        "suite '%.64s' is unknown (supported: AES_CM_128_HMAC_SHA1_80, "
                        "AEAD_AES_128_GCM)",
                        name ? name : "");
}

size_t xg_srtp_key_len(enum xg_srtp_suite s)
{
    switch (s) {
    case XG_SRTP_AES_CM_128_HMAC_SHA1_80:
        return SRTP_AES_ICM_128_KEY_LEN_WSALT; /* 16 + 14 */
    case XG_SRTP_AEAD_AES_128_GCM:
        return SRTP_AES_GCM_128_KEY_LEN_WSALT; /* 16 + 12 */
    default:
        return 0;
    }
}

static size_t salt_len(enum xg_srtp_suite s)
{
    return s == XG_SRTP_AEAD_AES_128_GCM ? 12 : 14;
}

static size_t tag_len(enum xg_srtp_suite s)
{
    switch (s) {
    case XG_SRTP_AES_CM_128_HMAC_SHA1_80:
        return 10;
    case XG_SRTP_AEAD_AES_128_GCM:
        return 16;
    default:
        return 0;
    }
}

size_t xg_srtp_overhead(enum xg_srtp_suite s, bool rtcp)
{
    size_t t = tag_len(s);
    return t ? t + (rtcp ? 4 : 0) : 0;
}

/* ---- base64 (RFC 4648 §4), mbedtls' codec ---- */

static const char B64_CHARS[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Decode s[0..n) into out (capacity cap) with mbedtls' decoder; the '=' padding is optional but
 * only at the end. Our checks come first, so an error names the rule broken (character and
 * offset, cut text, padding, stray bits). *out_len is the decoded length, also when it exceeds
 * cap (then nothing is decoded and the caller refuses the length). */
static int b64_decode(const char *s, size_t n, uint8_t *out, size_t cap, size_t *out_len,
                      struct xg_error *err)
{
    size_t pad = 0;
    while (n > 0 && s[n - 1] == '=' && pad < 2) {
        n--;
        pad++;
    }
    if (n == 0) return xg_error_set(err, -EINVAL, "key: empty base64");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c && strchr(B64_CHARS, c)) continue;
        if (isprint(c))
            return xg_error_set(err, -EINVAL, "key: bad base64 character '%c' at offset %zu", c, i);
        return xg_error_set(err, -EINVAL, "key: bad base64 byte 0x%02x at offset %zu", c, i);
    }
    if (n % 4 == 1) return xg_error_set(err, -EINVAL, "key: base64 of %zu characters is cut", n);
    if (pad && (n + pad) % 4 != 0)
        return xg_error_set(err, -EINVAL, "key: base64 padding does not fit %zu characters", n);
    /* bits left over in the last character (mbedtls ignores them): its group of 4, decoded and
     * encoded again, must give the same characters */
    size_t g = (n - 1) / 4 * 4, gl = n - g;
    unsigned char grp[4], gb[3], ge[5];
    size_t gn = 0, en = 0;
    memcpy(grp, s + g, gl);
    memset(grp + gl, '=', sizeof grp - gl);
    if (mbedtls_base64_decode(gb, sizeof gb, &gn, grp, sizeof grp) ||
        mbedtls_base64_encode(ge, sizeof ge, &en, gb, gn) || memcmp(ge, grp, gl))
        return xg_error_set(err, -EINVAL, "key: base64 has stray bits in its last character");
    *out_len = n * 6 / 8;
    if (*out_len > cap) return 0; /* the caller refuses the length */
    char text[4 * 64 / 3 + 8];    /* s[0..n) padded to a multiple of 4, as mbedtls wants it */
    size_t tn = n + (4 - n % 4) % 4, got = 0;
    if (tn > sizeof text) return 0;
    memcpy(text, s, n);
    memset(text + n, '=', tn - n);
    int rc = mbedtls_base64_decode(out, cap, &got, (const unsigned char *)text, tn);
    explicit_bzero(text, sizeof text);
    if (rc || got != *out_len)
        return xg_error_set(err, -EINVAL, "key: base64 refused (mbedtls error -0x%04x)", -rc);
    return 0;
}

/* in[0..n) as padded base64 into out (cap bytes: 4 * ceil(n / 3) + 1 needed); its length. */
static size_t b64_encode(const uint8_t *in, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    if (mbedtls_base64_encode((unsigned char *)out, cap, &o, in, n)) o = 0;
    out[o] = '\0';
    return o;
}

/* ---- keys ---- */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Next white-space separated token of [*p, end): start and length; false at the end. */
static bool next_token(const char **p, const char *end, const char **tok, size_t *n)
{
    const char *s = *p;
    while (s < end && is_space(*s))
        s++;
    if (s == end) return false;
    const char *e = s;
    while (e < end && !is_space(*e))
        e++;
    *tok = s;
    *n = (size_t)(e - s);
    *p = e;
    return true;
}

/* Parse the key-params token (`inline:<b64>` or bare base64) for suite `suite`. */
static int parse_key_param(const char *tok, size_t n, enum xg_srtp_suite suite,
                           struct xg_srtp_key *out, struct xg_error *err)
{
    if (n >= 7 && !strncmp(tok, "inline:", 7)) {
        tok += 7;
        n -= 7;
    } else {
        const char *colon = memchr(tok, ':', n);
        if (colon)
            return xg_error_set(err, -EINVAL,
                                "key: method '%.*s' is not supported (only 'inline:')",
                                (int)(colon - tok > 32 ? 32 : colon - tok), tok);
    }
    const char *bar = memchr(tok, '|', n);
    if (bar)
        return xg_error_set(err, -EINVAL, "key: lifetime/MKI parameters ('%.*s') are not supported",
                            (int)((size_t)(tok + n - bar) > 40 ? 40 : (size_t)(tok + n - bar)),
                            bar);
    const char *semi = memchr(tok, ';', n);
    if (semi) return xg_error_set(err, -EINVAL, "key: several keys (';') are not supported");
    uint8_t buf[64];
    size_t got = 0;
    int rc = b64_decode(tok, n, buf, sizeof buf, &got, err);
    if (rc) {
        explicit_bzero(buf, sizeof buf);
        return rc;
    }
    size_t want = xg_srtp_key_len(suite);
    if (got != want) {
        explicit_bzero(buf, sizeof buf);
        const char *hint = "";
        if (got == xg_srtp_key_len(XG_SRTP_AEAD_AES_128_GCM))
            hint = " (28 bytes fit AEAD_AES_128_GCM: set that suite)";
        else if (got == xg_srtp_key_len(XG_SRTP_AES_CM_128_HMAC_SHA1_80))
            hint = " (30 bytes fit AES_CM_128_HMAC_SHA1_80: set that suite)";
        return xg_error_set(err, -EINVAL,
                            "key: %zu bytes, %s needs %zu (16-byte key + %zu-byte salt)%s", got,
                            xg_srtp_suite_name(suite), want, salt_len(suite), hint);
    }
    out->suite = suite;
    out->len = want;
    memcpy(out->bytes, buf, want);
    explicit_bzero(buf, sizeof buf);
    return 0;
}

/* forced: the suite the caller requires (NONE: any); fallback: used when neither the caller nor
 * the text names one (NONE: that is an error). */
static int key_parse(const char *text, enum xg_srtp_suite forced, enum xg_srtp_suite fallback,
                     struct xg_srtp_key *out, struct xg_error *err)
{
    memset(out, 0, sizeof *out);
    if (!text) return xg_error_set(err, -EINVAL, "key: no text");
    const char *p = text, *end = text + strlen(text);
    const char *tok[4];
    size_t n[4];
    int nt = 0;
    while (nt < 4 && next_token(&p, end, &tok[nt], &n[nt]))
        nt++;
    if (nt == 0) return xg_error_set(err, -EINVAL, "key: empty");
    int i = 0;
    bool sdp_line = n[0] >= 9 && !strncmp(tok[0], "a=crypto:", 9);
    if (sdp_line) {
        size_t tl = n[0] - 9;
        const char *t = tok[0] + 9;
        bool ok = tl >= 1 && tl <= 9;
        for (size_t k = 0; ok && k < tl; k++)
            ok = isdigit((unsigned char)t[k]);
        if (!ok)
            return xg_error_set(err, -EINVAL, "tag: '%.*s' is not 1..9 digits (a=crypto:<tag>)",
                                (int)(tl > 16 ? 16 : tl), t);
        i = 1;
        if (nt < 3)
            return xg_error_set(err, -EINVAL, "a=crypto line needs '<tag> <suite> inline:<key>'");
    }
    enum xg_srtp_suite named = XG_SRTP_SUITE_NONE;
    if (nt - i >= 2) {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(n[i] > 63 ? 63 : n[i]), tok[i]);
        int rc = xg_srtp_suite_parse(name, &named, err);
        if (rc) return rc;
        i++;
    }
    if (nt - i > 1) {
        int k = i + 1;
        return xg_error_set(err, -EINVAL, "session parameters ('%.*s') are not supported",
                            (int)(n[k] > 40 ? 40 : n[k]), tok[k]);
    }
    enum xg_srtp_suite suite = forced;
    if (named != XG_SRTP_SUITE_NONE) {
        if (forced != XG_SRTP_SUITE_NONE && forced != named)
            return xg_error_set(err, -EINVAL, "suite: the key is for %s, the session uses %s",
                                xg_srtp_suite_name(named), xg_srtp_suite_name(forced));
        suite = named;
    }
    if (suite == XG_SRTP_SUITE_NONE) suite = fallback;
    if (suite == XG_SRTP_SUITE_NONE)
        return xg_error_set(err, -EINVAL,
                            "suite: none given (name one, or use '<suite> inline:<key>')");
    return parse_key_param(tok[i], n[i], suite, out, err);
}

int xg_srtp_key_parse(const char *text, enum xg_srtp_suite suite, struct xg_srtp_key *out,
                      struct xg_error *err)
{
    return key_parse(text, suite, XG_SRTP_SUITE_NONE, out, err);
}

/* The first line of a key file that is neither blank nor a comment, into line (NUL-terminated). */
static int key_file_line(const char *path, char *line, size_t cap, bool *world_readable,
                         struct xg_error *err)
{
    int orc = 0;
    const char *kind = NULL;
    FILE *f = xg_file_fopen_regular(path, "r", false, &orc, &kind); /* never blocks */
    if (!f) return xg_error_set(err, orc, "key file '%s': %s", path, xg_file_strerror(orc, kind));
    struct stat st;
    if (world_readable) *world_readable = fstat(fileno(f), &st) == 0 && (st.st_mode & 044);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    int rerr = ferror(f) ? errno : 0;
    fclose(f);
    if (rerr) {
        explicit_bzero(buf, sizeof buf);
        return xg_error_set(err, -rerr, "key file '%s': %s", path, strerror(rerr));
    }
    buf[n] = '\0';
    int rc = xg_error_set(err, -EINVAL, "key file '%s': no key in it", path);
    for (char *s = buf; s && *s;) {
        char *nl = strchr(s, '\n');
        if (nl) *nl = '\0';
        const char *t = s;
        while (is_space(*t))
            t++;
        if (*t && *t != '#') {
            if (strlen(t) >= cap) {
                rc = xg_error_set(err, -EINVAL, "key file '%s': key line is too long", path);
            } else {
                snprintf(line, cap, "%s", t);
                rc = 0;
            }
            break;
        }
        s = nl ? nl + 1 : NULL;
    }
    explicit_bzero(buf, sizeof buf);
    if (!rc) xg_error_clear(err);
    return rc;
}

static int key_load(const char *path, enum xg_srtp_suite forced, enum xg_srtp_suite fallback,
                    struct xg_srtp_key *out, bool *world_readable, struct xg_error *err)
{
    memset(out, 0, sizeof *out);
    if (world_readable) *world_readable = false;
    char line[512];
    int rc = key_file_line(path, line, sizeof line, world_readable, err);
    if (rc) return rc;
    rc = key_parse(line, forced, fallback, out, err);
    explicit_bzero(line, sizeof line);
    if (rc) xg_error_prefix(err, "key file '%s': ", path);
    return rc;
}

int xg_srtp_key_load(const char *path, enum xg_srtp_suite suite, struct xg_srtp_key *out,
                     bool *world_readable, struct xg_error *err)
{
    return key_load(path, suite, XG_SRTP_SUITE_NONE, out, world_readable, err);
}

int xg_srtp_key_generate(enum xg_srtp_suite suite, struct xg_srtp_key *out, struct xg_error *err)
{
    memset(out, 0, sizeof *out);
    size_t n = xg_srtp_key_len(suite);
    if (!n) return xg_error_set(err, -EINVAL, "suite: none given");
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(out->bytes + got, n - got, 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            explicit_bzero(out, sizeof *out);
            return xg_error_set(err, -e, "getrandom: %s", strerror(e));
        }
        got += (size_t)r;
    }
    out->suite = suite;
    out->len = n;
    return 0;
}

bool srtp_key_ok(const struct xg_srtp_key *key)
{
    return key && key->len && key->len == xg_srtp_key_len(key->suite);
}

int xg_srtp_key_format(const struct xg_srtp_key *key, char *buf, size_t cap)
{
    if (!srtp_key_ok(key) || !buf) return -EINVAL;
    char tmp[64];
    size_t n = b64_encode(key->bytes, key->len, tmp, sizeof tmp);
    if (7 + n + 1 > cap) {
        explicit_bzero(tmp, sizeof tmp);
        return -EMSGSIZE;
    }
    memcpy(buf, "inline:", 7);
    memcpy(buf + 7, tmp, n + 1);
    explicit_bzero(tmp, sizeof tmp);
    return (int)(7 + n);
}

int xg_srtp_sdp_crypto(char *buf, size_t cap, unsigned tag, const struct xg_srtp_key *key)
{
    if (!srtp_key_ok(key) || !buf || tag < 1 || tag > 999999999u) return -EINVAL;
    char k[64];
    int kn = xg_srtp_key_format(key, k, sizeof k);
    if (kn < 0) return kn;
    int n = snprintf(buf, cap, "a=crypto:%u %s %s\r\n", tag, xg_srtp_suite_name(key->suite), k);
    explicit_bzero(k, sizeof k);
    if (n < 0) return -EINVAL;
    if ((size_t)n >= cap) {
        explicit_bzero(buf, cap);
        if (cap) buf[0] = '\0';
        return -EMSGSIZE;
    }
    return n;
}

int xg_srtp_sdp_secure(char *buf, size_t cap, size_t *len, const struct xg_srtp_key *key)
{
    if (!buf || !len || *len >= cap || !srtp_key_ok(key)) return -EINVAL;
    size_t n = *len;
    /* where "RTP/AVP" profiles sit on m= lines (insert 'S' after "RTP/") */
    size_t at[16];
    int n_at = 0, n_m = 0;
    for (size_t i = 0; i + 2 <= n; i++) {
        if ((i == 0 || buf[i - 1] == '\n') && buf[i] == 'm' && buf[i + 1] == '=') {
            n_m++;
            /* m=<media> <port>[/<n>] <proto> */
            size_t j = i + 2, sp = 0;
            while (j < n && buf[j] != '\r' && buf[j] != '\n' && sp < 2) {
                if (buf[j] == ' ') sp++;
                j++;
            }
            if (sp == 2 && j + 7 <= n && !strncmp(buf + j, "RTP/AVP", 7) && n_at < 16)
                at[n_at++] = j + 4;
        }
    }
    if (n_m == 0) return -EINVAL;
    char line[128];
    int ln = xg_srtp_sdp_crypto(line, sizeof line, 1, key);
    if (ln < 0) return ln;
    bool need_crlf = n > 0 && buf[n - 1] != '\n';
    size_t total = n + (size_t)n_at + (need_crlf ? 2 : 0) + (size_t)ln;
    if (total + 1 > cap) {
        explicit_bzero(line, sizeof line);
        return -EMSGSIZE;
    }
    /* insert from the last position backwards */
    size_t cur = n;
    for (int k = n_at - 1; k >= 0; k--) {
        memmove(buf + at[k] + 1, buf + at[k], cur - at[k]);
        buf[at[k]] = 'S';
        cur++;
        /* later positions already moved; earlier ones are unaffected */
    }
    if (need_crlf) {
        memcpy(buf + cur, "\r\n", 2);
        cur += 2;
    }
    memcpy(buf + cur, line, (size_t)ln);
    cur += (size_t)ln;
    buf[cur] = '\0';
    explicit_bzero(line, sizeof line);
    *len = cur;
    return 0;
}

/* ---- config ---- */

int xg_srtp_conf_read(const struct xg_conf *conf, struct xg_srtp_conf *out, struct xg_error *err)
{
    memset(out, 0, sizeof *out);
    const struct xg_conf *sec = xg_conf_get(conf, "srtp");
    if (!sec) return 0;
    int rc = xg_conf_expect(sec, XG_CONF_MAP, "srtp", err);
    if (rc) return rc;
    const char *suite_s = NULL, *key_file = NULL, *remote_file = NULL;
    if ((rc = xg_conf_string(sec, "suite", NULL, &suite_s, err)) ||
        (rc = xg_conf_string(sec, "key_file", NULL, &key_file, err)) ||
        (rc = xg_conf_string(sec, "remote_key_file", NULL, &remote_file, err)))
        return rc;
    enum xg_srtp_suite suite = XG_SRTP_SUITE_NONE;
    struct xg_error e2 = {0};
    if (suite_s && xg_srtp_suite_parse(suite_s, &suite, &e2))
        return xg_conf_error(err, xg_conf_get(sec, "suite"), -EINVAL, "srtp.%s", e2.msg);
    if (!key_file || !*key_file)
        return xg_conf_error(err, key_file ? xg_conf_get(sec, "key_file") : sec, -EINVAL,
                             "srtp needs 'key_file:' (the key we send with: a file holding "
                             "'inline:<base64 key||salt>' or an a=crypto line)");
    const struct xg_conf *kn = xg_conf_get(sec, "key_file");
    if (xg_conf_path(kn, key_file, out->key_path, sizeof out->key_path))
        return xg_conf_error(err, kn, -ENAMETOOLONG, "srtp.key_file '%s': path too long", key_file);
    bool wr = false;
    rc = key_load(out->key_path, suite, XG_SRTP_AES_CM_128_HMAC_SHA1_80, &out->local, &wr, &e2);
    if (rc) {
        xg_srtp_conf_wipe(out);
        return xg_conf_error(err, kn, rc, "srtp.key_file: %s", e2.msg);
    }
    out->world_readable = out->key_readable = wr;
    out->suite = out->local.suite;
    if (remote_file && *remote_file) {
        const struct xg_conf *rn = xg_conf_get(sec, "remote_key_file");
        if (xg_conf_path(rn, remote_file, out->remote_key_path, sizeof out->remote_key_path)) {
            xg_srtp_conf_wipe(out);
            return xg_conf_error(err, rn, -ENAMETOOLONG, "srtp.remote_key_file '%s': path too long",
                                 remote_file);
        }
        rc = key_load(out->remote_key_path, out->suite, XG_SRTP_SUITE_NONE, &out->remote, &wr, &e2);
        if (rc) {
            xg_srtp_conf_wipe(out);
            return xg_conf_error(err, rn, rc, "srtp.remote_key_file: %s", e2.msg);
        }
        out->remote_key_readable = wr;
        out->world_readable = out->world_readable || wr;
    } else {
        out->remote = out->local;
        out->shared_key = true;
        snprintf(out->remote_key_path, sizeof out->remote_key_path, "%s", out->key_path);
    }
    out->enabled = true;
    return 0;
}

void xg_srtp_conf_wipe(struct xg_srtp_conf *c)
{
    if (!c) return;
    explicit_bzero(&c->local, sizeof c->local);
    explicit_bzero(&c->remote, sizeof c->remote);
}
