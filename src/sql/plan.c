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

/* ------------------------------------------------------------ magic sets
 * A correlated scalar aggregate is grouped on its correlation keys and
 * LEFT-joined to the outer rows; grouping all of the subquery's rows is
 * wasted when the outer side has few keys (TPC-H Q2, Q17, Q20). So its
 * input is first SEMI-joined with a "magic" relation M that produces a
 * superset of the outer key values: the outer plan itself, or a subtree of
 * it reached through inner/semi joins and filters whose output covers the
 * outer columns and is not much bigger. Groups of keys not in M are never
 * joined anyway, and every row of a key in M passes, so the result is the
 * same. M is evaluated a second time (the plan becomes a DAG of logical
 * nodes; lowering makes separate operators for each use), so it must give
 * the same rows twice: not when it holds a LIMIT (which rows survive one
 * may differ between runs). Applied only when M is estimated much smaller
 * than the aggregate's input. */
static bool covers_cols(const sq_node *n, const uint8_t *set, int n_cols)
{
    for (int i = 0; i < n_cols; i++)
        if (set[i] && !sq_node_has_col(n, i))
            return false;
    return true;
}

bool sq_node_has_limit(const sq_node *n, bool unordered_only)
{
    if (!n)
        return false;
    bool ordered = n->kind == SQ_L_SORT || (n->kind == SQ_L_LIMIT && n->in[0] && n->in[0]->kind == SQ_L_SORT);
    if ((n->kind == SQ_L_LIMIT || (n->kind == SQ_L_SORT && n->limit >= 0)) && !(unordered_only && ordered))
        return true;
    for (int i = 0; i < n->n_ins; i++)
        if (sq_node_has_limit(n->ins[i], unordered_only))
            return true;
    return sq_node_has_limit(n->in[0], unordered_only) || sq_node_has_limit(n->in[1], unordered_only);
}

/* The smallest good subtree of outer producing the columns in set. */
static sq_node *magic_source(sq_node *m, const uint8_t *set, int n_cols)
{
    for (;;) {
        sq_node *next = NULL;
        if (m->kind == SQ_L_JOIN && m->jkind == SQ_J_INNER) {
            for (int s = 0; s < 2 && !next; s++)
                if (covers_cols(m->in[s], set, n_cols) && m->in[s]->est <= 2 * m->est)
                    next = m->in[s];
        } else if ((m->kind == SQ_L_JOIN || m->kind == SQ_L_FILTER) && covers_cols(m->in[0], set, n_cols) &&
                   m->in[0]->est <= 2 * m->est)
            next = m->in[0];
        if (!next)
            return m;
        m = next;
    }
}

/* Put a SEMI join of *at with m on conds (inner = outer) as low as the
 * inner columns allow: through filters and the sides of inner joins. */
static int magic_insert(sq_ctx *c, sq_node **at, sq_node *m, sq_expr **cond, int n, const uint8_t *inner)
{
    sq_node *t = *at;
    bool pass = t->kind == SQ_L_FILTER || t->kind == SQ_L_PROJECT || t->kind == SQ_L_DISTINCT || t->kind == SQ_L_JOIN;
    for (int s = 0; pass && s < (t->kind == SQ_L_JOIN && t->jkind == SQ_J_INNER ? 2 : 1); s++)
        if (covers_cols(t->in[s], inner, c->n_cols))
            return magic_insert(c, &t->in[s], m, cond, n, inner);
    sq_node *j = sq_node_new(c, SQ_L_JOIN, t->n_out);
    if (!j)
        return c->err->code;
    j->jkind = SQ_J_SEMI;
    j->in[0] = t;
    j->in[1] = m;
    j->conj = cond;
    j->n_conj = n;
    memcpy(j->out, t->out, (size_t)t->n_out * sizeof(int));
    j->est = sq_estimate(c, j);
    *at = j;
    return PA_OK;
}

