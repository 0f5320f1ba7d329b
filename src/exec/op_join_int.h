/*
 * op_join_int.h - HASH_JOIN internals, shared by op_join.c (builder, build
 * side) and op_join_probe.c (probe side).
 *
 * Design notes
 * - Roles: the build side (child[1]) is the sink of its own pipeline; the
 *   probe side (child[0]) streams through execute. The probe pipeline
 *   depends on the build pipeline, so finalize has built the table before
 *   any execute call; the table and the build columns are read-only after
 *   that and shared by every probe worker without locks.
 * - Build: sink copies the build columns it needs (keys and outputs, each
 *   once: bcol_src) of every input chunk into the worker's current segment
 *   (one ex_alloc block of at least 4096 rows, so small chunks out of a
 *   selective filter are gathered - the re-chunking before a hash build -
 *   and the build side counts against the memory limit under HASH_JOIN's
 *   name; the input chunk, and the scan chunk it may view, is freed at once,
 *   DESIGN.md rule 1). Finalize concatenates the segments into one columnar
 *   buffer (kept as it is when there is only one), hashes the keys, lays
 *   out and builds the kn_join table (a second allocation).
 * - Probe: per input chunk, hash the probe keys once, then kn_join_probe
 *   with a capacity of max(rows, chunk_rows) output rows (rows when the
 *   build keys are unique or the join is SEMI/ANTI/MARK, so one call is
 *   enough); a key that fans out beyond the capacity returns EX_HAVE_OUTPUT
 *   and the next call resumes from the cursor. Output probe columns pass
 *   through without a copy (dv_chunk_depend) when the output rows are
 *   exactly the input rows in order (SEMI/ANTI with every row, MARK always,
 *   INNER/LEFT on unique keys with every row matched); otherwise they are
 *   gathered (kn_take), as are the build columns (-1 = NULL for LEFT).
 * - Sizes: the probe's output count lands in the cursor, in pinned memory.
 *   On the cpu device kernels finish before they return, so the operator
 *   reads it at once; a device with asynchronous kernels records an event
 *   and answers EX_BLOCKED here (the CUDA issue).
 * - Key types: as kn_join_key_types_ok (same type, DECIMAL of equal scale,
 *   INTEGER with BIGINT compared as BIGINT); checked by the builder.
 */
#ifndef PISTA_OP_JOIN_INT_H
#define PISTA_OP_JOIN_INT_H

#include "exec/exec_int.h"

#define EX__JOIN_MAX_KEYS 32
#define EX__JOIN_MAX_COLS 256   /* keys + build outputs */

/* Build rows in columnar form: cols[c] (length = rows) is build column
 * bcol_src[c]; every buffer lives in the one ex_alloc block mem, with room
 * for cap_rows rows and str_cap[c] string bytes (str_used[c] used). A
 * column has a validity bitmap if a chunk appended to it had one. */
typedef struct ex__join_seg {
    void *mem;
    size_t size;
    int64_t rows, cap_rows;
    pa_column *cols;                   /* n_bcols; host bookkeeping, one block with: */
    int64_t *str_cap, *str_used;       /* n_bcols each */
} ex__join_seg;

typedef struct ex__join {
    ex_join_type type;
    int n_keys, n_out;
    int probe_keys[EX__JOIN_MAX_KEYS];
    int key_bcol[EX__JOIN_MAX_KEYS];   /* slot in bcols of build key k */
    int out_bcol[EX__JOIN_MAX_COLS];   /* slot in bcols of build output c */
    int bcol_src[EX__JOIN_MAX_COLS];   /* build input column of each slot */
    int n_bcols;

    pthread_mutex_t mu;                /* guards segs during combine */
    ex__join_seg **segs;               /* the workers' segments, until finalize */
    int n_segs, cap_segs;

    /* Set by finalize. */
    bool built;
    int64_t build_rows;
    ex__join_seg *build;               /* every build row */
    pa_column bkeys[EX__JOIN_MAX_KEYS];   /* the table's key columns (views of build) */
    void *tmem;                        /* ex_alloc'd table */
    size_t tmem_size;
    kn_join_build_info *info;          /* pinned */
    dv_device *info_dev;
    kn_join_table table;
} ex__join;

/* Probe side (op_join_probe.c). */
int ex__join_probe_local_init(ex_op *op, ex_worker *w, void **local, pa_err *err);
void ex__join_probe_local_free(ex_op *op, void *local);
int ex__join_execute(ex_op *op, ex_worker *w, void *local, dv_chunk *in, dv_chunk **out, ex_state *st,
                     pa_err *err);

#endif /* PISTA_OP_JOIN_INT_H */
