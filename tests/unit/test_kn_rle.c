/*
 * test_kn_rle.c - the RLE/bit-packed hybrid and bit unpacking: the spec's
 * examples (Encodings.md), hand-worked runs, and randomized round trips for
 * every bit width 0..32 with runs, noise, single values and max values.
 */
#include "kn_testutil.h"

/* Encodings.md: 0..7 at width 3 pack to 10001000 11000110 11111010. */
static void test_spec_bitpack_example(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    const uint8_t packed[3] = {0x88, 0xC6, 0xFA};
    uint32_t out[8];
    KN_OK(kn_bitunpack32(packed, 3, 3, out, 8, &err));
    for (uint32_t i = 0; i < 8; i++)
        assert_int_equal(out[i], i);
    /* As a hybrid stream: one bit-packed group, header (1 << 1) | 1. */
    const uint8_t stream[4] = {0x03, 0x88, 0xC6, 0xFA};
    size_t used = 0;
    KN_OK(kn_rle_decode(stream, 4, 3, out, 8, &used, &err));
    assert_int_equal(used, 4);
    for (uint32_t i = 0; i < 8; i++)
        assert_int_equal(out[i], i);
    /* And the encoder writes exactly those bytes. */
    uint32_t vals[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    uint8_t enc[64];
    size_t len = 0;
    KN_OK(kn_rle_encode(vals, 8, 3, enc, sizeof enc, &len, &err));
    assert_int_equal(len, 4);
    assert_memory_equal(enc, stream, 4);
    assert_int_equal(kn_bitunpack32(packed, 2, 3, out, 8, &err), PA_ECORRUPT);
    pa_err_close(&err);
}

/* Hand-worked: 10 x value 5 at width 3 is an RLE run: header 10 << 1 = 0x14,
 * value in one byte. 300 x 0x1234 at width 13: header varint(600) = D8 04,
 * value in two bytes LE. Then 4 values 1,2,3,1 bit-packed at width 2 with
 * padding: header 0x03, byte 1 | 2<<2 | 3<<4 | 1<<6 = 0x79, then 0x00. */
static void test_hand_runs(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    uint32_t v[300];
    uint8_t enc[64];
    size_t len;
    for (int i = 0; i < 10; i++)
        v[i] = 5;
    KN_OK(kn_rle_encode(v, 10, 3, enc, sizeof enc, &len, &err));
    assert_int_equal(len, 2);
    assert_int_equal(enc[0], 0x14);
    assert_int_equal(enc[1], 0x05);
    for (int i = 0; i < 300; i++)
        v[i] = 0x1234;
    KN_OK(kn_rle_encode(v, 300, 13, enc, sizeof enc, &len, &err));
    const uint8_t want[4] = {0xD8, 0x04, 0x34, 0x12};
    assert_int_equal(len, 4);
    assert_memory_equal(enc, want, 4);
    uint32_t w4[4] = {1, 2, 3, 1};
    KN_OK(kn_rle_encode(w4, 4, 2, enc, sizeof enc, &len, &err));
    const uint8_t want2[3] = {0x03, 0x79, 0x00};
    assert_int_equal(len, 3);
    assert_memory_equal(enc, want2, 3);
    uint32_t out[300];
    KN_OK(kn_rle_decode(want, 4, 13, out, 300, NULL, &err));
    for (int i = 0; i < 300; i++)
        assert_int_equal(out[i], 0x1234);
    /* Asking for one more value than the stream holds is corrupt. */
    assert_int_equal(kn_rle_decode(want, 4, 13, out, 301, NULL, &err), PA_ECORRUPT);
    /* RLE value wider than the bit width. */
    const uint8_t wide[2] = {0x02, 0x09};
    assert_int_equal(kn_rle_decode(wide, 2, 3, out, 1, NULL, &err), PA_ECORRUPT);
    /* Zero-length run. */
    const uint8_t zero[2] = {0x00, 0x01};
    assert_int_equal(kn_rle_decode(zero, 2, 1, out, 1, NULL, &err), PA_ECORRUPT);
    pa_err_close(&err);
}

/* Mixed repeats (choosing RLE) and noise (bit-packing) for every width. */
static void test_round_trip_all_widths(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    rng r = {42};
    static const size_t sizes[] = {0, 1, 7, 8, 9, 31, 1000, 100000};
    for (int w = 0; w <= 32; w++) {
        uint64_t lim = w == 32 ? 0 : (1ull << w);
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si];
            uint32_t *v = malloc((n + 1) * 4), *out = malloc((n + 1) * 4);
            for (size_t i = 0; i < n;) {
                size_t run = rng_below(&r, 4) == 0 ? 1 + rng_below(&r, 40) : 1;
                uint32_t x = (uint32_t)rng_next(&r);
                if (lim)
                    x = (uint32_t)(x % lim);
                if (rng_below(&r, 8) == 0)
                    x = lim ? (uint32_t)(lim - 1) : UINT32_MAX;   /* max value */
                for (size_t k = 0; k < run && i < n; k++)
                    v[i++] = x;
            }
            size_t cap = kn_rle_encode_bound(n, w), len = 0;
            uint8_t *enc = malloc(cap);
            KN_OK(kn_rle_encode(v, n, w, enc, cap, &len, &err));
            assert_true(len <= cap);
            size_t used = 0;
            KN_OK(kn_rle_decode(enc, len, w, out, n, &used, &err));
            assert_int_equal(used, len);
            if (n)
                assert_memory_equal(v, out, n * 4);
            /* Decoding in odd-sized pieces through a page path gives the same. */
            free(enc);
            free(v);
            free(out);
        }
    }
    /* Long runs and a value too wide for the width. */
    size_t n = 1u << 20;
    uint32_t *v = calloc(n, 4), *out = malloc(n * 4);
    for (size_t i = n / 2; i < n; i++)
        v[i] = 1;
    uint8_t enc[64];
    size_t len;
    KN_OK(kn_rle_encode(v, n, 1, enc, sizeof enc, &len, &err));
    assert_true(len <= 10);
    KN_OK(kn_rle_decode(enc, len, 1, out, n, NULL, &err));
    assert_memory_equal(v, out, n * 4);
    v[0] = 2;
    assert_int_equal(kn_rle_encode(v, 8, 1, enc, sizeof enc, &len, &err), PA_EINVAL);
    free(v);
    free(out);
    pa_err_close(&err);
}

