/*
 * kn_scalar.h - the per-value logic of the expression evaluator: UTF-8,
 * LIKE, SUBSTRING, calendar dates, the time types (EXTRACT, DATE_TRUNC,
 * CAST, DTARITH on core/datetime.h), parsing and formatting text, and exact
 * integer arithmetic with overflow. The CPU batch loops (kn_expr_*.c) and
 * CUDA kernels call the same code, so every function here is static inline
 * PA_HD and builds as C17, C++17 and CUDA device code. Hence no libc calls
 * and no tables at file scope (device code cannot read host statics): small
 * loops and switches instead, or a static local of a PA_HD function, which
 * nvcc places on both sides (kn_case.h's tables). memcpy (an INTERVAL in and
 * out of its 16-byte slot) is a builtin on every side.
 */
#ifndef PISTA_KN_SCALAR_H
#define PISTA_KN_SCALAR_H

#include "core/core.h"
#include "core/binary.h"
#include "core/datetime.h"

#include <math.h>
#include <string.h>

/* A string view: len bytes at p, not NUL-terminated. */
typedef struct kn__str {
    const char *p;
    int64_t len;
} kn__str;

/* Physical kinds of expression values (registers of the evaluators). */
typedef enum kn__kind { KN__BOOL, KN__I32, KN__I64, KN__I128, KN__F64, KN__STR } kn__kind;

static inline PA_HD kn__kind kn__kind_of(pa_type t)
{
    switch (t.id) {
    case PA_TYPE_BOOLEAN: return KN__BOOL;
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: return KN__I32;
    case PA_TYPE_DOUBLE:
    case PA_TYPE_REAL: return KN__F64;
    case PA_TYPE_DECIMAL: return t.precision > PA_DECIMAL64_MAX_PRECISION ? KN__I128 : KN__I64;
    case PA_TYPE_VARCHAR:
    case PA_TYPE_BYTEA:
    case PA_TYPE_UUID: return KN__STR;
    case PA_TYPE_INTERVAL: return KN__I128;   /* a pa_interval's 16 bytes */
    default: return KN__I64;   /* BIGINT, TIMESTAMP, TIMESTAMPTZ, TIME, TIMESTAMP_NS */
    }
}

/* The type id a relational kernel (hash, sort, gather, aggregate) treats a
 * column as: the time types stored as int64 (pa_type_is_time64) are
 * BIGINTs there, BYTEA and UUID VARCHARs (pa_type_is_varlen), REAL a
 * DOUBLE (pa_type_is_float); every other id is itself. */
static inline PA_HD pa_type_id kn__phys_id(pa_type_id id)
{
    return pa_type_is_time64(id)   ? PA_TYPE_BIGINT
           : pa_type_is_varlen(id) ? PA_TYPE_VARCHAR
           : id == PA_TYPE_REAL    ? PA_TYPE_DOUBLE
                                   : id;
}

/* ------------------------------------------------------------------ UTF-8 */

