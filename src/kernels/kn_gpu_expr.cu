/*
 * kn_gpu_expr.cu - expression programs as CUDA kernels: kn_eval, kn_filter
 * and kn_eval_str_bytes. See kn_gpu.h for how entries, scans and faults
 * work, and kernels.h for the program format.
 *
 * Design notes
 * - One GPU thread interprets the whole program for a row: the registers
 *   are the thread's own (gval, 16 bytes each, and a valid flag), so no
 *   temporary column is written to device memory and nothing is done per
 *   row on the host. The instructions are read by every thread of a warp
 *   in step (one cached load serves them all). The register file is sized
 *   by a template on the program's register count (16, 64 or
 *   KN_EVAL_MAX_REGS), so small programs keep small frames.
 * - The per-value rules (overflow, rounding, UTF-8 SUBSTRING, LIKE, dates,
 *   text parsing and formatting) are the functions of kn_scalar.h, which
 *   the cpu loops call too: one definition of the semantics.
 * - kn_eval: pass A gives each thread 8 consecutive rows (one validity
 *   byte of every output, so no two threads write one byte) and writes the
 *   fixed-width outputs, the validity and, for VARCHAR outputs, each row's
 *   length into offsets[row + 1]; a device-wide scan per VARCHAR output
 *   turns the lengths into offsets in place (from offsets[0]); pass B
 *   evaluates again and copies each row's bytes. Evaluating twice is
 *   cheaper than keeping every row's views in memory.
 * - kn_filter is one scan whose functor evaluates the predicate: the
 *   selection comes out ascending, the count goes to the pinned *count.
 * - Errors that depend on the data (an overflow, text that is not a
 *   number, a date out of range) are data faults of the stream. The first
 *   faulting thread of the call (an atomicCAS on a device word) writes the
 *   message with the values, as the cpu loops word it, into the stream's
 *   fault block; other faulting threads just skip their rows. A row whose
 *   operands are NULL never faults. Which faulting row is reported is the
 *   first to get there, not necessarily the first in order.
 * - DOUBLE to and from text is kn_scalar_f64.h's exact big-integer
 *   conversion (the cpu's snprintf / strtod results, bit for bit).
 * - Not on the device: programs with more than TEXT_CASTS casts to VARCHAR
 *   (each row's text lives in the thread). The entry refuses them with
 *   PA_EUNSUPPORTED; nothing runs elsewhere instead.
 */
#include <math.h>

#include "kernels/kn_gpu.h"
#include "kernels/kn_regex.h"
#include "kernels/kn_scalar.h"
#include "kernels/kn_scalar_f64.h"
#include "kernels/kn_text.h"
#include "kernels/kn_gpu_ext.h"

using namespace kn_gpu;

