/*
 * test_writer_time.c - the writer's time types read back by our own reader:
 * TIMESTAMP, TIMESTAMPTZ, TIMESTAMP_NS, TIME and INTERVAL with NULLs,
 * values before 1970 and repeated values (dictionary pages), over several
 * row groups: the schema's annotations (the format's rules), statistics
 * (signed int64 min/max of each row group, computed here from the
 * generator; none for INTERVAL), every value through the scan, and the
 * INTERVAL values Parquet cannot hold refused naming the column and row.
 * DuckDB's reading of the writer's files is tests/sh/test_parquet_time_oracle.sh.
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

#include "device/device.h"
#include "storage/storage.h"
#include "tmp_testutil.h"

static char tmp_dir[256];

enum { C_TS, C_TZ, C_NS, C_TIME, C_IV, N_COLS };
static const char *names[N_COLS] = {"ts", "tz", "ns", "t", "iv"};
static const pa_type_id types[N_COLS] = {PA_TYPE_TIMESTAMP, PA_TYPE_TIMESTAMPTZ, PA_TYPE_TIMESTAMP_NS, PA_TYPE_TIME,
                                         PA_TYPE_INTERVAL};
#define ROWS 1000
#define RG_ROWS 300

static bool is_null(int k, int64_t i) { return (i + k) % 11 == 3; }

/* Column k's value of row i (int64 columns); negative ones before 1970. */
static int64_t gen(int k, int64_t i)
{
    switch (k) {
    case C_TS: return (i - 500) * INT64_C(86400123457);   /* days apart, microseconds */
    case C_TZ: return (i % 7) * INT64_C(3600000000) - INT64_C(1000000000000);   /* few values: a dictionary */
    case C_NS: return (i - 300) * INT64_C(1000000007) + INT64_C(-2208988800000000000) * (i % 2);
    default: return (i * INT64_C(123456789)) % PA_USEC_PER_DAY;   /* TIME */
    }
}

static pa_interval gen_iv(int64_t i)
{
    return (pa_interval){(int32_t)(i % 25), (int32_t)(i % 40), (i % 9) * 1500 * 1000};
}

static void write_file(const char *path)
{
    pq_write_column cols[N_COLS];
    for (int k = 0; k < N_COLS; k++)
        cols[k] = (pq_write_column){names[k], {types[k], 0, 0}, true};
    pq_writer_options o;
    pq_writer_options_init(&o);
    o.row_group_rows = RG_ROWS;
    pq_writer *w;
    assert_int_equal(pq_writer_create(path, cols, N_COLS, &o, &w, NULL), PA_OK);
    static int64_t v64[4][ROWS];
    static pa_interval viv[ROWS];
    static uint8_t valid[N_COLS][(ROWS + 7) / 8];
    memset(valid, 0, sizeof valid);
    pa_column in[N_COLS];
    for (int k = 0; k < N_COLS; k++) {
        for (int64_t i = 0; i < ROWS; i++) {
            if (!is_null(k, i))
                valid[k][i / 8] |= (uint8_t)(1u << (i % 8));
            if (k == C_IV)
                viv[i] = is_null(k, i) ? (pa_interval){-1, -1, -1} : gen_iv(i);   /* a NULL's bytes are not checked */
            else
                v64[k][i] = gen(k, i);
        }
        memset(&in[k], 0, sizeof in[k]);
        in[k].type = (pa_type){types[k], 0, 0};
        in[k].length = ROWS;
        in[k].data = k == C_IV ? (void *)viv : (void *)v64[k];
        in[k].validity = valid[k];
    }
    assert_int_equal(pq_writer_write(w, in, ROWS, NULL), PA_OK);
    assert_int_equal(pq_writer_close(w, NULL), PA_OK);
}

static int64_t le64(pq_bin b)
{
    assert_int_equal(b.len, 8);
    int64_t v;
    memcpy(&v, b.ptr, 8);
    return v;
}

