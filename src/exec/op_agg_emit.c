/*
 * op_agg_emit.c - the output side of AGGREGATE and DISTINCT: finalize
 * (partials adopted, merged or cut into bucket ranges; COUNT(DISTINCT)
 * counted) on the finalize stream, and the source handing result chunks to
 * any worker, merging a range of buckets first in the partitioned case.
 * Group counts and string bytes are read behind events (op_agg_int.h).
 */
#include "exec/op_agg_int.h"

#include <string.h>

void agg_free_parts(ex_op *op, dv_stream *stream, agg_state *s)
{
    for (int i = 0; i < s->n_parts; i++)
        agg_tab_free(op, stream, &s->parts[i].t);
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

/* Unpartitioned partials (one thread, several pipelines feeding the op):
 * the first becomes g, the others are merged into it. */
static int merge_parts(ex_op *op, kn_ctx *kn, agg_state *s, pa_err *err)
{
    int rc = PA_OK;
    s->g = s->parts[0].t;
    memset(&s->parts[0].t, 0, sizeof s->parts[0].t);
    for (int i = 1; i < s->n_parts && rc == PA_OK; i++) {
        agg_tab *p = &s->parts[i].t;
        if ((rc = agg_tab_reserve(op, kn, &s->g, &s->L, p->groups, p->arena, err)) == PA_OK &&
            (rc = kn_agg_merge(kn, &s->g.t, &p->t, NULL, NULL, err)) == PA_OK) {
            s->g.groups += p->groups;   /* a bound: some groups were there already */
            s->g.arena += p->arena;
            s->g_merged = true;
        }
    }
    agg_free_parts(op, kn->stream, s);
    return rc;
}

int agg_finalize(ex_op *op, ex_query *q, pa_err *err)
{
    agg_state *s = op->state;
    kn_ctx kn = {q->dev, q->fin_stream};
    int rc;
    if (s->n_parts > 1 && s->parts[0].partitioned) {
        plan_ranges(s);
        s->Lm = s->L;
        s->Lm.dense_ok = false;   /* merged tables take no kn_agg_update */
        return PA_OK;
    }
    if (s->n_parts > 0 && (rc = merge_parts(op, &kn, s, err)) != PA_OK)
        return rc;
    if (!s->g.mem && (rc = agg_tab_reserve(op, &kn, &s->g, &s->L, 0, 0, err)) != PA_OK)
        return rc;
    for (int j = 0; j < s->n_dist; j++) {
        int slot = 0;
        while (s->slot_col[slot] != -2 - j)
            slot++;
        if (s->gd[j].mem && (rc = kn_agg_count_distinct(&kn, &s->g.t, slot, &s->gd[j].t, err)) != PA_OK)
            return rc;
        agg_tab_free(op, q->fin_stream, &s->gd[j]);
    }
    /* After merges only the source's workers can read the count. */
    s->n_out = s->g_merged ? -1 : s->g.groups;
    /* The groups are counted (at most): a better estimate of the rows to come
     * than the planner's for what reads them while they come (an EXCHANGE
     * above, and the aggregate after it sizing its table). */
    if (s->n_out >= 0 && (op->est_rows < 0 || s->n_out < op->est_rows))
        __atomic_store_n(&op->est_rows, s->n_out, __ATOMIC_RELAXED);
    s->next = 0;
    return PA_OK;
}

int agg_source_open(ex_op *op, ex_query *q, pa_err *err) { return PA_OK; }

static size_t up16(size_t n) { return (n + 15) & ~(size_t)15; }

/* Bytes of result column c's buffers for count rows (bytes of strings):
 * validity, offsets (VARCHAR), data; each rounded to 16. */
static size_t column_bytes(pa_type t, int64_t count, int64_t bytes)
{
    size_t n = up16((size_t)(count + 7) / 8 + 1);
    if (pa_type_is_varlen(t.id))
        return n + up16((size_t)(count + 1) * 4) + up16((size_t)bytes + 1);
    return n + up16((size_t)count * pa_type_bytes(t) + 1);
}

/* Lay result column c out for count rows at *at (column_bytes of it),
 * advancing *at. */
static void carve_column(pa_column *c, pa_type t, int64_t count, int64_t bytes, uint8_t **at)
{
    c->type = t;
    c->length = count;
    c->validity = *at;
    *at += up16((size_t)(count + 7) / 8 + 1);
    if (pa_type_is_varlen(t.id)) {
        c->offsets = (int32_t *)(void *)*at;
        *at += up16((size_t)(count + 1) * 4);
        c->data = *at;
        *at += up16((size_t)bytes + 1);
        pa_column_set_bytes(c, bytes);   /* the emit kernels' exact count, offsets from 0 */
    } else {
        c->data = *at;
        *at += up16((size_t)count * pa_type_bytes(t) + 1);
    }
}

/* A validity bitmap with every bit set is dropped (NULL = all valid). Only
 * on the cpu device, where the kernel already ran and the host may read
 * it; elsewhere the bitmap stays. */
static void drop_full_validity(dv_device *d, pa_column *c)
{
    if (dv_kind_of(d) != DV_KIND_CPU)
        return;
    int64_t n = c->length;
    for (int64_t i = 0; i < n / 8; i++)
        if (c->validity[i] != 0xff)
            return;
    for (int64_t i = n & ~(int64_t)7; i < n; i++)
        if (!pa_column_valid(c, i))
            return;
    c->validity = NULL;
}

/* Emit groups [first, first + count) of t as a result chunk (one buffer
 * for all its columns); bytes[c] is the string bytes of VARCHAR result
 * column c. */
static int emit_groups(ex_op *op, ex_worker *w, const kn_agg_table *t, int64_t first, int64_t count,
                       const int64_t *bytes, dv_chunk **out, pa_err *err)
{
    agg_state *s = op->state;
    dv_chunk *ch = NULL;
    size_t total = 0;
    for (int c = 0; c < op->n_cols; c++)
        total += column_bytes(op->types[c], count, pa_type_is_varlen(op->types[c].id) ? bytes[c] : 0);
    uint8_t *at = NULL;
    int rc = ex_chunk_new(op, w, op->n_cols, &ch, err);
    if (rc == PA_OK)
        rc = ex_chunk_alloc(op, ch, total, (void **)&at, err);
    if (rc == PA_OK)
        ch->length = count;
    for (int c = 0; c < op->n_cols && rc == PA_OK; c++) {
        pa_column *col = &ch->columns[c];
        carve_column(col, op->types[c], count, pa_type_is_varlen(op->types[c].id) ? bytes[c] : 0, &at);
        if (c < s->n_keys)
            rc = kn_agg_emit_key(&w->kn, t, c, first, count, col, err);
        else
            rc = kn_agg_emit(&w->kn, t, &s->fin[c - s->n_keys], first, count, col, err);
        if (rc == PA_OK)
            drop_full_validity(w->dev, col);
    }
    if (rc != PA_OK) {
        dv_chunk_release(ch, w->stream);   /* after the kernels already enqueued on it */
        return rc;
    }
    *out = ch;
    return PA_OK;
}

/* Finish the emit l->et/efirst/ecount once its string bytes are read. */
static int emit_finish(ex_op *op, ex_worker *w, agg_local *l, dv_chunk **out, pa_err *err)
{
    if (l->ph == AGG_EMIT_BYTES) {
        bool ready;
        int rc = ex_pending_ready(w, &l->pend, &ready, err);
        if (rc != PA_OK || !ready) {
            w->blocked = rc == PA_OK;
            return rc;
        }
        l->ph = AGG_IDLE;
    }
    return emit_groups(op, w, l->et, l->efirst, l->ecount, l->pin, out, err);
}

/* Emit groups [first, first + count) of t, counting the bytes of VARCHAR
 * result columns first (into l->pin; the hook then waits for them). */
static int emit_start(ex_op *op, ex_worker *w, agg_local *l, const kn_agg_table *t, int64_t first, int64_t count,
                      dv_chunk **out, pa_err *err)
{
    agg_state *s = op->state;
    l->et = t;
    l->efirst = first;
    l->ecount = count;
    if (s->str_out) {
        int rc = PA_OK;
        for (int c = 0; c < op->n_cols && rc == PA_OK; c++)
            if (pa_type_is_varlen(op->types[c].id))
                rc = kn_agg_emit_bytes(&w->kn, t, c < s->n_keys ? c : -1, c < s->n_keys ? NULL : &s->fin[c - s->n_keys],
                                       first, count, &l->pin[c], err);
        if (rc != PA_OK)
            return rc;
        l->ph = AGG_EMIT_BYTES;
    }
    return emit_finish(op, w, l, out, err);
}

/* Merge range r of every partial into l->part (exact capacity from the
 * bucket starts); its group count is read once the merge ran. */
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
    l->pos = l->end = 0;
    if (cap == 0)
        return PA_OK;
    int rc = agg_tab_fresh(op, &w->kn, &l->part, &s->Lm, cap, arena, err);
    for (int i = 0; i < s->n_parts && rc == PA_OK; i++) {
        const agg_part *pt = &s->parts[i];
        rc = kn_agg_merge_range(&w->kn, &l->part.t, &pt->t.t, pt->start[lo], pt->start[hi] - pt->start[lo], err);
    }
    if (rc == PA_OK)
        l->ph = AGG_MERGING;
    return rc;
}

