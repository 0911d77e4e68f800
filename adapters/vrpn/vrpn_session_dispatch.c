/* Socket-free VRPN session (vrpn_session.h): dispatch of one message by sender/type id. System
 * messages (descriptions, UDP and log descriptions, §5.3-§5.6) are handled alike by both roles;
 * device messages follow each role's rule: a client ignores what it never saw described and what
 * is not one of its devices (§5.3, §6.5), a server closes the connection on an id the client
 * never described and checks the size of every request it knows (§8). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "adapters/vrpn/vrpn_callback.h"
#include "adapters/vrpn/vrpn_session_priv.h"

/* Where a client-role error happened (server-role errors have no `where`). */
static const char *role_where(bool udp)
{
    return udp ? "udp" : "tcp";
}

/* A SENDER/TYPE_DESCRIPTION: map the peer's id, describe a new name back (§6.2). */
static int on_description(struct vrpn_session *s, const struct vrpn_system_msg *sm, bool udp,
                          int64_t rx)
{
    enum vrpn_id_kind k = sm->type == VRPN_SENDER_DESCRIPTION ? VRPN_ID_SENDER : VRPN_ID_TYPE;
    bool is_new = false;
    struct xg_error err = {0};
    int local = vrpn_id_map_describe(&s->ids, k, sm->id, sm->name, &is_new, &err);
    if (local < 0) {
        if (s->role == VRPN_ROLE_CLIENT)
            return vrpn_sess_fail(s, VRPN_ERR_INPUT, role_where(udp), local, "%s", err.msg);
        return vrpn_sess_fail(s, VRPN_ERR_INPUT, "", local,
                              "%s description of id %" PRId32 " '%s': %s",
                              k == VRPN_ID_SENDER ? "sender" : "type", sm->id, sm->name, err.msg);
    }
    bool echoed = false;
    if (is_new) {
        uint8_t b[VRPN_HEADER_SIZE + 4 + VRPN_CNAME_MAX + 8];
        struct xg_writer w;
        xg_writer_init(&w, b, sizeof b);
        struct vrpn_header h = vrpn_session_header(s, rx);
        if (vrpn_encode_description(&w, &h, &s->seq, sm->type, local, sm->name, NULL) == 0) {
            int rc = vrpn_sess_send(s, b, w.len);
            if (rc < 0) return rc;
            s->stats.echoes++;
            echoed = true;
        }
    }
    struct vrpn_event ev = {.kind = VRPN_EV_DESCRIBED,
                            .id_kind = k,
                            .remote_id = sm->id,
                            .local_id = local,
                            .name = sm->name,
                            .echoed = echoed};
    return vrpn_sess_emit(s, &ev);
}

static int on_system(struct vrpn_session *s, const struct vrpn_msg *m, bool udp, int64_t rx)
{
    struct vrpn_system_msg sm;
    struct xg_error err = {0};
    int rc = vrpn_system_decode(m, &sm, &err);
    if (rc < 0) {
        if (s->role == VRPN_ROLE_CLIENT)
            return vrpn_sess_fail(s, VRPN_ERR_INPUT, role_where(udp), rc, "%s", err.msg);
        return vrpn_sess_fail(s, VRPN_ERR_INPUT, "", rc, "system message: %s", err.msg);
    }
    struct vrpn_event ev = {0};
    switch (sm.type) {
    case VRPN_SENDER_DESCRIPTION:
    case VRPN_TYPE_DESCRIPTION:
        return on_description(s, &sm, udp, rx);
    case VRPN_UDP_DESCRIPTION:
        if (s->role == VRPN_ROLE_SERVER) {
            /* numeric only: resolving a name would block the reactor */
            struct sockaddr_in sin;
            if (vrpn_callback_target(sm.name, sm.udp_port, &sin) < 0)
                return vrpn_sess_fail(s, VRPN_ERR_INPUT, "", -EPROTO,
                                      "UDP description: host '%s' is not a numeric IPv4 address",
                                      sm.name);
        }
        ev.kind = VRPN_EV_UDP_DESCRIPTION;
        ev.name = sm.name;
        ev.udp_port = sm.udp_port;
        return vrpn_sess_emit(s, &ev);
    case VRPN_LOG_DESCRIPTION: /* we never log */
        ev.kind = VRPN_EV_LOG_DESCRIPTION;
        ev.log_mode = sm.log_mode;
        return vrpn_sess_emit(s, &ev);
    default:
        return 0; /* disconnect (log files only): nothing to do */
    }
}

