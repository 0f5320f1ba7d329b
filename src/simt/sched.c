/*
 * sched.c - one block of an emulated kernel: its GPU threads as fibers on
 * the calling OS thread, __syncthreads and its _count/_and/_or forms, the
 * detection of barriers that can never complete and of deadlocks, traps.
 * The scheduling scheme is in simt_int.h; warp intrinsics in warp.c.
 *
 * Rules checked (CUDA calls breaking them undefined; here they fail the
 * launch with a message): every thread of a block reaches each
 * __syncthreads, the same one (call site) as the others, and none has
 * exited before; a warp intrinsic's mask names the calling lane, and the
 * lanes it names that have not exited reach an intrinsic of the same kind
 * with the same mask. Lanes that exited (or do not exist, in a block that
 * is not a multiple of 32 threads) are left out of a warp intrinsic; a
 * shuffle from a lane that does not take part returns DV_POISON_BYTE bytes.
 */
#include "simt/simt_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__thread simt_ids simt__ids;

__thread simt_worker *simt__cur_w;
__thread simt_thr *simt__cur_t;

#define RQ_MASK (SIMT_MAX_BLOCK_THREADS - 1)

const char *simt__op_name(int op)
{
    static const char *const names[] = {"__syncthreads", "__syncthreads_count", "__syncthreads_and",
                                        "__syncthreads_or", "__shfl_sync", "__shfl_up_sync",
                                        "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync",
                                        "__any_sync", "__all_sync", "__syncwarp"};
    return op >= 0 && op < (int)(sizeof names / sizeof names[0]) ? names[op] : "?";
}

