/*
 * test_thrift.c - the Thrift compact codec and the Parquet struct codecs:
 * byte sequences computed by hand from the compact protocol spec, skipping of
 * unknown fields, bounds on corrupt input, and encode->decode->encode round
 * trips of every Parquet struct with every field set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "storage/pq_meta_int.h"

/* ------------------------------------------------------------------ primitives */

static void test_varint_zigzag_by_hand(void **state)
{
    (void)state;
    /* Field 1 i32 = 1 -> 0x15 0x02; field 2 i32 = -1 -> 0x15 0x01;
     * field 3 i64 = 300 -> zigzag 600 = 0xd8 0x04; field 20 (delta 17 > 15)
     * i16 = -2 -> long form 0x04, zigzag id 40 = 0x28, value zigzag 3 = 0x03;
     * field 21 bool true -> 0x11; field 22 binary "abc" -> 0x18 0x03 'a' 'b' 'c';
     * field 23 i8 -5 -> 0x13 0xfb; field 24 double 1.0 -> 0x17 + LE bytes; stop. */
    const uint8_t want[] = {0x15, 0x02, 0x15, 0x01, 0x16, 0xd8, 0x04, 0x04, 0x28, 0x03, 0x11,
                            0x18, 0x03, 'a', 'b', 'c', 0x13, 0xfb, 0x17, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f,
                            0x00};
    pq_buf b = {0};
    th_writer w;
    th_writer_init(&w, &b, NULL);
    th_write_struct_begin(&w);
    th_write_field_i32(&w, 1, 1);
    th_write_field_i32(&w, 2, -1);
    th_write_field_i64(&w, 3, 300);
    th_write_field_i16(&w, 20, -2);
    th_write_field_bool(&w, 21, true);
    th_write_field_string(&w, 22, "abc");
    th_write_field_i8(&w, 23, -5);
    th_write_field(&w, TH_DOUBLE, 24);
    th_write_double(&w, 1.0);
    th_write_struct_end(&w);
    assert_int_equal(th_writer_finish(&w), PA_OK);
    assert_int_equal(b.len, sizeof want);
    assert_memory_equal(b.data, want, sizeof want);

    th_reader r;
    th_reader_init(&r, want, sizeof want, "test", 0, NULL);
    int16_t last = 0;
    th_field f;
    int32_t i32;
    int64_t i64;
    int16_t i16;
    int8_t i8;
    bool bv;
    const uint8_t *p;
    uint32_t n;
    double d;
    assert_int_equal(th_struct_begin(&r, "T"), PA_OK);
    assert_int_equal(th_field_next(&r, &last, &f), PA_OK);
    assert_int_equal(f.id, 1);
    assert_int_equal(th_field_i32(&r, &f, &i32), PA_OK);
    assert_int_equal(i32, 1);
    assert_int_equal(th_field_next(&r, &last, &f), PA_OK);
    assert_int_equal(th_field_i32(&r, &f, &i32), PA_OK);
    assert_int_equal(i32, -1);
    assert_int_equal(th_field_next(&r, &last, &f), PA_OK);
    assert_int_equal(th_field_i64(&r, &f, &i64), PA_OK);
    assert_int_equal(i64, 300);
    assert_int_equal(th_field_next(&r, &last, &f), PA_OK);
    assert_int_equal(f.id, 20);
    assert_int_equal(th_field_i16(&r, &f, &i16), PA_OK);
    assert_int_equal(i16, -2);
    assert_int_equal(th_field_next(&r, &last, &f), PA_OK);
    assert_int_equal(f.id, 21);
    assert_int_equal(th_field_bool(&r, &f, &bv), PA_OK);
    assert_true(bv);
    assert_int_equal(th_field_next(&r, &last, &f), PA_OK);
    assert_int_equal(th_field_binary(&r, &f, &p, &n), PA_OK);
    assert_int_equal(n, 3);
    assert_memory_equal(p, "abc", 3);
    assert_int_equal(th_field_next(&r, &last, &f), PA_OK);
    assert_int_equal(th_field_i8(&r, &f, &i8), PA_OK);
    assert_int_equal(i8, -5);
    assert_int_equal(th_field_next(&r, &last, &f), PA_OK);
    assert_int_equal(th_expect(&r, &f, TH_DOUBLE), PA_OK);
    assert_int_equal(th_read_double(&r, &d), PA_OK);
    assert_true(d == 1.0);
    assert_int_equal(th_field_next(&r, &last, &f), PA_OK);
    assert_int_equal(f.type, TH_STOP);
    th_struct_end(&r);
    assert_int_equal(r.pos, sizeof want);
    pq_buf_free(&b);
}