static int magic_set(sq_ctx *c, sq_node *outer, sq_subq *q)
{
    /* The aggregate under the subquery's projection (and filters). */
    sq_node *a = q->plan;
    while (a && (a->kind == SQ_L_PROJECT || a->kind == SQ_L_FILTER))
        a = a->in[0];
    if (!a || a->kind != SQ_L_AGG || a->n_groups != q->n_corr)
        return PA_OK;
    sq_expr **cond = sq_alloc(&c->A, (size_t)(q->n_corr + 1) * sizeof *cond);
    uint8_t *oset = sq_alloc(&c->A, (size_t)c->n_cols + 1), *iset = sq_alloc(&c->A, (size_t)c->n_cols + 1);
    if (!cond || !oset || !iset)
        return sq_fail(c, q->loc, PA_ENOMEM, "planning: out of memory");
    for (int i = 0; i < q->n_corr; i++) {
        /* After aggregation each correlation reads `group output = outer`. */
        sq_expr *e = q->corr[i];
        if (e->kind != SQ_E_CMP || e->sub != EX_EQ)
            return PA_OK;
        int side = -1, g = -1;
        for (int s = 0; s < 2 && side < 0; s++)
            if (e->args[s]->kind == SQ_E_COL)
                for (int k = 0; k < a->n_groups; k++)
                    if (a->out[k] == e->args[s]->col) {
                        side = s;
                        g = k;
                        break;
                    }
        if (side < 0 || !sq_node_covers(c, outer, e->args[1 - side]))
            return PA_OK;
        sq_expr *pair[2] = {sq_col_ref(c, a->groups[g], e->loc), e->args[1 - side]};
        if (!pair[0] || !(cond[i] = sq_make(c, SQ_E_CMP, EX_EQ, pair, 2, e->loc)))
            return c->err->code;
        sq_expr_cols(e->args[1 - side], oset);
        iset[a->groups[g]] = 1;
    }
    sq_node *m = magic_source(outer, oset, c->n_cols);
    if (m->est * 4 > a->in[0]->est || sq_node_has_limit(m, false))
        return PA_OK;
    return magic_insert(c, &a->in[0], m, cond, q->n_corr, iset);
}

/* The same for EXISTS, NOT EXISTS and IN joined as SEMI or ANTI: only
 * subquery rows whose correlation (and IN) keys occur in the outer rows can
 * matter, so a big subquery is first reduced by the outer keys (TPC-H Q4,
 * Q21). Not for MARK: there an empty or NULL-holding subquery changes the
 * answer for rows without a match. */
static int magic_exists(sq_ctx *c, sq_node *outer, sq_subq *q)
{
    int n = q->n_corr + (q->kind == SQ_S_IN ? 1 : 0), k = 0;
    sq_expr **cond = sq_alloc(&c->A, (size_t)(n + 1) * sizeof *cond);
    uint8_t *oset = sq_alloc(&c->A, (size_t)c->n_cols + 1), *iset = sq_alloc(&c->A, (size_t)c->n_cols + 1);
    if (!cond || !oset || !iset)
        return sq_fail(c, q->loc, PA_ENOMEM, "planning: out of memory");
    for (int i = 0; i < n; i++) {
        sq_expr *e = i < q->n_corr ? q->corr[i] : NULL, *in_e, *out_e;
        if (e) {
            if (e->kind != SQ_E_CMP || e->sub != EX_EQ)
                continue;
            int side = sq_node_covers(c, q->plan, e->args[0]) ? 0 : sq_node_covers(c, q->plan, e->args[1]) ? 1 : -1;
            if (side < 0)
                continue;
            in_e = e->args[side];
            out_e = e->args[1 - side];
        } else {
            if (!q->test || sq_expr_has(q->test, SQ_E_SUBQ) || !(in_e = sq_col_ref(c, q->value_col, q->loc)))
                continue;
            out_e = q->test;
        }
        if (!sq_node_covers(c, outer, out_e) || sq_expr_has(out_e, SQ_E_SUBQ))
            continue;
        sq_expr *pair[2] = {in_e, out_e};
        if (!(cond[k++] = sq_make(c, SQ_E_CMP, EX_EQ, pair, 2, e ? e->loc : q->loc)))
            return c->err->code;
        sq_expr_cols(in_e, iset);
        sq_expr_cols(out_e, oset);
    }
    if (k == 0)
        return PA_OK;
    sq_node *m = magic_source(outer, oset, c->n_cols);
    if (m->est * 4 > q->plan->est || sq_node_has_limit(m, false))
        return PA_OK;
    return magic_insert(c, &q->plan, m, cond, k, iset);
}

