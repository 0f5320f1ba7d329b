/*
 * kn_expr_str.c - LIKE / NOT LIKE and SUBSTRING over string views.
 *
 * Characters are UTF-8 code points: '_' matches one, SUBSTRING counts them.
 * LIKE has no escape character. The matcher splits the pattern at '%' into
 * segments: the first is anchored at the start (unless the pattern starts
 * with '%'), the last at the end, and the middle ones are found leftmost in
 * order, which is exact for these patterns (no backtracking needed).
 * SUBSTRING follows DuckDB: 1-based; a negative start counts from the end;
 * start 0 begins one character before the first; a negative length takes
 * characters before the start; the result is clamped to the string.
 */
#define _GNU_SOURCE   /* memmem */
#include "kernels/kn_expr_int.h"

#include <string.h>

static inline int64_t u8len(unsigned char c)
{
    return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

/* Match segment seg[0..k) (no '%') at s+pos; returns the end or -1. */
static int64_t seg_at(const char *s, int64_t n, int64_t pos, const char *seg, int64_t k)
{
    for (int64_t j = 0; j < k; j++) {
        if (pos >= n)
            return -1;
        if (seg[j] == '_') {
            pos += u8len((unsigned char)s[pos]);
            if (pos > n)
                return -1;
        } else if (s[pos] != seg[j]) {
            return -1;
        } else {
            pos++;
        }
    }
    return pos;
}

/* Characters in a segment: one per '_' and one per code point otherwise. */
static int64_t seg_chars(const char *seg, int64_t k)
{
    int64_t c = 0;
    for (int64_t j = 0; j < k; j++)
        c += ((unsigned char)seg[j] & 0xC0) != 0x80;
    return c;
}

static bool has_underscore(const char *seg, int64_t k) { return k > 0 && memchr(seg, '_', (size_t)k) != NULL; }

bool kn__like(const char *s, int64_t n, const char *pat, int64_t m)
{
    const char *pct = m ? memchr(pat, '%', (size_t)m) : NULL;
    if (!pct)
        return seg_at(s, n, 0, pat, m) == n;
    /* First segment, anchored at the start. */
    int64_t k = pct - pat;
    int64_t pos = seg_at(s, n, 0, pat, k);
    if (pos < 0)
        return false;
    int64_t pi = k + 1;
    for (;;) {
        const char *next = pi < m ? memchr(pat + pi, '%', (size_t)(m - pi)) : NULL;
        if (!next) {
            /* Last segment, anchored at the end. */
            const char *seg = pat + pi;
            int64_t sk = m - pi;
            if (sk == 0)
                return true;
            int64_t chars = seg_chars(seg, sk), start = n;
            while (chars > 0 && start > pos) {
                start--;
                if (((unsigned char)s[start] & 0xC0) != 0x80)
                    chars--;
            }
            return chars == 0 && start >= pos && seg_at(s, n, start, seg, sk) == n;
        }
        const char *seg = pat + pi;
        int64_t sk = next - seg;
        if (sk > 0) {
            if (!has_underscore(seg, sk)) {
                const char *f = pos < n ? memmem(s + pos, (size_t)(n - pos), seg, (size_t)sk) : NULL;
                if (!f)
                    return false;
                pos = (f - s) + sk;
            } else {
                int64_t end = -1;
                for (int64_t p = pos; p < n; p += u8len((unsigned char)s[p]))
                    if ((end = seg_at(s, n, p, seg, sk)) >= 0)
                        break;
                if (end < 0)
                    return false;
                pos = end;
            }
        }
        pi = next - pat + 1;
    }
}

int kn__op_like(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a];
    const kn__str *A = a->data;
    kn__str pat = kn__const_str(e, &e->consts[in->b]);
    uint8_t *D = d->data = d->slot;
    const uint8_t neg = in->sub != 0;
    const int n = e->n;
    /* Common shapes get direct loops: 'abc%', '%abc', '%abc%' without '_'. */
    const char *p = pat.p;
    int64_t m = pat.len;
    int64_t inner_pct = 0;
    for (int64_t j = 1; j + 1 < m; j++)
        inner_pct += p[j] == '%';
    bool plain = !inner_pct && !memchr(p, '_', (size_t)m);
    if (plain && m >= 1 && p[m - 1] == '%' && p[0] != '%') {
        for (int i = 0; i < n; i++)
            D[i] = (uint8_t)((A[i].len >= m - 1 && memcmp(A[i].p, p, (size_t)(m - 1)) == 0) ^ neg);
    } else if (plain && m >= 2 && p[0] == '%' && p[m - 1] != '%') {
        for (int i = 0; i < n; i++)
            D[i] = (uint8_t)((A[i].len >= m - 1 && memcmp(A[i].p + A[i].len - (m - 1), p + 1, (size_t)(m - 1)) == 0) ^
                             neg);
    } else if (plain && m >= 2 && p[0] == '%' && p[m - 1] == '%') {
        for (int i = 0; i < n; i++)
            D[i] = (uint8_t)((m == 2 || (A[i].len && memmem(A[i].p, (size_t)A[i].len, p + 1, (size_t)(m - 2)))) ^ neg);
    } else {
        for (int i = 0; i < n; i++)
            D[i] = (uint8_t)(kn__like(A[i].p, A[i].len, p, m) ^ neg);
    }
    kn__valid_and2(e, d, a, NULL);
    return PA_OK;
}

