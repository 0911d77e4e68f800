/* MCAP file reader: a bounded, streaming walk over a file's messages (https://mcap.dev/spec),
 * for `mcap-replay` and `xrgate --mcap-info`.
 *
 * Reads the data section from the start, record by record: Schema and Channel records (top level
 * or inside chunks) are remembered, chunks are decompressed (zstd, lz4, none) and their CRC
 * checked, messages are returned one at a time in file order. The summary is not needed: a file
 * whose writer was killed is read up to its last complete record (`truncated` is then set), like
 * a streaming reader does. Every length is checked against what is left and against
 * MCAP_MAX_CHUNK; a malformed file is an error naming the offset, the record and the rule,
 * never a read past the end. */
#ifndef XG_MCAP_READER_H
#define XG_MCAP_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adapters/mcap/mcap_codec.h"
#include "core/util/error.h"

#define MCAP_MAX_CHUNK (512u << 20) /* largest uncompressed chunk accepted, bytes */
#define MCAP_READER_CHANNELS 256    /* distinct channels per file */

/** A channel as declared by its Channel record, with its schema's name and encoding. */
struct mcap_channel_info {
    uint16_t id;
    char topic[128];
    char message_encoding[32];
    char schema_name[128]; /* "" when the schema is unknown (id 0 or not seen) */
    char schema_encoding[32];
    uint64_t messages;            /* messages read so far */
    uint64_t first_log, last_log; /* log time range of those, ns */
};

struct mcap_reader {
    const uint8_t *p; /* the whole file (mapped or borrowed) */
    size_t n;
    void *map;  /* mmap'd region to unmap, NULL for a borrowed buffer */
    size_t off; /* next top-level record */
    bool done, truncated;
    /* the chunk being read */
    struct mcap_buf chunk;
    size_t chunk_off;
    bool in_chunk;
    uint64_t chunk_at; /* file offset of that chunk's record, for errors */
    /* declared channels and schemas */
    struct mcap_channel_info ch[MCAP_READER_CHANNELS];
    int n_ch;
    struct {
        uint16_t id;
        char name[128], encoding[32];
    } schema[MCAP_READER_CHANNELS];
    int n_schema;
    void *zstd; /* ZSTD_DCtx */
    void *lz4;  /* LZ4F_dctx */
};

/** Map `path` and check its leading magic. 0, or a negative errno with err naming the path and
 *  what is wrong (not a regular file, too short, not MCAP). */
int mcap_reader_open(struct mcap_reader *r, const char *path, struct xg_error *err);
/** Read from a buffer the caller keeps (unit tests, the fuzz target). */
int mcap_reader_open_mem(struct mcap_reader *r, const uint8_t *p, size_t n, struct xg_error *err);
/** The next message: 1 with *ch and *m set (m->data borrowed until the next call), 0 at the end
 *  (DataEnd, the end of the file, or a file cut inside a record: `truncated`), or a negative
 *  errno (-EPROTO) with err naming the offset and the rule broken. */
int mcap_reader_next(struct mcap_reader *r, const struct mcap_channel_info **ch, struct mcap_msg *m,
                     struct xg_error *err);
/** Start again at the first record (message counts are kept). */
void mcap_reader_rewind(struct mcap_reader *r);
/** Unmap and free. */
void mcap_reader_close(struct mcap_reader *r);

#endif
