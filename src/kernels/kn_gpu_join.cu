/*
 * kn_gpu_join.cu - CUDA kernels for the hash join: the table build
 * (lock-free inserts with atomicCAS, the layout of kn_join.c) and the probe
 * for INNER, LEFT, SEMI, ANTI and MARK joins with the probe filter and the
 * resumable cursor. See kn_gpu.h for how entries, scans and errors work.
 *
 * Build
 * - One thread per build row (grid-stride). A packed key claims an empty
 *   slot (row1 0 -> BUSY), writes the key, fences, publishes row + 1; an
 *   equal key prepends its row to the chain with a CAS of the head, next[r]
 *   fenced before. Tagged slots go in with one 64-bit CAS.
 * - Counters (distinct keys, NULL-key rows, duplicate seen) are device
 *   atomics in the table (kn_join_table.counters); a one-thread kernel at
 *   the end of each call copies them into the pinned info. Several calls
 *   may build one table at once from several streams: the duplicate flag
 *   only ever clears info->unique (never sets it back), so a copy that runs
 *   late cannot make a table with duplicates look unique.
 * Probe
 * - The device-wide scan of kn_gpu.h over the probe rows from the cursor's
 *   row: passes 1 and 3 find each row's chain head (stored in the scratch)
 *   and its output count (chain length, 1 for a LEFT miss or any MARK row,
 *   0/1 for SEMI and ANTI); pass 3 writes each row's outputs at its offset. The
 *   first row that does not fit the capacity (atomicMin) is where the
 *   cursor stops, as on the cpu: mid-chain, the next build row of the chain
 *   goes to the cursor. A last one-thread kernel writes the cursor.
 * - The table's unique flag and NULL-key count come from the device
 *   counters, so a probe never reads the pinned info.
 */
#include "kernels/kn_gpu.h"

using namespace kn_gpu;

namespace {

/* Key columns by value (CUDA copies kernel parameters; no pointer to the
 * host's arrays reaches the device). */
struct keys_t {
    pa_column c[KN_JOIN_MAX_KEYS];
    int n;
};

__device__ inline bool keys_valid(const keys_t &k, int64_t r)
{
    for (int j = 0; j < k.n; j++)
        if (!bit(k.c[j].validity, r))
            return false;
    return true;
}

__device__ inline uint64_t pack_row(const keys_t &k, int64_t r)
{
    if (k.n == 1)
        return (uint64_t)kn__ld_int(&k.c[0], kn__key_class(k.c[0].type), r);
    return (uint64_t)(uint32_t)kn__ld_int(&k.c[0], kn__key_class(k.c[0].type), r) |
           (uint64_t)(uint32_t)kn__ld_int(&k.c[1], kn__key_class(k.c[1].type), r) << 32;
}

/* Column a's row ra equals column b's row rb (key comparison rules). */
__device__ inline bool col_eq(const pa_column &a, const pa_column &b, int64_t ra, int64_t rb)
{
    kn__keypair kp;
    kp.a = &a;
    kp.b = &b;
    kp.ka = kn__key_class(a.type);
    kp.kb = kn__key_class(b.type);
    kp.cmp = kn__kc_is_int(kp.ka) && kn__kc_is_int(kp.kb) ? KN__KC_I64
             : kp.ka == KN__KC_F64 || kp.ka == KN__KC_STR ? (int)kp.ka
                                                          : KN__KC_I128;
    return kn__key_eq1(&kp, ra, rb);
}

/* Key columns a (rows ra) and b (rows rb) equal, every column. */
__device__ inline bool keys_eq(const keys_t &a, const keys_t &b, int64_t ra, int64_t rb)
{
    for (int j = 0; j < a.n; j++)
        if (!col_eq(a.c[j], b.c[j], ra, rb))
            return false;
    return true;
}

/* Clear bit i of a bitmap with an atomic on the 4-byte word holding it
 * (other threads clear other bits of the same byte). */
__device__ inline void clear_bit(uint8_t *bits, int64_t i)
{
    uint8_t *byte = bits + (i >> 3);
    unsigned *word = (unsigned *)((uintptr_t)byte & ~(uintptr_t)3);
    atomicAnd(word, ~(1u << (((uintptr_t)byte & 3) * 8 + (i & 7))));
}

/* OR v into byte i with an atomic on its 4-byte word. */
__device__ inline void or_byte(uint8_t *bytes, int64_t i, unsigned v)
{
    uint8_t *byte = bytes + i;
    unsigned *word = (unsigned *)((uintptr_t)byte & ~(uintptr_t)3);
    atomicOr(word, v << (((uintptr_t)byte & 3) * 8));
}

/* ---------------------------------------------------------------- build */

__global__ void build_begin_k(kn_join_table t, uint64_t lo, uint64_t hi)
{
    uint64_t words = t.packed ? 2 : 1;
    uint64_t *slots = (uint64_t *)t.slots;
    KN_GPU_FOR(i, (int64_t)((hi - lo) * words))
    slots[lo * words + (uint64_t)i] = 0;
    if (lo == 0) {
        int64_t fw = t.filter ? (int64_t)(((uint64_t)1 << (64 - t.filter_shift)) / 64) : 0;
        KN_GPU_FOR(i, fw)
        t.filter[i] = 0;
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            t.counters[KN__JC_DISTINCT] = t.counters[KN__JC_NULLS] = t.counters[KN__JC_DUP] = 0;
            t.info->distinct_keys = 0;
            t.info->null_key_rows = 0;
            t.info->unique = 1;
        }
    }
}

