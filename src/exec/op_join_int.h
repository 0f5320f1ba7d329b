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
 *   out and builds the kn_join table (a second allocation), every kernel on
 *   q->fin_stream, which the probe workers' streams wait for.
 * - Probe: per input chunk, hash the probe keys once, then kn_join_probe
 *   with a capacity of max(rows, chunk_rows) output rows (rows for SEMI,
 *   ANTI and MARK, and while the build keys may be unique, so one call is
 *   enough); a key that fans out beyond the capacity returns EX_HAVE_OUTPUT
 *   and the next call resumes from the cursor. Output probe columns pass
 *   through without a copy (dv_chunk_depend) when the output rows are
 *   exactly the input rows in order (SEMI/ANTI with every row, MARK always,
 *   INNER/LEFT on unique keys with every row matched); otherwise they are
 *   gathered (kn_take), as are the build columns (-1 = NULL for LEFT).
 * - Sizes (DESIGN.md rule 2): the host never reads device memory. Data-
 *   dependent sizes land in pinned memory (the probe's ex__join_pin: the
 *   cursor, a count, string bytes per column; the build worker's string
 *   bytes per chunk) and are read behind an event (ex_pending). A probe
 *   worker keeps a phase (ex__probe_phase) and answers EX_BLOCKED while
 *   one is pending, resuming there when called again; on the cpu device
 *   the kernels finished before returning and nothing waits. Whether the
 *   output rows are the input's rows in order comes from what the host
 *   knows (one call covering the chunk, at most one output row per probe
 *   row, as many rows out as in), not from reading the indexes; the build
 *   info (unique keys) is read by the probe after its first wait, which
 *   follows the build's finalize on the worker's stream. A cross product's
 *   batch sizes are known on the host (pairs in order, capacity at a time)
 *   and not waited for; the cursor is zeroed for a chunk in stream order,
 *   as a kernel of the last chunk may still be queued. A build worker
 *   counts a chunk's string bytes with a kernel and appends the chunk at
 *   its next sink call (or combine), so the count overlaps the next input.
 * - Key types: as kn_join_key_types_ok (same type, DECIMAL of equal scale,
 *   INTEGER with BIGINT compared as BIGINT); checked by the builder.
 * - Pairs (op_join_pairs.c): a join with a residual predicate or without
 *   keys ("general") works per probe chunk on candidate pairs, in batches
 *   of `capacity` pairs: the key-equal pairs of an INNER probe, or every
 *   (probe, build) pair (kn_join_cross). The columns the residual reads are
 *   gathered into a temporary pair chunk (probe columns at the probe rows,
 *   build columns at the build rows), the residual is evaluated into a
 *   BOOLEAN column, and kn_join_pairs_filter keeps the TRUE pairs (INNER and
 *   LEFT emit them per batch) and or-s TRUE/NULL into a per-probe-row state.
 *   After the chunk's last batch one more call emits what the states give:
 *   LEFT's padded rows, SEMI's and ANTI's rows, MARK's column. The build
 *   side also keeps the build columns the residual reads (bcol slots); a
 *   join without keys builds no table (finalize only gathers the rows).
 */
#ifndef PISTA_OP_JOIN_INT_H
#define PISTA_OP_JOIN_INT_H

#include "exec/exec_int.h"
#include "exec/expr_int.h"

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

    bool single;                       /* ex_hash_join_single: equal build keys are an error */

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

    /* Residual and key-less joins (op_join_pairs.c). */
    bool general;                      /* residual != NULL or n_keys == 0 */
    kn_program *resid;                 /* over the pair schema, or NULL */
    int n_probe_cols;                  /* P: pair columns 0..P-1 are the probe's */
    int n_pair_cols;                   /* P + B */
    int *pair_bcol;                    /* per pair column >= P it reads: its bcol slot, else -1 */
    bool *pair_used;                   /* per pair column: read by the residual */
} ex__join;

/* Where a probe worker is in its current input chunk: execute is called
 * again with the same chunk after EX_HAVE_OUTPUT or EX_BLOCKED and goes on
 * from here. Each phase but IDLE, CALL and FINISH first waits for the sizes
 * the previous one enqueued. */
typedef enum ex__probe_phase {
    EX__PH_IDLE,       /* no chunk: the next call starts one */
    EX__PH_CALL,       /* enqueue the next probe (or cross) call */
    EX__PH_COUNT,      /* read the cursor it wrote */
    EX__PH_RESIDUAL,   /* pairs: gather the residual's columns, filter the pairs */
    EX__PH_FILTERED,   /* pairs: read how many passed */
    EX__PH_FINISH,     /* pairs: enqueue the per-row result */
    EX__PH_FINISHED,   /* pairs: read its count */
    EX__PH_EMIT,       /* gather the output rows into a chunk, then go to `after` */
} ex__probe_phase;

/* A probe worker's pinned memory: what its kernels write and the host reads
 * behind an event. */
typedef struct ex__join_pin {
    kn_join_cursor cur;
    int64_t count, n_null;      /* kn_join_pairs_filter's, kn_join_finish's */
    int64_t bytes[];            /* per output (or pair) column: string bytes to gather */
} ex__join_pin;

