/*
 * io_uring.c - the io_uring backend: one ring per engine with one SQE slot
 * per queue-depth entry. Submitters fill SQEs under the ring's sq lock (one
 * SQ producer at a time) and submit them after dropping the engine lock; one
 * completion thread is the only CQ consumer: it re-issues the rest of short
 * reads and finishes pieces, which delivers requests and refills the ring. Built only with liburing; the
 * kernel may still refuse io_uring (ENOSYS, EPERM under seccomp), which
 * io_uring_queue_init reports and the engine's "auto" choice handles.
 */
#include "storage/io_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#ifdef PISTA_HAVE_LIBURING
#include <liburing.h>
#include <unistd.h>

typedef struct uring_state {
    struct io_uring ring;
    bool ring_ok, thread_ok;
    pthread_mutex_t sq_mu;   /* the SQ ring: get_sqe, prep and submit */
    bool exit;               /* under sq_mu: the completion thread should leave */
    pthread_t reaper;
    io__slot *slots;
    int n_slots;
    io__slot *free;          /* free slots, linked by next_free */
} uring_state;

/* Submit what is queued (sq_mu held). Transient failures (EINTR, EAGAIN, EBUSY: the
 * kernel is short of resources until completions are reaped) are retried a
 * while; SQEs still left are flushed by the next submit or by the
 * completion thread's periodic check. */
static void submit_locked(uring_state *st)
{
    for (int tries = 0; io_uring_sq_ready(&st->ring) > 0; tries++) {
        int rc = io_uring_submit(&st->ring);
        if (rc >= 0 || tries >= 1000)
            return;
        if (rc != -EINTR && rc != -EAGAIN && rc != -EBUSY)
            return;
        if (rc != -EINTR)
            usleep(50);
    }
}

/* Queue the next read of s (or a no-op when s needs none: an empty piece
 * or one that already failed, so the completion thread finishes it). sq_mu
 * held; the SQE goes to the kernel at the next submit. */
static void queue_sq_locked(uring_state *st, io__slot *s)
{
    struct io_uring_sqe *sqe;
    /* Each slot has at most one SQE and the ring has >= n_slots entries, so
     * this loops only if earlier submits failed. */
    while (!(sqe = io_uring_get_sqe(&st->ring)))
        submit_locked(st);
    if (io__slot_wants_read(s))
        io_uring_prep_read(sqe, s->fd, s->dst + s->rd_got, (unsigned)(s->rd_want - s->rd_got),
                           s->rd_off + s->rd_got);
    else
        io_uring_prep_nop(sqe);
    io_uring_sqe_set_data(sqe, s);
    __atomic_fetch_add(&s->armed, 1, __ATOMIC_RELEASE);
}

static void uring_kick_locked(io_engine *e)
{
    uring_state *st = e->bstate;
    int n = 0;
    while (st->free && io__take_piece(e, st->free)) {
        io__slot *s = st->free;
        st->free = s->next_free;
        io__slot_prepare(e, s);
        if (n++ == 0)
            pthread_mutex_lock(&st->sq_mu);
        queue_sq_locked(st, s);
    }
    if (n)
        pthread_mutex_unlock(&st->sq_mu);   /* uring_flush submits */
}

static void uring_flush(io_engine *e)
{
    uring_state *st = e->bstate;
    pthread_mutex_lock(&st->sq_mu);
    submit_locked(st);
    pthread_mutex_unlock(&st->sq_mu);
}

static void uring_slot_done_locked(io_engine *e, io__slot *s)
{
    uring_state *st = e->bstate;
    s->next_free = st->free;
    st->free = s;
    uring_kick_locked(e);
}

static void *reaper(void *arg)
{
    io_engine *e = arg;
    uring_state *st = e->bstate;
    /* Without EXT_ARG a timed wait would queue a timeout SQE from this
     * thread, racing the submitters: wait without a timeout then. */
    bool timed = (st->ring.features & IORING_FEAT_EXT_ARG) != 0;
    for (;;) {
        struct io_uring_cqe *cqe = NULL;
        struct __kernel_timespec ts = {.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};
        int rc = timed ? io_uring_wait_cqe_timeout(&st->ring, &cqe, &ts)
                       : io_uring_wait_cqe(&st->ring, &cqe);
        if (rc == -ETIME || rc == -EINTR || rc == -EAGAIN) {
            uring_flush(e);   /* SQEs a failed submit left behind */
            continue;
        }
        if (rc < 0) {
            usleep(1000);
            continue;
        }
        io__slot *s = io_uring_cqe_get_data(cqe);
        int res = cqe->res;
        io_uring_cqe_seen(&st->ring, cqe);
        if (!s) {   /* the wake-up no-op from uring_stop */
            pthread_mutex_lock(&st->sq_mu);
            bool leave = st->exit;
            pthread_mutex_unlock(&st->sq_mu);
            if (leave)
                break;
            continue;
        }
        (void)__atomic_load_n(&s->armed, __ATOMIC_ACQUIRE);
        if (io__slot_wants_read(s) && io__slot_advance(e, s, res)) {
            pthread_mutex_lock(&st->sq_mu);
            queue_sq_locked(st, s);
            submit_locked(st);
            pthread_mutex_unlock(&st->sq_mu);
            continue;
        }
        io__slot_finish(e, s);
    }
    return NULL;
}

