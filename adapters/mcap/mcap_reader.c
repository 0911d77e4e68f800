/* MCAP file reader (mcap_reader.h). */
#include "adapters/mcap/mcap_reader.h"

#include <errno.h>
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "core/conf/path.h"

int mcap_reader_open_mem(struct mcap_reader *r, const uint8_t *p, size_t n, struct xg_error *err)
{
    memset(r, 0, sizeof *r);
    r->p = p;
    r->n = n;
    r->off = MCAP_MAGIC_LEN;
    if (n < MCAP_MAGIC_LEN || memcmp(p, MCAP_MAGIC, MCAP_MAGIC_LEN))
        return xg_error_set(err, -EPROTO,
                            "not an MCAP file: it does not start with the magic 89 4D 43 41 50 "
                            "30 0D 0A (\\x89MCAP0\\r\\n)");
    return 0;
}

int mcap_reader_open(struct mcap_reader *r, const char *path, struct xg_error *err)
{
    memset(r, 0, sizeof *r);
    const char *kind = NULL;
    int fd = xg_file_open_regular(path, false, &kind);
    if (fd < 0) return xg_error_set(err, fd, "'%s': %s", path, xg_file_strerror(fd, kind));
    struct stat st;
    if (fstat(fd, &st)) {
        int e = errno;
        close(fd);
        return xg_error_set(err, -e, "'%s': %s", path, strerror(e));
    }
    void *map = NULL;
    if (st.st_size > 0) {
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            int e = errno;
            close(fd);
            return xg_error_set(err, -e, "'%s': cannot map it: %s", path, strerror(e));
        }
    }
    close(fd);
    int rc = mcap_reader_open_mem(r, map ? map : (const uint8_t *)"", (size_t)st.st_size, err);
    r->map = map;
    if (rc) {
        char m[sizeof err->msg];
        snprintf(m, sizeof m, "%s", err->msg);
        xg_error_set(err, rc, "'%s': %s", path, m);
        mcap_reader_close(r);
    }
    return rc;
}

void mcap_reader_close(struct mcap_reader *r)
{
    if (r->map) munmap(r->map, r->n);
    r->map = NULL;
    mcap_buf_free(&r->chunk);
    if (r->zstd) ZSTD_freeDCtx(r->zstd);
    if (r->lz4) LZ4F_freeDecompressionContext(r->lz4);
    r->zstd = r->lz4 = NULL;
}

void mcap_reader_rewind(struct mcap_reader *r)
{
    r->off = MCAP_MAGIC_LEN;
    r->done = r->truncated = r->in_chunk = false;
}

static void copy_str(char *dst, size_t size, const uint8_t *s, uint32_t n)
{
    size_t k = n < size - 1 ? n : size - 1;
    if (k) memcpy(dst, s, k);
    dst[k] = '\0';
}

static int on_schema(struct mcap_reader *r, const struct mcap_record *rec, uint64_t at,
                     struct xg_error *err)
{
    struct xg_reader c;
    xg_reader_init(&c, rec->body, (size_t)rec->len);
    uint16_t id = xg_read_le16(&c);
    const uint8_t *name, *enc;
    uint32_t nl = mcap_get_str(&c, &name), el = mcap_get_str(&c, &enc);
    if (c.err)
        return xg_error_set(err, -EPROTO, "Schema record at offset %llu: a string overruns it",
                            (unsigned long long)at);
    for (int i = 0; i < r->n_schema; i++)
        if (r->schema[i].id == id) return 0;
    if (r->n_schema == MCAP_READER_CHANNELS)
        return xg_error_set(err, -EPROTO, "more than %d schemas", MCAP_READER_CHANNELS);
    r->schema[r->n_schema].id = id;
    copy_str(r->schema[r->n_schema].name, sizeof r->schema[0].name, name, nl);
    copy_str(r->schema[r->n_schema].encoding, sizeof r->schema[0].encoding, enc, el);
    r->n_schema++;
    return 0;
}

