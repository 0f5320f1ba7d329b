/*
 * test_exec_frame.c - the execution framework end to end through ex_run:
 * SCAN -> RESULT against known TPC-H facts (region and nation rows), UNION
 * ALL, RECHUNK of tiny chunks, breakers and pipeline dependencies (with the
 * test operators of exec_testops.h, checked against the SF 0.01 Q1 answer),
 * early stop (EX_FINISHED), all three modes giving identical rows, the
 * device memory limit, a corrupt file stopping the query, statistics, no
 * host-device sync in OVERLAPPED mode on cpu (elsewhere only the
 * scheduler's), EXPLAIN, and allocation faults. On the device of
 * PISTA_TEST_DEVICE (default cpu).
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

#include "exec_testops.h"

static char data_dir[512];
static dv_device *dev;

static const ex_mode modes[] = {EX_MODE_OVERLAPPED, EX_MODE_CHUNKED, EX_MODE_BLOCKING};

static const char *data_path(const char *name)
{
    static char buf[8][700];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/parquet/%s", data_dir, name);
    return buf[k];
}

static const char *spec(void)
{
    const char *s = getenv("PISTA_TEST_DEVICE");
    return s && *s ? s : "cpu";
}

static int setup(void **state)
{
    const char *d = getenv("PISTA_TEST_DATA");
    snprintf(data_dir, sizeof data_dir, "%s", d ? d : "tests/data");
    dv_options o = {.spec = spec(), .cpu_threads = 2};
    pa_err e;
    pa_err_init(&e);
    if (dv_open(&o, &dev, &e) != PA_OK)
        fail_msg("cannot open device %s: %s", spec(), e.msg);
    pa_err_close(&e);
    return 0;
}

static int teardown(void **state)
{
    dv_close(dev);
    return 0;
}

static ex_op *scan(ex_plan *p, const char *file, const char *const *cols, int n, const pq_pred *preds, int np)
{
    const char *path = data_path(file);
    ex_op *op = NULL;
    pa_err e;
    pa_err_init(&e);
    int rc = ex_scan(p, &path, 1, cols, n, preds, np, &op, &e);
    if (rc != PA_OK)
        fail_msg("ex_scan %s: %s", file, e.msg);
    pa_err_close(&e);
    return op;
}

/* Run and return the CSV text (malloc'ed) or NULL with *rc and msg. Without
 * rc_out the run must succeed (the test fails with the query's message). */
static char *run_csv(ex_plan *p, ex_op *root, ex_mode mode, int threads, int *rc_out, char *msg, ex_result **keep)
{
    ex_run_options o = {.dev = dev, .mode = mode, .threads = threads};
    ex_result *r = NULL;
    pa_err e;
    pa_err_init(&e);
    int rc = ex_run(p, root, &o, &r, &e);
    if (rc_out)
        *rc_out = rc;
    if (msg)
        snprintf(msg, 512, "%s", e.msg);
    if (rc != PA_OK && !rc_out)
        fail_msg("%s, %d threads on %s: %s", ex_mode_name(mode), threads, dv_name(dev), e.msg);
    pa_err_close(&e);
    if (rc != PA_OK)
        return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_true(ex_result_write_csv(r, f, '|', true) >= 0);
    fclose(f);
    int64_t rows = 0;
    for (int i = 0; i < r->n_chunks; i++)
        rows += r->chunks[i]->length;
    assert_int_equal(rows, r->n_rows);
    if (keep)
        *keep = r;
    else
        ex_result_destroy(r);
    return text;
}

static int cmp_line(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The lines of text sorted (header kept first), joined again. */
static char *sorted(const char *text)
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
        qsort(lines + 1, n - 1, sizeof *lines, cmp_line);
    char *out = malloc(strlen(text) + 2);
    out[0] = 0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++)
        at += (size_t)sprintf(out + at, "%s\n", lines[i]);
    free(lines);
    free(copy);
    return out;
}

static const char region_csv[] = "r_regionkey|r_name\n0|AFRICA\n1|AMERICA\n2|ASIA\n3|EUROPE\n4|MIDDLE EAST\n";

