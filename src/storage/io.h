/*
 * io.h - the I/O engine: the storage module's read path (DESIGN.md, "Storage
 * path" and rule 5, "reader combining"). To be merged into storage.h.
 *
 * One engine per process, shared by every scan of a query: scans submit reads
 * (file, offset, length, a caller-owned destination, normally pinned memory
 * from dv_host_alloc) from any thread; the engine runs at most `queue_depth`
 * of them at once on one of two backends, io_uring (one ring, one completion
 * thread) or a pool of pread threads, and hands each finished request to its
 * completion target: a callback, a bounded pa_queue (a full queue stalls the
 * engine: back-pressure, DESIGN.md rule 4), or a blocking batch wait.
 *
 * Large requests are cut into pieces of at most `max_io_size` bytes that run
 * in parallel; a request completes when all its pieces did. Short reads are
 * retried; end of file inside a request is PA_EIO. Every completed request
 * adds to PA_CTR_BYTES_READ and PA_CTR_READ_REQUESTS.
 */
#ifndef PISTA_STORAGE_IO_H
#define PISTA_STORAGE_IO_H

#include "core/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct io_engine io_engine;
typedef struct io_file io_file;
typedef struct io_request io_request;

/* Alignment of O_DIRECT reads (offsets, lengths and buffers). 4096 serves
 * both 512-byte and 4 KiB logical-sector devices. */
#define IO_DIRECT_ALIGN 4096u

/* ---------------------------------------------------------------- engine */

typedef struct io_options {
    const char *backend;   /* "auto" (NULL too), "uring" or "pread" */
    int queue_depth;       /* pieces in flight at once; 0 = 64 */
    int threads;           /* pread backend threads; 0 = 8 (ignored by uring) */
    size_t max_io_size;    /* largest single read; a multiple of 4096, 0 = 1 MiB */
    bool direct;           /* files opened with IO_OPEN_DEFAULT use O_DIRECT */
} io_options;

/* Create an engine. "auto" takes io_uring when the kernel allows it (the
 * syscall may fail with ENOSYS or EPERM in containers) and the pread pool
 * otherwise, saying why in io_engine_note(). An explicit "uring" that cannot
 * start is PA_EUNSUPPORTED, never a silent fallback. opt may be NULL
 * (defaults). The caller frees the engine with io_engine_destroy. */
int io_engine_create(const io_options *opt, io_engine **out, pa_err *err);

/* Stop the engine. Requests not yet started complete with PA_ECANCELED
 * through their targets; reads in flight finish and complete normally; then
 * the threads exit and every file still open is closed (io_file handles
 * become invalid). Blocks until all of that happened: a completion pushed
 * onto a full pa_queue nobody pops would wait forever, so close such queues
 * first (a push onto a closed queue fails at once and the request is dropped). */
void io_engine_destroy(io_engine *e);

/* The process-wide engine every scan shares, created on first use from the
 * environment: PISTA_IO_BACKEND (auto|uring|pread), PISTA_IO_DEPTH,
 * PISTA_IO_THREADS, PISTA_IO_DIRECT (1 = O_DIRECT). Thread-safe; the engine
 * lives until io_engine_shared_shutdown. */
int io_engine_shared(io_engine **out, pa_err *err);
/* Destroy the shared engine (if created); a later io_engine_shared makes a
 * new one. Call when no scan uses it (program exit, end of a test). */
void io_engine_shared_shutdown(void);

/* "uring" or "pread". */
const char *io_engine_backend(const io_engine *e);
/* How the backend was chosen, e.g. "auto: io_uring unavailable
 * (io_uring_queue_init: Operation not permitted); using pread". */
const char *io_engine_note(const io_engine *e);
void io_engine_get_options(const io_engine *e, io_options *out);

typedef struct io_stats {
    uint64_t requests;       /* completed requests (any status) */
    uint64_t bytes;          /* bytes delivered by successful requests */
    uint64_t errors;         /* requests completed with an error (not canceled) */
    uint64_t canceled;       /* requests completed with PA_ECANCELED */
    uint64_t reads;          /* read system calls / io_uring reads issued */
    uint64_t short_reads;    /* reads that returned fewer bytes than asked */
    uint64_t bounce_bytes;   /* bytes copied out of O_DIRECT bounce buffers */
    uint64_t busy_ns;        /* wall time with at least one read in flight */
    uint64_t latency_ns;     /* sum over completed requests of submit-to-completion time */
    uint64_t max_in_flight;  /* most pieces in flight at once */
} io_stats;
void io_engine_stats(io_engine *e, io_stats *out);

/* ----------------------------------------------------------------- files */

typedef enum io_open_flags {
    IO_OPEN_DEFAULT = 0,    /* O_DIRECT if the engine's options say so */
    IO_OPEN_DIRECT = 1,     /* try O_DIRECT (falls back to buffered, see below) */
    IO_OPEN_BUFFERED = 2,   /* page-cache I/O */
} io_open_flags;

/* Open a regular file for reading through e. The engine keeps a registry:
 * opening a path already open in the same mode returns the same handle with
 * one more reference. A missing file is PA_ENOTFOUND, other failures PA_EIO,
 * a directory or device PA_EINVAL, each naming the path.
 *
 * O_DIRECT: when the filesystem refuses it (open or a probe read fails with
 * EINVAL), the file is opened buffered instead and io_file_note() says so.
 * Requests on a direct file may have any offset, length and buffer: when all
 * three are multiples of IO_DIRECT_ALIGN the bytes land straight in the
 * caller's buffer; otherwise the engine reads the covering aligned range into
 * an aligned bounce buffer of its own and copies the requested bytes out.
 * Each io_file_open is paired with one io_file_close. */
