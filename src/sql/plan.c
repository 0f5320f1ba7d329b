/*
 * plan.c - logical plan nodes, and WHERE/HAVING conjuncts that hold
 * subqueries: each subquery is joined in (decorrelated) before the
 * conjunct is applied as a filter.
 *
 *   EXISTS (q)            top level -> SEMI join on q's correlations
 *   NOT EXISTS (q)        top level -> ANTI join
 *   x IN (q)              top level -> SEMI join on x = q.col and correlations
 *   anything else         MARK join (IN / EXISTS as a boolean column) or LEFT
 *                         join (scalar subquery; grouped on its correlation
 *                         columns when it aggregates), then a filter.
 * Uncorrelated subqueries join without keys (q has one row for a scalar).
 */
#include "sql/sql_int.h"

#include <string.h>

sq_node *sq_node_new(sq_ctx *c, sq_lkind k, int n_out)
{
    sq_node *n = sq_alloc(&c->A, sizeof *n);
    int *out = sq_alloc(&c->A, (size_t)(n_out + 1) * sizeof *out);
    if (!n || !out) {
        sq_fail(c, -1, PA_ENOMEM, "planning: out of memory");
        return NULL;
    }
    n->kind = k;
    n->n_out = n_out;
    n->out = out;
    n->limit = -1;
    n->mark = -1;
    return n;
}

bool sq_node_has_col(const sq_node *n, int col)
{
    for (int i = 0; i < n->n_out; i++)
        if (n->out[i] == col)
            return true;
    return false;
}

bool sq_node_covers(sq_ctx *c, const sq_node *n, const sq_expr *e)
{
    uint8_t *set = sq_alloc(&c->A, (size_t)c->n_cols + 1);
    if (!set)
        return false;
    sq_expr_cols(e, set);
    for (int i = 0; i < c->n_cols; i++)
        if (set[i] && !sq_node_has_col(n, i))
            return false;
    return true;
}

sq_node *sq_filter(sq_ctx *c, sq_node *in, sq_expr **conj, int n)
{
    if (n == 0)
        return in;
    if (in->kind == SQ_L_SCAN || in->kind == SQ_L_FILTER) {
        /* Merge into the scan's (or filter's) conjunct list. */
        sq_expr **v = sq_alloc(&c->A, (size_t)(in->n_conj + n) * sizeof *v);
        if (!v) {
            sq_fail(c, -1, PA_ENOMEM, "planning: out of memory");
            return NULL;
        }
        if (in->n_conj)
            memcpy(v, in->conj, (size_t)in->n_conj * sizeof *v);
        memcpy(v + in->n_conj, conj, (size_t)n * sizeof *v);
        in->conj = v;
        in->n_conj += n;
        for (int i = 0; i < n; i++)
            in->est *= sq_selectivity(c, conj[i], in->est);
        if (in->est < 1)
            in->est = 1;
        return in;
    }
    sq_node *f = sq_node_new(c, SQ_L_FILTER, in->n_out);
    if (!f)
        return NULL;
    memcpy(f->out, in->out, (size_t)in->n_out * sizeof *f->out);
    f->in[0] = in;
    f->est = in->est;
    f->conj = NULL;
    f->n_conj = 0;
    return sq_filter(c, f, conj, n);
}

/* Join subquery q into node; kind SEMI/ANTI/MARK/LEFT. */
static int join_subquery(sq_ctx *c, sq_node *node, sq_subq *q, sq_jkind kind, int mark, sq_node **out)
{
    sq_node *sub = q->plan;
    int n_cond = q->n_corr + (q->kind == SQ_S_IN ? 1 : 0);
    sq_expr **cond = sq_alloc(&c->A, (size_t)(n_cond + 1) * sizeof *cond);
    if (!cond)
        return sq_fail(c, q->loc, PA_ENOMEM, "planning: out of memory");
    int k = 0;
    for (int i = 0; i < q->n_corr; i++) {
        uint8_t *set = sq_alloc(&c->A, (size_t)c->n_cols + 1);
        if (!set)
            return sq_fail(c, q->loc, PA_ENOMEM, "planning: out of memory");
        sq_expr_cols(q->corr[i], set);
        for (int id = 0; id < c->n_cols; id++)
            if (set[id] && !sq_node_has_col(node, id) && !sq_node_has_col(sub, id))
                return sq_fail(c, q->corr[i]->loc, PA_EUNSUPPORTED,
                               "a subquery correlated with a query two levels out is not supported");
        cond[k++] = q->corr[i];
    }
    if (q->kind == SQ_S_IN) {
        sq_expr *a[2] = {q->test, sq_col_ref(c, q->value_col, q->loc)};
        if (!(cond[k++] = sq_make(c, SQ_E_CMP, EX_EQ, a, 2, q->loc)))
            return c->err->code;
    }
    int n_out = node->n_out + (kind == SQ_J_LEFT ? sub->n_out : kind == SQ_J_MARK ? 1 : 0);
    sq_node *j = sq_node_new(c, SQ_L_JOIN, n_out);
    if (!j)
        return c->err->code;
    j->jkind = kind;
    j->in[0] = node;
    j->in[1] = sub;
    j->conj = cond;
    j->n_conj = k;
    memcpy(j->out, node->out, (size_t)node->n_out * sizeof(int));
    if (kind == SQ_J_LEFT)
        memcpy(j->out + node->n_out, sub->out, (size_t)sub->n_out * sizeof(int));
    if (kind == SQ_J_MARK) {
        j->out[node->n_out] = mark;
        j->mark = mark;
    }
    j->est = sq_estimate(c, j);
    *out = j;
    return PA_OK;
}