/* A range's merge ran: the last one frees the partials, which no kernel
 * reads any more. */
static void range_done(ex_op *op, ex_worker *w, agg_state *s)
{
    if (__atomic_add_fetch(&s->ranges_merged, 1, __ATOMIC_ACQ_REL) == s->n_ranges)
        agg_free_parts(op, w->stream, s);
}

/* The partitioned case: the next groups of the range being emitted,
 * claiming and merging ranges as needed. */
static int next_from_ranges(ex_op *op, ex_worker *w, agg_local *l, int64_t per, dv_chunk **out, pa_err *err)
{
    agg_state *s = op->state;
    int rc;
    for (;;) {
        if (l->ph == AGG_MERGING) {
            bool ready;
            if ((rc = ex_pending_ready(w, &l->pend, &ready, err)) != PA_OK || !ready) {
                w->blocked = rc == PA_OK;
                return rc;
            }
            l->ph = AGG_IDLE;
            agg_tab_learn(&l->part, 0);
            l->end = l->part.groups;
            range_done(op, w, s);
        }
        if (l->pos < l->end)
            break;
        int r = __atomic_fetch_add(&s->next_range, 1, __ATOMIC_RELAXED);
        if (r >= s->n_ranges) {
            agg_tab_free(op, w->stream, &l->part);
            return PA_OK;
        }
        if ((rc = merge_range(op, w, l, r, err)) != PA_OK)
            return rc;
        if (l->ph != AGG_MERGING)
            range_done(op, w, s);   /* an empty range */
    }
    int64_t count = l->end - l->pos < per ? l->end - l->pos : per, first = l->pos;
    l->pos += count;
    return emit_start(op, w, l, &l->part.t, first, count, out, err);
}

int agg_source_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    agg_state *s = op->state;
    agg_local *l = local;
    *out = NULL;
    if (l->ph == AGG_EMIT_BYTES)
        return emit_finish(op, w, l, out, err);
    int64_t per = w->q && w->q->chunk_rows > 0 ? w->q->chunk_rows : 65536;
    if (s->n_ranges > 0)
        return next_from_ranges(op, w, l, per, out, err);
    int64_t n_out = __atomic_load_n(&s->n_out, __ATOMIC_ACQUIRE);
    if (n_out < 0) {
        /* g took merges: its count, published before finalize's end,
         * which this worker's stream follows. */
        bool ready;
        int rc = ex_pending_ready(w, &l->pend, &ready, err);
        if (rc != PA_OK || !ready) {
            w->blocked = rc == PA_OK;
            return rc;
        }
        n_out = kn_agg_groups(&s->g.t);
        __atomic_store_n(&s->n_out, n_out, __ATOMIC_RELEASE);
    }
    int64_t first = __atomic_fetch_add(&s->next, per, __ATOMIC_RELAXED);
    if (first >= n_out)
        return PA_OK;
    int64_t count = n_out - first < per ? n_out - first : per;
    return emit_start(op, w, l, &s->g.t, first, count, out, err);
}
