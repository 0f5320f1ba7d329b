/*
 * test_op_filter.c - the FILTER operator through ex_run: TPC-H Q6's
 * predicate over lineitem Parquet files in every execution mode, checked
 * against a plain C loop over the unfiltered scan and against DuckDB (when
 * the oracle is installed); string and NULL predicates on supplier and
 * types.parquet; chunks that pass whole go on without a copy, empty ones
 * are dropped; a tiny memory limit fails naming FILTER and the device
 * serves the next query.
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

static const char *const q6cols[] = {"l_quantity", "l_extendedprice", "l_discount", "l_shipdate"};

static ex_expr *q6_pred(ex_op *in)
{
    ex_expr *lo = ex_expr_date(P, "1994-01-01", &E);
    ex_expr *sd = ex_expr_col(P, in, 3, &E);
    ex_expr *p = ex_expr_and(P, ex_expr_cmp(P, EX_GE, sd, lo, &E),
                             ex_expr_cmp(P, EX_LT, sd, ex_expr_date_add(P, lo, 1, EX_YEARS, &E), &E), &E);
    p = ex_expr_and(P, p,
                    ex_expr_between(P, ex_expr_col(P, in, 2, &E), ex_expr_decimal(P, "0.05", &E),
                                    ex_expr_decimal(P, "0.07", &E), false, &E),
                    &E);
    return ex_expr_and(P, p, ex_expr_cmp(P, EX_LT, ex_expr_col(P, in, 0, &E), ex_expr_int(P, 24, &E), &E), &E);
}

/* Sum of l_extendedprice * l_discount (scale 4) and row count of the rows
 * of a result holding the four Q6 columns that pass Q6, by plain C. */
static void q6_reference(const ex_result *r, bool filter, __int128 *sum, int64_t *rows)
{
    int32_t d0 = pa_date_from_ymd(1994, 1, 1), d1 = pa_date_from_ymd(1995, 1, 1);
    *sum = 0;
    *rows = 0;
    for (int c = 0; c < r->n_chunks; c++) {
        const dv_chunk *k = r->chunks[c];
        for (int64_t i = 0; i < k->length; i++) {
            int64_t q = et_i64(&k->columns[0], i), price = et_i64(&k->columns[1], i);
            int64_t disc = et_i64(&k->columns[2], i);
            int32_t sd = et_i32(&k->columns[3], i);
            if (!filter || (sd >= d0 && sd < d1 && disc >= 5 && disc <= 7 && q < 2400)) {
                *sum += (__int128)price * disc;
                (*rows)++;
            }
        }
    }
}

