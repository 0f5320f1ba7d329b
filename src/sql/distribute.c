/*
 * distribute.c - a statement over several ranks (sql_options.world).
 *
 * Every rank runs the same statements in the same order over the same
 * tables (the same --data, seen by every rank), so every rank binds and
 * optimizes the same logical plan, and this file makes the same decisions
 * on every rank, from the plan and the footers' statistics alone (never
 * from the rows a rank happens to hold): so every rank makes the same
 * rounds of src/net in the same order.
 *
 * Tables. The biggest table the statement scans, and every table of at
 * least sql_options.replicate_rows rows, is *split*: each rank reads its
 * share (row group i of the table's files, in scan order, belongs to rank
 * i mod N). Smaller tables are read whole by every rank (*replicated*).
 *
 * Each plan node then has a distribution, found bottom-up:
 *   REPL  every rank has all of its rows (it reads no split table, or an
 *         exchange below made it whole);
 *   PART  every rank has a part, the parts are disjoint and their union
 *         is the node's output;
 *   ZERO  rank 0 alone has it (after the final gather).
 * Filters and projections keep their input's. A join whose outer side is
 * PART and inner side REPL is PART (an inner join either way round). Where
 * an operator needs more, an *exchange* moves the rows. REPARTITION,
 * BROADCAST and a hash share go into the plan as an EXCHANGE node (an
 * EXCHANGE operator, src/exec/op_exchange.c: the rows move while the
 * subtree below produces them, and the operator above reads them as they
 * arrive); a GATHER (and, with PISTA_EXCHANGE=materialized, every
 * exchange) runs the subtree below it on every rank to the end, makes one
 * src/net round, and the rows take the subtree's place as a ROWS source:
 *   REPARTITION  rows to rank hash(key) mod N (ex_result_pack_parts): a
 *                join of two PART sides on its equality keys (both sides;
 *                a REPL side just keeps its own hash share, no round); a
 *                grouped aggregate (its partial rows when its aggregates
 *                merge, else its input rows) on the group keys; DISTINCT
 *                on every column. The result is PART.
 *   BROADCAST    every rank's rows to every rank (all-gather): the small
 *                inner side of a join of two PART sides, the inner side of
 *                a MARK join (IN's NULL semantics need all of it) or of a
 *                join without equality keys; a sort, limit or ungrouped
 *                aggregate whose result is read by a join. REPL.
 *   GATHER       every rank's rows to rank 0, where the statement's top
 *                ends (a chain of single-input operators up to the
 *                root): an ungrouped or small aggregate (partial rows when
 *                they merge), a sort or limit (each rank's top rows
 *                first), or the root itself. ZERO: the other ranks are then
 *                done with the statement (c->passive).
 * A UNION of PART and REPL inputs takes a REPL input from rank 0 only.
 * Every EXCHANGE node must run on every rank: a plan part holding one runs
 * on all of them, also where only rank 0's rows count (a REPL top, a REPL
 * UNION input: RANK 0, run everywhere, kept on rank 0).
 * Partial aggregation: SUM, COUNT, MIN, MAX, AVG of DOUBLE merge (see
 * partial_agg).
 *
 * A WITH query evaluated once (cte.c) is spread the same way, its result
 * broadcast to every rank at the end (sq_distribute_whole), so it is REPL
 * where the statement reads it.
 *
 * Before any rows move, one round compares a hash of every rank's plan
 * (with its estimates and the tables' file sizes): ranks that would decide
 * differently fail the statement, naming the rank.
 *
 * Rounds and errors: a rank that fails calls nt_fail for its next round
 * (sq_statement_round), which every other rank is making too, so the
 * statement fails on every rank with that rank's error; a round that fails
 * is the statement's last. A statement that makes no round otherwise ends
 * with an empty gather (sq_statement_round). The EXCHANGE operators' rounds
 * happen inside a run; a failure there reaches every rank in the same round
 * (ex_run_options.round_failed), so no rank makes another round for it.
 */
#include "sql/sql_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define D_MAX_SPLIT 64
/* A grouped aggregate of at most this many estimated groups, at the top,
 * gathers its partial rows to rank 0; a bigger one repartitions them. */
#define D_GATHER_GROUPS 100000

typedef enum dprop { D_REPL, D_PART, D_ZERO } dprop;
typedef enum xkind { X_REPART, X_LOCAL, X_BROADCAST, X_GATHER, X_RANK0, X_ZERO } xkind;
static const char *const x_names[] = {"REPARTITIONED", "HASH SHARE", "BROADCAST", "GATHERED", "RANK 0", "RANK 0"};

typedef struct dctx {
    sq_ctx *c;
    sq_node **root;
    bool keep_all;            /* the next exchange moves every column (partial aggregates: not in the plan yet) */
    nt_world *w;
    int me, size;
    sq_table *split[D_MAX_SPLIT];
    int n_split;
    sq_node **memo_node;      /* every node seen, with its distribution: a node */
    dprop *memo_prop;         /* reached twice (a shared subtree) is decided once */
    int n_memo, cap_memo;
    int n_streamed;           /* EXCHANGE nodes placed in the plan (exchange_streamed) */
    bool streamed;            /* repartitions and broadcasts inside the plan (else each one runs its
                                 subtree to the end first: PISTA_EXCHANGE=materialized) */
    char note[2048];
    size_t note_len;
} dctx;

