/*
 * test_exec_sqlext.c - what the execution engine adds for the SQL front end:
 * joins with a residual predicate and joins without keys (every join type,
 * NULLs and duplicates on both sides, empty and one-row sides, against a
 * nested-loop reference with SQL's three-valued logic written here, in
 * every mode with one and two workers), cancellation (a canceled query
 * returns PA_ECANCELED quickly with every byte freed and the device usable),
 * scan progress, planner estimates in EXPLAIN, constants as pq_pred text,
 * aggregate result types, and the one-row VALUES source under every
 * operator and on both sides of a join.
 */
#include "hj_testutil.h"

#include "exec/exec_int.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

static pa_err err;

#define OK(call)                                                                                \
    do {                                                                                        \
        int rc_ = (call);                                                                       \
        if (rc_ != PA_OK)                                                                       \
            fail_msg("%s -> %s: %s", #call, pa_status_name(rc_), err.msg);                      \
    } while (0)

#define T(id) hj_type(PA_TYPE_##id, 0, 0)

static const char *data_file(const char *name)
{
    static char buf[4][700];
    static int k;
    const char *d = getenv("PISTA_TEST_DATA");
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/parquet/%s", d ? d : "tests/data", name);
    return buf[k];
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------- a source over host-memory columns */

typedef struct host_src {
    const pa_column *cols;
    int64_t rows, per_chunk;
    int64_t next;   /* atomic */
} host_src;

/* Rows [first, first + n) of host column s into chunk column d: made on
 * the host, then written to the device in the order of w's stream (test
 * code never touches device memory). */
static int copy_rows(ex_op *op, ex_worker *w, dv_chunk *c, const pa_column *s, int64_t first, int64_t n,
                     pa_column *d, pa_err *e)
{
    d->type = s->type;
    d->length = n;
    size_t bytes = s->type.id == PA_TYPE_VARCHAR ? (size_t)(s->offsets[first + n] - s->offsets[first])
                                                 : (size_t)n * (size_t)pa_type_bytes(s->type);
    int32_t *offs = s->offsets ? malloc((size_t)(n + 1) * 4) : NULL;
    uint8_t *valid = calloc((size_t)n / 8 + 1, 1);
    const char *src = (const char *)s->data + (s->type.id == PA_TYPE_VARCHAR ? (size_t)s->offsets[first]
                                                   : (size_t)first * (size_t)pa_type_bytes(s->type));
    for (int64_t i = 0; offs && i <= n; i++)
        offs[i] = s->offsets[first + i] - s->offsets[first];
    bool any_null = false;
    for (int64_t i = 0; s->validity && i < n; i++) {
        any_null |= !hj_bit(s->validity, first + i);
        hj_setbit(valid, i, hj_bit(s->validity, first + i));
    }
    int rc = ex_chunk_alloc(op, c, bytes + 1, &d->data, e);
    if (rc == PA_OK)
        rc = ex_to_device(op, w, d->data, src, bytes, e);
    if (rc == PA_OK && offs && (rc = ex_chunk_alloc(op, c, (size_t)(n + 1) * 4, (void **)&d->offsets, e)) == PA_OK)
        rc = ex_to_device(op, w, d->offsets, offs, (size_t)(n + 1) * 4, e);
    /* As a scan does: no bitmap when every row is valid. */
    if (rc == PA_OK && any_null &&
        (rc = ex_chunk_alloc(op, c, (size_t)n / 8 + 1, (void **)&d->validity, e)) == PA_OK)
        rc = ex_to_device(op, w, d->validity, valid, (size_t)n / 8 + 1, e);
    free(offs);
    free(valid);
    return rc;
}

static int src_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *e)
{
    host_src *s = op->state;
    int64_t first = __atomic_fetch_add(&s->next, s->per_chunk, __ATOMIC_RELAXED);
    *out = NULL;
    if (first >= s->rows)
        return PA_OK;
    int64_t n = s->rows - first < s->per_chunk ? s->rows - first : s->per_chunk;
    dv_chunk *c;
    int rc = ex_chunk_new(op, w, op->n_cols, &c, e);
    for (int k = 0; rc == PA_OK && k < op->n_cols; k++)
        rc = copy_rows(op, w, c, &s->cols[k], first, n, &c->columns[k], e);
    if (rc != PA_OK) {
        dv_chunk_release(c, w->stream);   /* after the copies queued into it */
        return rc;
    }
    c->length = n;
    *out = c;
    return PA_OK;
}

static const ex_op_vt src_vt = {.kind = EX_OP_SCAN, .source_next = src_next};

static ex_op *make_src(ex_plan *p, const pa_column *cols, const char *const *names, int n_cols, int64_t rows,
                       int64_t per_chunk)
{
    ex_op *op;
    OK(ex_op_new(p, &src_vt, n_cols, &op, &err));
    for (int k = 0; k < n_cols; k++)
        OK(ex_op_set_column(op, k, names[k], cols[k].type, &err));
    host_src *s = ex_plan_alloc(p, sizeof *s);
    *s = (host_src){cols, rows, per_chunk, 0};
    op->state = s;
    op->est_rows = rows;
    return op;
}

static ex_op *scan(ex_plan *p, const char *file, const char *const *cols, int n, const pq_pred *preds, int np)
{
    const char *path = data_file(file);
    ex_op *op = NULL;
    OK(ex_scan(p, &path, 1, cols, n, preds, np, &op, &err));
    return op;
}

/* ------------------------------------------------------- result lines */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

typedef struct lines {
    char **l;
    int64_t n, cap;
} lines;

static void lines_add(lines *ls, const char *s)
{
    if (ls->n == ls->cap)
        ls->l = realloc(ls->l, (size_t)(ls->cap = ls->cap ? ls->cap * 2 : 256) * sizeof *ls->l);
    ls->l[ls->n++] = strdup(s);
}

static void lines_free(lines *ls)
{
    for (int64_t i = 0; i < ls->n; i++)
        free(ls->l[i]);
    free(ls->l);
    memset(ls, 0, sizeof *ls);
}

/* Value `row` of c appended to line ("NULL" for a NULL), '|' separated. */
static void cat_value(char *line, const pa_column *c, int64_t row)
{
    char buf[256] = "NULL";
    if (pa_column_valid(c, row))
        pa_format_value(c, row, PA_FMT_FULL, buf, sizeof buf);
    if (*line)
        strcat(line, "|");
    strcat(line, buf);
}

static void cat_text(char *line, const char *text)
{
    if (*line)
        strcat(line, "|");
    strcat(line, text);
}

static void result_lines(const ex_result *r, lines *ls)
{
    for (int c = 0; c < r->n_chunks; c++) {
        const dv_chunk *ch = r->chunks[c];
        for (int64_t i = 0; i < ch->length; i++) {
            char line[2048] = "";
            for (int k = 0; k < ch->n_columns; k++)
                cat_value(line, &ch->columns[k], i);
            lines_add(ls, line);
        }
    }
    assert_int_equal(ls->n, r->n_rows);
    if (ls->n > 1)
        qsort(ls->l, (size_t)ls->n, sizeof *ls->l, cmp_str);
}

static void assert_same(const lines *got, const lines *want, const char *what)
{
    if (got->n != want->n)
        fail_msg("%s: %lld rows, reference %lld", what, (long long)got->n, (long long)want->n);
    for (int64_t i = 0; i < got->n; i++)
        if (strcmp(got->l[i], want->l[i]) != 0)
            fail_msg("%s: row %lld is '%s', reference '%s'", what, (long long)i, got->l[i], want->l[i]);
}

/* The result as one string: rows in result order, '|' separated. */
static char *result_text(const ex_result *r)
{
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    s[0] = 0;
    for (int c = 0; c < r->n_chunks; c++)
        for (int64_t i = 0; i < r->chunks[c]->length; i++) {
            char line[2048] = "";
            for (int k = 0; k < r->chunks[c]->n_columns; k++)
                cat_value(line, &r->chunks[c]->columns[k], i);
            size_t n = strlen(line);
            if (len + n + 2 > cap)
                s = realloc(s, cap = (cap + n) * 2);
            memcpy(s + len, line, n);
            len += n;
            s[len++] = '\n';
            s[len] = 0;
        }
    return s;
}

static ex_result *run(dv_device *d, ex_plan *p, ex_op *root, ex_mode mode, int threads)
{
    ex_run_options o = {.dev = d, .mode = mode, .threads = threads};
    ex_result *r = NULL;
    OK(ex_run(p, root, &o, &r, &err));
    return r;
}

/* Run root and return its result text (the plan is destroyed). */
static char *run_text(dv_device *d, ex_plan *p, ex_op *root, ex_mode mode, int threads)
{
    ex_result *r = run(d, p, root, mode, threads);
    char *s = result_text(r);
    ex_result_destroy(r);
    ex_plan_destroy(p);
    return s;
}

/* =================================================== residual joins: data
 *
 * probe (pk INTEGER, pv BIGINT, ps VARCHAR), build (bk BIGINT, bw BIGINT,
 * bt VARCHAR), every column with NULLs and values from small domains, so
 * keys repeat on both sides. In the pair schema the probe columns are 0..2
 * and the build columns 3..5.
 */
enum { NP = 300, NB = 60, PC = 3, BC = 3, NB_VALID_KEYS = 20 };
static pa_column P[PC], B[BC];
static const char *const pnames[PC] = {"pk", "pv", "ps"};
static const char *const bnames[BC] = {"bk", "bw", "bt"};

static int setup(void **state)
{
    hj_rng r = {77};
    P[0] = hj_gen(&r, T(INTEGER), NP, 6, 0.1, 0.1);
    P[1] = hj_gen(&r, T(BIGINT), NP, 50, 0.0, 0.1);
    P[2] = hj_gen(&r, T(VARCHAR), NP, 4, 0.0, 0.1);
    B[0] = hj_gen(&r, T(BIGINT), NB, 6, 0.1, 0.1);
    B[1] = hj_gen(&r, T(BIGINT), NB, 50, 0.0, 0.1);
    B[2] = hj_gen(&r, T(VARCHAR), NB, 4, 0.0, 0.1);
    for (int64_t i = 0; i < NB_VALID_KEYS; i++)   /* a prefix without NULL build keys: FALSE marks */
        hj_setbit(B[0].validity, i, true);
    return 0;
}

static int teardown(void **state)
{
    for (int k = 0; k < PC; k++)
        hj_free(&P[k]);
    for (int k = 0; k < BC; k++)
        hj_free(&B[k]);
    return 0;
}

typedef enum resid { R_NONE, R_LT, R_OR, R_FALSE, R_NULL, R__N } resid;
static const char *const resid_names[] = {"none", "pv < bw", "ps = bt OR pv > bw", "FALSE", "NULL"};

static ex_expr *make_resid(ex_plan *p, resid r)
{
    ex_expr *pv = ex_expr_col_typed(p, 1, T(BIGINT), &err), *bw = ex_expr_col_typed(p, 4, T(BIGINT), &err);
    ex_expr *ps = ex_expr_col_typed(p, 2, T(VARCHAR), &err), *bt = ex_expr_col_typed(p, 5, T(VARCHAR), &err);
    switch (r) {
    case R_NONE: return NULL;
    case R_LT: return ex_expr_cmp(p, EX_LT, pv, bw, &err);
    case R_OR:
        return ex_expr_or(p, ex_expr_cmp(p, EX_EQ, ps, bt, &err), ex_expr_cmp(p, EX_GT, pv, bw, &err), &err);
    case R_FALSE: return ex_expr_bool(p, false, &err);
    default: return ex_expr_null(p, T(BOOLEAN), &err);
    }
}

/* SQL three-valued results: 1 TRUE, 0 FALSE, -1 NULL. */
static int cmp3(const pa_column *a, int64_t ra, const pa_column *b, int64_t rb, int op)
{
    if (!hj_bit(a->validity, ra) || !hj_bit(b->validity, rb))
        return -1;
    if (a->type.id == PA_TYPE_VARCHAR) {
        int32_t la = a->offsets[ra + 1] - a->offsets[ra], lb = b->offsets[rb + 1] - b->offsets[rb];
        return la == lb && !memcmp((const char *)a->data + a->offsets[ra], (const char *)b->data + b->offsets[rb],
                                   (size_t)la);
    }
    int64_t x = ((const int64_t *)a->data)[ra], y = ((const int64_t *)b->data)[rb];
    return op < 0 ? x < y : x > y;
}

static int resid_ref(resid r, int64_t i, int64_t j)
{
    switch (r) {
    case R_NONE: return 1;
    case R_LT: return cmp3(&P[1], i, &B[1], j, -1);
    case R_OR: {
        int a = cmp3(&P[2], i, &B[2], j, 0), b = cmp3(&P[1], i, &B[1], j, 1);
        return a == 1 || b == 1 ? 1 : a < 0 || b < 0 ? -1 : 0;
    }
    case R_FALSE: return 0;
    default: return -1;
    }
}

/* Key comparison over n_keys of (pk=bk, ps=bt): FALSE if a component is
 * unequal, else NULL if one is NULL, else TRUE (no keys: TRUE). */
static int keys_ref(int n_keys, int64_t i, int64_t j)
{
    int res = 1;
    for (int k = 0; k < n_keys; k++) {
        const pa_column *a = k == 0 ? &P[0] : &P[2], *b = k == 0 ? &B[0] : &B[2];
        int e = hj_eq1(a, i, b, j);
        if (e == 0)
            return 0;
        if (e < 0)
            res = -1;
    }
    return res;
}

static const int bout[2] = {2, 0};   /* bt, bk: bw (read by the residuals) is not an output */

/* Nested-loop reference over the first np probe and nb build rows. */
static void reference(ex_join_type type, int n_keys, resid r, int64_t np, int64_t nb, lines *ls)
{
    for (int64_t i = 0; i < np; i++) {
        char probe[1024] = "";
        for (int c = 0; c < PC; c++)
            cat_value(probe, &P[c], i);
        bool any_true = false, any_null = false, unknown = false;
        for (int64_t j = 0; j < nb; j++) {
            int k = keys_ref(n_keys, i, j);
            unknown |= k < 0;
            if (k != 1)
                continue;
            int e = resid_ref(r, i, j);
            any_null |= e < 0;
            if (e != 1)
                continue;
            any_true = true;
            if (type == EX_JOIN_INNER || type == EX_JOIN_LEFT) {
                char line[2048];
                strcpy(line, probe);
                for (int c = 0; c < 2; c++)
                    cat_value(line, &B[bout[c]], j);
                lines_add(ls, line);
            }
        }
        char line[2048];
        strcpy(line, probe);
        if (type == EX_JOIN_LEFT && !any_true) {
            cat_text(line, "NULL");
            cat_text(line, "NULL");
            lines_add(ls, line);
        } else if ((type == EX_JOIN_SEMI && any_true) || (type == EX_JOIN_ANTI && !any_true)) {
            lines_add(ls, line);
        } else if (type == EX_JOIN_MARK) {
            cat_text(line, any_true ? "true" : any_null || unknown ? "NULL" : "false");
            lines_add(ls, line);
        }
    }
    if (ls->n > 1)
        qsort(ls->l, (size_t)ls->n, sizeof *ls->l, cmp_str);
}

static const char *const type_names[] = {"inner", "left", "semi", "anti", "mark"};
static int join_runs;

static void run_join(dv_device *d, ex_join_type type, int n_keys, resid rs, int64_t np, int64_t nb, ex_mode mode,
                     int threads, const lines *want)
{
    static const int pk[2] = {0, 2}, bk[2] = {0, 2};
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    ex_op *ps = make_src(p, P, pnames, PC, np, 50), *bs = make_src(p, B, bnames, BC, nb, 13), *j;
    ex_expr *res = make_resid(p, rs);
    assert_true(rs == R_NONE || res);
    OK(ex_hash_join_cond(p, ps, bs, type, pk, bk, n_keys, bout, 2, res, &j, &err));
    /* Small chunks: batches of 64 pairs, cut within a probe row's pairs. */
    ex_run_options o = {.dev = d, .mode = mode, .threads = threads, .chunk_rows = 64};
    ex_result *r;
    OK(ex_run(p, j, &o, &r, &err));
    lines got = {0};
    result_lines(r, &got);
    char what[192];
    snprintf(what, sizeof what, "%s join, %d keys, residual %s, %lld x %lld rows, %s, %d threads", type_names[type],
             n_keys, resid_names[rs], (long long)np, (long long)nb, ex_mode_name(mode), threads);
    assert_same(&got, want, what);
    join_runs++;
    lines_free(&got);
    ex_result_destroy(r);
    ex_plan_destroy(p);
}

static void check_join(int n_keys)
{
    dv_device *d = hj_open(0);
    static const int64_t sizes[][2] = {{NP, NB}, {NP, 1}, {NP, 0}, {0, NB}, {1, 7}, {NP, NB_VALID_KEYS}};
    for (int type = EX_JOIN_INNER; type <= EX_JOIN_MARK; type++)
        for (int rs = R_NONE; rs < R__N; rs++)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                lines want = {0};
                reference(type, n_keys, rs, sizes[s][0], sizes[s][1], &want);
                for (int mode = EX_MODE_OVERLAPPED; mode <= EX_MODE_BLOCKING; mode++)
                    for (int threads = 1; threads <= 2; threads++)
                        if (s == 0 || (mode == EX_MODE_OVERLAPPED && threads == 2))
                            run_join(d, type, n_keys, rs, sizes[s][0], sizes[s][1], mode, threads, &want);
                lines_free(&want);
            }
    pa_mempool_stats ds;
    dv_memory_stats(d, &ds, NULL);
    assert_int_equal(ds.current, 0);   /* every run gave its memory back */
    dv_close(d);
    print_message("%d keys: %d joins checked\n", n_keys, join_runs);
}