/* dbgen's nations: name and region key, by nation key. */
static const char *const nation_names[25] = {
    "ALGERIA", "ARGENTINA", "BRAZIL", "CANADA", "EGYPT", "ETHIOPIA", "FRANCE", "GERMANY", "INDIA",
    "INDONESIA", "IRAN", "IRAQ", "JAPAN", "JORDAN", "KENYA", "MOROCCO", "MOZAMBIQUE", "PERU", "CHINA",
    "ROMANIA", "SAUDI ARABIA", "VIETNAM", "RUSSIA", "UNITED KINGDOM", "UNITED STATES"};
static const int nation_regions[25] = {0, 1, 1, 1, 4, 0, 3, 3, 2, 2, 4, 4, 2, 4, 0, 0, 0, 1, 2, 3, 4, 2, 3, 3, 1};

static void t_region(void **state)
{
    static const char *const cols[] = {"r_regionkey", "r_name"};
    for (int m = 0; m < 3; m++)
        for (int t = 1; t <= 3; t++) {
            ex_plan *p;
            assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
            ex_op *s = scan(p, "region.parquet", cols, 2, NULL, 0);
            assert_int_equal(ex_op_columns(s), 2);
            assert_int_equal(ex_op_column_type(s, 0).id, PA_TYPE_INTEGER);
            assert_int_equal(ex_op_column_type(s, 1).id, PA_TYPE_VARCHAR);
            assert_int_equal(ex_op_find_column(s, "r_name"), 1);
            assert_int_equal(s->est_rows, 5);
            int rc;
            char msg[512];
            char *csv = run_csv(p, s, modes[m], t, &rc, msg, NULL);
            if (!csv)
                fail_msg("%s: %s", ex_mode_name(modes[m]), msg);
            assert_string_equal(csv, region_csv);
            free(csv);
            ex_plan_destroy(p);
        }
}

static void t_nation_all_columns(void **state)
{
    ex_plan *p;
    assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
    ex_op *s = scan(p, "nation.parquet", NULL, 0, NULL, 0);
    assert_int_equal(ex_op_columns(s), 4);
    assert_string_equal(ex_op_column_name(s, 3), "n_comment");
    ex_result *r = NULL;
    char *csv = run_csv(p, s, EX_MODE_OVERLAPPED, 0, NULL, NULL, &r);
    assert_non_null(csv);
    assert_int_equal(r->n_rows, 25);
    assert_int_equal(r->n_columns, 4);
    /* Rows in file order: key i is nation i. */
    char *line = strchr(csv, '\n') + 1;
    for (int i = 0; i < 25; i++) {
        char want[128];
        int n = snprintf(want, sizeof want, "%d|%s|%d|", i, nation_names[i], nation_regions[i]);
        assert_memory_equal(line, want, (size_t)n);
        line = strchr(line, '\n') + 1;
    }
    free(csv);
    ex_result_destroy(r);
    ex_plan_destroy(p);
}

static void t_union(void **state)
{
    static const char *const rc_[] = {"r_regionkey", "r_name"};
    static const char *const nc[] = {"n_nationkey", "n_name"};
    for (int m = 0; m < 3; m++) {
        ex_plan *p;
        assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
        ex_op *in[2] = {scan(p, "region.parquet", rc_, 2, NULL, 0), scan(p, "nation.parquet", nc, 2, NULL, 0)};
        ex_op *u;
        assert_int_equal(ex_union_all(p, in, 2, &u, NULL), PA_OK);
        assert_int_equal(u->est_rows, 30);
        ex_result *r = NULL;
        char *csv = run_csv(p, u, modes[m], 2, NULL, NULL, &r);
        assert_non_null(csv);
        assert_int_equal(r->stats.n_pipelines, 2);
        /* Pipeline order: every region row, then every nation row. */
        char want[2048];
        size_t at = (size_t)snprintf(want, sizeof want, "%s", region_csv);
        for (int i = 0; i < 25; i++)
            at += (size_t)snprintf(want + at, sizeof want - at, "%d|%s\n", i, nation_names[i]);
        assert_string_equal(csv, want);
        free(csv);
        ex_result_destroy(r);
        ex_plan_destroy(p);
    }
    /* Type mismatch: INTEGER vs VARCHAR. */
    static const char *const bad[] = {"n_name", "n_nationkey"};
    ex_plan *p;
    assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
    ex_op *in[2] = {scan(p, "region.parquet", rc_, 2, NULL, 0), scan(p, "nation.parquet", bad, 2, NULL, 0)};
    ex_op *u;
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(ex_union_all(p, in, 2, &u, &e), PA_EINVAL);
    assert_non_null(strstr(e.msg, "r_regionkey"));
    pa_err_close(&e);
    ex_plan_destroy(p);
}

