/*
 * test_mempool.c - the sub-allocating pool: blocks never overlap and keep
 * their contents, freeing coalesces (a full-size block fits again), the limit
 * gives PA_ENOMEM with a message and the pool keeps working, fault injection,
 * growth by regions, and concurrent use. Checked against a simple model.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

typedef struct upstream_log { int allocs, frees; size_t bytes; } upstream_log;

static int up_alloc(void *user, size_t size, void **out, pa_err *err)
{
    upstream_log *l = user;
    if (posix_memalign(out, 4096, size) != 0)
        return pa_error(err, PA_ENOMEM, "posix_memalign(%zu) failed", size);
    l->allocs++;
    l->bytes += size;
    return PA_OK;
}

static void up_free(void *user, void *p, size_t size)
{
    upstream_log *l = user;
    l->frees++;
    l->bytes -= size;
    free(p);
}

static pa_mempool *make(upstream_log *l, uint64_t limit, uint64_t initial, uint64_t grow)
{
    pa_mempool_config cfg = {.name = "test", .limit = limit, .initial_size = initial, .grow_size = grow,
                             .alignment = 256};
    pa_mempool *p = NULL;
    assert_int_equal(pa_mempool_create(&cfg, (pa_upstream){up_alloc, up_free, l}, &p, NULL), PA_OK);
    return p;
}

static void test_basic(void **state)
{
    upstream_log l = {0};
    pa_mempool *p = make(&l, 0, 1 << 20, 1 << 20);
    assert_int_equal(l.allocs, 1);   /* the initial region is reserved once */
    void *a, *b, *c;
    assert_int_equal(pa_mempool_alloc(p, 100, &a, NULL), PA_OK);
    assert_int_equal(pa_mempool_alloc(p, 256, &b, NULL), PA_OK);
    assert_int_equal(pa_mempool_alloc(p, 0, &c, NULL), PA_OK);
    assert_int_equal((uintptr_t)a % 256, 0);
    assert_int_equal((uintptr_t)b % 256, 0);
    assert_int_equal(pa_mempool_block_size(p, a), 256);
    assert_int_equal(pa_mempool_block_size(p, c), 256);
    assert_true(pa_mempool_owns(p, (char *)b + 10));
    int local;
    assert_false(pa_mempool_owns(p, &local));
    assert_int_equal(pa_mempool_free(p, &local), PA_EINVAL);   /* not ours: refused, harmless */
    pa_mempool_stats st;
    pa_mempool_stats_get(p, &st);
    assert_int_equal(st.current, 768);
    assert_int_equal(st.n_allocs, 3);
    assert_int_equal(pa_mempool_free(p, a), PA_OK);
    assert_int_equal(pa_mempool_free(p, a), PA_EINVAL);        /* double free detected */
    assert_int_equal(pa_mempool_free(p, b), PA_OK);
    assert_int_equal(pa_mempool_free(p, c), PA_OK);
    assert_int_equal(pa_mempool_free(p, NULL), PA_OK);
    /* Everything coalesced: the whole region is one block again. */
    void *all;
    assert_int_equal(pa_mempool_alloc(p, 1 << 20, &all, NULL), PA_OK);
    assert_int_equal(l.allocs, 1);
    pa_mempool_stats_get(p, &st);
    assert_int_equal(st.peak, 1 << 20);
    pa_mempool_free(p, all);
    pa_mempool_destroy(p);
    assert_int_equal(l.frees, 1);
    assert_int_equal(l.bytes, 0);
}

/* host_bytes is the host memory the pool's bookkeeping really holds: the
 * allocator's own count moves by exactly as much as it does, through
 * splits, a table that grows past 128 live blocks, new regions and merges. */
