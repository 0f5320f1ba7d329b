/*
 * kn_join.c - hash-join table: layout and build (the probe is in
 * kn_join_probe.c; the contract is in kernels.h "hash join").
 *
 * Layout (one allocation, each part 64-byte aligned): slots, next[rows],
 * null_rows[rows], the GPU build's counters (kn_gpu_join.cu), the filter. Slots are linear-probed from hash & (n_slots - 1):
 *  - packed keys: {uint64 key, uint32 row + 1, pad} (16 bytes), key equality
 *    is one compare;
 *  - otherwise:   uint64 (hash >> 32) << 32 | (row + 1), the high half a tag
 *    that skips most unequal keys without touching the build columns.
 * Row + 1 = 0 marks an empty slot, so a zeroed array is an empty table. A
 * slot's row is the head of its key's chain; duplicates are prepended
 * (next[row] = the previous head), so matches come out newest first.
 *
 * Inserts are lock-free (compare-and-swap on the slot, as a GPU build does
 * with atomicCAS), so several kn_join_build_rows calls may fill one table at
 * once; a chain's order then depends on which insert came first, which no
 * join result depends on (SQL gives its rows no order).
 */
#include "kernels/kn_hash_int.h"

#include <sched.h>

static uint64_t slots_for(int64_t rows)
{
    uint64_t s = 16;
    while (s < 2 * (uint64_t)rows)
        s <<= 1;
    return s;
}

/* Filter bits for a table of rows rows; 0 = no filter. */
static uint64_t filter_bits(int64_t rows)
{
    uint64_t b = 512;
    while (b < 16 * (uint64_t)rows)
        b <<= 1;
    return b <= KN__FILTER_MAX_BITS ? b : 0;
}

size_t kn_join_table_bytes(int64_t build_rows, const pa_type *build_types, const pa_type *probe_types,
                           int n_keys)
{
    size_t sb = kn__packable(build_types, probe_types, n_keys) ? sizeof(kn__pslot) : sizeof(uint64_t);
    return kn__align64(slots_for(build_rows) * sb) + 2 * kn__align64((size_t)build_rows * sizeof(int32_t)) +
           KN__JOIN_COUNTERS_BYTES + filter_bits(build_rows) / 8;
}

int kn_join_table_init(kn_join_table *t, void *mem, size_t bytes, int64_t build_rows, const pa_column *build_keys,
                       const pa_type *probe_types, int n_keys, kn_join_build_info *info, pa_err *err)
{
    if (n_keys < 1 || n_keys > KN_JOIN_MAX_KEYS)
        return pa_error(err, PA_EUNSUPPORTED, "hash join on %d key columns (1..%d supported)", n_keys,
                        KN_JOIN_MAX_KEYS);
    if (build_rows < 0 || build_rows > INT32_MAX - 1)
        return pa_error(err, PA_EUNSUPPORTED, "hash join build side of %lld rows (at most %d)",
                        (long long)build_rows, INT32_MAX - 1);
    pa_type bt[KN_JOIN_MAX_KEYS];
    for (int k = 0; k < n_keys; k++) {
        bt[k] = build_keys[k].type;
        if (!kn_join_key_types_ok(bt[k], probe_types[k])) {
            char x[48], y[48];
            bool iv = bt[k].id == PA_TYPE_INTERVAL || probe_types[k].id == PA_TYPE_INTERVAL;
            return pa_error(err, iv ? PA_EUNSUPPORTED : PA_EINVAL, "join key %d: %s cannot be compared with %s", k,
                            pa_type_format(bt[k], x, sizeof x), pa_type_format(probe_types[k], y, sizeof y));
        }
    }
    size_t need = kn_join_table_bytes(build_rows, bt, probe_types, n_keys);
    if (bytes < need)
        return pa_error(err, PA_EINVAL, "hash join table needs %zu bytes, got %zu", need, bytes);
    memset(t, 0, sizeof *t);
    t->build_rows = build_rows;
    t->n_slots = slots_for(build_rows);
    t->packed = kn__packable(bt, probe_types, n_keys);
    t->n_keys = n_keys;
    memcpy(t->keys, build_keys, (size_t)n_keys * sizeof *build_keys);
    size_t sb = t->packed ? sizeof(kn__pslot) : sizeof(uint64_t);
    uint8_t *p = mem;
    t->slots = p;
    p += kn__align64(t->n_slots * sb);
    t->next = (int32_t *)p;
    p += kn__align64((size_t)build_rows * sizeof(int32_t));
    t->null_rows = (int32_t *)p;
    p += kn__align64((size_t)build_rows * sizeof(int32_t));
    t->counters = (uint64_t *)p;
    p += KN__JOIN_COUNTERS_BYTES;
    uint64_t fb = filter_bits(build_rows);
    if (fb) {
        t->filter = (uint64_t *)p;
        t->filter_shift = 64 - __builtin_ctzll(fb);
    }
    t->info = info;
    return PA_OK;
}

