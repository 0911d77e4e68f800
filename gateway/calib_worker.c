/* The calibration solver's worker thread (gateway/calib_worker.h). */
#include "gateway/calib_worker.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock/clock.h"

struct xg_calib_worker {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool started; /* the thread runs */
    /* under mu */
    struct xg_calib_job *wait_head, *wait_tail; /* submitted, not started (FIFO) */
    struct xg_calib_job *done;                  /* finished, newest first */
    bool stop, hold, signalled;
    /* loop thread only */
    uint64_t next_id;
    size_t outstanding; /* submitted, not yet delivered or cancelled */
    int pipe_r, pipe_w;
    struct event *ev;
    xg_calib_deliver_fn deliver;
    void *user;
};

void xg_calib_job_free(struct xg_calib_job *job)
{
    if (!job) return;
    free(job->ref);
    free(job->tgt);
    free(job->path);
    free(job->data);
    free(job);
}

static void free_list(struct xg_calib_job *j)
{
    while (j) {
        struct xg_calib_job *next = j->next;
        xg_calib_job_free(j);
        j = next;
    }
}

int xg_calib_write_file(const char *path, const char *data, size_t len)
{
    size_t n = strlen(path) + 5;
    char *tmp = malloc(n);
    if (!tmp) return -ENOMEM;
    snprintf(tmp, n, "%s.tmp", path);
    int rc = 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        rc = -errno;
        free(tmp);
        return rc;
    }
    for (size_t off = 0; off < len && !rc;) {
        ssize_t k = write(fd, data + off, len - off);
        if (k > 0)
            off += (size_t)k;
        else if (k < 0 && errno != EINTR)
            rc = -errno;
        else if (k == 0)
            rc = -EIO;
    }
    if (!rc && fsync(fd)) rc = -errno;
    if (close(fd) && !rc) rc = -errno;
    if (!rc && rename(tmp, path)) rc = -errno;
    if (rc) unlink(tmp);
    free(tmp);
    return rc;
}

static void run(struct xg_calib_job *j)
{
    int64_t t0 = xg_clock_mono_ns();
    if (j->kind == XG_CALIB_JOB_WRITE)
        j->rc = xg_calib_write_file(j->path, j->data, j->len);
    else
        j->rc = xg_calib_solve(j->ref, j->n_ref, j->tgt, j->n_tgt, &j->opts, &j->res);
    j->solve_ms = (double)(xg_clock_mono_ns() - t0) * 1e-6;
}

static void *worker_main(void *arg)
{
    struct xg_calib_worker *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) { /* after stop: only writes are left waiting (xg_calib_worker_free), run them */
        while (!w->stop && (w->hold || !w->wait_head))
            pthread_cond_wait(&w->cv, &w->mu);
        if (!w->wait_head) break;
        struct xg_calib_job *j = w->wait_head;
        w->wait_head = j->next;
        if (!w->wait_head) w->wait_tail = NULL;
        j->next = NULL;
        pthread_mutex_unlock(&w->mu);

        run(j);

        pthread_mutex_lock(&w->mu);
        j->next = w->done;
        w->done = j;
        bool wake = !w->signalled;
        w->signalled = true;
        pthread_mutex_unlock(&w->mu);
        if (wake) { /* one byte per batch; a full pipe already wakes the loop */
            char b = 1;
            ssize_t n = write(w->pipe_w, &b, 1);
            (void)n;
        }
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* newest first -> oldest first */
static struct xg_calib_job *reverse(struct xg_calib_job *done)
{
    struct xg_calib_job *fifo = NULL;
    while (done) {
        struct xg_calib_job *next = done->next;
        done->next = fifo;
        fifo = done;
        done = next;
    }
    return fifo;
}

/* the loop's read event: deliver every finished job, oldest first */
static void wake_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct xg_calib_worker *w = arg;
    char buf[64];
    while (read(fd, buf, sizeof buf) > 0) {}
    pthread_mutex_lock(&w->mu);
    struct xg_calib_job *done = w->done;
    w->done = NULL;
    w->signalled = false;
    pthread_mutex_unlock(&w->mu);
    struct xg_calib_job *fifo = reverse(done);
    while (fifo) {
        struct xg_calib_job *next = fifo->next;
        w->outstanding--;
        w->deliver(w->user, fifo);
        xg_calib_job_free(fifo);
        fifo = next;
    }
}

