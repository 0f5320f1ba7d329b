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
