/*
 * test_io.c - the I/O engine against a temporary file of known pseudo-random
 * bytes, on both backends ("pread" and "uring"; when io_uring is unavailable
 * the uring cases say why, check that "auto" chose pread, and skip):
 * random ranges, concurrent submitters, O_DIRECT with odd offsets, lengths
 * and buffers, end of file and missing files, back-pressure from a full
 * completion queue, cancellation and shutdown with requests in flight,
 * allocation failures, the shared engine, and plan-then-read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "io_testutil.h"
#include "storage/storage.h"
#include "storage/io_int.h"   /* test hooks only */

#define KiB 1024u
#define FILE_SIZE (3u * 1024 * 1024 + 12345)   /* not a multiple of 4096 */

static char g_path[256];
static uint8_t *g_data;          /* the file's contents */
static char g_dir[256];

static const char *tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

static int group_setup(void **state)
{
    snprintf(g_path, sizeof g_path, "%s/pista_test_io_XXXXXX", tmpdir());
    snprintf(g_dir, sizeof g_dir, "%s", tmpdir());
    return iot_write_file(g_path, FILE_SIZE, 7, &g_data);
}

static int group_teardown(void **state)
{
    unlink(g_path);
    free(g_data);
    return 0;
}

/* An engine of the backend named by the test's state, or NULL (test skipped)
 * when that is "uring" and io_uring is unavailable here. */
static io_engine *make_engine(void **state, int depth, int threads, size_t max_io, bool direct)
{
    const char *backend = *state;
    io_options o = {.backend = backend, .queue_depth = depth, .threads = threads,
                    .max_io_size = max_io, .direct = direct};
    pa_err err;
    pa_err_init(&err);
    io_engine *e = NULL;
    int rc = io_engine_create(&o, &e, &err);
    if (rc == PA_EUNSUPPORTED && strcmp(backend, "uring") == 0) {
        print_message("io_uring unavailable on this machine: %s\n", err.msg);
        o.backend = "auto";
        assert_int_equal(io_engine_create(&o, &e, NULL), PA_OK);
        print_message("auto chose %s: %s\n", io_engine_backend(e), io_engine_note(e));
        assert_string_equal(io_engine_backend(e), "pread");
        io_engine_destroy(e);
        pa_err_close(&err);
        return NULL;
    }
    if (rc != PA_OK)
        print_error("io_engine_create(%s): %s\n", backend, err.msg);
    assert_int_equal(rc, PA_OK);
    assert_string_equal(io_engine_backend(e), backend);
    pa_err_close(&err);
    return e;
}

static io_file *open_file(io_engine *e, const char *path, int flags)
{
    pa_err err;
    pa_err_init(&err);
    io_file *f = NULL;
    int rc = io_file_open(e, path, flags, &f, &err);
    if (rc != PA_OK)
        print_error("io_file_open(%s): %s\n", path, err.msg);
    assert_int_equal(rc, PA_OK);
    pa_err_close(&err);
    return f;
}

static void wait_until(volatile int *counter, int target)
{
    uint64_t t0 = pa_now_ns();
    while (__atomic_load_n(counter, __ATOMIC_ACQUIRE) < target) {
        assert_true(pa_now_ns() - t0 < 20ull * 1000000000ull);
        usleep(1000);
    }
}

/* ------------------------------------------------------------ random ranges */

