/*
 * test_kn_dict_build.c - kn_dict_build against a reference computed by
 * sorting: entries in order of first occurrence, one index per value, the
 * PLAIN size, and where a limit stops the build; for int32, int64, DOUBLE
 * (bitwise: NaN and -0.0 are their own values), BOOLEAN and strings (empty,
 * short, sharing prefixes), with and without a selection vector, at sizes
 * that make the hash table grow several times.
 */
#include "kn_testutil.h"

#include <math.h>

typedef struct ref_ctx {
    const kn_column *col;
    const kn_values *in;
} ref_ctx;

static const ref_ctx *g_ctx;

static int key_cmp(uint32_t ra, uint32_t rb)
{
    const kn_values *in = g_ctx->in;
    if (g_ctx->col->type.id == PA_TYPE_VARCHAR) {
        int32_t la = in->offsets[ra + 1] - in->offsets[ra], lb = in->offsets[rb + 1] - in->offsets[rb];
        if (la != lb)
            return la < lb ? -1 : 1;
        return memcmp(in->bytes + in->offsets[ra], in->bytes + in->offsets[rb], (size_t)la);
    }
    size_t w = g_ctx->col->type.id == PA_TYPE_BOOLEAN ? 1 : g_ctx->col->ptype == KN_PT_INT32 ? 4 : 8;
    return memcmp((const uint8_t *)in->values + ra * w, (const uint8_t *)in->values + rb * w, w);
}

/* Positions sorted by (key, position). */
static const uint32_t *g_rows;
static int pos_cmp(const void *a, const void *b)
{
    uint32_t pa = *(const uint32_t *)a, pb = *(const uint32_t *)b;
    int c = key_cmp(g_rows[pa], g_rows[pb]);
    return c ? c : (pa < pb ? -1 : 1);
}

static uint64_t cost(const kn_column *col, const kn_values *in, uint32_t r)
{
    switch (col->type.id) {
    case PA_TYPE_VARCHAR: return 4 + (uint64_t)(in->offsets[r + 1] - in->offsets[r]);
    case PA_TYPE_BOOLEAN: return 1;
    default: return col->ptype == KN_PT_INT32 ? 4 : 8;
    }
}

/* Build the n values rows[0..n) of `in` with kn_dict_build and check it
 * against the reference, with no limit and with limits that stop it. */
static void check(const kn_column *col, const kn_values *in, const uint32_t *sel, size_t n)
{
    pa_err err;
    pa_err_init(&err);
    uint32_t *rows = malloc((n ? n : 1) * sizeof *rows);
    for (size_t i = 0; i < n; i++)
        rows[i] = sel ? sel[i] : (uint32_t)i;
    /* Reference: first[i] = position of the first value equal to value i. */
    ref_ctx ctx = {col, in};
    g_ctx = &ctx;
    g_rows = rows;
    uint32_t *order = malloc((n ? n : 1) * sizeof *order), *first = malloc((n ? n : 1) * sizeof *first);
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    qsort(order, n, sizeof *order, pos_cmp);
    for (size_t k = 0; k < n; k++)
        first[order[k]] = k > 0 && key_cmp(rows[order[k]], rows[order[k - 1]]) == 0 ? first[order[k - 1]] : order[k];
    uint32_t *entry_of = malloc((n ? n : 1) * sizeof *entry_of);   /* by position of a first occurrence */
    uint32_t ne = 0;
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        if (first[i] == i) {
            entry_of[i] = ne++;
            bytes += cost(col, in, rows[i]);
        }
    if (col->type.id == PA_TYPE_BOOLEAN)
        bytes = (ne + 7) / 8;

    size_t scr = kn_dict_build_scratch(n);
    void *scratch = malloc(scr);
    uint32_t *er = malloc((n ? n : 1) * sizeof *er), *idx = malloc((n ? n : 1) * sizeof *idx);
    kn_dict_result res;
    KN_OK(kn_dict_build(col, in, sel, n, NULL, scratch, scr, er, idx, &res, &err));
    assert_false(res.too_large);
    assert_int_equal(res.n_entries, ne);
    assert_int_equal(res.plain_bytes, bytes);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(idx[i], entry_of[first[i]]);
        if (first[i] == i)
            assert_int_equal(er[entry_of[i]], rows[i]);
    }
    /* Limits: stop at the entry that would pass them. */
    if (ne > 2) {
        uint32_t cap = ne / 2 + 1;
        kn_dict_limits lim = {.max_entries = cap};
        KN_OK(kn_dict_build(col, in, sel, n, &lim, scratch, scr, er, idx, &res, &err));
        assert_true(res.too_large);
        assert_int_equal(res.n_entries, cap);
        if (col->type.id != PA_TYPE_BOOLEAN) {
            uint64_t b = 0, want_b = 0;
            uint32_t k = 0, want_k = 0;
            uint64_t max_bytes = bytes / 3;
            for (size_t i = 0; i < n; i++)
                if (first[i] == i) {
                    uint64_t c = cost(col, in, rows[i]);
                    if (b + c > max_bytes)
                        break;
                    b += c;
                    k++;
                }
            want_b = b;
            want_k = k;
            lim = (kn_dict_limits){.max_bytes = max_bytes};
            KN_OK(kn_dict_build(col, in, sel, n, &lim, scratch, scr, er, idx, &res, &err));
            assert_true(res.too_large);
            assert_int_equal(res.n_entries, want_k);
            assert_int_equal(res.plain_bytes, want_b);
        }
    }
    free(rows);
    free(order);
    free(first);
    free(entry_of);
    free(scratch);
    free(er);
    free(idx);
    pa_err_close(&err);
}

