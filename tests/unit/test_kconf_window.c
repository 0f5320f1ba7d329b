/*
 * test_kconf_window.c - conformance of the window-function kernels
 * (kn_window_bounds, kn_window_frames, kn_window_tree, kn_window_eval) on
 * the device named by PISTA_TEST_DEVICE (default "cpu"): random rows sorted
 * by a partition key and an order key (with NULLs and ties), every function
 * over random ROWS and RANGE frames, computed in a few slices of rows, and
 * checked row by row against a naive evaluation here (a loop over each
 * row's frame, written from the SQL definitions). Inputs are uploaded to
 * device memory and outputs read back, so the suite runs on any device.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kconf_testutil.h"

static dv_device *dev;
static dv_stream *stream;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int setup(void **state)
{
    (void)state;
    const char *s = getenv("PISTA_TEST_DEVICE");
    dv_options o = {.spec = s && *s ? s : "cpu", .cpu_threads = 2};
    pa_err e;
    pa_err_init(&e);
    if (dv_open(&o, &dev, &e) != PA_OK || dv_stream_create(dev, &stream, &e) != PA_OK)
        fail_msg("cannot open device: %s", e.msg);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    dv_stream_destroy(stream);
    dv_close(dev);
    return 0;
}

static void *up(const void *h, size_t n)
{
    void *d = NULL;
    assert_int_equal(dv_alloc(dev, n ? n : 1, &d, NULL), PA_OK);
    if (n && h)
        assert_int_equal(dv_copy_async(stream, d, h, n, DV_COPY_H2D, NULL), PA_OK);
    return d;
}

static void down(void *h, const void *d, size_t n)
{
    if (n)
        assert_int_equal(dv_copy_async(stream, h, d, n, DV_COPY_D2H, NULL), PA_OK);
}

static bool valid(const pa_column *c, int64_t i) { return pa_column_valid(c, i); }

/* ------------------------------------------------------------ the rows */

typedef struct rows {
    int64_t n;
    pa_column part;           /* INTEGER, NULLs last */
    pa_column okey;           /* INTEGER or DOUBLE, ascending or descending, NULLs first or last */
    pa_column skey;           /* VARCHAR: a second order key (ties broken sometimes) */
    pa_column arg;            /* BIGINT with NULLs (sums), */
    pa_column darg;           /* DOUBLE, no NULLs */
    pa_column sarg;           /* VARCHAR with NULLs (min/max, taking) */
    bool desc, nulls_first, dbl;
} rows;

static double okey_at(const rows *r, int64_t i)
{
    return r->dbl ? ((const double *)r->okey.data)[i] : ((const int32_t *)r->okey.data)[i];
}

static void set_bit(uint8_t *v, int64_t i, bool b)
{
    if (b)
        v[i >> 3] |= (uint8_t)(1u << (i & 7));
    else
        v[i >> 3] &= (uint8_t)~(1u << (i & 7));
}

/* Rows sorted by (part ASC NULLS LAST, okey in r->desc with NULLs as
 * r->nulls_first, skey ASC). */
