/*
 * kn_regex.h - the per-row matcher of PostgreSQL's regular-expression
 * functions (regexp_like, the ~ operators, regexp_replace): a Pike VM that
 * runs a small program the host compiled from the pattern
 * (kn_regex_compile, kn_regex.c) and stored in the expression program's
 * byte pool. As in kn_text.h, everything is static inline PA_HD without
 * libc, allocation or recursion: the cpu batch loops and the CUDA kernels
 * run this same code.
 *
 * Matching is leftmost-first (Perl's and RE2's, so DuckDB's): of the
 * matches that start leftmost, the one the pattern prefers by alternation
 * order and greedy or lazy quantifiers. PostgreSQL's engine agrees on where
 * a match starts but may end it elsewhere: it takes the longest (or, for a
 * pattern it deems lazy, the shortest) match there, so a|ab on "ab" is "a"
 * here and "ab" in PostgreSQL.
 * The VM keeps its threads in priority order and never backtracks, so a
 * search takes O(characters x instructions) time, whatever the pattern
 * ("(a*)*b" over a long run of a's included). Characters are UTF-8 code
 * points (a malformed byte is one character of its own, as kn__s_u8next
 * reads it). Under KN_RE_ICASE a character matches after the simple case
 * folding kn__re_fold (kn_case.h's mappings).
 *
 * Program layout (bytes; targets are instruction indices, so the program
 * can move):
 *   [0] KN_RE_MAGIC  [1] flags (KN_RE_ICASE, KN_RE_GLOBAL)  [2] instructions
 *   [3] capturing groups; then the instructions, 4 bytes {op, x, y, z}
 *   each, then the classes' ranges.
 *   CHAR  code point x | y << 8 | z << 16 (folded under KN_RE_ICASE)
 *   ANY   any character (a newline too, as in PostgreSQL)
 *   CLASS the ranges at byte x | y << 8 (a count byte, then count pairs of
 *         3-byte code points lo, hi); z = 1: negated
 *   SPLIT go on at x, and at y with lower priority;  JMP  go on at x
 *   SAVE  the position into slot x (group x / 2; its start when x is even)
 *   BOL, EOL  the string's start, its end (not lines');  MATCH
 * The compiler wraps the pattern as SAVE 0, pattern, SAVE 1, MATCH;
 * kn__re_check (kn_regex.c) accepts only programs the VM cannot run out of.
 *
 * Per-row state is on the stack: two thread lists and a work stack, about
 * 3.5 KiB for KN_RE_MAX_INSNS = 128. A thread carries the span of one
 * group, not all of them: regexp_replace finds the match (group 0) and then
 * re-runs the VM anchored at its start once for each group the replacement
 * refers to. Which thread survives never depends on the spans it carries,
 * so each run follows the same path and the spans agree.
 */
#ifndef PISTA_KN_REGEX_H
#define PISTA_KN_REGEX_H

#include "kernels/kernels.h"
#include "kernels/kn_case.h"
#include "kernels/kn_text.h"

enum kn__re_op {
    KN_RE_CHAR, KN_RE_ANY, KN_RE_CLASS, KN_RE_SPLIT, KN_RE_JMP, KN_RE_SAVE, KN_RE_BOL, KN_RE_EOL, KN_RE_MATCH,
    KN_RE__NOPS
};

/* Thread lists: the threads in priority order, and a bit per instruction
 * that already has one (the dedup that keeps the VM linear). Positions are
 * int32, as VARCHAR offsets are. */
typedef struct kn__re_list {
    int n;
    uint32_t on[KN_RE_MAX_INSNS / 32];
    uint8_t pc[KN_RE_MAX_INSNS];
    int32_t lo[KN_RE_MAX_INSNS], hi[KN_RE_MAX_INSNS];
} kn__re_list;

static inline PA_HD const uint8_t *kn__re_insn(const uint8_t *prog, int pc) { return prog + KN_RE_HDR + 4 * pc; }

static inline PA_HD uint32_t kn__re_u24(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16;
}

/* The simple case folding: the lower case of the upper case, so that the
 * characters a case mapping relates fold together (U+017F long s with s,
 * U+212A Kelvin sign with k). */
static inline PA_HD uint32_t kn__re_fold(uint32_t c) { return kn__s_lower_cp(kn__s_upper_cp(c)); }

static inline PA_HD bool kn__re_in_ranges(const uint8_t *r, uint32_t c)
{
    for (int k = 0; k < r[0]; k++)
        if (kn__re_u24(r + 1 + 6 * k) <= c && c <= kn__re_u24(r + 4 + 6 * k))
            return true;
    return false;
}

/* Whether c is in the class of CLASS instruction in; under icase when any
 * of its case forms is (so [a-z] takes 'Q' and [^a-z] does not). */
