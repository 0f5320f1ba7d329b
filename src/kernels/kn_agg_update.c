/*
 * kn_agg_update.c - folding one chunk into a group-by table: group ids by
 * the dense map or by normalising, hashing and probing, then one vectorised
 * scatter loop per aggregate slot. See kn_agg_int.h for the layouts.
 */
#include "kernels/kn_agg_int.h"

#include <math.h>

#define BIT(v, i) (((v)[(i) >> 3] >> ((i) & 7)) & 1)

static size_t up16(size_t n) { return (n + 15) & ~(size_t)15; }

size_t kn_agg_update_scratch(const kn_agg_layout *L, int64_t n)
{
    size_t r = (size_t)(n > 0 ? n : 1), local = 1;
    while (local < 2 * r)
        local <<= 1;
    /* rows, string offsets, hashes, codes, group ids; then the GPU kernels'
     * batch-local table of new keys and the buffers and per-tile digit
     * counts of their radix sort by group id (kn_gpu_agg.cu) */
    return up16(r * (size_t)L->stride) + up16(r * (size_t)L->n_str * 8) + up16(r * 8) + up16(r * 4) * 2 +
           up16(local * 4) + up16(r * 16) + ((r + KN__AGG_PART_TILE - 1) / KN__AGG_PART_TILE + 1) * 256 * 8 + 16;
}

static int64_t str_bytes(const pa_column *c, int64_t n)
{
    return n > 0 ? (int64_t)c->offsets[n] - c->offsets[0] : 0;
}

int kn__cpu_agg_input_bytes(const kn_ctx *ctx, const kn_agg_table *t, const pa_column *keys, const pa_column *args,
                            int64_t n, int64_t *out, pa_err *err)
{
    int64_t b = 0;
    for (int k = 0; k < t->L.n_keys; k++)
        if (pa_type_is_varlen(t->L.key_types[k].id))
            b += str_bytes(&keys[k], n);
    for (int s = 0; s < t->L.n_slots; s++)
        if (kn__agg_slot_repr(&t->L.slots[s]) == KN__AGG_R_STR)
            b += str_bytes(&args[s], n);
    *out = b;
    return PA_OK;
}

/* ------------------------------------------------------- normalised keys */

static inline double canon_double(double v)
{
    if (v == 0)
        return 0.0;
    if (isnan(v))
        return NAN;
    return v;
}

/* Write field k of row i of column c into the normalised key dst. */
static inline void put_field(const kn_agg_layout *L, int k, const pa_column *c, int64_t i, uint8_t *dst,
                             int64_t *soff)
{
    uint8_t *f = dst + L->key_off[k];
    if (!pa_column_valid(c, i)) {
        dst[L->null_off + k] = 1;
        return;
    }
    switch (kn__phys_id(c->type.id)) {
    case PA_TYPE_BOOLEAN: *f = ((const uint8_t *)c->data)[i] != 0; break;
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: memcpy(f, (const int32_t *)c->data + i, 4); break;
    case PA_TYPE_DOUBLE: {
        double v = canon_double(((const double *)c->data)[i]);
        memcpy(f, &v, 8);
        break;
    }
    case PA_TYPE_DECIMAL:
        if (c->type.precision > PA_DECIMAL64_MAX_PRECISION) {
            memcpy(f, (const __int128 *)c->data + i, 16);
            break;
        }
        /* fall through */
    case PA_TYPE_BIGINT: memcpy(f, (const int64_t *)c->data + i, 8); break;
    case PA_TYPE_VARCHAR: {
        int32_t o = c->offsets[i];
        uint32_t len = (uint32_t)(c->offsets[i + 1] - o);
        memcpy(f, &len, 4);
        memcpy(f + 4, (const uint8_t *)c->data + o, len < 4 ? len : 4);
        soff[L->key_str[k]] = o;
        break;
    }
    default: break;
    }
}