int io_file_open(io_engine *e, const char *path, int flags, io_file **out, pa_err *err);
void io_file_close(io_file *f);

uint64_t io_file_size(const io_file *f);   /* at open time */
const char *io_file_path(const io_file *f);
bool io_file_direct(const io_file *f);     /* O_DIRECT actually in use */
/* Why O_DIRECT is not in use although asked for; "" otherwise. */
const char *io_file_note(const io_file *f);

/* -------------------------------------------------------------- requests */

typedef void (*io_done_fn)(io_request *req);

/* A read. The caller owns the struct and the destination buffer and keeps
 * both alive and untouched from io_submit until the request is delivered.
 * Fill the input fields (zero the rest, e.g. with io_request_init), submit. */
struct io_request {
    /* inputs */
    io_file *file;
    uint64_t offset;
    size_t length;
    void *buf;               /* length bytes; any alignment */
    io_done_fn done;         /* optional: runs on an engine thread */
    pa_queue *queue;         /* optional: the request is pushed here */
    pa_err *err;             /* optional: receives the error message */
    void *tag;               /* the submitter's identity, for io_cancel_tag */
    void *user;              /* free for the caller */
    /* outputs, valid once delivered */
    int status;              /* PA_OK, PA_EIO, PA_ENOMEM, PA_ECANCELED */

    /* engine-private; do not touch */
    struct {
        io_request *next;
        void *batch;
        uint32_t n_pieces, dispatched, finished;
        uint64_t t_submit;
    } priv_;
};

/* Zero r and set the main inputs. */
void io_request_init(io_request *r, io_file *f, uint64_t offset, size_t length, void *buf);

/* Queue a read. Never blocks and never allocates: requests beyond the queue
 * depth wait inside the engine (in FIFO order across all submitters).
 * Delivery, once, on an engine thread (or in io_cancel_tag / destroy):
 * first `done` (which must not free the request when a queue is also set),
 * then a push onto `queue` (blocking while it is full; after the push the
 * engine never touches the request again). PA_EINVAL for a request without
 * a file or buffer, PA_ECLOSED after io_engine_destroy began; the request is
 * then not delivered. */
int io_submit(io_engine *e, io_request *r);

/* Cancel every request with this tag that has not started: each is delivered
 * with PA_ECANCELED; a request whose pieces partly started stops issuing the
 * rest and is delivered PA_ECANCELED when the started ones end. Requests
 * already fully issued complete normally. Returns how many were canceled. */
size_t io_cancel_tag(io_engine *e, void *tag);

/* Submit n requests and wait for all of them (their `done` callbacks run;
 * `queue` must be NULL). Requests with err == NULL report into err.
 * Returns PA_OK or the status of the first failed request (in array order). */
int io_read_all(io_engine *e, io_request *reqs, size_t n, pa_err *err);

/* Read length bytes at offset into buf and wait. */
int io_read(io_engine *e, io_file *f, uint64_t offset, size_t length, void *buf, pa_err *err);

/* ------------------------------------------------------- range planning
 *
 * Turn many byte ranges of one file (column chunks, pages) into few large
 * reads: ranges are sorted by offset, and a range joins the current read when
 * the hole between them is at most max_gap bytes and the read would not grow
 * beyond max_read bytes (a single range larger than max_read is one read of
 * its own; the engine splits it). Overlapping ranges share bytes. */
typedef struct io_range {
    uint64_t offset, length;
} io_range;

typedef struct io_plan_options {
    uint64_t max_gap;    /* largest hole read through; 0 = only touching ranges */
    uint64_t max_read;   /* 0 = no limit */
} io_plan_options;

typedef struct io_plan {
    io_range *reads;     /* the coalesced reads, sorted by offset */
    size_t n_reads;
    size_t *range_read;  /* per input range: index of the read holding it */
    uint64_t *range_pos; /* per input range: its first byte's position inside that read */
    uint64_t bytes_wanted;  /* sum of range lengths */
    uint64_t bytes_read;    /* sum of read lengths (wanted + holes - overlaps) */
} io_plan;

/* Plan n ranges. On success the caller frees *out with io_plan_free; on
 * error (PA_ENOMEM, PA_EINVAL for a range whose end overflows) *out is empty. */
int io_plan_ranges(const io_range *ranges, size_t n, const io_plan_options *opt,
                   io_plan *out, pa_err *err);
void io_plan_free(io_plan *p);

/* ------------------------------------------------------------- benchmark */

typedef struct io_bench_result {
    double seconds;
    double mb_per_s;         /* 1 MB = 1e6 bytes */
    uint64_t bytes;
} io_bench_result;

/* Read the whole file at path sequentially in blocks of block_size, either
 * with one thread calling pread in a loop (engine == NULL: the `dd` way) or
 * through engine e with up to `depth` blocks outstanding. The file's page
 * cache is dropped first (posix_fadvise) unless keep_cache, so buffered runs
 * measure the storage device. */
int io_bench_sequential(io_engine *e, const char *path, size_t block_size, int depth,
                        bool direct, bool keep_cache, io_bench_result *out, pa_err *err);

#ifdef __cplusplus
}
#endif
#endif /* PISTA_STORAGE_IO_H */
