/*
 * op_agg_run.c - the input side of AGGREGATE and DISTINCT: per-worker
 * tables fed batch by batch (sink) and handed over or merged under the op's
 * lock (combine). Sizes are planned with host bounds and read behind an
 * event where a bound is not enough (see op_agg_int.h). finalize and the
 * source are in op_agg_emit.c.
 */
#include "exec/op_agg_int.h"

#include <string.h>

int agg_local_init(ex_op *op, ex_worker *w, void **local, pa_err *err)
{
    agg_state *s = op->state;
    *local = NULL;
    if (w->role != EX_ROLE_SINK && w->role != EX_ROLE_SOURCE)
        return PA_OK;
    agg_local *l = pa_calloc(1, sizeof *l);
    if (!l)
        return pa_error(err, PA_ENOMEM, "out of memory in %s: worker state", op->label);
    l->dev = w->dev;
    l->stream = w->stream;
    int rc = PA_OK;
    if (w->role == EX_ROLE_SOURCE) {
        if (s->str_out && (rc = dv_host_alloc(w->dev, (size_t)op->n_cols * sizeof *l->pin, (void **)&l->pin, err)))
            rc = ex_oom(op, rc, err);
    } else {
        size_t sb = kn_agg_update_scratch(&s->L, AGG_BATCH);
        for (int j = 0; j < s->n_dist; j++) {
            size_t d = kn_agg_update_scratch(&s->Ld[j], AGG_BATCH);
            sb = d > sb ? d : sb;
        }
        if ((rc = ex_alloc(op, sb, &l->scratch, err)) == PA_OK) {
            l->scratch_bytes = sb;
            rc = ex_alloc(op, AGG_BATCH * sizeof(uint32_t), (void **)&l->gids, err);
        }
        if (rc == PA_OK && (rc = dv_host_alloc(w->dev, AGG_PIN_SINK * sizeof *l->pin, (void **)&l->pin, err)))
            rc = ex_oom(op, rc, err);
    }
    if (rc != PA_OK) {
        agg_local_free(op, l);
        return rc;
    }
    *local = l;
    return PA_OK;
}

void agg_local_free(ex_op *op, void *local)
{
    agg_local *l = local;
    if (!l)
        return;
    agg_tab_free(op, l->stream, &l->t);
    agg_tab_free(op, l->stream, &l->part);
    for (int j = 0; j < AGG_MAX_DISTINCT; j++)
        agg_tab_free(op, l->stream, &l->d[j]);
    if (l->scratch)
        ex_free(op, l->scratch, l->scratch_bytes);
    if (l->gids)
        ex_free(op, l->gids, AGG_BATCH * sizeof(uint32_t));
    ex_pinned_free(l->dev, l->stream, l->pin);
    ex_pending_close(&l->pend);
    pa_free(l);
}

/* View of rows [start, start+n) of c; start is a multiple of 8. */
static pa_column slice(const pa_column *c, int64_t start, int64_t n)
{
    pa_column v = *c;
    v.length = n;
    if (c->validity)
        v.validity = c->validity + start / 8;
    if (pa_type_is_varlen(c->type.id))
        v.offsets = c->offsets + start;
    else if (c->data)
        v.data = (uint8_t *)c->data + start * pa_type_bytes(c->type);
    return v;
}

/* The key columns and slot arguments of rows [start, start+n) of in. */
static void main_columns(const agg_state *s, const dv_chunk *in, int64_t start, int64_t n, pa_column *keys,
                         pa_column *args)
{
    for (int k = 0; k < s->n_keys; k++)
        keys[k] = slice(&in->columns[s->key_cols[k]], start, n);
    for (int i = 0; i < s->L.n_slots; i++) {
        if (s->slot_col[i] >= 0)
            args[i] = slice(&in->columns[s->slot_col[i]], start, n);
        else
            memset(&args[i], 0, sizeof args[i]);
    }
}

/* The keys of pair table j for rows [start, start+n) of in: this batch's
 * group ids and the argument. */
static void pair_columns(const agg_state *s, const agg_local *l, const dv_chunk *in, int j, int64_t start,
                         int64_t n, pa_column *pair)
{
    memset(&pair[0], 0, sizeof pair[0]);
    pair[0].type = (pa_type){PA_TYPE_INTEGER, 0, 0};
    pair[0].length = n;
    pair[0].data = l->gids;
    pair[1] = slice(&in->columns[s->dist_col[j]], start, n);
}

/* Every table's bounds from its published sizes (the stream ran the
 * worker's kernels), the current chunk's string bytes still to come. */
