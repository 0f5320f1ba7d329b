/*
 * device.h - the device runtime: the whole public surface of src/device.
 *
 * One interface over three backends: `cpu` (always built; device memory is
 * host memory and a stream is an ordered task queue on a thread pool), `sim`
 * (always built; a test device that behaves like a discrete GPU, see below)
 * and `cuda` (built when nvcc is found; a thin mapping onto the CUDA
 * runtime). All keep CUDA's semantics: work on one stream runs in order, work
 * on different streams is ordered only through events, and nothing here
 * blocks the caller except the calls named *_sync (and dv_stream_destroy of a
 * stream with work left), each of which counts one host-device
 * synchronisation (PA_CTR_HOST_SYNCS).
 *
 * The `sim` device makes protocol violations visible on a machine without a
 * GPU: its device memory is mapped PROT_NONE except while its executor runs a
 * copy, a kernel or a free (a host dereference faults); its streams run on
 * executor threads after a delay (dv_options.sim_delay_us), so nothing
 * enqueued has happened when the call returns; a kernel's pinned outputs hold
 * DV_POISON_BYTE bytes until the stream reaches the kernel; freed device
 * memory is filled with DV_POISON_BYTE when the stream reaches the free.
 *
 * Device memory comes from a per-device pool (pa_mempool) with a limit;
 * pinned host memory (I/O buffers, the small values kernels hand back) from a
 * second pool. Every copy is counted (PA_CTR_BYTES_H2D/D2H/D2D, COPY_OPS).
 */
#ifndef PISTA_DEVICE_H
#define PISTA_DEVICE_H

#include "core/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dv_device dv_device;
typedef struct dv_stream dv_stream;
typedef struct dv_event dv_event;

typedef enum dv_kind { DV_KIND_CPU, DV_KIND_CUDA, DV_KIND_SIM } dv_kind;

/* What `sim` writes into pinned outputs before their kernel ran and into
 * freed device memory: int64 0xA5A5A5A5A5A5A5A5 is a large negative count. */
#define DV_POISON_BYTE 0xA5

typedef enum dv_copy_kind {
    DV_COPY_H2D,   /* host (pinned or pageable) to device */
    DV_COPY_D2H,
    DV_COPY_D2D,
    DV_COPY_H2H,
} dv_copy_kind;

typedef struct dv_options {
    const char *spec;        /* "auto" (default), "cpu", "sim", "cuda", "cuda:N" */
    uint64_t memory_limit;   /* device pool limit; 0 = PISTA_MEMORY_LIMIT or the default */
    uint64_t pinned_limit;   /* pinned pool limit; 0 = default (1/4 of the device limit) */
    int cpu_threads;         /* cpu and sim worker threads; 0 = online CPUs */
    int sim_delay_us;        /* sim: how long a stream waits before running work enqueued
                                on it while it was idle; 0 = PISTA_SIM_DELAY_US or 50,
                                negative = no delay */
    const char *page_decode; /* where a scan decodes Parquet pages: "auto", "host" or
                                "device"; NULL = PISTA_PAGE_DECODE or "auto" (see
                                dv_decodes_pages) */
} dv_options;

/* What one device is, for listings. */
typedef struct dv_info {
    char name[16];           /* "cpu", "cuda:0" */
    char model[96];          /* "NVIDIA H200", "x86_64, 2 threads" */
    uint64_t memory;         /* bytes of device memory (physical RAM for cpu) */
} dv_info;

/* Devices this build and machine can offer. Fills at most cap entries and
 * sets *n to the number found. Never fails for lack of a GPU: the reason the
 * CUDA backend offers none is written to note (may be NULL). */
int dv_enumerate(dv_info *out, int cap, int *n, char *note, size_t note_cap);

/* Open a device. "auto" takes cuda:0 when the CUDA backend is built and a
 * GPU works, else cpu, and says why in dv_selection(). An explicit "cuda"
 * that cannot start is an error (PA_EDEVICE), never a silent fallback.
 * The caller closes the device with dv_close. */
int dv_open(const dv_options *opt, dv_device **out, pa_err *err);
/* Waits for all streams' work, then frees the pools. Streams and events
 * must have been destroyed. */
void dv_close(dv_device *d);

dv_kind dv_kind_of(const dv_device *d);
/* The device's number among those of its kind (N of cuda:N; 0 for cpu and
 * sim). */
