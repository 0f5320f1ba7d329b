/*
 * bind_from.c - the FROM clause: tables, views, CTEs, read_parquet(),
 * derived tables and joins. Inner joins (comma, INNER, CROSS) are
 * flattened into one list of relations plus conjuncts that the optimiser
 * orders (sq_join_graph); outer joins (LEFT, RIGHT as a mirrored LEFT,
 * FULL) are planned where they stand, a barrier to join ordering.
 */
#include "sql/sql_int.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>


int sq_scope_add(sq_ctx *c, sq_scope *sc, const char *qual, const char *name, int col)
{
    if (sc->n == sc->cap) {
        int cap = sc->cap ? sc->cap * 2 : 32;
        sq_binding *b = sq_alloc(&c->A, (size_t)cap * sizeof *b);
        if (!b)
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        if (sc->n)
            memcpy(b, sc->b, (size_t)sc->n * sizeof *b);
        sc->b = b;
        sc->cap = cap;
    }
    sc->b[sc->n++] = (sq_binding){qual, name, col, false, -1};
    return PA_OK;
}

static int add_rel(sq_ctx *c, sq_from *f, sq_node *n)
{
    if (f->n_rels == f->cap_rels) {
        int cap = f->cap_rels ? f->cap_rels * 2 : 8;
        sq_node **v = sq_alloc(&c->A, (size_t)cap * sizeof *v);
        if (!v)
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        if (f->n_rels)
            memcpy(v, f->rels, (size_t)f->n_rels * sizeof *v);
        f->rels = v;
        f->cap_rels = cap;
    }
    f->rels[f->n_rels++] = n;
    return PA_OK;
}

