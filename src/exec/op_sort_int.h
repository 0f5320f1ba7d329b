/*
 * op_sort_int.h - what SORT (op_sort.c) and TOPN (op_topn.c) share.
 *
 * Design notes
 * - Both hold rows as normalized-key records (kn_sort_*, kernels.h) whose
 *   references (tag, row) point into "sources": input chunks the operator
 *   keeps a reference to (dv_chunk_retain, no copy) or chunks it gathered
 *   itself (TOPN's compactions). A source set owns one reference to each of
 *   its chunks; tags index it.
 * - Per worker (sink role) the operator fills a record buffer and a source
 *   set; combine turns them into a sorted run (SORT) or a compacted top-N
 *   (TOPN) and hands both to the global state under its mutex. finalize
 *   re-tags every run into one global source set; TOPN sorts them into the
 *   output records [out_pos, out_end), SORT keeps them for the merge.
 * - Output (source role, `ordered`: one worker) gathers chunk_rows rows at a
 *   time into new chunks; SORT with several runs merges the next chunk_rows
 *   records of the runs first (kn_sort_merge_next), so no buffer of all rows
 *   is made twice. The last call frees records and sources.
 * - Record buffers and scratch are operator state (ex_alloc, device pool);
 *   the source arrays are small host descriptors (pa_malloc).
 * - Data-dependent sizes (string bytes of a gather, rows kept by a filter)
 *   land in pinned memory and are read through ex_pending (on the cpu
 *   device at once): a hook that must wait sets w->blocked and keeps its
 *   phase in its state (TOPN's worker state, SORT/TOPN's output state in
 *   ex__sort), so the call that follows resumes where it stopped.
 * - Stream order: sinks enqueue on their worker's stream, finalize on
 *   q->fin_stream (after every sink worker), the output on its worker's
 *   stream (after finalize). Kept chunks are let go with dv_chunk_release
 *   on the stream whose kernels read them last; record buffers through
 *   ex_free, which is stream-ordered on every one of those threads.
 */
#ifndef PISTA_OP_SORT_INT_H
#define PISTA_OP_SORT_INT_H

#include "exec/exec_int.h"

#include <pthread.h>

typedef struct ex__srcset {
    dv_chunk **chunks;
    kn_sort_source *cols;   /* chunks[i]->columns */
    int n, cap;
} ex__srcset;

/* Add c (takes a new reference). */
int ex__srcset_add(ex__srcset *s, dv_chunk *c, pa_err *err);
/* Drop the last source (its reference) once stream st reached the work
 * enqueued so far (NULL: now, no work of ours may still read it). */
void ex__srcset_pop(ex__srcset *s, dv_stream *st);
/* Move every source of from to the end of to (from becomes empty). */
int ex__srcset_move(ex__srcset *to, ex__srcset *from, pa_err *err);
/* Drop every reference (as ex__srcset_pop) and free the arrays. */
void ex__srcset_clear(ex__srcset *s, dv_stream *st);

/* A buffer of records from ex_alloc. */
typedef struct ex__recs {
    uint8_t *p;
    int64_t n, cap;   /* records held / room for */
} ex__recs;

/* Make room for `need` records (keeping the first n). */
int ex__recs_reserve(ex_op *op, const kn_ctx *kn, const kn_sort_layout *l, ex__recs *r, int64_t need,
                     pa_err *err);
void ex__recs_free(ex_op *op, const kn_sort_layout *l, ex__recs *r);
/* Sort r's records (scratch from ex_alloc, given back in stream order). */
int ex__recs_sort(ex_op *op, const kn_ctx *kn, const kn_sort_layout *l, ex__recs *r, const ex__srcset *src,
                  pa_err *err);

/* Gathering rows into an output chunk. Strings need their byte counts
 * first: they go to pinned memory (one slot per column) and are read behind
 * one ex_pending. */
typedef struct ex__gather {
    int64_t *bytes;             /* pinned, one per output column */
    ex_pending pend;
    bool counting;              /* counts enqueued: the next call reads them */
    dv_device *dev;
} ex__gather;

/* Pinned room for op's columns; the caller closes it. */
int ex__gather_init(ex_op *op, dv_device *dev, ex__gather *g, pa_err *err);
/* Free it once st reached the work enqueued so far (NULL: now). */
void ex__gather_close(ex__gather *g, dv_stream *st);

/* One worker's contribution. */
typedef struct ex__run {
    ex__recs recs;
    ex__srcset src;
} ex__run;

/* Global state of a SORT or TOPN. */
typedef struct ex__sort {
    kn_sort_layout l;
    int64_t limit, offset;      /* TOPN; SORT: INT64_MAX, 0 */
    pthread_mutex_t mu;
    ex__run *runs;              /* from combine */
    int n_runs, cap_runs;
    /* Output, after finalize: either the records of out, or (SORT with
     * several runs) a streaming merge of the runs through merge_buf. */
    ex__srcset out_src;
    ex__recs out;
    int64_t out_pos, out_end;
    const uint8_t **run_p;      /* merge: the runs' records and counts (host */
    int64_t *run_n;             /*   arrays, copied by every merge call) */
    int64_t *run_pos;           /* merge: the runs' cursors (device memory) */
    ex__recs merge_buf;
    int64_t chunk_rows;
    /* The chunk being made: its m records are at recs (merged already);
     * the gather waits for string sizes. */
    bool making;
    const uint8_t *recs;
    int64_t m;
    ex__gather g;
} ex__sort;

/* Gather the rows of n records into a new chunk with op's output schema,
 * on w's stream. When string sizes must be waited for, sets w->blocked and
 * returns with *out NULL: call again with the same arguments. *out is the
 * caller's. */
int ex__sort_gather(ex_op *op, ex_worker *w, const kn_sort_layout *l, const ex__srcset *src, const uint8_t *recs,
                    int64_t n, ex__gather *g, dv_chunk **out, pa_err *err);
/* Hand a worker's run to the global state (moved; run becomes empty). */
int ex__sort_add_run(ex__sort *s, ex__run *run, pa_err *err);
/* Re-tag all runs into s->out_src and concatenate their records into
 * s->out (the runs are freed), on kn's stream. */
int ex__sort_concat_runs(ex_op *op, const kn_ctx *kn, ex__sort *s, pa_err *err);
/* Shared hooks. */
int ex__sort_source_open(ex_op *op, ex_query *q, pa_err *err);
int ex__sort_source_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err);
void ex__sort_destroy(ex_op *op);
/* Validate keys against input and fill a layout; set op's schema, label
 * ("SORT" / "TOPN" + keys) and state. */
int ex__sort_build(ex_plan *p, const ex_op_vt *vt, ex_op *input, const ex_sort_key *keys, int n_keys,
                   int64_t limit, int64_t offset, ex_op **out, pa_err *err);

#endif /* PISTA_OP_SORT_INT_H */
