/* libFuzzer target for the dds adapter's name mapping (adapters/dds/dds_names.c).
 *
 * The input is any byte string (an entity name or a configured ROS 2 topic name as a peer or a
 * user could give it). dds_ros_name() must always produce a legal ROS 2 name / TF frame id:
 * only [A-Za-z0-9_/], no leading, trailing or doubled '/', no token starting with a digit,
 * never empty, always NUL-terminated within the buffer — for every buffer size from 2 bytes.
 * dds_topic_from_ros() must accept exactly the legal names (its output is "rt" + the fully
 * qualified name, at most 256 bytes, and dds_ros_name() leaves the accepted name unchanged) and
 * give a reason for everything else. Seeds: tests/fuzz/seeds/fuzz_dds/. */
// From the repository root:
//   clang -fsanitize=fuzzer,address,undefined -I. tests/fuzz/fuzz_dds.c adapters/dds/dds_names.c
//   ./a.out -max_total_time=60 corpus/
#include <stdlib.h>
#include <string.h>

#include "adapters/dds/dds_names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int legal(const char *s)
{
    if (!*s || s[0] == '/') return 0;
    int token_start = 1;
    for (; *s; s++) {
        char c = *s;
        if (c == '/') {
            if (token_start) return 0;
            token_start = 1;
            continue;
        }
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return 0;
        if (token_start && c >= '0' && c <= '9') return 0;
        token_start = 0;
    }
    return !token_start;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    char *in = malloc(size + 1);
    if (!in) return 0;
    memcpy(in, data, size);
    in[size] = '\0';
    char out[DDS_TOPIC_MAX + 2];
    for (size_t cap = 2; cap <= sizeof out; cap += cap < 16 ? 1 : 37) {
        memset(out, 'Z', sizeof out);
        size_t n = dds_ros_name(out, cap, in);
        if (n >= cap || out[n] != '\0' || strlen(out) != n || !legal(out)) abort();
    }
    const char *why = NULL;
    char topic[DDS_TOPIC_MAX + 1];
    int rc = dds_topic_from_ros(in, topic, sizeof topic, &why);
    if (rc == 0) {
        const char *name = topic + 2; /* "/..." */
        if (why || strncmp(topic, "rt/", 3) || strlen(topic) > DDS_TOPIC_MAX || !legal(name + 1))
            abort();
        char again[DDS_TOPIC_MAX + 2];
        dds_ros_name(again, sizeof again, name + 1);
        if (strcmp(again, name + 1)) abort();
    } else if (!why) {
        abort();
    }
    free(in);
    return 0;
}
