/*
 * kn_join.c - hash-join table: layout and build (the probe is in
 * kn_join_probe.c; the contract is in kernels.h "hash join").
 *
 * Layout (one allocation, each part 64-byte aligned): slots, next[rows],
 * null_rows[rows]. Slots are linear-probed from hash & (n_slots - 1):
 *  - packed keys: {uint64 key, uint32 row + 1, pad} (16 bytes), key equality
 *    is one compare;
 *  - otherwise:   uint64 (hash >> 32) << 32 | (row + 1), the high half a tag
 *    that skips most unequal keys without touching the build columns.
 * Row + 1 = 0 marks an empty slot, so a zeroed array is an empty table. A
 * slot's row is the head of its key's chain; duplicates are prepended
 * (next[row] = the previous head), so matches come out newest first.
 */
#include "kernels/kn_hash_int.h"

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
           filter_bits(build_rows) / 8;
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
            return pa_error(err, PA_EINVAL, "join key %d: %s cannot be compared with %s", k,
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

int kn__cpu_join_build_rows(const kn_ctx *ctx, kn_join_table *t, const uint64_t *hashes, int64_t lo, int64_t hi,
                            pa_err *err)
{
    if (lo < 0 || hi > t->build_rows || lo > hi)
        return pa_error(err, PA_EINVAL, "join build of rows [%lld, %lld) of %lld", (long long)lo, (long long)hi,
                        (long long)t->build_rows);
    kn__keypair kp[KN_JOIN_MAX_KEYS];
    int rc = kn__keypairs(t->keys, t->keys, t->n_keys, kp, err);
    if (rc != PA_OK)
        return rc;
    const pa_column *keys = t->keys;
    int n = t->n_keys;
    uint64_t mask = t->n_slots - 1;
    int64_t distinct = 0, nulls = t->info->null_key_rows;
    bool dup = false;
    size_t sb = t->packed ? sizeof(kn__pslot) : sizeof(uint64_t);
    for (int64_t r = lo; r < hi; r++) {
        if (r + KN__PREFETCH < hi)
            __builtin_prefetch((const uint8_t *)t->slots + (hashes[r + KN__PREFETCH] & mask) * sb, 1);
        t->next[r] = -1;
        if (!row_valid(keys, n, r)) {
            t->null_rows[nulls++] = (int32_t)r;
            continue;
        }
        uint64_t pos = hashes[r] & mask;
        if (t->filter) {
            uint64_t fb = kn__filter_bit(hashes[r], t->filter_shift);
            t->filter[fb >> 6] |= 1ull << (fb & 63);
        }
        if (t->packed) {
            kn__pslot *slots = t->slots;
            uint64_t key = pack_row(keys, n, r);
            for (;; pos = (pos + 1) & mask) {
                kn__pslot *s = &slots[pos];
                if (s->row1 == 0) {
                    s->key = key;
                    s->row1 = (uint32_t)r + 1;
                    distinct++;
                    break;
                }
                if (s->key == key) {
                    t->next[r] = (int32_t)(s->row1 - 1);
                    s->row1 = (uint32_t)r + 1;
                    dup = true;
                    break;
                }
            }
        } else {
            uint64_t *slots = t->slots;
            uint64_t tag = hashes[r] >> 32;
            for (;; pos = (pos + 1) & mask) {
                uint64_t s = slots[pos];
                if (s == 0) {
                    slots[pos] = tag << 32 | (uint64_t)(r + 1);
                    distinct++;
                    break;
                }
                int32_t head = (int32_t)(uint32_t)s - 1;
                if ((s >> 32) == tag && kn__key_eq(kp, n, head, r)) {
                    t->next[r] = head;
                    slots[pos] = tag << 32 | (uint64_t)(r + 1);
                    dup = true;
                    break;
                }
            }
        }
    }
    t->info->distinct_keys += distinct;
    t->info->null_key_rows = nulls;
    if (dup)
        t->info->unique = 0;
    return PA_OK;
}

int kn__cpu_join_build(const kn_ctx *ctx, kn_join_table *t, const uint64_t *hashes, pa_err *err)
{
    int rc = kn__cpu_join_build_begin(ctx, t, 0, t->n_slots, err);
    return rc == PA_OK ? kn__cpu_join_build_rows(ctx, t, hashes, 0, t->build_rows, err) : rc;
}
