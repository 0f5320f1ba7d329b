/*
 * test_kconf_codec.c - conformance of kn_decompress_pages on the device
 * named by PISTA_TEST_DEVICE (default "cpu"): pages compressed by the host
 * libraries (SNAPPY, LZ4 in one and several Hadoop frames, LZ4_RAW, raw
 * LZ4 under codec 5) and streams built by hand (every SNAPPY literal and
 * copy form, overlapping copies, long LZ4 length extensions) decompress to
 * the original bytes, with guard bytes after each output untouched; a
 * corrupt page among good ones is reported with its index while the others
 * decode; an unknown codec is refused; and thousands of truncated and
 * bit-flipped pages give what the host decoder gives: the same bytes or a
 * refusal on both (the host checks what liblz4's fast path lets through,
 * such as an offset of 0, as the device does: kn_lz4.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <lz4.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

#define GUARD 64

static dv_device *dev;
static dv_stream *stream;

static int setup(void **state)
{
    const char *s = getenv("PISTA_TEST_DEVICE");
    dv_options o = {.spec = s && *s ? s : "cpu", .cpu_threads = 2};
    pa_err e;
    pa_err_init(&e);
    if (dv_open(&o, &dev, &e) != PA_OK || dv_stream_create(dev, &stream, &e) != PA_OK)
        fail_msg("cannot open device: %s", e.msg);
    return 0;
}

static int teardown(void **state)
{
    dv_stream_destroy(stream);
    dv_close(dev);
    return 0;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

/* One page of a test batch, on the host. */
typedef struct page {
    int codec;
    uint8_t *comp;
    size_t comp_n;
    uint8_t *want;   /* the expected output; NULL when only the status is checked */
    size_t raw_n;
} page;

static page make_page(int codec, const uint8_t *comp, size_t comp_n, const uint8_t *want, size_t raw_n)
{
    page p = {codec, malloc(comp_n + 1), comp_n, want ? malloc(raw_n + 1) : NULL, raw_n};
    memcpy(p.comp, comp, comp_n);
    if (want)
        memcpy(p.want, want, raw_n);
    return p;
}

static void free_page(page *p)
{
    free(p->comp);
    free(p->want);
}

/* Run the pages as one batch on the device; statuses in status[], outputs
 * checked against want (when given) and their guards; the call's result
 * (call, then sync) is returned with its message in err. */