static void make_rows(rows *r, int64_t n, bool dbl)
{
    memset(r, 0, sizeof *r);
    r->n = n;
    r->dbl = dbl;
    r->desc = next() & 1;
    r->nulls_first = next() & 1;
    size_t vb = (size_t)(n + 8) / 8 + 1;
    r->part = (pa_column){.type = {PA_TYPE_INTEGER, 0, 0}, .length = n, .data = calloc((size_t)n + 1, 4),
                          .validity = calloc(vb, 1)};
    r->okey = (pa_column){.type = {dbl ? PA_TYPE_DOUBLE : PA_TYPE_INTEGER, 0, 0}, .length = n,
                          .data = calloc((size_t)n + 1, 8), .validity = calloc(vb, 1)};
    r->skey = (pa_column){.type = {PA_TYPE_VARCHAR, 0, 0}, .length = n, .offsets = calloc((size_t)n + 1, 4),
                          .data = calloc((size_t)n * 2 + 1, 1)};
    r->arg = (pa_column){.type = {PA_TYPE_BIGINT, 0, 0}, .length = n, .data = calloc((size_t)n + 1, 8),
                         .validity = calloc(vb, 1)};
    r->darg = (pa_column){.type = {PA_TYPE_DOUBLE, 0, 0}, .length = n, .data = calloc((size_t)n + 1, 8)};
    r->sarg = (pa_column){.type = {PA_TYPE_VARCHAR, 0, 0}, .length = n, .offsets = calloc((size_t)n + 1, 4),
                          .data = calloc((size_t)n * 5 + 1, 1), .validity = calloc(vb, 1)};
    int parts = 1 + (int)(next() % 6);
    /* partition sizes: random cut points */
    int64_t at = 0;
    for (int p = 0; p <= parts && at < n; p++) {
        int64_t len = p == parts ? n - at : (int64_t)(next() % (uint64_t)(n / parts + 2));
        if (at + len > n)
            len = n - at;
        bool pnull = p == parts;   /* the last partition: NULL keys */
        /* order keys of this partition, sorted in the key's order */
        int64_t nn = len ? (int64_t)(next() % (uint64_t)(len / 4 + 1)) : 0;   /* NULL order keys */
        double v = (double)(next() % 20) - 5;
        double *ks = calloc((size_t)len + 1, sizeof *ks);
        for (int64_t i = 0; i < len - nn; i++) {
            ks[i] = v;
            if (next() % 3)
                v += dbl ? (double)(next() % 50) / 8.0 : (double)(next() % 4);
        }
        for (int64_t i = 0; i < len; i++) {
            int64_t row = at + i;
            ((int32_t *)r->part.data)[row] = p * 10;
            set_bit(r->part.validity, row, !pnull);
            bool knull = r->nulls_first ? i < nn : i >= len - nn;
            int64_t k = r->nulls_first ? i - nn : i;   /* index among the non-NULL keys */
            set_bit(r->okey.validity, row, !knull);
            if (!knull) {
                double kv = r->desc ? ks[len - nn - 1 - k] : ks[k];
                if (dbl)
                    ((double *)r->okey.data)[row] = kv;
                else
                    ((int32_t *)r->okey.data)[row] = (int32_t)kv;
            }
        }
        free(ks);
        at += len;
    }
    /* skey: within equal (part, okey), ascending letters, ties sometimes */
    int32_t off = 0;
    char last = 'a';
    for (int64_t i = 0; i < n; i++) {
        bool same = i > 0 && valid(&r->part, i) == valid(&r->part, i - 1) &&
                    ((int32_t *)r->part.data)[i] == ((int32_t *)r->part.data)[i - 1] &&
                    valid(&r->okey, i) == valid(&r->okey, i - 1) &&
                    (!valid(&r->okey, i) || okey_at(r, i) == okey_at(r, i - 1));
        last = !same ? 'a' : (next() % 2 ? (char)(last + 1 > 'z' ? 'z' : last + 1) : last);
        r->skey.offsets[i] = off;
        ((char *)r->skey.data)[off++] = last;
        if (next() % 4 == 0)
            ((char *)r->skey.data)[off++] = 'x';
        r->skey.offsets[i + 1] = off;
    }
    /* arguments */
    int32_t so = 0;
    for (int64_t i = 0; i < n; i++) {
        ((int64_t *)r->arg.data)[i] = (int64_t)(next() % 2001) - 1000;
        set_bit(r->arg.validity, i, next() % 5 != 0);
        ((double *)r->darg.data)[i] = (double)((int64_t)(next() % 1000) - 500) / 4.0;
        bool sv = next() % 6 != 0;
        set_bit(r->sarg.validity, i, sv);
        r->sarg.offsets[i] = so;
        int len = sv ? (int)(next() % 5) : 0;
        for (int k = 0; k < len; k++)
            ((char *)r->sarg.data)[so++] = (char)('a' + next() % 4);
        r->sarg.offsets[i + 1] = so;
    }
}

static void free_rows(rows *r)
{
    pa_column *c[] = {&r->part, &r->okey, &r->skey, &r->arg, &r->darg, &r->sarg};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        free(c[i]->data);
        free(c[i]->offsets);
        free(c[i]->validity);
    }
}

