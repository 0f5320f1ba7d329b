/*
 * op_result.c - RESULT: the sink ex_run puts on top of the plan. It keeps a
 * reference to every chunk it is given, tagged with its pipeline and arrival
 * number; finalize orders them by pipeline, then arrival, so a UNION ALL of
 * ordered inputs comes out input after input, and an ordered source (one
 * worker) in its order. On the cpu device the chunks are host memory and are
 * handed to the ex_result as they are (no copy).
 */
#include "exec/sched_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct rentry {
    dv_chunk *c;
    int pipeline;
    int64_t seq;
} rentry;

typedef struct rstate {
    pthread_mutex_t mu;
    rentry *v;
    size_t n, cap;
    int64_t rows;
} rstate;

static int result_sink(ex_op *op, ex_worker *w, void *local, dv_chunk *in, pa_err *err)
{
    rstate *s = op->state;
    int rc = PA_OK;
    pthread_mutex_lock(&s->mu);
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        rentry *v = pa_realloc(s->v, cap * sizeof *v);
        if (!v) {
            rc = pa_error(err, PA_ENOMEM, "out of memory in RESULT: listing %zu chunks", cap);
            goto out;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n] = (rentry){dv_chunk_retain(in), w->pipeline, (int64_t)s->n};
    s->n++;
    s->rows += in->length;
out:
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static int cmp_entry(const void *a, const void *b)
{
    const rentry *x = a, *y = b;
    if (x->pipeline != y->pipeline)
        return x->pipeline < y->pipeline ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int result_finalize(ex_op *op, ex_query *q, pa_err *err)
{
    rstate *s = op->state;
    if (s->n > 1)
        qsort(s->v, s->n, sizeof *s->v, cmp_entry);
    return PA_OK;
}

static void result_destroy(ex_op *op)
{
    rstate *s = op->state;
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        dv_chunk_destroy(s->v[i].c);
    pa_free(s->v);
    pthread_mutex_destroy(&s->mu);
    pa_free(s);
    op->state = NULL;
}

static const ex_op_vt result_vt = {
    .kind = EX_OP_RESULT,
    .sink = result_sink,
    .finalize = result_finalize,
    .destroy = result_destroy,
};

int ex__result_new(ex_plan *p, ex_op *root, ex_op **out, pa_err *err)
{
    ex_op *op;
    int rc = ex_op_new(p, &result_vt, root->n_cols, &op, err);
    if (rc != PA_OK)
        return rc;
    for (int i = 0; i < root->n_cols; i++) {
        op->names[i] = root->names[i];
        op->types[i] = root->types[i];
    }
    rstate *s = pa_calloc(1, sizeof *s);
    if (!s)
        return pa_error(err, PA_ENOMEM, "out of memory creating RESULT");
    pthread_mutex_init(&s->mu, NULL);
    op->state = s;
    op->child[0] = root;
    op->n_child = 1;
    op->est_rows = root->est_rows;
    *out = op;
    return PA_OK;
}

int ex__result_take(ex_op *op, dv_chunk ***chunks, int *n_chunks, int64_t *n_rows, pa_err *err)
{
    rstate *s = op->state;
    dv_chunk **v = pa_malloc((s->n ? s->n : 1) * sizeof *v);
    *chunks = v;
    *n_chunks = 0;
    *n_rows = 0;
    if (!v)   /* the chunks stay with the op and are freed by its destroy */
        return pa_error(err, PA_ENOMEM, "out of memory listing the result's %zu chunks", s->n);
    for (size_t i = 0; i < s->n; i++)
        v[i] = s->v[i].c;
    *n_chunks = (int)s->n;
    *n_rows = s->rows;
    s->n = 0;
    return PA_OK;
}

/* ------------------------------------------------------------- download
 *
 * A device the host cannot read: every kept chunk gets a host twin whose
 * buffers are pinned memory it owns. Phase 1 copies fixed-width values,
 * validity, VARCHAR offsets, and the bytes of VARCHAR columns whose byte
 * count the host knows (pa_column_bytes); after one sync the offsets tell
 * where the other columns' bytes start and end, and only when there are
 * such columns does phase 2 copy those bytes (offsets rebased to 0 on the
 * host), with a second sync.
 */

/* Column j of host twin h for device column d: phase 1's copies. */
int ex__download_fixed(dv_stream *st, dv_chunk *h, const pa_column *d, pa_column *o, pa_err *err)
{
    int rc;
    int64_t n = d->length;
    *o = (pa_column){.type = d->type, .length = n};
    if (d->validity) {
        size_t vb = (size_t)(n + 7) / 8;
        if ((rc = dv_chunk_alloc_host(h, vb ? vb : 1, (void **)&o->validity, err)) != PA_OK ||
            (rc = dv_copy_async(st, o->validity, d->validity, vb, DV_COPY_D2H, err)) != PA_OK)
            return rc;
    }
    if (pa_type_is_varlen(d->type.id)) {
        size_t ob = (size_t)(n + 1) * sizeof(int32_t);
        int64_t known;
        if ((rc = dv_chunk_alloc_host(h, ob, (void **)&o->offsets, err)) != PA_OK ||
            (rc = dv_copy_async(st, o->offsets, d->offsets, ob, DV_COPY_D2H, err)) != PA_OK ||
            !pa_column_bytes(d, &known))
            return rc;
        /* The bytes are data[0, known): no need to wait for the offsets. */
        if ((rc = dv_chunk_alloc_host(h, known ? (size_t)known : 1, &o->data, err)) == PA_OK && known)
            rc = dv_copy_async(st, o->data, d->data, (size_t)known, DV_COPY_D2H, err);
        return rc;
    }
    size_t vb = (size_t)n * (size_t)pa_type_bytes(d->type);
    if ((rc = dv_chunk_alloc_host(h, vb ? vb : 1, &o->data, err)) != PA_OK)
        return rc;
    return dv_copy_async(st, o->data, d->data, vb, DV_COPY_D2H, err);
}

/* Phase 2 for a VARCHAR column whose bytes phase 1 did not copy: its bytes,
 * offsets rebased on the host. */
int ex__download_bytes(dv_stream *st, dv_chunk *h, const pa_column *d, pa_column *o, pa_err *err)
{
    int32_t first = o->offsets[0], last = o->offsets[o->length];
    if (last < first)
        return pa_error(err, PA_EINTERNAL, "result column offsets run backwards (%d .. %d)", first, last);
    size_t nb = (size_t)(last - first);
    int rc = dv_chunk_alloc_host(h, nb ? nb : 1, &o->data, err);
    if (rc == PA_OK && nb)
        rc = dv_copy_async(st, o->data, (const uint8_t *)d->data + first, nb, DV_COPY_D2H, err);
    for (int64_t i = 0; first && i <= o->length; i++)
        o->offsets[i] -= first;
    return rc;
}

int ex__result_download(ex_op *op, ex_sched *s, pa_err *err)
{
    rstate *r = op->state;
    if (dv_host_visible(s->q.dev) || r->n == 0)
        return PA_OK;
    dv_chunk **host = pa_calloc(r->n, sizeof *host);
    dv_stream *st = NULL;
    int rc = host ? ex__stream_take(s, &st, err) : pa_error(err, PA_ENOMEM, "out of memory downloading the result");
    for (int i = 0; rc == PA_OK && i < s->ps.n; i++)
        if (s->ps.p[i].done)
            rc = dv_stream_wait_event(st, s->ps.p[i].done, err);
    for (size_t i = 0; rc == PA_OK && i < r->n; i++) {
        dv_chunk *d = r->v[i].c;
        if ((rc = dv_chunk_create(s->q.dev, d->n_columns, &host[i], err)) != PA_OK)
            break;
        host[i]->length = d->length;
        for (int j = 0; rc == PA_OK && j < d->n_columns; j++)
            rc = ex__download_fixed(st, host[i], &d->columns[j], &host[i]->columns[j], err);
    }
    if (rc == PA_OK)
        rc = dv_stream_sync(st, err);
    s->download_syncs = 1;
    bool phase2 = false;
    for (size_t i = 0; rc == PA_OK && i < r->n; i++)
        for (int j = 0; rc == PA_OK && j < host[i]->n_columns; j++)
            if (pa_type_is_varlen(host[i]->columns[j].type.id) && !host[i]->columns[j].data) {
                rc = ex__download_bytes(st, host[i], &r->v[i].c->columns[j], &host[i]->columns[j], err);
                phase2 = true;
            }
    if (rc == PA_OK && phase2) {
        rc = dv_stream_sync(st, err);
        s->download_syncs = 2;
    }
    for (size_t i = 0; host && i < r->n; i++) {   /* keep the twins, or drop them on failure */
        if (rc == PA_OK) {
            dv_chunk_release(r->v[i].c, st);
            r->v[i].c = host[i];
        } else {
            dv_chunk_destroy(host[i]);
        }
    }
    if (st)
        ex__stream_give(s, st);
    pa_free(host);
    return rc;
}
