/*
 * cte.c - WITH queries: inlined at each reference, or evaluated once.
 *
 * A WITH query read several times (TPC-H Q15 reads its revenue view twice)
 * would otherwise run once per reference. It is materialized instead when
 *  - its name occurs at least twice in the statement besides its
 *    definition (counted on the scanner's identifier tokens: a column of
 *    the same name overcounts, which only costs the inlining below);
 *  - it aggregates (GROUP BY, DISTINCT or an aggregate in its select list),
 *    so its result is small next to its input; a plain filter over a table
 *    stays inlined, keeping its predicates' pushdown into the scan; or it
 *    ends in LIMIT/OFFSET, which could keep different rows in two runs;
 *  - the statement is run (EXPLAIN without ANALYZE runs nothing).
 * The result stays in device memory (keep_on_device: no round trip through
 * the host on a GPU), and ROWS hands out views of its chunks.
 * Materializing binds, lowers and runs the query in a plan of its own on
 * its first reference (over several ranks spread as a statement is, each
 * rank computing its part, and every rank given the whole result); every
 * reference then reads the result through a ROWS source (ex_rows) with
 * fresh column ids.
 *
 * WITH RECURSIVE q AS (anchor UNION [ALL] step), where step reads q, is
 * iterated as PostgreSQL defines it: the anchor's rows are the first
 * working table; each round binds and runs step with q read as the working
 * table, its rows (cast to the anchor's column types; with UNION, without
 * duplicates and without rows seen before) become the next working table,
 * until one is empty. The result is every round's rows. A round limit
 * (SQ_RECURSIVE_MAX_ROUNDS) stops a query that does not reach a fixed
 * point with an error saying so. Every round runs (EXPLAIN included).
 */
#include "sql/sql_int.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

/* Rounds of a WITH RECURSIVE query before it is an error. */
#define SQ_RECURSIVE_MAX_ROUNDS 10000

/* Occurrences of identifier `name` in text (unquoted: case-insensitive). */
static int count_ident(const char *text, const char *name)
{
    PgQueryScanResult r = pg_query_scan(text);
    if (r.error) {
        pg_query_free_scan_result(r);
        return 0;
    }
    PgQuery__ScanResult *s = pg_query__scan_result__unpack(NULL, r.pbuf.len, (const uint8_t *)r.pbuf.data);
    pg_query_free_scan_result(r);
    if (!s)
        return 0;
    int n = 0;
    size_t len = strlen(name);
    for (size_t i = 0; i < s->n_tokens; i++) {
        const PgQuery__ScanToken *t = s->tokens[i];
        if (t->token != PG_QUERY__TOKEN__IDENT || t->end - t->start != (int)len)
            continue;
        if (strncasecmp(text + t->start, name, len) == 0)
            n++;
    }
    pg_query__scan_result__free_unpacked(s, NULL);
    return n;
}

static bool aggregates(const PgQuery__SelectStmt *s)
{
    if (s->n_group_clause || s->n_distinct_clause)
        return true;
    for (size_t i = 0; i < s->n_target_list; i++) {
        const pgn *t = s->target_list[i];
        if (t->node_case != PG_QUERY__NODE__NODE_RES_TARGET || !t->res_target->val)
            continue;
        const pgn *v = t->res_target->val;
        if (v->node_case == PG_QUERY__NODE__NODE_FUNC_CALL && v->func_call->n_funcname &&
            sq_is_aggregate_name(sq_node_name(v->func_call->funcname[v->func_call->n_funcname - 1])))
            return true;
    }
    return false;
}