static void test_join_no_keys(void **state) { check_join(0); }
static void test_join_one_key_residual(void **state) { check_join(1); }
static void test_join_two_keys_residual(void **state) { check_join(2); }

/* The reference's own sanity: the data makes every case non-trivial. */
static void test_join_reference_nontrivial(void **state)
{
    for (int type = EX_JOIN_INNER; type <= EX_JOIN_MARK; type++)
        for (int n_keys = 0; n_keys <= 2; n_keys++) {
            lines a = {0}, b = {0};
            reference(type, n_keys, R_LT, NP, type == EX_JOIN_MARK ? NB_VALID_KEYS : NB, &a);
            reference(type, n_keys, R_NONE, NP, NB, &b);
            assert_true(a.n > 0);
            if (type == EX_JOIN_INNER)
                assert_true(a.n < b.n);   /* the residual removes pairs */
            if (type == EX_JOIN_MARK) {   /* TRUE, FALSE and NULL marks all occur */
                int seen[3] = {0};
                for (int64_t i = 0; i < a.n; i++) {
                    const char *m = strrchr(a.l[i], '|') + 1;
                    seen[!strcmp(m, "true") ? 0 : !strcmp(m, "false") ? 1 : 2]++;
                }
                assert_true(seen[0] > 0 && seen[2] > 0);
                if (n_keys)
                    assert_true(seen[1] > 0);
            }
            lines_free(&a);
            lines_free(&b);
        }
}

