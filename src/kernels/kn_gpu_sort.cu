/*
 * kn_gpu_sort.cu - sort and top-N as CUDA kernels: encoding normalized-key
 * records, sorting them, merging sorted runs, the top-N threshold filter,
 * re-tagging copies and gathering rows by the records' references. The
 * record layout is kernels.h's ("Sort and top-N"); see kn_gpu.h for how
 * entries, scans and faults work.
 *
 * Design notes
 * - Every order decision is one comparator, rec_cmp: the key bytes in
 *   unsigned order, and where a VARCHAR key ties on its prefix the whole
 *   strings, read through the sources; as kn_sort.c orders them. The
 *   comparator reads a staged sort_info (the layout's string keys and a
 *   device table of their columns, per source) so no host pointer reaches a
 *   kernel.
 * - kn_sort_records is a bottom-up merge sort: log2(n) passes ping-pong
 *   between the records and the scratch, each merging runs of width w
 *   pairwise. A pass is one kernel in which each thread writes MERGE_K
 *   consecutive outputs: a binary search on the merge path finds where its
 *   outputs start in the two runs (records of the left run go before equal
 *   ones of the right run), then it merges sequentially; O(n log n)
 *   comparisons in all, no synchronisation inside a pass. kn_sort_merge is
 *   one such merge of two arrays. kn_sort_merge_next ranks the first m
 *   remaining records of each run against the other runs' windows (runs
 *   earlier in the list first among equals, as the cpu loop takes them) and
 *   writes those ranked below m. A radix sort on the key bytes is the faster
 *   path to come.
 * - A tag outside the sources is a data fault where a kernel reads a source
 *   through it (gather), as the cpu loops report it.
 */
#include "kernels/kn_gpu.h"

using namespace kn_gpu;

namespace {

/* What the comparator needs, staged on the device with the string key
 * columns of every source after it (strcols[tag * n_str + i]). */
struct sort_info {
    uint32_t stride, kb;
    int n_str;
    int n_sources;
    bool has_sources;
    uint32_t str_end[KN_SORT_MAX_KEYS];   /* byte after each VARCHAR key's prefix */
    bool str_desc[KN_SORT_MAX_KEYS];
    const pa_column *strcols;
};

/* The staged block: a sort_info and its column table. */
struct staged {
    void *block = NULL;
    const sort_info *S = NULL;
};

int stage_info(const kn_ctx *ctx, const kn_sort_layout *l, const kn_sort_source *sources, int n_sources,
               staged *st, pa_err *err)
{
    sort_info h{};
    h.stride = l->stride;
    h.kb = l->key_bytes;
    h.has_sources = sources != NULL;
    h.n_sources = sources && n_sources > 0 ? n_sources : 0;
    int str_col[KN_SORT_MAX_KEYS];
    for (int k = 0; k < l->n_keys; k++)
        if (pa_type_is_varlen(l->keys[k].type.id)) {
            str_col[h.n_str] = l->keys[k].column;
            h.str_desc[h.n_str] = l->keys[k].descending;
            h.str_end[h.n_str++] = l->offset[k] + 1 + KN_SORT_STR_PREFIX;
        }
    size_t at = (sizeof h + 15) & ~(size_t)15;
    size_t n_cols = (size_t)h.n_sources * (size_t)h.n_str;
    size_t size = at + n_cols * sizeof(pa_column);
    int rc = dv_alloc(ctx->dev, size, &st->block, err);
    if (rc != PA_OK)
        return rc;
    h.strcols = (const pa_column *)((char *)st->block + at);   /* the device address of the table */
    char *b = (char *)pa_calloc(1, size);
    if (!b)
        return pa_error(err, PA_ENOMEM, "out of host memory staging a sort");
    pa_column *cols = (pa_column *)(b + at);
    for (int t = 0; t < h.n_sources; t++)
        for (int i = 0; i < h.n_str; i++)
            cols[(size_t)t * h.n_str + i] = sources[t][str_col[i]];
    memcpy(b, &h, sizeof h);
    rc = stage_into(ctx, b, size, st->block, err);
    pa_free(b);
    st->S = (const sort_info *)st->block;
    return rc;
}

__device__ inline int bytecmp(const uint8_t *x, const uint8_t *y, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++)
        if (x[k] != y[k])
            return x[k] < y[k] ? -1 : 1;
    return 0;
}

