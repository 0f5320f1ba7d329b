/*
 * bind_select.c - one SELECT block (or set operation) -> logical plan:
 * FROM and WHERE through the optimiser's join graph, subquery conjuncts,
 * GROUP BY / aggregates / HAVING, the select list, DISTINCT, ORDER BY and
 * LIMIT. A subquery block also hands its correlated conjuncts to its
 * sq_subq (grouping on their inner sides when it aggregates).
 */
#include "sql/sql_int.h"

#include <errno.h>
#include <stdlib.h>

#include <ctype.h>
#include <stdio.h>
#include <string.h>

typedef struct sq_vec {
    sq_expr **v;
    int n, cap;
} sq_vec;

static int push(sq_ctx *c, sq_vec *x, sq_expr *e)
{
    if (!e)
        return c->err->code ? c->err->code : PA_EINTERNAL;
    if (x->n == x->cap) {
        int cap = x->cap ? x->cap * 2 : 16;
        sq_expr **v = sq_alloc(&c->A, (size_t)cap * sizeof *v);
        if (!v)
            return sq_fail(c, e->loc, PA_ENOMEM, "binding: out of memory");
        if (x->n)
            memcpy(v, x->v, (size_t)x->n * sizeof *v);
        x->v = v;
        x->cap = cap;
    }
    x->v[x->n++] = e;
    return PA_OK;
}

/* ----------------------------------------------------------- output names */
static void render(pgn *n, char *buf, size_t cap);

static void render_list(pgn **v, size_t n, char *buf, size_t cap)
{
    size_t used = strlen(buf);
    for (size_t i = 0; i < n && used + 2 < cap; i++) {
        if (i)
            strncat(buf, ", ", cap - used - 1);
        used = strlen(buf);
        render(v[i], buf + used, cap - used);
        used = strlen(buf);
    }
}

static void cat(char *buf, size_t cap, const char *s)
{
    size_t used = strlen(buf);
    if (used + 1 < cap)
        strncat(buf, s, cap - used - 1);
}

static void render_bound(PgQuery__WindowDef *w, bool start, char *buf, size_t cap)
{
    int fo = w->frame_options;
    char off[128];
    render(start ? w->start_offset : w->end_offset, off, sizeof off);
    if (fo & (start ? 0x20 : 0x40))
        cat(buf, cap, "UNBOUNDED PRECEDING");
    else if (fo & (start ? 0x80 : 0x100))
        cat(buf, cap, "UNBOUNDED FOLLOWING");
    else if (fo & (start ? 0x800 : 0x1000)) {
        cat(buf, cap, off);
        cat(buf, cap, " PRECEDING");
    } else if (fo & (start ? 0x2000 : 0x4000)) {
        cat(buf, cap, off);
        cat(buf, cap, " FOLLOWING");
    } else
        cat(buf, cap, "CURRENT ROW");
}

/* DuckDB's name for a window function call: the call, then OVER with its
 * partition, order and (when given) frame. */
static void render_window(PgQuery__FuncCall *f, const char *fn, char *buf, size_t cap)
{
    PgQuery__WindowDef *w = f->over;
    if (f->agg_star)
        snprintf(buf, cap, "count()");
    else {
        snprintf(buf, cap, "%s(", fn);
        render_list(f->args, f->n_args, buf, cap);
        cat(buf, cap, ")");
    }
    if (w->name && *w->name) {   /* OVER w: DuckDB spells the window out; its name will do */
        cat(buf, cap, " OVER ");
        cat(buf, cap, w->name);
        return;
    }
    cat(buf, cap, " OVER (");
    bool sp = false;
    if (w->refname && *w->refname) {
        cat(buf, cap, w->refname);
        sp = true;
    }
    if (w->n_partition_clause) {
        cat(buf, cap, sp ? " PARTITION BY " : "PARTITION BY ");
        render_list(w->partition_clause, w->n_partition_clause, buf, cap);
        sp = true;
    }
    if (w->n_order_clause) {
        cat(buf, cap, sp ? " ORDER BY " : "ORDER BY ");
        for (size_t i = 0; i < w->n_order_clause; i++) {
            PgQuery__SortBy *sb = w->order_clause[i]->sort_by;
            char k[256];
            render(sb->node, k, sizeof k);
            if (i)
                cat(buf, cap, ", ");
            cat(buf, cap, k);
            if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC)
                cat(buf, cap, " DESC");
            if (sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_FIRST)
                cat(buf, cap, " NULLS FIRST");
            else if (sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_LAST)
                cat(buf, cap, " NULLS LAST");
        }
        sp = true;
    }
    int fo = w->frame_options;
    if (fo & 0x1) {
        bool whole = (fo & 0x20) && (fo & 0x100);
        cat(buf, cap, sp ? " " : "");
        cat(buf, cap, (fo & 0x4) || whole ? "ROWS BETWEEN " : "RANGE BETWEEN ");
        render_bound(w, true, buf, cap);
        cat(buf, cap, " AND ");
        render_bound(w, false, buf, cap);
    }
    cat(buf, cap, ")");
}

/* DuckDB's name for an unaliased expression (the common cases). */
static void render(pgn *n, char *buf, size_t cap)
{
    buf[0] = 0;
    if (!n || cap < 8)
        return;
    switch (n->node_case) {
    case PG_QUERY__NODE__NODE_COLUMN_REF: {
        PgQuery__ColumnRef *r = n->column_ref;
        const char *s = r->n_fields ? sq_node_name(r->fields[r->n_fields - 1]) : NULL;
        snprintf(buf, cap, "%s", s ? s : "*");
        return;
    }
    case PG_QUERY__NODE__NODE_A_CONST: {
        PgQuery__AConst *k = n->a_const;
        if (k->isnull)
            snprintf(buf, cap, "NULL");
        else if (k->val_case == PG_QUERY__A__CONST__VAL_IVAL)
            snprintf(buf, cap, "%d", k->ival->ival);
        else if (k->val_case == PG_QUERY__A__CONST__VAL_FVAL)
            snprintf(buf, cap, "%s", k->fval->fval);
        else if (k->val_case == PG_QUERY__A__CONST__VAL_SVAL)
            snprintf(buf, cap, "'%s'", k->sval->sval);
        else
            snprintf(buf, cap, "?");
        return;
    }
    case PG_QUERY__NODE__NODE_A_EXPR: {
        PgQuery__AExpr *x = n->a_expr;
        const char *op = x->n_name ? sq_node_name(x->name[x->n_name - 1]) : "?";
        char l[256], r[256];
        render(x->lexpr, l, sizeof l);
        render(x->rexpr, r, sizeof r);
        if (x->kind == PG_QUERY__A__EXPR__KIND__AEXPR_OP && x->lexpr)
            snprintf(buf, cap, "(%s %s %s)", l, op, r);
        else if (x->kind == PG_QUERY__A__EXPR__KIND__AEXPR_OP)
            snprintf(buf, cap, "%s%s", op, r);
        else
            snprintf(buf, cap, "%s", l);
        return;
    }
    case PG_QUERY__NODE__NODE_FUNC_CALL: {
        PgQuery__FuncCall *f = n->func_call;
        const char *fn = f->n_funcname ? sq_node_name(f->funcname[f->n_funcname - 1]) : "?";
        if (f->over) {
            render_window(f, fn, buf, cap);
            return;
        }
        if (f->agg_within_group && f->n_agg_order == 1) {   /* DuckDB's names */
            PgQuery__SortBy *sb = f->agg_order[0]->sort_by;
            char k[256];
            render(sb->node, k, sizeof k);
            bool desc = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
            if (!strcmp(fn, "mode")) {
                snprintf(buf, cap, "\"mode\"() WITHIN GROUP ( ORDER BY %s%s)", k, desc ? " DESC" : "");
                return;
            }
            char a[128];
            render(f->n_args ? f->args[0] : NULL, a, sizeof a);
            snprintf(buf, cap, "%s(%s ORDER BY %s%s)",
                     !strcmp(fn, "percentile_cont") ? "quantile_cont"
                     : !strcmp(fn, "percentile_disc") ? "quantile_disc"
                                                        : fn,
                     a, k, desc ? " DESC" : "");
            return;
        }
        if (f->agg_star)
            snprintf(buf, cap, "count_star(");
        else {
            snprintf(buf, cap, "%s(%s", fn, f->agg_distinct ? "DISTINCT " : "");
            render_list(f->args, f->n_args, buf, cap);
        }
        /* DuckDB's names: the aggregate's ORDER BY and FILTER too */
        for (size_t i = 0; i < f->n_agg_order; i++) {
            PgQuery__SortBy *sb = f->agg_order[i]->sort_by;
            char k[256];
            render(sb->node, k, sizeof k);
            size_t used = strlen(buf);
            snprintf(buf + used, cap - used, "%s%s%s", i ? ", " : " ORDER BY ", k,
                     sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC ? " DESC" : "");
        }
        size_t used = strlen(buf);
        if (used + 1 < cap)
            strcat(buf, ")");
        if (f->agg_filter) {
            char w[256];
            render(f->agg_filter, w, sizeof w);
            used = strlen(buf);
            snprintf(buf + used, cap - used, " FILTER (WHERE %s)", w);
        }
        return;
    }
    case PG_QUERY__NODE__NODE_TYPE_CAST: render(n->type_cast->arg, buf, cap); return;
    case PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION:
        snprintf(buf, cap, "%s", n->sqlvalue_function->op == PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_DATE
                                     ? "current_date" : "?column?");
        return;
    default: snprintf(buf, cap, "?column?"); return;
    }
}

/* --------------------------------------------------------- aggregation */
typedef struct aggstate {
    sq_vec groups;            /* group expressions (FROM scope) */
    int *group_cols;          /* their column ids after the pre-projection */
    sq_vec aggs;              /* distinct SQ_E_AGG nodes */
    int *agg_cols;            /* their output ids */
    int gid_col;              /* grouping sets: BIGINT, bit i set where key i is not grouped; -1 none */
    int block_start;          /* first column id of this block */
} aggstate;

static sq_expr *post_agg(sq_ctx *c, sq_expr *e, aggstate *st)
{
    if (!e)
        return NULL;
    for (int i = 0; i < st->groups.n; i++)
        if (st->group_cols && sq_expr_equal(e, st->groups.v[i]))
            return sq_col_ref(c, st->group_cols[i], e->loc);
    switch (e->kind) {
    case SQ_E_GROUPING: {
        /* Bit m-1-j of the value: argument j is not grouped in this row's
         * set: sum over j of (gid / 2^key(j)) % 2 * 2^(m-1-j). */
        sq_expr *v = sq_const(c, ex_expr_int(c->plan, 0, c->err), e->loc);
        for (int j = 0; j < e->n_args && v; j++) {
            int key = -1;
            for (int i = 0; i < st->groups.n && key < 0; i++)
                if (sq_expr_equal(e->args[j], st->groups.v[i]))
                    key = i;
            if (key < 0) {
                sq_fail(c, e->args[j]->loc, PA_EINVAL, "arguments to GROUPING must be grouping expressions");
                return NULL;
            }
            if (st->gid_col < 0)
                continue;   /* a plain GROUP BY groups every key: 0 */
            sq_expr *g = sq_col_ref(c, st->gid_col, e->loc);
            sq_expr *d[2] = {g, sq_const(c, ex_expr_bigint(c->plan, (int64_t)1 << key, c->err), e->loc)};
            sq_expr *q = sq_make(c, SQ_E_ARITH, EX_DIV, d, 2, e->loc);
            sq_expr *m[2] = {q, sq_const(c, ex_expr_bigint(c->plan, 2, c->err), e->loc)};
            sq_expr *bit = sq_make(c, SQ_E_ARITH, EX_MOD, m, 2, e->loc);
            sq_expr *w[2] = {bit, sq_const(c, ex_expr_bigint(c->plan, (int64_t)1 << (e->n_args - 1 - j), c->err), e->loc)};
            sq_expr *a[2] = {v, sq_make(c, SQ_E_ARITH, EX_MUL, w, 2, e->loc)};
            v = sq_make(c, SQ_E_ARITH, EX_ADD, a, 2, e->loc);
        }
        return v ? sq_cast(c, v, (pa_type){PA_TYPE_INTEGER, 0, 0}, e->loc) : NULL;
    }
    case SQ_E_AGG:
        for (int i = 0; i < st->aggs.n; i++)
            if (sq_expr_equal(e, st->aggs.v[i]) && (e->n_args == 0 || sq_expr_equal(e->args[0], st->aggs.v[i]->args[0])))
                return sq_col_ref(c, st->agg_cols[i], e->loc);
        sq_fail(c, e->loc, PA_EINTERNAL, "aggregate not collected");
        return NULL;
    case SQ_E_COL:
        if (e->col < st->block_start)
            return e; /* an outer (correlated) column */
        sq_fail(c, e->loc, PA_EINVAL, "column \"%s\" must appear in the GROUP BY clause or be used in an aggregate function",
                c->cols[e->col].name);
        return NULL;
    case SQ_E_CONST: return e;
    case SQ_E_SUBQ:
        if (e->subq->test && !(e->subq->test = post_agg(c, e->subq->test, st)))
            return NULL;
        return e;
    default: {
        sq_expr **a = sq_alloc(&c->A, (size_t)(e->n_args ? e->n_args : 1) * sizeof *a);
        if (!a) {
            sq_fail(c, e->loc, PA_ENOMEM, "out of memory binding an expression of %d operands", e->n_args);
            return NULL;
        }
        for (int i = 0; i < e->n_args; i++)
            if (!(a[i] = post_agg(c, e->args[i], st)))
                return NULL;
        return sq_rebuild(c, e, a);
    }
    }
}

/* e with the subqueries inside its aggregates' arguments joined into
 * *node (the rows the aggregates read). */
