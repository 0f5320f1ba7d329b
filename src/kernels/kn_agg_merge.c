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
    switch (kna_slot_repr(sl)) {
    case KNA_R_I64: ((int64_t *)a)[d] += ((const int64_t *)b)[g]; break;
#define KNA_MM(T)                                                                                     \
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
    case KNA_R_I128: KNA_MM(__int128); break;
    case KNA_R_F64: KNA_MM(double); break;
    case KNA_R_I32: KNA_MM(int32_t); break;
    case KNA_R_I64V: KNA_MM(int64_t); break;
    case KNA_R_U8: KNA_MM(uint8_t); break;
#undef KNA_MM
    case KNA_R_STR: {
        const kna_str *x = &((const kna_str *)b)[g];
        kna_str *y = &((kna_str *)a)[d];
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
            int64_t at = dst->sizes[1];
            memcpy(dst->arena + at, src->arena + x->off, (size_t)x->len);
            dst->sizes[1] = at + x->len;
            *y = (kna_str){at, x->len, 1};
        }
        break;
    }
    }
}

/* combine() for groups [b0, b0 + m) of src into dst's groups d[0, m). */
static void combine_block(kn_agg_table *dst, const kn_agg_table *src, int s, const uint32_t *d, int64_t b0,
                          int64_t m)
{
    const kn_agg_slot *sl = &dst->L.slots[s];
    bool mn = sl->op == KN_AGG_MIN, mx = sl->op == KN_AGG_MAX;
#define KNA_BLK(T)                                                                                    \
    do {                                                                                              \
        const T *x_ = (const T *)src->state[s] + b0;                                                  \
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
    switch (kna_slot_repr(sl)) {
    case KNA_R_I64: {
        const int64_t *x = (const int64_t *)src->state[s] + b0;
        int64_t *y = dst->state[s];
        for (int64_t j = 0; j < m; j++)
            y[d[j]] += x[j];
        break;
    }
    case KNA_R_I128: KNA_BLK(__int128); break;
    case KNA_R_F64: KNA_BLK(double); break;
    case KNA_R_I32: KNA_BLK(int32_t); break;
    case KNA_R_I64V: KNA_BLK(int64_t); break;
    case KNA_R_U8: KNA_BLK(uint8_t); break;
    case KNA_R_STR:
        for (int64_t j = 0; j < m; j++)
            combine(dst, src, s, d[j], b0 + j);
        break;
    }
#undef KNA_BLK
}

int kn_agg_merge(kn_ctx *ctx, kn_agg_table *dst, const kn_agg_table *src, const uint32_t *key0_map,
                 uint32_t *gid_map, pa_err *err)
{
    const kn_agg_layout *L = &dst->L;
    int64_t ng = src->sizes[0];
    if (src->L.stride != L->stride || src->L.n_slots != L->n_slots || src->L.n_keys != L->n_keys)
        return pa_error(err, PA_EINVAL, "aggregation merge: tables of different layouts");
    if (dst->sizes[0] + ng > dst->cap_groups || dst->sizes[1] + src->sizes[1] > dst->cap_arena)
        return pa_error(err, PA_EINVAL, "aggregation merge: destination too small for %lld groups",
                        (long long)ng);
    if (key0_map && (L->n_keys < 1 || L->key_types[0].id != PA_TYPE_INTEGER))
        return pa_error(err, PA_EINVAL, "aggregation merge: key 0 is not an INTEGER group id");
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
    for (int64_t b0 = 0; b0 < ng; b0 += MB) {
        int64_t m = ng - b0 < MB ? ng - b0 : MB;
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
                h = kna_hash_key(L, key, bases, soff);
            } else if (g + PF < ng) {
                __builtin_prefetch(&dst->index[src->ghash[g + PF] & mask]);
            }
            dmap[j] = L->n_keys == 0 ? 0 : kna_find_or_insert(dst, key, bases, soff, h);
        }
        for (int s = 0; s < L->n_slots; s++)
            combine_block(dst, src, s, dmap, b0, m);
        if (gid_map)
            memcpy(gid_map + b0, dmap, (size_t)m * sizeof *dmap);
    }
    return PA_OK;
}

int kn_agg_count_distinct(kn_ctx *ctx, kn_agg_table *t, int slot, const kn_agg_table *pairs, pa_err *err)
{
    const kn_agg_layout *P = &pairs->L;
    if (slot < 0 || slot >= t->L.n_slots || t->L.slots[slot].op != KN_AGG_EXTERN || P->n_keys != 2 ||
        P->key_types[0].id != PA_TYPE_INTEGER)
        return pa_error(err, PA_EINVAL, "count distinct: bad slot or pair table");
    int64_t *cnt = t->state[slot], ng = t->sizes[0];
    for (int64_t g = 0; g < pairs->sizes[0]; g++) {
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