static void test_int_limits(void **state)
{
    (void)state;
    const int64_t vals[] = {0, 1, -1, 63, -64, 64, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        pq_buf b = {0};
        th_writer w;
        th_writer_init(&w, &b, NULL);
        th_write_i64(&w, vals[i]);
        assert_int_equal(th_writer_finish(&w), PA_OK);
        th_reader r;
        th_reader_init(&r, b.data, b.len, "t", 0, NULL);
        int64_t v;
        assert_int_equal(th_read_i64(&r, &v), PA_OK);
        assert_true(v == vals[i]);
        assert_int_equal(r.pos, b.len);
        pq_buf_free(&b);
    }
    /* INT64_MIN zigzags to UINT64_MAX: ten bytes, the last one 0x01. */
    const uint8_t max10[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    th_reader r;
    int64_t v;
    th_reader_init(&r, max10, sizeof max10, "t", 0, NULL);
    assert_int_equal(th_read_i64(&r, &v), PA_OK);
    assert_true(v == INT64_MIN);
    /* An i32 whose varint needs more than 32 bits is corrupt. */
    const uint8_t big[] = {0x80, 0x80, 0x80, 0x80, 0x10};
    int32_t i32;
    pa_err err;
    pa_err_init(&err);
    th_reader_init(&r, big, sizeof big, "t", 100, &err);
    assert_int_equal(th_read_i32(&r, &i32), PA_ECORRUPT);
    assert_non_null(strstr(err.msg, "does not fit i32"));
    pa_err_close(&err);
    /* Eleven continuation bytes. */
    const uint8_t endless[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    pa_err_init(&err);
    th_reader_init(&r, endless, sizeof endless, "t", 0, &err);
    assert_int_equal(th_read_i64(&r, &v), PA_ECORRUPT);
    pa_err_close(&err);
}

/* ------------------------------------------------------------------ page header by hand */

/* PageHeader{type DATA_PAGE, uncompressed 100, compressed 50,
 *            data_page_header{num_values 10, PLAIN, RLE, RLE}} */
static const uint8_t page_hdr[] = {
    0x15, 0x00,             /* 1: i32 0 */
    0x15, 0xc8, 0x01,       /* 2: i32 100 (zigzag 200) */
    0x15, 0x64,             /* 3: i32 50 (zigzag 100) */
    0x2c,                   /* 5 (delta 2): struct */
    0x15, 0x14,             /*   1: num_values 10 */
    0x15, 0x00,             /*   2: PLAIN */
    0x15, 0x06,             /*   3: RLE (3) */
    0x15, 0x06,             /*   4: RLE */
    0x00,                   /*   stop */
    0x00,                   /* stop */
};

static void check_hand_header(const pq_page_header *h)
{
    assert_int_equal(h->type, PQ_PAGE_DATA_PAGE);
    assert_int_equal(h->uncompressed_page_size, 100);
    assert_int_equal(h->compressed_page_size, 50);
    assert_true(h->has_data_page);
    assert_false(h->has_crc || h->has_dictionary_page || h->has_data_page_v2);
    assert_int_equal(h->data_page.num_values, 10);
    assert_int_equal(h->data_page.encoding, PQ_ENC_PLAIN);
    assert_int_equal(h->data_page.definition_level_encoding, PQ_ENC_RLE);
    assert_int_equal(h->data_page.repetition_level_encoding, PQ_ENC_RLE);
}

static void test_page_header_by_hand(void **state)
{
    (void)state;
    pq_page_header h;
    size_t hl;
    /* Trailing bytes after the header are the page body: not consumed. */
    uint8_t buf[sizeof page_hdr + 4];
    memcpy(buf, page_hdr, sizeof page_hdr);
    memset(buf + sizeof page_hdr, 0xee, 4);
    assert_int_equal(pq_page_header_decode(buf, sizeof buf, "t", 0, &h, &hl, NULL), PA_OK);
    assert_int_equal(hl, sizeof page_hdr);
    check_hand_header(&h);
    pq_buf b = {0};
    assert_int_equal(pq_page_header_encode(&h, &b, NULL), PA_OK);
    assert_int_equal(b.len, sizeof page_hdr);
    assert_memory_equal(b.data, page_hdr, sizeof page_hdr);
    pq_buf_free(&b);
}

static void test_skip_unknown_fields(void **state)
{
    (void)state;
    /* The hand header with an unknown field 100 before the final stop: a list
     * of two structs holding a double, a map<binary,i32>, a uuid, a list<bool>
     * (element type 1) and a set<i64>. */
    uint8_t buf[256];
    size_t n = sizeof page_hdr - 1;
    memcpy(buf, page_hdr, n);
    const uint8_t unknown[] = {
        0x09, 0xc8, 0x01,                         /* field 100 (long form), list */
        0x2c,                                     /* 2 elements, struct */
        0x17, 1, 2, 3, 4, 5, 6, 7, 8,             /*   1: double */
        0x1b, 0x01, 0x85, 0x01, 'k', 0x0e,        /*   2: map, 1 entry, binary->i32, "k" -> 7 */
        0x1d, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, /* 3: uuid */
        0x00,
        0x19, 0x21, 0x01, 0x00,                   /*   1: list<bool> [true, false] */
        0x1a, 0x26, 0x02, 0x04,                   /*   2: set<i64> {1, 2} */
        0x1c, 0x00,                               /*   3: empty struct */
        0x00,
        0x00,                                     /* final stop */
    };
    memcpy(buf + n, unknown, sizeof unknown);
    n += sizeof unknown;
    pq_page_header h;
    size_t hl;
    pa_err err;
    pa_err_init(&err);
    assert_int_equal(pq_page_header_decode(buf, n, "t", 0, &h, &hl, &err), PA_OK);
    assert_int_equal(hl, n);
    check_hand_header(&h);
    pa_err_close(&err);
}

static void test_depth_limit(void **state)
{
    (void)state;
    /* Field 9 of PageHeader (unknown) = struct nested 200 deep. */
    uint8_t buf[512];
    size_t n = 0;
    memcpy(buf, page_hdr, 7);
    n = 7;
    buf[n++] = 0x6c;   /* field 9 (delta 6), struct */
    for (int i = 0; i < 200; i++)
        buf[n++] = 0x1c;   /* field 1, struct */
    for (int i = 0; i < 202; i++)
        buf[n++] = 0x00;
    pq_page_header h;
    size_t hl;
    pa_err err;
    pa_err_init(&err);
    assert_int_equal(pq_page_header_decode(buf, n, "deep", 0, &h, &hl, &err), PA_ECORRUPT);
    assert_non_null(strstr(err.msg, "nested deeper"));
    pa_err_close(&err);
}

static void expect_corrupt(const uint8_t *buf, size_t n, const char *needle)
{
    pq_page_header h;
    size_t hl;
    pa_err err;
    pa_err_init(&err);
    int rc = pq_page_header_decode(buf, n, "hdr", 1000, &h, &hl, &err);
    if (rc != PA_ECORRUPT || !strstr(err.msg, needle))
        print_error("rc %d msg '%s' (wanted '%s')\n", rc, err.msg, needle);
    assert_int_equal(rc, PA_ECORRUPT);
    assert_non_null(strstr(err.msg, needle));
    assert_non_null(strstr(err.msg, "at byte 10"));   /* base 1000 + position */
    pa_err_close(&err);
}

static void test_corrupt_inputs(void **state)
{
    (void)state;
    /* Every proper prefix of the hand header is truncated. */
    for (size_t n = 0; n < sizeof page_hdr; n++) {
        pq_page_header h;
        size_t hl;
        assert_int_equal(pq_page_header_decode(page_hdr, n, "t", 0, &h, &hl, NULL), PA_ECORRUPT);
    }
    /* A list claiming 2^31 elements in a few bytes. */
    const uint8_t huge_list[] = {0x15, 0x00, 0x15, 0x02, 0x15, 0x02, 0x69, 0xf5, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00};
    expect_corrupt(huge_list, sizeof huge_list, "list of 2147483647 elements");
    /* A binary longer than the buffer. */
    const uint8_t long_bin[] = {0x15, 0x00, 0x15, 0x02, 0x15, 0x02, 0x68, 0xff, 0x01, 'x', 0x00};
    expect_corrupt(long_bin, sizeof long_bin, "binary length 255");
    /* Type nibble 14 does not exist. */
    const uint8_t bad_type[] = {0x15, 0x00, 0x15, 0x02, 0x15, 0x02, 0x6e, 0x00};
    expect_corrupt(bad_type, sizeof bad_type, "bad field type 14");
    /* Required compressed_page_size missing. */
    const uint8_t missing[] = {0x15, 0x00, 0x15, 0x02, 0x00};
    pq_page_header h;
    size_t hl;
    pa_err err;
    pa_err_init(&err);
    assert_int_equal(pq_page_header_decode(missing, sizeof missing, "hdr", 0, &h, &hl, &err), PA_ECORRUPT);
    assert_non_null(strstr(err.msg, "PageHeader: missing required field 3"));
    pa_err_close(&err);
    /* Known field with the wrong type: type (field 1) as a binary. */
    const uint8_t wrong[] = {0x18, 0x01, 'x', 0x00};
    pa_err_init(&err);
    assert_int_equal(pq_page_header_decode(wrong, sizeof wrong, "hdr", 0, &h, &hl, &err), PA_ECORRUPT);
    assert_non_null(strstr(err.msg, "field 1 has type binary, expected i32"));
    assert_non_null(strstr(err.msg, "(PageHeader.1)"));
    pa_err_close(&err);
}

/* ------------------------------------------------------------------ round trips */

static pq_bin bin(const char *s) { return (pq_bin){(const uint8_t *)s, (uint32_t)strlen(s)}; }

static pq_statistics full_stats(void)
{
    pq_statistics s = {0};
    s.max = bin("zz");
    s.min = bin("");
    s.null_count = 3;
    s.distinct_count = 77;
    s.max_value = bin("max\x01");
    s.min_value = bin("min");
    s.is_max_value_exact = true;
    s.is_min_value_exact = false;
    s.nan_count = 0;
    s.has_null_count = s.has_distinct_count = s.has_is_max_value_exact = true;
    s.has_is_min_value_exact = s.has_nan_count = true;
    return s;
}

static void bin_eq(pq_bin a, pq_bin b)
{
    assert_true((a.ptr == NULL) == (b.ptr == NULL));
    assert_int_equal(a.len, b.len);
    if (a.len)
        assert_memory_equal(a.ptr, b.ptr, a.len);
}

static void stats_eq(const pq_statistics *a, const pq_statistics *b)
{
    bin_eq(a->max, b->max);
    bin_eq(a->min, b->min);
    bin_eq(a->max_value, b->max_value);
    bin_eq(a->min_value, b->min_value);
    assert_int_equal(a->null_count, b->null_count);
    assert_int_equal(a->distinct_count, b->distinct_count);
    assert_int_equal(a->nan_count, b->nan_count);
    assert_int_equal(a->is_max_value_exact, b->is_max_value_exact);
    assert_int_equal(a->is_min_value_exact, b->is_min_value_exact);
    assert_int_equal(a->has_null_count, b->has_null_count);
    assert_int_equal(a->has_distinct_count, b->has_distinct_count);
    assert_int_equal(a->has_nan_count, b->has_nan_count);
    assert_int_equal(a->has_is_max_value_exact, b->has_is_max_value_exact);
    assert_int_equal(a->has_is_min_value_exact, b->has_is_min_value_exact);
}

static void str_eq(const char *a, const char *b)
{
    assert_true((a == NULL) == (b == NULL));
    if (a)
        assert_string_equal(a, b);
}

static void test_file_meta_round_trip(void **state)
{
    (void)state;
    pq_schema_element schema[7] = {0};
    schema[0] = (pq_schema_element){.name = "root", .num_children = 6, .has_num_children = true};
    const char *names[] = {"k", "price", "ts", "tiny", "s", "when"};
    for (int i = 1; i < 7; i++) {
        schema[i].name = names[i - 1];
        schema[i].repetition = i % 2 ? PQ_REP_REQUIRED : PQ_REP_OPTIONAL;
        schema[i].has_repetition = schema[i].has_type = true;
    }
    schema[1].type = PQ_T_INT64;
    schema[1].field_id = 42;
    schema[1].has_field_id = true;
    schema[2].type = PQ_T_FIXED_LEN_BYTE_ARRAY;
    schema[2].type_length = 8;
    schema[2].converted_type = PQ_CT_DECIMAL;
    schema[2].scale = 2;
    schema[2].precision = 15;
    schema[2].has_type_length = schema[2].has_converted_type = schema[2].has_scale = schema[2].has_precision = true;
    schema[2].logical = (pq_logical_type){.kind = PQ_LT_DECIMAL, .scale = 2, .precision = 15};
    schema[3].type = PQ_T_INT64;
    schema[3].logical = (pq_logical_type){.kind = PQ_LT_TIMESTAMP, .is_adjusted_to_utc = true, .unit = PQ_TU_NANOS};
    schema[4].type = PQ_T_INT32;
    schema[4].logical = (pq_logical_type){.kind = PQ_LT_INTEGER, .bit_width = 8, .is_signed = false};
    schema[5].type = PQ_T_BYTE_ARRAY;
    schema[5].logical.kind = PQ_LT_STRING;
    schema[6].type = PQ_T_INT32;
    schema[6].logical = (pq_logical_type){.kind = PQ_LT_TIME, .unit = PQ_TU_MILLIS};

    int32_t encs[] = {PQ_ENC_PLAIN, PQ_ENC_RLE, PQ_ENC_RLE_DICTIONARY, 99};
    const char *path[] = {"k"};
    pq_key_value kv[] = {{"a", "1"}, {"b", NULL}};
    pq_page_encoding_stats es[] = {{PQ_PAGE_DICTIONARY_PAGE, PQ_ENC_PLAIN, 1}, {PQ_PAGE_DATA_PAGE, PQ_ENC_RLE_DICTIONARY, 20}};
    pq_column_chunk cols[2] = {0};
    for (int i = 0; i < 2; i++) {
        pq_column_meta *cm = &cols[i].meta_data;
        cols[i].has_meta_data = true;
        cm->type = PQ_T_INT64;
        cm->encodings = encs;
        cm->n_encodings = i ? 4 : 1;
        cm->path_in_schema = path;
        cm->n_path_in_schema = 1;
        cm->codec = i ? PQ_CODEC_ZSTD : PQ_CODEC_SNAPPY;
        cm->num_values = 1000 + i;
        cm->total_uncompressed_size = 5000;
        cm->total_compressed_size = 4000;
        cm->data_page_offset = 100 + i;
        if (i) {
            cm->key_value_metadata = kv;
            cm->n_key_value_metadata = 2;
            cm->index_page_offset = 7;
            cm->dictionary_page_offset = 50;
            cm->statistics = full_stats();
            cm->encoding_stats = es;
            cm->n_encoding_stats = 2;
            cm->bloom_filter_offset = 1 << 20;
            cm->bloom_filter_length = 4096;
            cm->has_index_page_offset = cm->has_dictionary_page_offset = cm->has_statistics = true;
            cm->has_bloom_filter_offset = cm->has_bloom_filter_length = true;
            cols[i].file_path = "other.parquet";
            cols[i].offset_index_offset = 9000;
            cols[i].offset_index_length = 30;
            cols[i].column_index_offset = 9030;
            cols[i].column_index_length = 40;
            cols[i].has_offset_index_offset = cols[i].has_offset_index_length = true;
            cols[i].has_column_index_offset = cols[i].has_column_index_length = true;
        }
        cols[i].file_offset = 4 + i;
    }
    pq_sorting_column sc[] = {{0, true, false}, {3, false, true}};
    pq_row_group rgs[2] = {0};
    rgs[0] = (pq_row_group){.columns = cols, .n_columns = 2, .total_byte_size = 12345, .num_rows = 1000};
    rgs[1] = (pq_row_group){.columns = cols + 1, .n_columns = 1, .total_byte_size = -1, .num_rows = INT64_MAX,
                            .sorting_columns = sc, .n_sorting_columns = 2, .file_offset = 4,
                            .total_compressed_size = 999, .ordinal = 32767, .has_file_offset = true,
                            .has_total_compressed_size = true, .has_ordinal = true};
    int32_t orders[] = {1, 1, 1, 1, 1, 1};
    pq_file_meta m = {0};
    m.version = 2;
    m.schema = schema;
    m.n_schema = 7;
    m.num_rows = 1000;
    m.row_groups = rgs;
    m.n_row_groups = 2;
    m.key_value_metadata = kv;
    m.n_key_value_metadata = 2;
    m.created_by = "pista test";
    m.column_orders = orders;
    m.n_column_orders = 6;

    pq_buf b = {0};
    pa_err err;
    pa_err_init(&err);
    assert_int_equal(pq_file_meta_encode(&m, &b, &err), PA_OK);
    pq_file_meta *d = NULL;
    assert_int_equal(pq_file_meta_decode(b.data, b.len, "rt", 0, &d, &err), PA_OK);

    assert_int_equal(d->version, 2);
    assert_int_equal(d->num_rows, 1000);
    str_eq(d->created_by, "pista test");
    assert_int_equal(d->n_schema, 7);
    for (int i = 0; i < 7; i++) {
        const pq_schema_element *x = &schema[i], *y = &d->schema[i];
        str_eq(x->name, y->name);
        assert_int_equal(x->type, y->type);
        assert_int_equal(x->type_length, y->type_length);
        assert_int_equal(x->repetition, y->repetition);
        assert_int_equal(x->num_children, y->num_children);
        assert_int_equal(x->converted_type, y->converted_type);
        assert_int_equal(x->scale, y->scale);
        assert_int_equal(x->precision, y->precision);
        assert_int_equal(x->field_id, y->field_id);
        assert_int_equal(x->has_type, y->has_type);
        assert_int_equal(x->has_type_length, y->has_type_length);
        assert_int_equal(x->has_repetition, y->has_repetition);
        assert_int_equal(x->has_num_children, y->has_num_children);
        assert_int_equal(x->has_converted_type, y->has_converted_type);
        assert_int_equal(x->has_scale, y->has_scale);
        assert_int_equal(x->has_precision, y->has_precision);
        assert_int_equal(x->has_field_id, y->has_field_id);
        assert_memory_equal(&x->logical, &y->logical, sizeof x->logical);
    }
    assert_int_equal(d->n_key_value_metadata, 2);
    str_eq(d->key_value_metadata[0].key, "a");
    str_eq(d->key_value_metadata[0].value, "1");
    str_eq(d->key_value_metadata[1].value, NULL);
    assert_int_equal(d->n_column_orders, 6);
    assert_int_equal(d->column_orders[5], 1);
    assert_int_equal(d->n_row_groups, 2);
    for (int g = 0; g < 2; g++) {
        const pq_row_group *x = &rgs[g], *y = &d->row_groups[g];
        assert_int_equal(x->n_columns, y->n_columns);
        assert_true(x->total_byte_size == y->total_byte_size && x->num_rows == y->num_rows);
        assert_int_equal(x->n_sorting_columns, y->n_sorting_columns);
        for (uint32_t s = 0; s < x->n_sorting_columns; s++)
            assert_memory_equal(&x->sorting_columns[s], &y->sorting_columns[s], sizeof *x->sorting_columns);
        assert_int_equal(x->file_offset, y->file_offset);
        assert_int_equal(x->total_compressed_size, y->total_compressed_size);
        assert_int_equal(x->ordinal, y->ordinal);
        assert_int_equal(x->has_file_offset, y->has_file_offset);
        assert_int_equal(x->has_total_compressed_size, y->has_total_compressed_size);
        assert_int_equal(x->has_ordinal, y->has_ordinal);
        for (uint32_t c = 0; c < x->n_columns; c++) {
            const pq_column_chunk *p = &x->columns[c], *q = &y->columns[c];
            str_eq(p->file_path, q->file_path);
            assert_int_equal(p->file_offset, q->file_offset);
            assert_int_equal(p->offset_index_offset, q->offset_index_offset);
            assert_int_equal(p->offset_index_length, q->offset_index_length);
            assert_int_equal(p->column_index_offset, q->column_index_offset);
            assert_int_equal(p->column_index_length, q->column_index_length);
            assert_int_equal(p->has_offset_index_offset, q->has_offset_index_offset);
            assert_int_equal(p->has_column_index_length, q->has_column_index_length);
            const pq_column_meta *u = &p->meta_data, *v = &q->meta_data;
            assert_int_equal(u->type, v->type);
            assert_int_equal(u->n_encodings, v->n_encodings);
            assert_memory_equal(u->encodings, v->encodings, u->n_encodings * sizeof(int32_t));
            assert_int_equal(v->n_path_in_schema, 1);
            str_eq(v->path_in_schema[0], "k");
            assert_int_equal(u->codec, v->codec);
            assert_int_equal(u->num_values, v->num_values);
            assert_int_equal(u->total_uncompressed_size, v->total_uncompressed_size);
            assert_int_equal(u->total_compressed_size, v->total_compressed_size);
            assert_int_equal(u->n_key_value_metadata, v->n_key_value_metadata);
            assert_int_equal(u->data_page_offset, v->data_page_offset);
            assert_int_equal(u->index_page_offset, v->index_page_offset);
            assert_int_equal(u->dictionary_page_offset, v->dictionary_page_offset);
            assert_int_equal(u->has_statistics, v->has_statistics);
            stats_eq(&u->statistics, &v->statistics);
            assert_int_equal(u->n_encoding_stats, v->n_encoding_stats);
            for (uint32_t s = 0; s < u->n_encoding_stats; s++)
                assert_memory_equal(&u->encoding_stats[s], &v->encoding_stats[s], sizeof *u->encoding_stats);
            assert_int_equal(u->bloom_filter_offset, v->bloom_filter_offset);
            assert_int_equal(u->bloom_filter_length, v->bloom_filter_length);
            assert_int_equal(u->has_bloom_filter_length, v->has_bloom_filter_length);
        }
    }
    /* Re-encoding the decoded struct gives the same bytes. */
    pq_buf b2 = {0};
    assert_int_equal(pq_file_meta_encode(d, &b2, &err), PA_OK);
    assert_int_equal(b2.len, b.len);
    assert_memory_equal(b2.data, b.data, b.len);
    pq_file_meta_release(d);
    pq_buf_free(&b);
    pq_buf_free(&b2);

    /* A NULL required string is refused and leaves the buffer as it was. */
    schema[3].name = NULL;
    pq_buf b3 = {0};
    assert_int_equal(pq_file_meta_encode(&m, &b3, &err), PA_EINVAL);
    assert_int_equal(b3.len, 0);
    pq_buf_free(&b3);
    pa_err_close(&err);
}

static void page_header_rt(const pq_page_header *h)
{
    pq_buf b = {0};
    assert_int_equal(pq_page_header_encode(h, &b, NULL), PA_OK);
    pq_page_header d;
    size_t hl;
    assert_int_equal(pq_page_header_decode(b.data, b.len, "rt", 0, &d, &hl, NULL), PA_OK);
    assert_int_equal(hl, b.len);
    assert_int_equal(d.type, h->type);
    assert_int_equal(d.uncompressed_page_size, h->uncompressed_page_size);
    assert_int_equal(d.compressed_page_size, h->compressed_page_size);
    assert_int_equal(d.crc, h->crc);
    assert_int_equal(d.has_crc, h->has_crc);
    assert_int_equal(d.has_data_page, h->has_data_page);
    assert_int_equal(d.has_index_page, h->has_index_page);
    assert_int_equal(d.has_dictionary_page, h->has_dictionary_page);
    assert_int_equal(d.has_data_page_v2, h->has_data_page_v2);
    assert_int_equal(d.data_page.num_values, h->data_page.num_values);
    assert_int_equal(d.data_page.encoding, h->data_page.encoding);
    assert_int_equal(d.data_page.definition_level_encoding, h->data_page.definition_level_encoding);
    assert_int_equal(d.data_page.repetition_level_encoding, h->data_page.repetition_level_encoding);
    assert_int_equal(d.data_page.has_statistics, h->data_page.has_statistics);
    stats_eq(&d.data_page.statistics, &h->data_page.statistics);
    assert_memory_equal(&d.dictionary_page, &h->dictionary_page, sizeof d.dictionary_page);
    const pq_data_page_header_v2 *x = &h->data_page_v2, *y = &d.data_page_v2;
    if (h->has_data_page_v2) {
        assert_int_equal(y->num_values, x->num_values);
        assert_int_equal(y->num_nulls, x->num_nulls);
        assert_int_equal(y->num_rows, x->num_rows);
        assert_int_equal(y->encoding, x->encoding);
        assert_int_equal(y->definition_levels_byte_length, x->definition_levels_byte_length);
        assert_int_equal(y->repetition_levels_byte_length, x->repetition_levels_byte_length);
        assert_int_equal(y->is_compressed, x->has_is_compressed ? x->is_compressed : true);
        assert_int_equal(y->has_is_compressed, x->has_is_compressed);
        assert_int_equal(y->has_statistics, x->has_statistics);
        stats_eq(&y->statistics, &x->statistics);
    }
    pq_buf_free(&b);
}

static void test_page_header_round_trips(void **state)
{
    (void)state;
    pq_page_header h = {0};
    h.type = PQ_PAGE_DATA_PAGE;
    h.uncompressed_page_size = 1 << 20;
    h.compressed_page_size = 12345;
    h.crc = (int32_t)0xdeadbeef;
    h.has_crc = true;
    h.has_data_page = true;
    h.data_page = (pq_data_page_header){8000, PQ_ENC_RLE_DICTIONARY, PQ_ENC_RLE, PQ_ENC_BIT_PACKED, full_stats(), true};
    page_header_rt(&h);

    pq_page_header dict = {0};
    dict.type = PQ_PAGE_DICTIONARY_PAGE;
    dict.uncompressed_page_size = 100;
    dict.compressed_page_size = 90;
    dict.has_dictionary_page = true;
    dict.dictionary_page = (pq_dictionary_page_header){25, PQ_ENC_PLAIN, true, true};
    page_header_rt(&dict);

    pq_page_header v2 = {0};
    v2.type = PQ_PAGE_DATA_PAGE_V2;
    v2.uncompressed_page_size = 700;
    v2.compressed_page_size = 600;
    v2.has_data_page_v2 = true;
    v2.data_page_v2 = (pq_data_page_header_v2){.num_values = 100, .num_nulls = 7, .num_rows = 100,
                                               .encoding = PQ_ENC_DELTA_BINARY_PACKED,
                                               .definition_levels_byte_length = 13,
                                               .repetition_levels_byte_length = 0};
    page_header_rt(&v2);   /* is_compressed absent: decodes as true */
    v2.data_page_v2.is_compressed = false;
    v2.data_page_v2.has_is_compressed = true;
    v2.data_page_v2.statistics = full_stats();
    v2.data_page_v2.has_statistics = true;
    page_header_rt(&v2);

    pq_page_header idx = {0};
    idx.type = PQ_PAGE_INDEX_PAGE;
    idx.has_index_page = true;
    page_header_rt(&idx);
}

static void test_page_index_round_trips(void **state)
{
    (void)state;
    bool nulls[] = {false, true, false};
    pq_bin mins[] = {bin("a"), bin(""), bin("q")}, maxs[] = {bin("k"), bin(""), bin("z")};
    int64_t nc[] = {0, 500, 3}, hist[] = {1, 2, 3, 4, 5, 6};
    pq_column_index ci = {0};
    ci.null_pages = nulls;
    ci.n_pages = 3;
    ci.min_values = mins;
    ci.n_min_values = 3;
    ci.max_values = maxs;
    ci.n_max_values = 3;
    ci.boundary_order = PQ_BO_ASCENDING;
    ci.null_counts = nc;
    ci.n_null_counts = 3;
    ci.definition_level_histograms = hist;
    ci.n_definition_level_histograms = 6;
    pq_buf b = {0};
    assert_int_equal(pq_column_index_encode(&ci, &b, NULL), PA_OK);
    /* null_pages: field 1, list header 0x31 (3 bools, element type 1), then 0 1 0. */
    assert_int_equal(b.data[0], 0x19);
    assert_int_equal(b.data[1], 0x31);
    assert_memory_equal(b.data + 2, "\x00\x01\x00", 3);
    pq_column_index *d = NULL;
    assert_int_equal(pq_column_index_decode(b.data, b.len, "ci", 0, &d, NULL), PA_OK);
    assert_int_equal(d->n_pages, 3);
    assert_memory_equal(d->null_pages, nulls, sizeof nulls);
    for (int i = 0; i < 3; i++) {
        bin_eq(d->min_values[i], mins[i]);
        bin_eq(d->max_values[i], maxs[i]);
    }
    assert_int_equal(d->boundary_order, PQ_BO_ASCENDING);
    assert_int_equal(d->n_null_counts, 3);
    assert_memory_equal(d->null_counts, nc, sizeof nc);
    assert_null(d->repetition_level_histograms);
    assert_int_equal(d->n_definition_level_histograms, 6);
    assert_memory_equal(d->definition_level_histograms, hist, sizeof hist);
    assert_null(d->nan_counts);
    pq_column_index_destroy(d);
    /* The spec's element type 2 for bool lists is accepted too. */
    b.data[1] = 0x32;
    assert_int_equal(pq_column_index_decode(b.data, b.len, "ci", 0, &d, NULL), PA_OK);
    assert_true(d->null_pages[1] && !d->null_pages[0]);
    pq_column_index_destroy(d);
    pq_buf_free(&b);

    pq_page_location locs[] = {{4, 100, 0}, {104, 200, 1000}, {304, 50, INT64_C(1) << 40}};
    int64_t ub[] = {10, 20, 30};
    pq_offset_index oi = {locs, 3, ub, 3, NULL};
    assert_int_equal(pq_offset_index_encode(&oi, &b, NULL), PA_OK);
    pq_offset_index *od = NULL;
    assert_int_equal(pq_offset_index_decode(b.data, b.len, "oi", 0, &od, NULL), PA_OK);
    assert_int_equal(od->n_page_locations, 3);
    for (int i = 0; i < 3; i++) {   /* field by field: the struct has padding */
        assert_int_equal(od->page_locations[i].offset, locs[i].offset);
        assert_int_equal(od->page_locations[i].compressed_page_size, locs[i].compressed_page_size);
        assert_int_equal(od->page_locations[i].first_row_index, locs[i].first_row_index);
    }
    assert_int_equal(od->n_unencoded_byte_array_data_bytes, 3);
    assert_memory_equal(od->unencoded_byte_array_data_bytes, ub, sizeof ub);
    pq_offset_index_destroy(od);
    /* Trailing garbage after the struct is corrupt. */
    uint8_t *ext = pa_malloc(b.len + 1);
    memcpy(ext, b.data, b.len);
    ext[b.len] = 0;
    pa_err err;
    pa_err_init(&err);
    assert_int_equal(pq_offset_index_decode(ext, b.len + 1, "oi", 0, &od, &err), PA_ECORRUPT);
    assert_non_null(strstr(err.msg, "1 bytes left after OffsetIndex"));
    pa_err_close(&err);
    pa_free(ext);
    pq_buf_free(&b);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(pq_physical_type_name(PQ_T_FIXED_LEN_BYTE_ARRAY), "FIXED_LEN_BYTE_ARRAY");
    assert_string_equal(pq_encoding_name(8), "RLE_DICTIONARY");
    assert_string_equal(pq_codec_name(7), "LZ4_RAW");
    assert_string_equal(pq_codec_name(6), "ZSTD");
    assert_string_equal(pq_page_type_name(3), "DATA_PAGE_V2");
    assert_string_equal(pq_converted_type_name(17), "INT_32");
    assert_string_equal(pq_logical_kind_name(10), "INTEGER");
    assert_string_equal(pq_repetition_name(1), "OPTIONAL");
    assert_null(pq_encoding_name(1));   /* GROUP_VAR_INT was never used */
    assert_null(pq_codec_name(8));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_varint_zigzag_by_hand),
        cmocka_unit_test(test_int_limits),
        cmocka_unit_test(test_page_header_by_hand),
        cmocka_unit_test(test_skip_unknown_fields),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_corrupt_inputs),
        cmocka_unit_test(test_file_meta_round_trip),
        cmocka_unit_test(test_page_header_round_trips),
        cmocka_unit_test(test_page_index_round_trips),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