static sq_expr *join_agg_subqueries(sq_ctx *c, sq_expr *e, sq_node **node)
{
    if (!e || !sq_expr_has(e, SQ_E_SUBQ))
        return e;
    if (e->kind == SQ_E_AGG) {
        sq_expr *r = sq_join_subqueries(c, e, node);
        if (r && r != e && e->dx && sq_expr_has(e->dx, SQ_E_SUBQ))   /* var(DISTINCT x)'s x, read beside it */
            r->dx = sq_join_subqueries(c, e->dx, node);
        return r;
    }
    if (e->kind == SQ_E_SUBQ || e->n_args == 0)
        return e;
    sq_expr **a = sq_alloc(&c->A, (size_t)e->n_args * sizeof *a);
    if (!a) {
        sq_fail(c, e->loc, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    bool changed = false;
    for (int i = 0; i < e->n_args; i++) {
        if (!(a[i] = join_agg_subqueries(c, e->args[i], node)))
            return NULL;
        changed |= a[i] != e->args[i];
    }
    return changed ? sq_rebuild(c, e, a) : e;
}

static int collect_aggs(sq_ctx *c, sq_expr *e, aggstate *st)
{
    if (!e)
        return PA_OK;
    if (e->kind == SQ_E_AGG) {
        for (int i = 0; i < st->aggs.n; i++)
            if (sq_expr_equal(e, st->aggs.v[i]) && (e->n_args == 0 || sq_expr_equal(e->args[0], st->aggs.v[i]->args[0])))
                return PA_OK;
        return push(c, &st->aggs, e);
    }
    for (int i = 0; i < e->n_args; i++) {
        int rc = collect_aggs(c, e->args[i], st);
        if (rc)
            return rc;
    }
    if (e->kind == SQ_E_SUBQ && e->subq->test)
        return collect_aggs(c, e->subq->test, st);
    return PA_OK;
}

static sq_node *project(sq_ctx *c, sq_node *in, sq_expr **exprs, int n, const char **names);

/* ------------------------------------------------------ window functions */

typedef struct winplan {
    sq_vec calls;             /* the SQ_E_WINDOW nodes */
    sq_expr **repl;           /* what each becomes: a column (or a CASE for lag/lead's default) */
    sq_vec pre;               /* the pre-projection: the input's columns, then computed operands */
} winplan;

static int collect_windows(sq_ctx *c, sq_expr *e, winplan *wp)
{
    if (!e)
        return PA_OK;
    if (e->kind == SQ_E_WINDOW) {
        for (int i = 0; i < wp->calls.n; i++)
            if (wp->calls.v[i] == e)
                return PA_OK;
        return push(c, &wp->calls, e);
    }
    for (int i = 0; i < e->n_args; i++) {
        int rc = collect_windows(c, e->args[i], wp);
        if (rc)
            return rc;
    }
    return PA_OK;
}

/* The column id of operand e in the pre-projection (added when new). */
static int pre_col(sq_ctx *c, winplan *wp, sq_expr *e, int *col)
{
    for (int i = 0; i < wp->pre.n; i++)
        if (sq_expr_equal(wp->pre.v[i], e)) {
            *col = i;
            return PA_OK;
        }
    *col = wp->pre.n;
    return push(c, &wp->pre, e);
}

static sq_expr *replace_windows(sq_ctx *c, sq_expr *e, const winplan *wp)
{
    if (!e || !sq_expr_has(e, SQ_E_WINDOW))
        return e;
    if (e->kind == SQ_E_WINDOW) {
        for (int i = 0; i < wp->calls.n; i++)
            if (wp->calls.v[i] == e)
                return wp->repl[i];
        sq_fail(c, e->loc, PA_EINTERNAL, "window function not planned");
        return NULL;
    }
    sq_expr **a = sq_alloc(&c->A, (size_t)(e->n_args ? e->n_args : 1) * sizeof *a);
    if (!a) {
        sq_fail(c, e->loc, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    for (int i = 0; i < e->n_args; i++)
        if (!(a[i] = replace_windows(c, e->args[i], wp)))
            return NULL;
    return sq_rebuild(c, e, a);
}

/* Same PARTITION BY and ORDER BY (as pre-projection columns). */
static bool same_window(const sq_node *n, const int *part, int n_part, const ex_sort_key *keys, int n_keys)
{
    if (n->n_wpart != n_part || n->n_keys != n_keys)
        return false;
    for (int i = 0; i < n_part; i++)
        if (n->wpart[i] != part[i])
            return false;
    for (int i = 0; i < n_keys; i++)
        if (n->keys[i].column != keys[i].column || n->keys[i].descending != keys[i].descending ||
            n->keys[i].nulls_first != keys[i].nulls_first)
            return false;
    return true;
}

/* The window functions of exprs, computed by WINDOW nodes over *node (one
 * per distinct PARTITION BY / ORDER BY), after a projection of their
 * operands; exprs then read the results. */
static int plan_windows(sq_ctx *c, sq_node **node, sq_expr **exprs, int n)
{
    winplan wp = {0};
    int rc;
    for (int i = 0; i < n; i++)
        if ((rc = collect_windows(c, exprs[i], &wp)))
            return rc;
    sq_node *in = *node;
    for (int i = 0; i < in->n_out; i++)
        if ((rc = push(c, &wp.pre, sq_col_ref(c, in->out[i], -1))))
            return rc;
    int nw = wp.calls.n;
    int **ops = sq_alloc(&c->A, (size_t)nw * sizeof *ops);   /* per call: pre-projection positions of its operands */
    int *helper = sq_alloc(&c->A, (size_t)nw * sizeof *helper);
    wp.repl = sq_alloc(&c->A, (size_t)nw * sizeof *wp.repl);
    if (!ops || !helper || !wp.repl)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    int one = -1;   /* a non-NULL constant: lag/lead's default is taken where its shift is NULL */
    for (int w = 0; w < nw; w++) {
        sq_expr *e = wp.calls.v[w];
        if (!(ops[w] = sq_alloc(&c->A, (size_t)(e->n_args + 1) * sizeof(int))))
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        for (int a = 0; a < e->n_args; a++)
            if (a < e->win->n_arg || a >= e->win->n_arg + e->win->n_dflt)
                if ((rc = pre_col(c, &wp, e->args[a], &ops[w][a])))
                    return rc;
        helper[w] = -1;
        if (e->win->n_dflt) {
            if (one < 0 && (rc = pre_col(c, &wp, sq_const(c, ex_expr_int(c->plan, 1, c->err), -1), &one)))
                return rc;
            helper[w] = one;
        }
    }
    sq_node *pre = project(c, in, wp.pre.v, wp.pre.n, NULL);
    if (!pre)
        return c->err->code;
    pre->est = in->est;
    sq_node *cur = pre;
    /* WINDOW nodes, one per distinct window, each adding its calls. */
    bool *done = sq_alloc(&c->A, (size_t)nw * sizeof *done);
    if (!done)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    memset(done, 0, (size_t)nw * sizeof *done);
    for (int w = 0; w < nw; w++) {
        if (done[w])
            continue;
        sq_expr *e = wp.calls.v[w];
        sq_win *wi = e->win;
        int np = wi->n_part, nk = wi->n_order, base = wi->n_arg + wi->n_dflt;
        int *part = sq_alloc(&c->A, (size_t)(np + 1) * sizeof *part);
        ex_sort_key *keys = sq_alloc(&c->A, (size_t)(nk + 1) * sizeof *keys);
        int cap = 2 * nw + 1;
        ex_window_fn *fns = sq_alloc(&c->A, (size_t)cap * sizeof *fns);
        sq_node *wn = sq_node_new(c, SQ_L_WINDOW, cur->n_out + cap);
        if (!part || !keys || !fns || !wn)
            return c->err->code ? c->err->code : sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        for (int i = 0; i < np; i++)
            part[i] = pre->out[ops[w][base + i]];
        for (int i = 0; i < nk; i++) {
            keys[i] = wi->order[i];
            keys[i].column = pre->out[ops[w][base + np + i]];
        }
        wn->in[0] = cur;
        wn->wpart = part;
        wn->n_wpart = np;
        wn->keys = keys;
        wn->n_keys = nk;
        wn->wfns = fns;
        wn->est = cur->est;
        memcpy(wn->out, cur->out, (size_t)cur->n_out * sizeof(int));
        wn->n_out = cur->n_out;
        for (int v = w; v < nw; v++) {
            sq_expr *x = wp.calls.v[v];
            sq_win *xi = x->win;
            int xb = xi->n_arg + xi->n_dflt;
            int *xp = sq_alloc(&c->A, (size_t)(xi->n_part + 1) * sizeof *xp);
            ex_sort_key *xk = sq_alloc(&c->A, (size_t)(xi->n_order + 1) * sizeof *xk);
            if (!xp || !xk)
                return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
            for (int i = 0; i < xi->n_part; i++)
                xp[i] = pre->out[ops[v][xb + i]];
            for (int i = 0; i < xi->n_order; i++) {
                xk[i] = xi->order[i];
                xk[i].column = pre->out[ops[v][xb + xi->n_part + i]];
            }
            if (done[v] || !same_window(wn, xp, xi->n_part, xk, xi->n_order))
                continue;
            done[v] = true;
            ex_window_fn f = xi->fn;
            f.column = xi->n_arg ? pre->out[ops[v][0]] : -1;
            pa_type t;
            pa_type at = xi->n_arg ? x->args[0]->type : (pa_type){PA_TYPE_BIGINT, 0, 0};
            ex_window_fn probe = f;
            probe.column = xi->n_arg ? 0 : -1;
            if (ex_window_type(&probe, &at, &t, c->err) != PA_OK)
                return c->err->code;
            int col = sq_new_col(c, "window", t);
            if (col < 0)
                return c->err->code;
            fns[wn->n_wfns++] = f;
            wn->out[wn->n_out++] = col;
            sq_expr *val = sq_col_ref(c, col, x->loc);
            if (xi->n_dflt) {
                /* lag/lead with a default: the default where the shifted
                 * non-NULL constant is NULL (outside the partition). */
                ex_window_fn h = f;
                h.column = pre->out[helper[v]];
                int hcol = sq_new_col(c, "window", (pa_type){PA_TYPE_INTEGER, 0, 0});
                if (hcol < 0)
                    return c->err->code;
                fns[wn->n_wfns++] = h;
                wn->out[wn->n_out++] = hcol;
                sq_expr *isn = sq_make(c, SQ_E_ISNULL, 0, (sq_expr *[]){sq_col_ref(c, hcol, x->loc)}, 1, x->loc);
                sq_expr *d = sq_cast(c, x->args[xi->n_arg], x->type, x->loc);
                sq_expr *v2 = sq_cast(c, val, x->type, x->loc);
                sq_expr *cw[3] = {isn, d, v2};
                if (!(val = sq_make(c, SQ_E_CASE, 0, cw, 3, x->loc)))
                    return c->err->code;
            }
            if (!val)
                return c->err->code;
            wp.repl[v] = val;
        }
        cur = wn;
    }
    /* The defaults of lag/lead read columns of the row: the window nodes
     * pass every input column on, so the CASE can read them above. */
    for (int i = 0; i < n; i++)
        if (!(exprs[i] = replace_windows(c, exprs[i], &wp)))
            return c->err->code;
    *node = cur;
    return PA_OK;
}

/* ------------------------------------------------ ordered-set aggregates */

static int collect_kind(sq_ctx *c, sq_expr *e, sq_ekind k, sq_vec *v)
{
    if (!e)
        return PA_OK;
    if (e->kind == k) {
        for (int i = 0; i < v->n; i++)
            if (v->v[i] == e)
                return PA_OK;
        return push(c, v, e);
    }
    for (int i = 0; i < e->n_args; i++) {
        int rc = collect_kind(c, e->args[i], k, v);
        if (rc)
            return rc;
    }
    if (e->kind == SQ_E_SUBQ && e->subq->test)
        return collect_kind(c, e->subq->test, k, v);
    return PA_OK;
}

/* e with every node of from[i] replaced by to[i]. */
static sq_expr *replace_nodes(sq_ctx *c, sq_expr *e, sq_expr **from, sq_expr **to, int n)
{
    if (!e)
        return NULL;
    for (int i = 0; i < n; i++)
        if (e == from[i])
            return to[i];
    bool any = false;
    sq_expr **a = sq_alloc(&c->A, (size_t)(e->n_args ? e->n_args : 1) * sizeof *a);
    if (!a) {
        sq_fail(c, e->loc, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    for (int i = 0; i < e->n_args; i++) {
        if (!(a[i] = replace_nodes(c, e->args[i], from, to, n)))
            return NULL;
        any |= a[i] != e->args[i];
    }
    if (e->kind == SQ_E_SUBQ && e->subq->test &&
        !(e->subq->test = replace_nodes(c, e->subq->test, from, to, n)))
        return NULL;
    return any ? sq_rebuild(c, e, a) : e;
}

static sq_expr *bin(sq_ctx *c, sq_ekind k, int sub, sq_expr *a, sq_expr *b)
{
    sq_expr *v[2] = {a, b};
    return a && b ? sq_make(c, k, sub, v, 2, -1) : NULL;
}

static sq_expr *dconst(sq_ctx *c, double v) { return sq_const(c, ex_expr_double(c->plan, v, c->err), -1); }
static sq_expr *iconst(sq_ctx *c, int64_t v) { return sq_const(c, ex_expr_bigint(c->plan, v, c->err), -1); }

/* MIN(CASE WHEN cond THEN x END). */
static sq_expr *min_where(sq_ctx *c, sq_expr *cond, sq_expr *x)
{
    sq_expr *w[2] = {cond, x};
    sq_expr *cw = cond && x ? sq_make(c, SQ_E_CASE, 0, w, 2, -1) : NULL;
    return cw ? sq_agg(c, EX_AGG_MIN, cw, -1) : NULL;
}

/* Every node of from[n] in exprs[n_exprs] and *having replaced by to[]. */
static int replace_all(sq_ctx *c, sq_expr **exprs, int n_exprs, sq_expr **having, sq_expr **from, sq_expr **to, int n)
{
    for (int i = 0; i < n_exprs; i++)
        if (!(exprs[i] = replace_nodes(c, exprs[i], from, to, n)))
            return c->err->code;
    if (*having && !(*having = replace_nodes(c, *having, from, to, n)))
        return c->err->code;
    return PA_OK;
}

/* The ordered-set aggregates (SQ_E_OSAGG) of exprs[n_exprs] and having. */
static int collect_os(sq_ctx *c, sq_expr **exprs, int n_exprs, sq_expr *having, sq_vec *os)
{
    int rc;
    for (int i = 0; i < n_exprs; i++)
        if ((rc = collect_kind(c, exprs[i], SQ_E_OSAGG, os)))
            return rc;
    return collect_kind(c, having, SQ_E_OSAGG, os);
}

/* string_agg (the SQ_E_OSAGG of sub 3 in os, taken out of it): a
 * STRING_AGG window partitioned by the group keys, ordered by its ORDER BY,
 * gives the group's string at one of its rows (NULL at the others), which
 * MAX then picks. DISTINCT: only the first row of each (keys, x) takes
 * part, by a row_number() window over those before. */
static int plan_string_aggs(sq_ctx *c, sq_node **node, sq_expr **keys, int ng, sq_vec *os, sq_expr **exprs,
                            int n_exprs, sq_expr **having)
{
    sq_vec sa = {0}, rest = {0}, dn = {0};
    int rc;
    for (int i = 0; i < os->n; i++)
        if ((rc = push(c, os->v[i]->sub == 3 ? &sa : &rest, os->v[i])))
            return rc;
    if (!sa.n)
        return PA_OK;
    int *dn_of = sq_alloc(&c->A, (size_t)sa.n * sizeof(int));
    sq_expr **pk = sq_alloc(&c->A, (size_t)(ng + 1) * sizeof *pk);
    if (!dn_of || !pk)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    for (int k = 0; k < ng; k++)
        pk[k] = keys[k];
    for (int i = 0; i < sa.n; i++) {
        dn_of[i] = -1;
        if (!sa.v[i]->flag)
            continue;
        pk[ng] = sa.v[i]->args[0];
        dn_of[i] = dn.n;
        if ((rc = push(c, &dn, sq_window_call(c, EX_WIN_ROW_NUMBER, NULL, pk, ng + 1, NULL, NULL, 0, sa.v[i]->loc))))
            return rc;
        if (!dn.v[dn.n - 1])
            return c->err->code;
    }
    if (dn.n && (rc = plan_windows(c, node, dn.v, dn.n)))
        return rc;
    sq_vec w = {0};
    for (int i = 0; i < sa.n; i++) {
        sq_expr *o = sa.v[i], *x = o->args[0];
        if (dn_of[i] >= 0) {
            sq_expr *cw[2] = {bin(c, SQ_E_CMP, EX_EQ, dn.v[dn_of[i]], iconst(c, 1)), x};
            if (!cw[0] || !(x = sq_make(c, SQ_E_CASE, 0, cw, 2, o->loc)))
                return c->err->code;
        }
        sq_expr *call = sq_window_call(c, EX_WIN_STRING_AGG, x, keys, ng, o->args + 1, o->win->order,
                                       o->n_args - 1, o->loc);
        if (!call)
            return c->err->code;
        call->win->fn.sep = o->win->fn.sep;
        call->win->fn.sep_len = o->win->fn.sep_len;
        if ((rc = push(c, &w, call)))
            return rc;
    }
    if ((rc = plan_windows(c, node, w.v, w.n)))
        return rc;
    sq_expr **to = sq_alloc(&c->A, (size_t)sa.n * sizeof *to);
    if (!to)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    for (int i = 0; i < sa.n; i++)
        if (!(to[i] = sq_agg(c, EX_AGG_MAX, w.v[i], sa.v[i]->loc)))
            return c->err->code;
    if ((rc = replace_all(c, exprs, n_exprs, having, sa.v, to, sa.n)))
        return rc;
    *os = rest;
    return PA_OK;
}

/* percentile_cont / percentile_disc / mode in exprs, computed from windows
 * over the rows before grouping (partitioned by the group keys), then
 * aggregates that pick the rows they name:
 *   rn = row_number() OVER (PARTITION BY keys ORDER BY x NULLS LAST),
 *   n  = count(x) OVER (PARTITION BY keys);
 *   percentile_disc(p): the value at rn = max(1, ceil(p * n));
 *   percentile_cont(p): at pos = p * (n - 1) (0-based) the values at
 *     floor(pos) and ceil(pos), interpolated, in DOUBLE;
 *   mode(): cnt = count(x) OVER (PARTITION BY keys, x), then the value at
 *     row_number() OVER (PARTITION BY keys ORDER BY cnt DESC, x) = 1.
 * as PostgreSQL defines them. */
static int plan_ordered_sets(sq_ctx *c, sq_node **node, const aggstate *st, sq_expr **exprs, int n_exprs,
                             sq_expr **having)
{
    sq_vec os = {0};
    int rc;
    if ((rc = collect_os(c, exprs, n_exprs, *having, &os)))
        return rc;
    if (!os.n)
        return PA_OK;
    int ng = st->groups.n;
    sq_expr **keys = st->groups.v;
    if ((rc = plan_string_aggs(c, node, keys, ng, &os, exprs, n_exprs, having)) || !os.n)
        return rc;
    /* stage 1: rn and n (cont, disc) or cnt (mode) */
    sq_vec w1 = {0};
    for (int i = 0; i < os.n; i++) {
        sq_expr *o = os.v[i], *x = o->args[0];
        ex_sort_key dir = {-1, o->flag, false};
        if (o->sub == 2) {
            sq_expr **pk = sq_alloc(&c->A, (size_t)(ng + 1) * sizeof *pk);
            if (!pk)
                return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
            for (int k = 0; k < ng; k++)
                pk[k] = keys[k];
            pk[ng] = x;
            /* (the second slot repeats the first: only the first is read) */
            sq_expr *cnt = sq_window_call(c, EX_WIN_COUNT, x, pk, ng + 1, NULL, NULL, 0, o->loc);
            if ((rc = push(c, &w1, cnt)) || (rc = push(c, &w1, cnt)))
                return rc;
        } else if ((rc = push(c, &w1, sq_window_call(c, EX_WIN_ROW_NUMBER, NULL, keys, ng, &x, &dir, 1, o->loc))) ||
                   (rc = push(c, &w1, sq_window_call(c, EX_WIN_COUNT, x, keys, ng, NULL, NULL, 0, o->loc))))
            return rc;
    }
    if ((rc = plan_windows(c, node, w1.v, w1.n)))
        return rc;
    /* stage 2 (mode): the first row by (cnt DESC, x) */
    sq_vec w2 = {0};
    int *w2_of = sq_alloc(&c->A, (size_t)os.n * sizeof(int));
    if (!w2_of)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    for (int i = 0; i < os.n; i++) {
        sq_expr *o = os.v[i];
        w2_of[i] = -1;
        if (o->sub != 2)
            continue;
        sq_expr *ord[2] = {w1.v[2 * i], o->args[0]};
        ex_sort_key dirs[2] = {{-1, true, false}, {-1, o->flag, false}};
        w2_of[i] = w2.n;
        if ((rc = push(c, &w2, sq_window_call(c, EX_WIN_ROW_NUMBER, NULL, keys, ng, ord, dirs, 2, o->loc))))
            return rc;
        if (!w2.v[w2.n - 1])
            return c->err->code;
    }
    if (w2.n && (rc = plan_windows(c, node, w2.v, w2.n)))
        return rc;
    /* the aggregates */
    sq_expr **to = sq_alloc(&c->A, (size_t)os.n * sizeof *to);
    if (!to)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    for (int i = 0; i < os.n; i++) {
        sq_expr *o = os.v[i], *x = o->args[0], *v = NULL;
        double p;
        memcpy(&p, &o->n, sizeof p);
        if (o->sub == 2) {
            sq_expr *cnt = w1.v[2 * i], *rk = w2.v[w2_of[i]];
            v = min_where(c, bin(c, SQ_E_AND, 0, bin(c, SQ_E_CMP, EX_EQ, rk, iconst(c, 1)),
                                 bin(c, SQ_E_CMP, EX_GT, cnt, iconst(c, 0))), x);
        } else {
            sq_expr *rn = w1.v[2 * i], *n = w1.v[2 * i + 1];
            if (o->sub == 1) {
                sq_expr *k = sq_math(c, EX_CEIL, bin(c, SQ_E_ARITH, EX_MUL, dconst(c, p), n), NULL, 0, false, -1);
                sq_expr *at = bin(c, SQ_E_OR, 0, bin(c, SQ_E_CMP, EX_EQ, rn, k),
                                  bin(c, SQ_E_AND, 0, bin(c, SQ_E_CMP, EX_LT, k, dconst(c, 1)),
                                      bin(c, SQ_E_CMP, EX_EQ, rn, iconst(c, 1))));
                v = min_where(c, at, x);
            } else {
                sq_expr *xd = sq_cast(c, x, (pa_type){PA_TYPE_DOUBLE, 0, 0}, -1);
                sq_expr *pos = bin(c, SQ_E_ARITH, EX_MUL, dconst(c, p), bin(c, SQ_E_ARITH, EX_SUB, n, iconst(c, 1)));
                sq_expr *lo = sq_math(c, EX_FLOOR, pos, NULL, 0, false, -1);
                sq_expr *hi = sq_math(c, EX_CEIL, pos, NULL, 0, false, -1);
                sq_expr *xl = min_where(c, bin(c, SQ_E_CMP, EX_EQ, rn, bin(c, SQ_E_ARITH, EX_ADD, lo, dconst(c, 1))), xd);
                sq_expr *xh = min_where(c, bin(c, SQ_E_CMP, EX_EQ, rn, bin(c, SQ_E_ARITH, EX_ADD, hi, dconst(c, 1))), xd);
                /* the group's n, after grouping: count(x) */
                sq_expr *cnt = sq_agg(c, EX_AGG_COUNT, x, -1);
                sq_expr *gpos = bin(c, SQ_E_ARITH, EX_MUL, dconst(c, p),
                                    sq_cast(c, bin(c, SQ_E_ARITH, EX_SUB, cnt, iconst(c, 1)),
                                            (pa_type){PA_TYPE_DOUBLE, 0, 0}, -1));
                sq_expr *frac = bin(c, SQ_E_ARITH, EX_SUB, gpos, sq_math(c, EX_FLOOR, gpos, NULL, 0, false, -1));
                v = bin(c, SQ_E_ARITH, EX_ADD, xl, bin(c, SQ_E_ARITH, EX_MUL, bin(c, SQ_E_ARITH, EX_SUB, xh, xl), frac));
            }
        }
        if (!v)
            return c->err->code ? c->err->code : sq_fail(c, o->loc, PA_EINTERNAL, "ordered-set aggregate");
        to[i] = v;
    }
    return replace_all(c, exprs, n_exprs, having, os.v, to, os.n);
}

/* Ordered-set aggregates with grouping sets: for each set, windows
 * partitioned by that set's keys give each aggregate its value for that
 * set's groups (plan_ordered_sets over the aggregates alone); the value a
 * row takes is the one of its set, picked by GROUPING(all keys), whose bits
 * name the keys the set leaves out. sets[s]: bit i = key i grouped. */
static int plan_ordered_grouping_sets(sq_ctx *c, sq_node **node, const aggstate *st, const uint64_t *sets,
                                      int n_sets, sq_expr **exprs, int n_exprs, sq_expr **having)
{
    sq_vec os = {0};
    int rc;
    if ((rc = collect_os(c, exprs, n_exprs, *having, &os)))
        return rc;
    const int m = st->groups.n;
    if (!os.n || n_sets <= 0)
        return PA_OK;
    if (m > 31)
        return sq_fail(c, os.v[0]->loc, PA_EUNSUPPORTED,
                       "percentile_cont, percentile_disc, median, mode and string_agg with grouping sets over more "
                       "than 31 keys are not supported");
    sq_expr *grp = sq_alloc(&c->A, sizeof *grp);
    sq_expr **to = sq_alloc(&c->A, (size_t)os.n * sizeof *to), **v = sq_alloc(&c->A, (size_t)os.n * sizeof *v);
    if (!grp || !to || !v)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    *grp = (sq_expr){.kind = SQ_E_GROUPING, .loc = -1, .col = -1, .type = {PA_TYPE_INTEGER, 0, 0}, .n_args = m,
                     .args = st->groups.v};
    if (!(grp->tx = ex_expr_col_typed(c->plan, 0, grp->type, c->err)))
        return c->err->code;
    for (int s = 0; s < n_sets; s++) {
        aggstate sst = *st;
        sst.groups = (sq_vec){0};
        int64_t left_out = 0;
        for (int j = 0; j < m; j++) {
            if (sets[s] >> j & 1) {
                if ((rc = push(c, &sst.groups, st->groups.v[j])))
                    return rc;
            } else {
                left_out |= (int64_t)1 << (m - 1 - j);
            }
        }
        memcpy(v, os.v, (size_t)os.n * sizeof *v);
        sq_expr *none = NULL;
        if ((rc = plan_ordered_sets(c, node, &sst, v, os.n, &none)))
            return rc;
        for (int i = 0; i < os.n; i++) {
            if (s == 0) {
                to[i] = v[i];
                continue;
            }
            sq_expr *w[3] = {bin(c, SQ_E_CMP, EX_EQ, grp, iconst(c, left_out)), v[i], to[i]};
            if (!w[0] || !(to[i] = sq_make(c, SQ_E_CASE, 0, w, 3, os.v[i]->loc)))
                return c->err->code;
        }
    }
    return replace_all(c, exprs, n_exprs, having, os.v, to, os.n);
}

static bool is_dom_col(const sq_subq *q, int col)
{
    for (int i = 0; q && q->domain && i < q->n_dom; i++)
        if (q->dom_inner[i] == col)
            return true;
    return false;
}

/* A column of this block read outside an aggregate, or NULL (a domain
 * column is a group key). */
static const sq_expr *bare_col(const sq_expr *e, int block_start, const sq_subq *dom)
{
    if (!e || e->kind == SQ_E_AGG)
        return NULL;
    if (e->kind == SQ_E_COL)
        return e->col >= block_start && !is_dom_col(dom, e->col) ? e : NULL;
    for (int i = 0; i < e->n_args; i++) {
        const sq_expr *b = bare_col(e->args[i], block_start, dom);
        if (b)
            return b;
    }
    return NULL;
}

/* e (before aggregation) with every aggregate replaced by its value over
 * no rows: COUNT 0, the others NULL. */
static sq_expr *over_no_rows(sq_ctx *c, sq_expr *e, const sq_subq *dom)
{
    if (e->kind == SQ_E_COL && is_dom_col(dom, e->col))
        return e;   /* an outer value: read after the join (sq_subst_cols) */
    switch (e->kind) {
    case SQ_E_AGG: {
        bool count = e->sub == EX_AGG_COUNT || e->sub == EX_AGG_COUNT_STAR || e->sub == EX_AGG_COUNT_DISTINCT;
        ex_expr *x = count ? ex_expr_bigint(c->plan, 0, c->err) : ex_expr_null(c->plan, e->type, c->err);
        sq_expr *k = x ? sq_const(c, x, e->loc) : NULL;
        return k ? sq_cast(c, k, e->type, e->loc) : NULL;
    }
    case SQ_E_CONST: return e;
    case SQ_E_COL: /* bare columns were refused; an outer one is refused too */
    case SQ_E_SUBQ:
        sq_fail(c, e->loc, PA_EUNSUPPORTED,
                "a subquery or outer column in the value of a correlated aggregate subquery is not supported");
        return NULL;
    default: {
        sq_expr **a = sq_alloc(&c->A, (size_t)(e->n_args ? e->n_args : 1) * sizeof *a);
        if (!a) {
            sq_fail(c, e->loc, PA_ENOMEM, "out of memory binding an expression of %d operands", e->n_args);
            return NULL;
        }
        for (int i = 0; i < e->n_args; i++)
            if (!(a[i] = over_no_rows(c, e->args[i], dom)))
                return NULL;
        return sq_rebuild(c, e, a);
    }
    }
}

/* A correlated scalar aggregate is grouped on its correlation keys and
 * LEFT-joined to the outer rows, so an outer row without matching inner
 * rows gets NULL from the join; PostgreSQL evaluates the subquery over no
 * rows instead: its select expression with COUNT 0 and the other
 * aggregates NULL, or NULL when HAVING is not true for no rows. That value
 * (a constant) goes to q->empty, NULL when it is NULL. */
static int empty_value(sq_ctx *c, sq_expr *value, sq_expr *having, const sq_subq *dom, sq_expr **out)
{
    sq_expr *v = over_no_rows(c, value, dom);
    if (v && having) {
        sq_expr *a[2] = {over_no_rows(c, having, dom), v};
        v = sq_make(c, SQ_E_CASE, 0, a, 2, value->loc);
    }
    if (!v)
        return c->err->code ? c->err->code : PA_EINTERNAL;
    *out = NULL;
    if (ex_expr_is_null_const(v->tx))
        return PA_OK;
    if (ex_expr_is_const(v->tx) && v->kind != SQ_E_CONST && !(v = sq_const(c, v->tx, value->loc)))
        return c->err->code;
    *out = v;
    return PA_OK;
}

/* PROJECT of exprs on top of in; plain column references keep their ids. */
static sq_node *project(sq_ctx *c, sq_node *in, sq_expr **exprs, int n, const char **names)
{
    sq_node *p = sq_node_new(c, SQ_L_PROJECT, n);
    if (!p)
        return NULL;
    p->in[0] = in;
    p->exprs = sq_alloc(&c->A, (size_t)(n + 1) * sizeof *p->exprs);
    if (!p->exprs) {
        sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        p->exprs[i] = exprs[i];
        if (exprs[i]->kind == SQ_E_COL)
            p->out[i] = exprs[i]->col;
        else if ((p->out[i] = sq_new_col(c, names && names[i] ? names[i] : "?column?", exprs[i]->type)) < 0)
            return NULL;
    }
    p->est = in ? in->est : 1;
    return p;
}

/* An AGG node over `in` grouping by the n_groups columns `groups` (kept
 * with their ids) with the aggregates defs (outputs filled in here, typed
 * by ex_agg_type). */
static sq_node *agg_over(sq_ctx *c, sq_node *in, const int *groups, int n_groups, sq_aggdef *defs, int n_defs)
{
    sq_node *a = sq_node_new(c, SQ_L_AGG, n_groups + n_defs);
    int *g = sq_alloc(&c->A, (size_t)(n_groups + 1) * sizeof *g);
    sq_aggdef *d = sq_alloc(&c->A, (size_t)(n_defs + 1) * sizeof *d);
    if (!a || !g || !d) {
        sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    a->in[0] = in;
    memcpy(g, groups, (size_t)n_groups * sizeof *g);
    for (int i = 0; i < n_groups; i++)
        a->out[i] = g[i];
    for (int i = 0; i < n_defs; i++) {
        pa_type t = {PA_TYPE_BIGINT, 0, 0};
        if (defs[i].kind != EX_AGG_COUNT_STAR && ex_agg_type(defs[i].kind, c->cols[defs[i].arg].type, &t, c->err))
            return NULL;
        if ((defs[i].out = sq_new_col(c, "agg", t)) < 0)
            return NULL;
        d[i] = defs[i];
        a->out[n_groups + i] = d[i].out;
    }
    a->n_groups = n_groups;
    a->groups = g;
    a->n_aggs = n_defs;
    a->aggs = d;
    a->est = sq_estimate(c, a);
    return a;
}

/* Whether aggregate a is COUNT(DISTINCT (a, b, ...)): a row of values. */
static bool row_count(const sq_expr *a)
{
    return a->sub == EX_AGG_COUNT_DISTINCT && a->flag;
}

/* Whether aggregate a is one the distinct rows of (keys, xs) give: for a
 * row, COUNT(DISTINCT (xs)); for one x, SUM / AVG / COUNT (DISTINCT x) or
 * MIN / MAX of x. */
static bool over_distinct(const sq_expr *a, sq_expr *const *xs, int nx, bool row)
{
    if (a->n_args != nx)
        return false;
    if (a->dx)   /* the sums of var(DISTINCT x) */
        return nx == 1 && !row && sq_expr_equal(a->dx, xs[0]);
    for (int i = 0; i < nx; i++)
        if (!sq_expr_equal(a->args[i], xs[i]))
            return false;
    if (row)
        return row_count(a);
    return !row_count(a) &&
           (a->flag || a->sub == EX_AGG_COUNT_DISTINCT || a->sub == EX_AGG_MIN || a->sub == EX_AGG_MAX);
}

/* SUM or AVG (DISTINCT x) beside aggregates of other values (count(*),
 * sum(y), avg(y), ...), and COUNT(DISTINCT (a, b, ...)) (xs its row, row
 * true): two aggregations. The first groups by the keys and xs and computes
 * the other aggregates' partials (COUNT, SUM, MIN, MAX; AVG as SUM and
 * COUNT); in the second, grouped by the keys, each x comes once per group,
 * so the DISTINCT aggregates are plain ones over x (a row's count is the
 * count of rows), and the partials combine (COUNT as the SUM of counts). A
 * projection gives every aggregate its value and type: a COUNT over no
 * rows is 0, an AVG is the SUM over the COUNT (NULL for none). */
static int aggregate_two_level(sq_ctx *c, sq_node **node, aggstate *st, sq_expr *const *xs, int nx, bool row)
{
    int rc;
    sq_vec pre = {0};
    for (int i = 0; i < st->groups.n; i++)
        if ((rc = push(c, &pre, st->groups.v[i])))
            return rc;
    for (int i = 0; i < nx; i++)
        if ((rc = push(c, &pre, xs[i])))
            return rc;
    /* Values a DISTINCT aggregate reads through a function of x (the sums
     * of var(DISTINCT x): x as DECIMAL(38), its square): keys of the first
     * aggregation too, which changes none of its groups. */
    int nf = 0;
    for (int i = 0; i < st->aggs.n; i++)
        if (over_distinct(st->aggs.v[i], xs, nx, row) && st->aggs.v[i]->dx) {
            if ((rc = push(c, &pre, st->aggs.v[i]->args[0])))
                return rc;
            nf++;
        }
    for (int i = 0; i < st->aggs.n; i++) {
        const sq_expr *a = st->aggs.v[i];
        if (over_distinct(a, xs, nx, row))
            continue;
        if (a->flag || a->sub == EX_AGG_COUNT_DISTINCT)
            return sq_fail(c, a->loc, PA_EUNSUPPORTED,
                           "aggregates with DISTINCT over different values are not supported together with SUM or "
                           "AVG (DISTINCT ...) or COUNT(DISTINCT (a, b, ...)) (COUNT (DISTINCT ...) of several "
                           "single values is)");
        if (a->n_args && (rc = push(c, &pre, a->args[0])))
            return rc;
    }
    sq_node *in = project(c, *node, pre.v, pre.n, NULL);
    if (!in)
        return c->err->code;
    const int ng = st->groups.n, *ids = in->out;
    const int x_id = ids[ng];   /* one x: its column */
    sq_aggdef *d1 = sq_alloc(&c->A, (size_t)(2 * st->aggs.n + 1) * sizeof *d1);
    sq_aggdef *d2 = sq_alloc(&c->A, (size_t)(2 * st->aggs.n + 1) * sizeof *d2);
    int *first = sq_alloc(&c->A, (size_t)(st->aggs.n + 1) * sizeof *first);   /* agg i's first def in d2 */
    if (!d1 || !d2 || !first)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    int n1 = 0, n2 = 0, k = ng + nx + nf, f = ng + nx;
    for (int i = 0; i < st->aggs.n; i++) {
        const sq_expr *a = st->aggs.v[i];
        first[i] = n2;
        if (over_distinct(a, xs, nx, row)) {   /* a row's distinct count: AGG1's rows */
            ex_agg_kind kd = row                               ? EX_AGG_COUNT_STAR
                             : a->sub == EX_AGG_COUNT_DISTINCT ? EX_AGG_COUNT
                                                               : (ex_agg_kind)a->sub;
            d2[n2++] = (sq_aggdef){kd, row ? -1 : a->dx ? ids[f++] : x_id, -1};
            continue;
        }
        int arg = a->n_args ? ids[k++] : -1;
        switch ((ex_agg_kind)a->sub) {
        case EX_AGG_COUNT_STAR:
        case EX_AGG_COUNT:
        case EX_AGG_SUM:
            d1[n1++] = (sq_aggdef){(ex_agg_kind)a->sub, arg, -1};
            d2[n2++] = (sq_aggdef){EX_AGG_SUM, n1 - 1, -1};   /* arg: d1's index until AGG1 exists */
            break;
        case EX_AGG_MIN:
        case EX_AGG_MAX:
            d1[n1++] = (sq_aggdef){(ex_agg_kind)a->sub, arg, -1};
            d2[n2++] = (sq_aggdef){(ex_agg_kind)a->sub, n1 - 1, -1};
            break;
        case EX_AGG_AVG:
            d1[n1++] = (sq_aggdef){EX_AGG_SUM, arg, -1};
            d2[n2++] = (sq_aggdef){EX_AGG_SUM, n1 - 1, -1};
            d1[n1++] = (sq_aggdef){EX_AGG_COUNT, arg, -1};
            d2[n2++] = (sq_aggdef){EX_AGG_SUM, n1 - 1, -1};
            break;
        default:
            return sq_fail(c, a->loc, PA_EINTERNAL, "aggregate kind %d beside SUM or AVG (DISTINCT ...)", a->sub);
        }
    }
    int *g1 = sq_alloc(&c->A, (size_t)(ng + nx + nf + 1) * sizeof *g1);
    if (!g1)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    memcpy(g1, ids, (size_t)(ng + nx + nf) * sizeof *g1);
    sq_node *a1 = agg_over(c, in, g1, ng + nx + nf, d1, n1);
    if (!a1)
        return c->err->code;
    /* d2's partial arguments: AGG1's outputs. */
    for (int i = 0, j = 0; i < st->aggs.n; i++) {
        if (over_distinct(st->aggs.v[i], xs, nx, row))
            continue;
        for (int m = first[i]; m < (i + 1 < st->aggs.n ? first[i + 1] : n2); m++, j++)
            d2[m].arg = a1->aggs[d2[m].arg].out;
    }
    sq_node *a2 = agg_over(c, a1, g1, ng, d2, n2);
    if (!a2)
        return c->err->code;
    /* The projection: the keys, then each aggregate's value. */
    sq_vec fin = {0};
    for (int i = 0; i < ng; i++)
        if ((rc = push(c, &fin, sq_col_ref(c, g1[i], -1))))
            return rc;
    for (int i = 0; i < st->aggs.n; i++) {
        const sq_expr *a = st->aggs.v[i];
        sq_expr *v = sq_col_ref(c, a2->aggs[first[i]].out, a->loc);
        if (!v)
            return c->err->code;
        bool partial = !over_distinct(a, xs, nx, row);
        if (partial && (a->sub == EX_AGG_COUNT || a->sub == EX_AGG_COUNT_STAR)) {
            sq_expr *isn = sq_make(c, SQ_E_ISNULL, 1, &v, 1, -1);   /* IS NOT NULL */
            sq_expr *w[3] = {isn, v, iconst(c, 0)};
            v = isn && w[2] ? sq_make(c, SQ_E_CASE, 0, w, 3, -1) : NULL;
        } else if (partial && a->sub == EX_AGG_AVG) {
            const pa_type dbl = {PA_TYPE_DOUBLE, 0, 0};
            sq_expr *n = sq_col_ref(c, a2->aggs[first[i] + 1].out, -1);
            sq_expr *q = bin(c, SQ_E_ARITH, EX_DIV, sq_cast(c, v, dbl, -1), sq_cast(c, n, dbl, -1));
            ex_expr *nul = ex_expr_null(c->plan, dbl, c->err);
            sq_expr *w[3] = {bin(c, SQ_E_CMP, EX_GT, n, iconst(c, 0)), q, nul ? sq_const(c, nul, -1) : NULL};
            v = w[0] && w[1] && w[2] ? sq_make(c, SQ_E_CASE, 0, w, 3, -1) : NULL;
        }
        if (v && (v->type.id != a->type.id || v->type.precision != a->type.precision || v->type.scale != a->type.scale))
            v = sq_cast(c, v, a->type, a->loc);
        if ((rc = push(c, &fin, v)))
            return rc;
    }
    sq_node *p = project(c, a2, fin.v, fin.n, NULL);
    st->group_cols = sq_alloc(&c->A, (size_t)(ng + 1) * sizeof(int));
    st->agg_cols = sq_alloc(&c->A, (size_t)(st->aggs.n + 1) * sizeof(int));
    if (!p || !st->group_cols || !st->agg_cols)
        return c->err->code ? c->err->code : sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    memcpy(st->group_cols, p->out, (size_t)ng * sizeof(int));
    memcpy(st->agg_cols, p->out + ng, (size_t)st->aggs.n * sizeof(int));
    p->est = a2->est;
    *node = p;
    return PA_OK;
}

/* two_level_ok: SUM / AVG (DISTINCT x) may stand beside other aggregates
 * (a plain GROUP BY outside a correlated subquery). */
static int aggregate(sq_ctx *c, sq_node **node, aggstate *st, bool two_level_ok)
{
    /* SUM / AVG (DISTINCT x): the aggregates over the distinct (keys, x)
     * rows, when every aggregate reads that one x and is DISTINCT or MIN /
     * MAX (the same over distinct values); COUNT(DISTINCT x) is then COUNT.
     * Beside other aggregates: aggregate_two_level. */
    bool distinct = false, row = false;
    sq_expr *const *xs = NULL;
    int nx = 0;
    for (int i = 0; i < st->aggs.n; i++)
        if (st->aggs.v[i]->flag) {
            distinct = true;
            if (!xs) {
                xs = st->aggs.v[i]->dx ? &st->aggs.v[i]->dx : st->aggs.v[i]->args;
                nx = st->aggs.v[i]->dx ? 1 : st->aggs.v[i]->n_args;
                row = row_count(st->aggs.v[i]);
            }
        }
    for (int i = 0; distinct && i < st->aggs.n; i++) {
        const sq_expr *a = st->aggs.v[i];
        if (over_distinct(a, xs, nx, row) && !row)
            continue;
        if (two_level_ok)
            return aggregate_two_level(c, node, st, xs, nx, row);
        return sq_fail(c, a->loc, PA_EUNSUPPORTED, "%s is not supported with grouping sets or in a correlated subquery",
                       row ? "COUNT(DISTINCT (a, b, ...))" : "SUM or AVG (DISTINCT x) beside aggregates of other values");
    }
    /* Pre-projection: the group keys and the aggregates' arguments. */
    sq_vec pre = {0};
    int rc;
    for (int i = 0; i < st->groups.n; i++)
        if ((rc = push(c, &pre, st->groups.v[i])))
            return rc;
    for (int i = 0; i < st->aggs.n; i++)
        if (st->aggs.v[i]->n_args && (rc = push(c, &pre, st->aggs.v[i]->args[0])))
            return rc;
    bool all_cols = !distinct;   /* DISTINCT: over exactly these columns */
    for (int i = 0; i < pre.n; i++)
        all_cols &= pre.v[i]->kind == SQ_E_COL;
    sq_node *in = *node;
    if (!all_cols || pre.n == 0) {
        if (pre.n == 0) {
            /* COUNT(*) alone: keep one column to count rows of. */
            if (in->n_out == 0)
                goto build;
            if ((rc = push(c, &pre, sq_col_ref(c, in->out[0], -1))))
                return rc;
        }
        if (!(in = project(c, in, pre.v, pre.n, NULL)))
            return c->err->code;
    }
build:;
    if (distinct) {
        sq_node *d = sq_node_new(c, SQ_L_DISTINCT, in->n_out);
        if (!d)
            return c->err->code;
        memcpy(d->out, in->out, (size_t)in->n_out * sizeof *d->out);
        d->in[0] = in;
        d->est = in->est;
        in = d;
    }
    /* The pre-projection's columns in order (a projection outputs them in
     * that order; without one they are the plain columns). */
    int *ids = in->out;
    if (in == *node) {
        ids = sq_alloc(&c->A, (size_t)(pre.n + 1) * sizeof *ids);
        if (!ids)
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        for (int i = 0; i < pre.n; i++)
            ids[i] = pre.v[i]->col;
    }
    int k = 0;
    sq_node *a = sq_node_new(c, SQ_L_AGG, st->groups.n + st->aggs.n);
    st->group_cols = sq_alloc(&c->A, (size_t)(st->groups.n + 1) * sizeof(int));
    st->agg_cols = sq_alloc(&c->A, (size_t)(st->aggs.n + 1) * sizeof(int));
    if (!a || !st->group_cols || !st->agg_cols)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    a->in[0] = in;
    a->n_groups = st->groups.n;
    a->groups = sq_alloc(&c->A, (size_t)(st->groups.n + 1) * sizeof(int));
    a->n_aggs = st->aggs.n;
    a->aggs = sq_alloc(&c->A, (size_t)(st->aggs.n + 1) * sizeof *a->aggs);
    if (!a->groups || !a->aggs)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    for (int i = 0; i < st->groups.n; i++) {
        st->group_cols[i] = ids[k++];
        a->groups[i] = st->group_cols[i];
        a->out[i] = st->group_cols[i];
    }
    for (int i = 0; i < st->aggs.n; i++) {
        sq_expr *e = st->aggs.v[i];
        int out = sq_new_col(c, "agg", e->type);
        if (out < 0)
            return c->err->code;
        ex_agg_kind kind = distinct && e->sub == EX_AGG_COUNT_DISTINCT ? EX_AGG_COUNT : (ex_agg_kind)e->sub;
        a->aggs[i] = (sq_aggdef){kind, e->n_args ? ids[k++] : -1, out};
        st->agg_cols[i] = out;
        a->out[st->groups.n + i] = out;
    }
    a->est = sq_estimate(c, a);
    *node = a;
    return PA_OK;
}

/* ------------------------------------------------------------ the block */
static bool refs_outer(const sq_ctx *c, const sq_expr *e, int start)
{
    uint8_t *set = sq_alloc((sq_arena *)&c->A, (size_t)c->n_cols + 1);
    if (!set)
        return false;
    sq_expr_cols(e, set);
    for (int i = 0; i < start; i++)
        if (set[i])
            return true;
    return false;
}

/* The group keys a correlated aggregate subquery adds to out: the inner
 * side of each correlation equality (the join then brings each group to
 * its outer row) and the domain's columns (the select list may read them:
 * one value per group). */
static int corr_group_keys(sq_ctx *c, const sq_vec *corr, const sq_subq *dom, int block_start, sq_vec *out)
{
    int rc;
    for (int i = 0; i < corr->n; i++) {
        sq_expr *e = corr->v[i];
        int inner_side = -1;
        if (e->kind == SQ_E_CMP && e->sub == EX_EQ) {
            bool l_out = refs_outer(c, e->args[0], block_start), r_out = refs_outer(c, e->args[1], block_start);
            if (l_out != r_out)
                inner_side = l_out ? 1 : 0;
        }
        if (inner_side < 0)
            return sq_fail_corr(c, e->loc, "a correlated aggregate subquery needs equality correlations (inner = outer)");
        if ((rc = push(c, out, e->args[inner_side])))
            return rc;
    }
    for (int i = 0; dom && i < dom->n_dom; i++)
        if (dom->dom_used[i] && (rc = push(c, out, sq_col_ref(c, dom->dom_inner[i], -1))))
            return rc;
    return PA_OK;
}

static int position_of(sq_ctx *c, pgn *n, int n_items, int *pos)
{
    if (n && n->node_case == PG_QUERY__NODE__NODE_A_CONST && n->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL) {
        int v = n->a_const->ival->ival;
        if (v < 1 || v > n_items)
            return sq_fail(c, n->a_const->location, PA_EINVAL, "position %d is not in the select list (1..%d)", v, n_items);
        *pos = v - 1;
        return 1;
    }
    return 0;
}

static int64_t const_int(sq_ctx *c, pgn *n, const char *what, int *rc)
{
    if (!n)
        return -1;
    if (n->node_case == PG_QUERY__NODE__NODE_A_CONST && n->a_const->isnull)
        return -1;
    /* Past 32 bits the grammar gives the digits as a "float" constant. */
    if (n->node_case == PG_QUERY__NODE__NODE_A_CONST && n->a_const->val_case == PG_QUERY__A__CONST__VAL_FVAL) {
        const char *t = n->a_const->fval->fval;
        bool digits = t && *t;
        for (const char *p = t; digits && *p; p++)
            digits = *p >= '0' && *p <= '9';
        if (digits) {
            errno = 0;
            long long v = strtoll(t, NULL, 10);
            if (errno == 0)
                return v;
            *rc = sq_fail(c, n->a_const->location, PA_EINVAL, "%s %s is out of range (at most 9223372036854775807)",
                          what, t);
            return -1;
        }
    }
    if (n->node_case != PG_QUERY__NODE__NODE_A_CONST || n->a_const->val_case != PG_QUERY__A__CONST__VAL_IVAL ||
        n->a_const->ival->ival < 0) {
        *rc = sq_fail(c, -1, PA_EUNSUPPORTED, "%s must be a non-negative integer constant", what);
        return -1;
    }
    return n->a_const->ival->ival;
}

/* ------------------------------------------------------ grouping sets */

/* Sets of group keys, each a mask over aggstate.groups (bit i: key i). */
typedef struct gsets {
    uint64_t *v;
    int n;
} gsets;

#define GROUPING_MAX_KEYS 64
#define GROUPING_MAX_SETS 4096

/* What binding a GROUP BY expression needs from the block. */
typedef struct gbind {
    sq_scope *sc;
    const char **names;
    int n_vis;
    sq_vec *sel;
    aggstate *st;
} gbind;

/* A GROUP BY expression: a select-list position, a FROM column name, a
 * select-list alias or an expression; its index among the keys (an equal
 * key is not added twice). */
static int group_key(sq_ctx *c, gbind *b, pgn *g, int *idx)
{
    int pos = -1;   /* set when position_of returns 1 */
    int r = position_of(c, g, b->n_vis, &pos);
    if (r < 0)
        return r;
    sq_expr *e = NULL;
    if (r == 1)
        e = b->sel->v[pos];
    else if (g->node_case == PG_QUERY__NODE__NODE_COLUMN_REF && g->column_ref->n_fields == 1) {
        /* A name: a FROM column first, else a select-list alias. */
        const char *nm = sq_node_name(g->column_ref->fields[0]);
        bool in_from = false;
        for (int k = 0; k < b->sc->n && nm; k++)
            in_from |= !strcmp(b->sc->b[k].name, nm);
        for (int k = 0; !in_from && nm && k < b->n_vis; k++)
            if (!strcmp(b->names[k], nm))
                e = b->sel->v[k];
    }
    if (!e) {
        sq_aggctx gag = {false, false, "GROUP BY", false, false};
        if (!(e = sq_bind_expr(c, g, b->sc, &gag)))
            return c->err->code;
    }
    if (sq_expr_has(e, SQ_E_AGG))
        return sq_fail(c, e->loc, PA_EINVAL, "aggregate functions are not allowed in GROUP BY");
    for (int k = 0; k < b->st->groups.n; k++)
        if (sq_expr_equal(b->st->groups.v[k], e)) {
            *idx = k;
            return PA_OK;
        }
    if (b->st->groups.n >= GROUPING_MAX_KEYS)
        return sq_fail(c, e->loc, PA_EUNSUPPORTED, "grouping sets over more than %d expressions",
                       GROUPING_MAX_KEYS);
    *idx = b->st->groups.n;
    return push(c, &b->st->groups, e);
}

static int gsets_add(sq_ctx *c, gsets *s, uint64_t m)
{
    if (s->n >= GROUPING_MAX_SETS)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "more than %d grouping sets", GROUPING_MAX_SETS);
    if ((s->n & (s->n - 1)) == 0) {   /* grow at powers of two */
        uint64_t *v = sq_alloc(&c->A, (size_t)(s->n ? 2 * s->n : 1) * sizeof *v);
        if (!v)
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        if (s->n)
            memcpy(v, s->v, (size_t)s->n * sizeof *v);
        s->v = v;
    }
    s->v[s->n++] = m;
    return PA_OK;
}

/* a = every union of a set of a with a set of b. */
static int gsets_cross(sq_ctx *c, gsets *a, const gsets *b)
{
    gsets r = {0};
    int rc;
    for (int i = 0; i < a->n; i++)
        for (int j = 0; j < b->n; j++)
            if ((rc = gsets_add(c, &r, a->v[i] | b->v[j])))
                return rc;
    *a = r;
    return PA_OK;
}

/* The mask of one element of ROLLUP / CUBE: an expression, or a
 * parenthesized list of them (a row, or a simple grouping set). */
static int element_mask(sq_ctx *c, gbind *b, pgn *g, uint64_t *m)
{
    *m = 0;
    int idx, rc;
    if (g->node_case == PG_QUERY__NODE__NODE_ROW_EXPR) {
        for (size_t k = 0; k < g->row_expr->n_args; k++) {
            if ((rc = group_key(c, b, g->row_expr->args[k], &idx)))
                return rc;
            *m |= (uint64_t)1 << idx;
        }
        return PA_OK;
    }
    if (g->node_case == PG_QUERY__NODE__NODE_GROUPING_SET) {
        PgQuery__GroupingSet *s = g->grouping_set;
        if (s->kind != PG_QUERY__GROUPING_SET_KIND__GROUPING_SET_SIMPLE &&
            s->kind != PG_QUERY__GROUPING_SET_KIND__GROUPING_SET_EMPTY)
            return sq_fail(c, s->location, PA_EINVAL, "ROLLUP and CUBE take expressions or lists of them");
        for (size_t k = 0; k < s->n_content; k++) {
            if ((rc = group_key(c, b, s->content[k], &idx)))
                return rc;
            *m |= (uint64_t)1 << idx;
        }
        return PA_OK;
    }
    if ((rc = group_key(c, b, g, &idx)))
        return rc;
    *m = (uint64_t)1 << idx;
    return PA_OK;
}

/* The sets one GROUP BY item (top: directly in GROUP BY) or one element of
 * GROUPING SETS stands for. */
static int item_sets(sq_ctx *c, gbind *b, pgn *g, bool top, gsets *out)
{
    int rc;
    uint64_t m;
    if (g->node_case == PG_QUERY__NODE__NODE_ROW_EXPR && !top) {
        if ((rc = element_mask(c, b, g, &m)))
            return rc;
        return gsets_add(c, out, m);
    }
    if (g->node_case != PG_QUERY__NODE__NODE_GROUPING_SET) {
        if ((rc = element_mask(c, b, g, &m)))
            return rc;
        return gsets_add(c, out, m);
    }
    PgQuery__GroupingSet *s = g->grouping_set;
    size_t n = s->n_content;
    switch (s->kind) {
    case PG_QUERY__GROUPING_SET_KIND__GROUPING_SET_EMPTY: return gsets_add(c, out, 0);
    case PG_QUERY__GROUPING_SET_KIND__GROUPING_SET_SIMPLE:
        if ((rc = element_mask(c, b, g, &m)))
            return rc;
        return gsets_add(c, out, m);
    case PG_QUERY__GROUPING_SET_KIND__GROUPING_SET_ROLLUP: {
        uint64_t *e = sq_alloc(&c->A, (n + 1) * sizeof *e);
        if (!e)
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        for (size_t k = 0; k < n; k++)
            if ((rc = element_mask(c, b, s->content[k], &e[k])))
                return rc;
        for (size_t k = n + 1; k-- > 0;) {   /* all n elements, then n - 1, ..., none */
            uint64_t acc = 0;
            for (size_t j = 0; j < k; j++)
                acc |= e[j];
            if ((rc = gsets_add(c, out, acc)))
                return rc;
        }
        return PA_OK;
    }
    case PG_QUERY__GROUPING_SET_KIND__GROUPING_SET_CUBE: {
        if (n > 12)
            return sq_fail(c, s->location, PA_EUNSUPPORTED, "CUBE of more than 12 elements");
        uint64_t e[12];
        for (size_t k = 0; k < n; k++)
            if ((rc = element_mask(c, b, s->content[k], &e[k])))
                return rc;
        for (uint32_t sub = (1u << n); sub-- > 0;) {   /* PostgreSQL's order: the whole set first */
            uint64_t acc = 0;
            for (size_t j = 0; j < n; j++)
                if (sub >> (n - 1 - j) & 1)
                    acc |= e[j];
            if ((rc = gsets_add(c, out, acc)))
                return rc;
        }
        return PA_OK;
    }
    case PG_QUERY__GROUPING_SET_KIND__GROUPING_SET_SETS:
        for (size_t k = 0; k < n; k++)
            if ((rc = item_sets(c, b, s->content[k], false, out)))
                return rc;
        return PA_OK;
    default: return sq_fail(c, s->location, PA_EINVAL, "unknown grouping set");
    }
}

/* A VALUES list: rows of constant expressions (folded when bound), each
 * column of the common type of its rows (untyped NULLs take it; a column of
 * NULLs only is VARCHAR), named column1, column2... as PostgreSQL does. */
#define VALUES_MAX_CELLS 1000000
static int bind_values(sq_ctx *c, PgQuery__SelectStmt *s, sq_node **out, const char ***names_out)
{
    if (s->n_sort_clause || s->limit_count || s->limit_offset)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "ORDER BY, LIMIT and OFFSET directly on VALUES are not supported "
                                               "(select from it: SELECT * FROM (VALUES ...) t ORDER BY ...)");
    size_t rows = s->n_values_lists, n = 0;
    for (size_t r = 0; r < rows; r++) {
        PgQuery__Node *l = s->values_lists[r];
        if (l->node_case != PG_QUERY__NODE__NODE_LIST)
            return sq_fail(c, -1, PA_EINVAL, "VALUES: row %zu is not a list", r + 1);
        if (r == 0)
            n = l->list->n_items;
        else if (l->list->n_items != n)
            return sq_fail(c, -1, PA_EINVAL, "VALUES lists must all be the same length (row 1 has %zu, row %zu %zu)",
                           n, r + 1, l->list->n_items);
    }
    if (n == 0)
        return sq_fail(c, -1, PA_EINVAL, "VALUES needs at least one column");
    if (rows * n > VALUES_MAX_CELLS)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "VALUES with more than %d values (%zu rows of %zu): load them from a file",
                       VALUES_MAX_CELLS, rows, n);
    sq_expr **v = sq_alloc(&c->A, rows * n * sizeof *v);
    const char **names = sq_alloc(&c->A, n * sizeof *names);
    sq_node *node = sq_node_new(c, SQ_L_VALUES, (int)n);
    if (!v || !names || !node)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    sq_scope none = {0};
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < n; i++) {
            PgQuery__Node *item = s->values_lists[r]->list->items[i];
            sq_expr *e = sq_bind_expr(c, item, &none, NULL);
            if (!e)
                return c->err->code ? c->err->code : PA_EINVAL;
            if (!ex_expr_is_const(e->tx))
                return sq_fail(c, e->loc, PA_EUNSUPPORTED, "VALUES takes constant expressions (row %zu, column %zu)",
                               r + 1, i + 1);
            v[r * n + i] = e;
        }
    for (size_t i = 0; i < n; i++) {
        pa_type t = {PA_TYPE__COUNT, 0, 0};
        for (size_t r = 0; r < rows; r++) {
            sq_expr *e = v[r * n + i];
            if (e->kind == SQ_E_CONST && e->flag)   /* an untyped NULL */
                continue;
            if (t.id == PA_TYPE__COUNT)
                t = e->type;
            else if (!sq_common_type(c, t, e->type, &t))
                return sq_fail(c, e->loc, PA_EINVAL, "VALUES types %s and %s cannot be matched (column %zu)",
                               pa_type_name(t.id), pa_type_name(e->type.id), i + 1);
        }
        if (t.id == PA_TYPE__COUNT)
            t = (pa_type){PA_TYPE_VARCHAR, 0, 0};
        for (size_t r = 0; r < rows; r++) {
            sq_expr *e = v[r * n + i];
            e = e->kind == SQ_E_CONST && e->flag ? sq_const(c, ex_expr_null(c->plan, t, c->err), e->loc)
                                                 : sq_cast(c, e, t, e->loc);
            if (!e)
                return c->err->code ? c->err->code : PA_EINVAL;
            if (!ex_expr_is_const(e->tx))
                return sq_fail(c, e->loc, PA_EINVAL, "VALUES: row %zu, column %zu does not cast to %s", r + 1, i + 1,
                               pa_type_name(t.id));
            v[r * n + i] = e;
        }
        char buf[24];
        snprintf(buf, sizeof buf, "column%zu", i + 1);
        names[i] = sq_strdup(&c->A, buf);
        int id = sq_new_col(c, names[i], t);
        if (!names[i] || id < 0)
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        node->out[i] = id;
    }
    node->exprs = v;
    node->n_rows = (int64_t)rows;
    node->est = (double)rows;
    *out = node;
    *names_out = names;
    return PA_OK;
}

static int bind_block_in(sq_ctx *c, PgQuery__SelectStmt *s, sq_scope *outer, sq_node **out,
                         const char ***names_out, sq_subq *corr_for);

/* q's domain column for outer column col (made on first use). */
static int dom_col(sq_ctx *c, sq_subq *q, int col)
{
    for (int i = 0; i < q->n_dom; i++)
        if (q->dom_outer[i] == col)
            return q->dom_inner[i];
    int id = sq_new_col(c, c->cols[col].name, c->cols[col].type);
    if (id < 0)
        return -1;
    c->cols[id].stat = c->cols[col].stat;   /* D holds the outer column's values */
    q->dom_outer[q->n_dom] = col;
    q->dom_inner[q->n_dom] = id;
    q->dom_used[q->n_dom++] = false;
    return id;
}

/* The domain of q: the scopes of the outer level (outer and the domain
 * scopes right outside it, which are that level's too) copied, each name
 * reading a new column of D, in front of the levels beyond; and D itself,
 * a relation whose rows are set once the outer rows are planned
 * (sq_fill_domain). Columns made here are q's block's own. */
static int domain_scopes(sq_ctx *c, sq_scope *outer, sq_subq *q, sq_scope **first)
{
    int n_lvl = 0, nb = 0;
    sq_scope *rest = outer;
    for (; rest && (rest == outer || rest->domain); rest = rest->outer) {
        n_lvl++;
        nb += 2 * rest->n;
    }
    sq_scope *copies = sq_alloc(&c->A, (size_t)(n_lvl + 1) * sizeof *copies);
    q->dom_outer = sq_alloc(&c->A, (size_t)(nb + 1) * sizeof(int));
    q->dom_inner = sq_alloc(&c->A, (size_t)(nb + 1) * sizeof(int));
    q->dom_used = sq_alloc(&c->A, (size_t)(nb + 1) * sizeof(bool));
    if (!copies || !q->dom_outer || !q->dom_inner || !q->dom_used)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    q->n_dom = 0;
    sq_scope *o = outer;
    for (int k = 0; k < n_lvl; k++, o = o->outer) {
        sq_scope *d = &copies[k];
        if (o->domain)
            q->dom_up = o->domain;
        d->domain = q;
        d->outer = k + 1 < n_lvl ? &copies[k + 1] : rest;
        if (!(d->b = sq_alloc(&c->A, (size_t)(o->n + 1) * sizeof *d->b)))
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        d->n = d->cap = o->n;
        for (int i = 0; i < o->n; i++) {
            d->b[i] = o->b[i];
            if ((d->b[i].col = dom_col(c, q, o->b[i].col)) < 0 ||
                (o->b[i].merged >= 0 && (d->b[i].merged = dom_col(c, q, o->b[i].merged)) < 0))
                return c->err->code;
        }
    }
    sq_node *dn = sq_node_new(c, SQ_L_PROJECT, q->n_dom);
    if (!dn || !(dn->exprs = sq_alloc(&c->A, (size_t)(q->n_dom + 1) * sizeof *dn->exprs)))
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    memcpy(dn->out, q->dom_inner, (size_t)q->n_dom * sizeof(int));
    dn->est = 1000;   /* a guess: the outer rows are not planned yet */
    q->dnode = dn;
    *first = n_lvl ? &copies[0] : outer;
    return PA_OK;
}

/* A correlated LIMIT / OFFSET under a domain: the rows of each domain row
 * (partition by the correlation columns of node, which hold D's) numbered
 * by the ORDER BY, those numbered offset + 1 .. offset + limit kept. */
static int domain_limit(sq_ctx *c, sq_node **node, const sq_expr *const *corr, int n_corr, int block_start,
                        const int *order_pos, ex_sort_key *keys, int n_order, int64_t limit, int64_t offset)
{
    sq_node *in = *node;
    sq_vec part = {0}, ord = {0};
    uint8_t *set = sq_alloc(&c->A, (size_t)c->n_cols + 1);
    if (!set)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    for (int i = 0; i < n_corr; i++)
        sq_expr_cols(corr[i], set);
    int rc;
    for (int i = 0; i < in->n_out; i++)
        if (in->out[i] >= block_start && set[in->out[i]] && (rc = push(c, &part, sq_col_ref(c, in->out[i], -1))))
            return rc;
    for (int i = 0; i < n_order; i++)
        if ((rc = push(c, &ord, sq_col_ref(c, in->out[order_pos[i]], -1))))
            return rc;
    sq_expr *rn = sq_window_call(c, EX_WIN_ROW_NUMBER, NULL, part.v, part.n, ord.v, keys, n_order, -1);
    if (!rn || (rc = plan_windows(c, node, &rn, 1)))
        return c->err->code ? c->err->code : PA_EINTERNAL;
    sq_expr *lo[2] = {rn, iconst(c, offset)}, *hi[2] = {rn, iconst(c, offset + limit)};
    sq_expr *cond[2] = {sq_make(c, SQ_E_CMP, EX_GT, lo, 2, -1), sq_make(c, SQ_E_CMP, EX_LE, hi, 2, -1)};
    if (!cond[0] || !cond[1] || !(*node = sq_filter(c, *node, cond, limit >= 0 ? 2 : 1)))
        return c->err->code;
    sq_vec keep = {0};
    for (int i = 0; i < in->n_out; i++)
        if ((rc = push(c, &keep, sq_col_ref(c, in->out[i], -1))))
            return rc;
    return (*node = project(c, *node, keep.v, keep.n, NULL)) ? PA_OK : c->err->code;
}

/* One SELECT block, with its WINDOW clause's names visible in it only. */
static int bind_block(sq_ctx *c, PgQuery__SelectStmt *s, sq_scope *outer, sq_node **out, const char ***names_out,
                      sq_subq *corr_for)
{
    PgQuery__Node **saved = c->windows;
    size_t n_saved = c->n_windows;
    c->windows = s->window_clause;
    c->n_windows = s->n_window_clause;
    int rc = bind_block_in(c, s, outer, out, names_out, corr_for);
    c->windows = saved;
    c->n_windows = n_saved;
    return rc;
}

static int bind_block_in(sq_ctx *c, PgQuery__SelectStmt *s, sq_scope *outer, sq_node **out,
                         const char ***names_out, sq_subq *corr_for)
{
    int rc = PA_OK;
    int block_start = c->n_cols;
    if (s->n_values_lists)
        return bind_values(c, s, out, names_out);
    if (s->n_target_list == 0)
        return sq_fail(c, -1, PA_EINVAL, "SELECT needs at least one column (a bare SELECT returns nothing to show)");
    if (s->into_clause)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "SELECT INTO is not supported (use CREATE TABLE ... AS)");
    for (size_t i = 0; i < s->n_window_clause; i++) {
        PgQuery__WindowDef *w = s->window_clause[i]->window_def;
        for (size_t j = 0; w && j < i; j++)
            if (s->window_clause[j]->window_def && !strcmp(s->window_clause[j]->window_def->name, w->name))
                return sq_fail(c, w->location, PA_EINVAL, "window \"%s\" is already defined", w->name);
    }
    if (s->n_locking_clause)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "FOR UPDATE/SHARE is not supported");
    if (s->group_distinct)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "GROUP BY DISTINCT is not supported");

    /* FROM, with the domain first where there is one (a LATERAL item may
     * read its columns too). */
    sq_scope *dom_first = NULL;
    sq_subq *dom = corr_for && corr_for->domain ? corr_for : NULL;
    if (dom && (rc = domain_scopes(c, outer, dom, &dom_first)))
        return rc;
    sq_scope sc = {.outer = dom ? dom_first : outer};
    sq_from f = {.top = true};
    if (dom) {
        if (!(f.rels = sq_alloc(&c->A, 8 * sizeof *f.rels)))
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        f.cap_rels = 8;
        f.rels[f.n_rels++] = dom->dnode;
    }
    for (size_t i = 0; i < s->n_from_clause; i++)
        if ((rc = sq_bind_from(c, s->from_clause[i], &sc, &f)))
            return rc;
    if (s->n_from_clause == 0 && f.n_rels == 0) {
        sq_node *v = sq_node_new(c, SQ_L_VALUES, 0);
        if (!v)
            return c->err->code;
        v->est = 1;
        f.rels = &v;
        f.n_rels = 1;
        sq_node **rels = sq_alloc(&c->A, sizeof *rels);
        if (!rels)
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        rels[0] = v;
        f.rels = rels;
    }

    /* WHERE: plain conjuncts go to the join graph, subqueries after it,
     * correlated ones to the enclosing query. */
    sq_vec plain = {0}, subq = {0}, corr = {0};
    for (int i = 0; i < f.n_conj; i++)
        if ((rc = push(c, &plain, f.conj[i])))
            return rc;
    if (s->where_clause) {
        sq_aggctx ag = {false, false, "WHERE", false, false};
        sq_expr *w = sq_bind_expr(c, s->where_clause, &sc, &ag);
        if (!w)
            return c->err->code;
        sq_expr **v0 = NULL, **v = NULL;
        int n0 = 0, cap0 = 0, n = 0, cap = 0;
        if ((rc = sq_conjuncts(c, w, &v0, &n0, &cap0)))
            return rc;
        for (int i = 0; i < n0; i++)
            if ((rc = sq_factor_or(c, v0[i], &v, &n, &cap)))
                return rc;
        for (int i = 0; i < n; i++) {
            bool has_sub = sq_expr_has(v[i], SQ_E_SUBQ);
            if (refs_outer(c, v[i], block_start)) {
                if (!corr_for || has_sub)
                    return sq_fail_corr(c, v[i]->loc,
                                        "this correlated reference is not supported (only in WHERE conditions of a "
                                        "subquery)");
                rc = push(c, &corr, v[i]);
            } else
                rc = push(c, has_sub ? &subq : &plain, v[i]);
            if (rc)
                return rc;
        }
    }
    sc.used_outer = false;
    sq_node *node;
    /* Conjuncts reading a LATERAL joined after the others: after it. */
    sq_vec late = {0};
    if (f.n_later) {
        int kept = 0;
        for (int i = 0; i < plain.n; i++) {
            bool reads = false;
            uint8_t *set = sq_alloc(&c->A, (size_t)c->n_cols + 1);
            if (!set)
                return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
            sq_expr_cols(plain.v[i], set);
            for (int k = 0; k < f.n_later && !reads; k++)
                for (int j = 0; j < f.later[k].rel->n_out && !reads; j++)
                    reads = set[f.later[k].rel->out[j]];
            if (reads)
                rc = push(c, &late, plain.v[i]);
            else
                plain.v[kept++] = plain.v[i];
            if (rc)
                return rc;
        }
        plain.n = kept;
    }
    if ((rc = sq_join_graph_sub(c, f.rels, f.n_rels, plain.v, plain.n, subq.v, &subq.n, &node)))
        return rc;
    for (int k = 0; k < f.n_later; k++) {
        sq_lateral *L = &f.later[k];
        if ((rc = sq_fill_domain(c, L->q, &node, 1)))
            return rc;
        sq_node *j = sq_node_new(c, SQ_L_JOIN, node->n_out + L->rel->n_out);
        if (!j)
            return c->err->code;
        j->jkind = SQ_J_INNER;
        j->in[0] = node;
        j->in[1] = L->rel;
        j->conj = L->cond;
        j->n_conj = L->n_cond;
        memcpy(j->out, node->out, (size_t)node->n_out * sizeof(int));
        memcpy(j->out + node->n_out, L->rel->out, (size_t)L->rel->n_out * sizeof(int));
        j->est = sq_estimate(c, j);
        node = j;
    }
    if (late.n && !(node = sq_filter(c, node, late.v, late.n)))
        return c->err->code;
    if (subq.n && (rc = sq_apply_conjuncts(c, node, subq.v, subq.n, &node)))
        return rc;

    bool distinct_on = s->n_distinct_clause && s->distinct_clause[0] &&
                       s->distinct_clause[0]->node_case != PG_QUERY__NODE__NODE__NOT_SET;

    /* Select list. */
    sq_vec sel = {0};
    const char **names = NULL;
    int n_names_cap = 0;
    sq_aggctx ag = {true, false, "the select list", true, false};
    for (size_t i = 0; i < s->n_target_list; i++) {
        PgQuery__ResTarget *t = s->target_list[i]->res_target;
        pgn *v = t->val;
        bool star = false;
        const char *qual = NULL;
        if (v && v->node_case == PG_QUERY__NODE__NODE_COLUMN_REF) {
            PgQuery__ColumnRef *r = v->column_ref;
            if (r->n_fields && r->fields[r->n_fields - 1]->node_case == PG_QUERY__NODE__NODE_A_STAR) {
                star = true;
                if (r->n_fields == 2)
                    qual = sq_node_name(r->fields[0]);
            }
        }
        if (sel.n + sc.n + 1 > n_names_cap) {
            int cap = (sel.n + sc.n + 1) * 2;
            const char **nv = sq_alloc(&c->A, (size_t)cap * sizeof *nv);
            if (!nv)
                return sq_fail(c, t->location, PA_ENOMEM, "binding: out of memory");
            if (sel.n)
                memcpy(nv, names, (size_t)sel.n * sizeof *nv);
            names = nv;
            n_names_cap = cap;
        }
        if (star) {
            int added = 0;
            for (int b = 0; b < sc.n; b++) {
                /* `*` shows a USING column once (merged under RIGHT/FULL);
                 * `qual.*` shows that relation's own columns, USING ones too. */
                if ((!qual && sc.b[b].hidden) || (qual && (!sc.b[b].qual || strcmp(sc.b[b].qual, qual) != 0)))
                    continue;
                int col = !qual && sc.b[b].merged >= 0 ? sc.b[b].merged : sc.b[b].col;
                if (c->cols[col].unsupported)
                    return sq_fail(c, t->location, PA_EUNSUPPORTED, "%s (name the other columns instead of *)",
                                   c->cols[col].unsupported);
                names[sel.n] = sc.b[b].name;
                if ((rc = push(c, &sel, sq_col_ref(c, col, t->location))))
                    return rc;
                added++;
            }
            if (!added)
                return sq_fail(c, t->location, PA_ENOTFOUND, qual ? "no table \"%s\" in FROM" : "SELECT * with no columns",
                               qual);
            continue;
        }
        sq_expr *e = sq_bind_expr(c, v, &sc, &ag);
        if (!e)
            return c->err->code;
        char nm[256];
        if (t->name && *t->name)
            snprintf(nm, sizeof nm, "%s", t->name);
        else
            render(v, nm, sizeof nm);
        names[sel.n] = sq_strdup(&c->A, nm);
        if ((rc = push(c, &sel, e)))
            return rc;
    }
    int n_vis = sel.n;

    /* GROUP BY: plain items, or grouping sets (ROLLUP, CUBE, GROUPING
     * SETS): then every expression they name is a group key and `gs` the
     * sets of keys, the cross product of the items' sets. */
    aggstate st = {.block_start = block_start, .gid_col = -1};
    gsets gs = {0};
    bool with_sets = false;
    for (size_t i = 0; i < s->n_group_clause; i++)
        with_sets |= s->group_clause[i]->node_case == PG_QUERY__NODE__NODE_GROUPING_SET;
    if (with_sets && !(gs.v = sq_alloc(&c->A, sizeof *gs.v)))
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    if (with_sets)
        gs.v[gs.n++] = 0;
    gbind gb = {&sc, names, n_vis, &sel, &st};
    for (size_t i = 0; i < s->n_group_clause; i++) {
        pgn *g = s->group_clause[i];
        if (!with_sets) {
            int idx;
            if ((rc = group_key(c, &gb, g, &idx)))
                return rc;
            continue;
        }
        gsets item = {0};
        if ((rc = item_sets(c, &gb, g, true, &item)) || (rc = gsets_cross(c, &gs, &item)))
            return rc;
    }

    /* HAVING and ORDER BY expressions, bound now so their aggregates are
     * computed with the others. */
    sq_expr *having = NULL;
    if (s->having_clause) {
        sq_aggctx hag = {true, false, "HAVING", false, false};
        if (!(having = sq_bind_expr(c, s->having_clause, &sc, &hag)))
            return c->err->code;
    }
    int n_order = (int)s->n_sort_clause;
    int *order_pos = sq_alloc(&c->A, (size_t)(n_order + 1) * sizeof(int));
    ex_sort_key *keys = sq_alloc(&c->A, (size_t)(n_order + 1) * sizeof *keys);
    if (!order_pos || !keys)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    for (int i = 0; i < n_order; i++) {
        PgQuery__SortBy *sb = s->sort_clause[i]->sort_by;
        if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING)
            return sq_fail(c, sb->location, PA_EUNSUPPORTED, "ORDER BY ... USING is not supported");
        bool desc = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
        keys[i].descending = desc;
        keys[i].nulls_first = sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_FIRST ? true
                              : sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_LAST ? false
                                                                                                : false;
        int pos = -1;   /* set wherever r becomes 1 */
        int r = position_of(c, sb->node, n_vis, &pos);
        if (r < 0)
            return r;
        if (r == 0 && sb->node->node_case == PG_QUERY__NODE__NODE_COLUMN_REF && sb->node->column_ref->n_fields == 1) {
            const char *nm = sq_node_name(sb->node->column_ref->fields[0]);
            for (int k = 0; nm && k < n_vis; k++)
                if (!strcmp(names[k], nm)) {
                    pos = k;
                    r = 1;
                    break;
                }
        }
        if (r == 1) {
            order_pos[i] = pos;
            continue;
        }
        sq_aggctx oag = {true, false, "ORDER BY", true, false};
        sq_expr *e = sq_bind_expr(c, sb->node, &sc, &oag);
        if (!e)
            return c->err->code;
        order_pos[i] = -1;
        for (int k = 0; k < sel.n; k++)
            if (sq_expr_equal(sel.v[k], e)) {
                order_pos[i] = k;
                break;
            }
        if (order_pos[i] < 0) {
            if (s->n_distinct_clause && !distinct_on)
                return sq_fail(c, sb->location, PA_EINVAL,
                               "for SELECT DISTINCT, ORDER BY expressions must appear in the select list");
            order_pos[i] = sel.n;
            if ((rc = push(c, &sel, e)))
                return rc;
        }
    }
    /* DISTINCT ON (exprs): names, positions or expressions, as ORDER BY's;
     * the leading ORDER BY keys must be among them (PostgreSQL's rule). */
    int n_on = distinct_on ? (int)s->n_distinct_clause : 0;
    int *on_pos = sq_alloc(&c->A, (size_t)(n_on + 1) * sizeof(int));
    if (!on_pos)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    for (int i = 0; i < n_on; i++) {
        pgn *dn = s->distinct_clause[i];
        int pos = -1;
        int r = position_of(c, dn, n_vis, &pos);
        if (r < 0)
            return r;
        if (r == 0 && dn->node_case == PG_QUERY__NODE__NODE_COLUMN_REF && dn->column_ref->n_fields == 1) {
            const char *nm = sq_node_name(dn->column_ref->fields[0]);
            for (int k = 0; nm && k < n_vis; k++)
                if (!strcmp(names[k], nm)) {
                    pos = k;
                    r = 1;
                    break;
                }
        }
        if (r != 1) {
            sq_aggctx dag = {true, false, "DISTINCT ON", false, false};
            sq_expr *e = sq_bind_expr(c, dn, &sc, &dag);
            if (!e)
                return c->err->code;
            for (int k = 0; k < sel.n && pos < 0; k++)
                if (sq_expr_equal(sel.v[k], e))
                    pos = k;
            if (pos < 0) {
                pos = sel.n;
                if ((rc = push(c, &sel, e)))
                    return rc;
            }
        }
        on_pos[i] = pos;
    }
    for (int i = 0; i < n_on && i < n_order; i++) {
        bool found = false;
        for (int k = 0; k < n_on && !found; k++)
            found = on_pos[k] == order_pos[i] || sq_expr_equal(sel.v[on_pos[k]], sel.v[order_pos[i]]);
        if (!found)
            return sq_fail(c, s->sort_clause[i]->sort_by->location, PA_EINVAL,
                           "SELECT DISTINCT ON expressions must match initial ORDER BY expressions");
    }
    if (sc.used_outer)
        return sq_fail_corr(c, -1, "a correlated reference outside the subquery's WHERE conditions is not supported");

    /* Under a domain the subquery is correlated through D's columns: each
     * one read IS NOT DISTINCT FROM its outer column (first in corr). */
    if (dom) {
        sq_vec dc = {0};
        for (int i = 0; i < dom->n_dom; i++) {
            if (!dom->dom_used[i])
                continue;
            sq_expr *two[2];
            if ((rc = sq_not_distinct(c, sq_col_ref(c, dom->dom_inner[i], -1), sq_col_ref(c, dom->dom_outer[i], -1),
                                      two)) ||
                (rc = push(c, &dc, two[0])) || (rc = push(c, &dc, two[1])))
                return rc;
        }
        dom->n_dcorr = dc.n;
        for (int i = 0; i < corr.n; i++)
            if ((rc = push(c, &dc, corr.v[i])))
                return rc;
        corr = dc;
    }

    /* Ordered-set aggregates: windows over the rows, then plain aggregates. */
    {
        sq_vec os = {0};
        if ((rc = collect_os(c, sel.v, sel.n, having, &os)))
            return rc;
        if (os.n && corr.n && (with_sets || !corr_for))
            return sq_fail(c, os.v[0]->loc, PA_EUNSUPPORTED,
                           "percentile_cont, percentile_disc, median, mode and string_agg with grouping sets in a "
                           "correlated subquery are not supported");
        if (os.n && with_sets && (rc = plan_ordered_grouping_sets(c, &node, &st, gs.v, gs.n, sel.v, sel.n, &having)))
            return rc;
        /* Correlated: the windows partition by the correlation's group
         * keys too (the ones aggregation adds below). */
        aggstate ost = st;
        if (os.n && corr.n) {
            ost.groups = (sq_vec){0};
            for (int i = 0; i < st.groups.n; i++)
                if ((rc = push(c, &ost.groups, st.groups.v[i])))
                    return rc;
            if ((rc = corr_group_keys(c, &corr, dom, block_start, &ost.groups)))
                return rc;
        }
        if (os.n && !with_sets && (rc = plan_ordered_sets(c, &node, &ost, sel.v, sel.n, &having)))
            return rc;
    }

    /* Aggregation. Subqueries in aggregates' arguments (sum(CASE WHEN x =
     * (SELECT ...) ...)) are joined below it, where their rows are. */
    for (int i = 0; i < sel.n; i++)
        if (!(sel.v[i] = join_agg_subqueries(c, sel.v[i], &node)))
            return c->err->code ? c->err->code : PA_EINTERNAL;
    if (having && !(having = join_agg_subqueries(c, having, &node)))
        return c->err->code ? c->err->code : PA_EINTERNAL;
    for (int i = 0; i < sel.n; i++)
        if ((rc = collect_aggs(c, sel.v[i], &st)))
            return rc;
    if ((rc = collect_aggs(c, having, &st)))
        return rc;
    bool grouped = st.groups.n > 0 || st.aggs.n > 0;
    if (!grouped && having)
        grouped = true;
    bool user_groups = st.groups.n > 0;
    if (corr.n && corr_for && grouped) {
        if (st.groups.n && !dom)
            return sq_fail_corr(c, corr.v[0]->loc, "a correlated subquery with GROUP BY is not supported");
        /* Without GROUP BY, the correlation keys are no group keys the
         * select list or HAVING may read (PostgreSQL's rule). */
        for (int i = 0; !user_groups && i <= sel.n; i++) {
            const sq_expr *b = bare_col(i < sel.n ? sel.v[i] : having, block_start, dom);
            if (b)
                return sq_fail(c, b->loc, PA_EINVAL,
                               "column \"%s\" must appear in the GROUP BY clause or be used in an aggregate function",
                               c->cols[b->col].name);
        }
        /* The value for outer rows that no inner row matches (a LATERAL
         * one: every column's). */
        if (!user_groups && sel.n && (rc = empty_value(c, sel.v[0], having, dom, &corr_for->empty)))
            return rc;
        if (!user_groups && corr_for->kind == SQ_S_LATERAL) {
            if (having)
                return sq_fail(c, having->loc, PA_EUNSUPPORTED,
                               "HAVING without GROUP BY in a LATERAL aggregate subquery is not supported");
            corr_for->n_vis = n_vis;
            if (!(corr_for->empties = sq_alloc(&c->A, (size_t)(n_vis + 1) * sizeof *corr_for->empties)))
                return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
            for (int i = 0; i < n_vis; i++)
                if ((rc = empty_value(c, sel.v[i], NULL, dom, &corr_for->empties[i])))
                    return rc;
        }
        if ((rc = corr_group_keys(c, &corr, dom, block_start, &st.groups)))
            return rc;
        corr_for->grouped = !user_groups;
    }
    if (with_sets && corr_for && corr.n)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "grouping sets in a correlated subquery are not supported");
    for (int i = 0; with_sets && i < st.aggs.n; i++)
        if (st.aggs.v[i]->flag)   /* its distinct rows are those of the finest set */
            return sq_fail(c, st.aggs.v[i]->loc, PA_EUNSUPPORTED,
                           "SUM or AVG (DISTINCT ...) or COUNT(DISTINCT (a, b, ...)) with grouping sets is not supported");
    if (grouped) {
        if ((rc = aggregate(c, &node, &st, !with_sets && !corr_for)))
            return rc;
        if (with_sets) {
            node->n_sets = gs.n;
            node->sets = gs.v;
            /* The set's id: an extra output (out has room for one more). */
            if ((st.gid_col = sq_new_col(c, "grouping", (pa_type){PA_TYPE_BIGINT, 0, 0})) < 0)
                return c->err->code;
            node->out[node->n_out++] = st.gid_col;
        }
        for (int i = 0; i < sel.n; i++)
            if (!(sel.v[i] = post_agg(c, sel.v[i], &st)))
                return c->err->code;
        if (having && !(having = post_agg(c, having, &st)))
            return c->err->code;
        if (corr_for && corr.n) {
            for (int i = 0; i < corr.n; i++)
                if (!(corr.v[i] = post_agg(c, corr.v[i], &st)))
                    return c->err->code;
        }
        if (corr_for && corr_for->grouped) {
            /* HAVING of a correlated aggregate: not a filter of the groups
             * (a key whose group fails it would look unmatched and get the
             * empty value) but part of the value: NULL when it fails. */
            if (having) {
                corr_for->having = true;
                if (sel.n) {
                    sq_expr *a[2] = {having, sel.v[0]};
                    if (!(sel.v[0] = sq_make(c, SQ_E_CASE, 0, a, 2, having->loc)))
                        return c->err->code;
                }
                having = NULL;
            }
        }
    }
    if (having) {
        sq_expr **v = NULL;
        int n = 0, cap = 0;
        if ((rc = sq_conjuncts(c, having, &v, &n, &cap)) || (rc = sq_apply_conjuncts(c, node, v, n, &node)))
            return rc;
    }

    /* Subqueries in the select list (and ORDER BY): joined in here. */
    for (int i = 0; i < sel.n; i++)
        if (sq_expr_has(sel.v[i], SQ_E_SUBQ) && !(sel.v[i] = sq_join_subqueries(c, sel.v[i], &node)))
            return c->err->code ? c->err->code : PA_EINTERNAL;

    /* DISTINCT ON: the first row of each group by the ORDER BY (any without
     * one): row_number() over (partition by the DISTINCT ON expressions
     * order by the ORDER BY keys) = 1, a hidden column filtered below. */
    int on_rn = -1;
    if (n_on) {
        sq_expr **part = sq_alloc(&c->A, (size_t)n_on * sizeof *part);
        sq_expr **ord = sq_alloc(&c->A, (size_t)(n_order + 1) * sizeof *ord);
        if (!part || !ord)
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        for (int i = 0; i < n_on; i++)
            part[i] = sel.v[on_pos[i]];
        for (int i = 0; i < n_order; i++)
            ord[i] = sel.v[order_pos[i]];
        sq_expr *rn = sq_window_call(c, EX_WIN_ROW_NUMBER, NULL, part, n_on, ord, keys, n_order, -1);
        if (!rn)
            return c->err->code;
        on_rn = sel.n;
        if ((rc = push(c, &sel, rn)))
            return rc;
    }

    /* Window functions: over the rows so far (after GROUP BY and HAVING). */
    bool windows = false;
    for (int i = 0; i < sel.n; i++)
        windows |= sq_expr_has(sel.v[i], SQ_E_WINDOW);
    if (windows && corr_for && corr.n)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "window functions in a correlated subquery are not supported");
    if (windows && (rc = plan_windows(c, &node, sel.v, sel.n)))
        return rc;

    /* Correlated subquery: its inner columns ride along as hidden outputs. */
    int n_hidden_order = sel.n - n_vis;
    if (corr_for && corr.n) {
        uint8_t *set = sq_alloc(&c->A, (size_t)c->n_cols + 1);
        if (!set)
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        for (int i = 0; i < corr.n; i++)
            sq_expr_cols(corr.v[i], set);
        corr_for->match_col = -1;
        for (int id = block_start; id < c->n_cols; id++)
            if (set[id]) {
                if ((rc = push(c, &sel, sq_col_ref(c, id, -1))))
                    return rc;
                if (corr_for->match_col < 0)
                    corr_for->match_col = id;
            }
        corr_for->corr = corr.v;
        corr_for->n_corr = corr.n;
    }
    const char **all_names = sq_alloc(&c->A, (size_t)(sel.n + 1) * sizeof *all_names);
    if (!all_names)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    for (int i = 0; i < sel.n; i++)
        all_names[i] = i < n_vis ? names[i] : "hidden";
    if (!(node = project(c, node, sel.v, sel.n, all_names)))
        return c->err->code;

    if (on_rn >= 0) {
        sq_expr *eq[2] = {sq_col_ref(c, node->out[on_rn], -1), sq_const(c, ex_expr_bigint(c->plan, 1, c->err), -1)};
        sq_expr *first = sq_make(c, SQ_E_CMP, EX_EQ, eq, 2, -1);
        if (!first || !(node = sq_filter(c, node, &first, 1)))
            return c->err->code;
    } else if (s->n_distinct_clause) {
        sq_node *d = sq_node_new(c, SQ_L_DISTINCT, node->n_out);
        if (!d)
            return c->err->code;
        d->in[0] = node;
        memcpy(d->out, node->out, (size_t)node->n_out * sizeof(int));
        d->est = sq_estimate(c, d);
        node = d;
    }
    int64_t limit = const_int(c, s->limit_count, "LIMIT", &rc);
    int64_t offset = s->limit_offset ? const_int(c, s->limit_offset, "OFFSET", &rc) : 0;
    if (rc)
        return rc;
    if (offset < 0)
        offset = 0;
    if (corr_for && corr.n && (limit >= 0 || offset > 0)) {
        /* The decorrelated plan holds the rows of every outer row at once,
         * so a LIMIT there would cut across them. A scalar aggregate has one
         * row per outer row and EXISTS needs one: LIMIT n >= 1 changes
         * neither. Under a domain the rows of each domain row are numbered
         * and cut (a window). */
        if (limit != 0 && offset == 0 && (corr_for->grouped || corr_for->kind == SQ_S_EXISTS))
            limit = -1;
        else if (corr_for->grouped)
            return sq_fail(c, -1, PA_EUNSUPPORTED,
                           "LIMIT or OFFSET in a correlated subquery is not supported here (LIMIT 0 or OFFSET over "
                           "an aggregate)");
        else if (!dom)
            return sq_fail_corr(c, -1, "LIMIT or OFFSET in a correlated subquery is not supported");
        else {
            if ((rc = domain_limit(c, &node, (const sq_expr *const *)corr.v, corr.n, block_start, order_pos, keys,
                                   n_order, limit, offset)))
                return rc;
            limit = -1;
            offset = 0;
        }
    }
    if (n_order) {
        sq_node *so = sq_node_new(c, SQ_L_SORT, node->n_out);
        if (!so)
            return c->err->code;
        so->in[0] = node;
        memcpy(so->out, node->out, (size_t)node->n_out * sizeof(int));
        for (int i = 0; i < n_order; i++)
            keys[i].column = node->out[order_pos[i]];
        so->keys = keys;
        so->n_keys = n_order;
        so->limit = limit;
        so->offset = offset;
        so->est = node->est;
        node = so;
    } else if (limit >= 0 || offset > 0) {
        sq_node *l = sq_node_new(c, SQ_L_LIMIT, node->n_out);
        if (!l)
            return c->err->code;
        l->in[0] = node;
        memcpy(l->out, node->out, (size_t)node->n_out * sizeof(int));
        l->limit = limit;
        l->offset = offset;
        l->est = node->est;
        node = l;
    }
    if (n_hidden_order) {
        /* Drop the ORDER BY-only columns (keep correlation columns). */
        sq_vec keep = {0};
        for (int i = 0; i < node->n_out; i++)
            if ((i < n_vis || i >= n_vis + n_hidden_order) && (rc = push(c, &keep, sq_col_ref(c, node->out[i], -1))))
                return rc;
        if (!(node = project(c, node, keep.v, keep.n, NULL)))
            return c->err->code;
    }
    *out = node;
    *names_out = names ? names : all_names;
    return PA_OK;
}

