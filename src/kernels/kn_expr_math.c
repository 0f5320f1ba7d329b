/*
 * kn_expr_math.c - MATH over a batch: PostgreSQL's numeric functions
 * (kernels.h, kn_math). The per-value rules are kn_scalar.h's, which the
 * CUDA interpreter calls too; a failing row of a valid input is the
 * statement's error, named as PostgreSQL names it.
 */
#include "kernels/kn_expr_int.h"
#include "kernels/kn_scalar.h"

/* Row i of a DECIMAL, INTEGER or BIGINT register as a scaled integer. */
static __int128 load_exact(kn__kind k, const void *data, int i)
{
    switch (k) {
    case KN__I32: return ((const int32_t *)data)[i];
    case KN__I64: return ((const int64_t *)data)[i];
    default: return ((const __int128 *)data)[i];
    }
}

static void store_exact(kn__kind k, void *data, int i, __int128 v)
{
    switch (k) {
    case KN__I32: ((int32_t *)data)[i] = (int32_t)v; break;
    case KN__I64: ((int64_t *)data)[i] = (int64_t)v; break;
    default: ((__int128 *)data)[i] = v; break;
    }
}

int kn__op_math(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a];
    bool binary = in->sub == KN_MATH_LOG || in->sub == KN_MATH_POWER || in->sub == KN_MATH_AVG;
    const kn__reg *b = binary ? &e->regs[in->b] : NULL;
    const int n = e->n;
    kn__kind ka = kn__kind_of(in->atype), kd = kn__kind_of(in->type);
    d->data = d->slot;
    kn__valid_and2(e, d, a, b);
    for (int i = 0; i < n; i++) {
        if (!kn__valid(d, i))
            continue;
        if (in->sub == KN_MATH_AVG) {   /* as kn_agg_emit.c's AVG */
            __int128 sum = load_exact(ka, a->data, i), c = load_exact(ka, b->data, i);
            long double scale = 1;
            for (int k = 0; k < in->atype.scale; k++)
                scale *= 10;
            ((double *)d->data)[i] = c == 0 ? 0 : (double)((long double)sum / ((long double)(int64_t)c * scale));
        } else if (kd == KN__F64) {
            double r = 0, x = ((const double *)a->data)[i], y = b ? ((const double *)b->data)[i] : 0;
            int why = kn__s_math_f64(in->sub, x, y, in->imm, in->imm2 != 0, &r);
            if (why != KN__MATH_OK)
                return pa_error(e->err, why == KN__MATH_OVERFLOW || why == KN__MATH_UNDERFLOW ? PA_EOVERFLOW : PA_EINVAL,
                                "%s", kn__s_math_text(why));
            ((double *)d->data)[i] = r;
        } else if (in->sub == KN_MATH_SIGN) {
            __int128 v = ka == KN__F64 ? 0 : load_exact(ka, a->data, i);
            store_exact(kd, d->data, i, v > 0 ? 1 : v < 0 ? -1 : 0);
        } else {
            __int128 r = 0;
            if (!kn__s_math_dec(in->sub, load_exact(ka, a->data, i), in->imm, in->imm2, in->type.precision, &r)) {
                char t[48];
                return pa_error(e->err, PA_EOVERFLOW, "numeric field overflow: the result does not fit %s",
                                pa_type_format(in->type, t, sizeof t));
            }
            store_exact(kd, d->data, i, r);
        }
    }
    return PA_OK;
}
