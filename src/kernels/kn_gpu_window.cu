/*
 * kn_gpu_window.cu - window functions on a GPU (kn_window_int.h has the
 * per-row rules, shared with the cpu loops).
 *
 * Design notes
 * - Bounds are two device-wide scans (kn_gpu::scan): one over "row i
 *   starts a partition", one over "row i starts a peer group". Each gives
 *   every row its group number and writes each group's first row into a
 *   table; a last kernel reads a row's start and end (the next group's
 *   start, or rows) from the tables.
 * - The segment tree is built leaves first, then one launch per level
 *   (log2 of the leaves), each level's nodes in parallel.
 * - Values: one thread per 8 consecutive rows, so each owns one byte of
 *   the validity bitmap. A SUM that leaves its type is a data fault with the
 *   cpu's message.
 */
#include "kernels/kn_gpu.h"
#include "kernels/kn_gpu_ext.h"
#include "kernels/kn_window_int.h"

using namespace kn_gpu;

namespace {

struct part_flag {
    const kn__win_keys *K;
    bool peer;
    __device__ int64_t operator()(int64_t i) const { return peer ? kn__win_new_peer(K, i) : kn__win_new_part(K, i); }
};

/* Group number of each row, and each group's first row. */
struct group_write {
    int32_t *gid, *start;
    __device__ void operator()(int64_t i, int64_t off, int64_t v) const
    {
        gid[i] = (int32_t)(off + v - 1);
        if (v)
            start[off] = (int32_t)i;
    }
};

__global__ void bounds_k(int32_t *B, int64_t rows, const int32_t *pid, const int32_t *pstart, const int32_t *qstart,
                         const int64_t *totals)
{
    const int32_t *qid = B + 4 * rows;
    KN_GPU_FOR(i, rows)
    {
        int32_t p = pid[i], q = qid[i];
        B[i] = pstart[p];
        B[rows + i] = p + 1 < totals[0] ? pstart[p + 1] : (int32_t)rows;
        B[2 * rows + i] = qstart[q];
        B[3 * rows + i] = q + 1 < totals[1] ? qstart[q + 1] : (int32_t)rows;
    }
}

__global__ void frames_k(kn_window_frame f, const int32_t *B, int64_t rows, pa_column key, bool has_key,
                         int32_t *frames)
{
    KN_GPU_FOR(i, rows)
    kn__win_frame_row(&f, B, rows, has_key ? &key : NULL, i, &frames[i], &frames[rows + i]);
}

__global__ void leaves_k(int kind, pa_column arg, int64_t rows, void *tree, int64_t m)
{
    KN_GPU_FOR(i, m)
    kn__win_leaf(kind, &arg, rows, tree, m, i);
}

__global__ void level_k(int kind, pa_column arg, void *tree, int64_t lo)
{
    KN_GPU_FOR(j, lo)
    kn__win_node(kind, &arg, tree, lo + j);
}

__global__ void positions_k(kn_window_fn fn, pa_column arg, const int32_t *B, const int32_t *F, const void *tree,
                            int64_t rows, int64_t first, int64_t n, int32_t *idx)
{
    KN_GPU_FOR(r, n)
    idx[r] = kn__win_pos_row(&fn, &arg, B, F, tree, rows, first + r);
}

struct eval_args {
    kn_window_fn fn;
    pa_column arg, out;
    const int32_t *B, *F;
    const void *tree;
    int64_t rows, first, n;
};

__global__ void values_k(eval_args a, fault_t big, fault_t dec, fault_t wide)
{
    const __int128 lim = (__int128)100000000000000000LL * (__int128)100000000000000000LL * 10000;
    int k = a.fn.kind;
    bool dbl = pa_type_is_float(a.arg.type.id);
    int64_t m = kn__win_leaves(a.rows);
    KN_GPU_FOR(g, (a.n + 7) / 8)
    {
        unsigned bits = 0;
        for (int64_t r = g * 8; r < g * 8 + 8 && r < a.n; r++) {
            int64_t i = a.first + r;
            bool ok = true;
            if (k == KN_WIN_PERCENT_RANK || k == KN_WIN_CUME_DIST)
                ((double *)a.out.data)[r] = kn__win_dbl_row(&a.fn, a.B, a.rows, i);
            else if (k != KN_WIN_SUM && k != KN_WIN_AVG)
                ((int64_t *)a.out.data)[r] = kn__win_int_row(&a.fn, a.B, a.F, a.tree, a.rows, i);
            else {
                kn__win_sum s = kn__win_q_sum((const kn__win_sum *)a.tree, dbl, m, a.F[i], a.F[a.rows + i]);
                ok = s.n > 0;
                if (dbl)
                    ((double *)a.out.data)[r] = !ok ? 0 : k == KN_WIN_SUM ? s.s.d : s.s.d / (double)s.n;
                else if (s.s.i == KN__WIN_OVF)
                    wide.raise();
                else if (k == KN_WIN_AVG)
                    ((double *)a.out.data)[r] = !ok ? 0 : avg_ext(s.s.i, s.n, a.arg.type.scale);
                else if (a.out.type.id == PA_TYPE_BIGINT) {
                    if (s.s.i > INT64_MAX || s.s.i < INT64_MIN)
                        big.raise();
                    else
                        ((int64_t *)a.out.data)[r] = (int64_t)s.s.i;
                } else if (s.s.i >= lim || s.s.i <= -lim)
                    dec.raise();
                else
                    ((v16 *)a.out.data)[r] = v16{(uint64_t)s.s.i, (uint64_t)(s.s.i >> 64)};
            }
            if (ok)
                bits |= 1u << (r - g * 8);
        }
        if (a.out.validity)
            a.out.validity[g] = (uint8_t)bits;
    }
}

/* STRING_AGG's prefix sum `which` (kn__win_sa_term), written exclusive. */
struct sa_term {
    int which;
    pa_column arg;
    const int32_t *B;
    const int64_t *T;
    int64_t rows;
    __device__ int64_t operator()(int64_t i) const { return kn__win_sa_term(which, &arg, B, T, rows, i); }
};
struct sa_write {
    int64_t *P;
    __device__ void operator()(int64_t i, int64_t off, int64_t) const { P[i] = off; }
};

__global__ void sa_bytes_k(kn_window_fn fn, const int32_t *B, const int64_t *T, int64_t rows, int64_t first,
                           int64_t n, int64_t *bytes)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *bytes = kn__win_sa_offset(&fn, B, T, rows, first, n);
}

