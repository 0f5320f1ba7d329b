/*
 * kn_expr.c - the expression program evaluator: program checks, scratch
 * sizing, static NULL and text-size analysis, the batch loop of kn_eval and
 * the fused filter kn_filter. The per-opcode loops live in kn_expr_*.c; see
 * kn_expr_int.h for the design.
 */
#include "kernels/kn_expr_int.h"

#include <stdio.h>

const char *kn_opcode_name(int op)
{
    switch (op) {
#define X(name) case KN_OP_##name: return #name;
    KN_OPCODE_LIST(X)
#undef X
    default: return "UNKNOWN";
    }
}

const int64_t kn__pow10_64[19] = {
    1LL, 10LL, 100LL, 1000LL, 10000LL, 100000LL, 1000000LL, 10000000LL, 100000000LL,
    1000000000LL, 10000000000LL, 100000000000LL, 1000000000000LL, 10000000000000LL,
    100000000000000LL, 1000000000000000LL, 10000000000000000LL, 100000000000000000LL,
    1000000000000000000LL,
};

/* 10^k for k = 0..38 as constant expressions (a C initialiser cannot read
 * another array). */
const __int128 kn__pow10_128[39] = {
    (__int128)1LL, (__int128)10LL, (__int128)100LL,
    (__int128)1000LL, (__int128)10000LL, (__int128)100000LL,
    (__int128)1000000LL, (__int128)10000000LL, (__int128)100000000LL,
    (__int128)1000000000LL, (__int128)10000000000LL, (__int128)100000000000LL,
    (__int128)1000000000000LL, (__int128)10000000000000LL, (__int128)100000000000000LL,
    (__int128)1000000000000000LL, (__int128)10000000000000000LL, (__int128)100000000000000000LL,
    (__int128)1000000000000000000LL, (__int128)1000000000000000000LL * 10LL, (__int128)1000000000000000000LL * 100LL,
    (__int128)1000000000000000000LL * 1000LL, (__int128)1000000000000000000LL * 10000LL, (__int128)1000000000000000000LL * 100000LL,
    (__int128)1000000000000000000LL * 1000000LL, (__int128)1000000000000000000LL * 10000000LL, (__int128)1000000000000000000LL * 100000000LL,
    (__int128)1000000000000000000LL * 1000000000LL, (__int128)1000000000000000000LL * 10000000000LL, (__int128)1000000000000000000LL * 100000000000LL,
    (__int128)1000000000000000000LL * 1000000000000LL, (__int128)1000000000000000000LL * 10000000000000LL, (__int128)1000000000000000000LL * 100000000000000LL,
    (__int128)1000000000000000000LL * 1000000000000000LL, (__int128)1000000000000000000LL * 10000000000000000LL, (__int128)1000000000000000000LL * 100000000000000000LL,
    (__int128)1000000000000000000LL * 1000000000000000000LL, (__int128)1000000000000000000LL * 1000000000000000000LL * 10LL, (__int128)1000000000000000000LL * 1000000000000000000LL * 100LL,
};

const double kn__pow10_f64[39] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13,
    1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26,
    1e27, 1e28, 1e29, 1e30, 1e31, 1e32, 1e33, 1e34, 1e35, 1e36, 1e37, 1e38,
};

/* ------------------------------------------------------------ checking */

static bool valid_type(pa_type t)
{
    if ((unsigned)t.id >= PA_TYPE__COUNT)
        return false;
    return t.id != PA_TYPE_DECIMAL || (t.precision >= 1 && t.precision <= 38 && t.scale <= t.precision);
}

static int check_text(const kn_program *p, pa_err *err);

/* Whether constant k is a regular-expression program the matcher can run. */
static bool regex_const(const kn_program *p, int k)
{
    const kn_value *v = &kn_program_consts(p)[k];
    return pa_type_is_varlen(v->type.id) && !v->is_null && (uint64_t)v->str_off + v->str_len <= p->pool_bytes &&
           kn__re_check((const uint8_t *)kn_program_pool(p) + v->str_off, v->str_len);
}