/* Normalise keys of rows [0, n) column by column (rows zeroed first). */
static void normalise(const kn_agg_layout *L, const pa_column *keys, int64_t n, uint8_t *rows, int64_t *soff)
{
    size_t st = (size_t)L->stride;
    memset(rows, 0, (size_t)n * st);
    for (int k = 0; k < L->n_keys; k++) {
        const pa_column *c = &keys[k];
        int off = L->key_off[k];
        if (!c->validity && (c->type.id == PA_TYPE_INTEGER || c->type.id == PA_TYPE_DATE)) {
            const int32_t *v = c->data;
            for (int64_t i = 0; i < n; i++)
                memcpy(rows + i * st + off, v + i, 4);
        } else if (!c->validity && (kn__phys_id(c->type.id) == PA_TYPE_BIGINT ||
                                    (c->type.id == PA_TYPE_DECIMAL &&
                                     c->type.precision <= PA_DECIMAL64_MAX_PRECISION))) {
            const int64_t *v = c->data;
            for (int64_t i = 0; i < n; i++)
                memcpy(rows + i * st + off, v + i, 8);
        } else {
            for (int64_t i = 0; i < n; i++)
                put_field(L, k, c, i, rows + i * st, soff + i * L->n_str);
        }
    }
}

/* ------------------------------------------------------------ dense path */

/* Dense value of row i (VARCHAR: 0 empty, 1 + first byte). */
static inline int64_t dense_value(const pa_column *c, int64_t i)
{
    switch (kn__phys_id(c->type.id)) {
    case PA_TYPE_BOOLEAN: return ((const uint8_t *)c->data)[i] != 0;
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: return ((const int32_t *)c->data)[i];
    case PA_TYPE_VARCHAR: {
        int32_t o = c->offsets[i];
        return c->offsets[i + 1] == o ? 0 : 1 + (int64_t)((const uint8_t *)c->data)[o];
    }
    default: return ((const int64_t *)c->data)[i];
    }
}

/* Value range of the valid rows; false if a string is longer than 1 byte. */
static bool dense_range(const pa_column *c, int64_t n, int64_t *lo, int64_t *hi)
{
    int64_t a = INT64_MAX, b = INT64_MIN;
    if (pa_type_is_varlen(c->type.id))
        for (int64_t i = 0; i < n; i++)
            if (c->offsets[i + 1] - c->offsets[i] > 1)
                return false;
    if (!c->validity && (c->type.id == PA_TYPE_INTEGER || c->type.id == PA_TYPE_DATE)) {
        const int32_t *v = c->data;
        int32_t x = INT32_MAX, y = INT32_MIN;
        for (int64_t i = 0; i < n; i++) {
            x = v[i] < x ? v[i] : x;
            y = v[i] > y ? v[i] : y;
        }
        a = x, b = y;
    } else {
        for (int64_t i = 0; i < n; i++) {
            if (!pa_column_valid(c, i))
                continue;
            int64_t v = dense_value(c, i);
            a = v < a ? v : a;
            b = v > b ? v : b;
        }
    }
    if (a > b)
        a = b = 0;
    *lo = a, *hi = b;
    return true;
}

