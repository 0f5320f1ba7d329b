/*
 * test_scan.c - the Parquet scan through its API on the DuckDB-written test
 * files (facts from tests/data/parquet/README.md and shared/tpch: row
 * counts, row group sizes, the region names, types.parquet's generating
 * SQL): whole files, projections, predicates with hand-computed answers,
 * row-group pruning, several files, back-pressure and early close, the
 * device memory limit, allocation failures, and corrupt files (truncations
 * and byte flips with a fixed seed: every scan ends with an error naming
 * the file, or completes). The row-by-row comparison with DuckDB is in
 * tests/sh/test_parquet_cat_oracle.sh.
 *
 * Runs on the device named by PISTA_TEST_DEVICE (default cpu; ctest runs it
 * on sim too, unit.sim.*), reading chunks through host copies
 * (scan_testutil.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/storage.h"
#include "scan_testutil.h"

static char data_dir[512];
static char tmp_dir[256];
static dv_device *dev;

static const char *data_path(const char *name)
{
    static char buf[4][700];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/parquet/%s", data_dir, name);
    return buf[k];
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void spit(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

/* Result of draining a scan. */
typedef struct drained {
    int rc;
    int64_t rows;
    int chunks;
    int64_t sum0;          /* sum of column 0 as integers (if integer-like) */
    pq_scan_stats st;
    pa_err err;
} drained;

static int64_t int_value(const pa_column *c, int64_t r)
{
    switch (c->type.id) {
    case PA_TYPE_BOOLEAN: return ((const uint8_t *)c->data)[r];
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: return ((const int32_t *)c->data)[r];
    case PA_TYPE_BIGINT:
    case PA_TYPE_DECIMAL: return ((const int64_t *)c->data)[r];
    default: return 0;
    }
}

static void drain_opts(pq_scan_options *o, drained *d)
{
    memset(d, 0, sizeof *d);
    pa_err_init(&d->err);
    pq_scan *s = NULL;
    d->rc = pq_scan_open(o, &s, &d->err);
    if (d->rc != PA_OK)
        return;
    for (;;) {
        dv_chunk *c;
        d->rc = pq_scan_next(s, &c, &d->err);
        if (d->rc != PA_OK || !c)
            break;
        if (!(c = st_host_try(o->device, c, &d->err))) {   /* a page the device refused */
            d->rc = d->err.code;
            break;
        }
        d->rows += c->length;
        d->chunks++;
        if (c->n_columns > 0)
            for (int64_t r = 0; r < c->length; r++)
                if (pa_column_valid(&c->columns[0], r))
                    d->sum0 += int_value(&c->columns[0], r);
        dv_chunk_destroy(c);
    }
    pq_scan_get_stats(s, &d->st);
    pq_scan_close(s);
}

static void drain(const char *const *paths, size_t np, const char *const *cols, size_t nc, const pq_pred *preds,
                  size_t npred, drained *d)
{
    pq_scan_options o;
    pq_scan_options_init(&o);
    o.paths = paths;
    o.n_paths = np;
    o.columns = cols;
    o.n_columns = nc;
    o.preds = preds;
    o.n_preds = npred;
    o.device = dev;
    drain_opts(&o, d);
}

/* Options scanning one file on the test device. */
static void one_file(pq_scan_options *o, const char *const *path)
{
    pq_scan_options_init(o);
    o->paths = path;
    o->n_paths = 1;
    o->device = dev;
}

/* ------------------------------------------------------------------ tests */

static void test_pred_parse(void **state)
{
    (void)state;
    char t1[] = "  l_orderkey >= 42 ", t2[] = "name IS NOT NULL", t3[] = "s = 'a b'", t4[] = "x ! 3", t5[] = "x is nul";
    char t6[] = "a<>'x'";
    pq_pred p;
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(pq_pred_parse(t1, &p, &e), PA_OK);
    assert_string_equal(p.column, "l_orderkey");
    assert_int_equal(p.op, PQ_OP_GE);
    assert_string_equal(p.value, "42");
    assert_int_equal(pq_pred_parse(t2, &p, &e), PA_OK);
    assert_string_equal(p.column, "name");
    assert_int_equal(p.op, PQ_OP_IS_NOT_NULL);
    assert_int_equal(pq_pred_parse(t3, &p, &e), PA_OK);
    assert_string_equal(p.value, "a b");
    assert_int_equal(pq_pred_parse(t6, &p, &e), PA_OK);
    assert_string_equal(p.column, "a");
    assert_int_equal(p.op, PQ_OP_NE);
    assert_string_equal(p.value, "x");
    assert_int_equal(pq_pred_parse(t4, &p, &e), PA_ESYNTAX);
    assert_int_equal(pq_pred_parse(t5, &p, NULL), PA_ESYNTAX);
    assert_string_equal(pq_op_name(PQ_OP_LE), "<=");
    pa_err_close(&e);
}

