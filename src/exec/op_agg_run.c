/*
 * op_agg_run.c - the hooks of AGGREGATE and DISTINCT: per-worker tables fed
 * batch by batch (sink), merged under the op's lock (combine), COUNT
 * (DISTINCT) counted (finalize), and result chunks handed to any worker
 * (source). See op_agg_int.h for the design.
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
    if (w->role == EX_ROLE_SOURCE) {
        *local = l;
        return PA_OK;
    }
    size_t sb = kn_agg_update_scratch(&s->L, AGG_BATCH);
    for (int j = 0; j < s->n_dist; j++) {
        size_t d = kn_agg_update_scratch(&s->Ld[j], AGG_BATCH);
        sb = d > sb ? d : sb;
    }
    int rc = ex_alloc(op, sb, &l->scratch, err);
    if (rc == PA_OK) {
        l->scratch_bytes = sb;
        rc = ex_alloc(op, AGG_BATCH * sizeof(uint32_t), (void **)&l->gids, err);
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
    agg_state *s = op->state;
    agg_tab_free(op, &l->t);
    agg_tab_free(op, &l->part);
    for (int j = 0; j < s->n_dist; j++)
        agg_tab_free(op, &l->d[j]);
    if (l->scratch)
        ex_free(op, l->scratch, l->scratch_bytes);
    if (l->gids)
        ex_free(op, l->gids, AGG_BATCH * sizeof(uint32_t));
    pa_free(l);
}

/* View of rows [start, start+n) of c; start is a multiple of 8. */
static pa_column slice(const pa_column *c, int64_t start, int64_t n)
{
    pa_column v = *c;
    v.length = n;
    if (c->validity)
        v.validity = c->validity + start / 8;
    if (c->type.id == PA_TYPE_VARCHAR)
        v.offsets = c->offsets + start;
    else if (c->data)
        v.data = (uint8_t *)c->data + start * pa_type_bytes(c->type);
    return v;
}

/* Fold rows [start, start+n) of in into the worker's tables. */
static int sink_batch(ex_op *op, ex_worker *w, agg_local *l, const dv_chunk *in, int64_t start, int64_t n,
                      pa_err *err)
{
    agg_state *s = op->state;
    pa_column keys[KN_AGG_MAX_KEYS], args[KN_AGG_MAX_SLOTS];
    for (int k = 0; k < s->n_keys; k++)
        keys[k] = slice(&in->columns[s->key_cols[k]], start, n);
    for (int i = 0; i < s->L.n_slots; i++) {
        if (s->slot_col[i] >= 0)
            args[i] = slice(&in->columns[s->slot_col[i]], start, n);
        else
            memset(&args[i], 0, sizeof args[i]);
    }
    int64_t bytes = 0;
    int rc;
    if ((rc = kn_agg_input_bytes(&w->kn, &l->t.t, keys, args, n, &bytes, err)) != PA_OK ||
        (rc = agg_tab_reserve(op, &w->kn, &l->t, &s->L, n, bytes, err)) != PA_OK ||
        (rc = kn_agg_update(&w->kn, &l->t.t, keys, args, n, l->scratch, l->scratch_bytes, l->gids, err)) != PA_OK)
        return rc;
    for (int j = 0; j < s->n_dist; j++) {
        pa_column pair[2];
        memset(&pair[0], 0, sizeof pair[0]);
        pair[0].type = (pa_type){PA_TYPE_INTEGER, 0, 0};
        pair[0].length = n;
        pair[0].data = l->gids;
        pair[1] = slice(&in->columns[s->dist_col[j]], start, n);
        if (!l->d[j].mem && (rc = agg_tab_reserve(op, &w->kn, &l->d[j], &s->Ld[j], n, 0, err)) != PA_OK)
            return rc;
        if ((rc = kn_agg_input_bytes(&w->kn, &l->d[j].t, pair, NULL, n, &bytes, err)) != PA_OK ||
            (rc = agg_tab_reserve(op, &w->kn, &l->d[j], &s->Ld[j], n, bytes, err)) != PA_OK ||
            (rc = kn_agg_update(&w->kn, &l->d[j].t, pair, NULL, n, l->scratch, l->scratch_bytes, NULL, err)) !=
                PA_OK)
            return rc;
    }
    return PA_OK;
}

/* The groups this worker's table will end with if new groups keep coming
 * at the rate seen so far, over its share of the estimated input; 0 when
 * unknown or too early to tell. */
static int64_t projected_groups(ex_op *op, ex_worker *w, const agg_local *l)
{
    int64_t est = op->child[0] ? op->child[0]->est_rows : -1;
    int W = w->q && w->q->threads > 0 ? w->q->threads : 1;
    if (est <= 0 || !l->t.mem || l->rows_in < AGG_PROJECT_ROWS)
        return 0;
    int64_t mine = est / W, g = kn_agg_groups(&l->t.t);
    if (mine <= l->rows_in)
        return 0;
    return (int64_t)((__int128)g * mine / l->rows_in);
}