static inline PA_HD bool kn__re_class(const uint8_t *prog, const uint8_t *in, uint32_t c, bool icase)
{
    const uint8_t *r = prog + (in[1] | in[2] << 8);
    bool hit = kn__re_in_ranges(r, c);
    if (!hit && icase)
        hit = kn__re_in_ranges(r, kn__s_lower_cp(c)) || kn__re_in_ranges(r, kn__s_upper_cp(c)) ||
              kn__re_in_ranges(r, kn__re_fold(c));
    return hit != (in[3] != 0);
}

static inline PA_HD void kn__re_clear(kn__re_list *l)
{
    l->n = 0;
    for (int k = 0; k < KN_RE_MAX_INSNS / 32; k++)
        l->on[k] = 0;
}

/* Adds a thread at pc (carrying span lo, hi of group track) to l for the
 * position pos of s[0, n), following jumps, splits (x first: priority),
 * saves and anchors to the instructions that read a character or match.
 * Each instruction is entered once per list, so the work stack holds at
 * most one entry more than the splits entered. */
static inline PA_HD void kn__re_add(const uint8_t *prog, kn__re_list *l, int pc, int32_t lo, int32_t hi, int64_t pos,
                                    int64_t n, int track)
{
    uint8_t spc[KN_RE_MAX_INSNS + 1];
    int32_t slo[KN_RE_MAX_INSNS + 1], shi[KN_RE_MAX_INSNS + 1];
    int sp = 0;
    spc[sp] = (uint8_t)pc, slo[sp] = lo, shi[sp] = hi, sp++;
    while (sp > 0) {
        sp--;
        pc = spc[sp], lo = slo[sp], hi = shi[sp];
        uint32_t bit = 1u << (pc & 31);
        if (l->on[pc >> 5] & bit)
            continue;
        l->on[pc >> 5] |= bit;
        const uint8_t *in = kn__re_insn(prog, pc);
        int next = -1, alt = -1;
        switch (in[0]) {
        case KN_RE_JMP: next = in[1]; break;
        case KN_RE_SPLIT: next = in[1], alt = in[2]; break;
        case KN_RE_SAVE:
            if (in[1] == 2 * track)
                lo = (int32_t)pos;
            else if (in[1] == 2 * track + 1)
                hi = (int32_t)pos;
            next = pc + 1;
            break;
        case KN_RE_BOL: next = pos == 0 ? pc + 1 : -1; break;
        case KN_RE_EOL: next = pos == n ? pc + 1 : -1; break;
        default:
            l->pc[l->n] = (uint8_t)pc, l->lo[l->n] = lo, l->hi[l->n] = hi;
            l->n++;
            break;
        }
        if (alt >= 0)
            spc[sp] = (uint8_t)alt, slo[sp] = lo, shi[sp] = hi, sp++;
        if (next >= 0)
            spc[sp] = (uint8_t)next, slo[sp] = lo, shi[sp] = hi, sp++;
    }
}

/* Searches s[0, n) from byte from (anchors still see the whole string) for
 * the leftmost-first match; anchored: only one starting at from. The span
 * of group track (0: the match) goes to *lo, *hi, -1 where the group took
 * no part. any: stop at the first match found, whichever (regexp_like).
 * Returns whether there is a match. */
static inline PA_HD bool kn__re_search(const uint8_t *prog, const char *s, int64_t n, int64_t from, bool anchored,
                                       int track, bool any, int32_t *lo, int32_t *hi)
{
    const bool icase = (prog[1] & KN_RE_ICASE) != 0;
    kn__re_list lists[2];
    kn__re_list *cl = &lists[0], *nl = &lists[1];
    bool matched = false;
    kn__re_clear(cl);
    for (int64_t pos = from;;) {
        if (!matched && (!anchored || pos == from))
            kn__re_add(prog, cl, 0, -1, -1, pos, n, track);   /* the lowest priority: a later start */
        if (cl->n == 0 && (matched || anchored || pos >= n))
            break;
        int64_t next = pos;
        uint32_t c = 0;
        bool bad;
        if (pos < n)
            c = kn__s_u8next(s, n, &next, &bad);
        const uint32_t fc = icase ? kn__re_fold(c) : c;
        kn__re_clear(nl);
        for (int t = 0; t < cl->n; t++) {
            const uint8_t *in = kn__re_insn(prog, cl->pc[t]);
            bool step = false;
            switch (in[0]) {
            case KN_RE_MATCH:
                matched = true;
                *lo = cl->lo[t], *hi = cl->hi[t];
                if (any)
                    return true;
                t = cl->n;   /* the threads after this one have lower priority */
                break;
            case KN_RE_CHAR: step = pos < n && fc == kn__re_u24(in + 1); break;
            case KN_RE_ANY: step = pos < n; break;
            case KN_RE_CLASS: step = pos < n && kn__re_class(prog, in, c, icase); break;
            default: break;
            }
            if (step)
                kn__re_add(prog, nl, cl->pc[t] + 1, cl->lo[t], cl->hi[t], next, n, track);
        }
        if (pos >= n)
            break;
        kn__re_list *t = cl;
        cl = nl, nl = t;
        pos = next;
    }
    return matched;
}

