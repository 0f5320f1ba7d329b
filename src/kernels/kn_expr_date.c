/*
 * kn_expr_date.c - EXTRACT(YEAR|MONTH|DAY) and DATE + months.
 *
 * Dates are int32 days since 1970-01-01 in the proleptic Gregorian calendar.
 * The per-value conversions are kn__s_civil and kn__s_add_months
 * (kn_scalar.h, shared with the CUDA kernels): branch-light era/day-of-era
 * formulas, inlined into loops the compiler can vectorise. Adding months
 * keeps the day of month, clamped to the last day of the target month (SQL:
 * Jan 31 + 1 month = Feb 28/29).
 */
#include "kernels/kn_expr_int.h"

int kn__op_extract(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a];
    const int32_t *A = a->data;
    int64_t *D = d->data = d->slot;
    int64_t y, m, dd;
    switch ((kn_date_field)in->sub) {
    case KN_FIELD_YEAR:
        for (int i = 0; i < e->n; i++) {
            kn__s_civil(A[i], &y, &m, &dd);
            D[i] = y;
        }
        break;
    case KN_FIELD_MONTH:
        for (int i = 0; i < e->n; i++) {
            kn__s_civil(A[i], &y, &m, &dd);
            D[i] = m;
        }
        break;
    case KN_FIELD_DAY:
        for (int i = 0; i < e->n; i++) {
            kn__s_civil(A[i], &y, &m, &dd);
            D[i] = dd;
        }
        break;
    default:
        return pa_error(e->err, PA_EINVAL, "EXTRACT of unknown field %d", in->sub);
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
