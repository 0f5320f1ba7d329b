/*
 * cmd_bench_engine.c - `pista bench engine`: the hand-built TPC-H plans (Q1,
 * Q3, Q6, Q18) on a data directory in each execution mode, next to DuckDB
 * running the same query texts on the same Parquet files in the same run
 * (through bench/scan_vs_duckdb.mjs). Times are the best of --runs runs
 * after a warm-up run (the modes' runs take turns, so a slow spell of a
 * shared machine falls on every mode alike), page cache warm (both engines read the same files
 * just before); with --cache cold every run first drops the data files from
 * the OS page cache and clears the footer cache (DuckDB is then not run: its
 * times would be warm). The blk/ovl column is the blocking mode's best time
 * over the overlapped mode's; the median column the same of median times. With --check DIR the results are also compared
 * with the answers in DIR/qNN.csv.
 */
#include "cli/bench_tpch.h"
#include "cli/cli.h"
#include "exec/exec.h"
#include "storage/storage.h"
#include "tpch/tpch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct be_opts {
    const char *data, *check;
    int queries[8], n_queries;
    ex_mode modes[3];
    int n_modes;
    int runs;
    bool vs_duckdb, vs_explicit;
    bool cold;
    cli_global g;
} be_opts;

/* One run of query q in mode m; *secs, and the CSV text when want_csv. */
static int run_once(const be_opts *o, dv_device *dev, int q, ex_mode m, double *secs, char **csv, pa_err *err)
{
    ex_plan *plan = NULL;
    ex_result *r = NULL;
    ex_op *root;
    int rc = ex_plan_create(&plan, err);
    if (rc == PA_OK)
        rc = tp_plan_build(q, o->data, plan, &root, err);
    uint64_t t0 = pa_now_ns();
    ex_run_options ro = {.dev = dev, .mode = m, .threads = o->g.threads};
    if (rc == PA_OK)
        rc = ex_run(plan, root, &ro, &r, err);
    *secs = (double)(pa_now_ns() - t0) * 1e-9;
    if (rc == PA_OK && csv) {
        size_t len = 0;
        FILE *f = open_memstream(csv, &len);
        if (!f || ex_result_write_csv(r, f, '|', true) < 0)
            rc = pa_error(err, PA_EIO, "formatting the result of Q%d", q);
        if (f)
            fclose(f);
    }
    ex_result_destroy(r);
    ex_plan_destroy(plan);
    return rc;
}

static int check_answer(const char *dir, int q, const char *csv)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/q%02d.csv", dir, q);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    char *want = NULL;
    size_t cap = 0;
    ssize_t n = getdelim(&want, &cap, '\0', f);
    fclose(f);
    int same = n >= 0 && strcmp(want, csv) == 0;
    free(want);
    return same;
}

/* The DuckDB query: the spec text with the tables as CTEs over the files. */
static char *duckdb_sql(const char *data, int q, pa_err *err)
{
    static const char *const tables[] = {"region", "nation", "supplier", "customer",
                                         "part", "partsupp", "orders", "lineitem"};
    char *text = NULL;
    if (tp_query_text(q, 0, 1.0, &text, err) != PA_OK)
        return NULL;
    size_t cap = strlen(text) + 4096, len = 0;
    char *sql = pa_malloc(cap);
    if (!sql) {
        pa_free(text);
        pa_error(err, PA_ENOMEM, "out of memory");
        return NULL;
    }
    len += (size_t)snprintf(sql + len, cap - len, "with ");
    for (int i = 0; i < 8; i++) {
        char file[1024];
        snprintf(file, sizeof file, "%s/%s.parquet", data, tables[i]);
        FILE *probe = fopen(file, "rb");
        if (probe)
            fclose(probe);
        else   /* a directory of parts */
            snprintf(file, sizeof file, "%s/%s/*.parquet", data, tables[i]);
        len += (size_t)snprintf(sql + len, cap - len, "%s%s as (select * from read_parquet('%s'))", i ? ", " : "",
                                tables[i], file);
    }
    sql[len++] = '\n';
    /* The text without its comment lines and final ';'. */
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '-' && line[1] == '-')
            continue;
        len += (size_t)snprintf(sql + len, cap - len, "%s\n", line);
    }
    while (len && (sql[len - 1] == '\n' || sql[len - 1] == ';' || sql[len - 1] == ' '))
        sql[--len] = '\0';
    pa_free(text);
    return sql;
}