void sq_cte_decide(sq_ctx *c, sq_cte *q)
{
    q->materialize = false;
    const pgn *body = q->def->ctequery;
    if (c->no_run || !body || body->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
        return;
    /* Only a WITH of the statement itself (not of a view's text). */
    size_t len = strlen(q->name), tl = strlen(c->text);
    int at = q->def->location;
    if (at < 0 || (size_t)at + len > tl || strncasecmp(c->text + at, q->name, len) != 0)
        return;
    /* A LIMIT must be materialized too: two runs may keep different rows. */
    const PgQuery__SelectStmt *b = body->select_stmt;
    q->materialize = (aggregates(b) || b->limit_count || b->limit_offset) && count_ident(c->text, q->name) >= 3;
}

static int materialize(sq_ctx *c, sq_cte *q)
{
    ex_plan *saved_plan = c->plan, *plan = NULL;
    sq_cte *saved_ctes = c->ctes;
    int rc = ex_plan_create(&plan, c->err);
    if (rc != PA_OK)
        return rc;
    sq_node *n;
    ex_op *root;
    c->plan = plan;
    c->ctes = q->next; /* a CTE sees the ones before it */
    rc = sq_bind_select(c, q->def->ctequery, NULL, &n, &q->names, NULL);
    if (rc == PA_OK)   /* several ranks: each computes its part, all get the result */
        rc = sq_distribute_whole(c, &n);
    if (rc == PA_OK)
        rc = sq_lower_root(c, n, q->names, &root);
    if (rc == PA_OK)
        rc = sq_run_ex(c, plan, root, true, &q->rows);
    c->plan = saved_plan;
    c->ctes = saved_ctes;
    ex_plan_destroy(plan);
    if (rc == PA_OK && (rc = sq_keep_result(c, q->name, q->rows)) != PA_OK) {
        ex_result_destroy(q->rows);
        q->rows = NULL;
    }
    return rc;
}

/* A table reference named `name` anywhere in message m (a parse tree),
 * found through protobuf-c's descriptors: every message field and every
 * element of a repeated one, to depth 1000. */
static bool reads_name(const ProtobufCMessage *m, const char *name, int depth)
{
    if (!m || depth > 1000)
        return false;
    if (m->descriptor == &pg_query__range_var__descriptor) {
        const PgQuery__RangeVar *rv = (const PgQuery__RangeVar *)m;
        if ((!rv->schemaname || !*rv->schemaname) && rv->relname && !strcasecmp(rv->relname, name))
            return true;
    }
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        const char *at = (const char *)m + f->offset;
        /* a oneof's members share one pointer: only the set one is read */
        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && *(const uint32_t *)((const char *)m + f->quantifier_offset) != f->id)
            continue;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)((const char *)m + f->quantifier_offset);
            const ProtobufCMessage *const *v = *(const ProtobufCMessage *const *const *)at;
            for (size_t k = 0; k < n; k++)
                if (reads_name(v[k], name, depth + 1))
                    return true;
        } else if (reads_name(*(const ProtobufCMessage *const *)at, name, depth + 1))
            return true;
    }
    return false;
}

void sq_cte_recursive(sq_ctx *c, sq_cte *q)
{
    (void)c;
    const pgn *body = q->def->ctequery;
    if (!body || body->node_case != PG_QUERY__NODE__NODE_SELECT_STMT)
        return;
    const PgQuery__SelectStmt *b = body->select_stmt;
    if (b->op == PG_QUERY__SET_OPERATION__SETOP_UNION && b->rarg && b->larg &&
        (reads_name(&b->rarg->base, q->name, 0) || reads_name(&b->larg->base, q->name, 0))) {
        q->recursive = true;
        q->materialize = true;
    }
}

/* n's outputs cast to types (the anchor's), by a projection. */
static int cast_to(sq_ctx *c, sq_cte *q, sq_node **n, const pa_type *types, int k)
{
    sq_node *in = *n;
    if (in->n_out != k)
        return sq_fail(c, q->def->location, PA_EINVAL,
                       "each UNION query of recursive query \"%s\" must have the same number of columns (%d and %d)",
                       q->name, k, in->n_out);
    sq_node *p = sq_node_new(c, SQ_L_PROJECT, k);
    if (!p || !(p->exprs = sq_alloc(&c->A, (size_t)k * sizeof *p->exprs)))
        return c->err->code ? c->err->code : sq_fail(c, -1, PA_ENOMEM, "WITH %s: out of memory", q->name);
    for (int i = 0; i < k; i++) {
        sq_expr *e = sq_col_ref(c, in->out[i], -1);
        pa_type t;
        if (!e || !sq_common_type(c, e->type, types[i], &t) || !(e = sq_cast(c, e, types[i], -1)))
            return c->err->code ? c->err->code
                                : sq_fail(c, q->def->location, PA_EINVAL,
                                          "recursive query \"%s\" column %d has type %s in the non-recursive term but %s "
                                          "in the recursive one",
                                          q->name, i + 1, pa_type_name(types[i].id),
                                          pa_type_name(c->cols[in->out[i]].type.id));
        p->exprs[i] = e;
        if ((p->out[i] = e->kind == SQ_E_COL ? e->col : sq_new_col(c, q->names[i], types[i])) < 0)
            return c->err->code;
    }
    p->in[0] = in;
    p->est = in->est;
    *n = p;
    return PA_OK;
}

/* A ROWS node over r named as q's columns. */
static sq_node *rows_node(sq_ctx *c, sq_cte *q, const ex_result *r)
{
    sq_node *n = sq_node_new(c, SQ_L_ROWS, r->n_columns);
    if (!n)
        return NULL;
    for (int i = 0; i < r->n_columns; i++)
        if ((n->out[i] = sq_new_col(c, q->names[i], r->types[i])) < 0)
            return NULL;
    n->rows = r;
    n->est = r->n_rows > 1 ? (double)r->n_rows : 1;
    return n;
}

