/*
 * test_kn_scalar.c - the per-value functions of kn_scalar.h against
 * references: the core formatters and snprintf, the evaluator's former
 * LIKE and SUBSTRING (copied here), a backtracking LIKE, the core date
 * functions, GCC's overflow builtins for the portable arithmetic, and
 * the evaluator's snprintf / strtod DOUBLE conversions for kn_scalar_f64.h.
 */
#define _GNU_SOURCE   /* memmem in the former LIKE */
#include "kn_testutil.h"

#include "kernels/kn_expr_int.h"
#include "kernels/kn_scalar_f64.h"

#include <errno.h>
#include <math.h>

typedef unsigned __int128 u128;
#define I128_MAX ((__int128)(((u128)1 << 127) - 1))
#define I128_MIN (-I128_MAX - 1)

static kn__str sv(const char *s)
{
    kn__str r = {s, (int64_t)strlen(s)};
    return r;
}

static __int128 rand_i128(rng *r)
{
    /* Random magnitudes of every bit length, not just huge ones. */
    u128 v = ((u128)rng_next(r) << 64) | rng_next(r);
    v >>= rng_below(r, 128);
    return (rng_next(r) & 1) ? -(__int128)v : (__int128)v;
}

/* ------------------------------------------------------------ formatting */

/* Values near every power of ten and the extremes, with both signs. */
static int i128_edges(__int128 *v)
{
    int n = 0;
    for (int k = 0; k <= 38; k++) {
        const __int128 p = kn__pow10_128[k], c[] = {p - 1, p, p + 1, p / 2};
        for (int j = 0; j < 4; j++) {
            v[n++] = c[j];
            v[n++] = -c[j];
        }
    }
    v[n++] = I128_MAX;
    v[n++] = I128_MIN;
    v[n++] = I128_MIN + 1;
    v[n++] = INT64_MAX;
    v[n++] = INT64_MIN;
    v[n++] = (__int128)INT64_MIN + 1;
    v[n++] = -5;   /* -0.05 at scale 2 */
    return n;
}

static void test_format_numbers(void **state)
{
    (void)state;
    char want[128], got[128];
    __int128 v[400];
    int nv = i128_edges(v);
    rng r = {0x9E3779B97F4A7C15ull};
    for (int i = 0; i < 20000; i++) {
        __int128 x = i < nv ? v[i] : rand_i128(&r);
        for (int s = 0; s <= 38; s++) {
            size_t wl = pa_format_decimal128(x, s, s, want, sizeof want);
            int gl = kn__s_format_decimal128(x, s, got, sizeof got);
            assert_string_equal(got, want);
            assert_int_equal(gl, wl);
            if (x >= INT64_MIN && x <= INT64_MAX) {
                wl = pa_format_decimal((int64_t)x, s, s, want, sizeof want);
                gl = kn__s_format_decimal64((int64_t)x, s, got, sizeof got);
                assert_string_equal(got, want);
                assert_int_equal(gl, wl);
            }
        }
        pa_format_decimal128(x, 0, 0, want, sizeof want);
        assert_int_equal(kn__s_format_i128(x, got, sizeof got), strlen(want));
        assert_string_equal(got, want);
        int64_t y = (int64_t)(uint64_t)(u128)x;
        snprintf(want, sizeof want, "%lld", (long long)y);
        assert_int_equal(kn__s_format_i64(y, got, sizeof got), strlen(want));
        assert_string_equal(got, want);
    }
    kn__s_format_decimal64(-5, 2, got, sizeof got);
    assert_string_equal(got, "-0.05");
    kn__s_format_decimal128(0, 3, got, sizeof got);
    assert_string_equal(got, "0.000");
    kn__s_format_decimal128(kn__s_pow10_i128(38) - 1, 38, got, sizeof got);
    assert_string_equal(got, "0.99999999999999999999999999999999999999");
    kn__s_format_decimal128(I128_MIN, 0, got, sizeof got);
    assert_string_equal(got, "-170141183460469231731687303715884105728");
    kn__s_format_i64(INT64_MIN, got, sizeof got);
    assert_string_equal(got, "-9223372036854775808");
}

/* Every cap from 0 to past the length: a prefix, NUL-terminated, and a
 * cap of 0 writes nothing. */
static void test_format_truncation(void **state)
{
    (void)state;
    char full[64], buf[64];
    int n = kn__s_format_decimal128(-123456789, 4, full, sizeof full);
    assert_string_equal(full, "-12345.6789");
    for (int cap = 0; cap <= n + 2; cap++) {
        memset(buf, 'x', sizeof buf);
        int k = kn__s_format_decimal128(-123456789, 4, buf, cap);
        int want = cap == 0 ? 0 : (n < cap - 1 ? n : cap - 1);
        assert_int_equal(k, want);
        if (cap == 0) {
            assert_int_equal(buf[0], 'x');
            continue;
        }
        assert_memory_equal(buf, full, (size_t)k);
        assert_int_equal(buf[k], '\0');
        assert_int_equal(buf[k + 1], 'x');
    }
    assert_int_equal(kn__s_format_bool(true, buf, 3), 2);
    assert_string_equal(buf, "tr");
    assert_int_equal(kn__s_format_date(0, buf, 5), 4);
    assert_string_equal(buf, "1970");
    pa_type t = {PA_TYPE_DECIMAL, 15, 2};
    assert_int_equal(kn__s_format_type(t, buf, 9), 8);
    assert_string_equal(buf, "DECIMAL(");
}

