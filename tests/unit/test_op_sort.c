/*
 * test_op_sort.c - SORT, TOPN and LIMIT through ex_run on the cpu device
 * (or PISTA_TEST_DEVICE), fed by a test source operator that hands out
 * hand-made chunks to any number of workers.
 *
 * Results are checked against a reference written here: every row of the
 * input sorted with qsort and a comparator on the original values (ties
 * allowed: rows are compared on the sort keys only, and the multiset of
 * whole rows must be preserved), for every type, mixed ASC/DESC, NULLS
 * FIRST/LAST, long common string prefixes, empty chunks, all three modes,
 * several workers; top-N with N > rows, N = 0 and offsets; LIMIT returning
 * exactly N rows (the right ones, cut at any row, NULLs included) and
 * stopping its pipeline early; RECHUNK, and ROWS over an earlier result
 * under UNION ALL; out of memory naming SORT.
 *
 * Test code never touches device memory: inputs are made in host chunks
 * (pinned buffers), uploaded with dv_copy_async, and compared through the
 * host chunks; results (ex_result) are host chunks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec_int.h"

typedef struct rng { uint64_t s; } rng;
static uint64_t rnd(rng *r)
{
    uint64_t x = r->s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return r->s = x;
}
static uint64_t below(rng *r, uint64_t n) { return n ? rnd(r) % n : 0; }

static dv_device *g_dev;
static pa_err err;

#define OK(call)                                                                                   \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != PA_OK)                                                                          \
            fail_msg("%s -> %s: %s", #call, pa_status_name(rc_), err.msg);                         \
    } while (0)

static int setup(void **state)
{
    const char *s = getenv("PISTA_TEST_DEVICE");
    dv_options o = {.spec = s && *s ? s : "cpu", .cpu_threads = 2};
    pa_err_init(&err);
    OK(dv_open(&o, &g_dev, &err));
    return 0;
}
static int teardown(void **state)
{
    dv_close(g_dev);
    pa_err_close(&err);
    return 0;
}

/* ------------------------------------------------------- test source */

typedef struct feed {
    dv_chunk **chunks;
    int n;
    int next;   /* atomic */
} feed;

static int feed_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *e)
{
    feed *f = op->state;
    int i = __atomic_fetch_add(&f->next, 1, __ATOMIC_RELAXED);
    *out = i < f->n ? dv_chunk_retain(f->chunks[i]) : NULL;
    return PA_OK;
}

static const ex_op_vt feed_vt = {.kind = EX_OP_SCAN, .source_next = feed_next};

enum { NT = 8 };
static pa_type type_of(int t)
{
    static const pa_type ts[NT] = {
        {PA_TYPE_BOOLEAN, 0, 0}, {PA_TYPE_INTEGER, 0, 0}, {PA_TYPE_BIGINT, 0, 0}, {PA_TYPE_DOUBLE, 0, 0},
        {PA_TYPE_DECIMAL, 15, 2}, {PA_TYPE_DECIMAL, 38, 4}, {PA_TYPE_DATE, 0, 0}, {PA_TYPE_VARCHAR, 0, 0},
    };
    return ts[t];
}
static const char *const col_names[NT] = {"b", "i", "l", "d", "m", "w", "dt", "s"};

static const char *const words[] = {"", "a", "ab", "b", "zz", "a\0b", "customer#000000001-long-tail",
                                    "customer#000000001-long-tailX", "customer#000000001-long-taiZ",
                                    "customer#000000001", "customer#000000001\xff"};
static const int word_len[] = {0, 1, 2, 1, 2, 3, 28, 29, 28, 18, 19};
#define N_WORDS 11

/* A host chunk of n rows of the NT columns; dup = value range; null_pct
 * per column. */
