/*
 * test_simt.c - the SIMT emulation (src/simt) running the CUDA kernels of
 * test_simt_kernels.cu on the `sim` device: device buffers from dv_alloc
 * (PROT_NONE while the device is idle), launches that run later on the
 * executor, results copied back with dv_copy_async and checked after a
 * stream sync. Each check is one that a broken emulation fails: barriers
 * that do not order, shuffles that read the wrong lane or lose a value's
 * high half, atomics that are not atomic across blocks running in
 * parallel, misuse that goes unreported or crashes.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "simt/simt_rt.h"
#include "simt_testkernels.h"

#define OK(call)                                                                  \
    do {                                                                          \
        int rc_ = (call);                                                         \
        if (rc_ != PA_OK)                                                         \
            fail_msg("%s -> %s: %s", #call, pa_status_name(rc_), err.msg);        \
    } while (0)

typedef struct fixture {
    dv_device *dev;
    dv_stream *s;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    dv_options o = {.spec = "sim", .cpu_threads = 4};
    pa_err err;
    pa_err_init(&err);
    OK(dv_open(&o, &f->dev, &err));
    OK(dv_stream_create(f->dev, &f->s, &err));
    pa_err_close(&err);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    dv_stream_destroy(f->s);
    dv_close(f->dev);
    free(f);
    return 0;
}

/* Device memory holding n bytes of host (NULL: zeros). */
static void *to_device(fixture *f, const void *host, size_t n)
{
    pa_err err;
    pa_err_init(&err);
    void *d, *pin;
    OK(dv_alloc(f->dev, n, &d, &err));
    OK(dv_host_alloc(f->dev, n, &pin, &err));
    if (host)
        memcpy(pin, host, n);
    else
        memset(pin, 0, n);
    OK(dv_copy_async(f->s, d, pin, n, DV_COPY_H2D, &err));
    OK(dv_host_free_async(f->s, pin, &err));
    pa_err_close(&err);
    return d;
}

/* Copy n bytes back after the stream's work (synchronises) and free d. */
static void from_device(fixture *f, void *d, void *host, size_t n)
{
    pa_err err;
    pa_err_init(&err);
    void *pin;
    OK(dv_host_alloc(f->dev, n, &pin, &err));
    OK(dv_copy_async(f->s, pin, d, n, DV_COPY_D2H, &err));
    OK(dv_stream_sync(f->s, &err));
    memcpy(host, pin, n);
    dv_host_free(f->dev, pin);
    dv_free(f->dev, d);
    pa_err_close(&err);
}

/* ---------------------------------------------------------------- tests */

static void test_barrier_order(void **state)
{
    fixture *f = *state;
    enum { B = 6, T = 256 };
    pa_err err;
    pa_err_init(&err);
    unsigned *d = to_device(f, NULL, sizeof(unsigned) * 2 * B * T);
    OK(tk_barrier_order_simt(f->s, B, T, d, &err));
    static unsigned out[2 * B * T];
    from_device(f, d, out, sizeof out);
    for (unsigned b = 0; b < B; b++)
        for (unsigned t = 0; t < T; t++) {
            assert_int_equal(out[2 * (b * T + t)], b * 1000 + (t + 1) % T);
            assert_int_equal(out[2 * (b * T + t) + 1], b * 1000 + (t + T - 1) % T + 500);
        }
    pa_err_close(&err);
}

static void test_barrier_votes(void **state)
{
    fixture *f = *state;
    pa_err err;
    pa_err_init(&err);
    int *d = to_device(f, NULL, sizeof(int) * 3 * 3);
    OK(tk_barrier_vote_simt(f->s, 3, 100, 7, d, &err));
    int out[9];
    from_device(f, d, out, sizeof out);
    for (int b = 0; b < 3; b++) {
        assert_int_equal(out[3 * b], 15);   /* 0, 7, ..., 98 */
        assert_int_equal(out[3 * b + 1], 0);
        assert_int_equal(out[3 * b + 2], 1);
    }
    d = to_device(f, NULL, sizeof(int) * 3);
    OK(tk_barrier_vote_simt(f->s, 1, 64, 1, d, &err));
    from_device(f, d, out, sizeof(int) * 3);
    assert_int_equal(out[0], 64);
    assert_int_equal(out[1], 1);
    assert_int_equal(out[2], 1);
    pa_err_close(&err);
}