static void test_whole_files(void **state)
{
    (void)state;
    static const struct { const char *file; int64_t rows; int chunks; } facts[] = {
        {"region.parquet", 5, 1},   {"nation.parquet", 25, 1},
        {"supplier.parquet", 100, 1}, {"lineitem-zstd.parquet", 60175, 1},
        {"lineitem-v2.parquet", 60175, 1}, {"lineitem-rowgroup10000.parquet", 60175, 6},
    };
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
        const char *p = data_path(facts[i].file);
        drained d;
        drain(&p, 1, NULL, 0, NULL, 0, &d);
        assert_int_equal(d.rc, PA_OK);
        assert_int_equal(d.rows, facts[i].rows);
        assert_int_equal(d.chunks, facts[i].chunks);
        assert_int_equal(d.st.rows_out, (uint64_t)facts[i].rows);
        assert_true(d.st.bytes_read > 0);
        pa_err_close(&d.err);
    }
    /* Region: names in order, and sum of keys 0..4. */
    const char *p = data_path("region.parquet");
    const char *cols[] = {"r_name", "r_regionkey"};
    pq_scan_options o;
    pq_scan_options_init(&o);
    o.paths = &p;
    o.n_paths = 1;
    o.columns = cols;
    o.n_columns = 2;
    o.device = dev;
    pq_scan *s;
    assert_int_equal(pq_scan_open(&o, &s, NULL), PA_OK);
    assert_int_equal(pq_scan_n_columns(s), 2);
    assert_string_equal(pq_scan_column_name(s, 0), "r_name");
    assert_int_equal(pq_scan_column_type(s, 0).id, PA_TYPE_VARCHAR);
    assert_int_equal(pq_scan_column_type(s, 1).id, PA_TYPE_INTEGER);
    dv_chunk *c;
    assert_int_equal(pq_scan_next(s, &c, NULL), PA_OK);
    assert_non_null(c);
    c = st_host(dev, c);
    const char *names[] = {"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"};
    for (int r = 0; r < 5; r++) {
        char buf[32];
        pa_format_value(&c->columns[0], r, PA_FMT_ANSWER, buf, sizeof buf);
        assert_string_equal(buf, names[r]);
        assert_int_equal(((int32_t *)c->columns[1].data)[r], r);
    }
    dv_chunk_destroy(c);
    assert_int_equal(pq_scan_next(s, &c, NULL), PA_OK);
    assert_null(c);
    assert_int_equal(pq_scan_next(s, &c, NULL), PA_OK);   /* the end stays the end */
    assert_null(c);
    pq_scan_close(s);
}

/* types.parquet: i in 0..99; id = i, flag = i%2==0, dbl = 1.5i, small_dec =
 * 3.5i (DECIMAL(7,2)), name NULL when i%3==0, d = 1992-01-01 + i. */
static void test_types_predicates(void **state)
{
    (void)state;
    const char *p = data_path("types.parquet");
    const char *id[] = {"id"};
    struct { const char *col; pq_op op; const char *v; int64_t rows, sum; } cases[] = {
        {"name", PQ_OP_IS_NULL, "", 34, 3 * (33 * 34 / 2)},               /* i = 0,3,...,99 */
        {"name", PQ_OP_IS_NOT_NULL, "", 66, 4950 - 3 * (33 * 34 / 2)},
        {"flag", PQ_OP_EQ, "true", 50, 2450},
        {"dbl", PQ_OP_GT, "147", 1, 99},                                  /* 1.5*99 = 148.5 */
        {"small_dec", PQ_OP_EQ, "35", 1, 10},
        {"small_dec", PQ_OP_LT, "7.001", 3, 0 + 1 + 2},
        {"small_dec", PQ_OP_GE, "346.5", 1, 99},
        {"d", PQ_OP_LE, "1992-01-03", 3, 3},
        {"name", PQ_OP_EQ, "v10", 1, 10},
        {"name", PQ_OP_GT, "v97", 1, 98},                                 /* v98 (v99 is NULL: 99%3==0) */
        {"id", PQ_OP_NE, "5", 99, 4945},
        {"id", PQ_OP_EQ, "5.5", 0, 0},
        {"ts", PQ_OP_LT, "1704074400000000", 2, 1},                       /* 2024-01-01 + i hours, micros */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pq_pred pr = {cases[i].col, cases[i].op, cases[i].v};
        drained d;
        drain(&p, 1, id, 1, &pr, 1, &d);
        assert_int_equal(d.rc, PA_OK);
        if (d.rows != cases[i].rows || d.sum0 != cases[i].sum)
            fail_msg("case %zu (%s %s %s): %lld rows sum %lld, want %lld sum %lld", i, cases[i].col,
                     pq_op_name(cases[i].op), cases[i].v, (long long)d.rows, (long long)d.sum0,
                     (long long)cases[i].rows, (long long)cases[i].sum);
        pa_err_close(&d.err);
    }
    /* Every column, the 16-byte DECIMAL(20,3) too. */
    drained d;
    drain(&p, 1, NULL, 0, NULL, 0, &d);
    assert_int_equal(d.rc, PA_OK);
    pa_err_close(&d.err);
    const char *n = data_path("nested.parquet");
    const char *st[] = {"st"};
    drain(&n, 1, st, 1, NULL, 0, &d);
    assert_int_equal(d.rc, PA_EUNSUPPORTED);
    assert_non_null(strstr(d.err.msg, "column st is nested"));
    pa_err_close(&d.err);
    /* Bad constants and columns. */
    pq_pred bad = {"d", PQ_OP_EQ, "1992-13-01"};
    drain(&p, 1, id, 1, &bad, 1, &d);
    assert_int_equal(d.rc, PA_ESYNTAX);
    pa_err_close(&d.err);
    pq_pred nocol = {"nope", PQ_OP_EQ, "1"};
    drain(&p, 1, id, 1, &nocol, 1, &d);
    assert_int_equal(d.rc, PA_ENOTFOUND);
    assert_non_null(strstr(d.err.msg, "nope"));
    pa_err_close(&d.err);
}

