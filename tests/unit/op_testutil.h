/*
 * op_testutil.h - helpers for the FILTER and PROJECT operator tests: a
 * source operator (HANDSRC) handing out chunks the test uploaded from host
 * columns (so a test can see whether an output chunk IS an input chunk,
 * i.e. nothing was copied, where the result stays in device memory the host
 * reads), scans of tests/data/parquet, runs through ex_run on the device of
 * PISTA_TEST_DEVICE returning the result as '|' text, and the DuckDB oracle
 * (tests/oracle/oracle.mjs) when node and the package are installed.
 */
#ifndef OP_TESTUTIL_H
#define OP_TESTUTIL_H

#include "expr_testutil.h"

#include <unistd.h>

static char ot_data[512], ot_src[512];

static void ot_paths(void)
{
    const char *d = getenv("PISTA_TEST_DATA"), *s = getenv("PISTA_SOURCE_DIR");
    snprintf(ot_data, sizeof ot_data, "%s", d ? d : "tests/data");
    snprintf(ot_src, sizeof ot_src, "%s", s ? s : ".");
}

static inline const char *ot_file(const char *name)
{
    static char buf[4][700];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/parquet/%s", ot_data, name);
    return buf[k];
}

/* ------------------------------------------------------------- HANDSRC */

typedef struct handsrc {
    dv_chunk **chunks;
    int n, next;
} handsrc;

static int handsrc_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    handsrc *h = op->state;
    int i = __atomic_fetch_add(&h->next, 1, __ATOMIC_ACQ_REL);
    *out = i < h->n ? dv_chunk_retain(h->chunks[i]) : NULL;
    return PA_OK;
}

static const ex_op_vt handsrc_vt = {.kind = EX_OP_SCAN, .source_next = handsrc_next, .ordered = true};

/* A source of the given chunks (the test keeps its references). */
static inline ex_op *ot_handsrc(ex_plan *p, dv_chunk **chunks, int n, const char *const *names)
{
    ex_op *op;
    assert_int_equal(ex_op_new(p, &handsrc_vt, chunks[0]->n_columns, &op, NULL), PA_OK);
    for (int i = 0; i < chunks[0]->n_columns; i++)
        assert_int_equal(ex_op_set_column(op, i, names[i], chunks[0]->columns[i].type, NULL), PA_OK);
    handsrc *h = ex_plan_alloc(p, sizeof *h);
    h->chunks = chunks;
    h->n = n;
    h->next = 0;
    op->state = h;
    snprintf(op->label, sizeof op->label, "HANDSRC");
    return op;
}

/* A chunk holding copies of the n host columns cols (all of cols[0].length
 * rows): in device memory (uploaded, ready when this returns) or, when
 * host, in pinned memory the host reads, as ex_run's result chunks are on
 * a device whose memory the host cannot touch. The caller keeps cols to
 * compute what to expect: test code never reads a device chunk. */
static inline dv_chunk *ot_chunk_in(dv_device *d, const pa_column *cols, int n, bool host)
{
    dv_chunk *c;
    dv_stream *s;
    assert_int_equal(dv_chunk_create(d, n, &c, NULL), PA_OK);
    assert_int_equal(dv_stream_create(d, &s, NULL), PA_OK);
    for (int j = 0; j < n; j++) {
        pa_column *o = &c->columns[j];
        *o = cols[j];
        size_t sizes[3] = {et_data_bytes(&cols[j]), cols[j].offsets ? (size_t)(cols[j].length + 1) * 4 : 0,
                           cols[j].validity ? (size_t)(cols[j].length + 7) / 8 : 0};
        const void *from[3] = {cols[j].data, cols[j].offsets, cols[j].validity};
        void **to[3] = {&o->data, (void **)&o->offsets, (void **)&o->validity};
        for (int k = 0; k < 3; k++) {
            if (!from[k])
                continue;
            if (host) {
                assert_int_equal(dv_chunk_alloc_host(c, sizes[k] ? sizes[k] : 1, to[k], NULL), PA_OK);
                memcpy(*to[k], from[k], sizes[k]);
            } else {
                assert_int_equal(dv_chunk_alloc(c, sizes[k] ? sizes[k] : 1, to[k], NULL), PA_OK);
                assert_int_equal(dv_copy_async(s, *to[k], from[k], sizes[k], DV_COPY_H2D, NULL), PA_OK);
            }
        }
    }
    c->length = cols[0].length;
    assert_int_equal(dv_stream_sync(s, NULL), PA_OK);   /* cols may go */
    dv_stream_destroy(s);
    return c;
}

