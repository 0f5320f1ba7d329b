/*
 * kn_hash.c - hashing of multi-column keys and hash partitioning (N ways:
 * partition ids, per-partition offsets, a stable row order). The hash
 * function and the bit layout are described in kn_hash_int.h; both are part
 * of the wire contract of the distributed shuffle, so changing them changes
 * which rank owns a key.
 */
#include "kernels/kn_hash_int.h"

bool kn_hash_key_type_ok(pa_type t) { return kn__key_class(t) != KN__KC_BAD; }

bool kn_join_key_types_ok(pa_type a, pa_type b)
{
    if (!kn_hash_key_type_ok(a) || !kn_hash_key_type_ok(b))
        return false;
    if (a.id == b.id)
        return a.id != PA_TYPE_DECIMAL || a.scale == b.scale;
    return (a.id == PA_TYPE_INTEGER && b.id == PA_TYPE_BIGINT) ||
           (a.id == PA_TYPE_BIGINT && b.id == PA_TYPE_INTEGER);
}

int kn__keypairs(const pa_column *a, const pa_column *b, int n, kn__keypair *kp, pa_err *err)
{
    for (int k = 0; k < n; k++) {
        if (!kn_join_key_types_ok(a[k].type, b[k].type)) {
            char x[48], y[48];
            return pa_error(err, PA_EINVAL, "join key %d: %s cannot be compared with %s", k,
                            pa_type_format(a[k].type, x, sizeof x), pa_type_format(b[k].type, y, sizeof y));
        }
        kp[k].a = &a[k];
        kp[k].b = &b[k];
        kp[k].ka = kn__key_class(a[k].type);
        kp[k].kb = kn__key_class(b[k].type);
        if (kn__kc_is_int(kp[k].ka) && kn__kc_is_int(kp[k].kb))
            kp[k].cmp = KN__KC_I64;
        else if (kp[k].ka == KN__KC_F64 || kp[k].ka == KN__KC_STR)
            kp[k].cmp = kp[k].ka;
        else
            kp[k].cmp = KN__KC_I128;
    }
    return PA_OK;
}

/* ----------------------------------------------------------------- hashing */

/* One loop per value class; `first` is loop invariant (the compiler
 * unswitches it), NULL rows take KN__H_NULL without a branch. */
#define KN__HASH_LOOP(EXPR)                                                   \
    do {                                                                      \
        for (int64_t i = 0; i < rows; i++) {                                  \
            uint64_t x = (EXPR);                                              \
            if (val)                                                          \
                x = ((val[i >> 3] >> (i & 7)) & 1) ? x : KN__H_NULL;          \
            h[i] = first ? x : kn__hash_combine(h[i], x);                     \
        }                                                                     \
    } while (0)

static void hash_column(const pa_column *c, int64_t rows, bool first, uint64_t *h)
{
    const uint8_t *val = c->validity;
    switch (kn__key_class(c->type)) {
    case KN__KC_I8: {
        const uint8_t *v = c->data;
        KN__HASH_LOOP(kn__hash_i64(v[i]));
        break;
    }
    case KN__KC_I32: {
        const int32_t *v = c->data;
        KN__HASH_LOOP(kn__hash_i64(v[i]));
        break;
    }
    case KN__KC_I64: {
        const int64_t *v = c->data;
        KN__HASH_LOOP(kn__hash_i64(v[i]));
        break;
    }
    case KN__KC_I128:
    case KN__KC_IV: {
        const kn__kclass kc = kn__key_class(c->type);
        KN__HASH_LOOP(kn__hash_i128(kn__ld_i128(c, kc, i)));
        break;
    }
    case KN__KC_F64: {
        const double *v = c->data;
        KN__HASH_LOOP(kn__hash_f64(v[i]));
        break;
    }
    case KN__KC_STR: {
        const uint8_t *b = c->data;
        const int32_t *o = c->offsets;
        KN__HASH_LOOP(kn__hash_bytes(b + o[i], (int64_t)o[i + 1] - o[i]));
        break;
    }
    case KN__KC_BAD: break;
    }
}

