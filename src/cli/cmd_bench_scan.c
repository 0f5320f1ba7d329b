/*
 * cmd_bench_scan.c - `pista bench scan FILES... [--columns a,b] [--threads
 * N[,M...]] [--runs R] [--vs duckdb|none] [--device D] [--decode host|device|both]`:
 * the Parquet scan's throughput against DuckDB on the same files in the same
 * run. For each thread count: our full scan (every chunk pulled, waited for
 * on a stream of the bench's own and dropped, footers re-read each run, page
 * cache warm after one untimed pass; best of R runs; on a device that is not
 * host-visible with pages decoded on the host, on the device, or both, one
 * row each),
 * then DuckDB aggregating every selected column with `SET threads = N`
 * (bench/scan_vs_duckdb.mjs, timed inside node, also best of R after a
 * warm-up). Prints seconds, file MB/s, rows/s, process CPU seconds and the
 * ratio DuckDB time / our time (> 1: we are faster).
 */
#include "cli/cli.h"
#include "storage/storage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_THREAD_COUNTS 16

typedef struct bscan_opts {
    char **files;              /* expanded, owned */
    size_t n_files;
    uint64_t file_bytes;
    char **columns;            /* into the --columns argument */
    size_t n_columns;
    bool have_columns;
    int threads[MAX_THREAD_COUNTS];
    int n_threads;
    int runs;
    int vs;                    /* -1 auto, 0 none, 1 duckdb (explicit) */
    const char *device;
    uint64_t memory_limit;
    int decode;                /* bit 0: host decode, bit 1: device decode */
} bscan_opts;

typedef struct bscan_result {
    double seconds, cpu_seconds;
    int64_t rows;
    uint64_t bytes_read;
} bscan_result;

/* ------------------------------------------------------------- files */

static int add_path(bscan_opts *o, const char *p)
{
    struct stat st;
    if (stat(p, &st) != 0)
        return -1;
    char **nf = realloc(o->files, (o->n_files + 1) * sizeof *nf);
    if (!nf || !(nf[o->n_files] = strdup(p)))
        return -1;
    o->files = nf;
    o->n_files++;
    o->file_bytes += (uint64_t)st.st_size;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files of one argument the way the scan resolves them: a file, a
 * directory's *.parquet (sorted), or a glob. 0 ok, -1 nothing found. */
static int expand_path(bscan_opts *o, const char *p)
{
    struct stat st;
    if (stat(p, &st) == 0 && !S_ISDIR(st.st_mode))
        return add_path(o, p);
    char pattern[PATH_MAX];
    if (stat(p, &st) == 0)
        snprintf(pattern, sizeof pattern, "%s%s*.parquet", p, p[strlen(p) - 1] == '/' ? "" : "/");
    else
        snprintf(pattern, sizeof pattern, "%s", p);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0)
        return -1;
    qsort(g.gl_pathv, g.gl_pathc, sizeof *g.gl_pathv, cmp_str);
    int rc = 0;
    for (size_t k = 0; k < g.gl_pathc && rc == 0; k++)
        rc = add_path(o, g.gl_pathv[k]);
    globfree(&g);
    return rc;
}

/* ------------------------------------------------------------- our scan */

static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

/* One full scan: open (footers decoded again: the metadata cache is
 * cleared first, as DuckDB reads them per query), pull every chunk, drop
 * it. With names != NULL the output column names and types are kept there
 * (caller frees the names). */