/* lineitem-rowgroup10000: l_orderkey ascends, row groups of 10240 rows. */
static void test_row_group_pruning(void **state)
{
    (void)state;
    const char *p = data_path("lineitem-rowgroup10000.parquet");
    const char *cols[] = {"l_orderkey"};
    drained all, some, nofilter;
    drain(&p, 1, cols, 1, NULL, 0, &all);
    assert_int_equal(all.rc, PA_OK);
    assert_int_equal(all.st.row_groups, 6);
    assert_int_equal(all.st.row_groups_pruned, 0);
    pq_pred pr = {"l_orderkey", PQ_OP_LT, "5000"};
    drain(&p, 1, cols, 1, &pr, 1, &some);
    assert_int_equal(some.rc, PA_OK);
    assert_int_equal(some.st.row_groups_pruned, 5);
    assert_true(some.st.bytes_read * 4 < all.st.bytes_read);
    assert_int_equal(some.chunks, 1);
    assert_true(some.rows > 0 && some.rows < 10240);
    /* Pruning alone: the whole surviving row group. */
    pq_scan_options o;
    pq_scan_options_init(&o);
    o.paths = &p;
    o.n_paths = 1;
    o.columns = cols;
    o.n_columns = 1;
    o.preds = &pr;
    o.n_preds = 1;
    o.device = dev;
    o.filter_rows = false;
    drain_opts(&o, &nofilter);
    assert_int_equal(nofilter.rc, PA_OK);
    assert_int_equal(nofilter.rows, 10240);
    /* A predicate on a column not projected is read only to filter. */
    const char *other[] = {"l_quantity"};
    drained q;
    drain(&p, 1, other, 1, &pr, 1, &q);
    assert_int_equal(q.rc, PA_OK);
    assert_int_equal(q.rows, some.rows);
    /* Nothing matches: every row group pruned, nothing read. */
    pq_pred none = {"l_orderkey", PQ_OP_GT, "100000000"};
    drained z;
    drain(&p, 1, cols, 1, &none, 1, &z);
    assert_int_equal(z.rc, PA_OK);
    assert_int_equal(z.rows, 0);
    assert_int_equal(z.st.row_groups_pruned, 6);
    assert_int_equal(z.st.bytes_read, 0);
    pa_err_close(&all.err);
    pa_err_close(&some.err);
    pa_err_close(&nofilter.err);
    pa_err_close(&q.err);
    pa_err_close(&z.err);
}

static void test_many_files(void **state)
{
    (void)state;
    /* Three lineitem variants by directory-free glob and by list: same rows. */
    char glob[700];
    snprintf(glob, sizeof glob, "%s/parquet/lineitem-[rvz]*.parquet", data_dir);
    const char *g = glob;
    const char *cols[] = {"l_orderkey", "l_comment"};
    drained a, b;
    drain(&g, 1, cols, 2, NULL, 0, &a);
    assert_int_equal(a.rc, PA_OK);
    assert_int_equal(a.rows, 3 * 60175);
    assert_int_equal(a.chunks, 8);
    const char *list[] = {data_path("lineitem-zstd.parquet"), data_path("lineitem-v2.parquet")};
    drain(list, 2, cols, 2, NULL, 0, &b);
    assert_int_equal(b.rc, PA_OK);
    assert_int_equal(b.sum0 * 3, a.sum0 * 2);
    pa_err_close(&a.err);
    pa_err_close(&b.err);
    /* Different schemas: both files named. */
    const char *mixed[] = {data_path("region.parquet"), data_path("nation.parquet")};
    drain(mixed, 2, NULL, 0, NULL, 0, &a);
    assert_int_equal(a.rc, PA_EINVAL);
    assert_non_null(strstr(a.err.msg, "region.parquet"));
    assert_non_null(strstr(a.err.msg, "nation.parquet"));
    pa_err_close(&a.err);
    const char *missing = "/nonexistent/x.parquet";
    drain(&missing, 1, NULL, 0, NULL, 0, &a);
    assert_int_equal(a.rc, PA_ENOTFOUND);
    pa_err_close(&a.err);
}

/* Host memory the device's pools hold for their own bookkeeping: it grows
 * with the most blocks ever live at once (by chance of timing, a few more
 * chunks in flight) and is kept, so it is no leak of the scan's. */
static int64_t pools_host_bytes(void)
{
    pa_mempool_stats d, p;
    dv_memory_stats(dev, &d, &p);
    return (int64_t)(d.host_bytes + p.host_bytes);
}