/* A constant of type t that stands for NULL in a NULL-safe key (any value
 * works: the key is paired with an IS NULL flag). */
static sq_expr *null_stand_in(sq_ctx *c, pa_type t)
{
    ex_expr *x;
    switch (t.id) {
    case PA_TYPE_VARCHAR: x = ex_expr_varchar(c->plan, "", c->err); break;
    case PA_TYPE_DATE: x = ex_expr_date(c->plan, "1970-01-01", c->err); break;
    case PA_TYPE_BOOLEAN: x = ex_expr_bool(c->plan, false, c->err); break;
    case PA_TYPE_TIMESTAMP:
    case PA_TYPE_TIMESTAMPTZ:
    case PA_TYPE_TIME:
    case PA_TYPE_TIMESTAMP_NS: x = ex_expr_timestamp(c->plan, t, 0, c->err); break;
    case PA_TYPE_INTERVAL: x = ex_expr_varchar(c->plan, "0", c->err); break;   /* cast below */
    default: x = ex_expr_int(c->plan, 0, c->err); break;
    }
    sq_expr *e = x ? sq_const(c, x, -1) : NULL;
    return e ? sq_cast(c, e, t, -1) : NULL;
}

int sq_not_distinct(sq_ctx *c, sq_expr *a, sq_expr *b, sq_expr **out2)
{
    sq_expr *key[2], *flag[2], *side[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        sq_expr *col = side[s];
        sq_expr *isn = col ? sq_make(c, SQ_E_ISNULL, 0, &col, 1, -1) : NULL;
        sq_expr *alt = isn ? null_stand_in(c, col->type) : NULL;
        sq_expr *cs[3] = {isn, alt, col};
        if (!alt || !(key[s] = sq_make(c, SQ_E_CASE, 0, cs, 3, -1)))
            return c->err->code ? c->err->code : PA_EINTERNAL;
        flag[s] = isn;
    }
    if (!(out2[0] = sq_make(c, SQ_E_CMP, EX_EQ, key, 2, -1)) || !(out2[1] = sq_make(c, SQ_E_CMP, EX_EQ, flag, 2, -1)))
        return c->err->code ? c->err->code : PA_EINTERNAL;
    return PA_OK;
}