static dv_chunk *make_chunk(rng *r, int64_t n, int dup, int null_pct)
{
    dv_chunk *c;
    OK(dv_chunk_create(g_dev, NT, &c, &err));
    c->length = n;
    for (int t = 0; t < NT; t++) {
        pa_column *col = &c->columns[t];
        col->type = type_of(t);
        col->length = n;
        if (null_pct && below(r, 2)) {
            OK(dv_chunk_alloc_host(c, (size_t)(n + 7) / 8 + 1, (void **)&col->validity, &err));
            memset(col->validity, 0, (size_t)(n + 7) / 8 + 1);
            for (int64_t i = 0; i < n; i++)
                if ((int)below(r, 100) >= null_pct)
                    col->validity[i >> 3] |= (uint8_t)(1u << (i & 7));
        }
        if (t == 7) {
            OK(dv_chunk_alloc_host(c, (size_t)(n + 1) * 4, (void **)&col->offsets, &err));
            OK(dv_chunk_alloc_host(c, (size_t)n * 32 + 1, &col->data, &err));
            col->offsets[0] = 0;
            for (int64_t i = 0; i < n; i++) {
                int k = (int)below(r, dup < N_WORDS ? (uint64_t)dup : N_WORDS);
                memcpy((char *)col->data + col->offsets[i], words[k], (size_t)word_len[k]);
                col->offsets[i + 1] = col->offsets[i] + word_len[k];
            }
            continue;
        }
        OK(dv_chunk_alloc_host(c, (size_t)(n ? n : 1) * (size_t)pa_type_bytes(col->type), &col->data, &err));
        for (int64_t i = 0; i < n; i++) {
            int64_t v = (int64_t)below(r, (uint64_t)dup) - dup / 2;
            switch (t) {
            case 0: ((uint8_t *)col->data)[i] = (uint8_t)(v & 1); break;
            case 1: ((int32_t *)col->data)[i] = (int32_t)v * 3; break;
            case 2: ((int64_t *)col->data)[i] = below(r, 10) == 0 ? INT64_MIN + (int64_t)below(r, 3) : v * 1000003; break;
            case 3: ((double *)col->data)[i] = below(r, 20) == 0 ? -0.0 : below(r, 30) == 0 ? nan("") : (double)v / 3; break;
            case 4: ((int64_t *)col->data)[i] = v * 99; break;
            case 5: {
                __int128 x = (__int128)v * ((__int128)1 << 66) - (__int128)below(r, 3);
                memcpy((char *)col->data + i * 16, &x, 16);
                break;
            }
            case 6: ((int32_t *)col->data)[i] = (int32_t)v + 9000; break;
            }
        }
    }
    return c;
}

/* Device buffer *dst of d holding the n host bytes at src. */
static void put(dv_chunk *d, dv_stream *st, void **dst, const void *src, size_t n)
{
    OK(dv_chunk_alloc(d, n ? n : 1, dst, &err));
    if (n)
        OK(dv_copy_async(st, *dst, src, n, DV_COPY_H2D, &err));
}

/* A device copy of host chunk h, ready when it returns. */
static dv_chunk *upload(const dv_chunk *h)
{
    dv_chunk *d;
    dv_stream *st;
    OK(dv_chunk_create(g_dev, h->n_columns, &d, &err));
    OK(dv_stream_create(g_dev, &st, &err));
    d->length = h->length;
    for (int t = 0; t < h->n_columns; t++) {
        const pa_column *hc = &h->columns[t];
        pa_column *dc = &d->columns[t];
        int64_t n = hc->length;
        *dc = (pa_column){.type = hc->type, .length = n};
        if (hc->validity)
            put(d, st, (void **)&dc->validity, hc->validity, (size_t)(n + 7) / 8);
        if (hc->type.id == PA_TYPE_VARCHAR) {
            put(d, st, (void **)&dc->offsets, hc->offsets, (size_t)(n + 1) * 4);
            put(d, st, &dc->data, hc->data, (size_t)hc->offsets[n]);
        } else {
            put(d, st, &dc->data, hc->data, (size_t)n * (size_t)pa_type_bytes(hc->type));
        }
    }
    OK(dv_stream_sync(st, &err));
    dv_stream_destroy(st);
    return d;
}

