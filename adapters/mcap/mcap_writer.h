/* MCAP file writer: one file, written in complete chunks (https://mcap.dev/spec).
 *
 * Layout: magic, Header, Schema and Channel records and Metadata (outside chunks, in the order
 * added), then Chunks, each followed by its Message Index records; on mcap_writer_close():
 * DataEnd (data section CRC 0: not computed; every chunk has its CRC), the Summary section (Schema
 * and Channel copies, Statistics, Chunk Indexes, Metadata Indexes), one Summary Offset per group,
 * Footer, magic.
 *
 * Crash safety: a chunk and its message indexes leave in one write(2), only when complete, so
 * that a process killed at any moment leaves a file whose every complete chunk a streaming
 * reader can read (the summary is then missing and the file ends inside or after a chunk).
 *
 * Not thread-safe: one thread owns a writer (the recorder's writer thread). */
#ifndef XG_MCAP_WRITER_H
#define XG_MCAP_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "adapters/mcap/mcap_codec.h"
#include "core/util/error.h"

#define MCAP_MAX_CHANNELS 16
#define MCAP_MAX_SCHEMAS 16
#define MCAP_MAX_METADATA 8

/** Chunk compression. */
enum mcap_compression { MCAP_COMPRESSION_NONE = 0, MCAP_COMPRESSION_ZSTD, MCAP_COMPRESSION_LZ4 };
/** "" (none), "zstd", "lz4": the spec's names, written in Chunk records. */
const char *mcap_compression_name(enum mcap_compression c);
/** Parse "none", "zstd" or "lz4"; -EINVAL otherwise. */
int mcap_compression_parse(const char *s, enum mcap_compression *out);

struct mcap_writer {
    int fd;       /* -1 = closed */
    uint64_t pos; /* bytes written */
    enum mcap_compression compression;
    size_t chunk_size; /* uncompressed bytes that close a chunk */
    /* the open chunk */
    struct mcap_buf chunk;           /* its records, uncompressed */
    uint64_t chunk_start, chunk_end; /* message time range, ns */
    uint64_t chunk_msgs;
    struct mcap_buf idx[MCAP_MAX_CHANNELS]; /* (log_time, offset) pairs per channel */
    /* what the summary needs */
    struct mcap_buf schemas, channels; /* the records, for the summary's copies */
    struct mcap_buf chunk_indexes, metadata_indexes;
    struct mcap_statistics stats;
    uint32_t seq[MCAP_MAX_CHANNELS];
    bool channel_known[MCAP_MAX_CHANNELS];
    struct mcap_buf out, comp; /* scratch */
    void *zstd;                /* ZSTD_CCtx */
    int zstd_level;
    size_t msg_at;   /* mcap_writer_begin(): where the open message record starts in chunk */
    uint16_t msg_ch; /* and its channel */
};

/** zstd level when none is set (mcap_writer_set_level()): one of zstd's fast modes (negative
 *  levels), chosen for recording's CPU cost (docs/performance.md, table 12). */
#define MCAP_ZSTD_LEVEL_DEFAULT (-5)
/** Levels mcap_writer_set_level() accepts for zstd (negative = faster, larger files). */
#define MCAP_ZSTD_LEVEL_MIN (-7)
#define MCAP_ZSTD_LEVEL_MAX 19

/** Create (truncate) `path` and write magic and Header (profile, library). chunk_size: bytes of
 *  uncompressed records after which a chunk is written (>= 1). Returns 0 or a negative errno
 *  with err naming the path. On error the writer is closed (mcap_writer_abort() is harmless). */
int mcap_writer_open(struct mcap_writer *w, const char *path, const char *profile,
                     const char *library, enum mcap_compression compression, size_t chunk_size,
                     struct xg_error *err);
/** Write a Schema record (id 1..MCAP_MAX_SCHEMAS). 0 or a negative errno. */
int mcap_writer_schema(struct mcap_writer *w, uint16_t id, const char *name, const char *encoding,
                       const char *data);
/** Write a Channel record (id 0..MCAP_MAX_CHANNELS-1) with metadata pairs. */
int mcap_writer_channel(struct mcap_writer *w, uint16_t id, uint16_t schema_id, const char *topic,
                        const char *message_encoding, size_t n, const char *const *keys,
                        const char *const *vals);
/** Write a Metadata record (and remember its index for the summary). */
int mcap_writer_metadata(struct mcap_writer *w, const char *name, size_t n, const char *const *keys,
                         const char *const *vals);
/** Add a message to the open chunk (sequence numbers per channel); writes the chunk when it
 *  reaches chunk_size. 0 or a negative errno (-EIO etc. from write, -ENOMEM). */
int mcap_writer_message(struct mcap_writer *w, uint16_t channel, uint64_t log_time,
                        uint64_t publish_time, const void *data, size_t len);
/** Encode a message straight into the open chunk (no copy): returns the buffer to append its
 *  data to (nothing else may touch the writer until mcap_writer_end()). */
struct mcap_buf *mcap_writer_begin(struct mcap_writer *w, uint16_t channel, uint64_t log_time,
                                   uint64_t publish_time);
/** End the message started by mcap_writer_begin(); as mcap_writer_message() otherwise (-EINVAL
 *  for an unknown channel, the message is then dropped). */
int mcap_writer_end(struct mcap_writer *w);
/** zstd level of the next chunks (MCAP_ZSTD_LEVEL_MIN..MAX; ignored for lz4 and none). */
void mcap_writer_set_level(struct mcap_writer *w, int level);
/** Write the open chunk now, if it holds any message. */
int mcap_writer_flush(struct mcap_writer *w);
/** Flush, write DataEnd, the summary and the footer, close the file. 0 or a negative errno. */
int mcap_writer_close(struct mcap_writer *w);
/** Close the file as it is (no chunk flush, no summary) and free everything. */
void mcap_writer_abort(struct mcap_writer *w);

#endif
