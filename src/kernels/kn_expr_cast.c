/*
 * kn_expr_cast.c - CAST between the engine types, and value formatting.
 *
 * Rules (DuckDB's, which the TPC-H answers come from):
 * - Exact numbers (BOOLEAN, INTEGER, BIGINT, DECIMAL) convert as scaled
 *   integers: scaling up is exact or PA_EOVERFLOW, scaling down rounds half
 *   away from zero, then the target's range is checked (DECIMAL(p,s):
 *   |v| < 10^p). DOUBLE -> INTEGER/BIGINT rounds half to even; DOUBLE ->
 *   DECIMAL computes x * 10^s in double and rounds half away from zero; NaN
 *   and values out of range are PA_EOVERFLOW. Anything -> BOOLEAN is v != 0.
 * - VARCHAR -> number/DATE/BOOLEAN parses the text (surrounding spaces
 *   allowed); bad text is PA_EINVAL quoting it. Integers accept a fraction
 *   and round it, as DuckDB does.
 * - Anything -> VARCHAR formats like DuckDB: DECIMAL with all its scale
 *   digits, DOUBLE as the shortest text that reads back exactly (Python's
 *   repr style: 0.1, 100.0, 1e+16, 1.5e-05), DATE as YYYY-MM-DD, BOOLEAN as
 *   true/false. The text goes to the register's own area.
 * - Casts where a time type takes part are kn_expr_time.c's.
 * The per-value parsing, formatting and rescaling are kn_scalar.h's and
 * kn_scalar_f64.h's (DOUBLE text: exact, equal to snprintf / strtod),
 * shared with the CUDA kernels.
 */
#include "kernels/kn_expr_int.h"
#include "kernels/kn_scalar_f64.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------ formatting */

int kn__format(pa_type t, const void *v, char *buf, size_t cap)
{
    const int c = cap > INT32_MAX ? INT32_MAX : (int)cap;
    int32_t i32;
    int64_t i64;
    double f;
    __int128 w;
    switch (t.id) {
    case PA_TYPE_BOOLEAN: return kn__s_format_bool(*(const uint8_t *)v != 0, buf, c);
    case PA_TYPE_INTEGER: memcpy(&i32, v, 4); return kn__s_format_i64(i32, buf, c);
    case PA_TYPE_BIGINT: memcpy(&i64, v, 8); return kn__s_format_i64(i64, buf, c);
    case PA_TYPE_DOUBLE: memcpy(&f, v, 8); return kn__s_format_double(f, buf, c);
    case PA_TYPE_REAL: memcpy(&f, v, 8); return kn__s_format_real(f, buf, c);
    case PA_TYPE_DATE: memcpy(&i32, v, 4); return kn__s_format_date(i32, buf, c);
    case PA_TYPE_DECIMAL:
        if (t.precision > PA_DECIMAL64_MAX_PRECISION) {
            memcpy(&w, v, 16);
            return kn__s_format_decimal128(w, t.scale, buf, c);
        }
        memcpy(&i64, v, 8);
        return kn__s_format_decimal64(i64, t.scale, buf, c);
    case PA_TYPE_VARCHAR: {
        const kn__str *s = v;
        return kn__s_put(buf, c, s->p, (int)(s->len < c ? s->len : c));
    }
    case PA_TYPE_BYTEA:
    case PA_TYPE_UUID: {
        const kn__str *s = v;
        return kn__s_format_bytes(t.id == PA_TYPE_UUID, (const uint8_t *)s->p, s->len, buf, c);
    }
    case PA_TYPE_TIMESTAMP:
    case PA_TYPE_TIMESTAMPTZ:
    case PA_TYPE_TIME:
    case PA_TYPE_TIMESTAMP_NS:
    case PA_TYPE_INTERVAL: return kn__format_time(t, v, buf, c);
    default: return kn__s_put_cstr(buf, c, "?");
    }
}

/* --------------------------------------------------------------- parsing */

/* ----------------------------------------------------------------- casts */

static int type_scale(pa_type t) { return t.id == PA_TYPE_DECIMAL ? t.scale : 0; }

static int fail_value(kn__eval *e, const kn_insn *in, const void *v, int code)
{
    char a[KN_EVAL_STR_ROW_BYTES], ta[32], tb[32];
    kn__format(in->atype, v, a, sizeof a);
    if (code == PA_EINVAL)
        return pa_error(e->err, code, "could not convert '%s' to %s", a, pa_type_format(in->type, tb, sizeof tb));
    return pa_error(e->err, code, "value %s of type %s out of range for %s", a, pa_type_format(in->atype, ta, sizeof ta),
                    pa_type_format(in->type, tb, sizeof tb));
}

