#include "core/util/wire.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "core/util/float16.h"

const uint8_t *xg_read_bytes(struct xg_reader *r, size_t n)
{
    if (r->err || n > r->len - r->off) {
        r->err = -EMSGSIZE;
        return NULL;
    }
    const uint8_t *p = r->buf + r->off;
    r->off += n;
    return p;
}

int xg_read_copy(struct xg_reader *r, void *dst, size_t n)
{
    const uint8_t *p = xg_read_bytes(r, n);
    if (!p) {
        memset(dst, 0, n);
        return r->err;
    }
    memcpy(dst, p, n);
    return 0;
}

int xg_read_skip(struct xg_reader *r, size_t n)
{
    return xg_read_bytes(r, n) ? 0 : r->err;
}

int xg_read_sub(struct xg_reader *r, size_t n, struct xg_reader *sub)
{
    const uint8_t *p = xg_read_bytes(r, n);
    xg_reader_init(sub, p, p ? n : 0);
    if (!p) sub->err = r->err;
    return r->err;
}

uint8_t xg_read_u8(struct xg_reader *r)
{
    const uint8_t *p = xg_read_bytes(r, 1);
    return p ? p[0] : 0;
}

/* n is a constant at every call (2, 4 or 8): each accessor compiles to one load and a byte
 * swap where the host order differs */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_LE 1
#else
#define HOST_LE 0
#endif

static inline __attribute__((always_inline)) uint64_t load_n(const uint8_t *p, size_t n, bool be)
{
    if (n == 2) {
        uint16_t x;
        memcpy(&x, p, 2);
        return be == HOST_LE ? __builtin_bswap16(x) : x;
    }
    if (n == 4) {
        uint32_t x;
        memcpy(&x, p, 4);
        return be == HOST_LE ? __builtin_bswap32(x) : x;
    }
    uint64_t x; /* n == 8 */
    memcpy(&x, p, 8);
    return be == HOST_LE ? __builtin_bswap64(x) : x;
}

static inline __attribute__((always_inline)) void store_n(uint8_t *p, uint64_t v, size_t n, bool be)
{
    if (n == 2) {
        uint16_t x = (uint16_t)v;
        if (be == HOST_LE) x = __builtin_bswap16(x);
        memcpy(p, &x, 2);
    } else if (n == 4) {
        uint32_t x = (uint32_t)v;
        if (be == HOST_LE) x = __builtin_bswap32(x);
        memcpy(p, &x, 4);
    } else { /* n == 8 */
        if (be == HOST_LE) v = __builtin_bswap64(v);
        memcpy(p, &v, 8);
    }
}

static inline __attribute__((always_inline)) uint64_t read_be(struct xg_reader *r, size_t n)
{
    const uint8_t *p = xg_read_bytes(r, n);
    return p ? load_n(p, n, true) : 0;
}

static inline __attribute__((always_inline)) uint64_t read_le(struct xg_reader *r, size_t n)
{
    const uint8_t *p = xg_read_bytes(r, n);
    return p ? load_n(p, n, false) : 0;
}

uint16_t xg_read_be16(struct xg_reader *r)
{
    return (uint16_t)read_be(r, 2);
}
uint32_t xg_read_be32(struct xg_reader *r)
{
    return (uint32_t)read_be(r, 4);
}
uint64_t xg_read_be64(struct xg_reader *r)
{
    return read_be(r, 8);
}
uint16_t xg_read_le16(struct xg_reader *r)
{
    return (uint16_t)read_le(r, 2);
}
uint32_t xg_read_le32(struct xg_reader *r)
{
    return (uint32_t)read_le(r, 4);
}
uint64_t xg_read_le64(struct xg_reader *r)
{
    return read_le(r, 8);
}

