/*
 * kn_scalar_f64.h - DOUBLE to and from text without libc, for device code:
 * the same results as the cpu evaluator's snprintf / strtod based
 * conversions (kn_expr_cast.c), which test_kn_scalar compares them with.
 *
 * - Formatting: the shortest of the correctly rounded (ties to even)
 *   1..17-digit decimals that reads back as the same double, laid out as
 *   Python's repr (0.1, 100.0, 1e+16, 1.5e-05). The digits come from exact
 *   big-integer arithmetic; "reads back" is decided exactly too, by where
 *   the decimal lies between the double's rounding boundaries.
 * - Parsing: what strtod accepts as a whole string: an optional sign, then
 *   a decimal number with an optional exponent, a hexadecimal one
 *   (0x1.8p3), inf / infinity or nan / nan(chars), any case; correctly
 *   rounded (ties to even), overflow to infinity, underflow to 0 or a
 *   subnormal.
 * - Big integers are fixed arrays of 32-bit words on the stack (2048 bits
 *   cover every step for the at most 127 characters the cpu path accepts).
 */
#ifndef PISTA_KN_SCALAR_F64_H
#define PISTA_KN_SCALAR_F64_H

#include <string.h>   /* memcpy: a bit cast, device code has it too */

#include "kernels/kn_scalar.h"

#define KN__BIG_WORDS 64

/* The larger steps are not inlined in device code: each would be copied
 * into every caller, and nvcc's compile time grows with every copy. */
#ifdef __CUDACC__
#define KN__F64_OUTLINE __noinline__
#else
#define KN__F64_OUTLINE
#endif

typedef struct kn__big {
    int n;                        /* words in use; w[n - 1] != 0 unless n == 0 */
    uint32_t w[KN__BIG_WORDS];
} kn__big;

static inline PA_HD double kn__f64_from_bits(uint64_t b)
{
    double d;
    memcpy(&d, &b, 8);
    return d;
}
#define KN__F64_INF kn__f64_from_bits(0x7ff0000000000000ull)
#define KN__F64_NAN kn__f64_from_bits(0x7ff8000000000000ull)

static inline PA_HD KN__F64_OUTLINE void kn__big_copy(kn__big *d, const kn__big *a)
{
    d->n = a->n;
    for (int i = 0; i < a->n; i++)
        d->w[i] = a->w[i];
}

static inline PA_HD KN__F64_OUTLINE void kn__big_set(kn__big *a, uint64_t v)
{
    a->n = 0;
    while (v) {
        a->w[a->n++] = (uint32_t)v;
        v >>= 32;
    }
}

static inline PA_HD KN__F64_OUTLINE void kn__big_mul_small(kn__big *a, uint32_t m)
{
    uint64_t carry = 0;
    for (int i = 0; i < a->n; i++) {
        uint64_t t = (uint64_t)a->w[i] * m + carry;
        a->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry && a->n < KN__BIG_WORDS)
        a->w[a->n++] = (uint32_t)carry;
}

static inline PA_HD KN__F64_OUTLINE void kn__big_add_small(kn__big *a, uint32_t v)
{
    uint64_t carry = v;
    for (int i = 0; i < a->n && carry; i++) {
        uint64_t t = (uint64_t)a->w[i] + carry;
        a->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry && a->n < KN__BIG_WORDS)
        a->w[a->n++] = (uint32_t)carry;
}

static inline PA_HD KN__F64_OUTLINE void kn__big_mul_pow10(kn__big *a, int k)
{
    for (; k >= 9; k -= 9)
        kn__big_mul_small(a, 1000000000u);
    uint32_t f = 1;
    while (k-- > 0)
        f *= 10;
    if (f > 1)
        kn__big_mul_small(a, f);
}

static inline PA_HD KN__F64_OUTLINE void kn__big_shl(kn__big *a, int bits)
{
    if (a->n == 0 || bits <= 0)
        return;
    int words = bits / 32, b = bits % 32;
    int n = a->n + words + 1;
    if (n > KN__BIG_WORDS)
        n = KN__BIG_WORDS;
    for (int i = n - 1; i >= 0; i--) {
        int src = i - words;
        uint64_t hi = src >= 0 && src < a->n ? a->w[src] : 0;
        uint64_t lo = src - 1 >= 0 && src - 1 < a->n ? a->w[src - 1] : 0;
        a->w[i] = (uint32_t)(b ? (hi << b) | (lo >> (32 - b)) : hi);
    }
    a->n = n;
    while (a->n > 0 && a->w[a->n - 1] == 0)
        a->n--;
}