__device__ inline unsigned load_row1(const kn__pslot *s) { return *(volatile const unsigned *)&s->row1; }

/* Insert row r of a packed table; true when its key was new. */
__device__ inline bool insert_packed(const kn_join_table &t, uint64_t pos, uint64_t mask, uint64_t key, int64_t r)
{
    kn__pslot *slots = (kn__pslot *)t.slots;
    unsigned me = (unsigned)r + 1;
    for (;; pos = (pos + 1) & mask) {
        kn__pslot *s = &slots[pos];
        unsigned h = load_row1(s);
        if (h == 0) {
            h = atomicCAS(&s->row1, 0u, (unsigned)KN__SLOT_BUSY);
            if (h == 0) {
                *(volatile uint64_t *)&s->key = key;
                t.next[r] = -1;
                __threadfence();
                atomicExch(&s->row1, me);
                return true;
            }
        }
        while (h == KN__SLOT_BUSY)
            h = load_row1(s);
        __threadfence();
        if (*(volatile const uint64_t *)&s->key != key)
            continue;
        for (;;) {
            t.next[r] = (int32_t)(h - 1);
            __threadfence();
            unsigned seen = atomicCAS(&s->row1, h, me);
            if (seen == h)
                return false;
            h = seen;
        }
    }
}

/* The same for a tagged table (one 64-bit CAS per attempt). */
__device__ inline bool insert_tagged(const kn_join_table &t, const keys_t &k, uint64_t pos, uint64_t mask,
                                     uint64_t hash, int64_t r)
{
    unsigned long long *slots = (unsigned long long *)t.slots;
    unsigned long long tag = hash >> 32, me = tag << 32 | (unsigned long long)(r + 1);
    for (;; pos = (pos + 1) & mask) {
        unsigned long long s = *(volatile unsigned long long *)&slots[pos];
        if (s == 0) {
            t.next[r] = -1;
            __threadfence();
            s = atomicCAS(&slots[pos], 0ull, me);
            if (s == 0)
                return true;
        }
        if ((s >> 32) != tag || !keys_eq(k, k, (int32_t)(uint32_t)s - 1, r))
            continue;
        for (;;) {
            t.next[r] = (int32_t)(uint32_t)s - 1;
            __threadfence();
            unsigned long long seen = atomicCAS(&slots[pos], s, me);
            if (seen == s)
                return false;
            s = seen;
        }
    }
}

/* The table and its build keys, staged in device memory (kn_gpu::stage). */
struct build_args {
    kn_join_table t;
    keys_t k;
};

__global__ void build_rows_k(const build_args *a, const uint64_t *hashes, int64_t lo, int64_t hi)
{
    const kn_join_table &t = a->t;
    const keys_t &k = a->k;
    uint64_t mask = t.n_slots - 1;
    unsigned long long distinct = 0;
    bool dup = false;
    KN_GPU_FOR(j, hi - lo)
    {
        int64_t r = lo + j;
        if (!keys_valid(k, r)) {
            t.next[r] = -1;
            unsigned long long at = atomicAdd((unsigned long long *)&t.counters[KN__JC_NULLS], 1ull);
            t.null_rows[at] = (int32_t)r;
            continue;
        }
        if (t.filter) {
            uint64_t fb = kn__filter_bit(hashes[r], t.filter_shift);
            atomicOr((unsigned long long *)&t.filter[fb >> 6], 1ull << (fb & 63));
        }
        bool fresh = t.packed ? insert_packed(t, hashes[r] & mask, mask, pack_row(k, r), r)
                              : insert_tagged(t, k, hashes[r] & mask, mask, hashes[r], r);
        distinct += fresh;
        dup |= !fresh;
    }
    if (distinct)
        atomicAdd((unsigned long long *)&t.counters[KN__JC_DISTINCT], distinct);
    if (dup)
        atomicExch((unsigned long long *)&t.counters[KN__JC_DUP], 1ull);
}

