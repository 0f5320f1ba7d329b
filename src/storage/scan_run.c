/*
 * scan_run.c - the scan thread: keeps up to read_ahead units' reads in
 * flight, has units decoded, and pushes their chunks in unit order onto the
 * bounded output queue (scan_int.h, design notes).
 *
 * With one decoder the scan thread decodes each unit itself, its pages
 * spread over the pool. With n_wctx > 1 (scan_open.c, make_decoders) whole
 * units decode at once, each on one pool thread: when a unit's reads
 * complete, the completion starts a free pool decoder on it (a task that
 * then takes further ready units until none is left); the chunks wait in
 * their units, and the scan thread, which only submits reads and hands
 * out chunks, pushes them in unit order. (The scan thread decoding too was
 * measured slower: while it decodes, no read is submitted and no chunk is
 * pushed.) The tasks never block (only the scan thread waits on the output
 * queue), so they cannot hold pool threads that other work of the query
 * needs.
 */
#include "storage/scan_int.h"

#include <string.h>
#include <time.h>

/* ------------------------------------------------------------- reads */

typedef struct read_ctx {
    pq_scan *s;
    scan_unit *u;
} read_ctx;

/* Runs on an I/O engine thread: count the read and wake the scan thread. */
static void feed_pool(pq_scan *s);