static int scan_once(const bscan_opts *o, dv_device *dev, int threads, bool host_decode, bscan_result *r,
                     char ***names, pa_type **types, int *n_out, pa_err *err)
{
    pq_meta_cache_clear();
    pq_scan_options so;
    pq_scan_options_init(&so);
    so.paths = (const char *const *)o->files;
    so.n_paths = o->n_files;
    so.columns = o->have_columns ? (const char *const *)o->columns : NULL;
    so.n_columns = o->n_columns;
    so.device = dev;
    so.decode_threads = threads;   /* used when the device has no CPU pool */
    so.host_decode = host_decode;
    so.device_decode = !host_decode;
    pq_scan *scan = NULL;
    dv_stream *consumer = NULL;
    double c0 = cpu_now();
    uint64_t t0 = pa_now_ns();
    int rc = pq_scan_open(&so, &scan, err);
    if (rc == PA_OK && !dv_host_visible(dev))
        rc = dv_stream_create(dev, &consumer, err);
    int64_t rows = 0;
    while (rc == PA_OK) {
        dv_chunk *c;
        if ((rc = pq_scan_next(scan, &c, err)) != PA_OK || !c)
            break;
        rows += c->length;
        if (consumer) {   /* a consumer's wait: the device's work on c counts */
            rc = dv_chunk_wait_ready(c, consumer, err);
            dv_chunk_release(c, consumer);
        } else {
            dv_chunk_destroy(c);
        }
    }
    if (consumer) {
        int rs = dv_stream_sync(consumer, rc == PA_OK ? err : NULL);
        rc = rc == PA_OK ? rs : rc;
        dv_stream_destroy(consumer);
    }
    r->seconds = (double)(pa_now_ns() - t0) * 1e-9;
    r->cpu_seconds = cpu_now() - c0;
    r->rows = rows;
    if (scan) {
        pq_scan_stats st;
        pq_scan_get_stats(scan, &st);
        r->bytes_read = st.bytes_read;
        if (rc == PA_OK && names) {
            *n_out = pq_scan_n_columns(scan);
            *names = calloc((size_t)*n_out + 1, sizeof **names);
            *types = calloc((size_t)*n_out + 1, sizeof **types);
            for (int i = 0; *names && *types && i < *n_out; i++) {
                (*names)[i] = strdup(pq_scan_column_name(scan, i));
                (*types)[i] = pq_scan_column_type(scan, i);
            }
        }
    }
    pq_scan_close(scan);
    return rc;
}

/* ------------------------------------------------------------- DuckDB */

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t nc = (b->n + n + 1) * 2;
        char *np = realloc(b->p, nc);
        if (!np)
            return;
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

/* s with every `q` doubled (SQL quoting). */
static void sb_quoted(sbuf *b, const char *s, char q)
{
    sb_put(b, &q, 1);
    for (; *s; s++) {
        sb_put(b, s, 1);
        if (*s == q)
            sb_put(b, s, 1);
    }
    sb_put(b, &q, 1);
}

/* SELECT count(*), one aggregate per column FROM read_parquet([...]): the
 * aggregates make DuckDB decode every value (max for orderable columns,
 * sum(strlen) for strings: a byte count, no UTF-8 decoding). Caller frees. */
static char *duckdb_sql(const bscan_opts *o, char **names, const pa_type *types, int n)
{
    sbuf b = {0};
    sb_puts(&b, "SELECT count(*)");
    for (int i = 0; i < n; i++) {
        sb_puts(&b, types[i].id == PA_TYPE_VARCHAR ? ", sum(strlen(" : ", max(");
        sb_quoted(&b, names[i], '"');
        sb_puts(&b, types[i].id == PA_TYPE_VARCHAR ? "))" : ")");
    }
    sb_puts(&b, " FROM read_parquet([");
    for (size_t i = 0; i < o->n_files; i++) {
        if (i)
            sb_puts(&b, ", ");
        sb_quoted(&b, o->files[i], '\'');
    }
    sb_puts(&b, "])");
    return b.p;
}

/* ------------------------------------------------------------- report */

static void print_row(int threads, const char *engine, double secs, double cpu, int64_t rows, uint64_t bytes)
{
    printf("%-8d %-12s %10.4f %10.1f %12.0f %8.3f\n", threads, engine, secs, bytes / secs / 1e6, rows / secs, cpu);
}