/* ---------------------------------------------------------------- domains
 * A subquery bound with a domain (sq_subq.domain) has D, a relation of its
 * FROM, in place of the outer columns it reads; D's rows are the distinct
 * values of those columns in the outer rows, set here once the outer rows
 * are planned. The outer plan is then read twice (as for magic sets), so
 * it must not hold a LIMIT. */
sq_expr *sq_subst_cols(sq_ctx *c, sq_expr *e, const int *from, const int *to, int n)
{
    if (!e)
        return NULL;
    if (e->kind == SQ_E_COL) {
        for (int i = 0; i < n; i++)
            if (from[i] == e->col)
                return sq_col_ref(c, to[i], e->loc);
        return e;
    }
    if (e->n_args == 0 || e->kind == SQ_E_SUBQ)
        return e;
    sq_expr **a = sq_alloc(&c->A, (size_t)e->n_args * sizeof *a);
    if (!a) {
        sq_fail(c, e->loc, PA_ENOMEM, "planning: out of memory");
        return NULL;
    }
    bool changed = false;
    for (int i = 0; i < e->n_args; i++) {
        if (!(a[i] = sq_subst_cols(c, e->args[i], from, to, n)))
            return NULL;
        changed |= a[i] != e->args[i];
    }
    return changed ? sq_rebuild(c, e, a) : e;
}

