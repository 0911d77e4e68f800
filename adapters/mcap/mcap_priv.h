/* mcap adapters, private: the recorder's state shared by mcap_record.c (the adapter and its
 * writer thread) and mcap_conf.c (its keys). */
#ifndef XG_MCAP_PRIV_H
#define XG_MCAP_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "adapters/mcap/mcap_codec.h"
#include "adapters/mcap/mcap_writer.h"
#include "core/conf.h"
#include "core/log.h"

/** Longest a chunk stays open: what a killed gateway loses at most (besides the queue). */
#define MCAP_CHUNK_MAX_NS INT64_C(1000000000)

struct mcap_rec {
    /* configuration (mcap_conf.c) */
    char path[1024]; /* a file, or a directory (dir = true) */
    bool dir;
    double rotate_mb, rotate_s; /* 0 = never */
    enum mcap_compression compression;
    size_t chunk_bytes, queue_bytes;
    bool tf;                /* write /tf too */
    char world_frame[64];   /* /tf frame_id of entities without a parent */
    char config_sha256[65]; /* of the configuration file, hex; "" = unknown */
    /* loop thread */
    struct mcap_buf enc; /* one tap's entries */
    int64_t wall_off_ns; /* wall clock - gateway clock, fixed at start */
    struct xg_log_limit lim_drop;
    char adapter_name[64];
    char gateway_id[64];
    /* shared with the writer thread, under mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool sync_ready, thread_started, stopping;
    pthread_t thread;
    struct mcap_buf queue; /* entries: u16 channel, u64 log, u64 publish, u32 len, data */
    uint64_t queued, dropped, write_errors, files;
    char file[1024]; /* the file being written */
    uint64_t file_bytes;
    int64_t last_write_ns;
    double rate_hz; /* messages per second written, over the last second */
    /* writer thread */
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
