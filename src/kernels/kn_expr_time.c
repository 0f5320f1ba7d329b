/*
 * kn_expr_time.c - the time types in expression programs: EXTRACT and
 * DATE_TRUNC of TIMESTAMP(TZ), TIME and INTERVAL, CAST to, from and among
 * them, and DTARITH (kernels.h's contracts).
 *
 * The per-value rules are kn_scalar.h's kn__s_extract, kn__s_ts_trunc,
 * kn__s_cast_time and kn__s_dtarith (on core/datetime.h), shared with the
 * CUDA kernels; here are the batch loops, and kn__time_insn_check, the
 * one place that says which instruction shapes are defined (kn_program_check
 * and the loops both ask it). The loops read operands through small
 * accessors (a register or a constant, INTERVALs copied out of their
 * 16-byte slots): these are not the engine's hot paths.
 */
#include "kernels/kn_expr_int.h"

/* ------------------------------------------------------------ checking */

int kn__time_insn_check(const kn_insn *in, pa_err *err)
{
    const pa_type_id at = in->atype.id, to = in->type.id;
    switch (in->op) {
    case KN_OP_EXTRACT:
        if (at == PA_TYPE_DATE && to == PA_TYPE_BIGINT && in->sub < KN_FIELD__COUNT)
            return PA_OK;   /* every field (HOUR .. MICROSECONDS are 0) */
        if (!kn__s_extract_ok(in->sub, at, to))
            return pa_error(err, PA_EINVAL, "EXTRACT of field %d from %s as %s is not defined", in->sub,
                            pa_type_name(at), pa_type_name(to));
        return PA_OK;
    case KN_OP_DATE_TRUNC:
        if (in->sub >= KN_FIELD__COUNT)
            return pa_error(err, PA_EINVAL, "EXTRACT of unknown field %d", in->sub);
        if (at == PA_TYPE_DATE && to == PA_TYPE_DATE)
            return PA_OK;
        if (!kn__s_is_ts(at) || to != at || !kn__s_ts_trunc_ok(in->sub))
            return pa_error(err, PA_EINVAL, "DATE_TRUNC of field %d from %s to %s is not defined", in->sub,
                            pa_type_name(at), pa_type_name(to));
        return PA_OK;
    case KN_OP_CAST:
        if ((kn__s_is_time(at) || kn__s_is_time(to)) && !kn__s_cast_time_ok(at, to))
            return pa_error(err, PA_EINVAL, "CAST from %s to %s is not supported", pa_type_name(at),
                            pa_type_name(to));
        return PA_OK;
    case KN_OP_DTARITH:
        if (!kn__s_dtarith_ok(in->sub, at, to) || in->a < 0 ||
            (in->sub != KN_DT_IV_NEG && in->sub != KN_DT_IV_KEY && in->b < 0) ||
            (in->sub == KN_DT_IV_KEY && (in->type.precision != 38 || in->type.scale != 0)))
            return pa_error(err, PA_EINVAL, "DTARITH %d of %s to %s is not defined", in->sub, pa_type_name(at),
                            pa_type_name(to));
        return PA_OK;
    default: return PA_OK;
    }
}

/* ------------------------------------------------------------ operands */

/* Operand k (0 a, 1 b) of in at row i: an int64 (any int32 or int64
 * kind), an INTERVAL or a DOUBLE, from a register or a constant. */
static int64_t ld_i(const kn__eval *e, const kn_insn *in, int k, pa_type t, int i)
{
    int16_t idx = k ? in->b : in->a;
    if ((in->flags >> k) & 1)
        return e->consts[idx].v.i;
    const void *d = e->regs[idx].data;
    return kn__kind_of(t) == KN__I32 ? ((const int32_t *)d)[i] : ((const int64_t *)d)[i];
}

static pa_interval ld_iv(const kn__eval *e, const kn_insn *in, int k, int i)
{
    int16_t idx = k ? in->b : in->a;
    pa_interval v;
    if ((in->flags >> k) & 1)
        memcpy(&v, &e->consts[idx].v.w, sizeof v);
    else
        memcpy(&v, (const char *)e->regs[idx].data + (size_t)i * 16, sizeof v);
    return v;
}

