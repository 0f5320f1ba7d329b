/*
 * scan_pred.c - predicates of a scan: parsing "col op value", binding the
 * constant to the column's engine type (exactly, see scan_const), and
 * deciding from min/max statistics whether a row group or page may hold a
 * matching row. Pruning must never drop a matching row, so every rule below
 * keeps the data whenever the statistics cannot prove otherwise.
 */
#include "storage/scan_int.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[] = {
#define PQ__OPN(name, text) text,
    PQ_OP_LIST(PQ__OPN)
#undef PQ__OPN
};

const char *pq_op_name(pq_op op)
{
    return (unsigned)op < PQ_OP__COUNT ? op_names[op] : NULL;
}

/* ------------------------------------------------------------- parsing */

static char *trim(char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    size_t n = strlen(p);
    while (n && isspace((unsigned char)p[n - 1]))
        p[--n] = '\0';
    return p;
}

static bool word_is(const char *p, const char *w)
{
    size_t n = strlen(w);
    return strncasecmp(p, w, n) == 0 && (p[n] == '\0' || isspace((unsigned char)p[n]));
}

int pq_pred_parse(char *text, pq_pred *out, pa_err *err)
{
    memset(out, 0, sizeof *out);
    char *p = trim(text);
    char *name = p;
    while (*p && (isalnum((unsigned char)*p) || *p == '_' || *p == '.'))
        p++;
    if (p == name)
        return pa_error(err, PA_ESYNTAX, "predicate '%s': expected a column name first", text);
    char *name_end = p;
    while (isspace((unsigned char)*p))
        p++;
    if (word_is(p, "IS")) {
        char *q = trim(p + 2);
        if (!strcasecmp(q, "NULL"))
            out->op = PQ_OP_IS_NULL;
        else if (!strncasecmp(q, "NOT", 3) && isspace((unsigned char)q[3]) && !strcasecmp(trim(q + 3), "NULL"))
            out->op = PQ_OP_IS_NOT_NULL;
        else
            return pa_error(err, PA_ESYNTAX, "predicate on %.*s: expected IS NULL or IS NOT NULL",
                            (int)(name_end - name), name);
        *name_end = '\0';
        out->column = name;
        out->value = "";
        return PA_OK;
    }
    static const struct { const char *t; pq_op op; } ops[] = {
        {"<=", PQ_OP_LE}, {">=", PQ_OP_GE}, {"<>", PQ_OP_NE}, {"!=", PQ_OP_NE}, {"==", PQ_OP_EQ},
        {"=", PQ_OP_EQ}, {"<", PQ_OP_LT}, {">", PQ_OP_GT},
    };
    size_t k;
    for (k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (!strncmp(p, ops[k].t, strlen(ops[k].t)))
            break;
    if (k == sizeof ops / sizeof ops[0])
        return pa_error(err, PA_ESYNTAX, "predicate '%s': expected one of = <> != < <= > >= IS NULL after the column",
                        text);
    out->op = ops[k].op;
    char *v = trim(p + strlen(ops[k].t));
    size_t n = strlen(v);
    if (n >= 2 && v[0] == '\'' && v[n - 1] == '\'') {
        v[n - 1] = '\0';
        v++;
    } else if (n == 0) {
        return pa_error(err, PA_ESYNTAX, "predicate on %.*s: the value is missing", (int)(name_end - name), name);
    }
    *name_end = '\0';
    out->column = name;
    out->value = v;
    return PA_OK;
}

/* ------------------------------------------------------------- binding */

/* floor(text * 10^scale) with exactness; saturates (inexact) outside int64. */
static int parse_scaled(const char *text, int scale, int64_t *q, bool *exact)
{
    const char *p = text;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    unsigned __int128 m = 0;
    bool over = false, frac_rest = false, any = false;
    const unsigned __int128 cap = (unsigned __int128)1 << 64;
    for (; isdigit((unsigned char)*p); p++, any = true) {
        m = m * 10 + (unsigned)(*p - '0');
        if (m > cap)
            over = true, m = cap;
    }
    int taken = 0;
    if (*p == '.') {
        for (p++; isdigit((unsigned char)*p); p++, any = true) {
            if (taken < scale) {
                m = m * 10 + (unsigned)(*p - '0');
                if (m > cap)
                    over = true, m = cap;
                taken++;
            } else if (*p != '0') {
                frac_rest = true;
            }
        }
    }
    if (!any || *p)
        return PA_ESYNTAX;
    for (; taken < scale; taken++) {
        m *= 10;
        if (m > cap)
            over = true, m = cap;
    }
    if (!neg) {
        *exact = !frac_rest && !over && m <= INT64_MAX;
        *q = m > INT64_MAX ? INT64_MAX : (int64_t)m;
    } else {
        /* floor(-(m + f)) = -m - (f > 0) */
        unsigned __int128 a = m + (frac_rest ? 1 : 0);
        *exact = !frac_rest && !over && m <= (unsigned __int128)INT64_MAX + 1;
        *q = a > (unsigned __int128)INT64_MAX + 1 ? INT64_MIN : (int64_t)(0 - (uint64_t)a);
        if (a > (unsigned __int128)INT64_MAX + 1)
            *exact = false;
    }
    return PA_OK;
}

/* n digits (1..max) at *p as a number; advances *p. */
static bool digits(const char **p, int min, int max, int64_t *out)
{
    int64_t v = 0;
    int n = 0;
    while (n < max && isdigit((unsigned char)**p)) {
        v = v * 10 + (**p - '0');
        (*p)++;
        n++;
    }
    *out = v;
    return n >= min;
}

/* "HH:MM[:SS[.fraction]]" at *p as units of 10^-frac_digits s since
 * midnight (floor; *exact false when digits past the unit are not 0). */
static bool parse_clock(const char **p, int frac_digits, __int128 *out, bool *exact)
{
    int64_t h, m, sec = 0, f = 0;
    if (!digits(p, 1, 2, &h) || **p != ':' || (++*p, !digits(p, 2, 2, &m)) || h > 24 || m > 59)
        return false;
    if (**p == ':') {
        ++*p;
        if (!digits(p, 2, 2, &sec) || sec > 60)
            return false;
        if (**p == '.') {
            ++*p;
            int taken = 0;
            if (!isdigit((unsigned char)**p))
                return false;
            for (; isdigit((unsigned char)**p); ++*p)
                if (taken < frac_digits)
                    f = f * 10 + (**p - '0'), taken++;
                else if (**p != '0')
                    *exact = false;
            for (; taken < frac_digits; taken++)
                f *= 10;
        }
    }
    __int128 unit = 1;
    for (int k = 0; k < frac_digits; k++)
        unit *= 10;
    *out = ((__int128)h * 3600 + m * 60 + sec) * unit + f;
    return true;
}

int pq_time_parse(const char *v, pa_type_id id, int64_t *q, bool *exact)
{
    const char *p = v;
    if (*p == '+' || *p == '-')
        p++;
    while (isdigit((unsigned char)*p))
        p++;
    if (p > v && !*p && isdigit((unsigned char)p[-1]))
        return parse_scaled(v, 0, q, exact);   /* raw engine value */
    int fd = id == PA_TYPE_TIMESTAMP_NS ? 9 : 6;
    __int128 unit = id == PA_TYPE_TIMESTAMP_NS ? 1000000000 : 1000000, t = 0, clock = 0;
    *exact = true;
    p = v;
    if (id == PA_TYPE_TIME) {
        if (!parse_clock(&p, fd, &clock, exact) || *p || clock > (__int128)86400 * unit)
            return PA_ESYNTAX;
        *q = (int64_t)clock;
        return PA_OK;
    }
    char date[32];
    size_t n = strcspn(v, " T");
    if (n >= sizeof date)
        return PA_ESYNTAX;
    memcpy(date, v, n);
    date[n] = '\0';
    int32_t days;
    if (pa_date_parse(date, &days, NULL) != PA_OK)
        return PA_ESYNTAX;
    p = v + n;
    if (*p) {
        p++;
        if (!parse_clock(&p, fd, &clock, exact))
            return PA_ESYNTAX;
    }
    t = (__int128)days * 86400 * unit + clock;
    while (*p == ' ')
        p++;
    if (*p == 'Z' || !strcasecmp(p, "UTC"))
        p += *p == 'Z' ? 1 : 3;
    else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1;
        int64_t oh, om = 0;
        if (!digits(&p, 2, 2, &oh))
            return PA_ESYNTAX;
        if (*p == ':')
            p++;
        if (isdigit((unsigned char)*p) && !digits(&p, 2, 2, &om))
            return PA_ESYNTAX;
        t -= sign * ((__int128)oh * 3600 + om * 60) * unit;
    }
    if (*p)
        return PA_ESYNTAX;
    if (t > INT64_MAX || t < INT64_MIN) {
        *exact = false;
        *q = t > 0 ? INT64_MAX : INT64_MIN;
    } else {
        *q = (int64_t)t;
    }
    return PA_OK;
}

