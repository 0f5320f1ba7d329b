/*
 * test_kconf_sort.c - conformance of the sort kernels (kernels.h, "Sort and
 * top-N") on the device named by PISTA_TEST_DEVICE (default "cpu").
 *
 * Random chunks of every type (NULLs, heavy duplicates, -0/NaN/Inf doubles,
 * wide decimals, strings sharing prefixes longer than KN_SORT_STR_PREFIX,
 * empty chunks) are encoded, sorted, merged, filtered and gathered by the
 * kernels; results are checked against a reference comparator written here
 * on the original values, and against qsort with that comparator.
 * Buffers live in device memory and are copied back before checking.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

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
static dv_stream *g_st;
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
    dv_options o = {.spec = s && *s ? s : "cpu"};
    pa_err_init(&err);
    OK(dv_open(&o, &g_dev, &err));
    OK(dv_stream_create(g_dev, &g_st, &err));
    return 0;
}
static int teardown(void **state)
{
    dv_stream_destroy(g_st);
    dv_close(g_dev);
    pa_err_close(&err);
    return 0;
}

/* Device copies of host data, and back. */
static void *to_dev(const void *h, size_t n)
{
    void *d = NULL;
    OK(dv_alloc(g_dev, n ? n : 1, &d, &err));
    if (n) {
        OK(dv_copy_async(g_st, d, h, n, DV_COPY_H2D, &err));
        OK(dv_stream_sync(g_st, &err));
    }
    return d;
}
static void from_dev(void *h, const void *d, size_t n)
{
    if (!n)
        return;
    OK(dv_copy_async(g_st, h, d, n, DV_COPY_D2H, &err));
    OK(dv_stream_sync(g_st, &err));
}

/* ------------------------------------------------------------ data */

enum { NT = 8 };   /* BOOLEAN INTEGER BIGINT DOUBLE DECIMAL(15,2) DECIMAL(38,4) DATE VARCHAR */
static pa_type type_of(int t)
{
    static const pa_type ts[NT] = {
        {PA_TYPE_BOOLEAN, 0, 0}, {PA_TYPE_INTEGER, 0, 0}, {PA_TYPE_BIGINT, 0, 0}, {PA_TYPE_DOUBLE, 0, 0},
        {PA_TYPE_DECIMAL, 15, 2}, {PA_TYPE_DECIMAL, 38, 4}, {PA_TYPE_DATE, 0, 0}, {PA_TYPE_VARCHAR, 0, 0},
    };
    return ts[t];
}

/* A host chunk: NT columns, one of each type; hcols host views, dcols device. */
typedef struct hchunk {
    int64_t n;
    pa_column hcols[NT];
    pa_column dcols[NT];
} hchunk;

static const char *const words[] = {"", "a", "ab", "abc", "b", "zz", "a\0b", "prefix-shared-longer-than-16-X",
                                    "prefix-shared-longer-than-16-Y", "prefix-shared-longer-than-16",
                                    "prefix-shared-longer-than-16-XX", "0123456789abcdef",
                                    "0123456789abcdef0", "0123456789abcdee\xff"};
static const int word_len[] = {0, 1, 2, 3, 1, 2, 3, 30, 30, 28, 31, 16, 17, 17};
#define N_WORDS ((int)(sizeof word_len / sizeof word_len[0]))

