/* libFuzzer target for the RGMP v2 codec.
 *
 * The input is used three ways:
 *   1. as a TCP byte stream: split into frames and fed to a session (definitions, data frames,
 *      disconnects); every accepted definition must re-encode to JSON that decodes to the same
 *      JSON again (fixpoint), and every accepted data frame must re-encode to the input bytes;
 *   2. as one definition payload (JSON), with the same fixpoint check;
 *   3. as a data_type string.
 * Seeds: tests/vectors/rgmp/ (stream_6.bin, def_6_1.json, ...).
 *
 * Build: clang -fsanitize=fuzzer,address,undefined -I. tests/fuzz/fuzz_rgmp.c \
 *        adapters/rgmp/rgmp_codec.c adapters/rgmp/rgmp_definition.c \
 *        adapters/rgmp/rgmp_json_decode.c adapters/rgmp/rgmp_json_encode.c \
 *        adapters/rgmp/rgmp_session.c adapters/rgmp/rgmp_pose.c core/[a-z]*.c -ljansson \
 *        -levent_core -lm */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/rgmp/rgmp_codec.h"

static void check_definition_fixpoint(const struct rgmp_definition *def)
{
    char *j1 = NULL, *j2 = NULL;
    size_t l1, l2;
    struct xg_error err = {0};
    if (rgmp_definition_to_json(def, &j1, &l1, &err) != 0) abort();
    struct rgmp_definition *back = NULL;
    /* the canonical text may be longer than the input: no size limits here */
    const struct rgmp_limits lim = {UINT32_MAX, UINT32_MAX};
    if (rgmp_definition_decode(j1, l1, &lim, &back, &err) != 0) {
        fprintf(stderr, "re-encoded definition rejected: %s\n%s\n", err.msg, j1);
        abort();
    }
    if (rgmp_definition_to_json(back, &j2, &l2, &err) != 0) abort();
    if (l1 != l2 || memcmp(j1, j2, l1) != 0) {
        fprintf(stderr, "definition JSON not a fixpoint:\n%s\n%s\n", j1, j2);
        abort();
    }
    if (back->device_id != def->device_id || back->n_groups != def->n_groups ||
        back->n_static != def->n_static)
        abort();
    for (size_t g = 0; g < def->n_groups; g++)
        if (back->groups[g].values_len != def->groups[g].values_len) abort();
    for (size_t i = 0; i < def->n_static; i++)
        if (memcmp(back->static_data[i].value, def->static_data[i].value,
                   def->static_data[i].type.size) != 0)
            abort();
    free(j1);
    free(j2);
    rgmp_definition_free(back);
}

static void fuzz_stream(const uint8_t *data, size_t size)
{
    struct rgmp_session s;
    rgmp_session_init(&s, NULL, size > 0 && (data[0] & 1));
    size_t off = 0;
    uint8_t *out = malloc(RGMP_HEADER_LEN + RGMP_MAX_DATA_DEFAULT);
    for (;;) {
        struct rgmp_header h;
        size_t need;
        struct xg_error err = {0};
        int rc = rgmp_frame_split(data + off, size - off, &s.limits, &h, &need, &err);
        if (rc < 0) break;
        if (rc == 0) {
            if (need <= size - off) /* the splitter must ask for more than it has */
                abort();
            rgmp_frame_eof(size - off, &err);
            break;
        }
        if (need != RGMP_HEADER_LEN + (size_t)h.msg_len || need > size - off) abort();
        struct rgmp_event ev;
        rc = rgmp_session_handle(&s, &h, data + off + RGMP_HEADER_LEN, &ev, &err);
        if (rc < 0) break;
        if (ev.type == RGMP_EV_DEFINITION) {
            check_definition_fixpoint(ev.def);
        } else if (ev.type == RGMP_EV_DATA || ev.type == RGMP_EV_DROPPED) {
            struct xg_writer w;
            xg_writer_init(&w, out, RGMP_HEADER_LEN + RGMP_MAX_DATA_DEFAULT);
            if (rgmp_encode_data(&w, ev.def, ev.frame.group_id, ev.frame.timestamp_us,
                                 ev.frame.values, ev.frame.values_len, &err) != 0 ||
                w.len != need || memcmp(out, data + off, need) != 0)
                abort();
            const struct rgmp_group *g = &ev.def->groups[ev.frame.group_id];
            for (size_t i = 0; i < g->n_streams; i++) {
                const uint8_t *v = rgmp_data_stream(ev.def, &ev.frame, i);
                if (!v) abort();
                struct rgmp_pose p;
                struct xg_vec3 vec;
                rgmp_pose_from_values(&g->streams[i], v, &p, &err);
                rgmp_vec3_from_values(&g->streams[i], v, &vec, &err);
                for (uint32_t k = 0; k < g->streams[i].type.count && k < 16; k++)
                    (void)rgmp_value_f64(&g->streams[i].type, v, k);
            }
        } else if (ev.type == RGMP_EV_DISCONNECT) {
            if (rgmp_session_find(&s, ev.device_id)) abort();
        }
        off += need;
    }
    free(out);
    rgmp_session_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_stream(data, size);

    struct rgmp_definition *def = NULL;
    struct xg_error err = {0};
    if (rgmp_definition_decode(data, size, NULL, &def, &err) == 0) {
        check_definition_fixpoint(def);
        rgmp_definition_free(def);
    } else if (def != NULL) {
        abort();
    }

    if (size < 64) {
        char text[64];
        memcpy(text, data, size);
        text[size] = '\0';
        struct rgmp_data_type t;
        if (rgmp_data_type_parse(text, &t, &err) == 0) {
            if (t.count == 0 || (uint64_t)t.count * rgmp_base_size(t.base) != t.size ||
                t.size > UINT32_MAX - RGMP_DATA_HEADER_LEN)
                abort();
            char canon[32];
            struct rgmp_data_type t2;
            rgmp_data_type_format(&t, canon, sizeof canon);
            if (rgmp_data_type_parse(canon, &t2, &err) != 0 || memcmp(&t, &t2, sizeof t) != 0)
                abort();
        }
    }
    return 0;
}
