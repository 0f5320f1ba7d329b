/*
 * exec_testops.h - operators written for the framework's tests only, built
 * on the operator contract (exec_int.h), independent of the real operator
 * slices. They follow the device protocol, so they run on every device:
 * device memory is written with ex_to_device or kernels and read back only
 * through a copy to pinned memory behind an ex_pending wait (directly only
 * where dv_host_visible).
 *   SPLIT    streaming: copies each input into slices of 1..max rows
 *            (kn_gather, with EX_HAVE_OUTPUT), so RECHUNK gets tiny chunks;
 *   TAKE     streaming: passes the first n rows (shared counter), then
 *            EX_FINISHED;
 *   TESTAGG  breaker: COUNT(*) and SUM of column 0 (INTEGER, BIGINT, or
 *            DECIMAL as its scaled integer) over valid rows; optionally
 *            asks ex_alloc for `state_bytes` at finalize. Its source checks
 *            it was finalized before it was opened;
 *   SEQSRC, GATE  a leaf source and a join-shaped op (below).
 */
#ifndef EXEC_TESTOPS_H
#define EXEC_TESTOPS_H

#include "exec/exec_int.h"

#include <string.h>

/* Pinned memory a copy or kernel queued on s may still write: returned
 * once s got there; on cpu, whose kernels ran before they returned and
 * whose copies these operators never queue, at once. */
static inline void t_pinned_free(dv_device *d, dv_stream *s, void *p)
{
    if (dv_kind_of(d) == DV_KIND_CPU)
        dv_host_free(d, p);
    else
        dv_host_free_async(s, p, NULL);
}

/* ---------------------------------------------------------------- SPLIT
 *
 * A slice is rows [pos, pos + n) of the input gathered into a new chunk.
 * Its strings' byte counts come from kn_gather_str_bytes through pinned
 * memory: the slice waits for them (EX_BLOCKED) before its bytes are
 * allocated, and resumes with the same n.
 */

typedef struct split_local {
    int64_t pos;      /* next row of the current input */
    uint32_t rng;
    dv_chunk *c;      /* the slice waiting for its string sizes, or NULL */
    int64_t n;        /* its rows */
    int64_t *bytes;   /* pinned: string bytes of each column of the slice */
    ex_pending pend;
    dv_device *dev;
    dv_stream *stream;
} split_local;

static void split_free(ex_op *op, void *local)
{
    split_local *l = local;
    if (!l)
        return;
    if (l->c)   /* a query that failed while the slice waited */
        dv_chunk_release(l->c, l->stream);
    if (l->bytes)   /* a queued kernel may still write it */
        t_pinned_free(l->dev, l->stream, l->bytes);
    ex_pending_close(&l->pend);
    pa_free(l);
}

static int split_init(ex_op *op, ex_worker *w, void **local, pa_err *err)
{
    split_local *l = pa_calloc(1, sizeof *l);
    if (!l)
        return pa_error(err, PA_ENOMEM, "split local");
    l->rng = 12345u + (uint32_t)w->id * 7919u;
    l->dev = w->dev;
    l->stream = w->stream;
    int rc = dv_host_alloc(w->dev, (size_t)op->n_cols * sizeof(int64_t), (void **)&l->bytes, err);
    if (rc != PA_OK) {
        split_free(op, l);
        return ex_oom(op, rc, err);
    }
    *local = l;
    return PA_OK;
}

/* Start the slice of n rows at l->pos: its buffers, except the strings'
 * bytes, and their sizes enqueued. *strings = whether it has any. */
static int split_begin(ex_op *op, ex_worker *w, split_local *l, dv_chunk *in, int64_t n, bool *strings,
                       pa_err *err)
{
    dv_chunk *c = NULL;
    int rc = ex_chunk_new(op, w, in->n_columns, &c, err);
    if (rc != PA_OK)
        return rc;
    c->length = n;
    *strings = false;
    for (int k = 0; k < in->n_columns && rc == PA_OK; k++) {
        const pa_column *s = &in->columns[k];
        pa_column *d = &c->columns[k];
        d->type = s->type;
        d->length = n;
        if (s->validity && (rc = ex_chunk_alloc(op, c, (size_t)(n + 7) / 8, (void **)&d->validity, err)) != PA_OK)
            break;
        if (s->type.id != PA_TYPE_VARCHAR) {
            rc = ex_chunk_alloc(op, c, (size_t)n * (size_t)pa_type_bytes(s->type), &d->data, err);
            continue;
        }
        *strings = true;
        if ((rc = ex_chunk_alloc(op, c, (size_t)(n + 1) * 4, (void **)&d->offsets, err)) == PA_OK &&
            (rc = ex_zero_offset(op, w, d->offsets, err)) == PA_OK)
            rc = kn_gather_str_bytes(&w->kn, s, NULL, l->pos, n, &l->bytes[k], err);
    }
    if (rc != PA_OK) {
        dv_chunk_release(c, w->stream);
        return rc;
    }
    l->c = c;
    l->n = n;
    return PA_OK;
}

