/*
 * kn_agg_table.c - group-by tables: layout of the normalised keys and
 * states, carving a table out of one caller block, inserting a group, and
 * moving a table into a larger block (growth by re-building the index).
 * See kn_agg_int.h for the layout and kernels.h for the contracts.
 */
#include "kernels/kn_agg_int.h"

#include <float.h>

static int key_width(pa_type t)
{
    switch (kn__phys_id(t.id)) {
    case PA_TYPE_DECIMAL: return t.precision > PA_DECIMAL64_MAX_PRECISION ? 16 : 8;
    case PA_TYPE_BIGINT:
    case PA_TYPE_DOUBLE:
    case PA_TYPE_VARCHAR: return 8;
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: return 4;
    case PA_TYPE_BOOLEAN: return 1;
    default: return -1;
    }
}

static int repr_width(kn__agg_repr r)
{
    switch (r) {
    case KN__AGG_R_I128:
    case KN__AGG_R_IV:
    case KN__AGG_R_STR: return 16;
    case KN__AGG_R_I32: return 4;
    case KN__AGG_R_U8: return 1;
    default: return 8;
    }
}

int kn_agg_layout_init(kn_agg_layout *L, const pa_type *key_types, int n_keys, const kn_agg_slot *slots,
                       int n_slots, pa_err *err)
{
    if (n_keys < 0 || n_keys > KN_AGG_MAX_KEYS || n_slots < 0 || n_slots > KN_AGG_MAX_SLOTS)
        return pa_error(err, PA_EINVAL, "aggregation: %d keys and %d aggregate slots (at most %d and %d)", n_keys,
                        n_slots, KN_AGG_MAX_KEYS, KN_AGG_MAX_SLOTS);
    memset(L, 0, sizeof *L);
    L->n_keys = n_keys;
    L->dense_ok = n_keys > 0;
    int off = 0;
    /* Fields by decreasing width keep every field naturally aligned. */
    static const int widths[] = {16, 8, 4, 1};
    for (int wi = 0; wi < 4; wi++)
        for (int k = 0; k < n_keys; k++) {
            int w = key_width(key_types[k]);
            if (key_types[k].id == PA_TYPE_INTERVAL)
                return pa_error(err, PA_EUNSUPPORTED, "aggregation: an INTERVAL grouping key is not supported");
            if (w < 0)
                return pa_error(err, PA_EINVAL, "aggregation: key %d has an unknown type", k);
            if (w != widths[wi])
                continue;
            L->key_types[k] = key_types[k];
            L->key_off[k] = off;
            L->key_str[k] = pa_type_is_varlen(key_types[k].id) ? L->n_str++ : -1;
            if (pa_type_is_float(key_types[k].id) || w == 16)
                L->dense_ok = false;
            off += w;
        }
    L->null_off = off;
    off += n_keys;
    L->stride = off == 0 ? 8 : (off + 7) & ~7;
    L->n_slots = n_slots;
    for (int s = 0; s < n_slots; s++) {
        const kn_agg_slot *sl = &slots[s];
        if (sl->type.id == PA_TYPE_INTERVAL && sl->op == KN_AGG_SUM)
            return pa_error(err, PA_EUNSUPPORTED, "aggregation: SUM of an INTERVAL is not supported");
        if (sl->op == KN_AGG_SUM && sl->type.id != PA_TYPE_INTEGER && sl->type.id != PA_TYPE_BIGINT &&
            sl->type.id != PA_TYPE_DECIMAL && !pa_type_is_float(sl->type.id)) {
            char buf[32];
            return pa_error(err, PA_EINVAL, "aggregation: SUM of %s", pa_type_format(sl->type, buf, sizeof buf));
        }
        if ((sl->op == KN_AGG_MIN || sl->op == KN_AGG_MAX) && key_width(sl->type) < 0 &&
            sl->type.id != PA_TYPE_INTERVAL)
            return pa_error(err, PA_EINVAL, "aggregation: MIN/MAX of an unknown type");
        L->slots[s] = *sl;
        L->slot_width[s] = repr_width(kn__agg_slot_repr(sl));
    }
    return PA_OK;
}

static uint64_t index_words(int64_t cap_groups)
{
    uint64_t n = 16;
    while (n < (uint64_t)cap_groups * 2)
        n <<= 1;
    return n;
}

