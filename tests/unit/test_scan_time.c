/*
 * test_scan_time.c - the scan of the time types (TIMESTAMP, TIMESTAMPTZ,
 * TIMESTAMP_NS, TIME, INTERVAL and INT96) on the fixtures of
 * tests/data/parquet/time/ (made by tests/tools/time_fixtures.sh): every
 * decoded raw value (int64 microseconds or nanoseconds, pa_interval fields)
 * equals what DuckDB reads from the same file (FILE.expect.txt), with pages
 * decoded on the host and by the device's kernels; INT96 equals the
 * nanoseconds its bytes were made from and is never pruned by its
 * statistics (false ones written in here); pruning by the statistics of a
 * TIMESTAMP(MILLIS) column keeps exactly the row groups that may match;
 * so does one of a TIME(MILLIS) column in an INT32; hive folders named by
 * timestamps make a TIMESTAMP column; a MILLIS value past the
 * int64 microseconds is an error naming the file and the column.
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
#include <sys/stat.h>
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
    snprintf(buf[k], sizeof buf[k], "%s/parquet/time/%s", data_dir, name);
    return buf[k];
}

/* ------------------------------------------------------------ expected values */

#define MAX_COLS 24
#define MAX_ROWS 512

/* FILE.expect.txt: a header of names, then rows of integers ("" = NULL). */
typedef struct expect {
    int n_cols, n_rows;
    char names[MAX_COLS][32];
    int64_t v[MAX_ROWS][MAX_COLS];
    bool null[MAX_ROWS][MAX_COLS];
} expect;

static void load_expect(const char *name, expect *e)
{
    memset(e, 0, sizeof *e);
    FILE *f = fopen(data_path(name), "r");
    assert_non_null(f);
    char line[2048];
    bool header = true;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        int c = 0;
        char *p = line;
        for (;;) {
            char *end = strchr(p, '|');
            if (end)
                *end = '\0';
            assert_true(c < MAX_COLS);
            if (header) {
                snprintf(e->names[c], sizeof e->names[c], "%s", p);
            } else {
                assert_true(e->n_rows < MAX_ROWS);
                e->null[e->n_rows][c] = !*p;
                e->v[e->n_rows][c] = *p ? strtoll(p, NULL, 10) : 0;
            }
            c++;
            if (!end)
                break;
            p = end + 1;
        }
        if (header)
            e->n_cols = c;
        else {
            assert_int_equal(c, e->n_cols);
            e->n_rows++;
        }
        header = false;
    }
    fclose(f);
}

static int expect_col(const expect *e, const char *name)
{
    for (int c = 0; c < e->n_cols; c++)
        if (!strcmp(e->names[c], name))
            return c;
    fail_msg("no column %s in the expected values", name);
    return -1;
}

/* ------------------------------------------------------------ scanning */

/* A scan's result: per column its type, and per row (by position) its
 * value bytes (up to 16) and validity. */
typedef struct result {
    int rc;
    pa_err err;
    int n_cols;
    int64_t rows;
    pa_type type[MAX_COLS];
    uint8_t val[MAX_COLS][4096][16];
    bool valid[MAX_COLS][4096];
    pq_scan_stats st;
    int64_t device_pages;
} result;

