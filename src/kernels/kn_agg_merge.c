/*
 * kn_agg_merge.c - folding one group-by table into another (per-worker
 * partials into the global table; COUNT(DISTINCT) pair tables with their
 * group ids rewritten), and counting distinct pairs per group.
 */
#include "kernels/kn_agg_int.h"

/* Combine src's state of group g into dst's state of group d, slot s. */
static void combine(kn_agg_table *dst, const kn_agg_table *src, int s, uint32_t d, int64_t g)
{
    const kn_agg_slot *sl = &dst->L.slots[s];
    void *a = dst->state[s];
    const void *b = src->state[s];
    bool mn = sl->op == KN_AGG_MIN, mx = sl->op == KN_AGG_MAX;
    switch (kn__agg_slot_repr(sl)) {
    case KN__AGG_R_I64: ((int64_t *)a)[d] += ((const int64_t *)b)[g]; break;
#define COMBINE1(T)                                                                                     \
    do {                                                                                              \
        T x = ((const T *)b)[g], *y = &((T *)a)[d];                                                   \
        if (mn) {                                                                                     \
            if (x < *y) *y = x;                                                                       \
        } else if (mx) {                                                                              \
            if (x > *y) *y = x;                                                                       \
        } else {                                                                                      \
            *y += x;                                                                                  \
        }                                                                                             \
    } while (0)
    case KN__AGG_R_I128:
        if (!mn && !mx) /* sums: overflow checked */
            kn__agg_sum128(&((__int128 *)a)[d], ((const __int128 *)b)[g]);
        else
            COMBINE1(__int128);
        break;
    case KN__AGG_R_F64: COMBINE1(double); break;
    case KN__AGG_R_I32: COMBINE1(int32_t); break;
    case KN__AGG_R_I64V: COMBINE1(int64_t); break;
    case KN__AGG_R_IV: kn__agg_iv_take(&((pa_interval *)a)[d], ((const pa_interval *)b)[g], mx); break;
    case KN__AGG_R_U8: COMBINE1(uint8_t); break;
#undef COMBINE1
    case KN__AGG_R_STR: {
        const kn__agg_str *x = &((const kn__agg_str *)b)[g];
        kn__agg_str *y = &((kn__agg_str *)a)[d];
        if (!x->set)
            break;
        bool take = !y->set;
        if (!take) {
            int32_t m = x->len < y->len ? x->len : y->len;
            int cmp = memcmp(src->arena + x->off, dst->arena + y->off, (size_t)m);
            if (cmp == 0)
                cmp = (x->len > y->len) - (x->len < y->len);
            take = mx ? cmp > 0 : cmp < 0;
        }
        if (take) {
            int64_t at = dst->hdr->arena_used;
            memcpy(dst->arena + at, src->arena + x->off, (size_t)x->len);
            dst->hdr->arena_used = at + x->len;
            *y = (kn__agg_str){at, x->len, 1};
        }
        break;
    }
    }
}