static int run_bench(bscan_opts *o)
{
    pa_err err;
    pa_err_init(&err);
    int have_script = cli_duckdb_available();
    bool want_duck = o->vs != 0, duck_ok = want_duck;
    char why[256] = "";
    if (want_duck && !have_script) {
        snprintf(why, sizeof why, "bench/scan_vs_duckdb.mjs not found (set PISTA_SOURCE_DIR)");
        duck_ok = false;
    }
    char **names = NULL;
    pa_type *types = NULL;
    int n_out = 0, status = 1;
    char *sql = NULL;
    bool header = false;
    for (int t = 0; t < o->n_threads; t++) {
        int threads = o->threads[t];
        dv_options dopt = {.spec = o->device, .memory_limit = o->memory_limit, .cpu_threads = threads};
        dv_device *dev = NULL;
        int rc;
        if ((rc = dv_open(&dopt, &dev, &err)) != PA_OK)
            goto fail;
        /* Per decode side: an untimed pass (warms the page cache, the pools,
         * learns the columns), then the best of the runs. */
        bool visible = dv_host_visible(dev);
        bscan_result best = {0}, r = {0}, side[2] = {{0}};
        for (int h = 1; h >= 0 && rc == PA_OK; h--) {
            if (!visible && !(o->decode & (h ? 1 : 2)))
                continue;
            if (visible && !h)
                break;
            rc = scan_once(o, dev, threads, h, &r, names ? NULL : &names, &types, &n_out, &err);
            for (int k = 0; k < o->runs && rc == PA_OK; k++) {
                rc = scan_once(o, dev, threads, h, &r, NULL, NULL, NULL, &err);
                if (rc == PA_OK && (k == 0 || r.seconds < side[h].seconds))
                    side[h] = r;
            }
            best = side[h];   /* the device side's when both ran: DuckDB's ratio is against it */
        }
        if (rc == PA_OK && !header) {
            char sz[32];
            printf("files: %zu (%s, %.1f MB)  columns: %d  rows: %lld  bytes read per scan: %llu\n", o->n_files,
                   pa_format_size(o->file_bytes, sz, sizeof sz), o->file_bytes / 1e6, n_out, (long long)best.rows,
                   (unsigned long long)best.bytes_read);
            printf("device: %s; page cache warm (one untimed pass first); best of %d run%s; footers decoded "
                   "every run\n\n", dv_name(dev), o->runs, o->runs == 1 ? "" : "s");
            if (!visible)
                printf("pista:host decodes every page on the host and uploads the columns; pista:device hands "
                       "the pages it can to the device (README, \"Parquet pages on the device\")\n\n");
            printf("%-8s %-12s %10s %10s %12s %8s\n", "threads", "engine", "seconds", "file_MB/s", "rows/s", "cpu_s");
            header = true;
        }
        dv_close(dev);
        if (rc != PA_OK)
            goto fail;
        if (visible) {
            print_row(threads, "pista", best.seconds, best.cpu_seconds, best.rows, o->file_bytes);
        } else {
            if (o->decode & 1)
                print_row(threads, "pista:host", side[1].seconds, side[1].cpu_seconds, side[1].rows, o->file_bytes);
            if (o->decode & 2)
                print_row(threads, "pista:device", side[0].seconds, side[0].cpu_seconds, side[0].rows, o->file_bytes);
            if (o->decode == 3)
                printf("%-8d %-12s %10.2f   (host decode time / device decode time)\n", threads, "ratio",
                       side[1].seconds / side[0].seconds);
        }
        fflush(stdout);
        if (!duck_ok)
            continue;
        if (!sql && !(sql = duckdb_sql(o, names, types, n_out))) {
            pa_error(&err, PA_ENOMEM, "out of memory");
            goto fail;
        }
        cli_duckdb_result d = {0};
        if (cli_duckdb_time(sql, threads, o->runs, &d, why, sizeof why) != 0) {
            duck_ok = false;
            continue;
        }
        print_row(threads, "duckdb", d.seconds, d.cpu_seconds, d.rows, o->file_bytes);
        printf("%-8d %-12s %10.2f   (DuckDB %s time / pista time; > 1: pista is faster; cpu %.2f)\n", threads,
               "ratio", d.seconds / best.seconds, d.version, d.cpu_seconds / best.cpu_seconds);
        fflush(stdout);
        if (d.rows != best.rows) {
            fprintf(stderr, "pista: bench scan: DuckDB counted %lld rows, the scan %lld\n", (long long)d.rows,
                    (long long)best.rows);
            goto out;
        }
    }
    if (want_duck && !duck_ok) {
        printf("\nDuckDB not measured: %s\n", why);
        if (o->vs == 1) {
            fprintf(stderr, "pista: bench scan: --vs duckdb: %s\n", why);
            goto out;
        }
    }
    status = 0;
    goto out;
fail:
    cli_fail(&err);
out:
    for (int i = 0; names && i < n_out; i++)
        free(names[i]);
    free(names);
    free(types);
    free(sql);
    io_engine_shared_shutdown();
    pq_meta_cache_clear();
    pa_err_close(&err);
    return status;
}

