/*
 * queue.c - the bounded blocking queue (a ring of pointers) that connects
 * pipeline stages. A full queue blocks its producers: this is the
 * back-pressure of DESIGN.md rule 4. Close wakes every waiter.
 */
#include "core/core.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

struct pa_queue {
    pthread_mutex_t mu;
    pthread_cond_t not_full, not_empty;
    void **ring;
    size_t cap, head, len;
    int closed;
};

int pa_queue_create(size_t capacity, pa_queue **out, pa_err *err)
{
    if (capacity == 0)
        return pa_error(err, PA_EINVAL, "queue capacity must be at least 1");
    pa_queue *q = pa_calloc(1, sizeof *q);
    void **ring = pa_calloc(capacity, sizeof *ring);
    if (!q || !ring) {
        pa_free(q);
        pa_free(ring);
        return pa_error(err, PA_ENOMEM, "out of memory creating a queue of %zu", capacity);
    }
    pthread_mutex_init(&q->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&q->not_full, &ca);
    pthread_cond_init(&q->not_empty, &ca);
    pthread_condattr_destroy(&ca);
    q->ring = ring;
    q->cap = capacity;
    *out = q;
    return PA_OK;
}

void pa_queue_destroy(pa_queue *q)
{
    if (!q)
        return;
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->not_full);
    pthread_cond_destroy(&q->not_empty);
    pa_free(q->ring);
    pa_free(q);
}

static struct timespec deadline(uint64_t timeout_ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + timeout_ns % 1000000000ull;
    ts.tv_sec += (time_t)(timeout_ns / 1000000000ull + ns / 1000000000ull);
    ts.tv_nsec = (long)(ns % 1000000000ull);
    return ts;
}

/* Wait on cv until pred() holds, the queue closes, or the deadline passes.
 * Returns PA_OK when pred holds, PA_ECLOSED or PA_ETIMEDOUT otherwise. */
#define WAIT_UNTIL(q, cv, pred, timeout_ns)                                   \
    ({                                                                        \
        int rc_ = PA_OK;                                                      \
        struct timespec dl_;                                                  \
        if ((timeout_ns) != PA_WAIT_FOREVER && (timeout_ns) != 0)             \
            dl_ = deadline(timeout_ns);                                       \
        while (!(pred)) {                                                     \
            if ((q)->closed) { rc_ = PA_ECLOSED; break; }                     \
            if ((timeout_ns) == 0) { rc_ = PA_ETIMEDOUT; break; }             \
            if ((timeout_ns) == PA_WAIT_FOREVER)                              \
                pthread_cond_wait(&(cv), &(q)->mu);                           \
            else if (pthread_cond_timedwait(&(cv), &(q)->mu, &dl_) == ETIMEDOUT \
                     && !(pred)) {                                            \
                rc_ = (q)->closed ? PA_ECLOSED : PA_ETIMEDOUT;                \
                break;                                                        \
            }                                                                 \
        }                                                                     \
        rc_;                                                                  \
    })

int pa_queue_push(pa_queue *q, void *item, uint64_t timeout_ns)
{
    pthread_mutex_lock(&q->mu);
    int rc = q->closed ? PA_ECLOSED : WAIT_UNTIL(q, q->not_full, q->len < q->cap, timeout_ns);
    if (rc == PA_OK && q->closed)
        rc = PA_ECLOSED;
    if (rc == PA_OK) {
        q->ring[(q->head + q->len) % q->cap] = item;
        q->len++;
        pthread_cond_signal(&q->not_empty);
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

int pa_queue_pop(pa_queue *q, void **item, uint64_t timeout_ns)
{
    pthread_mutex_lock(&q->mu);
    int rc = WAIT_UNTIL(q, q->not_empty, q->len > 0, timeout_ns);
    if (rc == PA_OK) {
        *item = q->ring[q->head];
        q->head = (q->head + 1) % q->cap;
        q->len--;
        pthread_cond_signal(&q->not_full);
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

void pa_queue_close(pa_queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->closed = 1;
    pthread_cond_broadcast(&q->not_full);
    pthread_cond_broadcast(&q->not_empty);
    pthread_mutex_unlock(&q->mu);
}

size_t pa_queue_length(pa_queue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->len;
    pthread_mutex_unlock(&q->mu);
    return n;
}

size_t pa_queue_capacity(const pa_queue *q) { return q->cap; }

bool pa_queue_closed(pa_queue *q)
{
    pthread_mutex_lock(&q->mu);
    bool c = q->closed;
    pthread_mutex_unlock(&q->mu);
    return c;
}