namespace {

constexpr int TEXT_CASTS = 4;   /* CASTs to VARCHAR of one program on the device */
constexpr int TEXT_BYTES = TEXT_CASTS * KN_EVAL_STR_ROW_BYTES;

/* A register's value for one row. BOOLEAN, INTEGER and DATE are held in i
 * (INTEGER and DATE sign-extended), DECIMAL(19..38) in w, VARCHAR as a view. */
union gval {
    int64_t i;
    double f;
    __int128 w;
    kn__str s;
};

/* What every kernel of a call reads: device copies of the program, the
 * input and output descriptors, and where faults go. */
struct prog_v {
    const kn_program *p;
    const pa_column *in;
    const pa_column *out;
    int64_t rows;
    int *claim;       /* device word: 0 until a thread claims the fault message */
    int64_t *fault;   /* the stream's fault block */
    char *area;       /* the call's text area (TEXT instructions), area_bytes long */
    int64_t area_bytes;
};

/* ---------------------------------------------------------- faults */

/* A time value's text (CAST to VARCHAR and fault messages share one copy
 * of the formatters). */
__device__ __noinline__ int format_time(pa_type_id t, const gval &v, char *buf, int cap)
{
    return pa_dt_format_value(t, v.i, kn__s_iv_of(v.w), buf, cap);
}

/* Text written into the stream's fault block: kn_gpu.h's, with the
 * values of the expression's types. */
struct msg : fault_text {
    __device__ void putn(const char *s, int64_t len)
    {
        for (int64_t k = 0; k < len && n < DV_FAULT_TEXT_BYTES - 1; k++)
            p[n++] = s[k];
        p[n] = 0;
    }
    __device__ __noinline__ void type(pa_type t)
    {
        char b[40];
        kn__s_format_type(t, b, sizeof b);
        put(b);
    }
    /* A value as the cpu's kn__format writes it. */
    __device__ __noinline__ void value(pa_type t, const gval &v)
    {
        char b[KN_EVAL_STR_ROW_BYTES];
        switch (t.id) {
        case PA_TYPE_BOOLEAN: kn__s_format_bool((uint8_t)v.i, b, sizeof b); break;
        case PA_TYPE_INTEGER:
        case PA_TYPE_BIGINT: kn__s_format_i64(v.i, b, sizeof b); break;
        case PA_TYPE_DATE: kn__s_format_date((int32_t)v.i, b, sizeof b); break;
        case PA_TYPE_DECIMAL:
            if (t.precision > PA_DECIMAL64_MAX_PRECISION)
                kn__s_format_decimal128(v.w, t.scale, b, sizeof b);
            else
                kn__s_format_decimal64(v.i, t.scale, b, sizeof b);
            break;
        case PA_TYPE_DOUBLE: kn__s_format_double(v.f, b, sizeof b); break;
        case PA_TYPE_REAL: kn__s_format_real(v.f, b, sizeof b); break;
        case PA_TYPE_VARCHAR: putn(v.s.p, v.s.len); return;
        case PA_TYPE_BYTEA:
        case PA_TYPE_UUID:
            kn__s_format_bytes(t.id == PA_TYPE_UUID, (const uint8_t *)v.s.p, v.s.len, b, sizeof b);
            break;
        case PA_TYPE_TIMESTAMP:
        case PA_TYPE_TIMESTAMPTZ:
        case PA_TYPE_TIME:
        case PA_TYPE_TIMESTAMP_NS:
        case PA_TYPE_INTERVAL: format_time(t.id, v, b, sizeof b); break;
        default: b[0] = '?', b[1] = 0; break;
        }
        put(b);
    }
};

/* Whether this thread writes the call's fault message: none yet on the
 * stream, and it won the call's claim. */
__device__ inline bool claim_fault(const prog_v &P)
{
    if (*(volatile int64_t *)P.fault != 0)
        return false;
    return atomicCAS(P.claim, 0, 1) == 0;
}

/* Publish the message begun in the fault block with the status. */
__device__ inline void raise_fault(const prog_v &P, int status)
{
    char *text = (char *)P.fault + DV_FAULT_TEXT_AT;
    *(volatile uint64_t *)&P.fault[1] = (uint64_t)(uintptr_t)text;
    __threadfence_system();
    *(volatile int64_t *)&P.fault[0] = status;
}

__device__ inline msg begin_fault(const prog_v &P)
{
    msg m;
    m.p = (char *)P.fault + DV_FAULT_TEXT_AT;
    m.n = 0;
    m.p[0] = 0;
    return m;
}

/* ------------------------------------------------------------ values */

/* A constant's value as a register holds it. */
__device__ inline gval const_value(const kn_program *p, const kn_value *c)
{
    gval v;
    v.w = 0;
    switch (kn__kind_of(c->type)) {
    case KN__F64: v.f = c->v.f; break;
    case KN__I128: v.w = c->v.w; break;
    case KN__STR: v.s.p = kn_program_pool(p) + c->str_off, v.s.len = c->str_len; break;
    case KN__I32: v.i = (int32_t)c->v.i; break;
    case KN__BOOL: v.i = (uint8_t)c->v.i; break;
    default: v.i = c->v.i; break;
    }
    return v;
}

/* Operand k (0 a, 1 b, 2 c) of an instruction: a register or a constant. */
struct regs {
    gval *r;
    bool *ok;
};

__device__ inline void operand(const kn_program *p, const kn_insn *in, int k, const regs &R, gval *v, bool *valid)
{
    int16_t idx = k == 0 ? in->a : k == 1 ? in->b : in->c;
    if (!((in->flags >> k) & 1)) {
        *v = R.r[idx];
        *valid = R.ok[idx];
        return;
    }
    const kn_value *c = &kn_program_consts(p)[idx];
    *valid = !c->is_null;
    *v = const_value(p, c);
}

/* An exact value (BOOLEAN, INTEGER, BIGINT, DECIMAL) as a 128-bit integer. */
__device__ inline __int128 exact(kn__kind k, const gval &v) { return k == KN__I128 ? v.w : (__int128)v.i; }

__device__ inline void store_exact(kn__kind k, gval *d, __int128 v)
{
    switch (k) {
    case KN__BOOL: d->i = v != 0; break;
    case KN__I32: d->i = (int32_t)v; break;
    case KN__I128: d->w = v; break;
    default: d->i = (int64_t)v; break;
    }
}

/* DuckDB's total order of DOUBLE: NaN equals NaN and is above every number. */
__device__ inline bool f_eq(double x, double y) { return x == y || (x != x && y != y); }
__device__ inline bool f_lt(double x, double y) { return x < y || (x == x && y != y); }

__device__ inline bool str_eq(kn__str x, kn__str y)
{
    if (x.len != y.len)
        return false;
    for (int64_t k = 0; k < x.len; k++)
        if (x.p[k] != y.p[k])
            return false;
    return true;
}

__device__ inline int str_cmp(kn__str x, kn__str y)
{
    int64_t m = x.len < y.len ? x.len : y.len;
    for (int64_t k = 0; k < m; k++) {
        unsigned a = (unsigned char)x.p[k], b = (unsigned char)y.p[k];
        if (a != b)
            return a < b ? -1 : 1;
    }
    return x.len < y.len ? -1 : x.len > y.len;
}

/* An INTERVAL register's normalised length, by which it compares. */
__device__ inline __int128 iv_norm(const gval &v) { return pa_interval_norm(kn__s_iv_of(v.w)); }

/* -1, 0, 1: a against b in the instruction's kind. */
__device__ inline int compare(kn__kind k, const gval &a, const gval &b)
{
    switch (k) {
    case KN__F64: return f_lt(a.f, b.f) ? -1 : f_lt(b.f, a.f) ? 1 : 0;
    case KN__I128: return a.w < b.w ? -1 : a.w > b.w;
    case KN__STR: return str_cmp(a.s, b.s);
    case KN__BOOL: return (uint8_t)a.i < (uint8_t)b.i ? -1 : (uint8_t)a.i > (uint8_t)b.i;
    default: return a.i < b.i ? -1 : a.i > b.i;
    }
}

__device__ inline bool equal(kn__kind k, const gval &a, const gval &b)
{
    switch (k) {
    case KN__F64: return f_eq(a.f, b.f);
    case KN__I128: return a.w == b.w;
    case KN__STR: return str_eq(a.s, b.s);
    case KN__BOOL: return (uint8_t)a.i == (uint8_t)b.i;
    case KN__I32: return (int32_t)a.i == (int32_t)b.i;
    default: return a.i == b.i;
    }
}

__device__ inline bool cmp_result(int sub, int c)
{
    switch (sub) {
    case KN_CMP_EQ: return c == 0;
    case KN_CMP_NE: return c != 0;
    case KN_CMP_LT: return c < 0;
    case KN_CMP_LE: return c <= 0;
    case KN_CMP_GT: return c > 0;
    default: return c >= 0;
    }
}

/* --------------------------------------------------------- operations */

/* ADD, SUB, MUL: false on overflow of the kind or of a capped DECIMAL's
 * precision (imm). */
__device__ inline bool arith(const kn_insn *in, kn__kind k, const gval &x, const gval &y, gval *d)
{
    bool o = false;
    __int128 r = 0;
    switch (k) {
    case KN__F64:
        d->f = in->op == KN_OP_ADD ? x.f + y.f : in->op == KN_OP_SUB ? x.f - y.f : x.f * y.f;
        return true;
    case KN__I32:
    case KN__BOOL:
        r = in->op == KN_OP_ADD ? (__int128)x.i + y.i : in->op == KN_OP_SUB ? (__int128)x.i - y.i
                                                                         : (__int128)x.i * y.i;
        o = r != (int32_t)r;
        d->i = (int32_t)r;
        break;
    case KN__I64: {
        int64_t v = 0;
        o = in->op == KN_OP_ADD ? kn__s_add_i64(x.i, y.i, &v)
          : in->op == KN_OP_SUB ? kn__s_sub_i64(x.i, y.i, &v)
                                : kn__s_mul_i64(x.i, y.i, &v);
        d->i = v;
        r = v;
        break;
    }
    default:
        o = in->op == KN_OP_ADD ? kn__s_add_i128(x.w, y.w, &r)
          : in->op == KN_OP_SUB ? kn__s_sub_i128(x.w, y.w, &r)
                                : kn__s_mul_i128(x.w, y.w, &r);
        d->w = r;
        break;
    }
    if (!o && in->imm && in->type.id == PA_TYPE_DECIMAL) {
        __int128 lim = kn__s_pow10_i128(in->type.precision);
        o = r >= lim || r <= -lim;
    }
    return !o;
}

__device__ __noinline__ void arith_fault(const prog_v &P, const kn_insn *in, const gval &x, const gval &y)
{
    if (!claim_fault(P))
        return;
    msg m = begin_fault(P);
    pa_type tb = in->atype;
    if (in->op == KN_OP_MUL && tb.id == PA_TYPE_DECIMAL)
        tb.scale = in->sub;
    m.put("overflow in ");
    m.type(in->type);
    m.put(in->op == KN_OP_ADD ? " addition: " : in->op == KN_OP_SUB ? " subtraction: " : " multiplication: ");
    m.value(in->atype, x);
    m.put(in->op == KN_OP_ADD ? " + " : in->op == KN_OP_SUB ? " - " : " * ");
    m.value(tb, y);
    raise_fault(P, PA_EOVERFLOW);
}

/* a % b with the sign of a (fmod for DOUBLE; x % -1 is 0); false when b
 * is 0. */
__device__ inline bool mod(kn__kind k, const gval &x, const gval &y, gval *d)
{
    switch (k) {
    case KN__F64:
        d->f = fmod(x.f, y.f);
        return y.f != 0;
    case KN__I128:
        d->w = y.w == 0 || y.w == -1 ? 0 : x.w % y.w;
        return y.w != 0;
    default:   /* I32 values are held as int64 */
        d->i = y.i == 0 || y.i == -1 ? 0 : x.i % y.i;
        return y.i != 0;
    }
}

/* a / b: DOUBLE, or an integer truncated toward zero (I32 values are held
 * as int64); false when b is 0 or the integer quotient overflows. */
__device__ inline bool div(kn__kind k, const gval &x, const gval &y, gval *d)
{
    if (k == KN__F64) {
        d->f = x.f / y.f;
        return y.f != 0;
    }
    const int64_t lo = k == KN__I32 ? INT32_MIN : INT64_MIN;
    if (y.i == 0 || (y.i == -1 && x.i == lo)) {
        d->i = 0;
        return false;
    }
    d->i = x.i / y.i;
    return true;
}

__device__ __noinline__ void div_fault(const prog_v &P, const kn_insn *in, kn__kind k, const gval &x, const gval &y)
{
    if (!claim_fault(P))
        return;
    msg m = begin_fault(P);
    bool zero = k == KN__F64 ? y.f == 0 : y.i == 0;
    m.put(zero ? "division by zero in " : "overflow in ");
    m.type(in->type);
    m.put(" division: ");
    m.value(in->atype, x);
    m.put(zero ? " / 0" : " / -1");
    raise_fault(P, zero ? PA_EINVAL : PA_EOVERFLOW);
}

/* MATH of one row (kn_expr_math.c's loop); false, with the fault raised,
 * when it fails. */
__device__ __noinline__ bool math_row(const prog_v &P, const kn_insn *in, const gval &a, const gval &b, gval *d)
{
    const kn__kind ka = kn__kind_of(in->atype), kd = kn__kind_of(in->type);
    if (in->sub == KN_MATH_AVG) {   /* DECIMAL(38) sum and count: as the aggregation's emit */
        d->f = b.w == 0 ? 0 : avg_ext(a.w, (int64_t)b.w, in->atype.scale);
        return true;
    }
    if (kd == KN__F64) {
        double r = 0;
        int why = kn__s_math_f64(in->sub, a.f, b.f, in->imm, in->imm2 != 0, &r);
        if (why != KN__MATH_OK) {
            if (claim_fault(P)) {
                msg m = begin_fault(P);
                m.put(kn__s_math_text(why));
                raise_fault(P, why == KN__MATH_OVERFLOW || why == KN__MATH_UNDERFLOW ? PA_EOVERFLOW : PA_EINVAL);
            }
            return false;
        }
        d->f = r;
        return true;
    }
    __int128 v = ka == KN__I128 ? a.w : (__int128)a.i;
    if (in->sub == KN_MATH_SIGN) {
        d->w = 0;
        d->i = v > 0 ? 1 : v < 0 ? -1 : 0;
        return true;
    }
    __int128 r = 0;
    if (!kn__s_math_dec(in->sub, v, in->imm, in->imm2, in->type.precision, &r)) {
        if (claim_fault(P)) {
            msg m = begin_fault(P);
            m.put("numeric field overflow: the result does not fit ");
            m.type(in->type);
            raise_fault(P, PA_EOVERFLOW);
        }
        return false;
    }
    if (kd == KN__I128)
        d->w = r;
    else
        d->w = 0, d->i = (int64_t)r;
    return true;
}

__device__ __noinline__ void mod_fault(const prog_v &P, const kn_insn *in, const gval &x)
{
    if (!claim_fault(P))
        return;
    msg m = begin_fault(P);
    m.put("division by zero in ");
    m.type(in->type);
    m.put(" modulo: ");
    m.value(in->atype, x);
    m.put(" % 0");
    raise_fault(P, PA_EINVAL);
}

/* Casts. False on a fault (raised here). */
__device__ __noinline__ bool cast_fault(const prog_v &P, const kn_insn *in, const gval &v, int status)
{
    if (!claim_fault(P))
        return false;
    msg m = begin_fault(P);
    if (status == PA_EINVAL) {
        m.put("could not convert '");
        m.value(in->atype, v);
        m.put("' to ");
        m.type(in->type);
    } else {
        m.put("value ");
        m.value(in->atype, v);
        m.put(" of type ");
        m.type(in->atype);
        m.put(" out of range for ");
        m.type(in->type);
    }
    raise_fault(P, status);
    return false;
}

/* A DTARITH, DATE_TRUNC or time CAST fault: kn_expr_time.c's messages. */
__device__ __noinline__ void time_fault(const prog_v &P, int why)
{
    if (!claim_fault(P))
        return;
    msg m = begin_fault(P);
    m.put(kn__s_dtarith_text(why));
    raise_fault(P, why == KN__DT_DIV_ZERO ? PA_EINVAL : PA_EOVERFLOW);
}

/* CAST where a time type takes part (kn_program_check let only defined
 * ones through): to text into this instruction's text slot, else
 * kn__s_cast_time. */
__device__ __noinline__ bool cast_time(const prog_v &P, const kn_insn *in, const gval &a, bool valid, gval *d,
                                       char *text)
{
    const pa_type_id from = in->atype.id, to = in->type.id;
    const pa_interval iv = kn__s_iv_of(a.w);
    if (pa_type_is_varlen(to)) {
        d->s.p = text;
        d->s.len = format_time(from, a, text, KN_EVAL_STR_ROW_BYTES);
        return true;
    }
    int64_t r = 0;
    pa_interval rv = {0, 0, 0};
    d->w = 0;
    if (!valid)
        return true;
    int why = kn__s_cast_time(from, to, pa_type_is_varlen(from) ? 0 : a.i, iv, a.s, &r, &rv);
    if (why == KN__CT_SYNTAX) {
        if (claim_fault(P)) {
            msg m = begin_fault(P);
            m.put("invalid input syntax for type ");
            m.put(kn__s_pg_type_name(to));
            m.put(": \"");
            m.putn(a.s.p, a.s.len > 200 ? 200 : a.s.len);
            m.put("\"");
            raise_fault(P, PA_EINVAL);
        }
        return false;
    }
    if (why == KN__CT_RANGE)
        return cast_fault(P, in, a, PA_EOVERFLOW);
    if (to == PA_TYPE_INTERVAL)
        d->w = kn__s_iv_bits(rv);
    else
        d->i = r;   /* DATE days sign-extended, as registers hold them */
    return true;
}

/* EXTRACT of one row (kn__s_extract; a call of its own, as the other time
 * paths, so eval_row stays small). */
__device__ __noinline__ void extract_row(const kn_insn *in, const gval &a, gval *d)
{
    int64_t x = 0;
    double f = 0;
    kn__s_extract(in->sub, in->atype.id, a.i, kn__s_iv_of(a.w), &x, &f);
    d->w = 0;
    if (in->type.id == PA_TYPE_DOUBLE)
        d->f = f;
    else
        d->i = x;
}

/* DATE_TRUNC of a TIMESTAMP(TZ) row; false, with the fault raised, when a
 * valid row's start is out of range. */
__device__ __noinline__ bool ts_trunc_row(const prog_v &P, const kn_insn *in, const gval &a, bool valid, gval *d)
{
    if (kn__s_ts_trunc(in->sub, a.i, &d->i) || !valid)
        return true;
    time_fault(P, KN__DT_TS_RANGE);
    return false;
}

/* DTARITH of one row (kn__s_dtarith); false, with the fault raised, when a
 * valid row fails. */
__device__ __noinline__ bool dtarith(const prog_v &P, const kn_insn *in, const gval &a, const gval &b, bool valid,
                                     gval *d)
{
    int64_t r = 0;
    pa_interval rv = {0, 0, 0};
    int why = kn__s_dtarith(in->sub, in->atype.id, a.i, kn__s_iv_of(a.w), b.i, kn__s_iv_of(b.w), b.f, &r, &rv);
    if (why != KN__DT_OK && valid) {
        time_fault(P, why);
        return false;
    }
    if (in->type.id == PA_TYPE_INTERVAL || in->sub == KN_DT_IV_KEY)   /* IV_KEY: the key's 16 bytes */
        d->w = kn__s_iv_bits(rv);
    else
        d->w = 0, d->i = r;
    return true;
}

/* 10^k as the cpu's kn__pow10_f64 table holds it (the same literals; a
 * device cannot read a host table). */
__device__ inline double pow10_f64(int k)
{
    double r = 1;
    switch (k) {
#define P(n) case n: r = 1e##n; break;
    P(0) P(1) P(2) P(3) P(4) P(5) P(6) P(7) P(8) P(9) P(10) P(11) P(12) P(13) P(14) P(15) P(16) P(17) P(18)
    P(19) P(20) P(21) P(22) P(23) P(24) P(25) P(26) P(27) P(28) P(29) P(30) P(31) P(32) P(33) P(34) P(35)
    P(36) P(37) P(38)
#undef P
    default: break;
    }
    return r;
}

__device__ inline int scale_of(pa_type t) { return t.id == PA_TYPE_DECIMAL ? t.scale : 0; }

__device__ __noinline__ bool cast(const prog_v &P, const kn_insn *in, const gval &a, bool valid, gval *d, char *text)
{
    const pa_type_id from = in->atype.id, to = in->type.id;
    const kn__kind ka = kn__kind_of(in->atype), kd = kn__kind_of(in->type);
    if (from == to && to != PA_TYPE_DECIMAL) {
        *d = a;
        return true;
    }
    if (kn__s_is_time(from) || kn__s_is_time(to))
        return cast_time(P, in, a, valid, d, text);
    if (pa_type_is_varlen(to)) {   /* into this instruction's text slot */
        char *t = text;
        int len;
        switch (from) {
        case PA_TYPE_BOOLEAN: len = kn__s_format_bool((uint8_t)a.i, t, KN_EVAL_STR_ROW_BYTES); break;
        case PA_TYPE_DATE: len = kn__s_format_date((int32_t)a.i, t, KN_EVAL_STR_ROW_BYTES); break;
        case PA_TYPE_DOUBLE: len = kn__s_format_double(a.f, t, KN_EVAL_STR_ROW_BYTES); break;
        case PA_TYPE_REAL: len = kn__s_format_real(a.f, t, KN_EVAL_STR_ROW_BYTES); break;
        case PA_TYPE_DECIMAL:
            len = ka == KN__I128 ? kn__s_format_decimal128(a.w, in->atype.scale, t, KN_EVAL_STR_ROW_BYTES)
                               : kn__s_format_decimal64(a.i, in->atype.scale, t, KN_EVAL_STR_ROW_BYTES);
            break;
        default: len = kn__s_format_i64(a.i, t, KN_EVAL_STR_ROW_BYTES); break;
        }
        d->s.p = t;
        d->s.len = len < KN_EVAL_STR_ROW_BYTES ? len : KN_EVAL_STR_ROW_BYTES - 1;
        return true;
    }
    __int128 lo, hi;
    kn__s_exact_bounds(in->type, &lo, &hi);
    if (pa_type_is_varlen(from)) {
        d->w = 0;
        if (!valid)
            return true;
        bool ok;
        if (to == PA_TYPE_BOOLEAN) {
            uint8_t b = 0;
            ok = kn__s_parse_bool(a.s, &b);
            d->i = b;
        } else if (to == PA_TYPE_DATE) {
            int32_t x = 0;
            ok = kn__s_parse_date(a.s, &x);
            d->i = x;
        } else if (pa_type_is_float(to)) {
            double x = 0;
            ok = to == PA_TYPE_REAL ? kn__s_parse_real(a.s, &x) : kn__s_parse_double(a.s, &x);
            d->f = x;
        } else {
            __int128 v = 0;
            ok = kn__s_parse_scaled(a.s, scale_of(in->type), &v);
            if (ok && (v < lo || v > hi))
                return cast_fault(P, in, a, PA_EOVERFLOW);
            store_exact(kd, d, v);
        }
        return ok || cast_fault(P, in, a, PA_EINVAL);
    }
    if (pa_type_is_float(to)) {   /* (to REAL: rounded after the instruction) */
        if (pa_type_is_float(from))
            d->f = a.f;
        else if (to == PA_TYPE_REAL && ka == KN__I64 && scale_of(in->atype) == 0)
            d->f = (double)(float)a.i;   /* one rounding, to float */
        else
            d->f = ka == KN__BOOL ? (double)(uint8_t)a.i : (double)exact(ka, a) / pow10_f64(scale_of(in->atype));
        return true;
    }
    if (pa_type_is_float(from)) {
        if (kd == KN__BOOL) {
            d->i = a.f != 0;
            return true;
        }
        const bool is_dec = to == PA_TYPE_DECIMAL;
        const double lim = to == PA_TYPE_INTEGER ? 2147483648.0
                         : to == PA_TYPE_BIGINT ? 9223372036854775808.0
                                                : pow10_f64(in->type.precision);
        double x = is_dec ? round(a.f * pow10_f64(in->type.scale)) : rint(a.f);
        if (!(x < lim && x >= -lim) || (is_dec && x <= -lim)) {
            if (valid)
                return cast_fault(P, in, a, PA_EOVERFLOW);
            x = 0;
        }
        store_exact(kd, d, (__int128)x);
        return true;
    }
    /* Exact to exact: rescale by 10^(s2 - s1) (down: half away from zero). */
    const int shift = scale_of(in->type) - scale_of(in->atype);
    const int abs_shift = shift < 0 ? -shift : shift;
    __int128 v = ka == KN__BOOL ? (__int128)(uint8_t)a.i : exact(ka, a);
    bool bad;
    v = kn__s_rescale(v, shift, kn__s_pow10_i128(abs_shift > 38 ? 38 : abs_shift), &bad);
    if (kd != KN__BOOL)
        bad |= v < lo || v > hi;
    if (bad && valid)
        return cast_fault(P, in, a, PA_EOVERFLOW);
    store_exact(kd, d, v);
    return true;
}

/* a ~ b and regexp_replace(a, b, r) for one row, b a regular-expression
 * program (kn_regex.h). Calls of their own: the VM's state (about 3.5 KiB,
 * kn_regex.h) stays out of eval_row's frame and registers. */
__device__ __noinline__ bool regex_like(kn__str prog, kn__str a) { return kn__re_like((const uint8_t *)prog.p, a); }

__device__ __noinline__ int64_t regex_replace(kn__str prog, kn__str a, kn__str r, char *d)
{
    return kn__re_replace((const uint8_t *)prog.p, a, r, d);
}

/* A TEXT instruction for one row: the result in the row's slot of the
 * register's part of the text area (kernels.h, kn_text_reg). False when
 * the area is too small (a fault: the caller sized it for other inputs). */
__device__ __noinline__ bool text_fn(const prog_v &P, const kn_insn *in, int64_t row, const gval &a, bool va,
                                     const gval &b, bool vb, const gval &c, bool vc, gval *d, bool *dv)
{
    const kn_program *p = P.p;
    const bool ws = in->sub == KN_TEXT_CONCAT_WS;
    *dv = ws ? va || vc : va && vb && vc;
    d->s.p = P.area;
    d->s.len = 0;
    if (!*dv)
        return true;
    if (ws && (!va || !vc)) {   /* the other one, as it is */
        d->s = va ? a.s : c.s;
        return true;
    }
    int64_t start = 0;
    const kn_text_reg *t = kn_program_text(p);
    while (t->reg != in->dst) {
        start += kn__text_area_of(t, P.in, P.rows);
        t++;
    }
    int64_t at = start + kn__text_pos(t, P.in, row);
    if (start + kn__text_pos(t, P.in, row + 1) > P.area_bytes) {
        if (claim_fault(P)) {
            msg m = begin_fault(P);
            m.put("expression evaluation: the text area is too small for these inputs");
            raise_fault(P, PA_EINVAL);
        }
        return false;
    }
    char *slot = P.area ? P.area + at : P.area;   /* no area: every slot is empty (no offset from null) */
    int64_t len = 0;
    switch (in->sub) {
    case KN_TEXT_UPPER: len = kn__s_case(a.s, slot, 0); break;
    case KN_TEXT_LOWER: len = kn__s_case(a.s, slot, 1); break;
    case KN_TEXT_INITCAP: len = kn__s_case(a.s, slot, 2); break;
    case KN_TEXT_CONCAT:
        kn__s_copy(slot, a.s.p, a.s.len);
        kn__s_copy(slot + a.s.len, b.s.p, b.s.len);
        len = a.s.len + b.s.len;
        break;
    case KN_TEXT_CONCAT_WS: {
        int64_t bl = vb ? b.s.len : 0;
        kn__s_copy(slot, a.s.p, a.s.len);
        kn__s_copy(slot + a.s.len, b.s.p, bl);
        kn__s_copy(slot + a.s.len + bl, c.s.p, c.s.len);
        len = a.s.len + bl + c.s.len;
        break;
    }
    case KN_TEXT_REPLACE: len = kn__s_replace(a.s, b.s, c.s, slot); break;
    case KN_TEXT_LPAD:
    case KN_TEXT_RPAD: len = kn__s_pad(a.s, b.i, c.s, in->sub == KN_TEXT_LPAD, slot); break;
    case KN_TEXT_REPEAT:
        for (int64_t k = 0; k < b.i; k++)
            kn__s_copy(slot + k * a.s.len, a.s.p, a.s.len);
        len = b.i > 0 ? b.i * a.s.len : 0;
        break;
    case KN_TEXT_REVERSE: len = kn__s_reverse(a.s, slot); break;
    case KN_TEXT_TRANSLATE: len = kn__s_translate(a.s, b.s, c.s, slot); break;
    case KN_TEXT_MD5: len = kn__s_md5(a.s, slot); break;
    case KN_TEXT_REGEXP_REPLACE: len = regex_replace(b.s, a.s, c.s, slot); break;
    case KN_TEXT_BYTEA_IN:
    case KN_TEXT_BYTEA_OUT:
    case KN_TEXT_UUID_IN:
    case KN_TEXT_UUID_OUT:
        if (!kn__s_bytes_cast(in->sub, a.s, slot, &len)) {
            if (claim_fault(P)) {
                msg m = begin_fault(P);
                if (in->sub == KN_TEXT_UUID_OUT) {
                    m.put("a UUID value of ");
                    char nb[24];
                    kn__s_format_i64(a.s.len, nb, sizeof nb);
                    m.put(nb);
                    m.put(" bytes (16 expected)");
                } else {
                    m.put("invalid input syntax for type ");
                    m.put(kn__s_pg_type_name(in->type.id));
                    m.put(": \"");
                    m.putn(a.s.p, a.s.len > 200 ? 200 : a.s.len);
                    m.put("\"");
                }
                raise_fault(P, in->sub == KN_TEXT_UUID_OUT ? PA_ECORRUPT : PA_EINVAL);
            }
            return false;
        }
        break;
    default: break;
    }
    d->s.p = slot;
    d->s.len = len;
    return true;
}

/* A REAL result rounded to float precision; a finite value past the
 * float range is an error (PostgreSQL's "value out of range: overflow"). */
__device__ __noinline__ bool real_round(const prog_v &P, gval *d)
{
    float f = (float)d->f;
    if (isinf(f) && !isinf(d->f)) {
        if (claim_fault(P)) {
            msg m = begin_fault(P);
            m.put("value out of range for type real: overflow");
            raise_fault(P, PA_EOVERFLOW);
        }
        return false;
    }
    d->f = (double)f;
    return true;
}

/* Evaluate the program for one row into R. False when the row faulted
 * (the fault is raised; the registers are then unspecified). */
__device__ __noinline__ bool eval_row(const prog_v &P, int64_t row, const regs &R, char *text)
{
    const kn_program *p = P.p;
    const kn_insn *ins = kn_program_insns(p);
    int texts = 0;
    for (int k = 0; k < p->n_insns; k++) {
        const kn_insn *in = &ins[k];
        gval *d = &R.r[in->dst];
        bool *dv = &R.ok[in->dst];
        gval a, b, c;
        bool va = true, vb = true, vc = true;
        if (in->a >= 0 && in->op != KN_OP_LOAD && in->op != KN_OP_CONST)
            operand(p, in, 0, R, &a, &va);
        if (in->b >= 0)
            operand(p, in, 1, R, &b, &vb);
        if (in->c >= 0)
            operand(p, in, 2, R, &c, &vc);
        const kn__kind ka = kn__kind_of(in->atype);
        switch ((kn_opcode)in->op) {
        case KN_OP_LOAD: {
            const pa_column *col = &P.in[in->imm];
            *dv = bit(col->validity, row);
            d->w = 0;
            switch (kn__kind_of(col->type)) {
            case KN__BOOL: d->i = ((const uint8_t *)col->data)[row]; break;
            case KN__I32: d->i = ((const int32_t *)col->data)[row]; break;
            case KN__I128: d->w = ((const __int128 *)col->data)[row]; break;
            case KN__F64: d->f = ((const double *)col->data)[row]; break;
            case KN__STR:
                d->s.p = (const char *)col->data + col->offsets[row];
                d->s.len = (int64_t)col->offsets[row + 1] - col->offsets[row];
                break;
            default: d->i = ((const int64_t *)col->data)[row]; break;
            }
            break;
        }
        case KN_OP_CONST: {
            const kn_value *cv = &kn_program_consts(p)[in->a];
            *d = const_value(p, cv);
            *dv = !cv->is_null;
            break;
        }
        case KN_OP_ADD:
        case KN_OP_SUB:
        case KN_OP_MUL:
            *dv = va && vb;
            if (!arith(in, ka, a, b, d) && *dv) {
                arith_fault(P, in, a, b);
                return false;
            }
            break;
        case KN_OP_DIV:
            *dv = va && vb;
            if (!div(ka, a, b, d) && *dv) {
                div_fault(P, in, ka, a, b);
                return false;
            }
            break;
        case KN_OP_MOD:
            *dv = va && vb;
            if (!mod(ka, a, b, d) && *dv) {
                mod_fault(P, in, a);
                return false;
            }
            break;
        case KN_OP_MATH:
            *dv = va && vb;
            if (*dv && !math_row(P, in, a, b, d))
                return false;
            break;
        case KN_OP_NEG:
            *dv = va;
            switch (ka) {
            case KN__F64: d->f = -a.f; break;
            case KN__I128: d->w = -a.w; break;   /* |DECIMAL(38)| < 10^38: never the minimum */
            default: {
                const bool is32 = ka == KN__I32;
                if (va && (is32 ? a.i == INT32_MIN : a.i == INT64_MIN)) {
                    if (claim_fault(P)) {
                        msg m = begin_fault(P);
                        m.put("overflow in ");
                        m.type(in->atype);
                        m.put(is32 ? " negation: -(-2147483648)" : " negation: -(-9223372036854775808)");
                        raise_fault(P, PA_EOVERFLOW);
                    }
                    return false;
                }
                d->i = is32 ? (int32_t)(0u - (uint32_t)a.i) : (int64_t)(0u - (uint64_t)a.i);
            }
            }
            break;
        case KN_OP_CMP:
            if (in->atype.id == PA_TYPE_INTERVAL) {
                __int128 x = iv_norm(a), y = iv_norm(b);
                d->i = cmp_result(in->sub, x < y ? -1 : x > y);
            } else {
                d->i = ka == KN__STR && (in->sub == KN_CMP_EQ || in->sub == KN_CMP_NE)
                           ? str_eq(a.s, b.s) == (in->sub == KN_CMP_EQ)
                           : cmp_result(in->sub, compare(ka, a, b));
            }
            *dv = va && vb;
            break;
        case KN_OP_AND:
        case KN_OP_OR: {
            /* SQL's three-valued logic: AND is FALSE when either side is a
             * valid FALSE, TRUE when both are valid TRUE, else NULL; OR the
             * mirror image. */
            bool x = (uint8_t)a.i != 0, y = (uint8_t)b.i != 0;
            if (in->op == KN_OP_AND) {
                bool f = (va && !x) || (vb && !y);
                *dv = f || (va && vb);
                d->i = !f && *dv;
            } else {
                bool t = (va && x) || (vb && y);
                *dv = t || (va && vb);
                d->i = t;
            }
            break;
        }
        case KN_OP_NOT:
            d->i = (uint8_t)(a.i ^ 1);
            *dv = va;
            break;
        case KN_OP_IS_NULL:
            d->i = va == (in->sub != 0);
            *dv = true;
            break;
        case KN_OP_SELECT: {
            bool take = va && (uint8_t)a.i != 0;
            *d = take ? b : c;
            *dv = take ? vb : vc;
            break;
        }
        case KN_OP_IN: {
            const kn_value *list = &kn_program_consts(p)[in->imm];
            bool hit = false;
            const bool iv = in->atype.id == PA_TYPE_INTERVAL;
            for (int j = 0; j < in->imm2 && !hit; j++) {
                gval y = const_value(p, &list[j]);
                hit = iv ? iv_norm(a) == iv_norm(y) : equal(ka, a, y);
            }
            d->i = hit;
            *dv = va && (hit || !in->sub);   /* a NULL in the list: no match is unknown */
            break;
        }
        case KN_OP_LIKE:
            d->i = ((in->sub & 2) ? regex_like(b.s, a.s) : kn__s_like(a.s.p, a.s.len, b.s.p, b.s.len)) ^ (in->sub & 1);
            *dv = va;
            break;
        case KN_OP_SUBSTR:
            d->s = kn__s_substr(a.s, b.i, in->imm ? c.i : 0, in->imm != 0);
            *dv = va && vb && (!in->imm || vc);
            break;
        case KN_OP_STRFN:
            *dv = va && vb && vc;
            d->w = 0;
            switch (in->sub) {
            case KN_STR_LENGTH: d->i = kn__s_count_chars(a.s.p, a.s.len); break;
            case KN_STR_OCTET_LENGTH: d->i = a.s.len; break;
            case KN_STR_STRPOS: d->i = kn__s_strpos(a.s, b.s); break;
            case KN_STR_STARTS_WITH: {
                bool yes = b.s.len <= a.s.len;
                for (int64_t j = 0; yes && j < b.s.len; j++)
                    yes = a.s.p[j] == b.s.p[j];
                d->i = yes;
                break;
            }
            case KN_STR_LEFT:
            case KN_STR_RIGHT: d->s = kn__s_left_right(a.s, b.i, in->sub == KN_STR_RIGHT); break;
            case KN_STR_BTRIM:
            case KN_STR_LTRIM:
            case KN_STR_RTRIM:
                d->s = kn__s_trim_set(a.s, b.s, in->sub != KN_STR_RTRIM, in->sub != KN_STR_LTRIM);
                break;
            case KN_STR_SPLIT_PART:
                if (*dv && c.i == 0) {
                    if (claim_fault(P)) {
                        msg m = begin_fault(P);
                        m.put("split_part: field position must not be zero");
                        raise_fault(P, PA_EINVAL);
                    }
                    return false;
                }
                d->s = kn__s_split_part(a.s, b.s, c.i);
                break;
            default: break;
            }
            break;
        case KN_OP_TEXT:
            if (!text_fn(P, in, row, a, va, b, vb, c, vc, d, dv))
                return false;
            break;
        case KN_OP_EXTRACT:
            if (in->atype.id == PA_TYPE_DATE)
                d->i = kn__s_date_field(in->sub, (int32_t)a.i);
            else
                extract_row(in, a, d);
            *dv = va;
            break;
        case KN_OP_DATE_TRUNC:
            *dv = va;
            if (in->atype.id == PA_TYPE_DATE)
                d->i = (int32_t)kn__s_date_trunc(in->sub, (int32_t)a.i);
            else if (!ts_trunc_row(P, in, a, va, d))
                return false;
            break;
        case KN_OP_DTARITH:
            *dv = va && (in->b < 0 || vb);
            if (!dtarith(P, in, a, b, *dv, d))
                return false;
            break;
        case KN_OP_MAKE_DATE: {
            int32_t r = 0;
            *dv = va && vb && vc;
            if (*dv && !kn__s_make_date(a.i, b.i, c.i, &r)) {
                if (claim_fault(P)) {
                    msg m = begin_fault(P);
                    char t[24];
                    m.put("date field value out of range: ");
                    kn__s_format_i64(a.i, t, sizeof t);
                    m.put(t);
                    m.put(b.i >= 0 && b.i < 10 ? "-0" : "-");
                    kn__s_format_i64(b.i, t, sizeof t);
                    m.put(t);
                    m.put(c.i >= 0 && c.i < 10 ? "-0" : "-");
                    kn__s_format_i64(c.i, t, sizeof t);
                    m.put(t);
                    raise_fault(P, PA_EINVAL);
                }
                return false;
            }
            d->i = r;
            break;
        }
        case KN_OP_ADD_MONTHS: {
            int32_t r = 0;
            *dv = va;
            if (!kn__s_add_months((int32_t)a.i, in->imm, &r) && va) {
                if (claim_fault(P)) {
                    msg m = begin_fault(P);
                    char n[24];
                    kn__s_format_i64(in->imm, n, sizeof n);
                    m.put("date out of range adding ");
                    m.put(n);
                    m.put(" months");
                    raise_fault(P, PA_EOVERFLOW);
                }
                return false;
            }
            d->i = r;
            break;
        }
        case KN_OP_CAST: {
            char *t = text;
            if (pa_type_is_varlen(in->type.id) && !pa_type_is_varlen(in->atype.id))
                t = text + (texts++) * KN_EVAL_STR_ROW_BYTES;
            *dv = va;
            if (!cast(P, in, a, va, d, t))
                return false;
            break;
        }
        default: break;   /* the entry checked the opcodes */
        }
        if (in->type.id == PA_TYPE_REAL && *dv && !real_round(P, d))
            return false;
    }
    return true;
}

/* Write output value v of kind k at row. */
__device__ inline void store_out(const pa_column *o, int64_t row, const gval &v)
{
    switch (kn__kind_of(o->type)) {
    case KN__BOOL: ((uint8_t *)o->data)[row] = (uint8_t)v.i; break;
    case KN__I32: ((int32_t *)o->data)[row] = (int32_t)v.i; break;
    case KN__I128: ((__int128 *)o->data)[row] = v.w; break;
    case KN__F64: ((double *)o->data)[row] = v.f; break;
    case KN__STR: break;
    default: ((int64_t *)o->data)[row] = v.i; break;
    }
}

/* A thread's registers and text for NR registers. */
template <int NR>
struct frame {
    gval r[NR];
    bool ok[NR];
    char text[TEXT_BYTES];
    __device__ regs view() { return regs{r, ok}; }
};

/* Pass A of kn_eval: 8 rows (one validity byte) per thread. */
template <int NR>
__global__ void eval_k(prog_v P)
{
    frame<NR> F;
    const regs R = F.view();
    const kn_output *outs = kn_program_outputs(P.p);
    const int n_out = P.p->n_outputs;
    KN_GPU_FOR(byte, (P.rows + 7) / 8)
    {
        for (int64_t row = byte * 8; row < byte * 8 + 8 && row < P.rows; row++) {
            if (!eval_row(P, row, R, F.text)) {
                /* The call fails, but every length is written (0 here) so
                 * the offsets stay a bounded running sum: a reader that
                 * gets them before the fault is reported (another stream,
                 * through an event) cannot be sent past the bytes. */
                for (int j = 0; j < n_out; j++) {
                    const pa_column *o = &P.out[j];
                    if (o->validity && (row & 7) == 0)
                        o->validity[byte] = 0;
                    if (pa_type_is_varlen(o->type.id))
                        o->offsets[row + 1] = 0;
                }
                continue;
            }
            for (int j = 0; j < n_out; j++) {
                const pa_column *o = &P.out[j];
                const gval &v = F.r[outs[j].reg];
                const bool ok = F.ok[outs[j].reg];
                if (o->validity) {
                    unsigned m = 1u << (row & 7);
                    o->validity[byte] = (uint8_t)((row & 7) == 0 ? (ok ? m : 0) : (o->validity[byte] | (ok ? m : 0)));
                } else if (!ok) {
                    if (claim_fault(P)) {
                        msg m = begin_fault(P);
                        m.put("expression output has a NULL but no validity buffer");
                        raise_fault(P, PA_EINVAL);
                    }
                }
                if (pa_type_is_varlen(o->type.id))
                    o->offsets[row + 1] = ok ? (int32_t)v.s.len : 0;
                else
                    store_out(o, row, v);
            }
        }
    }
}

/* Pass B of kn_eval: each row's text at its offset, one row per thread. */
template <int NR>
__global__ void strings_k(prog_v P)
{
    frame<NR> F;
    const regs R = F.view();
    const kn_output *outs = kn_program_outputs(P.p);
    const int n_out = P.p->n_outputs;
    /* A row of pass A faulted (or an earlier kernel of the stream did): the
     * threads that stopped there left offsets unwritten, so no byte may be
     * placed by them; the stream's next sync reports the fault. */
    if (*(volatile const int64_t *)P.fault != 0)
        return;
    KN_GPU_FOR(row, P.rows)
    {
        if (!eval_row(P, row, R, F.text))
            return;
        for (int j = 0; j < n_out; j++) {
            const pa_column *o = &P.out[j];
            if (!pa_type_is_varlen(o->type.id) || !F.ok[outs[j].reg])
                continue;
            const kn__str s = F.r[outs[j].reg].s;
            char *dst = (char *)o->data + o->offsets[row];
            for (int64_t k = 0; k < s.len; k++)
                dst[k] = s.p[k];
        }
    }
}

/* The scan over a VARCHAR output's lengths: offsets[i + 1] holds row i's
 * length, and becomes its end. */
struct len_at {
    const int32_t *off;
    __device__ int64_t operator()(int64_t i) const { return off[i + 1]; }
};

struct end_at {
    int32_t *off;
    prog_v P;
    __device__ void operator()(int64_t i, int64_t at, int64_t len) const
    {
        if (at + len > INT32_MAX) {
            if (claim_fault(P)) {
                msg m = begin_fault(P);
                m.put("expression result exceeds 2147483647 bytes of text");
                raise_fault(P, PA_EUNSUPPORTED);
            }
            return;
        }
        off[i + 1] = (int32_t)(at + len);
    }
};

/* kn_filter: 1 for a row where the predicate is TRUE. */
template <int NR>
struct pred_row {
    prog_v P;
    __device__ int64_t operator()(int64_t row) const
    {
        frame<NR> F;
        if (!eval_row(P, row, F.view(), F.text))
            return 0;
        int reg = kn_program_outputs(P.p)[0].reg;
        return F.ok[reg] && (uint8_t)F.r[reg].i != 0;
    }
};

struct put_row {
    int32_t *sel;
    __device__ void operator()(int64_t i, int64_t at, int64_t keep) const
    {
        if (keep)
            sel[at] = (int32_t)i;
    }
};

__global__ void str_bound_k(const kn_program *p, int out, const pa_column *in, int n_inputs, int64_t rows,
                            int64_t *bytes)
{
    *bytes = kn__str_bound(p, out, in, n_inputs, rows);
}

/* ------------------------------------------------------------ entries */

/* What the device cannot evaluate (see the notes at the top), and what the
 * cpu loops would report for any row; PA_OK when it can. */
int device_check(const kn_program *p, int64_t rows, pa_err *err)
{
    const kn_insn *ins = kn_program_insns(p);
    int texts = 0;
    for (int k = 0; k < p->n_insns; k++) {
        const kn_insn *in = &ins[k];
        if ((in->op == KN_OP_EXTRACT || in->op == KN_OP_DATE_TRUNC) && in->sub >= KN_FIELD__COUNT)
            return pa_error(err, PA_EINVAL, "EXTRACT of unknown field %d", in->sub);
        if (in->op != KN_OP_CAST)
            continue;
        pa_type_id from = in->atype.id, to = in->type.id;
        if (from != to && (from == PA_TYPE_DATE || to == PA_TYPE_DATE) && !pa_type_is_varlen(from) &&
            !pa_type_is_varlen(to) && !kn__s_is_time(from) && !kn__s_is_time(to) && rows > 0)
            return pa_error(err, PA_EINVAL, "CAST from %s to %s is not supported", pa_type_name(from),
                            pa_type_name(to));
        if (pa_type_is_varlen(to) && !pa_type_is_varlen(from) && ++texts > TEXT_CASTS)
            return pa_error(err, PA_EUNSUPPORTED, "expression has more than %d CASTs to VARCHAR: the CUDA "
                            "evaluator holds %d bytes of text per row", TEXT_CASTS, TEXT_BYTES);
    }
    return PA_OK;
}

/* The call's device state: one block, staged in stream order, with the
 * program, the inputs, the outputs and the fault claim word (0, as the
 * host block is zeroed). */
struct call {
    void *block = NULL;
    prog_v P{};
};

int call_begin(const kn_ctx *ctx, const kn_program *p, const pa_column *inputs, int n_inputs,
               const pa_column *outs, int n_outs, int64_t rows, call *c, pa_err *err)
{
    size_t in_at = ((size_t)p->bytes + 15) & ~(size_t)15;
    size_t out_at = in_at + (size_t)n_inputs * sizeof *inputs;
    size_t claim_at = out_at + (size_t)n_outs * sizeof *outs;
    size_t size = claim_at + sizeof(int);
    char *h = (char *)pa_calloc(1, size);
    if (!h)
        return pa_error(err, PA_ENOMEM, "out of host memory staging an expression program");
    memcpy(h, p, p->bytes);
    if (n_inputs)
        memcpy(h + in_at, inputs, (size_t)n_inputs * sizeof *inputs);
    if (n_outs)
        memcpy(h + out_at, outs, (size_t)n_outs * sizeof *outs);
    int rc = stage_bytes(ctx, h, size, &c->block, err);
    pa_free(h);
    char *b = (char *)c->block;
    c->P = prog_v{(const kn_program *)b, (const pa_column *)(b + in_at), (const pa_column *)(b + out_at), rows,
                  (int *)(b + claim_at), dv_stream_fault_words(ctx->stream), NULL, 0};
    return rc;
}

/* Hand the call's memory back after its kernels; rc is the call's status. */
int call_end(const kn_ctx *ctx, call *c, int rc, pa_err *err) { return free_after(ctx, c->block, rc, err); }

/* Launch K<NR> for the smallest register file that holds the program. */
#define KN__BY_REGS(n_regs, EXPR_OF_NR)                         \
    ((n_regs) <= 16 ? (EXPR_OF_NR(16)) : (n_regs) <= 64 ? (EXPR_OF_NR(64)) : (EXPR_OF_NR(KN_EVAL_MAX_REGS)))

int checks(const kn_ctx *ctx, const kn_program *p, const pa_column *inputs, int n_inputs, const pa_column *outs,
           int64_t rows, const void *text, pa_err *err)
{
    (void)ctx;
    (void)text;   /* its size against the need is the kernels' check (text_fn) */
    int rc = kn_program_check(p, err);
    if (rc == PA_OK)
        rc = kn__eval_check(p, inputs, n_inputs, outs, err);
    if (rc == PA_OK)
        rc = device_check(p, rows, err);
    return rc;
}

} /* namespace */