/* Copy the slice's rows once its string sizes are known. */
static int split_fill(ex_op *op, ex_worker *w, split_local *l, dv_chunk *in, pa_err *err)
{
    int rc = PA_OK;
    for (int k = 0; k < in->n_columns && rc == PA_OK; k++) {
        pa_column *d = &l->c->columns[k];
        if (d->type.id == PA_TYPE_VARCHAR)
            rc = ex_chunk_alloc(op, l->c, (size_t)l->bytes[k] + 1, &d->data, err);
        if (rc == PA_OK)
            rc = kn_gather(&w->kn, &in->columns[k], NULL, l->pos, l->n, d, 0, err);
    }
    return rc;
}

static int split_execute(ex_op *op, ex_worker *w, void *local, dv_chunk *in, dv_chunk **out, ex_state *st,
                         pa_err *err)
{
    split_local *l = local;
    int rc;
    *st = EX_NEED_INPUT;
    if (in->length == 0)
        return PA_OK;
    bool strings = true;   /* a slice left waiting has strings */
    if (!l->c) {
        int max = *(int *)op->state;
        l->rng = l->rng * 1103515245u + 12345u;
        int64_t n = 1 + (int64_t)((l->rng >> 16) % (uint32_t)max);
        if (n > in->length - l->pos)
            n = in->length - l->pos;
        if ((rc = split_begin(op, w, l, in, n, &strings, err)) != PA_OK)
            return rc;
    }
    if (strings) {
        bool ready;
        if ((rc = ex_pending_ready(w, &l->pend, &ready, err)) != PA_OK)
            return rc;
        if (!ready) {
            *st = EX_BLOCKED;
            return PA_OK;
        }
    }
    rc = split_fill(op, w, l, in, err);
    dv_chunk *c = l->c;
    l->c = NULL;
    if (rc != PA_OK) {
        dv_chunk_release(c, w->stream);
        return rc;
    }
    l->pos += l->n;
    *out = c;
    if (l->pos < in->length) {
        *st = EX_HAVE_OUTPUT;
    } else {
        l->pos = 0;
        *st = EX_NEED_INPUT;
    }
    return PA_OK;
}

static const ex_op_vt split_vt = {
    .kind = EX_OP_PROJECT,
    .local_init = split_init,
    .local_free = split_free,
    .execute = split_execute,
};

static inline ex_op *t_split(ex_plan *p, ex_op *in, int max)
{
    ex_op *op;
    if (ex_op_new(p, &split_vt, in->n_cols, &op, NULL) != PA_OK)
        return NULL;
    for (int i = 0; i < in->n_cols; i++)
        ex_op_set_column(op, i, in->names[i], in->types[i], NULL);
    int *m = ex_plan_alloc(p, sizeof *m);
    *m = max;
    op->state = m;
    op->child[0] = in;
    op->n_child = 1;
    snprintf(op->label, sizeof op->label, "SPLIT %d", max);
    return op;
}

/* ----------------------------------------------------------------- TAKE */

typedef struct take_state {
    int64_t limit;
    int64_t taken;    /* atomic */
} take_state;

static int take_execute(ex_op *op, ex_worker *w, void *local, dv_chunk *in, dv_chunk **out, ex_state *st,
                        pa_err *err)
{
    take_state *s = op->state;
    int64_t start = __atomic_fetch_add(&s->taken, in->length, __ATOMIC_RELAXED);
    *st = EX_NEED_INPUT;
    if (start >= s->limit) {
        *st = EX_FINISHED;
        return PA_OK;
    }
    int64_t n = in->length < s->limit - start ? in->length : s->limit - start;
    dv_chunk *c = NULL;
    int rc = ex_chunk_new(op, w, in->n_columns, &c, err);
    if (rc == PA_OK)
        rc = dv_chunk_depend(c, in, err);
    if (rc != PA_OK) {
        dv_chunk_destroy(c);
        return rc;
    }
    for (int k = 0; k < in->n_columns; k++) {
        c->columns[k] = in->columns[k];
        c->columns[k].length = n;
    }
    c->length = n;
    *out = c;
    if (start + in->length >= s->limit)
        *st = EX_FINISHED;
    return PA_OK;
}

