/*
 * column.c - formatting of column values (the TPC-H answers format and a
 * full-precision one) and the date arithmetic they need.
 *
 * Dates use the days-from-civil algorithm over 400-year eras (146097 days),
 * exact for every int32 day count in the proleptic Gregorian calendar.
 */
#include "core/core.h"
#include "core/binary.h"
#include "core/datetime.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int32_t pa_date_from_ymd(int year, int month, int day)
{
    int64_t y = (int64_t)year - (month <= 2);
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;                                     /* [0, 399] */
    int64_t doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1; /* [0, 365] */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;              /* [0, 146096] */
    return (int32_t)(era * 146097 + doe - 719468);
}

void pa_date_to_ymd(int32_t days, int *year, int *month, int *day)
{
    int64_t z = (int64_t)days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *day = (int)(doy - (153 * mp + 2) / 5 + 1);
    *month = (int)(mp < 10 ? mp + 3 : mp - 9);
    *year = (int)(yoe + era * 400 + (*month <= 2));
}

static int days_in_month(int y, int m)
{
    static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 ? 28 + leap : d[m - 1];
}

int pa_date_parse(const char *text, int32_t *out, pa_err *err)
{
    int y, m, d, n = 0;
    if (sscanf(text, "%d-%d-%d%n", &y, &m, &d, &n) != 3 || text[n] != '\0')
        return pa_error(err, PA_EINVAL, "'%s' is not a date (YYYY-MM-DD)", text);
    if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, m) || y < -5000000 || y > 5000000)
        return pa_error(err, PA_EINVAL, "'%s' is not a valid date", text);
    *out = pa_date_from_ymd(y, m, d);
    return PA_OK;
}

size_t pa_format_decimal128(__int128 v, int scale, int digits, char *buf, size_t cap)
{
    /* Work on the magnitude as unsigned so the most negative value is fine. */
    int neg = v < 0;
    unsigned __int128 mag = neg ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    if (scale > digits) {
        unsigned __int128 div = 1;
        for (int i = 0; i < scale - digits; i++)
            div *= 10;
        unsigned __int128 q = mag / div, r = mag % div;
        if (r >= div - r)          /* r >= div / 2 exactly: half away from zero */
            q++;
        mag = q;
        scale = digits;
    }
    unsigned __int128 pow = 1;
    for (int i = 0; i < scale; i++)
        pow *= 10;
    unsigned __int128 ip = mag / pow, fp = mag % pow;
    for (int i = scale; i < digits; i++)   /* pad: 7 -> 7.00 */
        fp *= 10;
    if (mag == 0)
        neg = 0;
    /* Digits of the integer part, most significant last. */
    char tmp[48];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(ip % 10));
        ip /= 10;
    } while (ip);
    char out[96];
    size_t k = 0;
    if (neg)
        out[k++] = '-';
    while (n)
        out[k++] = tmp[--n];
    if (digits > 0) {
        out[k++] = '.';
        for (int i = digits - 1; i >= 0; i--) {
            out[k + (size_t)i] = (char)('0' + (int)(fp % 10));
            fp /= 10;
        }
        k += (size_t)digits;
    }
    out[k] = '\0';
    if (cap) {
        size_t c = k < cap - 1 ? k : cap - 1;
        memcpy(buf, out, c);
        buf[c] = '\0';
    }
    return k;
}

size_t pa_format_decimal(int64_t v, int scale, int digits, char *buf, size_t cap)
{
    return pa_format_decimal128(v, scale, digits, buf, cap);
}

/* A double rounded to 2 decimals on its exact binary value, ties away from
 * zero (JavaScript's toFixed(2)). 17 significant digits of x*100 would
 * round twice; instead compare the exact remainder with long double. */
static size_t format_double2(double x, char *buf, size_t cap)
{
    if (isnan(x))
        return (size_t)snprintf(buf, cap, "nan");
    if (isinf(x))
        return (size_t)snprintf(buf, cap, x < 0 ? "-inf" : "inf");
    if (fabs(x) >= 1e15)
        return (size_t)snprintf(buf, cap, "%.2f", x);
    long double s = (long double)x * 100.0L;   /* exact: 64-bit mantissa holds 53 + 7 bits */
    long double r = s < 0 ? -floorl(-s + 0.5L) : floorl(s + 0.5L);
    int64_t q = (int64_t)r;
    if (q == 0)
        return (size_t)snprintf(buf, cap, "0.00");
    return pa_format_decimal(q, 2, 2, buf, cap);
}

