/*
 * mem.c - memory accounting of operators: state from the device pool
 * (ex_alloc/ex_free, counted in op->mem_cur/mem_peak and so in the query's
 * pool peak), output chunks (ex_chunk_new/ex_chunk_alloc), and out-of-memory
 * messages that name the operator.
 *
 * Chunk buffers are accounted at allocation only: the bytes count towards
 * op->mem_peak as if held (a chunk's life is short: it is consumed by the
 * next operator), but are not subtracted when the chunk dies, because a
 * chunk may outlive its operator (RESULT chunks outlive the plan). The
 * device pool itself tracks what is really live (ex_query_stats.mem_peak).
 * So op->mem_peak = max over time of (state bytes held + the buffer being
 * allocated for an output chunk).
 */
#include "exec/sched_int.h"

#include <stdio.h>
#include <string.h>

static void account(ex_op *op, int64_t delta)
{
    uint64_t cur = __atomic_add_fetch(&op->mem_cur, (uint64_t)delta, __ATOMIC_RELAXED);
    uint64_t peak = __atomic_load_n(&op->mem_peak, __ATOMIC_RELAXED);
    while (cur > peak &&
           !__atomic_compare_exchange_n(&op->mem_peak, &peak, cur, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static dv_device *op_device(ex_op *op)
{
    return op->plan && op->plan->q ? op->plan->q->dev : NULL;
}

int ex__oom_role(ex_op *op, const char *role, int rc, pa_err *err)
{
    if (rc != PA_ENOMEM || !err || err->code != PA_ENOMEM)
        return rc;
    static const char prefix[] = "out of memory in ";
    if (!strncmp(err->msg, prefix, sizeof prefix - 1))
        return rc;   /* already names an operator */
    char named[sizeof err->msg];
    if (role)
        snprintf(named, sizeof named, "%s%s (%s): %s", prefix, op->label, role, err->msg);
    else
        snprintf(named, sizeof named, "%s%s: %s", prefix, op->label, err->msg);
    memcpy(err->msg, named, sizeof err->msg);
    return rc;
}

int ex_oom(ex_op *op, int rc, pa_err *err)
{
    return ex__oom_role(op, NULL, rc, err);
}

int ex_alloc(ex_op *op, size_t size, void **ptr, pa_err *err)
{
    dv_device *d = op_device(op);
    if (!d)
        return pa_error(err, PA_EINVAL, "%s: memory asked for outside a run", op->label);
    pa_err e;
    pa_err_init(&e);
    int rc = dv_alloc(d, size, ptr, &e);
    if (rc == PA_OK)
        account(op, (int64_t)size);
    else if (rc == PA_ENOMEM)
        pa_error(err, rc, "out of memory in %s: %s", op->label, e.msg);
    else
        pa_err_propagate(err, &e);
    pa_err_close(&e);
    return rc;
}

/* The stream work enqueued by this thread goes on: a worker's, or the
 * finalize stream while the coordinator finalizes; NULL elsewhere. */
static __thread dv_stream *tls_stream;

void ex__set_thread_stream(dv_stream *s) { tls_stream = s; }

void ex_free(ex_op *op, void *ptr, size_t size)
{
    if (!ptr)
        return;
    dv_device *d = op_device(op);
    /* On cpu the thread's kernels ran before they returned: nothing to wait for. */
    if (d && tls_stream && dv_stream_device(tls_stream) == d && dv_kind_of(d) != DV_KIND_CPU)
        dv_free_async(tls_stream, ptr, NULL);   /* after the kernels this thread enqueued */
    else if (d)
        dv_free(d, ptr);
    account(op, -(int64_t)size);
}

int ex_chunk_new(ex_op *op, ex_worker *w, int n_columns, dv_chunk **out, pa_err *err)
{
    dv_device *d = w ? w->dev : op_device(op);
    if (!d)
        return pa_error(err, PA_EINVAL, "%s: chunk asked for outside a run", op->label);
    int rc = dv_chunk_create(d, n_columns, out, err);
    return rc == PA_ENOMEM ? ex_oom(op, rc, err) : rc;
}

int ex_chunk_alloc(ex_op *op, dv_chunk *c, size_t size, void **ptr, pa_err *err)
{
    pa_err e;
    pa_err_init(&e);
    int rc = dv_chunk_alloc(c, size, ptr, &e);
    if (rc == PA_OK) {
        /* Counted as a transient peak (see the file comment). */
        account(op, (int64_t)size);
        account(op, -(int64_t)size);
    } else if (rc == PA_ENOMEM) {
        pa_error(err, rc, "out of memory in %s: %s", op->label, e.msg);
    } else {
        pa_err_propagate(err, &e);
    }
    pa_err_close(&e);
    return rc;
}

int ex_to_device(ex_op *op, ex_worker *w, void *dst, const void *src, size_t n, pa_err *err)
{
    if (n == 0)
        return PA_OK;
    if (dv_host_visible(w->dev)) {
        memcpy(dst, src, n);
        return PA_OK;
    }
    void *stage;
    int rc = dv_host_alloc(w->dev, n, &stage, err);
    if (rc != PA_OK)
        return ex_oom(op, rc, err);
    memcpy(stage, src, n);
    if ((rc = dv_copy_async(w->stream, dst, stage, n, DV_COPY_H2D, err)) != PA_OK) {
        dv_host_free(w->dev, stage);
        return rc;
    }
    return dv_host_free_async(w->stream, stage, err);
}

int ex_zero_offset(ex_op *op, ex_worker *w, int32_t *offsets, pa_err *err)
{
    if (dv_host_visible(w->dev)) {
        offsets[0] = 0;
        return PA_OK;
    }
    return dv_fill_u32_async(w->stream, offsets, 0, 1, err);
}

int ex_pending_ready(ex_worker *w, ex_pending *p, bool *ready, pa_err *err)
{
    *ready = true;
    if (dv_kind_of(w->dev) == DV_KIND_CPU)
        return PA_OK;
    int rc;
    if (!p->ev && (rc = dv_event_create(w->dev, &p->ev, err)) != PA_OK)
        return rc;
    if (!p->recorded) {
        if ((rc = dv_event_record(p->ev, w->stream, err)) != PA_OK)
            return rc;
        p->recorded = true;
    }
    if ((rc = dv_event_query(p->ev, ready, err)) != PA_OK)
        return rc;
    if (*ready)
        p->recorded = false;
    else
        w->wait = p->ev;
    return PA_OK;
}

void ex_pending_close(ex_pending *p)
{
    dv_event_destroy(p->ev);
    p->ev = NULL;
    p->recorded = false;
}

void ex_pinned_free(dv_device *d, dv_stream *s, void *p)
{
    if (!p)
        return;
    if (s && dv_kind_of(d) != DV_KIND_CPU)
        dv_host_free_async(s, p, NULL);
    else
        dv_host_free(d, p);
}