/* Lower and run n, in a plan of its own (a plan runs once), into a result
 * kept with the statement. */
static int run_node(sq_ctx *c, sq_cte *q, sq_node *n, ex_result **out)
{
    ex_op *root;
    ex_plan *saved = c->plan, *plan = NULL;
    int rc = ex_plan_create(&plan, c->err);
    if (rc != PA_OK)
        return rc;
    c->plan = plan;
    rc = sq_lower_root(c, n, q->names, &root);
    if (rc == PA_OK)
        rc = sq_run_ex(c, plan, root, true, out);
    c->plan = saved;
    ex_plan_destroy(plan);
    if (rc == PA_OK && (rc = sq_keep_result(c, NULL, *out)) != PA_OK) {
        ex_result_destroy(*out);
        *out = NULL;
    }
    return rc;
}

static int iterate(sq_ctx *c, sq_cte *q)
{
    if (c->s->opt.world && nt_size(c->s->opt.world) > 1)
        return sq_fail(c, q->def->location, PA_EUNSUPPORTED, "WITH RECURSIVE is not supported across ranks yet");
    const PgQuery__SelectStmt *b = q->def->ctequery->select_stmt;
    bool distinct = !b->all;
    ex_plan *saved_plan = c->plan, *plan = NULL;
    sq_cte *saved_ctes = c->ctes;
    int rc = ex_plan_create(&plan, c->err);
    if (rc != PA_OK)
        return rc;
    c->plan = plan;
    pgn larg = {0}, rarg = {0};
    larg.node_case = rarg.node_case = PG_QUERY__NODE__NODE_SELECT_STMT;
    larg.select_stmt = b->larg;
    rarg.select_stmt = b->rarg;
    /* the anchor: the WITH queries before q only */
    sq_node *n = NULL;
    const char **names = NULL;
    const ex_result **done = NULL;
    int n_done = 0;
    c->ctes = q->next;
    if (reads_name(&b->larg->base, q->name, 0))
        rc = sq_fail(c, q->def->location, PA_EINVAL, "recursive reference to query \"%s\" must not appear within its non-recursive term",
                     q->name);
    if (rc == PA_OK)
        rc = sq_bind_select(c, &larg, NULL, &n, &names, NULL);
    int k = rc == PA_OK ? n->n_out : 0;
    pa_type *types = NULL;
    if (rc == PA_OK) {
        q->names = sq_alloc(&c->A, (size_t)(k + 1) * sizeof *q->names);
        types = sq_alloc(&c->A, (size_t)(k + 1) * sizeof *types);
        if (!q->names || !types)
            rc = sq_fail(c, -1, PA_ENOMEM, "WITH %s: out of memory", q->name);
        for (int i = 0; rc == PA_OK && i < k; i++) {
            q->names[i] = i < (int)q->def->n_aliascolnames ? sq_node_name(q->def->aliascolnames[i]) : names[i];
            types[i] = c->cols[n->out[i]].type;
        }
    }
    if (rc == PA_OK && distinct) {
        sq_node *d = sq_node_new(c, SQ_L_DISTINCT, k);
        if (!d)
            rc = c->err->code;
        else {
            d->in[0] = n;
            memcpy(d->out, n->out, (size_t)k * sizeof(int));
            d->est = n->est;
            n = d;
        }
    }
    ex_result *work = NULL;
    if (rc == PA_OK)
        rc = run_node(c, q, n, &work);
    int cap = 0;
    for (int round = 1; rc == PA_OK && work && work->n_rows > 0; round++) {
        if (n_done == cap) {
            cap = cap ? 2 * cap : 16;
            const ex_result **v = sq_alloc(&c->A, (size_t)cap * sizeof *v);
            if (!v) {
                rc = sq_fail(c, -1, PA_ENOMEM, "WITH %s: out of memory", q->name);
                break;
            }
            if (n_done)
                memcpy(v, done, (size_t)n_done * sizeof *v);
            done = v;
        }
        done[n_done++] = work;
        if (round > SQ_RECURSIVE_MAX_ROUNDS) {
            rc = sq_fail(c, q->def->location, PA_EINVAL,
                         "WITH RECURSIVE query \"%s\" did not reach a fixed point after %d rounds (its last round "
                         "still gave %lld rows)",
                         q->name, SQ_RECURSIVE_MAX_ROUNDS, (long long)work->n_rows);
            break;
        }
        /* the step, reading the last round's rows as q */
        q->work = work;
        c->ctes = q;
        rc = sq_bind_select(c, &rarg, NULL, &n, &names, NULL);
        q->work = NULL;
        if (rc == PA_OK)
            rc = cast_to(c, q, &n, types, k);
        if (rc == PA_OK && distinct) {   /* new rows only */
            sq_node *u = sq_node_new(c, SQ_L_UNION, k);
            if (!u || !(u->ins = sq_alloc(&c->A, (size_t)n_done * sizeof *u->ins)) ||
                !(u->in_cols = sq_alloc(&c->A, (size_t)n_done * sizeof *u->in_cols)))
                rc = c->err->code ? c->err->code : sq_fail(c, -1, PA_ENOMEM, "WITH %s: out of memory", q->name);
            for (int i = 0; rc == PA_OK && i < n_done; i++) {
                sq_node *r = rows_node(c, q, done[i]);
                if (!r) {
                    rc = c->err->code;
                    break;
                }
                u->ins[i] = r;
                u->in_cols[i] = r->out;
            }
            if (rc == PA_OK) {
                u->n_ins = n_done;
                for (int i = 0; i < k && rc == PA_OK; i++)
                    if ((u->out[i] = sq_new_col(c, q->names[i], types[i])) < 0)
                        rc = c->err->code;
                u->est = 1;
            }
            if (rc == PA_OK && !(n = sq_set_difference(c, n, u, false)))
                rc = c->err->code ? c->err->code : PA_EINTERNAL;
        }
        work = NULL;
        if (rc == PA_OK)
            rc = run_node(c, q, n, &work);
    }
    /* every round's rows */
    if (rc == PA_OK && n_done <= 1)
        q->rows = n_done ? (ex_result *)done[0] : work;
    else if (rc == PA_OK) {
        sq_node *u = sq_node_new(c, SQ_L_UNION, k);
        if (!u || !(u->ins = sq_alloc(&c->A, (size_t)n_done * sizeof *u->ins)) ||
            !(u->in_cols = sq_alloc(&c->A, (size_t)n_done * sizeof *u->in_cols)))
            rc = c->err->code ? c->err->code : sq_fail(c, -1, PA_ENOMEM, "WITH %s: out of memory", q->name);
        for (int i = 0; rc == PA_OK && i < n_done; i++) {
            if (!(u->ins[i] = rows_node(c, q, done[i])))
                rc = c->err->code;
            else
                u->in_cols[i] = u->ins[i]->out;
        }
        u->n_ins = n_done;
        for (int i = 0; i < k && rc == PA_OK; i++)
            if ((u->out[i] = sq_new_col(c, q->names[i], types[i])) < 0)
                rc = c->err->code;
        if (rc == PA_OK)
            rc = run_node(c, q, u, &q->rows);
    }
    c->plan = saved_plan;
    c->ctes = saved_ctes;
    ex_plan_destroy(plan);
    return rc;
}