int kn_program_check(const kn_program *p, pa_err *err)
{
    if (!p || p->bytes < sizeof *p)
        return pa_error(err, PA_EINVAL, "expression program: missing or truncated header");
    const uint64_t end = p->bytes;
    struct { uint32_t at; uint64_t size; const char *what; } parts[] = {
        {p->insns_at, (uint64_t)p->n_insns * sizeof(kn_insn), "instructions"},
        {p->consts_at, (uint64_t)p->n_consts * sizeof(kn_value), "constants"},
        {p->reg_bytes_at, (uint64_t)p->n_regs * sizeof(uint32_t), "registers"},
        {p->inputs_at, (uint64_t)p->n_inputs * sizeof(pa_type), "inputs"},
        {p->outputs_at, (uint64_t)p->n_outputs * sizeof(kn_output), "outputs"},
        {p->pool_at, p->pool_bytes, "byte pool"},
        {p->text_at, (uint64_t)p->n_text * sizeof(kn_text_reg), "text slots"},
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i].size && (parts[i].at < sizeof *p || parts[i].at + parts[i].size > end))
            return pa_error(err, PA_EINVAL, "expression program: %s outside the block", parts[i].what);
    if (p->n_regs > KN_EVAL_MAX_REGS || p->n_prologue > p->n_insns || p->n_outputs == 0)
        return pa_error(err, PA_EINVAL, "expression program: bad counts (%u registers, %u outputs)",
                        p->n_regs, p->n_outputs);
    const kn_insn *ins = kn_program_insns(p);
    const kn_value *cs = kn_program_consts(p);
    for (int i = 0; i < p->n_insns; i++) {
        const kn_insn *in = &ins[i];
        if (in->op >= KN_OP__COUNT || !valid_type(in->type))
            return pa_error(err, PA_EINVAL, "expression program: instruction %d: bad opcode or type", i);
        if (in->dst < 0 || in->dst >= p->n_regs)
            return pa_error(err, PA_EINVAL, "expression program: instruction %d: bad register", i);
        const int16_t ops[3] = {in->a, in->b, in->c};
        for (int k = 0; k < 3; k++) {
            /* CONST's operand a is a constant index (its opcode says so), flag or not. */
            bool is_const = ((in->flags >> k) & 1) || (in->op == KN_OP_CONST && k == 0);
            if (ops[k] < 0)
                continue;
            if (is_const ? ops[k] >= p->n_consts : ops[k] >= p->n_regs)
                return pa_error(err, PA_EINVAL, "expression program: instruction %d: operand %d out of range",
                                i, k);
        }
        if (in->op == KN_OP_LOAD && (in->imm < 0 || in->imm >= p->n_inputs))
            return pa_error(err, PA_EINVAL, "expression program: instruction %d: bad input %d", i, in->imm);
        if (in->op == KN_OP_IN && (in->imm < 0 || in->imm2 < 0 || in->imm + in->imm2 > p->n_consts))
            return pa_error(err, PA_EINVAL, "expression program: instruction %d: bad IN list", i);
        if (in->op == KN_OP_LIKE &&
            (in->sub > 3 || in->a < 0 || in->b < 0 || !(in->flags & KN_F_B_CONST) ||
             !pa_type_is_varlen(cs[in->b].type.id) || ((in->sub & 2) && !regex_const(p, in->b))))
            return pa_error(err, PA_EINVAL, "expression program: instruction %d: bad LIKE operands", i);
        int rc = kn__time_insn_check(in, err);
        if (rc != PA_OK)
            return rc;
        if (i < p->n_prologue && in->op != KN_OP_CONST)
            return pa_error(err, PA_EINVAL, "expression program: prologue holds a %s", kn_opcode_name(in->op));
    }
    for (int i = 0; i < p->n_consts; i++)
        if ((uint64_t)cs[i].str_off + cs[i].str_len > p->pool_bytes)
            return pa_error(err, PA_EINVAL, "expression program: constant %d outside the pool", i);
    for (int i = 0; i < p->n_outputs; i++) {
        const kn_output *o = &kn_program_outputs(p)[i];
        if (o->reg < 0 || o->reg >= p->n_regs)
            return pa_error(err, PA_EINVAL, "expression program: output %d: bad register", i);
    }
    return check_text(p, err);
}

/* ------------------------------------------------ text slots (kernels.h) */

/* A register's bound as a linear form of the inputs' offsets. */
typedef struct lin {
    __int128 per_row;
    __int128 k[KN_TEXT_TERMS];
    int16_t col[KN_TEXT_TERMS];
    int n;
} lin;

