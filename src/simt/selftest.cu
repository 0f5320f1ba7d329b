/*
 * selftest.cu - the library's own SIMT kernel: the sum of n int32 values by
 * a grid-stride block reduction (warp shuffles, shared memory, a barrier,
 * one atomic per block). An end-to-end check that a device runs kernels
 * (simt_selftest in grid.c picks the build of this file for the device),
 * and the example of a kernel source compiled both by nvcc and, for the
 * emulation, by the host C++ compiler.
 */
#include "simt/simt.h"

__device__ __forceinline__ static long long warp_sum(long long v)
{
    for (int d = warpSize / 2; d > 0; d /= 2)
        v += __shfl_down_sync(0xFFFFFFFFu, v, d);
    return v;
}

/* Blocks of SELFTEST_THREADS (a multiple of 32, at most 1024) threads. */
#define SELFTEST_THREADS 256
#define SELFTEST_BLOCKS 64

__global__ static void sum_k(const int32_t *in, long long n, unsigned long long *out)
{
    __shared__ long long partial[SELFTEST_THREADS / 32];
    long long v = 0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        v += in[i];
    v = warp_sum(v);
    unsigned lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_sum(lane < SELFTEST_THREADS / 32 ? partial[lane] : 0);
        if (lane == 0)
            atomicAdd(out, (unsigned long long)v);
    }
}

extern "C" int SIMT_NAME(simt_selftest)(dv_stream *s, const int32_t *in, int64_t n, unsigned long long *out,
                                        pa_err *err)
{
    long long blocks = (n + SELFTEST_THREADS - 1) / SELFTEST_THREADS;
    if (blocks > SELFTEST_BLOCKS)
        blocks = SELFTEST_BLOCKS;
    if (blocks < 1)
        blocks = 1;
    return SIMT_LAUNCH(sum_k, (unsigned)blocks, SELFTEST_THREADS, 0, s, err, in, (long long)n, out);
}
