/*
 * backend_cpu.c - the `cpu` device: device memory is host memory, a stream is
 * an ordered queue of operations drained by one thread-pool task at a time.
 * The `sim` device (backend_sim.c) runs on the same streams; when the stream's
 * device is sim, operations that touch device memory open it around their
 * run (dv__sim_enter / dv__sim_leave), and a stream that was idle waits the
 * sim delay before it runs new work.
 *
 * A kernel that fails makes its stream's error sticky: later copies, fills
 * and kernels on the stream are skipped (frees, records and host functions
 * still run, so nothing leaks or hangs), each record hands the error to its
 * event, and dv_stream_sync returns it.
 *
 * Streams never block a pool worker: an operation that waits for an event
 * whose record has not run yet parks the stream on the event's waiter list
 * and the drain task returns; the record operation, when it runs,
 * reschedules every parked stream. So any number of streams share a pool of
 * any size (even one thread) without deadlock.
 *
 * Events count records: `recorded` is bumped when dv_event_record is called,
 * `completed` when that record operation runs. A wait captures `recorded` at
 * the time it is enqueued (CUDA semantics: the most recent record as of the
 * call) and is satisfied once `completed` reaches it.
 */
#include "device/device_int.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum op_kind { OP_COPY, OP_BATCH, OP_HOST_FN, OP_FILL, OP_RECORD, OP_WAIT, OP_KERNEL, OP_FREE, OP_INHERIT };

typedef struct cpu_event cpu_event;

typedef struct op {
    enum op_kind kind;
    struct op *next;
    union {
        struct { void *dst; const void *src; size_t n; } copy;
        struct { size_t count; void **dsts; const void **srcs; size_t *sizes; } batch;
        struct { void (*fn)(void *); void *arg; } host;
        struct { uint32_t *dst; uint32_t value; size_t count; } fill;
        struct { cpu_event *ev; uint64_t gen; } event;
        struct { dv_kernel_fn fn; void *args; } kernel;
        struct { void *ptr; } free;
        struct { const int64_t *from; int64_t *to; } inherit;
    } u;
} op;

typedef struct cpu_stream {
    pthread_mutex_t mu;
    pthread_cond_t drained;
    op *head, *tail;
    int scheduled;      /* a drain task is queued or running */
    int parked;         /* waiting on an event; the drain task has returned */
    int fresh;          /* sim: work arrived while idle; wait the delay first */
    uint64_t enqueued, completed;   /* operations; a record counts as completed
                                       just before it signals its event */
    pa_threadpool *tp;
    pa_task_node drain_node;   /* the pending drain task's queue node (never allocated) */
    dv_device *dev;
    struct cpu_stream *next_waiter;
    struct cpu_stream *dev_prev, *dev_next;   /* the device's open streams */
    int quiesce_waiters;   /* threads in dv__cpu_quiesce waiting on this stream */
    pa_err err;         /* sticky: the first kernel error (read under mu) */
} cpu_stream;

struct cpu_event {
    pthread_mutex_t mu;
    pthread_cond_t done;
    uint64_t recorded, completed;
    cpu_stream *waiters;   /* parked streams */
    int err_code;          /* the error of the stream that completed the last record */
    char err_msg[512];
    int refs;              /* the handle + queued records and waits (atomic) */
};

/* Events may be destroyed while records and waits on them are queued (as
 * CUDA allows): the last of the handle and those operations frees it. */
static void event_unref(cpu_event *e)
{
    if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->done);
    pa_free(e);
}

/* Operations run per drain task before it yields the worker to other streams. */
#define DRAIN_BATCH 64

static void drain(void *arg);

static bool is_sim(const cpu_stream *s) { return s->dev->ops->kind == DV_KIND_SIM; }

static void schedule_locked(cpu_stream *s)
{
    if (!s->scheduled && !s->parked && s->head) {
        s->scheduled = 1;   /* at most one drain task: the stream's own node serves it */
        pa_threadpool_submit_node(s->tp, &s->drain_node, drain, s);
    }
}

/* Copies, fills and kernels touch device memory: on sim the drain opens it
 * around a run of them (see drain). Returns the kernel's status (PA_OK for
 * the others). */