static void test_block_sum(void **state)
{
    fixture *f = *state;
    enum { N = 1 << 20 };
    pa_err err;
    pa_err_init(&err);
    long long *in = malloc(sizeof *in * N);
    unsigned long long want = 0;
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        in[i] = (long long)(x % 2000001) - 1000000 + ((i % 1000 == 0) ? (1ll << 40) : 0);
        want += (unsigned long long)in[i];
    }
    long long *d_in = to_device(f, in, sizeof *in * N);
    /* Block sizes: full warps only; grids smaller than the data (grid-stride). */
    const unsigned shapes[][2] = {{64, 256}, {7, 1024}, {300, 32}, {1, 96}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        unsigned long long *d_out = to_device(f, NULL, sizeof *d_out);
        OK(tk_block_sum_simt(f->s, shapes[k][0], shapes[k][1], d_in, N, d_out, &err));
        unsigned long long got;
        from_device(f, d_out, &got, sizeof got);
        assert_true(got == want);
    }
    dv_free(f->dev, d_in);
    free(in);
    pa_err_close(&err);
}

static void test_warp_ops(void **state)
{
    fixture *f = *state;
    pa_err err;
    pa_err_init(&err);
    long long *d = to_device(f, NULL, sizeof(long long) * 64 * TK_LANES_OUT);
    OK(tk_warp_ops_simt(f->s, d, &err));
    static long long out[64 * TK_LANES_OUT];
    from_device(f, d, out, sizeof out);
    for (long long t = 0; t < 64; t++) {
        const long long *o = out + t * TK_LANES_OUT;
        long long l = t % 32;
        assert_int_equal(o[0], ((l & ~7) + 3) * 10);
        assert_int_equal(o[1], ((l & 15) >= 2 ? l - 2 : l) * 10);
        assert_int_equal(o[2], (l + 5 < 32 ? l + 5 : l) * 10);
        assert_int_equal(o[3], (l ^ 1) * 10);
        assert_int_equal(o[4], (long long)((((unsigned long long)((l ^ 16) + 1)) << 40) | 0xABCDEFu));
        assert_int_equal(o[5], 2000000000000ll + (31 - l));
        assert_int_equal(o[6], l < 16 ? 0x9249 : 16);
        assert_int_equal(o[7], l < 16 ? 0 : 1);
        assert_int_equal(o[8], l % 2 ? 0xAAAAAAAAll : 0);
        assert_int_equal(o[9], l % 2 ? 1 : 0);
        assert_int_equal(o[10], 32 * 1000 + 2 * 100 + 31);
        assert_int_equal(o[11], 4 * ((l & 3) + 1 < 4 ? l + 1 : l) + 1);
    }
    /* 48 threads: a warp of 16 lanes reduces with the full mask. */
    int *p = to_device(f, NULL, sizeof(int) * 48);
    OK(tk_partial_warp_simt(f->s, p, &err));
    int got[48];
    from_device(f, p, got, sizeof got);
    int v[16];
    for (int l = 0; l < 16; l++)
        v[l] = 1;
    for (int dd = 8; dd > 0; dd /= 2) {
        int nv[16];
        for (int l = 0; l < 16; l++)
            nv[l] = v[l] + (l + dd < 16 ? v[l + dd] : v[l]);
        memcpy(v, nv, sizeof v);
    }
    assert_int_equal(v[0], 16);
    for (int t = 0; t < 48; t++)
        assert_int_equal(got[t], v[t % 16]);
    pa_err_close(&err);
}