size_t pa_format_value(const pa_column *c, int64_t row, pa_fmt fmt, char *buf, size_t cap)
{
    if (!pa_column_valid(c, row)) {
        if (cap)
            buf[0] = '\0';
        return 0;
    }
    switch (c->type.id) {
    case PA_TYPE_BOOLEAN:
        return (size_t)snprintf(buf, cap, "%s", ((const uint8_t *)c->data)[row] ? "true" : "false");
    case PA_TYPE_INTEGER:
        return (size_t)snprintf(buf, cap, "%" PRId32, ((const int32_t *)c->data)[row]);
    case PA_TYPE_BIGINT:
        return (size_t)snprintf(buf, cap, "%" PRId64, ((const int64_t *)c->data)[row]);
    case PA_TYPE_DOUBLE: {
        double x = ((const double *)c->data)[row];
        return fmt == PA_FMT_ANSWER ? format_double2(x, buf, cap) : (size_t)snprintf(buf, cap, "%.17g", x);
    }
    case PA_TYPE_REAL: {   /* the fewest digits that read back as the same float */
        double x = ((const double *)c->data)[row];
        if (fmt == PA_FMT_ANSWER)
            return format_double2(x, buf, cap);
        char t[32];
        int n = 0;
        for (int p = x != 0 && fabs(x) < FLT_MIN ? 1 : FLT_DIG; p <= 9; p++) {   /* as DOUBLE's, from %.6g */
            n = snprintf(t, sizeof t, "%.*g", p, x);
            if (strtof(t, NULL) == (float)x)
                break;
        }
        return (size_t)snprintf(buf, cap, "%.*s", n, t);
    }
    case PA_TYPE_DECIMAL: {
        int digits = fmt == PA_FMT_ANSWER ? 2 : c->type.scale;
        if (c->type.precision > PA_DECIMAL64_MAX_PRECISION) {
            __int128 v;
            memcpy(&v, (const char *)c->data + 16 * row, sizeof v);
            return pa_format_decimal128(v, c->type.scale, digits, buf, cap);
        }
        return pa_format_decimal(((const int64_t *)c->data)[row], c->type.scale, digits, buf, cap);
    }
    case PA_TYPE_DATE: {
        int y, m, d;
        pa_date_to_ymd(((const int32_t *)c->data)[row], &y, &m, &d);
        return (size_t)snprintf(buf, cap, "%04d-%02d-%02d", y, m, d);
    }
    case PA_TYPE_VARCHAR: {
        int32_t a = c->offsets[row], b = c->offsets[row + 1];
        size_t n = (size_t)(b - a);
        if (cap) {
            size_t k = n < cap - 1 ? n : cap - 1;
            memcpy(buf, (const char *)c->data + a, k);
            buf[k] = '\0';
        }
        return n;
    }
    case PA_TYPE_BYTEA: {   /* PostgreSQL's hex text: "\x" then two digits a byte */
        const uint8_t *p = (const uint8_t *)c->data + c->offsets[row];
        int64_t n = c->offsets[row + 1] - c->offsets[row];
        size_t len = (size_t)pa_bytea_text_len(n), k = 0;
        for (; k < len && k + 1 < cap; k++)
            buf[k] = pa_bytea_text_char(p, (int64_t)k);
        if (cap)
            buf[k] = '\0';
        return len;
    }
    case PA_TYPE_UUID: {
        char t[PA_UUID_TEXT];
        if (c->offsets[row + 1] - c->offsets[row] != PA_UUID_BYTES)
            return (size_t)snprintf(buf, cap, "(not a UUID: %d bytes)", (int)(c->offsets[row + 1] - c->offsets[row]));
        pa_uuid_format((const uint8_t *)c->data + c->offsets[row], t);
        return (size_t)snprintf(buf, cap, "%.*s", PA_UUID_TEXT, t);
    }
    case PA_TYPE_TIMESTAMP:
    case PA_TYPE_TIMESTAMPTZ:
    case PA_TYPE_TIME:
    case PA_TYPE_TIMESTAMP_NS:
    case PA_TYPE_INTERVAL: {   /* PostgreSQL's text (core/datetime.h) */
        char t[PA_DT_TEXT_MAX + 1];
        pa_interval iv = {0, 0, 0};
        int64_t v = 0;
        if (c->type.id == PA_TYPE_INTERVAL)
            memcpy(&iv, (const char *)c->data + 16 * row, sizeof iv);
        else
            v = ((const int64_t *)c->data)[row];
        int n = pa_dt_format_value(c->type.id, v, iv, t, (int)sizeof t);
        return (size_t)snprintf(buf, cap, "%.*s", n, t);
    }
    case PA_TYPE__COUNT:
        break;
    }
    if (cap)
        buf[0] = '\0';
    return 0;
}