/* combine() for src groups [g0, g0 + m) into dst's groups d[0, m). */
static void combine_block(kn_agg_table *dst, const kn_agg_table *src, int s, const uint32_t *d, int64_t g0,
                          int64_t m)
{
    const kn_agg_slot *sl = &dst->L.slots[s];
    bool mn = sl->op == KN_AGG_MIN, mx = sl->op == KN_AGG_MAX;
#define COMBINE_BLOCK(T)                                                                                    \
    do {                                                                                              \
        const T *x_ = (const T *)src->state[s] + g0;                                                  \
        T *y_ = (T *)dst->state[s];                                                                   \
        if (mn) {                                                                                     \
            for (int64_t j = 0; j < m; j++)                                                           \
                if (x_[j] < y_[d[j]])                                                                 \
                    y_[d[j]] = x_[j];                                                                 \
        } else if (mx) {                                                                              \
            for (int64_t j = 0; j < m; j++)                                                           \
                if (x_[j] > y_[d[j]])                                                                 \
                    y_[d[j]] = x_[j];                                                                 \
        } else {                                                                                      \
            for (int64_t j = 0; j < m; j++)                                                           \
                y_[d[j]] += x_[j];                                                                    \
        }                                                                                             \
    } while (0)
    switch (kn__agg_slot_repr(sl)) {
    case KN__AGG_R_I64: {
        const int64_t *x = (const int64_t *)src->state[s] + g0;
        int64_t *y = dst->state[s];
        for (int64_t j = 0; j < m; j++)
            y[d[j]] += x[j];
        break;
    }
    case KN__AGG_R_I128:
        if (!mn && !mx) { /* sums: overflow checked */
            const __int128 *x = (const __int128 *)src->state[s] + g0;
            __int128 *y = dst->state[s];
            for (int64_t j = 0; j < m; j++)
                kn__agg_sum128(&y[d[j]], x[j]);
        } else
            COMBINE_BLOCK(__int128);
        break;
    case KN__AGG_R_F64: COMBINE_BLOCK(double); break;
    case KN__AGG_R_I32: COMBINE_BLOCK(int32_t); break;
    case KN__AGG_R_I64V: COMBINE_BLOCK(int64_t); break;
    case KN__AGG_R_IV: {
        const pa_interval *x = (const pa_interval *)src->state[s] + g0;
        pa_interval *y = dst->state[s];
        for (int64_t j = 0; j < m; j++)
            kn__agg_iv_take(&y[d[j]], x[j], mx);
        break;
    }
    case KN__AGG_R_U8: COMBINE_BLOCK(uint8_t); break;
    case KN__AGG_R_STR:
        for (int64_t j = 0; j < m; j++)
            combine(dst, src, s, d[j], g0 + j);
        break;
    }
#undef COMBINE_BLOCK
}

/* Fold src groups [first, first + n) into dst. */
static int merge(kn_agg_table *dst, const kn_agg_table *src, int64_t first, int64_t n, const uint32_t *key0_map,
                 uint32_t *gid_map, pa_err *err)
{
    const kn_agg_layout *L = &dst->L;
    if (src->L.stride != L->stride || src->L.n_slots != L->n_slots || src->L.n_keys != L->n_keys)
        return KN__AGG_REFUSE(dst, err, "aggregation merge: tables of different layouts");
    if (key0_map && (L->n_keys < 1 || L->key_types[0].id != PA_TYPE_INTEGER))
        return KN__AGG_REFUSE(dst, err, "aggregation merge: key 0 is not an INTEGER group id");
    const uint8_t *bases[KN_AGG_MAX_KEYS];
    for (int j = 0; j < L->n_str; j++)
        bases[j] = src->arena;
    uint64_t tmp[(KN_AGG_MAX_KEYS * 17 + 8) / 8];
    /* Blocks of MB groups: find or insert each group (prefetching the index
     * word of a group PF ahead), then fold the block slot by slot so each
     * slot's loop is one type with no per-group switch. */
    enum { MB = 1024, PF = 16 };
    uint32_t dmap[MB];
    const uint64_t mask = dst->index_mask;
    const int64_t end = first + n;
    for (int64_t b0 = first; b0 < end; b0 += MB) {
        int64_t m = end - b0 < MB ? end - b0 : MB;
        for (int64_t j = 0; j < m; j++) {
            int64_t g = b0 + j;
            const uint8_t *key = src->keys + (size_t)g * L->stride;
            const int64_t *soff = src->str_off + (size_t)g * L->n_str;
            uint64_t h = src->ghash[g];
            if (key0_map) {
                memcpy(tmp, key, (size_t)L->stride);
                int32_t old;
                memcpy(&old, (uint8_t *)tmp + L->key_off[0], 4);
                int32_t nw = (int32_t)key0_map[old];
                memcpy((uint8_t *)tmp + L->key_off[0], &nw, 4);
                key = (const uint8_t *)tmp;
                h = kn__agg_hash_key(L, key, bases, soff);
            } else if (g + PF < end) {
                __builtin_prefetch(&dst->index[src->ghash[g + PF] & mask]);
            }
            dmap[j] = L->n_keys == 0 ? 0 : kn__agg_find_or_insert(dst, key, bases, soff, h);
        }
        for (int s = 0; s < L->n_slots; s++)
            combine_block(dst, src, s, dmap, b0, m);
        if (gid_map)
            memcpy(gid_map + (b0 - first), dmap, (size_t)m * sizeof *dmap);
    }
    kn__agg_publish(dst);
    return PA_OK;
}