static uint64_t seed_ = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    seed_ ^= seed_ << 13;
    seed_ ^= seed_ >> 7;
    seed_ ^= seed_ << 17;
    return seed_;
}

static void test_fixed(void **state)
{
    (void)state;
    enum { N = 60000 };
    int32_t *i32 = malloc(N * sizeof *i32);
    int64_t *i64 = malloc(N * sizeof *i64);
    double *d = malloc(N * sizeof *d);
    uint8_t *b = malloc(N);
    uint32_t *sel = malloc(N * sizeof *sel);
    size_t ns = 0;
    for (int i = 0; i < N; i++) {
        i32[i] = (int32_t)(next() % 5000) - 2500;     /* 5000 values: the table grows */
        i64[i] = (i / 4) * 32 + (int64_t)(next() % 3); /* runs and sorted keys */
        uint64_t r = next() % 100;
        d[i] = r == 0 ? NAN : r == 1 ? -0.0 : r == 2 ? 0.0 : (double)(next() % 700) / 8;
        b[i] = (uint8_t)(next() & 1);
        if (next() % 3)
            sel[ns++] = (uint32_t)i;
    }
    kn_column c32 = kcol(KN_PT_INT32, PA_TYPE_INTEGER, 0, 0), c64 = kcol(KN_PT_INT64, PA_TYPE_BIGINT, 0, 0);
    kn_column cd = kcol(KN_PT_DOUBLE, PA_TYPE_DOUBLE, 0, 0), cb = kcol(KN_PT_BOOLEAN, PA_TYPE_BOOLEAN, 0, 0);
    kn_values v32 = {i32, NULL, NULL, N}, v64 = {i64, NULL, NULL, N}, vd = {d, NULL, NULL, N}, vb = {b, NULL, NULL, N};
    check(&c32, &v32, NULL, N);
    check(&c32, &v32, sel, ns);
    check(&c32, &v32, NULL, 10);
    check(&c64, &v64, NULL, N);
    check(&c64, &v64, sel, ns);
    check(&cd, &vd, NULL, N);
    check(&cb, &vb, NULL, N);
    check(&c32, &v32, NULL, 0);
    free(i32);
    free(i64);
    free(d);
    free(b);
    free(sel);
}

static void test_strings(void **state)
{
    (void)state;
    enum { N = 40000 };
    int32_t *off = malloc((N + 1) * sizeof *off);
    uint8_t *bytes = malloc(N * 40);
    off[0] = 0;
    for (int i = 0; i < N; i++) {
        /* Lengths 0..39 (every tail size), values drawn from ~9000, many
         * sharing their first bytes. */
        uint64_t v = next() % 9000;
        int len = (int)(v % 40);
        for (int k = 0; k < len; k++)
            bytes[off[i] + k] = (uint8_t)(k < len - 2 ? 'a' + k % 3 : 'A' + (int)((v / 40 + (uint64_t)k) % 26));
        off[i + 1] = off[i] + len;
    }
    kn_column c = kcol(KN_PT_BYTE_ARRAY, PA_TYPE_VARCHAR, 0, 0);
    kn_values v = {NULL, off, bytes, N};
    check(&c, &v, NULL, N);
    uint32_t sel[1000];
    for (int i = 0; i < 1000; i++)
        sel[i] = (uint32_t)(N - 1 - 7 * i);
    check(&c, &v, sel, 1000);
    free(off);
    free(bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed),
        cmocka_unit_test(test_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
