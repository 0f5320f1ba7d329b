/*
 * test_op_project.c - the PROJECT operator through ex_run: TPC-H Q1's
 * computed columns and a mix of string, date, CASE and CAST expressions over
 * a lineitem Parquet file, row for row equal to DuckDB's output for the same
 * SQL (when the oracle is installed) and to values computed here in C;
 * column references pass through without a copy; a run-time overflow fails
 * the query with the values named; a tiny memory limit fails naming PROJECT
 * and the device serves the next query.
 */
#include "op_testutil.h"

static dv_device *D;
static ex_plan *P;
static pa_err E;

static int setup(void **state)
{
    ot_paths();
    D = et_open(0);
    return 0;
}
static int teardown(void **state)
{
    dv_close(D);
    return 0;
}
static int each_setup(void **state)
{
    pa_err_init(&E);
    assert_int_equal(ex_plan_create(&P, NULL), PA_OK);
    return 0;
}
static int each_teardown(void **state)
{
    ex_plan_destroy(P);
    pa_err_close(&E);
    return 0;
}

static const char *const cols[] = {"l_orderkey", "l_linenumber", "l_quantity", "l_extendedprice", "l_discount",
                                   "l_tax",      "l_shipdate",   "l_shipmode", "l_returnflag"};

static void test_versus_duckdb(void **state)
{
    ex_op *s = ot_scan(P, "lineitem-zstd.parquet", cols, 9), *pr;
#define C(i) ex_expr_col(P, s, i, &E)
    ex_expr *one = ex_expr_int(P, 1, &E);
    ex_expr *disc_price = ex_expr_arith(P, EX_MUL, C(3), ex_expr_arith(P, EX_SUB, one, C(4), &E), &E);
    ex_expr *charge = ex_expr_arith(P, EX_MUL, disc_price, ex_expr_arith(P, EX_ADD, one, C(5), &E), &E);
    ex_expr *w[1] = {ex_expr_cmp(P, EX_GT, C(2), ex_expr_int(P, 25, &E), &E)};
    ex_expr *t[1] = {ex_expr_varchar(P, "big", &E)};
    ex_expr *ex[] = {
        C(0),
        C(1),
        disc_price,
        charge,
        ex_expr_substring(P, C(7), one, ex_expr_int(P, 3, &E), &E),
        ex_expr_extract(P, EX_YEAR, C(6), &E),
        ex_expr_date_add(P, C(6), 1, EX_MONTHS, &E),
        ex_expr_case(P, w, t, 1, ex_expr_varchar(P, "small", &E), &E),
        ex_expr_cast(P, C(2), et_t(PA_TYPE_VARCHAR), &E),
        ex_expr_arith(P, EX_DIV, C(3), C(2), &E),
        ex_expr_cmp(P, EX_EQ, C(8), ex_expr_varchar(P, "R", &E), &E),
        ex_expr_decimal(P, "1.5", &E),
    };
#undef C
    const char *names[] = {"k", "n", "disc_price", "charge", "mode3", "yr", "next_month", "size", "qtext",
                           "unit_price", "is_r", "c"};
    int n = (int)(sizeof ex / sizeof ex[0]);
    assert_int_equal(ex_project(P, s, ex, names, n, &pr, &E), PA_OK);
    assert_int_equal(ex_op_column_type(pr, 2).id, PA_TYPE_DECIMAL);
    assert_int_equal(ex_op_column_type(pr, 2).scale, 4);
    assert_int_equal(ex_op_column_type(pr, 3).scale, 6);
    int rc;
    char msg[512];
    ex_result *r = ot_run(D, P, pr, EX_MODE_OVERLAPPED, &rc, msg);
    if (rc != PA_OK)
        fail_msg("%s", msg);
    assert_int_equal(r->n_rows, 60175);
    /* Spot checks in C on every row. */
    for (int c = 0; c < r->n_chunks; c++) {
        const dv_chunk *k = r->chunks[c];
        for (int64_t i = 0; i < k->length; i++) {
            int64_t dp = et_i64(&k->columns[2], i);
            assert_true(dp >= 0);
            assert_true(et_valid(&k->columns[11], i) && et_i64(&k->columns[11], i) == 15);
            int y = (int)et_i64(&k->columns[5], i);
            assert_true(y >= 1992 && y <= 1998);
            assert_int_equal(et_slen(&k->columns[4], i), 3);
        }
    }
    char *o = ot_oracle("select l_orderkey as k, l_linenumber as n, l_extendedprice * (1 - l_discount) as disc_price, "
                        "l_extendedprice * (1 - l_discount) * (1 + l_tax) as charge, substring(l_shipmode, 1, 3) as mode3, "
                        "extract(year from l_shipdate) as yr, (l_shipdate + interval 1 month)::date as next_month, "
                        "case when l_quantity > 25 then 'big' else 'small' end as size, l_quantity::varchar as qtext, "
                        "l_extendedprice / l_quantity as unit_price, l_returnflag = 'R' as is_r, 1.5 as c "
                        "from read_parquet({F})",
                        "lineitem-zstd.parquet");
    if (o) {
        char *mine = ot_csv(r), *ms = ot_sorted(mine), *os = ot_sorted(o);
        if (strcmp(ms, os)) {
            /* Show the first differing line. */
            size_t at = 0;
            while (ms[at] && ms[at] == os[at])
                at++;
            while (at > 0 && ms[at - 1] != '\n')
                at--;
            fail_msg("differs from DuckDB at:\n mine:   %.200s\n duckdb: %.200s", ms + at, os + at);
        }
        free(mine), free(ms), free(os), free(o);
    } else {
        print_message("oracle not installed: DuckDB comparison skipped\n");
    }
    ex_result_destroy(r);
}

