/*
 * expr.c - expression nodes: allocation, column references, constants,
 * casts, structural equality and build-time constant folding (which runs
 * the node through the same kernel program it would get in a query).
 */
#include "exec/expr_int.h"

#include <stdio.h>
#include <string.h>

ex_expr *ex__node_new(ex_plan *p, ex__node k, pa_type t, int n_args, pa_err *err)
{
    ex_expr *e = ex_plan_alloc(p, sizeof *e);
    ex_expr **args = n_args ? ex_plan_alloc(p, (size_t)n_args * sizeof *args) : NULL;
    if (!e || (n_args && !args)) {
        pa_error(err, PA_ENOMEM, "out of memory building an expression");
        return NULL;
    }
    memset(e, 0, sizeof *e);
    e->kind = k;
    e->type = t;
    e->n_args = n_args;
    e->args = args;
    return e;
}

pa_type ex_expr_type(const ex_expr *e)
{
    pa_type none = {PA_TYPE__COUNT, 0, 0};
    return e ? e->type : none;
}

bool ex_expr_is_column(const ex_expr *e, int *index)
{
    if (!e || e->kind != EX__COL)
        return false;
    if (index)
        *index = e->index;
    return true;
}

bool ex_expr_is_const(const ex_expr *e) { return e && e->kind == EX__CONST; }

bool ex_expr_is_null_const(const ex_expr *e) { return e && e->kind == EX__CONST && e->is_null; }

bool ex_expr_const_int(const ex_expr *e, int64_t *v)
{
    if (!e || e->kind != EX__CONST || e->is_null ||
        (e->type.id != PA_TYPE_INTEGER && e->type.id != PA_TYPE_BIGINT))
        return false;
    *v = e->v.i;
    return true;
}

int ex_expr_const_text(const ex_expr *e, char *buf, size_t cap)
{
    if (!e || e->kind != EX__CONST || e->is_null || !buf || cap == 0)
        return PA_EINVAL;
    /* One row in the engine's layout, formatted as PA_FMT_FULL does: exact
     * DECIMAL with its scale, %.17g DOUBLE, YYYY-MM-DD, true/false. */
    _Alignas(16) unsigned char data[16] = {0};
    int32_t offsets[2] = {0, e->str_len};
    pa_column c = {.type = e->type, .length = 1, .data = data};
    switch (e->type.id) {
    case PA_TYPE_BOOLEAN: data[0] = e->v.i != 0; break;
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: { int32_t v = (int32_t)e->v.i; memcpy(data, &v, 4); } break;
    case PA_TYPE_DOUBLE:
    case PA_TYPE_REAL: memcpy(data, &e->v.f, 8); break;
    case PA_TYPE_DECIMAL:
        if (e->type.precision > PA_DECIMAL64_MAX_PRECISION)
            memcpy(data, &e->v.w, 16);
        else
            memcpy(data, &e->v.i, 8);
        break;
    case PA_TYPE_VARCHAR:
    case PA_TYPE_BYTEA:
    case PA_TYPE_UUID:
        c.data = (void *)e->str;
        c.offsets = offsets;
        break;
    case PA_TYPE_INTERVAL: memcpy(data, &e->v.w, 16); break;
    default: memcpy(data, &e->v.i, 8); break;
    }
    /* A REAL's exact value (a float's shortest text would read back as
     * another double where the scan compares it). */
    size_t n = e->type.id == PA_TYPE_REAL ? (size_t)snprintf(buf, cap, "%.17g", e->v.f)
                                          : pa_format_value(&c, 0, PA_FMT_FULL, buf, cap);
    if (n >= cap || (e->type.id == PA_TYPE_VARCHAR && memchr(e->str, 0, (size_t)e->str_len))) {
        buf[0] = 0;   /* too long, or bytes a C string cannot hold */
        return PA_EINVAL;
    }
    return PA_OK;
}

static bool type_ok(pa_type t)
{
    if ((unsigned)t.id >= PA_TYPE__COUNT)
        return false;
    return t.id != PA_TYPE_DECIMAL || (t.precision >= 1 && t.precision <= 38 && t.scale <= t.precision);
}

ex_expr *ex_expr_col_typed(ex_plan *p, int index, pa_type t, pa_err *err)
{
    if (index < 0 || !type_ok(t)) {
        pa_error(err, PA_EINVAL, "column reference %d: bad index or type", index);
        return NULL;
    }
    ex_expr *e = ex__node_new(p, EX__COL, t, 0, err);
    if (e)
        e->index = index;
    return e;
}

