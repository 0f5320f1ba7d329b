/*
 * test_tpch_parquet.c - `pista gen tpch` Parquet output (tp_write with
 * TP_FORMAT_PARQUET) read back through the Parquet scan, an independent
 * code path, on the device of PISTA_TEST_DEVICE (default cpu), and compared
 * value by value with the generator's own batches;
 * the same bytes for any thread count; parts that concatenate to the whole;
 * row groups cut by row count, not by chunks or threads; errors (no folder,
 * a codec the writer refuses, an unwritable folder, allocation failures)
 * leave no file under a final name and no leak. Also: the text pool's
 * compiled-in checkpoints agree with a walk of the whole text stream.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tpch/tpch_int.h"
#include "tmp_testutil.h"

static tp_gen *g;          /* SF 0.01 */
static dv_device *dev;
static char root[256];     /* temporary folder of this process */

static int setup(void **state)
{
    (void)state;
    const char *spec = getenv("PISTA_TEST_DEVICE");
    dv_options opt = {.spec = spec && *spec ? spec : "cpu", .cpu_threads = 2};
    snprintf(root, sizeof root, "%s/pista-test-tpch-pq.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root))
        return -1;
    if (tp_gen_create_ex(0.01, 2, &g, NULL) != PA_OK || dv_open(&opt, &dev, NULL) != PA_OK)
        return -1;
    return 0;
}

static void rm_rf(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        unlink(path);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        rm_rf(p);
    }
    closedir(d);
    rmdir(path);
}

static int teardown(void **state)
{
    (void)state;
    tp_gen_destroy(g);
    dv_close(dev);
    rm_rf(root);
    return 0;
}

static void path_of(char *out, size_t cap, const char *dir, const char *rel)
{
    snprintf(out, cap, "%s/%s/%s", root, dir, rel);
}

static bool exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}


/* Whole files equal. */
static void assert_same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    assert_non_null(fa);
    assert_non_null(fb);
    int ca, cb;
    long at = 0;
    do {
        ca = fgetc(fa);
        cb = fgetc(fb);
        if (ca != cb)
            fail_msg("%s and %s differ at byte %ld", a, b, at);
        at++;
    } while (ca != EOF);
    fclose(fa);
    fclose(fb);
}

/* The rows of table t, units [first, first + n), straight from the generator. */
static void expected(tp_table t, int64_t first, int64_t n, tp_batch *b)
{
    tp_batch_init(b, t);
    tp_batch *parent = NULL;
    tp_batch tmp;
    if (t == TP_LINEITEM || t == TP_PARTSUPP) {   /* generated with their parent */
        parent = &tmp;
        tp_batch_init(parent, t == TP_LINEITEM ? TP_ORDERS : TP_PART);
        assert_int_equal(tp_gen_batch(g, parent->table, first, n, parent, b, NULL), PA_OK);
        tp_batch_close(parent);
    } else {
        assert_int_equal(tp_gen_batch(g, t, first, n, b, NULL, NULL), PA_OK);
    }
}

/* Column i of chunk c from a scan, where the host can read it: c's own on a
 * device whose memory the host reads, else copied to host memory on s once
 * the chunk is ready (free with host_col_free). */
static pa_column host_col(dv_stream *s, dv_chunk *c, int i)
{
    pa_column h = c->columns[i];
    if (dv_host_visible(dev))
        return h;
    const pa_column *d = &c->columns[i];
    int64_t n = d->length;
    assert_int_equal(dv_chunk_wait_ready(c, s, NULL), PA_OK);
    if (d->offsets) {
        h.offsets = malloc((size_t)(n + 1) * 4);
        assert_int_equal(dv_copy_async(s, h.offsets, d->offsets, (size_t)(n + 1) * 4, DV_COPY_D2H, NULL), PA_OK);
        assert_int_equal(dv_stream_sync(s, NULL), PA_OK);   /* the strings' size */
    }
    size_t bytes = d->offsets ? (size_t)h.offsets[n] : (size_t)n * (size_t)pa_type_bytes(d->type);
    h.data = malloc(bytes + 1);
    assert_int_equal(dv_copy_async(s, h.data, d->data, bytes, DV_COPY_D2H, NULL), PA_OK);
    if (d->validity) {
        h.validity = malloc((size_t)(n + 7) / 8);
        assert_int_equal(dv_copy_async(s, h.validity, d->validity, (size_t)(n + 7) / 8, DV_COPY_D2H, NULL), PA_OK);
    }
    assert_int_equal(dv_stream_sync(s, NULL), PA_OK);
    return h;
}

static void host_col_free(pa_column *h)
{
    if (dv_host_visible(dev))
        return;
    free(h->data);
    free(h->offsets);
    free(h->validity);
}

/* Scan `files` and compare every value with b's rows from *at on; advances
 * *at. Returns the row groups read. */
