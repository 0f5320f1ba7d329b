/*
 * test_kconf_concat.c - conformance of the concatenation kernels
 * (kn_concat_bytes, kn_concat) on the device named by PISTA_TEST_DEVICE
 * (default "cpu"): random sources of every type with and without NULLs,
 * empty sources, one source, many tiny ones, checked value by value against
 * the sources themselves. Sources are uploaded to device memory and the
 * output read back before it is checked, so the suite runs on any device.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kconf_testutil.h"

static dv_device *dev;
static dv_stream *stream;
static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

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

static const pa_type types[] = {
    {PA_TYPE_BOOLEAN, 0, 0}, {PA_TYPE_INTEGER, 0, 0}, {PA_TYPE_BIGINT, 0, 0}, {PA_TYPE_DOUBLE, 0, 0},
    {PA_TYPE_DECIMAL, 15, 2}, {PA_TYPE_DECIMAL, 38, 4}, {PA_TYPE_DATE, 0, 0}, {PA_TYPE_VARCHAR, 0, 0},
};

/* A random source column of n rows (malloc'ed buffers, freed by free_col). */
static pa_column make_col(pa_type t, int64_t n, bool nulls)
{
    pa_column c = {.type = t, .length = n, .data = NULL, .offsets = NULL, .validity = NULL};
    if (nulls) {
        c.validity = malloc((size_t)(n + 7) / 8 + 1);
        for (int64_t i = 0; i < (n + 7) / 8 + 1; i++)
            c.validity[i] = (uint8_t)next();   /* bits past n are garbage on purpose */
    }
    if (t.id == PA_TYPE_VARCHAR) {
        c.offsets = malloc((size_t)(n + 1) * 4);
        /* Start at a non-zero offset sometimes, as a sliced view would. */
        int32_t base = (int32_t)(next() % 3);
        c.offsets[0] = base;
        for (int64_t i = 0; i < n; i++)
            c.offsets[i + 1] = c.offsets[i] + (int32_t)(next() % 9);
        c.data = malloc((size_t)c.offsets[n] + 1);
        for (int32_t i = 0; i < c.offsets[n]; i++)
            ((char *)c.data)[i] = (char)('a' + next() % 26);
    } else {
        size_t w = (size_t)pa_type_bytes(t);
        c.data = malloc(n * w + 1);
        for (size_t i = 0; i < n * w; i++)
            ((uint8_t *)c.data)[i] = (uint8_t)next();
    }
    return c;
}

static void free_col(pa_column *c)
{
    free(c->data);
    free(c->offsets);
    free(c->validity);
}

/* A device copy of n bytes of host memory (n may be 0; h NULL: just room). */
static void *up(const void *h, size_t n)
{
    void *d = NULL;
    assert_int_equal(dv_alloc(dev, n ? n : 1, &d, NULL), PA_OK);
    if (n && h)
        assert_int_equal(dv_copy_async(stream, d, h, n, DV_COPY_H2D, NULL), PA_OK);
    return d;
}

static void down(void *h, const void *d, size_t n)
{
    if (n)
        assert_int_equal(dv_copy_async(stream, h, d, n, DV_COPY_D2H, NULL), PA_OK);
}

static size_t data_bytes(const pa_column *c)
{
    if (c->type.id == PA_TYPE_VARCHAR)
        return (size_t)c->offsets[c->length] + 1;
    return (size_t)c->length * (size_t)pa_type_bytes(c->type) + 1;
}

/* Device copy of host column h (the bytes past the end included). */
static pa_column col_up(const pa_column *h)
{
    pa_column d = *h;
    d.data = up(h->data, data_bytes(h));
    if (h->offsets)
        d.offsets = up(h->offsets, (size_t)(h->length + 1) * 4);
    if (h->validity)
        d.validity = up(h->validity, (size_t)(h->length + 7) / 8 + 1);
    return d;
}

static void col_dev_free(pa_column *d)
{
    dv_free(dev, d->data);
    dv_free(dev, d->offsets);
    dv_free(dev, d->validity);
}

/* Concatenate n_src device copies of srcs into host column *h (buffers
 * malloc'ed): sizes with kn_concat_bytes, output validity preset to junk
 * (the kernel must clear it) when any source has NULLs. */
