/*
 * op_values.c - VALUES: a source of one row of constants (SELECT without
 * FROM, a scalar's one-row side of a join). The row is made as one chunk
 * by whichever worker asks first; every later ask gets the end. With no
 * columns the chunk still has one row, so COUNT(*) over it is 1 and a
 * projection of constants over it gives one row.
 */
#include "exec/expr_int.h"

#include <stdio.h>
#include <string.h>

typedef struct values_state {
    ex_expr **exprs;          /* constants, one per output column */
    int taken;                /* the row was handed out (atomic) */
} values_state;

/* Column c of chunk o: one row holding constant e (NULL: a cleared bit).
 * The bytes are made on the host and uploaded in stream order. */
static int fill(ex_op *op, ex_worker *w, dv_chunk *o, const ex_expr *e, pa_column *c, pa_err *err)
{
    int rc;
    c->type = e->type;
    c->length = 1;
    size_t wd = e->type.id == PA_TYPE_VARCHAR ? (size_t)e->str_len : (size_t)pa_type_bytes(e->type);
    uint8_t small[16] = {0};
    const void *val = small;
    if ((rc = ex_chunk_alloc(op, o, wd ? wd : 1, &c->data, err)) != PA_OK)
        return rc;
    if (e->is_null) {
        static const uint8_t cleared = 0;
        if ((rc = ex_chunk_alloc(op, o, 1, (void **)&c->validity, err)) != PA_OK ||
            (rc = ex_to_device(op, w, c->validity, &cleared, 1, err)) != PA_OK)
            return rc;
    }
    if (e->type.id == PA_TYPE_VARCHAR) {
        int32_t offs[2] = {0, e->is_null ? 0 : e->str_len};
        if ((rc = ex_chunk_alloc(op, o, sizeof offs, (void **)&c->offsets, err)) != PA_OK ||
            (rc = ex_to_device(op, w, c->offsets, offs, sizeof offs, err)) != PA_OK)
            return rc;
        return e->is_null ? PA_OK : ex_to_device(op, w, c->data, e->str, wd, err);
    }
    if (!e->is_null) {
        switch (e->type.id) {
        case PA_TYPE_BOOLEAN: small[0] = e->v.i != 0; break;
        case PA_TYPE_INTEGER:
        case PA_TYPE_DATE: { int32_t v = (int32_t)e->v.i; memcpy(small, &v, 4); } break;
        case PA_TYPE_DOUBLE: val = &e->v.f; break;
        case PA_TYPE_DECIMAL: val = e->type.precision > PA_DECIMAL64_MAX_PRECISION ? (const void *)&e->v.w : (const void *)&e->v.i; break;
        default: val = &e->v.i; break;
        }
    }
    return ex_to_device(op, w, c->data, val, wd, err);
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
        rc = fill(op, w, o, s->exprs[c], &o->columns[c], err);
    if (rc != PA_OK) {
        dv_chunk_release(o, w->stream);   /* after the kernels already enqueued on it */
        return rc;
    }
    o->length = 1;
    *out = o;
    return PA_OK;
}

static const ex_op_vt values_vt = {
    .kind = EX_OP_VALUES,
    .source_next = values_next,
};

int ex_values(ex_plan *p, ex_expr *const *exprs, const char *const *names, int n, ex_op **out, pa_err *err)
{
    if (!p || !out || n < 0 || (n && !exprs))
        return pa_error(err, PA_EINVAL, "VALUES: bad arguments");
    for (int i = 0; i < n; i++) {
        if (!exprs[i])   /* a builder failed: its error is already on err */
            return err && err->code ? err->code : pa_error(err, PA_EINVAL, "VALUES: expression %d missing", i);
        if (exprs[i]->kind != EX__CONST)
            return pa_error(err, PA_EINVAL, "VALUES: expression %d is not a constant", i);
    }
    values_state *s = ex_plan_alloc(p, sizeof *s);
    ex_expr **copy = ex_plan_alloc(p, (size_t)(n ? n : 1) * sizeof *copy);
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
        copy[i] = exprs[i];
    }
    s->exprs = copy;
    op->state = s;
    op->est_rows = 1;
    snprintf(op->label, sizeof op->label, "VALUES %d columns", n);
    *out = op;
    return PA_OK;
}
