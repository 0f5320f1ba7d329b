/*
 * fill_cuda.cu - the device runtime's kernels: set `count` 32-bit words
 * (dv_fill_u32_async: tests and buffer initialisation; a grid-stride loop so
 * any count runs with a bounded grid), and a fault block's fault taken by a
 * stream that waited for an event (dv__fault_inherit on the GPU).
 */
#include "device/device.h"

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

/* dv__fault_inherit (device.c) in one thread: fault blocks are pinned
 * memory the host reads, hence the system-wide fences. */
__global__ static void fault_inherit_kernel(const int64_t *from, int64_t *to)
{
    const volatile int64_t *f = from;
    volatile int64_t *t = to;
    if (t[0] != 0)
        return;
    const int64_t status = f[0];
    if (status == 0)
        return;
    __threadfence_system();
    const char *msg = (const char *)(uintptr_t)f[1];
    if (msg == (const char *)from + DV_FAULT_TEXT_AT) {
        const volatile char *src = (const volatile char *)from + DV_FAULT_TEXT_AT;
        volatile char *dst = (volatile char *)to + DV_FAULT_TEXT_AT;
        for (int i = 0; i < DV_FAULT_TEXT_BYTES; i++)
            dst[i] = src[i];
        msg = (const char *)to + DV_FAULT_TEXT_AT;
    }
    t[1] = (int64_t)(uintptr_t)msg;
    __threadfence_system();
    t[0] = status;
}

extern "C" int dv__cuda_fault_inherit(const int64_t *from, int64_t *to, cudaStream_t stream)
{
    fault_inherit_kernel<<<1, 1, 0, stream>>>(from, to);
    return (int)cudaGetLastError();
}
