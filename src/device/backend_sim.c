/*
 * backend_sim.c - the `sim` device: a test device that behaves like a
 * discrete GPU, so that host code breaking the device protocol fails on a
 * machine without one. Streams, events, copies and kernels are the cpu
 * backend's (backend_cpu.c) run on the sim's own executor threads; this file
 * owns what differs: device memory the host cannot touch, and the delay.
 *
 * Memory: every region of the device pool is an anonymous mapping kept
 * PROT_NONE while no device operation runs. dv__sim_enter (called by the
 * executor around each copy, fill, kernel and free) counts running
 * operations and opens every region read-write when the count leaves 0;
 * dv__sim_leave closes them again when it returns to 0. mprotect is
 * process-wide, so a host access that happens while some device operation
 * runs is not caught; one made while the device is idle faults at once
 * (SIGSEGV), which is what tests rely on. Pinned memory is ordinary host
 * memory, as on a GPU. Allocating either waits for the streams' queued work,
 * as CUDA's allocations may (dv__cpu_quiesce).
 */
#include "device/device_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Default stream delay: long enough that a kernel's output read straight
 * after the launch is read before it ran, short enough for the test suite. */
#define SIM_DEFAULT_DELAY_US 50
#define MiB (1024ull * 1024)
/* Reported memory: the pool limit defaults to 7/10 of it (device.c). */
#define SIM_MEMORY (8192 * MiB)
/* x86-64's huge page size. */
#define SIM_HUGE (2 * MiB)

typedef struct sim_region {
    void *base;
    size_t size;
} sim_region;

typedef struct sim_dev {
    pthread_mutex_t mu;
    int active;              /* device operations running now */
    sim_region *regions;
    size_t n, cap;
    int delay_us;
} sim_dev;

static void protect_all(sim_dev *m, int prot)
{
    for (size_t i = 0; i < m->n; i++)
        mprotect(m->regions[i].base, m->regions[i].size, prot);
}

void dv__sim_enter(dv_device *d)
{
    sim_dev *m = d->impl;
    pthread_mutex_lock(&m->mu);
    if (m->active++ == 0)
        protect_all(m, PROT_READ | PROT_WRITE);
    pthread_mutex_unlock(&m->mu);
}

void dv__sim_leave(dv_device *d)
{
    sim_dev *m = d->impl;
    pthread_mutex_lock(&m->mu);
    if (--m->active == 0)
        protect_all(m, PROT_NONE);
    pthread_mutex_unlock(&m->mu);
}

int dv__sim_delay_us(const dv_device *d)
{
    const sim_dev *m = d->impl;
    return m ? m->delay_us : 0;
}

int dv__sim_enumerate(dv_info *out, int cap, int *n, char *note, size_t note_cap)
{
    if (cap > 0) {
        memset(&out[0], 0, sizeof out[0]);
        snprintf(out[0].name, sizeof out[0].name, "sim");
        snprintf(out[0].model, sizeof out[0].model, "test device: a discrete GPU simulated on the host");
        out[0].memory = SIM_MEMORY;
    }
    *n = 1;
    return PA_OK;
}

static int delay_from(const dv_options *opt, int *out, pa_err *err)
{
    if (opt->sim_delay_us) {
        *out = opt->sim_delay_us < 0 ? 0 : opt->sim_delay_us;
        return PA_OK;
    }
    const char *env = getenv("PISTA_SIM_DELAY_US");
    if (!env || !*env) {
        *out = SIM_DEFAULT_DELAY_US;
        return PA_OK;
    }
    char *end;
    long v = strtol(env, &end, 10);
    if (*end || v < 0 || v > 10 * 1000 * 1000)
        return pa_error(err, PA_EINVAL, "PISTA_SIM_DELAY_US='%s': expected microseconds, 0 to 10000000", env);
    *out = (int)v;
    return PA_OK;
}

