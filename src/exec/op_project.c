/*
 * op_project.c - PROJECT, streaming: one output column per expression.
 *
 * Plain column references are passed through: the output chunk views the
 * input's buffers (dv_chunk_depend), nothing is copied. All the other
 * expressions are compiled at build into ONE kernel program with one output
 * each, so subexpressions they share (Q1's price * (1 - discount)) are
 * computed once per row; kn_eval writes them into new buffers of the output
 * chunk. A list too wide for one program's registers (hundreds of computed
 * columns) is split into consecutive runs of outputs, one program each, run
 * one after the other. VARCHAR results are sized with kn_eval_str_bound
 * (from the input's offsets), and so is the text area of string functions
 * that make new text (upper, ||, lpad...: one area, grown to the largest
 * chunk's need); a validity bitmap is given only to outputs that may be
 * NULL.
 */
#include "exec/expr_int.h"

#include <stdio.h>
#include <string.h>

typedef struct project_state {
    int n;                   /* output columns */
    int *src;                /* per output: input column passed through, or -1 */
    int *prog_out;           /* per output: index among the computed outputs, or -1 */
    int n_prog;              /* computed outputs */
    int n_progs;             /* programs: 0 when every output is a pass-through */
    kn_program **progs;
    int *first;              /* progs[g] computes outputs [first[g], first[g + 1]) */
    kn_program *prog;        /* progs[0], or NULL */
} project_state;

/* The program of computed output j, and j's index among its outputs. */
static const kn_program *prog_of(const project_state *s, int j, int *jj)
{
    int g = 0;
    while (j >= s->first[g + 1])
        g++;
    *jj = j - s->first[g];
    return s->progs[g];
}

typedef struct project_local {
    void *scratch;
    size_t scratch_size;
    pa_column *outs;         /* n_prog columns handed to kn_eval */
    int64_t *bytes;          /* pinned, per program output: VARCHAR byte bounds,
                                then per program: its text area (devices the
                                host cannot read) */
    ex_text_area text;       /* for programs with TEXT functions */
    ex_pending pend;
    bool sized;              /* bytes hold this input's bounds */
    dv_device *dev;
} project_local;

static void project_local_free(ex_op *op, void *local)
{
    project_local *l = local;
    if (!l)
        return;
    ex_free(op, l->scratch, l->scratch_size);
    ex_text_area_free(op, &l->text);
    if (l->bytes)
        dv_host_free(l->dev, l->bytes);
    ex_pending_close(&l->pend);
    pa_free(l->outs);
    pa_free(l);
}

static int project_local_init(ex_op *op, ex_worker *w, void **local, pa_err *err)
{
    project_state *s = op->state;
    if (!s->prog)
        return PA_OK;
    project_local *l = pa_calloc(1, sizeof *l);
    int rc;
    if (!l || !(l->outs = pa_calloc((size_t)s->n_prog, sizeof *l->outs))) {
        rc = pa_error(err, PA_ENOMEM, "out of memory in %s", op->label);
        goto fail;
    }
    l->dev = w->dev;
    for (int g = 0; g < s->n_progs; g++)   /* one scratch: the programs run one after the other */
        if (kn_eval_scratch_size(s->progs[g]) > l->scratch_size)
            l->scratch_size = kn_eval_scratch_size(s->progs[g]);
    PA_TRY(rc = ex_alloc(op, l->scratch_size, &l->scratch, err));
    if (!dv_host_visible(w->dev) &&
        (rc = dv_host_alloc(w->dev, (size_t)(s->n_prog + s->n_progs) * sizeof *l->bytes, (void **)&l->bytes,
                            err)) != PA_OK) {
        rc = ex_oom(op, rc, err);
        goto fail;
    }
    *local = l;
    return PA_OK;
fail:
    project_local_free(op, l);
    return rc;
}

/* Where the host cannot read the inputs' offsets, the VARCHAR outputs'
 * byte bounds come from a kernel, read behind one event: *ready once they
 * are in l->bytes. */
