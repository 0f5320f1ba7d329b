/*
 * kn_sim_agg.c - the `sim` device's entries for the group-by kernels. A
 * table struct travels by value (everything a kernel changes is in its
 * device block, see kn_agg_int.h); the pinned sizes are poisoned by every
 * kernel that publishes them. kn_agg_table_init lays the table out on the
 * calling thread and clears its block in a kernel.
 */
#include "kernels/kn_agg_int.h"
#include "kernels/kn_sim_int.h"

/* One table: init, input bytes, update, partition, emit. */
typedef struct agg_args {
    kn_ctx ctx;
    kn_agg_table t;
    size_t keys_at, args_at;     /* update, input bytes: the columns */
    int64_t n, first;            /* rows (update) or groups (emit) */
    int key;
    bool has_f;
    kn_agg_fin f;
    void *scratch;
    size_t scratch_bytes;
    uint32_t *gids;
    int64_t *out, *out2;         /* pinned outputs */
    pa_column col;               /* emit: the output column */
} agg_args;

/* Two tables: move, merge, merge range, count distinct. */
typedef struct agg2_args {
    kn_ctx ctx;
    kn_agg_table dst, src;
    const uint32_t *key0_map;
    uint32_t *gid_map;
    int64_t first, n;
    int slot;
} agg2_args;

static void poison_sizes(const kn_ctx *ctx, const kn_agg_table *t)
{
    dv_poison_output(ctx->dev, t->sizes, 2 * sizeof *t->sizes);
}

/* ------------------------------------------------------- table and moves */

static int clear_k(void *p, pa_err *err)
{
    agg_args *a = p;
    kn__agg_table_clear(&a->t);
    return PA_OK;
}

int kn__sim_agg_table_init(const kn_ctx *ctx, kn_agg_table *t, const kn_agg_layout *L, void *mem,
                           int64_t cap_groups, int64_t cap_arena, int64_t *sizes, pa_err *err)
{
    int rc = kn__agg_table_layout(t, L, mem, cap_groups, cap_arena, sizes, err);
    if (rc != PA_OK)
        return rc;
    agg_args a = {.ctx = *ctx, .t = *t};
    poison_sizes(ctx, t);
    return kn__sim_launch(ctx, clear_k, &a, sizeof a, err);
}

static int move_k(void *p, pa_err *err)
{
    agg2_args *a = p;
    return kn__cpu_agg_table_move(&a->ctx, &a->dst, &a->src, err);
}

int kn__sim_agg_table_move(const kn_ctx *ctx, kn_agg_table *dst, const kn_agg_table *src, pa_err *err)
{
    agg2_args a = {.ctx = *ctx, .dst = *dst, .src = *src};
    poison_sizes(ctx, dst);
    return kn__sim_launch(ctx, move_k, &a, sizeof a, err);
}

static int merge_k(void *p, pa_err *err)
{
    agg2_args *a = p;
    return kn__cpu_agg_merge(&a->ctx, &a->dst, &a->src, a->key0_map, a->gid_map, err);
}

int kn__sim_agg_merge(const kn_ctx *ctx, kn_agg_table *dst, const kn_agg_table *src, const uint32_t *key0_map,
                      uint32_t *gid_map, pa_err *err)
{
    agg2_args a = {.ctx = *ctx, .dst = *dst, .src = *src, .key0_map = key0_map, .gid_map = gid_map};
    poison_sizes(ctx, dst);
    return kn__sim_launch(ctx, merge_k, &a, sizeof a, err);
}

static int merge_range_k(void *p, pa_err *err)
{
    agg2_args *a = p;
    return kn__cpu_agg_merge_range(&a->ctx, &a->dst, &a->src, a->first, a->n, err);
}

int kn__sim_agg_merge_range(const kn_ctx *ctx, kn_agg_table *dst, const kn_agg_table *src, int64_t first,
                            int64_t n, pa_err *err)
{
    agg2_args a = {.ctx = *ctx, .dst = *dst, .src = *src, .first = first, .n = n};
    poison_sizes(ctx, dst);
    return kn__sim_launch(ctx, merge_range_k, &a, sizeof a, err);
}

static int count_distinct_k(void *p, pa_err *err)
{
    agg2_args *a = p;
    return kn__cpu_agg_count_distinct(&a->ctx, &a->dst, a->slot, &a->src, err);
}

int kn__sim_agg_count_distinct(const kn_ctx *ctx, kn_agg_table *t, int slot, const kn_agg_table *pairs,
                               pa_err *err)
{
    agg2_args a = {.ctx = *ctx, .dst = *t, .src = *pairs, .slot = slot};
    return kn__sim_launch(ctx, count_distinct_k, &a, sizeof a, err);
}

/* ------------------------------------------------------------- updating */

/* A block with t, its key columns and one argument column per slot. */
static void columns_block(kn__args *b, agg_args *a, const kn_ctx *ctx, const kn_agg_table *t,
                          const pa_column *keys, const pa_column *args)
{
    kn__args_begin(b, sizeof *a);
    a->ctx = *ctx;
    a->t = *t;
    a->keys_at = keys ? kn__args_put(b, keys, (size_t)t->L.n_keys * sizeof *keys) : 0;
    a->args_at = args ? kn__args_put(b, args, (size_t)t->L.n_slots * sizeof *args) : 0;
}

