/*
 * backend_cuda.c - the `cuda` device: a thin mapping onto the CUDA runtime.
 *
 * Every CUDA call goes through CU_CHECK, which records file, line, the call
 * and CUDA's error string on the pa_err and returns PA_EDEVICE. Streams are
 * non-blocking cudaStreams; events are created with timing disabled (cheapest
 * for ordering). Batched copies use cudaMemcpyBatchAsync (CUDA 12.8+) and
 * fall back to one cudaMemcpyAsync per range when the runtime refuses the batch
 * (e.g. an older driver), logging it once.
 */
#include "device/device_int.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

/* fill_cuda.cu */
int dv__cuda_fill_u32(void *dst, uint32_t value, size_t count, cudaStream_t stream);
int dv__cuda_fault_inherit(const int64_t *from, int64_t *to, cudaStream_t stream);

#define CU_CHECK(err, call)                                                   \
    do {                                                                      \
        cudaError_t e_ = (call);                                              \
        if (e_ != cudaSuccess)                                                \
            return pa_error_at((err), PA_EDEVICE, __FILE__, __LINE__, "%s: %s (%s)", \
                               #call, cudaGetErrorString(e_), cudaGetErrorName(e_)); \
    } while (0)

typedef struct cuda_dev {
    int ordinal;
} cuda_dev;

static int set_device(dv_device *d, pa_err *err)
{
    CU_CHECK(err, cudaSetDevice(d->ordinal));
    return PA_OK;
}

static int cuda_enumerate(dv_info *out, int cap, int *n, char *note, size_t note_cap)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    *n = 0;
    if (e != cudaSuccess) {
        if (note && note_cap)
            snprintf(note, note_cap, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
        cudaGetLastError();   /* clear the sticky-free error state */
        return PA_OK;
    }
    if (count == 0 && note && note_cap)
        snprintf(note, note_cap, "the CUDA runtime reports no devices");
    for (int i = 0; i < count && i < cap; i++) {
        struct cudaDeviceProp p;
        memset(&out[i], 0, sizeof out[i]);
        snprintf(out[i].name, sizeof out[i].name, "cuda:%d", i);
        if (cudaGetDeviceProperties(&p, i) == cudaSuccess) {
            snprintf(out[i].model, sizeof out[i].model, "%s, cc %d.%d, %d SMs", p.name, p.major, p.minor,
                     p.multiProcessorCount);
            out[i].memory = p.totalGlobalMem;
        }
    }
    *n = count;
    return PA_OK;
}

static int cuda_open(dv_device *d, int ordinal, const dv_options *opt, pa_err *err)
{
    int count = 0;
    CU_CHECK(err, cudaGetDeviceCount(&count));
    if (ordinal >= count)
        return pa_error(err, PA_EDEVICE, "device cuda:%d requested, but there %s only %d CUDA device%s",
                        ordinal, count == 1 ? "is" : "are", count, count == 1 ? "" : "s");
    struct cudaDeviceProp p;
    CU_CHECK(err, cudaGetDeviceProperties(&p, ordinal));
    CU_CHECK(err, cudaSetDevice(ordinal));
    CU_CHECK(err, cudaFree(0));   /* create the context now, so failures show here */
    cuda_dev *cd = pa_calloc(1, sizeof *cd);
    if (!cd)
        return pa_error(err, PA_ENOMEM, "out of host memory opening cuda:%d", ordinal);
    cd->ordinal = ordinal;
    d->impl = cd;
    snprintf(d->model, sizeof d->model, "%s, cc %d.%d", p.name, p.major, p.minor);
    d->memory_total = p.totalGlobalMem;
    d->host_visible = false;
    return PA_OK;
}

static void cuda_close(dv_device *d)
{
    pa_free(d->impl);
    d->impl = NULL;
}

static int cuda_mem_alloc(void *user, size_t size, void **out, pa_err *err)
{
    dv_device *d = user;
    int rc = set_device(d, err);
    if (rc != PA_OK)
        return rc;
    cudaError_t e = cudaMalloc(out, size);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return pa_error(err, e == cudaErrorMemoryAllocation ? PA_ENOMEM : PA_EDEVICE,
                        "cudaMalloc of %zu bytes on %s: %s", size, d->name, cudaGetErrorString(e));
    }
    return PA_OK;
}

static void cuda_mem_free(void *user, void *p, size_t size)
{
    cudaFree(p);
}

