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
            v->dstate = SCAN_D_RUNNING;
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
    pthread_mutex_lock(&s->mu);
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
    for (;;) {
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
        pthread_cond_wait(&s->cv, &s->mu);   /* a read or a decode finished */
        if (reading)
            s->stats.ns_read_wait += pa_now_ns() - t0;
    }
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
                rc = scan__decode_unit(s, &s->wctx[0], u, &chunk, &err);
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