ex_expr *ex_expr_col(ex_plan *p, const ex_op *input, int index, pa_err *err)
{
    if (!input || index < 0 || index >= input->n_cols) {
        pa_error(err, PA_EINVAL, "column %d does not exist in %s (%d columns)", index, input ? input->label : "NULL",
                 input ? input->n_cols : 0);
        return NULL;
    }
    return ex_expr_col_typed(p, index, input->types[index], err);
}

/* ------------------------------------------------------------- constants */

ex_expr *ex__const_raw(ex_plan *p, pa_type t, const void *value, const char *str, int32_t str_len, bool is_null,
                       pa_err *err)
{
    ex_expr *e = ex__node_new(p, EX__CONST, t, 0, err);
    if (!e)
        return NULL;
    e->is_null = is_null;
    if (is_null)
        return e;
    switch (t.id) {
    case PA_TYPE_BOOLEAN: e->v.i = *(const uint8_t *)value != 0; break;
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: { int32_t v; memcpy(&v, value, 4); e->v.i = v; } break;
    case PA_TYPE_BIGINT:
    case PA_TYPE_TIMESTAMP:
    case PA_TYPE_TIMESTAMPTZ:
    case PA_TYPE_TIME:
    case PA_TYPE_TIMESTAMP_NS: memcpy(&e->v.i, value, 8); break;
    case PA_TYPE_INTERVAL: memcpy(&e->v.w, value, 16); break;
    case PA_TYPE_DOUBLE:
    case PA_TYPE_REAL: memcpy(&e->v.f, value, 8); break;
    case PA_TYPE_DECIMAL:
        if (t.precision > PA_DECIMAL64_MAX_PRECISION)
            memcpy(&e->v.w, value, 16);
        else
            memcpy(&e->v.i, value, 8);
        break;
    case PA_TYPE_VARCHAR:
    case PA_TYPE_BYTEA:
    case PA_TYPE_UUID: {
        char *s = ex_plan_alloc(p, (size_t)str_len + 1);
        if (!s) {
            pa_error(err, PA_ENOMEM, "out of memory building a constant");
            return NULL;
        }
        memcpy(s, str, (size_t)str_len);
        s[str_len] = 0;
        e->str = s;
        e->str_len = str_len;
        break;
    }
    default: break;
    }
    return e;
}

static pa_type simple(pa_type_id id)
{
    pa_type t = {id, 0, 0};
    return t;
}

ex_expr *ex_expr_bool(ex_plan *p, bool v, pa_err *err)
{
    uint8_t b = v;
    return ex__const_raw(p, simple(PA_TYPE_BOOLEAN), &b, NULL, 0, false, err);
}

ex_expr *ex_expr_int(ex_plan *p, int32_t v, pa_err *err)
{
    return ex__const_raw(p, simple(PA_TYPE_INTEGER), &v, NULL, 0, false, err);
}

ex_expr *ex_expr_bigint(ex_plan *p, int64_t v, pa_err *err)
{
    return ex__const_raw(p, simple(PA_TYPE_BIGINT), &v, NULL, 0, false, err);
}

ex_expr *ex_expr_double(ex_plan *p, double v, pa_err *err)
{
    return ex__const_raw(p, simple(PA_TYPE_DOUBLE), &v, NULL, 0, false, err);
}

ex_expr *ex_expr_decimal_scaled(ex_plan *p, int64_t v, int precision, int scale, pa_err *err)
{
    pa_type t = {PA_TYPE_DECIMAL, (uint8_t)precision, (uint8_t)scale};
    if (precision < 1 || precision > 18 || scale < 0 || scale > precision) {
        pa_error(err, PA_EINVAL, "DECIMAL(%d,%d) constant: precision 1..18 and scale 0..precision", precision, scale);
        return NULL;
    }
    union { int64_t i; __int128 w; } u = {.w = 0};
    u.i = v;
    return ex__const_raw(p, t, &u, NULL, 0, false, err);
}

ex_expr *ex_expr_decimal(ex_plan *p, const char *text, pa_err *err)
{
    const char *s = text ? text : "";
    bool neg = false, dot = false;
    int int_digits = 0, scale = 0, sig = 0, digits = 0;
    __int128 v = 0;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    for (; *s; s++) {
        if (*s == '.' && !dot) {
            dot = true;
            continue;
        }
        if (*s < '0' || *s > '9' || sig >= 38)
            break;
        digits++;
        if (dot)
            scale++;
        else if (int_digits || *s != '0')
            int_digits++;
        if (v || *s != '0')
            sig++;
        v = v * 10 + (*s - '0');
    }
    int precision = (int_digits ? int_digits : 1) + scale;
    if (*s || digits == 0 || precision > 38) {
        pa_error(err, PA_EINVAL, "bad DECIMAL constant '%s' (digits, one '.', at most 38 digits)",
                 text ? text : "(null)");
        return NULL;
    }
    pa_type t = {PA_TYPE_DECIMAL, (uint8_t)precision, (uint8_t)scale};
    if (neg)
        v = -v;
    if (precision > PA_DECIMAL64_MAX_PRECISION)
        return ex__const_raw(p, t, &v, NULL, 0, false, err);
    union { int64_t i; __int128 w; } u = {.w = 0};
    u.i = (int64_t)v;
    return ex__const_raw(p, t, &u, NULL, 0, false, err);
}

