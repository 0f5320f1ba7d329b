/*
 * device.c - device selection, the memory pools, and the wrappers every
 * caller goes through. The wrappers validate arguments and keep the
 * counters, so the backends stay thin and count identically.
 */
#include "device/device_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB (1024ull * 1024)
#define GiB (1024ull * MiB)

static const dv_ops *backend_for(dv_kind kind)
{
#ifdef PISTA_HAVE_CUDA
    if (kind == DV_KIND_CUDA)
        return &dv__cuda_ops;
#endif
    if (kind == DV_KIND_SIM)
        return &dv__sim_ops;
    return kind == DV_KIND_CPU ? &dv__cpu_ops : NULL;
}

int dv_enumerate(dv_info *out, int cap, int *n, char *note, size_t note_cap)
{
    int total = 0, k = 0;
    if (note && note_cap)
        note[0] = '\0';
    dv__cpu_ops.enumerate(out, cap, &k, NULL, 0);
    total += k;
    k = 0;
    dv__sim_ops.enumerate(cap > total ? out + total : NULL, cap > total ? cap - total : 0, &k, NULL, 0);
    total += k;
#ifdef PISTA_HAVE_CUDA
    k = 0;
    dv__cuda_ops.enumerate(cap > total ? out + total : NULL, cap > total ? cap - total : 0, &k, note, note_cap);
    total += k;
#else
    if (note && note_cap)
        snprintf(note, note_cap, "this build has no CUDA backend (nvcc was not found when it was built)");
#endif
    *n = total;
    return PA_OK;
}

/* Parse "cpu", "sim", "cuda", "cuda:N"; "auto" is handled by the caller. */
static int parse_spec(const char *spec, dv_kind *kind, int *ordinal, pa_err *err)
{
    *ordinal = 0;
    if (!strcmp(spec, "cpu") || !strcmp(spec, "sim")) {
        *kind = spec[0] == 'c' ? DV_KIND_CPU : DV_KIND_SIM;
        return PA_OK;
    }
    if (!strncmp(spec, "cuda", 4) && (spec[4] == '\0' || spec[4] == ':')) {
        *kind = DV_KIND_CUDA;
        if (spec[4] == ':') {
            char *end;
            long v = strtol(spec + 5, &end, 10);
            if (end == spec + 5 || *end || v < 0 || v > 1023)
                return pa_error(err, PA_EINVAL, "device '%s': expected cuda:N with N a device number", spec);
            *ordinal = (int)v;
        }
        return PA_OK;
    }
    return pa_error(err, PA_EINVAL, "unknown device '%s' (use auto, cpu, sim, cuda or cuda:N)", spec);
}

static int make_pools(dv_device *d, const dv_options *opt, pa_err *err)
{
    uint64_t limit = opt->memory_limit;
    if (!limit) {
        int rc = pa_memory_limit_from_env(&limit, err);
        if (rc != PA_OK)
            return rc;
    }
    if (!limit)   /* default: most of the device, leaving room for the rest of the system */
        limit = d->memory_total ? d->memory_total / 10 * (d->host_visible ? 7 : 9) : 4 * GiB;
    uint64_t pinned_limit = opt->pinned_limit ? opt->pinned_limit : (limit / 4 > 64 * MiB ? limit / 4 : 64 * MiB);

    char name[64];
    snprintf(name, sizeof name, "%s device", d->name);
    pa_mempool_config dc = {.name = name, .limit = limit,
                            .grow_size = d->ops->kind == DV_KIND_CUDA ? 1 * GiB : 64 * MiB, .alignment = 256};
    pa_upstream du = {d->ops->mem_alloc, d->ops->mem_free, d};
    int rc = pa_mempool_create(&dc, du, &d->pool, err);
    if (rc != PA_OK)
        return rc;
    snprintf(name, sizeof name, "%s pinned host", d->name);
    pa_mempool_config pc = {.name = name, .limit = pinned_limit, .grow_size = 64 * MiB, .alignment = 256};
    pa_upstream pu = {d->ops->pinned_alloc, d->ops->pinned_free, d};
    return pa_mempool_create(&pc, pu, &d->pinned, err);
}