struct xg_calib_worker *xg_calib_worker_new(struct event_base *base, xg_calib_deliver_fn deliver,
                                            void *user)
{
    struct xg_calib_worker *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    int fds[2];
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC)) {
        free(w);
        return NULL;
    }
    w->pipe_r = fds[0];
    w->pipe_w = fds[1];
    w->deliver = deliver;
    w->user = user;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (!(w->ev = event_new(base, w->pipe_r, EV_READ | EV_PERSIST, wake_cb, w)) ||
        event_add(w->ev, NULL)) {
        xg_calib_worker_free(w);
        errno = ENOMEM;
        return NULL;
    }
    return w;
}

uint64_t xg_calib_worker_write(struct xg_calib_worker *w, const char *path, char *data, size_t len)
{
    struct xg_calib_job *j = calloc(1, sizeof *j);
    if (!j || !(j->path = strdup(path))) {
        free(j);
        free(data);
        return 0;
    }
    j->kind = XG_CALIB_JOB_WRITE;
    j->data = data;
    j->len = len;
    return xg_calib_worker_submit(w, j);
}

uint64_t xg_calib_worker_submit(struct xg_calib_worker *w, struct xg_calib_job *job)
{
    if (!w->started) { /* signals (SIGHUP, SIGTERM...) stay with the loop's thread */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int rc = pthread_create(&w->thread, NULL, worker_main, w);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc) {
            xg_calib_job_free(job);
            return 0;
        }
        w->started = true;
    }
    job->id = ++w->next_id;
    job->next = NULL;
    pthread_mutex_lock(&w->mu);
    if (w->wait_tail)
        w->wait_tail->next = job;
    else
        w->wait_head = job;
    w->wait_tail = job;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    w->outstanding++;
    return job->id;
}

bool xg_calib_worker_cancel(struct xg_calib_worker *w, uint64_t id)
{
    if (!w || !id) return false;
    struct xg_calib_job *found = NULL;
    pthread_mutex_lock(&w->mu);
    for (struct xg_calib_job **p = &w->wait_head, *prev = NULL; *p; prev = *p, p = &(*p)->next)
        if ((*p)->id == id) {
            found = *p;
            *p = found->next;
            if (w->wait_tail == found) w->wait_tail = prev;
            break;
        }
    pthread_mutex_unlock(&w->mu);
    if (!found) return false;
    xg_calib_job_free(found);
    w->outstanding--;
    return true;
}

void xg_calib_worker_hold(struct xg_calib_worker *w, bool hold)
{
    pthread_mutex_lock(&w->mu);
    w->hold = hold;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void xg_calib_worker_retarget(struct xg_calib_worker *w, void *user)
{
    w->user = user;
}

size_t xg_calib_worker_pending(struct xg_calib_worker *w)
{
    return w ? w->outstanding : 0;
}

void xg_calib_worker_free(struct xg_calib_worker *w)
{
    if (!w) return;
    struct xg_calib_job *dropped = NULL;
    if (w->started) {
        pthread_mutex_lock(&w->mu);
        struct xg_calib_job *keep = NULL, **tail = &keep; /* waiting writes stay, in order */
        for (struct xg_calib_job *j = w->wait_head, *next; j; j = next) {
            next = j->next;
            if (j->kind == XG_CALIB_JOB_WRITE) {
                *tail = j;
                tail = &j->next;
            } else {
                j->next = dropped;
                dropped = j;
            }
        }
        *tail = NULL;
        w->wait_head = keep;
        w->wait_tail = NULL; /* nothing is submitted any more */
        w->stop = true;
        w->hold = false;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->thread, NULL);
    }
    free_list(dropped);
    free_list(w->wait_head);
    for (struct xg_calib_job *j = reverse(w->done), *next; j; j = next) {
        next = j->next; /* a write's outcome is still logged; a solve's result is dropped */
        if (j->kind == XG_CALIB_JOB_WRITE) w->deliver(w->user, j);
        xg_calib_job_free(j);
    }
    if (w->ev) event_free(w->ev);
    close(w->pipe_r);
    close(w->pipe_w);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