int dv_ordinal(const dv_device *d);
const char *dv_name(const dv_device *d);       /* "cpu", "cuda:0" */
const char *dv_describe(const dv_device *d);   /* "cuda:0 (NVIDIA H200, 139.8 GiB)" */
/* How the device was chosen: "requested cpu", "auto: no usable CUDA device (...)". */
const char *dv_selection(const dv_device *d);
/* True when device memory is ordinary host memory (the cpu backend). */
bool dv_host_visible(const dv_device *d);
/* Whether scans hand Parquet pages to the device's kernels (kn_decode_pages)
 * rather than decode them on the host and upload the columns: never on a
 * host-visible device; "auto" decodes on the device on sim, the test device
 * of that path, and on the host on cuda, where the device path measured
 * slower (an H200, 2026-11-27: TPC-H SF 10 lineitem scan 3.3 s against
 * 0.67 s; README, "Parquet pages on the device"). */
bool dv_decodes_pages(const dv_device *d);
/* The cpu and sim backends' thread pool (NULL for cuda): host work may run
 * on it. */
pa_threadpool *dv_cpu_threads(dv_device *d);

/* ----------------------------------------------------------------- memory */

/* From the device pool. PA_ENOMEM with a message at the limit. */
int dv_alloc(dv_device *d, size_t size, void **ptr, pa_err *err);
/* Return a block now: the caller knows no queued work uses it (it synced, or
 * never enqueued any). On sim the block is poisoned first, so a kernel still
 * queued that reads it sees DV_POISON_BYTE bytes. */
void dv_free(dv_device *d, void *ptr);
/* Stream-ordered free (as RMM's pool): the block returns to the pool when s
 * reaches this point, so work enqueued on s before may still use it. Work on
 * other streams that uses it must be ordered before it through events. On
 * failure to enqueue (no host memory) the stream is synchronised and the
 * block freed at once, so the block is never lost; the status says so. */
int dv_free_async(dv_stream *s, void *ptr, pa_err *err);
/* From the pinned host pool. */
int dv_host_alloc(dv_device *d, size_t size, void **ptr, pa_err *err);
void dv_host_free(dv_device *d, void *ptr);
/* Return pinned memory once s reaches this point (a staging buffer a queued
 * copy still reads); as dv_free_async, a failure to enqueue syncs first. */
int dv_host_free_async(dv_stream *s, void *ptr, pa_err *err);
void dv_memory_stats(dv_device *d, pa_mempool_stats *device, pa_mempool_stats *pinned);
/* The backend's own allocator, bypassing the pool (cudaMalloc / mmap): for
 * benchmarks that compare the pool against it. Not limited, not counted. */
int dv_raw_alloc(dv_device *d, size_t size, void **ptr, pa_err *err);
void dv_raw_free(dv_device *d, void *ptr, size_t size);
void dv_set_memory_limit(dv_device *d, uint64_t limit);
/* Restart both pools' peak tracking from their current use (per query). */
void dv_memory_reset_peak(dv_device *d);

/* ----------------------------------------------------------------- chunks
 *
 * A chunk is the unit of work of every operator: `length` rows of
 * n_columns columns (pa_column views) whose buffers live in this device's
 * memory and belong to the chunk. Buffers are taken with dv_chunk_alloc and
 * all freed by dv_chunk_destroy, so whoever holds the chunk frees it with one
 * call, on any thread.
 */
typedef struct dv_chunk {
    dv_device *dev;
    int64_t length;
    int n_columns;
    pa_column *columns;   /* n_columns views, zero-initialised by _create */
    void **buffers_;      /* owned device allocations (internal) */
    int n_buffers_, cap_buffers_;
    void **pinned_;       /* owned pinned host allocations (internal) */
    int n_pinned_, cap_pinned_;
    struct dv_chunk **deps_;   /* chunks whose buffers our columns view (internal) */
    int n_deps_, cap_deps_;
    int refs_;                 /* reference count (internal) */
    dv_event *ready_;          /* recorded by dv_chunk_set_ready (internal) */
    dv_event **uses_;          /* streams that read it and let it go (internal) */
    int n_uses_, cap_uses_;
    void *mu_;                 /* guards uses_ (internal) */
    void (*on_free_)(void *);  /* dv_chunk_on_free (internal) */
    void *on_free_arg_;
} dv_chunk;

/* A chunk with n_columns empty columns and one reference; free it with
 * dv_chunk_destroy. */
int dv_chunk_create(dv_device *d, int n_columns, dv_chunk **out, pa_err *err);
/* Device memory owned by the chunk (freed with it). */
int dv_chunk_alloc(dv_chunk *c, size_t size, void **ptr, pa_err *err);
/* Pinned host memory owned by the chunk (freed with it): for chunks the host
 * reads, e.g. a query's result downloaded from a device. */
