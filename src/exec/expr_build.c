/*
 * expr_build.c - the typed expression builders: type derivation with the
 * promotion rules of expr_int.h, explicit CAST nodes on operands, NULL
 * propagation and folding of constant operands.
 */
#include "exec/expr_int.h"

#include <stdio.h>
#include <string.h>

static pa_type T(pa_type_id id) { return (pa_type){id, 0, 0}; }
static pa_type DEC(int p, int s) { return (pa_type){PA_TYPE_DECIMAL, (uint8_t)p, (uint8_t)s}; }

static bool is_num(pa_type t)
{
    return t.id == PA_TYPE_INTEGER || t.id == PA_TYPE_BIGINT || t.id == PA_TYPE_DECIMAL || pa_type_is_float(t.id);
}
static bool is_exact(pa_type t) { return is_num(t) && !pa_type_is_float(t.id); }
static bool is_temporal(pa_type t) { return t.id == PA_TYPE_DATE || t.id == PA_TYPE_INTERVAL || pa_type_is_time64(t.id); }
/* DATE and the timestamps: points in time that compare with each other. */
static bool is_instant(pa_type t)
{
    return t.id == PA_TYPE_DATE || t.id == PA_TYPE_TIMESTAMP || t.id == PA_TYPE_TIMESTAMPTZ ||
           t.id == PA_TYPE_TIMESTAMP_NS;
}
static int instant_rank(pa_type t)
{
    return t.id == PA_TYPE_DATE ? 0 : t.id == PA_TYPE_TIMESTAMP ? 1 : t.id == PA_TYPE_TIMESTAMP_NS ? 2 : 3;
}
/* TIMESTAMP and TIMESTAMPTZ: the types the date/time kernels compute in. */
static bool is_stamp(pa_type t) { return t.id == PA_TYPE_TIMESTAMP || t.id == PA_TYPE_TIMESTAMPTZ; }
static bool is_null_const(const ex_expr *e) { return e->kind == EX__CONST && e->is_null; }

/* An exact number as a DECIMAL: INTEGER (10,0), BIGINT (19,0). */
static pa_type as_dec(pa_type t)
{
    if (t.id == PA_TYPE_INTEGER)
        return DEC(10, 0);
    if (t.id == PA_TYPE_BIGINT)
        return DEC(19, 0);
    return t;
}

static int type_error(pa_err *err, const char *what, pa_type a, pa_type b)
{
    char x[32], y[32];
    return pa_error(err, PA_EINVAL, "%s of %s and %s is not defined", what, pa_type_format(a, x, sizeof x),
                    pa_type_format(b, y, sizeof y));
}

/* Common type of two types for comparison, IN and CASE (`what` words the
 * error: "comparison", "IN list with values", "CASE with results"). */
static int common_type(const char *what, pa_type a, pa_type b, pa_type *out, pa_err *err)
{
    if (ex__type_eq(a, b)) {
        *out = a;
        return PA_OK;
    }
    if (is_num(a) && is_num(b)) {
        /* REAL with an exact number is REAL (PostgreSQL's float4 operators
         * take the other side as float4); with a DOUBLE it is DOUBLE. */
        if (a.id == PA_TYPE_DOUBLE || b.id == PA_TYPE_DOUBLE)
            *out = T(PA_TYPE_DOUBLE);
        else if (a.id == PA_TYPE_REAL || b.id == PA_TYPE_REAL)
            *out = T(PA_TYPE_REAL);
        else if (a.id != PA_TYPE_DECIMAL && b.id != PA_TYPE_DECIMAL)
            *out = T(PA_TYPE_BIGINT);
        else {
            pa_type x = as_dec(a), y = as_dec(b);
            int s = x.scale > y.scale ? x.scale : y.scale;
            int ip = x.precision - x.scale > y.precision - y.scale ? x.precision - x.scale : y.precision - y.scale;
            *out = DEC(ip + s > 38 ? 38 : ip + s, s);
        }
        return PA_OK;
    }
    /* Text meets a date, time or byte type as that type (a literal compared
     * with a column). */
    if (a.id == PA_TYPE_VARCHAR && (is_temporal(b) || b.id == PA_TYPE_BYTEA || b.id == PA_TYPE_UUID)) {
        *out = b;
        return PA_OK;
    }
    if (b.id == PA_TYPE_VARCHAR && (is_temporal(a) || a.id == PA_TYPE_BYTEA || a.id == PA_TYPE_UUID)) {
        *out = a;
        return PA_OK;
    }
    /* DATE < TIMESTAMP < TIMESTAMP_NS, and TIMESTAMPTZ above them all, as
     * PostgreSQL and DuckDB compare a date with a timestamp. */
    if (is_instant(a) && is_instant(b)) {
        *out = instant_rank(a) > instant_rank(b) ? a : b;
        return PA_OK;
    }
    return type_error(err, what, a, b);
}

/* Cast constant c to type t only when that is exact (no rounding, no
 * overflow): returns the cast constant, or NULL (err untouched). */
static ex_expr *exact_const(ex_plan *p, ex_expr *c, pa_type t)
{
    if (c->kind != EX__CONST || c->is_null || !is_exact(t) || !is_exact(c->type))
        return NULL;
    if (as_dec(c->type).scale > as_dec(t).scale)
        return NULL;
    pa_err e;
    pa_err_init(&e);
    ex_expr *r = ex__cast(p, c, t, &e);
    pa_err_close(&e);
    return r;
}

/* Bring a and b to one type for a comparison. */
static int unify(ex_plan *p, ex_expr **a, ex_expr **b, pa_err *err)
{
    if (ex__type_eq((*a)->type, (*b)->type))
        return PA_OK;
    ex_expr *n;
    if ((n = exact_const(p, *b, (*a)->type))) {
        *b = n;
        return PA_OK;
    }
    if ((n = exact_const(p, *a, (*b)->type))) {
        *a = n;
        return PA_OK;
    }
    pa_type t;
    int rc = common_type("comparison", (*a)->type, (*b)->type, &t, err);
    if (rc != PA_OK)
        return rc;
    *a = ex__cast(p, *a, t, err);
    *b = ex__cast(p, *b, t, err);
    return *a && *b ? PA_OK : (err && err->code ? err->code : PA_EINVAL);
}

/* A strict node with a NULL constant operand is a NULL constant. */
static ex_expr *finish_strict(ex_plan *p, ex_expr *e, pa_err *err)
{
    if (!e)
        return NULL;
    for (int i = 0; i < e->n_args; i++)
        if (is_null_const(e->args[i]))
            return ex_expr_null(p, e->type, err);
    return ex__fold(p, e, err);
}

static ex_expr *node1(ex_plan *p, ex__node k, pa_type t, ex_expr *a, pa_err *err)
{
    ex_expr *e = ex__node_new(p, k, t, 1, err);
    if (e)
        e->args[0] = a;
    return e;
}

