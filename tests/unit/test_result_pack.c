/*
 * test_result_pack.c - ex_result_pack / ex_result_unpack, how a rank's rows
 * travel to rank 0: every type (NULLs, text, DECIMAL, DATE, DOUBLE) comes
 * back with the same rows; several buffers concatenate in order; a buffer
 * cut at any length, or with a damaged header, is PA_ECORRUPT naming the
 * rank, never a crash or a read past the end (the sanitizers watch).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sql/sql.h"

static dv_device *dev;
static sql_session *ses;

static int setup(void **state)
{
    (void)state;
    const char *d = getenv("PISTA_TEST_DATA");
    char dir[600];
    snprintf(dir, sizeof dir, "%s/parquet/sf0.01", d ? d : "tests/data");
    dv_options o = {.spec = "cpu", .cpu_threads = 2};
    pa_err e;
    pa_err_init(&e);
    if (dv_open(&o, &dev, &e) != PA_OK)
        fail_msg("open: %s", e.msg);
    sql_options so = {.dev = dev, .data_dir = dir};
    if (sql_session_create(&so, &ses, &e) != PA_OK)
        fail_msg("session: %s", e.msg);
    pa_err_close(&e);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sql_session_destroy(ses);
    dv_close(dev);
    return 0;
}

static char *csv(const ex_result *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_true(ex_result_write_csv(r, f, '|', true) >= 0);
    fclose(f);
    return buf;
}

static sql_result *query(const char *sql)
{
    sql_result *r = NULL;
    pa_err e;
    pa_err_init(&e);
    if (sql_execute(ses, sql, &r, &e) != PA_OK)
        fail_msg("%s: %s", sql, e.msg);
    pa_err_close(&e);
    return r;
}

#define SQL                                                                                                        \
    "select n_nationkey, n_name, case when n_nationkey % 3 = 0 then null else n_comment end as c, "                \
    "cast(n_nationkey as decimal(12,2)) * 1.5 as d, date '1995-01-01' + n_regionkey as dt, "                       \
    "n_nationkey / 7.0 as f, n_nationkey > 10 as b from nation order by n_nationkey"

static void test_round_trip(void **state)
{
    (void)state;
    sql_result *r = query(SQL);
    const ex_result *x = r->rows;
    void *buf;
    int64_t n;
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(ex_result_pack(x, &buf, &n, &e), PA_OK);
    /* Twice, as from two ranks: the rows twice, in order. */
    const void *bufs[2] = {buf, buf};
    int64_t sizes[2] = {n, n};
    ex_result *y;
    assert_int_equal(ex_result_unpack(dev, x->n_columns, x->names, x->types, bufs, sizes, 2, &y, &e), PA_OK);
    assert_int_equal(y->n_rows, 2 * x->n_rows);
    char *a = csv(x), *b = csv(y);
    size_t la = strlen(a), nl = strcspn(a, "\n") + 1;   /* b = header, rows, rows */
    assert_int_equal(strlen(b), la + la - nl);
    assert_memory_equal(b, a, la);
    assert_memory_equal(b + la, a + nl, la - nl);
    free(a), free(b);
    ex_result_destroy(y);

    /* Cut short anywhere, or a damaged header: an error naming rank 1. */
    for (int64_t cut = 0; cut < n; cut += cut < 200 ? 1 : 97) {
        sizes[1] = cut;
        y = NULL;
        pa_err_clear(&e);
        assert_int_equal(ex_result_unpack(dev, x->n_columns, x->names, x->types, bufs, sizes, 2, &y, &e),
                         PA_ECORRUPT);
        assert_null(y);
        assert_non_null(strstr(e.msg, "rank 1"));
    }
    sizes[1] = n;
    char *bad = malloc((size_t)n);
    for (int at = 0; at < 40; at++) {   /* magic, column count and types, chunk count */
        memcpy(bad, buf, (size_t)n);
        bad[at] ^= 0x5a;
        bufs[1] = bad;
        pa_err_clear(&e);
        y = NULL;
        int rc = ex_result_unpack(dev, x->n_columns, x->names, x->types, bufs, sizes, 2, &y, &e);
        assert_int_equal(rc, PA_ECORRUPT);
        assert_null(y);
    }
    free(bad);
    pa_free(buf);
    pa_err_close(&e);
    sql_result_destroy(r);
}

static void test_empty(void **state)
{
    (void)state;
    sql_result *r = query("select n_name from nation where n_nationkey < 0");
    void *buf;
    int64_t n;
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(ex_result_pack(r->rows, &buf, &n, &e), PA_OK);
    const void *bufs[1] = {buf};
    ex_result *y;
    assert_int_equal(ex_result_unpack(dev, 1, r->rows->names, r->rows->types, bufs, &n, 1, &y, &e), PA_OK);
    assert_int_equal(y->n_rows, 0);
    /* The wrong columns: refused. */
    pa_type other = {.id = PA_TYPE_BIGINT};
    ex_result *z = NULL;
    assert_int_equal(ex_result_unpack(dev, 1, r->rows->names, &other, bufs, &n, 1, &z, &e), PA_ECORRUPT);
    assert_null(z);
    ex_result_destroy(y);
    pa_free(buf);
    pa_err_close(&e);
    sql_result_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
