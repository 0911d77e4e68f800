/* VRPN 07.38 wire codec, report bodies (see vrpn_codec.h): the standard type names
 * (vrpn_std_types[]), each body kind's layout, decoding with size and sensor checks, encoding. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/vrpn/vrpn_codec.h"
#include "adapters/vrpn/vrpn_codec_priv.h"

/* ---- bodies ---- */

static const struct {
    enum vrpn_body_kind kind;
    const char *name;
} kind_names[] = {
    {VRPN_BODY_POS_QUAT, VRPN_TYPE_POS_QUAT},
    {VRPN_BODY_VELOCITY, VRPN_TYPE_VELOCITY},
    {VRPN_BODY_ACCELERATION, VRPN_TYPE_ACCELERATION},
    {VRPN_BODY_BUTTON_CHANGE, VRPN_TYPE_BUTTON_CHANGE},
    {VRPN_BODY_BUTTON_STATES, VRPN_TYPE_BUTTON_STATES},
    {VRPN_BODY_ANALOG, VRPN_TYPE_ANALOG_CHANNEL},
    {VRPN_BODY_DIAL, VRPN_TYPE_DIAL},
    {VRPN_BODY_PING, VRPN_TYPE_PING},
    {VRPN_BODY_PONG, VRPN_TYPE_PONG},
    {VRPN_BODY_TEXT, VRPN_TYPE_TEXT},
};

const char *const vrpn_std_types[VRPN_T_COUNT] = {
    [VRPN_T_GOT_FIRST_CONNECTION] = VRPN_TYPE_GOT_FIRST_CONNECTION,
    [VRPN_T_GOT_CONNECTION] = VRPN_TYPE_GOT_CONNECTION,
    [VRPN_T_DROPPED_CONNECTION] = VRPN_TYPE_DROPPED_CONNECTION,
    [VRPN_T_DROPPED_LAST_CONNECTION] = VRPN_TYPE_DROPPED_LAST_CONNECTION,
    [VRPN_T_POS_QUAT] = VRPN_TYPE_POS_QUAT,
    [VRPN_T_VELOCITY] = VRPN_TYPE_VELOCITY,
    [VRPN_T_ACCELERATION] = VRPN_TYPE_ACCELERATION,
    [VRPN_T_TO_ROOM] = "vrpn_Tracker To_Room",
    [VRPN_T_UNIT_TO_SENSOR] = "vrpn_Tracker Unit_To_Sensor",
    [VRPN_T_REQUEST_TO_ROOM] = "vrpn_Tracker Request_Tracker_To_Room",
    [VRPN_T_REQUEST_UNIT_TO_SENSOR] = "vrpn_Tracker Request_Unit_To_Sensor",
    [VRPN_T_WORKSPACE] = "vrpn_Tracker Workspace",
    [VRPN_T_REQUEST_WORKSPACE] = "vrpn_Tracker Request_Tracker_Workspace",
    [VRPN_T_SET_UPDATE_RATE] = "vrpn_Tracker set_update_rate",
    [VRPN_T_RESET_ORIGIN] = "vrpn_Tracker Reset_Origin",
    [VRPN_T_TEXT] = VRPN_TYPE_TEXT,
    [VRPN_T_PING] = VRPN_TYPE_PING,
    [VRPN_T_PONG] = VRPN_TYPE_PONG,
    [VRPN_T_ANALOG] = VRPN_TYPE_ANALOG_CHANNEL,
    [VRPN_T_BUTTON_CHANGE] = VRPN_TYPE_BUTTON_CHANGE,
    [VRPN_T_BUTTON_STATES] = VRPN_TYPE_BUTTON_STATES,
    [VRPN_T_BUTTON_ADMIN] = "vrpn_Button Admin",
    [VRPN_T_DIAL] = VRPN_TYPE_DIAL,
    [VRPN_T_BUTTON_ALERT] = "vrpn_Button Alert",
};

enum vrpn_body_kind vrpn_body_kind_of(const char *type_name)
{
    if (!type_name) return VRPN_BODY_UNKNOWN;
    for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++)
        if (strcmp(type_name, kind_names[i].name) == 0) return kind_names[i].kind;
    return VRPN_BODY_UNKNOWN;
}

const char *vrpn_body_type_name(enum vrpn_body_kind kind)
{
    for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++)
        if (kind_names[i].kind == kind) return kind_names[i].name;
    return NULL;
}

bool vrpn_body_low_latency(enum vrpn_body_kind kind)
{
    return kind == VRPN_BODY_POS_QUAT || kind == VRPN_BODY_VELOCITY ||
           kind == VRPN_BODY_ACCELERATION || kind == VRPN_BODY_ANALOG;
}

static int body_size_error(enum vrpn_body_kind kind, size_t len, size_t want, struct xg_error *err)
{
    return xg_error_set(err, -EPROTO, "vrpn %s: body of %zu bytes, want %zu",
                        vrpn_body_type_name(kind), len, want);
}

