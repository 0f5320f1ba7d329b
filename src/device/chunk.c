/*
 * chunk.c - chunks: column views plus the device buffers that back them,
 * freed together. The buffer list grows by doubling; a chunk typically holds
 * two or three buffers per column (values, offsets, validity).
 *
 * Stream order: a chunk may carry a ready event (its producer's stream) and a
 * list of use events (streams that read it and released their reference
 * before the last one). The last release makes its stream wait for every
 * use event and frees the buffers on that stream, so the frees come after
 * all queued work that reads them. Events are destroyed right after the
 * waits are enqueued: backends free them once those waits ran.
 */
#include "device/device_int.h"

#include <pthread.h>
#include <string.h>

/* The cpu device runs kernels on the calling thread: nothing to order. */
static bool ordered(const dv_chunk *c) { return c->dev->ops->kind != DV_KIND_CPU; }

int dv_chunk_create(dv_device *d, int n_columns, dv_chunk **out, pa_err *err)
{
    if (n_columns < 0)
        return pa_error(err, PA_EINVAL, "chunk with %d columns", n_columns);
    dv_chunk *c = pa_calloc(1, sizeof *c);
    pa_column *cols = pa_calloc(n_columns ? (size_t)n_columns : 1, sizeof *cols);
    if (!c || !cols) {
        pa_free(c);
        pa_free(cols);
        return pa_error(err, PA_ENOMEM, "out of host memory creating a chunk of %d columns", n_columns);
    }
    pthread_mutex_t *mu = NULL;
    if (d->ops->kind != DV_KIND_CPU && (mu = pa_malloc(sizeof *mu)) == NULL) {
        pa_free(c);
        pa_free(cols);
        return pa_error(err, PA_ENOMEM, "out of host memory creating a chunk of %d columns", n_columns);
    }
    if (mu)
        pthread_mutex_init(mu, NULL);
    c->mu_ = mu;
    c->dev = d;
    c->refs_ = 1;
    c->n_columns = n_columns;
    c->columns = cols;
    *out = c;
    return PA_OK;
}

/* Room for one more entry in a buffer list. */
static int grow_list(void ***list, int *n, int *cap, pa_err *err)
{
    if (*n < *cap)
        return PA_OK;
    int c = *cap ? *cap * 2 : 8;
    void **b = pa_realloc(*list, (size_t)c * sizeof *b);
    if (!b)
        return pa_error(err, PA_ENOMEM, "out of host memory tracking chunk buffers");
    *list = b;
    *cap = c;
    return PA_OK;
}

int dv_chunk_adopt(dv_chunk *c, void *ptr, pa_err *err)
{
    int rc = grow_list(&c->buffers_, &c->n_buffers_, &c->cap_buffers_, err);
    if (rc == PA_OK)
        c->buffers_[c->n_buffers_++] = ptr;
    return rc;
}

int dv_chunk_alloc(dv_chunk *c, size_t size, void **ptr, pa_err *err)
{
    void *p;
    int rc = grow_list(&c->buffers_, &c->n_buffers_, &c->cap_buffers_, err);
    if (rc != PA_OK || (rc = dv_alloc(c->dev, size, &p, err)) != PA_OK)
        return rc;
    c->buffers_[c->n_buffers_++] = p;
    *ptr = p;
    return PA_OK;
}

int dv_chunk_alloc_host(dv_chunk *c, size_t size, void **ptr, pa_err *err)
{
    void *p;
    int rc = grow_list(&c->pinned_, &c->n_pinned_, &c->cap_pinned_, err);
    if (rc != PA_OK || (rc = dv_host_alloc(c->dev, size, &p, err)) != PA_OK)
        return rc;
    c->pinned_[c->n_pinned_++] = p;
    *ptr = p;
    return PA_OK;
}

int dv_chunk_depend(dv_chunk *c, dv_chunk *other, pa_err *err)
{
    if (c->n_deps_ == c->cap_deps_) {
        int cap = c->cap_deps_ ? c->cap_deps_ * 2 : 4;
        dv_chunk **d = pa_realloc(c->deps_, (size_t)cap * sizeof *d);
        if (!d)
            return pa_error(err, PA_ENOMEM, "out of host memory tracking chunk references");
        c->deps_ = d;
        c->cap_deps_ = cap;
    }
    c->deps_[c->n_deps_++] = dv_chunk_retain(other);
    return PA_OK;
}

dv_chunk *dv_chunk_retain(dv_chunk *c)
{
    __atomic_add_fetch(&c->refs_, 1, __ATOMIC_RELAXED);
    return c;
}

/* Free everything; s (may be NULL: at once) is the stream the last
 * reference was released on. */