static inline PA_HD KN__F64_OUTLINE int kn__big_cmp(const kn__big *a, const kn__big *b)
{
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    for (int i = a->n - 1; i >= 0; i--)
        if (a->w[i] != b->w[i])
            return a->w[i] < b->w[i] ? -1 : 1;
    return 0;
}

/* a -= b, for a >= b. */
static inline PA_HD KN__F64_OUTLINE void kn__big_sub(kn__big *a, const kn__big *b)
{
    int64_t borrow = 0;
    for (int i = 0; i < a->n; i++) {
        int64_t t = (int64_t)a->w[i] - (i < b->n ? (int64_t)b->w[i] : 0) - borrow;
        borrow = t < 0;
        a->w[i] = (uint32_t)(t + (borrow ? ((int64_t)1 << 32) : 0));
    }
    while (a->n > 0 && a->w[a->n - 1] == 0)
        a->n--;
}

static inline PA_HD KN__F64_OUTLINE int kn__big_bits(const kn__big *a)
{
    if (a->n == 0)
        return 0;
    int b = 32;
    uint32_t top = a->w[a->n - 1];
    while (!(top & 0x80000000u))
        top <<= 1, b--;
    return (a->n - 1) * 32 + b;
}

/* The double's fields: x = m * 2^q (x > 0 finite). */
static inline PA_HD void kn__f64_split(double x, uint64_t *m, int *q)
{
    uint64_t b;
    memcpy(&b, &x, 8);
    int e = (int)((b >> 52) & 0x7ff);
    uint64_t f = b & ((1ull << 52) - 1);
    if (e == 0) {
        *m = f;
        *q = -1074;
    } else {
        *m = f | (1ull << 52);
        *q = e - 1075;
    }
}

/* A float's significand and exponent as kn__f64_split's: x = m * 2^q. */
static inline PA_HD void kn__f32_split(float x, uint64_t *m, int *q)
{
    uint32_t b;
    memcpy(&b, &x, 4);
    int e = (int)((b >> 23) & 0xff);
    uint32_t f = b & ((1u << 23) - 1);
    if (e == 0) {
        *m = f;
        *q = -149;
    } else {
        *m = f | (1u << 23);
        *q = e - 150;
    }
}

/* Whether the decimal d * 10^e reads back (rounding to nearest, ties to
 * even) as x = m * 2^q, a double (f32 false) or a float (f32 true): it
 * must lie between x's rounding boundaries. */
static inline PA_HD KN__F64_OUTLINE bool kn__f64_reads_back(uint64_t d, int e, uint64_t m, int q, bool f32)
{
    /* Boundaries in units of 2^(q - 2): x = 4m, above 4m + 2, below 4m - 2
     * (4m - 1 at a power of two, where the gap below is half). */
    bool pow2 = f32 ? m == (1ull << 23) && q > -149 : m == (1ull << 52) && q > -1074;
    uint64_t lo = 4 * m - (pow2 ? 1 : 2), hi = 4 * m + 2;
    kn__big y, b;
    int cmp[2];
    for (int k = 0; k < 2; k++) {
        kn__big_set(&y, d);
        kn__big_set(&b, k ? hi : lo);
        if (e > 0)
            kn__big_mul_pow10(&y, e);
        else
            kn__big_mul_pow10(&b, -e);
        if (q - 2 > 0)
            kn__big_shl(&b, q - 2);
        else
            kn__big_shl(&y, 2 - q);
        cmp[k] = kn__big_cmp(&y, &b);
    }
    bool even = (m & 1) == 0;
    return (cmp[0] > 0 || (cmp[0] == 0 && even)) && (cmp[1] < 0 || (cmp[1] == 0 && even));
}

/* The shortest round-trip digits of x > 0 (finite): digits[0..*nd) with
 * no trailing zero, x ~ 0.d1d2... * 10^(*exp10 + 1) (the first digit's
 * power of ten is *exp10). f32: x is a float's value, and the digits read
 * back as that float (at most 9 of them). */
