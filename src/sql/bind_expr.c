/*
 * bind_expr.c - libpg_query expression nodes -> typed sq_expr.
 *
 * Names resolve in the FROM scope, then in enclosing queries' scopes (a
 * correlated reference). Aggregates become SQ_E_AGG nodes that the SELECT
 * binder replaces by the aggregate's output column; subqueries become
 * SQ_E_SUBQ placeholders. Every construct the engine cannot run is an
 * error naming it, at its position.
 */
#include "sql/sql_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>


const char *sq_node_name(pgn *n)
{
    return n && n->node_case == PG_QUERY__NODE__NODE_STRING ? n->string->sval : NULL;
}

bool sq_is_aggregate_name(const char *fn)
{
    static const char *const names[] = {"sum",        "count",       "avg",      "min",     "max",
                                        "bool_and",   "bool_or",     "every",    "stddev",  "stddev_samp",
                                        "stddev_pop", "variance",    "var_samp", "var_pop"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(fn, names[i]))
            return true;
    return false;
}

static int loc_of(pgn *n)
{
    if (!n)
        return -1;
    switch (n->node_case) {
    case PG_QUERY__NODE__NODE_COLUMN_REF: return n->column_ref->location;
    case PG_QUERY__NODE__NODE_A_CONST: return n->a_const->location;
    case PG_QUERY__NODE__NODE_A_EXPR: return n->a_expr->location;
    case PG_QUERY__NODE__NODE_FUNC_CALL: return n->func_call->location;
    case PG_QUERY__NODE__NODE_TYPE_CAST:
        return n->type_cast->location >= 0 ? n->type_cast->location : loc_of(n->type_cast->arg);
    case PG_QUERY__NODE__NODE_BOOL_EXPR: return n->bool_expr->location;
    case PG_QUERY__NODE__NODE_SUB_LINK: return n->sub_link->location;
    case PG_QUERY__NODE__NODE_NULL_TEST: return n->null_test->location;
    case PG_QUERY__NODE__NODE_CASE_EXPR: return n->case_expr->location;
    case PG_QUERY__NODE__NODE_COALESCE_EXPR: return n->coalesce_expr->location;
    case PG_QUERY__NODE__NODE_MIN_MAX_EXPR: return n->min_max_expr->location;
    case PG_QUERY__NODE__NODE_GROUPING_FUNC: return n->grouping_func->location;
    default: return -1;
    }
}

/* ---------------------------------------------------------------- names */
static int resolve(sq_ctx *c, sq_scope *sc, const char *qual, const char *name, int loc, int *col)
{
    /* The domain scopes right outside sc are sc's own level (D is a
     * relation of its FROM); any other scope is an outer one. */
    bool local = true;
    for (sq_scope *s = sc; s; s = s->outer) {
        local = local && (s == sc || s->domain);
        int found = -1, count = 0, fcol = -1;
        for (int i = 0; i < s->n; i++) {
            sq_binding *b = &s->b[i];
            if (strcmp(b->name, name) != 0 || (qual && (!b->qual || strcmp(b->qual, qual) != 0)))
                continue;
            /* Unqualified, a USING column of a RIGHT/FULL join reads its merged value. */
            int bcol = !qual && b->merged >= 0 ? b->merged : b->col;
            if (found >= 0 && fcol == bcol)
                continue;
            if (b->hidden && found >= 0)
                continue;
            if (found >= 0 && s->b[found].hidden) {
                found = i;
                fcol = bcol;
                continue;
            }
            found = i;
            fcol = bcol;
            count++;
        }
        if (count > 1)
            return sq_fail(c, loc, PA_EINVAL, "column reference \"%s\" is ambiguous", name);
        if (found >= 0) {
            if (!local)
                sc->used_outer = true;
            /* A domain column read; where it copies the outer level's
             * domain column, that one is read too. */
            int used = fcol;
            for (sq_subq *q = s->domain; q;) {
                int i = 0;
                while (i < q->n_dom && q->dom_inner[i] != used)
                    i++;
                if (i == q->n_dom)
                    break;
                q->dom_used[i] = true;
                used = q->dom_outer[i];
                q = q->dom_up;
            }
            *col = fcol;
            return PA_OK;
        }
    }
    for (int i = 0; c->off_limits && i < c->off_limits->n; i++) {
        const sq_binding *b = &c->off_limits->b[i];
        if (!strcmp(b->name, name) && (!qual || (b->qual && !strcmp(b->qual, qual))))
            return sq_fail(c, loc, PA_EINVAL,
                           "invalid reference to FROM-clause entry for table \"%s\": a LATERAL subquery in a JOIN "
                           "reads only the join's left side",
                           b->qual ? b->qual : name);
    }
    sq_suggest sg;
    sq_suggest_init(&sg, name);
    for (sq_scope *s = sc; s; s = s->outer)
        for (int i = 0; i < s->n; i++)
            if (!qual || (s->b[i].qual && !strcmp(s->b[i].qual, qual)))
                sq_suggest_offer(&sg, s->b[i].name);
    if (qual)
        return sg.best ? sq_fail(c, loc, PA_ENOTFOUND, "column \"%s.%s\" does not exist; did you mean \"%s.%s\"?",
                                 qual, name, qual, sg.best)
                       : sq_fail(c, loc, PA_ENOTFOUND, "column \"%s.%s\" does not exist", qual, name);
    return sg.best ? sq_fail(c, loc, PA_ENOTFOUND, "column \"%s\" does not exist; did you mean \"%s\"?", name, sg.best)
                   : sq_fail(c, loc, PA_ENOTFOUND, "column \"%s\" does not exist", name);
}

static sq_expr *bind_colref(sq_ctx *c, PgQuery__ColumnRef *r, sq_scope *sc)
{
    const char *f[3] = {0};
    if (r->n_fields > 2 || r->n_fields == 0) {
        sq_fail(c, r->location, PA_EUNSUPPORTED, "column reference with %zu parts", r->n_fields);
        return NULL;
    }
    for (size_t i = 0; i < r->n_fields; i++) {
        if (r->fields[i]->node_case == PG_QUERY__NODE__NODE_A_STAR) {
            sq_fail(c, r->location, PA_EINVAL, "'*' is only allowed in the select list and COUNT(*)");
            return NULL;
        }
        f[i] = sq_node_name(r->fields[i]);
    }
    int col = -1;
    const char *qual = r->n_fields == 2 ? f[0] : NULL, *name = r->n_fields == 2 ? f[1] : f[0];
    if (resolve(c, sc, qual, name, r->location, &col) != PA_OK)
        return NULL;
    if (c->cols[col].unsupported) {
        sq_fail(c, r->location, PA_EUNSUPPORTED, "%s", c->cols[col].unsupported);
        return NULL;
    }
    return sq_col_ref(c, col, r->location);
}

/* --------------------------------------------------------------- constants */
static sq_expr *null_const(sq_ctx *c, pa_type t, int loc)
{
    sq_expr *e = sq_const(c, ex_expr_null(c->plan, t, c->err), loc);
    if (e)
        e->flag = true; /* an untyped NULL literal: takes its neighbour's type */
    return e;
}

static bool is_untyped_null(const sq_expr *e) { return e && e->kind == SQ_E_CONST && e->flag; }

/* Give untyped NULL literals among v the type of the first typed one. */
static void type_nulls(sq_ctx *c, sq_expr **v, int n)
{
    pa_type t = {PA_TYPE__COUNT, 0, 0};
    for (int i = 0; i < n; i++)
        if (v[i] && !is_untyped_null(v[i])) {
            t = v[i]->type;
            break;
        }
    if (t.id == PA_TYPE__COUNT)
        return;
    for (int i = 0; i < n; i++)
        if (is_untyped_null(v[i]))
            v[i] = null_const(c, t, v[i]->loc);
}

static sq_expr *bind_const(sq_ctx *c, PgQuery__AConst *k)
{
    int loc = k->location;
    if (k->isnull)
        return null_const(c, (pa_type){PA_TYPE_INTEGER, 0, 0}, loc);
    switch (k->val_case) {
    case PG_QUERY__A__CONST__VAL_IVAL: return sq_const(c, ex_expr_int(c->plan, k->ival->ival, c->err), loc);
    case PG_QUERY__A__CONST__VAL_FVAL: {
        const char *t = k->fval->fval;
        if (strpbrk(t, "eE"))
            return sq_const(c, ex_expr_double(c->plan, strtod(t, NULL), c->err), loc);
        if (!strchr(t, '.')) {
            char *end;
            errno = 0;
            long long v = strtoll(t, &end, 10);
            if (errno == 0 && !*end)
                return sq_const(c, ex_expr_bigint(c->plan, v, c->err), loc);
        }
        return sq_const(c, ex_expr_decimal(c->plan, t, c->err), loc);
    }
    case PG_QUERY__A__CONST__VAL_SVAL: return sq_const(c, ex_expr_varchar(c->plan, k->sval->sval, c->err), loc);
    case PG_QUERY__A__CONST__VAL_BOOLVAL:
        return sq_const(c, ex_expr_bool(c->plan, k->boolval->boolval, c->err), loc);
    default: sq_fail(c, loc, PA_EUNSUPPORTED, "this kind of constant is not supported"); return NULL;
    }
}

/* ---------------------------------------------------------------- types */
static const char *type_word(PgQuery__TypeName *tn)
{
    const char *w = NULL;
    for (size_t i = 0; i < tn->n_names; i++)
        w = sq_node_name(tn->names[i]);
    return w ? w : "?";
}

static int typmod_int(PgQuery__TypeName *tn, size_t i, int dflt)
{
    if (i >= tn->n_typmods || tn->typmods[i]->node_case != PG_QUERY__NODE__NODE_A_CONST ||
        tn->typmods[i]->a_const->val_case != PG_QUERY__A__CONST__VAL_IVAL)
        return dflt;
    return tn->typmods[i]->a_const->ival->ival;
}

int sq_type_of(sq_ctx *c, PgQuery__TypeName *tn, pa_type *t)
{
    const char *w = type_word(tn);
    if (!strcmp(w, "int4") || !strcmp(w, "int") || !strcmp(w, "integer") || !strcmp(w, "int2") ||
        !strcmp(w, "smallint"))
        *t = (pa_type){PA_TYPE_INTEGER, 0, 0};
    else if (!strcmp(w, "int8") || !strcmp(w, "bigint"))
        *t = (pa_type){PA_TYPE_BIGINT, 0, 0};
    else if (!strcmp(w, "float8") || !strcmp(w, "double") || !strcmp(w, "float"))
        *t = (pa_type){PA_TYPE_DOUBLE, 0, 0};   /* (the parser names float(25..53) float8) */
    else if (!strcmp(w, "float4") || !strcmp(w, "real"))
        *t = (pa_type){PA_TYPE_REAL, 0, 0};   /* real, float4, float(1..24) */
    else if (!strcmp(w, "numeric") || !strcmp(w, "decimal")) {
        int p = typmod_int(tn, 0, 18), s = typmod_int(tn, 1, tn->n_typmods ? 0 : 3);
        if (p < 1 || p > 38 || s < 0 || s > p)
            return sq_fail(c, tn->location, PA_EINVAL, "DECIMAL(%d,%d): precision must be 1..38 and scale 0..precision",
                           p, s);
        *t = (pa_type){PA_TYPE_DECIMAL, (uint8_t)p, (uint8_t)s};
    } else if (!strcmp(w, "date"))
        *t = (pa_type){PA_TYPE_DATE, 0, 0};
    else if (!strcmp(w, "timestamp") || !strcmp(w, "timestamptz") || !strcmp(w, "time") || !strcmp(w, "datetime")) {
        /* Microseconds: a precision (timestamp(3)) would round the values. */
        if (tn->n_typmods && typmod_int(tn, 0, -1) != 6)
            return sq_fail(c, tn->location, PA_EUNSUPPORTED, "%s with a precision other than 6 is not supported", w);
        *t = (pa_type){!strcmp(w, "timestamptz") ? PA_TYPE_TIMESTAMPTZ : !strcmp(w, "time") ? PA_TYPE_TIME
                                                                                             : PA_TYPE_TIMESTAMP,
                       0, 0};
    } else if (!strcmp(w, "timestamp_ns"))
        *t = (pa_type){PA_TYPE_TIMESTAMP_NS, 0, 0};
    else if (!strcmp(w, "interval"))
        *t = (pa_type){PA_TYPE_INTERVAL, 0, 0};
    else if (!strcmp(w, "timetz"))
        return sq_fail(c, tn->location, PA_EUNSUPPORTED, "type time with time zone is not supported");
    else if (!strcmp(w, "varchar") || !strcmp(w, "text") || !strcmp(w, "bpchar") || !strcmp(w, "char"))
        *t = (pa_type){PA_TYPE_VARCHAR, 0, 0};
    else if (!strcmp(w, "bool") || !strcmp(w, "boolean"))
        *t = (pa_type){PA_TYPE_BOOLEAN, 0, 0};
    else if (!strcmp(w, "bytea") || !strcmp(w, "blob") || !strcmp(w, "varbinary"))
        *t = (pa_type){PA_TYPE_BYTEA, 0, 0};
    else if (!strcmp(w, "uuid"))
        *t = (pa_type){PA_TYPE_UUID, 0, 0};
    else
        return sq_fail(c, tn->location, PA_EUNSUPPORTED, "type %s is not supported", w);
    return PA_OK;
}

/* An interval constant: `interval '90' day`, `interval '3 months'`. */
static bool is_interval(pgn *n)
{
    return n && n->node_case == PG_QUERY__NODE__NODE_TYPE_CAST &&
           !strcmp(type_word(n->type_cast->type_name), "interval");
}

/* Whether constant interval n is a whole number of days, months or years
 * (interval '90' day, interval '3 months'): *amount of *unit. The form
 * DATE +- interval keeps a DATE for (TPC-H's); any other interval is a
 * value of its own (bind_cast). */
static bool simple_interval(pgn *n, int64_t *amount, ex_unit *unit)
{
    PgQuery__TypeCast *tc = n->type_cast;
    if (!tc->arg || tc->arg->node_case != PG_QUERY__NODE__NODE_A_CONST ||
        tc->arg->a_const->val_case != PG_QUERY__A__CONST__VAL_SVAL)
        return false;
    const char *s = tc->arg->a_const->sval->sval;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno)
        return false;
    while (*end == ' ')
        end++;
    int mask = typmod_int(tc->type_name, 0, -1);
    size_t l = strlen(end);
    if (!*end && (mask == 8 || mask == 2 || mask == 4))
        *unit = mask == 8 ? EX_DAYS : mask == 2 ? EX_MONTHS : EX_YEARS;
    else if (mask == -1 && !strncmp(end, "day", 3) && l <= 4)
        *unit = EX_DAYS;
    else if (mask == -1 && (!strcmp(end, "mon") || !strcmp(end, "mons") || !strcmp(end, "month") ||
                            !strcmp(end, "months")))
        *unit = EX_MONTHS;
    else if (mask == -1 && !strncmp(end, "year", 4) && l <= 5)
        *unit = EX_YEARS;
    else
        return false;
    *amount = v;
    return true;
}