static void test_format_date_bool_type(void **state)
{
    (void)state;
    char want[64], got[64];
    /* A dense range around 1970, then steps across all of int32. */
    for (int64_t d = -1000000; d <= INT32_MAX; d += d < 1000000 ? 1 : 4099) {
        int y, m, dd;
        pa_date_to_ymd((int32_t)d, &y, &m, &dd);
        snprintf(want, sizeof want, "%04d-%02d-%02d", y, m, dd);
        assert_int_equal(kn__s_format_date((int32_t)d, got, sizeof got), strlen(want));
        assert_string_equal(got, want);
        pa_date_to_ymd((int32_t)-d - 1, &y, &m, &dd);
        snprintf(want, sizeof want, "%04d-%02d-%02d", y, m, dd);
        kn__s_format_date((int32_t)-d - 1, got, sizeof got);
        assert_string_equal(got, want);
    }
    kn__s_format_date(INT32_MIN, got, sizeof got);
    assert_string_equal(got, "-5877641-06-23");
    kn__s_format_date(-719528 - 365 * 5 - 1, got, sizeof got);   /* year -5 */
    assert_string_equal(got, "-005-01-01");
    kn__s_format_bool(true, got, sizeof got);
    assert_string_equal(got, "true");
    assert_int_equal(kn__s_format_bool(false, got, sizeof got), 5);
    assert_string_equal(got, "false");
    for (int id = 0; id <= PA_TYPE__COUNT + 3; id++)
        for (int p = 0; p < 256; p += id == PA_TYPE_DECIMAL ? 1 : 37)
            for (int s = 0; s < 256; s += id == PA_TYPE_DECIMAL ? 1 : 51) {
                pa_type t = {(pa_type_id)id, (uint8_t)p, (uint8_t)s};
                pa_type_format(t, want, sizeof want);
                assert_int_equal(kn__s_format_type(t, got, sizeof got), strlen(want));
                assert_string_equal(got, want);
            }
}

/* --------------------------------------------------------------- parsing */

static void test_parse(void **state)
{
    (void)state;
    __int128 v = 42;
    assert_true(kn__s_parse_scaled(sv(" 12.345 "), 2, &v));
    assert_true(v == 1235);
    assert_true(kn__s_parse_scaled(sv("-0.5"), 0, &v));
    assert_true(v == -1);
    assert_true(kn__s_parse_scaled(sv("\t+7\n"), 3, &v));
    assert_true(v == 7000);
    assert_true(kn__s_parse_scaled(sv("0.0049"), 2, &v));
    assert_true(v == 0);
    assert_true(kn__s_parse_scaled(sv(".5"), 0, &v));
    assert_true(v == 1);
    assert_true(kn__s_parse_scaled(sv("99999999999999999999999999999999999999"), 0, &v));
    assert_true(v == kn__s_pow10_i128(38) - 1);
    assert_true(kn__s_parse_scaled(sv("00000000000000000000000000000000000000001"), 0, &v));
    assert_true(v == 1);
    v = 42;
    const char *bad[] = {"abc", "", "  ", "1.2.3", "-", ".", "1e5", "1 2", "+-1", "12a",
                         "999999999999999999999999999999999999999", "1", NULL};
    for (int i = 0; bad[i]; i++) {
        int scale = strcmp(bad[i], "1") == 0 ? 39 : 2;   /* 10^39 does not fit */
        assert_false(kn__s_parse_scaled(sv(bad[i]), scale, &v));
        assert_true(v == 42);   /* unchanged */
    }
    /* Round trip through the formatter. */
    rng r = {12345};
    char buf[64];
    for (int i = 0; i < 20000; i++) {
        __int128 x = rand_i128(&r) % kn__s_pow10_i128(38);
        int s = (int)rng_below(&r, 39);
        kn__s_format_decimal128(x, s, buf, sizeof buf);
        assert_true(kn__s_parse_scaled(sv(buf), s, &v));
        assert_true(v == x);
    }

    int32_t d = 7;
    assert_true(kn__s_parse_date(sv("1992-02-29"), &d));
    assert_int_equal(d, pa_date_from_ymd(1992, 2, 29));
    assert_true(kn__s_parse_date(sv(" 1992-1-2 "), &d));
    assert_int_equal(d, pa_date_from_ymd(1992, 1, 2));
    assert_true(kn__s_parse_date(sv("-0005-03-01"), &d));
    assert_int_equal(d, pa_date_from_ymd(-5, 3, 1));
    d = 7;
    const char *bad_dates[] = {"1993-02-29", "1992-13-01", "1992-00-10", "1992-01-32", "1992-01",
                               "1992--01-01", "", "abc", "1992-01-01x", "5000001-01-01",
                               "1992-01-1234567890", NULL};
    for (int i = 0; bad_dates[i]; i++) {
        assert_false(kn__s_parse_date(sv(bad_dates[i]), &d));
        assert_int_equal(d, 7);
    }
    for (int64_t x = -1800000000; x <= 1800000000; x += 99991)   /* years within +-5,000,000 */ {
        kn__s_format_date((int32_t)x, buf, sizeof buf);
        assert_true(kn__s_parse_date(sv(buf), &d));
        assert_int_equal(d, x);
    }

    uint8_t b = 9;
    const char *yes[] = {"true", "TRUE", " t ", "Yes", "y", "1", NULL};
    const char *no[] = {"false", "F", "no", "N", " 0\t", NULL};
    for (int i = 0; yes[i]; i++) {
        assert_true(kn__s_parse_bool(sv(yes[i]), &b));
        assert_int_equal(b, 1);
    }
    for (int i = 0; no[i]; i++) {
        assert_true(kn__s_parse_bool(sv(no[i]), &b));
        assert_int_equal(b, 0);
    }
    const char *nb[] = {"", "tru", "truee", "2", "yess", "on", "t r", NULL};
    for (int i = 0; nb[i]; i++)
        assert_false(kn__s_parse_bool(sv(nb[i]), &b));
    kn__str tn = {"t\0", 2};   /* an embedded NUL is not the end */
    assert_false(kn__s_parse_bool(tn, &b));
    kn__str sp = kn__s_trim(sv(" \t\n\v\f\rx \t\n\v\f\r"));
    assert_int_equal(sp.len, 1);
    assert_int_equal(sp.p[0], 'x');
}

