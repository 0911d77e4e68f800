/* Bounded byte reader and writer for the protocol codecs.
 *
 * The reader never reads past the end of its buffer: every getter checks what is left, and on a
 * short read it sets the sticky `err` (-EMSGSIZE), leaves the output zeroed, and all later reads
 * fail too, so a codec can read a whole structure and check `r->err` once. Big-endian ("be") is
 * network order (VRPN, RTP, game state, LESS); little-endian ("le") is RGMP's.
 *
 * The writer appends to a caller-owned buffer of fixed capacity; overflow sets the sticky `err`
 * (-EMSGSIZE) and nothing more is written. Neither allocates. */
#ifndef XG_WIRE_H
#define XG_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct xg_reader {
    const uint8_t *buf; /* borrowed */
    size_t len;         /* total bytes */
    size_t off;         /* next byte to read */
    int err;            /* 0, or -EMSGSIZE after a read past the end */
};

struct xg_writer {
    uint8_t *buf; /* borrowed, capacity `cap` */
    size_t cap;
    size_t len; /* bytes written */
    int err;    /* 0, or -EMSGSIZE after an overflow */
};

/** Start reading `len` bytes at `buf` (borrowed; must outlive the reader). */
static inline void xg_reader_init(struct xg_reader *r, const void *buf, size_t len)
{
    r->buf = (const uint8_t *)buf;
    r->len = len;
    r->off = 0;
    r->err = 0;
}

/** Bytes left to read (0 after an error). */
static inline size_t xg_reader_left(const struct xg_reader *r)
{
    return r->err ? 0 : r->len - r->off;
}

/** Pointer to the next `n` bytes and advance, or NULL (and err set) if fewer are left. */
const uint8_t *xg_read_bytes(struct xg_reader *r, size_t n);
/** Copy `n` bytes into `dst` (zero-filled on a short read). */
int xg_read_copy(struct xg_reader *r, void *dst, size_t n);
/** Skip `n` bytes. */
int xg_read_skip(struct xg_reader *r, size_t n);
/** A sub-reader over the next `n` bytes; the parent advances past them. */
int xg_read_sub(struct xg_reader *r, size_t n, struct xg_reader *sub);

uint8_t xg_read_u8(struct xg_reader *r);
uint16_t xg_read_be16(struct xg_reader *r);
uint32_t xg_read_be32(struct xg_reader *r);
uint64_t xg_read_be64(struct xg_reader *r);
uint16_t xg_read_le16(struct xg_reader *r);
uint32_t xg_read_le32(struct xg_reader *r);
uint64_t xg_read_le64(struct xg_reader *r);
/** IEEE binary32 / binary64 in the given byte order. */
float xg_read_bef32(struct xg_reader *r);
double xg_read_bef64(struct xg_reader *r);
float xg_read_lef32(struct xg_reader *r);
double xg_read_lef64(struct xg_reader *r);
/** IEEE binary16, big-endian, widened to float. */
float xg_read_bef16(struct xg_reader *r);
float xg_read_lef16(struct xg_reader *r);

/** Start writing into `buf` of capacity `cap` (borrowed). */
static inline void xg_writer_init(struct xg_writer *w, void *buf, size_t cap)
{
    w->buf = (uint8_t *)buf;
    w->cap = cap;
    w->len = 0;
    w->err = 0;
}

/** Reserve `n` bytes and return a pointer to them (NULL and err set on overflow). */
uint8_t *xg_write_reserve(struct xg_writer *w, size_t n);
int xg_write_bytes(struct xg_writer *w, const void *src, size_t n);
/** Append `n` zero bytes. */
int xg_write_zeros(struct xg_writer *w, size_t n);
int xg_write_u8(struct xg_writer *w, uint8_t v);
int xg_write_be16(struct xg_writer *w, uint16_t v);
int xg_write_be32(struct xg_writer *w, uint32_t v);
int xg_write_be64(struct xg_writer *w, uint64_t v);
int xg_write_le16(struct xg_writer *w, uint16_t v);
int xg_write_le32(struct xg_writer *w, uint32_t v);
int xg_write_le64(struct xg_writer *w, uint64_t v);
int xg_write_bef32(struct xg_writer *w, float v);
int xg_write_bef64(struct xg_writer *w, double v);
int xg_write_lef32(struct xg_writer *w, float v);
int xg_write_lef64(struct xg_writer *w, double v);
/** IEEE binary16 (round-to-nearest-even from float). */
int xg_write_bef16(struct xg_writer *w, float v);
int xg_write_lef16(struct xg_writer *w, float v);

/** Patch helpers: overwrite at absolute offset `at` (< len) without moving len. */
int xg_write_be16_at(struct xg_writer *w, size_t at, uint16_t v);
int xg_write_be32_at(struct xg_writer *w, size_t at, uint32_t v);
int xg_write_le32_at(struct xg_writer *w, size_t at, uint32_t v);

/** Plain load/store helpers for code that has already bounds-checked its buffer. */
static inline uint16_t xg_load_be16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}
static inline uint32_t xg_load_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline uint16_t xg_load_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t xg_load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline void xg_store_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static inline void xg_store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static inline void xg_store_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

#endif