static uint64_t pow2_at_least(uint64_t x)
{
    uint64_t p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

/* Decide (first chunk) or check the dense ranges; false turns the path off. */
static bool dense_fit(kn_agg_table *t, const pa_column *keys, int64_t n)
{
    const kn_agg_layout *L = &t->L;
    int64_t lo[KN_AGG_MAX_KEYS], hi[KN_AGG_MAX_KEYS];
    for (int k = 0; k < L->n_keys; k++) {
        if (!dense_range(&keys[k], n, &lo[k], &hi[k]))
            return false;
        if ((uint64_t)hi[k] - (uint64_t)lo[k] >= KN_AGG_DENSE_CODES)
            return false;
    }
    if (t->hdr->dense == 2) {
        for (int k = 0; k < L->n_keys; k++)
            if (lo[k] < t->hdr->dense_base[k] || hi[k] >= t->hdr->dense_base[k] + t->hdr->dense_span[k])
                return false;
        return true;
    }
    /* First chunk: spans with headroom around the range, else tight. */
    for (int pass = 0; pass < 2; pass++) {
        uint64_t codes = 1;
        for (int k = 0; k < L->n_keys; k++) {
            uint64_t r = (uint64_t)(hi[k] - lo[k]) + 1;
            uint64_t span = pass == 0 ? pow2_at_least(2 * r) : r;
            t->hdr->dense_span[k] = (int64_t)span;
            t->hdr->dense_base[k] = lo[k] - (int64_t)((span - r) / 2);
            codes *= span + 1;
            if (codes > KN_AGG_DENSE_CODES)
                break;
        }
        if (codes <= KN_AGG_DENSE_CODES) {
            t->hdr->dense = 2;
            return true;
        }
    }
    return false;
}

/* Mixed-radix codes of rows [0, n) under the fixed ranges; false (codes
 * then meaningless) when a row leaves a key's range, which a later chunk
 * may do: the check rides along with the coding instead of a second pass. */
static bool dense_codes(const kn_agg_table *t, const pa_column *keys, int64_t n, uint32_t *codes)
{
    memset(codes, 0, (size_t)n * 4);
    uint64_t bad = 0;
    for (int k = 0; k < t->L.n_keys; k++) {
        const pa_column *c = &keys[k];
        uint64_t span = (uint64_t)t->hdr->dense_span[k];
        uint32_t dom = (uint32_t)span + 1;
        int64_t base = t->hdr->dense_base[k], b1 = base - 1;
        if (!c->validity && pa_type_is_varlen(c->type.id)) {
            const uint8_t *d = c->data;
            const int32_t *o = c->offsets;
            for (int64_t i = 0; i < n; i++) {
                int32_t len = o[i + 1] - o[i];
                int64_t v = len == 0 ? 0 : 1 + (int64_t)d[o[i]];
                bad |= (uint64_t)(len > 1) | (uint64_t)((uint64_t)(v - base) >= span);
                codes[i] = codes[i] * dom + (uint32_t)(v - b1);
            }
        } else if (!c->validity && (c->type.id == PA_TYPE_INTEGER || c->type.id == PA_TYPE_DATE)) {
            const int32_t *v = c->data;
            for (int64_t i = 0; i < n; i++) {
                bad |= (uint64_t)((uint64_t)((int64_t)v[i] - base) >= span);
                codes[i] = codes[i] * dom + (uint32_t)(v[i] - b1);
            }
        } else {
            bool str = pa_type_is_varlen(c->type.id);
            for (int64_t i = 0; i < n; i++) {
                uint32_t x = 0;   /* code 0: NULL */
                if (pa_column_valid(c, i)) {
                    if (str && c->offsets[i + 1] - c->offsets[i] > 1)
                        return false;
                    int64_t v = dense_value(c, i);
                    if ((uint64_t)v - (uint64_t)base >= span)
                        return false;
                    x = (uint32_t)((uint64_t)v - (uint64_t)b1);
                }
                codes[i] = codes[i] * dom + x;
            }
        }
    }
    return bad == 0;
}

/* Group of row i found by the index (and put into the dense map). */
static uint32_t dense_miss(kn_agg_table *t, const pa_column *keys, int64_t i, const uint8_t *const *bases)
{
    const kn_agg_layout *L = &t->L;
    uint64_t key[(2 * KN_AGG_MAX_KEYS * 16 + 8) / 8];
    int64_t soff[KN_AGG_MAX_KEYS];
    memset(key, 0, (size_t)L->stride);
    for (int k = 0; k < L->n_keys; k++)
        put_field(L, k, &keys[k], i, (uint8_t *)key, soff);
    uint64_t h = kn__agg_hash_key(L, (const uint8_t *)key, bases, soff);
    return kn__agg_find_or_insert(t, (const uint8_t *)key, bases, soff, h);
}

/* ------------------------------------------------------------- slot loops */

#define ROWS(c, ...)                                                                                 \
    do {                                                                                              \
        if (!(c)->validity) {                                                                         \
            for (int64_t i = 0; i < n; i++) {                                                         \
                __VA_ARGS__;                                                                          \
            }                                                                                         \
        } else {                                                                                      \
            const uint8_t *vb_ = (c)->validity;                                                       \
            for (int64_t i = 0; i < n; i++)                                                           \
                if (BIT(vb_, i)) {                                                                    \
                    __VA_ARGS__;                                                                      \
                }                                                                                     \
        }                                                                                             \
    } while (0)

static void minmax_str(kn_agg_table *t, kn__agg_str *st, const pa_column *c, int64_t n, const uint32_t *gids,
                       bool mx)
{
    const uint8_t *d = c->data;
    ROWS(c, {
        kn__agg_str *s = &st[gids[i]];
        int32_t o = c->offsets[i], len = c->offsets[i + 1] - o;
        bool take = !s->set;
        if (!take) {
            int32_t m = len < s->len ? len : s->len;
            int cmp = memcmp(d + o, t->arena + s->off, (size_t)m);
            if (cmp == 0)
                cmp = (len > s->len) - (len < s->len);
            take = mx ? cmp > 0 : cmp < 0;
        }
        if (take) {
            int64_t at = t->hdr->arena_used;
            memcpy(t->arena + at, d + o, (size_t)len);
            t->hdr->arena_used = at + len;
            *s = (kn__agg_str){at, len, 1};
        }
    });
}

#define MINMAX(T, st, c, mx)                                                                          \
    do {                                                                                              \
        T *s_ = (T *)(st);                                                                            \
        const T *v_ = (const T *)(c)->data;                                                           \
        if (mx)                                                                                       \
            ROWS(c, if (v_[i] > s_[gids[i]]) s_[gids[i]] = v_[i]);                                    \
        else                                                                                          \
            ROWS(c, if (v_[i] < s_[gids[i]]) s_[gids[i]] = v_[i]);                                    \
    } while (0)

/* Few groups (at most FEW_GROUPS): consecutive rows mostly hit the same
 * group, so one state per group makes every row wait for the previous
 * row's store. The few-group loops spread rows over FEW_LANES copies of the
 * states (row i to lane i % FEW_LANES) and add the lanes up at the end:
 * integer sums and counts are exact in any order. */
#define FEW_GROUPS 32
#define FEW_LANES 4

/* Rows per group of gids[0, n), groups < ng <= FEW_GROUPS. */
static void few_hist(const uint32_t *gids, int64_t n, int64_t ng, int64_t *out)
{
    int64_t h[FEW_LANES][FEW_GROUPS];
    memset(h, 0, sizeof h);
    int64_t i = 0;
    for (; i + FEW_LANES <= n; i += FEW_LANES) {
        h[0][gids[i]]++;
        h[1][gids[i + 1]]++;
        h[2][gids[i + 2]]++;
        h[3][gids[i + 3]]++;
    }
    for (; i < n; i++)
        h[0][gids[i]]++;
    for (int64_t g = 0; g < ng; g++)
        out[g] = h[0][g] + h[1][g] + h[2][g] + h[3][g];
}

/* sum[g] += the rows' values per group, for integer values of type T
 * without NULLs, groups < ng <= FEW_GROUPS. */
#define FEW_SUM(T)                                                                                    \
    do {                                                                                              \
        __int128 a_[FEW_LANES][FEW_GROUPS];                                                              \
        memset(a_, 0, sizeof a_);                                                                     \
        const T *v_ = (const T *)c->data;                                                             \
        int64_t i_ = 0;                                                                               \
        for (; i_ + FEW_LANES <= n; i_ += FEW_LANES) {                                                \
            a_[0][gids[i_]] += v_[i_];                                                                \
            a_[1][gids[i_ + 1]] += v_[i_ + 1];                                                        \
            a_[2][gids[i_ + 2]] += v_[i_ + 2];                                                        \
            a_[3][gids[i_ + 3]] += v_[i_ + 3];                                                        \
        }                                                                                             \
        for (; i_ < n; i_++)                                                                          \
            a_[0][gids[i_]] += v_[i_];                                                                \
        for (int64_t g_ = 0; g_ < ng; g_++)                                                           \
            sum[g_] += a_[0][g_] + a_[1][g_] + a_[2][g_] + a_[3][g_];                                 \
    } while (0)

/* ng: groups in the table; hist: rows per group of this batch when
 * ng <= FEW_GROUPS (else NULL). */
static void update_slot(kn_agg_table *t, int s, const pa_column *c, int64_t n, const uint32_t *gids, bool single,
                        int64_t ng, const int64_t *hist)
{
    const kn_agg_slot *sl = &t->L.slots[s];
    void *st = t->state[s];
    switch (sl->op) {
    case KN_AGG_EXTERN: return;
    case KN_AGG_COUNT_STAR:
    case KN_AGG_COUNT: {
        int64_t *cnt = st;
        if (sl->op == KN_AGG_COUNT_STAR || !c->validity) {
            if (single)
                cnt[0] += n;
            else if (hist)
                for (int64_t g = 0; g < ng; g++)
                    cnt[g] += hist[g];
            else
                for (int64_t i = 0; i < n; i++)
                    cnt[gids[i]]++;
        } else if (single) {
            int64_t m = 0;
            ROWS(c, m++);
            cnt[0] += m;
        } else {
            ROWS(c, cnt[gids[i]]++);
        }
        return;
    }
    case KN_AGG_SUM:
        if (pa_type_is_float(c->type.id)) {
            double *sum = st;
            const double *v = c->data;
            if (single) {
                double a = 0;
                ROWS(c, a += v[i]);
                sum[0] += a;
            } else {
                ROWS(c, sum[gids[i]] += v[i]);
            }
        } else if (c->type.id == PA_TYPE_INTEGER) {
            __int128 *sum = st;
            const int32_t *v = c->data;
            if (hist && !c->validity) {
                FEW_SUM(int32_t);
            } else if (single) {
                __int128 a = 0;
                ROWS(c, a += v[i]);
                sum[0] += a;
            } else {
                ROWS(c, sum[gids[i]] += v[i]);
            }
        } else if (c->type.id == PA_TYPE_DECIMAL && c->type.precision > PA_DECIMAL64_MAX_PRECISION) {
            __int128 *sum = st;
            const __int128 *v = c->data;
            ROWS(c, kn__agg_sum128(&sum[single ? 0 : gids[i]], v[i]));
        } else {
            __int128 *sum = st;
            const int64_t *v = c->data;
            if (hist && !c->validity) {
                FEW_SUM(int64_t);
            } else if (single) {
                __int128 a = 0;
                ROWS(c, a += v[i]);
                sum[0] += a;
            } else {
                ROWS(c, sum[gids[i]] += v[i]);
            }
        }
        return;
    case KN_AGG_MIN:
    case KN_AGG_MAX: {
        bool mx = sl->op == KN_AGG_MAX;
        switch (kn__agg_slot_repr(sl)) {
        case KN__AGG_R_I32: MINMAX(int32_t, st, c, mx); break;
        case KN__AGG_R_I64V: MINMAX(int64_t, st, c, mx); break;
        case KN__AGG_R_F64: MINMAX(double, st, c, mx); break;
        case KN__AGG_R_I128: MINMAX(__int128, st, c, mx); break;
        case KN__AGG_R_U8: MINMAX(uint8_t, st, c, mx); break;
        case KN__AGG_R_STR: minmax_str(t, st, c, n, gids, mx); break;
        case KN__AGG_R_IV: {
            pa_interval *s = st;
            const pa_interval *v = c->data;
            ROWS(c, kn__agg_iv_take(&s[gids[i]], v[i], mx));
            break;
        }
        default: break;
        }
        return;
    }
    }
}

/* ------------------------------------------------------------------ update */

int kn__cpu_agg_update(const kn_ctx *ctx, kn_agg_table *t, const pa_column *keys, const pa_column *args, int64_t n,
                       void *scratch, size_t scratch_bytes, uint32_t *gids, pa_err *err)
{
    const kn_agg_layout *L = &t->L;
    if (n <= 0) {
        kn__agg_publish(t);
        return PA_OK;
    }
    int64_t need;
    kn__cpu_agg_input_bytes(ctx, t, keys, args, n, &need, err);
    if ((L->n_keys > 0 && t->hdr->groups + n > t->cap_groups) || t->hdr->arena_used + need > t->cap_arena ||
        scratch_bytes < kn_agg_update_scratch(L, n))
        return KN__AGG_REFUSE(t, err, "aggregation update: table or scratch too small for %lld rows", (long long)n);
    uint8_t *p = (uint8_t *)(((uintptr_t)scratch + 15) & ~(uintptr_t)15);
    uint8_t *rows = p;
    p += up16((size_t)n * L->stride);
    int64_t *soff = (int64_t *)(void *)p;
    p += up16((size_t)n * L->n_str * 8);
    uint64_t *hashes = (uint64_t *)(void *)p;
    p += up16((size_t)n * 8);
    uint32_t *codes = (uint32_t *)(void *)p;
    p += up16((size_t)n * 4);
    if (!gids)
        gids = (uint32_t *)(void *)p;

    const uint8_t *bases[KN_AGG_MAX_KEYS];
    for (int k = 0; k < L->n_keys; k++)
        if (L->key_str[k] >= 0)
            bases[L->key_str[k]] = keys[k].data;

    bool single = L->n_keys == 0;
    if (single) {
        memset(gids, 0, (size_t)n * 4);
    } else if (t->hdr->dense == 2 ? dense_codes(t, keys, n, codes)
                             : t->hdr->dense == 1 && dense_fit(t, keys, n) && dense_codes(t, keys, n, codes)) {
        uint32_t *map = t->dense_map;
        for (int64_t i = 0; i < n; i++) {
            uint32_t g = map[codes[i]];
            if (__builtin_expect(g == 0, 0)) {
                g = dense_miss(t, keys, i, bases) + 1;
                map[codes[i]] = g;
            }
            gids[i] = g - 1;
        }
    } else {
        t->hdr->dense = 0;
        normalise(L, keys, n, rows, soff);
        size_t st = (size_t)L->stride;
        /* Clustered input (rows of one key next to each other, as lineitem
         * by l_orderkey) repeats the previous row's key: without long
         * strings such a row takes the previous row's hash and group. */
        if (L->n_str == 0) {
            const int nw = L->stride / 8;
            const uint64_t *w = (const uint64_t *)(const void *)rows;
            uint8_t *same = (uint8_t *)codes;   /* codes are unused on this path */
            same[0] = 0;
            hashes[0] = kn__agg_hash_key(L, rows, bases, soff);
            for (int64_t i = 1; i < n; i++) {
                const uint64_t *x = w + i * nw;
                bool eq = true;
                for (int j = 0; j < nw; j++)
                    eq &= x[j] == x[j - nw];
                same[i] = eq;
                hashes[i] = eq ? hashes[i - 1] : kn__agg_hash_key(L, rows + i * st, bases, soff);
            }
            const int64_t pf = 16;
            for (int64_t i = 0; i < n; i++) {
                if (i + pf < n)
                    __builtin_prefetch(&t->index[hashes[i + pf] & t->index_mask]);
                gids[i] = same[i] ? gids[i - 1] : kn__agg_find_or_insert(t, rows + i * st, bases, soff, hashes[i]);
            }
        } else {
            for (int64_t i = 0; i < n; i++)
                hashes[i] = kn__agg_hash_key(L, rows + i * st, bases, soff + i * L->n_str);
            const int64_t pf = 16; /* rows of look-ahead: covers one memory latency */
            for (int64_t i = 0; i < n; i++) {
                if (i + pf < n)
                    __builtin_prefetch(&t->index[hashes[i + pf] & t->index_mask]);
                gids[i] = kn__agg_find_or_insert(t, rows + i * st, bases, soff + i * L->n_str, hashes[i]);
            }
        }
    }
    int64_t ng = t->hdr->groups, few[FEW_GROUPS];
    const int64_t *hist = NULL;
    if (!single && ng <= FEW_GROUPS) {
        few_hist(gids, n, ng, few);
        hist = few;
    }
    for (int s = 0; s < L->n_slots; s++)
        update_slot(t, s, &args[s], n, gids, single, ng, hist);
    kn__agg_publish(t);
    return PA_OK;
}
