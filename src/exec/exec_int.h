/*
 * exec_int.h - internals of the execution engine: the operator contract,
 * pipelines and the worker context. Every operator file (op_*.c) and the
 * scheduler (pipeline.c, scheduler.c) include it.
 *
 * Design notes
 *
 * - An operator (ex_op) is one node of the physical plan. It has one vtable
 *   with up to three roles, and the pipeline builder decides which it plays:
 *     source     produces chunks (SCAN; the output side of AGGREGATE, SORT,
 *                TOPN, DISTINCT; the probe pipeline never sources a join).
 *     streaming  turns one input chunk into zero or more output chunks
 *                (FILTER, PROJECT, LIMIT, RECHUNK, the probe side of
 *                HASH_JOIN, UNION_ALL's pass-through).
 *     sink       consumes every chunk of a pipeline (the build side of
 *                HASH_JOIN, the input side of AGGREGATE/SORT/TOPN/DISTINCT,
 *                and RESULT at the top).
 * - Pipelines are cut at breakers: source -> streaming* -> sink. A pipeline
 *   depends on the pipelines whose sinks its operators read (a probe
 *   pipeline on the build pipeline; an aggregate's output pipeline on its
 *   input pipeline). UNION_ALL makes each input a pipeline of its own that
 *   continues into the same downstream operators and sink.
 * - Workers: a pipeline runs on W worker threads (morsel-style); each worker
 *   has an ex_worker (its own stream) and, per operator, a local state made by
 *   local_init. Sources hand out chunks to whichever worker asks (thread-
 *   safe). Sinks keep per-worker local state, merged by combine (called once
 *   per worker at its end, may lock the op's global state), then finalize
 *   runs once when every worker combined. Only then do dependent pipelines
 *   start reading the sink's results.
 * - Order: a source that must keep order (SORT, TOPN output) declares
 *   `ordered`; its pipeline then runs with one worker so RESULT sees chunks in
 *   order.
 * - Chunks: operators exchange dv_chunk (device memory). An input chunk passed
 *   to execute/sink is borrowed: to keep viewing its buffers in an output
 *   chunk, the operator calls dv_chunk_depend(out, in). Output chunks are owned
 *   by the caller. A chunk with 0 rows may be passed on or dropped.
 * - Kernels (kernels.h) take a kn_ctx {dev, stream}. On the cpu device they
 *   run on the calling worker thread before returning; on others (sim, cuda)
 *   they run later, in the order of the worker's stream, and the host never
 *   reads or writes device memory: constants go up with ex_to_device, sizes
 *   come back through pinned memory read behind an event (ex_pending), with
 *   host-side upper bounds where an exact size is not needed. Chunks carry a
 *   ready event and are released in stream order (the scheduler does both
 *   between hooks); ex_free from a worker is stream-ordered too.
 * - Memory: operator state comes from ex_alloc (device pool, accounted per
 *   operator and per query); running out is PA_ENOMEM with a message naming
 *   the operator (ex_oom), and the query fails cleanly.
 * - Errors: every hook returns PA_OK or an error on its pa_err; the first
 *   error of any worker stops the query (workers check ex_query_failed) and is
 *   what ex_run reports.
 */
#ifndef PISTA_EXEC_INT_H
#define PISTA_EXEC_INT_H

#include "exec/exec.h"
#include "kernels/kernels.h"

#include <pthread.h>

#define EX_OP_KIND_LIST(X)                                                    \
    X(SCAN) X(FILTER) X(PROJECT) X(HASH_JOIN) X(AGGREGATE) X(DISTINCT)        \
    X(SORT) X(TOPN) X(LIMIT) X(UNION_ALL) X(RECHUNK) X(VALUES) X(RESULT)   \
    X(ROWS) X(SERIES) X(WINDOW) X(EXCHANGE)

typedef enum ex_op_kind {
#define EX__K(name) EX_OP_##name,
    EX_OP_KIND_LIST(EX__K)
#undef EX__K
    EX_OP__COUNT
} ex_op_kind;

const char *ex_op_kind_name(ex_op_kind k);

