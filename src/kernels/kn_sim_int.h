/*
 * kn_sim_int.h - what the `sim` device's kernel entries (kn_sim*.c) share.
 *
 * Design notes
 * - An entry runs on the calling thread and touches no device memory: it
 *   copies its arguments into an argument block (scalars, device pointers,
 *   pa_column descriptors and host structs by value, arrays of descriptors
 *   appended to the block), poisons the pinned outputs the kernel will
 *   write (dv_poison_output; never a field the kernel also reads, such as a
 *   join cursor's row), sets host-side output metadata the call fixes, and
 *   enqueues a kernel function with dv_launch_kernel, which copies the
 *   block. The kernel function runs on the device's executor later and
 *   calls the kn__cpu_ loop with pointers into its copy of the block.
 * - Arrays appended to a block are found by byte offset (KN__AT), since the
 *   launch moves the block; arrays of pointers (sort sources) are rebuilt
 *   inside the kernel's copy. Offsets are multiples of 16, which keeps a
 *   program's __int128 constants aligned as long as the launch's copy is
 *   16-aligned (pa_malloc's is).
 */
#ifndef PISTA_KN_SIM_INT_H
#define PISTA_KN_SIM_INT_H

#include "kernels/kn_ops_int.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An argument block under construction: room for a head struct, then
 * arrays at 16-byte aligned offsets. */
typedef struct kn__args {
    uint8_t *p;
    size_t used, cap;
    bool oom;
} kn__args;

/* Start a block whose first head_size bytes will hold the head struct. */
void kn__args_begin(kn__args *b, size_t head_size);
/* Append n bytes from src (nothing when n is 0); returns their offset. On
 * failure to grow the block the launch reports PA_ENOMEM. */
size_t kn__args_put(kn__args *b, const void *src, size_t n);
/* Copy head into the block, enqueue fn with the block on ctx's stream and
 * free the block. */
int kn__args_launch(kn__args *b, const void *head, size_t head_size, const kn_ctx *ctx, dv_kernel_fn fn,
                    pa_err *err);

/* The array at byte offset off of a kernel's argument block. */
#define KN__AT(args, T, off) ((T *)(void *)((uint8_t *)(args) + (off)))

/* Enqueue fn with a fixed-size argument struct. PA_EINVAL without a stream. */
int kn__sim_launch(const kn_ctx *ctx, dv_kernel_fn fn, const void *args, size_t size, pa_err *err);

/* dv_poison_output of one pinned value. */
#define KN__POISON(ctx, p) dv_poison_output((ctx)->dev, (p), sizeof *(p))

#ifdef __cplusplus
}
#endif

#endif /* PISTA_KN_SIM_INT_H */
