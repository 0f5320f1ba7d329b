/*
 * test_datetime.c - core/datetime.h: the text formats and parsers of the
 * time types (PostgreSQL's; values checked against DuckDB and PostgreSQL),
 * their arithmetic, and format -> parse round trips over random values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "core/datetime.h"

static const char *fmt_ts(int64_t us)
{
    static char buf[PA_DT_TEXT_MAX];
    int n = pa_dt_format_timestamp(us, buf, sizeof buf);
    assert_int_equal(n, (int)strlen(buf));
    return buf;
}

static const char *fmt_iv(int32_t mo, int32_t d, int64_t us)
{
    static char buf[PA_DT_TEXT_MAX];
    pa_interval v = {mo, d, us};
    int n = pa_dt_format_interval(v, buf, sizeof buf);
    assert_int_equal(n, (int)strlen(buf));
    return buf;
}

static void test_format_timestamp(void **state)
{
    (void)state;
    assert_string_equal(fmt_ts(0), "1970-01-01 00:00:00");
    assert_string_equal(fmt_ts(INT64_C(1601553600123000)), "2020-10-01 12:00:00.123");
    assert_string_equal(fmt_ts(-500000), "1969-12-31 23:59:59.5");
    assert_string_equal(fmt_ts(-1), "1969-12-31 23:59:59.999999");
    assert_string_equal(fmt_ts(INT64_C(951827696789000)), "2000-02-29 12:34:56.789");   /* DuckDB epoch_us */
    assert_string_equal(fmt_ts(INT64_C(-62135596800000000)), "0001-01-01 00:00:00");
    assert_string_equal(fmt_ts(INT64_C(253402300799999999)), "9999-12-31 23:59:59.999999");
    assert_string_equal(fmt_ts(INT64_MIN), "-290308-12-21 19:59:05.224192");
    assert_string_equal(fmt_ts(INT64_MAX), "294247-01-10 04:00:54.775807");
    char buf[PA_DT_TEXT_MAX];
    pa_dt_format_timestamptz(INT64_C(1601553600000000), buf, sizeof buf);
    assert_string_equal(buf, "2020-10-01 12:00:00+00");
    pa_dt_format_timestamp_ns(INT64_C(1601553600000000001), buf, sizeof buf);
    assert_string_equal(buf, "2020-10-01 12:00:00.000000001");
    pa_dt_format_timestamp_ns(-10, buf, sizeof buf);
    assert_string_equal(buf, "1969-12-31 23:59:59.99999999");
    pa_dt_format_time(INT64_C(45296789000), buf, sizeof buf);
    assert_string_equal(buf, "12:34:56.789");
    pa_dt_format_time(PA_USEC_PER_DAY, buf, sizeof buf);
    assert_string_equal(buf, "24:00:00");
    pa_dt_format_time(0, buf, sizeof buf);
    assert_string_equal(buf, "00:00:00");
    /* Truncation: the length written, NUL-terminated. */
    assert_int_equal(pa_dt_format_timestamp(0, buf, 5), 4);
    assert_string_equal(buf, "1970");
    assert_int_equal(pa_dt_format_timestamp(0, buf, 0), 0);
}

static void test_format_interval(void **state)
{
    (void)state;
    assert_string_equal(fmt_iv(14, 3, INT64_C(14706000000)), "1 year 2 mons 3 days 04:05:06");
    assert_string_equal(fmt_iv(0, 0, 5500000), "00:00:05.5");
    assert_string_equal(fmt_iv(0, -1, 0), "-1 days");
    assert_string_equal(fmt_iv(-1, 0, INT64_C(3600000000)), "-1 mons +01:00:00");
    assert_string_equal(fmt_iv(0, 394, INT64_C(50400000000)), "394 days 14:00:00");
    assert_string_equal(fmt_iv(0, 0, 0), "00:00:00");
    assert_string_equal(fmt_iv(12, 1, 0), "1 year 1 day");
    assert_string_equal(fmt_iv(-12, 0, 0), "-1 years");
    assert_string_equal(fmt_iv(-13, 2, -1), "-1 years -1 mons +2 days -00:00:00.000001");
    assert_string_equal(fmt_iv(0, 0, INT64_C(360000000000)), "100:00:00");
    assert_string_equal(fmt_iv(INT32_MIN, INT32_MIN, INT64_MIN),
                        "-178956970 years -8 mons -2147483648 days -2562047788:00:54.775808");
    assert_true(strlen(fmt_iv(INT32_MIN, INT32_MIN, INT64_MIN)) < PA_DT_TEXT_MAX);
}