static void note(dctx *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(dctx *d, const char *fmt, ...)
{
    if (d->note_len + 1 >= sizeof d->note)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(d->note + d->note_len, sizeof d->note - d->note_len, fmt, ap);
    va_end(ap);
    if (n > 0)
        d->note_len += (size_t)n < sizeof d->note - d->note_len ? (size_t)n : sizeof d->note - d->note_len - 1;
}

/* An aggregate whose aggregates merge: each rank aggregates its share (the
 * partial node returned, over g) and the partial rows are aggregated again
 * (final_partial). SUM, MIN and MAX merge as themselves, COUNT as the SUM
 * of counts, AVG as a SUM and a COUNT whose quotient the final step takes:
 * of an INTEGER or DECIMAL exactly as AVG divides (the exact sum over the
 * count in x87 extended precision: MATH AVG_DIV), so the answer is the
 * one process's to the bit; of a DOUBLE as a DOUBLE division (a DOUBLE sum
 * depends on the order of its terms anyway). AVG of a BIGINT does not (its
 * partial SUM could overflow BIGINT where AVG's 128-bit sum does not), nor
 * does COUNT(DISTINCT): those give NULL, and the rows travel. */
static sq_node *partial_agg(sq_ctx *c, sq_node *agg, sq_node *g)
{
    if (agg->kind != SQ_L_AGG || agg->in[0] != g)
        return NULL;
    int n = 0;
    for (int i = 0; i < agg->n_aggs; i++) {
        ex_agg_kind k = agg->aggs[i].kind;
        if (k != EX_AGG_SUM && k != EX_AGG_COUNT && k != EX_AGG_COUNT_STAR && k != EX_AGG_MIN && k != EX_AGG_MAX &&
            (k != EX_AGG_AVG || c->cols[agg->aggs[i].arg].type.id == PA_TYPE_BIGINT))
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
        if (!pa_type_is_float(c->cols[a.arg].type.id)) {   /* exact: NULL where the sum is (count 0) */
            if (!(ex[agg->n_groups + i] =
                      sq_math(c, EX_AVG_DIV, sq_col_ref(c, ids[0], -1), sq_col_ref(c, ids[1], -1), 0, false, -1)))
                return c->err->code ? c->err->code : PA_EINTERNAL;
            continue;
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


/* An empty result with n's columns (X_RANK0 on the other ranks). */
static int empty_rows(dctx *d, const sq_node *n, ex_result **out)
{
    sq_ctx *c = d->c;
    const char **names = sq_alloc(&c->A, (size_t)(n->n_out + 1) * sizeof *names);
    pa_type *types = sq_alloc(&c->A, (size_t)(n->n_out + 1) * sizeof *types);
    if (!names || !types)
        return sq_fail(c, -1, PA_ENOMEM, "out of memory spreading the statement");
    for (int i = 0; i < n->n_out; i++) {
        names[i] = c->cols[n->out[i]].name;
        types[i] = c->cols[n->out[i]].type;
    }
    return ex_result_unpack(c->s->opt.dev, n->n_out, names, types, NULL, NULL, 0, out, c->err);
}

/* The columns node n reads from its inputs. */
static void node_refs(const sq_node *n, uint8_t *set)
{
    for (int i = 0; i < n->n_conj; i++)
        sq_expr_cols(n->conj[i], set);
    if (n->kind == SQ_L_PROJECT || n->kind == SQ_L_VALUES)
        for (int i = 0; n->exprs && i < n->n_out; i++)
            sq_expr_cols(n->exprs[i], set);
    if (n->kind == SQ_L_AGG) {
        for (int i = 0; i < n->n_groups; i++)
            set[n->groups[i]] = 1;
        for (int i = 0; i < n->n_aggs; i++)
            if (n->aggs[i].arg >= 0)
                set[n->aggs[i].arg] = 1;
    }
    if (n->kind == SQ_L_SORT || n->kind == SQ_L_WINDOW)
        for (int i = 0; i < n->n_keys; i++)
            set[n->keys[i].column] = 1;
    if (n->kind == SQ_L_WINDOW) {
        for (int i = 0; i < n->n_wpart; i++)
            set[n->wpart[i]] = 1;
        for (int i = 0; i < n->n_wfns; i++)
            if (n->wfns[i].column >= 0)
                set[n->wfns[i].column] = 1;
    }
    if (n->kind == SQ_L_DISTINCT || n->kind == SQ_L_EXCHANGE)
        for (int i = 0; i < n->n_out; i++)
            set[n->out[i]] = 1;
    if (n->kind == SQ_L_UNION)
        for (int i = 0; i < n->n_ins; i++)
            for (int j = 0; j < n->n_out; j++)
                set[n->in_cols[i][j]] = 1;
}

typedef struct anc_memo {
    const sq_node **node;
    int8_t *state;            /* 1: g is below it, 0: not */
    int n, cap;
    bool oom;
} anc_memo;

/* Whether g is under n (n == g counts); the columns every node above g
 * reads (its ancestors: the only nodes that read g's output) go into set. */
static bool ancestors(const sq_node *n, const sq_node *g, uint8_t *set, anc_memo *m, sq_ctx *c, int depth)
{
    if (!n || depth > 10000)
        return false;
    if (n == g)
        return true;
    for (int i = 0; i < m->n; i++)
        if (m->node[i] == n)
            return m->state[i];
    bool below = false;
    if (n->kind == SQ_L_UNION)
        for (int i = 0; i < n->n_ins; i++)
            below |= ancestors(n->ins[i], g, set, m, c, depth + 1);
    else if (n->kind != SQ_L_SCAN)
        for (int i = 0; i < 2; i++)
            below |= ancestors(n->in[i], g, set, m, c, depth + 1);
    if (below)
        node_refs(n, set);
    if (m->n == m->cap) {
        int cap = m->cap ? 2 * m->cap : 64;
        const sq_node **nn = sq_alloc(&c->A, (size_t)cap * sizeof *nn);
        int8_t *ns = sq_alloc(&c->A, (size_t)cap);
        if (!nn || !ns) {
            m->oom = true;
            return below;
        }
        if (m->n) {
            memcpy(nn, m->node, (size_t)m->n * sizeof *nn);
            memcpy(ns, m->state, (size_t)m->n);
        }
        m->node = nn, m->state = ns, m->cap = cap;
    }
    m->node[m->n] = n;
    m->state[m->n++] = below;
    return below;
}

/* The columns of g the nodes above it read, in g's order (at least one: a
 * row count needs a column to travel in). Only those travel, and the
 * scans under g read only what they need. */
static int needed_of(dctx *d, const sq_node *g, int **out, int *n_out)
{
    sq_ctx *c = d->c;
    uint8_t *set = sq_alloc(&c->A, (size_t)c->n_cols + 1);
    int *keep = sq_alloc(&c->A, (size_t)(g->n_out + 1) * sizeof *keep);
    if (!set || !keep)
        return sq_fail(c, -1, PA_ENOMEM, "out of memory spreading the statement");
    memset(set, 0, (size_t)c->n_cols + 1);
    if (d->keep_all) {
        *out = g->out;
        *n_out = g->n_out;
        return PA_OK;
    }
    for (int i = 0; i < (*d->root)->n_out; i++)
        set[(*d->root)->out[i]] = 1;
    anc_memo m = {0};
    ancestors(*d->root, g, set, &m, c, 0);
    if (m.oom)
        return sq_fail(c, -1, PA_ENOMEM, "out of memory spreading the statement");
    int k = 0;
    for (int i = 0; i < g->n_out; i++)
        if (g->out[i] < c->n_cols && set[g->out[i]])
            keep[k++] = g->out[i];
    if (!k && g->n_out)
        keep[k++] = g->out[0];
    *out = keep;
    *n_out = k;
    return PA_OK;
}

/* The node whose rows travel in place of g: the columns of g the rest of
 * the plan reads (keep[0..n_keep), made here: the scans below read only
 * what is needed), then the values of keys[0..nk) where they are not among
 * them: kidx[i] is key i's column. With `always`, a projection even where
 * g has just those columns. */
static int keyed_top(dctx *d, sq_node *g, sq_expr **keys, int nk, int *kidx, int **keep, int *n_keep, bool always,
                     sq_node **out)
{
    sq_ctx *c = d->c;
    sq_node *top = g;
    int rc = needed_of(d, g, keep, n_keep);
    if (rc != PA_OK)
        return rc;
    int extra = 0, nk_ = *n_keep;
    for (int i = 0; i < nk; i++) {
        kidx[i] = -1;
        for (int j = 0; keys[i]->kind == SQ_E_COL && j < nk_; j++)
            if ((*keep)[j] == keys[i]->col)
                kidx[i] = j;
        extra += kidx[i] < 0;
    }
    if (always || extra || nk_ < g->n_out) {
        if (!(top = sq_node_new(c, SQ_L_PROJECT, nk_ + extra)))
            return c->err->code;
        sq_expr **ex = sq_alloc(&c->A, (size_t)(nk_ + extra + 1) * sizeof *ex);
        if (!ex)
            return sq_fail(c, -1, PA_ENOMEM, "out of memory spreading the statement");
        top->in[0] = g;
        top->exprs = ex;
        top->est = g->est;
        for (int j = 0; j < nk_; j++) {
            top->out[j] = (*keep)[j];
            if (!(ex[j] = sq_col_ref(c, (*keep)[j], -1)))
                return c->err->code;
        }
        for (int i = 0, k = nk_; i < nk; i++) {
            if (kidx[i] >= 0)
                continue;
            int id = sq_new_col(c, "key", keys[i]->type);
            if (id < 0)
                return c->err->code;
            top->out[k] = id;
            ex[k] = keys[i];
            kidx[i] = k++;
        }
    }
    *out = top;
    return PA_OK;
}

/* What EXPLAIN ANALYZE says of the exchanges that streamed in a part's run. */
static void note_streamed(dctx *d, const ex_result *part)
{
    for (int i = 0; part && i < part->stats.n_ops; i++) {
        const ex_op_stats *o = &part->stats.ops[i];
        if (o->label && !strncmp(o->label, "EXCHANGE", 8) && o->detail[0])
            note(d, "; %s: %s", o->label, o->detail);
    }
}

/* This rank's rows of g, run in a plan of its own (keyed_top's columns). */
static int run_part(dctx *d, sq_node *g, sq_expr **keys, int nk, int *kidx, int **keep, int *n_keep,
                    ex_result **out)
{
    sq_ctx *c = d->c;
    sq_node *top;
    int rc = keyed_top(d, g, keys, nk, kidx, keep, n_keep, false, &top);
    if (rc != PA_OK)
        return rc;
    const char **names = sq_alloc(&c->A, (size_t)(top->n_out + 1) * sizeof *names);
    if (!names)
        return sq_fail(c, -1, PA_ENOMEM, "out of memory spreading the statement");
    for (int i = 0; i < top->n_out; i++)
        names[i] = c->cols[top->out[i]].name;
    ex_plan *saved = c->plan, *plan = NULL;
    ex_op *op;
    rc = ex_plan_create(&plan, c->err);
    if (rc == PA_OK) {
        c->plan = plan;
        rc = sq_lower_root(c, top, names, &op);
        if (rc == PA_OK)
            rc = sq_run_ex(c, plan, op, false, out);
        c->plan = saved;
        ex_plan_destroy(plan);
    }
    if (rc == PA_OK)
        note_streamed(d, *out);
    return rc;
}

/* Exchange k (REPART, LOCAL or BROADCAST) of *slot's rows inside the plan:
 * an EXCHANGE node, whose rows move between the ranks while the rows below
 * are produced (ex_exchange), in the run of the plan part above it. */
static int exchange_streamed(dctx *d, sq_node **slot, xkind k, sq_expr **keys, int nk, const char *what)
{
    sq_ctx *c = d->c;
    sq_node *g = *slot, *top;
    int *keep, n_keep;
    int *kidx = sq_alloc(&c->A, (size_t)(nk + 1) * sizeof *kidx);
    if (!kidx)
        return sq_fail(c, -1, PA_ENOMEM, "out of memory spreading the statement");
    int rc = keyed_top(d, g, keys, nk, kidx, &keep, &n_keep, true, &top);
    if (rc != PA_OK)
        return rc;
    sq_node *x = sq_node_new(c, SQ_L_EXCHANGE, n_keep);
    if (!x)
        return c->err->code;
    memcpy(x->out, keep, (size_t)n_keep * sizeof *x->out);
    x->in[0] = top;
    x->xmode = k == X_REPART ? EX_X_REPART : k == X_LOCAL ? EX_X_LOCAL : EX_X_BROADCAST;
    x->xkeys = kidx;
    x->n_xkeys = nk;
    x->est = k == X_BROADCAST ? g->est : g->est / d->size > 1 ? g->est / d->size : 1;
    char label[96];
    snprintf(label, sizeof label, "EXCHANGE %s %s", x_names[k], what);
    x->label = sq_strndup(&c->A, label, strlen(label));
    note(d, "; %s %s: streamed", x_names[k], what);
    d->n_streamed++;
    *slot = x;
    return PA_OK;
}

/* Whether an EXCHANGE node placed in the plan lies under n. */
static bool has_streamed(const sq_node *n, int depth)
{
    if (!n || depth > 10000)
        return false;
    if (n->kind == SQ_L_EXCHANGE)
        return true;
    if (n->kind == SQ_L_UNION) {
        for (int i = 0; i < n->n_ins; i++)
            if (has_streamed(n->ins[i], depth + 1))
                return true;
        return false;
    }
    return n->kind != SQ_L_SCAN && (has_streamed(n->in[0], depth + 1) || has_streamed(n->in[1], depth + 1));
}

/* This rank's part counted in the statement: its bytes read (Tmin) and, on
 * the rows that take its place, its counters and time (session.c adds
 * them to the statement's). */
static void part_counted(sq_ctx *c, const ex_result *part, ex_result *all)
{
    if (!part)
        return;
    c->dist_read += part->stats.counters.v[PA_CTR_BYTES_READ];
    if (all && all != part) {
        all->stats.counters = part->stats.counters;
        all->stats.ns_total = part->stats.ns_total;
        all->stats.mem_peak = part->stats.mem_peak;
    }
}

/* Exchange k of *slot's rows (keys: REPART and LOCAL). The slot gets a ROWS
 * node of the result (rank 0 only, for X_GATHER: the others turn passive). */
static int exchange(dctx *d, sq_node **slot, xkind k, sq_expr **keys, int nk, const char *what)
{
    sq_ctx *c = d->c;
    sq_node *g = *slot;
    ex_result *part = NULL, *all = NULL;
    int64_t mine = 0;
    double round_ms = 0;
    int *keep = g->out, n_keep = g->n_out;   /* the columns that travel */
    int rc;
    if (d->streamed && slot != d->root && (k == X_REPART || k == X_LOCAL || k == X_BROADCAST))
        return exchange_streamed(d, slot, k, keys, nk, what);
    if (k == X_RANK0 && has_streamed(g, 0))
        k = X_ZERO;   /* its exchanges need every rank: all run it, rank 0 keeps its rows */
    if (k == X_RANK0) {
        if (d->me == 0)
            return PA_OK;
        rc = empty_rows(d, g, &all);
    } else if (k == X_ZERO) {
        int *kidx = sq_alloc(&c->A, sizeof *kidx);
        rc = kidx ? run_part(d, g, NULL, 0, kidx, &keep, &n_keep, &part) : sq_fail(c, -1, PA_ENOMEM, "out of memory");
        if (rc == PA_OK && d->me == 0)
            all = part;   /* its rows are the answer */
        else if (rc == PA_OK && slot != d->root)
            rc = ex_result_unpack(c->s->opt.dev, n_keep, (const char *const *)part->names, part->types, NULL, NULL, 0,
                                  &all, c->err);
        else if (rc == PA_OK)
            c->passive = true;   /* rank 0 has the statement's rows */
        part_counted(c, part, all);
        if (part != all)
            ex_result_destroy(part);
        if (rc == PA_OK && !all)
            return PA_OK;   /* passive */
    } else {
        int *kidx = sq_alloc(&c->A, (size_t)(nk + 1) * sizeof *kidx);
        rc = kidx ? run_part(d, g, keys, nk, kidx, &keep, &n_keep, &part) : sq_fail(c, -1, PA_ENOMEM, "out of memory");
        int size = d->size;
        void **send = rc == PA_OK ? pa_calloc((size_t)size, sizeof *send) : NULL;
        int64_t *sizes = rc == PA_OK ? pa_calloc((size_t)size, sizeof *sizes) : NULL;
        nt_buf *sb = rc == PA_OK ? pa_calloc((size_t)size, sizeof *sb) : NULL;
        nt_buf *recv = rc == PA_OK ? pa_calloc((size_t)size, sizeof *recv) : NULL;
        if (rc == PA_OK && (!send || !sizes || !sb || !recv))
            rc = sq_fail(c, -1, PA_ENOMEM, "out of memory exchanging rows");
        if (rc == PA_OK) {
            if (k == X_REPART || k == X_LOCAL)
                rc = ex_result_pack_parts(part, n_keep, kidx, nk, size, k == X_LOCAL ? d->me : -1, send, sizes,
                                          c->err);
            else
                rc = ex_result_pack(part, &send[0], &sizes[0], c->err);   /* no key columns: n_keep */
        }
        /* The round (none for X_LOCAL): every rank's call matches. */
        uint64_t t0 = pa_now_ns();
        if (rc == PA_OK && k != X_LOCAL) {
            if (k == X_REPART) {
                for (int p = 0; p < size; p++)
                    sb[p] = (nt_buf){send[p], sizes[p]};
                rc = nt_alltoallv(d->w, sb, recv, c->err);
            } else if (k == X_BROADCAST) {
                rc = nt_allgather(d->w, send[0], sizes[0], recv, c->err);
            } else {
                c->dist_round = true;   /* the statement's last round */
                rc = nt_gather(d->w, 0, send[0], sizes[0], d->me == 0 ? recv : NULL, c->err);
            }
            if (rc != PA_OK)
                c->dist_round = true;   /* every rank has the error: no more rounds */
        }
        round_ms = (double)(pa_now_ns() - t0) / 1e6;
        const void **bufs = rc == PA_OK ? pa_calloc((size_t)size, sizeof *bufs) : NULL;
        int64_t *bsz = rc == PA_OK ? pa_calloc((size_t)size, sizeof *bsz) : NULL;
        if (rc == PA_OK && (!bufs || !bsz))
            rc = sq_fail(c, -1, PA_ENOMEM, "out of memory exchanging rows");
        int n = 0;
        if (rc == PA_OK && k == X_LOCAL) {
            bufs[n] = send[d->me];
            bsz[n++] = sizes[d->me];
        } else if (rc == PA_OK && (k != X_GATHER || d->me == 0)) {
            for (int p = 0; p < size; p++) {
                bufs[n] = recv[p].data;
                bsz[n++] = recv[p].bytes;
            }
        }
        if (rc == PA_OK && (k != X_GATHER || d->me == 0))
            rc = ex_result_unpack(c->s->opt.dev, n_keep, (const char *const *)part->names, part->types, bufs, bsz,
                                  n, &all, c->err);
        for (int p = 0; recv && p < size; p++)
            nt_buf_release(d->w, recv[p].data);
        for (int p = 0; send && p < size; p++)
            pa_free(send[p]);
        pa_free(send), pa_free(sizes), pa_free(sb), pa_free(recv), pa_free(bufs), pa_free(bsz);
        mine = part ? part->n_rows : 0;
        part_counted(c, part, all);
        if (k == X_GATHER && rc == PA_OK && d->me != 0) {
            c->passive = true;
        }
        ex_result_destroy(part);
    }
    if (rc != PA_OK || !all) {
        ex_result_destroy(all);
        return rc;
    }
    if ((rc = sq_keep_result(c, NULL, all)) != PA_OK) {
        ex_result_destroy(all);
        return rc;
    }
    sq_node *rows = sq_node_new(c, SQ_L_ROWS, n_keep);
    if (!rows)
        return c->err->code;
    memcpy(rows->out, keep, (size_t)n_keep * sizeof *rows->out);
    rows->rows = all;
    rows->est = all->n_rows > 1 ? (double)all->n_rows : 1;
    char label[160];
    snprintf(label, sizeof label, "%s %lld %s%s", x_names[k], (long long)all->n_rows, what,
             k == X_REPART   ? " (this rank's hash share)"
             : k == X_LOCAL  ? " (this rank's hash share of replicated rows)"
             : k == X_RANK0  ? " (a replicated input, read on rank 0)"
                             : "");
    rows->label = sq_strndup(&c->A, label, strlen(label));
    if (k != X_RANK0)
        note(d, "; %s %s: %lld here, %lld from here (its part %.1f ms, %.1f MB read; the round %.1f ms)",
             x_names[k], what, (long long)all->n_rows, (long long)mine, (double)all->stats.ns_total / 1e6,
             (double)all->stats.counters.v[PA_CTR_BYTES_READ] / 1e6, round_ms);
    *slot = rows;
    return PA_OK;
}

static bool is_split(const dctx *d, const sq_table *t)
{
    for (int i = 0; i < d->n_split; i++)
        if (d->split[i] == t)
            return true;
    return false;
}

static int dist(dctx *d, sq_node **slot, bool only0, dprop *out);

/* A copy of SORT or LIMIT node n over in that keeps limit + offset rows
 * (each rank's top rows, before they are gathered). */
static sq_node *local_limit(sq_ctx *c, const sq_node *n, sq_node *in)
{
    sq_node *l = sq_node_new(c, n->kind, n->n_out);
    if (!l)
        return NULL;
    int *o = l->out;
    *l = *n;
    l->out = o;
    memcpy(o, n->out, (size_t)n->n_out * sizeof *o);
    l->in[0] = in;
    l->limit = n->limit + n->offset;
    l->offset = 0;
    return l;
}

/* COUNT(DISTINCT v) across ranks: the rows go by (keys, v), so all of a
 * pair's rows meet on one rank; each rank counts its distinct values per
 * key (a partial aggregate of its own), and the counts add up in the final
 * step (final_partial: counts as a SUM), by key or on rank 0. */
static int dist_count_distinct(dctx *d, sq_node *n, sq_expr **keys, bool only0, dprop *out)
{
    sq_ctx *c = d->c;
    int ng = n->n_groups, na = n->n_aggs, rc;
    sq_expr **kv = sq_alloc(&c->A, (size_t)(ng + 2) * sizeof *kv);
    if (!kv)
        return sq_fail(c, -1, PA_ENOMEM, "out of memory");
    for (int i = 0; i < ng; i++)
        kv[i] = keys[i];
    if (!(kv[ng] = sq_col_ref(c, n->aggs[0].arg, -1)))
        return c->err->code;
    /* Each rank's distinct pairs first: only those travel. */
    sq_node *pairs = sq_node_new(c, SQ_L_PROJECT, ng + 1), *dis = sq_node_new(c, SQ_L_DISTINCT, ng + 1);
    if (!pairs || !dis || !(pairs->exprs = sq_alloc(&c->A, (size_t)(ng + 2) * sizeof *pairs->exprs)))
        return sq_fail(c, -1, PA_ENOMEM, "out of memory");
    for (int i = 0; i <= ng; i++) {
        pairs->out[i] = dis->out[i] = kv[i]->col;
        pairs->exprs[i] = kv[i];
    }
    pairs->in[0] = n->in[0];
    pairs->est = dis->est = n->in[0]->est;
    dis->in[0] = pairs;
    n->in[0] = dis;
    if ((rc = exchange(d, &n->in[0], X_REPART, kv, ng + 1, "distinct pairs for COUNT(DISTINCT), by key and value")) !=
        PA_OK)
        return rc;
    sq_node *part = sq_node_new(c, SQ_L_AGG, ng + na);
    sq_aggdef *pa = sq_alloc(&c->A, (size_t)(na + 1) * sizeof *pa);
    if (!part || !pa)
        return sq_fail(c, -1, PA_ENOMEM, "out of memory");
    part->in[0] = n->in[0];
    part->n_groups = ng;
    part->groups = n->groups;
    part->n_aggs = na;
    part->aggs = pa;
    part->est = n->est;
    for (int i = 0; i < ng; i++)
        part->out[i] = n->groups[i];
    for (int i = 0; i < na; i++) {
        int id = sq_new_col(c, c->cols[n->aggs[i].out].name, c->cols[n->aggs[i].out].type);
        if (id < 0)
            return c->err->code;
        pa[i] = (sq_aggdef){EX_AGG_COUNT_DISTINCT, n->aggs[i].arg, id};
        part->out[ng + i] = id;
    }
    bool repart = ng > 0 && (!only0 || n->est > D_GATHER_GROUPS);
    sq_node *slot = part;
    *out = repart ? D_PART : only0 ? D_ZERO : D_REPL;
    d->keep_all = true;
    rc = repart ? exchange(d, &slot, X_REPART, keys, ng, "partial COUNT(DISTINCT) rows")
                : exchange(d, &slot, only0 ? X_GATHER : X_BROADCAST, NULL, 0, "partial COUNT(DISTINCT) rows");
    d->keep_all = false;
    if (rc != PA_OK || slot == part)   /* slot == part: a passive rank after X_GATHER */
        return rc;
    return final_partial(c, n, part, slot);
}

/* The single-input operators. */
static int dist_unary(dctx *d, sq_node *n, bool only0, dprop *out)
{
    sq_ctx *c = d->c;
    dprop p;
    int rc = dist(d, &n->in[0], only0, &p);
    if (rc != PA_OK || p != D_PART || n->kind == SQ_L_FILTER || n->kind == SQ_L_PROJECT) {
        *out = p;
        return rc;
    }
    xkind top = only0 ? X_GATHER : X_BROADCAST;
    dprop after = only0 ? D_ZERO : D_REPL;
    if (n->kind == SQ_L_DISTINCT) {
        sq_expr **keys = sq_alloc(&c->A, (size_t)(n->in[0]->n_out + 1) * sizeof *keys);
        if (!keys)
            return sq_fail(c, -1, PA_ENOMEM, "out of memory");
        for (int i = 0; i < n->in[0]->n_out; i++)
            if (!(keys[i] = sq_col_ref(c, n->in[0]->out[i], -1)))
                return c->err->code;
        *out = D_PART;
        return exchange(d, &n->in[0], X_REPART, keys, n->in[0]->n_out, "rows for DISTINCT");
    }
    if (n->kind == SQ_L_WINDOW && n->n_wpart > 0) {   /* each partition on one rank */
        sq_expr **keys = sq_alloc(&c->A, (size_t)n->n_wpart * sizeof *keys);
        if (!keys)
            return sq_fail(c, -1, PA_ENOMEM, "out of memory");
        for (int i = 0; i < n->n_wpart; i++)
            if (!(keys[i] = sq_col_ref(c, n->wpart[i], -1)))
                return c->err->code;
        *out = D_PART;
        return exchange(d, &n->in[0], X_REPART, keys, n->n_wpart, "rows by window partition");
    }
    if (n->kind == SQ_L_SORT || n->kind == SQ_L_LIMIT) {
        if (n->limit >= 0 && n->offset >= 0 && n->limit <= INT64_MAX - n->offset &&
            !(n->in[0] = local_limit(c, n, n->in[0])))
            return c->err->code;
        *out = after;
        return exchange(d, &n->in[0], top, NULL, 0, n->kind == SQ_L_SORT ? "rows to sort" : "rows to limit");
    }
    if (n->kind != SQ_L_AGG) {   /* not reached: every single-input kind is above */
        *out = after;
        return exchange(d, &n->in[0], top, NULL, 0, "rows");
    }
    /* Grouping sets aggregate the same rows by several key sets: the rows
     * travel to one rank (or every rank), whole. */
    sq_node *partial = n->n_sets ? NULL : partial_agg(c, n, n->in[0]);
    if (c->err->code != PA_OK)
        return c->err->code;
    sq_expr **keys = sq_alloc(&c->A, (size_t)(n->n_groups + 1) * sizeof *keys);
    if (!keys)
        return sq_fail(c, -1, PA_ENOMEM, "out of memory");
    for (int i = 0; i < n->n_groups; i++)
        if (!(keys[i] = sq_col_ref(c, n->groups[i], -1)))
            return c->err->code;
    bool repart = n->n_groups > 0 && !n->n_sets && (!only0 || !partial || n->est > D_GATHER_GROUPS);
    bool distinct_one = !n->n_sets && n->n_aggs > 0;   /* every aggregate COUNT(DISTINCT) of one column */
    for (int i = 0; i < n->n_aggs; i++)
        distinct_one &= n->aggs[i].kind == EX_AGG_COUNT_DISTINCT && n->aggs[i].arg == n->aggs[0].arg;
    if (!partial && distinct_one)
        return dist_count_distinct(d, n, keys, only0, out);
    if (!partial) {   /* the input rows travel */
        *out = repart ? D_PART : after;
        return repart ? exchange(d, &n->in[0], X_REPART, keys, n->n_groups, "rows to aggregate")
                      : exchange(d, &n->in[0], top, NULL, 0, "rows to aggregate");
    }
    sq_node *slot = partial;
    *out = repart ? D_PART : after;
    d->keep_all = true;
    rc = repart ? exchange(d, &slot, X_REPART, keys, n->n_groups, "partial aggregate rows")
                : exchange(d, &slot, top, NULL, 0, "partial aggregate rows");
    d->keep_all = false;
    if (rc != PA_OK || slot == partial)   /* slot == partial: a passive rank after X_GATHER */
        return rc;
    return final_partial(c, n, partial, slot);
}

static int dist_join(dctx *d, sq_node *n, dprop *out)
{
    sq_ctx *c = d->c;
    double est_l = n->in[0]->est, est_r = n->in[1]->est;
    dprop pl, pr;
    int rc;
    if ((rc = dist(d, &n->in[0], false, &pl)) != PA_OK || (rc = dist(d, &n->in[1], false, &pr)) != PA_OK)
        return rc;
    sq_jkind k = n->jkind;
    sq_expr **lk = sq_alloc(&c->A, (size_t)(n->n_conj + 1) * sizeof *lk);
    sq_expr **rk = sq_alloc(&c->A, (size_t)(n->n_conj + 1) * sizeof *rk);
    int nk = 0, nres = 0;
    if (!lk || !rk)
        return sq_fail(c, -1, PA_ENOMEM, "out of memory");
    if ((rc = sq_join_keys(c, n, lk, rk, &nk, NULL, &nres)) != PA_OK)
        return rc;
    /* Joins that go key by key; MARK does not (IN is NULL when the inner
     * side holds a NULL anywhere). */
    bool by_key = nk > 0 && k != SQ_J_MARK;
    if (pl == D_REPL && pr == D_REPL) {
        *out = D_REPL;
    } else if (pl == D_PART && pr == D_REPL && k != SQ_J_FULL) {
        *out = D_PART;
    } else if (pl == D_REPL && pr == D_PART && k == SQ_J_INNER && !n->single) {
        *out = D_PART;
    } else if (by_key && !(pl == D_PART && pr == D_PART && k != SQ_J_FULL && est_r * d->size < est_l + est_r)) {
        *out = D_PART;   /* both sides by key; a REPL side keeps its share */
        if ((rc = exchange(d, &n->in[0], pl == D_PART ? X_REPART : X_LOCAL, lk, nk, "join rows (outer side)")) !=
            PA_OK)
            return rc;
        return exchange(d, &n->in[1], pr == D_PART ? X_REPART : X_LOCAL, rk, nk, "join rows (inner side)");
    } else if (pl == D_PART && k != SQ_J_FULL) {
        *out = D_PART;   /* the inner side to every rank */
        return exchange(d, &n->in[1], X_BROADCAST, NULL, 0, "join rows (inner side)");
    } else {
        *out = D_REPL;   /* both sides whole on every rank */
        if (pl == D_PART && (rc = exchange(d, &n->in[0], X_BROADCAST, NULL, 0, "join rows (outer side)")) != PA_OK)
            return rc;
        if (pr == D_PART && (rc = exchange(d, &n->in[1], X_BROADCAST, NULL, 0, "join rows (inner side)")) != PA_OK)
            return rc;
    }
    return PA_OK;
}

static int dist(dctx *d, sq_node **slot, bool only0, dprop *out)
{
    sq_node *n = *slot;
    for (int i = 0; i < d->n_memo; i++)
        if (d->memo_node[i] == n) {
            *out = d->memo_prop[i];
            return PA_OK;
        }
    int rc = PA_OK;
    switch (n->kind) {
    case SQ_L_SCAN:
        *out = D_REPL;
        if (n->table && is_split(d, n->table)) {
            n->share_part = d->me;
            n->share_parts = d->size;
            *out = D_PART;
        }
        break;
    case SQ_L_VALUES:
    case SQ_L_SERIES:
    case SQ_L_ROWS: *out = D_REPL; break;
    case SQ_L_EXCHANGE: *out = n->xmode == EX_X_BROADCAST ? D_REPL : D_PART; break;
    case SQ_L_JOIN: rc = dist_join(d, n, out); break;
    case SQ_L_UNION: {
        bool any = false;
        dprop *p = sq_alloc(&d->c->A, (size_t)(n->n_ins + 1) * sizeof *p);
        if (!p)
            return sq_fail(d->c, -1, PA_ENOMEM, "out of memory");
        for (int i = 0; rc == PA_OK && i < n->n_ins; i++) {
            rc = dist(d, &n->ins[i], false, &p[i]);
            any |= p[i] == D_PART;
        }
        for (int i = 0; rc == PA_OK && any && i < n->n_ins; i++)
            if (p[i] == D_REPL)
                rc = exchange(d, &n->ins[i], X_RANK0, NULL, 0, "rows");
        *out = any ? D_PART : D_REPL;
        break;
    }
    default: rc = dist_unary(d, n, only0, out); break;
    }
    if (rc == PA_OK && d->n_memo == d->cap_memo) {
        int cap = d->cap_memo ? 2 * d->cap_memo : 64;
        sq_node **mn = sq_alloc(&d->c->A, (size_t)cap * sizeof *mn);
        dprop *mp = sq_alloc(&d->c->A, (size_t)cap * sizeof *mp);
        if (!mn || !mp)
            return sq_fail(d->c, -1, PA_ENOMEM, "out of memory spreading the statement");
        if (d->n_memo) {
            memcpy(mn, d->memo_node, (size_t)d->n_memo * sizeof *mn);
            memcpy(mp, d->memo_prop, (size_t)d->n_memo * sizeof *mp);
        }
        d->memo_node = mn, d->memo_prop = mp, d->cap_memo = cap;
    }
    if (rc == PA_OK) {
        d->memo_node[d->n_memo] = n;
        d->memo_prop[d->n_memo++] = *out;
    }
    return rc;
}

/* The tables scanned under n, once each. */
static void scanned(sq_node *n, sq_table **t, int *k, int depth)
{
    if (!n || depth > 10000)
        return;
    if (n->kind == SQ_L_SCAN) {
        int i = 0;
        while (i < *k && t[i] != n->table)
            i++;
        if (i == *k && *k < D_MAX_SPLIT && n->table)
            t[(*k)++] = n->table;
        return;
    }
    int ni = n->kind == SQ_L_UNION ? n->n_ins : 2;
    for (int i = 0; i < ni; i++)
        scanned(n->kind == SQ_L_UNION ? n->ins[i] : n->in[i], t, k, depth + 1);
}

/* A hash of what shapes the decisions here: the plan's nodes, their
 * estimates (from the footers' statistics), the tables' sizes. */
static uint64_t plan_hash(const sq_node *n, uint64_t h, const sq_node **seen, int *n_seen, int cap, int depth)
{
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 0x100000001b3ULL)
    if (!n || depth > 10000)
        return MIX(0x5eed);
    for (int i = 0; i < *n_seen; i++)
        if (seen[i] == n)
            return MIX(i + 1);
    if (*n_seen < cap)
        seen[(*n_seen)++] = n;
    uint64_t est;
    memcpy(&est, &n->est, sizeof est);
    MIX(n->kind), MIX(n->n_out), MIX(est), MIX(n->jkind), MIX(n->single), MIX(n->n_conj), MIX(n->n_groups),
        MIX(n->n_aggs), MIX(n->limit), MIX(n->offset), MIX(n->n_keys), MIX(n->n_ins);
    if (n->kind == SQ_L_SCAN && n->table) {   /* the files' sizes: their row groups are what is split */
        MIX(n->table->rows), MIX(n->table->n_paths), MIX(n->table->n_cols);
        for (const char *p = n->table->name; *p; p++)
            MIX(*p);
        for (int i = 0; i < n->table->n_paths; i++) {
            struct stat st;
            MIX(stat(n->table->paths[i], &st) == 0 ? (uint64_t)st.st_size : 0);
        }
    }
    if (n->kind == SQ_L_ROWS && n->rows)
        MIX(n->rows->n_rows);
    if (n->kind == SQ_L_UNION)
        for (int i = 0; i < n->n_ins; i++)
            h = plan_hash(n->ins[i], h, seen, n_seen, cap, depth + 1);
    else if (n->kind != SQ_L_SCAN)
        for (int i = 0; i < 2; i++)
            h = plan_hash(n->in[i], h, seen, n_seen, cap, depth + 1);
    return h;
#undef MIX
}

/* Every rank must make the same decisions: the plans' hashes are compared
 * in one round first, and a rank whose plan differs (other files or
 * footers under the same names, other settings) fails the statement on
 * every rank, named, instead of pairing rounds that do not match. */
static int same_plan(dctx *d, const sq_node *root, int64_t keep)
{
    sq_ctx *c = d->c;
    int cap = 4096, n_seen = 0;
    const sq_node **seen = sq_alloc(&c->A, (size_t)cap * sizeof *seen);
    nt_buf *all = pa_calloc((size_t)d->size, sizeof *all);
    if (!seen || !all) {
        pa_free(all);
        return sq_fail(c, -1, PA_ENOMEM, "out of memory spreading the statement");
    }
    uint64_t h = plan_hash(root, 0xcbf29ce484222325ULL ^ (uint64_t)keep, seen, &n_seen, cap, 0);
    int rc = nt_allgather(d->w, &h, sizeof h, all, c->err);
    if (rc != PA_OK)
        c->dist_round = true;   /* every rank has the error */
    uint64_t h0 = 0;   /* every rank has every hash: all name the same first rank unlike rank 0 */
    if (rc == PA_OK && all[0].bytes == sizeof h0)
        memcpy(&h0, all[0].data, sizeof h0);
    for (int p = 1; rc == PA_OK && p < d->size; p++) {
        uint64_t o = ~h0;
        if (all[p].bytes == sizeof o)
            memcpy(&o, all[p].data, sizeof o);
        if (o != h0) {
            c->dist_round = true;   /* every rank fails here: no more rounds */
            rc = sq_fail(c, -1, PA_EINVAL,
                         "rank %d planned this statement unlike rank 0: every rank must see the same tables (the "
                         "same files under --data, with the same footers) and settings (--replicate-rows)",
                         p);
        }
    }
    for (int p = 0; p < d->size; p++)
        nt_buf_release(d->w, all[p].data);
    pa_free(all);
    return rc;
}

/* Spread the plan at *root: its result to rank 0 (the others turn passive),
 * or with `whole` to every rank (a WITH query evaluated once). */
static int spread(sq_ctx *c, sq_node **root, bool whole)
{
    nt_world *w = c->s->opt.world;
    if (!w || nt_size(w) < 2 || c->dist_round)
        return PA_OK;
    dctx *d = pa_calloc(1, sizeof *d);
    if (!d)
        return sq_fail(c, -1, PA_ENOMEM, "out of memory spreading the statement");
    d->c = c;
    d->root = root;
    d->w = w;
    d->me = nt_rank(w);
    d->size = nt_size(w);
    const char *xm = getenv("PISTA_EXCHANGE");
    d->streamed = !(xm && !strcmp(xm, "materialized"));
    sq_table *t[D_MAX_SPLIT];
    int k = 0;
    scanned(*root, t, &k, 0);
    int64_t keep = c->s->opt.replicate_rows > 0 ? c->s->opt.replicate_rows : SQL_REPLICATE_ROWS;
    sq_table *biggest = NULL;
    for (int i = 0; i < k; i++)
        if (!biggest || t[i]->rows > biggest->rows)
            biggest = t[i];
    note(d, "distributed over %d ranks: split by row groups:", d->size);
    for (int i = 0; i < k; i++)
        if (t[i] == biggest || t[i]->rows >= keep) {
            d->split[d->n_split++] = t[i];
            note(d, " %s", t[i]->name);
        }
    note(d, "; the other tables read whole by every rank");
    dprop p = D_REPL;
    int rc = d->n_split ? same_plan(d, *root, keep ^ ((int64_t)d->streamed << 62)) : PA_OK;
    if (rc == PA_OK && d->n_split)
        rc = dist(d, root, !whole, &p);
    if (rc == PA_OK && p == D_PART)
        rc = exchange(d, root, whole ? X_BROADCAST : X_GATHER, NULL, 0, "result rows");
    else if (rc == PA_OK && p == D_REPL && !whole && d->n_streamed)
        rc = exchange(d, root, X_ZERO, NULL, 0, "result rows");   /* its exchanges need every rank */
    else if (rc == PA_OK && p == D_REPL && d->me != 0 && !whole)
        c->passive = true;   /* rank 0 runs the rest; the statement's round ends it */
    if (rc == PA_OK && d->n_split && d->me == 0) {   /* after the notes of WITH queries evaluated first */
        size_t had = c->dist_note ? strlen(c->dist_note) + 1 : 0, pre = whole ? strlen("WITH query ") : 0;
        char *t = sq_alloc(&c->A, had + pre + d->note_len + 1);
        if (!t) {
            pa_free(d);
            return sq_fail(c, -1, PA_ENOMEM, "out of memory");
        }
        if (had)
            memcpy(t, c->dist_note, had - 1), t[had - 1] = '\n';
        memcpy(t + had, "WITH query ", pre);
        memcpy(t + had + pre, d->note, d->note_len);
        t[had + pre + d->note_len] = 0;
        c->dist_note = t;
    }
    pa_free(d);
    return rc;
}

int sq_distribute(sq_ctx *c, sq_node **root) { return spread(c, root, false); }

int sq_distribute_whole(sq_ctx *c, sq_node **root) { return spread(c, root, true); }
