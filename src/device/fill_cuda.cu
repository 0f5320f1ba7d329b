/*
 * fill_cuda.cu - the device runtime's one kernel: set `count` 32-bit words.
 * Used by dv_fill_u32_async (tests and buffer initialisation); a grid-stride
 * loop so any count runs with a bounded grid.
 */
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

__global__ static void fill_u32_kernel(uint32_t *dst, uint32_t value, size_t count)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride)
        dst[i] = value;
}

extern "C" int dv__cuda_fill_u32(void *dst, uint32_t value, size_t count, cudaStream_t stream)
{
    const unsigned threads = 256;
    size_t blocks = (count + threads - 1) / threads;
    if (blocks > 65535)   /* enough to fill any GPU; the loop covers the rest */
        blocks = 65535;
    fill_u32_kernel<<<(unsigned)blocks, threads, 0, stream>>>((uint32_t *)dst, value, count);
    return (int)cudaGetLastError();
}