typedef enum ex_state {
    EX_NEED_INPUT,    /* done with this input: pass the next one */
    EX_HAVE_OUTPUT,   /* call again with the same input for more output */
    EX_FINISHED,      /* no more output ever (LIMIT reached): the pipeline may stop */
    EX_BLOCKED,       /* waiting on something (an event, named in w->wait); call again later */
} ex_state;

typedef struct ex_query ex_query;

/* The role an operator plays in a pipeline (an AGGREGATE is the sink of
 * one pipeline and the source of the next; a HASH_JOIN the sink of its build
 * pipeline and streaming in its probe pipeline). */
typedef enum ex_role { EX_ROLE_SOURCE, EX_ROLE_STREAMING, EX_ROLE_SINK } ex_role;

/* What a worker thread carries through one pipeline. */
typedef struct ex_worker {
    int id;                 /* 0 .. workers-1 within the pipeline */
    ex_query *q;
    dv_device *dev;
    dv_stream *stream;
    kn_ctx kn;              /* {dev, stream} for kernel calls */
    int pipeline;           /* id of the pipeline it runs */
    ex_role role;           /* the role of the op being called (set before every hook) */
    dv_event *wait;         /* set by an op answering EX_BLOCKED: what it waits for
                               (the worker parks on it); NULL: retry after a pause */
    bool blocked;           /* set by a source_next, sink or combine hook that must
                               wait (w->wait as above): it returns PA_OK and is
                               called again with the same arguments */
} ex_worker;

typedef struct ex_op_vt {
    ex_op_kind kind;
    /* Per-worker state (may be NULL: no local state). local_init runs once
     * per worker for each op of its pipeline, w->role telling which role
     * (an op with two roles gets one local per role, in different
     * pipelines; *local may stay NULL). local_free runs at the worker's end,
     * after combine, also on failure. */
    int (*local_init)(ex_op *op, ex_worker *w, void **local, pa_err *err);
    void (*local_free)(ex_op *op, void *local);

    /* Source role. source_open runs once before any worker asks (start I/O
     * here); source_next hands the next chunk to any worker (*out NULL when
     * exhausted). Thread-safe. */
    int (*source_open)(ex_op *op, ex_query *q, pa_err *err);
    int (*source_next)(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err);
    bool ordered;           /* output order matters: one worker */

    /* Streaming role. in is borrowed; *out (may be NULL) is the caller's.
     * flush is called at the end of a worker's input until *out is NULL. */
    int (*execute)(ex_op *op, ex_worker *w, void *local, dv_chunk *in, dv_chunk **out, ex_state *st,
                   pa_err *err);
    int (*flush)(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err);

    /* Sink role. finalize runs on the coordinator once every worker of
     * every feeding pipeline combined; its kernels go on q->fin_stream.
     *
     * Waiting (DESIGN.md rule 2): execute answers EX_BLOCKED; source_next,
     * flush, sink and combine set w->blocked and return PA_OK (source_next
     * and flush with *out NULL); either way the hook may name the event it
     * waits for in w->wait (ex_pending does both), the worker parks on it
     * and calls the hook again with the same arguments. */
    int (*sink)(ex_op *op, ex_worker *w, void *local, dv_chunk *in, pa_err *err);
    /* A sink whose source side streams (EXCHANGE): in OVERLAPPED mode the
     * pipeline it sources starts once the pipeline feeding it started, not
     * after it is done (its queue gives the back-pressure). */
    bool streams;
    int (*combine)(ex_op *op, ex_worker *w, void *local, pa_err *err);
    int (*finalize)(ex_op *op, ex_query *q, pa_err *err);

    /* Frees the op's global state (the ex_op itself belongs to the plan).
     * Called once: at the end of ex_run (success or failure, while the
     * device is still open), or by ex_plan_destroy for an op never run. */
    void (*destroy)(ex_op *op);
} ex_op_vt;