/* dv_options.page_decode, else PISTA_PAGE_DECODE, as DV__PAGES_*. */
static int page_decode_of(const dv_options *opt, int *out, pa_err *err)
{
    const char *v = opt->page_decode;
    bool env = !v || !*v;
    if (env)
        v = getenv("PISTA_PAGE_DECODE");
    if (!v || !*v || !strcmp(v, "auto"))
        *out = DV__PAGES_AUTO;
    else if (!strcmp(v, "host"))
        *out = DV__PAGES_HOST;
    else if (!strcmp(v, "device"))
        *out = DV__PAGES_DEVICE;
    else
        return pa_error(err, PA_EINVAL, "%s '%s': expected auto, host or device",
                        env ? "PISTA_PAGE_DECODE" : "--page-decode", v);
    return PA_OK;
}

static int open_kind(dv_kind kind, int ordinal, const dv_options *opt, dv_device **out, pa_err *err)
{
    const dv_ops *ops = backend_for(kind);
    if (!ops)
        return pa_error(err, PA_EDEVICE, "device cuda:%d requested, but this build of Pista has no CUDA "
                        "backend (nvcc was not found when it was built)", ordinal);
    int page_decode = DV__PAGES_AUTO;
    int rc = page_decode_of(opt, &page_decode, err);
    if (rc != PA_OK)
        return rc;
    dv_device *d = pa_calloc(1, sizeof *d);
    if (!d)
        return pa_error(err, PA_ENOMEM, "out of host memory opening a device");
    d->ops = ops;
    d->page_decode = page_decode;
    d->ordinal = ordinal;
    if (kind != DV_KIND_CUDA)
        snprintf(d->name, sizeof d->name, "%s", ops->name);
    else
        snprintf(d->name, sizeof d->name, "cuda:%d", ordinal);
    rc = ops->open(d, ordinal, opt, err);
    if (rc != PA_OK) {
        pa_free(d);
        return rc;
    }
    char mem[32];
    snprintf(d->desc, sizeof d->desc, "%s (%s, %s)", d->name, d->model,
             pa_format_size(d->memory_total, mem, sizeof mem));
    pthread_mutex_init(&d->fault_lock, NULL);
    pthread_mutex_init(&d->streams_lock, NULL);
    rc = make_pools(d, opt, err);
    if (rc != PA_OK) {
        dv_close(d);
        return rc;
    }
    *out = d;
    return PA_OK;
}

int dv_open(const dv_options *opt, dv_device **out, pa_err *err)
{
    dv_options defaults = {0};
    if (!opt)
        opt = &defaults;
    const char *spec = opt->spec && *opt->spec ? opt->spec : "auto";
    dv_kind kind;
    int ordinal, rc;
    if (strcmp(spec, "auto") != 0) {
        if ((rc = parse_spec(spec, &kind, &ordinal, err)) != PA_OK)
            return rc;
        if ((rc = open_kind(kind, ordinal, opt, out, err)) != PA_OK)
            return rc;
        snprintf((*out)->selection, sizeof (*out)->selection, "requested %s", spec);
        return PA_OK;
    }
    /* auto: a working GPU if there is one, else the CPU, and say why. */
    char why[256] = "";
#ifdef PISTA_HAVE_CUDA
    pa_err cuda_err;
    pa_err_init(&cuda_err);
    rc = open_kind(DV_KIND_CUDA, 0, opt, out, &cuda_err);
    if (rc == PA_OK) {
        snprintf((*out)->selection, sizeof (*out)->selection, "auto: chose %s, a working CUDA device", (*out)->name);
        pa_err_close(&cuda_err);
        return PA_OK;
    }
    snprintf(why, sizeof why, "%s", cuda_err.msg);
    pa_err_close(&cuda_err);
#else
    snprintf(why, sizeof why, "this build has no CUDA backend");
#endif
    if ((rc = open_kind(DV_KIND_CPU, 0, opt, out, err)) != PA_OK)
        return rc;
    snprintf((*out)->selection, sizeof (*out)->selection, "auto: chose cpu; no usable CUDA device (%s)", why);
    return PA_OK;
}

