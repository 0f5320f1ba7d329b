/*
 * pq_schema.c - mapping Parquet leaf columns to engine types (pa_type), and
 * turning PLAIN-encoded statistics values into text for those types.
 * The mapping rules are listed in storage.h, section 4.
 */
#include "storage/pq_meta_int.h"
#include "core/datetime.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* annotation()'s kind for the ConvertedType INTERVAL (no LogicalType has it). */
#define PQ_CT_INTERVAL_KIND 1000

static int unsupported(pa_err *err, const char *name, const char *what)
{
    return pa_error(err, PA_EUNSUPPORTED, "column %s: %s is not supported", name, what);
}

/* The element's annotation as a logical kind, from LogicalType or else the
 * legacy ConvertedType: PQ_LT_NONE when there is none, -1 for a converted
 * type with no logical equivalent. Sets the time unit (TIMESTAMP, TIME), and
 * the bit width and signedness (INTEGER). */
static int32_t annotation(const pq_schema_element *e, int32_t *unit, bool *utc, int *bits, bool *is_signed)
{
    *unit = 0;
    *bits = 0;
    *is_signed = true;
    *utc = false;
    if (e->logical.kind != PQ_LT_NONE) {
        *unit = e->logical.unit;
        *utc = e->logical.is_adjusted_to_utc;
        *bits = e->logical.bit_width;
        *is_signed = e->logical.is_signed;
        return e->logical.kind;
    }
    if (!e->has_converted_type)
        return PQ_LT_NONE;
    switch (e->converted_type) {
    case PQ_CT_UTF8: return PQ_LT_STRING;
    case PQ_CT_ENUM: return PQ_LT_ENUM;
    case PQ_CT_JSON: return PQ_LT_JSON;
    case PQ_CT_BSON: return PQ_LT_BSON;
    case PQ_CT_DECIMAL: return PQ_LT_DECIMAL;
    case PQ_CT_DATE: return PQ_LT_DATE;
    case PQ_CT_TIME_MILLIS: *unit = PQ_TU_MILLIS; return PQ_LT_TIME;
    case PQ_CT_TIME_MICROS: *unit = PQ_TU_MICROS; return PQ_LT_TIME;
    /* The format says the legacy timestamps are UTC-adjusted, but DuckDB
     * 1.5 reads them (without a LogicalType) as TIMESTAMP, and so do we
     * (tests/data/parquet/time/legacy.types.txt). */
    case PQ_CT_TIMESTAMP_MILLIS: *unit = PQ_TU_MILLIS; return PQ_LT_TIMESTAMP;
    case PQ_CT_TIMESTAMP_MICROS: *unit = PQ_TU_MICROS; return PQ_LT_TIMESTAMP;
    case PQ_CT_INT_8: *bits = 8; return PQ_LT_INTEGER;
    case PQ_CT_INT_16: *bits = 16; return PQ_LT_INTEGER;
    case PQ_CT_INT_32: *bits = 32; return PQ_LT_INTEGER;
    case PQ_CT_INT_64: *bits = 64; return PQ_LT_INTEGER;
    case PQ_CT_UINT_8: *bits = 8; *is_signed = false; return PQ_LT_INTEGER;
    case PQ_CT_UINT_16: *bits = 16; *is_signed = false; return PQ_LT_INTEGER;
    case PQ_CT_UINT_32: *bits = 32; *is_signed = false; return PQ_LT_INTEGER;
    case PQ_CT_UINT_64: *bits = 64; *is_signed = false; return PQ_LT_INTEGER;
    case PQ_CT_MAP: return PQ_LT_MAP;
    case PQ_CT_LIST: return PQ_LT_LIST;
    case PQ_CT_INTERVAL: return PQ_CT_INTERVAL_KIND;
    default: return -1;   /* MAP_KEY_VALUE, unknown values */
    }
}

/* TIME and TIMESTAMP of a unit outside MILLIS, MICROS, NANOS. */
static int bad_unit(pa_err *err, const char *name, const char *what)
{
    return pa_error(err, PA_ECORRUPT, "column %s: %s without a valid unit", name, what);
}

