/*
 * simt_cuda.c - what simt.h's CUDA side needs from the device layer: the
 * cudaStream_t behind a dv_stream of the cuda device, and a launch's status
 * as a pa_ status (cudaGetLastError). Built only with the CUDA backend.
 */
#include "device/device_int.h"
#include "simt/simt_rt.h"

#include <cuda_runtime_api.h>

cudaStream_t simt_cuda_stream(dv_stream *s);
int simt_cuda_launched(const char *kernel, pa_err *err);

cudaStream_t simt_cuda_stream(dv_stream *s)
{
    return (cudaStream_t)s->impl;
}

int simt_cuda_launched(const char *kernel, pa_err *err)
{
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return pa_error(err, PA_EDEVICE, "launch of %s: %s (%s)", kernel, cudaGetErrorString(e), cudaGetErrorName(e));
    pa_counter_add(PA_CTR_KERNELS_LAUNCHED, 1);
    return PA_OK;
}