/* Bytes of the code point that starts with byte c (no validation). */
static inline PA_HD int64_t kn__s_u8len(unsigned char c)
{
    return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

/* Code points in s[0, n): bytes that are not continuation bytes. */
static inline PA_HD int64_t kn__s_count_chars(const char *s, int64_t n)
{
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* Byte offset of character c from s, clamped to n. */
static inline PA_HD int64_t kn__s_char_to_byte(const char *s, int64_t n, int64_t c)
{
    int64_t b = 0;
    while (c > 0 && b < n) {
        b += kn__s_u8len((unsigned char)s[b]);
        c--;
    }
    return b < n ? b : n;
}

/* ------------------------------------------------------------------- LIKE
 *
 * '%' and '_' (one code point). The byte KN_LIKE_ESC (0x01) makes the byte
 * after it literal: LIKE ... ESCAPE is bound to that form ('%', '_' and
 * 0x01 itself written ESC + byte), so the matcher has one escape rule
 * whatever character the query chose. The pattern splits at
 * '%' into segments: the first is anchored at the start, the last at the
 * end, the middle ones are found leftmost in order. A segment matched at a
 * given position has one end (each '_' takes exactly one code point), so
 * leftmost is exact and no backtracking is needed.
 */

#define KN_LIKE_ESC '\x01'

/* Index of the first byte c in p[0, n), or -1. */
static inline PA_HD int64_t kn__s_find_byte(const char *p, int64_t n, char c)
{
    for (int64_t i = 0; i < n; i++)
        if (p[i] == c)
            return i;
    return -1;
}

/* Index of the first byte c of pattern p[0, n) that no KN_LIKE_ESC
 * escapes, or -1. */
static inline PA_HD int64_t kn__s_find_wild(const char *p, int64_t n, char c)
{
    for (int64_t i = 0; i < n; i++) {
        if (p[i] == KN_LIKE_ESC) {
            i++;
            continue;
        }
        if (p[i] == c)
            return i;
    }
    return -1;
}

/* Characters a pattern segment matches (an escaped byte is one). */
static inline PA_HD int64_t kn__s_pat_chars(const char *p, int64_t n)
{
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++) {
        if (p[i] == KN_LIKE_ESC && i + 1 < n)
            i++;
        if (((unsigned char)p[i] & 0xC0) != 0x80)
            c++;
    }
    return c;
}

/* Index of the leftmost occurrence of needle[0, k) (k > 0) in h[0, n), or -1. */
static inline PA_HD int64_t kn__s_find(const char *h, int64_t n, const char *needle, int64_t k)
{
    for (int64_t i = 0; i + k <= n; i++) {
        if (h[i] != needle[0])
            continue;
        int64_t j = 1;
        while (j < k && h[i + j] == needle[j])
            j++;
        if (j == k)
            return i;
    }
    return -1;
}

/* ------------------------------------------------------------ STRFN */

/* Whether the code point at s[0, k) is one of the characters of set. */
static inline PA_HD bool kn__s_in_set(const char *s, int64_t k, kn__str set)
{
    for (int64_t i = 0; i < set.len;) {
        int64_t l = kn__s_u8len((unsigned char)set.p[i]);
        if (l == k) {
            int64_t j = 0;
            while (j < k && set.p[i + j] == s[j])
                j++;
            if (j == k)
                return true;
        }
        i += l;
    }
    return false;
}

/* a without the characters of set at the start (lead) and/or end (trail). */
static inline PA_HD kn__str kn__s_trim_set(kn__str a, kn__str set, bool lead, bool trail)
{
    int64_t b = 0, e = a.len;
    while (lead && b < e) {
        int64_t k = kn__s_u8len((unsigned char)a.p[b]);
        if (b + k > e || !kn__s_in_set(a.p + b, k, set))
            break;
        b += k;
    }
    while (trail && e > b) {
        int64_t s = e - 1;
        while (s > b && ((unsigned char)a.p[s] & 0xC0) == 0x80)
            s--;
        if (!kn__s_in_set(a.p + s, e - s, set))
            break;
        e = s;
    }
    kn__str r = {a.p + b, e - b};
    return r;
}

/* LEFT (right false) or RIGHT of n characters (n < 0: all but -n). */
static inline PA_HD kn__str kn__s_left_right(kn__str a, int64_t n, bool right)
{
    int64_t chars = kn__s_count_chars(a.p, a.len);
    int64_t keep = n >= 0 ? (n < chars ? n : chars) : (chars + n > 0 ? chars + n : 0);
    int64_t at = right ? kn__s_char_to_byte(a.p, a.len, chars - keep) : 0;
    int64_t end = right ? a.len : kn__s_char_to_byte(a.p, a.len, keep);
    kn__str r = {a.p + at, end - at};
    return r;
}

/* STRPOS: 1-based character position of b in a, 0 when absent (1 for an empty b). */
static inline PA_HD int64_t kn__s_strpos(kn__str a, kn__str b)
{
    if (b.len == 0)
        return 1;
    int64_t at = kn__s_find(a.p, a.len, b.p, b.len);
    return at < 0 ? 0 : kn__s_count_chars(a.p, at) + 1;
}

/* SPLIT_PART: field n (1-based; negative from the end) of a split at delim;
 * empty when there is no such field. n == 0 is the caller's error. */
static inline PA_HD kn__str kn__s_split_part(kn__str a, kn__str delim, int64_t n)
{
    kn__str none = {a.p, 0};
    if (delim.len == 0)   /* PostgreSQL: the whole string is field 1 (and -1) */
        return n == 1 || n == -1 ? a : none;
    if (n < 0) {   /* from the end: count the fields first */
        int64_t fields = 1;
        for (int64_t at = 0;;) {
            int64_t k = kn__s_find(a.p + at, a.len - at, delim.p, delim.len);
            if (k < 0)
                break;
            fields++;
            at += k + delim.len;
        }
        if (-n > fields)
            return none;
        n = fields + n + 1;
    }
    int64_t at = 0;
    for (int64_t f = 1;; f++) {
        int64_t k = kn__s_find(a.p + at, a.len - at, delim.p, delim.len);
        int64_t end = k < 0 ? a.len : at + k;
        if (f == n) {
            kn__str r = {a.p + at, end - at};
            return r;
        }
        if (k < 0)
            return none;
        at = end + delim.len;
    }
}

/* Match segment seg[0, k) (no '%') at s + pos; returns its end or -1. */
static inline PA_HD int64_t kn__s_seg_at(const char *s, int64_t n, int64_t pos, const char *seg, int64_t k)
{
    for (int64_t j = 0; j < k; j++) {
        if (pos >= n)
            return -1;
        if (seg[j] == KN_LIKE_ESC && j + 1 < k) {   /* the next byte, literally */
            if (s[pos] != seg[++j])
                return -1;
            pos++;
        } else if (seg[j] == '_') {
            pos += kn__s_u8len((unsigned char)s[pos]);
            if (pos > n)
                return -1;
        } else if (s[pos] != seg[j]) {
            return -1;
        } else {
            pos++;
        }
    }
    return pos;
}

/* s[0, n) LIKE pat[0, m). */
static inline PA_HD bool kn__s_like(const char *s, int64_t n, const char *pat, int64_t m)
{
    int64_t k = kn__s_find_wild(pat, m, '%');
    if (k < 0)
        return kn__s_seg_at(s, n, 0, pat, m) == n;
    int64_t pos = kn__s_seg_at(s, n, 0, pat, k);
    if (pos < 0)
        return false;
    int64_t pi = k + 1;
    for (;;) {
        const char *seg = pat + pi;
        int64_t sk = kn__s_find_wild(seg, m - pi, '%');
        if (sk < 0) {
            /* Last segment: step back its length in characters from the end. */
            sk = m - pi;
            if (sk == 0)
                return true;
            int64_t chars = kn__s_pat_chars(seg, sk), start = n;
            while (chars > 0 && start > pos) {
                start--;
                if (((unsigned char)s[start] & 0xC0) != 0x80)
                    chars--;
            }
            return chars == 0 && start >= pos && kn__s_seg_at(s, n, start, seg, sk) == n;
        }
        if (sk > 0) {
            if (kn__s_find_byte(seg, sk, '_') < 0 && kn__s_find_byte(seg, sk, KN_LIKE_ESC) < 0) {
                int64_t f = pos < n ? kn__s_find(s + pos, n - pos, seg, sk) : -1;
                if (f < 0)
                    return false;
                pos += f + sk;
            } else {
                int64_t end = -1;
                for (int64_t p = pos; p < n; p += kn__s_u8len((unsigned char)s[p]))
                    if ((end = kn__s_seg_at(s, n, p, seg, sk)) >= 0)
                        break;
                if (end < 0)
                    return false;
                pos = end;
            }
        }
        pi += sk + 1;
    }
}

/* -------------------------------------------------------------- SUBSTRING */

/* SUBSTRING(s FROM from [FOR len]) as DuckDB: 1-based; a negative start
 * counts from the end; start 0 begins one character before the first; a
 * negative length takes the characters before the start; the result is
 * clamped to the string. The view points into s. */
static inline PA_HD kn__str kn__s_substr(kn__str s, int64_t from, int64_t len, bool has_len)
{
    /* Beyond any string's length, so the sums below stay exact. */
    const int64_t big = (int64_t)1 << 40;
    kn__str r;
    r.p = s.p;
    r.len = 0;
    if (!has_len)
        len = big;
    from = from < -big ? -big : from > big ? big : from;
    len = len < -big ? -big : len > big ? big : len;
    if (from > 0 && len >= 0) {
        /* Common case: no need to count the characters. */
        int64_t b0 = kn__s_char_to_byte(s.p, s.len, from - 1);
        int64_t b1 = b0 + kn__s_char_to_byte(s.p + b0, s.len - b0, len);
        r.p = s.p + b0;
        r.len = b1 - b0;
        return r;
    }
    int64_t nch = kn__s_count_chars(s.p, s.len), start, end;
    if (from > 0)
        start = from - 1 < nch ? from - 1 : nch;
    else if (from == 0)
        start = -1;
    else
        start = nch + from;
    if (len >= 0) {
        end = start + len;
    } else {
        end = start;
        start += len;
    }
    start = start < 0 ? 0 : start > nch ? nch : start;
    end = end < 0 ? 0 : end > nch ? nch : end;
    if (end <= start)
        return r;
    int64_t b0 = kn__s_char_to_byte(s.p, s.len, start);
    int64_t b1 = b0 + kn__s_char_to_byte(s.p + b0, s.len - b0, end - start);
    r.p = s.p + b0;
    r.len = b1 - b0;
    return r;
}

/* ------------------------------------------------------------------ dates
 *
 * Dates are int32 days since 1970-01-01 in the proleptic Gregorian calendar.
 * The conversions are the era/day-of-era formulas (400-year eras of 146097
 * days, years starting in March so the leap day is last), exact for every
 * int32 day count.
 */

/* Days since 1970-01-01 -> year, month 1..12, day 1..31 (core/datetime.h). */
static inline PA_HD void kn__s_civil(int64_t days, int64_t *y, int64_t *m, int64_t *d) { pa_dt_civil(days, y, m, d); }

/* Year, month 1..12, day -> days since 1970-01-01 (the day is not checked). */
static inline PA_HD int64_t kn__s_days_from_civil(int64_t y, int64_t m, int64_t d)
{
    return pa_dt_days_from_civil(y, m, d);
}

/* ISO day of the week, 1 = Monday .. 7 = Sunday (1970-01-01 was a Thursday). */
static inline PA_HD int64_t kn__s_isodow(int64_t days)
{
    int64_t w = (days + 3) % 7;
    return (w < 0 ? w + 7 : w) + 1;
}

/* Floor division for the decade, century and millennium of a year. */
static inline PA_HD int64_t kn__s_floordiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* Century and millennium as PostgreSQL counts them: the 21st century began
 * in 2001; year 0 is 1 BC, whose century is -1. */
static inline PA_HD int64_t kn__s_century(int64_t y, int64_t span)
{
    return y > 0 ? (y + span - 1) / span : -((1 - y + span - 1) / span);
}

/* Field f (kn_date_field) of DATE days. */
static inline PA_HD int64_t kn__s_date_field(int f, int64_t days)
{
    int64_t y, m, d;
    kn__s_civil(days, &y, &m, &d);
    switch (f) {
    case KN_FIELD_YEAR: return y;
    case KN_FIELD_MONTH: return m;
    case KN_FIELD_DAY: return d;
    case KN_FIELD_QUARTER: return (m - 1) / 3 + 1;
    case KN_FIELD_DOW: return kn__s_isodow(days) % 7;
    case KN_FIELD_ISODOW: return kn__s_isodow(days);
    case KN_FIELD_DOY: return days - kn__s_days_from_civil(y, 1, 1) + 1;
    case KN_FIELD_WEEK:
    case KN_FIELD_ISOYEAR: {
        /* ISO weeks start on Monday; week 1 holds the year's first Thursday. */
        int64_t thursday = days - kn__s_isodow(days) + 4, ty, tm, td;
        kn__s_civil(thursday, &ty, &tm, &td);
        return f == KN_FIELD_ISOYEAR ? ty : (thursday - kn__s_days_from_civil(ty, 1, 1)) / 7 + 1;
    }
    case KN_FIELD_EPOCH: return days * 86400;
    case KN_FIELD_DECADE: return kn__s_floordiv(y, 10);
    case KN_FIELD_CENTURY: return kn__s_century(y, 100);
    case KN_FIELD_MILLENNIUM: return kn__s_century(y, 1000);
    default: return 0;
    }
}

/* DATE days truncated to the start of its field f (DATE_TRUNC). */
static inline PA_HD int64_t kn__s_date_trunc(int f, int64_t days)
{
    int64_t y, m, d;
    kn__s_civil(days, &y, &m, &d);
    switch (f) {
    case KN_FIELD_YEAR: return kn__s_days_from_civil(y, 1, 1);
    case KN_FIELD_QUARTER: return kn__s_days_from_civil(y, (m - 1) / 3 * 3 + 1, 1);
    case KN_FIELD_MONTH: return kn__s_days_from_civil(y, m, 1);
    case KN_FIELD_WEEK: return days - kn__s_isodow(days) + 1;
    case KN_FIELD_DECADE: return kn__s_days_from_civil(kn__s_floordiv(y, 10) * 10, 1, 1);
    case KN_FIELD_CENTURY: {
        int64_t c = kn__s_century(y, 100);
        return kn__s_days_from_civil(c > 0 ? (c - 1) * 100 + 1 : c * 100 + 1, 1, 1);
    }
    case KN_FIELD_MILLENNIUM: {
        int64_t c = kn__s_century(y, 1000);
        return kn__s_days_from_civil(c > 0 ? (c - 1) * 1000 + 1 : c * 1000 + 1, 1, 1);
    }
    default: return days;   /* DAY */
    }
}

/* Days in month m (1..12) of year y. */
static inline PA_HD int64_t kn__s_month_days(int64_t y, int64_t m) { return pa_dt_month_days(y, m); }

/* MAKE_DATE: false when the fields are no date (year below 1, as
 * PostgreSQL wants for AD dates, or past the DATE range). */
static inline PA_HD bool kn__s_make_date(int64_t y, int64_t m, int64_t d, int32_t *out)
{
    if (y < 1 || y > 5000000 || m < 1 || m > 12 || d < 1 || d > kn__s_month_days(y, m))
        return false;
    *out = (int32_t)kn__s_days_from_civil(y, m, d);
    return true;
}

/* DATE days + months, the day clamped to the end of the target month (SQL:
 * Jan 31 + 1 month = Feb 28/29). False when the result is not an int32 day
 * count; *out is then the result wrapped to 32 bits (0 for absurd months). */
static inline PA_HD bool kn__s_add_months(int32_t days, int64_t months, int32_t *out)
{
    /* Int32 dates span about +-5.9 million years, so beyond 12 * 12 million
     * months every result is out of range; the bound keeps the sums exact. */
    const int64_t lim = (int64_t)12 * 12000000;
    if (months > lim || months < -lim) {
        *out = 0;
        return false;
    }
    int64_t y, m, d;
    kn__s_civil(days, &y, &m, &d);
    int64_t t = y * 12 + (m - 1) + months;
    int64_t ny = t >= 0 ? t / 12 : -((-t + 11) / 12);
    int64_t nm = t - ny * 12 + 1;
    int64_t md = kn__s_month_days(ny, nm);
    int64_t r = kn__s_days_from_civil(ny, nm, d < md ? d : md);
    *out = (int32_t)r;
    return r == (int32_t)r;
}

/* ------------------------------------------------------------- time types
 *
 * EXTRACT, DATE_TRUNC, CAST and DTARITH of TIMESTAMP, TIMESTAMPTZ, TIME,
 * TIMESTAMP_NS and INTERVAL (kernels.h's contracts), one value at a time;
 * the text, calendar and arithmetic are core/datetime.h's. An INTERVAL
 * travels as a pa_interval, copied in and out of its 16-byte slot.
 */

/* A time type with its own rules here (the int64 ones and INTERVAL). */
static inline PA_HD bool kn__s_is_time(pa_type_id t) { return pa_type_is_time64(t) || t == PA_TYPE_INTERVAL; }
static inline PA_HD bool kn__s_is_ts(pa_type_id t) { return t == PA_TYPE_TIMESTAMP || t == PA_TYPE_TIMESTAMPTZ; }

static inline PA_HD pa_interval kn__s_iv_of(__int128 w)
{
    pa_interval v;
    memcpy(&v, &w, sizeof v);
    return v;
}
static inline PA_HD __int128 kn__s_iv_bits(pa_interval v)
{
    __int128 w;
    memcpy(&w, &v, sizeof w);
    return w;
}

/* PostgreSQL's name of a type in "invalid input syntax for type ...". */
static inline PA_HD const char *kn__s_pg_type_name(pa_type_id t)
{
    switch (t) {
    case PA_TYPE_TIMESTAMP: return "timestamp";
    case PA_TYPE_TIMESTAMPTZ: return "timestamp with time zone";
    case PA_TYPE_TIME: return "time";
    case PA_TYPE_INTERVAL: return "interval";
    case PA_TYPE_TIMESTAMP_NS: return "timestamp_ns";
    case PA_TYPE_BYTEA: return "bytea";
    case PA_TYPE_UUID: return "uuid";
    default: return "?";
    }
}

/* Which EXTRACT fields apply to a value of type t (the kernels.h comment):
 * a TIME has HOUR .. MICROSECONDS and EPOCH, an INTERVAL no DOW, ISODOW,
 * DOY, WEEK or ISOYEAR. dst must be DOUBLE for EPOCH of a non-DATE, else
 * BIGINT. */
static inline PA_HD bool kn__s_extract_ok(int f, pa_type_id t, pa_type_id dst)
{
    if (f < 0 || f >= KN_FIELD__COUNT)
        return false;
    bool time_of_day = f >= KN_FIELD_HOUR || f == KN_FIELD_EPOCH;
    bool calendar = f == KN_FIELD_DOW || f == KN_FIELD_ISODOW || f == KN_FIELD_DOY || f == KN_FIELD_WEEK ||
                    f == KN_FIELD_ISOYEAR;
    bool dbl = f == KN_FIELD_EPOCH && t != PA_TYPE_DATE;
    if (dst != (dbl ? PA_TYPE_DOUBLE : PA_TYPE_BIGINT))
        return false;
    switch (t) {
    case PA_TYPE_DATE:
    case PA_TYPE_TIMESTAMP:
    case PA_TYPE_TIMESTAMPTZ: return true;
    case PA_TYPE_TIME: return time_of_day;
    case PA_TYPE_INTERVAL: return !calendar;
    default: return false;
    }
}

/* HOUR .. MICROSECONDS of a time of day (or an interval's micros: the same
 * arithmetic, truncating toward zero, keeps their sign). */
static inline PA_HD int64_t kn__s_clock_field(int f, int64_t us)
{
    switch (f) {
    case KN_FIELD_HOUR: return us / PA_USEC_PER_HOUR;
    case KN_FIELD_MINUTE: return us / PA_USEC_PER_MIN % 60;
    case KN_FIELD_SECOND: return us / PA_USEC_PER_SEC % 60;
    case KN_FIELD_MILLISECONDS: return us % PA_USEC_PER_MIN / 1000;
    case KN_FIELD_MICROSECONDS: return us % PA_USEC_PER_MIN;
    default: return 0;
    }
}

/* EXTRACT field f (not EPOCH) of a TIMESTAMP(TZ) us. */
static inline PA_HD int64_t kn__s_ts_field(int f, int64_t us)
{
    int64_t days = pa_dt_floordiv(us, PA_USEC_PER_DAY);
    if (f >= KN_FIELD_HOUR)
        return kn__s_clock_field(f, us - days * PA_USEC_PER_DAY);
    return kn__s_date_field(f, days);
}

/* EXTRACT field f (not EPOCH) of an INTERVAL: YEAR = months / 12, MONTH =
 * months % 12, QUARTER = MONTH / 3 + 1, DECADE .. MILLENNIUM of YEAR, all
 * truncating toward zero (PostgreSQL's interval_part). */
static inline PA_HD int64_t kn__s_iv_field(int f, pa_interval v)
{
    int64_t y = v.months / 12;
    switch (f) {
    case KN_FIELD_YEAR: return y;
    case KN_FIELD_MONTH: return v.months % 12;
    case KN_FIELD_DAY: return v.days;
    case KN_FIELD_QUARTER: return v.months % 12 / 3 + 1;
    case KN_FIELD_DECADE: return y / 10;
    case KN_FIELD_CENTURY: return y / 100;
    case KN_FIELD_MILLENNIUM: return y / 1000;
    default: return kn__s_clock_field(f, v.micros);
    }
}

/* EPOCH of an INTERVAL: a year as 365.25 days, a month as 30. */
static inline PA_HD double kn__s_iv_epoch(pa_interval v)
{
    double days = 365.25 * (v.months / 12) + 30.0 * (v.months % 12) + v.days;
    return days * 86400.0 + (double)v.micros / 1e6;
}

/* EXTRACT field f of a value of type t (checked by kn__s_extract_ok): a
 * the int64 value (DATE days), iv an INTERVAL; BIGINT to *i or, for EPOCH
 * of a non-DATE, DOUBLE to *d. */
static inline PA_HD void kn__s_extract(int f, pa_type_id t, int64_t a, pa_interval iv, int64_t *i, double *d)
{
    *i = 0;
    *d = 0;
    switch (t) {
    case PA_TYPE_DATE: *i = kn__s_date_field(f, a); return;
    case PA_TYPE_TIME:
        if (f == KN_FIELD_EPOCH)
            *d = (double)a / 1e6;
        else
            *i = kn__s_clock_field(f, a);
        return;
    case PA_TYPE_INTERVAL:
        if (f == KN_FIELD_EPOCH)
            *d = kn__s_iv_epoch(iv);
        else
            *i = kn__s_iv_field(f, iv);
        return;
    default:   /* TIMESTAMP, TIMESTAMPTZ */
        if (f == KN_FIELD_EPOCH)
            *d = (double)pa_dt_floordiv(a, PA_USEC_PER_SEC) + (double)pa_dt_floormod(a, PA_USEC_PER_SEC) / 1e6;
        else
            *i = kn__s_ts_field(f, a);
        return;
    }
}

/* Which DATE_TRUNC fields a TIMESTAMP(TZ) takes: DATE's and HOUR ..
 * MICROSECONDS. */
static inline PA_HD bool kn__s_ts_trunc_ok(int f)
{
    return f == KN_FIELD_YEAR || f == KN_FIELD_MONTH || f == KN_FIELD_DAY || f == KN_FIELD_QUARTER ||
           f == KN_FIELD_WEEK || f == KN_FIELD_DECADE || f == KN_FIELD_CENTURY || f == KN_FIELD_MILLENNIUM ||
           (f >= KN_FIELD_HOUR && f < KN_FIELD__COUNT);
}

/* DATE_TRUNC of a TIMESTAMP(TZ) us to field f; false when the start of the
 * field is before the int64 range (a millennium that began before). */
static inline PA_HD bool kn__s_ts_trunc(int f, int64_t us, int64_t *out)
{
    int64_t unit = f == KN_FIELD_HOUR ? PA_USEC_PER_HOUR : f == KN_FIELD_MINUTE ? PA_USEC_PER_MIN
                 : f == KN_FIELD_SECOND ? PA_USEC_PER_SEC : f == KN_FIELD_MILLISECONDS ? 1000
                 : f == KN_FIELD_MICROSECONDS ? 1 : 0;
    __int128 r = unit ? (__int128)pa_dt_floordiv(us, unit) * unit
                      : (__int128)kn__s_date_trunc(f, pa_dt_floordiv(us, PA_USEC_PER_DAY)) * PA_USEC_PER_DAY;
    if (r < INT64_MIN)
        return false;
    *out = (int64_t)r;
    return true;
}

/* Whether CAST from -> to is defined where a time type takes part (the
 * callers ask only then): text both ways, DATE <-> TIMESTAMP(TZ),
 * TIMESTAMP <-> TIMESTAMPTZ, TIMESTAMP(TZ) -> TIME, TIMESTAMP_NS <->
 * TIMESTAMP, TIMESTAMP_NS -> DATE, and a type to itself. */
static inline PA_HD bool kn__s_cast_time_ok(pa_type_id from, pa_type_id to)
{
    if (from == to || from == PA_TYPE_VARCHAR || to == PA_TYPE_VARCHAR)
        return true;
    if (kn__s_is_ts(from) && (kn__s_is_ts(to) || to == PA_TYPE_DATE || to == PA_TYPE_TIME))
        return true;
    if (from == PA_TYPE_DATE && kn__s_is_ts(to))
        return true;
    return (from == PA_TYPE_TIMESTAMP_NS && (to == PA_TYPE_TIMESTAMP || to == PA_TYPE_DATE)) ||
           (from == PA_TYPE_TIMESTAMP && to == PA_TYPE_TIMESTAMP_NS);
}

enum { KN__CT_OK, KN__CT_SYNTAX, KN__CT_RANGE };

/* CAST of one value between the types above (not to VARCHAR): a the
 * int64 value (DATE days), iv an INTERVAL, s a VARCHAR; the result to *r
 * (DATE days too) or *rv. KN__CT_SYNTAX: text that is no such value;
 * KN__CT_RANGE: out of the target's range. */
static inline PA_HD int kn__s_cast_time(pa_type_id from, pa_type_id to, int64_t a, pa_interval iv, kn__str s,
                                        int64_t *r, pa_interval *rv)
{
    *r = 0;
    if (from == PA_TYPE_VARCHAR) {
        bool ok;
        switch (to) {
        case PA_TYPE_TIMESTAMP:
        case PA_TYPE_TIMESTAMPTZ: ok = pa_dt_parse_timestamp(s.p, s.len, to == PA_TYPE_TIMESTAMPTZ, r); break;
        case PA_TYPE_TIME: ok = pa_dt_parse_time(s.p, s.len, r); break;
        case PA_TYPE_TIMESTAMP_NS: ok = pa_dt_parse_timestamp_ns(s.p, s.len, r); break;
        default: ok = pa_dt_parse_interval(s.p, s.len, rv); break;
        }
        return ok ? KN__CT_OK : KN__CT_SYNTAX;
    }
    if (from == to) {
        *r = a;
        *rv = iv;
        return KN__CT_OK;
    }
    if (from == PA_TYPE_DATE) {   /* midnight; |days| < 2^31 fits */
        *r = a * PA_USEC_PER_DAY;
        return KN__CT_OK;
    }
    if (from == PA_TYPE_TIMESTAMP_NS) {
        int64_t us = pa_dt_floordiv(a, 1000);
        *r = to == PA_TYPE_DATE ? pa_dt_floordiv(us, PA_USEC_PER_DAY) : us;
        return KN__CT_OK;
    }
    switch (to) {
    case PA_TYPE_DATE: *r = pa_dt_floordiv(a, PA_USEC_PER_DAY); return KN__CT_OK;
    case PA_TYPE_TIME: *r = pa_dt_floormod(a, PA_USEC_PER_DAY); return KN__CT_OK;
    case PA_TYPE_TIMESTAMP_NS:
        if (a > INT64_MAX / 1000 || a < INT64_MIN / 1000)
            return KN__CT_RANGE;
        *r = a * 1000;
        return KN__CT_OK;
    default: *r = a; return KN__CT_OK;   /* TIMESTAMP <-> TIMESTAMPTZ: the same instant in UTC */
    }
}

/* Which DTARITH sub (kn_dtarith) takes a of type at and gives dst. */
static inline PA_HD bool kn__s_dtarith_ok(int sub, pa_type_id at, pa_type_id dst)
{
    switch (sub) {
    case KN_DT_TS_ADD_IV:
    case KN_DT_TS_SUB_IV: return (kn__s_is_ts(at) && dst == at) || (at == PA_TYPE_DATE && dst == PA_TYPE_TIMESTAMP);
    case KN_DT_TS_SUB_TS:
    case KN_DT_AGE: return kn__s_is_ts(at) && dst == PA_TYPE_INTERVAL;
    case KN_DT_IV_ADD:
    case KN_DT_IV_SUB:
    case KN_DT_IV_MUL:
    case KN_DT_IV_DIV:
    case KN_DT_IV_NEG: return at == PA_TYPE_INTERVAL && dst == PA_TYPE_INTERVAL;
    case KN_DT_TIME_ADD_IV:
    case KN_DT_TIME_SUB_IV: return at == PA_TYPE_TIME && dst == PA_TYPE_TIME;
    case KN_DT_IV_KEY: return at == PA_TYPE_INTERVAL && dst == PA_TYPE_DECIMAL;
    default: return false;
    }
}

enum { KN__DT_OK, KN__DT_TS_RANGE, KN__DT_IV_RANGE, KN__DT_DIV_ZERO };

static inline PA_HD const char *kn__s_dtarith_text(int why)
{
    switch (why) {
    case KN__DT_TS_RANGE: return "timestamp out of range";
    case KN__DT_IV_RANGE: return "interval out of range";
    default: return "division by zero";
    }
}

/* DTARITH sub of one row (checked by kn__s_dtarith_ok): a the int64 value
 * (DATE days, TIMESTAMP(TZ), TIME) or INTERVAL ai; b the int64 TIMESTAMP,
 * INTERVAL bi or DOUBLE bf. The result to *r or *rv (IV_KEY: the 128-bit
 * key's bytes, as a DECIMAL(38)'s); KN__DT_OK or why not. */
static inline PA_HD int kn__s_dtarith(int sub, pa_type_id at, int64_t a, pa_interval ai, int64_t b, pa_interval bi,
                                      double bf, int64_t *r, pa_interval *rv)
{
    *r = 0;
    switch (sub) {
    case KN_DT_TS_ADD_IV:
    case KN_DT_TS_SUB_IV: {
        int64_t s = sub == KN_DT_TS_ADD_IV ? 1 : -1, ts = at == PA_TYPE_DATE ? a * PA_USEC_PER_DAY : a;
        if (bi.micros == INT64_MIN && s < 0)
            return KN__DT_TS_RANGE;   /* -INT64_MIN micros: beyond any timestamp from any start */
        return pa_dt_ts_add(ts, s * bi.months, s * bi.days, s * bi.micros, r) ? KN__DT_OK : KN__DT_TS_RANGE;
    }
    case KN_DT_TS_SUB_TS: return pa_dt_ts_sub(a, b, rv) ? KN__DT_OK : KN__DT_IV_RANGE;
    case KN_DT_AGE: return pa_dt_age(a, b, rv) ? KN__DT_OK : KN__DT_IV_RANGE;
    case KN_DT_IV_ADD:
    case KN_DT_IV_SUB: return pa_dt_iv_add(ai, bi, sub == KN_DT_IV_ADD ? 1 : -1, rv) ? KN__DT_OK : KN__DT_IV_RANGE;
    case KN_DT_IV_MUL:
    case KN_DT_IV_DIV:
        if (sub == KN_DT_IV_DIV && bf == 0)
            return KN__DT_DIV_ZERO;
        return pa_dt_iv_mul(ai, bf, sub == KN_DT_IV_DIV, rv) ? KN__DT_OK : KN__DT_IV_RANGE;
    case KN_DT_IV_NEG: return pa_dt_iv_neg(ai, rv) ? KN__DT_OK : KN__DT_IV_RANGE;
    case KN_DT_IV_KEY: {
        __int128 k = pa_interval_norm(ai);
        memcpy(rv, &k, sizeof k);
        return KN__DT_OK;
    }
    case KN_DT_TIME_ADD_IV: *r = pa_dt_time_add(a, bi.micros); return KN__DT_OK;
    case KN_DT_TIME_SUB_IV:   /* -micros mod a day, without negating INT64_MIN */
        *r = pa_dt_time_add(a, PA_USEC_PER_DAY - pa_dt_floormod(bi.micros, PA_USEC_PER_DAY));
        return KN__DT_OK;
    default: return KN__DT_IV_RANGE;
    }
}

/* ---------------------------------------------------------------- parsing */

/* C-locale isspace and isdigit. */
static inline PA_HD bool kn__s_isspace(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}
static inline PA_HD bool kn__s_isdigit(char c) { return c >= '0' && c <= '9'; }

/* s without leading and trailing white space. */
static inline PA_HD kn__str kn__s_trim(kn__str s)
{
    while (s.len && kn__s_isspace(s.p[0]))
        s.p++, s.len--;
    while (s.len && kn__s_isspace(s.p[s.len - 1]))
        s.len--;
    return s;
}

/* Exact decimal text (spaces around, optional sign, digits with at most one
 * '.') -> integer scaled by 10^scale, extra fraction digits rounded half
 * away from zero. False on bad text or beyond 38 significant digits; *out
 * is then unchanged. */
static inline PA_HD bool kn__s_parse_scaled(kn__str s, int scale, __int128 *out)
{
    s = kn__s_trim(s);
    const char *p = s.p, *end = s.p + s.len;
    bool neg = false;
    if (p < end && (*p == '+' || *p == '-'))
        neg = *p++ == '-';
    __int128 v = 0;
    int digits = 0, frac = 0, seen = 0;
    bool dot = false, round_up = false;
    for (; p < end; p++) {
        if (*p == '.' && !dot) {
            dot = true;
            continue;
        }
        if (!kn__s_isdigit(*p))
            return false;
        seen++;
        if (dot && frac >= scale) {
            /* The first dropped digit decides the rounding; the rest are ignored. */
            if (frac++ == scale)
                round_up = *p >= '5';
            continue;
        }
        if (dot)
            frac++;
        if (v == 0 && *p == '0' && !dot)
            continue;
        if (++digits > 38)
            return false;
        v = v * 10 + (*p - '0');
    }
    if (!seen)
        return false;
    for (int f = frac > scale ? scale : frac; f < scale; f++) {
        if (++digits > 38)
            return false;
        v *= 10;
    }
    v += round_up;
    *out = neg ? -v : v;
    return true;
}

/* "[-]Y-M-D" (spaces around; up to 9 digits a part, the date checked, years
 * within +-5,000,000) -> days since 1970-01-01. False on bad text. */
static inline PA_HD bool kn__s_parse_date(kn__str s, int32_t *out)
{
    s = kn__s_trim(s);
    int64_t part[3] = {0, 0, 0};
    int k = 0, nd = 0;
    bool neg = false;
    const char *p = s.p, *end = s.p + s.len;
    if (p < end && *p == '-')
        neg = true, p++;
    for (; p < end; p++) {
        if (*p == '-' && nd > 0 && k < 2) {
            k++;
            nd = 0;
        } else if (kn__s_isdigit(*p) && nd < 9) {
            part[k] = part[k] * 10 + (*p - '0');
            nd++;
        } else {
            return false;
        }
    }
    if (k != 2 || nd == 0)
        return false;
    int64_t y = neg ? -part[0] : part[0], m = part[1], d = part[2];
    if (m < 1 || m > 12 || d < 1 || d > kn__s_month_days(y, m) || y < -5000000 || y > 5000000)
        return false;
    *out = (int32_t)kn__s_days_from_civil(y, m, d);
    return true;
}

/* s equals the lower-case ASCII word w, ignoring ASCII case. */
static inline PA_HD bool kn__s_eq_nocase(kn__str s, const char *w)
{
    int64_t i = 0;
    for (; i < s.len && w[i]; i++) {
        char c = s.p[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != w[i])
            return false;
    }
    return i == s.len && !w[i];
}

/* true/t/yes/y/1 or false/f/no/n/0, any case, spaces around. */
static inline PA_HD bool kn__s_parse_bool(kn__str s, uint8_t *out)
{
    s = kn__s_trim(s);
    if (kn__s_eq_nocase(s, "true") || kn__s_eq_nocase(s, "t") || kn__s_eq_nocase(s, "yes") ||
        kn__s_eq_nocase(s, "y") || kn__s_eq_nocase(s, "1"))
        return *out = 1, true;
    if (kn__s_eq_nocase(s, "false") || kn__s_eq_nocase(s, "f") || kn__s_eq_nocase(s, "no") ||
        kn__s_eq_nocase(s, "n") || kn__s_eq_nocase(s, "0"))
        return *out = 0, true;
    return false;
}

/* ------------------------------------------------------------- formatting
 *
 * Each formatter writes into buf[0, cap), truncating, NUL-terminated when
 * cap > 0, and returns the length written (without the NUL).
 */

/* Copy src[0, n) into buf as above. */
static inline PA_HD int kn__s_put(char *buf, int cap, const char *src, int n)
{
    if (cap <= 0)
        return 0;
    int c = n < cap - 1 ? n : cap - 1;
    for (int i = 0; i < c; i++)
        buf[i] = src[i];
    buf[c] = '\0';
    return c;
}

/* A BYTEA's text ("\\x" and hex) or a UUID's (16 bytes; other lengths
 * as BYTEA) of p[0, n) into buf as above, cut at cap - 1. */
static inline PA_HD int kn__s_format_bytes(bool uuid, const uint8_t *p, int64_t n, char *buf, int cap)
{
    if (cap <= 0)
        return 0;
    if (uuid && n == PA_UUID_BYTES && cap > PA_UUID_TEXT) {
        int k = pa_uuid_format(p, buf);
        buf[k] = '\0';
        return k;
    }
    int64_t len = pa_bytea_text_len(n), c = len < cap - 1 ? len : cap - 1;
    for (int64_t k = 0; k < c; k++)
        buf[k] = pa_bytea_text_char(p, k);
    buf[c] = '\0';
    return (int)c;
}

/* Copy the NUL-terminated src into buf as above. */
static inline PA_HD int kn__s_put_cstr(char *buf, int cap, const char *src)
{
    int n = 0;
    while (src[n])
        n++;
    return kn__s_put(buf, cap, src, n);
}

/* Decimal digits of v, least significant first, into rev (20 bytes).
 * Returns the count, at least 1. */
static inline PA_HD int kn__s_digits_u64(uint64_t v, char *rev)
{
    int n = 0;
    do {
        rev[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    return n;
}

/* As kn__s_digits_u64 for 128 bits (rev holds 39 digits): 64-bit divisions
 * on chunks of 19 digits, cheaper than 128-bit ones on every device. */
static inline PA_HD int kn__s_digits_u128(unsigned __int128 v, char *rev)
{
    const uint64_t e19 = 10000000000000000000ULL;
    int n = 0;
    while (v > (unsigned __int128)UINT64_MAX) {
        uint64_t chunk = (uint64_t)(v % e19);
        v /= e19;
        for (int i = 0; i < 19; i++, chunk /= 10)
            rev[n++] = (char)('0' + (int)(chunk % 10));
    }
    return n + kn__s_digits_u64((uint64_t)v, rev + n);
}

/* A sign, then the digits rev[0, n) (least significant first) zero-padded
 * to `width` (at most 40), with a point before the last `scale` of them,
 * as text into buf. */
static inline PA_HD int kn__s_put_number(char *buf, int cap, bool neg, const char *rev, int n, int width,
                                         int scale)
{
    char out[48];
    int k = 0;
    if (neg)
        out[k++] = '-';
    width = width > 40 ? 40 : width;
    for (int j = (n > width ? n : width) - 1; j >= 0; j--) {
        if (j + 1 == scale)
            out[k++] = '.';
        out[k++] = j < n ? rev[j] : '0';
    }
    return kn__s_put(buf, cap, out, k);
}

static inline PA_HD int kn__s_format_i64(int64_t v, char *buf, int cap)
{
    char rev[20];
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int n = kn__s_digits_u64(mag, rev);
    return kn__s_put_number(buf, cap, v < 0, rev, n, 1, 0);
}

static inline PA_HD int kn__s_format_i128(__int128 v, char *buf, int cap)
{
    char rev[40];
    unsigned __int128 mag = v < 0 ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    int n = kn__s_digits_u128(mag, rev);
    return kn__s_put_number(buf, cap, v < 0, rev, n, 1, 0);
}

/* DECIMAL v scaled by 10^scale with all its scale digits: the text of
 * pa_format_decimal128(v, scale, scale, ...), "-0.05", "0.00", "12". The
 * scale is clamped to 0..38. */
static inline PA_HD int kn__s_format_decimal128(__int128 v, int scale, char *buf, int cap)
{
    char rev[40];
    scale = scale < 0 ? 0 : scale > 38 ? 38 : scale;
    unsigned __int128 mag = v < 0 ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    int n = kn__s_digits_u128(mag, rev);
    return kn__s_put_number(buf, cap, v < 0, rev, n, scale + 1, scale);
}

/* As kn__s_format_decimal128 for a 64-bit value (64-bit divisions only). */
static inline PA_HD int kn__s_format_decimal64(int64_t v, int scale, char *buf, int cap)
{
    char rev[20];
    scale = scale < 0 ? 0 : scale > 38 ? 38 : scale;
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int n = kn__s_digits_u64(mag, rev);
    return kn__s_put_number(buf, cap, v < 0, rev, n, scale + 1, scale);
}

/* DATE as snprintf's "%04d-%02d-%02d" of the civil date (year -5 is -005). */
static inline PA_HD int kn__s_format_date(int32_t days, char *buf, int cap)
{
    int64_t y, m, d;
    kn__s_civil(days, &y, &m, &d);
    char rev[20], out[32];
    uint64_t mag = y < 0 ? (uint64_t)-y : (uint64_t)y;
    int n = kn__s_digits_u64(mag, rev), k = 0;
    if (y < 0)
        out[k++] = '-';
    for (int j = (y < 0 ? 3 : 4) - 1; j >= n; j--)   /* the sign counts in %04d's width */
        out[k++] = '0';
    while (n)
        out[k++] = rev[--n];
    out[k++] = '-';
    out[k++] = (char)('0' + m / 10);
    out[k++] = (char)('0' + m % 10);
    out[k++] = '-';
    out[k++] = (char)('0' + d / 10);
    out[k++] = (char)('0' + d % 10);
    return kn__s_put(buf, cap, out, k);
}

static inline PA_HD int kn__s_format_bool(bool v, char *buf, int cap)
{
    return kn__s_put_cstr(buf, cap, v ? "true" : "false");
}

/* The text of pa_type_format: "DECIMAL(15,2)", "INTEGER", "UNKNOWN". */
static inline PA_HD int kn__s_format_type(pa_type t, char *buf, int cap)
{
    const char *name = "UNKNOWN";
    switch (t.id) {
#define KN__S_TYPE_NAME(id_, sql, width) case PA_TYPE_##id_: name = sql; break;
    PA_TYPE_LIST(KN__S_TYPE_NAME)
#undef KN__S_TYPE_NAME
    default: break;
    }
    if (t.id != PA_TYPE_DECIMAL)
        return kn__s_put_cstr(buf, cap, name);
    char out[24], rev[20];
    int k = 0, n;
    for (const char *s = "DECIMAL("; *s; s++)
        out[k++] = *s;
    for (n = kn__s_digits_u64(t.precision, rev); n;)
        out[k++] = rev[--n];
    out[k++] = ',';
    for (n = kn__s_digits_u64(t.scale, rev); n;)
        out[k++] = rev[--n];
    out[k++] = ')';
    return kn__s_put(buf, cap, out, k);
}

/* ------------------------------------------------------ exact arithmetic
 *
 * a op b into *r (the result wrapped to the width, as the GCC builtins
 * store it); true on overflow. The _soft forms are portable (device code
 * has no __builtin_*_overflow); host builds use the builtins.
 */

static inline PA_HD bool kn__s_add_i64_soft(int64_t a, int64_t b, int64_t *r)
{
    int64_t s = (int64_t)((uint64_t)a + (uint64_t)b);
    *r = s;
    return ((a ^ s) & (b ^ s)) < 0;   /* both operands' signs differ from the sum's */
}

static inline PA_HD bool kn__s_sub_i64_soft(int64_t a, int64_t b, int64_t *r)
{
    int64_t s = (int64_t)((uint64_t)a - (uint64_t)b);
    *r = s;
    return ((a ^ b) & (a ^ s)) < 0;   /* signs differ and the result took b's */
}

static inline PA_HD bool kn__s_mul_i64_soft(int64_t a, int64_t b, int64_t *r)
{
    __int128 p = (__int128)a * b;
    *r = (int64_t)(uint64_t)p;
    return p != (__int128)*r;
}

static inline PA_HD bool kn__s_add_i128_soft(__int128 a, __int128 b, __int128 *r)
{
    __int128 s = (__int128)((unsigned __int128)a + (unsigned __int128)b);
    *r = s;
    return ((a ^ s) & (b ^ s)) < 0;
}

static inline PA_HD bool kn__s_sub_i128_soft(__int128 a, __int128 b, __int128 *r)
{
    __int128 s = (__int128)((unsigned __int128)a - (unsigned __int128)b);
    *r = s;
    return ((a ^ b) & (a ^ s)) < 0;
}

/* |a| * |b| in 64-bit halves: it fits 128 bits only if one of them is below
 * 2^64 and the cross term fits 64 bits; then it must fit the signed range
 * (2^127 for a negative product). */
static inline PA_HD bool kn__s_mul_i128_soft(__int128 a, __int128 b, __int128 *r)
{
    typedef unsigned __int128 u128;
    *r = (__int128)((u128)a * (u128)b);
    u128 ua = a < 0 ? (u128)0 - (u128)a : (u128)a, ub = b < 0 ? (u128)0 - (u128)b : (u128)b;
    uint64_t a1 = (uint64_t)(ua >> 64), a0 = (uint64_t)ua, b1 = (uint64_t)(ub >> 64), b0 = (uint64_t)ub;
    if (a1 && b1)
        return true;
    u128 mid = (u128)a1 * b0 + (u128)a0 * b1;   /* one term is 0 */
    if (mid >> 64)
        return true;
    u128 lo = (u128)a0 * b0, mag = (mid << 64) + lo;
    if (mag < lo)
        return true;
    u128 lim = ((u128)1 << 127) - (u128)((a < 0) == (b < 0));
    return mag > lim;
}

#if defined(__GNUC__) && !defined(__CUDA_ARCH__)
#define KN__S_BUILTIN_OVERFLOW 1
#endif

static inline PA_HD bool kn__s_add_i64(int64_t a, int64_t b, int64_t *r)
{
#ifdef KN__S_BUILTIN_OVERFLOW
    return __builtin_add_overflow(a, b, r);
#else
    return kn__s_add_i64_soft(a, b, r);
#endif
}

static inline PA_HD bool kn__s_sub_i64(int64_t a, int64_t b, int64_t *r)
{
#ifdef KN__S_BUILTIN_OVERFLOW
    return __builtin_sub_overflow(a, b, r);
#else
    return kn__s_sub_i64_soft(a, b, r);
#endif
}

static inline PA_HD bool kn__s_mul_i64(int64_t a, int64_t b, int64_t *r)
{
#ifdef KN__S_BUILTIN_OVERFLOW
    return __builtin_mul_overflow(a, b, r);
#else
    return kn__s_mul_i64_soft(a, b, r);
#endif
}

static inline PA_HD bool kn__s_add_i128(__int128 a, __int128 b, __int128 *r)
{
#ifdef KN__S_BUILTIN_OVERFLOW
    return __builtin_add_overflow(a, b, r);
#else
    return kn__s_add_i128_soft(a, b, r);
#endif
}

static inline PA_HD bool kn__s_sub_i128(__int128 a, __int128 b, __int128 *r)
{
#ifdef KN__S_BUILTIN_OVERFLOW
    return __builtin_sub_overflow(a, b, r);
#else
    return kn__s_sub_i128_soft(a, b, r);
#endif
}

static inline PA_HD bool kn__s_mul_i128(__int128 a, __int128 b, __int128 *r)
{
#ifdef KN__S_BUILTIN_OVERFLOW
    return __builtin_mul_overflow(a, b, r);
#else
    return kn__s_mul_i128_soft(a, b, r);
#endif
}

/* 10^k, k clamped to 0..38 (0..18 for 64 bits). */
static inline PA_HD __int128 kn__s_pow10_i128(int k)
{
    __int128 p = 1;
    for (int i = 0; i < k && i < 38; i++)
        p *= 10;
    return p;
}

static inline PA_HD int64_t kn__s_pow10_i64(int k)
{
    int64_t p = 1;
    for (int i = 0; i < k && i < 18; i++)
        p *= 10;
    return p;
}

/* ------------------------------------------------------------ exact casts */

/* The range of an exact cast target as a scaled integer (BOOLEAN: any). */
static inline PA_HD void kn__s_exact_bounds(pa_type t, __int128 *lo, __int128 *hi)
{
    switch (t.id) {
    case PA_TYPE_INTEGER: *lo = INT32_MIN, *hi = INT32_MAX; break;
    case PA_TYPE_BIGINT: *lo = INT64_MIN, *hi = INT64_MAX; break;
    case PA_TYPE_DECIMAL: *hi = kn__s_pow10_i128(t.precision) - 1, *lo = -*hi; break;
    default: *hi = kn__s_pow10_i128(38), *lo = -*hi; break;
    }
}

/* v * 10^shift: scaling up is exact or sets *bad, scaling down rounds half
 * away from zero. f is 10^|shift| (clamped to 10^38), given by the caller
 * so a loop computes it once. */
static inline PA_HD __int128 kn__s_rescale(__int128 v, int shift, __int128 f, bool *bad)
{
    if (shift > 0) {
        __int128 r = 0;
        *bad = shift > 38 || kn__s_mul_i128(v, f, &r);
        return r;
    }
    *bad = false;
    if (shift == 0)
        return v;
    __int128 q = v / f, rem = v % f;
    if (rem < 0)
        rem = -rem;
    if (rem * 2 >= f)
        q += v < 0 ? -1 : 1;
    return q;
}

/* ------------------------------------------------------------- MATH */

/* What went wrong in a MATH function: an index into kn__s_math_text. */
enum {
    KN__MATH_OK, KN__MATH_NEG_SQRT, KN__MATH_LOG_ZERO, KN__MATH_LOG_NEG, KN__MATH_POW_ZERO, KN__MATH_POW_COMPLEX,
    KN__MATH_OVERFLOW, KN__MATH_UNDERFLOW, KN__MATH_LOG_BASE_ONE
};

static inline PA_HD const char *kn__s_math_text(int why)
{
    switch (why) {
    case KN__MATH_NEG_SQRT: return "cannot take square root of a negative number";
    case KN__MATH_LOG_ZERO: return "cannot take logarithm of zero";
    case KN__MATH_LOG_NEG: return "cannot take logarithm of a negative number";
    case KN__MATH_POW_ZERO: return "zero raised to a negative power is undefined";
    case KN__MATH_POW_COMPLEX: return "a negative number raised to a non-integer power yields a complex result";
    case KN__MATH_OVERFLOW: return "value out of range: overflow";
    case KN__MATH_UNDERFLOW: return "value out of range: underflow";
    case KN__MATH_LOG_BASE_ONE: return "division by zero (logarithm to base 1)";
    default: return "math function failed";
    }
}

/* The checks of PostgreSQL's float8 functions on a result: overflow when
 * it is infinite and no input was, underflow when it is zero and the
 * function's input was not. */
static inline PA_HD int kn__s_math_range(double r, bool inputs_inf, bool zero_ok)
{
    if (isinf(r) && !inputs_inf)
        return KN__MATH_OVERFLOW;
    if (r == 0.0 && !zero_ok)
        return KN__MATH_UNDERFLOW;
    return KN__MATH_OK;
}

static inline PA_HD int kn__s_log_check(double x)
{
    return x == 0.0 ? KN__MATH_LOG_ZERO : x < 0.0 ? KN__MATH_LOG_NEG : KN__MATH_OK;
}

/* fn (kn_math) of DOUBLE a (and b); digits/has_digits for ROUND and TRUNC. */
static inline PA_HD int kn__s_math_f64(int fn, double a, double b, int digits, bool has_digits, double *out)
{
    int why = KN__MATH_OK;
    double r = 0;
    switch (fn) {
    case KN_MATH_SQRT:
        if (a < 0)
            return KN__MATH_NEG_SQRT;
        r = sqrt(a);
        break;
    case KN_MATH_CBRT: r = cbrt(a); break;
    case KN_MATH_EXP:
        r = exp(a);
        why = isnan(a) ? KN__MATH_OK : kn__s_math_range(r, isinf(a), isinf(a));
        break;
    case KN_MATH_LN:
    case KN_MATH_LOG10:
        if ((why = kn__s_log_check(a)) != KN__MATH_OK)
            return why;
        r = fn == KN_MATH_LN ? log(a) : log10(a);
        break;
    case KN_MATH_LOG:   /* log base a of b */
        if ((why = kn__s_log_check(a)) != KN__MATH_OK || (why = kn__s_log_check(b)) != KN__MATH_OK)
            return why;
        if (a == 1.0)
            return KN__MATH_LOG_BASE_ONE;
        r = a == 2.0 ? log2(b) : a == 10.0 ? log10(b) : log(b) / log(a);
        break;
    case KN_MATH_POWER:
        if (a == 0.0 && b < 0.0)
            return KN__MATH_POW_ZERO;
        if (a < 0.0 && isfinite(b) && floor(b) != b)
            return KN__MATH_POW_COMPLEX;
        r = pow(a, b);
        if (!isnan(a) && !isnan(b))
            why = kn__s_math_range(r, isinf(a) || isinf(b), a == 0.0 || isinf(b));
        break;
    case KN_MATH_FLOOR: r = floor(a); break;
    case KN_MATH_CEIL: r = ceil(a); break;
    case KN_MATH_TRUNC:
    case KN_MATH_ROUND:
        if (!has_digits) {
            r = fn == KN_MATH_TRUNC ? trunc(a) : rint(a);
        } else if (digits > 308 || digits < -308 || !isfinite(a)) {
            r = digits > 0 || !isfinite(a) ? a : 0.0 * a;
        } else {
            double f = pow(10.0, (double)(digits < 0 ? -digits : digits));
            double s = digits < 0 ? a / f : a * f;
            if (!isfinite(s))
                r = a;   /* more digits than the double holds: unchanged */
            else {
                s = fn == KN_MATH_TRUNC ? trunc(s) : round(s);
                r = digits < 0 ? s * f : s / f;
            }
        }
        break;
    case KN_MATH_SIGN: r = a > 0 ? 1.0 : a < 0 ? -1.0 : a; break;
    default: return KN__MATH_OVERFLOW;
    }
    *out = r;
    return why;
}

/* FLOOR, CEIL, TRUNC or ROUND (half away from zero) of the scaled integer
 * v at 10^drop, then times 10^mul; false when the result needs more than
 * prec digits. drop above 38 leaves nothing (every |v| < 10^38). */
static inline PA_HD bool kn__s_math_dec(int fn, __int128 v, int drop, int mul, int prec, __int128 *out)
{
    __int128 q;
    if (drop > 38) {
        q = fn == KN_MATH_FLOOR && v < 0 ? -1 : fn == KN_MATH_CEIL && v > 0 ? 1 : 0;
    } else {
        __int128 f = kn__s_pow10_i128(drop), rem;
        q = v / f;
        rem = v % f;
        if (rem != 0) {
            switch (fn) {
            case KN_MATH_FLOOR: q -= v < 0; break;
            case KN_MATH_CEIL: q += v > 0; break;
            case KN_MATH_ROUND: {
                __int128 r2 = rem < 0 ? -rem : rem;
                if (r2 >= f - r2)
                    q += v < 0 ? -1 : 1;
                break;
            }
            default: break;
            }
        }
    }
    if (mul > 0 && q != 0) {
        if (mul > 38 || kn__s_mul_i128(q, kn__s_pow10_i128(mul), &q))
            return false;
    }
    __int128 lim = kn__s_pow10_i128(prec);
    if (q >= lim || q <= -lim)
        return false;
    *out = q;
    return true;
}

#endif /* PISTA_KN_SCALAR_H */
