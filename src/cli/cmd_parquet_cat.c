/*
 * cmd_parquet_cat.c - `pista parquet cat FILE... [--columns a,b] [--where
 * "col op value"]... [--limit N] [--format csv|table] [--stats]`: scan
 * Parquet files (paths, directories, globs) and print the rows. csv is the
 * answers format (header of names joined by '|', values as
 * pa_format_value(PA_FMT_ANSWER), NULL empty), table aligns columns for
 * humans. --stats prints the scan's counters to stderr.
 */
#include "cli/cli.h"
#include "storage/storage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_SAMPLE 1000   /* rows whose widths set the table layout */

typedef struct cat_opts {
    const char **paths;
    size_t n_paths;
    char **columns;
    size_t n_columns;
    bool have_columns;
    pq_pred *preds;
    size_t n_preds;
    int64_t limit;         /* -1 = all */
    bool table, stats, no_filter, no_page_index;
    int max_chunks;
} cat_opts;

/* A host-readable view of a chunk's columns (downloads on a GPU device). */
typedef struct host_view {
    pa_column *cols;
    void **owned;
    int n_owned;
} host_view;

static int view_chunk(dv_device *dev, dv_stream *st, dv_chunk *c, host_view *v, pa_err *err)
{
    memset(v, 0, sizeof *v);
    v->cols = calloc((size_t)c->n_columns + 1, sizeof *v->cols);
    v->owned = calloc((size_t)c->n_columns * 3 + 1, sizeof *v->owned);
    if (!v->cols || !v->owned)
        return pa_error(err, PA_ENOMEM, "out of memory");
    memcpy(v->cols, c->columns, (size_t)c->n_columns * sizeof *v->cols);
    if (dv_host_visible(dev))
        return PA_OK;
    /* The downloads wait for the scan's kernels that write the chunk (they
     * read whatever was there before: NULLs, on sim). */
    int rc = dv_chunk_wait_ready(c, st, err);
    for (int i = 0; i < c->n_columns && rc == PA_OK; i++) {
        pa_column *col = &v->cols[i];
        size_t n = (size_t)col->length;
        void *h;
        if (col->offsets) {
            if ((rc = dv_download(st, col->offsets, (n + 1) * 4, &h, err)) != PA_OK)
                break;
            v->owned[v->n_owned++] = h;
            if ((rc = dv_stream_sync(st, err)) != PA_OK)
                break;
            col->offsets = h;
        }
        size_t vs = col->offsets ? (size_t)col->offsets[n] : n * (size_t)pa_type_bytes(col->type);
        if ((rc = dv_download(st, col->data, vs, &h, err)) != PA_OK)
            break;
        v->owned[v->n_owned++] = h;
        col->data = h;
        if (col->validity) {
            if ((rc = dv_download(st, col->validity, (n + 7) / 8, &h, err)) != PA_OK)
                break;
            v->owned[v->n_owned++] = h;
            col->validity = h;
        }
    }
    if (rc == PA_OK)
        rc = dv_stream_sync(st, err);
    return rc;
}

static void view_free(dv_device *dev, host_view *v)
{
    for (int i = 0; i < v->n_owned; i++)
        dv_release_download(dev, v->owned[i]);
    free(v->owned);
    free(v->cols);
}

static void print_cell(const pa_column *c, int64_t r, char **buf, size_t *cap)
{
    if (!pa_column_valid(c, r)) {
        (*buf)[0] = '\0';
        return;
    }
    size_t need = pa_format_value(c, r, PA_FMT_ANSWER, *buf, *cap);
    if (need >= *cap) {
        char *nb = realloc(*buf, need + 1);
        if (nb) {
            *buf = nb;
            *cap = need + 1;
            pa_format_value(c, r, PA_FMT_ANSWER, *buf, *cap);
        }
    }
}

typedef struct printer {
    const pq_scan *scan;
    int n;
    bool table;
    int *width;
    bool laid_out;
    char **sample;         /* table: cells of the first rows, until the layout is known */
    size_t n_sample, cap_sample;
    char *buf;
    size_t cap;
} printer;

static void put_row(printer *p, char **cells)
{
    for (int i = 0; i < p->n; i++) {
        if (p->table)
            printf("%s%-*s", i ? " | " : "", i + 1 < p->n ? p->width[i] : 0, cells[i]);
        else
            printf("%s%s", i ? "|" : "", cells[i]);
    }
    putchar('\n');
}

