/*
 * optimize.c - predicate pushdown, cardinality estimates and join order.
 *
 * Estimates use the footers: row counts, and per column min/max (ranges
 * for numbers and dates; distinct values of an integer or date column at
 * most max - min + 1). Standard rules: col = const 1/ndv, ranges from
 * min/max (else 1/3), LIKE 1/10, AND multiplies, OR adds; a join on
 * a = b keeps |L||R| / max(ndv(a), ndv(b)), each ndv capped by its side's
 * rows. Join order is greedy (GOO): repeatedly join the two connected
 * relations whose join is estimated smallest; the smaller input of each
 * join becomes the hash table's build side when it is lowered. A cross
 * product is made only when no join predicate connects what is left.
 */
#include "sql/sql_int.h"

#include <stdlib.h>
#include <string.h>

static double col_ndv(sq_ctx *c, int col, double rows)
{
    double n = c->cols[col].stat.ndv;
    if (n <= 0 || n > rows)
        n = rows;
    return n < 1 ? 1 : n;
}

static bool const_number(sq_ctx *c, const sq_expr *e, double *v)
{
    /* A constant, or constants the engine folded (a date minus an interval). */
    if (e->kind != SQ_E_CONST && !(e->tx && ex_expr_is_const(e->tx) && !sq_expr_has(e, SQ_E_COL)))
        return false;
    char buf[128];
    if (ex_expr_const_text(e->tx, buf, sizeof buf) != PA_OK)
        return false;
    if (e->type.id == PA_TYPE_DATE) {
        int32_t d;
        if (pa_date_parse(buf, &d, NULL) != PA_OK)
            return false;
        *v = d;
        return true;
    }
    if (pa_type_is_varlen(e->type.id) || e->type.id == PA_TYPE_BOOLEAN || e->type.id == PA_TYPE_INTERVAL ||
        pa_type_is_time64(e->type.id))
        return false;   /* (no column statistics of these to compare with) */
    char *end;
    *v = strtod(buf, &end);
    return end != buf;
}

/* e without casts, and without the NULL-safe key's wrapper (CASE WHEN x
 * IS NULL THEN stand-in ELSE x END, sq_not_distinct): x's statistics. */
static const sq_expr *strip_cast(const sq_expr *e)
{
    for (;;) {
        if (e && e->kind == SQ_E_CAST)
            e = e->args[0];
        else if (e && e->kind == SQ_E_CASE && e->n_args == 3 && e->args[0]->kind == SQ_E_ISNULL &&
                 !e->args[0]->sub && e->args[2]->kind == SQ_E_COL && sq_expr_equal(e->args[0]->args[0], e->args[2]))
            e = e->args[2];
        else
            return e;
    }
}

/* (a IS NULL) = (b IS NULL): the NULL-safe key's flag, no selectivity of
 * its own. */
static bool null_flag_pair(const sq_expr *e)
{
    return e->kind == SQ_E_CMP && e->sub == EX_EQ && e->args[0]->kind == SQ_E_ISNULL && e->args[1]->kind == SQ_E_ISNULL;
}