int scan__bind_pred(pq_scan *s, const pq_pred *p, int col, scan_pred *out, pa_err *err)
{
    return scan__bind_pred_type(p, s->rcols[col].type, col, out, err);
}

int scan__bind_pred_type(const pq_pred *p, pa_type t, int col, scan_pred *out, pa_err *err)
{
    memset(out, 0, sizeof *out);
    out->col = col;
    out->op = p->op;
    if ((unsigned)p->op >= PQ_OP__COUNT)
        return pa_error(err, PA_EINVAL, "predicate on %s: bad operator %d", p->column, (int)p->op);
    out->kind = pa_type_is_float(t.id) ? SCAN_K_DOUBLE : t.id == PA_TYPE_VARCHAR ? SCAN_K_STRING : SCAN_K_INT;
    if (p->op == PQ_OP_IS_NULL || p->op == PQ_OP_IS_NOT_NULL)
        return PA_OK;
    if (t.id == PA_TYPE_INTERVAL || t.id == PA_TYPE_BYTEA || t.id == PA_TYPE_UUID)
        return pa_error(err, PA_EUNSUPPORTED, "predicate on %s: the scan compares %s values only for "
                        "IS [NOT] NULL (filter them above the scan)", p->column, pa_type_name(t.id));
    if (t.id == PA_TYPE_DECIMAL && t.precision > 18)
        return pa_error(err, PA_EUNSUPPORTED, "predicate on %s: the scan compares DECIMAL(%d,%d) values only for "
                        "IS [NOT] NULL (filter them above the scan)", p->column, t.precision, t.scale);
    const char *v = p->value ? p->value : "";
    char tb[32];
    int rc = PA_OK;
    switch (t.id) {
    case PA_TYPE_BOOLEAN:
        out->c.exact = true;
        if (!strcasecmp(v, "true") || !strcmp(v, "1"))
            out->c.q = 1;
        else if (!strcasecmp(v, "false") || !strcmp(v, "0"))
            out->c.q = 0;
        else
            rc = PA_ESYNTAX;
        break;
    case PA_TYPE_DATE: {
        int32_t d;
        pa_err e2;
        pa_err_init(&e2);
        rc = pa_date_parse(v, &d, &e2) == PA_OK ? PA_OK : PA_ESYNTAX;
        pa_err_close(&e2);
        out->c.q = d;
        out->c.exact = true;
        break;
    }
    case PA_TYPE_DOUBLE:
    case PA_TYPE_REAL: {
        char *end;
        out->c.d = strtod(v, &end);
        if (end == v || *end)
            rc = PA_ESYNTAX;
        break;
    }
    case PA_TYPE_TIMESTAMP:
    case PA_TYPE_TIMESTAMPTZ:
    case PA_TYPE_TIMESTAMP_NS:
    case PA_TYPE_TIME:
        rc = pq_time_parse(v, t.id, &out->c.q, &out->c.exact);
        break;
    case PA_TYPE_VARCHAR:
        out->c.len = strlen(v);
        if (!(out->c.s = pa_malloc(out->c.len + 1)))
            return pa_error(err, PA_ENOMEM, "out of memory binding a predicate");
        memcpy(out->c.s, v, out->c.len + 1);
        break;
    default:   /* INTEGER, BIGINT, DECIMAL */
        rc = parse_scaled(v, t.id == PA_TYPE_DECIMAL ? t.scale : 0, &out->c.q, &out->c.exact);
        break;
    }
    if (rc != PA_OK)
        return pa_error(err, PA_ESYNTAX, "predicate %s %s '%s': not a %s constant", p->column, pq_op_name(p->op), v,
                        pa_type_format(t, tb, sizeof tb));
    return PA_OK;
}