int kn__cpu_hash_keys(const kn_ctx *ctx, const pa_column *keys, int n_keys, int64_t rows, uint64_t *hashes,
                      pa_err *err)
{
    if (n_keys < 1 || rows < 0)
        return pa_error(err, PA_EINVAL, "hash of %d key columns over %lld rows", n_keys, (long long)rows);
    for (int k = 0; k < n_keys; k++)
        if (!kn_hash_key_type_ok(keys[k].type))
            return pa_error(err, PA_EINVAL, "hash: key column %d has type %s, which cannot be hashed", k,
                            pa_type_name(keys[k].type.id));
    for (int k = 0; k < n_keys; k++)
        hash_column(&keys[k], rows, k == 0, hashes);
    return PA_OK;
}

/* ------------------------------------------------------------ sequences */

int kn__cpu_sequence(const kn_ctx *ctx, int64_t start, int64_t step, int64_t n, int64_t *out, pa_err *err)
{
    for (int64_t i = 0; i < n; i++)   /* in uint64: wraps instead of overflowing */
        out[i] = (int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)step);
    return PA_OK;
}

/* ------------------------------------------------------------ partitioning */

int kn__cpu_partition_ids(const kn_ctx *ctx, const uint64_t *hashes, int64_t rows, uint32_t n_parts,
                          uint32_t *part, pa_err *err)
{
    if (n_parts < 1)
        return pa_error(err, PA_EINVAL, "hash partition into %u parts", n_parts);
    for (int64_t i = 0; i < rows; i++)
        part[i] = kn_partition_of(hashes[i], n_parts);
    return PA_OK;
}

int kn__cpu_partition_offsets(const kn_ctx *ctx, const uint32_t *part, int64_t rows, uint32_t n_parts,
                              int64_t *offsets, pa_err *err)
{
    if (n_parts < 1)
        return pa_error(err, PA_EINVAL, "hash partition into %u parts", n_parts);
    memset(offsets, 0, ((size_t)n_parts + 1) * sizeof *offsets);
    for (int64_t i = 0; i < rows; i++) {
        if (part[i] >= n_parts)
            return pa_error(err, PA_EINVAL, "row %lld has partition %u of %u", (long long)i, part[i], n_parts);
        offsets[part[i] + 1]++;
    }
    for (uint32_t p = 0; p < n_parts; p++)
        offsets[p + 1] += offsets[p];
    return PA_OK;
}

size_t kn_partition_order_scratch_size(uint32_t n_parts) { return (size_t)n_parts * sizeof(int64_t); }

int kn__cpu_partition_order(const kn_ctx *ctx, const uint32_t *part, int64_t rows, uint32_t n_parts,
                            const int64_t *offsets, void *scratch, size_t scratch_size, int32_t *row_order,
                            pa_err *err)
{
    if (n_parts < 1 || scratch_size < kn_partition_order_scratch_size(n_parts))
        return pa_error(err, PA_EINVAL, "partition order: %u parts with %zu bytes of scratch", n_parts,
                        scratch_size);
    if (rows > INT32_MAX || offsets[n_parts] != rows)
        return pa_error(err, PA_EINVAL, "partition order: offsets end at %lld for %lld rows",
                        (long long)offsets[n_parts], (long long)rows);
    int64_t *cur = scratch;
    memcpy(cur, offsets, (size_t)n_parts * sizeof *cur);
    for (int64_t i = 0; i < rows; i++) {
        uint32_t p = part[i];
        if (p >= n_parts || cur[p] >= offsets[p + 1])
            return pa_error(err, PA_EINVAL, "partition order: row %lld does not fit partition %u", (long long)i, p);
        row_order[cur[p]++] = (int32_t)i;
    }
    return PA_OK;
}