static const ex_op_vt take_vt = {.kind = EX_OP_LIMIT, .execute = take_execute};

static inline ex_op *t_take(ex_plan *p, ex_op *in, int64_t n)
{
    ex_op *op;
    if (ex_op_new(p, &take_vt, in->n_cols, &op, NULL) != PA_OK)
        return NULL;
    for (int i = 0; i < in->n_cols; i++)
        ex_op_set_column(op, i, in->names[i], in->types[i], NULL);
    take_state *s = ex_plan_alloc(p, sizeof *s);
    s->limit = n;
    op->state = s;
    op->child[0] = in;
    op->n_child = 1;
    snprintf(op->label, sizeof op->label, "TAKE %lld", (long long)n);
    return op;
}

/* -------------------------------------------------------------- TESTAGG
 *
 * The sink sums on the host. Where device memory is host memory it reads
 * the chunk; elsewhere it copies column 0 (values, then validity) to a
 * pinned buffer on its worker's stream and reads it once the stream got
 * there (the worker parks on the copy: one host sync per chunk).
 */

typedef struct agg_state {
    pthread_mutex_t mu;
    int64_t count, sum;
    bool finalized, opened, emitted;
    size_t state_bytes;
    void *mem;
} agg_state;

typedef struct agg_local {
    int64_t count, sum;
    uint8_t *host;    /* pinned: the input's column 0 being downloaded */
    size_t cap;
    bool copied;      /* the download of the current input is enqueued */
    ex_pending pend;
    dv_device *dev;
    dv_stream *stream;
} agg_local;

static int agg_init(ex_op *op, ex_worker *w, void **local, pa_err *err)
{
    if (w->role != EX_ROLE_SINK)
        return PA_OK;   /* no local state as a source */
    agg_local *l = pa_calloc(1, sizeof *l);
    if (!l)
        return pa_error(err, PA_ENOMEM, "agg local");
    l->dev = w->dev;
    l->stream = w->stream;
    *local = l;
    return PA_OK;
}

static void agg_free(ex_op *op, void *local)
{
    agg_local *l = local;
    if (!l)
        return;
    if (l->host)   /* a query may have failed while a copy was queued */
        t_pinned_free(l->dev, l->stream, l->host);
    ex_pending_close(&l->pend);
    pa_free(l);
}

/* Add the rows of column c (n rows, values and validity host-readable). */
static void agg_add(agg_local *l, const pa_column *c, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        l->count++;
        if (!pa_column_valid(c, i))
            continue;
        l->sum += c->type.id == PA_TYPE_INTEGER || c->type.id == PA_TYPE_DATE ? ((const int32_t *)c->data)[i]
                                                                              : ((const int64_t *)c->data)[i];
    }
}

/* Enqueue the copy of column c's values and validity into l->host. */
static int agg_download(ex_op *op, ex_worker *w, agg_local *l, const pa_column *c, int64_t n, pa_err *err)
{
    size_t vals = (size_t)n * (size_t)pa_type_bytes(c->type), bits = c->validity ? (size_t)(n + 7) / 8 : 0;
    int rc;
    if (vals + bits > l->cap) {
        if (l->host)
            dv_host_free(l->dev, l->host);   /* its last copy was read */
        l->host = NULL;
        l->cap = 0;
        if ((rc = dv_host_alloc(l->dev, vals + bits, (void **)&l->host, err)) != PA_OK)
            return ex_oom(op, rc, err);
        l->cap = vals + bits;
    }
    rc = dv_copy_async(w->stream, l->host, c->data, vals, DV_COPY_D2H, err);
    if (rc == PA_OK && bits)
        rc = dv_copy_async(w->stream, l->host + vals, c->validity, bits, DV_COPY_D2H, err);
    return rc;
}

