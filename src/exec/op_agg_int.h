/*
 * op_agg_int.h - shared by op_agg.c (builders, state, tables),
 * op_agg_run.c (the sink's hooks) and op_agg_emit.c (finalize and the
 * source) of the AGGREGATE and DISTINCT operators.
 *
 * Design notes
 * - One operator, two roles: the sink of its input pipeline (each worker
 *   folds its chunks into a local group-by table, kn_agg_update), combine
 *   (see below; with COUNT(DISTINCT), under the op's lock: the first
 *   worker's table is adopted as the global one, later ones are merged into
 *   it), finalize (COUNT(DISTINCT) counts,
 *   the number of result rows), and the source of the next pipeline (result
 *   chunks of ~chunk_rows groups, any worker, kn_agg_emit*).
 * - User aggregates become kernel slots, shared where equal: SUM/AVG(x)
 *   need SUM(x) and COUNT(x), MIN/MAX(x) need COUNT(x) for NULL-ness, so
 *   sum(q), avg(q) use two slots, not four.
 * - Partitioned merge (no COUNT(DISTINCT)): combine does not merge. Each
 *   worker reorders its table's groups by hash bucket (kn_agg_partition,
 *   in parallel; not with one thread, where the table is the result as it
 *   is) and hands the table over as a partial. finalize cuts the 256
 *   buckets into P ranges of about AGG_PART_GROUPS groups. The workers of
 *   the next pipeline each claim a range, merge that range's groups of
 *   every partial into a table of exactly the right capacity (no growth,
 *   cache-sized) and emit it: the merge runs on every worker instead of
 *   one worker under the lock. One partial is emitted as it is, by ranges
 *   of groups as before; several unpartitioned ones (one thread, several
 *   pipelines feeding the op) are merged into the first by finalize. The
 *   last range whose merge ran frees the partials.
 * - COUNT(DISTINCT x): per such argument a pair table keyed (group id, x),
 *   fed with each batch's group ids; merged with the ids rewritten to the
 *   global table's (kn_agg_merge key0_map); counted into an EXTERN slot.
 *   The merges run on the combining workers' streams, one after the other
 *   (g_ev orders each after the previous one).
 * - Batches: a chunk is folded in batches of at most AGG_BATCH rows, each
 *   no larger than the table's free group capacity (a multiple of 8 rows so
 *   validity bitmaps can be sliced), so a table with few groups stays small
 *   and the scratch stays cache-sized (on the cpu device; elsewhere a table
 *   that reads its sizes makes room for the rest of the chunk, so that a
 *   chunk costs about one wait). Tables grow into a new block
 *   (kn_agg_table_move): by doubling, or, once a worker has folded
 *   AGG_PROJECT_ROWS rows, to the groups its rate of new groups projects
 *   over its share of the input estimate (each move copies every group, so
 *   a 1.5M-group table built by doubling moved ~9 times). All table memory
 *   is ex_alloc'ed (accounted to the op; PA_ENOMEM names it).
 * - Sizes (DESIGN.md rule 2): the kernels publish a table's groups and
 *   arena bytes to its pinned `sizes`, valid only once the stream ran them.
 *   The host plans with upper bounds instead (agg_tab.groups/arena: + n
 *   per batch of n rows, + the chunk's string bytes) and reads the exact
 *   sizes behind an event (ex_pending; free on the cpu device) only when a
 *   bound says a table may be full, once per chunk whose string bytes it
 *   must count (kn_agg_input_bytes), at combine (with the bucket starts of
 *   kn_agg_partition), after a range's merge and before an emit with
 *   strings (kn_agg_emit_bytes). The hooks wait by setting w->blocked and
 *   resume from agg_local.ph. Pinned memory and blocks a queued kernel may
 *   still use are freed in stream order.
 */
#ifndef PISTA_OP_AGG_INT_H
#define PISTA_OP_AGG_INT_H

#include "exec/exec_int.h"

#include <pthread.h>

#define AGG_BATCH 16384          /* rows per kn_agg_update: scratch of ~0.5 MiB at stride 16 */
#define AGG_MIN_GROUPS 2048      /* a table's first capacity */
#define AGG_MAX_DISTINCT 8       /* COUNT(DISTINCT) arguments per aggregate op */
#define AGG_PROJECT_ROWS 65536   /* rows a worker folds before its growth follows a projection */
#define AGG_PART_GROUPS 16384    /* groups per merge range: a table of ~1 MiB, about an L2 */
#define AGG_BUCKETS (1 << KN_AGG_PART_BITS)

/* A group-by table with the memory behind it. */
typedef struct agg_tab {
    kn_agg_table t;
    void *mem;                   /* ex_alloc'ed block, NULL when not made yet */
    size_t bytes;
    int64_t *sizes;              /* pinned (dv_host_alloc): what the kernels publish */
    dv_device *dev;              /* where sizes came from */
    int64_t groups, arena;       /* host upper bounds of the sizes once the stream ran every
                                    kernel enqueued on t (exact right after agg_tab_learn) */
} agg_tab;