static void test_random_ranges(void **state)
{
    io_engine *e = make_engine(state, 16, 4, 64 * KiB, false);
    if (!e)
        skip();
    io_file *f = open_file(e, g_path, IO_OPEN_DEFAULT);
    assert_int_equal(io_file_size(f), FILE_SIZE);
    assert_false(io_file_direct(f));

    enum { N = 400 };
    io_request *reqs = calloc(N, sizeof *reqs);
    uint8_t **bufs = calloc(N, sizeof *bufs);
    bool *seen = calloc(N, sizeof *seen);
    pa_queue *q;
    assert_int_equal(pa_queue_create(8, &q, NULL), PA_OK);   /* far fewer than N */
    pa_counters before, after, diff;
    pa_counters_snapshot(&before);
    uint64_t seed = 99, total = 0;
    for (int i = 0; i < N; i++) {
        uint64_t off = iot_rng(&seed) % FILE_SIZE;
        size_t len = (size_t)(iot_rng(&seed) % (300 * KiB));
        if (i % 10 == 0)
            len = (size_t)(iot_rng(&seed) % 100);   /* some tiny ones, some empty */
        if (off + len > FILE_SIZE)
            len = (size_t)(FILE_SIZE - off);
        bufs[i] = malloc(len + 1);
        /* odd destination addresses */
        io_request_init(&reqs[i], f, off, len, bufs[i] + (i & 1));
        reqs[i].queue = q;
        reqs[i].user = (void *)(intptr_t)i;
        total += len;
        assert_int_equal(io_submit(e, &reqs[i]), PA_OK);
    }
    for (int k = 0; k < N; k++) {
        void *item;
        assert_int_equal(pa_queue_pop(q, &item, PA_WAIT_FOREVER), PA_OK);
        io_request *r = item;
        int i = (int)(intptr_t)r->user;
        assert_ptr_equal(r, &reqs[i]);
        assert_false(seen[i]);
        seen[i] = true;
        assert_int_equal(r->status, PA_OK);
        assert_memory_equal(r->buf, g_data + r->offset, r->length);
    }
    pa_counters_snapshot(&after);
    pa_counters_diff(&after, &before, &diff);
    assert_int_equal(diff.v[PA_CTR_BYTES_READ], total);
    assert_int_equal(diff.v[PA_CTR_READ_REQUESTS], N);
    io_stats st;
    io_engine_stats(e, &st);
    assert_int_equal(st.requests, N);
    assert_int_equal(st.bytes, total);
    assert_int_equal(st.errors, 0);
    assert_true(st.reads >= total / (64 * KiB));
    assert_true(st.max_in_flight <= 16);
    assert_true(st.busy_ns > 0);
    assert_true(st.latency_ns > 0);
    print_message("%s: %d requests, %llu bytes, %llu reads, busy %.1f ms, mean latency %.2f ms\n",
                  io_engine_backend(e), N, (unsigned long long)st.bytes, (unsigned long long)st.reads,
                  st.busy_ns / 1e6, st.latency_ns / 1e6 / N);

    for (int i = 0; i < N; i++)
        free(bufs[i]);
    free(bufs);
    free(reqs);
    free(seen);
    pa_queue_destroy(q);
    io_file_close(f);
    io_engine_destroy(e);
}

/* --------------------------------------------------- concurrent submitters */

typedef struct submitter {
    io_engine *e;
    io_file *expect_file;
    int id;
    int *done_count;
} submitter;

static void count_done(io_request *r) { __atomic_fetch_add((int *)r->user, 1, __ATOMIC_RELAXED); }

static void *submitter_main(void *arg)
{
    submitter *s = arg;
    io_file *f = NULL;
    if (io_file_open(s->e, g_path, IO_OPEN_DEFAULT, &f, NULL) != PA_OK || f != s->expect_file)
        return "file registry did not share the handle";
    uint64_t seed = 1000 + (uint64_t)s->id;
    enum { BATCH = 20, ROUNDS = 10 };
    io_request reqs[BATCH];
    uint8_t *bufs[BATCH];
    pa_queue *q = NULL;
    if (s->id % 2 && pa_queue_create(4, &q, NULL) != PA_OK)
        return "queue";
    const char *fail = NULL;
    for (int round = 0; round < ROUNDS && !fail; round++) {
        for (int i = 0; i < BATCH; i++) {
            uint64_t off = iot_rng(&seed) % FILE_SIZE;
            size_t len = (size_t)(iot_rng(&seed) % (200 * KiB));
            if (off + len > FILE_SIZE)
                len = (size_t)(FILE_SIZE - off);
            bufs[i] = malloc(len ? len : 1);
            io_request_init(&reqs[i], f, off, len, bufs[i]);
            reqs[i].done = count_done;
            reqs[i].user = s->done_count;
            reqs[i].tag = s;
        }
        if (q) {   /* odd threads: own completion queue */
            for (int i = 0; i < BATCH; i++) {
                reqs[i].queue = q;
                if (io_submit(s->e, &reqs[i]) != PA_OK)
                    fail = "submit";
            }
            for (int i = 0; i < BATCH && !fail; i++) {
                void *item;
                pa_queue_pop(q, &item, PA_WAIT_FOREVER);
            }
        } else if (io_read_all(s->e, reqs, BATCH, NULL) != PA_OK) {
            fail = "io_read_all";
        }
        for (int i = 0; i < BATCH; i++) {
            if (!fail && (reqs[i].status != PA_OK ||
                          memcmp(bufs[i], g_data + reqs[i].offset, reqs[i].length) != 0))
                fail = "wrong bytes";
            free(bufs[i]);
        }
    }
    pa_queue_destroy(q);
    io_file_close(f);
    return (void *)fail;
}

