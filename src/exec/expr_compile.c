/*
 * expr_compile.c - compile expression trees into one kn_program.
 *
 * Code generation walks each tree once, sharing structurally equal
 * subtrees (memo), so a PROJECT's expressions that repeat a product
 * evaluate it once. Constants become operands of the instructions that
 * take them (arithmetic, comparisons, SUBSTRING positions, LIKE patterns,
 * IN lists) or CONST registers filled once in the prologue. Casts that only
 * widen a DECIMAL's precision within the same width and scale emit nothing.
 * Registers are then allocated by a linear scan over last uses: a register
 * is reused once its value is dead, except prologue constants, outputs and
 * registers owning text (CAST to VARCHAR, TEXT functions), which other
 * views may point into.
 */
#include "exec/expr_int.h"

#include <stdio.h>
#include <string.h>

typedef struct comp {
    kn_insn *ins;            /* prologue and body, in two lists */
    int n_ins, cap_ins;
    kn_insn *pro;
    int n_pro, cap_pro;
    kn_value *consts;
    int n_consts, cap_consts;
    char *pool;
    size_t n_pool, cap_pool;
    pa_type *inputs;
    int n_inputs;
    int n_vregs;
    uint8_t *text;           /* per vreg: owns text: 1 a CAST's (a register text area), 2 a TEXT's */
    int cap_text;
    struct { const ex_expr *e; int vreg; } *memo;
    int n_memo, cap_memo;
    const pa_type *check_types;
    int check_n;
    pa_err *err;
} comp;

#define GROW(arr, n, cap)                                                     \
    do {                                                                      \
        if ((n) == (cap)) {                                                   \
            int nc_ = (cap) ? (cap) * 2 : 16;                                 \
            void *np_ = pa_realloc((arr), (size_t)nc_ * sizeof *(arr));       \
            if (!np_)                                                         \
                return pa_error(c->err, PA_ENOMEM, "out of memory compiling an expression"); \
            (arr) = np_;                                                      \
            (cap) = nc_;                                                      \
        }                                                                     \
    } while (0)

static int new_vreg(comp *c, int owns_text, int *out)
{
    GROW(c->text, c->n_vregs, c->cap_text);
    c->text[c->n_vregs] = owns_text;
    *out = c->n_vregs++;
    return PA_OK;
}

static kn_insn insn(int op, pa_type t, pa_type at)
{
    kn_insn i;
    memset(&i, 0, sizeof i);
    i.op = (uint8_t)op;
    i.a = i.b = i.c = -1;
    i.type = t;
    i.atype = at;
    return i;
}

static int emit(comp *c, kn_insn i)
{
    GROW(c->ins, c->n_ins, c->cap_ins);
    c->ins[c->n_ins++] = i;
    return PA_OK;
}

static int add_const(comp *c, const ex_expr *e, int *idx)
{
    GROW(c->consts, c->n_consts, c->cap_consts);
    if (c->n_consts >= INT16_MAX)
        return pa_error(c->err, PA_EUNSUPPORTED, "expression with more than %d constants (for an IN list that "
                        "long, join with a table of the values)", INT16_MAX);
    kn_value *v = &c->consts[c->n_consts];
    memset(v, 0, sizeof *v);
    v->type = e->type;
    v->is_null = e->is_null;
    const char *s = e->kind == EX__LIKE ? e->str : pa_type_is_varlen(e->type.id) ? e->str : NULL;
    int32_t sl = s ? e->str_len : 0;
    if (e->kind == EX__LIKE)
        v->type = (pa_type){PA_TYPE_VARCHAR, 0, 0};
    else
        memcpy(&v->v, &e->v, sizeof v->v);
    if (sl > 0) {
        while (c->n_pool + (size_t)sl > c->cap_pool) {
            size_t nc = c->cap_pool ? c->cap_pool * 2 : 256;
            char *np = pa_realloc(c->pool, nc);
            if (!np)
                return pa_error(c->err, PA_ENOMEM, "out of memory compiling an expression");
            c->pool = np;
            c->cap_pool = nc;
        }
        memcpy(c->pool + c->n_pool, s, (size_t)sl);
        v->str_off = (uint32_t)c->n_pool;
        v->str_len = (uint32_t)sl;
        c->n_pool += (size_t)sl;
    }
    *idx = c->n_consts++;
    return PA_OK;
}

