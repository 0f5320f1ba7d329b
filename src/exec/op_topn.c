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
 */
#include "exec/op_sort_int.h"

#include <string.h>

/* Compaction triggers: candidates beyond 2K plus this slack, or this many
 * kept input chunks (each may hold few candidates but a whole chunk). */
#define TOPN_SLACK_ROWS 4096
#define TOPN_MAX_SOURCES 64

typedef struct topn_local {
    ex__run run;
    bool have_threshold;    /* run.recs.p[K-1] is the K-th best so far */
    int64_t *count;         /* pinned: rows kept by the filter */
    dv_device *dev;         /* count's */
} topn_local;

static int64_t topn_k(const ex__sort *s)
{
    return s->limit > INT64_MAX - s->offset ? INT64_MAX : s->limit + s->offset;
}

static int topn_local_init(ex_op *op, ex_worker *w, void **local, pa_err *err)
{
    if (w->role != EX_ROLE_SINK)
        return PA_OK;
    topn_local *tl = pa_calloc(1, sizeof *tl);
    if (!tl)
        return pa_error(err, PA_ENOMEM, "out of memory in %s: worker state", op->label);
    int rc = dv_host_alloc(w->dev, sizeof *tl->count, (void **)&tl->count, err);
    if (rc != PA_OK) {
        pa_free(tl);
        return rc;
    }
    tl->dev = w->dev;
    *local = tl;
    return PA_OK;
}

static void topn_local_free(ex_op *op, void *local)
{
    ex__sort *s = op->state;
    topn_local *tl = local;
    ex__recs_free(op, &s->l, &tl->run.recs);
    ex__srcset_clear(&tl->run.src);
    if (tl->count)
        dv_host_free(tl->dev, tl->count);
    pa_free(tl);
}

/* Keep only the best K candidates, in one chunk of our own. */
static int compact(ex_op *op, ex_worker *w, ex__sort *s, topn_local *tl, pa_err *err)
{
    ex__recs *r = &tl->run.recs;
    int64_t k = topn_k(s);
    int rc = ex__recs_sort(op, &w->kn, &s->l, r, &tl->run.src, err);
    if (rc != PA_OK)
        return rc;
    int64_t keep = r->n < k ? r->n : k;
    dv_chunk *c = NULL;
    if (keep > 0 &&
        (rc = ex__sort_gather(op, w, &w->kn, &s->l, &tl->run.src, r->p, keep, tl->count, &c, err)) != PA_OK)
        return rc;
    ex__srcset_clear(&tl->run.src);
    r->n = 0;
    if (keep == 0)
        return PA_OK;
    rc = ex__srcset_add(&tl->run.src, c, err);
    dv_chunk_destroy(c);   /* the source set holds it now */
    if (rc == PA_OK)
        rc = kn_sort_encode(&w->kn, &s->l, tl->run.src.cols[0], keep, 0, r->p, err);
    if (rc != PA_OK)
        return rc;
    r->n = keep;
    tl->have_threshold = keep == k;
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
    int rc = ex__recs_reserve(op, &w->kn, &s->l, r, r->n + len, err);
    if (rc != PA_OK)
        return rc;
    uint8_t *at = r->p + (size_t)r->n * s->l.stride;
    if ((rc = kn_sort_encode(&w->kn, &s->l, in->columns, len, (uint32_t)tl->run.src.n, at, err)) != PA_OK ||
        (rc = ex__srcset_add(&tl->run.src, in, err)) != PA_OK)
        return rc;
    int64_t kept = len;
    if (tl->have_threshold) {
        const uint8_t *thr = r->p + (size_t)(k - 1) * s->l.stride;
        if ((rc = kn_sort_filter(&w->kn, &s->l, at, len, thr, at, tl->count, tl->run.src.cols,
                                  tl->run.src.n, err)) != PA_OK ||
            (rc = ex__sort_wait(&w->kn, err)) != PA_OK)
            return rc;
        kept = *tl->count;
    }
    if (kept == 0)
        ex__srcset_pop(&tl->run.src);   /* nothing of this chunk survived */
    r->n += kept;
    if (r->n > k && (r->n - k >= k + TOPN_SLACK_ROWS || tl->run.src.n >= TOPN_MAX_SOURCES))
        return compact(op, w, s, tl, err);
    return PA_OK;
}

static int topn_combine(ex_op *op, ex_worker *w, void *local, pa_err *err)
{
    ex__sort *s = op->state;
    topn_local *tl = local;
    if (tl->run.recs.n == 0)
        return PA_OK;
    int rc = compact(op, w, s, tl, err);
    if (rc == PA_OK && tl->run.recs.n > 0)
        rc = ex__sort_add_run(s, &tl->run, err);
    return rc;
}

static int topn_finalize(ex_op *op, ex_query *q, pa_err *err)
{
    ex__sort *s = op->state;
    kn_ctx kn;
    int rc = ex__sort_ctx_open(q, &kn, err);
    if (rc == PA_OK)
        rc = ex__sort_concat_runs(op, &kn, s, err);
    if (rc == PA_OK)
        rc = ex__recs_sort(op, &kn, &s->l, &s->out, &s->out_src, err);
    ex__sort_ctx_close(&kn);
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