static void test_concurrent_submitters(void **state)
{
    io_engine *e = make_engine(state, 32, 6, 32 * KiB, false);
    if (!e)
        skip();
    io_file *f = open_file(e, g_path, IO_OPEN_DEFAULT);
    enum { T = 6 };
    pthread_t th[T];
    submitter sub[T];
    int done_count = 0;
    for (int i = 0; i < T; i++) {
        sub[i] = (submitter){.e = e, .expect_file = f, .id = i, .done_count = &done_count};
        assert_int_equal(pthread_create(&th[i], NULL, submitter_main, &sub[i]), 0);
    }
    for (int i = 0; i < T; i++) {
        void *res;
        pthread_join(th[i], &res);
        if (res)
            print_error("submitter %d: %s\n", i, (const char *)res);
        assert_null(res);
    }
    assert_int_equal(done_count, T * 200);
    io_stats st;
    io_engine_stats(e, &st);
    assert_int_equal(st.requests, T * 200);
    assert_int_equal(st.errors, 0);
    io_file_close(f);
    io_engine_destroy(e);
}

/* --------------------------------------------------------------- O_DIRECT */

static void test_direct_odd(void **state)
{
    io_engine *e = make_engine(state, 8, 4, 64 * KiB, true);
    if (!e)
        skip();
    io_file *f = open_file(e, g_path, IO_OPEN_DEFAULT);
    bool direct = io_file_direct(f);
    if (!direct)
        print_message("O_DIRECT not in use on %s: %s\n", g_dir, io_file_note(f));
    uint8_t *raw = malloc(FILE_SIZE + 2 * IO_DIRECT_ALIGN);
    uint8_t *al = (uint8_t *)(((uintptr_t)raw + IO_DIRECT_ALIGN - 1) & ~(uintptr_t)(IO_DIRECT_ALIGN - 1));
    pa_err err;
    pa_err_init(&err);

    /* Aligned offset, length and buffer: straight into the caller's memory. */
    struct { uint64_t off; size_t len; } aligned[] = {{0, 4096}, {8192, 131072}, {1 << 20, 1 << 20}};
    for (size_t i = 0; i < 3; i++) {
        memset(al, 0, aligned[i].len);
        assert_int_equal(io_read(e, f, aligned[i].off, aligned[i].len, al, &err), PA_OK);
        assert_memory_equal(al, g_data + aligned[i].off, aligned[i].len);
    }
    io_stats st;
    io_engine_stats(e, &st);
    assert_int_equal(st.bounce_bytes, 0);

    /* Odd offsets, lengths, buffers, pieces across the 64 KiB split, the tail. */
    struct { uint64_t off; size_t len; size_t shift; } odd[] = {
        {1, 1, 0}, {4095, 2, 0}, {12345, 200000, 3}, {4096, 4096, 1}, {4096, 5000, 0},
        {FILE_SIZE - 1000, 1000, 0}, {FILE_SIZE - 5000, 5000, 0}, {FILE_SIZE - 1, 1, 5},
        {0, FILE_SIZE, 0}, {65535, 65538, 7},
    };
    uint64_t odd_bytes = 0;
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        uint8_t *dst = al + odd[i].shift;
        memset(dst, 0xEE, odd[i].len);
        int rc = io_read(e, f, odd[i].off, odd[i].len, dst, &err);
        if (rc != PA_OK)
            print_error("case %zu: %s\n", i, err.msg);
        assert_int_equal(rc, PA_OK);
        assert_memory_equal(dst, g_data + odd[i].off, odd[i].len);
        odd_bytes += odd[i].len;
    }
    io_engine_stats(e, &st);
    if (direct) {
        assert_true(st.bounce_bytes > 0);
        assert_true(st.bounce_bytes <= odd_bytes);
    } else {
        assert_int_equal(st.bounce_bytes, 0);
    }
    print_message("%s O_DIRECT %s: %llu of %llu odd bytes bounced\n", io_engine_backend(e),
                  direct ? "on" : "off", (unsigned long long)st.bounce_bytes,
                  (unsigned long long)odd_bytes);

    /* The same path opened buffered is a different registry entry. */
    io_file *fb = open_file(e, g_path, IO_OPEN_BUFFERED);
    assert_ptr_not_equal(fb, f);
    assert_false(io_file_direct(fb));
    io_file_close(fb);

    pa_err_close(&err);
    free(raw);
    io_file_close(f);
    io_engine_destroy(e);
}

