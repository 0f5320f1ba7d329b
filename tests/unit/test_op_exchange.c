/*
 * test_op_exchange.c - the EXCHANGE operator (src/exec/op_exchange.c) in one
 * process: the world is this process alone (rank 0 of 1), so every round is
 * real (an all-to-all with itself through src/net) and every row comes back
 * to this rank. lineitem's rows through a repartition, a hash share and a
 * broadcast must aggregate exactly as without the exchange, in every
 * execution mode and with a receive queue of 4 KiB (the senders wait for
 * the reader: back-pressure); in OVERLAPPED mode the reader reads its first
 * rows before the exchange ended (it streams); a LIMIT above stops the
 * reader early and the query still ends; an error in the input fails the
 * query with its message through the round (round_failed). The multi-rank
 * runs are tests/sh/test_dist_tpch.sh's. On the device of
 * PISTA_TEST_DEVICE (cpu, sim).
 */
#include "op_testutil.h"

static dv_device *D;
static nt_world *W;

static int setup(void **state)
{
    (void)state;
    ot_paths();
    D = et_open(0);
    pa_err e;
    pa_err_init(&e);
    if (nt_world_open(NULL, &W, &e) != PA_OK)
        fail_msg("nt_world_open: %s", e.msg);
    pa_err_close(&e);
    return 0;
}
static int teardown(void **state)
{
    (void)state;
    nt_world_close(W);
    dv_close(D);
    return 0;
}

static const char *const cols[] = {"l_orderkey", "l_returnflag", "l_quantity", "l_comment"};

/* SELECT l_returnflag, count(*), sum(l_quantity), max(l_comment) FROM
 * lineitem, with an exchange of `mode` (-1: none) below the aggregate and
 * a LIMIT of `limit` rows (>= 0) above the exchange; the result's text
 * (sorted) or NULL with *rc and msg. */
static char *run_q(int mode, ex_mode em, int64_t limit, int64_t chunk_rows, int *rc, char *msg, char *detail)
{
    ex_plan *p;
    assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
    ex_op *op = ot_scan(p, "lineitem.parquet", cols, 4);
    pa_err e;
    pa_err_init(&e);
    if (mode >= 0) {
        int key = 0;
        assert_int_equal(ex_exchange(p, op, W, (ex_xmode)mode, 4, &key, mode == EX_X_BROADCAST ? 0 : 1, &op, &e),
                         PA_OK);
    }
    if (limit >= 0)
        assert_int_equal(ex_limit(p, op, limit, 0, &op, &e), PA_OK);
    int g = 1;
    ex_agg aggs[] = {{EX_AGG_COUNT_STAR, 0}, {EX_AGG_SUM, 2}, {EX_AGG_MAX, 3}};
    const char *names[] = {"n", "q", "c"};
    assert_int_equal(ex_aggregate(p, op, &g, 1, aggs, 3, names, &op, &e), PA_OK);
    bool round_failed = false;
    ex_run_options o = {.dev = D, .mode = em, .threads = 2, .chunk_rows = chunk_rows, .round_failed = &round_failed};
    ex_result *r = NULL;
    *rc = ex_run(p, op, &o, &r, &e);
    snprintf(msg, 512, "%s%s", e.msg, round_failed ? " [round failed]" : "");
    char *text = NULL;
    if (r) {
        for (int i = 0; detail && i < r->stats.n_ops; i++)
            if (r->stats.ops[i].label && !strncmp(r->stats.ops[i].label, "EXCHANGE", 8))
                snprintf(detail, 256, "%s", r->stats.ops[i].detail);
        char *t = ot_csv(r);
        text = ot_sorted(t);
        free(t);
        ex_result_destroy(r);
    }
    pa_err_close(&e);
    ex_plan_destroy(p);
    return text;
}