/* Test input: host chunks (the reference) and their device copies (fed). */
typedef struct input {
    dv_chunk **host, **dev;
    int n;
} input;

static input input_new(int n)
{
    input in = {calloc((size_t)(n ? n : 1), sizeof(dv_chunk *)), calloc((size_t)(n ? n : 1), sizeof(dv_chunk *)), n};
    return in;
}
static void input_set(input *in, int i, dv_chunk *host)
{
    in->host[i] = host;
    in->dev[i] = upload(host);
}

static ex_op *make_feed(ex_plan *p, feed *f)
{
    ex_op *op;
    OK(ex_op_new(p, &feed_vt, NT, &op, &err));
    for (int t = 0; t < NT; t++)
        OK(ex_op_set_column(op, t, col_names[t], type_of(t), &err));
    op->state = f;
    return op;
}

/* ------------------------------------------------------ reference order */

typedef struct rowref { const dv_chunk *c; int64_t row; } rowref;
static const ex_sort_key *g_keys;
static int g_nkeys;

static int cmp_cell(const pa_column *a, int64_t i, const pa_column *b, int64_t j)
{
    switch (a->type.id) {
    case PA_TYPE_BOOLEAN: return (((uint8_t *)a->data)[i] > ((uint8_t *)b->data)[j]) - (((uint8_t *)a->data)[i] < ((uint8_t *)b->data)[j]);
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: return (((int32_t *)a->data)[i] > ((int32_t *)b->data)[j]) - (((int32_t *)a->data)[i] < ((int32_t *)b->data)[j]);
    case PA_TYPE_BIGINT: return (((int64_t *)a->data)[i] > ((int64_t *)b->data)[j]) - (((int64_t *)a->data)[i] < ((int64_t *)b->data)[j]);
    case PA_TYPE_DECIMAL:
        if (a->type.precision > 18) {
            __int128 x, y;
            memcpy(&x, (char *)a->data + i * 16, 16);
            memcpy(&y, (char *)b->data + j * 16, 16);
            return (x > y) - (x < y);
        }
        return (((int64_t *)a->data)[i] > ((int64_t *)b->data)[j]) - (((int64_t *)a->data)[i] < ((int64_t *)b->data)[j]);
    case PA_TYPE_DOUBLE: {
        double x = ((double *)a->data)[i], y = ((double *)b->data)[j];
        if (isnan(x) || isnan(y))
            return isnan(x) - isnan(y);
        return (x > y) - (x < y);
    }
    case PA_TYPE_VARCHAR: {
        int32_t la = a->offsets[i + 1] - a->offsets[i], lb = b->offsets[j + 1] - b->offsets[j];
        int c = memcmp((char *)a->data + a->offsets[i], (char *)b->data + b->offsets[j], (size_t)(la < lb ? la : lb));
        return c ? (c > 0) - (c < 0) : (la > lb) - (la < lb);
    }
    default: return 0;
    }
}

static int cmp_rows(const rowref *x, const rowref *y)
{
    for (int k = 0; k < g_nkeys; k++) {
        const pa_column *a = &x->c->columns[g_keys[k].column], *b = &y->c->columns[g_keys[k].column];
        bool va = pa_column_valid(a, x->row), vb = pa_column_valid(b, y->row);
        if (!va || !vb) {
            if (va == vb)
                continue;
            return (!va) == g_keys[k].nulls_first ? -1 : 1;
        }
        int c = cmp_cell(a, x->row, b, y->row);
        if (c)
            return g_keys[k].descending ? -c : c;
    }
    return 0;
}
static int qcmp(const void *a, const void *b) { return cmp_rows(a, b); }