/* A filesystem that refuses O_DIRECT (tmpfs on older kernels) falls back to
 * buffered reads with a note. Simulated through the test hook. */
static void test_direct_refused(void **state)
{
    io_engine *e = make_engine(state, 8, 2, 0, true);
    if (!e)
        skip();
    io__test_direct_refused = true;
    io_file *f = open_file(e, g_path, IO_OPEN_DIRECT);
    io__test_direct_refused = false;
    assert_false(io_file_direct(f));
    assert_non_null(strstr(io_file_note(f), "O_DIRECT refused"));
    uint8_t buf[777];
    assert_int_equal(io_read(e, f, 333, sizeof buf, buf, NULL), PA_OK);
    assert_memory_equal(buf, g_data + 333, sizeof buf);
    io_file_close(f);
    io_engine_destroy(e);
}

/* ------------------------------------------------------ errors and EOF */

static void test_eof_and_missing(void **state)
{
    io_engine *e = make_engine(state, 4, 2, 0, false);
    if (!e)
        skip();
    pa_err err;
    pa_err_init(&err);
    io_file *f = open_file(e, g_path, IO_OPEN_DEFAULT);
    io_file *fd = open_file(e, g_path, IO_OPEN_DIRECT);
    uint8_t *buf = malloc(16 * KiB);

    /* A read crossing the end of the file: PA_EIO naming path and offsets. */
    char want[64];
    snprintf(want, sizeof want, "end of file at offset %u", FILE_SIZE);
    io_file *files[2] = {f, fd};
    for (int k = 0; k < 2; k++) {
        pa_err_clear(&err);
        assert_int_equal(io_read(e, files[k], FILE_SIZE - 1000, 2000, buf, &err), PA_EIO);
        assert_non_null(strstr(err.msg, g_path));
        assert_non_null(strstr(err.msg, want));
        /* Entirely beyond the end. */
        pa_err_clear(&err);
        assert_int_equal(io_read(e, files[k], FILE_SIZE + 5000, 10, buf, &err), PA_EIO);
        assert_non_null(strstr(err.msg, "end of file"));
    }
    /* Ending exactly at the end is fine; so is an empty read. */
    assert_int_equal(io_read(e, f, FILE_SIZE - 100, 100, buf, &err), PA_OK);
    assert_memory_equal(buf, g_data + FILE_SIZE - 100, 100);
    assert_int_equal(io_read(e, f, 5, 0, buf, &err), PA_OK);
    io_stats st;
    io_engine_stats(e, &st);
    assert_int_equal(st.errors, 4);

    /* Missing file and directory. */
    char missing[300];
    snprintf(missing, sizeof missing, "%s/pista_no_such_file_%d", g_dir, (int)getpid());
    io_file *bad = NULL;
    pa_err_clear(&err);
    assert_int_equal(io_file_open(e, missing, IO_OPEN_DEFAULT, &bad, &err), PA_ENOTFOUND);
    assert_non_null(strstr(err.msg, missing));
    assert_null(bad);
    pa_err_clear(&err);
    assert_int_equal(io_file_open(e, missing, IO_OPEN_DIRECT, &bad, &err), PA_ENOTFOUND);
    pa_err_clear(&err);
    assert_int_equal(io_file_open(e, g_dir, IO_OPEN_DEFAULT, &bad, &err), PA_EINVAL);
    assert_non_null(strstr(err.msg, "not a regular file"));

    /* Malformed requests are refused at submit and never delivered. */
    io_request r;
    io_request_init(&r, NULL, 0, 10, buf);
    assert_int_equal(io_submit(e, &r), PA_EINVAL);
    io_request_init(&r, f, UINT64_MAX - 3, 10, buf);
    assert_int_equal(io_submit(e, &r), PA_EINVAL);

    pa_err_close(&err);
    free(buf);
    io_file_close(fd);
    io_file_close(f);
    io_engine_destroy(e);
}

