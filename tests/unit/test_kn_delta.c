/*
 * test_kn_delta.c - DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY and
 * DELTA_BYTE_ARRAY: the Encodings.md examples worked by hand (with a legal
 * block of 128 values in 4 miniblocks instead of the spec's block of 8), and
 * randomized round trips including wrap-around at INT32/INT64 limits.
 */
#include "kn_testutil.h"

#include <limits.h>

static void encode_i64(const int64_t *v, size_t n, uint8_t *dst, size_t cap, size_t *len)
{
    pa_err err;
    pa_err_init(&err);
    kn_column col = kcol(KN_PT_INT64, PA_TYPE_BIGINT, 0, 0);
    kn_values in = {v, NULL, NULL, n};
    KN_OK(kn_encode_values(KN_ENC_DELTA_BINARY_PACKED, &col, &in, NULL, n, dst, cap, len, &err));
    pa_err_close(&err);
}

/* Example 2 of the spec: 7,5,3,1,2,3,4,5. Header: block 128 = 80 01, 4
 * miniblocks, 8 values, first value zigzag(7) = 14. Block: min delta -2 ->
 * zigzag 3; widths 2,0,0,0; miniblock 1 holds 0,0,0,3,3,3,3 (+25 zeros of
 * padding) at 2 bits: 0xC0 0x3F then six zero bytes. */
static void test_spec_example2(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    const uint8_t want[] = {0x80, 0x01, 0x04, 0x08, 0x0E, 0x03, 0x02, 0x00, 0x00, 0x00,
                            0xC0, 0x3F, 0, 0, 0, 0, 0, 0};
    int64_t v[8] = {7, 5, 3, 1, 2, 3, 4, 5};
    uint8_t enc[2048];
    size_t len;
    encode_i64(v, 8, enc, sizeof enc, &len);
    assert_int_equal(len, sizeof want);
    assert_memory_equal(enc, want, sizeof want);
    /* Decode as INT32 too. */
    kn_column col = kcol(KN_PT_INT32, PA_TYPE_INTEGER, 0, 0);
    int32_t out[8];
    kn_out o = {.values = out, .capacity = 8};
    size_t used;
    KN_OK(kn_decode_values(KN_ENC_DELTA_BINARY_PACKED, &col, NULL, want, sizeof want, 8, &o, 0,
                           &used, &err));
    assert_int_equal(used, sizeof want);
    for (int i = 0; i < 8; i++)
        assert_int_equal(out[i], v[i]);
    pa_err_close(&err);
}

/* Example 1: 1..5 -> min delta 1 (zigzag 2), all widths 0, no miniblock data. */
static void test_spec_example1(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    const uint8_t want[] = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 0, 0, 0};
    int64_t v[5] = {1, 2, 3, 4, 5};
    uint8_t enc[2048];
    size_t len;
    encode_i64(v, 5, enc, sizeof enc, &len);
    assert_int_equal(len, sizeof want);
    assert_memory_equal(enc, want, sizeof want);
    pa_err_close(&err);
}

/* DELTA_LENGTH_BYTE_ARRAY example: "Hello", "World", "Foobar", "ABCDEF".
 * Lengths 5,5,6,6: first zigzag(5) = 0x0A, deltas 0,1,0, min 0, width 1,
 * relative deltas 0,1,0 -> byte 0x02 (+3 zero bytes), then the bytes. */
static void test_spec_dlba(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    uint8_t page[64] = {0x80, 0x01, 0x04, 0x04, 0x0A, 0x00, 0x01, 0, 0, 0, 0x02, 0, 0, 0};
    const char *text = "HelloWorldFoobarABCDEF";
    memcpy(page + 14, text, 22);
    kn_column col = kcol(KN_PT_BYTE_ARRAY, PA_TYPE_VARCHAR, 0, 0);
    int32_t off[5] = {0};
    uint8_t bytes[22];
    kn_out o = {.offsets = off, .bytes = bytes, .capacity = 4, .bytes_capacity = 22};
    size_t used;
    uint64_t need;
    KN_OK(kn_measure_values(KN_ENC_DELTA_LENGTH_BYTE_ARRAY, &col, NULL, page, 36, 4, &need, &err));
    assert_int_equal(need, 22);
    KN_OK(kn_decode_values(KN_ENC_DELTA_LENGTH_BYTE_ARRAY, &col, NULL, page, 36, 4, &o, 0, &used, &err));
    assert_int_equal(used, 36);
    const int32_t want_off[5] = {0, 5, 10, 16, 22};
    assert_memory_equal(off, want_off, sizeof want_off);
    assert_memory_equal(bytes, text, 22);
    /* The encoder produces the same bytes. */
    kn_values in = {NULL, want_off, (const uint8_t *)text, 4};
    uint8_t enc[2048];
    size_t len;
    KN_OK(kn_encode_values(KN_ENC_DELTA_LENGTH_BYTE_ARRAY, &col, &in, NULL, 4, enc, sizeof enc, &len, &err));
    assert_int_equal(len, 36);
    assert_memory_equal(enc, page, 36);
    pa_err_close(&err);
}

