/*
 * kn_hash_int.h - internals shared by the hashing, partition and hash-join
 * kernels (kn_hash.c, kn_join*.c).
 *
 * Design notes
 * - The key hash is a pure function of the key VALUES: no seed from the
 *   process, no addresses, so every rank of a distributed query sends a key
 *   to the same partition. Integer-like types (BOOLEAN, INTEGER, DATE,
 *   BIGINT, DECIMAL in 64 bits) hash their value widened to int64, so an
 *   INTEGER key and a BIGINT key holding the same number hash alike; a
 *   DECIMAL in 128 bits whose value fits int64 hashes like the 64-bit one.
 *   DOUBLE hashes its bits with -0.0 turned into 0.0 and every NaN into one
 *   NaN. VARCHAR hashes its bytes. A NULL hashes to a constant.
 * - Several key columns: h = column 0's hash, then h = mix(h * K + next).
 * - Bits: the partition id comes from the HIGH 32 bits (multiply-shift range
 *   reduction), hash-table slots from the LOW bits, so a partition's rows
 *   still spread over the whole table of the rank that receives them.
 * - Key equality (kn__key_eq) is typed per key column pair: integers compare
 *   as int64, decimals of mixed width as int128, doubles with NaN = NaN and
 *   -0.0 = 0.0 (the hash agrees), strings by length and bytes.
 */
#ifndef PISTA_KN_HASH_INT_H
#define PISTA_KN_HASH_INT_H

#include "kernels/kn_ops_int.h"

#include <math.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Multipliers: odd 64-bit constants with well spread bits (the golden ratio
 * 2^64/phi and the two multipliers of the MurmurHash3 64-bit finalizer). */
#define KN__H_K0 0x9e3779b97f4a7c15ull
#define KN__H_K1 0xff51afd7ed558ccdull
#define KN__H_K2 0xc4ceb9fe1a85ec53ull
/* The hash of a NULL key value (any fixed value works; this one is not the
 * hash of a small integer). */
#define KN__H_NULL 0x6a09e667f3bcc909ull

static inline PA_HD uint64_t kn__mix64(uint64_t x) { return pa_mix64(x); }   /* K1, K2 above */

static inline PA_HD uint64_t kn__hash_combine(uint64_t h, uint64_t x) { return kn__mix64(h * KN__H_K0 + x); }

static inline PA_HD uint64_t kn__hash_i64(int64_t v) { return kn__mix64((uint64_t)v); }

static inline PA_HD uint64_t kn__hash_i128(__int128 v)
{
    int64_t lo = (int64_t)v;
    if ((__int128)lo == v)
        return kn__hash_i64(lo);
    return kn__mix64((uint64_t)lo ^ kn__mix64((uint64_t)(v >> 64) + KN__H_K0));
}

static inline PA_HD uint64_t kn__hash_f64(double d)
{
    uint64_t bits;
    if (d == 0.0)
        d = 0.0;   /* -0.0 hashes as 0.0 */
    if (isnan(d))
        bits = 0x7ff8000000000000ull;
    else
        memcpy(&bits, &d, 8);
    return kn__mix64(bits ^ KN__H_K2);
}

static inline PA_HD uint64_t kn__rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/* Bytes of a string, 8 at a time; the tail is read with memcpy so nothing
 * past p + len is touched. */
static inline PA_HD uint64_t kn__hash_bytes(const uint8_t *p, int64_t len)
{
    uint64_t h = KN__H_K0 ^ ((uint64_t)len * KN__H_K1);
    int64_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = kn__rotl64(h ^ (w * KN__H_K1), 29) * KN__H_K2;
    }
    if (i < len) {
        uint64_t w = 0;
        memcpy(&w, p + i, (size_t)(len - i));
        h = kn__rotl64(h ^ (w * KN__H_K1), 29) * KN__H_K2;
    }
    return kn__mix64(h);
}

/* ------------------------------------------------------------ key values */

