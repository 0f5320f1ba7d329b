/*
 * test_kconf_select.c - conformance of the selection kernels on the device
 * named by PISTA_TEST_DEVICE: kn_select from BOOLEAN columns with NULLs,
 * kn_filter (fused predicate program), and kn_gather of every type by a
 * selection (repeats, any order) or a range, into an output at an unaligned
 * row offset, with validity and strings in two passes. Empty, all-pass and
 * all-filtered inputs included. Checked on the host against plain loops.
 * Also kn_sequence (generate_series), up to the ends of BIGINT.
 */
#include "expr_testutil.h"

static et_dev X;

static int setup(void **state)
{
    X = et_dev_open(0);
    return 0;
}
static int teardown(void **state)
{
    et_dev_close(&X);
    return 0;
}

static int64_t *pinned64(void)
{
    int64_t *p = NULL;
    assert_int_equal(dv_host_alloc(X.d, 8, (void **)&p, NULL), PA_OK);
    return p;
}

static void check_select(const pa_column *pred, int64_t rows)
{
    pa_column d = et_to_dev(&X, pred);
    int32_t *sel = NULL;
    dv_alloc(X.d, (size_t)(rows + 1) * 4, (void **)&sel, NULL);
    int64_t *count = pinned64();
    kn_ctx ctx = {X.d, X.s};
    assert_int_equal(kn_select(&ctx, &d, rows, sel, count, NULL), PA_OK);
    dv_stream_sync(X.s, NULL);
    int32_t *h = malloc((size_t)(rows + 1) * 4);
    et_down(&X, h, sel, (size_t)*count * 4);
    int64_t k = 0;
    for (int64_t i = 0; i < rows; i++)
        if (et_valid(pred, i) && et_b(pred, i)) {
            assert_true(k < *count);
            assert_int_equal(h[k++], i);
        }
    assert_int_equal(k, *count);
    free(h);
    dv_host_free(X.d, count);
    dv_free(X.d, sel);
    et_dcol_free(&X, &d);
}

static void test_select(void **state)
{
    int64_t sizes[] = {0, 1, 7, 64, 1000, 5000, 300001};   /* the last: several scan tiles */
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int64_t n = sizes[k];
        for (int mode = 0; mode < 4; mode++) {   /* random+NULLs, all true, all false, random no NULLs */
            pa_column p = et_random(et_t(PA_TYPE_BOOLEAN), n, mode == 0 ? 20 : 0);
            for (int64_t i = 0; i < n; i++)
                if (mode == 1 || mode == 2)
                    ((uint8_t *)p.data)[i] = mode == 1;
            check_select(&p, n);
            et_col_free(&p);
        }
    }
}

static void test_filter_program(void **state)
{
    ex_plan *P;
    pa_err E;
    pa_err_init(&E);
    assert_int_equal(ex_plan_create(&P, NULL), PA_OK);
    pa_type I = et_t(PA_TYPE_INTEGER), V = et_t(PA_TYPE_VARCHAR);
    const int64_t n = 3000;
    pa_column in[2] = {et_random(I, n, 15), et_random(V, n, 15)};
    ex_expr *preds[3] = {
        ex_expr_or(P, ex_expr_cmp(P, EX_LT, ex_expr_col_typed(P, 0, I, &E), ex_expr_int(P, -20000, &E), &E),
                   ex_expr_like(P, ex_expr_col_typed(P, 1, V, &E), "%a%", false, &E), &E),
        ex_expr_cmp(P, EX_GT, ex_expr_col_typed(P, 0, I, &E), ex_expr_int(P, 1000000, &E), &E),   /* none */
        ex_expr_is_null(P, ex_expr_col_typed(P, 0, I, &E), true, &E),
    };
    pa_column d[2] = {et_to_dev(&X, &in[0]), et_to_dev(&X, &in[1])};
    for (int k = 0; k < 3; k++) {
        kn_program *prog;
        pa_type types[2] = {I, V};
        assert_int_equal(ex__compile(&preds[k], 1, types, 2, &prog, &E), PA_OK);
        void *scratch = NULL;
        int32_t *sel = NULL;
        dv_alloc(X.d, kn_eval_scratch_size(prog), &scratch, NULL);
        dv_alloc(X.d, (size_t)n * 4, (void **)&sel, NULL);
        int64_t *count = pinned64();
        kn_ctx ctx = {X.d, X.s};
        if (kn_filter(&ctx, prog, d, 2, n, sel, count, scratch, NULL, 0, &E) != PA_OK)
            fail_msg("kn_filter: %s", E.msg);
        dv_stream_sync(X.s, NULL);
        int32_t *h = malloc((size_t)n * 4);
        et_down(&X, h, sel, (size_t)*count * 4);
        int64_t j = 0;
        for (int64_t i = 0; i < n; i++) {
            bool a_lt = et_valid(&in[0], i) && et_i32(&in[0], i) < -20000;
            bool s_a = et_valid(&in[1], i) && memchr(et_sp(&in[1], i), 'a', (size_t)et_slen(&in[1], i));
            bool want = k == 0 ? (a_lt || s_a) : k == 1 ? false : et_valid(&in[0], i);
            if (want)
                assert_int_equal(h[j++], i);
        }
        assert_int_equal(j, *count);
        if (k == 1)
            assert_int_equal(*count, 0);
        free(h);
        dv_host_free(X.d, count);
        dv_free(X.d, sel);
        dv_free(X.d, scratch);
        pa_free(prog);
    }
    et_dcol_free(&X, &d[0]), et_dcol_free(&X, &d[1]);
    et_col_free(&in[0]), et_col_free(&in[1]);
    ex_plan_destroy(P);
    pa_err_close(&E);
}

