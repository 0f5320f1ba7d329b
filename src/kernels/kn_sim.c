/*
 * kn_sim.c - the `sim` device's table of kernels: the argument blocks and
 * launch shared by every entry (kn_sim_int.h), and the partition order.
 * Expressions, joins, aggregation and sort are in kn_sim_*.c. The kernels
 * with a CUDA source (kn_gpu_*.cu: selection, gather, take, append,
 * concatenation, hashing, partition ids and offsets) run it under the SIMT
 * emulation instead.
 */
#include "kernels/kn_sim_int.h"

#include <string.h>

/* Kernels with a CUDA source run it under SIMT emulation; the others run
 * their cpu loop as an enqueued host function. */
#define KN__SIM_ENTRY(name, params, args) .name = kn__sim_##name,
#define KN__SIMT_ENTRY(name, params, args) .name = kn__gpu_##name##_simt,
const kn_ops kn__sim_ops = {KN_OPS_GPU_LIST(KN__SIMT_ENTRY) KN_OPS_HOST_LIST(KN__SIM_ENTRY)};
#undef KN__SIM_ENTRY
#undef KN__SIMT_ENTRY

/* ------------------------------------------------------ argument blocks */

static size_t up16(size_t n) { return (n + 15) & ~(size_t)15; }

void kn__args_begin(kn__args *b, size_t head_size)
{
    memset(b, 0, sizeof *b);
    kn__args_put(b, NULL, head_size);
}

size_t kn__args_put(kn__args *b, const void *src, size_t n)
{
    if (b->oom)
        return 0;
    size_t at = up16(b->used);
    if (at + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < at + n)
            cap *= 2;
        uint8_t *p = pa_realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return 0;
        }
        b->p = p;
        b->cap = cap;
    }
    if (n && src)
        memcpy(b->p + at, src, n);
    b->used = at + n;
    return at;
}

int kn__args_launch(kn__args *b, const void *head, size_t head_size, const kn_ctx *ctx, dv_kernel_fn fn,
                    pa_err *err)
{
    int rc;
    if (b->oom) {
        rc = pa_error(err, PA_ENOMEM, "out of memory for the arguments of a kernel on %s", dv_name(ctx->dev));
    } else {
        memcpy(b->p, head, head_size);
        rc = kn__sim_launch(ctx, fn, b->p, b->used, err);
    }
    pa_free(b->p);
    b->p = NULL;
    return rc;
}

int kn__sim_launch(const kn_ctx *ctx, dv_kernel_fn fn, const void *args, size_t size, pa_err *err)
{
    if (!ctx->stream)
        return pa_error(err, PA_EINVAL, "a kernel on device %s needs a stream", dv_name(ctx->dev));
    return dv_launch_kernel(ctx->stream, fn, args, size, err);
}
