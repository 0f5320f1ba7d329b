/*
 * test_pq_meta.c - Parquet footers of real files (DuckDB-written, facts from
 * shared/tpch/README.md and tests/data/parquet/README.md), schema mapping,
 * page header walks, statistics text, the metadata cache, and robustness:
 * every truncation of a real footer, thousands of random byte flips, broken
 * files, and allocation failures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/storage.h"

static char data_dir[512];
static char tmp_dir[256];

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

static const pq_file_meta *open_meta(const char *name)
{
    pq_file_meta *m = NULL;
    pa_err err;
    pa_err_init(&err);
    int rc = pq_footer_read(data_path(name), &m, &err);
    if (rc)
        print_error("%s\n", err.msg);
    assert_int_equal(rc, PA_OK);
    pa_err_close(&err);
    return m;
}

/* ------------------------------------------------------------------ facts of real files */

typedef struct col_fact { const char *name; pa_type_id type; int precision, scale; } col_fact;

static void check_columns(const pq_file_meta *m, const col_fact *want, uint32_t n)
{
    pq_column_desc *cols = NULL;
    pa_err err;
    pa_err_init(&err);
    uint32_t nc = 0;
    assert_int_equal(pq_schema_map(m, &cols, &nc, &err), PA_OK);
    assert_int_equal(m->n_leaves, n);
    assert_int_equal(nc, n);
    for (uint32_t i = 0; i < n; i++) {
        assert_string_equal(cols[i].name, want[i].name);
        assert_int_equal(cols[i].type.id, want[i].type);
        assert_true(cols[i].nullable);   /* DuckDB declares every column OPTIONAL */
        if (want[i].type == PA_TYPE_DECIMAL) {
            assert_int_equal(cols[i].type.precision, want[i].precision);
            assert_int_equal(cols[i].type.scale, want[i].scale);
        }
    }
    pa_free(cols);
    pa_err_close(&err);
}

static const col_fact lineitem_cols[] = {
    {"l_orderkey", PA_TYPE_BIGINT, 0, 0}, {"l_partkey", PA_TYPE_INTEGER, 0, 0},
    {"l_suppkey", PA_TYPE_INTEGER, 0, 0}, {"l_linenumber", PA_TYPE_INTEGER, 0, 0},
    {"l_quantity", PA_TYPE_DECIMAL, 15, 2}, {"l_extendedprice", PA_TYPE_DECIMAL, 15, 2},
    {"l_discount", PA_TYPE_DECIMAL, 15, 2}, {"l_tax", PA_TYPE_DECIMAL, 15, 2},
    {"l_returnflag", PA_TYPE_VARCHAR, 0, 0}, {"l_linestatus", PA_TYPE_VARCHAR, 0, 0},
    {"l_shipdate", PA_TYPE_DATE, 0, 0}, {"l_commitdate", PA_TYPE_DATE, 0, 0},
    {"l_receiptdate", PA_TYPE_DATE, 0, 0}, {"l_shipinstruct", PA_TYPE_VARCHAR, 0, 0},
    {"l_shipmode", PA_TYPE_VARCHAR, 0, 0}, {"l_comment", PA_TYPE_VARCHAR, 0, 0},
};

static void test_tpch_small_tables(void **state)
{
    (void)state;
    const col_fact region[] = {{"r_regionkey", PA_TYPE_INTEGER, 0, 0}, {"r_name", PA_TYPE_VARCHAR, 0, 0},
                               {"r_comment", PA_TYPE_VARCHAR, 0, 0}};
    const col_fact nation[] = {{"n_nationkey", PA_TYPE_INTEGER, 0, 0}, {"n_name", PA_TYPE_VARCHAR, 0, 0},
                               {"n_regionkey", PA_TYPE_INTEGER, 0, 0}, {"n_comment", PA_TYPE_VARCHAR, 0, 0}};
    const col_fact supplier[] = {{"s_suppkey", PA_TYPE_INTEGER, 0, 0}, {"s_name", PA_TYPE_VARCHAR, 0, 0},
                                 {"s_address", PA_TYPE_VARCHAR, 0, 0}, {"s_nationkey", PA_TYPE_INTEGER, 0, 0},
                                 {"s_phone", PA_TYPE_VARCHAR, 0, 0}, {"s_acctbal", PA_TYPE_DECIMAL, 15, 2},
                                 {"s_comment", PA_TYPE_VARCHAR, 0, 0}};
    struct { const char *file; const col_fact *cols; uint32_t n; int64_t rows; } t[] = {
        {"region.parquet", region, 3, 5}, {"nation.parquet", nation, 4, 25}, {"supplier.parquet", supplier, 7, 100}};
    for (int i = 0; i < 3; i++) {
        const pq_file_meta *m = open_meta(t[i].file);
        assert_int_equal(m->num_rows, t[i].rows);
        assert_int_equal(m->n_row_groups, 1);
        assert_int_equal(m->version, 1);
        assert_string_equal(m->created_by, "DuckDB version v1.5.6 (build 069cc9f9b5)");
        check_columns(m, t[i].cols, t[i].n);
        for (uint32_t c = 0; c < t[i].n; c++) {
            const pq_column_meta *cm = &m->row_groups[0].columns[c].meta_data;
            assert_int_equal(cm->codec, PQ_CODEC_SNAPPY);
            assert_int_equal(cm->num_values, t[i].rows);
            assert_true(cm->has_statistics && cm->statistics.has_null_count);
            assert_int_equal(cm->statistics.null_count, 0);
        }
        pq_file_meta_release(m);
    }
}

