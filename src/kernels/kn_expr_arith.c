/*
 * kn_expr_arith.c - ADD, SUB, MUL, DIV, MOD and NEG over a batch.
 *
 * Integer kinds detect overflow of their width; DECIMAL instructions carry
 * imm = 1 when the result precision was capped (the compiler proved nothing),
 * then |result| < 10^precision is checked too. The fast loops only OR an
 * overflow flag; a batch with the flag up is re-scanned row by row (in
 * 128-bit arithmetic) to report the first valid row at fault.
 */
#include "kernels/kn_expr_int.h"

#include <math.h>
#include <stdio.h>

static const char *op_word(int op)
{
    return op == KN_OP_ADD ? "addition" : op == KN_OP_SUB ? "subtraction" : "multiplication";
}
static const char op_sign[] = {[KN_OP_ADD] = '+', [KN_OP_SUB] = '-', [KN_OP_MUL] = '*'};

/* Operand values of row i as raw memory (for the slow path and messages). */
static const void *operand(const kn__eval *e, const kn_insn *in, int which, int i, int width)
{
    bool is_const = (in->flags >> which) & 1;
    int16_t idx = which == 0 ? in->a : in->b;
    if (is_const)
        return &e->consts[idx].v;
    return (const char *)e->regs[idx].data + (size_t)i * width;
}

static bool operand_valid(const kn__eval *e, const kn_insn *in, int which, int i)
{
    bool is_const = (in->flags >> which) & 1;
    int16_t idx = which == 0 ? in->a : in->b;
    return is_const ? !e->consts[idx].is_null : kn__valid(&e->regs[idx], i);
}

static __int128 load_int(kn__kind k, const void *p)
{
    int32_t v32;
    int64_t v64;
    __int128 w;
    switch (k) {
    case KN__I32: memcpy(&v32, p, 4); return v32;
    case KN__I64: memcpy(&v64, p, 8); return v64;
    default: memcpy(&w, p, 16); return w;
    }
}

/* Exact check of one row; true when it overflows. */
static bool row_overflows(const kn_insn *in, kn__kind k, __int128 x, __int128 y)
{
    __int128 r;
    bool o;
    if (k == KN__I128) {
        o = in->op == KN_OP_ADD ? __builtin_add_overflow(x, y, &r)
          : in->op == KN_OP_SUB ? __builtin_sub_overflow(x, y, &r)
                                : __builtin_mul_overflow(x, y, &r);
        if (o)
            return true;
    } else {
        r = in->op == KN_OP_ADD ? x + y : in->op == KN_OP_SUB ? x - y : x * y;
        __int128 lo = k == KN__I32 ? INT32_MIN : INT64_MIN, hi = k == KN__I32 ? INT32_MAX : INT64_MAX;
        if (r < lo || r > hi)
            return true;
    }
    if (in->imm && in->type.id == PA_TYPE_DECIMAL) {
        __int128 lim = kn__pow10_128[in->type.precision];
        return r >= lim || r <= -lim;
    }
    return false;
}

static int report_overflow(kn__eval *e, const kn_insn *in, kn__kind k)
{
    int w = kn__kind_width(k);
    for (int i = 0; i < e->n; i++) {
        if (!operand_valid(e, in, 0, i) || !operand_valid(e, in, 1, i))
            continue;
        const void *pa = operand(e, in, 0, i, w), *pb = operand(e, in, 1, i, w);
        if (!row_overflows(in, k, load_int(k, pa), load_int(k, pb)))
            continue;
        char ta[48], sa[64], sb[64];
        pa_type tb = in->atype;
        if (in->op == KN_OP_MUL && tb.id == PA_TYPE_DECIMAL)
            tb.scale = in->sub;
        /* Constants hold I32 values as int64: format them by value. */
        int32_t a32, b32;
        if (k == KN__I32) {
            a32 = (int32_t)load_int(k, pa);
            b32 = (int32_t)load_int(k, pb);
            if ((in->flags & KN_F_A_CONST))
                a32 = (int32_t)e->consts[in->a].v.i, pa = &a32;
            if ((in->flags & KN_F_B_CONST))
                b32 = (int32_t)e->consts[in->b].v.i, pb = &b32;
        }
        kn__format(in->atype, pa, sa, sizeof sa);
        kn__format(tb, pb, sb, sizeof sb);
        return pa_error(e->err, PA_EOVERFLOW, "overflow in %s %s: %s %c %s", pa_type_format(in->type, ta, sizeof ta),
                        op_word(in->op), sa, op_sign[in->op], sb);
    }
    return PA_OK;   /* only NULL rows overflowed */
}

