/*
 * kn_agg_int.h - internals of the group-by kernels (kn_agg*.c).
 *
 * Design notes
 * - Normalised key: one row of L.stride bytes per group (and, in the update
 *   scratch, per input row). Fields are placed by decreasing width: 16-byte
 *   DECIMAL(>18), 8-byte values (BIGINT, DOUBLE, DECIMAL, and VARCHAR as
 *   {uint32 length, first 4 bytes zero-padded}), 4-byte values, BOOLEAN,
 *   then one null flag byte per key; padding is zero. A NULL key has a zero
 *   field and flag 1, so equality of keys without long strings is equality
 *   of the stride's 64-bit words. DOUBLE keys are canonical (-0 -> 0, one
 *   NaN) so equal values have equal bytes.
 * - Strings: a row key's string offset points into its input column's bytes,
 *   a group key's into the table arena; strings longer than 4 bytes are
 *   compared with memcmp after the words matched.
 * - Hash: 64-bit, over the key words and then the bytes of long strings. The
 *   index position is the low bits, the tag stored beside the group id the
 *   high 32 bits, so most mismatches cost no key comparison. Load <= 1/2.
 * - Dense path (the cpu loops; the GPU kernels of kn_gpu_agg.cu use the
 *   hash index alone): when every key type allows it, the first chunk fixes per key
 *   a base and a power-of-two span around its value range (VARCHAR: length
 *   <= 1, value = 1 + first byte, or 0 when empty); code 0 is NULL. The
 *   mixed-radix code of a row indexes dense_map (gid + 1). A later chunk that
 *   leaves the ranges turns the path off for good: the hash index is kept up
 *   to date at every insertion, so switching costs nothing.
 * - Block: the header (kn_agg_hdr: groups, arena bytes used, the dense
 *   ranges) first, then keys, string offsets, hashes, index, states, dense
 *   map, arena. Everything a kernel changes is in the block, so the host
 *   struct is constant after kn_agg_table_init and a kernel may take it by
 *   value (sim). A kernel that changes the sizes copies them to the pinned
 *   `sizes` before it returns (kn__agg_publish); inside kernels only the
 *   header counts.
 * - States: one array per slot, group-indexed: int64 counts, __int128 sums of
 *   integer/decimal arguments, double sums, MIN/MAX in the argument's width,
 *   VARCHAR MIN/MAX as kn__agg_str {arena offset, length, set} (superseded bytes
 *   stay in the arena: their total is bounded by the input bytes).
 *   MIN/MAX states start at the type's extreme so updates need no flag; the
 *   result is NULL exactly when the slot's companion count is 0.
 */
#ifndef PISTA_KN_AGG_INT_H
#define PISTA_KN_AGG_INT_H

#include "kernels/kn_ops_int.h"

#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kn__agg_str {
    int64_t off;
    int32_t len;
    int32_t set;
} kn__agg_str;

/* Groups per tile of the GPU partition's stable bucket sort (its scratch
 * holds 2^KN_AGG_PART_BITS counts per tile). */
#define KN__AGG_PART_TILE 2048

/* State representation of a slot. */
typedef enum kn__agg_repr {
    KN__AGG_R_I64,      /* counts */
    KN__AGG_R_I128,     /* integer / decimal sums, DECIMAL(>18) min/max */
    KN__AGG_R_F64,
    KN__AGG_R_I32,
    KN__AGG_R_I64V,     /* BIGINT / DECIMAL(<=18) min/max */
    KN__AGG_R_U8,
    KN__AGG_R_STR,
    KN__AGG_R_IV,       /* INTERVAL min/max: a pa_interval, ordered by pa_interval_norm */
} kn__agg_repr;

