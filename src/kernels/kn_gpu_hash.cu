/*
 * kn_gpu_hash.cu - CUDA kernels for hashing multi-column keys and hash
 * partitioning (partition ids, per-partition offsets). The hash function is
 * kn_hash_int.h's, compiled for the device, so a key hashes alike on every
 * device and every rank. The rows in partition order come from a stable
 * radix sort by partition id. See kn_gpu.h for how entries and errors work.
 */
#include "kernels/kn_gpu.h"

using namespace kn_gpu;

namespace {

/* h[i] = hash of column c's row i (first column), or h[i] combined with it. */
__global__ void hash_column_k(pa_column c, int kc, int64_t rows, int first, uint64_t *h)
{
    KN_GPU_FOR(i, rows)
    {
        uint64_t x;
        switch (kc) {
        case KN__KC_I8:
        case KN__KC_I32:
        case KN__KC_I64: x = kn__hash_i64(kn__ld_int(&c, (kn__kclass)kc, i)); break;
        case KN__KC_I128:
        case KN__KC_IV: x = kn__hash_i128(kn__ld_i128(&c, (kn__kclass)kc, i)); break;
        case KN__KC_F64: x = kn__hash_f64(((const double *)c.data)[i]); break;
        default: {
            const int32_t *o = c.offsets;
            x = kn__hash_bytes((const uint8_t *)c.data + o[i], (int64_t)o[i + 1] - o[i]);
        }
        }
        if (!bit(c.validity, i))
            x = KN__H_NULL;
        h[i] = first ? x : kn__hash_combine(h[i], x);
    }
}
} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_hash_keys)(const kn_ctx *ctx, const pa_column *keys, int n_keys, int64_t rows,
                                            uint64_t *hashes, pa_err *err)
{
    if (n_keys < 1 || rows < 0)
        return pa_error(err, PA_EINVAL, "hash of %d key columns over %lld rows", n_keys, (long long)rows);
    for (int k = 0; k < n_keys; k++)
        if (!kn_hash_key_type_ok(keys[k].type))
            return pa_error(err, PA_EINVAL, "hash: key column %d has type %s, which cannot be hashed", k,
                            pa_type_name(keys[k].type.id));
    if (rows == 0)
        return PA_OK;
    for (int k = 0; k < n_keys; k++) {
        int rc = SIMT_LAUNCH(hash_column_k, blocks_for(rows), THREADS, 0, ctx->stream, err, keys[k],
                             (int)kn__key_class(keys[k].type), rows, k == 0, hashes);
        if (rc != PA_OK)
            return rc;
    }
    return PA_OK;
}

namespace {

/* ------------------------------------------------------------ sequences */

__global__ void sequence_k(int64_t start, int64_t step, int64_t n, int64_t *out)
{
    KN_GPU_FOR(i, n)
    out[i] = (int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)step);
}
} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_sequence)(const kn_ctx *ctx, int64_t start, int64_t step, int64_t n, int64_t *out,
                                           pa_err *err)
{
    if (n <= 0)
        return PA_OK;
    return SIMT_LAUNCH(sequence_k, blocks_for(n), THREADS, 0, ctx->stream, err, start, step, n, out);
}

namespace {

/* ---------------------------------------------------------- partitioning */

__global__ void partition_ids_k(const uint64_t *hashes, int64_t rows, uint32_t n_parts, uint32_t *part)
{
    KN_GPU_FOR(i, rows)
    part[i] = kn_partition_of(hashes[i], n_parts);
}
} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_partition_ids)(const kn_ctx *ctx, const uint64_t *hashes, int64_t rows,
                                                uint32_t n_parts, uint32_t *part, pa_err *err)
{
    if (n_parts < 1)
        return pa_error(err, PA_EINVAL, "hash partition into %u parts", n_parts);
    if (rows <= 0)
        return PA_OK;
    return SIMT_LAUNCH(partition_ids_k, blocks_for(rows), THREADS, 0, ctx->stream, err, hashes, rows, n_parts, part);
}

