/*
 * test_kn_dispatch.c - how relational kernels reach a device (kn_ops_int.h):
 * on sim a kernel has not run when its call returns (its pinned output
 * holds the poison) and has after a sync; its arguments were copied by the
 * call; its errors come back from the stream with their message, and a
 * CUDA kernel's data fault from the syncs of its stream; a kernel
 * missing from a device's table is PA_EUNSUPPORTED naming both, with
 * nothing run on the host instead; on cpu (and without a device) kernels
 * run before the call returns.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "exec/expr_int.h"
#include "kernels/kn_ops_int.h"

static dv_device *g_sim;
static dv_stream *g_s;

/* A long stream delay: nothing enqueued runs before the test looks. */
enum { DELAY_US = 200000 };

static int setup(void **state)
{
    dv_options o = {.spec = "sim", .sim_delay_us = DELAY_US, .cpu_threads = 2};
    if (dv_open(&o, &g_sim, NULL) != PA_OK)
        return -1;
    return dv_stream_create(g_sim, &g_s, NULL);
}

static int teardown(void **state)
{
    dv_stream_destroy(g_s);
    dv_close(g_sim);
    return 0;
}

static bool poisoned(const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (((const uint8_t *)p)[i] != DV_POISON_BYTE)
            return false;
    return true;
}

/* A device copy of n bytes, there once the stream got there. */
static void *up(const void *h, size_t n)
{
    void *d = NULL;
    assert_int_equal(dv_alloc(g_sim, n, &d, NULL), PA_OK);
    assert_int_equal(dv_copy_async(g_s, d, h, n, DV_COPY_H2D, NULL), PA_OK);
    return d;
}

static const pa_type T_BOOL = {PA_TYPE_BOOLEAN, 0, 0}, T_INT = {PA_TYPE_INTEGER, 0, 0};

/* kn_select returns before its kernel ran: the count is poison until the
 * sync, then right. One launch counted, no sync. */