int dv_chunk_alloc_host(dv_chunk *c, size_t size, void **ptr, pa_err *err);
/* Hand device memory from dv_alloc to the chunk: freed with it. */
int dv_chunk_adopt(dv_chunk *c, void *ptr, pa_err *err);
/* Let c's columns view other's buffers without copying (a projection that
 * passes a column through, a filter that only adds a selection): c keeps a
 * reference to other until c is destroyed. */
int dv_chunk_depend(dv_chunk *c, dv_chunk *other, pa_err *err);
/* One more reference (thread-safe); each is dropped with dv_chunk_destroy. */
dv_chunk *dv_chunk_retain(dv_chunk *c);
/* Drops a reference; the last one frees every buffer, the references to
 * other chunks, and the chunk. NULL is ignored. */
void dv_chunk_destroy(dv_chunk *c);
/* Bytes of device memory the chunk's buffers hold. */
size_t dv_chunk_bytes(const dv_chunk *c);
/* Call fn(arg) once the last reference is gone and the buffers are back in
 * the pool: on the thread that let the chunk go, or, when it was released on
 * a stream (dv_chunk_release), as a host function on that stream after its
 * stream-ordered frees. For a producer that bounds how much of its output is
 * alive (a scan's memory regulation). fn must not call *_sync functions nor
 * take locks that a thread letting a chunk go may hold. One per chunk; the
 * last call wins. */
void dv_chunk_on_free(dv_chunk *c, void (*fn)(void *arg), void *arg);

/* Stream order for chunks (DESIGN.md "Stream order is the only order").
 * The producer calls dv_chunk_set_ready after enqueuing, on s, the last work
 * that writes the chunk; a consumer calls dv_chunk_wait_ready before
 * enqueuing, on its own stream, work that reads it (a chunk never set ready
 * is ready). Neither blocks. A consumer that enqueued such work lets its
 * reference go with dv_chunk_release on that stream: the buffers return to
 * the pool only once every stream that released it reached that point
 * (stream-ordered frees), so a queued kernel never reads freed memory. On the
 * cpu device, whose kernels run on the calling thread, these are plain
 * reference drops and no-ops. Failure to enqueue (no host memory) falls back
 * to a counted host sync, never to an early free. */
int dv_chunk_set_ready(dv_chunk *c, dv_stream *s, pa_err *err);
int dv_chunk_wait_ready(dv_chunk *c, dv_stream *s, pa_err *err);
void dv_chunk_release(dv_chunk *c, dv_stream *s);

/* ---------------------------------------------------------------- streams */

int dv_stream_create(dv_device *d, dv_stream **out, pa_err *err);
/* The backend's own handle of s for a library that takes one (NCCL): its
 * cudaStream_t on a cuda device, NULL on the others. */
void *dv_stream_handle(const dv_stream *s);
/* Waits for the stream's work to finish, then frees it. */
void dv_stream_destroy(dv_stream *s);
/* Block until all work enqueued so far finished. Counts one host sync.
 * Returns the stream's error, if a kernel on it failed (see dv_launch_kernel). */
int dv_stream_sync(dv_stream *s, pa_err *err);
/* *idle = whether every operation enqueued on s so far has run. Never blocks. */
int dv_stream_query(dv_stream *s, bool *idle, pa_err *err);
dv_device *dv_stream_device(const dv_stream *s);

/* ----------------------------------------------------------------- events */

int dv_event_create(dv_device *d, dv_event **out, pa_err *err);
void dv_event_destroy(dv_event *e);
/* Capture the work enqueued on s so far; the event completes after it. */
int dv_event_record(dv_event *e, dv_stream *s, pa_err *err);
/* Later work on s waits for the event's most recent record (as of this
 * call). An event never recorded is already complete. Does not block. A
 * failure of the event's stream becomes s's too, once s gets there: a
 * failed host-compiled kernel's error (later copies and kernels on s are
 * skipped), and a data fault in its fault block (copied into s's by a tiny
 * kernel on cuda): what s goes on to read may not be whole, and s's sync
 * must say so. */
int dv_stream_wait_event(dv_stream *s, dv_event *e, pa_err *err);
/* *done = whether the most recent record completed. Never blocks. When a
 * kernel enqueued before the record on its stream failed, returns that error
 * (with *done = true). */
int dv_event_query(dv_event *e, bool *done, pa_err *err);
/* Block until the most recent record completed. Counts one host sync.
 * Returns a kernel error as dv_event_query does. */
int dv_event_sync(dv_event *e, pa_err *err);

/* ----------------------------------------------------------------- copies */

/* Enqueue a copy of n bytes. Host memory should come from dv_host_alloc for
 * full speed on cuda; pageable host memory works but is staged. */