static int run_device_op(cpu_stream *s, op *o)
{
    int rc = PA_OK;
    switch (o->kind) {
    case OP_COPY:
        if (o->u.copy.n && o->u.copy.dst != o->u.copy.src)
            memmove(o->u.copy.dst, o->u.copy.src, o->u.copy.n);
        break;
    case OP_BATCH:
        for (size_t i = 0; i < o->u.batch.count; i++)
            if (o->u.batch.sizes[i] && o->u.batch.dsts[i] != o->u.batch.srcs[i])
                memmove(o->u.batch.dsts[i], o->u.batch.srcs[i], o->u.batch.sizes[i]);
        break;
    case OP_FILL:
        for (size_t i = 0; i < o->u.fill.count; i++)
            o->u.fill.dst[i] = o->u.fill.value;
        break;
    case OP_KERNEL: {
        pa_err kerr;
        pa_err_init(&kerr);
        rc = o->u.kernel.fn(o->u.kernel.args, &kerr);
        if (rc != PA_OK) {
            pthread_mutex_lock(&s->mu);
            if (kerr.code != PA_OK)
                pa_err_propagate(&s->err, &kerr);
            else
                pa_error(&s->err, rc, "a kernel on %s failed (%s)", s->dev->name, pa_status_name(rc));
            pthread_mutex_unlock(&s->mu);
        }
        pa_err_close(&kerr);
        break;
    }
    default:
        break;
    }
    return rc;
}

static bool touches_memory(const op *o)
{
    return o->kind == OP_COPY || o->kind == OP_BATCH || o->kind == OP_FILL || o->kind == OP_KERNEL;
}

/* sim: device memory is opened once for a run of consecutive copies, fills
 * and kernels of one drain (mprotect is costly), and closed before anything
 * else: a host function, a record that may wake the host, the drain's end. */
static void set_open(cpu_stream *s, bool *open, bool want)
{
    if (*open == want || !is_sim(s))
        return;
    if (want)
        dv__sim_enter(s->dev);
    else
        dv__sim_leave(s->dev);
    *open = want;
}

static void complete_record(cpu_stream *s, op *o)
{
    cpu_event *ev = o->u.event.ev;
    pthread_mutex_lock(&s->mu);
    int code = s->err.code;
    s->completed++;   /* whoever the event wakes sees this stream idle if it is */
    pthread_mutex_lock(&ev->mu);
    if (o->u.event.gen > ev->completed)
        ev->completed = o->u.event.gen;
    ev->err_code = code;
    if (code != PA_OK)
        snprintf(ev->err_msg, sizeof ev->err_msg, "%s", s->err.msg);
    cpu_stream *w = ev->waiters;
    ev->waiters = NULL;
    pthread_cond_broadcast(&ev->done);
    pthread_mutex_unlock(&ev->mu);
    pthread_mutex_unlock(&s->mu);
    while (w) {
        cpu_stream *next = w->next_waiter;
        pthread_mutex_lock(&w->mu);
        w->parked = 0;
        schedule_locked(w);
        pthread_mutex_unlock(&w->mu);
        w = next;
    }
}

static void run_op(cpu_stream *s, op *o)
{
    switch (o->kind) {
    case OP_COPY:
    case OP_BATCH:
    case OP_FILL:
    case OP_KERNEL: {
        pthread_mutex_lock(&s->mu);
        int failed = s->err.code != PA_OK;
        pthread_mutex_unlock(&s->mu);
        if (!failed)
            run_device_op(s, o);
        break;
    }
    case OP_HOST_FN:
        o->u.host.fn(o->u.host.arg);
        break;
    case OP_FREE:
        dv__free_now(s->dev, o->u.free.ptr);
        break;
    case OP_RECORD:
        complete_record(s, o);
        break;
    case OP_WAIT: {   /* satisfied (drain parks on it until then) */
        /* A kernel error of the event's stream becomes this stream's: the
         * work after the wait must not run on what that stream left. Lock
         * order: stream, then event. */
        cpu_event *ev = o->u.event.ev;
        pthread_mutex_lock(&s->mu);
        pthread_mutex_lock(&ev->mu);
        if (s->err.code == PA_OK && ev->err_code != PA_OK)
            pa_error(&s->err, ev->err_code, "%s", ev->err_msg);
        pthread_mutex_unlock(&ev->mu);
        pthread_mutex_unlock(&s->mu);
        break;
    }
    case OP_INHERIT:   /* fault blocks are pinned memory: no need to open */
        dv__fault_inherit(o->u.inherit.from, o->u.inherit.to);
        break;
    }
}