static double ld_f(const kn__eval *e, const kn_insn *in, int k, int i)
{
    int16_t idx = k ? in->b : in->a;
    return (in->flags >> k) & 1 ? e->consts[idx].v.f : ((const double *)e->regs[idx].data)[i];
}

static const kn__reg *opreg(kn__eval *e, const kn_insn *in, int k)
{
    int16_t idx = k ? in->b : in->a;
    return idx < 0 ? NULL : kn__opreg(e, idx, (in->flags >> k) & 1);
}

static bool row_valid(const kn__reg *r, int i) { return !r || kn__valid(r, i); }

static void store_iv(void *D, int i, pa_interval v)
{
    memcpy((char *)D + (size_t)i * 16, &v, sizeof v);
    memset((char *)D + (size_t)i * 16 + sizeof v, 0, 16 - sizeof v);
}

/* ------------------------------------------------- EXTRACT, DATE_TRUNC */

int kn__op_extract_time(kn__eval *e, const kn_insn *in)
{
    int rc = kn__time_insn_check(in, e->err);
    if (rc != PA_OK)
        return rc;
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a];
    void *D = d->data = d->slot;
    const pa_type_id at = in->atype.id;
    const bool dbl = in->type.id == PA_TYPE_DOUBLE;
    const pa_interval zero = {0, 0, 0};
    for (int i = 0; i < e->n; i++) {
        int64_t x = at == PA_TYPE_INTERVAL ? 0 : ((const int64_t *)a->data)[i], r;
        pa_interval iv = at == PA_TYPE_INTERVAL ? ld_iv(e, in, 0, i) : zero;
        double f;
        kn__s_extract(in->sub, at, x, iv, &r, &f);
        if (dbl)
            ((double *)D)[i] = f;
        else
            ((int64_t *)D)[i] = r;
    }
    kn__valid_and2(e, d, a, NULL);
    return PA_OK;
}

int kn__op_date_trunc_time(kn__eval *e, const kn_insn *in)
{
    int rc = kn__time_insn_check(in, e->err);
    if (rc != PA_OK)
        return rc;
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a];
    const int64_t *A = a->data;
    int64_t *D = d->data = d->slot;
    for (int i = 0; i < e->n; i++)
        if (!kn__s_ts_trunc(in->sub, A[i], &D[i]) && kn__valid(a, i))
            return pa_error(e->err, PA_EOVERFLOW, "timestamp out of range");
    kn__valid_and2(e, d, a, NULL);
    return PA_OK;
}

/* ---------------------------------------------------------------- CAST */

/* Text of a time value at raw memory v (kn__format's part). */
int kn__format_time(pa_type t, const void *v, char *buf, int cap)
{
    int64_t x = 0;
    pa_interval iv = {0, 0, 0};
    if (t.id == PA_TYPE_INTERVAL)
        memcpy(&iv, v, sizeof iv);
    else
        memcpy(&x, v, 8);
    return pa_dt_format_value(t.id, x, iv, buf, cap);
}

static int cast_fail(kn__eval *e, const kn_insn *in, const void *v, int why)
{
    char a[PA_DT_TEXT_MAX + 8], tb[32];
    if (why == KN__CT_SYNTAX) {
        const kn__str *s = v;
        int len = s->len > 200 ? 200 : (int)s->len;
        return pa_error(e->err, PA_EINVAL, "invalid input syntax for type %s: \"%.*s\"",
                        kn__s_pg_type_name(in->type.id), len, s->p);
    }
    kn__format(in->atype, v, a, sizeof a);
    return pa_error(e->err, PA_EOVERFLOW, "value %s of type %s out of range for %s", a, pa_type_name(in->atype.id),
                    pa_type_format(in->type, tb, sizeof tb));
}

