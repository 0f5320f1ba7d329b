/*
 * lower.c - logical plan -> execution engine operators.
 *
 * Each node is asked only for the column ids its parent reads (`need`), so
 * scans read only the columns a query uses. `column op constant`
 * conjuncts on a scan become pq_pred (row-group and page pruning, exact
 * filtering in the scan); the rest become a FILTER above it. Join
 * equalities between the two sides become hash keys (cast to a common
 * type, computed by a projection when they are expressions); other join
 * conditions become the join's residual. A FULL join becomes a LEFT join
 * UNION ALL an ANTI join (lower_full).
 */
#include "sql/sql_int.h"

#include <stdint.h>
#include <string.h>

static int find(const int *ids, int n, int id)
{
    for (int i = 0; i < n; i++)
        if (ids[i] == id)
            return i;
    return -1;
}

ex_expr *sq_lower_expr(sq_ctx *c, const sq_expr *e, const int *ids, int n_ids)
{
    if (!e)
        return NULL;
    switch (e->kind) {
    case SQ_E_COL:
    case SQ_E_SUBQ: {
        int i = find(ids, n_ids, e->col);
        if (i < 0) {
            sq_fail(c, e->loc, PA_EINTERNAL, "planning: column %s (#%d) is not available here", c->cols[e->col].name,
                    e->col);
            return NULL;
        }
        return ex_expr_col_typed(c->plan, i, c->cols[e->col].type, c->err);
    }
    case SQ_E_CONST: return e->tx;
    case SQ_E_AGG: sq_fail(c, e->loc, PA_EINTERNAL, "planning: aggregate left in an expression"); return NULL;
    case SQ_E_WINDOW: sq_fail(c, e->loc, PA_EINTERNAL, "planning: window function left in an expression"); return NULL;
    case SQ_E_OSAGG: sq_fail(c, e->loc, PA_EINTERNAL, "planning: ordered-set aggregate left in an expression"); return NULL;
    case SQ_E_GROUPING: sq_fail(c, e->loc, PA_EINVAL, "GROUPING needs a GROUP BY"); return NULL;
    default: break;
    }
    ex_expr **ax = sq_alloc(&c->A, (size_t)(e->n_args ? e->n_args : 1) * sizeof *ax);
    if (!ax) {
        sq_fail(c, e->loc, PA_ENOMEM, "out of memory planning an expression of %d operands", e->n_args);
        return NULL;
    }
    for (int i = 0; i < e->n_args; i++)
        if (!(ax[i] = sq_lower_expr(c, e->args[i], ids, n_ids)))
            return NULL;
    ex_expr *r = sq_build_tx(c, e, ax);
    if (!r && c->err_loc < 0)
        c->err_loc = e->loc;
    return r;
}

static uint8_t *set_new(sq_ctx *c, const uint8_t *from)
{
    uint8_t *s = sq_alloc(&c->A, (size_t)c->n_cols + 1);
    if (s && from)
        memcpy(s, from, (size_t)c->n_cols);
    return s;
}

static bool needed(const uint8_t *need, int id) { return !need || need[id]; }

static int oom(sq_ctx *c) { return sq_fail(c, -1, PA_ENOMEM, "planning: out of memory"); }

/* ------------------------------------------------------------------ scan */
static bool pred_type_ok(pa_type col, pa_type k)
{
    switch (col.id) {
    case PA_TYPE_INTEGER:
    case PA_TYPE_BIGINT: return k.id == PA_TYPE_INTEGER || k.id == PA_TYPE_BIGINT;
    case PA_TYPE_DECIMAL:   /* (the scan's predicates read 64-bit values: not over DECIMAL(19..38)) */
        return col.precision <= 18 &&
               (k.id == PA_TYPE_INTEGER || k.id == PA_TYPE_BIGINT || (k.id == PA_TYPE_DECIMAL && k.scale <= col.scale));
    case PA_TYPE_DOUBLE: return k.id != PA_TYPE_VARCHAR && k.id != PA_TYPE_DATE && k.id != PA_TYPE_BOOLEAN;
    case PA_TYPE_REAL: return k.id == PA_TYPE_REAL;   /* (the constant's text is its exact value: ex_expr_const_text) */
    case PA_TYPE_INTERVAL: return false;   /* (compared by length: above the scan) */
    case PA_TYPE_BYTEA:
    case PA_TYPE_UUID: return false;   /* (the scan's constants are text: these filter above it) */
    default: return col.id == k.id;
    }
}

/* A constant, or an expression of constants the engine folded into one
 * (DATE '1998-12-01' - INTERVAL '90' DAY). */
static bool const_like(const sq_expr *e)
{
    return e->kind == SQ_E_CONST || (e->tx && ex_expr_is_const(e->tx) && !sq_expr_has(e, SQ_E_COL) &&
                                     !sq_expr_has(e, SQ_E_SUBQ) && !sq_expr_has(e, SQ_E_AGG));
}

