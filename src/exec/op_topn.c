/*
 * op_topn.c - TOPN: ORDER BY ... LIMIT n OFFSET m without sorting the input.
 * Each worker keeps at most about K = n + m candidate rows: input rows are
 * encoded into normalized-key records and, once K candidates are known,
 * filtered against the K-th best (kn_sort_filter) so most rows are dropped
 * at once. When candidates pile up (2K + 4096 of them, or 64 kept input
 * chunks) the worker compacts: sorts them, gathers the best K rows into a
 * chunk of its own, drops its references to the input chunks and re-encodes
 * the K keys (the K-th is the new threshold). combine compacts a last time;
 * finalize sorts the (workers x K) survivors and outputs [m, m + n).
 *
 * The filter's count lands in pinned memory behind an event recorded right
 * after the filter; when the stream has not reached it yet, it is read at
 * the next sink call (or combine), by when the stream has usually passed
 * it, so a worker seldom waits; compaction waits for its gather's string
 * sizes. Either wait sets w->blocked with the phase kept in the worker's
 * state.
 */
#include "exec/op_sort_int.h"

#include <string.h>

/* Compaction triggers: candidates beyond 2K plus this slack, or this many
 * kept input chunks (each may hold few candidates but a whole chunk). */
#define TOPN_SLACK_ROWS 4096
#define TOPN_MAX_SOURCES 64

typedef enum {
    TN_IDLE,                /* run.recs.n records, nothing on its way */
    TN_FILTER,              /* the last chunk's records are being filtered: count */
    TN_GATHER,              /* compacting: sorted, the best rows being gathered */
} tn_phase;

typedef struct topn_local {
    ex__run run;
    bool have_threshold;    /* run.recs.p[K-1] is the K-th best so far */
    tn_phase ph;
    int64_t *count;         /* pinned: rows kept by the filter */
    ex_pending pend;        /* count */
    ex__gather g;           /* compaction's gather */
    dv_device *dev;         /* count's */
    dv_stream *stream;      /* the worker's */
} topn_local;

static int64_t topn_k(const ex__sort *s)
{
    return s->limit > INT64_MAX - s->offset ? INT64_MAX : s->limit + s->offset;
}

static void topn_local_free(ex_op *op, void *local);

static int topn_local_init(ex_op *op, ex_worker *w, void **local, pa_err *err)
{
    if (w->role != EX_ROLE_SINK)
        return PA_OK;
    topn_local *tl = pa_calloc(1, sizeof *tl);
    if (!tl)
        return pa_error(err, PA_ENOMEM, "out of memory in %s: worker state", op->label);
    tl->dev = w->dev;
    tl->stream = w->stream;
    int rc = dv_host_alloc(w->dev, sizeof *tl->count, (void **)&tl->count, err);
    if (rc != PA_OK)
        rc = ex_oom(op, rc, err);
    else
        rc = ex__gather_init(op, w->dev, &tl->g, err);
    if (rc != PA_OK) {
        topn_local_free(op, tl);
        return rc;
    }
    *local = tl;
    return PA_OK;
}

static void topn_local_free(ex_op *op, void *local)
{
    ex__sort *s = op->state;
    topn_local *tl = local;
    ex__recs_free(op, &s->l, &tl->run.recs);
    ex__srcset_clear(&tl->run.src, tl->stream);
    if (tl->count && dv_kind_of(tl->dev) != DV_KIND_CPU)
        dv_host_free_async(tl->stream, tl->count, NULL);   /* a count may still be on its way */
    else if (tl->count)
        dv_host_free(tl->dev, tl->count);
    ex_pending_close(&tl->pend);
    ex__gather_close(&tl->g, tl->stream);
    pa_free(tl);
}

/* Compaction, second half: keep the best K of the sorted candidates, in
 * one chunk of our own. May set w->blocked (TN_GATHER stays). */
static int compact_end(ex_op *op, ex_worker *w, ex__sort *s, topn_local *tl, pa_err *err)
{
    ex__recs *r = &tl->run.recs;
    int64_t k = topn_k(s);
    int64_t keep = r->n < k ? r->n : k;
    dv_chunk *c = NULL;
    int rc;
    if (keep > 0) {
        if ((rc = ex__sort_gather(op, w, &s->l, &tl->run.src, r->p, keep, &tl->g, &c, err)) != PA_OK)
            return rc;
        if (!c)
            return PA_OK;   /* blocked */
    }
    tl->ph = TN_IDLE;
    ex__srcset_clear(&tl->run.src, w->stream);
    r->n = 0;
    if (keep == 0)
        return PA_OK;
    rc = ex__srcset_add(&tl->run.src, c, err);
    dv_chunk_destroy(c);   /* not the last reference: the source set holds it now */
    if (rc == PA_OK)
        rc = kn_sort_encode(&w->kn, &s->l, tl->run.src.cols[0], keep, 0, r->p, err);
    if (rc != PA_OK)
        return rc;
    r->n = keep;
    tl->have_threshold = keep == k;
    return PA_OK;
}

/* TN_FILTER: whether the stream reached the filter's count (its event
 * recorded right after the filter); if so, the kept records join the
 * candidates (TN_IDLE). */
