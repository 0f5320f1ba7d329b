/*
 * simt_int.h - internals of the SIMT emulation runtime (fiber.c, sched.c).
 *
 * Design notes
 * - A fiber is a stack plus a saved stack pointer. fiber.c switches between
 *   fibers by saving only the callee-saved registers (x86-64: rbx, rbp,
 *   r12-r15, MXCSR and the x87 control word) on the old stack and loading
 *   them from the new one: no system call, no signal mask. Elsewhere (or
 *   with PISTA_SIMT_UCONTEXT defined) the switch is glibc's swapcontext,
 *   which is correct but makes a system call per switch.
 * - Stacks belong to one OS thread's worker (sched.c) for the thread's
 *   life: carved from slabs of SIMT_SLAB fibers, each stack with a
 *   PROT_NONE guard page below it, so an overflow faults instead of writing
 *   into the neighbouring fiber. A stack is reused by the next GPU thread
 *   that needs one; nothing is mapped per block or per launch. The k-th
 *   fiber's stack starts k cache lines (mod 64) below its top, so that the
 *   contexts a block switches among do not all map to one cache set.
 * - Under AddressSanitizer every switch is announced with
 *   __sanitizer_start_switch_fiber / __sanitizer_finish_switch_fiber, and a
 *   stack is unpoisoned before it is reused (frames abandoned on it leave
 *   poisoned red zones behind).
 * - The scheduler context is the OS thread's own stack: a simt_fiber whose
 *   stack bounds are unknown until the first switch away from it tells
 *   ASan (fiber_finish records them).
 */
#ifndef PISTA_SIMT_INT_H
#define PISTA_SIMT_INT_H

#include "simt/simt_rt.h"

#if defined(__SANITIZE_ADDRESS__)
#define SIMT__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIMT__ASAN 1
#endif
#endif

#if !defined(PISTA_SIMT_UCONTEXT) && !defined(__x86_64__)
#define PISTA_SIMT_UCONTEXT 1
#endif
#ifdef PISTA_SIMT_UCONTEXT
#include <ucontext.h>
#endif

/* Bytes of stack per GPU thread. A kernel's locals live here; CUDA gives a
 * thread 1 KiB of stack by default, so this is generous, and sanitizer
 * builds get more for their red zones. */
#ifdef SIMT__ASAN
#define SIMT_STACK (256 * 1024)
#else
#define SIMT_STACK (64 * 1024)
#endif
/* Fibers mapped at once when a worker needs more. */
#define SIMT_SLAB 32

typedef struct simt_fiber {
#ifdef PISTA_SIMT_UCONTEXT
    ucontext_t uc;
#else
    void *sp;                  /* saved stack pointer while switched out */
#endif
    void *stack;               /* lowest usable byte (above the guard page); NULL: an OS thread's stack */
    size_t stack_size;
    size_t colour;             /* bytes left free at the stack's top (see fiber.c) */
    void *asan_fake;           /* ASan's fake stack while switched out */
    const void *asan_bottom;   /* for the scheduler context: learnt on the first switch */
    size_t asan_size;
    struct simt_fiber *next_free;
    struct simt_thr *thr;      /* the GPU thread running on it */
} simt_fiber;

/* Make f start at entry(arg) on its stack the next time it is switched to.
 * entry must never return. */
void simt__fiber_init(simt_fiber *f, void (*entry)(void *), void *arg);
/* Save the running context in from and run to. dying: from will never be
 * resumed (ASan drops its fake stack). Returns when something switches back
 * to from. */
void simt__fiber_switch(simt_fiber *from, simt_fiber *to, bool dying);
/* The first thing a fiber's entry function calls (completes the switch
 * that started it, for ASan). */
void simt__fiber_started(simt_fiber *self);

/* The context of the calling OS thread's own stack (the scheduler's). */
int simt__fiber_of_thread(simt_fiber *f, pa_err *err);
/* Before a stack is reused: clear what abandoned frames left (ASan). */
void simt__stack_clean(simt_fiber *f);

/* Map n fibers' stacks with guard pages into fibers[0..n) (one mmap); the
 * slab is unmapped with simt__slab_unmap(fibers, n). first: how many
 * fibers the thread mapped before (it staggers their stack tops). */
int simt__slab_map(simt_fiber *fibers, int n, int first, pa_err *err);
void simt__slab_unmap(simt_fiber *fibers, int n);

