/*
 * test_kn_codec.c - page codecs: round trips for every supported codec with
 * sizes 0, 1, odd and 1 MiB (compressible and random data), exact-size
 * enforcement, Hadoop-framed LZ4 built by hand, the raw-LZ4 fallback of
 * codec 5, truncations, BROTLI streams with bytes after their end, and the
 * batch entry point on a thread pool; the page CRC.
 */
#include "kn_testutil.h"

#include <lz4.h>

static const int all_codecs[] = {KN_CODEC_UNCOMPRESSED, KN_CODEC_SNAPPY, KN_CODEC_GZIP,
                                 KN_CODEC_BROTLI, KN_CODEC_LZ4, KN_CODEC_ZSTD, KN_CODEC_LZ4_RAW};
#define NCODECS (sizeof all_codecs / sizeof all_codecs[0])

static void fill(uint8_t *p, size_t n, rng *r, bool compressible)
{
    for (size_t i = 0; i < n; i++)
        p[i] = compressible ? (uint8_t)("lineitem|orders|"[i % 16] + (i / 4096) % 3)
                            : (uint8_t)rng_next(r);
}

static void test_round_trips(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    rng r = {3};
    static const size_t sizes[] = {0, 1, 2, 777, 65537, 1u << 20};
    for (size_t c = 0; c < NCODECS; c++) {
        int codec = all_codecs[c];
        assert_true(kn_codec_supported(codec));
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int comp = 0; comp < 2; comp++) {
                size_t n = sizes[s];
                uint8_t *src = malloc(n + 1), *back = malloc(n + 1);
                fill(src, n, &r, comp);
                size_t bound = kn_compress_bound(codec, n), len;
                assert_true(bound >= n);
                uint8_t *dst = malloc(bound);
                KN_OK(kn_compress(codec, 0, src, n, dst, bound, &len, &err));
                assert_true(len <= bound);
                if (comp && n >= 65537 && codec != KN_CODEC_UNCOMPRESSED)
                    assert_true(len < n / 4);
                KN_OK(kn_decompress(codec, dst, len, back, n, &err));
                if (n)
                    assert_memory_equal(src, back, n);
                /* The wrong expected size is corrupt, never an overrun. */
                if (n > 0) {
                    uint8_t *small = malloc(n - 1 ? n - 1 : 1);
                    assert_int_equal(kn_decompress(codec, dst, len, small, n - 1, &err), PA_ECORRUPT);
                    free(small);
                }
                uint8_t *big = malloc(n + 10);
                assert_int_equal(kn_decompress(codec, dst, len, big, n + 10, &err), PA_ECORRUPT);
                free(big);
                /* Truncated input. */
                if (len > 1 && codec != KN_CODEC_UNCOMPRESSED)
                    assert_int_not_equal(kn_decompress(codec, dst, len / 2, back, n, &err), PA_OK);
                free(src);
                free(back);
                free(dst);
            }
    }
    /* Levels for codecs that have them. */
    uint8_t src[5000], dst[8000], back[5000];
    fill(src, sizeof src, &r, true);
    size_t len;
    KN_OK(kn_compress(KN_CODEC_ZSTD, 19, src, sizeof src, dst, sizeof dst, &len, &err));
    KN_OK(kn_decompress(KN_CODEC_ZSTD, dst, len, back, sizeof back, &err));
    assert_memory_equal(src, back, sizeof src);
    KN_OK(kn_compress(KN_CODEC_GZIP, 9, src, sizeof src, dst, sizeof dst, &len, &err));
    KN_OK(kn_decompress(KN_CODEC_GZIP, dst, len, back, sizeof back, &err));
    assert_memory_equal(src, back, sizeof src);
    /* GZIP framing: magic 1f 8b. */
    assert_int_equal(dst[0], 0x1f);
    assert_int_equal(dst[1], 0x8b);
    /* Unsupported codecs and too-small output. */
    assert_int_equal(kn_decompress(KN_CODEC_LZO, src, 10, back, 10, &err), PA_EUNSUPPORTED);
    assert_int_equal(kn_compress_bound(KN_CODEC_LZO, 10), 0);
    assert_int_equal(kn_compress(KN_CODEC_ZSTD, 0, src, sizeof src, dst, 10, &len, &err), PA_EINVAL);
    pa_err_close(&err);
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Hadoop framing built by hand: two blocks, the second with two chunks. */
static void test_lz4_hadoop(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    rng r = {11};
    uint8_t src[3000], out[3000], page[8000];
    fill(src, sizeof src, &r, true);
    size_t o = 0;
    /* block 1: 1000 raw bytes in one chunk */
    put_be32(page + o, 1000);
    int c1 = LZ4_compress_default((const char *)src, (char *)page + o + 8, 1000, 4000);
    put_be32(page + o + 4, (uint32_t)c1);
    o += 8 + (size_t)c1;
    /* block 2: 2000 raw bytes in chunks of 1200 and 800 */
    put_be32(page + o, 2000);
    o += 4;
    int c2 = LZ4_compress_default((const char *)src + 1000, (char *)page + o + 4, 1200, 4000);
    put_be32(page + o, (uint32_t)c2);
    o += 4 + (size_t)c2;
    int c3 = LZ4_compress_default((const char *)src + 2200, (char *)page + o + 4, 800, 4000);
    put_be32(page + o, (uint32_t)c3);
    o += 4 + (size_t)c3;
    KN_OK(kn_decompress(KN_CODEC_LZ4, page, o, out, 3000, &err));
    assert_memory_equal(out, src, 3000);
    /* Codec 5 holding one raw LZ4 block (old writers) falls back to it. */
    int raw = LZ4_compress_default((const char *)src, (char *)page, 3000, 8000);
    KN_OK(kn_decompress(KN_CODEC_LZ4, page, (size_t)raw, out, 3000, &err));
    assert_memory_equal(out, src, 3000);
    /* Neither framing fits: corrupt. */
    memset(page, 0xEE, 64);
    assert_int_equal(kn_decompress(KN_CODEC_LZ4, page, 64, out, 3000, &err), PA_ECORRUPT);
    pa_err_close(&err);
}