int kn__op_arith(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const int n = e->n;
    const int op = in->op;
    kn__kind k = kn__kind_of(in->atype);
    bool check = in->imm && in->type.id == PA_TYPE_DECIMAL;
    uint64_t ovf = 0;
    d->data = d->slot;
    switch (k) {
    case KN__I32: {
        int32_t *D = d->data;
        if (op == KN_OP_ADD)
            KN__BIN(int32_t, i, { int64_t r = (int64_t)x + y; D[i] = (int32_t)r; ovf |= r != (int32_t)r; });
        else if (op == KN_OP_SUB)
            KN__BIN(int32_t, i, { int64_t r = (int64_t)x - y; D[i] = (int32_t)r; ovf |= r != (int32_t)r; });
        else
            KN__BIN(int32_t, i, { int64_t r = (int64_t)x * y; D[i] = (int32_t)r; ovf |= r != (int32_t)r; });
        break;
    }
    case KN__I64: {
        int64_t *D = d->data;
        if (op == KN_OP_ADD)
            KN__BIN(int64_t, i, {
                uint64_t r = (uint64_t)x + (uint64_t)y;
                D[i] = (int64_t)r;
                ovf |= (((uint64_t)x ^ r) & ((uint64_t)y ^ r)) >> 63;
            });
        else if (op == KN_OP_SUB)
            KN__BIN(int64_t, i, {
                uint64_t r = (uint64_t)x - (uint64_t)y;
                D[i] = (int64_t)r;
                ovf |= (((uint64_t)x ^ (uint64_t)y) & ((uint64_t)x ^ r)) >> 63;
            });
        else if (check && in->type.precision <= 18) {
            /* One exact 64x64->128 product and the precision bound, fused. */
            const __int128 lim = kn__pow10_64[in->type.precision];
            KN__BIN(int64_t, i, {
                __int128 r = (__int128)x * y;
                D[i] = (int64_t)r;
                ovf |= (uint64_t)((r >= lim) | (r <= -lim));
            });
            check = false;
        } else
            KN__BIN(int64_t, i, { ovf |= (uint64_t)__builtin_mul_overflow(x, y, &D[i]); });
        if (check) {
            const int64_t lim = in->type.precision >= 19 ? INT64_MAX : kn__pow10_64[in->type.precision];
            for (int i = 0; i < n; i++)
                ovf |= (uint64_t)((D[i] >= lim) | (D[i] <= -lim));
        }
        break;
    }
    case KN__I128: {
        __int128 *D = d->data;
        if (op == KN_OP_ADD)
            KN__BIN(__int128, w, { ovf |= (uint64_t)__builtin_add_overflow(x, y, &D[i]); });
        else if (op == KN_OP_SUB)
            KN__BIN(__int128, w, { ovf |= (uint64_t)__builtin_sub_overflow(x, y, &D[i]); });
        else
            KN__BIN(__int128, w, {
                /* Both halves small (the usual case): one exact 64x64 product. */
                if (x == (int64_t)x && y == (int64_t)y)
                    D[i] = (__int128)(int64_t)x * (int64_t)y;
                else
                    ovf |= (uint64_t)__builtin_mul_overflow(x, y, &D[i]);
            });
        if (check) {
            const __int128 lim = kn__pow10_128[in->type.precision];
            for (int i = 0; i < n; i++)
                ovf |= (uint64_t)((D[i] >= lim) | (D[i] <= -lim));
        }
        break;
    }
    case KN__F64: {
        double *D = d->data;
        if (op == KN_OP_ADD)
            KN__BIN(double, f, { D[i] = x + y; });
        else if (op == KN_OP_SUB)
            KN__BIN(double, f, { D[i] = x - y; });
        else
            KN__BIN(double, f, { D[i] = x * y; });
        break;
    }
    default:
        return pa_error(e->err, PA_EINVAL, "arithmetic on %s", pa_type_name(in->atype.id));
    }
    kn__valid_and2(e, d, kn__opreg(e, in->a, in->flags & KN_F_A_CONST), kn__opreg(e, in->b, in->flags & KN_F_B_CONST));
    if (ovf)
        return report_overflow(e, in, k);
    return PA_OK;
}

