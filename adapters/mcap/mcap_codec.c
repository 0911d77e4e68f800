/* MCAP records: encoders and the bounded decoder (mcap_codec.h). */
#include "adapters/mcap/mcap_codec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

void mcap_buf_free(struct mcap_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

bool mcap_buf_reserve(struct mcap_buf *b, size_t extra)
{
    if (b->oom) return false;
    if (b->cap - b->n >= extra) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->n < extra) {
        if (cap > SIZE_MAX / 2) {
            b->oom = true;
            return false;
        }
        cap *= 2;
    }
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void mcap_put_str(struct mcap_buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    mcap_put_u32(b, (uint32_t)n);
    mcap_put_bytes(b, s, n);
}

size_t mcap_record_begin(struct mcap_buf *b, enum mcap_op op)
{
    mcap_put_u8(b, (uint8_t)op);
    size_t at = b->n;
    mcap_put_u64(b, 0);
    return at;
}

void mcap_record_end(struct mcap_buf *b, size_t at)
{
    if (b->oom || at + 8 > b->n) return;
    uint64_t len = b->n - at - 8;
    for (int i = 0; i < 8; i++)
        b->p[at + (size_t)i] = (uint8_t)(len >> (8 * i));
}

/* A uint32 byte-length prefix whose value is filled in by len_end(). */
static size_t len_begin(struct mcap_buf *b)
{
    size_t at = b->n;
    mcap_put_u32(b, 0);
    return at;
}

static void len_end(struct mcap_buf *b, size_t at)
{
    if (b->oom || at + 4 > b->n) return;
    uint32_t len = (uint32_t)(b->n - at - 4);
    for (int i = 0; i < 4; i++)
        b->p[at + (size_t)i] = (uint8_t)(len >> (8 * i));
}

static void put_map(struct mcap_buf *b, size_t n, const char *const *keys, const char *const *vals)
{
    size_t at = len_begin(b);
    for (size_t i = 0; i < n; i++) {
        mcap_put_str(b, keys[i]);
        mcap_put_str(b, vals[i]);
    }
    len_end(b, at);
}

uint32_t mcap_crc32(uint32_t crc, const void *data, size_t n)
{
    /* zlib's CRC-32 (the same polynomial and conditioning; crc32_z takes a size_t length) */
    return (uint32_t)crc32_z(crc, data, n);
}

void mcap_header(struct mcap_buf *b, const char *profile, const char *library)
{
    size_t at = mcap_record_begin(b, MCAP_OP_HEADER);
    mcap_put_str(b, profile);
    mcap_put_str(b, library);
    mcap_record_end(b, at);
}

void mcap_schema(struct mcap_buf *b, uint16_t id, const char *name, const char *encoding,
                 const void *data, size_t len)
{
    size_t at = mcap_record_begin(b, MCAP_OP_SCHEMA);
    mcap_put_u16(b, id);
    mcap_put_str(b, name);
    mcap_put_str(b, encoding);
    mcap_put_u32(b, (uint32_t)len);
    mcap_put_bytes(b, data, len);
    mcap_record_end(b, at);
}

void mcap_channel(struct mcap_buf *b, uint16_t id, uint16_t schema_id, const char *topic,
                  const char *message_encoding, size_t n, const char *const *keys,
                  const char *const *vals)
{
    size_t at = mcap_record_begin(b, MCAP_OP_CHANNEL);
    mcap_put_u16(b, id);
    mcap_put_u16(b, schema_id);
    mcap_put_str(b, topic);
    mcap_put_str(b, message_encoding);
    put_map(b, n, keys, vals);
    mcap_record_end(b, at);
}

void mcap_message(struct mcap_buf *b, uint16_t channel, uint32_t sequence, uint64_t log_time,
                  uint64_t publish_time, const void *data, size_t len)
{
    size_t at = mcap_record_begin(b, MCAP_OP_MESSAGE);
    mcap_put_u16(b, channel);
    mcap_put_u32(b, sequence);
    mcap_put_u64(b, log_time);
    mcap_put_u64(b, publish_time);
    mcap_put_bytes(b, data, len);
    mcap_record_end(b, at);
}

void mcap_metadata(struct mcap_buf *b, const char *name, size_t n, const char *const *keys,
                   const char *const *vals)
{
    size_t at = mcap_record_begin(b, MCAP_OP_METADATA);
    mcap_put_str(b, name);
    put_map(b, n, keys, vals);
    mcap_record_end(b, at);
}

void mcap_chunk_index(struct mcap_buf *b, const struct mcap_chunk_index *ci)
{
    size_t at = mcap_record_begin(b, MCAP_OP_CHUNK_INDEX);
    mcap_put_u64(b, ci->message_start_time);
    mcap_put_u64(b, ci->message_end_time);
    mcap_put_u64(b, ci->chunk_start_offset);
    mcap_put_u64(b, ci->chunk_length);
    size_t m = len_begin(b);
    for (int i = 0; i < ci->n_index; i++) {
        mcap_put_u16(b, ci->index_channels[i]);
        mcap_put_u64(b, ci->index_offsets[i]);
    }
    len_end(b, m);
    mcap_put_u64(b, ci->message_index_length);
    mcap_put_str(b, ci->compression);
    mcap_put_u64(b, ci->compressed_size);
    mcap_put_u64(b, ci->uncompressed_size);
    mcap_record_end(b, at);
}

void mcap_statistics(struct mcap_buf *b, const struct mcap_statistics *st)
{
    size_t at = mcap_record_begin(b, MCAP_OP_STATISTICS);
    mcap_put_u64(b, st->message_count);
    mcap_put_u16(b, st->schema_count);
    mcap_put_u32(b, st->channel_count);
    mcap_put_u32(b, st->attachment_count);
    mcap_put_u32(b, st->metadata_count);
    mcap_put_u32(b, st->chunk_count);
    mcap_put_u64(b, st->message_start_time);
    mcap_put_u64(b, st->message_end_time);
    size_t m = len_begin(b);
    for (int i = 0; i < st->n_channels; i++) {
        mcap_put_u16(b, st->channel_ids[i]);
        mcap_put_u64(b, st->channel_counts[i]);
    }
    len_end(b, m);
    mcap_record_end(b, at);
}

void mcap_metadata_index(struct mcap_buf *b, uint64_t offset, uint64_t length, const char *name)
{
    size_t at = mcap_record_begin(b, MCAP_OP_METADATA_INDEX);
    mcap_put_u64(b, offset);
    mcap_put_u64(b, length);
    mcap_put_str(b, name);
    mcap_record_end(b, at);
}

void mcap_summary_offset(struct mcap_buf *b, uint8_t group_opcode, uint64_t group_start,
                         uint64_t group_length)
{
    size_t at = mcap_record_begin(b, MCAP_OP_SUMMARY_OFFSET);
    mcap_put_u8(b, group_opcode);
    mcap_put_u64(b, group_start);
    mcap_put_u64(b, group_length);
    mcap_record_end(b, at);
}

void mcap_data_end(struct mcap_buf *b, uint32_t data_section_crc)
{
    size_t at = mcap_record_begin(b, MCAP_OP_DATA_END);
    mcap_put_u32(b, data_section_crc);
    mcap_record_end(b, at);
}

void mcap_footer(struct mcap_buf *b, uint64_t summary_start, uint64_t summary_offset_start,
                 uint32_t summary_crc)
{
    size_t at = mcap_record_begin(b, MCAP_OP_FOOTER);
    mcap_put_u64(b, summary_start);
    mcap_put_u64(b, summary_offset_start);
    mcap_put_u32(b, summary_crc);
    mcap_record_end(b, at);
}

/* ---- decoding ---- */

uint32_t mcap_get_str(struct xg_reader *c, const uint8_t **s)
{
    uint32_t n = xg_read_le32(c);
    *s = xg_read_bytes(c, n);
    return *s ? n : 0;
}

int mcap_next_record(const uint8_t *p, size_t n, size_t *off, uint64_t max_len,
                     struct mcap_record *r)
{
    if (*off > n || n - *off < 9) return -EAGAIN;
    struct xg_reader c;
    xg_reader_init(&c, p + *off, n - *off);
    r->op = xg_read_u8(&c);
    r->len = xg_read_le64(&c);
    if (r->len > max_len) return -EMSGSIZE;
    if (c.len - c.off < r->len) return -EAGAIN;
    r->body = c.buf + c.off;
    *off += 9 + (size_t)r->len;
    return 0;
}

int mcap_parse_message(const struct mcap_record *r, struct mcap_msg *m)
{
    struct xg_reader c;
    xg_reader_init(&c, r->body, (size_t)r->len);
    m->channel = xg_read_le16(&c);
    m->sequence = xg_read_le32(&c);
    m->log_time = xg_read_le64(&c);
    m->publish_time = xg_read_le64(&c);
    if (c.err) return -EPROTO;
    m->data = c.buf + c.off;
    m->len = c.len - c.off;
    return 0;
}

int mcap_parse_chunk(const struct mcap_record *r, struct mcap_chunk *k, struct xg_error *err)
{
    struct xg_reader c;
    xg_reader_init(&c, r->body, (size_t)r->len);
    k->message_start_time = xg_read_le64(&c);
    k->message_end_time = xg_read_le64(&c);
    k->uncompressed_size = xg_read_le64(&c);
    k->uncompressed_crc = xg_read_le32(&c);
    const uint8_t *s;
    uint32_t sl = mcap_get_str(&c, &s);
    if (c.err) return xg_error_set(err, -EPROTO, "chunk: fixed fields or compression overrun");
    if (sl >= sizeof k->compression)
        return xg_error_set(err, -EPROTO, "chunk: compression name of %u bytes (at most %zu)",
                            (unsigned)sl, sizeof k->compression - 1);
    memcpy(k->compression, s, sl);
    k->compression[sl] = '\0';
    uint64_t rl = xg_read_le64(&c);
    if (c.err || rl > c.len - c.off)
        return xg_error_set(err, -EPROTO,
                            "chunk: records length %llu exceeds the %zu bytes left in the record",
                            (unsigned long long)rl, c.err ? (size_t)0 : c.len - c.off);
    k->records = c.buf + c.off;
    k->records_len = (size_t)rl;
    return 0;
}