static void test_lineitem_variants(void **state)
{
    (void)state;
    const pq_file_meta *z = open_meta("lineitem-zstd.parquet");
    assert_int_equal(z->num_rows, 60175);
    assert_int_equal(z->n_row_groups, 1);
    check_columns(z, lineitem_cols, 16);
    for (uint32_t c = 0; c < 16; c++)
        assert_int_equal(z->row_groups[0].columns[c].meta_data.codec, PQ_CODEC_ZSTD);
    pq_file_meta_release(z);

    const pq_file_meta *v2 = open_meta("lineitem-v2.parquet");
    assert_int_equal(v2->version, 2);
    assert_int_equal(v2->num_rows, 60175);
    check_columns(v2, lineitem_cols, 16);
    for (uint32_t c = 0; c < 16; c++) {
        const pq_column_meta *cm = &v2->row_groups[0].columns[c].meta_data;
        int32_t want = c == 0 || c == 5 ? PQ_ENC_DELTA_BINARY_PACKED
                     : c == 15 ? PQ_ENC_DELTA_LENGTH_BYTE_ARRAY : PQ_ENC_RLE_DICTIONARY;
        bool found = false;
        for (uint32_t e = 0; e < cm->n_encodings; e++)
            found |= cm->encodings[e] == want;
        assert_true(found);
        assert_int_equal(cm->codec, PQ_CODEC_SNAPPY);
        assert_int_equal(cm->has_dictionary_page_offset, want == PQ_ENC_RLE_DICTIONARY);
    }
    pq_file_meta_release(v2);

    const pq_file_meta *rg = open_meta("lineitem-rowgroup10000.parquet");
    assert_int_equal(rg->n_row_groups, 6);
    for (uint32_t g = 0; g < 6; g++)
        assert_int_equal(rg->row_groups[g].num_rows, g < 5 ? 10240 : 8975);
    assert_int_equal(rg->num_rows, 60175);
    pq_file_meta_release(rg);
}

/* Every chunk of the file walks; page kinds and value counts add up. */
static void walk_all(const pq_file_meta *m, bool expect_dict_somewhere)
{
    bool saw_dict = false;
    for (uint32_t g = 0; g < m->n_row_groups; g++) {
        for (uint32_t c = 0; c < m->row_groups[g].n_columns; c++) {
            const pq_column_meta *cm = &m->row_groups[g].columns[c].meta_data;
            uint8_t *chunk = NULL;
            pq_page_info *pages = NULL;
            uint32_t n = 0;
            pa_err err;
            pa_err_init(&err);
            int rc = pq_chunk_pages_read(m, g, c, &chunk, &pages, &n, &err);
            if (rc)
                print_error("%s\n", err.msg);
            assert_int_equal(rc, PA_OK);
            assert_true(n >= 1);
            assert_int_equal(pages[0].offset, (uint64_t)pq_chunk_start(cm));
            int64_t values = 0;
            for (uint32_t i = 0; i < n; i++) {
                const pq_page_header *h = &pages[i].header;
                assert_true(h->type == PQ_PAGE_DATA_PAGE || (i == 0 && h->type == PQ_PAGE_DICTIONARY_PAGE));
                if (h->type == PQ_PAGE_DICTIONARY_PAGE) {
                    saw_dict = true;
                    assert_int_equal(pages[1].offset, (uint64_t)cm->data_page_offset);
                } else {
                    values += h->data_page.num_values;
                }
                if (i + 1 < n)
                    assert_int_equal(pages[i + 1].offset, pages[i].offset + pages[i].header_len + (uint64_t)h->compressed_page_size);
            }
            assert_int_equal(values, cm->num_values);
            pa_free(pages);
            pa_free(chunk);
            pa_err_close(&err);
        }
    }
    assert_int_equal(saw_dict, expect_dict_somewhere);
}

