/*
 * simt.h - what a CUDA kernel source (.cu) includes so that the same file
 * compiles with nvcc for a GPU and with the host C++ compiler for the SIMT
 * emulation, which runs it on the `cpu` and `sim` devices.
 *
 * Writing a kernel source
 * - Include "simt/simt.h" (not cuda_runtime.h). Write C-style CUDA:
 *   __global__ kernels with trivially copyable parameters, __device__
 *   helpers, __shared__ arrays, the intrinsics listed below.
 * - Launch with SIMT_LAUNCH(kernel, grid, block, smem, stream, err, args...)
 *   instead of kernel<<<grid, block, smem, stream>>>(args...). stream is a
 *   dv_stream *, err a pa_err *; the expression is an int status (PA_OK or
 *   the error put on err). Under nvcc it is the <<<>>> launch followed by
 *   cudaGetLastError; under emulation the grid is enqueued on the stream and
 *   runs later, on the device's executor, with the parameters copied at the
 *   call (as CUDA copies them).
 * - Dynamic shared memory: SIMT_DYNAMIC_SHARED(T, name) declares `T *name`
 *   (extern __shared__ arrays cannot be expressed on the host).
 * - Errors: SIMT_ASSERT(cond) and SIMT_TRAP("what") (and __trap()) end the
 *   kernel; under emulation the launch fails with a message naming the
 *   kernel, block, thread and source line, as the stream's sticky error.
 * - Make __global__ kernels and __device__ helpers `static`, and give every
 *   function other files call a name through SIMT_NAME(name): name_cuda
 *   under nvcc, name_simt under emulation. The build compiles each .cu file
 *   both ways into the same library when CUDA is on, so any other external
 *   name would be defined twice.
 *
 * What is emulated
 * - Each block runs on one OS thread; its GPU threads are fibers (own
 *   stacks, callee-saved-register context switch) that run until they
 *   finish or wait at a __syncthreads or a warp intrinsic; then the next
 *   runnable thread runs. A kernel without barriers runs its threads one
 *   after another on one fiber. Blocks run in parallel over the device's
 *   thread pool, so atomics between blocks are real (the __atomic builtins,
 *   relaxed, as CUDA's).
 * - threadIdx, blockIdx, blockDim, gridDim, warpSize; __shared__ (one copy
 *   per OS thread, which runs one block at a time); __syncthreads and its
 *   _count/_and/_or forms; __shfl_sync and the _up/_down/_xor forms on any
 *   type of up to 8 bytes, __ballot_sync, __any_sync, __all_sync,
 *   __syncwarp, __activemask; __popc(ll), __ffs(ll), __clz(ll), __brev(ll),
 *   __umulhi, __umul64hi, bit casts, min/max; atomicAdd, Sub, Exch, Min,
 *   Max, And, Or, Xor, CAS, Inc, Dec for CUDA's types; __threadfence (and
 *   its _block and _system forms); __ldg.
 * - Misuse that CUDA leaves undefined fails the launch with a message: a
 *   __syncthreads that some threads of the block never reach (they exited,
 *   or wait at another one or at a warp intrinsic), lanes named in a warp
 *   intrinsic's mask that reach a different one, a mask that omits the
 *   calling lane, a bad shuffle width, a bad launch configuration (block
 *   over 1024 threads, dynamic shared memory over 48 KiB, a zero or too
 *   large dimension).
 * - Dynamic shared memory is filled with 0xA5 bytes before each block, and
 *   a shuffle from a lane that does not take part returns 0xA5 bytes, so
 *   code that relies on either being zero gets visibly wrong answers.
 *
 * What is not
 * - Performance of any kind: coalescing, bank conflicts, occupancy,
 *   divergence cost. Timings on the emulation say nothing about a GPU.
 * - Lockstep execution: lanes switch only at intrinsics, so code that
 *   assumes a warp runs in lockstep without __syncwarp (pre-Volta style)
 *   is not caught, and neither are races between threads of a block that
 *   real concurrency would expose (compute-sanitizer's racecheck does).
 * - The memory model between blocks: blocks on different OS threads see
 *   each other's plain stores in x86 order, not a GPU's.
 * - Static __shared__ variables keep their values from the previous block
 *   run on the same OS thread (they cannot be enumerated to be poisoned).
 * - __activemask() returns the lanes of the warp that reach the same call
 *   before the whole block would otherwise stall: a model of convergence,
 *   not the hardware's.
 * - A thread's stack is 64 KiB (256 KiB under AddressSanitizer; CUDA's
 *   default is 1 KiB); overflowing it hits a guard page and crashes, as a
 *   GPU's stack overflow kills the context.
 * - Inline PTX, CUB's block and warp primitives, textures, __constant__,
 *   cooperative groups, dynamic parallelism. Kernels must be C-style: no
 *   exceptions, no objects whose destructors must run (a failing block's
 *   threads are abandoned where they wait).
 */