static int decimal_type(const pq_schema_element *e, const char *name, pa_type *t, pa_err *err)
{
    int32_t p = e->logical.kind == PQ_LT_DECIMAL ? e->logical.precision : e->precision;
    int32_t s = e->logical.kind == PQ_LT_DECIMAL ? e->logical.scale : e->scale;
    if (e->logical.kind != PQ_LT_DECIMAL && !e->has_precision)
        return pa_error(err, PA_ECORRUPT, "column %s: DECIMAL without a precision", name);
    if (p < 1 || s < 0 || s > p)
        return pa_error(err, PA_ECORRUPT, "column %s: bad DECIMAL(%d,%d)", name, p, s);
    /* Up to 38 digits in byte arrays (16-byte values in the engine); an
     * INT32 or INT64 holds at most 18 (the format's rule). */
    if (p > 38 || (p > 18 && e->type != PQ_T_FIXED_LEN_BYTE_ARRAY && e->type != PQ_T_BYTE_ARRAY)) {
        char what[80];
        snprintf(what, sizeof what, "DECIMAL(%d,%d) %s", p, s, p > 38 ? "wider than 38 digits" : "wider than 18 digits in an integer");
        return unsupported(err, name, what);
    }
    *t = (pa_type){PA_TYPE_DECIMAL, (uint8_t)p, (uint8_t)s};
    return PA_OK;
}