static int64_t ts(const char *s, bool tz)
{
    int64_t v = INT64_C(0x5555);
    assert_true(pa_dt_parse_timestamp(s, (int64_t)strlen(s), tz, &v));
    return v;
}

static bool ts_bad(const char *s)
{
    int64_t v = 7;
    bool ok = pa_dt_parse_timestamp(s, (int64_t)strlen(s), false, &v);
    assert_int_equal(v, 7);   /* unchanged on error */
    return !ok;
}

static void test_parse_timestamp(void **state)
{
    (void)state;
    assert_int_equal(ts("2020-10-01 12:00:00.123", false), INT64_C(1601553600123000));
    assert_int_equal(ts("  2020-10-01T12:00  ", false), INT64_C(1601553600000000));
    assert_int_equal(ts("2020-10-01", false), INT64_C(1601510400000000));
    assert_int_equal(ts("1969-12-31 23:59:59.5", false), -500000);
    assert_int_equal(ts("2000-02-29 12:34:56.789", false), INT64_C(951827696789000));
    assert_int_equal(ts("0001-01-01", false), INT64_C(-62135596800000000));
    assert_int_equal(ts("9999-12-31 23:59:59.999999", false), INT64_C(253402300799999999));
    assert_int_equal(ts("2020-01-01 00:00:00.0000005", false), INT64_C(1577836800000001));   /* half up */
    assert_int_equal(ts("2020-01-01 00:00:00.0000004", false), INT64_C(1577836800000000));
    assert_int_equal(ts("2020-01-01 24:00:00", false), INT64_C(1577923200000000));
    /* Zones: ignored without tz, applied with it. */
    assert_int_equal(ts("2020-01-01 12:00+02", false), INT64_C(1577880000000000));
    assert_int_equal(ts("2020-01-01 12:00+02", true), INT64_C(1577872800000000));
    assert_int_equal(ts("2020-01-01 12:00:00-05:30", true), INT64_C(1577880000000000) + INT64_C(19800000000));
    assert_int_equal(ts("2020-01-01 12:00:00 +0530", true), INT64_C(1577880000000000) - INT64_C(19800000000));
    assert_int_equal(ts("2020-01-01 12:00Z", true), INT64_C(1577880000000000));
    assert_int_equal(ts("2020-01-01 12:00 UTC", true), INT64_C(1577880000000000));
    assert_true(ts_bad(""));
    assert_true(ts_bad("2020-13-01"));
    assert_true(ts_bad("2019-02-29"));
    assert_true(ts_bad("2020-02-30 00:00"));
    assert_true(ts_bad("2020-01-01 25:00"));
    assert_true(ts_bad("2020-01-01 24:00:01"));
    assert_true(ts_bad("2020-01-01 12:60"));
    assert_true(ts_bad("2020-01-01 12:00:60"));
    assert_true(ts_bad("2020-01-01 12"));
    assert_true(ts_bad("2020-01-01 12:00 +99"));
    assert_true(ts_bad("2020-01-01x"));
    assert_true(ts_bad("2020-01-01 12:00:00."));
    assert_true(ts_bad("300000-01-01"));   /* beyond int64 microseconds */

    int64_t ns = 0;
    assert_true(pa_dt_parse_timestamp_ns("2020-10-01 12:00:00.000000001", 29, &ns));
    assert_int_equal(ns, INT64_C(1601553600000000001));
    assert_false(pa_dt_parse_timestamp_ns("2300-01-01", 10, &ns));   /* beyond int64 nanoseconds */
    int64_t t = 0;
    assert_true(pa_dt_parse_time(" 12:34:56.789 ", 14, &t));
    assert_int_equal(t, INT64_C(45296789000));
    assert_true(pa_dt_parse_time("24:00", 5, &t));
    assert_int_equal(t, PA_USEC_PER_DAY);
    assert_false(pa_dt_parse_time("12:34:56 x", 10, &t));
    assert_false(pa_dt_parse_time("1:00", 4, &t));
}

