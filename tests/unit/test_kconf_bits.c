/*
 * test_kconf_bits.c - conformance of kn_copy_bits on the device named by
 * PISTA_TEST_DEVICE (default "cpu"): random bitmaps cut at every bit
 * offset and length up to a few bytes past a word, checked bit by bit, the
 * unused high bits of the last output byte cleared, no byte written past
 * it. Buffers are device memory (a GPU cannot read the host's stack).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

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

static void test_copy_bits(void **state)
{
    enum { SRC = 40, GUARD = 4 };
    uint8_t src[SRC], dst[SRC + GUARD];
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < SRC; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        src[i] = (uint8_t)x;
    }
    kn_ctx kn = {dev, stream};
    pa_err e;
    pa_err_init(&e);
    uint8_t *dsrc, *ddst;
    assert_int_equal(dv_alloc(dev, SRC, (void **)&dsrc, NULL), PA_OK);
    assert_int_equal(dv_alloc(dev, SRC + GUARD, (void **)&ddst, NULL), PA_OK);
    assert_int_equal(dv_copy_async(stream, dsrc, src, SRC, DV_COPY_H2D, NULL), PA_OK);
    for (int64_t at = 0; at < 20; at++)
        for (int64_t n = 0; at + n <= 8 * SRC && n <= 8 * (SRC - 4); n += n < 70 ? 1 : 37) {
            memset(dst, 0xee, sizeof dst);
            assert_int_equal(dv_copy_async(stream, ddst, dst, sizeof dst, DV_COPY_H2D, NULL), PA_OK);
            assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);   /* cpu kernels do not wait for the stream */
            assert_int_equal(kn_copy_bits(&kn, dsrc, at, n, ddst, &e), PA_OK);
            assert_int_equal(dv_copy_async(stream, dst, ddst, sizeof dst, DV_COPY_D2H, NULL), PA_OK);
            assert_int_equal(dv_stream_sync(stream, &e), PA_OK);
            int64_t nb = (n + 7) / 8;
            for (int64_t i = 0; i < 8 * nb; i++) {
                int want = i < n ? (src[(at + i) >> 3] >> ((at + i) & 7)) & 1 : 0;
                if (((dst[i >> 3] >> (i & 7)) & 1) != want)
                    fail_msg("at %lld n %lld: bit %lld", (long long)at, (long long)n, (long long)i);
            }
            for (int64_t i = nb; i < (int64_t)sizeof dst; i++)
                assert_int_equal(dst[i], 0xee);
        }
    /* A bad range: refused by the call. */
    int rc = kn_copy_bits(&kn, dsrc, -1, 3, ddst, &e);
    if (rc == PA_OK)
        rc = dv_stream_sync(stream, &e);
    assert_int_equal(rc, PA_EINVAL);
    dv_free(dev, dsrc);
    dv_free(dev, ddst);
    pa_err_close(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_bits),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