/* DELTA_BYTE_ARRAY example: "axis", "axle", "babble", "babyhood" -> prefix
 * lengths 0,2,0,3, suffix lengths 4,2,6,5, suffix bytes "axislebabbleyhood". */
static void test_spec_dba(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    const char *text = "axisaxlebabblebabyhood";
    const int32_t offs[5] = {0, 4, 8, 14, 22};
    kn_column col = kcol(KN_PT_BYTE_ARRAY, PA_TYPE_VARCHAR, 0, 0);
    kn_values in = {NULL, offs, (const uint8_t *)text, 4};
    uint8_t enc[2048];
    size_t len;
    KN_OK(kn_encode_values(KN_ENC_DELTA_BYTE_ARRAY, &col, &in, NULL, 4, enc, sizeof enc, &len, &err));
    const char *sfx = "axislebabbleyhood";
    assert_true(len > 17);
    assert_memory_equal(enc + len - 17, sfx, 17);
    /* The two length streams, decoded on their own. */
    int32_t pl[4], sl[4];
    kn_column ic = kcol(KN_PT_INT32, PA_TYPE_INTEGER, 0, 0);
    kn_out po = {.values = pl, .capacity = 4}, so = {.values = sl, .capacity = 4};
    size_t u1, u2;
    KN_OK(kn_decode_values(KN_ENC_DELTA_BINARY_PACKED, &ic, NULL, enc, len, 4, &po, 0, &u1, &err));
    KN_OK(kn_decode_values(KN_ENC_DELTA_BINARY_PACKED, &ic, NULL, enc + u1, len - u1, 4, &so, 0, &u2, &err));
    const int32_t wp[4] = {0, 2, 0, 3}, ws[4] = {4, 2, 6, 5};
    assert_memory_equal(pl, wp, sizeof wp);
    assert_memory_equal(sl, ws, sizeof ws);
    assert_int_equal(u1 + u2 + 17, len);
    /* Full decode. */
    int32_t off[5] = {0};
    uint8_t bytes[22];
    kn_out o = {.offsets = off, .bytes = bytes, .capacity = 4, .bytes_capacity = 22};
    size_t used;
    KN_OK(kn_decode_values(KN_ENC_DELTA_BYTE_ARRAY, &col, NULL, enc, len, 4, &o, 0, &used, &err));
    assert_int_equal(used, len);
    assert_memory_equal(off, offs, sizeof offs);
    assert_memory_equal(bytes, text, 22);
    pa_err_close(&err);
}

static void round_trip_ints(int ptype, rng *r, size_t n, int mode)
{
    pa_err err;
    pa_err_init(&err);
    bool is32 = ptype == KN_PT_INT32;
    kn_column col = kcol(ptype, is32 ? PA_TYPE_INTEGER : PA_TYPE_BIGINT, 0, 0);
    int w = is32 ? 4 : 8;
    uint8_t *v = malloc(n * (size_t)w + 1), *out = malloc(n * (size_t)w + 1);
    int64_t acc = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t x;
        switch (mode) {
        case 0: x = (int64_t)rng_next(r); break;                                  /* noise */
        case 1: acc += (int64_t)rng_below(r, 100); x = acc; break;               /* sorted */
        case 2: x = (i & 1) ? INT64_MAX : INT64_MIN; break;                      /* extremes */
        default: x = 12345; break;                                               /* constant */
        }
        if (is32) {
            int32_t y = mode == 2 ? ((i & 1) ? INT32_MAX : INT32_MIN) : (int32_t)x;
            memcpy(v + 4 * i, &y, 4);
        } else {
            memcpy(v + 8 * i, &x, 8);
        }
    }
    kn_values in = {v, NULL, NULL, n};
    size_t cap = kn_encode_bound(KN_ENC_DELTA_BINARY_PACKED, &col, &in, NULL, n), len;
    uint8_t *enc = malloc(cap);
    KN_OK(kn_encode_values(KN_ENC_DELTA_BINARY_PACKED, &col, &in, NULL, n, enc, cap, &len, &err));
    kn_out o = {.values = out, .capacity = n};
    size_t used;
    KN_OK(kn_decode_values(KN_ENC_DELTA_BINARY_PACKED, &col, NULL, enc, len, n, &o, 0, &used, &err));
    assert_int_equal(used, len);
    if (n)
        assert_memory_equal(v, out, n * (size_t)w);
    free(v);
    free(out);
    free(enc);
    pa_err_close(&err);
}

static void test_round_trips(void **state)
{
    (void)state;
    rng r = {77};
    static const size_t sizes[] = {0, 1, 2, 31, 32, 33, 127, 128, 129, 130, 1000, 65537};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int mode = 0; mode < 4; mode++) {
            round_trip_ints(KN_PT_INT32, &r, sizes[s], mode);
            round_trip_ints(KN_PT_INT64, &r, sizes[s], mode);
        }
}