int pq_element_type(const pq_schema_element *e, const char *name, pq_column_desc *out, pa_err *err)
{
    memset(out, 0, sizeof *out);
    out->name = name;
    out->physical_type = e->type;
    out->type_length = e->type == PQ_T_FIXED_LEN_BYTE_ARRAY ? e->type_length : 0;
    out->nullable = e->has_repetition && e->repetition == PQ_REP_OPTIONAL;
    if (e->has_repetition && e->repetition != PQ_REP_REQUIRED && e->repetition != PQ_REP_OPTIONAL)
        return unsupported(err, name, "a repeated (list) column");
    int32_t unit;
    int bits;
    bool is_signed, utc;
    int32_t kind = annotation(e, &unit, &utc, &bits, &is_signed);
    const char *kname = kind == PQ_CT_INTERVAL_KIND ? "INTERVAL" : pq_logical_kind_name(kind);
    char what[96];
    snprintf(what, sizeof what, "%s annotated %s", pq_physical_type_name(e->type) ? pq_physical_type_name(e->type) : "an unknown type",
             kind == PQ_LT_NONE ? "with nothing" : kname ? kname : "with an unknown logical type");
    pa_type *t = &out->type;
    switch (e->type) {
    case PQ_T_BOOLEAN:
        if (kind != PQ_LT_NONE)
            return unsupported(err, name, what);
        *t = (pa_type){PA_TYPE_BOOLEAN, 0, 0};
        return PA_OK;
    case PQ_T_INT32:
        if (kind == PQ_LT_DATE)
            *t = (pa_type){PA_TYPE_DATE, 0, 0};
        else if (kind == PQ_LT_DECIMAL)
            return decimal_type(e, name, t, err);
        else if (kind == PQ_LT_NONE || (kind == PQ_LT_INTEGER && (is_signed || bits < 32)))
            *t = (pa_type){PA_TYPE_INTEGER, 0, 0};
        else if (kind == PQ_LT_INTEGER)
            *t = (pa_type){PA_TYPE_BIGINT, 0, 0};   /* UINT_32 widens */
        else if (kind == PQ_LT_TIME && unit == PQ_TU_MILLIS) {
            out->time_unit = unit;   /* int32 milliseconds, widened and scaled by the scan */
            *t = (pa_type){PA_TYPE_TIME, 0, 0};
        } else if (kind == PQ_LT_TIME)
            return unit == PQ_TU_MICROS || unit == PQ_TU_NANOS ? unsupported(err, name, "TIME in an INT32 of micro- or nanoseconds")
                                                              : bad_unit(err, name, "TIME");
        else
            return unsupported(err, name, what);
        return PA_OK;
    case PQ_T_INT64:
        if (kind == PQ_LT_DECIMAL)
            return decimal_type(e, name, t, err);
        if (kind == PQ_LT_TIMESTAMP) {
            if (unit < PQ_TU_MILLIS || unit > PQ_TU_NANOS)
                return bad_unit(err, name, "TIMESTAMP");
            out->time_unit = unit;   /* MILLIS: scaled to microseconds by the scan */
            *t = (pa_type){unit == PQ_TU_NANOS ? PA_TYPE_TIMESTAMP_NS : utc ? PA_TYPE_TIMESTAMPTZ : PA_TYPE_TIMESTAMP, 0, 0};
            return PA_OK;
        }
        if (kind == PQ_LT_TIME) {
            if (unit < PQ_TU_MILLIS || unit > PQ_TU_NANOS)
                return bad_unit(err, name, "TIME");
            if (unit != PQ_TU_MICROS)   /* NANOS: TIME holds microseconds, not every value would be exact */
                return unsupported(err, name, unit == PQ_TU_NANOS ? "TIME(NANOS) (the engine's TIME holds microseconds)"
                                                                  : "TIME(MILLIS) in an INT64");
            out->time_unit = unit;
            *t = (pa_type){PA_TYPE_TIME, 0, 0};
            return PA_OK;
        }
        if (kind == PQ_LT_INTEGER && !is_signed) {   /* UINT_64: DuckDB's UBIGINT, every value exact */
            out->uint64 = true;
            *t = (pa_type){PA_TYPE_DECIMAL, 20, 0};
            return PA_OK;
        } else if (kind != PQ_LT_NONE && kind != PQ_LT_INTEGER) {
            return unsupported(err, name, what);
        }
        *t = (pa_type){PA_TYPE_BIGINT, 0, 0};
        return PA_OK;
    case PQ_T_INT96:   /* legacy Impala/Spark timestamp: nanoseconds, exact */
        if (kind != PQ_LT_NONE)
            return unsupported(err, name, what);
        *t = (pa_type){PA_TYPE_TIMESTAMP_NS, 0, 0};
        return PA_OK;
    case PQ_T_FLOAT:
    case PQ_T_DOUBLE:
        if (kind != PQ_LT_NONE)
            return unsupported(err, name, what);
        *t = (pa_type){e->type == PQ_T_FLOAT ? PA_TYPE_REAL : PA_TYPE_DOUBLE, 0, 0};
        return PA_OK;
    case PQ_T_BYTE_ARRAY:
        if (kind == PQ_LT_DECIMAL)
            return decimal_type(e, name, t, err);
        /* Bytes without an annotation (or BSON) are BYTEA, as DuckDB reads
         * them as BLOB; text annotations are VARCHAR. */
        if (kind == PQ_LT_NONE || kind == PQ_LT_BSON) {
            *t = (pa_type){PA_TYPE_BYTEA, 0, 0};
            return PA_OK;
        }
        if (kind != PQ_LT_STRING && kind != PQ_LT_ENUM && kind != PQ_LT_JSON)
            return unsupported(err, name, what);
        *t = (pa_type){PA_TYPE_VARCHAR, 0, 0};
        return PA_OK;
    case PQ_T_FIXED_LEN_BYTE_ARRAY:
        if (kind == PQ_CT_INTERVAL_KIND) {
            if (e->type_length != 12)
                return pa_error(err, PA_ECORRUPT, "column %s: INTERVAL in a FIXED_LEN_BYTE_ARRAY of length %d (not 12)",
                                name, e->type_length);
            *t = (pa_type){PA_TYPE_INTERVAL, 0, 0};
            return PA_OK;
        }
        if (kind == PQ_LT_UUID) {
            if (e->type_length != PA_UUID_BYTES)
                return pa_error(err, PA_ECORRUPT, "column %s: UUID in a FIXED_LEN_BYTE_ARRAY of length %d (not 16)",
                                name, e->type_length);
            *t = (pa_type){PA_TYPE_UUID, 0, 0};
            return PA_OK;
        }
        if (kind == PQ_LT_NONE && e->type_length >= 1) {   /* plain fixed-length bytes: BYTEA, as DuckDB's BLOB */
            *t = (pa_type){PA_TYPE_BYTEA, 0, 0};
            return PA_OK;
        }
        if (kind != PQ_LT_DECIMAL)
            return unsupported(err, name, what);
        if (e->type_length < 1)
            return pa_error(err, PA_ECORRUPT, "column %s: FIXED_LEN_BYTE_ARRAY of length %d", name,
                            e->type_length);
        return decimal_type(e, name, t, err);
    default:
        return unsupported(err, name, what);
    }
}

/* Leaves in the subtree of schema element i (i itself if it is one);
 * *next the element after the subtree. */
static uint32_t subtree_leaves(const pq_file_meta *m, uint32_t i, uint32_t *next)
{
    uint32_t leaves = 0, open = 1;   /* elements of the subtree still to visit */
    while (open > 0 && i < m->n_schema) {
        const pq_schema_element *e = &m->schema[i++];
        open--;
        if (e->has_num_children && e->num_children > 0)
            open += (uint32_t)e->num_children;
        else
            leaves++;
    }
    *next = i;
    return leaves;
}

