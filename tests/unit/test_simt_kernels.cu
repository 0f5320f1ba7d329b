/*
 * test_simt_kernels.cu - small CUDA kernels that exercise the SIMT
 * emulation (test_simt.c): barrier order, a block reduction with shared
 * memory and warp shuffles, shuffles and votes with partial masks,
 * histogram and atomics over many blocks, dynamic shared memory, indexes
 * of 3-D grids, and kernels that break CUDA's rules on purpose. Each entry
 * enqueues one launch on the stream and returns its status. The same file
 * compiles with nvcc (a build check; the tests run the emulation).
 */
#include "simt/simt.h"
#include "simt_testkernels.h"

/* ------------------------------------------------------------ barriers */

/* Two rounds: every thread writes its slot, then reads its neighbour's. A
 * missing barrier reads a slot not written yet in this block (the fibers
 * run in order), which holds the previous block's or round's value. */
__global__ static void barrier_order_k(unsigned *out)
{
    __shared__ unsigned s[256];
    unsigned t = threadIdx.x, n = blockDim.x, b = blockIdx.x;
    s[t] = b * 1000 + t;
    __syncthreads();
    unsigned first = s[(t + 1) % n];
    __syncthreads();   /* every read of round one before any write of round two */
    s[t] = b * 1000 + t + 500;
    __syncthreads();
    unsigned second = s[(t + n - 1) % n];
    out[2 * (b * n + t)] = first;
    out[2 * (b * n + t) + 1] = second;
}

extern "C" int SIMT_NAME(tk_barrier_order)(dv_stream *s, unsigned blocks, unsigned threads, unsigned *out,
                                           pa_err *err)
{
    return SIMT_LAUNCH(barrier_order_k, blocks, threads, 0, s, err, out);
}

/* The _count, _and and _or barriers: out[b] = {count, and, or} of the
 * predicate (threadIdx.x % mod == 0). */
__global__ static void barrier_vote_k(int *out, unsigned mod)
{
    int pred = threadIdx.x % mod == 0;
    int c = __syncthreads_count(pred);
    int a = __syncthreads_and(pred);
    int o = __syncthreads_or(pred);
    if (threadIdx.x == 0) {
        out[3 * blockIdx.x] = c;
        out[3 * blockIdx.x + 1] = a;
        out[3 * blockIdx.x + 2] = o;
    }
}

extern "C" int SIMT_NAME(tk_barrier_vote)(dv_stream *s, unsigned blocks, unsigned threads, unsigned mod, int *out,
                                          pa_err *err)
{
    return SIMT_LAUNCH(barrier_vote_k, blocks, threads, 0, s, err, out, mod);
}

/* ------------------------------------------------------- block reduction */

__device__ __forceinline__ static long long warp_sum(long long v)
{
    for (int d = 16; d > 0; d /= 2)
        v += __shfl_down_sync(0xFFFFFFFFu, v, d);
    return v;
}

/* Grid-stride sum of n values into *out: a warp reduction with shuffles,
 * per-warp partials in shared memory, a second warp reduction, one atomic
 * per block. Blocks of a multiple of 32 threads, 1024 at most. */
__global__ static void block_sum_k(const long long *in, long long n, unsigned long long *out)
{
    __shared__ long long partial[32];
    long long v = 0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        v += in[i];
    v = warp_sum(v);
    unsigned lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / warpSize ? partial[lane] : 0;
        for (int m = 16; m > 0; m /= 2)
            v += __shfl_xor_sync(0xFFFFFFFFu, v, m);
        if (lane == 0)
            atomicAdd(out, (unsigned long long)v);
    }
}

extern "C" int SIMT_NAME(tk_block_sum)(dv_stream *s, unsigned blocks, unsigned threads, const long long *in,
                                       long long n, unsigned long long *out, pa_err *err)
{
    return SIMT_LAUNCH(block_sum_k, blocks, threads, 0, s, err, in, n, out);
}

/* ------------------------------------------------------ warp intrinsics */