bool simt__same_site(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* ------------------------------------------------------------- errors */

static void record(simt_worker *w, const simt_thr *t, int code, const char *msg)
{
    const simt_grid *g = w->grid;
    const simt_dim3 *b = &simt__ids.block_idx;
    if (t)
        pa_error(&w->grid->err, code, "kernel %s: block (%u,%u,%u), thread (%u,%u,%u): %s", g->cfg.name, b->x,
                 b->y, b->z, t->idx.x, t->idx.y, t->idx.z, msg);
    else
        pa_error(&w->grid->err, code, "kernel %s: block (%u,%u,%u): %s", g->cfg.name, b->x, b->y, b->z, msg);
    w->failed = true;
    __atomic_store_n(&w->grid->failed, 1, __ATOMIC_RELAXED);
}

/* Fail the block from the running GPU thread t: record the error and leave
 * t's fiber for good (the scheduler gives every fiber of the block back). */
void simt__fail(simt_worker *w, simt_thr *t, int code, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    record(w, t, code, msg);
    t->state = SIMT_T_FAILED;
    w->st.switches++;
    simt__fiber_switch(t->fib, &w->sched, true);
    __builtin_unreachable();
}

/* ------------------------------------------------------- run queue */

void simt__wake(simt_worker *w, simt_thr *t)
{
    t->state = SIMT_T_RUN;
    w->runq[(w->rq_head + w->rq_len++) & RQ_MASK] = t->lin;
}

static simt_thr *next_runnable(simt_worker *w)
{
    if (!w->rq_len)
        return NULL;
    uint32_t i = w->runq[w->rq_head];
    w->rq_head = (w->rq_head + 1) & RQ_MASK;
    w->rq_len--;
    return &w->thr[i];
}

static void fiber_main(void *arg);

/* Give the next thread not yet started a fiber; NULL (the block failed)
 * without memory for one. */
static simt_fiber *start_new(simt_worker *w)
{
    simt_fiber *f = simt__fiber_get(w, &w->grid->err);
    if (!f) {
        w->failed = true;
        __atomic_store_n(&w->grid->failed, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    simt_thr *t = &w->thr[w->next_new++];
    t->fib = f;
    t->state = SIMT_T_RUN;
    f->thr = t;
    simt__stack_clean(f);
    simt__fiber_init(f, fiber_main, f);
    return f;
}

/* What to run after the current thread stops: a woken thread, else a new
 * one, else the scheduler context. */
static simt_fiber *pick(simt_worker *w)
{
    simt_thr *t = next_runnable(w);
    if (t)
        return t->fib;
    simt_fiber *f = NULL;
    if (w->next_new < w->n && !w->failed)
        f = start_new(w);
    return f ? f : &w->sched;
}

static void release_dead(simt_worker *w)
{
    if (w->dead) {
        simt__fiber_put(w, w->dead);
        w->dead = NULL;
    }
}

/* The running thread t waits (its state says for what) until woken. */
void simt__wait(simt_worker *w, simt_thr *t)
{
    simt_fiber *to = pick(w);
    w->st.switches++;
    simt__fiber_switch(t->fib, to, false);
    release_dead(w);
    simt__cur_t = t;
    simt__ids.thread_idx = t->idx;
}

/* ---------------------------------------------------------- barriers */

unsigned simt__sync(int op, int pred, const char *site)
{
    simt_worker *w = simt__cur_w;
    simt_thr *t = simt__cur_t;
    if (!w || !t)
        return op == SIMT_OP_SYNC_COUNT ? pred != 0 : (unsigned)(pred != 0);
    if (w->n_done)
        simt__fail(w, t, PA_EDEVICE,
                   "%s at %s reached after %u threads of the block exited (every thread of a block must reach each "
                   "barrier)",
                   simt__op_name(op), site, w->n_done);
    if (w->bar_n && (w->bar_op != op || !simt__same_site(w->bar_site, site)))
        simt__fail(w, t, PA_EDEVICE, "%s at %s reached while %u threads wait at %s at %s (a barrier in divergent code)",
                   simt__op_name(op), site, w->bar_n, simt__op_name(w->bar_op), w->bar_site);
    if (!w->bar_n) {
        w->bar_op = (uint8_t)op;
        w->bar_site = site;
        w->bar_pred = 0;
    }
    w->bar_pred += pred != 0;
    t->site = site;
    if (++w->bar_n == w->n) {   /* the last to arrive releases the others and runs on */
        uint32_t c = w->bar_pred;
        w->bar_result = op == SIMT_OP_SYNC_COUNT ? c
                        : op == SIMT_OP_SYNC_AND ? c == w->n
                        : op == SIMT_OP_SYNC_OR  ? c > 0
                                                 : 0;
        w->bar_n = 0;
        for (uint32_t i = 0; i < w->n; i++)
            if (i != t->lin)
                simt__wake(w, &w->thr[i]);
        w->st.barriers++;
        return w->bar_result;
    }
    t->op = (uint8_t)op;
    t->state = SIMT_T_BAR;
    simt__wait(w, t);
    return w->bar_result;
}

/* ------------------------------------------------------------ threads */

void simt__trap(const char *what, const char *site)
{
    if (!simt__cur_w || !simt__cur_t)
        __builtin_trap();   /* a __device__ function trapped outside any kernel: nothing to report it to */
    simt__fail(simt__cur_w, simt__cur_t, PA_EDEVICE, "%s at %s", what, site);
}

void *simt__dynamic_smem(void)
{
    return simt__cur_w ? simt__cur_w->smem : NULL;
}

/* t returned from the kernel. */
static void thread_exit(simt_worker *w, simt_thr *t)
{
    t->state = SIMT_T_DONE;
    w->n_done++;
    if (w->bar_n)
        simt__fail(w, t, PA_EDEVICE,
                   "exited while %u threads of the block wait at %s at %s (every thread of a block must reach each "
                   "barrier)",
                   w->bar_n, simt__op_name(w->bar_op), w->bar_site);
    uint32_t wi = t->lin >> 5;
    w->warp_live[wi] &= ~(1u << (t->lin & 31));
    if (w->warp_arrived[wi])
        simt__warp_recheck(w, wi);
}

/* Every fiber starts here and runs GPU threads until none is left to
 * adopt; then it gives itself up. */
static void fiber_main(void *arg)
{
    simt_fiber *f = arg;
    simt__fiber_started(f);
    simt_worker *w = simt__cur_w;
    release_dead(w);
    for (;;) {
        simt_thr *t = f->thr;
        simt__cur_t = t;
        simt__ids.thread_idx = t->idx;
        w->grid->body(w->grid->params);
        thread_exit(w, t);
        t->fib = NULL;
        if (w->next_new < w->n) {   /* the next new thread runs on this fiber */
            simt_thr *n = &w->thr[w->next_new++];
            n->fib = f;
            n->state = SIMT_T_RUN;
            f->thr = n;
            continue;
        }
        simt_thr *next = next_runnable(w);
        w->dead = f;
        w->st.switches++;
        simt__fiber_switch(f, next ? next->fib : &w->sched, true);
        __builtin_unreachable();
    }
}

/* ------------------------------------------------------------- blocks */

static void block_init(simt_worker *w, simt_grid *g, uint64_t b)
{
    const simt_dim3 bd = g->cfg.block, gd = g->cfg.grid;
    simt__ids.block_idx = (simt_dim3){(unsigned)(b % gd.x), (unsigned)(b / gd.x % gd.y),
                                      (unsigned)(b / gd.x / gd.y)};
    simt__ids.block_dim = bd;
    simt__ids.grid_dim = gd;
    w->grid = g;
    w->n = bd.x * bd.y * bd.z;
    w->n_done = w->next_new = w->rq_head = w->rq_len = 0;
    w->bar_n = w->n_amask = 0;
    w->failed = false;
    w->dead = NULL;
    unsigned x = 0, y = 0, z = 0;
    for (uint32_t i = 0; i < w->n; i++) {
        simt_thr *t = &w->thr[i];
        t->lin = i;
        t->state = SIMT_T_NEW;
        t->idx = (simt_dim3){x, y, z};
        t->fib = NULL;
        if (++x == bd.x) {
            x = 0;
            if (++y == bd.y) {
                y = 0;
                z++;
            }
        }
    }
    uint32_t n_warps = (w->n + 31) / 32;
    for (uint32_t i = 0; i < n_warps; i++) {
        uint32_t lanes = w->n - i * 32;
        w->warp_live[i] = lanes >= 32 ? 0xFFFFFFFFu : (1u << lanes) - 1;
        w->warp_arrived[i] = 0;
    }
    if (g->cfg.smem)   /* shared memory starts undefined on a GPU: make reliance on zeros visible */
        memset(w->smem, DV_POISON_BYTE, g->cfg.smem);
}

/* Scheduler context: nothing can run but the block is not done. */
static void report_deadlock(simt_worker *w)
{
    const simt_thr *bar = NULL, *warp = NULL;
    for (uint32_t i = 0; i < w->n; i++) {
        const simt_thr *t = &w->thr[i];
        if (t->state == SIMT_T_BAR && !bar)
            bar = t;
        if (t->state == SIMT_T_WARP && !warp)
            warp = t;
    }
    char msg[400];
    int k = 0;
    if (warp) {
        uint32_t wi = warp->lin >> 5;
        uint32_t missing = warp->mask & w->warp_live[wi] & ~w->warp_arrived[wi];
        k = snprintf(msg, sizeof msg,
                     "deadlock: lane %u of warp %u waits at %s (mask 0x%08x) at %s for lanes 0x%08x, which wait "
                     "elsewhere",
                     warp->lin & 31, wi, simt__op_name(warp->op), warp->mask, warp->site, missing);
    }
    if (bar)
        snprintf(msg + k, sizeof msg - (size_t)k, "%s%u of %u threads wait at %s at %s", k ? "; " : "deadlock: ",
                 w->bar_n, w->n, simt__op_name(bar->op), bar->site);
    record(w, warp ? warp : bar, PA_EDEVICE, msg);
}

void simt__run_block(simt_worker *w, simt_grid *g, uint64_t b)
{
    block_init(w, g, b);
    simt__cur_w = w;
    for (;;) {
        simt_fiber *to = pick(w);
        if (to != &w->sched) {
            w->st.switches++;
            simt__fiber_switch(&w->sched, to, false);
            release_dead(w);
            if (!w->failed)
                continue;
        }
        if (w->failed || w->n_done == w->n)
            break;
        if (w->n_amask) {
            simt__resolve_activemask(w);
            continue;
        }
        report_deadlock(w);
        break;
    }
    for (uint32_t i = 0; i < w->n; i++)   /* a failed block's threads are abandoned where they wait */
        if (w->thr[i].fib) {
            simt__fiber_put(w, w->thr[i].fib);
            w->thr[i].fib = NULL;
        }
    release_dead(w);
    simt__cur_w = NULL;
    simt__cur_t = NULL;
    w->st.blocks++;
    w->st.threads += w->n;
}