int pq_schema_map(const pq_file_meta *m, pq_column_desc **out, uint32_t *n, pa_err *err)
{
    int32_t top = m->n_schema ? m->schema[0].num_children : 0;
    pq_column_desc *cols = pa_calloc(top > 0 ? (size_t)top : 1, sizeof *cols);
    if (!cols)
        return pa_error(err, PA_ENOMEM, "%s: out of memory mapping the schema", m->path ? m->path : "?");
    uint32_t si = 1, leaf = 0;
    int rc = PA_OK;
    for (int32_t k = 0; k < top && rc == PA_OK; k++) {
        if (si >= m->n_schema || leaf >= m->n_leaves) {
            rc = pa_error(err, PA_ECORRUPT, "%s: the schema has fewer columns than its root says",
                          m->path ? m->path : "?");
            break;
        }
        const pq_schema_element *e = &m->schema[si];
        pq_column_desc *d = &cols[k];
        uint32_t next, nl = subtree_leaves(m, si, &next);
        const pq_leaf *l = &m->leaves[leaf];
        if (nl == 1 && l->schema_index == si && l->max_rep_level == 0) {
            pa_err e2;
            pa_err_init(&e2);
            rc = pq_element_type(e, l->path, d, &e2);
            if (rc == PA_EUNSUPPORTED) {
                snprintf(d->unsupported, sizeof d->unsupported, "%s", e2.msg);
                d->type = (pa_type){PA_TYPE_VARCHAR, 0, 0};
                rc = PA_OK;
            } else if (rc != PA_OK)
                pa_error(err, rc, "%s", e2.msg);
            pa_err_close(&e2);
        } else {
            memset(d, 0, sizeof *d);
            d->name = e->name;
            d->type = (pa_type){PA_TYPE_VARCHAR, 0, 0};
            snprintf(d->unsupported, sizeof d->unsupported,
                     "column %s is nested or repeated (LIST, STRUCT and MAP columns are not supported)", e->name);
        }
        d->leaf_index = leaf;
        d->schema_index = si;
        d->nullable = l->max_def_level > 0;
        leaf += nl;
        si = next;
    }
    if (rc != PA_OK) {
        pa_free(cols);
        return rc;
    }
    *out = cols;
    *n = top > 0 ? (uint32_t)top : 0;
    return PA_OK;
}

/* ------------------------------------------------------------------ statistics text */

static int64_t le_int(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    if (n < 8 && (v >> (8 * n - 1)) & 1)   /* sign-extend */
        v |= ~(uint64_t)0 << (8 * n);
    return (int64_t)v;
}

/* Big-endian two's complement (DECIMAL in byte arrays) that must fit int64. */
static bool be_int(const uint8_t *p, uint32_t n, int64_t *out)
{
    if (n == 0)
        return false;
    uint8_t sign = (p[0] & 0x80) ? 0xff : 0x00;
    uint64_t v = sign ? ~(uint64_t)0 : 0;
    for (uint32_t i = 0; i < n; i++) {
        if (n - i > 8 && p[i] != sign)
            return false;
        v = v << 8 | p[i];
    }
    if (n >= 8 && ((v >> 63) != (sign ? 1u : 0u)))
        return false;
    *out = (int64_t)v;
    return true;
}

static void format_decimal(int64_t v, int scale, char *buf, size_t cap)
{
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    uint64_t p = 1;
    for (int i = 0; i < scale; i++)
        p *= 10;
    if (scale == 0)
        snprintf(buf, cap, "%s%" PRIu64, v < 0 ? "-" : "", a);
    else
        snprintf(buf, cap, "%s%" PRIu64 ".%0*" PRIu64, v < 0 ? "-" : "", a / p, scale, a % p);
}

/* Days since 1970-01-01 to a proleptic Gregorian date (400-year eras). */
static void format_date(int64_t days, char *buf, size_t cap)
{
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t d = doy - (153 * mp + 2) / 5 + 1;
    int64_t mth = mp < 10 ? mp + 3 : mp - 9;
    int64_t y = yoe + era * 400 + (mth <= 2);
    snprintf(buf, cap, "%04lld-%02lld-%02lld", (long long)y, (long long)mth, (long long)d);
}

/* Value v of a TIMESTAMP, TIMESTAMPTZ, TIMESTAMP_NS or TIME as the engine
 * prints it. */
static void format_time(pa_type_id id, int64_t v, char *buf, size_t cap)
{
    char t[PA_DT_TEXT_MAX + 1];
    pa_interval none = {0, 0, 0};
    snprintf(buf, cap, "%.*s", pa_dt_format_value(id, v, none, t, (int)sizeof t), t);
}