int kn__cpu_agg_merge(const kn_ctx *ctx, kn_agg_table *dst, const kn_agg_table *src, const uint32_t *key0_map,
                      uint32_t *gid_map, pa_err *err)
{
    int64_t ng = src->hdr->groups;
    if (dst->hdr->groups + ng > dst->cap_groups || dst->hdr->arena_used + src->hdr->arena_used > dst->cap_arena)
        return KN__AGG_REFUSE(dst, err, "aggregation merge: destination too small for %lld groups", (long long)ng);
    return merge(dst, src, 0, ng, key0_map, gid_map, err);
}

/* Arena bytes group g holds: its string keys and VARCHAR MIN/MAX states. */
static int64_t group_arena(const kn_agg_table *t, int64_t g)
{
    const kn_agg_layout *L = &t->L;
    int64_t b = 0;
    for (int k = 0; L->n_str && k < L->n_keys; k++) {
        if (L->key_str[k] < 0)
            continue;
        uint32_t len;
        memcpy(&len, t->keys + (size_t)g * L->stride + L->key_off[k], 4);
        b += len;
    }
    for (int s = 0; s < L->n_slots; s++)
        if (kn__agg_slot_repr(&L->slots[s]) == KN__AGG_R_STR) {
            const kn__agg_str *x = &((const kn__agg_str *)t->state[s])[g];
            b += x->set ? x->len : 0;
        }
    return b;
}

size_t kn_agg_partition_scratch(const kn_agg_layout *L, int64_t groups)
{
    size_t w = (size_t)L->stride > 16 ? (size_t)L->stride : 16;
    if ((size_t)L->n_str * 8 > w)
        w = (size_t)L->n_str * 8;
    size_t g = (size_t)(groups > 0 ? groups : 1);
    /* positions and a copy of the widest array; then the GPU kernels' bucket
     * counts per tile of KN__AGG_PART_TILE groups (kn_gpu_agg.cu) */
    return g * (w + 4) + 16 + ((g + KN__AGG_PART_TILE - 1) / KN__AGG_PART_TILE + 1) * (1 << KN_AGG_PART_BITS) * 8;
}

/* a[pos[g]] = a[g] for the n elements of w bytes of a, through tmp. */
static void permute(void *a, int64_t n, size_t w, const uint32_t *pos, uint8_t *tmp)
{
    const uint8_t *x = a;
    switch (w) {
    case 4:
        for (int64_t g = 0; g < n; g++)
            memcpy(tmp + (size_t)pos[g] * 4, x + (size_t)g * 4, 4);
        break;
    case 8:
        for (int64_t g = 0; g < n; g++)
            memcpy(tmp + (size_t)pos[g] * 8, x + (size_t)g * 8, 8);
        break;
    case 16:
        for (int64_t g = 0; g < n; g++)
            memcpy(tmp + (size_t)pos[g] * 16, x + (size_t)g * 16, 16);
        break;
    default:
        for (int64_t g = 0; g < n; g++)
            memcpy(tmp + (size_t)pos[g] * w, x + (size_t)g * w, w);
        break;
    }
    memcpy(a, tmp, (size_t)n * w);
}