/* Copy the counters into the pinned info (see the notes above). */
__global__ void build_publish_k(kn_join_table t)
{
    t.info->distinct_keys = (int64_t)t.counters[KN__JC_DISTINCT];
    t.info->null_key_rows = (int64_t)t.counters[KN__JC_NULLS];
    if (t.counters[KN__JC_DUP])
        t.info->unique = 0;
}

keys_t keys_of(const pa_column *c, int n)
{
    keys_t k;
    memset(&k, 0, sizeof k);
    memcpy(k.c, c, (size_t)n * sizeof *c);
    k.n = n;
    return k;
}

} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_join_build_begin)(const kn_ctx *ctx, kn_join_table *t, uint64_t slot_lo,
                                                   uint64_t slot_hi, pa_err *err)
{
    if (slot_lo > slot_hi || slot_hi > t->n_slots)
        return pa_error(err, PA_EINVAL, "join table slots [%llu, %llu) of %llu", (unsigned long long)slot_lo,
                        (unsigned long long)slot_hi, (unsigned long long)t->n_slots);
    if (slot_lo == 0)
        dv_poison_output(ctx->dev, t->info, sizeof *t->info);
    int64_t work = (int64_t)(slot_hi - slot_lo) * 2;
    return SIMT_LAUNCH(build_begin_k, blocks_for(work > 0 ? work : 1), THREADS, 0, ctx->stream, err, *t, slot_lo,
                       slot_hi);
}

extern "C" int SIMT_NAME(kn__gpu_join_build_rows)(const kn_ctx *ctx, kn_join_table *t, const uint64_t *hashes,
                                                  int64_t lo, int64_t hi, pa_err *err)
{
    kn__keypair kp[KN_JOIN_MAX_KEYS];
    int rc = kn__join_rows_check(t, lo, hi, kp, err);
    if (rc != PA_OK)
        return rc;
    if (hi > lo) {
        build_args *a = NULL;
        if ((rc = stage(ctx, build_args{*t, keys_of(t->keys, t->n_keys)}, &a, err)) != PA_OK)
            return rc;
        rc = SIMT_LAUNCH(build_rows_k, blocks_for(hi - lo), THREADS, 0, ctx->stream, err, (const build_args *)a,
                         hashes, lo, hi);
        int rf = dv_free_async(ctx->stream, a, rc == PA_OK ? err : NULL);
        if (rc != PA_OK || rf != PA_OK)
            return rc != PA_OK ? rc : rf;
    }
    return SIMT_LAUNCH(build_publish_k, 1, 1, 0, ctx->stream, err, *t);
}

extern "C" int SIMT_NAME(kn__gpu_join_build)(const kn_ctx *ctx, kn_join_table *t, const uint64_t *hashes,
                                             pa_err *err)
{
    int rc = SIMT_NAME(kn__gpu_join_build_begin)(ctx, t, 0, t->n_slots, err);
    return rc == PA_OK ? SIMT_NAME(kn__gpu_join_build_rows)(ctx, t, hashes, 0, t->build_rows, err) : rc;
}

/* ---------------------------------------------------------------- probe */