void scan__pred_free(scan_pred *p)
{
    pa_free(p->c.s);
    p->c.s = NULL;
}

/* ---------------------------------------------------- statistics values */

static int64_t le_signed(const uint8_t *b, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | b[i];
    if (n < 8 && ((v >> (8 * n - 1)) & 1))
        v |= ~(uint64_t)0 << (8 * n);
    return (int64_t)v;
}

/* Big-endian two's complement that fits int64. */
static bool be_signed(const uint8_t *b, uint32_t n, int64_t *out)
{
    if (n == 0)
        return false;
    uint8_t sign = (b[0] & 0x80) ? 0xff : 0;
    uint64_t v = sign ? ~(uint64_t)0 : 0;
    for (uint32_t i = 0; i < n; i++) {
        if (n - i > 8 && b[i] != sign)
            return false;
        v = v << 8 | b[i];
    }
    if (n >= 8 && (v >> 63) != (sign ? 1u : 0u))
        return false;
    *out = (int64_t)v;
    return true;
}

static int64_t sat_mul(int64_t v, int64_t k)
{
    int64_t r;
    if (__builtin_mul_overflow(v, k, &r))
        return v < 0 ? INT64_MIN : INT64_MAX;
    return r;
}

/* Statistics value -> engine integer. False when it cannot be read soundly. */
static bool stat_int(const pq_column_desc *d, pq_bin v, bool legacy, int64_t *out)
{
    switch (d->physical_type) {
    case PQ_T_BOOLEAN:
        if (v.len != 1)
            return false;
        *out = v.ptr[0] != 0;
        return true;
    case PQ_T_INT32:
        if (v.len != 4)
            return false;
        if (d->type.id == PA_TYPE_BIGINT) {   /* UINT_32: unsigned order, never in legacy stats */
            if (legacy)
                return false;
            *out = (int64_t)(uint32_t)le_signed(v.ptr, 4);
        } else {
            *out = le_signed(v.ptr, 4);
        }
        if (d->time_unit == PQ_TU_MILLIS)   /* TIME(MILLIS): the engine's microseconds */
            *out *= 1000;
        return true;
    case PQ_T_INT64:
        if (v.len != 8)
            return false;
        *out = le_signed(v.ptr, 8);
        if (d->time_unit == PQ_TU_MILLIS)   /* TIMESTAMP(MILLIS): in microseconds, as the scan decodes it */
            *out = sat_mul(*out, 1000);
        return true;   /* (NANOS: TIMESTAMP_NS, the stored nanoseconds) */
    case PQ_T_BYTE_ARRAY:
    case PQ_T_FIXED_LEN_BYTE_ARRAY:
        return !legacy && d->type.id == PA_TYPE_DECIMAL && be_signed(v.ptr, v.len, out);
    default:   /* INT96: writers' statistics of it are unreliable, never used */
        return false;
    }
}

