/*
 * test_layout.c - storage layouts (storage.h, section 8b): hive partition
 * keys, values and types from paths, and the widening of column types.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "storage/storage.h"

static pa_type T(pa_type_id id, int p, int s) { return (pa_type){id, (uint8_t)p, (uint8_t)s}; }

static void widen_ok(pa_type a, pa_type b, pa_type want)
{
    pa_type w;
    char why[128];
    assert_true(pq_type_widen(a, b, &w, why, sizeof why));
    assert_int_equal(w.id, want.id);
    assert_int_equal(w.precision, want.precision);
    assert_int_equal(w.scale, want.scale);
    assert_true(pq_type_widen(b, a, &w, why, sizeof why));   /* symmetric */
    assert_int_equal(w.id, want.id);
}

static void test_widen(void **state)
{
    (void)state;
    widen_ok(T(PA_TYPE_INTEGER, 0, 0), T(PA_TYPE_BIGINT, 0, 0), T(PA_TYPE_BIGINT, 0, 0));
    widen_ok(T(PA_TYPE_BIGINT, 0, 0), T(PA_TYPE_DOUBLE, 0, 0), T(PA_TYPE_DOUBLE, 0, 0));
    widen_ok(T(PA_TYPE_DECIMAL, 5, 2), T(PA_TYPE_DECIMAL, 12, 3), T(PA_TYPE_DECIMAL, 12, 3));
    widen_ok(T(PA_TYPE_DECIMAL, 9, 4), T(PA_TYPE_DECIMAL, 8, 0), T(PA_TYPE_DECIMAL, 12, 4));
    widen_ok(T(PA_TYPE_INTEGER, 0, 0), T(PA_TYPE_DECIMAL, 5, 2), T(PA_TYPE_DECIMAL, 12, 2));
    widen_ok(T(PA_TYPE_DECIMAL, 5, 2), T(PA_TYPE_DOUBLE, 0, 0), T(PA_TYPE_DOUBLE, 0, 0));
    widen_ok(T(PA_TYPE_DATE, 0, 0), T(PA_TYPE_DATE, 0, 0), T(PA_TYPE_DATE, 0, 0));
    /* Past 18 digits into 128 bits, up to 38. */
    widen_ok(T(PA_TYPE_DECIMAL, 5, 2), T(PA_TYPE_DECIMAL, 18, 1), T(PA_TYPE_DECIMAL, 19, 2));
    widen_ok(T(PA_TYPE_BIGINT, 0, 0), T(PA_TYPE_DECIMAL, 5, 2), T(PA_TYPE_DECIMAL, 21, 2));   /* BIGINT as (19,0) */
    widen_ok(T(PA_TYPE_BIGINT, 0, 0), T(PA_TYPE_DECIMAL, 38, 10), T(PA_TYPE_DECIMAL, 38, 10));
    /* Dates and timestamps: DATE < TIMESTAMP < TIMESTAMPTZ < TIMESTAMP_NS (DuckDB's union_by_name). */
    widen_ok(T(PA_TYPE_DATE, 0, 0), T(PA_TYPE_TIMESTAMP, 0, 0), T(PA_TYPE_TIMESTAMP, 0, 0));
    widen_ok(T(PA_TYPE_TIMESTAMP, 0, 0), T(PA_TYPE_TIMESTAMPTZ, 0, 0), T(PA_TYPE_TIMESTAMPTZ, 0, 0));
    widen_ok(T(PA_TYPE_TIMESTAMPTZ, 0, 0), T(PA_TYPE_TIMESTAMP_NS, 0, 0), T(PA_TYPE_TIMESTAMP_NS, 0, 0));
    widen_ok(T(PA_TYPE_DATE, 0, 0), T(PA_TYPE_TIMESTAMP_NS, 0, 0), T(PA_TYPE_TIMESTAMP_NS, 0, 0));
    pa_type w;
    char why[128];
    assert_false(pq_type_widen(T(PA_TYPE_DECIMAL, 5, 2), T(PA_TYPE_DECIMAL, 38, 1), &w, why, sizeof why));
    assert_non_null(strstr(why, "DECIMAL(39,2) would need more than 38 digits"));
    assert_false(pq_type_widen(T(PA_TYPE_TIME, 0, 0), T(PA_TYPE_TIMESTAMP, 0, 0), &w, why, sizeof why));
    assert_false(pq_type_widen(T(PA_TYPE_DATE, 0, 0), T(PA_TYPE_INTEGER, 0, 0), &w, why, sizeof why));
    assert_false(pq_type_widen(T(PA_TYPE_INTEGER, 0, 0), T(PA_TYPE_VARCHAR, 0, 0), &w, why, sizeof why));
    assert_string_equal(why, "");
    assert_false(pq_type_widen(T(PA_TYPE_DATE, 0, 0), T(PA_TYPE_BIGINT, 0, 0), &w, why, sizeof why));
}