/* ----------------------------------------------------------- scheduler
 *
 * One worker per OS thread that runs blocks (grid.c creates it on first
 * use and frees it when the thread exits). A block runs entirely on its
 * worker: its GPU threads are simt_thr entries; a thread gets a fiber when
 * it first runs and gives it back when it finishes. A thread that finishes
 * while threads not yet started remain hands its fiber straight to the next
 * one (no switch), so a kernel without barriers runs every thread of a
 * block on one fiber. A thread that must wait (barrier, warp intrinsic)
 * switches directly to the next runnable thread, else starts the next new
 * one, else returns to the scheduler context, which finds the block done,
 * resolves __activemask, or reports the block as deadlocked.
 */
enum simt_state { SIMT_T_NEW, SIMT_T_RUN, SIMT_T_BAR, SIMT_T_WARP, SIMT_T_AMASK, SIMT_T_DONE, SIMT_T_FAILED };

typedef struct simt_thr {
    uint32_t lin;          /* linear index in the block; lane = lin % 32 */
    uint8_t state;         /* simt_state */
    uint8_t op;            /* the barrier or warp op it waits at */
    simt_dim3 idx;         /* threadIdx */
    simt_fiber *fib;       /* while started and not finished */
    uint32_t mask;         /* warp op: its mask */
    int32_t arg, width;
    uint64_t val, result;
    const char *site;      /* where it waits ("file:line") */
} simt_thr;

/* One grid being run: shared by the workers that run its blocks. */
typedef struct simt_grid {
    simt_config cfg;
    simt_body_fn body;
    const void *params;
    uint64_t n_blocks;
    pa_err err;            /* the first failing block's error */
    int failed;            /* atomic: skip blocks not started */
} simt_grid;

typedef struct simt_worker {
    simt_fiber sched;      /* the OS thread's own context */
    simt_fiber *free;      /* fibers not in use */
    simt_fiber **slabs;    /* SIMT_SLAB fibers each */
    int n_slabs, cap_slabs;
    bool busy;             /* running a block (catches nested launches) */
    /* The block being run. */
    simt_grid *grid;
    uint32_t n, n_done, next_new;
    uint32_t rq_head, rq_len;
    uint32_t bar_n, bar_pred;
    unsigned bar_result;
    uint8_t bar_op;
    const char *bar_site;
    uint32_t n_amask;
    bool failed;
    simt_fiber *dead;      /* a finished thread's fiber, freed by whoever runs next */
    uint32_t warp_arrived[SIMT_MAX_BLOCK_THREADS / 32];
    uint32_t warp_live[SIMT_MAX_BLOCK_THREADS / 32];
    uint32_t grp_mask[SIMT_MAX_BLOCK_THREADS / 32];   /* the one group waiting, unless grp_mixed */
    uint8_t grp_op[SIMT_MAX_BLOCK_THREADS / 32];
    bool grp_mixed[SIMT_MAX_BLOCK_THREADS / 32];
    simt_stats st;         /* counts not yet added to the process's */
    uint32_t runq[SIMT_MAX_BLOCK_THREADS];
    simt_thr thr[SIMT_MAX_BLOCK_THREADS];
    _Alignas(16) uint8_t smem[SIMT_MAX_DYNAMIC_SMEM];
} simt_worker;

/* grid.c: the calling thread's worker, created on first use (NULL and an
 * error on failure). */
simt_worker *simt__worker(pa_err *err);
/* A free fiber of w (mapping a slab when none is left); NULL and an error
 * on err when no memory. */
simt_fiber *simt__fiber_get(simt_worker *w, pa_err *err);
static inline void simt__fiber_put(simt_worker *w, simt_fiber *f)
{
    f->thr = NULL;
    f->next_free = w->free;
    w->free = f;
}
/* Add w's counts to the process's and clear them. */
void simt__stats_flush(simt_worker *w);

/* sched.c: run block number b (linear) of g on w. Failures go to g->err. */
void simt__run_block(simt_worker *w, simt_grid *g, uint64_t b);
/* The worker running a block on this OS thread, and its running GPU thread
 * (NULL outside kernels). */
extern __thread simt_worker *simt__cur_w;
extern __thread simt_thr *simt__cur_t;
/* Fail the block from its running thread t: record the error (with the
 * kernel, block and thread) and leave t's fiber for good. */
PA_PRINTF(4, 5)
_Noreturn void simt__fail(simt_worker *w, simt_thr *t, int code, const char *fmt, ...);
/* Make t runnable. */
void simt__wake(simt_worker *w, simt_thr *t);
/* The running thread t waits (its state says for what) until woken. */
void simt__wait(simt_worker *w, simt_thr *t);
const char *simt__op_name(int op);
bool simt__same_site(const char *a, const char *b);

/* warp.c: after a lane of warp wi exited, complete the groups that no
 * longer need it; with nothing runnable, give each __activemask its lanes. */
void simt__warp_recheck(simt_worker *w, uint32_t wi);
void simt__resolve_activemask(simt_worker *w);

#endif /* PISTA_SIMT_INT_H */