static void make_chunk(rng *r, hchunk *c, int64_t n, int dup_range, int null_pct)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    for (int t = 0; t < NT; t++) {
        pa_column *h = &c->hcols[t];
        h->type = type_of(t);
        h->length = n;
        int w = pa_type_bytes(h->type);
        if (null_pct > 0 && below(r, 3) != 0) {
            h->validity = calloc((size_t)(n + 7) / 8 + 1, 1);
            for (int64_t i = 0; i < n; i++)
                if ((int)below(r, 100) >= null_pct)
                    h->validity[i >> 3] |= (uint8_t)(1u << (i & 7));
        }
        if (t == 7) {
            h->offsets = calloc((size_t)n + 1, 4);
            h->data = malloc((size_t)n * 32 + 1);
            int32_t at = 0;
            for (int64_t i = 0; i < n; i++) {
                int k = (int)below(r, dup_range < N_WORDS ? (uint64_t)dup_range : N_WORDS);
                memcpy((char *)h->data + at, words[k], (size_t)word_len[k]);
                at += word_len[k];
                h->offsets[i + 1] = at;
            }
            continue;
        }
        h->data = calloc((size_t)n + 1, (size_t)w);
        for (int64_t i = 0; i < n; i++) {
            int64_t v = (int64_t)below(r, (uint64_t)dup_range) - dup_range / 2;
            switch (t) {
            case 0: ((uint8_t *)h->data)[i] = (uint8_t)(v & 1); break;
            case 1: ((int32_t *)h->data)[i] = below(r, 8) == 0 ? (below(r, 2) ? INT32_MIN : INT32_MAX) : (int32_t)v; break;
            case 2: ((int64_t *)h->data)[i] = below(r, 8) == 0 ? (below(r, 2) ? INT64_MIN : INT64_MAX) : v * 1000003; break;
            case 3: {
                static const double sp[] = {0.0, -0.0, 1.0 / 0.0, -1.0 / 0.0, 0.5, -0.5, 1e300};
                double d = below(r, 4) == 0 ? sp[below(r, 7)] : (double)v / 7.0;
                if (below(r, 16) == 0)
                    d = nan("");
                if (below(r, 32) == 0)
                    d = -nan("");
                ((double *)h->data)[i] = d;
                break;
            }
            case 4: ((int64_t *)h->data)[i] = v * 37; break;
            case 5: {
                __int128 x = (__int128)v * ((__int128)1 << 70) + (__int128)below(r, 5);
                memcpy((char *)h->data + i * 16, &x, 16);
                break;
            }
            case 6: ((int32_t *)h->data)[i] = (int32_t)v + 10000; break;
            }
        }
    }
    for (int t = 0; t < NT; t++) {
        pa_column *h = &c->hcols[t], *d = &c->dcols[t];
        *d = *h;
        size_t bytes = t == 7 ? (size_t)h->offsets[n] : (size_t)n * (size_t)pa_type_bytes(h->type);
        d->data = to_dev(h->data, bytes);
        if (h->offsets)
            d->offsets = to_dev(h->offsets, ((size_t)n + 1) * 4);
        if (h->validity)
            d->validity = to_dev(h->validity, (size_t)(n + 7) / 8 + 1);
    }
}

static void free_chunk(hchunk *c)
{
    for (int t = 0; t < NT; t++) {
        free(c->hcols[t].data);
        free(c->hcols[t].offsets);
        free(c->hcols[t].validity);
        dv_free(g_dev, c->dcols[t].data);
        dv_free(g_dev, c->dcols[t].offsets);
        dv_free(g_dev, c->dcols[t].validity);
    }
}

/* ------------------------------------------------- reference order */

typedef struct ref { uint32_t tag, row; } ref;
static hchunk *g_chunks;
static const kn_sort_layout *g_l;

static int cmp_values(const pa_column *a, int64_t i, const pa_column *b, int64_t j)
{
    switch (a->type.id) {
    case PA_TYPE_BOOLEAN: {
        int x = ((uint8_t *)a->data)[i], y = ((uint8_t *)b->data)[j];
        return (x > y) - (x < y);
    }
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: {
        int32_t x = ((int32_t *)a->data)[i], y = ((int32_t *)b->data)[j];
        return (x > y) - (x < y);
    }
    case PA_TYPE_BIGINT:
    case PA_TYPE_TIMESTAMP:
    case PA_TYPE_TIMESTAMPTZ:
    case PA_TYPE_TIME:
    case PA_TYPE_TIMESTAMP_NS:
        return (((int64_t *)a->data)[i] > ((int64_t *)b->data)[j]) -
               (((int64_t *)a->data)[i] < ((int64_t *)b->data)[j]);
    case PA_TYPE_DECIMAL:
        if (a->type.precision > 18) {
            __int128 x, y;
            memcpy(&x, (char *)a->data + i * 16, 16);
            memcpy(&y, (char *)b->data + j * 16, 16);
            return (x > y) - (x < y);
        }
        return (((int64_t *)a->data)[i] > ((int64_t *)b->data)[j]) -
               (((int64_t *)a->data)[i] < ((int64_t *)b->data)[j]);
    case PA_TYPE_DOUBLE: {
        double x = ((double *)a->data)[i], y = ((double *)b->data)[j];
        if (isnan(x) || isnan(y))
            return isnan(x) - isnan(y);
        return (x > y) - (x < y);
    }
    case PA_TYPE_VARCHAR: {
        int32_t la = a->offsets[i + 1] - a->offsets[i], lb = b->offsets[j + 1] - b->offsets[j];
        int c = memcmp((char *)a->data + a->offsets[i], (char *)b->data + b->offsets[j],
                       (size_t)(la < lb ? la : lb));
        return c ? (c > 0) - (c < 0) : (la > lb) - (la < lb);
    }
    default: return 0;
    }
}