static void test_page_walk(void **state)
{
    (void)state;
    const char *files[] = {"region.parquet", "nation.parquet", "supplier.parquet", "lineitem-zstd.parquet",
                           "lineitem-v2.parquet", "lineitem-rowgroup10000.parquet", "types.parquet"};
    bool dict[] = {false, true, false, true, true, true, false};   /* as DuckDB chose */
    for (int i = 0; i < 7; i++) {
        const pq_file_meta *m = open_meta(files[i]);
        walk_all(m, dict[i]);
        pq_file_meta_release(m);
    }
}

static void test_types_and_nested(void **state)
{
    (void)state;
    const pq_file_meta *m = open_meta("types.parquet");
    assert_int_equal(m->num_rows, 100);
    pa_err err;
    pa_err_init(&err);
    pq_column_desc *cols = NULL;
    /* The table maps, DECIMAL(20,3) in 16 bytes too. */
    uint32_t nc = 0;
    assert_int_equal(pq_schema_map(m, &cols, &nc, &err), PA_OK);
    assert_int_equal(nc, 9);
    for (uint32_t i = 0; i < nc; i++)
        assert_string_equal(cols[i].unsupported, "");
    assert_int_equal(cols[5].type.id, PA_TYPE_DECIMAL);
    assert_int_equal(cols[5].type.precision, 20);
    pa_free(cols);
    cols = NULL;
    pa_err_close(&err);
    /* Column by column. */
    struct { pa_type_id type; int32_t phys; } want[] = {
        {PA_TYPE_INTEGER, PQ_T_INT32}, {PA_TYPE_BOOLEAN, PQ_T_BOOLEAN}, {PA_TYPE_DOUBLE, PQ_T_DOUBLE},
        {PA_TYPE_REAL, PQ_T_FLOAT}, {PA_TYPE_TIMESTAMP, PQ_T_INT64}, {PA_TYPE_DECIMAL, PQ_T_FIXED_LEN_BYTE_ARRAY},
        {PA_TYPE_DECIMAL, PQ_T_INT32}, {PA_TYPE_VARCHAR, PQ_T_BYTE_ARRAY}, {PA_TYPE_DATE, PQ_T_INT32}};
    char buf[64];
    for (uint32_t i = 0; i < 9; i++) {
        pq_column_desc d;
        pa_err_init(&err);
        const pq_schema_element *e = &m->schema[m->leaves[i].schema_index];
        int rc = pq_element_type(e, m->leaves[i].path, &d, &err);
        assert_int_equal(d.physical_type, want[i].phys);
        if (want[i].type == PA_TYPE__COUNT) {
            assert_int_equal(rc, PA_EUNSUPPORTED);
        } else {
            assert_int_equal(rc, PA_OK);
            assert_int_equal(d.type.id, want[i].type);
        }
        const pq_statistics *st = &m->row_groups[0].columns[i].meta_data.statistics;
        if (i == 4) {   /* ts: TIMESTAMP(MICROS), not UTC-adjusted */
            assert_int_equal(d.time_unit, PQ_TU_MICROS);
            assert_string_equal(pq_stat_format(&d, st->min_value, buf, sizeof buf), "2024-01-01 00:00:00");
        }
        if (i == 6) {
            assert_int_equal(d.type.precision, 7);
            assert_int_equal(d.type.scale, 2);
            assert_string_equal(pq_stat_format(&d, st->max_value, buf, sizeof buf), "346.50");   /* 99 * 3.5 */
        }
        if (i == 7)
            assert_int_equal(st->null_count, 34);   /* i % 3 == 0 for i in 0..99 */
        if (i == 8) {
            assert_string_equal(pq_stat_format(&d, st->min_value, buf, sizeof buf), "1992-01-01");
            assert_string_equal(pq_stat_format(&d, st->max_value, buf, sizeof buf), "1992-04-09");   /* + 99 days */
        }
        if (i == 1) {
            assert_string_equal(pq_stat_format(&d, st->min_value, buf, sizeof buf), "false");
            assert_string_equal(pq_stat_format(&d, st->max_value, buf, sizeof buf), "true");
        }
        if (i == 2)
            assert_string_equal(pq_stat_format(&d, st->max_value, buf, sizeof buf), "148.5");
        if (i == 3)
            assert_string_equal(pq_stat_format(&d, st->min_value, buf, sizeof buf), "0.0");
        pa_err_close(&err);
    }
    pq_file_meta_release(m);

    m = open_meta("nested.parquet");
    assert_int_equal(m->n_leaves, 3);
    assert_string_equal(m->leaves[0].path, "lst.list.element");
    assert_int_equal(m->leaves[0].max_rep_level, 1);
    assert_int_equal(m->leaves[0].max_def_level, 3);
    assert_string_equal(m->leaves[2].path, "st.b");
    assert_int_equal(m->leaves[2].max_rep_level, 0);
    assert_int_equal(m->leaves[2].max_def_level, 2);
    pa_err_init(&err);
    /* Two top-level columns, both nested: mapped, each saying so. */
    nc = 0;
    assert_int_equal(pq_schema_map(m, &cols, &nc, &err), PA_OK);
    assert_int_equal(nc, 2);
    assert_string_equal(cols[0].name, "lst");
    assert_string_equal(cols[1].name, "st");
    assert_int_equal(cols[1].leaf_index, 1);
    assert_non_null(strstr(cols[0].unsupported, "column lst is nested"));
    assert_non_null(strstr(cols[1].unsupported, "column st is nested"));
    pa_free(cols);
    pa_err_close(&err);
    pq_file_meta_release(m);
}

