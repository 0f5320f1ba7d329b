/*
 * grid.c - grids of emulated kernels: the launch configuration check, a
 * grid run over a thread pool (one block per task index, each on its OS
 * thread's worker), the enqueueing of a grid on a `cpu` or `sim` stream, the
 * per-thread workers with their fiber stacks, and the process's counts.
 */
#include "simt/simt_int.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------- config */

int simt_check_config(const simt_config *cfg, pa_err *err)
{
    const char *name = cfg->name ? cfg->name : "kernel";
    const simt_dim3 b = cfg->block, g = cfg->grid;
    if (!b.x || !b.y || !b.z || !g.x || !g.y || !g.z)
        return pa_error(err, PA_EINVAL, "launch of %s: grid (%u,%u,%u) or block (%u,%u,%u) has a zero dimension",
                        name, g.x, g.y, g.z, b.x, b.y, b.z);
    if (b.x > SIMT_MAX_BLOCK_X || b.y > SIMT_MAX_BLOCK_Y || b.z > SIMT_MAX_BLOCK_Z ||
        (uint64_t)b.x * b.y * b.z > SIMT_MAX_BLOCK_THREADS)
        return pa_error(err, PA_EINVAL,
                        "launch of %s: block (%u,%u,%u) is too large (at most %d threads, %dx%dx%d)", name, b.x,
                        b.y, b.z, SIMT_MAX_BLOCK_THREADS, SIMT_MAX_BLOCK_X, SIMT_MAX_BLOCK_Y, SIMT_MAX_BLOCK_Z);
    if (g.x > SIMT_MAX_GRID_X || g.y > SIMT_MAX_GRID_YZ || g.z > SIMT_MAX_GRID_YZ)
        return pa_error(err, PA_EINVAL, "launch of %s: grid (%u,%u,%u) is too large (at most %ux%ux%u blocks)",
                        name, g.x, g.y, g.z, SIMT_MAX_GRID_X, SIMT_MAX_GRID_YZ, SIMT_MAX_GRID_YZ);
    if (cfg->smem > SIMT_MAX_DYNAMIC_SMEM)
        return pa_error(err, PA_EINVAL, "launch of %s: %zu bytes of dynamic shared memory, more than %d", name,
                        cfg->smem, SIMT_MAX_DYNAMIC_SMEM);
    return PA_OK;
}

/* ------------------------------------------------------------- counts */

static simt_stats totals;   /* fields updated atomically */

void simt__stats_flush(simt_worker *w)
{
    uint64_t *dst = (uint64_t *)&totals, *src = (uint64_t *)&w->st;
    for (size_t i = 0; i < sizeof totals / sizeof(uint64_t); i++)
        if (src[i]) {
            __atomic_add_fetch(&dst[i], src[i], __ATOMIC_RELAXED);
            src[i] = 0;
        }
}