struct ex_op {
    const ex_op_vt *vt;
    ex_plan *plan;
    ex_op *child[2];        /* child[0]: input / probe side; child[1]: build side */
    int n_child;
    ex_op **inputs;         /* UNION_ALL: all inputs */
    int n_inputs;
    /* Output schema. */
    int n_cols;
    const char **names;
    pa_type *types;
    char label[96];         /* for EXPLAIN: "HASH_JOIN inner" */
    int64_t est_rows;       /* estimate for planning, -1 unknown */
    double est;             /* the planner's estimate (ex_op_set_estimate) */
    bool has_est;
    void *state;            /* operator-specific global state */
    /* Statistics, updated atomically by workers. */
    int64_t rows_in, rows_out, chunks_out;
    uint64_t ns;
    uint64_t mem_cur, mem_peak;
    int pipeline;           /* set by the pipeline builder */
};

/* Allocate an operator in plan p with vt and an output schema of n_cols
 * columns (names copied into the plan); the builder fills the rest. */
int ex_op_new(ex_plan *p, const ex_op_vt *vt, int n_cols, ex_op **out, pa_err *err);
/* Set output column i (name copied into the plan). */
int ex_op_set_column(ex_op *op, int i, const char *name, pa_type type, pa_err *err);
/* Memory that lives as long as the plan (names, parameters). */
void *ex_plan_alloc(ex_plan *p, size_t size);
char *ex_plan_strdup(ex_plan *p, const char *s);

/* The query being run. */
struct ex_query {
    ex_plan *plan;
    ex_run_options opt;
    dv_device *dev;
    pa_err err;              /* first error of any worker */
    int failed;              /* set with the error; workers stop */
    int64_t chunk_rows;      /* resolved target rows per chunk */
    int threads;             /* resolved workers per pipeline */
    int canceled;            /* opt.cancel was seen set (sticky); failed too */
    dv_stream *fin_stream;   /* during a finalize hook: the stream its kernels go on,
                                ordered after every worker of the pipelines feeding it */
};

/* A finalize hook's work in n independent tasks: task(ctx, i, kn) enqueues
 * (or, on the cpu device, runs) task i's kernels on kn. ex_fin_parallel
 * runs them in parallel: on the cpu device, whose kernels run on the calling
 * thread, as tasks on the device's threads, now; elsewhere the tasks are
 * called in order on this thread, spread over a few streams of the query's
 * pool that first wait for the work on q->fin_stream so far, and
 * q->fin_stream then waits for all of them (no host sync). A task reports
 * its errors through ctx; the call fails only when it could not order the
 * streams (its error then covers everything: no task ran on a stream the
 * finalize stream does not wait for). */
typedef void (*ex_fin_task)(void *ctx, size_t i, const kn_ctx *kn);
int ex_fin_parallel(ex_query *q, size_t n, ex_fin_task task, void *ctx, pa_err *err);

/* Mark q canceled (and failed) after *q->opt.cancel was seen set; returns
 * true. Takes no lock: callable anywhere, also with the scheduler's lock. */
bool ex__query_cancel(ex_query *q);

/* True once the query failed or was canceled: workers stop at their next
 * check. Reading the cancel flag here makes every check a cancel check. */
static inline bool ex_query_failed(const ex_query *q)
{
    if (__atomic_load_n(&q->failed, __ATOMIC_ACQUIRE) != 0)
        return true;
    /* An atomic read: the flag is set by a signal handler or another thread. */
    return q->opt.cancel && __atomic_load_n(q->opt.cancel, __ATOMIC_RELAXED) && ex__query_cancel((ex_query *)q);
}

/* Operator state memory from the device pool, accounted to op (and so to the
 * query). PA_ENOMEM names the operator. */
int ex_alloc(ex_op *op, size_t size, void **ptr, pa_err *err);
/* Called by a worker (or a finalize hook), the block returns to the pool once
 * the stream of that thread reached the call, so kernels it enqueued before
 * may still use it; called anywhere else (destroy, after the query's work
 * was drained), at once; on the cpu device, whose kernels ran before they
 * returned, always at once. */
void ex_free(ex_op *op, void *ptr, size_t size);
/* A new chunk for op's output, its buffers accounted to op while alive.
 * PA_ENOMEM names the operator. */
