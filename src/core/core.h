/*
 * core.h - Pista's core runtime: the whole public surface of src/core.
 *
 * Status codes and the error context, logging through a caller-chosen sink,
 * host allocation with accounting and fault injection, a sub-allocating memory
 * pool (used for device and pinned host memory), a thread pool, a bounded
 * blocking queue, a monotonic clock and named counters. Nothing here prints,
 * exits or aborts: every failure is an int status plus a message on a pa_err.
 */
#ifndef PISTA_CORE_H
#define PISTA_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PA_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PA_PRINTF(f, a)
#endif

/* A small inline function that CUDA kernel sources (.cu) also call on the
 * device: __host__ __device__ under nvcc, nothing otherwise. */
#if defined(__CUDACC__)
#define PA_HD __host__ __device__
#else
#define PA_HD
#endif

/* MurmurHash3's 64-bit finalizer: every input bit moves every output bit.
 * The one mixer of the hash tables and partitioners (host and device). */
static inline PA_HD uint64_t pa_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* ------------------------------------------------------------------ status */

/* X(NAME, message). PA_OK is 0; every error is negative (-1, -2, ...). */
#define PA_STATUS_LIST(X)                                                     \
    X(OK, "success")                                                          \
    X(ENOMEM, "out of memory")                                                \
    X(EINVAL, "invalid argument")                                             \
    X(EIO, "input/output error")                                              \
    X(ECORRUPT, "corrupt or truncated data")                                  \
    X(EUNSUPPORTED, "unsupported feature")                                    \
    X(ETIMEDOUT, "timed out")                                                 \
    X(ECLOSED, "queue or stream closed")                                      \
    X(ECANCELED, "canceled")                                                  \
    X(EDEVICE, "device error")                                                \
    X(ENOTFOUND, "not found")                                                 \
    X(EOVERFLOW, "numeric overflow")                                          \
    X(ESYNTAX, "syntax error")                                                \
    X(ENET, "network or communication error")                             \
    X(EBUSY, "busy, try again")                                               \
    X(EINTERNAL, "internal error")

enum pa_status_index {
#define PA__IDX(name, msg) PA__IDX_##name,
    PA_STATUS_LIST(PA__IDX)
#undef PA__IDX
    PA__STATUS_COUNT
};

typedef enum pa_status {
#define PA__CODE(name, msg) PA_##name = -(int)PA__IDX_##name,
    PA_STATUS_LIST(PA__CODE)
#undef PA__CODE
} pa_status;

/* "PA_ENOMEM" / "out of memory"; "PA_UNKNOWN" / "unknown status" otherwise. */
const char *pa_status_name(int status);
const char *pa_status_message(int status);

/* ------------------------------------------------------------ error context
 *
 * A pa_err keeps the FIRST error reported to it (code, message, file, line);
 * later reports are counted but do not overwrite it. It is thread-safe, so the
 * worker threads of one query can share one. Functions that take a pa_err *
 * accept NULL when the caller does not want the message.
 */
typedef struct pa_err {
    int code;            /* PA_OK until the first error */
    int line;
    const char *file;
    uint32_t n_errors;   /* every report, including ignored ones */
    char msg[512];
    void *mu_;           /* internal lock (lazily created), see pa_err_close */
} pa_err;

void pa_err_init(pa_err *e);
void pa_err_close(pa_err *e);
/* Forget the recorded error so the context can serve the next query. */
void pa_err_clear(pa_err *e);

/* Record an error (if e has none yet) and return code, so callers can write
 * `return pa_error(err, PA_EIO, "reading %s: %s", path, strerror(errno));`.
 * A code of PA_OK is turned into PA_EINTERNAL. */
int pa_error_at(pa_err *e, int code, const char *file, int line,
                const char *fmt, ...) PA_PRINTF(5, 6);
int pa_verror_at(pa_err *e, int code, const char *file, int line,
                 const char *fmt, va_list ap);
#define pa_error(e, code, ...) pa_error_at((e), (code), __FILE__, __LINE__, __VA_ARGS__)

/* Copy src's error into dst (if src holds one and dst does not). Returns src->code. */
int pa_err_propagate(pa_err *dst, const pa_err *src);
static inline bool pa_err_failed(const pa_err *e) { return e && e->code != PA_OK; }