static void store_exact(kn__kind k, void *D, int i, __int128 v)
{
    switch (k) {
    case KN__BOOL: ((uint8_t *)D)[i] = v != 0; break;
    case KN__I32: ((int32_t *)D)[i] = (int32_t)v; break;
    case KN__I64: ((int64_t *)D)[i] = (int64_t)v; break;
    case KN__I128: ((__int128 *)D)[i] = v; break;
    default: break;
    }
}

/* Exact -> exact: rescale by 10^(s2 - s1), check the range. */
static int cast_exact(kn__eval *e, const kn_insn *in, const kn__reg *a, void *D)
{
    const kn__kind ka = kn__kind_of(in->atype), kd = kn__kind_of(in->type);
    const int shift = type_scale(in->type) - type_scale(in->atype);
    __int128 lo, hi;
    kn__s_exact_bounds(in->type, &lo, &hi);
    const int n = e->n;
    /* Hot paths: widening without rescale or with an exact scale-up. */
    if (ka == KN__I64 && kd == KN__I128 && shift >= 0 && shift <= 19) {
        const int64_t *A = a->data;
        __int128 *W = D;
        const __int128 f = kn__pow10_128[shift];
        for (int i = 0; i < n; i++)
            W[i] = (__int128)A[i] * f;   /* |A| < 2^63, f <= 10^19: fits */
        bool bad = false;
        for (int i = 0; i < n; i++)
            bad |= (W[i] > hi) | (W[i] < lo);
        if (!bad)
            return PA_OK;
    } else if (ka == KN__I64 && kd == KN__I64 && shift > 0 && shift <= 18) {
        const int64_t *A = a->data;
        int64_t *W = D;
        const int64_t f = kn__pow10_64[shift];
        const int64_t lim = (int64_t)(hi / f);
        bool bad = false;
        for (int i = 0; i < n; i++) {
            bad |= (A[i] > lim) | (A[i] < -lim);
            W[i] = (int64_t)((uint64_t)A[i] * (uint64_t)f);
        }
        if (!bad)
            return PA_OK;
    } else if (ka == KN__I32 && kd == KN__I64 && shift == 0) {
        const int32_t *A = a->data;
        int64_t *W = D;
        for (int i = 0; i < n; i++)
            W[i] = A[i];
        return PA_OK;
    }
    /* General path, one row at a time in 128 bits. */
    const int abs_shift = shift < 0 ? -shift : shift;
    const __int128 f = kn__pow10_128[abs_shift > 38 ? 38 : abs_shift];
    const int w = kn__kind_width(ka);
    for (int i = 0; i < n; i++) {
        const void *src = (const char *)a->data + (size_t)i * w;
        __int128 v = 0;
        switch (ka) {
        case KN__BOOL: v = *(const uint8_t *)src; break;
        case KN__I32: v = *(const int32_t *)src; break;
        case KN__I64: v = *(const int64_t *)src; break;
        default: memcpy(&v, src, 16); break;
        }
        bool bad;
        v = kn__s_rescale(v, shift, f, &bad);
        if (kd != KN__BOOL)
            bad |= v < lo || v > hi;
        if (bad && kn__valid(a, i))
            return fail_value(e, in, src, PA_EOVERFLOW);
        store_exact(kd, D, i, v);
    }
    return PA_OK;
}

static int cast_to_double(kn__eval *e, const kn_insn *in, const kn__reg *a, double *D)
{
    const int n = e->n;
    const double f = kn__pow10_f64[type_scale(in->atype)];
    switch (kn__kind_of(in->atype)) {
    case KN__BOOL: { const uint8_t *A = a->data; for (int i = 0; i < n; i++) D[i] = A[i]; } break;
    case KN__I32: { const int32_t *A = a->data; for (int i = 0; i < n; i++) D[i] = (double)A[i] / f; } break;
    case KN__I64: {
        const int64_t *A = a->data;
        if (in->type.id == PA_TYPE_REAL && f == 1)   /* one rounding, to float (not to double, then float) */
            for (int i = 0; i < n; i++)
                D[i] = (double)(float)A[i];
        else
            for (int i = 0; i < n; i++)
                D[i] = (double)A[i] / f;
        break;
    }
    case KN__I128: { const __int128 *A = a->data; for (int i = 0; i < n; i++) D[i] = (double)A[i] / f; } break;
    default: return pa_error(e->err, PA_EINVAL, "CAST from %s to DOUBLE", pa_type_name(in->atype.id));
    }
    return PA_OK;
}