/* A scan predicate from `col op const`; false when e is not one. */
static bool to_pred(sq_ctx *c, sq_node *n, const sq_expr *e, pq_pred *p)
{
    if (e->kind == SQ_E_ISNULL && e->args[0]->kind == SQ_E_COL) {
        int i = find(n->out, n->n_out, e->args[0]->col);
        if (i < 0 || (n->table->col_mixed && n->table->col_mixed[n->src[i]]))
            return false;
        *p = (pq_pred){n->table->col_names[n->src[i]], e->sub ? PQ_OP_IS_NOT_NULL : PQ_OP_IS_NULL, ""};
        return true;
    }
    if (e->kind != SQ_E_CMP)
        return false;
    const sq_expr *a = e->args[0], *b = e->args[1];
    int op = e->sub;
    if (const_like(a) && b->kind == SQ_E_COL) {
        const sq_expr *t = a;
        a = b;
        b = t;
        op = op == EX_LT ? EX_GT : op == EX_GT ? EX_LT : op == EX_LE ? EX_GE : op == EX_GE ? EX_LE : op;
    }
    if (a->kind != SQ_E_COL || !const_like(b))
        return false;
    int i = find(n->out, n->n_out, a->col);
    if (i < 0 || !pred_type_ok(a->type, b->type) || (n->table->col_mixed && n->table->col_mixed[n->src[i]]))
        return false;   /* (a type that differs between files: the filter above the scan) */
    char buf[512];
    if (ex_expr_const_text(b->tx, buf, sizeof buf) != PA_OK)
        return false; /* NULL constants: the filter handles them */
    static const pq_op map[] = {[EX_EQ] = PQ_OP_EQ, [EX_NE] = PQ_OP_NE, [EX_LT] = PQ_OP_LT,
                                [EX_LE] = PQ_OP_LE, [EX_GT] = PQ_OP_GT, [EX_GE] = PQ_OP_GE};
    *p = (pq_pred){n->table->col_names[n->src[i]], map[op], sq_strdup(&c->A, buf)};
    return p->value != NULL;
}

/* Whether e reads a base column the scans cannot read. */
static bool reads_unsupported(sq_ctx *c, const sq_expr *e)
{
    if (e->kind == SQ_E_COL)
        return e->col >= 0 && e->col < c->n_cols && c->cols[e->col].unsupported;
    for (int i = 0; i < e->n_args; i++)
        if (e->args[i] && reads_unsupported(c, e->args[i]))
            return true;
    return false;
}

static int lower_scan(sq_ctx *c, sq_node *n, const uint8_t *need, ex_op **op, int **ids, int *n_ids)
{
    pq_pred *preds = sq_alloc(&c->A, (size_t)(n->n_conj + 1) * sizeof *preds);
    sq_expr **rest = sq_alloc(&c->A, (size_t)(n->n_conj + 1) * sizeof *rest);
    uint8_t *want = set_new(c, need);
    if (!preds || !rest || !want)
        return oom(c);
    if (!need)
        for (int i = 0; i < n->n_out; i++)
            want[n->out[i]] = 1;
    int np = 0, nr = 0;
    for (int i = 0; i < n->n_conj; i++) {
        if (to_pred(c, n, n->conj[i], &preds[np]))
            np++;
        else {
            rest[nr++] = n->conj[i];
            sq_expr_cols(n->conj[i], want);
        }
    }
    const char **cols = sq_alloc(&c->A, (size_t)(n->n_out + 1) * sizeof *cols);
    int *out = sq_alloc(&c->A, (size_t)(n->n_out + 1) * sizeof *out);
    pa_type *types = sq_alloc(&c->A, (size_t)(n->n_out + 1) * sizeof *types);
    if (!cols || !out || !types)
        return oom(c);
    int k = 0;
    for (int i = 0; i < n->n_out; i++)
        if (want[n->out[i]]) {
            types[k] = n->table->col_types[n->src[i]];
            cols[k] = n->table->col_names[n->src[i]];
            out[k++] = n->out[i];
        }
    if (k == 0) { /* COUNT(*): read the first column it can read for the row count */
        int i = 0;
        while (i < n->n_out && c->cols[n->out[i]].unsupported)
            i++;
        if (i == n->n_out)
            return sq_fail(c, -1, PA_EUNSUPPORTED, "table %s has no column that can be read to count its rows (%s)",
                           n->table->name, c->cols[n->out[0]].unsupported);
        types[0] = n->table->col_types[n->src[i]];
        cols[0] = n->table->col_names[n->src[i]];
        out[k++] = n->out[i];
    }
    ex_op *s;
    ex_scan_layout lay = {types, n->table->hive, n->table->union_by_name};
    int rc = ex_scan_layout_build(c->plan, (const char *const *)n->table->paths, n->table->n_paths, cols, k, preds,
                                  np, &lay, &s, c->err);
    if (rc)
        return rc;
    ex_op_set_estimate(s, n->est);
    if (n->share_parts > 1 && (rc = ex_scan_set_share(s, n->share_part, n->share_parts, c->err)))
        return rc;
    if (nr) {
        ex_expr *p = sq_lower_expr(c, sq_and_all(c, rest, nr), out, k);
        if (!p)
            return c->err->code;
        if ((rc = ex_filter(c->plan, s, p, &s, c->err)))
            return rc;
        ex_op_set_estimate(s, n->est);
    }
    *op = s;
    *ids = out;
    *n_ids = k;
    return PA_OK;
}