static void test_q6(void **state)
{
    const char *files[] = {"lineitem-rowgroup10000.parquet", "lineitem-zstd.parquet"};
    for (int f = 0; f < 2; f++) {
        /* Reference: the unfiltered scan, filtered here. */
        ex_plan *p0;
        assert_int_equal(ex_plan_create(&p0, NULL), PA_OK);
        int rc;
        ex_result *all = ot_run(D, p0, ot_scan(p0, files[f], q6cols, 4), EX_MODE_OVERLAPPED, &rc, NULL);
        assert_int_equal(rc, PA_OK);
        __int128 want;
        int64_t want_rows, total;
        q6_reference(all, true, &want, &want_rows);
        q6_reference(all, false, &want, &total);
        q6_reference(all, true, &want, &want_rows);
        ex_result_destroy(all);
        ex_plan_destroy(p0);
        assert_true(want_rows > 0 && want_rows < total);
        for (int m = 0; m < 3; m++) {
            ex_plan *p;
            assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
            ex_plan *keep = P;
            P = p;
            ex_op *s = ot_scan(p, files[f], q6cols, 4), *flt;
            assert_int_equal(ex_filter(p, s, q6_pred(s), &flt, &E), PA_OK);
            ex_result *r = ot_run(D, p, flt, (ex_mode)m, &rc, NULL);
            assert_int_equal(rc, PA_OK);
            __int128 got;
            int64_t got_rows, again;
            q6_reference(r, false, &got, &got_rows);
            q6_reference(r, true, &got, &again);   /* every row passes the reference too */
            assert_int_equal(got_rows, want_rows);
            assert_int_equal(again, want_rows);
            assert_true(got == want);
            for (int i = 0; i < r->stats.n_ops; i++)
                if (!strncmp(r->stats.ops[i].label, "FILTER", 6)) {
                    assert_int_equal(r->stats.ops[i].rows_in, total);
                    assert_int_equal(r->stats.ops[i].rows_out, want_rows);
                }
            for (int c = 0; c < r->n_chunks; c++)
                assert_true(r->chunks[c]->length > 0);   /* empty chunks dropped */
            ex_result_destroy(r);
            P = keep;
            ex_plan_destroy(p);
        }
        /* DuckDB agrees on the revenue (2 decimals) and the count. */
        char *o = ot_oracle("select count(*) as n, sum(l_extendedprice * l_discount) as revenue from read_parquet({F}) "
                            "where l_shipdate >= date '1994-01-01' and l_shipdate < date '1994-01-01' + interval 1 year "
                            "and l_discount between 0.05 and 0.07 and l_quantity < 24",
                            files[f]);
        if (o) {
            char mine[128], dec[64];
            pa_format_decimal128(want, 4, 2, dec, sizeof dec);
            snprintf(mine, sizeof mine, "n|revenue\n%lld|%s\n", (long long)want_rows, dec);
            assert_string_equal(o, mine);
            free(o);
        } else {
            print_message("oracle not installed: DuckDB comparison skipped\n");
        }
    }
}

/* Strings and NULLs: compared with DuckDB's rows (sorted). */
static void test_strings_and_nulls(void **state)
{
    struct {
        const char *file, *sql;
        int which;
    } cases[] = {
        {"supplier.parquet",
         "select s_suppkey, s_name from read_parquet({F}) where s_comment like '%Customer%Complaints%' "
         "or s_name like '%00_'", 0},
        {"types.parquet", "select id, name from read_parquet({F}) where name is null or name like 'v1%'", 1},
        {"types.parquet", "select id, name from read_parquet({F}) where not (name in ('v1', 'v2', 'v5'))", 2},
    };
    const char *scols[] = {"s_suppkey", "s_name", "s_comment"}, *tcols[] = {"id", "name"};
    const char *want_supp = NULL;
    (void)want_supp;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ex_plan *p;
        assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
        ex_plan *keep = P;
        P = p;
        ex_op *s, *f, *pr;
        ex_expr *pred;
        if (cases[k].which == 0) {
            s = ot_scan(p, cases[k].file, scols, 3);
            pred = ex_expr_or(p, ex_expr_like(p, ex_expr_col(p, s, 2, &E), "%Customer%Complaints%", false, &E),
                              ex_expr_like(p, ex_expr_col(p, s, 1, &E), "%00_", false, &E), &E);
        } else {
            s = ot_scan(p, cases[k].file, tcols, 2);
            ex_expr *name = ex_expr_col(p, s, 1, &E);
            if (cases[k].which == 1) {
                pred = ex_expr_or(p, ex_expr_is_null(p, name, false, &E), ex_expr_like(p, name, "v1%", false, &E), &E);
            } else {
                ex_expr *l[3] = {ex_expr_varchar(p, "v1", &E), ex_expr_varchar(p, "v2", &E), ex_expr_varchar(p, "v5", &E)};
                pred = ex_expr_not(p, ex_expr_in(p, name, l, 3, false, &E), &E);
            }
        }
        assert_int_equal(ex_filter(p, s, pred, &f, &E), PA_OK);
        ex_expr *two[2] = {ex_expr_col(p, f, 0, &E), ex_expr_col(p, f, 1, &E)};
        assert_int_equal(ex_project(p, f, two, NULL, 2, &pr, &E), PA_OK);
        int rc;
        ex_result *r = ot_run(D, p, pr, EX_MODE_OVERLAPPED, &rc, NULL);
        assert_int_equal(rc, PA_OK);
        assert_true(r->n_rows > 0);
        char *mine = ot_csv(r), *ms = ot_sorted(mine);
        char *o = ot_oracle(cases[k].sql, cases[k].file);
        if (o) {
            char *os = ot_sorted(o);
            assert_string_equal(ms, os);
            free(os);
            free(o);
        }
        if (cases[k].which == 1) {   /* ids 0,3,6.. are NULL; v1, v10..v19 match */
            for (int c = 0; c < r->n_chunks; c++)
                for (int64_t i = 0; i < r->chunks[c]->length; i++) {
                    int32_t id = et_i32(&r->chunks[c]->columns[0], i);
                    assert_true(id % 3 == 0 || id == 1 || (id >= 10 && id <= 19));
                }
        }
        free(mine), free(ms);
        ex_result_destroy(r);
        P = keep;
        ex_plan_destroy(p);
    }
}