static const char *lower(sq_ctx *c, const char *s)
{
    char *d = sq_strdup(&c->A, s);
    for (char *p = d; p && *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return d;
}

/* A scan of every column of t, bound under qual. */
static int table_rel(sq_ctx *c, sq_table *t, const char *qual, PgQuery__Alias *alias, int loc, sq_scope *sc,
                     sq_from *f)
{
    sq_node *n = sq_node_new(c, SQ_L_SCAN, t->n_cols);
    if (!n)
        return c->err->code;
    n->table = t;
    n->src = sq_alloc(&c->A, (size_t)(t->n_cols + 1) * sizeof *n->src);
    if (!n->src)
        return sq_fail(c, loc, PA_ENOMEM, "binding: out of memory");
    if (alias && alias->n_colnames > (size_t)t->n_cols)
        return sq_fail(c, loc, PA_EINVAL, "table %s has %d columns but %zu names were given", t->name, t->n_cols,
                       alias->n_colnames);
    for (int i = 0; i < t->n_cols; i++) {
        const char *name = t->col_names[i];
        if (alias && (size_t)i < alias->n_colnames)
            name = lower(c, sq_node_name(alias->colnames[i]));
        int id = sq_new_col(c, name, t->col_types[i]);
        if (id < 0)
            return c->err->code;
        c->cols[id].stat = t->stats[i];
        c->cols[id].unsupported = t->col_unsupported ? t->col_unsupported[i] : NULL;
        n->out[i] = id;
        n->src[i] = i;
        int rc = sq_scope_add(c, sc, qual, name, id);
        if (rc)
            return rc;
    }
    n->est = (double)t->rows;
    return add_rel(c, f, n);
}

/* A derived table: its outputs bound under qual with the given names. */
static int derived_rel(sq_ctx *c, sq_node *n, const char **names, const char *qual, PgQuery__Alias *alias,
                       int loc, sq_scope *sc, sq_from *f)
{
    if (alias && alias->n_colnames > (size_t)n->n_out)
        return sq_fail(c, loc, PA_EINVAL, "%s has %d columns but %zu names were given", qual ? qual : "subquery",
                       n->n_out, alias->n_colnames);
    for (int i = 0; i < n->n_out && names[i]; i++) {
        const char *name = names[i];
        if (alias && (size_t)i < alias->n_colnames)
            name = lower(c, sq_node_name(alias->colnames[i]));
        int rc = sq_scope_add(c, sc, qual, name, n->out[i]);
        if (rc)
            return rc;
    }
    return add_rel(c, f, n);
}

static int bind_select_text(sq_ctx *c, const char *sql, sq_node **out, const char ***names, int loc)
{
    PgQuery__ParseResult *pr;
    int off;
    pa_err e;
    pa_err_init(&e);
    if (sq_parse(sql, &pr, &off, &e) != PA_OK) {
        int rc = sq_fail(c, loc, e.code, "view: %s", e.msg);
        pa_err_close(&e);
        return rc;
    }
    pa_err_close(&e);
    if (!pr || pr->n_stmts != 1) {
        if (pr)
            pg_query__parse_result__free_unpacked(pr, NULL);
        return sq_fail(c, loc, PA_EINTERNAL, "view text does not hold one statement");
    }
    /* Positions inside the view text mean nothing to the user's statement. */
    sq_cte *saved = c->ctes;
    c->ctes = NULL;
    pgn *q = pr->stmts[0]->stmt;
    PgQuery__ViewStmt *vs = q->node_case == PG_QUERY__NODE__NODE_VIEW_STMT ? q->view_stmt : NULL;
    if (vs)
        q = vs->query;
    int rc = sq_bind_select(c, q, NULL, out, names, NULL);
    if (rc == PA_OK && vs && vs->n_aliases) {   /* CREATE VIEW v (a, b) AS ...: the first columns renamed */
        const char **nm = sq_alloc(&c->A, (size_t)((*out)->n_out + 1) * sizeof *nm);
        if (!nm)
            rc = sq_fail(c, loc, PA_ENOMEM, "view: out of memory");
        for (int i = 0; rc == PA_OK && i < (*out)->n_out; i++)
            nm[i] = i < (int)vs->n_aliases ? lower(c, sq_node_name(vs->aliases[i])) : (*names)[i];
        if (rc == PA_OK)
            *names = nm;
    }
    c->ctes = saved;
    if (rc != PA_OK && c->err_loc >= 0)
        c->err_loc = loc;
    /* The plan keeps no pointer into the parse tree except names, which the
     * binder copies into the arena. */
    pg_query__parse_result__free_unpacked(pr, NULL);
    return rc;
}

static int bind_rangevar(sq_ctx *c, PgQuery__RangeVar *rv, sq_scope *sc, sq_from *f)
{
    const char *name = lower(c, rv->relname);
    const char *qual = rv->alias ? lower(c, rv->alias->aliasname) : name;
    int loc = rv->location;
    if (!rv->schemaname || !*rv->schemaname) {
        for (sq_cte *q = c->ctes; q; q = q->next) {
            if (strcmp(q->name, name) != 0)
                continue;
            sq_node *n;
            const char **names;
            int rc = sq_cte_ref(c, q, &n, &names);
            if (rc)
                return rc;
            for (size_t i = 0; i < q->def->n_aliascolnames && (int)i < n->n_out; i++)
                names[i] = lower(c, sq_node_name(q->def->aliascolnames[i]));
            return derived_rel(c, n, names, qual, rv->alias, loc, sc, f);
        }
    }
    sq_table *t = sq_catalog_find(c->s, name);
    if (!t) {
        sq_suggest sg;
        sq_suggest_init(&sg, name);
        for (int i = 0; i < c->s->n_tables; i++)
            sq_suggest_offer(&sg, c->s->tables[i]->name);
        for (sq_cte *q = c->ctes; q; q = q->next)
            sq_suggest_offer(&sg, q->name);
        return sg.best ? sq_fail(c, loc, PA_ENOTFOUND, "table \"%s\" does not exist; did you mean \"%s\"?", name, sg.best)
                       : sq_fail(c, loc, PA_ENOTFOUND, "table \"%s\" does not exist", name);
    }
    if (t->is_view) {
        sq_node *n;
        const char **names;
        int rc = bind_select_text(c, t->source, &n, &names, loc);
        return rc ? rc : derived_rel(c, n, names, qual, rv->alias, loc, sc, f);
    }
    return table_rel(c, t, qual, rv->alias, loc, sc, f);
}

/* generate_series(start, stop [, step]) (stop included, as PostgreSQL)
 * and range([start,] stop [, step]) (stop excluded, as DuckDB): integer
 * constants (expressions of them fold); one BIGINT column named after the
 * function. A NULL argument gives no rows, as in PostgreSQL. */
static int bind_series(sq_ctx *c, PgQuery__RangeFunction *rf, PgQuery__FuncCall *call, bool range, sq_scope *sc,
                       sq_from *f)
{
    const char *fname = range ? "range" : "generate_series";
    size_t lo = range ? 1 : 2;
    if (call->n_args < lo || call->n_args > 3)
        return sq_fail(c, call->location, PA_EINVAL, "%s takes %s", fname,
                       range ? "a stop, or a start, a stop and an optional step" : "a start, a stop and an optional step");
    int64_t v[3] = {0, 0, 1};   /* start, stop, step */
    bool null = false;
    sq_scope none = {0};
    for (size_t i = 0; i < call->n_args; i++) {
        sq_expr *e = sq_bind_expr(c, call->args[i], &none, NULL);
        if (!e)
            return c->err->code ? c->err->code : PA_EINVAL;
        size_t at = range && call->n_args == 1 ? 1 : i;
        if (!ex_expr_is_const(e->tx))
            return sq_fail(c, e->loc, PA_EUNSUPPORTED, "%s takes constants", fname);
        if (e->type.id == PA_TYPE_DATE)
            return sq_fail(c, e->loc, PA_EUNSUPPORTED, "%s of dates is not supported (integers are)", fname);
        if (e->kind == SQ_E_CONST && e->flag) {   /* an untyped NULL */
            null = true;
            continue;
        }
        if (e->type.id != PA_TYPE_INTEGER && e->type.id != PA_TYPE_BIGINT)
            return sq_fail(c, e->loc, PA_EINVAL, "%s takes integers, not %s", fname, pa_type_name(e->type.id));
        if (!ex_expr_const_int(e->tx, &v[at]))
            null = true;
    }
    if (!null && v[2] == 0)
        return sq_fail(c, call->location, PA_EINVAL, "step size cannot equal zero");
    __int128 count = 0;
    if (!null) {
        __int128 span = (__int128)v[1] - v[0], step = v[2];
        if (range)   /* the last value before stop */
            span -= step > 0 ? 1 : -1;
        if ((span >= 0) == (step > 0) || span == 0)
            count = span / step + 1;
        if (range && (step > 0 ? v[1] <= v[0] : v[1] >= v[0]))
            count = 0;
    }
    if (count > ((__int128)1 << 62))
        return sq_fail(c, call->location, PA_EUNSUPPORTED, "%s of more than 2^62 rows", fname);
    sq_node *n = sq_node_new(c, SQ_L_SERIES, 1);
    const char **names = sq_alloc(&c->A, sizeof *names);
    if (!n || !names)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    names[0] = fname;
    int id = sq_new_col(c, fname, (pa_type){PA_TYPE_BIGINT, 0, 0});
    if (id < 0)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    n->out[0] = id;
    n->series_start = v[0];
    n->series_step = v[2];
    n->n_rows = (int64_t)count;
    n->est = count > 1 ? (double)count : 1;
    const char *qual = rf->alias ? lower(c, rf->alias->aliasname) : fname;
    return derived_rel(c, n, names, qual, rf->alias, call->location, sc, f);
}

/* A read_parquet option (name => bool, or DuckDB's name = bool) into lay:
 * 1 when it was one, 0 for a positional argument, -1 on error. */
static int read_parquet_option(sq_ctx *c, PgQuery__Node *a, sq_layout *lay)
{
    const char *name = NULL;
    PgQuery__Node *v = NULL;
    int loc = -1;
    if (a->node_case == PG_QUERY__NODE__NODE_NAMED_ARG_EXPR) {
        name = a->named_arg_expr->name;
        v = a->named_arg_expr->arg;
        loc = a->named_arg_expr->location;
    } else if (a->node_case == PG_QUERY__NODE__NODE_A_EXPR && a->a_expr->kind == PG_QUERY__A__EXPR__KIND__AEXPR_OP &&
               a->a_expr->n_name == 1 && sq_node_name(a->a_expr->name[0]) &&
               !strcmp(sq_node_name(a->a_expr->name[0]), "=") && a->a_expr->lexpr &&
               a->a_expr->lexpr->node_case == PG_QUERY__NODE__NODE_COLUMN_REF &&
               a->a_expr->lexpr->column_ref->n_fields == 1) {
        name = sq_node_name(a->a_expr->lexpr->column_ref->fields[0]);
        v = a->a_expr->rexpr;
        loc = a->a_expr->location;
    }
    if (!name)
        return 0;
    bool is_hive = !strcasecmp(name, "hive_partitioning"), is_union = !strcasecmp(name, "union_by_name");
    if (!is_hive && !is_union) {
        sq_fail(c, loc, PA_EINVAL, "read_parquet has no option %s (hive_partitioning and union_by_name are supported)",
                name);
        return -1;
    }
    bool b;
    if (v && v->node_case == PG_QUERY__NODE__NODE_A_CONST && v->a_const->val_case == PG_QUERY__A__CONST__VAL_BOOLVAL)
        b = v->a_const->boolval->boolval;
    else if (v && v->node_case == PG_QUERY__NODE__NODE_A_CONST && v->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL &&
             (v->a_const->ival->ival == 0 || v->a_const->ival->ival == 1))
        b = v->a_const->ival->ival == 1;
    else {
        sq_fail(c, loc, PA_EINVAL, "read_parquet option %s takes true or false", name);
        return -1;
    }
    if (is_hive)
        lay->hive = b ? PQ_HIVE_ON : PQ_HIVE_OFF;
    else
        lay->union_by_name = b;
    return 1;
}

static int bind_function(sq_ctx *c, PgQuery__RangeFunction *rf, sq_scope *sc, sq_from *f)
{
    pgn *fn = NULL;
    if (rf->n_functions == 1 && rf->functions[0]->node_case == PG_QUERY__NODE__NODE_LIST &&
        rf->functions[0]->list->n_items >= 1)
        fn = rf->functions[0]->list->items[0];
    if (!fn || fn->node_case != PG_QUERY__NODE__NODE_FUNC_CALL)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "this table function is not supported");
    PgQuery__FuncCall *call = fn->func_call;
    if (rf->lateral)
        return sq_fail(c, call->location, PA_EUNSUPPORTED,
                       "LATERAL function calls in FROM are not supported (a LATERAL subquery is: LATERAL (SELECT ...))");
    const char *name = call->n_funcname ? sq_node_name(call->funcname[call->n_funcname - 1]) : "";
    if (!strcasecmp(name, "generate_series") || !strcasecmp(name, "range"))
        return bind_series(c, rf, call, !strcasecmp(name, "range"), sc, f);
    if (strcasecmp(name, "read_parquet") != 0)
        return sq_fail(c, call->location, PA_EUNSUPPORTED,
                       "table function %s is not supported (read_parquet, generate_series and range are)", name);
    /* One string, or ARRAY['a.parquet', 'b/', 'c/x*.parquet']: parts of one
     * table; then options hive_partitioning => bool, union_by_name => bool. */
    enum { MAX_PATHS = 256 };
    const char *paths[MAX_PATHS];
    int locs[MAX_PATHS], n = 0;
    sq_layout lay = {PQ_HIVE_AUTO, false};
    int n_pos = 0;
    for (size_t i = 0; i < call->n_args; i++) {
        int rc = read_parquet_option(c, call->args[i], &lay);
        if (rc < 0)
            return c->err->code;
        if (rc == 0 && n_pos++ > 0)
            return sq_fail(c, call->location, PA_EINVAL,
                           "read_parquet takes one path argument (a string or an ARRAY of strings) and the options "
                           "hive_partitioning => bool, union_by_name => bool");
    }
    PgQuery__Node *arg = n_pos == 1 ? call->args[0] : NULL;
    PgQuery__Node **items = arg ? &call->args[0] : NULL;
    size_t n_items = arg ? 1 : 0;
    if (arg && arg->node_case == PG_QUERY__NODE__NODE_A_ARRAY_EXPR) {
        items = arg->a_array_expr->elements;
        n_items = arg->a_array_expr->n_elements;
        if (n_items == 0)
            return sq_fail(c, arg->a_array_expr->location, PA_EINVAL, "read_parquet needs at least one path");
        if (n_items > MAX_PATHS)
            return sq_fail(c, arg->a_array_expr->location, PA_EINVAL, "read_parquet takes at most %d paths",
                           MAX_PATHS);
    }
    for (size_t i = 0; i < n_items; i++) {
        PgQuery__Node *it = items[i];
        if (it->node_case != PG_QUERY__NODE__NODE_A_CONST || it->a_const->val_case != PG_QUERY__A__CONST__VAL_SVAL)
            return sq_fail(c, call->location, PA_EINVAL,
                           "read_parquet takes a string or an ARRAY of strings: files, directories or globs");
        if (!it->a_const->sval->sval[0])
            return sq_fail(c, it->a_const->location, PA_EINVAL,
                           "read_parquet needs a path: a file, directory or glob (got '')");
        locs[n] = it->a_const->location;
        paths[n++] = it->a_const->sval->sval;
    }
    if (n == 0)
        return sq_fail(c, call->location, PA_EINVAL,
                       "read_parquet takes a string or an ARRAY of strings: files, directories or globs");
    sq_table *t;
    int rc = sq_catalog_adhoc(c->s, paths, n, &lay, &t, c->err);
    if (rc) {
        /* point at the path the error names, else the first */
        c->err_loc = locs[0];
        const char *first = NULL;
        for (int i = 0; i < n; i++) {
            const char *at = strstr(c->err->msg, paths[i]);
            if (at && (!first || at < first)) {
                first = at;
                c->err_loc = locs[i];
            }
        }
        return rc;
    }
    const char *qual = rf->alias ? lower(c, rf->alias->aliasname) : "read_parquet";
    return table_rel(c, t, qual, rf->alias, call->location, sc, f);
}

