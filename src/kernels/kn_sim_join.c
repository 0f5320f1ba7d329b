/*
 * kn_sim_join.c - the `sim` device's entries for the hash join's IN-NULL
 * rule, the cross join and the joins on candidate pairs (the build and the
 * probe run their CUDA kernels, kn_gpu_join.cu). The table struct (its build key descriptors
 * included) travels by value; its info and the probe cursor are pinned
 * memory the kernels read and write when they run, so only the fields a
 * kernel writes without reading are poisoned.
 */
#include "kernels/kn_sim_int.h"

#include <string.h>

/* ------------------------------------------------------------------ probe */

typedef struct probe_args {
    kn_ctx ctx;
    kn_join_table t;
    pa_column keys[KN_JOIN_MAX_KEYS];  /* the probe keys, t.n_keys of them */
    kn_join_kind kind;
    const uint64_t *hashes;
    int64_t rows, capacity;
    void *scratch;
    size_t scratch_size;
    kn_join_cursor *cur;
    int32_t *probe_idx, *build_idx;
    uint8_t *mark, *mark_valid;  /* in_unknown: mark = unknown */
} probe_args;

/* The table and probe keys; false for a key count the table refuses. */
static bool probe_init(probe_args *a, const kn_ctx *ctx, const kn_join_table *t, const pa_column *probe_keys)
{
    a->ctx = *ctx;
    a->t = *t;
    if (t->n_keys < 1 || t->n_keys > KN_JOIN_MAX_KEYS)
        return false;
    memcpy(a->keys, probe_keys, (size_t)t->n_keys * sizeof *probe_keys);
    return true;
}

static int bad_keys(const kn_join_table *t, pa_err *err)
{
    return pa_error(err, PA_EINVAL, "join table with %d key columns", t->n_keys);
}

/* The cursor fields a probe or cross join writes without reading them. */
static void poison_cursor(const kn_ctx *ctx, kn_join_cursor *cur)
{
    KN__POISON(ctx, &cur->done);
    KN__POISON(ctx, &cur->n_out);
    KN__POISON(ctx, &cur->n_null);
}

static int in_unknown_k(void *p, pa_err *err)
{
    probe_args *a = p;
    return kn__cpu_join_in_unknown(&a->ctx, &a->t, a->keys, a->rows, a->mark, err);
}

int kn__sim_join_in_unknown(const kn_ctx *ctx, const kn_join_table *t, const pa_column *probe_keys, int64_t rows,
                            uint8_t *unknown, pa_err *err)
{
    probe_args a = {.rows = rows, .mark = unknown};
    if (!probe_init(&a, ctx, t, probe_keys))
        return bad_keys(t, err);
    return kn__sim_launch(ctx, in_unknown_k, &a, sizeof a, err);
}

/* ------------------------------------------------------- candidate pairs */

typedef struct pairs_args {
    kn_ctx ctx;
    pa_column pred;
    kn_join_kind kind;
    int64_t rows, build_rows, capacity;   /* pairs_filter: rows = n */
    kn_join_cursor *cur;
    int32_t *probe_idx, *build_idx;
    const uint8_t *row_state_in, *unknown;
    uint8_t *row_state, *mark, *mark_valid;
    int64_t *count, *n_null;
} pairs_args;

static int cross_k(void *p, pa_err *err)
{
    pairs_args *a = p;
    return kn__cpu_join_cross(&a->ctx, a->rows, a->build_rows, a->cur, a->capacity, a->probe_idx, a->build_idx,
                              err);
}

int kn__sim_join_cross(const kn_ctx *ctx, int64_t rows, int64_t build_rows, kn_join_cursor *cur, int64_t capacity,
                       int32_t *probe_idx, int32_t *build_idx, pa_err *err)
{
    pairs_args a = {.ctx = *ctx, .rows = rows, .build_rows = build_rows, .capacity = capacity, .cur = cur,
                    .probe_idx = probe_idx, .build_idx = build_idx};
    poison_cursor(ctx, cur);
    return kn__sim_launch(ctx, cross_k, &a, sizeof a, err);
}

static int pairs_filter_k(void *p, pa_err *err)
{
    pairs_args *a = p;
    return kn__cpu_join_pairs_filter(&a->ctx, &a->pred, a->rows, a->probe_idx, a->build_idx, a->row_state,
                                     a->count, err);
}

int kn__sim_join_pairs_filter(const kn_ctx *ctx, const pa_column *pred, int64_t n, int32_t *probe_idx,
                              int32_t *build_idx, uint8_t *row_state, int64_t *count, pa_err *err)
{
    pairs_args a = {.ctx = *ctx, .pred = *pred, .rows = n, .probe_idx = probe_idx, .build_idx = build_idx,
                    .row_state = row_state, .count = count};
    KN__POISON(ctx, count);
    return kn__sim_launch(ctx, pairs_filter_k, &a, sizeof a, err);
}

static int finish_k(void *p, pa_err *err)
{
    pairs_args *a = p;
    return kn__cpu_join_finish(&a->ctx, a->kind, a->row_state_in, a->unknown, a->rows, a->probe_idx, a->build_idx,
                               a->mark, a->mark_valid, a->count, a->n_null, err);
}

int kn__sim_join_finish(const kn_ctx *ctx, kn_join_kind kind, const uint8_t *row_state, const uint8_t *unknown,
                        int64_t rows, int32_t *probe_idx, int32_t *build_idx, uint8_t *mark, uint8_t *mark_valid,
                        int64_t *count, int64_t *n_null, pa_err *err)
{
    pairs_args a = {.ctx = *ctx, .kind = kind, .rows = rows, .probe_idx = probe_idx, .build_idx = build_idx,
                    .row_state_in = row_state, .unknown = unknown, .mark = mark, .mark_valid = mark_valid,
                    .count = count, .n_null = n_null};
    KN__POISON(ctx, count);
    if (n_null)
        KN__POISON(ctx, n_null);
    return kn__sim_launch(ctx, finish_k, &a, sizeof a, err);
}