namespace {

/* What pass 1 and pass 3 of the probe share. */
struct probe_t {
    kn_join_table t;
    keys_t build, probe;
    const uint64_t *h;
    int kind;
    int64_t rows;
    int32_t *heads;                 /* scratch: chain head per probe row */
    const struct probe_state *st;   /* the cursor's row and chain, copied to device memory */
};

/* State of one probe call in device memory. */
struct probe_state {
    unsigned long long stop;        /* first row that did not fit (atomicMin), or ~0 */
    unsigned long long n_null;
    long long total;                /* outputs of the rows from the cursor on */
    long long row0;                 /* the cursor's row and chain at the start */
    int32_t chain0;
    int32_t cross_chain;            /* the stop row's next build row when cut mid-chain */
};

__device__ inline int32_t find_head(const probe_t &p, int64_t i)
{
    const kn_join_table &t = p.t;
    uint64_t mask = t.n_slots - 1, pos = p.h[i] & mask;
    if (t.filter) {
        uint64_t fb = kn__filter_bit(p.h[i], t.filter_shift);
        if (!((t.filter[fb >> 6] >> (fb & 63)) & 1))
            return -1;
    }
    if (t.packed) {
        const kn__pslot *slots = (const kn__pslot *)t.slots;
        uint64_t key = pack_row(p.probe, i);
        for (;; pos = (pos + 1) & mask) {
            const kn__pslot *s = &slots[pos];
            if (s->row1 == 0)
                return -1;
            if (s->key == key)
                return (int32_t)(s->row1 - 1);
        }
    }
    const uint64_t *slots = (const uint64_t *)t.slots;
    uint64_t tag = p.h[i] >> 32;
    for (;; pos = (pos + 1) & mask) {
        uint64_t s = slots[pos];
        if (s == 0)
            return -1;
        int32_t head = (int32_t)(uint32_t)s - 1;
        if ((s >> 32) == tag && keys_eq(p.build, p.probe, head, i))
            return head;
    }
}

__device__ inline bool unique_table(const probe_t &p) { return p.t.counters[KN__JC_DUP] == 0; }

/* The first build row row i emits: the cursor's chain for the resumed row. */
__device__ inline int32_t first_of(const probe_t &p, int64_t i, int32_t head)
{
    return i == p.st->row0 && p.st->chain0 >= 0 ? p.st->chain0 : head;
}

__device__ inline int64_t chain_len(const probe_t &p, int32_t b)
{
    if (b < 0)
        return 0;
    if (unique_table(p))
        return 1;
    int64_t n = 0;
    for (; b >= 0; b = p.t.next[b])
        n++;
    return n;
}

/* Build row r could equal probe row i once NULLs are filled in. */
__device__ inline bool maybe_equal(const probe_t &p, int32_t r, int64_t i)
{
    for (int j = 0; j < p.build.n; j++) {
        if (!bit(p.build.c[j].validity, r) || !bit(p.probe.c[j].validity, i))
            continue;
        if (!col_eq(p.build.c[j], p.probe.c[j], r, i))
            return false;
    }
    return true;
}

/* MARK for a probe row without a match: SQL's IN is NULL. */
__device__ inline bool mark_unknown(const probe_t &p, int64_t i, bool probe_valid)
{
    const kn_join_table &t = p.t;
    if (t.build_rows == 0)
        return false;
    int64_t nulls = (int64_t)t.counters[KN__JC_NULLS];
    if (t.n_keys == 1)
        return !probe_valid || nulls > 0;
    if (!probe_valid) {
        for (int64_t r = 0; r < t.build_rows; r++)
            if (maybe_equal(p, (int32_t)r, i))
                return true;
        return false;
    }
    for (int64_t j = 0; j < nulls; j++)
        if (maybe_equal(p, t.null_rows[j], i))
            return true;
    return false;
}

/* Passes 1 and 3: the outputs of probe row i; its chain head goes to the
 * scratch for the write. */
struct probe_count {
    const probe_t *pp; /* staged in device memory */
    __device__ int64_t operator()(int64_t i) const
    {
        const probe_t &p = *pp;
        if (i < p.st->row0)
            return 0;
        int32_t head = keys_valid(p.probe, i) ? find_head(p, i) : -1;
        p.heads[i] = head;
        switch (p.kind) {
        case KN_JOIN_INNER: return chain_len(p, first_of(p, i, head));
        case KN_JOIN_LEFT: {
            int64_t n = chain_len(p, first_of(p, i, head));
            return n ? n : 1;
        }
        case KN_JOIN_SEMI: return head >= 0;
        case KN_JOIN_ANTI: return head < 0;
        default: return 1;
        }
    }
};

struct probe_write {
    const probe_t *pp;
    int64_t capacity;
    int32_t *probe_idx, *build_idx;
    uint8_t *mark, *mark_valid;
    probe_state *st;
    fault_t no_valid;
    __device__ void operator()(int64_t i, int64_t at, int64_t n) const
    {
        const probe_t &p = *pp;
        if (i < p.st->row0)
            return;
        if (at >= capacity || at + n > capacity)
            atomicMin(&st->stop, (unsigned long long)i);
        if (at >= capacity)
            return;
        int64_t fit = at + n > capacity ? capacity - at : n;
        int32_t head = p.heads[i];
        switch (p.kind) {
        case KN_JOIN_LEFT:
            if (head < 0 && !(i == p.st->row0 && p.st->chain0 >= 0)) {
                probe_idx[at] = (int32_t)i;
                build_idx[at] = -1;
                atomicAdd(&st->n_null, 1ull);
                return;
            }
            /* fall through */
        case KN_JOIN_INNER: {
            int32_t b = first_of(p, i, head);
            bool unique = unique_table(p);
            for (int64_t k = 0; k < fit; k++, b = unique ? -1 : p.t.next[b]) {
                probe_idx[at + k] = (int32_t)i;
                build_idx[at + k] = b;
            }
            if (fit < n)
                st->cross_chain = b; /* the one row cut mid-chain */
            return;
        }
        case KN_JOIN_SEMI:
        case KN_JOIN_ANTI:
            if (n)
                probe_idx[at] = (int32_t)i;
            return;
        default: {
            bool valid = keys_valid(p.probe, i);
            if (head < 0 && mark_unknown(p, i, valid)) {
                if (!mark_valid) {
                    no_valid.raise();
                    return;
                }
                clear_bit(mark_valid, at);
                atomicAdd(&st->n_null, 1ull);
            }
            mark[at] = head >= 0;
            probe_idx[at] = (int32_t)i;
        }
        }
    }
};

__global__ void probe_init_k(probe_state *st, uint8_t *mark_valid, int64_t capacity, int64_t rows,
                             const kn_join_cursor *cur)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        st->stop = ~0ull;
        st->n_null = 0;
        st->total = 0;
        st->cross_chain = -1;
        st->row0 = cur->row;
        st->chain0 = cur->started ? cur->chain : -1; /* a new chunk's cursor has only its row */
    }
    if (mark_valid) {
        int64_t m = capacity < rows - cur->row ? capacity : rows - cur->row;
        KN_GPU_FOR(b, (m + 7) / 8)
        mark_valid[b] = 0xff;
    }
}