static void free_op(op *o)
{
    if (o->kind == OP_BATCH)
        pa_free(o->u.batch.dsts);   /* one allocation holds all three arrays */
    else if (o->kind == OP_KERNEL)
        pa_free(o->u.kernel.args);
    else if (o->kind == OP_RECORD || o->kind == OP_WAIT)
        event_unref(o->u.event.ev);
    pa_free(o);
}

/* If the head op is an unsatisfied wait, park s on the event and return 1.
 * Called with s->mu held. Lock order: stream, then event. */
static int park_if_blocked(cpu_stream *s)
{
    op *o = s->head;
    if (o->kind != OP_WAIT)
        return 0;
    cpu_event *ev = o->u.event.ev;
    pthread_mutex_lock(&ev->mu);
    int blocked = ev->completed < o->u.event.gen;
    if (blocked) {
        s->parked = 1;
        s->next_waiter = ev->waiters;
        ev->waiters = s;
    }
    pthread_mutex_unlock(&ev->mu);
    return blocked;
}

static void drain(void *arg)
{
    cpu_stream *s = arg;
    pthread_mutex_lock(&s->mu);
    if (s->fresh) {   /* sim: let the caller run ahead of its work */
        s->fresh = 0;
        int us = dv__sim_delay_us(s->dev);
        if (us > 0) {
            pthread_mutex_unlock(&s->mu);
            struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
            nanosleep(&ts, NULL);
            pthread_mutex_lock(&s->mu);
        }
    }
    bool open = false;
    for (int n = 0;; n++) {
        /* Close device memory before anything but a device operation, with
         * the lock dropped; then look at the queue again. */
        if (open && (!s->head || n == DRAIN_BATCH || !touches_memory(s->head))) {
            pthread_mutex_unlock(&s->mu);
            set_open(s, &open, false);
            pthread_mutex_lock(&s->mu);
        }
        if (!s->head)
            break;
        if (n == DRAIN_BATCH) {   /* yield: requeue behind other streams */
            s->scheduled = 0;
            schedule_locked(s);
            pthread_mutex_unlock(&s->mu);
            return;
        }
        if (park_if_blocked(s)) {
            s->scheduled = 0;
            pthread_mutex_unlock(&s->mu);
            return;
        }
        op *o = s->head;
        pthread_mutex_unlock(&s->mu);
        set_open(s, &open, touches_memory(o));
        run_op(s, o);
        pthread_mutex_lock(&s->mu);
        if (o->kind != OP_RECORD)
            s->completed++;
        s->head = o->next;
        if (!s->head)
            s->tail = NULL;
        free_op(o);
        if (s->quiesce_waiters)
            pthread_cond_broadcast(&s->drained);
    }
    s->scheduled = 0;
    pthread_cond_broadcast(&s->drained);
    pthread_mutex_unlock(&s->mu);
}

static int enqueue(dv_stream *st, op *o, pa_err *err)
{
    cpu_stream *s = st->impl;
    o->next = NULL;
    pthread_mutex_lock(&s->mu);
    if (s->tail)
        s->tail->next = o;
    else
        s->head = o;
    s->tail = o;
    s->enqueued++;
    if (!s->scheduled && !s->parked && is_sim(s))
        s->fresh = 1;
    schedule_locked(s);
    pthread_mutex_unlock(&s->mu);
    return PA_OK;
}

static op *new_op(enum op_kind kind, pa_err *err)
{
    op *o = pa_calloc(1, sizeof *o);
    if (!o)
        pa_error(err, PA_ENOMEM, "cpu device: out of host memory enqueuing an operation");
    else
        o->kind = kind;
    return o;
}

/* ------------------------------------------------------------ devices */

static uint64_t physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    return pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;
}

