/*
 * run.c - ex_run: resolve the options, put RESULT on top, cut pipelines,
 * run them, and hand back the rows (host-visible chunks) with per-query
 * statistics; the result's CSV writer.
 */
#include "exec/sched_int.h"

#include <string.h>

/* Default target rows per chunk. cpu: 2^17 rows keep an 8-byte column at
 * 1 MiB (about an L2 cache) and match the ~122880-row row groups DuckDB
 * writes; cuda: millions of rows keep a GPU busy per kernel. */
#define EX_CPU_CHUNK_ROWS (1 << 17)
#define EX_GPU_CHUNK_ROWS (1 << 22)
#define EX_QUEUE_CHUNKS 4
#define EX_GPU_WORKERS 4

static int resolve(ex_sched *s, const ex_run_options *opt)
{
    ex_query *q = &s->q;
    q->opt = *opt;
    q->dev = opt->dev;
    pa_threadpool *tp = dv_cpu_threads(opt->dev);
    q->threads = opt->threads > 0 ? opt->threads : tp ? pa_threadpool_size(tp) : EX_GPU_WORKERS;
    if (q->threads < 1)
        q->threads = 1;
    q->chunk_rows = opt->chunk_rows > 0 ? opt->chunk_rows
                    : dv_kind_of(opt->dev) == DV_KIND_CPU ? EX_CPU_CHUNK_ROWS : EX_GPU_CHUNK_ROWS;
    q->opt.threads = q->threads;
    q->opt.chunk_rows = q->chunk_rows;
    if (q->opt.queue_chunks <= 0)
        q->opt.queue_chunks = EX_QUEUE_CHUNKS;
    if ((unsigned)q->opt.mode > EX_MODE_BLOCKING)
        return pa_error(&q->err, PA_EINVAL, "bad execution mode %d", (int)opt->mode);
    return PA_OK;
}

/* Pre-order walk of the tree under op: count, or fill stats when ops != NULL. */
static int walk(ex_op *op, int depth, ex_op_stats *ops, int n)
{
    if (!op)
        return n;
    if (ops) {
        ex_op_stats *st = &ops[n];
        st->label = pa_strdup(op->label);
        st->depth = depth;
        st->pipeline = op->pipeline;
        st->rows_in = op->rows_in;
        st->rows_out = op->rows_out;
        st->chunks_out = op->chunks_out;
        st->ns = op->ns;
        st->mem_peak = op->mem_peak;
        ex__scan_detail(op, st->detail, sizeof st->detail);
        if (!st->detail[0])
            ex__exchange_detail(op, st->detail, sizeof st->detail);
    }
    n++;
    if (op->n_inputs > 0) {
        for (int i = 0; i < op->n_inputs; i++)
            n = walk(op->inputs[i], depth + 1, ops, n);
    } else {
        for (int i = 0; i < op->n_child; i++)
            n = walk(op->child[i], depth + 1, ops, n);
    }
    return n;
}

