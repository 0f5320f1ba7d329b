/*
 * sched_worker.c - what every worker thread shares, whatever the mode: its
 * stream and kernel context, the timed calls into operator hooks (rows,
 * chunks and busy time per operator; PA_ENOMEM named after the operator and
 * its role), failure reporting, and the stream order between workers.
 *
 * Stream order: the query keeps a pool of streams. A worker takes one, makes
 * it wait for the `done` events of the pipelines it depends on, enqueues all
 * its kernels there, and at its end records `wdone` on it and gives it back.
 * Sealing an ended pipeline takes a pool stream, makes it wait for every
 * `wdone` (and, before a finalize, for the other feeders' `done`), runs the
 * sink's finalize on it (q->fin_stream) and records `done`. Chunks from a
 * source are made ready on the worker's stream; inputs are released on it.
 * So no host sync orders anything; the only ones are a parked worker's and
 * the drain at the query's end. On the cpu device kernels run on the calling
 * thread and these events cost a few queue operations per pipeline.
 */
#include "exec/sched_int.h"

#include <sched.h>
#include <time.h>

bool ex__query_cancel(ex_query *q)
{
    __atomic_store_n(&q->canceled, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&q->failed, 1, __ATOMIC_RELEASE);
    return true;
}

void ex__fail(ex_query *q, const pa_err *err, int rc)
{
    ex_sched *s = (ex_sched *)q;
    pthread_mutex_lock(&s->mu);
    if (__atomic_load_n(&q->canceled, __ATOMIC_ACQUIRE))
        ;   /* fallout of stopping early: the query reports PA_ECANCELED */
    else if (err && err->code != PA_OK)
        pa_err_propagate(&q->err, err);
    else
        pa_error(&q->err, rc != PA_OK ? rc : PA_EINTERNAL, "query failed (%s)", pa_status_message(rc));
    __atomic_store_n(&q->failed, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* The cpu device runs kernels on the calling thread: nothing to order. */
static bool ordered(const ex_sched *s) { return dv_kind_of(s->q.dev) != DV_KIND_CPU; }

int ex__stream_take(ex_sched *s, dv_stream **out, pa_err *err)
{
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->n_streams; i++)
        if (!s->stream_busy[i]) {
            s->stream_busy[i] = true;
            *out = s->streams[i];
            pthread_mutex_unlock(&s->mu);
            return PA_OK;
        }
    int rc = PA_OK;
    if (s->n_streams == s->cap_streams) {
        int cap = s->cap_streams ? 2 * s->cap_streams : 8;
        dv_stream **v = pa_realloc(s->streams, (size_t)cap * sizeof *v);
        if (v)
            s->streams = v;
        bool *b = v ? pa_realloc(s->stream_busy, (size_t)cap * sizeof *b) : NULL;
        if (b) {
            s->stream_busy = b;
            s->cap_streams = cap;
        } else {
            rc = pa_error(err, PA_ENOMEM, "out of memory listing the query's streams");
        }
    }
    if (rc == PA_OK && (rc = dv_stream_create(s->q.dev, out, err)) == PA_OK) {
        s->streams[s->n_streams] = *out;
        s->stream_busy[s->n_streams++] = true;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

void ex__stream_give(ex_sched *s, dv_stream *st)
{
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->n_streams; i++)
        if (s->streams[i] == st)
            s->stream_busy[i] = false;
    pthread_mutex_unlock(&s->mu);
}

int ex__streams_drain(ex_sched *s, pa_err *err)
{
    int rc = PA_OK, n = ordered(s) ? s->n_streams : 0;
    dv_event **ev = n ? pa_calloc((size_t)n, sizeof *ev) : NULL;
    if (n && !ev)
        rc = pa_error(err, PA_ENOMEM, "out of memory ending the query");
    /* One host sync: the first stream waits for all the others. */
    for (int i = 0; i < n && rc == PA_OK; i++)
        if ((rc = dv_event_create(s->q.dev, &ev[i], err)) == PA_OK &&
            (rc = dv_event_record(ev[i], s->streams[i], err)) == PA_OK)
            rc = dv_stream_wait_event(s->streams[0], ev[i], err);
    if (n) {
        int rc2 = dv_stream_sync(s->streams[0], err);
        rc = rc == PA_OK ? rc2 : rc;
    }
    for (int i = 0; i < n && ev; i++) {   /* a kernel error another stream kept */
        bool done;
        if (ev[i] && rc == PA_OK)
            rc = dv_event_query(ev[i], &done, err);
        dv_event_destroy(ev[i]);
    }
    pa_free(ev);
    for (int i = 0; i < s->n_streams; i++)
        dv_stream_destroy(s->streams[i]);
    pa_free(s->streams);
    pa_free(s->stream_busy);
    s->streams = NULL;
    s->stream_busy = NULL;
    s->n_streams = s->cap_streams = 0;
    return rc;
}

int ex__worker_begin(ex_sched *s, ex_pipeline *p, int id, ex_worker *w, pa_err *err)
{
    w->id = id;
    w->q = &s->q;
    w->dev = s->q.dev;
    w->pipeline = p->id;
    w->stream = NULL;
    w->wait = NULL;
    int rc = ex__stream_take(s, &w->stream, err);
    for (int i = 0; rc == PA_OK && ordered(s) && i < p->n_deps; i++) {
        if (p->dep_soft[i])   /* an exchange's rows come through host memory, uploaded on this stream */
            continue;
        dv_event *done = s->ps.p[p->deps[i]].done;
        if (done)
            rc = dv_stream_wait_event(w->stream, done, err);
    }
    w->kn.dev = w->dev;
    w->kn.stream = w->stream;
    ex__set_thread_stream(w->stream);
    return rc;
}

void ex__worker_end(ex_sched *s, ex_pipeline *p, ex_worker *w)
{
    dv_event *e = NULL;
    bool kept = !ordered(s);
    if (!kept && dv_event_create(w->dev, &e, NULL) == PA_OK && dv_event_record(e, w->stream, NULL) == PA_OK) {
        pthread_mutex_lock(&s->mu);
        dv_event **v = pa_realloc(p->wdone, (size_t)(p->n_wdone + 1) * sizeof *v);
        if (v) {
            p->wdone = v;
            v[p->n_wdone++] = e;
            kept = true;
        }
        pthread_mutex_unlock(&s->mu);
    }
    if (!kept) {   /* no memory for the event: order the work by waiting for it */
        dv_event_destroy(e);
        dv_stream_sync(w->stream, NULL);
    }
    ex__set_thread_stream(NULL);
    ex__stream_give(s, w->stream);
    w->stream = NULL;
}

/* Make st wait for every worker of p; the events are released. */
static int wait_workers(ex_pipeline *p, dv_stream *st, pa_err *err)
{
    int rc = PA_OK;
    for (int i = 0; i < p->n_wdone; i++) {
        if (rc == PA_OK)
            rc = dv_stream_wait_event(st, p->wdone[i], err);
        dv_event_destroy(p->wdone[i]);
    }
    pa_free(p->wdone);
    p->wdone = NULL;
    p->n_wdone = 0;
    return rc;
}

int ex__pipeline_seal(ex_sched *s, ex_pipeline *p, bool finalize, pa_err *err)
{
    dv_stream *st = NULL;
    int rc = ex__stream_take(s, &st, err);
    if (rc == PA_OK)
        rc = wait_workers(p, st, err);
    for (int q = finalize && ordered(s) ? ex__pipelines_feeding(&s->ps, p->sink, 0) : -1; rc == PA_OK && q >= 0;
         q = ex__pipelines_feeding(&s->ps, p->sink, q + 1))
        if (s->ps.p[q].done)
            rc = dv_stream_wait_event(st, s->ps.p[q].done, err);
    if (rc == PA_OK && finalize) {
        uint64_t t0 = pa_now_ns();
        s->q.fin_stream = st;
        ex__set_thread_stream(st);
        rc = p->sink->vt->finalize(p->sink, &s->q, err);
        ex__set_thread_stream(NULL);
        s->q.fin_stream = NULL;
        __atomic_add_fetch(&p->sink->ns, pa_now_ns() - t0, __ATOMIC_RELAXED);
        if (rc != PA_OK)
            rc = ex__oom_role(p->sink, p->sink->vt->kind == EX_OP_HASH_JOIN ? "build" : "finalize", rc, err);
    }
    if (rc == PA_OK && ordered(s) && (rc = dv_event_create(s->q.dev, &p->done, err)) == PA_OK)
        rc = dv_event_record(p->done, st, err);
    if (st)
        ex__stream_give(s, st);
    return rc;
}

/* Streams a finalize fans its tasks out over (ex_fin_parallel): enough to
 * keep a few executor threads or GPU queues busy. */
#define EX__FIN_WIDTH 8

typedef struct fin_par {
    ex_fin_task task;
    void *ctx;
    kn_ctx kn;
} fin_par;

static void fin_par_run(void *ctx, size_t i)
{
    fin_par *p = ctx;
    p->task(p->ctx, i, &p->kn);
}

/* The streams, each after `after`; returns how many it got (at least 1 on
 * PA_OK: fewer streams than asked for only narrow the fan-out). */
static int fin_streams(ex_sched *s, dv_event *after, dv_stream **st, int want, int *got, pa_err *err)
{
    int rc = PA_OK;
    *got = 0;
    while (*got < want) {
        if ((rc = ex__stream_take(s, &st[*got], *got ? NULL : err)) != PA_OK)
            break;
        if ((rc = dv_stream_wait_event(st[*got], after, *got ? NULL : err)) != PA_OK) {
            ex__stream_give(s, st[*got]);
            break;
        }
        ++*got;
    }
    return *got ? PA_OK : rc;
}

int ex_fin_parallel(ex_query *q, size_t n, ex_fin_task task, void *ctx, pa_err *err)
{
    ex_sched *s = (ex_sched *)q;
    fin_par p = {.task = task, .ctx = ctx, .kn = {q->dev, q->fin_stream}};
    pa_threadpool *tp = dv_cpu_threads(q->dev);
    if (!ordered(s)) {
        if (tp && n > 1)
            pa_parallel_for(tp, n, fin_par_run, &p);
        else
            for (size_t i = 0; i < n; i++)
                task(ctx, i, &p.kn);
        return PA_OK;
    }
    int want = tp ? pa_threadpool_size(tp) : EX__FIN_WIDTH;
    want = want < EX__FIN_WIDTH ? want : EX__FIN_WIDTH;
    want = (size_t)want < n ? want : (int)n;
    if (want <= 1) {
        for (size_t i = 0; i < n; i++)
            task(ctx, i, &p.kn);
        return PA_OK;
    }
    dv_stream *st[EX__FIN_WIDTH];
    dv_event *start = NULL, *end[EX__FIN_WIDTH] = {0};
    int got = 0;
    int rc = dv_event_create(q->dev, &start, err);
    if (rc == PA_OK && (rc = dv_event_record(start, q->fin_stream, err)) == PA_OK)
        rc = fin_streams(s, start, st, want, &got, err);
    for (size_t i = 0; rc == PA_OK && i < n; i++) {
        kn_ctx kn = {q->dev, st[i % (size_t)got]};
        task(ctx, i, &kn);
    }
    /* Join: the finalize stream waits for every stream a task may have used. */
    for (int k = 0; k < got; k++) {
        int r2 = dv_event_create(q->dev, &end[k], rc == PA_OK ? err : NULL);
        if (r2 == PA_OK && (r2 = dv_event_record(end[k], st[k], rc == PA_OK ? err : NULL)) == PA_OK)
            r2 = dv_stream_wait_event(q->fin_stream, end[k], rc == PA_OK ? err : NULL);
        if (r2 != PA_OK && dv_stream_sync(st[k], NULL) == PA_OK)
            r2 = PA_OK;   /* no event: order the work by waiting for it */
        rc = rc == PA_OK ? r2 : rc;
        dv_event_destroy(end[k]);
        ex__stream_give(s, st[k]);
    }
    dv_event_destroy(start);
    return rc;
}

static inline void add64(int64_t *x, int64_t v) { __atomic_add_fetch(x, v, __ATOMIC_RELAXED); }
static inline void addu64(uint64_t *x, uint64_t v) { __atomic_add_fetch(x, v, __ATOMIC_RELAXED); }

static void out_stats(ex_op *op, const dv_chunk *out)
{
    if (out) {
        add64(&op->rows_out, out->length);
        add64(&op->chunks_out, 1);
    }
}

int ex__call_next(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    uint64_t t0 = pa_now_ns();
    *out = NULL;
    w->role = EX_ROLE_SOURCE;
    int rc;
    for (int attempt = 0;; attempt++) {
        w->blocked = false;
        rc = op->vt->source_next(op, w, local, out, err);
        if (rc != PA_OK || !w->blocked || *out || ex_query_failed(w->q))
            break;
        ex__blocked(w, attempt);
    }
    addu64(&op->ns, pa_now_ns() - t0);
    if (rc == PA_OK && *out &&   /* made on another stream: order this worker's work after it */
        (rc = dv_chunk_wait_ready(*out, w->stream, err)) == PA_OK)
        rc = dv_chunk_set_ready(*out, w->stream, err);
    if (rc != PA_OK) {
        ex__chunk_done(w, *out);
        *out = NULL;
        return ex__oom_role(op, "source", rc, err);
    }
    out_stats(op, *out);
    return PA_OK;
}

int ex__call_execute(ex_op *op, ex_worker *w, void *local, dv_chunk *in, dv_chunk **out,
                     ex_state *st, pa_err *err)
{
    uint64_t t0 = pa_now_ns();
    *out = NULL;
    *st = EX_NEED_INPUT;
    w->role = EX_ROLE_STREAMING;
    int rc = op->vt->execute(op, w, local, in, out, st, err);
    addu64(&op->ns, pa_now_ns() - t0);
    if (rc == PA_OK && *out)   /* for consumers on other streams (BLOCKING stages, sinks) */
        rc = dv_chunk_set_ready(*out, w->stream, err);
    if (rc != PA_OK) {
        ex__chunk_done(w, *out);
        *out = NULL;
        return ex__oom_role(op, op->vt->kind == EX_OP_HASH_JOIN ? "probe" : NULL, rc, err);
    }
    /* Rows in are counted once per input, not per EX_HAVE_OUTPUT re-call. */
    out_stats(op, *out);
    return PA_OK;
}

int ex__call_flush(ex_op *op, ex_worker *w, void *local, dv_chunk **out, pa_err *err)
{
    *out = NULL;
    if (!op->vt->flush)
        return PA_OK;
    uint64_t t0 = pa_now_ns();
    w->role = EX_ROLE_STREAMING;
    int rc;
    for (int attempt = 0;; attempt++) {
        w->blocked = false;
        rc = op->vt->flush(op, w, local, out, err);
        if (rc != PA_OK || !w->blocked || *out || ex_query_failed(w->q))
            break;
        ex__blocked(w, attempt);
    }
    addu64(&op->ns, pa_now_ns() - t0);
    if (rc == PA_OK && *out)
        rc = dv_chunk_set_ready(*out, w->stream, err);
    if (rc != PA_OK) {
        ex__chunk_done(w, *out);
        *out = NULL;
        return ex__oom_role(op, NULL, rc, err);
    }
    out_stats(op, *out);
    return PA_OK;
}

static const char *sink_role(const ex_op *op)
{
    return op->vt->kind == EX_OP_HASH_JOIN ? "build" : NULL;
}

int ex__call_sink(ex_op *op, ex_worker *w, void *local, dv_chunk *in, pa_err *err)
{
    uint64_t t0 = pa_now_ns();
    add64(&op->rows_in, in->length);
    w->role = EX_ROLE_SINK;
    int rc;
    for (int attempt = 0;; attempt++) {
        w->blocked = false;
        rc = op->vt->sink(op, w, local, in, err);
        if (rc != PA_OK || !w->blocked || ex_query_failed(w->q))
            break;
        ex__blocked(w, attempt);
    }
    addu64(&op->ns, pa_now_ns() - t0);
    return rc == PA_OK ? rc : ex__oom_role(op, sink_role(op), rc, err);
}

int ex__call_combine(ex_op *op, ex_worker *w, void *local, pa_err *err)
{
    if (!op->vt->combine)
        return PA_OK;
    uint64_t t0 = pa_now_ns();
    w->role = EX_ROLE_SINK;
    int rc;
    for (int attempt = 0;; attempt++) {
        w->blocked = false;
        rc = op->vt->combine(op, w, local, err);
        if (rc != PA_OK || !w->blocked || ex_query_failed(w->q))
            break;
        ex__blocked(w, attempt);
    }
    addu64(&op->ns, pa_now_ns() - t0);
    return rc == PA_OK ? rc : ex__oom_role(op, sink_role(op), rc, err);
}

void ex__blocked(ex_worker *w, int attempt)
{
    if (w->wait) {
        dv_event *e = w->wait;
        w->wait = NULL;
        pa_counter_add(PA_CTR_WORKER_PARKS, 1);
        dv_event_sync(e, NULL);   /* an error there comes back from the op's next look */
        return;
    }
    if (attempt < 16) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, attempt < 64 ? 20000 : 200000};   /* 20 us, then 200 us */
    nanosleep(&ts, NULL);
}

void ex__chunk_done(ex_worker *w, dv_chunk *c)
{
    dv_chunk_release(c, w->stream);
}

int ex__local_init(ex_op *op, ex_role role, ex_worker *w, void **local, pa_err *err)
{
    *local = NULL;
    if (!op->vt->local_init)
        return PA_OK;
    w->role = role;
    int rc = op->vt->local_init(op, w, local, err);
    if (rc != PA_OK)
        *local = NULL;
    return rc == PA_OK ? rc : ex__oom_role(op, NULL, rc, err);
}

void ex__local_free(ex_op *op, void *local)
{
    if (local && op->vt->local_free)
        op->vt->local_free(op, local);
}