static void learn_all(const agg_state *s, agg_local *l)
{
    agg_tab_learn(&l->t, l->chunk_bytes[0]);
    for (int j = 0; j < s->n_dist; j++)
        agg_tab_learn(&l->d[j], l->chunk_bytes[1 + j]);
}

/* The worker's tables, made on its first chunk. */
static int make_tables(ex_op *op, ex_worker *w, agg_local *l, pa_err *err)
{
    agg_state *s = op->state;
    int rc = PA_OK;
    if (!l->t.mem)
        rc = agg_tab_reserve(op, &w->kn, &l->t, &s->L, 0, 0, err);
    for (int j = 0; j < s->n_dist && rc == PA_OK; j++)
        if (!l->d[j].mem)
            rc = agg_tab_reserve(op, &w->kn, &l->d[j], &s->Ld[j], 0, 0, err);
    return rc;
}

/* Count the string bytes of in that each table keeping strings may add to
 * its arena (into l->pin[0], l->pin[1 + j]). */
static int count_in_bytes(ex_op *op, ex_worker *w, agg_local *l, const dv_chunk *in, pa_err *err)
{
    agg_state *s = op->state;
    pa_column keys[KN_AGG_MAX_KEYS], args[KN_AGG_MAX_SLOTS], pair[2];
    int rc = PA_OK;
    if (s->str_in[0]) {
        main_columns(s, in, 0, in->length, keys, args);
        rc = kn_agg_input_bytes(&w->kn, &l->t.t, keys, args, in->length, &l->pin[0], err);
    }
    for (int j = 0; j < s->n_dist && rc == PA_OK; j++)
        if (s->str_in[1 + j]) {
            pair_columns(s, l, in, j, 0, in->length, pair);
            rc = kn_agg_input_bytes(&w->kn, &l->d[j].t, pair, NULL, in->length, &l->pin[1 + j], err);
        }
    return rc;
}

/* With the counts read: room in every arena for the whole chunk. */
static int reserve_in_bytes(ex_op *op, ex_worker *w, agg_local *l, pa_err *err)
{
    agg_state *s = op->state;
    int rc = PA_OK;
    for (int j = 0; j <= s->n_dist && rc == PA_OK; j++) {
        if (!s->str_in[j])
            continue;
        agg_tab *a = j == 0 ? &l->t : &l->d[j - 1];
        int64_t b = l->pin[j];
        if ((rc = agg_tab_reserve(op, &w->kn, a, j == 0 ? &s->L : &s->Ld[j - 1], 0, b, err)) == PA_OK) {
            a->arena += b;
            l->chunk_bytes[j] = b;
        }
    }
    return rc;
}

/* The groups this worker's table will end with if new groups keep coming
 * at the rate seen so far, over its share of the estimated input; 0 when
 * unknown or too early to tell. Called with exact bounds. */
static int64_t projected_groups(ex_op *op, ex_worker *w, const agg_local *l)
{
    int64_t est = op->child[0] ? op->child[0]->est_rows : -1;
    int W = w->q && w->q->threads > 0 ? w->q->threads : 1;
    if (est <= 0 || !l->t.mem || l->rows_in < AGG_PROJECT_ROWS)
        return 0;
    int64_t mine = est / W, g = l->t.groups;
    if (mine <= l->rows_in)
        return 0;
    return (int64_t)((__int128)g * mine / l->rows_in);
}

/* Whether the bounds leave room for n more rows' groups in every table. */
static bool fits(const agg_state *s, const agg_local *l, int64_t n)
{
    if (s->n_keys > 0 && l->t.groups + n > l->t.t.cap_groups)
        return false;
    for (int j = 0; j < s->n_dist; j++)
        if (l->d[j].groups + n > l->d[j].t.cap_groups)
            return false;
    return true;
}

/* Rows of the next batch (*m, at most want, left rows remaining in the
 * chunk), growing tables as needed; *m = 0 with w->blocked set while the
 * exact sizes are not readable yet. */
