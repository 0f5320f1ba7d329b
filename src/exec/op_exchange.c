/*
 * op_exchange.c - EXCHANGE: rows moved between ranks while they are
 * produced (exec.h, ex_exchange), and the query's round thread that moves
 * them (sched_int.h, ex__xdriver_*).
 *
 * Send side (the sink of the input pipeline): a chunk in memory the host
 * cannot read is first copied into pinned memory (phase 1: values, validity,
 * offsets; phase 2, once the offsets arrived, string bytes whose count the
 * host did not know), the worker parking on an event between phases, never
 * syncing its stream; then its rows are packed per destination rank
 * (ex__pack_route) and appended to the exchange's pending buffers. While
 * the pending bytes exceed the queue limit the sink waits (back-pressure).
 * The pipeline's finalize marks the input ended.
 *
 * Rounds: one thread per query (the driver) repeats one all-to-all with
 * every rank. Rank r's message to rank p holds, for each exchange of the
 * plan in creation order (the same on every rank), a header
 * {bytes, flags} and then the rows r packed for p since the last round
 * (a packed result: ex_result_unpack reads it); flags say that r's input
 * ended and all of it was sent (DONE), and that r's receive queue is over
 * its limit (FULL: until a round says otherwise, nobody sends r more of
 * that exchange). Every rank sends the same flags to every rank, so after
 * each round every rank knows the same state, and all of them stop after
 * the same round: the one where every exchange is DONE on every rank. A
 * rank whose query failed sends its error instead (nt_fail): that round
 * fails on every rank with it, and every rank's query fails so.
 *
 * Receive side (the source of the pipeline above): the rows arrive as host
 * chunks in a queue; a reader takes one (on a device the host cannot read,
 * uploaded in its stream's order) or, with the queue empty, waits until a
 * round brings more or every rank's DONE ends it. When the readers stop
 * early (a LIMIT above), what arrives later is dropped, and the queue never
 * says FULL again, so the other ranks' inputs still end.
 *
 * In CHUNKED and BLOCKING modes the reader starts once the input pipeline
 * is done, so the receive queue cannot be bounded (it would wait for a
 * reader that waits for it): it never says FULL there.
 */
#include "exec/sched_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define X_DONE 1u
#define X_FULL 2u
/* Pending bytes per exchange (all destinations) and received bytes queued
 * per exchange beyond which senders wait (PISTA_EXCHANGE_QUEUE_BYTES). */
#define X_QUEUE_BYTES ((size_t)64 << 20)
/* A round starts when this many bytes wait to be sent, or after X_ROUND_NS. */
#define X_ROUND_BYTES ((size_t)1 << 20)
#define X_ROUND_NS 2000000L

typedef struct xstate {
    nt_world *w;
    ex_xmode mode;
    int n_keep, n_keys;
    int *keys;
    int me, size;
    size_t limit;
    pthread_mutex_t mu;
    bool mu_init;
    /* send side (mu) */
    ex_packed *pend;          /* per destination: packed chunks since the last round */
    int64_t *pend_chunks;
    size_t pend_bytes;
    bool produced;            /* the input pipeline ended here */
    bool told_done;           /* a round carried this rank's DONE */
    uint8_t *peer_full;       /* per rank: its queue said FULL */
    /* receive side (mu) */
    dv_chunk **q;
    size_t q_head, q_n, q_cap, q_bytes;
    int *peer_done;           /* per rank: its DONE arrived */
    bool ended;               /* every rank ended: the reader's end of input */
    bool bounded;             /* OVERLAPPED: the queue says FULL over the limit */
    int readers;              /* source locals alive */
    bool closed;              /* the readers stopped: drop arrivals */
    /* statistics (mu) */
    int64_t rounds, rows_sent, rows_here;
    int64_t full_rounds;      /* rounds in which this rank's queue said FULL */
    uint64_t t0, t_first_read, t_ended;
} xstate;

typedef struct xlocal {
    ex_role role;
    bool refined;             /* refine_estimate ran for this worker */
    /* send side, kept between chunks (no allocation per chunk) */
    ex_packed *b;             /* per part: this chunk's packed rows */
    int64_t *nch, *rows;
    ex_route_scratch sc;
    dv_chunk *h;              /* send side: the host twin being downloaded */
    int phase;                /* 0: none, 1: phase 1 copies enqueued, 2: phase 2 */
    ex_pending pend;
} xlocal;