static void test_histogram(void **state)
{
    fixture *f = *state;
    enum { N = 1 << 20 };
    pa_err err;
    pa_err_init(&err);
    unsigned char *keys = malloc(N);
    unsigned want[256] = {0};
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        keys[i] = (unsigned char)(x % 7 == 0 ? 42 : x >> 56);   /* one hot bin */
        want[keys[i]]++;
    }
    unsigned char *d_keys = to_device(f, keys, N);
    unsigned *d_bins = to_device(f, NULL, sizeof want);
    OK(tk_histogram_simt(f->s, 512, 128, d_keys, N, d_bins, &err));
    unsigned got[256];
    from_device(f, d_bins, got, sizeof got);
    assert_memory_equal(got, want, sizeof want);
    dv_free(f->dev, d_keys);
    free(keys);
    pa_err_close(&err);
}

static void test_atomics(void **state)
{
    fixture *f = *state;
    enum { B = 200, T = 160, N = B * T };
    pa_err err;
    pa_err_init(&err);
    tk_atomics a;
    memset(&a, 0, sizeof a);
    a.i_max = INT_MIN;
    a.i_min = INT_MAX;
    a.u_min = UINT_MAX;
    a.u_and = 0xFFFFFFFFu;
    tk_atomics *d = to_device(f, &a, sizeof a);
    OK(tk_atomics_simt(f->s, B, T, d, &err));
    from_device(f, d, &a, sizeof a);
    unsigned x = 0;
    for (unsigned g = 0; g < N; g++)
        x ^= g;
    assert_int_equal(a.i_add, N);
    assert_int_equal(a.u_add, 2u * N);
    assert_true(a.ull_add == 3ull * N);
    assert_true(a.f_add == (float)N);
    assert_true(a.d_add == N / 2.0);
    assert_int_equal(a.i_sub, -N);
    assert_int_equal(a.i_max, N - 1);
    assert_int_equal(a.i_min, -(N - 1));
    assert_true(a.ull_max == (unsigned long long)(N - 1) << 33);
    assert_int_equal(a.u_min, 7);
    assert_int_equal(a.u_or, 0xFFFFFFFFu);
    assert_int_equal(a.u_and, 0xFFFF0000u);
    assert_int_equal(a.u_xor, x);
    assert_int_equal(a.u_inc, N);
    assert_true(a.ull_cas == (unsigned long long)N * (N - 1) / 2);
    assert_int_equal(a.i_cas, N);
    assert_int_equal(a.i_exch, 42);
    assert_true(a.f_exch == 2.5f);
    pa_err_close(&err);
}

/* Blocks run in parallel on the device's threads: contended atomics lose
 * nothing. */
static void test_atomics_contended(void **state)
{
    fixture *f = *state;
    enum { B = 8, T = 64, ITERS = 2000, N = B * T * ITERS };
    pa_err err;
    pa_err_init(&err);
    tk_atomics a;
    memset(&a, 0, sizeof a);
    tk_atomics *d = to_device(f, &a, sizeof a);
    OK(tk_hammer_simt(f->s, B, T, d, ITERS, &err));
    from_device(f, d, &a, sizeof a);
    assert_int_equal(a.i_add, N);
    assert_true(a.ull_add == 3ull * N);
    assert_true(a.f_add == (float)N);   /* exact below 2^24 */
    assert_true(a.d_add == N / 2.0);
    assert_int_equal(a.u_inc, N);
    assert_int_equal(a.i_cas, N);
    pa_err_close(&err);
}

