/*
 * op_rechunk.c - RECHUNK ("dynamic buffering", DESIGN.md rule 7): a
 * streaming op that gathers the small chunks a selective filter leaves into
 * chunks of about target rows before a size-sensitive operator.
 *
 * Per worker it keeps references to pending chunks. A chunk of at least half
 * the target arriving with nothing pending passes through untouched (no
 * copy); otherwise it joins the pending ones, and once they hold target rows
 * or more they are concatenated (kn_concat) into one new chunk. So outputs
 * hold between target/2 and about 2 x target rows, except the last one a
 * worker flushes. The pending list is host bookkeeping (pa_malloc); the
 * chunks' buffers are device memory already accounted by the device pool.
 * VARCHAR columns are sized first: from the host-side byte counts of the
 * inputs when they all have one (pa_column_bytes: the scan, FILTER, sort
 * and RECHUNK set them), else with kn_concat_bytes into pinned memory, all
 * columns behind one ex_pending: until the stream reached the counts,
 * execute answers EX_BLOCKED (flush sets w->blocked) and resumes there.
 */
#include "exec/sched_int.h"

#include <string.h>

typedef struct rc_local {
    dv_chunk **pending;
    int n, cap;
    int64_t rows;
    int64_t *bytes;         /* pinned: kn_concat_bytes' output, one per column */
    ex_pending pend;        /* the counts in bytes */
    bool sizing;            /* counts enqueued for the pending chunks: emit goes on */
    dv_device *dev;
    dv_stream *stream;      /* the worker's: pending chunks are released on it */
    pa_column *srcs;        /* scratch views, cap entries */
} rc_local;

static int64_t target_of(const ex_op *op, const ex_worker *w)
{
    int64_t t = *(const int64_t *)op->state;
    return t > 0 ? t : w->q->chunk_rows > 0 ? w->q->chunk_rows : 1;
}

static int rc_local_init(ex_op *op, ex_worker *w, void **local, pa_err *err)
{
    rc_local *l = pa_calloc(1, sizeof *l);
    if (!l)
        return pa_error(err, PA_ENOMEM, "out of memory in %s: worker state", op->label);
    size_t nb = (size_t)(op->n_cols > 0 ? op->n_cols : 1) * sizeof(int64_t);
    int rc = dv_host_alloc(w->dev, nb, (void **)&l->bytes, err);
    if (rc != PA_OK) {
        pa_free(l);
        return ex_oom(op, rc, err);
    }
    l->dev = w->dev;
    l->stream = w->stream;
    *local = l;
    return PA_OK;
}

/* Drop the pending chunks once the worker's stream reached the work
 * enqueued so far (a concatenation reading them). */
static void drop_pending(rc_local *l)
{
    for (int i = 0; i < l->n; i++)
        dv_chunk_release(l->pending[i], l->stream);
    l->n = 0;
    l->rows = 0;
}

static void rc_local_free(ex_op *op, void *local)
{
    rc_local *l = local;
    drop_pending(l);
    pa_free(l->pending);
    pa_free(l->srcs);
    if (dv_kind_of(l->dev) == DV_KIND_CPU)
        dv_host_free(l->dev, l->bytes);
    else   /* a count may still be on its way (a failed query) */
        dv_host_free_async(l->stream, l->bytes, NULL);
    ex_pending_close(&l->pend);
    pa_free(l);
}

static int add_pending(ex_op *op, rc_local *l, dv_chunk *in, pa_err *err)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 16;
        dv_chunk **p = pa_realloc(l->pending, (size_t)cap * sizeof *p);
        pa_column *s = pa_realloc(l->srcs, (size_t)cap * sizeof *s);
        if (p)
            l->pending = p;
        if (s)
            l->srcs = s;
        if (!p || !s)
            return pa_error(err, PA_ENOMEM, "out of memory in %s: pending chunk list", op->label);
        l->cap = cap;
    }
    l->pending[l->n++] = dv_chunk_retain(in);
    l->rows += in->length;
    return PA_OK;
}

/* l->srcs = column col of every pending chunk; true when one has NULLs. */
static bool views(rc_local *l, int col)
{
    bool nulls = false;
    for (int i = 0; i < l->n; i++) {
        l->srcs[i] = l->pending[i]->columns[col];
        nulls |= l->srcs[i].validity != NULL;
    }
    return nulls;
}

/* The string bytes of every VARCHAR column into l->bytes: added up on the
 * host when every pending chunk's column says its bytes (pa_column_bytes),
 * else counted by a kernel; *any = a kernel was enqueued. */
static int count_bytes(ex_op *op, ex_worker *w, rc_local *l, bool *any, pa_err *err)
{
    *any = false;
    for (int col = 0; col < op->n_cols; col++) {
        if (!pa_type_is_varlen(op->types[col].id))
            continue;
        views(l, col);
        int64_t sum = 0, b;
        int i = 0;
        for (; i < l->n && pa_column_bytes(&l->srcs[i], &b); i++)
            sum += b;
        if (i == l->n) {
            l->bytes[col] = sum;   /* no kernel writes it: the last count was waited for */
            continue;
        }
        int rc = kn_concat_bytes(&w->kn, l->srcs, l->n, &l->bytes[col], err);
        if (rc != PA_OK)
            return rc;
        *any = true;
    }
    return PA_OK;
}