static void uring_stop(io_engine *e)
{
    uring_state *st = e->bstate;
    if (!st)
        return;
    if (st->thread_ok) {
        pthread_mutex_lock(&st->sq_mu);
        st->exit = true;
        struct io_uring_sqe *sqe;
        while (!(sqe = io_uring_get_sqe(&st->ring)))
            submit_locked(st);
        io_uring_prep_nop(sqe);
        io_uring_sqe_set_data(sqe, NULL);
        submit_locked(st);
        pthread_mutex_unlock(&st->sq_mu);
        pthread_join(st->reaper, NULL);
    }
    if (st->ring_ok)
        io_uring_queue_exit(&st->ring);
    for (int i = 0; i < st->n_slots; i++)
        io__slot_release(&st->slots[i]);
    pthread_mutex_destroy(&st->sq_mu);
    pa_free(st->slots);
    pa_free(st);
    e->bstate = NULL;
}

static int uring_start(io_engine *e, pa_err *err)
{
    if (io__test_uring_errno)
        return pa_error(err, PA_EUNSUPPORTED, "io_uring_queue_init: %s (simulated by a test)",
                        strerror(io__test_uring_errno));
    int depth = e->opt.queue_depth;
    uring_state *st = pa_calloc(1, sizeof *st);
    io__slot *slots = pa_calloc((size_t)depth, sizeof *slots);
    if (!st || !slots) {
        pa_free(st);
        pa_free(slots);
        return pa_error(err, PA_ENOMEM, "out of memory for an io_uring of depth %d", depth);
    }
    pthread_mutex_init(&st->sq_mu, NULL);
    st->slots = slots;
    st->n_slots = depth;
    for (int i = depth - 1; i >= 0; i--) {
        slots[i].next_free = st->free;
        st->free = &slots[i];
    }
    e->bstate = st;
    int rc = io_uring_queue_init((unsigned)depth + 1, &st->ring, 0);   /* +1: the stop no-op */
    if (rc < 0) {
        uring_stop(e);
        return pa_error(err, PA_EUNSUPPORTED, "io_uring_queue_init: %s", strerror(-rc));
    }
    st->ring_ok = true;
    struct io_uring_probe *probe = io_uring_get_probe_ring(&st->ring);
    bool has_read = probe && io_uring_opcode_supported(probe, IORING_OP_READ);
    if (probe)
        io_uring_free_probe(probe);
    if (!has_read) {
        uring_stop(e);
        return pa_error(err, PA_EUNSUPPORTED, "the kernel's io_uring lacks IORING_OP_READ");
    }
    if ((rc = pthread_create(&st->reaper, NULL, reaper, e)) != 0) {
        uring_stop(e);
        return pa_error(err, PA_EINTERNAL, "could not start the io_uring thread: %s", strerror(rc));
    }
    st->thread_ok = true;
    return PA_OK;
}

#else /* !PISTA_HAVE_LIBURING */

static int uring_start(io_engine *e, pa_err *err)
{
    if (io__test_uring_errno)
        return pa_error(err, PA_EUNSUPPORTED, "io_uring_queue_init: %s (simulated by a test)",
                        strerror(io__test_uring_errno));
    return pa_error(err, PA_EUNSUPPORTED, "built without liburing");
}
static void uring_stop(io_engine *e) {}
static void uring_kick_locked(io_engine *e) {}
static void uring_slot_done_locked(io_engine *e, io__slot *s) {}
static void uring_flush(io_engine *e) {}

#endif

const io__backend io__uring_backend = {
    .name = "uring",
    .start = uring_start,
    .stop = uring_stop,
    .kick_locked = uring_kick_locked,
    .slot_done_locked = uring_slot_done_locked,
    .flush = uring_flush,
};
