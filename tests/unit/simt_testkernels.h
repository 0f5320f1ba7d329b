/*
 * simt_testkernels.h - the entries of test_simt_kernels.cu, for test_simt.c
 * (C) and the kernel file itself (C++ under nvcc or the emulation). Under
 * emulation the entries are named tk_<name>_simt.
 */
#ifndef SIMT_TESTKERNELS_H
#define SIMT_TESTKERNELS_H

#include "device/device.h"

#ifndef SIMT_NAME
#define SIMT_NAME(name) name##_simt
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Values warp_ops_k writes per thread. */
#define TK_LANES_OUT 12

/* What broken_k does wrong. */
enum { TK_FINE, TK_DIVERGENT_BARRIER, TK_EXIT_BEFORE_BARRIER, TK_WARP_DEADLOCK, TK_WARP_MISMATCH,
       TK_MASK_WITHOUT_SELF, TK_ASSERT };

typedef struct tk_atomics {
    int i_add, i_sub, i_max, i_min, i_cas, i_exch;
    unsigned u_add, u_min, u_or, u_and, u_xor, u_inc;
    unsigned long long ull_add, ull_max, ull_cas;
    float f_add, f_exch;
    double d_add;
} tk_atomics;

int SIMT_NAME(tk_barrier_order)(dv_stream *s, unsigned blocks, unsigned threads, unsigned *out, pa_err *err);
int SIMT_NAME(tk_barrier_vote)(dv_stream *s, unsigned blocks, unsigned threads, unsigned mod, int *out, pa_err *err);
int SIMT_NAME(tk_block_sum)(dv_stream *s, unsigned blocks, unsigned threads, const long long *in, long long n,
                            unsigned long long *out, pa_err *err);
int SIMT_NAME(tk_warp_ops)(dv_stream *s, long long *out, pa_err *err);
int SIMT_NAME(tk_partial_warp)(dv_stream *s, int *out, pa_err *err);
int SIMT_NAME(tk_histogram)(dv_stream *s, unsigned blocks, unsigned threads, const unsigned char *keys, int n,
                            unsigned *bins, pa_err *err);
int SIMT_NAME(tk_atomics)(dv_stream *s, unsigned blocks, unsigned threads, tk_atomics *a, pa_err *err);
int SIMT_NAME(tk_hammer)(dv_stream *s, unsigned blocks, unsigned threads, tk_atomics *a, int iters, pa_err *err);
int SIMT_NAME(tk_reverse)(dv_stream *s, unsigned blocks, unsigned threads, const int *in, int *out,
                          unsigned *before, pa_err *err);
int SIMT_NAME(tk_ids)(dv_stream *s, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                      unsigned *out, pa_err *err);
int SIMT_NAME(tk_scale)(dv_stream *s, unsigned blocks, unsigned threads, int *v, int n, int k, pa_err *err);
int SIMT_NAME(tk_broken)(dv_stream *s, int how, unsigned blocks, unsigned threads, size_t smem, int *out,
                         pa_err *err);

#ifdef __cplusplus
}
#endif
#endif /* SIMT_TESTKERNELS_H */