/* Order-independent digest of a whole row (NULL cells hash as NULL). */
static uint64_t row_hash(const dv_chunk *c, int64_t row)
{
    uint64_t h = 1469598103934665603ull;
    for (int t = 0; t < c->n_columns; t++) {
        const pa_column *col = &c->columns[t];
        const uint8_t *p;
        size_t n;
        if (!pa_column_valid(col, row)) {
            p = (const uint8_t *)"\x01NULL";
            n = 5;
        } else if (col->type.id == PA_TYPE_VARCHAR) {
            p = (const uint8_t *)col->data + col->offsets[row];
            n = (size_t)(col->offsets[row + 1] - col->offsets[row]);
        } else {
            n = (size_t)pa_type_bytes(col->type);
            p = (const uint8_t *)col->data + (size_t)row * n;
        }
        for (size_t i = 0; i < n; i++)
            h = (h ^ p[i]) * 1099511628211ull;
        h = (h ^ 0xff) * 1099511628211ull;
    }
    return h * 0x9e3779b97f4a7c15ull;
}

/* All rows of the chunks, in order. */
static rowref *rows_of(dv_chunk *const *cs, int nc, int64_t *n)
{
    int64_t total = 0;
    for (int i = 0; i < nc; i++)
        total += cs[i]->length;
    rowref *r = malloc(sizeof *r * (size_t)(total ? total : 1));
    int64_t at = 0;
    for (int i = 0; i < nc; i++)
        for (int64_t j = 0; j < cs[i]->length; j++)
            r[at++] = (rowref){cs[i], j};
    *n = total;
    return r;
}

/* ------------------------------------------------------------ running */

typedef enum { K_SORT, K_TOPN, K_LIMIT, K_RECHUNK } kind;

static int run_plan(dv_chunk **in, int nin, kind k, const ex_sort_key *keys, int nk, int64_t limit,
                    int64_t offset, ex_mode mode, int threads, int64_t chunk_rows, ex_result **res, ex_op **feed_op)
{
    feed f = {in, nin, 0};
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    ex_op *src = make_feed(p, &f), *top;
    if (k == K_SORT)
        OK(ex_sort(p, src, keys, nk, &top, &err));
    else if (k == K_TOPN)
        OK(ex_topn(p, src, keys, nk, limit, offset, &top, &err));
    else if (k == K_LIMIT)
        OK(ex_limit(p, src, limit, offset, &top, &err));
    else
        OK(ex_rechunk(p, src, limit, &top, &err));   /* limit: the target rows */
    ex_run_options o = {.dev = g_dev, .mode = mode, .threads = threads, .chunk_rows = chunk_rows};
    pa_err_clear(&err);
    int rc = ex_run(p, top, &o, res, &err);
    if (feed_op)
        *feed_op = NULL;
    ex_plan_destroy(p);
    return rc;
}

/* Check a SORT/TOPN result: rows [offset, offset + limit) of the reference
 * order, compared on the keys; whole rows a sub-multiset (the full multiset
 * for SORT) of the input. */
static void check_ordered(const ex_result *r, dv_chunk **in, int nin, const ex_sort_key *keys, int nk,
                          int64_t limit, int64_t offset)
{
    g_keys = keys;
    g_nkeys = nk;
    int64_t n, m;
    rowref *want = rows_of(in, nin, &n);
    qsort(want, (size_t)n, sizeof *want, qcmp);
    rowref *got = rows_of(r->chunks, r->n_chunks, &m);
    int64_t lo = offset < n ? offset : n, hi = limit < n - lo ? lo + limit : n;
    assert_int_equal(m, hi - lo);
    assert_int_equal(r->n_rows, m);
    uint64_t hw = 0, hg = 0;
    for (int64_t i = 0; i < m; i++) {
        if (cmp_rows(&got[i], &want[lo + i]) != 0)
            fail_msg("row %lld of %lld differs from the reference order", (long long)i, (long long)m);
        hg += row_hash(got[i].c, got[i].row);
    }
    if (lo == 0 && hi == n) {
        for (int64_t i = 0; i < n; i++)
            hw += row_hash(want[i].c, want[i].row);
        assert_true(hw == hg);   /* same rows, not just same keys */
    }
    for (int i = 0; i < r->n_chunks; i++)
        for (int t = 0; t < NT; t++)
            assert_int_equal(r->chunks[i]->columns[t].type.id, type_of(t).id);
    free(want);
    free(got);
}

