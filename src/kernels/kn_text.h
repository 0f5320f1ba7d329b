/*
 * kn_text.h - the per-value logic of the TEXT functions (kernels.h,
 * kn_textfn): each writes its result to dst, which has room for the bound
 * kn__text_rule gives, and returns its length. The cpu batch loops
 * (kn_expr_text.c) and the CUDA kernels call the same code, so, as in
 * kn_scalar.h, everything is static inline PA_HD without libc.
 *
 * Text is UTF-8. A byte that does not start a well-formed sequence is
 * taken as one character of its own and copied as it is, so malformed
 * input never makes more bytes than the bounds allow.
 */
#ifndef PISTA_KN_TEXT_H
#define PISTA_KN_TEXT_H

#include "core/binary.h"
#include "kernels/kn_case.h"
#include "kernels/kn_scalar.h"

/* The character at s[*i] (of s[0, n)), *i moved past it; a malformed
 * sequence gives its first byte as a character of its own (*bad set). */
static inline PA_HD uint32_t kn__s_u8next(const char *s, int64_t n, int64_t *i, bool *bad)
{
    const unsigned char *u = (const unsigned char *)s;
    uint32_t c = u[*i];
    int64_t l = c < 0x80 ? 1 : (c >= 0xC2 && c < 0xE0) ? 2 : (c >= 0xE0 && c < 0xF0) ? 3
              : (c >= 0xF0 && c < 0xF5) ? 4 : 0;
    *bad = false;
    if (l == 1) {
        *i += 1;
        return c;
    }
    if (l == 0 || *i + l > n) {
        *bad = true;
        *i += 1;
        return c;
    }
    uint32_t v = c & (l == 2 ? 0x1F : l == 3 ? 0x0F : 0x07);
    for (int64_t k = 1; k < l; k++) {
        if ((u[*i + k] & 0xC0) != 0x80) {
            *bad = true;
            *i += 1;
            return c;
        }
        v = (v << 6) | (u[*i + k] & 0x3F);
    }
    /* Overlong forms, surrogates and values past U+10FFFF are malformed. */
    if ((l == 3 && (v < 0x800 || (v >= 0xD800 && v < 0xE000))) || (l == 4 && (v < 0x10000 || v > 0x10FFFF))) {
        *bad = true;
        *i += 1;
        return c;
    }
    *i += l;
    return v;
}

