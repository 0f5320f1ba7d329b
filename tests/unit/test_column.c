/*
 * test_column.c - value formatting in the answers format (hand-computed
 * cases from shared/tpch/answers/README.md) and date conversion (known days).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "core/core.h"

static const char *dec(int64_t v, int scale, int digits)
{
    static char buf[64];
    pa_format_decimal(v, scale, digits, buf, sizeof buf);
    return buf;
}

static void test_decimals(void **state)
{
    assert_string_equal(dec(123450, 4, 2), "12.35");     /* 12.3450 -> 12.35 */
    assert_string_equal(dec(-50, 4, 2), "-0.01");        /* -0.0050 -> -0.01 */
    assert_string_equal(dec(-49, 4, 2), "0.00");         /* rounds to zero: no sign */
    assert_string_equal(dec(7, 0, 2), "7.00");
    assert_string_equal(dec(-123, 1, 2), "-12.30");
    assert_string_equal(dec(526165934000000LL, 6, 2), "526165934.00");
    assert_string_equal(dec(4, 2, 2), "0.04");
    assert_string_equal(dec(-12345, 2, 2), "-123.45");
    assert_string_equal(dec(1234567, 6, 2), "1.23");
    assert_string_equal(dec(1235000, 6, 2), "1.24");     /* exact tie goes away from zero */
    assert_string_equal(dec(INT64_MIN, 2, 2), "-92233720368547758.08");
    assert_string_equal(dec(17, 0, 0), "17");
    /* 128-bit: wide sums. 10^30 + 0.005 at scale 3 -> rounds up. */
    char buf[64];
    __int128 big = (__int128)1000000000000000ll * 1000000000000000ll;   /* 10^30 */
    pa_format_decimal128(big * 1000 + 5, 3, 2, buf, sizeof buf);
    assert_string_equal(buf, "1000000000000000000000000000000.01");
    pa_format_decimal128(-(big * 1000 + 4), 3, 2, buf, sizeof buf);
    assert_string_equal(buf, "-1000000000000000000000000000000.00");
    __int128 v = -(big * 100 + 12345);
    pa_column c = {.type = {PA_TYPE_DECIMAL, 38, 4}, .length = 1, .data = &v};
    pa_format_value(&c, 0, PA_FMT_FULL, buf, sizeof buf);
    assert_string_equal(buf, "-10000000000000000000000000001.2345");
    pa_type t38 = {PA_TYPE_DECIMAL, 38, 2}, t15 = {PA_TYPE_DECIMAL, 15, 2};
    assert_int_equal(pa_type_bytes(t38), 16);
    assert_int_equal(pa_type_bytes(t15), 8);
}

static const char *fmt_double(double x)
{
    static char buf[64];
    pa_column c = {.type = {PA_TYPE_DOUBLE, 0, 0}, .length = 1, .data = &x};
    pa_format_value(&c, 0, PA_FMT_ANSWER, buf, sizeof buf);
    return buf;
}

static void test_doubles(void **state)
{
    assert_string_equal(fmt_double(25.5775), "25.58");
    assert_string_equal(fmt_double(0.125), "0.13");     /* exact binary tie: away from zero */
    assert_string_equal(fmt_double(-0.125), "-0.13");
    assert_string_equal(fmt_double(1.005), "1.00");     /* 1.00499999999999989... */
    assert_string_equal(fmt_double(0.115), "0.12");     /* 0.11500000000000000499... */
    assert_string_equal(fmt_double(-0.001), "0.00");    /* no -0.00 */
    assert_string_equal(fmt_double(35785.709306), "35785.71");
    assert_string_equal(fmt_double(0.0 / 0.0), "nan");
    assert_string_equal(fmt_double(-1.0 / 0.0), "-inf");
}

static void test_dates(void **state)
{
    assert_int_equal(pa_date_from_ymd(1970, 1, 1), 0);
    assert_int_equal(pa_date_from_ymd(1998, 12, 1), 10561);
    assert_int_equal(pa_date_from_ymd(1992, 1, 1), 8035);
    assert_int_equal(pa_date_from_ymd(2000, 3, 1), 11017);
    assert_int_equal(pa_date_from_ymd(1969, 12, 31), -1);
    for (int32_t d = -800000; d < 800000; d += 7) {
        int y, m, dd;
        pa_date_to_ymd(d, &y, &m, &dd);
        assert_int_equal(pa_date_from_ymd(y, m, dd), d);
    }
    int32_t v;
    assert_int_equal(pa_date_parse("2000-02-29", &v, NULL), PA_OK);
    assert_int_equal(v, 11016);
    assert_int_equal(pa_date_parse("1999-02-29", &v, NULL), PA_EINVAL);
    assert_int_equal(pa_date_parse("1999-13-01", &v, NULL), PA_EINVAL);
    assert_int_equal(pa_date_parse("1999-01-01x", &v, NULL), PA_EINVAL);
}