static void scan(const char *file, const char *const *cols, int n_cols, const char *pred, bool host_decode,
                 result *r)
{
    memset(r, 0, sizeof *r);
    pa_err_init(&r->err);
    const char *path = file[0] == '/' ? file : data_path(file);
    pq_scan_options o;
    pq_scan_options_init(&o);
    o.paths = &path;
    o.n_paths = 1;
    o.columns = cols;
    o.n_columns = (size_t)n_cols;
    o.device = dev;
    o.host_decode = host_decode;
    char text[160];
    pq_pred p;
    if (pred) {
        snprintf(text, sizeof text, "%s", pred);
        assert_int_equal(pq_pred_parse(text, &p, NULL), PA_OK);
        o.preds = &p;
        o.n_preds = 1;
    }
    int64_t before = pa_counter_get(PA_CTR_PAGES_DEVICE);
    pq_scan *s = NULL;
    r->rc = pq_scan_open(&o, &s, &r->err);
    if (r->rc != PA_OK)
        return;
    r->n_cols = n_cols;
    for (;;) {
        dv_chunk *c;
        r->rc = pq_scan_next(s, &c, &r->err);
        if (r->rc != PA_OK || !c)
            break;
        if (!(c = st_host_try(dev, c, &r->err))) {
            r->rc = r->err.code;
            break;
        }
        assert_int_equal(c->n_columns, n_cols);
        assert_true(r->rows + c->length <= 4096);
        for (int j = 0; j < n_cols; j++) {
            const pa_column *x = &c->columns[j];
            r->type[j] = x->type;
            int w = pa_type_bytes(x->type);
            assert_true(w >= 1 && w <= 16);
            for (int64_t i = 0; i < c->length; i++) {
                r->valid[j][r->rows + i] = pa_column_valid(x, i);
                memcpy(r->val[j][r->rows + i], (const uint8_t *)x->data + i * w, (size_t)w);
            }
        }
        r->rows += c->length;
        dv_chunk_destroy(c);
    }
    pq_scan_get_stats(s, &r->st);
    pq_scan_close(s);
    r->device_pages = pa_counter_get(PA_CTR_PAGES_DEVICE) - before;
}

static int64_t i64_at(const result *r, int col, int64_t row)
{
    int64_t v;
    memcpy(&v, r->val[col][row], 8);
    return v;
}

static pa_interval iv_at(const result *r, int col, int64_t row)
{
    pa_interval v;
    memcpy(&v, r->val[col][row], sizeof v);
    return v;
}

static result *res;   /* one large buffer, reused */

/* ------------------------------------------------------------------ tests */

/* Every value of time.parquet, on both decode paths, against DuckDB's. */
static void test_time_types(void **state)
{
    (void)state;
    expect *e = malloc(sizeof *e);
    assert_non_null(e);
    load_expect("time.expect.txt", e);
    assert_int_equal(e->n_rows, 300);
    static const struct { const char *col; pa_type_id type; } cols[] = {
        {"id", PA_TYPE_BIGINT},         {"ts", PA_TYPE_TIMESTAMP},         {"ts_ms", PA_TYPE_TIMESTAMP},
        {"ts_ns", PA_TYPE_TIMESTAMP_NS}, {"tstz", PA_TYPE_TIMESTAMPTZ},   {"t", PA_TYPE_TIME},
        {"iv", PA_TYPE_INTERVAL},       {"ms_dict", PA_TYPE_TIMESTAMP},    {"ns_dict", PA_TYPE_TIMESTAMP_NS},
        {"tz_dict", PA_TYPE_TIMESTAMPTZ}, {"t_dict", PA_TYPE_TIME},        {"iv_dict", PA_TYPE_INTERVAL},
    };
    enum { N = sizeof cols / sizeof cols[0] };
    const char *names[N];
    for (int j = 0; j < N; j++)
        names[j] = cols[j].col;
    for (int host = 0; host < 2; host++) {
        scan("time.parquet", names, N, NULL, host, res);
        if (res->rc != PA_OK)
            fail_msg("time.parquet (%s decode): %s", host ? "host" : "device", res->err.msg);
        assert_int_equal(res->rows, 300);
        int nulls = 0, negative = 0;
        for (int j = 0; j < N; j++) {
            assert_int_equal(res->type[j].id, cols[j].type);
            for (int64_t i = 0; i < 300; i++) {
                int64_t id = i64_at(res, 0, i);
                assert_true(id >= 0 && id < 300);
                if (cols[j].type == PA_TYPE_INTERVAL) {
                    char n[48];
                    snprintf(n, sizeof n, "%s_months", cols[j].col);
                    int c = expect_col(e, n);
                    assert_int_equal(res->valid[j][i], !e->null[id][c]);
                    if (!res->valid[j][i]) {
                        nulls++;
                        continue;
                    }
                    pa_interval v = iv_at(res, j, i);
                    if (v.months != e->v[id][c] || v.days != e->v[id][c + 1] || v.micros != e->v[id][c + 2])
                        fail_msg("%s row %lld: {%d, %d, %lld}, DuckDB {%lld, %lld, %lld}", cols[j].col, (long long)id,
                                 v.months, v.days, (long long)v.micros, (long long)e->v[id][c],
                                 (long long)e->v[id][c + 1], (long long)e->v[id][c + 2]);
                    continue;
                }
                int c = expect_col(e, cols[j].col);
                if (res->valid[j][i] != !e->null[id][c])
                    fail_msg("%s row %lld: valid %d, DuckDB %d", cols[j].col, (long long)id, res->valid[j][i],
                             !e->null[id][c]);
                if (!res->valid[j][i]) {
                    nulls++;
                    continue;
                }
                int64_t v = i64_at(res, j, i);
                negative += v < 0;
                if (v != e->v[id][c])
                    fail_msg("%s row %lld (%s decode): %lld, DuckDB %lld", cols[j].col, (long long)id,
                             host ? "host" : "device", (long long)v, (long long)e->v[id][c]);
            }
        }
        assert_true(nulls > 100);
        assert_true(negative > 100);   /* before 1970 */
        if (!host && !dv_host_visible(dev))
            assert_true(res->device_pages > 0);
        pa_err_close(&res->err);
    }
    free(e);
}