/* One block of 64 threads (two warps); out has TK_LANES_OUT values per thread. */
__global__ static void warp_ops_k(long long *out)
{
    unsigned t = threadIdx.x, lane = t % 32;
    long long *o = out + (size_t)t * TK_LANES_OUT;
    o[0] = __shfl_sync(0xFFFFFFFFu, (int)(lane * 10), 3, 8);
    o[1] = __shfl_up_sync(0xFFFFFFFFu, (int)(lane * 10), 2, 16);
    o[2] = __shfl_down_sync(0xFFFFFFFFu, (int)(lane * 10), 5);
    o[3] = __shfl_xor_sync(0xFFFFFFFFu, (int)(lane * 10), 1);
    /* 64-bit values: the high half must travel too. */
    unsigned long long big = ((unsigned long long)(lane + 1) << 40) | 0xABCDEFu;
    o[4] = (long long)__shfl_xor_sync(0xFFFFFFFFu, big, 16);
    double d = __shfl_sync(0xFFFFFFFFu, lane * 0.5 + 1e12, 31 - (int)lane);
    o[5] = (long long)(d * 2);
    /* Disjoint groups at once: the low half votes, the high half shuffles. */
    if (lane < 16) {
        o[6] = __ballot_sync(0x0000FFFFu, lane % 3 == 0);
        o[7] = __any_sync(0x0000FFFFu, lane == 40);
    } else {
        o[6] = __shfl_sync(0xFFFF0000u, (int)lane, 16);
        o[7] = __all_sync(0xFFFF0000u, lane >= 16);
    }
    /* The odd lanes of the branch are the active ones. */
    if (lane % 2) {
        unsigned m = __activemask();
        o[8] = m;
        o[9] = __shfl_sync(m, (int)lane, 1);
    } else {
        o[8] = 0;
        o[9] = 0;
    }
    __syncwarp();
    unsigned b = __ballot_sync(0xFFFFFFFFu, 1);
    o[10] = __popc(b) * 1000 + __ffs((int)(b & ~1u)) * 100 + __clz(1);
    float f = __shfl_down_sync(0xFFFFFFFFu, (float)lane + 0.25f, 1, 4);
    o[11] = (long long)(f * 4);
}

extern "C" int SIMT_NAME(tk_warp_ops)(dv_stream *s, long long *out, pa_err *err)
{
    return SIMT_LAUNCH(warp_ops_k, 1, 64, 0, s, err, out);
}

/* A block of 48 threads: the second warp has 16 lanes; a full-mask
 * reduction in it still completes (lanes that do not exist are left out). */
__global__ static void partial_warp_k(int *out)
{
    int v = 1;
    for (int d = 8; d > 0; d /= 2)
        v += __shfl_down_sync(0xFFFFFFFFu, v, d, 16);
    out[threadIdx.x] = v;
}

extern "C" int SIMT_NAME(tk_partial_warp)(dv_stream *s, int *out, pa_err *err)
{
    return SIMT_LAUNCH(partial_warp_k, 1, 48, 0, s, err, out);
}

/* ---------------------------------------------------------------- atomics */

/* A histogram of n keys into 256 bins: per-block bins in shared memory,
 * then one global atomic per bin and block. */
__global__ static void histogram_k(const unsigned char *keys, int n, unsigned *bins)
{
    __shared__ unsigned local[256];
    for (unsigned i = threadIdx.x; i < 256; i += blockDim.x)
        local[i] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[keys[i]], 1u);
    __syncthreads();
    for (unsigned i = threadIdx.x; i < 256; i += blockDim.x)
        if (local[i])
            atomicAdd(&bins[i], local[i]);
}

extern "C" int SIMT_NAME(tk_histogram)(dv_stream *s, unsigned blocks, unsigned threads, const unsigned char *keys,
                                       int n, unsigned *bins, pa_err *err)
{
    return SIMT_LAUNCH(histogram_k, blocks, threads, 0, s, err, keys, n, bins);
}

/* Every atomic on one set of counters from every thread of the grid. */
__global__ static void atomics_k(tk_atomics *a)
{
    int g = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    atomicAdd(&a->i_add, 1);
    atomicAdd(&a->u_add, 2u);
    atomicAdd(&a->ull_add, 3ull);
    atomicAdd(&a->f_add, 1.0f);
    atomicAdd(&a->d_add, 0.5);
    atomicSub(&a->i_sub, 1);
    atomicMax(&a->i_max, g);
    atomicMin(&a->i_min, -g);
    atomicMax(&a->ull_max, (unsigned long long)g << 33);
    atomicMin(&a->u_min, (unsigned)g + 7);
    atomicOr(&a->u_or, 1u << (g % 32));
    atomicAnd(&a->u_and, ~(1u << (g % 16)));
    atomicXor(&a->u_xor, (unsigned)g);
    atomicInc(&a->u_inc, 0xFFFFFFFFu);
    unsigned long long old = a->ull_cas, seen;   /* a CAS loop: add g */
    while ((seen = atomicCAS(&a->ull_cas, old, old + (unsigned long long)g)) != old)
        old = seen;
    int o = a->i_cas;
    int s2;
    while ((s2 = atomicCAS(&a->i_cas, o, o + 1)) != o)
        o = s2;
    atomicExch(&a->i_exch, 42);
    atomicExch(&a->f_exch, 2.5f);
}

extern "C" int SIMT_NAME(tk_atomics)(dv_stream *s, unsigned blocks, unsigned threads, tk_atomics *a, pa_err *err)
{
    return SIMT_LAUNCH(atomics_k, blocks, threads, 0, s, err, a);
}

