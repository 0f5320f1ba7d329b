/*
 * expr_testutil.h - helpers for the expression, selection, FILTER and
 * PROJECT tests: the device named by PISTA_TEST_DEVICE (default "cpu"),
 * host-side test columns with random values and NULLs, upload/download of
 * columns, and evaluation of ex_expr trees through the compiler and
 * kn_eval on the device. Results always come back to the host before they
 * are checked, so the same tests verify another backend.
 */
#ifndef EXPR_TESTUTIL_H
#define EXPR_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "exec/expr_int.h"
#include "kconf_testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline const char *et_spec(void)
{
    const char *s = getenv("PISTA_TEST_DEVICE");
    return s && *s ? s : "cpu";
}

static inline dv_device *et_open(uint64_t limit)
{
    dv_options o = {.spec = et_spec(), .memory_limit = limit, .cpu_threads = 2};
    dv_device *d = NULL;
    pa_err e;
    pa_err_init(&e);
    if (dv_open(&o, &d, &e) != PA_OK)
        fail_msg("cannot open device %s: %s", et_spec(), e.msg);
    pa_err_close(&e);
    return d;
}

/* ------------------------------------------------------------ randomness */

static uint64_t et_rng = 0x9E3779B97F4A7C15ull;
static inline uint64_t et_next(void)
{
    et_rng ^= et_rng << 13;
    et_rng ^= et_rng >> 7;
    et_rng ^= et_rng << 17;
    return et_rng;
}
static inline int64_t et_range(int64_t lo, int64_t hi) { return lo + (int64_t)(et_next() % (uint64_t)(hi - lo + 1)); }

/* ------------------------------------------------------- host columns */

static inline pa_type et_t(pa_type_id id) { return (pa_type){id, 0, 0}; }
static inline pa_type et_dec(int p, int s) { return (pa_type){PA_TYPE_DECIMAL, (uint8_t)p, (uint8_t)s}; }

/* A host column of n rows of type t, zeroed, with a validity bitmap when
 * with_nulls (all valid to start). Free with et_col_free. */
static inline pa_column et_col(pa_type t, int64_t n, bool with_nulls)
{
    pa_column c;
    memset(&c, 0, sizeof c);
    c.type = t;
    c.length = n;
    if (t.id == PA_TYPE_VARCHAR) {
        c.offsets = calloc((size_t)n + 1, sizeof(int32_t));
        c.data = calloc(1, 1);
    } else {
        c.data = calloc((size_t)(n ? n : 1), (size_t)pa_type_bytes(t));
    }
    if (with_nulls) {
        c.validity = malloc((size_t)(n + 8) / 8);
        memset(c.validity, 0xff, (size_t)(n + 8) / 8);
    }
    return c;
}

static inline void et_col_free(pa_column *c)
{
    free(c->data);
    free(c->offsets);
    free(c->validity);
    memset(c, 0, sizeof *c);
}

static inline void et_set_null(pa_column *c, int64_t i, bool null)
{
    if (null)
        c->validity[i >> 3] &= (uint8_t)~(1u << (i & 7));
    else
        c->validity[i >> 3] |= (uint8_t)(1u << (i & 7));
}

/* Fill a VARCHAR column from n C strings (NULL entries are NULL rows). */
static inline pa_column et_strs(const char *const *s, int64_t n)
{
    bool nulls = false;
    for (int64_t i = 0; i < n; i++)
        nulls |= s[i] == NULL;
    pa_column c = et_col(et_t(PA_TYPE_VARCHAR), n, nulls);
    size_t total = 0;
    for (int64_t i = 0; i < n; i++)
        total += s[i] ? strlen(s[i]) : 0;
    free(c.data);
    c.data = malloc(total + 1);
    size_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        if (s[i]) {
            memcpy((char *)c.data + at, s[i], strlen(s[i]));
            at += strlen(s[i]);
        } else {
            et_set_null(&c, i, true);
        }
        c.offsets[i + 1] = (int32_t)at;
    }
    return c;
}