/* d += m * x; false when more than KN_TEXT_TERMS columns are involved. */
static bool lin_add(lin *d, const lin *x, int64_t m)
{
    d->per_row += (__int128)m * x->per_row;
    for (int t = 0; t < x->n; t++) {
        int j = 0;
        while (j < d->n && d->col[j] != x->col[t])
            j++;
        if (j == d->n) {
            if (d->n == KN_TEXT_TERMS)
                return false;
            d->col[d->n] = x->col[t];
            d->k[d->n++] = 0;
        }
        d->k[j] += (__int128)m * x->k[t];
    }
    return true;
}

/* The kn_text_reg of each TEXT instruction, in order, into out (NULL: only
 * check that they can be made). */
static int text_regs(const kn_program *p, kn_text_reg *out, pa_err *err)
{
    lin *f = pa_calloc(p->n_regs ? p->n_regs : 1, sizeof *f);
    if (!f)
        return pa_error(err, PA_ENOMEM, "out of memory compiling an expression");
    const kn_insn *ins = kn_program_insns(p);
    const kn_value *cs = kn_program_consts(p);
    int rc = PA_OK, j = 0;
    for (int i = 0; i < p->n_insns && rc == PA_OK; i++) {
        const kn_insn *in = &ins[i];
        lin v;
        memset(&v, 0, sizeof v);
        if (pa_type_is_varlen(in->type.id) && in->op == KN_OP_LOAD) {
            v.n = 1, v.col[0] = (int16_t)in->imm, v.k[0] = 1;
        } else if (pa_type_is_varlen(in->type.id)) {
            int64_t k[3], per_row;
            kn__text_rule(p, in, k, &per_row);
            v.per_row = per_row;
            const int16_t op[3] = {in->a, in->b, in->c};
            for (int t = 0; t < 3; t++) {
                if (!k[t] || op[t] < 0)
                    continue;
                lin c;
                memset(&c, 0, sizeof c);
                if ((in->flags >> t) & 1)
                    c.per_row = cs[op[t]].str_len;
                if (!lin_add(&v, ((in->flags >> t) & 1) ? &c : &f[op[t]], k[t])) {
                    rc = pa_error(err, PA_EUNSUPPORTED,
                                  "a string function's result depends on more than %d text columns",
                                  KN_TEXT_TERMS);
                    break;
                }
            }
        }
        f[in->dst] = v;
        if (rc != PA_OK || in->op != KN_OP_TEXT)
            continue;
        /* pos(i) stays far inside int64 for any chunk (offsets are int32). */
        bool ok = v.per_row <= INT32_MAX;
        for (int t = 0; t < v.n; t++)
            ok = ok && v.k[t] <= (1 << 24);
        if (!ok) {
            rc = pa_error(err, PA_EUNSUPPORTED, "%s: the result could exceed %d bytes per row",
                          in->sub == KN_TEXT_REPEAT ? "repeat" : in->sub == KN_TEXT_LPAD ? "lpad"
                          : in->sub == KN_TEXT_RPAD ? "rpad" : "string function", INT32_MAX);
            break;
        }
        if (out) {
            kn_text_reg *t = &out[j];
            memset(t, 0, sizeof *t);
            t->per_row = (int64_t)v.per_row;
            t->n = (uint8_t)v.n;
            t->reg = in->dst;
            for (int x = 0; x < v.n; x++)
                t->k[x] = (int64_t)v.k[x], t->col[x] = v.col[x];
        }
        j++;
    }
    pa_free(f);
    return rc;
}

int kn_program_fill_text(kn_program *p, pa_err *err)
{
    return text_regs(p, (kn_text_reg *)((char *)p + p->text_at), err);
}

/* The text entries are those the instructions give, and the TEXT
 * registers are never written twice (their slots hold the whole call). */
