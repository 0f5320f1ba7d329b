/*
 * pipeline.c - cutting an operator tree into pipelines (source -> streaming
 * chain -> sink) at the breakers, and their dependencies. The roles an op
 * plays follow from the hooks its vtable has (sched_int.h, design notes).
 */
#include "exec/sched_int.h"

#include <string.h>

#define MAX_DEPTH 256

typedef struct builder {
    ex_pipelines *ps;
    int cap;
    ex_op *above[MAX_DEPTH];   /* streaming ops above the current one, top first */
    pa_err *err;
} builder;

static int add_pipeline(builder *b, ex_op *source, int n_above, ex_op *sink)
{
    ex_pipelines *ps = b->ps;
    if (ps->n == b->cap) {
        int cap = b->cap ? b->cap * 2 : 8;
        ex_pipeline *np = pa_realloc(ps->p, (size_t)cap * sizeof *np);
        if (!np)
            return pa_error(b->err, PA_ENOMEM, "out of memory building pipelines");
        ps->p = np;
        b->cap = cap;
    }
    ex_pipeline *p = &ps->p[ps->n];
    memset(p, 0, sizeof *p);
    p->id = ps->n;
    p->source = source;
    p->sink = sink;
    p->chain = pa_malloc((size_t)(n_above ? n_above : 1) * sizeof *p->chain);
    if (!p->chain)
        return pa_error(b->err, PA_ENOMEM, "out of memory building pipelines");
    for (int i = 0; i < n_above; i++)   /* bottom-up */
        p->chain[i] = b->above[n_above - 1 - i];
    p->n_chain = n_above;
    ps->n++;
    return PA_OK;
}

static int cut(builder *b, ex_op *op, int n_above, ex_op *sink);

/* Cut the subtree under op as a new chain (a breaker's input, a join's build
 * side) without losing the n_above streaming ops already collected above
 * the current operator: the recursion reuses b->above from index 0. */
static int cut_new_chain(builder *b, ex_op *op, ex_op *sink, int n_above)
{
    ex_op *saved[MAX_DEPTH];
    memcpy(saved, b->above, (size_t)n_above * sizeof *saved);
    int rc = cut(b, op, 0, sink);
    memcpy(b->above, saved, (size_t)n_above * sizeof *saved);
    return rc;
}

static int cut(builder *b, ex_op *op, int n_above, ex_op *sink)
{
    if (!op)
        return pa_error(b->err, PA_EINVAL, "plan has a missing input operator");
    if (n_above >= MAX_DEPTH)
        return pa_error(b->err, PA_EINVAL, "plan deeper than %d streaming operators", MAX_DEPTH);
    const ex_op_vt *vt = op->vt;
    bool src = vt->source_next != NULL, snk = vt->sink != NULL, exe = vt->execute != NULL;
    int rc;
    if (op->n_inputs > 0 && exe) {   /* UNION_ALL: every input streams through */
        for (int i = 0; i < op->n_inputs; i++) {
            b->above[n_above] = op;      /* each input's chain ends in the same ops above */
            if ((rc = cut(b, op->inputs[i], n_above + 1, sink)) != PA_OK)
                return rc;
        }
        return PA_OK;
    }
    if (src && snk) {                /* breaker: sink below, source above */
        if (op->n_child < 1)
            return pa_error(b->err, PA_EINVAL, "%s has no input", op->label);
        if ((rc = cut_new_chain(b, op->child[0], op, n_above)) != PA_OK)
            return rc;
        return add_pipeline(b, op, n_above, sink);
    }
    if (src)                         /* leaf source (SCAN) */
        return add_pipeline(b, op, n_above, sink);
    if (exe && snk) {                /* join: build pipeline, then probe streams through */
        if (op->n_child < 2)
            return pa_error(b->err, PA_EINVAL, "%s needs two inputs", op->label);
        if ((rc = cut_new_chain(b, op->child[1], op, n_above)) != PA_OK)
            return rc;
        b->above[n_above] = op;
        return cut(b, op->child[0], n_above + 1, sink);
    }
    if (exe) {
        if (op->n_child < 1)
            return pa_error(b->err, PA_EINVAL, "%s has no input", op->label);
        b->above[n_above] = op;
        return cut(b, op->child[0], n_above + 1, sink);
    }
    return pa_error(b->err, PA_EINVAL, "%s can be neither a source nor a streaming operator here", op->label);
}

static int add_dep(ex_pipeline *p, int q, bool soft, pa_err *err)
{
    for (int i = 0; i < p->n_deps; i++)
        if (p->deps[i] == q) {
            p->dep_soft[i] &= soft;
            return PA_OK;
        }
    int *d = pa_realloc(p->deps, (size_t)(p->n_deps + 1) * sizeof *d);
    if (d)
        p->deps = d;
    uint8_t *ds = d ? pa_realloc(p->dep_soft, (size_t)(p->n_deps + 1)) : NULL;
    if (!ds)
        return pa_error(err, PA_ENOMEM, "out of memory building pipelines");
    p->dep_soft = ds;
    p->dep_soft[p->n_deps] = soft;
    p->deps[p->n_deps++] = q;
    return PA_OK;
}

int ex__pipelines_feeding(const ex_pipelines *ps, const ex_op *op, int from)
{
    for (int i = from; i < ps->n; i++)
        if (ps->p[i].sink == op)
            return i;
    return -1;
}

int ex__pipelines_build(ex_op *top, ex_pipelines *out, pa_err *err)
{
    builder *b = pa_calloc(1, sizeof *b);
    if (!b)
        return pa_error(err, PA_ENOMEM, "out of memory building pipelines");
    memset(out, 0, sizeof *out);
    b->ps = out;
    b->err = err;
    int rc;
    if (top->vt->sink && !top->vt->source_next && !top->vt->execute) {   /* RESULT */
        if (top->n_child < 1) {
            rc = pa_error(err, PA_EINVAL, "%s has no input", top->label);
            goto fail;
        }
        rc = cut(b, top->child[0], 0, top);
    } else {
        rc = cut(b, top, 0, NULL);
    }
    if (rc != PA_OK)
        goto fail;
    /* P depends on Q when P reads what Q's sink gathered (softly when Q's
     * sink streams to P's source: an EXCHANGE). */
    for (int i = 0; i < out->n; i++) {
        ex_pipeline *p = &out->p[i];
        for (int k = -1; k < p->n_chain; k++) {
            ex_op *op = k < 0 ? p->source : p->chain[k];
            for (int q = ex__pipelines_feeding(out, op, 0); q >= 0; q = ex__pipelines_feeding(out, op, q + 1))
                if (q != i && (rc = add_dep(p, q, k < 0 && op->vt->streams, err)) != PA_OK)
                    goto fail;
        }
    }
    pa_free(b);
    return PA_OK;
fail:
    pa_free(b);
    ex__pipelines_free(out);
    return rc;
}

void ex__pipelines_free(ex_pipelines *ps)
{
    for (int i = 0; i < ps->n; i++) {
        pa_free(ps->p[i].chain);
        pa_free(ps->p[i].deps);
        pa_free(ps->p[i].dep_soft);
        pa_free(ps->p[i].tids);
        pa_free(ps->p[i].wks);
        for (int k = 0; k < ps->p[i].n_wdone; k++)
            dv_event_destroy(ps->p[i].wdone[k]);
        pa_free(ps->p[i].wdone);
        dv_event_destroy(ps->p[i].done);
    }
    pa_free(ps->p);
    ps->p = NULL;
    ps->n = 0;
}