static int memo_find(comp *c, const ex_expr *e)
{
    for (int i = 0; i < c->n_memo; i++)
        if (ex__expr_equal(c->memo[i].e, e))
            return c->memo[i].vreg;
    return -1;
}

static int memo_add(comp *c, const ex_expr *e, int vreg)
{
    GROW(c->memo, c->n_memo, c->cap_memo);
    c->memo[c->n_memo].e = e;
    c->memo[c->n_memo].vreg = vreg;
    c->n_memo++;
    return PA_OK;
}

static int gen(comp *c, const ex_expr *e, int *vreg);

/* A register holding e (a CONST register filled in the prologue for a constant). */
static int gen_reg(comp *c, const ex_expr *e, int *vreg)
{
    if (e->kind != EX__CONST)
        return gen(c, e, vreg);
    int r = memo_find(c, e), k, rc;
    if (r >= 0)
        return *vreg = r, PA_OK;
    if ((rc = add_const(c, e, &k)) != PA_OK || (rc = new_vreg(c, false, &r)) != PA_OK)
        return rc;
    kn_insn i = insn(KN_OP_CONST, e->type, e->type);
    i.dst = (int16_t)r;
    i.a = (int16_t)k;
    GROW(c->pro, c->n_pro, c->cap_pro);
    c->pro[c->n_pro++] = i;
    *vreg = r;
    return memo_add(c, e, r);
}

/* Operand x of an instruction: a constant index (flag set) or a register. */
static int gen_operand(comp *c, const ex_expr *e, kn_insn *i, int which)
{
    int v, rc;
    /* Kernels take at most one constant among a and b. */
    bool other_const = which == 1 && (i->flags & KN_F_A_CONST);
    if (e->kind == EX__CONST && !e->is_null && !other_const) {
        rc = add_const(c, e, &v);
        i->flags |= (uint8_t)(1 << which);
    } else {
        rc = gen_reg(c, e, &v);
    }
    int16_t *slot = which == 0 ? &i->a : which == 1 ? &i->b : &i->c;
    *slot = (int16_t)v;
    return rc;
}

static bool cast_is_noop(pa_type from, pa_type to)
{
    return from.id == PA_TYPE_DECIMAL && to.id == PA_TYPE_DECIMAL && from.scale == to.scale &&
           to.precision >= from.precision &&
           (from.precision > PA_DECIMAL64_MAX_PRECISION) == (to.precision > PA_DECIMAL64_MAX_PRECISION);
}

static int gen_case(comp *c, const ex_expr *e, int *vreg)
{
    int n = (e->n_args - 1) / 2, acc, rc;
    if ((rc = gen_reg(c, e->args[2 * n], &acc)) != PA_OK)
        return rc;
    for (int k = n - 1; k >= 0; k--) {
        int cond, val, dst = -1;
        if ((rc = gen_reg(c, e->args[2 * k], &cond)) != PA_OK || (rc = gen_reg(c, e->args[2 * k + 1], &val)) != PA_OK ||
            (rc = new_vreg(c, false, &dst)) != PA_OK)
            return rc;
        kn_insn i = insn(KN_OP_SELECT, e->type, e->type);
        i.dst = (int16_t)dst, i.a = (int16_t)cond, i.b = (int16_t)val, i.c = (int16_t)acc;
        if ((rc = emit(c, i)) != PA_OK)
            return rc;
        acc = dst;
    }
    *vreg = acc;
    return PA_OK;
}

