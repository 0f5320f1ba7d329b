/*
 * exec_testops.h - operators written for the framework's tests only, built
 * on the operator contract (exec_int.h), independent of the real operator
 * slices:
 *   SPLIT    streaming: copies each input into slices of 1..max rows
 *            (row by row, with EX_HAVE_OUTPUT), so RECHUNK gets tiny chunks;
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

/* ---------------------------------------------------------------- SPLIT */

typedef struct split_local {
    int64_t pos;      /* next row of the current input */
    uint32_t rng;
} split_local;

static int split_init(ex_op *op, ex_worker *w, void **local, pa_err *err)
{
    split_local *l = pa_calloc(1, sizeof *l);
    if (!l)
        return pa_error(err, PA_ENOMEM, "split local");
    l->rng = 12345u + (uint32_t)w->id * 7919u;
    *local = l;
    return PA_OK;
}

static void split_free(ex_op *op, void *local) { pa_free(local); }

static void set_bit(uint8_t *v, int64_t i, bool on)
{
    if (on)
        v[i >> 3] |= (uint8_t)(1u << (i & 7));
    else
        v[i >> 3] &= (uint8_t)~(1u << (i & 7));
}

static int split_execute(ex_op *op, ex_worker *w, void *local, dv_chunk *in, dv_chunk **out, ex_state *st,
                         pa_err *err)
{
    split_local *l = local;
    int max = *(int *)op->state;
    l->rng = l->rng * 1103515245u + 12345u;
    int64_t n = 1 + (int64_t)((l->rng >> 16) % (uint32_t)max);
    if (n > in->length - l->pos)
        n = in->length - l->pos;
    dv_chunk *c = NULL;
    int rc = ex_chunk_new(op, w, in->n_columns, &c, err);
    if (rc != PA_OK)
        return rc;
    c->length = n;
    for (int k = 0; k < in->n_columns && rc == PA_OK; k++) {
        const pa_column *s = &in->columns[k];
        pa_column *d = &c->columns[k];
        d->type = s->type;
        d->length = n;
        if (s->validity) {
            if ((rc = ex_chunk_alloc(op, c, (size_t)(n + 7) / 8, (void **)&d->validity, err)) != PA_OK)
                break;
            for (int64_t i = 0; i < n; i++)
                set_bit(d->validity, i, pa_column_valid(s, l->pos + i));
        }
        if (s->type.id == PA_TYPE_VARCHAR) {
            int32_t b0 = s->offsets[l->pos], b1 = s->offsets[l->pos + n];
            if ((rc = ex_chunk_alloc(op, c, (size_t)(n + 1) * 4, (void **)&d->offsets, err)) != PA_OK ||
                (rc = ex_chunk_alloc(op, c, (size_t)(b1 - b0) + 1, &d->data, err)) != PA_OK)
                break;
            for (int64_t i = 0; i <= n; i++)
                d->offsets[i] = s->offsets[l->pos + i] - b0;
            memcpy(d->data, (const char *)s->data + b0, (size_t)(b1 - b0));
        } else {
            size_t wd = (size_t)pa_type_bytes(s->type);
            if ((rc = ex_chunk_alloc(op, c, n * wd, &d->data, err)) != PA_OK)
                break;
            memcpy(d->data, (const char *)s->data + (size_t)l->pos * wd, n * wd);
        }
    }
    if (rc != PA_OK) {
        dv_chunk_destroy(c);
        return rc;
    }
    l->pos += n;
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

/* -------------------------------------------------------------- TESTAGG */

typedef struct agg_state {
    pthread_mutex_t mu;
    int64_t count, sum;
    bool finalized, opened, emitted;
    size_t state_bytes;
    void *mem;
} agg_state;

typedef struct agg_local {
    int64_t count, sum;
} agg_local;

static int agg_init(ex_op *op, ex_worker *w, void **local, pa_err *err)
{
    if (w->role != EX_ROLE_SINK)
        return PA_OK;   /* no local state as a source */
    agg_local *l = pa_calloc(1, sizeof *l);
    if (!l)
        return pa_error(err, PA_ENOMEM, "agg local");
    *local = l;
    return PA_OK;
}

static void agg_free(ex_op *op, void *local) { pa_free(local); }

static int agg_sink(ex_op *op, ex_worker *w, void *local, dv_chunk *in, pa_err *err)
{
    agg_local *l = local;
    if (!l || w->role != EX_ROLE_SINK)
        return pa_error(err, PA_EINTERNAL, "sink without its local state");
    const pa_column *c = &in->columns[0];
    for (int64_t i = 0; i < in->length; i++) {
        l->count++;
        if (!pa_column_valid(c, i))
            continue;
        l->sum += c->type.id == PA_TYPE_INTEGER || c->type.id == PA_TYPE_DATE ? ((const int32_t *)c->data)[i]
                                                                              : ((const int64_t *)c->data)[i];
    }
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
    if (rc != PA_OK) {
        dv_chunk_destroy(c);
        return rc;
    }
    *v[0] = s->count;
    *v[1] = s->sum;
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
    dv_chunk *c = NULL;
    int32_t *v = NULL;
    int rc = ex_chunk_new(op, w, 1, &c, err);
    if (rc == PA_OK && (rc = ex_chunk_alloc(op, c, 4000, (void **)&v, err)) != PA_OK)
        dv_chunk_destroy(c);
    if (rc != PA_OK)
        return rc;
    for (int i = 0; i < 1000; i++)
        v[i] = k * 1000 + i;
    c->columns[0] = (pa_column){{PA_TYPE_INTEGER, 0, 0}, 1000, v, NULL, NULL};
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