/* Row k of c equals row i of the host columns h (INTEGER a, VARCHAR s). */
static void same_row(const dv_chunk *c, int64_t k, const pa_column *h, int64_t i)
{
    assert_int_equal(pa_column_valid(&c->columns[0], k), pa_column_valid(&h[0], i));
    assert_int_equal(et_i32(&c->columns[0], k), et_i32(&h[0], i));
    assert_int_equal(pa_column_valid(&c->columns[1], k), pa_column_valid(&h[1], i));
    assert_int_equal(et_slen(&c->columns[1], k), et_slen(&h[1], i));
    assert_memory_equal(et_sp(&c->columns[1], k), et_sp(&h[1], i), (size_t)et_slen(&h[1], i));
}

/* Hand-made chunks: all-pass chunks are the same chunk (no copy; where the
 * result stays in device memory the host reads, the very input chunk),
 * empty results are dropped, mixed ones are compacted with their NULLs.
 * Expected rows come from the host columns the chunks were made of. */
static void test_zero_copy_and_compaction(void **state)
{
    pa_type I = et_t(PA_TYPE_INTEGER), V = et_t(PA_TYPE_VARCHAR);
    pa_column cols[3][2];
    dv_chunk *ch[3];
    for (int k = 0; k < 3; k++) {
        cols[k][0] = et_random(I, 3000, 10);
        cols[k][1] = et_random(V, 3000, 10);
        for (int64_t i = 0; i < 3000; i++) {
            int32_t v = k == 0 ? 5 : k == 1 ? -5 : (int32_t)et_range(-10, 10);
            ((int32_t *)cols[k][0].data)[i] = v;
            if (k < 2)
                et_set_null(&cols[k][0], i, false);
        }
        ch[k] = ot_chunk(D, cols[k], 2);
    }
    const char *names[] = {"a", "s"};
    ex_op *src = ot_handsrc(P, ch, 3, names), *f;
    ex_expr *pred = ex_expr_cmp(P, EX_GT, ex_expr_col(P, src, 0, &E), ex_expr_int(P, 0, &E), &E);
    assert_int_equal(ex_filter(P, src, pred, &f, &E), PA_OK);
    int rc;
    ex_result *r = ot_run(D, P, f, EX_MODE_OVERLAPPED, &rc, NULL);
    assert_int_equal(rc, PA_OK);
    assert_int_equal(r->n_chunks, 2);
    if (dv_host_visible(D))
        assert_ptr_equal(r->chunks[0], ch[0]);   /* passed on, not copied */
    assert_int_equal(r->chunks[0]->length, 3000);
    for (int64_t i = 0; i < 3000; i++)
        same_row(r->chunks[0], i, cols[0], i);
    const dv_chunk *c = r->chunks[1];
    int64_t k = 0;
    for (int64_t i = 0; i < 3000; i++) {
        if (!pa_column_valid(&cols[2][0], i) || et_i32(&cols[2][0], i) <= 0)
            continue;
        same_row(c, k, cols[2], i);
        k++;
    }
    assert_int_equal(k, c->length);
    ex_result_destroy(r);
    for (int i = 0; i < 3; i++) {
        dv_chunk_destroy(ch[i]);
        et_col_free(&cols[i][0]), et_col_free(&cols[i][1]);
    }
}