static void iv_is(const char *s, int32_t mo, int32_t d, int64_t us)
{
    pa_interval v = {99, 99, 99};
    if (!pa_dt_parse_interval(s, (int64_t)strlen(s), &v))
        fail_msg("interval '%s' did not parse", s);
    if (v.months != mo || v.days != d || v.micros != us)
        fail_msg("interval '%s': %d %d %lld", s, v.months, v.days, (long long)v.micros);
}

static void test_parse_interval(void **state)
{
    (void)state;
    iv_is("1 year 2 months 3 days 4 hours 5 minutes 6 seconds", 14, 3, INT64_C(14706000000));
    iv_is("1 year 2 mons 3 days 04:05:06", 14, 3, INT64_C(14706000000));
    iv_is("1.5 months", 1, 15, 0);
    iv_is("1.5 days", 0, 1, INT64_C(43200000000));
    iv_is("1.5 years", 18, 0, 0);
    iv_is("0.1 months", 0, 3, 0);
    iv_is("1.1 weeks", 0, 7, INT64_C(60480000000));
    iv_is("1 decade 1 century 1 millennium", 12 * 1110, 0, 0);
    iv_is("2 centuries", 2400, 0, 0);
    iv_is("1.5 hours", 0, 0, INT64_C(5400000000));
    iv_is("10 ms 5 us", 0, 0, 10005);
    iv_is("1.5 MILLISECONDS", 0, 0, 1500);
    iv_is("5", 0, 0, 5000000);
    iv_is("-1.5", 0, 0, -1500000);
    iv_is("1d 2h 3m 4s", 0, 1, INT64_C(7384000000));
    iv_is("1 w", 0, 7, 0);
    iv_is("3 Yrs", 36, 0, 0);
    iv_is("-1 days", 0, -1, 0);
    iv_is("-1 mons +01:00:00", -1, 0, INT64_C(3600000000));
    iv_is("-01:30", 0, 0, -INT64_C(5400000000));
    iv_is("00:00:05.5", 0, 0, 5500000);
    iv_is("100:00:00", 0, 0, INT64_C(360000000000));
    iv_is("1 01:00:00", 0, 1, INT64_C(3600000000));
    iv_is("1 day 2 hours ago", 0, -1, -INT64_C(7200000000));
    iv_is("@ 1 minute", 0, 0, 60000000);
    iv_is("  2 mon  ", 2, 0, 0);
    iv_is("-178956970 years -8 mons -2147483648 days -2562047788:00:54.775808", INT32_MIN, INT32_MIN, INT64_MIN);
    pa_interval v = {7, 7, 7};
    const char *bad[] = {"", "ago", "1 fortnight", "1 day ago 2", "1 day x", "2147483648 days",
                         "178956971 years", "1 day 12:60", "--1 day", ".", "1 2", "9223372036854775807 hours"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (pa_dt_parse_interval(bad[i], (int64_t)strlen(bad[i]), &v))
            fail_msg("interval '%s' parsed", bad[i]);
        assert_int_equal(v.months, 7);
    }
}