/* Random values of t; a NULL with probability null_pct / 100. */
static inline pa_column et_random(pa_type t, int64_t n, int null_pct)
{
    if (t.id == PA_TYPE_VARCHAR) {
        static const char *const words[] = {"", "a", "ab", "abc", "b", "ba", "PROMO BRASS", "MEDIUM POLISHED",
                                            "green", "special requests", "x%y", "h\xc3\xa9llo", "zz", "AIR",
                                            "AIR REG", "MAIL"};
        const char **s = malloc((size_t)(n ? n : 1) * sizeof *s);
        for (int64_t i = 0; i < n; i++)
            s[i] = (int)(et_next() % 100) < null_pct ? NULL : words[et_next() % 16];
        pa_column c = et_strs(s, n);
        free(s);
        return c;
    }
    pa_column c = et_col(t, n, null_pct > 0);
    for (int64_t i = 0; i < n; i++) {
        switch (t.id) {
        case PA_TYPE_BOOLEAN: ((uint8_t *)c.data)[i] = (uint8_t)(et_next() & 1); break;
        case PA_TYPE_INTEGER: ((int32_t *)c.data)[i] = (int32_t)et_range(-100000, 100000); break;
        case PA_TYPE_DATE: ((int32_t *)c.data)[i] = (int32_t)et_range(-800000, 800000); break;
        case PA_TYPE_BIGINT: ((int64_t *)c.data)[i] = et_range(-(1LL << 40), 1LL << 40); break;
        case PA_TYPE_DOUBLE: ((double *)c.data)[i] = (double)et_range(-1000000, 1000000) / 64.0; break;
        case PA_TYPE_DECIMAL:
            if (t.precision > 18)
                ((__int128 *)c.data)[i] = (__int128)et_range(-(1LL << 60), 1LL << 60) * 1000;
            else
                ((int64_t *)c.data)[i] = et_range(-999999999, 999999999);
            break;
        default: break;
        }
        if (null_pct > 0 && (int)(et_next() % 100) < null_pct)
            et_set_null(&c, i, true);
    }
    return c;
}

static inline bool et_valid(const pa_column *c, int64_t i) { return pa_column_valid(c, i); }
static inline int32_t et_i32(const pa_column *c, int64_t i) { return ((const int32_t *)c->data)[i]; }
static inline int64_t et_i64(const pa_column *c, int64_t i) { return ((const int64_t *)c->data)[i]; }
static inline __int128 et_w(const pa_column *c, int64_t i) { return ((const __int128 *)c->data)[i]; }
static inline double et_f(const pa_column *c, int64_t i) { return ((const double *)c->data)[i]; }
static inline uint8_t et_b(const pa_column *c, int64_t i) { return ((const uint8_t *)c->data)[i]; }
static inline int et_slen(const pa_column *c, int64_t i) { return c->offsets[i + 1] - c->offsets[i]; }
static inline const char *et_sp(const pa_column *c, int64_t i) { return (const char *)c->data + c->offsets[i]; }
/* Exact numbers as scaled 128-bit integers. */
static inline __int128 et_exact(const pa_column *c, int64_t i)
{
    switch (c->type.id) {
    case PA_TYPE_BOOLEAN: return et_b(c, i);
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: return et_i32(c, i);
    case PA_TYPE_DECIMAL: return c->type.precision > 18 ? et_w(c, i) : et_i64(c, i);
    default: return et_i64(c, i);
    }
}

/* ---------------------------------------------------- device transfers */

typedef struct et_dev {
    dv_device *d;
    dv_stream *s;
} et_dev;

static inline et_dev et_dev_open(uint64_t limit)
{
    et_dev x;
    x.d = et_open(limit);
    if (dv_stream_create(x.d, &x.s, NULL) != PA_OK)
        fail_msg("stream");
    return x;
}

static inline void et_dev_close(et_dev *x)
{
    dv_stream_destroy(x->s);
    dv_close(x->d);
}

