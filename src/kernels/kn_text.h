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

#endif /* PISTA_KN_TEXT_H */
