/*
 * test_device_conformance.c - one conformance suite for the device
 * interface, run against the device named by PISTA_TEST_DEVICE (default
 * "cpu"; run it with PISTA_TEST_DEVICE=cuda on a machine with a GPU).
 *
 * Covers: ordering within a stream, cross-stream events (record, wait,
 * query, sync, never-recorded events), copies of odd sizes and alignments in
 * every direction, batched copies, pool exhaustion and the memory limit,
 * concurrent use from several threads, the zero-copy rule and the counters.
 * Data is always checked on the host after a copy back, so the same code
 * verifies a GPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "device/device.h"

static const char *spec(void)
{
    const char *s = getenv("PISTA_TEST_DEVICE");
    return s && *s ? s : "cpu";
}

static dv_device *open_dev(uint64_t limit, int threads)
{
    dv_options o = {.spec = spec(), .memory_limit = limit, .cpu_threads = threads};
    dv_device *d = NULL;
    pa_err e;
    pa_err_init(&e);
    int rc = dv_open(&o, &d, &e);
    if (rc != PA_OK)
        fail_msg("cannot open device %s: %s", spec(), e.msg);
    pa_err_close(&e);
    return d;
}

static void pattern(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 31u + seed * 17u + (i >> 8));
}

/* ---------------------------------------------------------- ordering */

typedef struct order_log { int seq[256]; int n; } order_log;
typedef struct order_item { order_log *log; int id; } order_item;
static void record_order(void *p)
{
    order_item *it = p;
    it->log->seq[it->log->n++] = it->id;   /* stream order makes this race-free */
}

static void test_stream_order(void **state)
{
    dv_device *d = open_dev(0, 0);
    dv_stream *s;
    assert_int_equal(dv_stream_create(d, &s, NULL), PA_OK);
    enum { N = 200, W = 4096 };
    uint32_t *buf, *host;
    assert_int_equal(dv_alloc(d, W * 4, (void **)&buf, NULL), PA_OK);
    assert_int_equal(dv_host_alloc(d, (size_t)N * W * 4, (void **)&host, NULL), PA_OK);
    order_log log = {.n = 0};
    order_item items[N];
    /* fill(i) then copy out: each copy must see exactly the fill before it. */
    for (int i = 0; i < N; i++) {
        items[i] = (order_item){&log, i};
        assert_int_equal(dv_fill_u32_async(s, buf, (uint32_t)i, W, NULL), PA_OK);
        assert_int_equal(dv_copy_async(s, host + (size_t)i * W, buf, W * 4, DV_COPY_D2H, NULL), PA_OK);
        assert_int_equal(dv_launch_host_fn(s, record_order, &items[i], NULL), PA_OK);
    }
    assert_int_equal(dv_stream_sync(s, NULL), PA_OK);
    assert_int_equal(log.n, N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(log.seq[i], i);
        assert_int_equal(host[(size_t)i * W], (uint32_t)i);
        assert_int_equal(host[(size_t)i * W + W - 1], (uint32_t)i);
    }
    dv_free(d, buf);
    dv_host_free(d, host);
    dv_stream_destroy(s);
    dv_close(d);
}

/* ------------------------------------------------------------ events */

static int gate_open;
static void wait_gate(void *p)
{
    while (!__atomic_load_n(&gate_open, __ATOMIC_ACQUIRE))
        usleep(1000);
}