/* Project `op` (columns ids) to exactly the ids `want` in order. */
static int reorder(sq_ctx *c, ex_op **op, int **ids, int *n_ids, const int *want, int n_want)
{
    if (*n_ids == n_want && memcmp(*ids, want, (size_t)n_want * sizeof(int)) == 0)
        return PA_OK;
    ex_expr **ex = sq_alloc(&c->A, (size_t)(n_want + 1) * sizeof *ex);
    const char **names = sq_alloc(&c->A, (size_t)(n_want + 1) * sizeof *names);
    if (!ex || !names)
        return oom(c);
    for (int i = 0; i < n_want; i++) {
        int j = find(*ids, *n_ids, want[i]);
        if (j < 0)
            return sq_fail(c, -1, PA_EINTERNAL, "planning: column #%d missing", want[i]);
        if (!(ex[i] = ex_expr_col(c->plan, *op, j, c->err)))
            return c->err->code;
        names[i] = c->cols[want[i]].name;
    }
    int rc = ex_project(c->plan, *op, ex, names, n_want, op, c->err);
    if (rc)
        return rc;
    int *v = sq_alloc(&c->A, (size_t)(n_want + 1) * sizeof *v);
    if (!v)
        return oom(c);
    memcpy(v, want, (size_t)n_want * sizeof *v);
    *ids = v;
    *n_ids = n_want;
    return PA_OK;
}

/* ------------------------------------------------------------------ join */
static bool type_same(pa_type a, pa_type b)
{
    if (a.id == PA_TYPE_DECIMAL || b.id == PA_TYPE_DECIMAL)
        return a.id == b.id && a.scale == b.scale && (a.precision > 18) == (b.precision > 18);
    if ((a.id == PA_TYPE_INTEGER || a.id == PA_TYPE_BIGINT) && (b.id == PA_TYPE_INTEGER || b.id == PA_TYPE_BIGINT))
        return true;
    return a.id == b.id;
}

/* Append computed key expressions to a side: a projection that passes
 * every column through and adds the keys; their ids go to key_ids. */
static int side_keys(sq_ctx *c, ex_op **op, int **ids, int *n_ids, sq_expr **keys, int n_keys, int *key_ids)
{
    bool all_cols = true;
    for (int i = 0; i < n_keys; i++) {
        if (keys[i]->kind == SQ_E_COL && find(*ids, *n_ids, keys[i]->col) >= 0)
            key_ids[i] = keys[i]->col;
        else {
            key_ids[i] = -1;
            all_cols = false;
        }
    }
    if (all_cols)
        return PA_OK;
    int n = *n_ids, extra = 0;
    for (int i = 0; i < n_keys; i++)
        extra += key_ids[i] < 0;
    ex_expr **ex = sq_alloc(&c->A, (size_t)(n + extra + 1) * sizeof *ex);
    const char **names = sq_alloc(&c->A, (size_t)(n + extra + 1) * sizeof *names);
    int *nids = sq_alloc(&c->A, (size_t)(n + extra + 1) * sizeof *nids);
    if (!ex || !names || !nids)
        return oom(c);
    for (int i = 0; i < n; i++) {
        if (!(ex[i] = ex_expr_col(c->plan, *op, i, c->err)))
            return c->err->code;
        names[i] = c->cols[(*ids)[i]].name;
        nids[i] = (*ids)[i];
    }
    int k = n;
    for (int i = 0; i < n_keys; i++) {
        if (key_ids[i] >= 0)
            continue;
        int id = sq_new_col(c, "key", keys[i]->type);
        if (id < 0 || !(ex[k] = sq_lower_expr(c, keys[i], *ids, n)))
            return c->err->code;
        names[k] = "key";
        nids[k] = id;
        key_ids[i] = id;
        k++;
    }
    int rc = ex_project(c->plan, *op, ex, names, k, op, c->err);
    if (rc)
        return rc;
    *ids = nids;
    *n_ids = k;
    return PA_OK;
}

int sq_join_keys(sq_ctx *c, const sq_node *n, sq_expr **pk, sq_expr **bk, int *nk, sq_expr **resid, int *nres)
{
    sq_node *pn = n->in[0], *bn = n->in[1];
    *nk = *nres = 0;
    for (int i = 0; i < n->n_conj; i++) {
        sq_expr *e = n->conj[i];
        if (e->kind == SQ_E_CMP && e->sub == EX_EQ) {
            sq_expr *a = e->args[0], *b = e->args[1];
            bool ap = sq_node_covers(c, pn, a), bb = sq_node_covers(c, bn, b);
            bool ab = sq_node_covers(c, bn, a), bp = sq_node_covers(c, pn, b);
            if ((ap && bb) || (ab && bp)) {
                if (!(ap && bb)) {
                    sq_expr *t = a;
                    a = b;
                    b = t;
                }
                if (!type_same(a->type, b->type)) {
                    pa_type t;
                    if (!sq_common_type(c, a->type, b->type, &t))
                        return sq_fail(c, e->loc, PA_EINVAL, "join keys of types %s and %s cannot be compared",
                                       pa_type_name(a->type.id), pa_type_name(b->type.id));
                    if (t.id == PA_TYPE_DECIMAL && t.precision <= 18 && (a->type.precision > 18 || b->type.precision > 18))
                        t.precision = 38;
                    a = sq_cast(c, a, t, e->loc);
                    b = sq_cast(c, b, t, e->loc);
                    if (!a || !b)
                        return c->err->code;
                }
                pk[*nk] = a;
                bk[(*nk)++] = b;
                continue;
            }
        }
        if (resid)
            resid[*nres] = e;
        (*nres)++;
    }
    return PA_OK;
}