static int run_batch(page *pages, int n, int32_t *status, pa_err *err)
{
    kn_codec_job *jobs = calloc((size_t)n, sizeof *jobs);
    uint8_t **dsrc = calloc((size_t)n, sizeof *dsrc), **ddst = calloc((size_t)n, sizeof *ddst);
    for (int i = 0; i < n; i++) {
        assert_int_equal(dv_alloc(dev, pages[i].comp_n + 1, (void **)&dsrc[i], NULL), PA_OK);
        assert_int_equal(dv_alloc(dev, pages[i].raw_n + GUARD, (void **)&ddst[i], NULL), PA_OK);
        assert_int_equal(dv_copy_async(stream, dsrc[i], pages[i].comp, pages[i].comp_n + 1, DV_COPY_H2D, NULL),
                         PA_OK);
        uint8_t *fill = malloc(pages[i].raw_n + GUARD);
        memset(fill, 0xee, pages[i].raw_n + GUARD);
        assert_int_equal(dv_copy_async(stream, ddst[i], fill, pages[i].raw_n + GUARD, DV_COPY_H2D, NULL), PA_OK);
        assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
        free(fill);
        jobs[i] = (kn_codec_job){dsrc[i], pages[i].comp_n, ddst[i], pages[i].raw_n, pages[i].codec, -12345, NULL};
    }
    kn_codec_job *djobs = NULL;
    assert_int_equal(dv_alloc(dev, (size_t)n * sizeof *jobs + 1, (void **)&djobs, NULL), PA_OK);
    assert_int_equal(dv_copy_async(stream, djobs, jobs, (size_t)n * sizeof *jobs, DV_COPY_H2D, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
    kn_ctx kn = {dev, stream};
    int rc = kn_decompress_pages(&kn, djobs, n, err);
    int rs = dv_stream_sync(stream, rc == PA_OK ? err : NULL);
    if (rc == PA_OK)
        rc = rs;
    dv_clear_fault(dev);
    assert_int_equal(dv_copy_async(stream, jobs, djobs, (size_t)n * sizeof *jobs, DV_COPY_D2H, NULL), PA_OK);
    for (int i = 0; i < n; i++) {
        uint8_t *back = malloc(pages[i].raw_n + GUARD);
        assert_int_equal(dv_copy_async(stream, back, ddst[i], pages[i].raw_n + GUARD, DV_COPY_D2H, NULL), PA_OK);
        assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
        status[i] = jobs[i].status;
        for (int g = 0; g < GUARD; g++)
            if (back[pages[i].raw_n + g] != 0xee)
                fail_msg("page %d (codec %d): byte %d past the output was written", i, pages[i].codec, g);
        if (pages[i].want && status[i] == PA_OK && memcmp(back, pages[i].want, pages[i].raw_n) != 0)
            fail_msg("page %d (codec %d, %zu bytes): wrong output", i, pages[i].codec, pages[i].raw_n);
        free(back);
        dv_free(dev, dsrc[i]);
        dv_free(dev, ddst[i]);
    }
    dv_free(dev, djobs);
    free(jobs);
    free(dsrc);
    free(ddst);
    return rc;
}

/* Test data of several shapes. */
static uint8_t *make_data(int kind, size_t n)
{
    static const char *words[] = {"lineitem", "orders", "special", "requests", "|", " ", "carefully", "final"};
    uint8_t *p = malloc(n + 1);
    for (size_t i = 0; i < n;) {
        switch (kind) {
        case 0: p[i++] = (uint8_t)rnd(); break;                                       /* incompressible */
        case 1: p[i] = (uint8_t)((i / 300) & 0xff); i++; break;                        /* long runs */
        case 2: {                                                                      /* text */
            const char *w = words[rnd() % 8];
            for (size_t k = 0; w[k] && i < n; k++)
                p[i++] = (uint8_t)w[k];
            break;
        }
        case 3: {                                                                      /* little integers */
            uint32_t v = (uint32_t)(i / 4) * 3 + (rnd() & 3);
            for (int k = 0; k < 4 && i < n; k++)
                p[i++] = (uint8_t)(v >> (8 * k));
            break;
        }
        default: p[i] = (uint8_t)(i % (size_t)(kind - 2)); i++; break;              /* period kind-2 */
        }
    }
    return p;
}

static page compressed(int codec, const uint8_t *raw, size_t n)
{
    size_t bound = kn_compress_bound(codec, n), len = 0;
    uint8_t *c = malloc(bound + 1);
    pa_err e;
    pa_err_init(&e);
    if (kn_compress(codec, 0, raw, n, c, bound, &len, &e) != PA_OK)
        fail_msg("kn_compress: %s", e.msg);
    page p = make_page(codec, c, len, raw, n);
    free(c);
    return p;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* LZ4 (codec 5) in Hadoop frames: parts[k] raw bytes per frame, the frame
 * given as `chunks` compressed blocks. */
static page hadoop(const uint8_t *raw, size_t n, int frames, int chunks)
{
    uint8_t *c = malloc(n * 2 + 1024);
    size_t at = 0, in = 0;
    for (int f = 0; f < frames; f++) {
        size_t part = f == frames - 1 ? n - in : n / (size_t)frames;
        put_be32(c + at, (uint32_t)part);
        at += 4;
        size_t done = 0;
        for (int k = 0; k < chunks; k++) {
            size_t piece = k == chunks - 1 ? part - done : part / (size_t)chunks;
            int got = LZ4_compress_default((const char *)raw + in + done, (char *)c + at + 4, (int)piece,
                                           LZ4_compressBound((int)piece));
            assert_true(got > 0);
            put_be32(c + at, (uint32_t)got);
            at += 4 + (size_t)got;
            done += piece;
        }
        in += part;
    }
    page p = make_page(KN_CODEC_LZ4, c, at, raw, n);
    free(c);
    return p;
}

static void test_round_trips(void **state)
{
    static const size_t sizes[] = {0, 1, 5, 13, 100, 4097, 65536 + 17, 300000};
    enum { MAXP = 8 * 8 * 6 };
    page *pages = calloc(MAXP, sizeof *pages);
    uint8_t *datas[8 * 8];
    int n = 0, nd = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int kind = 0; kind < 8; kind++) {
            size_t len = sizes[s];
            if (len >= 65536 && kind > 3)
                continue;
            uint8_t *raw = datas[nd++] = make_data(kind, len);
            pages[n++] = compressed(KN_CODEC_SNAPPY, raw, len);
            pages[n++] = compressed(KN_CODEC_LZ4_RAW, raw, len);
            pages[n++] = compressed(KN_CODEC_LZ4, raw, len);
            pages[n++] = compressed(KN_CODEC_UNCOMPRESSED, raw, len);
            if (len >= 100) {
                pages[n++] = hadoop(raw, len, 3, 2);
                /* One raw block under codec 5 (old writers): the framing does not fit. */
                page r = compressed(KN_CODEC_LZ4_RAW, raw, len);
                r.codec = KN_CODEC_LZ4;
                pages[n++] = r;
            }
        }
    int32_t *status = calloc((size_t)n, sizeof *status);
    pa_err e;
    pa_err_init(&e);
    if (run_batch(pages, n, status, &e) != PA_OK)
        fail_msg("%d pages: %s", n, e.msg);
    for (int i = 0; i < n; i++)
        assert_int_equal(status[i], PA_OK);
    for (int i = 0; i < n; i++)
        free_page(&pages[i]);
    for (int i = 0; i < nd; i++)
        free(datas[i]);
    free(pages);
    free(status);
    pa_err_close(&e);
}

/* SNAPPY streams built by hand: every literal length form (1 to 4 length
 * bytes), the three copy forms, overlapping copies of period 1 and 3. */
static void test_snappy_forms(void **state)
{
    uint8_t *raw = make_data(2, 80000);
    size_t n = 0;
    uint8_t c[90000];
    size_t at = 0;
    /* the preamble is written last: build the elements after 5 bytes */
    size_t el = 5;
    at = el;
    /* literal of 10 (short form) */
    c[at++] = (uint8_t)((10 - 1) << 2);
    memcpy(c + at, raw, 10), at += 10, n += 10;
    /* literal of 61 (1 length byte: tag 60) */
    c[at++] = 60 << 2, c[at++] = 61 - 1;
    memcpy(c + at, raw + n, 61), at += 61, n += 61;
    /* literal of 300 (2 bytes: tag 61) */
    c[at++] = 61 << 2, c[at++] = (uint8_t)((300 - 1) & 0xff), c[at++] = (uint8_t)((300 - 1) >> 8);
    memcpy(c + at, raw + n, 300), at += 300, n += 300;
    /* literal of 70000 (3 bytes: tag 62) */
    c[at++] = 62 << 2, c[at++] = (uint8_t)((70000 - 1) & 0xff), c[at++] = (uint8_t)(((70000 - 1) >> 8) & 0xff),
    c[at++] = (uint8_t)((70000 - 1) >> 16);
    memcpy(c + at, raw + n, 70000), at += 70000, n += 70000;
    /* literal of 7 (4 bytes: tag 63) */
    c[at++] = 63 << 2, c[at++] = 6, c[at++] = 0, c[at++] = 0, c[at++] = 0;
    memcpy(c + at, raw + n, 7), at += 7, n += 7;
    uint8_t *want = malloc(200000);
    memcpy(want, raw, n);
    /* copy, 1-byte offset: length 11, offset 1000 (tag bits carry offset >> 8) */
    c[at++] = (uint8_t)(1 | ((11 - 4) << 2) | ((1000 >> 8) << 5)), c[at++] = (uint8_t)(1000 & 0xff);
    memcpy(want + n, want + n - 1000, 11), n += 11;
    /* copy, 2-byte offset: length 64, offset 50000 */
    c[at++] = (uint8_t)(2 | ((64 - 1) << 2)), c[at++] = (uint8_t)(50000 & 0xff), c[at++] = (uint8_t)(50000 >> 8);
    memcpy(want + n, want + n - 50000, 64), n += 64;
    /* copy, 4-byte offset: length 33, offset 70100 */
    c[at++] = (uint8_t)(3 | ((33 - 1) << 2)), c[at++] = (uint8_t)(70100 & 0xff),
    c[at++] = (uint8_t)((70100 >> 8) & 0xff), c[at++] = (uint8_t)(70100 >> 16), c[at++] = 0;
    memcpy(want + n, want + n - 70100, 33), n += 33;
    /* overlapping: period 1, length 64; period 3, length 60 */
    c[at++] = (uint8_t)(2 | ((64 - 1) << 2)), c[at++] = 1, c[at++] = 0;
    for (int k = 0; k < 64; k++, n++)
        want[n] = want[n - 1];
    c[at++] = (uint8_t)(2 | ((60 - 1) << 2)), c[at++] = 3, c[at++] = 0;
    for (int k = 0; k < 60; k++, n++)
        want[n] = want[n - 3];
    /* the preamble: n as a varint, right before the elements */
    uint8_t pre[5];
    int pn = 0;
    for (size_t v = n;; v >>= 7) {
        pre[pn++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
        if (v < 0x80)
            break;
    }
    memcpy(c + el - (size_t)pn, pre, (size_t)pn);
    page p = make_page(KN_CODEC_SNAPPY, c + el - (size_t)pn, at - el + (size_t)pn, want, n);
    /* The host decoder agrees with the hand-made expectation. */
    uint8_t *host = malloc(n);
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(kn_decompress(KN_CODEC_SNAPPY, p.comp, p.comp_n, host, n, &e), PA_OK);
    assert_memory_equal(host, want, n);
    int32_t status;
    if (run_batch(&p, 1, &status, &e) != PA_OK)
        fail_msg("%s", e.msg);
    assert_int_equal(status, PA_OK);
    free_page(&p);
    free(host);
    free(want);
    free(raw);
    pa_err_close(&e);
}

/* LZ4 blocks built by hand: literal and match lengths with extension bytes
 * (255 chains) and an overlapping match of period 2. */
static void test_lz4_lengths(void **state)
{
    uint8_t *raw = make_data(0, 1000);
    uint8_t c[2000], want[4000];
    size_t at = 0, n = 0;
    /* 600 literals (15 + 255 + 255 + 75), then a match of 4 + 15 + 255 + 10 = 284 at offset 2 */
    c[at++] = 0xff;
    c[at++] = 255, c[at++] = 255, c[at++] = 600 - 15 - 510;
    memcpy(c + at, raw, 600), at += 600;
    memcpy(want, raw, 600), n = 600;
    c[at++] = 2, c[at++] = 0;
    c[at++] = 255, c[at++] = 10;
    for (int k = 0; k < 284; k++, n++)
        want[n] = want[n - 2];
    /* the last sequence: 20 literals (15 + 5) */
    c[at++] = 0xf0, c[at++] = 5;
    memcpy(c + at, raw + 600, 20), at += 20;
    memcpy(want + n, raw + 600, 20), n += 20;
    page p = make_page(KN_CODEC_LZ4_RAW, c, at, want, n);
    uint8_t host[4000];
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(kn_decompress(KN_CODEC_LZ4_RAW, c, at, host, n, &e), PA_OK);
    assert_memory_equal(host, want, n);
    int32_t status;
    if (run_batch(&p, 1, &status, &e) != PA_OK)
        fail_msg("%s", e.msg);
    assert_int_equal(status, PA_OK);
    free_page(&p);
    free(raw);
    pa_err_close(&e);
}

/* A corrupt page among good ones: the call names it, the others decode. */
static void test_corrupt_page_named(void **state)
{
    uint8_t *raw = make_data(2, 5000);
    page pages[4] = {compressed(KN_CODEC_SNAPPY, raw, 5000), compressed(KN_CODEC_LZ4_RAW, raw, 5000),
                     compressed(KN_CODEC_SNAPPY, raw, 5000), compressed(KN_CODEC_LZ4, raw, 5000)};
    size_t whole = pages[2].comp_n;
    pages[2].comp_n /= 2;   /* truncated */
    int32_t status[4];
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(run_batch(pages, 4, status, &e), PA_ECORRUPT);
    assert_non_null(strstr(e.msg, "page 2 of the batch"));
    assert_non_null(strstr(e.msg, "SNAPPY"));
    assert_int_equal(status[0], PA_OK);
    assert_int_equal(status[1], PA_OK);
    assert_int_equal(status[2], PA_ECORRUPT);
    assert_int_equal(status[3], PA_OK);
    /* The wrong expected size. */
    pages[2].comp_n = whole;
    pages[1].raw_n -= 1;
    free(pages[1].want), pages[1].want = NULL;
    pa_err_close(&e);
    pa_err_init(&e);
    assert_int_equal(run_batch(pages, 4, status, &e), PA_ECORRUPT);
    assert_non_null(strstr(e.msg, "page 1 of the batch"));
    assert_non_null(strstr(e.msg, "LZ4_RAW"));
    assert_int_equal(status[1], PA_ECORRUPT);
    assert_int_equal(status[2], PA_OK);
    /* A codec the device does not decompress. */
    pages[3].codec = KN_CODEC_GZIP;
    pages[1].raw_n += 1;
    pa_err_close(&e);
    pa_err_init(&e);
    assert_int_equal(run_batch(pages, 4, status, &e), PA_EUNSUPPORTED);
    assert_non_null(strstr(e.msg, "page 3 of the batch"));
    assert_non_null(strstr(e.msg, "not decompressed on the device"));
    assert_false(kn_decompress_pages_supported(KN_CODEC_GZIP));
    assert_true(kn_decompress_pages_supported(KN_CODEC_SNAPPY));
    /* No pages; a negative count. */
    kn_ctx kn = {dev, stream};
    assert_int_equal(kn_decompress_pages(&kn, NULL, 0, &e), PA_OK);
    assert_int_equal(kn_decompress_pages(&kn, NULL, -1, &e), PA_EINVAL);
    for (int i = 0; i < 4; i++)
        free_page(&pages[i]);
    free(raw);
    pa_err_close(&e);
}

/* Truncated and bit-flipped pages against the host decoder. */
static void test_corruptions_match_host(void **state)
{
    enum { PER = 40 };
    const int codecs[] = {KN_CODEC_SNAPPY, KN_CODEC_LZ4_RAW, KN_CODEC_LZ4};
    int refused = 0, total = 0;
    for (int kind = 0; kind < 5; kind++)
        for (int ci = 0; ci < 3; ci++) {
            size_t len = 300 + rnd() % 3000;
            uint8_t *raw = make_data(kind == 4 ? 7 : kind, len);
            page base = ci == 2 && kind % 2 ? hadoop(raw, len, 2, 2) : compressed(codecs[ci], raw, len);
            page pages[PER];
            uint8_t *host[PER];
            int host_rc[PER];
            for (int k = 0; k < PER; k++) {
                pages[k] = make_page(base.codec, base.comp, base.comp_n, NULL, len);
                if (k % 4 == 0)
                    pages[k].comp_n = rnd() % base.comp_n;
                else
                    for (int f = 0; f < 1 + k % 3; f++)
                        pages[k].comp[rnd() % base.comp_n] ^= (uint8_t)(1u << (rnd() % 8));
                host[k] = malloc(len + 1);
                pa_err he;
                pa_err_init(&he);
                host_rc[k] = kn_decompress(base.codec, pages[k].comp, pages[k].comp_n, host[k], len, &he);
                pa_err_close(&he);
                if (host_rc[k] == PA_OK) {   /* then the device must give these bytes */
                    pages[k].want = malloc(len + 1);
                    memcpy(pages[k].want, host[k], len);
                }
            }
            int32_t status[PER];
            pa_err e;
            pa_err_init(&e);
            run_batch(pages, PER, status, &e);
            for (int k = 0; k < PER; k++) {
                total++;
                if (host_rc[k] != PA_OK && status[k] == PA_OK)
                    fail_msg("codec %d page %d: the host refuses it, the device decoded it", base.codec, k);
                if (host_rc[k] == PA_OK && status[k] != PA_OK)
                    fail_msg("codec %d page %d: the host decodes it, the device refused it", base.codec, k);
                refused += host_rc[k] != PA_OK;
                free(host[k]);
                free_page(&pages[k]);
            }
            free_page(&base);
            free(raw);
            pa_err_close(&e);
        }
    print_message("%d corrupt pages, %d refused by both\n", total, refused);
    assert_true(refused * 2 > total);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),       cmocka_unit_test(test_snappy_forms),
        cmocka_unit_test(test_lz4_lengths),       cmocka_unit_test(test_corrupt_page_named),
        cmocka_unit_test(test_corruptions_match_host),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