static void cross_stream_events(int threads)
{
    dv_device *d = open_dev(0, threads);
    dv_stream *a, *b;
    dv_event *ea, *eb, *never;
    assert_int_equal(dv_stream_create(d, &a, NULL), PA_OK);
    assert_int_equal(dv_stream_create(d, &b, NULL), PA_OK);
    assert_int_equal(dv_event_create(d, &ea, NULL), PA_OK);
    assert_int_equal(dv_event_create(d, &eb, NULL), PA_OK);
    assert_int_equal(dv_event_create(d, &never, NULL), PA_OK);
    bool done = false;

    /* An event never recorded is complete, and waiting on it is a no-op. */
    assert_int_equal(dv_event_query(never, &done, NULL), PA_OK);
    assert_true(done);
    assert_int_equal(dv_stream_wait_event(b, never, NULL), PA_OK);

    enum { W = 1 << 16 };
    uint32_t *buf, *host;
    assert_int_equal(dv_alloc(d, W * 4, (void **)&buf, NULL), PA_OK);
    assert_int_equal(dv_host_alloc(d, W * 4, (void **)&host, NULL), PA_OK);
    memset(host, 0, W * 4);
    assert_int_equal(dv_fill_u32_async(a, buf, 1, W, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(a, NULL), PA_OK);

    /* a: [gate] fill(7) record(ea).  b: wait(ea) copy-out record(eb). */
    __atomic_store_n(&gate_open, 0, __ATOMIC_RELEASE);
    assert_int_equal(dv_launch_host_fn(a, wait_gate, NULL, NULL), PA_OK);
    assert_int_equal(dv_fill_u32_async(a, buf, 7, W, NULL), PA_OK);
    assert_int_equal(dv_event_record(ea, a, NULL), PA_OK);
    assert_int_equal(dv_stream_wait_event(b, ea, NULL), PA_OK);
    assert_int_equal(dv_copy_async(b, host, buf, W * 4, DV_COPY_D2H, NULL), PA_OK);
    assert_int_equal(dv_event_record(eb, b, NULL), PA_OK);

    usleep(50 * 1000);
    assert_int_equal(dv_event_query(ea, &done, NULL), PA_OK);
    assert_false(done);
    assert_int_equal(dv_event_query(eb, &done, NULL), PA_OK);
    assert_false(done);                        /* b is held back by a's event */
    assert_int_equal(host[0], 0);
    __atomic_store_n(&gate_open, 1, __ATOMIC_RELEASE);
    assert_int_equal(dv_event_sync(eb, NULL), PA_OK);
    assert_int_equal(dv_event_query(ea, &done, NULL), PA_OK);
    assert_true(done);
    for (size_t i = 0; i < W; i += 1021)
        assert_int_equal(host[i], 7);          /* b saw a's fill, never the old 1 */
    assert_int_equal(host[W - 1], 7);

    /* Re-recording: a wait refers to the most recent record at its call. */
    __atomic_store_n(&gate_open, 0, __ATOMIC_RELEASE);
    assert_int_equal(dv_launch_host_fn(a, wait_gate, NULL, NULL), PA_OK);
    assert_int_equal(dv_fill_u32_async(a, buf, 9, W, NULL), PA_OK);
    assert_int_equal(dv_event_record(ea, a, NULL), PA_OK);
    assert_int_equal(dv_stream_wait_event(b, ea, NULL), PA_OK);
    assert_int_equal(dv_copy_async(b, host, buf, W * 4, DV_COPY_D2H, NULL), PA_OK);
    __atomic_store_n(&gate_open, 1, __ATOMIC_RELEASE);
    assert_int_equal(dv_stream_sync(b, NULL), PA_OK);
    assert_int_equal(host[W / 2], 9);

    dv_free(d, buf);
    dv_host_free(d, host);
    dv_event_destroy(ea);
    dv_event_destroy(eb);
    dv_event_destroy(never);
    dv_stream_destroy(a);
    dv_stream_destroy(b);
    dv_close(d);
}

static void test_cross_stream_events(void **state) { cross_stream_events(0); }

/* On the cpu and sim backends, the same with two pool threads: one is held by the gate,
 * so a parked stream must not hold the other. */
static void test_events_few_threads(void **state)
{
    if (strcmp(spec(), "cpu") != 0 && strcmp(spec(), "sim") != 0)
        skip();
    cross_stream_events(2);
}

/* ------------------------------------------------------ faults cross */

static int failing_kernel(void *args, pa_err *err)
{
    (void)args;
    return pa_error(err, PA_EOVERFLOW, "the test kernel fails");
}

/* A fault of stream a, recorded by an event b then waits for, becomes b's:
 * b's sync reports it, with a's message. A data fault (a kernel's words in
 * the fault block, here put there by a copy in a's order) on devices with
 * fault blocks; a failed host-compiled kernel on cpu and sim, whose copies
 * after the wait are then skipped. */
static void test_fault_crosses_wait(void **state)
{
    (void)state;
    dv_device *d = open_dev(0, 0);
    dv_stream *a, *b, *c;
    dv_event *ea;
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(dv_stream_create(d, &a, NULL), PA_OK);
    assert_int_equal(dv_stream_create(d, &b, NULL), PA_OK);
    assert_int_equal(dv_stream_create(d, &c, NULL), PA_OK);
    assert_int_equal(dv_event_create(d, &ea, NULL), PA_OK);
    int64_t *fa = dv_stream_fault_words(a);
    /* The gate (a host function that blocks until the test opens it) holds
     * stream a back while c is synchronised. On cuda (an H200, 2026-11-27)
     * that sync did not return while the host function blocked: CUDA runs
     * host functions on a thread of its own, which it may share with its
     * other work (not investigated further). There the fault reaches b and c
     * through the event without the gate. */
    bool gate = strcmp(spec(), "cpu") == 0 || strcmp(spec(), "sim") == 0;
    if (fa) {
        int64_t *image;
        assert_int_equal(dv_host_alloc(d, DV_FAULT_BYTES, (void **)&image, NULL), PA_OK);
        memset(image, 0, DV_FAULT_BYTES);
        image[0] = PA_EINVAL;
        image[1] = (int64_t)(uintptr_t)((char *)fa + DV_FAULT_TEXT_AT);
        strcpy((char *)image + DV_FAULT_TEXT_AT, "the test's fault");
        /* a: [gate] the fault arrives, record.  b: wait, then nothing of its own. */
        __atomic_store_n(&gate_open, 0, __ATOMIC_RELEASE);
        if (gate)
            assert_int_equal(dv_launch_host_fn(a, wait_gate, NULL, NULL), PA_OK);
        assert_int_equal(dv_copy_async(a, fa, image, DV_FAULT_BYTES, DV_COPY_H2D, NULL), PA_OK);
        assert_int_equal(dv_event_record(ea, a, NULL), PA_OK);
        assert_int_equal(dv_stream_wait_event(b, ea, NULL), PA_OK);
        if (gate)
            assert_int_equal(dv_stream_sync(c, NULL), PA_OK);   /* c never waited */
        __atomic_store_n(&gate_open, 1, __ATOMIC_RELEASE);
        assert_int_equal(dv_stream_sync(b, &e), PA_EINVAL);
        assert_non_null(strstr(e.msg, "the test's fault"));
        pa_err_clear(&e);
        /* A wait for an event already complete takes the fault as well. */
        assert_int_equal(dv_stream_wait_event(c, ea, NULL), PA_OK);
        assert_int_equal(dv_stream_sync(c, &e), PA_EINVAL);
        assert_non_null(strstr(e.msg, "the test's fault"));
        pa_err_clear(&e);
        assert_int_equal(dv_stream_sync(a, &e), PA_EINVAL);
        pa_err_clear(&e);
        dv_clear_fault(d);
        dv_host_free(d, image);
    }
    if (strcmp(spec(), "cpu") == 0 || strcmp(spec(), "sim") == 0) {
        uint32_t *buf, *host;
        assert_int_equal(dv_alloc(d, 64, (void **)&buf, NULL), PA_OK);
        assert_int_equal(dv_host_alloc(d, 64, (void **)&host, NULL), PA_OK);
        memset(host, 0, 64);
        dv_stream *x, *y;   /* fresh streams: a, b and c keep their errors */
        assert_int_equal(dv_stream_create(d, &x, NULL), PA_OK);
        assert_int_equal(dv_stream_create(d, &y, NULL), PA_OK);
        assert_int_equal(dv_fill_u32_async(y, buf, 5, 16, NULL), PA_OK);
        assert_int_equal(dv_launch_kernel(x, failing_kernel, NULL, 0, NULL), PA_OK);
        assert_int_equal(dv_event_record(ea, x, NULL), PA_OK);
        assert_int_equal(dv_stream_wait_event(y, ea, NULL), PA_OK);
        assert_int_equal(dv_copy_async(y, host, buf, 64, DV_COPY_D2H, NULL), PA_OK);
        assert_int_equal(dv_stream_sync(y, &e), PA_EOVERFLOW);
        assert_non_null(strstr(e.msg, "the test kernel fails"));
        pa_err_clear(&e);
        assert_int_equal(host[0], 0);   /* the copy after the wait was skipped */
        assert_int_equal(dv_stream_sync(x, &e), PA_EOVERFLOW);
        pa_err_clear(&e);
        dv_stream_destroy(x);
        dv_stream_destroy(y);
        dv_free(d, buf);
        dv_host_free(d, host);
    }
    pa_err_close(&e);
    dv_event_destroy(ea);
    dv_stream_destroy(a);
    dv_stream_destroy(b);
    dv_stream_destroy(c);
    dv_close(d);
}

/* ------------------------------------------------------------- copies */

static void test_odd_copies(void **state)
{
    dv_device *d = open_dev(0, 0);
    dv_stream *s;
    assert_int_equal(dv_stream_create(d, &s, NULL), PA_OK);
    static const size_t sizes[] = {0, 1, 2, 3, 7, 8, 13, 255, 256, 257, 4093, 65537, (1 << 20) + 13};
    static const size_t offs[] = {0, 1, 3, 7, 64};
    size_t cap = (1 << 20) + 128;
    unsigned char *pin_src, *pin_dst, *dev_a, *dev_b, *page_src = malloc(cap), *page_dst = malloc(cap);
    assert_int_equal(dv_host_alloc(d, cap, (void **)&pin_src, NULL), PA_OK);
    assert_int_equal(dv_host_alloc(d, cap, (void **)&pin_dst, NULL), PA_OK);
    assert_int_equal(dv_alloc(d, cap, (void **)&dev_a, NULL), PA_OK);
    assert_int_equal(dv_alloc(d, cap, (void **)&dev_b, NULL), PA_OK);
    unsigned seed = 1;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        for (size_t j = 0; j < sizeof offs / sizeof *offs; j++) {
            size_t n = sizes[i], o1 = offs[j], o2 = offs[(j + 2) % 5], o3 = offs[(j + 3) % 5];
            int pageable = (int)((i + j) & 1);
            unsigned char *src = pageable ? page_src : pin_src, *dst = pageable ? page_dst : pin_dst;
            pattern(src + o1, n, ++seed);
            memset(dst, 0xEE, cap);
            /* host -> device (offset o2) -> device (offset o3) -> host (offset o1) */
            assert_int_equal(dv_copy_async(s, dev_a + o2, src + o1, n, DV_COPY_H2D, NULL), PA_OK);
            assert_int_equal(dv_copy_async(s, dev_b + o3, dev_a + o2, n, DV_COPY_D2D, NULL), PA_OK);
            assert_int_equal(dv_copy_async(s, dst + o1, dev_b + o3, n, DV_COPY_D2H, NULL), PA_OK);
            assert_int_equal(dv_stream_sync(s, NULL), PA_OK);
            assert_memory_equal(dst + o1, src + o1, n);
            if (o1)
                assert_int_equal(dst[o1 - 1], 0xEE);   /* nothing written before ... */
            assert_int_equal(dst[o1 + n], 0xEE);       /* ... or after the range */
        }
    }
    dv_host_free(d, pin_src);
    dv_host_free(d, pin_dst);
    dv_free(d, dev_a);
    dv_free(d, dev_b);
    free(page_src);
    free(page_dst);
    dv_stream_destroy(s);
    dv_close(d);
}