/* ------------------------------------------------------------- options */

static int parse_threads(const char *v, bscan_opts *o)
{
    o->n_threads = 0;
    const char *p = v;
    while (*p) {
        char *end;
        long n = strtol(p, &end, 10);
        if (end == p || n < 1 || n > 1024 || o->n_threads == MAX_THREAD_COUNTS || (*end && *end != ','))
            return -1;
        o->threads[o->n_threads++] = (int)n;
        p = *end ? end + 1 : end;
    }
    return o->n_threads ? 0 : -1;
}

int cli_bench_scan(int argc, char **argv)
{
    static const char *usage =
        "usage: pista bench scan FILE|DIR|GLOB... [--columns a,b] [--threads N[,M...]] [--runs R]\n"
        "         [--vs duckdb|none] [--device D] [--memory-limit SIZE] [--decode host|device|both]\n"
        "  defaults: every column, --threads 1,2, --runs 3, --device cpu, DuckDB when available,\n"
        "  --decode both (on a device that is not host-visible: pages decoded on the host, and by the device)";
    bscan_opts o = {.runs = 3, .vs = -1, .n_threads = 2, .threads = {1, 2}, .decode = 3};
    cli_global g;
    cli_global_defaults(&g);
    const char *env_dev = getenv("PISTA_DEVICE");
    o.device = env_dev && *env_dev ? g.device : "cpu";
    int status = 2;
    for (int i = 0; i < argc;) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--threads") || !strcmp(a, "--columns") || !strcmp(a, "--runs") || !strcmp(a, "--vs") ||
            !strcmp(a, "--decode")) {
            if (!val) {
                cli_usage("bench scan: %s needs a value", a);
                goto out;
            }
            if (!strcmp(a, "--threads") && parse_threads(val, &o) != 0) {
                cli_usage("bench scan: --threads: '%s' is not a list of counts 1..1024", val);
                goto out;
            }
            if (!strcmp(a, "--runs") && ((o.runs = atoi(val)) < 1 || o.runs > 1000)) {
                cli_usage("bench scan: --runs: '%s' is not between 1 and 1000", val);
                goto out;
            }
            if (!strcmp(a, "--vs")) {
                if (strcmp(val, "duckdb") && strcmp(val, "none")) {
                    cli_usage("bench scan: --vs must be duckdb or none, not '%s'", val);
                    goto out;
                }
                o.vs = !strcmp(val, "duckdb");
            }
            if (!strcmp(a, "--decode")) {
                o.decode = !strcmp(val, "host") ? 1 : !strcmp(val, "device") ? 2 : !strcmp(val, "both") ? 3 : 0;
                if (!o.decode) {
                    cli_usage("bench scan: --decode must be host, device or both, not '%s'", val);
                    goto out;
                }
            }
            if (!strcmp(a, "--columns")) {
                o.have_columns = true;
                for (char *t = strtok(argv[i + 1], ","); t; t = strtok(NULL, ",")) {
                    char **nc = realloc(o.columns, (o.n_columns + 1) * sizeof *nc);
                    if (!nc)
                        goto out;
                    o.columns = nc;
                    o.columns[o.n_columns++] = t;
                }
            }
            i += 2;
            continue;
        }
        int r = cli_global_option(&g, argc, argv, &i);
        if (r < 0)
            goto out;
        if (r > 0) {
            if (!strncmp(a, "--device", 8))
                o.device = g.device;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("%s\n", usage);
            status = 0;
            goto out;
        }
        if (a[0] == '-' && a[1]) {
            cli_usage("bench scan: unknown option '%s'\n%s", a, usage);
            goto out;
        }
        if (expand_path(&o, a) != 0) {
            fprintf(stderr, "pista: bench scan: %s: no such file or no Parquet file matches\n", a);
            status = 1;
            goto out;
        }
        i++;
    }
    if (!o.n_files) {
        cli_usage("%s", usage);
        goto out;
    }
    o.memory_limit = g.memory_limit;
    status = run_bench(&o);
out:
    for (size_t i = 0; i < o.n_files; i++)
        free(o.files[i]);
    free(o.files);
    free(o.columns);
    return status;
}
