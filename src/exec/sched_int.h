/*
 * sched_int.h - internals of the execution framework: the plan arena,
 * pipelines and the scheduler's query state. Only the framework files
 * (plan.c, mem.c, pipeline.c, sched*.c, run*.c, op_result.c) include it;
 * operators see exec_int.h only.
 *
 * Design notes
 *
 * - Plan. An ex_plan owns an arena (zeroed blocks, freed together) for ops,
 *   names and builder parameters, plus the list of every op made in it, so
 *   each op's vt->destroy runs exactly once: at the end of ex_run for a run
 *   plan (an op's run-time state, e.g. device memory, must not outlive the
 *   run), or at ex_plan_destroy for ops never run.
 * - Pipelines (pipeline.c). The tree under the RESULT op is cut into
 *   pipelines source -> chain -> sink: an op with both source and sink roles
 *   (AGGREGATE, SORT, ...) ends the pipeline below it and starts one above;
 *   an op with execute and sink roles (HASH_JOIN) streams its child[0] and is
 *   the sink of a pipeline over child[1]; UNION_ALL streams each input in a
 *   pipeline of its own that continues into the same chain and sink.
 *   Pipelines are numbered so a pipeline's dependencies have smaller numbers:
 *   P depends on Q when an op of P's source or chain is Q's sink. A sink is
 *   finalized once every pipeline feeding it has finished.
 * - Scheduling (sched.c). The thread calling ex_run is the coordinator: it
 *   opens sources, starts pipelines (W worker threads each; 1 for an ordered
 *   source), waits on one condition variable for workers to end, joins them,
 *   finalizes sinks and starts dependants. Workers are dedicated threads,
 *   never tasks of the device's thread pool: the pool runs stream work and
 *   scan decoding, and a worker blocks on a scan's queue. Nothing here calls
 *   dv_*_sync (DESIGN.md rule 2): on the cpu device kernels finish before
 *   they return.
 * - Errors. Each hook gets a pa_err private to its caller (a worker or the
 *   coordinator), so ex_oom may rewrite the message in place; the first
 *   failure is copied into the query's error and sets q->failed; workers
 *   stop at their next check, pipelines not started never start, and every
 *   chunk and local state is freed by its owner.
 */
#ifndef PISTA_SCHED_INT_H
#define PISTA_SCHED_INT_H

#include "exec/exec_int.h"

struct ex_plan {
    struct ex__block *blocks;   /* arena */
    ex_op **ops;                /* every op made in the plan, creation order */
    uint8_t *destroyed;         /* per op: vt->destroy done */
    int n_ops, cap_ops;
    bool ran;                   /* a plan runs at most once */
    ex_query *q;                /* the query running it (ex_alloc's device) */
};

/* Call vt->destroy of every op not destroyed yet. */
void ex__plan_destroy_ops(ex_plan *p);

/* ------------------------------------------------------------ pipelines */

typedef enum ex_pstate { EX_P_WAITING, EX_P_RUNNING, EX_P_ENDED, EX_P_DONE } ex_pstate;

typedef struct ex_pipeline {
    int id;
    ex_op *source;
    ex_op **chain;              /* streaming ops, bottom-up */
    int n_chain;
    ex_op *sink;                /* NULL only in explain-only builds without RESULT */
    int *deps;                  /* pipelines that must be done first */
    uint8_t *dep_soft;          /* per dep: it feeds a streaming sink (EXCHANGE): in OVERLAPPED
                                   mode, started is enough */
    int n_deps;
    /* Scheduler state (guarded by the scheduler's mutex). */
    ex_pstate state;
    int workers;
    int active;                 /* workers still running */
    int stop;                   /* an op returned EX_FINISHED (atomic) */
    pthread_t *tids;
    struct ex__wk *wks;
    dv_event **wdone;           /* recorded by each worker at its end on its stream */
    int n_wdone;
    dv_event *done;             /* after the workers (and the finalize): dependants wait on it */
} ex_pipeline;

typedef struct ex_pipelines {
    ex_pipeline *p;
    int n;
} ex_pipelines;

/* Cut the tree under top (normally the RESULT op) into pipelines. The
 * result is the caller's (ex__pipelines_free). PA_EINVAL for a tree the
 * builder cannot cut (an op without the roles its position needs). */
int ex__pipelines_build(ex_op *top, ex_pipelines *out, pa_err *err);
/* The first kernel (name without kn_) op needs that device d lacks, or
 * NULL (op_kernels.c). */
const char *ex__op_lacks(const ex_op *op, const dv_device *d);
void ex__pipelines_free(ex_pipelines *ps);
/* Pipeline index whose sink is op, first one from `from`; -1 if none. */
int ex__pipelines_feeding(const ex_pipelines *ps, const ex_op *op, int from);

/* ------------------------------------------------------------ scheduler */

typedef struct ex_sched {
    ex_query q;                 /* first member: (ex_sched *)q */
    ex_pipelines ps;
    bool *opened;               /* per pipeline: its source was opened */
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* a pipeline's last worker ended */
    dv_stream **streams;        /* the query's streams, reused by workers (under mu) */
    bool *stream_busy;
    int n_streams, cap_streams;
    int download_syncs;         /* ex__result_download's, for the stats */
} ex_sched;