static int plan_batch(ex_op *op, ex_worker *w, agg_local *l, int64_t want, int64_t left, int64_t *m, pa_err *err)
{
    agg_state *s = op->state;
    *m = want;
    if (fits(s, l, want))
        return PA_OK;
    bool ready;
    int rc = ex_pending_ready(w, &l->pend, &ready, err);
    if (rc != PA_OK || !ready) {
        w->blocked = rc == PA_OK;
        *m = 0;
        return rc;
    }
    learn_all(s, l);
    /* On the cpu device a small table stays small (cache-sized): a batch
     * takes what free capacity there is (at least 1024 rows, else the table
     * grows first). Elsewhere reading the sizes is a wait: the tables make
     * room for the rest of the chunk at once. */
    bool cpu = dv_kind_of(w->dev) == DV_KIND_CPU;
    if (s->n_keys > 0) {
        int64_t free_g = l->t.t.cap_groups - l->t.groups;
        int64_t least = !cpu ? left : want < AGG_MIN_GROUPS / 2 ? want : AGG_MIN_GROUPS / 2;
        if (free_g < least) {
            rc = agg_tab_reserve_hint(op, &w->kn, &l->t, &s->L, least, 0, projected_groups(op, w, l), err);
            if (rc != PA_OK)
                return rc;
            free_g = l->t.t.cap_groups - l->t.groups;
        }
        *m = want <= free_g ? want : free_g & ~(int64_t)7;
    }
    for (int j = 0; j < s->n_dist && rc == PA_OK; j++)
        rc = agg_tab_reserve(op, &w->kn, &l->d[j], &s->Ld[j], cpu ? *m : left, 0, err);
    return rc;
}

/* Fold rows [start, start+n) of in into the worker's tables (room for
 * them was made). */
static int fold_batch(ex_op *op, ex_worker *w, agg_local *l, const dv_chunk *in, int64_t start, int64_t n,
                      pa_err *err)
{
    agg_state *s = op->state;
    pa_column keys[KN_AGG_MAX_KEYS], args[KN_AGG_MAX_SLOTS], pair[2];
    main_columns(s, in, start, n, keys, args);
    int rc = kn_agg_update(&w->kn, &l->t.t, keys, args, n, l->scratch, l->scratch_bytes, l->gids, err);
    if (s->n_keys > 0)
        l->t.groups += n;
    for (int j = 0; j < s->n_dist && rc == PA_OK; j++) {
        pair_columns(s, l, in, j, start, n, pair);
        rc = kn_agg_update(&w->kn, &l->d[j].t, pair, NULL, n, l->scratch, l->scratch_bytes, NULL, err);
        l->d[j].groups += n;
    }
    return rc;
}

int agg_sink(ex_op *op, ex_worker *w, void *local, dv_chunk *in, pa_err *err)
{
    agg_state *s = op->state;
    agg_local *l = local;
    int64_t n = in->length;
    int rc;
    bool ready, strs = false;
    if (n == 0)
        return PA_OK;
    switch (l->ph) {
    case AGG_IDLE:
        if ((rc = make_tables(op, w, l, err)) != PA_OK)
            return rc;
        l->start = 0;
        for (int j = 0; j <= s->n_dist; j++)
            strs |= s->str_in[j];
        l->ph = AGG_BATCHES;
        if (!strs)
            break;
        if ((rc = count_in_bytes(op, w, l, in, err)) != PA_OK)
            return rc;
        l->ph = AGG_IN_BYTES;
        /* fall through */
    case AGG_IN_BYTES:
        if ((rc = ex_pending_ready(w, &l->pend, &ready, err)) != PA_OK || !ready) {
            w->blocked = rc == PA_OK;
            return rc;
        }
        learn_all(s, l);
        if ((rc = reserve_in_bytes(op, w, l, err)) != PA_OK)
            return rc;
        l->ph = AGG_BATCHES;
        break;
    default:
        break;
    }
    while (l->start < n) {
        int64_t want = n - l->start < AGG_BATCH ? n - l->start : AGG_BATCH, m;
        if ((rc = plan_batch(op, w, l, want, n - l->start, &m, err)) != PA_OK || w->blocked)
            return rc;
        if ((rc = fold_batch(op, w, l, in, l->start, m, err)) != PA_OK)
            return rc;
        l->start += m;
        l->rows_in += m;
    }
    l->ph = AGG_IDLE;
    memset(l->chunk_bytes, 0, sizeof l->chunk_bytes);
    return PA_OK;
}

/* With COUNT(DISTINCT): merge the worker's tables (exact sizes) into the
 * global ones under the lock (the pair tables need the global group ids),
 * after the previous merge on another stream (g_ev). */