/* Offsets and validity: one thread per 8 output rows (a validity byte). */
__global__ void sa_offsets_k(kn_window_fn fn, const int32_t *B, const int64_t *T, int64_t rows, int64_t first,
                             int64_t n, int32_t *off, uint8_t *valid)
{
    KN_GPU_FOR(g, n > 0 ? (n + 7) / 8 : 1)
    {
        unsigned bits = 0;
        for (int64_t r = g * 8; r < g * 8 + 8 && r < n; r++) {
            off[r] = (int32_t)kn__win_sa_offset(&fn, B, T, rows, first, r);
            if (kn__win_sa_valid(B, T, rows, first + r))
                bits |= 1u << (r - g * 8);
        }
        if (n > 0)
            valid[g] = (uint8_t)bits;
        if (g == 0)
            off[n] = (int32_t)kn__win_sa_offset(&fn, B, T, rows, first, n);
    }
}

/* The values of the partitions that start in the chunk, one thread per
 * row (the rows may run past the chunk: a partition's string is whole at
 * its first row). */
__global__ void sa_pieces_k(kn_window_fn fn, pa_column arg, const int32_t *B, const int64_t *T, int64_t rows,
                            int64_t first, int64_t n, char *out)
{
    int64_t s0 = kn__win_sa_start(B, rows, first), s1 = kn__win_sa_start(B, rows, first + n);
    KN_GPU_FOR(j, s1 - s0)
    kn__win_sa_piece(&fn, &arg, B, T, rows, s0, s0 + j, out);
}

} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_window_bounds)(const kn_ctx *ctx, const pa_column *keys, int n_part, int n_keys,
                                                int64_t rows, int32_t *bounds, void *scratch, size_t scratch_bytes,
                                                pa_err *err)
{
    kn__win_keys K;
    int rc = kn__window_keys(keys, n_part, n_keys, rows, &K, err);
    if (rc == PA_OK && scratch_bytes < kn_window_bounds_scratch(rows))
        rc = pa_error(err, PA_EINVAL, "window bounds: %zu scratch bytes for %zu", scratch_bytes,
                      kn_window_bounds_scratch(rows));
    if (rc != PA_OK || rows == 0)
        return rc;
    kn__win_keys *dk = NULL;
    rc = stage(ctx, K, &dk, err);
    if (rc != PA_OK)
        return rc;
    int32_t *pid = (int32_t *)scratch, *pstart = pid + rows, *qstart = pstart + rows;
    int64_t *totals = (int64_t *)(((uintptr_t)(qstart + rows) + 7) & ~(uintptr_t)7);
    int32_t *qid = bounds + 4 * rows;
    rc = scan(ctx, rows, part_flag{dk, false}, group_write{pid, pstart}, NULL, totals, err);
    if (rc == PA_OK)
        rc = scan(ctx, rows, part_flag{dk, true}, group_write{qid, qstart}, NULL, totals + 1, err);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(bounds_k, blocks_for(rows), THREADS, 0, ctx->stream, err, bounds, rows, (const int32_t *)pid,
                         (const int32_t *)pstart, (const int32_t *)qstart, (const int64_t *)totals);
    return free_after(ctx, dk, rc, err);
}