/* One column of the output: size its buffers (strings: from l->bytes),
 * then concatenate. */
static int concat_column(ex_op *op, ex_worker *w, rc_local *l, dv_chunk *c, int col, pa_err *err)
{
    pa_column *d = &c->columns[col];
    bool nulls = views(l, col);
    d->type = op->types[col];
    d->length = l->rows;
    int rc;
    if (pa_type_is_varlen(d->type.id)) {
        size_t bytes = (size_t)l->bytes[col];
        if ((rc = ex_chunk_alloc(op, c, (size_t)(l->rows + 1) * sizeof(int32_t), (void **)&d->offsets, err)) != PA_OK ||
            (rc = ex_chunk_alloc(op, c, bytes ? bytes : 1, &d->data, err)) != PA_OK)
            return rc;
        pa_column_set_bytes(d, (int64_t)bytes);
    } else if ((rc = ex_chunk_alloc(op, c, (size_t)l->rows * (size_t)pa_type_bytes(d->type), &d->data, err)) != PA_OK) {
        return rc;
    }
    if (nulls && (rc = ex_chunk_alloc(op, c, (size_t)(l->rows + 7) / 8, (void **)&d->validity, err)) != PA_OK)
        return rc;
    return kn_concat(&w->kn, l->srcs, l->n, d, err);
}

/* Concatenate the pending chunks into *out (one pending chunk is passed
 * on). *wait: the string sizes are not there yet; call again. */
static int emit(ex_op *op, ex_worker *w, rc_local *l, dv_chunk **out, bool *wait, pa_err *err)
{
    *wait = false;
    if (l->n == 0)
        return PA_OK;
    if (l->n == 1) {
        *out = l->pending[0];
        l->n = 0;
        l->rows = 0;
        return PA_OK;
    }
    int rc;
    if (!l->sizing) {
        bool any;
        if ((rc = count_bytes(op, w, l, &any, err)) != PA_OK)
            return rc;
        l->sizing = any;
    }
    if (l->sizing) {
        bool ready;
        if ((rc = ex_pending_ready(w, &l->pend, &ready, err)) != PA_OK)
            return rc;
        if (!ready) {
            *wait = true;
            return PA_OK;
        }
        l->sizing = false;
    }
    dv_chunk *c;
    if ((rc = ex_chunk_new(op, w, op->n_cols, &c, err)) != PA_OK)
        return rc;
    c->length = l->rows;
    for (int col = 0; col < op->n_cols && rc == PA_OK; col++)
        rc = concat_column(op, w, l, c, col, err);
    if (rc != PA_OK) {
        dv_chunk_release(c, w->stream);   /* after the kernels already enqueued on it */
        return rc;
    }
    drop_pending(l);
    *out = c;
    return PA_OK;
}

static int rc_execute(ex_op *op, ex_worker *w, void *local, dv_chunk *in, dv_chunk **out, ex_state *st,
                      pa_err *err)
{
    rc_local *l = local;
    int64_t target = target_of(op, w);
    int rc;
    bool wait;
    *st = EX_NEED_INPUT;
    if (in->length == 0)
        return PA_OK;
    if (!l->sizing) {   /* else: called again with the input that made us emit */
        if (l->n == 0 && in->length >= (target + 1) / 2) {
            *out = dv_chunk_retain(in);
            return PA_OK;
        }
        if ((rc = add_pending(op, l, in, err)) != PA_OK || l->rows < target)
            return rc;
    }
    if ((rc = emit(op, w, l, out, &wait, err)) == PA_OK && wait)
        *st = EX_BLOCKED;
    return rc;
}

static int rc_flush(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    bool wait;
    int rc = emit(op, w, local, out, &wait, err);
    if (rc == PA_OK && wait)
        w->blocked = true;
    return rc;
}

static const ex_op_vt rechunk_vt = {
    .kind = EX_OP_RECHUNK,
    .local_init = rc_local_init,
    .local_free = rc_local_free,
    .execute = rc_execute,
    .flush = rc_flush,
};

int ex_rechunk(ex_plan *p, ex_op *input, int64_t target_rows, ex_op **out, pa_err *err)
{
    if (!p || !input || input->plan != p || target_rows < 0 || !out)
        return pa_error(err, PA_EINVAL, "ex_rechunk: bad arguments");
    ex_op *op;
    int rc = ex_op_new(p, &rechunk_vt, input->n_cols, &op, err);
    if (rc != PA_OK)
        return rc;
    int64_t *t = ex_plan_alloc(p, sizeof *t);
    if (!t)
        return pa_error(err, PA_ENOMEM, "out of memory building RECHUNK");
    *t = target_rows;
    for (int i = 0; i < input->n_cols; i++) {
        op->names[i] = input->names[i];
        op->types[i] = input->types[i];
    }
    op->state = t;
    op->child[0] = input;
    op->n_child = 1;
    op->est_rows = input->est_rows;
    if (target_rows > 0)
        snprintf(op->label, sizeof op->label, "RECHUNK %lld rows", (long long)target_rows);
    *out = op;
    return PA_OK;
}