static int lower_join(sq_ctx *c, sq_node *n, const uint8_t *need, ex_op **op, int **ids, int *n_ids)
{
    sq_node *pn = n->in[0], *bn = n->in[1];
    int nc = n->n_conj;
    sq_expr **pk = sq_alloc(&c->A, (size_t)(nc + 1) * sizeof *pk), **bk = sq_alloc(&c->A, (size_t)(nc + 1) * sizeof *bk);
    sq_expr **resid = sq_alloc(&c->A, (size_t)(nc + 1) * sizeof *resid);
    /* Only INNER and LEFT output build columns: the others read its keys. */
    bool build_out = n->jkind == SQ_J_INNER || n->jkind == SQ_J_LEFT;
    uint8_t *pneed = set_new(c, need), *bneed = set_new(c, build_out ? need : NULL);
    if (!pk || !bk || !resid || !pneed || !bneed)
        return oom(c);
    if (!need)
        for (int i = 0; i < n->n_out; i++)
            pneed[n->out[i]] = bneed[n->out[i]] = 1;
    int nk = 0, nres = 0;
    int krc = sq_join_keys(c, n, pk, bk, &nk, resid, &nres);
    if (krc != PA_OK)
        return krc;
    for (int i = 0; i < nk; i++) {
        sq_expr_cols(pk[i], pneed);
        sq_expr_cols(bk[i], bneed);
    }
    for (int i = 0; i < nres; i++) {
        sq_expr_cols(resid[i], pneed);
        sq_expr_cols(resid[i], bneed);
    }
    ex_op *po, *bo;
    int *pids, *bids, npi, nbi, rc;
    if ((rc = sq_lower(c, pn, pneed, &po, &pids, &npi)) || (rc = sq_lower(c, bn, bneed, &bo, &bids, &nbi)))
        return rc;
    int *pkid = sq_alloc(&c->A, (size_t)(nk + 1) * sizeof(int)), *bkid = sq_alloc(&c->A, (size_t)(nk + 1) * sizeof(int));
    int *pki = sq_alloc(&c->A, (size_t)(nk + 1) * sizeof(int)), *bki = sq_alloc(&c->A, (size_t)(nk + 1) * sizeof(int));
    if (!pkid || !bkid || !pki || !bki)
        return oom(c);
    if ((rc = side_keys(c, &po, &pids, &npi, pk, nk, pkid)) || (rc = side_keys(c, &bo, &bids, &nbi, bk, nk, bkid)))
        return rc;
    for (int i = 0; i < nk; i++) {
        pki[i] = find(pids, npi, pkid[i]);
        bki[i] = find(bids, nbi, bkid[i]);
    }
    ex_join_type jt = n->jkind == SQ_J_INNER ? EX_JOIN_INNER
                      : n->jkind == SQ_J_LEFT ? EX_JOIN_LEFT
                      : n->jkind == SQ_J_SEMI ? EX_JOIN_SEMI
                      : n->jkind == SQ_J_ANTI ? EX_JOIN_ANTI
                                              : EX_JOIN_MARK;
    /* Build columns the parent reads. */
    int *bout = sq_alloc(&c->A, (size_t)(nbi + 1) * sizeof(int));
    int *out = sq_alloc(&c->A, (size_t)(npi + nbi + 2) * sizeof(int));
    if (!bout || !out)
        return oom(c);
    int nbo = 0, no = 0;
    for (int i = 0; i < npi; i++)
        out[no++] = pids[i];
    if (jt == EX_JOIN_INNER || jt == EX_JOIN_LEFT)
        for (int i = 0; i < nbi; i++)
            /* Key ids made while lowering are newer than `need` (its size). */
            if (sq_node_has_col(bn, bids[i]) && needed(need, bids[i]) && find(out, no, bids[i]) < 0) {
                bout[nbo++] = i;
                out[no++] = bids[i];
            }
    if (jt == EX_JOIN_MARK)
        out[no++] = n->mark;
    ex_expr *res = NULL;
    if (nres) {
        /* The residual reads the pair: probe columns, then all build columns. */
        int *pair = sq_alloc(&c->A, (size_t)(npi + nbi + 1) * sizeof(int));
        if (!pair)
            return oom(c);
        memcpy(pair, pids, (size_t)npi * sizeof(int));
        memcpy(pair + npi, bids, (size_t)nbi * sizeof(int));
        if (!(res = sq_lower_expr(c, sq_and_all(c, resid, nres), pair, npi + nbi)))
            return c->err->code;
    }
    ex_op *j;
    if ((rc = ex_hash_join_cond(c->plan, po, bo, jt, pki, bki, nk, bout, nbo, res, &j, c->err)))
        return rc;
    /* A scalar subquery's rows, one per key (with a residual the keys may
     * legitimately repeat: not checked then). */
    if (n->single && !res && (rc = ex_hash_join_single(j, c->err)))
        return rc;
    ex_op_set_estimate(j, n->est);
    *op = j;
    *ids = out;
    *n_ids = no;
    return PA_OK;
}