static int ref_cmp(const void *pa, const void *pb)
{
    const ref *x = pa, *y = pb;
    for (int k = 0; k < g_l->n_keys; k++) {
        const kn_sort_key *key = &g_l->keys[k];
        const pa_column *a = &g_chunks[x->tag].hcols[key->column], *b = &g_chunks[y->tag].hcols[key->column];
        bool va = pa_column_valid(a, x->row), vb = pa_column_valid(b, y->row);
        if (!va || !vb) {
            if (va == vb)
                continue;
            return (!va) == key->nulls_first ? -1 : 1;
        }
        int c = cmp_values(a, x->row, b, y->row);
        if (c)
            return key->descending ? -c : c;
    }
    return 0;
}

static void random_layout(rng *r, kn_sort_layout *l, int max_keys)
{
    kn_sort_key keys[KN_SORT_MAX_KEYS];
    int nk = 1 + (int)below(r, (uint64_t)max_keys);
    for (int k = 0; k < nk; k++) {
        int t = (int)below(r, NT);
        keys[k] = (kn_sort_key){t, type_of(t), below(r, 2) == 1, below(r, 2) == 1};
    }
    OK(kn_sort_layout_init(l, keys, nk, &err));
}

/* Encode every chunk into one device array (tags = chunk index) via copy. */
static uint8_t *encode_all(const kn_sort_layout *l, hchunk *cs, int nc, int64_t *total)
{
    kn_ctx ctx = {g_dev, g_st};
    int64_t n = 0;
    for (int c = 0; c < nc; c++)
        n += cs[c].n;
    uint8_t *all = NULL;
    OK(dv_alloc(g_dev, (size_t)(n ? n : 1) * l->stride, (void **)&all, &err));
    int64_t at = 0;
    for (int c = 0; c < nc; c++) {
        uint8_t *tmp = NULL;
        OK(dv_alloc(g_dev, (size_t)(cs[c].n ? cs[c].n : 1) * l->stride, (void **)&tmp, &err));
        OK(kn_sort_encode(&ctx, l, cs[c].dcols, cs[c].n, 0, tmp, &err));
        OK(kn_sort_copy(&ctx, l, tmp, cs[c].n, (uint32_t)c, all + (size_t)at * l->stride, &err));
        OK(dv_free_async(g_st, tmp, &err));   /* the kernels above still use it */
        at += cs[c].n;
    }
    *total = n;
    return all;
}

static ref *refs_of(const kn_sort_layout *l, const uint8_t *drecs, int64_t n)
{
    uint8_t *h = malloc((size_t)(n ? n : 1) * l->stride);
    from_dev(h, drecs, (size_t)n * l->stride);
    ref *out = malloc(sizeof(ref) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++)
        memcpy(&out[i], h + (size_t)i * l->stride + l->stride - 8, 8);
    free(h);
    return out;
}

/* Sorted and a permutation of every (tag,row); equal position by position
 * (under the reference order) to qsort's answer. */
static void check_sorted(ref *got, int64_t n, hchunk *cs, int nc)
{
    int64_t total = 0;
    for (int c = 0; c < nc; c++)
        total += cs[c].n;
    assert_int_equal(n, total);
    ref *want = malloc(sizeof(ref) * (size_t)(n ? n : 1));
    char **seen = calloc((size_t)nc, sizeof *seen);
    int64_t at = 0;
    for (int c = 0; c < nc; c++) {
        seen[c] = calloc((size_t)cs[c].n + 1, 1);
        for (int64_t i = 0; i < cs[c].n; i++)
            want[at++] = (ref){(uint32_t)c, (uint32_t)i};
    }
    qsort(want, (size_t)n, sizeof(ref), ref_cmp);
    for (int64_t i = 0; i < n; i++) {
        assert_true(got[i].tag < (uint32_t)nc && got[i].row < (uint32_t)cs[got[i].tag].n);
        assert_false(seen[got[i].tag][got[i].row]);
        seen[got[i].tag][got[i].row] = 1;
        if (ref_cmp(&got[i], &want[i]) != 0)
            fail_msg("row %lld: kernel order differs from qsort", (long long)i);
        if (i > 0)
            assert_true(ref_cmp(&got[i - 1], &got[i]) <= 0);
    }
    for (int c = 0; c < nc; c++)
        free(seen[c]);
    free(seen);
    free(want);
}