static int gen_in(comp *c, const ex_expr *e, kn_insn *i)
{
    int rc, a, k;
    if ((rc = gen_reg(c, e->args[0], &a)) != PA_OK)
        return rc;
    i->a = (int16_t)a;
    i->atype = e->args[0]->type;
    i->imm = c->n_consts;
    for (int j = 1; j < e->n_args; j++) {
        if (e->args[j]->is_null) {
            i->sub = 1;
            continue;
        }
        if ((rc = add_const(c, e->args[j], &k)) != PA_OK)
            return rc;
        i->imm2++;
    }
    return PA_OK;
}

static int gen(comp *c, const ex_expr *e, int *vreg)
{
    int r = memo_find(c, e), rc = PA_OK, a;
    if (r >= 0)
        return *vreg = r, PA_OK;
    const pa_type at = e->n_args ? e->args[0]->type : e->type;
    kn_insn i = insn(0, e->type, at);
    switch (e->kind) {
    case EX__COL:
        if (c->check_types && (e->index >= c->check_n || !ex__type_eq(c->check_types[e->index], e->type))) {
            char x[32];
            return pa_error(c->err, PA_EINVAL, "expression reads column %d as %s: the input %s", e->index,
                            pa_type_format(e->type, x, sizeof x),
                            e->index >= c->check_n ? "has fewer columns" : "has another type");
        }
        if (e->index >= c->n_inputs) {
            pa_type *ni = pa_realloc(c->inputs, (size_t)(e->index + 1) * sizeof *ni);
            if (!ni)
                return pa_error(c->err, PA_ENOMEM, "out of memory compiling an expression");
            for (int k = c->n_inputs; k <= e->index; k++)
                ni[k] = (pa_type){PA_TYPE__COUNT, 0, 0};
            c->inputs = ni;
            c->n_inputs = e->index + 1;
        }
        c->inputs[e->index] = e->type;
        i.op = KN_OP_LOAD;
        i.imm = e->index;
        break;
    case EX__CONST: return gen_reg(c, e, vreg);
    case EX__ARITH:
        i.op = e->sub == EX_ADD ? KN_OP_ADD : e->sub == EX_SUB ? KN_OP_SUB : e->sub == EX_MUL ? KN_OP_MUL
             : e->sub == EX_MOD ? KN_OP_MOD : KN_OP_DIV;
        i.imm = (int32_t)e->imm;
        if (i.op == KN_OP_MUL && e->args[1]->type.id == PA_TYPE_DECIMAL)
            i.sub = e->args[1]->type.scale;
        if ((rc = gen_operand(c, e->args[0], &i, 0)) != PA_OK || (rc = gen_operand(c, e->args[1], &i, 1)) != PA_OK)
            return rc;
        break;
    case EX__CMP:
        i.op = KN_OP_CMP;
        i.sub = (uint8_t)e->sub;   /* ex_cmp and kn_cmp list the same order */
        if ((rc = gen_operand(c, e->args[0], &i, 0)) != PA_OK || (rc = gen_operand(c, e->args[1], &i, 1)) != PA_OK)
            return rc;
        break;
    case EX__AND:
    case EX__OR: {
        int b;
        i.op = e->kind == EX__AND ? KN_OP_AND : KN_OP_OR;
        if ((rc = gen_reg(c, e->args[0], &a)) != PA_OK || (rc = gen_reg(c, e->args[1], &b)) != PA_OK)
            return rc;
        i.a = (int16_t)a, i.b = (int16_t)b;
        break;
    }
    case EX__NEG:
    case EX__NOT:
    case EX__IS_NULL:
    case EX__EXTRACT:
    case EX__DATE_TRUNC:
    case EX__ADD_MONTHS:
    case EX__CAST:
        if ((rc = gen_reg(c, e->args[0], &a)) != PA_OK)
            return rc;
        if (e->kind == EX__CAST && cast_is_noop(at, e->type))
            return *vreg = a, memo_add(c, e, a);
        i.op = e->kind == EX__NEG ? KN_OP_NEG : e->kind == EX__NOT ? KN_OP_NOT : e->kind == EX__IS_NULL ? KN_OP_IS_NULL
             : e->kind == EX__EXTRACT ? KN_OP_EXTRACT : e->kind == EX__DATE_TRUNC ? KN_OP_DATE_TRUNC
             : e->kind == EX__ADD_MONTHS ? KN_OP_ADD_MONTHS : KN_OP_CAST;
        i.a = (int16_t)a;
        i.sub = (uint8_t)e->sub;
        i.imm = (int32_t)e->imm;
        break;
    case EX__STRFN: {
        int b = -1, c2 = -1;
        if ((rc = gen_reg(c, e->args[0], &a)) != PA_OK ||
            (e->n_args > 1 && (rc = gen_reg(c, e->args[1], &b)) != PA_OK) ||
            (e->n_args > 2 && (rc = gen_reg(c, e->args[2], &c2)) != PA_OK))
            return rc;
        i.op = KN_OP_STRFN;
        i.sub = (uint8_t)e->sub;
        i.a = (int16_t)a, i.b = (int16_t)b, i.c = (int16_t)c2;
        break;
    }
    case EX__TEXT: {
        /* REPLACE's, LPAD's, RPAD's, REPEAT's, TRANSLATE's and
         * REGEXP_REPLACE's b and c are constants, as the kernels take them
         * (the bound of the result rests on them; b of REGEXP_REPLACE is the
         * compiled pattern). */
        int b = -1, c2 = -1;
        bool consts = e->sub == EX_REPLACE || e->sub == EX_LPAD || e->sub == EX_RPAD || e->sub == EX_REPEAT ||
                      e->sub == EX_TRANSLATE || e->sub == EX_REGEXP_REPLACE;
        if ((rc = gen_reg(c, e->args[0], &a)) != PA_OK)
            return rc;
        for (int k = 1; k < e->n_args; k++) {
            int *v = k == 1 ? &b : &c2;
            if (consts && e->args[k]->kind != EX__CONST)
                return pa_error(c->err, PA_EINVAL, "text function %d: argument %d is not a constant", e->sub, k);
            rc = consts ? add_const(c, e->args[k], v) : gen_reg(c, e->args[k], v);
            if (rc != PA_OK)
                return rc;
            if (consts)
                i.flags |= (uint8_t)(1 << k);
        }
        i.op = KN_OP_TEXT;
        i.sub = (uint8_t)e->sub;
        i.a = (int16_t)a, i.b = (int16_t)b, i.c = (int16_t)c2;
        break;
    }
    case EX__DTARITH: {
        int b = -1;
        if ((rc = gen_reg(c, e->args[0], &a)) != PA_OK || (e->n_args > 1 && (rc = gen_reg(c, e->args[1], &b)) != PA_OK))
            return rc;
        i.op = KN_OP_DTARITH;
        i.sub = (uint8_t)e->sub;
        i.a = (int16_t)a, i.b = (int16_t)b;
        break;
    }
    case EX__MAKE_DATE: {
        int b, c2;
        if ((rc = gen_reg(c, e->args[0], &a)) != PA_OK || (rc = gen_reg(c, e->args[1], &b)) != PA_OK ||
            (rc = gen_reg(c, e->args[2], &c2)) != PA_OK)
            return rc;
        i.op = KN_OP_MAKE_DATE;
        i.a = (int16_t)a, i.b = (int16_t)b, i.c = (int16_t)c2;
        break;
    }
    case EX__MATH: {
        int b = -1;
        if ((rc = gen_reg(c, e->args[0], &a)) != PA_OK || (e->n_args > 1 && (rc = gen_reg(c, e->args[1], &b)) != PA_OK))
            return rc;
        i.op = KN_OP_MATH;
        i.a = (int16_t)a, i.b = (int16_t)b;
        i.sub = (uint8_t)e->sub;
        i.imm = (int32_t)(uint32_t)(e->imm & 0xffffffff);
        i.imm2 = (int32_t)(uint32_t)((uint64_t)e->imm >> 32);
        break;
    }
    case EX__CASE:
        if ((rc = gen_case(c, e, vreg)) != PA_OK)
            return rc;
        return memo_add(c, e, *vreg);
    case EX__IN:
        i.op = KN_OP_IN;
        if ((rc = gen_in(c, e, &i)) != PA_OK)
            return rc;
        break;
    case EX__LIKE: {
        int k;
        i.op = KN_OP_LIKE;
        i.sub = (uint8_t)e->sub;
        if ((rc = gen_reg(c, e->args[0], &a)) != PA_OK || (rc = add_const(c, e, &k)) != PA_OK)
            return rc;
        i.a = (int16_t)a, i.b = (int16_t)k, i.flags = KN_F_B_CONST;
        break;
    }
    case EX__SUBSTR:
        i.op = KN_OP_SUBSTR;
        i.imm = e->n_args == 3;
        if ((rc = gen_reg(c, e->args[0], &a)) != PA_OK || (rc = gen_operand(c, e->args[1], &i, 1)) != PA_OK ||
            (e->n_args == 3 && (rc = gen_operand(c, e->args[2], &i, 2)) != PA_OK))
            return rc;
        i.a = (int16_t)a;
        break;
    }
    int text = i.op == KN_OP_CAST && e->type.id == PA_TYPE_VARCHAR && at.id != PA_TYPE_VARCHAR ? 1
             : i.op == KN_OP_TEXT                                                             ? 2
                                                                                              : 0;
    if ((rc = new_vreg(c, text, &r)) != PA_OK)
        return rc;
    i.dst = (int16_t)r;
    if ((rc = emit(c, i)) != PA_OK)
        return rc;
    *vreg = r;
    return memo_add(c, e, r);
}