/* INTERSECT / EXCEPT of two sides with equal column types: the distinct
 * rows of l that have (SEMI) or have not (ANTI) an equal row in r, rows
 * compared as IS NOT DISTINCT FROM (NULL equals NULL). Each column gives two
 * hash keys: COALESCE(col, stand-in) and col IS NULL. */
static sq_node *set_difference(sq_ctx *c, sq_node *l, sq_node *r, bool intersect)
{
    sq_node *d = sq_node_new(c, SQ_L_DISTINCT, l->n_out);
    sq_expr **cond = sq_alloc(&c->A, (size_t)(2 * l->n_out + 1) * sizeof *cond);
    if (!d || !cond) {
        sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    d->in[0] = l;
    memcpy(d->out, l->out, (size_t)l->n_out * sizeof(int));
    d->est = sq_estimate(c, d);
    int k = 0;
    for (int i = 0; i < l->n_out; i++) {
        sq_expr *key[2], *flag[2];
        const sq_node *side[2] = {l, r};
        for (int s = 0; s < 2; s++) {
            sq_expr *col = sq_col_ref(c, side[s]->out[i], -1);
            sq_expr *isn = col ? sq_make(c, SQ_E_ISNULL, 0, &col, 1, -1) : NULL;
            sq_expr *alt = isn ? null_stand_in(c, col->type) : NULL;
            sq_expr *cs[3] = {isn, alt, col};
            if (!alt || !(key[s] = sq_make(c, SQ_E_CASE, 0, cs, 3, -1)))
                return NULL;
            flag[s] = isn;
        }
        if (!(cond[k++] = sq_make(c, SQ_E_CMP, EX_EQ, key, 2, -1)) ||
            !(cond[k++] = sq_make(c, SQ_E_CMP, EX_EQ, flag, 2, -1)))
            return NULL;
    }
    sq_node *j = sq_node_new(c, SQ_L_JOIN, l->n_out);
    if (!j)
        return NULL;
    j->jkind = intersect ? SQ_J_SEMI : SQ_J_ANTI;
    j->in[0] = d;
    j->in[1] = r;
    j->conj = cond;
    j->n_conj = k;
    memcpy(j->out, l->out, (size_t)l->n_out * sizeof(int));
    j->est = sq_estimate(c, j);
    return j;
}

static int bind_select_stmt(sq_ctx *c, pgn *n, sq_scope *outer, sq_node **out, const char ***names,
                            sq_subq *corr_for);

sq_node *sq_set_difference(sq_ctx *c, sq_node *l, sq_node *r, bool intersect)
{
    return set_difference(c, l, r, intersect);
}

static int bind_setop(sq_ctx *c, PgQuery__SelectStmt *s, sq_node **out, const char ***names)
{
    bool is_union = s->op == PG_QUERY__SET_OPERATION__SETOP_UNION;
    bool intersect = s->op == PG_QUERY__SET_OPERATION__SETOP_INTERSECT;
    const char *what = is_union ? "UNION" : intersect ? "INTERSECT" : "EXCEPT";
    sq_node *l, *r;
    const char **ln, **rn;
    pgn ln_node = {0}, rn_node = {0};
    ln_node.node_case = rn_node.node_case = PG_QUERY__NODE__NODE_SELECT_STMT;
    ln_node.select_stmt = s->larg;
    rn_node.select_stmt = s->rarg;
    int rc = sq_bind_select(c, &ln_node, NULL, &l, &ln, NULL);
    if (rc == PA_OK)
        rc = sq_bind_select(c, &rn_node, NULL, &r, &rn, NULL);
    if (rc)
        return rc;
    if (l->n_out != r->n_out)
        return sq_fail(c, -1, PA_EINVAL, "each %s query must have the same number of columns (%d and %d)", what,
                       l->n_out, r->n_out);
    int extra = !is_union && s->all;   /* INTERSECT / EXCEPT ALL: each row's number among its equals */
    if (!is_union && 2 * (l->n_out + extra) > 32)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "%s of more than %d columns is not supported", what, 16 - extra);
    sq_node *u = sq_node_new(c, SQ_L_UNION, l->n_out);
    if (!u)
        return c->err->code;
    u->n_ins = 2;
    u->ins = sq_alloc(&c->A, 2 * sizeof *u->ins);
    u->in_cols = sq_alloc(&c->A, 2 * sizeof *u->in_cols);
    if (!u->ins || !u->in_cols)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    sq_node *side[2] = {l, r};
    for (int k = 0; k < 2; k++) {
        /* Bring both sides to the common column types. */
        sq_vec ex = {0};
        bool cast = false;
        for (int i = 0; i < l->n_out; i++) {
            pa_type t;
            if (!sq_common_type(c, c->cols[l->out[i]].type, c->cols[r->out[i]].type, &t))
                return sq_fail(c, -1, PA_EINVAL, "%s column %d: %s and %s have no common type", what, i + 1,
                               pa_type_name(c->cols[l->out[i]].type.id), pa_type_name(c->cols[r->out[i]].type.id));
            sq_expr *e = sq_col_ref(c, side[k]->out[i], -1);
            sq_expr *ce = sq_cast(c, e, t, -1);
            cast |= ce != e;
            if ((rc = push(c, &ex, ce)))
                return rc;
        }
        if (cast && !(side[k] = project(c, side[k], ex.v, ex.n, NULL)))
            return c->err->code;
        if (extra) {
            /* The n-th copy of a row on one side meets the n-th copy on the
             * other: (row, n) is distinct, so INTERSECT / EXCEPT of those
             * keeps min(l, r) / max(l - r, 0) copies. */
            sq_vec all = {0};
            for (int i = 0; i < side[k]->n_out; i++)
                if ((rc = push(c, &all, sq_col_ref(c, side[k]->out[i], -1))))
                    return rc;
            sq_expr *rn = sq_window_call(c, EX_WIN_ROW_NUMBER, NULL, all.v, all.n, NULL, NULL, 0, -1);
            if (!rn || (rc = push(c, &all, rn)) || (rc = plan_windows(c, &side[k], all.v, all.n)))
                return rc ? rc : c->err->code;
            if (!(side[k] = project(c, side[k], all.v, all.n, NULL)))
                return c->err->code;
        }
        u->ins[k] = side[k];
        u->in_cols[k] = side[k]->out;
    }
    sq_node *node = u;
    if (!is_union) {
        /* The left side's columns, renamed to the left query's names. */
        if (!(node = set_difference(c, u->ins[0], u->ins[1], intersect)))
            return c->err->code ? c->err->code : PA_EINTERNAL;
        sq_vec ex = {0};
        for (int i = 0; i < l->n_out; i++)
            if ((rc = push(c, &ex, sq_col_ref(c, node->out[i], -1))))
                return rc;
        if (!(node = project(c, node, ex.v, ex.n, ln)))
            return c->err->code;
        u = node;
    } else {
        for (int i = 0; i < l->n_out; i++)
            if ((u->out[i] = sq_new_col(c, ln[i], c->cols[u->ins[0]->out[i]].type)) < 0)
                return c->err->code;
        u->est = l->est + r->est;
    }
    if (is_union && !s->all) {
        sq_node *d = sq_node_new(c, SQ_L_DISTINCT, u->n_out);
        if (!d)
            return c->err->code;
        d->in[0] = u;
        memcpy(d->out, u->out, (size_t)u->n_out * sizeof(int));
        d->est = sq_estimate(c, d);
        node = d;
    }
    /* ORDER BY / LIMIT of the whole union: positions and names only. */
    int n_order = (int)s->n_sort_clause;
    if (n_order || s->limit_count || s->limit_offset) {
        ex_sort_key *keys = sq_alloc(&c->A, (size_t)(n_order + 1) * sizeof *keys);
        if (!keys)
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        for (int i = 0; i < n_order; i++) {
            PgQuery__SortBy *sb = s->sort_clause[i]->sort_by;
            int pos = -1;
            int r2 = position_of(c, sb->node, u->n_out, &pos);
            if (r2 < 0)
                return r2;
            if (r2 == 0 && sb->node->node_case == PG_QUERY__NODE__NODE_COLUMN_REF)
                for (int k = 0; k < u->n_out; k++)
                    if (!strcmp(ln[k], sq_node_name(sb->node->column_ref->fields[sb->node->column_ref->n_fields - 1])))
                        pos = k;
            if (pos < 0)
                return sq_fail(c, sb->location, PA_EUNSUPPORTED,
                               "ORDER BY of a UNION takes output column names or positions");
            bool desc = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
            keys[i] = (ex_sort_key){u->out[pos], desc,
                                    sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_FIRST ? true
                                    : sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_LAST ? false
                                                                                                      : false};
        }
        rc = PA_OK;
        int64_t limit = const_int(c, s->limit_count, "LIMIT", &rc);
        int64_t offset = s->limit_offset ? const_int(c, s->limit_offset, "OFFSET", &rc) : 0;
        if (rc)
            return rc;
        sq_node *so = sq_node_new(c, n_order ? SQ_L_SORT : SQ_L_LIMIT, u->n_out);
        if (!so)
            return c->err->code;
        so->in[0] = node;
        memcpy(so->out, u->out, (size_t)u->n_out * sizeof(int));
        so->keys = keys;
        so->n_keys = n_order;
        so->limit = limit;
        so->offset = offset < 0 ? 0 : offset;
        so->est = node->est;
        node = so;
    }
    *out = node;
    *names = ln;
    return PA_OK;
}

