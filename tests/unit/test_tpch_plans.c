/*
 * test_tpch_plans.c - the engine end to end: the hand-built plans of TPC-H
 * Q1, Q3, Q6 and Q18 over the SF 0.01 Parquet files DuckDB wrote
 * (tests/data/parquet) return exactly the rows of the reference answers
 * (tests/data/tpch/answers/sf0.01, from DuckDB on dbgen's data), text for
 * text in the answers format, in every execution mode and with 1 and 2
 * workers, on the device of PISTA_TEST_DEVICE (default cpu). In overlapped
 * mode no host-device sync happens on the cpu device; on another device
 * only the scheduler's (see test_sim_queries.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "tpch/tpch.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = '\0';
    fclose(f);
    return s;
}

static void run_query(int q, ex_mode mode, int threads)
{
    const char *data = getenv("PISTA_TEST_DATA");
    assert_non_null(data);
    char dir[1024], answer[1024];
    snprintf(dir, sizeof dir, "%s/parquet", data);
    snprintf(answer, sizeof answer, "%s/tpch/answers/sf0.01/q%02d.csv", data, q);
    char *want = slurp(answer);
    assert_non_null(want);

    pa_err err;
    pa_err_init(&err);
    dv_device *dev;
    const char *spec = getenv("PISTA_TEST_DEVICE");
    dv_options dopt = {.spec = spec && *spec ? spec : "cpu"};
    assert_int_equal(dv_open(&dopt, &dev, &err), PA_OK);
    ex_plan *plan;
    assert_int_equal(ex_plan_create(&plan, &err), PA_OK);
    ex_op *root;
    int rc = tp_plan_build(q, dir, plan, &root, &err);
    if (rc != PA_OK)
        fail_msg("Q%d plan: %s", q, err.msg);
    ex_run_options o = {.dev = dev, .mode = mode, .threads = threads};
    ex_result *r;
    rc = ex_run(plan, root, &o, &r, &err);
    if (rc != PA_OK)
        fail_msg("Q%d %s: %s", q, ex_mode_name(mode), err.msg);

    char *got = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&got, &len);
    assert_true(ex_result_write_csv(r, m, '|', true) >= 0);
    fclose(m);
    if (strcmp(got, want) != 0)
        fail_msg("Q%d %s threads %d differs from the answer:\n--- got\n%s--- want\n%s", q, ex_mode_name(mode),
                 threads, got, want);
    /* The drain at the end, one for the result's download (the host knows
     * the byte count of every text column these queries return: they come
     * from the scan, joins, aggregation and sort), one per parked worker. */
    const int64_t *ctr = r->stats.counters.v;
    if (dv_kind_of(dev) == DV_KIND_CPU && mode == EX_MODE_OVERLAPPED)
        assert_int_equal(ctr[PA_CTR_HOST_SYNCS], 0);
    else if (dv_kind_of(dev) != DV_KIND_CPU) {
        assert_int_equal(r->stats.download_syncs, r->n_rows ? 1 : 0);
        assert_int_equal(ctr[PA_CTR_HOST_SYNCS], 1 + r->stats.download_syncs + ctr[PA_CTR_WORKER_PARKS]);
    }
    assert_true(r->stats.counters.v[PA_CTR_BYTES_READ] > 0);
    free(got);
    free(want);
    ex_result_destroy(r);
    ex_plan_destroy(plan);
    dv_close(dev);
    pa_err_close(&err);
}

static void all_modes(int q)
{
    static const ex_mode modes[] = {EX_MODE_OVERLAPPED, EX_MODE_CHUNKED, EX_MODE_BLOCKING};
    for (int m = 0; m < 3; m++)
        for (int t = 1; t <= 2; t++)
            run_query(q, modes[m], t);
}

static void test_q1(void **state) { all_modes(1); }
static void test_q3(void **state) { all_modes(3); }
static void test_q6(void **state) { all_modes(6); }
static void test_q18(void **state) { all_modes(18); }

static void test_no_plan(void **state)
{
    pa_err err;
    pa_err_init(&err);
    ex_plan *plan;
    ex_op *root;
    assert_int_equal(ex_plan_create(&plan, &err), PA_OK);
    assert_false(tp_plan_available(2));
    assert_int_equal(tp_plan_build(2, "/nonexistent", plan, &root, &err), PA_EINVAL);
    ex_plan_destroy(plan);
    pa_err_close(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_q1),  cmocka_unit_test(test_q6), cmocka_unit_test(test_q3),
        cmocka_unit_test(test_q18), cmocka_unit_test(test_no_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