static sq_expr *bind_cast(sq_ctx *c, PgQuery__TypeCast *tc, sq_scope *sc, sq_aggctx *ag, int loc)
{
    pa_type t;
    if (sq_type_of(c, tc->type_name, &t) != PA_OK)
        return NULL;
    pgn *a = tc->arg;
    /* date 'YYYY-MM-DD' and friends: typed literals. */
    if (a && a->node_case == PG_QUERY__NODE__NODE_A_CONST && a->a_const->val_case == PG_QUERY__A__CONST__VAL_SVAL &&
        t.id == PA_TYPE_DATE) {
        ex_expr *d = ex_expr_date(c->plan, a->a_const->sval->sval, c->err);
        if (!d)
            c->err_loc = loc;
        return d ? sq_const(c, d, loc) : NULL;
    }
    /* interval '90' day: a bare number takes the qualifier's unit. */
    if (a && a->node_case == PG_QUERY__NODE__NODE_A_CONST && a->a_const->val_case == PG_QUERY__A__CONST__VAL_SVAL &&
        t.id == PA_TYPE_INTERVAL && tc->type_name->n_typmods) {
        static const struct { int mask; const char *unit; } q[] = {
            {4, "years"}, {2, "months"}, {8, "days"}, {1024, "hours"}, {2048, "minutes"}, {4096, "seconds"}};
        int mask = typmod_int(tc->type_name, 0, -1);
        const char *s = a->a_const->sval->sval, *u = NULL;
        for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
            if (q[i].mask == mask)
                u = q[i].unit;
        char *end;
        (void)strtod(s, &end);
        if (end == s || !u) {
            sq_fail(c, loc, PA_EUNSUPPORTED, "interval '%s' with this qualifier is not supported (a number with "
                    "YEAR, MONTH, DAY, HOUR, MINUTE or SECOND is)", s);
            return NULL;
        }
        while (*end == ' ')
            end++;
        if (*end) {
            sq_fail(c, loc, PA_EINVAL, "interval '%s' has both a unit and a qualifier", s);
            return NULL;
        }
        size_t n = strlen(s) + 16;
        char *text = sq_alloc(&c->A, n);
        if (!text) {
            sq_fail(c, loc, PA_ENOMEM, "binding: out of memory");
            return NULL;
        }
        snprintf(text, n, "%s %s", s, u);
        sq_expr *v = sq_const(c, ex_expr_varchar(c->plan, text, c->err), loc);
        return v ? sq_cast(c, v, t, loc) : NULL;
    }
    sq_expr *x = sq_bind_expr(c, a, sc, ag);
    if (!x)
        return NULL;
    if (is_untyped_null(x))
        return null_const(c, t, loc);
    if (x->type.id == t.id && x->type.precision == t.precision && x->type.scale == t.scale)
        return x;
    return sq_cast(c, x, t, loc);
}

/* ------------------------------------------------------------ operators */
static sq_expr *binary(sq_ctx *c, sq_ekind k, int sub, sq_expr *a, sq_expr *b, int loc)
{
    sq_expr *v[2] = {a, b};
    if (!a || !b)
        return NULL;
    type_nulls(c, v, 2);
    return sq_make(c, k, sub, v, 2, loc);
}

/* e as text: an untyped NULL becomes a VARCHAR one; with cast, any other
 * type is cast to VARCHAR (as PostgreSQL's || and concat take any value). */
static sq_expr *as_text(sq_ctx *c, sq_expr *e, bool cast)
{
    if (!e)
        return NULL;
    if (is_untyped_null(e))
        return null_const(c, (pa_type){PA_TYPE_VARCHAR, 0, 0}, e->loc);
    return cast && e->type.id != PA_TYPE_VARCHAR ? sq_cast(c, e, (pa_type){PA_TYPE_VARCHAR, 0, 0}, e->loc) : e;
}

/* a || b: text concatenation, NULL when either is. As in PostgreSQL one
 * side must be text; the other is cast to it. */
static sq_expr *concat_op(sq_ctx *c, sq_expr *a, sq_expr *b, int loc)
{
    if (!a || !b)
        return NULL;
    /* BYTEA || BYTEA joins the bytes (byteacat); a string literal beside a
     * BYTEA is one, as PostgreSQL resolves its unknown-typed literals. */
    bool ba = a->type.id == PA_TYPE_BYTEA, bb = b->type.id == PA_TYPE_BYTEA;
    if ((ba || bb) && (ba || a->kind == SQ_E_CONST) && (bb || b->kind == SQ_E_CONST)) {
        sq_expr *v[2] = {ba ? a : sq_cast(c, a, b->type, a->loc), bb ? b : sq_cast(c, b, a->type, b->loc)};
        if (!v[0] || !v[1])
            return NULL;
        return sq_make(c, SQ_E_TEXT, EX_CONCAT, v, 2, loc);
    }
    bool ta = a->type.id == PA_TYPE_VARCHAR || is_untyped_null(a), tb = b->type.id == PA_TYPE_VARCHAR || is_untyped_null(b);
    if (!ta && !tb) {
        sq_fail(c, loc, PA_EINVAL, "operator does not exist: %s || %s", pa_type_name(a->type.id),
                pa_type_name(b->type.id));
        return NULL;
    }
    sq_expr *v[2] = {as_text(c, a, true), as_text(c, b, true)};
    return sq_make(c, SQ_E_TEXT, EX_CONCAT, v, 2, loc);
}

/* a IS [NOT] DISTINCT FROM b: = and <> with NULL a value like any other
 * (never NULL): CASE WHEN a IS NULL THEN b IS [NOT] NULL WHEN b IS NULL THEN
 * distinct ELSE a <> b (a = b) END. */
static sq_expr *distinct_from(sq_ctx *c, sq_expr *a, sq_expr *b, bool distinct, int loc)
{
    sq_expr *v[2] = {a, b};
    if (!a || !b)
        return NULL;
    type_nulls(c, v, 2);
    sq_expr *cmp = sq_make(c, SQ_E_CMP, distinct ? EX_NE : EX_EQ, v, 2, loc);
    sq_expr *an = sq_make(c, SQ_E_ISNULL, 0, &v[0], 1, loc);
    sq_expr *bn = sq_make(c, SQ_E_ISNULL, 0, &v[1], 1, loc);
    sq_expr *bt = sq_make(c, SQ_E_ISNULL, distinct ? 1 : 0, &v[1], 1, loc);
    sq_expr *k = sq_const(c, ex_expr_bool(c->plan, distinct, c->err), loc);
    sq_expr *w[5] = {an, bt, bn, k, cmp};
    return sq_make(c, SQ_E_CASE, 0, w, 5, loc);
}

/* NULLIF(a, b): CASE WHEN a = b THEN NULL ELSE a END. Its type is that of
 * the comparison's left operand after promotion, as in PostgreSQL
 * (NULLIF(1, 2.2) is NUMERIC); DuckDB keeps a's own type. */
static sq_expr *nullif(sq_ctx *c, sq_expr *a, sq_expr *b, int loc)
{
    sq_expr *v[2] = {a, b};
    if (!a || !b)
        return NULL;
    type_nulls(c, v, 2);
    pa_type t;
    if (!sq_common_type(c, v[0]->type, v[1]->type, &t)) {
        sq_fail(c, loc, PA_EINVAL, "NULLIF: cannot compare %s with %s", pa_type_name(v[0]->type.id),
                pa_type_name(v[1]->type.id));
        return NULL;
    }
    sq_expr *cmp = sq_make(c, SQ_E_CMP, EX_EQ, v, 2, loc);
    sq_expr *w[3] = {cmp, sq_const(c, ex_expr_null(c->plan, t, c->err), loc), sq_cast(c, v[0], t, loc)};
    return sq_make(c, SQ_E_CASE, 0, w, 3, loc);
}


/* Bytes of the UTF-8 character that starts with byte b (1 for a stray byte). */
static int utf8_len(unsigned char b)
{
    return b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 1;
}

/* The constant pattern of [I]LIKE r, in the matcher's form (kn_scalar.h):
 * with ESCAPE 'e' (r is like_escape(pattern, e)) a character after e is
 * literal, written KN_LIKE_ESC + byte when it is '%', '_' or that byte;
 * without ESCAPE the pattern as it is (its KN_LIKE_ESC bytes escaped). */