/* ------------------------------------------------ registers and packing */

static void remap(kn_insn *i, const int *map)
{
    if (i->a >= 0 && !(i->flags & KN_F_A_CONST))
        i->a = (int16_t)map[i->a];
    if (i->b >= 0 && !(i->flags & KN_F_B_CONST))
        i->b = (int16_t)map[i->b];
    if (i->c >= 0 && !(i->flags & KN_F_C_CONST))
        i->c = (int16_t)map[i->c];
}

/* Linear scan; fills map (vreg -> register) and the text flag per register. */
static int alloc_regs(comp *c, const int *outs, int n_out, int *map, uint8_t *reg_text, int *n_regs)
{
    int nv = c->n_vregs, np = 0, nfree = 0;
    int *last = pa_malloc((size_t)(nv ? nv : 1) * sizeof *last);
    uint8_t *pin = pa_calloc((size_t)(nv ? nv : 1), 1);
    int *freel = pa_malloc((size_t)(nv ? nv : 1) * sizeof *freel);
    if (!last || !pin || !freel) {
        pa_free(last), pa_free(pin), pa_free(freel);
        return pa_error(c->err, PA_ENOMEM, "out of memory compiling an expression");
    }
    for (int v = 0; v < nv; v++)
        last[v] = -1, map[v] = -1, pin[v] = c->text[v];
    for (int i = 0; i < c->n_pro; i++)
        pin[c->pro[i].dst] = 1;
    for (int j = 0; j < n_out; j++)
        pin[outs[j]] = 1;
    for (int i = 0; i < c->n_ins; i++) {
        const kn_insn *in = &c->ins[i];
        if (in->a >= 0 && !(in->flags & KN_F_A_CONST))
            last[in->a] = i;
        if (in->b >= 0 && !(in->flags & KN_F_B_CONST))
            last[in->b] = i;
        if (in->c >= 0 && !(in->flags & KN_F_C_CONST))
            last[in->c] = i;
    }
    for (int i = 0; i < c->n_pro; i++) {
        map[c->pro[i].dst] = np++;
        c->pro[i].dst = (int16_t)map[c->pro[i].dst];
    }
    for (int i = 0; i < c->n_ins; i++) {
        kn_insn *in = &c->ins[i];
        int d = in->dst;
        if (map[d] < 0)
            map[d] = nfree && !c->text[d] ? freel[--nfree] : np++;
        int ops[3] = {-1, -1, -1};
        if (in->a >= 0 && !(in->flags & KN_F_A_CONST))
            ops[0] = in->a;
        if (in->b >= 0 && !(in->flags & KN_F_B_CONST))
            ops[1] = in->b;
        if (in->c >= 0 && !(in->flags & KN_F_C_CONST))
            ops[2] = in->c;
        remap(in, map);
        in->dst = (int16_t)map[d];
        for (int k = 0; k < 3; k++) {
            int v = ops[k];
            if (v < 0 || pin[v] || last[v] != i || (k > 0 && v == ops[0]) || (k > 1 && v == ops[1]))
                continue;
            freel[nfree++] = map[v];
        }
        if (last[d] < 0 && !pin[d])   /* never read */
            freel[nfree++] = map[d];
    }
    for (int r = 0; r < np && r < KN_EVAL_MAX_REGS; r++)
        reg_text[r] = 0;
    for (int v = 0; v < nv; v++)
        if (c->text[v] == 1 && map[v] >= 0 && map[v] < KN_EVAL_MAX_REGS)
            reg_text[map[v]] = 1;
    pa_free(last), pa_free(pin), pa_free(freel);
    *n_regs = np;
    if (np > KN_EVAL_MAX_REGS)
        return pa_error(c->err, PA_EUNSUPPORTED, "expression needs %d registers (at most %d)", np, KN_EVAL_MAX_REGS);
    return PA_OK;
}