static inline PA_HD kn__agg_repr kn__agg_slot_repr(const kn_agg_slot *s)
{
    switch (s->op) {
    case KN_AGG_COUNT_STAR:
    case KN_AGG_COUNT:
    case KN_AGG_EXTERN: return KN__AGG_R_I64;
    case KN_AGG_SUM: return pa_type_is_float(s->type.id) ? KN__AGG_R_F64 : KN__AGG_R_I128;
    default: break;
    }
    switch (kn__phys_id(s->type.id)) {
    case PA_TYPE_BOOLEAN: return KN__AGG_R_U8;
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: return KN__AGG_R_I32;
    case PA_TYPE_DOUBLE: return KN__AGG_R_F64;
    case PA_TYPE_VARCHAR: return KN__AGG_R_STR;
    case PA_TYPE_INTERVAL: return KN__AGG_R_IV;
    case PA_TYPE_DECIMAL: return s->type.precision > PA_DECIMAL64_MAX_PRECISION ? KN__AGG_R_I128 : KN__AGG_R_I64V;
    default: return KN__AGG_R_I64V;
    }
}

/* INTERVAL MIN (mx false) / MAX state s takes v when v is beyond it by
 * the normalised length (a tie keeps the first value seen). The empty
 * states are kn__agg_iv_empty's: beyond every value the other way. */
static inline PA_HD void kn__agg_iv_take(pa_interval *s, pa_interval v, bool mx)
{
    __int128 a = pa_interval_norm(v), b = pa_interval_norm(*s);
    if (mx ? a > b : a < b)
        *s = v;
}
static inline PA_HD pa_interval kn__agg_iv_empty(bool mx)
{
    pa_interval v;
    v.months = mx ? INT32_MIN : INT32_MAX;
    v.days = mx ? INT32_MIN : INT32_MAX;
    v.micros = mx ? INT64_MIN : INT64_MAX;
    return v;
}

/* A 128-bit SUM whose additions overflowed holds this value from then on
 * (it is outside DECIMAL(38)'s range, so emitting it is an overflow
 * error). Only sums of 128-bit inputs can get there: 64-bit values would
 * need 2^64 rows. */
#define KN__AGG_SUM_OVERFLOW ((__int128)((unsigned __int128)1 << 127))
static inline void kn__agg_sum128(__int128 *s, __int128 v)
{
    __int128 r;
    if (*s == KN__AGG_SUM_OVERFLOW || v == KN__AGG_SUM_OVERFLOW || __builtin_add_overflow(*s, v, &r))
        *s = KN__AGG_SUM_OVERFLOW;
    else
        *s = r;
}

/* Hashing: word mix and the murmur3 64-bit finaliser (the GPU kernels of
 * kn_gpu_agg.cu hash with the same functions). */
static inline PA_HD uint64_t kn__agg_mix(uint64_t h, uint64_t w)
{
    h ^= w * 0x87c37b91114253d5ULL;
    h = (h << 31) | (h >> 33);
    return h * 0x4cf5ad432745937fULL + 0x52dce729;
}
static inline PA_HD uint64_t kn__agg_fmix(uint64_t h) { return pa_mix64(h); }
static inline PA_HD uint64_t kn__agg_hash_bytes(uint64_t h, const uint8_t *p, int64_t n)
{
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = kn__agg_mix(h, w);
        p += 8;
        n -= 8;
    }
    if (n > 0) {
        uint64_t w = 0;
        memcpy(&w, p, (size_t)n);
        h = kn__agg_mix(h, w);
    }
    return h;
}

/* Hash of a normalised key whose long strings are at base + soff[j]. */
static inline PA_HD uint64_t kn__agg_hash_key(const kn_agg_layout *L, const uint8_t *key, const uint8_t *const *bases,
                                        const int64_t *soff)
{
    uint64_t h = 0x2545f4914f6cdd1dULL;
    const uint64_t *w = (const uint64_t *)(const void *)key;
    for (int i = 0; i < L->stride / 8; i++)
        h = kn__agg_mix(h, w[i]);
    for (int k = 0; k < L->n_keys; k++) {
        int j = L->key_str[k];
        if (j < 0)
            continue;
        uint32_t len;
        memcpy(&len, key + L->key_off[k], 4);
        if (len > 4)
            h = kn__agg_hash_bytes(h, bases[j] + soff[j] + 4, len - 4);
    }
    return kn__agg_fmix(h);
}