static size_t bytes_of(const pa_column *c)
{
    if (c->type.id == PA_TYPE_VARCHAR)
        return (size_t)c->offsets[c->length] + 1;
    return (size_t)c->length * (size_t)pa_type_bytes(c->type) + 1;
}

static pa_column col_up(const pa_column *h)
{
    pa_column d = *h;
    d.data = up(h->data, bytes_of(h));
    if (h->offsets)
        d.offsets = up(h->offsets, (size_t)(h->length + 1) * 4);
    if (h->validity)
        d.validity = up(h->validity, (size_t)(h->length + 8) / 8 + 1);
    return d;
}

static void col_dev_free(pa_column *d)
{
    dv_free(dev, d->data);
    dv_free(dev, d->offsets);
    dv_free(dev, d->validity);
}

/* --------------------------------------------------- naive reference */

static bool key_eq(const rows *r, int64_t a, int64_t b, bool order_too, bool skey)
{
    if (valid(&r->part, a) != valid(&r->part, b))
        return false;
    if (valid(&r->part, a) && ((int32_t *)r->part.data)[a] != ((int32_t *)r->part.data)[b])
        return false;
    if (!order_too)
        return true;
    if (valid(&r->okey, a) != valid(&r->okey, b))
        return false;
    if (valid(&r->okey, a) && okey_at(r, a) != okey_at(r, b))
        return false;
    if (!skey)
        return true;
    int32_t la = r->skey.offsets[a + 1] - r->skey.offsets[a], lb = r->skey.offsets[b + 1] - r->skey.offsets[b];
    return la == lb && !memcmp((char *)r->skey.data + r->skey.offsets[a], (char *)r->skey.data + r->skey.offsets[b],
                               (size_t)la);
}

typedef struct bnd {
    int64_t ps, pe, qs, qe;
} bnd;

static bnd ref_bounds(const rows *r, int64_t i, bool skey)
{
    bnd b = {i, i + 1, i, i + 1};
    while (b.ps > 0 && key_eq(r, b.ps - 1, i, false, false))
        b.ps--;
    while (b.pe < r->n && key_eq(r, b.pe, i, false, false))
        b.pe++;
    while (b.qs > 0 && key_eq(r, b.qs - 1, i, true, skey))
        b.qs--;
    while (b.qe < r->n && key_eq(r, b.qe, i, true, skey))
        b.qe++;
    return b;
}

/* The frame of row i by the SQL definition: rows of the partition from the
 * first that satisfies the start bound to the last that satisfies the end
 * bound. RANGE offsets: the distance in the sort order, NULL keys apart. */
static void ref_frame(const rows *r, const kn_window_frame *f, int64_t i, bool skey, int64_t *fs, int64_t *fe)
{
    bnd b = ref_bounds(r, i, skey);
    int64_t s, e;
    if (f->rows) {   /* rows of the partition from the first satisfying the start to the last satisfying the end */
        s = b.pe, e = b.ps;
        for (int64_t j = b.ps; j < b.pe; j++) {
            int64_t d = j - i;
            bool in_s = f->start == KN_FB_UNBOUNDED_PRECEDING || (f->start == KN_FB_PRECEDING && d >= -f->start_n) ||
                        (f->start == KN_FB_CURRENT_ROW && d >= 0) || (f->start == KN_FB_FOLLOWING && d >= f->start_n);
            bool in_e = f->end == KN_FB_UNBOUNDED_FOLLOWING || (f->end == KN_FB_PRECEDING && d <= -f->end_n) ||
                        (f->end == KN_FB_CURRENT_ROW && d <= 0) || (f->end == KN_FB_FOLLOWING && d <= f->end_n);
            if (in_s && j < s)
                s = j;
            if (in_e)
                e = j + 1;
        }
    } else {
        /* RANGE: the non-NULL keys of the partition are [nlo, nhi), its NULL
         * ones before or after them. An offset bound of a non-NULL row is
         * the first non-NULL row at or past the bound's value (by the
         * distance d in the sort order), NULL rows apart: the NULLs at the
         * partition's start are in a frame that starts UNBOUNDED, as in
         * DuckDB and PostgreSQL. A NULL row's offset bounds are its peers. */
        int64_t nlo = b.ps, nhi = b.pe;
        while (nlo < b.pe && !valid(&r->okey, nlo))
            nlo++;
        while (nhi > nlo && !valid(&r->okey, nhi - 1))
            nhi--;
        bool cur_null = !valid(&r->okey, i);
        double so = r->dbl ? f->start_d : (double)f->start_n, eo = r->dbl ? f->end_d : (double)f->end_n;
        /* first non-NULL j with d(j) >= t (or > t when strict), else nhi */
        #define FIRST_AT(t, strict)                                                                    \
            __extension__({                                                                            \
                int64_t p_ = nhi;                                                                      \
                for (int64_t j = nhi - 1; j >= nlo; j--) {                                             \
                    double d = r->desc ? okey_at(r, i) - okey_at(r, j) : okey_at(r, j) - okey_at(r, i); \
                    if ((strict) ? d > (t) : d >= (t))                                                 \
                        p_ = j;                                                                        \
                }                                                                                      \
                p_;                                                                                    \
            })
        switch (f->start) {
        case KN_FB_UNBOUNDED_PRECEDING: s = b.ps; break;
        case KN_FB_CURRENT_ROW: s = b.qs; break;
        default: s = cur_null ? b.qs : FIRST_AT(f->start == KN_FB_PRECEDING ? -so : so, false); break;
        }
        switch (f->end) {
        case KN_FB_UNBOUNDED_FOLLOWING: e = b.pe; break;
        case KN_FB_CURRENT_ROW: e = b.qe; break;
        default: e = cur_null ? b.qe : FIRST_AT(f->end == KN_FB_PRECEDING ? -eo : eo, true); break;
        }
        #undef FIRST_AT
    }
    if (e < s)
        e = s;
    *fs = s;
    *fe = e;
}