static size_t al16(size_t n) { return (n + 15) & ~(size_t)15; }

static int pack(comp *c, ex_expr *const *exprs, const int *outs, int n_out, const int *map, const uint8_t *reg_text,
                int n_regs, kn_program **out)
{
    size_t at = al16(sizeof(kn_program));
    size_t insns_at = at;
    at = al16(at + (size_t)(c->n_pro + c->n_ins) * sizeof(kn_insn));
    size_t consts_at = at;
    at = al16(at + (size_t)c->n_consts * sizeof(kn_value));
    size_t regs_at = at;
    at = al16(at + (size_t)n_regs * sizeof(uint32_t));
    size_t inputs_at = at;
    at = al16(at + (size_t)c->n_inputs * sizeof(pa_type));
    size_t outputs_at = at;
    at = al16(at + (size_t)n_out * sizeof(kn_output));
    size_t pool_at = at;
    at = al16(at + c->n_pool);
    int n_text = 0;
    for (int k = 0; k < c->n_ins; k++)
        n_text += c->ins[k].op == KN_OP_TEXT;
    size_t text_at = at;
    at = al16(at + (size_t)n_text * sizeof(kn_text_reg));
    if (at > UINT32_MAX || c->n_pro + c->n_ins > UINT16_MAX)
        return pa_error(c->err, PA_EUNSUPPORTED, "expression program too large");
    char *blob = pa_calloc(1, at);
    if (!blob)
        return pa_error(c->err, PA_ENOMEM, "out of memory compiling an expression");
    kn_program *p = (kn_program *)blob;
    p->bytes = (uint32_t)at;
    p->n_insns = (uint16_t)(c->n_pro + c->n_ins);
    p->n_prologue = (uint16_t)c->n_pro;
    p->n_consts = (uint16_t)c->n_consts;
    p->n_regs = (uint16_t)n_regs;
    p->n_inputs = (uint16_t)c->n_inputs;
    p->n_outputs = (uint16_t)n_out;
    p->insns_at = (uint32_t)insns_at;
    p->consts_at = (uint32_t)consts_at;
    p->reg_bytes_at = (uint32_t)regs_at;
    p->inputs_at = (uint32_t)inputs_at;
    p->outputs_at = (uint32_t)outputs_at;
    p->pool_at = (uint32_t)pool_at;
    p->pool_bytes = (uint32_t)c->n_pool;
    p->n_text = (uint16_t)n_text;
    p->text_at = (uint32_t)text_at;
    if (c->n_pro)
        memcpy(blob + insns_at, c->pro, (size_t)c->n_pro * sizeof(kn_insn));
    if (c->n_ins)
        memcpy(blob + insns_at + (size_t)c->n_pro * sizeof(kn_insn), c->ins, (size_t)c->n_ins * sizeof(kn_insn));
    if (c->n_consts)
        memcpy(blob + consts_at, c->consts, (size_t)c->n_consts * sizeof(kn_value));
    uint32_t *rb = (uint32_t *)(blob + regs_at);
    for (int r = 0; r < n_regs; r++)
        rb[r] = reg_text[r] ? KN_EVAL_STR_ROW_BYTES : 0;
    if (c->n_inputs)
        memcpy(blob + inputs_at, c->inputs, (size_t)c->n_inputs * sizeof(pa_type));
    kn_output *o = (kn_output *)(blob + outputs_at);
    for (int j = 0; j < n_out; j++) {
        o[j].reg = (int16_t)map[outs[j]];
        o[j].type = exprs[j]->type;
    }
    if (c->n_pool)
        memcpy(blob + pool_at, c->pool, c->n_pool);
    int rc = kn_program_fill_text(p, c->err);
    if (rc != PA_OK) {
        pa_free(blob);
        return rc;
    }
    *out = p;
    return PA_OK;
}