/* INT96 (PLAIN and dictionary pages) to the exact nanoseconds its bytes
 * were made from; DuckDB's microseconds are their floor. */
static void test_int96(void **state)
{
    (void)state;
    expect *e = malloc(sizeof *e);
    assert_non_null(e);
    load_expect("int96.expect.txt", e);
    const char *names[] = {"id", "i96", "i96_dict", "want_ns", "want_dict_ns"};
    int c_us = expect_col(e, "i96_us"), c_dus = expect_col(e, "i96_dict_us");
    for (int host = 0; host < 2; host++) {
        scan("int96.parquet", names, 5, NULL, host, res);
        if (res->rc != PA_OK)
            fail_msg("int96.parquet (%s decode): %s", host ? "host" : "device", res->err.msg);
        assert_int_equal(res->rows, 300);
        assert_int_equal(res->type[1].id, PA_TYPE_TIMESTAMP_NS);
        assert_int_equal(res->type[2].id, PA_TYPE_TIMESTAMP_NS);
        int checked = 0;
        for (int64_t i = 0; i < 300; i++) {
            int64_t id = i64_at(res, 0, i);
            for (int k = 0; k < 2; k++) {
                int j = 1 + k, w = 3 + k, cu = k ? c_dus : c_us;
                assert_int_equal(res->valid[j][i], res->valid[w][i]);
                assert_int_equal(res->valid[j][i], !e->null[id][cu]);
                if (!res->valid[j][i])
                    continue;
                int64_t v = i64_at(res, j, i), want = i64_at(res, w, i);
                if (v != want)
                    fail_msg("%s row %lld (%s decode): %lld ns, made from %lld", names[j], (long long)id,
                             host ? "host" : "device", (long long)v, (long long)want);
                int64_t floor_us = v / 1000 - (v % 1000 < 0);
                assert_int_equal(floor_us, e->v[id][cu]);
                checked++;
            }
        }
        assert_true(checked > 450);
        if (!host && !dv_host_visible(dev))
            assert_true(res->device_pages > 0);   /* the device's INT96 decoder ran */
        pa_err_close(&res->err);
    }
    /* The INT96 columns alone: on sim their pages (PLAIN and dictionary)
     * are the device's to decode, to the same values. */
    if (!dv_host_visible(dev)) {
        const char *i96[] = {"i96", "i96_dict"};
        scan("int96.parquet", i96, 2, NULL, false, res);
        assert_int_equal(res->rc, PA_OK);
        assert_true(res->device_pages >= 2);
        int64_t sum = 0;
        for (int64_t i = 0; i < res->rows; i++)
            sum += res->valid[0][i] ? i64_at(res, 0, i) % 1000003 : 0;
        scan("int96.parquet", i96, 2, NULL, true, res);
        assert_int_equal(res->rc, PA_OK);
        assert_int_equal(res->device_pages, 0);
        for (int64_t i = 0; i < res->rows; i++)
            sum -= res->valid[0][i] ? i64_at(res, 0, i) % 1000003 : 0;
        assert_int_equal(sum, 0);
    }
    /* Hand-computed: row 0 is Julian day 2440588 - 150 * 211 at 00:00:00,
     * row 1 is 2440588 - 149 * 211 plus 37 * 2^32 + 1000003 ns. */
    scan("int96.parquet", names, 5, NULL, false, res);
    assert_int_equal(res->rc, PA_OK);
    for (int64_t i = 0; i < 2; i++) {
        int64_t id = i64_at(res, 0, i);
        int64_t want = id == 0 ? -150 * 211 * INT64_C(86400000000000)
                               : -149 * 211 * INT64_C(86400000000000) + 37 * (INT64_C(1) << 32) + 1000003;
        assert_int_equal(i64_at(res, 1, i), want);
    }
    free(e);
}