__global__ void probe_end_k(const probe_state *st, int64_t rows, int64_t capacity, kn_join_cursor *cur)
{
    if (st->stop == ~0ull) {
        cur->row = rows;
        cur->chain = -1;
        cur->done = 1;
        cur->n_out = st->total;
    } else {
        int64_t s = (int64_t)st->stop;
        cur->chain = st->cross_chain; /* -1 unless the stop row was cut mid-chain */
        cur->row = s;
        cur->done = 0;
        cur->n_out = capacity;
    }
    cur->started = 1;
    cur->n_null = (int64_t)st->n_null;
}

} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_join_probe)(const kn_ctx *ctx, const kn_join_table *t, kn_join_kind kind,
                                             const pa_column *probe_keys, const uint64_t *hashes, int64_t rows,
                                             void *scratch, size_t scratch_size, kn_join_cursor *cur,
                                             int64_t capacity, int32_t *probe_idx, int32_t *build_idx,
                                             uint8_t *mark, uint8_t *mark_valid, pa_err *err)
{
    kn__keypair kp[KN_JOIN_MAX_KEYS];
    int rc = kn__join_probe_check(t, kind, probe_keys, rows, scratch_size, capacity, build_idx, mark, kp, err);
    if (rc != PA_OK)
        return rc;
    /* The heads are the scratch's last part (kn_join_probe_scratch_size). */
    size_t heads_at = kn_join_probe_scratch_size(t, rows) - kn__align64((size_t)rows * 4);
    probe_t p;
    memset(&p, 0, sizeof p);
    p.t = *t;
    p.build = keys_of(t->keys, t->n_keys);
    p.probe = keys_of(probe_keys, t->n_keys);
    p.h = hashes;
    p.kind = (int)kind;
    p.rows = rows;
    p.heads = (int32_t *)((uint8_t *)scratch + heads_at);
    dv_poison_output(ctx->dev, &cur->done, sizeof cur->done);
    dv_poison_output(ctx->dev, &cur->n_out, sizeof cur->n_out);
    dv_poison_output(ctx->dev, &cur->n_null, sizeof cur->n_null);
    probe_state *st = NULL;
    if ((rc = dv_alloc(ctx->dev, sizeof *st, (void **)&st, err)) != PA_OK)
        return rc;
    uint8_t *mv = kind == KN_JOIN_MARK ? mark_valid : NULL;
    int64_t bytes = (capacity < rows ? capacity : rows) / 8 + 1;
    rc = SIMT_LAUNCH(probe_init_k, blocks_for(mv ? bytes : 1), THREADS, 0, ctx->stream, err, st, mv, capacity, rows,
                     (const kn_join_cursor *)cur);
    probe_t *dp = NULL;
    if (rc == PA_OK) {
        p.st = st;
        rc = stage(ctx, p, &dp, err);
    }
    if (rc == PA_OK) {
        /* Each pass finds the heads and stores them; w reads its own row's. */
        probe_write w = {dp, capacity, probe_idx, build_idx, mark, mv, st,
                         fault_of(ctx, PA_EINVAL, "join probe: a NULL mark but no mark validity output")};
        rc = scan(ctx, rows, probe_count{dp}, w, NULL, (int64_t *)&st->total, err);
    }
    if (dp) {
        int rf = dv_free_async(ctx->stream, dp, rc == PA_OK ? err : NULL);
        rc = rc != PA_OK ? rc : rf;
    }
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(probe_end_k, 1, 1, 0, ctx->stream, err, (const probe_state *)st, rows, capacity, cur);
    int rf = dv_free_async(ctx->stream, st, rc == PA_OK ? err : NULL);
    return rc != PA_OK ? rc : rf;
}