__device__ inline void ref_of(const uint8_t *r, uint32_t stride, uint32_t *tag, uint32_t *row)
{
    const uint32_t *ref = (const uint32_t *)(r + stride - 8);
    *tag = ref[0];
    *row = ref[1];
}

/* VARCHAR key i of two records equal up to the end of its prefix: the whole
 * strings (both NULL or both valid, since the flag bytes tied). */
__device__ int str_cmp(const sort_info *S, int i, const uint8_t *x, const uint8_t *y)
{
    uint32_t tx, rx, ty, ry;
    ref_of(x, S->stride, &tx, &rx);
    ref_of(y, S->stride, &ty, &ry);
    if (tx >= (uint32_t)S->n_sources || ty >= (uint32_t)S->n_sources)
        return 0;   /* no source to read: the prefix decides (a gather reports the tag) */
    const pa_column *a = &S->strcols[(size_t)tx * S->n_str + i], *b = &S->strcols[(size_t)ty * S->n_str + i];
    if (!bit(a->validity, rx))
        return 0;
    int32_t la = a->offsets[rx + 1] - a->offsets[rx], lb = b->offsets[ry + 1] - b->offsets[ry];
    if (la == lb && la <= KN_SORT_STR_PREFIX)
        return 0;   /* the prefix held both strings whole */
    int32_t m = la < lb ? la : lb;
    int c = bytecmp((const uint8_t *)a->data + a->offsets[rx], (const uint8_t *)b->data + b->offsets[ry],
                    (uint32_t)m);
    if (c == 0)
        c = (la > lb) - (la < lb);
    return S->str_desc[i] ? -c : c;
}

/* The full order of two records (kn_sort.c's rec_cmp from byte 0). */
__device__ int rec_cmp(const sort_info *S, const uint8_t *x, const uint8_t *y)
{
    uint32_t pos = 0;
    if (S->has_sources) {
        for (int i = 0; i < S->n_str; i++) {
            uint32_t e = S->str_end[i];
            int c = bytecmp(x + pos, y + pos, e - pos);
            if (c == 0)
                c = str_cmp(S, i, x, y);
            if (c != 0)
                return c;
            pos = e;
        }
    } else if (S->n_str > 0) {
        return bytecmp(x, y, S->str_end[0]);   /* without sources a tie on a string prefix is a tie */
    }
    return bytecmp(x + pos, y + pos, S->kb - pos);
}

__device__ inline void rec_copy(uint8_t *d, const uint8_t *s, uint32_t stride)
{
    for (uint32_t w = 0; w < stride / 8; w++)
        ((uint64_t *)d)[w] = ((const uint64_t *)s)[w];
}

/* Records in [lo, hi) of a sorted array that sort before r (strictly:
 * cmp < 0), or not after it (cmp <= 0) when `equal_too`. */