static int cpu_enumerate(dv_info *out, int cap, int *n, char *note, size_t note_cap)
{
    if (cap > 0) {
        memset(&out[0], 0, sizeof out[0]);
        snprintf(out[0].name, sizeof out[0].name, "cpu");
        snprintf(out[0].model, sizeof out[0].model, "host CPU, %ld cores", sysconf(_SC_NPROCESSORS_ONLN));
        out[0].memory = physical_memory();
    }
    *n = 1;
    return PA_OK;
}

int dv__cpu_threads_open(dv_device *d, const dv_options *opt, pa_err *err)
{
    return pa_threadpool_create(opt->cpu_threads, &d->threads, err);
}

void dv__cpu_threads_close(dv_device *d)
{
    pa_threadpool_destroy(d->threads);
    d->threads = NULL;
}

static int cpu_open(dv_device *d, int ordinal, const dv_options *opt, pa_err *err)
{
    if (ordinal != 0)
        return pa_error(err, PA_EDEVICE, "there is one cpu device (cpu), not cpu:%d", ordinal);
    int rc = dv__cpu_threads_open(d, opt, err);
    if (rc != PA_OK)
        return rc;
    snprintf(d->model, sizeof d->model, "host CPU, %d threads", pa_threadpool_size(d->threads));
    d->memory_total = physical_memory();
    d->host_visible = true;
    return PA_OK;
}

static void cpu_close(dv_device *d)
{
    dv__cpu_threads_close(d);
}

/* Regions come straight from mmap: page aligned, returned to the OS on free. */
static int cpu_mem_alloc(void *user, size_t size, void **out, pa_err *err)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return pa_error(err, PA_ENOMEM, "cpu device: mmap of %zu bytes failed", size);
    *out = p;
    return PA_OK;
}

static void cpu_mem_free(void *user, void *p, size_t size)
{
    munmap(p, size);
}

/* ------------------------------------------------------------ streams */

static int cpu_stream_create(dv_device *d, void **impl, pa_err *err)
{
    cpu_stream *s = pa_calloc(1, sizeof *s);
    if (!s)
        return pa_error(err, PA_ENOMEM, "cpu device: out of host memory creating a stream");
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->drained, NULL);
    pa_err_init(&s->err);
    s->tp = d->threads;
    s->dev = d;
    pthread_mutex_lock(&d->streams_lock);
    s->dev_next = d->streams;
    if (s->dev_next)
        s->dev_next->dev_prev = s;
    d->streams = s;
    pthread_mutex_unlock(&d->streams_lock);
    *impl = s;
    return PA_OK;
}

static void cpu_stream_destroy(dv_device *d, void *impl)
{
    cpu_stream *s = impl;
    pthread_mutex_lock(&d->streams_lock);
    if (s->dev_prev)
        s->dev_prev->dev_next = s->dev_next;
    else
        d->streams = s->dev_next;
    if (s->dev_next)
        s->dev_next->dev_prev = s->dev_prev;
    pthread_mutex_unlock(&d->streams_lock);
    pa_err_close(&s->err);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->drained);
    pa_free(s);
}

static int cpu_stream_sync(dv_stream *st, pa_err *err)
{
    cpu_stream *s = st->impl;
    pthread_mutex_lock(&s->mu);
    while (s->head || s->scheduled)
        pthread_cond_wait(&s->drained, &s->mu);
    int rc = s->err.code != PA_OK ? pa_err_propagate(err, &s->err) : PA_OK;
    pthread_mutex_unlock(&s->mu);
    return rc;
}

void dv__cpu_quiesce(dv_device *d)
{
    pthread_mutex_lock(&d->streams_lock);
    for (cpu_stream *s = d->streams; s; s = s->dev_next) {
        pthread_mutex_lock(&s->mu);
        uint64_t target = s->enqueued;
        s->quiesce_waiters++;
        while (s->completed < target)
            pthread_cond_wait(&s->drained, &s->mu);
        s->quiesce_waiters--;
        pthread_mutex_unlock(&s->mu);
    }
    pthread_mutex_unlock(&d->streams_lock);
}

static int cpu_stream_query(dv_stream *st, bool *idle, pa_err *err)
{
    cpu_stream *s = st->impl;
    pthread_mutex_lock(&s->mu);
    *idle = s->completed == s->enqueued;   /* the drain task may still be leaving */
    pthread_mutex_unlock(&s->mu);
    return PA_OK;
}

/* ------------------------------------------------------------- events */