static ex_expr *node2(ex_plan *p, ex__node k, pa_type t, ex_expr *a, ex_expr *b, pa_err *err)
{
    ex_expr *e = ex__node_new(p, k, t, 2, err);
    if (e)
        e->args[0] = a, e->args[1] = b;
    return e;
}

/* ------------------------------------------------------------ arithmetic */

static ex_expr *date_arith(ex_plan *p, ex_arith op, ex_expr *a, ex_expr *b, pa_err *err)
{
    pa_type ta = a->type, tb = b->type;
    if (op == EX_ADD && ta.id != PA_TYPE_DATE) {   /* n + date */
        ex_expr *t = a;
        a = b, b = t;
        ta = a->type, tb = b->type;
    }
    if (ta.id == PA_TYPE_DATE && (tb.id == PA_TYPE_INTEGER || tb.id == PA_TYPE_BIGINT) &&
        (op == EX_ADD || op == EX_SUB)) {
        b = ex__cast(p, b, T(PA_TYPE_INTEGER), err);
        /* DATE +- days runs as int32 arithmetic typed DATE. */
        ex_expr *e = b ? node2(p, EX__ARITH, T(PA_TYPE_DATE), a, b, err) : NULL;
        if (e)
            e->sub = op;
        return finish_strict(p, e, err);
    }
    if (ta.id == PA_TYPE_DATE && tb.id == PA_TYPE_DATE && op == EX_SUB) {
        ex_expr *e = node2(p, EX__ARITH, T(PA_TYPE_INTEGER), a, b, err);
        if (e)
            e->sub = op;
        return ex__cast(p, finish_strict(p, e, err), T(PA_TYPE_BIGINT), err);
    }
    type_error(err, "arithmetic", a->type, b->type);
    return NULL;
}

static ex_expr *dt_node(ex_plan *p, kn_dtarith sub, pa_type t, ex_expr *a, ex_expr *b, pa_err *err)
{
    if (!a || (b == NULL) != (sub == KN_DT_IV_NEG || sub == KN_DT_IV_KEY))
        return NULL;
    ex_expr *e = ex__node_new(p, EX__DTARITH, t, b ? 2 : 1, err);
    if (!e)
        return NULL;
    e->sub = sub;
    e->args[0] = a;
    if (b)
        e->args[1] = b;
    return finish_strict(p, e, err);
}

/* Arithmetic with a DATE, a timestamp, a TIME or an INTERVAL operand
 * (PostgreSQL's operators): date +- integer days, date - date (days),
 * date or timestamp +- interval, timestamp - timestamp (an interval),
 * time +- interval, interval +- interval, interval * or / a number. A
 * TIMESTAMP_NS computes as TIMESTAMP. */
static ex_expr *time_arith(ex_plan *p, ex_arith op, ex_expr *a, ex_expr *b, pa_err *err)
{
    pa_type ta = a->type, tb = b->type;
    if (ta.id == PA_TYPE_TIMESTAMP_NS || tb.id == PA_TYPE_TIMESTAMP_NS) {
        if (ta.id == PA_TYPE_TIMESTAMP_NS && !(a = ex__cast(p, a, T(PA_TYPE_TIMESTAMP), err)))
            return NULL;
        if (tb.id == PA_TYPE_TIMESTAMP_NS && !(b = ex__cast(p, b, T(PA_TYPE_TIMESTAMP), err)))
            return NULL;
        ta = a->type, tb = b->type;
    }
    bool iva = ta.id == PA_TYPE_INTERVAL, ivb = tb.id == PA_TYPE_INTERVAL;
    if (op == EX_ADD && iva && !ivb) {   /* interval + x = x + interval */
        ex_expr *t = a;
        a = b, b = t;
        ta = a->type, tb = b->type;
        iva = false, ivb = true;
    }
    if ((op == EX_ADD || op == EX_SUB) && ivb) {
        kn_dtarith add = op == EX_ADD ? KN_DT_TS_ADD_IV : KN_DT_TS_SUB_IV;
        if (is_stamp(ta))
            return dt_node(p, add, ta, a, b, err);
        if (ta.id == PA_TYPE_DATE)
            return dt_node(p, add, T(PA_TYPE_TIMESTAMP), a, b, err);
        if (ta.id == PA_TYPE_TIME)
            return dt_node(p, op == EX_ADD ? KN_DT_TIME_ADD_IV : KN_DT_TIME_SUB_IV, ta, a, b, err);
        if (iva)
            return dt_node(p, op == EX_ADD ? KN_DT_IV_ADD : KN_DT_IV_SUB, ta, a, b, err);
    }
    if (op == EX_SUB && is_stamp(ta) && (is_stamp(tb) || tb.id == PA_TYPE_DATE)) {
        pa_type t = ta.id == PA_TYPE_TIMESTAMPTZ || tb.id == PA_TYPE_TIMESTAMPTZ ? T(PA_TYPE_TIMESTAMPTZ) : ta;
        a = ex__cast(p, a, t, err);
        b = ex__cast(p, b, t, err);
        return a && b ? dt_node(p, KN_DT_TS_SUB_TS, T(PA_TYPE_INTERVAL), a, b, err) : NULL;
    }
    if (op == EX_SUB && ta.id == PA_TYPE_DATE && is_stamp(tb)) {
        if (!(a = ex__cast(p, a, tb, err)))
            return NULL;
        return dt_node(p, KN_DT_TS_SUB_TS, T(PA_TYPE_INTERVAL), a, b, err);
    }
    if (op == EX_MUL && (iva != ivb) && is_num(iva ? tb : ta)) {
        ex_expr *iv = iva ? a : b, *n = ex__cast(p, iva ? b : a, T(PA_TYPE_DOUBLE), err);
        return n ? dt_node(p, KN_DT_IV_MUL, T(PA_TYPE_INTERVAL), iv, n, err) : NULL;
    }
    if (op == EX_DIV && iva && is_num(tb)) {
        ex_expr *n = ex__cast(p, b, T(PA_TYPE_DOUBLE), err);
        return n ? dt_node(p, KN_DT_IV_DIV, T(PA_TYPE_INTERVAL), a, n, err) : NULL;
    }
    if ((ta.id == PA_TYPE_DATE || tb.id == PA_TYPE_DATE) && op != EX_MOD)
        return date_arith(p, op, a, b, err);
    type_error(err, "arithmetic", a->type, b->type);
    return NULL;
}