/* Linear cleanup helper: `PA_TRY(rc = f(...));` jumps to the local `fail` label. */
#define PA_TRY(expr)                                                          \
    do {                                                                      \
        if ((expr) != PA_OK) goto fail;                                       \
    } while (0)

/* ------------------------------------------------------------------ logging */

typedef enum pa_log_level { PA_LOG_DEBUG, PA_LOG_INFO, PA_LOG_WARN, PA_LOG_ERROR } pa_log_level;
typedef void (*pa_log_sink)(void *user, pa_log_level level, const char *msg);

/* The library logs nowhere until the embedding program sets a sink.
 * Messages below min_level are dropped before formatting. */
void pa_log_set_sink(pa_log_sink sink, void *user, pa_log_level min_level);
void pa_log(pa_log_level level, const char *fmt, ...) PA_PRINTF(2, 3);
const char *pa_log_level_name(pa_log_level level);

/* ------------------------------------------------------ clock and counters */

/* Monotonic nanoseconds (CLOCK_MONOTONIC). */
uint64_t pa_now_ns(void);
static inline double pa_now_s(void) { return (double)pa_now_ns() * 1e-9; }

#define PA_COUNTER_LIST(X)                                                    \
    X(BYTES_READ, "bytes read from storage")                                  \
    X(READ_REQUESTS, "storage read requests")                                 \
    X(BYTES_SENT, "bytes sent on the network")                                \
    X(BYTES_RECEIVED, "bytes received from the network")                      \
    X(BYTES_H2D, "bytes copied host to device")                               \
    X(BYTES_D2H, "bytes copied device to host")                               \
    X(BYTES_D2D, "bytes copied device to device")                             \
    X(BYTES_H2D_ELIDED, "host to device bytes served without a copy")         \
    X(BYTES_D2H_ELIDED, "device to host bytes served without a copy")         \
    X(COPY_OPS, "copy operations enqueued")                                   \
    X(KERNELS_LAUNCHED, "kernels launched")                                   \
    X(HOST_SYNCS, "host-device synchronisations")                             \
    X(WORKER_PARKS, "workers parked on an event (each also a host sync)")     \
    X(DEVICE_ALLOCS, "device pool allocations")                               \
    X(PINNED_ALLOCS, "pinned pool allocations")                               \
    X(PAGES_DEVICE, "Parquet data pages decoded on the device")               \
    X(PAGES_HOST, "Parquet data pages decoded on the host")                   \
    X(PAGES_HOST_DECOMPRESSED, "of the device's pages, decompressed on the host first")

typedef enum pa_counter_id {
#define PA__CTR(name, desc) PA_CTR_##name,
    PA_COUNTER_LIST(PA__CTR)
#undef PA__CTR
    PA_CTR__COUNT
} pa_counter_id;

/* Process-wide counters (atomic). Reports read them before and after a query. */
void pa_counter_add(pa_counter_id id, int64_t delta);
int64_t pa_counter_get(pa_counter_id id);
/* Lower-case name ("bytes_read") and description; NULL for a bad id. */
const char *pa_counter_name(pa_counter_id id);
const char *pa_counter_desc(pa_counter_id id);

typedef struct pa_counters { int64_t v[PA_CTR__COUNT]; } pa_counters;
void pa_counters_snapshot(pa_counters *out);
/* out = after - before, per counter. */
void pa_counters_diff(const pa_counters *after, const pa_counters *before, pa_counters *out);

/* ---------------------------------------------------------- host allocation
 *
 * Every host allocation of the library goes through these, so tests can make
 * the N-th one fail and reports can show current and peak use. pa_malloc(0)
 * returns a unique non-NULL pointer; pa_free(NULL) does nothing.
 */
void *pa_malloc(size_t n);
void *pa_calloc(size_t count, size_t n);
void *pa_realloc(void *p, size_t n);
void pa_free(void *p);
char *pa_strdup(const char *s);

typedef struct pa_mem_stats {
    int64_t current, peak, allocs, frees, failed;
} pa_mem_stats;
void pa_host_mem_stats(pa_mem_stats *out);

/* Fault injection (tests): after `countdown` more successful allocations
 * through pa_malloc/pa_calloc/pa_realloc AND the memory pools, every
 * allocation fails until pa_fault_alloc_clear(). A countdown < 0 disables. */
