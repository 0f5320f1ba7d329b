/*
 * kn_gpu.h - what the CUDA sources of the relational kernels (kn_gpu_*.cu)
 * share: launch shapes, block-wide scans, and the three-pass device-wide
 * scan that every compaction, string gather and reduction here is built on.
 *
 * Design notes
 * - Each kn_gpu_*.cu file is C-style CUDA compiled twice (simt/simt.h):
 *   by nvcc for the `cuda` device (entries kn__gpu_<name>_cuda) and by the
 *   host C++ compiler for the SIMT emulation (entries kn__gpu_<name>_simt),
 *   which the `sim` device runs on its executor against its protected
 *   memory. kn_dispatch.c and kn_sim.c put the entries in the tables; the
 *   kernels listed in KN_OPS_GPU_LIST (kn_ops_int.h) have one.
 * - An entry runs on the calling thread: it checks what the host knows
 *   (types, lengths, scratch sizes) and returns PA_EINVAL at once, sets the
 *   host-side output metadata the call fixes, poisons the pinned outputs
 *   the kernels write (dv_poison_output), and enqueues kernels on
 *   ctx->stream. It never reads device memory and never waits.
 * - Helpers, functors and kernels live in unnamed namespaces (see below);
 *   only the entries are extern "C".
 * - Kernel parameters are passed by value (pa_column descriptors, small
 *   structs); a kernel writes pinned outputs (a count, a byte total)
 *   directly, which CUDA allows for page-locked memory under unified
 *   addressing, and never does atomics on them.
 * - Temporary device memory (per-tile partial sums) comes from the device's
 *   pool (dv_alloc) and is handed back with dv_free_async on the stream,
 *   as CUB's temporary storage would be.
 * - Conditions that depend on device data and that the cpu loops report as
 *   errors (a NULL row taken into a column without validity, strings past
 *   2 GiB, a partition id out of range) are data faults (fault_t): the
 *   thread records the status and a static message in its stream's fault
 *   block (dv_stream_fault_words) and skips its work, and the next sync or
 *   query of that stream reports "a kernel on <device> stopped: <message>". Not a
 *   trap: on a GPU that would end the CUDA context and every later query.
 * - Device-wide scan (kn_gpu::scan): tiles of TILE rows, one block each,
 *   ITEMS consecutive rows per thread. Pass 1 sums f(i) per tile, pass 2
 *   (one block) turns the tile sums into exclusive offsets and writes the
 *   total, pass 3 rescans each tile and calls w(i, offset, f(i)) with the
 *   row's exclusive prefix. Order is
 *   kept, so a selection vector comes out ascending. f and w are functors
 *   with __device__ operator(), trivially copyable (they carry pointers).
 */
#ifndef PISTA_KN_GPU_H
#define PISTA_KN_GPU_H

#include <type_traits>

#include "simt/simt.h"

#include "kernels/kn_hash_int.h"
#include "kernels/kn_sim_int.h"

/* Everything here has internal linkage (an unnamed namespace): each .cu
 * file is compiled twice into one library, and host code instantiated from
 * the same template by nvcc and by the emulation must not merge. */
namespace {
namespace kn_gpu {

constexpr unsigned THREADS = 256;                  /* threads per block of every kernel here */
constexpr unsigned WARPS = THREADS / 32;
/* Rows per thread in a scan tile. The emulation takes more: its cost is
 * per GPU thread and per barrier, not per row. */
#if SIMT_EMULATED
constexpr unsigned ITEMS = 16;   /* tiles of 4096 rows: tests of a few thousand rows span several */
#else
constexpr unsigned ITEMS = 8;
#endif
constexpr int64_t TILE = (int64_t)THREADS * ITEMS;
constexpr unsigned FULL = 0xFFFFFFFFu;
#if SIMT_EMULATED
constexpr int64_t MAX_BLOCKS = 16;                 /* grid-stride loops: a few blocks per executor thread */
#else
constexpr int64_t MAX_BLOCKS = 8192;
#endif

/* Blocks for a grid-stride loop over n items. */
inline unsigned blocks_for(int64_t n)
{
    int64_t b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b < 1 ? 1 : b > MAX_BLOCKS ? MAX_BLOCKS : b);
}

/* Tiles (blocks) of a scan over n items; at least one. */
inline unsigned tiles_for(int64_t n) { return (unsigned)(n <= 0 ? 1 : (n + TILE - 1) / TILE); }

#define KN_GPU_FOR(i, n) \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

/* Exclusive prefix of v over the block (blockDim.x == THREADS; every thread
 * calls it), and the block's total in *total. */
__device__ inline int64_t block_exclusive_scan(int64_t v, int64_t *total)
{
    __shared__ int64_t warp_sums[WARPS];
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int64_t x = v;
    for (unsigned d = 1; d < 32; d <<= 1) {
        int64_t y = __shfl_up_sync(FULL, x, d);
        if (lane >= d)
            x += y;
    }
    if (lane == 31)
        warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        int64_t w = lane < WARPS ? warp_sums[lane] : 0;
        for (unsigned d = 1; d < WARPS; d <<= 1) {
            int64_t y = __shfl_up_sync(FULL, w, d);
            if (lane >= d)
                w += y;
        }
        if (lane < WARPS)
            warp_sums[lane] = w;
    }
    __syncthreads();
    int64_t before = warp ? warp_sums[warp - 1] : 0;
    *total = warp_sums[WARPS - 1];
    __syncthreads(); /* warp_sums is reused by the next call */
    return before + x - v;
}