ex_expr *ex_expr_arith(ex_plan *p, ex_arith op, ex_expr *a, ex_expr *b, pa_err *err)
{
    if (!a || !b)
        return NULL;
    if ((unsigned)op > EX_MOD) {
        pa_error(err, PA_EINVAL, "bad arithmetic operator %d", (int)op);
        return NULL;
    }
    pa_type ta = a->type, tb = b->type;
    if (is_temporal(ta) || is_temporal(tb))
        return time_arith(p, op, a, b, err);
    if (!is_num(ta) || !is_num(tb)) {
        type_error(err, "arithmetic", ta, tb);
        return NULL;
    }
    pa_type res, oa, ob;
    int64_t check = 0;
    /* Division of integers is PostgreSQL's, truncated (7 / 2 = 3); with a
     * DECIMAL or DOUBLE operand it is DOUBLE (PostgreSQL's numeric division
     * is exact: see the README). */
    if (ta.id == PA_TYPE_DOUBLE || tb.id == PA_TYPE_DOUBLE) {
        res = oa = ob = T(PA_TYPE_DOUBLE);
    } else if (ta.id == PA_TYPE_REAL || tb.id == PA_TYPE_REAL) {   /* float4 arithmetic, rounded per operation */
        res = oa = ob = T(PA_TYPE_REAL);
    } else if (op == EX_DIV && (ta.id == PA_TYPE_DECIMAL || tb.id == PA_TYPE_DECIMAL)) {
        res = oa = ob = T(PA_TYPE_DOUBLE);
    } else if (ta.id != PA_TYPE_DECIMAL && tb.id != PA_TYPE_DECIMAL) {
        res = oa = ob = (ta.id == PA_TYPE_BIGINT || tb.id == PA_TYPE_BIGINT) ? T(PA_TYPE_BIGINT) : T(PA_TYPE_INTEGER);
    } else {
        pa_type x = as_dec(ta), y = as_dec(tb);
        if (op == EX_MUL) {
            int s = x.scale + y.scale, prec = x.precision + y.precision;
            if (s > 38) {
                pa_error(err, PA_EINVAL, "DECIMAL multiplication with scale %d (at most 38)", s);
                return NULL;
            }
            if (prec > 18 && x.precision <= 18 && y.precision <= 18)
                prec = 18, check = 1;
            else if (prec > 38)
                prec = 38, check = 1;
            if (prec < s)
                prec = s;
            res = DEC(prec, s);
            /* Operands keep their scale, in the result's width. */
            bool wide = prec > PA_DECIMAL64_MAX_PRECISION;
            oa = DEC(wide && x.precision <= 18 ? 38 : x.precision, x.scale);
            ob = DEC(wide && y.precision <= 18 ? 38 : y.precision, y.scale);
        } else {
            int s = x.scale > y.scale ? x.scale : y.scale;
            int ip = x.precision - x.scale > y.precision - y.scale ? x.precision - x.scale : y.precision - y.scale;
            int prec = ip + s + (op != EX_MOD);   /* |a % b| <= |a|: no carry digit */
            if (prec > 38)
                prec = 38, check = 1;
            res = oa = ob = DEC(prec, s);
        }
    }
    a = ex__cast(p, a, oa, err);
    b = ex__cast(p, b, ob, err);
    if (!a || !b)
        return NULL;
    ex_expr *e = node2(p, EX__ARITH, res, a, b, err);
    if (!e)
        return NULL;
    e->sub = op;
    e->imm = check;
    return finish_strict(p, e, err);
}

ex_expr *ex_expr_interval_key(ex_plan *p, ex_expr *a, pa_err *err)
{
    if (a && a->type.id != PA_TYPE_INTERVAL) {
        pa_error(err, PA_EINVAL, "interval key of %s", pa_type_name(a->type.id));
        return NULL;
    }
    return dt_node(p, KN_DT_IV_KEY, (pa_type){PA_TYPE_DECIMAL, 38, 0}, a, NULL, err);
}

ex_expr *ex_expr_neg(ex_plan *p, ex_expr *a, pa_err *err)
{
    if (!a)
        return NULL;
    if (a->type.id == PA_TYPE_INTERVAL)
        return dt_node(p, KN_DT_IV_NEG, a->type, a, NULL, err);
    if (!is_num(a->type)) {
        pa_error(err, PA_EINVAL, "negation of %s", pa_type_name(a->type.id));
        return NULL;
    }
    return finish_strict(p, node1(p, EX__NEG, a->type, a, err), err);
}

/* ----------------------------------------------------------- comparisons */

ex_expr *ex_expr_cmp(ex_plan *p, ex_cmp op, ex_expr *a, ex_expr *b, pa_err *err)
{
    if (!a || !b)
        return NULL;
    if ((unsigned)op > EX_GE) {
        pa_error(err, PA_EINVAL, "bad comparison operator %d", (int)op);
        return NULL;
    }
    if (unify(p, &a, &b, err) != PA_OK)
        return NULL;
    ex_expr *e = node2(p, EX__CMP, T(PA_TYPE_BOOLEAN), a, b, err);
    if (e)
        e->sub = op;
    return finish_strict(p, e, err);
}

static bool check_bool(const ex_expr *a, const char *what, pa_err *err)
{
    if (a->type.id == PA_TYPE_BOOLEAN)
        return true;
    pa_error(err, PA_EINVAL, "%s of a %s operand (BOOLEAN expected)", what, pa_type_name(a->type.id));
    return false;
}

static ex_expr *andor(ex_plan *p, ex__node k, ex_expr *a, ex_expr *b, pa_err *err)
{
    if (!a || !b)
        return NULL;
    const char *what = k == EX__AND ? "AND" : "OR";
    if (!check_bool(a, what, err) || !check_bool(b, what, err))
        return NULL;
    /* x AND TRUE = x, x AND FALSE = FALSE; x OR FALSE = x, x OR TRUE = TRUE. */
    const int64_t unit = k == EX__AND;
    for (int side = 0; side < 2; side++) {
        ex_expr *c = side ? b : a, *o = side ? a : b;
        if (c->kind == EX__CONST && !c->is_null)
            return c->v.i == unit ? o : c;
    }
    return ex__fold(p, node2(p, k, T(PA_TYPE_BOOLEAN), a, b, err), err);
}

ex_expr *ex_expr_and(ex_plan *p, ex_expr *a, ex_expr *b, pa_err *err) { return andor(p, EX__AND, a, b, err); }
ex_expr *ex_expr_or(ex_plan *p, ex_expr *a, ex_expr *b, pa_err *err) { return andor(p, EX__OR, a, b, err); }

ex_expr *ex_expr_not(ex_plan *p, ex_expr *a, pa_err *err)
{
    if (!a || !check_bool(a, "NOT", err))
        return NULL;
    return finish_strict(p, node1(p, EX__NOT, T(PA_TYPE_BOOLEAN), a, err), err);
}

ex_expr *ex_expr_is_null(ex_plan *p, ex_expr *a, bool negate, pa_err *err)
{
    if (!a)
        return NULL;
    ex_expr *e = node1(p, EX__IS_NULL, T(PA_TYPE_BOOLEAN), a, err);
    if (e)
        e->sub = negate;
    return ex__fold(p, e, err);
}