/* SF 0.01 Q1 answer: count_order per group and sum_qty; R|F and A|F rows. */
#define Q1_ROWS 59307          /* 14876 + 348 + 29181 + 14902 */
#define Q1_QTY_CENTS 151367800 /* (380456 + 8971 + 742802 + 381449) * 100 */

static void t_breaker(void **state)
{
    static const char *const cols[] = {"l_quantity"};
    pq_pred pred = {"l_shipdate", PQ_OP_LE, "1998-09-02"};
    const char *files[] = {"lineitem-rowgroup10000.parquet", "lineitem-zstd.parquet", "lineitem-v2.parquet"};
    for (int f = 0; f < 3; f++)
        for (int m = 0; m < 3; m++)
            for (int t = 1; t <= 4; t *= 2) {
                ex_plan *p;
                assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
                ex_op *a = t_agg(p, scan(p, files[f], cols, 1, &pred, 1), 0);
                ex_result *r = NULL;
                char *csv = run_csv(p, a, modes[m], t, NULL, NULL, &r);
                assert_non_null(csv);
                char want[128];
                snprintf(want, sizeof want, "count|sum\n%d|%d\n", Q1_ROWS, Q1_QTY_CENTS);
                assert_string_equal(csv, want);
                assert_int_equal(r->stats.n_pipelines, 2);
                /* RESULT, TESTAGG, SCAN in pre-order. */
                assert_int_equal(r->stats.n_ops, 3);
                assert_int_equal(r->stats.ops[1].rows_in, Q1_ROWS);
                assert_int_equal(r->stats.ops[2].rows_out, Q1_ROWS);
                assert_int_equal(r->stats.ops[2].pipeline, 0);
                assert_int_equal(r->stats.ops[1].pipeline, 0);
                assert_int_equal(r->stats.ops[0].pipeline, 1);
                free(csv);
                ex_result_destroy(r);
                ex_plan_destroy(p);
            }
}

/* Two breakers under a UNION ALL: 4 pipelines, the upper ones each
 * depending on their own breaker. R|F and A|F of the Q1 answer. */
static void t_union_of_breakers(void **state)
{
    static const char *const cols[] = {"l_quantity"};
    pq_pred pr[2] = {{"l_returnflag", PQ_OP_EQ, "R"}, {"l_shipdate", PQ_OP_LE, "1998-09-02"}};
    pq_pred pa[2] = {{"l_returnflag", PQ_OP_EQ, "A"}, {"l_shipdate", PQ_OP_LE, "1998-09-02"}};
    for (int m = 0; m < 3; m++) {
        ex_plan *p;
        assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
        ex_op *in[2] = {t_agg(p, scan(p, "lineitem-rowgroup10000.parquet", cols, 1, pr, 2), 0),
                        t_agg(p, scan(p, "lineitem-v2.parquet", cols, 1, pa, 2), 0)};
        ex_op *u;
        assert_int_equal(ex_union_all(p, in, 2, &u, NULL), PA_OK);
        ex_result *r = NULL;
        char *csv = run_csv(p, u, modes[m], 2, NULL, NULL, &r);
        assert_non_null(csv);
        assert_string_equal(csv, "count|sum\n14902|38144900\n14876|38045600\n");
        assert_int_equal(r->stats.n_pipelines, 4);
        free(csv);
        ex_result_destroy(r);
        ex_plan_destroy(p);
    }
}

