/* Private to vrpn_session.c and vrpn_session_dispatch.c (the socket-free VRPN session,
 * vrpn_session.h). */
#ifndef XG_VRPN_SESSION_PRIV_H
#define XG_VRPN_SESSION_PRIV_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>

#include "adapters/vrpn/vrpn_session.h"

/** Client: the ping state of one of our senders (index = our sender id). */
struct vrpn_ping_state {
    bool ponged, warned, warn_due;
    int64_t start_ns, last_ns;
};

/** Record an error (kind, client-role `where`, code, printf text), close the session and return
 *  code. */
int vrpn_sess_fail(struct vrpn_session *s, enum vrpn_err_kind kind, const char *where, int code,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/** ops.send; 0 or -ECONNABORTED. */
int vrpn_sess_send(struct vrpn_session *s, const uint8_t *buf, size_t len);

/** ops.event (if any); 0 or -ECONNABORTED. */
int vrpn_sess_emit(struct vrpn_session *s, const struct vrpn_event *ev);

/** Count a dropped message and emit VRPN_EV_IGNORED with `reason`; 0 or -ECONNABORTED. */
int vrpn_sess_ignore(struct vrpn_session *s, const char *reason);

/** Dispatch one framed message (TCP or, with udp, a datagram's) received at rx: system messages,
 *  then by sender/type id per role. 0, a negative errno with the error recorded (close), or
 *  -ECONNABORTED. */
int vrpn_sess_dispatch(struct vrpn_session *s, const struct vrpn_msg *m, bool udp, int64_t rx);

#endif