__device__ int64_t rank_in(const sort_info *S, const uint8_t *a, int64_t lo, int64_t hi, const uint8_t *r,
                           bool equal_too)
{
    const int64_t base = lo;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int c = rec_cmp(S, a + (size_t)mid * S->stride, r);
        if (c < 0 || (equal_too && c == 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - base;
}

/* Merge path: of the first d records of the merge of a[na] and b[nb]
 * (a's first among equals), how many come from a. */
__device__ int64_t merge_split(const sort_info *S, const uint8_t *a, int64_t na, const uint8_t *b, int64_t nb,
                               int64_t d)
{
    int64_t lo = d > nb ? d - nb : 0, hi = d < na ? d : na;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (rec_cmp(S, a + (size_t)mid * S->stride, b + (size_t)(d - 1 - mid) * S->stride) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Outputs [d, d + k) of the merge of a[na] and b[nb] into out + d. */
__device__ void merge_range(const sort_info *S, const uint8_t *a, int64_t na, const uint8_t *b, int64_t nb,
                            int64_t d, int64_t k, uint8_t *out)
{
    const uint32_t st = S->stride;
    int64_t i = merge_split(S, a, na, b, nb, d), j = d - i;
    for (int64_t o = d; o < d + k; o++) {
        bool from_a = j >= nb || (i < na && rec_cmp(S, a + (size_t)i * st, b + (size_t)j * st) <= 0);
        const uint8_t *r = from_a ? a + (size_t)i++ * st : b + (size_t)j++ * st;
        rec_copy(out + (size_t)o * st, r, st);
    }
}

/* Records each thread of a merge writes: one merge-path search per MERGE_K
 * outputs, then a sequential merge (ModernGPU's scheme), so a pass costs
 * O(n + n / MERGE_K * log n) comparisons instead of a search per record. */
constexpr int64_t MERGE_K = 16;

inline unsigned merge_blocks(int64_t n)
{
    return blocks_for((n + MERGE_K - 1) / MERGE_K);
}

/* One merge pass: runs of width w of src, pairwise, into dst. Thread t
 * writes outputs [t * MERGE_K, t * MERGE_K + MERGE_K), crossing pairs when
 * they are narrower than that. */
__global__ void merge_pass_k(const sort_info *S, const uint8_t *src, uint8_t *dst, int64_t n, int64_t w)
{
    const uint32_t st = S->stride;
    KN_GPU_FOR(t, (n + MERGE_K - 1) / MERGE_K)
    {
        int64_t o = t * MERGE_K, stop = o + MERGE_K < n ? o + MERGE_K : n;
        while (o < stop) {
            int64_t s = o / (2 * w) * (2 * w), mid = s + w < n ? s + w : n, end = s + 2 * w < n ? s + 2 * w : n;
            int64_t k = (end < stop ? end : stop) - o;
            merge_range(S, src + (size_t)s * st, mid - s, src + (size_t)mid * st, end - mid, o - s, k,
                        dst + (size_t)s * st);
            o += k;
        }
    }
}

/* a[na] and b[nb] (sorted) into out: a's records first among equals. */
__global__ void merge2_k(const sort_info *S, const uint8_t *a, int64_t na, const uint8_t *b, int64_t nb,
                         uint8_t *out)
{
    KN_GPU_FOR(t, (na + nb + MERGE_K - 1) / MERGE_K)
    {
        int64_t o = t * MERGE_K, k = na + nb - o < MERGE_K ? na + nb - o : MERGE_K;
        merge_range(S, a, na, b, nb, o, k, out);
    }
}

__global__ void copy_recs_k(const uint8_t *src, uint8_t *dst, int64_t n, uint32_t stride, uint32_t tag_add)
{
    KN_GPU_FOR(i, n)
    {
        uint8_t *d = dst + (size_t)i * stride;
        if (d != src + (size_t)i * stride)
            rec_copy(d, src + (size_t)i * stride, stride);
        ((uint32_t *)(d + stride - 8))[0] += tag_add;
    }
}

/* merge_next: the runs (device pointers), their counts, and per run the
 * records it gave (zeroed first). */
struct runs_v {
    const uint8_t *const *runs;
    const int64_t *counts;
    int64_t *pos;
    unsigned long long *taken;
    int n_runs;
    int64_t m;
};

/* Candidate j of run r (its pos + j-th record): its rank among the next
 * records of all runs; written when below m. */
__global__ void merge_next_k(const sort_info *S, runs_v R, uint8_t *out)
{
    const uint32_t st = S->stride;
    KN_GPU_FOR(k, (int64_t)R.n_runs * R.m)
    {
        int r = (int)(k / R.m);
        int64_t j = k % R.m, at = R.pos[r] + j;
        if (at >= R.counts[r])
            continue;
        const uint8_t *rec = R.runs[r] + (size_t)at * st;
        int64_t rank = j;
        for (int q = 0; q < R.n_runs && rank < R.m; q++) {
            if (q == r)
                continue;
            int64_t lo = R.pos[q], hi = R.counts[q] < lo + R.m ? R.counts[q] : lo + R.m;
            if (lo < hi)
                rank += rank_in(S, R.runs[q], lo, hi, rec, q < r);
        }
        if (rank < R.m) {
            rec_copy(out + (size_t)rank * st, rec, st);
            atomicAdd(&R.taken[r], 1ull);
        }
    }
}

__global__ void advance_k(runs_v R)
{
    KN_GPU_FOR(r, R.n_runs)
    R.pos[r] += (int64_t)R.taken[r];
}

/* Top-N filter: 1 for a record that does not sort after the threshold. */
struct not_after {
    const sort_info *S;
    const uint8_t *in, *threshold;
    __device__ int64_t operator()(int64_t i) const { return rec_cmp(S, in + (size_t)i * S->stride, threshold) <= 0; }
};

struct put_rec {
    const uint8_t *in;
    uint8_t *out;
    uint32_t stride;
    __device__ void operator()(int64_t i, int64_t at, int64_t keep) const
    {
        if (keep)
            rec_copy(out + (size_t)at * stride, in + (size_t)i * stride, stride);
    }
};

/* ------------------------------------------------------------ encoding */

__device__ inline void put_be(uint8_t *p, uint64_t v, int bytes)
{
    for (int b = bytes - 1; b >= 0; b--, v >>= 8)
        p[b] = (uint8_t)v;
}

/* Total-order bits of a double: -0 as +0, every NaN as one NaN above +Inf. */
__device__ inline uint64_t double_key(double d)
{
    uint64_t b;
    if (d == 0)
        d = 0;
    if (d != d)
        b = 0x7ff8000000000000ull;
    else
        memcpy(&b, &d, 8);
    return (b >> 63) ? ~b : b | (1ull << 63);
}

/* What encoding reads: the layout and the key columns (cols[k] is key k's). */
struct enc_info {
    kn_sort_layout l;
    pa_column cols[KN_SORT_MAX_KEYS];
};

__global__ void encode_k(const enc_info *E, int64_t n, uint32_t tag, uint8_t *recs)
{
    const kn_sort_layout *l = &E->l;
    const uint32_t st = l->stride;
    KN_GPU_FOR(i, n)
    {
        uint8_t *r = recs + (size_t)i * st;
        for (int k = 0; k < l->n_keys; k++) {
            const kn_sort_key *key = &l->keys[k];
            const pa_column *c = &E->cols[k];
            uint8_t *p = r + l->offset[k];
            const bool valid = bit(c->validity, i);
            p[0] = (uint8_t)(key->nulls_first ? valid : !valid);
            uint8_t *v = p + 1;
            int vb;
            switch (kn__phys_id(key->type.id)) {
            case PA_TYPE_BOOLEAN:
                vb = 1;
                v[0] = ((const uint8_t *)c->data)[i] ? 1 : 0;
                break;
            case PA_TYPE_INTEGER:
            case PA_TYPE_DATE:
                vb = 4;
                put_be(v, (uint32_t)((const int32_t *)c->data)[i] ^ 0x80000000u, 4);
                break;
            case PA_TYPE_DOUBLE:
                vb = 8;
                put_be(v, double_key(((const double *)c->data)[i]), 8);
                break;
            case PA_TYPE_VARCHAR: {
                vb = KN_SORT_STR_PREFIX;
                const int32_t *off = c->offsets;
                int32_t len = off[i + 1] - off[i];
                const uint8_t *s = (const uint8_t *)c->data + off[i];
                for (int b = 0; b < KN_SORT_STR_PREFIX; b++)
                    v[b] = b < len ? s[b] : 0;
                break;
            }
            case PA_TYPE_INTERVAL: {   /* by the normalised length, as the cpu's encode_values */
                vb = 16;
                pa_interval iv = ((const pa_interval *)c->data)[i];
                unsigned __int128 x = (unsigned __int128)pa_interval_norm(iv) ^ ((unsigned __int128)1 << 127);
                put_be(v, (uint64_t)(x >> 64), 8);
                put_be(v + 8, (uint64_t)x, 8);
                break;
            }
            default:
                if (key->type.id == PA_TYPE_DECIMAL && key->type.precision > PA_DECIMAL64_MAX_PRECISION) {
                    vb = 16;
                    const uint64_t *w = (const uint64_t *)c->data + 2 * i;   /* little endian: lo, hi */
                    put_be(v, w[1] ^ (1ull << 63), 8);
                    put_be(v + 8, w[0], 8);
                } else {
                    vb = 8;
                    put_be(v, (uint64_t)((const int64_t *)c->data)[i] ^ (1ull << 63), 8);
                }
                break;
            }
            for (int b = 0; b < vb; b++)
                v[b] = !valid ? 0 : key->descending ? (uint8_t)~v[b] : v[b];
        }
        for (uint32_t b = l->key_bytes; b < st - 8; b++)
            r[b] = 0;
        uint32_t *ref = (uint32_t *)(r + st - 8);
        ref[0] = tag;
        ref[1] = (uint32_t)i;
    }
}

/* ------------------------------------------------------------- gathers */

const char BAD_TAG[] = "sort gather: a record's source is not among the sources given";
const char NULL_NO_VALIDITY[] = "sort gather: the column has NULLs but no output validity";
const char TOO_BIG[] = "sort gather: more than 2147483647 bytes of strings in one chunk";

/* The gathered column of every source: cols[tag]. */
struct gather_v {
    const pa_column *cols;
    int n_sources;
    const uint8_t *recs;
    uint32_t stride;
    fault_t bad_tag;
    /* The column of record i's source (NULL, after raising, for a bad tag). */
    __device__ const pa_column *col(int64_t i, uint32_t *row) const
    {
        uint32_t tag;
        ref_of(recs + (size_t)i * stride, stride, &tag, row);
        if (tag >= (uint32_t)n_sources) {
            bad_tag.raise();
            return NULL;
        }
        return &cols[tag];
    }
};

struct str_len {
    gather_v G;
    __device__ int64_t operator()(int64_t i) const
    {
        uint32_t row;
        const pa_column *c = G.col(i, &row);
        return c ? (int64_t)c->offsets[row + 1] - c->offsets[row] : 0;
    }
};

struct str_end {
    int32_t *off;
    fault_t too_big;
    __device__ void operator()(int64_t i, int64_t at, int64_t len) const
    {
        if (at + len > INT32_MAX)
            too_big.raise();
        else
            off[i + 1] = (int32_t)(at + len);
    }
};

__global__ void gather_fixed_k(gather_v G, int64_t n, int width, uint8_t *out)
{
    KN_GPU_FOR(i, n)
    {
        uint32_t row;
        const pa_column *c = G.col(i, &row);
        if (!c)
            continue;
        const uint8_t *s = (const uint8_t *)c->data + (size_t)row * width;
        for (int b = 0; b < width; b++)
            out[(size_t)i * width + b] = s[b];
    }
}

__global__ void gather_bytes_k(gather_v G, int64_t n, const int32_t *off, uint8_t *out)
{
    KN_GPU_FOR(i, n)
    {
        uint32_t row;
        const pa_column *c = G.col(i, &row);
        if (!c)
            continue;
        const uint8_t *s = (const uint8_t *)c->data + c->offsets[row];
        int32_t len = c->offsets[row + 1] - c->offsets[row];
        for (int32_t b = 0; b < len; b++)
            out[off[i] + b] = s[b];
    }
}

/* Validity: one output byte (8 records) per thread; without an output
 * validity a NULL is a fault. */
__global__ void gather_valid_k(gather_v G, int64_t n, uint8_t *validity, fault_t null_fault)
{
    KN_GPU_FOR(byte, (n + 7) / 8)
    {
        unsigned v = 0;
        for (int64_t i = byte * 8; i < byte * 8 + 8 && i < n; i++) {
            uint32_t row;
            const pa_column *c = G.col(i, &row);
            bool ok = c && bit(c->validity, row);
            if (!ok && c && !validity)
                null_fault.raise();
            v |= (unsigned)ok << (i & 7);
        }
        if (validity)
            validity[byte] = (uint8_t)v;
    }
}

/* Stage the gathered column of every source. */
int stage_column(const kn_ctx *ctx, const kn_sort_source *sources, int n_sources, int column, void **dev,
                 pa_err *err)
{
    if (n_sources <= 0 || !sources) {
        *dev = NULL;
        return PA_OK;
    }
    pa_column *h = (pa_column *)pa_calloc((size_t)n_sources, sizeof *h);
    if (!h)
        return pa_error(err, PA_ENOMEM, "out of host memory staging a sort gather");
    for (int t = 0; t < n_sources; t++)
        h[t] = sources[t][column];
    int rc = stage_bytes(ctx, h, (size_t)n_sources * sizeof *h, dev, err);
    pa_free(h);
    return rc;
}

} /* namespace */

/* ------------------------------------------------------------- entries */

extern "C" int SIMT_NAME(kn__gpu_sort_encode)(const kn_ctx *ctx, const kn_sort_layout *l, kn_sort_source cols,
                                              int64_t n, uint32_t tag, uint8_t *recs, pa_err *err)
{
    if (n < 0 || n > (int64_t)UINT32_MAX)
        return pa_error(err, PA_EINVAL, "sort encode: %lld rows", (long long)n);
    enc_info h;
    memset(&h, 0, sizeof h);
    h.l = *l;
    for (int k = 0; k < l->n_keys; k++) {
        const kn_sort_key *key = &l->keys[k];
        if (cols[key->column].type.id != key->type.id)
            return pa_error(err, PA_EINVAL, "sort key %d: column %d is %s, layout says %s", k, key->column,
                            pa_type_name(cols[key->column].type.id), pa_type_name(key->type.id));
        h.cols[k] = cols[key->column];
    }
    if (n == 0)
        return PA_OK;
    enc_info *E = NULL;
    int rc = stage(ctx, h, &E, err);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(encode_k, blocks_for(n), THREADS, 0, ctx->stream, err, (const enc_info *)E, n, tag, recs);
    return free_after(ctx, E, rc, err);
}

extern "C" int SIMT_NAME(kn__gpu_sort_records)(const kn_ctx *ctx, const kn_sort_layout *l, uint8_t *recs, int64_t n,
                                               void *scratch, size_t scratch_size, const kn_sort_source *sources,
                                               int n_sources, pa_err *err)
{
    if (n <= 1)
        return PA_OK;
    if (scratch_size < kn_sort_scratch_size(l, n))
        return pa_error(err, PA_EINVAL, "sort: scratch of %zu bytes, %zu needed", scratch_size,
                        kn_sort_scratch_size(l, n));
    if (l->has_strings && !sources)
        return pa_error(err, PA_EINVAL, "sort: string keys need their sources");
    staged st;
    int rc = stage_info(ctx, l, sources, n_sources, &st, err);
    uint8_t *src = recs, *dst = (uint8_t *)scratch;
    for (int64_t w = 1; rc == PA_OK && w < n; w *= 2) {
        rc = SIMT_LAUNCH(merge_pass_k, merge_blocks(n), THREADS, 0, ctx->stream, err, st.S, (const uint8_t *)src,
                         dst, n, w);
        uint8_t *t = src;
        src = dst;
        dst = t;
    }
    if (rc == PA_OK && src != recs)
        rc = SIMT_LAUNCH(copy_recs_k, blocks_for(n), THREADS, 0, ctx->stream, err, (const uint8_t *)src, recs, n,
                         l->stride, 0u);
    return free_after(ctx, st.block, rc, err);
}

extern "C" int SIMT_NAME(kn__gpu_sort_merge)(const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *a,
                                             int64_t na, const uint8_t *b, int64_t nb, uint8_t *out,
                                             const kn_sort_source *sources, int n_sources, pa_err *err)
{
    if (l->has_strings && !sources && na > 0 && nb > 0)
        return pa_error(err, PA_EINVAL, "sort merge: string keys need their sources");
    na = na > 0 ? na : 0;
    nb = nb > 0 ? nb : 0;
    if (na + nb == 0)
        return PA_OK;
    staged st;
    int rc = stage_info(ctx, l, sources, n_sources, &st, err);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(merge2_k, merge_blocks(na + nb), THREADS, 0, ctx->stream, err, st.S, a, na, b, nb, out);
    return free_after(ctx, st.block, rc, err);
}

extern "C" int SIMT_NAME(kn__gpu_sort_merge_next)(const kn_ctx *ctx, const kn_sort_layout *l,
                                                  const uint8_t *const *runs, const int64_t *counts, int64_t *pos,
                                                  int n_runs, int64_t m, uint8_t *out, const kn_sort_source *sources,
                                                  int n_sources, pa_err *err)
{
    if (l->has_strings && !sources && n_runs > 1)
        return pa_error(err, PA_EINVAL, "sort merge: string keys need their sources");
    if (n_runs <= 0 || m <= 0)
        return PA_OK;
    /* One block: run pointers, counts, the taken counters. */
    size_t runs_b = (size_t)n_runs * sizeof(void *), counts_b = (size_t)n_runs * 8, size = runs_b + 2 * counts_b;
    char *h = (char *)pa_calloc(1, size);
    if (!h)
        return pa_error(err, PA_ENOMEM, "out of host memory staging a sort merge");
    memcpy(h, runs, runs_b);
    memcpy(h + runs_b, counts, counts_b);
    void *blk = NULL;
    int rc = stage_bytes(ctx, h, size, &blk, err);
    pa_free(h);
    staged st;
    if (rc == PA_OK)
        rc = stage_info(ctx, l, sources, n_sources, &st, err);
    runs_v R{(const uint8_t *const *)blk, (const int64_t *)((char *)blk + runs_b), pos,
             (unsigned long long *)((char *)blk + runs_b + counts_b), n_runs, m};
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(merge_next_k, blocks_for((int64_t)n_runs * m), THREADS, 0, ctx->stream, err, st.S, R, out);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(advance_k, 1, THREADS, 0, ctx->stream, err, R);
    rc = free_after(ctx, st.block, rc, err);
    return free_after(ctx, blk, rc, err);
}

extern "C" int SIMT_NAME(kn__gpu_sort_filter)(const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *in,
                                              int64_t n, const uint8_t *threshold, uint8_t *out, int64_t *count,
                                              const kn_sort_source *sources, int n_sources, pa_err *err)
{
    KN__POISON(ctx, count);
    staged st;
    int rc = stage_info(ctx, l, sources, n_sources, &st, err);
    /* In place: later tiles write where earlier ones still read, so the
     * kernel reads a copy. */
    void *copy = NULL;
    const uint8_t *src = in;
    if (rc == PA_OK && out == in && n > 0 &&
        (rc = dv_alloc(ctx->dev, (size_t)n * l->stride, &copy, err)) == PA_OK &&
        (rc = dv_copy_async(ctx->stream, copy, in, (size_t)n * l->stride, DV_COPY_D2D, err)) == PA_OK)
        src = (const uint8_t *)copy;
    if (rc == PA_OK)
        rc = scan(ctx, n > 0 ? n : 0, not_after{st.S, src, threshold}, put_rec{src, out, l->stride}, NULL, count,
                  err);
    rc = free_after(ctx, copy, rc, err);
    return free_after(ctx, st.block, rc, err);
}

extern "C" int SIMT_NAME(kn__gpu_sort_copy)(const kn_ctx *ctx, const kn_sort_layout *l, const uint8_t *src,
                                            int64_t n, uint32_t tag_add, uint8_t *dst, pa_err *err)
{
    if (n <= 0)
        return PA_OK;
    return SIMT_LAUNCH(copy_recs_k, blocks_for(n), THREADS, 0, ctx->stream, err, src, dst, n, l->stride, tag_add);
}

extern "C" int SIMT_NAME(kn__gpu_sort_gather_bytes)(const kn_ctx *ctx, const kn_sort_layout *l,
                                                    const kn_sort_source *sources, int n_sources, int column,
                                                    const uint8_t *recs, int64_t n, int64_t *bytes, pa_err *err)
{
    KN__POISON(ctx, bytes);
    void *cols = NULL;
    int rc = stage_column(ctx, sources, n_sources, column, &cols, err);
    gather_v G{(const pa_column *)cols, n_sources, recs, l->stride, fault_of(ctx, PA_EINVAL, BAD_TAG)};
    if (rc == PA_OK)
        rc = scan(ctx, n > 0 ? n : 0, str_len{G}, no_write{}, NULL, bytes, err);
    return free_after(ctx, cols, rc, err);
}

extern "C" int SIMT_NAME(kn__gpu_sort_gather)(const kn_ctx *ctx, const kn_sort_layout *l,
                                              const kn_sort_source *sources, int n_sources, int column,
                                              const uint8_t *recs, int64_t n, pa_column *out, pa_err *err)
{
    int width = pa_type_bytes(out->type);
    if (width != 0 && width != 1 && width != 4 && width != 8 && width != 16)
        return pa_error(err, PA_EINVAL, "sort gather: bad type");
    if (width == 0 && !pa_type_is_varlen(out->type.id))
        return pa_error(err, PA_EINVAL, "sort gather: bad type");
    out->length = n;
    if (n <= 0)
        return width == 0 ? SIMT_LAUNCH(store_k<int32_t>, 1, 1, 0, ctx->stream, err, out->offsets, 0) : PA_OK;
    void *cols = NULL;
    int rc = stage_column(ctx, sources, n_sources, column, &cols, err);
    gather_v G{(const pa_column *)cols, n_sources, recs, l->stride, fault_of(ctx, PA_EINVAL, BAD_TAG)};
    if (rc == PA_OK && width > 0)
        rc = SIMT_LAUNCH(gather_fixed_k, blocks_for(n), THREADS, 0, ctx->stream, err, G, n, width,
                         (uint8_t *)out->data);
    if (rc == PA_OK && width == 0) {
        rc = SIMT_LAUNCH(store_k<int32_t>, 1, 1, 0, ctx->stream, err, out->offsets, 0);
        if (rc == PA_OK)
            rc = scan(ctx, n, str_len{G}, str_end{out->offsets, fault_of(ctx, PA_EUNSUPPORTED, TOO_BIG)}, NULL,
                      NULL, err);
        if (rc == PA_OK)
            rc = SIMT_LAUNCH(gather_bytes_k, blocks_for(n), THREADS, 0, ctx->stream, err, G, n,
                             (const int32_t *)out->offsets, (uint8_t *)out->data);
    }
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(gather_valid_k, blocks_for((n + 7) / 8), THREADS, 0, ctx->stream, err, G, n, out->validity,
                         fault_of(ctx, PA_EINVAL, NULL_NO_VALIDITY));
    return free_after(ctx, cols, rc, err);
}
