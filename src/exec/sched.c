/*
 * sched.c - the scheduler: the coordinator loop that starts pipelines in
 * dependency order per execution mode, and the streaming worker loop
 * (source_next -> chain of execute -> sink; flush; combine).
 *
 * Modes: OVERLAPPED opens every leaf source (scan) at query start (just
 * after starting the pipelines that can run at once), so its
 * reads and decoding run ahead into its bounded queue while earlier
 * pipelines compute, and runs every pipeline whose dependencies are done
 * concurrently. CHUNKED runs one pipeline at a time and opens a source when
 * its pipeline starts. BLOCKING is CHUNKED with operator-at-a-time stages
 * (sched_blocking.c).
 */
#include "exec/sched_int.h"

#include <string.h>
#include <time.h>

/* The coordinator's longest wait between looks at the cancel flag: 20 ms,
 * well inside the 100 ms a cancel may take. */
#define EX__COORD_WAIT_NS 20000000L

typedef struct ex__wk {
    ex_sched *s;
    ex_pipeline *p;
    int id;
} ex__wk;

typedef struct wstate {
    ex_pipeline *p;
    ex_worker w;
    pa_err err;
    void **locals;          /* [0] source, [1..n] chain, [n+1] sink */
    int finished;           /* highest chain level that returned EX_FINISHED, -1 none */
} wstate;

/* Push c (consumed) into chain level `level` (n_chain = the sink). */
static int push(wstate *ws, int level, dv_chunk *c)
{
    ex_pipeline *p = ws->p;
    int rc = PA_OK;
    if (level <= ws->finished || c->length == 0 || ex_query_failed(ws->w.q)) {
        ex__chunk_done(&ws->w, c);
        return PA_OK;
    }
    if (level == p->n_chain) {
        if (p->sink)
            rc = ex__call_sink(p->sink, &ws->w, ws->locals[level + 1], c, &ws->err);
        ex__chunk_done(&ws->w, c);
        return rc;
    }
    ex_op *op = p->chain[level];
    __atomic_add_fetch(&op->rows_in, c->length, __ATOMIC_RELAXED);
    for (int attempt = 0; !ex_query_failed(ws->w.q) && ws->finished < level;) {
        dv_chunk *out;
        ex_state st;
        rc = ex__call_execute(op, &ws->w, ws->locals[level + 1], c, &out, &st, &ws->err);
        if (rc != PA_OK)
            break;
        if (out && (rc = push(ws, level + 1, out)) != PA_OK)
            break;
        if (st == EX_HAVE_OUTPUT)
            continue;
        if (st == EX_BLOCKED) {
            ex__blocked(&ws->w, attempt++);
            continue;
        }
        if (st == EX_FINISHED) {
            ws->finished = level;
            __atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
        }
        break;
    }
    ex__chunk_done(&ws->w, c);
    return rc;
}

static int run_stream(wstate *ws)
{
    ex_pipeline *p = ws->p;
    ex_query *q = ws->w.q;
    int rc = PA_OK;
    while (!ex_query_failed(q) && !__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
        dv_chunk *c;
        if ((rc = ex__call_next(p->source, &ws->w, ws->locals[0], &c, &ws->err)) != PA_OK)
            return rc;
        if (!c)
            break;
        if ((rc = push(ws, 0, c)) != PA_OK)
            return rc;
    }
    /* End of input: flush every level above the last finished op, bottom up. */
    for (int level = ws->finished + 1; level < p->n_chain && !ex_query_failed(q); level++)
        for (;;) {
            dv_chunk *out;
            if ((rc = ex__call_flush(p->chain[level], &ws->w, ws->locals[level + 1], &out, &ws->err)) != PA_OK)
                return rc;
            if (!out)
                break;
            if ((rc = push(ws, level + 1, out)) != PA_OK)
                return rc;
        }
    if (p->sink && !ex_query_failed(q))
        rc = ex__call_combine(p->sink, &ws->w, ws->locals[p->n_chain + 1], &ws->err);
    return rc;
}