static size_t queue_limit(void)
{
    const char *e = getenv("PISTA_EXCHANGE_QUEUE_BYTES");
    char *end;
    long long v = e ? strtoll(e, &end, 10) : 0;
    return e && *e && !*end && v > 0 ? (size_t)v : X_QUEUE_BYTES;
}

/* The bytes of host chunk c's rows (its queue's measure). */
static size_t host_bytes(const dv_chunk *c)
{
    size_t n = 0;
    for (int j = 0; j < c->n_columns; j++) {
        const pa_column *col = &c->columns[j];
        if (col->validity)
            n += (size_t)(c->length + 7) / 8;
        if (pa_type_is_varlen(col->type.id))
            n += (size_t)(c->length + 1) * sizeof(int32_t) + (size_t)col->offsets[c->length];
        else
            n += (size_t)c->length * (size_t)pa_type_bytes(col->type);
    }
    return n;
}

static int x_local_init(ex_op *op, ex_worker *w, void **local, pa_err *err)
{
    xstate *s = op->state;
    xlocal *l = pa_calloc(1, sizeof *l);
    if (!l)
        return pa_error(err, PA_ENOMEM, "out of memory starting an exchange");
    l->role = w->role;
    if (w->role == EX_ROLE_SOURCE) {
        pthread_mutex_lock(&s->mu);
        s->readers++;
        pthread_mutex_unlock(&s->mu);
    }
    *local = l;
    return PA_OK;
}

static void drop_queue(xstate *s)
{
    for (size_t i = s->q_head; i < s->q_n; i++)
        dv_chunk_destroy(s->q[i]);
    s->q_head = s->q_n = 0;
    s->q_bytes = 0;
}

static void x_local_free(ex_op *op, void *local)
{
    xstate *s = op->state;
    xlocal *l = local;
    if (l->role == EX_ROLE_SOURCE) {
        pthread_mutex_lock(&s->mu);
        if (--s->readers == 0) {   /* the reading pipeline ended: later arrivals are dropped */
            s->closed = true;
            drop_queue(s);
        }
        pthread_mutex_unlock(&s->mu);
    }
    dv_chunk_destroy(l->h);
    ex_pending_close(&l->pend);
    int parts = s->mode == EX_X_BROADCAST ? 1 : s->size;
    for (int p = 0; l->b && p < parts; p++)
        pa_free(l->b[p].p);
    pa_free(l->b), pa_free(l->nch), pa_free(l->rows);
    ex__route_scratch_free(&l->sc);
    pa_free(l);
}

/* --------------------------------------------------------------- send side */

/* Rows for the reader: the packed result seg (bytes, from rank `from`)
 * unpacked onto the queue, or dropped when the reader stopped. */