/* How a key column is read for hashing and comparison. */
typedef enum kn__kclass {
    KN__KC_I8,      /* BOOLEAN */
    KN__KC_I32,     /* INTEGER, DATE */
    KN__KC_I64,     /* BIGINT, DECIMAL p <= 18, the int64 time types */
    KN__KC_I128,    /* DECIMAL p > 18 */
    KN__KC_F64,     /* DOUBLE */
    KN__KC_STR,     /* VARCHAR (and the byte strings) */
    KN__KC_IV,      /* INTERVAL: hashed and compared as its pa_interval_norm,
                       so '1 mon' and '30 days' are one key (PostgreSQL's) */
    KN__KC_BAD,
} kn__kclass;

static inline PA_HD kn__kclass kn__key_class(pa_type t)
{
    switch (kn__phys_id(t.id)) {
    case PA_TYPE_BOOLEAN: return KN__KC_I8;
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: return KN__KC_I32;
    case PA_TYPE_BIGINT: return KN__KC_I64;
    case PA_TYPE_DECIMAL: return t.precision > PA_DECIMAL64_MAX_PRECISION ? KN__KC_I128 : KN__KC_I64;
    case PA_TYPE_DOUBLE: return KN__KC_F64;
    case PA_TYPE_VARCHAR: return KN__KC_STR;
    case PA_TYPE_INTERVAL: return KN__KC_IV;
    default: return KN__KC_BAD;
    }
}

static inline PA_HD bool kn__kc_is_int(kn__kclass k) { return k == KN__KC_I8 || k == KN__KC_I32 || k == KN__KC_I64; }

/* Integer-like value of row r widened to int64 (class I8/I32/I64). */
static inline PA_HD int64_t kn__ld_int(const pa_column *c, kn__kclass k, int64_t r)
{
    switch (k) {
    case KN__KC_I8: return ((const uint8_t *)c->data)[r];
    case KN__KC_I32: return ((const int32_t *)c->data)[r];
    default: return ((const int64_t *)c->data)[r];
    }
}

/* Row r as a 128-bit number: integer-like values and DECIMALs, an INTERVAL
 * as its normalised length. */
static inline PA_HD __int128 kn__ld_i128(const pa_column *c, kn__kclass k, int64_t r)
{
    if (k == KN__KC_IV) {
        pa_interval v;
        memcpy(&v, (const uint8_t *)c->data + r * 16, sizeof v);
        return pa_interval_norm(v);
    }
    if (k == KN__KC_I128) {
        __int128 v;
        memcpy(&v, (const uint8_t *)c->data + r * 16, 16);
        return v;
    }
    return kn__ld_int(c, k, r);
}

/* One key column pair (build side a, probe side b) as the comparison sees it. */
typedef struct kn__keypair {
    const pa_column *a, *b;
    kn__kclass ka, kb;
    int cmp;   /* KN__KC_I64 (both integer-like), _I128 (also INTERVALs), _F64 or _STR */
} kn__keypair;

static inline PA_HD bool kn__key_eq1(const kn__keypair *kp, int64_t ra, int64_t rb)
{
    switch (kp->cmp) {
    case KN__KC_I64: return kn__ld_int(kp->a, kp->ka, ra) == kn__ld_int(kp->b, kp->kb, rb);
    case KN__KC_I128: return kn__ld_i128(kp->a, kp->ka, ra) == kn__ld_i128(kp->b, kp->kb, rb);
    case KN__KC_F64: {
        double x = ((const double *)kp->a->data)[ra], y = ((const double *)kp->b->data)[rb];
        return x == y || (isnan(x) && isnan(y));
    }
    default: {
        const int32_t *oa = kp->a->offsets, *ob = kp->b->offsets;
        int32_t la = oa[ra + 1] - oa[ra], lb = ob[rb + 1] - ob[rb];
        if (la != lb)
            return false;
        const uint8_t *x = (const uint8_t *)kp->a->data + oa[ra], *y = (const uint8_t *)kp->b->data + ob[rb];
#ifdef __CUDA_ARCH__
        for (int32_t i = 0; i < la; i++)
            if (x[i] != y[i])
                return false;
        return true;
#else
        return memcmp(x, y, (size_t)la) == 0;
#endif
    }
    }
}