/* int96.parquet with statistics (min = max = 1900-01-01, false) on its
 * INT96 columns: never used to prune, so a predicate keeps its rows. */
static void test_int96_statistics_ignored(void **state)
{
    (void)state;
    const char *in = data_path("int96.parquet");
    char out[600];
    snprintf(out, sizeof out, "%s/int96_stats.parquet", tmp_dir);
    FILE *f = fopen(in, "rb");
    assert_non_null(f);
    static uint8_t file[1 << 16];
    size_t len = fread(file, 1, sizeof file, f);
    fclose(f);
    assert_true(len > 8 && len < sizeof file);
    pq_file_meta *m;
    assert_int_equal(pq_footer_read(in, &m, NULL), PA_OK);
    static const uint8_t y1900[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0x9d, 0xda, 0x24, 0};   /* Julian day 2415021 */
    for (uint32_t g = 0; g < m->n_row_groups; g++)
        for (uint32_t c = 1; c <= 3; c += 2) {
            pq_column_meta *cm = &m->row_groups[g].columns[c].meta_data;
            cm->has_statistics = true;
            cm->statistics.min_value = cm->statistics.max_value = (pq_bin){y1900, 12};
            cm->statistics.min = cm->statistics.max = (pq_bin){y1900, 12};
        }
    pq_buf b = {0};
    assert_int_equal(pq_file_meta_encode(m, &b, NULL), PA_OK);
    f = fopen(out, "wb");
    assert_non_null(f);
    uint8_t tail[8] = {(uint8_t)b.len, (uint8_t)(b.len >> 8), (uint8_t)(b.len >> 16), (uint8_t)(b.len >> 24), 'P', 'A', 'R', '1'};
    assert_int_equal(fwrite(file, 1, len - 8 - m->footer_len, f), len - 8 - m->footer_len);
    assert_int_equal(fwrite(b.data, 1, b.len, f), b.len);
    assert_int_equal(fwrite(tail, 1, 8, f), 8);
    fclose(f);
    pq_buf_free(&b);
    pq_file_meta_release(m);
    /* Rows at or after 1970: counted from the generator's column. */
    const char *names[] = {"want_ns", "i96"};
    scan("int96.parquet", names, 1, NULL, false, res);
    assert_int_equal(res->rc, PA_OK);
    int64_t want = 0;
    for (int64_t i = 0; i < res->rows; i++)
        want += res->valid[0][i] && i64_at(res, 0, i) >= 0;
    assert_true(want > 0);
    scan(out, names, 2, "i96 >= '1970-01-01'", false, res);
    if (res->rc != PA_OK)
        fail_msg("%s", res->err.msg);
    assert_int_equal(res->rows, want);
    assert_int_equal(res->st.row_groups_pruned, 0);
    for (int64_t i = 0; i < res->rows; i++)
        assert_true(i64_at(res, 1, i) >= 0 && i64_at(res, 0, i) == i64_at(res, 1, i));
    unlink(out);
}

/* An INT96 past the int64 nanoseconds (Julian day 4000000000): refused on
 * both decode paths, the message naming the file, the column and why. */