static input make_input(rng *r, int nin, int64_t max_rows, int dup, int null_pct)
{
    input in = input_new(nin);
    for (int i = 0; i < nin; i++)
        input_set(&in, i, make_chunk(r, below(r, 6) == 0 ? 0 : 1 + (int64_t)below(r, (uint64_t)max_rows), dup, null_pct));
    return in;
}
static void free_input(input *in)
{
    for (int i = 0; i < in->n; i++) {
        dv_chunk_destroy(in->host[i]);
        dv_chunk_destroy(in->dev[i]);
    }
    free(in->host);
    free(in->dev);
}

static void random_keys(rng *r, ex_sort_key *keys, int *nk)
{
    *nk = 1 + (int)below(r, 4);
    for (int k = 0; k < *nk; k++)
        keys[k] = (ex_sort_key){(int)below(r, NT), below(r, 2) == 1, below(r, 2) == 1};
}

/* Whole rows of the host chunks, in order, against rows [lo, lo + m) of
 * the reference: equal row by row. */
static void check_rows(const ex_result *r, dv_chunk *const *want_chunks, int nw, int64_t lo, int64_t m)
{
    int64_t n, got_n;
    rowref *want = rows_of(want_chunks, nw, &n);
    rowref *got = rows_of(r->chunks, r->n_chunks, &got_n);
    assert_int_equal(got_n, m);
    assert_int_equal(r->n_rows, m);
    for (int64_t i = 0; i < m; i++)
        if (row_hash(got[i].c, got[i].row) != row_hash(want[lo + i].c, want[lo + i].row))
            fail_msg("row %lld differs from input row %lld", (long long)i, (long long)(lo + i));
    free(want);
    free(got);
}

/* The multiset of whole rows of a result equals the input's. */
static void check_same_rows(const ex_result *r, dv_chunk *const *want_chunks, int nw, int copies)
{
    int64_t n, m;
    rowref *want = rows_of(want_chunks, nw, &n);
    rowref *got = rows_of(r->chunks, r->n_chunks, &m);
    assert_int_equal(m, n * copies);
    uint64_t hw = 0, hg = 0;
    for (int64_t i = 0; i < n; i++)
        hw += row_hash(want[i].c, want[i].row) * (uint64_t)copies;
    for (int64_t i = 0; i < m; i++)
        hg += row_hash(got[i].c, got[i].row);
    assert_true(hw == hg);
    free(want);
    free(got);
}

static void test_sort_random(void **state)
{
    rng r = {0xabcdef12345ull};
    for (int it = 0; it < 40; it++) {
        int nin = 1 + (int)below(&r, 12);
        input in = make_input(&r, nin, it % 5 == 0 ? 2000 : 300, it % 2 ? 7 : 100000, 15);
        ex_sort_key keys[4];
        int nk;
        random_keys(&r, keys, &nk);
        ex_result *res;
        ex_mode mode = (ex_mode)(it % 3);
        OK(run_plan(in.dev, nin, K_SORT, keys, nk, 0, 0, mode, 1 + it % 3, 1 + (int64_t)below(&r, 700), &res, NULL));
        check_ordered(res, in.host, nin, keys, nk, INT64_MAX, 0);
        ex_result_destroy(res);
        free_input(&in);
    }
}

/* Each key column alone, all four direction/NULL combinations, 3 workers. */
static void test_sort_each_type(void **state)
{
    rng r = {31337};
    input in = make_input(&r, 6, 400, 30, 20);
    for (int t = 0; t < NT; t++)
        for (int f = 0; f < 4; f++) {
            ex_sort_key key = {t, f & 1, (f >> 1) & 1};
            ex_result *res;
            OK(run_plan(in.dev, 6, K_SORT, &key, 1, 0, 0, EX_MODE_OVERLAPPED, 3, 128, &res, NULL));
            check_ordered(res, in.host, 6, &key, 1, INT64_MAX, 0);
            ex_result_destroy(res);
        }
    free_input(&in);
}