static int check_text(const kn_program *p, pa_err *err)
{
    const kn_insn *ins = kn_program_insns(p);
    int n = 0;
    for (int i = 0; i < p->n_insns; i++) {
        const kn_insn *in = &ins[i];
        if (in->op != KN_OP_TEXT)
            continue;
        n++;
        bool b_const = in->sub == KN_TEXT_REPLACE || in->sub == KN_TEXT_LPAD || in->sub == KN_TEXT_RPAD ||
                       in->sub == KN_TEXT_REPEAT || in->sub == KN_TEXT_TRANSLATE || in->sub == KN_TEXT_REGEXP_REPLACE;
        bool c_const = b_const && in->sub != KN_TEXT_REPEAT;
        pa_type_id out = in->sub == KN_TEXT_BYTEA_IN ? PA_TYPE_BYTEA
                         : in->sub == KN_TEXT_UUID_IN ? PA_TYPE_UUID
                                                      : PA_TYPE_VARCHAR;
        if (in->sub == KN_TEXT_CONCAT && in->type.id == PA_TYPE_BYTEA)   /* BYTEA || BYTEA */
            out = PA_TYPE_BYTEA;
        if (in->sub > KN_TEXT_UUID_OUT || in->type.id != out || in->a < 0 ||
            (b_const && (in->b < 0 || !(in->flags & KN_F_B_CONST))) ||
            (c_const && (in->c < 0 || !(in->flags & KN_F_C_CONST))) ||
            (in->sub == KN_TEXT_REGEXP_REPLACE && !regex_const(p, in->b)))
            return pa_error(err, PA_EINVAL, "expression program: instruction %d: bad TEXT operands", i);
    }
    if (n != p->n_text)
        return pa_error(err, PA_EINVAL, "expression program: %u text entries for %d TEXT instructions", p->n_text, n);
    if (n == 0)
        return PA_OK;
    for (int i = 0; i < p->n_insns; i++)
        for (int j = 0; j < n; j++)
            if (ins[i].dst == kn_program_text(p)[j].reg && ins[i].op != KN_OP_TEXT)
                return pa_error(err, PA_EINVAL, "expression program: text register %d written by %s",
                                ins[i].dst, kn_opcode_name(ins[i].op));
    kn_text_reg *want = pa_calloc((size_t)n, sizeof *want);
    if (!want)
        return pa_error(err, PA_ENOMEM, "out of memory checking an expression program");
    int rc = text_regs(p, want, err);
    if (rc == PA_OK && memcmp(want, kn_program_text(p), (size_t)n * sizeof *want) != 0)
        rc = pa_error(err, PA_EINVAL, "expression program: text slots do not match its instructions");
    for (int j = 0; rc == PA_OK && j < n; j++)
        for (int t = 0; t < want[j].n; t++)
            if (want[j].col[t] < 0 || want[j].col[t] >= p->n_inputs)
                rc = pa_error(err, PA_EINVAL, "expression program: text slot of input %d", want[j].col[t]);
    pa_free(want);
    return rc;
}

/* ------------------------------------------------------------- sizing */

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

static size_t slot_size(const kn_program *p, int r)
{
    return KN__SLOT_DATA + align64(KN__WORDS * 8) + align64((size_t)KN__B * kn_program_reg_bytes(p)[r]);
}

size_t kn_eval_scratch_size(const kn_program *p)
{
    size_t n = 64;   /* alignment slack */
    for (int r = 0; r < p->n_regs; r++)
        n += slot_size(p, r);
    return n;
}

/* Static NULL analysis: which registers may hold NULL for these inputs. */
static void may_null_pass(const kn_program *p, const pa_column *inputs, int n_inputs, bool *nul)
{
    const kn_insn *ins = kn_program_insns(p);
    const kn_value *cs = kn_program_consts(p);
    memset(nul, 0, (size_t)p->n_regs);
    for (int i = 0; i < p->n_insns; i++) {
        const kn_insn *in = &ins[i];
        bool na = false, nb = false, nc = false;
        if (in->a >= 0 && in->op != KN_OP_CONST)   /* CONST's a indexes the constants, flag or not */
            na = (in->flags & KN_F_A_CONST) ? cs[in->a].is_null : nul[in->a];
        if (in->b >= 0)
            nb = (in->flags & KN_F_B_CONST) ? cs[in->b].is_null : nul[in->b];
        if (in->c >= 0)
            nc = (in->flags & KN_F_C_CONST) ? cs[in->c].is_null : nul[in->c];
        bool r;
        switch (in->op) {
        case KN_OP_LOAD: r = in->imm < n_inputs && inputs[in->imm].validity != NULL; break;
        case KN_OP_CONST: r = cs[in->a].is_null; break;
        case KN_OP_IS_NULL: r = false; break;
        case KN_OP_SELECT: r = nb || nc; break;
        case KN_OP_IN: r = na || in->sub; break;
        default: r = na || nb || nc; break;
        }
        nul[in->dst] = r;
    }
}

