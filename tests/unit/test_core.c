/*
 * test_core.c - status codes, the first-error context, logging sink, host
 * allocation accounting and fault injection, size parsing, counters and the
 * thread pool.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"

static void test_status_names(void **state)
{
    assert_int_equal(PA_OK, 0);
    assert_true(PA_ENOMEM < 0 && PA_EINVAL < 0);
    assert_string_equal(pa_status_name(PA_OK), "PA_OK");
    assert_string_equal(pa_status_name(PA_ENOMEM), "PA_ENOMEM");
    assert_string_equal(pa_status_message(PA_ENOMEM), "out of memory");
    assert_string_equal(pa_status_name(PA_EINTERNAL), "PA_EINTERNAL");
    assert_string_equal(pa_status_name(12345), "PA_UNKNOWN");
    assert_string_equal(pa_status_name(-999), "PA_UNKNOWN");
    /* Every code has a distinct name. */
    for (int a = 0; a < PA__STATUS_COUNT; a++)
        for (int b = a + 1; b < PA__STATUS_COUNT; b++)
            assert_string_not_equal(pa_status_name(-a), pa_status_name(-b));
}

static void test_first_error_wins(void **state)
{
    pa_err e;
    pa_err_init(&e);
    assert_false(pa_err_failed(&e));
    int rc = pa_error(&e, PA_EIO, "reading %s: %s", "x.parquet", "boom");
    assert_int_equal(rc, PA_EIO);
    assert_int_equal(pa_error(&e, PA_ENOMEM, "second"), PA_ENOMEM);
    assert_int_equal(e.code, PA_EIO);
    assert_string_equal(e.msg, "reading x.parquet: boom");
    assert_int_equal(e.n_errors, 2);
    assert_non_null(strstr(e.file, "test_core.c"));
    assert_true(e.line > 0);
    pa_err_clear(&e);
    assert_int_equal(e.code, PA_OK);
    assert_int_equal(pa_error(&e, PA_OK, "bad"), PA_EINTERNAL);   /* OK is never an error */
    assert_int_equal(pa_error(NULL, PA_EIO, "nowhere"), PA_EIO);   /* NULL context is allowed */

    pa_err dst;
    pa_err_init(&dst);
    assert_int_equal(pa_err_propagate(&dst, &e), PA_EINTERNAL);
    assert_string_equal(dst.msg, "bad");
    pa_err_close(&dst);
    pa_err_close(&e);
}

typedef struct race { pa_err *e; int code; } race;
static void *race_thread(void *p)
{
    race *r = p;
    for (int i = 0; i < 1000; i++)
        pa_error(r->e, r->code, "thread %d", r->code);
    return NULL;
}