static size_t up16(size_t n) { return (n + 15) & ~(size_t)15; }

size_t kn_agg_table_bytes(const kn_agg_layout *L, int64_t cap_groups, int64_t cap_arena)
{
    size_t g = (size_t)cap_groups;
    size_t n = up16(sizeof(kn_agg_hdr)) + up16(g * (size_t)L->stride) + up16(g * (size_t)L->n_str * 8) +
               up16(g * 8) + up16(index_words(cap_groups) * 8) + up16((size_t)cap_arena);
    for (int s = 0; s < L->n_slots; s++)
        n += up16(g * (size_t)L->slot_width[s]);
    if (L->dense_ok)
        n += (size_t)KN_AGG_DENSE_CODES * 4;
    return n;
}

void kn__agg_init_states(kn_agg_table *t, int64_t from, int64_t to)
{
    for (int s = 0; s < t->L.n_slots; s++) {
        const kn_agg_slot *sl = &t->L.slots[s];
        kn__agg_repr r = kn__agg_slot_repr(sl);
        bool mx = sl->op == KN_AGG_MAX, mn = sl->op == KN_AGG_MIN;
        void *st = t->state[s];
        if (!mx && !mn) {
            memset((uint8_t *)st + from * t->L.slot_width[s], 0, (size_t)(to - from) * t->L.slot_width[s]);
            continue;
        }
        for (int64_t g = from; g < to; g++) {
            switch (r) {
            case KN__AGG_R_I32: ((int32_t *)st)[g] = mx ? INT32_MIN : INT32_MAX; break;
            case KN__AGG_R_I64V: ((int64_t *)st)[g] = mx ? INT64_MIN : INT64_MAX; break;
            case KN__AGG_R_F64: ((double *)st)[g] = mx ? -DBL_MAX * 2 : DBL_MAX * 2; break;
            case KN__AGG_R_U8: ((uint8_t *)st)[g] = mx ? 0 : 1; break;
            case KN__AGG_R_I128: {
                __int128 big = (__int128)(((unsigned __int128)1 << 127) - 1);
                ((__int128 *)st)[g] = mx ? -big - 1 : big;
                break;
            }
            case KN__AGG_R_STR: ((kn__agg_str *)st)[g] = (kn__agg_str){0, 0, 0}; break;
            case KN__AGG_R_IV: ((pa_interval *)st)[g] = kn__agg_iv_empty(mx); break;
            default: break;
            }
        }
    }
}

int kn__agg_table_layout(kn_agg_table *t, const kn_agg_layout *L, void *mem, int64_t cap_groups, int64_t cap_arena,
                         int64_t *sizes, pa_err *err)
{
    if (cap_groups < 1 || cap_groups > UINT32_MAX - 1 || cap_arena < 0 || !mem || !sizes)
        return pa_error(err, PA_EINVAL, "aggregation table: bad capacity %lld groups", (long long)cap_groups);
    memset(t, 0, sizeof *t);
    t->L = *L;
    t->cap_groups = cap_groups;
    t->cap_arena = cap_arena;
    size_t g = (size_t)cap_groups;
    uint8_t *p = mem;
    t->hdr = (kn_agg_hdr *)(void *)p, p += up16(sizeof(kn_agg_hdr));
    t->keys = p, p += up16(g * (size_t)L->stride);
    t->str_off = (int64_t *)(void *)p, p += up16(g * (size_t)L->n_str * 8);
    t->ghash = (uint64_t *)(void *)p, p += up16(g * 8);
    uint64_t words = index_words(cap_groups);
    t->index = (uint64_t *)(void *)p, p += up16(words * 8);
    t->index_mask = words - 1;
    for (int s = 0; s < L->n_slots; s++)
        t->state[s] = p, p += up16(g * (size_t)L->slot_width[s]);
    if (L->dense_ok)
        t->dense_map = (uint32_t *)(void *)p, p += (size_t)KN_AGG_DENSE_CODES * 4;
    t->arena = p;
    t->sizes = sizes;
    return PA_OK;
}