static inline PA_HD KN__F64_OUTLINE void kn__f64_shortest(double x, char *digits, int *nd, int *exp10, bool f32)
{
    uint64_t m;
    int q;
    if (f32)
        kn__f32_split((float)x, &m, &q);
    else
        kn__f64_split(x, &m, &q);
    const int max_p = f32 ? 9 : 17;
    /* num / den = x / 10^k in [1, 10), k from an estimate then fixed. */
    int k = 0;
    double t = x;
    while (t >= 10)
        t /= 10, k++;
    while (t < 1)
        t *= 10, k--;
    kn__big num, den, ten_den;
    kn__big_set(&num, m);
    kn__big_set(&den, 1);
    if (q > 0)
        kn__big_shl(&num, q);
    else
        kn__big_shl(&den, -q);
    if (k > 0)
        kn__big_mul_pow10(&den, k);
    else
        kn__big_mul_pow10(&num, -k);
    while (kn__big_cmp(&num, &den) < 0) {
        kn__big_mul_small(&num, 10);
        k--;
    }
    for (;;) {
        kn__big_copy(&ten_den, &den);
        kn__big_mul_small(&ten_den, 10);
        if (kn__big_cmp(&num, &ten_den) < 0)
            break;
        kn__big_copy(&den, &ten_den);
        k++;
    }
    /* 18 exact digits and whether anything follows. */
    int dg[18];
    for (int i = 0; i < 18; i++) {
        int v = 0;
        while (kn__big_cmp(&num, &den) >= 0) {
            kn__big_sub(&num, &den);
            v++;
        }
        dg[i] = v;
        kn__big_mul_small(&num, 10);
    }
    bool sticky = num.n != 0;
    for (int p = 1; p <= max_p; p++) {
        uint64_t d = 0;
        for (int i = 0; i < p; i++)
            d = d * 10 + (uint64_t)dg[i];
        bool rest = sticky;
        for (int i = p + 1; i < 18; i++)
            rest = rest || dg[i] != 0;
        if (dg[p] > 5 || (dg[p] == 5 && (rest || (d & 1))))
            d++;
        int kk = k;
        uint64_t lim = 1;
        for (int i = 0; i < p; i++)
            lim *= 10;
        if (d == lim) {   /* 9.99 rounded up to 10.0 */
            d /= 10;
            kk++;
        }
        if (p == max_p || kn__f64_reads_back(d, kk - p + 1, m, q, f32)) {
            char rev[20];
            int n = 0;
            for (int i = 0; i < p; i++, d /= 10)
                rev[n++] = (char)('0' + d % 10);
            while (n > 1 && rev[0] == '0') {   /* trailing zeros of the digits */
                for (int i = 0; i + 1 < n; i++)
                    rev[i] = rev[i + 1];
                n--;
            }
            for (int i = 0; i < n; i++)
                digits[i] = rev[n - 1 - i];
            *nd = n;
            *exp10 = kk;
            return;
        }
    }
}

/* x as the cpu's format_double writes it; returns the length (text
 * truncated to cap - 1 and NUL-terminated). f32: x is a REAL (a float's
 * value), written with the fewest digits that read back as that float. */
static inline PA_HD KN__F64_OUTLINE int kn__s_format_fp(double x, char *buf, int cap, bool f32)
{
    char out[48];
    int o = 0;
    if (x != x)
        return kn__s_put_cstr(buf, cap, "nan");
    uint64_t bits;
    memcpy(&bits, &x, 8);
    bool neg = bits >> 63;
    if ((bits & 0x7fffffffffffffffull) == 0x7ff0000000000000ull)
        return kn__s_put_cstr(buf, cap, neg ? "-inf" : "inf");
    if ((bits & 0x7fffffffffffffffull) == 0)
        return kn__s_put_cstr(buf, cap, neg ? "-0.0" : "0.0");
    char digits[20];
    int nd, e;
    kn__f64_shortest(neg ? -x : x, digits, &nd, &e, f32);
    if (neg)
        out[o++] = '-';
    if (e >= 16 || e < -4) {
        out[o++] = digits[0];
        if (nd > 1) {
            out[o++] = '.';
            for (int i = 1; i < nd; i++)
                out[o++] = digits[i];
        }
        out[o++] = 'e';
        out[o++] = e < 0 ? '-' : '+';
        int a = e < 0 ? -e : e;
        if (a >= 100)
            out[o++] = (char)('0' + a / 100);
        out[o++] = (char)('0' + a / 10 % 10);
        out[o++] = (char)('0' + a % 10);
    } else if (e < 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -e - 1; i++)
            out[o++] = '0';
        for (int i = 0; i < nd; i++)
            out[o++] = digits[i];
    } else {
        for (int i = 0; i <= e; i++)
            out[o++] = i < nd ? digits[i] : '0';
        out[o++] = '.';
        if (nd > e + 1)
            for (int i = e + 1; i < nd; i++)
                out[o++] = digits[i];
        else
            out[o++] = '0';
    }
    return kn__s_put(buf, cap, out, o);
}

