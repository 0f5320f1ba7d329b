/*
 * kn_lz4.h - the elements of a raw LZ4 block as the device decoder reads
 * them (kn_gpu_codec.cu's lane 0), with the format's rules as liblz4's
 * LZ4_decompress_safe checks them on its careful path: offsets 0 or before
 * the block's start, lengths past either end, the last match ending at
 * least 5 bytes before the end of the output, a run of literals that
 * reaches into the last 12 bytes of output or the last 8 of input ending
 * the block exactly. liblz4's fast path lets a few malformed blocks through
 * (an offset of 0 copies whatever the output held), so the cpu codec
 * (kn_codec.c) checks a block it decoded with kn__lz4_valid too: a page
 * then decodes, or is refused, alike on every device.
 */
#ifndef PISTA_KN_LZ4_H
#define PISTA_KN_LZ4_H

#include "core/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KN__LZ4_MFLIMIT 12      /* a match may not start within the last 12 bytes */
#define KN__LZ4_LASTLITERALS 5  /* the last 5 bytes are literals */

/* What kn__lz4_next found: the block's end, a run of literals, a copy of
 * earlier output, or corrupt data. */
enum { KN__LZ4_END, KN__LZ4_LIT, KN__LZ4_COPY, KN__LZ4_BAD };

/* An LZ4 length's extension bytes (each 255 adds on), read at *ip; false
 * when they run past ilimit (liblz4's read_variable_length). */
static inline PA_HD bool kn__lz4_more(const uint8_t *src, int64_t *ip, int64_t ilimit, bool initial_check,
                                      uint64_t *len)
{
    if (initial_check && *ip >= ilimit)
        return false;
    unsigned s;
    do {
        s = src[(*ip)++];
        *len += s;
        if (*ip > ilimit)
            return false;
    } while (s == 255);
    return true;
}

/* The parse state in a block. */
typedef struct kn__lz4_state {
    int64_t ip;
    bool last;        /* the final literals were handed out */
    bool pending;     /* a match follows the literals handed out */
    uint32_t m_len, m_off;
} kn__lz4_state;

/* The next element of a raw LZ4 block of n input bytes with cap bytes of
 * room, op the output written so far: literals (*len bytes of input at
 * *from), a copy (*len bytes from *from bytes back), the end, or BAD. */
static inline PA_HD int kn__lz4_next(const uint8_t *src, int64_t n, kn__lz4_state *s, int64_t op, int64_t cap,
                                     uint32_t *len, uint32_t *from)
{
    if (s->pending) {
        s->pending = false;
        *len = s->m_len;
        *from = s->m_off;
        return KN__LZ4_COPY;
    }
    if (s->last)
        return KN__LZ4_END;
    if (s->ip >= n)
        return KN__LZ4_BAD;
    unsigned token = src[s->ip++];
    uint64_t lit = token >> 4;
    if (lit == 15 && !kn__lz4_more(src, &s->ip, n - 15, true, &lit))
        return KN__LZ4_BAD;
    if ((int64_t)lit > cap || (int64_t)lit > n)
        return KN__LZ4_BAD;
    int64_t at = s->ip;   /* the literals */
    if (op + (int64_t)lit > cap - KN__LZ4_MFLIMIT || at + (int64_t)lit > n - (2 + 1 + KN__LZ4_LASTLITERALS)) {
        /* these must be the block's last bytes */
        if (at + (int64_t)lit != n || op + (int64_t)lit > cap)
            return KN__LZ4_BAD;
        s->ip = n;
        s->last = true;
    } else {
        int64_t o = at + (int64_t)lit;
        uint32_t off = (uint32_t)src[o] | (uint32_t)src[o + 1] << 8;
        s->ip = o + 2;
        uint64_t ml = token & 15;
        if (ml == 15 && !kn__lz4_more(src, &s->ip, n - KN__LZ4_LASTLITERALS + 1, false, &ml))
            return KN__LZ4_BAD;
        ml += 4;
        int64_t mop = op + (int64_t)lit;
        if (off == 0 || off > mop || ml > (uint64_t)cap || mop + (int64_t)ml > cap - KN__LZ4_LASTLITERALS)
            return KN__LZ4_BAD;
        s->pending = true;
        s->m_len = (uint32_t)ml;
        s->m_off = off;
    }
    *len = (uint32_t)lit;
    *from = (uint32_t)at;
    return KN__LZ4_LIT;
}

/* True when the raw block src[0, n) is well formed for cap bytes of room
 * and gives exactly `out` bytes (what liblz4 produced from it). */
static inline PA_HD bool kn__lz4_valid(const uint8_t *src, int64_t n, int64_t cap, int64_t out)
{
    if (cap == 0)
        return n == 1 && src[0] == 0 && out == 0;
    if (n == 0)
        return false;
    kn__lz4_state s = {0, false, false, 0, 0};
    int64_t op = 0;
    for (;;) {
        uint32_t len = 0, from = 0;
        int kind = kn__lz4_next(src, n, &s, op, cap, &len, &from);
        if (kind == KN__LZ4_END)
            return op == out;
        if (kind == KN__LZ4_BAD)
            return false;
        op += len;
    }
}

#ifdef __cplusplus
}
#endif

#endif /* PISTA_KN_LZ4_H */