static void test_dynamic_shared(void **state)
{
    fixture *f = *state;
    enum { B = 5, T = 200 };
    pa_err err;
    pa_err_init(&err);
    int in[B * T];
    for (int i = 0; i < B * T; i++)
        in[i] = i * 3 - 17;
    int *d_in = to_device(f, in, sizeof in), *d_out = to_device(f, NULL, sizeof in);
    unsigned *d_before = to_device(f, NULL, sizeof(unsigned) * B);
    OK(tk_reverse_simt(f->s, B, T, d_in, d_out, d_before, &err));
    int out[B * T];
    unsigned before[B];
    from_device(f, d_out, out, sizeof out);
    from_device(f, d_before, before, sizeof before);
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < T; t++)
            assert_int_equal(out[b * T + t], in[b * T + T - 1 - t]);
        assert_int_equal(before[b], 0xA5A5A5A5u);   /* shared memory starts poisoned, not zeroed */
    }
    dv_free(f->dev, d_in);
    pa_err_close(&err);
}

static void test_grid_ids(void **state)
{
    fixture *f = *state;
    enum { GX = 3, GY = 2, GZ = 2, BX = 8, BY = 4, BZ = 3, N = GX * GY * GZ * BX * BY * BZ };
    pa_err err;
    pa_err_init(&err);
    unsigned *d = to_device(f, NULL, sizeof(unsigned) * N);
    OK(tk_ids_simt(f->s, GX, GY, GZ, BX, BY, BZ, d, &err));
    static unsigned out[N];
    from_device(f, d, out, sizeof out);
    for (unsigned i = 0; i < N; i++)
        assert_int_equal(out[i], i + 7);
    pa_err_close(&err);
}

/* Without barriers each block runs all its threads on one fiber: two
 * switches per block (in and out), whatever its size. */
static void test_fast_path(void **state)
{
    fixture *f = *state;
    enum { N = 100000 };
    pa_err err;
    pa_err_init(&err);
    static int v[N];
    for (int i = 0; i < N; i++)
        v[i] = i;
    int *d = to_device(f, v, sizeof v);
    OK(dv_stream_sync(f->s, &err));
    simt_stats a, b;
    simt_stats_get(&a);
    OK(tk_scale_simt(f->s, 50, 512, d, N, 3, &err));
    from_device(f, d, v, sizeof v);
    simt_stats_get(&b);
    for (int i = 0; i < N; i++)
        assert_int_equal(v[i], 3 * i);
    assert_int_equal(b.blocks - a.blocks, 50);
    assert_int_equal(b.threads - a.threads, 50 * 512);
    assert_int_equal(b.switches - a.switches, 2 * 50);
    pa_err_close(&err);
}

/* ------------------------------------------------------------- misuse */

/* Run broken_k(how) and return the sticky error's message (static). The
 * stream must report the error at sync; a kernel enqueued after it on the
 * same stream must be skipped. */
static const char *broken(fixture *f, int how, unsigned blocks, unsigned threads, size_t smem, int want_code)
{
    static char msg[512];
    pa_err err;
    pa_err_init(&err);
    size_t n = (size_t)blocks * (threads < 2048 ? threads : 1);
    int *d = to_device(f, NULL, sizeof(int) * (n > 64 ? n : 64));
    int *flag = to_device(f, NULL, sizeof(int) * 64);
    OK(dv_stream_sync(f->s, &err));
    OK(tk_broken_simt(f->s, how, blocks, threads, smem, d, &err));
    OK(tk_broken_simt(f->s, TK_FINE, 1, 32, 0, flag, &err));   /* skipped: the stream has failed */
    int rc = dv_stream_sync(f->s, &err);
    assert_int_equal(rc, want_code);
    snprintf(msg, sizeof msg, "%s", err.msg);
    pa_err_close(&err);
    /* The stream stays failed; read the flag through a fresh one. */
    dv_stream *s2;
    pa_err_init(&err);
    OK(dv_stream_create(f->dev, &s2, &err));
    int got[64];
    void *pin;
    OK(dv_host_alloc(f->dev, sizeof got, &pin, &err));
    OK(dv_copy_async(s2, pin, flag, sizeof got, DV_COPY_D2H, &err));
    OK(dv_stream_sync(s2, &err));
    memcpy(got, pin, sizeof got);
    assert_int_equal(got[0], 0);
    dv_host_free(f->dev, pin);
    dv_stream_destroy(s2);
    dv_free(f->dev, d);
    dv_free(f->dev, flag);
    pa_err_close(&err);
    /* A new stream for the next case. */
    dv_stream_destroy(f->s);
    pa_err_init(&err);
    OK(dv_stream_create(f->dev, &f->s, &err));
    pa_err_close(&err);
    return msg;
}