static void concat_on_device(const pa_column *srcs, int n_src, int64_t rows, bool any_nulls, pa_column *h)
{
    kn_ctx ctx = {dev, stream};
    pa_column *dsrcs = calloc((size_t)n_src + 1, sizeof *dsrcs);
    for (int i = 0; i < n_src; i++)
        dsrcs[i] = col_up(&srcs[i]);
    pa_type t = h->type;
    size_t vb = (size_t)(rows + 7) / 8 + 1;
    pa_column d = {.type = t, .length = rows, .data = NULL, .offsets = NULL, .validity = NULL};
    int64_t *bytes;
    assert_int_equal(dv_host_alloc(dev, 8, (void **)&bytes, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);   /* cpu kernels do not wait for the stream */
    if (t.id == PA_TYPE_VARCHAR) {
        assert_int_equal(kn_concat_bytes(&ctx, dsrcs, n_src, bytes, NULL), PA_OK);
        assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
        assert_int_equal(dv_alloc(dev, (size_t)(rows + 1) * 4, (void **)&d.offsets, NULL), PA_OK);
        h->offsets = malloc((size_t)(rows + 1) * 4);
    }
    size_t db = t.id == PA_TYPE_VARCHAR ? (size_t)*bytes + 1 : (size_t)rows * (size_t)pa_type_bytes(t) + 1;
    assert_int_equal(dv_alloc(dev, db, &d.data, NULL), PA_OK);
    h->data = malloc(db);
    if (any_nulls) {
        h->validity = malloc(vb);
        memset(h->validity, 0xa5, vb);
        d.validity = up(h->validity, vb);
        assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
    }
    assert_int_equal(kn_concat(&ctx, dsrcs, n_src, &d, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
    down(h->data, d.data, db);
    if (d.offsets)
        down(h->offsets, d.offsets, (size_t)(rows + 1) * 4);
    if (d.validity)
        down(h->validity, d.validity, vb);
    assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
    col_dev_free(&d);
    for (int i = 0; i < n_src; i++)
        col_dev_free(&dsrcs[i]);
    free(dsrcs);
    dv_host_free(dev, bytes);
}

static void check(pa_type t, int n_src, int64_t max_rows, int null_pct)
{
    pa_column *srcs = calloc((size_t)n_src + 1, sizeof *srcs);
    int64_t rows = 0;
    bool any_nulls = false;
    for (int i = 0; i < n_src; i++) {
        int64_t n = max_rows ? (int64_t)(next() % (uint64_t)(max_rows + 1)) : 0;
        bool nulls = (int)(next() % 100) < null_pct;
        srcs[i] = make_col(t, n, nulls);
        rows += n;
        any_nulls |= nulls;
    }
    pa_column d = {.type = t, .length = rows, .data = NULL, .offsets = NULL, .validity = NULL};
    concat_on_device(srcs, n_src, rows, any_nulls, &d);
    int64_t at = 0;
    size_t w = (size_t)pa_type_bytes(t);
    for (int i = 0; i < n_src; i++)
        for (int64_t r = 0; r < srcs[i].length; r++, at++) {
            bool valid = pa_column_valid(&srcs[i], r);
            if (d.validity)
                assert_int_equal(pa_column_valid(&d, at), valid);
            if (t.id == PA_TYPE_VARCHAR) {
                int32_t l0 = srcs[i].offsets[r + 1] - srcs[i].offsets[r];
                assert_int_equal(d.offsets[at + 1] - d.offsets[at], l0);
                assert_memory_equal((char *)d.data + d.offsets[at], (char *)srcs[i].data + srcs[i].offsets[r],
                                    (size_t)l0);
            } else {
                assert_memory_equal((char *)d.data + (size_t)at * w, (char *)srcs[i].data + (size_t)r * w, w);
            }
        }
    assert_int_equal(at, rows);
    if (d.validity && (rows & 7))   /* bits past the end stay clear */
        assert_int_equal(d.validity[rows >> 3] >> (rows & 7), 0);
    if (t.id == PA_TYPE_VARCHAR) {
        assert_int_equal(d.offsets[0], 0);
        int64_t want = 0;
        for (int i = 0; i < n_src; i++)
            want += srcs[i].length ? srcs[i].offsets[srcs[i].length] - srcs[i].offsets[0] : 0;
        assert_int_equal(d.offsets[rows], want);
    }
    free_col(&d);
    for (int i = 0; i < n_src; i++)
        free_col(&srcs[i]);
    free(srcs);
}

static void t_random(void **state)
{
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        check(types[k], 1, 100, 50);        /* one source */
        check(types[k], 0, 0, 0);           /* none */
        check(types[k], 5, 0, 50);          /* only empty sources */
        for (int round = 0; round < 20; round++) {
            check(types[k], 1 + (int)(next() % 40), 1 + (int64_t)(next() % 70), 50);   /* tiny, mixed NULLs */
            check(types[k], 1 + (int)(next() % 8), 3000, 100);                         /* all with NULLs */
            check(types[k], 1 + (int)(next() % 8), 3000, 0);                           /* no NULLs */
        }
    }
}

static void t_errors(void **state)
{
    pa_column ha = make_col(types[1], 10, false);
    pa_column a = col_up(&ha);
    pa_column d = {.type = types[2], .length = 10, .data = up(NULL, 80), .offsets = NULL, .validity = NULL};
    int64_t *b;
    assert_int_equal(dv_host_alloc(dev, 8, (void **)&b, NULL), PA_OK);
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(KC_STATUS(dev, stream, &e, kn_concat(&ec, &a, 1, &d, &e)), PA_EINVAL);   /* type mismatch */
    d.type = types[1];
    d.length = 11;
    assert_int_equal(KC_STATUS(dev, stream, NULL, kn_concat(&ec, &a, 1, &d, NULL)), PA_EINVAL);   /* length */
    assert_int_equal(KC_STATUS(dev, stream, NULL, kn_concat_bytes(&ec, &a, 1, b, NULL)), PA_EINVAL);   /* not VARCHAR */
    dv_host_free(dev, b);
    col_dev_free(&a);
    col_dev_free(&d);
    free_col(&ha);
    pa_err_close(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_random),
        cmocka_unit_test(t_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