static bool stat_double(const pq_column_desc *d, pq_bin v, bool legacy, double *out)
{
    if (legacy)
        return false;
    if (d->physical_type == PQ_T_FLOAT && v.len == 4) {
        float f;
        memcpy(&f, v.ptr, 4);
        *out = f;
        return !isnan(*out);
    }
    if (d->physical_type == PQ_T_DOUBLE && v.len == 8) {
        memcpy(out, v.ptr, 8);
        return !isnan(*out);
    }
    return false;
}

static bool int_match(int64_t v, pq_op op, int64_t q, bool exact)
{
    switch (op) {
    case PQ_OP_EQ: return exact && v == q;
    case PQ_OP_NE: return !(exact && v == q);
    case PQ_OP_LT: return exact ? v < q : v <= q;
    case PQ_OP_LE: return v <= q;
    case PQ_OP_GT: return v > q;
    case PQ_OP_GE: return exact ? v >= q : v > q;
    default: return true;
    }
}

static int bytes_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an > bn) - (an < bn);
}

bool scan__may_match(const scan_pred *p, const pq_column_desc *d, pq_bin min, pq_bin max,
                     bool legacy, int64_t null_count, int64_t num_values, int64_t nan_count,
                     bool all_null)
{
    if (null_count >= 0 && num_values >= 0 && null_count >= num_values)
        all_null = true;
    if (p->op == PQ_OP_IS_NULL)
        return all_null || null_count != 0;
    if (p->op == PQ_OP_IS_NOT_NULL || all_null)
        return !all_null;
    bool lo_ok = min.ptr != NULL, hi_ok = max.ptr != NULL;
    if (p->kind == SCAN_K_INT) {
        int64_t lo = 0, hi = 0;
        lo_ok = lo_ok && stat_int(d, min, legacy, &lo);
        hi_ok = hi_ok && stat_int(d, max, legacy, &hi);
        switch (p->op) {
        case PQ_OP_EQ:
            return p->c.exact && (!lo_ok || lo <= p->c.q) && (!hi_ok || p->c.q <= hi);
        case PQ_OP_NE:
            return !(p->c.exact && lo_ok && hi_ok && lo == p->c.q && hi == p->c.q);
        case PQ_OP_LT:
        case PQ_OP_LE:
            return !lo_ok || int_match(lo, p->op, p->c.q, p->c.exact);
        default:
            return !hi_ok || int_match(hi, p->op, p->c.q, p->c.exact);
        }
    }
    if (p->kind == SCAN_K_DOUBLE) {
        double lo = 0, hi = 0, c = p->c.d;
        lo_ok = lo_ok && stat_double(d, min, legacy, &lo);
        hi_ok = hi_ok && stat_double(d, max, legacy, &hi);
        if (isnan(c))
            return true;
        /* NaN values are not in min/max and sort above every number: they
         * may satisfy > >= <> unless the statistics say there are none. */
        bool nan_free = nan_count == 0;
        switch (p->op) {
        case PQ_OP_EQ: return (!lo_ok || lo <= c) && (!hi_ok || c <= hi);
        case PQ_OP_LT: return !lo_ok || lo < c;
        case PQ_OP_LE: return !lo_ok || lo <= c;
        case PQ_OP_GT: return !nan_free || !hi_ok || hi > c;
        case PQ_OP_GE: return !nan_free || !hi_ok || hi >= c;
        default: return true;
        }
    }
    /* VARCHAR: bytewise unsigned order; only the new min_value/max_value
     * fields have it (a truncated max is still an upper bound). */
    if (legacy || d->type.id != PA_TYPE_VARCHAR)
        return true;
    const uint8_t *cs = (const uint8_t *)p->c.s;
    size_t cn = p->c.len;
    switch (p->op) {
    case PQ_OP_EQ:
        return (!lo_ok || bytes_cmp(min.ptr, min.len, cs, cn) <= 0) &&
               (!hi_ok || bytes_cmp(cs, cn, max.ptr, max.len) <= 0);
    case PQ_OP_LT: return !lo_ok || bytes_cmp(min.ptr, min.len, cs, cn) < 0;
    case PQ_OP_LE: return !lo_ok || bytes_cmp(min.ptr, min.len, cs, cn) <= 0;
    case PQ_OP_GT: return !hi_ok || bytes_cmp(max.ptr, max.len, cs, cn) > 0;
    case PQ_OP_GE: return !hi_ok || bytes_cmp(max.ptr, max.len, cs, cn) >= 0;
    default: return true;
    }
}