static kn_sort_source *sources_of(hchunk *cs, unsigned nc)
{
    kn_sort_source *s = malloc(sizeof *s * (nc ? nc : 1u));
    for (unsigned c = 0; c < nc; c++)
        s[c] = cs[c].dcols;
    return s;
}

/* -------------------------------------------------------------- tests */

static void run_sort_case(rng *r, int nc, int64_t max_rows, int dup, int nulls, int max_keys)
{
    kn_ctx ctx = {g_dev, g_st};
    hchunk *cs = calloc((size_t)nc, sizeof *cs);
    for (int c = 0; c < nc; c++)
        make_chunk(r, &cs[c], below(r, 5) == 0 ? 0 : (int64_t)below(r, (uint64_t)max_rows + 1), dup, nulls);
    kn_sort_layout l;
    random_layout(r, &l, max_keys);
    g_chunks = cs;
    g_l = &l;
    kn_sort_source *src = sources_of(cs, (unsigned)nc);
    int64_t n;
    uint8_t *recs = encode_all(&l, cs, nc, &n);
    void *scratch = NULL;
    size_t ss = kn_sort_scratch_size(&l, n);
    OK(dv_alloc(g_dev, ss ? ss : 1, &scratch, &err));
    OK(kn_sort_records(&ctx, &l, recs, n, scratch, ss, src, nc, &err));
    ref *got = refs_of(&l, recs, n);
    check_sorted(got, n, cs, nc);
    free(got);

    /* Merge: the two halves of a re-sorted array, each sorted on its own. */
    int64_t h = n / 3;
    uint8_t *again = encode_all(&l, cs, nc, &n), *out = NULL;
    OK(kn_sort_records(&ctx, &l, again, h, scratch, ss, src, nc, &err));
    OK(kn_sort_records(&ctx, &l, again + (size_t)h * l.stride, n - h, scratch, ss, src, nc, &err));
    OK(dv_alloc(g_dev, (size_t)(n ? n : 1) * l.stride, (void **)&out, &err));
    OK(kn_sort_merge(&ctx, &l, again, h, again + (size_t)h * l.stride, n - h, out, src, nc, &err));
    got = refs_of(&l, out, n);
    check_sorted(got, n, cs, nc);
    free(got);

    /* Streaming k-way merge of three runs in random steps. */
    uint8_t *third = encode_all(&l, cs, nc, &n);
    int64_t cut[4] = {0, n / 4, n / 4 + n / 2, n};
    const uint8_t *runs[3];
    int64_t counts[3], *pos = NULL;
    OK(dv_alloc(g_dev, 3 * sizeof *pos, (void **)&pos, &err));
    int64_t zero[3] = {0, 0, 0};
    OK(dv_copy_async(g_st, pos, zero, sizeof zero, DV_COPY_H2D, &err));
    OK(dv_stream_sync(g_st, &err));
    for (int i = 0; i < 3; i++) {
        runs[i] = third + (size_t)cut[i] * l.stride;
        counts[i] = cut[i + 1] - cut[i];
        OK(kn_sort_records(&ctx, &l, third + (size_t)cut[i] * l.stride, counts[i], scratch, ss, src, nc, &err));
    }
    for (int64_t done = 0; done < n;) {
        int64_t m = 1 + (int64_t)below(r, 300);
        OK(kn_sort_merge_next(&ctx, &l, runs, counts, pos, 3, m, out + (size_t)done * l.stride, src, nc, &err));
        done += m < n - done ? m : n - done;
    }
    got = refs_of(&l, out, n);
    check_sorted(got, n, cs, nc);
    free(got);
    dv_free(g_dev, pos);
    dv_free(g_dev, third);

    dv_free(g_dev, out);
    dv_free(g_dev, again);
    dv_free(g_dev, scratch);
    dv_free(g_dev, recs);
    free(src);
    for (int c = 0; c < nc; c++)
        free_chunk(&cs[c]);
    free(cs);
}