int sq_bind_select(sq_ctx *c, pgn *n, sq_scope *outer, sq_node **out, const char ***names, sq_subq *corr_for)
{
    if (!n || n->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "expected a SELECT");
    PgQuery__SelectStmt *s = n->select_stmt;
    /* Views and WITH queries inline their SELECTs here too: the parse tree's
     * own depth check (parse.c) does not see those. */
    if (c->select_depth > SQ_MAX_SUBQUERY_DEPTH)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "subqueries nested too deep (more than %d levels)", SQ_MAX_SUBQUERY_DEPTH);
    if (c->depth >= SQ_MAX_EXPR_DEPTH)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "query nested too deep (more than %d levels of subqueries, set operations and joins)", SQ_MAX_EXPR_DEPTH);
    bool setop = s->op != PG_QUERY__SET_OPERATION__SETOP_NONE && s->op != PG_QUERY__SET_OPERATION__SET_OPERATION_UNDEFINED;
    c->depth++;
    c->select_depth += !setop;
    int rc = bind_select_stmt(c, n, outer, out, names, corr_for);
    c->select_depth -= !setop;
    c->depth--;
    return rc;
}

static int bind_select_stmt(sq_ctx *c, pgn *n, sq_scope *outer, sq_node **out, const char ***names,
                            sq_subq *corr_for)
{
    PgQuery__SelectStmt *s = n->select_stmt;
    sq_cte *saved = c->ctes;
    if (s->with_clause) {
        for (size_t i = 0; i < s->with_clause->n_ctes; i++) {
            PgQuery__CommonTableExpr *d = s->with_clause->ctes[i]->common_table_expr;
            sq_cte *q = sq_alloc(&c->A, sizeof *q);
            if (!q)
                return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
            char *nm = sq_strdup(&c->A, d->ctename);
            for (char *p = nm; p && *p; p++)
                *p = (char)tolower((unsigned char)*p);
            q->name = nm;
            q->def = d;
            q->next = c->ctes;
            sq_cte_decide(c, q);
            if (s->with_clause->recursive)
                sq_cte_recursive(c, q);
            c->ctes = q;
        }
    }
    int rc;
    if (s->op != PG_QUERY__SET_OPERATION__SETOP_NONE && s->op != PG_QUERY__SET_OPERATION__SET_OPERATION_UNDEFINED) {
        if (corr_for && outer)
            rc = sq_fail(c, -1, PA_EUNSUPPORTED, "UNION inside a subquery expression is not supported");
        else
            rc = bind_setop(c, s, out, names);
    } else
        rc = bind_block(c, s, outer, out, names, corr_for);
    c->ctes = saved;
    return rc;
}