/* Gather n rows of in by sel (or the range at in_at) to out row out_at. */
static void check_gather(const pa_column *in, const int32_t *sel, int64_t in_at, int64_t n, int64_t out_at)
{
    kn_ctx ctx = {X.d, X.s};
    pa_column din = et_to_dev(&X, in);
    int32_t *dsel = sel ? et_up(&X, sel, (size_t)n * 4) : NULL;
    pa_column dout;
    memset(&dout, 0, sizeof dout);
    dout.type = in->type;
    dout.length = out_at + n;
    int64_t bytes = 0;
    if (in->type.id == PA_TYPE_VARCHAR) {
        int64_t *b = pinned64();
        assert_int_equal(kn_gather_str_bytes(&ctx, &din, dsel, in_at, n, b, NULL), PA_OK);
        dv_stream_sync(X.s, NULL);
        bytes = *b;
        dv_host_free(X.d, b);
        /* Pretend out_at earlier rows already hold 3 bytes each. */
        int32_t *off = calloc((size_t)(out_at + n + 1), 4);
        for (int64_t i = 0; i <= out_at; i++)
            off[i] = (int32_t)(3 * i);
        dout.offsets = et_up(&X, off, (size_t)(out_at + n + 1) * 4);
        free(off);
        dv_alloc(X.d, (size_t)(3 * out_at + bytes + 1), &dout.data, NULL);
    } else {
        dv_alloc(X.d, (size_t)(out_at + n + 1) * pa_type_bytes(in->type), &dout.data, NULL);
    }
    uint8_t *ones = malloc((size_t)(out_at + n + 8) / 8);
    memset(ones, 0xA5, (size_t)(out_at + n + 8) / 8);   /* bits before out_at must survive */
    dout.validity = et_up(&X, ones, (size_t)(out_at + n + 8) / 8);
    assert_int_equal(kn_gather(&ctx, &din, dsel, in_at, n, &dout, out_at, NULL), PA_OK);
    dv_stream_sync(X.s, NULL);
    pa_column h = et_col(in->type, out_at + n, true);
    et_down(&X, h.validity, dout.validity, (size_t)(out_at + n + 7) / 8);
    if (in->type.id == PA_TYPE_VARCHAR) {
        et_down(&X, h.offsets, dout.offsets, (size_t)(out_at + n + 1) * 4);
        free(h.data);
        h.data = malloc((size_t)h.offsets[out_at + n] + 1);
        et_down(&X, h.data, dout.data, (size_t)h.offsets[out_at + n]);
        assert_int_equal(h.offsets[out_at + n] - h.offsets[out_at], bytes);
    } else {
        et_down(&X, h.data, dout.data, (size_t)(out_at + n) * pa_type_bytes(in->type));
    }
    for (int64_t i = 0; i < out_at; i++)
        assert_int_equal(et_valid(&h, i), (ones[i >> 3] >> (i & 7)) & 1);
    int w = pa_type_bytes(in->type);
    for (int64_t k = 0; k < n; k++) {
        int64_t r = sel ? sel[k] : in_at + k, o = out_at + k;
        assert_int_equal(et_valid(&h, o), et_valid(in, r));
        if (in->type.id == PA_TYPE_VARCHAR) {
            assert_int_equal(et_slen(&h, o), et_slen(in, r));
            assert_memory_equal(et_sp(&h, o), et_sp(in, r), (size_t)et_slen(in, r));
        } else {
            assert_memory_equal((char *)h.data + o * w, (char *)in->data + r * w, (size_t)w);
        }
    }
    free(ones);
    et_col_free(&h);
    et_dcol_free(&X, &dout);
    if (dsel)
        dv_free(X.d, dsel);
    et_dcol_free(&X, &din);
}