static int on_channel(struct mcap_reader *r, const struct mcap_record *rec, uint64_t at,
                      struct xg_error *err)
{
    struct xg_reader c;
    xg_reader_init(&c, rec->body, (size_t)rec->len);
    uint16_t id = xg_read_le16(&c), schema = xg_read_le16(&c);
    const uint8_t *topic, *enc;
    uint32_t tl = mcap_get_str(&c, &topic), el = mcap_get_str(&c, &enc);
    if (c.err)
        return xg_error_set(err, -EPROTO, "Channel record at offset %llu: a string overruns it",
                            (unsigned long long)at);
    for (int i = 0; i < r->n_ch; i++)
        if (r->ch[i].id == id) return 0;
    if (r->n_ch == MCAP_READER_CHANNELS)
        return xg_error_set(err, -EPROTO, "more than %d channels", MCAP_READER_CHANNELS);
    struct mcap_channel_info *ch = &r->ch[r->n_ch++];
    memset(ch, 0, sizeof *ch);
    ch->id = id;
    copy_str(ch->topic, sizeof ch->topic, topic, tl);
    copy_str(ch->message_encoding, sizeof ch->message_encoding, enc, el);
    for (int i = 0; i < r->n_schema && schema; i++)
        if (r->schema[i].id == schema) {
            memcpy(ch->schema_name, r->schema[i].name, sizeof ch->schema_name);
            memcpy(ch->schema_encoding, r->schema[i].encoding, sizeof ch->schema_encoding);
        }
    return 0;
}

static int decompress(struct mcap_reader *r, const struct mcap_chunk *k, struct xg_error *err)
{
    unsigned long long at = (unsigned long long)r->chunk_at;
    if (k->uncompressed_size > MCAP_MAX_CHUNK)
        return xg_error_set(err, -EPROTO,
                            "chunk at offset %llu: uncompressed_size %llu exceeds the limit of %u "
                            "bytes",
                            at, (unsigned long long)k->uncompressed_size, MCAP_MAX_CHUNK);
    size_t usize = (size_t)k->uncompressed_size;
    r->chunk.n = 0;
    if (!mcap_buf_reserve(&r->chunk, usize ? usize : 1)) return -ENOMEM;
    if (!strcmp(k->compression, "")) {
        if (k->records_len != usize)
            return xg_error_set(err, -EPROTO,
                                "chunk at offset %llu: %zu record bytes, uncompressed_size %zu", at,
                                k->records_len, usize);
        if (usize) memcpy(r->chunk.p, k->records, usize);
    } else if (!strcmp(k->compression, "zstd")) {
        if (!r->zstd && !(r->zstd = ZSTD_createDCtx())) return -ENOMEM;
        size_t got = ZSTD_decompressDCtx(r->zstd, r->chunk.p, usize, k->records, k->records_len);
        if (ZSTD_isError(got) || got != usize)
            return xg_error_set(err, -EPROTO,
                                "chunk at offset %llu: zstd data does not decompress to its "
                                "uncompressed_size %zu (%s)",
                                at, usize, ZSTD_isError(got) ? ZSTD_getErrorName(got) : "size");
    } else if (!strcmp(k->compression, "lz4")) {
        if (!r->lz4 &&
            LZ4F_isError(LZ4F_createDecompressionContext((LZ4F_dctx **)&r->lz4, LZ4F_VERSION)))
            return -ENOMEM;
        LZ4F_resetDecompressionContext(r->lz4);
        size_t in = 0, out = 0, ret = 1;
        while (ret != 0 && in < k->records_len && out <= usize) {
            size_t src = k->records_len - in, dst = usize - out;
            ret = LZ4F_decompress(r->lz4, r->chunk.p + out, &dst, k->records + in, &src, NULL);
            if (LZ4F_isError(ret)) break;
            in += src;
            out += dst;
            if (!src && !dst) break;
        }
        if (LZ4F_isError(ret) || ret != 0 || out != usize)
            return xg_error_set(err, -EPROTO,
                                "chunk at offset %llu: lz4 data does not decompress to its "
                                "uncompressed_size %zu (%s)",
                                at, usize, LZ4F_isError(ret) ? LZ4F_getErrorName(ret) : "size");
    } else {
        return xg_error_set(err, -EPROTO,
                            "chunk at offset %llu: compression '%s' (known: zstd, lz4, none)", at,
                            k->compression);
    }
    r->chunk.n = usize;
    if (k->uncompressed_crc && mcap_crc32(0, r->chunk.p, usize) != k->uncompressed_crc)
        return xg_error_set(err, -EPROTO,
                            "chunk at offset %llu: CRC-32 of its records is %08x, the chunk says "
                            "%08x",
                            at, mcap_crc32(0, r->chunk.p, usize), k->uncompressed_crc);
    return 0;
}