#ifndef PISTA_SIMT_H
#define PISTA_SIMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "device/device.h"

#define SIMT__STR2(x) #x
#define SIMT__STR(x) SIMT__STR2(x)
/* "file:line" of the call, for messages and to tell barriers apart. */
#define SIMT__SITE __FILE__ ":" SIMT__STR(__LINE__)

#ifdef __CUDACC__
/* ==================================================================== CUDA */
#include <cuda_runtime.h>

extern "C" {
/* simt_cuda.c: the CUDA stream behind a dv_stream of a cuda device, and the
 * status of the launch just made (cudaGetLastError as a pa_ status). */
cudaStream_t simt_cuda_stream(dv_stream *s);
int simt_cuda_launched(const char *kernel, pa_err *err);
}

#define SIMT_EMULATED 0
#define SIMT_NAME(name) name##_cuda
#define SIMT_DYNAMIC_SHARED(T, name)                                         \
    extern __shared__ __align__(16) unsigned char simt__dsmem_##name[];      \
    T *name = reinterpret_cast<T *>(simt__dsmem_##name)
#define SIMT_LAUNCH(kernel, grid, block, smem, stream, err, ...)                             \
    (kernel<<<(grid), (block), (smem), simt_cuda_stream(stream)>>>(__VA_ARGS__),           \
     simt_cuda_launched(#kernel, (err)))
#define SIMT_TRAP(what)                                  \
    do {                                                 \
        printf("%s at %s\n", (what), SIMT__SITE);        \
        __trap();                                        \
    } while (0)
#define SIMT_ASSERT(cond)                                       \
    do {                                                        \
        if (!(cond))                                            \
            SIMT_TRAP("assertion `" #cond "' failed");          \
    } while (0)

#else
/* =============================================================== emulation */
#ifndef __cplusplus
#error "simt.h: kernel sources are C++ (compiled by nvcc, or by the host C++ compiler for the emulation)"
#endif
#include <type_traits>
#include <utility>

#include "simt/simt_rt.h"

#define SIMT_EMULATED 1
#define SIMT_NAME(name) name##_simt

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
/* One copy per OS thread: it runs one block at a time. Write
 * `__shared__ T name[N];` (not `static __shared__`). */
#define __shared__ static __thread
#define warpSize 32

typedef simt_dim3 uint3;
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
    constexpr dim3(simt_dim3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator simt_dim3() const { return simt_dim3{x, y, z}; }
};

#define threadIdx (static_cast<const uint3 &>(simt__ids.thread_idx))
#define blockIdx (static_cast<const uint3 &>(simt__ids.block_idx))
#define blockDim (static_cast<const uint3 &>(simt__ids.block_dim))
#define gridDim (static_cast<const uint3 &>(simt__ids.grid_dim))

#define SIMT_DYNAMIC_SHARED(T, name) T *name = static_cast<T *>(simt__dynamic_smem())
#define SIMT_LAUNCH(kernel, grid, block, smem, stream, err, ...) \
    ::simt::launch(kernel, #kernel, (grid), (block), (smem), (stream), (err), ##__VA_ARGS__)
#define SIMT_TRAP(what) simt__trap((what), SIMT__SITE)
#define SIMT_ASSERT(cond) ((cond) ? (void)0 : simt__trap("assertion `" #cond "' failed", SIMT__SITE))
#define __trap() simt__trap("__trap()", SIMT__SITE)

/* ---------------------------------------------------------------- barriers */
#define __syncthreads() ((void)simt__sync(SIMT_OP_SYNC, 1, SIMT__SITE))
#define __syncthreads_count(pred) ((int)simt__sync(SIMT_OP_SYNC_COUNT, (pred) != 0, SIMT__SITE))
#define __syncthreads_and(pred) ((int)simt__sync(SIMT_OP_SYNC_AND, (pred) != 0, SIMT__SITE))
#define __syncthreads_or(pred) ((int)simt__sync(SIMT_OP_SYNC_OR, (pred) != 0, SIMT__SITE))
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/* ------------------------------------------------------------ warp intrinsics */
namespace simt {

template <typename T>
inline T warp_value(int op, const char *site, unsigned mask, T var, int arg, int width)
{
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8, "shuffled values are at most 8 bytes");
    uint64_t bits = 0;
    memcpy(&bits, &var, sizeof var);
    uint64_t r = simt__warp(op, mask, bits, arg, width, site);
    T out;
    memcpy(&out, &r, sizeof out);
    return out;
}
template <typename T>
inline T shfl(const char *site, unsigned mask, T var, int src, int width = warpSize)
{
    return warp_value(SIMT_OP_SHFL_IDX, site, mask, var, src, width);
}
template <typename T>
inline T shfl_up(const char *site, unsigned mask, T var, unsigned delta, int width = warpSize)
{
    return warp_value(SIMT_OP_SHFL_UP, site, mask, var, (int)delta, width);
}
template <typename T>
inline T shfl_down(const char *site, unsigned mask, T var, unsigned delta, int width = warpSize)
{
    return warp_value(SIMT_OP_SHFL_DOWN, site, mask, var, (int)delta, width);
}
template <typename T>
inline T shfl_xor(const char *site, unsigned mask, T var, int lane_mask, int width = warpSize)
{
    return warp_value(SIMT_OP_SHFL_XOR, site, mask, var, lane_mask, width);
}
inline unsigned full_mask(unsigned mask = 0xFFFFFFFFu) { return mask; }

} /* namespace simt */

#define __shfl_sync(...) ::simt::shfl(SIMT__SITE, __VA_ARGS__)
#define __shfl_up_sync(...) ::simt::shfl_up(SIMT__SITE, __VA_ARGS__)
#define __shfl_down_sync(...) ::simt::shfl_down(SIMT__SITE, __VA_ARGS__)
#define __shfl_xor_sync(...) ::simt::shfl_xor(SIMT__SITE, __VA_ARGS__)
#define __ballot_sync(mask, pred) ((unsigned)simt__warp(SIMT_OP_BALLOT, (mask), (pred) != 0, 0, 32, SIMT__SITE))
#define __any_sync(mask, pred) ((int)simt__warp(SIMT_OP_ANY, (mask), (pred) != 0, 0, 32, SIMT__SITE))
#define __all_sync(mask, pred) ((int)simt__warp(SIMT_OP_ALL, (mask), (pred) != 0, 0, 32, SIMT__SITE))
#define __syncwarp(...) ((void)simt__warp(SIMT_OP_SYNCWARP, ::simt::full_mask(__VA_ARGS__), 0, 0, 32, SIMT__SITE))
#define __activemask() simt__activemask(SIMT__SITE)

/* ------------------------------------------------------------------- bits */
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
inline unsigned __brev(unsigned x)
{
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
    return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x)
{
    return ((unsigned long long)__brev((unsigned)x) << 32) | __brev((unsigned)(x >> 32));
}
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b)
{
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}

namespace simt {
template <typename To, typename From>
inline To bit_cast(From f)
{
    static_assert(sizeof(To) == sizeof(From), "bit casts keep the size");
    To t;
    memcpy(&t, &f, sizeof t);
    return t;
}
} /* namespace simt */
inline int __float_as_int(float f) { return simt::bit_cast<int>(f); }
inline unsigned __float_as_uint(float f) { return simt::bit_cast<unsigned>(f); }
inline float __int_as_float(int i) { return simt::bit_cast<float>(i); }
inline float __uint_as_float(unsigned u) { return simt::bit_cast<float>(u); }
inline long long __double_as_longlong(double d) { return simt::bit_cast<long long>(d); }
inline double __longlong_as_double(long long l) { return simt::bit_cast<double>(l); }

template <typename T>
inline T __ldg(const T *p)
{
    return *p;
}

/* CUDA's device-side min and max, for operands of one type. */
#define SIMT__MINMAX(T)                              \
    inline T min(T a, T b) { return b < a ? b : a; } \
    inline T max(T a, T b) { return a < b ? b : a; }
SIMT__MINMAX(int)
SIMT__MINMAX(unsigned)
SIMT__MINMAX(long)
SIMT__MINMAX(unsigned long)
SIMT__MINMAX(long long)
SIMT__MINMAX(unsigned long long)
SIMT__MINMAX(float)
SIMT__MINMAX(double)
#undef SIMT__MINMAX

/* ---------------------------------------------------------------- atomics
 * Relaxed, as CUDA's; each returns the old value. */
#define SIMT__ATOMIC_INT(T)                                                                                   \
    inline T atomicAdd(T *a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_RELAXED); }                     \
    inline T atomicExch(T *a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_RELAXED); }                   \
    inline T atomicAnd(T *a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_RELAXED); }                     \
    inline T atomicOr(T *a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_RELAXED); }                       \
    inline T atomicXor(T *a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_RELAXED); }                     \
    inline T atomicCAS(T *a, T expected, T desired)                                                          \
    {                                                                                                        \
        __atomic_compare_exchange_n(a, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);       \
        return expected;                                                                                     \
    }
