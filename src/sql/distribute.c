/*
 * distribute.c - a statement over several ranks (sql_options.world).
 *
 * Every rank runs the same statements in the same order over the same
 * tables (the same --data, seen by every rank), so every rank binds and
 * optimizes the same logical plan. Then:
 *
 * - The table to split is the biggest one the plan scans exactly once
 *   (a table read twice, or a subtree used twice by a magic set, is not
 *   split). Each rank reads its share of it: row group i of the table's
 *   files (in scan order) belongs to rank i mod N. Every other table is
 *   read whole by every rank (replicated).
 * - From that scan up, the plan is *linear* in the split table as long as
 *   each operator's output is the union of its outputs over the shares:
 *   filters, projections, inner joins (on either side), and LEFT, SEMI,
 *   ANTI and MARK joins (and scalar-subquery joins) whose outer side holds
 *   the split table (the inner side is read whole). The highest such
 *   operator is the cut.
 * - Every rank runs the plan below the cut on its share; the rows are
 *   gathered to rank 0 (one src/net round), where they take the cut's place
 *   as a ROWS source, and rank 0 runs the rest (aggregates, sorts, limits)
 *   and has the result. The other ranks are done with the statement.
 * - An aggregate right above the cut whose aggregates merge (SUM, COUNT,
 *   MIN, MAX, AVG of DOUBLE; see partial_agg) runs in part on every rank,
 *   and rank 0 aggregates the partial rows: groups travel, not rows.
 *
 * Each statement makes exactly one round on every rank, whatever happens:
 * the gather; or, for a statement not split (nothing to split, EXPLAIN,
 * DDL) or one that failed before its gather, an empty gather or nt_fail at
 * the end (sq_statement_round). So ranks never pair one statement's round
 * with another's, and an error on any rank fails the statement on every
 * rank, named. Not yet: exchanges between ranks below the cut (a join of two
 * split tables, repartitioned aggregates), which the next step adds
 * (issue 16).
 */
#include "sql/sql_int.h"

#include <stdio.h>
#include <string.h>

static int n_inputs(const sq_node *n) { return n->kind == SQ_L_UNION ? n->n_ins : 2; }
static sq_node **input_slot(sq_node *n, int i) { return n->kind == SQ_L_UNION ? &n->ins[i] : &n->in[i]; }

/* Scans of each table, counted over every path (a shared subtree twice). */
typedef struct scan_count {
    sq_table *t[64];
    int n[64];
    int k;
} scan_count;

static void count_scans(sq_node *n, scan_count *sc, int depth)
{
    if (!n || depth > 10000)
        return;
    if (n->kind == SQ_L_SCAN && n->table) {
        int i = 0;
        while (i < sc->k && sc->t[i] != n->table)
            i++;
        if (i == sc->k && sc->k < 64)
            sc->t[sc->k++] = n->table;
        if (i < sc->k)
            sc->n[i]++;
        return;
    }
    for (int i = 0; i < n_inputs(n); i++)
        count_scans(*input_slot(n, i), sc, depth + 1);
}

/* The path from n down to the scan of t: nodes[0] = n, ..., the scan; slot[i]
 * = the input of nodes[i] the path takes. */
typedef struct path {
    sq_node *nodes[256];
    int slot[256];
    int len;
} path;

static bool find_scan(sq_node *n, const sq_table *t, path *p)
{
    if (!n || p->len >= 256)
        return false;
    p->nodes[p->len++] = n;
    if (n->kind == SQ_L_SCAN && n->table == t)
        return true;
    for (int i = 0; n->kind != SQ_L_SCAN && i < n_inputs(n); i++) {
        p->slot[p->len - 1] = i;
        if (find_scan(*input_slot(n, i), t, p))
            return true;
    }
    p->len--;
    return false;
}