/* Builder checks and output schema. */
static void test_join_builder(void **state)
{
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    ex_op *ps = make_src(p, P, pnames, PC, NP, 50), *bs = make_src(p, B, bnames, BC, NB, 13), *j = NULL;
    /* Not BOOLEAN. */
    ex_expr *num = ex_expr_col_typed(p, 1, T(BIGINT), &err);
    assert_int_equal(ex_hash_join_cond(p, ps, bs, EX_JOIN_INNER, NULL, NULL, 0, bout, 2, num, &j, &err), PA_EINVAL);
    /* A column beyond the pair schema. */
    pa_err_clear(&err);
    ex_expr *far = ex_expr_cmp(p, EX_LT, ex_expr_col_typed(p, 6, T(BIGINT), &err),
                               ex_expr_col_typed(p, 1, T(BIGINT), &err), &err);
    assert_int_not_equal(ex_hash_join_cond(p, ps, bs, EX_JOIN_INNER, NULL, NULL, 0, bout, 2, far, &j, &err), PA_OK);
    /* A column whose type differs from the pair schema's. */
    pa_err_clear(&err);
    ex_expr *wrong = ex_expr_cmp(p, EX_LT, ex_expr_col_typed(p, 0, T(BIGINT), &err),
                                 ex_expr_col_typed(p, 1, T(BIGINT), &err), &err);
    assert_int_not_equal(ex_hash_join_cond(p, ps, bs, EX_JOIN_INNER, NULL, NULL, 0, bout, 2, wrong, &j, &err), PA_OK);
    /* ex_hash_join still needs keys; ex_hash_join_cond takes 0..32. */
    pa_err_clear(&err);
    assert_int_equal(ex_hash_join(p, ps, bs, EX_JOIN_INNER, NULL, NULL, 0, bout, 2, &j, &err), PA_EINVAL);
    pa_err_clear(&err);
    OK(ex_hash_join_cond(p, ps, bs, EX_JOIN_MARK, NULL, NULL, 0, NULL, 0, make_resid(p, R_LT), &j, &err));
    assert_int_equal(ex_op_columns(j), PC + 1);
    assert_string_equal(ex_op_column_name(j, PC), "mark");
    OK(ex_hash_join_cond(p, ps, bs, EX_JOIN_LEFT, NULL, NULL, 0, bout, 2, NULL, &j, &err));
    assert_int_equal(ex_op_columns(j), PC + 2);
    assert_string_equal(ex_op_column_name(j, PC), "bt");
    assert_int_equal(ex_op_column_type(j, PC + 1).id, PA_TYPE_BIGINT);
    ex_plan_destroy(p);
}