static void layout(printer *p)
{
    char **hdr = calloc((size_t)p->n + 1, sizeof *hdr);
    for (int i = 0; i < p->n; i++) {
        hdr[i] = (char *)pq_scan_column_name(p->scan, i);
        int w = (int)strlen(hdr[i]);
        p->width[i] = w > p->width[i] ? w : p->width[i];
    }
    put_row(p, hdr);
    if (p->table) {
        for (int i = 0; i < p->n; i++) {
            fputs(i ? "-+-" : "", stdout);
            for (int k = 0; k < p->width[i]; k++)
                putchar('-');
        }
        putchar('\n');
    }
    free(hdr);
    for (size_t r = 0; r < p->n_sample; r += (size_t)p->n)
        put_row(p, p->sample + r);
    for (size_t r = 0; r < p->n_sample; r++)
        free(p->sample[r]);
    p->n_sample = 0;
    p->laid_out = true;
}

static void add_row(printer *p, const pa_column *cols, int64_t r, char **cells)
{
    for (int i = 0; i < p->n; i++) {
        print_cell(&cols[i], r, &p->buf, &p->cap);
        cells[i] = strdup(p->buf);
        int w = (int)strlen(cells[i]);
        if (!p->laid_out && w > p->width[i])
            p->width[i] = w;
    }
    if (p->laid_out || !p->table) {
        if (!p->laid_out)
            layout(p);
        put_row(p, cells);
        for (int i = 0; i < p->n; i++)
            free(cells[i]);
        return;
    }
    if (p->n_sample + (size_t)p->n > p->cap_sample) {
        p->cap_sample = (p->cap_sample + (size_t)p->n) * 2;
        p->sample = realloc(p->sample, p->cap_sample * sizeof *p->sample);
    }
    memcpy(p->sample + p->n_sample, cells, (size_t)p->n * sizeof *cells);
    p->n_sample += (size_t)p->n;
    if (p->n_sample / (size_t)(p->n ? p->n : 1) >= TABLE_SAMPLE)
        layout(p);
}

static void print_stats(pq_scan *s)
{
    pq_scan_stats st;
    pq_scan_get_stats(s, &st);
    fprintf(stderr,
            "files %llu, row groups %llu (pruned %llu), pages %llu (pruned %llu), rows decoded %llu, rows out %llu, "
            "chunks %llu\nbytes read %llu in %llu requests; ms: read %.3f (waited %.3f), decompress %.3f, "
            "decode %.3f, filter %.3f\n",
            (unsigned long long)st.files, (unsigned long long)st.row_groups, (unsigned long long)st.row_groups_pruned,
            (unsigned long long)st.pages, (unsigned long long)st.pages_pruned, (unsigned long long)st.rows_decoded,
            (unsigned long long)st.rows_out, (unsigned long long)st.chunks_out, (unsigned long long)st.bytes_read,
            (unsigned long long)st.read_requests, st.ns_read * 1e-6, st.ns_read_wait * 1e-6, st.ns_decompress * 1e-6,
            st.ns_decode * 1e-6, st.ns_filter * 1e-6);
}

static int run_cat(const cat_opts *o, const cli_global *g)
{
    pa_err err;
    pa_err_init(&err);
    dv_device *dev = NULL;
    dv_stream *st = NULL;
    pq_scan *scan = NULL;
    printer p = {0};
    int status = 1, rc;
    dv_options dopt = {.spec = g->device, .memory_limit = g->memory_limit, .cpu_threads = g->threads, .page_decode = g->page_decode};
    if ((rc = dv_open(&dopt, &dev, &err)) != PA_OK || (!dv_host_visible(dev) && (rc = dv_stream_create(dev, &st, &err))))
        goto done;
    pq_scan_options so;
    pq_scan_options_init(&so);
    so.paths = o->paths;
    so.n_paths = o->n_paths;
    so.columns = o->have_columns ? (const char *const *)o->columns : NULL;
    so.n_columns = o->n_columns;
    so.preds = o->preds;
    so.n_preds = o->n_preds;
    so.device = dev;
    so.max_chunks = o->max_chunks;
    so.filter_rows = !o->no_filter;
    so.use_page_index = !o->no_page_index;
    if ((rc = pq_scan_open(&so, &scan, &err)) != PA_OK)
        goto done;
    p.scan = scan;
    p.n = pq_scan_n_columns(scan);
    p.table = o->table;
    p.width = calloc((size_t)p.n + 1, sizeof *p.width);
    p.cap = 256;
    p.buf = malloc(p.cap);
    char **cells = calloc((size_t)p.n + 1, sizeof *cells);
    int64_t left = o->limit;
    while (left != 0) {
        dv_chunk *c;
        if ((rc = pq_scan_next(scan, &c, &err)) != PA_OK || !c)
            break;
        host_view v;
        if ((rc = view_chunk(dev, st, c, &v, &err)) == PA_OK)
            for (int64_t r = 0; r < c->length && left != 0; r++, left -= left > 0)
                add_row(&p, v.cols, r, cells);
        view_free(dev, &v);
        dv_chunk_destroy(c);
        if (rc != PA_OK)
            break;
    }
    free(cells);
    if (rc == PA_OK) {
        if (!p.laid_out)
            layout(&p);
        status = 0;
    }
done:
    fflush(stdout);
    if (rc != PA_OK)
        cli_fail(&err);
    if (scan && o->stats)
        print_stats(scan);
    pq_scan_close(scan);
    for (size_t r = 0; r < p.n_sample; r++)
        free(p.sample[r]);
    free(p.sample);
    free(p.width);
    free(p.buf);
    if (st)
        dv_stream_destroy(st);
    if (dev)
        dv_close(dev);
    io_engine_shared_shutdown();
    pq_meta_cache_clear();
    pa_err_close(&err);
    return status;
}

