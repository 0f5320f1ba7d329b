/*
 * test_sim_protocol.c - the `sim` device catches each class of device
 * protocol violation: a host dereference of device memory faults; a pinned
 * output read before its kernel ran holds the poison; a buffer freed while a
 * queued kernel still reads it is read as poison (and the stream-ordered free
 * is not); a failing kernel's error is sticky on its stream and reaches
 * events recorded after it; destroying a stream with work left counts a host
 * sync. Each check also runs the correct protocol and gets the right answer,
 * so the traps are not simply always on.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "device/device.h"

/* Long enough that the host certainly runs ahead of every stream. */
#define DELAY_US 100000

static dv_device *open_sim(int delay_us)
{
    dv_options o = {.spec = "sim", .sim_delay_us = delay_us, .cpu_threads = 2};
    dv_device *d = NULL;
    pa_err e;
    pa_err_init(&e);
    if (dv_open(&o, &d, &e) != PA_OK)
        fail_msg("cannot open sim: %s", e.msg);
    pa_err_close(&e);
    assert_int_equal(dv_kind_of(d), DV_KIND_SIM);
    assert_false(dv_host_visible(d));
    return d;
}

static int64_t poison64(void)
{
    int64_t v;
    memset(&v, DV_POISON_BYTE, sizeof v);
    return v;
}

/* A kernel: out (pinned) = the sum of n int64 at in (device). */
typedef struct sum_args {
    const int64_t *in;
    int64_t n;
    int64_t *out;
} sum_args;

static int sum_kernel(void *p, pa_err *err)
{
    sum_args *a = p;
    uint64_t s = 0;   /* unsigned: a sum of poison wraps without undefined behaviour */
    for (int64_t i = 0; i < a->n; i++)
        s += (uint64_t)a->in[i];
    *a->out = (int64_t)s;
    return PA_OK;
}

static int failing_kernel(void *p, pa_err *err)
{
    return pa_error(err, PA_EOVERFLOW, "test kernel: value %d out of range", *(int *)p);
}

/* Device buffer holding 0, 1, ..., n-1 (uploaded and synced). */
static int64_t *iota_on_device(dv_device *d, dv_stream *s, int64_t n)
{
    int64_t *host = NULL, *dev = NULL;
    assert_int_equal(dv_host_alloc(d, (size_t)n * 8, (void **)&host, NULL), PA_OK);
    for (int64_t i = 0; i < n; i++)
        host[i] = i;
    assert_int_equal(dv_alloc(d, (size_t)n * 8, (void **)&dev, NULL), PA_OK);
    assert_int_equal(dv_copy_async(s, dev, host, (size_t)n * 8, DV_COPY_H2D, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(s, NULL), PA_OK);
    dv_host_free(d, host);
    return dev;
}

/* Host code reading device memory dies with SIGSEGV (in a child process);
 * a kernel and a copy reading the same memory work. */
static void test_host_dereference_faults(void **state)
{
    dv_device *d = open_sim(-1);
    dv_stream *s;
    assert_int_equal(dv_stream_create(d, &s, NULL), PA_OK);
    int64_t *dev = iota_on_device(d, s, 1000);

    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL);   /* cmocka catches it otherwise */
        volatile int64_t v = dev[7];   /* the violation */
        _exit(v == 7 ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGSEGV);

    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL);
        dev[7] = 1;   /* writes fault too */
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);

    int64_t *out = NULL;
    assert_int_equal(dv_host_alloc(d, 8, (void **)&out, NULL), PA_OK);
    sum_args a = {dev, 1000, out};
    assert_int_equal(dv_launch_kernel(s, sum_kernel, &a, sizeof a, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(s, NULL), PA_OK);
    assert_int_equal(*out, 999 * 1000 / 2);
    dv_host_free(d, out);
    dv_free(d, dev);
    dv_stream_destroy(s);
    dv_close(d);
}

/* Reading a kernel's pinned output before its event sees the poison. */
static void test_read_before_event_sees_poison(void **state)
{
    dv_device *d = open_sim(DELAY_US);
    dv_stream *s;
    dv_event *ev;
    assert_int_equal(dv_stream_create(d, &s, NULL), PA_OK);
    assert_int_equal(dv_event_create(d, &ev, NULL), PA_OK);
    int64_t *dev = iota_on_device(d, s, 100);
    int64_t *out = NULL;
    assert_int_equal(dv_host_alloc(d, 8, (void **)&out, NULL), PA_OK);
    *out = 4950;   /* even the right answer left over from before is overwritten */

    dv_poison_output(d, out, 8);
    sum_args a = {dev, 100, out};
    assert_int_equal(dv_launch_kernel(s, sum_kernel, &a, sizeof a, NULL), PA_OK);
    assert_int_equal(dv_event_record(ev, s, NULL), PA_OK);
    int64_t early = *(volatile int64_t *)out;   /* the violation: no wait */
    assert_int_equal(early, poison64());
    bool done = true;
    assert_int_equal(dv_event_query(ev, &done, NULL), PA_OK);
    assert_false(done);

    assert_int_equal(dv_event_sync(ev, NULL), PA_OK);   /* the protocol */
    assert_int_equal(*out, 4950);
    dv_host_free(d, out);
    dv_free(d, dev);
    dv_event_destroy(ev);
    dv_stream_destroy(s);
    dv_close(d);
}