/* Host memory in use once the threads that finish a closed scan's last
 * tasks have let go of their buffers (a loaded machine may run them a
 * little after close returns), less what the pools' bookkeeping grew by
 * since bk0. A leak never settles, so it still fails. */
static void settle(const pa_mem_stats *m0, int64_t bk0, pa_mem_stats *m1)
{
    for (int i = 0; i < 500; i++) {
        int64_t bk = pools_host_bytes();
        pa_host_mem_stats(m1);
        m1->current -= bk - bk0;
        if (m1->current == m0->current)
            return;
        usleep(10000);
    }
}

/* The same for the device's memory. */
static void settle_device(const pa_mempool_stats *d0, pa_mempool_stats *d1)
{
    for (int i = 0; i < 500; i++) {
        dv_memory_stats(dev, d1, NULL);
        if (d1->current == d0->current)
            return;
        usleep(10000);
    }
}

static void test_backpressure_early_close(void **state)
{
    (void)state;
    pa_mem_stats m0, m1;
    pa_mempool_stats dv0, dv1;
    const char *p = data_path("lineitem-rowgroup10000.parquet");
    /* Every row group's read buffer live at once first: the pinned pool's
     * table of live blocks grows to its size for this file now, not (by
     * chance of timing) during the rounds, where it would read as a leak. */
    pq_scan_options w;
    one_file(&w, &p);
    w.read_first = true;
    drained d;
    drain_opts(&w, &d);
    assert_int_equal(d.rc, PA_OK);
    pa_err_close(&d.err);
    pq_meta_cache_clear();
    pa_host_mem_stats(&m0);
    int64_t bk0 = pools_host_bytes();
    dv_memory_stats(dev, &dv0, NULL);
    for (int round = 0; round < 4; round++) {
        pq_scan_options o;
        one_file(&o, &p);
        o.max_chunks = 1;
        o.read_ahead = 1 + round;
        pq_scan *s;
        assert_int_equal(pq_scan_open(&o, &s, NULL), PA_OK);
        for (int k = 0; k < round; k++) {   /* round 0: close at once */
            dv_chunk *c;
            usleep(30000);   /* slow consumer: the scan thread waits on the full queue */
            assert_int_equal(pq_scan_next(s, &c, NULL), PA_OK);
            assert_non_null(c);
            assert_int_equal(c->length, 10240);
            st_drop(dev, c);
        }
        usleep(20000);
        pq_scan_stats st;
        pq_scan_get_stats(s, &st);
        assert_true(st.chunks_out <= (uint64_t)round + 2);   /* bounded: consumed + queue + the one blocked */
        pq_scan_close(s);
    }
    pq_meta_cache_clear();
    pa_threadpool_wait_idle(dv_cpu_threads(dev));   /* workers free their task nodes after the task */
    settle(&m0, bk0, &m1);
    settle_device(&dv0, &dv1);
    assert_int_equal(m1.current, m0.current);
    assert_int_equal(dv1.current, dv0.current);
}

static void test_memory_limit(void **state)
{
    (void)state;
    dv_options opt = {.spec = st_spec(), .memory_limit = 64 * 1024};
    dv_device *small;
    assert_int_equal(dv_open(&opt, &small, NULL), PA_OK);
    const char *p = data_path("lineitem-zstd.parquet");
    pq_scan_options o;
    pq_scan_options_init(&o);
    o.paths = &p;
    o.n_paths = 1;
    o.device = small;
    pq_scan *s;
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(pq_scan_open(&o, &s, &e), PA_OK);
    dv_chunk *c;
    assert_int_equal(pq_scan_next(s, &c, &e), PA_ENOMEM);
    assert_null(c);
    if (!strstr(e.msg, "lineitem-zstd.parquet") || !strstr(e.msg, "limit"))
        fail_msg("error without the file or the limit: %s", e.msg);
    assert_int_equal(pq_scan_next(s, &c, NULL), PA_ENOMEM);   /* sticky */
    pq_scan_close(s);
    pa_err_close(&e);
    /* The process (and the device) go on: a small file fits. */
    const char *r = data_path("region.parquet");
    o.paths = &r;
    drained d;
    drain_opts(&o, &d);
    assert_int_equal(d.rc, PA_OK);
    assert_int_equal(d.rows, 5);
    pa_err_close(&d.err);
    dv_close(small);
}