/* Scalar subquery shape: lineitem rows whose l_quantity is above the
 * average, as a key-less join with the aggregate's one row and a residual,
 * checked against the same count with the average run first and used as a
 * constant. */
static void test_join_scalar_subquery(void **state)
{
    dv_device *d = hj_open(0);
    const char *qcol[1] = {"l_quantity"};
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    ex_op *agg, *j, *cnt;
    ex_agg avg = {EX_AGG_AVG, 0};
    OK(ex_aggregate(p, scan(p, "lineitem.parquet", qcol, 1, NULL, 0), NULL, 0, &avg, 1, NULL, &agg, &err));
    ex_result *r = run(d, p, agg, EX_MODE_OVERLAPPED, 2);
    double mean = ((const double *)r->chunks[0]->columns[0].data)[0];
    ex_result_destroy(r);
    ex_plan_destroy(p);
    assert_true(mean > 20 && mean < 30);

    char *want;
    OK(ex_plan_create(&p, &err));
    ex_op *sc = scan(p, "lineitem.parquet", qcol, 1, NULL, 0), *f;
    OK(ex_filter(p, sc,
                 ex_expr_cmp(p, EX_GT, ex_expr_col(p, sc, 0, &err), ex_expr_double(p, mean, &err), &err), &f,
                 &err));
    ex_agg cs = {EX_AGG_COUNT_STAR, 0};
    OK(ex_aggregate(p, f, NULL, 0, &cs, 1, NULL, &cnt, &err));
    want = run_text(d, p, cnt, EX_MODE_OVERLAPPED, 2);
    assert_true(atoll(want) > 1000);

    for (int mode = EX_MODE_OVERLAPPED; mode <= EX_MODE_BLOCKING; mode++)
        for (int threads = 1; threads <= 2; threads++) {
            OK(ex_plan_create(&p, &err));
            ex_op *li = scan(p, "lineitem.parquet", qcol, 1, NULL, 0);
            OK(ex_aggregate(p, scan(p, "lineitem.parquet", qcol, 1, NULL, 0), NULL, 0, &avg, 1, NULL, &agg, &err));
            /* pair schema: 0 l_quantity (DECIMAL), 1 avg (DOUBLE) */
            pa_type qt = ex_op_column_type(li, 0);
            ex_expr *gt = ex_expr_cmp(p, EX_GT, ex_expr_col_typed(p, 0, qt, &err),
                                      ex_expr_col_typed(p, 1, T(DOUBLE), &err), &err);
            OK(ex_hash_join_cond(p, li, agg, EX_JOIN_INNER, NULL, NULL, 0, NULL, 0, gt, &j, &err));
            OK(ex_aggregate(p, j, NULL, 0, &cs, 1, NULL, &cnt, &err));
            char *got = run_text(d, p, cnt, mode, threads);
            assert_string_equal(got, want);
            free(got);
        }
    free(want);
    dv_close(d);
}

/* ======================================================== cancellation */

typedef struct canceler {
    volatile sig_atomic_t *flag;
    unsigned delay_ms;
    uint64_t set_at;
} canceler;

static void *cancel_later(void *arg)
{
    canceler *c = arg;
    usleep(c->delay_ms * 1000);
    c->set_at = now_ns();
    __atomic_store_n(c->flag, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* A query that runs for minutes: a semi join of 200k x 50k rows without
 * keys whose residual (bw < -100000) is never TRUE. */
static void test_cancel_long_join(void **state)
{
    dv_device *d = hj_open(0);
    enum { BP = 200000, BB = 50000 };
    hj_rng rg = {5};
    pa_column bp[PC], bb[BC];
    bp[0] = hj_gen(&rg, T(INTEGER), BP, 6, 0, 0.1);
    bp[1] = hj_gen(&rg, T(BIGINT), BP, 50, 0, 0.1);
    bp[2] = hj_gen(&rg, T(VARCHAR), BP, 4, 0, 0.1);
    bb[0] = hj_gen(&rg, T(BIGINT), BB, 6, 0, 0.1);
    bb[1] = hj_gen(&rg, T(BIGINT), BB, 50, 0, 0.1);
    bb[2] = hj_gen(&rg, T(VARCHAR), BB, 4, 0, 0.1);
    for (int mode = EX_MODE_OVERLAPPED; mode <= EX_MODE_BLOCKING; mode++) {
        ex_plan *p;
        OK(ex_plan_create(&p, &err));
        ex_op *ps = make_src(p, bp, pnames, PC, BP, 4096), *bs = make_src(p, bb, bnames, BC, BB, 4096), *j;
        ex_expr *never = ex_expr_cmp(p, EX_LT, ex_expr_col_typed(p, 4, T(BIGINT), &err),
                                     ex_expr_bigint(p, -100000, &err), &err);
        OK(ex_hash_join_cond(p, ps, bs, EX_JOIN_SEMI, NULL, NULL, 0, NULL, 0, never, &j, &err));
        volatile sig_atomic_t flag = 0;
        canceler c = {&flag, 150, 0};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, cancel_later, &c), 0);
        ex_run_options o = {.dev = d, .mode = mode, .threads = 2, .cancel = &flag};
        ex_result *r = NULL;
        pa_err_clear(&err);
        int rc = ex_run(p, j, &o, &r, &err);
        uint64_t back = now_ns();
        pthread_join(t, NULL);
        assert_int_equal(rc, PA_ECANCELED);
        assert_null(r);
        assert_non_null(strstr(err.msg, "query canceled"));
        double ms = (double)(back - c.set_at) * 1e-6;
        print_message("cancel (%s): returned %.1f ms after the flag was set\n", ex_mode_name(mode), ms);
        assert_true(ms < 100.0 * (getenv("PISTA_SLOW_OK") ? 10 : 3));   /* slack for sanitizers */
        ex_plan_destroy(p);
        pa_mempool_stats ds;
        dv_memory_stats(d, &ds, NULL);
        assert_int_equal(ds.current, 0);   /* everything freed */
    }
    /* The device is usable: a join on the same device runs to its answer. */
    lines want = {0};
    reference(EX_JOIN_SEMI, 1, R_LT, NP, NB, &want);
    run_join(d, EX_JOIN_SEMI, 1, R_LT, NP, NB, EX_MODE_OVERLAPPED, 2, &want);
    lines_free(&want);
    for (int k = 0; k < PC; k++)
        hj_free(&bp[k]);
    for (int k = 0; k < BC; k++)
        hj_free(&bb[k]);
    dv_close(d);
}