static int make_result(ex_sched *s, ex_op *res_op, ex_op *root, ex_result **out, pa_err *err)
{
    ex_result *r = pa_calloc(1, sizeof *r);
    if (!r)
        return pa_error(err, PA_ENOMEM, "out of memory for the result");
    r->n_columns = root->n_cols;
    r->names = pa_calloc((size_t)(root->n_cols ? root->n_cols : 1), sizeof *r->names);
    r->types = pa_calloc((size_t)(root->n_cols ? root->n_cols : 1), sizeof *r->types);
    int n_ops = walk(res_op, 0, NULL, 0);
    r->stats.ops = pa_calloc((size_t)n_ops, sizeof *r->stats.ops);
    if (!r->names || !r->types || !r->stats.ops)
        goto oom;
    for (int i = 0; i < root->n_cols; i++) {
        if (!(r->names[i] = pa_strdup(root->names[i] ? root->names[i] : "")))
            goto oom;
        r->types[i] = root->types[i];
    }
    r->stats.n_ops = walk(res_op, 0, r->stats.ops, 0);
    for (int i = 0; i < r->stats.n_ops; i++)
        if (!r->stats.ops[i].label)
            goto oom;
    r->stats.n_pipelines = s->ps.n;
    r->stats.mode = s->q.opt.mode;
    r->stats.download_syncs = s->download_syncs;
    snprintf(r->stats.device, sizeof r->stats.device, "%s", dv_describe(s->q.dev));
    r->on_device = s->q.opt.keep_on_device && !dv_host_visible(s->q.dev);
    int rc = ex__result_take(res_op, &r->chunks, &r->n_chunks, &r->n_rows, err);
    if (rc != PA_OK) {
        ex_result_destroy(r);
        return rc;
    }
    *out = r;
    return PA_OK;
oom:
    ex_result_destroy(r);
    return pa_error(err, PA_ENOMEM, "out of memory for the result");
}

int ex_run(ex_plan *p, ex_op *root, const ex_run_options *opt, ex_result **out, pa_err *err)
{
    if (out)
        *out = NULL;
    if (!p || !root || root->plan != p || !opt || !opt->dev || !out)
        return pa_error(err, PA_EINVAL, "ex_run: a plan, its root operator, options with a device and an output are required");
    if (p->ran)
        return pa_error(err, PA_EINVAL, "ex_run: a plan runs at most once");
    ex_sched *s = pa_calloc(1, sizeof *s);
    if (!s)
        return pa_error(err, PA_ENOMEM, "out of memory starting a query");
    pa_err_init(&s->q.err);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->q.plan = p;
    p->q = &s->q;
    ex_op *res_op = NULL;
    ex_result *r = NULL;
    ex__xdriver *xd = NULL;
    bool rounds_over = false;   /* the exchanges' rounds (if any) ended on every rank */
    pa_counters before, after;
    uint64_t t0 = pa_now_ns();
    pa_counters_snapshot(&before);
    dv_memory_reset_peak(opt->dev);
    int rc;
    PA_TRY(rc = resolve(s, opt));
    PA_TRY(rc = ex__result_new(p, root, &res_op, &s->q.err));
    PA_TRY(rc = ex__pipelines_build(res_op, &s->ps, &s->q.err));
    for (int i = 0; i < s->ps.n; i++) {   /* an op's first pipeline; every op can run on the device */
        ex_pipeline *pl = &s->ps.p[i];
        for (int k = -1; k <= pl->n_chain; k++) {
            ex_op *op = k < 0 ? pl->source : k == pl->n_chain ? pl->sink : pl->chain[k];
            if (op && op->pipeline < 0)
                op->pipeline = i;
            const char *lacks = op ? ex__op_lacks(op, opt->dev) : NULL;
            if (lacks) {
                rc = pa_error(&s->q.err, PA_EUNSUPPORTED, "%s cannot run on %s: kernel kn_%s is not implemented "
                              "there (nothing runs elsewhere instead)", op->label, dv_name(opt->dev), lacks);
                goto fail;
            }
        }
    }
    if (opt->progress)   /* every scanned file's rows, known from the footers */
        for (int i = 0; i < s->ps.n; i++) {
            int64_t rows = ex__scan_file_rows(s->ps.p[i].source);
            if (rows > 0)
                atomic_fetch_add(&opt->progress->rows_total, rows);
        }
    PA_TRY(rc = ex__xdriver_start(s, &xd, &s->q.err));
    rc = ex__sched_run(s);
    ex__xdriver_finish(xd);   /* the rounds end on every rank together (an error here is sent first) */
    rounds_over = true;
    rc = s->q.err.code;
    if (rc != PA_OK)
        goto fail;
    if (!opt->keep_on_device)
        PA_TRY(rc = ex__result_download(res_op, s, &s->q.err));
    PA_TRY(rc = ex__streams_drain(s, &s->q.err));
    PA_TRY(rc = make_result(s, res_op, root, &r, &s->q.err));
    pa_counters_snapshot(&after);
    pa_counters_diff(&after, &before, &r->stats.counters);
    pa_mempool_stats ms;
    dv_memory_stats(opt->dev, &ms, NULL);
    r->stats.mem_peak = ms.peak;
fail:
    if (!rounds_over && rc != PA_OK) {   /* failed before the rounds began: the others learn it in one */
        __atomic_store_n(&s->q.failed, 1, __ATOMIC_RELEASE);
        pa_err e;
        pa_err_init(&e);
        if (ex__xdriver_start(s, &xd, &e) == PA_OK)
            ex__xdriver_finish(xd);
        pa_err_close(&e);
    }
    p->ran = true;             /* also after a failure: op state is gone */
    if (s->streams)            /* queued work still reads operator state: wait for it */
        ex__streams_drain(s, NULL);   /* (and free the list, also one a failure left empty) */
    ex__plan_destroy_ops(p);   /* scans closed, operator state freed */
    if (r)
        r->stats.ns_total = pa_now_ns() - t0;
    p->q = NULL;
    ex__pipelines_free(&s->ps);
    pa_free(s->opened);
    if (rc != PA_OK)
        pa_err_propagate(err, &s->q.err);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    pa_err_close(&s->q.err);
    pa_free(s);
    *out = r;
    return rc;
}

