/*
 * op_union.c - UNION_ALL: the concatenation of its inputs. The pipeline
 * builder makes each input a pipeline of its own that streams through this
 * op into the same operators and sink above, so the op itself only passes
 * chunks on (a new reference, no copy).
 */
#include "exec/sched_int.h"

#include <string.h>

static int union_execute(ex_op *op, ex_worker *w, void *local, dv_chunk *in, dv_chunk **out, ex_state *st,
                         pa_err *err)
{
    *out = dv_chunk_retain(in);
    *st = EX_NEED_INPUT;
    return PA_OK;
}

static const ex_op_vt union_vt = {
    .kind = EX_OP_UNION_ALL,
    .execute = union_execute,
};

static bool same_type(pa_type a, pa_type b)
{
    return a.id == b.id && (a.id != PA_TYPE_DECIMAL || (a.precision == b.precision && a.scale == b.scale));
}

int ex_union_all(ex_plan *p, ex_op *const *inputs, int n_inputs, ex_op **out, pa_err *err)
{
    if (!p || !inputs || n_inputs < 1 || !out)
        return pa_error(err, PA_EINVAL, "ex_union_all: bad arguments");
    const ex_op *first = inputs[0];
    for (int i = 0; i < n_inputs; i++) {
        const ex_op *in = inputs[i];
        if (!in || in->plan != p)
            return pa_error(err, PA_EINVAL, "ex_union_all: input %d is not an operator of this plan", i);
        if (in->n_cols != first->n_cols)
            return pa_error(err, PA_EINVAL, "UNION ALL: input %d has %d columns, input 0 has %d", i,
                            in->n_cols, first->n_cols);
        for (int c = 0; c < first->n_cols; c++)
            if (!same_type(in->types[c], first->types[c])) {
                char a[32], b[32];
                return pa_error(err, PA_EINVAL, "UNION ALL: column %d (%s) is %s in input 0 but %s in input %d", c,
                                first->names[c], pa_type_format(first->types[c], a, sizeof a),
                                pa_type_format(in->types[c], b, sizeof b), i);
            }
    }
    ex_op **ins = ex_plan_alloc(p, (size_t)n_inputs * sizeof *ins);
    if (!ins)
        return pa_error(err, PA_ENOMEM, "out of memory building UNION ALL");
    ex_op *op;
    int rc = ex_op_new(p, &union_vt, first->n_cols, &op, err);
    if (rc != PA_OK)
        return rc;
    memcpy(ins, inputs, (size_t)n_inputs * sizeof *ins);
    int64_t est = 0;
    for (int i = 0; i < n_inputs; i++)
        est = est < 0 || ins[i]->est_rows < 0 ? -1 : est + ins[i]->est_rows;
    for (int c = 0; c < first->n_cols; c++) {
        op->names[c] = first->names[c];
        op->types[c] = first->types[c];
    }
    op->inputs = ins;
    op->n_inputs = n_inputs;
    op->child[0] = ins[0];
    op->n_child = 1;
    op->est_rows = est;
    *out = op;
    return PA_OK;
}