int ex_chunk_new(ex_op *op, ex_worker *w, int n_columns, dv_chunk **out, pa_err *err);
int ex_chunk_alloc(ex_op *op, dv_chunk *c, size_t size, void **ptr, pa_err *err);
/* Rewrite an error from below (PA_ENOMEM from the pool) to name op. */
int ex_oom(ex_op *op, int rc, pa_err *err);
/* Write n host bytes into device memory in stream order on w's stream: a
 * plain copy on a host-visible device, else through a pinned staging buffer
 * (freed when the stream reached the copy). The host never writes device
 * memory itself. */
int ex_to_device(ex_op *op, ex_worker *w, void *dst, const void *src, size_t n, pa_err *err);
/* Free pinned memory a kernel enqueued on s may still write: once s got
 * there, or at once on the cpu device (its kernels ran before they returned)
 * or without a stream. */
void ex_pinned_free(dv_device *d, dv_stream *s, void *p);
/* offsets[0] = 0 for a VARCHAR output, the same way. */
int ex_zero_offset(ex_op *op, ex_worker *w, int32_t *offsets, pa_err *err);

/* Reading data-dependent sizes that a worker's kernels wrote to pinned
 * memory (DESIGN.md rule 2). ex_pending_ready records an event after the
 * work enqueued so far on its first call, then answers whether the stream
 * reached it; when not, it names the event in w->wait, and the op returns
 * EX_BLOCKED (its worker parks on the event) and looks again when called
 * back. Sizes enqueued together are read behind one event. On the cpu
 * device kernels ran before they returned: always ready, no event. */
typedef struct ex_pending {
    dv_event *ev;
    bool recorded;
} ex_pending;
int ex_pending_ready(ex_worker *w, ex_pending *p, bool *ready, pa_err *err);
void ex_pending_close(ex_pending *p);

/* ------------------------------------------------------------ packed rows
 *
 * Rows as bytes (result_pack.c's layout) for the exchanges. */
typedef struct ex_packed {
    char *p;
    size_t n, cap;
    bool oom;                 /* an append failed: the buffer is incomplete */
} ex_packed;
/* The packed layout's header: column types, then the chunk count. */
void ex__pack_header(ex_packed *b, const pa_type *types, int n_columns, int64_t n_chunks);
void ex__pack_append(ex_packed *b, const void *src, size_t n);
/* Host chunk c's rows routed into parts by the hash of columns keys (the
 * same hash and routing as ex_result_pack_parts, so equal keys meet on
 * every rank): out[p] gets a packed chunk (columns [0, n_keep)) of the rows
 * of part p where it has any, n_chunks[p] counts them, rows[p] (may be
 * NULL) adds their rows; only >= 0 packs that part alone. */
typedef struct ex_route_scratch {   /* kept between calls: no allocation per chunk */
    uint16_t *dest;
    int32_t *sel;
    int64_t *count, *start;
    int64_t cap_rows;
    int cap_parts;
} ex_route_scratch;
int ex__pack_route(const dv_chunk *c, int n_keep, const int *keys, int n_keys, int parts, int only, ex_packed *out,
                   int64_t *n_chunks, int64_t *rows, ex_route_scratch *sc, pa_err *err);
void ex__route_scratch_free(ex_route_scratch *sc);

/* A host twin of device chunk column d in h (pinned memory h owns), copied
 * on st (op_result.c): ex__download_fixed copies all but the bytes of a
 * VARCHAR column whose byte count the host does not know (o->data stays
 * NULL); once the offsets arrived, ex__download_bytes copies those. */
int ex__download_fixed(dv_stream *st, dv_chunk *h, const pa_column *d, pa_column *o, pa_err *err);
int ex__download_bytes(dv_stream *st, dv_chunk *h, const pa_column *d, pa_column *o, pa_err *err);
/* A new chunk of op's (*out) with device copies of host chunk h's first
 * op->n_cols columns, in w's stream order (h must live until the stream got
 * there; op_rows.c). */
int ex__chunk_upload(ex_op *op, ex_worker *w, const dv_chunk *h, dv_chunk **out, pa_err *err);

#endif /* PISTA_EXEC_INT_H */