static void on_read(io_request *r)
{
    read_ctx *c = r->user;
    pq_scan *s = c->s;
    scan_unit *u = c->u;
    pthread_mutex_lock(&s->mu);
    if (r->status != PA_OK && u->status == PA_OK)
        u->status = r->status;
    if (r->status == PA_OK) {
        s->stats.bytes_read += r->length;
        s->stats.read_requests++;
    }
    if (--u->pending == 0) {
        u->t_done = pa_now_ns();
        feed_pool(s);
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
}

/* Plan unit u and submit its reads. *retry: the pinned pool is full; try
 * again once an earlier unit released its buffer. */
static int submit_unit(pq_scan *s, scan_unit *u, read_ctx *ctx, bool *retry, pa_err *err)
{
    int rc;
    *retry = false;
    if (!u->planned && (rc = scan__plan_unit(s, u, err)) != PA_OK)
        return rc;
    if (u->empty) {
        u->submitted = true;
        return PA_OK;
    }
    if ((rc = scan__alloc_unit_buffer(s, u, retry, err)) != PA_OK)
        return rc;
    const io_plan *pl = &u->plan;
    u->reqs = pa_calloc(pl->n_reads ? pl->n_reads : 1, sizeof *u->reqs);
    if (!u->reqs)
        return pa_error(err, PA_ENOMEM, "out of memory submitting reads");
    ctx->s = s;
    ctx->u = u;
    io_file *f = s->files[u->file].io;
    uint64_t at = 0;
    size_t n = 0;
    for (size_t i = 0; i < pl->n_reads; i++) {
        if (pl->reads[i].length == 0)
            continue;
        /* The kernel writes where the request says: check the destination
         * lies in the unit's buffer (an overrun would be invisible to ASan). */
        if (pl->reads[i].length > u->buf_len - at) {
            rc = pa_error(err, PA_EINTERNAL, "%s: row group %u: read %zu (%llu bytes) does not fit the "
                          "%zu-byte read buffer at position %llu", SCAN_WHERE(s, u), i,
                          (unsigned long long)pl->reads[i].length, u->buf_len, (unsigned long long)at);
            return rc;
        }
        io_request *r = &u->reqs[n++];
        io_request_init(r, f, pl->reads[i].offset, (size_t)pl->reads[i].length, u->buf + at);
        r->done = on_read;
        r->err = &u->err;
        r->tag = s;
        r->user = ctx;
        at += pl->reads[i].length;
    }
    u->n_reqs = n;
    pthread_mutex_lock(&s->mu);
    u->pending = n;
    u->t_submit = u->t_done = pa_now_ns();
    pthread_mutex_unlock(&s->mu);
    u->submitted = true;
    for (size_t i = 0; i < n; i++) {
        rc = io_submit(s->io, &u->reqs[i]);
        if (rc != PA_OK) {
            /* Not delivered: account for this one and every later one. */
            pthread_mutex_lock(&s->mu);
            u->pending -= n - i;
            if (u->status == PA_OK)
                u->status = rc;
            pthread_mutex_unlock(&s->mu);
            if (rc == PA_ECLOSED)
                pa_error(&u->err, rc, "the I/O engine was shut down");
            else
                pa_error(&u->err, rc, "cannot submit a read");
            break;
        }
    }
    return PA_OK;
}

/* Wait for unit u's reads. */
static int wait_unit(pq_scan *s, scan_unit *u, pa_err *err)
{
    uint64_t t0 = pa_now_ns();
    pthread_mutex_lock(&s->mu);
    while (u->pending > 0)
        pthread_cond_wait(&s->cv, &s->mu);
    int st = u->status;
    s->stats.ns_read_wait += pa_now_ns() - t0;
    s->stats.ns_read += u->t_done - u->t_submit;
    pthread_mutex_unlock(&s->mu);
    if (st != PA_OK)
        return pa_error(err, st == PA_ECORRUPT ? PA_ECORRUPT : st, "%s: row group %u: %s", SCAN_WHERE(s, u),
                        u->err.code ? u->err.msg : pa_status_message(st));
    return PA_OK;
}

/* Cancel what has not started and wait for every read in flight and every
 * decode task; then drop the chunks no one will take. */
static void drain(pq_scan *s)
{
    io_cancel_tag(s->io, s);
    pthread_mutex_lock(&s->mu);
    for (uint32_t i = 0; i < s->n_units; i++)
        while (s->units[i].pending > 0)
            pthread_cond_wait(&s->cv, &s->mu);
    while (s->decoding > 0)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    for (uint32_t i = 0; i < s->n_units; i++) {
        dv_chunk_destroy(s->units[i].chunk);
        s->units[i].chunk = NULL;
    }
}

/* ------------------------------------------------- memory regulation
 *
 * The scan's output must not fill the device: a row group starts decoding
 * only while the pool's use, plus the estimates of the row groups being
 * decoded and of this one, stays under s->mem_high. When it does not, the
 * row group waits until chunks the scan made are freed by whoever holds
 * them (the hook below wakes the scan) or other memory is freed (polled
 * every millisecond). It goes anyway when nothing the scan made is alive,
 * and the next row group in order goes when no chunk the scan handed out is
 * alive (the others wait behind it and cannot free): so the scan always
 * progresses, and fails for memory only where even one row group does not
 * fit. Fewer chunks are in flight as memory gets short; as many as the
 * queues allow while it is plentiful. */

static void on_chunk_free(void *arg)
{
    scan_live *l = arg;
    __atomic_sub_fetch(&l->chunks, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_lock(&l->mu);
    pq_scan *s = l->s;
    if (s) {
        pthread_mutex_lock(&s->mu);
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
    bool last = --l->refs == 0;
    pthread_mutex_unlock(&l->mu);
    if (last) {
        pthread_mutex_destroy(&l->mu);
        pa_free(l);
    }
}

int scan__live_create(pq_scan *s, pa_err *err)
{
    scan_live *l = pa_calloc(1, sizeof *l);
    if (!l)
        return pa_error(err, PA_ENOMEM, "out of memory opening a scan");
    pthread_mutex_init(&l->mu, NULL);
    l->s = s;
    l->refs = 1;
    s->live = l;
    pa_mempool_stats st;
    dv_memory_stats(s->dev, &st, NULL);
    s->mem_high = s->opt.memory_high ? s->opt.memory_high : st.limit / 4 * 3;
    return PA_OK;
}

void scan__live_detach(pq_scan *s)
{
    scan_live *l = s->live;
    if (!l)
        return;
    s->live = NULL;
    pthread_mutex_lock(&l->mu);
    l->s = NULL;
    bool last = --l->refs == 0;
    pthread_mutex_unlock(&l->mu);
    if (last) {
        pthread_mutex_destroy(&l->mu);
        pa_free(l);
    }
}

/* Count chunk c as alive until it is freed. */
static void track(pq_scan *s, dv_chunk *c)
{
    if (!c || !s->live)
        return;
    scan_live *l = s->live;
    pthread_mutex_lock(&l->mu);
    l->refs++;
    pthread_mutex_unlock(&l->mu);
    __atomic_add_fetch(&l->chunks, 1, __ATOMIC_ACQ_REL);
    dv_chunk_on_free(c, on_chunk_free, l);
}

/* Unit u's decoding by w ended: its estimate is no longer counted, and
 * w's stream-ordered frees are marked. With s->mu held. */
static void mem_done(pq_scan *s, scan_wctx *w, scan_unit *u)
{
    s->mem_decoding -= u->mem_est;
    if (w->done)
        w->done_set = dv_event_record(w->done, w->stream, NULL) == PA_OK;
}

/* Decoders whose last unit's device work (and the frees after it) has not
 * run yet: memory that is about to come back. With s->mu held. */
static int mem_pending(pq_scan *s)
{
    int n = 0;
    for (int k = 0; k < s->n_wctx; k++) {
        bool done = true;
        if (s->wctx[k].done_set && dv_event_query(s->wctx[k].done, &done, NULL) == PA_OK && !done)
            n++;
    }
    return n;
}

/* May unit i start decoding now? With s->mu held. */
static bool mem_admit(pq_scan *s, uint32_t i)
{
    if (!s->mem_high || !s->live)
        return true;
    pa_mempool_stats st;
    dv_memory_stats(s->dev, &st, NULL);
    if (st.current + s->mem_decoding + s->units[i].mem_est <= s->mem_high) {
        s->mem_unsteady = 0;
        return true;
    }
    int live = __atomic_load_n(&s->live->chunks, __ATOMIC_ACQUIRE);
    if (s->mem_decoding > 0 || mem_pending(s) > 0)
        return false;
    bool go = live == 0;
    if (!go && i == s->win_lo) {
        int waiting = 0;   /* decoded after the head, held for their turn */
        for (uint32_t k = s->win_lo; k < s->win_hi; k++)
            waiting += s->units[k].chunk != NULL;
        go = live - waiting <= 0;
    }
    /* Going beyond the mark: only once the pool's use held still for a
     * poll (frees that chunks' holders queued on their streams come back
     * first), or after 100 polls of change. */
    if (go && st.current != s->mem_seen && s->mem_unsteady < 100) {
        s->mem_seen = st.current;
        s->mem_unsteady++;
        return false;
    }
    if (go)
        s->mem_unsteady = 0;
    return go;
}

/* The first time unit i is held back: counted. With s->mu held. */
static void mem_note_wait(pq_scan *s, uint32_t i)
{
    s->mem_blocked = true;
    if (!s->units[i].mem_waited) {
        s->units[i].mem_waited = true;
        s->stats.mem_waits++;
    }
}

/* Wait a millisecond at most for the scan's cv (memory may be freed by
 * others, who do not signal it). With s->mu held. */
static void mem_poll(pq_scan *s)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&s->cv, &s->mu, &ts);
}

/* The serial path: wait until the head unit may decode (or the scan
 * stopped). */
static void mem_wait_head(pq_scan *s, uint32_t head)
{
    pthread_mutex_lock(&s->mu);
    s->win_lo = head;
    s->win_hi = head + 1;
    uint64_t t0 = pa_now_ns();
    bool waited = false;
    while (!scan_stopped(s) && !mem_admit(s, head)) {
        mem_note_wait(s, head);
        waited = true;
        mem_poll(s);
    }
    if (waited)
        s->stats.ns_mem_wait += pa_now_ns() - t0;
    s->mem_decoding += s->units[head].mem_est;
    pthread_mutex_unlock(&s->mu);
}

/* ------------------------------------------------- parallel decoding */

/* The lowest unit of the window whose reads are done and that no decoder
 * has, or -1; empty units on the way are marked done. With s->mu held. */
static int64_t claim_ready(pq_scan *s)
{
    for (uint32_t i = s->win_lo; i < s->win_hi; i++) {
        scan_unit *v = &s->units[i];
        if (v->dstate != SCAN_D_WAITING)
            continue;
        if (v->empty) {
            v->dstate = SCAN_D_DONE;
            continue;
        }
        if (v->pending == 0 && v->status == PA_OK) {   /* a failed read is reported in its turn */
            if (!mem_admit(s, i)) {   /* later units wait behind it */
                mem_note_wait(s, i);
                return -1;
            }
            v->dstate = SCAN_D_RUNNING;
            s->mem_decoding += v->mem_est;
            return i;
        }
    }
    return -1;
}

/* Decode unit i on this thread with decoder w and leave the chunk (or the
 * failure) in the unit. Called without the lock. */
static void decode_into_unit(pq_scan *s, scan_wctx *w, uint32_t i)
{
    scan_unit *u = &s->units[i];
    dv_chunk *chunk = NULL;
    pa_err e;
    pa_err_init(&e);
    int rc = scan_stopped(s) ? PA_OK : scan__decode_unit(s, w, u, &chunk, &e);
    scan__unit_release(s, u);
    track(s, chunk);
    pthread_mutex_lock(&s->mu);
    mem_done(s, w, u);
    s->stats.ns_read += u->t_done - u->t_submit;
    u->drc = rc;
    if (rc != PA_OK)
        pa_err_propagate(&u->err, &e);
    u->chunk = chunk;
    u->dstate = SCAN_D_DONE;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pa_err_close(&e);
}

/* A pool decoder's task: decode its unit, then any other ready one, until
 * none is left. */
static void decode_task(void *arg)
{
    scan_wctx *w = arg;
    pq_scan *s = w->s;
    for (;;) {
        decode_into_unit(s, w, w->unit);
        pthread_mutex_lock(&s->mu);
        int64_t i = scan_stopped(s) ? -1 : claim_ready(s);
        if (i < 0)
            break;
        w->unit = (uint32_t)i;
        pthread_mutex_unlock(&s->mu);
    }
    w->busy = false;
    s->decoding--;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);   /* the last touch of the scan */
}