void pa_fault_alloc_after(int64_t countdown);
void pa_fault_alloc_clear(void);
/* Turn fault injection off and return the countdown it had (< 0: off), for
 * a test's own bookkeeping in the middle of a faulted run; resume with
 * pa_fault_alloc_after(that value). */
int64_t pa_fault_alloc_suspend(void);
/* True if an allocation should fail now (used by the pools). */
bool pa_fault_alloc_hit(void);

/* Parse "1048576", "512K", "64MiB", "4G", "1.5GB" into bytes (K/M/G/T are
 * powers of 1024 with or without "iB"/"B"). Returns PA_EINVAL with a message. */
int pa_parse_size(const char *text, uint64_t *out, pa_err *err);
/* "1.50 GiB" into buf; returns buf. */
const char *pa_format_size(uint64_t bytes, char *buf, size_t cap);

/* -------------------------------------------------------------- memory pool
 *
 * An RMM-style pool: large regions are taken from an upstream allocator (the
 * device or pinned-host allocator of a backend) and carved into blocks with
 * host-side bookkeeping only, so it serves device memory it cannot touch.
 * Freed blocks coalesce with free neighbours; lookups are size-class bins, so
 * allocate and free are O(1) in the number of blocks for typical use.
 * Thread-safe. Allocation beyond the limit fails with PA_ENOMEM and a message
 * naming the pool, the request and the limit; the pool stays usable.
 */
typedef struct pa_mempool pa_mempool;

typedef struct pa_upstream {
    /* Allocate a region of `size` bytes; return PA_OK and *out, or an error. */
    int (*alloc)(void *user, size_t size, void **out, pa_err *err);
    void (*free)(void *user, void *p, size_t size);
    void *user;
} pa_upstream;

typedef struct pa_mempool_config {
    const char *name;        /* "cuda:0 device", "pinned host", ... (copied) */
    uint64_t limit;          /* most bytes handed out at once; 0 = no limit */
    uint64_t initial_size;   /* first region reserved at create; 0 = on demand */
    uint64_t grow_size;      /* minimum size of later regions; 0 = 256 MiB */
    size_t alignment;        /* of every block; power of two, 0 = 256 */
} pa_mempool_config;

typedef struct pa_mempool_stats {
    uint64_t current;       /* bytes handed out (rounded to alignment) */
    uint64_t peak;
    uint64_t limit;         /* 0 = none */
    uint64_t reserved;      /* bytes taken from upstream */
    uint64_t n_allocs, n_frees, n_failed, n_regions;
    uint64_t host_bytes;    /* host memory of the pool's own bookkeeping (block nodes, the
                             * table of live blocks, the region list); it grows with the
                             * most blocks ever live at once and is kept until destroy */
} pa_mempool_stats;

/* Creates a pool; the caller frees it with pa_mempool_destroy. */
int pa_mempool_create(const pa_mempool_config *cfg, pa_upstream up, pa_mempool **out, pa_err *err);
/* Returns every region to upstream; outstanding blocks become invalid. */
void pa_mempool_destroy(pa_mempool *pool);
/* size 0 is served as one alignment unit. *out is left unchanged on error. */
int pa_mempool_alloc(pa_mempool *pool, size_t size, void **out, pa_err *err);
/* Frees a block from this pool; NULL is ignored. Returns PA_EINVAL for a
 * pointer the pool never handed out (and does nothing else). */
int pa_mempool_free(pa_mempool *pool, void *p);
/* True if p points inside one of the pool's regions. */
bool pa_mempool_owns(pa_mempool *pool, const void *p);
/* Size the block at p was rounded to, or 0 if not a live block. */
size_t pa_mempool_block_size(pa_mempool *pool, const void *p);
void pa_mempool_stats_get(pa_mempool *pool, pa_mempool_stats *out);
/* Restart peak tracking from the current use (a query's own peak). */
void pa_mempool_reset_peak(pa_mempool *pool);
/* Change the limit; lowering it below current use only blocks new allocations. */
void pa_mempool_set_limit(pa_mempool *pool, uint64_t limit);
const char *pa_mempool_name(const pa_mempool *pool);

/* The memory limit from the environment: PISTA_MEMORY_LIMIT (a size as for
 * pa_parse_size, checked as pa_memory_limit_check). Returns PA_OK with
 * *out = 0 when unset. */