static inline PA_HD int kn__s_format_double(double x, char *buf, int cap) { return kn__s_format_fp(x, buf, cap, false); }
static inline PA_HD int kn__s_format_real(double x, char *buf, int cap) { return kn__s_format_fp(x, buf, cap, true); }

/* ---------------------------------------------------------------- parsing */

/* The double nearest (ties to even) to num / den * 2^e2 (num > 0; the
 * caller keeps the value within a few powers of two of the double range);
 * f32: the float nearest, as a double. */
static inline PA_HD KN__F64_OUTLINE double kn__f64_round(kn__big *num, kn__big *den, int e2, bool f32)
{
    const int mbits = f32 ? 24 : 53, lsb_min = f32 ? -149 : -1074, fl_max = f32 ? 127 : 1023;
    /* fl = floor(log2(num / den)) + e2: the ratio is in (2^(L-1), 2^(L+1)). */
    int L = kn__big_bits(num) - kn__big_bits(den);
    kn__big t, u;
    kn__big_copy(&t, den);
    kn__big_copy(&u, num);
    if (L > 0)
        kn__big_shl(&t, L);
    else
        kn__big_shl(&u, -L);
    int fl = e2 + (kn__big_cmp(&u, &t) >= 0 ? L : L - 1);
    if (fl > fl_max)
        return KN__F64_INF;
    /* The last bit of the result is worth 2^s: Q = floor(value / 2^s) has
     * mbits bits (fewer for a subnormal). */
    int s = fl - (mbits - 1) < lsb_min ? lsb_min : fl - (mbits - 1);
    int shift = e2 - s;
    if (shift > 0)
        kn__big_shl(num, shift);
    else
        kn__big_shl(den, -shift);
    uint64_t q = 0;
    for (int bit = mbits; bit >= 0; bit--) {
        kn__big_copy(&t, den);
        kn__big_shl(&t, bit);
        if (kn__big_cmp(num, &t) >= 0) {
            kn__big_sub(num, &t);
            q |= 1ull << bit;
        }
    }
    kn__big_shl(num, 1);   /* 2 * remainder against the divisor: ties to even */
    int c = kn__big_cmp(num, den);
    if (c > 0 || (c == 0 && (q & 1)))
        q++;
    if (q == (1ull << mbits)) {
        q >>= 1;
        s++;
    }
    if (f32) {   /* q * 2^s, a float's value: exact as a double (normal there) */
        if (q == 0)
            return 0;
        if (s + 23 > 127 && q >= (1ull << 23))
            return KN__F64_INF;
        while (q < (1ull << 52)) {
            q <<= 1;
            s--;
        }
        return kn__f64_from_bits(((uint64_t)(s + 1075) << 52) | (q - (1ull << 52)));
    }
    uint64_t bits;
    if (q < (1ull << 52)) {
        bits = q;   /* subnormal (s == -1074), or zero */
    } else {
        int64_t biased = (int64_t)s + 1075;
        if (biased >= 2047)
            return KN__F64_INF;
        bits = ((uint64_t)biased << 52) | (q - (1ull << 52));
    }
    return kn__f64_from_bits(bits);
}

static inline PA_HD int kn__f64_lower(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

/* Whether [p, end) starts with the lower-case word w, any case. */
static inline PA_HD bool kn__f64_word(const char *p, const char *end, const char *w)
{
    for (; *w; w++, p++)
        if (p >= end || kn__f64_lower(*p) != *w)
            return false;
    return true;
}

static inline PA_HD int kn__f64_hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                                                                     : -1;
}

/* An exponent: [sign] digits, saturated; false if malformed. */
static inline PA_HD bool kn__f64_exponent(const char **pp, const char *end, int64_t *e)
{
    const char *p = *pp;
    bool neg = false;
    if (p < end && (*p == '+' || *p == '-'))
        neg = *p++ == '-';
    if (p >= end || !kn__s_isdigit(*p))
        return false;
    int64_t v = 0;
    for (; p < end && kn__s_isdigit(*p); p++)
        v = v < 100000000 ? v * 10 + (*p - '0') : v;
    *e = neg ? -v : v;
    *pp = p;
    return true;
}