static void test_element_mapping(void **state)
{
    (void)state;
    pq_schema_element e = {.name = "c", .has_type = true, .has_repetition = true, .repetition = PQ_REP_REQUIRED};
    pq_column_desc d;
    pa_err err;
    char buf[64];
    /* INT96: TIMESTAMP_NS; its statistics text: 12:00:00.000000001 of
     * 1970-01-01 (Julian day 2440588) */
    e.type = PQ_T_INT96;
    assert_int_equal(pq_element_type(&e, "legacy_ts", &d, NULL), PA_OK);
    assert_int_equal(d.type.id, PA_TYPE_TIMESTAMP_NS);
    const uint8_t i96[12] = {0x01, 0x80, 0xa7, 0x48, 0x4a, 0x27, 0, 0, 0x8c, 0x3d, 0x25, 0};
    assert_string_equal(pq_stat_format(&d, (pq_bin){i96, 12}, buf, sizeof buf), "1970-01-01 12:00:00.000000001");
    /* INT96 with an annotation: refused, naming the column */
    e.has_converted_type = true;
    e.converted_type = PQ_CT_UTF8;
    pa_err_init(&err);
    assert_int_equal(pq_element_type(&e, "legacy_ts", &d, &err), PA_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "column legacy_ts: INT96"));
    pa_err_close(&err);
    e.has_converted_type = false;
    /* Repeated primitive */
    e.type = PQ_T_INT32;
    e.repetition = PQ_REP_REPEATED;
    pa_err_init(&err);
    assert_int_equal(pq_element_type(&e, "tags", &d, &err), PA_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "column tags"));
    pa_err_close(&err);
    e.repetition = PQ_REP_REQUIRED;
    /* FLBA DECIMAL(10,2) in 5 bytes, big-endian: -12345 -> "-123.45" */
    e.type = PQ_T_FIXED_LEN_BYTE_ARRAY;
    e.type_length = 5;
    e.has_type_length = true;
    e.converted_type = PQ_CT_DECIMAL;
    e.has_converted_type = true;
    e.precision = 10;
    e.scale = 2;
    e.has_precision = e.has_scale = true;
    assert_int_equal(pq_element_type(&e, "d", &d, NULL), PA_OK);
    assert_int_equal(d.type.id, PA_TYPE_DECIMAL);
    assert_int_equal(d.type.precision, 10);
    assert_false(d.nullable);
    const uint8_t be[] = {0xff, 0xff, 0xff, 0xcf, 0xc7};   /* -12345 */
    assert_string_equal(pq_stat_format(&d, (pq_bin){be, 5}, buf, sizeof buf), "-123.45");
    /* INT64 TIMESTAMP(MILLIS) via the logical type */
    memset(&e, 0, sizeof e);
    e.name = "t";
    e.type = PQ_T_INT64;
    e.has_type = true;
    e.logical = (pq_logical_type){.kind = PQ_LT_TIMESTAMP, .unit = PQ_TU_MILLIS, .is_adjusted_to_utc = true};
    assert_int_equal(pq_element_type(&e, "t", &d, NULL), PA_OK);
    assert_int_equal(d.type.id, PA_TYPE_TIMESTAMPTZ);
    assert_int_equal(d.time_unit, PQ_TU_MILLIS);
    int64_t ms = -1;   /* 1969-12-31 23:59:59.999 */
    assert_string_equal(pq_stat_format(&d, (pq_bin){(const uint8_t *)&ms, 8}, buf, sizeof buf),
                        "1969-12-31 23:59:59.999+00");
    e.logical.is_adjusted_to_utc = false;
    assert_int_equal(pq_element_type(&e, "t", &d, NULL), PA_OK);
    assert_int_equal(d.type.id, PA_TYPE_TIMESTAMP);
    e.logical.unit = PQ_TU_NANOS;
    assert_int_equal(pq_element_type(&e, "t", &d, NULL), PA_OK);
    assert_int_equal(d.type.id, PA_TYPE_TIMESTAMP_NS);
    ms = 1601553600123456789;
    assert_string_equal(pq_stat_format(&d, (pq_bin){(const uint8_t *)&ms, 8}, buf, sizeof buf),
                        "2020-10-01 12:00:00.123456789");
    /* legacy ConvertedType TIMESTAMP_MILLIS alone: TIMESTAMP, as DuckDB 1.5 reads it */
    e.logical = (pq_logical_type){0};
    e.has_converted_type = true;
    e.converted_type = PQ_CT_TIMESTAMP_MILLIS;
    assert_int_equal(pq_element_type(&e, "t", &d, NULL), PA_OK);
    assert_int_equal(d.type.id, PA_TYPE_TIMESTAMP);
    assert_int_equal(d.time_unit, PQ_TU_MILLIS);
    /* TIME: INT64 MICROS, INT32 MILLIS; INT64 NANOS refused naming the column */
    e.has_converted_type = false;
    e.logical = (pq_logical_type){.kind = PQ_LT_TIME, .unit = PQ_TU_MICROS};
    assert_int_equal(pq_element_type(&e, "t", &d, NULL), PA_OK);
    assert_int_equal(d.type.id, PA_TYPE_TIME);
    ms = 45296500000;   /* 12:34:56.5 */
    assert_string_equal(pq_stat_format(&d, (pq_bin){(const uint8_t *)&ms, 8}, buf, sizeof buf), "12:34:56.5");
    e.logical.unit = PQ_TU_NANOS;
    pa_err_init(&err);
    assert_int_equal(pq_element_type(&e, "tn", &d, &err), PA_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "column tn: TIME(NANOS)"));
    pa_err_close(&err);
    e.type = PQ_T_INT32;
    e.logical.unit = PQ_TU_MILLIS;
    assert_int_equal(pq_element_type(&e, "t", &d, NULL), PA_OK);
    assert_int_equal(d.type.id, PA_TYPE_TIME);
    assert_int_equal(d.time_unit, PQ_TU_MILLIS);
    int32_t tm = 45296500;
    assert_string_equal(pq_stat_format(&d, (pq_bin){(const uint8_t *)&tm, 4}, buf, sizeof buf), "12:34:56.5");
    /* INTERVAL: FIXED_LEN_BYTE_ARRAY(12) only */
    e.logical = (pq_logical_type){0};
    e.type = PQ_T_FIXED_LEN_BYTE_ARRAY;
    e.has_type_length = true;
    e.type_length = 12;
    e.has_converted_type = true;
    e.converted_type = PQ_CT_INTERVAL;
    assert_int_equal(pq_element_type(&e, "iv", &d, NULL), PA_OK);
    assert_int_equal(d.type.id, PA_TYPE_INTERVAL);
    e.type_length = 16;
    assert_int_equal(pq_element_type(&e, "iv", &d, NULL), PA_ECORRUPT);
    memset(&e, 0, sizeof e);
    e.name = "t";
    e.type = PQ_T_INT64;
    e.has_type = true;
    /* INT32 DECIMAL(9,4); negative values */
    e.type = PQ_T_INT32;
    e.logical = (pq_logical_type){.kind = PQ_LT_DECIMAL, .precision = 9, .scale = 4};
    assert_int_equal(pq_element_type(&e, "x", &d, NULL), PA_OK);
    int32_t v = -5;
    assert_string_equal(pq_stat_format(&d, (pq_bin){(const uint8_t *)&v, 4}, buf, sizeof buf), "-0.0005");
    /* DATE before the epoch and the day the spec names (1992-01-01 = 8035) */
    e.logical = (pq_logical_type){.kind = PQ_LT_DATE};
    assert_int_equal(pq_element_type(&e, "x", &d, NULL), PA_OK);
    v = 8035;
    assert_string_equal(pq_stat_format(&d, (pq_bin){(const uint8_t *)&v, 4}, buf, sizeof buf), "1992-01-01");
    v = -1;
    assert_string_equal(pq_stat_format(&d, (pq_bin){(const uint8_t *)&v, 4}, buf, sizeof buf), "1969-12-31");
    v = 11016;   /* 2000-02-29 */
    assert_string_equal(pq_stat_format(&d, (pq_bin){(const uint8_t *)&v, 4}, buf, sizeof buf), "2000-02-29");
    /* Wrong size for the type */
    assert_string_equal(pq_stat_format(&d, (pq_bin){(const uint8_t *)&v, 3}, buf, sizeof buf), "?");
    /* UINT_64: DECIMAL(20,0), its statistics unsigned */
    memset(&e, 0, sizeof e);
    e.type = PQ_T_INT64;
    e.has_type = true;
    e.converted_type = PQ_CT_UINT_64;
    e.has_converted_type = true;
    assert_int_equal(pq_element_type(&e, "u", &d, NULL), PA_OK);
    assert_true(d.uint64);
    assert_int_equal(d.type.id, PA_TYPE_DECIMAL);
    assert_int_equal(d.type.precision, 20);
    assert_int_equal(d.type.scale, 0);
    int64_t u = -1;   /* 2^64 - 1 */
    assert_string_equal(pq_stat_format(&d, (pq_bin){(const uint8_t *)&u, 8}, buf, sizeof buf), "18446744073709551615");
    /* INT_64 stays BIGINT */
    e.converted_type = PQ_CT_INT_64;
    assert_int_equal(pq_element_type(&e, "i", &d, NULL), PA_OK);
    assert_false(d.uint64);
    assert_int_equal(d.type.id, PA_TYPE_BIGINT);
}