double sq_selectivity(sq_ctx *c, const sq_expr *e, double rows)
{
    switch (e->kind) {
    case SQ_E_AND: return sq_selectivity(c, e->args[0], rows) * sq_selectivity(c, e->args[1], rows);
    case SQ_E_OR: {
        double a = sq_selectivity(c, e->args[0], rows), b = sq_selectivity(c, e->args[1], rows);
        double s = a + b - a * b;
        return s > 1 ? 1 : s;
    }
    case SQ_E_NOT: return 1 - sq_selectivity(c, e->args[0], rows);
    case SQ_E_ISNULL: return e->sub ? 0.95 : 0.05;
    case SQ_E_LIKE: return e->sub ? 0.9 : 0.1;
    case SQ_E_REGEX: return e->sub == 1 ? 0.9 : 0.1;   /* as LIKE (regexp_replace is no predicate) */
    case SQ_E_IN: {
        const sq_expr *a = strip_cast(e->args[0]);
        double ndv = a->kind == SQ_E_COL ? col_ndv(c, a->col, rows) : 10;
        double s = (e->n_args - 1) / ndv;
        if (s > 0.5)
            s = 0.5;
        return e->sub ? 1 - s : s;
    }
    case SQ_E_CMP: {
        const sq_expr *a = strip_cast(e->args[0]), *b = strip_cast(e->args[1]);
        int op = e->sub;
        if (a->kind != SQ_E_COL && b->kind == SQ_E_COL) {
            const sq_expr *t = a;
            a = b;
            b = t;
            op = op == EX_LT ? EX_GT : op == EX_GT ? EX_LT : op == EX_LE ? EX_GE : op == EX_GE ? EX_LE : op;
        }
        if (a->kind != SQ_E_COL)
            return op == EX_EQ ? 0.1 : op == EX_NE ? 0.9 : 0.33;
        if (b->kind == SQ_E_COL) /* col = col inside one relation */
            return op == EX_EQ ? 1 / col_ndv(c, a->col, rows) : 0.33;
        if (op == EX_EQ)
            return 1 / col_ndv(c, a->col, rows);
        if (op == EX_NE)
            return 1 - 1 / col_ndv(c, a->col, rows);
        const sq_colstat *s = &c->cols[a->col].stat;
        double v;
        if (!s->has_range || s->hi <= s->lo || !const_number(c, b, &v))
            return 0.33;
        double frac = (v - s->lo) / (s->hi - s->lo);
        if (op == EX_GT || op == EX_GE)
            frac = 1 - frac;
        if (frac < 0.0001)
            frac = 0.0001;
        return frac > 1 ? 1 : frac;
    }
    case SQ_E_CONST: return 1;
    default: return 0.5;
    }
}

double sq_estimate(sq_ctx *c, sq_node *n)
{
    switch (n->kind) {
    case SQ_L_SCAN: {
        double r = (double)n->table->rows;
        for (int i = 0; i < n->n_conj; i++)
            r *= sq_selectivity(c, n->conj[i], (double)n->table->rows);
        return r < 1 ? 1 : r;
    }
    case SQ_L_JOIN: {
        double l = n->in[0]->est, r = n->in[1]->est;
        switch (n->jkind) {
        case SQ_J_SEMI: {
            /* Probe rows kept: about ndv(build key) / ndv(probe key). */
            double frac = 0.5;
            for (int i = 0; i < n->n_conj; i++) {
                const sq_expr *e = n->conj[i];
                const sq_expr *a = e->kind == SQ_E_CMP ? strip_cast(e->args[0]) : NULL;
                const sq_expr *b = e->kind == SQ_E_CMP ? strip_cast(e->args[1]) : NULL;
                if (!a || !b || e->sub != EX_EQ || a->kind != SQ_E_COL || b->kind != SQ_E_COL)
                    continue;
                if (!sq_node_has_col(n->in[0], a->col)) {
                    const sq_expr *t = a;
                    a = b;
                    b = t;
                }
                double f = col_ndv(c, b->col, r) / col_ndv(c, a->col, l);
                if (f < frac)
                    frac = f;
            }
            return l * frac > 1 ? l * frac : 1;
        }
        case SQ_J_ANTI: return l * 0.5 > 1 ? l * 0.5 : 1;
        case SQ_J_MARK: return l;
        default: break;
        }
        double sel = 1;
        for (int i = 0; i < n->n_conj; i++) {
            const sq_expr *e = n->conj[i];
            const sq_expr *a = e->kind == SQ_E_CMP ? strip_cast(e->args[0]) : NULL;
            const sq_expr *b = e->kind == SQ_E_CMP ? strip_cast(e->args[1]) : NULL;
            if (a && b && e->sub == EX_EQ && a->kind == SQ_E_COL && b->kind == SQ_E_COL) {
                bool al = sq_node_has_col(n->in[0], a->col);
                double na = col_ndv(c, a->col, al ? l : r), nb = col_ndv(c, b->col, al ? r : l);
                double s = 1 / (na > nb ? na : nb);
                if (s < sel)
                    sel = s; /* the most selective key; others are assumed correlated */
            } else if (!null_flag_pair(e))
                sel *= 0.5;
        }
        double est = l * r * sel;
        if ((n->jkind == SQ_J_LEFT || n->jkind == SQ_J_FULL) && est < l)
            est = l;
        if (n->jkind == SQ_J_FULL && est < r)
            est = r;
        return est < 1 ? 1 : est;
    }
    case SQ_L_AGG: {
        if (n->n_groups == 0)
            return 1;
        double in = n->in[0]->est, g = 1;
        for (int i = 0; i < n->n_groups; i++)
            g *= col_ndv(c, n->groups[i], in);
        return g < in ? g : in;
    }
    case SQ_L_DISTINCT: return n->in[0]->est;
    case SQ_L_VALUES: return n->n_rows > 1 ? (double)n->n_rows : 1;
    case SQ_L_SERIES: return n->n_rows > 1 ? (double)n->n_rows : 1;
    case SQ_L_ROWS: return n->rows->n_rows > 1 ? (double)n->rows->n_rows : 1;
    case SQ_L_LIMIT:
    case SQ_L_SORT:
        if (n->limit >= 0 && (double)n->limit < n->in[0]->est)
            return (double)n->limit;
        return n->in[0]->est;
    case SQ_L_UNION: {
        double s = 0;
        for (int i = 0; i < n->n_ins; i++)
            s += n->ins[i]->est;
        return s;
    }
    default: return n->in[0] ? n->in[0]->est : 1;
    }
}