typedef struct agg_state {
    int n_keys;
    int *key_cols;               /* input columns of the keys */
    int n_aggs;
    kn_agg_fin *fin;             /* per aggregate */
    kn_agg_layout L;             /* main table */
    int slot_col[KN_AGG_MAX_SLOTS];   /* input column per slot, -1 none */
    int n_dist;
    int dist_col[AGG_MAX_DISTINCT];
    kn_agg_layout Ld[AGG_MAX_DISTINCT];
    bool str_in[1 + AGG_MAX_DISTINCT];   /* the main table (0), pair table j (1 + j) keeps strings */
    bool str_out;                /* some result column is VARCHAR */

    pthread_mutex_t mu;
    agg_tab g;                   /* global table (after the first combine) */
    agg_tab gd[AGG_MAX_DISTINCT];
    dv_event *g_ev;              /* after the last merge into g (not on the cpu device) */
    bool g_merged;               /* g took merges: its groups are a bound */
    int64_t n_out;               /* result rows of g, set by finalize; -1: read from g's sizes */
    int64_t next;                /* next group of g to emit (atomic) */

    /* Partitioned merge (see the notes above). */
    struct agg_part *parts;      /* partials handed over by combine */
    kn_agg_layout Lm;            /* L without the dense map: merged tables */
    int n_parts, cap_parts;
    int n_ranges;                /* 0: emit g by ranges of groups */
    int range_lo[AGG_BUCKETS + 1];   /* range r = buckets [range_lo[r], range_lo[r + 1]) */
    int next_range;              /* next range to claim (atomic) */
    int ranges_merged;           /* (atomic) ranges whose merge ran: the last one frees the partials */
} agg_state;

/* A worker's table handed over with its groups in bucket order. */
typedef struct agg_part {
    agg_tab t;
    int64_t start[AGG_BUCKETS + 1];  /* bucket b = groups [start[b], start[b + 1]) */
    int64_t arena[AGG_BUCKETS];  /* arena bytes per bucket */
    bool partitioned;            /* start and arena are set */
} agg_part;

/* Where a worker's hook stopped to wait for sizes (w->blocked). */
typedef enum agg_phase {
    AGG_IDLE,                    /* sink: before a chunk; source: nothing pending */
    AGG_IN_BYTES,                /* sink: the chunk's string bytes are counted */
    AGG_BATCHES,                 /* sink: folding the chunk from row `start` */
    AGG_COMBINING,               /* combine: the table's sizes (and buckets) are read */
    AGG_MERGING,                 /* source: a range is merged into part */
    AGG_EMIT_BYTES,              /* source: an emit's string bytes are counted */
} agg_phase;

/* Pinned outputs of a sink worker: in bytes per table, then bucket starts
 * and arena bytes of kn_agg_partition. */
#define AGG_PIN_START (1 + AGG_MAX_DISTINCT)
#define AGG_PIN_ARENA (AGG_PIN_START + AGG_BUCKETS + 1)
#define AGG_PIN_SINK (AGG_PIN_ARENA + AGG_BUCKETS)

typedef struct agg_local {
    dv_device *dev;
    dv_stream *stream;           /* the worker's: frees at its end follow its kernels */
    ex_pending pend;             /* the sizes this worker's kernels publish */
    agg_phase ph;
    int64_t *pin;                /* pinned: AGG_PIN_SINK words (sink), a byte count per result
                                    column (source, when str_out) */
    /* sink role */
    agg_tab t;
    agg_tab d[AGG_MAX_DISTINCT];
    void *scratch;
    size_t scratch_bytes;
    uint32_t *gids;              /* AGG_BATCH */
    int64_t rows_in;             /* rows folded so far */
    int64_t start;               /* next row of the chunk being folded */
    int64_t chunk_bytes[1 + AGG_MAX_DISTINCT];   /* its string bytes per table (0 main, 1 + j) */
    /* source role: the range being emitted */
    agg_tab part;
    int64_t pos, end;            /* next group of part to emit, its groups */
    const kn_agg_table *et;      /* the emit waiting for its string bytes: table, groups */
    int64_t efirst, ecount;
} agg_local;

/* Make sure a can take need_groups more groups and need_arena more bytes
 * than its bounds (creating or growing it; enqueued on kn). On error a is
 * unchanged. */
int agg_tab_reserve(ex_op *op, kn_ctx *kn, agg_tab *a, const kn_agg_layout *L,
                    int64_t need_groups, int64_t need_arena, pa_err *err);
/* The same, growing to about hint groups (a projection of the final size)
 * when that is more than doubling; if that much memory is not there, by
 * doubling. */
int agg_tab_reserve_hint(ex_op *op, kn_ctx *kn, agg_tab *a, const kn_agg_layout *L, int64_t need_groups,
                         int64_t need_arena, int64_t hint, pa_err *err);
/* Make a an empty table of L for cap groups and arena bytes, reusing its
 * block when it is large enough. */
int agg_tab_fresh(ex_op *op, kn_ctx *kn, agg_tab *a, const kn_agg_layout *L, int64_t cap, int64_t arena,
                  pa_err *err);
/* Set a's bounds to its published sizes (plus extra_arena bytes still to
 * come): only once the stream ran every kernel enqueued on a. */
void agg_tab_learn(agg_tab *a, int64_t extra_arena);
/* Free a's block and sizes after the work enqueued on stream (NULL: now,
 * nothing queued uses them). */
void agg_tab_free(ex_op *op, dv_stream *stream, agg_tab *a);
void agg_free_parts(ex_op *op, dv_stream *stream, agg_state *s);

extern const ex_op_vt agg_vt, distinct_vt;

int agg_local_init(ex_op *op, ex_worker *w, void **local, pa_err *err);
void agg_local_free(ex_op *op, void *local);
int agg_sink(ex_op *op, ex_worker *w, void *local, dv_chunk *in, pa_err *err);
int agg_combine(ex_op *op, ex_worker *w, void *local, pa_err *err);
int agg_finalize(ex_op *op, ex_query *q, pa_err *err);
int agg_source_open(ex_op *op, ex_query *q, pa_err *err);
int agg_source_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err);
void agg_destroy(ex_op *op);

#endif /* PISTA_OP_AGG_INT_H */