void kn__agg_table_clear(kn_agg_table *t)
{
    memset(t->hdr, 0, sizeof *t->hdr);
    if (t->dense_map) {
        memset(t->dense_map, 0, (size_t)KN_AGG_DENSE_CODES * 4);
        t->hdr->dense = 1;
    }
    memset(t->index, 0, (t->index_mask + 1) * 8);
    kn__agg_init_states(t, 0, t->cap_groups);
    if (t->L.n_keys == 0) {
        uint8_t key[8] = {0};
        kn__agg_insert(t, key, NULL, NULL, kn__agg_hash_key(&t->L, key, NULL, NULL), UINT64_MAX);
    }
    kn__agg_publish(t);
}

int kn__cpu_agg_table_init(const kn_ctx *ctx, kn_agg_table *t, const kn_agg_layout *L, void *mem, int64_t cap_groups,
                           int64_t cap_arena, int64_t *sizes, pa_err *err)
{
    int rc = kn__agg_table_layout(t, L, mem, cap_groups, cap_arena, sizes, err);
    if (rc == PA_OK)
        kn__agg_table_clear(t);
    return rc;
}

uint32_t kn__agg_insert(kn_agg_table *t, const uint8_t *key, const uint8_t *const *bases, const int64_t *soff,
                        uint64_t h, uint64_t pos)
{
    const kn_agg_layout *L = &t->L;
    uint32_t g = (uint32_t)t->hdr->groups++;
    uint8_t *dst = t->keys + (size_t)g * L->stride;
    memcpy(dst, key, (size_t)L->stride);
    for (int k = 0; L->n_str && k < L->n_keys; k++) {
        int j = L->key_str[k];
        if (j < 0)
            continue;
        uint32_t len;
        memcpy(&len, key + L->key_off[k], 4);
        int64_t at = t->hdr->arena_used;
        if (len > 0)
            memcpy(t->arena + at, bases[j] + soff[j], len);
        t->str_off[(size_t)g * L->n_str + j] = at;
        t->hdr->arena_used = at + len;
    }
    t->ghash[g] = h;
    if (pos == UINT64_MAX) {
        pos = h & t->index_mask;
        while (t->index[pos] != 0)
            pos = (pos + 1) & t->index_mask;
    }
    t->index[pos] = ((h >> 32) << 32) | ((uint64_t)g + 1);
    return g;
}

int kn__cpu_agg_table_move(const kn_ctx *ctx, kn_agg_table *dst, const kn_agg_table *src, pa_err *err)
{
    const kn_agg_layout *L = &src->L;
    int64_t ng = src->hdr->groups, na = src->hdr->arena_used;
    if (dst->L.stride != L->stride || dst->L.n_slots != L->n_slots || dst->cap_groups < ng || dst->cap_arena < na)
        return KN__AGG_REFUSE(dst, err, "aggregation table move: destination too small or of another layout");
    size_t g = (size_t)ng;
    memcpy(dst->keys, src->keys, g * (size_t)L->stride);
    if (L->n_str)
        memcpy(dst->str_off, src->str_off, g * (size_t)L->n_str * 8);
    memcpy(dst->ghash, src->ghash, g * 8);
    for (int s = 0; s < L->n_slots; s++)
        memcpy(dst->state[s], src->state[s], g * (size_t)L->slot_width[s]);
    if (na)
        memcpy(dst->arena, src->arena, (size_t)na);
    dst->hdr->dense = src->hdr->dense;
    if (src->dense_map && dst->dense_map)
        memcpy(dst->dense_map, src->dense_map, (size_t)KN_AGG_DENSE_CODES * 4);
    memcpy(dst->hdr->dense_base, src->hdr->dense_base, sizeof dst->hdr->dense_base);
    memcpy(dst->hdr->dense_span, src->hdr->dense_span, sizeof dst->hdr->dense_span);
    memset(dst->index, 0, (dst->index_mask + 1) * 8);
    for (int64_t i = 0; i < ng; i++) {
        uint64_t h = src->ghash[i], pos = h & dst->index_mask;
        while (dst->index[pos] != 0)
            pos = (pos + 1) & dst->index_mask;
        dst->index[pos] = ((h >> 32) << 32) | ((uint64_t)i + 1);
    }
    dst->hdr->groups = ng;
    dst->hdr->arena_used = na;
    kn__agg_publish(dst);
    return PA_OK;
}
