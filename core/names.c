#include "core/names.h"

#include <mbedtls/md.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "~" + XG_NAME_HASH_HEX lowercase hex digits at the end of s[0..len) */
static bool looks_fitted(const char *s, size_t len)
{
    if (len < XG_NAME_HASH_HEX + 1 || s[len - XG_NAME_HASH_HEX - 1] != '~') return false;
    for (size_t i = len - XG_NAME_HASH_HEX; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
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
    unsigned char h[32];
    const mbedtls_md_info_t *md = mbedtls_md_info_from_type(MBEDTLS_MD_SHA256);
    if (!md || mbedtls_md(md, (const unsigned char *)s, len, h)) memset(h, 0, sizeof h);
    size_t keep = size - 1 - (XG_NAME_HASH_HEX + 1);
    if (keep > text) keep = text;
    /* do not cut a UTF-8 sequence: back off over continuation bytes to a lead byte */
    if (keep < text && ((unsigned char)s[keep] & 0xC0) == 0x80) {
        size_t k = keep;
        while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80)
            k--;
        keep = k;
    }
    memcpy(out, s, keep);
    out[keep] = '~';
    for (int i = 0; i < XG_NAME_HASH_HEX / 2; i++)
        snprintf(out + keep + 1 + 2 * i, 3, "%02x", h[i]);
    return keep + 1 + XG_NAME_HASH_HEX;
}

size_t xg_name_fitf(char *out, size_t size, const char *fmt, ...)
{
    char small[256];
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
