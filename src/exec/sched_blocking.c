/*
 * sched_blocking.c - the BLOCKING mode's pipeline runner, kept to measure
 * what overlap buys (DESIGN.md, "Execution modes kept for measurement"):
 * the source is first materialised into a list of chunks (a scan reads its
 * whole table), then each operator of the chain processes the whole list
 * into the next list on W worker threads (operator-at-a-time), then the
 * sink consumes the last list. Lists keep the order of one worker's output;
 * with W workers the outputs are concatenated in worker order.
 */
#include "exec/sched_int.h"

#include <string.h>

typedef struct clist {
    dv_chunk **v;
    size_t n, cap;
} clist;

static int clist_push(clist *l, dv_chunk *c, pa_err *err)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        dv_chunk **v = pa_realloc(l->v, cap * sizeof *v);
        if (!v)
            return pa_error(err, PA_ENOMEM, "out of memory listing chunks");
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = c;
    return PA_OK;
}

/* Drop the chunks left in l (a failed run's, or inputs left behind an
 * operator that finished) in stream order: the kernels that made them may
 * still be queued. They are released on a pool stream that waits for each
 * one's ready event; where that cannot be enqueued (no memory), once every
 * stream of the query drained. */
static void clist_free(ex_sched *s, clist *l)
{
    dv_stream *st = NULL;
    for (size_t i = 0; i < l->n; i++) {
        if (!l->v[i])
            continue;
        if (!st && ex__stream_take(s, &st, NULL) != PA_OK)
            st = NULL;
        if (st && dv_chunk_wait_ready(l->v[i], st, NULL) == PA_OK) {
            dv_chunk_release(l->v[i], st);
            continue;
        }
        pthread_mutex_lock(&s->mu);
        for (int k = 0; k < s->n_streams; k++)
            dv_stream_sync(s->streams[k], NULL);
        pthread_mutex_unlock(&s->mu);
        dv_chunk_destroy(l->v[i]);
    }
    if (st)
        ex__stream_give(s, st);
    pa_free(l->v);
    memset(l, 0, sizeof *l);
}

enum { ST_SOURCE, ST_CHAIN, ST_SINK };

typedef struct stage {
    ex_sched *s;
    ex_pipeline *p;
    int kind;
    ex_op *op;
    clist *in;
    size_t next;            /* next input index (atomic) */
    clist *outs;            /* per worker */
    int stop;               /* the op returned EX_FINISHED (atomic) */
} stage;

typedef struct sworker {
    stage *st;
    int id;
} sworker;

static dv_chunk *take(stage *st)
{
    if (__atomic_load_n(&st->stop, __ATOMIC_ACQUIRE))
        return NULL;
    size_t i = __atomic_fetch_add(&st->next, 1, __ATOMIC_RELAXED);
    if (i >= st->in->n)
        return NULL;
    dv_chunk *c = st->in->v[i];
    st->in->v[i] = NULL;
    return c;
}

/* Keep c, made by w, in out (an empty one is dropped, in w's stream order). */
static int emit(ex_worker *w, clist *out, dv_chunk *c, pa_err *err)
{
    if (!c)
        return PA_OK;
    if (c->length == 0) {
        ex__chunk_done(w, c);
        return PA_OK;
    }
    int rc = clist_push(out, c, err);
    if (rc != PA_OK)
        ex__chunk_done(w, c);
    return rc;
}

static int run_chain_op(stage *st, ex_worker *w, void *local, clist *out, pa_err *err)
{
    ex_query *q = w->q;
    int rc = PA_OK;
    bool finished = false;
    dv_chunk *c;
    while (!finished && !ex_query_failed(q) && (c = take(st))) {
        __atomic_add_fetch(&st->op->rows_in, c->length, __ATOMIC_RELAXED);
        if ((rc = dv_chunk_wait_ready(c, w->stream, err)) != PA_OK) {
            ex__chunk_done(w, c);
            return rc;
        }
        for (int attempt = 0; rc == PA_OK && !ex_query_failed(q);) {
            dv_chunk *o;
            ex_state s;
            if ((rc = ex__call_execute(st->op, w, local, c, &o, &s, err)) != PA_OK)
                break;
            if ((rc = emit(w, out, o, err)) != PA_OK)
                break;
            if (s == EX_HAVE_OUTPUT)
                continue;
            if (s == EX_BLOCKED) {
                ex__blocked(w, attempt++);
                continue;
            }
            if (s == EX_FINISHED) {
                finished = true;
                __atomic_store_n(&st->stop, 1, __ATOMIC_RELEASE);
            }
            break;
        }
        ex__chunk_done(w, c);
        if (rc != PA_OK)
            return rc;
    }
    while (!finished && rc == PA_OK && !ex_query_failed(q)) {
        dv_chunk *o;
        if ((rc = ex__call_flush(st->op, w, local, &o, err)) != PA_OK || !o)
            break;
        rc = emit(w, out, o, err);
    }
    return rc;
}