/* Pass 1: partial[tile] = sum of f(i) over the tile. Each thread takes
 * ITEMS consecutive rows (a blocked arrangement), so a tile costs one
 * block-wide scan. */
template <class F>
__global__ void tile_sum_k(F f, int64_t n, int64_t *partial)
{
    int64_t first = (int64_t)blockIdx.x * TILE + (int64_t)threadIdx.x * ITEMS, s = 0;
    for (unsigned r = 0; r < ITEMS; r++)
        if (first + r < n)
            s += f(first + r);
    int64_t total;
    block_exclusive_scan(s, &total);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = total;
}

/* Pass 2 (one block): partial[0..nb) -> exclusive offsets starting at
 * *start (0 when start is NULL); *total (when not NULL) = start + sum. */
template <int = 0> /* a template, so a file that never scans does not instantiate it */
__global__ void partial_scan_k(int64_t *partial, int64_t nb, const int32_t *start, int64_t *total)
{
    int64_t carry = start ? *start : 0;
    for (int64_t at = 0; at < nb; at += THREADS) {
        int64_t i = at + threadIdx.x;
        int64_t v = i < nb ? partial[i] : 0, t;
        int64_t ex = block_exclusive_scan(v, &t);
        if (i < nb)
            partial[i] = carry + ex;
        carry += t;
    }
    if (threadIdx.x == 0 && total)
        *total = carry;
}

/* Pass 3: w(i, offset of row i, f(i)) for every row of the tile, each
 * thread's ITEMS rows in order after one block-wide scan of their sums. */
template <class F, class W>
__global__ void tile_scan_k(F f, W w, int64_t n, const int64_t *partial)
{
    int64_t first = (int64_t)blockIdx.x * TILE + (int64_t)threadIdx.x * ITEMS, v[ITEMS], s = 0;
    for (unsigned r = 0; r < ITEMS; r++) {
        v[r] = first + r < n ? f(first + r) : 0;
        s += v[r];
    }
    int64_t total;
    int64_t at = partial[blockIdx.x] + block_exclusive_scan(s, &total);
    for (unsigned r = 0; r < ITEMS && first + r < n; r++) {
        w(first + r, at, v[r]);
        at += v[r];
    }
}

/* A pass-3 functor that does nothing: scan() as a plain reduction. */
struct no_write {
    __device__ void operator()(int64_t, int64_t, int64_t) const {}
};

/* The device-wide scan of f over [0, n) described above. start: a device
 * int32 the offsets begin at (NULL: 0). total: where the sum (plus *start)
 * goes, device or pinned memory, or NULL. With W = no_write pass 3 is not
 * launched. */
template <class F, class W>
inline int scan(const kn_ctx *ctx, int64_t n, F f, W w, const int32_t *start, int64_t *total, pa_err *err)
{
    unsigned nb = tiles_for(n);
    int64_t *partial = NULL;
    int rc = dv_alloc(ctx->dev, (size_t)nb * sizeof *partial, (void **)&partial, err);
    if (rc != PA_OK)
        return rc;
    rc = SIMT_LAUNCH(tile_sum_k<F>, nb, THREADS, 0, ctx->stream, err, f, n, partial);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(partial_scan_k<>, 1, THREADS, 0, ctx->stream, err, partial, (int64_t)nb, start, total);
    if (rc == PA_OK && !std::is_same<W, no_write>::value)
        rc = SIMT_LAUNCH((tile_scan_k<F, W>), nb, THREADS, 0, ctx->stream, err, f, w, n,
                         (const int64_t *)partial);
    int rf = dv_free_async(ctx->stream, partial, rc == PA_OK ? err : NULL);
    return rc != PA_OK ? rc : rf;
}

/* A device copy of n bytes at v (stage_bytes) or of v, made in stream
 * order (through pinned memory, so v may go out of scope at once): for
 * structs too large to pass by value to every GPU thread (the emulation
 * copies a kernel's parameters per thread). Hand it back with
 * dv_free_async (free_after) after the kernels that read it. */
