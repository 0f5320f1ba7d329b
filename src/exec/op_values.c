/*
 * op_values.c - VALUES: a source of rows of constants (SELECT without
 * FROM, a scalar's one-row side of a join, a VALUES list). The rows are
 * made as one chunk by whichever worker asks first; every later ask gets
 * the end. With no columns the chunk still has one row, so COUNT(*) over
 * it is 1 and a projection of constants over it gives one row.
 */
#include "exec/expr_int.h"

#include <stdio.h>
#include <string.h>

typedef struct values_state {
    ex_expr **exprs;          /* constants, row by row: rows x n_cols */
    int64_t rows;
    int taken;                /* the rows were handed out (atomic) */
} values_state;

/* The bytes of constant e as a column of its type holds them. */
static const void *value_bytes(const ex_expr *e, uint8_t small[16])
{
    memset(small, 0, 16);
    if (e->is_null)
        return small;
    switch (e->type.id) {
    case PA_TYPE_BOOLEAN: small[0] = e->v.i != 0; return small;
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: {
        int32_t v = (int32_t)e->v.i;
        memcpy(small, &v, 4);
        return small;
    }
    case PA_TYPE_DOUBLE:
    case PA_TYPE_REAL: return &e->v.f;
    case PA_TYPE_INTERVAL: return &e->v.w;
    case PA_TYPE_DECIMAL:
        return e->type.precision > PA_DECIMAL64_MAX_PRECISION ? (const void *)&e->v.w : (const void *)&e->v.i;
    default: return &e->v.i;
    }
}

/* Column c of chunk o: the constants v[0], v[n], v[2n]... of its rows,
 * made on the host and uploaded in stream order. */
static int fill(ex_op *op, ex_worker *w, dv_chunk *o, ex_expr *const *v, int n, int64_t rows, pa_column *c,
                pa_err *err)
{
    const pa_type t = v[0]->type;
    const bool str = pa_type_is_varlen(t.id);
    const size_t wd = str ? 1 : (size_t)pa_type_bytes(t);
    size_t bytes = 0;
    bool nulls = false;
    for (int64_t r = 0; r < rows; r++) {
        const ex_expr *e = v[r * n];
        nulls |= e->is_null;
        bytes += str ? (e->is_null ? 0 : (size_t)e->str_len) : wd;
    }
    if (str && bytes > INT32_MAX)
        return pa_error(err, PA_EUNSUPPORTED, "%s: more than %d bytes of text in a column", op->label, INT32_MAX);
    c->type = t;
    c->length = rows;
    uint8_t *data = pa_malloc(bytes ? bytes : 1), *valid = nulls ? pa_calloc((size_t)(rows + 7) / 8, 1) : NULL;
    int32_t *offs = str ? pa_malloc((size_t)(rows + 1) * sizeof *offs) : NULL;
    int rc = PA_OK;
    if (!data || (nulls && !valid) || (str && !offs)) {
        rc = pa_error(err, PA_ENOMEM, "%s: out of host memory", op->label);
        goto done;
    }
    size_t at = 0;
    if (str)
        offs[0] = 0;
    for (int64_t r = 0; r < rows; r++) {
        const ex_expr *e = v[r * n];
        if (valid && !e->is_null)
            valid[r / 8] |= (uint8_t)(1u << (r % 8));
        if (str) {
            if (!e->is_null && e->str_len)
                memcpy(data + at, e->str, (size_t)e->str_len);
            at += e->is_null ? 0 : (size_t)e->str_len;
            offs[r + 1] = (int32_t)at;
        } else {
            uint8_t small[16];
            memcpy(data + at, value_bytes(e, small), wd);
            at += wd;
        }
    }
    if ((rc = ex_chunk_alloc(op, o, bytes ? bytes : 1, &c->data, err)) != PA_OK ||
        (rc = ex_to_device(op, w, c->data, data, bytes, err)) != PA_OK)
        goto done;
    if (nulls && ((rc = ex_chunk_alloc(op, o, (size_t)(rows + 7) / 8, (void **)&c->validity, err)) != PA_OK ||
                  (rc = ex_to_device(op, w, c->validity, valid, (size_t)(rows + 7) / 8, err)) != PA_OK))
        goto done;
    if (str) {
        if ((rc = ex_chunk_alloc(op, o, (size_t)(rows + 1) * sizeof *offs, (void **)&c->offsets, err)) != PA_OK ||
            (rc = ex_to_device(op, w, c->offsets, offs, (size_t)(rows + 1) * sizeof *offs, err)) != PA_OK)
            goto done;
        pa_column_set_bytes(c, (int64_t)bytes);
    }
done:
    pa_free(data);
    pa_free(valid);
    pa_free(offs);
    return rc;
}