int dv__sim_open(dv_device *d, int ordinal, const dv_options *opt, pa_err *err)
{
    if (ordinal != 0)
        return pa_error(err, PA_EDEVICE, "there is one sim device (sim), not sim:%d", ordinal);
    sim_dev *m = pa_calloc(1, sizeof *m);
    if (!m)
        return pa_error(err, PA_ENOMEM, "sim device: out of host memory");
    int rc = delay_from(opt, &m->delay_us, err);
    if (rc == PA_OK)
        rc = dv__cpu_threads_open(d, opt, err);
    if (rc != PA_OK) {
        pa_free(m);
        return rc;
    }
    pthread_mutex_init(&m->mu, NULL);
    d->impl = m;
    snprintf(d->model, sizeof d->model, "simulated GPU, %d executor threads, %d us stream delay",
             pa_threadpool_size(d->threads), m->delay_us);
    d->memory_total = SIM_MEMORY;
    d->host_visible = false;
    return PA_OK;
}

void dv__sim_close(dv_device *d)
{
    sim_dev *m = d->impl;
    dv__cpu_threads_close(d);
    if (!m)
        return;
    pthread_mutex_destroy(&m->mu);
    pa_free(m->regions);
    pa_free(m);
    d->impl = NULL;
}

/* A region aligned to huge pages and asked to use them: every open and
 * close of device memory rewrites the page tables of all regions, 512 times
 * fewer entries with 2 MiB pages (where the kernel offers them). */
static int map_region(size_t size, int prot, void **out, pa_err *err)
{
    size_t span = size + SIM_HUGE;
    uint8_t *raw = mmap(NULL, span, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return pa_error(err, PA_ENOMEM, "sim device: mmap of %zu bytes failed", size);
    uint8_t *p = (uint8_t *)(((uintptr_t)raw + SIM_HUGE - 1) & ~(uintptr_t)(SIM_HUGE - 1));
    if (p > raw)
        munmap(raw, (size_t)(p - raw));
    size_t tail = (size_t)(raw + span - (p + size));
    if (tail)
        munmap(p + size, tail);
#ifdef MADV_HUGEPAGE
    madvise(p, size, MADV_HUGEPAGE);   /* a hint: without it the region still works */
#endif
    *out = p;
    return PA_OK;
}

/* Device memory: like cudaMalloc, a new region waits for the work already
 * queued on the device's streams (dv__cpu_quiesce), so host code that holds
 * a lock across a device allocation which that work needs (a free's host
 * function, say) deadlocks here as it would on a GPU. Not on one of the
 * device's own executor threads (a task decoding pages for a scan, which
 * allocates the columns the device decodes into): the queued work may need
 * that very thread, and a GPU's work goes on without it (sim_pinned_alloc
 * likewise). */
int dv__sim_mem_alloc(void *user, size_t size, void **out, pa_err *err)
{
    dv_device *d = user;
    sim_dev *m = d->impl;
    if (pa_threadpool_self() != d->threads)
        dv__cpu_quiesce(d);
    pthread_mutex_lock(&m->mu);
    int rc = PA_OK;
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 16;
        sim_region *r = pa_realloc(m->regions, cap * sizeof *r);
        if (!r)
            rc = pa_error(err, PA_ENOMEM, "sim device: out of host memory tracking regions");
        else {
            m->regions = r;
            m->cap = cap;
        }
    }
    void *p = NULL;
    if (rc == PA_OK && (rc = map_region(size, m->active ? PROT_READ | PROT_WRITE : PROT_NONE, &p, err)) == PA_OK)
        m->regions[m->n++] = (sim_region){p, size};
    pthread_mutex_unlock(&m->mu);
    if (rc == PA_OK)
        *out = p;
    return rc;
}

void dv__sim_mem_free(void *user, void *p, size_t size)
{
    dv_device *d = user;
    sim_dev *m = d->impl;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->n; i++)
        if (m->regions[i].base == p) {
            m->regions[i] = m->regions[--m->n];
            break;
        }
    munmap(p, size);
    pthread_mutex_unlock(&m->mu);
}