int agg_sink(ex_op *op, ex_worker *w, void *local, dv_chunk *in, pa_err *err)
{
    agg_state *s = op->state;
    agg_local *l = local;
    int64_t n = in->length;
    for (int64_t start = 0; start < n;) {
        int64_t want = n - start < AGG_BATCH ? n - start : AGG_BATCH;
        /* Keep a small table small: a batch takes what free capacity there
         * is (at least 1024 rows, else the table doubles first). */
        int64_t free_g = l->t.mem ? l->t.t.cap_groups - kn_agg_groups(&l->t.t) : 0;
        int64_t least = want < AGG_MIN_GROUPS / 2 ? want : AGG_MIN_GROUPS / 2;
        int rc;
        if (free_g < least) {
            if ((rc = agg_tab_reserve_hint(op, &w->kn, &l->t, &s->L, least, 0, projected_groups(op, w, l), err)) !=
                PA_OK)
                return rc;
            free_g = l->t.t.cap_groups - kn_agg_groups(&l->t.t);
        }
        int64_t m = want <= free_g ? want : free_g & ~(int64_t)7;
        if ((rc = sink_batch(op, w, l, in, start, m, err)) != PA_OK)
            return rc;
        start += m;
        l->rows_in += m;
    }
    return PA_OK;
}

/* With COUNT(DISTINCT): merge the worker's tables into the global ones
 * under the lock (the pair tables need the global group ids). */
static int combine_merge(ex_op *op, ex_worker *w, agg_local *l, pa_err *err)
{
    agg_state *s = op->state;
    int rc = PA_OK;
    uint32_t *map = NULL;
    int64_t ng = kn_agg_groups(&l->t.t);
    pthread_mutex_lock(&s->mu);
    if (!s->g.mem) {
        /* The first partial becomes the global table as it is. */
        s->g = l->t;
        memset(&l->t, 0, sizeof l->t);
        for (int j = 0; j < s->n_dist; j++) {
            s->gd[j] = l->d[j];
            memset(&l->d[j], 0, sizeof l->d[j]);
        }
        goto out;
    }
    if ((rc = agg_tab_reserve(op, &w->kn, &s->g, &s->L, ng, kn_agg_arena_used(&l->t.t), err)) != PA_OK ||
        (rc = ex_alloc(op, (size_t)ng * sizeof *map + 4, (void **)&map, err)) != PA_OK ||
        (rc = kn_agg_merge(&w->kn, &s->g.t, &l->t.t, NULL, map, err)) != PA_OK)
        goto out;
    for (int j = 0; j < s->n_dist; j++) {
        if (!l->d[j].mem)
            continue;
        kn_agg_table *src = &l->d[j].t;
        if ((rc = agg_tab_reserve(op, &w->kn, &s->gd[j], &s->Ld[j], kn_agg_groups(src), kn_agg_arena_used(src),
                                  err)) != PA_OK ||
            (rc = kn_agg_merge(&w->kn, &s->gd[j].t, src, map, NULL, err)) != PA_OK)
            goto out;
    }
out:
    pthread_mutex_unlock(&s->mu);
    if (map)
        ex_free(op, map, (size_t)ng * sizeof *map + 4);
    return rc;
}

/* Reorder t's groups by bucket into pt (kn_agg_partition). */
static int partition(ex_op *op, kn_ctx *kn, agg_tab *t, agg_part *pt, pa_err *err)
{
    size_t sb = kn_agg_partition_scratch(&t->t.L, kn_agg_groups(&t->t));
    void *scratch = NULL;
    int rc = ex_alloc(op, sb, &scratch, err);
    if (rc == PA_OK)
        rc = kn_agg_partition(kn, &t->t, scratch, sb, pt->start, pt->arena, err);
    if (scratch)
        ex_free(op, scratch, sb);
    pt->partitioned = rc == PA_OK;
    return rc;
}

/* Without: sort the table's groups by bucket here, in parallel with the
 * other workers, and hand it over; the next pipeline merges (see
 * op_agg_int.h). */