bool kn_eval_may_null(const kn_program *p, int out, const pa_column *inputs, int n_inputs)
{
    bool nul[KN_EVAL_MAX_REGS];
    if (out < 0 || out >= p->n_outputs)
        return true;
    may_null_pass(p, inputs, n_inputs, nul);
    const kn_output *o = &kn_program_outputs(p)[out];
    return o->may_null || nul[o->reg];
}

int64_t kn_eval_str_bound(const kn_program *p, int out, const pa_column *inputs, int n_inputs, int64_t rows)
{
    return kn__str_bound(p, out, inputs, n_inputs, rows);
}

bool kn_eval_text_area_known(const kn_program *p, const pa_column *inputs, int n_inputs, int64_t rows,
                             int64_t *bytes)
{
    int64_t sum = 0;
    for (int j = 0; j < p->n_text; j++) {
        const kn_text_reg *t = &kn_program_text(p)[j];
        int64_t v = t->per_row * rows;
        for (int k = 0; k < t->n; k++) {
            int64_t b;
            if (t->col[k] >= n_inputs || !pa_column_bytes(&inputs[t->col[k]], &b))
                return false;
            v += t->k[k] * b;
        }
        sum += (v + 7) & ~(int64_t)7;
    }
    *bytes = sum;
    return true;
}

int kn__cpu_eval_str_bytes(const kn_ctx *ctx, const kn_program *p, int out, const pa_column *inputs, int n_inputs,
                           int64_t rows, int64_t *bytes, pa_err *err)
{
    *bytes = kn_eval_str_bound(p, out, inputs, n_inputs, rows);
    return PA_OK;
}

/* ------------------------------------------------------ validity helpers */

void kn__valid_none(kn__eval *e, kn__reg *dst)
{
    memset(dst->valid, 0, KN__WORDS * 8);
    dst->nulls = true;
}

void kn__valid_and3(kn__eval *e, kn__reg *dst, const kn__reg *a, const kn__reg *b, const kn__reg *c)
{
    const kn__reg *src[3] = {a, b, c};
    int k = 0;
    const uint64_t *w[3];
    for (int i = 0; i < 3; i++)
        if (src[i] && src[i]->nulls)
            w[k++] = src[i]->valid;
    dst->nulls = k > 0;
    if (k == 0)
        return;
    int nw = (e->n + 63) / 64;
    for (int i = 0; i < nw; i++) {
        uint64_t v = w[0][i];
        for (int j = 1; j < k; j++)
            v &= w[j][i];
        dst->valid[i] = v;
    }
}

void kn__valid_and2(kn__eval *e, kn__reg *dst, const kn__reg *a, const kn__reg *b)
{
    kn__valid_and3(e, dst, a, b, NULL);
}

void kn__broadcast(kn__eval *e, kn__reg *r, const kn_value *v)
{
    r->data = r->slot;
    if (v->is_null) {
        memset(r->slot, 0, KN__SLOT_DATA);
        memset(r->valid, 0, KN__WORDS * 8);
        r->nulls = true;
        return;
    }
    r->nulls = false;
    switch (kn__kind_of(v->type)) {
    case KN__BOOL: memset(r->slot, (int)(v->v.i != 0), KN__B); break;
    case KN__I32: { int32_t *d = r->slot; for (int i = 0; i < KN__B; i++) d[i] = (int32_t)v->v.i; } break;
    case KN__I64: { int64_t *d = r->slot; for (int i = 0; i < KN__B; i++) d[i] = v->v.i; } break;
    case KN__F64: { double *d = r->slot; for (int i = 0; i < KN__B; i++) d[i] = v->v.f; } break;
    case KN__I128: { __int128 *d = r->slot; for (int i = 0; i < KN__B; i++) d[i] = v->v.w; } break;
    case KN__STR: {
        kn__str *d = r->slot, s = kn__const_str(e, v);
        for (int i = 0; i < KN__B; i++) d[i] = s;
    } break;
    }
}

