/*
 * test_kconf_pairs.c - conformance of the joins on candidate pairs on the
 * device named by PISTA_TEST_DEVICE (default "cpu"): kn_join_cross resumed
 * at many capacities against the full enumeration, kn_join_pairs_filter
 * (compaction in place, per-row TRUE/NULL states) and kn_join_finish for
 * LEFT, SEMI, ANTI and MARK against host references on random inputs, with
 * NULL predicates and unknown rows. Sizes span several scan tiles.
 */
#include "hj_testutil.h"

static dv_device *g_dev;
static dv_stream *g_s;

static int setup(void **state)
{
    g_dev = hj_open(0);
    return dv_stream_create(g_dev, &g_s, NULL);
}

static int teardown(void **state)
{
    dv_stream_destroy(g_s);
    dv_close(g_dev);
    return 0;
}

static void test_cross(void **state)
{
    pa_err err;
    pa_err_init(&err);
    kn_ctx ctx = {g_dev, g_s};
    const int64_t shapes[][2] = {{0, 5}, {5, 0}, {1, 1}, {7, 3}, {40, 129}, {3000, 3}};
    const int64_t caps[] = {1, 2, 7, 128, 5000, 1 << 20};
    kn_join_cursor *cur;
    assert_int_equal(dv_host_alloc(g_dev, sizeof *cur, (void **)&cur, NULL), PA_OK);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
            int64_t rows = shapes[s][0], build = shapes[s][1], cap = caps[c], total = rows * build;
            if (total / cap > 2000)
                continue; /* too many calls */
            int32_t *pi, *bi;
            assert_int_equal(dv_alloc(g_dev, (size_t)cap * 4, (void **)&pi, NULL), PA_OK);
            assert_int_equal(dv_alloc(g_dev, (size_t)cap * 4, (void **)&bi, NULL), PA_OK);
            memset(cur, 0, sizeof *cur);
            int64_t seen = 0, calls = 0;
            for (;;) {
                HJ_OK(kn_join_cross(&ctx, rows, build, cur, cap, pi, bi, &err));
                HJ_OK(dv_stream_sync(g_s, &err));
                int64_t n = cur->n_out;
                assert_true(n >= 0 && n <= cap);
                int32_t *hp = hj_down(g_s, pi, (size_t)n * 4), *hb = hj_down(g_s, bi, (size_t)n * 4);
                for (int64_t k = 0; k < n; k++, seen++)
                    if (hp[k] != seen / build || hb[k] != seen % build)
                        fail_msg("cross %lldx%lld cap %lld: pair %lld is (%d, %d)", (long long)rows, (long long)build,
                                 (long long)cap, (long long)seen, hp[k], hb[k]);
                free(hp);
                free(hb);
                assert_int_equal(cur->n_null, 0);
                calls++;
                if (cur->done)
                    break;
                assert_int_equal(n, cap); /* only a full output stops early */
                assert_true(calls <= total / cap + 2);
            }
            assert_int_equal(seen, total);
            assert_int_equal(cur->row, rows);
            dv_free(g_dev, pi);
            dv_free(g_dev, bi);
        }
    dv_host_free(g_dev, cur);
    pa_err_close(&err);
}