/* ----------------------------------------------------------- back-pressure */

static void test_backpressure(void **state)
{
    enum { DEPTH = 4, N = 40, CAP = 2 };
    io_engine *e = make_engine(state, DEPTH, 4, 0, false);
    if (!e)
        skip();
    io_file *f = open_file(e, g_path, IO_OPEN_DEFAULT);
    pa_queue *q;
    assert_int_equal(pa_queue_create(CAP, &q, NULL), PA_OK);
    io_request reqs[N];
    static uint8_t bufs[N][4096];
    for (int i = 0; i < N; i++) {
        io_request_init(&reqs[i], f, (uint64_t)i * 50000, sizeof bufs[i], bufs[i]);
        reqs[i].queue = q;
        assert_int_equal(io_submit(e, &reqs[i]), PA_OK);
    }
    /* Nobody pops: the queue fills, then the engine stops completing. */
    uint64_t t0 = pa_now_ns();
    while (pa_queue_length(q) < CAP) {
        assert_true(pa_now_ns() - t0 < 20ull * 1000000000ull);
        usleep(1000);
    }
    usleep(200 * 1000);
    assert_int_equal(pa_queue_length(q), CAP);
    io_stats st;
    io_engine_stats(e, &st);
    print_message("%s: %llu of %d requests completed while the queue was full\n",
                  io_engine_backend(e), (unsigned long long)st.requests, N);
    assert_true(st.requests <= CAP + DEPTH);
    assert_true(st.max_in_flight <= DEPTH);
    /* Drain slowly at first: every request arrives exactly once, intact. */
    bool seen[N] = {false};
    for (int k = 0; k < N; k++) {
        void *item;
        assert_int_equal(pa_queue_pop(q, &item, 10ull * 1000000000ull), PA_OK);
        io_request *r = item;
        int i = (int)(r - reqs);
        assert_true(i >= 0 && i < N);
        assert_false(seen[i]);
        seen[i] = true;
        assert_int_equal(r->status, PA_OK);
        assert_memory_equal(r->buf, g_data + r->offset, r->length);
        if (k < 4)
            usleep(20 * 1000);
    }
    assert_int_equal(pa_queue_length(q), 0);
    pa_queue_destroy(q);
    io_file_close(f);
    io_engine_destroy(e);
}

/* ------------------------------------------------ cancellation, shutdown */

typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool open;
    int entered;
} gate;
static gate g_gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0};
static int g_delivered, g_ok, g_canceled;

static void gate_reset(void)
{
    g_gate.open = false;
    g_gate.entered = 0;
    g_delivered = g_ok = g_canceled = 0;
}

static void gate_open(void)
{
    pthread_mutex_lock(&g_gate.mu);
    g_gate.open = true;
    pthread_cond_broadcast(&g_gate.cv);
    pthread_mutex_unlock(&g_gate.mu);
}

/* Tally a delivery; the request with user == &g_gate blocks until the gate
 * opens, which holds the engine's only slot. */