static void test_host_bytes(void **state)
{
    (void)state;
    upstream_log l = {0};
    pa_mem_stats h0, h, h00;
    pa_host_mem_stats(&h00);
    pa_mempool *p = make(&l, 0, 0, 64 << 10);
    pa_host_mem_stats(&h0);   /* the pool itself, no region yet */
    pa_mempool_stats st;
    pa_mempool_stats_get(p, &st);
    assert_int_equal(st.host_bytes, 0);
    void *v[600];
    for (int i = 0; i < 600; i++) {
        assert_int_equal(pa_mempool_alloc(p, 256u * (1 + i % 7), &v[i], NULL), PA_OK);
        if (i % 97 == 0) {
            pa_host_mem_stats(&h);
            pa_mempool_stats_get(p, &st);
            assert_int_equal(h.current - h0.current, (int64_t)st.host_bytes);
        }
    }
    assert_true(st.n_regions > 1);
    for (int i = 0; i < 600; i += 2)   /* every other block: no merges yet */
        pa_mempool_free(p, v[i]);
    pa_host_mem_stats(&h);
    pa_mempool_stats_get(p, &st);
    assert_int_equal(h.current - h0.current, (int64_t)st.host_bytes);
    for (int i = 1; i < 600; i += 2)
        pa_mempool_free(p, v[i]);
    pa_host_mem_stats(&h);
    pa_mempool_stats_get(p, &st);
    assert_int_equal(h.current - h0.current, (int64_t)st.host_bytes);
    pa_mempool_destroy(p);
    pa_host_mem_stats(&h);
    assert_int_equal(h.current, h00.current);
}

static void test_limit_then_continue(void **state)
{
    upstream_log l = {0};
    pa_mempool *p = make(&l, 1 << 20, 0, 256 << 10);
    void *blocks[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pa_mempool_alloc(p, 256 << 10, &blocks[i], NULL), PA_OK);
    pa_err e;
    pa_err_init(&e);
    void *x = (void *)0x1;
    assert_int_equal(pa_mempool_alloc(p, 1, &x, &e), PA_ENOMEM);
    assert_ptr_equal(x, (void *)0x1);   /* output untouched on failure */
    assert_non_null(strstr(e.msg, "test pool out of memory"));
    assert_non_null(strstr(e.msg, "limit 1.00 MiB"));
    pa_mempool_stats st;
    pa_mempool_stats_get(p, &st);
    assert_int_equal(st.n_failed, 1);
    /* The pool is healthy: free one block and the same request succeeds. */
    pa_mempool_free(p, blocks[2]);
    assert_int_equal(pa_mempool_alloc(p, 1, &x, NULL), PA_OK);
    pa_mempool_free(p, x);
    /* Raising the limit lets it grow by another region. */
    pa_mempool_set_limit(p, 4 << 20);
    void *big;
    assert_int_equal(pa_mempool_alloc(p, 2 << 20, &big, NULL), PA_OK);
    pa_mempool_stats_get(p, &st);
    assert_true(st.n_regions >= 2);
    pa_mempool_free(p, big);
    for (int i = 0; i < 4; i++)
        if (i != 2)
            pa_mempool_free(p, blocks[i]);
    pa_mempool_stats_get(p, &st);
    assert_int_equal(st.current, 0);
    pa_err_close(&e);
    pa_mempool_destroy(p);
    assert_int_equal(l.bytes, 0);
}

static void test_fault_injection(void **state)
{
    upstream_log l = {0};
    pa_mempool *p = make(&l, 0, 1 << 20, 0);
    void *a, *b;
    pa_fault_alloc_after(1);
    assert_int_equal(pa_mempool_alloc(p, 64, &a, NULL), PA_OK);
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(pa_mempool_alloc(p, 64, &b, &e), PA_ENOMEM);
    assert_non_null(strstr(e.msg, "injected fault"));
    pa_fault_alloc_clear();
    assert_int_equal(pa_mempool_alloc(p, 64, &b, NULL), PA_OK);
    pa_mempool_free(p, a);
    pa_mempool_free(p, b);
    pa_err_close(&e);
    pa_mempool_destroy(p);
}

/* Random allocations and frees against a model: live blocks never overlap
 * and keep the byte pattern written into them. */
static uint64_t rng(uint64_t *s) { *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17; return *s; }

typedef struct live { unsigned char *p; size_t n; unsigned char tag; } live;

