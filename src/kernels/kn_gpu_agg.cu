/*
 * kn_gpu_agg.cu - CUDA kernels for the group-by tables (kn_agg_*): the
 * layout, contracts and results of kn_agg*.c (see kn_agg_int.h), built
 * from lock-free inserts, the device-wide scan of kn_gpu.h and atomics.
 *
 * Design notes
 * - Group ids in order of first appearance, as on the cpu. An update
 *   normalises and hashes every row, probes the table's index (read only),
 *   and puts each row it missed into a batch-local open-addressing table
 *   (row + 1 per word, the smallest row of a key kept with atomicMin). The
 *   rows that hold their local word after that are the first rows of new
 *   keys; an in-order scan over them gives each its group id (groups so far
 *   + its rank) and its arena offset (the bit fields of one int64: rank
 *   above bit 40, string bytes below), and its pass 3 writes the group and
 *   CAS-inserts it into the index. The other missed rows take their first
 *   row's id. Merges do the same with the source's groups as rows.
 * - States: counts, integer MIN/MAX and sums of 32/64-bit values into
 *   128-bit sums (two 64-bit atomicAdds with the carry) are atomics, exact
 *   in any order. The states whose result depends on the order of rows
 *   (DOUBLE sums - the cpu adds in row order -, DOUBLE, BOOLEAN and 128-bit
 *   MIN/MAX, overflow-checked 128-bit sums, VARCHAR MIN/MAX) see each
 *   group's rows in row order, as on the cpu, so their bits are the cpu's:
 *   a batch with keys is sorted by group id (a stable radix sort) and one
 *   thread folds each group's run; the global aggregate (no keys) and small
 *   batches are folded by one thread.
 *   A merge combines each source group into a different destination group
 *   (a table's keys are distinct), so it combines every state in parallel
 *   without atomics; two source groups with one key (a key0_map that is not
 *   one to one) are a data fault.
 * - The table's sizes live in its header (device); kernels that cannot
 *   proceed (full table, range past the groups, too little scratch) find
 *   out on the device: a one-thread check kernel raises a data fault
 *   (PA_EINVAL, the cpu's message) and sets the call's refuse word, which
 *   every later kernel of the call reads first, so the table is left
 *   unchanged; the sizes are published either way.
 * - The dense map of the cpu loops is not used here: every group is in the
 *   hash index (which the cpu keeps up to date too), so the header's dense
 *   state says 0 once a cuda or sim update ran.
 * - Structs too large for kernel parameters (the table, the key and argument
 *   descriptors) are staged into device memory once per call (stage()).
 * - AVG of integers and DECIMALs is DuckDB's long double division, which the
 *   cpu does on the x87's 64-bit mantissa: ext_* below redo each rounding
 *   of it (int128 -> 64-bit mantissa, count * 10^scale, the quotient, then
 *   53 bits) with integer arithmetic, so the doubles are the cpu's.
 */
#include "kernels/kn_gpu.h"
#include "kernels/kn_agg_int.h"
#include "kernels/kn_gpu_ext.h"

using namespace kn_gpu;