static void check_rechunk(const char *file, const char *const *cols, int n_cols, int split, int64_t target,
                          int threads, ex_mode mode)
{
    /* Reference: the scan alone. */
    ex_plan *p;
    assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
    char *want = run_csv(p, scan(p, file, cols, n_cols, NULL, 0), mode, threads, NULL, NULL, NULL);
    assert_non_null(want);
    ex_plan_destroy(p);

    assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
    ex_op *sp = t_split(p, scan(p, file, cols, n_cols, NULL, 0), split), *rc;
    assert_int_equal(ex_rechunk(p, sp, target, &rc, NULL), PA_OK);
    ex_result *r = NULL;
    char *got = run_csv(p, rc, mode, threads, NULL, NULL, &r);
    assert_non_null(got);
    if (threads == 1) {
        assert_string_equal(got, want);
    } else {
        char *a = sorted(want), *b = sorted(got);
        assert_string_equal(a, b);
        free(a);
        free(b);
    }
    /* Stats: SPLIT made many tiny chunks; RECHUNK gave few of about target
     * rows (at least target/2 except one flushed per worker). */
    const ex_op_stats *st_rc = &r->stats.ops[1], *st_split = &r->stats.ops[2];
    assert_int_equal(st_rc->rows_in, r->n_rows);
    assert_int_equal(st_rc->rows_out, r->n_rows);
    assert_int_equal(st_split->rows_out, r->n_rows);
    assert_true(st_split->chunks_out > 4 * st_rc->chunks_out);
    assert_int_equal(st_rc->chunks_out, r->n_chunks);
    int small = 0;
    for (int i = 0; i < r->n_chunks; i++) {
        int64_t len = r->chunks[i]->length;
        small += len < target / 2;
        assert_true(len <= 2 * target + split);
    }
    assert_true(small <= threads);
    free(want);
    free(got);
    ex_result_destroy(r);
    ex_plan_destroy(p);
}

static void t_rechunk(void **state)
{
    /* types.parquet: NULLs in a string column, booleans, doubles, dates,
     * decimals; slices of 1..5 rows put validity bits at every offset. */
    static const char *const tcols[] = {"id", "flag", "dbl", "flt", "ts", "small_dec", "name", "d"};
    for (int m = 0; m < 3; m++) {
        check_rechunk("types.parquet", tcols, 8, 5, 24, 1, modes[m]);
        check_rechunk("types.parquet", tcols, 8, 3, 10, 2, modes[m]);
    }
    static const char *const lcols[] = {"l_orderkey", "l_comment", "l_shipdate", "l_extendedprice", "l_returnflag"};
    check_rechunk("lineitem-rowgroup10000.parquet", lcols, 5, 200, 5000, 1, EX_MODE_OVERLAPPED);
    check_rechunk("lineitem-rowgroup10000.parquet", lcols, 5, 200, 5000, 3, EX_MODE_OVERLAPPED);
    check_rechunk("lineitem-rowgroup10000.parquet", lcols, 5, 100, 3000, 2, EX_MODE_BLOCKING);
}

static void t_rechunk_passthrough(void **state)
{
    /* Chunks already large pass through without a copy: the same buffers. */
    static const char *const cols[] = {"l_orderkey"};
    ex_plan *p;
    assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
    ex_op *rc;
    assert_int_equal(ex_rechunk(p, scan(p, "lineitem-rowgroup10000.parquet", cols, 1, NULL, 0), 10000, &rc, NULL),
                     PA_OK);
    ex_result *r = NULL;
    char *csv = run_csv(p, rc, EX_MODE_OVERLAPPED, 1, NULL, NULL, &r);
    assert_non_null(csv);
    assert_int_equal(r->n_chunks, 6);   /* 5 x 10240 + 8975 */
    assert_int_equal(r->n_rows, 60175);
    for (int i = 0; i < 5; i++)
        assert_int_equal(r->chunks[i]->length, 10240);
    free(csv);
    ex_result_destroy(r);
    ex_plan_destroy(p);
}

static void t_early_stop(void **state)
{
    static const char *const cols[] = {"l_orderkey", "l_comment"};
    for (int m = 0; m < 3; m++)
        for (int t = 1; t <= 4; t *= 2)
            for (int64_t n = 1; n <= 40000; n *= 200) {
                ex_plan *p;
                assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
                ex_op *s = scan(p, "lineitem-rowgroup10000.parquet", cols, 2, NULL, 0);
                ex_op *rc;
                assert_int_equal(ex_rechunk(p, t_take(p, t_split(p, s, 700), n), 500, &rc, NULL), PA_OK);
                ex_result *r = NULL;
                char *csv = run_csv(p, rc, modes[m], t, NULL, NULL, &r);
                assert_non_null(csv);
                assert_int_equal(r->n_rows, n);
                assert_int_equal(r->stats.ops[2].rows_out, n);   /* TAKE */
                free(csv);
                ex_result_destroy(r);
                ex_plan_destroy(p);
            }
}