static int cast_from_double(kn__eval *e, const kn_insn *in, const kn__reg *a, void *D)
{
    const double *A = a->data;
    const kn__kind kd = kn__kind_of(in->type);
    const int n = e->n;
    if (kd == KN__BOOL) {
        for (int i = 0; i < n; i++)
            ((uint8_t *)D)[i] = A[i] != 0;
        return PA_OK;
    }
    const bool is_dec = in->type.id == PA_TYPE_DECIMAL;
    const double f = kn__pow10_f64[type_scale(in->type)];
    /* Exclusive bounds in double: 2^31, 2^63, 10^p. */
    const double lim = in->type.id == PA_TYPE_INTEGER ? 2147483648.0
                     : in->type.id == PA_TYPE_BIGINT ? 9223372036854775808.0
                                                     : kn__pow10_f64[in->type.precision];
    for (int i = 0; i < n; i++) {
        double x = is_dec ? round(A[i] * f) : nearbyint(A[i]);
        if (!(x < lim && x >= -lim) || (is_dec && x <= -lim)) {
            if (kn__valid(a, i))
                return fail_value(e, in, &A[i], PA_EOVERFLOW);
            x = 0;
        }
        store_exact(kd, D, i, (__int128)x);
    }
    return PA_OK;
}

static int cast_from_str(kn__eval *e, const kn_insn *in, const kn__reg *a, void *D)
{
    const kn__str *A = a->data;
    const kn__kind kd = kn__kind_of(in->type);
    __int128 lo, hi;
    kn__s_exact_bounds(in->type, &lo, &hi);
    for (int i = 0; i < e->n; i++) {
        if (!kn__valid(a, i)) {
            store_exact(kd == KN__F64 || kd == KN__STR ? KN__I64 : kd, D, i, 0);
            continue;
        }
        bool ok;
        switch (in->type.id) {
        case PA_TYPE_BOOLEAN: ok = kn__s_parse_bool(A[i], &((uint8_t *)D)[i]); break;
        case PA_TYPE_DATE: ok = kn__s_parse_date(A[i], &((int32_t *)D)[i]); break;
        case PA_TYPE_DOUBLE: ok = kn__s_parse_double(A[i], &((double *)D)[i]); break;
        case PA_TYPE_REAL: ok = kn__s_parse_real(A[i], &((double *)D)[i]); break;
        default: {
            __int128 v;
            ok = kn__s_parse_scaled(A[i], type_scale(in->type), &v);
            if (ok && (v < lo || v > hi))
                return fail_value(e, in, &A[i], PA_EOVERFLOW);
            if (ok)
                store_exact(kd, D, i, v);
        }
        }
        if (!ok)
            return fail_value(e, in, &A[i], PA_EINVAL);
    }
    return PA_OK;
}

static int cast_to_str(kn__eval *e, const kn_insn *in, kn__reg *d, const kn__reg *a)
{
    kn__str *D = d->data;
    const int w = kn__kind_width(kn__kind_of(in->atype));
    if (!d->text)
        return pa_error(e->err, PA_EINVAL, "CAST to VARCHAR into a register without text area");
    for (int i = 0; i < e->n; i++) {
        char *t = d->text + (size_t)i * KN_EVAL_STR_ROW_BYTES;
        int len = kn__format(in->atype, (const char *)a->data + (size_t)i * w, t, KN_EVAL_STR_ROW_BYTES);
        D[i].p = t;
        D[i].len = len < KN_EVAL_STR_ROW_BYTES ? len : KN_EVAL_STR_ROW_BYTES - 1;
    }
    return PA_OK;
}

int kn__op_cast(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a];
    const pa_type_id from = in->atype.id, to = in->type.id;
    void *D = d->data = d->slot;
    int rc;
    kn__valid_and2(e, d, a, NULL);
    if (kn__s_is_time(from) || kn__s_is_time(to))
        rc = kn__cast_time(e, in);
    else if (to == PA_TYPE_VARCHAR)
        rc = from == PA_TYPE_VARCHAR ? (memcpy(D, a->data, (size_t)e->n * sizeof(kn__str)), PA_OK)
                                     : cast_to_str(e, in, d, a);
    else if (from == PA_TYPE_VARCHAR)
        rc = cast_from_str(e, in, a, D);
    else if (from == PA_TYPE_DATE || to == PA_TYPE_DATE)
        rc = from == to ? (memcpy(D, a->data, (size_t)e->n * 4), PA_OK)
                        : pa_error(e->err, PA_EINVAL, "CAST from %s to %s is not supported", pa_type_name(from),
                                   pa_type_name(to));
    else if (pa_type_is_float(to))   /* (to REAL: kn__real_round rounds after the instruction) */
        rc = pa_type_is_float(from) ? (memcpy(D, a->data, (size_t)e->n * 8), PA_OK) : cast_to_double(e, in, a, D);
    else if (pa_type_is_float(from))
        rc = cast_from_double(e, in, a, D);
    else
        rc = cast_exact(e, in, a, D);
    return rc;
}