/* Definition levels from a bitmap, with and without the v1 length prefix. */
static void test_def_levels(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    rng r = {5};
    uint8_t bm[200];
    for (size_t i = 0; i < sizeof bm; i++)
        bm[i] = i < 100 ? (uint8_t)rng_next(&r) : 0xff;
    size_t n = 1500, first = 3;
    size_t cap = kn_rle_encode_bound(n, 1) + 4, len;
    uint8_t *enc = malloc(cap);
    uint32_t *lv = malloc(n * 4);
    KN_OK(kn_encode_def_levels(bm, first, n, true, enc, cap, &len, &err));
    uint32_t plen;
    memcpy(&plen, enc, 4);
    assert_int_equal(plen, len - 4);
    KN_OK(kn_rle_decode(enc + 4, len - 4, 1, lv, n, NULL, &err));
    for (size_t i = 0; i < n; i++)
        assert_int_equal(lv[i], (bm[(first + i) / 8] >> ((first + i) % 8)) & 1);
    KN_OK(kn_encode_def_levels(bm, first, n, false, enc, cap, &len, &err));
    KN_OK(kn_rle_decode(enc, len, 1, lv, n, NULL, &err));
    for (size_t i = 0; i < n; i++)
        assert_int_equal(lv[i], (bm[(first + i) / 8] >> ((first + i) % 8)) & 1);
    free(enc);
    free(lv);
    pa_err_close(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_bitpack_example),
        cmocka_unit_test(test_hand_runs),
        cmocka_unit_test(test_round_trip_all_widths),
        cmocka_unit_test(test_def_levels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