static int values_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    values_state *s = op->state;
    *out = NULL;
    if (__atomic_exchange_n(&s->taken, 1, __ATOMIC_ACQ_REL))
        return PA_OK;
    dv_chunk *o = NULL;
    int rc = ex_chunk_new(op, w, op->n_cols, &o, err);
    for (int c = 0; c < op->n_cols && rc == PA_OK; c++)
        rc = fill(op, w, o, s->exprs + c, op->n_cols, s->rows, &o->columns[c], err);
    if (rc != PA_OK) {
        dv_chunk_release(o, w->stream);   /* after the kernels already enqueued on it */
        return rc;
    }
    o->length = s->rows;
    *out = o;
    return PA_OK;
}

static const ex_op_vt values_vt = {
    .kind = EX_OP_VALUES,
    .source_next = values_next,
};

int ex_values(ex_plan *p, ex_expr *const *exprs, const char *const *names, int n, ex_op **out, pa_err *err)
{
    return ex_values_rows(p, exprs, names, n, 1, out, err);
}

int ex_values_rows(ex_plan *p, ex_expr *const *exprs, const char *const *names, int n, int64_t rows, ex_op **out,
                   pa_err *err)
{
    if (!p || !out || n < 0 || rows < 1 || (n && !exprs) || (n == 0 && rows != 1))
        return pa_error(err, PA_EINVAL, "VALUES: bad arguments");
    for (int64_t i = 0; i < rows * n; i++) {
        if (!exprs[i])   /* a builder failed: its error is already on err */
            return err && err->code ? err->code : pa_error(err, PA_EINVAL, "VALUES: expression %lld missing",
                                                             (long long)i);
        if (exprs[i]->kind != EX__CONST)
            return pa_error(err, PA_EINVAL, "VALUES: expression %lld is not a constant", (long long)i);
        if (!ex__type_eq(exprs[i]->type, exprs[i % n]->type))
            return pa_error(err, PA_EINVAL, "VALUES: row %lld column %lld has another type than row 1's",
                            (long long)(i / n + 1), (long long)(i % n + 1));
    }
    values_state *s = ex_plan_alloc(p, sizeof *s);
    ex_expr **copy = ex_plan_alloc(p, (size_t)(n ? rows * n : 1) * sizeof *copy);
    if (!s || !copy)
        return pa_error(err, PA_ENOMEM, "VALUES: out of memory");
    ex_op *op;
    int rc = ex_op_new(p, &values_vt, n, &op, err);
    if (rc != PA_OK)
        return rc;
    for (int i = 0; i < n; i++) {
        char buf[16];
        const char *nm = names ? names[i] : NULL;
        if (!nm) {
            snprintf(buf, sizeof buf, "col%d", i);
            nm = buf;
        }
        if ((rc = ex_op_set_column(op, i, nm, exprs[i]->type, err)) != PA_OK)
            return rc;
    }
    for (int64_t i = 0; i < rows * n; i++)
        copy[i] = exprs[i];
    memset(s, 0, sizeof *s);
    s->exprs = copy;
    s->rows = rows;
    op->state = s;
    op->est_rows = rows;
    if (rows == 1)
        snprintf(op->label, sizeof op->label, "VALUES %d columns", n);
    else
        snprintf(op->label, sizeof op->label, "VALUES %lld rows of %d columns", (long long)rows, n);
    *out = op;
    return PA_OK;
}