extern "C" int SIMT_NAME(kn__gpu_window_frames)(const kn_ctx *ctx, const kn_window_frame *f, const int32_t *bounds,
                                                int64_t rows, const pa_column *order_key, int32_t *frames,
                                                pa_err *err)
{
    int rc = kn__window_frames_check(f, rows, order_key, err);
    if (rc != PA_OK || rows == 0)
        return rc;
    pa_column key;
    memset(&key, 0, sizeof key);
    if (order_key)
        key = *order_key;
    return SIMT_LAUNCH(frames_k, blocks_for(rows), THREADS, 0, ctx->stream, err, *f, bounds, rows, key,
                       order_key != NULL, frames);
}

extern "C" int SIMT_NAME(kn__gpu_window_tree)(const kn_ctx *ctx, const kn_window_fn *fn, const pa_column *arg,
                                              const int32_t *bounds, int64_t rows, void *tree, size_t tree_bytes,
                                              pa_err *err)
{
    int rc = kn__window_tree_check(fn, arg, bounds, rows, tree_bytes, err);
    if (rc != PA_OK)
        return rc;
    if (fn->kind == KN_WIN_STRING_AGG) {   /* three scans, the last reading the second */
        int64_t *T = (int64_t *)tree;
        for (int w = 0; w < 3 && rc == PA_OK; w++) {
            int64_t *P = T + (int64_t)w * (rows + 1);
            rc = scan(ctx, rows, sa_term{w, *arg, bounds, T, rows}, sa_write{P}, NULL, P + rows, err);
        }
        return rc;
    }
    int64_t m = kn__win_leaves(rows);
    rc = SIMT_LAUNCH(leaves_k, blocks_for(m), THREADS, 0, ctx->stream, err, (int)fn->kind, *arg, rows, tree, m);
    for (int64_t lo = m / 2; rc == PA_OK && lo >= 1; lo /= 2)
        rc = SIMT_LAUNCH(level_k, blocks_for(lo), THREADS, 0, ctx->stream, err, (int)fn->kind, *arg, tree, lo);
    return rc;
}

extern "C" int SIMT_NAME(kn__gpu_window_eval)(const kn_ctx *ctx, const kn_window_fn *fn, const pa_column *arg,
                                              const int32_t *bounds, const int32_t *frames, const void *tree,
                                              int64_t rows, int64_t first, int64_t n, pa_column *out, int32_t *idx,
                                              pa_err *err)
{
    int rc = kn__window_eval_check(fn, arg, bounds, frames, tree, rows, first, n, out, idx, err);
    if (rc != PA_OK)
        return rc;
    pa_column a;
    memset(&a, 0, sizeof a);
    if (arg)
        a = *arg;
    if (fn->kind == KN_WIN_STRING_AGG) {
        out->length = n;
        const int64_t *T = (const int64_t *)tree;
        rc = SIMT_LAUNCH(sa_offsets_k, blocks_for((n + 7) / 8), THREADS, 0, ctx->stream, err, *fn, bounds, T, rows,
                         first, n, out->offsets, out->validity);
        if (rc == PA_OK && n > 0)
            rc = SIMT_LAUNCH(sa_pieces_k, blocks_for(n), THREADS, 0, ctx->stream, err, *fn, a, bounds, T, rows, first,
                             n, (char *)out->data);
        return rc;
    }
    if (kn_window_takes(fn->kind)) {
        if (n == 0)
            return PA_OK;
        return SIMT_LAUNCH(positions_k, blocks_for(n), THREADS, 0, ctx->stream, err, *fn, a, bounds, frames, tree,
                           rows, first, n, idx);
    }
    out->length = n;
    if (n == 0)
        return PA_OK;
    eval_args e = {*fn, a, *out, bounds, frames, tree, rows, first, n};
    fault_t big = fault_of(ctx, PA_EOVERFLOW, "SUM overflows BIGINT");
    fault_t dec = fault_of(ctx, PA_EOVERFLOW, "SUM overflows DECIMAL(38)");
    fault_t wide = fault_of(ctx, PA_EOVERFLOW, fn->kind == KN_WIN_SUM
                                                   ? "SUM overflows: the sum of its values passes 128 bits"
                                                   : "AVG overflows: the sum of its values passes 128 bits");
    return SIMT_LAUNCH(values_k, blocks_for((n + 7) / 8), THREADS, 0, ctx->stream, err, e, big, dec, wide);
}

extern "C" int SIMT_NAME(kn__gpu_window_text_bytes)(const kn_ctx *ctx, const kn_window_fn *fn, const int32_t *bounds,
                                                    const void *tree, int64_t rows, int64_t first, int64_t n,
                                                    int64_t *bytes, pa_err *err)
{
    int rc = kn__window_text_bytes_check(fn, bounds, tree, rows, first, n, bytes, err);
    if (rc != PA_OK)
        return rc;
    return SIMT_LAUNCH(sa_bytes_k, 1, 1, 0, ctx->stream, err, *fn, bounds, (const int64_t *)tree, rows, first, n,
                       bytes);
}
