/*
 * datetime.h - calendar arithmetic, text and arithmetic of the time types
 * (TIMESTAMP, TIMESTAMPTZ and TIME as int64 microseconds, TIMESTAMP_NS as
 * int64 nanoseconds, INTERVAL as pa_interval), with PostgreSQL's formats
 * and rules. Kernels (CPU loops and CUDA), storage, exec and the CLI share
 * it, so every function is static inline PA_HD and builds as C17, C++17
 * and CUDA device code: no libc calls beyond <math.h>, no tables at file
 * scope. The session time zone is UTC.
 *
 * Text: formatters write into buf[0, cap), truncating, NUL-terminated when
 * cap > 0, and return the length written (without the NUL); PA_DT_TEXT_MAX
 * bytes always hold a whole value. Parsers take s[0, n) (not
 * NUL-terminated), return false on invalid input or a value out of range,
 * and leave *out unchanged then.
 */
#ifndef PISTA_CORE_DATETIME_H
#define PISTA_CORE_DATETIME_H

#include "core/core.h"

#include <math.h>

/* The longest text of any formatter here, NUL included: an interval of
 * "-178956970 years -8 mons -2147483648 days -2562047788:00:54.775808" is
 * 67 bytes. */
#define PA_DT_TEXT_MAX 80

#define PA_USEC_PER_HOUR INT64_C(3600000000)
#define PA_USEC_PER_MIN INT64_C(60000000)

/* ------------------------------------------------------------ calendar
 *
 * Days since 1970-01-01 in the proleptic Gregorian calendar, by the
 * era/day-of-era formulas (400-year eras of 146097 days, years starting in
 * March so the leap day is last), exact for any |days| < 2^60.
 */

/* Floor division and the matching non-negative remainder (b > 0). */
static inline PA_HD int64_t pa_dt_floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return q - (a % b < 0);
}
static inline PA_HD int64_t pa_dt_floormod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r < 0 ? r + b : r;
}