static int scmp(const pa_column *c, int64_t a, int64_t b)
{
    int32_t la = c->offsets[a + 1] - c->offsets[a], lb = c->offsets[b + 1] - c->offsets[b];
    int m = memcmp((char *)c->data + c->offsets[a], (char *)c->data + c->offsets[b], (size_t)(la < lb ? la : lb));
    return m ? m : la < lb ? -1 : la > lb;
}

/* ------------------------------------------------------------ running */

typedef struct dev_rows {
    pa_column part, okey, skey, arg, darg, sarg;
    int32_t *bounds, *frames;
} dev_rows;

/* The function on the device, rows [0, n) in three slices: values or
 * positions back in *vals / *pos (malloc'ed), validity in *vv. */
static void run_fn(const rows *r, dev_rows *d, const kn_window_fn *fn, const pa_column *arg, pa_type out_t,
                   void **vals, uint8_t **vv, int32_t **pos)
{
    kn_ctx ctx = {dev, stream};
    int64_t n = r->n;
    void *tree = NULL;
    size_t tb = kn_window_tree_bytes(fn->kind, n);
    if (tb) {
        assert_int_equal(dv_alloc(dev, tb, &tree, NULL), PA_OK);
        assert_int_equal(kn_window_tree(&ctx, fn, arg, d->bounds, n, tree, tb, NULL), PA_OK);
    }
    bool takes = kn_window_takes(fn->kind);
    size_t w = takes ? 4 : (size_t)pa_type_bytes(out_t);
    void *dv = NULL, *dvv = NULL;
    assert_int_equal(dv_alloc(dev, (size_t)n * w + 8, &dv, NULL), PA_OK);
    assert_int_equal(dv_alloc(dev, (size_t)n / 8 + 8, &dvv, NULL), PA_OK);
    int64_t cut1 = n / 3, cut2 = n - n / 4, cuts[4] = {0, cut1, cut2, n};
    *vals = calloc((size_t)n * w + 8, 1);
    *vv = calloc((size_t)n / 8 + 8, 1);
    uint8_t *part_v = calloc((size_t)n / 8 + 8, 1);
    for (int k = 0; k < 3; k++) {
        int64_t first = cuts[k], m = cuts[k + 1] - first;
        pa_column out = {.type = out_t, .length = m, .data = dv, .validity = dvv};
        assert_int_equal(kn_window_eval(&ctx, fn, arg, d->bounds, d->frames, tree, n, first, m, takes ? NULL : &out,
                                        takes ? (int32_t *)dv : NULL, NULL),
                         PA_OK);
        assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
        down((uint8_t *)*vals + (size_t)first * w, dv, (size_t)m * w);
        down(part_v, dvv, (size_t)(m + 7) / 8);
        assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
        for (int64_t i = 0; i < m; i++)
            set_bit(*vv, first + i, (part_v[i >> 3] >> (i & 7)) & 1);
    }
    free(part_v);
    *pos = takes ? (int32_t *)*vals : NULL;
    dv_free(dev, dv);
    dv_free(dev, dvv);
    if (tree)
        dv_free(dev, tree);
}