ex_expr *ex_expr_between(ex_plan *p, ex_expr *a, ex_expr *lo, ex_expr *hi, bool negate, pa_err *err)
{
    if (!a || !lo || !hi)
        return NULL;
    ex_expr *r = ex_expr_and(p, ex_expr_cmp(p, EX_GE, a, lo, err), ex_expr_cmp(p, EX_LE, a, hi, err), err);
    return negate ? ex_expr_not(p, r, err) : r;
}

/* ------------------------------------------------------------ CASE / IN */

ex_expr *ex_expr_case(ex_plan *p, ex_expr *const *whens, ex_expr *const *thens, int n, ex_expr *else_, pa_err *err)
{
    if (n < 1 || !whens || !thens) {
        pa_error(err, PA_EINVAL, "CASE needs at least one WHEN");
        return NULL;
    }
    pa_type t = {PA_TYPE__COUNT, 0, 0};
    for (int i = 0; i <= n; i++) {
        ex_expr *v = i < n ? thens[i] : else_;
        if (i < n && (!whens[i] || !thens[i]))
            return NULL;
        if (i < n && !check_bool(whens[i], "CASE WHEN", err))
            return NULL;
        if (!v || is_null_const(v))
            continue;
        if (t.id == PA_TYPE__COUNT)
            t = v->type;
        else if (common_type("CASE with results", t, v->type, &t, err) != PA_OK)
            return NULL;
    }
    if (t.id == PA_TYPE__COUNT)
        t = thens[0]->type;   /* every branch NULL */
    ex_expr *e = ex__node_new(p, EX__CASE, t, 2 * n + 1, err);
    if (!e)
        return NULL;
    for (int i = 0; i < n; i++) {
        e->args[2 * i] = whens[i];
        e->args[2 * i + 1] = ex__cast(p, thens[i], t, err);
        if (!e->args[2 * i + 1])
            return NULL;
    }
    e->args[2 * n] = else_ ? ex__cast(p, else_, t, err) : ex_expr_null(p, t, err);
    if (!e->args[2 * n])
        return NULL;
    /* Leading constant conditions decide at build time. */
    for (int i = 0; i < n; i++) {
        ex_expr *w = whens[i];
        if (w->kind != EX__CONST)
            break;
        if (!w->is_null && w->v.i)
            return e->args[2 * i + 1];
        if (i == n - 1)
            return e->args[2 * n];
    }
    return ex__fold(p, e, err);
}

ex_expr *ex_expr_in(ex_plan *p, ex_expr *a, ex_expr *const *list, int n, bool negate, pa_err *err)
{
    if (!a)
        return NULL;
    if (n < 1 || !list) {
        pa_error(err, PA_EINVAL, "IN needs a list of at least one constant");
        return NULL;
    }
    pa_type t = a->type;
    bool narrow = true;
    for (int i = 0; i < n; i++) {
        if (!list[i])
            return NULL;
        if (list[i]->kind != EX__CONST) {
            pa_error(err, PA_EINVAL, "IN list entry %d is not a constant", i);
            return NULL;
        }
        if (!is_null_const(list[i]) && !ex__type_eq(list[i]->type, a->type) && !exact_const(p, list[i], a->type))
            narrow = false;
    }
    if (!narrow)
        for (int i = 0; i < n; i++)
            if (!is_null_const(list[i]) && common_type("IN list with values", t, list[i]->type, &t, err) != PA_OK)
                return NULL;
    ex_expr *e = ex__node_new(p, EX__IN, T(PA_TYPE_BOOLEAN), n + 1, err);
    if (!e)
        return NULL;
    e->args[0] = ex__cast(p, a, t, err);
    for (int i = 0; i < n; i++)
        if (!(e->args[i + 1] = ex__cast(p, list[i], t, err)))
            return NULL;
    if (!e->args[0])
        return NULL;
    ex_expr *r = is_null_const(e->args[0]) ? ex_expr_null(p, T(PA_TYPE_BOOLEAN), err) : ex__fold(p, e, err);
    return negate ? ex_expr_not(p, r, err) : r;
}

/* --------------------------------------------------------------- strings */

ex_expr *ex_expr_like(ex_plan *p, ex_expr *a, const char *pattern, bool negate, pa_err *err)
{
    if (!a)
        return NULL;
    if (a->type.id != PA_TYPE_VARCHAR || !pattern) {
        pa_error(err, PA_EINVAL, "LIKE on a %s (VARCHAR and a pattern expected)", pa_type_name(a->type.id));
        return NULL;
    }
    ex_expr *e = node1(p, EX__LIKE, T(PA_TYPE_BOOLEAN), a, err);
    if (!e)
        return NULL;
    size_t n = strlen(pattern);
    char *s = ex_plan_alloc(p, n + 1);
    if (!s) {
        pa_error(err, PA_ENOMEM, "out of memory building LIKE");
        return NULL;
    }
    memcpy(s, pattern, n + 1);
    e->str = s;
    e->str_len = (int32_t)n;
    e->sub = negate;
    return finish_strict(p, e, err);
}

ex_expr *ex_expr_substring(ex_plan *p, ex_expr *s, ex_expr *from, ex_expr *len, pa_err *err)
{
    if (!s || !from)
        return NULL;
    if (s->type.id != PA_TYPE_VARCHAR || (from->type.id != PA_TYPE_INTEGER && from->type.id != PA_TYPE_BIGINT) ||
        (len && len->type.id != PA_TYPE_INTEGER && len->type.id != PA_TYPE_BIGINT)) {
        pa_error(err, PA_EINVAL, "SUBSTRING takes a VARCHAR and INTEGER or BIGINT positions");
        return NULL;
    }
    ex_expr *e = ex__node_new(p, EX__SUBSTR, T(PA_TYPE_VARCHAR), len ? 3 : 2, err);
    if (!e)
        return NULL;
    e->args[0] = s;
    e->args[1] = ex__cast(p, from, T(PA_TYPE_BIGINT), err);
    if (len)
        e->args[2] = ex__cast(p, len, T(PA_TYPE_BIGINT), err);
    if (!e->args[1] || (len && !e->args[2]))
        return NULL;
    return finish_strict(p, e, err);
}

/* ------------------------------------------------------------------ math */

_Static_assert((int)EX_SQRT == KN_MATH_SQRT && (int)EX_POWER == KN_MATH_POWER && (int)EX_SIGN == KN_MATH_SIGN &&
                   (int)EX_AVG_DIV == KN_MATH_AVG,
               "ex_math and kn_math agree");

static bool is_number(pa_type t)
{
    return t.id == PA_TYPE_INTEGER || t.id == PA_TYPE_BIGINT || t.id == PA_TYPE_DECIMAL || pa_type_is_float(t.id);
}