static inline void *et_up(et_dev *x, const void *host, size_t n)
{
    void *p = NULL;
    pa_err e;
    pa_err_init(&e);
    if (dv_alloc(x->d, n ? n : 1, &p, &e) != PA_OK)
        fail_msg("dv_alloc %zu: %s", n, e.msg);
    if (n && dv_copy_async(x->s, p, host, n, DV_COPY_H2D, &e) != PA_OK)
        fail_msg("copy: %s", e.msg);
    dv_stream_sync(x->s, NULL);   /* the host buffer may go right after */
    pa_err_close(&e);
    return p;
}

static inline void et_down(et_dev *x, void *host, const void *dev, size_t n)
{
    pa_err e;
    pa_err_init(&e);
    if (n && dv_copy_async(x->s, host, dev, n, DV_COPY_D2H, &e) != PA_OK)
        fail_msg("copy back: %s", e.msg);
    pa_err_close(&e);
    dv_stream_sync(x->s, NULL);
}

static inline size_t et_data_bytes(const pa_column *c)
{
    return c->type.id == PA_TYPE_VARCHAR ? (size_t)c->offsets[c->length] : (size_t)c->length * pa_type_bytes(c->type);
}

/* Device copy of a host column (free with et_dcol_free). */
static inline pa_column et_to_dev(et_dev *x, const pa_column *h)
{
    pa_column c = *h;
    c.data = et_up(x, h->data, et_data_bytes(h));
    if (h->offsets)
        c.offsets = et_up(x, h->offsets, (size_t)(h->length + 1) * 4);
    if (h->validity)
        c.validity = et_up(x, h->validity, (size_t)(h->length + 7) / 8);
    dv_stream_sync(x->s, NULL);
    return c;
}

static inline void et_dcol_free(et_dev *x, pa_column *c)
{
    dv_free(x->d, c->data);
    if (c->offsets)
        dv_free(x->d, c->offsets);
    if (c->validity)
        dv_free(x->d, c->validity);
}

/* ---------------------------------------------------- expression runs */

/* Evaluate exprs over the host columns `in` (n_in of them, rows rows) on
 * the device; outs[j] become host columns (caller frees with et_col_free).
 * Returns the status of compile or kn_eval; err gets the message. */
static inline int et_eval_prog(et_dev *x, kn_program *prog, const pa_column *in, int n_in, int64_t rows,
                                pa_column *outs, pa_err *err);

static inline int et_eval(et_dev *x, ex_expr *const *exprs, int n, const pa_column *in, int n_in, int64_t rows,
                   pa_column *outs, pa_err *err)
{
    pa_type types[64];
    for (int i = 0; i < n_in; i++)
        types[i] = in[i].type;
    kn_program *prog = NULL;
    int rc = ex__compile(exprs, n, types, n_in, &prog, err);
    if (rc != PA_OK)
        return rc;
    assert_int_equal(n, prog->n_outputs);
    return et_eval_prog(x, prog, in, n_in, rows, outs, err);
}

/* As et_eval for a program built by hand (kn_program_check must pass);
 * frees prog with pa_free. */