/* Client: a device message of the server (vrpn-client's rules, §5.3, §6.5, §7). */
static int client_message(struct vrpn_session *s, const struct vrpn_msg *m, bool udp, int64_t rx)
{
    const char *where = role_where(udp);
    struct xg_error err = {0};
    int lt = vrpn_id_map_to_local(&s->ids, VRPN_ID_TYPE, m->hdr.type, &err);
    if (lt == -EPROTO) return vrpn_sess_fail(s, VRPN_ERR_INPUT, where, lt, "%s", err.msg);
    int ls = vrpn_id_map_to_local(&s->ids, VRPN_ID_SENDER, m->hdr.sender, &err);
    if (ls == -EPROTO) return vrpn_sess_fail(s, VRPN_ERR_INPUT, where, ls, "%s", err.msg);
    if (lt < 0 || ls < 0) /* never described: ignored, as mainline does (§5.3) */
        return vrpn_sess_ignore(s, "sender or type never described");
    const char *tname = vrpn_id_map_name(&s->ids, VRPN_ID_TYPE, lt);
    enum vrpn_body_kind kind = vrpn_body_kind_of(tname);
    /* our devices are the senders registered before the cookie, after VRPN Control */
    if (ls < 1 || ls >= s->n_own_senders) return vrpn_sess_ignore(s, "not one of our devices");
    if (kind == VRPN_BODY_UNKNOWN) return vrpn_sess_ignore(s, "a type we do not use");
    if (kind == VRPN_BODY_PING) return vrpn_sess_ignore(s, "a ping (a client never answers)");
    const char *sname = vrpn_id_map_name(&s->ids, VRPN_ID_SENDER, ls);
    int rc = vrpn_body_decode(kind, m->body, m->body_len, &s->body, &err);
    if (rc < 0)
        return vrpn_sess_fail(s, VRPN_ERR_INPUT, where, rc, "device '%s': %s", sname, err.msg);
    struct vrpn_event ev = {.sender_local = ls, .sender = sname};
    if (kind == VRPN_BODY_PONG) {
        s->stats.pongs++;
        ev.kind = VRPN_EV_PONG;
        ev.first = ls < s->n_ping && !s->ping[ls].ponged;
        if (ls < s->n_ping) s->ping[ls].ponged = true;
        return vrpn_sess_emit(s, &ev);
    }
    if (udp)
        s->stats.udp_reports++;
    else
        s->stats.tcp_reports++;
    ev.kind = VRPN_EV_MESSAGE;
    ev.type_local = lt;
    ev.type = tname;
    ev.hdr = &m->hdr;
    ev.body = &s->body;
    ev.rx_ns = rx;
    ev.udp = udp;
    return vrpn_sess_emit(s, &ev);
}

/* The exact body size of a request the server knows but does not decode, or SIZE_MAX. */
static size_t request_size(int type)
{
    switch (type) {
    case VRPN_T_SET_UPDATE_RATE:
    case VRPN_T_BUTTON_ADMIN:
        return 8;
    case VRPN_T_REQUEST_TO_ROOM:
    case VRPN_T_REQUEST_UNIT_TO_SENSOR:
    case VRPN_T_REQUEST_WORKSPACE:
    case VRPN_T_RESET_ORIGIN:
        return 0;
    default:
        return SIZE_MAX;
    }
}

/* Server: a client's message (vrpn-server's rules: an undescribed id closes the connection). */
static int server_message(struct vrpn_session *s, const struct vrpn_msg *m, bool udp, int64_t rx)
{
    struct xg_error err = {0};
    int lt = vrpn_id_map_to_local(&s->ids, VRPN_ID_TYPE, m->hdr.type, &err);
    if (lt < 0)
        return vrpn_sess_fail(s, VRPN_ERR_INPUT, "", lt, "message type id %" PRId32 " %s",
                              m->hdr.type, lt == -ENOENT ? "was never described" : err.msg);
    const char *tname = vrpn_id_map_name(&s->ids, VRPN_ID_TYPE, lt);
    if (!tname) tname = "?";
    int ls = vrpn_id_map_to_local(&s->ids, VRPN_ID_SENDER, m->hdr.sender, &err);
    if (ls < 0)
        return vrpn_sess_fail(s, VRPN_ERR_INPUT, "", ls,
                              "message sender id %" PRId32 " (type '%s') %s", m->hdr.sender, tname,
                              ls == -ENOENT ? "was never described" : err.msg);
    enum vrpn_body_kind kind = vrpn_body_kind_of(tname);
    size_t want = request_size(lt);
    if (want != SIZE_MAX && m->body_len != want)
        return vrpn_sess_fail(s, VRPN_ERR_INPUT, "", -EPROTO,
                              "'%s' body is %zu bytes, expected %zu", tname, m->body_len, want);
    s->body.kind = VRPN_BODY_UNKNOWN;
    if (kind != VRPN_BODY_UNKNOWN) {
        int rc = vrpn_body_decode(kind, m->body, m->body_len, &s->body, &err);
        if (rc < 0) return vrpn_sess_fail(s, VRPN_ERR_INPUT, "", rc, "body: %s", err.msg);
    }
    struct vrpn_event ev = {.kind = VRPN_EV_MESSAGE,
                            .sender_local = ls,
                            .sender = vrpn_id_map_name(&s->ids, VRPN_ID_SENDER, ls),
                            .type_local = lt,
                            .type = tname,
                            .hdr = &m->hdr,
                            .body = &s->body,
                            .rx_ns = rx,
                            .udp = udp};
    return vrpn_sess_emit(s, &ev);
}

int vrpn_sess_dispatch(struct vrpn_session *s, const struct vrpn_msg *m, bool udp, int64_t rx)
{
    s->stats.messages++;
    if (m->hdr.type < 0) return on_system(s, m, udp, rx);
    if (s->role == VRPN_ROLE_CLIENT) return client_message(s, m, udp, rx);
    return server_message(s, m, udp, rx);
}