/* Byte offset of character c (clamped to the end) from s. */
static int64_t char_to_byte(const char *s, int64_t n, int64_t c)
{
    int64_t b = 0;
    while (c > 0 && b < n) {
        b += u8len((unsigned char)s[b]);
        c--;
    }
    return b < n ? b : n;
}

static int64_t count_chars(const char *s, int64_t n)
{
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

#define BIG ((int64_t)1 << 40)   /* beyond any string's length: keeps sums exact */

static kn__str substr1(kn__str s, int64_t from, int64_t len, bool has_len)
{
    kn__str r = {s.p, 0};
    if (!has_len)
        len = BIG;
    from = from < -BIG ? -BIG : from > BIG ? BIG : from;
    len = len < -BIG ? -BIG : len > BIG ? BIG : len;
    if (from > 0 && len >= 0) {
        /* Common case: no need to count the characters. */
        int64_t b0 = char_to_byte(s.p, s.len, from - 1);
        int64_t b1 = b0 + char_to_byte(s.p + b0, s.len - b0, len);
        r.p = s.p + b0;
        r.len = b1 - b0;
        return r;
    }
    int64_t nch = count_chars(s.p, s.len), start, end;
    if (from > 0)
        start = from - 1 < nch ? from - 1 : nch;
    else if (from == 0)
        start = -1;
    else
        start = nch + from;
    if (len >= 0) {
        end = start + len;
    } else {
        end = start;
        start += len;
    }
    start = start < 0 ? 0 : start > nch ? nch : start;
    end = end < 0 ? 0 : end > nch ? nch : end;
    if (end <= start)
        return r;
    int64_t b0 = char_to_byte(s.p, s.len, start);
    int64_t b1 = b0 + char_to_byte(s.p + b0, s.len - b0, end - start);
    r.p = s.p + b0;
    r.len = b1 - b0;
    return r;
}

int kn__op_substr(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a];
    const kn__str *A = a->data;
    kn__str *D = d->data = d->slot;
    const bool has_len = in->imm != 0;
    const bool bc = in->flags & KN_F_B_CONST, cc = in->flags & KN_F_C_CONST;
    const int64_t *F = bc ? NULL : e->regs[in->b].data;
    const int64_t *L = (!has_len || cc) ? NULL : e->regs[in->c].data;
    const int64_t f0 = bc ? e->consts[in->b].v.i : 0;
    const int64_t l0 = has_len && cc ? e->consts[in->c].v.i : 0;
    for (int i = 0; i < e->n; i++)
        D[i] = substr1(A[i], F ? F[i] : f0, L ? L[i] : l0, has_len);
    kn__valid_and3(e, d, a, kn__opreg(e, in->b, bc), has_len ? kn__opreg(e, in->c, cc) : NULL);
    return PA_OK;
}