/* A buffer freed at once while a queued kernel still reads it: the kernel
 * reads poison. Freed on the stream instead, the kernel reads the data, and
 * the block is not handed out again before the stream reached the free. */
static void test_free_while_queued(void **state)
{
    dv_device *d = open_sim(DELAY_US);
    dv_stream *s;
    assert_int_equal(dv_stream_create(d, &s, NULL), PA_OK);
    int64_t *out = NULL;
    assert_int_equal(dv_host_alloc(d, 8, (void **)&out, NULL), PA_OK);

    int64_t *dev = iota_on_device(d, s, 64);
    sum_args a = {dev, 64, out};
    assert_int_equal(dv_launch_kernel(s, sum_kernel, &a, sizeof a, NULL), PA_OK);
    dv_free(d, dev);   /* the violation */
    assert_int_equal(dv_stream_sync(s, NULL), PA_OK);
    assert_int_not_equal(*out, 63 * 64 / 2);
    assert_int_equal(*out, (int64_t)(64 * (uint64_t)poison64()));   /* wraps, deterministically */

    dev = iota_on_device(d, s, 64);
    a.in = dev;
    assert_int_equal(dv_launch_kernel(s, sum_kernel, &a, sizeof a, NULL), PA_OK);
    assert_int_equal(dv_free_async(s, dev, NULL), PA_OK);   /* the protocol */
    void *again = NULL;
    assert_int_equal(dv_alloc(d, 64 * 8, &again, NULL), PA_OK);
    assert_ptr_not_equal(again, dev);   /* not reused before the stream got there */
    assert_int_equal(dv_stream_sync(s, NULL), PA_OK);
    assert_int_equal(*out, 63 * 64 / 2);
    dv_free(d, again);
    dv_host_free(d, out);
    dv_stream_destroy(s);
    dv_close(d);
}

/* A chunk read by queued kernels on two streams and released on both: the
 * buffers are freed only after both kernels ran (the last release waits for
 * the other stream's use). Destroyed at once instead, a kernel reads poison. */
static void test_chunk_release_is_stream_ordered(void **state)
{
    dv_device *d = open_sim(DELAY_US);
    dv_stream *a, *b;
    assert_int_equal(dv_stream_create(d, &a, NULL), PA_OK);
    assert_int_equal(dv_stream_create(d, &b, NULL), PA_OK);
    int64_t *out = NULL;
    assert_int_equal(dv_host_alloc(d, 16, (void **)&out, NULL), PA_OK);
    int64_t *host = NULL;
    assert_int_equal(dv_host_alloc(d, 32 * 8, (void **)&host, NULL), PA_OK);
    for (int i = 0; i < 32; i++)
        host[i] = i;

    for (int wrong = 0; wrong < 2; wrong++) {
        dv_chunk *c;
        int64_t *buf;
        assert_int_equal(dv_chunk_create(d, 1, &c, NULL), PA_OK);
        assert_int_equal(dv_chunk_alloc(c, 32 * 8, (void **)&buf, NULL), PA_OK);
        assert_int_equal(dv_copy_async(a, buf, host, 32 * 8, DV_COPY_H2D, NULL), PA_OK);
        assert_int_equal(dv_chunk_set_ready(c, a, NULL), PA_OK);
        if (wrong)   /* the upload has landed; only the kernels are queued */
            assert_int_equal(dv_stream_sync(a, NULL), PA_OK);
        dv_chunk_retain(c);
        /* Consumer on b: waits for the upload, sums, lets go. */
        assert_int_equal(dv_chunk_wait_ready(c, b, NULL), PA_OK);
        sum_args s1 = {buf, 32, &out[1]};
        assert_int_equal(dv_launch_kernel(b, sum_kernel, &s1, sizeof s1, NULL), PA_OK);
        sum_args s0 = {buf, 32, &out[0]};
        assert_int_equal(dv_launch_kernel(a, sum_kernel, &s0, sizeof s0, NULL), PA_OK);
        if (wrong) {   /* the violation: plain destroys while both kernels are queued */
            dv_chunk_destroy(c);
            dv_chunk_destroy(c);
        } else {
            dv_chunk_release(c, b);
            dv_chunk_release(c, a);
        }
        assert_int_equal(dv_stream_sync(a, NULL), PA_OK);
        assert_int_equal(dv_stream_sync(b, NULL), PA_OK);
        if (wrong) {
            assert_int_not_equal(out[0], 31 * 32 / 2);
            assert_int_not_equal(out[1], 31 * 32 / 2);
        } else {
            assert_int_equal(out[0], 31 * 32 / 2);
            assert_int_equal(out[1], 31 * 32 / 2);
        }
    }
    pa_mempool_stats st;
    dv_memory_stats(d, &st, NULL);
    assert_int_equal(st.current, 0);   /* everything came back */
    dv_host_free(d, host);
    dv_host_free(d, out);
    dv_stream_destroy(a);
    dv_stream_destroy(b);
    dv_close(d);
}