#define ASSERT_HAS(msg, part)                                                  \
    do {                                                                       \
        if (!strstr((msg), (part)))                                            \
            fail_msg("error \"%s\" does not say \"%s\"", (msg), (part));       \
    } while (0)

static void test_bad_config(void **state)
{
    fixture *f = *state;
    const char *m = broken(f, TK_FINE, 1, 1025, 0, PA_EINVAL);
    ASSERT_HAS(m, "broken_k");
    ASSERT_HAS(m, "too large");
    m = broken(f, TK_FINE, 1, 64, 64 * 1024, PA_EINVAL);
    ASSERT_HAS(m, "dynamic shared memory");
    m = broken(f, TK_FINE, 0, 64, 0, PA_EINVAL);
    ASSERT_HAS(m, "zero");
}

static void test_divergent_barrier(void **state)
{
    fixture *f = *state;
    const char *m = broken(f, TK_DIVERGENT_BARRIER, 3, 64, 0, PA_EDEVICE);
    ASSERT_HAS(m, "divergent");
    ASSERT_HAS(m, "test_simt_kernels.cu:");
    m = broken(f, TK_EXIT_BEFORE_BARRIER, 3, 64, 0, PA_EDEVICE);
    ASSERT_HAS(m, "exited");
    ASSERT_HAS(m, "__syncthreads");
}

static void test_warp_misuse(void **state)
{
    fixture *f = *state;
    const char *m = broken(f, TK_WARP_DEADLOCK, 2, 32, 0, PA_EDEVICE);
    ASSERT_HAS(m, "deadlock");
    ASSERT_HAS(m, "__shfl_sync");
    m = broken(f, TK_WARP_MISMATCH, 1, 32, 0, PA_EDEVICE);
    ASSERT_HAS(m, "disagree");
    ASSERT_HAS(m, "__ballot_sync");
    m = broken(f, TK_MASK_WITHOUT_SELF, 1, 32, 0, PA_EDEVICE);
    ASSERT_HAS(m, "does not name the calling lane");
}

static void test_kernel_assert(void **state)
{
    fixture *f = *state;
    const char *m = broken(f, TK_ASSERT, 4, 32, 0, PA_EDEVICE);
    ASSERT_HAS(m, "assertion");
    ASSERT_HAS(m, "block (2,0,0), thread (7,0,0)");
}

/* Launches skipped on a failed stream, and failed blocks, leak nothing:
 * once the device is closed (its executor threads, and so the workers with
 * their fibers, gone) host memory is back where it was. */
static void test_no_leaks(void **state)
{
    (void)state;
    pa_mem_stats before, after;
    pa_host_mem_stats(&before);
    void *f;
    setup(&f);
    for (int i = 0; i < 5; i++) {
        broken(f, TK_WARP_DEADLOCK, 40, 64, 0, PA_EDEVICE);
        broken(f, TK_ASSERT, 40, 32, 0, PA_EDEVICE);
        broken(f, TK_FINE, 1, 2000, 0, PA_EINVAL);
    }
    teardown(&f);
    pa_host_mem_stats(&after);
    assert_int_equal(after.current, before.current);
}

/* The library's own kernel (selftest.cu, built into libpista both ways)
 * on sim and on cpu, whose memory the host can touch. */