/* The exchanges' rounds (op_exchange.c): one thread per query that has
 * exchanges with other ranks, started before the pipelines and joined
 * after them; it makes every round of every exchange of the plan, the same
 * rounds on every rank, until each has ended on every rank or a round
 * failed (a rank's error reaches every rank there). */
typedef struct ex__xdriver ex__xdriver;
int ex__xdriver_start(ex_sched *s, ex__xdriver **out, pa_err *err);
/* EXPLAIN ANALYZE's words for an EXCHANGE after its run ("" otherwise). */
void ex__exchange_detail(const ex_op *op, char *buf, size_t cap);
/* Wait for the rounds to end (the query ended here: a failure here is sent
 * to the other ranks in the next round) and free the driver. */
void ex__xdriver_finish(ex__xdriver *d);

/* Record the first failure of the query (err holds the message). */
void ex__fail(ex_query *q, const pa_err *err, int rc);
/* Name op and its role in a PA_ENOMEM message on err (private err only). */
int ex__oom_role(ex_op *op, const char *role, int rc, pa_err *err);

/* Run every pipeline per q->opt.mode. Returns the query's status. */
int ex__sched_run(ex_sched *s);
/* BLOCKING mode: run one pipeline operator-at-a-time (sched_blocking.c). */
int ex__run_blocking(ex_sched *s, ex_pipeline *p);

/* Worker helpers shared by the streaming and blocking runners. A worker
 * takes a stream of the query's pool that first waits for the pipelines p
 * depends on; at its end it records on the stream when its work is done (for
 * the finalize and for dependants) and gives the stream back. */
int ex__worker_begin(ex_sched *s, ex_pipeline *p, int id, ex_worker *w, pa_err *err);
void ex__worker_end(ex_sched *s, ex_pipeline *p, ex_worker *w);
/* The stream ex_free orders frees on, for the calling thread (NULL: none). */
void ex__set_thread_stream(dv_stream *s);
/* A stream of the pool (created when none is free) and its return. */
int ex__stream_take(ex_sched *s, dv_stream **out, pa_err *err);
void ex__stream_give(ex_sched *s, dv_stream *st);
/* At the query's end: wait once for every stream's work, then free them.
 * Returns a kernel error a stream kept. */
int ex__streams_drain(ex_sched *s, pa_err *err);
/* The work after an ended pipeline's workers: its sink's finalize when it
 * is the last feeder (on a pool stream ordered after every feeder), then
 * p->done recorded. */
int ex__pipeline_seal(ex_sched *s, ex_pipeline *p, bool finalize, pa_err *err);
/* Timed hook wrappers: stats, and PA_ENOMEM named after the op. */
int ex__call_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err);
int ex__call_execute(ex_op *op, ex_worker *w, void *local, dv_chunk *in, dv_chunk **out,
                     ex_state *st, pa_err *err);
int ex__call_flush(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err);
int ex__call_sink(ex_op *op, ex_worker *w, void *local, dv_chunk *in, pa_err *err);
int ex__call_combine(ex_op *op, ex_worker *w, void *local, pa_err *err);
/* local_init of op for role (*local NULL when the op keeps none). */
int ex__local_init(ex_op *op, ex_role role, ex_worker *w, void **local, pa_err *err);
void ex__local_free(ex_op *op, void *local);
/* After EX_BLOCKED: park on w->wait when the op named an event (a counted
 * host sync; the op keeps the event), else back off politely (attempt counts
 * the retries). */
void ex__blocked(ex_worker *w, int attempt);
/* Stream order of chunks between hooks: a chunk from a source is made ready
 * on the worker's stream; an input the worker is done with is released on
 * it (stream-ordered free). */
void ex__chunk_done(ex_worker *w, dv_chunk *c);

/* ------------------------------------------------------------ SCAN */

/* Rows in every file of op when it is a Parquet SCAN (from the footers read
 * when the plan was built), else -1: ex_run's progress total. */
int64_t ex__scan_file_rows(const ex_op *op);
/* A scan's files and row groups read and pruned, for EXPLAIN ANALYZE
 * ("" for other operators or a scan that did not open). */
void ex__scan_detail(const ex_op *op, char *buf, size_t cap);

/* ------------------------------------------------------------ RESULT */

/* The sink on top of root that collects the query's chunks. */
int ex__result_new(ex_plan *p, ex_op *root, ex_op **out, pa_err *err);
/* On a device the host cannot read, replace the collected chunks with host
 * copies (pinned memory the chunks own): offsets and fixed-width buffers
 * first, then string bytes once their sizes are known, on a pool stream
 * ordered after every pipeline; two host syncs. Nothing on the cpu device. */
int ex__result_download(ex_op *result, ex_sched *s, pa_err *err);
/* Hand over the collected chunks (pipeline order, then arrival order):
 * *chunks is pa_malloc'ed and owned by the caller with every chunk. */
int ex__result_take(ex_op *result, dv_chunk ***chunks, int *n_chunks, int64_t *n_rows, pa_err *err);

#endif /* PISTA_SCHED_INT_H */