/* A device chunk holding copies of host columns (see ot_chunk_in). */
static inline dv_chunk *ot_chunk(dv_device *d, const pa_column *cols, int n) { return ot_chunk_in(d, cols, n, false); }

/* ----------------------------------------------------------------- runs */

static inline ex_op *ot_scan(ex_plan *p, const char *file, const char *const *cols, int n)
{
    const char *path = ot_file(file);
    ex_op *op = NULL;
    pa_err e;
    pa_err_init(&e);
    if (ex_scan(p, &path, 1, cols, n, NULL, 0, &op, &e) != PA_OK)
        fail_msg("ex_scan %s: %s", file, e.msg);
    pa_err_close(&e);
    return op;
}

/* Run; returns the result (caller destroys) or NULL with *rc and msg. */
static inline ex_result *ot_run(dv_device *d, ex_plan *p, ex_op *root, ex_mode mode, int *rc, char *msg)
{
    ex_run_options o = {.dev = d, .mode = mode, .threads = 2};
    ex_result *r = NULL;
    pa_err e;
    pa_err_init(&e);
    *rc = ex_run(p, root, &o, &r, &e);
    if (msg)
        snprintf(msg, 512, "%s", e.msg);
    pa_err_close(&e);
    return r;
}

static int ot_cmp_line(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* text with its lines after the header sorted (malloc'ed). */
static inline char *ot_sorted(const char *text)
{
    char *copy = strdup(text);
    size_t n = 0, cap = 1024;
    char **lines = malloc(cap * sizeof *lines);
    for (char *s = strtok(copy, "\n"); s; s = strtok(NULL, "\n")) {
        if (n == cap)
            lines = realloc(lines, (cap *= 2) * sizeof *lines);
        lines[n++] = s;
    }
    if (n > 1)
        qsort(lines + 1, n - 1, sizeof *lines, ot_cmp_line);
    char *out = malloc(strlen(text) + 2);
    size_t at = 0;
    out[0] = 0;
    for (size_t i = 0; i < n; i++)
        at += (size_t)sprintf(out + at, "%s\n", lines[i]);
    free(lines);
    free(copy);
    return out;
}

static inline char *ot_csv(const ex_result *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_true(ex_result_write_csv(r, f, '|', true) >= 0);
    fclose(f);
    return text;
}

/* DuckDB's answer to sql as text (malloc'ed), or NULL when the oracle is
 * not installed. {F} in sql is replaced by the path of file. */
static inline char *ot_oracle(const char *sql, const char *file)
{
    char q[4096], cmd[8192];
    const char *at = strstr(sql, "{F}");
    if (at)
        snprintf(q, sizeof q, "%.*s'%s'%s", (int)(at - sql), sql, ot_file(file), at + 3);
    else
        snprintf(q, sizeof q, "%s", sql);
    snprintf(cmd, sizeof cmd, "node '%s/tests/oracle/oracle.mjs' -c \"%s\" 2>/dev/null", ot_src, q);
    FILE *f = popen(cmd, "r");
    if (!f)
        return NULL;
    char *text = NULL;
    size_t len = 0, n;
    FILE *m = open_memstream(&text, &len);
    char buf[4096];
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, m);
    fclose(m);
    int st = pclose(f);
    if (st != 0) {
        free(text);
        return NULL;
    }
    return text;
}

#endif /* OP_TESTUTIL_H */