/* Whether n's output is the union over the shares of its input `slot`'s. */
static bool linear(const sq_node *n, int slot)
{
    switch (n->kind) {
    case SQ_L_FILTER:
    case SQ_L_PROJECT: return true;
    case SQ_L_JOIN:
        if (n->jkind == SQ_J_INNER && !n->single)
            return true;
        return slot == 0 && (n->jkind == SQ_J_INNER || n->jkind == SQ_J_LEFT || n->jkind == SQ_J_SEMI ||
                             n->jkind == SQ_J_ANTI || n->jkind == SQ_J_MARK);
    default: return false;
    }
}

static const char *kind_name(const sq_node *n)
{
    static const char *const names[] = {"SCAN", "FILTER", "PROJECT", "JOIN", "AGGREGATE", "DISTINCT",
                                        "SORT", "LIMIT", "UNION", "VALUES", "ROWS"};
    return (unsigned)n->kind < sizeof names / sizeof *names ? names[n->kind] : "?";
}

/* An aggregate over the cut whose aggregates merge: each rank aggregates
 * its share (the partial node returned, over g) and rank 0 aggregates the
 * partial rows (final_partial). SUM, MIN and MAX merge as themselves,
 * COUNT as the SUM of counts, AVG of DOUBLE as a SUM and a COUNT whose
 * quotient rank 0 takes (a DOUBLE sum depends on the order of its terms
 * anyway). AVG of an integer or DECIMAL does not: the engine divides the
 * exact sum in x87 extended precision, and a DOUBLE division of the merged
 * sum can differ in the last bit (to do: an exact merge). Nor does
 * COUNT(DISTINCT). Those give NULL, and the rows travel. */
static sq_node *partial_agg(sq_ctx *c, sq_node *agg, sq_node *g)
{
    if (agg->kind != SQ_L_AGG || agg->in[0] != g)
        return NULL;
    int n = 0;
    for (int i = 0; i < agg->n_aggs; i++) {
        ex_agg_kind k = agg->aggs[i].kind;
        if (k != EX_AGG_SUM && k != EX_AGG_COUNT && k != EX_AGG_COUNT_STAR && k != EX_AGG_MIN && k != EX_AGG_MAX &&
            (k != EX_AGG_AVG || c->cols[agg->aggs[i].arg].type.id != PA_TYPE_DOUBLE))
            return NULL;
        n += k == EX_AGG_AVG ? 2 : 1;
    }
    sq_node *p = sq_node_new(c, SQ_L_AGG, agg->n_groups + n);
    sq_aggdef *aggs = sq_alloc(&c->A, (size_t)(n + 1) * sizeof *aggs);
    if (!p || !aggs)
        return NULL;
    p->in[0] = g;
    p->n_groups = agg->n_groups;
    p->groups = agg->groups;
    p->n_aggs = n;
    p->aggs = aggs;
    p->est = agg->est;
    for (int i = 0; i < agg->n_groups; i++)
        p->out[i] = agg->groups[i];   /* the keys keep their ids: the final node groups on them */
    int k = 0;
    for (int i = 0; i < agg->n_aggs; i++) {
        const sq_aggdef *a = &agg->aggs[i];
        pa_type arg = a->arg >= 0 ? c->cols[a->arg].type : (pa_type){.id = PA_TYPE_BIGINT};
        ex_agg_kind parts[2] = {a->kind == EX_AGG_AVG ? EX_AGG_SUM : a->kind, EX_AGG_COUNT};
        for (int j = 0; j < (a->kind == EX_AGG_AVG ? 2 : 1); j++, k++) {
            pa_type t;
            if (ex_agg_type(parts[j], arg, &t, NULL) != PA_OK)
                return NULL;
            int id = sq_new_col(c, c->cols[a->out].name, t);
            if (id < 0)
                return NULL;
            aggs[k] = (sq_aggdef){parts[j], a->arg, id};
            p->out[agg->n_groups + k] = id;
        }
    }
    return p;
}

/* The final step of agg on rank 0 over the partial rows: an aggregate of
 * the partial columns, and (with AVG) agg becomes a projection over it
 * that divides. agg keeps its output ids, so its parent is unchanged. */