static struct xg_vec3 read_vec3(struct xg_reader *r)
{
    struct xg_vec3 v;
    v.x = xg_read_bef64(r);
    v.y = xg_read_bef64(r);
    v.z = xg_read_bef64(r);
    return v;
}

static struct xg_quat read_quat(struct xg_reader *r)
{
    struct xg_quat q;
    q.x = xg_read_bef64(r);
    q.y = xg_read_bef64(r);
    q.z = xg_read_bef64(r);
    q.w = xg_read_bef64(r);
    return q;
}

static int check_sensor(enum vrpn_body_kind kind, int32_t sensor, struct xg_error *err)
{
    if (sensor < 0)
        return xg_error_set(err, -EPROTO, "vrpn %s: negative sensor %d", vrpn_body_type_name(kind),
                            sensor);
    return 0;
}

int vrpn_body_decode(enum vrpn_body_kind kind, const uint8_t *body, size_t len,
                     struct vrpn_body *out, struct xg_error *err)
{
    struct xg_reader r;
    xg_reader_init(&r, body, len);
    out->kind = kind;
    switch (kind) {
    case VRPN_BODY_POS_QUAT: {
        if (len != 64) return body_size_error(kind, len, 64, err);
        struct vrpn_pos_quat *pq = &out->u.pos_quat;
        pq->sensor = (int32_t)xg_read_be32(&r);
        pq->filler = (int32_t)xg_read_be32(&r);
        pq->pos = read_vec3(&r);
        pq->quat = read_quat(&r);
        return check_sensor(kind, pq->sensor, err);
    }
    case VRPN_BODY_VELOCITY:
    case VRPN_BODY_ACCELERATION: {
        if (len != 72) return body_size_error(kind, len, 72, err);
        struct vrpn_tracker_rate *tr = &out->u.rate;
        tr->sensor = (int32_t)xg_read_be32(&r);
        tr->filler = (int32_t)xg_read_be32(&r);
        tr->vec = read_vec3(&r);
        tr->quat = read_quat(&r);
        tr->quat_dt = xg_read_bef64(&r);
        return check_sensor(kind, tr->sensor, err);
    }
    case VRPN_BODY_BUTTON_CHANGE:
        if (len != 8) return body_size_error(kind, len, 8, err);
        out->u.button.button = (int32_t)xg_read_be32(&r);
        out->u.button.state = (int32_t)xg_read_be32(&r);
        return 0;
    case VRPN_BODY_BUTTON_STATES: {
        int32_t n = (int32_t)xg_read_be32(&r);
        if (r.err) return body_size_error(kind, len, 4, err);
        if (n < 0 || n > VRPN_MAX_BUTTONS)
            return xg_error_set(err, -EPROTO, "vrpn %s: button count %d out of range 0..%d",
                                vrpn_body_type_name(kind), n, VRPN_MAX_BUTTONS);
        if (len != 4 + 4 * (size_t)n) return body_size_error(kind, len, 4 + 4 * (size_t)n, err);
        out->u.states.count = n;
        for (int32_t i = 0; i < n; i++)
            out->u.states.states[i] = (int32_t)xg_read_be32(&r);
        return 0;
    }
    case VRPN_BODY_ANALOG: {
        double dn = xg_read_bef64(&r);
        if (r.err) return body_size_error(kind, len, 8, err);
        if (!(dn >= 0 && dn <= VRPN_MAX_ANALOG) || dn != floor(dn))
            return xg_error_set(err, -EPROTO,
                                "vrpn %s: channel count %g is not an integer in "
                                "0..%d",
                                vrpn_body_type_name(kind), dn, VRPN_MAX_ANALOG);
        int32_t n = (int32_t)dn;
        if (len != 8 * ((size_t)n + 1)) return body_size_error(kind, len, 8 * ((size_t)n + 1), err);
        out->u.analog.count = n;
        for (int32_t i = 0; i < n; i++)
            out->u.analog.channels[i] = xg_read_bef64(&r);
        return 0;
    }
    case VRPN_BODY_DIAL:
        if (len != 12) return body_size_error(kind, len, 12, err);
        out->u.dial.delta = xg_read_bef64(&r);
        out->u.dial.dial = (int32_t)xg_read_be32(&r);
        return 0;
    case VRPN_BODY_PING:
    case VRPN_BODY_PONG:
        if (len != 0) return body_size_error(kind, len, 0, err);
        return 0;
    case VRPN_BODY_TEXT: {
        if (len < 9 || len > VRPN_TEXT_PAYLOAD)
            return xg_error_set(err, -EPROTO, "vrpn %s: body of %zu bytes, want 9..%d",
                                vrpn_body_type_name(kind), len, VRPN_TEXT_PAYLOAD);
        out->u.text.severity = xg_read_be32(&r);
        out->u.text.level = xg_read_be32(&r);
        size_t avail = len - 8;
        const uint8_t *s = xg_read_bytes(&r, avail);
        const uint8_t *nul = memchr(s, '\0', avail);
        if (!nul)
            return xg_error_set(err, -EPROTO, "vrpn %s: string of %zu bytes has no NUL",
                                vrpn_body_type_name(kind), avail);
        memcpy(out->u.text.text, s, (size_t)(nul - s) + 1);
        return 0;
    }
    case VRPN_BODY_UNKNOWN:
    default:
        return xg_error_set(err, -EINVAL, "vrpn: cannot decode a body of unknown kind %d",
                            (int)kind);
    }
}