/* FULL join of L and R on cond, as two engine joins over the same inputs:
 *   (L LEFT JOIN R ON cond) UNION ALL (R ANTI JOIN L ON cond, L's columns NULL)
 * ANTI keeps the R rows that no L row matches (NULL keys included), which
 * are exactly the R rows a FULL join pads. Both sides are lowered twice
 * (read and computed twice); lowering leaves the logical nodes unchanged. */
static int lower_full(sq_ctx *c, sq_node *n, const uint8_t *need, ex_op **op, int **ids, int *n_ids)
{
    /* Both inputs run twice; a LIMIT without ORDER BY could keep different
     * rows each time (with ORDER BY, only rows tied at the cut could). */
    if (sq_node_has_limit(n->in[0], true) || sq_node_has_limit(n->in[1], true))
        return sq_fail(c, -1, PA_EUNSUPPORTED, "FULL JOIN of a subquery with LIMIT but no ORDER BY is not supported");
    sq_node *ln = sq_alloc(&c->A, sizeof *ln), *an = sq_alloc(&c->A, sizeof *an);
    if (!ln || !an)
        return oom(c);
    *ln = *n;
    ln->jkind = SQ_J_LEFT;
    *an = *n;
    an->jkind = SQ_J_ANTI;
    an->in[0] = n->in[1];
    an->in[1] = n->in[0];
    an->out = n->in[1]->out;
    an->n_out = n->in[1]->n_out;
    an->est = n->in[1]->est;
    ex_op *lo, *ao;
    int *lids, *aids, nl, na, rc;
    if ((rc = lower_join(c, ln, need, &lo, &lids, &nl)) || (rc = lower_join(c, an, need, &ao, &aids, &na)))
        return rc;
    /* The columns the parent reads, in the LEFT join's order (at least one). */
    int *want = sq_alloc(&c->A, (size_t)(nl + 1) * sizeof *want);
    ex_expr **ex = sq_alloc(&c->A, (size_t)(nl + 1) * sizeof *ex);
    const char **names = sq_alloc(&c->A, (size_t)(nl + 1) * sizeof *names);
    if (!want || !ex || !names)
        return oom(c);
    int k = 0;
    for (int i = 0; i < nl; i++)
        if (sq_node_has_col(n, lids[i]) && needed(need, lids[i]))
            want[k++] = lids[i];
    if (k == 0)
        want[k++] = lids[0];
    if ((rc = reorder(c, &lo, &lids, &nl, want, k)))
        return rc;
    for (int i = 0; i < k; i++) {
        int j = find(aids, na, want[i]);
        ex[i] = j >= 0 ? ex_expr_col(c->plan, ao, j, c->err) : ex_expr_null(c->plan, c->cols[want[i]].type, c->err);
        if (!ex[i])
            return c->err->code;
        names[i] = c->cols[want[i]].name;
    }
    if ((rc = ex_project(c->plan, ao, ex, names, k, &ao, c->err)))
        return rc;
    ex_op *both[2] = {lo, ao};
    if ((rc = ex_union_all(c->plan, both, 2, op, c->err)))
        return rc;
    ex_op_set_estimate(*op, n->est);
    *ids = lids;
    *n_ids = nl;
    return PA_OK;
}

/* ------------------------------------------------------------- the rest */
/* An aggregate over grouping sets: per set, the input again, aggregated by
 * the set's keys, the other keys NULL; the branches' rows UNION ALL. */
static int lower_grouping_sets(sq_ctx *c, sq_node *n, ex_op **op, int **ids, int *n_ids)
{
    if (sq_node_has_limit(n->in[0], true))
        return sq_fail(c, -1, PA_EUNSUPPORTED, "grouping sets over a subquery with LIMIT but no ORDER BY are not supported");
    int ng = n->n_groups, na = n->n_aggs, rc;
    ex_op **branch = sq_alloc(&c->A, (size_t)n->n_sets * sizeof *branch);
    int *g = sq_alloc(&c->A, (size_t)(ng + 1) * sizeof *g);
    ex_agg *a = sq_alloc(&c->A, (size_t)(na + 1) * sizeof *a);
    const char **names = sq_alloc(&c->A, (size_t)(n->n_out + 1) * sizeof *names);
    ex_expr **ex = sq_alloc(&c->A, (size_t)(n->n_out + 1) * sizeof *ex);
    uint8_t *cn = set_new(c, NULL);
    if (!branch || !g || !a || !names || !ex || !cn)
        return oom(c);
    for (int i = 0; i < ng; i++)
        cn[n->groups[i]] = 1;
    for (int i = 0; i < na; i++)
        if (n->aggs[i].arg >= 0)
            cn[n->aggs[i].arg] = 1;
    for (int i = 0; i < n->n_out; i++)
        names[i] = c->cols[n->out[i]].name;
    for (int s = 0; s < n->n_sets; s++) {
        ex_op *in;
        int *cids, ncid, k = 0;
        if ((rc = sq_lower(c, n->in[0], cn, &in, &cids, &ncid)))
            return rc;
        for (int i = 0; i < ng; i++)
            if (n->sets[s] >> i & 1)
                g[k++] = find(cids, ncid, n->groups[i]);
        for (int i = 0; i < na; i++)
            a[i] = (ex_agg){n->aggs[i].kind, n->aggs[i].arg >= 0 ? find(cids, ncid, n->aggs[i].arg) : 0};
        ex_op *agg;
        if ((rc = ex_aggregate(c->plan, in, g, k, a, na, names + ng, &agg, c->err)))
            return rc;
        for (int i = 0, j = 0; i < ng; i++) {
            ex[i] = n->sets[s] >> i & 1 ? ex_expr_col(c->plan, agg, j++, c->err)
                                        : ex_expr_null(c->plan, c->cols[n->out[i]].type, c->err);
            if (!ex[i])
                return c->err->code;
        }
        for (int i = 0; i < na; i++)
            if (!(ex[ng + i] = ex_expr_col(c->plan, agg, k + i, c->err)))
                return c->err->code;
        /* The set's id (GROUPING): bit i where key i is not grouped. */
        uint64_t all = ng >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << ng) - 1;
        if (n->n_out > ng + na && !(ex[ng + na] = ex_expr_bigint(c->plan, (int64_t)(~n->sets[s] & all), c->err)))
            return c->err->code;
        if ((rc = ex_project(c->plan, agg, ex, names, n->n_out, &branch[s], c->err)))
            return rc;
    }
    if (n->n_sets == 1)
        *op = branch[0];
    else if ((rc = ex_union_all(c->plan, branch, n->n_sets, op, c->err)))
        return rc;
    ex_op_set_estimate(*op, n->est);
    *ids = n->out;
    *n_ids = n->n_out;
    return PA_OK;
}

