/*
 * kn_expr_str.c - LIKE / NOT LIKE, the regular-expression match (~) and
 * SUBSTRING over string views.
 *
 * Characters are UTF-8 code points: '_' matches one, SUBSTRING counts them.
 * The per-value matcher and SUBSTRING are kn__s_like and kn__s_substr
 * (kn_scalar.h, shared with the CUDA kernels); here are the batch loops,
 * with direct loops for the common LIKE shapes.
 */
#define _GNU_SOURCE   /* memmem */
#include "kernels/kn_expr_int.h"

#include <string.h>

bool kn__like(const char *s, int64_t n, const char *pat, int64_t m) { return kn__s_like(s, n, pat, m); }

int kn__op_like(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a];
    const kn__str *A = a->data;
    kn__str pat = kn__const_str(e, &e->consts[in->b]);
    uint8_t *D = d->data = d->slot;
    const uint8_t neg = in->sub & 1;
    const int n = e->n;
    if (in->sub & 2) {   /* a ~ b: b is a regular-expression program */
        for (int i = 0; i < n; i++)
            D[i] = (uint8_t)(kn__re_like((const uint8_t *)pat.p, A[i]) ^ neg);
        kn__valid_and2(e, d, a, NULL);
        return PA_OK;
    }
    /* Common shapes get direct loops: 'abc%', '%abc', '%abc%' without '_'. */
    const char *p = pat.p;
    int64_t m = pat.len;
    int64_t inner_pct = 0;
    for (int64_t j = 1; j + 1 < m; j++)
        inner_pct += p[j] == '%';
    bool plain = !inner_pct && !memchr(p, '_', (size_t)m) && !memchr(p, KN_LIKE_ESC, (size_t)m);
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
        D[i] = kn__s_substr(A[i], F ? F[i] : f0, L ? L[i] : l0, has_len);
    kn__valid_and3(e, d, a, kn__opreg(e, in->b, bc), has_len ? kn__opreg(e, in->c, cc) : NULL);
    return PA_OK;
}

/* STRFN (kernels.h, kn_strfn): string functions over a batch; parts of a
 * string are views into it. Operands b and c are registers. */
int kn__op_strfn(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a];
    const kn__reg *b = in->b >= 0 ? &e->regs[in->b] : NULL, *c = in->c >= 0 ? &e->regs[in->c] : NULL;
    const kn__str *A = a->data;
    d->data = d->slot;
    kn__valid_and3(e, d, a, b, c);
    for (int i = 0; i < e->n; i++) {
        kn__str x = A[i];
        switch ((kn_strfn)in->sub) {
        case KN_STR_LENGTH: ((int64_t *)d->data)[i] = kn__s_count_chars(x.p, x.len); break;
        case KN_STR_OCTET_LENGTH: ((int64_t *)d->data)[i] = x.len; break;
        case KN_STR_STRPOS: ((int64_t *)d->data)[i] = kn__s_strpos(x, ((const kn__str *)b->data)[i]); break;
        case KN_STR_STARTS_WITH: {
            kn__str y = ((const kn__str *)b->data)[i];
            ((uint8_t *)d->data)[i] = y.len <= x.len && (y.len == 0 || memcmp(x.p, y.p, (size_t)y.len) == 0);
            break;
        }
        case KN_STR_LEFT:
        case KN_STR_RIGHT:
            ((kn__str *)d->data)[i] =
                kn__s_left_right(x, ((const int64_t *)b->data)[i], in->sub == KN_STR_RIGHT);
            break;
        case KN_STR_BTRIM:
        case KN_STR_LTRIM:
        case KN_STR_RTRIM:
            ((kn__str *)d->data)[i] = kn__s_trim_set(x, ((const kn__str *)b->data)[i], in->sub != KN_STR_RTRIM,
                                                     in->sub != KN_STR_LTRIM);
            break;
        case KN_STR_SPLIT_PART: {
            int64_t n = ((const int64_t *)c->data)[i];
            if (n == 0 && kn__valid(d, i))
                return pa_error(e->err, PA_EINVAL, "split_part: field position must not be zero");
            ((kn__str *)d->data)[i] = kn__s_split_part(x, ((const kn__str *)b->data)[i], n);
            break;
        }
        default: return pa_error(e->err, PA_EINVAL, "string function %d", in->sub);
        }
    }
    return PA_OK;
}
