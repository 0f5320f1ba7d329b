/*
 * run_explain.c - ex_explain: the operator tree (pre-order, indented) with
 * the pipelines each operator belongs to and its estimated rows (the
 * planner's "~N rows" when set, else the builders' guess), and on a device
 * other than cpu where it runs, or which kernel the device lacks; after a run
 * (analyzed) also rows, chunks, busy time and memory per operator, and the
 * query's time, bytes read, copies, syncs and memory peak.
 */
#include "exec/sched_int.h"

#include <string.h>

typedef struct oplist {
    const ex_op **v;
    int *depth;
    int n, cap;
} oplist;

static int collect(oplist *l, const ex_op *op, int depth)
{
    if (!op)
        return PA_OK;
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 32;
        const ex_op **v = pa_realloc(l->v, (size_t)cap * sizeof *v);
        if (v)
            l->v = v;
        int *d = pa_realloc(l->depth, (size_t)cap * sizeof *d);
        if (d)
            l->depth = d;
        if (!v || !d)
            return PA_ENOMEM;
        l->cap = cap;
    }
    l->v[l->n] = op;
    l->depth[l->n++] = depth;
    int rc = PA_OK;
    if (op->n_inputs > 0)
        for (int i = 0; i < op->n_inputs && rc == PA_OK; i++)
            rc = collect(l, op->inputs[i], depth + 1);
    else
        for (int i = 0; i < op->n_child && rc == PA_OK; i++)
            rc = collect(l, op->child[i], depth + 1);
    return rc;
}

/* "p0" / "p0,p2": the pipelines op is part of. */
static void pipes_of(const ex_pipelines *ps, const ex_op *op, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < ps->n; i++) {
        const ex_pipeline *p = &ps->p[i];
        bool in = p->source == op || p->sink == op;
        for (int k = 0; k < p->n_chain && !in; k++)
            in = p->chain[k] == op;
        if (in && len + 8 < cap)
            len += (size_t)snprintf(buf + len, cap - len, "%sp%d", len ? "," : "", i);
    }
}

static void fmt_rows(int64_t v, char *buf, size_t cap)
{
    if (v < 0)
        snprintf(buf, cap, "?");
    else
        snprintf(buf, cap, "%lld", (long long)v);
}

/* "~N rows" for a planner's estimate (rounded; large ones in e-notation). */
static void fmt_estimate(double v, char *buf, size_t cap)
{
    if (v < 1e15)
        snprintf(buf, cap, "~%.0f rows", v);
    else
        snprintf(buf, cap, "~%.3g rows", v);
}

int ex_explain(const ex_plan *p, const ex_op *root, const ex_result *analyzed, dv_device *dev, FILE *f)
{
    if (!p || !root || !f)
        return PA_EINVAL;
    oplist l = {0};
    ex_pipelines ps = {0};
    int rc = collect(&l, root, analyzed ? 1 : 0);
    if (rc == PA_OK)
        rc = ex__pipelines_build((ex_op *)root, &ps, NULL);
    if (rc != PA_OK)
        goto done;
    if (dev)
        fprintf(f, "device: %s (%s)\n", dv_describe(dev), dv_selection(dev));
    else if (analyzed)
        fprintf(f, "device: %s\n", analyzed->stats.device);
    if (analyzed) {
        const ex_query_stats *st = &analyzed->stats;
        char mem[32];
        fprintf(f, "mode: %s, %d pipelines, %.3f ms, %lld rows, device memory peak %s\n", ex_mode_name(st->mode),
                st->n_pipelines, (double)st->ns_total * 1e-6, (long long)analyzed->n_rows,
                pa_format_size(st->mem_peak, mem, sizeof mem));
        fprintf(f, "read: %lld bytes in %lld requests; copies h2d %lld d2h %lld bytes; host syncs %lld\n",
                (long long)st->counters.v[PA_CTR_BYTES_READ], (long long)st->counters.v[PA_CTR_READ_REQUESTS],
                (long long)st->counters.v[PA_CTR_BYTES_H2D], (long long)st->counters.v[PA_CTR_BYTES_D2H],
                (long long)st->counters.v[PA_CTR_HOST_SYNCS]);
        if (st->counters.v[PA_CTR_PAGES_DEVICE] || st->counters.v[PA_CTR_PAGES_HOST])
            fprintf(f, "data pages decoded: %lld on the device (%lld of them decompressed on the host first), "
                    "%lld on the host\n", (long long)st->counters.v[PA_CTR_PAGES_DEVICE],
                    (long long)st->counters.v[PA_CTR_PAGES_HOST_DECOMPRESSED],
                    (long long)st->counters.v[PA_CTR_PAGES_HOST]);
        if (st->n_ops > 0)
            fprintf(f, "%s  [pipeline %d]  rows %lld  chunks %lld  %.3f ms\n", st->ops[0].label,
                    st->ops[0].pipeline, (long long)st->ops[0].rows_in, (long long)analyzed->n_chunks,
                    (double)st->ops[0].ns * 1e-6);
    } else {
        fprintf(f, "%d pipelines\n", ps.n);
    }
    for (int i = 0; i < l.n; i++) {
        const ex_op *op = l.v[i];
        char pipes[64], est[48];
        pipes_of(&ps, op, pipes, sizeof pipes);
        if (op->has_est) {
            fmt_estimate(op->est, est, sizeof est);
        } else {
            char guess[32];
            fmt_rows(op->est_rows, guess, sizeof guess);
            snprintf(est, sizeof est, "est %s", guess);
        }
        fprintf(f, "%*s%s  [%s]  %s", 2 * l.depth[i], "", op->label, pipes, est);
        const ex_op_stats *os = analyzed && i + 1 < analyzed->stats.n_ops ? &analyzed->stats.ops[i + 1] : NULL;
        if (os) {
            char mem[32];
            fprintf(f, "  rows %lld -> %lld  chunks %lld  %.3f ms  mem %s", (long long)os->rows_in,
                    (long long)os->rows_out, (long long)os->chunks_out, (double)os->ns * 1e-6,
                    pa_format_size(os->mem_peak, mem, sizeof mem));
            if (os->detail[0])
                fprintf(f, "  %s", os->detail);
        }
        /* Where it runs, on a device other than the host's cpu. */
        const char *lacks = dev ? ex__op_lacks(op, dev) : NULL;
        if (lacks)
            fprintf(f, "  NOT on %s: kernel kn_%s missing", dv_name(dev), lacks);
        else if (dev && dv_kind_of(dev) != DV_KIND_CPU)
            fprintf(f, op->vt->kind == EX_OP_SCAN ? "  to %s, pages decoded there where its kernels take them"
                                                  : "  on %s", dv_name(dev));
        fputc('\n', f);
    }
done:
    ex__pipelines_free(&ps);
    pa_free(l.v);
    pa_free(l.depth);
    return rc == PA_OK ? (ferror(f) ? PA_EIO : PA_OK) : rc;
}