extern "C" int SIMT_NAME(kn__gpu_eval)(const kn_ctx *ctx, const kn_program *p, const pa_column *inputs,
                                       int n_inputs, int64_t rows, pa_column *outs, void *scratch, void *text,
                                       int64_t text_bytes, pa_err *err)
{
    (void)scratch;   /* registers live in the threads */
    int rc = checks(ctx, p, inputs, n_inputs, outs, rows, text, err);
    if (rc != PA_OK || rows <= 0)
        return rc;
    call c;
    rc = call_begin(ctx, p, inputs, n_inputs, outs, p->n_outputs, rows, &c, err);
    c.P.area = (char *)text;
    c.P.area_bytes = text_bytes;
    const unsigned grid = blocks_for((rows + 7) / 8);
#define KN__EVAL_K(NR) SIMT_LAUNCH(eval_k<NR>, grid, THREADS, 0, ctx->stream, err, c.P)
    if (rc == PA_OK)
        rc = KN__BY_REGS(p->n_regs, KN__EVAL_K);
#undef KN__EVAL_K
    bool strings = false;
    for (int j = 0; rc == PA_OK && j < p->n_outputs; j++) {
        if (!pa_type_is_varlen(outs[j].type.id))
            continue;
        strings = true;
        /* c.P.out[j] lives on the device; the offsets pointer is the caller's. */
        rc = scan(ctx, rows, len_at{outs[j].offsets}, end_at{outs[j].offsets, c.P}, outs[j].offsets, NULL, err);
    }
#define KN__STR_K(NR) SIMT_LAUNCH(strings_k<NR>, blocks_for(rows), THREADS, 0, ctx->stream, err, c.P)
    if (rc == PA_OK && strings)
        rc = KN__BY_REGS(p->n_regs, KN__STR_K);
#undef KN__STR_K
    return call_end(ctx, &c, rc, err);
}