/* Text to DOUBLE as the cpu's parse_double (strtod over the trimmed text,
 * which must be consumed whole); f32: to the nearest float (strtof's
 * rounding, not a double's rounded again), as a double. */
static inline PA_HD KN__F64_OUTLINE bool kn__s_parse_fp(kn__str str, double *out, bool f32)
{
    str = kn__s_trim(str);
    if (str.len == 0 || str.len >= 128)
        return false;
    int64_t n = 0;
    while (n < str.len && str.p[n])   /* strtod sees a C string: it ends at a NUL */
        n++;
    const char *p = str.p, *end = str.p + n;
    bool neg = false;
    if (p < end && (*p == '+' || *p == '-'))
        neg = *p++ == '-';
    double r;
    if (kn__f64_word(p, end, "inf")) {
        p += 3;
        if (kn__f64_word(p, end, "inity"))
            p += 5;
        if (p != end)
            return false;
        r = KN__F64_INF;
    } else if (kn__f64_word(p, end, "nan")) {
        p += 3;
        if (p < end && *p == '(') {
            const char *c = p + 1;
            while (c < end && (kn__s_isdigit(*c) || (kn__f64_lower(*c) >= 'a' && kn__f64_lower(*c) <= 'z') || *c == '_'))
                c++;
            if (c < end && *c == ')')
                p = c + 1;
        }
        if (p != end)
            return false;
        r = KN__F64_NAN;
    } else if (end - p >= 3 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
               (kn__f64_hexval(p[2]) >= 0 || (p[2] == '.' && end - p >= 4 && kn__f64_hexval(p[3]) >= 0))) {
        p += 2;
        kn__big h;
        kn__big_set(&h, 0);
        int64_t frac = 0, e = 0;
        bool dot = false;
        for (; p < end; p++) {
            if (*p == '.' && !dot) {
                dot = true;
                continue;
            }
            int v = kn__f64_hexval(*p);
            if (v < 0)
                break;
            if (h.n == 0 && v == 0) {
                frac += dot;   /* leading zeros: only their place counts */
                continue;
            }
            kn__big_mul_small(&h, 16);
            kn__big_add_small(&h, (uint32_t)v);
            frac += dot;
        }
        if (p < end && (*p == 'p' || *p == 'P')) {
            p++;
            if (!kn__f64_exponent(&p, end, &e))
                return false;
        }
        if (p != end)
            return false;
        int64_t e2 = e - 4 * frac, lead = kn__big_bits(&h) + e2;
        if (h.n == 0 || lead < -1080) {
            r = 0;
        } else if (lead > 1030) {
            r = KN__F64_INF;
        } else {
            kn__big one;
            kn__big_set(&one, 1);
            r = kn__f64_round(&h, &one, (int)e2, f32);
        }
    } else {
        kn__big d;
        kn__big_set(&d, 0);
        int64_t frac = 0, nd = 0, e = 0;
        bool dot = false, any = false;
        for (; p < end; p++) {
            if (*p == '.' && !dot) {
                dot = true;
                continue;
            }
            if (!kn__s_isdigit(*p))
                break;
            any = true;
            if (d.n == 0 && *p == '0') {
                frac += dot;
                continue;
            }
            kn__big_mul_small(&d, 10);
            kn__big_add_small(&d, (uint32_t)(*p - '0'));
            frac += dot;
            nd++;
        }
        if (!any)
            return false;
        if (p < end && (*p == 'e' || *p == 'E')) {
            p++;
            if (!kn__f64_exponent(&p, end, &e))
                return false;
        }
        if (p != end)
            return false;
        int64_t e10 = e - frac, lead = nd + e10 - 1;
        if (d.n == 0 || lead < -345) {
            r = 0;
        } else if (lead > 310) {
            r = KN__F64_INF;
        } else {
            kn__big den;
            kn__big_set(&den, 1);
            if (e10 > 0)
                kn__big_mul_pow10(&d, (int)e10);
            else
                kn__big_mul_pow10(&den, (int)-e10);
            r = kn__f64_round(&d, &den, 0, f32);
        }
        if (f32 && r == KN__F64_INF)   /* a finite number past the float range: out of range */
            return false;
    }
    *out = neg ? -r : r;
    return true;
}

static inline PA_HD bool kn__s_parse_double(kn__str str, double *out) { return kn__s_parse_fp(str, out, false); }
static inline PA_HD bool kn__s_parse_real(kn__str str, double *out) { return kn__s_parse_fp(str, out, true); }

#endif /* PISTA_KN_SCALAR_F64_H */
