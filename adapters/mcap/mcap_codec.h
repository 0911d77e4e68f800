/* MCAP container records (https://mcap.dev/spec, major version 0): pure encode and bounded decode,
 * no I/O. All integers are little-endian; a String is a uint32 byte length + UTF-8 bytes; a
 * Map/Array is a uint32 byte length + entries; a record is opcode (uint8), content length (uint64)
 * and content.
 *
 * Used by the writer (mcap_writer.h), the reader (mcap_reader.h) and `xrgate --mcap-info`. */
#ifndef XG_MCAP_CODEC_H
#define XG_MCAP_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/util/error.h"
#include "core/util/wire.h"

/** The 8 magic bytes at the start and the end of every MCAP file (spec "Magic"). */
#define MCAP_MAGIC "\x89MCAP0\r\n"
#define MCAP_MAGIC_LEN 8

/** Record opcodes (spec "Records"). */
enum mcap_op {
    MCAP_OP_HEADER = 0x01,
    MCAP_OP_FOOTER = 0x02,
    MCAP_OP_SCHEMA = 0x03,
    MCAP_OP_CHANNEL = 0x04,
    MCAP_OP_MESSAGE = 0x05,
    MCAP_OP_CHUNK = 0x06,
    MCAP_OP_MESSAGE_INDEX = 0x07,
    MCAP_OP_CHUNK_INDEX = 0x08,
    MCAP_OP_ATTACHMENT = 0x09,
    MCAP_OP_ATTACHMENT_INDEX = 0x0A,
    MCAP_OP_STATISTICS = 0x0B,
    MCAP_OP_METADATA = 0x0C,
    MCAP_OP_METADATA_INDEX = 0x0D,
    MCAP_OP_SUMMARY_OFFSET = 0x0E,
    MCAP_OP_DATA_END = 0x0F,
};

/** A growable byte buffer. Zero-initialised = empty. An allocation failure sets `oom` and later
 *  appends do nothing (check once at the end). */
struct mcap_buf {
    uint8_t *p;
    size_t n, cap;
    bool oom;
};

/** Free the buffer's memory (the buffer is zeroed). */
void mcap_buf_free(struct mcap_buf *b);
/** Make room for `extra` more bytes; false (and oom set) when memory is short. */
bool mcap_buf_reserve(struct mcap_buf *b, size_t extra);
/** Append n bytes (inline: the recorder's writer thread appends a few dozen fields per sample). */
static inline void mcap_put_bytes(struct mcap_buf *b, const void *p, size_t n)
{
    if (!n || (b->cap - b->n < n && !mcap_buf_reserve(b, n)) || b->oom) return;
    memcpy(b->p + b->n, p, n);
    b->n += n;
}
/** Little-endian integers. */
static inline void mcap_put_u8(struct mcap_buf *b, uint8_t v)
{
    mcap_put_bytes(b, &v, 1);
}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MCAP_PUT_LE_(b, v) mcap_put_bytes(b, &(v), sizeof(v))
#else
#define MCAP_PUT_LE_(b, v)                                                                         \
    do {                                                                                           \
        uint8_t x_[sizeof(v)];                                                                     \
        for (size_t i_ = 0; i_ < sizeof(v); i_++)                                                  \
            x_[i_] = (uint8_t)((uint64_t)(v) >> (8 * i_));                                         \
        mcap_put_bytes(b, x_, sizeof(v));                                                          \
    } while (0)
#endif
static inline void mcap_put_u16(struct mcap_buf *b, uint16_t v)
{
    MCAP_PUT_LE_(b, v);
}
static inline void mcap_put_u32(struct mcap_buf *b, uint32_t v)
{
    MCAP_PUT_LE_(b, v);
}
static inline void mcap_put_u64(struct mcap_buf *b, uint64_t v)
{
    MCAP_PUT_LE_(b, v);
}
/** A String: uint32 length + bytes (no NUL). */
void mcap_put_str(struct mcap_buf *b, const char *s);
/** Start a record with `op`; returns the offset to pass to mcap_record_end(). */
size_t mcap_record_begin(struct mcap_buf *b, enum mcap_op op);
/** Fill in the content length of the record started at `at`. */
void mcap_record_end(struct mcap_buf *b, size_t at);

/** CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) of n bytes, continuing from `crc` (0 to
 *  start): zlib's crc32_z(). */
uint32_t mcap_crc32(uint32_t crc, const void *p, size_t n);

/* ---- record encoders (append one whole record to b) ---- */