/* ------------------------------------------------------ IN-NULL rule */

namespace {

__global__ void in_unknown_k(const probe_t *pp, uint8_t *unknown)
{
    const probe_t &p = *pp;
    KN_GPU_FOR(i, p.rows)
    unknown[i] = mark_unknown(p, i, keys_valid(p.probe, i));
}

} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_join_in_unknown)(const kn_ctx *ctx, const kn_join_table *t,
                                                  const pa_column *probe_keys, int64_t rows, uint8_t *unknown,
                                                  pa_err *err)
{
    if (t->n_keys < 1 || t->n_keys > KN_JOIN_MAX_KEYS)
        return pa_error(err, PA_EINVAL, "join table with %d key columns", t->n_keys);
    kn__keypair kp[KN_JOIN_MAX_KEYS];
    int rc = kn__keypairs(t->keys, probe_keys, t->n_keys, kp, err);
    if (rc != PA_OK || rows <= 0)
        return rc;
    probe_t p;
    memset(&p, 0, sizeof p);
    p.t = *t;
    p.build = keys_of(t->keys, t->n_keys);
    p.probe = keys_of(probe_keys, t->n_keys);
    p.rows = rows;
    probe_t *dp = NULL;
    if ((rc = stage(ctx, p, &dp, err)) != PA_OK)
        return rc;
    rc = SIMT_LAUNCH(in_unknown_k, blocks_for(rows), THREADS, 0, ctx->stream, err, (const probe_t *)dp, unknown);
    int rf = dv_free_async(ctx->stream, dp, rc == PA_OK ? err : NULL);
    return rc != PA_OK ? rc : rf;
}

/* ---------------------------------------------------- candidate pairs */