void dv_close(dv_device *d)
{
    if (!d)
        return;
    for (dv__fault_slab *f = d->faults, *next; f; f = next) {
        next = f->next;
        d->ops->pinned_free(d, f->blocks, (size_t)DV__FAULT_SLOTS * DV_FAULT_BYTES);
        pa_free(f);
    }
    pthread_mutex_destroy(&d->fault_lock);
    pthread_mutex_destroy(&d->streams_lock);
    /* Pools first: their upstream may need the backend's context. */
    pa_mempool_destroy(d->pool);
    pa_mempool_destroy(d->pinned);
    d->ops->close(d);
    pa_free(d);
}

dv_kind dv_kind_of(const dv_device *d) { return d->ops->kind; }

int dv_ordinal(const dv_device *d) { return d->ordinal; }

void *dv_stream_handle(const dv_stream *s) { return s && s->dev->ops->kind == DV_KIND_CUDA ? s->impl : NULL; }
const char *dv_name(const dv_device *d) { return d->name; }
const char *dv_describe(const dv_device *d) { return d->desc; }
const char *dv_selection(const dv_device *d) { return d->selection; }
bool dv_host_visible(const dv_device *d) { return d->host_visible; }

bool dv_decodes_pages(const dv_device *d)
{
    if (d->host_visible || d->page_decode == DV__PAGES_HOST)
        return false;
    return d->page_decode == DV__PAGES_DEVICE || d->ops->kind == DV_KIND_SIM;
}

pa_threadpool *dv_cpu_threads(dv_device *d) { return d->threads; }

/* ------------------------------------------------------------- memory */

int dv_alloc(dv_device *d, size_t size, void **ptr, pa_err *err)
{
    int rc = pa_mempool_alloc(d->pool, size, ptr, err);
    if (rc == PA_OK)
        pa_counter_add(PA_CTR_DEVICE_ALLOCS, 1);
    return rc;
}

void dv__free_now(dv_device *d, void *ptr)
{
    if (!ptr)
        return;
    if (d->ops->kind == DV_KIND_SIM) {
        size_t n = pa_mempool_block_size(d->pool, ptr);
        dv__sim_enter(d);
        memset(ptr, DV_POISON_BYTE, n);
        dv__sim_leave(d);
    }
    pa_mempool_free(d->pool, ptr);
}

void dv_free(dv_device *d, void *ptr)
{
    dv__free_now(d, ptr);
}

int dv_free_async(dv_stream *s, void *ptr, pa_err *err)
{
    if (!ptr)
        return PA_OK;
    dv_device *d = s->dev;
    int rc = d->ops->free_async(s, ptr, err);
    if (rc != PA_OK) {   /* could not enqueue: wait, then free, so the block is not lost */
        pa_counter_add(PA_CTR_HOST_SYNCS, 1);
        d->ops->stream_sync(s, NULL);
        dv__free_now(d, ptr);
    }
    return rc;
}

int dv_host_alloc(dv_device *d, size_t size, void **ptr, pa_err *err)
{
    int rc = pa_mempool_alloc(d->pinned, size, ptr, err);
    if (rc == PA_OK)
        pa_counter_add(PA_CTR_PINNED_ALLOCS, 1);
    return rc;
}

void dv_host_free(dv_device *d, void *ptr)
{
    pa_mempool_free(d->pinned, ptr);
}

typedef struct pinned_free {
    dv_device *dev;
    void *ptr;
} pinned_free;

static void free_pinned_when_reached(void *p)
{
    pinned_free *f = p;
    dv_host_free(f->dev, f->ptr);
    pa_free(f);
}

