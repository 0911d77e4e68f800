#include "core/table/names.h"

#include <errno.h>
#include <mbedtls/md.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/conf/conf.h"
#include "core/util/error.h"

/* "~" + XG_NAME_HASH_HEX lowercase hex digits at the end of s[0..len) */
static bool looks_fitted(const char *s, size_t len)
{
    if (len < XG_NAME_HASH_HEX + 1 || s[len - XG_NAME_HASH_HEX - 1] != '~') return false;
    for (size_t i = len - XG_NAME_HASH_HEX; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
}

/* text[0..tlen) cut to fit (at a UTF-8 character boundary) + "~" + the first 96 bits of the
 * SHA-256 of raw[0..rlen) in hex */
static size_t fit_hashed(char *out, size_t size, const char *text, size_t tlen, const char *raw,
                         size_t rlen)
{
    unsigned char h[32];
    const mbedtls_md_info_t *md = mbedtls_md_info_from_type(MBEDTLS_MD_SHA256);
    if (!md || mbedtls_md(md, (const unsigned char *)raw, rlen, h)) memset(h, 0, sizeof h);
    size_t keep = size - 1 - (XG_NAME_HASH_HEX + 1);
    if (keep > tlen) keep = tlen;
    /* do not cut a UTF-8 sequence: back off over continuation bytes to a lead byte */
    if (keep < tlen && ((unsigned char)text[keep] & 0xC0) == 0x80) {
        size_t k = keep;
        while (k > 0 && ((unsigned char)text[k] & 0xC0) == 0x80)
            k--;
        keep = k;
    }
    memcpy(out, text, keep);
    out[keep] = '~';
    for (int i = 0; i < XG_NAME_HASH_HEX / 2; i++)
        snprintf(out + keep + 1 + 2 * i, 3, "%02x", h[i]);
    return keep + 1 + XG_NAME_HASH_HEX;
}

size_t xg_name_fit(char *out, size_t size, const char *s, size_t len)
{
    /* an embedded NUL would end the name early: "A\0x" and "A\0y" must not both become "A" */
    const char *nul = memchr(s, '\0', len);
    size_t text = nul ? (size_t)(nul - s) : len;
    if (!nul && len < size && !looks_fitted(s, len)) {
        memcpy(out, s, len);
        out[len] = '\0';
        return len;
    }
    return fit_hashed(out, size, s, text, s, len);
}

size_t xg_utf8_seq(const char *str, size_t left)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned char c = s[0];
    size_t n;
    unsigned cp;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n > left) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3fu);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return n;
}

bool xg_utf8_valid(const char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        if ((unsigned char)s[i] < 0x80) { /* ASCII: the common case */
            i++;
            continue;
        }
        size_t n = xg_utf8_seq(s + i, len - i);
        if (!n) return false;
        i += n;
    }
    return true;
}

size_t xg_utf8_repair(char *out, const char *s, size_t len)
{
    size_t tl = 0;
    for (size_t i = 0; i < len;) {
        size_t n = xg_utf8_seq(s + i, len - i);
        if (n && s[i]) {
            memcpy(out + tl, s + i, n);
            tl += n;
            i += n;
        } else {
            memcpy(out + tl, "\xef\xbf\xbd", 3);
            tl += 3;
            i++;
        }
    }
    return tl;
}

size_t xg_name_utf8(char *out, size_t size, const char *s, size_t len)
{
    if (xg_utf8_valid(s, len)) return xg_name_fit(out, size, s, len);
    /* each invalid byte becomes U+FFFD (3 bytes): at most 3·len */
    char small[384];
    char *t = 3 * len <= sizeof small ? small : malloc(3 * len);
    if (!t) {
        out[0] = '\0';
        return 0;
    }
    size_t r = fit_hashed(out, size, t, xg_utf8_repair(t, s, len), s, len);
    if (t != small) free(t);
    return r;
}