static void test_hive(void **state)
{
    (void)state;
    const char *files[] = {
        "/d/x=1/b=2020-01-05/c=01/s=a%20b/f.parquet",
        "/d/x=-12/b=2021-2-3/c=7/s=NULL/f.parquet",
        "/d/x=__HIVE_DEFAULT_PARTITION__/b=2022-12-31/c=+7/s=z/g.parquet",
    };
    pq_hive *h = NULL;
    pa_err err;
    pa_err_init(&err);
    assert_int_equal(pq_hive_detect(files, 3, PQ_HIVE_AUTO, &h, &err), PA_OK);
    assert_non_null(h);
    assert_int_equal(h->n_keys, 4);
    assert_string_equal(h->keys[0], "b");   /* sorted by name */
    assert_string_equal(h->keys[1], "c");
    assert_string_equal(h->keys[2], "s");
    assert_string_equal(h->keys[3], "x");
    assert_int_equal(h->types[0].id, PA_TYPE_DATE);
    assert_int_equal(h->types[1].id, PA_TYPE_VARCHAR);   /* 01 and +7 are not as BIGINT prints */
    assert_int_equal(h->types[2].id, PA_TYPE_VARCHAR);
    assert_int_equal(h->types[3].id, PA_TYPE_BIGINT);
    assert_string_equal(h->values[0 * 4 + 2], "a b");
    assert_null(h->values[1 * 4 + 2]);
    assert_null(h->values[2 * 4 + 3]);
    assert_string_equal(h->values[1 * 4 + 3], "-12");
    assert_int_equal(pq_hive_key(h, "s"), 2);
    assert_int_equal(pq_hive_key(h, "nope"), -1);
    pq_hive_free(h);

    /* Off, no key=value folder, keys that differ. */
    assert_int_equal(pq_hive_detect(files, 3, PQ_HIVE_OFF, &h, &err), PA_OK);
    assert_null(h);
    const char *plain[] = {"/d/a.parquet", "/d/b.parquet"};
    assert_int_equal(pq_hive_detect(plain, 2, PQ_HIVE_AUTO, &h, &err), PA_OK);
    assert_null(h);
    assert_int_equal(pq_hive_detect(plain, 2, PQ_HIVE_ON, &h, &err), PA_EINVAL);
    assert_non_null(strstr(err.msg, "has no key=value folder"));
    pa_err_close(&err);
    pa_err_init(&err);
    const char *differ[] = {"/d/a=1/f.parquet", "/d/b=1/f.parquet"};
    assert_int_equal(pq_hive_detect(differ, 2, PQ_HIVE_AUTO, &h, &err), PA_OK);
    assert_null(h);
    assert_int_equal(pq_hive_detect(differ, 2, PQ_HIVE_ON, &h, &err), PA_EINVAL);
    assert_non_null(strstr(err.msg, "hive partitions differ"));
    pa_err_close(&err);

    /* Timestamps as DuckDB 1.5 detects them: a date and a time ('T' or a
     * space), no offset; dates mixed with timestamps stay VARCHAR (checked
     * with DuckDB on such folders). With an offset somewhere: TIMESTAMPTZ
     * (DuckDB drops the offset and says TIMESTAMP). */
    const char *ts[] = {"/d/t=2020-01-01 12:00:00/u=2020-01-01/v=2020-01-01T10:00:00/w=1999-12-31 23:59:59+02/f.parquet",
                        "/d/t=2021-05-06 01:02:03.25/u=2021-05-06 01:02:03/v=2021-05-06T01:02:03/w=2000-01-01 00:00:00/f.parquet"};
    pa_err_init(&err);
    assert_int_equal(pq_hive_detect(ts, 2, PQ_HIVE_AUTO, &h, &err), PA_OK);
    assert_non_null(h);
    assert_int_equal(h->types[0].id, PA_TYPE_TIMESTAMP);
    assert_int_equal(h->types[1].id, PA_TYPE_VARCHAR);
    assert_int_equal(h->types[2].id, PA_TYPE_TIMESTAMP);
    assert_int_equal(h->types[3].id, PA_TYPE_TIMESTAMPTZ);
    pq_hive_free(h);
    pa_err_close(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_widen),
        cmocka_unit_test(test_hive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