/* Shortest text that reads back as the same double, with ".0" on integral
 * values ("0.0", "148.5", "1e+20"). */
static void format_double(double d, char *buf, size_t cap)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, d);
        if (strtod(buf, NULL) == d || d != d)
            break;
    }
    if (!strpbrk(buf, ".eEn") && strlen(buf) + 3 <= cap)   /* n: inf, nan */
        strcat(buf, ".0");
}

static void format_text(pq_bin v, char *buf, size_t cap)
{
    size_t n = 0;
    for (uint32_t i = 0; i < v.len && n + 5 < cap; i++) {
        uint8_t ch = v.ptr[i];
        if (ch >= 0x20 && ch < 0x7f && ch != '\\')
            buf[n++] = (char)ch;
        else
            n += (size_t)snprintf(buf + n, cap - n, "\\x%02x", ch);
    }
    buf[n] = '\0';
}

const char *pq_stat_format(const pq_column_desc *c, pq_bin v, char *buf, size_t cap)
{
    if (cap == 0)
        return buf;
    snprintf(buf, cap, "?");
    if (!v.ptr)
        return buf;
    int64_t x;
    switch (c->physical_type) {
    case PQ_T_BOOLEAN:
        if (v.len == 1)
            snprintf(buf, cap, "%s", v.ptr[0] ? "true" : "false");
        break;
    case PQ_T_INT32:
    case PQ_T_INT64:
        if (v.len != (c->physical_type == PQ_T_INT32 ? 4u : 8u))
            break;
        x = le_int(v.ptr, (int)v.len);
        if (c->time_unit == PQ_TU_MILLIS && c->type.id != PA_TYPE_BIGINT)
            x = x > INT64_MAX / 1000 || x < INT64_MIN / 1000 ? (x < 0 ? INT64_MIN : INT64_MAX) : x * 1000;
        if (c->type.id == PA_TYPE_DATE)
            format_date(x, buf, cap);
        else if (pa_type_is_time64(c->type.id))
            format_time(c->type.id, x, buf, cap);
        else if (c->uint64)
            snprintf(buf, cap, "%" PRIu64, (uint64_t)x);
        else if (c->type.id == PA_TYPE_DECIMAL)
            format_decimal(x, c->type.scale, buf, cap);
        else if (c->type.id == PA_TYPE_BIGINT && c->physical_type == PQ_T_INT32)
            snprintf(buf, cap, "%" PRIu32, (uint32_t)x);   /* UINT_32 */
        else
            snprintf(buf, cap, "%lld", (long long)x);
        break;
    case PQ_T_INT96:   /* (never used to prune) */
        if (v.len == 12 && c->type.id == PA_TYPE_TIMESTAMP_NS) {
            uint64_t nod = (uint64_t)le_int(v.ptr, 8);
            int64_t jd = le_int(v.ptr + 8, 4) & 0xffffffff;
            __int128 ns = (__int128)(jd - 2440588) * 86400000000000 + nod;
            if (ns >= INT64_MIN && ns <= INT64_MAX)
                format_time(PA_TYPE_TIMESTAMP_NS, (int64_t)ns, buf, cap);
        }
        break;
    case PQ_T_FLOAT:
        if (v.len == 4) {
            float f;
            memcpy(&f, v.ptr, 4);
            format_double((double)f, buf, cap);
        }
        break;
    case PQ_T_DOUBLE:
        if (v.len == 8) {
            double d;
            memcpy(&d, v.ptr, 8);
            format_double(d, buf, cap);
        }
        break;
    case PQ_T_BYTE_ARRAY:
    case PQ_T_FIXED_LEN_BYTE_ARRAY:
        if (c->type.id == PA_TYPE_DECIMAL) {
            if (be_int(v.ptr, v.len, &x))
                format_decimal(x, c->type.scale, buf, cap);
            else if (v.len <= 16) {   /* DECIMAL(19..38) */
                unsigned __int128 w = v.len && (v.ptr[0] & 0x80) ? ~(unsigned __int128)0 : 0;
                for (uint32_t i = 0; i < v.len; i++)
                    w = w << 8 | v.ptr[i];
                pa_format_decimal128((__int128)w, c->type.scale, c->type.scale, buf, cap);
            }
        } else {
            format_text(v, buf, cap);
        }
        break;
    default:
        break;
    }
    return buf;
}
