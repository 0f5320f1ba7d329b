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
    if (w->role != EX_ROLE_SINK)
        return PA_OK;
    agg_local *l = pa_calloc(1, sizeof *l);
    if (!l)
        return pa_error(err, PA_ENOMEM, "out of memory in %s: worker state", op->label);
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
            if ((rc = agg_tab_reserve(op, &w->kn, &l->t, &s->L, least, 0, err)) != PA_OK)
                return rc;
            free_g = l->t.t.cap_groups - kn_agg_groups(&l->t.t);
        }
        int64_t m = want <= free_g ? want : free_g & ~(int64_t)7;
        if ((rc = sink_batch(op, w, l, in, start, m, err)) != PA_OK)
            return rc;
        start += m;
    }
    return PA_OK;
}

int agg_combine(ex_op *op, ex_worker *w, void *local, pa_err *err)
{
    agg_state *s = op->state;
    agg_local *l = local;
    if (!l || !l->t.mem)
        return PA_OK;
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

int agg_finalize(ex_op *op, ex_query *q, pa_err *err)
{
    agg_state *s = op->state;
    /* Coordinator-side work: on the cpu device kernels need no stream. */
    kn_ctx kn = {q->dev, NULL};
    int rc;
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

int agg_source_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    agg_state *s = op->state;
    *out = NULL;
    int64_t per = w->q && w->q->chunk_rows > 0 ? w->q->chunk_rows : 65536;
    int64_t first = __atomic_fetch_add(&s->next, per, __ATOMIC_RELAXED);
    if (first >= s->n_out)
        return PA_OK;
    int64_t count = s->n_out - first < per ? s->n_out - first : per;
    dv_chunk *ch = NULL;
    int rc = ex_chunk_new(op, w, op->n_cols, &ch, err);
    if (rc != PA_OK)
        return rc;
    ch->length = count;
    const kn_agg_table *t = &s->g.t;
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