int kn__cpu_agg_partition(const kn_ctx *ctx, kn_agg_table *t, void *scratch, size_t scratch_bytes, int64_t *start,
                          int64_t *arena, pa_err *err)
{
    enum { NB = 1 << KN_AGG_PART_BITS, SH = 64 - KN_AGG_PART_BITS };
    const kn_agg_layout *L = &t->L;
    int64_t ng = t->hdr->groups;
    if (!start || !scratch || scratch_bytes < kn_agg_partition_scratch(L, ng))
        return pa_error(err, PA_EINVAL, "aggregation partition: no output array or scratch too small");
    uint8_t *p = (uint8_t *)(((uintptr_t)scratch + 15) & ~(uintptr_t)15);
    uint32_t *pos = (uint32_t *)(void *)p;
    uint8_t *tmp = p + (((size_t)ng * 4 + 15) & ~(size_t)15);
    int64_t count[NB];
    memset(count, 0, sizeof count);
    if (arena)
        memset(arena, 0, NB * sizeof *arena);
    bool strs = L->n_str > 0;
    for (int s = 0; s < L->n_slots; s++)
        strs |= kn__agg_slot_repr(&L->slots[s]) == KN__AGG_R_STR;
    for (int64_t g = 0; g < ng; g++) {
        int b = (int)(t->ghash[g] >> SH);
        count[b]++;
        if (arena && strs)
            arena[b] += group_arena(t, g);
    }
    int64_t at[NB];
    start[0] = 0;
    for (int b = 0; b < NB; b++) {
        at[b] = start[b];
        start[b + 1] = start[b] + count[b];
    }
    for (int64_t g = 0; g < ng; g++)
        pos[g] = (uint32_t)at[t->ghash[g] >> SH]++;
    /* Scatter every group-indexed array into bucket order: reads run
     * straight through, writes go to one stream per bucket. */
    permute(t->keys, ng, (size_t)L->stride, pos, tmp);
    if (L->n_str)
        permute(t->str_off, ng, (size_t)L->n_str * 8, pos, tmp);
    permute(t->ghash, ng, 8, pos, tmp);
    for (int s = 0; s < L->n_slots; s++)
        permute(t->state[s], ng, (size_t)L->slot_width[s], pos, tmp);
    t->hdr->dense = 0;
    return PA_OK;
}

int kn__cpu_agg_merge_range(const kn_ctx *ctx, kn_agg_table *dst, const kn_agg_table *src, int64_t first, int64_t n,
                            pa_err *err)
{
    if (first < 0 || n < 0 || first + n > src->hdr->groups)
        return KN__AGG_REFUSE(dst, err, "aggregation merge: groups %lld+%lld out of range", (long long)first,
                              (long long)n);
    if (dst->hdr->groups + n > dst->cap_groups)
        return KN__AGG_REFUSE(dst, err, "aggregation merge: destination too small for %lld groups", (long long)n);
    int64_t bytes = 0;
    if (src->hdr->arena_used)
        for (int64_t g = first; g < first + n; g++)
            bytes += group_arena(src, g);
    if (dst->hdr->arena_used + bytes > dst->cap_arena)
        return KN__AGG_REFUSE(dst, err, "aggregation merge: destination arena too small for %lld bytes",
                              (long long)bytes);
    return merge(dst, src, first, n, NULL, NULL, err);
}

int kn__cpu_agg_count_distinct(const kn_ctx *ctx, kn_agg_table *t, int slot, const kn_agg_table *pairs, pa_err *err)
{
    const kn_agg_layout *P = &pairs->L;
    if (slot < 0 || slot >= t->L.n_slots || t->L.slots[slot].op != KN_AGG_EXTERN || P->n_keys != 2 ||
        P->key_types[0].id != PA_TYPE_INTEGER)
        return pa_error(err, PA_EINVAL, "count distinct: bad slot or pair table");
    int64_t *cnt = t->state[slot], ng = t->hdr->groups;
    for (int64_t g = 0; g < pairs->hdr->groups; g++) {
        const uint8_t *key = pairs->keys + (size_t)g * P->stride;
        if (key[P->null_off + 1])
            continue;
        int32_t gid;
        memcpy(&gid, key + P->key_off[0], 4);
        if (gid < 0 || gid >= ng)
            return pa_error(err, PA_EINVAL, "count distinct: group id %d out of range", gid);
        cnt[gid]++;
    }
    return PA_OK;
}