/* The block's columns at offset at: NULL where the caller gave none (0,
 * the head's offset). */
static const pa_column *cols_at(agg_args *a, size_t at)
{
    return at ? KN__AT(a, const pa_column, at) : NULL;
}

static int input_bytes_k(void *p, pa_err *err)
{
    agg_args *a = p;
    return kn__cpu_agg_input_bytes(&a->ctx, &a->t, cols_at(a, a->keys_at),
                                   cols_at(a, a->args_at), a->n, a->out, err);
}

int kn__sim_agg_input_bytes(const kn_ctx *ctx, const kn_agg_table *t, const pa_column *keys, const pa_column *args,
                            int64_t n, int64_t *out, pa_err *err)
{
    kn__args b;
    agg_args a = {.n = n, .out = out};
    columns_block(&b, &a, ctx, t, keys, args);
    KN__POISON(ctx, out);
    return kn__args_launch(&b, &a, sizeof a, ctx, input_bytes_k, err);
}

static int update_k(void *p, pa_err *err)
{
    agg_args *a = p;
    return kn__cpu_agg_update(&a->ctx, &a->t, cols_at(a, a->keys_at),
                              cols_at(a, a->args_at), a->n, a->scratch, a->scratch_bytes, a->gids,
                              err);
}

int kn__sim_agg_update(const kn_ctx *ctx, kn_agg_table *t, const pa_column *keys, const pa_column *args, int64_t n,
                       void *scratch, size_t scratch_bytes, uint32_t *gids, pa_err *err)
{
    kn__args b;
    agg_args a = {.n = n, .scratch = scratch, .scratch_bytes = scratch_bytes, .gids = gids};
    columns_block(&b, &a, ctx, t, keys, args);
    poison_sizes(ctx, t);
    return kn__args_launch(&b, &a, sizeof a, ctx, update_k, err);
}

static int partition_k(void *p, pa_err *err)
{
    agg_args *a = p;
    return kn__cpu_agg_partition(&a->ctx, &a->t, a->scratch, a->scratch_bytes, a->out, a->out2, err);
}

int kn__sim_agg_partition(const kn_ctx *ctx, kn_agg_table *t, void *scratch, size_t scratch_bytes, int64_t *start,
                          int64_t *arena, pa_err *err)
{
    enum { NB = 1 << KN_AGG_PART_BITS };
    agg_args a = {.ctx = *ctx, .t = *t, .scratch = scratch, .scratch_bytes = scratch_bytes, .out = start,
                  .out2 = arena};
    dv_poison_output(ctx->dev, start, (NB + 1) * sizeof *start);
    dv_poison_output(ctx->dev, arena, NB * sizeof *start);
    return kn__sim_launch(ctx, partition_k, &a, sizeof a, err);
}

/* ---------------------------------------------------------------- emits */

static int emit_bytes_k(void *p, pa_err *err)
{
    agg_args *a = p;
    return kn__cpu_agg_emit_bytes(&a->ctx, &a->t, a->key, a->has_f ? &a->f : NULL, a->first, a->n, a->out, err);
}

int kn__sim_agg_emit_bytes(const kn_ctx *ctx, const kn_agg_table *t, int key, const kn_agg_fin *f, int64_t first,
                           int64_t count, int64_t *out, pa_err *err)
{
    agg_args a = {.ctx = *ctx, .t = *t, .key = key, .has_f = f != NULL, .first = first, .n = count, .out = out};
    if (f)
        a.f = *f;
    KN__POISON(ctx, out);
    return kn__sim_launch(ctx, emit_bytes_k, &a, sizeof a, err);
}

static int emit_key_k(void *p, pa_err *err)
{
    agg_args *a = p;
    return kn__cpu_agg_emit_key(&a->ctx, &a->t, a->key, a->first, a->n, &a->col, err);
}

int kn__sim_agg_emit_key(const kn_ctx *ctx, const kn_agg_table *t, int key, int64_t first, int64_t count,
                         pa_column *out, pa_err *err)
{
    agg_args a = {.ctx = *ctx, .t = *t, .key = key, .first = first, .n = count, .col = *out};
    return kn__sim_launch(ctx, emit_key_k, &a, sizeof a, err);
}

static int emit_k(void *p, pa_err *err)
{
    agg_args *a = p;
    return kn__cpu_agg_emit(&a->ctx, &a->t, &a->f, a->first, a->n, &a->col, err);
}

int kn__sim_agg_emit(const kn_ctx *ctx, const kn_agg_table *t, const kn_agg_fin *f, int64_t first, int64_t count,
                     pa_column *out, pa_err *err)
{
    agg_args a = {.ctx = *ctx, .t = *t, .f = *f, .first = first, .n = count, .col = *out};
    return kn__sim_launch(ctx, emit_k, &a, sizeof a, err);
}