int dv_host_free_async(dv_stream *s, void *ptr, pa_err *err)
{
    if (!ptr)
        return PA_OK;
    pinned_free *f = pa_malloc(sizeof *f);
    int rc = f ? PA_OK : pa_error(err, PA_ENOMEM, "out of host memory enqueuing a free");
    if (f) {
        f->dev = s->dev;
        f->ptr = ptr;
        if ((rc = s->dev->ops->host_fn(s, free_pinned_when_reached, f, err)) != PA_OK)
            pa_free(f);
    }
    if (rc != PA_OK) {   /* could not enqueue: wait, then free, so the buffer is not lost */
        pa_counter_add(PA_CTR_HOST_SYNCS, 1);
        s->dev->ops->stream_sync(s, NULL);
        dv_host_free(s->dev, ptr);
    }
    return rc;
}

int dv_raw_alloc(dv_device *d, size_t size, void **ptr, pa_err *err)
{
    return d->ops->mem_alloc(d, size ? size : 1, ptr, err);
}

void dv_raw_free(dv_device *d, void *ptr, size_t size)
{
    if (ptr)
        d->ops->mem_free(d, ptr, size ? size : 1);
}

void dv_memory_stats(dv_device *d, pa_mempool_stats *device, pa_mempool_stats *pinned)
{
    if (device)
        pa_mempool_stats_get(d->pool, device);
    if (pinned)
        pa_mempool_stats_get(d->pinned, pinned);
}

void dv_memory_reset_peak(dv_device *d)
{
    pa_mempool_reset_peak(d->pool);
    pa_mempool_reset_peak(d->pinned);
}

void dv_set_memory_limit(dv_device *d, uint64_t limit)
{
    pa_mempool_set_limit(d->pool, limit);
}

/* ------------------------------------------------------------ streams */

/* ------------------------------------------------------- kernel faults */

#define BLOCK(slab, slot) ((slab)->blocks + (size_t)(slot) * (DV_FAULT_BYTES / 8))

/* A free fault block for a new stream of d (pinned memory, outside the
 * pools: no query's memory), cleared. A new slab is allocated with the lock
 * released: a pinned allocation may wait for the device's queued work. */
static int fault_take(dv_device *d, dv__fault_slab **slab, int *slot, pa_err *err)
{
    pthread_mutex_lock(&d->fault_lock);
    dv__fault_slab *f = d->faults;
    int k = -1;
    for (; f; f = f->next) {
        for (k = 0; k < DV__FAULT_SLOTS && f->used[k]; k++)
            ;
        if (k < DV__FAULT_SLOTS)
            break;
    }
    int rc = PA_OK;
    if (!f) {
        pthread_mutex_unlock(&d->fault_lock);
        f = pa_calloc(1, sizeof *f);
        void *blocks = NULL;
        rc = f ? d->ops->pinned_alloc(d, (size_t)DV__FAULT_SLOTS * DV_FAULT_BYTES, &blocks, err)
               : pa_error(err, PA_ENOMEM, "out of host memory creating a stream on %s", d->name);
        if (rc != PA_OK) {
            pa_free(f);
            return rc;
        }
        f->blocks = blocks;
        k = 0;
        pthread_mutex_lock(&d->fault_lock);
        f->next = d->faults;
        d->faults = f;
    }
    f->used[k] = true;
    memset(BLOCK(f, k), 0, DV_FAULT_BYTES);
    *slab = f;
    *slot = k;
    pthread_mutex_unlock(&d->fault_lock);
    return rc;
}

/* The stream that had the block ended: events recorded on it see no fault
 * from now on. */
static void fault_give(dv_device *d, dv__fault_slab *slab, int slot)
{
    pthread_mutex_lock(&d->fault_lock);
    slab->used[slot] = false;
    slab->gen[slot]++;
    pthread_mutex_unlock(&d->fault_lock);
}

int64_t *dv_stream_fault_words(dv_stream *s) { return s->fault; }

void dv_clear_fault(dv_device *d)
{
    pthread_mutex_lock(&d->fault_lock);
    for (dv__fault_slab *f = d->faults; f; f = f->next)
        for (int k = 0; k < DV__FAULT_SLOTS; k++) {
            __atomic_store_n(&BLOCK(f, k)[1], 0, __ATOMIC_RELAXED);
            __atomic_store_n(&BLOCK(f, k)[0], 0, __ATOMIC_RELEASE);
        }
    pthread_mutex_unlock(&d->fault_lock);
}