static ex_expr *math_node(ex_plan *p, ex_math fn, pa_type t, ex_expr *a, ex_expr *b, int32_t imm, int32_t imm2,
                          pa_err *err)
{
    ex_expr *e = b ? node2(p, EX__MATH, t, a, b, err) : node1(p, EX__MATH, t, a, err);
    if (!e)
        return NULL;
    e->sub = fn;
    e->imm = (int64_t)(uint32_t)imm | (int64_t)((uint64_t)(uint32_t)imm2 << 32);
    return finish_strict(p, e, err);
}

ex_expr *ex_expr_math(ex_plan *p, ex_math fn, ex_expr *a, ex_expr *b, int digits, bool has_digits, pa_err *err)
{
    static const char *const names[] = {"sqrt", "cbrt", "exp", "ln", "log10", "log", "power",
                                        "floor", "ceil", "trunc", "round", "sign", "avg"};
    if (!a || ((fn == EX_LOG || fn == EX_POWER || fn == EX_AVG_DIV) && !b))
        return NULL;
    if ((unsigned)fn > EX_AVG_DIV) {
        pa_error(err, PA_EINVAL, "math function %d", (int)fn);
        return NULL;
    }
    if (!is_number(a->type) || (b && !is_number(b->type))) {
        pa_error(err, PA_EINVAL, "%s needs a number, not %s", names[fn],
                 pa_type_name(!is_number(a->type) ? a->type.id : b->type.id));
        return NULL;
    }
    pa_type dbl = T(PA_TYPE_DOUBLE);
    /* REAL arguments are DOUBLE ones: PostgreSQL's math functions are
     * float8's (round(real) is round(float8)). */
    if (a->type.id == PA_TYPE_REAL && !(a = ex__cast(p, a, dbl, err)))
        return NULL;
    if (b && b->type.id == PA_TYPE_REAL && !(b = ex__cast(p, b, dbl, err)))
        return NULL;
    if (fn == EX_AVG_DIV) {   /* both exact, in 128 bits: the kernel divides as AVG */
        if (a->type.id == PA_TYPE_DOUBLE || b->type.id == PA_TYPE_DECIMAL || b->type.id == PA_TYPE_DOUBLE) {
            pa_error(err, PA_EINVAL, "avg: an exact sum over a count, not %s over %s", pa_type_name(a->type.id),
                     pa_type_name(b->type.id));
            return NULL;
        }
        pa_type sum = {.id = PA_TYPE_DECIMAL, .precision = 38, .scale = a->type.id == PA_TYPE_DECIMAL ? a->type.scale : 0};
        pa_type cnt = {.id = PA_TYPE_DECIMAL, .precision = 38, .scale = 0};
        a = ex__cast(p, a, sum, err);
        b = a ? ex__cast(p, b, cnt, err) : NULL;
        return a && b ? math_node(p, fn, dbl, a, b, 0, 0, err) : NULL;
    }
    if (fn <= EX_POWER) {
        a = ex__cast(p, a, dbl, err);
        if (b)
            b = ex__cast(p, b, dbl, err);
        return a && (!b || fn <= EX_LN || b) ? math_node(p, fn, dbl, a, b, 0, 0, err) : NULL;
    }
    if (fn == EX_SIGN)
        return math_node(p, fn, a->type.id == PA_TYPE_DOUBLE ? dbl : T(PA_TYPE_INTEGER), a, NULL, 0, 0, err);
    if (a->type.id == PA_TYPE_DOUBLE)
        return math_node(p, fn, dbl, a, NULL, (fn == EX_ROUND || fn == EX_TRUNC) && has_digits ? digits : 0,
                         (fn == EX_ROUND || fn == EX_TRUNC) && has_digits, err);
    int d = (fn == EX_ROUND || fn == EX_TRUNC) && has_digits ? digits : 0;
    if (a->type.id != PA_TYPE_DECIMAL) {   /* INTEGER, BIGINT: whole already */
        if (d >= 0)
            return a;
        pa_type t = {.id = PA_TYPE_DECIMAL, .precision = a->type.id == PA_TYPE_INTEGER ? 10 : 19, .scale = 0};
        if (!(a = ex__cast(p, a, t, err)))
            return NULL;
    }
    int prec = a->type.precision, scale = a->type.scale;
    if (d >= scale)
        return a;
    pa_type t = {.id = PA_TYPE_DECIMAL, .precision = (uint8_t)(d < 0 && prec < 38 ? prec + 1 : prec),
                 .scale = (uint8_t)(d > 0 ? d : 0)};
    return math_node(p, fn, t, a, NULL, scale - d, d < 0 ? -d : 0, err);
}

/* --------------------------------------------------------------- strings */

_Static_assert((int)EX_SPLIT_PART == KN_STR_SPLIT_PART && (int)EX_LEFT == KN_STR_LEFT, "ex_strfn and kn_strfn agree");

ex_expr *ex_expr_strfn(ex_plan *p, ex_strfn fn, ex_expr *a, ex_expr *b, ex_expr *c, pa_err *err)
{
    static const char *const names[] = {"length", "octet_length", "strpos", "starts_with", "left",
                                        "right",  "btrim",        "ltrim",  "rtrim",       "split_part"};
    if (!a || (unsigned)fn > EX_SPLIT_PART)
        return NULL;
    bool trim = fn == EX_BTRIM || fn == EX_LTRIM || fn == EX_RTRIM;
    if (trim && !b && !(b = ex_expr_varchar(p, " ", err)))
        return NULL;
    bool needs_b = fn != EX_LENGTH && fn != EX_OCTET_LENGTH, needs_c = fn == EX_SPLIT_PART;
    if ((needs_b && !b) || (needs_c && !c))
        return NULL;
    bool b_count = fn == EX_LEFT || fn == EX_RIGHT;
    /* A BYTEA's length is its bytes, as PostgreSQL's length(bytea). */
    if (a->type.id == PA_TYPE_BYTEA && (fn == EX_LENGTH || fn == EX_OCTET_LENGTH))
        fn = EX_OCTET_LENGTH;
    const char *bad = a->type.id != PA_TYPE_VARCHAR && !(a->type.id == PA_TYPE_BYTEA && fn == EX_OCTET_LENGTH)
                          ? pa_type_name(a->type.id)
                          : NULL;
    if (!bad && needs_b && !b_count && b->type.id != PA_TYPE_VARCHAR)
        bad = pa_type_name(b->type.id);
    if (!bad && needs_b && b_count && b->type.id != PA_TYPE_INTEGER && b->type.id != PA_TYPE_BIGINT)
        bad = pa_type_name(b->type.id);
    if (!bad && needs_c && c->type.id != PA_TYPE_INTEGER && c->type.id != PA_TYPE_BIGINT)
        bad = pa_type_name(c->type.id);
    if (bad) {
        pa_error(err, PA_EINVAL, "%s: an argument of type %s (strings and integer counts expected)", names[fn], bad);
        return NULL;
    }
    if (b_count && !(b = ex__cast(p, b, T(PA_TYPE_BIGINT), err)))
        return NULL;
    if (needs_c && !(c = ex__cast(p, c, T(PA_TYPE_BIGINT), err)))
        return NULL;
    pa_type t = fn == EX_LENGTH || fn == EX_OCTET_LENGTH || fn == EX_STRPOS ? T(PA_TYPE_BIGINT)
                : fn == EX_STARTS_WITH                                      ? T(PA_TYPE_BOOLEAN)
                                                                            : T(PA_TYPE_VARCHAR);
    int n = needs_c ? 3 : needs_b ? 2 : 1;
    ex_expr *e = ex__node_new(p, EX__STRFN, t, n, err);
    if (!e)
        return NULL;
    e->sub = fn;
    e->args[0] = a;
    if (n > 1)
        e->args[1] = b;
    if (n > 2)
        e->args[2] = c;
    return finish_strict(p, e, err);
}