static void test_sim_runs_later(void **state)
{
    const uint8_t hp[5] = {1, 0, 1, 1, 0};
    pa_column pred = {.type = T_BOOL, .length = 5, .data = up(hp, sizeof hp)};
    int32_t *sel;
    int64_t *count;
    assert_int_equal(dv_alloc(g_sim, 5 * sizeof *sel, (void **)&sel, NULL), PA_OK);
    assert_int_equal(dv_host_alloc(g_sim, sizeof *count, (void **)&count, NULL), PA_OK);
    *count = 42;
    kn_ctx ctx = {g_sim, g_s};
    pa_counters c0, c1, diff;
    pa_counters_snapshot(&c0);
    assert_int_equal(kn_select(&ctx, &pred, 5, sel, count, NULL), PA_OK);
    pa_counters_snapshot(&c1);
    pa_counters_diff(&c1, &c0, &diff);
    assert_true(poisoned(count, sizeof *count));
    /* Launched, not run: the CUDA selection is a few kernels (kn_gpu.h). */
    assert_true(diff.v[PA_CTR_KERNELS_LAUNCHED] >= 1);
    assert_int_equal(diff.v[PA_CTR_HOST_SYNCS], 0);
    bool idle = true;
    assert_int_equal(dv_stream_query(g_s, &idle, NULL), PA_OK);
    assert_false(idle);
    assert_int_equal(dv_stream_sync(g_s, NULL), PA_OK);
    assert_int_equal(*count, 3);
    int32_t h[3];
    assert_int_equal(dv_copy_async(g_s, h, sel, sizeof h, DV_COPY_D2H, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(g_s, NULL), PA_OK);
    assert_int_equal(h[0], 0);
    assert_int_equal(h[1], 2);
    assert_int_equal(h[2], 3);
    dv_free(g_sim, pred.data);
    dv_free(g_sim, sel);
    dv_host_free(g_sim, count);
}

/* The call copies its descriptors: changing the caller's array before the
 * kernel ran does not change what it hashes. */
static void test_sim_copies_arguments(void **state)
{
    const int32_t a[4] = {7, -1, 7, 1 << 30}, b[4] = {1, 2, 3, 4};
    pa_column host[2] = {{.type = T_INT, .length = 4, .data = (void *)a},
                         {.type = T_INT, .length = 4, .data = (void *)b}};
    uint64_t want[4], got[4], *dh;
    assert_int_equal(kn_hash_keys(NULL, host, 2, 4, want, NULL), PA_OK);   /* on the host */
    pa_column keys[2] = {host[0], host[1]};
    keys[0].data = up(a, sizeof a);
    keys[1].data = up(b, sizeof b);
    assert_int_equal(dv_alloc(g_sim, sizeof got, (void **)&dh, NULL), PA_OK);
    kn_ctx ctx = {g_sim, g_s};
    assert_int_equal(kn_hash_keys(&ctx, keys, 2, 4, dh, NULL), PA_OK);
    void *d0 = keys[0].data, *d1 = keys[1].data;
    memset(keys, 0, sizeof keys);   /* the kernel has not run yet */
    assert_int_equal(dv_copy_async(g_s, got, dh, sizeof got, DV_COPY_D2H, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(g_s, NULL), PA_OK);
    assert_memory_equal(got, want, sizeof want);
    dv_free(g_sim, d0);
    dv_free(g_sim, d1);
    dv_free(g_sim, dh);
}

/* col0 + 1 over INT32_MAX: an overflow kn_eval finds while it runs,
 * reported by the sync and by an event recorded after the kernel. */
static void test_sim_kernel_error(void **state)
{
    ex_plan *P;
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(ex_plan_create(&P, NULL), PA_OK);
    ex_expr *x = ex_expr_arith(P, EX_ADD, ex_expr_col_typed(P, 0, T_INT, &e), ex_expr_int(P, 1, &e), &e);
    kn_program *prog;
    assert_int_equal(ex__compile(&x, 1, &T_INT, 1, &prog, &e), PA_OK);
    const int32_t v[2] = {5, INT32_MAX};
    pa_column in = {.type = T_INT, .length = 2, .data = up(v, sizeof v)};
    pa_column out = {.type = T_INT, .length = 2};
    void *scratch;
    assert_int_equal(dv_alloc(g_sim, 8, &out.data, NULL), PA_OK);
    assert_int_equal(dv_alloc(g_sim, kn_eval_scratch_size(prog), &scratch, NULL), PA_OK);
    dv_stream *s;
    dv_event *ev;
    assert_int_equal(dv_stream_create(g_sim, &s, NULL), PA_OK);
    assert_int_equal(dv_event_create(g_sim, &ev, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(g_s, NULL), PA_OK);   /* the input is there */
    kn_ctx ctx = {g_sim, s};
    assert_int_equal(kn_eval(&ctx, prog, &in, 1, 2, &out, scratch, NULL, 0, &e), PA_OK);
    pa_free(prog);   /* the call copied the program */
    assert_int_equal(dv_event_record(ev, s, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(s, &e), PA_EOVERFLOW);
    assert_non_null(strstr(e.msg, "2147483647 + 1"));
    pa_err_clear(&e);
    bool done = false;
    assert_int_equal(dv_event_query(ev, &done, &e), PA_EOVERFLOW);
    assert_true(done);
    dv_event_destroy(ev);
    dv_stream_destroy(s);

    /* An argument that only device data shows to be bad is found by the
     * kernel: the call enqueued, the sync reports it. Here a range past the
     * groups of an empty table, whose group count lives in device memory. */
    uint32_t *part;
    assert_int_equal(dv_alloc(g_sim, 8, (void **)&part, NULL), PA_OK);
    assert_int_equal(dv_stream_create(g_sim, &s, NULL), PA_OK);
    ctx.stream = s;
    pa_err_clear(&e);
    kn_agg_layout L;
    kn_agg_slot cnt = {KN_AGG_COUNT_STAR, T_INT};
    assert_int_equal(kn_agg_layout_init(&L, &T_INT, 1, &cnt, 1, &e), PA_OK);
    void *mem;
    int64_t *sizes;
    assert_int_equal(dv_alloc(g_sim, kn_agg_table_bytes(&L, 4, 0), &mem, NULL), PA_OK);
    assert_int_equal(dv_host_alloc(g_sim, 16, (void **)&sizes, NULL), PA_OK);
    kn_agg_table t;
    assert_int_equal(kn_agg_table_init(&ctx, &t, &L, mem, 4, 0, sizes, &e), PA_OK);
    pa_column key_out = {.type = T_INT, .length = 1};
    assert_int_equal(dv_alloc(g_sim, 8, &key_out.data, NULL), PA_OK);
    assert_int_equal(dv_alloc(g_sim, 8, (void **)&key_out.validity, NULL), PA_OK);
    assert_int_equal(kn_agg_emit_key(&ctx, &t, 0, 0, 1, &key_out, &e), PA_OK);
    assert_int_equal(dv_stream_sync(s, &e), PA_EINVAL);
    assert_non_null(strstr(e.msg, "aggregation emit: groups out of range"));
    dv_stream_destroy(s);
    /* What the host knows is checked before anything launches: a key the
     * table does not have. */
    assert_int_equal(dv_stream_create(g_sim, &s, NULL), PA_OK);
    ctx.stream = s;
    pa_err_clear(&e);
    assert_int_equal(kn_agg_emit_key(&ctx, &t, 1, 0, 1, &key_out, &e), PA_EINVAL);
    assert_non_null(strstr(e.msg, "aggregation emit: key 1"));
    assert_int_equal(dv_stream_sync(s, NULL), PA_OK);
    dv_free(g_sim, key_out.data);
    dv_free(g_sim, key_out.validity);
    dv_free(g_sim, mem);
    dv_host_free(g_sim, sizes);
    /* The same for a kernel of another family. */
    dv_stream_destroy(s);
    assert_int_equal(dv_stream_create(g_sim, &s, NULL), PA_OK);
    ctx.stream = s;
    pa_err_clear(&e);
    assert_int_equal(kn_partition_ids(&ctx, in.data, 2, 0, part, &e), PA_EINVAL);
    assert_non_null(strstr(e.msg, "hash partition into 0 parts"));
    assert_int_equal(dv_stream_sync(s, NULL), PA_OK);
    dv_stream_destroy(s);
    dv_free(g_sim, part);
    dv_free(g_sim, in.data);
    dv_free(g_sim, out.data);
    dv_free(g_sim, scratch);
    ex_plan_destroy(P);
    pa_err_close(&e);
}

/* A kernel the device's table lacks: PA_EUNSUPPORTED naming kernel and
 * device; nothing launched, nothing written, no host fallback. */
static void test_missing_kernel(void **state)
{
    kn_ops partial = kn__sim_ops;
    partial.join_cross = NULL;
    const kn_ops *old = kn__ops_swap(DV_KIND_SIM, &partial);
    kn_join_cursor *cur;
    int32_t *pidx, *bidx;
    assert_int_equal(dv_host_alloc(g_sim, sizeof *cur, (void **)&cur, NULL), PA_OK);
    assert_int_equal(dv_alloc(g_sim, 64, (void **)&pidx, NULL), PA_OK);
    assert_int_equal(dv_alloc(g_sim, 64, (void **)&bidx, NULL), PA_OK);
    memset(cur, 0, sizeof *cur);
    kn_ctx ctx = {g_sim, g_s};
    pa_err e;
    pa_err_init(&e);
    int64_t launched = pa_counter_get(PA_CTR_KERNELS_LAUNCHED);
    assert_int_equal(kn_join_cross(&ctx, 2, 2, cur, 16, pidx, bidx, &e), PA_EUNSUPPORTED);
    assert_string_equal(e.msg, "kernel kn_join_cross is not implemented on device sim");
    assert_int_equal(pa_counter_get(PA_CTR_KERNELS_LAUNCHED), launched);
    assert_int_equal(cur->n_out, 0);
    assert_int_equal(cur->done, 0);
    /* The other kernels still run. */
    assert_int_equal(kn_join_finish(&ctx, KN_JOIN_SEMI, NULL, NULL, 0, pidx, NULL, NULL, NULL, &cur->n_out, NULL, &e),
                     PA_OK);
    assert_int_equal(dv_stream_sync(g_s, NULL), PA_OK);
    assert_int_equal(cur->n_out, 0);
    /* No table at all. */
    kn__ops_swap(DV_KIND_SIM, NULL);
    pa_err_clear(&e);
    assert_int_equal(kn_select(&ctx, NULL, 0, NULL, NULL, &e), PA_EUNSUPPORTED);
    assert_string_equal(e.msg, "kernel kn_select is not implemented on device sim");
    assert_ptr_equal(kn__ops_swap(DV_KIND_SIM, old), NULL);
    dv_host_free(g_sim, cur);
    dv_free(g_sim, pidx);
    dv_free(g_sim, bidx);
    pa_err_close(&e);
}

/* On cuda too a kernel missing from the table (every kernel has a CUDA
 * source now; the test takes the table away) is an error naming it, never a
 * host fallback (where a GPU can be opened). */
static void test_cuda_has_none(void **state)
{
    dv_options o = {.spec = "cuda"};
    dv_device *d = NULL;
    if (dv_open(&o, &d, NULL) != PA_OK)
        skip();
    kn_ctx ctx = {d, NULL};
    pa_err e;
    pa_err_init(&e);
    const kn_ops *old = kn__ops_swap(DV_KIND_CUDA, NULL);
    int64_t launched = pa_counter_get(PA_CTR_KERNELS_LAUNCHED);
    assert_int_equal(kn_agg_table_move(&ctx, NULL, NULL, &e), PA_EUNSUPPORTED);
    assert_int_equal(pa_counter_get(PA_CTR_KERNELS_LAUNCHED), launched);
    char want[96];
    snprintf(want, sizeof want, "kernel kn_agg_table_move is not implemented on device %s", dv_name(d));
    assert_string_equal(e.msg, want);
    assert_ptr_equal(kn__ops_swap(DV_KIND_CUDA, old), NULL);
    pa_err_close(&e);
    dv_close(d);
}

/* On cpu, and without a device, a kernel has run when the call returns;
 * only the one with a device counts as a launch. */
static void test_cpu_runs_inline(void **state)
{
    dv_options o = {.spec = "cpu", .cpu_threads = 1};
    dv_device *d;
    assert_int_equal(dv_open(&o, &d, NULL), PA_OK);
    const uint8_t p[4] = {1, 1, 0, 1};
    pa_column pred = {.type = T_BOOL, .length = 4, .data = (void *)p};
    int32_t sel[4];
    int64_t *count;
    assert_int_equal(dv_host_alloc(d, sizeof *count, (void **)&count, NULL), PA_OK);
    kn_ctx ctx = {d, NULL};
    int64_t launched = pa_counter_get(PA_CTR_KERNELS_LAUNCHED);
    assert_int_equal(kn_select(&ctx, &pred, 4, sel, count, NULL), PA_OK);
    assert_int_equal(*count, 3);
    assert_int_equal(pa_counter_get(PA_CTR_KERNELS_LAUNCHED), launched + 1);
    *count = 0;
    assert_int_equal(kn_select(NULL, &pred, 4, sel, count, NULL), PA_OK);
    assert_int_equal(*count, 3);
    assert_int_equal(pa_counter_get(PA_CTR_KERNELS_LAUNCHED), launched + 1);
    dv_host_free(d, count);
    dv_close(d);
}

/* kn_agg_table_init lays the table out on the host and clears its block
 * in a kernel: the sizes are poison until then, a global table's single
 * group after. */
static void test_sim_agg_init_is_a_kernel(void **state)
{
    kn_agg_slot slot = {KN_AGG_COUNT_STAR, T_INT};
    kn_agg_layout L;
    assert_int_equal(kn_agg_layout_init(&L, NULL, 0, &slot, 1, NULL), PA_OK);
    void *mem;
    int64_t *sizes;
    assert_int_equal(dv_alloc(g_sim, kn_agg_table_bytes(&L, 4, 0), &mem, NULL), PA_OK);
    assert_int_equal(dv_host_alloc(g_sim, 2 * sizeof *sizes, (void **)&sizes, NULL), PA_OK);
    kn_agg_table t;
    kn_ctx ctx = {g_sim, g_s};
    assert_int_equal(kn_agg_table_init(&ctx, &t, &L, mem, 4, 0, sizes, NULL), PA_OK);
    assert_true(poisoned(sizes, 2 * sizeof *sizes));
    assert_int_equal(t.cap_groups, 4);   /* the host struct is filled at once */
    assert_int_equal(dv_stream_sync(g_s, NULL), PA_OK);
    assert_int_equal(kn_agg_groups(&t), 1);
    assert_int_equal(kn_agg_arena_used(&t), 0);
    dv_free(g_sim, mem);
    dv_host_free(g_sim, sizes);
}

/* A data fault (kn_take of index -1 into a column without validity: only
 * the kernel sees it): the call enqueues, the sync reports the fault with
 * its message; the fault is the stream's: its syncs and events recorded on
 * it report it from then on, another stream's do not, and it ends with the
 * stream (or dv_clear_fault). */
static void test_sim_data_fault(void **state)
{
    const int64_t hv[2] = {5, 6};
    const int32_t hidx[3] = {0, -1, 1};
    pa_column src = {.type = {PA_TYPE_BIGINT, 0, 0}, .length = 2, .data = up(hv, sizeof hv)};
    int32_t *idx = up(hidx, sizeof hidx);
    pa_column dst = {0};
    assert_int_equal(dv_alloc(g_sim, 3 * sizeof(int64_t), &dst.data, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(g_s, NULL), PA_OK);
    dv_stream *s;
    dv_event *ev;
    assert_int_equal(dv_stream_create(g_sim, &s, NULL), PA_OK);
    assert_int_equal(dv_event_create(g_sim, &ev, NULL), PA_OK);
    kn_ctx ctx = {g_sim, s};
    pa_err e;
    pa_err_init(&e);
    assert_int_equal(kn_take(&ctx, &src, idx, 3, &dst, &e), PA_OK);
    assert_int_equal(dv_stream_sync(s, &e), PA_EINVAL);
    assert_non_null(strstr(e.msg, "a kernel on sim stopped: take: a NULL row"));
    pa_err_clear(&e);
    assert_int_equal(dv_stream_sync(s, &e), PA_EINVAL);   /* sticky */
    assert_int_equal(dv_stream_sync(g_s, NULL), PA_OK);
    assert_int_equal(dv_event_record(ev, g_s, NULL), PA_OK);
    assert_int_equal(dv_event_sync(ev, NULL), PA_OK);
    assert_int_equal(dv_event_record(ev, s, NULL), PA_OK);
    assert_int_equal(dv_event_sync(ev, NULL), PA_EINVAL);
    bool done = false;
    assert_int_equal(dv_event_query(ev, &done, NULL), PA_EINVAL);
    /* The stream ends: so does its fault, for its events too, and a new
     * stream (which may reuse its fault block) starts clean. */
    dv_stream_destroy(s);
    assert_int_equal(dv_event_sync(ev, NULL), PA_OK);
    assert_int_equal(dv_stream_create(g_sim, &s, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(s, NULL), PA_OK);
    dv_event_destroy(ev);
    dv_stream_destroy(s);
    dv_free(g_sim, src.data);
    dv_free(g_sim, idx);
    dv_free(g_sim, dst.data);
    pa_err_close(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_runs_later),
        cmocka_unit_test(test_sim_copies_arguments),
        cmocka_unit_test(test_sim_kernel_error),
        cmocka_unit_test(test_sim_data_fault),
        cmocka_unit_test(test_missing_kernel),
        cmocka_unit_test(test_cuda_has_none),
        cmocka_unit_test(test_cpu_runs_inline),
        cmocka_unit_test(test_sim_agg_init_is_a_kernel),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
