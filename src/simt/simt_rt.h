/*
 * simt_rt.h - the SIMT emulation runtime's C surface: run a grid of a
 * host-compiled CUDA kernel (see simt.h, the header kernel sources include)
 * on the calling thread and a thread pool, or enqueue it on a `cpu` or `sim`
 * stream. Usable from C and C++.
 *
 * A grid runs block by block; the threads of a block are fibers on one OS
 * thread that switch at barriers and warp intrinsics. Blocks run in
 * parallel over the thread pool, so atomics between blocks are real.
 * Failures of a kernel (a bad launch configuration, a trap, a barrier or
 * warp intrinsic that some threads of the block can never complete) are
 * returned as an error with a message naming the kernel, block and thread;
 * on a stream they become its sticky error, as dv_launch_kernel's do.
 */
#ifndef PISTA_SIMT_RT_H
#define PISTA_SIMT_RT_H

#include "device/device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct simt_dim3 {
    unsigned x, y, z;
} simt_dim3;

/* CUDA's limits (compute capability 7.0 to 9.0), enforced so that a launch
 * that fails on a GPU fails here too. Dynamic shared memory is limited to
 * what a kernel gets without opting in (cudaFuncAttributeMaxDynamicSharedMemorySize). */
#define SIMT_WARP_SIZE 32
#define SIMT_MAX_BLOCK_THREADS 1024
#define SIMT_MAX_BLOCK_X 1024
#define SIMT_MAX_BLOCK_Y 1024
#define SIMT_MAX_BLOCK_Z 64
#define SIMT_MAX_GRID_X 2147483647u
#define SIMT_MAX_GRID_YZ 65535u
#define SIMT_MAX_DYNAMIC_SMEM (48 * 1024)

typedef struct simt_config {
    simt_dim3 grid, block;
    size_t smem;          /* dynamic shared memory per block, bytes */
    const char *name;     /* the kernel's name, for messages (NULL: "kernel") */
} simt_config;

/* One GPU thread's work: call the kernel with the launch's parameters.
 * simt.h's launch macro generates it; C callers may write their own. */
typedef void (*simt_body_fn)(const void *params);

/* PA_OK, or PA_EINVAL naming the limit the configuration breaks. */
int simt_check_config(const simt_config *cfg, pa_err *err);

/* Run the grid now: blocks over the calling thread plus the pool's threads
 * (tp NULL: the caller alone, block after block). Returns when every block
 * finished; on the first failing block the blocks not started are skipped
 * and its error is returned. params is read by every thread and must stay
 * valid until the call returns. Must not be called from inside a kernel. */
int simt_run(pa_threadpool *tp, const simt_config *cfg, simt_body_fn body, const void *params, pa_err *err);

/* Free the calling thread's fiber stacks and block state now rather than
 * when it exits (pool threads' go when the pool is destroyed): for a
 * program's main thread after it ran grids with simt_run. */
void simt_release_thread(void);

/* Enqueue the grid on s (cpu and sim devices; PA_EUNSUPPORTED on cuda,
 * whose kernels are launched with <<<>>>). The size bytes at params are
 * copied, as CUDA copies kernel parameters; they must be trivially
 * copyable. The grid runs on the device's executor with device memory
 * open, over its thread pool. The configuration is checked when the grid
 * runs, so a bad one becomes the stream's sticky error, as a kernel's
 * failure does. Counts one kernel launch. */
int simt_launch(dv_stream *s, const simt_config *cfg, simt_body_fn body, const void *params, size_t size,
                pa_err *err);

/* Enqueue on s a kernel that adds the sum of the n int32 at in to *out
 * (device memory; the caller zeroes it first): a block reduction with warp
 * shuffles, shared memory, a barrier and atomics (selftest.cu), run by the
 * emulation on cpu and sim and as CUDA on cuda (PA_EUNSUPPORTED there in a
 * build without the CUDA backend). An end-to-end check of a device's
 * kernels. */
int simt_selftest(dv_stream *s, const int32_t *in, int64_t n, unsigned long long *out, pa_err *err);
/* The two builds of selftest.cu behind it. */
int simt_selftest_simt(dv_stream *s, const int32_t *in, int64_t n, unsigned long long *out, pa_err *err);
#ifdef PISTA_HAVE_CUDA
int simt_selftest_cuda(dv_stream *s, const int32_t *in, int64_t n, unsigned long long *out, pa_err *err);
#endif

/* What the emulation did since the process started (all threads). */
typedef struct simt_stats {
    uint64_t grids;      /* grids run */
    uint64_t blocks;     /* blocks run */
    uint64_t threads;    /* GPU threads run */
    uint64_t switches;   /* fiber switches */
    uint64_t barriers;   /* __syncthreads completed (one per block) */
    uint64_t warp_ops;   /* warp intrinsics completed (one per group of lanes) */
    uint64_t fibers;     /* fiber stacks mapped */
} simt_stats;
void simt_stats_get(simt_stats *out);

/* ------------------------------------------------------------------------
 * What simt.h's emulation calls from kernel code; not for direct use.
 */

/* The running GPU thread's indexes, set by the scheduler. */
typedef struct simt_ids {
    simt_dim3 thread_idx, block_idx, block_dim, grid_dim;
} simt_ids;
extern __thread simt_ids simt__ids;

enum simt_op {
    SIMT_OP_SYNC,         /* __syncthreads */
    SIMT_OP_SYNC_COUNT,   /* __syncthreads_count */
    SIMT_OP_SYNC_AND,
    SIMT_OP_SYNC_OR,
    SIMT_OP_SHFL_IDX,     /* warp intrinsics from here */
    SIMT_OP_SHFL_UP,
    SIMT_OP_SHFL_DOWN,
    SIMT_OP_SHFL_XOR,
    SIMT_OP_BALLOT,
    SIMT_OP_ANY,
    SIMT_OP_ALL,
    SIMT_OP_SYNCWARP,
};

/* A block-wide barrier (one of the SYNC ops) at site ("file:line"); returns
 * the count, and or or of pred over the block. */
unsigned simt__sync(int op, int pred, const char *site);
/* A warp intrinsic: a rendezvous of the lanes named in mask; value is the
 * lane's value (shuffles), or its predicate; arg the source lane, delta or
 * lane mask; width the shuffle's segment. Returns the shuffled value, the
 * ballot or the predicate's any/all. */
uint64_t simt__warp(int op, unsigned mask, uint64_t value, int arg, int width, const char *site);
/* The lanes of the calling warp that reach this site together. */
unsigned simt__activemask(const char *site);
/* End the kernel with an error: what happened, where. Never returns. */
#ifdef __cplusplus
[[noreturn]]
#else
_Noreturn
#endif
void simt__trap(const char *what, const char *site);
/* The block's dynamic shared memory (SIMT_MAX_DYNAMIC_SMEM at most, 16-aligned). */
void *simt__dynamic_smem(void);

#ifdef __cplusplus
}
#endif
#endif /* PISTA_SIMT_RT_H */