static int final_partial(sq_ctx *c, sq_node *agg, const sq_node *partial, sq_node *rows)
{
    bool avg = false;
    for (int i = 0; i < agg->n_aggs; i++)
        avg |= agg->aggs[i].kind == EX_AGG_AVG;
    sq_node *fin = avg ? sq_node_new(c, SQ_L_AGG, agg->n_groups + partial->n_aggs) : agg;
    sq_aggdef *fa = avg ? sq_alloc(&c->A, (size_t)(partial->n_aggs + 1) * sizeof *fa) : agg->aggs;
    sq_expr **ex = avg ? sq_alloc(&c->A, (size_t)(agg->n_out + 1) * sizeof *ex) : NULL;
    if (!fin || !fa || (avg && !ex))
        return sq_fail(c, -1, PA_ENOMEM, "out of memory spreading an aggregate");
    fin->in[0] = rows;
    int k = 0;
    for (int i = 0; i < agg->n_aggs; i++) {
        const sq_aggdef a = agg->aggs[i];
        if (a.kind != EX_AGG_AVG) {   /* SUM, MIN, MAX as themselves; counts add up */
            ex_agg_kind fk = a.kind == EX_AGG_MIN || a.kind == EX_AGG_MAX ? a.kind : EX_AGG_SUM;
            fa[k] = (sq_aggdef){fk, partial->aggs[k].out, a.out};
            if (avg && !(ex[agg->n_groups + i] = sq_col_ref(c, a.out, -1)))
                return c->err->code;
            k++;
            continue;
        }
        int ids[2];
        for (int j = 0; j < 2; j++, k++) {
            pa_type t;
            int rc = ex_agg_type(EX_AGG_SUM, c->cols[partial->aggs[k].out].type, &t, c->err);
            if (rc != PA_OK || (ids[j] = sq_new_col(c, c->cols[a.out].name, t)) < 0)
                return c->err->code ? c->err->code : PA_EINTERNAL;
            fa[k] = (sq_aggdef){EX_AGG_SUM, partial->aggs[k].out, ids[j]};
        }
        /* sum / CASE WHEN count = 0 THEN NULL ELSE count END, in DOUBLE */
        pa_type dbl = {.id = PA_TYPE_DOUBLE}, bigint = {.id = PA_TYPE_BIGINT};
        ex_expr *zero = ex_expr_int(c->plan, 0, c->err), *null = ex_expr_null(c->plan, bigint, c->err);
        sq_expr *cmp_args[2] = {sq_col_ref(c, ids[1], -1), zero ? sq_const(c, zero, -1) : NULL};
        sq_expr *case_args[3] = {sq_make(c, SQ_E_CMP, EX_EQ, cmp_args, 2, -1), null ? sq_const(c, null, -1) : NULL,
                                 sq_col_ref(c, ids[1], -1)};
        sq_expr *div_args[2] = {sq_cast(c, sq_col_ref(c, ids[0], -1), dbl, -1),
                                sq_cast(c, sq_make(c, SQ_E_CASE, 0, case_args, 3, -1), dbl, -1)};
        if (!(ex[agg->n_groups + i] = sq_make(c, SQ_E_ARITH, EX_DIV, div_args, 2, -1)))
            return c->err->code ? c->err->code : PA_EINTERNAL;
    }
    if (!avg)
        return PA_OK;
    fin->n_groups = agg->n_groups;
    fin->groups = agg->groups;
    fin->n_aggs = partial->n_aggs;
    fin->aggs = fa;
    fin->est = agg->est;
    for (int i = 0; i < agg->n_groups; i++) {
        fin->out[i] = agg->out[i];
        if (!(ex[i] = sq_col_ref(c, agg->out[i], -1)))
            return c->err->code;
    }
    for (int j = 0; j < partial->n_aggs; j++)
        fin->out[agg->n_groups + j] = fa[j].out;
    agg->kind = SQ_L_PROJECT;   /* same node, same output ids: the parent is unchanged */
    agg->in[0] = fin;
    agg->exprs = ex;
    return PA_OK;
}