/* The output of a FULL join with USING: the join's columns plus, per USING
 * column, COALESCE(left, right) under a new id (ids[u]). */
static sq_node *using_merge(sq_ctx *c, sq_node *jn, const int *lcol, const int *rcol, int n, int *ids)
{
    sq_node *p = sq_node_new(c, SQ_L_PROJECT, jn->n_out + n);
    sq_expr **ex = sq_alloc(&c->A, (size_t)(jn->n_out + n + 1) * sizeof *ex);
    if (!p || !ex) {
        sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    for (int i = 0; i < jn->n_out; i++) {
        p->out[i] = jn->out[i];
        if (!(ex[i] = sq_col_ref(c, jn->out[i], -1)))
            return NULL;
    }
    for (int u = 0; u < n; u++) {
        sq_expr *l = sq_col_ref(c, lcol[u], -1), *r = sq_col_ref(c, rcol[u], -1);
        sq_expr *isn = l ? sq_make(c, SQ_E_ISNULL, 1, &l, 1, -1) : NULL;
        sq_expr *a[3] = {isn, l, r};
        sq_expr *e = isn && r ? sq_make(c, SQ_E_CASE, 0, a, 3, -1) : NULL;
        if (!e || (ids[u] = sq_new_col(c, c->cols[lcol[u]].name, e->type)) < 0)
            return NULL;
        ex[jn->n_out + u] = e;
        p->out[jn->n_out + u] = ids[u];
    }
    p->exprs = ex;
    p->in[0] = jn;
    p->est = jn->est;
    return p;
}

/* USING (cols): the equalities into *on; per column the left binding
 * (lb), its column and the right one. The right binding is hidden: the
 * name alone then reads the left one (set to the merged value for
 * RIGHT and FULL by the caller). */
static int bind_using(sq_ctx *c, const char *const *names, int n_names, sq_scope *sc, int lstart, int rstart,
                      int rend, int *lb, int *lcol, int *rcol, sq_expr ***on, int *n_on, int *cap_on)
{
    for (int u = 0; u < n_names; u++) {
        const char *name = names[u];
        int lc = -1, rc = -1, rb = -1;
        for (int i = lstart; i < rstart; i++)
            if (!strcmp(sc->b[i].name, name) && !sc->b[i].hidden)
                lc = sc->b[i].merged >= 0 ? sc->b[i].merged : sc->b[i].col, lb[u] = i;
        for (int i = rstart; i < rend; i++)
            if (!strcmp(sc->b[i].name, name) && !sc->b[i].hidden)
                rc = sc->b[i].merged >= 0 ? sc->b[i].merged : sc->b[i].col, rb = i;
        if (lc < 0 || rc < 0)
            return sq_fail(c, -1, PA_ENOTFOUND, "USING column \"%s\" is not in both sides of the join", name);
        sc->b[rb].hidden = true;
        lcol[u] = lc;
        rcol[u] = rc;
        sq_expr *a[2] = {sq_col_ref(c, lc, -1), sq_col_ref(c, rc, -1)};
        sq_expr *eq = a[0] && a[1] ? sq_make(c, SQ_E_CMP, EX_EQ, a, 2, -1) : NULL;
        if (!eq || sq_conjuncts(c, eq, on, n_on, cap_on))
            return c->err->code;
    }
    return PA_OK;
}

/* The USING names of a join: as written, or for NATURAL every visible
 * column name of the left side that the right side also has (left order,
 * once each; none is an error, as in DuckDB). */
static int using_names(sq_ctx *c, PgQuery__JoinExpr *j, const sq_scope *sc, int lstart, int rstart, int rend,
                       const char ***out, int *n)
{
    int cap = j->is_natural ? rstart - lstart : (int)j->n_using_clause;
    const char **v = sq_alloc(&c->A, (size_t)(cap + 1) * sizeof *v);
    if (!v)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    int k = 0;
    if (!j->is_natural) {
        for (size_t u = 0; u < j->n_using_clause; u++)
            v[k++] = lower(c, sq_node_name(j->using_clause[u]));
    } else {
        for (int i = lstart; i < rstart; i++) {
            const char *name = sc->b[i].name;
            bool seen = false, right = false;
            if (sc->b[i].hidden)
                continue;
            for (int q = 0; q < k && !seen; q++)
                seen = !strcmp(v[q], name);
            for (int r = rstart; r < rend && !right; r++)
                right = !sc->b[r].hidden && !strcmp(sc->b[r].name, name);
            if (!seen && right)
                v[k++] = name;
        }
        if (k == 0)
            return sq_fail(c, -1, PA_EINVAL,
                           "no columns found to join on in NATURAL JOIN (use CROSS JOIN for a cross product)");
    }
    *out = v;
    *n = k;
    return PA_OK;
}

static int bind_join(sq_ctx *c, PgQuery__JoinExpr *j, sq_scope *sc, sq_from *f)
{
    if (j->alias)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "an alias on a join is not supported");
    bool right = j->jointype == PG_QUERY__JOIN_TYPE__JOIN_RIGHT, full = j->jointype == PG_QUERY__JOIN_TYPE__JOIN_FULL;
    bool outer = j->jointype == PG_QUERY__JOIN_TYPE__JOIN_LEFT || right || full;
    if (!outer && j->jointype != PG_QUERY__JOIN_TYPE__JOIN_INNER)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "this join type is not supported");
    sq_from lf = {0}, rf = {0};
    sq_from *lp = outer ? &lf : f, *rp = outer ? &rf : f;
    bool lateral = j->rarg && j->rarg->node_case == PG_QUERY__NODE__NODE_RANGE_SUBSELECT &&
                   j->rarg->range_subselect->lateral;
    if (lateral && (right || full))
        return sq_fail(c, -1, PA_EINVAL, "the combining JOIN type must be INNER or LEFT for a LATERAL reference");
    int lstart = sc->n;
    int rc = sq_bind_from(c, j->larg, sc, lp);
    int rstart = sc->n;
    sq_node *l = NULL, *r;
    if (rc == PA_OK && outer && lateral) {
        /* LEFT JOIN LATERAL: the lateral rows come from the left side. */
        if ((rc = sq_join_graph(c, lf.rels, lf.n_rels, lf.conj, lf.n_conj, &l)))
            return rc;
        rf.lat_left = l;
        rf.lat_vis0 = lstart;
        rf.lat_vis1 = rstart;
    }
    if (rc == PA_OK)
        rc = sq_bind_from(c, j->rarg, sc, rp);
    if (rc)
        return rc;
    int rend = sc->n;
    sq_expr **on = NULL;
    const char **unames = NULL;
    int n_on = 0, cap_on = 0, n_using = 0;
    if ((j->is_natural || j->n_using_clause) &&
        (rc = using_names(c, j, sc, lstart, rstart, rend, &unames, &n_using)))
        return rc;
    int *lb = sq_alloc(&c->A, (size_t)(n_using + 1) * sizeof *lb);
    int *lcol = sq_alloc(&c->A, (size_t)(n_using + 1) * sizeof *lcol);
    int *rcol = sq_alloc(&c->A, (size_t)(n_using + 1) * sizeof *rcol);
    if (!lb || !lcol || !rcol)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    if (n_using) {
        if ((rc = bind_using(c, unames, n_using, sc, lstart, rstart, rend, lb, lcol, rcol, &on, &n_on, &cap_on)))
            return rc;
    } else if (j->quals) {
        sq_aggctx ag = {false, false, "JOIN conditions", false, false};
        sq_expr *q = sq_bind_expr(c, j->quals, sc, &ag);
        if (!q)
            return c->err->code;
        if (sq_expr_has(q, SQ_E_SUBQ))
            return sq_fail(c, -1, PA_EUNSUPPORTED, "subqueries in JOIN ... ON are not supported (move them to WHERE)");
        if ((rc = sq_conjuncts(c, q, &on, &n_on, &cap_on)))
            return rc;
    }
    if (!outer) {
        for (int i = 0; i < n_on; i++)
            if ((rc = sq_conjuncts(c, on[i], &f->conj, &f->n_conj, &f->cap_conj)))
                return rc;
        return PA_OK;
    }
    /* LEFT (or RIGHT, mirrored): the preserved side stays whole; ON
     * conjuncts on the other side alone filter it before the join. FULL
     * preserves both sides: every ON conjunct stays a join condition. */
    if ((!l && (rc = sq_join_graph(c, lf.rels, lf.n_rels, lf.conj, lf.n_conj, &l))) ||
        (rc = sq_join_graph(c, rf.rels, rf.n_rels, rf.conj, rf.n_conj, &r)))
        return rc;
    for (int i = 0; i < rf.n_lat_conj; i++)   /* the lateral's correlation: join conditions */
        if ((rc = sq_conjuncts(c, rf.lat_conj[i], &on, &n_on, &cap_on)))
            return rc;
    if (right) {
        sq_node *t = l;
        l = r;
        r = t;
    }
    sq_expr **inner = NULL, **cond = NULL;
    int n_inner = 0, n_cond = 0, cap_i = 0, cap_c = 0;
    for (int i = 0; i < n_on; i++) {
        if (!full && sq_node_covers(c, r, on[i]))
            rc = sq_conjuncts(c, on[i], &inner, &n_inner, &cap_i);
        else
            rc = sq_conjuncts(c, on[i], &cond, &n_cond, &cap_c);
        if (rc)
            return rc;
    }
    if (n_inner && !(r = sq_filter(c, r, inner, n_inner)))
        return c->err->code;
    sq_node *jn = sq_node_new(c, SQ_L_JOIN, l->n_out + r->n_out);
    if (!jn)
        return c->err->code;
    jn->jkind = full ? SQ_J_FULL : SQ_J_LEFT;
    jn->in[0] = l;
    jn->in[1] = r;
    memcpy(jn->out, l->out, (size_t)l->n_out * sizeof *jn->out);
    memcpy(jn->out + l->n_out, r->out, (size_t)r->n_out * sizeof *jn->out);
    jn->conj = cond;
    jn->n_conj = n_cond;
    jn->est = sq_estimate(c, jn);
    /* USING: the name alone reads the preserved side's value (RIGHT) or
     * COALESCE(left, right) (FULL), as in DuckDB. */
    for (int u = 0; right && u < n_using; u++)
        sc->b[lb[u]].merged = rcol[u];
    if (full && n_using) {
        int *ids = sq_alloc(&c->A, (size_t)n_using * sizeof *ids);
        if (!ids)
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        if (!(jn = using_merge(c, jn, lcol, rcol, n_using, ids)))
            return c->err->code ? c->err->code : PA_EINTERNAL;
        for (int u = 0; u < n_using; u++)
            sc->b[lb[u]].merged = ids[u];
    }
    return add_rel(c, f, jn);
}