ex_expr *ex_expr_varchar(ex_plan *p, const char *s, pa_err *err)
{
    size_t n = s ? strlen(s) : 0;
    if (n > INT32_MAX) {
        pa_error(err, PA_EINVAL, "VARCHAR constant too long");
        return NULL;
    }
    return ex__const_raw(p, simple(PA_TYPE_VARCHAR), NULL, s, (int32_t)n, false, err);
}

ex_expr *ex_expr_date(ex_plan *p, const char *ymd, pa_err *err)
{
    int32_t d;
    if (pa_date_parse(ymd ? ymd : "", &d, err) != PA_OK)
        return NULL;
    return ex__const_raw(p, simple(PA_TYPE_DATE), &d, NULL, 0, false, err);
}

ex_expr *ex_expr_timestamp(ex_plan *p, pa_type t, int64_t v, pa_err *err)
{
    if (!pa_type_is_time64(t.id)) {
        pa_error(err, PA_EINVAL, "a %s constant is no timestamp", pa_type_name(t.id));
        return NULL;
    }
    union { int64_t i; __int128 w; } u = {.w = 0};   /* (const_raw reads up to 16 bytes) */
    u.i = v;
    return ex__const_raw(p, simple(t.id), &u, NULL, 0, false, err);
}

ex_expr *ex_expr_null(ex_plan *p, pa_type t, pa_err *err)
{
    if (!type_ok(t)) {
        pa_error(err, PA_EINVAL, "NULL constant of a bad type");
        return NULL;
    }
    return ex__const_raw(p, t, NULL, NULL, 0, true, err);
}

/* ---------------------------------------------------------------- casts */

static bool is_temporal(pa_type_id t) { return t == PA_TYPE_DATE || t == PA_TYPE_INTERVAL || pa_type_is_time64(t); }
static bool is_stamp(pa_type_id t)
{
    return t == PA_TYPE_TIMESTAMP || t == PA_TYPE_TIMESTAMPTZ || t == PA_TYPE_TIMESTAMP_NS;
}

static bool is_bytes(pa_type_id t) { return t == PA_TYPE_BYTEA || t == PA_TYPE_UUID; }

/* PostgreSQL's casts: any type to and from text; numbers among
 * themselves; DATE and the timestamps among themselves; a timestamp to
 * TIME. No number converts to or from a date or time; BYTEA and UUID
 * convert to and from text only. */
static bool cast_allowed(pa_type_id from, pa_type_id to)
{
    if (from == to || from == PA_TYPE_VARCHAR || to == PA_TYPE_VARCHAR)
        return true;
    if (is_bytes(from) || is_bytes(to))
        return false;
    if (!is_temporal(from) && !is_temporal(to))
        return true;
    if ((from == PA_TYPE_DATE || is_stamp(from)) && (to == PA_TYPE_DATE || is_stamp(to)))
        return true;
    return to == PA_TYPE_TIME && is_stamp(from) && from != PA_TYPE_TIMESTAMP_NS;
}

ex_expr *ex__cast(ex_plan *p, ex_expr *a, pa_type t, pa_err *err)
{
    if (!a)
        return NULL;
    if (ex__type_eq(a->type, t))
        return a;
    if (!type_ok(t) || !cast_allowed(a->type.id, t.id)) {
        char x[32], y[32];
        pa_error(err, PA_EINVAL, "CAST from %s to %s is not supported", pa_type_format(a->type, x, sizeof x),
                 pa_type_format(t, y, sizeof y));
        return NULL;
    }
    if (a->kind == EX__CONST && a->is_null)
        return ex_expr_null(p, t, err);
    /* TIMESTAMP_NS and TIMESTAMPTZ convert through TIMESTAMP (the same
     * instant: the session's zone is UTC). */
    if ((a->type.id == PA_TYPE_TIMESTAMP_NS && t.id == PA_TYPE_TIMESTAMPTZ) ||
        (a->type.id == PA_TYPE_TIMESTAMPTZ && t.id == PA_TYPE_TIMESTAMP_NS))
        return ex__cast(p, ex__cast(p, a, simple(PA_TYPE_TIMESTAMP), err), t, err);
    /* Text and the byte types convert by text functions (their results'
     * lengths vary with the input's). */
    bool bytes = is_bytes(a->type.id) || is_bytes(t.id);
    ex_expr *e = ex__node_new(p, bytes ? EX__TEXT : EX__CAST, t, 1, err);
    if (e && bytes)
        e->sub = t.id == PA_TYPE_BYTEA  ? EX_BYTEA_IN
                 : t.id == PA_TYPE_UUID ? EX_UUID_IN
                 : a->type.id == PA_TYPE_BYTEA ? EX_BYTEA_OUT
                                              : EX_UUID_OUT;
    if (!e)
        return NULL;
    e->args[0] = a;
    return ex__fold(p, e, err);
}

