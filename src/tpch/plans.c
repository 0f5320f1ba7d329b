/*
 * plans.c - hand-built physical plans for TPC-H Q1, Q3, Q6 and Q18 with the
 * specification's validation parameters, over DIR/<table>.parquet (or a
 * directory of parts DIR/<table>/). They are the engine's end-to-end checks
 * and the workload of `pista bench engine` until the SQL front end plans the
 * query texts itself. Each plan is what a good optimiser would produce:
 * predicates pushed into the scans, only the needed columns read, the
 * smaller input as the build side of every join, ORDER BY ... LIMIT as TOPN.
 * Output column names are the answers' (shared/tpch/answers).
 */
#include "tpch/tpch.h"

#include "exec/exec.h"

#include <stdio.h>
#include <sys/stat.h>

/* Helpers that keep the plans readable: they stop at the first error (the
 * pa_err keeps it) and return NULL from then on. */
typedef struct pb {
    ex_plan *p;
    const char *dir;
    pa_err *err;
    int rc;
    char paths[8][1024];
    int n_paths;
} pb;

static const char *table_path(pb *b, const char *table)
{
    if (b->n_paths == 8)
        return NULL;
    char *path = b->paths[b->n_paths++];
    struct stat st;
    snprintf(path, sizeof b->paths[0], "%s/%s.parquet", b->dir, table);
    if (stat(path, &st) != 0)   /* no single file: a directory of parts */
        snprintf(path, sizeof b->paths[0], "%s/%s", b->dir, table);
    return path;
}

static ex_op *scan(pb *b, const char *table, const char *const *cols, int n_cols, const pq_pred *preds, int n_preds)
{
    if (b->rc != PA_OK)
        return NULL;
    const char *path = table_path(b, table);
    ex_op *op = NULL;
    b->rc = ex_scan(b->p, &path, 1, cols, n_cols, preds, n_preds, &op, b->err);
    return op;
}

static ex_expr *col(pb *b, const ex_op *in, const char *name)
{
    if (b->rc != PA_OK || !in)
        return NULL;
    int i = ex_op_find_column(in, name);
    if (i < 0) {
        b->rc = pa_error(b->err, PA_EINTERNAL, "TPC-H plan: no column %s", name);
        return NULL;
    }
    return ex_expr_col(b->p, in, i, b->err);
}

static int idx(pb *b, const ex_op *in, const char *name)
{
    int i = in ? ex_op_find_column(in, name) : -1;
    if (i < 0 && b->rc == PA_OK)
        b->rc = pa_error(b->err, PA_EINTERNAL, "TPC-H plan: no column %s", name);
    return i;
}

/* price * (1 - discount) */
static ex_expr *disc_price(pb *b, const ex_op *in)
{
    ex_expr *one = ex_expr_int(b->p, 1, b->err);
    return ex_expr_arith(b->p, EX_MUL, col(b, in, "l_extendedprice"),
                         ex_expr_arith(b->p, EX_SUB, one, col(b, in, "l_discount"), b->err), b->err);
}

static ex_op *project(pb *b, ex_op *in, ex_expr *const *e, const char *const *names, int n)
{
    if (b->rc != PA_OK)
        return NULL;
    for (int i = 0; i < n; i++)
        if (!e[i]) {
            b->rc = b->err && b->err->code ? b->err->code : PA_EINTERNAL;
            return NULL;
        }
    ex_op *op = NULL;
    b->rc = ex_project(b->p, in, e, names, n, &op, b->err);
    return op;
}

static ex_op *join(pb *b, ex_op *probe, ex_op *build, ex_join_type t, const char *pk, const char *bk,
                   const char *const *build_out, int n_out)
{
    if (b->rc != PA_OK)
        return NULL;
    int p = idx(b, probe, pk), k = idx(b, build, bk), outs[8];
    for (int i = 0; i < n_out; i++)
        outs[i] = idx(b, build, build_out[i]);
    if (b->rc != PA_OK)
        return NULL;
    ex_op *op = NULL;
    b->rc = ex_hash_join(b->p, probe, build, t, &p, &k, 1, outs, n_out, &op, b->err);
    return op;
}

static ex_op *aggregate(pb *b, ex_op *in, const char *const *groups, int ng, const ex_agg *aggs, int na,
                        const char *const *names)
{
    if (b->rc != PA_OK)
        return NULL;
    int g[8];
    for (int i = 0; i < ng; i++)
        g[i] = idx(b, in, groups[i]);
    if (b->rc != PA_OK)
        return NULL;
    ex_op *op = NULL;
    b->rc = ex_aggregate(b->p, in, g, ng, aggs, na, names, &op, b->err);
    return op;
}

