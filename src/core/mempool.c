/*
 * mempool.c - an RMM-style sub-allocator for memory the host may not touch.
 *
 * Layout: regions come from an upstream allocator. Each region is split into
 * blocks that tile it exactly; every block has a host-side node linked to its
 * address neighbours (for coalescing). Free blocks also sit in one of 64 bins
 * by floor(log2(size)); live blocks sit in an open-addressing hash table keyed
 * by address (for free). Invariants: two free blocks are never neighbours;
 * every size and address is a multiple of the alignment.
 *
 * Allocation takes the head of the first non-empty bin >= ceil(log2(size))
 * (any block there fits), else scans the bin floor(log2(size)), else grows.
 * One mutex guards everything: the critical sections are a few pointer moves,
 * and it is never held across a call to the upstream allocator (see grow).
 */
#include "core/core.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define N_BINS 64

typedef struct block {
    uintptr_t addr;
    size_t size;
    struct block *prev, *next;        /* address neighbours in the region */
    struct block *bin_prev, *bin_next; /* free list of its bin */
    int free;
} block;

typedef struct region {
    void *base;
    size_t size;
} region;

struct pa_mempool {
    pthread_mutex_t mu;
    char name[64];
    pa_upstream up;
    size_t align;
    uint64_t limit, grow;
    block *bins[N_BINS];
    block **live;            /* hash table of live blocks, NULL = empty slot */
    size_t live_cap, live_n;
    region *regions;
    size_t n_regions, cap_regions;
    size_t n_nodes;          /* block nodes allocated, free or live */
    pa_mempool_stats st;
};

static int floor_log2(size_t v) { return 63 - __builtin_clzll((unsigned long long)v); }
static int ceil_log2(size_t v) { return v <= 1 ? 0 : 64 - __builtin_clzll((unsigned long long)(v - 1)); }