static void test_sort_random(void **state)
{
    rng r = {0x9e3779b97f4a7c15ull};
    for (int it = 0; it < 300; it++) {
        int dup = it % 3 == 0 ? 4 : it % 3 == 1 ? 40 : 100000;
        run_sort_case(&r, 1 + (int)below(&r, 4), it % 10 == 0 ? 3000 : 200, dup, (int)below(&r, 3) * 20, 4);
    }
}

static void test_sort_many_keys_and_big(void **state)
{
    rng r = {12345};
    for (int it = 0; it < 10; it++)
        run_sort_case(&r, 3, 20000, it % 2 ? 6 : 1000, 10, KN_SORT_MAX_KEYS);
}

/* Every type alone, both directions, both NULL placements. */
static void test_sort_each_type(void **state)
{
    rng r = {777};
    kn_ctx ctx = {g_dev, g_st};
    hchunk cs[2];
    make_chunk(&r, &cs[0], 500, 60, 15);
    make_chunk(&r, &cs[1], 333, 60, 15);
    kn_sort_source src[2] = {cs[0].dcols, cs[1].dcols};
    g_chunks = cs;
    for (int t = 0; t < NT; t++) {
        for (int f = 0; f < 4; f++) {
            kn_sort_key key = {t, type_of(t), f & 1, (f >> 1) & 1};
            kn_sort_layout l;
            OK(kn_sort_layout_init(&l, &key, 1, &err));
            g_l = &l;
            int64_t n;
            uint8_t *recs = encode_all(&l, cs, 2, &n), *scratch = NULL;
            OK(dv_alloc(g_dev, kn_sort_scratch_size(&l, n), (void **)&scratch, &err));
            OK(kn_sort_records(&ctx, &l, recs, n, scratch, kn_sort_scratch_size(&l, n), src, 2, &err));
            ref *got = refs_of(&l, recs, n);
            check_sorted(got, n, cs, 2);
            /* NULL placement explicitly. */
            const pa_column *c0 = &cs[got[0].tag].hcols[t], *cl = &cs[got[n - 1].tag].hcols[t];
            if (cs[0].hcols[t].validity || cs[1].hcols[t].validity) {
                if (key.nulls_first)
                    assert_false(pa_column_valid(c0, got[0].row));
                else
                    assert_false(pa_column_valid(cl, got[n - 1].row));
            }
            free(got);
            dv_free(g_dev, scratch);
            dv_free(g_dev, recs);
        }
    }
    g_chunks = NULL;   /* cs ends with this function */
    free_chunk(&cs[0]);
    free_chunk(&cs[1]);
}

/* The time types stored as int64 sort as BIGINT: the BIGINT column (with
 * INT64_MIN and INT64_MAX among its values) relabelled as each of them. */
static void test_sort_time_types(void **state)
{
    rng r = {4242};
    kn_ctx ctx = {g_dev, g_st};
    hchunk cs[2];
    make_chunk(&r, &cs[0], 700, 200, 15);
    make_chunk(&r, &cs[1], 300, 200, 15);
    kn_sort_source src[2] = {cs[0].dcols, cs[1].dcols};
    g_chunks = cs;
    const pa_type_id ids[] = {PA_TYPE_TIMESTAMP, PA_TYPE_TIMESTAMPTZ, PA_TYPE_TIME, PA_TYPE_TIMESTAMP_NS};
    for (int t = 0; t < 4; t++) {
        for (int c = 0; c < 2; c++)
            cs[c].hcols[2].type.id = cs[c].dcols[2].type.id = ids[t];
        for (int f = 0; f < 4; f++) {
            kn_sort_key keys[2] = {{2, cs[0].hcols[2].type, f & 1, (f >> 1) & 1}, {1, type_of(1), false, false}};
            kn_sort_layout l;
            OK(kn_sort_layout_init(&l, keys, 2, &err));
            assert_int_equal(l.key_bytes, 9 + 5);
            g_l = &l;
            int64_t n;
            uint8_t *recs = encode_all(&l, cs, 2, &n), *scratch = NULL;
            OK(dv_alloc(g_dev, kn_sort_scratch_size(&l, n), (void **)&scratch, &err));
            OK(kn_sort_records(&ctx, &l, recs, n, scratch, kn_sort_scratch_size(&l, n), src, 2, &err));
            ref *got = refs_of(&l, recs, n);
            check_sorted(got, n, cs, 2);
            free(got);
            dv_free(g_dev, scratch);
            dv_free(g_dev, recs);
        }
    }
    g_chunks = NULL;
    free_chunk(&cs[0]);
    free_chunk(&cs[1]);
}

