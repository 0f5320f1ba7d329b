/*
 * io_req.c - the request path shared by both backends: submit into the FIFO,
 * cut requests into pieces, run the bookkeeping of one piece's reads (short
 * reads, end of file, O_DIRECT bounce buffers), deliver finished requests,
 * cancel, and the blocking batch helpers. See io_int.h for the invariants.
 */
#include "storage/io_int.h"

#include <errno.h>
#include <string.h>

#define A ((uint64_t)IO_DIRECT_ALIGN)

/* A blocking batch (io_read_all): counts requests not yet delivered. */
typedef struct io__batch {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t left;
} io__batch;

static void batch_done(io__batch *b, size_t k)
{
    pthread_mutex_lock(&b->mu);
    b->left -= k;
    if (b->left == 0)
        pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

void io_request_init(io_request *r, io_file *f, uint64_t offset, size_t length, void *buf)
{
    memset(r, 0, sizeof *r);
    r->file = f;
    r->offset = offset;
    r->length = length;
    r->buf = buf;
}

/* The last touch of a request: done, then queue, then batch. After the push
 * (or after done, when neither queue nor batch is set) r may be freed. */
static void deliver(io_request *r)
{
    io_done_fn done = r->done;
    pa_queue *q = r->queue;
    io__batch *b = r->priv_.batch;
    if (done)
        done(r);
    if (q)
        (void)pa_queue_push(q, r, PA_WAIT_FOREVER);   /* PA_ECLOSED: the consumer left */
    if (b)
        batch_done(b, 1);
}

/* Stats and process counters for a request about to be delivered. e->mu held. */
static void account_locked(io_engine *e, io_request *r)
{
    e->stats.requests++;
    e->stats.latency_ns += pa_now_ns() - r->priv_.t_submit;
    if (r->status == PA_OK) {
        e->stats.bytes += r->length;
        pa_counter_add(PA_CTR_BYTES_READ, (int64_t)r->length);
        pa_counter_add(PA_CTR_READ_REQUESTS, 1);
    } else if (r->status == PA_ECANCELED) {
        e->stats.canceled++;
    } else {
        e->stats.errors++;
    }
}

static int submit(io_engine *e, io_request *r, io__batch *batch)
{
    if (!r->file || (!r->buf && r->length > 0))
        return pa_error(r->err, PA_EINVAL, "I/O request without %s", r->file ? "a buffer" : "a file");
    if (r->offset > UINT64_MAX - r->length)
        return pa_error(r->err, PA_EINVAL, "I/O request at offset %llu of %zu bytes overflows",
                        (unsigned long long)r->offset, r->length);
    uint64_t pieces = r->length == 0 ? 1 : (r->length + e->opt.max_io_size - 1) / e->opt.max_io_size;
    if (pieces > UINT32_MAX)
        return pa_error(r->err, PA_EINVAL, "I/O request of %zu bytes is too large", r->length);
    memset(&r->priv_, 0, sizeof r->priv_);
    r->priv_.n_pieces = (uint32_t)pieces;
    r->priv_.batch = batch;
    r->priv_.t_submit = pa_now_ns();
    r->status = PA_OK;
    pthread_mutex_lock(&e->mu);
    if (e->stopping) {
        pthread_mutex_unlock(&e->mu);
        return pa_error(r->err, PA_ECLOSED, "I/O engine is shutting down; read of %s refused",
                        r->file->path);
    }
    if (e->tail)
        e->tail->priv_.next = r;
    else
        e->head = r;
    e->tail = r;
    e->ops->kick_locked(e);
    pthread_mutex_unlock(&e->mu);
    if (e->ops->flush)
        e->ops->flush(e);
    return PA_OK;
}

int io_submit(io_engine *e, io_request *r) { return submit(e, r, NULL); }

/* Unlink r from the pending list; prev is its predecessor or NULL. e->mu held. */
static void unlink_locked(io_engine *e, io_request *prev, io_request *r)
{
    if (prev)
        prev->priv_.next = r->priv_.next;
    else
        e->head = r->priv_.next;
    if (e->tail == r)
        e->tail = prev;
    r->priv_.next = NULL;
}

bool io__take_piece(io_engine *e, io__slot *s)
{
    io_request *r = e->head;
    if (!r || e->in_flight >= e->opt.queue_depth)
        return false;
    uint64_t k = r->priv_.dispatched++;
    if (r->priv_.dispatched == r->priv_.n_pieces)
        unlink_locked(e, NULL, r);
    s->req = r;
    s->pos = k * e->opt.max_io_size;
    s->len = r->length - s->pos < e->opt.max_io_size ? r->length - s->pos : e->opt.max_io_size;
    s->status = PA_OK;
    s->n_reads = s->n_short = 0;
    if (e->in_flight++ == 0)
        e->busy_since = pa_now_ns();
    if ((uint64_t)e->in_flight > e->stats.max_in_flight)
        e->stats.max_in_flight = (uint64_t)e->in_flight;
    return true;
}

void io__slot_prepare(io_engine *e, io__slot *s)
{
    io_request *r = s->req;
    uint64_t off = r->offset + s->pos;
    uint8_t *dst = (uint8_t *)r->buf + s->pos;
    s->fd = r->file->fd;
    s->rd_got = 0;
    s->bounced = false;
    s->dst = dst;
    s->rd_off = off;
    s->rd_want = s->rd_need = s->len;
    if (!r->file->direct || s->len == 0 ||
        (off % A == 0 && s->len % A == 0 && (uintptr_t)dst % A == 0))
        return;
    if (!s->bounce) {
        /* A piece of max_io bytes at an unaligned offset spans max_io + 2A - 2 aligned bytes. */
        s->bounce_raw = pa_malloc(e->opt.max_io_size + 3 * A);
        if (!s->bounce_raw) {
            s->status = pa_error(r->err, PA_ENOMEM, "out of memory for an O_DIRECT bounce buffer (%s)",
                                 r->file->path);
            return;
        }
        s->bounce = (uint8_t *)(((uintptr_t)s->bounce_raw + A - 1) & ~(uintptr_t)(A - 1));
    }
    uint64_t a0 = off & ~(A - 1), a1 = (off + s->len + A - 1) & ~(A - 1);
    s->bounced = true;
    s->dst = s->bounce;
    s->rd_off = a0;
    s->rd_want = (size_t)(a1 - a0);
    s->rd_need = (size_t)(off + s->len - a0);
}

static int eof_error(io__slot *s)
{
    io_request *r = s->req;
    return pa_error(r->err, PA_EIO,
                    "reading %s: unexpected end of file at offset %llu (read of %zu bytes at offset "
                    "%llu; the file had %llu bytes when opened)",
                    r->file->path, (unsigned long long)(s->rd_off + s->rd_got), r->length,
                    (unsigned long long)r->offset, (unsigned long long)r->file->size);
}

bool io__slot_advance(io_engine *e, io__slot *s, ssize_t res)
{
    if (res == -EINTR || res == -EAGAIN)
        return true;
    s->n_reads++;
    if (res < 0) {
        io_request *r = s->req;
        s->status = pa_error(r->err, PA_EIO, "reading %s at offset %llu (%zu bytes): %s",
                             r->file->path, (unsigned long long)(s->rd_off + s->rd_got),
                             s->rd_want - s->rd_got, strerror((int)-res));
        return false;
    }
    if (res == 0) {
        s->status = eof_error(s);
        return false;
    }
    s->rd_got += (size_t)res;
    if (s->rd_got >= s->rd_need)
        return false;
    s->n_short++;
    /* O_DIRECT returns a partial block only at end of file. */
    if (s->req->file->direct && s->rd_got % A != 0) {
        s->status = eof_error(s);
        return false;
    }
    return true;
}

void io__slot_finish(io_engine *e, io__slot *s)
{
    io_request *r = s->req;
    if (s->status == PA_OK && s->bounced)
        memcpy((uint8_t *)r->buf + s->pos, s->bounce + (r->offset + s->pos - s->rd_off), s->len);
    bool last = false;
    pthread_mutex_lock(&e->mu);
    e->stats.reads += s->n_reads;
    e->stats.short_reads += s->n_short;
    if (s->status == PA_OK && s->bounced)
        e->stats.bounce_bytes += s->len;
    if (s->status != PA_OK) {
        if (r->status == PA_OK)
            r->status = s->status;
        if (r->priv_.dispatched < r->priv_.n_pieces) {
            /* Stop issuing the rest. (Only the list head can be partly
             * dispatched, so the walk ends at once.) */
            io_request *prev = NULL;
            for (io_request *q = e->head; q && q != r; q = q->priv_.next)
                prev = q;
            unlink_locked(e, prev, r);
            r->priv_.n_pieces = r->priv_.dispatched;
        }
    }
    if (++r->priv_.finished == r->priv_.n_pieces) {
        last = true;
        account_locked(e, r);
    }
    pthread_mutex_unlock(&e->mu);
    if (last)
        deliver(r);
    pthread_mutex_lock(&e->mu);
    s->req = NULL;
    if (--e->in_flight == 0) {
        e->stats.busy_ns += pa_now_ns() - e->busy_since;
        if (e->delivering == 0)
            pthread_cond_broadcast(&e->idle);
    }
    e->ops->slot_done_locked(e, s);
    pthread_mutex_unlock(&e->mu);
    if (e->ops->flush)
        e->ops->flush(e);
}

void io__slot_release(io__slot *s)
{
    pa_free(s->bounce_raw);
    s->bounce_raw = NULL;
    s->bounce = NULL;
}

size_t io__cancel(io_engine *e, void *tag, bool all)
{
    io_request *ready = NULL, **ready_tail = &ready;
    size_t n = 0, n_ready = 0;
    pthread_mutex_lock(&e->mu);
    io_request *prev = NULL, *r = e->head;
    while (r) {
        io_request *next = r->priv_.next;
        if (!all && r->tag != tag) {
            prev = r;
            r = next;
            continue;
        }
        unlink_locked(e, prev, r);
        r->priv_.n_pieces = r->priv_.dispatched;
        if (r->status == PA_OK)
            r->status = PA_ECANCELED;
        if (r->priv_.finished == r->priv_.n_pieces) {
            /* Nothing running: deliver here. Otherwise the last piece will. */
            account_locked(e, r);
            *ready_tail = r;
            ready_tail = &r->priv_.next;
            n_ready++;
        }
        n++;
        r = next;
    }
    e->delivering += (int)n_ready;
    pthread_mutex_unlock(&e->mu);
    for (r = ready; r;) {
        io_request *next = r->priv_.next;
        r->priv_.next = NULL;
        deliver(r);
        r = next;
    }
    if (n_ready) {
        pthread_mutex_lock(&e->mu);
        e->delivering -= (int)n_ready;
        if (e->delivering == 0 && e->in_flight == 0)
            pthread_cond_broadcast(&e->idle);
        pthread_mutex_unlock(&e->mu);
    }
    return n;
}

size_t io_cancel_tag(io_engine *e, void *tag) { return io__cancel(e, tag, false); }

int io_read_all(io_engine *e, io_request *reqs, size_t n, pa_err *err)
{
    for (size_t i = 0; i < n; i++)
        if (reqs[i].queue)
            return pa_error(err, PA_EINVAL, "io_read_all: request %zu has a completion queue", i);
    io__batch b;
    pthread_mutex_init(&b.mu, NULL);
    pthread_cond_init(&b.cv, NULL);
    b.left = n;
    for (size_t i = 0; i < n; i++) {
        if (!reqs[i].err)
            reqs[i].err = err;
        int rc = submit(e, &reqs[i], &b);
        if (rc != PA_OK) {
            reqs[i].status = rc;
            batch_done(&b, 1);
        }
    }
    pthread_mutex_lock(&b.mu);
    while (b.left > 0)
        pthread_cond_wait(&b.cv, &b.mu);
    pthread_mutex_unlock(&b.mu);
    pthread_mutex_destroy(&b.mu);
    pthread_cond_destroy(&b.cv);
    for (size_t i = 0; i < n; i++) {
        if (reqs[i].status != PA_OK) {
            if (reqs[i].err && reqs[i].err != err)
                pa_err_propagate(err, reqs[i].err);
            return reqs[i].status;
        }
    }
    return PA_OK;
}

int io_read(io_engine *e, io_file *f, uint64_t offset, size_t length, void *buf, pa_err *err)
{
    io_request r;
    io_request_init(&r, f, offset, length, buf);
    r.err = err;
    return io_read_all(e, &r, 1, err);
}