static void test_memory_limit(void **state)
{
    pa_column cols[1] = {et_random(et_t(PA_TYPE_INTEGER), 5000, 10)};
    dv_chunk *ch[1] = {ot_chunk(D, cols, 1)};
    et_col_free(&cols[0]);
    const char *names[] = {"a"};
    for (int round = 0; round < 2; round++) {
        ex_plan *p;
        assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
        ex_op *src = ot_handsrc(p, ch, 1, names), *f;
        ex_expr *pred = ex_expr_cmp(p, EX_GT, ex_expr_col(p, src, 0, &E), ex_expr_int(p, 0, &E), &E);
        assert_int_equal(ex_filter(p, src, pred, &f, &E), PA_OK);
        pa_mempool_stats ds;
        dv_memory_stats(D, &ds, NULL);
        dv_set_memory_limit(D, round == 0 ? ds.current + 4096 : 0);
        int rc;
        char msg[512];
        ex_result *r = ot_run(D, p, f, EX_MODE_OVERLAPPED, &rc, msg);
        if (round == 0) {
            assert_int_equal(rc, PA_ENOMEM);
            assert_non_null(strstr(msg, "FILTER"));
            assert_null(r);
        } else {
            assert_int_equal(rc, PA_OK);
            assert_true(r->n_rows > 0);
            ex_result_destroy(r);
        }
        ex_plan_destroy(p);
    }
    dv_chunk_destroy(ch[0]);
}

static void test_builder_errors(void **state)
{
    ex_op *s = ot_scan(P, "region.parquet", NULL, 0), *f;
    assert_int_equal(ex_filter(P, s, ex_expr_col(P, s, 0, &E), &f, &E), PA_EINVAL);   /* not BOOLEAN */
    pa_err_clear(&E);
    ex_expr *bad = ex_expr_cmp(P, EX_EQ, ex_expr_col_typed(P, 7, et_t(PA_TYPE_INTEGER), &E), ex_expr_int(P, 1, &E), &E);
    assert_int_equal(ex_filter(P, s, bad, &f, &E), PA_EINVAL);   /* column 7 does not exist */
    pa_err_clear(&E);
    /* A failed builder's error comes through. */
    assert_int_equal(ex_filter(P, s, ex_expr_not(P, ex_expr_col(P, s, 9, &E), &E), &f, &E), PA_EINVAL);
    assert_non_null(strstr(E.msg, "column 9"));
    /* Constant predicates need no program. */
    pa_err_clear(&E);
    assert_int_equal(ex_filter(P, s, ex_expr_bool(P, false, &E), &f, &E), PA_OK);
    int rc;
    ex_result *r = ot_run(D, P, f, EX_MODE_CHUNKED, &rc, NULL);
    assert_int_equal(rc, PA_OK);
    assert_int_equal(r->n_rows, 0);
    ex_result_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_q6, each_setup, each_teardown),
        cmocka_unit_test_setup_teardown(test_strings_and_nulls, each_setup, each_teardown),
        cmocka_unit_test_setup_teardown(test_zero_copy_and_compaction, each_setup, each_teardown),
        cmocka_unit_test_setup_teardown(test_memory_limit, each_setup, each_teardown),
        cmocka_unit_test_setup_teardown(test_builder_errors, each_setup, each_teardown),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