/* LATERAL (subquery): it may read the columns of the FROM items before it
 * (f's relations; under LEFT JOIN the join's left side, f->lat_left). Bound
 * with a domain (sq_subq.domain): D, the distinct values of the columns it
 * reads, is a relation of its FROM, so it is a derived table of D's rows
 * with D's columns among its outputs, joined to the left side on them (IS
 * NOT DISTINCT FROM). An aggregate without GROUP BY gives each D row one row
 * (COUNT 0 where the row has none: D LEFT JOIN the groups, the values over
 * no rows put in). A LIMIT is cut per D row (a row_number() window). */
static int bind_lateral(sq_ctx *c, PgQuery__RangeSubselect *rs, sq_scope *sc, sq_from *f)
{
    const char *qual = rs->alias ? lower(c, rs->alias->aliasname) : NULL;
    sq_node *m;
    const char **names;
    int rc;
    PgQuery__SelectStmt *st = rs->subquery && rs->subquery->node_case == PG_QUERY__NODE__NODE_SELECT_STMT
                                  ? rs->subquery->select_stmt
                                  : NULL;
    if (st && st->op != PG_QUERY__SET_OPERATION__SETOP_NONE &&
        st->op != PG_QUERY__SET_OPERATION__SET_OPERATION_UNDEFINED) {
        /* A set operation: an ordinary derived table when it reads nothing
         * of the items before it. */
        rc = sq_bind_select(c, rs->subquery, NULL, &m, &names, NULL);
        if (rc == PA_ENOTFOUND) {
            pa_err_clear(c->err);
            c->err_loc = -1;
            return sq_fail(c, -1, PA_EUNSUPPORTED,
                           "a LATERAL subquery with UNION, INTERSECT or EXCEPT that reads earlier FROM items is not "
                           "supported");
        }
        return rc ? rc : derived_rel(c, m, names, qual, rs->alias, -1, sc, f);
    }
    /* The names it may read. */
    int v0 = f->lat_left ? f->lat_vis0 : 0, v1 = f->lat_left ? f->lat_vis1 : sc->n;
    sq_scope ls = {.outer = sc->outer};
    if (!(ls.b = sq_alloc(&c->A, (size_t)(v1 - v0 + 1) * sizeof *ls.b)))
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    memcpy(ls.b, sc->b + v0, (size_t)(v1 - v0) * sizeof *ls.b);
    ls.n = ls.cap = v1 - v0;
    sq_subq *q = sq_alloc(&c->A, sizeof *q);
    if (!q)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    q->kind = SQ_S_LATERAL;
    q->domain = true;
    q->loc = -1;
    /* Under LEFT JOIN the items before the join are off limits
     * (PostgreSQL's rule): named in the error. */
    const sq_scope *saved_off = c->off_limits;
    sq_scope off = {.b = sc->b, .n = v0, .cap = v0};
    c->off_limits = v0 > 0 ? &off : NULL;
    c->want_domain = false;
    rc = sq_bind_select(c, rs->subquery, &ls, &m, &names, q);
    c->off_limits = saved_off;
    if (rc)
        return rc;
    if (q->n_corr > q->n_dcorr)
        return sq_fail_corr(c, q->corr[q->n_dcorr]->loc,
                            "a LATERAL subquery that also reads an enclosing query's columns is not supported here");
    int n_vis = 0;
    while (n_vis < m->n_out && names[n_vis])
        n_vis++;
    if (rs->alias && rs->alias->n_colnames > (size_t)n_vis)
        return sq_fail(c, -1, PA_EINVAL, "%s has %d columns but %zu names were given", qual ? qual : "subquery", n_vis,
                       rs->alias->n_colnames);
    sq_expr **cond = sq_alloc(&c->A, (size_t)(2 * q->n_dom + 1) * sizeof *cond);
    if (!cond)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    int n_cond = 0;
    sq_node *r = m;
    if (!q->grouped) {
        /* Joined on its correlation columns (D's, or their groups'). */
        for (int i = 0; i < q->n_dcorr; i++)
            cond[n_cond++] = q->corr[i];
    } else {
        /* A second copy of D (columns e) LEFT JOIN the groups on the
         * correlation, the values over no rows where it found none. */
        sq_node *d2 = sq_node_new(c, SQ_L_PROJECT, q->n_dom);
        int *e = sq_alloc(&c->A, (size_t)(q->n_dom + 1) * sizeof *e);
        if (!d2 || !e || !(d2->exprs = sq_alloc(&c->A, (size_t)(q->n_dom + 1) * sizeof *d2->exprs)))
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        d2->in[0] = q->dnode;
        d2->est = q->dnode->est;
        for (int i = 0; i < q->n_dom; i++) {
            int o = q->dom_outer[i];
            if ((e[i] = d2->out[i] = sq_new_col(c, c->cols[o].name, c->cols[o].type)) < 0 ||
                !(d2->exprs[i] = sq_col_ref(c, q->dom_inner[i], -1)))
                return c->err->code;
            c->cols[e[i]].stat = c->cols[o].stat;
        }
        sq_expr **lc = sq_alloc(&c->A, (size_t)(q->n_dcorr + 1) * sizeof *lc);
        sq_node *lj = sq_node_new(c, SQ_L_JOIN, d2->n_out + m->n_out);
        sq_node *p = sq_node_new(c, SQ_L_PROJECT, q->n_dom + n_vis);
        const char **pn = sq_alloc(&c->A, (size_t)(n_vis + 1) * sizeof *pn);
        if (!lc || !lj || !p || !pn || !(p->exprs = sq_alloc(&c->A, (size_t)(q->n_dom + n_vis + 1) * sizeof *p->exprs)))
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        for (int i = 0; i < q->n_dcorr; i++)
            if (!(lc[i] = sq_subst_cols(c, q->corr[i], q->dom_outer, e, q->n_dom)))
                return c->err->code;
        lj->jkind = SQ_J_LEFT;
        lj->single = true;
        lj->in[0] = d2;
        lj->in[1] = m;
        lj->conj = lc;
        lj->n_conj = q->n_dcorr;
        memcpy(lj->out, d2->out, (size_t)d2->n_out * sizeof(int));
        memcpy(lj->out + d2->n_out, m->out, (size_t)m->n_out * sizeof(int));
        lj->est = sq_estimate(c, lj);
        p->in[0] = lj;
        p->est = lj->est;
        for (int i = 0; i < q->n_dom; i++) {
            p->out[i] = e[i];
            if (!(p->exprs[i] = sq_col_ref(c, e[i], -1)))
                return c->err->code;
        }
        for (int j = 0; j < n_vis; j++) {
            sq_expr *v = sq_col_ref(c, m->out[j], -1), *x = v;
            if (v && q->empties[j]) {
                sq_expr *mc = sq_col_ref(c, q->match_col, -1);
                sq_expr *emp = sq_subst_cols(c, q->empties[j], q->dom_inner, e, q->n_dom);
                sq_expr *a[3] = {mc ? sq_make(c, SQ_E_ISNULL, 0, &mc, 1, -1) : NULL,
                                 emp ? sq_cast(c, emp, v->type, -1) : NULL, v};
                x = a[0] && a[1] ? sq_make(c, SQ_E_CASE, 0, a, 3, -1) : NULL;
            }
            if (!x)
                return c->err->code ? c->err->code : PA_EINTERNAL;
            p->exprs[q->n_dom + j] = x;
            if ((p->out[q->n_dom + j] = x == v ? v->col : sq_new_col(c, names[j], v->type)) < 0)
                return c->err->code;
            pn[j] = names[j];
        }
        /* Joined to the left side on D's columns. */
        for (int i = 0; i < q->n_dom; i++) {
            if (!q->dom_used[i])
                continue;
            if ((rc = sq_not_distinct(c, sq_col_ref(c, e[i], -1), sq_col_ref(c, q->dom_outer[i], -1), cond + n_cond)))
                return rc;
            n_cond += 2;
        }
        r = p;
        names = pn;
        /* derived_rel binds r's first n_vis outputs: put the values first. */
        int *o2 = sq_alloc(&c->A, (size_t)(p->n_out + 1) * sizeof *o2);
        sq_expr **x2 = sq_alloc(&c->A, (size_t)(p->n_out + 1) * sizeof *x2);
        if (!o2 || !x2)
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        for (int i = 0; i < p->n_out; i++) {
            int from = i < n_vis ? q->n_dom + i : i - n_vis;
            o2[i] = p->out[from];
            x2[i] = p->exprs[from];
        }
        p->out = o2;
        p->exprs = x2;
    }
    const char **vn = sq_alloc(&c->A, (size_t)(n_vis + 1) * sizeof *vn);
    if (!vn)
        return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
    memcpy(vn, names, (size_t)n_vis * sizeof *vn);
    /* D's rows: from the left side, or the one relation whose columns it
     * reads. Reading several relations of a FROM list (whose join
     * conditions WHERE has not given yet), D would be the product of each
     * one's values: the lateral is joined after the others instead
     * (sq_from.lat_later), D from their join. */
    int n_src = 0, missing = 0;
    for (int k = 0; !f->lat_left && k < f->n_rels; k++) {
        bool reads = false;
        for (int i = 0; i < q->n_dom && !reads; i++)
            reads = q->dom_used[i] && sq_node_has_col(f->rels[k], q->dom_outer[i]);
        n_src += reads;
    }
    for (int i = 0; !f->lat_left && i < q->n_dom; i++) {
        int k = 0;
        while (q->dom_used[i] && k < f->n_rels && !sq_node_has_col(f->rels[k], q->dom_outer[i]))
            k++;
        missing += q->dom_used[i] && k == f->n_rels;   /* an earlier LATERAL's column */
    }
    if ((n_src > 1 || (missing && f->n_later)) && f->top) {
        if (f->n_later == f->cap_later) {
            int cap = f->cap_later ? 2 * f->cap_later : 4;
            sq_lateral *v = sq_alloc(&c->A, (size_t)cap * sizeof *v);
            if (!v)
                return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
            if (f->n_later)
                memcpy(v, f->later, (size_t)f->n_later * sizeof *v);
            f->later = v;
            f->cap_later = cap;
        }
        f->later[f->n_later++] = (sq_lateral){q, r, cond, n_cond};
        for (int i = 0; i < n_vis; i++) {
            const char *name = rs->alias && (size_t)i < rs->alias->n_colnames
                                   ? lower(c, sq_node_name(rs->alias->colnames[i]))
                                   : vn[i];
            if ((rc = sq_scope_add(c, sc, qual, name, r->out[i])))
                return rc;
        }
        return PA_OK;
    }
    sq_node **srcs = f->lat_left ? &f->lat_left : f->rels;
    if ((rc = sq_fill_domain(c, q, srcs, f->lat_left ? 1 : f->n_rels)))
        return rc;
    if (q->grouped)   /* one row per D row */
        r->est = r->in[0]->est = r->in[0]->in[0]->est = q->dnode->est;
    if (f->lat_left) {
        f->lat_conj = cond;
        f->n_lat_conj = n_cond;
    } else
        for (int i = 0; i < n_cond; i++)
            if ((rc = sq_conjuncts(c, cond[i], &f->conj, &f->n_conj, &f->cap_conj)))
                return rc;
    return derived_rel(c, r, vn, qual, rs->alias, -1, sc, f);
}

