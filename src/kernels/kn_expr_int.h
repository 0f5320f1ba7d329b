/*
 * kn_expr_int.h - internals of the expression program evaluator
 * (kn_expr*.c) and the selection kernels (kn_select.c).
 *
 * Design notes
 * - kn_eval walks the rows in batches of KN_EVAL_BATCH. For each batch it
 *   runs the instructions in order; each instruction is one typed loop over
 *   the batch (the switch on opcode and kind happens once per batch, never
 *   per row). The prologue (CONST broadcasts) runs once before the first
 *   batch: its registers are never reused by the compiler.
 * - A register (kn__reg) points at its batch values: its own scratch slot,
 *   or, for LOAD of a fixed-width column, straight into the input column
 *   (no copy). Validity is KN_EVAL_BATCH/64 words, meaningful only when
 *   `nulls` is set; `nulls` clear means every row of the batch is valid, so
 *   the common NULL-free case never touches bitmaps.
 * - Values in NULL rows are unspecified but harmless: error checks (overflow,
 *   bad casts) run per batch as a cheap OR of flags; only when a flag is up
 *   the batch is re-scanned to find the first VALID row at fault, which is
 *   the one reported. A NULL row never raises an error.
 * - Strings in registers are views (kn__str). Views may point into input
 *   columns, the program's pool, the text area of a CAST-to-VARCHAR
 *   register or a TEXT register's part of the call's text area (a slot per
 *   row of the whole call, kernels.h's kn_text_reg); the compiler never
 *   reuses a register that owns text.
 * - The per-value logic (LIKE, SUBSTRING, dates, parsing and formatting
 *   text, checked arithmetic) is kn_scalar.h's, which CUDA kernels share;
 *   kn_expr_*.c hold the batch loops around it.
 * - Scratch layout: n_regs slots, each KN__SLOT_DATA bytes of values, the
 *   validity words, then the register's text area (KN_EVAL_BATCH times its
 *   reg_bytes), every part 64-byte aligned.
 */
#ifndef PISTA_KN_EXPR_INT_H
#define PISTA_KN_EXPR_INT_H

#include "kernels/kn_ops_int.h"
#include "kernels/kn_scalar.h"

#include <string.h>

#define KN__B KN_EVAL_BATCH
#define KN__WORDS (KN_EVAL_BATCH / 64)
#define KN__SLOT_DATA (KN_EVAL_BATCH * 16)

typedef struct kn__reg {
    void *data;          /* values of the current batch */
    void *slot;          /* the register's own scratch values */
    uint64_t *valid;     /* KN__WORDS words, bit i = row i valid */
    char *text;          /* text area (CAST to VARCHAR) or NULL */
    char *area;          /* a TEXT instruction's part of the call's text area, */
    const kn_text_reg *slots;   /* and where each row's slot is in it; or NULL */
    bool nulls;          /* some row may be NULL: valid is meaningful */
} kn__reg;

typedef struct kn__eval {
    const kn_program *p;
    const kn_value *consts;
    const char *pool;
    const pa_column *inputs;
    int n_inputs;
    int64_t base;        /* first row of the batch */
    int n;               /* rows in the batch */
    pa_err *err;
    kn__reg regs[KN_EVAL_MAX_REGS];
} kn__eval;

/* Physical kinds of register values. */
static inline int kn__kind_width(kn__kind k)
{
    static const int w[] = {1, 4, 8, 16, 8, 16};
    return w[k];
}

/* Bit helpers over validity words. */
static inline bool kn__bit(const uint64_t *w, int i) { return (w[i >> 6] >> (i & 63)) & 1; }
static inline void kn__set_bit(uint64_t *w, int i, bool v)
{
    uint64_t m = (uint64_t)1 << (i & 63);
    w[i >> 6] = v ? (w[i >> 6] | m) : (w[i >> 6] & ~m);
}
/* Row i of register r valid? */
static inline bool kn__valid(const kn__reg *r, int i) { return !r->nulls || kn__bit(r->valid, i); }

/* dst validity = AND of the operands' (a register or NULL for a constant). */
void kn__valid_and2(kn__eval *e, kn__reg *dst, const kn__reg *a, const kn__reg *b);
void kn__valid_and3(kn__eval *e, kn__reg *dst, const kn__reg *a, const kn__reg *b, const kn__reg *c);
/* Mark every row of dst NULL. */
void kn__valid_none(kn__eval *e, kn__reg *dst);

/* Operand helpers: register x of insn, or NULL when it is a constant. */
static inline kn__reg *kn__opreg(kn__eval *e, int16_t idx, bool is_const)
{
    return is_const ? NULL : &e->regs[idx];
}

/* 10^k for k in 0..38. */
extern const __int128 kn__pow10_128[39];
extern const int64_t kn__pow10_64[19];
extern const double kn__pow10_f64[39];

/* Format a value of type t at raw memory v as text (for error messages and
 * CAST to VARCHAR). Returns the length written (buf NUL-terminated). */
