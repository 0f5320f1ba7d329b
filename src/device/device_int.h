/*
 * device_int.h - internals of the device runtime, shared by device.c (the
 * wrappers) and the backends (backend_cpu.c, backend_cuda.c).
 *
 * Design notes:
 * - A backend is a table of operations (dv_ops). The wrappers in device.c
 *   validate arguments, keep the counters (copies, syncs, kernels) so every
 *   backend counts the same way, and own the two memory pools; the backend
 *   only maps operations onto its machinery.
 * - dv_stream and dv_event are small generic handles holding the backend's
 *   object in `impl`. The caller owns handles: create/destroy pairs.
 * - Pools: the device pool serves dv_alloc, the pinned pool dv_host_alloc.
 *   Their upstream is the backend's raw allocator (mmap on cpu, PROT_NONE
 *   mmap on sim, cudaMalloc / cudaHostAlloc on cuda).
 * - cpu and sim share the stream machinery of backend_cpu.c (ordered queues
 *   drained by thread-pool tasks, events that count records, sticky kernel
 *   errors); sim adds memory the host cannot touch, a delay before idle
 *   streams run, poisoned frees (backend_sim.c). Frees on a stream
 *   (free_async) and host-compiled kernels (launch) are operations like
 *   copies; cuda maps free_async onto a host function and has no launch.
 * - Errors from the backend carry file and line (pa_error_at) and, on cuda,
 *   the CUDA error string.
 */
#ifndef PISTA_DEVICE_INT_H
#define PISTA_DEVICE_INT_H

#include <pthread.h>

#include "device/device.h"

typedef struct dv_ops {
    const char *name;   /* "cpu", "cuda" */
    dv_kind kind;
    /* List the backend's devices; on none, say why in note. */
    int (*enumerate)(dv_info *out, int cap, int *n, char *note, size_t note_cap);
    /* Fill d->impl, d->model, d->memory_total. */
    int (*open)(dv_device *d, int ordinal, const dv_options *opt, pa_err *err);
    void (*close)(dv_device *d);

    /* Raw upstream allocators for the pools (user = the dv_device). */
    int (*mem_alloc)(void *user, size_t size, void **out, pa_err *err);
    void (*mem_free)(void *user, void *p, size_t size);
    int (*pinned_alloc)(void *user, size_t size, void **out, pa_err *err);
    void (*pinned_free)(void *user, void *p, size_t size);

    int (*stream_create)(dv_device *d, void **impl, pa_err *err);
    void (*stream_destroy)(dv_device *d, void *impl);   /* after a sync */
    int (*stream_sync)(dv_stream *s, pa_err *err);

    int (*event_create)(dv_device *d, void **impl, pa_err *err);
    void (*event_destroy)(dv_device *d, void *impl);
    int (*event_record)(dv_event *e, dv_stream *s, pa_err *err);
    int (*stream_wait_event)(dv_stream *s, dv_event *e, pa_err *err);
    int (*event_query)(dv_event *e, bool *done, pa_err *err);
    int (*event_sync)(dv_event *e, pa_err *err);

    int (*copy)(dv_stream *s, void *dst, const void *src, size_t n, dv_copy_kind kind, pa_err *err);
    int (*copy_batch)(dv_stream *s, size_t count, void *const *dsts, const void *const *srcs,
                      const size_t *sizes, dv_copy_kind kind, pa_err *err);
    int (*host_fn)(dv_stream *s, void (*fn)(void *), void *arg, pa_err *err);
    int (*fill_u32)(dv_stream *s, void *dst, uint32_t value, size_t count, pa_err *err);
    int (*stream_query)(dv_stream *s, bool *idle, pa_err *err);
    /* Host-compiled kernels (NULL: the device runs none, e.g. cuda). */
    int (*launch)(dv_stream *s, dv_kernel_fn fn, const void *args, size_t args_size, pa_err *err);
    /* Enqueue dv__free_now(ptr) at the stream's current point. */
    int (*free_async)(dv_stream *s, void *ptr, pa_err *err);
    /* Enqueue dv__fault_inherit(from, to) (as a kernel on cuda). */
    int (*fault_inherit)(dv_stream *s, const int64_t *from, int64_t *to, pa_err *err);
} dv_ops;

