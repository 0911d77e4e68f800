/* The mcap-record and mcap-replay configuration keys (docs/adapters/mcap.md). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "adapters/mcap/mcap_priv.h"
#include "adapters/mcap/mcap_replay.h"
#include "core/conf/path.h"

#include <mbedtls/sha256.h>
#include <stdlib.h>

/* SHA-256 (hex) of the configuration file the adapter's section came from, for the recording's
 * metadata ("" for the embedded default or a file that cannot be read again). */
static void config_sha256(const struct xg_conf *conf, char out[65])
{
    out[0] = '\0';
    if (!conf->file || conf->file[0] == '<') return;
    int rc;
    FILE *f = xg_file_fopen_regular(conf->file, "rb", false, &rc, NULL);
    if (!f) return;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap || cap >= (16u << 20)) break;
        unsigned char *b = realloc(buf, cap * 2);
        if (!b) break;
        buf = b;
        cap *= 2;
    }
    bool ok = buf && !ferror(f) && feof(f);
    fclose(f);
    unsigned char h[32];
    if (ok && mbedtls_sha256_ret(buf, n, h, 0) == 0)
        for (int i = 0; i < 32; i++)
            snprintf(out + 2 * i, 3, "%02x", h[i]);
    free(buf);
}

static int resolve(const struct xg_conf *conf, const char *key, const char *v, char *out,
                   size_t size, struct xg_error *err)
{
    if (xg_conf_path(xg_conf_get(conf, key), v, out, size))
        return xg_conf_error(err, xg_conf_get(conf, key), -ENAMETOOLONG,
                             "%s '%s': path too long (at most %zu bytes)", key, v, size - 1);
    return 0;
}

int mcap_rec_read_conf(struct mcap_rec *r, const struct xg_conf *conf, struct xg_error *err)
{
    const char *path, *comp, *world;
    int64_t chunk_kb, queue_kb, level;
    int rc;
    if ((rc = xg_conf_string(conf, "path", NULL, &path, err)) ||
        (rc = xg_conf_double(conf, "rotate_mb", 0, 0, 1e6, &r->rotate_mb, err)) ||
        (rc = xg_conf_double(conf, "rotate_s", 0, 0, 1e7, &r->rotate_s, err)) ||
        (rc = xg_conf_string(conf, "compression", "zstd", &comp, err)) ||
        (rc = xg_conf_int(conf, "compression_level", MCAP_ZSTD_LEVEL_DEFAULT, MCAP_ZSTD_LEVEL_MIN,
                          MCAP_ZSTD_LEVEL_MAX, &level, err)) ||
        (rc = xg_conf_int(conf, "chunk_kb", 256, 1, 65536, &chunk_kb, err)) ||
        (rc = xg_conf_int(conf, "queue_kb", 8192, 64, 1048576, &queue_kb, err)) ||
        (rc = xg_conf_bool(conf, "tf", true, &r->tf, err)) ||
        (rc = xg_conf_string(conf, "world_frame", "world", &world, err)))
        return rc;
    if (!path || !*path)
        return xg_conf_error(err, conf, -EINVAL, "mcap-record: 'path' is required");
    if (mcap_compression_parse(comp, &r->compression))
        return xg_conf_error(err, xg_conf_get(conf, "compression"), -EINVAL,
                             "compression '%s' is not one of zstd, lz4, none", comp);
    if (!*world || strlen(world) >= sizeof r->world_frame)
        return xg_conf_error(err, xg_conf_get(conf, "world_frame"), -EINVAL,
                             "world_frame '%s' must be 1 to %zu bytes", world,
                             sizeof r->world_frame - 1);
    strcpy(r->world_frame, world);
    r->world_frame_len = strlen(world);
    if ((rc = resolve(conf, "path", path, r->path, sizeof r->path, err))) return rc;
    struct stat st;
    size_t len = strlen(r->path);
    r->dir = (len && r->path[len - 1] == '/') || (stat(r->path, &st) == 0 && S_ISDIR(st.st_mode));
    r->chunk_bytes = (size_t)chunk_kb * 1024;
    r->level = (int)level;
    config_sha256(conf, r->config_sha256);
    r->queue_bytes = (size_t)queue_kb * 1024;
    return 0;
}

int mcap_replay_read_conf(struct mcap_replay *p, const struct xg_conf *conf, struct xg_error *err)
{
    const char *file;
    int rc;
    if ((rc = xg_conf_string(conf, "file", NULL, &file, err)) ||
        (rc = xg_conf_bool(conf, "loop", false, &p->loop, err)) ||
        (rc = xg_conf_double(conf, "speed", 1.0, 0.001, 1000.0, &p->speed, err)) ||
        (rc = xg_conf_double(conf, "start_s", 0, 0, 1e9, &p->start_s, err)) ||
        (rc = xg_conf_double(conf, "end_s", 0, 0, 1e9, &p->end_s, err)))
        return rc;
    if (!file || !*file)
        return xg_conf_error(err, conf, -EINVAL, "mcap-replay: 'file' is required");
    if (p->end_s > 0 && p->end_s <= p->start_s)
        return xg_conf_error(err, xg_conf_get(conf, "end_s"), -EINVAL,
                             "end_s %g must be after start_s %g (or 0 = the end of the file)",
                             p->end_s, p->start_s);
    return resolve(conf, "file", file, p->path, sizeof p->path, err);
}