/* ------------------------------------------------------------ join graph */
typedef struct comp {
    sq_node *node;
    uint64_t mask;            /* relations in it */
} comp;

static uint64_t rel_mask(sq_ctx *c, sq_node **rels, int n, const sq_expr *e)
{
    uint8_t *set = sq_alloc(&c->A, (size_t)c->n_cols + 1);
    if (!set)
        return 0;
    sq_expr_cols(e, set);
    uint64_t m = 0;
    for (int id = 0; id < c->n_cols; id++) {
        if (!set[id])
            continue;
        for (int r = 0; r < n; r++)
            if (sq_node_has_col(rels[r], id))
                m |= 1ull << r;
    }
    return m;
}

static sq_node *make_join(sq_ctx *c, sq_node *a, sq_node *b, sq_expr **conj, int n)
{
    /* in[0] probes (the larger), in[1] builds (the smaller). */
    if (b->est > a->est) {
        sq_node *t = a;
        a = b;
        b = t;
    }
    sq_node *j = sq_node_new(c, SQ_L_JOIN, a->n_out + b->n_out);
    if (!j)
        return NULL;
    j->jkind = SQ_J_INNER;
    j->in[0] = a;
    j->in[1] = b;
    memcpy(j->out, a->out, (size_t)a->n_out * sizeof(int));
    memcpy(j->out + a->n_out, b->out, (size_t)b->n_out * sizeof(int));
    j->conj = conj;
    j->n_conj = n;
    j->est = sq_estimate(c, j);
    return j;
}

/* An OR over several relations implies, for each relation that every
 * branch restricts, the OR of those restrictions: TPC-H Q19's
 * (p_brand = .. AND p_size .. AND l_quantity ..) OR (...) gives part a
 * filter on brand, container and size, and lineitem one on quantity. The
 * derived conjuncts are added (the OR itself stays), so each relation is
 * filtered before the join. *conj grows; *n_conj is updated. */