/* A flag set before the run: nothing runs; a flag left at 0 changes nothing. */
static void test_cancel_before_and_never(void **state)
{
    dv_device *d = hj_open(0);
    const char *cols[2] = {"l_orderkey", "l_quantity"};
    for (int mode = EX_MODE_OVERLAPPED; mode <= EX_MODE_BLOCKING; mode++)
        for (int set = 0; set <= 1; set++) {
            ex_plan *p;
            OK(ex_plan_create(&p, &err));
            ex_op *s = scan(p, "lineitem.parquet", cols, 2, NULL, 0), *a;
            ex_agg cs = {EX_AGG_COUNT_STAR, 0};
            OK(ex_aggregate(p, s, NULL, 0, &cs, 1, NULL, &a, &err));
            volatile sig_atomic_t flag = set;
            ex_run_options o = {.dev = d, .mode = mode, .threads = 2, .cancel = &flag};
            ex_result *r = NULL;
            pa_err_clear(&err);
            int rc = ex_run(p, a, &o, &r, &err);
            if (set) {
                assert_int_equal(rc, PA_ECANCELED);
                assert_null(r);
            } else {
                assert_int_equal(rc, PA_OK);
                assert_int_equal(((const int64_t *)r->chunks[0]->columns[0].data)[0], 60175);
                ex_result_destroy(r);
            }
            ex_plan_destroy(p);
        }
    pa_mempool_stats ds;
    dv_memory_stats(d, &ds, NULL);
    assert_int_equal(ds.current, 0);
    dv_close(d);
}

/* ============================================================ progress */

static void test_progress(void **state)
{
    dv_device *d = hj_open(0);
    const char *lc[2] = {"l_orderkey", "l_shipdate"}, *oc[1] = {"o_orderkey"};
    for (int mode = EX_MODE_OVERLAPPED; mode <= EX_MODE_BLOCKING; mode++) {
        /* lineitem (60175 rows, filtered to the last months in the scan:
         * the row groups before are pruned) joined with orders (15000). */
        ex_plan *p;
        OK(ex_plan_create(&p, &err));
        pq_pred late = {"l_shipdate", PQ_OP_GE, "1998-08-01"};
        ex_op *li = scan(p, "lineitem-rowgroup10000.parquet", lc, 2, &late, 1);
        ex_op *od = scan(p, "orders.parquet", oc, 1, NULL, 0), *j;
        int pk = 0, bk = 0;
        OK(ex_hash_join(p, li, od, EX_JOIN_SEMI, &pk, &bk, 1, NULL, 0, &j, &err));
        ex_progress pr;
        atomic_init(&pr.rows_scanned, 0);
        atomic_init(&pr.rows_total, 0);
        ex_run_options o = {.dev = d, .mode = mode, .threads = 2, .progress = &pr};
        ex_result *r;
        OK(ex_run(p, j, &o, &r, &err));
        assert_true(r->n_rows > 0 && r->n_rows < 60175);
        assert_int_equal(atomic_load(&pr.rows_total), 60175 + 15000);
        assert_int_equal(atomic_load(&pr.rows_scanned), 60175 + 15000);
        ex_result_destroy(r);
        ex_plan_destroy(p);
    }
    /* A LIMIT that stops its scan early: counted rows never exceed the total. */
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    ex_op *li = scan(p, "lineitem-rowgroup10000.parquet", lc, 2, NULL, 0), *l;
    OK(ex_limit(p, li, 10, 0, &l, &err));
    ex_progress pr;
    atomic_init(&pr.rows_scanned, 0);
    atomic_init(&pr.rows_total, 0);
    ex_run_options o = {.dev = d, .mode = EX_MODE_CHUNKED, .threads = 1, .progress = &pr, .queue_chunks = 1};
    ex_result *r;
    OK(ex_run(p, l, &o, &r, &err));
    assert_int_equal(r->n_rows, 10);
    assert_int_equal(atomic_load(&pr.rows_total), 60175);
    assert_true(atomic_load(&pr.rows_scanned) > 0 && atomic_load(&pr.rows_scanned) <= 60175);
    ex_result_destroy(r);
    ex_plan_destroy(p);
    dv_close(d);
}

/* ============================================================ EXPLAIN */

static char *explain_text(const ex_plan *p, const ex_op *root, const ex_result *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_int_equal(ex_explain(p, root, r, NULL, f), PA_OK);
    fclose(f);
    return text;
}

static void test_explain_estimates(void **state)
{
    dv_device *d = hj_open(0);
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    const char *rc_[2] = {"r_regionkey", "r_name"}, *nc[2] = {"n_regionkey", "n_name"};
    ex_op *n = scan(p, "nation.parquet", nc, 2, NULL, 0), *rg = scan(p, "region.parquet", rc_, 2, NULL, 0), *j;
    int pk = 0, bk = 0, out = 1;
    OK(ex_hash_join(p, n, rg, EX_JOIN_INNER, &pk, &bk, 1, &out, 1, &j, &err));
    ex_op_set_estimate(j, 24.6);
    ex_op_set_estimate(rg, 5);
    char *t = explain_text(p, j, NULL);
    assert_non_null(strstr(t, "HASH_JOIN inner  [p0,p1]  ~25 rows"));
    assert_non_null(strstr(t, "SCAN region.parquet  [p0]  ~5 rows"));
    assert_non_null(strstr(t, "SCAN nation.parquet  [p1]  est 25"));   /* no planner estimate: the guess */
    free(t);
    ex_op_set_estimate(rg, -1);   /* cleared */
    t = explain_text(p, j, NULL);
    assert_non_null(strstr(t, "SCAN region.parquet  [p0]  est 5"));
    free(t);
    ex_op_set_estimate(n, 3e20);
    t = explain_text(p, j, NULL);
    assert_non_null(strstr(t, "~3e+20 rows"));
    free(t);
    ex_op_set_estimate(n, 25);
    ex_result *r = run(d, p, j, EX_MODE_OVERLAPPED, 2);
    t = explain_text(p, j, r);
    assert_non_null(strstr(t, "HASH_JOIN inner  [p0,p1]  ~25 rows  rows 30 -> 25"));
    assert_non_null(strstr(t, "mode: overlapped"));
    free(t);
    ex_result_destroy(r);
    ex_plan_destroy(p);
    dv_close(d);
}

/* ============================================================ constants */

static void check_text(ex_expr *e, const char *want)
{
    char buf[128];
    assert_non_null(e);
    assert_int_equal(ex_expr_const_text(e, buf, sizeof buf), PA_OK);
    assert_string_equal(buf, want);
}

