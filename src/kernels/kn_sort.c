/*
 * kn_sort.c - sorting normalized-key records: MSD radix sort over the key
 * bytes (ping-pong between the records and an equal-sized scratch, skipping
 * bytes on which every record agrees), insertion sort for small buckets, and
 * a merge sort on the full strings for buckets whose key bytes all tie when
 * the layout has VARCHAR keys. kn_sort_merge merges two sorted runs.
 */
#include "kernels/kn_ops_int.h"

#include <string.h>

/* Buckets at most this big are finished by insertion sort: below it the
 * 256-bucket histogram costs more than the quadratic sort. */
#define SMALL_BUCKET 32

typedef struct sorter {
    const kn_sort_layout *l;
    const kn_sort_source *sources;
    size_t stride;
    uint32_t kb;
    int n_str;                          /* VARCHAR keys */
    int str_key[KN_SORT_MAX_KEYS];      /* their key indexes, in key order */
    uint32_t str_end[KN_SORT_MAX_KEYS]; /* byte after each one's prefix */
} sorter;

static void sorter_init(sorter *s, const kn_sort_layout *l, const kn_sort_source *sources)
{
    s->l = l;
    s->sources = sources;
    s->stride = l->stride;
    s->kb = l->key_bytes;
    s->n_str = 0;
    for (int k = 0; k < l->n_keys; k++) {
        if (pa_type_is_varlen(l->keys[k].type.id)) {
            s->str_key[s->n_str] = k;
            s->str_end[s->n_str++] = l->offset[k] + 1 + KN_SORT_STR_PREFIX;
        }
    }
}

/* Order of VARCHAR key k (the i-th string key) of two records whose bytes
 * before the end of its prefix are equal: the whole strings (both NULL or
 * both valid, since the flag bytes tied). */
static int str_cmp(const sorter *s, int i, const uint8_t *x, const uint8_t *y)
{
    uint32_t rx[2], ry[2];
    memcpy(rx, x + s->stride - 8, 8);
    memcpy(ry, y + s->stride - 8, 8);
    const kn_sort_key *key = &s->l->keys[s->str_key[i]];
    const pa_column *a = &s->sources[rx[0]][key->column], *b = &s->sources[ry[0]][key->column];
    if (!pa_column_valid(a, rx[1]))
        return 0;
    int32_t la = a->offsets[rx[1] + 1] - a->offsets[rx[1]];
    int32_t lb = b->offsets[ry[1] + 1] - b->offsets[ry[1]];
    if (la == lb && la <= KN_SORT_STR_PREFIX)
        return 0;   /* the prefix held both strings whole */
    int32_t m = la < lb ? la : lb;
    int c = m > 0 ? memcmp((const uint8_t *)a->data + a->offsets[rx[1]],
                           (const uint8_t *)b->data + b->offsets[ry[1]], (size_t)m)
                  : 0;
    if (c == 0)
        c = (la > lb) - (la < lb);
    else
        c = c > 0 ? 1 : -1;
    return key->descending ? -c : c;
}

/* Full order of two records equal on bytes [0, from) and on the strings of
 * every VARCHAR key whose prefix ends at or before `from`. Without sources,
 * a tie on a string prefix counts as equal. */
static int rec_cmp(const sorter *s, const uint8_t *x, const uint8_t *y, uint32_t from)
{
    uint32_t pos = from;
    if (s->sources) {
        for (int i = 0; i < s->n_str; i++) {
            uint32_t e = s->str_end[i];
            if (e <= from)
                continue;
            int c = memcmp(x + pos, y + pos, e - pos);
            if (c == 0)
                c = str_cmp(s, i, x, y);
            if (c != 0)
                return c;
            pos = e;
        }
    } else if (s->n_str > 0) {
        uint32_t e = s->str_end[0];
        return e > from ? memcmp(x + from, y + from, e - from) : 0;
    }
    return memcmp(x + pos, y + pos, s->kb - pos);
}

