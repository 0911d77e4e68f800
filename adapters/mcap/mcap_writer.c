/* MCAP file writer (mcap_writer.h). */
#include "adapters/mcap/mcap_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <lz4frame.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

const char *mcap_compression_name(enum mcap_compression c)
{
    return c == MCAP_COMPRESSION_ZSTD ? "zstd" : c == MCAP_COMPRESSION_LZ4 ? "lz4" : "";
}

int mcap_compression_parse(const char *s, enum mcap_compression *out)
{
    if (!strcmp(s, "none"))
        *out = MCAP_COMPRESSION_NONE;
    else if (!strcmp(s, "zstd"))
        *out = MCAP_COMPRESSION_ZSTD;
    else if (!strcmp(s, "lz4"))
        *out = MCAP_COMPRESSION_LZ4;
    else
        return -EINVAL;
    return 0;
}

/* Write all of b, keeping the CRC and position; the buffer is emptied. */
static int emit(struct mcap_writer *w, struct mcap_buf *b)
{
    if (b->oom) return -ENOMEM;
    size_t off = 0;
    while (off < b->n) {
        ssize_t k = write(w->fd, b->p + off, b->n - off);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        off += (size_t)k;
    }
    w->pos += b->n;
    b->n = 0;
    return 0;
}

static void free_all(struct mcap_writer *w)
{
    mcap_buf_free(&w->chunk);
    for (int i = 0; i < MCAP_MAX_CHANNELS; i++)
        mcap_buf_free(&w->idx[i]);
    mcap_buf_free(&w->schemas);
    mcap_buf_free(&w->channels);
    mcap_buf_free(&w->chunk_indexes);
    mcap_buf_free(&w->metadata_indexes);
    mcap_buf_free(&w->out);
    mcap_buf_free(&w->comp);
    if (w->zstd) ZSTD_freeCCtx(w->zstd);
    w->zstd = NULL;
}

void mcap_writer_abort(struct mcap_writer *w)
{
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
    free_all(w);
}

int mcap_writer_open(struct mcap_writer *w, const char *path, const char *profile,
                     const char *library, enum mcap_compression compression, size_t chunk_size,
                     struct xg_error *err)
{
    memset(w, 0, sizeof *w);
    w->compression = compression;
    w->chunk_size = chunk_size ? chunk_size : 1;
    w->zstd_level = MCAP_ZSTD_LEVEL_DEFAULT;
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        int e = errno;
        return xg_error_set(err, -e, "cannot create '%s': %s", path, strerror(e));
    }
    if (compression == MCAP_COMPRESSION_ZSTD && !(w->zstd = ZSTD_createCCtx())) {
        mcap_writer_abort(w);
        return xg_error_set(err, -ENOMEM, "out of memory (zstd context)");
    }
    mcap_put_bytes(&w->out, MCAP_MAGIC, MCAP_MAGIC_LEN);
    mcap_header(&w->out, profile, library);
    int rc = emit(w, &w->out);
    if (rc) {
        mcap_writer_abort(w);
        return xg_error_set(err, rc, "cannot write '%s': %s", path, strerror(-rc));
    }
    return 0;
}

int mcap_writer_schema(struct mcap_writer *w, uint16_t id, const char *name, const char *encoding,
                       const char *data)
{
    if (id == 0 || id > MCAP_MAX_SCHEMAS) return -EINVAL;
    size_t at = w->out.n;
    mcap_schema(&w->out, id, name, encoding, data, strlen(data));
    mcap_put_bytes(&w->schemas, w->out.p + at, w->out.n - at);
    w->stats.schema_count++;
    return emit(w, &w->out);
}

int mcap_writer_channel(struct mcap_writer *w, uint16_t id, uint16_t schema_id, const char *topic,
                        const char *message_encoding, size_t n, const char *const *keys,
                        const char *const *vals)
{
    if (id >= MCAP_MAX_CHANNELS || w->channel_known[id]) return -EINVAL;
    size_t at = w->out.n;
    mcap_channel(&w->out, id, schema_id, topic, message_encoding, n, keys, vals);
    mcap_put_bytes(&w->channels, w->out.p + at, w->out.n - at);
    w->channel_known[id] = true;
    w->stats.channel_count++;
    w->stats.channel_ids[w->stats.n_channels++] = id;
    return emit(w, &w->out);
}

int mcap_writer_metadata(struct mcap_writer *w, const char *name, size_t n, const char *const *keys,
                         const char *const *vals)
{
    uint64_t offset = w->pos;
    mcap_metadata(&w->out, name, n, keys, vals);
    uint64_t length = w->out.n;
    int rc = emit(w, &w->out);
    if (rc) return rc;
    mcap_metadata_index(&w->metadata_indexes, offset, length, name);
    w->stats.metadata_count++;
    return 0;
}