static void test_const_text(void **state)
{
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    check_text(ex_expr_int(p, 42, &err), "42");
    check_text(ex_expr_int(p, INT32_MIN, &err), "-2147483648");
    check_text(ex_expr_bigint(p, -9000000000123LL, &err), "-9000000000123");
    check_text(ex_expr_decimal(p, "0.05", &err), "0.05");
    check_text(ex_expr_decimal(p, "-0.055", &err), "-0.055");
    check_text(ex_expr_decimal_scaled(p, -1200, 6, 2, &err), "-12.00");
    check_text(ex_expr_decimal(p, "12345678901234567890.123456789", &err), "12345678901234567890.123456789");
    check_text(ex_expr_date(p, "1998-12-01", &err), "1998-12-01");
    check_text(ex_expr_date(p, "1970-01-01", &err), "1970-01-01");
    check_text(ex_expr_double(p, 0.1, &err), "0.10000000000000001");
    check_text(ex_expr_double(p, -2.5, &err), "-2.5");
    check_text(ex_expr_varchar(p, "MAIL", &err), "MAIL");
    check_text(ex_expr_varchar(p, "", &err), "");
    check_text(ex_expr_bool(p, true, &err), "true");
    check_text(ex_expr_bool(p, false, &err), "false");
    /* Folded expressions are constants too. */
    check_text(ex_expr_arith(p, EX_ADD, ex_expr_int(p, 1, &err), ex_expr_int(p, 2, &err), &err), "3");
    check_text(ex_expr_date_add(p, ex_expr_date(p, "1994-01-01", &err), 1, EX_YEARS, &err), "1995-01-01");
    check_text(ex_expr_arith(p, EX_SUB, ex_expr_decimal(p, "0.06", &err), ex_expr_decimal(p, "0.01", &err), &err),
               "0.05");
    /* A DOUBLE's text reads back to the same value. */
    double x = 1.0 / 3.0;
    char buf[64];
    assert_int_equal(ex_expr_const_text(ex_expr_double(p, x, &err), buf, sizeof buf), PA_OK);
    assert_true(strtod(buf, NULL) == x);
    /* Not a constant, NULL, too small a buffer. */
    assert_int_equal(ex_expr_const_text(ex_expr_col_typed(p, 0, T(INTEGER), &err), buf, sizeof buf), PA_EINVAL);
    assert_int_equal(ex_expr_const_text(ex_expr_null(p, T(INTEGER), &err), buf, sizeof buf), PA_EINVAL);
    assert_int_equal(ex_expr_const_text(ex_expr_varchar(p, "0123456789", &err), buf, 10), PA_EINVAL);
    assert_int_equal(ex_expr_const_text(ex_expr_varchar(p, "012345678", &err), buf, 10), PA_OK);
    assert_int_equal(ex_expr_const_text(NULL, buf, sizeof buf), PA_EINVAL);
    ex_plan_destroy(p);
}

/* The text as a pushed-down predicate selects what the expression does. */
static void test_const_text_as_predicate(void **state)
{
    dv_device *d = hj_open(0);
    const char *cols[3] = {"l_discount", "l_shipdate", "l_shipmode"};
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    char v1[64], v2[64], v3[64];
    OK(ex_expr_const_text(ex_expr_decimal(p, "0.05", &err), v1, sizeof v1));
    OK(ex_expr_const_text(ex_expr_date_add(p, ex_expr_date(p, "1994-01-01", &err), 1, EX_YEARS, &err), v2,
                          sizeof v2));
    OK(ex_expr_const_text(ex_expr_varchar(p, "MAIL", &err), v3, sizeof v3));
    pq_pred preds[3] = {{"l_discount", PQ_OP_EQ, v1}, {"l_shipdate", PQ_OP_LT, v2}, {"l_shipmode", PQ_OP_EQ, v3}};
    ex_op *s = scan(p, "lineitem.parquet", cols, 3, preds, 3), *a;
    ex_agg cs = {EX_AGG_COUNT_STAR, 0};
    OK(ex_aggregate(p, s, NULL, 0, &cs, 1, NULL, &a, &err));
    char *pushed = run_text(d, p, a, EX_MODE_OVERLAPPED, 2);

    OK(ex_plan_create(&p, &err));
    s = scan(p, "lineitem.parquet", cols, 3, NULL, 0);
    ex_expr *c1 = ex_expr_cmp(p, EX_EQ, ex_expr_col(p, s, 0, &err), ex_expr_decimal(p, "0.05", &err), &err);
    ex_expr *c2 = ex_expr_cmp(p, EX_LT, ex_expr_col(p, s, 1, &err), ex_expr_date(p, "1995-01-01", &err), &err);
    ex_expr *c3 = ex_expr_cmp(p, EX_EQ, ex_expr_col(p, s, 2, &err), ex_expr_varchar(p, "MAIL", &err), &err);
    ex_op *f;
    OK(ex_filter(p, s, ex_expr_and(p, ex_expr_and(p, c1, c2, &err), c3, &err), &f, &err));
    OK(ex_aggregate(p, f, NULL, 0, &cs, 1, NULL, &a, &err));
    char *filtered = run_text(d, p, a, EX_MODE_OVERLAPPED, 2);
    assert_string_equal(pushed, filtered);
    assert_true(atoll(pushed) > 10);
    free(pushed);
    free(filtered);
    dv_close(d);
}

/* ========================================================== agg types */

static void test_agg_type(void **state)
{
    const pa_type ti = T(INTEGER), tb = T(BIGINT), td = T(DOUBLE), tv = T(VARCHAR), tdt = T(DATE);
    const pa_type dec = hj_type(PA_TYPE_DECIMAL, 12, 2);
    pa_type o;
    OK(ex_agg_type(EX_AGG_SUM, ti, &o, &err));
    assert_int_equal(o.id, PA_TYPE_BIGINT);
    OK(ex_agg_type(EX_AGG_SUM, tb, &o, &err));
    assert_int_equal(o.id, PA_TYPE_BIGINT);
    OK(ex_agg_type(EX_AGG_SUM, dec, &o, &err));
    assert_true(o.id == PA_TYPE_DECIMAL && o.precision == 38 && o.scale == 2);
    OK(ex_agg_type(EX_AGG_SUM, td, &o, &err));
    assert_int_equal(o.id, PA_TYPE_DOUBLE);
    OK(ex_agg_type(EX_AGG_AVG, ti, &o, &err));
    assert_int_equal(o.id, PA_TYPE_DOUBLE);
    OK(ex_agg_type(EX_AGG_AVG, dec, &o, &err));
    assert_int_equal(o.id, PA_TYPE_DOUBLE);
    for (int k = EX_AGG_COUNT; k <= EX_AGG_COUNT_DISTINCT; k++) {
        OK(ex_agg_type(k, tv, &o, &err));
        assert_int_equal(o.id, PA_TYPE_BIGINT);
    }
    OK(ex_agg_type(EX_AGG_MIN, tv, &o, &err));
    assert_int_equal(o.id, PA_TYPE_VARCHAR);
    OK(ex_agg_type(EX_AGG_MAX, dec, &o, &err));
    assert_true(o.id == PA_TYPE_DECIMAL && o.precision == 12 && o.scale == 2);
    OK(ex_agg_type(EX_AGG_MAX, tdt, &o, &err));
    assert_int_equal(o.id, PA_TYPE_DATE);
    pa_err_clear(&err);
    assert_int_equal(ex_agg_type(EX_AGG_SUM, tv, &o, &err), PA_EINVAL);
    assert_non_null(strstr(err.msg, "sum of a VARCHAR"));
    pa_err_clear(&err);
    assert_int_equal(ex_agg_type(EX_AGG_AVG, tdt, &o, &err), PA_EINVAL);
    assert_non_null(strstr(err.msg, "avg of a DATE"));
    pa_err_clear(&err);
    /* ex_aggregate gives the same types and the same errors. */
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    const char *names[4] = {"a", "b", "c", "d"};
    pa_column cols[4] = {{.type = ti}, {.type = dec}, {.type = tv}, {.type = tdt}};
    ex_op *s = make_src(p, cols, names, 4, 0, 1), *a;
    ex_agg aggs[] = {{EX_AGG_SUM, 0}, {EX_AGG_SUM, 1}, {EX_AGG_AVG, 1}, {EX_AGG_MIN, 2}, {EX_AGG_MAX, 3},
                     {EX_AGG_COUNT_DISTINCT, 2}, {EX_AGG_COUNT_STAR, 0}};
    int n = (int)(sizeof aggs / sizeof aggs[0]);
    OK(ex_aggregate(p, s, NULL, 0, aggs, n, NULL, &a, &err));
    for (int i = 0; i < n; i++) {
        OK(ex_agg_type(aggs[i].kind, cols[aggs[i].column].type, &o, &err));
        pa_type got = ex_op_column_type(a, i);
        assert_true(got.id == o.id && got.precision == o.precision && got.scale == o.scale);
    }
    ex_agg bad = {EX_AGG_SUM, 2};
    assert_int_equal(ex_aggregate(p, s, NULL, 0, &bad, 1, NULL, &a, &err), PA_EINVAL);
    assert_non_null(strstr(err.msg, "sum of a VARCHAR"));
    ex_plan_destroy(p);
}