static void test_arithmetic(void **state)
{
    (void)state;
    int64_t r;
    /* date '2020-01-31' + interval '1 month' = 2020-02-29 00:00:00 (DuckDB). */
    assert_true(pa_dt_ts_add(ts("2020-01-31", false), 1, 0, 0, &r));
    assert_int_equal(r, ts("2020-02-29", false));
    assert_true(pa_dt_ts_add(ts("2020-01-31 10:00", false), 13, 1, 3600000000, &r));
    assert_int_equal(r, ts("2021-03-01 11:00", false));   /* Feb 28 + 1 day */
    assert_true(pa_dt_ts_add(ts("2020-03-31", false), -1, 0, 0, &r));
    assert_int_equal(r, ts("2020-02-29", false));
    assert_false(pa_dt_ts_add(INT64_MAX - 10, 0, 0, 11, &r));
    assert_false(pa_dt_ts_add(0, INT32_MAX, 0, 0, &r));

    pa_interval iv;
    assert_true(pa_dt_ts_sub(ts("2020-03-01", false), ts("2019-01-31 10:00", false), &iv));
    assert_int_equal(iv.months, 0);
    assert_int_equal(iv.days, 394);
    assert_int_equal(iv.micros, INT64_C(50400000000));
    assert_true(pa_dt_ts_sub(ts("2019-01-31 10:00", false), ts("2020-03-01", false), &iv));
    assert_int_equal(iv.days, -394);
    assert_int_equal(iv.micros, -INT64_C(50400000000));
    assert_false(pa_dt_ts_sub(INT64_MAX, -1, &iv));

    assert_true(pa_dt_age(ts("2020-03-01", false), ts("2019-01-31 10:00", false), &iv));
    assert_int_equal(iv.months, 13);
    assert_int_equal(iv.days, 0);
    assert_int_equal(iv.micros, INT64_C(50400000000));
    assert_true(pa_dt_age(ts("2019-01-31 10:00", false), ts("2020-03-01", false), &iv));
    assert_int_equal(iv.months, -13);   /* PostgreSQL: -1 years -1 mons -14:00:00 */
    assert_int_equal(iv.days, 0);
    assert_int_equal(iv.micros, -INT64_C(50400000000));
    assert_true(pa_dt_age(ts("2020-03-15", false), ts("2020-02-20", false), &iv));
    assert_int_equal(iv.months, 0);
    assert_int_equal(iv.days, 24);   /* borrows February 2020's 29 days */
    assert_true(pa_dt_age(ts("2020-02-20", false), ts("2020-03-15", false), &iv));
    assert_int_equal(iv.months, 0);
    assert_int_equal(iv.days, -24);  /* the earlier one's month again (DuckDB and PostgreSQL: -24 days) */

    pa_interval a = {1, 2, 3}, b = {10, 20, 30};
    assert_true(pa_dt_iv_add(a, b, -1, &iv));
    assert_int_equal(iv.months, -9);
    assert_int_equal(iv.days, -18);
    assert_int_equal(iv.micros, -27);
    pa_interval big = {INT32_MAX, 0, 0};
    assert_false(pa_dt_iv_add(big, a, 1, &iv));
    pa_interval low = {INT32_MIN, 0, 0};
    assert_false(pa_dt_iv_neg(low, &iv));
    assert_true(pa_dt_iv_neg(a, &iv));
    assert_int_equal(iv.micros, -3);

    pa_interval m1 = {1, 0, 0};
    assert_true(pa_dt_iv_mul(m1, 1.5, false, &iv));   /* PostgreSQL: 1 mon 15 days */
    assert_int_equal(iv.months, 1);
    assert_int_equal(iv.days, 15);
    assert_int_equal(iv.micros, 0);
    pa_interval d1 = {0, 1, 0};
    assert_true(pa_dt_iv_mul(d1, 2.0, true, &iv));   /* 12:00:00 */
    assert_int_equal(iv.days, 0);
    assert_int_equal(iv.micros, INT64_C(43200000000));
    pa_interval x = {14, 3, INT64_C(14706000000)};
    assert_true(pa_dt_iv_mul(x, 3.0, true, &iv));   /* PostgreSQL: 4 mons 21 days 01:21:42 */
    assert_int_equal(iv.months, 4);
    assert_int_equal(iv.days, 21);
    assert_int_equal(iv.micros, INT64_C(4902000000));
    assert_false(pa_dt_iv_mul(big, 2.0, false, &iv));

    assert_int_equal(pa_dt_time_add(INT64_C(82800000000), INT64_C(7200000000)), INT64_C(3600000000));
    assert_int_equal(pa_dt_time_add(INT64_C(3600000000), -INT64_C(7200000000)), INT64_C(82800000000));
}

