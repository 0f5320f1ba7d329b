/*
 * kn_join_probe.c - hash-join probe for INNER, LEFT, SEMI, ANTI and MARK
 * joins (see kernels.h "hash join"). One probe loop per join kind and slot
 * layout (both compile-time constants of an always-inlined body), prefetching
 * the slot of the row KN__PREFETCH ahead; a key whose chain outgrows the
 * capacity is resumed from the cursor on the next call.
 */
#include "kernels/kn_hash_int.h"

/* ------------------------------------------------------------------ probe */

size_t kn_join_probe_scratch_size(const kn_join_table *t, int64_t rows)
{
    /* packed probe keys, key validity; the GPU probe's chain heads */
    return (t->packed ? kn__align64((size_t)rows * 8) : 0) + kn__align64((size_t)(rows + 7) / 8) +
           kn__align64((size_t)rows * 4);
}

typedef struct probe_env {
    const kn_join_table *t;
    const kn__keypair *kp;
    const uint64_t *h;
    const uint64_t *packed;   /* probe packed keys, or NULL */
    const uint8_t *kv;        /* probe key validity (all keys), or NULL */
    uint64_t mask;
    const uint64_t *filter;   /* the table's probe filter, or NULL */
    int filter_shift;
    bool unique;
} probe_env;

#define KN__INLINE static inline __attribute__((always_inline))

/* First build row whose key equals probe row i's, or -1. `packed` is a
 * constant in every caller, so each probe loop gets its own copy. */
KN__INLINE int32_t find_head(const probe_env *e, int64_t i, const bool packed)
{
    uint64_t pos = e->h[i] & e->mask;
    if (packed) {
        const kn__pslot *slots = e->t->slots;
        uint64_t key = e->packed[i];
        for (;; pos = (pos + 1) & e->mask) {
            const kn__pslot *s = &slots[pos];
            if (s->row1 == 0)
                return -1;
            if (s->key == key)
                return (int32_t)(s->row1 - 1);
        }
    }
    const uint64_t *slots = e->t->slots;
    uint64_t tag = e->h[i] >> 32;
    for (;; pos = (pos + 1) & e->mask) {
        uint64_t s = slots[pos];
        if (s == 0)
            return -1;
        int32_t head = (int32_t)(uint32_t)s - 1;
        if ((s >> 32) == tag && kn__key_eq(e->kp, e->t->n_keys, head, i))
            return head;
    }
}

/* Build row r could equal probe row i once NULLs are filled in: every key
 * component that is non-NULL on both sides is equal. */
static bool maybe_equal(const probe_env *e, int32_t r, int64_t i)
{
    for (int k = 0; k < e->t->n_keys; k++) {
        const kn__keypair *kp = &e->kp[k];
        if (!pa_column_valid(kp->a, r) || !pa_column_valid(kp->b, i))
            continue;
        if (!kn__key_eq1(kp, r, i))
            return false;
    }
    return true;
}

/* MARK for a probe row without a match: true if SQL's IN is NULL (unknown).
 * Multi-column keys scan the build rows with a NULL key, or every build row
 * when the probe key has a NULL (quadratic in the worst case; IN over tuples
 * with NULLs is rare). */
static bool mark_unknown(const probe_env *e, int64_t i, bool probe_valid)
{
    const kn_join_table *t = e->t;
    if (t->build_rows == 0)
        return false;
    if (t->n_keys == 1)
        return !probe_valid || t->info->null_key_rows > 0;
    if (!probe_valid) {
        for (int64_t r = 0; r < t->build_rows; r++)
            if (maybe_equal(e, (int32_t)r, i))
                return true;
        return false;
    }
    for (int64_t j = 0; j < t->info->null_key_rows; j++)
        if (maybe_equal(e, t->null_rows[j], i))
            return true;
    return false;
}

typedef struct probe_out {
    int64_t capacity;
    int32_t *probe_idx, *build_idx;
    uint8_t *mark, *mark_valid;
} probe_out;

/* The probe loop for one join kind and slot layout (both constants in
 * every caller): rows from cur->row on, resuming a chain cut short by the
 * capacity last time. Fills cur's outputs; false if a NULL mark has no
 * validity to go to. */