static ex_op *q1(pb *b)
{
    static const char *const cols[] = {"l_returnflag", "l_linestatus", "l_quantity", "l_extendedprice",
                                       "l_discount", "l_tax"};
    /* l_shipdate <= date '1998-12-01' - interval '90' day */
    pq_pred pred = {"l_shipdate", PQ_OP_LE, "1998-09-02"};
    ex_op *li = scan(b, "lineitem", cols, 6, &pred, 1);
    if (!li)
        return NULL;
    ex_expr *dp = disc_price(b, li);
    ex_expr *e[] = {
        col(b, li, "l_returnflag"), col(b, li, "l_linestatus"), col(b, li, "l_quantity"),
        col(b, li, "l_extendedprice"), dp,
        ex_expr_arith(b->p, EX_MUL, dp,
                      ex_expr_arith(b->p, EX_ADD, ex_expr_int(b->p, 1, b->err), col(b, li, "l_tax"), b->err),
                      b->err),
        col(b, li, "l_discount"),
    };
    static const char *const pn[] = {"l_returnflag", "l_linestatus", "qty", "price", "disc_price", "charge", "disc"};
    ex_op *pr = project(b, li, e, pn, 7);
    static const char *const groups[] = {"l_returnflag", "l_linestatus"};
    static const ex_agg aggs[] = {{EX_AGG_SUM, 2}, {EX_AGG_SUM, 3}, {EX_AGG_SUM, 4}, {EX_AGG_SUM, 5},
                                  {EX_AGG_AVG, 2}, {EX_AGG_AVG, 3}, {EX_AGG_AVG, 6}, {EX_AGG_COUNT_STAR, 0}};
    static const char *const names[] = {"sum_qty", "sum_base_price", "sum_disc_price", "sum_charge",
                                        "avg_qty", "avg_price", "avg_disc", "count_order"};
    ex_op *ag = aggregate(b, pr, groups, 2, aggs, 8, names);
    if (!ag)
        return NULL;
    ex_sort_key keys[] = {{0, false, false}, {1, false, false}};
    ex_op *out = NULL;
    b->rc = ex_sort(b->p, ag, keys, 2, &out, b->err);
    return out;
}

static ex_op *q3(pb *b)
{
    static const char *const ccols[] = {"c_custkey"};
    pq_pred cpred = {"c_mktsegment", PQ_OP_EQ, "BUILDING"};
    ex_op *cust = scan(b, "customer", ccols, 1, &cpred, 1);
    static const char *const ocols[] = {"o_orderkey", "o_custkey", "o_orderdate", "o_shippriority"};
    pq_pred opred = {"o_orderdate", PQ_OP_LT, "1995-03-15"};
    ex_op *ord = scan(b, "orders", ocols, 4, &opred, 1);
    ex_op *oc = join(b, ord, cust, EX_JOIN_SEMI, "o_custkey", "c_custkey", NULL, 0);
    static const char *const lcols[] = {"l_orderkey", "l_extendedprice", "l_discount"};
    pq_pred lpred = {"l_shipdate", PQ_OP_GT, "1995-03-15"};
    ex_op *li = scan(b, "lineitem", lcols, 3, &lpred, 1);
    static const char *const bout[] = {"o_orderdate", "o_shippriority"};
    ex_op *j = join(b, li, oc, EX_JOIN_INNER, "l_orderkey", "o_orderkey", bout, 2);
    if (!j)
        return NULL;
    ex_expr *e[] = {col(b, j, "l_orderkey"), disc_price(b, j), col(b, j, "o_orderdate"), col(b, j, "o_shippriority")};
    static const char *const pn[] = {"l_orderkey", "rev", "o_orderdate", "o_shippriority"};
    ex_op *pr = project(b, j, e, pn, 4);
    static const char *const groups[] = {"l_orderkey", "o_orderdate", "o_shippriority"};
    static const ex_agg aggs[] = {{EX_AGG_SUM, 1}};
    static const char *const names[] = {"revenue"};
    ex_op *ag = aggregate(b, pr, groups, 3, aggs, 1, names);
    if (!ag)
        return NULL;
    ex_expr *o[] = {col(b, ag, "l_orderkey"), col(b, ag, "revenue"), col(b, ag, "o_orderdate"),
                    col(b, ag, "o_shippriority")};
    ex_op *re = project(b, ag, o, NULL, 4);
    if (!re)
        return NULL;
    ex_sort_key keys[] = {{1, true, true}, {2, false, false}};
    ex_op *out = NULL;
    b->rc = ex_topn(b->p, re, keys, 2, 10, 0, &out, b->err);
    return out;
}