static void tally(io_request *r)
{
    if (r->user == &g_gate) {
        pthread_mutex_lock(&g_gate.mu);
        g_gate.entered = 1;
        while (!g_gate.open)
            pthread_cond_wait(&g_gate.cv, &g_gate.mu);
        pthread_mutex_unlock(&g_gate.mu);
    }
    if (r->status == PA_OK && memcmp(r->buf, g_data + r->offset, r->length) == 0)
        __atomic_fetch_add(&g_ok, 1, __ATOMIC_RELAXED);
    if (r->status == PA_ECANCELED)
        __atomic_fetch_add(&g_canceled, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&g_delivered, 1, __ATOMIC_RELEASE);
}

static void wait_gate_entered(void)
{
    uint64_t t0 = pa_now_ns();
    for (;;) {
        pthread_mutex_lock(&g_gate.mu);
        int in = g_gate.entered;
        pthread_mutex_unlock(&g_gate.mu);
        if (in)
            return;
        assert_true(pa_now_ns() - t0 < 10ull * 1000000000ull);
        usleep(1000);
    }
}

static void test_cancel_tag(void **state)
{
    enum { NA = 200, NB = 20 };
    io_engine *e = make_engine(state, 1, 1, 0, false);
    if (!e)
        skip();
    gate_reset();
    io_file *f = open_file(e, g_path, IO_OPEN_DEFAULT);
    static io_request reqs[NA + NB];
    static uint8_t bufs[NA + NB][1000];
    int tag_a, tag_b;
    for (int i = 0; i < NA + NB; i++) {
        io_request_init(&reqs[i], f, (uint64_t)i * 1000, 1000, bufs[i]);
        reqs[i].done = tally;
        reqs[i].tag = i < NA ? (void *)&tag_a : (void *)&tag_b;
        reqs[i].user = i == 0 ? &g_gate : NULL;
        assert_int_equal(io_submit(e, &reqs[i]), PA_OK);
        if (i == 0)
            wait_gate_entered();   /* request 0 now holds the engine's one slot */
    }
    size_t n = io_cancel_tag(e, &tag_a);
    assert_int_equal(n, NA - 1);
    assert_int_equal(g_canceled, NA - 1);   /* delivered by io_cancel_tag itself */
    assert_int_equal(io_cancel_tag(e, &tag_a), 0);
    gate_open();
    wait_until(&g_delivered, NA + NB);
    assert_int_equal(g_ok, 1 + NB);
    for (int i = 1; i < NA; i++)
        assert_int_equal(reqs[i].status, PA_ECANCELED);
    for (int i = NA; i < NA + NB; i++)
        assert_int_equal(reqs[i].status, PA_OK);
    io_stats st;
    io_engine_stats(e, &st);
    assert_int_equal(st.canceled, NA - 1);
    assert_int_equal(st.requests, NA + NB);
    io_file_close(f);
    io_engine_destroy(e);
}

static void *open_gate_later(void *arg)
{
    usleep(100 * 1000);
    gate_open();
    return NULL;
}

/* Destroy with one request running (held at the gate), 50 waiting, and a
 * second engine whose completion queue is full and closed: nothing hangs,
 * every request submitted is delivered exactly once. */
static void test_destroy_in_flight(void **state)
{
    enum { N = 51 };
    io_engine *e = make_engine(state, 1, 1, 0, false);
    if (!e)
        skip();
    gate_reset();
    io_file *f = open_file(e, g_path, IO_OPEN_DEFAULT);
    static io_request reqs[N];
    static uint8_t bufs[N][3000];
    for (int i = 0; i < N; i++) {
        io_request_init(&reqs[i], f, (uint64_t)i * 3000, 3000, bufs[i]);
        reqs[i].done = tally;
        reqs[i].user = i == 0 ? &g_gate : NULL;
        assert_int_equal(io_submit(e, &reqs[i]), PA_OK);
        if (i == 0)
            wait_gate_entered();
    }
    pthread_t opener;
    pthread_create(&opener, NULL, open_gate_later, NULL);
    io_engine_destroy(e);   /* cancels 50, waits for request 0 */
    pthread_join(opener, NULL);
    assert_int_equal(g_delivered, N);
    assert_int_equal(g_canceled, N - 1);
    assert_int_equal(g_ok, 1);

    /* Full queue, consumer gone: closing the queue lets destroy finish. */
    e = make_engine(state, 2, 2, 0, false);
    f = open_file(e, g_path, IO_OPEN_DEFAULT);
    pa_queue *q;
    assert_int_equal(pa_queue_create(1, &q, NULL), PA_OK);
    for (int i = 0; i < 10; i++) {
        io_request_init(&reqs[i], f, (uint64_t)i * 3000, 3000, bufs[i]);
        reqs[i].queue = q;
        assert_int_equal(io_submit(e, &reqs[i]), PA_OK);
    }
    usleep(50 * 1000);
    pa_queue_close(q);
    io_engine_destroy(e);
    pa_queue_destroy(q);

    /* An engine destroyed right after creation. */
    e = make_engine(state, 4, 2, 0, false);
    io_engine_destroy(e);
}

