/*
 * test_sim_queries.c - SQL queries on the `sim` device give the same rows as
 * on `cpu`, and synchronise the host with the device only where the
 * scheduler chose to: one drain at the query's end, one for the result's
 * download (two when a text column's byte count is not known on the host;
 * none when it has no rows), and one per parked worker. Any other
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
    /* Pages decoded on the host: the scan then knows its strings' bytes,
     * which the sync counts below rely on (pages the device decodes leave
     * them to the offsets, a second sync for the download: test_scan_device.sh
     * and the sim TPC-H and differential tests run that path). */
    dv_options o = {.spec = spec, .cpu_threads = 2, .page_decode = "host"};
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
static char *run(side *x, const char *sql, pa_counters *ctr, int *download_syncs)
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
    *download_syncs = r->rows->stats.download_syncs;
    sql_result_destroy(r);
    return buf;
}

/* Same rows on both devices; on sim only the scheduler's syncs. A query
 * with a WITH evaluated once runs `runs` times: each WITH run has its own
 * drain, and no download (its result stays on the device for ROWS). The
 * download takes `download` syncs (1 when the host knows the byte count of
 * every VARCHAR result column, 2 when it must read the offsets first), or
 * 0 for a query without rows. */
static void check_runs_dl(const char *sql, int mode, int threads, int runs, int download)
{
    pa_counters c, s;
    int dc, ds;
    char *want = run(&cpu, sql, &c, &dc);
    char *got = run(&sim, sql, &s, &ds);
    if (strcmp(want, got) != 0)
        fail_msg("%s (mode %d, %d threads): sim gave\n%s\ncpu gave\n%s", sql, mode, threads, got, want);
    bool rows = strchr(want, '\n') != NULL && strchr(want, '\n')[1] != '\0';
    assert_int_equal(dc, 0);   /* the cpu's memory is the host's: no download */
    if (ds != (rows ? download : 0))
        fail_msg("%s (mode %d, %d threads): the download took %d syncs, expected %d", sql, mode, threads, ds,
                 rows ? download : 0);
    int64_t expected = (runs - 1) + 1 + ds + s.v[PA_CTR_WORKER_PARKS];
    if (s.v[PA_CTR_HOST_SYNCS] != expected)
        fail_msg("%s (mode %d, %d threads): %lld host syncs on sim, expected %lld (%lld parked workers)", sql, mode,
                 threads, (long long)s.v[PA_CTR_HOST_SYNCS], (long long)expected,
                 (long long)s.v[PA_CTR_WORKER_PARKS]);
    assert_true(!rows || s.v[PA_CTR_COPY_OPS] > 0);   /* at least the download */
    free(want);
    free(got);
}

static void check_runs(const char *sql, int mode, int threads, int runs)
{
    check_runs_dl(sql, mode, threads, runs, 1);
}

static void check(const char *sql, int mode, int threads) { check_runs(sql, mode, threads, 1); }

static void set_run(ex_mode mode, int threads)
{
    sql_session_set_mode(cpu.s, mode);
    sql_session_set_mode(sim.s, mode);
    sql_session_set_threads(cpu.s, threads);
    sql_session_set_threads(sim.s, threads);
}

/* The default mode with two workers. */
static void check_one(const char *sql)
{
    set_run(EX_MODE_OVERLAPPED, 2);
    check(sql, EX_MODE_OVERLAPPED, 2);
}

/* Every mode and worker count; the download takes `download` syncs. */
static void check_all_dl(const char *sql, int download)
{
    static const ex_mode modes[] = {EX_MODE_OVERLAPPED, EX_MODE_CHUNKED, EX_MODE_BLOCKING};
    for (int m = 0; m < 3; m++)
        for (int t = 1; t <= 2; t++) {
            set_run(modes[m], t);
            check_runs_dl(sql, (int)modes[m], t, 1, download);
        }
}

/* The same, where the host knows every VARCHAR result column's bytes (the
 * scan, FILTER, joins, aggregation and sort set them): one sync. */
static void check_all(const char *sql) { check_all_dl(sql, 1); }

static void test_scan_filter_project(void **state)
{
    check_all("select n_name, n_regionkey from nation where n_regionkey = 1");
    check_all("select n_name from nation where n_regionkey + 0 = 1");
    /* Strings computed by PROJECT have only a bound on the host: the
     * download reads their offsets first. */
    check_all_dl("select substr(n_name, 2, 3), n_nationkey * 2, "
                 "case when n_nationkey > 1 then n_comment else 'short' end from nation where n_nationkey < 4",
                 2);
    check_all("select l_orderkey, l_extendedprice * (1 - l_discount), l_comment from lineitem "
              "where l_shipdate >= date '1995-01-01' and l_quantity < 3 and l_comment like '%ly%'");
    check_one("select o_orderkey, o_comment from orders where o_orderkey < 0");   /* no rows */
}

static void test_constants(void **state)
{
    check_all_dl("select 1, 'a', null, 2.5, date '2020-02-29'", 2);   /* 'a' is computed */
}

static void test_aggregates(void **state)
{
    check_all("select count(*) from nation");
    check_all("select l_returnflag, l_linestatus, count(*), sum(l_quantity), avg(l_extendedprice), "
              "min(l_shipdate), max(l_comment) from lineitem group by 1, 2 order by 1, 2");
    check_one("select count(distinct l_suppkey), count(distinct l_comment) from lineitem where l_quantity > 45");
    check_one("select distinct n_regionkey from nation order by 1");
    check_one("select o_custkey, count(*) from orders group by 1 having count(*) > 25 order by 2 desc, 1");
}

static void test_joins(void **state)
{
    check_all("select n_name, r_name from nation join region on n_regionkey = r_regionkey order by 1");
    check_one("select c_name, count(o_orderkey) from customer left join orders on c_custkey = o_custkey "
              "where c_custkey < 20 group by 1 order by 1");
    check_one("select s_name from supplier where s_suppkey in (select ps_suppkey from partsupp where ps_availqty < 50) "
              "order by 1");
    check_one("select p_name from part where not exists (select 1 from lineitem where l_partkey = p_partkey) "
              "order by 1 limit 5");
    check_all("select n1.n_name, n2.n_name from nation n1 join nation n2 on n1.n_regionkey = n2.n_regionkey "
              "and n1.n_nationkey < n2.n_nationkey order by 1, 2 limit 12");
}

static void test_sort_limit_union(void **state)
{
    check_all("select l_orderkey, l_comment from lineitem order by l_comment desc, l_orderkey limit 7 offset 3");
    check_one("select o_orderkey, o_orderpriority from orders order by o_orderdate, o_orderkey limit 13 offset 5");
    check_one("select n_name from nation union all select r_name from region order by 1");
    set_run(EX_MODE_OVERLAPPED, 2);
    check_runs("with t as (select n_regionkey, count(*) c from nation group by 1) "
               "select a.n_regionkey, a.c + b.c from t a join t b on a.n_regionkey = b.n_regionkey order by 1",
               EX_MODE_OVERLAPPED, 2, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_filter_project),
        cmocka_unit_test(test_constants),
        cmocka_unit_test(test_aggregates),
        cmocka_unit_test(test_joins),
        cmocka_unit_test(test_sort_limit_union),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
