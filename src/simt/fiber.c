/*
 * fiber.c - the context switch under the SIMT emulation: a hand-written
 * switch that saves only callee-saved registers on x86-64, glibc's ucontext
 * elsewhere; fiber stacks in slabs with guard pages; the AddressSanitizer
 * annotations every switch needs. See simt_int.h for the design notes.
 */
#define _GNU_SOURCE 1   /* pthread_getattr_np */
#include "simt/simt_int.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef SIMT__ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

/* ------------------------------------------------------------- x86-64 */
#ifndef PISTA_SIMT_UCONTEXT

/* simt__switch(save, to): push the callee-saved registers, store the stack
 * pointer at *save, load `to` as the stack pointer and pop the registers
 * saved there; `ret` then continues wherever that context switched out (or,
 * for a new fiber, at simt__fiber_start). The 8-byte slot below the
 * registers holds MXCSR and the x87 control word, which the ABI also makes
 * callee-saved. */
void simt__switch(void **save, void *to) __attribute__((visibility("hidden")));
void simt__fiber_start(void) __attribute__((visibility("hidden")));

#if defined(__CET__)
#define SIMT__ENDBR "endbr64\n"
#else
#define SIMT__ENDBR ""
#endif

__asm__(".text\n"
        ".p2align 4\n"
        ".globl simt__switch\n"
        ".hidden simt__switch\n"
        ".type simt__switch,@function\n"
        "simt__switch:\n" SIMT__ENDBR
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size simt__switch, .-simt__switch\n"
        /* A new fiber's first `ret` lands here with the entry function in
         * rbx and its argument in r12; the stack looks like a call's (a zero
         * return address on top), so the entry starts with an ABI-aligned
         * stack and unwinders stop at it. */
        ".p2align 4\n"
        ".globl simt__fiber_start\n"
        ".hidden simt__fiber_start\n"
        ".type simt__fiber_start,@function\n"
        "simt__fiber_start:\n" SIMT__ENDBR
        "    movq %r12, %rdi\n"
        "    jmpq *%rbx\n"
        ".size simt__fiber_start, .-simt__fiber_start\n");

void simt__fiber_init(simt_fiber *f, void (*entry)(void *), void *arg)
{
    uintptr_t top = ((uintptr_t)f->stack + f->stack_size - f->colour) & ~(uintptr_t)15;
    uint64_t *sp = (uint64_t *)top;
    *--sp = 0;                            /* the entry's "return address" */
    *--sp = (uint64_t)(uintptr_t)simt__fiber_start;
    *--sp = 0;                            /* rbp */
    *--sp = (uint64_t)(uintptr_t)entry;   /* rbx */
    *--sp = (uint64_t)(uintptr_t)arg;     /* r12 */
    *--sp = 0;                            /* r13 */
    *--sp = 0;                            /* r14 */
    *--sp = 0;                            /* r15 */
    /* MXCSR default (all exceptions masked, round to nearest) and the x87
     * control word default (extended precision, exceptions masked). */
    *--sp = 0x1F80u | ((uint64_t)0x037Fu << 32);
    f->sp = sp;
}

static void raw_switch(simt_fiber *from, simt_fiber *to)
{
    simt__switch(&from->sp, to->sp);
}

/* ---------------------------------------------------------- ucontext */
#else

typedef struct uc_start {
    void (*entry)(void *);
    void *arg;
} uc_start;

/* makecontext passes int arguments only: the fiber pointer in two halves. */
static void uc_trampoline(unsigned hi, unsigned lo)
{
    simt_fiber *f = (simt_fiber *)(((uintptr_t)hi << 16 << 16) | (uintptr_t)lo);
    uc_start *s = (uc_start *)f->stack;   /* parked at the stack's low end by init */
    void (*entry)(void *) = s->entry;
    void *arg = s->arg;
    entry(arg);
}