static int size_strings(project_state *s, project_local *l, ex_worker *w, dv_chunk *in, bool *ready, pa_err *err)
{
    int rc;
    *ready = true;
    if (!l->bytes || l->sized)
        return PA_OK;
    if (!l->pend.recorded) {
        for (int j = 0; j < s->n_prog; j++) {
            int jj;
            const kn_program *prog = prog_of(s, j, &jj);
            if (pa_type_is_varlen(kn_program_outputs(prog)[jj].type.id) &&
                (rc = kn_eval_str_bytes(&w->kn, prog, jj, in->columns, in->n_columns, in->length, &l->bytes[j],
                                        err)) != PA_OK)
                return rc;
        }
        for (int g = 0; g < s->n_progs; g++)
            if (s->progs[g]->n_text > 0 &&
                (rc = kn_eval_str_bytes(&w->kn, s->progs[g], KN_EVAL_TEXT_AREA, in->columns, in->n_columns,
                                        in->length, &l->bytes[s->n_prog + g], err)) != PA_OK)
                return rc;
    }
    if ((rc = ex_pending_ready(w, &l->pend, ready, err)) == PA_OK && *ready)
        l->sized = true;
    return rc;
}

/* Buffers for program output j over rows rows, in chunk c; bytes: the
 * VARCHAR bounds from size_strings, or NULL (the host reads the offsets). */
static int alloc_output(ex_op *op, ex_worker *w, project_state *s, const int64_t *bytes, dv_chunk *in, dv_chunk *c,
                        int j, pa_column *col, pa_err *err)
{
    int jj;
    const kn_program *prog = prog_of(s, j, &jj);
    const kn_output *o = &kn_program_outputs(prog)[jj];
    const int64_t rows = in->length;
    int rc;
    memset(col, 0, sizeof *col);
    col->type = o->type;
    col->length = rows;
    if (pa_type_is_varlen(o->type.id)) {
        int64_t bound = bytes ? bytes[j] : kn_eval_str_bound(prog, jj, in->columns, in->n_columns, rows);
        if ((rc = ex_chunk_alloc(op, c, (size_t)(bound > 0 ? bound : 1), &col->data, err)) != PA_OK ||
            (rc = ex_chunk_alloc(op, c, (size_t)(rows + 1) * sizeof(int32_t), (void **)&col->offsets, err)) != PA_OK)
            return rc;
        if ((rc = ex_zero_offset(op, w, col->offsets, err)) != PA_OK)
            return rc;
    } else if ((rc = ex_chunk_alloc(op, c, (size_t)rows * (size_t)pa_type_bytes(o->type), &col->data, err)) !=
               PA_OK) {
        return rc;
    }
    if (kn_eval_may_null(prog, jj, in->columns, in->n_columns))
        return ex_chunk_alloc(op, c, (size_t)(rows + 7) / 8, (void **)&col->validity, err);
    return PA_OK;
}

static int project_execute(ex_op *op, ex_worker *w, void *local, dv_chunk *in, dv_chunk **out, ex_state *st,
                           pa_err *err)
{
    project_state *s = op->state;
    project_local *l = local;
    const int64_t rows = in->length;
    dv_chunk *c = NULL;
    int rc;
    *out = NULL;
    *st = EX_NEED_INPUT;
    if (rows == 0)
        return PA_OK;
    bool ready;
    if (s->prog && (rc = size_strings(s, l, w, in, &ready, err)) != PA_OK)
        return rc;
    if (s->prog && !ready) {
        *st = EX_BLOCKED;
        return PA_OK;
    }
    if (s->prog)
        l->sized = false;   /* the next input is sized anew */
    if ((rc = ex_chunk_new(op, w, s->n, &c, err)) != PA_OK)
        return rc;
    if (s->n_prog < s->n)
        PA_TRY(rc = dv_chunk_depend(c, in, err));
    if (s->prog) {
        for (int j = 0; j < s->n_prog; j++)
            PA_TRY(rc = alloc_output(op, w, s, l->bytes, in, c, j, &l->outs[j], err));
        for (int g = 0; g < s->n_progs; g++) {
            const kn_program *prog = s->progs[g];
            int64_t text = prog->n_text == 0 ? 0
                         : l->bytes     ? l->bytes[s->n_prog + g]
                                        : kn_eval_str_bound(prog, KN_EVAL_TEXT_AREA, in->columns, in->n_columns, rows);
            PA_TRY(rc = ex_text_area_reserve(op, &l->text, text, err));
            PA_TRY(rc = kn_eval(&w->kn, prog, in->columns, in->n_columns, rows, l->outs + s->first[g], l->scratch,
                                text ? l->text.p : NULL, text, err));
        }
    }
    for (int i = 0; i < s->n; i++) {
        if (s->src[i] >= 0)
            c->columns[i] = in->columns[s->src[i]];
        else
            c->columns[i] = l->outs[s->prog_out[i]];
        c->columns[i].length = rows;
    }
    c->length = rows;
    *out = c;
    return PA_OK;
fail:
    dv_chunk_release(c, w->stream);   /* after the kernels already enqueued on it */
    return rc;
}