namespace {

__global__ void zero_k(unsigned long long *p, int64_t n)
{
    KN_GPU_FOR(i, n)
    p[i] = 0;
}

/* counts[p] += rows of partition p: a block histogram in shared memory
 * when the parts fit (SMEM_PARTS), else global atomics. */
constexpr uint32_t SMEM_PARTS = 2048;

const char BAD_PART[] = "partition offsets: a row's partition id is not below the number of partitions";

__global__ void histogram_k(const uint32_t *part, int64_t rows, uint32_t n_parts, unsigned long long *counts,
                            fault_t bad)
{
    __shared__ unsigned local[SMEM_PARTS];
    bool shared = n_parts <= SMEM_PARTS;
    if (shared) {
        for (uint32_t p = threadIdx.x; p < n_parts; p += blockDim.x)
            local[p] = 0;
        __syncthreads();
    }
    KN_GPU_FOR(i, rows)
    {
        uint32_t p = part[i];
        if (p >= n_parts) {
            bad.raise();
            continue;
        }
        if (shared)
            atomicAdd(&local[p], 1u);
        else
            atomicAdd(&counts[p], 1ull);
    }
    if (shared) {
        __syncthreads();
        for (uint32_t p = threadIdx.x; p < n_parts; p += blockDim.x)
            if (local[p])
                atomicAdd(&counts[p], (unsigned long long)local[p]);
    }
}

/* offsets[0] = 0, offsets[p + 1] = offsets[p] + counts[p] (one block). */
__global__ void offsets_k(const unsigned long long *counts, uint32_t n_parts, int64_t *offsets)
{
    int64_t carry = 0;
    if (threadIdx.x == 0)
        offsets[0] = 0;
    for (int64_t at = 0; at < n_parts; at += THREADS) {
        int64_t i = at + threadIdx.x, t;
        int64_t v = i < n_parts ? (int64_t)counts[i] : 0;
        int64_t ex = block_exclusive_scan(v, &t);
        if (i < n_parts)
            offsets[i + 1] = carry + ex + v;
        carry += t;
    }
}
} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_partition_offsets)(const kn_ctx *ctx, const uint32_t *part, int64_t rows,
                                                    uint32_t n_parts, int64_t *offsets, pa_err *err)
{
    if (n_parts < 1)
        return pa_error(err, PA_EINVAL, "hash partition into %u parts", n_parts);
    dv_poison_output(ctx->dev, offsets, ((size_t)n_parts + 1) * sizeof *offsets);
    unsigned long long *counts = NULL;
    int rc = dv_alloc(ctx->dev, (size_t)n_parts * sizeof *counts, (void **)&counts, err);
    if (rc != PA_OK)
        return rc;
    rc = SIMT_LAUNCH(zero_k, blocks_for(n_parts), THREADS, 0, ctx->stream, err, counts, (int64_t)n_parts);
    if (rc == PA_OK && rows > 0)
        rc = SIMT_LAUNCH(histogram_k, blocks_for(rows), THREADS, 0, ctx->stream, err, part, rows, n_parts, counts,
                         fault_of(ctx, PA_EINVAL, BAD_PART));
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(offsets_k, 1, THREADS, 0, ctx->stream, err, (const unsigned long long *)counts, n_parts,
                         offsets);
    int rf = dv_free_async(ctx->stream, counts, rc == PA_OK ? err : NULL);
    return rc != PA_OK ? rc : rf;
}