static void test_sort_empty(void **state)
{
    rng r = {5};
    input in = make_input(&r, 3, 1, 5, 0);
    for (int i = 0; i < 3; i++)
        in.host[i]->length = in.dev[i]->length = 0;
    ex_sort_key key = {7, false, false};
    ex_result *res;
    OK(run_plan(in.dev, 3, K_SORT, &key, 1, 0, 0, EX_MODE_OVERLAPPED, 2, 0, &res, NULL));
    assert_int_equal(res->n_rows, 0);
    ex_result_destroy(res);
    OK(run_plan(in.dev, 0, K_TOPN, &key, 1, 10, 0, EX_MODE_CHUNKED, 2, 0, &res, NULL));
    assert_int_equal(res->n_rows, 0);
    ex_result_destroy(res);
    free_input(&in);
}

static void test_topn(void **state)
{
    rng r = {777};
    static const int64_t limits[] = {0, 1, 3, 10, 100, 5000, 100000};
    for (int it = 0; it < 60; it++) {
        int nin = 1 + (int)below(&r, 10);
        input in = make_input(&r, nin, it % 4 == 0 ? 3000 : 400, it % 2 ? 9 : 50000, 10);
        ex_sort_key keys[4];
        int nk;
        random_keys(&r, keys, &nk);
        int64_t limit = limits[below(&r, 7)], offset = below(&r, 3) == 0 ? (int64_t)below(&r, 500) : 0;
        ex_result *res;
        OK(run_plan(in.dev, nin, K_TOPN, keys, nk, limit, offset, (ex_mode)(it % 3), 1 + it % 3, 0, &res, NULL));
        check_ordered(res, in.host, nin, keys, nk, limit, offset);
        ex_result_destroy(res);
        free_input(&in);
    }
}

/* Many chunks through TOPN trigger compactions; the threshold must keep the
 * exact answer, including ties and long string prefixes. */
static void test_topn_compaction(void **state)
{
    rng r = {4141};
    int nin = 200;
    input in = input_new(nin);
    for (int i = 0; i < nin; i++)
        input_set(&in, i, make_chunk(&r, 1 + (int64_t)below(&r, 500), i % 2 ? 11 : 1000, 5));
    ex_sort_key keys[3] = {{7, true, false}, {3, false, true}, {1, true, true}};
    for (int v = 0; v < 3; v++) {
        int64_t limit = v == 0 ? 5 : v == 1 ? 37 : 2000;
        ex_result *res;
        OK(run_plan(in.dev, nin, K_TOPN, keys, 3, limit, v, EX_MODE_OVERLAPPED, 2, 0, &res, NULL));
        check_ordered(res, in.host, nin, keys, 3, limit, v);
        ex_result_destroy(res);
    }
    free_input(&in);
}

static void test_limit(void **state)
{
    rng r = {99};
    int nin = 400;
    input in = input_new(nin);
    int64_t total = 0;
    for (int i = 0; i < nin; i++) {
        input_set(&in, i, make_chunk(&r, 1 + (int64_t)below(&r, 100), 100, 10));
        total += in.host[i]->length;
    }
    static const int64_t cases[][2] = {{0, 0}, {1, 0}, {250, 0}, {250, 333}, {7, 95}, {1000000, 0}, {10, 1000000}};
    for (int c = 0; c < 7; c++)
        for (int mode = 0; mode < 3; mode++) {
            int64_t limit = cases[c][0], offset = cases[c][1];
            ex_result *res;
            OK(run_plan(in.dev, nin, K_LIMIT, NULL, 0, limit, offset, (ex_mode)mode, 3, 0, &res, NULL));
            int64_t want = offset >= total ? 0 : (limit < total - offset ? limit : total - offset);
            assert_int_equal(res->n_rows, want);
            int64_t n;
            rowref *got = rows_of(res->chunks, res->n_chunks, &n);
            assert_int_equal(n, want);
            free(got);
            /* Early stop: the source handed out far fewer than all chunks. */
            if (mode != EX_MODE_BLOCKING && offset + limit < total / 2) {
                const ex_op_stats *src = NULL;
                for (int i = 0; i < res->stats.n_ops; i++)
                    if (!strncmp(res->stats.ops[i].label, "SCAN", 4))
                        src = &res->stats.ops[i];
                assert_non_null(src);
                if (src->chunks_out >= nin / 2)
                    fail_msg("LIMIT %lld OFFSET %lld read %lld of %d chunks", (long long)limit, (long long)offset,
                             (long long)src->chunks_out, nin);
            }
            ex_result_destroy(res);
        }
    free_input(&in);
}