static int cuda_pinned_alloc(void *user, size_t size, void **out, pa_err *err)
{
    cudaError_t e = cudaHostAlloc(out, size, cudaHostAllocPortable);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return pa_error(err, e == cudaErrorMemoryAllocation ? PA_ENOMEM : PA_EDEVICE,
                        "cudaHostAlloc of %zu bytes: %s", size, cudaGetErrorString(e));
    }
    return PA_OK;
}

static void cuda_pinned_free(void *user, void *p, size_t size)
{
    cudaFreeHost(p);
}

static int cuda_stream_create(dv_device *d, void **impl, pa_err *err)
{
    cudaStream_t s;
    int rc = set_device(d, err);
    if (rc != PA_OK)
        return rc;
    CU_CHECK(err, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    *impl = s;
    return PA_OK;
}

static void cuda_stream_destroy(dv_device *d, void *impl)
{
    cudaStreamDestroy((cudaStream_t)impl);
}

static int cuda_stream_sync(dv_stream *s, pa_err *err)
{
    CU_CHECK(err, cudaStreamSynchronize((cudaStream_t)s->impl));
    return PA_OK;
}

static int cuda_event_create(dv_device *d, void **impl, pa_err *err)
{
    cudaEvent_t e;
    int rc = set_device(d, err);
    if (rc != PA_OK)
        return rc;
    CU_CHECK(err, cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    *impl = e;
    return PA_OK;
}

static void cuda_event_destroy(dv_device *d, void *impl)
{
    cudaEventDestroy((cudaEvent_t)impl);
}

static int cuda_event_record(dv_event *e, dv_stream *s, pa_err *err)
{
    CU_CHECK(err, cudaEventRecord((cudaEvent_t)e->impl, (cudaStream_t)s->impl));
    return PA_OK;
}

static int cuda_stream_wait_event(dv_stream *s, dv_event *e, pa_err *err)
{
    CU_CHECK(err, cudaStreamWaitEvent((cudaStream_t)s->impl, (cudaEvent_t)e->impl, 0));
    return PA_OK;
}

/* The answer of cudaEventQuery / cudaStreamQuery: not ready is no error. */
static int query_result(cudaError_t r, bool *done, pa_err *err)
{
    if (r == cudaSuccess || r == cudaErrorNotReady) {
        *done = r == cudaSuccess;
        if (r == cudaErrorNotReady)
            cudaGetLastError();
        return PA_OK;
    }
    CU_CHECK(err, r);
    return PA_OK;
}

static int cuda_event_query(dv_event *e, bool *done, pa_err *err)
{
    return query_result(cudaEventQuery((cudaEvent_t)e->impl), done, err);
}

static int cuda_event_sync(dv_event *e, pa_err *err)
{
    CU_CHECK(err, cudaEventSynchronize((cudaEvent_t)e->impl));
    return PA_OK;
}

static enum cudaMemcpyKind cuda_kind(dv_copy_kind k)
{
    switch (k) {
    case DV_COPY_H2D: return cudaMemcpyHostToDevice;
    case DV_COPY_D2H: return cudaMemcpyDeviceToHost;
    case DV_COPY_D2D: return cudaMemcpyDeviceToDevice;
    case DV_COPY_H2H: return cudaMemcpyHostToHost;
    }
    return cudaMemcpyDefault;
}

static int cuda_copy(dv_stream *s, void *dst, const void *src, size_t n, dv_copy_kind kind, pa_err *err)
{
    if (n == 0)
        return PA_OK;
    CU_CHECK(err, cudaMemcpyAsync(dst, src, n, cuda_kind(kind), (cudaStream_t)s->impl));
    return PA_OK;
}

static int cuda_copy_batch(dv_stream *s, size_t count, void *const *dsts, const void *const *srcs,
                           const size_t *sizes, dv_copy_kind kind, pa_err *err)
{
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12080
    static int batch_refused;
    if (!__atomic_load_n(&batch_refused, __ATOMIC_RELAXED) && kind != DV_COPY_H2H) {
        struct cudaMemcpyAttributes attr;
        memset(&attr, 0, sizeof attr);
        attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
        size_t attr_idx = 0;
        cudaError_t e;
#if CUDART_VERSION >= 13000
        e = cudaMemcpyBatchAsync(dsts, srcs, sizes, count, &attr, &attr_idx, 1, (cudaStream_t)s->impl);
#else
        size_t fail_idx = 0;
        e = cudaMemcpyBatchAsync((void **)dsts, (void **)srcs, (size_t *)sizes, count, &attr, &attr_idx, 1,
                                 &fail_idx, (cudaStream_t)s->impl);
#endif
        if (e == cudaSuccess)
            return PA_OK;
        cudaGetLastError();
        if (e != cudaErrorNotSupported && e != cudaErrorInvalidValue)
            CU_CHECK(err, e);
        __atomic_store_n(&batch_refused, 1, __ATOMIC_RELAXED);
        pa_log(PA_LOG_INFO, "cudaMemcpyBatchAsync refused (%s); using one cudaMemcpyAsync per range",
               cudaGetErrorString(e));
    }
#endif
    for (size_t i = 0; i < count; i++) {
        int rc = cuda_copy(s, dsts[i], srcs[i], sizes[i], kind, err);
        if (rc != PA_OK)
            return rc;
    }
    return PA_OK;
}

typedef struct host_call {
    void (*fn)(void *);
    void *arg;
} host_call;

static void CUDART_CB run_host_call(void *p)
{
    host_call hc = *(host_call *)p;
    pa_free(p);
    hc.fn(hc.arg);
}

static int cuda_host_fn(dv_stream *s, void (*fn)(void *), void *arg, pa_err *err)
{
    host_call *hc = pa_malloc(sizeof *hc);
    if (!hc)
        return pa_error(err, PA_ENOMEM, "out of host memory enqueuing a host function");
    hc->fn = fn;
    hc->arg = arg;
    cudaError_t e = cudaLaunchHostFunc((cudaStream_t)s->impl, run_host_call, hc);
    if (e != cudaSuccess) {
        pa_free(hc);
        CU_CHECK(err, e);
    }
    return PA_OK;
}

static int cuda_fill_u32(dv_stream *s, void *dst, uint32_t value, size_t count, pa_err *err)
{
    CU_CHECK(err, (cudaError_t)dv__cuda_fill_u32(dst, value, count, (cudaStream_t)s->impl));
    return PA_OK;
}

static int cuda_fault_inherit(dv_stream *s, const int64_t *from, int64_t *to, pa_err *err)
{
    CU_CHECK(err, (cudaError_t)dv__cuda_fault_inherit(from, to, (cudaStream_t)s->impl));
    return PA_OK;
}

static int cuda_stream_query(dv_stream *s, bool *idle, pa_err *err)
{
    return query_result(cudaStreamQuery((cudaStream_t)s->impl), idle, err);
}

typedef struct pending_free {
    dv_device *dev;
    void *ptr;
} pending_free;

/* Runs on CUDA's callback thread: returns the block to the pool, which only
 * touches host-side bookkeeping (no CUDA call, as host functions require). */
static void free_when_reached(void *p)
{
    pending_free *f = p;
    dv__free_now(f->dev, f->ptr);
    pa_free(f);
}

static int cuda_free_async(dv_stream *s, void *ptr, pa_err *err)
{
    pending_free *f = pa_malloc(sizeof *f);
    if (!f)
        return pa_error(err, PA_ENOMEM, "out of host memory enqueuing a free");
    f->dev = s->dev;
    f->ptr = ptr;
    int rc = cuda_host_fn(s, free_when_reached, f, err);
    if (rc != PA_OK)
        pa_free(f);
    return rc;
}

const dv_ops dv__cuda_ops = {
    .name = "cuda",
    .kind = DV_KIND_CUDA,
    .enumerate = cuda_enumerate,
    .open = cuda_open,
    .close = cuda_close,
    .mem_alloc = cuda_mem_alloc,
    .mem_free = cuda_mem_free,
    .pinned_alloc = cuda_pinned_alloc,
    .pinned_free = cuda_pinned_free,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_sync = cuda_stream_sync,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .stream_wait_event = cuda_stream_wait_event,
    .event_query = cuda_event_query,
    .event_sync = cuda_event_sync,
    .copy = cuda_copy,
    .copy_batch = cuda_copy_batch,
    .host_fn = cuda_host_fn,
    .fill_u32 = cuda_fill_u32,
    .stream_query = cuda_stream_query,
    .free_async = cuda_free_async,
    .fault_inherit = cuda_fault_inherit,
};