/* Compress w->chunk into w->comp; returns the bytes to store (w->chunk itself for none). */
static int compress_chunk(struct mcap_writer *w, const uint8_t **data, size_t *len)
{
    const struct mcap_buf *c = &w->chunk;
    w->comp.n = 0;
    if (w->compression == MCAP_COMPRESSION_ZSTD) {
        size_t bound = ZSTD_compressBound(c->n);
        if (!mcap_buf_reserve(&w->comp, bound)) return -ENOMEM;
        size_t k = ZSTD_compressCCtx(w->zstd, w->comp.p, bound, c->p, c->n, w->zstd_level);
        if (ZSTD_isError(k)) return -EIO;
        w->comp.n = k;
    } else if (w->compression == MCAP_COMPRESSION_LZ4) {
        LZ4F_preferences_t prefs;
        memset(&prefs, 0, sizeof prefs);
        prefs.frameInfo.contentSize = c->n;
        size_t bound = LZ4F_compressFrameBound(c->n, &prefs);
        if (!mcap_buf_reserve(&w->comp, bound)) return -ENOMEM;
        size_t k = LZ4F_compressFrame(w->comp.p, bound, c->p, c->n, &prefs);
        if (LZ4F_isError(k)) return -EIO;
        w->comp.n = k;
    } else {
        *data = c->p;
        *len = c->n;
        return 0;
    }
    *data = w->comp.p;
    *len = w->comp.n;
    return 0;
}

int mcap_writer_flush(struct mcap_writer *w)
{
    if (!w->chunk_msgs) return 0;
    if (w->chunk.oom) return -ENOMEM;
    const uint8_t *data = NULL;
    size_t len = 0;
    int rc = compress_chunk(w, &data, &len);
    if (rc) return rc;
    struct mcap_chunk_index ci = {
        .message_start_time = w->chunk_start,
        .message_end_time = w->chunk_end,
        .chunk_start_offset = w->pos,
        .compression = mcap_compression_name(w->compression),
        .compressed_size = len,
        .uncompressed_size = w->chunk.n,
    };
    struct mcap_buf *o = &w->out;
    o->n = 0;
    size_t at = mcap_record_begin(o, MCAP_OP_CHUNK);
    mcap_put_u64(o, w->chunk_start);
    mcap_put_u64(o, w->chunk_end);
    mcap_put_u64(o, w->chunk.n);
    mcap_put_u32(o, mcap_crc32(0, w->chunk.p, w->chunk.n));
    mcap_put_str(o, ci.compression);
    mcap_put_u64(o, len);
    mcap_put_bytes(o, data, len);
    mcap_record_end(o, at);
    ci.chunk_length = o->n;
    size_t idx_start = o->n;
    for (int i = 0; i < w->stats.n_channels; i++) {
        uint16_t ch = w->stats.channel_ids[i];
        struct mcap_buf *ix = &w->idx[ch];
        if (!ix->n) continue;
        ci.index_channels[ci.n_index] = ch;
        ci.index_offsets[ci.n_index++] = w->pos + o->n;
        size_t r = mcap_record_begin(o, MCAP_OP_MESSAGE_INDEX);
        mcap_put_u16(o, ch);
        mcap_put_u32(o, (uint32_t)ix->n);
        mcap_put_bytes(o, ix->p, ix->n);
        mcap_record_end(o, r);
        if (ix->oom) return -ENOMEM;
        ix->n = 0;
    }
    ci.message_index_length = o->n - idx_start;
    if ((rc = emit(w, o))) return rc;
    mcap_chunk_index(&w->chunk_indexes, &ci);
    w->stats.chunk_count++;
    w->chunk.n = 0;
    w->chunk_msgs = 0;
    return 0;
}

/* Times and counts of a message on a known channel. */
static void account(struct mcap_writer *w, uint16_t channel, uint64_t log_time)
{
    if (!w->chunk_msgs || log_time < w->chunk_start) w->chunk_start = log_time;
    if (!w->chunk_msgs || log_time > w->chunk_end) w->chunk_end = log_time;
    struct mcap_statistics *st = &w->stats;
    if (!st->message_count || log_time < st->message_start_time) st->message_start_time = log_time;
    if (!st->message_count || log_time > st->message_end_time) st->message_end_time = log_time;
    st->message_count++;
    for (int i = 0; i < st->n_channels; i++)
        if (st->channel_ids[i] == channel) st->channel_counts[i]++;
    uint64_t pair[2] = {log_time, w->chunk.n};
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    mcap_put_bytes(&w->idx[channel], pair, sizeof pair);
#else
    mcap_put_u64(&w->idx[channel], pair[0]);
    mcap_put_u64(&w->idx[channel], pair[1]);
#endif
    w->chunk_msgs++;
}