static void chunk_free(dv_chunk *c, dv_stream *s)
{
    bool synced = false;
    /* The producer's work first: a chunk let go before anyone waited for it
     * (a failed or stopped query) may still have kernels and copies writing
     * its buffers, which must not go back to the pool for another stream's
     * use before they finish. A chunk already complete costs no wait. */
    bool done = true;
    if (c->ready_ && (dv_event_query(c->ready_, &done, NULL) != PA_OK || !done) &&
        (!s || dv_stream_wait_event(s, c->ready_, NULL) != PA_OK))
        dv_event_sync(c->ready_, NULL);
    for (int i = 0; i < c->n_uses_; i++) {
        if (!synced && (!s || dv_stream_wait_event(s, c->uses_[i], NULL) != PA_OK)) {
            dv_event_sync(c->uses_[i], NULL);   /* no stream, or no memory to enqueue: wait here */
        }
        dv_event_destroy(c->uses_[i]);
    }
    for (int i = 0; i < c->n_buffers_; i++) {
        if (s)
            dv_free_async(s, c->buffers_[i], NULL);
        else
            dv_free(c->dev, c->buffers_[i]);
    }
    for (int i = 0; i < c->n_pinned_; i++) {
        if (s)
            dv_host_free_async(s, c->pinned_[i], NULL);
        else
            dv_host_free(c->dev, c->pinned_[i]);
    }
    /* The hook once the frees just queued have run: memory the holder
     * counts on is back in the pool by then. */
    if (c->on_free_ && (!s || dv_launch_host_fn(s, c->on_free_, c->on_free_arg_, NULL) != PA_OK))
        c->on_free_(c->on_free_arg_);
    for (int i = 0; i < c->n_deps_; i++)
        dv_chunk_release(c->deps_[i], s);
    dv_event_destroy(c->ready_);
    if (c->mu_) {
        pthread_mutex_destroy(c->mu_);
        pa_free(c->mu_);
    }
    pa_free(c->uses_);
    pa_free(c->pinned_);
    pa_free(c->deps_);
    pa_free(c->buffers_);
    pa_free(c->columns);
    pa_free(c);
}

void dv_chunk_on_free(dv_chunk *c, void (*fn)(void *arg), void *arg)
{
    c->on_free_ = fn;
    c->on_free_arg_ = arg;
}

void dv_chunk_destroy(dv_chunk *c)
{
    if (!c || __atomic_sub_fetch(&c->refs_, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    chunk_free(c, NULL);
}

/* Record on s that it read c; false when that could not be enqueued. */
static bool add_use(dv_chunk *c, dv_stream *s)
{
    dv_event *e = NULL;
    if (dv_event_create(c->dev, &e, NULL) != PA_OK || dv_event_record(e, s, NULL) != PA_OK) {
        dv_event_destroy(e);
        return false;
    }
    pthread_mutex_lock(c->mu_);
    bool ok = true;
    if (c->n_uses_ == c->cap_uses_) {
        int cap = c->cap_uses_ ? c->cap_uses_ * 2 : 4;
        dv_event **u = pa_realloc(c->uses_, (size_t)cap * sizeof *u);
        if ((ok = u != NULL)) {
            c->uses_ = u;
            c->cap_uses_ = cap;
        }
    }
    if (ok)
        c->uses_[c->n_uses_++] = e;
    pthread_mutex_unlock(c->mu_);
    if (!ok)
        dv_event_destroy(e);
    return ok;
}

void dv_chunk_release(dv_chunk *c, dv_stream *s)
{
    if (!c)
        return;
    if (!s || !ordered(c)) {
        dv_chunk_destroy(c);
        return;
    }
    int refs = __atomic_load_n(&c->refs_, __ATOMIC_ACQUIRE);
    if (refs > 1 && !add_use(c, s)) {
        /* Another holder may free it first and cannot know about our work. */
        pa_counter_add(PA_CTR_HOST_SYNCS, 1);
        dv_stream_sync(s, NULL);
    }
    if (__atomic_sub_fetch(&c->refs_, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    chunk_free(c, s);
}

int dv_chunk_set_ready(dv_chunk *c, dv_stream *s, pa_err *err)
{
    if (!ordered(c))
        return PA_OK;
    if ((c->ready_ || dv_event_create(c->dev, &c->ready_, NULL) == PA_OK) &&
        dv_event_record(c->ready_, s, NULL) == PA_OK)
        return PA_OK;
    /* No memory to record the event: the work that writes c is finished
     * once s drains, so a consumer that sees no (or an older) event waits
     * for nothing that is still queued. */
    pa_counter_add(PA_CTR_HOST_SYNCS, 1);
    return dv_stream_sync(s, err);
}

int dv_chunk_wait_ready(dv_chunk *c, dv_stream *s, pa_err *err)
{
    if (!ordered(c) || !c->ready_)
        return PA_OK;
    if (dv_stream_wait_event(s, c->ready_, NULL) == PA_OK)
        return PA_OK;
    /* The wait could not be enqueued (no memory): wait here instead, so
     * that whatever s does next with c (a kernel, or the release that
     * frees it) still comes after the work that wrote it. */
    pa_counter_add(PA_CTR_HOST_SYNCS, 1);
    return dv_event_sync(c->ready_, err);
}

size_t dv_chunk_bytes(const dv_chunk *c)
{
    size_t n = 0;
    for (int i = 0; i < c->n_buffers_; i++)
        n += pa_mempool_block_size(c->dev->pool, c->buffers_[i]);
    return n;
}