static void test_selftest(void **state)
{
    fixture *f = *state;
    enum { N = 300001 };
    pa_err err;
    pa_err_init(&err);
    static int32_t v[N];
    unsigned long long want = 0;
    for (int i = 0; i < N; i++) {
        v[i] = (i % 2 ? -1 : 3) * i;
        want += (unsigned long long)(long long)v[i];
    }
    int32_t *d = to_device(f, v, sizeof v);
    unsigned long long *d_out = to_device(f, NULL, sizeof *d_out), got;
    OK(simt_selftest(f->s, d, N, d_out, &err));
    from_device(f, d_out, &got, sizeof got);
    assert_true(got == want);
    dv_free(f->dev, d);

    dv_options o = {.spec = "cpu", .cpu_threads = 3};
    dv_device *cpu;
    dv_stream *s;
    OK(dv_open(&o, &cpu, &err));
    OK(dv_stream_create(cpu, &s, &err));
    got = 0;
    OK(simt_selftest(s, v, N, &got, &err));
    OK(dv_stream_sync(s, &err));
    assert_true(got == want);
    dv_stream_destroy(s);
    dv_close(cpu);
    pa_err_close(&err);
}

/* ---------------------------------------------------------- the C API */

typedef struct c_params {
    int *out;
} c_params;

/* A kernel written in C against the runtime: a barrier, then each thread
 * stores what its left neighbour wrote (per block, in a static array as
 * __shared__ would be). */
static __thread int c_shared[128];
static void c_body(const void *p)
{
    const c_params *cp = p;
    unsigned t = simt__ids.thread_idx.x, n = simt__ids.block_dim.x, b = simt__ids.block_idx.x;
    c_shared[t] = (int)(b * 1000 + t);
    simt__sync(SIMT_OP_SYNC, 1, "c_body");
    cp->out[b * n + t] = c_shared[(t + n - 1) % n];
}

/* simt_launch copies the parameters: changing them once the call returns
 * (before the stream ran the grid) changes nothing. */
static void test_params_copied(void **state)
{
    fixture *f = *state;
    enum { B = 2, T = 128 };
    pa_err err;
    pa_err_init(&err);
    int *d = to_device(f, NULL, sizeof(int) * B * T);
    c_params cp = {d};
    simt_config cfg = {{B, 1, 1}, {T, 1, 1}, 0, "c_body"};
    OK(simt_launch(f->s, &cfg, c_body, &cp, sizeof cp, &err));
    cp.out = NULL;   /* a grid that read this would fault */
    cfg.block.x = 4096;
    int out[B * T];
    from_device(f, d, out, sizeof out);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            assert_int_equal(out[b * T + t], b * 1000 + (t + T - 1) % T);
    pa_err_close(&err);
}

static void test_c_api(void **state)
{
    (void)state;
    pa_err err;
    pa_err_init(&err);
    enum { B = 3, T = 128 };
    int out[B * T];
    c_params cp = {out};
    simt_config cfg = {{B, 1, 1}, {T, 1, 1}, 0, "c_body"};
    OK(simt_run(NULL, &cfg, c_body, &cp, &err));
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            assert_int_equal(out[b * T + t], b * 1000 + (t + T - 1) % T);
    cfg.block.z = 9;   /* 128 * 9 threads */
    assert_int_equal(simt_run(NULL, &cfg, c_body, &cp, &err), PA_EINVAL);
    simt_release_thread();
    pa_err_close(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_barrier_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_barrier_votes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_block_sum, setup, teardown),
        cmocka_unit_test_setup_teardown(test_warp_ops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_histogram, setup, teardown),
        cmocka_unit_test_setup_teardown(test_atomics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_atomics_contended, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dynamic_shared, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grid_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fast_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_config, setup, teardown),
        cmocka_unit_test_setup_teardown(test_divergent_barrier, setup, teardown),
        cmocka_unit_test_setup_teardown(test_warp_misuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kernel_assert, setup, teardown),
        cmocka_unit_test(test_no_leaks),
        cmocka_unit_test_setup_teardown(test_selftest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_params_copied, setup, teardown),
        cmocka_unit_test(test_c_api),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