static int take_count(ex_worker *w, topn_local *tl, bool *ready, pa_err *err)
{
    int rc = ex_pending_ready(w, &tl->pend, ready, err);
    if (rc != PA_OK || !*ready)
        return rc;
    if (*tl->count == 0)
        ex__srcset_pop(&tl->run.src, w->stream);   /* nothing of that chunk survived */
    tl->run.recs.n += *tl->count;
    tl->ph = TN_IDLE;
    return PA_OK;
}

/* Bring the worker's candidates up to date: take the last filter's count,
 * then compact when they piled up (always with force, when any). Sets
 * w->blocked when it must wait; called again, it goes on from there. */
static int settle(ex_op *op, ex_worker *w, ex__sort *s, topn_local *tl, bool force, pa_err *err)
{
    ex__recs *r = &tl->run.recs;
    int64_t k = topn_k(s);
    int rc;
    bool ready;
    switch (tl->ph) {
    case TN_FILTER:
        if ((rc = take_count(w, tl, &ready, err)) != PA_OK)
            return rc;
        if (!ready) {
            w->blocked = true;
            return PA_OK;
        }
        /* fall through */
    case TN_IDLE:
        if (force ? r->n == 0 : !(r->n > k && (r->n - k >= k + TOPN_SLACK_ROWS || tl->run.src.n >= TOPN_MAX_SOURCES)))
            return PA_OK;
        if ((rc = ex__recs_sort(op, &w->kn, &s->l, r, &tl->run.src, err)) != PA_OK)
            return rc;
        tl->ph = TN_GATHER;
        /* fall through */
    case TN_GATHER:
        return compact_end(op, w, s, tl, err);
    }
    return PA_OK;
}

static int topn_sink(ex_op *op, ex_worker *w, void *local, dv_chunk *in, pa_err *err)
{
    ex__sort *s = op->state;
    topn_local *tl = local;
    ex__recs *r = &tl->run.recs;
    int64_t k = topn_k(s), len = in->length;
    if (len == 0 || k == 0)
        return PA_OK;
    if (len > (int64_t)UINT32_MAX)
        return pa_error(err, PA_EUNSUPPORTED, "%s: %lld rows in one chunk", op->label, (long long)len);
    int rc = settle(op, w, s, tl, false, err);
    if (rc != PA_OK || w->blocked)
        return rc;
    if ((rc = ex__recs_reserve(op, &w->kn, &s->l, r, r->n + len, err)) != PA_OK)
        return rc;
    uint8_t *at = r->p + (size_t)r->n * s->l.stride;
    if ((rc = kn_sort_encode(&w->kn, &s->l, in->columns, len, (uint32_t)tl->run.src.n, at, err)) != PA_OK ||
        (rc = ex__srcset_add(&tl->run.src, in, err)) != PA_OK)
        return rc;
    if (!tl->have_threshold) {
        r->n += len;
        return PA_OK;
    }
    const uint8_t *thr = r->p + (size_t)(k - 1) * s->l.stride;
    if ((rc = kn_sort_filter(&w->kn, &s->l, at, len, thr, at, tl->count, tl->run.src.cols, tl->run.src.n,
                              err)) != PA_OK)
        return rc;
    tl->ph = TN_FILTER;
    bool ready;
    if ((rc = take_count(w, tl, &ready, err)) == PA_OK && !ready)
        w->wait = NULL;   /* not waited for now: the next settle looks again */
    return rc;
}

static int topn_combine(ex_op *op, ex_worker *w, void *local, pa_err *err)
{
    ex__sort *s = op->state;
    topn_local *tl = local;
    int rc = settle(op, w, s, tl, true, err);
    if (rc == PA_OK && !w->blocked && tl->run.recs.n > 0)
        rc = ex__sort_add_run(s, &tl->run, err);
    return rc;
}

static int topn_finalize(ex_op *op, ex_query *q, pa_err *err)
{
    ex__sort *s = op->state;
    kn_ctx kn = {q->dev, q->fin_stream};
    int rc = ex__sort_concat_runs(op, &kn, s, err);
    if (rc == PA_OK)
        rc = ex__recs_sort(op, &kn, &s->l, &s->out, &s->out_src, err);
    if (rc != PA_OK)
        return rc;
    int64_t n = s->out.n;
    s->out_pos = s->offset < n ? s->offset : n;
    s->out_end = s->limit < n - s->out_pos ? s->out_pos + s->limit : n;
    return PA_OK;
}

static const ex_op_vt topn_vt = {
    .kind = EX_OP_TOPN,
    .local_init = topn_local_init,
    .local_free = topn_local_free,
    .source_open = ex__sort_source_open,
    .source_next = ex__sort_source_next,
    .ordered = true,
    .sink = topn_sink,
    .combine = topn_combine,
    .finalize = topn_finalize,
    .destroy = ex__sort_destroy,
};

int ex_topn(ex_plan *p, ex_op *input, const ex_sort_key *keys, int n_keys, int64_t limit, int64_t offset,
            ex_op **out, pa_err *err)
{
    return ex__sort_build(p, &topn_vt, input, keys, n_keys, limit, offset, out, err);
}