/* Join every subquery of e into *node; EXISTS placeholders become
 * CASE WHEN mark THEN true ELSE false (EXISTS is never NULL). */
sq_expr *sq_join_subqueries(sq_ctx *c, sq_expr *e, sq_node **node)
{
    if (!e)
        return NULL;
    if (e->kind == SQ_E_SUBQ) {
        sq_subq *q = e->subq;
        if (q->kind == SQ_S_IN && q->test && sq_expr_has(q->test, SQ_E_SUBQ) && !(q->test = sq_join_subqueries(c, q->test, node)))
            return NULL;
        bool scalar = q->kind == SQ_S_SCALAR;
        if (join_subquery(c, *node, q, scalar ? SQ_J_LEFT : SQ_J_MARK, e->col, node) != PA_OK)
            return NULL;
        if (q->kind != SQ_S_EXISTS)
            return e;
        sq_expr *a[3] = {e, sq_const(c, ex_expr_bool(c->plan, true, c->err), e->loc),
                         sq_const(c, ex_expr_bool(c->plan, false, c->err), e->loc)};
        return sq_make(c, SQ_E_CASE, 0, a, 3, e->loc);
    }
    if (e->n_args == 0)
        return e;
    sq_expr **a = sq_alloc(&c->A, (size_t)e->n_args * sizeof *a);
    if (!a)
        return NULL;
    bool changed = false;
    for (int i = 0; i < e->n_args; i++) {
        a[i] = sq_expr_has(e->args[i], SQ_E_SUBQ) ? sq_join_subqueries(c, e->args[i], node) : e->args[i];
        if (!a[i])
            return NULL;
        changed |= a[i] != e->args[i];
    }
    return changed ? sq_rebuild(c, e, a) : e;
}

int sq_apply_conjuncts(sq_ctx *c, sq_node *in, sq_expr **conj, int n, sq_node **out)
{
    sq_node *node = in;
    sq_expr **plain = sq_alloc(&c->A, (size_t)(n + 1) * sizeof *plain);
    if (!plain)
        return sq_fail(c, -1, PA_ENOMEM, "planning: out of memory");
    int np = 0, rc;
    for (int i = 0; i < n; i++)
        if (!sq_expr_has(conj[i], SQ_E_SUBQ))
            plain[np++] = conj[i];
    if (np && !(node = sq_filter(c, node, plain, np)))
        return c->err->code;
    for (int i = 0; i < n; i++) {
        sq_expr *e = conj[i];
        if (!sq_expr_has(e, SQ_E_SUBQ))
            continue;
        if (e->kind == SQ_E_SUBQ && e->subq->kind == SQ_S_EXISTS) {
            if ((rc = join_subquery(c, node, e->subq, SQ_J_SEMI, -1, &node)))
                return rc;
            continue;
        }
        if (e->kind == SQ_E_NOT && e->args[0]->kind == SQ_E_SUBQ && e->args[0]->subq->kind == SQ_S_EXISTS) {
            if ((rc = join_subquery(c, node, e->args[0]->subq, SQ_J_ANTI, -1, &node)))
                return rc;
            continue;
        }
        if (e->kind == SQ_E_SUBQ && e->subq->kind == SQ_S_IN && !sq_expr_has(e->subq->test, SQ_E_SUBQ)) {
            if ((rc = join_subquery(c, node, e->subq, SQ_J_SEMI, -1, &node)))
                return rc;
            continue;
        }
        sq_expr *f = sq_join_subqueries(c, e, &node);
        if (!f || !(node = sq_filter(c, node, &f, 1)))
            return c->err->code ? c->err->code : PA_EINTERNAL;
    }
    *out = node;
    return PA_OK;
}
