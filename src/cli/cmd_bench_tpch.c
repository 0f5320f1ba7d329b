/*
 * cmd_bench_tpch.c - `pista bench tpch`: the 22 TPC-H queries through the SQL
 * front end (one in-process session over --data), each timed cold (after the
 * data files were dropped from the OS page cache and the footer cache was
 * cleared) and warm (best of --runs), with rows and storage bytes read;
 * optionally next to DuckDB on the same Parquet files in the same run, and
 * checked against an answers folder. A table on stdout; tpch.csv and
 * tpch.png in --out.
 */
#include "cli/bench_tpch.h"
#include "cli/cli.h"
#include "sql/sql.h"
#include "storage/storage.h"
#include "tpch/tpch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct bt_opts {
    const char *data, *check, *out, *query_dir;
    int queries[22], n_queries;
    int runs;
    bool vs_duckdb;
    ex_mode mode;
    uint64_t seed;
    cli_global g;
} bt_opts;

#define BT_OPTIONS "--data DIR [--queries 1-22|1,3,5] [--runs N] [--vs duckdb|none] [--out DIR] [--threads N] " \
                   "[--mode overlapped|chunked|blocking] [--check ANSWERS_DIR] [--query-dir DIR | --seed S] "      \
                   "[--device D]"

/* "1-22", "1,3,5", "1-5,9": in the order given, each query once. */
static int parse_queries(bt_opts *o, const char *spec)
{
    bool seen[23] = {0};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    o->n_queries = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        long a = strtol(t, &end, 10), b = a;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        if (*end || a < 1 || b > 22 || a > b)
            return cli_usage("bench tpch: --queries: '%s' is not a query number or range within 1-22", t);
        for (long q = a; q <= b; q++)
            if (!seen[q]) {
                seen[q] = true;
                o->queries[o->n_queries++] = (int)q;
            }
    }
    return o->n_queries ? 0 : cli_usage("bench tpch: --queries: no query in '%s'", spec);
}