/* STRING_AGG over the VARCHAR argument in three slices: each slice's byte
 * count, then its values, against the partition's non-NULL values joined
 * here (at its first row; NULL elsewhere and where it has none). */
static void check_string_agg(const rows *r, dev_rows *d, const int32_t *hb)
{
    static const char *const seps[] = {"", ",", "--", ", and "};
    const char *sep = seps[next() % 4];
    int64_t n = r->n;
    kn_ctx ctx = {dev, stream};
    kn_window_fn fn = {.kind = KN_WIN_STRING_AGG, .sep_len = (int32_t)strlen(sep)};
    memcpy(fn.sep, sep, strlen(sep));
    size_t tb = kn_window_tree_bytes(fn.kind, n);
    void *tree = NULL;
    assert_int_equal(dv_alloc(dev, tb, &tree, NULL), PA_OK);
    assert_int_equal(kn_window_tree(&ctx, &fn, &d->sarg, d->bounds, n, tree, tb, NULL), PA_OK);
    int64_t *bytes;
    assert_int_equal(dv_host_alloc(dev, sizeof *bytes, (void **)&bytes, NULL), PA_OK);
    int64_t cuts[4] = {0, n / 3, n - n / 4, n};
    char *want = malloc((size_t)r->sarg.offsets[n] * 2 + (size_t)n * 8 + 8);
    for (int k = 0; k < 3; k++) {
        int64_t first = cuts[k], m = cuts[k + 1] - first;
        assert_int_equal(kn_window_text_bytes(&ctx, &fn, d->bounds, tree, n, first, m, bytes, NULL), PA_OK);
        assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
        int64_t nb = *bytes;
        pa_column out = {.type = {PA_TYPE_VARCHAR, 0, 0}, .length = m, .data = up(NULL, (size_t)nb + 1),
                         .offsets = up(NULL, (size_t)(m + 1) * 4), .validity = up(NULL, (size_t)(m + 7) / 8 + 1)};
        assert_int_equal(kn_window_eval(&ctx, &fn, &d->sarg, d->bounds, NULL, tree, n, first, m, &out, NULL, NULL),
                         PA_OK);
        char *hd = malloc((size_t)nb + 1);
        int32_t *ho = malloc((size_t)(m + 1) * 4);
        uint8_t *hv = malloc((size_t)(m + 7) / 8 + 1);
        down(hd, out.data, (size_t)nb);
        down(ho, out.offsets, (size_t)(m + 1) * 4);
        down(hv, out.validity, (size_t)(m + 7) / 8);
        assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
        assert_int_equal(ho[0], 0);
        assert_int_equal(ho[m], nb);
        for (int64_t i = 0; i < m; i++) {
            int64_t g = first + i, len = 0;
            bool any = false;
            if (hb[g] == g)
                for (int64_t j = g; j < hb[n + g]; j++) {
                    if (!valid(&r->sarg, j))
                        continue;
                    if (any) {
                        memcpy(want + len, sep, strlen(sep));
                        len += (int64_t)strlen(sep);
                    }
                    int32_t l = r->sarg.offsets[j + 1] - r->sarg.offsets[j];
                    memcpy(want + len, (char *)r->sarg.data + r->sarg.offsets[j], (size_t)l);
                    len += l;
                    any = true;
                }
            bool got = (hv[i >> 3] >> (i & 7)) & 1;
            if (got != any || (any && (ho[i + 1] - ho[i] != len || memcmp(hd + ho[i], want, (size_t)len))) ||
                (!any && ho[i + 1] != ho[i]))
                fail_msg("string_agg row %lld (rows %lld, sep '%s'): valid %d want %d, '%.*s' want '%.*s'",
                         (long long)g, (long long)n, sep, got, any, (int)(ho[i + 1] - ho[i]), hd + ho[i], (int)len,
                         want);
        }
        free(hd), free(ho), free(hv);
        col_dev_free(&out);
    }
    free(want);
    dv_host_free(dev, bytes);
    dv_free(dev, tree);
}