static void same_as_without(void **state)
{
    (void)state;
    int rc;
    char msg[512];
    char *want = run_q(-1, EX_MODE_OVERLAPPED, -1, 0, &rc, msg, NULL);
    assert_int_equal(rc, PA_OK);
    /* The same in 2000-row morsels of the scan's one row group (on sim its
     * later morsels were once read before the device decoded them). */
    char *small = run_q(-1, EX_MODE_OVERLAPPED, -1, 2000, &rc, msg, NULL);
    assert_int_equal(rc, PA_OK);
    if (strcmp(want, small))
        fail_msg("2000-row morsels:\n%s---\n%s", want, small);
    free(small);
    assert_int_equal(rc, PA_OK);
    if (!strstr(want, "\nA|"))   /* three flags of SF 0.01 lineitem */
        fail_msg("%s", want);
    assert_non_null(strstr(want, "\nR|"));
    const ex_mode modes[] = {EX_MODE_OVERLAPPED, EX_MODE_CHUNKED, EX_MODE_BLOCKING};
    for (int q = 0; q < 2; q++) {   /* the default queue, then 4 KiB */
        if (q)
            setenv("PISTA_EXCHANGE_QUEUE_BYTES", "4096", 1);
        for (int x = EX_X_REPART; x <= EX_X_BROADCAST; x++)
            for (int m = 0; m < 3; m++) {
                char *got = run_q(x, modes[m], -1, 2000, &rc, msg, NULL);
                if (rc != PA_OK || !got || strcmp(got, want))
                    fail_msg("exchange %d, mode %s, queue %s: rc %d %s\n%s---\n%s", x, ex_mode_name(modes[m]),
                             q ? "4 KiB" : "default", rc, msg, want, got ? got : "");
                free(got);
            }
    }
    unsetenv("PISTA_EXCHANGE_QUEUE_BYTES");
    free(want);
}

/* OVERLAPPED: the aggregate reads rows while the exchange still receives
 * (EXPLAIN ANALYZE's "read from X ms, ended Y ms": X < Y), in 1000-row
 * chunks over 60 rounds or so. Timing-dependent in principle, so the best
 * of three runs. */
static void streams(void **state)
{
    (void)state;
    int rc, ok = 0;
    char msg[512], detail[256] = "";
    for (int t = 0; t < 3 && !ok; t++) {
        char *got = run_q(EX_X_REPART, EX_MODE_OVERLAPPED, -1, 1000, &rc, msg, detail);
        assert_int_equal(rc, PA_OK);
        free(got);
        const char *at = strstr(detail, "read from ");
        double first = -1, end = -1;
        assert_non_null(at);
        assert_int_equal(sscanf(at, "read from %lf ms, ended %lf ms", &first, &end), 2);
        ok = first >= 0 && first < end;
    }
    if (!ok)
        fail_msg("the reader did not read before the exchange ended: %s", detail);
    assert_non_null(strstr(detail, "rounds ("));
}

/* A LIMIT above the exchange: its reader stops after 10 rows; the rows
 * still arriving are dropped and the exchange ends (no hang), with a small
 * queue too. */
static void limit_stops_reader(void **state)
{
    (void)state;
    int rc;
    char msg[512];
    for (int q = 0; q < 2; q++) {
        if (q)
            setenv("PISTA_EXCHANGE_QUEUE_BYTES", "4096", 1);
        char *got = run_q(EX_X_REPART, EX_MODE_OVERLAPPED, 10, 1000, &rc, msg, NULL);
        assert_int_equal(rc, PA_OK);
        int n = 0;   /* the groups' counts add up to the 10 rows */
        for (const char *s = strchr(got, '\n'); s && s[1]; s = strchr(s + 1, '\n')) {
            const char *bar = strchr(s + 1, '|');
            n += bar ? atoi(bar + 1) : 0;
        }
        assert_int_equal(n, 10);
        free(got);
    }
    unsetenv("PISTA_EXCHANGE_QUEUE_BYTES");
}

/* ------------------------------------------------ an input that fails */

typedef struct failsrc {
    dv_chunk **chunks;
    int n, calls;
} failsrc;

