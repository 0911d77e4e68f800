/* The work one wake-up of a datagram socket may do before it yields to the loop (issue 30 item
 * 2): every UDP ingress (vmc, rtp, less over UDP, vrpn's UDP sockets) reads datagrams while its
 * budget lasts, charged with what each one cost: its bytes and the messages it held (OSC
 * messages, game-state objects, VRPN messages...), not one unit per datagram. When the budget is
 * spent the read callback returns; the socket is still readable, so the (level-triggered) event
 * fires again on the next pass of the loop, after the other ready events (/healthz, timers,
 * other adapters) had their turn. A datagram is never split: one is always read, so a wake does
 * at most max(budget, one 64 KB datagram) of work.
 *
 * Adapters do not run this loop themselves: the core UDP endpoint does (struct xg_udp_rx,
 * core/net/udp_endpoint.h), charging each datagram with the messages its callback says it held:
 *     xg_ingress_begin(&b);
 *     while (xg_ingress_more(&b)) {
 *         ssize_t n = recvfrom(...);
 *         if (n < 0) break;
 *         ... the adapter's callback ...
 *         xg_ingress_charge(&b, (size_t)n, messages_it_held);
 *     }
 * Adapters keep the budget (to share it between sockets, or for its counters to outlive a
 * close) and call xg_ingress_status() in their status (counters rx_wakes, rx_yields). */
#ifndef XG_INGRESS_BUDGET_H
#define XG_INGRESS_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct xg_status;

#define XG_INGRESS_MSGS 512          /**< messages per wake-up (default) */
#define XG_INGRESS_BYTES (64 * 1024) /**< bytes per wake-up (default) */
#define XG_INGRESS_DATAGRAMS 64      /**< datagrams (recvfrom calls) per wake-up (default) */

/** One socket's budget. Zero-initialised = the defaults above; set a max_* to change one. */
struct xg_ingress_budget {
    uint32_t max_msgs, max_bytes, max_datagrams; /**< 0 = the default */
    uint32_t msgs, bytes, datagrams;             /**< spent in the current wake-up */
    uint64_t wakes;                              /**< wake-ups (read callbacks) */
    uint64_t yields; /**< wake-ups that ended because the budget was spent */
};

/** Start a wake-up: the budget is full again; counts the wake-up. */
void xg_ingress_begin(struct xg_ingress_budget *b);
/** May one more datagram be read in this wake-up? True for the first one always; false once
 *  messages, bytes or datagrams reached their maximum (the wake-up is then counted as a yield). */
bool xg_ingress_more(struct xg_ingress_budget *b);
/** Charge one datagram of `bytes` bytes that held `msgs` messages (0 counts as 1). */
void xg_ingress_charge(struct xg_ingress_budget *b, size_t bytes, size_t msgs);
/** Counters rx_wakes and rx_yields into an adapter's status. */
void xg_ingress_status(const struct xg_ingress_budget *b, struct xg_status *st);

#endif