static void test_int96_range(void **state)
{
    (void)state;
    const char *names[] = {"i96"};
    for (int host = 0; host < 2; host++) {
        scan("int96_range.parquet", names, 1, NULL, host, res);
        if (res->rc != PA_EUNSUPPORTED || !strstr(res->err.msg, "int96_range.parquet") ||
            !strstr(res->err.msg, "i96") || !strstr(res->err.msg, "INT96") || !strstr(res->err.msg, "TIMESTAMP_NS range"))
            fail_msg("%s decode: %s: %s", host ? "host" : "device", pa_status_name(res->rc), res->err.msg);
        if (!host && !dv_host_visible(dev) && !strstr(res->err.msg, "an INT96 timestamp lies outside"))
            fail_msg("not the device decoder's refusal: %s", res->err.msg);   /* (kn_gpu_decode.cu's words) */
        pa_err_close(&res->err);
    }
}

/* ConvertedType TIMESTAMP_MILLIS/_MICROS without a LogicalType: the type
 * DuckDB reads them as, and its values. */
static void test_legacy(void **state)
{
    (void)state;
    expect *e = malloc(sizeof *e);
    assert_non_null(e);
    load_expect("legacy.expect.txt", e);
    FILE *f = fopen(data_path("legacy.types.txt"), "r");
    assert_non_null(f);
    char line[128];
    char duck[3][64] = {{0}};
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (n++ > 0 && n - 2 < 3) {
            line[strcspn(line, "\r\n")] = '\0';
            snprintf(duck[n - 2], sizeof duck[n - 2], "%s", strchr(line, '|') + 1);
        }
    fclose(f);
    const char *names[] = {"id", "ms", "us"};
    scan("legacy.parquet", names, 3, NULL, false, res);
    assert_int_equal(res->rc, PA_OK);
    assert_int_equal(res->rows, 10);
    for (int j = 1; j < 3; j++)
        assert_string_equal(pa_type_name(res->type[j].id), duck[j]);
    for (int64_t i = 0; i < 10; i++) {
        int64_t id = i64_at(res, 0, i);
        assert_int_equal(i64_at(res, 1, i), e->v[id][1]);
        assert_int_equal(i64_at(res, 2, i), e->v[id][2]);
    }
    free(e);
}

/* prune.parquet: row group 0 holds 2000-01-01 00:00:00.000 .. 00:00:03.000,
 * row group 1 00:00:04.001 .. 00:00:07.001, 512 rows per value, in a
 * TIMESTAMP(MILLIS) column (statistics in milliseconds, constants and
 * values in microseconds). */
static void test_millis_pruning(void **state)
{
    (void)state;
    static const struct { const char *pred; int64_t rows; uint64_t pruned; } cases[] = {
        {"ts_ms >= '2000-01-01 00:00:04.001'", 2048, 1},
        {"ts_ms >= 946684804001000", 2048, 1},            /* the engine's microseconds */
        {"ts_ms > '2000-01-01 00:00:03'", 2048, 1},
        {"ts_ms > '2000-01-01 00:00:02.9999995'", 2560, 0}, /* inexact: 3.000 matches */
        {"ts_ms <= '2000-01-01 00:00:03'", 2048, 1},
        {"ts_ms < '2000-01-01 00:00:04.001'", 2048, 1},
        {"ts_ms <= '2000-01-01 00:00:04.001'", 2560, 0},
        {"ts_ms = '2000-01-01T00:00:05.001Z'", 512, 1},
        {"ts_ms = '2000-01-01 01:00:05.001+01'", 512, 1},
        {"ts_ms = '2000-01-01 00:00:04.0015'", 0, 1},   /* no such value; the statistics cannot tell */
        {"ts_ms < '1999-12-31 23:59:59.999999'", 0, 2},
        {"ts_ms <> '2000-01-01 00:00:00'", 3584, 0},
        {"ts_ms is not null", 4096, 0},
    };
    const char *names[] = {"id", "ts_ms"};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int host = 0; host < 2; host++) {
            scan("prune.parquet", names, 2, cases[k].pred, host, res);
            if (res->rc != PA_OK)
                fail_msg("%s: %s", cases[k].pred, res->err.msg);
            if (res->rows != cases[k].rows || res->st.row_groups_pruned != cases[k].pruned)
                fail_msg("%s: %lld rows, %llu row groups pruned; want %lld, %llu", cases[k].pred,
                         (long long)res->rows, (unsigned long long)res->st.row_groups_pruned,
                         (long long)cases[k].rows, (unsigned long long)cases[k].pruned);
            pa_err_close(&res->err);
        }
    /* A constant that is not a timestamp. */
    scan("prune.parquet", names, 2, "ts_ms > '2000-13-01'", false, res);
    assert_int_equal(res->rc, PA_ESYNTAX);
    assert_non_null(strstr(res->err.msg, "ts_ms"));
    pa_err_close(&res->err);
}