/* ------------------------------------------------------------- key helpers */

static inline uint64_t pack_row(const pa_column *c, int n, int64_t r)
{
    if (n == 1)
        return (uint64_t)kn__ld_int(&c[0], kn__key_class(c[0].type), r);
    return (uint64_t)(uint32_t)kn__ld_int(&c[0], kn__key_class(c[0].type), r) |
           (uint64_t)(uint32_t)kn__ld_int(&c[1], kn__key_class(c[1].type), r) << 32;
}

static inline bool row_valid(const pa_column *c, int n, int64_t r)
{
    for (int k = 0; k < n; k++)
        if (!pa_column_valid(&c[k], r))
            return false;
    return true;
}

/* All n packed keys of columns c, one vectorisable loop per column class. */
void kn__pack_keys(const pa_column *c, int n, int64_t rows, uint64_t *out)
{
    for (int k = 0; k < n; k++) {
        int shift = n == 1 ? 0 : 32 * k;
        uint64_t keep = n == 1 ? ~0ull : 0xffffffffull;
        switch (kn__key_class(c[k].type)) {
        case KN__KC_I8: {
            const uint8_t *v = c[k].data;
            for (int64_t i = 0; i < rows; i++)
                out[i] = (k ? out[i] : 0) | ((uint64_t)v[i] & keep) << shift;
            break;
        }
        case KN__KC_I32: {
            const int32_t *v = c[k].data;
            for (int64_t i = 0; i < rows; i++)
                out[i] = (k ? out[i] : 0) | ((uint64_t)(int64_t)v[i] & keep) << shift;
            break;
        }
        default: {
            const int64_t *v = c[k].data;
            for (int64_t i = 0; i < rows; i++)
                out[i] = (uint64_t)v[i];
            break;
        }
        }
    }
}

bool kn__keys_validity(const pa_column *c, int n, int64_t rows, uint8_t *out)
{
    bool any = false;
    size_t nb = (size_t)(rows + 7) / 8;
    for (int k = 0; k < n; k++) {
        if (!c[k].validity)
            continue;
        if (!any)
            memcpy(out, c[k].validity, nb);
        else
            for (size_t b = 0; b < nb; b++)
                out[b] &= c[k].validity[b];
        any = true;
    }
    return any;
}

/* ------------------------------------------------------------------ build */

int kn__cpu_join_build_begin(const kn_ctx *ctx, kn_join_table *t, uint64_t slot_lo, uint64_t slot_hi, pa_err *err)
{
    if (slot_lo > slot_hi || slot_hi > t->n_slots)
        return pa_error(err, PA_EINVAL, "join table slots [%llu, %llu) of %llu", (unsigned long long)slot_lo,
                        (unsigned long long)slot_hi, (unsigned long long)t->n_slots);
    size_t sb = t->packed ? sizeof(kn__pslot) : sizeof(uint64_t);
    memset((uint8_t *)t->slots + slot_lo * sb, 0, (slot_hi - slot_lo) * sb);
    if (slot_lo == 0) {
        if (t->filter)
            memset(t->filter, 0, ((size_t)1 << (64 - t->filter_shift)) / 8);
        t->info->distinct_keys = 0;
        t->info->null_key_rows = 0;
        t->info->unique = 1;
    }
    return PA_OK;
}

/* row1 of a packed slot once its key is readable. */
static inline uint32_t pslot_head(const kn__pslot *s)
{
    uint32_t h = __atomic_load_n(&s->row1, __ATOMIC_ACQUIRE);
    for (unsigned spins = 0; h == KN__SLOT_BUSY; spins++) {
        if (spins > 64)
            sched_yield();   /* the claimer lost its core between two stores */
        h = __atomic_load_n(&s->row1, __ATOMIC_ACQUIRE);
    }
    return h;
}

/* Insert row r (key valid) into a packed table; true when its key was new.
 * A new key claims the empty slot (0 -> BUSY), writes the key, then
 * publishes the row; an equal key prepends r to the slot's chain with a CAS
 * of the head, next[r] written before the head that makes it reachable. */