/* A header that asks for more values than the page holds, a miniblock wider
 * than the type, and bad block sizes. */
static void test_bad_headers(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    kn_column col = kcol(KN_PT_INT32, PA_TYPE_INTEGER, 0, 0);
    int32_t out[16];
    kn_out o = {.values = out, .capacity = 16};
    const uint8_t few[] = {0x80, 0x01, 0x04, 0x02, 0x00, 0x00, 0, 0, 0, 0};
    assert_int_equal(kn_decode_values(KN_ENC_DELTA_BINARY_PACKED, &col, NULL, few, sizeof few, 3, &o, 0, NULL, &err), PA_ECORRUPT);
    /* INT32 miniblocks may be 33 bits wide (test_int32_width33), not 34. */
    uint8_t wide[10 + 5] = {0x80, 0x01, 0x04, 0x02, 0x00, 0x00, 34, 0, 0, 0};
    pa_err_close(&err);   /* the first error is kept: start afresh */
    pa_err_init(&err);
    assert_int_equal(kn_decode_values(KN_ENC_DELTA_BINARY_PACKED, &col, NULL, wide, sizeof wide, 2, &o, 0, NULL, &err), PA_ECORRUPT);
    assert_non_null(strstr(err.msg, "bit width 34 exceeds 33"));
    const uint8_t block[] = {0x08, 0x01, 0x02, 0x00};
    assert_int_equal(kn_decode_values(KN_ENC_DELTA_BINARY_PACKED, &col, NULL, block, sizeof block, 1, &o, 0, NULL, &err), PA_ECORRUPT);
    const uint8_t mbs[] = {0x80, 0x01, 0x03, 0x02, 0x00};
    assert_int_equal(kn_decode_values(KN_ENC_DELTA_BINARY_PACKED, &col, NULL, mbs, sizeof mbs, 1, &o, 0, NULL, &err), PA_ECORRUPT);
    pa_err_close(&err);
}

/* Append v's low w bits to buf at bit *pos, least significant bit first
 * (Encodings.md bit packing), independently of the library's packer. */
static void put_bits(uint8_t *buf, size_t *pos, uint64_t v, int w)
{
    for (int b = 0; b < w; b++, (*pos)++)
        if (v >> b & 1)
            buf[*pos >> 3] |= (uint8_t)(1u << (*pos & 7));
}

static size_t put_uleb(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    do {
        p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

/* Full-range INT32 deltas taken in 64 bits, as DuckDB writes them with
 * PARQUET_VERSION v2: INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX, 0, -1 have
 * deltas 2^32-1, -(2^32-1), 2^32-1, -(2^31-1), -1; the min delta is
 * -(2^32-1), so the relative deltas are 2^33-2, 0, 2^33-2, 2^31, 2^32-2 in a
 * 33-bit miniblock. Built by hand; must decode exactly. */
static void test_int32_width33(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    const int32_t want[6] = {INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX, 0, -1};
    uint8_t s[256];
    memset(s, 0, sizeof s);
    size_t o = 0;
    s[o++] = 0x80, s[o++] = 0x01, s[o++] = 0x04, s[o++] = 6;   /* block 128, 4 miniblocks, 6 values */
    o += put_uleb(s + o, 0xFFFFFFFFu);                         /* zigzag(INT32_MIN) = 2^32 - 1 */
    o += put_uleb(s + o, ((uint64_t)0xFFFFFFFFu << 1) - 1);   /* zigzag(-(2^32-1)) = 2^33 - 3 */
    s[o++] = 33, s[o++] = 0, s[o++] = 0, s[o++] = 0;
    const uint64_t rel[5] = {((uint64_t)1 << 33) - 2, 0, ((uint64_t)1 << 33) - 2, (uint64_t)1 << 31,
                             ((uint64_t)1 << 32) - 2};
    size_t bit = 0;
    for (int k = 0; k < 5; k++)
        put_bits(s + o, &bit, rel[k], 33);
    o += 32 * 33 / 8;   /* the padded miniblock */
    assert_true(o <= sizeof s);
    kn_column col = kcol(KN_PT_INT32, PA_TYPE_INTEGER, 0, 0);
    int32_t out[6];
    kn_out ko = {.values = out, .capacity = 6};
    size_t used;
    KN_OK(kn_decode_values(KN_ENC_DELTA_BINARY_PACKED, &col, NULL, s, o, 6, &ko, 0, &used, &err));
    assert_int_equal(used, o);
    for (int i = 0; i < 6; i++)
        assert_int_equal(out[i], want[i]);
    pa_err_close(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_example1),
        cmocka_unit_test(test_spec_example2),
        cmocka_unit_test(test_spec_dlba),
        cmocka_unit_test(test_spec_dba),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_bad_headers),
        cmocka_unit_test(test_int32_width33),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
