/*
 * test_kn_plain.c - PLAIN and BYTE_STREAM_SPLIT by hand: the spec's
 * BYTE_STREAM_SPLIT example, PLAIN booleans, byte arrays, FLOAT widening,
 * big-endian decimals (FLBA and BYTE_ARRAY) and dictionaries with limits.
 */
#include "kn_testutil.h"

/* Encodings.md: AA BB CC DD | 00 11 22 33 | A3 B4 C5 D6 splits into
 * AA 00 A3 BB 11 B4 CC 22 C5 DD 33 D6. */
static void test_spec_bss(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    const uint8_t raw[12] = {0xAA, 0xBB, 0xCC, 0xDD, 0x00, 0x11, 0x22, 0x33, 0xA3, 0xB4, 0xC5, 0xD6};
    const uint8_t split[12] = {0xAA, 0x00, 0xA3, 0xBB, 0x11, 0xB4, 0xCC, 0x22, 0xC5, 0xDD, 0x33, 0xD6};
    kn_column col = kcol(KN_PT_INT32, PA_TYPE_INTEGER, 0, 0);
    kn_values in = {raw, NULL, NULL, 3};
    uint8_t enc[12];
    size_t len;
    KN_OK(kn_encode_values(KN_ENC_BYTE_STREAM_SPLIT, &col, &in, NULL, 3, enc, sizeof enc, &len, &err));
    assert_int_equal(len, 12);
    assert_memory_equal(enc, split, 12);
    uint8_t out[12];
    kn_out o = {.values = out, .capacity = 3};
    KN_OK(kn_decode_values(KN_ENC_BYTE_STREAM_SPLIT, &col, NULL, split, 12, 3, &o, 0, NULL, &err));
    assert_memory_equal(out, raw, 12);
    /* The same bytes as FLOAT widen to double. */
    kn_column fc = kcol(KN_PT_FLOAT, PA_TYPE_DOUBLE, 0, 0);
    double d[3];
    kn_out od = {.values = d, .capacity = 3};
    KN_OK(kn_decode_values(KN_ENC_BYTE_STREAM_SPLIT, &fc, NULL, split, 12, 3, &od, 0, NULL, &err));
    for (int i = 0; i < 3; i++) {
        float f;
        memcpy(&f, raw + 4 * i, 4);
        assert_memory_equal(&(double){f}, &d[i], 8);
    }
    /* As FLBA(4) strings and FLBA(4) big-endian decimals. */
    kn_column sc = kcol(KN_PT_FIXED_LEN_BYTE_ARRAY, PA_TYPE_VARCHAR, 4, 0);
    int32_t off[4] = {0};
    uint8_t bytes[12];
    kn_out os = {.offsets = off, .bytes = bytes, .capacity = 3, .bytes_capacity = 12};
    KN_OK(kn_decode_values(KN_ENC_BYTE_STREAM_SPLIT, &sc, NULL, split, 12, 3, &os, 0, NULL, &err));
    assert_memory_equal(bytes, raw, 12);
    kn_column dc = kcol(KN_PT_FIXED_LEN_BYTE_ARRAY, PA_TYPE_DECIMAL, 4, 0);
    int64_t dv[3];
    kn_out odv = {.values = dv, .capacity = 3};
    KN_OK(kn_decode_values(KN_ENC_BYTE_STREAM_SPLIT, &dc, NULL, split, 12, 3, &odv, 0, NULL, &err));
    assert_int_equal(dv[0], (int64_t)(int32_t)0xAABBCCDDu);
    assert_int_equal(dv[1], 0x00112233);
    assert_int_equal(dv[2], (int64_t)(int32_t)0xA3B4C5D6u);
    pa_err_close(&err);
}