/* The deprecated min/max are signed order: sound for signed integers,
 * dates, decimals in INT32/INT64 and booleans only. */
static bool legacy_sound(const pq_column_desc *d)
{
    if (d->physical_type == PQ_T_BOOLEAN || d->physical_type == PQ_T_INT64)
        return true;
    return d->physical_type == PQ_T_INT32 && d->type.id != PA_TYPE_BIGINT;
}

bool scan__rg_may_match(const scan_pred *p, const pq_column_desc *d, const pq_column_meta *cm)
{
    if (!cm->has_statistics)
        return true;
    const pq_statistics *st = &cm->statistics;
    int64_t nulls = st->has_null_count ? st->null_count : -1;
    int64_t nans = st->has_nan_count ? st->nan_count : -1;
    pq_bin none = {NULL, 0};
    if (st->min_value.ptr || st->max_value.ptr)
        return scan__may_match(p, d, st->min_value, st->max_value, false, nulls, cm->num_values, nans, false);
    if ((st->min.ptr || st->max.ptr) && legacy_sound(d))
        return scan__may_match(p, d, st->min, st->max, true, nulls, cm->num_values, nans, false);
    return scan__may_match(p, d, none, none, false, nulls, cm->num_values, nans, false);
}

const char *scan__part_value(const pq_scan *s, int r, uint32_t f)
{
    const pq_hive *h = s->hive;
    return h->values[(size_t)s->files[f].hive_file * (size_t)h->n_keys + (size_t)s->rcols[r].part];
}

