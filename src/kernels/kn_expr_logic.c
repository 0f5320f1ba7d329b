/*
 * kn_expr_logic.c - comparisons, AND/OR/NOT with SQL's three-valued logic,
 * IS [NOT] NULL, SELECT (the building block of CASE) and IN (list).
 *
 * DOUBLE compares in DuckDB's total order: NaN equals NaN and is above every
 * number. VARCHAR compares bytewise (unsigned), shorter prefix first.
 * INTERVAL compares by its normalised length (pa_interval_norm: '1 mon' =
 * '30 days').
 */
#include "kernels/kn_expr_int.h"

/* NaN-aware DOUBLE order. */
#define F_EQ(x, y) ((x) == (y) || ((x) != (x) && (y) != (y)))
#define F_LT(x, y) ((x) < (y) || ((x) == (x) && (y) != (y)))

#define CMP_SWITCH(TA, GET, EQ, LT)                                           \
    switch ((kn_cmp)in->sub) {                                                \
    case KN_CMP_EQ: KN__BIN(TA, GET, { D[i] = (uint8_t)(EQ(x, y)); }); break; \
    case KN_CMP_NE: KN__BIN(TA, GET, { D[i] = (uint8_t)!(EQ(x, y)); }); break; \
    case KN_CMP_LT: KN__BIN(TA, GET, { D[i] = (uint8_t)(LT(x, y)); }); break; \
    case KN_CMP_LE: KN__BIN(TA, GET, { D[i] = (uint8_t)!(LT(y, x)); }); break; \
    case KN_CMP_GT: KN__BIN(TA, GET, { D[i] = (uint8_t)(LT(y, x)); }); break; \
    case KN_CMP_GE: KN__BIN(TA, GET, { D[i] = (uint8_t)!(LT(x, y)); }); break; \
    }

#define I_EQ(x, y) ((x) == (y))
#define I_LT(x, y) ((x) < (y))
/* INTERVAL (its 16 bytes in an __int128 slot): by the normalised length. */
#define IV_EQ(x, y) (pa_interval_norm(kn__s_iv_of(x)) == pa_interval_norm(kn__s_iv_of(y)))
#define IV_LT(x, y) (pa_interval_norm(kn__s_iv_of(x)) < pa_interval_norm(kn__s_iv_of(y)))

static bool cmp_result(int sub, int c)
{
    switch ((kn_cmp)sub) {
    case KN_CMP_EQ: return c == 0;
    case KN_CMP_NE: return c != 0;
    case KN_CMP_LT: return c < 0;
    case KN_CMP_LE: return c <= 0;
    case KN_CMP_GT: return c > 0;
    case KN_CMP_GE: return c >= 0;
    }
    return false;
}

static void cmp_str(kn__eval *e, const kn_insn *in, uint8_t *D)
{
    const int n = e->n;
    kn__str ca = {0}, cb = {0};
    const kn__str *A = NULL, *B = NULL;
    if (in->flags & KN_F_A_CONST)
        ca = kn__const_str(e, &e->consts[in->a]);
    else
        A = e->regs[in->a].data;
    if (in->flags & KN_F_B_CONST)
        cb = kn__const_str(e, &e->consts[in->b]);
    else
        B = e->regs[in->b].data;
    if (in->sub == KN_CMP_EQ || in->sub == KN_CMP_NE) {
        const uint8_t want = in->sub == KN_CMP_EQ;
        for (int i = 0; i < n; i++) {
            kn__str x = A ? A[i] : ca, y = B ? B[i] : cb;
            bool eq = x.len == y.len && (x.len == 0 || memcmp(x.p, y.p, (size_t)x.len) == 0);
            D[i] = (uint8_t)(eq == want);
        }
        return;
    }
    for (int i = 0; i < n; i++)
        D[i] = (uint8_t)cmp_result(in->sub, kn__str_cmp(A ? A[i] : ca, B ? B[i] : cb));
}

int kn__op_cmp(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const int n = e->n;
    uint8_t *D = d->data = d->slot;
    switch (kn__kind_of(in->atype)) {
    case KN__BOOL: CMP_SWITCH(uint8_t, i, I_EQ, I_LT); break;
    case KN__I32: CMP_SWITCH(int32_t, i, I_EQ, I_LT); break;
    case KN__I64: CMP_SWITCH(int64_t, i, I_EQ, I_LT); break;
    case KN__I128:
        if (in->atype.id == PA_TYPE_INTERVAL)
            CMP_SWITCH(__int128, w, IV_EQ, IV_LT)
        else
            CMP_SWITCH(__int128, w, I_EQ, I_LT)
        break;
    case KN__F64: CMP_SWITCH(double, f, F_EQ, F_LT); break;
    case KN__STR: cmp_str(e, in, D); break;
    }
    kn__valid_and2(e, d, kn__opreg(e, in->a, in->flags & KN_F_A_CONST), kn__opreg(e, in->b, in->flags & KN_F_B_CONST));
    return PA_OK;
}