static int combine_merge(ex_op *op, ex_worker *w, agg_local *l, pa_err *err)
{
    agg_state *s = op->state;
    bool ordered = dv_kind_of(w->dev) != DV_KIND_CPU;
    int rc = PA_OK;
    uint32_t *map = NULL;
    int64_t ng = l->t.groups;
    pthread_mutex_lock(&s->mu);
    if (!s->g.mem) {
        /* The first partial becomes the global table as it is. */
        s->g = l->t;
        memset(&l->t, 0, sizeof l->t);
        for (int j = 0; j < s->n_dist; j++) {
            s->gd[j] = l->d[j];
            memset(&l->d[j], 0, sizeof l->d[j]);
        }
    } else {
        if (ordered && (rc = dv_stream_wait_event(w->stream, s->g_ev, err)) != PA_OK)
            goto out;
        if ((rc = agg_tab_reserve(op, &w->kn, &s->g, &s->L, ng, l->t.arena, err)) != PA_OK ||
            (rc = ex_alloc(op, (size_t)ng * sizeof *map + 4, (void **)&map, err)) != PA_OK ||
            (rc = kn_agg_merge(&w->kn, &s->g.t, &l->t.t, NULL, map, err)) != PA_OK)
            goto out;
        s->g.groups += ng;   /* a bound: some groups were there already */
        s->g.arena += l->t.arena;
        s->g_merged = true;
        for (int j = 0; j < s->n_dist; j++) {
            agg_tab *src = &l->d[j], *dst = &s->gd[j];
            if (!src->mem)
                continue;
            if ((rc = agg_tab_reserve(op, &w->kn, dst, &s->Ld[j], src->groups, src->arena, err)) != PA_OK ||
                (rc = kn_agg_merge(&w->kn, &dst->t, &src->t, map, NULL, err)) != PA_OK)
                goto out;
            dst->groups += src->groups;
            dst->arena += src->arena;
        }
    }
    if (ordered && !s->g_ev)
        rc = dv_event_create(w->dev, &s->g_ev, err);
    if (ordered && rc == PA_OK)
        rc = dv_event_record(s->g_ev, w->stream, err);
out:
    pthread_mutex_unlock(&s->mu);
    if (map)
        ex_free(op, map, (size_t)ng * sizeof *map + 4);
    return rc;
}

/* Without: hand the table over with its buckets (partitioned here, in
 * parallel with the other workers, when there are several); the next
 * pipeline merges (see op_agg_int.h). */
static int combine_hand_over(ex_op *op, agg_local *l, bool partitioned, pa_err *err)
{
    agg_state *s = op->state;
    agg_part pt;
    memset(&pt, 0, sizeof pt);
    if ((pt.partitioned = partitioned)) {
        memcpy(pt.start, l->pin + AGG_PIN_START, sizeof pt.start);
        memcpy(pt.arena, l->pin + AGG_PIN_ARENA, sizeof pt.arena);
    }
    int rc = PA_OK;
    pthread_mutex_lock(&s->mu);
    if (s->n_parts == s->cap_parts) {
        int cap = s->cap_parts ? 2 * s->cap_parts : 4;
        agg_part *v = pa_realloc(s->parts, (size_t)cap * sizeof *v);
        if (v) {
            s->parts = v;
            s->cap_parts = cap;
        } else {
            rc = pa_error(err, PA_ENOMEM, "out of memory in %s: list of partial tables", op->label);
        }
    }
    if (rc == PA_OK) {
        pt.t = l->t;
        memset(&l->t, 0, sizeof l->t);
        s->parts[s->n_parts++] = pt;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* Reorder l's table by bucket (kn_agg_partition), the bucket starts and
 * arena bytes going to l->pin; the scratch is sized by the group bound. */
static int partition(ex_op *op, ex_worker *w, agg_local *l, pa_err *err)
{
    size_t sb = kn_agg_partition_scratch(&l->t.t.L, l->t.groups);
    void *scratch = NULL;
    int rc = ex_alloc(op, sb, &scratch, err);
    if (rc == PA_OK)
        rc = kn_agg_partition(&w->kn, &l->t.t, scratch, sb, l->pin + AGG_PIN_START, l->pin + AGG_PIN_ARENA, err);
    if (scratch)
        ex_free(op, scratch, sb);
    return rc;
}

int agg_combine(ex_op *op, ex_worker *w, void *local, pa_err *err)
{
    agg_state *s = op->state;
    agg_local *l = local;
    if (!l || !l->t.mem)
        return PA_OK;
    /* A lone worker's table is most likely the result as it is. */
    bool part = s->n_dist == 0 && w->q && w->q->threads > 1;
    bool ready;
    int rc;
    if (l->ph != AGG_COMBINING) {
        if (part && (rc = partition(op, w, l, err)) != PA_OK)
            return rc;
        l->ph = AGG_COMBINING;
    }
    if ((rc = ex_pending_ready(w, &l->pend, &ready, err)) != PA_OK || !ready) {
        w->blocked = rc == PA_OK;
        return rc;
    }
    l->ph = AGG_IDLE;
    learn_all(s, l);
    return s->n_dist > 0 ? combine_merge(op, w, l, err) : combine_hand_over(op, l, part, err);
}