static void test_error_threads(void **state)
{
    pa_err e;
    pa_err_init(&e);
    pthread_t t[4];
    race r[4];
    for (int i = 0; i < 4; i++) {
        r[i] = (race){&e, -(i + 1)};
        pthread_create(&t[i], NULL, race_thread, &r[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(e.n_errors, 4000);
    char want[32];
    snprintf(want, sizeof want, "thread %d", e.code);   /* message matches the winning code */
    assert_string_equal(e.msg, want);
    pa_err_close(&e);
}

static char last_log[256];
static int log_calls;
static void sink(void *user, pa_log_level level, const char *msg)
{
    snprintf(last_log, sizeof last_log, "%s:%s:%s", (const char *)user, pa_log_level_name(level), msg);
    log_calls++;
}

static void test_logging(void **state)
{
    pa_log(PA_LOG_ERROR, "dropped %d", 1);   /* no sink: nothing happens */
    pa_log_set_sink(sink, "u", PA_LOG_INFO);
    pa_log(PA_LOG_DEBUG, "below the level");
    assert_int_equal(log_calls, 0);
    pa_log(PA_LOG_WARN, "disk %s", "slow");
    assert_int_equal(log_calls, 1);
    assert_string_equal(last_log, "u:warning:disk slow");
    pa_log_set_sink(NULL, NULL, PA_LOG_INFO);
    pa_log(PA_LOG_ERROR, "gone");
    assert_int_equal(log_calls, 1);
}

static void test_host_alloc(void **state)
{
    pa_mem_stats a, b;
    pa_host_mem_stats(&a);
    char *p = pa_malloc(1000);
    assert_non_null(p);
    memset(p, 7, 1000);
    pa_host_mem_stats(&b);
    assert_int_equal(b.current - a.current, 1000);
    p = pa_realloc(p, 5000);
    assert_non_null(p);
    assert_int_equal(p[999], 7);
    pa_host_mem_stats(&b);
    assert_int_equal(b.current - a.current, 5000);
    assert_true(b.peak >= b.current);
    pa_free(p);
    pa_host_mem_stats(&b);
    assert_int_equal(b.current, a.current);

    void *z = pa_malloc(0), *z2 = pa_malloc(0);
    assert_non_null(z);
    assert_ptr_not_equal(z, z2);
    pa_free(z);
    pa_free(z2);
    pa_free(NULL);
    assert_null(pa_calloc(SIZE_MAX / 2, 4));   /* overflow is refused, not wrapped */

    /* Fault injection: two allocations succeed, then all fail until cleared. */
    pa_fault_alloc_after(2);
    void *x = pa_malloc(8), *y = pa_malloc(8);
    assert_non_null(x);
    assert_non_null(y);
    assert_null(pa_malloc(8));
    assert_null(pa_strdup("abc"));
    char *keep = x;
    assert_null(pa_realloc(keep, 64));   /* failed realloc leaves the block alone */
    pa_fault_alloc_clear();
    char *s = pa_strdup("abc");
    assert_string_equal(s, "abc");
    pa_free(s);
    pa_free(x);
    pa_free(y);
}

static void test_parse_size(void **state)
{
    uint64_t v;
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(pa_parse_size("1048576", &v, &e), PA_OK);
    assert_int_equal(v, 1048576);
    assert_int_equal(pa_parse_size("512K", &v, &e), PA_OK);
    assert_int_equal(v, 512 * 1024);
    assert_int_equal(pa_parse_size("64MiB", &v, &e), PA_OK);
    assert_int_equal(v, 64ull << 20);
    assert_int_equal(pa_parse_size("1.5GB", &v, &e), PA_OK);
    assert_int_equal(v, 3ull << 29);
    assert_int_equal(pa_parse_size(" 2 t ", &v, &e), PA_OK);
    assert_int_equal(v, 2ull << 40);
    assert_int_equal(pa_parse_size("12Q", &v, &e), PA_EINVAL);
    assert_non_null(strstr(e.msg, "unit"));
    pa_err_clear(&e);
    assert_int_equal(pa_parse_size("-5M", &v, &e), PA_EINVAL);
    assert_int_equal(pa_parse_size("", &v, NULL), PA_EINVAL);
    assert_int_equal(pa_parse_size("lots", &v, NULL), PA_EINVAL);
    assert_int_equal(pa_parse_size("1e30T", &v, NULL), PA_EINVAL);
    char buf[32];
    assert_string_equal(pa_format_size(3ull << 29, buf, sizeof buf), "1.50 GiB");
    assert_string_equal(pa_format_size(17, buf, sizeof buf), "17 B");

    setenv("PISTA_MEMORY_LIMIT", "3M", 1);
    assert_int_equal(pa_memory_limit_from_env(&v, NULL), PA_OK);
    assert_int_equal(v, 3ull << 20);
    setenv("PISTA_MEMORY_LIMIT", "huge", 1);
    pa_err_clear(&e);
    assert_int_equal(pa_memory_limit_from_env(&v, &e), PA_EINVAL);
    assert_non_null(strstr(e.msg, "PISTA_MEMORY_LIMIT"));
    /* Nonsense sizes are refused, naming what is wrong. */
    const char *bad[] = {"0", "1K", "1000000T"}, *why[] = {"0 bytes", "smallest", "machine's memory"};
    for (int k = 0; k < 3; k++) {
        setenv("PISTA_MEMORY_LIMIT", bad[k], 1);
        pa_err_clear(&e);
        assert_int_equal(pa_memory_limit_from_env(&v, &e), PA_EINVAL);
        assert_non_null(strstr(e.msg, why[k]));
    }
    assert_int_equal(pa_memory_limit_check(PA_MEMORY_LIMIT_MIN, NULL), PA_OK);
    assert_int_equal(pa_memory_limit_check(PA_MEMORY_LIMIT_MIN - 1, NULL), PA_EINVAL);
    unsetenv("PISTA_MEMORY_LIMIT");
    assert_int_equal(pa_memory_limit_from_env(&v, NULL), PA_OK);
    assert_int_equal(v, 0);
    pa_err_close(&e);
}

static void test_counters(void **state)
{
    pa_counters a, b, d;
    pa_counters_snapshot(&a);
    pa_counter_add(PA_CTR_BYTES_READ, 4096);
    pa_counter_add(PA_CTR_HOST_SYNCS, 2);
    pa_counters_snapshot(&b);
    pa_counters_diff(&b, &a, &d);
    assert_int_equal(d.v[PA_CTR_BYTES_READ], 4096);
    assert_int_equal(d.v[PA_CTR_HOST_SYNCS], 2);
    assert_int_equal(d.v[PA_CTR_BYTES_SENT], 0);
    assert_string_equal(pa_counter_name(PA_CTR_BYTES_READ), "bytes_read");
    assert_string_equal(pa_counter_name(PA_CTR_KERNELS_LAUNCHED), "kernels_launched");
    assert_null(pa_counter_name(PA_CTR__COUNT));
    assert_non_null(pa_counter_desc(PA_CTR_BYTES_H2D));
    uint64_t t0 = pa_now_ns(), t1 = pa_now_ns();
    assert_true(t1 >= t0);
}

typedef struct tp_state { pa_threadpool *tp; int hits; int spawned; } tp_state;
static void bump(void *p) { __atomic_add_fetch(&((tp_state *)p)->hits, 1, __ATOMIC_RELAXED); }
static void spawn(void *p)
{
    tp_state *s = p;
    /* A task may submit tasks; wait_idle must see them too. */
    if (__atomic_add_fetch(&s->spawned, 1, __ATOMIC_RELAXED) <= 100)
        pa_threadpool_submit(s->tp, spawn, s);
    bump(s);
}

static void test_threadpool(void **state)
{
    tp_state s = {0};
    assert_int_equal(pa_threadpool_create(3, &s.tp, NULL), PA_OK);
    assert_int_equal(pa_threadpool_size(s.tp), 3);
    for (int i = 0; i < 10000; i++)
        assert_int_equal(pa_threadpool_submit(s.tp, bump, &s), PA_OK);
    pa_threadpool_wait_idle(s.tp);
    assert_int_equal(s.hits, 10000);
    s.hits = 0;
    pa_threadpool_submit(s.tp, spawn, &s);
    pa_threadpool_wait_idle(s.tp);
    assert_int_equal(s.hits, 101);
    /* Destroy drains queued work. */
    s.hits = 0;
    for (int i = 0; i < 500; i++)
        pa_threadpool_submit(s.tp, bump, &s);
    pa_threadpool_destroy(s.tp);
    assert_int_equal(s.hits, 500);
}

static void mark(void *ctx, size_t i) { __atomic_add_fetch(&((int *)ctx)[i], 1, __ATOMIC_RELAXED); }

static void test_parallel_for(void **state)
{
    enum { N = 5000 };
    static int hits[N];
    pa_threadpool *tp;
    assert_int_equal(pa_threadpool_create(3, &tp, NULL), PA_OK);
    pa_parallel_for(tp, N, mark, hits);
    pa_parallel_for(NULL, N, mark, hits);   /* inline */
    pa_parallel_for(tp, 0, mark, hits);
    for (int i = 0; i < N; i++)
        assert_int_equal(hits[i], 2);        /* every index exactly once per call */
    pa_threadpool_destroy(tp);
}

static void test_types(void **state)
{
    char buf[32];
    assert_string_equal(pa_type_name(PA_TYPE_BIGINT), "BIGINT");
    assert_int_equal(pa_type_width(PA_TYPE_DATE), 4);
    assert_int_equal(pa_type_width(PA_TYPE_VARCHAR), 0);
    pa_type t = {PA_TYPE_DECIMAL, 15, 2};
    assert_string_equal(pa_type_format(t, buf, sizeof buf), "DECIMAL(15,2)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_names),   cmocka_unit_test(test_first_error_wins),
        cmocka_unit_test(test_error_threads),  cmocka_unit_test(test_logging),
        cmocka_unit_test(test_host_alloc),     cmocka_unit_test(test_parse_size),
        cmocka_unit_test(test_counters),       cmocka_unit_test(test_threadpool),
        cmocka_unit_test(test_parallel_for), cmocka_unit_test(test_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