/* ------------------------------------------------------ LIKE, SUBSTRING */

/* The evaluator's LIKE before kn_scalar.h, with memchr and memmem. */
static int64_t old_seg_at(const char *s, int64_t n, int64_t pos, const char *seg, int64_t k)
{
    for (int64_t j = 0; j < k; j++) {
        if (pos >= n)
            return -1;
        if (seg[j] == '_') {
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

static bool old_like(const char *s, int64_t n, const char *pat, int64_t m)
{
    const char *pct = m ? memchr(pat, '%', (size_t)m) : NULL;
    if (!pct)
        return old_seg_at(s, n, 0, pat, m) == n;
    int64_t k = pct - pat;
    int64_t pos = old_seg_at(s, n, 0, pat, k);
    if (pos < 0)
        return false;
    int64_t pi = k + 1;
    for (;;) {
        const char *next = pi < m ? memchr(pat + pi, '%', (size_t)(m - pi)) : NULL;
        if (!next) {
            const char *seg = pat + pi;
            int64_t sk = m - pi;
            if (sk == 0)
                return true;
            int64_t chars = kn__s_count_chars(seg, sk), start = n;
            while (chars > 0 && start > pos) {
                start--;
                if (((unsigned char)s[start] & 0xC0) != 0x80)
                    chars--;
            }
            return chars == 0 && start >= pos && old_seg_at(s, n, start, seg, sk) == n;
        }
        const char *seg = pat + pi;
        int64_t sk = next - seg;
        if (sk > 0) {
            if (!memchr(seg, '_', (size_t)sk)) {
                const char *f = pos < n ? memmem(s + pos, (size_t)(n - pos), seg, (size_t)sk) : NULL;
                if (!f)
                    return false;
                pos = (f - s) + sk;
            } else {
                int64_t end = -1;
                for (int64_t p = pos; p < n; p += kn__s_u8len((unsigned char)s[p]))
                    if ((end = old_seg_at(s, n, p, seg, sk)) >= 0)
                        break;
                if (end < 0)
                    return false;
                pos = end;
            }
        }
        pi = next - pat + 1;
    }
}

/* LIKE by backtracking over code points (valid UTF-8 only). */
static bool bt_like(const char *s, int64_t n, const char *p, int64_t m)
{
    if (m == 0)
        return n == 0;
    if (p[0] == '%') {
        for (int64_t i = 0;; i += kn__s_u8len((unsigned char)s[i])) {
            if (bt_like(s + i, n - i, p + 1, m - 1))
                return true;
            if (i >= n)
                return false;
        }
    }
    if (n == 0)
        return false;
    if (p[0] == '_') {
        int64_t l = kn__s_u8len((unsigned char)s[0]);
        return l <= n && bt_like(s + l, n - l, p + 1, m - 1);
    }
    return p[0] == s[0] && bt_like(s + 1, n - 1, p + 1, m - 1);
}

static bool like(const char *s, const char *p) { return kn__s_like(s, (int64_t)strlen(s), p, (int64_t)strlen(p)); }

static void test_like(void **state)
{
    (void)state;
    static const struct { const char *s, *p; bool want; } cases[] = {
        {"abc", "abc", true}, {"abc", "ab", false}, {"abc", "a%", true}, {"abc", "%c", true},
        {"abc", "%b%", true}, {"abc", "a_c", true}, {"abc", "a__", true}, {"abc", "a___", false},
        {"", "", true}, {"", "%", true}, {"", "_", false}, {"a", "", false}, {"abc", "%%", true},
        {"héllo", "h_llo", true}, {"héllo", "h__llo", false}, {"é", "_", true}, {"é", "__", false},
        {"€", "_", true}, {"a€b", "a_b", true}, {"aéb", "a%b", true}, {"aXbXc", "a%b%c", true},
        {"abab", "%ab", true}, {"aab", "a%ab", true}, {"ab", "a%ab", false}, {"a", "a%a", false},
        {"special requests here", "%special%requests%", true},
        {"requests special", "%special%requests%", false},
        {"xay", "%a_%", true}, {"xa", "%a_%", false}, {"ab", "_%_", true}, {"a", "_%_", false},
        {"aaa", "%a%a%a%", true}, {"aa", "%a%a%a%", false}, {"abcabc", "%b_a%", true},
        {"PROMO BURNISHED", "PROMO%", true}, {"xéyé", "%é_é", true}, {"xéyé", "%_é_é", true},
        {"xéyé", "%__é_é", false}, {"Customer xx Complaints", "%Customer%Complaints%", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (like(cases[i].s, cases[i].p) != cases[i].want)
            fail_msg("'%s' LIKE '%s' should be %d", cases[i].s, cases[i].p, cases[i].want);
        assert_int_equal(bt_like(cases[i].s, (int64_t)strlen(cases[i].s), cases[i].p, (int64_t)strlen(cases[i].p)),
                         cases[i].want);
    }
    /* Random strings and patterns over a small alphabet of 1- to 3-byte
     * characters: against the backtracking matcher and the former code. */
    static const char *const sa[] = {"a", "b", "é", "€"}, *const pa[] = {"a", "b", "é", "%", "_", "€"};
    rng r = {777};
    char s[64], p[64];
    for (int it = 0; it < 300000; it++) {
        int sl = 0, pl = 0, ns = (int)rng_below(&r, 9), np = (int)rng_below(&r, 7);
        for (int i = 0; i < ns; i++) {
            const char *c = sa[rng_below(&r, 4)];
            memcpy(s + sl, c, strlen(c));
            sl += (int)strlen(c);
        }
        for (int i = 0; i < np; i++) {
            const char *c = pa[rng_below(&r, 6)];
            memcpy(p + pl, c, strlen(c));
            pl += (int)strlen(c);
        }
        bool got = kn__s_like(s, sl, p, pl);
        if (got != bt_like(s, sl, p, pl) || got != old_like(s, sl, p, pl))
            fail_msg("'%.*s' LIKE '%.*s': got %d", sl, s, pl, p, got);
        /* And arbitrary bytes (cut characters) against the former code. */
        int cut = sl ? (int)rng_below(&r, (uint64_t)sl) : 0;
        assert_int_equal(kn__s_like(s, cut, p, pl), old_like(s, cut, p, pl));
    }
}

/* The evaluator's SUBSTRING before kn_scalar.h. */
static kn__str old_substr(kn__str s, int64_t from, int64_t len, bool has_len)
{
    const int64_t BIG = (int64_t)1 << 40;
    kn__str r = {s.p, 0};
    if (!has_len)
        len = BIG;
    from = from < -BIG ? -BIG : from > BIG ? BIG : from;
    len = len < -BIG ? -BIG : len > BIG ? BIG : len;
    if (from > 0 && len >= 0) {
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

static void check_substr(const char *s, int64_t from, int64_t len, bool has_len, const char *want)
{
    kn__str r = kn__s_substr(sv(s), from, len, has_len);
    if (r.len != (int64_t)strlen(want) || memcmp(r.p, want, strlen(want)) != 0)
        fail_msg("SUBSTRING('%s', %lld, %lld/%d) = '%.*s', want '%s'", s, (long long)from, (long long)len,
                 has_len, (int)r.len, r.p, want);
}

static void test_substr(void **state)
{
    (void)state;
    check_substr("hello", 2, 3, true, "ell");
    check_substr("hello", 0, 2, true, "h");
    check_substr("hello", 0, 0, false, "hello");
    check_substr("hello", -3, 2, true, "ll");
    check_substr("hello", -3, 0, false, "llo");
    check_substr("hello", 3, -2, true, "he");
    check_substr("hello", 2, -1, true, "h");
    check_substr("hello", 10, 2, true, "");
    check_substr("hello", 1, 0, true, "");
    check_substr("hello", -10, 3, true, "");
    check_substr("hello", -10, 7, true, "he");
    check_substr("hello", INT64_MIN, INT64_MAX, true, "hello");
    check_substr("hello", INT64_MAX, 1, true, "");
    check_substr("hello", 1, INT64_MIN, true, "");
    check_substr("hello", INT64_MIN, 0, false, "hello");
    check_substr("héllo", 2, 2, true, "él");
    check_substr("héllo", -4, 2, true, "él");
    check_substr("h€é", 2, 0, false, "€é");
    check_substr("", 1, 5, true, "");
    check_substr("", -1, 5, true, "");
    rng r = {99};
    const char *strs[] = {"", "a", "hello", "héllo wörld €", "€€€"};
    const int64_t big = (int64_t)1 << 40;
    for (int i = 0; i < 200000; i++) {
        kn__str s = sv(strs[rng_below(&r, 5)]);
        int64_t f = (int64_t)rng_below(&r, 31) - 15, l = (int64_t)rng_below(&r, 31) - 15;
        if (rng_below(&r, 8) == 0)
            f = (int64_t)rng_next(&r);
        if (rng_below(&r, 8) == 0)
            l = rng_below(&r, 2) ? big + (int64_t)rng_below(&r, 3) - 1 : -big + (int64_t)rng_below(&r, 3) - 1;
        bool hl = rng_below(&r, 4) != 0;
        kn__str a = kn__s_substr(s, f, l, hl), b = old_substr(s, f, l, hl);
        assert_ptr_equal(a.p, b.p);
        assert_int_equal(a.len, b.len);
    }
}

/* ------------------------------------------------------------------ dates */

static void test_dates(void **state)
{
    (void)state;
    int64_t prev = INT64_MIN;
    for (int64_t d = INT32_MIN; d <= INT32_MAX; d += (d > -800000 && d < 800000) ? 1 : 997) {
        int64_t y, m, dd;
        int py, pm, pd;
        kn__s_civil(d, &y, &m, &dd);
        pa_date_to_ymd((int32_t)d, &py, &pm, &pd);
        if (y != py || m != pm || dd != pd)
            fail_msg("civil(%lld) = %lld-%lld-%lld, core says %d-%d-%d", (long long)d, (long long)y,
                     (long long)m, (long long)dd, py, pm, pd);
        assert_true(m >= 1 && m <= 12 && dd >= 1 && dd <= kn__s_month_days(y, m));
        assert_int_equal(kn__s_days_from_civil(y, m, dd), d);
        if (y >= -5000000 && y <= 5000000)
            assert_int_equal(pa_date_from_ymd((int)y, (int)m, (int)dd), d);
        assert_true(d > prev);
        prev = d;
    }
    static const int md[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const int64_t years[] = {1900, 1992, 1993, 2000, 2100, 2400, 0, -1, -4, -100, -400, 5000000};
    for (size_t i = 0; i < sizeof years / sizeof years[0]; i++) {
        int64_t y = years[i];
        bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        for (int m = 1; m <= 12; m++)
            assert_int_equal(kn__s_month_days(y, m), md[m - 1] + (m == 2 && leap));
    }
    assert_int_equal(kn__s_month_days(1900, 2), 28);
    assert_int_equal(kn__s_month_days(2000, 2), 29);

    int32_t out;
    assert_true(kn__s_add_months(pa_date_from_ymd(1992, 1, 31), 1, &out));
    assert_int_equal(out, pa_date_from_ymd(1992, 2, 29));
    assert_true(kn__s_add_months(pa_date_from_ymd(1993, 1, 31), 1, &out));
    assert_int_equal(out, pa_date_from_ymd(1993, 2, 28));
    assert_true(kn__s_add_months(pa_date_from_ymd(2000, 3, 31), -1, &out));
    assert_int_equal(out, pa_date_from_ymd(2000, 2, 29));
    assert_true(kn__s_add_months(pa_date_from_ymd(1995, 3, 15), -15, &out));
    assert_int_equal(out, pa_date_from_ymd(1993, 12, 15));
    assert_true(kn__s_add_months(pa_date_from_ymd(1, 1, 1), -13, &out));
    assert_int_equal(out, pa_date_from_ymd(-1, 12, 1));
    assert_true(kn__s_add_months(pa_date_from_ymd(1998, 12, 1), 0, &out));
    assert_int_equal(out, pa_date_from_ymd(1998, 12, 1));
    assert_false(kn__s_add_months(INT32_MAX, 1, &out));
    assert_false(kn__s_add_months(INT32_MIN, -1, &out));
    assert_false(kn__s_add_months(0, INT32_MAX, &out));
    assert_false(kn__s_add_months(0, INT32_MIN, &out));
    assert_false(kn__s_add_months(0, INT64_MAX, &out));
    assert_true(kn__s_add_months(INT32_MAX - 40, -1, &out));
    assert_true(kn__s_add_months(0, 12 * 5000000, &out));
    assert_int_equal(out, pa_date_from_ymd(5001970, 1, 1));
}

/* ------------------------------------------------------------ arithmetic */

static void check_i64(int64_t a, int64_t b)
{
    int64_t rs, rb;
    bool os, ob;
    os = kn__s_add_i64_soft(a, b, &rs), ob = __builtin_add_overflow(a, b, &rb);
    if (os != ob || rs != rb)
        fail_msg("add %lld %lld", (long long)a, (long long)b);
    os = kn__s_sub_i64_soft(a, b, &rs), ob = __builtin_sub_overflow(a, b, &rb);
    if (os != ob || rs != rb)
        fail_msg("sub %lld %lld", (long long)a, (long long)b);
    os = kn__s_mul_i64_soft(a, b, &rs), ob = __builtin_mul_overflow(a, b, &rb);
    if (os != ob || rs != rb)
        fail_msg("mul %lld %lld", (long long)a, (long long)b);
    assert_int_equal(kn__s_mul_i64(a, b, &rs), ob);
    assert_int_equal(kn__s_add_i64(a, b, &rs), __builtin_add_overflow(a, b, &rb));
    assert_int_equal(kn__s_sub_i64(a, b, &rs), __builtin_sub_overflow(a, b, &rb));
}

static void check_i128(__int128 a, __int128 b)
{
    __int128 rs, rb;
    bool os, ob;
    char x[48], y[48];
    os = kn__s_add_i128_soft(a, b, &rs), ob = __builtin_add_overflow(a, b, &rb);
    if (os != ob || rs != rb)
        goto bad;
    os = kn__s_sub_i128_soft(a, b, &rs), ob = __builtin_sub_overflow(a, b, &rb);
    if (os != ob || rs != rb)
        goto bad;
    os = kn__s_mul_i128_soft(a, b, &rs), ob = __builtin_mul_overflow(a, b, &rb);
    if (os != ob || rs != rb)
        goto bad;
    assert_int_equal(kn__s_mul_i128(a, b, &rs), ob);
    assert_int_equal(kn__s_add_i128(a, b, &rs), __builtin_add_overflow(a, b, &rb));
    assert_int_equal(kn__s_sub_i128(a, b, &rs), __builtin_sub_overflow(a, b, &rb));
    return;
bad:
    kn__s_format_i128(a, x, sizeof x);
    kn__s_format_i128(b, y, sizeof y);
    fail_msg("%s op %s: soft %d, builtin %d", x, y, os, ob);
}

static void test_overflow(void **state)
{
    (void)state;
    const int64_t e64[] = {0, 1, -1, 2, -2, 3, -3, 10, INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1,
                           INT64_MAX / 2, INT64_MIN / 2, 1000000000000000000LL, -1000000000000000000LL,
                           3037000499LL, 3037000500LL, -3037000499LL, -3037000500LL, 4294967296LL,
                           -4294967296LL, 4294967295LL, 1LL << 62, -(1LL << 62)};
    const int n64 = (int)(sizeof e64 / sizeof e64[0]);
    for (int i = 0; i < n64; i++)
        for (int j = 0; j < n64; j++)
            check_i64(e64[i], e64[j]);
    __int128 e128[400];
    int n128 = i128_edges(e128);
    const u128 two64 = (u128)1 << 64;
    const __int128 more[] = {(__int128)two64, -(__int128)two64, (__int128)(two64 - 1), -(__int128)(two64 - 1),
                             (__int128)two64 + 1, (__int128)1 << 63, -((__int128)1 << 63),
                             (__int128)13043817825332782212ull, (__int128)13043817825332782213ull,
                             -(__int128)13043817825332782212ull, -(__int128)13043817825332782213ull,
                             I128_MAX / 3, I128_MIN / 3, (__int128)1 << 126, -((__int128)1 << 126),
                             (__int128)1 << 64 << 62, ((__int128)1 << 100) + 12345};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        e128[n128++] = more[i];
    for (int i = 0; i < n128; i++)
        for (int j = 0; j < n128; j++)
            check_i128(e128[i], e128[j]);
    rng r = {31337};
    for (int i = 0; i < 1000000; i++) {
        __int128 a = rand_i128(&r), b = rand_i128(&r);
        check_i128(a, b);
        check_i64((int64_t)(uint64_t)(u128)a, (int64_t)(uint64_t)(u128)b);
        check_i64((int64_t)(uint64_t)(u128)a >> (rng_next(&r) & 63), (int64_t)(uint64_t)(u128)b >> (rng_next(&r) & 63));
    }
    for (int k = 0; k <= 38; k++) {
        assert_true(kn__s_pow10_i128(k) == kn__pow10_128[k]);
        if (k <= 18)
            assert_int_equal(kn__s_pow10_i64(k), kn__pow10_64[k]);
    }
}

/* ------------------------------------------------------ DOUBLE <-> text */

static double from_bits(uint64_t b)
{
    double d;
    memcpy(&d, &b, 8);
    return d;
}

/* The evaluator's former DOUBLE text (snprintf and strtod): the shortest
 * %.*e that reads back, laid out as Python's repr. */
static int ref_format(double x, char *buf, size_t cap)
{
    if (isnan(x))
        return snprintf(buf, cap, "nan");
    if (isinf(x))
        return snprintf(buf, cap, x < 0 ? "-inf" : "inf");
    if (x == 0)
        return snprintf(buf, cap, signbit(x) ? "-0.0" : "0.0");
    char e[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, x);
        if (strtod(e, NULL) == x)
            break;
    }
    char digits[24];
    int nd = 0;
    const char *p = e;
    bool neg = *p == '-';
    if (neg)
        p++;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            digits[nd++] = *p;
    int exp10 = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    char out[64];
    int o = 0;
    if (neg)
        out[o++] = '-';
    if (exp10 >= 16 || exp10 < -4) {
        out[o++] = digits[0];
        if (nd > 1)
            out[o++] = '.';
        for (int i = 1; i < nd; i++)
            out[o++] = digits[i];
        o += snprintf(out + o, sizeof out - (size_t)o, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
    } else if (exp10 < 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -exp10 - 1; i++)
            out[o++] = '0';
        for (int i = 0; i < nd; i++)
            out[o++] = digits[i];
    } else {
        for (int i = 0; i <= exp10; i++)
            out[o++] = i < nd ? digits[i] : '0';
        out[o++] = '.';
        for (int i = exp10 + 1; i < nd; i++)
            out[o++] = digits[i];
        if (nd <= exp10 + 1)
            out[o++] = '0';
    }
    out[o] = 0;
    return snprintf(buf, cap, "%s", out);
}

static void check_format(double x)
{
    char want[64], got[64];
    ref_format(x, want, sizeof want);
    kn__s_format_double(x, got, sizeof got);
    if (strcmp(want, got) != 0)
        fail_msg("format of %a: want %s, got %s", x, want, got);
}

/* strtod over the whole trimmed text: the evaluator's former parse_double. */
static bool ref_parse(const char *s, double *out)
{
    kn__str v = kn__s_trim(sv(s));
    char buf[128];
    if (v.len == 0 || v.len >= (int64_t)sizeof buf)
        return false;
    memcpy(buf, v.p, (size_t)v.len);
    buf[v.len] = 0;
    char *end;
    *out = strtod(buf, &end);
    return *end == 0;
}

static void check_parse(const char *s)
{
    double want = 0, got = 0;
    bool ok_want = ref_parse(s, &want), ok_got = kn__s_parse_double(sv(s), &got);
    if (ok_want != ok_got)
        fail_msg("parse of '%s': strtod %s, ours %s", s, ok_want ? "accepts" : "refuses", ok_got ? "accepts" : "refuses");
    if (!ok_want)
        return;
    uint64_t a, b;
    memcpy(&a, &want, 8);
    memcpy(&b, &got, 8);
    if (isnan(want) ? !isnan(got) || signbit(want) != signbit(got) : a != b)
        fail_msg("parse of '%s': strtod %a, ours %a", s, want, got);
}

static void test_double_format(void **state)
{
    (void)state;
    const double edge[] = {0.1, 0.2, 0.3, 1.0 / 3, 100.0, 1e15, 1e16, 1e17, 1.5e-5, 1e-4, 9.999e-5, 123456789.125,
                           5e-324, 2.2250738585072014e-308, 2.2250738585072009e-308, 1.7976931348623157e308,
                           9007199254740993.0, 4.35, 0.30000000000000004, 1e23, 8.41e21, 5e-310, -0.0, 0.0,
                           -1.5, HUGE_VAL, -HUGE_VAL, NAN, 2.5, 1e300 * 10};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        check_format(edge[i]);
    for (int e = -1074; e <= 1023; e++) {   /* every power of two and its neighbours */
        double x = ldexp(1.0, e);
        check_format(x);
        check_format(nextafter(x, 0));
        check_format(nextafter(x, HUGE_VAL));
    }
    for (int e = -323; e <= 308; e++) {   /* powers of ten as written, and near them */
        char b[32];
        snprintf(b, sizeof b, "1e%d", e);
        double x = strtod(b, NULL);
        check_format(x);
        check_format(nextafter(x, 0));
        check_format(nextafter(x, HUGE_VAL));
    }
    rng r = {0xD1B54A32D192ED03ull};
    for (int i = 0; i < 40000; i++) {
        uint64_t b = rng_next(&r);
        double x = from_bits(b);
        if (!isfinite(x))
            continue;
        check_format(x);
    }
    for (int i = 0; i < 20000; i++) {   /* short decimals: the common case */
        char b[40];
        snprintf(b, sizeof b, "%llu.%llue%d", (unsigned long long)rng_below(&r, 100000),
                 (unsigned long long)rng_below(&r, 1000), (int)rng_below(&r, 40) - 20);
        check_format(strtod(b, NULL));
    }
}

static void test_double_parse(void **state)
{
    (void)state;
    const char *cases[] = {
        "0", "-0", "+0", "1", "-1", "1.5", ".5", "5.", "1e10", "1E+10", "1e-10", " 1.25 ", "\t-2.5e3\n", "1e", "1e+",
        "e5", ".", "", " ", "-", "+", "1.2.3", "1,5", "1e5x", "x", "inf", "-inf", "INF", "Infinity", "-infinity",
        "infinit", "infx", "nan", "NaN", "-nan", "nan()", "nan(123)", "nan(abc_1)", "nan(", "nan(1", "nanx",
        "0x10", "0x1p3", "0X1.8P-2", "0x.8p1", "-0x1.fffffffffffffp1023", "0x1p-1074", "0x1p-1075", "0x1.8p-1075",
        "0x", "0x.", "0x.p1", "0xg", "0x1p", "0x1p+", "1e400", "-1e400", "1e-400", "2.4703282292062327e-324",
        "2.4703282292062328e-324", "4.9406564584124654e-324", "2.2250738585072011e-308", "1.7976931348623158e308",
        "1.7976931348623159e308", "9007199254740993", "9007199254740995", "18446744073709551615",
        "0.30000000000000004", "123456789012345678901234567890", "000000000000000000001", "0.0000000000000000000001e22",
        "1e-1000000", "1e1000000", "1e99999999999999999999", "123456789e-99999999999999999999",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_parse(cases[i]);
    /* 127 characters are read; 128 are refused (the cpu path's buffer). */
    char longs[200];
    memset(longs, '1', sizeof longs);
    for (int n = 120; n <= 130; n++) {
        longs[n] = 0;
        check_parse(longs);
        longs[n] = '1';
    }
    rng r = {424242};
    char b[160];
    for (int i = 0; i < 20000; i++) {   /* every double's own text reads back */
        double x = from_bits(rng_next(&r));
        if (!isfinite(x))
            continue;
        kn__s_format_double(x, b, sizeof b);
        check_parse(b);
        snprintf(b, sizeof b, "%.17g", x);
        check_parse(b);
        snprintf(b, sizeof b, "%.25e", x);
        check_parse(b);
        snprintf(b, sizeof b, "%a", x);
        check_parse(b);
    }
    for (int i = 0; i < 40000; i++) {   /* random digit strings, exponents, near-halfway integers */
        int nd = 1 + (int)rng_below(&r, 40), k = 0;
        for (int j = 0; j < nd; j++)
            b[k++] = (char)('0' + rng_below(&r, 10));
        if (rng_below(&r, 2)) {
            int at = (int)rng_below(&r, (uint64_t)k + 1);
            memmove(b + at + 1, b + at, (size_t)(k - at));
            b[at] = '.';
            k++;
        }
        k += snprintf(b + k, sizeof b - (size_t)k, "e%d", (int)rng_below(&r, 700) - 350);
        b[k] = 0;
        check_parse(b);
        uint64_t big = (1ull << 53) + rng_below(&r, 1ull << 40) * 2 + 1;   /* odd: halfway between doubles */
        snprintf(b, sizeof b, "%llu", (unsigned long long)big);
        check_parse(b);
    }
}

/* REAL: kn__s_format_real writes the fewest significant digits that
 * strtof reads back as the same float (the count found by trying 1..9
 * digits with snprintf), and kn__s_parse_real rounds text to the nearest
 * float as strtof does, also where rounding to a double first would not
 * (text just off a point halfway between two floats). */
static void check_real_format(float f)
{
    char b[64];
    int n = kn__s_format_real((double)f, b, sizeof b);
    assert_true(n > 0 && n < (int)sizeof b);
    if (isnan(f) || isinf(f) || f == 0)
        return;
    float back = strtof(b, NULL);
    if (back != f)
        fail_msg("REAL %a written '%s' reads back as %a", (double)f, b, (double)back);
    int want = 0;
    for (int p = 1; p <= 9 && !want; p++) {
        char t[64];
        snprintf(t, sizeof t, "%.*e", p - 1, (double)f);
        if (strtof(t, NULL) == f)
            want = p;
    }
    int digits = 0, lead = 1;   /* significant digits of b: no leading zeros, no trailing ".0" zeros */
    char sig[64];
    for (const char *c = b; *c && *c != 'e'; c++) {
        if (*c < '0' || *c > '9')
            continue;
        if (lead && *c == '0')
            continue;
        lead = 0;
        sig[digits++] = *c;
    }
    while (digits > 1 && sig[digits - 1] == '0')
        digits--;
    if (digits != want)
        fail_msg("REAL %a written '%s': %d significant digits, the fewest are %d", (double)f, b, digits, want);
}

static void check_real_parse(const char *s)
{
    double got = 0;
    char *end;
    errno = 0;
    float want = strtof(s, &end);
    bool ok = kn__s_parse_real(sv(s), &got);
    if (*end || end == s || isinf(want)) {   /* malformed or past the float range: refused (inf itself excepted) */
        if (ok && !isinf(got))
            fail_msg("REAL parse of '%s': accepted as %a, strtof refuses or overflows", s, got);
        return;
    }
    if (!ok)
        fail_msg("REAL parse of '%s': refused, strtof gives %a", s, (double)want);
    if (isnan(want) ? !isnan(got) : ((float)got != want || got != (double)(float)got))
        fail_msg("REAL parse of '%s': %a, strtof %a", s, got, (double)want);
}

/* The text of BYTEA and UUID values in error messages: PostgreSQL's, cut
 * to the buffer. */
static void test_format_bytes(void **state)
{
    (void)state;
    const uint8_t b[] = {0x00, 0xab, 0x5c, 0xff};
    const uint8_t u[16] = {0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11};
    char buf[64];
    assert_int_equal(kn__s_format_bytes(false, b, 4, buf, sizeof buf), 10);
    assert_string_equal(buf, "\\x00ab5cff");
    assert_int_equal(kn__s_format_bytes(false, b, 0, buf, sizeof buf), 2);
    assert_string_equal(buf, "\\x");
    assert_int_equal(kn__s_format_bytes(false, b, 4, buf, 6), 5);
    assert_string_equal(buf, "\\x00a");
    assert_int_equal(kn__s_format_bytes(true, u, 16, buf, sizeof buf), 36);
    assert_string_equal(buf, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
    assert_int_equal(kn__s_format_bytes(true, u, 16, buf, 10), 9);   /* cut: as BYTEA text */
    assert_string_equal(buf, "\\xa0eebc9");
    assert_int_equal(kn__s_format_bytes(true, b, 4, buf, sizeof buf), 10);   /* not 16 bytes */
    assert_int_equal(kn__s_format_bytes(false, b, 4, buf, 0), 0);
}

static void test_real(void **state)
{
    (void)state;
    const float edge[] = {0.1f, 0.2f, 0.3f, 1.0f / 3, 100.0f, 1e15f, 1e16f, 1e17f, 3.4028235e38f, 1.17549435e-38f,
                          1e-45f, 1.5e-45f, 16777216.0f, 16777218.0f, 2482547.75f, 487061184.0f, -2.5f, 1e10f};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        check_real_format(edge[i]);
    for (int e = -149; e <= 127; e++) {
        float x = ldexpf(1.0f, e);
        check_real_format(x);
        check_real_format(nextafterf(x, 0));
        check_real_format(nextafterf(x, HUGE_VALF));
    }
    rng r = {0x5EED5EEDull};
    char b[96];
    for (int i = 0; i < 40000; i++) {
        uint32_t bits = (uint32_t)rng_next(&r);
        float f;
        memcpy(&f, &bits, 4);
        if (!isfinite(f))
            continue;
        check_real_format(f);
        kn__s_format_real((double)f, b, sizeof b);
        check_real_parse(b);
        /* Just off the point halfway to the next float up: exact text of
         * the midpoint (a double holds it), then a digit past it either way. */
        float up = nextafterf(f, HUGE_VALF);
        if (!isfinite(up))
            continue;
        double mid = ((double)f + (double)up) / 2;
        int k = snprintf(b, sizeof b, "%.60e", mid);
        char *e = strchr(b, 'e');
        char ex[16];
        snprintf(ex, sizeof ex, "%s", e);
        snprintf(e, sizeof b - (size_t)(e - b), "%s", ex);   /* (unchanged: the midpoint itself) */
        check_real_parse(b);
        (void)k;
        memmove(e + 1, e, strlen(e) + 1);
        *e = '1';   /* slightly above the midpoint */
        check_real_parse(b);
        snprintf(b, sizeof b, "%.60e", mid);
        e = strchr(b, 'e');
        char *last = e - 1;   /* slightly below: lower the last nonzero digit, append 9s */
        while (*last == '0')
            last--;
        if (*last >= '1' && *last <= '9' && last[-1] != '.') {
            (*last)--;
            memmove(e + 3, e, strlen(e) + 1);
            e[0] = e[1] = e[2] = '9';
            check_real_parse(b);
        }
    }
    const char *cases[] = {"3.4028235e38", "3.4028236e38", "3.5e38", "1e39", "-1e39", "1e-46", "7e-46", "8e-46",
                           "1.4e-45", "inf", "-Infinity", "nan", "0x1p-149", "0x1p-150", "0x1.000001p0", "16777217",
                           "16777219", "0.1", "abc", ""};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_real_parse(cases[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_numbers), cmocka_unit_test(test_format_truncation),
        cmocka_unit_test(test_format_date_bool_type), cmocka_unit_test(test_parse),
        cmocka_unit_test(test_like), cmocka_unit_test(test_substr),
        cmocka_unit_test(test_dates), cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_double_format), cmocka_unit_test(test_double_parse),
        cmocka_unit_test(test_real),
        cmocka_unit_test(test_format_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