static inline PA_HD bool kn__key_eq(const kn__keypair *kp, int n, int64_t ra, int64_t rb)
{
    for (int k = 0; k < n; k++)
        if (!kn__key_eq1(&kp[k], ra, rb))
            return false;
    return true;
}

/* Fill kp[0..n) for build columns a and probe columns b. PA_EINVAL when a
 * pair cannot be compared (see kn_join_key_types_ok). */
int kn__keypairs(const pa_column *a, const pa_column *b, int n, kn__keypair *kp, pa_err *err);


/* ------------------------------------------------------ hash-join table */

typedef struct kn__pslot {
    uint64_t key;
    uint32_t row1;
    uint32_t pad_;
} kn__pslot;

/* The probe filter of a join table (kn_join.c): 16 bits per build row,
 * for tables of at most KN__FILTER_MAX_BITS bits (so it stays in cache);
 * one bit per key, indexed by a multiplicative remix of the whole hash. */
#define KN__FILTER_MAX_BITS (1u << 22)
static inline PA_HD uint64_t kn__filter_bit(uint64_t h, int shift) { return (h * KN__H_K0) >> shift; }
/* The GPU build's counters in the table (kn_join_table.counters): distinct
 * keys, NULL-key rows, and nonzero once a key occurred twice. */
#define KN__JOIN_COUNTERS_BYTES 64
enum { KN__JC_DISTINCT, KN__JC_NULLS, KN__JC_DUP };
/* A packed slot whose key is being written by the inserter that claimed it
 * (row1 is never INT32_MAX + 1 otherwise: rows are < INT32_MAX). */
#define KN__SLOT_BUSY UINT32_MAX

/* Rows looked ahead for prefetching slots: enough to cover a cache miss
 * at a few nanoseconds per probe, small enough to stay in L1. */
#define KN__PREFETCH 8

static inline PA_HD size_t kn__align64(size_t x) { return (x + 63) & ~(size_t)63; }

static inline PA_HD bool kn__kc_small(kn__kclass k) { return k == KN__KC_I8 || k == KN__KC_I32; }

/* True when the key pairs fit one 64-bit word (one integer-like key, or two
 * of at most 32 bits): the table then holds packed keys. */
static inline PA_HD bool kn__packable(const pa_type *bt, const pa_type *pt, int n)
{
    if (n == 1)
        return kn__kc_is_int(kn__key_class(bt[0])) && kn__kc_is_int(kn__key_class(pt[0]));
    if (n == 2)
        return kn__kc_small(kn__key_class(bt[0])) && kn__kc_small(kn__key_class(bt[1])) &&
               kn__kc_small(kn__key_class(pt[0])) && kn__kc_small(kn__key_class(pt[1]));
    return false;
}

/* The checks of a probe's and a build's arguments that the host can make
 * (kn_join_probe.c, kn_join.c), shared by the cpu loops and the CUDA
 * entries; kp gets the key pairs (KN_JOIN_MAX_KEYS of room). */
int kn__join_probe_check(const kn_join_table *t, kn_join_kind kind, const pa_column *probe_keys, int64_t rows,
                         size_t scratch_size, int64_t capacity, const int32_t *build_idx, const uint8_t *mark,
                         kn__keypair *kp, pa_err *err);
int kn__join_rows_check(const kn_join_table *t, int64_t lo, int64_t hi, kn__keypair *kp, pa_err *err);

/* All n packed keys of columns c (kn_join.c). */
void kn__pack_keys(const pa_column *c, int n, int64_t rows, uint64_t *out);
/* AND of the key columns' validity into out; false (out untouched) when
 * no key column has NULLs (kn_join.c). */
bool kn__keys_validity(const pa_column *c, int n, int64_t rows, uint8_t *out);

#ifdef __cplusplus
}
#endif

#endif /* PISTA_KN_HASH_INT_H */
