/*
 * op_limit.c - LIMIT/OFFSET, streaming. Workers share one atomic row
 * counter: each input chunk reserves the next range of positions
 * [start, start + rows) and passes on the part of it inside
 * [offset, offset + limit), so the rows passed add up to exactly the limit
 * whatever the number of workers. A worker whose range reaches the end
 * returns EX_FINISHED so its pipeline stops reading.
 * The output views the input's buffers (dv_chunk_depend); only a validity
 * bitmap cut at a bit offset that is not a multiple of 8 is copied, by a
 * kernel on the worker's stream (kn_copy_bits), since the bits live in
 * device memory.
 */
#include "exec/exec_int.h"

#include <stdio.h>
#include <string.h>

typedef struct limit_state {
    int64_t limit, offset;
    int64_t seen;           /* rows reserved so far (atomic) */
} limit_state;

/* A chunk viewing rows [lo, hi) of in. */
static int slice(ex_op *op, ex_worker *w, dv_chunk *in, int64_t lo, int64_t hi, dv_chunk **out, pa_err *err)
{
    dv_chunk *c = NULL;
    int64_t n = hi - lo;
    int rc = ex_chunk_new(op, w, in->n_columns, &c, err);
    if (rc != PA_OK)
        return rc;
    PA_TRY(rc = dv_chunk_depend(c, in, err));
    for (int j = 0; j < in->n_columns; j++) {
        const pa_column *s = &in->columns[j];
        pa_column *d = &c->columns[j];
        *d = *s;
        d->length = n;
        if (pa_type_is_varlen(s->type.id))
            d->offsets = s->offsets + lo;   /* offsets are absolute into the same bytes */
        else
            d->data = (uint8_t *)s->data + (size_t)lo * (size_t)pa_type_bytes(s->type);
        if (!s->validity)
            continue;
        if (lo % 8 == 0) {
            d->validity = s->validity + lo / 8;
            continue;
        }
        PA_TRY(rc = ex_chunk_alloc(op, c, (size_t)(n + 7) / 8, (void **)&d->validity, err));
        PA_TRY(rc = kn_copy_bits(&w->kn, s->validity, lo, n, d->validity, err));
    }
    c->length = n;
    *out = c;
    return PA_OK;
fail:
    dv_chunk_release(c, w->stream);   /* after the kernels already enqueued on it */
    return rc;
}

static int limit_execute(ex_op *op, ex_worker *w, void *local, dv_chunk *in, dv_chunk **out, ex_state *st,
                         pa_err *err)
{
    limit_state *s = op->state;
    int64_t end_pos = s->limit > INT64_MAX - s->offset ? INT64_MAX : s->offset + s->limit;
    int64_t len = in->length;
    *out = NULL;
    *st = EX_NEED_INPUT;
    int64_t start = __atomic_fetch_add(&s->seen, len, __ATOMIC_RELAXED);
    if (start >= end_pos || start > INT64_MAX - len) {
        *st = EX_FINISHED;
        return PA_OK;
    }
    int64_t lo = s->offset > start ? s->offset - start : 0;
    int64_t hi = end_pos - start < len ? end_pos - start : len;
    if (start + len >= end_pos)
        *st = EX_FINISHED;
    if (hi <= lo)
        return PA_OK;
    if (lo == 0 && hi == len) {
        *out = dv_chunk_retain(in);
        return PA_OK;
    }
    return slice(op, w, in, lo, hi, out, err);
}

static const ex_op_vt limit_vt = {
    .kind = EX_OP_LIMIT,
    .execute = limit_execute,
};

int ex_limit(ex_plan *p, ex_op *input, int64_t limit, int64_t offset, ex_op **out, pa_err *err)
{
    if (!p || !input || !out)
        return pa_error(err, PA_EINVAL, "LIMIT: bad arguments");
    if (limit < 0 || offset < 0)
        return pa_error(err, PA_EINVAL, "LIMIT: negative limit or offset");
    limit_state *s = ex_plan_alloc(p, sizeof *s);
    if (!s)
        return pa_error(err, PA_ENOMEM, "LIMIT: out of memory");
    ex_op *op;
    int rc = ex_op_new(p, &limit_vt, input->n_cols, &op, err);
    if (rc != PA_OK)
        return rc;
    for (int i = 0; i < input->n_cols; i++)
        if ((rc = ex_op_set_column(op, i, input->names[i], input->types[i], err)) != PA_OK)
            return rc;
    memset(s, 0, sizeof *s);
    s->limit = limit;
    s->offset = offset;
    op->state = s;
    op->child[0] = input;
    op->n_child = 1;
    op->est_rows = limit;
    if (offset)
        snprintf(op->label, sizeof op->label, "LIMIT %lld OFFSET %lld", (long long)limit, (long long)offset);
    else
        snprintf(op->label, sizeof op->label, "LIMIT %lld", (long long)limit);
    *out = op;
    return PA_OK;
}