_Static_assert((int)EX_REVERSE == KN_TEXT_REVERSE && (int)EX_CONCAT_WS == KN_TEXT_CONCAT_WS &&
                   (int)EX_MD5 == KN_TEXT_MD5 && (int)EX_TRANSLATE == KN_TEXT_TRANSLATE &&
                   (int)EX_REGEXP_REPLACE == KN_TEXT_REGEXP_REPLACE && (int)EX_BYTEA_IN == KN_TEXT_BYTEA_IN &&
                   (int)EX_UUID_OUT == KN_TEXT_UUID_OUT,
               "ex_textfn and kn_textfn agree");

/* Counts of lpad, rpad and repeat: PostgreSQL errs past 1 GB of result; a
 * count is capped well below so that a chunk's bound stays allocatable. */
#define TEXT_MAX_COUNT 10000000

ex_expr *ex_expr_text(ex_plan *p, ex_textfn fn, ex_expr *a, ex_expr *b, ex_expr *c, pa_err *err)
{
    static const char *const names[] = {"upper",  "lower", "initcap", "||",      "concat_ws", "replace",
                                        "lpad",   "rpad",  "repeat",  "reverse", "translate", "md5"};
    if (!a || (unsigned)fn > EX_MD5)
        return NULL;
    const char *name = names[fn];
    bool pad = fn == EX_LPAD || fn == EX_RPAD;
    if (pad && !c && !(c = ex_expr_varchar(p, " ", err)))
        return NULL;
    int n = fn == EX_CONCAT || fn == EX_REPEAT                                         ? 2
            : fn == EX_CONCAT_WS || fn == EX_REPLACE || fn == EX_TRANSLATE || pad ? 3
                                                                                  : 1;
    if ((n > 1 && !b) || (n > 2 && !c))
        return NULL;
    bool b_count = pad || fn == EX_REPEAT;
    /* BYTEA || BYTEA joins the bytes (PostgreSQL's byteacat). */
    pa_type rt = fn == EX_CONCAT && a->type.id == PA_TYPE_BYTEA && b->type.id == PA_TYPE_BYTEA ? T(PA_TYPE_BYTEA)
                                                                                               : T(PA_TYPE_VARCHAR);
    const char *bad = a->type.id != rt.id ? pa_type_name(a->type.id) : NULL;
    if (!bad && n > 1 && !b_count && b->type.id != rt.id)
        bad = pa_type_name(b->type.id);
    if (!bad && b_count && b->type.id != PA_TYPE_INTEGER && b->type.id != PA_TYPE_BIGINT)
        bad = pa_type_name(b->type.id);
    if (!bad && n > 2 && c->type.id != PA_TYPE_VARCHAR)
        bad = pa_type_name(c->type.id);
    if (bad) {
        pa_error(err, PA_EINVAL, "%s: an argument of type %s (strings%s expected)", name, bad,
                 b_count ? " and an integer count" : "");
        return NULL;
    }
    if (b_count && !(b = ex__cast(p, b, T(PA_TYPE_BIGINT), err)))
        return NULL;
    if (fn == EX_REPLACE || fn == EX_TRANSLATE || b_count) {
        /* The size of the result rests on these: constants only. */
        for (int k = 1; k < n; k++) {
            const ex_expr *x = k == 1 ? b : c;
            if (x->kind != EX__CONST) {
                pa_error(err, PA_EUNSUPPORTED, "%s: the %s must be a constant", name,
                         fn == EX_REPLACE     ? (k == 1 ? "text to replace" : "replacement")
                         : fn == EX_TRANSLATE ? (k == 1 ? "characters to replace" : "replacement characters")
                         : k == 1          ? (fn == EX_REPEAT ? "count" : "length")
                                           : "fill text");
                return NULL;
            }
        }
        if (b_count && !b->is_null && b->v.i > TEXT_MAX_COUNT) {
            pa_error(err, PA_EINVAL, "%s: requested length too large (%lld; at most %d)", name, (long long)b->v.i,
                     TEXT_MAX_COUNT);
            return NULL;
        }
    }
    ex_expr *e = ex__node_new(p, EX__TEXT, rt, n, err);
    if (!e)
        return NULL;
    e->sub = fn;
    e->args[0] = a;
    if (n > 1)
        e->args[1] = b;
    if (n > 2)
        e->args[2] = c;
    if (fn != EX_CONCAT_WS)
        return finish_strict(p, e, err);
    if (is_null_const(a) && is_null_const(c))
        return ex_expr_null(p, e->type, err);
    return ex__fold(p, e, err);
}

/* ------------------------------------------------- regular expressions */

/* The checks both regexp functions share: a is VARCHAR; the others are
 * VARCHAR constants (repl and flags may be absent). *is_null when one of
 * them is NULL (the result is then NULL). */
static int regexp_args(const char *name, const ex_expr *a, ex_expr *const *k, const char *const *what, int n,
                       bool *is_null, pa_err *err)
{
    *is_null = false;
    if (a->type.id != PA_TYPE_VARCHAR)
        return pa_error(err, PA_EINVAL, "%s: an argument of type %s (a string expected)", name,
                        pa_type_name(a->type.id));
    for (int i = 0; i < n; i++) {
        if (!k[i])
            continue;
        if (k[i]->kind != EX__CONST)
            return pa_error(err, PA_EUNSUPPORTED, "%s: the %s must be a constant", name, what[i]);
        if (k[i]->type.id != PA_TYPE_VARCHAR && !k[i]->is_null)
            return pa_error(err, PA_EINVAL, "%s: the %s is of type %s (a string expected)", name, what[i],
                            pa_type_name(k[i]->type.id));
        *is_null |= k[i]->is_null;
    }
    return PA_OK;
}