/* D = x / y per row for an integer kind T, truncated toward zero as C and
 * PostgreSQL: y == 0 gives 0 and raises zero, the type's minimum / -1 gives
 * 0 and raises ovf. */
#define DIV_INT(T, GET, MIN)                                                                          \
    do {                                                                                              \
        T *D = d->data;                                                                               \
        KN__BIN(T, GET, {                                                                             \
            zero |= y == 0;                                                                           \
            ovf |= x == MIN && y == -1;                                                               \
            D[i] = y == 0 ? 0 : y == -1 ? (T)(0 - (uint64_t)x) : x / y;                               \
        });                                                                                           \
    } while (0)

/* a / b: DOUBLE (the compiler casts DECIMAL operands to DOUBLE), or INTEGER
 * and BIGINT truncated as PostgreSQL's. A zero divisor in a valid row is
 * PostgreSQL's "division by zero" error (IEEE's inf and DuckDB's NULL are
 * not given); the smallest integer / -1 overflows. */
int kn__op_div(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const int n = e->n;
    uint64_t zero = 0, ovf = 0;
    kn__kind k = kn__kind_of(in->atype);
    d->data = d->slot;
    switch (k) {
    case KN__I32: DIV_INT(int32_t, i, INT32_MIN); break;
    case KN__I64: DIV_INT(int64_t, i, INT64_MIN); break;
    case KN__F64: {
        double *D = d->data;
        KN__BIN(double, f, {
            zero |= y == 0;
            D[i] = x / y;
        });
        break;
    }
    default:
        return pa_error(e->err, PA_EINVAL, "division of %s: the compiler casts to DOUBLE or an integer type",
                        pa_type_name(in->atype.id));
    }
    kn__valid_and2(e, d, kn__opreg(e, in->a, in->flags & KN_F_A_CONST), kn__opreg(e, in->b, in->flags & KN_F_B_CONST));
    if (!zero && !ovf)
        return PA_OK;
    int w = k == KN__F64 ? 8 : kn__kind_width(k);
    for (int i = 0; i < n; i++) {
        if (!operand_valid(e, in, 0, i) || !operand_valid(e, in, 1, i))
            continue;
        const void *pa = operand(e, in, 0, i, w), *pb = operand(e, in, 1, i, w);
        char sa[64], ta[48];
        bool is_zero;
        int32_t a32;
        if (k == KN__F64) {
            double y;
            memcpy(&y, pb, 8);
            is_zero = y == 0;
        } else {
            /* Constants hold I32 values as int64. */
            __int128 x = load_int(k == KN__I32 && (in->flags & KN_F_A_CONST) ? KN__I64 : k, pa);
            __int128 y = load_int(k == KN__I32 && (in->flags & KN_F_B_CONST) ? KN__I64 : k, pb);
            if (k == KN__I32)
                a32 = (int32_t)x, pa = &a32;
            is_zero = y == 0;
            if (y == -1 && x == (k == KN__I32 ? INT32_MIN : INT64_MIN)) {
                kn__format(in->atype, pa, sa, sizeof sa);
                return pa_error(e->err, PA_EOVERFLOW, "overflow in %s division: %s / -1",
                                pa_type_format(in->type, ta, sizeof ta), sa);
            }
        }
        if (is_zero) {
            kn__format(in->atype, pa, sa, sizeof sa);
            return pa_error(e->err, PA_EINVAL, "division by zero in %s division: %s / 0",
                            pa_type_format(in->type, ta, sizeof ta), sa);
        }
    }
    return PA_OK;
}

static int zero_divisor_row(const kn__eval *e, const kn_insn *in, int w)
{
    for (int i = 0; i < e->n; i++) {
        if (!operand_valid(e, in, 0, i) || !operand_valid(e, in, 1, i))
            continue;
        const void *pb = operand(e, in, 1, i, w);
        if (pa_type_is_float(in->atype.id)) {
            double y;
            memcpy(&y, pb, 8);
            if (y == 0)
                return i;
            continue;
        }
        /* Constants hold I32 values as int64. */
        kn__kind k = kn__kind_of(in->atype);
        if (k == KN__I32 && (in->flags & KN_F_B_CONST))
            k = KN__I64;
        if (load_int(k, pb) == 0)
            return i;
    }
    return -1;
}

/* Row of the first valid zero divisor of MOD (none: -1). */
static int zero_divisor_row(const kn__eval *e, const kn_insn *in, int w);