/* Start a free pool decoder on unit i (its reads done, claimed by the
 * caller). With s->mu held; false when every decoder is busy. */
static bool start_decoder(pq_scan *s, uint32_t i)
{
    int k = 0;
    while (k < s->n_wctx && s->wctx[k].busy)
        k++;
    if (k == s->n_wctx)
        return false;
    scan_wctx *w = &s->wctx[k];
    w->busy = true;
    w->s = s;
    w->unit = i;
    s->decoding++;
    if (pa_threadpool_submit(s->tp, decode_task, w) != PA_OK) {   /* no memory to queue it */
        w->busy = false;
        s->decoding--;
        return false;
    }
    return true;
}

/* Start free pool decoders on ready units (with s->mu held): called when
 * a unit's reads complete, so decoding never waits for the scan thread,
 * and by the scan thread. */
static void feed_pool(pq_scan *s)
{
    if (s->n_wctx < 2 || s->hold)
        return;
    while (s->decoding < s->n_wctx) {
        int64_t i = claim_ready(s);
        if (i < 0)
            return;
        if (!start_decoder(s, (uint32_t)i)) {
            s->units[i].dstate = SCAN_D_WAITING;
            s->mem_decoding -= s->units[i].mem_est;
            return;
        }
    }
}

/* Wait until unit `head` is decoded, starting pool decoders on ready
 * units meanwhile; its chunk (NULL when no row survived, or the scan was
 * stopped) in *chunk. */