/* A record: Schema/Channel remembered, Message returned (1), Chunk opened, others skipped. */
static int on_record(struct mcap_reader *r, const struct mcap_record *rec, uint64_t at, bool top,
                     const struct mcap_channel_info **ch, struct mcap_msg *m, struct xg_error *err)
{
    switch (rec->op) {
    case MCAP_OP_SCHEMA:
        return on_schema(r, rec, at, err);
    case MCAP_OP_CHANNEL:
        return on_channel(r, rec, at, err);
    case MCAP_OP_MESSAGE: {
        if (mcap_parse_message(rec, m))
            return xg_error_set(err, -EPROTO,
                                "Message record at offset %llu: %llu bytes, "
                                "shorter than its 22 bytes of fixed fields",
                                (unsigned long long)at, (unsigned long long)rec->len);
        for (int i = 0; i < r->n_ch; i++)
            if (r->ch[i].id == m->channel) {
                struct mcap_channel_info *c = &r->ch[i];
                if (!c->messages || m->log_time < c->first_log) c->first_log = m->log_time;
                if (!c->messages || m->log_time > c->last_log) c->last_log = m->log_time;
                c->messages++;
                *ch = c;
                return 1;
            }
        return xg_error_set(err, -EPROTO,
                            "Message record at offset %llu: channel %u was not declared before "
                            "it (spec: a Channel record precedes its messages)",
                            (unsigned long long)at, m->channel);
    }
    case MCAP_OP_CHUNK: {
        if (!top)
            return xg_error_set(err, -EPROTO, "chunk inside a chunk at offset %llu",
                                (unsigned long long)at);
        struct mcap_chunk k;
        r->chunk_at = at;
        int rc = mcap_parse_chunk(rec, &k, err);
        if (rc) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            return xg_error_set(err, rc, "offset %llu: %s", (unsigned long long)at, msg);
        }
        if ((rc = decompress(r, &k, err))) return rc;
        r->in_chunk = true;
        r->chunk_off = 0;
        return 0;
    }
    case MCAP_OP_DATA_END:
        if (top) r->done = true;
        return 0;
    default:
        return 0; /* headers, indexes, attachments, metadata: not needed to replay */
    }
}

int mcap_reader_next(struct mcap_reader *r, const struct mcap_channel_info **ch, struct mcap_msg *m,
                     struct xg_error *err)
{
    struct mcap_record rec;
    for (;;) {
        if (r->in_chunk) {
            size_t at = r->chunk_off;
            int rc = mcap_next_record(r->chunk.p, r->chunk.n, &r->chunk_off, r->chunk.n, &rec);
            if (rc == -EAGAIN && at == r->chunk.n) {
                r->in_chunk = false;
                continue;
            }
            if (rc)
                return xg_error_set(err, -EPROTO,
                                    "chunk at offset %llu: the record at %zu of its %zu bytes "
                                    "overruns it",
                                    (unsigned long long)r->chunk_at, at, r->chunk.n);
            rc = on_record(r, &rec, r->chunk_at, false, ch, m, err);
            if (rc) return rc;
            continue;
        }
        if (r->done) return 0;
        size_t at = r->off;
        int rc = mcap_next_record(r->p, r->n, &r->off, UINT64_MAX, &rec);
        if (rc == -EAGAIN) { /* the end, or a file cut inside a record */
            r->done = true;
            r->truncated = true;
            (void)at; /* no DataEnd: the writer did not finish */
            return 0;
        }
        if (rc) return xg_error_set(err, rc, "record at offset %zu: bad length", at);
        rc = on_record(r, &rec, at, true, ch, m, err);
        if (rc) return rc;
    }
}