static void write_vec3(struct xg_writer *w, struct xg_vec3 v)
{
    xg_write_bef64(w, v.x);
    xg_write_bef64(w, v.y);
    xg_write_bef64(w, v.z);
}

static void write_quat(struct xg_writer *w, struct xg_quat q)
{
    xg_write_bef64(w, q.x);
    xg_write_bef64(w, q.y);
    xg_write_bef64(w, q.z);
    xg_write_bef64(w, q.w);
}

int vrpn_body_encode(struct xg_writer *w, const struct vrpn_body *b, struct xg_error *err)
{
    const char *what = vrpn_body_type_name(b->kind);
    switch (b->kind) {
    case VRPN_BODY_POS_QUAT:
        if (b->u.pos_quat.sensor < 0)
            return xg_error_set(err, -EINVAL, "vrpn %s: negative sensor %d", what,
                                b->u.pos_quat.sensor);
        xg_write_be32(w, (uint32_t)b->u.pos_quat.sensor);
        xg_write_be32(w, (uint32_t)b->u.pos_quat.sensor);
        write_vec3(w, b->u.pos_quat.pos);
        write_quat(w, b->u.pos_quat.quat);
        break;
    case VRPN_BODY_VELOCITY:
    case VRPN_BODY_ACCELERATION:
        if (b->u.rate.sensor < 0)
            return xg_error_set(err, -EINVAL, "vrpn %s: negative sensor %d", what,
                                b->u.rate.sensor);
        xg_write_be32(w, (uint32_t)b->u.rate.sensor);
        xg_write_be32(w, (uint32_t)b->u.rate.sensor);
        write_vec3(w, b->u.rate.vec);
        write_quat(w, b->u.rate.quat);
        xg_write_bef64(w, b->u.rate.quat_dt);
        break;
    case VRPN_BODY_BUTTON_CHANGE:
        xg_write_be32(w, (uint32_t)b->u.button.button);
        xg_write_be32(w, (uint32_t)b->u.button.state);
        break;
    case VRPN_BODY_BUTTON_STATES:
        if (b->u.states.count < 0 || b->u.states.count > VRPN_MAX_BUTTONS)
            return xg_error_set(err, -EINVAL, "vrpn %s: button count %d out of range 0..%d", what,
                                b->u.states.count, VRPN_MAX_BUTTONS);
        xg_write_be32(w, (uint32_t)b->u.states.count);
        for (int32_t i = 0; i < b->u.states.count; i++)
            xg_write_be32(w, (uint32_t)b->u.states.states[i]);
        break;
    case VRPN_BODY_ANALOG:
        if (b->u.analog.count < 0 || b->u.analog.count > VRPN_MAX_ANALOG)
            return xg_error_set(err, -EINVAL, "vrpn %s: channel count %d out of range 0..%d", what,
                                b->u.analog.count, VRPN_MAX_ANALOG);
        xg_write_bef64(w, (double)b->u.analog.count);
        for (int32_t i = 0; i < b->u.analog.count; i++)
            xg_write_bef64(w, b->u.analog.channels[i]);
        break;
    case VRPN_BODY_DIAL:
        xg_write_bef64(w, b->u.dial.delta);
        xg_write_be32(w, (uint32_t)b->u.dial.dial);
        break;
    case VRPN_BODY_PING:
    case VRPN_BODY_PONG:
        break;
    case VRPN_BODY_TEXT: {
        size_t n = strnlen(b->u.text.text, VRPN_TEXT_MAX);
        if (n >= VRPN_TEXT_MAX)
            return xg_error_set(err, -EINVAL, "vrpn %s: text longer than %d characters", what,
                                VRPN_TEXT_MAX - 1);
        xg_write_be32(w, b->u.text.severity);
        xg_write_be32(w, b->u.text.level);
        xg_write_bytes(w, b->u.text.text, n);
        xg_write_zeros(w, VRPN_TEXT_PAYLOAD - 8 - n);
        break;
    }
    case VRPN_BODY_UNKNOWN:
    default:
        return xg_error_set(err, -EINVAL, "vrpn: cannot encode a body of unknown kind %d",
                            (int)b->kind);
    }
    if (w->err) return vrpn_wr_fail(w, err, what);
    return 0;
}

int vrpn_encode_body_message(struct xg_writer *w, const struct vrpn_header *h, uint32_t *seq,
                             const struct vrpn_body *b, struct xg_error *err)
{
    uint8_t body[VRPN_TEXT_PAYLOAD + 8]; /* the largest body: text (analog 1032, states 1028) */
    struct xg_writer bw;
    xg_writer_init(&bw, body, sizeof body);
    int rc = vrpn_body_encode(&bw, b, err);
    if (rc) return rc;
    return vrpn_encode_message(w, h, seq, body, bw.len, err);
}
