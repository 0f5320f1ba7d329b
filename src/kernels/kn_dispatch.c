/*
 * kn_dispatch.c - the public relational kernel functions of kernels.h: thin
 * wrappers, generated from KN_OPS_LIST, that call the entry of the device's
 * table of kernels (kn_ops_int.h), and the cpu table itself.
 */
#include "kernels/kn_ops_int.h"

#include <string.h>

#define KN__CPU_ENTRY(name, params, args) .name = kn__cpu_##name,
const kn_ops kn__cpu_ops = {KN_OPS_LIST(KN__CPU_ENTRY)};
#undef KN__CPU_ENTRY

#ifdef PISTA_HAVE_CUDA
/* Only the kernels with a CUDA source: the others are PA_EUNSUPPORTED on a
 * cuda device, never a quiet run on the host. */
#define KN__CUDA_ENTRY(name, params, args) .name = kn__gpu_##name##_cuda,
const kn_ops kn__cuda_ops = {KN_OPS_GPU_LIST(KN__CUDA_ENTRY)};
#undef KN__CUDA_ENTRY
#endif

/* Indexed by dv_kind; kn__ops_swap may replace an entry (tests). */
static const kn_ops *tables[] = {
    [DV_KIND_CPU] = &kn__cpu_ops,
#ifdef PISTA_HAVE_CUDA
    [DV_KIND_CUDA] = &kn__cuda_ops,
#else
    [DV_KIND_CUDA] = NULL,
#endif
    [DV_KIND_SIM] = &kn__sim_ops,
};

const kn_ops *kn__ops_for(const dv_device *d)
{
    unsigned k = d ? (unsigned)dv_kind_of(d) : DV_KIND_CPU;
    return k < sizeof tables / sizeof tables[0] ? tables[k] : NULL;
}

const kn_ops *kn__ops_swap(dv_kind kind, const kn_ops *ops)
{
    if ((unsigned)kind >= sizeof tables / sizeof tables[0])
        return NULL;
    const kn_ops *old = tables[kind];
    tables[kind] = ops;
    return old;
}

static int missing(const dv_device *d, const char *kernel, pa_err *err)
{
    return pa_error(err, PA_EUNSUPPORTED, "kernel %s is not implemented on device %s", kernel,
                    d ? dv_name(d) : "host");
}

/* A kernel on the cpu device (not host evaluation without a device) counts
 * as one launch, as dv_launch_kernel counts the others. */
#define KN__WRAPPER(name, params, args)                                                                     \
    int kn_##name params                                                                                    \
    {                                                                                                       \
        const dv_device *d = ctx ? ctx->dev : NULL;                                                         \
        const kn_ops *ops = kn__ops_for(d);                                                                 \
        if (!ops || !ops->name)                                                                             \
            return missing(d, "kn_" #name, err);                                                            \
        if (d && ops == &kn__cpu_ops)                                                                       \
            pa_counter_add(PA_CTR_KERNELS_LAUNCHED, 1);                                                     \
        return ops->name args;                                                                              \
    }
KN_OPS_LIST(KN__WRAPPER)
#undef KN__WRAPPER

/* Whether the device's table has the kernel called `name` (without kn_). */
#define KN__HAS(kname, params, args) \
    if (!strcmp(name, #kname))       \
        return ops && ops->kname != NULL;
static bool has_kernel(const kn_ops *ops, const char *name)
{
    KN_OPS_LIST(KN__HAS)
    return true;   /* not a relational kernel: nothing a table could lack */
}
#undef KN__HAS

const char *kn_device_lacks(const dv_device *d, const char *const *kernels, int n)
{
    const kn_ops *ops = kn__ops_for(d);
    for (int i = 0; i < n; i++)
        if (!has_kernel(ops, kernels[i]))
            return kernels[i];
    return NULL;
}
