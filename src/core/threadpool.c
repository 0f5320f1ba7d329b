/*
 * threadpool.c - a fixed set of worker threads running submitted tasks in
 * FIFO order. The task list is unbounded (a linked list of nodes from the
 * host allocator): submit never blocks, so a task may submit more tasks
 * without deadlock. Back-pressure belongs to pa_queue, not here.
 */
#include "core/core.h"

#include <pthread.h>
#include <unistd.h>

typedef pa_task_node task;

struct pa_threadpool {
    pthread_mutex_t mu;
    pthread_cond_t work;   /* tasks arrived or shutting down */
    pthread_cond_t idle;   /* pending reached 0 */
    task *head, *tail;
    size_t pending;        /* queued + running */
    int shutdown;
    int n;
    pthread_t *threads;
};

static _Thread_local const pa_threadpool *tl_pool;   /* the pool this thread works for, if any */

const pa_threadpool *pa_threadpool_self(void) { return tl_pool; }

static void *worker(void *arg)
{
    pa_threadpool *tp = arg;
    tl_pool = tp;
    pthread_mutex_lock(&tp->mu);
    for (;;) {
        while (!tp->head && !tp->shutdown)
            pthread_cond_wait(&tp->work, &tp->mu);
        task *t = tp->head;
        if (!t)
            break;   /* shutdown and drained */
        tp->head = t->next;
        if (!tp->head)
            tp->tail = NULL;
        pthread_mutex_unlock(&tp->mu);
        /* Freed before the task runs: a task that tells its submitter it is
         * done lets it go on (and count its memory) at once. */
        pa_task_fn fn = t->fn;
        void *targ = t->arg;
        if (!t->owned)
            pa_free(t);
        fn(targ);
        pthread_mutex_lock(&tp->mu);
        if (--tp->pending == 0)
            pthread_cond_broadcast(&tp->idle);
    }
    pthread_mutex_unlock(&tp->mu);
    return NULL;
}

int pa_threadpool_create(int n_threads, pa_threadpool **out, pa_err *err)
{
    if (n_threads <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n_threads = c > 0 ? (int)c : 1;
    }
    pa_threadpool *tp = pa_calloc(1, sizeof *tp);
    pthread_t *th = pa_calloc((size_t)n_threads, sizeof *th);
    if (!tp || !th) {
        pa_free(tp);
        pa_free(th);
        return pa_error(err, PA_ENOMEM, "out of memory creating a thread pool of %d", n_threads);
    }
    pthread_mutex_init(&tp->mu, NULL);
    pthread_cond_init(&tp->work, NULL);
    pthread_cond_init(&tp->idle, NULL);
    tp->threads = th;
    for (int i = 0; i < n_threads; i++) {
        if (pthread_create(&th[i], NULL, worker, tp) != 0) {
            tp->n = i;
            pa_threadpool_destroy(tp);
            return pa_error(err, PA_EINTERNAL, "could not start thread %d of %d", i + 1, n_threads);
        }
    }
    tp->n = n_threads;
    *out = tp;
    return PA_OK;
}

void pa_threadpool_destroy(pa_threadpool *tp)
{
    if (!tp)
        return;
    pthread_mutex_lock(&tp->mu);
    tp->shutdown = 1;
    pthread_cond_broadcast(&tp->work);
    pthread_mutex_unlock(&tp->mu);
    for (int i = 0; i < tp->n; i++)
        pthread_join(tp->threads[i], NULL);
    pthread_mutex_destroy(&tp->mu);
    pthread_cond_destroy(&tp->work);
    pthread_cond_destroy(&tp->idle);
    pa_free(tp->threads);
    pa_free(tp);
}

static void push_task(pa_threadpool *tp, task *t)
{
    pthread_mutex_lock(&tp->mu);
    if (tp->tail)
        tp->tail->next = t;
    else
        tp->head = t;
    tp->tail = t;
    tp->pending++;
    pthread_cond_signal(&tp->work);
    pthread_mutex_unlock(&tp->mu);
}