/* INTERVAL keys order by the normalised length (a month as 30 days):
 * hand-placed values, DESC NULLS FIRST, ties kept in input order by the
 * reference. */
static void test_sort_intervals(void **state)
{
    kn_ctx ctx = {g_dev, g_st};
    const int64_t D = INT64_C(86400000000);
    /* The order: -1 mons < -1 days < 0 < 1 us < 1 day = 24:00:00 < 29 days 23:59:59.999999 < 1 mon = 30 days
     * < 1 year < {INT32_MAX, INT32_MAX, INT64_MAX}. */
    pa_interval v[] = {{0, 30, 0}, {12, 0, 0}, {0, 1, 0}, {-1, 0, 0}, {0, 0, 1}, {0, 29, D - 1}, {1, 0, 0},
                       {0, 0, 0}, {0, -1, 0}, {0, 0, D}, {INT32_MAX, INT32_MAX, INT64_MAX}, {0, 0, 0}};
    const int n = (int)(sizeof v / sizeof *v), null_row = 11;
    const int want[] = {null_row, 10, 1, 0, 6, 5, 2, 9, 4, 7, 8, 3};   /* DESC, ties in input order */
    uint8_t valid[2] = {0xff, (uint8_t)~(1u << (null_row - 8))};
    pa_column h = {.type = {PA_TYPE_INTERVAL, 0, 0}, .length = n, .data = v, .validity = valid};
    pa_column d = h;
    d.data = to_dev(v, sizeof v);
    d.validity = to_dev(valid, sizeof valid);
    kn_sort_key key = {0, h.type, true, true};
    kn_sort_layout l;
    OK(kn_sort_layout_init(&l, &key, 1, &err));
    assert_int_equal(l.key_bytes, 17);
    uint8_t *recs = NULL, *scratch = NULL;
    OK(dv_alloc(g_dev, (size_t)n * l.stride, (void **)&recs, &err));
    OK(kn_sort_encode(&ctx, &l, &d, n, 0, recs, &err));
    OK(dv_alloc(g_dev, kn_sort_scratch_size(&l, n), (void **)&scratch, &err));
    kn_sort_source src[1] = {&d};
    OK(kn_sort_records(&ctx, &l, recs, n, scratch, kn_sort_scratch_size(&l, n), src, 1, &err));
    ref *got = refs_of(&l, recs, n);
    for (int i = 0; i < n; i++)
        if ((int)got[i].row != want[i])
            fail_msg("position %d: row %u, want %d", i, got[i].row, want[i]);
    free(got);
    dv_free(g_dev, scratch);
    dv_free(g_dev, recs);
    dv_free(g_dev, d.data);
    dv_free(g_dev, d.validity);
}

/* Hand-checked order of doubles: NULLS LAST ASC: -Inf -1 -0=0 0.5 Inf NaN NULL. */
static void test_double_order(void **state)
{
    kn_ctx ctx = {g_dev, g_st};
    double hv[] = {nan(""), 0.5, -1.0, 1.0 / 0.0, 0.0, -1.0 / 0.0, -0.0, 3.0};
    uint8_t valid = 0x7f;   /* row 7 is NULL */
    pa_column c = {.type = {PA_TYPE_DOUBLE, 0, 0}, .length = 8, .data = to_dev(hv, sizeof hv), .offsets = NULL, .validity = to_dev(&valid, 1)};
    kn_sort_key key = {0, c.type, false, false};
    kn_sort_layout l;
    OK(kn_sort_layout_init(&l, &key, 1, &err));
    uint8_t *recs = NULL, *scratch = NULL;
    OK(dv_alloc(g_dev, 8 * l.stride, (void **)&recs, &err));
    OK(dv_alloc(g_dev, 8 * l.stride, (void **)&scratch, &err));
    OK(kn_sort_encode(&ctx, &l, &c, 8, 0, recs, &err));
    OK(kn_sort_records(&ctx, &l, recs, 8, scratch, 8 * l.stride, NULL, 0, &err));
    ref *got = refs_of(&l, recs, 8);
    assert_int_equal(got[0].row, 5);
    assert_int_equal(got[1].row, 2);
    assert_true((got[2].row == 4 && got[3].row == 6) || (got[2].row == 6 && got[3].row == 4));
    assert_int_equal(got[4].row, 1);
    assert_int_equal(got[5].row, 3);
    assert_int_equal(got[6].row, 0);
    assert_int_equal(got[7].row, 7);
    free(got);
    dv_free(g_dev, recs);
    dv_free(g_dev, scratch);
    dv_free(g_dev, c.data);
    dv_free(g_dev, c.validity);
}