static void test_batch_copy(void **state)
{
    dv_device *d = open_dev(0, 0);
    dv_stream *s;
    assert_int_equal(dv_stream_create(d, &s, NULL), PA_OK);
    enum { N = 100, CAP = 1 << 20 };
    unsigned char *src, *dst, *dev;
    assert_int_equal(dv_host_alloc(d, CAP, (void **)&src, NULL), PA_OK);
    assert_int_equal(dv_host_alloc(d, CAP, (void **)&dst, NULL), PA_OK);
    assert_int_equal(dv_alloc(d, CAP, (void **)&dev, NULL), PA_OK);
    pattern(src, CAP, 5);
    memset(dst, 0, CAP);
    /* N disjoint ranges of odd sizes at odd places, gathered in reverse order. */
    void *dsts[N], *back_dsts[N];
    const void *srcs[N], *back_srcs[N];
    size_t sizes[N], at = 0, dev_at = CAP - 1;
    for (int i = 0; i < N; i++) {
        sizes[i] = (size_t)(i * 97 % 4099) + (i % 3);
        srcs[i] = src + at;
        dev_at -= sizes[i] + 1;
        dsts[i] = dev + dev_at;
        back_srcs[i] = dev + dev_at;
        back_dsts[i] = dst + at;
        at += sizes[i] + 3;
    }
    int64_t ops0 = pa_counter_get(PA_CTR_COPY_OPS), h2d0 = pa_counter_get(PA_CTR_BYTES_H2D);
    assert_int_equal(dv_copy_batch_async(s, N, dsts, srcs, sizes, DV_COPY_H2D, NULL), PA_OK);
    memset(dsts, 0, sizeof dsts);   /* the arrays may be reused at once */
    assert_int_equal(dv_copy_batch_async(s, N, back_dsts, back_srcs, sizes, DV_COPY_D2H, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(s, NULL), PA_OK);
    size_t total = 0;
    for (int i = 0; i < N; i++) {
        assert_memory_equal(back_dsts[i], srcs[i], sizes[i]);
        total += sizes[i];
    }
    assert_int_equal(pa_counter_get(PA_CTR_COPY_OPS) - ops0, 2);   /* one operation each */
    assert_int_equal(pa_counter_get(PA_CTR_BYTES_H2D) - h2d0, (int64_t)total);
    assert_int_equal(dv_copy_batch_async(s, 0, NULL, NULL, NULL, DV_COPY_H2D, NULL), PA_OK);
    dv_host_free(d, src);
    dv_host_free(d, dst);
    dv_free(d, dev);
    dv_stream_destroy(s);
    dv_close(d);
}

/* ------------------------------------------------------------- memory */

static void test_memory_limit(void **state)
{
    dv_device *d = open_dev(4 << 20, 0);
    pa_mempool_stats st;
    dv_memory_stats(d, &st, NULL);
    assert_int_equal(st.limit, 4 << 20);
    void *a, *b, *c = (void *)0x1;
    assert_int_equal(dv_alloc(d, 3 << 20, &a, NULL), PA_OK);
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(dv_alloc(d, 2 << 20, &b, &e), PA_ENOMEM);
    assert_non_null(strstr(e.msg, "out of memory"));
    assert_non_null(strstr(e.msg, dv_name(d)));
    assert_int_equal(dv_alloc(d, 1 << 20, &b, NULL), PA_OK);   /* exactly up to the limit */
    assert_int_equal(dv_alloc(d, 1, &c, NULL), PA_ENOMEM);
    assert_ptr_equal(c, (void *)0x1);
    dv_free(d, a);
    /* The device keeps working after running out. */
    assert_int_equal(dv_alloc(d, 2 << 20, &c, NULL), PA_OK);
    dv_stream *s;
    assert_int_equal(dv_stream_create(d, &s, NULL), PA_OK);
    assert_int_equal(dv_fill_u32_async(s, c, 5, (2 << 20) / 4, NULL), PA_OK);
    uint32_t out = 0;
    assert_int_equal(dv_copy_async(s, &out, (uint32_t *)c + 1000, 4, DV_COPY_D2H, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(s, NULL), PA_OK);
    assert_int_equal(out, 5);
    dv_memory_stats(d, &st, NULL);
    assert_int_equal(st.current, 3 << 20);
    assert_int_equal(st.peak, 4 << 20);
    assert_true(st.n_failed >= 2);
    dv_set_memory_limit(d, 3 << 20);
    assert_int_equal(dv_alloc(d, 1, &a, NULL), PA_ENOMEM);
    dv_free(d, b);
    dv_free(d, c);
    dv_stream_destroy(s);
    pa_err_close(&e);
    dv_close(d);
}

/* ------------------------------------------ growth beside queued frees */

static void sleep_200ms(void *arg)
{
    (void)arg;
    usleep(200 * 1000);
}

typedef struct grow_job {
    dv_device *d;
    size_t size;
    void *ptr;
    int rc;
    int done;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} grow_job;

static void *grow_thread(void *arg)
{
    grow_job *j = arg;
    int rc = dv_alloc(j->d, j->size, &j->ptr, NULL);
    pthread_mutex_lock(&j->mu);
    j->rc = rc;
    j->done = 1;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

/* A device allocation that must reserve a new region while a stream still
 * holds a queued free (a host function that returns the block to the same
 * pool). On a GPU the reservation (cudaMalloc, cudaHostAlloc) may wait for
 * that queued work, and sim's does; a pool that kept its lock across the
 * reservation deadlocked with the free (TPC-H at SF 10 hung now and then on
 * an H100). The allocation runs on a thread with a 30 s watchdog, so a
 * regression fails here instead of hanging the suite. */
static void test_grow_beside_queued_free(void **state)
{
    dv_device *d = open_dev(0, 0);
    pa_mempool_stats st;
    void *a = NULL;
    assert_int_equal(dv_alloc(d, 1 << 20, &a, NULL), PA_OK);
    dv_memory_stats(d, &st, NULL);
    dv_stream *s;
    assert_int_equal(dv_stream_create(d, &s, NULL), PA_OK);
    assert_int_equal(dv_launch_host_fn(s, sleep_200ms, NULL, NULL), PA_OK);
    assert_int_equal(dv_free_async(s, a, NULL), PA_OK);
    grow_job j = {.d = d, .size = (size_t)st.reserved + (1 << 20)};   /* fits no region yet */
    pthread_mutex_init(&j.mu, NULL);
    pthread_cond_init(&j.cv, NULL);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, grow_thread, &j), 0);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    pthread_mutex_lock(&j.mu);
    while (!j.done && pthread_cond_timedwait(&j.cv, &j.mu, &until) == 0)
        ;
    int done = j.done;
    pthread_mutex_unlock(&j.mu);
    if (!done)   /* the thread and the device stay stuck: leave them */
        fail_msg("an allocation that grows the %s pool deadlocked with a queued free", dv_name(d));
    pthread_join(t, NULL);
    assert_int_equal(j.rc, PA_OK);
    assert_int_equal(dv_stream_sync(s, NULL), PA_OK);
    dv_memory_stats(d, &st, NULL);
    assert_int_equal(st.current, j.size);   /* the queued free ran */
    assert_true(st.n_regions >= 2);
    dv_free(d, j.ptr);
    dv_stream_destroy(s);
    pthread_cond_destroy(&j.cv);
    pthread_mutex_destroy(&j.mu);
    dv_close(d);
}

static void test_fault_injection(void **state)
{
    dv_device *d = open_dev(0, 0);
    void *a;
    pa_fault_alloc_after(0);
    assert_int_equal(dv_alloc(d, 64, &a, NULL), PA_ENOMEM);
    assert_int_equal(dv_host_alloc(d, 64, &a, NULL), PA_ENOMEM);
    pa_fault_alloc_clear();
    assert_int_equal(dv_alloc(d, 64, &a, NULL), PA_OK);
    dv_free(d, a);
    dv_close(d);
}

/* ------------------------------------------------------ many threads */

typedef struct thread_arg { dv_device *d; dv_stream *shared; int id; int bad; } thread_arg;

static void *hammer(void *p)
{
    thread_arg *t = p;
    dv_stream *s;
    if (dv_stream_create(t->d, &s, NULL) != PA_OK) {
        t->bad = 1000;
        return NULL;
    }
    enum { W = 1024 };
    uint32_t *dev, *host, *side;
    dv_alloc(t->d, W * 4, (void **)&dev, NULL);
    dv_alloc(t->d, 64, (void **)&side, NULL);   /* touched only by the shared stream */
    dv_host_alloc(t->d, W * 4, (void **)&host, NULL);
    for (int r = 0; r < 200; r++) {
        uint32_t v = (uint32_t)(t->id * 100000 + r);
        dv_fill_u32_async(s, dev, v, W, NULL);
        dv_copy_async(s, host, dev, W * 4, DV_COPY_D2H, NULL);
        dv_stream_sync(s, NULL);
        if (host[0] != v || host[W - 1] != v)
            t->bad++;
        /* Work on a stream shared by all threads: enqueue must be safe. */
        dv_fill_u32_async(t->shared, side, v, 16, NULL);
    }
    dv_stream_sync(t->shared, NULL);
    dv_free(t->d, side);
    dv_free(t->d, dev);
    dv_host_free(t->d, host);
    dv_stream_destroy(s);
    return NULL;
}

static void test_threads(void **state)
{
    dv_device *d = open_dev(0, 0);
    dv_stream *shared;
    assert_int_equal(dv_stream_create(d, &shared, NULL), PA_OK);
    pthread_t th[4];
    thread_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (thread_arg){d, shared, i + 1, 0};
        pthread_create(&th[i], NULL, hammer, &a[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(a[i].bad, 0);
    }
    pa_mempool_stats st, pin;
    dv_memory_stats(d, &st, &pin);
    assert_int_equal(st.current, 0);
    assert_int_equal(pin.current, 0);
    dv_stream_destroy(shared);
    dv_close(d);
}

/* ------------------------------------------- zero copy and counters */

static void test_zero_copy_and_counters(void **state)
{
    dv_device *d = open_dev(0, 0);
    dv_stream *s;
    assert_int_equal(dv_stream_create(d, &s, NULL), PA_OK);
    enum { N = 1 << 16 };
    unsigned char *pin;
    assert_int_equal(dv_host_alloc(d, N, (void **)&pin, NULL), PA_OK);
    pattern(pin, N, 9);
    pa_counters c0, c1, diff;
    pa_counters_snapshot(&c0);
    void *dev, *back;
    assert_int_equal(dv_upload(s, pin, N, &dev, NULL), PA_OK);
    assert_int_equal(dv_download(s, dev, N, &back, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(s, NULL), PA_OK);
    assert_memory_equal(back, pin, N);
    pa_counters_snapshot(&c1);
    pa_counters_diff(&c1, &c0, &diff);
    assert_int_equal(diff.v[PA_CTR_HOST_SYNCS], 1);
    if (dv_host_visible(d)) {
        /* cpu: device memory is host memory, so nothing is copied at all. */
        assert_ptr_equal(dev, pin);
        assert_ptr_equal(back, pin);
        assert_int_equal(diff.v[PA_CTR_BYTES_H2D], 0);
        assert_int_equal(diff.v[PA_CTR_BYTES_D2H], 0);
        assert_int_equal(diff.v[PA_CTR_COPY_OPS], 0);
        assert_int_equal(diff.v[PA_CTR_BYTES_H2D_ELIDED], N);
        assert_int_equal(diff.v[PA_CTR_BYTES_D2H_ELIDED], N);
    } else {
        assert_ptr_not_equal(dev, pin);
        assert_int_equal(diff.v[PA_CTR_BYTES_H2D], N);
        assert_int_equal(diff.v[PA_CTR_BYTES_D2H], N);
        assert_int_equal(diff.v[PA_CTR_COPY_OPS], 2);
    }
    dv_release_download(d, back);
    dv_release_upload(d, dev);

    /* Asynchronous calls never count a sync; each *_sync counts exactly one. */
    void *buf;
    dv_event *e;
    assert_int_equal(dv_alloc(d, 4096, &buf, NULL), PA_OK);
    assert_int_equal(dv_event_create(d, &e, NULL), PA_OK);
    pa_counters_snapshot(&c0);
    assert_int_equal(dv_fill_u32_async(s, buf, 1, 1024, NULL), PA_OK);
    assert_int_equal(dv_event_record(e, s, NULL), PA_OK);
    bool done;
    assert_int_equal(dv_event_query(e, &done, NULL), PA_OK);
    pa_counters_snapshot(&c1);
    pa_counters_diff(&c1, &c0, &diff);
    assert_int_equal(diff.v[PA_CTR_HOST_SYNCS], 0);
    assert_int_equal(diff.v[PA_CTR_KERNELS_LAUNCHED], 1);
    assert_int_equal(dv_event_sync(e, NULL), PA_OK);
    assert_int_equal(pa_counter_get(PA_CTR_HOST_SYNCS) - c1.v[PA_CTR_HOST_SYNCS], 1);
    dv_event_destroy(e);
    dv_free(d, buf);
    dv_host_free(d, pin);
    dv_stream_destroy(s);
    dv_close(d);
}

/* ------------------------------------------------------------ chunks */

static void test_chunks(void **state)
{
    dv_device *d = open_dev(1 << 20, 0);
    dv_chunk *c;
    assert_int_equal(dv_chunk_create(d, 2, &c, NULL), PA_OK);
    assert_int_equal(c->n_columns, 2);
    assert_int_equal(c->columns[1].length, 0);
    void *a, *b;
    assert_int_equal(dv_chunk_alloc(c, 1000, &a, NULL), PA_OK);
    for (int i = 0; i < 20; i++)   /* grows its buffer list */
        assert_int_equal(dv_chunk_alloc(c, 256, &b, NULL), PA_OK);
    assert_int_equal(dv_chunk_bytes(c), 1024 + 20 * 256);
    pa_mempool_stats st;
    dv_memory_stats(d, &st, NULL);
    assert_int_equal(st.current, 1024 + 20 * 256);
    assert_int_equal(dv_chunk_alloc(c, 2 << 20, &b, NULL), PA_ENOMEM);   /* the limit holds */
    dv_chunk_destroy(c);
    dv_memory_stats(d, &st, NULL);
    assert_int_equal(st.current, 0);   /* one call frees every buffer */
    dv_chunk_destroy(NULL);

    /* A view chunk keeps the chunk it views alive; references count. */
    dv_chunk *base, *view;
    assert_int_equal(dv_chunk_create(d, 1, &base, NULL), PA_OK);
    assert_int_equal(dv_chunk_alloc(base, 4096, &a, NULL), PA_OK);
    assert_int_equal(dv_chunk_create(d, 1, &view, NULL), PA_OK);
    assert_int_equal(dv_chunk_depend(view, base, NULL), PA_OK);
    view->columns[0] = base->columns[0];
    dv_chunk_destroy(base);              /* still viewed: nothing freed */
    dv_memory_stats(d, &st, NULL);
    assert_int_equal(st.current, 4096);
    dv_chunk_retain(view);
    dv_chunk_destroy(view);
    dv_memory_stats(d, &st, NULL);
    assert_int_equal(st.current, 4096);
    dv_chunk_destroy(view);              /* last reference: both go */
    dv_memory_stats(d, &st, NULL);
    assert_int_equal(st.current, 0);
    dv_close(d);
}

/* ---------------------------------------------------------- selection */

static void test_selection(void **state)
{
    pa_err e;
    pa_err_init(&e);
    dv_device *d;
    dv_options o = {.spec = "tpu"};
    assert_int_equal(dv_open(&o, &d, &e), PA_EINVAL);
    assert_non_null(strstr(e.msg, "unknown device 'tpu'"));
    pa_err_clear(&e);
    o.spec = "cuda:x";
    assert_int_equal(dv_open(&o, &d, &e), PA_EINVAL);
    pa_err_clear(&e);

    o.spec = "cpu";
    assert_int_equal(dv_open(&o, &d, &e), PA_OK);
    assert_string_equal(dv_name(d), "cpu");
    assert_string_equal(dv_selection(d), "requested cpu");
    dv_close(d);

    /* auto never fails quietly: it names what it chose and why. */
    o.spec = "auto";
    assert_int_equal(dv_open(&o, &d, &e), PA_OK);
    assert_non_null(strstr(dv_selection(d), "auto: chose"));
    int auto_is_cuda = dv_kind_of(d) == DV_KIND_CUDA;
    if (!auto_is_cuda)
        assert_non_null(strstr(dv_selection(d), "no usable CUDA device"));
    dv_close(d);

    /* An explicit cuda that cannot start is an error, never a fallback. */
    o.spec = "cuda";
    int rc = dv_open(&o, &d, &e);
    if (auto_is_cuda) {
        assert_int_equal(rc, PA_OK);
        dv_close(d);
    } else {
        assert_int_equal(rc, PA_EDEVICE);
        assert_true(strlen(e.msg) > 10);
    }
    pa_err_clear(&e);
    o.spec = "cuda:999";
    assert_int_equal(dv_open(&o, &d, &e), PA_EDEVICE);

    dv_info infos[8];
    int n = 0;
    char note[256];
    assert_int_equal(dv_enumerate(infos, 8, &n, note, sizeof note), PA_OK);
    assert_true(n >= 1);
    assert_string_equal(infos[0].name, "cpu");
    assert_true(infos[0].memory > 0);
    pa_err_close(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_order),      cmocka_unit_test(test_cross_stream_events),
        cmocka_unit_test(test_events_few_threads), cmocka_unit_test(test_odd_copies),
        cmocka_unit_test(test_batch_copy),        cmocka_unit_test(test_memory_limit),
        cmocka_unit_test(test_fault_injection),   cmocka_unit_test(test_threads),
        cmocka_unit_test(test_zero_copy_and_counters), cmocka_unit_test(test_chunks),
        cmocka_unit_test(test_selection),         cmocka_unit_test(test_grow_beside_queued_free),
        cmocka_unit_test(test_fault_crosses_wait),
    };
    return cmocka_run_group_tests_name(spec(), tests, NULL, NULL);
}