static void t_modes_identical(void **state)
{
    static const char *const cols[] = {"l_orderkey", "l_partkey", "l_comment", "l_shipdate", "l_discount"};
    pq_pred pred = {"l_discount", PQ_OP_GE, "0.07"};
    char *first = NULL;
    for (int m = 0; m < 3; m++)
        for (int t = 1; t <= 3; t++) {
            ex_plan *p;
            assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
            ex_op *in[2] = {scan(p, "lineitem-zstd.parquet", cols, 5, &pred, 1),
                            t_split(p, scan(p, "lineitem-rowgroup10000.parquet", cols, 5, &pred, 1), 300)};
            ex_op *u, *rc;
            assert_int_equal(ex_union_all(p, in, 2, &u, NULL), PA_OK);
            assert_int_equal(ex_rechunk(p, u, 4096, &rc, NULL), PA_OK);
            char *csv = run_csv(p, rc, modes[m], t, NULL, NULL, NULL);
            assert_non_null(csv);
            char *s = sorted(csv);
            free(csv);
            if (!first)
                first = s;
            else {
                assert_string_equal(s, first);
                free(s);
            }
            ex_plan_destroy(p);
        }
    /* Every line appears twice (the same rows from two files). */
    assert_true(strlen(first) > 100000);
    free(first);
}

/* BLOCKING reads a scan's whole table before decoding any of it (the
 * paper's blocking reader): its pinned read buffers peak at every byte the
 * scan read; the streaming modes keep a few row groups in flight. The
 * pinned pool measures that where it holds nothing but those buffers, on a
 * device whose memory the host reads (the scan decodes straight into it);
 * elsewhere it also holds the decoded pages on their way up and the
 * downloaded result, so there only the rows are checked. */
static void t_blocking_reads_first(void **state)
{
    (void)state;
    static const char *const cols[] = {"l_orderkey", "l_comment", "l_shipdate"};
    for (int m = 0; m < 3; m++) {
        ex_plan *p;
        assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
        ex_op *sc = scan(p, "lineitem-rowgroup10000.parquet", cols, 3, NULL, 0);
        dv_memory_reset_peak(dev);
        ex_result *r = NULL;
        char *csv = run_csv(p, sc, modes[m], 1, NULL, NULL, &r);
        assert_non_null(csv);
        assert_int_equal(r->n_rows, 60175);
        pa_mempool_stats pinned;
        dv_memory_stats(dev, NULL, &pinned);
        uint64_t read = (uint64_t)r->stats.counters.v[PA_CTR_BYTES_READ];
        assert_true(read > 0);
        if (dv_host_visible(dev) && modes[m] == EX_MODE_BLOCKING)
            assert_true(pinned.peak >= read);
        else if (dv_host_visible(dev))
            assert_true(pinned.peak < read);
        free(csv);
        ex_result_destroy(r);
        ex_plan_destroy(p);
    }
}

static void t_memory_limit(void **state)
{
    static const char *const cols[] = {"l_orderkey", "l_comment", "l_shipinstruct"};
    for (int m = 0; m < 3; m++) {
        /* A limit the scan's decoding cannot live with. */
        dv_set_memory_limit(dev, 64 << 10);
        ex_plan *p;
        assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
        int rc;
        char msg[512];
        char *csv = run_csv(p, scan(p, "lineitem-zstd.parquet", cols, 3, NULL, 0), modes[m], 2, &rc, msg, NULL);
        assert_null(csv);
        assert_int_equal(rc, PA_ENOMEM);
        if (!strstr(msg, "out of memory in SCAN lineitem-zstd.parquet"))
            fail_msg("message: %s", msg);
        ex_plan_destroy(p);
        /* Operator state past the limit: named with the operator and role. */
        dv_set_memory_limit(dev, 32 << 20);
        assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
        static const char *const rcol[] = {"r_regionkey"};
        csv = run_csv(p, t_agg(p, scan(p, "region.parquet", rcol, 1, NULL, 0), 64 << 20), modes[m], 2, &rc, msg,
                      NULL);
        assert_null(csv);
        assert_int_equal(rc, PA_ENOMEM);
        if (!strstr(msg, "out of memory in TESTAGG"))
            fail_msg("message: %s", msg);
        ex_plan_destroy(p);
        /* The device is fine for the next query. */
        dv_set_memory_limit(dev, 0);
        assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
        ex_result *r = NULL;
        csv = run_csv(p, scan(p, "lineitem-zstd.parquet", cols, 3, NULL, 0), modes[m], 2, &rc, msg, &r);
        assert_non_null(csv);
        assert_int_equal(r->n_rows, 60175);
        free(csv);
        ex_result_destroy(r);
        ex_plan_destroy(p);
        pa_mempool_stats ms;
        dv_memory_stats(dev, &ms, NULL);
        assert_int_equal(ms.current, 0);
    }
}

