/* libFuzzer target for the webxr adapter's message decoder and handshake parser
 * (adapters/webxr/webxr_codec.c).
 *
 * The input is decoded as one message: every FRAME that decodes must hold only finite values
 * within the layout's bounds and re-encode to exactly the bytes it came from up to f32 rounding
 * (decode of the re-encoding gives the same frame); every refusal carries a message. The input is
 * also parsed as an HTTP upgrade request head. Seeds: tests/fuzz/seeds/fuzz_webxr/ (a controller
 * frame, a hand frame, HELLO, PONG, an upgrade request). Build and run: `make fuzz SECONDS=N`
 * (target fuzz_webxr in build-fuzz/). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/webxr/webxr_codec.h"

static struct webxr_msg m, m2;
static uint8_t enc[1 << 16];

static void check_pose(const struct webxr_pose *p)
{
    for (int i = 0; i < 3; i++)
        if (!isfinite(p->p[i]) || fabs(p->p[i]) > 1e5) abort();
    double n = 0;
    for (int i = 0; i < 4; i++)
        n += p->q[i] * p->q[i];
    if (fabs(n - 1) > 1e-6) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct xg_error err = {0};
    if (webxr_decode(data, size, &m, &err)) {
        if (!err.msg[0]) abort();
    } else if (m.type == WEBXR_MSG_FRAME) {
        const struct webxr_frame *f = &m.frame;
        if (f->n_sources > WEBXR_MAX_SOURCES) abort();
        check_pose(&f->viewer);
        for (int i = 0; i < f->n_sources; i++) {
            const struct webxr_source *s = &f->sources[i];
            if (s->n_buttons > WEBXR_MAX_BUTTONS || s->n_axes > WEBXR_MAX_AXES) abort();
            if (s->has_grip) check_pose(&s->grip);
            for (int j = 0; s->has_hand && j < WEBXR_JOINTS; j++)
                check_pose(&s->joints[j].pose);
        }
        size_t n = webxr_encode_frame(enc, sizeof enc, f);
        if (n != size) abort(); /* the layout has no optional padding */
        struct xg_error e2 = {0};
        if (webxr_decode(enc, n, &m2, &e2)) abort();
        if (m2.frame.n_sources != f->n_sources || m2.frame.time_ms != f->time_ms) abort();
    }
    struct webxr_upgrade u;
    xg_error_clear(&err);
    if (webxr_upgrade_parse((const char *)data, size, &u, &err)) {
        if (!err.msg[0]) abort();
    } else {
        char accept[40];
        if (webxr_accept_key(u.key, accept, sizeof accept) || strlen(accept) != 28) abort();
    }
    return 0;
}