/* Where scans decode Parquet pages (dv_options.page_decode). */
enum { DV__PAGES_AUTO, DV__PAGES_HOST, DV__PAGES_DEVICE };

struct dv_device {
    const dv_ops *ops;
    int ordinal;
    char name[16];
    char model[96];
    char desc[192];
    char selection[320];
    uint64_t memory_total;   /* set by the backend's open */
    bool host_visible;       /* device memory is host memory */
    int page_decode;         /* DV__PAGES_* (dv_options.page_decode) */
    pa_mempool *pool;        /* device memory */
    pa_mempool *pinned;      /* pinned host memory */
    pa_threadpool *threads;  /* cpu backend only */
    struct dv__fault_slab *faults;   /* the streams' fault blocks (not on cpu); see device.c */
    pthread_mutex_t fault_lock;      /* guards faults */
    pthread_mutex_t streams_lock;    /* cpu and sim: guards streams */
    void *streams;                   /* cpu and sim: the open streams (backend_cpu.c) */
    void *impl;
};

/* Slabs of DV__FAULT_SLOTS fault blocks in pinned memory, never freed
 * before the device closes, so an event can still look at the block of a
 * stream that is gone: a block's generation changes when its stream ends. */
#define DV__FAULT_SLOTS 64
typedef struct dv__fault_slab {
    struct dv__fault_slab *next;
    int64_t *blocks;                    /* DV__FAULT_SLOTS * DV_FAULT_BYTES */
    uint32_t gen[DV__FAULT_SLOTS];
    bool used[DV__FAULT_SLOTS];
} dv__fault_slab;

struct dv_stream {
    dv_device *dev;
    void *impl;
    int64_t *fault;          /* this stream's fault block; NULL on cpu */
    dv__fault_slab *slab;
    int slot;
};

struct dv_event {
    dv_device *dev;
    void *impl;
    dv__fault_slab *slab;    /* fault block of the stream last recorded on, and its generation */
    int slot;
    uint32_t gen;
};

extern const dv_ops dv__cpu_ops;
extern const dv_ops dv__sim_ops;

/* Return a device block to the pool now (on sim: poisoned first). */
void dv__free_now(dv_device *d, void *ptr);
/* A stream that waited for an event takes the fault of the event's stream:
 * when fault block `to` holds none and `from` holds one, from's status and
 * message are copied to it (the message text too when it lives in from's
 * text area), status last. fill_cuda.cu does the same on the GPU. */
void dv__fault_inherit(const int64_t *from, int64_t *to);

/* backend_sim.c: the sim device's memory is PROT_NONE except between
 * dv__sim_enter and dv__sim_leave (nested and concurrent calls counted). */
void dv__sim_enter(dv_device *d);
void dv__sim_leave(dv_device *d);
/* Microseconds a stream that was idle waits before running new work. */
int dv__sim_delay_us(const dv_device *d);
int dv__sim_enumerate(dv_info *out, int cap, int *n, char *note, size_t note_cap);
int dv__sim_open(dv_device *d, int ordinal, const dv_options *opt, pa_err *err);
void dv__sim_close(dv_device *d);
int dv__sim_mem_alloc(void *user, size_t size, void **out, pa_err *err);
void dv__sim_mem_free(void *user, void *p, size_t size);
/* The cpu backend's pieces the sim backend reuses (backend_cpu.c). */
int dv__cpu_threads_open(dv_device *d, const dv_options *opt, pa_err *err);
/* Waits until every operation queued on any stream of d so far has run: the
 * implicit synchronisation of a device allocation on a GPU, which the sim
 * device's allocations do too. Never call it from a stream's own work. */
void dv__cpu_quiesce(dv_device *d);
void dv__cpu_threads_close(dv_device *d);
#ifdef PISTA_HAVE_CUDA
extern const dv_ops dv__cuda_ops;
#endif

#endif /* PISTA_DEVICE_INT_H */
