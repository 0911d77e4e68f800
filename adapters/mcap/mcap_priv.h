/* mcap adapters, private: the recorder's state shared by mcap_record.c (the adapter and its
 * writer thread) and mcap_conf.c (its keys). */
#ifndef XG_MCAP_PRIV_H
#define XG_MCAP_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "adapters/mcap/mcap_codec.h"
#include "adapters/mcap/mcap_ring.h"
#include "adapters/mcap/mcap_writer.h"
#include "core/conf/conf.h"
#include "core/util/log.h"
#include "mappings/frame.h"

/** Longest a chunk stays open: what a killed gateway loses at most (besides the queue). */
#define MCAP_CHUNK_MAX_NS INT64_C(1000000000)

/** An entity's identity as the writer thread knows it (sent once per entity, mcap_record.c). */
struct mcap_ident {
    char name[XG_NAME_MAX], source[XG_NAME_MAX], origin[64], origin_gateway[64], kind[16];
    int32_t sensor;
    uint16_t name_len; /* strlen(name) */
    uint16_t pre_n;    /* bytes of pre */
    /* its Sample messages' first fields, encoded once (mcap_cdr_sample_prefix()): five CDR
     * strings of at most the sizes above, each with a 4-byte length and up to 3 bytes padding */
    uint8_t pre[2 * XG_NAME_MAX + 2 * 64 + 16 + 5 * 8];
};

/** Most transforms in one /tf message (the samples of one source frame go in one message). */
#define MCAP_TF_GROUP_MAX 256

struct mcap_rec {
    /* configuration (mcap_conf.c) */
    char path[1024]; /* a file, or a directory (dir = true) */
    bool dir;
    double rotate_mb, rotate_s; /* 0 = never */
    enum mcap_compression compression;
    int level; /* zstd level (compression_level) */
    size_t chunk_bytes, queue_bytes;
    bool tf;                /* write /tf too */
    char world_frame[64];   /* /tf frame_id of entities without a parent */
    size_t world_frame_len; /* strlen(world_frame) */
    char config_sha256[65]; /* of the configuration file, hex; "" = unknown */
    /* loop thread */
    int64_t wall_off_ns; /* wall clock - gateway clock, fixed at start */
    uint32_t next_ident; /* identity numbers: 0, 1 = sent with every sample; 2.. = one per entity */
    uint32_t *free_idents; /* numbers of entities gone, to reuse */
    size_t n_free, cap_free;
    uint64_t queued, dropped; /* samples queued / dropped (read by status on the loop too) */
    atomic_bool kicked;       /* the writer was woken for a filling queue and has not run yet */
    struct xg_log_limit lim_drop;
    char adapter_name[64];
    char gateway_id[64];
    /* shared with the writer thread, under mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool sync_ready, thread_started, stopping;
    pthread_t thread;
    uint64_t write_errors, files;
    char file[1024]; /* the file being written */
    uint64_t file_bytes;
    int64_t last_write_ns;
    double rate_hz; /* messages per second written, over the last second */
    /* lock-free: the loop produces, the writer thread consumes (sample and identity records) */
    struct mcap_ring ring;
    struct xg_frame frame; /* /tf's frame: a copy (the writer thread may outlive the adapter) */
    /* writer thread */
    struct mcap_ident *idents; /* by identity number */
    struct mcap_ident none;    /* an unknown identity: empty names, sensor -1 */
    size_t n_idents;
    struct mcap_buf tfb;    /* the /tf message being grouped (TFMessage CDR) */
    uint32_t tf_n;          /* its transforms; 0 = none pending */
    int64_t tf_log, tf_pub; /* its samples' receive and capture times (ns, Unix epoch) */
    struct mcap_writer w;
    bool open;
    int64_t file_t0_ns, chunk_t0_ns;
    unsigned file_no;
    uint64_t rate_count;
    int64_t rate_t0_ns;
};

/** Read the mcap-record keys (docs/adapters/mcap.md) into r (zeroed by the caller). 0 or
 *  -EINVAL with err naming file:line:col, key and value. */
int mcap_rec_read_conf(struct mcap_rec *r, const struct xg_conf *conf, struct xg_error *err);

#endif
