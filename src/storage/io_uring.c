/*
 * io_uring.c - the io_uring backend: one ring per engine with one SQE slot
 * per queue-depth entry, and one completion thread that is the ring's only
 * user: it alone fills SQEs, enters the kernel to submit them, and reaps
 * CQEs (re-issuing the rest of short reads, finishing pieces, which delivers
 * requests and refills the ring). Other threads that submit requests only
 * wake it, through an eventfd it polls on the ring.
 *
 * Why only that thread submits: the kernel ties each request to the task
 * that entered it. A buffered read that misses the page cache completes
 * later through task work run by that task; if the task has exited by then,
 * the kernel fails the read with EFAULT. Submitting threads (a query's scan
 * threads) come and go, and through the shared FIFO they would hand the
 * kernel other requests' pieces too; the completion thread lives as long as
 * the ring.
 *
 * Built only with liburing; the kernel may still refuse io_uring (ENOSYS,
 * EPERM under seccomp), which io_uring_queue_init reports and the engine's
 * "auto" choice handles.
 */
#include "storage/io_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#ifdef PISTA_HAVE_LIBURING
#include <liburing.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

typedef struct uring_state {
    struct io_uring ring;  /* SQ and CQ touched only by the completion thread */
    bool ring_ok, thread_ok;
    int wake_fd;           /* eventfd: "pieces wait to be dispatched", or "exit" */
    int need_wake;         /* atomic: a kick from another thread awaits its eventfd write */
    int exit;              /* atomic: the completion thread should leave */
    pthread_t reaper;
    io__slot *slots;
    int n_slots;
    io__slot *free;        /* free slots, linked by next_free (under e->mu) */
} uring_state;

/* user_data of the eventfd poll; slots are the other user_data values. */
static char wake_tag;

/* The ring whose completion thread the calling thread is (NULL: none). */
static _Thread_local const uring_state *tls_ring_owner;

static bool on_reaper(const uring_state *st) { return tls_ring_owner == st; }

/* Submit what is queued (completion thread only). Transient failures (EINTR,
 * EAGAIN, EBUSY: the kernel is short of resources until completions are
 * reaped) are retried a while; SQEs still left go with the next submit or
 * the periodic check. */
static void submit_pending(uring_state *st)
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

/* A free SQE (completion thread only). The SQ holds at most one unsubmitted
 * SQE per slot plus the eventfd poll, and has room for that many, so this
 * loops only if earlier submits failed. */
static struct io_uring_sqe *get_sqe(uring_state *st)
{
    struct io_uring_sqe *sqe;
    while (!(sqe = io_uring_get_sqe(&st->ring)))
        submit_pending(st);
    return sqe;
}

/* Queue the next read of s (or a no-op when s needs none: an empty piece
 * or one that already failed, so the completion thread finishes it). The
 * SQE goes to the kernel at the next submit_pending. */
static void queue_read(uring_state *st, io__slot *s)
{
    struct io_uring_sqe *sqe = get_sqe(st);
    if (io__slot_wants_read(s))
        io_uring_prep_read(sqe, s->fd, s->dst + s->rd_got, (unsigned)(s->rd_want - s->rd_got),
                           s->rd_off + s->rd_got);
    else
        io_uring_prep_nop(sqe);
    io_uring_sqe_set_data(sqe, s);
    __atomic_fetch_add(&s->armed, 1, __ATOMIC_RELEASE);
}

/* Watch the eventfd once more (single-shot poll: re-armed after each wake). */
static void arm_wake(uring_state *st)
{
    struct io_uring_sqe *sqe = get_sqe(st);
    io_uring_prep_poll_add(sqe, st->wake_fd, POLLIN);
    io_uring_sqe_set_data(sqe, &wake_tag);
}

static void wake(uring_state *st)
{
    uint64_t one = 1;
    ssize_t n;
    do
        n = write(st->wake_fd, &one, sizeof one);
    while (n < 0 && errno == EINTR);
    /* EAGAIN: the counter is saturated, so a wake-up is pending anyway. */
}

/* Pieces may be dispatchable. On the completion thread: move them into free
 * slots and queue their reads. Elsewhere: note that the completion thread
 * must be woken (uring_flush does it, after e->mu is released). */
static void uring_kick_locked(io_engine *e)
{
    uring_state *st = e->bstate;
    if (!on_reaper(st)) {
        __atomic_store_n(&st->need_wake, 1, __ATOMIC_RELEASE);
        return;
    }
    while (st->free && io__take_piece(e, st->free)) {
        io__slot *s = st->free;
        st->free = s->next_free;
        io__slot_prepare(e, s);
        queue_read(st, s);
    }
}