static inline void rec_copy(uint8_t *d, const uint8_t *src, size_t stride)
{
    uint64_t *dd = (uint64_t *)(void *)d;
    const uint64_t *ss = (const uint64_t *)(const void *)src;
    for (size_t w = 0; w < stride / 8; w++)
        dd[w] = ss[w];
}

/* Insertion sort of n records known equal up to `from` (see rec_cmp). */
static void insertion(const sorter *s, uint8_t *a, size_t n, uint32_t from)
{
    size_t st = s->stride;
    uint64_t tmp[(KN_SORT_MAX_KEYS * (1 + 16) + 16) / 8 + 2];
    for (size_t i = 1; i < n; i++) {
        if (rec_cmp(s, a + (i - 1) * st, a + i * st, from) <= 0)
            continue;
        memcpy(tmp, a + i * st, st);
        size_t j = i;
        while (j > 0 && rec_cmp(s, a + (j - 1) * st, (const uint8_t *)tmp, from) > 0) {
            rec_copy(a + j * st, a + (j - 1) * st, st);
            j--;
        }
        memcpy(a + j * st, tmp, st);
    }
}

/* Merge sorted x[nx] and y[ny] into out (x first among equals). */
static void merge(const sorter *s, const uint8_t *x, size_t nx, const uint8_t *y, size_t ny, uint8_t *out,
                  uint32_t from)
{
    size_t st = s->stride, i = 0, j = 0;
    while (i < nx && j < ny) {
        if (rec_cmp(s, y + j * st, x + i * st, from) < 0)
            rec_copy(out, y + st * j++, st);
        else
            rec_copy(out, x + st * i++, st);
        out += st;
    }
    memcpy(out, x + i * st, (nx - i) * st);
    out += (nx - i) * st;
    memcpy(out, y + j * st, (ny - j) * st);
}

/* Merge sort of a[n] (equal up to `from`) using tmp[n]; the result ends in a. */
static void merge_sort(const sorter *s, uint8_t *a, uint8_t *tmp, size_t n, uint32_t from)
{
    if (n <= SMALL_BUCKET) {
        insertion(s, a, n, from);
        return;
    }
    size_t h = n / 2, st = s->stride;
    merge_sort(s, a, tmp, h, from);
    merge_sort(s, a + h * st, tmp + h * st, n - h, from);
    if (rec_cmp(s, a + (h - 1) * st, a + h * st, from) <= 0)
        return;   /* already in order */
    merge(s, a, h, a + h * st, n - h, tmp, from);
    memcpy(a, tmp, n * st);
}

/* True when byte d is just after a VARCHAR key's prefix. */
static bool at_string_end(const sorter *s, uint32_t d)
{
    for (int i = 0; i < s->n_str; i++)
        if (s->str_end[i] == d)
            return true;
    return false;
}

/* Sort the n records at src, all equal on bytes [0, d) and on the strings
 * of the VARCHAR keys before d. The result ends in dst when into_dst, else
 * in src; the other buffer is scratch. Once a bucket reaches the end of a
 * string prefix it still ties on, the rest is a merge sort on the full
 * order (the bytes after it only matter among equal strings). */
static void msd(const sorter *s, uint8_t *src, uint8_t *dst, size_t n, uint32_t d, bool into_dst)
{
    size_t st = s->stride;
    for (;;) {
        bool leaf = true;
        if (n <= 1)
            ;
        else if (at_string_end(s, d))
            merge_sort(s, src, dst, n, d - KN_SORT_STR_PREFIX);
        else if (d >= s->kb)
            ;
        else if (n <= SMALL_BUCKET)
            insertion(s, src, n, d);
        else
            leaf = false;
        if (leaf) {
            if (into_dst)
                memcpy(dst, src, n * st);
            return;
        }
        size_t cnt[256] = {0};
        const uint8_t *p = src + d;
        for (size_t i = 0; i < n; i++)
            cnt[p[i * st]]++;
        if (cnt[src[d]] == n) {
            d++;   /* every record has the same byte here */
            continue;
        }
        size_t pos[256], at = 0;
        for (int b = 0; b < 256; b++) {
            pos[b] = at;
            at += cnt[b];
        }
        for (size_t i = 0; i < n; i++)
            rec_copy(dst + st * pos[p[i * st]]++, src + i * st, st);
        at = 0;
        for (int b = 0; b < 256; b++) {
            if (cnt[b] == 1 && !into_dst)
                memcpy(src + at * st, dst + at * st, st);
            else if (cnt[b] > 1)
                msd(s, dst + at * st, src + at * st, cnt[b], d + 1, !into_dst);
            at += cnt[b];
        }
        return;
    }
}