/* n pairs over `rows` probe rows, in probe order; pred TRUE/FALSE/NULL. */
static void test_pairs_filter_and_finish(void **state)
{
    pa_err err;
    pa_err_init(&err);
    kn_ctx ctx = {g_dev, g_s};
    hj_rng r = {0x5eed1234abcdull};
    const int64_t sizes[] = {0, 1, 9, 1000, 9001};
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        int64_t n = sizes[z], rows = n / 3 + 1;
        int32_t *hp = malloc((size_t)(n + 1) * 4), *hb = malloc((size_t)(n + 1) * 4);
        uint8_t *hv = malloc((size_t)n + 1), *hval = calloc((size_t)n / 8 + 1, 1);
        uint8_t *hunk = malloc((size_t)rows);
        int64_t p = 0;
        for (int64_t i = 0; i < n; i++) {
            p += hj_below(&r, 3) == 0 && p + 1 < rows;
            hp[i] = (int32_t)p;
            hb[i] = (int32_t)hj_below(&r, 1000);
            hv[i] = (uint8_t)hj_below(&r, 2);
            hj_setbit(hval, i, hj_below(&r, 5) != 0);
        }
        for (int64_t i = 0; i < rows; i++)
            hunk[i] = hj_below(&r, 4) == 0;
        /* Host reference: kept pairs and row states. */
        uint8_t *want_state = calloc((size_t)rows, 1);
        int64_t kept = 0;
        int32_t *wp = malloc((size_t)(n + 1) * 4), *wb = malloc((size_t)(n + 1) * 4);
        for (int64_t i = 0; i < n; i++) {
            bool known = hj_bit(hval, i), yes = known && hv[i];
            want_state[hp[i]] |= (uint8_t)(yes ? KN_JOIN_ROW_TRUE : known ? 0 : KN_JOIN_ROW_NULL);
            if (yes) {
                wp[kept] = hp[i];
                wb[kept++] = hb[i];
            }
        }
        pa_column pred = {.type = hj_type(PA_TYPE_BOOLEAN, 0, 0), .length = n};
        pred.data = hj_up(g_dev, g_s, hv, (size_t)n);
        pred.validity = hj_up(g_dev, g_s, hval, (size_t)n / 8 + 1);
        int32_t *dp = hj_up(g_dev, g_s, hp, (size_t)n * 4), *db = hj_up(g_dev, g_s, hb, (size_t)n * 4);
        uint8_t *zero = calloc((size_t)rows, 1);
        uint8_t *dstate = hj_up(g_dev, g_s, zero, (size_t)rows);
        uint8_t *dunk = hj_up(g_dev, g_s, hunk, (size_t)rows);
        int64_t *count, *n_null;
        assert_int_equal(dv_host_alloc(g_dev, 8, (void **)&count, NULL), PA_OK);
        assert_int_equal(dv_host_alloc(g_dev, 8, (void **)&n_null, NULL), PA_OK);
        HJ_OK(dv_stream_sync(g_s, &err));
        HJ_OK(kn_join_pairs_filter(&ctx, &pred, n, dp, db, dstate, count, &err));
        HJ_OK(dv_stream_sync(g_s, &err));
        assert_int_equal(*count, kept);
        int32_t *gp = hj_down(g_s, dp, (size_t)kept * 4), *gb = hj_down(g_s, db, (size_t)kept * 4);
        uint8_t *gs = hj_down(g_s, dstate, (size_t)rows);
        assert_memory_equal(gp, wp, (size_t)kept * 4);
        assert_memory_equal(gb, wb, (size_t)kept * 4);
        assert_memory_equal(gs, want_state, (size_t)rows);
        free(gp);
        free(gb);
        free(gs);

        /* Finish every kind from the states. */
        int32_t *fp, *fb;
        uint8_t *mark, *mv;
        assert_int_equal(dv_alloc(g_dev, (size_t)rows * 4, (void **)&fp, NULL), PA_OK);
        assert_int_equal(dv_alloc(g_dev, (size_t)rows * 4, (void **)&fb, NULL), PA_OK);
        assert_int_equal(dv_alloc(g_dev, (size_t)rows, (void **)&mark, NULL), PA_OK);
        assert_int_equal(dv_alloc(g_dev, (size_t)rows / 8 + 1, (void **)&mv, NULL), PA_OK);
        const kn_join_kind kinds[] = {KN_JOIN_LEFT, KN_JOIN_SEMI, KN_JOIN_ANTI, KN_JOIN_MARK};
        for (int k = 0; k < 4; k++) {
            for (int with_unknown = 0; with_unknown < 2; with_unknown++) {
                kn_join_kind kind = kinds[k];
                HJ_OK(kn_join_finish(&ctx, kind, dstate, with_unknown ? dunk : NULL, rows, fp,
                                     kind == KN_JOIN_LEFT ? fb : NULL, mark, mv, count, n_null, &err));
                HJ_OK(dv_stream_sync(g_s, &err));
                int32_t *gfp = hj_down(g_s, fp, (size_t)*count * 4);
                int64_t w = 0, wn = 0;
                if (kind == KN_JOIN_MARK) {
                    assert_int_equal(*count, rows);
                    uint8_t *gm = hj_down(g_s, mark, (size_t)rows), *gv = hj_down(g_s, mv, (size_t)rows / 8 + 1);
                    for (int64_t i = 0; i < rows; i++) {
                        uint8_t s = want_state[i];
                        bool yes = s & KN_JOIN_ROW_TRUE;
                        bool null = !yes && ((s & KN_JOIN_ROW_NULL) || (with_unknown && hunk[i]));
                        assert_int_equal(gfp[i], i);
                        assert_int_equal(gm[i], yes);
                        assert_int_equal(hj_bit(gv, i), !null);
                        wn += null;
                    }
                    free(gm);
                    free(gv);
                } else {
                    int32_t *gfb = kind == KN_JOIN_LEFT ? hj_down(g_s, fb, (size_t)*count * 4) : NULL;
                    for (int64_t i = 0; i < rows; i++) {
                        bool yes = want_state[i] & KN_JOIN_ROW_TRUE;
                        if (kind == KN_JOIN_SEMI ? !yes : yes)
                            continue;
                        assert_true(w < *count);
                        assert_int_equal(gfp[w], i);
                        if (gfb)
                            assert_int_equal(gfb[w], -1);
                        w++;
                    }
                    assert_int_equal(*count, w);
                    wn = kind == KN_JOIN_LEFT ? w : 0;
                    free(gfb);
                }
                assert_int_equal(*n_null, wn);
                free(gfp);
            }
        }
        dv_free(g_dev, fp);
        dv_free(g_dev, fb);
        dv_free(g_dev, mark);
        dv_free(g_dev, mv);
        dv_free(g_dev, pred.data);
        dv_free(g_dev, pred.validity);
        dv_free(g_dev, dp);
        dv_free(g_dev, db);
        dv_free(g_dev, dstate);
        dv_free(g_dev, dunk);
        dv_host_free(g_dev, count);
        dv_host_free(g_dev, n_null);
        free(hp);
        free(hb);
        free(hv);
        free(hval);
        free(hunk);
        free(want_state);
        free(wp);
        free(wb);
        free(zero);
    }
    pa_err_close(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cross),
        cmocka_unit_test(test_pairs_filter_and_finish),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