int pa_threadpool_submit(pa_threadpool *tp, pa_task_fn fn, void *arg)
{
    task *t = pa_malloc(sizeof *t);
    if (!t)
        return PA_ENOMEM;
    *t = (task){.fn = fn, .arg = arg};
    push_task(tp, t);
    return PA_OK;
}

void pa_threadpool_submit_node(pa_threadpool *tp, pa_task_node *node, pa_task_fn fn, void *arg)
{
    *node = (pa_task_node){.fn = fn, .arg = arg, .owned = 1};
    push_task(tp, node);
}

void pa_threadpool_wait_idle(pa_threadpool *tp)
{
    pthread_mutex_lock(&tp->mu);
    while (tp->pending)
        pthread_cond_wait(&tp->idle, &tp->mu);
    pthread_mutex_unlock(&tp->mu);
}

int pa_threadpool_size(const pa_threadpool *tp) { return tp->n; }

/* --------------------------------------------------------- parallel loop
 *
 * pa_parallel_for: workers take indexes from one atomic counter; the caller
 * works too, then waits only for the helpers that started. A helper still
 * queued behind other tasks when the caller is done finds nothing to do and
 * leaves at once, so the caller never waits for the pool to get round to
 * it. The loop's state is shared by reference count, since such a helper
 * may run after the caller returned. */

typedef struct pfor {
    void (*fn)(void *ctx, size_t i);
    void *ctx;
    size_t n, next;        /* next: atomic */
    int refs, active;      /* guarded by mu */
    bool done;             /* the caller finished its part (under mu) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
} pfor;

static void pfor_work(pfor *p)
{
    for (;;) {
        size_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (i >= p->n)
            return;
        p->fn(p->ctx, i);
    }
}

/* Drop a reference (with mu held; unlocks it). */
static void pfor_unref(pfor *p)
{
    bool last = --p->refs == 0;
    pthread_mutex_unlock(&p->mu);
    if (last) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->cv);
        pa_free(p);
    }
}

static void pfor_helper(void *arg)
{
    pfor *p = arg;
    pthread_mutex_lock(&p->mu);
    if (p->done) {
        pfor_unref(p);
        return;
    }
    p->active++;
    pthread_mutex_unlock(&p->mu);
    pfor_work(p);
    pthread_mutex_lock(&p->mu);
    if (--p->active == 0 && p->done)
        pthread_cond_signal(&p->cv);
    pfor_unref(p);
}

void pa_parallel_for(pa_threadpool *tp, size_t n, void (*fn)(void *ctx, size_t i), void *ctx)
{
    pfor *p = tp && n > 1 ? pa_calloc(1, sizeof *p) : NULL;
    if (!p) {   /* one thread, one index, or no memory: the caller alone */
        for (size_t i = 0; i < n; i++)
            fn(ctx, i);
        return;
    }
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->refs = 1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    /* The caller works too: a pool of N threads gives N workers in all, so
     * a device opened with cpu_threads = N decodes on N cores. */
    size_t want = (size_t)pa_threadpool_size(tp) - 1;
    if (want > n - 1)
        want = n - 1;
    for (size_t k = 0; k < want; k++) {
        pthread_mutex_lock(&p->mu);
        p->refs++;
        pthread_mutex_unlock(&p->mu);
        if (pa_threadpool_submit(tp, pfor_helper, p) != PA_OK) {
            pthread_mutex_lock(&p->mu);
            p->refs--;
            pthread_mutex_unlock(&p->mu);
            break;   /* the caller does the rest */
        }
    }
    pfor_work(p);
    pthread_mutex_lock(&p->mu);
    p->done = true;
    while (p->active > 0)
        pthread_cond_wait(&p->cv, &p->mu);
    pfor_unref(p);
}
