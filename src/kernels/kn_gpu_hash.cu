/*
 * kn_gpu_hash.cu - CUDA kernels for hashing multi-column keys and hash
 * partitioning (partition ids, per-partition offsets). The hash function is
 * kn_hash_int.h's, compiled for the device, so a key hashes alike on every
 * device and every rank. See kn_gpu.h for how entries and errors work.
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
        case KN__KC_I128: x = kn__hash_i128(kn__ld_i128(&c, KN__KC_I128, i)); break;
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