/* One worker: LIMIT passes exactly rows [offset, offset + limit) of the
 * input in order, whole rows with their NULLs, cut anywhere in a chunk. */
static void test_limit_values(void **state)
{
    rng r = {4242};
    int nin = 40;
    input in = input_new(nin);
    int64_t total = 0;
    for (int i = 0; i < nin; i++) {
        input_set(&in, i, make_chunk(&r, 1 + (int64_t)below(&r, 90), 50, 30));
        total += in.host[i]->length;
    }
    for (int c = 0; c < 24; c++) {
        int64_t offset = c < 8 ? c : (int64_t)below(&r, (uint64_t)total), limit = 1 + (int64_t)below(&r, 200);
        ex_mode mode = (ex_mode)(c % 3);
        ex_result *res;
        OK(run_plan(in.dev, nin, K_LIMIT, NULL, 0, limit, offset, mode, 1, 0, &res, NULL));
        int64_t want = offset >= total ? 0 : (limit < total - offset ? limit : total - offset);
        check_rows(res, in.host, nin, offset, want);
        ex_result_destroy(res);
    }
    free_input(&in);
}

/* LIMIT above SORT (one ordered worker) is exactly TOPN's answer. */
static void test_limit_over_sort(void **state)
{
    rng r = {2024};
    input in = make_input(&r, 8, 500, 60, 10);
    ex_sort_key keys[2] = {{1, true, true}, {7, false, false}};
    feed f = {in.dev, 8, 0};
    ex_plan *p;
    OK(ex_plan_create(&p, &err));
    ex_op *src = make_feed(p, &f), *s, *l;
    OK(ex_sort(p, src, keys, 2, &s, &err));
    OK(ex_limit(p, s, 123, 45, &l, &err));
    ex_run_options o = {.dev = g_dev, .threads = 2, .chunk_rows = 50};
    ex_result *res;
    OK(ex_run(p, l, &o, &res, &err));
    check_ordered(res, in.host, 8, keys, 2, 123, 45);
    ex_result_destroy(res);
    ex_plan_destroy(p);
    free_input(&in);
}

/* RECHUNK: small chunks (strings, NULLs) concatenated into bigger ones;
 * one worker keeps their order, several keep the rows. */
static void test_rechunk(void **state)
{
    rng r = {1717};
    input in = make_input(&r, 60, 40, 1000, 20);
    static const int64_t targets[] = {1, 25, 100, 1000};
    for (int t = 0; t < 4; t++)
        for (int threads = 1; threads <= 3; threads += 2) {
            ex_result *res;
            OK(run_plan(in.dev, 60, K_RECHUNK, NULL, 0, targets[t], 0, (ex_mode)(t % 3), threads, 0, &res, NULL));
            if (threads == 1) {
                int64_t total = 0;
                for (int i = 0; i < 60; i++)
                    total += in.host[i]->length;
                check_rows(res, in.host, 60, 0, total);
            } else {
                check_same_rows(res, in.host, 60, 1);
            }
            ex_result_destroy(res);
        }
    free_input(&in);
}

