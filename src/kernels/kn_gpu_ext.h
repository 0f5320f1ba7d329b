/*
 * kn_gpu_ext.h - x87 extended precision (long double) arithmetic for CUDA
 * kernels, which have no long double: AVG of integers and DECIMALs divides
 * as the cpu does, (double)((long double)sum / ((long double)c * 10^scale)),
 * bit for bit. Used by the aggregation emit (kn_gpu_agg.cu) and by the
 * expression interpreter's MATH AVG (kn_gpu_expr.cu: merging AVG's partial
 * sums and counts across ranks). Include after kernels/kn_gpu.h.
 */
#ifndef PISTA_KN_GPU_EXT_H
#define PISTA_KN_GPU_EXT_H

/* x87 extended precision, for AVG: value m * 2^e, m normalised (top bit
 * set) or 0. Each operation rounds to a 64-bit mantissa, nearest-even. */
struct ext {
    uint64_t m;
    int e;
};

__device__ inline int clz128(unsigned __int128 u)
{
    uint64_t hi = (uint64_t)(u >> 64), lo = (uint64_t)u;
    return hi ? __clzll((long long)hi) : 64 + __clzll((long long)lo);
}

__device__ inline ext ext_round(unsigned __int128 u, int e)
{
    if (u == 0)
        return ext{0, 0};
    int nb = 128 - clz128(u);
    if (nb <= 64)
        return ext{(uint64_t)(u << (64 - nb)), e - (64 - nb)};
    int sh = nb - 64;
    uint64_t m = (uint64_t)(u >> sh);
    unsigned __int128 rem = u & ((((unsigned __int128)1) << sh) - 1), half = ((unsigned __int128)1) << (sh - 1);
    if (rem > half || (rem == half && (m & 1))) {
        m++;
        if (m == 0) {
            m = 1ULL << 63;
            sh++;
        }
    }
    return ext{m, e + sh};
}

__device__ inline ext ext_mul(ext a, ext b)
{
    if (a.m == 0 || b.m == 0)
        return ext{0, 0};
    return ext_round((unsigned __int128)a.m * b.m, a.e + b.e);
}

/* a / d, d not 0. */
__device__ inline ext ext_div(ext a, ext d)
{
    if (a.m == 0)
        return ext{0, 0};
    unsigned __int128 num = (unsigned __int128)a.m << 64;
    unsigned __int128 q = num / d.m, r = num % d.m;
    uint64_t m;
    int e = a.e - d.e - 64;
    bool up;
    if (q >> 64) {
        m = (uint64_t)(q >> 1);
        bool low = (q & 1) != 0;
        up = low && (r != 0 || (m & 1));
        e += 1;
    } else {
        m = (uint64_t)q;
        unsigned __int128 r2 = r * 2;
        up = r2 > d.m || (r2 == d.m && (m & 1));
    }
    if (up) {
        m++;
        if (m == 0) {
            m = 1ULL << 63;
            e++;
        }
    }
    return ext{m, e};
}

__device__ inline double ext_to_double(ext x)
{
    if (x.m == 0)
        return 0;
    uint64_t m = x.m >> 11, rem = x.m & 0x7FF;
    int e = x.e + 11;
    if (rem > 0x400 || (rem == 0x400 && (m & 1))) {
        m++;
        if (m == (1ULL << 53)) {
            m >>= 1;
            e++;
        }
    }
    return ldexp((double)m, e);
}

/* (double)((long double)sum / ((long double)c * 10^scale)), as the cpu. */
__device__ inline double avg_ext(__int128 sum, int64_t c, int scale)
{
    bool neg = sum < 0;
    unsigned __int128 u = neg ? (unsigned __int128)0 - (unsigned __int128)sum : (unsigned __int128)sum;
    ext p = ext{1ULL << 63, -63}, ten = ext_round(10, 0);
    for (int k = 0; k < scale; k++)
        p = ext_mul(p, ten);
    ext q = ext_div(ext_round(u, 0), ext_mul(ext_round((unsigned __int128)c, 0), p));
    double r = ext_to_double(q);
    return neg ? -r : r;
}

#endif /* PISTA_KN_GPU_EXT_H */
