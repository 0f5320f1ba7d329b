/*
 * op_rows.c - ROWS: the chunks of an ex_result as a source (a WITH query
 * evaluated once and read by several references). Any worker takes the next
 * chunk index atomically; the chunk it hands out views the result's buffers
 * (dv_chunk_depend keeps a reference), so nothing is copied and the result
 * is never written.
 */
#include "exec/exec_int.h"

#include <stdio.h>
#include <string.h>

typedef struct rows_state {
    const ex_result *r;
    int next;                 /* next chunk index (atomic) */
} rows_state;

static int rows_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    rows_state *s = op->state;
    *out = NULL;
    for (;;) {
        int i = __atomic_fetch_add(&s->next, 1, __ATOMIC_ACQ_REL);
        if (i >= s->r->n_chunks)
            return PA_OK;
        dv_chunk *src = s->r->chunks[i];
        if (src->length == 0)
            continue;
        dv_chunk *o = NULL;
        int rc = ex_chunk_new(op, w, op->n_cols, &o, err);
        if (rc == PA_OK)
            rc = dv_chunk_depend(o, src, err);
        if (rc != PA_OK) {
            dv_chunk_destroy(o);
            return rc;
        }
        memcpy(o->columns, src->columns, (size_t)op->n_cols * sizeof *o->columns);
        o->length = src->length;
        *out = o;
        return PA_OK;
    }
}

static const ex_op_vt rows_vt = {
    .kind = EX_OP_ROWS,
    .source_next = rows_next,
};

int ex_rows(ex_plan *p, const ex_result *r, ex_op **out, pa_err *err)
{
    if (!p || !r || !out)
        return pa_error(err, PA_EINVAL, "ROWS: bad arguments");
    for (int i = 0; i < r->n_chunks; i++)
        if (r->chunks[i]->n_columns != r->n_columns)
            return pa_error(err, PA_EINVAL, "ROWS: chunk %d has %d columns, the result %d", i,
                            r->chunks[i]->n_columns, r->n_columns);
    rows_state *s = ex_plan_alloc(p, sizeof *s);
    if (!s)
        return pa_error(err, PA_ENOMEM, "ROWS: out of memory");
    ex_op *op;
    int rc = ex_op_new(p, &rows_vt, r->n_columns, &op, err);
    if (rc != PA_OK)
        return rc;
    for (int i = 0; i < r->n_columns; i++)
        if ((rc = ex_op_set_column(op, i, r->names[i], r->types[i], err)) != PA_OK)
            return rc;
    s->r = r;
    op->state = s;
    op->est_rows = r->n_rows;
    snprintf(op->label, sizeof op->label, "ROWS %lld (a WITH query's result)", (long long)r->n_rows);
    *out = op;
    return PA_OK;
}