/* rc, or once the work it waited for is done (done NULL: it is), the data
 * fault in block w (NULL: none). */
static int fault_check(dv_device *d, const int64_t *w, int rc, const bool *done, pa_err *err)
{
    if (rc != PA_OK || (done && !*done) || !w)
        return rc;
    int64_t status = __atomic_load_n(&w[0], __ATOMIC_ACQUIRE);
    if (status == 0)
        return PA_OK;
    const char *msg = (const char *)(uintptr_t)__atomic_load_n(&w[1], __ATOMIC_ACQUIRE);
    if (msg == (const char *)w + DV_FAULT_TEXT_AT)   /* the kernel's own text: make sure it ends */
        ((char *)w)[DV_FAULT_BYTES - 1] = 0;
    return pa_error(err, (int)status, "a kernel on %s stopped: %s", d->name, msg ? msg : "(no message)");
}

void dv__fault_inherit(const int64_t *from, int64_t *to)
{
    if (__atomic_load_n(&to[0], __ATOMIC_ACQUIRE) != 0)
        return;
    int64_t status = __atomic_load_n(&from[0], __ATOMIC_ACQUIRE);
    if (status == 0)
        return;
    const char *msg = (const char *)(uintptr_t)__atomic_load_n(&from[1], __ATOMIC_ACQUIRE);
    if (msg == (const char *)from + DV_FAULT_TEXT_AT) {
        memcpy((char *)to + DV_FAULT_TEXT_AT, msg, DV_FAULT_TEXT_BYTES);
        msg = (const char *)to + DV_FAULT_TEXT_AT;
    }
    __atomic_store_n(&to[1], (int64_t)(uintptr_t)msg, __ATOMIC_RELAXED);
    __atomic_store_n(&to[0], status, __ATOMIC_RELEASE);
}

/* The fault block an event's stream had when the event was recorded, if
 * that stream still lives. */
static const int64_t *event_fault(dv_event *e)
{
    if (!e->slab)
        return NULL;
    pthread_mutex_lock(&e->dev->fault_lock);
    const int64_t *w = e->slab->gen[e->slot] == e->gen ? BLOCK(e->slab, e->slot) : NULL;
    pthread_mutex_unlock(&e->dev->fault_lock);
    return w;
}

/* ------------------------------------------------------------ streams */

int dv_stream_create(dv_device *d, dv_stream **out, pa_err *err)
{
    dv_stream *s = pa_calloc(1, sizeof *s);
    if (!s)
        return pa_error(err, PA_ENOMEM, "out of host memory creating a stream on %s", d->name);
    s->dev = d;
    int rc = d->ops->kind != DV_KIND_CPU ? fault_take(d, &s->slab, &s->slot, err) : PA_OK;
    if (rc == PA_OK && s->slab)
        s->fault = BLOCK(s->slab, s->slot);
    if (rc == PA_OK && (rc = d->ops->stream_create(d, &s->impl, err)) != PA_OK && s->slab)
        fault_give(d, s->slab, s->slot);
    if (rc != PA_OK) {
        pa_free(s);
        return rc;
    }
    *out = s;
    return PA_OK;
}

void dv_stream_destroy(dv_stream *s)
{
    if (!s)
        return;
    bool idle = true;
    s->dev->ops->stream_query(s, &idle, NULL);
    if (!idle)   /* work left: destroying waits for it, a host sync like any other */
        pa_counter_add(PA_CTR_HOST_SYNCS, 1);
    s->dev->ops->stream_sync(s, NULL);
    s->dev->ops->stream_destroy(s->dev, s->impl);
    if (s->slab)
        fault_give(s->dev, s->slab, s->slot);
    pa_free(s);
}

int dv_stream_sync(dv_stream *s, pa_err *err)
{
    pa_counter_add(PA_CTR_HOST_SYNCS, 1);
    return fault_check(s->dev, s->fault, s->dev->ops->stream_sync(s, err), NULL, err);
}