static void t_corrupt_file(void **state)
{
    /* Flip bytes in the middle of a 6-row-group file (the footer intact). */
    FILE *f = fopen(data_path("lineitem-rowgroup10000.parquet"), "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    for (long i = n / 2; i < n / 2 + 4096; i++)
        buf[i] ^= 0x5a;
    char path[600];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/pista-exec-corrupt-%d.parquet", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    free(buf);
    static const char *const cols[] = {"l_orderkey", "l_comment", "l_extendedprice", "l_shipmode"};
    for (int m = 0; m < 3; m++)
        for (int t = 1; t <= 4; t *= 2) {
            ex_plan *p;
            assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
            const char *pp = path;
            ex_op *s, *rc;
            assert_int_equal(ex_scan(p, &pp, 1, cols, 4, NULL, 0, &s, NULL), PA_OK);
            assert_int_equal(ex_rechunk(p, t_split(p, s, 50), 1000, &rc, NULL), PA_OK);
            int st;
            char msg[512];
            char *csv = run_csv(p, rc, modes[m], t, &st, msg, NULL);
            assert_null(csv);
            assert_int_not_equal(st, PA_OK);
            if (!strstr(msg, path))
                fail_msg("message does not name the file: %s", msg);
            ex_plan_destroy(p);
        }
    remove(path);
}

static void t_stats_no_sync(void **state)
{
    static const char *const rc_[] = {"r_regionkey", "r_name"};
    static const char *const nc[] = {"n_nationkey", "n_name"};
    ex_plan *p;
    assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
    ex_op *in[2] = {scan(p, "region.parquet", rc_, 2, NULL, 0),
                    t_split(p, scan(p, "nation.parquet", nc, 2, NULL, 0), 4)};
    ex_op *u, *rc;
    assert_int_equal(ex_union_all(p, in, 2, &u, NULL), PA_OK);
    assert_int_equal(ex_rechunk(p, u, 16, &rc, NULL), PA_OK);
    ex_result *r = NULL;
    char *csv = run_csv(p, rc, EX_MODE_OVERLAPPED, 2, NULL, NULL, &r);
    assert_non_null(csv);
    const ex_query_stats *st = &r->stats;
    /* No host-device sync on cpu; elsewhere only the scheduler's: the drain
     * at the end, two for the result's download (the names are decoded on
     * the device, so the host learns their bytes from the offsets first),
     * one per parked worker (SPLIT waits for its slices' string sizes). */
    assert_int_equal(st->download_syncs, dv_kind_of(dev) == DV_KIND_CPU ? 0 : 2);
    int64_t syncs = dv_kind_of(dev) == DV_KIND_CPU ? 0 : 3 + st->counters.v[PA_CTR_WORKER_PARKS];
    assert_int_equal(st->counters.v[PA_CTR_HOST_SYNCS], syncs);
    assert_true(st->counters.v[PA_CTR_BYTES_READ] > 0);
    assert_true(st->mem_peak > 0);
    assert_int_equal(st->mode, EX_MODE_OVERLAPPED);
    assert_non_null(strstr(st->device, dv_name(dev)));
    /* RESULT, RECHUNK, UNION_ALL, SCAN region, SPLIT, SCAN nation. */
    assert_int_equal(st->n_ops, 6);
    assert_string_equal(st->ops[0].label, "RESULT");
    assert_string_equal(st->ops[2].label, "UNION_ALL");
    assert_string_equal(st->ops[3].label, "SCAN region.parquet");
    assert_int_equal(st->ops[0].rows_in, 30);
    assert_int_equal(st->ops[1].rows_out, 30);
    assert_int_equal(st->ops[2].rows_in, st->ops[3].rows_out + st->ops[4].rows_out);
    assert_int_equal(st->ops[3].rows_out, 5);
    assert_int_equal(st->ops[5].rows_out, 25);
    assert_int_equal(st->ops[4].rows_in, 25);
    assert_int_equal(st->ops[3].depth, 3);
    assert_int_equal(st->ops[5].depth, 4);
    for (int i = 0; i < st->n_ops; i++)
        assert_true(st->ops[i].pipeline >= 0 && st->ops[i].pipeline < st->n_pipelines);

    /* EXPLAIN, plain and analyzed. */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_int_equal(ex_explain(p, rc, r, dev, f), PA_OK);
    fclose(f);
    char want[64];
    snprintf(want, sizeof want, "device: %s", dv_name(dev));
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, "RESULT"));
    assert_non_null(strstr(text, "    SCAN region.parquet  [p0]  est 5  rows 0 -> 5"));
    assert_non_null(strstr(text, "UNION_ALL  [p0,p1]  est ?  rows 30 -> 30"));
    snprintf(want, sizeof want, "host syncs %lld\n", (long long)syncs);
    assert_non_null(strstr(text, want));
    free(text);
    free(csv);
    ex_result_destroy(r);
    ex_plan_destroy(p);

    assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
    static const char *const lc[] = {"l_quantity"};
    ex_op *a = t_agg(p, scan(p, "lineitem-zstd.parquet", lc, 1, NULL, 0), 0);
    text = NULL;
    f = open_memstream(&text, &len);
    assert_int_equal(ex_explain(p, a, NULL, NULL, f), PA_OK);
    fclose(f);
    assert_non_null(strstr(text, "2 pipelines\nTESTAGG  [p0,p1]  est ?\n  SCAN lineitem-zstd.parquet  [p0]  est 60175\n"));
    free(text);
    ex_plan_destroy(p);
}