static void uring_flush(io_engine *e)
{
    uring_state *st = e->bstate;
    if (on_reaper(st))
        submit_pending(st);
    else if (__atomic_exchange_n(&st->need_wake, 0, __ATOMIC_ACQ_REL))
        wake(st);
}

static void uring_slot_done_locked(io_engine *e, io__slot *s)
{
    uring_state *st = e->bstate;
    s->next_free = st->free;
    st->free = s;
    uring_kick_locked(e);
}

/* The eventfd fired: clear it, watch it again, dispatch what waits. Returns
 * false when the thread should leave. */
static bool on_wake(io_engine *e, uring_state *st, int res)
{
    if (__atomic_load_n(&st->exit, __ATOMIC_ACQUIRE))
        return false;
    uint64_t v;
    while (read(st->wake_fd, &v, sizeof v) < 0 && errno == EINTR)
        ;
    if (res < 0)
        usleep(1000);   /* a failed poll (should not happen): do not spin */
    arm_wake(st);
    pthread_mutex_lock(&e->mu);
    uring_kick_locked(e);
    pthread_mutex_unlock(&e->mu);
    submit_pending(st);
    return true;
}

static void *reaper(void *arg)
{
    io_engine *e = arg;
    uring_state *st = e->bstate;
    tls_ring_owner = st;
    arm_wake(st);
    submit_pending(st);
    /* Without EXT_ARG a timed wait would queue a timeout SQE; wait without a
     * timeout then (the eventfd wakes us). */
    bool timed = (st->ring.features & IORING_FEAT_EXT_ARG) != 0;
    for (;;) {
        struct io_uring_cqe *cqe = NULL;
        struct __kernel_timespec ts = {.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};
        int rc = timed ? io_uring_wait_cqe_timeout(&st->ring, &cqe, &ts)
                       : io_uring_wait_cqe(&st->ring, &cqe);
        if (rc == -ETIME || rc == -EINTR || rc == -EAGAIN) {
            /* Idle, or interrupted: dispatch anything waiting (a safety
             * net; wake-ups cover it) and SQEs a failed submit left. */
            pthread_mutex_lock(&e->mu);
            uring_kick_locked(e);
            pthread_mutex_unlock(&e->mu);
            submit_pending(st);
            continue;
        }
        if (rc < 0) {
            usleep(1000);
            continue;
        }
        void *data = io_uring_cqe_get_data(cqe);
        int res = cqe->res;
        io_uring_cqe_seen(&st->ring, cqe);
        if (data == &wake_tag) {
            if (!on_wake(e, st, res))
                break;
            continue;
        }
        io__slot *s = data;
        (void)__atomic_load_n(&s->armed, __ATOMIC_ACQUIRE);
        if (io__slot_wants_read(s) && io__slot_advance(e, s, res)) {
            queue_read(st, s);
            submit_pending(st);
            continue;
        }
        io__slot_finish(e, s);
    }
    tls_ring_owner = NULL;
    return NULL;
}

/* Called by io_engine_destroy once no piece runs (or by a failed start). */
static void uring_stop(io_engine *e)
{
    uring_state *st = e->bstate;
    if (!st)
        return;
    if (st->thread_ok) {
        __atomic_store_n(&st->exit, 1, __ATOMIC_RELEASE);
        wake(st);
        pthread_join(st->reaper, NULL);
    }
    if (st->ring_ok)
        io_uring_queue_exit(&st->ring);
    if (st->wake_fd >= 0)
        close(st->wake_fd);
    for (int i = 0; i < st->n_slots; i++)
        io__slot_release(&st->slots[i]);
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
    st->wake_fd = -1;
    st->slots = slots;
    st->n_slots = depth;
    for (int i = depth - 1; i >= 0; i--) {
        slots[i].next_free = st->free;
        st->free = &slots[i];
    }
    e->bstate = st;
    int rc = io_uring_queue_init((unsigned)depth + 1, &st->ring, 0);   /* +1: the eventfd poll */
    if (rc < 0) {
        uring_stop(e);
        return pa_error(err, PA_EUNSUPPORTED, "io_uring_queue_init: %s", strerror(-rc));
    }
    st->ring_ok = true;
    struct io_uring_probe *probe = io_uring_get_probe_ring(&st->ring);
    bool has_ops = probe && io_uring_opcode_supported(probe, IORING_OP_READ) &&
                   io_uring_opcode_supported(probe, IORING_OP_POLL_ADD);
    if (probe)
        io_uring_free_probe(probe);
    if (!has_ops) {
        uring_stop(e);
        return pa_error(err, PA_EUNSUPPORTED, "the kernel's io_uring lacks IORING_OP_READ or IORING_OP_POLL_ADD");
    }
    if ((st->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        int en = errno;
        uring_stop(e);
        return pa_error(err, PA_EUNSUPPORTED, "eventfd for the io_uring thread: %s", strerror(en));
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