static void check_rows(int64_t n, bool dbl)
{
    rows r;
    make_rows(&r, n, dbl);
    bool skey = next() & 1;   /* the VARCHAR key as a second order key */
    kn_ctx ctx = {dev, stream};
    dev_rows d;
    d.part = col_up(&r.part);
    d.okey = col_up(&r.okey);
    d.skey = col_up(&r.skey);
    d.arg = col_up(&r.arg);
    d.darg = col_up(&r.darg);
    d.sarg = col_up(&r.sarg);
    assert_int_equal(dv_alloc(dev, (size_t)n * KN_WB__COUNT * 4 + 4, (void **)&d.bounds, NULL), PA_OK);
    assert_int_equal(dv_alloc(dev, (size_t)n * 2 * 4 + 4, (void **)&d.frames, NULL), PA_OK);
    size_t sb = kn_window_bounds_scratch(n);
    void *scratch;
    assert_int_equal(dv_alloc(dev, sb, &scratch, NULL), PA_OK);
    assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
    pa_column keys[3] = {d.part, d.okey, d.skey};
    assert_int_equal(kn_window_bounds(&ctx, keys, 1, skey ? 3 : 2, n, d.bounds, scratch, sb, NULL), PA_OK);
    int32_t *hb = malloc((size_t)n * KN_WB__COUNT * 4 + 4);
    assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
    down(hb, d.bounds, (size_t)n * KN_WB__COUNT * 4);
    assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
    for (int64_t i = 0; i < n; i++) {
        bnd b = ref_bounds(&r, i, skey);
        assert_int_equal(hb[i], b.ps);
        assert_int_equal(hb[n + i], b.pe);
        assert_int_equal(hb[2 * n + i], b.qs);
        assert_int_equal(hb[3 * n + i], b.qe);
        if (i > 0)
            assert_int_equal(hb[4 * n + i] - hb[4 * n + i - 1], b.qs == i ? 1 : 0);
    }
    assert_int_equal(hb[0 * n], 0);
    check_string_agg(&r, &d, hb);

    for (int round = 0; round < 6; round++) {
        kn_window_frame f = {0};
        f.rows = next() % 2 || skey;   /* RANGE offsets need one order key */
        static const int starts[] = {KN_FB_UNBOUNDED_PRECEDING, KN_FB_PRECEDING, KN_FB_CURRENT_ROW, KN_FB_FOLLOWING};
        static const int ends[] = {KN_FB_PRECEDING, KN_FB_CURRENT_ROW, KN_FB_FOLLOWING, KN_FB_UNBOUNDED_FOLLOWING};
        f.start = starts[next() % 4];
        f.end = ends[next() % 4];
        f.descending = r.desc;
        f.start_n = (int64_t)(next() % 6);
        f.end_n = (int64_t)(next() % 6);
        f.start_d = (double)(next() % 40) / 8.0;
        f.end_d = (double)(next() % 40) / 8.0;
        assert_int_equal(kn_window_frames(&ctx, &f, d.bounds, n, f.rows ? NULL : &d.okey, d.frames, NULL), PA_OK);
        int32_t *hf = malloc((size_t)n * 8 + 8);
        assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
        down(hf, d.frames, (size_t)n * 8);
        assert_int_equal(dv_stream_sync(stream, NULL), PA_OK);
        int64_t *rfs = malloc((size_t)n * 8 + 8), *rfe = malloc((size_t)n * 8 + 8);
        for (int64_t i = 0; i < n; i++) {
            ref_frame(&r, &f, i, skey, &rfs[i], &rfe[i]);
            if (rfs[i] < rfe[i] || hf[i] < hf[n + i]) {   /* empty frames may sit anywhere */
                if (hf[i] != rfs[i] || hf[n + i] != rfe[i])
                    fail_msg("frame of row %lld (rows %d, start %d/%lld/%g, end %d/%lld/%g, desc %d): [%d, %d), want "
                             "[%lld, %lld)",
                             (long long)i, f.rows, f.start, (long long)f.start_n, f.start_d, f.end,
                             (long long)f.end_n, f.end_d, f.descending, hf[i], hf[n + i], (long long)rfs[i],
                             (long long)rfe[i]);
            }
        }
        free(hf);
        /* every function over these frames and bounds */
        for (int kind = KN_WIN_ROW_NUMBER; kind <= KN_WIN_MAX; kind++) {
            kn_window_fn fn = {.kind = kind, .n = 1};
            if (kind == KN_WIN_NTILE)
                fn.n = 1 + (int64_t)(next() % 7);
            if (kind == KN_WIN_SHIFT)
                fn.n = (int64_t)(next() % 7) - 3;
            if (kind == KN_WIN_NTH_VALUE)
                fn.n = 1 + (int64_t)(next() % 3);
            const pa_column *darg = kind == KN_WIN_AVG && (next() & 1) ? &d.darg
                                    : kind == KN_WIN_MIN || kind == KN_WIN_MAX || kind == KN_WIN_SHIFT ||
                                            kind == KN_WIN_FIRST_VALUE || kind == KN_WIN_LAST_VALUE ||
                                            kind == KN_WIN_NTH_VALUE
                                        ? &d.sarg
                                        : &d.arg;
            const pa_column *harg = darg == &d.darg ? &r.darg : darg == &d.sarg ? &r.sarg : &r.arg;
            pa_type t;
            assert_int_equal(kn_window_type(kind, darg->type, &t, NULL), PA_OK);
            void *vals;
            uint8_t *vv;
            int32_t *pos;
            run_fn(&r, &d, &fn, darg, t, &vals, &vv, &pos);
            for (int64_t i = 0; i < n; i++) {
                bnd b = ref_bounds(&r, i, skey);
                int64_t fs = rfs[i], fe = rfe[i], size = b.pe - b.ps;
                switch (kind) {
                case KN_WIN_ROW_NUMBER: assert_int_equal(((int64_t *)vals)[i], i - b.ps + 1); break;
                case KN_WIN_RANK: assert_int_equal(((int64_t *)vals)[i], b.qs - b.ps + 1); break;
                case KN_WIN_DENSE_RANK: {
                    int64_t g = 1;
                    for (int64_t j = b.ps + 1; j <= i; j++)
                        g += !key_eq(&r, j, j - 1, true, skey);
                    assert_int_equal(((int64_t *)vals)[i], g);
                    break;
                }
                case KN_WIN_NTILE: {
                    /* PostgreSQL: the first size % n buckets have one row more */
                    int64_t q = size / fn.n, rem = size % fn.n, row = i - b.ps, bucket = 0, at = 0;
                    for (int64_t k = 0; k < fn.n; k++) {
                        int64_t len = q + (k < rem);
                        if (row < at + len) {
                            bucket = k + 1;
                            break;
                        }
                        at += len;
                    }
                    assert_int_equal(((int64_t *)vals)[i], bucket);
                    break;
                }
                case KN_WIN_PERCENT_RANK: {
                    double want = size > 1 ? (double)(b.qs - b.ps) / (double)(size - 1) : 0;
                    assert_true(((double *)vals)[i] == want);
                    break;
                }
                case KN_WIN_CUME_DIST:
                    assert_true(((double *)vals)[i] == (double)(b.qe - b.ps) / (double)size);
                    break;
                case KN_WIN_COUNT_STAR: assert_int_equal(((int64_t *)vals)[i], fe - fs); break;
                case KN_WIN_COUNT: {
                    int64_t c = 0;
                    for (int64_t j = fs; j < fe; j++)
                        c += valid(harg, j);
                    assert_int_equal(((int64_t *)vals)[i], c);
                    break;
                }
                case KN_WIN_SUM:
                case KN_WIN_AVG: {
                    int64_t c = 0;
                    long double s = 0;
                    for (int64_t j = fs; j < fe; j++)
                        if (valid(harg, j)) {
                            c++;
                            s += harg->type.id == PA_TYPE_DOUBLE ? ((double *)harg->data)[j] : ((int64_t *)harg->data)[j];
                        }
                    assert_int_equal((vv[i >> 3] >> (i & 7)) & 1, c > 0);
                    if (!c)
                        break;
                    if (kind == KN_WIN_SUM)
                        assert_int_equal(((int64_t *)vals)[i], (int64_t)s);
                    else if (fabs(((double *)vals)[i] - (double)(s / c)) > 1e-9 * (1 + fabsl(s / c)))
                        fail_msg("avg of row %lld: %.17g, want %.17g", (long long)i, ((double *)vals)[i], (double)(s / c));
                    break;
                }
                default: {   /* positions: SHIFT, FIRST/LAST/NTH, MIN/MAX */
                    int64_t want = -1;
                    if (kind == KN_WIN_SHIFT)
                        want = i - fn.n >= b.ps && i - fn.n < b.pe ? i - fn.n : -1;
                    else if (kind == KN_WIN_FIRST_VALUE)
                        want = fs < fe ? fs : -1;
                    else if (kind == KN_WIN_LAST_VALUE)
                        want = fs < fe ? fe - 1 : -1;
                    else if (kind == KN_WIN_NTH_VALUE)
                        want = fs + fn.n - 1 < fe ? fs + fn.n - 1 : -1;
                    else {
                        for (int64_t j = fs; j < fe; j++)
                            if (valid(harg, j) &&
                                (want < 0 || (kind == KN_WIN_MIN ? scmp(harg, j, want) < 0 : scmp(harg, j, want) > 0)))
                                want = j;
                        /* equal values: any of them will do */
                        if (want >= 0 && pos[i] >= 0 && scmp(harg, pos[i], want) == 0)
                            want = pos[i];
                    }
                    if (pos[i] != want)
                        fail_msg("%d of row %lld: position %d, want %lld", kind, (long long)i, pos[i], (long long)want);
                }
                }
            }
            free(vals);
            free(vv);
        }
        free(rfs);
        free(rfe);
    }
    free(hb);
    dv_free(dev, scratch);
    dv_free(dev, d.bounds);
    dv_free(dev, d.frames);
    col_dev_free(&d.part);
    col_dev_free(&d.okey);
    col_dev_free(&d.skey);
    col_dev_free(&d.arg);
    col_dev_free(&d.darg);
    col_dev_free(&d.sarg);
    free_rows(&r);
}

