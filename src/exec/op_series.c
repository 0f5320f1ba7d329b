/*
 * op_series.c - SERIES: generate_series and range as a source. Chunk k
 * holds the values k * chunk_rows onwards; a worker takes the next k
 * atomically and kn_sequence writes the values on the device, so nothing
 * is made row by row on the host and a series of any length streams in
 * bounded memory.
 */
#include "exec/exec_int.h"

#include <stdio.h>
#include <string.h>

typedef struct series_state {
    int64_t start, step, count;
    int64_t next;             /* next chunk index (atomic) */
} series_state;

static int series_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    series_state *s = op->state;
    *out = NULL;
    const int64_t per = w->q && w->q->chunk_rows > 0 ? w->q->chunk_rows : (int64_t)1 << 20;
    int64_t k = __atomic_fetch_add(&s->next, 1, __ATOMIC_ACQ_REL);
    if (k >= (s->count + per - 1) / per)
        return PA_OK;
    int64_t at = k * per, n = s->count - at < per ? s->count - at : per;
    dv_chunk *o = NULL;
    pa_column *c = NULL;
    int rc = ex_chunk_new(op, w, 1, &o, err);
    if (rc == PA_OK) {
        c = &o->columns[0];
        *c = (pa_column){.type = {PA_TYPE_BIGINT, 0, 0}, .length = n};
        rc = ex_chunk_alloc(op, o, (size_t)n * sizeof(int64_t), &c->data, err);
    }
    if (rc == PA_OK)   /* in uint64: wraps instead of overflowing, the values themselves fit */
        rc = kn_sequence(&w->kn, (int64_t)((uint64_t)s->start + (uint64_t)at * (uint64_t)s->step), s->step, n,
                         c->data, err);
    if (rc != PA_OK) {
        dv_chunk_release(o, w->stream);   /* after the kernels already enqueued on it */
        return rc;
    }
    o->length = n;
    *out = o;
    return PA_OK;
}

static const ex_op_vt series_vt = {
    .kind = EX_OP_SERIES,
    .source_next = series_next,
};

int ex_series(ex_plan *p, int64_t start, int64_t step, int64_t count, const char *name, ex_op **out, pa_err *err)
{
    if (!p || !out || step == 0 || count < 0)
        return pa_error(err, PA_EINVAL, "SERIES: bad arguments");
    series_state *s = ex_plan_alloc(p, sizeof *s);
    if (!s)
        return pa_error(err, PA_ENOMEM, "SERIES: out of memory");
    ex_op *op;
    int rc = ex_op_new(p, &series_vt, 1, &op, err);
    if (rc == PA_OK)
        rc = ex_op_set_column(op, 0, name ? name : "generate_series", (pa_type){PA_TYPE_BIGINT, 0, 0}, err);
    if (rc != PA_OK)
        return rc;
    *s = (series_state){.start = start, .step = step, .count = count};
    op->state = s;
    op->est_rows = count;
    snprintf(op->label, sizeof op->label, "SERIES %lld rows from %lld by %lld", (long long)count, (long long)start,
             (long long)step);
    *out = op;
    return PA_OK;
}