namespace {

/* ------------------------------------------------------- partition order
 *
 * A stable sort of the rows by partition id: an LSD radix sort with one bit
 * per pass, each pass a stable split by the device-wide scan (rows whose
 * bit is 0 keep their order at the front, the others keep theirs after
 * them). Passes = bits of n_parts - 1 (10 for 1024 partitions). Then one
 * thread per partition checks that the caller's offsets are where the
 * sorted ids put each partition's first row: the offsets come from a
 * kernel, so a mismatch (or an id not below n_parts) is a data fault. */

const char BAD_ORDER[] = "partition order: a row's partition id or the partition offsets do not match";

__global__ void check_ids_k(const uint32_t *part, int64_t rows, uint32_t n_parts, fault_t bad)
{
    KN_GPU_FOR(i, rows)
    if (part[i] >= n_parts)
        bad.raise();
}

/* 1 for a row whose bit is 0. */
struct bit_zero {
    const uint32_t *key;
    int bit;
    __device__ int64_t operator()(int64_t i) const { return !((key[i] >> bit) & 1); }
};

/* Row i to its place after the split; *zeros is the rows with the bit 0
 * (the scan's total, on the device by the time pass 3 runs). row NULL: the
 * identity. */
struct bit_split {
    const uint32_t *key;
    const int32_t *row;
    uint32_t *key_out;
    int32_t *row_out;
    const int64_t *zeros;
    __device__ void operator()(int64_t i, int64_t zeros_before, int64_t zero) const
    {
        int64_t dst = zero ? zeros_before : *zeros + (i - zeros_before);
        key_out[dst] = key[i];
        row_out[dst] = row ? row[i] : (int32_t)i;
    }
};

__global__ void identity_k(int32_t *row_order, int64_t rows)
{
    KN_GPU_FOR(i, rows)
    row_order[i] = (int32_t)i;
}

/* offsets[p] must be the first row whose sorted id is >= p, for p in
 * [0, n_parts] (so offsets[n_parts] = rows). */
__global__ void check_offsets_k(const uint32_t *key, int64_t rows, uint32_t n_parts, const int64_t *offsets,
                                fault_t bad)
{
    KN_GPU_FOR(p, (int64_t)n_parts + 1)
    {
        int64_t lo = 0, hi = rows;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (key[mid] < (uint64_t)p)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (offsets[p] != lo)
            bad.raise();
    }
}

} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_partition_order)(const kn_ctx *ctx, const uint32_t *part, int64_t rows,
                                                  uint32_t n_parts, const int64_t *offsets, void *scratch,
                                                  size_t scratch_size, int32_t *row_order, pa_err *err)
{
    (void)scratch;   /* the device sort takes its buffers from the pool */
    if (n_parts < 1 || scratch_size < kn_partition_order_scratch_size(n_parts))
        return pa_error(err, PA_EINVAL, "partition order: %u parts with %zu bytes of scratch", n_parts,
                        scratch_size);
    if (rows > INT32_MAX || rows < 0)
        return pa_error(err, PA_EINVAL, "partition order over %lld rows: at most INT32_MAX", (long long)rows);
    const fault_t bad = fault_of(ctx, PA_EINVAL, BAD_ORDER);
    int bits = 0;
    while (bits < 32 && ((uint64_t)1 << bits) < n_parts)
        bits++;
    void *mem[5] = {NULL, NULL, NULL, NULL, NULL};   /* keys x2, rows x2, the zeros count */
    const size_t sizes[5] = {(size_t)rows * 4 + 4, (size_t)rows * 4 + 4, (size_t)rows * 4 + 4,
                             (size_t)rows * 4 + 4, sizeof(int64_t)};
    const bool needed[5] = {bits >= 1, bits >= 2, bits >= 2, bits >= 2, bits >= 1};
    int rc = PA_OK;
    for (int k = 0; k < 5 && rc == PA_OK; k++)
        if (needed[k])
            rc = dv_alloc(ctx->dev, sizes[k], &mem[k], err);
    uint32_t *keys[2] = {(uint32_t *)mem[0], (uint32_t *)mem[1]};
    int32_t *rws[2] = {(int32_t *)mem[2], (int32_t *)mem[3]};
    if (rc == PA_OK && rows > 0)
        rc = SIMT_LAUNCH(check_ids_k, blocks_for(rows), THREADS, 0, ctx->stream, err, part, rows, n_parts, bad);
    const uint32_t *sorted = part;
    if (rc == PA_OK && bits == 0 && rows > 0)
        rc = SIMT_LAUNCH(identity_k, blocks_for(rows), THREADS, 0, ctx->stream, err, row_order, rows);
    for (int b = 0; rc == PA_OK && b < bits && rows > 0; b++) {
        const bool last = b == bits - 1;
        const uint32_t *kin = b == 0 ? part : keys[(b - 1) & 1];
        const int32_t *rin = b == 0 ? NULL : rws[(b - 1) & 1];
        uint32_t *kout = keys[b & 1];
        int32_t *rout = last ? row_order : rws[b & 1];
        int64_t *zeros = (int64_t *)mem[4];
        rc = scan(ctx, rows, bit_zero{kin, b}, bit_split{kin, rin, kout, rout, zeros}, NULL, zeros, err);
        sorted = kout;
    }
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(check_offsets_k, blocks_for((int64_t)n_parts + 1), THREADS, 0, ctx->stream, err, sorted,
                         rows, n_parts, offsets, bad);
    for (int k = 0; k < 5; k++) {
        if (!mem[k])
            continue;
        int rf = dv_free_async(ctx->stream, mem[k], rc == PA_OK ? err : NULL);
        if (rc == PA_OK)
            rc = rf;
    }
    return rc;
}