int pa_memory_limit_from_env(uint64_t *out, pa_err *err);
/* A memory limit a user gave: PA_EINVAL naming it when it is 0, below
 * PA_MEMORY_LIMIT_MIN or above the machine's physical memory. */
#define PA_MEMORY_LIMIT_MIN (64 * 1024)
int pa_memory_limit_check(uint64_t limit, pa_err *err);

/* ------------------------------------------------------------- thread pool */

typedef struct pa_threadpool pa_threadpool;
typedef void (*pa_task_fn)(void *arg);

/* n_threads <= 0 means the number of online CPUs. Free with _destroy. */
int pa_threadpool_create(int n_threads, pa_threadpool **out, pa_err *err);
/* Runs every task already submitted, then joins the workers. */
void pa_threadpool_destroy(pa_threadpool *tp);
/* Queue fn(arg). Never blocks; fails only with PA_ENOMEM. Tasks may submit
 * tasks, also while _destroy drains the pool. */
int pa_threadpool_submit(pa_threadpool *tp, pa_task_fn fn, void *arg);
/* The same with a queue node the caller owns, so it cannot fail: the node
 * must stay valid and not be submitted again until fn has started (a
 * device stream keeps one for its one pending drain task). */
typedef struct pa_task_node {
    pa_task_fn fn;
    void *arg;
    struct pa_task_node *next;
    int owned;   /* internal: 1 = the caller's, not freed by the pool */
} pa_task_node;
void pa_threadpool_submit_node(pa_threadpool *tp, pa_task_node *node, pa_task_fn fn, void *arg);
/* Block until every task submitted so far (and those they submit) finished. */
void pa_threadpool_wait_idle(pa_threadpool *tp);
int pa_threadpool_size(const pa_threadpool *tp);
/* The pool whose worker thread calls this, or NULL: a task must not wait
 * for work queued on its own pool (no worker might be left to run it). */
const pa_threadpool *pa_threadpool_self(void);
/* Run fn(ctx, i) for i in [0, n) on the calling thread plus up to
 * size(tp) - 1 pool threads (so a pool of N threads gives N workers in all),
 * taking indexes in order from a shared counter; returns when all finished.
 * tp NULL or n <= 1 runs everything on the caller. fn must not block on
 * other work of the same pool. */
void pa_parallel_for(pa_threadpool *tp, size_t n, void (*fn)(void *ctx, size_t i), void *ctx);

/* ----------------------------------------------------------- bounded queue
 *
 * A FIFO of pointers with a fixed capacity for any number of producers and
 * consumers. push blocks while full (back-pressure), pop blocks while empty.
 * Timeouts are in nanoseconds: 0 = try once, PA_WAIT_FOREVER = no limit.
 * After pa_queue_close, push fails with PA_ECLOSED at once and pop drains
 * what is left, then fails with PA_ECLOSED; every blocked thread wakes.
 */
typedef struct pa_queue pa_queue;
#define PA_WAIT_FOREVER UINT64_MAX

int pa_queue_create(size_t capacity, pa_queue **out, pa_err *err);
/* The queue must have no blocked threads left. Items still inside are not freed. */
void pa_queue_destroy(pa_queue *q);
/* PA_OK, PA_ETIMEDOUT (when full for the whole timeout) or PA_ECLOSED. */
int pa_queue_push(pa_queue *q, void *item, uint64_t timeout_ns);
/* PA_OK, PA_ETIMEDOUT (when empty for the whole timeout) or PA_ECLOSED. */
int pa_queue_pop(pa_queue *q, void **item, uint64_t timeout_ns);
void pa_queue_close(pa_queue *q);
size_t pa_queue_length(pa_queue *q);
size_t pa_queue_capacity(const pa_queue *q);
bool pa_queue_closed(pa_queue *q);

/* ------------------------------------------------------------------- types */

/* Engine column types (DESIGN.md, Data). X(NAME, sql name, fixed width or 0). */
#define PA_TYPE_LIST(X)                                                       \
    X(BOOLEAN, "BOOLEAN", 1)                                                  \
    X(INTEGER, "INTEGER", 4)                                                  \
    X(BIGINT, "BIGINT", 8)                                                    \
    X(DOUBLE, "DOUBLE", 8)                                                    \
    X(DECIMAL, "DECIMAL", 8)                                                  \
    X(DATE, "DATE", 4)                                                        \
    X(VARCHAR, "VARCHAR", 0)                                                  \
    X(TIMESTAMP, "TIMESTAMP", 8)                                              \
    X(TIMESTAMPTZ, "TIMESTAMP WITH TIME ZONE", 8)                             \
    X(TIME, "TIME", 8)                                                        \
    X(INTERVAL, "INTERVAL", 16)                                               \
    X(TIMESTAMP_NS, "TIMESTAMP_NS", 8)                                        \
    X(BYTEA, "BYTEA", 0)                                                      \
    X(UUID, "UUID", 0)                                                        \
    X(REAL, "REAL", 8)