static uint64_t check_scan(const char *const *files, size_t n_files, const tp_batch *b, int64_t *at)
{
    pq_scan_options o;
    pq_scan_options_init(&o);
    o.paths = files;
    o.n_paths = n_files;
    o.device = dev;
    pq_scan *s;
    pa_err err;
    pa_err_init(&err);
    if (pq_scan_open(&o, &s, &err) != PA_OK)
        fail_msg("scan of %s: %s", files[0], err.msg);
    assert_int_equal(pq_scan_n_columns(s), b->n_columns);
    for (int i = 0; i < b->n_columns; i++) {
        const tp_column_info *ci = b->cols[i].info;
        assert_string_equal(pq_scan_column_name(s, i), ci->name);
        pa_type ty = pq_scan_column_type(s, i);
        assert_int_equal(ty.id, ci->type.id);
        assert_int_equal(ty.precision, ci->type.precision);
        assert_int_equal(ty.scale, ci->type.scale);
    }
    dv_stream *ds;
    assert_int_equal(dv_stream_create(dev, &ds, NULL), PA_OK);
    for (;;) {
        dv_chunk *c;
        assert_int_equal(pq_scan_next(s, &c, &err), PA_OK);
        if (!c)
            break;
        assert_true(*at + c->length <= b->n_rows);
        for (int i = 0; i < b->n_columns; i++) {
            assert_null(c->columns[i].validity);
            pa_column hc = host_col(ds, c, i);
            const pa_column *col = &hc;
            const tp_column *want = &b->cols[i];
            for (int64_t r = 0; r < c->length; r++) {
                int64_t w = *at + r;
                bool ok;
                switch (want->info->type.id) {
                case PA_TYPE_VARCHAR: {
                    int32_t len;
                    const char *ws = tp_batch_str(b, i, w, &len);
                    int32_t glen = col->offsets[r + 1] - col->offsets[r];
                    ok = glen == len &&
                         memcmp((const char *)col->data + col->offsets[r], ws, (size_t)len) == 0;
                    break;
                }
                case PA_TYPE_INTEGER:
                case PA_TYPE_DATE: ok = ((const int32_t *)col->data)[r] == tp_batch_i32(b, i, w); break;
                default: ok = ((const int64_t *)col->data)[r] == tp_batch_i64(b, i, w); break;
                }
                if (!ok)
                    fail_msg("%s row %lld column %s differs", files[0], (long long)w, want->info->name);
            }
            host_col_free(&hc);
        }
        *at += c->length;
        dv_chunk_destroy(c);
    }
    dv_stream_destroy(ds);
    pq_scan_stats st;
    pq_scan_get_stats(s, &st);
    pq_scan_close(s);
    pa_err_close(&err);
    return st.row_groups;
}

static const unsigned some_tables =
    1u << TP_NATION | 1u << TP_PART | 1u << TP_PARTSUPP | 1u << TP_ORDERS | 1u << TP_LINEITEM;

/* Small row groups and pages, so that a table has several of each and the
 * row-group ends fall inside the generator's chunks. */
static void small_groups(pq_writer_options *po)
{
    tp_parquet_defaults(po);
    po->row_group_rows = 7000;
    po->page_bytes = 16 << 10;
}

static int write_dir(const char *dir, int threads, int parts, int part, const pq_writer_options *po,
                     unsigned tables, pa_err *err)
{
    char out[512];
    snprintf(out, sizeof out, "%s/%s", root, dir);
    tp_write_opts o;
    tp_write_opts_defaults(&o);
    o.out_dir = out;
    o.format = TP_FORMAT_PARQUET;
    o.parquet = po;
    o.tables = tables;
    o.threads = threads;
    o.parts = parts;
    o.part = part;
    return tp_write(g, &o, NULL, err);
}

static void test_roundtrip_and_threads(void **state)
{
    (void)state;
    pq_writer_options po;
    small_groups(&po);
    assert_int_equal(write_dir("t1", 1, 0, -1, &po, some_tables, NULL), PA_OK);
    assert_int_equal(write_dir("t3", 3, 0, -1, &po, some_tables, NULL), PA_OK);
    for (int t = 0; t < TP_TABLE__COUNT; t++) {
        char a[512], b2[512], name[64];
        snprintf(name, sizeof name, "%s.parquet", tp_table_name(t));
        path_of(a, sizeof a, "t1", name);
        path_of(b2, sizeof b2, "t3", name);
        if (!(some_tables >> t & 1)) {
            assert_false(exists(a));
            continue;
        }
        assert_same_file(a, b2);
        tp_batch want;
        expected(t, 0, tp_gen_units(g, t), &want);
        int64_t at = 0;
        const char *files[] = {a};
        uint64_t rgs = check_scan(files, 1, &want, &at);
        assert_int_equal(at, want.n_rows);
        assert_int_equal(rgs, (uint64_t)((want.n_rows + 6999) / 7000));
        tp_batch_close(&want);
    }
}

