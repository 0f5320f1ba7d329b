/*
 * kn_bitpack.c - LSB-first bit packing and unpacking (the packing of the
 * RLE/bit-packed hybrid, PLAIN BOOLEAN and DELTA_BINARY_PACKED miniblocks),
 * and validity bitmap filling. See kernels_int.h for the fast-path design.
 */
#include "kernels/kernels_int.h"

#define KN__INLINE static inline __attribute__((always_inline))

/* 8 values of constant width w from in; reads bytes [0, w + 8). For
 * w <= 8 the whole group lies in one 64-bit word: one load, then constant
 * shifts (about a third faster than a load per value; for wider values the
 * load per value measured faster than combining words). */
KN__INLINE void unpack8(const uint8_t *in, uint32_t *out, const int w)
{
    const uint64_t mask = (w >= 32) ? 0xffffffffull : ((1ull << w) - 1);
    if (w <= 8) {
        uint64_t word = kn__ld64(in);
        for (int k = 0; k < 8; k++)
            out[k] = (uint32_t)((word >> (k * w)) & mask);
        return;
    }
    for (int k = 0; k < 8; k++) {
        uint64_t word = kn__ld64(in + ((k * w) >> 3));
        out[k] = (uint32_t)((word >> ((k * w) & 7)) & mask);
    }
}

/* Whole groups while at least 8 spare bytes follow; returns groups done. */
KN__INLINE size_t unpack_groups(const uint8_t *in, size_t in_size, uint32_t *out, size_t groups,
                                const int w)
{
    size_t g = 0;
    for (; g < groups && (g + 1) * (size_t)w + 8 <= in_size; g++)
        unpack8(in + g * (size_t)w, out + 8 * g, w);
    return g;
}

static size_t unpack_fast(const uint8_t *in, size_t in_size, int w, uint32_t *out, size_t groups)
{
    switch (w) {
#define KN__W(x) case x: return unpack_groups(in, in_size, out, groups, x);
    KN__W(1) KN__W(2) KN__W(3) KN__W(4) KN__W(5) KN__W(6) KN__W(7) KN__W(8)
    KN__W(9) KN__W(10) KN__W(11) KN__W(12) KN__W(13) KN__W(14) KN__W(15) KN__W(16)
    KN__W(17) KN__W(18) KN__W(19) KN__W(20) KN__W(21) KN__W(22) KN__W(23) KN__W(24)
    KN__W(25) KN__W(26) KN__W(27) KN__W(28) KN__W(29) KN__W(30) KN__W(31) KN__W(32)
#undef KN__W
    default: return 0;
    }
}

void kn__unpack32(const uint8_t *in, size_t in_size, int w, uint32_t *out, size_t n)
{
    if (w == 0) {
        memset(out, 0, n * sizeof *out);
        return;
    }
    size_t groups = n / 8;
    size_t g = unpack_fast(in, in_size, w, out, groups);
    /* Tail: remaining groups (the last maybe partial) through a padded copy. */
    for (size_t i = g * 8; i < n; i += 8) {
        uint8_t buf[48] = {0};
        size_t off = (i / 8) * (size_t)w;
        size_t avail = off < in_size ? in_size - off : 0;
        memcpy(buf, in + off, avail < (size_t)w ? avail : (size_t)w);
        uint32_t tmp[8];
        unpack8(buf, tmp, w < 32 ? w : 32);
        size_t take = n - i < 8 ? n - i : 8;
        memcpy(out + i, tmp, take * sizeof *tmp);
    }
}

int kn_bitunpack32(const uint8_t *p, size_t size, int bit_width, uint32_t *out, size_t n,
                   pa_err *err)
{
    if (bit_width < 0 || bit_width > 32)
        return pa_error(err, PA_EINVAL, "bit unpacking: bit width %d outside 0..32", bit_width);
    if (((uint64_t)n * (uint64_t)bit_width + 7) / 8 > size)
        return KN__CORRUPT(err, "bit-packed", "%zu values of %d bits need %llu bytes, have %zu",
                           n, bit_width, (unsigned long long)(((uint64_t)n * bit_width + 7) / 8),
                           size);
    kn__unpack32(p, size, bit_width, out, n);
    return PA_OK;
}