static void test_alloc_failures(void **state)
{
    (void)state;
    const char *p = data_path("nation.parquet");
    const char *cols[] = {"n_nationkey", "n_name", "n_comment"};
    pq_pred pr = {"n_regionkey", PQ_OP_EQ, "1"};
    pa_mem_stats m0, m1;
    /* Warm-up: the emulated GPU's workers keep the fibers (stacks) of the
     * largest blocks they ran, each the first time it runs one; a scan that
     * decodes strings on sim runs such kernels. Scans until ten in a row
     * leave host memory as they found it (a leak would never stop). */
    for (int calm = 0, runs = 0; calm < 10 && runs < 200; runs++) {
        pa_mem_stats a, b;
        pa_threadpool_wait_idle(dv_cpu_threads(dev));
        pa_host_mem_stats(&a);
        drained d;
        drain(&p, 1, cols, 3, &pr, 1, &d);
        assert_int_equal(d.rc, PA_OK);
        pa_err_close(&d.err);
        pq_meta_cache_clear();
        pa_threadpool_wait_idle(dv_cpu_threads(dev));
        pa_host_mem_stats(&b);
        calm = b.current == a.current ? calm + 1 : 0;
    }
    pq_meta_cache_clear();
    pa_host_mem_stats(&m0);
    int64_t bk0 = pools_host_bytes();
    int failures = 0, ok = 0;
    for (int64_t k = 0; k < 400 && ok < 3; k++) {
        pa_fault_alloc_after(k);
        drained d;
        drain(&p, 1, cols, 3, &pr, 1, &d);
        pa_fault_alloc_clear();
        pq_meta_cache_clear();
        if (d.rc == PA_OK) {
            assert_int_equal(d.rows, 5);   /* nations of region 1: 1, 2, 3, 17, 24 */
            assert_int_equal(d.sum0, 1 + 2 + 3 + 17 + 24);
            ok++;
        } else {
            if (d.rc != PA_ENOMEM)
                fail_msg("allocation %lld: %s (%s)", (long long)k, pa_status_name(d.rc), d.err.msg);
            failures++;
        }
        pa_err_close(&d.err);
    }
    assert_true(failures > 20);
    assert_true(ok > 0);
    pa_threadpool_wait_idle(dv_cpu_threads(dev));
    settle(&m0, bk0, &m1);
    assert_int_equal(m1.current, m0.current);
}

/* Scans a damaged copy; it must fail naming the file, or complete. */
static int scan_damaged(const char *path, const uint8_t *bytes, size_t n, const char *const *cols, size_t nc)
{
    spit(path, bytes, n);
    pq_meta_cache_clear();
    drained d;
    drain(&path, 1, cols, nc, NULL, 0, &d);
    if (d.rc != PA_OK && !strstr(d.err.msg, path))
        fail_msg("error without the file name: %s", d.err.msg);
    pa_err_close(&d.err);
    return d.rc;
}

static void test_corrupt_files(void **state)
{
    (void)state;
    char path[400];
    snprintf(path, sizeof path, "%s/damaged.parquet", tmp_dir);
    static const struct { const char *file; int flips; } files[] = {
        {"supplier.parquet", 400}, {"nation.parquet", 300}, {"types.parquet", 300},
        {"lineitem-v2.parquet", 40}, {"lineitem-zstd.parquet", 25}, {"lineitem-rowgroup10000.parquet", 25},
    };
    const char *types_cols[] = {"id", "flag", "dbl", "flt", "ts", "small_dec", "name", "d"};
    uint64_t seed = 0x2545f4914f6cdd1dull;
    int errors = 0, runs = 0;
    for (size_t fi = 0; fi < sizeof files / sizeof files[0]; fi++) {
        size_t n;
        uint8_t *orig = slurp(data_path(files[fi].file), &n);
        bool types = !strcmp(files[fi].file, "types.parquet");
        const char *const *cols = types ? types_cols : NULL;
        size_t nc = types ? 8 : 0;
        uint8_t *copy = malloc(n);
        /* Truncations at many points (footer and data). */
        for (int k = 1; k <= 24; k++) {
            size_t cut = n * (size_t)k / 25 + (size_t)k;
            if (cut >= n)
                continue;
            errors += scan_damaged(path, orig, cut, cols, nc) != PA_OK;
            runs++;
        }
        /* Byte flips in the column chunks (the footer stays valid). */
        uint32_t flen = (uint32_t)orig[n - 8] | (uint32_t)orig[n - 7] << 8 | (uint32_t)orig[n - 6] << 16 |
                        (uint32_t)orig[n - 5] << 24;
        size_t data_end = n - 8 - flen;
        for (int it = 0; it < files[fi].flips; it++) {
            memcpy(copy, orig, n);
            for (int f = 0; f < 1 + it % 3; f++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                size_t pos = 4 + (size_t)(seed >> 33) % (data_end - 4);
                copy[pos] ^= (uint8_t)(1u << ((seed >> 20) & 7));
            }
            errors += scan_damaged(path, copy, n, cols, nc) != PA_OK;
            runs++;
        }
        free(copy);
        free(orig);
    }
    unlink(path);
    pq_meta_cache_clear();
    assert_true(errors > runs / 4);   /* many damages are caught (flipped values may not be) */
}

/* FNV-1a over every value of every chunk, formatted, in order, and the
 * chunk lengths: two scans agree when they hand out the same rows in the
 * same chunks. */
static void digest_opts(pq_scan_options *o, drained *d, uint64_t *hash)
{
    memset(d, 0, sizeof *d);
    pa_err_init(&d->err);
    uint64_t h = 1469598103934665603ull;
    pq_scan *s = NULL;
    d->rc = pq_scan_open(o, &s, &d->err);
    while (d->rc == PA_OK) {
        dv_chunk *c;
        d->rc = pq_scan_next(s, &c, &d->err);
        if (d->rc != PA_OK || !c)
            break;
        if (!(c = st_host_try(o->device, c, &d->err))) {   /* a page the device refused */
            d->rc = d->err.code;
            break;
        }
        d->rows += c->length;
        d->chunks++;
        h = (h ^ (uint64_t)c->length) * 1099511628211ull;
        for (int j = 0; j < c->n_columns; j++)
            for (int64_t r = 0; r < c->length; r++) {
                char buf[256];
                pa_format_value(&c->columns[j], r, PA_FMT_ANSWER, buf, sizeof buf);
                for (const char *q = buf; *q; q++)
                    h = (h ^ (uint8_t)*q) * 1099511628211ull;
                h = (h ^ 0xff) * 1099511628211ull;
            }
        dv_chunk_destroy(c);
    }
    if (s) {
        pq_scan_get_stats(s, &d->st);
        pq_scan_close(s);
    }
    *hash = h;
}