static void test_parts(void **state)
{
    (void)state;
    pq_writer_options po;
    small_groups(&po);
    unsigned tables = 1u << TP_ORDERS | 1u << TP_LINEITEM | 1u << TP_REGION;
    assert_int_equal(write_dir("p3", 2, 3, -1, &po, tables, NULL), PA_OK);
    assert_int_equal(write_dir("p3one", 1, 3, 1, &po, tables, NULL), PA_OK);
    for (int t = 0; t < TP_TABLE__COUNT; t++) {
        if (!(tables >> t & 1))
            continue;
        tp_batch want;
        expected(t, 0, tp_gen_units(g, t), &want);
        char files[3][512];
        const char *fp[3];
        for (int i = 0; i < 3; i++) {
            char rel[128];
            snprintf(rel, sizeof rel, "%s/%s.%d.parquet", tp_table_name(t), tp_table_name(t), i);
            path_of(files[i], sizeof files[i], "p3", rel);
            fp[i] = files[i];
            char one[512];
            path_of(one, sizeof one, "p3one", rel);
            if (i == 1)
                assert_same_file(files[i], one);
            else
                assert_false(exists(one));
        }
        /* In order, the parts are the whole table (region: 5 rows in 3
         * parts of 1, 2 and 2 rows). */
        int64_t at = 0;
        for (int i = 0; i < 3; i++)
            check_scan(&fp[i], 1, &want, &at);
        assert_int_equal(at, want.n_rows);
        tp_batch_close(&want);
    }
}

static void test_errors(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    tp_write_opts o;
    tp_write_opts_defaults(&o);
    o.format = TP_FORMAT_PARQUET;
    assert_int_equal(tp_write(g, &o, NULL, &err), PA_EINVAL);   /* no folder */
    assert_non_null(strstr(err.msg, "folder"));

    /* A codec the writer cannot write: refused, nothing under a final name. */
    pq_writer_options po;
    tp_parquet_defaults(&po);
    po.codec = PQ_CODEC_LZO;
    pa_err_clear(&err);
    assert_int_equal(write_dir("lzo", 2, 0, -1, &po, 1u << TP_NATION, &err), PA_EUNSUPPORTED);
    char p[512];
    path_of(p, sizeof p, "lzo", "nation.parquet");
    assert_false(exists(p));
    assert_false(tmp_exists(p));

    /* A folder that cannot be made. */
    char file[512];
    snprintf(file, sizeof file, "%s/plain-file", root);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    pa_err_clear(&err);
    assert_int_equal(write_dir("plain-file/sub", 1, 0, -1, NULL, 1u << TP_REGION, &err), PA_EIO);
    assert_non_null(strstr(err.msg, "plain-file/sub"));
    pa_err_close(&err);
}

/* Fail the k-th allocation for every k until a write succeeds: each failure
 * is PA_ENOMEM, frees everything and leaves no temporary file; a table whose
 * file exists is complete. */
static void test_alloc_failure(void **state)
{
    (void)state;
    unsigned tables = 1u << TP_REGION | 1u << TP_NATION | 1u << TP_SUPPLIER;
    pq_writer_options po;
    tp_parquet_defaults(&po);
    po.row_group_rows = 40;
    tp_batch want[3];
    expected(TP_REGION, 0, 5, &want[0]);
    expected(TP_NATION, 0, 25, &want[1]);
    expected(TP_SUPPLIER, 0, 100, &want[2]);
    int rc = PA_ENOMEM, k;
    for (k = 0; rc != PA_OK; k++) {
        char dir[64];
        snprintf(dir, sizeof dir, "fail%d", k);
        pa_mem_stats before, after;
        pa_host_mem_stats(&before);
        pa_fault_alloc_after(k);
        rc = write_dir(dir, 1, 0, -1, &po, tables, NULL);
        pa_fault_alloc_clear();
        pa_host_mem_stats(&after);
        assert_int_equal(after.current, before.current);
        if (rc != PA_OK)
            assert_int_equal(rc, PA_ENOMEM);
        for (int i = 0; i < 3; i++) {
            char path[512], name[64];
            tp_table t = want[i].table;
            snprintf(name, sizeof name, "%s.parquet", tp_table_name(t));
            path_of(path, sizeof path, dir, name);
            assert_false(tmp_exists(path));
            if (exists(path)) {
                const char *fp[] = {path};
                int64_t at = 0;
                check_scan(fp, 1, &want[i], &at);
                assert_int_equal(at, want[i].n_rows);
            } else {
                assert_int_not_equal(rc, PA_OK);
            }
        }
        char path[512];
        snprintf(path, sizeof path, "%s/%s", root, dir);
        rm_rf(path);
    }
    assert_true(k > 5);
    for (int i = 0; i < 3; i++)
        tp_batch_close(&want[i]);
}

static void test_pool_checkpoints(void **state)
{
    (void)state;
    static tp__pool_checkpoint walked[TP__POOL_CHECKPOINTS];
    tp__pool_walk_checkpoints(walked);
    for (int k = 0; k < TP__POOL_CHECKPOINTS; k++) {
        assert_int_equal(walked[k].offset, tp__pool_checkpoints[k].offset);
        assert_int_equal(walked[k].seed, tp__pool_checkpoints[k].seed);
        assert_true(walked[k].offset >= k * TP__POOL_SEGMENT);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_checkpoints),
        cmocka_unit_test(test_roundtrip_and_threads),
        cmocka_unit_test(test_parts),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_alloc_failure),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