/* ------------------------------------------------------------- the loop */

int kn__eval_check(const kn_program *p, const pa_column *inputs, int n_inputs, const pa_column *outs, pa_err *err)
{
    const pa_type *want = kn_program_inputs(p);
    for (int i = 0; i < p->n_inputs; i++) {
        if (want[i].id == PA_TYPE__COUNT)
            continue;
        char a[32], b[32];
        if (i >= n_inputs)
            return pa_error(err, PA_EINVAL, "expression reads column %d of a %d-column input", i, n_inputs);
        const pa_type t = inputs[i].type;
        if (t.id != want[i].id || (t.id == PA_TYPE_DECIMAL && (t.precision != want[i].precision ||
                                                               t.scale != want[i].scale)))
            return pa_error(err, PA_EINVAL, "expression expects column %d as %s, got %s", i,
                            pa_type_format(want[i], a, sizeof a), pa_type_format(t, b, sizeof b));
        if (pa_type_is_varlen(t.id) && !inputs[i].offsets)
            return pa_error(err, PA_EINVAL, "VARCHAR column %d has no offsets", i);
    }
    const kn_output *o = kn_program_outputs(p);
    for (int j = 0; outs && j < p->n_outputs; j++)
        if (outs[j].type.id != o[j].type.id)
            return pa_error(err, PA_EINVAL, "expression output %d: column of type %s, program gives %s", j,
                            pa_type_name(outs[j].type.id), pa_type_name(o[j].type.id));
    return PA_OK;
}

int kn__filter_check(const kn_program *p, int64_t rows, pa_err *err)
{
    const kn_output *o = kn_program_outputs(p);
    if (p->n_outputs != 1 || o[0].type.id != PA_TYPE_BOOLEAN)
        return pa_error(err, PA_EINVAL, "filter program must have one BOOLEAN output");
    if (rows > INT32_MAX)
        return pa_error(err, PA_EINVAL, "filter over %lld rows: at most INT32_MAX", (long long)rows);
    return PA_OK;
}

static void op_load(kn__eval *e, const kn_insn *in)
{
    const pa_column *c = &e->inputs[in->imm];
    kn__reg *r = &e->regs[in->dst];
    if (pa_type_is_varlen(c->type.id)) {
        kn__str *d = r->slot;
        const int32_t *off = c->offsets + e->base;
        const char *bytes = c->data;
        for (int i = 0; i < e->n; i++) {
            d[i].p = bytes + off[i];
            d[i].len = off[i + 1] - off[i];
        }
        r->data = d;
    } else {
        r->data = (char *)c->data + e->base * pa_type_bytes(c->type);
    }
    r->nulls = false;
    if (c->validity) {
        size_t nb = ((size_t)e->n + 7) / 8;
        memcpy(r->valid, c->validity + e->base / 8, nb);
        /* Clear the bits past n, then see whether any row is NULL. */
        if (e->n & 7)
            ((uint8_t *)r->valid)[nb - 1] &= (uint8_t)((1u << (e->n & 7)) - 1);
        int full = e->n / 64;
        for (int i = 0; i < full; i++)
            if (r->valid[i] != ~(uint64_t)0) {
                r->nulls = true;
                break;
            }
        if (!r->nulls && (e->n & 63)) {
            uint64_t last = 0;
            memcpy(&last, (uint8_t *)r->valid + full * 8, nb - (size_t)full * 8);
            r->nulls = last != (((uint64_t)1 << (e->n & 63)) - 1);
        }
    }
}