/* Equality of key a (long strings at abase[j] + aoff[j]) and group key b
 * (strings at barena + boff[j]). */
static inline bool kn__agg_key_eq(const kn_agg_layout *L, const uint8_t *a, const uint8_t *const *abase,
                                  const int64_t *aoff, const uint8_t *b, const uint8_t *barena, const int64_t *boff)
{
    const uint64_t *x = (const uint64_t *)(const void *)a, *y = (const uint64_t *)(const void *)b;
    for (int i = 0; i < L->stride / 8; i++)
        if (x[i] != y[i])
            return false;
    for (int k = 0; L->n_str && k < L->n_keys; k++) {
        int j = L->key_str[k];
        if (j < 0)
            continue;
        uint32_t len;
        memcpy(&len, a + L->key_off[k], 4);
        if (len > 4 && memcmp(abase[j] + aoff[j] + 4, barena + boff[j] + 4, len - 4) != 0)
            return false;
    }
    return true;
}

/* Append a group with key (strings at bases[j] + soff[j]) and hash h at
 * index word pos (UINT64_MAX: probe for a free one); copies string bytes
 * to the arena. Returns the new group id. Capacity was checked by the
 * caller. */
uint32_t kn__agg_insert(kn_agg_table *t, const uint8_t *key, const uint8_t *const *bases, const int64_t *soff,
                        uint64_t h, uint64_t pos);

/* Find the group with this key, or insert it. */
static inline uint32_t kn__agg_find_or_insert(kn_agg_table *t, const uint8_t *key, const uint8_t *const *bases,
                                              const int64_t *soff, uint64_t h)
{
    const kn_agg_layout *L = &t->L;
    uint64_t mask = t->index_mask, pos = h & mask, tag = h >> 32;
    for (;;) {
        uint64_t e = t->index[pos];
        if (e == 0)
            return kn__agg_insert(t, key, bases, soff, h, pos);
        if ((e >> 32) == tag) {
            uint32_t g = (uint32_t)e - 1;
            if (kn__agg_key_eq(L, key, bases, soff, t->keys + (size_t)g * L->stride, t->arena,
                           t->str_off + (size_t)g * L->n_str))
                return g;
        }
        pos = (pos + 1) & mask;
    }
}

/* Initialise states of groups [from, to) of every slot. */
void kn__agg_init_states(kn_agg_table *t, int64_t from, int64_t to);

/* Fill *t for a table in mem (checks the capacities; no device memory is
 * touched): the host half of kn_agg_table_init. */
int kn__agg_table_layout(kn_agg_table *t, const kn_agg_layout *L, void *mem, int64_t cap_groups, int64_t cap_arena,
                         int64_t *sizes, pa_err *err);
/* The device half: an empty header, index, dense map and states (and the
 * single group of a table without keys); publishes the sizes. */
void kn__agg_table_clear(kn_agg_table *t);

/* Copy the header's sizes to the pinned sizes (end of a kernel). */
static inline void kn__agg_publish(const kn_agg_table *t)
{
    t->sizes[0] = t->hdr->groups;
    t->sizes[1] = t->hdr->arena_used;
}

/* PA_EINVAL from a kernel that refuses its arguments and leaves table t
 * unchanged; it still publishes t's sizes, as a kernel that ran must. */
#define KN__AGG_REFUSE(t, err, ...) (kn__agg_publish(t), pa_error((err), PA_EINVAL, __VA_ARGS__))

#ifdef __cplusplus
}
#endif

#endif /* PISTA_KN_AGG_INT_H */