/* PLAIN BOOLEAN is bit-packed LSB first: 1,0,1,1,0,0,0,0,1 -> 0x0D 0x01. */
static void test_plain_bool(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    const uint8_t v[9] = {1, 0, 1, 1, 0, 0, 0, 0, 1};
    kn_column col = kcol(KN_PT_BOOLEAN, PA_TYPE_BOOLEAN, 0, 0);
    kn_values in = {v, NULL, NULL, 9};
    uint8_t enc[2];
    size_t len;
    KN_OK(kn_encode_values(KN_ENC_PLAIN, &col, &in, NULL, 9, enc, sizeof enc, &len, &err));
    assert_int_equal(len, 2);
    assert_int_equal(enc[0], 0x0D);
    assert_int_equal(enc[1], 0x01);
    uint8_t out[9];
    kn_out o = {.values = out, .capacity = 9};
    KN_OK(kn_decode_values(KN_ENC_PLAIN, &col, NULL, enc, 2, 9, &o, 0, NULL, &err));
    assert_memory_equal(out, v, 9);
    assert_int_equal(kn_decode_values(KN_ENC_PLAIN, &col, NULL, enc, 1, 9, &o, 0, NULL, &err), PA_ECORRUPT);
    /* RLE booleans (4-byte length, width 1): 9 x true = header 0x12, value 1. */
    const uint8_t rle[6] = {2, 0, 0, 0, 0x12, 0x01};
    size_t used;
    KN_OK(kn_decode_values(KN_ENC_RLE, &col, NULL, rle, 6, 9, &o, 0, &used, &err));
    assert_int_equal(used, 6);
    for (int i = 0; i < 9; i++)
        assert_int_equal(out[i], 1);
    pa_err_close(&err);
}

/* Byte arrays: "ab", "", "xyz" = 02 00 00 00 'a' 'b' 00 00 00 00 03 00 00 00 'x' 'y' 'z'. */
static void test_plain_byte_array(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    const uint8_t page[] = {2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0, 3, 0, 0, 0, 'x', 'y', 'z'};
    kn_column col = kcol(KN_PT_BYTE_ARRAY, PA_TYPE_VARCHAR, 0, 0);
    uint64_t need;
    KN_OK(kn_measure_values(KN_ENC_PLAIN, &col, NULL, page, sizeof page, 3, &need, &err));
    assert_int_equal(need, 5);
    int32_t off[4] = {10};
    uint8_t bytes[15];
    kn_out o = {.offsets = off, .bytes = bytes, .capacity = 3, .bytes_capacity = 15};
    size_t used;
    KN_OK(kn_decode_values(KN_ENC_PLAIN, &col, NULL, page, sizeof page, 3, &o, 0, &used, &err));
    assert_int_equal(used, sizeof page);
    const int32_t want[4] = {10, 12, 12, 15};
    assert_memory_equal(off, want, sizeof want);
    assert_memory_equal(bytes + 10, "abxyz", 5);
    /* Capacity one short: refused. */
    off[0] = 11;
    assert_int_equal(kn_decode_values(KN_ENC_PLAIN, &col, NULL, page, sizeof page, 3, &o, 0, NULL, &err), PA_EINVAL);
    /* Length running past the end. */
    off[0] = 0;
    assert_int_equal(kn_decode_values(KN_ENC_PLAIN, &col, NULL, page, sizeof page - 1, 3, &o, 0, NULL, &err), PA_ECORRUPT);
    pa_err_close(&err);
}