int ex__compile(ex_expr *const *exprs, int n, const pa_type *input_types, int n_inputs, kn_program **out,
                pa_err *err)
{
    comp c;
    memset(&c, 0, sizeof c);
    c.err = err;
    c.check_types = input_types;
    c.check_n = n_inputs;
    int rc = PA_OK, n_regs = 0;
    int *outs = pa_malloc((size_t)(n > 0 ? n : 1) * sizeof *outs);
    int *map = NULL;
    uint8_t reg_text[KN_EVAL_MAX_REGS];
    if (!outs) {
        rc = pa_error(err, PA_ENOMEM, "out of memory compiling an expression");
        goto done;
    }
    if (n < 1) {
        rc = pa_error(err, PA_EINVAL, "compiling no expressions");
        goto done;
    }
    for (int j = 0; j < n; j++) {
        if (!exprs[j]) {
            rc = pa_error(err, PA_EINVAL, "expression %d is NULL", j);
            goto done;
        }
        if ((rc = gen_reg(&c, exprs[j], &outs[j])) != PA_OK)
            goto done;
        if (c.n_vregs > 30000) {
            rc = pa_error(err, PA_EUNSUPPORTED, "expression too large");
            goto done;
        }
    }
    if (!(map = pa_malloc((size_t)(c.n_vregs ? c.n_vregs : 1) * sizeof *map))) {
        rc = pa_error(err, PA_ENOMEM, "out of memory compiling an expression");
        goto done;
    }
    if ((rc = alloc_regs(&c, outs, n, map, reg_text, &n_regs)) != PA_OK)
        goto done;
    rc = pack(&c, exprs, outs, n, map, reg_text, n_regs, out);
done:
    pa_free(outs), pa_free(map);
    pa_free(c.ins), pa_free(c.pro), pa_free(c.consts), pa_free(c.pool), pa_free(c.inputs), pa_free(c.text);
    pa_free(c.memo);
    return rc;
}

int ex__compile_plan(ex_plan *p, ex_expr *const *exprs, int n, const ex_op *input, kn_program **out, pa_err *err)
{
    kn_program *tmp = NULL;
    int rc = ex__compile(exprs, n, input->types, input->n_cols, &tmp, err);
    if (rc != PA_OK)
        return rc;
    if ((rc = kn_program_check(tmp, err)) == PA_OK) {
        void *copy = ex_plan_alloc(p, tmp->bytes);
        if (!copy)
            rc = pa_error(err, PA_ENOMEM, "out of memory keeping an expression program");
        else
            *out = memcpy(copy, tmp, tmp->bytes);
    }
    pa_free(tmp);
    return rc;
}