namespace {

/* The cross join's cursor, copied to device memory once. */
struct cross_state {
    long long first;   /* linear pair index the call starts at */
    long long n;       /* pairs it writes */
};

__global__ void cross_begin_k(const kn_join_cursor *cur, int64_t rows, int64_t build_rows, int64_t capacity,
                              cross_state *st)
{
    long long r = cur->chain > 0 ? cur->chain : 0, total = (long long)rows * build_rows;
    long long first = build_rows > 0 ? cur->row * build_rows + r : total;
    st->first = first;
    st->n = total - first < capacity ? total - first : capacity;
}

__global__ void cross_k(const cross_state *st, int64_t build_rows, int32_t *probe_idx, int32_t *build_idx)
{
    long long n = st->n, first = st->first;
    KN_GPU_FOR(k, n)
    {
        long long l = first + k;
        probe_idx[k] = (int32_t)(l / build_rows);
        build_idx[k] = (int32_t)(l % build_rows);
    }
}

__global__ void cross_end_k(const cross_state *st, int64_t rows, int64_t build_rows, kn_join_cursor *cur)
{
    long long end = st->first + st->n;
    cur->n_out = st->n;
    cur->n_null = 0;
    if (build_rows == 0 || end / build_rows >= rows) {
        cur->row = rows;
        cur->chain = -1;
        cur->done = 1;
    } else {
        cur->row = end / build_rows;
        cur->chain = (int32_t)(end % build_rows);
        cur->done = 0;
    }
}

} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_join_cross)(const kn_ctx *ctx, int64_t rows, int64_t build_rows,
                                             kn_join_cursor *cur, int64_t capacity, int32_t *probe_idx,
                                             int32_t *build_idx, pa_err *err)
{
    if (capacity < 1 || rows < 0 || rows > INT32_MAX || build_rows < 0 || build_rows > INT32_MAX)
        return pa_error(err, PA_EINVAL, "cross join of %lld x %lld rows with capacity %lld", (long long)rows,
                        (long long)build_rows, (long long)capacity);
    dv_poison_output(ctx->dev, &cur->done, sizeof cur->done);
    dv_poison_output(ctx->dev, &cur->n_out, sizeof cur->n_out);
    dv_poison_output(ctx->dev, &cur->n_null, sizeof cur->n_null);
    cross_state *st = NULL;
    int rc = dv_alloc(ctx->dev, sizeof *st, (void **)&st, err);
    if (rc != PA_OK)
        return rc;
    rc = SIMT_LAUNCH(cross_begin_k, 1, 1, 0, ctx->stream, err, (const kn_join_cursor *)cur, rows, build_rows,
                     capacity, st);
    int64_t most = capacity < rows * build_rows ? capacity : rows * build_rows;
    if (rc == PA_OK && most > 0)
        rc = SIMT_LAUNCH(cross_k, blocks_for(most), THREADS, 0, ctx->stream, err, (const cross_state *)st,
                         build_rows, probe_idx, build_idx);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(cross_end_k, 1, 1, 0, ctx->stream, err, (const cross_state *)st, rows, build_rows, cur);
    int rf = dv_free_async(ctx->stream, st, rc == PA_OK ? err : NULL);
    return rc != PA_OK ? rc : rf;
}

namespace {

/* A pair is kept when its pred is TRUE; its probe row's state gets TRUE
 * or NULL or-ed in (twice, in passes 1 and 3: an OR). */
struct pair_keep {
    const uint8_t *v, *valid;
    const int32_t *probe_in;
    uint8_t *row_state;
    __device__ int64_t operator()(int64_t i) const
    {
        bool known = bit(valid, i), yes = known && v[i];
        if (row_state && (yes || !known))
            or_byte(row_state, probe_in[i], yes ? KN_JOIN_ROW_TRUE : KN_JOIN_ROW_NULL);
        return yes;
    }
};

struct pair_write {
    const int32_t *probe_in, *build_in;
    int32_t *probe_idx, *build_idx;
    __device__ void operator()(int64_t i, int64_t at, int64_t keep) const
    {
        if (!keep)
            return;
        probe_idx[at] = probe_in[i];
        if (build_idx)
            build_idx[at] = build_in[i];
    }
};

} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_join_pairs_filter)(const kn_ctx *ctx, const pa_column *pred, int64_t n,
                                                    int32_t *probe_idx, int32_t *build_idx, uint8_t *row_state,
                                                    int64_t *count, pa_err *err)
{
    if (pred->type.id != PA_TYPE_BOOLEAN || n < 0)
        return pa_error(err, PA_EINVAL, "join pair filter on a %s column of %lld rows", pa_type_name(pred->type.id),
                        (long long)n);
    KN__POISON(ctx, count);
    /* In place: the pairs are read from a copy, so no tile overwrites
     * pairs another has not read yet. */
    size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(int32_t);
    int32_t *copy = NULL;
    int rc = dv_alloc(ctx->dev, bytes * 2, (void **)&copy, err);
    if (rc != PA_OK)
        return rc;
    int32_t *probe_in = copy, *build_in = build_idx ? copy + (n > 0 ? n : 1) : NULL;
    if (n > 0)
        rc = dv_copy_async(ctx->stream, probe_in, probe_idx, (size_t)n * 4, DV_COPY_D2D, err);
    if (rc == PA_OK && n > 0 && build_idx)
        rc = dv_copy_async(ctx->stream, build_in, build_idx, (size_t)n * 4, DV_COPY_D2D, err);
    if (rc == PA_OK)
        rc = scan(ctx, n, pair_keep{(const uint8_t *)pred->data, pred->validity, probe_in, row_state},
                  pair_write{probe_in, build_in, probe_idx, build_idx}, NULL, count, err);
    int rf = dv_free_async(ctx->stream, copy, rc == PA_OK ? err : NULL);
    return rc != PA_OK ? rc : rf;
}

