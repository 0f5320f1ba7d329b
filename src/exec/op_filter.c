/*
 * op_filter.c - FILTER, streaming: the rows of each chunk for which the
 * predicate is TRUE.
 *
 * The predicate is compiled once (at build) into a kernel program; per
 * chunk, kn_filter evaluates it batch by batch straight into a selection
 * (no BOOLEAN column is materialised) and writes the count to pinned memory.
 * When every row passed, the input goes on as is (a new reference, no
 * copy); when none did, nothing is emitted; otherwise kn_gather compacts
 * every column into a new chunk (strings: their byte counts first, also
 * through pinned memory). A constant predicate skips the kernels entirely.
 *
 * Sizes in pinned memory are read once the worker's stream reached them
 * (ex_pending: on the cpu device at once; elsewhere behind an event the
 * worker parks on while the operator answers EX_BLOCKED), and the operator
 * resumes where it stopped.
 */
#include "exec/expr_int.h"

#include <stdio.h>
#include <string.h>

typedef struct filter_state {
    kn_program *prog;
    int constant;            /* 1: always TRUE, 0: never, -1: evaluate */
} filter_state;

typedef enum { PH_START, PH_TEXT, PH_COUNT, PH_BYTES } phase;

typedef struct filter_local {
    void *scratch;
    size_t scratch_size;
    int32_t *sel;
    size_t sel_cap;          /* rows */
    int64_t *pinned;         /* [0] count, [1 + j] bytes of column j, [1 + n_cols] the text area */
    int n_pinned;
    ex_pending pend;         /* the sizes in pinned */
    dv_device *dev;
    phase ph;
    ex_text_area text;       /* the predicate's string functions' (upper(x) = 'A') */
} filter_local;

static void filter_local_free(ex_op *op, void *local);

static int filter_local_init(ex_op *op, ex_worker *w, void **local, pa_err *err)
{
    filter_state *s = op->state;
    filter_local *l = pa_calloc(1, sizeof *l);
    if (!l)
        return pa_error(err, PA_ENOMEM, "out of memory in %s", op->label);
    int rc;
    l->dev = w->dev;
    if (s->constant < 0) {
        l->scratch_size = kn_eval_scratch_size(s->prog);
        PA_TRY(rc = ex_alloc(op, l->scratch_size, &l->scratch, err));
    }
    l->n_pinned = 2 + op->n_cols;
    if ((rc = dv_host_alloc(w->dev, (size_t)l->n_pinned * sizeof(int64_t), (void **)&l->pinned, err)) != PA_OK) {
        rc = ex_oom(op, rc, err);
        goto fail;
    }
    *local = l;
    return PA_OK;
fail:
    filter_local_free(op, l);
    return rc;
}

static void filter_local_free(ex_op *op, void *local)
{
    filter_local *l = local;
    if (!l)
        return;
    ex_free(op, l->scratch, l->scratch_size);
    ex_free(op, l->sel, l->sel_cap * sizeof(int32_t));
    ex_text_area_free(op, &l->text);
    if (l->pinned)
        dv_host_free(l->dev, l->pinned);
    ex_pending_close(&l->pend);
    pa_free(l);
}

/* Compact the l->pinned[0] selected rows of in into a new chunk. */
static int compact(ex_op *op, ex_worker *w, filter_local *l, dv_chunk *in, dv_chunk **out, pa_err *err)
{
    int64_t k = l->pinned[0];
    dv_chunk *c = NULL;
    int rc = ex_chunk_new(op, w, in->n_columns, &c, err);
    if (rc != PA_OK)
        return rc;
    for (int j = 0; j < in->n_columns; j++) {
        const pa_column *s = &in->columns[j];
        pa_column *d = &c->columns[j];
        d->type = s->type;
        d->length = k;
        size_t bytes = pa_type_is_varlen(s->type.id) ? (size_t)l->pinned[1 + j] : (size_t)k * pa_type_bytes(s->type);
        PA_TRY(rc = ex_chunk_alloc(op, c, bytes ? bytes : 1, &d->data, err));
        if (pa_type_is_varlen(s->type.id)) {
            PA_TRY(rc = ex_chunk_alloc(op, c, (size_t)(k + 1) * sizeof(int32_t), (void **)&d->offsets, err));
            PA_TRY(rc = ex_zero_offset(op, w, d->offsets, err));
            pa_column_set_bytes(d, (int64_t)bytes);   /* the gather fills exactly these */
        }
        if (s->validity)
            PA_TRY(rc = ex_chunk_alloc(op, c, (size_t)(k + 7) / 8, (void **)&d->validity, err));
        PA_TRY(rc = kn_gather(&w->kn, s, l->sel, 0, k, d, 0, err));
    }
    c->length = k;
    *out = c;
    return PA_OK;
fail:
    dv_chunk_release(c, w->stream);   /* after the kernels already enqueued on it */
    return rc;
}