int mcap_writer_message(struct mcap_writer *w, uint16_t channel, uint64_t log_time,
                        uint64_t publish_time, const void *data, size_t len)
{
    if (channel >= MCAP_MAX_CHANNELS || !w->channel_known[channel]) return -EINVAL;
    account(w, channel, log_time);
    mcap_message(&w->chunk, channel, w->seq[channel]++, log_time, publish_time, data, len);
    if (w->chunk.oom) return -ENOMEM;
    return w->chunk.n >= w->chunk_size ? mcap_writer_flush(w) : 0;
}

struct mcap_buf *mcap_writer_begin(struct mcap_writer *w, uint16_t channel, uint64_t log_time,
                                   uint64_t publish_time)
{
    w->msg_ch = channel;
    w->msg_at = w->chunk.n;
    if (channel >= MCAP_MAX_CHANNELS || !w->channel_known[channel]) return &w->chunk;
    account(w, channel, log_time);
    mcap_record_begin(&w->chunk, MCAP_OP_MESSAGE); /* its length at msg_at + 1 */
    mcap_put_u16(&w->chunk, channel);
    mcap_put_u32(&w->chunk, w->seq[channel]++);
    mcap_put_u64(&w->chunk, log_time);
    mcap_put_u64(&w->chunk, publish_time);
    return &w->chunk;
}

int mcap_writer_end(struct mcap_writer *w)
{
    if (w->msg_ch >= MCAP_MAX_CHANNELS || !w->channel_known[w->msg_ch]) {
        w->chunk.n = w->msg_at; /* what was appended is dropped */
        return -EINVAL;
    }
    mcap_record_end(&w->chunk, w->msg_at + 1);
    if (w->chunk.oom) return -ENOMEM;
    return w->chunk.n >= w->chunk_size ? mcap_writer_flush(w) : 0;
}

void mcap_writer_set_level(struct mcap_writer *w, int level)
{
    w->zstd_level = level < MCAP_ZSTD_LEVEL_MIN   ? MCAP_ZSTD_LEVEL_MIN
                    : level > MCAP_ZSTD_LEVEL_MAX ? MCAP_ZSTD_LEVEL_MAX
                                                  : level;
}

/* One summary group: the records in b, with a Summary Offset for them in offs. */
static void group(struct mcap_buf *sum, struct mcap_buf *offs, uint64_t base, uint8_t op,
                  const struct mcap_buf *b)
{
    if (!b->n) return;
    mcap_summary_offset(offs, op, base + sum->n, b->n);
    mcap_put_bytes(sum, b->p, b->n);
}

int mcap_writer_close(struct mcap_writer *w)
{
    if (w->fd < 0) return -EBADF;
    int rc = mcap_writer_flush(w);
    if (!rc) {
        mcap_data_end(&w->out, 0); /* 0 = not computed (spec "Data End"), as the reference C++
                                      writer's default: the chunks carry their own CRCs */
        rc = emit(w, &w->out);
    }
    if (!rc) {
        uint64_t summary_start = w->pos;
        struct mcap_buf sum = {0}, offs = {0}, st = {0};
        mcap_statistics(&st, &w->stats);
        group(&sum, &offs, summary_start, MCAP_OP_SCHEMA, &w->schemas);
        group(&sum, &offs, summary_start, MCAP_OP_CHANNEL, &w->channels);
        group(&sum, &offs, summary_start, MCAP_OP_STATISTICS, &st);
        group(&sum, &offs, summary_start, MCAP_OP_CHUNK_INDEX, &w->chunk_indexes);
        group(&sum, &offs, summary_start, MCAP_OP_METADATA_INDEX, &w->metadata_indexes);
        uint64_t offset_start = summary_start + sum.n;
        mcap_put_bytes(&sum, offs.p, offs.n);
        /* the summary CRC covers the summary, the summary offsets and the footer's fields up to
         * and including summary_offset_start (spec "Footer") */
        mcap_footer(&sum, summary_start, offset_start, 0);
        uint32_t crc = mcap_crc32(0, sum.p, sum.n - 4);
        sum.n -= 4;
        mcap_put_u32(&sum, crc);
        mcap_put_bytes(&sum, MCAP_MAGIC, MCAP_MAGIC_LEN);
        rc = emit(w, &sum);
        mcap_buf_free(&sum);
        mcap_buf_free(&offs);
        mcap_buf_free(&st);
    }
    if (close(w->fd) && !rc) rc = -errno;
    w->fd = -1;
    free_all(w);
    return rc;
}
