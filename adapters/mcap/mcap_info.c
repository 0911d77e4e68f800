/* `xrgate --mcap-info FILE` (mcap_reader.h): channels, message counts, duration, time range. */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "adapters/mcap/mcap_reader.h"

/* ns since the Unix epoch as ISO 8601 UTC with ms */
static const char *iso(uint64_t ns, char *buf, size_t size)
{
    time_t s = (time_t)(ns / 1000000000u);
    struct tm tm;
    gmtime_r(&s, &tm);
    size_t k = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + k, size - k, ".%03uZ", (unsigned)(ns / 1000000u % 1000u));
    return buf;
}

/** Print a summary of the MCAP file at `path` to `out` (one line per channel: id, topic,
 *  schema, encodings, messages, rate; then the time range and duration). Reads the whole data
 *  section (works on files without a summary, e.g. of a killed recorder). 0, or a negative
 *  errno with err naming the file and the fault. */
int xg_mcap_info(const char *path, FILE *out, struct xg_error *err)
{
    static struct mcap_reader r;
    int rc = mcap_reader_open(&r, path, err);
    if (rc) return rc;
    const struct mcap_channel_info *ch;
    struct mcap_msg m;
    uint64_t total = 0, t0 = 0, t1 = 0;
    while ((rc = mcap_reader_next(&r, &ch, &m, err)) == 1) {
        if (!total || m.log_time < t0) t0 = m.log_time;
        if (!total || m.log_time > t1) t1 = m.log_time;
        total++;
    }
    if (rc == 0) {
        double dur = total ? (double)(t1 - t0) * 1e-9 : 0;
        char a[40], b[40];
        fprintf(out, "file:      %s (%zu bytes%s)\n", path, r.n,
                r.truncated ? ", cut short: no summary, read up to its last complete record" : "");
        fprintf(out, "messages:  %llu\n", (unsigned long long)total);
        fprintf(out, "duration:  %.3f s\n", dur);
        if (total)
            fprintf(out, "start:     %s (%llu ns)\nend:       %s (%llu ns)\n", iso(t0, a, sizeof a),
                    (unsigned long long)t0, iso(t1, b, sizeof b), (unsigned long long)t1);
        fprintf(out, "channels:  %d\n", r.n_ch);
        for (int i = 0; i < r.n_ch; i++) {
            const struct mcap_channel_info *c = &r.ch[i];
            double span = c->messages > 1 ? (double)(c->last_log - c->first_log) * 1e-9 : 0;
            fprintf(out, "  %3u %-24s %-28s %s/%s %llu messages", c->id, c->topic,
                    c->schema_name[0] ? c->schema_name : "(no schema)",
                    c->schema_encoding[0] ? c->schema_encoding : "-", c->message_encoding,
                    (unsigned long long)c->messages);
            if (span > 0) fprintf(out, ", %.1f Hz", (double)(c->messages - 1) / span);
            fputc('\n', out);
        }
    }
    mcap_reader_close(&r);
    return rc < 0 ? rc : 0;
}