SIMT__ATOMIC_INT(int)
SIMT__ATOMIC_INT(unsigned)
SIMT__ATOMIC_INT(unsigned long long)
#undef SIMT__ATOMIC_INT
inline int atomicSub(int *a, int v) { return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED); }
inline unsigned atomicSub(unsigned *a, unsigned v) { return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED); }

namespace simt {
/* Replace *a with f(*a) atomically; returns the old value. */
template <typename T, typename F>
inline T atomic_update(T *a, F f)
{
    T old = __atomic_load_n(a, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(a, &old, f(old), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
}
/* The same for floating point (compared bit for bit by the generic builtin). */
template <typename T, typename F>
inline T atomic_update_fp(T *a, F f)
{
    T old, want;
    __atomic_load(a, &old, __ATOMIC_RELAXED);
    do
        want = f(old);
    while (!__atomic_compare_exchange(a, &old, &want, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return old;
}
} /* namespace simt */

inline float atomicAdd(float *a, float v)
{
    return simt::atomic_update_fp(a, [v](float x) { return x + v; });
}
inline double atomicAdd(double *a, double v)
{
    return simt::atomic_update_fp(a, [v](double x) { return x + v; });
}
inline float atomicExch(float *a, float v)
{
    float old;
    __atomic_exchange(a, &v, &old, __ATOMIC_RELAXED);
    return old;
}
#define SIMT__ATOMIC_MINMAX(T)                                                               \
    inline T atomicMin(T *a, T v)                                                            \
    {                                                                                        \
        return simt::atomic_update(a, [v](T x) { return v < x ? v : x; });                   \
    }                                                                                        \
    inline T atomicMax(T *a, T v)                                                            \
    {                                                                                        \
        return simt::atomic_update(a, [v](T x) { return x < v ? v : x; });                   \
    }
SIMT__ATOMIC_MINMAX(int)
SIMT__ATOMIC_MINMAX(unsigned)
SIMT__ATOMIC_MINMAX(long long)
SIMT__ATOMIC_MINMAX(unsigned long long)
#undef SIMT__ATOMIC_MINMAX
/* ((old >= limit) ? 0 : old + 1) and ((old == 0 || old > limit) ? limit : old - 1), as CUDA's. */
inline unsigned atomicInc(unsigned *a, unsigned limit)
{
    return simt::atomic_update(a, [limit](unsigned x) { return x >= limit ? 0u : x + 1; });
}
inline unsigned atomicDec(unsigned *a, unsigned limit)
{
    return simt::atomic_update(a, [limit](unsigned x) { return x == 0 || x > limit ? limit : x - 1; });
}

/* ------------------------------------------------------------------ launch */
namespace simt {

/* A kernel's parameters by value, trivially copyable as a whole. */
template <typename... P>
struct params;
template <>
struct params<> {
};
template <typename H, typename... T>
struct params<H, T...> {
    H head;
    params<T...> tail;
    params(H h, T... t) : head(h), tail(t...) {}
};

template <size_t I>
struct param_at {
    template <typename A>
    static const auto &get(const A &a) { return param_at<I - 1>::get(a.tail); }
};
template <>
struct param_at<0> {
    template <typename A>
    static const auto &get(const A &a) { return a.head; }
};

template <typename... P>
struct pack {
    void (*kernel)(P...);
    params<P...> p;
};

template <typename... P, size_t... I>
inline void call(const pack<P...> *k, std::index_sequence<I...>)
{
    k->kernel(param_at<I>::get(k->p)...);
}

/* One GPU thread: the kernel with (its own copy of) the parameters. */
template <typename... P>
void body(const void *k)
{
    call(static_cast<const pack<P...> *>(k), std::index_sequence_for<P...>{});
}

template <typename... P, typename... A>
inline int launch(void (*kernel)(P...), const char *name, dim3 grid, dim3 block, size_t smem, dv_stream *stream,
                  pa_err *err, A &&...args)
{
    static_assert(sizeof...(P) == sizeof...(A), "SIMT_LAUNCH: the kernel takes another number of arguments");
    static_assert((std::is_trivially_copyable<P>::value && ... && true),
                  "kernel parameters must be trivially copyable");
    static_assert(alignof(pack<P...>) <= 16, "kernel parameters aligned to more than 16 bytes");
    pack<P...> k{kernel, params<P...>(std::forward<A>(args)...)};
    simt_config cfg = {grid, block, smem, name};
    return simt_launch(stream, &cfg, &body<P...>, &k, sizeof k, err);
}

} /* namespace simt */

#endif /* __CUDACC__ */
#endif /* PISTA_SIMT_H */
