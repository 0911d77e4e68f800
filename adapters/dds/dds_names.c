/* ROS 2 names and stamps (see dds_names.h). */
#include "adapters/dds/dds_names.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static bool name_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

size_t dds_ros_name(char *out, size_t size, const char *in)
{
    size_t o = 0;
    bool token_start = true; /* next byte starts a token */
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 1 < size; p++) {
        if (*p == '/') {
            token_start = true;
            continue;
        }
        if (token_start) {
            bool digit = *p >= '0' && *p <= '9';
            /* room for the separator, the '_' before a digit and the byte itself: a cut name
             * never ends with '/' (or a lone '_') */
            size_t need = (o > 0 ? 1 : 0) + (digit ? 1 : 0) + 1;
            if (o + need >= size) break;
            if (o > 0) out[o++] = '/';
            if (digit) out[o++] = '_';
            token_start = false;
        }
        out[o++] = name_char(*p) ? (char)*p : '_';
    }
    if (o == 0 && size >= 2) out[o++] = '_';
    out[o] = '\0';
    return o;
}

int dds_topic_from_ros(const char *ros, char *out, size_t size, const char **why)
{
    *why = NULL;
    if (!ros || !*ros) {
        *why = "empty name";
        return -EINVAL;
    }
    const char *p = ros;
    bool token_start = true;
    if (*p == '/') p++;
    if (!*p) {
        *why = "no name after '/'";
        return -EINVAL;
    }
    for (; *p; p++) {
        if (*p == '/') {
            if (token_start) {
                *why = "empty token ('//')";
                return -EINVAL;
            }
            token_start = true;
            continue;
        }
        if (!name_char((unsigned char)*p)) {
            *why = "a character outside [A-Za-z0-9_/]";
            return -EINVAL;
        }
        if (token_start && *p >= '0' && *p <= '9') {
            *why = "a token starting with a digit";
            return -EINVAL;
        }
        token_start = false;
    }
    if (token_start) {
        *why = "a trailing '/'";
        return -EINVAL;
    }
    size_t need = 2 + (ros[0] == '/' ? 0 : 1) + strlen(ros);
    if (need > DDS_TOPIC_MAX || need + 1 > size) {
        *why = "longer than 256 bytes as a DDS topic name";
        return -EINVAL;
    }
    strcpy(out, "rt");
    if (ros[0] != '/') strcat(out, "/");
    strcat(out, ros);
    return 0;
}

void dds_stamp_from_ns(int64_t ns, int32_t *sec, uint32_t *nanosec)
{
    int64_t s = ns / 1000000000, r = ns % 1000000000;
    if (r < 0) {
        r += 1000000000;
        s--;
    }
    if (s > INT32_MAX) {
        s = INT32_MAX;
        r = 999999999;
    } else if (s < INT32_MIN) {
        s = INT32_MIN;
        r = 0;
    }
    *sec = (int32_t)s;
    *nanosec = (uint32_t)r;
}

int dds_stamp_to_ns(int32_t sec, uint32_t nanosec, int64_t *ns)
{
    if (nanosec >= 1000000000u) return -EINVAL;
    *ns = (int64_t)sec * 1000000000 + (int64_t)nanosec;
    return 0;
}