/* Copy n bytes at v into device memory dev (already allocated), in stream
 * order through pinned memory. */
inline int stage_into(const kn_ctx *ctx, const void *v, size_t n, void *dev, pa_err *err)
{
    void *h = NULL;
    int rc = dv_host_alloc(ctx->dev, n, &h, err);
    if (rc != PA_OK)
        return rc;
    memcpy(h, v, n);
    rc = dv_copy_async(ctx->stream, dev, h, n, DV_COPY_H2D, err);
    int rf = dv_host_free_async(ctx->stream, h, rc == PA_OK ? err : NULL);
    return rc != PA_OK ? rc : rf;
}

inline int stage_bytes(const kn_ctx *ctx, const void *v, size_t n, void **dev, pa_err *err)
{
    int rc = dv_alloc(ctx->dev, n, dev, err);
    if (rc == PA_OK && (rc = stage_into(ctx, v, n, *dev, err)) != PA_OK) {
        dv_free(ctx->dev, *dev);
        *dev = NULL;
    }
    return rc;
}

template <class T>
inline int stage(const kn_ctx *ctx, const T &v, T **dev, pa_err *err)
{
    return stage_bytes(ctx, &v, sizeof v, (void **)dev, err);
}

/* Hand back device memory after the kernels enqueued so far; rc is the
 * call's status so far, and the result keeps the first error. */
inline int free_after(const kn_ctx *ctx, void *p, int rc, pa_err *err)
{
    if (!p)
        return rc;
    int rf = dv_free_async(ctx->stream, p, rc == PA_OK ? err : NULL);
    return rc != PA_OK ? rc : rf;
}

/* One thread stores v at p (device or pinned memory), in stream order. */
template <class T>
__global__ void store_k(T *p, T v)
{
    *p = v;
}

/* A data fault a kernel may raise: the device's fault words, the status
 * and a static host string (its address travels as a number; device code
 * never reads it). The first fault stays; a race between two faulting
 * threads keeps one of their messages, either of which is true. */
struct fault_t {
    int64_t *words;
    int64_t status;
    uint64_t msg;
    __device__ void raise() const
    {
        if (*(volatile int64_t *)&words[0] != 0)
            return;
        *(volatile uint64_t *)&words[1] = msg;
        __threadfence_system();
        *(volatile int64_t *)&words[0] = status;
    }
};

inline fault_t fault_of(const kn_ctx *ctx, int status, const char *msg)
{
    return fault_t{dv_stream_fault_words(ctx->stream), status, (uint64_t)(uintptr_t)msg};
}

/* A message written into the text area of a stream's fault block. */
struct fault_text {
    char *p;
    int n;
    __device__ void put(const char *s)
    {
        for (; *s && n < DV_FAULT_TEXT_BYTES - 1; s++)
            p[n++] = *s;
        p[n] = 0;
    }
    __device__ void num(uint64_t v)
    {
        char b[24];
        int k = 0;
        do
            b[k++] = (char)('0' + v % 10);
        while ((v /= 10) != 0);
        while (k > 0 && n < DV_FAULT_TEXT_BYTES - 1)
            p[n++] = b[--k];
        p[n] = 0;
    }
};

/* A batch of pages (kn_decompress_pages, kn_decode_pages): the first page
 * of the call to fail claims the fault message (a claim word) and gets its
 * text started with the page's `where`, or "page K of the batch: ", as the
 * cpu loops word it (kn__batch_error); false when another thread claimed it
 * or an earlier call's fault stands. Finish with raise_text. */
__device__ inline bool batch_fault(int64_t *fault, int *claim, const char *where, int64_t k, fault_text *t)
{
    if (*(volatile int64_t *)fault != 0 || atomicCAS(claim, 0, 1) != 0)
        return false;
    *t = fault_text{(char *)fault + DV_FAULT_TEXT_AT, 0};
    if (where) {
        t->put(where);
        t->put(": ");
    } else {
        t->put("page ");
        t->num((uint64_t)k);
        t->put(" of the batch: ");
    }
    return true;
}

__device__ inline void raise_text(int64_t *fault, const fault_text &t, int status)
{
    *(volatile uint64_t *)&fault[1] = (uint64_t)(uintptr_t)t.p;
    __threadfence_system();
    *(volatile int64_t *)&fault[0] = status;
}

/* Validity bit i of bits (NULL: all valid). */
__device__ inline bool bit(const uint8_t *bits, int64_t i) { return !bits || ((bits[i >> 3] >> (i & 7)) & 1); }

/* 16-byte values move as two words (no __int128 arithmetic needed). */
struct v16 {
    uint64_t lo, hi;
};

} /* namespace kn_gpu */
} /* namespace */

#endif /* PISTA_KN_GPU_H */