/* A raw LZ4 block built by hand: 4 literals "abcd", a 4-byte match at
 * offset k, then 12 literals. Offset 4 copies "abcd"; offset 0 (which
 * liblz4's fast path may take, copying whatever the output held) and
 * offset 5 (before the block's start) are corrupt, as the device says. */
static void test_lz4_offsets(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    uint8_t block[20] = {0x40, 'a', 'b', 'c', 'd', 4, 0, 0xC0, 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p'};
    uint8_t out[20];
    KN_OK(kn_decompress(KN_CODEC_LZ4_RAW, block, sizeof block, out, sizeof out, &err));
    assert_memory_equal(out, "abcdabcdefghijklmnop", 20);
    const uint8_t bad[] = {0, 5};
    for (size_t i = 0; i < sizeof bad; i++) {
        block[5] = bad[i];
        pa_err_clear(&err);
        assert_int_equal(kn_decompress(KN_CODEC_LZ4_RAW, block, sizeof block, out, sizeof out, &err), PA_ECORRUPT);
        assert_non_null(strstr(err.msg, "invalid compressed data"));
    }
    pa_err_close(&err);
}

/* BROTLI: levels, a bad level, garbage after the stream, and a stream
 * decoded into a buffer one byte short (ASan sees any write past it). */
static void test_brotli(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    rng r = {5};
    uint8_t src[5000], dst[8000], back[5001];
    fill(src, sizeof src, &r, true);
    size_t len, bound = kn_compress_bound(KN_CODEC_BROTLI, sizeof src);
    assert_true(bound >= sizeof src && bound <= sizeof dst - 1);
    for (int level = 0; level <= 11; level += 11) {
        KN_OK(kn_compress(KN_CODEC_BROTLI, level, src, sizeof src, dst, sizeof dst, &len, &err));
        assert_true(len < sizeof src / 4);
        KN_OK(kn_decompress(KN_CODEC_BROTLI, dst, len, back, sizeof src, &err));
        assert_memory_equal(src, back, sizeof src);
    }
    assert_int_equal(kn_compress(KN_CODEC_BROTLI, 12, src, sizeof src, dst, sizeof dst, &len, &err), PA_EINVAL);
    assert_int_equal(kn_compress(KN_CODEC_BROTLI, 0, src, sizeof src, dst, 10, &len, &err), PA_EINVAL);
    KN_OK(kn_compress(KN_CODEC_BROTLI, 0, src, sizeof src, dst, sizeof dst, &len, &err));
    dst[len] = 0;   /* one byte after the stream */
    pa_err_close(&err);   /* the first error is kept: start afresh for each message */
    pa_err_init(&err);
    assert_int_equal(kn_decompress(KN_CODEC_BROTLI, dst, len + 1, back, sizeof src, &err), PA_ECORRUPT);
    assert_non_null(strstr(err.msg, "after the end of the stream"));
    uint8_t *short_buf = malloc(sizeof src - 1);
    pa_err_close(&err);
    pa_err_init(&err);
    assert_int_equal(kn_decompress(KN_CODEC_BROTLI, dst, len, short_buf, sizeof src - 1, &err), PA_ECORRUPT);
    assert_non_null(strstr(err.msg, "past the expected"));
    free(short_buf);
    memset(dst, 0xA5, 64);   /* not a stream */
    assert_int_equal(kn_decompress(KN_CODEC_BROTLI, dst, 64, back, sizeof src, &err), PA_ECORRUPT);
    pa_err_close(&err);
}

/* kn_crc32: the CRC-32 check value of "123456789" (0xCBF43926, as every
 * CRC-32/ISO-HDLC implementation gives it), the empty input and "a" (as
 * Python's zlib.crc32 gives it). */
static void test_crc32(void **state)
{
    (void)state;
    assert_int_equal(kn_crc32("123456789", 9), 0xCBF43926u);
    assert_int_equal(kn_crc32("", 0), 0);
    assert_int_equal(kn_crc32("a", 1), 0xE8B7BE43u);
}

static void test_batch(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    pa_threadpool *tp;
    KN_OK(pa_threadpool_create(2, &tp, &err));
    enum { NJ = 30 };
    rng r = {8};
    kn_codec_job jobs[NJ];
    uint8_t *src[NJ], *cmp[NJ], *out[NJ];
    for (int k = 0; k < NJ; k++) {
        size_t n = 1000 + (size_t)k * 997;
        int codec = all_codecs[k % NCODECS];
        src[k] = malloc(n);
        fill(src[k], n, &r, k & 1);
        size_t bound = kn_compress_bound(codec, n), len;
        cmp[k] = malloc(bound);
        KN_OK(kn_compress(codec, 0, src[k], n, cmp[k], bound, &len, &err));
        out[k] = malloc(n);
        jobs[k] = (kn_codec_job){cmp[k], len, out[k], n, codec, 999, NULL};
    }
    KN_OK(kn_decompress_batch(jobs, NJ, tp, &err));
    for (int k = 0; k < NJ; k++) {
        assert_int_equal(jobs[k].status, PA_OK);
        assert_memory_equal(src[k], out[k], jobs[k].dst_size);
    }
    jobs[5].dst_size -= 1;
    assert_int_equal(kn_decompress_batch(jobs, NJ, NULL, &err), PA_ECORRUPT);
    assert_int_equal(jobs[5].status, PA_ECORRUPT);
    assert_int_equal(jobs[6].status, PA_OK);
    assert_int_equal(err.code, PA_ECORRUPT);
    for (int k = 0; k < NJ; k++) {
        free(src[k]);
        free(cmp[k]);
        free(out[k]);
    }
    pa_threadpool_destroy(tp);
    pa_err_close(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_lz4_hadoop),
        cmocka_unit_test(test_lz4_offsets),
        cmocka_unit_test(test_brotli),
        cmocka_unit_test(test_crc32),
        cmocka_unit_test(test_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