bool scan__const_match(const scan_pred *p, pa_type t, const char *value)
{
    if (p->op == PQ_OP_IS_NULL)
        return !value;
    if (p->op == PQ_OP_IS_NOT_NULL)
        return value != NULL;
    if (!value)
        return false;
    if (p->kind == SCAN_K_STRING) {
        int c = bytes_cmp((const uint8_t *)value, strlen(value), (const uint8_t *)p->c.s, p->c.len);
        switch (p->op) {
        case PQ_OP_EQ: return c == 0;
        case PQ_OP_NE: return c != 0;
        case PQ_OP_LT: return c < 0;
        case PQ_OP_LE: return c <= 0;
        case PQ_OP_GT: return c > 0;
        case PQ_OP_GE: return c >= 0;
        default: return false;
        }
    }
    int64_t v = 0;
    if (t.id == PA_TYPE_DATE) {
        int32_t d;
        if (pa_date_parse(value, &d, NULL) != PA_OK)
            return true;   /* cannot tell: keep */
        v = d;
    } else if (t.id == PA_TYPE_BIGINT || t.id == PA_TYPE_INTEGER) {
        char *end;
        v = strtoll(value, &end, 10);
        if (end == value || *end)
            return true;
    } else if (t.id == PA_TYPE_TIMESTAMP || t.id == PA_TYPE_TIMESTAMPTZ) {   /* a partition value (pq_hive_detect) */
        bool exact;
        if (pq_time_parse(value, t.id, &v, &exact) != PA_OK)
            return true;
    } else {
        return true;
    }
    if (p->kind == SCAN_K_DOUBLE)
        return true;
    return int_match(v, p->op, p->c.q, p->c.exact);
}
