/* libFuzzer target for the MCAP reader and the recorded messages' CDR decoders
 * (adapters/mcap/mcap_reader.c, mcap_codec.c, mcap_cdr.c): what `mcap-replay` and
 * `xrgate --mcap-info` run on a file from anywhere.
 *
 * The input is read as an MCAP file: every record walked, chunks decompressed (zstd, lz4) and
 * CRC-checked, every message of a tf2_msgs/msg/TFMessage or xrgate_msgs/msg/Sample channel
 * decoded. A failure must be an error with a message, never a read past the input; the counts
 * must agree with what was returned. Seeds: tests/fuzz/seeds/fuzz_mcap/ (short recordings with
 * each compression). Build command (from the repository root; `make fuzz` builds it too):
 *   clang -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE tests/fuzz/fuzz_mcap.c
 *     adapters/mcap/mcap_reader.c adapters/mcap/mcap_codec.c adapters/mcap/mcap_cdr.c
 *     core/util/error.c core/conf/path.c -lzstd -llz4 -lz
 *   ./a.out -max_total_time=60 corpus/   (corpus/ seeded with tests/fuzz/seeds/fuzz_mcap/) */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/mcap/mcap_cdr.h"
#include "adapters/mcap/mcap_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct mcap_reader r;
    static struct mcap_sample s;
    struct mcap_tf tf;
    struct xg_error err = {0};
    if (mcap_reader_open_mem(&r, data, size, &err)) {
        if (!err.msg[0]) abort();
        return 0;
    }
    const struct mcap_channel_info *ch;
    struct mcap_msg m;
    uint64_t n = 0;
    int rc;
    while ((rc = mcap_reader_next(&r, &ch, &m, &err)) == 1) {
        n++;
        if (m.len > size && !r.in_chunk) abort();
        if (!strcmp(ch->schema_name, MCAP_SAMPLE_SCHEMA)) {
            if (mcap_cdr_sample_decode(m.data, m.len, &s, &err) == 0 &&
                (s.n_buttons > XG_MAX_BUTTONS || s.n_analogs > XG_MAX_ANALOGS))
                abort();
        } else if (!strcmp(ch->schema_name, MCAP_TF_SCHEMA)) {
            uint32_t count = 1;
            for (uint32_t i = 0; i < count && i < 64; i++)
                if (mcap_cdr_tf_decode(m.data, m.len, i, &count, &tf, &err)) break;
        }
    }
    if (rc < 0 && !err.msg[0]) abort();
    uint64_t counted = 0;
    for (int i = 0; i < r.n_ch; i++)
        counted += r.ch[i].messages;
    if (counted != n) abort();
    mcap_reader_close(&r);
    return 0;
}