int dv_copy_async(dv_stream *s, void *dst, const void *src, size_t n, dv_copy_kind kind, pa_err *err);
/* Many independent ranges as one operation (cudaMemcpyBatchAsync on CUDA
 * 12.8+). Ranges must not overlap; they may complete in any order relative to
 * each other, but all before later work on s. The arrays may be reused as
 * soon as the call returns. */
int dv_copy_batch_async(dv_stream *s, size_t count, void *const *dsts, const void *const *srcs,
                        const size_t *sizes, dv_copy_kind kind, pa_err *err);

/* Make n bytes of host memory available on the device. On a host-visible
 * device this is zero-copy: *dev = host, nothing is enqueued, and the bytes
 * count as PA_CTR_BYTES_H2D_ELIDED; the caller keeps host alive until it
 * calls dv_release. Otherwise device memory is allocated and a copy enqueued. */
int dv_upload(dv_stream *s, const void *host, size_t n, void **dev, pa_err *err);
/* The reverse: device memory readable from the host once s reaches this point
 * (zero-copy on a host-visible device; else a pinned buffer and a copy). */
int dv_download(dv_stream *s, const void *dev, size_t n, void **host, pa_err *err);
/* Free what dv_upload / dv_download returned (nothing for a zero-copy view). */
void dv_release_upload(dv_device *d, void *dev);
void dv_release_download(dv_device *d, void *host);

/* ----------------------------------------------------------- work on streams */

/* Run fn(arg) on a host thread once the work before it on s finished; later
 * work on s waits for fn to return. fn must not call *_sync functions. */
int dv_launch_host_fn(dv_stream *s, void (*fn)(void *arg), void *arg, pa_err *err);
/* Kernel: set count 32-bit words at dst (device memory) to value. */
int dv_fill_u32_async(dv_stream *s, void *dst, uint32_t value, size_t count, pa_err *err);

/* A host-compiled kernel: runs on the device's executor with device memory
 * accessible; returns PA_OK or an error set on err. */
typedef int (*dv_kernel_fn)(void *args, pa_err *err);
/* Enqueue fn on s (cpu and sim devices; PA_EUNSUPPORTED on cuda, whose
 * kernels are CUDA code). The args_size bytes at args are copied by the call,
 * as CUDA copies kernel parameters, so the caller may reuse them at once;
 * pointers inside must stay valid until the stream reaches the kernel.
 * Counts one kernel launch. A kernel that fails makes the error sticky on
 * its stream: later copies and kernels on s are skipped, and the error is
 * returned by dv_stream_sync, and by dv_event_query / dv_event_sync of an
 * event recorded on s after the kernel. */
int dv_launch_kernel(dv_stream *s, dv_kernel_fn fn, const void *args, size_t args_size, pa_err *err);
/* Mark n bytes of pinned memory as an output a kernel about to be enqueued
 * will write: on sim they are filled with DV_POISON_BYTE now, so a read
 * before the stream reached the kernel gives a wrong value; elsewhere a
 * no-op. */
void dv_poison_output(dv_device *d, void *pinned, size_t n);

/* Data faults of kernels. A kernel that finds its input breaks a contract
 * (a NULL row for an output without validity, strings past 2 GiB) or its
 * data cannot be computed (an overflow, text that is not a number) cannot
 * return a status, and a GPU trap would end the whole CUDA context; so it
 * records the first fault in its stream's fault block (pinned memory,
 * DV_FAULT_BYTES): word 0 the status, word 1 a pointer to the message (a
 * static string, or the block's own text area at DV_FAULT_TEXT_AT, which
 * the kernel may fill), status written last; and it skips its work.
 * dv_stream_sync and dv_stream_query on that stream, and dv_event_query
 * and dv_event_sync of an event recorded on it, report the fault once the
 * work they wait for is done, as "a kernel on <device> stopped: <message>",
 * from then on: the fault is sticky for the stream, as a failed host-
 * compiled kernel's error is, and ends with it. NULL on the cpu device
 * (its kernels return statuses). */
#define DV_FAULT_BYTES 576
#define DV_FAULT_TEXT_AT 64
#define DV_FAULT_TEXT_BYTES (DV_FAULT_BYTES - DV_FAULT_TEXT_AT)
int64_t *dv_stream_fault_words(dv_stream *s);
/* Forget the reported faults of every stream of d (tests; a caller that
 * knows no work of the faulting streams is in flight any more). */
void dv_clear_fault(dv_device *d);

#ifdef __cplusplus
}
#endif
#endif /* PISTA_DEVICE_H */