/* Predicates on every time type, their constants as text (or the engine
 * integer), pushed down and applied to the rows: the counts DuckDB's
 * values give against the constant's value (DuckDB's epoch_us / epoch_ns
 * of the same literal). */
static void test_time_predicates(void **state)
{
    (void)state;
    expect *e = malloc(sizeof *e);
    assert_non_null(e);
    load_expect("time.expect.txt", e);
    static const struct { const char *pred, *col; pq_op op; int64_t c; } cases[] = {
        {"ts >= '1970-01-05 12:00:00.000123'", "ts", PQ_OP_GE, INT64_C(388800000123)},
        {"ts < '1969-12-31 23:59:59.9999995'", "ts", PQ_OP_LT, 0},   /* floor -1 inexact: < -0.5 us is <= -1 */
        {"ts_ms <= '1950-09-01 00:00:00'", "ts_ms", PQ_OP_LE, INT64_C(-610156800000000)},
        {"ts_ns > '1969-12-31 23:59:30.123456789'", "ts_ns", PQ_OP_GT, INT64_C(-29876543211)},
        {"ts_ns = -60123456789", "ts_ns", PQ_OP_EQ, INT64_C(-60123456789)},
        {"tstz < '1969-12-15 00:00:00+00'", "tstz", PQ_OP_LT, INT64_C(-1468800000000)},
        {"tstz >= '1969-12-15 02:00:00+02:00'", "tstz", PQ_OP_GE, INT64_C(-1468800000000)},
        {"t >= '23:00:00'", "t", PQ_OP_GE, INT64_C(82800000000)},
        {"t < '00:20:34.567891'", "t", PQ_OP_LT, INT64_C(1234567891)},
        {"t_dict <> '23:59:59.999999'", "t_dict", PQ_OP_NE, INT64_C(86399999999)},
        {"ns_dict = '1900-01-01 01:00:00.000000001'", "ns_dict", PQ_OP_EQ, INT64_C(-2208985199999999999)},
        {"ms_dict > '1969-12-31 23:00:00.25'", "ms_dict", PQ_OP_GT, INT64_C(-3599750000)},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int c = expect_col(e, cases[k].col);
        int64_t want = 0;
        for (int r = 0; r < e->n_rows; r++) {
            if (e->null[r][c])
                continue;
            int64_t v = e->v[r][c], q = cases[k].c;
            switch (cases[k].op) {
            case PQ_OP_EQ: want += v == q; break;
            case PQ_OP_NE: want += v != q; break;
            case PQ_OP_LT: want += v < q; break;
            case PQ_OP_LE: want += v <= q; break;
            case PQ_OP_GT: want += v > q; break;
            default: want += v >= q; break;
            }
        }
        const char *names[] = {"id"};
        for (int host = 0; host < 2; host++) {
            scan("time.parquet", names, 1, cases[k].pred, host, res);
            if (res->rc != PA_OK)
                fail_msg("%s: %s", cases[k].pred, res->err.msg);
            if (res->rows != want)
                fail_msg("%s: %lld rows, DuckDB's values give %lld", cases[k].pred, (long long)res->rows,
                         (long long)want);
            pa_err_close(&res->err);
        }
        assert_true(want > 0);
    }
    /* INTERVAL: IS [NOT] NULL only. */
    const char *names[] = {"id"};
    scan("time.parquet", names, 1, "iv is null", false, res);
    assert_int_equal(res->rc, PA_OK);
    assert_int_equal(res->rows, 37);
    scan("time.parquet", names, 1, "iv = 3", false, res);
    assert_int_equal(res->rc, PA_EUNSUPPORTED);
    assert_non_null(strstr(res->err.msg, "iv"));
    pa_err_close(&res->err);
    free(e);
}