/* Row groups decoded one at a time (pages over the pool), several at once
 * (one thread each), and after every read (read_first) give the same
 * chunks in the same order, with and without a filter. */
static void test_decoders_agree(void **state)
{
    (void)state;
    const char *p = data_path("lineitem-rowgroup10000.parquet");
    char pred_text[] = "l_quantity < 20";
    pq_pred pred;
    assert_int_equal(pq_pred_parse(pred_text, &pred, NULL), PA_OK);
    for (int filtered = 0; filtered < 2; filtered++) {
        uint64_t first = 0;
        int64_t first_rows = -1;
        static const struct { int workers; bool read_first; } cfg[] = {
            {1, false}, {2, false}, {4, false}, {0, false}, {1, true}, {4, true}, {3, false},
        };
        for (size_t k = 0; k < sizeof cfg / sizeof cfg[0]; k++) {
            pq_scan_options o;
            one_file(&o, &p);
            o.preds = filtered ? &pred : NULL;
            o.n_preds = filtered ? 1 : 0;
            o.unit_workers = cfg[k].workers;
            o.read_first = cfg[k].read_first;
            o.max_chunks = 1;   /* the decoders run ahead of a slow consumer */
            drained d;
            uint64_t h;
            digest_opts(&o, &d, &h);
            assert_int_equal(d.rc, PA_OK);
            assert_int_equal(d.chunks, 6);   /* one per row group, in order */
            if (k == 0) {
                first = h;
                first_rows = d.rows;
                if (!filtered)
                    assert_int_equal(d.rows, 60175);
            } else {
                assert_true(h == first);
                assert_int_equal(d.rows, first_rows);
            }
            assert_int_equal(d.st.rows_decoded, 60175);
            pa_err_close(&d.err);
        }
        if (filtered)   /* l_quantity is 1..50, uniform: about 19/50 of the rows */
            assert_true(first_rows > 60175 * 30 / 100 && first_rows < 60175 * 46 / 100);
    }
}

/* Every test file decodes to the same chunks with its pages decoded by the
 * device's kernels (kn_decompress_pages, kn_decode_pages, the default on
 * sim) and on the host (host_decode), with and without a pushed-down filter
 * (predicate columns stay on the host; the device takes the kept rows of
 * the others); on sim the device decoded pages of every file with
 * fixed-width columns, on cpu none. */
static void test_device_decode_agrees(void **state)
{
    (void)state;
    /* Each codec and page kind once, filtered or not (both on the file with
     * several row groups); zstd and gzip pages decompress on the host. */
    static const struct { const char *file, *pred; int modes; } files[] = {
        {"lineitem-rowgroup10000.parquet", "l_quantity < 20", 3}, {"lineitem.parquet", "l_discount > 0.05", 2},
        {"lineitem-gzip.parquet", "l_shipdate >= '1995-01-01'", 2}, {"lineitem-lz4_raw.parquet", NULL, 1},
        {"lineitem-nodict.parquet", "l_quantity >= 30", 2}, {"lineitem-uncompressed.parquet", NULL, 1},
        {"lineitem-v2.parquet", "l_linenumber < 3", 3}, {"customer.parquet", "c_nationkey < 5", 3},
        {"orders.parquet", "o_orderdate < '1994-01-01'", 2}, {"part.parquet", "p_size < 10", 3},
        {"partsupp.parquet", "ps_availqty < 5000", 1}, {"supplier.parquet", "s_nationkey = 3", 3},
        {"nation.parquet", "n_regionkey = 1", 3}, {"region.parquet", NULL, 1}, {"types.parquet", "id > 40", 3},
    };
    const char *line_cols[] = {"l_orderkey", "l_partkey", "l_quantity", "l_extendedprice", "l_discount",
                               "l_shipdate", "l_linenumber", "l_returnflag", "l_tax", "l_suppkey"};
    const char *types_cols[] = {"id", "flag", "dbl", "flt", "ts", "small_dec", "name", "d"};
    bool sim = !dv_host_visible(dev);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        const char *p = data_path(files[i].file);
        char text[128];
        pq_pred pred;
        if (files[i].pred) {
            snprintf(text, sizeof text, "%s", files[i].pred);
            assert_int_equal(pq_pred_parse(text, &pred, NULL), PA_OK);
        }
        bool line = !strncmp(files[i].file, "lineitem", 8), types = !strcmp(files[i].file, "types.parquet");
        int64_t pages = 0;
        for (int filtered = 0; filtered < 2; filtered++) {
            if (!(files[i].modes & (1 << filtered)))
                continue;
            uint64_t h[2];
            int64_t rows[2];
            for (int host = 0; host < 2; host++) {
                pq_scan_options o;
                one_file(&o, &p);
                o.preds = filtered ? &pred : NULL;
                o.n_preds = filtered ? 1 : 0;
                o.host_decode = host;
                o.columns = line ? line_cols : types ? types_cols : NULL;
                o.n_columns = line ? 10 : types ? 8 : 0;
                int64_t before = pa_counter_get(PA_CTR_PAGES_DEVICE);
                drained d;
                digest_opts(&o, &d, &h[host]);
                if (d.rc != PA_OK)
                    fail_msg("%s (%s, %s): %s", files[i].file, filtered ? files[i].pred : "no filter",
                             host ? "host decode" : "device decode", d.err.msg);
                rows[host] = d.rows;
                if (!host)
                    pages += pa_counter_get(PA_CTR_PAGES_DEVICE) - before;
                else
                    assert_int_equal(pa_counter_get(PA_CTR_PAGES_DEVICE), before);
                pa_err_close(&d.err);
            }
            if (h[0] != h[1] || rows[0] != rows[1])
                fail_msg("%s (%s): device decode gives other chunks than host decode (%lld vs %lld rows)",
                         files[i].file, filtered ? files[i].pred : "no filter", (long long)rows[0],
                         (long long)rows[1]);
        }
        if (sim ? pages == 0 : pages != 0)
            fail_msg("%s: %lld pages decoded on the device", files[i].file, (long long)pages);
    }
}

