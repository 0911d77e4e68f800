/* The calibration solver's worker thread (docs/calibration.md "Solving off the event loop").
 *
 * xg_calib_solve takes 12-16 ms with -O2 (about 30 ms in a Debug build): too long for the event
 * loop of a gateway relaying 240 Hz streams. The loop snapshots the pair windows of one
 * calibration into a job (its own copies: the worker never touches the rings, the table or the
 * calibration), submits it and keeps serving; one worker thread solves the jobs one after the
 * other (FIFO) and queues the finished ones; one byte on a non-blocking pipe wakes a read event
 * of the loop, which hands every finished job to the `deliver` callback on the loop thread (the
 * same pattern as the dds adapter's listener). Everything but xg_calib_solve and the state
 * file's write runs on the loop: the result is applied and logged there, and the state file is
 * serialised there into a buffer; a write job (xg_calib_worker_write) then writes it (temporary
 * file, fsync, rename) in the thread, in the same FIFO as the solves, so that writes happen in
 * the order they were submitted (the last one wins). Its outcome is delivered like a solve's.
 *
 * Threads: xg_calib_worker_submit, _write, _cancel, _hold and _free are called on the loop thread
 * only; the worker thread only runs xg_calib_solve or xg_calib_write_file on a job it owns while
 * it runs it. The thread is started at the first submit, a solve or a write (a gateway whose
 * calibrations never solve or reset has none). */
#ifndef XG_GATEWAY_CALIB_WORKER_H
#define XG_GATEWAY_CALIB_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/calib/calib_solve.h"

struct event_base;
struct xg_calib_worker;

/** A job's kind: a solve, or a write of the state file. */
enum xg_calib_job_kind { XG_CALIB_JOB_SOLVE = 0, XG_CALIB_JOB_WRITE };

/** One solve (the snapshot in, the result out) or one write of the state file. The job owns
 *  `ref` and `tgt`, `path` and `data` (malloc'd; freed with the job by the worker module after
 *  `deliver` returned). */
struct xg_calib_job {
    struct xg_calib_job *next; /* the worker's lists */
    enum xg_calib_job_kind kind;
    uint64_t id;  /* set by xg_calib_worker_submit: unique per worker, never 0 */
    uint64_t gen; /* the submitter's generation (a late result is recognised) */
    struct xg_calib_sample *ref, *tgt; /* ascending t_ns, as xg_calib_solve takes them */
    size_t n_ref, n_tgt;
    struct xg_calib_opts opts;
    /* filled by the worker */
    int rc;                     /* xg_calib_solve's return; a write's: 0 or -errno */
    struct xg_calib_result res; /* its result */
    double solve_ms;            /* wall time of the job (solve or write) in the worker, ms */
    /* a write (XG_CALIB_JOB_WRITE): `len` bytes of `data` go to the file `path` */
    char *path, *data;
    size_t len;
};

/** Called on the loop thread for every finished job (in the order they finished). The job and
 *  its snapshot are freed after it returns: copy what is kept. */
typedef void (*xg_calib_deliver_fn)(void *user, const struct xg_calib_job *job);

/** A worker whose finished jobs are delivered by a read event on `base`. NULL on ENOMEM or when
 *  no pipe can be made (errno set). No thread yet. */
struct xg_calib_worker *xg_calib_worker_new(struct event_base *base, xg_calib_deliver_fn deliver,
                                            void *user);
/** Queue `job` (ownership passes to the worker) and start the thread if needed. Returns the
 *  job's id (> 0), or 0 when the thread cannot be started (the job is then freed). */
uint64_t xg_calib_worker_submit(struct xg_calib_worker *w, struct xg_calib_job *job);
/** Queue a write of `len` bytes of `data` (malloc'd; ownership passes to the worker) to the file
 *  `path` (copied), after every job submitted before, with xg_calib_write_file. Its outcome
 *  (`rc`, `solve_ms`, `path`) is delivered as a job of kind XG_CALIB_JOB_WRITE. Returns the job's
 *  id (> 0), or 0 on ENOMEM or when the thread cannot be started (`data` is then freed and
 *  nothing was written). A write is never cancelled and is completed by xg_calib_worker_free. */
uint64_t xg_calib_worker_write(struct xg_calib_worker *w, const char *path, char *data, size_t len);
/** Write `len` bytes of `data` to `path` so that a crash leaves the old or the new file: a
 *  temporary file `path`.tmp (mode 0666 less the umask), fsync, rename over `path`. 0, or -errno
 *  (the temporary file is removed). Any thread. */
int xg_calib_write_file(const char *path, const char *data, size_t len);
/** Drop job `id` if it is still waiting (not started): true then, and it is never delivered.
 *  A job being solved or already finished cannot be cancelled (false): it is delivered. */
bool xg_calib_worker_cancel(struct xg_calib_worker *w, uint64_t id);
/** Tests: while held, the worker starts no new job (a job submitted meanwhile stays waiting, so
 *  that a test can act while a solve is "in flight"). */
void xg_calib_worker_hold(struct xg_calib_worker *w, bool hold);
/** Replace the delivery target (the calibration set changes at a reload). */
void xg_calib_worker_retarget(struct xg_calib_worker *w, void *user);
/** Stop: waiting solves are dropped, the job being run is finished, waiting writes are done (in
 *  order: a clean stop keeps the last result), the thread is joined (the caller waits at most one
 *  solve and the pending writes); finished writes are delivered (on the caller's thread, the
 *  loop's), finished solves are dropped undelivered. NULL ok. */
void xg_calib_worker_free(struct xg_calib_worker *w);
/** Jobs submitted and not yet delivered or cancelled (waiting, being solved, finished). */
size_t xg_calib_worker_pending(struct xg_calib_worker *w);

/** Free a job and its snapshot (for a job never submitted). NULL ok. */
void xg_calib_job_free(struct xg_calib_job *job);

#endif