/* TIME(MILLIS) in an INT32 (time_ms.parquet; ms_raw holds the same
 * integers unannotated): microseconds as DuckDB reads them, on both decode
 * paths, and pruned by its statistics (in milliseconds) correctly. */
static void test_time_millis_int32(void **state)
{
    (void)state;
    expect *e = malloc(sizeof *e);
    assert_non_null(e);
    load_expect("time_ms.expect.txt", e);
    const char *names[] = {"id", "t_ms", "ms_raw"};
    for (int host = 0; host < 2; host++) {
        scan("time_ms.parquet", names, 3, NULL, host, res);
        if (res->rc != PA_OK)
            fail_msg("%s", res->err.msg);
        assert_int_equal(res->rows, 4096);
        assert_int_equal(res->type[1].id, PA_TYPE_TIME);
        int checked = 0;
        for (int64_t i = 0; i < res->rows; i++) {
            assert_int_equal(res->valid[1][i], res->valid[2][i]);
            if (!res->valid[1][i])
                continue;
            int32_t raw;
            memcpy(&raw, res->val[2][i], 4);
            int64_t v = i64_at(res, 1, i);
            int r = 0;
            while (r < e->n_rows && (e->null[r][0] || e->v[r][0] != raw))
                r++;
            assert_true(r < e->n_rows);
            if (v != e->v[r][1])
                fail_msg("t_ms %d ms (%s decode): %lld us, DuckDB %lld", raw, host ? "host" : "device", (long long)v,
                         (long long)e->v[r][1]);
            checked++;
        }
        assert_true(checked > 3600);
    }
    static const struct { const char *pred; int64_t c; pq_op op; uint64_t pruned; } cases[] = {
        {"t_ms >= '13:00:00'", INT64_C(46800000000), PQ_OP_GE, 1},
        {"t_ms > '00:00:31.031'", INT64_C(31031000), PQ_OP_GT, 1},
        {"t_ms <= '00:00:31.031'", INT64_C(31031000), PQ_OP_LE, 1},
        {"t_ms < '13:53:52.0325'", INT64_C(50032032500), PQ_OP_LT, 0},
        {"t_ms = 50032032000", INT64_C(50032032000), PQ_OP_EQ, 1},
    };
    /* The expected counts from the raw integers (scanned above). */
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        scan("time_ms.parquet", names, 3, NULL, true, res);
        int64_t want = 0;
        for (int64_t i = 0; i < res->rows; i++) {
            if (!res->valid[2][i])
                continue;
            int32_t raw;
            memcpy(&raw, res->val[2][i], 4);
            int64_t v = (int64_t)raw * 1000, q = cases[k].c;
            switch (cases[k].op) {
            case PQ_OP_EQ: want += v == q; break;
            case PQ_OP_LT: want += v < q; break;
            case PQ_OP_LE: want += v <= q; break;
            case PQ_OP_GT: want += v > q; break;
            default: want += v >= q; break;
            }
        }
        assert_true(want > 0);
        for (int host = 0; host < 2; host++) {
            scan("time_ms.parquet", names, 3, cases[k].pred, host, res);
            if (res->rc != PA_OK)
                fail_msg("%s: %s", cases[k].pred, res->err.msg);
            if (res->rows != want || res->st.row_groups_pruned != cases[k].pruned)
                fail_msg("%s: %lld rows, %llu row groups pruned; want %lld, %llu", cases[k].pred,
                         (long long)res->rows, (unsigned long long)res->st.row_groups_pruned, (long long)want,
                         (unsigned long long)cases[k].pruned);
        }
    }
    free(e);
}

/* Hive folders named by timestamps: a TIMESTAMP partition column whose
 * value every row carries (raw microseconds), and predicates on it that
 * prune whole files. */