/* D = x % y per row for an integer kind T (y == 0 gives 0 and sets zero). */
#define MOD_INT(T, GET)                                                                               \
    do {                                                                                              \
        T *D = d->data;                                                                               \
        KN__BIN(T, GET, {                                                                             \
            zero |= y == 0;                                                                           \
            D[i] = y == 0 || y == -1 ? 0 : x % y;                                                     \
        });                                                                                           \
    } while (0)

/* a % b with the sign of a, as C and PostgreSQL: x % -1 is 0 even for the
 * type's minimum, x % 0 an error (PostgreSQL's; DuckDB gives NULL). The
 * loops run on every row (NULL rows hold anything); a zero divisor gives
 * 0 there and raises a flag, and a flagged batch is checked row by row for
 * a zero divisor in a valid row. */
int kn__op_mod(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const int n = e->n;
    uint64_t zero = 0;
    kn__kind k = kn__kind_of(in->atype);
    d->data = d->slot;
    switch (k) {
    case KN__I32: MOD_INT(int32_t, i); break;
    case KN__I64: MOD_INT(int64_t, i); break;
    case KN__I128: MOD_INT(__int128, w); break;
    case KN__F64: {
        double *D = d->data;
        KN__BIN(double, f, {
            zero |= y == 0;
            D[i] = fmod(x, y);
        });
        break;
    }
    default:
        return pa_error(e->err, PA_EINVAL, "modulo of %s", pa_type_name(in->atype.id));
    }
    kn__valid_and2(e, d, kn__opreg(e, in->a, in->flags & KN_F_A_CONST), kn__opreg(e, in->b, in->flags & KN_F_B_CONST));
    if (zero) {
        int w = k == KN__F64 ? 8 : kn__kind_width(k);
        int i = zero_divisor_row(e, in, w);
        if (i >= 0) {
            char sa[64], ta[48];
            const void *pa = operand(e, in, 0, i, w);
            int32_t a32;
            if (k == KN__I32 && (in->flags & KN_F_A_CONST))
                a32 = (int32_t)e->consts[in->a].v.i, pa = &a32;
            kn__format(in->atype, pa, sa, sizeof sa);
            return pa_error(e->err, PA_EINVAL, "division by zero in %s modulo: %s %% 0",
                            pa_type_format(in->type, ta, sizeof ta), sa);
        }
    }
    return PA_OK;
}

int kn__op_neg(kn__eval *e, const kn_insn *in)
{
    kn__reg *d = &e->regs[in->dst];
    const kn__reg *a = &e->regs[in->a];
    const int n = e->n;
    uint64_t ovf = 0;
    kn__kind k = kn__kind_of(in->atype);
    d->data = d->slot;
    switch (k) {
    case KN__I32: {
        const int32_t *A = a->data;
        int32_t *D = d->data;
        for (int i = 0; i < n; i++) {
            ovf |= A[i] == INT32_MIN;
            D[i] = (int32_t)(0u - (uint32_t)A[i]);
        }
        break;
    }
    case KN__I64: {
        const int64_t *A = a->data;
        int64_t *D = d->data;
        for (int i = 0; i < n; i++) {
            ovf |= A[i] == INT64_MIN;
            D[i] = (int64_t)(0u - (uint64_t)A[i]);
        }
        break;
    }
    case KN__I128: {
        const __int128 *A = a->data;
        __int128 *D = d->data;
        for (int i = 0; i < n; i++)
            D[i] = -A[i];   /* |DECIMAL(38)| < 10^38: never the minimum */
        break;
    }
    case KN__F64: {
        const double *A = a->data;
        double *D = d->data;
        for (int i = 0; i < n; i++)
            D[i] = -A[i];
        break;
    }
    default:
        return pa_error(e->err, PA_EINVAL, "negation of %s", pa_type_name(in->atype.id));
    }
    kn__valid_and2(e, d, a, NULL);
    if (ovf)
        for (int i = 0; i < n; i++) {
            if (!kn__valid(a, i))
                continue;
            if ((k == KN__I32 && ((const int32_t *)a->data)[i] == INT32_MIN) ||
                (k == KN__I64 && ((const int64_t *)a->data)[i] == INT64_MIN))
                return pa_error(e->err, PA_EOVERFLOW, "overflow in %s negation: -(%s)",
                                pa_type_name(in->atype.id), k == KN__I32 ? "-2147483648" : "-9223372036854775808");
        }
    return PA_OK;
}