extern "C" int SIMT_NAME(kn__gpu_filter)(const kn_ctx *ctx, const kn_program *p, const pa_column *inputs,
                                         int n_inputs, int64_t rows, int32_t *sel, int64_t *count, void *scratch,
                                         void *text, int64_t text_bytes, pa_err *err)
{
    (void)scratch;
    int rc = kn_program_check(p, err);
    if (rc == PA_OK)
        rc = kn__filter_check(p, rows, err);
    if (rc == PA_OK)
        rc = checks(ctx, p, inputs, n_inputs, NULL, rows, text, err);
    if (rc != PA_OK)
        return rc;
    KN__POISON(ctx, count);
    call c;
    rc = call_begin(ctx, p, inputs, n_inputs, NULL, 0, rows, &c, err);
    c.P.area = (char *)text;
    c.P.area_bytes = text_bytes;
#define KN__FILTER(NR) scan(ctx, rows, pred_row<NR>{c.P}, put_row{sel}, NULL, count, err)
    if (rc == PA_OK)
        rc = KN__BY_REGS(p->n_regs, KN__FILTER);
#undef KN__FILTER
    return call_end(ctx, &c, rc, err);
}

extern "C" int SIMT_NAME(kn__gpu_eval_str_bytes)(const kn_ctx *ctx, const kn_program *p, int out,
                                                 const pa_column *inputs, int n_inputs, int64_t rows,
                                                 int64_t *bytes, pa_err *err)
{
    int rc = kn_program_check(p, err);
    if (rc != PA_OK)
        return rc;
    KN__POISON(ctx, bytes);
    call c;
    rc = call_begin(ctx, p, inputs, n_inputs, NULL, 0, rows, &c, err);
    if (rc == PA_OK)
        rc = SIMT_LAUNCH(str_bound_k, 1, 1, 0, ctx->stream, err, c.P.p, out, c.P.in, n_inputs, rows, bytes);
    return call_end(ctx, &c, rc, err);
}
