/*
 * net_nccl_cuda.c - NCCL for nt_gpu_* (net_gpu.c), loaded at run time:
 * libnccl.so.2 is opened with dlopen when a communicator is first made, so
 * the build needs only NCCL's header (the CUDA toolkit's) and a machine
 * without NCCL gets an error naming the library, not a missing symbol at
 * start-up. Compiled with the CUDA backend (a _cuda.c file).
 */
#include "net/net_int.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef struct nccl_lib {
    void *h;
    int version;
    __typeof__(&ncclGetVersion) get_version;
    __typeof__(&ncclGetUniqueId) get_id;
    __typeof__(&ncclCommInitRank) init;
    __typeof__(&ncclCommDestroy) destroy;
    __typeof__(&ncclCommAbort) abort_;
    __typeof__(&ncclGroupStart) group_start;
    __typeof__(&ncclGroupEnd) group_end;
    __typeof__(&ncclSend) send;
    __typeof__(&ncclRecv) recv;
    __typeof__(&ncclGetErrorString) errstr;
} nccl_lib;

static nccl_lib lib;
static int lib_rc = -1;   /* -1: not tried; else the status of the one try */
static char lib_why[200];
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

#define SYM(field, name)                                                                    \
    do {                                                                                    \
        *(void **)&lib.field = dlsym(lib.h, name);                                          \
        if (!lib.field) {                                                                   \
            snprintf(lib_why, sizeof lib_why, "libnccl.so.2 has no %s (NCCL too old?)", name); \
            return;                                                                         \
        }                                                                                   \
    } while (0)

static void load(void)
{
    lib_rc = PA_EUNSUPPORTED;
    lib.h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib.h)
        lib.h = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib.h) {
        const char *e = dlerror();
        snprintf(lib_why, sizeof lib_why, "cannot load NCCL (libnccl.so.2: %s); install it (the CUDA toolkit's, or "
                 "Debian's libnccl2)", e ? e : "not found");
        return;
    }
    SYM(get_version, "ncclGetVersion");
    SYM(get_id, "ncclGetUniqueId");
    SYM(init, "ncclCommInitRank");
    SYM(destroy, "ncclCommDestroy");
    SYM(abort_, "ncclCommAbort");
    SYM(group_start, "ncclGroupStart");
    SYM(group_end, "ncclGroupEnd");
    SYM(send, "ncclSend");
    SYM(recv, "ncclRecv");
    SYM(errstr, "ncclGetErrorString");
    if (lib.get_version(&lib.version) != ncclSuccess)
        lib.version = 0;
    lib_rc = PA_OK;
}

typedef struct nccl_impl {
    int ordinal;
    ncclComm_t comm;
    char desc[64];
} nccl_impl;

static int nccl_fail(ncclResult_t r, const char *what, pa_err *err)
{
    return pa_error(err, PA_ENET, "NCCL %s: %s", what, lib.errstr ? lib.errstr(r) : "error");
}

int nt__nccl_prepare(dv_device *dev, void **impl, pa_err *err)
{
    *impl = NULL;
    pthread_once(&lib_once, load);
    if (lib_rc != PA_OK)
        return pa_error(err, lib_rc, "%s", lib_why);
    cudaError_t ce = cudaSetDevice(dv_ordinal(dev));
    if (ce != cudaSuccess)
        return pa_error(err, PA_EDEVICE, "NCCL: cuda:%d cannot be used: %s", dv_ordinal(dev), cudaGetErrorString(ce));
    nccl_impl *n = pa_calloc(1, sizeof *n);
    if (!n)
        return pa_error(err, PA_ENOMEM, "out of memory opening NCCL");
    n->ordinal = dv_ordinal(dev);
    snprintf(n->desc, sizeof n->desc, "NCCL %d.%d.%d on cuda:%d", lib.version / 10000, lib.version / 100 % 100,
             lib.version % 100, n->ordinal);
    *impl = n;
    return PA_OK;
}

int nt__nccl_unique_id(void *impl, char id[NT__NCCL_ID_BYTES], pa_err *err)
{
    (void)impl;
    _Static_assert(sizeof(ncclUniqueId) == NT__NCCL_ID_BYTES, "NCCL's id is 128 bytes");
    ncclUniqueId u;
    ncclResult_t r = lib.get_id(&u);
    if (r != ncclSuccess)
        return nccl_fail(r, "ncclGetUniqueId", err);
    memcpy(id, &u, sizeof u);
    return PA_OK;
}

int nt__nccl_init(void *impl, const char id[NT__NCCL_ID_BYTES], int rank, int size, pa_err *err)
{
    nccl_impl *n = impl;
    ncclUniqueId u;
    memcpy(&u, id, sizeof u);
    cudaError_t ce = cudaSetDevice(n->ordinal);
    if (ce != cudaSuccess)
        return pa_error(err, PA_EDEVICE, "NCCL: cuda:%d cannot be used: %s", n->ordinal, cudaGetErrorString(ce));
    ncclResult_t r = lib.init(&n->comm, size, u, rank);
    if (r != ncclSuccess) {
        n->comm = NULL;
        return nccl_fail(r, "ncclCommInitRank", err);
    }
    return PA_OK;
}

int nt__nccl_alltoallv(void *impl, void *stream, int size, const void *const *send, const int64_t *send_bytes,
                       void *const *recv, const int64_t *recv_bytes, pa_err *err)
{
    nccl_impl *n = impl;
    if (!n || !n->comm)
        return pa_error(err, PA_EINVAL, "NCCL all-to-all without a communicator");
    ncclResult_t r = lib.group_start();
    if (r != ncclSuccess)
        return nccl_fail(r, "ncclGroupStart", err);
    ncclResult_t first = ncclSuccess;
    for (int p = 0; p < size; p++) {   /* one group: NCCL pairs them without deadlock */
        if (send_bytes[p] > 0 && first == ncclSuccess)
            first = lib.send(send[p], (size_t)send_bytes[p], ncclUint8, p, n->comm, (cudaStream_t)stream);
        if (recv_bytes[p] > 0 && first == ncclSuccess)
            first = lib.recv(recv[p], (size_t)recv_bytes[p], ncclUint8, p, n->comm, (cudaStream_t)stream);
    }
    r = lib.group_end();
    if (first != ncclSuccess)
        return nccl_fail(first, "ncclSend/ncclRecv", err);
    if (r != ncclSuccess)
        return nccl_fail(r, "ncclGroupEnd", err);
    return PA_OK;
}

const char *nt__nccl_describe(const void *impl)
{
    const nccl_impl *n = impl;
    return n ? n->desc : "none";
}

void nt__nccl_close(void *impl)
{
    nccl_impl *n = impl;
    if (!n)
        return;
    if (n->comm)
        lib.destroy(n->comm);
    pa_free(n);
}