static void t_errors(void **state)
{
    ex_plan *p;
    assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
    pa_err e;
    pa_err_init(&e);
    ex_op *s;
    const char *missing = data_path("no-such-file.parquet");
    assert_int_equal(ex_scan(p, &missing, 1, NULL, 0, NULL, 0, &s, &e), PA_ENOTFOUND);
    pa_err_clear(&e);
    const char *region = data_path("region.parquet");
    static const char *const bad[] = {"r_nope"};
    assert_int_equal(ex_scan(p, &region, 1, bad, 1, NULL, 0, &s, &e), PA_ENOTFOUND);
    assert_non_null(strstr(e.msg, "r_nope"));
    pa_err_clear(&e);
    const char *nested = data_path("nested.parquet");
    static const char *const lst[] = {"lst"};
    assert_int_equal(ex_scan(p, &nested, 1, lst, 1, NULL, 0, &s, &e), PA_EUNSUPPORTED);
    pa_err_clear(&e);
    /* A directory and a glob resolve like the scan does. */
    const char *glob = data_path("lineitem-[rvz]*.parquet");   /* rowgroup10000, v2, zstd */
    static const char *const ok[] = {"l_orderkey"};
    assert_int_equal(ex_scan(p, &glob, 1, ok, 1, NULL, 0, &s, &e), PA_OK);
    assert_int_equal(s->est_rows, 3 * 60175);
    ex_result *r = NULL;
    ex_run_options o = {.dev = dev};
    assert_int_equal(ex_run(p, s, &o, &r, &e), PA_OK);
    assert_int_equal(r->n_rows, 3 * 60175);
    ex_result_destroy(r);
    /* A plan runs once. */
    assert_int_equal(ex_run(p, s, &o, &r, &e), PA_EINVAL);
    assert_null(r);
    ex_plan_destroy(p);

    ex_mode m;
    assert_int_equal(ex_mode_parse("Blocking", &m, NULL), PA_OK);
    assert_int_equal(m, EX_MODE_BLOCKING);
    assert_int_equal(ex_mode_parse("fast", &m, NULL), PA_EINVAL);
    assert_string_equal(ex_mode_name(EX_MODE_CHUNKED), "chunked");
    pa_err_close(&e);
}

/* Join-shaped plan: the probe pipeline waits for the build's finalize; in
 * OVERLAPPED mode its (leaf) source was opened at query start, before that
 * finalize; in the other modes only when its pipeline starts. */