typedef enum pa_type_id {
#define PA__TYPE(name, sql, width) PA_TYPE_##name,
    PA_TYPE_LIST(PA__TYPE)
#undef PA__TYPE
    PA_TYPE__COUNT
} pa_type_id;

typedef struct pa_type {
    pa_type_id id;
    uint8_t precision;   /* DECIMAL only: 1..38 */
    uint8_t scale;       /* DECIMAL only */
} pa_type;

const char *pa_type_name(pa_type_id id);

/* TIMESTAMP, TIMESTAMPTZ and TIME: one int64 of microseconds (since
 * 1970-01-01 00:00:00, the same instant in UTC, since midnight);
 * TIMESTAMP_NS one int64 of nanoseconds since 1970-01-01 00:00:00 (Parquet's
 * NANOS and INT96 timestamps, kept exact). Physically they are BIGINTs:
 * hashed, sorted, gathered and compared as int64. The session's time zone is
 * UTC: TIMESTAMPTZ prints with "+00". */
static inline PA_HD bool pa_type_is_time64(pa_type_id id)
{
    return id == PA_TYPE_TIMESTAMP || id == PA_TYPE_TIMESTAMPTZ || id == PA_TYPE_TIME || id == PA_TYPE_TIMESTAMP_NS;
}
/* Variable-length types, laid out as VARCHAR (int32 offsets + bytes):
 * VARCHAR (UTF-8 text), BYTEA (any bytes, NULs included) and UUID (always
 * 16 bytes, big-endian as written; ordered by its bytes as PostgreSQL
 * orders it). Every relational kernel (hash, sort, gather, aggregate,
 * join) treats the three alike; what differs is text, casts and functions. */
static inline PA_HD bool pa_type_is_varlen(pa_type_id id)
{
    return id == PA_TYPE_VARCHAR || id == PA_TYPE_BYTEA || id == PA_TYPE_UUID;
}
#define PA_UUID_BYTES 16

/* REAL (PostgreSQL's real, float4): a 4-byte float's values, held as the
 * double of the same value (8 bytes, so every kernel treats it as DOUBLE:
 * pa_type_is_float) and rounded to float precision wherever a REAL result
 * is made (arithmetic, CAST; a float overflowing is an error). Read from
 * and written to Parquet as FLOAT; printed with the fewest digits that
 * read back as the same float. */
static inline PA_HD bool pa_type_is_float(pa_type_id id) { return id == PA_TYPE_DOUBLE || id == PA_TYPE_REAL; }
#define PA_USEC_PER_SEC INT64_C(1000000)
#define PA_USEC_PER_DAY INT64_C(86400000000)

/* An INTERVAL value (16 bytes, PostgreSQL's fields): months, days and
 * microseconds, each with its own sign. Equality and order are those of
 * the normalised length months * 30 days + days * 24 h + micros
 * (pa_interval_norm), as in PostgreSQL: '1 mon' = '30 days'. In expression
 * registers it occupies a KN__I128 slot, copied with memcpy. */
typedef struct pa_interval {
    int32_t months;
    int32_t days;
    int64_t micros;
} pa_interval;

static inline PA_HD __int128 pa_interval_norm(pa_interval v)
{
    return ((__int128)v.months * 30 + v.days) * (__int128)PA_USEC_PER_DAY + v.micros;
}
/* Bytes per value in a column of this type id; 0 for VARCHAR. DECIMAL is
 * given as 8: use pa_type_bytes for a full type. */
int pa_type_width(pa_type_id id);
/* Bytes per value of a full type: DECIMAL with precision > 18 is 16
 * (__int128), every other type as pa_type_width. */