static inline bool insert_packed(kn_join_table *t, uint64_t pos, uint64_t mask, uint64_t key, int64_t r)
{
    kn__pslot *slots = t->slots;
    uint32_t me = (uint32_t)r + 1;
    for (;; pos = (pos + 1) & mask) {
        kn__pslot *s = &slots[pos];
        uint32_t h = __atomic_load_n(&s->row1, __ATOMIC_ACQUIRE);
        if (h == 0) {
            if (__atomic_compare_exchange_n(&s->row1, &h, KN__SLOT_BUSY, false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                s->key = key;
                t->next[r] = -1;
                __atomic_store_n(&s->row1, me, __ATOMIC_RELEASE);
                return true;
            }
        }
        if (h == KN__SLOT_BUSY)
            h = pslot_head(s);
        if (s->key != key)
            continue;
        do
            t->next[r] = (int32_t)(h - 1);
        while (!__atomic_compare_exchange_n(&s->row1, &h, me, false, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE));
        return false;
    }
}

/* The same for a tagged table: the slot word (tag << 32 | row + 1) goes in
 * with one CAS; a slot's tag and key never change once set, so a failed CAS
 * on a used slot only retries the prepend. */
static inline bool insert_tagged(kn_join_table *t, const kn__keypair *kp, int n, uint64_t pos, uint64_t mask,
                                 uint64_t hash, int64_t r)
{
    uint64_t *slots = t->slots;
    uint64_t tag = hash >> 32, me = tag << 32 | (uint64_t)(r + 1);
    for (;; pos = (pos + 1) & mask) {
        uint64_t s = __atomic_load_n(&slots[pos], __ATOMIC_ACQUIRE);
        if (s == 0) {
            t->next[r] = -1;
            if (__atomic_compare_exchange_n(&slots[pos], &s, me, false, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
                return true;
        }
        if ((s >> 32) != tag || !kn__key_eq(kp, n, (int32_t)(uint32_t)s - 1, r))
            continue;
        do
            t->next[r] = (int32_t)(uint32_t)s - 1;
        while (!__atomic_compare_exchange_n(&slots[pos], &s, me, false, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE));
        return false;
    }
}

int kn__join_rows_check(const kn_join_table *t, int64_t lo, int64_t hi, kn__keypair *kp, pa_err *err)
{
    if (lo < 0 || hi > t->build_rows || lo > hi)
        return pa_error(err, PA_EINVAL, "join build of rows [%lld, %lld) of %lld", (long long)lo, (long long)hi,
                        (long long)t->build_rows);
    return kn__keypairs(t->keys, t->keys, t->n_keys, kp, err);
}

int kn__cpu_join_build_rows(const kn_ctx *ctx, kn_join_table *t, const uint64_t *hashes, int64_t lo, int64_t hi,
                            pa_err *err)
{
    kn__keypair kp[KN_JOIN_MAX_KEYS];
    int rc = kn__join_rows_check(t, lo, hi, kp, err);
    if (rc != PA_OK)
        return rc;
    const pa_column *keys = t->keys;
    int n = t->n_keys;
    uint64_t mask = t->n_slots - 1;
    int64_t distinct = 0;
    bool dup = false;
    size_t sb = t->packed ? sizeof(kn__pslot) : sizeof(uint64_t);
    for (int64_t r = lo; r < hi; r++) {
        if (r + KN__PREFETCH < hi)
            __builtin_prefetch((const uint8_t *)t->slots + (hashes[r + KN__PREFETCH] & mask) * sb, 1);
        if (!row_valid(keys, n, r)) {
            t->next[r] = -1;
            t->null_rows[__atomic_fetch_add(&t->info->null_key_rows, 1, __ATOMIC_RELAXED)] = (int32_t)r;
            continue;
        }
        uint64_t pos = hashes[r] & mask;
        if (t->filter) {
            uint64_t fb = kn__filter_bit(hashes[r], t->filter_shift);
            uint64_t bit = 1ull << (fb & 63);
            if (!(__atomic_load_n(&t->filter[fb >> 6], __ATOMIC_RELAXED) & bit))
                __atomic_fetch_or(&t->filter[fb >> 6], bit, __ATOMIC_RELAXED);
        }
        bool fresh = t->packed ? insert_packed(t, pos, mask, pack_row(keys, n, r), r)
                               : insert_tagged(t, kp, n, pos, mask, hashes[r], r);
        distinct += fresh;
        dup |= !fresh;
    }
    __atomic_fetch_add(&t->info->distinct_keys, distinct, __ATOMIC_RELAXED);
    if (dup)
        __atomic_store_n(&t->info->unique, 0, __ATOMIC_RELAXED);
    return PA_OK;
}

int kn__cpu_join_build(const kn_ctx *ctx, kn_join_table *t, const uint64_t *hashes, pa_err *err)
{
    int rc = kn__cpu_join_build_begin(ctx, t, 0, t->n_slots, err);
    return rc == PA_OK ? kn__cpu_join_build_rows(ctx, t, hashes, 0, t->build_rows, err) : rc;
}