static void *worker_main(void *arg)
{
    ex__wk *k = arg;
    ex_sched *s = k->s;
    ex_pipeline *p = k->p;
    wstate ws;
    memset(&ws, 0, sizeof ws);
    ws.p = p;
    ws.finished = -1;
    pa_err_init(&ws.err);
    int n = p->n_chain + 2, inited = 0;
    int rc = ex__worker_begin(s, p, k->id, &ws.w, &ws.err);
    if (rc == PA_OK && !(ws.locals = pa_calloc((size_t)n, sizeof *ws.locals)))
        rc = pa_error(&ws.err, PA_ENOMEM, "out of memory starting a worker");
    for (; rc == PA_OK && inited < n; inited++) {
        ex_op *op = inited == 0 ? p->source : inited == n - 1 ? p->sink : p->chain[inited - 1];
        ex_role role = inited == 0 ? EX_ROLE_SOURCE : inited == n - 1 ? EX_ROLE_SINK : EX_ROLE_STREAMING;
        if (op && (rc = ex__local_init(op, role, &ws.w, &ws.locals[inited], &ws.err)) != PA_OK)
            break;
    }
    if (rc == PA_OK)
        rc = run_stream(&ws);
    if (rc != PA_OK)
        ex__fail(&s->q, &ws.err, rc);
    for (int i = 0; ws.locals && i < inited; i++) {
        ex_op *op = i == 0 ? p->source : i == n - 1 ? p->sink : p->chain[i - 1];
        if (op)
            ex__local_free(op, ws.locals[i]);
    }
    pa_free(ws.locals);
    if (ws.w.stream)
        ex__worker_end(s, p, &ws.w);
    pa_err_close(&ws.err);
    pthread_mutex_lock(&s->mu);
    if (--p->active == 0) {
        p->state = EX_P_ENDED;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Start p's workers. Called with s->mu held (workers need it only at exit). */
static int start_workers(ex_sched *s, ex_pipeline *p, pa_err *err)
{
    int W = p->source->vt->ordered ? 1 : s->q.threads;
    p->tids = pa_calloc((size_t)W, sizeof *p->tids);
    p->wks = pa_calloc((size_t)W, sizeof *p->wks);
    if (!p->tids || !p->wks) {
        p->state = EX_P_DONE;
        return pa_error(err, PA_ENOMEM, "out of memory starting pipeline %d", p->id);
    }
    p->state = EX_P_RUNNING;
    p->active = W;
    for (int i = 0; i < W; i++) {
        p->wks[i] = (ex__wk){s, p, i};
        if (pthread_create(&p->tids[i], NULL, worker_main, &p->wks[i]) != 0) {
            p->active -= W - i;
            p->workers = i;
            if (p->active == 0)
                p->state = EX_P_ENDED;
            return pa_error(err, PA_EINTERNAL, "cannot start worker %d of pipeline %d", i, p->id);
        }
        p->workers = i + 1;
    }
    return PA_OK;
}

static int open_source(ex_sched *s, int i, pa_err *err)
{
    if (s->opened[i])
        return PA_OK;
    s->opened[i] = true;
    ex_op *src = s->ps.p[i].source;
    if (!src->vt->source_open)
        return PA_OK;
    uint64_t t0 = pa_now_ns();
    int rc = src->vt->source_open(src, &s->q, err);
    __atomic_add_fetch(&src->ns, pa_now_ns() - t0, __ATOMIC_RELAXED);
    return rc == PA_OK ? rc : ex__oom_role(src, "open", rc, err);
}

/* Whether p may start: its dependencies done; in OVERLAPPED mode a
 * pipeline that feeds an EXCHANGE p reads from need only have started (p
 * consumes while the rows still arrive). */
static bool deps_done(const ex_sched *s, const ex_pipeline *p)
{
    bool overlapped = s->q.opt.mode == EX_MODE_OVERLAPPED;
    for (int i = 0; i < p->n_deps; i++) {
        ex_pstate st = s->ps.p[p->deps[i]].state;
        if (st != EX_P_DONE && !(overlapped && p->dep_soft[i] && st != EX_P_WAITING))
            return false;
    }
    return true;
}

/* Join an ended pipeline; finalize its sink once every feeder is done.
 * Called without the lock. */
static int finish(ex_sched *s, ex_pipeline *p, pa_err *err)
{
    for (int i = 0; i < p->workers; i++)
        pthread_join(p->tids[i], NULL);
    p->workers = 0;
    pthread_mutex_lock(&s->mu);
    p->state = EX_P_DONE;
    bool last = true;
    for (int q = ex__pipelines_feeding(&s->ps, p->sink, 0); p->sink && q >= 0;
         q = ex__pipelines_feeding(&s->ps, p->sink, q + 1))
        last &= s->ps.p[q].state == EX_P_DONE;
    pthread_mutex_unlock(&s->mu);
    if (ex_query_failed(&s->q))
        return PA_OK;
    return ex__pipeline_seal(s, p, last && p->sink && p->sink->vt->finalize, err);
}

/* Start what may start now. Called with the lock held; may drop it. */
static void start_ready(ex_sched *s, pa_err *err)
{
    ex_mode mode = s->q.opt.mode;
    for (int i = 0; i < s->ps.n && !ex_query_failed(&s->q); i++) {
        ex_pipeline *p = &s->ps.p[i];
        if (p->state != EX_P_WAITING || !deps_done(s, p))
            continue;
        if (mode != EX_MODE_OVERLAPPED)
            for (int k = 0; k < s->ps.n; k++)
                if (s->ps.p[k].state == EX_P_RUNNING || s->ps.p[k].state == EX_P_ENDED)
                    return;
        pthread_mutex_unlock(&s->mu);
        int rc = open_source(s, i, err);
        if (rc == PA_OK && mode == EX_MODE_BLOCKING) {
            p->state = EX_P_RUNNING;
            rc = ex__run_blocking(s, p);
            pthread_mutex_lock(&s->mu);
            p->state = EX_P_ENDED;
        } else {
            pthread_mutex_lock(&s->mu);
            if (rc == PA_OK)
                rc = start_workers(s, p, err);
            else
                p->state = EX_P_DONE;
        }
        if (rc != PA_OK && !ex_query_failed(&s->q)) {
            pthread_mutex_unlock(&s->mu);
            ex__fail(&s->q, err, rc);
            pthread_mutex_lock(&s->mu);
        }
    }
}

int ex__sched_run(ex_sched *s)
{
    ex_query *q = &s->q;
    pa_err err;
    pa_err_init(&err);
    int rc = PA_OK;
    if (!(s->opened = pa_calloc((size_t)(s->ps.n ? s->ps.n : 1), sizeof *s->opened))) {
        rc = pa_error(&q->err, PA_ENOMEM, "out of memory starting the query");
        goto out;
    }
    /* OVERLAPPED: every scan starts reading at once, the pipelines that can
     * run first before the others are opened (so their workers start while
     * the coordinator reads the other files' metadata). */
    bool open_rest = q->opt.mode == EX_MODE_OVERLAPPED;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        start_ready(s, &err);
        if (open_rest) {
            open_rest = false;
            pthread_mutex_unlock(&s->mu);
            for (int i = 0; i < s->ps.n && rc == PA_OK && !ex_query_failed(q); i++)
                if (ex__pipelines_feeding(&s->ps, s->ps.p[i].source, 0) < 0 &&
                    (rc = open_source(s, i, &err)) != PA_OK)
                    ex__fail(q, &err, rc);
            pthread_mutex_lock(&s->mu);
        }
        bool ended = false;
        for (int i = 0; i < s->ps.n; i++) {
            ex_pipeline *p = &s->ps.p[i];
            if (p->state != EX_P_ENDED)
                continue;
            pthread_mutex_unlock(&s->mu);
            pa_err_clear(&err);
            if ((rc = finish(s, p, &err)) != PA_OK)
                ex__fail(q, &err, rc);
            pthread_mutex_lock(&s->mu);
            ended = true;
        }
        if (ended)
            continue;
        bool running = false;
        for (int i = 0; i < s->ps.n; i++)
            running |= s->ps.p[i].state == EX_P_RUNNING;
        if (!running)
            break;
        /* Woken when a pipeline's last worker ends; at least every
         * EX__COORD_WAIT_NS to read the cancel flag (ex_query_failed). */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += EX__COORD_WAIT_NS;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->cv, &s->mu, &until);
        (void)ex_query_failed(q);
    }
    bool all_done = true;
    for (int i = 0; i < s->ps.n; i++)
        all_done &= s->ps.p[i].state == EX_P_DONE;
    pthread_mutex_unlock(&s->mu);
    if (!ex_query_failed(q) && !all_done)
        pa_error(&q->err, PA_EINTERNAL, "scheduler stopped with pipelines that cannot start (a cycle?)");
    if (__atomic_load_n(&q->canceled, __ATOMIC_ACQUIRE) && q->err.code == PA_OK)
        pa_error(&q->err, PA_ECANCELED, "query canceled");
out:
    pa_err_close(&err);
    return q->err.code;
}