int sq_keep_result(sq_ctx *c, const char *name, ex_result *r)
{
    if (c->n_mats == c->cap_mats) {
        int cap = c->cap_mats ? 2 * c->cap_mats : 4;
        ex_result **v = pa_realloc(c->mats, (size_t)cap * sizeof *v);
        const char **nv = sq_alloc(&c->A, (size_t)cap * sizeof *nv);
        if (v)
            c->mats = v;
        if (!v || !nv)
            return sq_fail(c, -1, PA_ENOMEM, "out of memory keeping %s", name);
        if (c->n_mats)
            memcpy(nv, c->mat_names, (size_t)c->n_mats * sizeof *nv);
        c->mat_names = nv;
        c->cap_mats = cap;
    }
    c->mat_names[c->n_mats] = name;
    c->mats[c->n_mats++] = r;
    return PA_OK;
}

int sq_statement_round(sq_ctx *c, int rc)
{
    nt_world *w = c->s->opt.world;
    if (!w || nt_size(w) < 2 || c->dist_round)
        return rc;
    c->dist_round = true;
    pa_err e;
    pa_err_init(&e);
    int r;
    if (rc != PA_OK) {
        r = nt_fail(w, c->err, &e);   /* the others get it; ours is in c->err already */
    } else {
        nt_buf *recv = nt_rank(w) == 0 ? pa_calloc((size_t)nt_size(w), sizeof *recv) : NULL;
        r = nt_rank(w) == 0 && !recv ? pa_error(&e, PA_ENOMEM, "out of memory") : nt_gather(w, 0, NULL, 0, recv, &e);
        for (int p = 0; recv && r == PA_OK && p < nt_size(w); p++)
            nt_buf_release(w, recv[p].data);
        pa_free(recv);
        if (r != PA_OK)
            pa_err_propagate(c->err, &e);
    }
    pa_err_close(&e);
    return rc != PA_OK ? rc : r;
}

