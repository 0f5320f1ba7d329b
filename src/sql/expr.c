/*
 * expr.c - the statement arena, column ids, and typed bound expressions
 * (each built together with its ex_expr twin, which carries the type).
 */
#include "sql/sql_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ arena */
struct sq_arena_block {
    sq_arena_block *next;
    size_t used, cap;
    max_align_t data[];
};

void *sq_alloc(sq_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    sq_arena_block *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 60000 ? n : 60000;
        b = pa_malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->cap = cap;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

char *sq_strndup(sq_arena *a, const char *s, size_t n)
{
    char *d = sq_alloc(a, n + 1);
    if (d)
        memcpy(d, s, n);
    return d;
}

char *sq_strdup(sq_arena *a, const char *s) { return sq_strndup(a, s, strlen(s)); }

char *sq_printf(sq_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *d = sq_alloc(a, (size_t)n + 1);
    if (!d)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(d, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return d;
}

void sq_arena_free(sq_arena *a)
{
    while (a->head) {
        sq_arena_block *b = a->head;
        a->head = b->next;
        pa_free(b);
    }
}

/* --------------------------------------------------------------- context */
static int vfail(sq_ctx *c, int loc, int code, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    c->err_loc = loc;
    return pa_error(c->err, code, "%s", msg);
}

int sq_fail(sq_ctx *c, int loc, int code, const char *fmt, ...)
{
    if (c->err && c->err->code != PA_OK)
        return c->err->code;
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(c, loc, code, fmt, ap);
    va_end(ap);
    return rc;
}

int sq_fail_corr(sq_ctx *c, int loc, const char *fmt, ...)
{
    if (c->err && c->err->code != PA_OK)
        return c->err->code;
    c->want_domain = true;
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(c, loc, PA_EUNSUPPORTED, fmt, ap);
    va_end(ap);
    return rc;
}

int sq_new_col(sq_ctx *c, const char *name, pa_type t)
{
    if (c->n_cols == c->cap_cols) {
        int cap = c->cap_cols ? c->cap_cols * 2 : 64;
        sq_col *v = sq_alloc(&c->A, (size_t)cap * sizeof *v);
        if (!v)
            return sq_fail(c, -1, PA_ENOMEM, "binding: out of memory");
        if (c->n_cols)
            memcpy(v, c->cols, (size_t)c->n_cols * sizeof *v);
        c->cols = v;
        c->cap_cols = cap;
    }
    c->cols[c->n_cols] = (sq_col){.name = name ? name : "?", .type = t};
    return c->n_cols++;
}

/* ------------------------------------------------------------ expressions */
static sq_expr *node(sq_ctx *c, sq_ekind k, int sub, int n, int loc)
{
    sq_expr *e = sq_alloc(&c->A, sizeof *e);
    if (!e) {
        sq_fail(c, loc, PA_ENOMEM, "binding: out of memory");
        return NULL;
    }
    e->kind = k;
    e->sub = sub;
    e->loc = loc;
    e->col = -1;
    e->n_args = n;
    if (n > 0) {
        e->args = sq_alloc(&c->A, (size_t)n * sizeof *e->args);
        if (!e->args) {
            sq_fail(c, loc, PA_ENOMEM, "binding: out of memory");
            return NULL;
        }
    }
    return e;
}

/* e's depth from its operands'; false (an error) past the limit. */
static bool measure(sq_ctx *c, sq_expr *e)
{
    int d = 0;
    for (int i = 0; i < e->n_args; i++)
        if (e->args[i] && e->args[i]->depth > d)
            d = e->args[i]->depth;
    e->depth = d + 1;
    if (e->depth <= SQ_MAX_EXPR_DEPTH)
        return true;
    sq_fail(c, e->loc, PA_EUNSUPPORTED, "expression too deep (more than %d levels)", SQ_MAX_EXPR_DEPTH);
    return false;
}

/* Give e its twin; the engine's builders type-check (and fold). */
static sq_expr *typed(sq_ctx *c, sq_expr *e, ex_expr *tx)
{
    if (tx && !measure(c, e))
        return NULL;
    if (!tx) {
        if (c->err_loc < 0)
            c->err_loc = e->loc;
        return NULL;
    }
    e->tx = tx;
    e->type = ex_expr_type(tx);
    return e;
}

sq_expr *sq_col_ref(sq_ctx *c, int col, int loc)
{
    sq_expr *e = node(c, SQ_E_COL, 0, 0, loc);
    if (!e)
        return NULL;
    e->col = col;
    return typed(c, e, ex_expr_col_typed(c->plan, col, c->cols[col].type, c->err));
}

sq_expr *sq_const(sq_ctx *c, ex_expr *tx, int loc)
{
    sq_expr *e = node(c, SQ_E_CONST, 0, 0, loc);
    return e ? typed(c, e, tx) : NULL;
}

ex_expr *sq_build_tx(sq_ctx *c, const sq_expr *e, ex_expr **ax)
{
    ex_plan *p = c->plan;
    pa_err *err = c->err;
    int n = e->n_args;
    switch (e->kind) {
    case SQ_E_COL: return ex_expr_col_typed(p, e->col, c->cols[e->col].type, err);
    case SQ_E_SUBQ: return ex_expr_col_typed(p, e->col, c->cols[e->col].type, err);
    case SQ_E_CONST: return e->tx;
    case SQ_E_ARITH: return ex_expr_arith(p, (ex_arith)e->sub, ax[0], ax[1], err);
    case SQ_E_NEG: return ex_expr_neg(p, ax[0], err);
    case SQ_E_CMP: return ex_expr_cmp(p, (ex_cmp)e->sub, ax[0], ax[1], err);
    case SQ_E_AND: return ex_expr_and(p, ax[0], ax[1], err);
    case SQ_E_OR: return ex_expr_or(p, ax[0], ax[1], err);
    case SQ_E_NOT: return ex_expr_not(p, ax[0], err);
    case SQ_E_ISNULL: return ex_expr_is_null(p, ax[0], e->sub != 0, err);
    case SQ_E_CASE: {
        int pairs = e->flag ? (n - 1) / 2 : n / 2;
        ex_expr **w = sq_alloc(&c->A, (size_t)(pairs ? pairs : 1) * 2 * sizeof *w), **t = w + pairs;
        if (!w) {
            pa_error(err, PA_ENOMEM, "out of memory binding a CASE of %d branches", pairs);
            return NULL;
        }
        for (int i = 0; i < pairs; i++) {
            w[i] = ax[2 * i];
            t[i] = ax[2 * i + 1];
        }
        return ex_expr_case(p, w, t, pairs, e->flag ? ax[n - 1] : NULL, err);
    }
    case SQ_E_IN: return ex_expr_in(p, ax[0], ax + 1, n - 1, e->sub != 0, err);
    case SQ_E_LIKE: return ex_expr_like(p, ax[0], e->text, e->sub != 0, err);
    case SQ_E_SUBSTR: return ex_expr_substring(p, ax[0], ax[1], n > 2 ? ax[2] : NULL, err);
    case SQ_E_EXTRACT: return ex_expr_extract(p, (ex_field)e->sub, ax[0], err);
    case SQ_E_DATE_ADD: return ex_expr_date_add(p, ax[0], e->n, (ex_unit)e->sub, err);
    case SQ_E_CAST: return ex_expr_cast(p, ax[0], e->type, err);
    case SQ_E_DATE_TRUNC: return ex_expr_date_trunc(p, (ex_field)e->sub, ax[0], err);
    case SQ_E_MAKE_DATE: return ex_expr_make_date(p, ax[0], ax[1], ax[2], err);
    case SQ_E_AGE: return ex_expr_age(p, ax[0], ax[1], err);
    case SQ_E_STRFN: return ex_expr_strfn(p, (ex_strfn)e->sub, ax[0], n > 1 ? ax[1] : NULL, n > 2 ? ax[2] : NULL, err);
    case SQ_E_TEXT: return ex_expr_text(p, (ex_textfn)e->sub, ax[0], n > 1 ? ax[1] : NULL, n > 2 ? ax[2] : NULL, err);
    case SQ_E_CONCAT: return e->sub ? ex_expr_concat(p, ax[0], ax + 1, n - 1, err) : ex_expr_concat(p, NULL, ax, n, err);
    case SQ_E_REGEX:
        if (e->sub == 2)
            return ex_expr_regexp_replace(p, ax[0], ax[1], ax[2], n > 3 ? ax[3] : NULL, err);
        return ex_expr_regexp_like(p, ax[0], ax[1], n > 2 ? ax[2] : NULL, e->sub == 1, err);
    case SQ_E_MATH: return ex_expr_math(p, (ex_math)e->sub, ax[0], n > 1 ? ax[1] : NULL, (int)e->n, e->flag, err);
    case SQ_E_AGG:
    case SQ_E_WINDOW:
    case SQ_E_OSAGG:
    case SQ_E_GROUPING: return ex_expr_col_typed(p, 0, e->type, err);
    }
    pa_error(err, PA_EINTERNAL, "expression kind %d", (int)e->kind);
    return NULL;
}

static ex_expr *twin(sq_ctx *c, const sq_expr *e, sq_expr **a)
{
    ex_expr **ax = sq_alloc(&c->A, (size_t)(e->n_args ? e->n_args : 1) * sizeof *ax);
    if (!ax) {
        pa_error(c->err, PA_ENOMEM, "out of memory binding an expression of %d operands", e->n_args);
        return NULL;
    }
    for (int i = 0; i < e->n_args; i++)
        ax[i] = a[i]->tx;
    return sq_build_tx(c, e, ax);
}

sq_expr *sq_make(sq_ctx *c, sq_ekind k, int sub, sq_expr **args, int n, int loc)
{
    for (int i = 0; i < n; i++)
        if (!args[i])
            return NULL;
    sq_expr *e = node(c, k, sub, n, loc);
    if (!e)
        return NULL;
    for (int i = 0; i < n; i++)
        e->args[i] = args[i];
    if (k == SQ_E_CASE)
        e->flag = n % 2 == 1; /* when/then pairs, then the ELSE if any */
    return typed(c, e, twin(c, e, e->args));
}

sq_expr *sq_like(sq_ctx *c, sq_expr *a, const char *pattern, bool negate, int loc)
{
    if (!a)
        return NULL;
    sq_expr *e = node(c, SQ_E_LIKE, negate, 1, loc);
    if (!e)
        return NULL;
    e->args[0] = a;
    e->text = pattern;
    return typed(c, e, twin(c, e, e->args));
}

sq_expr *sq_date_add(sq_ctx *c, sq_expr *a, int64_t n, ex_unit u, int loc)
{
    if (!a)
        return NULL;
    sq_expr *e = node(c, SQ_E_DATE_ADD, u, 1, loc);
    if (!e)
        return NULL;
    e->args[0] = a;
    e->n = n;
    return typed(c, e, twin(c, e, e->args));
}

sq_expr *sq_math(sq_ctx *c, ex_math fn, sq_expr *a, sq_expr *b, int digits, bool has_digits, int loc)
{
    if (!a || ((fn == EX_LOG || fn == EX_POWER || fn == EX_AVG_DIV) && !b))
        return NULL;
    sq_expr *e = node(c, SQ_E_MATH, fn, b ? 2 : 1, loc);
    if (!e)
        return NULL;
    e->args[0] = a;
    if (b)
        e->args[1] = b;
    e->n = digits;
    e->flag = has_digits;
    return typed(c, e, twin(c, e, e->args));
}

sq_expr *sq_cast(sq_ctx *c, sq_expr *a, pa_type t, int loc)
{
    if (!a)
        return NULL;
    if (a->type.id == t.id && a->type.precision == t.precision && a->type.scale == t.scale)
        return a;
    sq_expr *e = node(c, SQ_E_CAST, 0, 1, loc);
    if (!e)
        return NULL;
    e->args[0] = a;
    e->type = t;
    return typed(c, e, twin(c, e, e->args));
}

sq_expr *sq_rebuild(sq_ctx *c, const sq_expr *e, sq_expr **args)
{
    for (int i = 0; i < e->n_args; i++)
        if (!args[i])
            return NULL;
    sq_expr *r = node(c, e->kind, e->sub, e->n_args, e->loc);
    if (!r)
        return NULL;
    r->flag = e->flag;
    r->col = e->col;
    r->n = e->n;
    r->text = e->text;
    r->subq = e->subq;
    r->win = e->win;
    r->type = e->type;
    r->tx = e->tx;
    r->dx = e->dx;
    for (int i = 0; i < e->n_args; i++)
        r->args[i] = args[i];
    if (e->kind == SQ_E_CONST || e->kind == SQ_E_AGG || e->kind == SQ_E_GROUPING || e->kind == SQ_E_WINDOW ||
        e->kind == SQ_E_OSAGG)
        return measure(c, r) ? r : NULL;
    return typed(c, r, twin(c, r, r->args));
}

bool sq_expr_equal(const sq_expr *a, const sq_expr *b)
{
    if (a == b)
        return true;
    if (!a || !b || a->kind != b->kind || a->sub != b->sub || a->flag != b->flag || a->n_args != b->n_args)
        return false;
    if (a->type.id != b->type.id || a->type.scale != b->type.scale)
        return false;
    switch (a->kind) {
    case SQ_E_COL:
    case SQ_E_SUBQ: return a->col == b->col;
    case SQ_E_CONST: {
        bool an = ex_expr_is_null_const(a->tx), bn = ex_expr_is_null_const(b->tx);
        if (an || bn)
            return an == bn;
        char x[256], y[256];
        if (ex_expr_const_text(a->tx, x, sizeof x) == PA_OK && ex_expr_const_text(b->tx, y, sizeof y) == PA_OK)
            return strcmp(x, y) == 0;
        return ex_expr_equal(a->tx, b->tx);   /* text too long for the buffers: every byte */
    }
    case SQ_E_LIKE:
        if (strcmp(a->text, b->text) != 0)
            return false;
        break;
    case SQ_E_DATE_ADD:
    case SQ_E_MATH:
    case SQ_E_OSAGG:
        if (a->n != b->n)
            return false;
        break;
    case SQ_E_WINDOW: return false;   /* each call is its own (a == b above) */
    case SQ_E_AGG:
        if ((a->dx == NULL) != (b->dx == NULL) || (a->dx && !sq_expr_equal(a->dx, b->dx)))
            return false;
        break;
    default: break;
    }
    for (int i = 0; i < a->n_args; i++)
        if (!sq_expr_equal(a->args[i], b->args[i]))
            return false;
    return true;
}

void sq_expr_cols(const sq_expr *e, uint8_t *set)
{
    if (!e)
        return;
    if (e->kind == SQ_E_COL || e->kind == SQ_E_SUBQ)
        set[e->col] = 1;
    for (int i = 0; i < e->n_args; i++)
        sq_expr_cols(e->args[i], set);
    if (e->kind == SQ_E_SUBQ && e->subq && e->subq->test)
        sq_expr_cols(e->subq->test, set);
}

bool sq_expr_has(const sq_expr *e, sq_ekind k)
{
    if (!e)
        return false;
    if (e->kind == k)
        return true;
    for (int i = 0; i < e->n_args; i++)
        if (sq_expr_has(e->args[i], k))
            return true;
    return false;
}

int sq_conjuncts(sq_ctx *c, sq_expr *e, sq_expr ***v, int *n, int *cap)
{
    if (!e)
        return PA_OK;
    if (e->kind == SQ_E_AND) {
        int rc = sq_conjuncts(c, e->args[0], v, n, cap);
        return rc ? rc : sq_conjuncts(c, e->args[1], v, n, cap);
    }
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 16;
        sq_expr **nv = sq_alloc(&c->A, (size_t)nc * sizeof *nv);
        if (!nv)
            return sq_fail(c, e->loc, PA_ENOMEM, "binding: out of memory");
        if (*n)
            memcpy(nv, *v, (size_t)*n * sizeof *nv);
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = e;
    return PA_OK;
}

sq_expr *sq_bool_all(sq_ctx *c, sq_ekind k, sq_expr **v, int n, int loc)
{
    if (n <= 0)
        return NULL;
    if (n <= 32) { /* short chains stay left-deep, as written */
        sq_expr *e = v[0];
        for (int i = 1; i < n && e; i++) {
            sq_expr *a[2] = {e, v[i]};
            e = sq_make(c, k, 0, a, 2, loc);
        }
        return e;
    }
    int h = n / 2;
    sq_expr *a[2] = {sq_bool_all(c, k, v, h, loc), NULL};
    if (a[0])
        a[1] = sq_bool_all(c, k, v + h, n - h, loc);
    return a[1] ? sq_make(c, k, 0, a, 2, loc) : NULL;
}

sq_expr *sq_and_all(sq_ctx *c, sq_expr **v, int n)
{
    return n > 0 ? sq_bool_all(c, SQ_E_AND, v, n, v[n - 1]->loc) : NULL;
}

bool sq_common_type(sq_ctx *c, pa_type a, pa_type b, pa_type *out)
{
    if (a.id == b.id && a.precision == b.precision && a.scale == b.scale) {
        *out = a;
        return true;
    }
    pa_err e;
    pa_err_init(&e);
    ex_expr *w = ex_expr_col_typed(c->plan, 0, (pa_type){PA_TYPE_BOOLEAN, 0, 0}, &e);
    ex_expr *x = ex_expr_col_typed(c->plan, 1, a, &e);
    ex_expr *y = ex_expr_col_typed(c->plan, 2, b, &e);
    ex_expr *r = (w && x && y) ? ex_expr_case(c->plan, &w, &x, 1, y, &e) : NULL;
    pa_err_close(&e);   /* only the answer matters: the caller words the error */
    if (!r)
        return false;
    *out = ex_expr_type(r);
    return true;
}

/* Disjuncts of an OR tree. */
int sq_disjuncts(sq_ctx *c, sq_expr *e, sq_expr ***v, int *n, int *cap)
{
    if (e->kind == SQ_E_OR) {
        int rc = sq_disjuncts(c, e->args[0], v, n, cap);
        return rc ? rc : sq_disjuncts(c, e->args[1], v, n, cap);
    }
    /* sq_conjuncts appends without splitting when e is not an AND. */
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 8;
        sq_expr **nv = sq_alloc(&c->A, (size_t)nc * sizeof *nv);
        if (!nv)
            return sq_fail(c, e->loc, PA_ENOMEM, "planning: out of memory");
        if (*n)
            memcpy(nv, *v, (size_t)*n * sizeof *nv);
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = e;
    return PA_OK;
}

int sq_factor_or(sq_ctx *c, sq_expr *e, sq_expr ***out, int *n_out, int *cap_out)
{
    sq_expr **d = NULL;
    int nd = 0, capd = 0, rc;
    if (e->kind != SQ_E_OR || (rc = sq_disjuncts(c, e, &d, &nd, &capd)))
        return sq_conjuncts(c, e, out, n_out, cap_out);
    /* Conjunct lists of every disjunct. */
    sq_expr ***cj = sq_alloc(&c->A, (size_t)nd * sizeof *cj);
    int *ncj = sq_alloc(&c->A, (size_t)nd * sizeof *ncj);
    if (!cj || !ncj)
        return sq_fail(c, e->loc, PA_ENOMEM, "planning: out of memory");
    for (int i = 0; i < nd; i++) {
        int cap = 0;
        if ((rc = sq_conjuncts(c, d[i], &cj[i], &ncj[i], &cap)))
            return rc;
    }
    int n_common = 0;
    for (int a = 0; a < ncj[0]; a++) {
        bool everywhere = true;
        for (int i = 1; i < nd && everywhere; i++) {
            bool found = false;
            for (int b = 0; b < ncj[i] && !found; b++)
                found = sq_expr_equal(cj[0][a], cj[i][b]);
            everywhere = found;
        }
        if (!everywhere)
            continue;
        n_common++;
        if ((rc = sq_conjuncts(c, cj[0][a], out, n_out, cap_out)))
            return rc;
        /* Drop it from every disjunct. */
        for (int i = 0; i < nd; i++)
            for (int b = 0; b < ncj[i]; b++)
                if (sq_expr_equal(cj[0][a], cj[i][b]) && (i > 0 || b == a)) {
                    cj[i][b] = NULL;
                    break;
                }
    }
    if (n_common == 0)
        return sq_conjuncts(c, e, out, n_out, cap_out);
    sq_expr **ors = sq_alloc(&c->A, (size_t)nd * sizeof *ors);
    if (!ors)
        return sq_fail(c, e->loc, PA_ENOMEM, "planning: out of memory");
    for (int i = 0; i < nd; i++) {
        sq_expr **left = sq_alloc(&c->A, (size_t)(ncj[i] + 1) * sizeof *left);
        if (!left)
            return sq_fail(c, e->loc, PA_ENOMEM, "planning: out of memory");
        int k = 0;
        for (int b = 0; b < ncj[i]; b++)
            if (cj[i][b])
                left[k++] = cj[i][b];
        if (k == 0)
            return PA_OK; /* that disjunct is TRUE: so is the OR */
        if (!(ors[i] = sq_and_all(c, left, k)))
            return c->err->code;
    }
    sq_expr *rest = sq_bool_all(c, SQ_E_OR, ors, nd, e->loc);
    if (!rest)
        return c->err->code;
    return sq_conjuncts(c, rest, out, n_out, cap_out);
}