/* ROWS: an earlier run's result read twice under UNION ALL, sorted. */
static void test_rows_union(void **state)
{
    rng r = {3131};
    input in = make_input(&r, 10, 300, 40, 15);
    ex_sort_key key = {7, false, true};
    ex_result *first;
    OK(run_plan(in.dev, 10, K_SORT, &key, 1, 0, 0, EX_MODE_OVERLAPPED, 2, 100, &first, NULL));
    for (int mode = 0; mode < 3; mode++) {
        ex_plan *p;
        OK(ex_plan_create(&p, &err));
        ex_op *rows[2], *u, *s;
        OK(ex_rows(p, first, &rows[0], &err));
        OK(ex_rows(p, first, &rows[1], &err));
        OK(ex_union_all(p, rows, 2, &u, &err));
        OK(ex_sort(p, u, &key, 1, &s, &err));
        ex_run_options o = {.dev = g_dev, .mode = (ex_mode)mode, .threads = 2, .chunk_rows = 70};
        ex_result *res;
        OK(ex_run(p, s, &o, &res, &err));
        check_same_rows(res, in.host, 10, 2);
        int64_t n;
        rowref *got = rows_of(res->chunks, res->n_chunks, &n);
        g_keys = &key;
        g_nkeys = 1;
        for (int64_t i = 1; i < n; i++)
            if (cmp_rows(&got[i - 1], &got[i]) > 0)
                fail_msg("row %lld sorts before row %lld", (long long)i, (long long)(i - 1));
        free(got);
        ex_result_destroy(res);
        ex_plan_destroy(p);
    }
    ex_result_destroy(first);
    free_input(&in);
}

static void test_builder_errors(void **state)
{
    ex_plan *p;
    feed f = {NULL, 0, 0};
    OK(ex_plan_create(&p, &err));
    ex_op *src = make_feed(p, &f), *out;
    ex_sort_key bad = {NT, false, false}, good = {0, false, false};
    assert_int_equal(ex_sort(p, src, &bad, 1, &out, NULL), PA_EINVAL);
    assert_int_equal(ex_sort(p, src, &good, 0, &out, NULL), PA_EINVAL);
    assert_int_equal(ex_topn(p, src, &good, 1, -1, 0, &out, NULL), PA_EINVAL);
    assert_int_equal(ex_limit(p, src, 5, -1, &out, NULL), PA_EINVAL);
    OK(ex_topn(p, src, &good, 1, 5, 0, &out, &err));
    assert_int_equal(ex_op_columns(out), NT);
    assert_string_equal(ex_op_column_name(out, 7), "s");
    ex_plan_destroy(p);
}

/* A device limit too small for the sort: PA_ENOMEM naming SORT, and the
 * device runs the next query. */
static void test_sort_out_of_memory(void **state)
{
    rng r = {8};
    input in = make_input(&r, 20, 3000, 1000, 0);
    pa_mempool_stats ms;
    dv_memory_stats(g_dev, &ms, NULL);
    dv_set_memory_limit(g_dev, ms.current + 64 * 1024);
    ex_sort_key key = {2, false, false};
    ex_result *res = NULL;
    int rc = run_plan(in.dev, 20, K_SORT, &key, 1, 0, 0, EX_MODE_OVERLAPPED, 2, 0, &res, NULL);
    assert_int_equal(rc, PA_ENOMEM);
    assert_null(res);
    if (!strstr(err.msg, "SORT"))
        fail_msg("message does not name SORT: %s", err.msg);
    dv_set_memory_limit(g_dev, 0);
    dv_memory_stats(g_dev, &ms, NULL);
    OK(run_plan(in.dev, 20, K_SORT, &key, 1, 0, 0, EX_MODE_OVERLAPPED, 2, 0, &res, NULL));
    check_ordered(res, in.host, 20, &key, 1, INT64_MAX, 0);
    ex_result_destroy(res);
    free_input(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builder_errors),
        cmocka_unit_test(test_sort_empty),
        cmocka_unit_test(test_sort_each_type),
        cmocka_unit_test(test_sort_random),
        cmocka_unit_test(test_topn),
        cmocka_unit_test(test_topn_compaction),
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_limit_values),
        cmocka_unit_test(test_limit_over_sort),
        cmocka_unit_test(test_rechunk),
        cmocka_unit_test(test_rows_union),
        cmocka_unit_test(test_sort_out_of_memory),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
