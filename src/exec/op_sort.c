/*
 * op_sort.c - SORT: ORDER BY over any number of keys (op_sort_int.h has the
 * design). Sink: each worker encodes the normalized keys of every input
 * chunk into its record buffer, keeping a reference to the chunk instead of
 * copying its rows; combine radix-sorts the worker's records into a run.
 * finalize only re-tags the runs. Source (ordered): chunks of the sorted
 * rows, merged from the runs chunk by chunk and gathered from the kept
 * input chunks.
 */
#include "exec/op_sort_int.h"

#include <string.h>

typedef struct sort_local {
    ex__run run;
    dv_stream *stream;      /* the worker's, which reads the run's chunks */
} sort_local;

static int sort_local_init(ex_op *op, ex_worker *w, void **local, pa_err *err)
{
    if (w->role != EX_ROLE_SINK)
        return PA_OK;
    sort_local *sl = pa_calloc(1, sizeof *sl);
    if (!sl)
        return pa_error(err, PA_ENOMEM, "out of memory in %s: worker state", op->label);
    sl->stream = w->stream;
    *local = sl;
    return PA_OK;
}

static void sort_local_free(ex_op *op, void *local)
{
    ex__sort *s = op->state;
    sort_local *sl = local;
    ex__recs_free(op, &s->l, &sl->run.recs);
    ex__srcset_clear(&sl->run.src, sl->stream);
    pa_free(sl);
}

static int sort_sink(ex_op *op, ex_worker *w, void *local, dv_chunk *in, pa_err *err)
{
    ex__sort *s = op->state;
    sort_local *sl = local;
    if (in->length == 0)
        return PA_OK;
    if ((uint64_t)sl->run.src.n >= UINT32_MAX || in->length > (int64_t)UINT32_MAX)
        return pa_error(err, PA_EUNSUPPORTED, "%s: too many input chunks or rows in a chunk", op->label);
    ex__recs *r = &sl->run.recs;
    int rc = ex__recs_reserve(op, &w->kn, &s->l, r, r->n + in->length, err);
    if (rc == PA_OK)
        rc = kn_sort_encode(&w->kn, &s->l, in->columns, in->length, (uint32_t)sl->run.src.n,
                            r->p + (size_t)r->n * s->l.stride, err);
    if (rc == PA_OK)
        rc = ex__srcset_add(&sl->run.src, in, err);
    if (rc != PA_OK)
        return rc;
    r->n += in->length;
    return PA_OK;
}

static int sort_combine(ex_op *op, ex_worker *w, void *local, pa_err *err)
{
    ex__sort *s = op->state;
    sort_local *sl = local;
    if (sl->run.recs.n == 0)
        return PA_OK;
    int rc = ex__recs_sort(op, &w->kn, &s->l, &sl->run.recs, &sl->run.src, err);
    if (rc == PA_OK)
        rc = ex__sort_add_run(s, &sl->run, err);
    return rc;
}

/* The runs' cursors for the merge: zeros in device memory, on kn's stream. */
static int merge_cursors(ex_op *op, const kn_ctx *kn, ex__sort *s, pa_err *err)
{
    size_t n = (size_t)s->n_runs * sizeof *s->run_pos;
    int rc = ex_alloc(op, n, (void **)&s->run_pos, err);
    if (rc != PA_OK)
        return rc;
    if (dv_host_visible(kn->dev)) {
        memset(s->run_pos, 0, n);
        return PA_OK;
    }
    return dv_fill_u32_async(kn->stream, s->run_pos, 0, n / sizeof(uint32_t), err);
}

/* Re-tag every run so all index one source set (s->out_src), then set up
 * the output: one run is output as it is, several are merged chunk by
 * chunk while the output is read (ex__sort_source_next). */
static int prepare_runs(ex_op *op, const kn_ctx *kn, ex__sort *s, pa_err *err)
{
    int rc;
    int64_t total = 0;
    for (int i = 0; i < s->n_runs; i++) {
        ex__run *r = &s->runs[i];
        if ((rc = kn_sort_copy(kn, &s->l, r->recs.p, r->recs.n, (uint32_t)s->out_src.n, r->recs.p, err)) != PA_OK ||
            (rc = ex__srcset_move(&s->out_src, &r->src, err)) != PA_OK)
            return rc;
        total += r->recs.n;
    }
    if (s->n_runs == 1) {
        s->out = s->runs[0].recs;
        memset(&s->runs[0], 0, sizeof(ex__run));
        s->n_runs = 0;
    } else if (s->n_runs > 1) {
        s->run_p = pa_calloc((size_t)s->n_runs, sizeof *s->run_p);
        s->run_n = pa_calloc((size_t)s->n_runs, sizeof *s->run_n);
        if (!s->run_p || !s->run_n)
            return pa_error(err, PA_ENOMEM, "out of memory merging sorted runs");
        for (int i = 0; i < s->n_runs; i++) {
            s->run_p[i] = s->runs[i].recs.p;
            s->run_n[i] = s->runs[i].recs.n;
        }
        if ((rc = merge_cursors(op, kn, s, err)) != PA_OK)
            return rc;
    }
    s->out_pos = 0;
    s->out_end = total;
    return PA_OK;
}

static int sort_finalize(ex_op *op, ex_query *q, pa_err *err)
{
    ex__sort *s = op->state;
    kn_ctx kn = {q->dev, q->fin_stream};
    int rc = prepare_runs(op, &kn, s, err);
    if (rc != PA_OK)
        s->out_end = 0;
    return rc;
}

static const ex_op_vt sort_vt = {
    .kind = EX_OP_SORT,
    .local_init = sort_local_init,
    .local_free = sort_local_free,
    .source_open = ex__sort_source_open,
    .source_next = ex__sort_source_next,
    .ordered = true,
    .sink = sort_sink,
    .combine = sort_combine,
    .finalize = sort_finalize,
    .destroy = ex__sort_destroy,
};

int ex_sort(ex_plan *p, ex_op *input, const ex_sort_key *keys, int n_keys, ex_op **out, pa_err *err)
{
    return ex__sort_build(p, &sort_vt, input, keys, n_keys, INT64_MAX, 0, out, err);
}
