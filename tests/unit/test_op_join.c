/*
 * test_op_join.c - the HASH_JOIN operator through ex_run: every join type
 * (INNER, LEFT, SEMI, ANTI, MARK) on single and multi-column keys (INTEGER
 * probe against BIGINT build, VARCHAR) with NULLs, duplicates and skew,
 * against a nested-loop reference written here; every execution mode with
 * one and several workers (build segments of several workers combined);
 * fan-out far beyond one output chunk; the builder's checks and output
 * schema; a memory limit that fails naming HASH_JOIN with the device usable
 * afterwards; and supplier x nation x region from the TPC-H Parquet files
 * checked against numbers from DuckDB.
 */
#include "hj_testutil.h"

#include "exec/exec_int.h"

static pa_err err;

#define OK(call)                                                                                \
    do {                                                                                        \
        int rc_ = (call);                                                                       \
        if (rc_ != PA_OK)                                                                       \
            fail_msg("%s -> %s: %s", #call, pa_status_name(rc_), err.msg);                      \
    } while (0)

#define T(id) hj_type(PA_TYPE_##id, 0, 0)

/* ------------------------------------- a source over host-memory columns */

typedef struct host_src {
    const pa_column *cols;    /* host columns, rows each */
    int64_t rows, per_chunk;
    int64_t next;             /* atomic */
} host_src;

static void copy_rows(const pa_column *s, int64_t first, int64_t n, pa_column *d)
{
    if (s->validity)
        for (int64_t i = 0; i < n; i++)
            hj_setbit(d->validity, i, hj_bit(s->validity, first + i));
    if (s->type.id == PA_TYPE_VARCHAR) {
        int32_t b0 = s->offsets[first];
        for (int64_t i = 0; i <= n; i++)
            d->offsets[i] = s->offsets[first + i] - b0;
        memcpy(d->data, (const char *)s->data + b0, (size_t)d->offsets[n]);
    } else {
        size_t w = (size_t)pa_type_bytes(s->type);
        memcpy(d->data, (const char *)s->data + (size_t)first * w, (size_t)n * w);
    }
}

/* Up to the device: n bytes of host memory into a new buffer of chunk c
 * (written in the order of w's stream; the test never touches device
 * memory itself). */
static int put(ex_op *op, ex_worker *w, dv_chunk *c, const void *host, size_t n, void **dst, pa_err *e)
{
    int rc = ex_chunk_alloc(op, c, n ? n : 1, dst, e);
    return rc == PA_OK ? ex_to_device(op, w, *dst, host, n, e) : rc;
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
    if (rc)
        return rc;
    c->length = n;
    for (int k = 0; k < op->n_cols && rc == PA_OK; k++) {
        const pa_column *sc = &s->cols[k];
        pa_column *d = &c->columns[k];
        d->type = sc->type;
        d->length = n;
        size_t bytes = sc->type.id == PA_TYPE_VARCHAR ? (size_t)(sc->offsets[first + n] - sc->offsets[first])
                                                      : (size_t)n * (size_t)pa_type_bytes(sc->type);
        /* The rows on the host first. */
        pa_column h = {.type = sc->type, .length = n};
        h.data = malloc(bytes + 1);
        h.validity = sc->validity ? calloc((size_t)n / 8 + 1, 1) : NULL;
        h.offsets = sc->offsets ? malloc((size_t)(n + 1) * 4) : NULL;
        copy_rows(sc, first, n, &h);
        /* Chunks without a NULL come without a bitmap, as from a scan: a
         * column then mixes chunks with and without validity. */
        bool all_valid = true;
        for (int64_t i = 0; h.validity && i < n; i++)
            all_valid &= hj_bit(h.validity, i);
        rc = put(op, w, c, h.data, bytes, &d->data, e);
        if (rc == PA_OK && h.validity && !all_valid)
            rc = put(op, w, c, h.validity, (size_t)n / 8 + 1, (void **)&d->validity, e);
        if (rc == PA_OK && h.offsets)
            rc = put(op, w, c, h.offsets, (size_t)(n + 1) * 4, (void **)&d->offsets, e);
        free(h.data);
        free(h.validity);
        free(h.offsets);
    }
    if (rc != PA_OK) {
        dv_chunk_destroy(c);
        return rc;
    }
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

/* ------------------------------------------------------- result helpers */

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

static void fmt_cat(char *line, const pa_column *c, int64_t row)
{
    char buf[256];
    pa_format_value(c, row, PA_FMT_FULL, buf, sizeof buf);
    if (*line)
        strcat(line, "|");
    strcat(line, buf);
}

/* A NULL (valid == false), TRUE or FALSE of type t formatted as the result
 * would show it. */
static void fmt_cat_const(char *line, pa_type t, bool valid, bool value)
{
    uint8_t v = value, val = valid;
    int32_t offs[2] = {0, 0};
    uint8_t data[16] = {v};
    pa_column c = {.type = t, .length = 1, .data = data, .offsets = offs, .validity = &val};
    fmt_cat(line, &c, 0);
}

static void result_lines(const ex_result *r, lines *ls)
{
    for (int c = 0; c < r->n_chunks; c++) {
        dv_chunk *ch = r->chunks[c];
        for (int64_t i = 0; i < ch->length; i++) {
            char line[2048] = "";
            for (int k = 0; k < ch->n_columns; k++)
                fmt_cat(line, &ch->columns[k], i);
            lines_add(ls, line);
        }
    }
    assert_int_equal(ls->n, r->n_rows);
    qsort(ls->l, (size_t)ls->n, sizeof *ls->l, cmp_str);
}

static void assert_same_lines(const lines *got, const lines *want, const char *what)
{
    if (got->n != want->n)
        fail_msg("%s: %lld rows, reference %lld", what, (long long)got->n, (long long)want->n);
    for (int64_t i = 0; i < got->n; i++)
        if (strcmp(got->l[i], want->l[i]) != 0)
            fail_msg("%s: row %lld is '%s', reference '%s'", what, (long long)i, got->l[i], want->l[i]);
}

/* ------------------------------------------------------- the test tables */

enum { NP = 1500, NB = 400, PCOLS = 3, BCOLS = 4 };
static pa_column P[PCOLS], B[BCOLS];
static const char *const pnames[PCOLS] = {"k", "s", "x"};
static const char *const bnames[BCOLS] = {"bk", "bs", "name", "v"};

static int setup(void **state)
{
    hj_rng r = {2024};
    P[0] = hj_gen(&r, T(INTEGER), NP, 60, 0.2, 0.1);
    P[1] = hj_gen(&r, T(VARCHAR), NP, 4, 0.0, 0.1);
    P[2] = hj_gen(&r, T(BIGINT), NP, 1000000, 0.0, 0.0);
    B[0] = hj_gen(&r, T(BIGINT), NB, 60, 0.2, 0.1);   /* BIGINT build key vs INTEGER probe key */
    B[1] = hj_gen(&r, T(VARCHAR), NB, 4, 0.0, 0.1);
    B[2] = hj_gen(&r, T(VARCHAR), NB, 100000, 0.0, 0.01);   /* most chunks without NULLs */
    B[3] = hj_gen(&r, hj_type(PA_TYPE_DECIMAL, 15, 2), NB, 100000, 0.0, 0.2);
    return 0;
}

static int teardown(void **state)
{
    for (int k = 0; k < PCOLS; k++)
        hj_free(&P[k]);
    for (int k = 0; k < BCOLS; k++)
        hj_free(&B[k]);
    return 0;
}

/* Nested-loop reference of the join, as sorted result lines. */
static void reference(ex_join_type type, const int *pk, const int *bk, int n_keys, const int *bout, int n_out,
                      lines *ls)
{
    pa_column pkc[4], bkc[4];
    for (int k = 0; k < n_keys; k++)
        pkc[k] = P[pk[k]], bkc[k] = B[bk[k]];
    for (int64_t i = 0; i < NP; i++) {
        char probe[1024] = "";
        for (int c = 0; c < PCOLS; c++)
            fmt_cat(probe, &P[c], i);
        bool any_true = false, any_null = false;
        for (int64_t j = 0; j < NB; j++) {
            int e = hj_eq(bkc, j, pkc, i, n_keys);
            any_null |= e < 0;
            if (e != 1)
                continue;
            any_true = true;
            if (type == EX_JOIN_INNER || type == EX_JOIN_LEFT) {
                char line[2048];
                strcpy(line, probe);
                for (int c = 0; c < n_out; c++)
                    fmt_cat(line, &B[bout[c]], j);
                lines_add(ls, line);
            }
        }
        char line[2048];
        strcpy(line, probe);
        if (type == EX_JOIN_LEFT && !any_true) {
            for (int c = 0; c < n_out; c++)
                fmt_cat_const(line, B[bout[c]].type, false, false);
            lines_add(ls, line);
        } else if ((type == EX_JOIN_SEMI && any_true) || (type == EX_JOIN_ANTI && !any_true)) {
            lines_add(ls, line);
        } else if (type == EX_JOIN_MARK) {
            fmt_cat_const(line, T(BOOLEAN), any_true || !any_null, any_true);
            lines_add(ls, line);
        }
    }
    qsort(ls->l, (size_t)ls->n, sizeof *ls->l, cmp_str);
}

static const char *const type_names[] = {"inner", "left", "semi", "anti", "mark"};

static void run_join(dv_device *d, ex_join_type type, const int *pk, const int *bk, int n_keys, ex_mode mode,
                     int threads, const lines *want)
{
    const int bout[2] = {2, 3};
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    ex_op *ps = make_src(p, P, pnames, PCOLS, NP, 97), *bs = make_src(p, B, bnames, BCOLS, NB, 41), *j;
    OK(ex_hash_join(p, ps, bs, type, pk, bk, n_keys, bout, 2, &j, &err));
    ex_run_options o = {.dev = d, .mode = mode, .threads = threads, .chunk_rows = 64};
    ex_result *r;
    OK(ex_run(p, j, &o, &r, &err));
    lines got = {0};
    result_lines(r, &got);
    char what[128];
    snprintf(what, sizeof what, "%s join on %d keys, %s, %d threads", type_names[type], n_keys, ex_mode_name(mode),
             threads);
    assert_same_lines(&got, want, what);
    /* Statistics: the join's rows out are the result's. */
    bool seen = false;
    for (int i = 0; i < r->stats.n_ops; i++)
        if (!strncmp(r->stats.ops[i].label, "HASH_JOIN", 9)) {
            assert_int_equal(r->stats.ops[i].rows_out, r->n_rows);
            assert_true(r->stats.ops[i].mem_peak > 0);
            seen = true;
        }
    assert_true(seen);
    lines_free(&got);
    ex_result_destroy(r);
    ex_plan_destroy(p);
}

static void check_all(const int *pk, const int *bk, int n_keys)
{
    dv_device *d = hj_open(0);
    const int bout[2] = {2, 3};
    for (int type = EX_JOIN_INNER; type <= EX_JOIN_MARK; type++) {
        lines want = {0};
        reference(type, pk, bk, n_keys, bout, 2, &want);
        assert_true(want.n > 0);
        for (int mode = EX_MODE_OVERLAPPED; mode <= EX_MODE_BLOCKING; mode++)
            for (int threads = 1; threads <= 3; threads += 2)
                run_join(d, type, pk, bk, n_keys, mode, threads, &want);
        lines_free(&want);
    }
    pa_mempool_stats ds;
    dv_memory_stats(d, &ds, NULL);
    assert_int_equal(ds.current, 0);   /* every run gave its memory back */
    dv_close(d);
}

static void test_single_key_every_type(void **state)
{
    const int pk[1] = {0}, bk[1] = {0};
    check_all(pk, bk, 1);
}

static void test_two_keys_with_strings(void **state)
{
    const int pk[2] = {0, 1}, bk[2] = {0, 1};
    check_all(pk, bk, 2);
}

/* One key matching 3000 build rows, probed by 500 rows: 1.5 million output
 * rows from one probe chunk, handed out in chunks of chunk_rows. */
static void test_fan_out(void **state)
{
    dv_device *d = hj_open(0);
    enum { FB = 3000, FP = 1000, CR = 4096 };
    pa_column bc[2] = {{.type = T(INTEGER), .length = FB}, {.type = T(BIGINT), .length = FB}};
    pa_column pc[1] = {{.type = T(INTEGER), .length = FP}};
    int32_t *bk = malloc(FB * 4), *pk = malloc(FP * 4);
    int64_t *bv = malloc(FB * 8), sum_v = 0;
    for (int i = 0; i < FB; i++)
        bk[i] = 7, bv[i] = i, sum_v += i;
    for (int i = 0; i < FP; i++)
        pk[i] = i % 2 ? 7 : 8;
    bc[0].data = bk, bc[1].data = bv, pc[0].data = pk;
    const char *bn[2] = {"k", "v"}, *pn[1] = {"pk"};
    for (int run = 0; run < 4; run++) {
        ex_join_type type = run == 3 ? EX_JOIN_LEFT : EX_JOIN_INNER;
        ex_mode mode = run == 3 ? EX_MODE_OVERLAPPED : (ex_mode)run;
        ex_plan *p;
        OK(ex_plan_create(&p, &err));
        ex_op *ps = make_src(p, pc, pn, 1, FP, FP), *bs = make_src(p, bc, bn, 2, FB, 700), *j;
        const int k0[1] = {0}, out[1] = {1};
        OK(ex_hash_join(p, ps, bs, type, k0, k0, 1, out, 1, &j, &err));
        ex_run_options o = {.dev = d, .mode = mode, .threads = 2, .chunk_rows = CR};
        ex_result *r;
        OK(ex_run(p, j, &o, &r, &err));
        int64_t matched = (int64_t)FP / 2 * FB, total = matched + (type == EX_JOIN_LEFT ? FP / 2 : 0);
        assert_int_equal(r->n_rows, total);
        assert_true(r->n_chunks >= total / CR);
        int64_t s = 0, nulls = 0;
        for (int c = 0; c < r->n_chunks; c++) {
            dv_chunk *ch = r->chunks[c];
            assert_true(ch->length <= CR);
            for (int64_t i = 0; i < ch->length; i++) {
                int32_t key = ((int32_t *)ch->columns[0].data)[i];
                if (!pa_column_valid(&ch->columns[1], i)) {
                    assert_int_equal(key, 8);
                    nulls++;
                    continue;
                }
                assert_int_equal(key, 7);
                s += ((int64_t *)ch->columns[1].data)[i];
            }
        }
        assert_int_equal(s, sum_v * (FP / 2));
        assert_int_equal(nulls, type == EX_JOIN_LEFT ? FP / 2 : 0);
        ex_result_destroy(r);
        ex_plan_destroy(p);
    }
    free(bk);
    free(pk);
    free(bv);
    dv_close(d);
}

/* ex_hash_join_single: a build side with a repeated key (or, without keys,
 * two rows) fails the run with the scalar-subquery error; distinct keys,
 * NULL keys repeated, and one key-less row are fine. */
static void single_case(dv_device *d, const int32_t *keys, const uint8_t *valid, int n, int n_keys, bool fails)
{
    pa_column bc[1] = {{.type = T(INTEGER), .length = n, .data = (void *)keys, .validity = (uint8_t *)valid}};
    int32_t probe[3] = {1, 2, 3};
    pa_column pc[1] = {{.type = T(INTEGER), .length = 3, .data = probe}};
    const char *bn[1] = {"k"}, *pn[1] = {"pk"};
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    ex_op *ps = make_src(p, pc, pn, 1, 3, 3), *bs = make_src(p, bc, bn, 1, n, n), *j;
    const int k0[1] = {0}, out[1] = {0};
    OK(ex_hash_join_cond(p, ps, bs, EX_JOIN_LEFT, k0, k0, n_keys, out, 1, NULL, &j, &err));
    OK(ex_hash_join_single(j, &err));
    ex_run_options o = {.dev = d, .mode = EX_MODE_OVERLAPPED, .threads = 2};
    ex_result *r = NULL;
    int rc = ex_run(p, j, &o, &r, &err);
    if (fails) {
        assert_int_equal(rc, PA_EINVAL);
        assert_non_null(strstr(err.msg, "more than one row returned by a subquery"));
        pa_err_clear(&err);
    } else {
        OK(rc);
        assert_int_equal(r->n_rows, 3);
        ex_result_destroy(r);
    }
    ex_plan_destroy(p);
}

static void test_single(void **state)
{
    dv_device *d = hj_open(0);
    const int32_t distinct[3] = {1, 2, 5}, repeated[3] = {1, 2, 1}, nulls[3] = {0, 0, 4};
    const uint8_t nulls_valid[1] = {0x4};   /* rows 0 and 1 NULL: never matched, not counted */
    single_case(d, distinct, NULL, 3, 1, false);
    single_case(d, repeated, NULL, 3, 1, true);
    single_case(d, nulls, nulls_valid, 3, 1, false);
    single_case(d, distinct, NULL, 1, 0, false);   /* key-less: one row */
    single_case(d, distinct, NULL, 2, 0, true);    /* key-less: two rows */
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    pa_column c1[1] = {{.type = T(INTEGER), .length = 3, .data = (void *)distinct}};
    const char *nm[1] = {"k"};
    ex_op *a = make_src(p, c1, nm, 1, 3, 3), *b = make_src(p, c1, nm, 1, 3, 3), *semi;
    const int k0[1] = {0};
    OK(ex_hash_join(p, a, b, EX_JOIN_SEMI, k0, k0, 1, NULL, 0, &semi, &err));
    assert_int_equal(ex_hash_join_single(semi, &err), PA_EINVAL);   /* only INNER and LEFT */
    pa_err_clear(&err);
    ex_plan_destroy(p);
    dv_close(d);
}

static void test_builder(void **state)
{
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    ex_op *ps = make_src(p, P, pnames, PCOLS, NP, 100), *bs = make_src(p, B, bnames, BCOLS, NB, 100), *j;
    const int k0[1] = {0}, ks[1] = {1}, out[2] = {2, 3}, bad[1] = {9};
    pa_err_clear(&err);
    assert_int_equal(ex_hash_join(p, ps, bs, EX_JOIN_INNER, k0, ks, 1, out, 2, &j, &err), PA_EINVAL);
    assert_non_null(strstr(err.msg, "cannot be compared"));   /* INTEGER vs VARCHAR */
    pa_err_clear(&err);
    assert_int_equal(ex_hash_join(p, ps, bs, EX_JOIN_INNER, k0, bad, 1, out, 2, &j, &err), PA_EINVAL);
    pa_err_clear(&err);
    assert_int_equal(ex_hash_join(p, ps, bs, EX_JOIN_INNER, k0, k0, 1, bad, 1, &j, &err), PA_EINVAL);
    pa_err_clear(&err);
    assert_int_equal(ex_hash_join(p, ps, bs, EX_JOIN_INNER, k0, k0, 0, out, 2, &j, &err), PA_EINVAL);
    pa_err_clear(&err);
    assert_int_equal(ex_hash_join(p, ps, bs, (ex_join_type)9, k0, k0, 1, out, 2, &j, &err), PA_EINVAL);

    OK(ex_hash_join(p, ps, bs, EX_JOIN_LEFT, k0, k0, 1, out, 2, &j, &err));
    assert_int_equal(ex_op_columns(j), 5);
    assert_string_equal(ex_op_column_name(j, 3), "name");
    assert_int_equal(ex_op_column_type(j, 4).id, PA_TYPE_DECIMAL);
    assert_string_equal(j->label, "HASH_JOIN left");
    OK(ex_hash_join(p, ps, bs, EX_JOIN_SEMI, k0, k0, 1, out, 2, &j, &err));
    assert_int_equal(ex_op_columns(j), PCOLS);
    OK(ex_hash_join(p, ps, bs, EX_JOIN_MARK, k0, k0, 1, NULL, 0, &j, &err));
    assert_int_equal(ex_op_columns(j), PCOLS + 1);
    assert_string_equal(ex_op_column_name(j, PCOLS), "mark");
    assert_int_equal(ex_op_column_type(j, PCOLS).id, PA_TYPE_BOOLEAN);
    ex_plan_destroy(p);
}

/* A build side larger than the device's memory limit fails naming the join;
 * the same device then runs the next query and holds no memory after. The
 * build's input chunks and its copy of them fit together (8 MiB each), its
 * table does not: on a device that frees in stream order the input chunks
 * may all be in flight at once, and must not be what runs out. */
static void test_memory_limit(void **state)
{
    dv_device *d = hj_open(24u << 20);
    enum { BIG = 1000000 };
    pa_column bc[2] = {{.type = T(BIGINT), .length = BIG}, {.type = T(BIGINT), .length = BIG}};
    int64_t *v = malloc(BIG * 8);
    for (int i = 0; i < BIG; i++)
        v[i] = i;
    bc[0].data = bc[1].data = v;
    const char *bn[2] = {"k", "v"};
    const int k0[1] = {0}, out[1] = {1};
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    ex_op *ps = make_src(p, bc, bn, 1, 1000, 1000), *bs = make_src(p, bc, bn, 1, BIG, 10000), *j;
    OK(ex_hash_join(p, ps, bs, EX_JOIN_INNER, k0, k0, 1, k0, 1, &j, &err));
    ex_run_options o = {.dev = d, .threads = 2};
    ex_result *r = NULL;
    pa_err_clear(&err);
    assert_int_equal(ex_run(p, j, &o, &r, &err), PA_ENOMEM);
    assert_null(r);
    print_message("%s\n", err.msg);
    assert_non_null(strstr(err.msg, "HASH_JOIN"));
    ex_plan_destroy(p);

    pa_mempool_stats ds;
    dv_memory_stats(d, &ds, NULL);
    assert_int_equal(ds.current, 0);
    /* The next, smaller query on the same device works. */
    OK(ex_plan_create(&p, &err));
    ps = make_src(p, bc, bn, 1, 1000, 1000), bs = make_src(p, bc, bn, 2, 50000, 10000);
    OK(ex_hash_join(p, ps, bs, EX_JOIN_INNER, k0, k0, 1, out, 1, &j, &err));
    OK(ex_run(p, j, &o, &r, &err));
    assert_int_equal(r->n_rows, 1000);
    ex_result_destroy(r);
    ex_plan_destroy(p);
    dv_memory_stats(d, &ds, NULL);
    assert_int_equal(ds.current, 0);
    free(v);
    dv_close(d);
}

/* supplier x nation x region over the TPC-H SF 0.01 Parquet files: per
 * region the count of suppliers, the sum of s_acctbal and of s_suppkey,
 * as DuckDB gives them:
 *   select r_name, count(*), sum(s_acctbal), sum(s_suppkey)
 *   from supplier, nation, region
 *   where s_nationkey = n_nationkey and n_regionkey = r_regionkey
 *   group by r_name order by r_name */
static void test_tpch_supplier_nation_region(void **state)
{
    const char *dir = getenv("PISTA_TEST_DATA");
    if (!dir)
        skip();
    char sp[512], np[512], rp[512];
    snprintf(sp, sizeof sp, "%s/parquet/supplier.parquet", dir);
    snprintf(np, sizeof np, "%s/parquet/nation.parquet", dir);
    snprintf(rp, sizeof rp, "%s/parquet/region.parquet", dir);
    const char *sc[3] = {"s_suppkey", "s_nationkey", "s_acctbal"}, *nc[2] = {"n_nationkey", "n_regionkey"},
               *rc[2] = {"r_regionkey", "r_name"};
    const char *spp[1] = {sp}, *npp[1] = {np}, *rpp[1] = {rp};
    dv_device *d = hj_open(0);
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    ex_op *s, *n, *r, *j1, *j2;
    OK(ex_scan(p, spp, 1, sc, 3, NULL, 0, &s, &err));
    OK(ex_scan(p, npp, 1, nc, 2, NULL, 0, &n, &err));
    OK(ex_scan(p, rpp, 1, rc, 2, NULL, 0, &r, &err));
    const int k1p[1] = {1}, k1b[1] = {0}, o1[1] = {1};
    OK(ex_hash_join(p, s, n, EX_JOIN_INNER, k1p, k1b, 1, o1, 1, &j1, &err));   /* + n_regionkey */
    const int k2p[1] = {3}, k2b[1] = {0}, o2[1] = {1};
    OK(ex_hash_join(p, j1, r, EX_JOIN_INNER, k2p, k2b, 1, o2, 1, &j2, &err));  /* + r_name */
    ex_run_options o = {.dev = d};
    ex_result *res;
    OK(ex_run(p, j2, &o, &res, &err));
    assert_int_equal(res->n_rows, 100);
    const char *names[5] = {"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"};
    const int64_t want_n[5] = {21, 20, 27, 20, 12}, want_bal[5] = {7619125, 9396721, 9535222, 9753705, 3788227},
                  want_keys[5] = {948, 879, 1533, 1057, 633};
    int64_t cnt[5] = {0}, bal[5] = {0}, keys[5] = {0};
    for (int c = 0; c < res->n_chunks; c++) {
        dv_chunk *ch = res->chunks[c];
        assert_int_equal(ch->n_columns, 5);
        for (int64_t i = 0; i < ch->length; i++) {
            const pa_column *rn = &ch->columns[4];
            int len = rn->offsets[i + 1] - rn->offsets[i];
            int g = -1;
            for (int k = 0; k < 5; k++)
                if ((int)strlen(names[k]) == len && !memcmp(names[k], (char *)rn->data + rn->offsets[i], (size_t)len))
                    g = k;
            assert_true(g >= 0);
            cnt[g]++;
            bal[g] += ((int64_t *)ch->columns[2].data)[i];
            keys[g] += ((int32_t *)ch->columns[0].data)[i];
        }
    }
    for (int k = 0; k < 5; k++) {
        assert_int_equal(cnt[k], want_n[k]);
        assert_int_equal(bal[k], want_bal[k]);
        assert_int_equal(keys[k], want_keys[k]);
    }
    ex_result_destroy(res);
    ex_plan_destroy(p);
    dv_close(d);
}

int main(void)
{
    pa_err_init(&err);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_key_every_type),
        cmocka_unit_test(test_two_keys_with_strings),
        cmocka_unit_test(test_fan_out),
        cmocka_unit_test(test_single),
        cmocka_unit_test(test_builder),
        cmocka_unit_test(test_memory_limit),
        cmocka_unit_test(test_tpch_supplier_nation_region),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    pa_err_close(&err);
    return rc;
}