size_t xg_name_fitf(char *out, size_t size, const char *fmt, ...)
{
    char small[256] = {0}; /* (expand() fills it; zeroed so that no compiler sees it unset) */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        out[0] = '\0';
        return 0;
    }
    if ((size_t)n < sizeof small) return xg_name_fit(out, size, small, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (!big) {
        out[0] = '\0';
        return 0;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    size_t r = xg_name_fit(out, size, big, (size_t)n);
    free(big);
    return r;
}

/* ---- name templates ---- */

#define KNOWN "{name}, {adapter} (also spelt {origin}), {source}, {kind}; {{ and }} write braces"

void xg_name_vars_set(struct xg_name_vars *v, const char *name, const char *adapter,
                      const char *kind)
{
    v->name = name ? name : "";
    v->adapter = adapter ? adapter : "";
    v->kind = kind ? kind : "";
    size_t alen = strlen(v->adapter);
    bool prefixed = alen && !strncmp(v->name, v->adapter, alen) && v->name[alen] == '/';
    v->source = prefixed ? v->name + alen + 1 : v->name;
}

/* The placeholder "{...}" at p (p[0] == '{', not "{{"): its value, or NULL if unknown; *plen is
 * the placeholder's length incl. the braces, 0 if it is not closed. */
static const char *placeholder_value(const char *p, const struct xg_name_vars *v, size_t *plen,
                                     size_t *vlen)
{
    const char *end = strchr(p + 1, '}');
    if (!end) {
        *plen = 0;
        return NULL;
    }
    size_t n = (size_t)(end - p) + 1;
    *plen = n;
    const char *val = NULL;
    if (n == 6 && !strncmp(p, "{name}", 6))
        val = v ? v->name : "";
    else if ((n == 9 && !strncmp(p, "{adapter}", 9)) || (n == 8 && !strncmp(p, "{origin}", 8)))
        val = v ? v->adapter : "";
    else if (n == 8 && !strncmp(p, "{source}", 8))
        val = v ? v->source : "";
    else if (n == 6 && !strncmp(p, "{kind}", 6))
        val = v ? v->kind : "";
    else
        return NULL;
    if (!val) val = "";
    *vlen = strlen(val);
    return val;
}

int xg_name_template_check(const char *tpl, const struct xg_conf *at, const char *key,
                           struct xg_error *err)
{
    for (const char *p = tpl; *p; p++) {
        if (p[0] == '{' && p[1] == '{') {
            p++;
            continue;
        }
        if (p[0] != '{') continue;
        size_t plen, vlen;
        if (placeholder_value(p, NULL, &plen, &vlen)) {
            p += plen - 1;
            continue;
        }
        if (!plen)
            return xg_conf_error(err, at, -EINVAL,
                                 "%s: '{' without a closing '}' in '%s' (write {{ for a brace)",
                                 key, tpl);
        return xg_conf_error(err, at, -EINVAL,
                             "%s: unknown placeholder '%.*s' in '%s' (known: " KNOWN ")", key,
                             (int)plen, p, tpl);
    }
    return 0;
}

/* Writes the expansion into out when out != NULL; returns its length either way. */
static size_t expand(char *out, const char *tpl, const struct xg_name_vars *v)
{
    size_t o = 0;
    for (const char *p = tpl; *p;) {
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
            if (out) out[o] = p[0];
            o++;
            p += 2;
            continue;
        }
        size_t plen = 0, vlen = 0;
        const char *val = p[0] == '{' ? placeholder_value(p, v, &plen, &vlen) : NULL;
        if (val) {
            if (out) memcpy(out + o, val, vlen);
            o += vlen;
            p += plen;
        } else {
            if (out) out[o] = *p;
            o++;
            p++;
        }
    }
    return o;
}

size_t xg_name_expand(char *out, size_t size, const char *tpl, const struct xg_name_vars *v)
{
    char small[256] = {0}; /* (expand() fills it; zeroed so that no compiler sees it unset) */
    size_t n = expand(NULL, tpl, v);
    char *buf = n < sizeof small ? small : malloc(n + 1);
    if (!buf) {
        out[0] = '\0';
        return 0;
    }
    expand(buf, tpl, v);
    size_t r = xg_name_fit(out, size, buf, n);
    if (buf != small) free(buf);
    return r;
}