static void test_pass_through(void **state)
{
    pa_type I = et_t(PA_TYPE_INTEGER), V = et_t(PA_TYPE_VARCHAR);
    pa_column cols2[2] = {et_random(I, 2000, 10), et_random(V, 2000, 10)};
    dv_chunk *ch[1] = {ot_chunk(D, cols2, 2)};
    const char *names[] = {"a", "s"};
    ex_op *src = ot_handsrc(P, ch, 1, names), *pr;
    ex_expr *ex[3] = {ex_expr_col(P, src, 1, &E), ex_expr_arith(P, EX_MUL, ex_expr_col(P, src, 0, &E),
                                                                  ex_expr_int(P, 3, &E), &E),
                      ex_expr_col(P, src, 0, &E)};
    assert_int_equal(ex_project(P, src, ex, NULL, 3, &pr, &E), PA_OK);
    assert_string_equal(ex_op_column_name(pr, 0), "s");
    assert_string_equal(ex_op_column_name(pr, 1), "col1");
    int rc;
    ex_result *r = ot_run(D, P, pr, EX_MODE_OVERLAPPED, &rc, NULL);
    assert_int_equal(rc, PA_OK);
    assert_int_equal(r->n_chunks, 1);
    const dv_chunk *c = r->chunks[0];
    /* References view the input's buffers (seen where the result stays in
     * device memory the host reads; elsewhere it is a download). */
    if (dv_host_visible(D)) {
        assert_ptr_equal(c->columns[0].data, ch[0]->columns[1].data);
        assert_ptr_equal(c->columns[0].offsets, ch[0]->columns[1].offsets);
        assert_ptr_equal(c->columns[2].data, ch[0]->columns[0].data);
        assert_ptr_equal(c->columns[2].validity, ch[0]->columns[0].validity);
    }
    for (int64_t i = 0; i < 2000; i++) {
        assert_int_equal(pa_column_valid(&c->columns[1], i), pa_column_valid(&cols2[0], i));
        if (pa_column_valid(&cols2[0], i))
            assert_int_equal(et_i32(&c->columns[1], i), 3 * et_i32(&cols2[0], i));
        assert_int_equal(pa_column_valid(&c->columns[2], i), pa_column_valid(&cols2[0], i));
        assert_int_equal(et_i32(&c->columns[2], i), et_i32(&cols2[0], i));
        assert_int_equal(pa_column_valid(&c->columns[0], i), pa_column_valid(&cols2[1], i));
        assert_int_equal(et_slen(&c->columns[0], i), et_slen(&cols2[1], i));
        assert_memory_equal(et_sp(&c->columns[0], i), et_sp(&cols2[1], i), (size_t)et_slen(&cols2[1], i));
    }
    ex_result_destroy(r);
    dv_chunk_destroy(ch[0]);
    et_col_free(&cols2[0]), et_col_free(&cols2[1]);
}

static void test_runtime_error_and_memory(void **state)
{
    /* l_extendedprice * l_extendedprice * l_extendedprice overflows DECIMAL(18,6). */
    ex_op *s = ot_scan(P, "lineitem-zstd.parquet", cols, 9), *pr;
    ex_expr *p3 = ex_expr_arith(P, EX_MUL, ex_expr_arith(P, EX_MUL, ex_expr_col(P, s, 3, &E), ex_expr_col(P, s, 3, &E), &E),
                                ex_expr_col(P, s, 3, &E), &E);
    assert_int_equal(ex_project(P, s, &p3, NULL, 1, &pr, &E), PA_OK);
    int rc;
    char msg[512];
    ex_result *r = ot_run(D, P, pr, EX_MODE_CHUNKED, &rc, msg);
    assert_null(r);
    assert_int_equal(rc, PA_EOVERFLOW);
    assert_non_null(strstr(msg, "multiplication"));
    /* Memory limit: PROJECT's scratch does not fit. */
    pa_column c1[1] = {et_random(et_t(PA_TYPE_BIGINT), 3000, 0)};
    dv_chunk *ch[1] = {ot_chunk(D, c1, 1)};
    const char *names[] = {"a"};
    for (int round = 0; round < 2; round++) {
        ex_plan *p;
        assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
        ex_op *src = ot_handsrc(p, ch, 1, names), *q;
        ex_expr *e = ex_expr_arith(p, EX_ADD, ex_expr_col(p, src, 0, &E), ex_expr_bigint(p, 1, &E), &E);
        assert_int_equal(ex_project(p, src, &e, NULL, 1, &q, &E), PA_OK);
        pa_mempool_stats ds;
        dv_memory_stats(D, &ds, NULL);
        dv_set_memory_limit(D, round == 0 ? ds.current + 4096 : 0);
        r = ot_run(D, p, q, EX_MODE_OVERLAPPED, &rc, msg);
        if (round == 0) {
            assert_int_equal(rc, PA_ENOMEM);
            assert_non_null(strstr(msg, "PROJECT"));
        } else {
            assert_int_equal(rc, PA_OK);
            assert_int_equal(r->n_rows, 3000);
            assert_true(et_i64(&r->chunks[0]->columns[0], 7) == et_i64(&c1[0], 7) + 1);
            ex_result_destroy(r);
        }
        ex_plan_destroy(p);
    }
    dv_chunk_destroy(ch[0]);
    et_col_free(&c1[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_versus_duckdb, each_setup, each_teardown),
        cmocka_unit_test_setup_teardown(test_pass_through, each_setup, each_teardown),
        cmocka_unit_test_setup_teardown(test_runtime_error_and_memory, each_setup, each_teardown),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