static void t_join_shape(void **state)
{
    static const char *const rc_[] = {"r_regionkey"};
    for (int m = 0; m < 3; m++)
        for (int t = 1; t <= 4; t *= 2) {
            ex_plan *p;
            assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
            ex_op *src = t_seqsrc(p, 37);
            ex_op *g = t_gate(p, src, scan(p, "region.parquet", rc_, 1, NULL, 0));
            ex_op *a = t_agg(p, g, 0);
            ex_result *r = NULL;
            char *csv = run_csv(p, a, modes[m], t, NULL, NULL, &r);
            assert_non_null(csv);
            assert_string_equal(csv, "count|sum\n37000|684481500\n");   /* sum 0..36999 */
            assert_int_equal(r->stats.n_pipelines, 3);
            gate_state *gs = g->state;
            seq_state *ss = src->state;
            assert_int_equal(gs->build_rows, 5);
            if (modes[m] == EX_MODE_OVERLAPPED)
                assert_true(ss->open_seq < gs->final_seq);
            else
                assert_true(ss->open_seq > gs->final_seq);
            /* RESULT, TESTAGG, GATE, SEQSRC, SCAN: pipelines 2, 1, 1, 1, 0. */
            assert_int_equal(r->stats.ops[3].pipeline, 1);
            assert_int_equal(r->stats.ops[4].pipeline, 0);
            assert_int_equal(r->stats.ops[2].pipeline, 0);   /* GATE: first as the build's sink */
            free(csv);
            ex_result_destroy(r);
            ex_plan_destroy(p);
        }
}

/* Every allocation failing in turn (host and device pools): each run ends
 * with the right rows or an error, never a crash, hang or leak (ASan). */
static void t_alloc_faults(void **state)
{
    static const char *const rc_[] = {"r_regionkey", "r_name"};
    static const char *const nc[] = {"n_nationkey", "n_name"};
    int ok = 0, failed = 0, clean = 0;
    /* Until the countdown outlasts every allocation of a run in each mode,
     * twice (how many a run makes depends on the threads' timing). */
    for (int64_t k = 0; k < 20000 && clean < 2; k += 1 + k / 40) {
        int ok_before = ok;
        for (int m = 0; m < 3; m++) {
            ex_plan *p;
            assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
            ex_op *in[2] = {scan(p, "region.parquet", rc_, 2, NULL, 0),
                            t_split(p, scan(p, "nation.parquet", nc, 2, NULL, 0), 4)};
            ex_op *u, *rc;
            assert_int_equal(ex_union_all(p, in, 2, &u, NULL), PA_OK);
            assert_int_equal(ex_rechunk(p, u, 16, &rc, NULL), PA_OK);
            ex_op *a = t_agg(p, rc, 0);
            pa_fault_alloc_after(k);
            int st;
            char *csv = run_csv(p, a, modes[m], 2, &st, NULL, NULL);
            pa_fault_alloc_clear();
            if (csv) {
                assert_string_equal(csv, "count|sum\n30|310\n");   /* 0..4 + 0..24 */
                ok++;
            } else {
                assert_int_not_equal(st, PA_OK);
                failed++;
            }
            free(csv);
            ex_plan_destroy(p);
        }
        clean = ok - ok_before == 3 ? clean + 1 : 0;
    }
    assert_true(ok > 0 && failed > 0 && clean == 2);
    pa_mempool_stats ms;
    dv_memory_stats(dev, &ms, NULL);
    assert_int_equal(ms.current, 0);
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_region),
        cmocka_unit_test(t_nation_all_columns),
        cmocka_unit_test(t_union),
        cmocka_unit_test(t_breaker),
        cmocka_unit_test(t_union_of_breakers),
        cmocka_unit_test(t_join_shape),
        cmocka_unit_test(t_rechunk),
        cmocka_unit_test(t_rechunk_passthrough),
        cmocka_unit_test(t_early_stop),
        cmocka_unit_test(t_modes_identical),
        cmocka_unit_test(t_blocking_reads_first),
        cmocka_unit_test(t_memory_limit),
        cmocka_unit_test(t_corrupt_file),
        cmocka_unit_test(t_stats_no_sync),
        cmocka_unit_test(t_errors),
        cmocka_unit_test(t_alloc_faults),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