/* ------------------------------------------------------------------ broken files */

static void expect_file_error(const char *name, const void *bytes, size_t n, int code, const char *needle)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", tmp_dir, name);
    spit(path, bytes, n);
    pq_file_meta *m = NULL;
    pa_err err;
    pa_err_init(&err);
    int rc = pq_footer_read(path, &m, &err);
    if (rc != code || !strstr(err.msg, needle) || !strstr(err.msg, name))
        print_error("%s: rc %d msg '%s' (wanted %d '%s')\n", name, rc, err.msg, code, needle);
    assert_int_equal(rc, code);
    assert_non_null(strstr(err.msg, needle));
    assert_non_null(strstr(err.msg, name));   /* messages name the file */
    assert_null(m);
    pa_err_close(&err);
    unlink(path);
}

static void test_broken_files(void **state)
{
    (void)state;
    size_t n;
    uint8_t *good = slurp(data_path("nation.parquet"), &n);
    expect_file_error("empty.parquet", "", 0, PA_ECORRUPT, "not a Parquet file (only 0 bytes)");
    const char text[] = "this is a text file, not parquet at all\n";
    expect_file_error("text.parquet", text, sizeof text - 1, PA_ECORRUPT, "no PAR1 magic at the end");
    /* Encrypted footer magic */
    uint8_t *enc = malloc(n);
    memcpy(enc, good, n);
    memcpy(enc + n - 4, "PARE", 4);
    expect_file_error("enc.parquet", enc, n, PA_EUNSUPPORTED, "encrypted footer");
    /* Footer length bigger than the file */
    memcpy(enc, good, n);
    enc[n - 8] = 0xff, enc[n - 7] = 0xff, enc[n - 6] = 0xff, enc[n - 5] = 0x7f;
    expect_file_error("flen.parquet", enc, n, PA_ECORRUPT, "footer length 2147483647 is bigger than the file");
    /* Truncated: the tail is cut off */
    expect_file_error("cut.parquet", good, n - 100, PA_ECORRUPT, "no PAR1 magic at the end");
    /* Leading magic damaged */
    memcpy(enc, good, n);
    enc[0] = 'X';
    expect_file_error("head.parquet", enc, n, PA_ECORRUPT, "no PAR1 magic at the start");
    /* Truncated at the front: the footer now claims chunks past its start */
    expect_file_error("front.parquet", good + 200, n - 200, PA_ECORRUPT, "not a Parquet file");
    /* A footer length one too small: the Thrift decoder sees garbage first */
    memcpy(enc, good, n);
    uint32_t flen = (uint32_t)enc[n - 8] | (uint32_t)enc[n - 7] << 8;
    flen -= 1;
    enc[n - 8] = (uint8_t)flen;
    enc[n - 7] = (uint8_t)(flen >> 8);
    expect_file_error("short.parquet", enc, n, PA_ECORRUPT, "footer of");
    free(enc);
    free(good);
    pa_err err;
    pa_err_init(&err);
    pq_file_meta *m = NULL;
    assert_int_equal(pq_footer_read("/nonexistent/x.parquet", &m, &err), PA_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent/x.parquet: cannot open"));
    pa_err_close(&err);
}

/* The footer bytes of a file and their offset. */
static uint8_t *footer_of(const char *name, size_t *flen, uint64_t *base, size_t *fsize, uint8_t **file)
{
    uint8_t *buf = slurp(data_path(name), fsize);
    uint32_t n = (uint32_t)buf[*fsize - 8] | (uint32_t)buf[*fsize - 7] << 8 | (uint32_t)buf[*fsize - 6] << 16 |
                 (uint32_t)buf[*fsize - 5] << 24;
    *flen = n;
    *base = *fsize - 8 - n;
    *file = buf;
    return buf + *base;
}

static void test_truncated_footer_every_offset(void **state)
{
    (void)state;
    size_t flen, fsize;
    uint64_t base;
    uint8_t *file;
    const uint8_t *f = footer_of("lineitem-v2.parquet", &flen, &base, &fsize, &file);
    pq_file_meta *m = NULL;
    assert_int_equal(pq_file_meta_decode(f, flen, "v2", base, &m, NULL), PA_OK);
    pq_file_meta_release(m);
    for (size_t n = 0; n < flen; n++) {
        pa_err err;
        pa_err_init(&err);
        m = NULL;
        int rc = pq_file_meta_decode(f, n, "v2", base, &m, &err);
        assert_int_equal(rc, PA_ECORRUPT);
        assert_null(m);
        assert_non_null(strstr(err.msg, "at byte"));
        pa_err_close(&err);
    }
    free(file);
}

static void test_random_byte_flips(void **state)
{
    (void)state;
    const char *files[] = {"lineitem-rowgroup10000.parquet", "supplier.parquet", "types.parquet", "nested.parquet"};
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    int ok = 0, bad = 0;
    for (int fi = 0; fi < 4; fi++) {
        size_t flen, fsize;
        uint64_t base;
        uint8_t *file;
        uint8_t *f = footer_of(files[fi], &flen, &base, &fsize, &file);
        uint8_t *copy = malloc(flen);
        for (int it = 0; it < 1000; it++) {
            memcpy(copy, f, flen);
            int flips = 1 + it % 3;
            for (int k = 0; k < flips; k++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;   /* LCG */
                size_t pos = (size_t)(seed >> 33) % flen;
                copy[pos] ^= (uint8_t)(1u << ((seed >> 20) & 7));
            }
            pq_file_meta *m = NULL;
            pa_err err;
            pa_err_init(&err);
            int rc = pq_file_meta_decode(copy, flen, "flip", base, &m, &err);
            if (rc == PA_OK) {
                m->footer_len = (uint32_t)flen;
                rc = pq_footer_validate(m, fsize, "flip", &err);
                if (rc == PA_OK) {
                    pq_column_desc *cols = NULL;
                    uint32_t nc = 0;
                    if (pq_schema_map(m, &cols, &nc, NULL) == PA_OK)
                        pa_free(cols);
                }
                pq_file_meta_release(m);
            }
            assert_true(rc == PA_OK || rc == PA_ECORRUPT || rc == PA_EUNSUPPORTED);
            rc == PA_OK ? ok++ : bad++;
            pa_err_close(&err);
        }
        free(copy);
        free(file);
    }
    assert_true(bad > 1000);   /* most flips are caught */
    (void)ok;

    /* Page headers: flip bytes in a real chunk and walk it. */
    const pq_file_meta *m = open_meta("nation.parquet");
    const pq_column_meta *cm = &m->row_groups[0].columns[2].meta_data;   /* dictionary + data page */
    size_t fsize;
    uint8_t *file = slurp(data_path("nation.parquet"), &fsize);
    size_t clen = (size_t)cm->total_compressed_size;
    uint8_t *chunk = malloc(clen);
    for (int it = 0; it < 2000; it++) {
        memcpy(chunk, file + pq_chunk_start(cm), clen);
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        chunk[(seed >> 33) % 40] ^= (uint8_t)(1u << ((seed >> 20) & 7));   /* within the headers */
        pq_page_info *pages = NULL;
        uint32_t n = 0;
        int rc = pq_chunk_pages(cm, chunk, clen, "flip", &pages, &n, NULL);
        assert_true(rc == PA_OK || rc == PA_ECORRUPT);
        if (rc == PA_OK)
            pa_free(pages);
    }
    free(chunk);
    free(file);
    pq_file_meta_release(m);
}

static void test_alloc_failures(void **state)
{
    (void)state;
    size_t flen, fsize;
    uint64_t base;
    uint8_t *file;
    const uint8_t *f = footer_of("supplier.parquet", &flen, &base, &fsize, &file);
    int failures = 0;
    for (int64_t k = 0; k < 10000; k++) {
        pa_fault_alloc_after(k);
        pq_file_meta *m = NULL;
        pa_err err;
        pa_err_init(&err);
        int rc = pq_file_meta_decode(f, flen, "oom", base, &m, &err);
        if (rc == PA_OK) {
            m->footer_len = (uint32_t)flen;
            rc = pq_footer_validate(m, fsize, "oom", &err);
            pq_file_meta_release(m);
        }
        pa_fault_alloc_clear();
        pa_err_close(&err);
        if (rc == PA_OK)
            break;
        assert_int_equal(rc, PA_ENOMEM);
        failures++;
    }
    assert_true(failures >= 2);   /* arena blocks + the leaf table */
    free(file);
}

/* ------------------------------------------------------------------ cache */

typedef struct getter { const char *path; const pq_file_meta *m; int rc; } getter;

static void *get_thread(void *arg)
{
    getter *g = arg;
    g->rc = pq_meta_get(g->path, &g->m, NULL);
    return NULL;
}

static void test_meta_cache(void **state)
{
    (void)state;
    pq_meta_cache_clear();
    pq_meta_cache_stats s0, s1;
    pq_meta_cache_stats_get(&s0);
    char path[400];
    snprintf(path, sizeof path, "%s/cache.parquet", tmp_dir);
    size_t n;
    uint8_t *bytes = slurp(data_path("lineitem-zstd.parquet"), &n);
    spit(path, bytes, n);

    /* Eight threads at once: one parse, one shared object. */
    pthread_t th[8];
    getter g[8];
    for (int i = 0; i < 8; i++) {
        g[i] = (getter){path, NULL, -1};
        assert_int_equal(pthread_create(&th[i], NULL, get_thread, &g[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(g[i].rc, PA_OK);
        assert_ptr_equal(g[i].m, g[0].m);
    }
    pq_meta_cache_stats_get(&s1);
    assert_int_equal(s1.parses - s0.parses, 1);
    assert_int_equal(s1.hits - s0.hits, 7);
    assert_int_equal(s1.entries, 1);
    assert_int_equal(g[0].m->num_rows, 60175);

    /* A rewritten file (new mtime) is parsed again; old holders keep theirs. */
    struct timespec ts[2] = {{0, UTIME_OMIT}, {1000000000, 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
    const pq_file_meta *m2 = NULL;
    assert_int_equal(pq_meta_get(path, &m2, NULL), PA_OK);
    assert_ptr_not_equal(m2, g[0].m);
    assert_int_equal(m2->mtime_ns, INT64_C(1000000000) * 1000000000);
    pq_meta_cache_stats_get(&s1);
    assert_int_equal(s1.parses - s0.parses, 2);
    assert_int_equal(g[0].m->num_rows, 60175);   /* still valid */
    for (int i = 0; i < 8; i++)
        pq_file_meta_release(g[i].m);

    /* Clear: entries go, our reference stays usable. */
    pq_meta_cache_clear();
    pq_meta_cache_stats_get(&s1);
    assert_int_equal(s1.entries, 0);
    assert_int_equal(m2->n_row_groups, 1);
    pq_file_meta_release(m2);

    /* Errors are not cached. */
    unlink(path);
    spit(path, "junk", 4);
    pa_err err;
    pa_err_init(&err);
    const pq_file_meta *m3 = NULL;
    assert_int_equal(pq_meta_get(path, &m3, &err), PA_ECORRUPT);
    pq_meta_cache_stats_get(&s1);
    assert_int_equal(s1.entries, 0);
    pa_err_close(&err);
    unlink(path);
    free(bytes);
}

static int setup(void **state)
{
    (void)state;
    const char *d = getenv("PISTA_TEST_DATA");
    snprintf(data_dir, sizeof data_dir, "%s", d && *d ? d : "tests/data");
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/pista_pq_meta_XXXXXX");
    if (!mkdtemp(tmp_dir))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pq_meta_cache_clear();
    rmdir(tmp_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tpch_small_tables),
        cmocka_unit_test(test_lineitem_variants),
        cmocka_unit_test(test_page_walk),
        cmocka_unit_test(test_types_and_nested),
        cmocka_unit_test(test_element_mapping),
        cmocka_unit_test(test_broken_files),
        cmocka_unit_test(test_truncated_footer_every_offset),
        cmocka_unit_test(test_random_byte_flips),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_meta_cache),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