static size_t hash_addr(uintptr_t a, size_t cap)
{
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

/* ------------------------------------------------------------ bins */

static void bin_insert(pa_mempool *p, block *b)
{
    int i = floor_log2(b->size);
    b->free = 1;
    b->bin_prev = NULL;
    b->bin_next = p->bins[i];
    if (p->bins[i])
        p->bins[i]->bin_prev = b;
    p->bins[i] = b;
}

static void bin_remove(pa_mempool *p, block *b)
{
    int i = floor_log2(b->size);
    if (b->bin_prev)
        b->bin_prev->bin_next = b->bin_next;
    else
        p->bins[i] = b->bin_next;
    if (b->bin_next)
        b->bin_next->bin_prev = b->bin_prev;
    b->bin_prev = b->bin_next = NULL;
    b->free = 0;
}

/* ------------------------------------------------------------ live table */

static int live_grow(pa_mempool *p)
{
    size_t cap = p->live_cap ? p->live_cap * 2 : 256;
    block **t = pa_calloc(cap, sizeof *t);
    if (!t)
        return PA_ENOMEM;
    for (size_t i = 0; i < p->live_cap; i++) {
        block *b = p->live[i];
        if (!b)
            continue;
        size_t h = hash_addr(b->addr, cap);
        while (t[h])
            h = (h + 1) & (cap - 1);
        t[h] = b;
    }
    pa_free(p->live);
    p->live = t;
    p->live_cap = cap;
    return PA_OK;
}

/* Caller has ensured capacity (live_n + 1 <= cap / 2). */
static void live_put(pa_mempool *p, block *b)
{
    size_t h = hash_addr(b->addr, p->live_cap);
    while (p->live[h])
        h = (h + 1) & (p->live_cap - 1);
    p->live[h] = b;
    p->live_n++;
}

static size_t live_find(pa_mempool *p, uintptr_t addr)
{
    if (!p->live_cap)
        return SIZE_MAX;
    size_t h = hash_addr(addr, p->live_cap);
    while (p->live[h]) {
        if (p->live[h]->addr == addr)
            return h;
        h = (h + 1) & (p->live_cap - 1);
    }
    return SIZE_MAX;
}

/* Linear-probing delete with backward shift (no tombstones). */
static void live_del(pa_mempool *p, size_t i)
{
    size_t mask = p->live_cap - 1, j = i;
    p->live[i] = NULL;
    for (;;) {
        j = (j + 1) & mask;
        block *b = p->live[j];
        if (!b)
            break;
        size_t k = hash_addr(b->addr, p->live_cap);
        /* Move b into the hole at i unless its home k lies cyclically in (i, j]. */
        if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        p->live[i] = b;
        p->live[j] = NULL;
        i = j;
    }
    p->live_n--;
}

/* ------------------------------------------------------------ pool */

int pa_mempool_create(const pa_mempool_config *cfg, pa_upstream up, pa_mempool **out, pa_err *err)
{
    size_t align = cfg->alignment ? cfg->alignment : 256;
    if (align & (align - 1))
        return pa_error(err, PA_EINVAL, "memory pool alignment %zu is not a power of two", align);
    if (!up.alloc || !up.free)
        return pa_error(err, PA_EINVAL, "memory pool needs an upstream allocator");
    pa_mempool *p = pa_calloc(1, sizeof *p);
    if (!p)
        return pa_error(err, PA_ENOMEM, "out of host memory creating a memory pool");
    pthread_mutex_init(&p->mu, NULL);
    snprintf(p->name, sizeof p->name, "%s", cfg->name ? cfg->name : "memory");
    p->up = up;
    p->align = align;
    p->limit = cfg->limit;
    p->grow = cfg->grow_size ? cfg->grow_size : (256u << 20);
    p->st.limit = cfg->limit;
    if (cfg->initial_size) {
        void *x;
        int rc = pa_mempool_alloc(p, cfg->initial_size, &x, err);
        if (rc != PA_OK) {
            pa_mempool_destroy(p);
            return rc;
        }
        pa_mempool_free(p, x);
        p->st.n_allocs = p->st.n_frees = 0;
        p->st.peak = 0;
    }
    *out = p;
    return PA_OK;
}

void pa_mempool_destroy(pa_mempool *p)
{
    if (!p)
        return;
    /* Every node is either in a bin (free) or in the live table. */
    for (int i = 0; i < N_BINS; i++) {
        block *b = p->bins[i];
        while (b) {
            block *n = b->bin_next;
            pa_free(b);
            b = n;
        }
    }
    for (size_t i = 0; i < p->live_cap; i++)
        pa_free(p->live[i]);
    for (size_t r = 0; r < p->n_regions; r++)
        p->up.free(p->up.user, p->regions[r].base, p->regions[r].size);
    pa_free(p->regions);
    pa_free(p->live);
    pthread_mutex_destroy(&p->mu);
    pa_free(p);
}

static block *take_fit(pa_mempool *p, size_t size)
{
    for (int i = ceil_log2(size); i < N_BINS; i++)
        if (p->bins[i])
            return p->bins[i];
    for (block *b = p->bins[floor_log2(size)]; b; b = b->bin_next)
        if (b->size >= size)
            return b;
    return NULL;
}

/* Reserve a region for a request of size bytes, called with p->mu held and
 * returned with it held again, but the upstream call runs with it released:
 * a device allocation is a synchronisation point on a GPU (cudaMalloc and
 * cudaHostAlloc may wait for work already queued on the device's streams),
 * and a stream's queued work includes host functions that free into this
 * pool (dv_free_async), which take p->mu. Holding it across the upstream
 * call deadlocks the two (and the `sim` device waits the same way, so tests
 * catch it). Other threads may allocate and free meanwhile; the new region
 * goes into the bins under the lock, where the caller takes from it at once. */
static int grow(pa_mempool *p, size_t size, pa_err *err)
{
    size_t want = size > p->grow ? size : (size_t)p->grow;
    if (p->limit && want > p->limit)
        want = size > p->limit ? size : (size_t)p->limit;
    want = (want + p->align - 1) & ~(p->align - 1);
    block *b = pa_calloc(1, sizeof *b);
    if (!b)
        return pa_error(err, PA_ENOMEM, "%s pool: out of host memory for bookkeeping", p->name);
    void *base = NULL;
    pthread_mutex_unlock(&p->mu);
    int rc = p->up.alloc(p->up.user, want, &base, err);
    if (rc == PA_OK && ((uintptr_t)base & (p->align - 1)) != 0) {
        p->up.free(p->up.user, base, want);
        rc = pa_error(err, PA_EINTERNAL, "%s pool: upstream returned memory aligned below %zu", p->name,
                      p->align);
    }
    pthread_mutex_lock(&p->mu);
    if (rc == PA_OK && p->n_regions == p->cap_regions) {
        size_t cap = p->cap_regions ? p->cap_regions * 2 : 8;
        region *r = pa_realloc(p->regions, cap * sizeof *r);
        if (!r) {
            pthread_mutex_unlock(&p->mu);
            p->up.free(p->up.user, base, want);
            pthread_mutex_lock(&p->mu);
            rc = pa_error(err, PA_ENOMEM, "%s pool: out of host memory for bookkeeping", p->name);
        } else {
            p->regions = r;
            p->cap_regions = cap;
        }
    }
    if (rc != PA_OK) {
        pa_free(b);
        return rc;
    }
    p->regions[p->n_regions++] = (region){base, want};
    p->n_nodes++;
    p->st.reserved += want;
    p->st.n_regions++;
    b->addr = (uintptr_t)base;
    b->size = want;
    bin_insert(p, b);
    return PA_OK;
}

static int oom(pa_mempool *p, size_t size, pa_err *err, const char *why)
{
    char a[32], b[32], c[32];
    p->st.n_failed++;
    return pa_error(err, PA_ENOMEM, "%s pool out of memory: %s requesting %s with %s in use (limit %s)",
                    p->name, why, pa_format_size(size, a, sizeof a),
                    pa_format_size(p->st.current, b, sizeof b),
                    p->limit ? pa_format_size(p->limit, c, sizeof c) : "none");
}

int pa_mempool_alloc(pa_mempool *p, size_t size, void **out, pa_err *err)
{
    if (size > SIZE_MAX / 2)
        return pa_error(err, PA_ENOMEM, "%s pool: request of %zu bytes is impossibly large", p->name, size);
    size = size ? (size + p->align - 1) & ~(p->align - 1) : p->align;
    int rc = PA_OK;
    pthread_mutex_lock(&p->mu);
    if (pa_fault_alloc_hit()) {
        rc = oom(p, size, err, "injected fault");
        goto done;
    }
    block *b = NULL;
    /* Other threads may take the new region while grow() has the lock
     * released: check again after each growth (a few tries, then give up). */
    for (int tries = 0; !b; tries++) {
        if (p->limit && p->st.current + size > p->limit) {
            rc = oom(p, size, err, "over the limit");
            goto done;
        }
        if (p->live_n + 1 > p->live_cap / 2 && live_grow(p) != PA_OK) {
            rc = oom(p, size, err, "no host memory for bookkeeping");
            goto done;
        }
        if ((b = take_fit(p, size)) != NULL)
            break;
        pa_err tmp;
        pa_err_init(&tmp);
        if (tries == 4 || grow(p, size, &tmp) != PA_OK) {
            char why[600];
            snprintf(why, sizeof why, "reserving more failed (%s)",
                     tries == 4 ? "other threads took each new region" : tmp.msg);
            pa_err_close(&tmp);
            rc = oom(p, size, err, why);
            goto done;
        }
        pa_err_close(&tmp);
    }
    bin_remove(p, b);
    if (b->size - size >= p->align) {
        block *rest = pa_calloc(1, sizeof *rest);
        if (rest) {   /* without a node we just hand out the whole block */
            rest->addr = b->addr + size;
            rest->size = b->size - size;
            rest->prev = b;
            rest->next = b->next;
            if (b->next)
                b->next->prev = rest;
            b->next = rest;
            b->size = size;
            bin_insert(p, rest);
            p->n_nodes++;
        }
    }
    live_put(p, b);
    p->st.current += b->size;
    if (p->st.current > p->st.peak)
        p->st.peak = p->st.current;
    p->st.n_allocs++;
    *out = (void *)b->addr;
done:
    pthread_mutex_unlock(&p->mu);
    return rc;
}

int pa_mempool_free(pa_mempool *p, void *ptr)
{
    if (!ptr)
        return PA_OK;
    pthread_mutex_lock(&p->mu);
    size_t i = live_find(p, (uintptr_t)ptr);
    if (i == SIZE_MAX) {
        pthread_mutex_unlock(&p->mu);
        return PA_EINVAL;
    }
    block *b = p->live[i];
    live_del(p, i);
    p->st.current -= b->size;
    p->st.n_frees++;
    if (b->next && b->next->free) {   /* absorb the right neighbour */
        block *n = b->next;
        bin_remove(p, n);
        b->size += n->size;
        b->next = n->next;
        if (n->next)
            n->next->prev = b;
        pa_free(n);
        p->n_nodes--;
    }
    if (b->prev && b->prev->free) {   /* merge into the left neighbour */
        block *l = b->prev;
        bin_remove(p, l);
        l->size += b->size;
        l->next = b->next;
        if (b->next)
            b->next->prev = l;
        pa_free(b);
        p->n_nodes--;
        b = l;
    }
    bin_insert(p, b);
    pthread_mutex_unlock(&p->mu);
    return PA_OK;
}

bool pa_mempool_owns(pa_mempool *p, const void *ptr)
{
    uintptr_t a = (uintptr_t)ptr;
    bool yes = false;
    pthread_mutex_lock(&p->mu);
    for (size_t r = 0; r < p->n_regions && !yes; r++)
        yes = a >= (uintptr_t)p->regions[r].base && a < (uintptr_t)p->regions[r].base + p->regions[r].size;
    pthread_mutex_unlock(&p->mu);
    return yes;
}

size_t pa_mempool_block_size(pa_mempool *p, const void *ptr)
{
    pthread_mutex_lock(&p->mu);
    size_t i = live_find(p, (uintptr_t)ptr);
    size_t n = i == SIZE_MAX ? 0 : p->live[i]->size;
    pthread_mutex_unlock(&p->mu);
    return n;
}

void pa_mempool_stats_get(pa_mempool *p, pa_mempool_stats *out)
{
    pthread_mutex_lock(&p->mu);
    *out = p->st;
    out->host_bytes = p->n_nodes * sizeof(block) + p->live_cap * sizeof(block *) +
                      p->cap_regions * sizeof(region);
    pthread_mutex_unlock(&p->mu);
}

void pa_mempool_reset_peak(pa_mempool *p)
{
    pthread_mutex_lock(&p->mu);
    p->st.peak = p->st.current;
    pthread_mutex_unlock(&p->mu);
}

void pa_mempool_set_limit(pa_mempool *p, uint64_t limit)
{
    pthread_mutex_lock(&p->mu);
    p->limit = limit;
    p->st.limit = limit;
    pthread_mutex_unlock(&p->mu);
}

const char *pa_mempool_name(const pa_mempool *p) { return p->name; }