/* ------------------------------------------------- allocation failures */

static void test_alloc_failures(void **state)
{
    /* Every allocation of create/open/read/destroy failing in turn: each step
     * reports PA_ENOMEM cleanly and nothing leaks (mem_teardown checks). */
    const char *backend = *state;
    io_engine *probe = make_engine(state, 4, 2, 0, true);
    if (!probe)
        skip();
    io_engine_destroy(probe);
    int ok_at = -1;
    for (int k = 0; k < 64 && ok_at < 0; k++) {
        io_options o = {.backend = backend, .queue_depth = 4, .threads = 2, .direct = true};
        io_engine *e = NULL;
        io_file *f = NULL;
        uint8_t buf[100];
        pa_fault_alloc_after(k);
        int rc = io_engine_create(&o, &e, NULL);
        if (rc == PA_OK)
            rc = io_file_open(e, g_path, IO_OPEN_DEFAULT, &f, NULL);
        if (rc == PA_OK)
            rc = io_read(e, f, 12345, sizeof buf, buf, NULL);   /* unaligned: bounce buffer */
        pa_fault_alloc_clear();
        assert_true(rc == PA_OK || rc == PA_ENOMEM);
        if (rc == PA_OK) {
            assert_memory_equal(buf, g_data + 12345, sizeof buf);
            ok_at = k;
        }
        io_file_close(f);
        io_engine_destroy(e);
    }
    print_message("%s: first success after %d allocations\n", backend, ok_at);
}

/* ------------------------------------------------------ backend choice */

static void test_auto_fallback(void **state)
{
    pa_err err;
    pa_err_init(&err);
    io_engine *e = NULL;
    /* The machine's own answer. */
    assert_int_equal(io_engine_create(NULL, &e, &err), PA_OK);
    print_message("auto on this machine: %s (%s)\n", io_engine_backend(e), io_engine_note(e));
    io_engine_destroy(e);

    /* io_uring refused (as by seccomp in a container): auto says why and
     * uses pread; an explicit "uring" is an error, not a silent fallback. */
    io__test_uring_errno = EPERM;
    io_options o = {.backend = "auto"};
    assert_int_equal(io_engine_create(&o, &e, &err), PA_OK);
    assert_string_equal(io_engine_backend(e), "pread");
    assert_non_null(strstr(io_engine_note(e), "io_uring unavailable"));
    assert_non_null(strstr(io_engine_note(e), strerror(EPERM)));
    uint8_t buf[64];
    io_file *f = open_file(e, g_path, IO_OPEN_DEFAULT);
    assert_int_equal(io_read(e, f, 100, sizeof buf, buf, NULL), PA_OK);
    assert_memory_equal(buf, g_data + 100, sizeof buf);
    io_file_close(f);
    io_engine_destroy(e);
    o.backend = "uring";
    e = NULL;
    assert_int_equal(io_engine_create(&o, &e, &err), PA_EUNSUPPORTED);
    assert_null(e);
    io__test_uring_errno = 0;

    pa_err_clear(&err);
    o.backend = "spdk";
    assert_int_equal(io_engine_create(&o, &e, &err), PA_EINVAL);
    assert_non_null(strstr(err.msg, "spdk"));
    o = (io_options){.max_io_size = 1000};
    assert_int_equal(io_engine_create(&o, &e, &err), PA_EINVAL);
    pa_err_close(&err);
}