static float u32_to_f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static double u64_to_d(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

float xg_read_bef32(struct xg_reader *r)
{
    return u32_to_f(xg_read_be32(r));
}
double xg_read_bef64(struct xg_reader *r)
{
    return u64_to_d(xg_read_be64(r));
}
float xg_read_lef32(struct xg_reader *r)
{
    return u32_to_f(xg_read_le32(r));
}
double xg_read_lef64(struct xg_reader *r)
{
    return u64_to_d(xg_read_le64(r));
}
float xg_read_bef16(struct xg_reader *r)
{
    return xg_f16_to_float(xg_read_be16(r));
}
float xg_read_lef16(struct xg_reader *r)
{
    return xg_f16_to_float(xg_read_le16(r));
}

uint8_t *xg_write_reserve(struct xg_writer *w, size_t n)
{
    if (w->err || n > w->cap - w->len) {
        w->err = -EMSGSIZE;
        return NULL;
    }
    uint8_t *p = w->buf + w->len;
    w->len += n;
    return p;
}

int xg_write_bytes(struct xg_writer *w, const void *src, size_t n)
{
    uint8_t *p = xg_write_reserve(w, n);
    if (!p) return w->err;
    if (n) memcpy(p, src, n);
    return 0;
}

int xg_write_zeros(struct xg_writer *w, size_t n)
{
    uint8_t *p = xg_write_reserve(w, n);
    if (!p) return w->err;
    memset(p, 0, n);
    return 0;
}

static inline __attribute__((always_inline)) int write_be(struct xg_writer *w, uint64_t v, size_t n)
{
    uint8_t *p = xg_write_reserve(w, n);
    if (!p) return w->err;
    store_n(p, v, n, true);
    return 0;
}

static inline __attribute__((always_inline)) int write_le(struct xg_writer *w, uint64_t v, size_t n)
{
    uint8_t *p = xg_write_reserve(w, n);
    if (!p) return w->err;
    store_n(p, v, n, false);
    return 0;
}

int xg_write_u8(struct xg_writer *w, uint8_t v)
{
    uint8_t *p = xg_write_reserve(w, 1);
    if (!p) return w->err;
    *p = v;
    return 0;
}
int xg_write_be16(struct xg_writer *w, uint16_t v)
{
    return write_be(w, v, 2);
}
int xg_write_be32(struct xg_writer *w, uint32_t v)
{
    return write_be(w, v, 4);
}
int xg_write_be64(struct xg_writer *w, uint64_t v)
{
    return write_be(w, v, 8);
}
int xg_write_le16(struct xg_writer *w, uint16_t v)
{
    return write_le(w, v, 2);
}
int xg_write_le32(struct xg_writer *w, uint32_t v)
{
    return write_le(w, v, 4);
}
int xg_write_le64(struct xg_writer *w, uint64_t v)
{
    return write_le(w, v, 8);
}

static uint32_t f_to_u32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static uint64_t d_to_u64(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

int xg_write_bef32(struct xg_writer *w, float v)
{
    return write_be(w, f_to_u32(v), 4);
}
int xg_write_bef64(struct xg_writer *w, double v)
{
    return write_be(w, d_to_u64(v), 8);
}
int xg_write_lef32(struct xg_writer *w, float v)
{
    return write_le(w, f_to_u32(v), 4);
}
int xg_write_lef64(struct xg_writer *w, double v)
{
    return write_le(w, d_to_u64(v), 8);
}
int xg_write_bef16(struct xg_writer *w, float v)
{
    return write_be(w, xg_f16_from_float(v), 2);
}
int xg_write_lef16(struct xg_writer *w, float v)
{
    return write_le(w, xg_f16_from_float(v), 2);
}

static int patch_check(struct xg_writer *w, size_t at, size_t n)
{
    if (w->err) return w->err;
    if (at > w->len || n > w->len - at) return w->err = -EMSGSIZE;
    return 0;
}

int xg_write_be16_at(struct xg_writer *w, size_t at, uint16_t v)
{
    int rc = patch_check(w, at, 2);
    if (!rc) xg_store_be16(w->buf + at, v);
    return rc;
}

int xg_write_be32_at(struct xg_writer *w, size_t at, uint32_t v)
{
    int rc = patch_check(w, at, 4);
    if (!rc) xg_store_be32(w->buf + at, v);
    return rc;
}

int xg_write_le32_at(struct xg_writer *w, size_t at, uint32_t v)
{
    int rc = patch_check(w, at, 4);
    if (!rc) xg_store_le32(w->buf + at, v);
    return rc;
}