void simt__fiber_init(simt_fiber *f, void (*entry)(void *), void *arg)
{
    uc_start *s = (uc_start *)f->stack;
    s->entry = entry;
    s->arg = arg;
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = (char *)f->stack + 64;
    f->uc.uc_stack.ss_size = f->stack_size - 64 - f->colour;
    f->uc.uc_link = NULL;
    uintptr_t p = (uintptr_t)f;
    makecontext(&f->uc, (void (*)(void))uc_trampoline, 2, (unsigned)(p >> 16 >> 16), (unsigned)p);
}

static void raw_switch(simt_fiber *from, simt_fiber *to)
{
    swapcontext(&from->uc, &to->uc);
}
#endif

/* ------------------------------------------------- switching, for ASan */

void simt__fiber_started(simt_fiber *self)
{
#ifdef SIMT__ASAN
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
    (void)self;
}

void simt__fiber_switch(simt_fiber *from, simt_fiber *to, bool dying)
{
#ifdef SIMT__ASAN
    __sanitizer_start_switch_fiber(dying ? NULL : &from->asan_fake, to->asan_bottom, to->asan_size);
#endif
    raw_switch(from, to);
#ifdef SIMT__ASAN
    __sanitizer_finish_switch_fiber(from->asan_fake, NULL, NULL);
    from->asan_fake = NULL;
#endif
    (void)dying;
}

/* -------------------------------------------------------------- stacks */

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

int simt__fiber_of_thread(simt_fiber *f, pa_err *err)
{
    memset(f, 0, sizeof *f);
#ifdef SIMT__ASAN
    pthread_attr_t attr;
    void *lo;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return pa_error(err, PA_EINTERNAL, "SIMT emulation: cannot read this thread's stack bounds");
    int rc = pthread_attr_getstack(&attr, &lo, &size);
    pthread_attr_destroy(&attr);
    if (rc != 0)
        return pa_error(err, PA_EINTERNAL, "SIMT emulation: cannot read this thread's stack bounds");
    f->asan_bottom = lo;
    f->asan_size = size;
#endif
    return PA_OK;
}

/* Stack tops spaced a multiple of the page size apart would all fall into
 * the same cache sets (and a block switches among hundreds of them), so
 * the k-th fiber of a thread starts its stack k cache lines lower, mod 64. */
#define COLOURS 64
#define LINE 64

int simt__slab_map(simt_fiber *fibers, int n, int first, pa_err *err)
{
    size_t pg = page_size(), per = pg + SIMT_STACK;
    uint8_t *base = mmap(NULL, per * (size_t)n, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (base == MAP_FAILED)
        return pa_error(err, PA_ENOMEM, "SIMT emulation: cannot map %d fiber stacks of %d KiB", n,
                        SIMT_STACK / 1024);
    for (int i = 0; i < n; i++) {
        uint8_t *guard = base + per * (size_t)i;
        if (mprotect(guard, pg, PROT_NONE) != 0) {
            munmap(base, per * (size_t)n);
            return pa_error(err, PA_ENOMEM, "SIMT emulation: cannot protect a fiber stack's guard page");
        }
        memset(&fibers[i], 0, sizeof fibers[i]);
        fibers[i].stack = guard + pg;
        fibers[i].stack_size = SIMT_STACK;
        fibers[i].colour = (size_t)((first + i) % COLOURS) * LINE;
        fibers[i].asan_bottom = fibers[i].stack;
        fibers[i].asan_size = SIMT_STACK;
    }
    return PA_OK;
}

void simt__slab_unmap(simt_fiber *fibers, int n)
{
    size_t pg = page_size();
    munmap((uint8_t *)fibers[0].stack - pg, (pg + SIMT_STACK) * (size_t)n);
}

/* Frames abandoned on a stack (a finished or failed GPU thread's) leave
 * ASan's red zones poisoned; a new thread's frames must not trip on them. */
void simt__stack_clean(simt_fiber *f)
{
#ifdef SIMT__ASAN
    __asan_unpoison_memory_region(f->stack, f->stack_size);
#endif
    (void)f;
}