/* ============================================================= VALUES */

/* VALUES (7, 'abc', NULL::BIGINT, 0.05, DATE '1998-12-01', true). */
static ex_op *values6(ex_plan *p)
{
    ex_expr *e[6] = {ex_expr_int(p, 7, &err),          ex_expr_varchar(p, "abc", &err),
                     ex_expr_null(p, T(BIGINT), &err), ex_expr_decimal(p, "0.05", &err),
                     ex_expr_date(p, "1998-12-01", &err), ex_expr_bool(p, true, &err)};
    const char *names[6] = {"i", "s", "n", NULL, "d", "b"};
    ex_op *v;
    OK(ex_values(p, e, names, 6, &v, &err));
    return v;
}

static void test_values_basic(void **state)
{
    dv_device *d = hj_open(0);
    for (int mode = EX_MODE_OVERLAPPED; mode <= EX_MODE_BLOCKING; mode++)
        for (int threads = 1; threads <= 2; threads++) {
            ex_plan *p;
            OK(ex_plan_create(&p, &err));
            ex_op *v = values6(p);
            assert_string_equal(ex_op_column_name(v, 3), "col3");
            assert_int_equal(ex_op_column_type(v, 3).scale, 2);
            char *t = run_text(d, p, v, mode, threads);
            assert_string_equal(t, "7|abc|NULL|0.05|1998-12-01|true\n");
            free(t);
            /* No columns: one row. COUNT(*) = 1; constants projected over it: one row. */
            OK(ex_plan_create(&p, &err));
            ex_op *e0, *a, *pr;
            OK(ex_values(p, NULL, NULL, 0, &e0, &err));
            ex_agg cs = {EX_AGG_COUNT_STAR, 0};
            OK(ex_aggregate(p, e0, NULL, 0, &cs, 1, NULL, &a, &err));
            t = run_text(d, p, a, mode, threads);
            assert_string_equal(t, "1\n");
            free(t);
            OK(ex_plan_create(&p, &err));
            OK(ex_values(p, NULL, NULL, 0, &e0, &err));
            ex_expr *x = ex_expr_arith(p, EX_MUL, ex_expr_int(p, 6, &err), ex_expr_int(p, 7, &err), &err);
            OK(ex_project(p, e0, &x, NULL, 1, &pr, &err));
            t = run_text(d, p, pr, mode, threads);
            assert_string_equal(t, "42\n");
            free(t);
        }
    /* Only constants. */
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    ex_expr *col = ex_expr_col_typed(p, 0, T(INTEGER), &err);
    ex_op *v;
    assert_int_equal(ex_values(p, &col, NULL, 1, &v, &err), PA_EINVAL);
    ex_plan_destroy(p);
    dv_close(d);
}

/* VALUES under every operator. */
static void test_values_under_operators(void **state)
{
    dv_device *d = hj_open(0);
    for (int mode = EX_MODE_OVERLAPPED; mode <= EX_MODE_BLOCKING; mode++)
        for (int threads = 1; threads <= 2; threads++) {
            ex_plan *p;
            ex_op *v, *o, *o2;
            char *t;
            /* FILTER: TRUE keeps the row, FALSE drops it. */
            for (int keep = 0; keep <= 1; keep++) {
                OK(ex_plan_create(&p, &err));
                v = values6(p);
                ex_expr *pred = ex_expr_cmp(p, keep ? EX_EQ : EX_NE, ex_expr_col(p, v, 0, &err),
                                            ex_expr_int(p, 7, &err), &err);
                OK(ex_filter(p, v, pred, &o, &err));
                t = run_text(d, p, o, mode, threads);
                assert_string_equal(t, keep ? "7|abc|NULL|0.05|1998-12-01|true\n" : "");
                free(t);
            }
            /* PROJECT over columns. */
            OK(ex_plan_create(&p, &err));
            v = values6(p);
            ex_expr *pe[2] = {ex_expr_arith(p, EX_ADD, ex_expr_col(p, v, 0, &err), ex_expr_col(p, v, 3, &err), &err),
                              ex_expr_is_null(p, ex_expr_col(p, v, 2, &err), false, &err)};
            OK(ex_project(p, v, pe, NULL, 2, &o, &err));
            t = run_text(d, p, o, mode, threads);
            assert_string_equal(t, "7.05|true\n");
            free(t);
            /* UNION ALL of two VALUES, then SORT, TOPN, LIMIT, RECHUNK, DISTINCT, AGGREGATE. */
            for (int k = 0; k < 6; k++) {
                OK(ex_plan_create(&p, &err));
                ex_op *u[3] = {values6(p), values6(p), NULL};
                ex_expr *e8 = ex_expr_int(p, 8, &err);
                const char *nm = "i";
                ex_op *v8;
                OK(ex_values(p, &e8, &nm, 1, &v8, &err));
                ex_expr *first = ex_expr_col(p, u[0], 0, &err);
                OK(ex_project(p, u[0], &first, NULL, 1, &u[0], &err));
                first = ex_expr_col(p, u[1], 0, &err);
                OK(ex_project(p, u[1], &first, NULL, 1, &u[1], &err));
                u[2] = v8;
                OK(ex_union_all(p, u, 3, &o, &err));
                ex_sort_key key = {0, true, true};
                const char *want = NULL;
                switch (k) {
                case 0: OK(ex_sort(p, o, &key, 1, &o2, &err)); want = "8\n7\n7\n"; break;
                case 1: OK(ex_topn(p, o, &key, 1, 2, 0, &o2, &err)); want = "8\n7\n"; break;
                case 2: OK(ex_limit(p, o, 5, 0, &o2, &err)); want = NULL; break;
                case 3: OK(ex_rechunk(p, o, 0, &o2, &err)); want = NULL; break;
                case 4: {
                    ex_op *ds;
                    OK(ex_distinct(p, o, &ds, &err));
                    OK(ex_sort(p, ds, &key, 1, &o2, &err));
                    want = "8\n7\n";
                    break;
                }
                default: {
                    int g = 0;
                    ex_agg cs = {EX_AGG_COUNT_STAR, 0};
                    ex_op *ag;
                    OK(ex_aggregate(p, o, &g, 1, &cs, 1, NULL, &ag, &err));
                    OK(ex_sort(p, ag, &key, 1, &o2, &err));
                    want = "8|1\n7|2\n";
                    break;
                }
                }
                ex_result *r = run(d, p, o2, mode, threads);
                assert_int_equal(r->n_rows, 3 - (k == 1 || k == 4 || k == 5));
                if (want) {
                    t = result_text(r);
                    assert_string_equal(t, want);
                    free(t);
                }
                ex_result_destroy(r);
                ex_plan_destroy(p);
            }
        }
    dv_close(d);
}