namespace {

/* LEFT, SEMI, ANTI: the rows kept from their state. */
struct finish_keep {
    const uint8_t *row_state;
    int kind;
    __device__ int64_t operator()(int64_t i) const
    {
        bool yes = row_state[i] & KN_JOIN_ROW_TRUE;
        return kind == KN_JOIN_SEMI ? yes : !yes;
    }
};

struct finish_write {
    int32_t *probe_idx, *build_idx;
    __device__ void operator()(int64_t i, int64_t at, int64_t keep) const
    {
        if (!keep)
            return;
        probe_idx[at] = (int32_t)i;
        if (build_idx)
            build_idx[at] = -1;
    }
};

/* MARK: every row, NULL where some pair was NULL or IN is unknown. */
struct mark_null {
    const uint8_t *row_state, *unknown;
    __device__ int64_t operator()(int64_t i) const
    {
        uint8_t s = row_state[i];
        return !(s & KN_JOIN_ROW_TRUE) && ((s & KN_JOIN_ROW_NULL) || (unknown && unknown[i]));
    }
};

__global__ void copy_i64_k(const int64_t *src, int64_t *dst) { *dst = *src; }

__global__ void mark_k(const uint8_t *row_state, const uint8_t *unknown, int64_t rows, int32_t *probe_idx,
                       uint8_t *mark, uint8_t *mark_valid)
{
    mark_null null_of = {row_state, unknown};
    KN_GPU_FOR(b, (rows + 7) / 8)
    {
        unsigned v = 0;
        for (int j = 0; j < 8 && b * 8 + j < rows; j++) {
            int64_t i = b * 8 + j;
            mark[i] = (row_state[i] & KN_JOIN_ROW_TRUE) != 0;
            probe_idx[i] = (int32_t)i;
            v |= (unsigned)!null_of(i) << j;
        }
        mark_valid[b] = (uint8_t)(v | (rows - b * 8 < 8 ? 0xffu << (rows - b * 8) : 0));
    }
}

} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_join_finish)(const kn_ctx *ctx, kn_join_kind kind, const uint8_t *row_state,
                                              const uint8_t *unknown, int64_t rows, int32_t *probe_idx,
                                              int32_t *build_idx, uint8_t *mark, uint8_t *mark_valid,
                                              int64_t *count, int64_t *n_null, pa_err *err)
{
    if (rows < 0 || rows > INT32_MAX || (kind == KN_JOIN_LEFT && !build_idx) ||
        (kind == KN_JOIN_MARK && (!mark || !mark_valid)) || kind == KN_JOIN_INNER || (unsigned)kind > KN_JOIN_MARK)
        return pa_error(err, PA_EINVAL, "join finish: kind %d, %lld rows, missing outputs", (int)kind,
                        (long long)rows);
    KN__POISON(ctx, count);
    if (n_null)
        KN__POISON(ctx, n_null);
    int rc;
    if (kind == KN_JOIN_MARK) {
        if (rows > 0 && (rc = SIMT_LAUNCH(mark_k, blocks_for((rows + 7) / 8), THREADS, 0, ctx->stream, err, row_state,
                                          unknown, rows, probe_idx, mark, mark_valid)) != PA_OK)
            return rc;
        if ((rc = SIMT_LAUNCH(store_k<int64_t>, 1, 1, 0, ctx->stream, err, count, (int64_t)rows)) != PA_OK)
            return rc;
        return n_null ? scan(ctx, rows, mark_null{row_state, unknown}, no_write{}, NULL, n_null, err) : PA_OK;
    }
    rc = scan(ctx, rows, finish_keep{row_state, (int)kind}, finish_write{probe_idx, kind == KN_JOIN_LEFT ? build_idx : NULL},
              NULL, count, err);
    if (rc == PA_OK && n_null) /* LEFT: every row written is NULL-padded */
        rc = kind == KN_JOIN_LEFT ? SIMT_LAUNCH(copy_i64_k, 1, 1, 0, ctx->stream, err, (const int64_t *)count, n_null)
                                  : SIMT_LAUNCH(store_k<int64_t>, 1, 1, 0, ctx->stream, err, n_null, (int64_t)0);
    return rc;
}