static int enqueue(ex_op *op, xstate *s, const char *seg, int64_t bytes, int from, pa_err *err)
{
    pthread_mutex_lock(&s->mu);
    bool drop = s->closed;
    pthread_mutex_unlock(&s->mu);
    if (drop || !bytes)
        return PA_OK;
    ex_result *r = NULL;
    const void *buf = seg;
    int rc = ex_result_unpack(op->plan->q->dev, s->n_keep, op->names, op->types, &buf, &bytes, 1, &r, err);
    if (rc != PA_OK)
        return pa_error(err, rc, "%s: rows from rank %d cannot be read", op->label, from);
    pthread_mutex_lock(&s->mu);
    for (int k = 0; rc == PA_OK && !s->closed && k < r->n_chunks; k++) {
        if (s->q_n == s->q_cap) {
            size_t cap = s->q_cap ? 2 * s->q_cap : 16;
            dv_chunk **v = pa_realloc(s->q, cap * sizeof *v);
            if (!v) {
                rc = pa_error(err, PA_ENOMEM, "out of memory receiving rows in %s", op->label);
                break;
            }
            s->q = v, s->q_cap = cap;
        }
        s->q_bytes += host_bytes(r->chunks[k]);
        s->rows_here += r->chunks[k]->length;
        s->q[s->q_n++] = r->chunks[k];
        r->chunks[k] = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    ex_result_destroy(r);   /* what was not queued */
    return rc;
}

/* Pack host chunk c for its destinations and hand the rows on: to the
 * pending buffers of the next round, or (LOCAL) this rank's share straight
 * to the reader's queue. */
static int send_rows(ex_op *op, xstate *s, xlocal *l, const dv_chunk *c, pa_err *err)
{
    int parts = s->mode == EX_X_BROADCAST ? 1 : s->size;
    if (!l->b) {
        l->b = pa_calloc((size_t)parts, sizeof *l->b);
        l->nch = pa_calloc((size_t)parts, sizeof *l->nch);
        l->rows = pa_calloc((size_t)parts, sizeof *l->rows);
    }
    ex_packed *b = l->b;
    int64_t *nch = l->nch, *rows = l->rows;
    int rc = b && nch && rows ? PA_OK : pa_error(err, PA_ENOMEM, "out of memory in %s", op->label);
    for (int p = 0; rc == PA_OK && p < parts; p++) {
        b[p].n = 0;
        b[p].oom = false;
        nch[p] = rows[p] = 0;
    }
    if (rc != PA_OK)
        return rc;
    if (s->mode == EX_X_LOCAL) {   /* a whole packed result: its header, then the count patched */
        ex_packed *mine = &b[s->me];
        ex__pack_header(mine, op->types, s->n_keep, 0);
        size_t count_at = mine->n - sizeof(int64_t);
        if (mine->oom)
            return pa_error(err, PA_ENOMEM, "out of memory in %s", op->label);
        if ((rc = ex__pack_route(c, s->n_keep, s->keys, s->n_keys, parts, s->me, b, nch, rows, &l->sc, err)) != PA_OK ||
            !nch[s->me])
            return rc;
        memcpy(mine->p + count_at, &nch[s->me], sizeof(int64_t));
        return enqueue(op, s, mine->p, (int64_t)mine->n, s->me, err);
    }
    if ((rc = ex__pack_route(c, s->n_keep, s->keys, s->n_keys, parts, -1, b, nch, rows, &l->sc, err)) != PA_OK)
        return rc;
    pthread_mutex_lock(&s->mu);
    for (int p = 0; p < s->size && rc == PA_OK; p++) {
        int k = s->mode == EX_X_REPART ? p : 0;   /* BROADCAST: the same rows to every rank */
        int64_t n = nch[k];
        if (!n)
            continue;
        size_t bytes = b[k].n;
        if (s->mode == EX_X_REPART && s->pend[p].n == 0) {   /* nothing pending: hand the buffer over */
            ex_packed t = s->pend[p];
            s->pend[p] = b[k];
            b[k] = t;
        } else {
            ex__pack_append(&s->pend[p], b[k].p, bytes);
            if (s->pend[p].oom)
                rc = pa_error(err, PA_ENOMEM, "out of memory in %s", op->label);
        }
        s->pend_chunks[p] += n;
        s->pend_bytes += bytes;
        if (p != s->me)
            s->rows_sent += rows[k];
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* The rows this rank's reader will get, from its input's estimate as it
 * stands once rows flow (an aggregate below has counted its groups by
 * then): what the reader sizes its tables by. Only ever lowered. */
static void refine_estimate(ex_op *op, const xstate *s)
{
    int64_t e = __atomic_load_n(&op->child[0]->est_rows, __ATOMIC_RELAXED);
    if (e < 0)
        return;
    int64_t here = s->mode == EX_X_BROADCAST ? (e > INT64_MAX / s->size ? INT64_MAX : e * s->size)
                   : s->mode == EX_X_LOCAL   ? e / s->size
                                             : e;   /* REPART: about as many come as go */
    int64_t cur = __atomic_load_n(&op->est_rows, __ATOMIC_RELAXED);
    if (cur < 0 || here < cur)
        __atomic_store_n(&op->est_rows, here, __ATOMIC_RELAXED);
}

static int x_sink(ex_op *op, ex_worker *w, void *local, dv_chunk *in, pa_err *err)
{
    xstate *s = op->state;
    xlocal *l = local;
    int rc;
    if (!l->refined) {
        refine_estimate(op, s);
        l->refined = true;
    }
    if (l->phase == 0) {
        bool wait;
        pthread_mutex_lock(&s->mu);   /* back-pressure: what waits to be sent (or read) */
        wait = s->mode == EX_X_LOCAL ? s->bounded && !s->closed && s->q_bytes > s->limit : s->pend_bytes > s->limit;
        pthread_mutex_unlock(&s->mu);
        if (wait) {
            w->blocked = true;
            return PA_OK;
        }
    }
    if (dv_host_visible(w->dev))
        return send_rows(op, s, l, in, err);
    bool ready;
    if (l->phase == 0) {   /* phase 1: everything but string bytes of unknown count */
        if ((rc = dv_chunk_create(w->dev, in->n_columns, &l->h, err)) != PA_OK)
            return rc;
        l->h->length = in->length;
        for (int j = 0; rc == PA_OK && j < in->n_columns; j++)
            rc = ex__download_fixed(w->stream, l->h, &in->columns[j], &l->h->columns[j], err);
        if (rc != PA_OK)
            return rc;
        l->phase = 1;
    }
    if ((rc = ex_pending_ready(w, &l->pend, &ready, err)) != PA_OK)
        return rc;
    if (!ready) {
        w->blocked = true;
        return PA_OK;
    }
    if (l->phase == 1) {
        bool more = false;
        for (int j = 0; rc == PA_OK && j < in->n_columns; j++)
            if (pa_type_is_varlen(in->columns[j].type.id) && !l->h->columns[j].data) {
                rc = ex__download_bytes(w->stream, l->h, &in->columns[j], &l->h->columns[j], err);
                more = true;
            }
        if (rc != PA_OK)
            return rc;
        l->phase = 2;
        if (more) {
            if ((rc = ex_pending_ready(w, &l->pend, &ready, err)) != PA_OK)
                return rc;
            if (!ready) {
                w->blocked = true;
                return PA_OK;
            }
        }
    }
    rc = send_rows(op, s, l, l->h, err);
    dv_chunk_destroy(l->h);
    l->h = NULL;
    l->phase = 0;
    return rc;
}

static int x_finalize(ex_op *op, ex_query *q, pa_err *err)
{
    (void)q, (void)err;
    xstate *s = op->state;
    pthread_mutex_lock(&s->mu);
    s->produced = true;
    if (s->mode == EX_X_LOCAL) {   /* no rounds: ended here */
        s->ended = true;
        s->t_ended = pa_now_ns();
    }
    pthread_mutex_unlock(&s->mu);
    return PA_OK;
}

/* ------------------------------------------------------------ receive side */

static int x_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    (void)local;
    xstate *s = op->state;
    *out = NULL;
    pthread_mutex_lock(&s->mu);
    dv_chunk *h = NULL;
    if (s->q_head < s->q_n) {
        h = s->q[s->q_head++];
        s->q_bytes -= host_bytes(h);
        if (s->q_head == s->q_n)
            s->q_head = s->q_n = 0;
        if (!s->t_first_read)
            s->t_first_read = pa_now_ns();
    }
    bool ended = s->ended;
    pthread_mutex_unlock(&s->mu);
    if (!h) {
        if (!ended)
            w->blocked = true;   /* a round brings more, or the end */
        return PA_OK;
    }
    if (dv_host_visible(w->dev)) {
        *out = h;
        return PA_OK;
    }
    int rc = ex__chunk_upload(op, w, h, out, err);
    dv_chunk_release(h, w->stream);   /* the host rows live until the copies ran */
    return rc;
}

static void x_destroy(ex_op *op)
{
    xstate *s = op->state;
    if (!s || !s->mu_init)
        return;
    drop_queue(s);
    pa_free(s->q);
    for (int p = 0; s->pend && p < s->size; p++)
        pa_free(s->pend[p].p);
    pa_free(s->pend), pa_free(s->pend_chunks), pa_free(s->peer_full), pa_free(s->peer_done);
    pthread_mutex_destroy(&s->mu);
    s->mu_init = false;
}

static const ex_op_vt exchange_vt = {
    .kind = EX_OP_EXCHANGE,
    .local_init = x_local_init,
    .local_free = x_local_free,
    .source_next = x_next,
    .sink = x_sink,
    .streams = true,
    .finalize = x_finalize,
    .destroy = x_destroy,
};

static const char *const x_mode_names[] = {"REPARTITIONED", "HASH SHARE", "BROADCAST"};

int ex_exchange(ex_plan *p, ex_op *input, nt_world *w, ex_xmode mode, int n_keep, const int *keys, int n_keys,
                ex_op **out, pa_err *err)
{
    if (!p || !input || !w || !out || n_keep < 1 || n_keep > input->n_cols || n_keys < 0 ||
        (mode != EX_X_BROADCAST && n_keys < 1) || (unsigned)mode > EX_X_BROADCAST || nt_size(w) > 65535)
        return pa_error(err, PA_EINVAL, "EXCHANGE: bad arguments");
    for (int i = 0; i < n_keys; i++)
        if (keys[i] < 0 || keys[i] >= input->n_cols)
            return pa_error(err, PA_EINVAL, "EXCHANGE: key %d is not a column of its input", i);
    xstate *s = ex_plan_alloc(p, sizeof *s);
    int *k = ex_plan_alloc(p, (size_t)(n_keys + 1) * sizeof *k);
    if (!s || !k)
        return pa_error(err, PA_ENOMEM, "EXCHANGE: out of memory");
    ex_op *op;
    int rc = ex_op_new(p, &exchange_vt, n_keep, &op, err);
    if (rc != PA_OK)
        return rc;
    for (int i = 0; i < n_keep; i++)
        if ((rc = ex_op_set_column(op, i, input->names[i], input->types[i], err)) != PA_OK)
            return rc;
    memcpy(k, keys, (size_t)n_keys * sizeof *k);
    s->w = w;
    s->mode = mode;
    s->n_keep = n_keep;
    s->keys = k;
    s->n_keys = n_keys;
    s->me = nt_rank(w);
    s->size = nt_size(w);
    s->limit = queue_limit();
    s->pend = pa_calloc((size_t)s->size, sizeof *s->pend);
    s->pend_chunks = pa_calloc((size_t)s->size, sizeof *s->pend_chunks);
    s->peer_full = pa_calloc((size_t)s->size, 1);
    s->peer_done = pa_calloc((size_t)s->size, sizeof *s->peer_done);
    pthread_mutex_init(&s->mu, NULL);
    s->mu_init = true;
    op->state = s;
    op->child[0] = input;
    op->n_child = 1;
    op->est_rows = input->est_rows;
    if (!s->pend || !s->pend_chunks || !s->peer_full || !s->peer_done)
        return pa_error(err, PA_ENOMEM, "EXCHANGE: out of memory");   /* destroy frees them */
    snprintf(op->label, sizeof op->label, "EXCHANGE %s (%d ranks)", x_mode_names[mode], s->size);
    *out = op;
    return PA_OK;
}

/* What EXPLAIN ANALYZE says of an exchange after its run (run_explain.c). */
void ex__exchange_detail(const ex_op *op, char *buf, size_t cap)
{
    if (!cap)
        return;
    buf[0] = 0;
    if (op->vt != &exchange_vt || !op->state)
        return;
    const xstate *s = op->state;
    double first = s->t_first_read && s->t0 ? (double)(s->t_first_read - s->t0) / 1e6 : -1;
    double end = s->t_ended && s->t0 ? (double)(s->t_ended - s->t0) / 1e6 : -1;
    if (s->mode == EX_X_LOCAL)
        snprintf(buf, cap, "%lld rows kept; first read at %.1f ms, input ended at %.1f ms", (long long)s->rows_here,
                 first, end);
    else
        snprintf(buf, cap, "%lld rounds (%lld full here); %lld rows sent, %lld here; read from %.1f ms, ended %.1f ms",
                 (long long)s->rounds, (long long)s->full_rounds, (long long)s->rows_sent, (long long)s->rows_here,
                 first, end);
}

/* ------------------------------------------------------------------ rounds */

struct ex__xdriver {
    ex_sched *s;
    nt_world *w;
    xstate **x;               /* the plan's exchanges with rounds, creation order */
    ex_op **ops;
    int n;
    ex_packed *msg;           /* per rank: the round's message, its memory kept between rounds */
    pthread_t tid;
};

static bool x_full(const xstate *s)
{
    return s->bounded && !s->closed && s->q_bytes > s->limit;
}

/* One round: every exchange's pending rows and flags out, the others' in.
 * Returns PA_OK and *all_done once every exchange ended on every rank. */
static int one_round(struct ex__xdriver *d, bool *all_done, pa_err *err)
{
    int size = nt_size(d->w), n = d->n;
    const size_t hdr = (size_t)n * 16;
    ex_packed *msg = d->msg;
    nt_buf *sb = pa_calloc((size_t)size, sizeof *sb), *rb = pa_calloc((size_t)size, sizeof *rb);
    uint32_t *flags = pa_calloc((size_t)n + 1, sizeof *flags);
    int rc = sb && rb && flags ? PA_OK : pa_error(err, PA_ENOMEM, "out of memory making an exchange round");
    /* This rank's flags, the same to every rank, and the rows per rank. */
    for (int p = 0; rc == PA_OK && p < size; p++) {
        msg[p].n = 0;
        msg[p].oom = false;
        char zero[16] = {0};
        for (int i = 0; i < n; i++)
            ex__pack_append(&msg[p], zero, sizeof zero);
        if (msg[p].oom)
            rc = pa_error(err, PA_ENOMEM, "out of memory making an exchange round");
    }
    for (int i = 0; rc == PA_OK && i < n; i++) {
        xstate *s = d->x[i];
        ex_op *op = d->ops[i];
        pthread_mutex_lock(&s->mu);
        bool left = false;
        for (int p = 0; rc == PA_OK && p < size; p++) {
            int64_t bytes = 0;
            if (s->pend_chunks[p] && !s->peer_full[p]) {
                size_t at = msg[p].n;
                ex__pack_header(&msg[p], op->types, s->n_keep, s->pend_chunks[p]);
                ex__pack_append(&msg[p], s->pend[p].p, s->pend[p].n);
                if (msg[p].oom) {
                    rc = pa_error(err, PA_ENOMEM, "out of memory making an exchange round");
                    break;
                }
                bytes = (int64_t)(msg[p].n - at);
                s->pend_bytes -= s->pend[p].n;
                s->pend[p].n = 0;
                s->pend_chunks[p] = 0;
            }
            left |= s->pend_chunks[p] != 0;
            memcpy(msg[p].p + (size_t)i * 16, &bytes, 8);
        }
        flags[i] = (s->produced && !left ? X_DONE : 0) | (x_full(s) ? X_FULL : 0);
        s->full_rounds += (flags[i] & X_FULL) != 0;
        s->told_done |= (flags[i] & X_DONE) != 0;
        pthread_mutex_unlock(&s->mu);
        for (int p = 0; p < size; p++)
            memcpy(msg[p].p + (size_t)i * 16 + 8, &flags[i], 4);
    }
    for (int p = 0; rc == PA_OK && p < size; p++)
        sb[p] = (nt_buf){msg[p].p, (int64_t)msg[p].n};
    if (rc == PA_OK)
        rc = nt_alltoallv(d->w, sb, rb, err);
    bool done = rc == PA_OK;
    for (int p = 0; rc == PA_OK && p < size; p++) {
        const char *m = rb[p].data;
        if (rb[p].bytes < (int64_t)hdr) {
            rc = pa_error(err, PA_ECORRUPT, "an exchange round from rank %d is cut short", p);
            break;
        }
        size_t at = hdr;
        for (int i = 0; rc == PA_OK && i < n; i++) {
            int64_t bytes;
            uint32_t f;
            memcpy(&bytes, m + (size_t)i * 16, 8);
            memcpy(&f, m + (size_t)i * 16 + 8, 4);
            if (bytes < 0 || (uint64_t)bytes > (uint64_t)rb[p].bytes - at) {
                rc = pa_error(err, PA_ECORRUPT, "an exchange round from rank %d is cut short", p);
                break;
            }
            rc = enqueue(d->ops[i], d->x[i], m + at, bytes, p, err);
            at += (size_t)bytes;
            xstate *s = d->x[i];
            pthread_mutex_lock(&s->mu);
            s->peer_full[p] = (f & X_FULL) != 0;
            s->peer_done[p] = (f & X_DONE) != 0;
            pthread_mutex_unlock(&s->mu);
        }
    }
    for (int i = 0; rc == PA_OK && i < n; i++) {
        xstate *s = d->x[i];
        pthread_mutex_lock(&s->mu);
        s->rounds++;
        bool all = true;
        for (int p = 0; p < size; p++)
            all &= s->peer_done[p] != 0;
        if (all && !s->ended) {
            s->ended = true;
            s->t_ended = pa_now_ns();
        }
        done &= all;
        pthread_mutex_unlock(&s->mu);
    }
    for (int p = 0; rb && p < size; p++)
        nt_buf_release(d->w, rb[p].data);
    pa_free(sb), pa_free(rb), pa_free(flags);
    *all_done = rc == PA_OK && done;
    return rc;
}

/* Whether a round is worth starting now: enough rows wait, or a flag
 * changed (an input ended, a queue filled or drained). */
static bool round_due(struct ex__xdriver *d)
{
    size_t bytes = 0;
    bool due = false;
    int me = nt_rank(d->w);
    for (int i = 0; i < d->n && !due; i++) {
        xstate *s = d->x[i];
        pthread_mutex_lock(&s->mu);
        for (int p = 0; p < s->size; p++)
            bytes += s->peer_full[p] ? 0 : s->pend[p].n;
        due |= s->produced && !s->told_done;
        due |= x_full(s) != (s->peer_full[me] != 0);
        pthread_mutex_unlock(&s->mu);
    }
    return due || bytes >= X_ROUND_BYTES;
}

static void *driver_main(void *arg)
{
    struct ex__xdriver *d = arg;
    ex_query *q = &d->s->q;
    pa_err err;
    pa_err_init(&err);
    for (;;) {
        int rc;
        bool all_done = false;
        if (ex_query_failed(q)) {   /* this rank's error to every rank, in this round */
            pa_err why;
            pa_err_init(&why);
            pthread_mutex_lock(&d->s->mu);
            if (q->err.code != PA_OK)
                pa_err_propagate(&why, &q->err);
            else
                pa_error(&why, PA_ECANCELED, "query canceled");
            pthread_mutex_unlock(&d->s->mu);
            rc = nt_fail(d->w, &why, &err);
            pa_err_close(&why);
            if (q->opt.round_failed)
                *q->opt.round_failed = true;
            break;
        }
        rc = one_round(d, &all_done, &err);
        if (rc != PA_OK) {
            if (q->opt.round_failed)
                *q->opt.round_failed = true;
            ex__fail(q, &err, rc);
            break;
        }
        if (all_done)
            break;
        for (uint64_t t0 = pa_now_ns(); !ex_query_failed(q) && !round_due(d) && pa_now_ns() - t0 < X_ROUND_NS;) {
            struct timespec ts = {0, 500000};   /* 500 us */
            nanosleep(&ts, NULL);
        }
    }
    pa_err_close(&err);
    return NULL;
}

int ex__xdriver_start(ex_sched *s, ex__xdriver **out, pa_err *err)
{
    *out = NULL;
    ex_plan *p = s->q.plan;
    int n = 0;
    nt_world *w = NULL;
    uint64_t t0 = pa_now_ns();
    for (int i = 0; i < p->n_ops; i++)
        if (p->ops[i]->vt == &exchange_vt) {
            xstate *x = p->ops[i]->state;
            x->t0 = t0;
            x->bounded = s->q.opt.mode == EX_MODE_OVERLAPPED;
            if (x->mode == EX_X_LOCAL)
                continue;
            if (w && x->w != w)
                return pa_error(err, PA_EINVAL, "the exchanges of one plan must use one world");
            w = x->w;
            n++;
        }
    if (!n)
        return PA_OK;
    struct ex__xdriver *d = pa_calloc(1, sizeof *d);
    if (d) {
        d->x = pa_calloc((size_t)n, sizeof *d->x);
        d->ops = pa_calloc((size_t)n, sizeof *d->ops);
        d->msg = pa_calloc((size_t)nt_size(w), sizeof *d->msg);
    }
    if (!d || !d->x || !d->ops || !d->msg) {
        if (d)
            pa_free(d->x), pa_free(d->ops), pa_free(d->msg);
        pa_free(d);
        return pa_error(err, PA_ENOMEM, "out of memory starting the exchanges");
    }
    d->s = s;
    d->w = w;
    for (int i = 0; i < p->n_ops; i++)
        if (p->ops[i]->vt == &exchange_vt && ((xstate *)p->ops[i]->state)->mode != EX_X_LOCAL) {
            d->ops[d->n] = p->ops[i];
            d->x[d->n++] = p->ops[i]->state;
        }
    if (pthread_create(&d->tid, NULL, driver_main, d) != 0) {
        pa_free(d->x), pa_free(d->ops), pa_free(d->msg), pa_free(d);
        return pa_error(err, PA_EINTERNAL, "cannot start the exchanges' thread");
    }
    *out = d;
    return PA_OK;
}

void ex__xdriver_finish(ex__xdriver *d)
{
    if (!d)
        return;
    pthread_join(d->tid, NULL);
    for (int p = 0; p < nt_size(d->w); p++)
        pa_free(d->msg[p].p);
    pa_free(d->x), pa_free(d->ops), pa_free(d->msg), pa_free(d);
}