size_t kn_sort_scratch_size(const kn_sort_layout *l, int64_t n)
{
    return n > 0 ? (size_t)n * l->stride : 0;
}

int kn__cpu_sort_records(const kn_ctx *ctx, const kn_sort_layout *l, uint8_t *recs, int64_t n, void *scratch,
                         size_t scratch_size, const kn_sort_source *sources, int n_sources, pa_err *err)
{
    if (n <= 1)
        return PA_OK;
    if (scratch_size < kn_sort_scratch_size(l, n))
        return pa_error(err, PA_EINVAL, "sort: scratch of %zu bytes, %zu needed", scratch_size,
                        kn_sort_scratch_size(l, n));
    if (l->has_strings && !sources)
        return pa_error(err, PA_EINVAL, "sort: string keys need their sources");
    sorter s;
    sorter_init(&s, l, sources);
    msd(&s, recs, scratch, (size_t)n, 0, false);
    (void)ctx;
    return PA_OK;
}

int kn__cpu_sort_merge(const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *a, int64_t na, const uint8_t *b,
                       int64_t nb, uint8_t *out, const kn_sort_source *sources, int n_sources, pa_err *err)
{
    if (l->has_strings && !sources && na > 0 && nb > 0)
        return pa_error(err, PA_EINVAL, "sort merge: string keys need their sources");
    sorter s;
    sorter_init(&s, l, sources);
    merge(&s, a, (size_t)(na > 0 ? na : 0), b, (size_t)(nb > 0 ? nb : 0), out, 0);
    (void)ctx;
    return PA_OK;
}

int kn__cpu_sort_filter(const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *in, int64_t n,
                        const uint8_t *threshold, uint8_t *out, int64_t *count, const kn_sort_source *sources,
                        int n_sources, pa_err *err)
{
    sorter s;
    sorter_init(&s, l, sources);
    size_t stride = l->stride;
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *r = in + (size_t)i * stride;
        if (rec_cmp(&s, r, threshold, 0) <= 0) {
            if (out + (size_t)m * stride != r)
                memmove(out + (size_t)m * stride, r, stride);
            m++;
        }
    }
    *count = m;
    (void)ctx;
    (void)err;
    return PA_OK;
}

int kn__cpu_sort_merge_next(const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *const *runs,
                            const int64_t *counts, int64_t *pos, int n_runs, int64_t m, uint8_t *out,
                            const kn_sort_source *sources, int n_sources, pa_err *err)
{
    if (l->has_strings && !sources && n_runs > 1)
        return pa_error(err, PA_EINVAL, "sort merge: string keys need their sources");
    sorter s;
    sorter_init(&s, l, sources);
    size_t st = l->stride;
    for (int64_t k = 0; k < m; k++) {
        int best = -1;
        const uint8_t *br = NULL;
        for (int i = 0; i < n_runs; i++) {
            if (pos[i] >= counts[i])
                continue;
            const uint8_t *r = runs[i] + (size_t)pos[i] * st;
            if (best < 0 || rec_cmp(&s, r, br, 0) < 0) {
                best = i;
                br = r;
            }
        }
        if (best < 0)
            break;
        rec_copy(out + (size_t)k * st, br, st);
        pos[best]++;
    }
    (void)ctx;
    return PA_OK;
}