/* The scan never waits for the device: pulling every chunk of a file (with
 * and without a filter, pages decoded by the device's kernels and on the
 * host) while a consumer stream waits for each and lets it go costs no host
 * sync; the consumer's one sync at the end is the only one. */
static void test_no_host_syncs(void **state)
{
    (void)state;
    const char *p = data_path("lineitem-rowgroup10000.parquet");
    char pred_text[] = "l_quantity < 20";
    pq_pred pred;
    assert_int_equal(pq_pred_parse(pred_text, &pred, NULL), PA_OK);
    for (int k = 0; k < 4; k++) {
        pq_scan_options o;
        one_file(&o, &p);
        o.preds = k & 1 ? &pred : NULL;
        o.n_preds = k & 1 ? 1 : 0;
        o.host_decode = k & 2;
        dv_stream *consumer = NULL;
        assert_int_equal(dv_stream_create(dev, &consumer, NULL), PA_OK);
        int64_t before = pa_counter_get(PA_CTR_HOST_SYNCS), rows = 0;
        pq_scan *s = NULL;
        pa_err e;
        pa_err_init(&e);
        assert_int_equal(pq_scan_open(&o, &s, &e), PA_OK);
        for (;;) {
            dv_chunk *c = NULL;
            assert_int_equal(pq_scan_next(s, &c, &e), PA_OK);
            if (!c)
                break;
            rows += c->length;
            assert_int_equal(dv_chunk_wait_ready(c, consumer, NULL), PA_OK);
            dv_chunk_release(c, consumer);
        }
        int64_t syncs = pa_counter_get(PA_CTR_HOST_SYNCS) - before;
        assert_int_equal(dv_stream_sync(consumer, NULL), PA_OK);
        pq_scan_close(s);
        dv_stream_destroy(consumer);
        pa_err_close(&e);
        if (syncs != 0)
            fail_msg("scan %d (%s, %s decode): %lld host syncs", k, k & 1 ? "filtered" : "whole",
                     k & 2 ? "host" : "device", (long long)syncs);
        assert_true(rows > 0);
    }
}

/* Allocation failures while several row groups decode at once (decoder
 * tasks, their buffers, the pool's task nodes): every run ends with all the
 * rows or PA_ENOMEM, never a hang or a leak (ASan in CI). */
static void test_parallel_alloc_failures(void **state)
{
    (void)state;
    const char *p = data_path("lineitem-rowgroup10000.parquet");
    const char *cols[] = {"l_orderkey", "l_comment", "l_shipdate"};
    int failures = 0, ok = 0;
    for (int64_t k = 0; k < 100000 && ok < 2; k += 1 + k / 16) {
        pq_scan_options o;
        one_file(&o, &p);
        o.columns = cols;
        o.n_columns = 3;
        o.unit_workers = 4;
        pa_fault_alloc_after(k);
        drained d;
        drain_opts(&o, &d);
        pa_fault_alloc_clear();
        if (d.rc == PA_OK) {
            assert_int_equal(d.rows, 60175);
            ok++;
        } else {
            if (d.rc != PA_ENOMEM)
                fail_msg("allocation %lld: %s (%s)", (long long)k, pa_status_name(d.rc), d.err.msg);
            failures++;
        }
        pa_err_close(&d.err);
    }
    assert_true(failures > 10 && ok == 2);
    pa_threadpool_wait_idle(dv_cpu_threads(dev));
}

/* read_first holds every row group's bytes before decoding the first: the
 * pinned read buffers peak at all the bytes read. Streaming with one row
 * group in flight peaks at about one row group's (checked on a host-visible
 * device: on others the decoded columns are staged in pinned memory as well,
 * until their uploads ran, so the pinned peak says little about reads). */