/* Filter against the k-th record keeps every row of the true top k. */
static void test_filter_threshold(void **state)
{
    rng r = {4242};
    kn_ctx ctx = {g_dev, g_st};
    for (int it = 0; it < 60; it++) {
        hchunk c;
        make_chunk(&r, &c, 1 + (int64_t)below(&r, 600), it % 2 ? 8 : 5000, 10);
        kn_sort_layout l;
        random_layout(&r, &l, 3);
        g_chunks = &c;
        g_l = &l;
        kn_sort_source src = c.dcols;
        int64_t n;
        uint8_t *sorted = encode_all(&l, &c, 1, &n), *all = encode_all(&l, &c, 1, &n), *scratch = NULL;
        OK(dv_alloc(g_dev, kn_sort_scratch_size(&l, n), (void **)&scratch, &err));
        OK(kn_sort_records(&ctx, &l, sorted, n, scratch, kn_sort_scratch_size(&l, n), &src, 1, &err));
        int64_t k = 1 + (int64_t)below(&r, (uint64_t)n);
        int64_t *count = NULL;
        OK(dv_host_alloc(g_dev, sizeof *count, (void **)&count, &err));
        OK(kn_sort_filter(&ctx, &l, all, n, sorted + (size_t)(k - 1) * l.stride, all, count, &src, 1, &err));
        OK(dv_stream_sync(g_st, &err));
        ref *best = refs_of(&l, sorted, n), *kept = refs_of(&l, all, *count);
        /* Exactly the rows that do not sort after the k-th best, in input order. */
        int64_t want = 0;
        for (int64_t i = 0; i < n; i++)
            if (ref_cmp(&(ref){0, (uint32_t)i}, &best[k - 1]) <= 0) {
                assert_true(want < *count);
                assert_int_equal(kept[want].row, i);
                want++;
            }
        assert_int_equal(*count, want);
        assert_true(want >= k);
        /* Without sources a string-prefix tie is kept: a superset. */
        uint8_t *all2 = encode_all(&l, &c, 1, &n);
        int64_t *count2 = NULL;
        OK(dv_host_alloc(g_dev, sizeof *count2, (void **)&count2, &err));
        OK(kn_sort_filter(&ctx, &l, all2, n, sorted + (size_t)(k - 1) * l.stride, all2, count2, NULL, 0, &err));
        OK(dv_stream_sync(g_st, &err));
        assert_true(*count2 >= *count);
        if (!l.has_strings)
            assert_int_equal(*count2, *count);
        dv_host_free(g_dev, count2);
        dv_free(g_dev, all2);
        free(best);
        free(kept);
        dv_host_free(g_dev, count);
        dv_free(g_dev, scratch);
        dv_free(g_dev, sorted);
        dv_free(g_dev, all);
        free_chunk(&c);
    }
}