int kn__cast_time(kn__eval *e, const kn_insn *in)
{
    int rc = kn__time_insn_check(in, e->err);
    if (rc != PA_OK)
        return rc;
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a];
    const pa_type_id from = in->atype.id, to = in->type.id;
    void *D = d->data;
    const int wa = kn__kind_width(kn__kind_of(in->atype));
    if (to == PA_TYPE_VARCHAR) {
        kn__str *S = D;
        if (!d->text)
            return pa_error(e->err, PA_EINVAL, "CAST to VARCHAR into a register without text area");
        for (int i = 0; i < e->n; i++) {
            char *t = d->text + (size_t)i * KN_EVAL_STR_ROW_BYTES;
            int len = kn__format_time(in->atype, (const char *)a->data + (size_t)i * wa, t, KN_EVAL_STR_ROW_BYTES);
            S[i].p = t;
            S[i].len = len;
        }
        return PA_OK;
    }
    const kn__kind kd = kn__kind_of(in->type);
    const kn__str none = {NULL, 0};
    const pa_interval zero = {0, 0, 0};
    for (int i = 0; i < e->n; i++) {
        const void *src = (const char *)a->data + (size_t)i * wa;
        kn__str s = from == PA_TYPE_VARCHAR ? *(const kn__str *)src : none;
        pa_interval iv = from == PA_TYPE_INTERVAL ? ld_iv(e, in, 0, i) : zero, rv = zero;
        int64_t x = from == PA_TYPE_VARCHAR || from == PA_TYPE_INTERVAL ? 0 : ld_i(e, in, 0, in->atype, i), r;
        int why = kn__valid(a, i) ? kn__s_cast_time(from, to, x, iv, s, &r, &rv) : (r = 0, KN__CT_OK);
        if (why != KN__CT_OK)
            return cast_fail(e, in, src, why);
        if (kd == KN__I128)
            store_iv(D, i, rv);
        else if (kd == KN__I32)
            ((int32_t *)D)[i] = (int32_t)r;   /* DATE: |days| of an int64 instant < 2^27 */
        else
            ((int64_t *)D)[i] = r;
    }
    return PA_OK;
}

/* ------------------------------------------------------------- DTARITH */

int kn__op_dtarith(kn__eval *e, const kn_insn *in)
{
    int rc = kn__time_insn_check(in, e->err);
    if (rc != PA_OK)
        return rc;
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = opreg(e, in, 0), *b = opreg(e, in, 1);
    void *D = d->data = d->slot;
    const pa_type_id at = in->atype.id;
    const int sub = in->sub;
    /* What b is: a timestamp of a's type, a DOUBLE factor or an INTERVAL. */
    const bool b_ts = sub == KN_DT_TS_SUB_TS || sub == KN_DT_AGE;
    const bool b_f = sub == KN_DT_IV_MUL || sub == KN_DT_IV_DIV;
    const bool b_none = sub == KN_DT_IV_NEG || sub == KN_DT_IV_KEY;
    const bool out_iv = in->type.id == PA_TYPE_INTERVAL || sub == KN_DT_IV_KEY;   /* 16 bytes */
    const pa_interval zero = {0, 0, 0};
    for (int i = 0; i < e->n; i++) {
        int64_t x = at == PA_TYPE_INTERVAL ? 0 : ld_i(e, in, 0, in->atype, i), y = 0, r = 0;
        pa_interval ai = at == PA_TYPE_INTERVAL ? ld_iv(e, in, 0, i) : zero, bi = zero, rv = zero;
        double bf = 0;
        if (b_ts)
            y = ld_i(e, in, 1, in->atype, i);
        else if (b_f)
            bf = ld_f(e, in, 1, i);
        else if (!b_none)
            bi = ld_iv(e, in, 1, i);
        int why = kn__s_dtarith(sub, at, x, ai, y, bi, bf, &r, &rv);
        if (why != KN__DT_OK && row_valid(a, i) && (b_none || row_valid(b, i)))
            return pa_error(e->err, why == KN__DT_DIV_ZERO ? PA_EINVAL : PA_EOVERFLOW, "%s",
                            kn__s_dtarith_text(why));
        if (out_iv)
            store_iv(D, i, rv);
        else
            ((int64_t *)D)[i] = r;
    }
    kn__valid_and2(e, d, a, b_none ? NULL : b);
    return PA_OK;
}