static int filter_execute(ex_op *op, ex_worker *w, void *local, dv_chunk *in, dv_chunk **out, ex_state *st,
                          pa_err *err)
{
    filter_state *s = op->state;
    filter_local *l = local;
    const int64_t rows = in->length;
    int rc;
    bool ready;
    *out = NULL;
    *st = EX_NEED_INPUT;
    if (rows == 0 || s->constant == 0)
        return PA_OK;
    if (s->constant == 1) {
        *out = dv_chunk_retain(in);
        return PA_OK;
    }
    switch (l->ph) {
    case PH_START:
        if ((size_t)rows > l->sel_cap) {
            ex_free(op, l->sel, l->sel_cap * sizeof(int32_t));
            l->sel = NULL;
            l->sel_cap = 0;
            size_t cap = (size_t)rows + (size_t)rows / 4;
            if ((rc = ex_alloc(op, cap * sizeof(int32_t), (void **)&l->sel, err)) != PA_OK)
                return rc;
            l->sel_cap = cap;
        }
        if (s->prog->n_text > 0 && !dv_host_visible(w->dev)) {   /* the text area's size, behind an event */
            if ((rc = kn_eval_str_bytes(&w->kn, s->prog, KN_EVAL_TEXT_AREA, in->columns, in->n_columns, rows,
                                        &l->pinned[l->n_pinned - 1], err)) != PA_OK)
                return rc;
        }
        l->ph = PH_TEXT;
        /* fall through */
    case PH_TEXT: {
        int64_t text = 0;
        if (s->prog->n_text > 0 && !dv_host_visible(w->dev)) {
            if ((rc = ex_pending_ready(w, &l->pend, &ready, err)) != PA_OK)
                return rc;
            if (!ready) {
                *st = EX_BLOCKED;
                return PA_OK;
            }
            text = l->pinned[l->n_pinned - 1];
        } else if (s->prog->n_text > 0) {
            text = kn_eval_str_bound(s->prog, KN_EVAL_TEXT_AREA, in->columns, in->n_columns, rows);
        }
        if ((rc = ex_text_area_reserve(op, &l->text, text, err)) != PA_OK) {
            l->ph = PH_START;
            return rc;
        }
        rc = kn_filter(&w->kn, s->prog, in->columns, in->n_columns, rows, l->sel, &l->pinned[0], l->scratch,
                       text ? l->text.p : NULL, text, err);
        if (rc != PA_OK)
            return rc;
        l->ph = PH_COUNT;
    }
        /* fall through */
    case PH_COUNT:
        if ((rc = ex_pending_ready(w, &l->pend, &ready, err)) != PA_OK)
            return rc;
        if (!ready) {
            *st = EX_BLOCKED;
            return PA_OK;
        }
        if (l->pinned[0] == rows || l->pinned[0] == 0) {
            l->ph = PH_START;
            if (l->pinned[0] == rows)
                *out = dv_chunk_retain(in);
            return PA_OK;
        }
        for (int j = 0; j < in->n_columns; j++)
            if (pa_type_is_varlen(in->columns[j].type.id) &&
                (rc = kn_gather_str_bytes(&w->kn, &in->columns[j], l->sel, 0, l->pinned[0], &l->pinned[1 + j],
                                          err)) != PA_OK)
                return rc;
        l->ph = PH_BYTES;
        /* fall through */
    case PH_BYTES:
        if ((rc = ex_pending_ready(w, &l->pend, &ready, err)) != PA_OK)
            return rc;
        if (!ready) {
            *st = EX_BLOCKED;
            return PA_OK;
        }
        l->ph = PH_START;
        return compact(op, w, l, in, out, err);
    }
    return PA_OK;
}

static const ex_op_vt filter_vt = {
    .kind = EX_OP_FILTER,
    .local_init = filter_local_init,
    .local_free = filter_local_free,
    .execute = filter_execute,
};

int ex_filter(ex_plan *p, ex_op *input, ex_expr *pred, ex_op **out, pa_err *err)
{
    if (!p || !input || !out)
        return pa_error(err, PA_EINVAL, "FILTER: bad arguments");
    if (!pred)   /* a builder failed: its error is already on err */
        return err && err->code ? err->code : pa_error(err, PA_EINVAL, "FILTER: no predicate");
    if (pred->type.id != PA_TYPE_BOOLEAN)
        return pa_error(err, PA_EINVAL, "FILTER: the predicate is %s, not BOOLEAN", pa_type_name(pred->type.id));
    filter_state *s = ex_plan_alloc(p, sizeof *s);
    if (!s)
        return pa_error(err, PA_ENOMEM, "FILTER: out of memory");
    memset(s, 0, sizeof *s);
    int rc;
    if (pred->kind == EX__CONST) {
        s->constant = !pred->is_null && pred->v.i != 0;
    } else {
        s->constant = -1;
        if ((rc = ex__compile_plan(p, &pred, 1, input, &s->prog, err)) != PA_OK)
            return rc;
    }
    ex_op *op;
    if ((rc = ex_op_new(p, &filter_vt, input->n_cols, &op, err)) != PA_OK)
        return rc;
    for (int i = 0; i < input->n_cols; i++)
        if ((rc = ex_op_set_column(op, i, input->names[i], input->types[i], err)) != PA_OK)
            return rc;
    op->state = s;
    op->child[0] = input;
    op->n_child = 1;
    op->est_rows = input->est_rows < 0 ? -1 : input->est_rows / 2;
    *out = op;
    return PA_OK;
}
