/*
 * simt_bench_kernels.cu - the kernels simt_bench.c times on the SIMT
 * emulation: 256-thread blocks with a number of barriers, warp shuffle
 * reductions, and an empty kernel for the cost of a launch.
 */
#include "simt/simt.h"

/* Each round: write a shared slot, barrier, read a neighbour's. */
__global__ static void barriers_k(int *out, int rounds)
{
    __shared__ int s[256];
    unsigned t = threadIdx.x;
    int v = (int)t;
    for (int r = 0; r < rounds; r++) {
        s[t] = v;
        __syncthreads();
        v += s[(t + 1) & 255];
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x + t] = v;
}

extern "C" int SIMT_NAME(bench_barriers)(dv_stream *s, unsigned blocks, int rounds, int *out, pa_err *err)
{
    /* rounds loops of two barriers each */
    return SIMT_LAUNCH(barriers_k, blocks, 256, 0, s, err, out, rounds);
}

/* rounds warp sums of five shuffles each. */
__global__ static void shuffles_k(int *out, int rounds)
{
    int v = (int)threadIdx.x;
    for (int r = 0; r < rounds; r++)
        for (int d = 16; d > 0; d /= 2)
            v += __shfl_xor_sync(0xFFFFFFFFu, v, d);
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

extern "C" int SIMT_NAME(bench_shuffles)(dv_stream *s, unsigned blocks, int rounds, int *out, pa_err *err)
{
    return SIMT_LAUNCH(shuffles_k, blocks, 256, 0, s, err, out, rounds);
}

__global__ static void empty_k(int *out)
{
    if (threadIdx.x == 0 && out)
        out[blockIdx.x] = 1;
}

extern "C" int SIMT_NAME(bench_empty)(dv_stream *s, unsigned threads, int *out, pa_err *err)
{
    return SIMT_LAUNCH(empty_k, 1, threads, 0, s, err, out);
}
