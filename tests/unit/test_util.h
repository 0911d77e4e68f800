/* Helpers shared by the unit tests (header-only; include after <cmocka.h>). */
#ifndef XG_TEST_UTIL_H
#define XG_TEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util/error.h"

/** Decode hex digits from `s` into out (at most cap bytes); any other character is a separator.
 *  Fails the test on an odd digit count or overflow. Returns the byte count. */
static inline size_t xg_test_unhex(const char *s, uint8_t *out, size_t cap)
{
    size_t n = 0;
    int hi = -1;
    for (; *s; s++) {
        int v;
        if (*s >= '0' && *s <= '9')
            v = *s - '0';
        else if (*s >= 'a' && *s <= 'f')
            v = *s - 'a' + 10;
        else if (*s >= 'A' && *s <= 'F')
            v = *s - 'A' + 10;
        else
            continue;
        if (hi < 0) {
            hi = v;
        } else {
            assert_true(n < cap);
            out[n++] = (uint8_t)(hi << 4 | v);
            hi = -1;
        }
    }
    assert_int_equal(hi, -1);
    return n;
}

/** Fail unless got[0..got_len) equals the bytes written in hex (printing both on failure). */
static inline void xg_test_assert_bytes(const uint8_t *got, size_t got_len, const char *hex)
{
    uint8_t want[512];
    size_t n = xg_test_unhex(hex, want, sizeof want);
    if (got_len != n || memcmp(got, want, n) != 0) {
        fprintf(stderr, "want %s\n got ", hex);
        for (size_t i = 0; i < got_len; i++)
            fprintf(stderr, "%02x ", got[i]);
        fprintf(stderr, "\n");
        fail();
    }
}

/** Fail unless the error message contains `needle`. */
static inline void xg_test_assert_err_contains(const struct xg_error *e, const char *needle)
{
    if (!strstr(e->msg, needle)) {
        fprintf(stderr, "error \"%s\" lacks \"%s\"\n", e->msg, needle);
        fail();
    }
}

/** Run fn(arg) with stderr (fd 2) redirected to a temporary file; what it wrote lands in
 *  out[0..cap) as a NUL-terminated string (cut at cap - 1 bytes). */
static inline void xg_test_capture_stderr(void (*fn)(void *), void *arg, char *out, size_t cap)
{
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    dup2(fileno(tmp), 2);
    fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(out, 1, cap - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
}

/** The whole file at `path` in a malloc'd buffer with a NUL after its last byte (the caller frees
 *  it), *len = its size in bytes; NULL if the file cannot be opened. A failed read fails the
 *  test. */
static inline uint8_t *xg_test_read_file(const char *path, size_t *len)
{
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    assert_true(n >= 0);
    uint8_t *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

#ifdef XG_SOURCE_DIR
/** Read tests/vectors/<dir>/<name>.bin of the source tree into out (cap bytes; a longer file
 *  fails the test); *n gets the byte count. Returns false if the file cannot be opened. */
static inline bool xg_test_read_vector(const char *dir, const char *name, uint8_t *out, size_t cap,
                                       size_t *n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/vectors/%s/%s.bin", XG_SOURCE_DIR, dir, name);
    uint8_t *b = xg_test_read_file(path, n);
    if (!b) return false;
    assert_true(*n <= cap);
    memcpy(out, b, *n);
    free(b);
    return true;
}
#endif

/** Number of '\n' in s. */
static inline int xg_test_count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

#endif
