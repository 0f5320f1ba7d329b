/*
 * kn_expr_date.c - EXTRACT of every DATE field, DATE_TRUNC, MAKE_DATE and
 * DATE + months (the time types' EXTRACT and DATE_TRUNC: kn_expr_time.c).
 *
 * Dates are int32 days since 1970-01-01 in the proleptic Gregorian calendar.
 * The per-value conversions are kn__s_civil, kn__s_date_field,
 * kn__s_date_trunc, kn__s_make_date and kn__s_add_months
 * (kn_scalar.h, shared with the CUDA kernels): branch-light era/day-of-era
 * formulas, inlined into loops the compiler can vectorise. Adding months
 * keeps the day of month, clamped to the last day of the target month (SQL:
 * Jan 31 + 1 month = Feb 28/29).
 */
#include "kernels/kn_expr_int.h"

int kn__op_extract(kn__eval *e, const kn_insn *in)
{
    if (in->atype.id != PA_TYPE_DATE)
        return kn__op_extract_time(e, in);
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a];
    const int32_t *A = a->data;
    int64_t *D = d->data = d->slot;
    if (in->sub >= KN_FIELD__COUNT)
        return pa_error(e->err, PA_EINVAL, "EXTRACT of unknown field %d", in->sub);
    if (in->sub == KN_FIELD_YEAR) {   /* the common one, without the switch */
        for (int i = 0; i < e->n; i++) {
            int64_t y, m, dd;
            kn__s_civil(A[i], &y, &m, &dd);
            D[i] = y;
        }
    } else {
        for (int i = 0; i < e->n; i++)
            D[i] = kn__s_date_field(in->sub, A[i]);
    }
    kn__valid_and2(e, d, a, NULL);
    return PA_OK;
}

int kn__op_add_months(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a];
    const int32_t *A = a->data;
    int32_t *D = d->data = d->slot;
    const int64_t months = in->imm;
    bool bad = false;
    for (int i = 0; i < e->n; i++)
        bad |= !kn__s_add_months(A[i], months, &D[i]) && kn__valid(a, i);
    kn__valid_and2(e, d, a, NULL);
    if (bad)
        return pa_error(e->err, PA_EOVERFLOW, "date out of range adding %lld months", (long long)months);
    return PA_OK;
}

int kn__op_date_trunc(kn__eval *e, const kn_insn *in)
{
    if (in->atype.id != PA_TYPE_DATE)
        return kn__op_date_trunc_time(e, in);
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a];
    const int32_t *A = a->data;
    int32_t *D = d->data = d->slot;
    for (int i = 0; i < e->n; i++)
        D[i] = (int32_t)kn__s_date_trunc(in->sub, A[i]);   /* never before the day itself, nor past int32 */
    kn__valid_and2(e, d, a, NULL);
    return PA_OK;
}

int kn__op_make_date(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a], *b = &e->regs[in->b], *c = &e->regs[in->c];
    const int64_t *Y = a->data, *M = b->data, *DD = c->data;
    int32_t *D = d->data = d->slot;
    kn__valid_and3(e, d, a, b, c);
    for (int i = 0; i < e->n; i++) {
        if (!kn__valid(d, i)) {
            D[i] = 0;
            continue;
        }
        if (!kn__s_make_date(Y[i], M[i], DD[i], &D[i]))
            return pa_error(e->err, PA_EINVAL, "date field value out of range: %lld-%02lld-%02lld", (long long)Y[i],
                            (long long)M[i], (long long)DD[i]);
    }
    return PA_OK;
}