/* Days since 1970-01-01 -> year, month 1..12, day 1..31. */
static inline PA_HD void pa_dt_civil(int64_t days, int64_t *y, int64_t *m, int64_t *d)
{
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

/* Year, month 1..12, day -> days since 1970-01-01 (the day is not checked). */
static inline PA_HD int64_t pa_dt_days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Days in month m (1..12) of year y. Outside February the months alternate
 * 31/30 with the parity flipping at August: 30 + ((m + m / 8) & 1). */
static inline PA_HD int64_t pa_dt_month_days(int64_t y, int64_t m)
{
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 ? 28 + leap : 30 + ((m + m / 8) & 1);
}

/* ------------------------------------------------------------ formatting */

/* Copy src[0, n) into buf[0, cap) as the formatters do. */
static inline PA_HD int pa__dt_put(char *buf, int cap, const char *src, int n)
{
    if (cap <= 0)
        return 0;
    if (n > cap - 1)
        n = cap - 1;
    for (int i = 0; i < n; i++)
        buf[i] = src[i];
    buf[n] = '\0';
    return n;
}

/* Append the decimal digits of v, zero-padded to width, at out + k. */
static inline PA_HD int pa__dt_num(char *out, int k, uint64_t v, int width)
{
    char rev[20];
    int n = 0;
    do {
        rev[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    for (int j = n; j < width; j++)
        out[k++] = '0';
    while (n)
        out[k++] = rev[--n];
    return k;
}

/* Append "." and the fraction f (0 <= f < 10^digits) at digits places
 * without trailing zeros; nothing when f is 0. */
static inline PA_HD int pa__dt_frac(char *out, int k, uint64_t f, int digits)
{
    if (f == 0)
        return k;
    while (f % 10 == 0)
        f /= 10, digits--;
    out[k++] = '.';
    return pa__dt_num(out, k, f, digits);
}

/* "HH:MM:SS[.frac]" of a non-negative count of 10^-digits seconds; hours
 * may pass 24. */
static inline PA_HD int pa__dt_hms(char *out, int k, uint64_t v, int digits)
{
    uint64_t unit = 1;
    for (int i = 0; i < digits; i++)
        unit *= 10;
    uint64_t secs = v / unit;
    k = pa__dt_num(out, k, secs / 3600, 2);
    out[k++] = ':';
    k = pa__dt_num(out, k, secs / 60 % 60, 2);
    out[k++] = ':';
    k = pa__dt_num(out, k, secs % 60, 2);
    return pa__dt_frac(out, k, v % unit, digits);
}

/* "YYYY-MM-DD HH:MM:SS[.frac]" of v units of 10^-digits seconds (digits 6
 * or 9), the year as the DATE text's %04d; optionally "+00". */
static inline PA_HD int pa__dt_format_ts(int64_t v, int digits, bool tz, char *buf, int cap)
{
    int64_t per_day = PA_USEC_PER_DAY * (digits == 9 ? 1000 : 1);
    int64_t days = pa_dt_floordiv(v, per_day), y, m, d;
    pa_dt_civil(days, &y, &m, &d);
    char out[PA_DT_TEXT_MAX];
    int k = 0;
    if (y < 0)
        out[k++] = '-';
    k = pa__dt_num(out, k, (uint64_t)(y < 0 ? -y : y), y < 0 ? 3 : 4);
    out[k++] = '-';
    k = pa__dt_num(out, k, (uint64_t)m, 2);
    out[k++] = '-';
    k = pa__dt_num(out, k, (uint64_t)d, 2);
    out[k++] = ' ';
    k = pa__dt_hms(out, k, (uint64_t)pa_dt_floormod(v, per_day), digits);
    if (tz) {
        out[k++] = '+';
        out[k++] = '0';
        out[k++] = '0';
    }
    return pa__dt_put(buf, cap, out, k);
}

/* TIMESTAMP us: "2020-10-01 12:00:00.123" (floor division before 1970). */
static inline PA_HD int pa_dt_format_timestamp(int64_t us, char *buf, int cap)
{
    return pa__dt_format_ts(us, 6, false, buf, cap);
}

/* TIMESTAMPTZ us (UTC): as pa_dt_format_timestamp plus "+00". */
static inline PA_HD int pa_dt_format_timestamptz(int64_t us, char *buf, int cap)
{
    return pa__dt_format_ts(us, 6, true, buf, cap);
}

/* TIMESTAMP_NS ns: up to 9 fraction digits, trailing zeros removed. */
static inline PA_HD int pa_dt_format_timestamp_ns(int64_t ns, char *buf, int cap)
{
    return pa__dt_format_ts(ns, 9, false, buf, cap);
}

/* TIME us: "HH:MM:SS[.frac]"; a value outside a day is taken modulo one. */
static inline PA_HD int pa_dt_format_time(int64_t us, char *buf, int cap)
{
    char out[PA_DT_TEXT_MAX];
    if (us != PA_USEC_PER_DAY)   /* 24:00:00 is a valid TIME */
        us = pa_dt_floormod(us, PA_USEC_PER_DAY);
    return pa__dt_put(buf, cap, out, pa__dt_hms(out, 0, (uint64_t)us, 6));
}

/* One "N unit[s]" part of PostgreSQL's EncodeInterval (AddPostgresIntPart):
 * nothing for 0; a "+" when the previous part written was negative. */
static inline PA_HD int pa__dt_iv_part(char *out, int k, int64_t v, const char *unit, bool *zero, bool *before)
{
    if (v == 0)
        return k;
    if (!*zero)
        out[k++] = ' ';
    if (*before && v > 0)
        out[k++] = '+';
    if (v < 0)
        out[k++] = '-';
    k = pa__dt_num(out, k, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, 1);
    out[k++] = ' ';
    while (*unit)
        out[k++] = *unit++;
    if (v != 1)
        out[k++] = 's';
    *before = v < 0;
    *zero = false;
    return k;
}

/* INTERVAL in PostgreSQL's IntervalStyle 'postgres': "1 year 2 mons 3 days
 * 04:05:06", "-1 mons +01:00:00", "00:00:00". A "+" marks a positive part
 * that follows a negative one (PostgreSQL looks at the part just before). */
static inline PA_HD int pa_dt_format_interval(pa_interval v, char *buf, int cap)
{
    char out[PA_DT_TEXT_MAX];
    bool zero = true, before = false;
    int k = pa__dt_iv_part(out, 0, v.months / 12, "year", &zero, &before);
    k = pa__dt_iv_part(out, k, v.months % 12, "mon", &zero, &before);
    k = pa__dt_iv_part(out, k, v.days, "day", &zero, &before);
    if (zero || v.micros != 0) {
        if (!zero)
            out[k++] = ' ';
        if (v.micros < 0)
            out[k++] = '-';
        else if (before)
            out[k++] = '+';
        uint64_t mag = v.micros < 0 ? (uint64_t)0 - (uint64_t)v.micros : (uint64_t)v.micros;
        k = pa__dt_hms(out, k, mag, 6);
    }
    return pa__dt_put(buf, cap, out, k);
}

/* A value of a time type t as text: a is the int64 value (TIMESTAMP,
 * TIMESTAMPTZ, TIME, TIMESTAMP_NS), iv the INTERVAL. The one dispatch the
 * printing (core/column.c), statistics text and CASTs to VARCHAR share. */
static inline PA_HD int pa_dt_format_value(pa_type_id t, int64_t a, pa_interval iv, char *buf, int cap)
{
    switch (t) {
    case PA_TYPE_TIMESTAMP: return pa_dt_format_timestamp(a, buf, cap);
    case PA_TYPE_TIMESTAMPTZ: return pa_dt_format_timestamptz(a, buf, cap);
    case PA_TYPE_TIME: return pa_dt_format_time(a, buf, cap);
    case PA_TYPE_TIMESTAMP_NS: return pa_dt_format_timestamp_ns(a, buf, cap);
    case PA_TYPE_INTERVAL: return pa_dt_format_interval(iv, buf, cap);
    default: return pa__dt_put(buf, cap, "?", 1);
    }
}

/* --------------------------------------------------------------- parsing */

static inline PA_HD bool pa__dt_digit(char c) { return c >= '0' && c <= '9'; }
static inline PA_HD bool pa__dt_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static inline PA_HD bool pa__dt_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* A parser's position in s[0, n). */
typedef struct pa__dt_in {
    const char *p, *end;
} pa__dt_in;

static inline PA_HD void pa__dt_skip_spaces(pa__dt_in *in)
{
    while (in->p < in->end && pa__dt_space(*in->p))
        in->p++;
}

static inline PA_HD bool pa__dt_eat(pa__dt_in *in, char c)
{
    if (in->p < in->end && *in->p == c) {
        in->p++;
        return true;
    }
    return false;
}

/* 1 .. max_digits decimal digits into *v; false when there are none or
 * more. */
static inline PA_HD bool pa__dt_uint(pa__dt_in *in, int max_digits, int64_t *v)
{
    int64_t r = 0;
    int k = 0;
    while (in->p < in->end && pa__dt_digit(*in->p)) {
        if (++k > max_digits)
            return false;
        r = r * 10 + (*in->p++ - '0');
    }
    *v = r;
    return k > 0;
}

/* Exactly two digits. */
static inline PA_HD bool pa__dt_two(pa__dt_in *in, int64_t *v)
{
    if (in->end - in->p < 2 || !pa__dt_digit(in->p[0]) || !pa__dt_digit(in->p[1]))
        return false;
    *v = (in->p[0] - '0') * 10 + (in->p[1] - '0');
    in->p += 2;
    return true;
}

/* After a '.': the fraction as a count of 10^-digits (at least one digit;
 * further digits round half up on the first dropped one). */
static inline PA_HD bool pa__dt_fraction(pa__dt_in *in, int digits, int64_t *v)
{
    int64_t r = 0;
    int k = 0;
    bool up = false;
    while (in->p < in->end && pa__dt_digit(*in->p)) {
        char c = *in->p++;
        if (k < digits)
            r = r * 10 + (c - '0');
        else if (k == digits)
            up = c >= '5';
        k++;
    }
    for (int j = k; j < digits; j++)
        r *= 10;
    *v = r + up;
    return k > 0;
}

/* "HH:MM[:SS[.frac]]" -> 10^-digits seconds since midnight, fields range
 * checked (24:00:00 exactly allowed). */
static inline PA_HD bool pa__dt_clock(pa__dt_in *in, int digits, int64_t *v)
{
    int64_t h, mi, s = 0, f = 0, unit = 1;
    for (int i = 0; i < digits; i++)
        unit *= 10;
    if (!pa__dt_two(in, &h) || !pa__dt_eat(in, ':') || !pa__dt_two(in, &mi))
        return false;
    if (pa__dt_eat(in, ':')) {
        if (!pa__dt_two(in, &s))
            return false;
        if (pa__dt_eat(in, '.') && !pa__dt_fraction(in, digits, &f))
            return false;
    }
    if (h > 24 || mi > 59 || s > 59 || (h == 24 && (mi || s || f)))
        return false;
    *v = ((h * 60 + mi) * 60 + s) * unit + f;
    return true;
}

/* An optional zone: "Z", "UTC", "+HH", "+HH:MM", "+HHMM" or with '-', spaces
 * before it allowed. Its offset east of UTC in seconds to *secs. */
static inline PA_HD bool pa__dt_zone(pa__dt_in *in, int64_t *secs)
{
    *secs = 0;
    pa__dt_skip_spaces(in);
    if (in->p == in->end)
        return true;
    char c = *in->p;
    if (c == 'Z' || c == 'z') {
        in->p++;
        return true;
    }
    if (in->end - in->p >= 3 && (in->p[0] | 0x20) == 'u' && (in->p[1] | 0x20) == 't' && (in->p[2] | 0x20) == 'c') {
        in->p += 3;
        return true;
    }
    if (c != '+' && c != '-')
        return false;
    in->p++;
    int64_t h, m = 0;
    if (!pa__dt_two(in, &h))
        return false;
    if (pa__dt_eat(in, ':')) {
        if (!pa__dt_two(in, &m))
            return false;
    } else if (in->p < in->end && pa__dt_digit(*in->p) && !pa__dt_two(in, &m)) {
        return false;
    }
    if (h > 15 || m > 59)
        return false;
    *secs = (c == '-' ? -1 : 1) * (h * 3600 + m * 60);
    return true;
}

/* "[-]YYYY-MM-DD[( |T)HH:MM[:SS[.frac]]][zone]" with spaces around, as
 * 10^-digits seconds since 1970-01-01 (UTC when tz). */
static inline PA_HD bool pa__dt_parse_ts(const char *s, int64_t n, int digits, bool tz, int64_t *out)
{
    pa__dt_in in = {s, s + n};
    int64_t y, m, d, clock = 0, zone = 0, unit = 1;
    for (int i = 0; i < digits; i++)
        unit *= 10;
    pa__dt_skip_spaces(&in);
    bool neg = pa__dt_eat(&in, '-');
    if (!pa__dt_uint(&in, 6, &y) || !pa__dt_eat(&in, '-') || !pa__dt_uint(&in, 2, &m) || !pa__dt_eat(&in, '-') ||
        !pa__dt_uint(&in, 2, &d))
        return false;
    if (neg)
        y = -y;
    if (m < 1 || m > 12 || d < 1 || d > pa_dt_month_days(y, m))
        return false;
    if (in.p < in.end && (*in.p == 'T' || *in.p == 't' || pa__dt_space(*in.p))) {
        pa__dt_in save = in;
        in.p++;
        pa__dt_skip_spaces(&in);
        if (in.p == in.end)
            in = save;   /* only trailing spaces */
        else if (!pa__dt_clock(&in, digits, &clock) || !pa__dt_zone(&in, &zone))
            return false;
    }
    pa__dt_skip_spaces(&in);
    if (in.p != in.end)
        return false;
    __int128 v = (__int128)pa_dt_days_from_civil(y, m, d) * 86400 * unit + clock;
    if (tz)
        v -= (__int128)zone * unit;
    if (v < INT64_MIN || v > INT64_MAX)
        return false;
    *out = (int64_t)v;
    return true;
}

/* TIMESTAMP (tz false: a zone is read and ignored, as PostgreSQL) or
 * TIMESTAMPTZ (tz: the zone's offset applied, giving UTC; none is UTC). */
static inline PA_HD bool pa_dt_parse_timestamp(const char *s, int64_t n, bool tz, int64_t *us)
{
    return pa__dt_parse_ts(s, n, 6, tz, us);
}

/* TIMESTAMP_NS: up to 9 fraction digits; a zone is ignored. */
static inline PA_HD bool pa_dt_parse_timestamp_ns(const char *s, int64_t n, int64_t *ns)
{
    return pa__dt_parse_ts(s, n, 9, false, ns);
}

/* TIME "HH:MM[:SS[.frac]]" with spaces around. */
static inline PA_HD bool pa_dt_parse_time(const char *s, int64_t n, int64_t *us)
{
    pa__dt_in in = {s, s + n};
    int64_t v;
    pa__dt_skip_spaces(&in);
    if (!pa__dt_clock(&in, 6, &v))
        return false;
    pa__dt_skip_spaces(&in);
    if (in.p != in.end)
        return false;
    *us = v;
    return true;
}

/* Units of an interval's "<number> <unit>" parts. */
enum {
    PA__DT_U_NONE, PA__DT_U_US, PA__DT_U_MS, PA__DT_U_SEC, PA__DT_U_MIN, PA__DT_U_HOUR, PA__DT_U_DAY, PA__DT_U_WEEK,
    PA__DT_U_MONTH, PA__DT_U_YEAR, PA__DT_U_DECADE, PA__DT_U_CENTURY, PA__DT_U_MILLENNIUM, PA__DT_U_AGO
};

/* w[0, n) equals the lower-case word, ignoring ASCII case. */
static inline PA_HD bool pa__dt_word(const char *w, int64_t n, const char *word)
{
    int64_t i = 0;
    for (; i < n && word[i]; i++)
        if ((w[i] | 0x20) != word[i])
            return false;
    return i == n && !word[i];
}

static inline PA_HD int pa__dt_unit(const char *w, int64_t n)
{
    /* Each unit's words, space separated, the unit after a '|'. */
    const char *spec = "us usec usecs microsecond microseconds|"
                       "ms msec msecs millisecond milliseconds|"
                       "s sec secs second seconds|"
                       "m min mins minute minutes|"
                       "h hr hrs hour hours|"
                       "d day days|"
                       "w week weeks|"
                       "mon mons month months|"
                       "y yr yrs year years|"
                       "decade decades|"
                       "century centuries|"
                       "millennium millennia millenniums|"
                       "ago|";
    int unit = PA__DT_U_US;
    const char *p = spec;
    while (*p) {
        const char *q = p;
        while (*q != ' ' && *q != '|')
            q++;
        /* Compare w with [p, q). */
        bool eq = q - p == n;
        for (int64_t i = 0; eq && i < n; i++)
            eq = (w[i] | 0x20) == p[i];
        if (eq)
            return unit;
        if (*q == '|')
            unit++;
        p = q + 1;
    }
    return PA__DT_U_NONE;
}

/* The parts of an interval being read, wide so overflow is caught at the end. */
typedef struct pa__dt_acc {
    __int128 months, days, micros;
} pa__dt_acc;

/* Add sign * (ip + fn / fd) units u to acc, fractions cascading down as
 * PostgreSQL's DecodeInterval: years to whole months (rounded), months to
 * days (30) then micros, weeks to days then micros, days to micros. */
static inline PA_HD bool pa__dt_add_unit(pa__dt_acc *acc, int u, int sign, int64_t ip, int64_t fn, int64_t fd)
{
    __int128 mo = 0, dd = 0, us = 0, rest;
    const __int128 day = PA_USEC_PER_DAY;
    switch (u) {
    case PA__DT_U_US: us = ip + (fn * 2 >= fd); break;
    case PA__DT_U_MS: us = (__int128)ip * 1000 + ((__int128)fn * 1000 * 2 + fd) / (2 * fd); break;
    case PA__DT_U_SEC: us = (__int128)ip * 1000000 + ((__int128)fn * 1000000 * 2 + fd) / (2 * fd); break;
    case PA__DT_U_MIN: us = (__int128)ip * PA_USEC_PER_MIN + ((__int128)fn * PA_USEC_PER_MIN * 2 + fd) / (2 * fd); break;
    case PA__DT_U_HOUR:
        us = (__int128)ip * PA_USEC_PER_HOUR + ((__int128)fn * PA_USEC_PER_HOUR * 2 + fd) / (2 * fd);
        break;
    case PA__DT_U_DAY: dd = ip; us = ((__int128)fn * day * 2 + fd) / (2 * fd); break;
    case PA__DT_U_WEEK:
        dd = (__int128)ip * 7 + (__int128)fn * 7 / fd;
        rest = (__int128)fn * 7 % fd;
        us = (rest * day * 2 + fd) / (2 * fd);
        break;
    case PA__DT_U_MONTH:
        mo = ip;
        dd = (__int128)fn * 30 / fd;
        rest = (__int128)fn * 30 % fd;
        us = (rest * day * 2 + fd) / (2 * fd);
        break;
    case PA__DT_U_YEAR:
    case PA__DT_U_DECADE:
    case PA__DT_U_CENTURY:
    case PA__DT_U_MILLENNIUM: {
        int64_t years = u == PA__DT_U_YEAR ? 1 : u == PA__DT_U_DECADE ? 10 : u == PA__DT_U_CENTURY ? 100 : 1000;
        mo = (__int128)ip * years * 12 + ((__int128)fn * years * 12 * 2 + fd) / (2 * fd);
        break;
    }
    default: return false;
    }
    acc->months += sign * mo;
    acc->days += sign * dd;
    acc->micros += sign * us;
    /* Far beyond any valid interval, so the sums above never wrap. */
    const __int128 lim = (__int128)1 << 100;
    return acc->months < lim && acc->months > -lim && acc->days < lim && acc->days > -lim && acc->micros < lim &&
           acc->micros > -lim;
}

/* "[+|-]H:MM[:SS[.frac]]" (hours any number of digits) added to acc. */
static inline PA_HD bool pa__dt_iv_clock(pa__dt_in *in, pa__dt_acc *acc)
{
    int sign = 1;
    if (pa__dt_eat(in, '-'))
        sign = -1;
    else
        pa__dt_eat(in, '+');
    int64_t h, mi, s = 0, f = 0;
    if (!pa__dt_uint(in, 12, &h) || !pa__dt_eat(in, ':') || !pa__dt_uint(in, 2, &mi))
        return false;
    if (pa__dt_eat(in, ':')) {
        if (!pa__dt_uint(in, 2, &s))
            return false;
        if (pa__dt_eat(in, '.') && !pa__dt_fraction(in, 6, &f))
            return false;
    }
    if (mi > 59 || s > 59)
        return false;
    acc->micros += sign * ((__int128)h * PA_USEC_PER_HOUR + mi * PA_USEC_PER_MIN + s * PA_USEC_PER_SEC + f);
    return true;
}

/* INTERVAL text as PostgreSQL reads it: "<number> <unit>" parts (the
 * number signed and possibly fractional, the unit any case, attached or
 * after spaces; fractions cascade down: '1.5 months' = 1 mon 15 days,
 * '1.5 days' = 1 day 12:00:00), "[-]hh:mm[:ss[.frac]]" time parts, a bare
 * number as seconds, an optional leading '@' and a trailing "ago" that
 * negates the whole. False on bad text or a field out of its range.
 * Fractions of a microsecond round half away from zero (PostgreSQL: half
 * to even). */
static inline PA_HD bool pa_dt_parse_interval(const char *s, int64_t n, pa_interval *out)
{
    pa__dt_in in = {s, s + n};
    pa__dt_acc acc = {0, 0, 0};
    bool any = false, ago = false;
    pa__dt_skip_spaces(&in);
    pa__dt_eat(&in, '@');
    for (;;) {
        pa__dt_skip_spaces(&in);
        if (in.p == in.end)
            break;
        if (ago)
            return false;   /* "ago" must be last */
        const char *tok = in.p;
        if (pa__dt_alpha(*in.p)) {
            while (in.p < in.end && pa__dt_alpha(*in.p))
                in.p++;
            if (!any || pa__dt_unit(tok, in.p - tok) != PA__DT_U_AGO)
                return false;
            ago = true;
            continue;
        }
        /* A time part when a ':' comes before the next space. */
        const char *q = in.p;
        while (q < in.end && !pa__dt_space(*q) && *q != ':')
            q++;
        if (q < in.end && *q == ':') {
            if (!pa__dt_iv_clock(&in, &acc))
                return false;
            any = true;
            continue;
        }
        int sign = 1;
        if (pa__dt_eat(&in, '-'))
            sign = -1;
        else
            pa__dt_eat(&in, '+');
        int64_t ip = 0, fn = 0, fd = 1;
        bool digits = in.p < in.end && pa__dt_digit(*in.p);
        if (digits && !pa__dt_uint(&in, 18, &ip))
            return false;
        if (pa__dt_eat(&in, '.')) {
            while (in.p < in.end && pa__dt_digit(*in.p)) {
                if (fd < INT64_C(1000000000000000000)) {   /* 18 digits are plenty */
                    fn = fn * 10 + (*in.p - '0');
                    fd *= 10;
                }
                in.p++;
                digits = true;
            }
        }
        if (!digits)
            return false;
        const char *after = in.p;
        pa__dt_skip_spaces(&in);
        const char *w = in.p;
        while (in.p < in.end && pa__dt_alpha(*in.p))
            in.p++;
        int u;
        if (w == in.p) {   /* a bare number: days before a time part (PostgreSQL's '1 01:00'), seconds last */
            const char *c = w;
            while (c < in.end && !pa__dt_space(*c) && *c != ':')
                c++;
            if (c < in.end && *c == ':' && c > w && after < w)
                u = PA__DT_U_DAY;
            else if (w == in.end)
                u = PA__DT_U_SEC;
            else
                return false;
            in.p = after;
        } else if ((u = pa__dt_unit(w, in.p - w)) == PA__DT_U_AGO) {   /* seconds, then "ago" */
            u = PA__DT_U_SEC;
            ago = true;
        }
        if (in.p < in.end && !pa__dt_space(*in.p) && *in.p != '-' && *in.p != '+')
            return false;
        if (!pa__dt_add_unit(&acc, u, sign, ip, fn, fd))
            return false;
        any = true;
    }
    if (!any)
        return false;
    if (ago) {
        acc.months = -acc.months;
        acc.days = -acc.days;
        acc.micros = -acc.micros;
    }
    if (acc.months < INT32_MIN || acc.months > INT32_MAX || acc.days < INT32_MIN || acc.days > INT32_MAX ||
        acc.micros < INT64_MIN || acc.micros > INT64_MAX)
        return false;
    out->months = (int32_t)acc.months;
    out->days = (int32_t)acc.days;
    out->micros = (int64_t)acc.micros;
    return true;
}

/* ----------------------------------------------------------- arithmetic
 *
 * PostgreSQL's rules; each returns false when the result is out of range
 * (the caller's "timestamp out of range" / "interval out of range"), *out
 * then unspecified.
 */

/* Timestamp us + months + days + micros (timestamp_pl_interval): months
 * first, the day of month clamped to the month's end, then days, then
 * micros. */
static inline PA_HD bool pa_dt_ts_add(int64_t us, int64_t months, int64_t days, int64_t micros, int64_t *out)
{
    int64_t day = pa_dt_floordiv(us, PA_USEC_PER_DAY), tod = us - day * PA_USEC_PER_DAY;
    /* Int64 timestamps span under 300,000 years: a bound that keeps the sums exact. */
    const int64_t lim = INT64_C(12) * 1000000;
    if (months > lim || months < -lim || days > lim * 31 || days < -lim * 31)
        return false;
    if (months != 0) {
        int64_t y, m, d;
        pa_dt_civil(day, &y, &m, &d);
        int64_t t = y * 12 + (m - 1) + months;
        int64_t ny = pa_dt_floordiv(t, 12), nm = t - ny * 12 + 1, md = pa_dt_month_days(ny, nm);
        day = pa_dt_days_from_civil(ny, nm, d < md ? d : md);
    }
    __int128 r = ((__int128)day + days) * PA_USEC_PER_DAY + tod + micros;
    if (r < INT64_MIN || r > INT64_MAX)
        return false;
    *out = (int64_t)r;
    return true;
}

/* a - b of two timestamps as days and micros (timestamp_mi, then
 * interval_justify_hours: micros within one day, with the sign of the
 * whole). */
static inline PA_HD bool pa_dt_ts_sub(int64_t a, int64_t b, pa_interval *out)
{
    __int128 diff = (__int128)a - b;
    if (diff < INT64_MIN || diff > INT64_MAX)
        return false;   /* PostgreSQL: interval out of range */
    int64_t t = (int64_t)diff;
    out->months = 0;
    out->days = (int32_t)(t / PA_USEC_PER_DAY);   /* |t| < 2^63 us: under 2^27 days */
    out->micros = t % PA_USEC_PER_DAY;
    return true;
}

/* a + sign * b field by field (interval_pl / interval_mi). */
static inline PA_HD bool pa_dt_iv_add(pa_interval a, pa_interval b, int sign, pa_interval *out)
{
    int64_t mo = (int64_t)a.months + sign * (int64_t)b.months, d = (int64_t)a.days + sign * (int64_t)b.days;
    __int128 us = (__int128)a.micros + sign * (__int128)b.micros;
    if (mo < INT32_MIN || mo > INT32_MAX || d < INT32_MIN || d > INT32_MAX || us < INT64_MIN || us > INT64_MAX)
        return false;
    out->months = (int32_t)mo;
    out->days = (int32_t)d;
    out->micros = (int64_t)us;
    return true;
}

/* -a (interval_um). */
static inline PA_HD bool pa_dt_iv_neg(pa_interval a, pa_interval *out)
{
    if (a.months == INT32_MIN || a.days == INT32_MIN || a.micros == INT64_MIN)
        return false;
    out->months = -a.months;
    out->days = -a.days;
    out->micros = -a.micros;
    return true;
}

/* Whether double x truncates into [lo, hi] (false for NaN). */
static inline PA_HD bool pa__dt_fits(double x, double lo, double hi) { return x >= lo && x < hi; }

/* Rounding to whole microseconds of a count of days or seconds (TSROUND). */
static inline PA_HD double pa__dt_tsround(double x) { return rint(x * 1e6) / 1e6; }

/* a * f, or a / f when div (interval_mul / interval_div): months and days
 * truncated, their fractions carried down to days (a month as 30) and to
 * micros; f = 0 with div is the caller's "division by zero". */
static inline PA_HD bool pa_dt_iv_mul(pa_interval a, double f, bool div, pa_interval *out)
{
    double mo = div ? a.months / f : a.months * f, dd = div ? a.days / f : a.days * f;
    if (!pa__dt_fits(mo, -2147483649.0, 2147483648.0) || !pa__dt_fits(dd, -2147483649.0, 2147483648.0))
        return false;
    int32_t rm = (int32_t)mo, rd = (int32_t)dd;
    double month_rem_days = pa__dt_tsround((mo - rm) * 30);
    double sec_rem = pa__dt_tsround((dd - rd + month_rem_days - (int)month_rem_days) * 86400);
    int64_t days = rd;
    if (fabs(sec_rem) >= 86400) {
        days += (int)(sec_rem / 86400);
        sec_rem -= (int)(sec_rem / 86400) * 86400.0;
    }
    days += (int32_t)month_rem_days;
    double us = rint((div ? (double)a.micros / f : (double)a.micros * f) + sec_rem * 1e6);
    if (days < INT32_MIN || days > INT32_MAX || !pa__dt_fits(us, -9223372036854775808.0, 9223372036854775808.0))
        return false;
    out->months = rm;
    out->days = (int32_t)days;
    out->micros = (int64_t)us;
    return true;
}

/* age(a, b) of two timestamps (timestamp_age): the field-wise difference,
 * negative fields borrowing from the next larger one, a day borrowing the
 * length of the month of the earlier of a and b; in years, months, days
 * and micros. */
static inline PA_HD bool pa_dt_age(int64_t a, int64_t b, pa_interval *out)
{
    int64_t da = pa_dt_floordiv(a, PA_USEC_PER_DAY), db = pa_dt_floordiv(b, PA_USEC_PER_DAY);
    int64_t ta = a - da * PA_USEC_PER_DAY, tb = b - db * PA_USEC_PER_DAY;
    int64_t ya, ma, dda, yb, mb, ddb;
    pa_dt_civil(da, &ya, &ma, &dda);
    pa_dt_civil(db, &yb, &mb, &ddb);
    const bool flip = a < b;
    const int64_t s = flip ? -1 : 1;
    /* Time of day as one field: the hours, minutes, seconds and micros
     * borrow among themselves exactly as the sum does. */
    int64_t t = s * (ta - tb), d = s * (dda - ddb), mo = s * (ma - mb), y = s * (ya - yb);
    if (t < 0) {
        t += PA_USEC_PER_DAY;
        d--;
    }
    if (d < 0) {
        d += flip ? pa_dt_month_days(ya, ma) : pa_dt_month_days(yb, mb);
        mo--;
    }
    if (mo < 0) {
        mo += 12;
        y--;
    }
    __int128 months = ((__int128)y * 12 + mo) * s;
    if (months < INT32_MIN || months > INT32_MAX)
        return false;
    out->months = (int32_t)months;
    out->days = (int32_t)(d * s);
    out->micros = t * s;
    return true;
}

/* TIME us + micros, wrapped to one day (time_pl_interval). */
static inline PA_HD int64_t pa_dt_time_add(int64_t us, int64_t micros)
{
    return pa_dt_floormod(pa_dt_floormod(us, PA_USEC_PER_DAY) + pa_dt_floormod(micros, PA_USEC_PER_DAY),
                          PA_USEC_PER_DAY);
}

#endif /* PISTA_CORE_DATETIME_H */