static const ex_op_vt project_vt = {
    .kind = EX_OP_PROJECT,
    .local_init = project_local_init,
    .local_free = project_local_free,
    .execute = project_execute,
};

/* Programs for the computed outputs: one when they fit, else runs that
 * halve until each compiles (a run of one expression that still does not
 * is the expression's own error). */
static int compile_runs(ex_plan *p, project_state *s, ex_expr *const *computed, int k, const ex_op *input,
                        pa_err *err)
{
    s->progs = ex_plan_alloc(p, (size_t)k * sizeof *s->progs);
    s->first = ex_plan_alloc(p, (size_t)(k + 1) * sizeof *s->first);
    if (!s->progs || !s->first)
        return pa_error(err, PA_ENOMEM, "PROJECT: out of memory");
    int at = 0;
    while (at < k) {
        int len = k - at, rc;
        while ((rc = ex__compile_plan(p, computed + at, len, input, &s->progs[s->n_progs], err)) == PA_EUNSUPPORTED &&
               len > 1) {
            pa_err_clear(err);
            len = (len + 1) / 2;
        }
        if (rc != PA_OK)
            return rc;
        s->first[s->n_progs++] = at;
        at += len;
    }
    s->first[s->n_progs] = k;
    s->prog = s->progs[0];
    return PA_OK;
}

int ex_project(ex_plan *p, ex_op *input, ex_expr *const *exprs, const char *const *names, int n, ex_op **out,
               pa_err *err)
{
    if (!p || !input || !out || n < 1 || !exprs)
        return pa_error(err, PA_EINVAL, "PROJECT: bad arguments");
    project_state *s = ex_plan_alloc(p, sizeof *s);
    int *src = ex_plan_alloc(p, (size_t)n * sizeof *src);
    int *po = ex_plan_alloc(p, (size_t)n * sizeof *po);
    ex_expr **computed = ex_plan_alloc(p, (size_t)n * sizeof *computed);
    if (!s || !src || !po || !computed)
        return pa_error(err, PA_ENOMEM, "PROJECT: out of memory");
    memset(s, 0, sizeof *s);
    int rc, k = 0;
    for (int i = 0; i < n; i++) {
        if (!exprs[i])   /* a builder failed: its error is already on err */
            return err && err->code ? err->code : pa_error(err, PA_EINVAL, "PROJECT: expression %d is NULL", i);
        int idx;
        src[i] = po[i] = -1;
        if (ex_expr_is_column(exprs[i], &idx)) {
            if (idx >= input->n_cols || !ex__type_eq(input->types[idx], exprs[i]->type))
                return pa_error(err, PA_EINVAL, "PROJECT: expression %d reads column %d, which %s", i, idx,
                                idx >= input->n_cols ? "does not exist" : "has another type");
            src[i] = idx;
        } else {
            po[i] = k;
            computed[k++] = exprs[i];
        }
    }
    s->n = n;
    s->src = src;
    s->prog_out = po;
    s->n_prog = k;
    if (k > 0 && (rc = compile_runs(p, s, computed, k, input, err)) != PA_OK)
        return rc;
    ex_op *op;
    if ((rc = ex_op_new(p, &project_vt, n, &op, err)) != PA_OK)
        return rc;
    for (int i = 0; i < n; i++) {
        char buf[32];
        const char *name = names && names[i] ? names[i] : NULL;
        if (!name && src[i] >= 0)
            name = input->names[src[i]];
        if (!name) {
            snprintf(buf, sizeof buf, "col%d", i);
            name = buf;
        }
        if ((rc = ex_op_set_column(op, i, name, exprs[i]->type, err)) != PA_OK)
            return rc;
    }
    op->state = s;
    op->child[0] = input;
    op->n_child = 1;
    op->est_rows = input->est_rows;
    *out = op;
    return PA_OK;
}