static void test_columns(void **state)
{
    char buf[64];
    int32_t dates[] = {10561, 8035};
    uint8_t valid = 0x1;   /* row 1 is NULL */
    pa_column c = {.type = {PA_TYPE_DATE, 0, 0}, .length = 2, .data = dates, .validity = &valid};
    pa_format_value(&c, 0, PA_FMT_ANSWER, buf, sizeof buf);
    assert_string_equal(buf, "1998-12-01");
    assert_int_equal(pa_format_value(&c, 1, PA_FMT_ANSWER, buf, sizeof buf), 0);
    assert_string_equal(buf, "");

    const char bytes[] = "AFxyz ";
    int32_t offs[] = {0, 1, 2, 6};
    pa_column s = {.type = {PA_TYPE_VARCHAR, 0, 0}, .length = 3, .data = (void *)bytes, .offsets = offs};
    pa_format_value(&s, 2, PA_FMT_ANSWER, buf, sizeof buf);
    assert_string_equal(buf, "xyz ");   /* trailing space kept */
    assert_int_equal(pa_format_value(&s, 2, PA_FMT_ANSWER, buf, 3), 4);   /* truncated, needed 4 */
    assert_string_equal(buf, "xy");

    int64_t d[] = {-12345};
    pa_column dc = {.type = {PA_TYPE_DECIMAL, 15, 4}, .length = 1, .data = d};
    pa_format_value(&dc, 0, PA_FMT_FULL, buf, sizeof buf);
    assert_string_equal(buf, "-1.2345");
    pa_format_value(&dc, 0, PA_FMT_ANSWER, buf, sizeof buf);
    assert_string_equal(buf, "-1.23");
    int64_t big = 6001215;
    pa_column bc = {.type = {PA_TYPE_BIGINT, 0, 0}, .length = 1, .data = &big};
    pa_format_value(&bc, 0, PA_FMT_ANSWER, buf, sizeof buf);
    assert_string_equal(buf, "6001215");
    uint8_t t = 1;
    pa_column b = {.type = {PA_TYPE_BOOLEAN, 0, 0}, .length = 1, .data = &t};
    pa_format_value(&b, 0, PA_FMT_ANSWER, buf, sizeof buf);
    assert_string_equal(buf, "true");
}

/* Host-side byte counts: known only for the descriptor (offsets, length)
 * they were set on; copies keep them, changed copies lose them. */
static void test_known_bytes(void **state)
{
    const char bytes[] = "AFxyz ";
    int32_t offs[] = {0, 1, 2, 6};
    pa_column s = {.type = {PA_TYPE_VARCHAR, 0, 0}, .length = 3, .data = (void *)bytes, .offsets = offs};
    int64_t b = -1;
    assert_false(pa_column_bytes(&s, &b));   /* zeroed: unknown */
    pa_column_set_bytes(&s, 6);
    assert_true(pa_column_bytes(&s, &b));
    assert_int_equal(b, 6);
    pa_column copy = s;   /* a copy describes the same buffers */
    assert_true(pa_column_bytes(&copy, &b));
    assert_int_equal(b, 6);
    pa_column fewer = s;   /* LIMIT's view of the first two rows */
    fewer.length = 2;
    assert_false(pa_column_bytes(&fewer, &b));
    pa_column later = s;   /* a view from row 1 */
    later.offsets = offs + 1;
    later.length = 2;
    assert_false(pa_column_bytes(&later, &b));
    pa_column other = s;   /* another buffer */
    int32_t offs2[] = {0, 0, 0, 0};
    other.offsets = offs2;
    assert_false(pa_column_bytes(&other, &b));
    pa_column_set_bytes(&other, 0);
    assert_true(pa_column_bytes(&other, &b));
    assert_int_equal(b, 0);
    int32_t v[] = {1, 2, 3};
    pa_column fixed = {.type = {PA_TYPE_INTEGER, 0, 0}, .length = 3, .data = v};
    pa_column_set_bytes(&fixed, 12);
    assert_false(pa_column_bytes(&fixed, &b));   /* only VARCHAR columns have string bytes */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decimals), cmocka_unit_test(test_doubles),
        cmocka_unit_test(test_dates), cmocka_unit_test(test_columns),
        cmocka_unit_test(test_known_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