/* Its chunks, then an error. */
static int failsrc_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    (void)w, (void)local;
    failsrc *f = op->state;
    int i = __atomic_fetch_add(&f->calls, 1, __ATOMIC_ACQ_REL);
    *out = NULL;
    if (i >= f->n)
        return pa_error(err, PA_EIO, "boom: the input failed after %d chunks", f->n);
    *out = dv_chunk_retain(f->chunks[i]);
    return PA_OK;
}

static const ex_op_vt failsrc_vt = {.kind = EX_OP_SCAN, .source_next = failsrc_next};

static void failing_input(void **state)
{
    (void)state;
    pa_column c[2] = {et_random(et_t(PA_TYPE_BIGINT), 1000, 0), et_random(et_t(PA_TYPE_BIGINT), 1000, 10)};
    dv_chunk *chunks[3];
    for (int i = 0; i < 3; i++)
        chunks[i] = ot_chunk(D, c, 2);
    for (int m = 0; m < 2; m++) {
        ex_plan *p;
        assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
        ex_op *op;
        assert_int_equal(ex_op_new(p, &failsrc_vt, 2, &op, NULL), PA_OK);
        assert_int_equal(ex_op_set_column(op, 0, "k", c[0].type, NULL), PA_OK);
        assert_int_equal(ex_op_set_column(op, 1, "v", c[1].type, NULL), PA_OK);
        failsrc *f = ex_plan_alloc(p, sizeof *f);
        f->chunks = chunks;
        f->n = 3;
        op->state = f;
        int key = 0;
        pa_err e;
        pa_err_init(&e);
        assert_int_equal(ex_exchange(p, op, W, EX_X_REPART, 2, &key, 1, &op, &e), PA_OK);
        ex_agg aggs[] = {{EX_AGG_COUNT_STAR, 0}};
        const char *names[] = {"n"};
        assert_int_equal(ex_aggregate(p, op, NULL, 0, aggs, 1, names, &op, &e), PA_OK);
        bool round_failed = false;
        ex_run_options o = {.dev = D, .mode = m ? EX_MODE_CHUNKED : EX_MODE_OVERLAPPED, .threads = 1,
                            .round_failed = &round_failed};
        ex_result *r = NULL;
        int rc = ex_run(p, op, &o, &r, &e);
        assert_int_equal(rc, PA_EIO);
        assert_null(r);
        assert_non_null(strstr(e.msg, "boom: the input failed after 3 chunks"));
        assert_true(round_failed);   /* the error went to every rank in a round */
        pa_err_close(&e);
        ex_plan_destroy(p);
    }
    for (int i = 0; i < 3; i++)
        dv_chunk_destroy(chunks[i]);
    et_col_free(&c[0]);
    et_col_free(&c[1]);
}

static void bad_arguments(void **state)
{
    (void)state;
    ex_plan *p;
    assert_int_equal(ex_plan_create(&p, NULL), PA_OK);
    ex_op *scan = ot_scan(p, "lineitem.parquet", cols, 4), *op = NULL;
    pa_err e;
    pa_err_init(&e);
    int key = 9;
    assert_int_equal(ex_exchange(p, scan, W, EX_X_REPART, 4, &key, 1, &op, &e), PA_EINVAL);
    assert_non_null(strstr(e.msg, "key 0 is not a column"));
    pa_err_clear(&e);
    key = 0;
    assert_int_equal(ex_exchange(p, scan, W, EX_X_REPART, 4, &key, 0, &op, &e), PA_EINVAL);   /* no key */
    pa_err_clear(&e);
    assert_int_equal(ex_exchange(p, scan, W, EX_X_REPART, 5, &key, 1, &op, &e), PA_EINVAL);   /* 5 of 4 columns */
    pa_err_close(&e);
    ex_plan_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_as_without),
        cmocka_unit_test(streams),
        cmocka_unit_test(limit_stops_reader),
        cmocka_unit_test(failing_input),
        cmocka_unit_test(bad_arguments),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
