/* Core timers: the one way an adapter schedules work on the reactor (libevent underneath; adapters
 * never call event_new/evtimer_* themselves, ctest static/adapter_io checks it).
 *
 * A timer is created disarmed with its callback, then armed one of three ways:
 *   xg_timer_once(t, us)   fire once after us microseconds (re-arming moves the deadline);
 *   xg_timer_every(t, us)  fire every us microseconds until stopped;
 *   xg_timer_yield(t)      fire once on the next pass of the loop, after the other ready events
 *                          (a zero timeout; nothing if the timer is already pending) — the
 *                          "continue later" of a budgeted callback;
 *   xg_timer_activate(t)   run it in this pass of the loop, once the running callback returns
 *                          (deferred work such as freeing what the caller still holds).
 * xg_timer_stop() disarms, xg_timer_free() disarms and frees. All run on the loop's thread.
 *
 * A wake-up (struct xg_wake) is the one hand-off from another thread (a library's listener
 * thread, e.g. Cyclone DDS) to the loop: xg_wake_signal() may be called from any thread; the
 * callback then runs once on the loop's thread, however many signals came before it ran. */
#ifndef XG_TIMER_H
#define XG_TIMER_H

#include <stdbool.h>
#include <stdint.h>

struct event_base;

/** A timer (opaque). Owned by its creator; release with xg_timer_free(). */
struct xg_timer;

/** The callback: `arg` as given to xg_timer_new(). It may re-arm, stop or free its own timer. */
typedef void (*xg_timer_fn)(void *arg);

/** A disarmed timer on `base` calling fn(arg). NULL when out of memory. */
struct xg_timer *xg_timer_new(struct event_base *base, xg_timer_fn fn, void *arg);

/** Arm for one firing after `usec` microseconds (0: the next pass of the loop). A pending
 *  firing is replaced. 0, or -ENOMEM / -EINVAL when libevent refuses. */
int xg_timer_once(struct xg_timer *t, uint64_t usec);

/** Arm to fire every `usec` microseconds (> 0), the first after one period, until stopped or
 *  re-armed. 0, or a negative errno. */
int xg_timer_every(struct xg_timer *t, uint64_t usec);

/** Fire once on the next pass of the loop unless already pending (a zero timeout: the other
 *  ready events run first). 0, or a negative errno. */
int xg_timer_yield(struct xg_timer *t);

/** Make the callback run in the current pass of the loop, after the running callback returns
 *  (libevent's event_active; the timer's deadline, if armed, is left alone). Safe on NULL. */
void xg_timer_activate(struct xg_timer *t);

/** Is a firing pending (armed and not yet fired; a periodic timer until stopped)? */
bool xg_timer_pending(const struct xg_timer *t);

/** Disarm (no effect on a disarmed timer). Safe on NULL. */
void xg_timer_stop(struct xg_timer *t);

/** Disarm and free. Safe on NULL. */
void xg_timer_free(struct xg_timer *t);

/** A cross-thread wake-up (opaque). Owned by its creator; release with xg_wake_free(). */
struct xg_wake;

/** A wake-up on `base` calling fn(arg) on the loop's thread after xg_wake_signal(). Its state
 *  is cleared just before fn runs: a signal from then on runs fn again. NULL, with errno set,
 *  when the pipe or the event cannot be made. */
struct xg_wake *xg_wake_new(struct event_base *base, xg_timer_fn fn, void *arg);

/** Ask for one run of the callback. Any thread; lock-free (an atomic flag and a byte written to
 *  a non-blocking pipe, at most one outstanding). */
void xg_wake_signal(struct xg_wake *w);

/** Stop and free (on the loop's thread, once no other thread can signal it). Safe on NULL. */
void xg_wake_free(struct xg_wake *w);

#endif