/* Few blocks hammering the same counters for long enough that blocks on
 * different OS threads overlap: a lost update shows in the totals. */
__global__ static void hammer_k(tk_atomics *a, int iters)
{
    for (int i = 0; i < iters; i++) {
        atomicAdd(&a->i_add, 1);
        atomicAdd(&a->ull_add, 3ull);
        atomicAdd(&a->f_add, 1.0f);
        atomicAdd(&a->d_add, 0.5);
        atomicInc(&a->u_inc, 0xFFFFFFFFu);
        int o = a->i_cas, seen;
        while ((seen = atomicCAS(&a->i_cas, o, o + 1)) != o)
            o = seen;
    }
}

extern "C" int SIMT_NAME(tk_hammer)(dv_stream *s, unsigned blocks, unsigned threads, tk_atomics *a, int iters,
                                    pa_err *err)
{
    return SIMT_LAUNCH(hammer_k, blocks, threads, 0, s, err, a, iters);
}

/* --------------------------------------------- dynamic shared, 3-D grids */

/* Reverse each block's slice of n ints through dynamic shared memory; also
 * report what the shared memory held before the block wrote it. */
__global__ static void reverse_k(const int *in, int *out, unsigned *before)
{
    SIMT_DYNAMIC_SHARED(int, buf);
    unsigned t = threadIdx.x, n = blockDim.x, base = blockIdx.x * n;
    if (t == 0)
        before[blockIdx.x] = (unsigned)buf[n - 1];
    __syncthreads();
    buf[t] = in[base + t];
    __syncthreads();
    out[base + t] = buf[n - 1 - t];
}

extern "C" int SIMT_NAME(tk_reverse)(dv_stream *s, unsigned blocks, unsigned threads, const int *in, int *out,
                                     unsigned *before, pa_err *err)
{
    return SIMT_LAUNCH(reverse_k, blocks, threads, threads * sizeof(int), s, err, in, out, before);
}

/* Every thread of a 3-D grid of 3-D blocks writes its global linear index
 * at its slot; a thread also gets its own copy of the parameters. */
__global__ static void ids_k(unsigned *out, unsigned bump)
{
    unsigned bx = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned tx = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned per = blockDim.x * blockDim.y * blockDim.z;
    bump += tx;   /* changes this thread's copy only */
    out[bx * per + tx] = bump - tx + bx * per + tx;
}

extern "C" int SIMT_NAME(tk_ids)(dv_stream *s, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned *out, pa_err *err)
{
    return SIMT_LAUNCH(ids_k, dim3(gx, gy, gz), dim3(bx, by, bz), 0, s, err, out, 7u);
}

/* A kernel without barriers (the one-fiber fast path). */
__global__ static void scale_k(int *v, int n, int k)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        v[i] *= k;
}

extern "C" int SIMT_NAME(tk_scale)(dv_stream *s, unsigned blocks, unsigned threads, int *v, int n, int k,
                                   pa_err *err)
{
    return SIMT_LAUNCH(scale_k, blocks, threads, 0, s, err, v, n, k);
}

/* ------------------------------------------------------ broken on purpose */

__global__ static void broken_k(int how, int *out)
{
    unsigned t = threadIdx.x;
    switch (how) {
    case TK_DIVERGENT_BARRIER:
        if (t < 16)
            __syncthreads();
        else
            __syncthreads();
        break;
    case TK_EXIT_BEFORE_BARRIER:
        if (t == 5)
            return;
        __syncthreads();
        break;
    case TK_WARP_DEADLOCK:   /* half the warp shuffles with the full mask, half waits at the barrier */
        if (t < 16)
            out[t] = __shfl_sync(0xFFFFFFFFu, (int)t, 0);
        __syncthreads();
        break;
    case TK_WARP_MISMATCH:
        if (t == 0)
            out[t] = (int)__ballot_sync(0xFFFFFFFFu, 1);
        else
            out[t] = __shfl_sync(0xFFFFFFFFu, (int)t, 0);
        break;
    case TK_MASK_WITHOUT_SELF:
        out[t] = __shfl_sync(1u << ((t + 1) % 32), (int)t, 0);
        break;
    case TK_ASSERT:
        SIMT_ASSERT(!(blockIdx.x == 2 && t == 7));
        out[blockIdx.x * blockDim.x + t] = 1;
        break;
    default:
        out[t] = 1;
        break;
    }
}

extern "C" int SIMT_NAME(tk_broken)(dv_stream *s, int how, unsigned blocks, unsigned threads, size_t smem, int *out,
                                    pa_err *err)
{
    return SIMT_LAUNCH(broken_k, blocks, threads, smem, s, err, how, out);
}