/* xorshift64*: reproducible random values. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}

static void test_round_trips(void **state)
{
    (void)state;
    char buf[PA_DT_TEXT_MAX];
    for (int i = 0; i < 200000; i++) {
        uint64_t r = rnd();
        /* Any int64 in a third of the draws, else years near the common ones. */
        int64_t v = i % 3 == 0 ? (int64_t)r : (int64_t)(r % (UINT64_C(1) << 56)) - (INT64_C(1) << 55);
        if (i % 5 == 0)
            v -= v % 1000000;   /* whole seconds */
        int64_t back = 0;
        int n = pa_dt_format_timestamp(v, buf, sizeof buf);
        if (!pa_dt_parse_timestamp(buf, n, false, &back) || back != v)
            fail_msg("timestamp %lld -> '%s' -> %lld", (long long)v, buf, (long long)back);
        n = pa_dt_format_timestamptz(v, buf, sizeof buf);
        if (!pa_dt_parse_timestamp(buf, n, true, &back) || back != v)
            fail_msg("timestamptz %lld -> '%s' -> %lld", (long long)v, buf, (long long)back);
        n = pa_dt_format_timestamp_ns(v, buf, sizeof buf);
        if (!pa_dt_parse_timestamp_ns(buf, n, &back) || back != v)
            fail_msg("timestamp_ns %lld -> '%s' -> %lld", (long long)v, buf, (long long)back);
        int64_t t = (int64_t)(r % (uint64_t)PA_USEC_PER_DAY);
        n = pa_dt_format_time(t, buf, sizeof buf);
        if (!pa_dt_parse_time(buf, n, &back) || back != t)
            fail_msg("time %lld -> '%s' -> %lld", (long long)t, buf, (long long)back);
        uint64_t r2 = rnd(), r3 = rnd();
        pa_interval iv = {(int32_t)r2, (int32_t)(r2 >> 32), (int64_t)r3}, iv2 = {0, 0, 0};
        switch (i % 4) {   /* small fields, zero fields, mixed signs */
        case 1: iv.months %= 100, iv.days %= 100, iv.micros %= INT64_C(100000000000); break;
        case 2: iv.months = i & 8 ? iv.months : 0, iv.days = i & 16 ? iv.days : 0, iv.micros = i & 32 ? iv.micros : 0; break;
        case 3: iv.micros -= iv.micros % 1000000; break;
        default: break;
        }
        n = pa_dt_format_interval(iv, buf, sizeof buf);
        if (!pa_dt_parse_interval(buf, n, &iv2) || iv2.months != iv.months || iv2.days != iv.days ||
            iv2.micros != iv.micros)
            fail_msg("interval %d %d %lld -> '%s'", iv.months, iv.days, (long long)iv.micros, buf);
    }
}

static void test_civil(void **state)
{
    (void)state;
    /* days <-> y/m/d over every day of years 1 .. 9999 and some negative ones. */
    int64_t first = pa_dt_days_from_civil(-400, 1, 1), last = pa_dt_days_from_civil(10000, 1, 1);
    int64_t py = -401, pm = 12, pd = 31;
    for (int64_t d = first; d < last; d++) {
        int64_t y, m, dd;
        pa_dt_civil(d, &y, &m, &dd);
        bool next = (y == py && m == pm && dd == pd + 1) || (y == py && m == pm + 1 && dd == 1 && pd == pa_dt_month_days(py, pm)) ||
                    (y == py + 1 && m == 1 && dd == 1 && pm == 12 && pd == 31);
        if (!next || pa_dt_days_from_civil(y, m, dd) != d)
            fail_msg("day %lld: %lld-%lld-%lld after %lld-%lld-%lld", (long long)d, (long long)y, (long long)m,
                     (long long)dd, (long long)py, (long long)pm, (long long)pd);
        py = y, pm = m, pd = dd;
    }
    assert_int_equal(pa_dt_month_days(2000, 2), 29);
    assert_int_equal(pa_dt_month_days(1900, 2), 28);
    assert_int_equal(pa_dt_month_days(2024, 2), 29);
    assert_int_equal(pa_dt_month_days(2023, 12), 31);
    assert_int_equal(pa_dt_floordiv(-1, 10), -1);
    assert_int_equal(pa_dt_floormod(-1, 10), 9);
    assert_int_equal(pa_dt_floordiv(INT64_MIN, 10), INT64_MIN / 10 - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_timestamp), cmocka_unit_test(test_format_interval),
        cmocka_unit_test(test_parse_timestamp),  cmocka_unit_test(test_parse_interval),
        cmocka_unit_test(test_arithmetic),       cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_civil),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