/** Header (0x01): profile ("ros2", "" = none) and library. */
void mcap_header(struct mcap_buf *b, const char *profile, const char *library);
/** Schema (0x03): id (> 0), name, encoding ("ros2msg", ...), data (the definition). */
void mcap_schema(struct mcap_buf *b, uint16_t id, const char *name, const char *encoding,
                 const void *data, size_t len);
/** Channel (0x04) with metadata pairs keys[i] = vals[i], i < n. */
void mcap_channel(struct mcap_buf *b, uint16_t id, uint16_t schema_id, const char *topic,
                  const char *message_encoding, size_t n, const char *const *keys,
                  const char *const *vals);
/** Message (0x05); times in ns since the Unix epoch. */
void mcap_message(struct mcap_buf *b, uint16_t channel, uint32_t sequence, uint64_t log_time,
                  uint64_t publish_time, const void *data, size_t len);
/** Metadata (0x0C) with pairs keys[i] = vals[i], i < n. */
void mcap_metadata(struct mcap_buf *b, const char *name, size_t n, const char *const *keys,
                   const char *const *vals);

/** Summary of one chunk (ChunkIndex, 0x08). */
struct mcap_chunk_index {
    uint64_t message_start_time, message_end_time;
    uint64_t chunk_start_offset, chunk_length; /* the whole Chunk record, from its opcode */
    uint16_t index_channels[16];               /* message_index_offsets: channel → offset */
    uint64_t index_offsets[16];
    int n_index;
    uint64_t message_index_length; /* all Message Index records after the chunk */
    const char *compression;       /* "zstd", "lz4", "" */
    uint64_t compressed_size, uncompressed_size;
};
void mcap_chunk_index(struct mcap_buf *b, const struct mcap_chunk_index *ci);

/** Statistics (0x0B). channel_counts[i] messages on channel channel_ids[i], i < n_channels. */
struct mcap_statistics {
    uint64_t message_count;
    uint16_t schema_count;
    uint32_t channel_count, attachment_count, metadata_count, chunk_count;
    uint64_t message_start_time, message_end_time;
    int n_channels;
    uint16_t channel_ids[16];
    uint64_t channel_counts[16];
};
void mcap_statistics(struct mcap_buf *b, const struct mcap_statistics *st);
void mcap_metadata_index(struct mcap_buf *b, uint64_t offset, uint64_t length, const char *name);
void mcap_summary_offset(struct mcap_buf *b, uint8_t group_opcode, uint64_t group_start,
                         uint64_t group_length);
void mcap_data_end(struct mcap_buf *b, uint32_t data_section_crc);
void mcap_footer(struct mcap_buf *b, uint64_t summary_start, uint64_t summary_offset_start,
                 uint32_t summary_crc);

/* ---- decoding ---- */

/** One record as found: opcode and content (borrowed from the input). */
struct mcap_record {
    uint8_t op;
    const uint8_t *body;
    uint64_t len;
};

/* Reading a record's content: core/util/wire.h's struct xg_reader (little-endian, xg_read_le*; a
 * read past the end sets err and returns zeros). */
/** A String: points *s at its bytes (not NUL-terminated) and returns the length. */
uint32_t mcap_get_str(struct xg_reader *c, const uint8_t **s);

/** The record at p[*off..n): 0 and *off advanced past it; -EAGAIN when the bytes end inside it
 *  (a file cut short: a reader stops there); -EMSGSIZE when its length exceeds `max_len`. */
int mcap_next_record(const uint8_t *p, size_t n, size_t *off, uint64_t max_len,
                     struct mcap_record *r);

/** A decoded Message record (data borrowed). */
struct mcap_msg {
    uint16_t channel;
    uint32_t sequence;
    uint64_t log_time, publish_time;
    const uint8_t *data;
    size_t len;
};
/** Decode a Message record's content; -EPROTO when shorter than its fixed fields. */
int mcap_parse_message(const struct mcap_record *r, struct mcap_msg *m);

/** A decoded Chunk record (records borrowed, compressed). */
struct mcap_chunk {
    uint64_t message_start_time, message_end_time, uncompressed_size;
    uint32_t uncompressed_crc;
    char compression[16];
    const uint8_t *records;
    size_t records_len;
};
/** Decode a Chunk record's content; -EPROTO with err naming the field when a length overruns
 *  the record or the compression name is too long. */
int mcap_parse_chunk(const struct mcap_record *r, struct mcap_chunk *c, struct xg_error *err);

#endif