static const char *like_pattern(sq_ctx *c, pgn *r, const char *what, int loc)
{
    const char *pat = NULL, *esc = "";
    if (r && r->node_case == PG_QUERY__NODE__NODE_A_CONST && r->a_const->val_case == PG_QUERY__A__CONST__VAL_SVAL)
        pat = r->a_const->sval->sval;
    else if (r && r->node_case == PG_QUERY__NODE__NODE_FUNC_CALL && r->func_call->n_funcname &&
             !strcmp(sq_node_name(r->func_call->funcname[r->func_call->n_funcname - 1]), "like_escape") &&
             r->func_call->n_args == 2) {
        pgn *p = r->func_call->args[0], *e = r->func_call->args[1];
        if (p->node_case == PG_QUERY__NODE__NODE_A_CONST && p->a_const->val_case == PG_QUERY__A__CONST__VAL_SVAL &&
            e->node_case == PG_QUERY__NODE__NODE_A_CONST && e->a_const->val_case == PG_QUERY__A__CONST__VAL_SVAL) {
            pat = p->a_const->sval->sval;
            esc = e->a_const->sval->sval;
        }
    }
    if (!pat) {
        sq_fail(c, loc, PA_EUNSUPPORTED, "%s needs a constant pattern (and a constant ESCAPE)", what);
        return NULL;
    }
    size_t el = strlen(esc);
    if (el > 1 && (el > 4 || utf8_len((unsigned char)esc[0]) != (int)el)) {
        sq_fail(c, loc, PA_EINVAL, "invalid escape string (ESCAPE takes one character)");
        return NULL;
    }
    size_t n = strlen(pat);
    char *out = sq_alloc(&c->A, 2 * n + 1);
    if (!out) {
        sq_fail(c, loc, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        bool escaped = false;
        if (el && !strncmp(pat + i, esc, el)) {
            i += el;
            if (i >= n) {
                sq_fail(c, loc, PA_EINVAL, "LIKE pattern must not end with escape character");
                return NULL;
            }
            escaped = true;
        }
        size_t cl = (size_t)utf8_len((unsigned char)pat[i]);
        if (cl < 1 || i + cl > n)
            cl = 1;
        if (pat[i] == '\x01' || (escaped && (pat[i] == '%' || pat[i] == '_')))
            out[o++] = '\x01';
        memcpy(out + o, pat + i, cl);
        o += cl;
        i += cl;
    }
    out[o] = 0;
    return out;
}

/* PostgreSQL's s ~ p, s !~ p, s ~* p, s !~* p: regexp_like(s, p) (flag i
 * for the * forms), NOT for the ! forms. The pattern must be a constant. */
static sq_expr *regex_op(sq_ctx *c, const char *op, sq_expr *a, sq_expr *b, int loc)
{
    bool negate = op[0] == '!', icase = op[strlen(op) - 1] == '*';
    sq_expr *v[3] = {as_text(c, a, false), as_text(c, b, false), NULL};
    if (!v[0] || !v[1])
        return NULL;
    if (!ex_expr_is_const(v[1]->tx)) {
        sq_fail(c, loc, PA_EUNSUPPORTED, "operator %s: the pattern must be a constant", op);
        return NULL;
    }
    if (icase && !(v[2] = sq_const(c, ex_expr_varchar(c->plan, "i", c->err), loc)))
        return NULL;
    return sq_make(c, SQ_E_REGEX, negate, v, icase ? 3 : 2, loc);
}

static sq_expr *bind_aexpr(sq_ctx *c, PgQuery__AExpr *x, sq_scope *sc, sq_aggctx *ag)
{
    const char *op = x->n_name ? sq_node_name(x->name[x->n_name - 1]) : "";
    int loc = x->location;
    switch (x->kind) {
    case PG_QUERY__A__EXPR__KIND__AEXPR_OP: {
        if (!x->lexpr) { /* prefix operator */
            sq_expr *a = sq_bind_expr(c, x->rexpr, sc, ag);
            if (!a)
                return NULL;
            if (!strcmp(op, "-"))
                return sq_make(c, SQ_E_NEG, 0, &a, 1, loc);
            if (!strcmp(op, "+"))
                return a;
            sq_fail(c, loc, PA_EUNSUPPORTED, "prefix operator %s is not supported", op);
            return NULL;
        }
        /* DATE +- a whole number of days, months or years stays a DATE
         * (PostgreSQL gives the timestamp at its midnight: the same
         * instant); every other interval arithmetic is the engine's. */
        sq_expr *a = NULL, *b = NULL;
        if ((!strcmp(op, "+") || !strcmp(op, "-")) && (is_interval(x->rexpr) || is_interval(x->lexpr))) {
            pgn *iv = is_interval(x->rexpr) ? x->rexpr : x->lexpr;
            pgn *other = iv == x->rexpr ? x->lexpr : x->rexpr;
            sq_expr *d = sq_bind_expr(c, other, sc, ag);
            if (!d)
                return NULL;
            int64_t n = 0;
            ex_unit u = EX_DAYS;
            if (d->type.id == PA_TYPE_DATE && !(iv == x->lexpr && !strcmp(op, "-")) && simple_interval(iv, &n, &u))
                return sq_date_add(c, d, !strcmp(op, "-") ? -n : n, u, loc);
            sq_expr *v = sq_bind_expr(c, iv, sc, ag);
            if (!v)
                return NULL;
            a = iv == x->lexpr ? v : d;
            b = iv == x->lexpr ? d : v;
        } else {
            a = sq_bind_expr(c, x->lexpr, sc, ag);
            b = a ? sq_bind_expr(c, x->rexpr, sc, ag) : NULL;
        }
        if (!b)
            return NULL;
        if (!strcmp(op, "||"))
            return concat_op(c, a, b, loc);
        if (!strcmp(op, "~") || !strcmp(op, "!~") || !strcmp(op, "~*") || !strcmp(op, "!~*"))
            return regex_op(c, op, a, b, loc);
        static const struct { const char *op; sq_ekind k; int sub; } ops[] = {
            {"+", SQ_E_ARITH, EX_ADD}, {"-", SQ_E_ARITH, EX_SUB}, {"*", SQ_E_ARITH, EX_MUL},
            {"/", SQ_E_ARITH, EX_DIV}, {"%", SQ_E_ARITH, EX_MOD}, {"=", SQ_E_CMP, EX_EQ},    {"<>", SQ_E_CMP, EX_NE},
            {"!=", SQ_E_CMP, EX_NE},   {"<", SQ_E_CMP, EX_LT},    {"<=", SQ_E_CMP, EX_LE},
            {">", SQ_E_CMP, EX_GT},    {">=", SQ_E_CMP, EX_GE},
        };
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
            if (!strcmp(op, ops[i].op))
                return binary(c, ops[i].k, ops[i].sub, a, b, loc);
        sq_fail(c, loc, PA_EUNSUPPORTED, "operator %s is not supported", op);
        return NULL;
    }
    case PG_QUERY__A__EXPR__KIND__AEXPR_IN: {
        if (!x->rexpr || x->rexpr->node_case != PG_QUERY__NODE__NODE_LIST) {
            sq_fail(c, loc, PA_EUNSUPPORTED, "IN needs a list or a subquery");
            return NULL;
        }
        PgQuery__List *l = x->rexpr->list;
        sq_expr **v = sq_alloc(&c->A, (l->n_items + 1) * sizeof *v);
        if (!v)
            return NULL;
        v[0] = sq_bind_expr(c, x->lexpr, sc, ag);
        for (size_t i = 0; i < l->n_items && v[i]; i++)
            v[i + 1] = sq_bind_expr(c, l->items[i], sc, ag);
        if (!v[l->n_items])
            return NULL;
        type_nulls(c, v, (int)l->n_items + 1);
        bool all_const = true;
        for (size_t i = 1; i <= l->n_items; i++)
            all_const &= v[i]->kind == SQ_E_CONST;
        if (all_const)
            return sq_make(c, SQ_E_IN, strcmp(op, "<>") == 0, v, (int)l->n_items + 1, loc);
        /* a IN (b, c) with non-constants: a = b OR a = c */
        for (size_t i = 1; i <= l->n_items; i++)
            if (!(v[i] = binary(c, SQ_E_CMP, EX_EQ, v[0], v[i], loc)))
                return NULL;
        sq_expr *e = sq_bool_all(c, SQ_E_OR, v + 1, (int)l->n_items, loc);
        return e && !strcmp(op, "<>") ? sq_make(c, SQ_E_NOT, 0, &e, 1, loc) : e;
    }
    case PG_QUERY__A__EXPR__KIND__AEXPR_LIKE: {
        const char *pat = like_pattern(c, x->rexpr, "LIKE", loc);
        if (!pat)
            return NULL;
        sq_expr *a = sq_bind_expr(c, x->lexpr, sc, ag);
        return sq_like(c, a, pat, !strcmp(op, "!~~"), loc);
    }
    case PG_QUERY__A__EXPR__KIND__AEXPR_BETWEEN:
    case PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN: {
        PgQuery__List *l = x->rexpr && x->rexpr->node_case == PG_QUERY__NODE__NODE_LIST ? x->rexpr->list : NULL;
        if (!l || l->n_items != 2) {
            sq_fail(c, loc, PA_EINVAL, "BETWEEN needs two bounds");
            return NULL;
        }
        sq_expr *a = sq_bind_expr(c, x->lexpr, sc, ag);
        sq_expr *lo = a ? sq_bind_expr(c, l->items[0], sc, ag) : NULL;
        sq_expr *hi = lo ? sq_bind_expr(c, l->items[1], sc, ag) : NULL;
        sq_expr *e = binary(c, SQ_E_AND, 0, binary(c, SQ_E_CMP, EX_GE, a, lo, loc),
                            binary(c, SQ_E_CMP, EX_LE, a, hi, loc), loc);
        if (e && x->kind == PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN)
            e = sq_make(c, SQ_E_NOT, 0, &e, 1, loc);
        return e;
    }
    case PG_QUERY__A__EXPR__KIND__AEXPR_DISTINCT:
    case PG_QUERY__A__EXPR__KIND__AEXPR_NOT_DISTINCT:
    case PG_QUERY__A__EXPR__KIND__AEXPR_NULLIF: {
        sq_expr *a = sq_bind_expr(c, x->lexpr, sc, ag);
        sq_expr *b = a ? sq_bind_expr(c, x->rexpr, sc, ag) : NULL;
        if (x->kind == PG_QUERY__A__EXPR__KIND__AEXPR_NULLIF)
            return nullif(c, a, b, loc);
        return distinct_from(c, a, b, x->kind == PG_QUERY__A__EXPR__KIND__AEXPR_DISTINCT, loc);
    }
    case PG_QUERY__A__EXPR__KIND__AEXPR_ILIKE: {
        /* lower(a) LIKE lower(pattern): the case mapping of upper/lower. */
        const char *p = like_pattern(c, x->rexpr, "ILIKE", loc);
        if (!p)
            return NULL;
        sq_expr *a = as_text(c, sq_bind_expr(c, x->lexpr, sc, ag), false);
        if (!a)
            return NULL;
        sq_expr *la = sq_make(c, SQ_E_TEXT, EX_LOWER, &a, 1, loc);
        size_t cap = 2 * strlen(p) + 8;   /* lower case takes at most 1.5 times the bytes */
        ex_expr *lp = ex_expr_text(c->plan, EX_LOWER, ex_expr_varchar(c->plan, p, c->err), NULL, NULL, c->err);
        char *pat = sq_alloc(&c->A, cap);
        if (!la || !lp || !pat || ex_expr_const_text(lp, pat, cap) != PA_OK) {
            if (!c->err->code)
                sq_fail(c, loc, PA_ENOMEM, "out of memory binding ILIKE");
            return NULL;
        }
        return sq_like(c, la, pat, !strcmp(op, "!~~*"), loc);
    }
    case PG_QUERY__A__EXPR__KIND__AEXPR_OP_ANY:
    case PG_QUERY__A__EXPR__KIND__AEXPR_OP_ALL:
        sq_fail(c, loc, PA_EUNSUPPORTED, "ANY/ALL with an array is not supported");
        return NULL;
    default:
        sq_fail(c, loc, PA_EUNSUPPORTED, "this operator (%s) is not supported", op && *op ? op : "?");
        return NULL;
    }
}

/* --------------------------------------------------------------- functions */
static int extract_field(sq_ctx *c, pgn *n, int loc, ex_field *f)
{
    static const struct {
        const char *name;
        ex_field f;
    } fields[] = {
        {"year", EX_YEAR},     {"month", EX_MONTH},     {"day", EX_DAY},         {"quarter", EX_QUARTER},
        {"dow", EX_DOW},       {"isodow", EX_ISODOW},   {"doy", EX_DOY},         {"week", EX_WEEK},
        {"isoyear", EX_ISOYEAR}, {"epoch", EX_EPOCH},   {"decade", EX_DECADE},   {"century", EX_CENTURY},
        {"millennium", EX_MILLENNIUM}, {"hour", EX_HOUR}, {"minute", EX_MINUTE}, {"second", EX_SECOND},
        {"milliseconds", EX_MILLISECONDS}, {"microseconds", EX_MICROSECONDS},
        {"years", EX_YEAR}, {"months", EX_MONTH}, {"days", EX_DAY}, {"hours", EX_HOUR}, {"minutes", EX_MINUTE},
        {"seconds", EX_SECOND}, {"millisecond", EX_MILLISECONDS}, {"microsecond", EX_MICROSECONDS},
        {"decades", EX_DECADE}, {"centuries", EX_CENTURY}, {"millennia", EX_MILLENNIUM},
    };
    const char *w = n && n->node_case == PG_QUERY__NODE__NODE_A_CONST && n->a_const->val_case == PG_QUERY__A__CONST__VAL_SVAL
                        ? n->a_const->sval->sval
                        : NULL;
    for (size_t i = 0; w && i < sizeof fields / sizeof fields[0]; i++)
        if (!strcasecmp(w, fields[i].name)) {
            *f = fields[i].f;
            return PA_OK;
        }
    return sq_fail(c, loc, PA_EUNSUPPORTED,
                   "date field %s is not supported (year, quarter, month, week, day, hour, minute, second, "
                   "milliseconds, microseconds, dow, isodow, doy, isoyear, epoch, decade, century, millennium are)",
                   w ? w : "?");
}

/* An aggregate node of kind k over arg (NULL for COUNT(*)). */
static sq_expr *agg_node(sq_ctx *c, ex_agg_kind k, sq_expr *arg, int loc)
{
    pa_type t = {PA_TYPE_BIGINT, 0, 0};
    if (arg && ex_agg_type(k, arg->type, &t, c->err) != PA_OK) {
        c->err_loc = loc;
        return NULL;
    }
    if (k == EX_AGG_COUNT_STAR)
        ex_agg_type(k, t, &t, NULL);
    sq_expr *e = sq_alloc(&c->A, sizeof *e);
    sq_expr **args = sq_alloc(&c->A, sizeof *args);
    if (!e || !args)
        return NULL;
    e->kind = SQ_E_AGG;
    e->sub = (int)k;
    e->loc = loc;
    e->col = -1;
    e->type = t;
    e->n_args = arg ? 1 : 0;
    e->args = args;
    args[0] = arg;
    e->tx = ex_expr_col_typed(c->plan, 0, t, c->err);
    return e->tx ? e : NULL;
}

/* COUNT(DISTINCT (a, b, ...)): the distinct rows of the values, a row
 * with NULL fields included (a row value is not NULL), as PostgreSQL and
 * DuckDB count them. An aggregate node with one argument per field;
 * bind_select's aggregate() groups by them. */
static sq_expr *count_distinct_row(sq_ctx *c, PgQuery__RowExpr *row, sq_expr *filt, sq_scope *sc, sq_aggctx *ag,
                                   int loc)
{
    if (filt) {
        sq_fail(c, loc, PA_EUNSUPPORTED, "COUNT(DISTINCT (a, b, ...)) with FILTER is not supported");
        return NULL;
    }
    if (row->n_args == 0) {
        sq_fail(c, loc, PA_EINVAL, "COUNT(DISTINCT ()) needs at least one value");
        return NULL;
    }
    sq_expr **v = sq_alloc(&c->A, (row->n_args + 1) * sizeof *v);
    if (!v) {
        sq_fail(c, loc, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    for (size_t i = 0; i < row->n_args; i++) {
        ag->inside = true;
        v[i] = sq_bind_expr(c, row->args[i], sc, ag);
        ag->inside = false;
        if (!v[i])
            return NULL;
    }
    sq_expr *e = agg_node(c, EX_AGG_COUNT_DISTINCT, v[0], loc);
    if (e) {
        e->args = v;
        e->n_args = (int)row->n_args;
        e->flag = true;   /* a row of values (NULL fields count): bind_select's aggregate() */
    }
    return e;
}

sq_expr *sq_agg(sq_ctx *c, ex_agg_kind k, sq_expr *arg, int loc)
{
    return agg_node(c, k, arg, loc);
}

/* The value of a constant expression as text; false (and an error) when
 * it is not a constant or is NULL. */
static bool win_const(sq_ctx *c, pgn *n, sq_scope *sc, const char *what, char *buf, size_t cap, pa_type *t)
{
    sq_aggctx none = {false, false, what, false, false};
    sq_expr *e = sq_bind_expr(c, n, sc, &none);
    if (!e)
        return false;
    if (e->kind == SQ_E_CAST && e->args[0]->kind == SQ_E_CONST)
        e = e->args[0];
    if (e->kind != SQ_E_CONST || ex_expr_const_text(e->tx, buf, cap) != PA_OK) {
        sq_fail(c, e->loc, PA_EUNSUPPORTED, "%s must be a constant (not NULL)", what);
        return false;
    }
    *t = e->type;
    return true;
}

/* Whether an aggregate may stand here (a failure set when not). */
static bool agg_allowed(sq_ctx *c, const sq_aggctx *ag, int loc)
{
    if (!ag || !ag->allow) {
        sq_fail(c, loc, PA_EINVAL, "aggregate functions are not allowed in %s", ag && ag->clause ? ag->clause : "this place");
        return false;
    }
    if (ag->inside) {
        sq_fail(c, loc, PA_EINVAL, "aggregate function calls cannot be nested");
        return false;
    }
    return true;
}

/* An aggregate's argument under FILTER (WHERE filt): CASE WHEN filt THEN x
 * END, since every aggregate skips NULLs; x itself without a filter. */
static sq_expr *filtered(sq_ctx *c, sq_expr *filt, sq_expr *x, int loc)
{
    if (!filt || !x)
        return x;
    if (filt->type.id != PA_TYPE_BOOLEAN) {
        sq_fail(c, loc, PA_EINVAL, "FILTER needs a boolean condition, not %s", pa_type_name(filt->type.id));
        return NULL;
    }
    sq_expr *w[2] = {filt, x};
    return sq_make(c, SQ_E_CASE, 0, w, 2, loc);
}

/* Ordered-set aggregates: percentile_cont(p) / percentile_disc(p) WITHIN
 * GROUP (ORDER BY x), mode() WITHIN GROUP (ORDER BY x), median(x) (DuckDB's
 * percentile_cont(0.5)). A placeholder that bind_select turns into
 * aggregates over row_number() windows before grouping. */
static sq_expr *bind_osagg(sq_ctx *c, PgQuery__FuncCall *f, const char *fn, sq_scope *sc, sq_aggctx *ag)
{
    int loc = f->location;
    if (!agg_allowed(c, ag, loc))
        return NULL;
    if (f->agg_distinct || f->agg_star) {
        sq_fail(c, loc, PA_EINVAL, "%s takes neither DISTINCT nor *", fn);
        return NULL;
    }
    bool median = !strcmp(fn, "median"), mode = !strcmp(fn, "mode");
    int kind = median || !strcmp(fn, "percentile_cont") ? 0 : mode ? 2 : 1;
    size_t want_args = median ? 1 : mode ? 0 : 1;
    if (median ? f->agg_within_group || f->n_agg_order : !f->agg_within_group || f->n_agg_order != 1) {
        sq_fail(c, loc, PA_EINVAL, median ? "median takes its argument, not WITHIN GROUP"
                                          : "%s needs WITHIN GROUP (ORDER BY one expression)", fn);
        return NULL;
    }
    if (f->n_args != want_args) {
        sq_fail(c, loc, PA_EINVAL, "%s takes %zu argument%s", fn, want_args, want_args == 1 ? "" : "s");
        return NULL;
    }
    double p = 0.5;
    if (!median && !mode) {
        char b[128], what[64];
        pa_type pt;
        snprintf(what, sizeof what, "the fraction of %s", fn);
        if (!win_const(c, f->args[0], sc, what, b, sizeof b, &pt))
            return NULL;
        if (pt.id != PA_TYPE_INTEGER && pt.id != PA_TYPE_BIGINT && pt.id != PA_TYPE_DECIMAL && !pa_type_is_float(pt.id)) {
            sq_fail(c, loc_of(f->args[0]), PA_EINVAL, "%s must be a number, not %s", what, pa_type_name(pt.id));
            return NULL;
        }
        p = strtod(b, NULL);
        if (!(p >= 0 && p <= 1)) {
            sq_fail(c, loc_of(f->args[0]), PA_EINVAL, "percentile value %s is not between 0 and 1", b);
            return NULL;
        }
    }
    pgn *xn = median ? f->args[0] : f->agg_order[0]->sort_by->node;
    bool desc = !median && f->agg_order[0]->sort_by->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
    ag->inside = true;
    sq_expr *x = sq_bind_expr(c, xn, sc, ag);
    sq_expr *filt = x && f->agg_filter ? sq_bind_expr(c, f->agg_filter, sc, ag) : NULL;
    ag->inside = false;
    if (!x || (f->agg_filter && !filt))
        return NULL;
    if (kind == 0 && x->type.id == PA_TYPE_REAL)   /* percentile_cont interpolates in DOUBLE */
        x = sq_cast(c, x, (pa_type){PA_TYPE_DOUBLE, 0, 0}, loc);
    if (kind == 0 && x && x->type.id != PA_TYPE_INTEGER && x->type.id != PA_TYPE_BIGINT && x->type.id != PA_TYPE_DECIMAL &&
        x->type.id != PA_TYPE_DOUBLE) {
        sq_fail(c, loc, PA_EINVAL, "%s of %s is not defined (it needs a number; percentile_disc takes any type)", fn,
                pa_type_name(x->type.id));
        return NULL;
    }
    if (!(x = filtered(c, filt, x, loc)))
        return NULL;
    sq_expr *e = sq_alloc(&c->A, sizeof *e);
    sq_expr **args = sq_alloc(&c->A, sizeof *args);
    if (!e || !args) {
        sq_fail(c, loc, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    memset(e, 0, sizeof *e);
    e->kind = SQ_E_OSAGG;
    e->sub = kind;
    e->flag = desc;
    memcpy(&e->n, &p, sizeof p);
    e->loc = loc;
    e->col = -1;
    e->type = kind == 0 ? (pa_type){PA_TYPE_DOUBLE, 0, 0} : x->type;
    e->n_args = 1;
    e->args = args;
    args[0] = x;
    e->depth = x->depth + 1;
    e->tx = ex_expr_col_typed(c->plan, 0, e->type, c->err);
    return e->tx ? e : NULL;
}

/* CURRENT_DATE: the statement's date in the local time zone (as
 * PostgreSQL's session zone and DuckDB have it), a constant. */
static sq_expr *current_date(sq_ctx *c, int loc)
{
    time_t now = time(NULL);
    struct tm tm;
    char ymd[32];
    if (!localtime_r(&now, &tm) || !strftime(ymd, sizeof ymd, "%Y-%m-%d", &tm)) {
        sq_fail(c, loc, PA_EINTERNAL, "CURRENT_DATE: the clock cannot be read");
        return NULL;
    }
    return sq_const(c, ex_expr_date(c->plan, ymd, c->err), loc);
}

/* CURRENT_TIMESTAMP and now() (TIMESTAMPTZ), LOCALTIMESTAMP (TIMESTAMP):
 * the statement's start, a constant; the session's time zone is UTC. */
static sq_expr *now_const(sq_ctx *c, pa_type_id t, int loc)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) {
        sq_fail(c, loc, PA_EINTERNAL, "CURRENT_TIMESTAMP: the clock cannot be read");
        return NULL;
    }
    int64_t us = (int64_t)ts.tv_sec * PA_USEC_PER_SEC + ts.tv_nsec / 1000;
    return sq_const(c, ex_expr_timestamp(c->plan, (pa_type){t, 0, 0}, us, c->err), loc);
}

static sq_expr *bind_sqlvalue(sq_ctx *c, PgQuery__SQLValueFunction *f)
{
    switch (f->op) {
    case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_DATE: return current_date(c, f->location);
    case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_TIMESTAMP:
    case PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_LOCALTIMESTAMP:
        return now_const(c, f->op == PG_QUERY__SQLVALUE_FUNCTION_OP__SVFOP_CURRENT_TIMESTAMP ? PA_TYPE_TIMESTAMPTZ
                                                                                            : PA_TYPE_TIMESTAMP,
                         f->location);
    default:
        sq_fail(c, f->location, PA_EUNSUPPORTED,
                "this time function is not supported (CURRENT_DATE, CURRENT_TIMESTAMP, LOCALTIMESTAMP and now() are)");
        return NULL;
    }
}

/* string_agg(x [, sep] [ORDER BY ...]) [FILTER (WHERE ...)], with
 * DISTINCT too: x's non-NULL values as text, in the ORDER BY's order,
 * joined by the constant sep (',' when left out, as DuckDB has it). A
 * placeholder (SQ_E_OSAGG sub 3: args x then the ORDER BY expressions,
 * win their directions and the separator, flag DISTINCT) that bind_select
 * plans as a STRING_AGG window over the group's rows before grouping. */
static sq_expr *bind_string_agg(sq_ctx *c, PgQuery__FuncCall *f, const char *fn, sq_scope *sc, sq_aggctx *ag)
{
    int loc = f->location;
    if (!agg_allowed(c, ag, loc))
        return NULL;
    if (f->agg_star || f->n_args < 1 || f->n_args > 2) {
        sq_fail(c, loc, PA_EINVAL, "%s takes a value and a separator", fn);
        return NULL;
    }
    char sep[EX_WINDOW_SEP_MAX + 2] = ",";
    if (f->n_args == 2) {
        char b[256];
        pa_type t;
        if (!win_const(c, f->args[1], sc, "the separator of string_agg", b, sizeof b, &t))
            return NULL;
        if (t.id != PA_TYPE_VARCHAR) {
            sq_fail(c, loc_of(f->args[1]), PA_EINVAL, "the separator of string_agg must be text, not %s",
                    pa_type_name(t.id));
            return NULL;
        }
        if (strlen(b) > EX_WINDOW_SEP_MAX) {
            sq_fail(c, loc_of(f->args[1]), PA_EUNSUPPORTED, "the separator of string_agg has %zu bytes (at most %d)",
                    strlen(b), EX_WINDOW_SEP_MAX);
            return NULL;
        }
        snprintf(sep, sizeof sep, "%s", b);
    }
    size_t no = f->n_agg_order;
    sq_win *win = sq_alloc(&c->A, sizeof *win);
    sq_expr **args = sq_alloc(&c->A, (no + 1) * sizeof *args);
    ex_sort_key *okeys = sq_alloc(&c->A, (no + 1) * sizeof *okeys);
    char *sp = sq_alloc(&c->A, strlen(sep) + 1);
    sq_expr *e = sq_alloc(&c->A, sizeof *e);
    if (!win || !args || !okeys || !sp || !e) {
        sq_fail(c, loc, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    memcpy(sp, sep, strlen(sep) + 1);
    memset(win, 0, sizeof *win);
    memset(e, 0, sizeof *e);
    win->fn.kind = EX_WIN_STRING_AGG;
    win->fn.column = -1;
    win->fn.sep = sp;
    win->fn.sep_len = (int32_t)strlen(sp);
    win->n_arg = 1;
    win->n_order = (int)no;
    win->order = okeys;
    ag->inside = true;
    sq_expr *x = sq_bind_expr(c, f->args[0], sc, ag);
    sq_expr *filt = x && f->agg_filter ? sq_bind_expr(c, f->agg_filter, sc, ag) : NULL;
    for (size_t i = 0; x && i < no; i++) {
        PgQuery__SortBy *sb = f->agg_order[i]->sort_by;
        if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING) {
            sq_fail(c, sb->location, PA_EUNSUPPORTED, "ORDER BY ... USING is not supported");
            x = NULL;
            break;
        }
        okeys[i] = (ex_sort_key){-1, sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC,
                                 sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_FIRST};
        if (!(args[1 + i] = sq_bind_expr(c, sb->node, sc, ag)))
            x = NULL;
    }
    ag->inside = false;
    if (!x || (f->agg_filter && !filt))
        return NULL;
    sq_expr *x0 = x;
    if (x->type.id != PA_TYPE_VARCHAR && !(x = sq_cast(c, x, (pa_type){PA_TYPE_VARCHAR, 0, 0}, loc)))
        return NULL;
    if (f->agg_distinct)   /* PostgreSQL's rule: DISTINCT orders by its argument only */
        for (size_t i = 0; i < no; i++) {
            if (!sq_expr_equal(args[1 + i], x0) && !sq_expr_equal(args[1 + i], x)) {
                sq_fail(c, loc_of(f->agg_order[i]->sort_by->node), PA_EINVAL,
                        "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list");
                return NULL;
            }
        }
    if (!(x = filtered(c, filt, x, loc)))
        return NULL;
    args[0] = x;
    e->kind = SQ_E_OSAGG;
    e->sub = 3;
    e->flag = f->agg_distinct;
    e->loc = loc;
    e->col = -1;
    e->type = (pa_type){PA_TYPE_VARCHAR, 0, 0};
    e->n_args = 1 + (int)no;
    e->args = args;
    e->win = win;
    e->depth = 1;
    for (int i = 0; i < e->n_args; i++)
        if (args[i]->depth + 1 > e->depth)
            e->depth = args[i]->depth + 1;
    e->tx = ex_expr_col_typed(c->plan, 0, e->type, c->err);
    return e->tx ? e : NULL;
}

/* The variances and standard deviations from exact sums, as DOUBLE:
 * (n * sum(x^2) - sum(x)^2) / (n * (n - 1)) (samp) or / n^2 (pop), with
 * n = count(x). For integers and DECIMAL the numerator is exact (DECIMAL
 * arithmetic, an overflow an error), so only the last division rounds;
 * DOUBLE sums round as they go. One row gives NULL for samp, as in
 * PostgreSQL; a rounding below zero is clamped to 0. */
/* The window call tpl with another function kind over arg (its
 * partition, order and frame kept): variance windows from sums. */
static sq_expr *win_like(sq_ctx *c, const sq_expr *tpl, ex_window_kind kind, sq_expr *arg)
{
    const sq_win *tw = tpl->win;
    int skip = tw->n_arg + tw->n_dflt, n = 1 + tpl->n_args - skip;
    sq_win *w = sq_alloc(&c->A, sizeof *w);
    sq_expr **args = sq_alloc(&c->A, (size_t)n * sizeof *args);
    sq_expr *e = sq_alloc(&c->A, sizeof *e);
    if (!w || !args || !e || !arg) {
        if (arg)
            sq_fail(c, tpl->loc, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    *w = *tw;
    w->fn.kind = kind;
    w->n_arg = 1;
    w->n_dflt = 0;
    args[0] = arg;
    for (int i = skip; i < tpl->n_args; i++)
        args[1 + i - skip] = tpl->args[i];
    *e = *tpl;
    e->args = args;
    e->n_args = n;
    e->win = w;
    e->depth = arg->depth + 1 > tpl->depth ? arg->depth + 1 : tpl->depth;
    ex_window_fn probe = w->fn;
    probe.column = 0;
    if (ex_window_type(&probe, &arg->type, &e->type, c->err) != PA_OK)
        return NULL;
    e->tx = ex_expr_col_typed(c->plan, 0, e->type, c->err);
    return e->tx ? e : NULL;
}

/* tpl NULL: the aggregates SUM / COUNT; else windows like tpl. */
static sq_expr *sum_or_count(sq_ctx *c, const sq_expr *tpl, bool count, sq_expr *x, int loc)
{
    if (tpl)
        return win_like(c, tpl, count ? EX_WIN_COUNT : EX_WIN_SUM, x);
    return x ? agg_node(c, count ? EX_AGG_COUNT : EX_AGG_SUM, x, loc) : NULL;
}

/* The sums of var(DISTINCT dx): SUM(DISTINCT x), SUM over the distinct x
 * of x * x (sq), COUNT(DISTINCT x), x being dx cast for exact squares: all
 * three over the distinct (keys, dx) rows (bind_select's aggregate()), so
 * they mix with SUM / AVG / COUNT (DISTINCT dx). */
static bool distinct_sums(sq_ctx *c, sq_expr *dx, sq_expr *x, sq_expr *sq, sq_expr **s1, sq_expr **s2,
                          sq_expr **n, int loc)
{
    *s1 = agg_node(c, EX_AGG_SUM, x, loc);
    *s2 = agg_node(c, EX_AGG_SUM, sq, loc);
    *n = agg_node(c, EX_AGG_COUNT_DISTINCT, x, loc);
    if (!*s1 || !*s2 || !*n)
        return false;
    (*s1)->flag = (*s2)->flag = true;
    (*s1)->dx = (*s2)->dx = (*n)->dx = dx;
    return true;
}

static sq_expr *variance(sq_ctx *c, sq_expr *x, bool pop, bool root, int loc, const sq_expr *tpl, bool distinct)
{
    pa_type dbl = {PA_TYPE_DOUBLE, 0, 0};
    if (x->type.id == PA_TYPE_REAL && !(x = sq_cast(c, x, dbl, loc)))
        return NULL;
    if (x->type.id != PA_TYPE_INTEGER && x->type.id != PA_TYPE_BIGINT && x->type.id != PA_TYPE_DECIMAL &&
        x->type.id != PA_TYPE_DOUBLE) {
        sq_fail(c, loc, PA_EINVAL, "%s needs a number, not %s", root ? "stddev" : "variance", pa_type_name(x->type.id));
        return NULL;
    }
    sq_expr *dx = x;
    /* Squares in 128 bits: DECIMAL(38, s), integers as DECIMAL(38, 0). */
    if (x->type.id != PA_TYPE_DOUBLE)
        x = sq_cast(c, x, (pa_type){PA_TYPE_DECIMAL, 38, (uint8_t)(x->type.id == PA_TYPE_DECIMAL ? x->type.scale : 0)},
                    loc);
    if (!x)
        return NULL;
    sq_expr *xx[2] = {x, x};
    sq_expr *sq = sq_make(c, SQ_E_ARITH, EX_MUL, xx, 2, loc);
    sq_expr *s1, *s2, *n;
    if (distinct) {
        if (!sq || !distinct_sums(c, dx, x, sq, &s1, &s2, &n, loc))
            return NULL;
    } else {
        s1 = sum_or_count(c, tpl, false, x, loc), s2 = sum_or_count(c, tpl, false, sq, loc);
        n = sum_or_count(c, tpl, true, x, loc);
    }
    if (!s1 || !s2 || !n)
        return NULL;
    sq_expr *a[2] = {n, s2}, *b[2] = {s1, s1};
    sq_expr *num[2] = {sq_make(c, SQ_E_ARITH, EX_MUL, a, 2, loc), sq_make(c, SQ_E_ARITH, EX_MUL, b, 2, loc)};
    sq_expr *top = sq_cast(c, sq_make(c, SQ_E_ARITH, EX_SUB, num, 2, loc), dbl, loc);
    /* The divisor is NULL where there are too few rows (n <= 1 for samp,
     * n = 0 for pop), so the quotient is NULL there, not a division by 0
     * (the CASE's branches are all evaluated). */
    sq_expr *lim = sq_const(c, ex_expr_int(c->plan, pop ? 0 : 1, c->err), loc);
    sq_expr *one = sq_const(c, ex_expr_int(c->plan, 1, c->err), loc);
    sq_expr *nm[2] = {n, pop ? lim : one}, *le[2] = {n, lim};
    sq_expr *dd[2] = {sq_cast(c, n, dbl, loc), sq_cast(c, sq_make(c, SQ_E_ARITH, EX_SUB, nm, 2, loc), dbl, loc)};
    if (pop)
        dd[1] = sq_cast(c, n, dbl, loc);
    sq_expr *dw[3] = {sq_make(c, SQ_E_CMP, EX_LE, le, 2, loc), sq_const(c, ex_expr_null(c->plan, dbl, c->err), loc),
                      sq_make(c, SQ_E_ARITH, EX_MUL, dd, 2, loc)};
    sq_expr *q[2] = {top, sq_make(c, SQ_E_CASE, 0, dw, 3, loc)};
    sq_expr *v = sq_make(c, SQ_E_ARITH, EX_DIV, q, 2, loc);
    /* Below zero by rounding: 0. */
    sq_expr *zero = sq_const(c, ex_expr_double(c->plan, 0.0, c->err), loc);
    sq_expr *lz[2] = {v, zero};
    sq_expr *w[3] = {sq_make(c, SQ_E_CMP, EX_LT, lz, 2, loc), zero, v};
    sq_expr *r = sq_make(c, SQ_E_CASE, 0, w, 3, loc);
    return r && root ? sq_math(c, EX_SQRT, r, NULL, 0, false, loc) : r;
}

static sq_expr *bind_agg(sq_ctx *c, PgQuery__FuncCall *f, const char *fn, sq_scope *sc, sq_aggctx *ag)
{
    int loc = f->location;
    if (!agg_allowed(c, ag, loc))
        return NULL;
    /* ORDER BY inside count, sum, avg, min, max, bool_and/or and the
     * variances: bound (its errors are the user's) and dropped, as their
     * values do not depend on the order (DOUBLE sums round in the engine's
     * order either way). */
    for (size_t i = 0; i < f->n_agg_order; i++) {
        ag->inside = true;
        sq_expr *k = sq_bind_expr(c, f->agg_order[i]->sort_by->node, sc, ag);
        ag->inside = false;
        if (!k)
            return NULL;
    }
    /* FILTER (WHERE p): the aggregate of CASE WHEN p THEN x END, since
     * every aggregate skips NULLs (COUNT(*) counts CASE WHEN p THEN 1 END). */
    sq_expr *filt = NULL;
    if (f->agg_filter) {
        ag->inside = true;
        filt = sq_bind_expr(c, f->agg_filter, sc, ag);
        ag->inside = false;
        if (!filt)
            return NULL;
    }
    ex_agg_kind k;
    sq_expr *arg = NULL;
    if (f->agg_star) {
        if (strcmp(fn, "count") != 0) {
            sq_fail(c, loc, PA_EINVAL, "%s(*) is not a function; only count(*)", fn);
            return NULL;
        }
        k = EX_AGG_COUNT_STAR;
    } else {
        if (f->n_args != 1) {
            sq_fail(c, loc, PA_EINVAL, "%s takes one argument", fn);
            return NULL;
        }
        if (!strcmp(fn, "count") && f->agg_distinct && f->args[0]->node_case == PG_QUERY__NODE__NODE_ROW_EXPR)
            return count_distinct_row(c, f->args[0]->row_expr, filt, sc, ag, loc);
        ag->inside = true;
        arg = sq_bind_expr(c, f->args[0], sc, ag);
        ag->inside = false;
        if (!arg)
            return NULL;
        bool boolean = !strcmp(fn, "bool_and") || !strcmp(fn, "bool_or") || !strcmp(fn, "every");
        if (boolean && arg->type.id != PA_TYPE_BOOLEAN) {
            sq_fail(c, loc, PA_EINVAL, "%s needs a boolean, not %s", fn, pa_type_name(arg->type.id));
            return NULL;
        }
        if (!strcmp(fn, "sum"))
            k = EX_AGG_SUM;
        else if (!strcmp(fn, "count"))
            k = f->agg_distinct ? EX_AGG_COUNT_DISTINCT : EX_AGG_COUNT;
        else if (!strcmp(fn, "avg"))
            k = EX_AGG_AVG;
        else if (!strcmp(fn, "min") || !strcmp(fn, "bool_and") || !strcmp(fn, "every"))
            k = EX_AGG_MIN;   /* FALSE < TRUE: AND is the least */
        else if (!strcmp(fn, "max") || !strcmp(fn, "bool_or"))
            k = EX_AGG_MAX;
        else
            k = EX_AGG_SUM;   /* the variances: sums below */
        bool var = !strncmp(fn, "stddev", 6) || !strncmp(fn, "var", 3);
        if (!(arg = filtered(c, filt, arg, loc)))
            return NULL;
        if (var)
            return variance(c, arg, strstr(fn, "_pop") != NULL, !strncmp(fn, "stddev", 6), loc, NULL, f->agg_distinct);
        sq_expr *e = agg_node(c, k, arg, loc);
        if (e && f->agg_distinct && (k == EX_AGG_SUM || k == EX_AGG_AVG))
            e->flag = true;   /* SUM / AVG (DISTINCT): bind_select's aggregate() */
        return e;
    }
    if (filt) {
        if (!(arg = filtered(c, filt, sq_const(c, ex_expr_int(c->plan, 1, c->err), loc), loc)))
            return NULL;
        k = EX_AGG_COUNT;
    }
    return agg_node(c, k, arg, loc);
}

/* GROUPING(args): a placeholder until the keys are known (bind_select's
 * post_agg makes it the bits of the row's grouping set). */
static sq_expr *bind_grouping(sq_ctx *c, PgQuery__GroupingFunc *f, sq_scope *sc, sq_aggctx *ag)
{
    int loc = f->location;
    if (!ag || !ag->allow || ag->inside) {
        sq_fail(c, loc, PA_EINVAL, "GROUPING is not allowed in %s", ag && ag->clause ? ag->clause : "this place");
        return NULL;
    }
    if (f->n_args < 1 || f->n_args > 31) {
        sq_fail(c, loc, PA_EINVAL, "GROUPING takes 1 to 31 arguments");
        return NULL;
    }
    sq_expr *e = sq_alloc(&c->A, sizeof *e);
    sq_expr **args = sq_alloc(&c->A, f->n_args * sizeof *args);
    if (!e || !args) {
        sq_fail(c, loc, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    ag->inside = true;
    for (size_t i = 0; i < f->n_args; i++)
        if (!(args[i] = sq_bind_expr(c, f->args[i], sc, ag))) {
            ag->inside = false;
            return NULL;
        }
    ag->inside = false;
    e->kind = SQ_E_GROUPING;
    e->loc = loc;
    e->col = -1;
    e->type = (pa_type){PA_TYPE_INTEGER, 0, 0};
    e->n_args = (int)f->n_args;
    e->args = args;
    e->tx = ex_expr_col_typed(c->plan, 0, e->type, c->err);
    return e->tx ? e : NULL;
}

/* ------------------------------------------------------ window functions */

/* PostgreSQL's frame option bits (nodes/parsenodes.h). */
enum {
    FO_NONDEFAULT = 0x1, FO_RANGE = 0x2, FO_ROWS = 0x4, FO_GROUPS = 0x8, FO_BETWEEN = 0x10,
    FO_START_UNBOUNDED_PRECEDING = 0x20, FO_END_UNBOUNDED_PRECEDING = 0x40,
    FO_START_UNBOUNDED_FOLLOWING = 0x80, FO_END_UNBOUNDED_FOLLOWING = 0x100,
    FO_START_CURRENT_ROW = 0x200, FO_END_CURRENT_ROW = 0x400,
    FO_START_OFFSET_PRECEDING = 0x800, FO_END_OFFSET_PRECEDING = 0x1000,
    FO_START_OFFSET_FOLLOWING = 0x2000, FO_END_OFFSET_FOLLOWING = 0x4000,
    FO_EXCLUDE = 0x8000 | 0x10000 | 0x20000,
};

static bool win_int(sq_ctx *c, pgn *n, sq_scope *sc, const char *what, int64_t *v)
{
    char b[128];
    pa_type t;
    if (!win_const(c, n, sc, what, b, sizeof b, &t))
        return false;
    char *end;
    errno = 0;
    long long x = strtoll(b, &end, 10);
    if (*end || errno || (t.id != PA_TYPE_INTEGER && t.id != PA_TYPE_BIGINT)) {
        sq_fail(c, loc_of(n), PA_EINVAL, "%s must be an integer, not %s", what, b);
        return false;
    }
    *v = x;
    return true;
}

/* A RANGE offset in the representation of the ORDER BY key's type. */
static bool win_range_offset(sq_ctx *c, pgn *n, sq_scope *sc, pa_type key, int64_t *vi, double *vd)
{
    char b[128];
    pa_type t;
    if (!win_const(c, n, sc, "a RANGE offset", b, sizeof b, &t))
        return false;
    char *end;
    errno = 0;
    long double x = strtold(b, &end);
    if (*end || errno || !(x >= 0)) {
        sq_fail(c, loc_of(n), PA_EINVAL, "invalid preceding or following size in window function: %s", b);
        return false;
    }
    if (pa_type_is_float(key.id)) {
        *vd = (double)x;
        return true;
    }
    long double scale = 1;
    for (int k = 0; key.id == PA_TYPE_DECIMAL && k < key.scale; k++)
        scale *= 10;
    long double u = x * scale;
    if (u != (long double)(int64_t)u || u > 9e18L) {
        sq_fail(c, loc_of(n), PA_EINVAL, "RANGE offset %s does not fit the ORDER BY column's type %s", b,
                pa_type_name(key.id));
        return false;
    }
    *vi = (int64_t)u;
    return true;
}

/* The named window `name` of the block's WINDOW clause, or NULL. */
static PgQuery__WindowDef *named_window(sq_ctx *c, const char *name)
{
    for (size_t i = 0; i < c->n_windows; i++) {
        PgQuery__WindowDef *w = c->windows[i]->window_def;
        if (w && w->name && !strcmp(w->name, name))
            return w;
    }
    return NULL;
}

static sq_expr *bind_window(sq_ctx *c, PgQuery__FuncCall *f, const char *fn, sq_scope *sc, sq_aggctx *ag)
{
    int loc = f->location;
    if (ag && ag->inside) {
        sq_fail(c, loc, PA_EINVAL, "aggregate function calls cannot contain window function calls");
        return NULL;
    }
    if (ag && ag->in_window) {
        sq_fail(c, loc, PA_EINVAL, "window function calls cannot be nested");
        return NULL;
    }
    if (!ag || !ag->window) {
        sq_fail(c, loc, PA_EINVAL, "window functions are not allowed in %s", ag && ag->clause ? ag->clause : "this place");
        return NULL;
    }
    if (f->agg_distinct) {
        sq_fail(c, loc, PA_EUNSUPPORTED, "DISTINCT is not implemented for window functions");
        return NULL;
    }
    if (f->n_agg_order) {
        sq_fail(c, loc, PA_EUNSUPPORTED, "ORDER BY inside %s(...) OVER is not supported", fn);
        return NULL;
    }
    /* The window: its own clauses, or a named one (OVER w), or a named one
     * extended with ORDER BY and a frame (OVER (w ORDER BY ...)). */
    PgQuery__WindowDef *w = f->over, *base = NULL;
    if (w->name && *w->name) {
        if (!(base = named_window(c, w->name))) {
            sq_fail(c, w->location >= 0 ? w->location : loc, PA_EINVAL, "window \"%s\" does not exist", w->name);
            return NULL;
        }
        w = base;
        base = NULL;
    } else if (w->refname && *w->refname) {
        if (!(base = named_window(c, w->refname))) {
            sq_fail(c, w->location >= 0 ? w->location : loc, PA_EINVAL, "window \"%s\" does not exist", w->refname);
            return NULL;
        }
        if (w->n_partition_clause) {
            sq_fail(c, w->location, PA_EINVAL, "cannot override PARTITION BY clause of window \"%s\"", w->refname);
            return NULL;
        }
        if (w->n_order_clause && base->n_order_clause) {
            sq_fail(c, w->location, PA_EINVAL, "cannot override ORDER BY clause of window \"%s\"", w->refname);
            return NULL;
        }
        if (base->frame_options & FO_NONDEFAULT) {
            sq_fail(c, w->location, PA_EINVAL, "cannot copy window \"%s\" because it has a frame clause", w->refname);
            return NULL;
        }
    }
    size_t n_part = base ? base->n_partition_clause : w->n_partition_clause;
    pgn **part = base ? base->partition_clause : w->partition_clause;
    size_t n_order = base && base->n_order_clause ? base->n_order_clause : w->n_order_clause;
    pgn **order = base && base->n_order_clause ? base->order_clause : w->order_clause;
    int fo = w->frame_options;

    static const struct {
        const char *name;
        int kind, min_args, max_args;
    } fns[] = {
        {"row_number", EX_WIN_ROW_NUMBER, 0, 0},     {"rank", EX_WIN_RANK, 0, 0},
        {"dense_rank", EX_WIN_DENSE_RANK, 0, 0},     {"percent_rank", EX_WIN_PERCENT_RANK, 0, 0},
        {"cume_dist", EX_WIN_CUME_DIST, 0, 0},       {"ntile", EX_WIN_NTILE, 1, 1},
        {"lag", EX_WIN_SHIFT, 1, 3},                 {"lead", EX_WIN_SHIFT, 1, 3},
        {"first_value", EX_WIN_FIRST_VALUE, 1, 1},   {"last_value", EX_WIN_LAST_VALUE, 1, 1},
        {"nth_value", EX_WIN_NTH_VALUE, 2, 2},       {"count", EX_WIN_COUNT, 1, 1},
        {"sum", EX_WIN_SUM, 1, 1},                   {"avg", EX_WIN_AVG, 1, 1},
        {"min", EX_WIN_MIN, 1, 1},                   {"max", EX_WIN_MAX, 1, 1},
        {"bool_and", EX_WIN_MIN, 1, 1},              {"every", EX_WIN_MIN, 1, 1},
        {"bool_or", EX_WIN_MAX, 1, 1},
        /* the variances: sums and a count over the window (variance()) */
        {"stddev", EX_WIN_COUNT, 1, 1},              {"stddev_samp", EX_WIN_COUNT, 1, 1},
        {"stddev_pop", EX_WIN_COUNT, 1, 1},          {"variance", EX_WIN_COUNT, 1, 1},
        {"var_samp", EX_WIN_COUNT, 1, 1},            {"var_pop", EX_WIN_COUNT, 1, 1},
    };
    bool var = !strncmp(fn, "stddev", 6) || !strncmp(fn, "var", 3);
    int kind = -1, min_args = 0, max_args = 0;
    for (size_t k = 0; k < sizeof fns / sizeof fns[0]; k++)
        if (!strcmp(fn, fns[k].name)) {
            kind = fns[k].kind;
            min_args = fns[k].min_args;
            max_args = fns[k].max_args;
        }
    if (kind < 0) {
        sq_fail(c, loc, PA_EUNSUPPORTED,
                sq_is_aggregate_name(fn) ? "%s as a window function is not supported"
                                         : "%s is not a window function (or not supported as one)", fn);
        return NULL;
    }
    if (f->agg_star) {
        if (kind != EX_WIN_COUNT) {
            sq_fail(c, loc, PA_EINVAL, "%s(*) is not a function; only count(*)", fn);
            return NULL;
        }
        kind = EX_WIN_COUNT_STAR;
        min_args = max_args = 0;
    }
    if ((int)f->n_args < min_args || (int)f->n_args > max_args) {
        sq_fail(c, loc, PA_EINVAL, "%s takes %d%s argument%s", fn, min_args,
                max_args > min_args ? (max_args - min_args > 1 ? " to 3" : " or 2") : "", max_args == 1 ? "" : "s");
        return NULL;
    }
    if (f->agg_filter && kind < EX_WIN_COUNT_STAR) {
        sq_fail(c, loc, PA_EINVAL, "FILTER is not implemented for non-aggregate window functions");
        return NULL;
    }
    if (fo & FO_GROUPS) {
        sq_fail(c, w->location, PA_EUNSUPPORTED, "GROUPS frames are not supported (ROWS and RANGE are)");
        return NULL;
    }
    if (fo & FO_EXCLUDE) {
        sq_fail(c, w->location, PA_EUNSUPPORTED, "EXCLUDE in a frame is not supported");
        return NULL;
    }

    sq_win *win = sq_alloc(&c->A, sizeof *win);
    int n_all = (int)(f->n_args + n_part + n_order) + 2;
    sq_expr **args = sq_alloc(&c->A, (size_t)n_all * sizeof *args);
    ex_sort_key *okeys = sq_alloc(&c->A, (n_order + 1) * sizeof *okeys);
    sq_expr *e = sq_alloc(&c->A, sizeof *e);
    if (!win || !args || !okeys || !e) {
        sq_fail(c, loc, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    memset(win, 0, sizeof *win);
    win->fn.kind = (ex_window_kind)kind;
    win->fn.column = -1;
    win->fn.n = 1;
    win->order = okeys;
    int na = 0;
    bool saved = ag->in_window;
    ag->in_window = true;
    sq_expr *arg = NULL, *dflt = NULL;
    if (kind != EX_WIN_ROW_NUMBER && kind != EX_WIN_RANK && kind != EX_WIN_DENSE_RANK && kind != EX_WIN_NTILE &&
        kind != EX_WIN_PERCENT_RANK && kind != EX_WIN_CUME_DIST && kind != EX_WIN_COUNT_STAR) {
        if (!(arg = sq_bind_expr(c, f->args[0], sc, ag)))
            goto fail;
    }
    if ((!strcmp(fn, "bool_and") || !strcmp(fn, "bool_or") || !strcmp(fn, "every")) &&
        arg->type.id != PA_TYPE_BOOLEAN) {
        sq_fail(c, loc, PA_EINVAL, "%s needs a boolean, not %s", fn, pa_type_name(arg->type.id));
        goto fail;
    }
    if (f->agg_filter) {
        sq_aggctx fa = *ag;
        sq_expr *filt = sq_bind_expr(c, f->agg_filter, sc, &fa);
        if (!filt)
            goto fail;
        if (filt->type.id != PA_TYPE_BOOLEAN) {
            sq_fail(c, loc, PA_EINVAL, "FILTER needs a boolean condition, not %s", pa_type_name(filt->type.id));
            goto fail;
        }
        if (kind == EX_WIN_COUNT_STAR) {
            kind = EX_WIN_COUNT;
            win->fn.kind = EX_WIN_COUNT;
            arg = sq_const(c, ex_expr_int(c->plan, 1, c->err), loc);
        }
        sq_expr *wv[2] = {filt, arg};
        if (!(arg = sq_make(c, SQ_E_CASE, 0, wv, 2, loc)))
            goto fail;
    }
    if (kind == EX_WIN_NTILE && !win_int(c, f->args[0], sc, "the argument of ntile", &win->fn.n))
        goto fail;
    if (kind == EX_WIN_NTH_VALUE && !win_int(c, f->args[1], sc, "the argument of nth_value", &win->fn.n))
        goto fail;
    if ((kind == EX_WIN_NTILE || kind == EX_WIN_NTH_VALUE) && win->fn.n < 1) {
        sq_fail(c, loc, PA_EINVAL, "argument of %s must be greater than zero", fn);
        goto fail;
    }
    if (kind == EX_WIN_SHIFT) {
        int64_t off = 1;
        if (f->n_args > 1 && !win_int(c, f->args[1], sc, "the offset of lag and lead", &off))
            goto fail;
        if (off < -(int64_t)INT32_MAX || off > INT32_MAX)
            off = off < 0 ? -(int64_t)INT32_MAX : INT32_MAX;
        win->fn.n = !strcmp(fn, "lag") ? off : -off;
        if (f->n_args > 2) {
            if (!(dflt = sq_bind_expr(c, f->args[2], sc, ag)))
                goto fail;
            pa_type t;
            if (!sq_common_type(c, arg->type, dflt->type, &t)) {
                sq_fail(c, loc_of(f->args[2]), PA_EINVAL, "the default of %s (%s) does not match its argument (%s)",
                        fn, pa_type_name(dflt->type.id), pa_type_name(arg->type.id));
                goto fail;
            }
        }
    }
    if (arg) {
        args[na++] = arg;
        win->n_arg = 1;
    }
    if (dflt) {
        args[na++] = dflt;
        win->n_dflt = 1;
    }
    for (size_t i = 0; i < n_part; i++)
        if (!(args[na++] = sq_bind_expr(c, part[i], sc, ag)))
            goto fail;
    win->n_part = (int)n_part;
    for (size_t i = 0; i < n_order; i++) {
        PgQuery__SortBy *sb = order[i]->sort_by;
        if (sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_USING) {
            sq_fail(c, sb->location, PA_EUNSUPPORTED, "ORDER BY ... USING is not supported");
            goto fail;
        }
        bool desc = sb->sortby_dir == PG_QUERY__SORT_BY_DIR__SORTBY_DESC;
        okeys[i].descending = desc;
        okeys[i].nulls_first = sb->sortby_nulls == PG_QUERY__SORT_BY_NULLS__SORTBY_NULLS_FIRST ? true
                               : false;   /* NULLS LAST by default, DESC too, as the statement's ORDER BY */
        okeys[i].column = -1;
        if (!(args[na++] = sq_bind_expr(c, sb->node, sc, ag)))
            goto fail;
    }
    win->n_order = (int)n_order;
    ag->in_window = saved;

    /* The frame (PostgreSQL's default: RANGE UNBOUNDED PRECEDING to CURRENT
     * ROW, which without ORDER BY is the whole partition). */
    ex_window_frame *fr = &win->fn.frame;
    fr->rows = (fo & FO_ROWS) != 0;
    fr->start = fo & FO_START_UNBOUNDED_PRECEDING ? EX_FB_UNBOUNDED_PRECEDING
                : fo & FO_START_OFFSET_PRECEDING   ? EX_FB_PRECEDING
                : fo & FO_START_OFFSET_FOLLOWING   ? EX_FB_FOLLOWING
                : fo & FO_START_UNBOUNDED_FOLLOWING ? EX_FB_UNBOUNDED_FOLLOWING
                                                    : EX_FB_CURRENT_ROW;
    fr->end = fo & FO_END_UNBOUNDED_FOLLOWING ? EX_FB_UNBOUNDED_FOLLOWING
              : fo & FO_END_OFFSET_PRECEDING   ? EX_FB_PRECEDING
              : fo & FO_END_OFFSET_FOLLOWING   ? EX_FB_FOLLOWING
              : fo & FO_END_UNBOUNDED_PRECEDING ? EX_FB_UNBOUNDED_PRECEDING
                                                : EX_FB_CURRENT_ROW;
    if (!(fo & FO_NONDEFAULT)) {
        fr->rows = false;
        fr->start = EX_FB_UNBOUNDED_PRECEDING;
        fr->end = EX_FB_CURRENT_ROW;
    }
    if (fr->start == EX_FB_UNBOUNDED_FOLLOWING) {
        sq_fail(c, w->location, PA_EINVAL, "frame start cannot be UNBOUNDED FOLLOWING");
        return NULL;
    }
    if (fr->end == EX_FB_UNBOUNDED_PRECEDING) {
        sq_fail(c, w->location, PA_EINVAL, "frame end cannot be UNBOUNDED PRECEDING");
        return NULL;
    }
    if ((fr->start == EX_FB_FOLLOWING && (fr->end == EX_FB_PRECEDING || fr->end == EX_FB_CURRENT_ROW)) ||
        (fr->start == EX_FB_CURRENT_ROW && fr->end == EX_FB_PRECEDING)) {
        sq_fail(c, w->location, PA_EINVAL, "frame starting from %s cannot have %s rows",
                fr->start == EX_FB_CURRENT_ROW ? "current row" : "following rows",
                fr->start == EX_FB_CURRENT_ROW ? "preceding" : "preceding or current");
        return NULL;
    }
    bool start_off = fr->start == EX_FB_PRECEDING || fr->start == EX_FB_FOLLOWING;
    bool end_off = fr->end == EX_FB_PRECEDING || fr->end == EX_FB_FOLLOWING;
    if ((start_off || end_off) && !fr->rows) {
        if (n_order != 1) {
            sq_fail(c, w->location, PA_EINVAL, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column");
            return NULL;
        }
        pa_type kt = args[na - 1]->type;
        if (kt.id != PA_TYPE_INTEGER && kt.id != PA_TYPE_BIGINT && !pa_type_is_float(kt.id) &&
            kt.id != PA_TYPE_DECIMAL) {
            sq_fail(c, w->location, PA_EUNSUPPORTED,
                    "RANGE with offset PRECEDING/FOLLOWING over an ORDER BY column of type %s is not supported (numbers are)",
                    pa_type_name(kt.id));
            return NULL;
        }
        if ((start_off && !win_range_offset(c, w->start_offset, sc, kt, &fr->start_n, &fr->start_d)) ||
            (end_off && !win_range_offset(c, w->end_offset, sc, kt, &fr->end_n, &fr->end_d)))
            return NULL;
    } else {
        if ((start_off && !win_int(c, w->start_offset, sc, "a ROWS offset", &fr->start_n)) ||
            (end_off && !win_int(c, w->end_offset, sc, "a ROWS offset", &fr->end_n)))
            return NULL;
        if (fr->start_n < 0 || fr->end_n < 0) {
            sq_fail(c, w->location, PA_EINVAL, "frame starting or ending offset must not be negative");
            return NULL;
        }
    }

    pa_type t;
    pa_type at = arg ? arg->type : (pa_type){PA_TYPE_BIGINT, 0, 0};
    ex_window_fn probe = win->fn;
    probe.column = arg ? 0 : -1;
    if (ex_window_type(&probe, &at, &t, c->err) != PA_OK) {
        c->err_loc = loc;
        return NULL;
    }
    if (dflt)
        sq_common_type(c, arg->type, dflt->type, &t);
    memset(e, 0, sizeof *e);
    e->kind = SQ_E_WINDOW;
    e->loc = loc;
    e->col = -1;
    e->type = t;
    e->n_args = na;
    e->args = args;
    e->win = win;
    e->depth = 1;
    for (int i = 0; i < na; i++)
        if (args[i]->depth + 1 > e->depth)
            e->depth = args[i]->depth + 1;
    e->tx = ex_expr_col_typed(c->plan, 0, t, c->err);
    if (e->tx && var)
        return variance(c, arg, strstr(fn, "_pop") != NULL, !strncmp(fn, "stddev", 6), loc, e, false);
    return e->tx ? e : NULL;
fail:
    ag->in_window = saved;
    return NULL;
}

sq_expr *sq_window_call(sq_ctx *c, ex_window_kind kind, sq_expr *arg, sq_expr **part, int np, sq_expr **order,
                        const ex_sort_key *dirs, int no, int loc)
{
    sq_win *win = sq_alloc(&c->A, sizeof *win);
    int na = arg ? 1 : 0;
    sq_expr **args = sq_alloc(&c->A, (size_t)(na + np + no + 1) * sizeof *args);
    ex_sort_key *okeys = sq_alloc(&c->A, (size_t)(no + 1) * sizeof *okeys);
    sq_expr *e = sq_alloc(&c->A, sizeof *e);
    if (!win || !args || !okeys || !e) {
        sq_fail(c, loc, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    memset(win, 0, sizeof *win);
    memset(e, 0, sizeof *e);
    win->fn.kind = kind;
    win->fn.column = -1;
    win->fn.n = 1;
    win->fn.frame = (ex_window_frame){false, EX_FB_UNBOUNDED_PRECEDING, EX_FB_CURRENT_ROW, 0, 0, 0, 0};
    win->n_arg = na;
    win->n_part = np;
    win->n_order = no;
    win->order = okeys;
    e->depth = 1;
    for (int i = 0; i < na + np + no; i++) {
        args[i] = i < na ? arg : i < na + np ? part[i - na] : order[i - na - np];
        if (!args[i])
            return NULL;
        if (args[i]->depth + 1 > e->depth)
            e->depth = args[i]->depth + 1;
    }
    for (int i = 0; i < no; i++)
        okeys[i] = dirs[i];
    pa_type t;
    ex_window_fn probe = win->fn;
    probe.column = arg ? 0 : -1;
    if (ex_window_type(&probe, arg ? &arg->type : NULL, &t, c->err) != PA_OK)
        return NULL;
    e->kind = SQ_E_WINDOW;
    e->loc = loc;
    e->col = -1;
    e->type = t;
    e->n_args = na + np + no;
    e->args = args;
    e->win = win;
    e->tx = ex_expr_col_typed(c->plan, 0, t, c->err);
    return e->tx ? e : NULL;
}

static sq_expr *bind_func(sq_ctx *c, PgQuery__FuncCall *f, sq_scope *sc, sq_aggctx *ag)
{
    int loc = f->location;
    const char *fn = f->n_funcname ? sq_node_name(f->funcname[f->n_funcname - 1]) : "";
    char lname[64];
    snprintf(lname, sizeof lname, "%s", fn ? fn : "");
    for (char *p = lname; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    if (f->over)
        return bind_window(c, f, lname, sc, ag);
    if (!strcmp(lname, "percentile_cont") || !strcmp(lname, "percentile_disc") || !strcmp(lname, "mode") ||
        !strcmp(lname, "median"))
        return bind_osagg(c, f, lname, sc, ag);
    if (!strcmp(lname, "string_agg") && !f->agg_within_group)
        return bind_string_agg(c, f, lname, sc, ag);
    if (f->agg_within_group) {
        sq_fail(c, loc, PA_EUNSUPPORTED, "%s is not an ordered-set aggregate (WITHIN GROUP is for percentile_cont, "
                                         "percentile_disc and mode)", lname);
        return NULL;
    }
    if (sq_is_aggregate_name(lname))
        return bind_agg(c, f, lname, sc, ag);
    if (f->agg_star || f->agg_distinct) {
        sq_fail(c, loc, PA_EUNSUPPORTED, "%s is not an aggregate function", lname);
        return NULL;
    }
    if (!strcmp(lname, "extract") || !strcmp(lname, "date_part")) {
        ex_field fld = EX_YEAR;
        if (f->n_args != 2 || extract_field(c, f->args[0], loc, &fld) != PA_OK)
            return f->n_args != 2 ? (sq_fail(c, loc, PA_EINVAL, "EXTRACT needs a field and a date"), NULL) : NULL;
        sq_expr *d = sq_bind_expr(c, f->args[1], sc, ag);
        return d ? sq_make(c, SQ_E_EXTRACT, fld, &d, 1, loc) : NULL;
    }
    static const struct {
        const char *name;
        ex_strfn fn;
        size_t min_args, max_args;
    } str_fns[] = {
        {"length", EX_LENGTH, 1, 1},      {"char_length", EX_LENGTH, 1, 1},  {"character_length", EX_LENGTH, 1, 1},
        {"octet_length", EX_OCTET_LENGTH, 1, 1}, {"strpos", EX_STRPOS, 2, 2}, {"position", EX_STRPOS, 2, 2},
        {"starts_with", EX_STARTS_WITH, 2, 2}, {"left", EX_LEFT, 2, 2},     {"right", EX_RIGHT, 2, 2},
        {"btrim", EX_BTRIM, 1, 2},        {"trim", EX_BTRIM, 1, 2},          {"ltrim", EX_LTRIM, 1, 2},
        {"rtrim", EX_RTRIM, 1, 2},        {"split_part", EX_SPLIT_PART, 3, 3},
    };
    for (size_t k = 0; k < sizeof str_fns / sizeof str_fns[0]; k++) {
        if (strcmp(lname, str_fns[k].name) != 0)
            continue;
        if (f->n_args < str_fns[k].min_args || f->n_args > str_fns[k].max_args) {
            sq_fail(c, loc, PA_EINVAL, "%s takes %zu%s argument%s", lname, str_fns[k].min_args,
                    str_fns[k].max_args > str_fns[k].min_args ? " or 2" : "", str_fns[k].max_args > 1 ? "s" : "");
            return NULL;
        }
        sq_expr *v[3] = {0};
        for (size_t i = 0; i < f->n_args; i++)
            if (!(v[i] = sq_bind_expr(c, f->args[i], sc, ag)))
                return NULL;
        return sq_make(c, SQ_E_STRFN, str_fns[k].fn, v, (int)f->n_args, loc);
    }
    static const struct {
        const char *name;
        ex_textfn fn;
        size_t min_args, max_args;
    } text_fns[] = {
        {"upper", EX_UPPER, 1, 1},     {"lower", EX_LOWER, 1, 1}, {"initcap", EX_INITCAP, 1, 1},
        {"reverse", EX_REVERSE, 1, 1}, {"replace", EX_REPLACE, 3, 3}, {"lpad", EX_LPAD, 2, 3},
        {"rpad", EX_RPAD, 2, 3},       {"repeat", EX_REPEAT, 2, 2},   {"translate", EX_TRANSLATE, 3, 3},
        {"md5", EX_MD5, 1, 1},
    };
    for (size_t k = 0; k < sizeof text_fns / sizeof text_fns[0]; k++) {
        if (strcmp(lname, text_fns[k].name) != 0)
            continue;
        size_t lo = text_fns[k].min_args, hi = text_fns[k].max_args;
        if (f->n_args < lo || f->n_args > hi) {
            static const char *const count[] = {"", "one", "two", "three"};
            sq_fail(c, loc, PA_EINVAL, "%s takes %s%s%s argument%s", lname, count[lo], hi > lo ? " or " : "",
                    hi > lo ? count[hi] : "", hi > 1 ? "s" : "");
            return NULL;
        }
        sq_expr *v[3] = {0};
        for (size_t i = 0; i < f->n_args; i++) {
            if (!(v[i] = sq_bind_expr(c, f->args[i], sc, ag)))
                return NULL;
            bool count = i == 1 && (text_fns[k].fn == EX_LPAD || text_fns[k].fn == EX_RPAD || text_fns[k].fn == EX_REPEAT);
            if (count && is_untyped_null(v[i]))
                v[i] = null_const(c, (pa_type){PA_TYPE_INTEGER, 0, 0}, v[i]->loc);
            else if (!count)
                v[i] = as_text(c, v[i], false);
        }
        return sq_make(c, SQ_E_TEXT, text_fns[k].fn, v, (int)f->n_args, loc);
    }
    if (!strcmp(lname, "regexp_like") || !strcmp(lname, "regexp_replace")) {
        bool replace = lname[7] == 'r';
        size_t lo = replace ? 3 : 2;
        if (f->n_args < lo || f->n_args > lo + 1) {
            sq_fail(c, loc, PA_EINVAL, "%s takes %s or %s arguments", lname, replace ? "three" : "two",
                    replace ? "four" : "three");
            return NULL;
        }
        sq_expr *v[4] = {0};
        for (size_t i = 0; i < f->n_args; i++)
            if (!(v[i] = as_text(c, sq_bind_expr(c, f->args[i], sc, ag), false)))
                return NULL;
        return sq_make(c, SQ_E_REGEX, replace ? 2 : 0, v, (int)f->n_args, loc);
    }
    if (!strcmp(lname, "concat") || !strcmp(lname, "concat_ws")) {
        bool ws = lname[6] == '_';
        if (f->n_args < (ws ? 2u : 1u)) {
            sq_fail(c, loc, PA_EINVAL, "%s needs %s", lname, ws ? "a separator and at least one value" : "at least one value");
            return NULL;
        }
        sq_expr **v = sq_alloc(&c->A, f->n_args * sizeof *v);
        if (!v) {
            sq_fail(c, loc, PA_ENOMEM, "out of memory binding %s", lname);
            return NULL;
        }
        for (size_t i = 0; i < f->n_args; i++)
            if (!(v[i] = as_text(c, sq_bind_expr(c, f->args[i], sc, ag), !(ws && i == 0))))
                return NULL;
        if (ws && v[0]->type.id != PA_TYPE_VARCHAR) {
            sq_fail(c, loc, PA_EINVAL, "concat_ws: a separator of type %s (a string expected)",
                    pa_type_name(v[0]->type.id));
            return NULL;
        }
        return sq_make(c, SQ_E_CONCAT, ws, v, (int)f->n_args, loc);
    }
    if (!strcmp(lname, "date_trunc")) {
        ex_field fld = EX_YEAR;
        if (f->n_args != 2) {
            sq_fail(c, loc, PA_EINVAL, "date_trunc needs a field and a date or timestamp");
            return NULL;
        }
        if (extract_field(c, f->args[0], loc, &fld) != PA_OK)
            return NULL;
        sq_expr *d = sq_bind_expr(c, f->args[1], sc, ag);
        return d ? sq_make(c, SQ_E_DATE_TRUNC, fld, &d, 1, loc) : NULL;
    }
    if (!strcmp(lname, "now") || !strcmp(lname, "transaction_timestamp") || !strcmp(lname, "current_timestamp")) {
        if (f->n_args) {
            sq_fail(c, loc, PA_EINVAL, "%s takes no arguments", lname);
            return NULL;
        }
        return now_const(c, PA_TYPE_TIMESTAMPTZ, loc);
    }
    if (!strcmp(lname, "age")) {
        if (f->n_args < 1 || f->n_args > 2) {
            sq_fail(c, loc, PA_EINVAL, "age takes one or two timestamps");
            return NULL;
        }
        sq_expr *v[2];
        for (size_t i = 0; i < f->n_args; i++)
            if (!(v[i] = sq_bind_expr(c, f->args[i], sc, ag)))
                return NULL;
        if (f->n_args == 1) {   /* age(x) = age(current_date at midnight, x), PostgreSQL's */
            v[1] = v[0];
            if (!(v[0] = current_date(c, loc)))
                return NULL;
        }
        return sq_make(c, SQ_E_AGE, 0, v, 2, loc);
    }
    if (!strcmp(lname, "make_date")) {
        if (f->n_args != 3) {
            sq_fail(c, loc, PA_EINVAL, "make_date takes a year, a month and a day");
            return NULL;
        }
        sq_expr *v[3];
        for (int i = 0; i < 3; i++)
            if (!(v[i] = sq_bind_expr(c, f->args[i], sc, ag)))
                return NULL;
        return sq_make(c, SQ_E_MAKE_DATE, 0, v, 3, loc);
    }
    if (!strcmp(lname, "substring") || !strcmp(lname, "substr")) {
        if (f->n_args < 2 || f->n_args > 3) {
            sq_fail(c, loc, PA_EINVAL, "SUBSTRING needs a string, a start and an optional length");
            return NULL;
        }
        sq_expr *v[3] = {0};
        for (size_t i = 0; i < f->n_args; i++)
            if (!(v[i] = sq_bind_expr(c, f->args[i], sc, ag)))
                return NULL;
        return sq_make(c, SQ_E_SUBSTR, 0, v, (int)f->n_args, loc);
    }
    static const struct {
        const char *name;
        ex_math fn;
        size_t min_args, max_args;
    } math_fns[] = {
        {"sqrt", EX_SQRT, 1, 1},   {"cbrt", EX_CBRT, 1, 1},   {"exp", EX_EXP, 1, 1},       {"ln", EX_LN, 1, 1},
        {"log10", EX_LOG10, 1, 1}, {"log", EX_LOG, 1, 2},     {"power", EX_POWER, 2, 2},   {"pow", EX_POWER, 2, 2},
        {"floor", EX_FLOOR, 1, 1}, {"ceil", EX_CEIL, 1, 1},   {"ceiling", EX_CEIL, 1, 1},  {"trunc", EX_TRUNC, 1, 2},
        {"round", EX_ROUND, 1, 2}, {"sign", EX_SIGN, 1, 1},
    };
    for (size_t k = 0; k < sizeof math_fns / sizeof math_fns[0]; k++) {
        if (strcmp(lname, math_fns[k].name) != 0)
            continue;
        if (f->n_args < math_fns[k].min_args || f->n_args > math_fns[k].max_args) {
            sq_fail(c, loc, PA_EINVAL, "%s takes %s argument%s", lname,
                    math_fns[k].min_args == math_fns[k].max_args ? (math_fns[k].min_args == 1 ? "one" : "two")
                                                                 : "one or two",
                    math_fns[k].max_args == 1 ? "" : "s");
            return NULL;
        }
        ex_math fn = math_fns[k].fn;
        if ((fn == EX_ROUND || fn == EX_TRUNC) && f->n_args == 2) {
            /* The digits: an integer constant (as a column of digits per row is rare). */
            PgQuery__Node *dn = f->args[1];
            if (dn->node_case != PG_QUERY__NODE__NODE_A_CONST || dn->a_const->isnull ||
                dn->a_const->val_case != PG_QUERY__A__CONST__VAL_IVAL) {
                sq_fail(c, loc, PA_EUNSUPPORTED, "%s's digits must be an integer constant", lname);
                return NULL;
            }
            int32_t digits = dn->a_const->ival->ival;
            if (digits < -308 || digits > 308) {
                sq_fail(c, dn->a_const->location, PA_EINVAL, "%s's digits %d are out of range (-308 to 308)", lname,
                        (int)digits);
                return NULL;
            }
            sq_expr *x = sq_bind_expr(c, f->args[0], sc, ag);
            return x ? sq_math(c, fn, x, NULL, digits, true, loc) : NULL;
        }
        if (fn == EX_LOG && f->n_args == 1)
            fn = EX_LOG10;   /* PostgreSQL's log(x) is base 10 */
        sq_expr *x = sq_bind_expr(c, f->args[0], sc, ag), *y = NULL;
        if (!x || (f->n_args == 2 && !(y = sq_bind_expr(c, f->args[1], sc, ag))))
            return NULL;
        return sq_math(c, fn, x, y, 0, false, loc);
    }
    if (!strcmp(lname, "abs")) {
        /* CASE WHEN x < 0 THEN -x ELSE x END: x's type; -x of the smallest
         * integer overflows (an error, as in PostgreSQL). */
        if (f->n_args != 1) {
            sq_fail(c, loc, PA_EINVAL, "abs takes one argument");
            return NULL;
        }
        sq_expr *x = sq_bind_expr(c, f->args[0], sc, ag);
        if (!x)
            return NULL;
        if (x->type.id != PA_TYPE_INTEGER && x->type.id != PA_TYPE_BIGINT && x->type.id != PA_TYPE_DECIMAL &&
            !pa_type_is_float(x->type.id)) {
            sq_fail(c, loc, PA_EINVAL, "abs needs a number, not %s", pa_type_name(x->type.id));
            return NULL;
        }
        sq_expr *zero = sq_const(c, ex_expr_int(c->plan, 0, c->err), loc);
        sq_expr *v[2] = {x, zero};
        sq_expr *w[3] = {sq_make(c, SQ_E_CMP, EX_LT, v, 2, loc), sq_make(c, SQ_E_NEG, 0, &x, 1, loc), x};
        return sq_make(c, SQ_E_CASE, 0, w, 3, loc);
    }
    static const char *const known[] = {"sum",       "count",  "avg",  "min",    "max",      "extract", "date_part",
                                        "substring", "substr", "abs",  "coalesce", "nullif", "greatest", "least",
                                        "sqrt",      "cbrt",   "exp",  "ln",     "log",      "log10",   "power",
                                        "floor",     "ceil",   "trunc", "round", "sign", "date_trunc", "make_date", "age", "now",
                                        "length", "char_length", "octet_length", "strpos", "position",
                                        "starts_with", "left", "right", "btrim", "trim", "ltrim", "rtrim",
                                        "split_part", "upper", "lower", "initcap", "reverse", "replace", "lpad",
                                        "rpad", "repeat", "concat", "concat_ws", "translate", "md5",
                                        "regexp_like", "regexp_replace"};
    sq_suggest sg;
    sq_suggest_init(&sg, lname);
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        sq_suggest_offer(&sg, known[i]);
    if (sg.best)
        sq_fail(c, loc, PA_EUNSUPPORTED, "function %s is not supported; did you mean %s?", lname, sg.best);
    else
        sq_fail(c, loc, PA_EUNSUPPORTED, "function %s is not supported", lname);
    return NULL;
}

/* GREATEST / LEAST: NULL arguments are ignored (NULL only when all are),
 * as in PostgreSQL. Folded left to right: r = CASE WHEN v > r (v < r) OR r
 * IS NULL THEN v ELSE r END; each step reads r twice, so the tree doubles
 * per argument and the count is capped. */
static sq_expr *bind_minmax(sq_ctx *c, PgQuery__MinMaxExpr *m, sq_scope *sc, sq_aggctx *ag)
{
    int loc = m->location;
    bool greatest = m->op == PG_QUERY__MIN_MAX_OP__IS_GREATEST;
    if (m->n_args < 1 || m->n_args > 10) {
        sq_fail(c, loc, PA_EUNSUPPORTED, "%s with %d arguments is not supported (1 to 10 are)", greatest ? "GREATEST" : "LEAST",
                (int)m->n_args);
        return NULL;
    }
    sq_expr *v[10];
    for (size_t i = 0; i < m->n_args; i++)
        if (!(v[i] = sq_bind_expr(c, m->args[i], sc, ag)))
            return NULL;
    type_nulls(c, v, (int)m->n_args);
    pa_type t = v[0]->type;
    for (size_t i = 1; i < m->n_args; i++)
        if (!sq_common_type(c, t, v[i]->type, &t)) {
            sq_fail(c, loc, PA_EINVAL, "%s: cannot compare %s with %s", greatest ? "GREATEST" : "LEAST", pa_type_name(t.id),
                    pa_type_name(v[i]->type.id));
            return NULL;
        }
    for (size_t i = 0; i < m->n_args; i++)
        if (!(v[i] = sq_cast(c, v[i], t, loc)))
            return NULL;
    sq_expr *r = v[0];
    for (size_t i = 1; i < m->n_args && r; i++) {
        sq_expr *p[2] = {v[i], r};
        sq_expr *better = sq_make(c, SQ_E_CMP, greatest ? EX_GT : EX_LT, p, 2, loc);
        sq_expr *rn = sq_make(c, SQ_E_ISNULL, 0, &r, 1, loc);
        sq_expr *o[2] = {better, rn};
        sq_expr *w[3] = {better && rn ? sq_make(c, SQ_E_OR, 0, o, 2, loc) : NULL, v[i], r};
        r = sq_make(c, SQ_E_CASE, 0, w, 3, loc);
    }
    return r;
}

static sq_expr *bind_case(sq_ctx *c, PgQuery__CaseExpr *ce, sq_scope *sc, sq_aggctx *ag)
{
    int loc = ce->location;
    int n = (int)ce->n_args * 2 + (ce->defresult ? 1 : 0);
    sq_expr **v = sq_alloc(&c->A, (size_t)(n + 1) * sizeof *v);
    if (!v)
        return NULL;
    sq_expr *subject = ce->arg ? sq_bind_expr(c, ce->arg, sc, ag) : NULL;
    if (ce->arg && !subject)
        return NULL;
    for (size_t i = 0; i < ce->n_args; i++) {
        PgQuery__CaseWhen *w = ce->args[i]->case_when;
        sq_expr *cond = sq_bind_expr(c, w->expr, sc, ag);
        if (subject)
            cond = binary(c, SQ_E_CMP, EX_EQ, subject, cond, w->location);
        v[2 * i] = cond;
        v[2 * i + 1] = sq_bind_expr(c, w->result, sc, ag);
        if (!v[2 * i] || !v[2 * i + 1])
            return NULL;
    }
    if (ce->defresult && !(v[n - 1] = sq_bind_expr(c, ce->defresult, sc, ag)))
        return NULL;
    /* Type untyped NULL results from the other results. */
    sq_expr **res = sq_alloc(&c->A, (size_t)(ce->n_args + 1) * sizeof *res);
    if (!res) {
        sq_fail(c, loc, PA_ENOMEM, "out of memory binding a CASE of %d branches", (int)ce->n_args);
        return NULL;
    }
    int nr = 0;
    for (int i = 1; i < n - (ce->defresult ? 1 : 0); i += 2)
        res[nr++] = v[i];
    if (ce->defresult)
        res[nr++] = v[n - 1];
    type_nulls(c, res, nr);
    nr = 0;
    for (int i = 1; i < n - (ce->defresult ? 1 : 0); i += 2)
        v[i] = res[nr++];
    if (ce->defresult)
        v[n - 1] = res[nr++];
    if (ce->defresult && is_untyped_null(v[n - 1]))
        n--; /* ELSE NULL is the default */
    return sq_make(c, SQ_E_CASE, 0, v, n, loc);
}

static sq_expr *bind_sublink(sq_ctx *c, PgQuery__SubLink *sl, sq_scope *sc, sq_aggctx *ag);

/* Forget the error being returned (a correlation the domain method takes)
 * before binding again. */
static void clear_for_domain(sq_ctx *c)
{
    pa_err_clear(c->err);
    c->err_loc = -1;
    c->want_domain = false;
}

/* Bind subquery sel for q: as it stands (its correlation a join on its
 * WHERE conditions), or, where that cannot take its correlation (an error
 * with want_domain), again with a domain: D, the distinct values of the
 * outer columns it reads, in its FROM (sq_subq.domain). */
static int bind_subquery(sq_ctx *c, pgn *sel, sq_scope *sc, sq_node **plan, const char ***names, sq_subq *q)
{
    /* A subquery bound again (its enclosing one took a domain) that needed
     * a domain before needs one again: straight there (else each level of
     * nesting would double the work). */
    const void *key = sel && sel->node_case == PG_QUERY__NODE__NODE_SELECT_STMT ? (const void *)sel->select_stmt : NULL;
    for (int i = 0; key && sc && i < c->n_dom_hint; i++)
        if (c->dom_hint[i] == key)
            q->domain = true;
    c->want_domain = false;
    int rc = sq_bind_select(c, sel, sc, plan, names, q);
    if (rc == PA_OK || !c->want_domain || q->domain || !sc)
        return rc;
    clear_for_domain(c);
    if (key && c->n_dom_hint == c->cap_dom_hint) {
        int cap = c->cap_dom_hint ? 2 * c->cap_dom_hint : 8;
        const void **v = sq_alloc(&c->A, (size_t)cap * sizeof *v);
        if (!v)
            return sq_fail(c, q->loc, PA_ENOMEM, "binding: out of memory");
        if (c->n_dom_hint)
            memcpy(v, c->dom_hint, (size_t)c->n_dom_hint * sizeof *v);
        c->dom_hint = v;
        c->cap_dom_hint = cap;
    }
    if (key)
        c->dom_hint[c->n_dom_hint++] = key;
    *q = (sq_subq){.kind = q->kind, .test = q->test, .loc = q->loc, .domain = true};
    return sq_bind_select(c, sel, sc, plan, names, q);
}

/* The same aggregate of a correlated subquery: the subquery rewritten as
 * (SELECT agg(its column) FROM ... WHERE ...), a correlated scalar
 * aggregate, decorrelated as those are (COUNT 0, MIN and MAX NULL for an
 * outer row without inner rows). Only a plain SELECT of one column. */
static sq_expr *correlated_agg(sq_ctx *c, PgQuery__SubLink *sl, sq_scope *sc, ex_agg_kind k, int loc)
{
    const PgQuery__SelectStmt *o = sl->subselect && sl->subselect->node_case == PG_QUERY__NODE__NODE_SELECT_STMT
                                       ? sl->subselect->select_stmt
                                       : NULL;
    if (!o || o->op != PG_QUERY__SET_OPERATION__SETOP_NONE || o->n_target_list != 1 || o->n_group_clause ||
        o->having_clause || o->n_distinct_clause || o->limit_count || o->limit_offset || o->n_window_clause ||
        o->with_clause || !o->target_list[0]->res_target || !o->target_list[0]->res_target->val ||
        o->target_list[0]->res_target->val->node_case == PG_QUERY__NODE__NODE_A_STAR ||
        (o->target_list[0]->res_target->val->node_case == PG_QUERY__NODE__NODE_COLUMN_REF &&
         o->target_list[0]->res_target->val->column_ref->n_fields &&
         o->target_list[0]->res_target->val->column_ref->fields[o->target_list[0]->res_target->val->column_ref->n_fields - 1]
                 ->node_case == PG_QUERY__NODE__NODE_A_STAR)) {
        sq_fail(c, loc, PA_EUNSUPPORTED,
                "a correlated subquery under ANY or ALL must be a plain SELECT of one column (no GROUP BY, DISTINCT, "
                "LIMIT or set operation)");
        return NULL;
    }
    PgQuery__SelectStmt *sel = sq_alloc(&c->A, sizeof *sel);
    PgQuery__FuncCall *fc = sq_alloc(&c->A, sizeof *fc);
    PgQuery__String *fname = sq_alloc(&c->A, sizeof *fname);
    PgQuery__ResTarget *rt = sq_alloc(&c->A, sizeof *rt);
    PgQuery__SubLink *sl2 = sq_alloc(&c->A, sizeof *sl2);
    pgn *nodes = sq_alloc(&c->A, 4 * sizeof *nodes);
    pgn **lists = sq_alloc(&c->A, 3 * sizeof *lists);
    if (!sel || !fc || !fname || !rt || !sl2 || !nodes || !lists) {
        sq_fail(c, loc, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    *fname = (PgQuery__String)PG_QUERY__STRING__INIT;
    fname->sval = (char *)(k == EX_AGG_MIN ? "min" : k == EX_AGG_MAX ? "max" : "count");
    *fc = (PgQuery__FuncCall)PG_QUERY__FUNC_CALL__INIT;
    for (int i = 0; i < 4; i++)
        nodes[i] = (pgn)PG_QUERY__NODE__INIT;
    nodes[0].node_case = PG_QUERY__NODE__NODE_STRING;
    nodes[0].string = fname;
    lists[0] = &nodes[0];
    lists[1] = o->target_list[0]->res_target->val;
    fc->n_funcname = 1;
    fc->funcname = &lists[0];
    fc->agg_star = k == EX_AGG_COUNT_STAR;
    fc->n_args = fc->agg_star ? 0 : 1;
    fc->args = fc->agg_star ? NULL : &lists[1];
    fc->location = loc;
    nodes[1].node_case = PG_QUERY__NODE__NODE_FUNC_CALL;
    nodes[1].func_call = fc;
    *rt = (PgQuery__ResTarget)PG_QUERY__RES_TARGET__INIT;
    rt->val = &nodes[1];
    rt->location = loc;
    nodes[2].node_case = PG_QUERY__NODE__NODE_RES_TARGET;
    nodes[2].res_target = rt;
    lists[2] = &nodes[2];
    *sel = *o;
    sel->n_target_list = 1;
    sel->target_list = &lists[2];
    nodes[3].node_case = PG_QUERY__NODE__NODE_SELECT_STMT;
    nodes[3].select_stmt = sel;
    *sl2 = *sl;
    sl2->sub_link_type = PG_QUERY__SUB_LINK_TYPE__EXPR_SUBLINK;
    sl2->testexpr = NULL;
    sl2->n_oper_name = 0;
    sl2->subselect = &nodes[3];
    sq_aggctx ag = {false, false, "ANY / ALL", false, false};
    return bind_sublink(c, sl2, sc, &ag);
}

/* One aggregate (kind k; COUNT(*) with k = EX_AGG_COUNT_STAR) of an
 * uncorrelated subquery's only column, as a scalar subquery. */
static sq_expr *subquery_agg(sq_ctx *c, PgQuery__SubLink *sl, sq_scope *sc, ex_agg_kind k, int loc)
{
    sq_subq *inner = sq_alloc(&c->A, sizeof *inner), *q = sq_alloc(&c->A, sizeof *q);
    sq_expr *e = sq_alloc(&c->A, sizeof *e);
    if (!inner || !q || !e) {
        sq_fail(c, loc, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    inner->kind = SQ_S_SCALAR;
    inner->loc = loc;
    const char **names;
    sq_node *plan;
    c->want_domain = false;
    if (sq_bind_select(c, sl->subselect, sc, &plan, &names, inner) != PA_OK) {
        if (!c->want_domain)
            return NULL;
        clear_for_domain(c);   /* correlated: bound again below, with a domain where needed */
        return correlated_agg(c, sl, sc, k, loc);
    }
    if (inner->n_corr || inner->grouped)
        return correlated_agg(c, sl, sc, k, loc);
    if (plan->n_out != 1) {
        sq_fail(c, loc, PA_EINVAL, "subquery has too many columns");
        return NULL;
    }
    pa_type t;
    if (ex_agg_type(k, c->cols[plan->out[0]].type, &t, c->err) != PA_OK)
        return NULL;
    sq_node *a = sq_node_new(c, SQ_L_AGG, 1);
    sq_aggdef *ad = sq_alloc(&c->A, sizeof *ad);
    int out = sq_new_col(c, "agg", t);
    if (!a || !ad || out < 0)
        return NULL;
    *ad = (sq_aggdef){k, k == EX_AGG_COUNT_STAR ? -1 : plan->out[0], out};
    a->in[0] = plan;
    a->n_aggs = 1;
    a->aggs = ad;
    a->out[0] = out;
    a->est = 1;
    q->kind = SQ_S_SCALAR;
    q->plan = a;
    q->value_col = out;
    q->loc = loc;
    e->kind = SQ_E_SUBQ;
    e->loc = loc;
    e->col = out;
    e->subq = q;
    e->type = t;
    e->tx = ex_expr_col_typed(c->plan, out, t, c->err);
    return e->tx ? e : NULL;
}

/* x op ANY / ALL (subquery) for an uncorrelated subquery, from its row
 * count n, non-NULL count nn and MIN / MAX, with SQL's three-valued
 * answer: ALL is TRUE over no rows, FALSE where some value fails, else
 * NULL when x or some value is NULL, else TRUE; ANY is FALSE over no
 * rows, TRUE where some value passes, else NULL when x or some value is
 * NULL, else FALSE. x <> ALL is NOT (x = ANY), that is NOT IN. */
static sq_expr *bind_quantified(sq_ctx *c, PgQuery__SubLink *sl, sq_scope *sc, sq_aggctx *ag, bool all)
{
    int loc = sl->location;
    const char *op = sl->n_oper_name ? sq_node_name(sl->oper_name[sl->n_oper_name - 1]) : "=";
    static const struct { const char *op; ex_cmp cmp; } ops[] = {
        {"<", EX_LT}, {"<=", EX_LE}, {">", EX_GT}, {">=", EX_GE}, {"=", EX_EQ}, {"<>", EX_NE}, {"!=", EX_NE},
    };
    int o = -1;
    for (int i = 0; op && i < (int)(sizeof ops / sizeof ops[0]); i++)
        if (!strcmp(op, ops[i].op))
            o = i;
    if (o < 0 || !sl->testexpr) {
        sq_fail(c, loc, PA_EUNSUPPORTED, "%s %s (subquery) is not supported", op ? op : "?", all ? "ALL" : "ANY");
        return NULL;
    }
    ex_cmp cmp = ops[o].cmp;
    if (all && cmp == EX_NE) {   /* NOT (x = ANY (subquery)) */
        PgQuery__SubLink eq = *sl;
        eq.sub_link_type = PG_QUERY__SUB_LINK_TYPE__ANY_SUBLINK;
        eq.n_oper_name = 0;
        sq_expr *in = bind_sublink(c, &eq, sc, ag);
        return in ? sq_make(c, SQ_E_NOT, 0, &in, 1, loc) : NULL;
    }
    sq_expr *x = sq_bind_expr(c, sl->testexpr, sc, ag);
    if (!x)
        return NULL;
    bool lo = cmp == EX_GT || cmp == EX_GE;   /* the bound to compare with: MIN for ANY, MAX for ALL */
    ex_agg_kind bound = cmp == EX_EQ || cmp == EX_NE ? EX_AGG_MIN : (lo != all) ? EX_AGG_MIN : EX_AGG_MAX;
    sq_expr *n = subquery_agg(c, sl, sc, EX_AGG_COUNT_STAR, loc), *nn = n ? subquery_agg(c, sl, sc, EX_AGG_COUNT, loc) : NULL;
    sq_expr *b = nn ? subquery_agg(c, sl, sc, bound, loc) : NULL;
    sq_expr *b2 = b && (cmp == EX_EQ || cmp == EX_NE) ? subquery_agg(c, sl, sc, EX_AGG_MAX, loc) : NULL;
    if (!b || ((cmp == EX_EQ || cmp == EX_NE) && !b2))
        return NULL;
    sq_expr *zero = sq_const(c, ex_expr_int(c->plan, 0, c->err), loc);
    sq_expr *t = sq_const(c, ex_expr_bool(c->plan, true, c->err), loc);
    sq_expr *f = sq_const(c, ex_expr_bool(c->plan, false, c->err), loc);
    sq_expr *null = sq_const(c, ex_expr_null(c->plan, (pa_type){PA_TYPE_BOOLEAN, 0, 0}, c->err), loc);
    sq_expr *n0[2] = {n, zero}, *nlt[2] = {nn, n};
    /* The deciding test: ALL fails where x op bound is not TRUE... */
    sq_expr *decide;
    if (cmp == EX_EQ || cmp == EX_NE) {   /* some value differs from x: x <> MIN or x <> MAX */
        sq_expr *d1[2] = {x, b}, *d2[2] = {x, b2};
        sq_expr *o2[2] = {sq_make(c, SQ_E_CMP, EX_NE, d1, 2, loc), sq_make(c, SQ_E_CMP, EX_NE, d2, 2, loc)};
        decide = sq_make(c, SQ_E_OR, 0, o2, 2, loc);
    } else {
        sq_expr *d[2] = {x, b};
        decide = sq_make(c, SQ_E_CMP, cmp, d, 2, loc);
        if (all)
            decide = sq_make(c, SQ_E_NOT, 0, &decide, 1, loc);
    }
    sq_expr *w[9] = {sq_make(c, SQ_E_CMP, EX_EQ, n0, 2, loc), all ? t : f,
                     sq_make(c, SQ_E_ISNULL, 0, &x, 1, loc), null,
                     decide, all ? f : t,
                     sq_make(c, SQ_E_CMP, EX_LT, nlt, 2, loc), null,
                     all ? t : f};
    for (int i = 0; i < 9; i++)
        if (!w[i])
            return NULL;
    return sq_make(c, SQ_E_CASE, 0, w, 9, loc);
}

static sq_expr *bind_sublink(sq_ctx *c, PgQuery__SubLink *sl, sq_scope *sc, sq_aggctx *ag)
{
    int loc = sl->location;
    sq_subq *q = sq_alloc(&c->A, sizeof *q);
    if (!q)
        return NULL;
    q->loc = loc;
    switch (sl->sub_link_type) {
    case PG_QUERY__SUB_LINK_TYPE__EXISTS_SUBLINK: q->kind = SQ_S_EXISTS; break;
    case PG_QUERY__SUB_LINK_TYPE__EXPR_SUBLINK: q->kind = SQ_S_SCALAR; break;
    case PG_QUERY__SUB_LINK_TYPE__ALL_SUBLINK:
        return bind_quantified(c, sl, sc, ag, true);
    case PG_QUERY__SUB_LINK_TYPE__ANY_SUBLINK: {
        const char *op = sl->n_oper_name ? sq_node_name(sl->oper_name[sl->n_oper_name - 1]) : "=";
        if (op && strcmp(op, "=") != 0)
            return bind_quantified(c, sl, sc, ag, false);
        q->kind = SQ_S_IN;
        if (!(q->test = sq_bind_expr(c, sl->testexpr, sc, ag)))
            return NULL;
        break;
    }
    default: sq_fail(c, loc, PA_EUNSUPPORTED, "this kind of subquery (ALL, ARRAY, row comparison) is not supported"); return NULL;
    }
    const char **names;
    sq_node *plan;
    if (bind_subquery(c, sl->subselect, sc, &plan, &names, q) != PA_OK)
        return NULL;
    q->plan = plan;
    if (q->grouped && q->kind != SQ_S_SCALAR && q->having) {
        sq_fail(c, loc, PA_EUNSUPPORTED, "EXISTS or IN over a correlated aggregate subquery with HAVING is not supported");
        return NULL;
    }
    if (q->grouped && q->kind == SQ_S_EXISTS) {
        /* An aggregate without GROUP BY or HAVING gives one row. */
        sq_expr *k = sq_const(c, ex_expr_bool(c->plan, true, c->err), loc);
        return k;
    }
    pa_type t = {PA_TYPE_BOOLEAN, 0, 0};
    if (q->kind != SQ_S_EXISTS) {
        q->value_col = plan->out[0];
        t = c->cols[q->value_col].type;
    }
    if (q->kind == SQ_S_IN) {
        pa_type ct;
        if (!sq_common_type(c, q->test->type, t, &ct)) {
            sq_fail(c, loc, PA_EINVAL, "IN: cannot compare %s with %s", pa_type_name(q->test->type.id), pa_type_name(t.id));
            return NULL;
        }
        t = (pa_type){PA_TYPE_BOOLEAN, 0, 0};
    }
    /* x IN (correlated aggregate without GROUP BY or HAVING): exactly one
     * row, so x = (the scalar subquery), which gives its value over no
     * rows (COUNT 0) to outer rows without matches. */
    sq_expr *in_test = NULL;
    if (q->grouped && q->kind == SQ_S_IN) {
        in_test = q->test;
        q->test = NULL;
        q->kind = SQ_S_SCALAR;
        t = c->cols[q->value_col].type;
    }
    int col = q->kind == SQ_S_SCALAR ? q->value_col : sq_new_col(c, "mark", t);
    if (col < 0)
        return NULL;
    sq_expr *e = sq_alloc(&c->A, sizeof *e);
    if (!e)
        return NULL;
    e->kind = SQ_E_SUBQ;
    e->loc = loc;
    e->col = col;
    e->subq = q;
    e->type = t;
    e->tx = ex_expr_col_typed(c->plan, col, t, c->err);
    if (e->tx && in_test) {
        sq_expr *a[2] = {in_test, e};
        return sq_make(c, SQ_E_CMP, EX_EQ, a, 2, loc);
    }
    return e->tx ? e : NULL;
}

sq_expr *sq_bind_expr(sq_ctx *c, pgn *n, sq_scope *sc, sq_aggctx *ag)
{
    if (!n) {
        sq_fail(c, -1, PA_EINTERNAL, "missing expression");
        return NULL;
    }
    if (c->depth >= SQ_MAX_EXPR_DEPTH) {
        if (c->expr_depth * 2 >= c->depth)
            sq_fail(c, loc_of(n), PA_EUNSUPPORTED, "expression too deep (more than %d levels)", SQ_MAX_EXPR_DEPTH);
        else
            sq_fail(c, loc_of(n), PA_EUNSUPPORTED,
                    "query nested too deep (more than %d levels of subqueries, set operations, joins and expressions)",
                    SQ_MAX_EXPR_DEPTH);
        return NULL;
    }
    c->depth++;
    c->expr_depth++;
    sq_expr *e = NULL;
    int loc = loc_of(n);
    switch (n->node_case) {
    case PG_QUERY__NODE__NODE_COLUMN_REF: e = bind_colref(c, n->column_ref, sc); break;
    case PG_QUERY__NODE__NODE_A_CONST: e = bind_const(c, n->a_const); break;
    case PG_QUERY__NODE__NODE_TYPE_CAST: e = bind_cast(c, n->type_cast, sc, ag, loc); break;
    case PG_QUERY__NODE__NODE_A_EXPR: e = bind_aexpr(c, n->a_expr, sc, ag); break;
    case PG_QUERY__NODE__NODE_FUNC_CALL: e = bind_func(c, n->func_call, sc, ag); break;
    case PG_QUERY__NODE__NODE_CASE_EXPR: e = bind_case(c, n->case_expr, sc, ag); break;
    case PG_QUERY__NODE__NODE_MIN_MAX_EXPR: e = bind_minmax(c, n->min_max_expr, sc, ag); break;
    case PG_QUERY__NODE__NODE_GROUPING_FUNC: e = bind_grouping(c, n->grouping_func, sc, ag); break;
    case PG_QUERY__NODE__NODE_SUB_LINK: e = bind_sublink(c, n->sub_link, sc, ag); break;
    case PG_QUERY__NODE__NODE_SQLVALUE_FUNCTION: e = bind_sqlvalue(c, n->sqlvalue_function); break;
    case PG_QUERY__NODE__NODE_BOOL_EXPR: {
        PgQuery__BoolExpr *b = n->bool_expr;
        if (b->boolop == PG_QUERY__BOOL_EXPR_TYPE__NOT_EXPR) {
            sq_expr *a = b->n_args == 1 ? sq_bind_expr(c, b->args[0], sc, ag) : NULL;
            e = a ? sq_make(c, SQ_E_NOT, 0, &a, 1, loc) : NULL;
            break;
        }
        sq_ekind k = b->boolop == PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR ? SQ_E_AND : SQ_E_OR;
        sq_expr **v = sq_alloc(&c->A, (b->n_args + 1) * sizeof *v);
        if (!v) {
            sq_fail(c, loc, PA_ENOMEM, "binding: out of memory");
            break;
        }
        for (size_t i = 0; i < b->n_args; i++)
            if (!(v[i] = sq_bind_expr(c, b->args[i], sc, ag)))
                goto done;
        /* Untyped NULLs become BOOLEAN, as binary() types them. */
        for (size_t i = 0; i < b->n_args; i++)
            if (is_untyped_null(v[i]) && !(v[i] = null_const(c, (pa_type){PA_TYPE_BOOLEAN, 0, 0}, v[i]->loc)))
                goto done;
        e = sq_bool_all(c, k, v, (int)b->n_args, loc);
        break;
    }
    case PG_QUERY__NODE__NODE_NULL_TEST: {
        sq_expr *a = sq_bind_expr(c, n->null_test->arg, sc, ag);
        if (a && is_untyped_null(a))
            a = null_const(c, (pa_type){PA_TYPE_INTEGER, 0, 0}, a->loc), a ? a->flag = false : 0;
        e = a ? sq_make(c, SQ_E_ISNULL, n->null_test->nulltesttype == PG_QUERY__NULL_TEST_TYPE__IS_NOT_NULL, &a, 1, loc)
              : NULL;
        break;
    }
    case PG_QUERY__NODE__NODE_COALESCE_EXPR: {
        PgQuery__CoalesceExpr *ce = n->coalesce_expr;
        sq_expr **v = sq_alloc(&c->A, (ce->n_args + 1) * sizeof *v);
        if (!v)
            break;
        for (size_t i = 0; i < ce->n_args; i++)
            if (!(v[i] = sq_bind_expr(c, ce->args[i], sc, ag)))
                goto done;
        type_nulls(c, v, (int)ce->n_args);
        e = v[ce->n_args - 1];
        for (int i = (int)ce->n_args - 2; i >= 0 && e; i--) {
            sq_expr *isn = sq_make(c, SQ_E_ISNULL, 1, &v[i], 1, loc);
            sq_expr *a[3] = {isn, v[i], e};
            e = isn ? sq_make(c, SQ_E_CASE, 0, a, 3, loc) : NULL;
        }
        break;
    }
    case PG_QUERY__NODE__NODE_PARAM_REF: sq_fail(c, loc, PA_EUNSUPPORTED, "parameters ($n) are not supported"); break;
    default: sq_fail(c, loc, PA_EUNSUPPORTED, "this kind of expression is not supported"); break;
    }
done:
    c->depth--;
    c->expr_depth--;
    if (!e && c->err && c->err->code != PA_OK && c->err_loc < 0)
        c->err_loc = loc;
    return e;
}