/* VALUES on either side of a join: with region (5 rows) by key, without
 * keys (a cross product with one row), and against each other. */
static void test_values_join_sides(void **state)
{
    dv_device *d = hj_open(0);
    const char *rc_[2] = {"r_regionkey", "r_name"};
    for (int mode = EX_MODE_OVERLAPPED; mode <= EX_MODE_BLOCKING; mode++)
        for (int threads = 1; threads <= 2; threads++) {
            for (int side = 0; side < 2; side++)
                for (int keyed = 0; keyed < 2; keyed++) {
                    ex_plan *p;
                    OK(ex_plan_create(&p, &err));
                    ex_expr *e[2] = {ex_expr_bigint(p, 2, &err), ex_expr_varchar(p, "x", &err)};
                    const char *nm[2] = {"k", "tag"};
                    ex_op *v, *rg = scan(p, "region.parquet", rc_, 2, NULL, 0), *j, *s;
                    OK(ex_values(p, e, nm, 2, &v, &err));
                    int vk = 0, rk = 0, out[2] = {1, 0};
                    ex_sort_key key = {side == 0 ? 0 : 3, false, false};
                    if (side == 0)   /* region probes, VALUES builds */
                        OK(ex_hash_join_cond(p, rg, v, EX_JOIN_INNER, &rk, &vk, keyed, out, 1, NULL, &j, &err));
                    else
                        OK(ex_hash_join_cond(p, v, rg, EX_JOIN_INNER, &vk, &rk, keyed, out, 2, NULL, &j, &err));
                    OK(ex_sort(p, j, &key, 1, &s, &err));
                    char *t = run_text(d, p, s, mode, threads);
                    const char *want = side == 0 ? (keyed ? "2|ASIA|x\n"
                                                          : "0|AFRICA|x\n1|AMERICA|x\n2|ASIA|x\n3|EUROPE|x\n"
                                                            "4|MIDDLE EAST|x\n")
                                                 : (keyed ? "2|x|ASIA|2\n"
                                                          : "2|x|AFRICA|0\n2|x|AMERICA|1\n2|x|ASIA|2\n"
                                                            "2|x|EUROPE|3\n2|x|MIDDLE EAST|4\n");
                    if (strcmp(t, want) != 0)
                        fail_msg("side %d keyed %d %s: got\n%swant\n%s", side, keyed, ex_mode_name(mode), t, want);
                    free(t);
                }
            /* VALUES x VALUES, and a MARK join of VALUES IN (region keys). */
            ex_plan *p;
            OK(ex_plan_create(&p, &err));
            ex_op *a = values6(p), *b = values6(p), *j;
            int out = 1;
            OK(ex_hash_join_cond(p, a, b, EX_JOIN_LEFT, NULL, NULL, 0, &out, 1, NULL, &j, &err));
            char *t = run_text(d, p, j, mode, threads);
            assert_string_equal(t, "7|abc|NULL|0.05|1998-12-01|true|abc\n");
            free(t);
            OK(ex_plan_create(&p, &err));
            ex_expr *e9 = ex_expr_bigint(p, 9, &err);
            ex_op *v9, *rg = scan(p, "region.parquet", rc_, 1, NULL, 0);
            OK(ex_values(p, &e9, NULL, 1, &v9, &err));
            int k0 = 0;
            OK(ex_hash_join_cond(p, v9, rg, EX_JOIN_MARK, &k0, &k0, 1, NULL, 0, NULL, &j, &err));
            t = run_text(d, p, j, mode, threads);
            assert_string_equal(t, "9|false\n");
            free(t);
        }
    dv_close(d);
}

/* Regression (found by the SQL differential test): a program whose CONST
 * instruction names a constant index at or beyond the register count
 * (CASE over an IN list of several constants) passed compilation but failed
 * kn_program_check. */
static void test_case_over_in_list(void **state)
{
    dv_device *d = hj_open(0);
    int32_t v[6] = {1, 2, 3, 4, 5, 6};
    pa_column c = {.type = T(INTEGER), .length = 6, .data = v};
    const char *nm = "x";
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    ex_op *s = make_src(p, &c, &nm, 1, 6, 6), *pr;
    ex_expr *list[5];
    const int lv[5] = {1, 3, 6, 4, 18};
    for (int i = 0; i < 5; i++)
        list[i] = ex_expr_int(p, lv[i], &err);
    ex_expr *in = ex_expr_in(p, ex_expr_col(p, s, 0, &err), list, 5, false, &err);
    ex_expr *yes = ex_expr_varchar(p, "yes", &err), *e[2];
    e[0] = ex_expr_col(p, s, 0, &err);
    e[1] = ex_expr_case(p, &in, &yes, 1, ex_expr_varchar(p, "no", &err), &err);
    OK(ex_project(p, s, e, NULL, 2, &pr, &err));
    char *t = run_text(d, p, pr, EX_MODE_OVERLAPPED, 1);
    assert_string_equal(t, "1|yes\n2|no\n3|yes\n4|yes\n5|no\n6|yes\n");
    free(t);
    dv_close(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_join_reference_nontrivial),
        cmocka_unit_test(test_join_builder),
        cmocka_unit_test(test_join_no_keys),
        cmocka_unit_test(test_join_one_key_residual),
        cmocka_unit_test(test_join_two_keys_residual),
        cmocka_unit_test(test_join_scalar_subquery),
        cmocka_unit_test(test_cancel_long_join),
        cmocka_unit_test(test_cancel_before_and_never),
        cmocka_unit_test(test_progress),
        cmocka_unit_test(test_explain_estimates),
        cmocka_unit_test(test_const_text),
        cmocka_unit_test(test_const_text_as_predicate),
        cmocka_unit_test(test_agg_type),
        cmocka_unit_test(test_values_basic),
        cmocka_unit_test(test_values_under_operators),
        cmocka_unit_test(test_values_join_sides),
        cmocka_unit_test(test_case_over_in_list),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