/* regexp_like: whether the pattern matches somewhere in a. */
static inline PA_HD bool kn__re_like(const uint8_t *prog, kn__str a)
{
    int32_t lo, hi;
    return kn__re_search(prog, a.p, a.len, 0, false, 0, true, &lo, &hi);
}

/* The replacement's literal bytes (*lit) and group references (*refs:
 * \0 to \9 and \&, each at most the input's bytes over all matches, which
 * do not overlap); the groups referred to as bits 1 << g. */
static inline PA_HD void kn__re_repl_measure(kn__str r, int64_t *lit, int64_t *refs, uint32_t *groups)
{
    *lit = *refs = 0, *groups = 0;
    for (int64_t i = 0; i < r.len; i++) {
        char ch = i + 1 < r.len && r.p[i] == '\\' ? r.p[i + 1] : 0;
        if ((ch >= '0' && ch <= '9') || ch == '&') {
            *refs += 1;
            *groups |= 1u << (ch == '&' ? 0 : ch - '0');
            i++;
        } else if (ch == '\\') {
            *lit += 1;
            i++;
        } else {
            *lit += 1;   /* a backslash before anything else stays, and so does what follows */
        }
    }
}

/* Writes the replacement r for one match of a to d: \1..\9 the group's
 * text ('' when the group took no part), \0 and \& the match's, \\ a
 * backslash, anything else as it is. Returns the bytes written. */
static inline PA_HD int64_t kn__re_put_repl(kn__str r, kn__str a, const int32_t *glo, const int32_t *ghi, char *d)
{
    int64_t o = 0;
    for (int64_t i = 0; i < r.len; i++) {
        char ch = i + 1 < r.len && r.p[i] == '\\' ? r.p[i + 1] : 0;
        if ((ch >= '0' && ch <= '9') || ch == '&') {
            int g = ch == '&' ? 0 : ch - '0';
            if (glo[g] >= 0 && ghi[g] >= glo[g]) {
                kn__s_copy(d + o, a.p + glo[g], ghi[g] - glo[g]);
                o += ghi[g] - glo[g];
            }
            i++;
        } else if (ch == '\\') {
            d[o++] = '\\';
            i++;
        } else {
            d[o++] = r.p[i];
        }
    }
    return o;
}

/* regexp_replace: a with its first match (every match under KN_RE_GLOBAL)
 * replaced by r, written to d; returns the bytes written, at most
 * n + (n + 1) * lit + refs * n for n = a.len (kn__re_repl_measure). As
 * RE2's GlobalReplace (DuckDB's): after a match the search goes on at its
 * end, and an empty match right at the end of the previous one is skipped
 * with the character after it. (PostgreSQL steps past empty matches only,
 * so it also replaces an empty match right after a non-empty one:
 * 'abc', 'b*', '-', 'g' is -a-c- here and -a--c- there.) */
static inline PA_HD int64_t kn__re_replace(const uint8_t *prog, kn__str a, kn__str r, char *d)
{
    const bool global = (prog[1] & KN_RE_GLOBAL) != 0;
    int64_t lit, refs;
    uint32_t want;
    kn__re_repl_measure(r, &lit, &refs, &want);
    int32_t glo[10], ghi[10];
    int64_t p = 0, lastend = -1, o = 0;
    while (p <= a.len) {
        int32_t ms, me;
        if (!kn__re_search(prog, a.p, a.len, p, false, 0, false, &ms, &me))
            break;
        kn__s_copy(d + o, a.p + p, ms - p);
        o += ms - p;
        if (ms == me && ms == lastend) {
            if (p >= a.len)
                break;
            int64_t q = p;
            bool bad;
            kn__s_u8next(a.p, a.len, &q, &bad);
            kn__s_copy(d + o, a.p + p, q - p);
            o += q - p;
            p = q;
            continue;
        }
        glo[0] = ms, ghi[0] = me;
        for (int g = 1; g < 10; g++) {
            glo[g] = ghi[g] = -1;
            if ((want >> g & 1) && g <= prog[3] &&
                !kn__re_search(prog, a.p, a.len, ms, true, g, false, &glo[g], &ghi[g]))
                glo[g] = ghi[g] = -1;
        }
        o += kn__re_put_repl(r, a, glo, ghi, d + o);
        p = lastend = me;
        if (!global)
            break;
    }
    if (p < a.len) {
        kn__s_copy(d + o, a.p + p, a.len - p);
        o += a.len - p;
    }
    return o;
}

#endif /* PISTA_KN_REGEX_H */