int sq_fill_domain(sq_ctx *c, sq_subq *q, sq_node **srcs, int n_srcs)
{
    sq_node *dn = q->dnode, *prod = NULL;
    int *u = sq_alloc(&c->A, (size_t)(q->n_dom + 1) * sizeof *u);
    if (!u)
        return sq_fail(c, q->loc, PA_ENOMEM, "planning: out of memory");
    for (int i = 0; i < q->n_dom; i++)
        u[i] = -1;
    int nc = c->n_cols;   /* the outer columns' ids are below; columns made here are not */
    uint8_t *set = sq_alloc(&c->A, (size_t)nc + 1);
    if (!set)
        return sq_fail(c, q->loc, PA_ENOMEM, "planning: out of memory");
    for (int s = 0; s < n_srcs; s++) {
        int k = 0;
        memset(set, 0, (size_t)nc + 1);
        for (int i = 0; i < q->n_dom; i++)
            if (q->dom_used[i] && u[i] < 0 && sq_node_has_col(srcs[s], q->dom_outer[i])) {
                set[q->dom_outer[i]] = 1;
                k++;
            }
        if (!k)
            continue;
        /* The smallest part of the source that holds the columns: D needs
         * every value the outer rows have, and may hold more (its rows that
         * no outer row has join nothing), so through filters, the sides of
         * inner joins, the preserved side of the others, DISTINCT, WINDOW
         * and below a LIMIT (whose rows, read twice, could differ). */
        sq_node *src = srcs[s];
        for (;;) {
            sq_node *next = NULL;
            if (src->kind == SQ_L_JOIN && src->jkind == SQ_J_INNER && covers_cols(src->in[1], set, nc))
                next = src->in[1];
            else if ((src->kind == SQ_L_JOIN && src->jkind != SQ_J_FULL) || src->kind == SQ_L_FILTER ||
                     src->kind == SQ_L_PROJECT || src->kind == SQ_L_DISTINCT || src->kind == SQ_L_WINDOW ||
                     src->kind == SQ_L_SORT || src->kind == SQ_L_LIMIT)
                next = src->in[0] && covers_cols(src->in[0], set, nc) ? src->in[0] : NULL;
            if (!next)
                break;
            src = next;
        }
        if (sq_node_has_limit(src, false))
            return sq_fail(c, q->loc, PA_EUNSUPPORTED,
                           "a subquery correlated through another subquery, or a LATERAL one, over rows cut by LIMIT is "
                           "not supported (its outer rows are read twice)");
        sq_node *p = sq_node_new(c, SQ_L_PROJECT, k);
        if (!p || !(p->exprs = sq_alloc(&c->A, (size_t)(k + 1) * sizeof *p->exprs)))
            return sq_fail(c, q->loc, PA_ENOMEM, "planning: out of memory");
        p->in[0] = src;
        p->est = src->est;
        k = 0;
        for (int i = 0; i < q->n_dom; i++)
            if (q->dom_used[i] && u[i] < 0 && sq_node_has_col(src, q->dom_outer[i])) {
                int o = q->dom_outer[i];
                if ((u[i] = sq_new_col(c, c->cols[o].name, c->cols[o].type)) < 0 ||
                    !(p->exprs[k] = sq_col_ref(c, o, q->loc)))
                    return c->err->code;
                c->cols[u[i]].stat = c->cols[o].stat;
                p->out[k++] = u[i];
            }
        sq_node *d = sq_node_new(c, SQ_L_DISTINCT, k);
        if (!d)
            return c->err->code;
        memcpy(d->out, p->out, (size_t)k * sizeof(int));
        d->in[0] = p;
        d->est = sq_estimate(c, d);
        double ndv = 1;   /* at most the product of the columns' distinct counts */
        for (int i = 0; i < k && ndv > 0; i++)
            ndv = c->cols[p->out[i]].stat.ndv > 0 ? ndv * c->cols[p->out[i]].stat.ndv : -1;
        if (ndv >= 1 && ndv < d->est)
            d->est = ndv;
        if (prod) {
            sq_node *j = sq_node_new(c, SQ_L_JOIN, prod->n_out + k);
            if (!j)
                return c->err->code;
            j->jkind = SQ_J_INNER;
            j->in[0] = prod;
            j->in[1] = d;
            memcpy(j->out, prod->out, (size_t)prod->n_out * sizeof(int));
            memcpy(j->out + prod->n_out, d->out, (size_t)k * sizeof(int));
            j->est = sq_estimate(c, j);
            d = j;
        }
        prod = d;
    }
    for (int i = 0; i < q->n_dom; i++)
        if (q->dom_used[i] && u[i] < 0)
            return sq_fail(c, q->loc, PA_EUNSUPPORTED,
                           "column \"%s\" of an outer query cannot be read by this subquery here (it is not among "
                           "the rows the subquery is joined to)",
                           c->cols[q->dom_outer[i]].name);
    if (!prod) {   /* no outer column read: one row */
        if (!(prod = sq_node_new(c, SQ_L_VALUES, 0)))
            return c->err->code;
        prod->n_rows = 1;
        prod->est = 1;
    }
    for (int i = 0; i < q->n_dom; i++) {
        ex_expr *x = u[i] < 0 ? ex_expr_null(c->plan, c->cols[dn->out[i]].type, c->err) : NULL;
        if (!(dn->exprs[i] = u[i] >= 0 ? sq_col_ref(c, u[i], q->loc) : x ? sq_const(c, x, q->loc) : NULL))
            return c->err->code ? c->err->code : PA_EINTERNAL;
    }
    dn->in[0] = prod;
    dn->est = prod->est;
    return PA_OK;
}