static int cpu_event_create(dv_device *d, void **impl, pa_err *err)
{
    cpu_event *e = pa_calloc(1, sizeof *e);
    if (!e)
        return pa_error(err, PA_ENOMEM, "cpu device: out of host memory creating an event");
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->done, NULL);
    e->refs = 1;
    *impl = e;
    return PA_OK;
}

static void cpu_event_destroy(dv_device *d, void *impl)
{
    event_unref(impl);
}

static int cpu_event_record(dv_event *ev, dv_stream *st, pa_err *err)
{
    cpu_event *e = ev->impl;
    op *o = new_op(OP_RECORD, err);
    if (!o)
        return PA_ENOMEM;
    pthread_mutex_lock(&e->mu);
    o->u.event.ev = e;
    o->u.event.gen = ++e->recorded;
    pthread_mutex_unlock(&e->mu);
    __atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
    return enqueue(st, o, err);
}

static int cpu_stream_wait_event(dv_stream *st, dv_event *ev, pa_err *err)
{
    cpu_event *e = ev->impl;
    pthread_mutex_lock(&e->mu);
    uint64_t target = e->recorded;
    int done = e->completed >= target && e->err_code == PA_OK;
    pthread_mutex_unlock(&e->mu);
    if (done)
        return PA_OK;   /* nothing to wait for, no error to take */
    op *o = new_op(OP_WAIT, err);
    if (!o)
        return PA_ENOMEM;
    o->u.event.ev = e;
    o->u.event.gen = target;
    __atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
    return enqueue(st, o, err);
}

/* The error the completed record carried. Called with e->mu held. */
static int event_error_locked(cpu_event *e, pa_err *err)
{
    if (e->err_code == PA_OK)
        return PA_OK;
    return pa_error(err, e->err_code, "%s", e->err_msg);
}

static int cpu_event_query(dv_event *ev, bool *done, pa_err *err)
{
    cpu_event *e = ev->impl;
    pthread_mutex_lock(&e->mu);
    *done = e->completed >= e->recorded;
    int rc = *done ? event_error_locked(e, err) : PA_OK;
    pthread_mutex_unlock(&e->mu);
    return rc;
}

static int cpu_event_sync(dv_event *ev, pa_err *err)
{
    cpu_event *e = ev->impl;
    pthread_mutex_lock(&e->mu);
    uint64_t target = e->recorded;
    while (e->completed < target)
        pthread_cond_wait(&e->done, &e->mu);
    int rc = event_error_locked(e, err);
    pthread_mutex_unlock(&e->mu);
    return rc;
}

/* --------------------------------------------------------------- work */

static int cpu_copy(dv_stream *st, void *dst, const void *src, size_t n, dv_copy_kind kind, pa_err *err)
{
    op *o = new_op(OP_COPY, err);
    if (!o)
        return PA_ENOMEM;
    o->u.copy.dst = dst;
    o->u.copy.src = src;
    o->u.copy.n = n;
    return enqueue(st, o, err);
}

static int cpu_copy_batch(dv_stream *st, size_t count, void *const *dsts, const void *const *srcs,
                          const size_t *sizes, dv_copy_kind kind, pa_err *err)
{
    op *o = new_op(OP_BATCH, err);
    if (!o)
        return PA_ENOMEM;
    /* Copy the caller's arrays: they may be reused once we return. */
    void **arr = pa_malloc(count * (2 * sizeof(void *) + sizeof(size_t)) + 1);
    if (!arr) {
        pa_free(o);
        return pa_error(err, PA_ENOMEM, "cpu device: out of host memory for a batch of %zu copies", count);
    }
    o->u.batch.count = count;
    o->u.batch.dsts = arr;
    o->u.batch.srcs = (const void **)(arr + count);
    o->u.batch.sizes = (size_t *)(arr + 2 * count);
    memcpy(o->u.batch.dsts, dsts, count * sizeof(void *));
    memcpy(o->u.batch.srcs, srcs, count * sizeof(void *));
    memcpy(o->u.batch.sizes, sizes, count * sizeof(size_t));
    return enqueue(st, o, err);
}