int sq_bind_from(sq_ctx *c, pgn *item, sq_scope *sc, sq_from *f)
{
    switch (item->node_case) {
    case PG_QUERY__NODE__NODE_RANGE_VAR: return bind_rangevar(c, item->range_var, sc, f);
    case PG_QUERY__NODE__NODE_RANGE_SUBSELECT: {
        PgQuery__RangeSubselect *rs = item->range_subselect;
        if (rs->lateral)
            return bind_lateral(c, rs, sc, f);
        sq_node *n;
        const char **names;
        int rc = sq_bind_select(c, rs->subquery, NULL, &n, &names, NULL);
        if (rc)
            return rc;
        const char *qual = rs->alias ? lower(c, rs->alias->aliasname) : NULL;
        return derived_rel(c, n, names, qual, rs->alias, -1, sc, f);
    }
    case PG_QUERY__NODE__NODE_RANGE_FUNCTION: return bind_function(c, item->range_function, sc, f);
    case PG_QUERY__NODE__NODE_JOIN_EXPR: {
        if (c->depth >= SQ_MAX_EXPR_DEPTH)
            return sq_fail(c, -1, PA_EUNSUPPORTED, "query nested too deep (more than %d levels of subqueries, set operations and joins)",
                           SQ_MAX_EXPR_DEPTH);
        c->depth++;
        int rc = bind_join(c, item->join_expr, sc, f);
        c->depth--;
        return rc;
    }
    default: return sq_fail(c, -1, PA_EUNSUPPORTED, "this kind of FROM item is not supported");
    }
}