/* Gather every column of a sorted order and compare with the sources. */
static void test_gather(void **state)
{
    rng r = {99};
    kn_ctx ctx = {g_dev, g_st};
    hchunk cs[3];
    for (int c = 0; c < 3; c++)
        make_chunk(&r, &cs[c], c == 1 ? 0 : 700, 50, 20);
    kn_sort_source src[3] = {cs[0].dcols, cs[1].dcols, cs[2].dcols};
    kn_sort_key key = {7, type_of(7), true, true};
    kn_sort_layout l;
    OK(kn_sort_layout_init(&l, &key, 1, &err));
    int64_t n;
    uint8_t *recs = encode_all(&l, cs, 3, &n), *scratch = NULL;
    OK(dv_alloc(g_dev, kn_sort_scratch_size(&l, n), (void **)&scratch, &err));
    OK(kn_sort_records(&ctx, &l, recs, n, scratch, kn_sort_scratch_size(&l, n), src, 3, &err));
    ref *order = refs_of(&l, recs, n);
    int64_t *bytes = NULL;
    OK(dv_host_alloc(g_dev, sizeof *bytes, (void **)&bytes, &err));
    for (int t = 0; t < NT; t++) {
        pa_column out = {.type = type_of(t), .length = n, .data = NULL, .offsets = NULL, .validity = NULL};
        size_t w = (size_t)pa_type_bytes(out.type);
        if (t == 7) {
            OK(kn_sort_gather_bytes(&ctx, &l, src, 3, t, recs, n, bytes, &err));
            OK(dv_stream_sync(g_st, &err));
            OK(dv_alloc(g_dev, (size_t)*bytes + 1, &out.data, &err));
            OK(dv_alloc(g_dev, (size_t)(n + 1) * 4, (void **)&out.offsets, &err));
        } else {
            OK(dv_alloc(g_dev, (size_t)n * w, &out.data, &err));
        }
        bool any_validity = cs[0].hcols[t].validity || cs[2].hcols[t].validity;
        if (any_validity)
            OK(dv_alloc(g_dev, (size_t)(n + 7) / 8, (void **)&out.validity, &err));
        OK(kn_sort_gather(&ctx, &l, src, 3, t, recs, n, &out, &err));
        /* Back to host and compare row by row. */
        pa_column h = out;
        h.data = malloc(t == 7 ? (size_t)*bytes + 1 : (size_t)n * w);
        from_dev(h.data, out.data, t == 7 ? (size_t)*bytes : (size_t)n * w);
        if (t == 7) {
            h.offsets = malloc((size_t)(n + 1) * 4);
            from_dev(h.offsets, out.offsets, (size_t)(n + 1) * 4);
        }
        if (any_validity) {
            h.validity = malloc((size_t)(n + 7) / 8);
            from_dev(h.validity, out.validity, (size_t)(n + 7) / 8);
        }
        for (int64_t i = 0; i < n; i++) {
            const pa_column *s = &cs[order[i].tag].hcols[t];
            assert_int_equal(pa_column_valid(&h, i), pa_column_valid(s, order[i].row));
            if (pa_column_valid(s, order[i].row)) {
                if (t == 3)
                    assert_memory_equal((char *)h.data + i * 8, (char *)s->data + order[i].row * 8, 8);
                else
                    assert_int_equal(cmp_values(&h, i, s, order[i].row), 0);
            }
        }
        free(h.data);
        free(h.offsets);
        free(h.validity);
        dv_free(g_dev, out.data);
        dv_free(g_dev, out.offsets);
        dv_free(g_dev, out.validity);
    }
    dv_host_free(g_dev, bytes);
    free(order);
    dv_free(g_dev, scratch);
    dv_free(g_dev, recs);
    for (int c = 0; c < 3; c++)
        free_chunk(&cs[c]);
}

static void test_bad_layouts(void **state)
{
    kn_sort_layout l;
    kn_sort_key k = {0, {PA_TYPE__COUNT, 0, 0}, false, false};
    assert_int_equal(kn_sort_layout_init(&l, &k, 1, NULL), PA_EINVAL);
    assert_int_equal(kn_sort_layout_init(&l, &k, 0, NULL), PA_EINVAL);
    k.type.id = PA_TYPE_INTEGER;
    k.column = -1;
    assert_int_equal(kn_sort_layout_init(&l, &k, 1, NULL), PA_EINVAL);
    kn_sort_key many[KN_SORT_MAX_KEYS + 1];
    for (int i = 0; i <= KN_SORT_MAX_KEYS; i++)
        many[i] = (kn_sort_key){0, {PA_TYPE_INTEGER, 0, 0}, false, false};
    assert_int_equal(kn_sort_layout_init(&l, many, KN_SORT_MAX_KEYS + 1, NULL), PA_EINVAL);
    assert_int_equal(kn_sort_layout_init(&l, many, KN_SORT_MAX_KEYS, NULL), PA_OK);
    assert_int_equal(l.key_bytes, 5 * KN_SORT_MAX_KEYS);
    assert_int_equal(l.stride % 8, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_layouts),
        cmocka_unit_test(test_double_order),
        cmocka_unit_test(test_sort_each_type),
        cmocka_unit_test(test_sort_time_types),
        cmocka_unit_test(test_sort_intervals),
        cmocka_unit_test(test_sort_random),
        cmocka_unit_test(test_sort_many_keys_and_big),
        cmocka_unit_test(test_filter_threshold),
        cmocka_unit_test(test_gather),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