static ex_op *q6(pb *b)
{
    static const char *const cols[] = {"l_extendedprice", "l_discount"};
    /* between 0.06 - 0.01 and 0.06 + 0.01: exact decimals 0.05 and 0.07 */
    pq_pred preds[] = {{"l_shipdate", PQ_OP_GE, "1994-01-01"}, {"l_shipdate", PQ_OP_LT, "1995-01-01"},
                       {"l_discount", PQ_OP_GE, "0.05"},       {"l_discount", PQ_OP_LE, "0.07"},
                       {"l_quantity", PQ_OP_LT, "24"}};
    ex_op *li = scan(b, "lineitem", cols, 2, preds, 5);
    if (!li)
        return NULL;
    ex_expr *e[] = {ex_expr_arith(b->p, EX_MUL, col(b, li, "l_extendedprice"), col(b, li, "l_discount"), b->err)};
    static const char *const pn[] = {"rev"};
    ex_op *pr = project(b, li, e, pn, 1);
    static const ex_agg aggs[] = {{EX_AGG_SUM, 0}};
    static const char *const names[] = {"revenue"};
    return aggregate(b, pr, NULL, 0, aggs, 1, names);
}

static ex_op *q18(pb *b)
{
    /* o_orderkey in (select l_orderkey from lineitem group by l_orderkey having sum(l_quantity) > 300) */
    static const char *const lcols[] = {"l_orderkey", "l_quantity"};
    ex_op *li1 = scan(b, "lineitem", lcols, 2, NULL, 0);
    static const char *const g1[] = {"l_orderkey"};
    static const ex_agg a1[] = {{EX_AGG_SUM, 1}};
    static const char *const n1[] = {"sum_qty"};
    ex_op *big = aggregate(b, li1, g1, 1, a1, 1, n1);
    if (!big)
        return NULL;
    ex_expr *having = ex_expr_cmp(b->p, EX_GT, col(b, big, "sum_qty"), ex_expr_int(b->p, 300, b->err), b->err);
    ex_op *bigf = NULL;
    if (!having || (b->rc = ex_filter(b->p, big, having, &bigf, b->err)) != PA_OK)
        return NULL;

    static const char *const ocols[] = {"o_orderkey", "o_custkey", "o_orderdate", "o_totalprice"};
    ex_op *ord = scan(b, "orders", ocols, 4, NULL, 0);
    ex_op *obig = join(b, ord, bigf, EX_JOIN_SEMI, "o_orderkey", "l_orderkey", NULL, 0);
    static const char *const ccols[] = {"c_custkey", "c_name"};
    ex_op *cust = scan(b, "customer", ccols, 2, NULL, 0);
    static const char *const oout[] = {"o_orderkey", "o_orderdate", "o_totalprice"};
    ex_op *co = join(b, cust, obig, EX_JOIN_INNER, "c_custkey", "o_custkey", oout, 3);
    ex_op *li2 = scan(b, "lineitem", lcols, 2, NULL, 0);
    static const char *const cout[] = {"c_name", "c_custkey", "o_orderdate", "o_totalprice"};
    ex_op *j = join(b, li2, co, EX_JOIN_INNER, "l_orderkey", "o_orderkey", cout, 4);
    static const char *const g2[] = {"c_name", "c_custkey", "l_orderkey", "o_orderdate", "o_totalprice"};
    static const ex_agg a2[] = {{EX_AGG_SUM, 1}};
    static const char *const n2[] = {"sum(l_quantity)"};
    ex_op *ag = aggregate(b, j, g2, 5, a2, 1, n2);
    if (!ag)
        return NULL;
    ex_expr *o[] = {col(b, ag, "c_name"), col(b, ag, "c_custkey"), col(b, ag, "l_orderkey"),
                    col(b, ag, "o_orderdate"), col(b, ag, "o_totalprice"), col(b, ag, "sum(l_quantity)")};
    static const char *const on[] = {"c_name", "c_custkey", "o_orderkey", "o_orderdate", "o_totalprice",
                                     "sum(l_quantity)"};
    ex_op *re = project(b, ag, o, on, 6);
    if (!re)
        return NULL;
    ex_sort_key keys[] = {{4, true, true}, {3, false, false}};
    ex_op *out = NULL;
    b->rc = ex_topn(b->p, re, keys, 2, 100, 0, &out, b->err);
    return out;
}

bool tp_plan_available(int query)
{
    return query == 1 || query == 3 || query == 6 || query == 18;
}

int tp_plan_build(int query, const char *data_dir, ex_plan *plan, ex_op **root, pa_err *err)
{
    pb b = {.p = plan, .dir = data_dir, .err = err, .rc = PA_OK};
    ex_op *r = NULL;
    switch (query) {
    case 1: r = q1(&b); break;
    case 3: r = q3(&b); break;
    case 6: r = q6(&b); break;
    case 18: r = q18(&b); break;
    default:
        return pa_error(err, PA_EINVAL, "no hand-built plan for TPC-H Q%d (there are Q1, Q3, Q6 and Q18)", query);
    }
    if (b.rc == PA_OK && !r)
        b.rc = err && err->code ? err->code : PA_EINTERNAL;
    if (b.rc != PA_OK)
        return b.rc;
    *root = r;
    return PA_OK;
}