/* kn_regex_compile's flags from the flags text (NULL: none). */
static int regexp_flags(const char *name, const ex_expr *flags, bool global_ok, int *out, pa_err *err)
{
    *out = 0;
    for (int32_t i = 0; flags && i < flags->str_len; i++) {
        char f = flags->str[i];
        if (f == 'i')
            *out |= KN_RE_ICASE;
        else if (f == 'c')
            *out &= ~KN_RE_ICASE;
        else if (f == 'g' && global_ok)
            *out |= KN_RE_GLOBAL;
        else
            return pa_error(err, PA_EINVAL, "%s: flag '%c' is not supported (%s)", name, f,
                            global_ok ? "g, i and c are" : "i and c are");
    }
    return PA_OK;
}

/* The pattern compiled with flags, as a VARCHAR constant of program bytes. */
static ex_expr *regexp_program(ex_plan *p, const char *name, const ex_expr *pattern, int flags, pa_err *err)
{
    uint8_t prog[KN_RE_MAX_BYTES];
    int64_t len;
    pa_err why;   /* the compiler's message, to be prefixed with the function's name */
    pa_err_init(&why);
    int rc = kn_regex_compile(pattern->str, pattern->str_len, flags, prog, &len, &why);
    if (rc != PA_OK)
        pa_error(err, rc, "%s: %s", name, why.msg);
    pa_err_close(&why);
    if (rc != PA_OK)
        return NULL;
    return ex__const_raw(p, T(PA_TYPE_VARCHAR), NULL, (const char *)prog, (int32_t)len, false, err);
}

ex_expr *ex_expr_regexp_like(ex_plan *p, ex_expr *a, ex_expr *pattern, ex_expr *flags, bool negate, pa_err *err)
{
    static const char *const what[] = {"pattern", "flags"};
    ex_expr *k[2] = {pattern, flags};
    bool is_null;
    int f;
    if (!a || !pattern)
        return NULL;
    if (regexp_args("regexp_like", a, k, what, 2, &is_null, err) != PA_OK)
        return NULL;
    if (is_null || is_null_const(a))
        return ex_expr_null(p, T(PA_TYPE_BOOLEAN), err);
    ex_expr *prog = regexp_flags("regexp_like", flags, false, &f, err) == PA_OK
                        ? regexp_program(p, "regexp_like", pattern, f, err)
                        : NULL;
    ex_expr *e = prog ? node1(p, EX__LIKE, T(PA_TYPE_BOOLEAN), a, err) : NULL;
    if (!e)
        return NULL;
    e->str = prog->str;   /* a LIKE node keeps its pattern in str, here the program */
    e->str_len = prog->str_len;
    e->sub = 2 | (negate ? 1 : 0);
    return finish_strict(p, e, err);
}

ex_expr *ex_expr_regexp_replace(ex_plan *p, ex_expr *a, ex_expr *pattern, ex_expr *repl, ex_expr *flags,
                                pa_err *err)
{
    static const char *const what[] = {"pattern", "replacement", "flags"};
    ex_expr *k[3] = {pattern, repl, flags};
    bool is_null;
    int f;
    if (!a || !pattern || !repl)
        return NULL;
    if (regexp_args("regexp_replace", a, k, what, 3, &is_null, err) != PA_OK)
        return NULL;
    if (is_null || is_null_const(a))
        return ex_expr_null(p, T(PA_TYPE_VARCHAR), err);
    ex_expr *prog = regexp_flags("regexp_replace", flags, true, &f, err) == PA_OK
                        ? regexp_program(p, "regexp_replace", pattern, f, err)
                        : NULL;
    ex_expr *e = prog ? ex__node_new(p, EX__TEXT, T(PA_TYPE_VARCHAR), 3, err) : NULL;
    if (!e)
        return NULL;
    e->sub = EX_REGEXP_REPLACE;
    e->args[0] = a, e->args[1] = prog, e->args[2] = repl;
    return finish_strict(p, e, err);
}

ex_expr *ex_expr_concat(ex_plan *p, ex_expr *sep, ex_expr *const *args, int n, pa_err *err)
{
    if (n < 1 || !args)
        return NULL;
    bool ws = sep != NULL;
    if (!sep && !(sep = ex_expr_varchar(p, "", err)))
        return NULL;
    if (sep->type.id != PA_TYPE_VARCHAR) {
        pa_error(err, PA_EINVAL, "concat_ws: a separator of type %s (a string expected)", pa_type_name(sep->type.id));
        return NULL;
    }
    if (ws && is_null_const(sep))
        return ex_expr_null(p, T(PA_TYPE_VARCHAR), err);
    for (int i = 0; i < n; i++)
        if (args[i] && args[i]->type.id != PA_TYPE_VARCHAR && !is_null_const(args[i])) {
            pa_error(err, PA_EINVAL, "%s: an argument of type %s (strings expected)", ws ? "concat_ws" : "concat",
                     pa_type_name(args[i]->type.id));
            return NULL;
        }
    /* acc = x1, then CONCAT_WS(acc, sep, x) for each next x: NULL until a
     * value comes, each NULL x skipped. */
    ex_expr *acc = args[0];
    if (acc && is_null_const(acc))
        acc = ex_expr_null(p, T(PA_TYPE_VARCHAR), err);
    for (int i = 1; i < n && acc; i++) {
        ex_expr *x = args[i];
        if (x && is_null_const(x))
            x = ex_expr_null(p, T(PA_TYPE_VARCHAR), err);
        acc = ex_expr_text(p, EX_CONCAT_WS, acc, sep, x, err);
    }
    if (!acc)
        return NULL;
    /* All NULL: '' (NULL with a NULL separator, for concat_ws). */
    ex_expr *when[2], *then[2];
    int k = 0;
    if (ws && sep->kind != EX__CONST) {
        when[k] = ex_expr_is_null(p, sep, false, err);
        then[k++] = ex_expr_null(p, T(PA_TYPE_VARCHAR), err);
    }
    when[k] = ex_expr_is_null(p, acc, false, err);
    then[k++] = ex_expr_varchar(p, "", err);
    for (int i = 0; i < k; i++)
        if (!when[i] || !then[i])
            return NULL;
    return ex_expr_case(p, when, then, k, acc, err);
}

/* ----------------------------------------------------------------- dates */

static const char *field_name(ex_field f)
{
    static const char *const names[] = {"year",   "month",   "day",     "quarter",    "dow",
                                        "isodow", "doy",     "week",    "isoyear",    "epoch",
                                        "decade", "century", "millennium", "hour",    "minute",
                                        "second", "milliseconds", "microseconds"};
    return (unsigned)f < sizeof names / sizeof names[0] ? names[f] : "?";
}

static bool sub_day(ex_field f) { return f >= EX_HOUR && f <= EX_MICROSECONDS; }