static int derive_or_filters(sq_ctx *c, sq_node **rels, int n_rels, sq_expr ***conj, int *n_conj)
{
    int n = *n_conj;
    for (int i = 0; i < n; i++) {
        sq_expr *e = (*conj)[i];
        if (e->kind != SQ_E_OR || sq_expr_has(e, SQ_E_SUBQ))
            continue;
        uint64_t m = rel_mask(c, rels, n_rels, e);
        if (__builtin_popcountll(m) < 2)
            continue;
        sq_expr **br = NULL;
        int nb = 0, cb = 0, rc;
        if ((rc = sq_disjuncts(c, e, &br, &nb, &cb)))
            return rc;
        for (int r = 0; r < n_rels; r++) {
            if (!(m >> r & 1))
                continue;
            sq_expr *derived = NULL;
            for (int b = 0; b < nb; b++) {
                sq_expr **v = NULL, **mine;
                int nv = 0, cv = 0, k = 0;
                if ((rc = sq_conjuncts(c, br[b], &v, &nv, &cv)))
                    return rc;
                if (!(mine = sq_alloc(&c->A, (size_t)(nv + 1) * sizeof *mine)))
                    return sq_fail(c, -1, PA_ENOMEM, "planning: out of memory");
                for (int j = 0; j < nv; j++)
                    if (rel_mask(c, rels, n_rels, v[j]) == 1ull << r)
                        mine[k++] = v[j];
                sq_expr *part = sq_and_all(c, mine, k);
                if (!part) {   /* a branch that does not restrict r: nothing to derive */
                    derived = NULL;
                    break;
                }
                sq_expr *a[2] = {derived, part};
                if (derived && !(part = sq_make(c, SQ_E_OR, 0, a, 2, e->loc)))
                    return c->err->code;
                derived = part;
            }
            if (!derived)
                continue;
            sq_expr **nc = sq_alloc(&c->A, (size_t)(*n_conj + 1) * sizeof *nc);
            if (!nc)
                return sq_fail(c, -1, PA_ENOMEM, "planning: out of memory");
            memcpy(nc, *conj, (size_t)*n_conj * sizeof *nc);
            nc[(*n_conj)++] = derived;
            *conj = nc;
        }
    }
    return PA_OK;
}

int sq_join_graph(sq_ctx *c, sq_node **rels, int n_rels, sq_expr **conj, int n_conj, sq_node **out)
{
    return sq_join_graph_sub(c, rels, n_rels, conj, n_conj, NULL, NULL, out);
}