int sq_lower(sq_ctx *c, sq_node *n, const uint8_t *need, ex_op **op, int **ids, int *n_ids)
{
    int rc;
    switch (n->kind) {
    case SQ_L_SCAN: return lower_scan(c, n, need, op, ids, n_ids);
    case SQ_L_JOIN: return n->jkind == SQ_J_FULL ? lower_full(c, n, need, op, ids, n_ids)
                                                  : lower_join(c, n, need, op, ids, n_ids);
    case SQ_L_ROWS: {
        *ids = n->out;
        *n_ids = n->n_out;
        int rc = ex_rows(c->plan, n->rows, op, c->err);
        if (rc == PA_OK)
            ex_op_set_label(*op, n->label);
        return rc;
    }
    case SQ_L_EXCHANGE: {   /* its input's columns in in[0]'s order, then the rows between the ranks */
        const sq_node *in = n->in[0];
        int *cids, ncid;
        if ((rc = sq_lower(c, n->in[0], NULL, op, &cids, &ncid)))
            return rc;
        bool same = ncid == in->n_out;
        for (int i = 0; same && i < ncid; i++)
            same = cids[i] == in->out[i];
        if (!same) {
            ex_expr **ex = sq_alloc(&c->A, (size_t)(in->n_out + 1) * sizeof *ex);
            const char **names = sq_alloc(&c->A, (size_t)(in->n_out + 1) * sizeof *names);
            if (!ex || !names)
                return oom(c);
            for (int i = 0; i < in->n_out; i++) {
                int at = find(cids, ncid, in->out[i]);
                if (at < 0)
                    return sq_fail(c, -1, PA_EINTERNAL, "planning: an exchange's input lacks a column");
                if (!(ex[i] = ex_expr_col(c->plan, *op, at, c->err)))
                    return c->err->code;
                names[i] = c->cols[in->out[i]].name;
            }
            if ((rc = ex_project(c->plan, *op, ex, names, in->n_out, op, c->err)))
                return rc;
        }
        if ((rc = ex_exchange(c->plan, *op, c->s->opt.world, (ex_xmode)n->xmode, n->n_out, n->xkeys, n->n_xkeys, op,
                              c->err)))
            return rc;
        if (n->label)
            ex_op_set_label(*op, n->label);
        ex_op_set_estimate(*op, n->est);
        *ids = n->out;
        *n_ids = n->n_out;
        return PA_OK;
    }
    case SQ_L_SERIES:
        *ids = n->out;
        *n_ids = 1;
        return ex_series(c->plan, n->series_start, n->series_step, n->n_rows, c->cols[n->out[0]].name, op, c->err);
    case SQ_L_VALUES: {
        if (n->n_out > 0) {   /* a VALUES list */
            int64_t cells = n->n_rows * n->n_out;
            ex_expr **tx = sq_alloc(&c->A, (size_t)cells * sizeof *tx);
            const char **nm = sq_alloc(&c->A, (size_t)n->n_out * sizeof *nm);
            if (!tx || !nm)
                return oom(c);
            for (int64_t i = 0; i < cells; i++)
                tx[i] = n->exprs[i]->tx;
            for (int i = 0; i < n->n_out; i++)
                nm[i] = c->cols[n->out[i]].name;
            *ids = n->out;
            *n_ids = n->n_out;
            return ex_values_rows(c->plan, tx, nm, n->n_out, n->n_rows, op, c->err);
        }
        int *v = sq_alloc(&c->A, sizeof *v);
        if (!v)
            return oom(c);
        *ids = v;
        *n_ids = 0;
        return ex_values(c->plan, NULL, NULL, 0, op, c->err);
    }
    case SQ_L_FILTER: {
        uint8_t *cn = set_new(c, need);
        if (!cn)
            return oom(c);
        if (!need)
            for (int i = 0; i < n->n_out; i++)
                cn[n->out[i]] = 1;
        for (int i = 0; i < n->n_conj; i++)
            sq_expr_cols(n->conj[i], cn);
        if ((rc = sq_lower(c, n->in[0], cn, op, ids, n_ids)))
            return rc;
        ex_expr *p = sq_lower_expr(c, sq_and_all(c, n->conj, n->n_conj), *ids, *n_ids);
        if (!p || (rc = ex_filter(c->plan, *op, p, op, c->err)))
            return c->err->code ? c->err->code : PA_EINTERNAL;
        ex_op_set_estimate(*op, n->est);
        return PA_OK;
    }
    case SQ_L_PROJECT: {
        uint8_t *cn = set_new(c, NULL);
        int *out = sq_alloc(&c->A, (size_t)(n->n_out + 1) * sizeof *out);
        sq_expr **keep = sq_alloc(&c->A, (size_t)(n->n_out + 1) * sizeof *keep);
        if (!cn || !out || !keep)
            return oom(c);
        int k = 0;
        for (int i = 0; i < n->n_out; i++)
            if (needed(need, n->out[i]) && find(out, k, n->out[i]) < 0) {
                keep[k] = n->exprs[i];
                out[k++] = n->out[i];
            }
        if (k == 0 && n->n_out) {   /* one column for the row count: one the scans can read */
            int i = 0;
            while (i < n->n_out && reads_unsupported(c, n->exprs[i]))
                i++;
            if (i == n->n_out)   /* none: the input's row count (its scan picks or says why not) */
                return sq_lower(c, n->in[0], cn, op, ids, n_ids);
            keep[k] = n->exprs[i];
            out[k++] = n->out[i];
        }
        for (int i = 0; i < k; i++)
            sq_expr_cols(keep[i], cn);
        int *cids, ncid;
        if ((rc = sq_lower(c, n->in[0], cn, op, &cids, &ncid)))
            return rc;
        ex_expr **ex = sq_alloc(&c->A, (size_t)(k + 1) * sizeof *ex);
        const char **names = sq_alloc(&c->A, (size_t)(k + 1) * sizeof *names);
        if (!ex || !names)
            return oom(c);
        for (int i = 0; i < k; i++) {
            if (!(ex[i] = sq_lower_expr(c, keep[i], cids, ncid)))
                return c->err->code;
            names[i] = c->cols[out[i]].name;
        }
        if ((rc = ex_project(c->plan, *op, ex, names, k, op, c->err)))
            return rc;
        ex_op_set_estimate(*op, n->est);
        *ids = out;
        *n_ids = k;
        return PA_OK;
    }
    case SQ_L_AGG: {
        if (n->n_sets > 0)
            return lower_grouping_sets(c, n, op, ids, n_ids);
        uint8_t *cn = set_new(c, NULL);
        if (!cn)
            return oom(c);
        for (int i = 0; i < n->n_groups; i++)
            cn[n->groups[i]] = 1;
        for (int i = 0; i < n->n_aggs; i++)
            if (n->aggs[i].arg >= 0)
                cn[n->aggs[i].arg] = 1;
        int *cids, ncid;
        if ((rc = sq_lower(c, n->in[0], cn, op, &cids, &ncid)))
            return rc;
        int *g = sq_alloc(&c->A, (size_t)(n->n_groups + 1) * sizeof *g);
        ex_agg *a = sq_alloc(&c->A, (size_t)(n->n_aggs + 1) * sizeof *a);
        const char **names = sq_alloc(&c->A, (size_t)(n->n_aggs + 1) * sizeof *names);
        if (!g || !a || !names)
            return oom(c);
        for (int i = 0; i < n->n_groups; i++)
            g[i] = find(cids, ncid, n->groups[i]);
        for (int i = 0; i < n->n_aggs; i++) {
            a[i] = (ex_agg){n->aggs[i].kind, n->aggs[i].arg >= 0 ? find(cids, ncid, n->aggs[i].arg) : 0};
            names[i] = c->cols[n->aggs[i].out].name;
        }
        if ((rc = ex_aggregate(c->plan, *op, g, n->n_groups, a, n->n_aggs, names, op, c->err)))
            return rc;
        ex_op_set_estimate(*op, n->est);
        *ids = n->out;
        *n_ids = n->n_out;
        return PA_OK;
    }
    case SQ_L_DISTINCT: {
        if ((rc = sq_lower(c, n->in[0], NULL, op, ids, n_ids)) || (rc = reorder(c, op, ids, n_ids, n->out, n->n_out)))
            return rc;
        if ((rc = ex_distinct(c->plan, *op, op, c->err)))
            return rc;
        ex_op_set_estimate(*op, n->est);
        return PA_OK;
    }
    case SQ_L_SORT:
    case SQ_L_LIMIT: {
        uint8_t *cn = set_new(c, need);
        if (!cn)
            return oom(c);
        if (!need)
            for (int i = 0; i < n->n_out; i++)
                cn[n->out[i]] = 1;
        for (int i = 0; i < n->n_keys; i++)
            cn[n->keys[i].column] = 1;
        if ((rc = sq_lower(c, n->in[0], cn, op, ids, n_ids)))
            return rc;
        int64_t limit = n->limit >= 0 ? n->limit : INT64_MAX / 4;
        if (n->kind == SQ_L_SORT) {
            ex_sort_key *k = sq_alloc(&c->A, (size_t)(n->n_keys + 1) * sizeof *k);
            if (!k)
                return oom(c);
            for (int i = 0; i < n->n_keys; i++) {
                k[i] = n->keys[i];
                k[i].column = find(*ids, *n_ids, n->keys[i].column);
            }
            if (n->limit >= 0)
                rc = ex_topn(c->plan, *op, k, n->n_keys, n->limit, n->offset, op, c->err);
            else if ((rc = ex_sort(c->plan, *op, k, n->n_keys, op, c->err)) == PA_OK && n->offset > 0)
                rc = ex_limit(c->plan, *op, limit, n->offset, op, c->err);
        } else
            rc = ex_limit(c->plan, *op, limit, n->offset, op, c->err);
        if (rc == PA_OK)
            ex_op_set_estimate(*op, n->est);
        return rc;
    }
    case SQ_L_WINDOW: {
        /* The input's needed columns pass through; then the functions. */
        uint8_t *cn = set_new(c, need);
        if (!cn)
            return oom(c);
        if (!need)
            for (int i = 0; i < n->n_out; i++)
                cn[n->out[i]] = 1;
        for (int i = 0; i < n->n_wpart; i++)
            cn[n->wpart[i]] = 1;
        for (int i = 0; i < n->n_keys; i++)
            cn[n->keys[i].column] = 1;
        for (int i = 0; i < n->n_wfns; i++)
            if (n->wfns[i].column >= 0)
                cn[n->wfns[i].column] = 1;
        int nf = n->n_wfns, *cids, ncid;
        for (int i = 0; i < nf; i++)
            cn[n->out[n->n_out - nf + i]] = 0;   /* made here */
        if ((rc = sq_lower(c, n->in[0], cn, op, &cids, &ncid)))
            return rc;
        int *part = sq_alloc(&c->A, (size_t)(n->n_wpart + 1) * sizeof *part);
        ex_sort_key *keys = sq_alloc(&c->A, (size_t)(n->n_keys + 1) * sizeof *keys);
        ex_window_fn *fns = sq_alloc(&c->A, (size_t)(nf + 1) * sizeof *fns);
        const char **names = sq_alloc(&c->A, (size_t)(nf + 1) * sizeof *names);
        int *out = sq_alloc(&c->A, (size_t)(ncid + nf + 1) * sizeof *out);
        if (!part || !keys || !fns || !names || !out)
            return oom(c);
        for (int i = 0; i < n->n_wpart; i++)
            part[i] = find(cids, ncid, n->wpart[i]);
        for (int i = 0; i < n->n_keys; i++) {
            keys[i] = n->keys[i];
            keys[i].column = find(cids, ncid, n->keys[i].column);
        }
        for (int i = 0; i < nf; i++) {
            fns[i] = n->wfns[i];
            fns[i].column = fns[i].column >= 0 ? find(cids, ncid, fns[i].column) : -1;
            names[i] = c->cols[n->out[n->n_out - nf + i]].name;
        }
        if ((rc = ex_window(c->plan, *op, part, n->n_wpart, keys, n->n_keys, fns, nf, names, op, c->err)))
            return rc;
        ex_op_set_estimate(*op, n->est);
        memcpy(out, cids, (size_t)ncid * sizeof *out);
        for (int i = 0; i < nf; i++)
            out[ncid + i] = n->out[n->n_out - nf + i];
        *ids = out;
        *n_ids = ncid + nf;
        return PA_OK;
    }
    case SQ_L_UNION: {
        ex_op **in = sq_alloc(&c->A, (size_t)n->n_ins * sizeof *in);
        if (!in)
            return oom(c);
        for (int k = 0; k < n->n_ins; k++) {
            int *cids, ncid;
            if ((rc = sq_lower(c, n->ins[k], NULL, &in[k], &cids, &ncid)) ||
                (rc = reorder(c, &in[k], &cids, &ncid, n->in_cols[k], n->n_out)))
                return rc;
        }
        if ((rc = ex_union_all(c->plan, in, n->n_ins, op, c->err)))
            return rc;
        ex_op_set_estimate(*op, n->est);
        *ids = n->out;
        *n_ids = n->n_out;
        return PA_OK;
    }
    }
    return sq_fail(c, -1, PA_EINTERNAL, "planning: node kind %d", (int)n->kind);
}

int sq_lower_root(sq_ctx *c, sq_node *n, const char *const *names, ex_op **out)
{
    uint8_t *need = set_new(c, NULL);
    if (!need)
        return oom(c);
    for (int i = 0; i < n->n_out; i++)
        need[n->out[i]] = 1;
    ex_op *op;
    int *ids, n_ids;
    int rc = sq_lower(c, n, need, &op, &ids, &n_ids);
    if (rc)
        return rc;
    ex_expr **ex = sq_alloc(&c->A, (size_t)(n->n_out + 1) * sizeof *ex);
    if (!ex)
        return oom(c);
    for (int i = 0; i < n->n_out; i++) {
        int j = find(ids, n_ids, n->out[i]);
        if (j < 0)
            return sq_fail(c, -1, PA_EINTERNAL, "planning: output column %d missing", i);
        if (!(ex[i] = ex_expr_col(c->plan, op, j, c->err)))
            return c->err->code;
    }
    return ex_project(c->plan, op, ex, names, n->n_out, out, c->err);
}