static int parse_args(bt_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    cli_global_defaults(&o->g);
    o->runs = 3;
    for (int q = 1; q <= 22; q++)
        o->queries[o->n_queries++] = q;
    for (int i = 0; i < argc;) {
        int r = cli_global_option(&o->g, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return cli_usage("bench tpch: unknown option or missing value '%s' (%s)", a, BT_OPTIONS);
        i += 2;
        if (!strcmp(a, "--data")) {
            o->data = v;
        } else if (!strcmp(a, "--check")) {
            o->check = v;
        } else if (!strcmp(a, "--out")) {
            o->out = v;
        } else if (!strcmp(a, "--query-dir")) {
            o->query_dir = v;
        } else if (!strcmp(a, "--seed")) {
            o->seed = strtoull(v, NULL, 10);
        } else if (!strcmp(a, "--runs")) {
            if ((o->runs = atoi(v)) < 1 || o->runs > 100)
                return cli_usage("bench tpch: --runs must be 1..100");
        } else if (!strcmp(a, "--vs")) {
            if (strcmp(v, "duckdb") && strcmp(v, "none"))
                return cli_usage("bench tpch: --vs duckdb|none");
            o->vs_duckdb = !strcmp(v, "duckdb");
        } else if (!strcmp(a, "--mode")) {
            pa_err e;
            pa_err_init(&e);
            int bad = ex_mode_parse(v, &o->mode, &e) != PA_OK;
            pa_err_close(&e);
            if (bad)
                return cli_usage("bench tpch: bad mode '%s' (overlapped, chunked, blocking)", v);
        } else if (!strcmp(a, "--queries")) {
            int rc = parse_queries(o, v);
            if (rc)
                return rc;
        } else {
            return cli_usage("bench tpch: unknown option '%s' (%s)", a, BT_OPTIONS);
        }
    }
    if (!o->data)
        return cli_usage("bench tpch: --data DIR is required (TPC-H Parquet files, e.g. from pista gen tpch)");
    if (o->query_dir && o->seed)
        return cli_usage("bench tpch: --query-dir and --seed exclude each other");
    return 0;
}

/* One sql_execute of text, timed. On success *rows, *bytes, *plan_s and,
 * when csv is not NULL, the result in the answers format (free()). */
static int run_once(sql_session *s, const char *text, double *secs, double *plan_s, int64_t *rows, int64_t *bytes,
                    char **csv, pa_err *err)
{
    sql_result *r = NULL;
    uint64_t t0 = pa_now_ns();
    int rc = sql_execute(s, text, &r, err);
    *secs = (double)(pa_now_ns() - t0) * 1e-9;
    if (rc != PA_OK)
        return rc;
    if (r->kind != SQL_RESULT_ROWS || !r->rows) {
        sql_result_destroy(r);
        return pa_error(err, PA_EINTERNAL, "the statement returned no rows result");
    }
    *plan_s = (double)r->ns_plan * 1e-9;
    *rows = r->rows->n_rows;
    *bytes = r->rows->stats.counters.v[PA_CTR_BYTES_READ];
    if (csv) {
        size_t len = 0;
        FILE *f = open_memstream(csv, &len);
        if (!f || ex_result_write_csv(r->rows, f, '|', true) < 0)
            rc = pa_error(err, PA_EIO, "formatting the result");
        if (f)
            fclose(f);
    }
    sql_result_destroy(r);
    return rc;
}

static int query_text(const bt_opts *o, int q, double sf, char **text, pa_err *err)
{
    if (!o->query_dir)
        return tp_query_text(q, o->seed, sf, text, err);
    char path[4096];
    snprintf(path, sizeof path, "%s/q%02d.sql", o->query_dir, q);
    if (!(*text = bt_read_file(path)))
        return pa_error(err, PA_EIO, "cannot read %s", path);
    return PA_OK;
}

/* Cold run, warm runs and DuckDB for one query; fills *m. */
static void measure(const bt_opts *o, sql_session *s, int threads, const char *views, double sf, bt_query *m,
                    int64_t *resident)
{
    pa_err err;
    pa_err_init(&err);
    char *text = NULL, *csv = NULL, why[256];
    int64_t files, bytes;
    m->duck_s = -1;
    m->duck_rows = -1;
    if (query_text(o, m->q, sf, &text, &err) != PA_OK)
        goto done;
    if (bt_evict_dir(o->data, &files, &bytes, resident, why, sizeof why) != 0) {
        pa_error(&err, PA_EIO, "%s", why);
        goto done;
    }
    pq_meta_cache_clear();
    double plan_s;
    int64_t bytes_read;
    if (run_once(s, text, &m->cold_s, &plan_s, &m->rows, &bytes_read, o->check ? &csv : NULL, &err) != PA_OK)
        goto done;
    if (csv)
        bt_check_answer(o->check, m->q, csv, m->check, sizeof m->check);
    m->warm_s = 1e30;
    for (int r = 0; r < o->runs; r++) {
        double secs;
        if (run_once(s, text, &secs, &plan_s, &m->rows, &bytes_read, NULL, &err) != PA_OK)
            goto done;
        if (secs < m->warm_s) {
            m->warm_s = secs;
            m->plan_s = plan_s;
            m->bytes_read = bytes_read;
        }
    }
    m->ok = true;
    if (o->vs_duckdb) {
        cli_duckdb_result d;
        if (cli_duckdb_time_setup(views, text, threads, o->runs, &d, why, sizeof why) == 0) {
            m->duck_s = d.seconds;
            m->duck_rows = d.n_rows;
        } else {
            snprintf(m->error, sizeof m->error, "DuckDB: %s", why);
        }
    }
done:
    if (!m->ok)
        snprintf(m->error, sizeof m->error, "%s", err.msg);
    free(csv);
    pa_free(text);
    pa_err_close(&err);
}

static void print_row(const bt_query *m, bool duck)
{
    char q[8];
    snprintf(q, sizeof q, "Q%d", m->q);
    if (!m->ok) {
        printf("%-5s %8s %9s %9s %10s", q, "-", "-", "-", "-");
        if (duck)
            printf(" %9s %8s", "-", "-");
        printf("  ERROR: %s\n", m->error);
        return;
    }
    printf("%-5s %8lld %9.4f %9.4f %10.1f", q, (long long)m->rows, m->cold_s, m->warm_s, m->bytes_read / 1e6);
    if (duck && m->duck_s > 0)
        printf(" %9.4f %7.2fx", m->duck_s, m->duck_s / m->warm_s);
    else if (duck)
        printf(" %9s %8s", "-", "-");
    printf("  %s", m->check);
    if (m->duck_rows >= 0 && m->duck_rows != m->rows)
        printf("  (DuckDB returned %lld rows)", (long long)m->duck_rows);
    if (m->error[0])
        printf("  (%s)", m->error);
    printf("\n");
}

/* Sums, the total ratio and the worst query. Returns the exit status: 1
 * when a query failed, differed from its answer or (with --vs duckdb) has
 * no DuckDB time. */
static int print_totals(const bt_opts *o, const bt_query *qs, int n)
{
    double cold = 0, warm = 0, ours_vs = 0, duck = 0, worst = 1e30;
    int ok = 0, bad = 0, worst_q = 0;
    for (int i = 0; i < n; i++) {
        const bt_query *m = &qs[i];
        if (!m->ok || (o->check && strcmp(m->check, "ok")) || (o->vs_duckdb && m->duck_s < 0))
            bad++;
        if (!m->ok)
            continue;
        ok++;
        cold += m->cold_s;
        warm += m->warm_s;
        if (m->duck_s > 0) {
            ours_vs += m->warm_s;
            duck += m->duck_s;
            if (m->duck_s / m->warm_s < worst) {
                worst = m->duck_s / m->warm_s;
                worst_q = m->q;
            }
        }
    }
    printf("%-5s %8s %9.3f %9.3f %10s", "total", "", cold, warm, "");
    if (o->vs_duckdb && duck > 0)
        printf(" %9.3f %7.2fx  worst: Q%d %.2fx", duck, duck / ours_vs, worst_q, worst);
    printf("\n%d of %d queries ran", ok, n);
    if (o->check) {
        int matched = 0;
        for (int i = 0; i < n; i++)
            matched += qs[i].ok && !strcmp(qs[i].check, "ok");
        printf(", %d matched the answers", matched);
    }
    if (o->vs_duckdb && duck > 0 && ours_vs != warm)
        printf(" (the DuckDB ratio covers the queries both ran: pista %.3fs)", ours_vs);
    printf("\n");
    return bad ? 1 : 0;
}

int cli_bench_tpch(int argc, char **argv)
{
    bt_opts o;
    int rc = parse_args(&o, argc, argv);
    if (rc)
        return rc;
    pa_err err;
    pa_err_init(&err);
    dv_device *dev = NULL;
    sql_session *s = NULL;
    bt_query *qs = NULL;
    char out_dir[4096], why[512], *views = NULL;
    int status = 1;
    dv_options dopt = {.spec = o.g.device, .memory_limit = o.g.memory_limit, .cpu_threads = o.g.threads, .page_decode = o.g.page_decode};
    if (dv_open(&dopt, &dev, &err) != PA_OK)
        goto fail;
    sql_options so = {.dev = dev, .threads = o.g.threads, .mode = o.mode, .data_dir = o.data};
    if (sql_session_create(&so, &s, &err) != PA_OK)
        goto fail;
    if (sql_table_count(s) == 0 && sql_register_dir(s, o.data, &err) != PA_OK)
        goto fail;
    /* SF from the orders rows (1.5 M per unit of SF): only a seeded Q11 uses it. */
    sql_table_info ti;
    double sf = sql_table_find(s, "orders", &ti, NULL) == PA_OK && ti.rows > 0 ? (double)ti.rows / 1.5e6 : 1.0;
    int threads = o.g.threads;
    if (!threads)
        threads = dv_cpu_threads(dev) ? pa_threadpool_size(dv_cpu_threads(dev)) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (o.out) {
        snprintf(out_dir, sizeof out_dir, "%s", o.out);
    } else {
        time_t now = time(NULL);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&now));
        snprintf(out_dir, sizeof out_dir, "bench/out/tpch-%s", stamp);
    }
    if (bt_mkdirs(out_dir) != 0) {
        pa_error(&err, PA_EIO, "cannot create %s: %s", out_dir, strerror(errno));
        goto fail;
    }
    int64_t n_files, data_bytes, resident_max;
    if (bt_evict_dir(o.data, &n_files, &data_bytes, &resident_max, why, sizeof why) != 0) {
        pa_error(&err, PA_EIO, "%s", why);
        goto fail;
    }
    if (!(qs = pa_calloc((size_t)o.n_queries, sizeof *qs)) || !(views = pa_malloc(16384))) {
        pa_error(&err, PA_ENOMEM, "out of memory");
        goto fail;
    }
    bt_duckdb_views(o.data, views, 16384);

    printf("data:    %s (SF %g, %lld files, %.1f MB)\ndevice:  %s (%s)\nthreads: %d%s, mode %s\n", o.data, sf, (long long)n_files, data_bytes / 1e6, dv_describe(dev),
           dv_selection(dev), threads, o.vs_duckdb ? " (pista and DuckDB)" : "", ex_mode_name(o.mode));
    if (o.query_dir)
        printf("queries: the files %s/qNN.sql\n", o.query_dir);
    else
        printf("queries: tp_query_text, %s\n", o.seed ? "parameters from --seed" : "validation parameters");
    printf("cold:    first run after the data files were dropped from the OS page cache\n"
           "         (posix_fadvise DONTNEED on every file) and the footer cache was cleared\n"
           "warm:    best of %d runs after the cold one; times are sql_execute (plan + run)\n", o.runs);
    if (o.vs_duckdb)
        printf("duckdb:  best of %d after a warm-up, views over read_parquet of the same files;\n"
               "         ratio = DuckDB time / pista time (> 1: pista is faster)\n", o.runs);
    printf("\n%-5s %8s %9s %9s %10s", "query", "rows", "cold s", "warm s", "read MB");
    if (o.vs_duckdb)
        printf(" %9s %8s", "duckdb s", "ratio");
    printf("  %s\n", o.check ? "answer" : "");
    fflush(stdout);

    resident_max = 0;
    for (int i = 0; i < o.n_queries; i++) {
        int64_t resident = 0;
        qs[i].q = o.queries[i];
        measure(&o, s, threads, views, sf, &qs[i], &resident);
        if (resident < 0 || resident_max < 0)
            resident_max = -1;
        else if (resident > resident_max)
            resident_max = resident;
        print_row(&qs[i], o.vs_duckdb);
        fflush(stdout);
    }
    status = print_totals(&o, qs, o.n_queries);
    if (resident_max > 0)
        printf("note: up to %.1f MB of the data files stayed in the page cache after eviction\n", resident_max / 1e6);
    else if (resident_max < 0)
        printf("note: could not check (mincore) that the data files left the page cache\n");

    if (bt_write_csv(out_dir, qs, o.n_queries, why, sizeof why) != 0) {
        fprintf(stderr, "pista: %s\n", why);
        status = 1;
    } else {
        char title[512];
        snprintf(title, sizeof title, "TPC-H SF %g, warm time per query (%d threads)", sf, threads);
        int pr = bt_plot(out_dir, qs, o.n_queries, title, why, sizeof why);
        printf("\nwrote %s/tpch.csv%s\n", out_dir, pr == 0 ? " and tpch.png" : "");
        if (pr == 1)
            printf("gnuplot is not installed (package gnuplot-nox): no tpch.png\n");
        else if (pr < 0)
            fprintf(stderr, "pista: tpch.png: %s\n", why);
    }
    goto done;
fail:
    cli_fail(&err);
done:
    pa_free(views);
    pa_free(qs);
    if (s)
        sql_session_destroy(s);
    if (dev)
        dv_close(dev);
    pa_err_close(&err);
    return status;
}