int sq_join_graph_sub(sq_ctx *c, sq_node **rels, int n_rels, sq_expr **conj, int n_conj, sq_expr **subq,
                      int *n_subq, sq_node **out)
{
    if (n_rels > 64)
        return sq_fail(c, -1, PA_EUNSUPPORTED, "more than 64 tables in one FROM");
    int rc0 = n_rels > 1 ? derive_or_filters(c, rels, n_rels, &conj, &n_conj) : PA_OK;
    if (rc0)
        return rc0;
    uint64_t *masks = sq_alloc(&c->A, (size_t)(n_conj + 1) * sizeof *masks);
    bool *used = sq_alloc(&c->A, (size_t)(n_conj + 1) * sizeof *used);
    comp *cs = sq_alloc(&c->A, (size_t)(n_rels + 1) * sizeof *cs);
    if (!masks || !used || !cs)
        return sq_fail(c, -1, PA_ENOMEM, "planning: out of memory");
    /* Pushdown: a conjunct on one relation filters it (in its scan). */
    for (int r = 0; r < n_rels; r++) {
        sq_expr **mine = sq_alloc(&c->A, (size_t)(n_conj + 1) * sizeof *mine);
        if (!mine)
            return sq_fail(c, -1, PA_ENOMEM, "planning: out of memory");
        int k = 0;
        for (int i = 0; i < n_conj; i++) {
            masks[i] = rel_mask(c, rels, n_rels, conj[i]);
            if (!used[i] && (masks[i] == (1ull << r) || (masks[i] == 0 && r == 0))) {
                mine[k++] = conj[i];
                used[i] = true;
            }
        }
        sq_node *f = sq_filter(c, rels[r], mine, k);
        if (!f)
            return c->err->code;
        cs[r] = (comp){f, 1ull << r};
    }
    if (subq && *n_subq && n_rels > 1) {
        /* Semi/anti subqueries on one relation join it now, after its own
         * filters (which stay scan predicates) and before ordering. */
        sq_node **filtered = sq_alloc(&c->A, (size_t)n_rels * sizeof *filtered);
        if (!filtered)
            return sq_fail(c, -1, PA_ENOMEM, "planning: out of memory");
        for (int r = 0; r < n_rels; r++)
            filtered[r] = cs[r].node;
        int rc = sq_push_subqueries(c, filtered, n_rels, subq, n_subq);
        if (rc)
            return rc;
        for (int r = 0; r < n_rels; r++)
            cs[r].node = filtered[r];
    }
    int n = n_rels;
    while (n > 1) {
        int bi = -1, bj = -1;
        double best = 0;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) {
                uint64_t u = cs[i].mask | cs[j].mask;
                bool connected = false;
                double sel = 1;
                for (int k = 0; k < n_conj; k++) {
                    if (used[k] || (masks[k] & ~u) || !(masks[k] & cs[i].mask) || !(masks[k] & cs[j].mask))
                        continue;
                    connected = true;
                    const sq_expr *e = conj[k];
                    const sq_expr *a = e->kind == SQ_E_CMP ? strip_cast(e->args[0]) : NULL;
                    const sq_expr *b = e->kind == SQ_E_CMP ? strip_cast(e->args[1]) : NULL;
                    if (a && b && e->sub == EX_EQ && a->kind == SQ_E_COL && b->kind == SQ_E_COL) {
                        bool ai = sq_node_has_col(cs[i].node, a->col);
                        double na = col_ndv(c, a->col, ai ? cs[i].node->est : cs[j].node->est);
                        double nb = col_ndv(c, b->col, ai ? cs[j].node->est : cs[i].node->est);
                        double s = 1 / (na > nb ? na : nb);
                        if (s < sel)
                            sel = s;
                    }
                }
                if (!connected)
                    continue;
                double est = cs[i].node->est * cs[j].node->est * sel;
                if (bi < 0 || est < best) {
                    best = est;
                    bi = i;
                    bj = j;
                }
            }
        if (bi < 0) {
            /* Nothing connects: cross the two smallest. */
            bi = 0;
            for (int i = 1; i < n; i++)
                if (cs[i].node->est < cs[bi].node->est)
                    bi = i;
            bj = bi == 0 ? 1 : 0;
            for (int i = 0; i < n; i++)
                if (i != bi && cs[i].node->est < cs[bj].node->est)
                    bj = i;
            if (bi > bj) {
                int t = bi;
                bi = bj;
                bj = t;
            }
        }
        uint64_t u = cs[bi].mask | cs[bj].mask;
        sq_expr **jc = sq_alloc(&c->A, (size_t)(n_conj + 1) * sizeof *jc);
        if (!jc)
            return sq_fail(c, -1, PA_ENOMEM, "planning: out of memory");
        int k = 0;
        for (int i = 0; i < n_conj; i++)
            if (!used[i] && !(masks[i] & ~u)) {
                jc[k++] = conj[i];
                used[i] = true;
            }
        sq_node *j = make_join(c, cs[bi].node, cs[bj].node, jc, k);
        if (!j)
            return c->err->code;
        cs[bi] = (comp){j, u};
        cs[bj] = cs[--n];
    }
    /* Whatever is left (constants over no relation) filters the result. */
    sq_expr **rest = sq_alloc(&c->A, (size_t)(n_conj + 1) * sizeof *rest);
    int k = 0;
    for (int i = 0; rest && i < n_conj; i++)
        if (!used[i])
            rest[k++] = conj[i];
    sq_node *r = rest ? sq_filter(c, cs[0].node, rest, k) : NULL;
    if (!r)
        return c->err->code ? c->err->code : sq_fail(c, -1, PA_ENOMEM, "planning: out of memory");
    *out = r;
    return PA_OK;
}
