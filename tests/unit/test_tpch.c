/*
 * test_tpch.c - the TPC-H generator's batch API against dbgen's own output:
 * rows of SF 1 formatted from batches must equal the verbatim dbgen slices
 * in tests/data/tpch/sf1 at their line numbers; typed values must equal
 * hand-computed ones; plus argument errors, allocation failure and the
 * query texts (tests/data/tpch/queries, the spec's validation parameters).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpch/tpch.h"

static tp_gen *g1;   /* SF 1, shared by the tests (the text pool takes a second) */

static int setup(void **state)
{
    (void)state;
    return tp_gen_create(1.0, &g1, NULL) == PA_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tp_gen_destroy(g1);
    return 0;
}

static char *read_data(const char *rel, size_t *len)
{
    const char *root = getenv("PISTA_TEST_DATA");
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root ? root : "tests/data", rel);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail_msg("cannot open %s", path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Format rows [begin, end) of b; caller frees. */
static char *format(const tp_batch *b, int64_t begin, int64_t end, size_t *len)
{
    char *out = malloc(tp_tbl_bound(b, begin, end) + 1);
    assert_non_null(out);
    *len = tp_batch_format_tbl(b, begin, end, out);
    out[*len] = '\0';
    return out;
}

static void check_text(const char *what, const char *got, size_t got_len, const char *want,
                       size_t want_len)
{
    if (got_len != want_len || memcmp(got, want, want_len) != 0) {
        size_t i = 0;
        while (i < got_len && i < want_len && got[i] == want[i])
            i++;
        fail_msg("%s differs at byte %zu: got '%.60s' want '%.60s'", what, i, got + i, want + i);
    }
}

/* Rows [first_line - 1, last_line) of table t (not lineitem) against a sample file. */
static void check_rows(tp_table t, int64_t first_line, int64_t last_line)
{
    char rel[128];
    snprintf(rel, sizeof rel, "tpch/sf1/%s.lines-%lld-%lld.tbl", tp_table_name(t),
             (long long)first_line, (long long)last_line);
    size_t want_len;
    char *want = read_data(rel, &want_len);
    int per_unit = t == TP_PARTSUPP ? 4 : 1;
    int64_t r0 = first_line - 1, r1 = last_line;   /* rows [r0, r1) */
    int64_t u0 = r0 / per_unit, u1 = (r1 + per_unit - 1) / per_unit;
    tp_batch b;
    tp_batch_init(&b, t);
    assert_int_equal(tp_gen_batch(g1, t, u0, u1 - u0, &b, NULL, NULL), PA_OK);
    size_t len;
    char *got = format(&b, r0 - u0 * per_unit, r1 - u0 * per_unit, &len);
    check_text(rel, got, len, want, want_len);
    free(got);
    free(want);
    tp_batch_close(&b);
}

static void test_sf1_samples(void **state)
{
    (void)state;
    check_rows(TP_REGION, 1, 5);
    check_rows(TP_NATION, 1, 25);
    check_rows(TP_SUPPLIER, 1, 200);
    check_rows(TP_SUPPLIER, 9801, 10000);
    check_rows(TP_CUSTOMER, 1, 200);
    check_rows(TP_CUSTOMER, 149801, 150000);
    check_rows(TP_PART, 1, 200);
    check_rows(TP_PART, 199801, 200000);
    check_rows(TP_PARTSUPP, 1, 200);
    check_rows(TP_PARTSUPP, 500001, 500200);
    check_rows(TP_ORDERS, 1, 200);
    check_rows(TP_ORDERS, 500001, 500200);
}

/* Lineitem lines are numbered across orders: count the lines of the orders
 * before the sample, then compare the sample's lines. */
static void test_sf1_lineitem_samples(void **state)
{
    (void)state;
    static const int64_t first[] = {1, 500001};
    tp_batch b;
    tp_batch_init(&b, TP_LINEITEM);
    for (int s = 0; s < 2; s++) {
        char rel[128];
        snprintf(rel, sizeof rel, "tpch/sf1/lineitem.lines-%lld-%lld.tbl", (long long)first[s],
                 (long long)first[s] + 199);
        size_t want_len;
        char *want = read_data(rel, &want_len);
        int64_t line = 1, unit = 0;   /* line number of the first line of `unit` */
        const int64_t step = 4096;
        for (;;) {
            assert_int_equal(tp_gen_batch(g1, TP_LINEITEM, unit, step, &b, NULL, NULL), PA_OK);
            if (line + b.n_rows > first[s] + 199)
                break;
            line += b.n_rows;
            unit += step;
        }
        int64_t r0 = first[s] - line;
        size_t len;
        char *got = format(&b, r0, r0 + 200, &len);
        check_text(rel, got, len, want, want_len);
        free(got);
        free(want);
    }
    tp_batch_close(&b);
}

static int find_col(const tp_batch *b, const char *name)
{
    for (int i = 0; i < b->n_columns; i++)
        if (!strcmp(b->cols[i].info->name, name))
            return i;
    fail_msg("no column %s", name);
    return -1;
}

/* Days since 1970-01-01, by hand: 1996-01-01 is 26 * 365 + 6 leap days. */
#define D_19960101 9496

static void test_typed_values(void **state)
{
    (void)state;
    /* SF 1 line 1: 1|155190|7706|1|17|21168.23|0.04|0.02|N|O|1996-03-13|1996-02-12|
     * 1996-03-22|DELIVER IN PERSON|TRUCK|egular courts above the| */
    tp_batch l, o;
    tp_batch_init(&l, TP_LINEITEM);
    tp_batch_init(&o, TP_ORDERS);
    assert_int_equal(tp_gen_batch(g1, TP_ORDERS, 0, 100, &o, &l, NULL), PA_OK);
    assert_int_equal(tp_batch_i64(&l, find_col(&l, "l_orderkey"), 0), 1);
    assert_int_equal(tp_batch_i32(&l, find_col(&l, "l_partkey"), 0), 155190);
    assert_int_equal(tp_batch_i32(&l, find_col(&l, "l_suppkey"), 0), 7706);
    assert_int_equal(tp_batch_i32(&l, find_col(&l, "l_linenumber"), 0), 1);
    assert_int_equal(tp_batch_i64(&l, find_col(&l, "l_quantity"), 0), 1700);
    assert_int_equal(tp_batch_i64(&l, find_col(&l, "l_extendedprice"), 0), 2116823);
    assert_int_equal(tp_batch_i64(&l, find_col(&l, "l_discount"), 0), 4);
    assert_int_equal(tp_batch_i64(&l, find_col(&l, "l_tax"), 0), 2);
    assert_int_equal(tp_batch_i32(&l, find_col(&l, "l_shipdate"), 0), D_19960101 + 31 + 29 + 12);
    assert_int_equal(tp_batch_i32(&l, find_col(&l, "l_commitdate"), 0), D_19960101 + 31 + 11);
    int32_t n;
    const char *s = tp_batch_str(&l, find_col(&l, "l_shipinstruct"), 0, &n);
    assert_int_equal(n, 17);
    assert_memory_equal(s, "DELIVER IN PERSON", 17);
    s = tp_batch_str(&l, find_col(&l, "l_comment"), 0, &n);
    assert_int_equal(n, 23);
    assert_memory_equal(s, "egular courts above the", 23);
    /* Order 1: 1|36901|O|173665.47|1996-01-02|5-LOW|Clerk#000000951|0|... */
    assert_int_equal(tp_batch_i64(&o, 0, 0), 1);
    assert_int_equal(tp_batch_i32(&o, 1, 0), 36901);
    assert_int_equal(tp_batch_i64(&o, 3, 0), 17366547);
    assert_int_equal(tp_batch_i32(&o, 4, 0), D_19960101 + 1);
    /* Order keys are sparse: 1..7, then 32. */
    assert_int_equal(tp_batch_i64(&o, 0, 7), 32);

    /* Every order's total and status follow from its lines (spec 4.2.3). */
    int64_t li = 0;
    int ok = find_col(&l, "l_orderkey"), ep = find_col(&l, "l_extendedprice");
    int dc = find_col(&l, "l_discount"), tx = find_col(&l, "l_tax");
    int ls = find_col(&l, "l_linestatus");
    for (int64_t r = 0; r < o.n_rows; r++) {
        int64_t total = 0, nf = 0, nl = 0;
        for (; li < l.n_rows && tp_batch_i64(&l, ok, li) == tp_batch_i64(&o, 0, r); li++, nl++) {
            int64_t e = tp_batch_i64(&l, ep, li), d = tp_batch_i64(&l, dc, li);
            total += e * (100 - d) / 100 * (100 + tp_batch_i64(&l, tx, li)) / 100;
            nf += *tp_batch_str(&l, ls, li, &n) == 'F';
        }
        assert_true(nl >= 1 && nl <= 7);
        assert_int_equal(tp_batch_i64(&o, 3, r), total);
        char want = nf == nl ? 'F' : nf ? 'P' : 'O';
        assert_int_equal(*tp_batch_str(&o, 2, r, &n), want);
    }
    assert_int_equal(li, l.n_rows);

    /* Lineitem alone equals lineitem generated with its orders. */
    tp_batch l2;
    tp_batch_init(&l2, TP_LINEITEM);
    assert_int_equal(tp_gen_batch(g1, TP_LINEITEM, 0, 100, &l2, NULL, NULL), PA_OK);
    size_t a_len, b_len;
    char *a = format(&l, 0, l.n_rows, &a_len), *b = format(&l2, 0, l2.n_rows, &b_len);
    check_text("lineitem alone", b, b_len, a, a_len);
    free(a);
    free(b);
    tp_batch_close(&l2);
    tp_batch_close(&l);
    tp_batch_close(&o);
}

static void test_schema(void **state)
{
    (void)state;
    static const int ncols[] = {3, 4, 7, 8, 9, 5, 9, 16};
    for (int t = 0; t < TP_TABLE__COUNT; t++) {
        const tp_column_info *c;
        assert_int_equal(tp_table_columns((tp_table)t, &c), ncols[t]);
        tp_table back;
        assert_int_equal(tp_table_from_name(tp_table_name((tp_table)t), &back, NULL), PA_OK);
        assert_int_equal(back, t);
    }
    const tp_column_info *c;
    tp_table_columns(TP_LINEITEM, &c);
    assert_string_equal(c[4].name, "l_quantity");
    assert_int_equal(c[4].type.id, PA_TYPE_DECIMAL);
    assert_int_equal(c[4].type.precision, 15);
    assert_int_equal(c[4].type.scale, 2);
    assert_int_equal(c[0].type.id, PA_TYPE_BIGINT);
    assert_int_equal(c[10].type.id, PA_TYPE_DATE);
    assert_string_equal(c[15].name, "l_comment");
    tp_table_columns(TP_ORDERS, &c);
    assert_string_equal(c[0].name, "o_orderkey");
    assert_int_equal(c[0].type.id, PA_TYPE_BIGINT);
    assert_int_equal(c[1].type.id, PA_TYPE_INTEGER);
    unsigned m;
    assert_int_equal(tp_table_mask_parse("orders,lineitem", &m, NULL), PA_OK);
    assert_int_equal(m, (1u << TP_ORDERS) | (1u << TP_LINEITEM));
    assert_int_equal(tp_table_mask_parse("all", &m, NULL), PA_OK);
    assert_int_equal(m, TP_ALL_TABLES);
}

static void test_scale_factors(void **state)
{
    (void)state;
    assert_true(tp_gen_effective_sf(g1) == 1.0);
    assert_int_equal(tp_gen_units(g1, TP_LINEITEM), 1500000);
    assert_int_equal(tp_gen_units(g1, TP_PARTSUPP), 200000);
    assert_int_equal(tp_gen_rows_estimate(g1, TP_PARTSUPP), 800000);
    tp_gen *g;
    assert_int_equal(tp_gen_create(0.0105, &g, NULL), PA_OK);   /* dbgen: thousandths */
    assert_true(fabs(tp_gen_effective_sf(g) - 0.01) < 1e-12);
    assert_int_equal(tp_gen_units(g, TP_SUPPLIER), 100);
    assert_int_equal(tp_gen_units(g, TP_ORDERS), 15000);
    assert_int_equal(tp_gen_units(g, TP_NATION), 25);
    tp_gen_destroy(g);
    assert_int_equal(tp_gen_create(2.7, &g, NULL), PA_OK);      /* dbgen: whole numbers */
    assert_true(tp_gen_effective_sf(g) == 2.0);
    assert_int_equal(tp_gen_units(g, TP_CUSTOMER), 300000);
    tp_gen_destroy(g);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    tp_gen *g = NULL;
    assert_int_equal(tp_gen_create(-1, &g, &err), PA_EINVAL);
    assert_non_null(strstr(err.msg, "positive"));
    assert_int_equal(tp_gen_create(0, &g, NULL), PA_EINVAL);
    assert_int_equal(tp_gen_create(NAN, &g, NULL), PA_EINVAL);
    assert_int_equal(tp_gen_create(30000, &g, NULL), PA_EUNSUPPORTED);
    pa_err_clear(&err);
    tp_table t;
    assert_int_equal(tp_table_from_name("lineitems", &t, &err), PA_EINVAL);
    assert_non_null(strstr(err.msg, "lineitems"));
    unsigned m;
    assert_int_equal(tp_table_mask_parse("orders,foo", &m, NULL), PA_EINVAL);
    assert_int_equal(tp_table_mask_parse("", &m, NULL), PA_EINVAL);
    tp_batch b;
    tp_batch_init(&b, TP_REGION);
    assert_int_equal(tp_gen_batch(g1, TP_REGION, 3, 3, &b, NULL, NULL), PA_EINVAL);
    assert_int_equal(tp_gen_batch(g1, TP_REGION, -1, 1, &b, NULL, NULL), PA_EINVAL);
    assert_int_equal(tp_gen_batch(g1, TP_NATION, 0, 1, &b, NULL, NULL), PA_EINVAL);
    tp_batch_close(&b);
    tp_write_opts o;
    tp_write_opts_defaults(&o);
    o.parts = 4;
    o.part = 4;
    assert_int_equal(tp_write(g1, &o, NULL, NULL), PA_EINVAL);
    tp_write_opts_defaults(&o);
    o.format = TP_FORMAT_PARQUET;   /* Parquet needs a folder (test_tpch_parquet.c) */
    pa_err_clear(&err);
    assert_int_equal(tp_write(g1, &o, NULL, &err), PA_EINVAL);
    assert_non_null(strstr(err.msg, "Parquet"));
    char *q;
    assert_int_equal(tp_query_text(0, 0, 1, &q, NULL), PA_EINVAL);
    assert_int_equal(tp_query_text(23, 0, 1, &q, NULL), PA_EINVAL);
    pa_err_close(&err);
}

static void test_alloc_failure(void **state)
{
    (void)state;
    pa_mem_stats before, after;
    pa_host_mem_stats(&before);
    /* Fail the k-th allocation for every k until generation succeeds. */
    int rc = PA_ENOMEM;
    for (int k = 0; rc != PA_OK; k++) {
        tp_batch o, l;
        tp_batch_init(&o, TP_ORDERS);
        tp_batch_init(&l, TP_LINEITEM);
        pa_fault_alloc_after(k);
        rc = tp_gen_batch(g1, TP_ORDERS, 0, 1000, &o, &l, NULL);
        pa_fault_alloc_clear();
        if (rc != PA_OK) {
            assert_int_equal(rc, PA_ENOMEM);
            assert_int_equal(o.n_rows, 0);
            assert_int_equal(l.n_rows, 0);
        } else {
            assert_int_equal(o.n_rows, 1000);
            assert_true(k > 10);
        }
        tp_batch_close(&o);
        tp_batch_close(&l);
    }
    pa_host_mem_stats(&after);
    assert_int_equal(after.current, before.current);
}

static void test_queries(void **state)
{
    (void)state;
    for (int n = 1; n <= 22; n++) {
        char rel[64], *q;
        snprintf(rel, sizeof rel, "tpch/queries/q%02d.sql", n);
        size_t want_len;
        char *want = read_data(rel, &want_len);
        assert_int_equal(tp_query_text(n, 0, 1, &q, NULL), PA_OK);
        check_text(rel, q, strlen(q), want, want_len);
        pa_free(q);
        free(want);
        /* Seeded: deterministic, placeholders all filled. */
        char *a, *b;
        assert_int_equal(tp_query_text(n, 42, 1, &a, NULL), PA_OK);
        assert_int_equal(tp_query_text(n, 42, 1, &b, NULL), PA_OK);
        assert_string_equal(a, b);
        assert_null(strstr(a, "${"));
        assert_non_null(strstr(a, "parameters of seed 42"));
        pa_free(a);
        pa_free(b);
    }
    /* Domains: Q1 DELTA in [60, 120]; Q22 seven different codes in [10, 34]. */
    for (uint64_t seed = 1; seed <= 50; seed++) {
        char *q;
        assert_int_equal(tp_query_text(1, seed, 1, &q, NULL), PA_OK);
        const char *p = strstr(q, "interval '");
        assert_non_null(p);
        int delta = atoi(p + 10);
        assert_true(delta >= 60 && delta <= 120);
        pa_free(q);
        assert_int_equal(tp_query_text(22, seed, 1, &q, NULL), PA_OK);
        p = strstr(q, "I1..I7 = ");
        assert_non_null(p);
        int codes[7];
        assert_int_equal(sscanf(p + 9, "%d, %d, %d, %d, %d, %d, %d", &codes[0], &codes[1],
                                &codes[2], &codes[3], &codes[4], &codes[5], &codes[6]), 7);
        for (int i = 0; i < 7; i++) {
            assert_true(codes[i] >= 10 && codes[i] <= 34);
            for (int j = 0; j < i; j++)
                assert_true(codes[i] != codes[j]);
        }
        pa_free(q);
    }
    char *q;
    assert_int_equal(tp_query_text(11, 5, 10, &q, NULL), PA_OK);
    assert_non_null(strstr(q, "* 0.00001\n"));   /* FRACTION = 0.0001 / SF */
    pa_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema),
        cmocka_unit_test(test_sf1_samples),
        cmocka_unit_test(test_sf1_lineitem_samples),
        cmocka_unit_test(test_typed_values),
        cmocka_unit_test(test_scale_factors),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_alloc_failure),
        cmocka_unit_test(test_queries),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