namespace {

constexpr uint32_t MISS = 0xFFFFFFFFu;
constexpr int PT = KN__AGG_PART_TILE;       /* groups per tile of the partition's stable bucket sort */
constexpr int NB = 1 << KN_AGG_PART_BITS;   /* buckets */
static_assert(NB == (int)THREADS, "the partition kernels take one thread per bucket");
constexpr int64_t LOW40 = ((int64_t)1 << 40) - 1;
/* Batches with keys of at least this many rows fold their order-dependent
 * states per group (fold_sorted_k), smaller ones in one thread. */
constexpr int64_t ORDERED_SORT_ROWS = 256;

/* Everything one call's kernels read, staged into device memory. */
struct call_t {
    kn_agg_table t, s;                       /* the table (dst) and the source */
    pa_column keys[KN_AGG_MAX_KEYS];
    pa_column args[KN_AGG_MAX_SLOTS];
    /* rows being grouped: normalised keys, string offsets, hashes */
    const uint8_t *bases[KN_AGG_MAX_KEYS];   /* string key j's bytes: base + soff */
    uint8_t *rows;
    int64_t *soff;
    uint64_t *hashes;
    uint32_t *gids, *lt, *lslot;
    uint64_t lmask;
    int64_t first;                           /* merges: the source's first group */
    int64_t n;                               /* host bound of the rows (update: exact) */
    const uint32_t *key0_map;
    uint32_t *gid_map;
    /* written by the kernels */
    int32_t refuse, pad_;
    int64_t rows_dev;                        /* the rows, as the device knows them */
    int64_t groups0, arena0, packed, bytes;
    int64_t bucket_arena[NB];
};

/* ------------------------------------------------------------- hashing */

__device__ inline uint32_t ld_u32(const uint8_t *p) { return *(const uint32_t *)(const void *)p; }

__device__ inline bool bytes_eq(const uint8_t *a, const uint8_t *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/* kn__agg_key_eq: key a (long strings at abase[j] + aoff[j]) and key b
 * (at bbases[j] + boff[j], or barena + boff[j] when bbases is NULL). */
__device__ inline bool key_eq(const kn_agg_layout &L, const uint8_t *a, const uint8_t *const *abase,
                              const int64_t *aoff, const uint8_t *b, const uint8_t *const *bbases,
                              const uint8_t *barena, const int64_t *boff)
{
    const uint64_t *x = (const uint64_t *)(const void *)a, *y = (const uint64_t *)(const void *)b;
    for (int i = 0; i < L.stride / 8; i++)
        if (x[i] != y[i])
            return false;
    for (int k = 0; L.n_str && k < L.n_keys; k++) {
        int j = L.key_str[k];
        if (j < 0)
            continue;
        uint32_t len = ld_u32(a + L.key_off[k]);
        if (len > 4 && !bytes_eq(abase[j] + aoff[j] + 4, (bbases ? bbases[j] : barena) + boff[j] + 4, len - 4))
            return false;
    }
    return true;
}

/* -------------------------------------------------------- small kernels */

__global__ void publish_k(const kn_agg_table *t)
{
    t->sizes[0] = t->hdr->groups;
    t->sizes[1] = t->hdr->arena_used;
}

inline int publish(const kn_ctx *ctx, const kn_agg_table *dt, pa_err *err)
{
    return SIMT_LAUNCH(publish_k, 1, 1, 0, ctx->stream, err, dt);
}

/* Copy `bytes` bytes (a device count: *count * width) from src to dst,
 * grid-stride over the host bound `bound` bytes. */
__global__ void copy_k(uint8_t *dst, const uint8_t *src, const int64_t *count, int64_t width, int64_t bound,
                       const int32_t *refuse)
{
    if (refuse && *refuse)
        return;
    int64_t bytes = *count * width;
    if (bytes > bound)
        bytes = bound;
    int64_t words = ((uintptr_t)dst % 8 == 0 && (uintptr_t)src % 8 == 0) ? bytes / 8 : 0;
    KN_GPU_FOR(i, words)
    ((uint64_t *)(void *)dst)[i] = ((const uint64_t *)(const void *)src)[i];
    KN_GPU_FOR(i, bytes - words * 8)
    dst[words * 8 + i] = src[words * 8 + i];
}

__global__ void zero_k(uint32_t *p, int64_t n)
{
    KN_GPU_FOR(i, n)
    p[i] = 0;
}

/* ----------------------------------------------------- table init, move */

/* States of groups [0, cap) at their starting values (kn__agg_init_states). */
__global__ void init_states_k(const kn_agg_table *t)
{
    const kn_agg_layout &L = t->L;
    for (int s = 0; s < L.n_slots; s++) {
        const kn_agg_slot &sl = L.slots[s];
        bool mx = sl.op == KN_AGG_MAX, mn = sl.op == KN_AGG_MIN;
        uint8_t *st = (uint8_t *)t->state[s];
        int w = L.slot_width[s];
        KN_GPU_FOR(g, t->cap_groups)
        {
            if (!mx && !mn) {
                for (int b = 0; b < w; b++)
                    st[g * w + b] = 0;
                continue;
            }
            switch (kn__agg_slot_repr(&sl)) {
            case KN__AGG_R_I32: ((int32_t *)st)[g] = mx ? INT32_MIN : INT32_MAX; break;
            case KN__AGG_R_I64V: ((int64_t *)st)[g] = mx ? INT64_MIN : INT64_MAX; break;
            case KN__AGG_R_F64: ((double *)st)[g] = mx ? -__longlong_as_double(0x7ff0000000000000LL)
                                                        : __longlong_as_double(0x7ff0000000000000LL); break;
            case KN__AGG_R_U8: st[g] = mx ? 0 : 1; break;
            case KN__AGG_R_I128: {
                v16 *p = (v16 *)(void *)st;
                p[g] = mx ? v16{0, 0x8000000000000000ULL} : v16{~0ULL, 0x7fffffffffffffffULL};
                break;
            }
            case KN__AGG_R_IV: ((pa_interval *)(void *)st)[g] = kn__agg_iv_empty(mx); break;
            case KN__AGG_R_STR: {
                kn__agg_str *p = (kn__agg_str *)(void *)st;
                p[g].off = 0;
                p[g].len = 0;
                p[g].set = 0;
                break;
            }
            default: break;
            }
        }
    }
}

__global__ void clear_index_k(const kn_agg_table *t)
{
    KN_GPU_FOR(i, (int64_t)t->index_mask + 1)
    t->index[i] = 0;
    if (t->dense_map)
        KN_GPU_FOR(i, (int64_t)KN_AGG_DENSE_CODES)
        t->dense_map[i] = 0;
}

/* The header of an empty table; a table without keys gets its one group
 * (key of zeros, hash h0). */
__global__ void init_hdr_k(const kn_agg_table *t, uint64_t h0)
{
    kn_agg_hdr *h = t->hdr;
    h->groups = 0;
    h->arena_used = 0;
    h->dense = t->dense_map ? 1 : 0;
    for (int k = 0; k < KN_AGG_MAX_KEYS; k++)
        h->dense_base[k] = h->dense_span[k] = 0;
    if (t->L.n_keys == 0) {
        for (int b = 0; b < t->L.stride; b++)
            t->keys[b] = 0;
        t->ghash[0] = h0;
        uint64_t pos = h0 & t->index_mask;
        t->index[pos] = ((h0 >> 32) << 32) | 1;
        h->groups = 1;
    }
    t->sizes[0] = h->groups;
    t->sizes[1] = h->arena_used;
}

/* Insert group g (hash h) into t's index. */
__device__ inline void index_insert(const kn_agg_table *t, uint64_t h, uint32_t g)
{
    uint64_t mask = t->index_mask, pos = h & mask, word = ((h >> 32) << 32) | ((uint64_t)g + 1);
    for (;; pos = (pos + 1) & mask)
        if (atomicCAS((unsigned long long *)&t->index[pos], 0ULL, (unsigned long long)word) == 0ULL)
            return;
}

__global__ void move_check_k(call_t *C, fault_t f)
{
    const kn_agg_table &d = C->t, &s = C->s;
    C->groups0 = s.hdr->groups;
    C->arena0 = s.hdr->arena_used;
    if (d.cap_groups < s.hdr->groups || d.cap_arena < s.hdr->arena_used) {
        C->refuse = 1;
        f.raise();
    }
}

__global__ void move_hdr_k(call_t *C)
{
    if (C->refuse)
        return;
    kn_agg_hdr *d = C->t.hdr;
    const kn_agg_hdr *s = C->s.hdr;
    d->dense = s->dense;
    for (int k = 0; k < KN_AGG_MAX_KEYS; k++) {
        d->dense_base[k] = s->dense_base[k];
        d->dense_span[k] = s->dense_span[k];
    }
    d->groups = s->groups;
    d->arena_used = s->arena_used;
}

__global__ void move_index_k(const call_t *C)
{
    if (C->refuse)
        return;
    KN_GPU_FOR(g, C->groups0)
    index_insert(&C->t, C->s.ghash[g], (uint32_t)g);
}

/* ------------------------------------------------------------- grouping */

/* Field k of row i of column c into the normalised key dst (put_field). */
__device__ inline void put_field(const kn_agg_layout &L, int k, const pa_column &c, int64_t i, uint8_t *dst,
                                 int64_t *soff)
{
    uint8_t *f = dst + L.key_off[k];
    if (!bit(c.validity, i)) {
        dst[L.null_off + k] = 1;
        return;
    }
    switch (kn__phys_id(c.type.id)) {
    case PA_TYPE_BOOLEAN: *f = ((const uint8_t *)c.data)[i] != 0; break;
    case PA_TYPE_INTEGER:
    case PA_TYPE_DATE: *(int32_t *)(void *)f = ((const int32_t *)c.data)[i]; break;
    case PA_TYPE_DOUBLE: {
        double v = ((const double *)c.data)[i];
        uint64_t b = v == 0 ? 0 : v != v ? 0x7ff8000000000000ULL : (uint64_t)__double_as_longlong(v);
        *(uint64_t *)(void *)f = b;
        break;
    }
    case PA_TYPE_DECIMAL:
        if (c.type.precision > PA_DECIMAL64_MAX_PRECISION) {
            *(v16 *)(void *)f = ((const v16 *)c.data)[i];
            break;
        }
        *(int64_t *)(void *)f = ((const int64_t *)c.data)[i];
        break;
    case PA_TYPE_BIGINT: *(int64_t *)(void *)f = ((const int64_t *)c.data)[i]; break;
    case PA_TYPE_VARCHAR: {
        int32_t o = c.offsets[i];
        uint32_t len = (uint32_t)(c.offsets[i + 1] - o);
        *(uint32_t *)(void *)f = len;
        const uint8_t *d = (const uint8_t *)c.data + o;
        for (uint32_t b = 0; b < len && b < 4; b++)
            f[4 + b] = d[b];
        soff[L.key_str[k]] = o;
        break;
    }
    default: break;
    }
}

/* Bytes of string data in rows [0, n) of c (0 for other types). */
__device__ inline int64_t str_bytes(const pa_column &c, int64_t n)
{
    return pa_type_is_varlen(c.type.id) && n > 0 ? (int64_t)c.offsets[n] - c.offsets[0] : 0;
}

__device__ inline int64_t input_bytes(const kn_agg_table &t, const pa_column *keys, const pa_column *args,
                                      int64_t n)
{
    int64_t b = 0;
    for (int k = 0; k < t.L.n_keys; k++)
        if (pa_type_is_varlen(t.L.key_types[k].id))
            b += str_bytes(keys[k], n);
    for (int s = 0; s < t.L.n_slots; s++)
        if (kn__agg_slot_repr(&t.L.slots[s]) == KN__AGG_R_STR)
            b += str_bytes(args[s], n);
    return b;
}

__global__ void input_bytes_k(const call_t *C, int64_t n, int64_t *out)
{
    *out = input_bytes(C->t, C->keys, C->args, n);
}

__global__ void update_check_k(call_t *C, fault_t f)
{
    const kn_agg_table &t = C->t;
    int64_t need = input_bytes(t, C->keys, C->args, C->n);
    C->groups0 = t.hdr->groups;
    C->arena0 = t.hdr->arena_used;
    C->rows_dev = C->n;
    if ((t.L.n_keys > 0 && t.hdr->groups + C->n > t.cap_groups) || t.hdr->arena_used + need > t.cap_arena) {
        C->refuse = 1;
        f.raise();
        return;
    }
    t.hdr->dense = 0;
}

/* Normalise and hash the rows; clear the local table. */
__global__ void normalise_k(const call_t *C)
{
    if (C->refuse)
        return;
    const kn_agg_layout &L = C->t.L;
    const int64_t n = C->n, st = L.stride, ns = L.n_str;
    KN_GPU_FOR(i, (int64_t)C->lmask + 1)
    C->lt[i] = 0;
    KN_GPU_FOR(i, n)
    {
        uint8_t *row = C->rows + i * st;
        for (int64_t w = 0; w < st / 8; w++)
            ((uint64_t *)(void *)row)[w] = 0;
        int64_t *so = C->soff + i * ns;
        for (int k = 0; k < L.n_keys; k++)
            put_field(L, k, C->keys[k], i, row, so);
        C->hashes[i] = kn__agg_hash_key(&L, row, C->bases, so);
    }
}

/* Merges: the source's groups [first, first + rows) as the rows to group
 * (keys rewritten through key0_map into C->rows when there is one). */
__global__ void merge_prep_k(call_t *C)
{
    if (C->refuse)
        return;
    const kn_agg_layout &L = C->t.L;
    const int64_t n = C->rows_dev, st = L.stride;
    KN_GPU_FOR(i, (int64_t)C->lmask + 1)
    C->lt[i] = 0;
    if (!C->key0_map)
        return;
    KN_GPU_FOR(i, n)
    {
        int64_t g = C->first + i;
        uint8_t *row = C->rows + i * st;
        const uint8_t *src = C->s.keys + g * st;
        for (int64_t w = 0; w < st / 8; w++)
            ((uint64_t *)(void *)row)[w] = ((const uint64_t *)(const void *)src)[w];
        int32_t *k0 = (int32_t *)(void *)(row + L.key_off[0]);
        *k0 = (int32_t)C->key0_map[*k0];
        C->hashes[i] = kn__agg_hash_key(&L, row, C->bases, C->soff + i * L.n_str);
    }
}

/* Key and hash of row i. */
__device__ inline const uint8_t *row_key(const call_t *C, int64_t i) { return C->rows + i * C->t.L.stride; }

/* Find each row's group in the index; put the rows it missed into the
 * local table. unique: two rows with one key are a fault (merges). */
__global__ void probe_k(const call_t *C, bool unique, fault_t dup)
{
    if (C->refuse)
        return;
    const kn_agg_table &t = C->t;
    const kn_agg_layout &L = t.L;
    const int64_t ns = L.n_str;
    KN_GPU_FOR(i, C->rows_dev)
    {
        const uint8_t *key = row_key(C, i);
        const int64_t *so = C->soff + i * ns;
        uint64_t h = C->hashes[i], mask = t.index_mask, pos = h & mask, tag = h >> 32;
        uint32_t gid = MISS;
        for (;; pos = (pos + 1) & mask) {
            uint64_t e = t.index[pos];
            if (e == 0)
                break;
            if ((e >> 32) == tag) {
                uint32_t g = (uint32_t)e - 1;
                if (key_eq(L, key, C->bases, so, t.keys + (int64_t)g * L.stride, NULL, t.arena, t.str_off + g * ns)) {
                    gid = g;
                    break;
                }
            }
        }
        C->gids[i] = gid;
        if (gid != MISS)
            continue;
        uint64_t lm = C->lmask, lp = h & lm;
        uint32_t me = (uint32_t)i + 1;
        for (;; lp = (lp + 1) & lm) {
            uint32_t e = *(volatile uint32_t *)&C->lt[lp];
            if (e == 0) {
                e = atomicCAS(&C->lt[lp], 0u, me);
                if (e == 0)
                    break;
            }
            int64_t r = (int64_t)e - 1;
            if (C->hashes[r] == h && key_eq(L, key, C->bases, so, row_key(C, r), C->bases, NULL, C->soff + r * ns)) {
                if (unique)
                    dup.raise();
                atomicMin(&C->lt[lp], me);
                break;
            }
        }
        C->lslot[i] = (uint32_t)lp;
    }
}

/* String key bytes of row i. */
__device__ inline int64_t row_str_bytes(const kn_agg_layout &L, const uint8_t *key)
{
    int64_t b = 0;
    for (int k = 0; L.n_str && k < L.n_keys; k++)
        if (L.key_str[k] >= 0)
            b += ld_u32(key + L.key_off[k]);
    return b;
}

/* Scan functor: a row that is first of a new key counts 1 << 40 plus its
 * string bytes. */
struct new_f {
    const call_t *C;
    __device__ int64_t operator()(int64_t i) const
    {
        if (C->refuse || i >= C->rows_dev || C->gids[i] != MISS || C->lt[C->lslot[i]] != (uint32_t)i + 1)
            return 0;
        return ((int64_t)1 << 40) + row_str_bytes(C->t.L, row_key(C, i));
    }
};

/* ... and its pass 3 inserts the group. */
struct insert_w {
    const call_t *C;
    __device__ void operator()(int64_t i, int64_t off, int64_t v) const
    {
        if (v == 0)
            return;
        const kn_agg_table &t = C->t;
        const kn_agg_layout &L = t.L;
        uint32_t g = (uint32_t)(C->groups0 + (off >> 40));
        int64_t at = C->arena0 + (off & LOW40);
        const uint8_t *key = row_key(C, i);
        uint8_t *dst = t.keys + (int64_t)g * L.stride;
        for (int w = 0; w < L.stride / 8; w++)
            ((uint64_t *)(void *)dst)[w] = ((const uint64_t *)(const void *)key)[w];
        const int64_t *so = C->soff + i * L.n_str;
        for (int k = 0; L.n_str && k < L.n_keys; k++) {
            int j = L.key_str[k];
            if (j < 0)
                continue;
            uint32_t len = ld_u32(key + L.key_off[k]);
            if (len > 0) {   /* (a NULL key's offset is not set) */
                const uint8_t *src = C->bases[j] + so[j];
                for (uint32_t b = 0; b < len; b++)
                    t.arena[at + b] = src[b];
            }
            t.str_off[(int64_t)g * L.n_str + j] = at;
            at += len;
        }
        t.ghash[g] = C->hashes[i];
        C->gids[i] = g;
        index_insert(&t, C->hashes[i], g);
    }
};

/* Rows of keys seen before in this batch take their first row's group. */
__global__ void fill_k(call_t *C)
{
    if (C->refuse)
        return;
    KN_GPU_FOR(i, C->rows_dev)
    if (C->gids[i] == MISS)
        C->gids[i] = C->gids[C->lt[C->lslot[i]] - 1];
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        C->t.hdr->groups = C->groups0 + (C->packed >> 40);
        C->t.hdr->arena_used = C->arena0 + (C->packed & LOW40);
    }
}

/* ---------------------------------------------------------- state folds */

/* *p (a 128-bit sum) += v with two 64-bit atomics. */
__device__ inline void atomic_add128(v16 *p, int64_t v)
{
    unsigned long long lo = (unsigned long long)v, hi = v < 0 ? ~0ULL : 0ULL;
    unsigned long long old = atomicAdd((unsigned long long *)&p->lo, lo);
    hi += old + lo < old ? 1ULL : 0ULL;
    if (hi)
        atomicAdd((unsigned long long *)&p->hi, hi);
}

/* Whether slot sl's updates are atomics (else folded in row order). */
__host__ __device__ inline bool atomic_slot(const kn_agg_slot &sl)
{
    switch (sl.op) {
    case KN_AGG_COUNT_STAR:
    case KN_AGG_COUNT: return true;
    case KN_AGG_SUM:
        return sl.type.id == PA_TYPE_INTEGER || sl.type.id == PA_TYPE_BIGINT ||
               (sl.type.id == PA_TYPE_DECIMAL && sl.type.precision <= PA_DECIMAL64_MAX_PRECISION);
    case KN_AGG_MIN:
    case KN_AGG_MAX: {
        kn__agg_repr r = kn__agg_slot_repr(&sl);
        return r == KN__AGG_R_I32 || r == KN__AGG_R_I64V;
    }
    default: return false;
    }
}

__global__ void fold_atomic_k(const call_t *C)
{
    if (C->refuse)
        return;
    const kn_agg_table &t = C->t;
    const kn_agg_layout &L = t.L;
    bool single = L.n_keys == 0;
    KN_GPU_FOR(i, C->n)
    {
        uint32_t g = single ? 0 : C->gids[i];
        for (int s = 0; s < L.n_slots; s++) {
            const kn_agg_slot &sl = L.slots[s];
            if (!atomic_slot(sl))
                continue;
            const pa_column &c = C->args[s];
            if (sl.op != KN_AGG_COUNT_STAR && !bit(c.validity, i))
                continue;
            void *st = t.state[s];
            switch (sl.op) {
            case KN_AGG_COUNT_STAR:
            case KN_AGG_COUNT: atomicAdd((unsigned long long *)st + g, 1ULL); break;
            case KN_AGG_SUM:
                atomic_add128((v16 *)st + g, c.type.id == PA_TYPE_INTEGER ? (int64_t)((const int32_t *)c.data)[i]
                                                                          : ((const int64_t *)c.data)[i]);
                break;
            default:
                if (kn__agg_slot_repr(&sl) == KN__AGG_R_I32) {
                    int v = ((const int32_t *)c.data)[i];
                    if (sl.op == KN_AGG_MIN)
                        atomicMin((int *)st + g, v);
                    else
                        atomicMax((int *)st + g, v);
                } else {
                    long long v = ((const int64_t *)c.data)[i];
                    if (sl.op == KN_AGG_MIN)
                        atomicMin((long long *)st + g, v);
                    else
                        atomicMax((long long *)st + g, v);
                }
                break;
            }
        }
    }
}

__device__ inline __int128 ld128(const void *p) { return *(const __int128 *)p; }

/* kn__agg_sum128: a sum that overflowed stays at KN__AGG_SUM_OVERFLOW. */
__device__ inline void sum128(__int128 *s, __int128 v)
{
    const __int128 ovf = (__int128)((unsigned __int128)1 << 127);
    if (*s == ovf || v == ovf) {
        *s = ovf;
        return;
    }
    __int128 r = (__int128)((unsigned __int128)*s + (unsigned __int128)v);
    bool o = (v >= 0) ? r < *s : r > *s;
    *s = o ? ovf : r;
}

/* Compare bytes a[0, la) with b[0, lb) as memcmp, then by length. */
__device__ inline int str_cmp(const uint8_t *a, int32_t la, const uint8_t *b, int32_t lb)
{
    int32_t m = la < lb ? la : lb;
    for (int32_t i = 0; i < m; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return (la > lb) - (la < lb);
}

/* Row i of slot s (an order-dependent one) into group g, as update_slot
 * does. shared_arena: other threads append to the arena meanwhile (an
 * atomic reservation instead of the cpu's bump). */
__device__ inline void fold_row(const call_t *C, int s, int64_t i, uint32_t g, bool shared_arena)
{
    const kn_agg_table &t = C->t;
    const kn_agg_slot &sl = t.L.slots[s];
    const pa_column &c = C->args[s];
    if (!bit(c.validity, i))
        return;
    void *st = t.state[s];
    bool mx = sl.op == KN_AGG_MAX;
    switch (kn__agg_slot_repr(&sl)) {
    case KN__AGG_R_IV: kn__agg_iv_take((pa_interval *)st + g, ((const pa_interval *)c.data)[i], mx); break;
    case KN__AGG_R_I128: {
        __int128 *p = (__int128 *)st + g, v = ld128((const __int128 *)c.data + i);
        if (sl.op == KN_AGG_SUM)
            sum128(p, v);
        else if (mx ? v > *p : v < *p)
            *p = v;
        break;
    }
    case KN__AGG_R_F64: {
        double *p = (double *)st + g, v = ((const double *)c.data)[i];
        if (sl.op == KN_AGG_SUM)
            *p += v;
        else if (mx ? v > *p : v < *p)
            *p = v;
        break;
    }
    case KN__AGG_R_U8: {
        uint8_t *p = (uint8_t *)st + g, v = ((const uint8_t *)c.data)[i];
        if (mx ? v > *p : v < *p)
            *p = v;
        break;
    }
    case KN__AGG_R_STR: {
        kn__agg_str *p = (kn__agg_str *)st + g;
        int32_t o = c.offsets[i], len = c.offsets[i + 1] - o;
        const uint8_t *d = (const uint8_t *)c.data + o;
        bool take = !p->set;
        if (!take) {
            int cmp = str_cmp(d, len, t.arena + p->off, p->len);
            take = mx ? cmp > 0 : cmp < 0;
        }
        if (take) {
            int64_t at;
            if (shared_arena) {
                at = (int64_t)atomicAdd((unsigned long long *)&t.hdr->arena_used, (unsigned long long)len);
            } else {
                at = t.hdr->arena_used;
                t.hdr->arena_used = at + len;
            }
            for (int32_t b = 0; b < len; b++)
                t.arena[at + b] = d[b];
            p->off = at;
            p->len = len;
            p->set = 1;
        }
        break;
    }
    default: break;
    }
}

__device__ inline bool ordered_slot(const kn_agg_slot &sl) { return sl.op != KN_AGG_EXTERN && !atomic_slot(sl); }

/* The order-dependent slots, one thread, rows in order: the global
 * aggregate (no keys: the cpu adds a batch's DOUBLE values up first, then
 * into the state) and small batches. */
__global__ void fold_ordered_k(const call_t *C)
{
    if (C->refuse)
        return;
    const kn_agg_table &t = C->t;
    const kn_agg_layout &L = t.L;
    const bool single = L.n_keys == 0;
    const int64_t n = C->n;
    for (int s = 0; s < L.n_slots; s++) {
        const kn_agg_slot &sl = L.slots[s];
        if (!ordered_slot(sl))
            continue;
        if (single && sl.op == KN_AGG_SUM && kn__agg_slot_repr(&sl) == KN__AGG_R_F64) {
            const pa_column &c = C->args[s];
            const double *v = (const double *)c.data;
            double a = 0;
            for (int64_t i = 0; i < n; i++)
                if (bit(c.validity, i))
                    a += v[i];
            *(double *)t.state[s] += a;
            continue;
        }
        for (int64_t i = 0; i < n; i++)
            fold_row(C, s, i, single ? 0 : C->gids[i], false);
    }
}

/* ----------------------------------------------- rows sorted by group id
 * For larger batches with keys the order-dependent slots are folded per
 * group in parallel: the rows are sorted by group id with a stable LSD
 * radix sort (8-bit digits, as many passes as the table's capacity needs),
 * so each group's rows keep their order, and one thread per group folds
 * its run of rows. Each group's state sees the cpu's sequence of
 * operations, so the results are its bits. */

struct rsort_t {
    const call_t *C;
    uint32_t *key[2], *row[2];       /* ping-pong buffers, n each */
    int64_t *tiles;                  /* per tile of PT rows, NB counts */
    int64_t n;
};

__global__ void rs_init_k(rsort_t r)
{
    if (r.C->refuse)
        return;
    KN_GPU_FOR(i, r.n)
    {
        r.key[0][i] = r.C->gids[i];
        r.row[0][i] = (uint32_t)i;
    }
}

/* Per tile: rows per digit of key >> sh. */
__global__ void rs_count_k(rsort_t r, int from, int sh)
{
    __shared__ int64_t cnt[NB];
    int64_t base = (int64_t)blockIdx.x * PT;
    if (r.C->refuse || base >= r.n)
        return;
    cnt[threadIdx.x] = 0;
    __syncthreads();
    int64_t end = base + PT < r.n ? base + PT : r.n;
    for (int64_t i = base + threadIdx.x; i < end; i += THREADS)
        atomicAdd((unsigned long long *)&cnt[(r.key[from][i] >> sh) & (NB - 1)], 1ULL);
    __syncthreads();
    r.tiles[blockIdx.x * NB + threadIdx.x] = cnt[threadIdx.x];
}

/* One block, thread b = digit b: where each tile's rows of digit b go. */
__global__ void rs_offsets_k(rsort_t r)
{
    if (r.C->refuse)
        return;
    int64_t tiles = (r.n + PT - 1) / PT, run = 0, total;
    unsigned b = threadIdx.x;
    for (int64_t x = 0; x < tiles; x++) {
        int64_t c = r.tiles[x * NB + b];
        r.tiles[x * NB + b] = run;
        run += c;
    }
    int64_t at = block_exclusive_scan(run, &total);
    for (int64_t x = 0; x < tiles; x++)
        r.tiles[x * NB + b] += at;
}

/* Per tile: thread b moves the tile's rows of digit b, in order. */
__global__ void rs_scatter_k(rsort_t r, int from, int sh)
{
    __shared__ uint8_t dg[PT];
    int64_t base = (int64_t)blockIdx.x * PT;
    if (r.C->refuse || base >= r.n)
        return;
    int64_t m = base + PT < r.n ? PT : r.n - base;
    for (int64_t j = threadIdx.x; j < m; j += THREADS)
        dg[j] = (uint8_t)((r.key[from][base + j] >> sh) & (NB - 1));
    __syncthreads();
    int64_t off = r.tiles[blockIdx.x * NB + threadIdx.x];
    for (int64_t j = 0; j < m; j++)
        if (dg[j] == threadIdx.x) {
            r.key[1 - from][off] = r.key[from][base + j];
            r.row[1 - from][off] = r.row[from][base + j];
            off++;
        }
}

/* One thread per run of equal group ids: its rows, in order. */
__global__ void fold_sorted_k(rsort_t r, int in)
{
    const call_t *C = r.C;
    if (C->refuse)
        return;
    const kn_agg_layout &L = C->t.L;
    const uint32_t *key = r.key[in], *row = r.row[in];
    KN_GPU_FOR(p, r.n)
    {
        if (p > 0 && key[p - 1] == key[p])
            continue;
        uint32_t g = key[p];
        for (int s = 0; s < L.n_slots; s++) {
            if (!ordered_slot(L.slots[s]))
                continue;
            for (int64_t q = p; q < r.n && key[q] == g; q++)
                fold_row(C, s, row[q], g, true);
        }
    }
}

/* --------------------------------------------------------------- merges */

/* Arena bytes group g of t holds (group_arena). */
__device__ inline int64_t group_arena(const kn_agg_table &t, int64_t g)
{
    const kn_agg_layout &L = t.L;
    int64_t b = 0;
    for (int k = 0; L.n_str && k < L.n_keys; k++)
        if (L.key_str[k] >= 0)
            b += ld_u32(t.keys + g * L.stride + L.key_off[k]);
    for (int s = 0; s < L.n_slots; s++)
        if (kn__agg_slot_repr(&L.slots[s]) == KN__AGG_R_STR) {
            const kn__agg_str *x = (const kn__agg_str *)t.state[s] + g;
            b += x->set ? x->len : 0;
        }
    return b;
}

struct range_bytes_f {
    const call_t *C;
    __device__ int64_t operator()(int64_t i) const
    {
        return C->first + i < C->s.hdr->groups ? group_arena(C->s, C->first + i) : 0;
    }
};

/* merge: the whole source; merge_range: n groups from first (host). */
__global__ void merge_check_k(call_t *C, bool range, fault_t f)
{
    const kn_agg_table &d = C->t, &s = C->s;
    C->groups0 = d.hdr->groups;
    C->arena0 = d.hdr->arena_used;
    if (!range) {
        C->rows_dev = s.hdr->groups;
        if (d.hdr->groups + s.hdr->groups > d.cap_groups || d.hdr->arena_used + s.hdr->arena_used > d.cap_arena) {
            C->refuse = 1;
            f.raise();
        }
        return;
    }
    C->rows_dev = C->n;
    if (C->first + C->n > s.hdr->groups || d.hdr->groups + C->n > d.cap_groups ||
        d.hdr->arena_used + C->bytes > d.cap_arena) {
        C->refuse = 1;
        f.raise();
    }
}

/* Source group first + i into destination group gids[i], every slot. Each
 * destination group has at most one source group (see the notes). */
__global__ void combine_k(const call_t *C)
{
    if (C->refuse)
        return;
    const kn_agg_table &d = C->t, &s = C->s;
    const kn_agg_layout &L = d.L;
    bool single = L.n_keys == 0;
    KN_GPU_FOR(i, C->rows_dev)
    {
        int64_t g = C->first + i;
        uint32_t to = single ? 0 : C->gids[i];
        if (C->gid_map)
            C->gid_map[i] = to;
        for (int sl_i = 0; sl_i < L.n_slots; sl_i++) {
            const kn_agg_slot &sl = L.slots[sl_i];
            bool mn = sl.op == KN_AGG_MIN, mx = sl.op == KN_AGG_MAX;
            void *a = d.state[sl_i];
            const void *b = s.state[sl_i];
            switch (kn__agg_slot_repr(&sl)) {
            case KN__AGG_R_I64: ((int64_t *)a)[to] += ((const int64_t *)b)[g]; break;
#define COMBINE1(T)                                                                                     \
    do {                                                                                              \
        T x = ((const T *)b)[g], *y = &((T *)a)[to];                                                  \
        if (mn) {                                                                                     \
            if (x < *y)                                                                               \
                *y = x;                                                                               \
        } else if (mx) {                                                                              \
            if (x > *y)                                                                               \
                *y = x;                                                                               \
        } else {                                                                                      \
            *y += x;                                                                                  \
        }                                                                                             \
    } while (0)
            case KN__AGG_R_I128:
                if (!mn && !mx)
                    sum128((__int128 *)a + to, ld128((const __int128 *)b + g));
                else
                    COMBINE1(__int128);
                break;
            case KN__AGG_R_F64: COMBINE1(double); break;
            case KN__AGG_R_I32: COMBINE1(int32_t); break;
            case KN__AGG_R_I64V: COMBINE1(int64_t); break;
            case KN__AGG_R_U8: COMBINE1(uint8_t); break;
            case KN__AGG_R_IV: kn__agg_iv_take((pa_interval *)a + to, ((const pa_interval *)b)[g], mx); break;
#undef COMBINE1
            case KN__AGG_R_STR: {
                const kn__agg_str *x = (const kn__agg_str *)b + g;
                kn__agg_str *y = (kn__agg_str *)a + to;
                if (!x->set)
                    break;
                bool take = !y->set;
                if (!take) {
                    int cmp = str_cmp(s.arena + x->off, x->len, d.arena + y->off, y->len);
                    take = mx ? cmp > 0 : cmp < 0;
                }
                if (take) {
                    int64_t at =
                        (int64_t)atomicAdd((unsigned long long *)&d.hdr->arena_used, (unsigned long long)x->len);
                    for (int32_t k = 0; k < x->len; k++)
                        d.arena[at + k] = s.arena[x->off + k];
                    y->off = at;
                    y->len = x->len;
                    y->set = 1;
                }
                break;
            }
            }
        }
    }
}

/* ------------------------------------------------------------ partition */

/* kn_agg_partition_scratch, on the device. */
__device__ inline size_t part_scratch(const kn_agg_layout &L, int64_t groups)
{
    size_t w = (size_t)L.stride > 16 ? (size_t)L.stride : 16;
    if ((size_t)L.n_str * 8 > w)
        w = (size_t)L.n_str * 8;
    size_t g = (size_t)(groups > 0 ? groups : 1);
    return g * (w + 4) + 16 + ((g + PT - 1) / PT + 1) * NB * 8;
}

struct part_t {
    call_t *C;
    uint8_t *scratch;                /* 16-aligned */
    size_t scratch_bytes;
    int64_t *start, *arena;          /* pinned outputs */
};

__device__ inline uint32_t *part_pos(const part_t &p) { return (uint32_t *)(void *)p.scratch; }
__device__ inline int64_t *part_tiles(const part_t &p, int64_t ng)
{
    return (int64_t *)(void *)(p.scratch + (((size_t)(ng > 0 ? ng : 1) * 4 + 15) & ~(size_t)15));
}
__device__ inline uint8_t *part_tmp(const part_t &p, int64_t ng)
{
    int64_t tiles = (ng + PT - 1) / PT + 1;
    return (uint8_t *)(part_tiles(p, ng) + tiles * NB);
}

__global__ void part_check_k(part_t p, fault_t f)
{
    call_t *C = p.C;
    int64_t ng = C->t.hdr->groups;
    C->rows_dev = ng;
    for (int b = 0; b < NB; b++)
        C->bucket_arena[b] = 0;
    if (p.scratch_bytes < part_scratch(C->t.L, ng)) {
        C->refuse = 1;
        f.raise();
    }
}

/* Per tile of PT groups: rows per bucket (and the buckets' arena bytes). */
__global__ void part_count_k(part_t p, bool strs)
{
    __shared__ int64_t cnt[NB];
    const call_t *C = p.C;
    int64_t ng = C->rows_dev, base = (int64_t)blockIdx.x * PT;
    if (C->refuse || base >= ng)
        return;
    cnt[threadIdx.x] = 0;
    __syncthreads();
    int64_t end = base + PT < ng ? base + PT : ng;
    for (int64_t g = base + threadIdx.x; g < end; g += THREADS) {
        int b = (int)(C->t.ghash[g] >> (64 - KN_AGG_PART_BITS));
        atomicAdd((unsigned long long *)&cnt[b], 1ULL);
        if (strs && p.arena)
            atomicAdd((unsigned long long *)&p.C->bucket_arena[b], (unsigned long long)group_arena(C->t, g));
    }
    __syncthreads();
    part_tiles(p, ng)[blockIdx.x * NB + threadIdx.x] = cnt[threadIdx.x];
}

/* One block, thread b = bucket b: tile offsets, bucket starts. */
__global__ void part_offsets_k(part_t p)
{
    const call_t *C = p.C;
    if (C->refuse)
        return;
    int64_t ng = C->rows_dev, tiles = (ng + PT - 1) / PT;
    int64_t *tc = part_tiles(p, ng);
    unsigned b = threadIdx.x;
    int64_t run = 0;
    for (int64_t x = 0; x < tiles; x++) {
        int64_t c = tc[x * NB + b];
        tc[x * NB + b] = run;
        run += c;
    }
    int64_t total;
    int64_t at = block_exclusive_scan(run, &total);
    for (int64_t x = 0; x < tiles; x++)
        tc[x * NB + b] += at;
    p.start[b] = at;
    if (b == NB - 1)
        p.start[NB] = at + run;
    if (p.arena)
        p.arena[b] = C->bucket_arena[b];
}

/* Per tile: each thread places its bucket's groups, in order. */
__global__ void part_pos_k(part_t p)
{
    __shared__ uint8_t bk[PT];
    const call_t *C = p.C;
    int64_t ng = C->rows_dev, base = (int64_t)blockIdx.x * PT;
    if (C->refuse || base >= ng)
        return;
    int64_t m = base + PT < ng ? PT : ng - base;
    for (int64_t j = threadIdx.x; j < m; j += THREADS)
        bk[j] = (uint8_t)(C->t.ghash[base + j] >> (64 - KN_AGG_PART_BITS));
    __syncthreads();
    int64_t off = part_tiles(p, ng)[blockIdx.x * NB + threadIdx.x];
    uint32_t *pos = part_pos(p);
    for (int64_t j = 0; j < m; j++)
        if (bk[j] == threadIdx.x)
            pos[base + j] = (uint32_t)off++;
}

/* tmp[pos[g]] = a[g] (w bytes each), then a = tmp: two kernels. */
__global__ void part_scatter_k(part_t p, uint8_t *a, int64_t w, int64_t bound)
{
    const call_t *C = p.C;
    if (C->refuse)
        return;
    int64_t ng = C->rows_dev;
    const uint32_t *pos = part_pos(p);
    uint8_t *tmp = part_tmp(p, ng);
    KN_GPU_FOR(g, ng < bound ? ng : bound)
    {
        uint8_t *d = tmp + (int64_t)pos[g] * w;
        const uint8_t *s = a + g * w;
        if (w % 8 == 0)
            for (int64_t k = 0; k < w / 8; k++)
                ((uint64_t *)(void *)d)[k] = ((const uint64_t *)(const void *)s)[k];
        else
            for (int64_t k = 0; k < w; k++)
                d[k] = s[k];
    }
}

__global__ void part_back_k(part_t p, uint8_t *a, int64_t w, int64_t bound)
{
    const call_t *C = p.C;
    if (C->refuse)
        return;
    int64_t ng = C->rows_dev;
    const uint8_t *tmp = part_tmp(p, ng);
    int64_t bytes = (ng < bound ? ng : bound) * w;
    KN_GPU_FOR(i, bytes)
    a[i] = tmp[i];
    if (blockIdx.x == 0 && threadIdx.x == 0)
        C->t.hdr->dense = 0;
}

/* ------------------------------------------------------- count distinct */

__global__ void count_distinct_k(const call_t *C, int slot, fault_t f)
{
    const kn_agg_table &t = C->t, &pr = C->s;
    const kn_agg_layout &P = pr.L;
    int64_t ng = t.hdr->groups;
    unsigned long long *cnt = (unsigned long long *)t.state[slot];
    KN_GPU_FOR(g, pr.hdr->groups)
    {
        const uint8_t *key = pr.keys + g * P.stride;
        if (key[P.null_off + 1])
            continue;
        int32_t gid = *(const int32_t *)(const void *)(key + P.key_off[0]);
        if (gid < 0 || gid >= ng) {
            f.raise();
            continue;
        }
        atomicAdd(&cnt[gid], 1ULL);
    }
}

/* ------------------------------------------------------------------ emit */

__global__ void emit_check_k(call_t *C, int64_t first, int64_t count, fault_t f)
{
    if (first + count > C->t.hdr->groups) {
        C->refuse = 1;
        f.raise();
    }
}

struct emit_len_f {
    const call_t *C;
    int key;           /* >= 0: string key; else the STR state of slot `slot` (0 when not shown) */
    int slot, count_slot;
    int64_t first;
    __device__ int64_t operator()(int64_t i) const
    {
        if (C->refuse)
            return 0;
        const kn_agg_table &t = C->t;
        int64_t g = first + i;
        if (key >= 0)
            return ld_u32(t.keys + g * t.L.stride + t.L.key_off[key]);
        const kn__agg_str *x = (const kn__agg_str *)t.state[slot] + g;
        bool ok = x->set && (count_slot < 0 || ((const int64_t *)t.state[count_slot])[g] > 0);
        return ok ? x->len : 0;
    }
};

/* Pass 3 of the string emits: offsets and bytes. */
struct emit_str_w {
    const call_t *C;
    int key, slot;
    int64_t first;
    pa_column out;
    __device__ void operator()(int64_t i, int64_t off, int64_t len) const
    {
        const kn_agg_table &t = C->t;
        int64_t g = first + i;
        const uint8_t *src;
        if (key >= 0)
            src = t.arena + t.str_off[g * t.L.n_str + t.L.key_str[key]];
        else
            src = t.arena + ((const kn__agg_str *)t.state[slot])[g].off;
        uint8_t *dst = (uint8_t *)out.data + off;
        for (int64_t b = 0; b < len; b++)
            dst[b] = src[b];
        out.offsets[i + 1] = (int32_t)(off + len);
        if (i == 0)
            out.offsets[0] = 0;
    }
};

/* Validity bytes of the emitted rows: key's null flags, or count > 0 (and
 * a set string state). */
__global__ void emit_valid_k(const call_t *C, int key, int count_slot, int str_slot, int64_t first, int64_t count,
                             uint8_t *validity)
{
    if (C->refuse)
        return;
    const kn_agg_table &t = C->t;
    KN_GPU_FOR(by, (count + 7) / 8)
    {
        unsigned v = 0;
        for (int b = 0; b < 8; b++) {
            int64_t i = by * 8 + b, g = first + i;
            if (i >= count)
                break;
            bool ok;
            if (key >= 0)
                ok = !t.keys[g * t.L.stride + t.L.null_off + key];
            else
                ok = count_slot < 0 || ((const int64_t *)t.state[count_slot])[g] > 0;
            if (ok && str_slot >= 0)
                ok = ((const kn__agg_str *)t.state[str_slot])[g].set != 0;
            v |= (unsigned)ok << b;
        }
        validity[by] = (uint8_t)v;
    }
}

__global__ void emit_key_k(const call_t *C, int key, int64_t first, int64_t count, int w, uint8_t *out)
{
    if (C->refuse)
        return;
    const kn_agg_table &t = C->t;
    KN_GPU_FOR(i, count)
    {
        const uint8_t *src = t.keys + (first + i) * t.L.stride + t.L.key_off[key];
        for (int b = 0; b < w; b++)
            out[i * w + b] = src[b];
    }
}


struct emit_args {
    kn_agg_fin f;
    int64_t first, count;
    pa_column out;
    int scale;
};

__global__ void emit_k(const call_t *C, emit_args a, fault_t big, fault_t dec, fault_t avg)
{
    if (C->refuse)
        return;
    const kn_agg_table &t = C->t;
    const kn_agg_layout &L = t.L;
    const kn_agg_slot &vs = L.slots[a.f.value_slot];
    const void *sv = t.state[a.f.value_slot];
    const int64_t *cnt = a.f.kind == KN_AGG_FIN_COUNT ? NULL : (const int64_t *)t.state[a.f.count_slot];
    KN_GPU_FOR(i, a.count)
    {
        int64_t g = a.first + i;
        switch (a.f.kind) {
        case KN_AGG_FIN_COUNT: ((int64_t *)a.out.data)[i] = ((const int64_t *)sv)[g]; break;
        case KN_AGG_FIN_SUM:
            if (pa_type_is_float(vs.type.id)) {
                ((double *)a.out.data)[i] = ((const double *)sv)[g];
            } else {
                __int128 v = ld128((const __int128 *)sv + g);
                if (a.out.type.id == PA_TYPE_BIGINT) {
                    if (v > INT64_MAX || v < INT64_MIN)
                        big.raise();
                    ((int64_t *)a.out.data)[i] = (int64_t)v;
                } else {
                    const __int128 lim = (__int128)100000000000000000LL * (__int128)100000000000000000LL * 10000;
                    if (v >= lim || v <= -lim)
                        dec.raise();
                    *((__int128 *)a.out.data + i) = v;
                }
            }
            break;
        case KN_AGG_FIN_AVG: {
            int64_t c = cnt[g];
            double r = 0;
            if (c == 0)
                r = 0;
            else if (pa_type_is_float(vs.type.id))
                r = ((const double *)sv)[g] / (double)c;
            else if (ld128((const __int128 *)sv + g) == (__int128)((unsigned __int128)1 << 127))
                avg.raise();
            else
                r = avg_ext(ld128((const __int128 *)sv + g), c, a.scale);
            ((double *)a.out.data)[i] = r;
            break;
        }
        case KN_AGG_FIN_MINMAX: {
            int w = L.slot_width[a.f.value_slot];
            const uint8_t *src = (const uint8_t *)sv + g * w;
            uint8_t *dst = (uint8_t *)a.out.data + i * w;
            for (int b = 0; b < w; b++)
                dst[b] = src[b];
            break;
        }
        }
    }
}

/* ---------------------------------------------------------------- host */

inline size_t up16(size_t n) { return (n + 15) & ~(size_t)15; }

/* Publish t's sizes (a call that changes nothing, as every call must). */
inline int publish_only(const kn_ctx *ctx, const kn_agg_table *t, pa_err *err)
{
    dv_poison_output(ctx->dev, t->sizes, 2 * sizeof *t->sizes);
    kn_agg_table *dt = NULL;
    int rc = stage(ctx, *t, &dt, err);
    return rc == PA_OK ? free_after(ctx, dt, publish(ctx, dt, err), err) : rc;
}

/* Publish t's sizes and refuse with a message (the host found out). */
inline int refuse_host(const kn_ctx *ctx, const kn_agg_table *t, pa_err *err, const char *msg)
{
    int rc = publish_only(ctx, t, err);
    return rc != PA_OK ? rc : pa_error(err, PA_EINVAL, "%s", msg);
}

} /* namespace */

extern "C" {

int SIMT_NAME(kn__gpu_agg_table_init)(const kn_ctx *ctx, kn_agg_table *t, const kn_agg_layout *L, void *mem,
                                      int64_t cap_groups, int64_t cap_arena, int64_t *sizes, pa_err *err)
{
    int rc = kn__agg_table_layout(t, L, mem, cap_groups, cap_arena, sizes, err);
    if (rc != PA_OK)
        return rc;
    dv_poison_output(ctx->dev, sizes, 2 * sizeof *sizes);
    uint8_t zero[8] = {0};
    uint64_t h0 = L->n_keys == 0 ? kn__agg_hash_key(L, zero, NULL, NULL) : 0;
    kn_agg_table *dt = NULL;
    if ((rc = stage(ctx, *t, &dt, err)) != PA_OK)
        return rc;
    unsigned nb = blocks_for(cap_groups);
    uint64_t iw = t->index_mask + 1;
    unsigned ib = blocks_for((int64_t)(iw > KN_AGG_DENSE_CODES ? iw : KN_AGG_DENSE_CODES));
    rc = SIMT_LAUNCH(init_states_k, nb, THREADS, 0, ctx->stream, err, (const kn_agg_table *)dt);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(clear_index_k, ib, THREADS, 0, ctx->stream, err, (const kn_agg_table *)dt);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(init_hdr_k, 1, 1, 0, ctx->stream, err, (const kn_agg_table *)dt, h0);
    return free_after(ctx, dt, rc, err);
}

int SIMT_NAME(kn__gpu_agg_table_move)(const kn_ctx *ctx, kn_agg_table *dst, const kn_agg_table *src, pa_err *err)
{
    const kn_agg_layout *L = &src->L;
    if (dst->L.stride != L->stride || dst->L.n_slots != L->n_slots)
        return refuse_host(ctx, dst, err, "aggregation table move: destination too small or of another layout");
    dv_poison_output(ctx->dev, dst->sizes, 2 * sizeof *dst->sizes);
    call_t c;
    memset(&c, 0, sizeof c);
    c.t = *dst;
    c.s = *src;
    call_t *C = NULL;
    int rc = stage(ctx, c, &C, err);
    if (rc != PA_OK)
        return rc;
    fault_t f = fault_of(ctx, PA_EINVAL, "aggregation table move: destination too small or of another layout");
    const int64_t cap = src->cap_groups;
    rc = SIMT_LAUNCH(move_check_k, 1, 1, 0, ctx->stream, err, C, f);
    const int32_t *ref = &C->refuse;
    const int64_t *ng = &C->groups0, *na = &C->arena0;
    /* group-indexed arrays: keys, string offsets, hashes, states */
    struct arr {
        uint8_t *d;
        const uint8_t *s;
        int64_t w;
    } arrs[4 + KN_AGG_MAX_SLOTS];
    int na_ = 0;
    arrs[na_++] = arr{dst->keys, src->keys, L->stride};
    if (L->n_str)
        arrs[na_++] = arr{(uint8_t *)dst->str_off, (const uint8_t *)src->str_off, (int64_t)L->n_str * 8};
    arrs[na_++] = arr{(uint8_t *)dst->ghash, (const uint8_t *)src->ghash, 8};
    for (int s = 0; s < L->n_slots; s++)
        arrs[na_++] = arr{(uint8_t *)dst->state[s], (const uint8_t *)src->state[s], L->slot_width[s]};
    for (int k = 0; k < na_ && rc == PA_OK; k++)
        rc = SIMT_LAUNCH(copy_k, blocks_for(cap * arrs[k].w / 8 + 1), THREADS, 0, ctx->stream, err, arrs[k].d,
                         arrs[k].s, ng, arrs[k].w, cap * arrs[k].w, ref);
    if (rc == PA_OK && src->cap_arena > 0)
        rc = SIMT_LAUNCH(copy_k, blocks_for(src->cap_arena / 8 + 1), THREADS, 0, ctx->stream, err, dst->arena,
                         (const uint8_t *)src->arena, na, (int64_t)1, src->cap_arena, ref);
    /* (the dense map is not used by these kernels: not copied) */
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(clear_index_k, blocks_for((int64_t)dst->index_mask + 1), THREADS, 0, ctx->stream, err,
                         (const kn_agg_table *)&C->t);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(move_index_k, blocks_for(cap), THREADS, 0, ctx->stream, err, (const call_t *)C);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(move_hdr_k, 1, 1, 0, ctx->stream, err, C);
    if (rc == PA_OK)
        rc = publish(ctx, &C->t, err);
    return free_after(ctx, C, rc, err);
}

int SIMT_NAME(kn__gpu_agg_input_bytes)(const kn_ctx *ctx, const kn_agg_table *t, const pa_column *keys,
                                       const pa_column *args, int64_t n, int64_t *out, pa_err *err)
{
    call_t c;
    memset(&c, 0, sizeof c);
    c.t = *t;
    for (int k = 0; k < t->L.n_keys; k++)
        c.keys[k] = keys[k];
    for (int s = 0; args && s < t->L.n_slots; s++)
        c.args[s] = args[s];
    dv_poison_output(ctx->dev, out, sizeof *out);
    call_t *C = NULL;
    int rc = stage(ctx, c, &C, err);
    if (rc != PA_OK)
        return rc;
    rc = SIMT_LAUNCH(input_bytes_k, 1, 1, 0, ctx->stream, err, (const call_t *)C, n, out);
    return free_after(ctx, C, rc, err);
}

/* The grouping steps shared by update and the merges: probe, local dedup,
 * ordered insert, fill. `bound` is the host's bound of the rows. */
static int group_rows(const kn_ctx *ctx, call_t *C, int64_t bound, bool unique, pa_err *err)
{
    fault_t dup = fault_of(ctx, PA_EINVAL, "aggregation merge: two source groups have one key (key0_map not one to one)");
    int rc = SIMT_LAUNCH(probe_k, blocks_for(bound), THREADS, 0, ctx->stream, err, (const call_t *)C, unique, dup);
    if (rc == PA_OK)
        rc = scan(ctx, bound, new_f{C}, insert_w{C}, NULL, &C->packed, err);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(fill_k, blocks_for(bound), THREADS, 0, ctx->stream, err, C);
    return rc;
}

static uint64_t pow2_at_least(uint64_t x)
{
    uint64_t p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

int SIMT_NAME(kn__gpu_agg_update)(const kn_ctx *ctx, kn_agg_table *t, const pa_column *keys, const pa_column *args,
                                  int64_t n, void *scratch, size_t scratch_bytes, uint32_t *gids, pa_err *err)
{
    const kn_agg_layout *L = &t->L;
    if (n <= 0)
        return publish_only(ctx, t, err);
    if (scratch_bytes < kn_agg_update_scratch(L, n))
        return refuse_host(ctx, t, err, "aggregation update: table or scratch too small");
    dv_poison_output(ctx->dev, t->sizes, 2 * sizeof *t->sizes);
    call_t c;
    memset(&c, 0, sizeof c);
    c.t = *t;
    for (int k = 0; k < L->n_keys; k++) {
        c.keys[k] = keys[k];
        if (L->key_str[k] >= 0)
            c.bases[L->key_str[k]] = (const uint8_t *)keys[k].data;
    }
    for (int s = 0; args && s < L->n_slots; s++)
        c.args[s] = args[s];
    uint8_t *p = (uint8_t *)(((uintptr_t)scratch + 15) & ~(uintptr_t)15);
    c.rows = p, p += up16((size_t)n * L->stride);
    c.soff = (int64_t *)(void *)p, p += up16((size_t)n * L->n_str * 8);
    c.hashes = (uint64_t *)(void *)p, p += up16((size_t)n * 8);
    c.lslot = (uint32_t *)(void *)p, p += up16((size_t)n * 4);
    c.gids = gids ? gids : (uint32_t *)(void *)p;
    p += up16((size_t)n * 4);
    c.lt = (uint32_t *)(void *)p;
    c.lmask = pow2_at_least(2 * (uint64_t)n) - 1;
    p += up16((c.lmask + 1) * 4);
    uint32_t *rs_mem = (uint32_t *)(void *)p;   /* the radix sort's buffers (fold_sorted_k) */
    p += up16((size_t)n * 16);
    int64_t *rs_tiles = (int64_t *)(void *)p;
    c.n = n;
    call_t *C = NULL;
    int rc = stage(ctx, c, &C, err);
    if (rc != PA_OK)
        return rc;
    fault_t f = fault_of(ctx, PA_EINVAL, "aggregation update: table or scratch too small");
    rc = SIMT_LAUNCH(update_check_k, 1, 1, 0, ctx->stream, err, C, f);
    if (L->n_keys > 0) {
        if (rc == PA_OK)
            rc = SIMT_LAUNCH(normalise_k, blocks_for(n), THREADS, 0, ctx->stream, err, (const call_t *)C);
        if (rc == PA_OK)
            rc = group_rows(ctx, C, n, false, err);
    } else if (gids && rc == PA_OK) {
        rc = SIMT_LAUNCH(zero_k, blocks_for(n), THREADS, 0, ctx->stream, err, gids, n);
    }
    bool ordered = false;
    for (int s = 0; s < L->n_slots; s++)
        ordered |= L->slots[s].op != KN_AGG_EXTERN && !atomic_slot(L->slots[s]);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(fold_atomic_k, blocks_for(n), THREADS, 0, ctx->stream, err, (const call_t *)C);
    if (rc == PA_OK && ordered) {
        if (L->n_keys == 0 || n < ORDERED_SORT_ROWS) {
            rc = SIMT_LAUNCH(fold_ordered_k, 1, 1, 0, ctx->stream, err, (const call_t *)C);
        } else {
            rsort_t r;
            r.C = C;
            r.n = n;
            r.key[0] = rs_mem, r.row[0] = rs_mem + n, r.key[1] = rs_mem + 2 * n, r.row[1] = rs_mem + 3 * n;
            r.tiles = rs_tiles;
            unsigned tiles = (unsigned)((n + PT - 1) / PT);
            int passes = 1;
            while (passes < 4 && ((uint64_t)t->cap_groups - 1) >> (8 * passes))
                passes++;
            rc = SIMT_LAUNCH(rs_init_k, blocks_for(n), THREADS, 0, ctx->stream, err, r);
            for (int pass = 0; pass < passes && rc == PA_OK; pass++) {
                int from = pass & 1;
                rc = SIMT_LAUNCH(rs_count_k, tiles, THREADS, 0, ctx->stream, err, r, from, 8 * pass);
                if (rc == PA_OK)
                    rc = SIMT_LAUNCH(rs_offsets_k, 1, THREADS, 0, ctx->stream, err, r);
                if (rc == PA_OK)
                    rc = SIMT_LAUNCH(rs_scatter_k, tiles, THREADS, 0, ctx->stream, err, r, from, 8 * pass);
            }
            if (rc == PA_OK)
                rc = SIMT_LAUNCH(fold_sorted_k, blocks_for(n), THREADS, 0, ctx->stream, err, r, passes & 1);
        }
    }
    if (rc == PA_OK)
        rc = publish(ctx, &C->t, err);
    return free_after(ctx, C, rc, err);
}

/* merge (range false: the whole source, key0_map, gid_map) and merge_range. */
static int merge(const kn_ctx *ctx, kn_agg_table *dst, const kn_agg_table *src, bool range, int64_t first, int64_t n,
                 const uint32_t *key0_map, uint32_t *gid_map, pa_err *err)
{
    const kn_agg_layout *L = &dst->L;
    if (src->L.stride != L->stride || src->L.n_slots != L->n_slots || src->L.n_keys != L->n_keys)
        return refuse_host(ctx, dst, err, "aggregation merge: tables of different layouts");
    if (key0_map && (L->n_keys < 1 || L->key_types[0].id != PA_TYPE_INTEGER))
        return refuse_host(ctx, dst, err, "aggregation merge: key 0 is not an INTEGER group id");
    if (range && (first < 0 || n < 0 || first + n > src->cap_groups))
        return refuse_host(ctx, dst, err, "aggregation merge: range out of the source's groups");
    dv_poison_output(ctx->dev, dst->sizes, 2 * sizeof *dst->sizes);
    int64_t bound = range ? n : src->cap_groups;
    call_t c;
    memset(&c, 0, sizeof c);
    c.t = *dst;
    c.s = *src;
    c.first = range ? first : 0;
    c.n = range ? n : 0;
    c.key0_map = key0_map;
    c.gid_map = gid_map;
    for (int j = 0; j < L->n_str; j++)
        c.bases[j] = src->arena;
    /* temporary: rewritten keys (key0_map), hashes, gids, local slots, the local table */
    uint64_t lw = pow2_at_least(2 * (uint64_t)(bound > 0 ? bound : 1));
    size_t g = (size_t)(bound > 0 ? bound : 1);
    size_t bytes = (key0_map ? up16(g * L->stride) + up16(g * 8) : 0) + up16(g * 4) * 2 + up16(lw * 4);
    uint8_t *tmp = NULL;
    int rc = dv_alloc(ctx->dev, bytes, (void **)&tmp, err);
    if (rc != PA_OK)
        return rc;
    uint8_t *p = tmp;
    if (key0_map) {
        c.rows = p, p += up16(g * L->stride);
        c.hashes = (uint64_t *)(void *)p, p += up16(g * 8);
    } else {
        c.rows = src->keys + (size_t)c.first * L->stride;
        c.hashes = src->ghash + c.first;
    }
    c.soff = src->str_off + (size_t)c.first * L->n_str;
    c.gids = (uint32_t *)(void *)p, p += up16(g * 4);
    c.lslot = (uint32_t *)(void *)p, p += up16(g * 4);
    c.lt = (uint32_t *)(void *)p;
    c.lmask = lw - 1;
    call_t *C = NULL;
    if ((rc = stage(ctx, c, &C, err)) != PA_OK) {
        dv_free(ctx->dev, tmp);
        return rc;
    }
    if (range && src->cap_arena > 0)
        rc = scan(ctx, n, range_bytes_f{C}, no_write{}, NULL, &C->bytes, err);
    fault_t f = range ? fault_of(ctx, PA_EINVAL, "aggregation merge: range out of the source's groups or "
                                                 "destination too small")
                      : fault_of(ctx, PA_EINVAL, "aggregation merge: destination too small");
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(merge_check_k, 1, 1, 0, ctx->stream, err, C, range, f);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(merge_prep_k, blocks_for(bound), THREADS, 0, ctx->stream, err, C);
    if (rc == PA_OK && L->n_keys > 0)
        rc = group_rows(ctx, C, bound, true, err);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(combine_k, blocks_for(bound), THREADS, 0, ctx->stream, err, (const call_t *)C);
    if (rc == PA_OK)
        rc = publish(ctx, &C->t, err);
    rc = free_after(ctx, C, rc, err);
    return free_after(ctx, tmp, rc, err);
}

int SIMT_NAME(kn__gpu_agg_merge)(const kn_ctx *ctx, kn_agg_table *dst, const kn_agg_table *src,
                                 const uint32_t *key0_map, uint32_t *gid_map, pa_err *err)
{
    return merge(ctx, dst, src, false, 0, 0, key0_map, gid_map, err);
}

int SIMT_NAME(kn__gpu_agg_merge_range)(const kn_ctx *ctx, kn_agg_table *dst, const kn_agg_table *src, int64_t first,
                                       int64_t n, pa_err *err)
{
    return merge(ctx, dst, src, true, first, n, NULL, NULL, err);
}

int SIMT_NAME(kn__gpu_agg_partition)(const kn_ctx *ctx, kn_agg_table *t, void *scratch, size_t scratch_bytes,
                                     int64_t *start, int64_t *arena, pa_err *err)
{
    const kn_agg_layout *L = &t->L;
    if (!start || !scratch)
        return pa_error(err, PA_EINVAL, "aggregation partition: no output array or scratch too small");
    dv_poison_output(ctx->dev, start, (NB + 1) * sizeof *start);
    if (arena)
        dv_poison_output(ctx->dev, arena, NB * sizeof *arena);
    call_t c;
    memset(&c, 0, sizeof c);
    c.t = *t;
    call_t *C = NULL;
    int rc = stage(ctx, c, &C, err);
    if (rc != PA_OK)
        return rc;
    uint8_t *s16 = (uint8_t *)(((uintptr_t)scratch + 15) & ~(uintptr_t)15);
    part_t p = {C, s16, scratch_bytes, start, arena};   /* (the size formula counts the alignment) */
    bool strs = L->n_str > 0;
    for (int s = 0; s < L->n_slots; s++)
        strs |= kn__agg_slot_repr(&L->slots[s]) == KN__AGG_R_STR;
    const int64_t cap = t->cap_groups;
    unsigned tiles = (unsigned)((cap + PT - 1) / PT);
    fault_t f = fault_of(ctx, PA_EINVAL, "aggregation partition: no output array or scratch too small");
    rc = SIMT_LAUNCH(part_check_k, 1, 1, 0, ctx->stream, err, p, f);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(part_count_k, tiles, THREADS, 0, ctx->stream, err, p, strs);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(part_offsets_k, 1, THREADS, 0, ctx->stream, err, p);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(part_pos_k, tiles, THREADS, 0, ctx->stream, err, p);
    struct arr {
        uint8_t *a;
        int64_t w;
    } arrs[3 + KN_AGG_MAX_SLOTS];
    int na = 0;
    arrs[na++] = arr{t->keys, L->stride};
    if (L->n_str)
        arrs[na++] = arr{(uint8_t *)t->str_off, (int64_t)L->n_str * 8};
    arrs[na++] = arr{(uint8_t *)t->ghash, 8};
    for (int s = 0; s < L->n_slots; s++)
        arrs[na++] = arr{(uint8_t *)t->state[s], L->slot_width[s]};
    for (int k = 0; k < na && rc == PA_OK; k++) {
        rc = SIMT_LAUNCH(part_scatter_k, blocks_for(cap), THREADS, 0, ctx->stream, err, p, arrs[k].a, arrs[k].w, cap);
        if (rc == PA_OK)
            rc = SIMT_LAUNCH(part_back_k, blocks_for(cap * arrs[k].w), THREADS, 0, ctx->stream, err, p, arrs[k].a,
                             arrs[k].w, cap);
    }
    return free_after(ctx, C, rc, err);
}

int SIMT_NAME(kn__gpu_agg_count_distinct)(const kn_ctx *ctx, kn_agg_table *t, int slot, const kn_agg_table *pairs,
                                          pa_err *err)
{
    const kn_agg_layout *P = &pairs->L;
    if (slot < 0 || slot >= t->L.n_slots || t->L.slots[slot].op != KN_AGG_EXTERN || P->n_keys != 2 ||
        P->key_types[0].id != PA_TYPE_INTEGER)
        return pa_error(err, PA_EINVAL, "count distinct: bad slot or pair table");
    call_t c;
    memset(&c, 0, sizeof c);
    c.t = *t;
    c.s = *pairs;
    call_t *C = NULL;
    int rc = stage(ctx, c, &C, err);
    if (rc != PA_OK)
        return rc;
    fault_t f = fault_of(ctx, PA_EINVAL, "count distinct: a group id out of range");
    rc = SIMT_LAUNCH(count_distinct_k, blocks_for(pairs->cap_groups), THREADS, 0, ctx->stream, err,
                     (const call_t *)C, slot, f);
    return free_after(ctx, C, rc, err);
}

/* Stage t and check [first, first + count) against its groups. */
static int emit_begin(const kn_ctx *ctx, const kn_agg_table *t, int64_t first, int64_t count, call_t **C,
                      pa_err *err)
{
    call_t c;
    memset(&c, 0, sizeof c);
    c.t = *t;
    int rc = stage(ctx, c, C, err);
    if (rc != PA_OK)
        return rc;
    fault_t f = fault_of(ctx, PA_EINVAL, "aggregation emit: groups out of range");
    rc = SIMT_LAUNCH(emit_check_k, 1, 1, 0, ctx->stream, err, *C, first, count, f);
    if (rc != PA_OK) {
        free_after(ctx, *C, rc, err);
        *C = NULL;
    }
    return rc;
}

int SIMT_NAME(kn__gpu_agg_emit_bytes)(const kn_ctx *ctx, const kn_agg_table *t, int key, const kn_agg_fin *f,
                                      int64_t first, int64_t count, int64_t *out, pa_err *err)
{
    const kn_agg_layout *L = &t->L;
    if (first < 0 || count < 0)
        return pa_error(err, PA_EINVAL, "aggregation emit: groups %lld+%lld out of range", (long long)first,
                        (long long)count);
    if (key >= 0 && (key >= L->n_keys || !pa_type_is_varlen(L->key_types[key].id)))
        return pa_error(err, PA_EINVAL, "aggregation emit: key %d is not a string", key);
    if (key < 0 && (!f || f->value_slot < 0 || f->value_slot >= L->n_slots ||
                    kn__agg_slot_repr(&L->slots[f->value_slot]) != KN__AGG_R_STR))
        return pa_error(err, PA_EINVAL, "aggregation emit: result is not a string");
    dv_poison_output(ctx->dev, out, sizeof *out);
    call_t *C = NULL;
    int rc = emit_begin(ctx, t, first, count, &C, err);
    if (rc != PA_OK)
        return rc;
    /* the cpu counts every set string state (count_slot -1 here) */
    emit_len_f len{C, key, key >= 0 ? -1 : f->value_slot, -1, first};
    rc = scan(ctx, count, len, no_write{}, NULL, out, err);
    return free_after(ctx, C, rc, err);
}

int SIMT_NAME(kn__gpu_agg_emit_key)(const kn_ctx *ctx, const kn_agg_table *t, int key, int64_t first, int64_t count,
                                    pa_column *out, pa_err *err)
{
    const kn_agg_layout *L = &t->L;
    if (key < 0 || key >= L->n_keys || first < 0 || count < 0)
        return pa_error(err, PA_EINVAL, "aggregation emit: key %d, groups %lld+%lld out of range", key,
                        (long long)first, (long long)count);
    call_t *C = NULL;
    int rc = emit_begin(ctx, t, first, count, &C, err);
    if (rc != PA_OK)
        return rc;
    pa_type ty = L->key_types[key];
    if (pa_type_is_varlen(ty.id)) {
        if (count == 0)
            rc = SIMT_LAUNCH(store_k<int32_t>, 1, 1, 0, ctx->stream, err, out->offsets, (int32_t)0);
        else
            rc = scan(ctx, count, emit_len_f{C, key, -1, -1, first}, emit_str_w{C, key, -1, first, *out}, NULL, NULL,
                      err);
    } else {
        rc = SIMT_LAUNCH(emit_key_k, blocks_for(count), THREADS, 0, ctx->stream, err, (const call_t *)C, key, first,
                         count, pa_type_bytes(ty), (uint8_t *)out->data);
    }
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(emit_valid_k, blocks_for((count + 7) / 8), THREADS, 0, ctx->stream, err, (const call_t *)C,
                         key, -1, -1, first, count, out->validity);
    return free_after(ctx, C, rc, err);
}

int SIMT_NAME(kn__gpu_agg_emit)(const kn_ctx *ctx, const kn_agg_table *t, const kn_agg_fin *f, int64_t first,
                                int64_t count, pa_column *out, pa_err *err)
{
    const kn_agg_layout *L = &t->L;
    if (first < 0 || count < 0 || f->value_slot < 0 || f->value_slot >= L->n_slots ||
        (f->kind != KN_AGG_FIN_COUNT && (f->count_slot < 0 || f->count_slot >= L->n_slots)) ||
        (int)f->kind < KN_AGG_FIN_COUNT || f->kind > KN_AGG_FIN_MINMAX)
        return pa_error(err, PA_EINVAL, "aggregation emit: bad result spec or range");
    call_t *C = NULL;
    int rc = emit_begin(ctx, t, first, count, &C, err);
    if (rc != PA_OK)
        return rc;
    const kn_agg_slot *vs = &L->slots[f->value_slot];
    int cs = f->kind == KN_AGG_FIN_COUNT ? -1 : f->count_slot;
    if (f->kind == KN_AGG_FIN_MINMAX && kn__agg_slot_repr(vs) == KN__AGG_R_STR) {
        if (count == 0)
            rc = SIMT_LAUNCH(store_k<int32_t>, 1, 1, 0, ctx->stream, err, out->offsets, (int32_t)0);
        else
            rc = scan(ctx, count, emit_len_f{C, -1, f->value_slot, cs, first},
                      emit_str_w{C, -1, f->value_slot, first, *out}, NULL, NULL, err);
        if (rc == PA_OK)
            rc = SIMT_LAUNCH(emit_valid_k, blocks_for((count + 7) / 8), THREADS, 0, ctx->stream, err,
                             (const call_t *)C, -1, cs, f->value_slot, first, count, out->validity);
        return free_after(ctx, C, rc, err);
    }
    emit_args a;
    memset(&a, 0, sizeof a);
    a.f = *f;
    a.first = first;
    a.count = count;
    a.out = *out;
    a.scale = vs->type.id == PA_TYPE_DECIMAL ? vs->type.scale : 0;
    fault_t big = fault_of(ctx, PA_EOVERFLOW, "SUM overflows BIGINT");
    fault_t dec = fault_of(ctx, PA_EOVERFLOW, "SUM overflows DECIMAL(38)");
    fault_t avg = fault_of(ctx, PA_EOVERFLOW, "AVG overflows: the sum of its DECIMAL(38) values passes 128 bits");
    rc = SIMT_LAUNCH(emit_k, blocks_for(count), THREADS, 0, ctx->stream, err, (const call_t *)C, a, big, dec, avg);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(emit_valid_k, blocks_for((count + 7) / 8), THREADS, 0, ctx->stream, err, (const call_t *)C,
                         -1, cs, -1, first, count, out->validity);
    return free_after(ctx, C, rc, err);
}

} /* extern "C" */