static void check_disjoint(live *v, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (v[i].p && v[j].p)
                assert_true(v[i].p + v[i].n <= v[j].p || v[j].p + v[j].n <= v[i].p);
}

static void test_random_against_model(void **state)
{
    upstream_log l = {0};
    pa_mempool *p = make(&l, 8 << 20, 0, 1 << 20);
    enum { N = 48 };
    live v[N] = {{0}};
    uint64_t seed = 0x9e3779b97f4a7c15ull, used = 0;
    for (int round = 0; round < 20000; round++) {
        int k = (int)(rng(&seed) % N);
        if (v[k].p) {
            for (size_t i = 0; i < v[k].n; i += 97)
                assert_int_equal(v[k].p[i], v[k].tag);
            assert_int_equal(pa_mempool_free(p, v[k].p), PA_OK);
            used -= (v[k].n + 255) & ~(size_t)255;
            v[k].p = NULL;
            continue;
        }
        size_t n = 1 + rng(&seed) % (300 << 10);
        void *q;
        int rc = pa_mempool_alloc(p, n, &q, NULL);
        size_t rounded = (n + 255) & ~(size_t)255;
        if (used + rounded > (8u << 20)) {
            assert_int_equal(rc, PA_ENOMEM);   /* exactly the model's verdict */
            continue;
        }
        assert_int_equal(rc, PA_OK);
        v[k] = (live){q, n, (unsigned char)(round & 0xff)};
        memset(q, v[k].tag, n);
        used += rounded;
        if (round % 500 == 0)
            check_disjoint(v, N);
        pa_mempool_stats st;
        pa_mempool_stats_get(p, &st);
        assert_int_equal(st.current, used);
    }
    check_disjoint(v, N);
    for (int k = 0; k < N; k++)
        pa_mempool_free(p, v[k].p);
    pa_mempool_stats st;
    pa_mempool_stats_get(p, &st);
    assert_int_equal(st.current, 0);
    pa_mempool_destroy(p);
    assert_int_equal(l.bytes, 0);
}

typedef struct worker_arg { pa_mempool *p; int failures; uint64_t seed; } worker_arg;
static void *worker(void *a)
{
    worker_arg *w = a;
    void *mine[16] = {0};
    for (int i = 0; i < 20000; i++) {
        int k = (int)(rng(&w->seed) % 16);
        if (mine[k]) {
            if (*(uint64_t *)mine[k] != (uint64_t)(uintptr_t)mine[k])
                w->failures++;
            pa_mempool_free(w->p, mine[k]);
            mine[k] = NULL;
        } else if (pa_mempool_alloc(w->p, 8 + rng(&w->seed) % 4096, &mine[k], NULL) == PA_OK) {
            *(uint64_t *)mine[k] = (uint64_t)(uintptr_t)mine[k];
        } else {
            mine[k] = NULL;
        }
    }
    for (int k = 0; k < 16; k++)
        pa_mempool_free(w->p, mine[k]);
    return NULL;
}

static void test_threads(void **state)
{
    upstream_log l = {0};
    pa_mempool *p = make(&l, 0, 4 << 20, 0);
    pthread_t t[4];
    worker_arg w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker_arg){p, 0, 1234567ull * (i + 1)};
        pthread_create(&t[i], NULL, worker, &w[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(w[i].failures, 0);
    }
    pa_mempool_stats st;
    pa_mempool_stats_get(p, &st);
    assert_int_equal(st.current, 0);
    assert_int_equal(st.n_allocs, st.n_frees);
    pa_mempool_destroy(p);
}

static void test_bad_config(void **state)
{
    upstream_log l = {0};
    pa_mempool_config cfg = {.name = "bad", .alignment = 48};
    pa_mempool *p;
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(pa_mempool_create(&cfg, (pa_upstream){up_alloc, up_free, &l}, &p, &e), PA_EINVAL);
    assert_non_null(strstr(e.msg, "power of two"));
    pa_err_close(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),
        cmocka_unit_test(test_host_bytes),
        cmocka_unit_test(test_limit_then_continue),
        cmocka_unit_test(test_fault_injection),
        cmocka_unit_test(test_random_against_model),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_bad_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
