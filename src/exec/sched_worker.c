/*
 * sched_worker.c - what every worker thread shares, whatever the mode: its
 * stream and kernel context, the timed calls into operator hooks (rows,
 * chunks and busy time per operator; PA_ENOMEM named after the operator and
 * its role), and failure reporting.
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

int ex__worker_begin(ex_sched *s, ex_pipeline *p, int id, ex_worker *w, pa_err *err)
{
    w->id = id;
    w->q = &s->q;
    w->dev = s->q.dev;
    w->pipeline = p->id;
    w->stream = NULL;
    int rc = dv_stream_create(w->dev, &w->stream, err);
    w->kn.dev = w->dev;
    w->kn.stream = w->stream;
    return rc;
}

void ex__worker_end(ex_worker *w)
{
    /* The cpu device ran every kernel before it returned; on other devices
     * the last op's outputs were consumed through events. Destroying waits
     * for stragglers without counting a host sync. */
    dv_stream_destroy(w->stream);
    w->stream = NULL;
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
    int rc = op->vt->source_next(op, w, local, out, err);
    addu64(&op->ns, pa_now_ns() - t0);
    if (rc != PA_OK) {
        dv_chunk_destroy(*out);
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
    if (rc != PA_OK) {
        dv_chunk_destroy(*out);
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
    int rc = op->vt->flush(op, w, local, out, err);
    addu64(&op->ns, pa_now_ns() - t0);
    if (rc != PA_OK) {
        dv_chunk_destroy(*out);
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
    int rc = op->vt->sink(op, w, local, in, err);
    addu64(&op->ns, pa_now_ns() - t0);
    return rc == PA_OK ? rc : ex__oom_role(op, sink_role(op), rc, err);
}

int ex__call_combine(ex_op *op, ex_worker *w, void *local, pa_err *err)
{
    if (!op->vt->combine)
        return PA_OK;
    uint64_t t0 = pa_now_ns();
    w->role = EX_ROLE_SINK;
    int rc = op->vt->combine(op, w, local, err);
    addu64(&op->ns, pa_now_ns() - t0);
    return rc == PA_OK ? rc : ex__oom_role(op, sink_role(op), rc, err);
}

void ex__backoff(int attempt)
{
    if (attempt < 16) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, attempt < 64 ? 20000 : 200000};   /* 20 us, then 200 us */
    nanosleep(&ts, NULL);
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