int kn__op_andor(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a], *b = &e->regs[in->b];
    const uint8_t *A = a->data, *B = b->data;
    const int n = e->n;
    uint8_t *D = d->data = d->slot;
    const bool is_and = in->op == KN_OP_AND;
    if (!a->nulls && !b->nulls) {
        if (is_and)
            for (int i = 0; i < n; i++)
                D[i] = A[i] & B[i];
        else
            for (int i = 0; i < n; i++)
                D[i] = A[i] | B[i];
        d->nulls = false;
        return PA_OK;
    }
    /* AND is FALSE when either side is a valid FALSE, TRUE when both are
     * valid TRUE, else NULL; OR the mirror image. */
    bool any_null = false;
    memset(d->valid, 0, KN__WORDS * 8);
    for (int i = 0; i < n; i++) {
        bool va = kn__valid(a, i), vb = kn__valid(b, i);
        bool x = A[i] != 0, y = B[i] != 0;
        bool val, valid;
        if (is_and) {
            bool f = (va && !x) || (vb && !y);
            valid = f || (va && vb);
            val = !f && valid;
        } else {
            bool t = (va && x) || (vb && y);
            valid = t || (va && vb);
            val = t;
        }
        D[i] = (uint8_t)val;
        if (valid)
            d->valid[i >> 6] |= (uint64_t)1 << (i & 63);
        else
            any_null = true;
    }
    d->nulls = any_null;
    return PA_OK;
}

int kn__op_not(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a];
    const uint8_t *A = a->data;
    uint8_t *D = d->data = d->slot;
    for (int i = 0; i < e->n; i++)
        D[i] = A[i] ^ 1;
    kn__valid_and2(e, d, a, NULL);
    return PA_OK;
}

int kn__op_is_null(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a];
    uint8_t *D = d->data = d->slot;
    const uint8_t want_valid = in->sub != 0;   /* IS NOT NULL */
    for (int i = 0; i < e->n; i++)
        D[i] = (uint8_t)(kn__valid(a, i) == want_valid);
    d->nulls = false;
    return PA_OK;
}

int kn__op_select(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *c = &e->regs[in->a], *t = &e->regs[in->b], *f = &e->regs[in->c];
    const uint8_t *C = c->data;
    const int n = e->n;
    const int w = kn__kind_width(kn__kind_of(in->type));
    d->data = d->slot;
    uint8_t take[KN__B];
    for (int i = 0; i < n; i++)
        take[i] = (uint8_t)(C[i] != 0 && kn__valid(c, i));
    switch (w) {
#define SEL(T)                                                                \
    {                                                                         \
        const T *B = t->data, *F = f->data;                                   \
        T *D = d->data;                                                       \
        for (int i = 0; i < n; i++)                                           \
            D[i] = take[i] ? B[i] : F[i];                                     \
    }                                                                         \
    break;
    case 1: SEL(uint8_t)
    case 4: SEL(int32_t)
    case 8: SEL(int64_t)
    case 16: SEL(kn__str)
#undef SEL
    }
    d->nulls = t->nulls || f->nulls;
    if (d->nulls) {
        memset(d->valid, 0, KN__WORDS * 8);
        for (int i = 0; i < n; i++)
            if (kn__valid(take[i] ? t : f, i))
                d->valid[i >> 6] |= (uint64_t)1 << (i & 63);
    }
    return PA_OK;
}

int kn__op_in(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a];
    const kn_value *list = &e->consts[in->imm];
    const int m = in->imm2, n = e->n;
    uint8_t *D = d->data = d->slot;
    memset(D, 0, (size_t)n);
    switch (kn__kind_of(in->atype)) {
#define IN_LOOP(TA, GET, EQ)                                                  \
    {                                                                         \
        const TA *A = a->data;                                                \
        for (int j = 0; j < m; j++) {                                         \
            const TA y = (TA)list[j].v.GET;                                   \
            for (int i = 0; i < n; i++)                                       \
                D[i] |= (uint8_t)(EQ(A[i], y));                               \
        }                                                                     \
    }                                                                         \
    break;
    case KN__BOOL: IN_LOOP(uint8_t, i, I_EQ)
    case KN__I32: IN_LOOP(int32_t, i, I_EQ)
    case KN__I64: IN_LOOP(int64_t, i, I_EQ)
    case KN__I128:
        if (in->atype.id == PA_TYPE_INTERVAL) {
            IN_LOOP(__int128, w, IV_EQ)
        }
        IN_LOOP(__int128, w, I_EQ)
    case KN__F64: IN_LOOP(double, f, F_EQ)
#undef IN_LOOP
    case KN__STR: {
        const kn__str *A = a->data;
        for (int j = 0; j < m; j++) {
            kn__str y = kn__const_str(e, &list[j]);
            for (int i = 0; i < n; i++)
                D[i] |= (uint8_t)(A[i].len == y.len && (y.len == 0 || memcmp(A[i].p, y.p, (size_t)y.len) == 0));
        }
        break;
    }
    }
    kn__valid_and2(e, d, a, NULL);
    if (in->sub) {
        /* The list held a NULL: no match is unknown, not FALSE. */
        if (!d->nulls)
            memset(d->valid, 0xff, KN__WORDS * 8);
        bool any = false;
        for (int i = 0; i < n; i++)
            if (!D[i]) {
                d->valid[i >> 6] &= ~((uint64_t)1 << (i & 63));
                any = true;
            }
        d->nulls = d->nulls || any;
    }
    return PA_OK;
}