static void test_hive_timestamps(void **state)
{
    (void)state;
    static const struct { const char *folder; int64_t us; } parts[] = {
        {"ts=1969-12-31 23:59:59.5", -500000},
        {"ts=2021-05-06T01:02:03.25", INT64_C(1620262923250000)},
    };
    FILE *f = fopen(data_path("legacy.parquet"), "rb");
    assert_non_null(f);
    static uint8_t file[1 << 14];
    size_t len = fread(file, 1, sizeof file, f);
    fclose(f);
    char dir[700], path[800], glob[700];
    for (int k = 0; k < 2; k++) {
        snprintf(dir, sizeof dir, "%s/hive/%s", tmp_dir, parts[k].folder);
        snprintf(path, sizeof path, "%s/hive", tmp_dir);
        mkdir(path, 0700);
        assert_int_equal(mkdir(dir, 0700), 0);
        snprintf(path, sizeof path, "%s/f.parquet", dir);
        f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(file, 1, len, f), len);
        fclose(f);
    }
    snprintf(glob, sizeof glob, "%s/hive/*/*.parquet", tmp_dir);
    const char *names[] = {"id", "ts"};
    scan(glob, names, 2, NULL, false, res);
    if (res->rc != PA_OK)
        fail_msg("%s", res->err.msg);
    assert_int_equal(res->rows, 20);
    assert_int_equal(res->type[1].id, PA_TYPE_TIMESTAMP);
    for (int64_t i = 0; i < 20; i++)
        assert_int_equal(i64_at(res, 1, i), parts[i / 10].us);   /* files in folder order */
    scan(glob, names, 2, "ts > '1970-01-01'", false, res);
    assert_int_equal(res->rc, PA_OK);
    assert_int_equal(res->rows, 10);
    assert_int_equal(res->st.files_pruned, 1);
    assert_int_equal(i64_at(res, 1, 0), parts[1].us);
    scan(glob, names, 2, "ts = '1969-12-31 23:59:59.5'", false, res);
    assert_int_equal(res->rc, PA_OK);
    assert_int_equal(res->rows, 10);
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/hive/%s/f.parquet", tmp_dir, parts[k].folder);
        unlink(path);
        snprintf(path, sizeof path, "%s/hive/%s", tmp_dir, parts[k].folder);
        rmdir(path);
    }
    snprintf(path, sizeof path, "%s/hive", tmp_dir);
    rmdir(path);
}

/* A TIMESTAMP(MILLIS) value past the int64 microseconds: an error naming
 * the file and the column. */
static void test_millis_overflow(void **state)
{
    (void)state;
    const char *names[] = {"id", "big"};
    for (int host = 0; host < 2; host++) {
        scan("overflow.parquet", names, 2, NULL, host, res);
        assert_int_equal(res->rc, PA_EOVERFLOW);
        assert_non_null(strstr(res->err.msg, "overflow.parquet"));
        assert_non_null(strstr(res->err.msg, "column big"));
        pa_err_close(&res->err);
    }
    /* The other column alone reads. */
    scan("overflow.parquet", names, 1, NULL, false, res);
    assert_int_equal(res->rc, PA_OK);
    assert_int_equal(res->rows, 4);
}

static int setup(void **state)
{
    (void)state;
    const char *d = getenv("PISTA_TEST_DATA");
    snprintf(data_dir, sizeof data_dir, "%s", d && *d ? d : "tests/data");
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/pista_scan_time_XXXXXX");
    if (!mkdtemp(tmp_dir))
        return -1;
    dv_options opt = {.spec = st_spec(), .cpu_threads = 4};
    if (dv_open(&opt, &dev, NULL) != PA_OK)
        return -1;
    if (!(res = malloc(sizeof *res)))
        return -1;
    io_engine *e;
    return io_engine_shared(&e, NULL) == PA_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    free(res);
    rmdir(tmp_dir);
    pq_meta_cache_clear();
    io_engine_shared_shutdown();
    dv_close(dev);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_types),
        cmocka_unit_test(test_int96),
        cmocka_unit_test(test_int96_statistics_ignored),
        cmocka_unit_test(test_int96_range),
        cmocka_unit_test(test_legacy),
        cmocka_unit_test(test_millis_pruning),
        cmocka_unit_test(test_time_predicates),
        cmocka_unit_test(test_time_millis_int32),
        cmocka_unit_test(test_hive_timestamps),
        cmocka_unit_test(test_millis_overflow),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