void simt_stats_get(simt_stats *out)
{
    uint64_t *dst = (uint64_t *)out, *src = (uint64_t *)&totals;
    for (size_t i = 0; i < sizeof totals / sizeof(uint64_t); i++)
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ workers */

static pthread_key_t worker_key;
static pthread_once_t worker_once = PTHREAD_ONCE_INIT;
static __thread simt_worker *this_worker;

static void worker_destroy(void *p)
{
    simt_worker *w = p;
    for (int i = 0; i < w->n_slabs; i++) {
        simt__slab_unmap(w->slabs[i], SIMT_SLAB);
        pa_free(w->slabs[i]);
    }
    pa_free(w->slabs);
    pa_free(w);
}

static void worker_key_make(void)
{
    pthread_key_create(&worker_key, worker_destroy);
}

simt_worker *simt__worker(pa_err *err)
{
    if (this_worker)
        return this_worker;
    pthread_once(&worker_once, worker_key_make);
    simt_worker *w = pa_calloc(1, sizeof *w);
    if (!w) {
        pa_error(err, PA_ENOMEM, "SIMT emulation: out of host memory for a worker");
        return NULL;
    }
    if (simt__fiber_of_thread(&w->sched, err) != PA_OK) {
        pa_free(w);
        return NULL;
    }
    if (pthread_setspecific(worker_key, w) != 0) {   /* freed when the thread exits */
        pa_free(w);
        pa_error(err, PA_ENOMEM, "SIMT emulation: cannot register a worker");
        return NULL;
    }
    this_worker = w;
    return w;
}

void simt_release_thread(void)
{
    simt_worker *w = this_worker;
    if (!w || w->busy)
        return;
    pthread_setspecific(worker_key, NULL);
    this_worker = NULL;
    worker_destroy(w);
}

simt_fiber *simt__fiber_get(simt_worker *w, pa_err *err)
{
    if (!w->free) {
        if (w->n_slabs == w->cap_slabs) {
            int cap = w->cap_slabs ? 2 * w->cap_slabs : 8;
            simt_fiber **s = pa_realloc(w->slabs, (size_t)cap * sizeof *s);
            if (!s) {
                pa_error(err, PA_ENOMEM, "SIMT emulation: out of host memory for fibers");
                return NULL;
            }
            w->slabs = s;
            w->cap_slabs = cap;
        }
        simt_fiber *slab = pa_malloc(SIMT_SLAB * sizeof *slab);
        if (!slab) {
            pa_error(err, PA_ENOMEM, "SIMT emulation: out of host memory for fibers");
            return NULL;
        }
        if (simt__slab_map(slab, SIMT_SLAB, w->n_slabs * SIMT_SLAB, err) != PA_OK) {
            pa_free(slab);
            return NULL;
        }
        w->slabs[w->n_slabs++] = slab;
        for (int i = SIMT_SLAB - 1; i >= 0; i--)
            simt__fiber_put(w, &slab[i]);
        w->st.fibers += SIMT_SLAB;
    }
    simt_fiber *f = w->free;
    w->free = f->next_free;
    return f;
}

/* -------------------------------------------------------------- grids */

static void block_task(void *ctx, size_t i)
{
    simt_grid *g = ctx;
    if (__atomic_load_n(&g->failed, __ATOMIC_RELAXED))
        return;
    simt_worker *w = simt__worker(&g->err);
    if (w && w->busy)
        pa_error(&g->err, PA_EINVAL, "kernel %s: a grid launched from inside a kernel", g->cfg.name);
    if (!w || w->busy) {
        __atomic_store_n(&g->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    w->busy = true;
    simt__run_block(w, g, i);
    w->busy = false;
    simt__stats_flush(w);
}

int simt_run(pa_threadpool *tp, const simt_config *cfg, simt_body_fn body, const void *params, pa_err *err)
{
    int rc = simt_check_config(cfg, err);
    if (rc != PA_OK)
        return rc;
    simt_grid g;
    memset(&g, 0, sizeof g);
    g.cfg = *cfg;
    if (!g.cfg.name)
        g.cfg.name = "kernel";
    g.body = body;
    g.params = params;
    g.n_blocks = (uint64_t)cfg->grid.x * cfg->grid.y * cfg->grid.z;
    pa_err_init(&g.err);
    pa_parallel_for(g.n_blocks > 1 ? tp : NULL, (size_t)g.n_blocks, block_task, &g);
    __atomic_add_fetch(&totals.grids, 1, __ATOMIC_RELAXED);
    rc = g.err.code;
    if (rc != PA_OK)
        pa_err_propagate(err, &g.err);
    pa_err_close(&g.err);
    return rc;
}

/* ------------------------------------------------------------ streams */

/* The argument block of a grid on a stream: this head, then the kernel's
 * parameters at a 16-byte aligned offset (dv_launch_kernel's copy is
 * 16-aligned). */
typedef struct grid_head {
    simt_config cfg;
    simt_body_fn body;
    dv_device *dev;
} grid_head;

#define PARAMS_AT ((sizeof(grid_head) + 15) & ~(size_t)15)

static int grid_kernel(void *args, pa_err *err)
{
    grid_head *h = args;
    return simt_run(dv_cpu_threads(h->dev), &h->cfg, h->body, (uint8_t *)args + PARAMS_AT, err);
}

int simt_launch(dv_stream *s, const simt_config *cfg, simt_body_fn body, const void *params, size_t size,
                pa_err *err)
{
    if (!body || (size && !params))
        return pa_error(err, PA_EINVAL, "launch of %s without a kernel or its parameters",
                        cfg->name ? cfg->name : "kernel");
    size_t total = PARAMS_AT + size;
    uint8_t *block = pa_malloc(total);
    if (!block)
        return pa_error(err, PA_ENOMEM, "launch of %s: out of host memory for %zu bytes of parameters",
                        cfg->name ? cfg->name : "kernel", size);
    grid_head h = {*cfg, body, dv_stream_device(s)};
    if (!h.cfg.name)
        h.cfg.name = "kernel";
    memcpy(block, &h, sizeof h);
    if (size)
        memcpy(block + PARAMS_AT, params, size);
    int rc = dv_launch_kernel(s, grid_kernel, block, total, err);
    pa_free(block);
    return rc;
}

int simt_selftest(dv_stream *s, const int32_t *in, int64_t n, unsigned long long *out, pa_err *err)
{
    if (dv_kind_of(dv_stream_device(s)) != DV_KIND_CUDA)
        return simt_selftest_simt(s, in, n, out, err);
#ifdef PISTA_HAVE_CUDA
    return simt_selftest_cuda(s, in, n, out, err);
#else
    return pa_error(err, PA_EUNSUPPORTED, "simt_selftest: this build has no CUDA backend");
#endif
}