static int await_head(pq_scan *s, uint32_t head, uint32_t next, dv_chunk **chunk, pa_err *err)
{
    scan_unit *h = &s->units[head];
    *chunk = NULL;
    pthread_mutex_lock(&s->mu);
    s->win_lo = head;
    s->win_hi = next;
    uint64_t t_mem = 0;
    for (;;) {
        s->mem_blocked = false;
        if (!scan_stopped(s) && !s->hold) {
            feed_pool(s);
            int64_t i = s->decoding == 0 ? claim_ready(s) : -1;
            if (i >= 0) {   /* the pool took no task (out of memory): decode it here */
                s->wctx[0].busy = true;
                s->decoding++;
                pthread_mutex_unlock(&s->mu);
                decode_into_unit(s, &s->wctx[0], (uint32_t)i);
                pthread_mutex_lock(&s->mu);
                s->wctx[0].busy = false;
                s->decoding--;
                continue;
            }
        }
        if (h->dstate == SCAN_D_DONE || scan_stopped(s))
            break;
        if (h->dstate == SCAN_D_WAITING && h->pending == 0 && h->status != PA_OK) {
            int st = h->status;
            pthread_mutex_unlock(&s->mu);
            return pa_error(err, st == PA_ECORRUPT ? PA_ECORRUPT : st, "%s: row group %u: %s", SCAN_WHERE(s, h),
                            h->err.code ? h->err.msg : pa_status_message(st));
        }
        uint64_t t0 = pa_now_ns();
        bool reading = h->pending > 0;
        if (s->mem_blocked) {   /* memory another holder frees does not signal */
            if (h->dstate == SCAN_D_WAITING && !reading && !t_mem)
                t_mem = t0;
            mem_poll(s);
        } else {
            pthread_cond_wait(&s->cv, &s->mu);   /* a read, a decode or a chunk finished */
        }
        if (reading)
            s->stats.ns_read_wait += pa_now_ns() - t0;
    }
    if (t_mem)
        s->stats.ns_mem_wait += pa_now_ns() - t_mem;
    int rc = h->dstate == SCAN_D_DONE ? h->drc : PA_OK;
    if (h->dstate == SCAN_D_DONE) {
        *chunk = h->chunk;
        h->chunk = NULL;
    }
    s->win_lo = head + 1;
    pthread_mutex_unlock(&s->mu);
    if (rc != PA_OK)
        return pa_err_propagate(err, &h->err);
    return PA_OK;
}