/* Bits [bit, bit+w) of in (w <= 64), reading only bytes below in_size. */
static uint64_t get_bits_safe(const uint8_t *in, size_t in_size, uint64_t bit, int w)
{
    uint64_t v = 0;
    int got = 0;
    size_t byte = (size_t)(bit >> 3);
    int shift = (int)(bit & 7);
    while (got < w && byte < in_size) {
        uint64_t b = (uint64_t)(in[byte] >> shift);
        int nb = 8 - shift;
        v |= got < 64 ? b << got : 0;
        got += nb;
        shift = 0;
        byte++;
    }
    return w == 64 ? v : v & ((1ull << w) - 1);
}

void kn__unpack64(const uint8_t *in, size_t in_size, int w, uint64_t *out, size_t n)
{
    if (w <= 32) {
        uint32_t tmp[256];
        for (size_t i = 0; i < n; i += 256) {
            size_t c = n - i < 256 ? n - i : 256;
            size_t off = (i * (size_t)w) / 8;   /* i is a multiple of 8: byte aligned */
            kn__unpack32(in + off, in_size - off, w, tmp, c);
            for (size_t k = 0; k < c; k++)
                out[i + k] = tmp[k];
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t bit = (uint64_t)i * (uint64_t)w;
        size_t byte = (size_t)(bit >> 3);
        int shift = (int)(bit & 7);
        if (byte + 16 <= in_size) {
            uint64_t lo = kn__ld64(in + byte), hi = kn__ld64(in + byte + 8);
            uint64_t v = shift ? (lo >> shift) | (hi << (64 - shift)) : lo;
            out[i] = w == 64 ? v : v & ((1ull << w) - 1);
        } else {
            out[i] = get_bits_safe(in, in_size, bit, w);
        }
    }
}

size_t kn__pack64(const uint64_t *in, size_t n, int w, uint8_t *out)
{
    size_t total = ((uint64_t)n * (uint64_t)w + 7) / 8;
    if (w == 0)
        return 0;
    uint64_t acc = 0;
    int nb = 0;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = w == 64 ? in[i] : in[i] & ((1ull << w) - 1);
        acc |= v << nb;
        if (nb + w >= 64) {
            kn__st64(out + o, acc);
            o += 8;
            acc = nb ? v >> (64 - nb) : 0;
            nb = nb + w - 64;
        } else {
            nb += w;
        }
    }
    for (int b = 0; b < nb; b += 8)
        out[o++] = (uint8_t)(acc >> b);
    (void)total;
    return o;
}

size_t kn__pack32(const uint32_t *in, size_t n, int w, uint8_t *out)
{
    if (w == 0)
        return 0;
    uint64_t acc = 0;
    int nb = 0;
    size_t o = 0;
    uint64_t mask = w == 32 ? 0xffffffffull : (1ull << w) - 1;
    for (size_t i = 0; i < n; i++) {
        acc |= ((uint64_t)in[i] & mask) << nb;
        nb += w;
        if (nb >= 32) {
            kn__st32(out + o, (uint32_t)acc);
            o += 4;
            acc >>= 32;
            nb -= 32;
        }
    }
    for (int b = 0; b < nb; b += 8)
        out[o++] = (uint8_t)(acc >> b);
    return o;
}

void kn__bits_fill(uint8_t *bm, uint64_t first, uint64_t n, bool value)
{
    uint64_t i = first, end = first + n;
    while (i < end && (i & 7)) {
        if (value)
            bm[i >> 3] |= (uint8_t)(1u << (i & 7));
        else
            bm[i >> 3] &= (uint8_t)~(1u << (i & 7));
        i++;
    }
    if (end - i >= 8) {
        uint64_t bytes = (end - i) / 8;
        memset(bm + (i >> 3), value ? 0xff : 0, bytes);
        i += bytes * 8;
    }
    while (i < end) {
        if (value)
            bm[i >> 3] |= (uint8_t)(1u << (i & 7));
        else
            bm[i >> 3] &= (uint8_t)~(1u << (i & 7));
        i++;
    }
}