static void test_footer(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/time.parquet", tmp_dir);
    write_file(path);
    pq_file_meta *m;
    assert_int_equal(pq_footer_read(path, &m, NULL), PA_OK);
    assert_int_equal(m->n_row_groups, (ROWS + RG_ROWS - 1) / RG_ROWS);
    /* Annotations: TIMESTAMP_MICROS only where the values are UTC-adjusted. */
    const pq_schema_element *e = &m->schema[1];
    assert_int_equal(e[C_TS].type, PQ_T_INT64);
    assert_int_equal(e[C_TS].logical.kind, PQ_LT_TIMESTAMP);
    assert_false(e[C_TS].logical.is_adjusted_to_utc);
    assert_int_equal(e[C_TS].logical.unit, PQ_TU_MICROS);
    assert_false(e[C_TS].has_converted_type);
    assert_true(e[C_TZ].logical.is_adjusted_to_utc);
    assert_int_equal(e[C_TZ].logical.unit, PQ_TU_MICROS);
    assert_true(e[C_TZ].has_converted_type);
    assert_int_equal(e[C_TZ].converted_type, PQ_CT_TIMESTAMP_MICROS);
    assert_int_equal(e[C_NS].logical.unit, PQ_TU_NANOS);
    assert_false(e[C_NS].logical.is_adjusted_to_utc);
    assert_false(e[C_NS].has_converted_type);
    assert_int_equal(e[C_TIME].logical.kind, PQ_LT_TIME);
    assert_int_equal(e[C_TIME].logical.unit, PQ_TU_MICROS);
    assert_false(e[C_TIME].logical.is_adjusted_to_utc);
    assert_false(e[C_TIME].has_converted_type);
    assert_int_equal(e[C_IV].type, PQ_T_FIXED_LEN_BYTE_ARRAY);
    assert_int_equal(e[C_IV].type_length, 12);
    assert_int_equal(e[C_IV].converted_type, PQ_CT_INTERVAL);
    assert_int_equal(e[C_IV].logical.kind, PQ_LT_NONE);
    /* Statistics: each row group's signed min and max; none for INTERVAL. */
    for (uint32_t g = 0; g < m->n_row_groups; g++) {
        int64_t r0 = (int64_t)g * RG_ROWS, r1 = r0 + RG_ROWS < ROWS ? r0 + RG_ROWS : ROWS;
        for (int k = 0; k < N_COLS; k++) {
            const pq_column_meta *cm = &m->row_groups[g].columns[k].meta_data;
            int64_t lo = INT64_MAX, hi = INT64_MIN, nulls = 0;
            for (int64_t i = r0; i < r1; i++) {
                if (is_null(k, i)) {
                    nulls++;
                    continue;
                }
                if (k != C_IV) {
                    lo = gen(k, i) < lo ? gen(k, i) : lo;
                    hi = gen(k, i) > hi ? gen(k, i) : hi;
                }
            }
            assert_int_equal(cm->statistics.null_count, nulls);
            if (k == C_IV) {
                assert_null(cm->statistics.min_value.ptr);
                assert_null(cm->statistics.max_value.ptr);
                continue;
            }
            assert_int_equal(le64(cm->statistics.min_value), lo);
            assert_int_equal(le64(cm->statistics.max_value), hi);
        }
        /* The few TIMESTAMPTZ values make dictionary pages. */
        const pq_column_meta *tz = &m->row_groups[g].columns[C_TZ].meta_data;
        assert_true(tz->has_dictionary_page_offset);
    }
    pq_file_meta_release(m);

    /* Every value through the scan. */
    dv_device *dev;
    dv_options dopt = {.spec = "cpu"};
    assert_int_equal(dv_open(&dopt, &dev, NULL), PA_OK);
    const char *p = path;
    pq_scan_options so;
    pq_scan_options_init(&so);
    so.paths = &p;
    so.n_paths = 1;
    so.device = dev;
    pq_scan *s;
    assert_int_equal(pq_scan_open(&so, &s, NULL), PA_OK);
    for (int k = 0; k < N_COLS; k++)
        assert_int_equal(pq_scan_column_type(s, k).id, types[k]);
    int64_t row = 0;
    for (;;) {
        dv_chunk *c;
        assert_int_equal(pq_scan_next(s, &c, NULL), PA_OK);
        if (!c)
            break;
        for (int64_t r = 0; r < c->length; r++, row++)
            for (int k = 0; k < N_COLS; k++) {
                const pa_column *x = &c->columns[k];
                assert_int_equal(pa_column_valid(x, r), !is_null(k, row));
                if (is_null(k, row))
                    continue;
                if (k == C_IV) {
                    pa_interval v = ((const pa_interval *)x->data)[r], want = gen_iv(row);
                    assert_int_equal(v.months, want.months);
                    assert_int_equal(v.days, want.days);
                    assert_int_equal(v.micros, want.micros);
                } else {
                    assert_int_equal(((const int64_t *)x->data)[r], gen(k, row));
                }
            }
        dv_chunk_destroy(c);
    }
    assert_int_equal(row, ROWS);
    pq_scan_close(s);
    dv_close(dev);
    unlink(path);
}

/* INTERVALs Parquet cannot hold: PA_EUNSUPPORTED naming the column and
 * row, and no file left behind. */
static void test_interval_refused(void **state)
{
    (void)state;
    static const struct { pa_interval v; const char *why; } bad[] = {
        {{0, 0, 1500}, "a fraction of a millisecond"},
        {{-1, 0, 0}, "a negative field"},
        {{0, -2, 0}, "a negative field"},
        {{0, 0, -1000}, "a negative field"},
        {{0, 0, INT64_C(4294967296000)}, "more than 2^32-1 milliseconds"},
    };
    char path[512];
    snprintf(path, sizeof path, "%s/bad.parquet", tmp_dir);
    pq_write_column col = {"span", {PA_TYPE_INTERVAL, 0, 0}, true};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pq_writer *w;
        assert_int_equal(pq_writer_create(path, &col, 1, NULL, &w, NULL), PA_OK);
        pa_interval v[3] = {{1, 2, 3000}, {4, 5, 6000}, bad[i].v};
        pa_column in = {.type = {PA_TYPE_INTERVAL, 0, 0}, .length = 3, .data = v};
        pa_err err;
        pa_err_init(&err);
        assert_int_equal(pq_writer_write(w, &in, 3, &err), PA_EUNSUPPORTED);
        assert_non_null(strstr(err.msg, "column span"));
        assert_non_null(strstr(err.msg, "row 2"));
        assert_non_null(strstr(err.msg, bad[i].why));
        pa_err_close(&err);
        pq_writer_abort(w);
        assert_false(tmp_exists(path));
        assert_int_equal(access(path, F_OK), -1);
    }
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/pista_wtime_XXXXXX");
    if (!mkdtemp(tmp_dir))
        return -1;
    io_engine *e;
    return io_engine_shared(&e, NULL) == PA_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    pq_meta_cache_clear();
    io_engine_shared_shutdown();
    rmdir(tmp_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_footer),
        cmocka_unit_test(test_interval_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