static void test_small(void **state)
{
    (void)state;
    for (int k = 0; k < 12; k++)
        check_rows(1 + (int64_t)(next() % 40), k & 1);
}

static void test_medium(void **state)
{
    (void)state;
    for (int k = 0; k < 3; k++)
        check_rows(300 + (int64_t)(next() % 1200), k & 1);
}

/* The host's checks: bad arguments refused before anything runs. */
static void test_refusals(void **state)
{
    (void)state;
    pa_err e;
    pa_err_init(&e);
    kn_window_fn fn = {.kind = KN_WIN_NTILE, .n = 0};
    int64_t out[4];
    pa_column o = {.type = {PA_TYPE_BIGINT, 0, 0}, .length = 1, .data = out};
    int32_t b[8] = {0};
    assert_int_equal(KC_STATUS(dev, stream, &e, kn_window_eval(&ec, &fn, NULL, b, NULL, NULL, 1, 0, 1, &o, NULL, &e)),
                     PA_EINVAL);
    assert_non_null(strstr(e.msg, "ntile"));
    kn_window_frame f = {0, KN_FB_PRECEDING, KN_FB_CURRENT_ROW, 0, 1, 0, 0, 0};
    pa_column vk = {.type = {PA_TYPE_VARCHAR, 0, 0}, .length = 1};
    assert_int_equal(KC_STATUS(dev, stream, &e, kn_window_frames(&ec, &f, b, 1, &vk, b, &e)), PA_EUNSUPPORTED);
    pa_type t;
    assert_int_equal(kn_window_type(KN_WIN_SUM, (pa_type){PA_TYPE_VARCHAR, 0, 0}, &t, &e), PA_EINVAL);
    pa_err_close(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small),
        cmocka_unit_test(test_medium),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