int kn__format(pa_type t, const void *v, char *buf, size_t cap);

/* Per-opcode handlers (kn_expr_arith.c, kn_expr_logic.c, kn_expr_str.c,
 * kn_expr_date.c, kn_expr_cast.c). Each runs one instruction over the
 * current batch. */
int kn__op_arith(kn__eval *e, const kn_insn *in);
int kn__op_neg(kn__eval *e, const kn_insn *in);
int kn__op_math(kn__eval *e, const kn_insn *in);   /* kn_expr_math.c */
int kn__op_date_trunc(kn__eval *e, const kn_insn *in);   /* kn_expr_date.c */
int kn__op_make_date(kn__eval *e, const kn_insn *in);
int kn__op_strfn(kn__eval *e, const kn_insn *in);   /* kn_expr_str.c */
int kn__op_text(kn__eval *e, const kn_insn *in);    /* kn_expr_text.c */
int kn__op_mod(kn__eval *e, const kn_insn *in);
int kn__op_div(kn__eval *e, const kn_insn *in);
int kn__op_cmp(kn__eval *e, const kn_insn *in);
int kn__op_andor(kn__eval *e, const kn_insn *in);
int kn__op_not(kn__eval *e, const kn_insn *in);
int kn__op_is_null(kn__eval *e, const kn_insn *in);
int kn__op_select(kn__eval *e, const kn_insn *in);
int kn__op_in(kn__eval *e, const kn_insn *in);
int kn__op_like(kn__eval *e, const kn_insn *in);
int kn__op_substr(kn__eval *e, const kn_insn *in);
int kn__op_extract(kn__eval *e, const kn_insn *in);
int kn__op_add_months(kn__eval *e, const kn_insn *in);
int kn__op_cast(kn__eval *e, const kn_insn *in);
/* The time types (kn_expr_time.c): EXTRACT and DATE_TRUNC of a non-DATE,
 * CASTs where a time type takes part, DTARITH. kn__time_insn_check says
 * whether an instruction's shape (field, operand and result types) is
 * defined, PA_EINVAL naming it if not; PA_OK for other instructions. */
int kn__time_insn_check(const kn_insn *in, pa_err *err);
int kn__op_extract_time(kn__eval *e, const kn_insn *in);
int kn__op_date_trunc_time(kn__eval *e, const kn_insn *in);
int kn__cast_time(kn__eval *e, const kn_insn *in);
int kn__op_dtarith(kn__eval *e, const kn_insn *in);
int kn__format_time(pa_type t, const void *v, char *buf, int cap);

/* String helpers shared with the comparison code. */
static inline int kn__str_cmp(kn__str a, kn__str b)
{
    int64_t m = a.len < b.len ? a.len : b.len;
    int c = m ? memcmp(a.p, b.p, (size_t)m) : 0;
    if (c)
        return c;
    return a.len < b.len ? -1 : a.len > b.len;
}
/* LIKE with % and _ (characters are UTF-8 code points). */
bool kn__like(const char *s, int64_t n, const char *pat, int64_t m);
/* Whether prog[0, len) is a regular-expression program kn_regex.h can run
 * without reading outside it (kn_regex.c): the checks of a program that
 * came from elsewhere. */
bool kn__re_check(const uint8_t *prog, int64_t len);

/* Loops of a binary instruction `in` over e->n rows (n must be a local). Exactly one form
 * of loop runs: register-register, register-constant or constant-register. */
#define KN__BIN(TA, GET, BODY)                                                   \
    do {                                                                         \
        if (!(in->flags & (KN_F_A_CONST | KN_F_B_CONST))) {                      \
            const TA *A = e->regs[in->a].data, *B = e->regs[in->b].data;         \
            for (int i = 0; i < n; i++) {                                        \
                TA x = A[i], y = B[i];                                           \
                BODY                                                             \
            }                                                                    \
        } else if (in->flags & KN_F_B_CONST) {                                   \
            const TA *A = e->regs[in->a].data;                                   \
            const TA y = (TA)e->consts[in->b].v.GET;                             \
            for (int i = 0; i < n; i++) {                                        \
                TA x = A[i];                                                     \
                BODY                                                             \
            }                                                                    \
        } else {                                                                 \
            const TA x = (TA)e->consts[in->a].v.GET;                             \
            const TA *B = e->regs[in->b].data;                                   \
            for (int i = 0; i < n; i++) {                                        \
                TA y = B[i];                                                     \
                BODY                                                             \
            }                                                                    \
        }                                                                        \
    } while (0)

/* Broadcast a constant into register r for KN__B rows. */
void kn__broadcast(kn__eval *e, kn__reg *r, const kn_value *v);
/* The view of a VARCHAR constant. */
static inline kn__str kn__const_str(const kn__eval *e, const kn_value *v)
{
    kn__str s = {e->pool + v->str_off, v->str_len};
    return s;
}

#endif /* PISTA_KN_EXPR_INT_H */