static void test_shared_engine(void **state)
{
    setenv("PISTA_IO_BACKEND", "pread", 1);
    setenv("PISTA_IO_THREADS", "3", 1);
    io_engine *a = NULL, *b = NULL;
    assert_int_equal(io_engine_shared(&a, NULL), PA_OK);
    assert_int_equal(io_engine_shared(&b, NULL), PA_OK);
    assert_ptr_equal(a, b);
    assert_string_equal(io_engine_backend(a), "pread");
    io_options o;
    io_engine_get_options(a, &o);
    assert_int_equal(o.threads, 3);
    assert_int_equal(o.queue_depth, 64);
    io_engine_shared_shutdown();
    io_engine_shared_shutdown();   /* twice is harmless */

    setenv("PISTA_IO_DEPTH", "lots", 1);
    pa_err err;
    pa_err_init(&err);
    assert_int_equal(io_engine_shared(&a, &err), PA_EINVAL);
    assert_non_null(strstr(err.msg, "PISTA_IO_DEPTH"));
    pa_err_close(&err);
    unsetenv("PISTA_IO_DEPTH");
    unsetenv("PISTA_IO_BACKEND");
    unsetenv("PISTA_IO_THREADS");
}

/* ------------------------------------------------- plan, then read */

static void test_plan_then_read(void **state)
{
    io_engine *e = make_engine(state, 16, 4, 0, false);
    if (!e)
        skip();
    io_file *f = open_file(e, g_path, IO_OPEN_DEFAULT);
    enum { N = 300 };
    io_range r[N];
    uint64_t seed = 5;
    for (int i = 0; i < N; i++) {
        r[i].offset = iot_rng(&seed) % (FILE_SIZE - 20000);
        r[i].length = iot_rng(&seed) % 20000;
    }
    io_plan p;
    io_plan_options po = {.max_gap = 4096, .max_read = 512 * KiB};
    assert_int_equal(io_plan_ranges(r, N, &po, &p, NULL), PA_OK);
    io_request *reqs = calloc(p.n_reads, sizeof *reqs);
    for (size_t k = 0; k < p.n_reads; k++)
        io_request_init(&reqs[k], f, p.reads[k].offset, p.reads[k].length, malloc(p.reads[k].length + 1));
    assert_int_equal(io_read_all(e, reqs, p.n_reads, NULL), PA_OK);
    for (int i = 0; i < N; i++) {
        const uint8_t *b = reqs[p.range_read[i]].buf;
        assert_memory_equal(b + p.range_pos[i], g_data + r[i].offset, r[i].length);
    }
    print_message("%d ranges, %llu bytes wanted -> %zu reads, %llu bytes\n", N,
                  (unsigned long long)p.bytes_wanted, p.n_reads, (unsigned long long)p.bytes_read);
    assert_true(p.n_reads < N);
    for (size_t k = 0; k < p.n_reads; k++)
        free(reqs[k].buf);
    free(reqs);
    io_plan_free(&p);
    io_file_close(f);
    io_engine_destroy(e);
}

/* Each engine test twice, named after its backend. */
#define BOTH(fn)                                                                                  \
    {#fn "(pread)", fn, iot_mem_setup, iot_mem_teardown, (void *)"pread"},                                \
        {#fn "(uring)", fn, iot_mem_setup, iot_mem_teardown, (void *)"uring"}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_auto_fallback, iot_mem_setup, iot_mem_teardown),
        BOTH(test_random_ranges),
        BOTH(test_concurrent_submitters),
        BOTH(test_direct_odd),
        BOTH(test_direct_refused),
        BOTH(test_eof_and_missing),
        BOTH(test_backpressure),
        BOTH(test_cancel_tag),
        BOTH(test_destroy_in_flight),
        BOTH(test_alloc_failures),
        BOTH(test_plan_then_read),
        cmocka_unit_test_setup_teardown(test_shared_engine, iot_mem_setup, iot_mem_teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
