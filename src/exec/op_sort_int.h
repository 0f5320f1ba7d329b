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
 *   land in pinned memory. On the cpu device kernels finish before they
 *   return, so they are read at once; on other devices ex__sort_wait syncs
 *   the worker's stream (sort output is a pipeline breaker's source).
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
/* Drop the last source (its reference). */
void ex__srcset_pop(ex__srcset *s);
/* Move every source of from to the end of to (from becomes empty). */
int ex__srcset_move(ex__srcset *to, ex__srcset *from, pa_err *err);
/* Drop every reference and free the arrays. */
void ex__srcset_clear(ex__srcset *s);

/* A buffer of records from ex_alloc. */
typedef struct ex__recs {
    uint8_t *p;
    int64_t n, cap;   /* records held / room for */
} ex__recs;

/* Make room for `need` records (keeping the first n). */
int ex__recs_reserve(ex_op *op, kn_ctx *kn, const kn_sort_layout *l, ex__recs *r, int64_t need, pa_err *err);
void ex__recs_free(ex_op *op, const kn_sort_layout *l, ex__recs *r);
/* Sort r's records (scratch from ex_alloc, freed before returning). */
int ex__recs_sort(ex_op *op, kn_ctx *kn, const kn_sort_layout *l, ex__recs *r, const ex__srcset *src,
                  pa_err *err);

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
    const uint8_t **run_p;      /* merge: the runs' records, counts, cursors */
    int64_t *run_n, *run_pos;
    ex__recs merge_buf;
    int64_t chunk_rows;
    int64_t *pinned;            /* dv_host_alloc'ed size slot */
    dv_device *dev;
} ex__sort;

/* Wait until kernels enqueued on kn's stream finished (see the notes). */
int ex__sort_wait(kn_ctx *kn, pa_err *err);
/* Gather the rows of n records into a new chunk with op's output schema.
 * *out is the caller's. */
int ex__sort_gather(ex_op *op, ex_worker *w, kn_ctx *kn, const kn_sort_layout *l, const ex__srcset *src,
                    const uint8_t *recs, int64_t n, int64_t *pinned, dv_chunk **out, pa_err *err);
/* Hand a worker's run to the global state (moved; run becomes empty). */
int ex__sort_add_run(ex__sort *s, ex__run *run, pa_err *err);
/* Re-tag all runs into s->out_src and concatenate their records into
 * s->out (the runs are freed). */
int ex__sort_concat_runs(ex_op *op, kn_ctx *kn, ex__sort *s, pa_err *err);
/* Shared hooks. */
int ex__sort_source_open(ex_op *op, ex_query *q, pa_err *err);
int ex__sort_source_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err);
void ex__sort_destroy(ex_op *op);
/* Validate keys against input and fill a layout; set op's schema, label
 * ("SORT" / "TOPN" + keys) and state. */
int ex__sort_build(ex_plan *p, const ex_op_vt *vt, ex_op *input, const ex_sort_key *keys, int n_keys,
                   int64_t limit, int64_t offset, ex_op **out, pa_err *err);
/* A stream for coordinator-side kernels (finalize). */
int ex__sort_ctx_open(ex_query *q, kn_ctx *kn, pa_err *err);
void ex__sort_ctx_close(kn_ctx *kn);

#endif /* PISTA_OP_SORT_INT_H */