int sq_cte_ref(sq_ctx *c, sq_cte *q, sq_node **out, const char ***names)
{
    if (q->recursive && q->work) {   /* inside the step: the working table */
        sq_node *n = rows_node(c, q, q->work);
        if (!n)
            return c->err->code;
        *out = n;
        *names = q->names;
        return PA_OK;
    }
    if (q->recursive && !q->rows) {
        int rc = iterate(c, q);
        if (rc != PA_OK)
            return rc;
    }
    if (!q->materialize) {
        sq_cte *saved = c->ctes;
        c->ctes = q->next;
        int rc = sq_bind_select(c, q->def->ctequery, NULL, out, names, NULL);
        c->ctes = saved;
        return rc;
    }
    int rc;
    if (!q->rows && (rc = materialize(c, q)) != PA_OK)
        return rc;   /* (a recursive query has its rows by now) */
    const ex_result *r = q->rows;
    sq_node *n = sq_node_new(c, SQ_L_ROWS, r->n_columns);
    const char **nm = sq_alloc(&c->A, (size_t)(r->n_columns + 1) * sizeof *nm);
    if (!n || !nm)
        return sq_fail(c, -1, PA_ENOMEM, "WITH %s: out of memory", q->name);
    for (int i = 0; i < r->n_columns; i++) {
        nm[i] = q->names[i];
        if ((n->out[i] = sq_new_col(c, nm[i], r->types[i])) < 0)
            return c->err->code;
    }
    n->rows = r;
    n->est = r->n_rows > 1 ? (double)r->n_rows : 1;
    *out = n;
    *names = nm;
    return PA_OK;
}