static void test_gather(void **state)
{
    pa_type types[] = {et_t(PA_TYPE_BOOLEAN), et_t(PA_TYPE_INTEGER), et_t(PA_TYPE_BIGINT), et_t(PA_TYPE_DOUBLE),
                       et_dec(15, 2),         et_dec(30, 2),         et_t(PA_TYPE_DATE),   et_t(PA_TYPE_VARCHAR)};
    const int64_t n = 1500;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        for (int nulls = 0; nulls < 2; nulls++) {
            pa_column in = et_random(types[t], n, nulls ? 25 : 0);
            int32_t *sel = malloc(2000 * 4);
            for (int k = 0; k < 2000; k++)
                sel[k] = (int32_t)et_range(0, n - 1);   /* repeats, any order */
            check_gather(&in, sel, 0, 2000, 0);
            check_gather(&in, sel, 0, 2000, 13);
            check_gather(&in, sel, 0, 0, 5);
            check_gather(&in, NULL, 100, 1000, 0);
            check_gather(&in, NULL, 3, 77, 21);
            check_gather(&in, NULL, 0, n, 64);
            free(sel);
            et_col_free(&in);
        }
    }
    /* Bad calls are errors, not crashes. */
    pa_column a = et_col(et_t(PA_TYPE_INTEGER), 4, true), b = et_col(et_t(PA_TYPE_BIGINT), 4, false);
    kn_ctx ctx = {NULL, NULL};
    assert_int_equal(kn_gather(&ctx, &a, NULL, 0, 4, &b, 0, NULL), PA_EINVAL);
    b.type = et_t(PA_TYPE_INTEGER);
    assert_int_equal(kn_gather(&ctx, &a, NULL, 0, 4, &b, 0, NULL), PA_EINVAL);   /* NULLs into no validity */
    assert_int_equal(kn_gather(&ctx, &a, NULL, 2, 4, &a, 0, NULL), PA_EINVAL);   /* range past the end */
    et_col_free(&a), et_col_free(&b);
}

static void test_sequence(void **state)
{
    struct { int64_t start, step, n; } k[] = {
        {0, 1, 0}, {1, 1, 1}, {-10, 7, 300001}, {INT64_MAX - 3 * 999, 3, 1000}, {INT64_MAX, -1, 77},
        {INT64_MIN, (int64_t)1 << 62, 4}, {5, -2, 5000},
    };
    for (size_t c = 0; c < sizeof k / sizeof k[0]; c++) {
        int64_t n = k[c].n, *d = NULL;
        dv_alloc(X.d, (size_t)(n ? n : 1) * 8, (void **)&d, NULL);
        kn_ctx ctx = {X.d, X.s};
        assert_int_equal(kn_sequence(&ctx, k[c].start, k[c].step, n, d, NULL), PA_OK);
        assert_int_equal(dv_stream_sync(X.s, NULL), PA_OK);
        int64_t *h = malloc((size_t)(n ? n : 1) * 8);
        et_down(&X, h, d, (size_t)n * 8);
        __int128 want = k[c].start;
        for (int64_t i = 0; i < n; i++, want += k[c].step)
            if ((__int128)h[i] != want)
                fail_msg("case %zu row %lld: %lld", c, (long long)i, (long long)h[i]);
        free(h);
        dv_free(X.d, d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select),
        cmocka_unit_test(test_filter_program),
        cmocka_unit_test(test_gather),
        cmocka_unit_test(test_sequence),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