static void test_read_first(void **state)
{
    (void)state;
    const char *p = data_path("lineitem-rowgroup10000.parquet");
    for (int first = 0; first < 2; first++) {
        pq_scan_options o;
        one_file(&o, &p);
        o.read_first = first;
        o.read_ahead = 1;
        o.unit_workers = 1;
        /* The earlier scans' buffers are gone (pool threads free some
         * after their tasks); what is still held counts apart. */
        pa_threadpool_wait_idle(dv_cpu_threads(dev));
        pa_mempool_stats pinned;
        dv_memory_stats(dev, NULL, &pinned);
        const int64_t base = (int64_t)pinned.current;
        dv_memory_reset_peak(dev);
        drained d;
        drain_opts(&o, &d);
        assert_int_equal(d.rc, PA_OK);
        assert_int_equal(d.rows, 60175);
        dv_memory_stats(dev, NULL, &pinned);
        const int64_t peak = (int64_t)pinned.peak - base;
        if (first)
            assert_true(peak >= (int64_t)d.st.bytes_read);
        else if (dv_host_visible(dev))   /* elsewhere the decoded staging is pinned too */
            if (peak >= (int64_t)d.st.bytes_read / 3)   /* 6 row groups, one at a time */
                fail_msg("pinned peak %lld bytes (%lld held before), %llu bytes read", (long long)peak,
                         (long long)base, (unsigned long long)d.st.bytes_read);
        pa_err_close(&d.err);
    }
}

/* With several row groups decoding at once, a failure is reported in row
 * group order: the chunks before the first damaged row group come out, then
 * its error, whichever decoder finished first. */
static void test_parallel_error_order(void **state)
{
    (void)state;
    const char *src = data_path("lineitem-rowgroup10000.parquet");
    size_t n;
    uint8_t *img = slurp(src, &n);
    const pq_file_meta *m;
    assert_int_equal(pq_meta_get(src, &m, NULL), PA_OK);
    assert_int_equal(m->n_row_groups, 6);
    int64_t before = 0;   /* rows of row groups 0, 1, 2 */
    for (uint32_t g = 0; g < 3; g++)
        before += m->row_groups[g].num_rows;
    assert_true(before > 30000 && before < 32000);
    static const uint32_t damaged[] = {3, 5};
    for (int k = 0; k < 2; k++) {   /* every column chunk of the row group: 0xff */
        const pq_row_group *rg = &m->row_groups[damaged[k]];
        for (uint32_t c = 0; c < rg->n_columns; c++) {
            const pq_column_meta *cm = &rg->columns[c].meta_data;
            int64_t at = pq_chunk_start(cm);
            assert_true(at > 0 && at + cm->total_compressed_size <= (int64_t)n);
            memset(img + at, 0xff, (size_t)cm->total_compressed_size);
        }
    }
    pq_file_meta_release(m);
    char path[400];
    snprintf(path, sizeof path, "%s/late-damage.parquet", tmp_dir);
    spit(path, img, n);
    free(img);
    const char *pp = path;
    for (int workers = 1; workers <= 4; workers++)
        for (int rep = 0; rep < 3; rep++) {
            pq_scan_options o;
            one_file(&o, &pp);
            o.unit_workers = workers;
            drained d;
            drain_opts(&o, &d);
            assert_int_equal(d.rc, PA_ECORRUPT);
            assert_int_equal(d.rows, before);
            assert_int_equal(d.chunks, 3);
            assert_non_null(strstr(d.err.msg, "late-damage.parquet: row group 3"));
            pa_err_close(&d.err);
        }
    unlink(path);
    pq_meta_cache_clear();
}

static int setup(void **state)
{
    (void)state;
    const char *d = getenv("PISTA_TEST_DATA");
    snprintf(data_dir, sizeof data_dir, "%s", d && *d ? d : "tests/data");
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/pista_scan_XXXXXX");
    if (!mkdtemp(tmp_dir))
        return -1;
    dv_options opt = {.spec = st_spec(), .cpu_threads = 4};
    if (dv_open(&opt, &dev, NULL) != PA_OK)
        return -1;
    io_engine *e;
    return io_engine_shared(&e, NULL) == PA_OK ? 0 : -1;   /* created before the leak checks */
}

static int teardown(void **state)
{
    (void)state;
    pq_meta_cache_clear();
    io_engine_shared_shutdown();
    dv_close(dev);
    rmdir(tmp_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pred_parse),
        cmocka_unit_test(test_whole_files),
        cmocka_unit_test(test_types_predicates),
        cmocka_unit_test(test_row_group_pruning),
        cmocka_unit_test(test_many_files),
        cmocka_unit_test(test_backpressure_early_close),
        cmocka_unit_test(test_memory_limit),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_corrupt_files),
        cmocka_unit_test(test_decoders_agree),
        cmocka_unit_test(test_device_decode_agrees),
        cmocka_unit_test(test_no_host_syncs),
        cmocka_unit_test(test_read_first),
        cmocka_unit_test(test_parallel_alloc_failures),
        cmocka_unit_test(test_parallel_error_order),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
