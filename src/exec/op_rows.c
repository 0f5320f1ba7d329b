/*
 * op_rows.c - ROWS: the chunks of an ex_result as a source (a WITH query
 * evaluated once and read by several references). Any worker takes the next
 * chunk index atomically. When the result's chunks are device memory (a
 * host-visible device, or a result kept on the device: keep_on_device) the
 * chunk it hands out views the result's buffers (dv_chunk_depend keeps a
 * reference), so nothing is copied; a result in host memory the device
 * cannot use goes up chunk by chunk, buffer by buffer, in the order of the
 * worker's stream. The result is never written.
 */
#include "exec/exec_int.h"

#include <stdio.h>
#include <string.h>

typedef struct rows_state {
    const ex_result *r;
    int next;                 /* next chunk index (atomic) */
} rows_state;

/* Device buffer *dst of chunk o with the n bytes of host memory at src,
 * copied in stream order (the result outlives the run, so src may be read
 * whenever the stream gets there). */
static int put(ex_op *op, ex_worker *w, dv_chunk *o, void **dst, const void *src, size_t n, pa_err *err)
{
    int rc = ex_chunk_alloc(op, o, n ? n : 1, dst, err);
    if (rc == PA_OK && n)
        rc = dv_copy_async(w->stream, *dst, src, n, DV_COPY_H2D, err);
    return rc;
}

/* Column d of o: a device copy of the result's host column h. */
static int upload(ex_op *op, ex_worker *w, dv_chunk *o, const pa_column *h, pa_column *d, pa_err *err)
{
    int64_t n = h->length;
    int rc;
    *d = (pa_column){.type = h->type, .length = n};
    if (h->validity && (rc = put(op, w, o, (void **)&d->validity, h->validity, (size_t)(n + 7) / 8, err)) != PA_OK)
        return rc;
    if (!pa_type_is_varlen(h->type.id))
        return put(op, w, o, &d->data, h->data, (size_t)n * (size_t)pa_type_bytes(h->type), err);
    if ((rc = put(op, w, o, (void **)&d->offsets, h->offsets, (size_t)(n + 1) * sizeof(int32_t), err)) != PA_OK)
        return rc;
    if (h->offsets[0] == 0)
        pa_column_set_bytes(d, h->offsets[n]);
    return put(op, w, o, &d->data, h->data, (size_t)h->offsets[n], err);   /* offsets index from byte 0 */
}

int ex__chunk_upload(ex_op *op, ex_worker *w, const dv_chunk *h, dv_chunk **out, pa_err *err)
{
    dv_chunk *o = NULL;
    int rc = ex_chunk_new(op, w, op->n_cols, &o, err);
    for (int j = 0; rc == PA_OK && j < op->n_cols; j++)
        rc = upload(op, w, o, &h->columns[j], &o->columns[j], err);
    if (rc != PA_OK) {
        dv_chunk_release(o, w->stream);   /* after the copies already enqueued on it */
        return rc;
    }
    o->length = h->length;
    *out = o;
    return PA_OK;
}

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
        if (!dv_host_visible(w->dev) && !s->r->on_device)
            return ex__chunk_upload(op, w, src, out, err);
        dv_chunk *o = NULL;
        int rc = ex_chunk_new(op, w, op->n_cols, &o, err);
        if (rc == PA_OK && (rc = dv_chunk_depend(o, src, err)) == PA_OK)
            memcpy(o->columns, src->columns, (size_t)op->n_cols * sizeof *o->columns);
        if (rc != PA_OK) {
            dv_chunk_release(o, w->stream);
            return rc;
        }
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