static inline int et_eval_prog(et_dev *x, kn_program *prog, const pa_column *in, int n_in, int64_t rows,
                               pa_column *outs, pa_err *err)
{
    const int n = prog->n_outputs;
    int rc;
    assert_int_equal(kn_program_check(prog, NULL), PA_OK);
    pa_column din[64], dout[64];
    assert_true(n <= 64 && n_in <= 64);
    for (int i = 0; i < n_in; i++)
        din[i] = et_to_dev(x, &in[i]);
    for (int j = 0; j < n; j++) {
        pa_type t = kn_program_outputs(prog)[j].type;
        bool nul = kn_eval_may_null(prog, j, din, n_in);
        memset(&dout[j], 0, sizeof dout[j]);
        dout[j].type = t;
        dout[j].length = rows;
        if (t.id == PA_TYPE_VARCHAR) {
            /* The bound from the host columns, and from the device's as a kernel. */
            int64_t b = kn_eval_str_bound(prog, j, in, n_in, rows), *db = NULL;
            kn_ctx bctx = {x->d, x->s};
            assert_int_equal(dv_host_alloc(x->d, sizeof *db, (void **)&db, NULL), PA_OK);
            assert_int_equal(kn_eval_str_bytes(&bctx, prog, j, din, n_in, rows, db, NULL), PA_OK);
            assert_int_equal(dv_stream_sync(x->s, NULL), PA_OK);
            assert_int_equal(*db, b);
            dv_host_free(x->d, db);
            dv_alloc(x->d, (size_t)b + 1, &dout[j].data, NULL);
            int32_t *z = calloc((size_t)rows + 1, 4);
            dout[j].offsets = et_up(x, z, (size_t)(rows + 1) * 4);
            free(z);
        } else {
            dv_alloc(x->d, (size_t)(rows ? rows : 1) * pa_type_bytes(t), &dout[j].data, NULL);
        }
        if (nul)
            dv_alloc(x->d, (size_t)(rows + 8) / 8, (void **)&dout[j].validity, NULL);
    }
    size_t ss = kn_eval_scratch_size(prog);
    void *scratch = NULL, *text = NULL;
    dv_alloc(x->d, ss, &scratch, NULL);
    /* The text area: its size from the host columns, from the device's
     * as a kernel, and from the byte counts alone, alike. */
    int64_t tb = kn_eval_str_bound(prog, KN_EVAL_TEXT_AREA, in, n_in, rows);
    {
        int64_t *db = NULL, known = -1;
        kn_ctx bctx = {x->d, x->s};
        assert_int_equal(dv_host_alloc(x->d, sizeof *db, (void **)&db, NULL), PA_OK);
        assert_int_equal(kn_eval_str_bytes(&bctx, prog, KN_EVAL_TEXT_AREA, din, n_in, rows, db, NULL), PA_OK);
        assert_int_equal(dv_stream_sync(x->s, NULL), PA_OK);
        assert_int_equal(*db, tb);
        dv_host_free(x->d, db);
        pa_column kin[64];
        for (int i = 0; i < n_in; i++) {
            kin[i] = din[i];
            if (in[i].type.id == PA_TYPE_VARCHAR)
                pa_column_set_bytes(&kin[i], rows ? in[i].offsets[rows] : 0);
        }
        assert_true(kn_eval_text_area_known(prog, kin, n_in, rows, &known));
        assert_int_equal(known, tb);
    }
    if (tb > 0)
        dv_alloc(x->d, (size_t)tb, &text, NULL);
    /* On a stream of its own: an expected error must not stay on x->s. */
    kn_ctx ctx = kc_err_ctx(x->d, x->s);
    rc = kc_err_end(&ctx, kn_eval(&ctx, prog, din, n_in, rows, dout, scratch, text, tb, err), err);
    for (int j = 0; j < n; j++) {
        outs[j] = et_col(dout[j].type, rows, dout[j].validity != NULL);
        if (rc == PA_OK) {
            if (dout[j].type.id == PA_TYPE_VARCHAR) {
                et_down(x, outs[j].offsets, dout[j].offsets, (size_t)(rows + 1) * 4);
                free(outs[j].data);
                outs[j].data = malloc((size_t)outs[j].offsets[rows] + 1);
            }
            et_down(x, outs[j].data, dout[j].data, et_data_bytes(&outs[j]));
            if (dout[j].validity)
                et_down(x, outs[j].validity, dout[j].validity, (size_t)(rows + 7) / 8);
        }
        et_dcol_free(x, &dout[j]);
    }
    for (int i = 0; i < n_in; i++)
        et_dcol_free(x, &din[i]);
    dv_free(x->d, scratch);
    if (text)
        dv_free(x->d, text);
    pa_free(prog);
    return rc;
}

/* One expression, must succeed. */
static inline pa_column et_eval1(et_dev *x, ex_expr *e, const pa_column *in, int n_in, int64_t rows)
{
    pa_err err;
    pa_err_init(&err);
    pa_column out;
    assert_non_null(e);
    int rc = et_eval(x, &e, 1, in, n_in, rows, &out, &err);
    if (rc != PA_OK)
        fail_msg("eval failed: %s", err.msg);
    pa_err_close(&err);
    return out;
}

#endif /* EXPR_TESTUTIL_H */