/* Big-endian two's complement decimals. */
static void test_decimals(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    /* FLBA(2): FF FE = -2, 01 00 = 256, 80 00 = -32768. */
    const uint8_t f2[6] = {0xFF, 0xFE, 0x01, 0x00, 0x80, 0x00};
    kn_column c2 = kcol(KN_PT_FIXED_LEN_BYTE_ARRAY, PA_TYPE_DECIMAL, 2, 0);
    int64_t v[3];
    kn_out o = {.values = v, .capacity = 3};
    KN_OK(kn_decode_values(KN_ENC_PLAIN, &c2, NULL, f2, 6, 3, &o, 0, NULL, &err));
    assert_int_equal(v[0], -2);
    assert_int_equal(v[1], 256);
    assert_int_equal(v[2], -32768);
    /* FLBA(12): sign extension in the high bytes is fine, anything else overflows. */
    uint8_t f12[12];
    memset(f12, 0xFF, 12);
    f12[11] = 0x85;   /* -123 */
    kn_column c12 = kcol(KN_PT_FIXED_LEN_BYTE_ARRAY, PA_TYPE_DECIMAL, 12, 0);
    KN_OK(kn_decode_values(KN_ENC_PLAIN, &c12, NULL, f12, 12, 1, &o, 0, NULL, &err));
    assert_int_equal(v[0], -123);
    f12[0] = 0x7F;
    assert_int_equal(kn_decode_values(KN_ENC_PLAIN, &c12, NULL, f12, 12, 1, &o, 0, NULL, &err), PA_ECORRUPT);
    /* Encoding: 1234567 (DECIMAL(15,2) 12345.67) into FLBA(6): 00 00 00 12 D6 87. */
    int64_t x = 1234567;
    kn_column c6 = kcol(KN_PT_FIXED_LEN_BYTE_ARRAY, PA_TYPE_DECIMAL, 6, 0);
    kn_values in = {&x, NULL, NULL, 1};
    uint8_t enc[16];
    size_t len;
    KN_OK(kn_encode_values(KN_ENC_PLAIN, &c6, &in, NULL, 1, enc, sizeof enc, &len, &err));
    const uint8_t want[6] = {0, 0, 0, 0x12, 0xD6, 0x87};
    assert_int_equal(len, 6);
    assert_memory_equal(enc, want, 6);
    /* Does not fit FLBA(2). */
    assert_int_equal(kn_encode_values(KN_ENC_PLAIN, &c2, &in, NULL, 1, enc, sizeof enc, &len, &err), PA_EOVERFLOW);
    /* BYTE_ARRAY decimal: minimal bytes 12 D6 87 with length 3. */
    kn_column cb = kcol(KN_PT_BYTE_ARRAY, PA_TYPE_DECIMAL, 0, 0);
    KN_OK(kn_encode_values(KN_ENC_PLAIN, &cb, &in, NULL, 1, enc, sizeof enc, &len, &err));
    const uint8_t wantb[7] = {3, 0, 0, 0, 0x12, 0xD6, 0x87};
    assert_int_equal(len, 7);
    assert_memory_equal(enc, wantb, 7);
    /* INT32 physical DECIMAL out of range. */
    kn_column ci = kcol(KN_PT_INT32, PA_TYPE_DECIMAL, 0, 0);
    int64_t big = 1ll << 40;
    kn_values inb = {&big, NULL, NULL, 1};
    assert_int_equal(kn_encode_values(KN_ENC_PLAIN, &ci, &inb, NULL, 1, enc, sizeof enc, &len, &err), PA_EOVERFLOW);
    pa_err_close(&err);
}

/* Dictionary building: entries in first-occurrence order, limits reported. */
static void test_dict_build(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    const char *text = "bananaapplebananacherryapple";
    const int32_t offs[6] = {0, 6, 11, 17, 23, 28};
    kn_column col = kcol(KN_PT_BYTE_ARRAY, PA_TYPE_VARCHAR, 0, 0);
    kn_values in = {NULL, offs, (const uint8_t *)text, 5};
    size_t scr = kn_dict_build_scratch(5);
    void *scratch = malloc(scr);
    uint32_t rows[5], idx[5];
    kn_dict_result res;
    KN_OK(kn_dict_build(&col, &in, NULL, 5, NULL, scratch, scr, rows, idx, &res, &err));
    assert_false(res.too_large);
    assert_int_equal(res.n_entries, 3);
    const uint32_t want_rows[3] = {0, 1, 3}, want_idx[5] = {0, 1, 0, 2, 1};
    assert_memory_equal(rows, want_rows, sizeof want_rows);
    assert_memory_equal(idx, want_idx, sizeof want_idx);
    assert_int_equal(res.plain_bytes, 4 + 6 + 4 + 5 + 4 + 6);
    kn_dict_limits lim = {.max_entries = 2};
    KN_OK(kn_dict_build(&col, &in, NULL, 5, &lim, scratch, scr, rows, idx, &res, &err));
    assert_true(res.too_large);
    lim = (kn_dict_limits){.max_bytes = 20};
    KN_OK(kn_dict_build(&col, &in, NULL, 5, &lim, scratch, scr, rows, idx, &res, &err));
    assert_true(res.too_large);
    /* Dictionary page + indices page decode back to the values. */
    uint32_t sel[2] = {3, 4};
    KN_OK(kn_dict_build(&col, &in, sel, 2, NULL, scratch, scr, rows, idx, &res, &err));
    assert_int_equal(res.n_entries, 2);
    assert_int_equal(rows[0], 3);
    assert_int_equal(kn_dict_index_width(1), 0);
    assert_int_equal(kn_dict_index_width(2), 1);
    assert_int_equal(kn_dict_index_width(256), 8);
    assert_int_equal(kn_dict_index_width(257), 9);
    free(scratch);
    pa_err_close(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_bss),
        cmocka_unit_test(test_plain_bool),
        cmocka_unit_test(test_plain_byte_array),
        cmocka_unit_test(test_decimals),
        cmocka_unit_test(test_dict_build),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