static int split_columns(char *list, cat_opts *o)
{
    o->have_columns = true;
    for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
        while (*t == ' ')
            t++;
        char **nc = realloc(o->columns, (o->n_columns + 1) * sizeof *nc);
        if (!nc)
            return -1;
        o->columns = nc;
        o->columns[o->n_columns++] = t;
    }
    return 0;
}

int cli_parquet_cat(int argc, char **argv)
{
    static const char *usage =
        "usage: pista parquet cat FILE|DIR|GLOB... [--columns a,b] [--where \"col op value\"]...\n"
        "         [--limit N] [--format csv|table] [--stats] [--no-filter] [--no-page-index]\n"
        "         [--max-chunks N] [--device D] [--memory-limit SIZE] [--threads N]";
    cat_opts o = {0};
    o.limit = -1;
    cli_global g;
    cli_global_defaults(&g);
    int status = 2;
    o.paths = calloc((size_t)argc + 1, sizeof *o.paths);
    o.preds = calloc((size_t)argc + 1, sizeof *o.preds);
    for (int i = 0; i < argc;) {
        int r = cli_global_option(&g, argc, argv, &i);
        if (r < 0)
            goto out;
        if (r > 0)
            continue;
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = !strcmp(a, "--columns") || !strcmp(a, "--where") || !strcmp(a, "--limit") ||
                     !strcmp(a, "--format") || !strcmp(a, "--max-chunks");
        if (takes && !val) {
            cli_usage("parquet cat: %s needs a value", a);
            goto out;
        }
        if (!strcmp(a, "--columns")) {
            split_columns(argv[i + 1], &o);
        } else if (!strcmp(a, "--where")) {
            pa_err e;
            pa_err_init(&e);
            if (pq_pred_parse(argv[i + 1], &o.preds[o.n_preds], &e) != PA_OK) {
                cli_usage("parquet cat: --where: %s", e.msg);
                pa_err_close(&e);
                goto out;
            }
            pa_err_close(&e);
            o.n_preds++;
        } else if (!strcmp(a, "--limit") || !strcmp(a, "--max-chunks")) {
            char *end;
            long long v = strtoll(val, &end, 10);
            if (*end || v < 0 || (a[2] == 'm' && (v < 1 || v > 1 << 20))) {
                cli_usage("parquet cat: %s: '%s' is not a count", a, val);
                goto out;
            }
            if (a[2] == 'l')
                o.limit = v;
            else
                o.max_chunks = (int)v;
        } else if (!strcmp(a, "--format")) {
            if (strcmp(val, "csv") && strcmp(val, "table")) {
                cli_usage("parquet cat: --format must be csv or table, not '%s'", val);
                goto out;
            }
            o.table = !strcmp(val, "table");
        } else if (!strcmp(a, "--stats")) {
            o.stats = true;
        } else if (!strcmp(a, "--no-filter")) {
            o.no_filter = true;
        } else if (!strcmp(a, "--no-page-index")) {
            o.no_page_index = true;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("%s\n", usage);
            status = 0;
            goto out;
        } else if (a[0] == '-' && a[1]) {
            cli_usage("parquet cat: unknown option '%s'\n%s", a, usage);
            goto out;
        } else {
            o.paths[o.n_paths++] = a;
            i++;
            continue;
        }
        i += takes ? 2 : 1;
    }
    if (!o.n_paths) {
        cli_usage("%s", usage);
        goto out;
    }
    status = run_cat(&o, &g);
out:
    free(o.paths);
    free(o.preds);
    free(o.columns);
    return status;
}