int dv_stream_query(dv_stream *s, bool *idle, pa_err *err)
{
    int rc = s->dev->ops->stream_query(s, idle, err);
    return fault_check(s->dev, s->fault, rc, idle, err);
}

dv_device *dv_stream_device(const dv_stream *s) { return s->dev; }

/* ------------------------------------------------------------- events */

int dv_event_create(dv_device *d, dv_event **out, pa_err *err)
{
    dv_event *e = pa_calloc(1, sizeof *e);
    if (!e)
        return pa_error(err, PA_ENOMEM, "out of host memory creating an event on %s", d->name);
    e->dev = d;
    int rc = d->ops->event_create(d, &e->impl, err);
    if (rc != PA_OK) {
        pa_free(e);
        return rc;
    }
    *out = e;
    return PA_OK;
}

void dv_event_destroy(dv_event *e)
{
    if (!e)
        return;
    e->dev->ops->event_destroy(e->dev, e->impl);
    pa_free(e);
}

static int same_device(dv_event *e, dv_stream *s, pa_err *err)
{
    if (e->dev != s->dev)
        return pa_error(err, PA_EINVAL, "event of %s used with a stream of %s", e->dev->name, s->dev->name);
    return PA_OK;
}

int dv_event_record(dv_event *e, dv_stream *s, pa_err *err)
{
    int rc = same_device(e, s, err);
    if (rc != PA_OK || (rc = e->dev->ops->event_record(e, s, err)) != PA_OK)
        return rc;
    e->slab = s->slab;
    e->slot = s->slot;
    if (s->slab) {
        pthread_mutex_lock(&e->dev->fault_lock);
        e->gen = s->slab->gen[s->slot];
        pthread_mutex_unlock(&e->dev->fault_lock);
    }
    return PA_OK;
}

int dv_stream_wait_event(dv_stream *s, dv_event *e, pa_err *err)
{
    int rc = same_device(e, s, err);
    if (rc != PA_OK || (rc = s->dev->ops->stream_wait_event(s, e, err)) != PA_OK)
        return rc;
    /* Work after the wait may read what the event's stream wrote: if a
     * kernel there faulted, that data is not whole, so the fault becomes
     * this stream's too (its sync reports it), as a CUDA error is sticky
     * for the whole context. */
    const int64_t *from = event_fault(e);
    if (from && s->fault && from != s->fault && s->dev->ops->fault_inherit)
        rc = s->dev->ops->fault_inherit(s, from, s->fault, err);
    return rc;
}

int dv_event_query(dv_event *e, bool *done, pa_err *err)
{
    int rc = e->dev->ops->event_query(e, done, err);
    return fault_check(e->dev, event_fault(e), rc, done, err);
}

int dv_event_sync(dv_event *e, pa_err *err)
{
    pa_counter_add(PA_CTR_HOST_SYNCS, 1);
    return fault_check(e->dev, event_fault(e), e->dev->ops->event_sync(e, err), NULL, err);
}

/* ------------------------------------------------------------- copies */

static void count_copy(dv_copy_kind kind, size_t n)
{
    static const pa_counter_id ids[] = {PA_CTR_BYTES_H2D, PA_CTR_BYTES_D2H, PA_CTR_BYTES_D2D};
    if ((unsigned)kind < 3)
        pa_counter_add(ids[kind], (int64_t)n);
    pa_counter_add(PA_CTR_COPY_OPS, 1);
}

int dv_copy_async(dv_stream *s, void *dst, const void *src, size_t n, dv_copy_kind kind, pa_err *err)
{
    if ((unsigned)kind > DV_COPY_H2H)
        return pa_error(err, PA_EINVAL, "bad copy kind %d", (int)kind);
    if (n && (!dst || !src))
        return pa_error(err, PA_EINVAL, "copy of %zu bytes with a NULL pointer", n);
    int rc = s->dev->ops->copy(s, dst, src, n, kind, err);
    if (rc == PA_OK)
        count_copy(kind, n);
    return rc;
}

