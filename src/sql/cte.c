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
 */
#include "sql/sql_int.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

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

int sq_cte_ref(sq_ctx *c, sq_cte *q, sq_node **out, const char ***names)
{
    if (!q->materialize) {
        sq_cte *saved = c->ctes;
        c->ctes = q->next;
        int rc = sq_bind_select(c, q->def->ctequery, NULL, out, names, NULL);
        c->ctes = saved;
        return rc;
    }
    int rc;
    if (!q->rows && (rc = materialize(c, q)) != PA_OK)
        return rc;
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