KN__INLINE bool probe_loop(const probe_env *e, int64_t rows, const kn_join_kind kind, const bool packed,
                           kn_join_cursor *cur, const probe_out *o)
{
    const kn_join_table *t = e->t;
    const int32_t *next = t->next;
    const bool unique = e->unique;
    const int64_t capacity = o->capacity;
    int32_t *probe_idx = o->probe_idx, *build_idx = o->build_idx;
    int64_t n = 0, n_null = 0, i = cur->row;
    int32_t b = cur->chain;
    if (b >= 0) {
        for (; b >= 0; b = unique ? -1 : next[b]) {
            if (n == capacity)
                goto full;
            probe_idx[n] = (int32_t)i;
            build_idx[n++] = b;
        }
        i++;
    }
    for (; i < rows; i++) {
        if (n == capacity) {
            b = -1;
            goto full;
        }
        if (!e->filter && i + KN__PREFETCH < rows) { /* with a filter most rows never reach the slots */
            uint64_t pp = e->h[i + KN__PREFETCH] & e->mask;
            __builtin_prefetch(packed ? (const void *)((const kn__pslot *)t->slots + pp)
                                      : (const void *)((const uint64_t *)t->slots + pp));
        }
        bool valid = !e->kv || ((e->kv[i >> 3] >> (i & 7)) & 1);
        bool cand = valid;
        if (e->filter) {
            uint64_t fb = kn__filter_bit(e->h[i], e->filter_shift);
            cand = cand && ((e->filter[fb >> 6] >> (fb & 63)) & 1);
        }
        int32_t head = cand ? find_head(e, i, packed) : -1;
        switch (kind) {
        case KN_JOIN_LEFT:
            if (head < 0) {
                probe_idx[n] = (int32_t)i;
                build_idx[n++] = -1;
                n_null++;
                break;
            }
            /* fall through */
        case KN_JOIN_INNER:
            for (b = head; b >= 0; b = unique ? -1 : next[b]) {
                if (n == capacity)
                    goto full;
                probe_idx[n] = (int32_t)i;
                build_idx[n++] = b;
            }
            break;
        case KN_JOIN_SEMI:
            probe_idx[n] = (int32_t)i;
            n += head >= 0;
            break;
        case KN_JOIN_ANTI:
            probe_idx[n] = (int32_t)i;
            n += head < 0;
            break;
        case KN_JOIN_MARK:
            if (head < 0 && mark_unknown(e, i, valid)) {
                if (!o->mark_valid)
                    return false;
                o->mark_valid[n >> 3] &= (uint8_t)~(1u << (n & 7));
                n_null++;
            }
            o->mark[n] = head >= 0;
            probe_idx[n++] = (int32_t)i;
            break;
        }
    }
    cur->row = rows;
    cur->chain = -1;
    cur->done = 1;
    cur->n_out = n;
    cur->n_null = n_null;
    return true;
full:
    cur->row = i;
    cur->chain = b;
    cur->done = 0;
    cur->n_out = n;
    cur->n_null = n_null;
    return true;
}

int kn__join_probe_check(const kn_join_table *t, kn_join_kind kind, const pa_column *probe_keys, int64_t rows,
                         size_t scratch_size, int64_t capacity, const int32_t *build_idx, const uint8_t *mark,
                         kn__keypair *kp, pa_err *err)
{
    if (capacity < 1 || rows < 0 || rows > INT32_MAX)
        return pa_error(err, PA_EINVAL, "join probe of %lld rows with capacity %lld", (long long)rows,
                        (long long)capacity);
    if (scratch_size < kn_join_probe_scratch_size(t, rows))
        return pa_error(err, PA_EINVAL, "join probe: %zu bytes of scratch, %zu needed", scratch_size,
                        kn_join_probe_scratch_size(t, rows));
    if ((kind == KN_JOIN_INNER || kind == KN_JOIN_LEFT) && !build_idx)
        return pa_error(err, PA_EINVAL, "join probe: no build index output");
    if (kind == KN_JOIN_MARK && !mark)
        return pa_error(err, PA_EINVAL, "join probe: no mark output");
    if ((unsigned)kind > KN_JOIN_MARK)
        return pa_error(err, PA_EINVAL, "join probe: join kind %d", (int)kind);
    int rc = kn__keypairs(t->keys, probe_keys, t->n_keys, kp, err);
    if (rc != PA_OK)
        return rc;
    if (t->packed) {
        pa_type pt[KN_JOIN_MAX_KEYS], bt[KN_JOIN_MAX_KEYS];
        for (int k = 0; k < t->n_keys; k++)
            pt[k] = probe_keys[k].type, bt[k] = t->keys[k].type;
        if (!kn__packable(bt, pt, t->n_keys))
            return pa_error(err, PA_EINVAL, "join probe: key types differ from those the table was laid out for");
    }
    return PA_OK;
}