/* Per-worker probe state (the build side's local starts with its role too). */
typedef struct ex__probe_local {
    ex_role role;               /* EX_ROLE_STREAMING (first: see join_local_free) */
    dv_device *dev;
    dv_stream *stream;          /* the worker's: stream-ordered releases at the end */
    uint64_t *hashes;
    size_t hashes_size;
    void *scratch;
    size_t scratch_size;
    int32_t *pidx, *bidx;       /* each idx_size bytes */
    size_t idx_size;
    ex__join_pin *pin;
    ex_pending pend;            /* the sizes in pin */
    bool wait;                  /* sizes were enqueued since the last look */
    ex__probe_phase ph, after;  /* after: the phase that follows EX__PH_EMIT */
    int64_t capacity;
    int unique;                 /* the build keys are unique: 1, 0, -1 not read yet */
    bool first;                 /* the call being read started the chunk */
    bool done;                  /* the last call finished the chunk's pairs */
    bool once;                  /* its pairs hold each probe row at most once */
    int64_t pairs;              /* key-less: the chunk's pairs enumerated so far */
    dv_chunk *out;              /* the output being made (MARK's column set), or NULL */
    int64_t n;                  /* rows to emit */
    bool nulls;                 /* build columns padded with NULLs (LEFT) */
    bool ident;                 /* the rows are the input's in order: columns pass through */
    /* General joins (op_join_pairs.c). */
    uint8_t *rstate;            /* per probe row: KN_JOIN_ROW_* bits */
    size_t rstate_size;
    uint8_t *unknown;           /* MARK: per probe row, the IN-NULL rule */
    size_t unknown_size;
    void *escratch;             /* kn_eval scratch of the residual */
    size_t escratch_size;
    ex_text_area text;          /* the residual's string functions' */
} ex__probe_local;

/* Probe side (op_join_probe.c). */
int ex__join_probe_local_init(ex_op *op, ex_worker *w, void **local, pa_err *err);
void ex__join_probe_local_free(ex_op *op, void *local);
int ex__join_execute(ex_op *op, ex_worker *w, void *local, dv_chunk *in, dv_chunk **out, ex_state *st,
                     pa_err *err);
/* Make *p hold at least need bytes (ex_alloc'd to op; contents not kept). */
int ex__join_reserve(ex_op *op, void **p, size_t *size, size_t need, pa_err *err);
/* Make pl->pidx and pl->bidx hold pl->capacity entries. */
int ex__join_reserve_idx(ex_op *op, ex__probe_local *pl, pa_err *err);
/* Set pl->capacity for the next call of kn_join_probe (INNER or LEFT pairs)
 * over a chunk of rows rows, and reserve the indexes: rows while the build
 * keys may be unique (then one call is enough), else the query's chunk rows
 * if more. */
int ex__join_probe_capacity(ex_op *op, ex_worker *w, ex__probe_local *pl, int64_t rows, pa_err *err);
/* Zero pl->pin->cur for a new chunk, in the order of w's stream (a kernel
 * of the last chunk may still be queued to use it). */
int ex__join_cursor_reset(ex_worker *w, ex__probe_local *pl, pa_err *err);
/* Whether idx[0..n) is 0..rows-1: from once (each probe row at most once,
 * in order, over the whole chunk) without a look at idx, else by reading
 * idx where the host can (the cpu device). */
bool ex__join_identity(const ex__probe_local *pl, const int32_t *idx, int64_t n, int64_t rows, bool once);
/* The string bytes of gathering src at idx[0..n) to pl->pin->bytes[slot]
 * (a kernel; nothing for other types). */
int ex__join_take_bytes(ex_worker *w, ex__probe_local *pl, const pa_column *src, const int32_t *idx, int64_t n,
                        int slot, pa_err *err);
/* dst = src rows idx[0..n) (kn_take; -1 = NULL, then nulls must be set),
 * buffers owned by chunk o; a VARCHAR's bytes from pl->pin->bytes[slot]. */
int ex__join_take(ex_op *op, ex_worker *w, ex__probe_local *pl, dv_chunk *o, const pa_column *src,
                  const int32_t *idx, int64_t n, bool nulls, int slot, pa_column *dst, pa_err *err);
/* Start emitting n rows (pl->pidx[i] of in, pl->bidx[i] of the build side:
 * -1 = NULL when nulls), once as for ex__join_identity: their string bytes
 * are counted and the phase becomes EX__PH_EMIT; with n == 0, pl->out is
 * let go and the phase becomes after. */
int ex__join_emit_sizes(ex_op *op, ex_worker *w, ex__probe_local *pl, dv_chunk *in, int64_t n, bool nulls,
                        bool once, ex__probe_phase after, pa_err *err);
/* Let go of pl->out, if any, in the order of w's stream. */
void ex__join_drop_out(ex_worker *w, ex__probe_local *pl);

/* General joins (op_join_pairs.c): the builder's part (residual compiled,
 * the build columns it reads added to the bcol slots) and the probe. */
int ex__join_pairs_setup(ex_plan *p, ex__join *j, ex_op *probe, ex_op *build, ex_expr *residual, pa_err *err);
/* Start probing chunk in (rows > 0): EX__PH_CALL, or, when the build side
 * alone decides (no keys, no residual, SEMI/ANTI/MARK), the output to *out
 * and EX__PH_IDLE. */
int ex__join_pairs_start(ex_op *op, ex_worker *w, ex__probe_local *pl, dv_chunk *in, dv_chunk **out,
                         pa_err *err);
/* One step of a general join from phase pl->ph (its sizes are ready). */
int ex__join_pairs_step(ex_op *op, ex_worker *w, ex__probe_local *pl, dv_chunk *in, pa_err *err);
/* Index of build column src among j->bcol_src, added if new. */
int ex__join_bcol_slot(ex__join *j, int src);
/* The scalar-subquery check (ex_hash_join_single) on keys, once the build
 * info can be read. */
int ex__join_check_single(ex_op *op, pa_err *err);

#endif /* PISTA_OP_JOIN_INT_H */