void ex_result_destroy(ex_result *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n_chunks; i++)
        dv_chunk_destroy(r->chunks[i]);
    pa_free(r->chunks);
    for (int i = 0; r->names && i < r->n_columns; i++)
        pa_free((void *)r->names[i]);
    pa_free(r->names);
    pa_free(r->types);
    for (int i = 0; r->stats.ops && i < r->stats.n_ops; i++)
        pa_free((void *)r->stats.ops[i].label);
    pa_free(r->stats.ops);
    pa_free(r);
}

int ex_result_write_csv(const ex_result *r, FILE *f, char sep, bool header)
{
    long total = 0;
    char small[256];
    char *buf = small;
    size_t cap = sizeof small;
    if (header) {
        for (int i = 0; i < r->n_columns; i++) {
            if (i && fputc(sep, f) == EOF)
                goto fail;
            size_t len = strlen(r->names[i]);
            if (fwrite(r->names[i], 1, len, f) != len)
                goto fail;
            total += (long)len + (i > 0);
        }
        if (fputc('\n', f) == EOF)
            goto fail;
        total++;
    }
    for (int c = 0; c < r->n_chunks; c++) {
        const dv_chunk *ch = r->chunks[c];
        for (int64_t row = 0; row < ch->length; row++) {
            for (int i = 0; i < r->n_columns && i < ch->n_columns; i++) {
                if (i && fputc(sep, f) == EOF)
                    goto fail;
                size_t len = 0;
                if (pa_column_valid(&ch->columns[i], row)) {
                    len = pa_format_value(&ch->columns[i], row, PA_FMT_ANSWER, buf, cap);
                    if (len >= cap) {   /* a long string: grow and format again */
                        char *nb = pa_malloc(len + 1);
                        if (!nb)
                            goto fail;
                        if (buf != small)
                            pa_free(buf);
                        buf = nb;
                        cap = len + 1;
                        len = pa_format_value(&ch->columns[i], row, PA_FMT_ANSWER, buf, cap);
                    }
                    if (fwrite(buf, 1, len, f) != len)
                        goto fail;
                }
                total += (long)len + (i > 0);
            }
            if (fputc('\n', f) == EOF)
                goto fail;
            total++;
        }
    }
    if (buf != small)
        pa_free(buf);
    return total > 0x7fffffffL ? 0x7fffffff : (int)total;
fail:
    if (buf != small)
        pa_free(buf);
    return -1;
}