ex_expr *ex_expr_cast(ex_plan *p, ex_expr *a, pa_type t, pa_err *err) { return ex__cast(p, a, t, err); }

/* ---------------------------------------------------------------- equality */

bool ex_expr_equal(const ex_expr *a, const ex_expr *b) { return ex__expr_equal(a, b); }

bool ex__expr_equal(const ex_expr *a, const ex_expr *b)
{
    if (a == b)
        return true;
    if (a->kind != b->kind || a->sub != b->sub || !ex__type_eq(a->type, b->type) || a->n_args != b->n_args ||
        a->index != b->index || a->imm != b->imm || a->is_null != b->is_null || a->str_len != b->str_len)
        return false;
    if (a->kind == EX__CONST || a->kind == EX__LIKE) {
        if (a->str_len && memcmp(a->str, b->str, (size_t)a->str_len) != 0)
            return false;
        if (a->kind == EX__CONST && !a->is_null && !pa_type_is_varlen(a->type.id) &&
            memcmp(&a->v, &b->v, pa_type_bytes(a->type) > 8 ? 16 : 8) != 0)
            return false;
    }
    for (int i = 0; i < a->n_args; i++)
        if (!ex__expr_equal(a->args[i], b->args[i]))
            return false;
    return true;
}

/* ---------------------------------------------------------------- folding */

ex_expr *ex__fold(ex_plan *p, ex_expr *e, pa_err *err)
{
    if (!e || e->kind == EX__CONST || e->kind == EX__COL)
        return e;
    for (int i = 0; i < e->n_args; i++)
        if (e->args[i]->kind != EX__CONST)
            return e;
    kn_program *prog = NULL;
    void *scratch = NULL, *text = NULL;
    char *bytes = NULL;
    ex_expr *r = NULL;
    if (ex__compile(&e, 1, NULL, 0, &prog, err) != PA_OK)
        return NULL;
    int64_t nb = pa_type_is_varlen(e->type.id) ? kn_eval_str_bound(prog, 0, NULL, 0, 1) : 0;
    int64_t nt = kn_eval_str_bound(prog, KN_EVAL_TEXT_AREA, NULL, 0, 1);
    scratch = pa_malloc(kn_eval_scratch_size(prog));
    bytes = pa_malloc((size_t)nb + 1);
    text = nt ? pa_malloc((size_t)nt) : NULL;
    if (!scratch || !bytes || (nt && !text)) {
        pa_error(err, PA_ENOMEM, "out of memory folding a constant");
        goto done;
    }
    _Alignas(16) unsigned char data[16] = {0};
    uint8_t valid = 0;
    int32_t offsets[2] = {0, 0};
    pa_column out = {.type = e->type, .length = 1, .validity = &valid};
    out.data = pa_type_is_varlen(e->type.id) ? (void *)bytes : (void *)data;
    out.offsets = pa_type_is_varlen(e->type.id) ? offsets : NULL;
    kn_ctx ctx = {NULL, NULL};
    if (kn_eval(&ctx, prog, NULL, 0, 1, &out, scratch, text, nt, err) != PA_OK)
        goto done;
    r = ex__const_raw(p, e->type, data, bytes, offsets[1], !(valid & 1), err);
done:
    pa_free(prog);
    pa_free(scratch);
    pa_free(text);
    pa_free(bytes);
    return r;
}

/* ---------------------------------------------------------- text areas */

int ex_text_area_reserve(ex_op *op, ex_text_area *a, int64_t bytes, pa_err *err)
{
    if (bytes <= a->cap)
        return PA_OK;
    ex_text_area_free(op, a);
    int64_t want = bytes + bytes / 4;
    int rc = ex_alloc(op, (size_t)want, &a->p, err);
    if (rc == PA_OK)
        a->cap = want;
    return rc;
}

void ex_text_area_free(ex_op *op, ex_text_area *a)
{
    ex_free(op, a->p, (size_t)a->cap);
    a->p = NULL;
    a->cap = 0;
}
