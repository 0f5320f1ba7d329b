/*
 * kn_expr_date.c - EXTRACT(YEAR|MONTH|DAY) and DATE + months.
 *
 * Dates are int32 days since 1970-01-01 in the proleptic Gregorian calendar.
 * The conversions are the branch-light era/day-of-era formulas (400-year
 * eras of 146097 days, years starting in March so the leap day is last),
 * written here as loops the compiler can vectorise. Adding months keeps the
 * day of month, clamped to the last day of the target month (SQL: Jan 31 +
 * 1 month = Feb 28/29).
 */
#include "kernels/kn_expr_int.h"

static inline void civil(int64_t days, int64_t *y, int64_t *m, int64_t *d)
{
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

static inline int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static inline int64_t month_days(int64_t y, int64_t m)
{
    static const int8_t md[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : md[m - 1];
}

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
            civil(A[i], &y, &m, &dd);
            D[i] = y;
        }
        break;
    case KN_FIELD_MONTH:
        for (int i = 0; i < e->n; i++) {
            civil(A[i], &y, &m, &dd);
            D[i] = m;
        }
        break;
    case KN_FIELD_DAY:
        for (int i = 0; i < e->n; i++) {
            civil(A[i], &y, &m, &dd);
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
    for (int i = 0; i < e->n; i++) {
        int64_t y, m, dd;
        civil(A[i], &y, &m, &dd);
        int64_t t = y * 12 + (m - 1) + months;
        int64_t ny = t >= 0 ? t / 12 : -((-t + 11) / 12);
        int64_t nm = t - ny * 12 + 1;
        int64_t md = month_days(ny, nm);
        int64_t r = days_from_civil(ny, nm, dd < md ? dd : md);
        bad |= r != (int32_t)r && kn__valid(a, i);
        D[i] = (int32_t)r;
    }
    kn__valid_and2(e, d, a, NULL);
    if (bad)
        return pa_error(e->err, PA_EOVERFLOW, "date out of range adding %lld months", (long long)months);
    return PA_OK;
}