static int agg_sink(ex_op *op, ex_worker *w, void *local, dv_chunk *in, pa_err *err)
{
    agg_local *l = local;
    if (!l || w->role != EX_ROLE_SINK)
        return pa_error(err, PA_EINTERNAL, "sink without its local state");
    const pa_column *c = &in->columns[0];
    if (dv_host_visible(w->dev) || in->length == 0) {
        agg_add(l, c, in->length);
        return PA_OK;
    }
    int rc;
    if (!l->copied) {
        if ((rc = agg_download(op, w, l, c, in->length, err)) != PA_OK)
            return rc;
        l->copied = true;
    }
    bool ready;
    if ((rc = ex_pending_ready(w, &l->pend, &ready, err)) != PA_OK)
        return rc;
    if (!ready) {
        w->blocked = true;
        return PA_OK;
    }
    l->copied = false;
    pa_column h = *c;
    h.data = l->host;
    h.validity = c->validity ? l->host + (size_t)in->length * (size_t)pa_type_bytes(c->type) : NULL;
    agg_add(l, &h, in->length);
    return PA_OK;
}

static int agg_combine(ex_op *op, ex_worker *w, void *local, pa_err *err)
{
    agg_state *s = op->state;
    agg_local *l = local;
    pthread_mutex_lock(&s->mu);
    s->count += l->count;
    s->sum += l->sum;
    pthread_mutex_unlock(&s->mu);
    return PA_OK;
}

static int agg_finalize(ex_op *op, ex_query *q, pa_err *err)
{
    agg_state *s = op->state;
    if (s->state_bytes) {
        int rc = ex_alloc(op, s->state_bytes, &s->mem, err);
        if (rc != PA_OK)
            return rc;
    }
    s->finalized = true;
    return PA_OK;
}

static int agg_open(ex_op *op, ex_query *q, pa_err *err)
{
    agg_state *s = op->state;
    if (!s->finalized)
        return pa_error(err, PA_EINTERNAL, "%s opened before it was finalized", op->label);
    s->opened = true;
    return PA_OK;
}

static int agg_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    agg_state *s = op->state;
    if (!s->opened)
        return pa_error(err, PA_EINTERNAL, "%s read before it was opened", op->label);
    pthread_mutex_lock(&s->mu);
    bool first = !s->emitted;
    s->emitted = true;
    pthread_mutex_unlock(&s->mu);
    if (!first)
        return PA_OK;
    dv_chunk *c = NULL;
    int rc = ex_chunk_new(op, w, 2, &c, err);
    int64_t *v[2] = {NULL, NULL};
    for (int k = 0; k < 2 && rc == PA_OK; k++) {
        rc = ex_chunk_alloc(op, c, 8, (void **)&v[k], err);
        c->columns[k].type = op->types[k];
        c->columns[k].length = 1;
        c->columns[k].data = v[k];
    }
    int64_t host[2] = {s->count, s->sum};
    for (int k = 0; k < 2 && rc == PA_OK; k++)
        rc = ex_to_device(op, w, v[k], &host[k], 8, err);
    if (rc != PA_OK) {
        dv_chunk_release(c, w->stream);
        return rc;
    }
    c->length = 1;
    *out = c;
    return PA_OK;
}

static void agg_destroy(ex_op *op)
{
    agg_state *s = op->state;
    if (s->mem)
        ex_free(op, s->mem, s->state_bytes);
    s->mem = NULL;
    pthread_mutex_destroy(&s->mu);
}

static const ex_op_vt agg_vt = {
    .kind = EX_OP_AGGREGATE,
    .local_init = agg_init,
    .local_free = agg_free,
    .sink = agg_sink,
    .combine = agg_combine,
    .finalize = agg_finalize,
    .source_open = agg_open,
    .source_next = agg_next,
    .destroy = agg_destroy,
};

