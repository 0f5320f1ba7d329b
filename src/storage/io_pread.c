/*
 * io_pread.c - the portable backend: a fixed set of threads, each taking the
 * next piece from the engine's FIFO and reading it with pread (retrying short
 * reads). Pieces in flight are bounded by min(threads, queue depth). A thread
 * blocked delivering into a full completion queue holds its piece slot, which
 * is how back-pressure stops the reads.
 */
#include "storage/io_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct pread_state {
    pthread_t *threads;
    int n_threads;
} pread_state;

static void run_piece(io_engine *e, io__slot *s)
{
    while (io__slot_wants_read(s)) {
        ssize_t n = pread(s->fd, s->dst + s->rd_got, s->rd_want - s->rd_got,
                          (off_t)(s->rd_off + s->rd_got));
        if (!io__slot_advance(e, s, n < 0 ? -(ssize_t)errno : n))
            break;
    }
}

static void *worker(void *arg)
{
    io_engine *e = arg;
    io__slot slot;
    memset(&slot, 0, sizeof slot);
    pthread_mutex_lock(&e->mu);
    for (;;) {
        if (io__take_piece(e, &slot)) {
            pthread_mutex_unlock(&e->mu);
            io__slot_prepare(e, &slot);
            run_piece(e, &slot);
            io__slot_finish(e, &slot);
            pthread_mutex_lock(&e->mu);
            continue;
        }
        if (e->stopping && !e->head)
            break;
        pthread_cond_wait(&e->work, &e->mu);
    }
    pthread_mutex_unlock(&e->mu);
    io__slot_release(&slot);
    return NULL;
}

static void pread_stop(io_engine *e)
{
    pread_state *st = e->bstate;
    if (!st)
        return;
    pthread_mutex_lock(&e->mu);
    e->stopping = true;
    pthread_cond_broadcast(&e->work);
    pthread_mutex_unlock(&e->mu);
    for (int i = 0; i < st->n_threads; i++)
        pthread_join(st->threads[i], NULL);
    pa_free(st->threads);
    pa_free(st);
    e->bstate = NULL;
}

static int pread_start(io_engine *e, pa_err *err)
{
    pread_state *st = pa_calloc(1, sizeof *st);
    pthread_t *th = pa_calloc((size_t)e->opt.threads, sizeof *th);
    if (!st || !th) {
        pa_free(st);
        pa_free(th);
        return pa_error(err, PA_ENOMEM, "out of memory starting %d I/O threads", e->opt.threads);
    }
    st->threads = th;
    e->bstate = st;
    for (int i = 0; i < e->opt.threads; i++) {
        int rc = pthread_create(&th[i], NULL, worker, e);
        if (rc != 0) {
            pread_stop(e);
            return pa_error(err, PA_EINTERNAL, "could not start I/O thread %d of %d: %s", i + 1,
                            e->opt.threads, strerror(rc));
        }
        st->n_threads = i + 1;
    }
    return PA_OK;
}

/* New pieces or a free slot: wake the threads (several, for a big request). */
static void pread_kick_locked(io_engine *e) { pthread_cond_broadcast(&e->work); }

static void pread_slot_done_locked(io_engine *e, io__slot *s)
{
    /* The finishing thread loops back for the next piece itself; one more
     * may be waiting for the slot when depth < threads. */
    if (e->head)
        pthread_cond_signal(&e->work);
}

const io__backend io__pread_backend = {
    .name = "pread",
    .start = pread_start,
    .stop = pread_stop,
    .kick_locked = pread_kick_locked,
    .slot_done_locked = pread_slot_done_locked,
    .flush = NULL,
};