static void fail(pq_scan *s, pa_err *e)
{
    pthread_mutex_lock(&s->mu);
    pa_err_propagate(&s->err, e);
    pthread_mutex_unlock(&s->mu);
}

/* Submit units from *next on while fewer than `window` units from head on
 * are in flight. When the pinned pool is full, stop early: the units before
 * free their buffers as they are decoded (an error only when no unit is in
 * flight to wait for). */
static int submit_ahead(pq_scan *s, read_ctx *ctx, uint32_t head, uint32_t *next, uint32_t window, pa_err *err)
{
    while (*next < s->n_units && *next - head < window && !scan_stopped(s)) {
        bool retry;
        pa_err e2;
        pa_err_init(&e2);
        int rc = submit_unit(s, &s->units[*next], &ctx[*next], &retry, &e2);
        if (rc != PA_OK && retry && *next > head) {
            pa_err_close(&e2);
            return PA_OK;
        }
        pa_err_propagate(err, &e2);
        pa_err_close(&e2);
        if (rc != PA_OK)
            return rc;
        (*next)++;
    }
    return PA_OK;
}

void *scan__thread_main(void *arg)
{
    pq_scan *s = arg;
    pa_err err;
    pa_err_init(&err);
    uint32_t head = 0, next = 0;
    int rc = PA_OK;
    read_ctx *ctx = pa_calloc(s->n_units ? s->n_units : 1, sizeof *ctx);
    if (!ctx) {
        rc = pa_error(&err, PA_ENOMEM, "out of memory starting the scan");
        goto out;
    }
    if (s->opt.read_first) {   /* the blocking baseline: every read, then decoding */
        pthread_mutex_lock(&s->mu);
        s->hold = true;   /* completed reads start no decoder */
        pthread_mutex_unlock(&s->mu);
        rc = submit_ahead(s, ctx, head, &next, s->n_units, &err);
        uint64_t t0 = pa_now_ns();
        pthread_mutex_lock(&s->mu);
        for (uint32_t i = 0; i < next; i++)
            while (s->units[i].pending > 0)
                pthread_cond_wait(&s->cv, &s->mu);
        s->stats.ns_read_wait += pa_now_ns() - t0;
        s->hold = false;
        pthread_mutex_unlock(&s->mu);
        if (rc != PA_OK)
            goto out;
    }
    while (head < s->n_units && !scan_stopped(s)) {
        if ((rc = submit_ahead(s, ctx, head, &next, (uint32_t)s->opt.read_ahead, &err)) != PA_OK)
            goto out;
        if (scan_stopped(s))
            break;
        scan_unit *u = &s->units[head];
        dv_chunk *chunk = NULL;
        if (s->n_wctx > 1) {
            if ((rc = await_head(s, head, next, &chunk, &err)) != PA_OK)
                goto out;
        } else {
            if (!u->empty) {
                if ((rc = wait_unit(s, u, &err)) != PA_OK)
                    goto out;
                mem_wait_head(s, head);
                rc = scan_stopped(s) ? PA_OK : scan__decode_unit(s, &s->wctx[0], u, &chunk, &err);
                track(s, chunk);
                pthread_mutex_lock(&s->mu);
                mem_done(s, &s->wctx[0], u);
                pthread_mutex_unlock(&s->mu);
            }
            scan__unit_release(s, u);
            if (rc != PA_OK)
                goto out;
        }
        head++;
        if (chunk && scan_stopped(s)) {
            dv_chunk_destroy(chunk);
            break;
        }
        if (chunk) {
            int64_t rows = chunk->length;
            if (pa_queue_push(s->outq, chunk, PA_WAIT_FOREVER) != PA_OK) {
                dv_chunk_destroy(chunk);   /* closed: the consumer left */
                break;
            }
            pthread_mutex_lock(&s->mu);
            s->stats.rows_out += (uint64_t)rows;
            s->stats.chunks_out++;
            pthread_mutex_unlock(&s->mu);
        }
    }
out:
    if (rc != PA_OK)
        fail(s, &err);
    drain(s);
    pa_queue_close(s->outq);
    pa_free(ctx);
    pa_err_close(&err);
    return NULL;
}