#define KN__PROBE_KIND(K)                                                     \
    ((packed) ? probe_loop(&e, rows, (K), true, cur, &o) : probe_loop(&e, rows, (K), false, cur, &o))

int kn__cpu_join_probe(const kn_ctx *ctx, const kn_join_table *t, kn_join_kind kind, const pa_column *probe_keys,
                       const uint64_t *hashes, int64_t rows, void *scratch, size_t scratch_size,
                       kn_join_cursor *cur, int64_t capacity, int32_t *probe_idx, int32_t *build_idx,
                       uint8_t *mark, uint8_t *mark_valid, pa_err *err)
{
    kn__keypair kp[KN_JOIN_MAX_KEYS];
    int rc = kn__join_probe_check(t, kind, probe_keys, rows, scratch_size, capacity, build_idx, mark, kp, err);
    if (rc != PA_OK)
        return rc;
    const bool packed = t->packed;
    uint8_t *sp = scratch;
    uint8_t *kv = sp + (packed ? kn__align64((size_t)rows * 8) : 0);
    bool has_nulls = false;
    for (int k = 0; k < t->n_keys; k++)
        has_nulls |= probe_keys[k].validity != NULL;
    if (!cur->started) {
        if (packed)
            kn__pack_keys(probe_keys, t->n_keys, rows, (uint64_t *)sp);
        if (has_nulls)
            kn__keys_validity(probe_keys, t->n_keys, rows, kv);
        cur->started = 1;
        cur->chain = -1;
    }
    probe_env e = {.t = t, .kp = kp, .h = hashes, .mask = t->n_slots - 1, .unique = t->info->unique != 0,
                   .filter = t->filter, .filter_shift = t->filter_shift};
    e.packed = packed ? (const uint64_t *)sp : NULL;
    e.kv = has_nulls ? kv : NULL;
    probe_out o = {capacity, probe_idx, build_idx, mark, mark_valid};
    if (kind == KN_JOIN_MARK && mark_valid) {
        int64_t m = capacity < rows - cur->row ? capacity : rows - cur->row;
        memset(mark_valid, 0xff, (size_t)(m + 7) / 8);
    }
    bool ok = true;
    switch (kind) {
    case KN_JOIN_INNER: ok = KN__PROBE_KIND(KN_JOIN_INNER); break;
    case KN_JOIN_LEFT: ok = KN__PROBE_KIND(KN_JOIN_LEFT); break;
    case KN_JOIN_SEMI: ok = KN__PROBE_KIND(KN_JOIN_SEMI); break;
    case KN_JOIN_ANTI: ok = KN__PROBE_KIND(KN_JOIN_ANTI); break;
    case KN_JOIN_MARK: ok = KN__PROBE_KIND(KN_JOIN_MARK); break;
    }
    if (!ok)
        return pa_error(err, PA_EINVAL, "join probe: a NULL mark but no mark validity output");
    return PA_OK;
}

/* --------------------------------------------------------- IN-NULL rule */

int kn__cpu_join_in_unknown(const kn_ctx *ctx, const kn_join_table *t, const pa_column *probe_keys, int64_t rows,
                            uint8_t *unknown, pa_err *err)
{
    kn__keypair kp[KN_JOIN_MAX_KEYS];
    int rc = kn__keypairs(t->keys, probe_keys, t->n_keys, kp, err);
    if (rc != PA_OK)
        return rc;
    probe_env e = {.t = t, .kp = kp};
    if (t->build_rows == 0) {
        memset(unknown, 0, (size_t)rows);
        return PA_OK;
    }
    for (int64_t i = 0; i < rows; i++) {
        bool valid = true;
        for (int k = 0; k < t->n_keys && valid; k++)
            valid = pa_column_valid(&probe_keys[k], i);
        unknown[i] = mark_unknown(&e, i, valid);
    }
    return PA_OK;
}