static int run_insn(kn__eval *e, const kn_insn *in)
{
    switch ((kn_opcode)in->op) {
    case KN_OP_LOAD: op_load(e, in); return PA_OK;
    case KN_OP_CONST: kn__broadcast(e, &e->regs[in->dst], &e->consts[in->a]); return PA_OK;
    case KN_OP_ADD:
    case KN_OP_SUB:
    case KN_OP_MUL: return kn__op_arith(e, in);
    case KN_OP_DIV: return kn__op_div(e, in);
    case KN_OP_MOD: return kn__op_mod(e, in);
    case KN_OP_NEG: return kn__op_neg(e, in);
    case KN_OP_MATH: return kn__op_math(e, in);
    case KN_OP_DATE_TRUNC: return kn__op_date_trunc(e, in);
    case KN_OP_MAKE_DATE: return kn__op_make_date(e, in);
    case KN_OP_STRFN: return kn__op_strfn(e, in);
    case KN_OP_TEXT: return kn__op_text(e, in);
    case KN_OP_DTARITH: return kn__op_dtarith(e, in);
    case KN_OP_CMP: return kn__op_cmp(e, in);
    case KN_OP_AND:
    case KN_OP_OR: return kn__op_andor(e, in);
    case KN_OP_NOT: return kn__op_not(e, in);
    case KN_OP_IS_NULL: return kn__op_is_null(e, in);
    case KN_OP_SELECT: return kn__op_select(e, in);
    case KN_OP_IN: return kn__op_in(e, in);
    case KN_OP_LIKE: return kn__op_like(e, in);
    case KN_OP_SUBSTR: return kn__op_substr(e, in);
    case KN_OP_EXTRACT: return kn__op_extract(e, in);
    case KN_OP_ADD_MONTHS: return kn__op_add_months(e, in);
    case KN_OP_CAST: return kn__op_cast(e, in);
    case KN_OP__COUNT: break;
    }
    return pa_error(e->err, PA_EINVAL, "expression program: bad opcode %d", in->op);
}