/* A kernel's error is sticky: later work on the stream is skipped, the sync
 * and events recorded after it report it; another stream is unaffected. */
static void test_kernel_error_is_sticky(void **state)
{
    dv_device *d = open_sim(-1);
    dv_stream *s, *other;
    dv_event *ev;
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(dv_stream_create(d, &s, NULL), PA_OK);
    assert_int_equal(dv_stream_create(d, &other, NULL), PA_OK);
    assert_int_equal(dv_event_create(d, &ev, NULL), PA_OK);
    int64_t *dev = iota_on_device(d, s, 16);
    int64_t *out = NULL;
    assert_int_equal(dv_host_alloc(d, 8, (void **)&out, NULL), PA_OK);
    *out = -1;

    int arg = 42;
    assert_int_equal(dv_launch_kernel(s, failing_kernel, &arg, sizeof arg, NULL), PA_OK);
    arg = 0;   /* arguments were copied at the launch */
    sum_args a = {dev, 16, out};
    assert_int_equal(dv_launch_kernel(s, sum_kernel, &a, sizeof a, NULL), PA_OK);
    assert_int_equal(dv_event_record(ev, s, NULL), PA_OK);
    assert_int_equal(dv_event_sync(ev, &e), PA_EOVERFLOW);
    assert_non_null(strstr(e.msg, "value 42 out of range"));
    pa_err_clear(&e);
    assert_int_equal(dv_stream_sync(s, &e), PA_EOVERFLOW);
    assert_int_equal(*out, -1);   /* skipped */

    assert_int_equal(dv_launch_kernel(other, sum_kernel, &a, sizeof a, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(other, NULL), PA_OK);
    assert_int_equal(*out, 120);

    pa_err_close(&e);
    dv_host_free(d, out);
    dv_free(d, dev);
    dv_event_destroy(ev);
    dv_stream_destroy(other);
    dv_stream_destroy(s);
    dv_close(d);
}

/* Destroying a stream with work left waits for it: one counted host sync.
 * An idle stream's destruction counts none. */
static void test_stream_destroy_counts_sync(void **state)
{
    dv_device *d = open_sim(DELAY_US);
    dv_stream *s;
    pa_counters c0, c1, diff;
    assert_int_equal(dv_stream_create(d, &s, NULL), PA_OK);
    int64_t *dev = NULL, *out = NULL;
    assert_int_equal(dv_alloc(d, 64, (void **)&dev, NULL), PA_OK);
    assert_int_equal(dv_host_alloc(d, 8, (void **)&out, NULL), PA_OK);
    assert_int_equal(dv_fill_u32_async(s, dev, 0, 16, NULL), PA_OK);
    sum_args a = {dev, 8, out};
    assert_int_equal(dv_launch_kernel(s, sum_kernel, &a, sizeof a, NULL), PA_OK);
    pa_counters_snapshot(&c0);
    dv_stream_destroy(s);
    pa_counters_snapshot(&c1);
    pa_counters_diff(&c1, &c0, &diff);
    assert_int_equal(diff.v[PA_CTR_HOST_SYNCS], 1);
    assert_int_equal(*out, 0);

    assert_int_equal(dv_stream_create(d, &s, NULL), PA_OK);
    pa_counters_snapshot(&c0);
    dv_stream_destroy(s);
    pa_counters_snapshot(&c1);
    pa_counters_diff(&c1, &c0, &diff);
    assert_int_equal(diff.v[PA_CTR_HOST_SYNCS], 0);
    dv_host_free(d, out);
    dv_free(d, dev);
    dv_close(d);
}

/* sim is listed, named and refused with a clear message when misspelt. */
static void test_sim_is_listed(void **state)
{
    dv_info infos[8];
    int n = 0;
    assert_int_equal(dv_enumerate(infos, 8, &n, NULL, 0), PA_OK);
    bool found = false;
    for (int i = 0; i < n && i < 8; i++)
        found |= strcmp(infos[i].name, "sim") == 0;
    assert_true(found);
    dv_device *d = open_sim(-1);
    assert_string_equal(dv_name(d), "sim");
    assert_string_equal(dv_selection(d), "requested sim");
    dv_close(d);
    dv_options o = {.spec = "sim:1"};
    pa_err e;
    pa_err_init(&e);
    assert_int_not_equal(dv_open(&o, &d, &e), PA_OK);
    pa_err_close(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_dereference_faults),
        cmocka_unit_test(test_read_before_event_sees_poison),
        cmocka_unit_test(test_free_while_queued),
        cmocka_unit_test(test_kernel_error_is_sticky),
        cmocka_unit_test(test_chunk_release_is_stream_ordered),
        cmocka_unit_test(test_stream_destroy_counts_sync),
        cmocka_unit_test(test_sim_is_listed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