int dv_copy_batch_async(dv_stream *s, size_t count, void *const *dsts, const void *const *srcs,
                        const size_t *sizes, dv_copy_kind kind, pa_err *err)
{
    if ((unsigned)kind > DV_COPY_H2H)
        return pa_error(err, PA_EINVAL, "bad copy kind %d", (int)kind);
    if (count == 0)
        return PA_OK;
    size_t total = 0;
    for (size_t i = 0; i < count; i++) {
        if (sizes[i] && (!dsts[i] || !srcs[i]))
            return pa_error(err, PA_EINVAL, "batched copy %zu of %zu has a NULL pointer", i, count);
        total += sizes[i];
    }
    int rc = s->dev->ops->copy_batch(s, count, dsts, srcs, sizes, kind, err);
    if (rc == PA_OK)
        count_copy(kind, total);
    return rc;
}

int dv_upload(dv_stream *s, const void *host, size_t n, void **dev, pa_err *err)
{
    dv_device *d = s->dev;
    if (d->host_visible) {
        *dev = (void *)host;
        pa_counter_add(PA_CTR_BYTES_H2D_ELIDED, (int64_t)n);
        return PA_OK;
    }
    void *p;
    int rc = dv_alloc(d, n, &p, err);
    if (rc != PA_OK)
        return rc;
    if ((rc = dv_copy_async(s, p, host, n, DV_COPY_H2D, err)) != PA_OK) {
        dv_free(d, p);
        return rc;
    }
    *dev = p;
    return PA_OK;
}

int dv_download(dv_stream *s, const void *dev, size_t n, void **host, pa_err *err)
{
    dv_device *d = s->dev;
    if (d->host_visible) {
        *host = (void *)dev;
        pa_counter_add(PA_CTR_BYTES_D2H_ELIDED, (int64_t)n);
        return PA_OK;
    }
    void *p;
    int rc = dv_host_alloc(d, n, &p, err);
    if (rc != PA_OK)
        return rc;
    if ((rc = dv_copy_async(s, p, dev, n, DV_COPY_D2H, err)) != PA_OK) {
        dv_host_free(d, p);
        return rc;
    }
    *host = p;
    return PA_OK;
}

void dv_release_upload(dv_device *d, void *dev)
{
    if (!d->host_visible)
        dv_free(d, dev);
}

void dv_release_download(dv_device *d, void *host)
{
    if (!d->host_visible)
        dv_host_free(d, host);
}

/* --------------------------------------------------------------- work */

int dv_launch_host_fn(dv_stream *s, void (*fn)(void *arg), void *arg, pa_err *err)
{
    if (!fn)
        return pa_error(err, PA_EINVAL, "host function is NULL");
    return s->dev->ops->host_fn(s, fn, arg, err);
}

int dv_fill_u32_async(dv_stream *s, void *dst, uint32_t value, size_t count, pa_err *err)
{
    if (count && !dst)
        return pa_error(err, PA_EINVAL, "fill of %zu words at NULL", count);
    if (((uintptr_t)dst & 3) != 0)
        return pa_error(err, PA_EINVAL, "fill destination %p is not 4-byte aligned", dst);
    if (count == 0)
        return PA_OK;
    int rc = s->dev->ops->fill_u32(s, dst, value, count, err);
    if (rc == PA_OK)
        pa_counter_add(PA_CTR_KERNELS_LAUNCHED, 1);
    return rc;
}

int dv_launch_kernel(dv_stream *s, dv_kernel_fn fn, const void *args, size_t args_size, pa_err *err)
{
    if (!fn || (args_size && !args))
        return pa_error(err, PA_EINVAL, "kernel launch without a function or its arguments");
    if (!s->dev->ops->launch)
        return pa_error(err, PA_EUNSUPPORTED, "device %s runs no host-compiled kernels", s->dev->name);
    int rc = s->dev->ops->launch(s, fn, args, args_size, err);
    if (rc == PA_OK)
        pa_counter_add(PA_CTR_KERNELS_LAUNCHED, 1);
    return rc;
}

void dv_poison_output(dv_device *d, void *pinned, size_t n)
{
    if (d->ops->kind == DV_KIND_SIM && pinned && n)
        memset(pinned, DV_POISON_BYTE, n);
}