/* Set up registers over scratch and run the prologue. */
static int eval_begin(kn__eval *e, const kn_program *p, const pa_column *inputs, int n_inputs, int64_t rows,
                      const pa_column *outs, void *scratch, void *text, int64_t text_bytes, pa_err *err)
{
    int rc = kn__eval_check(p, inputs, n_inputs, outs, err);
    if (rc != PA_OK)
        return rc;
    if (!scratch && p->n_regs > 0)
        return pa_error(err, PA_EINVAL, "expression evaluation without scratch");
    e->p = p;
    e->consts = kn_program_consts(p);
    e->pool = kn_program_pool(p);
    e->inputs = inputs;
    e->n_inputs = n_inputs;
    e->err = err;
    e->base = 0;
    e->n = KN__B;
    char *s = (char *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    for (int r = 0; r < p->n_regs; r++) {
        kn__reg *g = &e->regs[r];
        g->slot = g->data = s;
        g->valid = (uint64_t *)(s + KN__SLOT_DATA);
        g->text = kn_program_reg_bytes(p)[r] ? s + KN__SLOT_DATA + align64(KN__WORDS * 8) : NULL;
        g->nulls = false;
        g->area = NULL;
        g->slots = NULL;
        s += slot_size(p, r);
    }
    /* Without an area (none needed) the slots point at a stand-in, never
     * at offsets from a null pointer. */
    static char none[8];
    char *area = text ? (char *)text : none;
    int64_t at = 0;
    for (int j = 0; j < p->n_text; j++) {
        const kn_text_reg *t = &kn_program_text(p)[j];
        e->regs[t->reg].area = area + at;
        e->regs[t->reg].slots = t;
        at += kn__text_area_of(t, inputs, rows);
    }
    if (at > text_bytes || (at > 0 && !text))
        return pa_error(err, PA_EINVAL, "expression evaluation: a text area of %lld bytes for %lld needed",
                        (long long)text_bytes, (long long)at);
    const kn_insn *ins = kn_program_insns(p);
    for (int i = 0; i < p->n_prologue; i++)
        if ((rc = run_insn(e, &ins[i])) != PA_OK)
            return rc;
    return PA_OK;
}

/* A REAL result rounded to float precision; a finite value past the
 * float range is an error (PostgreSQL's "value out of range: overflow"). */
static int real_round(kn__eval *e, kn__reg *r)
{
    if (!r->data)
        return PA_OK;
    double *v = r->data;
    for (int i = 0; i < e->n; i++) {
        float f = (float)v[i];
        if (isinf(f) && !isinf(v[i]) && kn__valid(r, i))
            return pa_error(e->err, PA_EOVERFLOW, "value out of range for type real: overflow");
        v[i] = (double)f;
    }
    return PA_OK;
}

static int eval_batch(kn__eval *e, int64_t base, int n)
{
    const kn_insn *ins = kn_program_insns(e->p);
    e->base = base;
    e->n = n;
    for (int i = e->p->n_prologue; i < e->p->n_insns; i++) {
        int rc = run_insn(e, &ins[i]);
        /* (A register that views other values, a column's or a
         * register's, holds REALs already rounded.) */
        if (rc == PA_OK && ins[i].type.id == PA_TYPE_REAL && e->regs[ins[i].dst].data == e->regs[ins[i].dst].slot)
            rc = real_round(e, &e->regs[ins[i].dst]);
        if (rc != PA_OK)
            return rc;
    }
    return PA_OK;
}

static int write_output(kn__eval *e, const kn__reg *r, pa_column *out, int64_t base, int n)
{
    if (r->nulls) {
        if (out->validity) {
            memcpy(out->validity + base / 8, r->valid, ((size_t)n + 7) / 8);
        } else {
            for (int i = 0; i < n; i++)
                if (!kn__bit(r->valid, i))
                    return pa_error(e->err, PA_EINVAL, "expression output has a NULL but no validity buffer");
        }
    } else if (out->validity) {
        memset(out->validity + base / 8, 0xff, ((size_t)n + 7) / 8);
    }
    kn__kind k = kn__kind_of(out->type);
    if (k != KN__STR) {
        memcpy((char *)out->data + base * kn__kind_width(k), r->data, (size_t)n * kn__kind_width(k));
        return PA_OK;
    }
    const kn__str *s = r->data;
    int32_t *off = out->offsets + base;
    char *bytes = out->data;
    int64_t at = off[0];
    for (int i = 0; i < n; i++) {
        int64_t len = kn__valid(r, i) ? s[i].len : 0;
        if (at + len > INT32_MAX)
            return pa_error(e->err, PA_EUNSUPPORTED, "expression result exceeds %d bytes of text", INT32_MAX);
        if (len)
            memcpy(bytes + at, s[i].p, (size_t)len);
        at += len;
        off[i + 1] = (int32_t)at;
    }
    return PA_OK;
}

int kn__cpu_eval(const kn_ctx *ctx, const kn_program *p, const pa_column *inputs, int n_inputs, int64_t rows,
                 pa_column *outs, void *scratch, void *text, int64_t text_bytes, pa_err *err)
{
    kn__eval e;
    int rc = eval_begin(&e, p, inputs, n_inputs, rows, outs, scratch, text, text_bytes, err);
    if (rc != PA_OK)
        return rc;
    const kn_output *o = kn_program_outputs(p);
    for (int64_t base = 0; base < rows; base += KN__B) {
        int n = rows - base < KN__B ? (int)(rows - base) : KN__B;
        if ((rc = eval_batch(&e, base, n)) != PA_OK)
            return rc;
        for (int j = 0; j < p->n_outputs; j++)
            if ((rc = write_output(&e, &e.regs[o[j].reg], &outs[j], base, n)) != PA_OK)
                return rc;
    }
    return PA_OK;
}

int kn__cpu_filter(const kn_ctx *ctx, const kn_program *p, const pa_column *inputs, int n_inputs, int64_t rows,
                   int32_t *sel, int64_t *count, void *scratch, void *text, int64_t text_bytes, pa_err *err)
{
    const kn_output *o = kn_program_outputs(p);
    int rc = kn__filter_check(p, rows, err);
    if (rc != PA_OK)
        return rc;
    kn__eval e;
    if ((rc = eval_begin(&e, p, inputs, n_inputs, rows, NULL, scratch, text, text_bytes, err)) != PA_OK)
        return rc;
    int64_t k = 0;
    const kn__reg *r = &e.regs[o[0].reg];
    for (int64_t base = 0; base < rows; base += KN__B) {
        int n = rows - base < KN__B ? (int)(rows - base) : KN__B;
        if ((rc = eval_batch(&e, base, n)) != PA_OK)
            return rc;
        const uint8_t *v = r->data;
        if (!r->nulls) {
            for (int i = 0; i < n; i++) {
                sel[k] = (int32_t)(base + i);
                k += v[i] != 0;
            }
        } else {
            for (int i = 0; i < n; i++) {
                sel[k] = (int32_t)(base + i);
                k += (v[i] != 0) & kn__bit(r->valid, i);
            }
        }
    }
    *count = k;
    return PA_OK;
}