static int parse_args(be_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    cli_global_defaults(&o->g);
    o->runs = 3;
    o->vs_duckdb = true;
    static const int all[] = {1, 3, 6, 18};
    for (int i = 0; i < 4; i++)
        o->queries[o->n_queries++] = all[i];
    o->modes[0] = EX_MODE_OVERLAPPED, o->modes[1] = EX_MODE_CHUNKED, o->modes[2] = EX_MODE_BLOCKING;
    o->n_modes = 3;
    for (int i = 0; i < argc;) {
        int r = cli_global_option(&o->g, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return cli_usage("bench engine: %s needs a value", a);
        i += 2;
        if (!strcmp(a, "--data")) {
            o->data = v;
        } else if (!strcmp(a, "--check")) {
            o->check = v;
        } else if (!strcmp(a, "--runs")) {
            if ((o->runs = atoi(v)) < 1 || o->runs > 100)
                return cli_usage("bench engine: --runs must be 1..100");
        } else if (!strcmp(a, "--vs")) {
            if (strcmp(v, "duckdb") && strcmp(v, "none"))
                return cli_usage("bench engine: --vs duckdb|none");
            o->vs_duckdb = !strcmp(v, "duckdb");
            o->vs_explicit = true;
        } else if (!strcmp(a, "--cache")) {
            if (strcmp(v, "warm") && strcmp(v, "cold"))
                return cli_usage("bench engine: --cache warm|cold");
            o->cold = !strcmp(v, "cold");
        } else if (!strcmp(a, "--queries")) {
            o->n_queries = 0;
            char buf[128];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                int q = atoi(t);
                if (!tp_plan_available(q) || o->n_queries == 8)
                    return cli_usage("bench engine: no hand-built plan for query '%s' (1, 3, 6, 18)", t);
                o->queries[o->n_queries++] = q;
            }
        } else if (!strcmp(a, "--modes")) {
            o->n_modes = 0;
            char buf[128];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                pa_err e;
                pa_err_init(&e);
                if (o->n_modes == 3 || ex_mode_parse(t, &o->modes[o->n_modes++], &e) != PA_OK)
                    return cli_usage("bench engine: bad mode '%s' (overlapped, chunked, blocking)", t);
            }
        } else {
            return cli_usage("bench engine: unknown option '%s' (--data DIR --queries 1,3,6,18 --modes LIST "
                             "--runs N --cache warm|cold --vs duckdb|none --check ANSWERS_DIR --threads N --device D)",
                             a);
        }
    }
    if (!o->data)
        return cli_usage("bench engine: --data DIR is required (TPC-H Parquet files, e.g. from pista gen tpch)");
    return 0;
}

