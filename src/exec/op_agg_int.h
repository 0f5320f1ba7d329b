/*
 * op_agg_int.h - shared by op_agg.c (builders, state, tables) and
 * op_agg_run.c (the hooks) of the AGGREGATE and DISTINCT operators.
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
 *   one worker under the lock. One partial (a single worker, or one range)
 *   is emitted as it is, by ranges of groups as before. The last range
 *   merged frees the partials.
 * - COUNT(DISTINCT x): per such argument a pair table keyed (group id, x),
 *   fed with each batch's group ids; merged with the ids rewritten to the
 *   global table's (kn_agg_merge key0_map); counted into an EXTERN slot.
 * - Batches: a chunk is folded in batches of at most AGG_BATCH rows, each
 *   no larger than the table's free group capacity (a multiple of 8 rows so
 *   validity bitmaps can be sliced), so a table with few groups stays small
 *   and the scratch stays cache-sized. Tables grow into a new block
 *   (kn_agg_table_move): by doubling, or, once a worker has folded
 *   AGG_PROJECT_ROWS rows, to the groups its rate of new groups projects
 *   over its share of the input estimate (each move copies every group, so
 *   a 1.5M-group table built by doubling moved ~9 times). All table memory
 *   is ex_alloc'ed (accounted to the op; PA_ENOMEM names it).
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
    int64_t *sizes;              /* pinned (dv_host_alloc) */
    dv_device *dev;              /* where sizes came from */
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

    pthread_mutex_t mu;
    agg_tab g;                   /* global table (after the first combine) */
    agg_tab gd[AGG_MAX_DISTINCT];
    int64_t n_out;               /* result rows of g, set by finalize */
    int64_t next;                /* next group of g to emit (atomic) */

    /* Partitioned merge (see the notes above). */
    struct agg_part *parts;      /* partials handed over by combine */
    kn_agg_layout Lm;            /* L without the dense map: merged tables */
    int n_parts, cap_parts;
    int n_ranges;                /* 0: emit g by ranges of groups */
    int range_lo[AGG_BUCKETS + 1];   /* range r = buckets [range_lo[r], range_lo[r + 1]) */
    int next_range;              /* next range to claim (atomic) */
    int ranges_merged;           /* (atomic) the last one frees the partials */
} agg_state;

/* A worker's table handed over with its groups in bucket order. */
typedef struct agg_part {
    agg_tab t;
    int64_t start[AGG_BUCKETS + 1];  /* bucket b = groups [start[b], start[b + 1]) */
    int64_t arena[AGG_BUCKETS];  /* arena bytes per bucket */
    bool partitioned;            /* start and arena are set (else finalize does it) */
} agg_part;

typedef struct agg_local {
    agg_tab t;
    agg_tab d[AGG_MAX_DISTINCT];
    void *scratch;
    size_t scratch_bytes;
    uint32_t *gids;              /* AGG_BATCH */
    int64_t rows_in;             /* rows folded so far */
    /* source role: the range being emitted */
    agg_tab part;
    int64_t pos, end;            /* next group of part to emit, its groups */
} agg_local;

/* Make sure a can take need_groups more groups and need_arena more bytes
 * (creating or growing it). On error a is unchanged. */
int agg_tab_reserve(ex_op *op, kn_ctx *kn, agg_tab *a, const kn_agg_layout *L,
                    int64_t need_groups, int64_t need_arena, pa_err *err);
/* The same, growing to about hint groups (a projection of the final size)
 * when that is more than doubling; if that much memory is not there, by
 * doubling. */
int agg_tab_reserve_hint(ex_op *op, kn_ctx *kn, agg_tab *a, const kn_agg_layout *L, int64_t need_groups,
                         int64_t need_arena, int64_t hint, pa_err *err);
void agg_tab_free(ex_op *op, agg_tab *a);
void agg_free_parts(ex_op *op, agg_state *s);

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