int sq_distribute(sq_ctx *c, sq_node **root)
{
    nt_world *w = c->s->opt.world;
    if (!w || nt_size(w) < 2 || c->dist_round)
        return PA_OK;
    int me = nt_rank(w), size = nt_size(w);
    /* The table to split: the biggest scanned exactly once. */
    scan_count sc = {0};
    count_scans(*root, &sc, 0);
    sq_table *t = NULL;
    for (int i = 0; i < sc.k; i++)
        if (sc.n[i] == 1 && (!t || sc.t[i]->rows > t->rows))
            t = sc.t[i];
    if (!t)
        return PA_OK;   /* nothing to split: rank 0 alone runs it (sq_statement_round) */
    path p = {0};
    if (!find_scan(*root, t, &p))
        return PA_OK;
    int cut = p.len - 1;
    while (cut > 0 && linear(p.nodes[cut - 1], p.slot[cut - 1]))
        cut--;
    sq_node *g = p.nodes[cut], *scan = p.nodes[p.len - 1];
    scan->share_part = me;
    scan->share_parts = size;
    /* An aggregate right above the cut is computed in part on every rank. */
    sq_node *agg = cut > 0 ? p.nodes[cut - 1] : NULL, *partial = agg ? partial_agg(c, agg, g) : NULL;
    if (c->err->code != PA_OK)
        return c->err->code;
    sq_node *below = g;   /* the cut, as the plan had it */
    if (partial)
        g = partial;

    /* This rank's share of the rows below the cut. */
    const char **names = sq_alloc(&c->A, (size_t)(g->n_out + 1) * sizeof *names);
    if (!names)
        return sq_fail(c, -1, PA_ENOMEM, "out of memory spreading the statement");
    for (int i = 0; i < g->n_out; i++)
        names[i] = c->cols[g->out[i]].name;
    ex_plan *saved = c->plan, *plan = NULL;
    ex_result *part = NULL;
    ex_op *op;
    int rc = ex_plan_create(&plan, c->err);
    if (rc == PA_OK) {
        c->plan = plan;
        rc = sq_lower_root(c, g, names, &op);
        if (rc == PA_OK)
            rc = sq_run_ex(c, plan, op, false, &part);
        c->plan = saved;
        ex_plan_destroy(plan);
    }
    void *buf = NULL;
    int64_t nb = 0;
    if (rc == PA_OK)
        rc = ex_result_pack(part, &buf, &nb, c->err);
    if (rc != PA_OK) {
        ex_result_destroy(part);
        return sq_statement_round(c, rc);
    }
    /* The statement's round: every rank's rows to rank 0. */
    c->dist_round = true;
    nt_buf *recv = me == 0 ? pa_calloc((size_t)size, sizeof *recv) : NULL;
    if (me == 0 && !recv) {
        pa_free(buf);
        ex_result_destroy(part);
        c->dist_round = false;
        return sq_statement_round(c, sq_fail(c, -1, PA_ENOMEM, "out of memory gathering rows"));
    }
    rc = nt_gather(w, 0, buf, nb, recv, c->err);
    pa_free(buf);
    int64_t mine = part->n_rows;
    ex_result *all = NULL;
    if (rc == PA_OK && me == 0) {
        const void **bufs = pa_calloc((size_t)size, sizeof *bufs);
        int64_t *sizes = pa_calloc((size_t)size, sizeof *sizes);
        rc = bufs && sizes ? PA_OK : sq_fail(c, -1, PA_ENOMEM, "out of memory gathering rows");
        for (int i = 0; rc == PA_OK && i < size; i++) {
            bufs[i] = recv[i].data;
            sizes[i] = recv[i].bytes;
        }
        if (rc == PA_OK)
            rc = ex_result_unpack(c->s->opt.dev, part->n_columns, part->names, part->types, bufs, sizes, size, &all,
                                  c->err);
        pa_free(bufs), pa_free(sizes);
    }
    for (int i = 0; recv && i < size; i++)
        nt_buf_release(w, recv[i].data);
    pa_free(recv);
    if (all) {   /* the statement's counters and time include rank 0's part (session.c adds them) */
        all->stats.counters = part->stats.counters;
        all->stats.ns_total = part->stats.ns_total;
        all->stats.mem_peak = part->stats.mem_peak;
    }
    ex_result_destroy(part);
    if (rc != PA_OK)
        return rc;
    if (me != 0) {
        c->passive = true;
        return PA_OK;
    }
    if ((rc = sq_keep_result(c, "the ranks' rows", all)) != PA_OK) {
        ex_result_destroy(all);
        return rc;
    }
    c->gathered = all;
    sq_node *rows = sq_node_new(c, SQ_L_ROWS, g->n_out);
    if (!rows)
        return c->err->code;
    memcpy(rows->out, g->out, (size_t)g->n_out * sizeof *rows->out);
    rows->rows = all;
    rows->est = all->n_rows > 1 ? (double)all->n_rows : 1;
    char label[128];
    snprintf(label, sizeof label, "GATHERED %lld %s from %d ranks", (long long)all->n_rows,
             partial ? "partial aggregate rows" : "rows", size);
    rows->label = sq_strndup(&c->A, label, strlen(label));
    if (partial) {
        if ((rc = final_partial(c, agg, partial, rows)) != PA_OK)
            return rc;
    } else if (cut == 0)
        *root = rows;
    else
        *input_slot(p.nodes[cut - 1], p.slot[cut - 1]) = rows;
    char note[320];
    snprintf(note, sizeof note,
             "distributed over %d ranks: %s split by row groups, the rest read whole by every rank; "
             "%lld %s gathered to rank 0 at the %s below the rest (%lld of them rank 0's)",
             size, t->name, (long long)all->n_rows, partial ? "partial aggregate rows" : "rows",
             partial ? "AGGREGATE (each rank's part)" : kind_name(below), (long long)mine);
    c->dist_note = sq_strndup(&c->A, note, strlen(note));
    return PA_OK;
}