int cli_bench_engine(int argc, char **argv)
{
    be_opts o;
    int rc = parse_args(&o, argc, argv);
    if (rc)
        return rc;
    pa_err err;
    pa_err_init(&err);
    dv_device *dev = NULL;
    dv_options dopt = {.spec = o.g.device, .memory_limit = o.g.memory_limit, .cpu_threads = o.g.threads, .page_decode = o.g.page_decode};
    if (dv_open(&dopt, &dev, &err) != PA_OK)
        return cli_fail(&err);
    int threads = o.g.threads;
    if (!threads)
        threads = dv_cpu_threads(dev) ? pa_threadpool_size(dv_cpu_threads(dev)) : 4;
    if (o.cold && o.vs_duckdb) {
        if (o.vs_explicit) {
            dv_close(dev);
            pa_err_close(&err);
            return cli_usage("bench engine: --vs duckdb needs a warm cache (DuckDB's runs are warm)");
        }
        o.vs_duckdb = false;
    }
    int i_ovl = -1, i_blk = -1;
    for (int m = 0; m < o.n_modes; m++) {
        if (o.modes[m] == EX_MODE_OVERLAPPED)
            i_ovl = m;
        if (o.modes[m] == EX_MODE_BLOCKING)
            i_blk = m;
    }
    printf("data:    %s\ndevice:  %s (%s)\nthreads: %d (pista and DuckDB)\n", o.data, dv_describe(dev),
           dv_selection(dev), threads);
    if (o.cold)
        printf("times:   best of %d runs, each after dropping every data file from the page cache "
               "(posix_fadvise DONTNEED) and clearing the footer cache\n", o.runs);
    else
        printf("times:   best of %d after a warm-up, page cache warm\n", o.runs);
    printf("         the modes' runs take turns; blk/ovl = blocking / overlapped of the best times,\n"
           "         median = the same of the median times\n\n");
    printf("%-5s", "query");
    for (int m = 0; m < o.n_modes; m++)
        printf(" %11s", ex_mode_name(o.modes[m]));
    if (i_ovl >= 0 && i_blk >= 0)
        printf(" %8s %8s", "blk/ovl", "median");
    if (o.vs_duckdb)
        printf(" %11s %10s", "duckdb", "x duckdb");
    printf("%s\n", o.check ? " answer" : "");
    int status = 0;
    double sum_ours = 0, sum_duck = 0;
    for (int qi = 0; qi < o.n_queries && status == 0; qi++) {
        int q = o.queries[qi];
        printf("Q%-4d", q);
        fflush(stdout);
        double first = 0, best_overlapped = 0, mode_best[3] = {0}, mode_med[3] = {0};
        const char *verdict = "";
        /* Runs of the modes take turns (warm-ups first), so a slow spell of
         * the machine falls on every mode alike. */
        double *times = calloc((size_t)o.n_modes * (size_t)o.runs, sizeof *times);
        if (!times) {
            fprintf(stderr, "pista: bench engine: out of memory\n");
            status = 1;
            break;
        }
        char *csv = NULL;
        for (int r = 0; r <= o.runs && status == 0; r++) {   /* r == 0: warm-up (cold: the answer check) */
            for (int m = 0; m < o.n_modes && status == 0; m++) {
                double sec;
                if (o.cold) {
                    int64_t nf, nb, res;
                    char why[256];
                    if (bt_evict_dir(o.data, &nf, &nb, &res, why, sizeof why) != 0) {
                        printf("\n");
                        fprintf(stderr, "pista: bench engine: %s: %s\n", o.data, why);
                        status = 1;
                        break;
                    }
                    pq_meta_cache_clear();
                }
                if (run_once(&o, dev, q, o.modes[m], &sec, r == 0 && m == 0 && o.check ? &csv : NULL, &err) !=
                    PA_OK) {
                    printf("\n");
                    status = cli_fail(&err);
                    break;
                }
                if (r > 0)
                    times[m * o.runs + r - 1] = sec;
            }
        }
        if (csv) {
            int same = check_answer(o.check, q, csv);
            verdict = same > 0 ? " ok" : same == 0 ? " DIFFERENT" : " (no answer file)";
            if (same == 0)
                status = 1;
            free(csv);
        }
        for (int m = 0; m < o.n_modes && status == 0; m++) {
            double *t = times + m * o.runs;
            qsort(t, (size_t)o.runs, sizeof *t, cmp_double);
            mode_best[m] = t[0];
            mode_med[m] = o.runs % 2 ? t[o.runs / 2] : (t[o.runs / 2 - 1] + t[o.runs / 2]) / 2;
            printf(" %10.3fs", t[0]);
            if (m == 0)
                first = t[0];
            if (o.modes[m] == EX_MODE_OVERLAPPED)
                best_overlapped = t[0];
        }
        free(times);
        if (status != 0)
            break;
        if (i_ovl >= 0 && i_blk >= 0)
            printf(" %7.2fx %7.2fx", mode_best[i_blk] / mode_best[i_ovl], mode_med[i_blk] / mode_med[i_ovl]);
        double ours = best_overlapped ? best_overlapped : first;
        if (o.vs_duckdb) {
            char *sql = duckdb_sql(o.data, q, &err);
            cli_duckdb_result d;
            char why[256] = "";
            if (sql && cli_duckdb_time(sql, threads, o.runs, &d, why, sizeof why) == 0) {
                printf(" %10.3fs %9.2fx", d.seconds, ours / d.seconds);
                sum_ours += ours;
                sum_duck += d.seconds;
            } else {
                printf(" %11s %10s  (DuckDB: %s)", "-", "-", sql ? why : err.msg);
                if (o.vs_explicit)
                    status = 1;
                o.vs_duckdb = false;
            }
            pa_free(sql);
        }
        printf("%s\n", verdict);
    }
    if (status == 0 && sum_duck > 0)
        printf("\ntotal: pista %.3fs (overlapped, or the first mode), DuckDB %.3fs: %.2fx DuckDB's time\n",
               sum_ours, sum_duck, sum_ours / sum_duck);
    dv_close(dev);
    pa_err_close(&err);
    return status;
}
