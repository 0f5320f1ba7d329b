/*
 * kn_bits.c - kn_copy_bits: validity bits moved from any bit position to
 * bit 0 (a slice of a column cut at a row that is not a multiple of 8). The
 * cpu loop assembles one output byte from two source bytes; the CUDA kernel
 * (kn_gpu_rows.cu) does the same with one thread per output byte.
 */
#include "kernels/kn_ops_int.h"

#include <string.h>

int kn__cpu_copy_bits(const kn_ctx *ctx, const uint8_t *src, int64_t src_at, int64_t n, uint8_t *dst, pa_err *err)
{
    (void)ctx;
    if (n < 0 || src_at < 0)
        return pa_error(err, PA_EINVAL, "kn_copy_bits: bits [%lld, +%lld)", (long long)src_at, (long long)n);
    if (n == 0)
        return PA_OK;
    const uint8_t *s = src + (src_at >> 3);
    int sh = (int)(src_at & 7);
    int64_t nbytes = (n + 7) >> 3;
    if (sh == 0) {
        memcpy(dst, s, (size_t)nbytes);
    } else {
        int64_t spanned = (sh + n + 7) >> 3;   /* source bytes that hold the n bits */
        for (int64_t i = 0; i < nbytes; i++) {
            unsigned v = (unsigned)s[i] >> sh;
            if (i + 1 < spanned)
                v |= (unsigned)s[i + 1] << (8 - sh);
            dst[i] = (uint8_t)v;
        }
    }
    if (n & 7)
        dst[nbytes - 1] &= (uint8_t)((1u << (n & 7)) - 1);
    return PA_OK;
}
