/*
 * test_sim_queries.c - SQL queries on the `sim` device give the same rows as
 * on `cpu`, and synchronise the host with the device only where the
 * scheduler chose to: one drain at the query's end, two for the result's
 * download (none when it has no rows), and one per parked worker. Any other
 * host wait, an early read of a kernel's pinned output (poisoned on sim) or
 * a host access to device memory (a fault on sim) fails here. Queries run in
 * every execution mode and with one and two workers.
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

typedef struct side {
    dv_device *dev;
    sql_session *s;
} side;

static side cpu, sim;

static void open_side(side *x, const char *spec)
{
    const char *d = getenv("PISTA_TEST_DATA");
    char dir[600];
    snprintf(dir, sizeof dir, "%s/parquet/sf0.01", d ? d : "tests/data");
    dv_options o = {.spec = spec, .cpu_threads = 2};
    pa_err e;
    pa_err_init(&e);
    if (dv_open(&o, &x->dev, &e) != PA_OK)
        fail_msg("open %s: %s", spec, e.msg);
    sql_options so = {.dev = x->dev, .data_dir = dir};
    if (sql_session_create(&so, &x->s, &e) != PA_OK)
        fail_msg("session on %s: %s", spec, e.msg);
    pa_err_close(&e);
}

static int setup(void **state)
{
    open_side(&cpu, "cpu");
    open_side(&sim, "sim");
    return 0;
}

static int teardown(void **state)
{
    sql_session_destroy(cpu.s);
    sql_session_destroy(sim.s);
    dv_close(cpu.dev);
    dv_close(sim.dev);
    return 0;
}

/* The rows of sql as CSV (caller frees); the counters of the run. */
static char *run(side *x, const char *sql, pa_counters *ctr)
{
    sql_result *r = NULL;
    pa_err e;
    pa_err_init(&e);
    if (sql_execute(x->s, sql, &r, &e) != PA_OK)
        fail_msg("%s on %s: %s", sql, dv_name(x->dev), e.msg);
    pa_err_close(&e);
    assert_int_equal(r->kind, SQL_RESULT_ROWS);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_true(ex_result_write_csv(r->rows, f, '|', true) >= 0);
    fclose(f);
    *ctr = r->rows->stats.counters;
    sql_result_destroy(r);
    return buf;
}

/* Same rows on both devices; on sim only the scheduler's syncs. */
static void check(const char *sql, int mode, int threads)
{
    pa_counters c, s;
    char *want = run(&cpu, sql, &c);
    char *got = run(&sim, sql, &s);
    if (strcmp(want, got) != 0)
        fail_msg("%s (mode %d, %d threads): sim gave\n%s\ncpu gave\n%s", sql, mode, threads, got, want);
    bool rows = strchr(want, '\n') != NULL && strchr(want, '\n')[1] != '\0';
    int64_t expected = 1 + (rows ? 2 : 0) + s.v[PA_CTR_WORKER_PARKS];
    if (s.v[PA_CTR_HOST_SYNCS] != expected)
        fail_msg("%s (mode %d, %d threads): %lld host syncs on sim, expected %lld (%lld parked workers)", sql, mode,
                 threads, (long long)s.v[PA_CTR_HOST_SYNCS], (long long)expected,
                 (long long)s.v[PA_CTR_WORKER_PARKS]);
    assert_true(!rows || s.v[PA_CTR_COPY_OPS] > 0);   /* at least the download */
    free(want);
    free(got);
}

/* Every mode and worker count. */
static void check_all(const char *sql)
{
    static const ex_mode modes[] = {EX_MODE_OVERLAPPED, EX_MODE_CHUNKED, EX_MODE_BLOCKING};
    for (int m = 0; m < 3; m++)
        for (int t = 1; t <= 2; t++) {
            sql_session_set_mode(cpu.s, modes[m]);
            sql_session_set_mode(sim.s, modes[m]);
            sql_session_set_threads(cpu.s, t);
            sql_session_set_threads(sim.s, t);
            check(sql, (int)modes[m], t);
        }
}

static void test_scan_filter_project(void **state)
{
    check_all("select n_name, n_regionkey from nation where n_regionkey = 1");
    check_all("select n_name from nation where n_regionkey + 0 = 1");
    check_all("select substr(n_name, 2, 3), n_nationkey * 2, "
              "case when n_nationkey > 1 then n_comment else 'short' end from nation where n_nationkey < 4");
    check_all("select l_orderkey, l_extendedprice * (1 - l_discount), l_comment from lineitem "
              "where l_shipdate >= date '1995-01-01' and l_quantity < 3 and l_comment like '%ly%'");
    check_all("select o_orderkey, o_comment from orders where o_orderkey < 0");   /* no rows */
}

static void test_constants(void **state)
{
    check_all("select 1, 'a', null, 2.5, date '2020-02-29'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_filter_project),
        cmocka_unit_test(test_constants),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