static inline ex_op *t_agg(ex_plan *p, ex_op *in, size_t state_bytes)
{
    ex_op *op;
    if (ex_op_new(p, &agg_vt, 2, &op, NULL) != PA_OK)
        return NULL;
    pa_type big = {PA_TYPE_BIGINT, 0, 0};
    ex_op_set_column(op, 0, "count", big, NULL);
    ex_op_set_column(op, 1, "sum", big, NULL);
    agg_state *s = ex_plan_alloc(p, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->state_bytes = state_bytes;
    op->state = s;
    op->child[0] = in;
    op->n_child = 1;
    snprintf(op->label, sizeof op->label, "TESTAGG");
    return op;
}

/* ------------------------------------------------------ SEQSRC and GATE
 *
 * SEQSRC: a leaf source of n_chunks chunks of 1000 INTEGER rows counting
 * from 0 (thread-safe). GATE: join-shaped (streaming over child[0], sink of
 * a build pipeline over child[1]); it counts the build rows and passes the
 * probe chunks on, failing if a probe chunk comes before finalize. Both
 * note the order of events in a shared sequence, so tests see when the
 * probe source was opened relative to the build's finalize.
 */
static int t_seq;   /* event counter (atomic) */

typedef struct seq_state {
    int n_chunks;
    int next;          /* atomic */
    int open_seq;
} seq_state;

static int seq_open(ex_op *op, ex_query *q, pa_err *err)
{
    seq_state *s = op->state;
    s->open_seq = __atomic_add_fetch(&t_seq, 1, __ATOMIC_SEQ_CST);
    return PA_OK;
}

static int seq_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    seq_state *s = op->state;
    int k = __atomic_fetch_add(&s->next, 1, __ATOMIC_RELAXED);
    if (k >= s->n_chunks)
        return PA_OK;
    int32_t host[1000];
    for (int i = 0; i < 1000; i++)
        host[i] = k * 1000 + i;
    dv_chunk *c = NULL;
    int32_t *v = NULL;
    int rc = ex_chunk_new(op, w, 1, &c, err);
    if (rc != PA_OK)
        return rc;
    if ((rc = ex_chunk_alloc(op, c, sizeof host, (void **)&v, err)) != PA_OK ||
        (rc = ex_to_device(op, w, v, host, sizeof host, err)) != PA_OK) {
        dv_chunk_release(c, w->stream);
        return rc;
    }
    c->columns[0] = (pa_column){.type = {PA_TYPE_INTEGER, 0, 0}, .length = 1000, .data = v, .offsets = NULL, .validity = NULL};
    c->length = 1000;
    *out = c;
    return PA_OK;
}

static const ex_op_vt seq_vt = {.kind = EX_OP_SCAN, .source_open = seq_open, .source_next = seq_next};

static inline ex_op *t_seqsrc(ex_plan *p, int n_chunks)
{
    ex_op *op;
    if (ex_op_new(p, &seq_vt, 1, &op, NULL) != PA_OK)
        return NULL;
    pa_type t = {PA_TYPE_INTEGER, 0, 0};
    ex_op_set_column(op, 0, "n", t, NULL);
    seq_state *s = ex_plan_alloc(p, sizeof *s);
    s->n_chunks = n_chunks;
    op->state = s;
    op->est_rows = 1000 * (int64_t)n_chunks;
    snprintf(op->label, sizeof op->label, "SEQSRC");
    return op;
}

typedef struct gate_state {
    int64_t build_rows;   /* atomic */
    bool finalized;
    int final_seq;
} gate_state;

static int gate_sink(ex_op *op, ex_worker *w, void *local, dv_chunk *in, pa_err *err)
{
    gate_state *s = op->state;
    __atomic_add_fetch(&s->build_rows, in->length, __ATOMIC_RELAXED);
    return PA_OK;
}

static int gate_finalize(ex_op *op, ex_query *q, pa_err *err)
{
    gate_state *s = op->state;
    s->final_seq = __atomic_add_fetch(&t_seq, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&s->finalized, true, __ATOMIC_RELEASE);
    return PA_OK;
}

static int gate_execute(ex_op *op, ex_worker *w, void *local, dv_chunk *in, dv_chunk **out, ex_state *st,
                        pa_err *err)
{
    gate_state *s = op->state;
    if (!__atomic_load_n(&s->finalized, __ATOMIC_ACQUIRE))
        return pa_error(err, PA_EINTERNAL, "probe before the build was finalized");
    *out = dv_chunk_retain(in);
    *st = EX_NEED_INPUT;
    return PA_OK;
}

static const ex_op_vt gate_vt = {
    .kind = EX_OP_HASH_JOIN, .sink = gate_sink, .finalize = gate_finalize, .execute = gate_execute};

static inline ex_op *t_gate(ex_plan *p, ex_op *probe, ex_op *build)
{
    ex_op *op;
    if (ex_op_new(p, &gate_vt, probe->n_cols, &op, NULL) != PA_OK)
        return NULL;
    for (int i = 0; i < probe->n_cols; i++)
        ex_op_set_column(op, i, probe->names[i], probe->types[i], NULL);
    op->state = ex_plan_alloc(p, sizeof(gate_state));
    op->child[0] = probe;
    op->child[1] = build;
    op->n_child = 2;
    op->est_rows = probe->est_rows;
    snprintf(op->label, sizeof op->label, "GATE");
    return op;
}

#endif /* EXEC_TESTOPS_H */