static void *stage_main(void *arg)
{
    sworker *sw = arg;
    stage *st = sw->st;
    ex_query *q = &st->s->q;
    pa_err err;
    pa_err_init(&err);
    ex_worker w;
    void *local = NULL;
    bool have_local = false;
    static const ex_role roles[] = {EX_ROLE_SOURCE, EX_ROLE_STREAMING, EX_ROLE_SINK};
    int rc = ex__worker_begin(st->s, st->p, sw->id, &w, &err);
    if (rc == PA_OK && (rc = ex__local_init(st->op, roles[st->kind], &w, &local, &err)) == PA_OK)
        have_local = true;
    if (rc == PA_OK && st->kind == ST_SOURCE) {
        dv_chunk *c;
        while (!ex_query_failed(q) && (rc = ex__call_next(st->op, &w, local, &c, &err)) == PA_OK && c)
            if ((rc = emit(&w, &st->outs[sw->id], c, &err)) != PA_OK)
                break;
    } else if (rc == PA_OK && st->kind == ST_CHAIN) {
        rc = run_chain_op(st, &w, local, &st->outs[sw->id], &err);
    } else if (rc == PA_OK) {
        dv_chunk *c;
        while (rc == PA_OK && !ex_query_failed(q) && (c = take(st))) {
            if ((rc = dv_chunk_wait_ready(c, w.stream, &err)) == PA_OK)
                rc = ex__call_sink(st->op, &w, local, c, &err);
            ex__chunk_done(&w, c);
        }
        if (rc == PA_OK && !ex_query_failed(q))
            rc = ex__call_combine(st->op, &w, local, &err);
    }
    if (rc != PA_OK)
        ex__fail(q, &err, rc);
    if (have_local)
        ex__local_free(st->op, local);
    if (w.stream)
        ex__worker_end(st->s, st->p, &w);
    pa_err_close(&err);
    return NULL;
}

/* Run one stage on W threads; the outputs, in worker order, into *out. */
static int run_stage(stage *st, int W, clist *out)
{
    ex_query *q = &st->s->q;
    pa_err err;
    pa_err_init(&err);
    int rc = PA_OK, started = 0;
    pthread_t *tids = pa_calloc((size_t)W, sizeof *tids);
    sworker *sws = pa_calloc((size_t)W, sizeof *sws);
    st->outs = pa_calloc((size_t)W, sizeof *st->outs);
    if (!tids || !sws || !st->outs) {
        rc = pa_error(&err, PA_ENOMEM, "out of memory starting a stage");
        goto done;
    }
    for (; started < W; started++) {
        sws[started] = (sworker){st, started};
        if (pthread_create(&tids[started], NULL, stage_main, &sws[started]) != 0) {
            rc = pa_error(&err, PA_EINTERNAL, "cannot start worker %d of pipeline %d", started, st->p->id);
            break;
        }
    }
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    for (int i = 0; i < W && st->outs; i++) {
        for (size_t k = 0; k < st->outs[i].n; k++) {
            if (rc == PA_OK && !ex_query_failed(q) && (rc = clist_push(out, st->outs[i].v[k], &err)) == PA_OK)
                st->outs[i].v[k] = NULL;
        }
        clist_free(st->s, &st->outs[i]);
    }
done:
    if (rc != PA_OK)
        ex__fail(q, &err, rc);
    pa_free(st->outs);
    st->outs = NULL;
    pa_free(sws);
    pa_free(tids);
    pa_err_close(&err);
    return ex_query_failed(q) ? q->err.code : PA_OK;
}

int ex__run_blocking(ex_sched *s, ex_pipeline *p)
{
    int W = p->source->vt->ordered ? 1 : s->q.threads;
    /* One puller keeps a scan's file order; the scan decodes on its own threads. */
    int W_src = p->source->vt->kind == EX_OP_SCAN ? 1 : W;
    clist cur = {0}, next = {0};
    stage st = {.s = s, .p = p, .kind = ST_SOURCE, .op = p->source};
    int rc = run_stage(&st, W_src, &cur);
    for (int level = 0; rc == PA_OK && level < p->n_chain; level++) {
        st = (stage){.s = s, .p = p, .kind = ST_CHAIN, .op = p->chain[level], .in = &cur};
        rc = run_stage(&st, W, &next);
        clist_free(s, &cur);
        cur = next;
        memset(&next, 0, sizeof next);
    }
    if (rc == PA_OK && p->sink) {
        st = (stage){.s = s, .p = p, .kind = ST_SINK, .op = p->sink, .in = &cur};
        rc = run_stage(&st, W, &next);
    }
    clist_free(s, &cur);
    clist_free(s, &next);
    return rc;
}