/* Writes code point c as UTF-8; returns its bytes. */
static inline PA_HD int64_t kn__s_u8put(uint32_t c, char *d)
{
    if (c < 0x80) {
        d[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        d[0] = (char)(0xC0 | (c >> 6));
        d[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        d[0] = (char)(0xE0 | (c >> 12));
        d[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        d[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    d[0] = (char)(0xF0 | (c >> 18));
    d[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    d[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    d[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

static inline PA_HD void kn__s_copy(char *d, const char *s, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        d[k] = s[k];
}

/* Whether code point c belongs to a word for INITCAP: PostgreSQL's
 * iswalnum in a UTF-8 locale. ASCII letters and digits; beyond ASCII,
 * every code point but those of the blocks of punctuation, symbols and
 * spaces (Latin-1's, General Punctuation to the arrows, mathematical and
 * technical signs, box drawing and dingbats, CJK punctuation, the
 * replacement characters and the emoji and symbol planes). */
static inline PA_HD bool kn__s_word_char(uint32_t c)
{
    if (c < 0x80)
        return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
    if (c < 0xC0)
        return c == 0xAA || c == 0xB5 || c == 0xBA;
    return c != 0xD7 && c != 0xF7 && !(c >= 0x2000 && c < 0x2070) && !(c >= 0x20A0 && c < 0x2100) &&
           !(c >= 0x2190 && c < 0x2C00) && !(c >= 0x3000 && c < 0x3040) && !(c >= 0xFFF0 && c < 0x10000) &&
           !(c >= 0x1F000 && c < 0x1FB00);
}

/* UPPER (mode 0), LOWER (1) or INITCAP (2) of a. */
static inline PA_HD int64_t kn__s_case(kn__str a, char *d, int mode)
{
    int64_t o = 0;
    bool in_word = false;
    for (int64_t i = 0; i < a.len;) {
        int64_t at = i;
        bool bad;
        uint32_t c = kn__s_u8next(a.p, a.len, &i, &bad);
        if (bad) {
            d[o++] = a.p[at];
            in_word = false;
            continue;
        }
        uint32_t m;
        if (mode == 0) {
            m = kn__s_upper_cp(c);
        } else if (mode == 1) {
            m = kn__s_lower_cp(c);
        } else {
            bool w = kn__s_word_char(c);
            m = !w ? c : in_word ? kn__s_lower_cp(c) : kn__s_title_cp(c);
            in_word = w;
        }
        o += kn__s_u8put(m, d + o);
    }
    return o;
}

/* REPLACE: a with each occurrence of from (left to right, not
 * overlapping) replaced by to. */
static inline PA_HD int64_t kn__s_replace(kn__str a, kn__str from, kn__str to, char *d)
{
    if (from.len == 0) {
        kn__s_copy(d, a.p, a.len);
        return a.len;
    }
    int64_t o = 0, i = 0;
    while (i < a.len) {
        int64_t at = kn__s_find(a.p + i, a.len - i, from.p, from.len);
        if (at < 0)
            break;
        kn__s_copy(d + o, a.p + i, at);
        o += at;
        kn__s_copy(d + o, to.p, to.len);
        o += to.len;
        i += at + from.len;
    }
    kn__s_copy(d + o, a.p + i, a.len - i);
    return o + a.len - i;
}

/* LPAD (left) or RPAD to n characters with fill's characters (a's
 * characters as kn__s_u8next reads them; fill's by their lead bytes, as
 * kn__max_char_bytes bounds them). */
static inline PA_HD int64_t kn__s_pad(kn__str a, int64_t n, kn__str fill, bool left, char *d)
{
    if (n <= 0)
        return 0;
    int64_t chars = 0, cut = 0;
    for (int64_t i = 0; i < a.len; chars++) {
        bool bad;
        kn__s_u8next(a.p, a.len, &i, &bad);
        if (chars + 1 == n)
            cut = i;   /* where the first n characters end */
    }
    if (chars >= n || fill.len == 0) {   /* cut to its first n characters */
        int64_t b = chars >= n ? cut : a.len;
        kn__s_copy(d, a.p, b);
        return b;
    }
    int64_t need = n - chars, o = 0;
    if (!left) {
        kn__s_copy(d, a.p, a.len);
        o = a.len;
    }
    for (int64_t f = 0; need > 0; need--) {   /* fill's characters, round and round */
        int64_t l = kn__s_u8len((unsigned char)fill.p[f]);
        if (f + l > fill.len)
            l = fill.len - f;
        kn__s_copy(d + o, fill.p + f, l);
        o += l;
        f += l;
        if (f >= fill.len)
            f = 0;
    }
    if (left) {
        kn__s_copy(d + o, a.p, a.len);
        o += a.len;
    }
    return o;
}

/* REVERSE: a's characters in reverse order (a malformed byte is one). */
static inline PA_HD int64_t kn__s_reverse(kn__str a, char *d)
{
    int64_t o = a.len;
    for (int64_t i = 0; i < a.len;) {
        int64_t at = i;
        bool bad;
        kn__s_u8next(a.p, a.len, &i, &bad);
        o -= i - at;
        kn__s_copy(d + o, a.p + at, i - at);
    }
    return a.len;
}

/* TRANSLATE: each character of a that occurs in from (its first place i
 * there) becomes to's i-th character, or nothing when to has fewer; the
 * others stay. Characters as kn__s_u8next reads them. */
static inline PA_HD int64_t kn__s_translate(kn__str a, kn__str from, kn__str to, char *d)
{
    int64_t o = 0;
    for (int64_t i = 0; i < a.len;) {
        int64_t at = i;
        bool bad;
        kn__s_u8next(a.p, a.len, &i, &bad);
        int64_t cl = i - at, idx = -1, k = 0;
        for (int64_t f = 0; f < from.len && idx < 0; k++) {
            int64_t fa = f;
            kn__s_u8next(from.p, from.len, &f, &bad);
            bool eq = f - fa == cl;
            for (int64_t b = 0; eq && b < cl; b++)
                eq = from.p[fa + b] == a.p[at + b];
            if (eq)
                idx = k;
        }
        if (idx < 0) {
            kn__s_copy(d + o, a.p + at, cl);
            o += cl;
            continue;
        }
        int64_t t = 0;
        for (int64_t j = 0; j < idx && t < to.len; j++)
            kn__s_u8next(to.p, to.len, &t, &bad);
        if (t < to.len) {
            int64_t ta = t;
            kn__s_u8next(to.p, to.len, &t, &bad);
            kn__s_copy(d + o, to.p + ta, t - ta);
            o += t - ta;
        }
    }
    return o;
}

/* MD5 (RFC 1321) of a's bytes as 32 lowercase hex digits. */
static inline PA_HD uint32_t kn__md5_rotl(uint32_t x, int c) { return (x << c) | (x >> (32 - c)); }

static inline PA_HD int64_t kn__s_md5(kn__str a, char *d)
{
    const uint32_t K[64] = {
        0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
        0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
        0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
        0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
        0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
        0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
        0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
        0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};
    const int R[16] = {7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21};
    uint32_t h[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
    uint64_t bits = (uint64_t)a.len * 8;
    int64_t total = ((a.len + 8) / 64 + 1) * 64;   /* the message, 0x80, zeros, the length */
    for (int64_t blk = 0; blk < total; blk += 64) {
        uint32_t w[16];
        for (int j = 0; j < 16; j++) {
            uint32_t v = 0;
            for (int b = 0; b < 4; b++) {
                int64_t at = blk + 4 * j + b;
                uint32_t byte = at < a.len    ? (uint8_t)a.p[at]
                                : at == a.len ? 0x80u
                                : at >= total - 8 ? (uint32_t)((bits >> (8 * (at - (total - 8)))) & 0xff)
                                                  : 0u;
                v |= byte << (8 * b);
            }
            w[j] = v;
        }
        uint32_t A = h[0], B = h[1], C = h[2], D = h[3];
        for (int i = 0; i < 64; i++) {
            uint32_t F;
            int g;
            if (i < 16)
                F = (B & C) | (~B & D), g = i;
            else if (i < 32)
                F = (D & B) | (~D & C), g = (5 * i + 1) & 15;
            else if (i < 48)
                F = B ^ C ^ D, g = (3 * i + 5) & 15;
            else
                F = C ^ (B | ~D), g = (7 * i) & 15;
            uint32_t t = D;
            D = C;
            C = B;
            B = B + kn__md5_rotl(A + F + K[i] + w[g], R[(i >> 4) * 4 + (i & 3)]);
            A = t;
        }
        h[0] += A, h[1] += B, h[2] += C, h[3] += D;
    }
    const char *hex = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        uint32_t byte = (h[i >> 2] >> (8 * (i & 3))) & 0xff;
        d[2 * i] = hex[byte >> 4];
        d[2 * i + 1] = hex[byte & 15];
    }
    return 32;
}

/* The byte types' CASTs (KN_TEXT_BYTEA_IN .. KN_TEXT_UUID_OUT) of one value
 * a into slot d (the kn__text_rule bound); *len its bytes. False when a
 * is no value of the target type (the *_IN ones: a syntax error to
 * report) or a UUID that is not 16 bytes (UUID_OUT). */
static inline PA_HD bool kn__s_bytes_cast(int fn, kn__str a, char *d, int64_t *len)
{
    *len = 0;
    switch (fn) {
    case KN_TEXT_BYTEA_IN: return pa_bytea_parse(a.p, a.len, (uint8_t *)d, len);
    case KN_TEXT_BYTEA_OUT: *len = pa_bytea_format((const uint8_t *)a.p, a.len, d); return true;
    case KN_TEXT_UUID_IN: *len = PA_UUID_BYTES; return pa_uuid_parse(a.p, a.len, (uint8_t *)d);
    default:
        if (a.len != PA_UUID_BYTES)
            return false;
        *len = pa_uuid_format((const uint8_t *)a.p, d);
        return true;
    }
}

#endif /* PISTA_KN_TEXT_H */