static int combine_hand_over(ex_op *op, ex_worker *w, agg_local *l, pa_err *err)
{
    agg_state *s = op->state;
    agg_part pt;
    memset(&pt, 0, sizeof pt);
    int rc = PA_OK;
    /* A lone worker's table is most likely the result as it is (finalize
     * partitions it if another pipeline feeds the op too). */
    if (!w->q || w->q->threads > 1)
        rc = partition(op, &w->kn, &l->t, &pt, err);
    if (rc != PA_OK)
        return rc;
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

int agg_combine(ex_op *op, ex_worker *w, void *local, pa_err *err)
{
    agg_state *s = op->state;
    agg_local *l = local;
    if (!l || !l->t.mem)
        return PA_OK;
    return s->n_dist > 0 ? combine_merge(op, w, l, err) : combine_hand_over(op, w, l, err);
}

void agg_free_parts(ex_op *op, agg_state *s)
{
    for (int i = 0; i < s->n_parts; i++)
        agg_tab_free(op, &s->parts[i].t);
    pa_free(s->parts);
    s->parts = NULL;
    s->n_parts = s->cap_parts = 0;
}

/* Cut the buckets into ranges of about AGG_PART_GROUPS groups (summed over
 * the partials: an upper bound of the range's final groups). */
static void plan_ranges(agg_state *s)
{
    int n = 0;
    int64_t acc = 0;
    s->range_lo[0] = 0;
    for (int b = 0; b < AGG_BUCKETS; b++) {
        for (int i = 0; i < s->n_parts; i++)
            acc += s->parts[i].start[b + 1] - s->parts[i].start[b];
        if (acc >= AGG_PART_GROUPS || b == AGG_BUCKETS - 1) {
            s->range_lo[++n] = b + 1;
            acc = 0;
        }
    }
    s->n_ranges = n;
}

int agg_finalize(ex_op *op, ex_query *q, pa_err *err)
{
    agg_state *s = op->state;
    /* Coordinator-side work: on the cpu device kernels need no stream. */
    kn_ctx kn = {q->dev, NULL};
    int rc;
    if (s->n_parts == 1) {
        /* One partial: it is the result as it is. */
        s->g = s->parts[0].t;
        memset(&s->parts[0].t, 0, sizeof s->parts[0].t);
        agg_free_parts(op, s);
    } else if (s->n_parts > 1) {
        for (int i = 0; i < s->n_parts; i++)
            if (!s->parts[i].partitioned && (rc = partition(op, &kn, &s->parts[i].t, &s->parts[i], err)) != PA_OK)
                return rc;
        plan_ranges(s);
        s->Lm = s->L;
        s->Lm.dense_ok = false;   /* merged tables take no kn_agg_update */
        return PA_OK;
    }
    if (!s->g.mem && (rc = agg_tab_reserve(op, &kn, &s->g, &s->L, 0, 0, err)) != PA_OK)
        return rc;
    for (int j = 0; j < s->n_dist; j++) {
        int slot = 0;
        while (s->slot_col[slot] != -2 - j)
            slot++;
        if (s->gd[j].mem && (rc = kn_agg_count_distinct(&kn, &s->g.t, slot, &s->gd[j].t, err)) != PA_OK)
            return rc;
        agg_tab_free(op, &s->gd[j]);
    }
    s->n_out = kn_agg_groups(&s->g.t);
    s->next = 0;
    return PA_OK;
}

int agg_source_open(ex_op *op, ex_query *q, pa_err *err) { return PA_OK; }

/* Allocate the buffers of result column c for count rows (bytes of strings). */
static int out_column(ex_op *op, dv_chunk *ch, pa_column *c, pa_type t, int64_t count, int64_t bytes, pa_err *err)
{
    int rc;
    c->type = t;
    c->length = count;
    if ((rc = ex_chunk_alloc(op, ch, (size_t)(count + 7) / 8 + 1, (void **)&c->validity, err)) != PA_OK)
        return rc;
    if (t.id == PA_TYPE_VARCHAR) {
        if ((rc = ex_chunk_alloc(op, ch, (size_t)(count + 1) * 4, (void **)&c->offsets, err)) != PA_OK)
            return rc;
        return ex_chunk_alloc(op, ch, (size_t)bytes + 1, &c->data, err);
    }
    return ex_chunk_alloc(op, ch, (size_t)count * pa_type_bytes(t) + 1, &c->data, err);
}

/* A validity bitmap with every bit set is dropped (NULL = all valid). */
static void drop_full_validity(pa_column *c)
{
    int64_t n = c->length;
    for (int64_t i = 0; i < n / 8; i++)
        if (c->validity[i] != 0xff)
            return;
    for (int64_t i = n & ~(int64_t)7; i < n; i++)
        if (!pa_column_valid(c, i))
            return;
    c->validity = NULL;
}

/* Emit groups [first, first + count) of t as a result chunk. */
static int emit_groups(ex_op *op, ex_worker *w, const kn_agg_table *t, int64_t first, int64_t count,
                       dv_chunk **out, pa_err *err)
{
    agg_state *s = op->state;
    dv_chunk *ch = NULL;
    int rc = ex_chunk_new(op, w, op->n_cols, &ch, err);
    if (rc != PA_OK)
        return rc;
    ch->length = count;
    for (int k = 0; k < s->n_keys && rc == PA_OK; k++) {
        pa_column *c = &ch->columns[k];
        int64_t bytes = 0;
        if (op->types[k].id == PA_TYPE_VARCHAR)
            rc = kn_agg_emit_bytes(&w->kn, t, k, NULL, first, count, &bytes, err);
        if (rc == PA_OK && (rc = out_column(op, ch, c, op->types[k], count, bytes, err)) == PA_OK &&
            (rc = kn_agg_emit_key(&w->kn, t, k, first, count, c, err)) == PA_OK)
            drop_full_validity(c);
    }
    for (int i = 0; i < s->n_aggs && rc == PA_OK; i++) {
        pa_column *c = &ch->columns[s->n_keys + i];
        const kn_agg_fin *f = &s->fin[i];
        int64_t bytes = 0;
        if (f->out_type.id == PA_TYPE_VARCHAR)
            rc = kn_agg_emit_bytes(&w->kn, t, -1, f, first, count, &bytes, err);
        if (rc == PA_OK && (rc = out_column(op, ch, c, f->out_type, count, bytes, err)) == PA_OK &&
            (rc = kn_agg_emit(&w->kn, t, f, first, count, c, err)) == PA_OK)
            drop_full_validity(c);
    }
    if (rc != PA_OK) {
        dv_chunk_destroy(ch);
        return rc;
    }
    *out = ch;
    return PA_OK;
}

/* Make a an empty table of the layout L for cap groups and arena bytes,
 * reusing its block when it is large enough. */
static int tab_fresh(ex_op *op, kn_ctx *kn, agg_tab *a, const kn_agg_layout *L, int64_t cap, int64_t arena,
                     pa_err *err)
{
    if (a->mem && cap >= 1 && kn_agg_table_bytes(L, cap, arena) <= a->bytes)
        return kn_agg_table_init(kn, &a->t, L, a->mem, cap, arena, a->sizes, err);
    agg_tab_free(op, a);
    return agg_tab_reserve(op, kn, a, L, cap, arena, err);
}

/* Merge range r of every partial into l->part. */
static int merge_range(ex_op *op, ex_worker *w, agg_local *l, int r, pa_err *err)
{
    agg_state *s = op->state;
    int lo = s->range_lo[r], hi = s->range_lo[r + 1];
    int64_t cap = 0, arena = 0;
    for (int i = 0; i < s->n_parts; i++) {
        cap += s->parts[i].start[hi] - s->parts[i].start[lo];
        for (int b = lo; b < hi; b++)
            arena += s->parts[i].arena[b];
    }
    int rc = PA_OK;
    l->pos = l->end = 0;
    if (cap > 0 && (rc = tab_fresh(op, &w->kn, &l->part, &s->Lm, cap, arena, err)) == PA_OK) {
        for (int i = 0; i < s->n_parts && rc == PA_OK; i++) {
            const agg_part *pt = &s->parts[i];
            rc = kn_agg_merge_range(&w->kn, &l->part.t, &pt->t.t, pt->start[lo], pt->start[hi] - pt->start[lo],
                                    err);
        }
        l->end = rc == PA_OK ? kn_agg_groups(&l->part.t) : 0;
    }
    if (rc == PA_OK && __atomic_add_fetch(&s->ranges_merged, 1, __ATOMIC_ACQ_REL) == s->n_ranges)
        agg_free_parts(op, s);   /* every range is merged: nobody reads them again */
    return rc;
}

int agg_source_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    agg_state *s = op->state;
    agg_local *l = local;
    *out = NULL;
    int64_t per = w->q && w->q->chunk_rows > 0 ? w->q->chunk_rows : 65536;
    if (s->n_ranges > 0) {
        while (l->pos >= l->end) {
            int r = __atomic_fetch_add(&s->next_range, 1, __ATOMIC_RELAXED);
            if (r >= s->n_ranges) {
                agg_tab_free(op, &l->part);
                return PA_OK;
            }
            int rc = merge_range(op, w, l, r, err);
            if (rc != PA_OK)
                return rc;
        }
        int64_t count = l->end - l->pos < per ? l->end - l->pos : per;
        int rc = emit_groups(op, w, &l->part.t, l->pos, count, out, err);
        l->pos += count;
        return rc;
    }
    int64_t first = __atomic_fetch_add(&s->next, per, __ATOMIC_RELAXED);
    if (first >= s->n_out)
        return PA_OK;
    int64_t count = s->n_out - first < per ? s->n_out - first : per;
    return emit_groups(op, w, &s->g.t, first, count, out, err);
}
