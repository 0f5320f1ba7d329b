/*
 * scan_run.c - the scan thread: keeps up to read_ahead units' reads in
 * flight, decodes units in order, and pushes their chunks onto the bounded
 * output queue (scan_int.h, design notes). Also the small parallel loop the
 * decoding batches run on.
 */
#include "storage/scan_int.h"

#include <string.h>

/* ------------------------------------------------------------- reads */

typedef struct read_ctx {
    pq_scan *s;
    scan_unit *u;
} read_ctx;

/* Runs on an I/O engine thread: count the read and wake the scan thread. */
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

/* Cancel what has not started and wait for every read in flight. */
static void drain(pq_scan *s)
{
    io_cancel_tag(s->io, s);
    pthread_mutex_lock(&s->mu);
    for (uint32_t i = 0; i < s->n_units; i++)
        while (s->units[i].pending > 0)
            pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

static void fail(pq_scan *s, pa_err *e)
{
    pthread_mutex_lock(&s->mu);
    pa_err_propagate(&s->err, e);
    pthread_mutex_unlock(&s->mu);
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
    while (head < s->n_units && !scan_stopped(s)) {
        while (next < s->n_units && next - head < (uint32_t)s->opt.read_ahead && !scan_stopped(s)) {
            bool retry;
            pa_err e2;
            pa_err_init(&e2);
            rc = submit_unit(s, &s->units[next], &ctx[next], &retry, &e2);
            if (rc != PA_OK && retry && next > head) {
                pa_err_close(&e2);   /* wait for the head unit to free its buffer */
                rc = PA_OK;
                break;
            }
            pa_err_propagate(&err, &e2);
            pa_err_close(&e2);
            if (rc != PA_OK)
                goto out;
            next++;
        }
        if (scan_stopped(s))
            break;
        scan_unit *u = &s->units[head];
        dv_chunk *chunk = NULL;
        if (!u->empty) {
            if ((rc = wait_unit(s, u, &err)) != PA_OK)
                goto out;
            rc = scan__decode_unit(s, u, &chunk, &err);
        }
        scan__unit_release(s, u);
        if (rc != PA_OK)
            goto out;
        head++;
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