/* Join subquery q into node; kind SEMI/ANTI/MARK/LEFT. */
static int join_subquery(sq_ctx *c, sq_node *node, sq_subq *q, sq_jkind kind, int mark, sq_node **out)
{
    int rc;
    if (q->domain) {
        /* D from the outer rows; the value over no rows reads the outer
         * columns in place of D's. */
        if ((rc = sq_fill_domain(c, q, &node, 1)))
            return rc;
        if (q->empty && !(q->empty = sq_subst_cols(c, q->empty, q->dom_inner, q->dom_outer, q->n_dom)))
            return c->err->code;
    } else if (kind == SQ_J_LEFT && q->grouped && (rc = magic_set(c, node, q)))
        return rc;
    else if ((kind == SQ_J_SEMI || kind == SQ_J_ANTI) && (rc = magic_exists(c, node, q)))
        return rc;
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
                return sq_fail_corr(c, q->corr[i]->loc,
                                    "a subquery correlated with a query two levels out is not supported here");
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
    j->single = q->kind == SQ_S_SCALAR;
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
        bool scalar = q->kind == SQ_S_SCALAR;
        /* A placeholder may occur twice (BETWEEN reads its operand twice):
         * the subquery is joined once. */
        if (!sq_node_has_col(*node, e->col)) {
            if (q->kind == SQ_S_IN && q->test && sq_expr_has(q->test, SQ_E_SUBQ) &&
                !(q->test = sq_join_subqueries(c, q->test, node)))
                return NULL;
            if (join_subquery(c, *node, q, scalar ? SQ_J_LEFT : SQ_J_MARK, e->col, node) != PA_OK)
                return NULL;
        }
        if (scalar && q->grouped && q->empty) {
            /* Outer rows the LEFT join left unmatched get the aggregate's
             * value over no rows (COUNT 0), not NULL. */
            sq_expr *m = sq_col_ref(c, q->match_col, e->loc);
            sq_expr *a[3] = {m ? sq_make(c, SQ_E_ISNULL, 0, &m, 1, e->loc) : NULL, sq_cast(c, q->empty, e->type, e->loc), e};
            return sq_make(c, SQ_E_CASE, 0, a, 3, e->loc);
        }
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

/* The subquery of a WHERE conjunct joined as SEMI or ANTI (EXISTS, NOT
 * EXISTS, IN), or NULL. */
static sq_subq *semi_form(sq_expr *e)
{
    if (e->kind == SQ_E_NOT && e->args[0]->kind == SQ_E_SUBQ && e->args[0]->subq->kind == SQ_S_EXISTS)
        return e->args[0]->subq;
    if (e->kind == SQ_E_SUBQ && e->subq->kind == SQ_S_EXISTS)
        return e->subq;
    if (e->kind == SQ_E_SUBQ && e->subq->kind == SQ_S_IN && !sq_expr_has(e->subq->test, SQ_E_SUBQ))
        return e->subq;
    return NULL;
}

int sq_push_subqueries(sq_ctx *c, sq_node **rels, int n_rels, sq_expr **conj, int *n)
{
    int kept = 0, rc;
    for (int i = 0; i < *n; i++) {
        /* Only uncorrelated IN: its build side is the same wherever it goes,
         * and its probe side is smallest on the table alone. A correlated
         * EXISTS is better after the joins that shrink its outer side (the
         * magic set then comes from fewer rows: Q21). */
        sq_subq *q = semi_form(conj[i]);
        if (q && (q->kind != SQ_S_IN || q->n_corr > 0))
            q = NULL;
        int at = -1;
        if (q && n_rels > 1) {
            /* The outer columns it reads: the IN operand's, and those of its
             * correlations that the subquery does not produce. */
            uint8_t *set = sq_alloc(&c->A, (size_t)c->n_cols + 1);
            if (!set)
                return sq_fail(c, q->loc, PA_ENOMEM, "planning: out of memory");
            if (q->kind == SQ_S_IN)
                sq_expr_cols(q->test, set);
            for (int k = 0; k < q->n_corr; k++)
                sq_expr_cols(q->corr[k], set);
            bool any = false, one = true;
            for (int id = 0; id < c->n_cols && one; id++) {
                if (!set[id] || sq_node_has_col(q->plan, id))
                    continue;
                any = true;
                int r = 0;
                while (r < n_rels && !sq_node_has_col(rels[r], id))
                    r++;
                if (r == n_rels || (at >= 0 && r != at))
                    one = false;
                else
                    at = r;
            }
            if (!any || !one)
                at = -1;
        }
        if (at < 0) {
            conj[kept++] = conj[i];
            continue;
        }
        if ((rc = sq_apply_conjuncts(c, rels[at], &conj[i], 1, &rels[at])))
            return rc;
    }
    *n = kept;
    return PA_OK;
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