ex_expr *ex_expr_extract(ex_plan *p, ex_field field, ex_expr *date, pa_err *err)
{
    if (!date)
        return NULL;
    pa_type_id t = date->type.id;
    if ((unsigned)field > EX_MICROSECONDS || !is_temporal(date->type)) {
        pa_error(err, PA_EINVAL, "EXTRACT from a %s (a DATE, TIMESTAMP, TIME or INTERVAL expected)", pa_type_name(t));
        return NULL;
    }
    if (t == PA_TYPE_TIMESTAMP_NS) {   /* its fields are those of the microsecond timestamp */
        if (!(date = ex__cast(p, date, T(PA_TYPE_TIMESTAMP), err)))
            return NULL;
        t = PA_TYPE_TIMESTAMP;
    }
    bool ok = t == PA_TYPE_TIME ? sub_day(field) || field == EX_EPOCH
            : t == PA_TYPE_INTERVAL ? field != EX_DOW && field != EX_ISODOW && field != EX_DOY && field != EX_WEEK &&
                                          field != EX_ISOYEAR
            : t == PA_TYPE_DATE ? !sub_day(field)
                                : true;
    if (!ok) {
        pa_error(err, PA_EINVAL, "unit \"%s\" not supported for type %s", field_name(field), pa_type_name(t));
        return NULL;
    }
    pa_type rt = field == EX_EPOCH && t != PA_TYPE_DATE ? T(PA_TYPE_DOUBLE) : T(PA_TYPE_BIGINT);
    ex_expr *e = node1(p, EX__EXTRACT, rt, date, err);
    if (e)
        e->sub = field;
    return finish_strict(p, e, err);
}

_Static_assert((int)EX_MILLENNIUM == KN_FIELD_MILLENNIUM && (int)EX_WEEK == KN_FIELD_WEEK &&
                   (int)EX_MICROSECONDS == KN_FIELD_MICROSECONDS && (int)EX_HOUR == KN_FIELD_HOUR,
               "ex_field and kn_date_field agree");

/* date_trunc of a DATE gives a TIMESTAMP (PostgreSQL's and DuckDB's type):
 * the date truncated, at midnight. Of a TIMESTAMP or TIMESTAMPTZ its own
 * type. */
ex_expr *ex_expr_date_trunc(ex_plan *p, ex_field field, ex_expr *date, pa_err *err)
{
    if (!date)
        return NULL;
    bool ok = field == EX_YEAR || field == EX_QUARTER || field == EX_MONTH || field == EX_WEEK || field == EX_DAY ||
              field == EX_DECADE || field == EX_CENTURY || field == EX_MILLENNIUM || sub_day(field);
    pa_type_id t = date->type.id;
    bool typed = t == PA_TYPE_DATE || t == PA_TYPE_TIMESTAMP || t == PA_TYPE_TIMESTAMPTZ || t == PA_TYPE_TIMESTAMP_NS;
    if (!typed || !ok) {
        pa_error(err, PA_EINVAL,
                 ok ? "date_trunc of a %s (DATE or TIMESTAMP expected)" : "date_trunc to an unsupported field (%s)",
                 ok ? pa_type_name(t) : "dow, doy, epoch and the like are no units");
        return NULL;
    }
    if (t == PA_TYPE_TIMESTAMP_NS || (t == PA_TYPE_DATE && sub_day(field))) {
        if (!(date = ex__cast(p, date, T(PA_TYPE_TIMESTAMP), err)))
            return NULL;
        t = PA_TYPE_TIMESTAMP;
    }
    ex_expr *e = node1(p, EX__DATE_TRUNC, T(t), date, err);
    if (e)
        e->sub = field;
    e = finish_strict(p, e, err);
    return t == PA_TYPE_DATE ? ex__cast(p, e, T(PA_TYPE_TIMESTAMP), err) : e;
}

ex_expr *ex_expr_age(ex_plan *p, ex_expr *a, ex_expr *b, pa_err *err)
{
    if (!a || !b)
        return NULL;
    ex_expr *v[2] = {a, b};
    pa_type t = T(PA_TYPE_TIMESTAMP);
    for (int i = 0; i < 2; i++) {
        if (!is_instant(v[i]->type) && v[i]->type.id != PA_TYPE_VARCHAR) {
            pa_error(err, PA_EINVAL, "age of a %s (TIMESTAMP or DATE expected)", pa_type_name(v[i]->type.id));
            return NULL;
        }
        if (v[i]->type.id == PA_TYPE_TIMESTAMPTZ)
            t = v[i]->type;
    }
    a = ex__cast(p, a, t, err);
    b = ex__cast(p, b, t, err);
    return a && b ? dt_node(p, KN_DT_AGE, T(PA_TYPE_INTERVAL), a, b, err) : NULL;
}

ex_expr *ex_expr_make_date(ex_plan *p, ex_expr *y, ex_expr *m, ex_expr *d, pa_err *err)
{
    if (!y || !m || !d)
        return NULL;
    ex_expr *a[3] = {y, m, d};
    for (int i = 0; i < 3; i++) {
        if (a[i]->type.id != PA_TYPE_INTEGER && a[i]->type.id != PA_TYPE_BIGINT) {
            pa_error(err, PA_EINVAL, "make_date needs integers, not %s", pa_type_name(a[i]->type.id));
            return NULL;
        }
        if (!(a[i] = ex__cast(p, a[i], T(PA_TYPE_BIGINT), err)))
            return NULL;
    }
    ex_expr *e = ex__node_new(p, EX__MAKE_DATE, T(PA_TYPE_DATE), 3, err);
    if (!e)
        return NULL;
    for (int i = 0; i < 3; i++)
        e->args[i] = a[i];
    return finish_strict(p, e, err);
}

ex_expr *ex_expr_date_add(ex_plan *p, ex_expr *date, int64_t n, ex_unit unit, pa_err *err)
{
    if (!date)
        return NULL;
    if (date->type.id != PA_TYPE_DATE || (unsigned)unit > EX_YEARS) {
        pa_error(err, PA_EINVAL, "date arithmetic on a %s (DATE expected)", pa_type_name(date->type.id));
        return NULL;
    }
    int64_t months = unit == EX_YEARS ? n * 12 : n;
    if (n < -100000000 || n > 100000000 || (unit != EX_DAYS && (months < INT32_MIN || months > INT32_MAX))) {
        pa_error(err, PA_EOVERFLOW, "interval of %lld %s out of range", (long long)n,
                 unit == EX_DAYS ? "days" : unit == EX_MONTHS ? "months" : "years");
        return NULL;
    }
    if (unit == EX_DAYS)
        return ex_expr_arith(p, EX_ADD, date, ex_expr_int(p, (int32_t)n, err), err);
    ex_expr *e = node1(p, EX__ADD_MONTHS, T(PA_TYPE_DATE), date, err);
    if (e)
        e->imm = months;
    return finish_strict(p, e, err);
}