int pa_type_bytes(pa_type t);
/* Precision above which a DECIMAL is held in 128 bits. */
#define PA_DECIMAL64_MAX_PRECISION 18
/* "DECIMAL(15,2)", "INTEGER" into buf; returns buf. */
const char *pa_type_format(pa_type t, char *buf, size_t cap);

/* ----------------------------------------------------------------- columns
 *
 * A column is a non-owning view of one column of a chunk: `length` values of
 * one type in device memory (host memory on the cpu device). Whoever made the
 * buffers frees them. Layout by type:
 *   BOOLEAN uint8 (0/1), INTEGER and DATE int32 (DATE = days since
 *   1970-01-01), BIGINT int64, DOUBLE double, DECIMAL scaled by 10^scale in
 *   an int64 (precision <= 18) or an __int128 (precision 19..38, wide sums),
 *   VARCHAR int32 offsets[length + 1] into the bytes at `data`, TIMESTAMP,
 *   TIMESTAMPTZ and TIME int64 microseconds, TIMESTAMP_NS int64
 *   nanoseconds, INTERVAL pa_interval.
 * `validity` is NULL when no value is NULL, else bit i (LSB first in byte
 * i / 8) is 1 when row i is valid. A NULL row's value bytes are unspecified.
 */
typedef struct pa_column {
    pa_type type;
    int64_t length;
    void *data;
    int32_t *offsets;     /* VARCHAR only */
    uint8_t *validity;    /* NULL = all valid */
    /* Host-side metadata: what the host knows about a VARCHAR column without
     * reading its (device) memory. Set with pa_column_set_bytes, read with
     * pa_column_bytes; zero = unknown. It names the offsets buffer and the
     * length it was set for, so a copy of the descriptor that then changes
     * either (a row view, a new buffer) no longer claims it. */
    int64_t known_bytes;
    const int32_t *known_offsets;
    int64_t known_length;
} pa_column;

static inline bool pa_column_valid(const pa_column *c, int64_t row)
{
    return !c->validity || ((c->validity[row >> 3] >> (row & 7)) & 1);
}

/* Record that VARCHAR column c's offsets run from 0 to bytes: its strings
 * are data[0, bytes). A producer calls it once it knows (it sized the
 * buffers on the host, or wrote the offsets there). */
static inline void pa_column_set_bytes(pa_column *c, int64_t bytes)
{
    c->known_bytes = bytes;
    c->known_offsets = c->offsets;
    c->known_length = c->length;
}

/* True, with *bytes, when c is a VARCHAR column whose offsets run from 0 to
 * a byte count the host knows (pa_column_set_bytes on this descriptor's
 * offsets and length). */
static inline bool pa_column_bytes(const pa_column *c, int64_t *bytes)
{
    if (!pa_type_is_varlen(c->type.id) || !c->offsets || c->known_offsets != c->offsets ||
        c->known_length != c->length)
        return false;
    *bytes = c->known_bytes;
    return true;
}

/* Output styles: PA_FMT_ANSWER is the TPC-H answers format (DECIMAL and
 * DOUBLE with exactly 2 digits after the point, decimals rounded half away
 * from zero on the exact value, doubles on the exact binary value, -0.00 as
 * 0.00; NULL as an empty field). PA_FMT_FULL keeps a DECIMAL's own scale and
 * prints DOUBLE with 17 significant digits. */
typedef enum pa_fmt { PA_FMT_ANSWER, PA_FMT_FULL } pa_fmt;

/* Format row `row` of a host-visible column into buf (NUL-terminated,
 * truncated to cap). Returns the length it needed, as snprintf does. */
size_t pa_format_value(const pa_column *c, int64_t row, pa_fmt fmt, char *buf, size_t cap);
/* DECIMAL value v with `scale` digits, rounded to `digits` after the point
 * (half away from zero), as text. */
size_t pa_format_decimal(int64_t v, int scale, int digits, char *buf, size_t cap);
size_t pa_format_decimal128(__int128 v, int scale, int digits, char *buf, size_t cap);

/* Dates: days since 1970-01-01 <-> proleptic Gregorian calendar. */
int32_t pa_date_from_ymd(int year, int month, int day);
void pa_date_to_ymd(int32_t days, int *year, int *month, int *day);
/* Parse "YYYY-MM-DD" (checked: month 1..12, day within the month). */
int pa_date_parse(const char *text, int32_t *out, pa_err *err);

#ifdef __cplusplus
}
#endif
#endif /* PISTA_CORE_H */