static int cpu_host_fn(dv_stream *st, void (*fn)(void *), void *arg, pa_err *err)
{
    op *o = new_op(OP_HOST_FN, err);
    if (!o)
        return PA_ENOMEM;
    o->u.host.fn = fn;
    o->u.host.arg = arg;
    return enqueue(st, o, err);
}

static int cpu_fill_u32(dv_stream *st, void *dst, uint32_t value, size_t count, pa_err *err)
{
    op *o = new_op(OP_FILL, err);
    if (!o)
        return PA_ENOMEM;
    o->u.fill.dst = dst;
    o->u.fill.value = value;
    o->u.fill.count = count;
    return enqueue(st, o, err);
}

static int cpu_launch(dv_stream *st, dv_kernel_fn fn, const void *args, size_t args_size, pa_err *err)
{
    op *o = new_op(OP_KERNEL, err);
    if (!o)
        return PA_ENOMEM;
    void *copy = pa_malloc(args_size ? args_size : 1);
    if (!copy) {
        pa_free(o);
        return pa_error(err, PA_ENOMEM, "%s: out of host memory for a kernel's %zu bytes of arguments",
                        st->dev->name, args_size);
    }
    if (args_size)
        memcpy(copy, args, args_size);
    o->u.kernel.fn = fn;
    o->u.kernel.args = copy;
    return enqueue(st, o, err);
}

static int cpu_fault_inherit(dv_stream *st, const int64_t *from, int64_t *to, pa_err *err)
{
    op *o = new_op(OP_INHERIT, err);
    if (!o)
        return PA_ENOMEM;
    o->u.inherit.from = from;
    o->u.inherit.to = to;
    return enqueue(st, o, err);
}

static int cpu_free_async(dv_stream *st, void *ptr, pa_err *err)
{
    op *o = new_op(OP_FREE, err);
    if (!o)
        return PA_ENOMEM;
    o->u.free.ptr = ptr;
    return enqueue(st, o, err);
}

/* The stream, event and work entries the cpu and sim devices share. */
#define CPU_STREAM_OPS                              \
    .stream_create = cpu_stream_create,             \
    .stream_destroy = cpu_stream_destroy,           \
    .stream_sync = cpu_stream_sync,                 \
    .event_create = cpu_event_create,               \
    .event_destroy = cpu_event_destroy,             \
    .event_record = cpu_event_record,               \
    .stream_wait_event = cpu_stream_wait_event,     \
    .event_query = cpu_event_query,                 \
    .event_sync = cpu_event_sync,                   \
    .copy = cpu_copy,                               \
    .copy_batch = cpu_copy_batch,                   \
    .host_fn = cpu_host_fn,                         \
    .fill_u32 = cpu_fill_u32,                       \
    .stream_query = cpu_stream_query,               \
    .launch = cpu_launch,                           \
    .free_async = cpu_free_async,                   \
    .fault_inherit = cpu_fault_inherit

const dv_ops dv__cpu_ops = {
    .name = "cpu",
    .kind = DV_KIND_CPU,
    .enumerate = cpu_enumerate,
    .open = cpu_open,
    .close = cpu_close,
    .mem_alloc = cpu_mem_alloc,
    .mem_free = cpu_mem_free,
    .pinned_alloc = cpu_mem_alloc,
    .pinned_free = cpu_mem_free,
    CPU_STREAM_OPS,
};

/* Pinned memory of the sim device: host memory, allocated after the queued
 * work has run, as cudaHostAlloc may wait for it. Not on one of the
 * device's own executor threads (a task decoding for a scan): the queued
 * work may need that very thread, and a GPU's work goes on without it. */
static int sim_pinned_alloc(void *user, size_t size, void **out, pa_err *err)
{
    dv_device *d = user;
    if (pa_threadpool_self() != d->threads)
        dv__cpu_quiesce(d);
    return cpu_mem_alloc(user, size, out, err);
}

const dv_ops dv__sim_ops = {
    .name = "sim",
    .kind = DV_KIND_SIM,
    .enumerate = dv__sim_enumerate,
    .open = dv__sim_open,
    .close = dv__sim_close,
    .mem_alloc = dv__sim_mem_alloc,
    .mem_free = dv__sim_mem_free,
    .pinned_alloc = sim_pinned_alloc,
    .pinned_free = cpu_mem_free,
    CPU_STREAM_OPS,
};
